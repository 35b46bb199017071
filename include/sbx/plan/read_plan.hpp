// sbx/plan/read_plan.hpp - a plan document read back strictly, as a launcher must.
//
// parse_plan() refuses what to_json() would never write: an unknown version or
// key, a missing one, a value of the wrong type, a path that is not absolute and
// normalised, and plans no launcher may carry out (a mount over /, a bind of a
// kernel interface, mounts out of order, a missing path the launcher does not
// make). Each error names the key path it is about (docs/plan.md).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/json.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/net/address.hpp"
#include "sbx/net/forwards.hpp"
#include "sbx/net/host_pattern.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/rules/env.hpp"
#include "sbx/rules/fs_rules.hpp"
#include "sbx/rules/protected_paths.hpp"

namespace sbx {

namespace detail {

// Reads a plan document strictly: every key known, every required key present,
// every value of its type, every path absolute and normalised. Errors are
// INVALID_PLAN naming the key path (`filesystem.mounts[3].expect.ino`).
class PlanReader {
public:
    using element = simdjson::dom::element;
    using element_type = simdjson::dom::element_type;

    expected<Plan> read(element root);

    // An answers file's document: {"answers": [...]} (parse_host_answers).
    static expected<std::vector<net::HostAnswer>> read_answers_file(element root);

private:
    // An object's members by key, each checked against `known` and `required`.
    struct Members {
        std::vector<std::pair<std::string_view, element>> list;
        bool has(std::string_view k) const {
            return std::any_of(list.begin(), list.end(), [&](const auto& m) { return m.first == k; });
        }
        element at(std::string_view k) const;
    };

    // `out` set to what a read gave, or the read's error: the shape of every
    // member read below.
    template <class T, class U>
    static expected<void> assign(T& out, expected<U> got) {
        SBX_TRY(got);
        out = std::move(*got);
        return {};
    }
    // The member `name` of `m`, when it is there, read by `reader` under the key
    // `parent.name` into `out`; absent, `out` keeps what it holds.
    template <class T, class Reader>
    static expected<void> read_optional(const Members& m, std::string_view parent, std::string_view name, T& out,
                                        Reader reader) {
        if (!m.has(name)) return {};
        return assign(out, reader(m.at(name), join(parent, name)));
    }

    static tl::unexpected<Error> error(std::string key, std::string message) {
        return fail(Error(Errc::invalid_plan, std::move(message)).at_key(std::move(key)));
    }
    static std::string join(std::string_view parent, std::string_view key) {
        return parent.empty() ? std::string(key) : std::string(parent) + "." + std::string(key);
    }
    static std::string index(std::string_view parent, std::size_t i) {
        return std::string(parent) + "[" + std::to_string(i) + "]";
    }
    static tl::unexpected<Error> type_error(const std::string& key, std::string_view want, element got) {
        return error(key, "expected " + std::string(want) + ", got " + std::string(json::type_name(got.type())));
    }

    static expected<Members> members(element v, std::string_view key, std::initializer_list<std::string_view> known,
                                     std::initializer_list<std::string_view> required);
    static expected<std::string> string(element v, const std::string& key);
    static expected<std::string> path(element v, const std::string& key);
    static expected<bool> boolean(element v, const std::string& key);
    static expected<std::uint64_t> integer(element v, const std::string& key);
    static expected<void> read_limits(element v, Plan& p);
    static expected<simdjson::dom::array> array(element v, const std::string& key) {
        if (v.type() != element_type::ARRAY) return type_error(key, "an array", v);
        return simdjson::dom::array(v);
    }

    static expected<net::UnknownHost> unknown_host(element v, const std::string& key);

    static expected<std::vector<net::HostRule>> host_rules(element v, const std::string& key, std::string_view list);

    static expected<void> read_network(element v, Plan& p);

    static expected<std::uint16_t> port_number(element v, const std::string& key);

    // network.forwards: each listens on a loopback address in canonical text
    // (127.0.0.1, ::1; no brackets), once per address and port, and leads to a
    // loopback address or `localhost`, which the proxy decides per connection.
    static expected<std::vector<net::Forward>> read_forwards(element v, const std::string& key);
    // network.answers, and the list of an answers file.
    static expected<std::vector<net::HostAnswer>> read_host_answers(element v, const std::string& key);

    static expected<void> read_env(element v, const std::string& key, std::vector<EnvVar>& out, bool loader);

    // An array of {"name", "why"} objects, `why` optional: the variables a plan
    // removed (command.envRemoved) or kept as they were (filesystem.toolCache.kept).
    template <class Named>
    static expected<std::vector<Named>> named_reasons(element v, const std::string& key) {
        auto list = array(v, key);
        SBX_TRY(list);
        std::vector<Named> out;
        std::size_t i = 0;
        for (auto e : *list) {
            const std::string k = index(key, i++);
            auto m = members(e, k, {"name", "why"}, {"name"});
            SBX_TRY(m);
            Named item;
            SBX_TRY(assign(item.name, string(m->at("name"), k + ".name")));
            SBX_TRY(read_optional(*m, k, "why", item.why, string));
            out.push_back(std::move(item));
        }
        return out;
    }

    static expected<void> read_command(element v, Plan& p);

    // command.passFds: ascending descriptors from kFirstPassFd to INT_MAX, no repeats.
    static expected<void> read_pass_fds(element v, Plan& p);

    static expected<Identity> identity(element v, const std::string& key);

    // unixSockets: every path, or these; either needs seccomp.allowUnixSockets.
    static expected<void> read_unix_sockets(element v, Plan& p);

    // ignoreViolations: substrings of the refusals not reported, none empty.
    static expected<void> read_ignore_violations(element v, Plan& p);

    // hints: what the block tells a person to add to allow a refusal, a line each.
    static expected<void> read_hints(element v, Plan& p);

    static expected<void> read_filesystem(element v, Plan& p);

    // filesystem.mounts, each as bubblewrap will make it: no mount over /, no
    // kernel interface of the host bound in, and what each kind expects there.
    static expected<void> read_mounts(element v, Plan& p);

    // filesystem.placeholders: what the launcher makes before the run and removes
    // after, each in an existing directory, outside the temporary directory.
    static expected<void> read_placeholders(element v, Plan& p);

    // filesystem.neutralise: what the launcher renames after the run, through a
    // writable bind of its directory.
    static expected<void> read_neutralise(element v, Plan& p);

    // filesystem.neutraliseNew: the directories where the launcher renames, after
    // the run, the new names matching a write deny's pattern.
    static expected<void> read_neutralise_new(element v, Plan& p);
    static expected<NeutraliseNewOp> read_neutralise_new_op(element e, const std::string& k, const Plan& p);

    // filesystem.gitExclude: the info/exclude file the launcher edits outside the
    // sandbox, and what it writes there.
    static expected<void> read_git_exclude(element v, Plan& p);

    // filesystem.gitAudit: the directories audited after the run.
    static expected<void> read_git_audit(element v, Plan& p);

    // filesystem.gitRecord: where the audit's findings are written after the run.
    static expected<void> read_git_record(element v, Plan& p);

    // filesystem.rules: the file rules the macOS profile is made from.
    static expected<void> read_rules(element v, Plan& p);

    // filesystem.toolCache: where the launcher makes a directory and leaves it,
    // so it must be a writable bind of the plan, outside the root and the
    // temporary directory; every variable it names points into it.
    static expected<void> read_tool_cache(element v, Plan& p);

    static expected<void> read_warnings(element v, Plan& p);
};

}  // namespace detail

// Reads a plan document (docs/plan.md) strictly. `origin` names where it came
// from in errors ("standard input", "fd 3"). Errors are INVALID_PLAN with the
// key path, or with the line and column of malformed JSON.
SBX_INLINE expected<Plan> parse_plan(std::string_view text, std::string origin);

// The answers a host program keeps for a session (sbx run --answers FILE):
// {"answers": [{"host": "pypi.org", "port": 443, "answer": "allow"}]}, read as
// strictly as a plan's network.answers, errors naming `origin` and the key
// (Errc::invalid_plan). answers_file_json (plan_json.hpp) writes them.
SBX_INLINE expected<std::vector<net::HostAnswer>> parse_host_answers(std::string_view text, std::string origin);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_PLAN)

namespace sbx::detail {

SBX_INLINE expected<Plan> PlanReader::read(element root) {
    Plan p;
    // The version first: a document of another version is refused as such, not
    // for the keys it has or lacks.
    if (root.type() == element_type::OBJECT) {
        element v;
        if (simdjson::dom::object(root).at_key("version").get(v) == simdjson::SUCCESS) {
            auto version = integer(v, "version");
            SBX_TRY(version);
            if (*version != static_cast<std::uint64_t>(kPlanVersion))
                return error("version", "unknown plan version " + std::to_string(*version) +
                                            "; this launcher reads " + std::to_string(kPlanVersion));
        }
    }
    auto top = members(root, "", {"version", "command", "root", "rootWhy", "tmpdir", "bwrapPath", "enabled", "failIfUnavailable",
                                  "weakerSandbox", "seccomp", "unixSockets", "network", "ignoreViolations", "scanStderr", "hints", "filesystem", "limits", "warnings"},
                       {"version", "command", "root", "tmpdir", "enabled", "failIfUnavailable", "seccomp",
                        "network", "filesystem"});
    SBX_TRY(top);
    SBX_TRY(read_command(top->at("command"), p));
    for (auto [key, out] : {std::pair{"root", &p.root}, std::pair{"tmpdir", &p.tmpdir}})
        SBX_TRY(assign(*out, path(top->at(key), key)));
    if (p.root == "/") return error("root", "the root may not be /: everything would be writable");
    if (paths::at_or_under(p.root, p.tmpdir) || paths::at_or_under(p.tmpdir, p.root))
        return error("tmpdir", "the temporary directory and the root may not hold each other");
    SBX_TRY(read_optional(*top, "", "rootWhy", p.root_why, string));
    SBX_TRY(read_optional(*top, "", "bwrapPath", p.bwrap_path, path));
    for (auto [key, out] : {std::pair{"enabled", &p.enabled}, std::pair{"failIfUnavailable", &p.fail_if_unavailable}})
        SBX_TRY(assign(*out, boolean(top->at(key), key)));
    SBX_TRY(read_optional(*top, "", "weakerSandbox", p.weaker_sandbox, boolean));
    auto sec = members(top->at("seccomp"), "seccomp", {"allowUnixSockets"}, {"allowUnixSockets"});
    SBX_TRY(sec);
    SBX_TRY(assign(p.allow_unix_sockets, boolean(sec->at("allowUnixSockets"), "seccomp.allowUnixSockets")));
    if (top->has("unixSockets")) SBX_TRY(read_unix_sockets(top->at("unixSockets"), p));
    // The filter drops its Unix socket rules for every socket alone; a listed
    // path is opened by the launcher's decision, one connection at a time.
    if (p.allow_unix_sockets != p.all_unix_sockets)
        return error("seccomp.allowUnixSockets", p.allow_unix_sockets
                                                     ? "true, though unixSockets.all is not (listed paths are opened "
                                                       "one by one, without it)"
                                                     : "false, though unixSockets.all is true");
    SBX_TRY(read_network(top->at("network"), p));
    if (top->has("ignoreViolations")) SBX_TRY(read_ignore_violations(top->at("ignoreViolations"), p));
    SBX_TRY(read_optional(*top, "", "scanStderr", p.scan_stderr, boolean));
    if (top->has("hints")) SBX_TRY(read_hints(top->at("hints"), p));
    SBX_TRY(read_filesystem(top->at("filesystem"), p));
    if (top->has("limits")) SBX_TRY(read_limits(top->at("limits"), p));
    if (top->has("warnings")) {
        SBX_TRY(read_warnings(top->at("warnings"), p));
    }
    return p;
}

SBX_INLINE PlanReader::element PlanReader::Members::at(std::string_view k) const {
    for (const auto& m : list)
        if (m.first == k) return m.second;
    return {};
}

SBX_INLINE expected<PlanReader::Members> PlanReader::members(element v, std::string_view key, std::initializer_list<std::string_view> known,
                                 std::initializer_list<std::string_view> required) {
    if (v.type() != element_type::OBJECT) return type_error(std::string(key), "an object", v);
    Members m;
    for (auto field : simdjson::dom::object(v)) {
        const std::string k = join(key, field.key);
        if (m.has(field.key)) return error(k, "the key appears twice");
        if (std::find(known.begin(), known.end(), field.key) == known.end()) return error(k, "unknown key");
        m.list.emplace_back(field.key, field.value);
    }
    for (auto r : required)
        if (!m.has(r)) return error(join(key, r), "missing");
    return m;
}

SBX_INLINE expected<std::string> PlanReader::string(element v, const std::string& key) {
    std::string_view s;
    if (v.get(s) != simdjson::SUCCESS) return type_error(key, "a string", v);
    if (s.find('\0') != std::string_view::npos) return error(key, "a NUL character is not allowed");
    return std::string(s);
}

SBX_INLINE expected<std::string> PlanReader::path(element v, const std::string& key) {
    auto s = string(v, key);
    SBX_TRY(s);
    if (!paths::is_absolute(*s) || paths::normalize(*s) != *s)
        return error(key, "'" + *s + "' is not an absolute, normalised path");
    return s;
}

SBX_INLINE expected<bool> PlanReader::boolean(element v, const std::string& key) {
    bool b = false;
    if (v.get(b) != simdjson::SUCCESS) return type_error(key, "true or false", v);
    return b;
}

SBX_INLINE expected<std::uint64_t> PlanReader::integer(element v, const std::string& key) {
    std::uint64_t n = 0;
    if (v.type() != element_type::UINT64 && v.type() != element_type::INT64) return type_error(key, "an integer", v);
    if (v.get(n) != simdjson::SUCCESS) return error(key, "expected an integer from 0 to 2^64-1");
    return n;
}

SBX_INLINE expected<net::UnknownHost> PlanReader::unknown_host(element v, const std::string& key) {
    auto s = string(v, key);
    SBX_TRY(s);
    if (auto u = net::parse_unknown_host(*s)) return *u;
    return error(key, "unknown value '" + *s + "'; expected deny, allow or ask");
}

SBX_INLINE expected<std::vector<net::HostRule>> PlanReader::host_rules(element v, const std::string& key, std::string_view list) {
    auto arr = array(v, key);
    SBX_TRY(arr);
    std::vector<net::HostRule> out;
    std::size_t i = 0;
    for (auto e : *arr) {
        const std::string k = index(key, i++);
        auto m = members(e, k, {"pattern", "source"}, {"pattern"});
        SBX_TRY(m);
        auto text = string(m->at("pattern"), k + ".pattern");
        SBX_TRY(text);
        auto pattern = net::parse_host_pattern(*text);
        if (!pattern) return error(k + ".pattern", pattern.error().message);
        net::HostRule r{std::move(*pattern), std::move(*text), std::string(list), std::nullopt};
        if (m->has("source") && m->at("source").type() != element_type::NULL_VALUE) {
            auto sm = members(m->at("source"), k + ".source", {"layer", "file", "key"}, {"layer", "file", "key"});
            SBX_TRY(sm);
            auto layer = string(sm->at("layer"), k + ".source.layer");
            SBX_TRY(layer);
            std::optional<LayerKind> kind;
            for (auto lk : {LayerKind::builtin, LayerKind::user, LayerKind::project, LayerKind::local, LayerKind::flag,
                            LayerKind::managed})
                if (layer_name(lk) == *layer) kind = lk;
            if (!kind) return error(k + ".source.layer", "unknown layer '" + *layer + "'");
            auto file = string(sm->at("file"), k + ".source.file");
            SBX_TRY(file);
            auto skey = string(sm->at("key"), k + ".source.key");
            SBX_TRY(skey);
            r.source = Source{*kind, FileName(std::move(*file)), std::move(*skey)};
        }
        out.push_back(std::move(r));
    }
    return out;
}

SBX_INLINE expected<void> PlanReader::read_network(element v, Plan& p) {
    auto first = members(v, "network",
                         {"mode", "allowed", "denied", "strict", "strictWhy", "local", "localWhy", "onUnknownHost",
                          "callHosts", "callOnUnknownHost", "answers", "forwards"},
                         {"mode"});
    SBX_TRY(first);
    auto mode = string(first->at("mode"), "network.mode");
    SBX_TRY(mode);
    if (*mode == "none") {
        if (first->list.size() != 1) return error("network", "mode none takes no other key");
        p.network = NetworkPlan{};
        p.network.mode = NetworkMode::none;
        return {};
    }
    if (*mode != "proxy") return error("network.mode", "unknown network mode '" + *mode + "'; expected none or proxy");
    auto m = members(v, "network",
                     {"mode", "allowed", "denied", "strict", "strictWhy", "local", "localWhy", "onUnknownHost",
                      "callHosts", "callOnUnknownHost", "answers", "forwards"},
                     {"mode", "allowed", "denied", "strict"});
    SBX_TRY(m);
    NetworkPlan n;
    n.mode = NetworkMode::proxy;
    if (auto r = assign(n.rules.allowed, host_rules(m->at("allowed"), "network.allowed", "network.allowedDomains")); !r)
        return r;
    if (auto r = assign(n.rules.denied, host_rules(m->at("denied"), "network.denied", "network.deniedDomains")); !r)
        return r;
    SBX_TRY(assign(n.rules.strict, boolean(m->at("strict"), "network.strict")));
    const auto call_hosts = [](element e, const std::string& key) { return host_rules(e, key, std::string(net::kCallHosts)); };
    SBX_TRY(read_optional(*m, "network", "strictWhy", n.strict_why, string));
    SBX_TRY(read_optional(*m, "network", "local", n.rules.local, boolean));
    SBX_TRY(read_optional(*m, "network", "localWhy", n.local_why, string));
    SBX_TRY(read_optional(*m, "network", "onUnknownHost", n.rules.on_unknown, unknown_host));
    SBX_TRY(read_optional(*m, "network", "callHosts", n.call.hosts, call_hosts));
    SBX_TRY(read_optional(*m, "network", "callOnUnknownHost", n.call.on_unknown, unknown_host));
    SBX_TRY(read_optional(*m, "network", "answers", n.call.answers, read_host_answers));
    SBX_TRY(read_optional(*m, "network", "forwards", n.forwards, read_forwards));
    p.network = std::move(n);
    return {};
}

SBX_INLINE expected<std::uint16_t> PlanReader::port_number(element v, const std::string& key) {
    auto n = integer(v, key);
    SBX_TRY(n);
    if (*n == 0 || *n > 65535) return error(key, "a port is from 1 to 65535");
    return static_cast<std::uint16_t>(*n);
}

SBX_INLINE expected<std::vector<net::HostAnswer>> PlanReader::read_host_answers(element v, const std::string& key) {
    auto list = array(v, key);
    SBX_TRY(list);
    std::vector<net::HostAnswer> out;
    std::size_t i = 0;
    for (auto e : *list) {
        const std::string k = index(key, i++);
        if (out.size() == net::kMaxHostAnswers)
            return error(k, "more than " + std::to_string(net::kMaxHostAnswers) + " answers");
        auto am = members(e, k, {"host", "port", "answer"}, {"host", "answer"});
        SBX_TRY(am);
        net::HostAnswer a;
        SBX_TRY(assign(a.host, string(am->at("host"), k + ".host")));
        if (auto why = net::answer_host_problem(a.host); !why.empty()) return error(k + ".host", why);
        SBX_TRY(read_optional(*am, k, "port", a.port, port_number));
        auto answer = string(am->at("answer"), k + ".answer");
        SBX_TRY(answer);
        if (*answer != "allow" && *answer != "deny")
            return error(k + ".answer", "'" + *answer + "' is not an answer; expected allow or deny");
        a.allow = *answer == "allow";
        for (const auto& other : out)
            if (other.host == a.host && other.port == a.port) return error(k, "a second answer for this host and port");
        out.push_back(std::move(a));
    }
    return out;
}

SBX_INLINE expected<std::vector<net::HostAnswer>> PlanReader::read_answers_file(element root) {
    auto m = members(root, "", {"answers"}, {"answers"});
    SBX_TRY(m);
    return read_host_answers(m->at("answers"), "answers");
}

SBX_INLINE expected<std::vector<net::Forward>> PlanReader::read_forwards(element v, const std::string& key) {
    auto list = array(v, key);
    SBX_TRY(list);
    std::vector<net::Forward> out;
    std::size_t i = 0;
    for (auto e : *list) {
        const std::string k = index(key, i++);
        auto fm = members(e, k, {"listen", "port", "target", "targetPort", "why"}, {"listen", "port", "target", "targetPort"});
        SBX_TRY(fm);
        net::Forward f;
        auto listen = string(fm->at("listen"), k + ".listen");
        SBX_TRY(listen);
        auto address = net::parse_ipv4_dotted(*listen);
        if (!address && listen->find(':') != std::string::npos) address = net::parse_ipv6(*listen);
        if (!address || net::to_string(*address) != *listen)
            return error(k + ".listen", "'" + *listen + "' is not an address in canonical text (127.0.0.1, ::1)");
        if (!net::forward_address(*address) || net::is_v4_mapped(*address))
            return error(k + ".listen", "'" + *listen + "' is not a loopback address: a forward listens on the sandbox's loopback");
        f.listen = *address;
        SBX_TRY(assign(f.port, port_number(fm->at("port"), k + ".port")));
        auto target = string(fm->at("target"), k + ".target");
        SBX_TRY(target);
        SBX_TRY(assign(f.target_port, port_number(fm->at("targetPort"), k + ".targetPort")));
        auto t = net::canonical_target(*target, f.target_port);
        const bool loopback = t && (t->address ? net::forward_address(*t->address) : t->host == "localhost");
        if (!t || t->host != *target || !loopback)
            return error(k + ".target", "'" + *target + "' is not a loopback address in canonical text nor localhost");
        f.target = std::move(*target);
        SBX_TRY(read_optional(*fm, k, "why", f.why, string));
        const bool twice = std::any_of(out.begin(), out.end(),
                                       [&](const net::Forward& o) { return o.listen == f.listen && o.port == f.port; });
        if (twice) return error(k, "a second forward listens on " + net::address_port_text(f.listen, f.port));
        out.push_back(std::move(f));
    }
    if (out.size() > net::kMaxForwards)
        return error(key, "more than " + std::to_string(net::kMaxForwards) + " forwards");
    return out;
}

SBX_INLINE expected<void> PlanReader::read_env(element v, const std::string& key, std::vector<EnvVar>& out, bool loader) {
    if (v.type() != element_type::OBJECT) return type_error(key, "an object", v);
    std::set<std::string_view> seen;
    for (auto field : simdjson::dom::object(v)) {
        const std::string k = key + "." + std::string(field.key);
        if (!valid_env_name(field.key)) return error(k, "not a variable name");
        if (!seen.insert(field.key).second) return error(k, "the key appears twice");
        if (is_loader_variable(field.key) != loader)
            return error(k, loader ? "only LD_* and GCONV_PATH belong in loaderEnv"
                                   : "a loader variable belongs in loaderEnv, which bubblewrap never sees");
        auto value = string(field.value, k);
        SBX_TRY(value);
        out.push_back({std::string(field.key), std::move(*value)});
    }
    return {};
}

SBX_INLINE expected<void> PlanReader::read_command(element v, Plan& p) {
    auto m = members(v, "command", {"argv", "cwd", "env", "loaderEnv", "envRemoved", "passFds"},
                     {"argv", "cwd", "env", "loaderEnv"});
    SBX_TRY(m);
    auto argv = array(m->at("argv"), "command.argv");
    SBX_TRY(argv);
    std::size_t i = 0;
    for (auto a : *argv) {
        auto s = string(a, index("command.argv", i++));
        SBX_TRY(s);
        p.argv.push_back(std::move(*s));
    }
    if (p.argv.empty()) return error("command.argv", "no command: the array is empty");
    if (p.argv.front().empty()) return error("command.argv[0]", "the command's name is empty");
    SBX_TRY(assign(p.cwd, path(m->at("cwd"), "command.cwd")));
    SBX_TRY(read_env(m->at("env"), "command.env", p.env, false));
    SBX_TRY(read_env(m->at("loaderEnv"), "command.loaderEnv", p.loader_env, true));
    SBX_TRY(read_optional(*m, "command", "envRemoved", p.env_removed, named_reasons<RemovedEnvVar>));
    if (m->has("passFds")) {
        SBX_TRY(read_pass_fds(m->at("passFds"), p));
    }
    return {};
}

SBX_INLINE expected<void> PlanReader::read_pass_fds(element v, Plan& p) {
    auto list = array(v, "command.passFds");
    SBX_TRY(list);
    std::size_t i = 0;
    for (auto e : *list) {
        const std::string k = index("command.passFds", i++);
        const auto too_large = [&] {
            return error(k, "not a descriptor: above " + std::to_string(std::numeric_limits<int>::max()));
        };
        if (e.type() == element_type::UINT64) return too_large();  // above 2^63-1
        std::int64_t fd = 0;
        if (e.type() != element_type::INT64 || e.get(fd) != simdjson::SUCCESS) return type_error(k, "an integer", e);
        if (fd < kFirstPassFd)
            return error(k, "descriptor " + std::to_string(fd) + ": 0, 1 and 2 always reach the command; list only 3 and above");
        if (fd > std::numeric_limits<int>::max()) return too_large();
        if (!p.pass_fds.empty() && fd <= p.pass_fds.back())
            return error(k, "descriptor " + std::to_string(fd) + " after " + std::to_string(p.pass_fds.back()) +
                                ": the list is ascending, without repeats");
        p.pass_fds.push_back(static_cast<int>(fd));
    }
    return {};
}

SBX_INLINE expected<Identity> PlanReader::identity(element v, const std::string& key) {
    auto first = members(v, key, {"exists", "type", "dev", "ino", "nlink"}, {"exists"});
    SBX_TRY(first);
    auto exists = boolean(first->at("exists"), key + ".exists");
    SBX_TRY(exists);
    Identity id;
    if (!*exists) {
        if (first->list.size() != 1) return error(key, "an identity that does not exist has no other keys");
        return id;
    }
    auto m = members(v, key, {"exists", "type", "dev", "ino", "nlink"}, {"exists", "type", "dev", "ino", "nlink"});
    SBX_TRY(m);
    id.exists = true;
    auto type = string(m->at("type"), key + ".type");
    SBX_TRY(type);
    if (*type == "directory") id.type = FileType::directory;
    else if (*type == "file") id.type = FileType::regular;
    else if (*type == "symlink") id.type = FileType::symlink;
    else if (*type == "other") id.type = FileType::other;
    else return error(key + ".type", "unknown type '" + *type + "'; expected directory, file, symlink or other");
    for (auto [name, out] : {std::pair{"dev", &id.dev}, std::pair{"ino", &id.ino}, std::pair{"nlink", &id.nlink}})
        SBX_TRY(assign(*out, integer(m->at(name), key + "." + name)));
    return id;
}

SBX_INLINE expected<void> PlanReader::read_unix_sockets(element v, Plan& p) {
    auto us = members(v, "unixSockets", {"all", "paths"}, {"all", "paths"});
    SBX_TRY(us);
    SBX_TRY(assign(p.all_unix_sockets, boolean(us->at("all"), "unixSockets.all")));
    auto list = array(us->at("paths"), "unixSockets.paths");
    SBX_TRY(list);
    std::size_t i = 0;
    for (auto e : *list) {
        auto u = path(e, index("unixSockets.paths", i++));
        SBX_TRY(u);
        p.unix_socket_paths.push_back(std::move(*u));
    }
    return {};
}

SBX_INLINE expected<void> PlanReader::read_ignore_violations(element v, Plan& p) {
    auto list = array(v, "ignoreViolations");
    SBX_TRY(list);
    std::size_t i = 0;
    for (auto e : *list) {
        auto text = string(e, index("ignoreViolations", i++));
        SBX_TRY(text);
        if (text->empty()) return error(index("ignoreViolations", i - 1), "an empty substring would ignore everything");
        p.ignore_violations.push_back(std::move(*text));
    }
    return {};
}

SBX_INLINE expected<void> PlanReader::read_limits(element v, Plan& p) {
    if (v.type() != element_type::OBJECT) return type_error("limits", "an object", v);
    for (auto field : simdjson::dom::object(v)) {
        const std::string k = join("limits", field.key);
        const auto which = limit_named(field.key);
        if (!which) return error(k, "unknown key");
        auto& slot = p.limits[static_cast<std::size_t>(*which)];
        if (slot) return error(k, "the key appears twice");
        auto m = members(field.value, k, {"value", "setBy", "raise"}, {"value", "setBy", "raise"});
        SBX_TRY(m);
        PlanLimit l;
        auto n = integer(m->at("value"), join(k, "value"));
        SBX_TRY(n);
        if (*n < 1 || *n > limit_spec(*which).max)
            return error(join(k, "value"), "out of range: from 1 to " + std::to_string(limit_spec(*which).max));
        l.value = *n;
        SBX_TRY(assign(l.set_by, string(m->at("setBy"), join(k, "setBy"))));
        SBX_TRY(assign(l.raise, string(m->at("raise"), join(k, "raise"))));
        slot = std::move(l);
    }
    return {};
}

SBX_INLINE expected<void> PlanReader::read_hints(element v, Plan& p) {
    auto h = members(v, "hints", {"hosts", "local", "call", "write", "read", "env", "sockets"},
                     {"hosts", "local", "call", "write", "read"});
    SBX_TRY(h);
    for (auto [name, out] : {std::pair{"env", &p.hints.env}, std::pair{"sockets", &p.hints.sockets}}) {
        if (!h->has(name)) continue;
        auto text = string(h->at(name), std::string("hints.") + name);
        SBX_TRY(text);
        if (text->find_first_of("\n\r") != std::string::npos)
            return error(std::string("hints.") + name, "a line break is not allowed");
        *out = std::move(*text);
    }
    for (auto [name, out] : {std::pair{"hosts", &p.hints.hosts}, std::pair{"local", &p.hints.local},
                             std::pair{"call", &p.hints.call}, std::pair{"write", &p.hints.write},
                             std::pair{"read", &p.hints.read}}) {
        auto text = string(h->at(name), std::string("hints.") + name);
        SBX_TRY(text);
        // One line each: the launcher puts it in a line of the block.
        if (text->find_first_of("\n\r") != std::string::npos)
            return error(std::string("hints.") + name, "a line break is not allowed");
        *out = std::move(*text);
    }
    return {};
}

SBX_INLINE expected<void> PlanReader::read_filesystem(element v, Plan& p) {
    auto m = members(v, "filesystem",
                     {"isolated", "mounts", "placeholders", "neutralise", "neutraliseNew", "gitExclude", "gitAudit",
                      "gitRecord", "toolCache", "rules"},
                     {"isolated", "mounts", "placeholders"});
    SBX_TRY(m);
    SBX_TRY(assign(p.filesystem.isolated, boolean(m->at("isolated"), "filesystem.isolated")));
    SBX_TRY(read_mounts(m->at("mounts"), p));
    SBX_TRY(read_placeholders(m->at("placeholders"), p));
    // Each of these is checked against the mounts and placeholders above.
    if (m->has("neutralise")) SBX_TRY(read_neutralise(m->at("neutralise"), p));
    if (m->has("neutraliseNew")) SBX_TRY(read_neutralise_new(m->at("neutraliseNew"), p));
    if (m->has("gitExclude")) SBX_TRY(read_git_exclude(m->at("gitExclude"), p));
    if (m->has("gitAudit")) SBX_TRY(read_git_audit(m->at("gitAudit"), p));
    if (m->has("gitRecord")) SBX_TRY(read_git_record(m->at("gitRecord"), p));
    if (m->has("rules")) SBX_TRY(read_rules(m->at("rules"), p));
    if (m->has("toolCache") && m->at("toolCache").type() != element_type::NULL_VALUE) {
        SBX_TRY(read_tool_cache(m->at("toolCache"), p));
    }

    // Only the launcher's own creations may be missing when the plan is made:
    // anything else would have bubblewrap make a mount point on the host.
    std::set<std::string_view> placeholder_paths, read_only;
    for (std::size_t j = 0; j < p.filesystem.placeholders.size(); ++j)
        if (!placeholder_paths.insert(p.filesystem.placeholders[j].path).second)
            return error(index("filesystem.placeholders", j) + ".path", "a second placeholder at this path");
    // Shallow before deep: a mount after one inside it would undo it, since
    // bubblewrap binds from the host's tree (see "The order of the mounts").
    std::set<std::string_view> earlier;
    for (std::size_t j = 0; j < p.filesystem.mounts.size(); ++j) {
        const auto& mt = p.filesystem.mounts[j];
        const std::string under = mt.path + "/";
        if (auto it = earlier.lower_bound(under); it != earlier.end() && it->starts_with(under))
            return error(index("filesystem.mounts", j) + ".path",
                         "comes after a mount inside it (" + std::string(*it) + "), which it would undo");
        earlier.insert(mt.path);
        if (mt.kind == MountKind::ro_bind && mt.source == mt.path) read_only.insert(mt.path);
        if (mt.expect.exists) continue;
        const bool made = mt.path == p.tmpdir || placeholder_paths.count(mt.path) != 0 ||
                          (p.tool_cache && mt.kind == MountKind::bind && mt.path == p.tool_cache->path);
        if (!made || mt.source != mt.path)
            return error(index("filesystem.mounts", j) + ".expect",
                         "only the temporary directory, the tool cache and placeholders may be missing when the "
                         "plan is made");
    }
    for (std::size_t j = 0; j < p.filesystem.placeholders.size(); ++j)
        if (read_only.count(p.filesystem.placeholders[j].path) == 0)
            return error(index("filesystem.placeholders", j) + ".path",
                         "no ro-bind of this path: the command could write the placeholder");
    return {};
}

SBX_INLINE expected<void> PlanReader::read_mounts(element v, Plan& p) {
    auto mounts = array(v, "filesystem.mounts");
    SBX_TRY(mounts);
    std::size_t i = 0;
    for (auto e : *mounts) {
        const std::string k = index("filesystem.mounts", i++);
        auto mm = members(e, k, {"kind", "path", "source", "expect", "why"}, {"kind", "path", "expect"});
        SBX_TRY(mm);
        Mount mount;
        auto kind = string(mm->at("kind"), k + ".kind");
        SBX_TRY(kind);
        static constexpr MountKind kinds[] = {MountKind::bind,     MountKind::ro_bind,   MountKind::pin,
                                              MountKind::mask_dir, MountKind::mask_file, MountKind::ro_link};
        auto found = std::find_if(std::begin(kinds), std::end(kinds), [&](MountKind mk) { return mount_kind_name(mk) == *kind; });
        if (found == std::end(kinds))
            return error(k + ".kind",
                         "unknown kind '" + *kind + "'; expected bind, ro-bind, pin, mask-dir, mask-file or ro-link");
        mount.kind = *found;
        SBX_TRY(assign(mount.path, path(mm->at("path"), k + ".path")));
        const bool binds = mount.kind == MountKind::bind || mount.kind == MountKind::ro_bind;
        if (binds != mm->has("source"))
            return error(k + ".source", binds ? "missing" : "only bind and ro-bind have a source");
        if (binds) {
            SBX_TRY(assign(mount.source, path(mm->at("source"), k + ".source")));
        }
        if (mount.path == "/") return error(k + ".path", "a mount over / would replace the read-only view of it");
        if (mount.kind != MountKind::mask_dir && mount.kind != MountKind::mask_file) {
            const bool writable = mount.kind != MountKind::ro_bind && mount.kind != MountKind::ro_link;
            const auto* ki = kernel_interface(mount.path, writable);
            if (ki == nullptr && binds) ki = kernel_interface(mount.source, writable);
            if (ki != nullptr)
                return error(k + ".path", "binds a kernel interface from the host: " + std::string(ki->reason));
        }
        SBX_TRY(assign(mount.expect, identity(mm->at("expect"), k + ".expect")));
        if ((mount.kind == MountKind::pin || mount.kind == MountKind::mask_dir) &&
            (!mount.expect.exists || mount.expect.type != FileType::directory))
            return error(k + ".expect", "a " + *kind + " is of an existing directory");
        if (mount.kind == MountKind::mask_file && (!mount.expect.exists || mount.expect.type == FileType::directory))
            return error(k + ".expect", "a mask-file is of an existing path that is not a directory");
        if (mount.kind == MountKind::ro_link && (!mount.expect.exists || mount.expect.type != FileType::symlink))
            return error(k + ".expect", "a ro-link is of an existing symbolic link");
        SBX_TRY(read_optional(*mm, k, "why", mount.why, string));
        p.filesystem.mounts.push_back(std::move(mount));
    }
    return {};
}

SBX_INLINE expected<void> PlanReader::read_placeholders(element v, Plan& p) {
    auto placeholders = array(v, "filesystem.placeholders");
    SBX_TRY(placeholders);
    std::size_t i = 0;
    for (auto e : *placeholders) {
        const std::string k = index("filesystem.placeholders", i++);
        auto pm = members(e, k, {"path", "kind", "parent", "why"}, {"path", "kind", "parent"});
        SBX_TRY(pm);
        PlaceholderOp ph;
        SBX_TRY(assign(ph.path, path(pm->at("path"), k + ".path")));
        if (ph.path == "/") return error(k + ".path", "/ cannot be a placeholder");
        auto kind = string(pm->at("kind"), k + ".kind");
        SBX_TRY(kind);
        if (*kind == "file") ph.kind = Placeholder::file;
        else if (*kind == "directory") ph.kind = Placeholder::directory;
        else if (*kind == "commondir") ph.kind = Placeholder::commondir;
        else return error(k + ".kind", "unknown kind '" + *kind + "'; expected file, directory or commondir");
        // It names its own directory: only a file named commondir may be one.
        if (ph.kind == Placeholder::commondir && !ph.path.ends_with("/commondir"))
            return error(k + ".path", "a commondir placeholder is a file named commondir");
        SBX_TRY(assign(ph.parent, identity(pm->at("parent"), k + ".parent")));
        if (!ph.parent.exists || ph.parent.type != FileType::directory)
            return error(k + ".parent", "a placeholder goes in an existing directory");
        SBX_TRY(read_optional(*pm, k, "why", ph.why, string));
        // The launcher creates it and removes it after: it must not be inside
        // the temporary directory it removes, nor be the root itself.
        if (paths::at_or_under(ph.path, p.tmpdir) || ph.path == p.root)
            return error(k + ".path", "a placeholder may not be the root or inside the temporary directory");
        p.filesystem.placeholders.push_back(std::move(ph));
    }
    return {};
}

SBX_INLINE expected<void> PlanReader::read_neutralise(element v, Plan& p) {
    auto names = array(v, "filesystem.neutralise");
    SBX_TRY(names);
    std::size_t i = 0;
    for (auto e : *names) {
        const std::string k = index("filesystem.neutralise", i++);
        auto nm = members(e, k, {"path", "why"}, {"path"});
        SBX_TRY(nm);
        NeutraliseOp n;
        SBX_TRY(assign(n.path, path(nm->at("path"), k + ".path")));
        SBX_TRY(read_optional(*nm, k, "why", n.why, string));
        if (n.path == "/") return error(k + ".path", "/ cannot be renamed");
        // The launcher renames what is there after the run, through its
        // directory: a writable bind's own path, which the command can
        // neither rename nor replace (a mount point), as the root is.
        const std::string dir = paths::parent(n.path);
        const bool bound = std::any_of(p.filesystem.mounts.begin(), p.filesystem.mounts.end(), [&](const Mount& mt) {
            return mt.kind == MountKind::bind && mt.path == dir && mt.source == dir;
        });
        if (!bound) return error(k + ".path", "its directory '" + dir + "' is not a writable bind of this plan");
        if (paths::at_or_under(n.path, p.tmpdir))
            return error(k + ".path", "inside the temporary directory, which is removed after the run");
        for (const auto& mt : p.filesystem.mounts)
            if (paths::at_or_under(mt.path, n.path))
                return error(k + ".path", "a mount of this plan is at or inside it (" + mt.path + ")");
        for (const auto& ph : p.filesystem.placeholders)
            if (ph.path == n.path) return error(k + ".path", "a placeholder covers it already");
        for (const auto& other : p.filesystem.neutralise)
            if (other.path == n.path) return error(k + ".path", "'" + n.path + "' is listed twice");
        p.filesystem.neutralise.push_back(std::move(n));
    }
    return {};
}

SBX_INLINE expected<void> PlanReader::read_neutralise_new(element v, Plan& p) {
    auto ops = array(v, "filesystem.neutraliseNew");
    SBX_TRY(ops);
    std::size_t i = 0;
    for (auto e : *ops) {
        const std::string k = index("filesystem.neutraliseNew", i++);
        auto op = read_neutralise_new_op(e, k, p);
        SBX_TRY(op);
        for (const auto& other : p.filesystem.neutralise_new)
            if (other.dir == op->dir && other.pattern == op->pattern)
                return error(k, "'" + op->pattern + "' in '" + op->dir + "' is listed twice");
        p.filesystem.neutralise_new.push_back(std::move(*op));
    }
    return {};
}

SBX_INLINE expected<NeutraliseNewOp> PlanReader::read_neutralise_new_op(element e, const std::string& k,
                                                                        const Plan& p) {
    auto nm = members(e, k, {"dir", "pattern", "present", "why"}, {"dir", "pattern"});
    SBX_TRY(nm);
    NeutraliseNewOp op;
    SBX_TRY(assign(op.dir, path(nm->at("dir"), k + ".dir")));
    SBX_TRY(assign(op.pattern, string(nm->at("pattern"), k + ".pattern")));
    SBX_TRY(read_optional(*nm, k, "why", op.why, string));
    // The launcher lists the directory after the run: a mount point of this
    // plan (a writable bind's own path, or pinned), which the command can
    // neither rename nor replace, outside the temporary directory it removes.
    const bool mounted = std::any_of(p.filesystem.mounts.begin(), p.filesystem.mounts.end(), [&](const Mount& mt) {
        return mt.path == op.dir && (mt.kind == MountKind::pin || (mt.kind == MountKind::bind && mt.source == op.dir));
    });
    if (!mounted) return error(k + ".dir", "'" + op.dir + "' is not a writable bind or a pin of this plan");
    if (paths::at_or_under(op.dir, p.tmpdir))
        return error(k + ".dir", "inside the temporary directory, which is removed after the run");
    const auto& pat = op.pattern;
    if (pat.empty() || pat == "." || pat == ".." || pat.find('/') != std::string::npos || !glob::has_wildcard(pat))
        return error(k + ".pattern", "'" + pat + "' is not one path component with a wildcard");
    if (nm->has("present")) {
        auto names = array(nm->at("present"), k + ".present");
        SBX_TRY(names);
        std::size_t j = 0;
        for (auto n : *names) {
            const std::string nk = index(k + ".present", j++);
            auto name = string(n, nk);
            SBX_TRY(name);
            if (!glob::detail::match_component(pat, *name) || *name == "." || *name == ".." ||
                name->find('/') != std::string::npos)
                return error(nk, "'" + *name + "' is not a name '" + pat + "' matches");
            if (!op.present.empty() && op.present.back() >= *name)
                return error(nk, "the names must be sorted, each once");
            // Left alone after the run: the command must not have been able to change it.
            const std::string at = paths::join(op.dir, *name);
            const bool read_only = std::any_of(p.filesystem.mounts.begin(), p.filesystem.mounts.end(),
                                               [&](const Mount& mt) { return mt.path == at && !writable_mount(mt.kind); });
            if (!read_only) return error(nk, "'" + at + "' is not mounted read-only or hidden by this plan");
            op.present.push_back(std::move(*name));
        }
    }
    return op;
}

SBX_INLINE expected<void> PlanReader::read_git_exclude(element v, Plan& p) {
    auto em = members(v, "filesystem.gitExclude", {"path", "expect", "content"},
                      {"path", "expect", "content"});
    SBX_TRY(em);
    GitExclude ex;
    SBX_TRY(assign(ex.path, path(em->at("path"), "filesystem.gitExclude.path")));
    // The launcher edits it outside the sandbox: only inside the root, or in a
    // place the plan binds writable (a linked worktree's main git directory).
    const bool in_bind = std::any_of(p.filesystem.mounts.begin(), p.filesystem.mounts.end(), [&](const Mount& mt) {
        return mt.kind == MountKind::bind && mt.path == mt.source && paths::at_or_under(ex.path, mt.path) &&
               ex.path != mt.path;
    });
    if ((!paths::at_or_under(ex.path, p.root) || ex.path == p.root) && !in_bind)
        return error("filesystem.gitExclude.path",
                     "'" + ex.path + "' is neither inside the root nor inside a writable bind");
    if (!ex.path.ends_with("/info/exclude"))
        return error("filesystem.gitExclude.path", "'" + ex.path + "' is no git directory's info/exclude");
    SBX_TRY(assign(ex.expect, identity(em->at("expect"), "filesystem.gitExclude.expect")));
    if (!ex.expect.exists || ex.expect.type != FileType::regular)
        return error("filesystem.gitExclude.expect", "the exclude file is an existing regular file");
    SBX_TRY(assign(ex.content, string(em->at("content"), "filesystem.gitExclude.content")));
    if (ex.content.size() > (std::size_t{1} << 20))
        return error("filesystem.gitExclude.content", "more than 1 MiB");
    p.filesystem.git_exclude = std::move(ex);
    return {};
}

SBX_INLINE expected<void> PlanReader::read_git_audit(element v, Plan& p) {
    auto dirs = array(v, "filesystem.gitAudit");
    SBX_TRY(dirs);
    std::size_t i = 0;
    for (auto e : *dirs) {
        const std::string k = index("filesystem.gitAudit", i++);
        auto where = path(e, k);
        SBX_TRY(where);
        // The launcher renames files in it after the command: only where the
        // command could write, a writable bind of this plan or inside one.
        const bool writable = std::any_of(p.filesystem.mounts.begin(), p.filesystem.mounts.end(), [&](const Mount& mt) {
            return mt.kind == MountKind::bind && paths::at_or_under(*where, mt.path);
        });
        if (!writable) return error(k, "'" + *where + "' is not a writable bind of this plan, nor inside one");
        if (*where == "/") return error(k, "/ cannot be audited");
        if (std::find(p.filesystem.git_audit.begin(), p.filesystem.git_audit.end(), *where) !=
            p.filesystem.git_audit.end())
            return error(k, "'" + *where + "' is listed twice");
        p.filesystem.git_audit.push_back(std::move(*where));
    }
    return {};
}

SBX_INLINE expected<void> PlanReader::read_git_record(element v, Plan& p) {
    const std::string k = "filesystem.gitRecord";
    auto where = path(v, k);
    SBX_TRY(where);
    // Written after the run from what the audit found: only with an audit, and
    // never where the command could have written (or replaced) it: the last
    // mount over it, which decides what the command sees there, is no writable one.
    if (p.filesystem.git_audit.empty()) return error(k, "needs filesystem.gitAudit: it records what that audit finds");
    if (*where == "/") return error(k, "/ is no file");
    const Mount* over = nullptr;
    for (const auto& mt : p.filesystem.mounts)
        if (paths::at_or_under(*where, mt.path)) over = &mt;
    if (over != nullptr && (over->kind == MountKind::bind || over->kind == MountKind::pin))
        return error(k, "'" + *where + "' lies in a writable mount of this plan (" + over->path +
                            "), where the command could write it");
    p.filesystem.git_record = std::move(*where);
    return {};
}

SBX_INLINE expected<void> PlanReader::read_rules(element v, Plan& p) {
    auto rules = array(v, "filesystem.rules");
    SBX_TRY(rules);
    std::size_t i = 0;
    for (auto e : *rules) {
        const std::string k = index("filesystem.rules", i++);
        auto rm = members(e, k, {"kind", "pattern", "why", "credentialStore"}, {"kind", "pattern"});
        SBX_TRY(rm);
        PlanRule r;
        auto kind = string(rm->at("kind"), k + ".kind");
        SBX_TRY(kind);
        static constexpr FsRule::Kind kinds[] = {FsRule::Kind::deny_read, FsRule::Kind::allow_read,
                                                 FsRule::Kind::writable, FsRule::Kind::deny_write,
                                                 FsRule::Kind::protect};
        auto found = std::find_if(std::begin(kinds), std::end(kinds),
                                  [&](FsRule::Kind fk) { return plan_rule_kind_name(fk) == *kind; });
        if (found == std::end(kinds))
            return error(k + ".kind", "unknown kind '" + *kind +
                                          "'; expected deny-read, allow-read, writable, deny-write or protect");
        r.kind = *found;
        SBX_TRY(assign(r.pattern, path(rm->at("pattern"), k + ".pattern")));
        SBX_TRY(read_optional(*rm, k, "why", r.why, string));
        if (rm->has("credentialStore")) {
            auto store = boolean(rm->at("credentialStore"), k + ".credentialStore");
            SBX_TRY(store);
            if (r.kind != FsRule::Kind::deny_read)
                return error(k + ".credentialStore", "only a deny-read rule can be a credential store");
            if (*store) r.deny = FsRule::Deny::credential_store;
        }
        p.rules.push_back(std::move(r));
    }
    return {};
}

SBX_INLINE expected<void> PlanReader::read_tool_cache(element v, Plan& p) {
    auto tm = members(v, "filesystem.toolCache", {"path", "set", "kept"}, {"path", "set", "kept"});
    SBX_TRY(tm);
    ToolCachePlan tc;
    SBX_TRY(assign(tc.path, path(tm->at("path"), "filesystem.toolCache.path")));
    if (paths::at_or_under(tc.path, p.root) || paths::at_or_under(p.root, tc.path))
        return error("filesystem.toolCache.path", "the tool cache and the root may not hold each other");
    if (paths::at_or_under(tc.path, p.tmpdir) || paths::at_or_under(p.tmpdir, tc.path))
        return error("filesystem.toolCache.path", "the tool cache and the temporary directory may not hold each other");
    const bool bound = std::any_of(p.filesystem.mounts.begin(), p.filesystem.mounts.end(), [&](const Mount& mt) {
        return mt.kind == MountKind::bind && mt.path == tc.path && mt.source == tc.path;
    });
    if (!bound) return error("filesystem.toolCache.path", "'" + tc.path + "' is not a writable bind of this plan");
    auto set = array(tm->at("set"), "filesystem.toolCache.set");
    SBX_TRY(set);
    std::size_t i = 0;
    for (auto e : *set) {
        const std::string k = index("filesystem.toolCache.set", i++);
        auto name = string(e, k);
        SBX_TRY(name);
        const auto it = std::find_if(p.env.begin(), p.env.end(), [&](const EnvVar& ev) { return ev.name == *name; });
        if (it == p.env.end() || !paths::is_absolute(it->value) || !paths::at_or_under(paths::normalize(it->value), tc.path))
            return error(k, "command.env has no " + *name + " inside the tool cache");
        tc.set.push_back(std::move(*name));
    }
    SBX_TRY(assign(tc.kept, named_reasons<KeptEnvVar>(tm->at("kept"), "filesystem.toolCache.kept")));
    p.tool_cache = std::move(tc);
    return {};
}

SBX_INLINE expected<void> PlanReader::read_warnings(element v, Plan& p) {
    auto list = array(v, "warnings");
    SBX_TRY(list);
    std::size_t i = 0;
    for (auto e : *list) {
        const std::string k = index("warnings", i++);
        auto wm = members(e, k, {"file", "key", "message", "platform"}, {"message"});
        SBX_TRY(wm);
        Warning w;
        for (auto [name, out] : {std::pair{"file", &w.file}, std::pair{"key", &w.key}, std::pair{"message", &w.message}})
            SBX_TRY(read_optional(*wm, k, name, *out, string));
        // Absent in plans made before it, and in warnings for every launcher.
        if (wm->has("platform")) {
            auto s = string(wm->at("platform"), k + ".platform");
            SBX_TRY(s);
            if (*s != "linux") return error(k + ".platform", "expected \"linux\" (or no platform key)");
            w.scope = WarningScope::linux_only;
        }
        p.warnings.push_back(std::move(w));
    }
    return {};
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE expected<Plan> parse_plan(std::string_view text, std::string origin) {
    auto doc = json::parse(text);
    if (!doc) {
        Error e = doc.error();
        e.code = Errc::invalid_plan;
        return fail(std::move(e).in_file(std::move(origin)));
    }
    auto plan = detail::PlanReader{}.read((*doc)->root());
    if (!plan) return fail(Error(plan.error()).in_file(std::move(origin)));
    return plan;
}

SBX_INLINE expected<std::vector<net::HostAnswer>> parse_host_answers(std::string_view text, std::string origin) {
    auto doc = json::parse(text);
    if (!doc) {
        Error e = doc.error();
        e.code = Errc::invalid_plan;
        return fail(std::move(e).in_file(std::move(origin)));
    }
    auto answers = detail::PlanReader::read_answers_file((*doc)->root());
    if (!answers) return fail(Error(answers.error()).in_file(std::move(origin)));
    return answers;
}

}  // namespace sbx
#endif
