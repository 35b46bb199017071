// explain.cpp - `sbx explain`: whether a command of the root may read and write
// PATH, or reach HOST[:PORT], and the rule that says so, as `sbx run` would
// decide (compose.hpp).
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "sbx/core/json_write.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/net/address.hpp"
#include "sbx/net/host_pattern.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/net/unix_socket.hpp"
#include "sbx/plan/report.hpp"
#include "sbx/review/decision_json.hpp"
#include "sbx/rules/fs_rules.hpp"

#include "answers.hpp"
#include "cli_common.hpp"
#include "commands.hpp"
#include "compose.hpp"
#include "proxy/host_lookup.hpp"  // launchers/: this machine's addresses and name lookup, as the proxy's

namespace sbx::cli {

namespace {

using V = sbx::net::HostDecision::Verdict;

// explain's last line of text: "  root ROOT: WHY", as `sbx run` says it.
void print_root_line(const sbx::ProjectRoot& r) { std::cout << "  root " << r.root << ": " << sbx::root_why(r) << "\n"; }

// What the proxy of `sbx run` would do with a host: the decision, the addresses
// the name resolves to here and whether each may be dialed, and the final
// verdict with the address it dials.
struct HostAnswer {
    sbx::net::HostTarget target;
    sbx::net::HostDecision decision;
    bool resolves = false;  // a name the rules let through or ask about: resolved when the command connects
    std::vector<sbx::net::AddressVerdict> judged;
    std::optional<std::string> unresolved;  // why the name does not resolve here
    V final_verdict = V::deny;
    std::string final_why;
    std::optional<sbx::net::Address> dials;
};

// As the proxy: this machine's addresses, the decision, and for a name the
// rules let through (or ask about) the addresses it resolves to here, judged
// by the engine. Nothing is resolved for a refused name.
HostAnswer answer_host(const sbx::net::HostRules& rules, const sbx::net::HostCall& call, sbx::net::HostTarget target) {
    HostAnswer out{std::move(target), {}, false, {}, std::nullopt, V::deny, {}, std::nullopt};
    out.target.local_addresses = sbx::launcher::local_addresses_of(out.target);
    const auto& t = out.target;
    const std::vector<sbx::net::Address> own = sbx::launcher::own_addresses();
    const auto& d = out.decision = sbx::net::decide_host(rules, call, t, own);
    out.resolves = !t.address.has_value() && d.verdict != V::deny && !d.dial;
    std::vector<sbx::net::Address> resolved;
    if (out.resolves) {
        auto r = sbx::launcher::resolve_host(t.host);
        if (r) resolved = std::move(*r);
        else out.unresolved = r.error().message;
        for (const auto& addr : resolved) out.judged.push_back(sbx::net::judge_address(d, rules, call, t, addr, own));
    }
    // The final verdict: the decision's, unless the addresses refuse it; when
    // the name does not resolve here, the decision's.
    out.final_verdict = d.verdict;
    out.final_why = d.why;
    if (d.verdict != V::deny && !out.unresolved) {
        auto chosen = sbx::net::choose_address(d, rules, call, t, resolved, own);
        if (chosen) {
            out.dials = *chosen;
        } else {
            out.final_verdict = V::deny;
            out.final_why = chosen.error().message;
        }
    }
    return out;
}

void print_host_json(const Composed& c, const HostAnswer& h) {
    sbx::json::Writer w;
    w.begin_object();
    write_root(w, c.where);
    w.key("host").value(h.target.host).key("port").value(static_cast<int>(h.target.port));
    sbx::review::write_host_decision_members(w, h.decision);
    w.key("resolvedLater").value(h.resolves);
    w.key("addresses").begin_array();
    for (const auto& j : h.judged)
        w.begin_object().key("address").value(sbx::net::to_string(j.address)).key("class").value(j.kind)
            .key("allowed").value(j.allowed).end_object();
    w.end_array();
    w.key("resolveError");
    if (h.unresolved) w.value(*h.unresolved);
    else w.null();
    w.key("dials");
    if (h.dials) w.value(sbx::net::to_string(*h.dials));
    else w.null();
    w.key("finalVerdict").value(sbx::net::verdict_name(h.final_verdict)).key("finalWhy").value(h.final_why).end_object();
    std::cout << w.take() << "\n";
}

void print_host_text(const Composed& c, const HostAnswer& h) {
    auto bracketed = [](const sbx::net::Address& x) {
        return x.is_v6() ? "[" + sbx::net::to_string(x) + "]" : sbx::net::to_string(x);
    };
    auto verdict_word = [](V v) { return v == V::allow ? "allowed" : v == V::ask ? "asked" : "refused"; };
    const auto& d = h.decision;
    std::cout << sbx::net::to_string(h.target) << "\n  network: " << verdict_word(d.verdict) << "  " << d.why;
    if (d.verdict == V::ask) std::cout << " (on the terminal; refused where there is none)";
    std::cout << "\n";
    if (h.resolves) {
        if (h.unresolved) std::cout << "  resolves: not here (" << *h.unresolved << "); the proxy resolves it again when the command connects\n";
        for (const auto& j : h.judged)
            std::cout << "  resolves to: " << bracketed(j.address) << "  " << j.kind << "  "
                      << (j.allowed ? "may be dialed" : "not dialed") << "\n";
    }
    std::cout << "  final: " << verdict_word(h.final_verdict);
    if (h.dials) std::cout << ", dials " << bracketed(*h.dials) << ":" << h.target.port;
    if (h.final_verdict != d.verdict || h.unresolved) std::cout << "  " << h.final_why;
    std::cout << "\n";
    print_root_line(c.where);
}

// `sbx explain --host`: what the proxy of `sbx run` would decide for HOST[:PORT]
// (port 443 when none is given), and the rule behind it.
int explain_host(const ExplainArgs& a, const Composed& c) {
    auto target = sbx::net::named_target(a.host);
    if (!target)
        return report(sbx::Error(sbx::Errc::invalid_argument,
                                 "--host takes a host name or address with an optional port (github.com, "
                                 "127.0.0.1:3000, [::1]:80): " + target.error().message));
    auto rules = host_rules(c, unknown_host(a.on_unknown_host));
    if (!rules) return report(rules.error());
    auto hosts = call_hosts(a.allow_hosts);
    if (!hosts) return report(hosts.error());
    sbx::net::HostCall call;
    call.hosts = std::move(*hosts);
    if (!a.answers.empty()) {
        auto held = read_answers(a.answers);
        if (!held) return report(held.error());
        call.answers = std::move(*held);
    }
    const HostAnswer answer = answer_host(*rules, call, std::move(*target));
    if (a.settings.json) print_host_json(c, answer);
    else print_host_text(c, answer);
    return kOk;
}

// " [LAYER FILE KEY]": where a setting came from, as explain says it.
std::string source_of(const std::optional<sbx::Source>& s) {
    if (!s) return {};
    return " [" + std::string(sbx::layer_name(s->layer)) + " " + s->file.str() + " " + s->key + "]";
}

// `sbx explain --socket PATH`: whether the command may connect to the Unix
// socket PATH (sbx::net::decide_unix_socket), with the entry and the file
// behind it; each entry's links, and PATH's, resolved on this machine as the
// launcher resolves them when the run begins (a socket under the command's own
// TMPDIR, made for each run, is its own and not asked about here).
int explain_socket(const ExplainArgs& a, const Composed& c) {
    namespace fs = std::filesystem;
    auto resolved = [](const std::string& p) {
        std::error_code ec;
        const fs::path r = fs::weakly_canonical(p, ec);
        return ec ? sbx::paths::normalize(p) : sbx::paths::normalize(r.string());
    };
    const std::string path = sbx::paths::is_absolute(a.socket) ? a.socket : sbx::paths::join(c.cwd, a.socket);
    const auto& listed = c.policy.network.allow_unix_sockets;
    sbx::net::UnixSocketRules rules;
    rules.all = c.policy.network.allow_all_unix_sockets.value;
    for (const auto& e : listed) {
        sbx::net::UnixSocketEntry entry{e.value, resolved(e.value), false};
        std::error_code ec;
        entry.folder = fs::is_directory(entry.path, ec);
        rules.entries.push_back(std::move(entry));
    }
    const std::string real = resolved(path);
    const auto d = sbx::net::decide_unix_socket(rules, real);
    const bool allowed = d.verdict != sbx::net::UnixSocketVerdict::refused;
    std::string why = d.why;
    if (d.verdict == sbx::net::UnixSocketVerdict::all)
        why = "allowed by network.allowAllUnixSockets" + source_of(c.policy.network.allow_all_unix_sockets.source);
    else if (d.verdict == sbx::net::UnixSocketVerdict::listed)
        why = "allowed by network.allowUnixSockets " + listed[d.entry].value + source_of(listed[d.entry].source);
    else if (d.quiet)
        why += " (asked by the C library on every lookup: refused without a line in the block)";
    const auto hint = sbx::allow_hints(c.agent ? sbx::SettingsWords::agent_file : sbx::SettingsWords::settings).sockets;
    if (!allowed && !d.quiet) why += sbx::allow_sentence(hint);
    if (a.settings.json) {
        sbx::json::Writer w;
        w.begin_object();
        write_root(w, c.where);
        w.key("socket").value(path).key("realPath").value(real).key("verdict").value(allowed ? "allow" : "deny");
        w.key("dials");
        if (allowed) w.value(d.dial);
        else w.null();
        w.key("reported").value(!allowed && !d.quiet).key("why").value(why).end_object();
        std::cout << w.take() << "\n";
        return kOk;
    }
    std::cout << path;
    if (real != path) std::cout << " (leads to " << real << ")";
    std::cout << "\n  connect: " << (allowed ? "allowed" : "refused") << "  " << why << "\n";
    if (allowed) std::cout << "  dials: " << d.dial << "\n";
    print_root_line(c.where);
    return kOk;
}

// One access's decision in words: the path on the first, and the symbolic
// link's own when PATH is one.
void print_path_decision(const sbx::FsExplanation& e, sbx::Access access) {
    const auto& d = e.decision;
    if (access == sbx::Access::read) {
        std::cout << e.path;
        if (e.real_path != e.path) std::cout << " (leads to " << e.real_path << ")";
        std::cout << "\n";
    }
    std::cout << "  " << sbx::access_name(access) << ": " << sbx::allowed_word(d.allowed) << "  " << sbx::why(d) << "\n";
    if (e.link)
        std::cout << "  link: " << sbx::allowed_word(e.link->allowed) << "  " << sbx::why(*e.link)
                  << (e.link->allowed ? "; the symbolic link itself can be removed, renamed or replaced"
                                      : "; the symbolic link itself cannot be removed, renamed or replaced")
                  << "\n";
}

// The same as members of the JSON object.
void write_path_decision(sbx::json::Writer& w, const sbx::FsExplanation& e, sbx::Access access) {
    if (access == sbx::Access::read) w.key("path").value(e.path).key("realPath").value(e.real_path);
    w.key(sbx::access_name(access)).begin_object();
    sbx::review::write_fs_decision_members(w, e.decision);
    w.end_object();
    if (e.link) {
        w.key("link").begin_object();
        sbx::review::write_fs_decision_members(w, *e.link);
        w.end_object();
    }
}

// `sbx explain PATH`: the rules `sbx run` would give the command, its tool
// cache home writable, decide reading and writing PATH.
int explain_path(const ExplainArgs& a, const Composed& c) {
    sbx::CachedFs cached(*c.view);
    auto run = fs_rules(c, run_inputs(c), cached);
    if (!run) return report(run.error());
    // A relative PATH is relative to --root, else to the current directory (which
    // the root found from it holds).
    const std::string path = a.settings.root_given() || sbx::paths::is_absolute(a.path) || a.path.empty()
                                 ? a.path
                                 : sbx::paths::join(c.cwd, a.path);
    sbx::json::Writer w;
    if (a.settings.json) {
        w.begin_object();
        write_root(w, c.where);
    }
    for (auto access : {sbx::Access::read, sbx::Access::write}) {
        auto e = sbx::explain(run->rules, path, access, cached);
        if (!e) return report(e.error());
        if (a.settings.json) write_path_decision(w, *e, access);
        else print_path_decision(*e, access);
    }
    if (a.settings.json) std::cout << w.end_object().str() << "\n";
    else print_root_line(c.where);
    return kOk;
}

}  // namespace

int run_explain(const ExplainArgs& a) {
    auto composed = compose(a.settings, HomeRoot::allowed);
    if (!composed) return report(composed.error());
    if (!a.host.empty()) return explain_host(a, *composed);
    if (!a.socket.empty()) return explain_socket(a, *composed);
    return explain_path(a, *composed);
}

}  // namespace sbx::cli
