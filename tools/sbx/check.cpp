// check.cpp - `sbx check FILE`: each expectation of a check file decided as
// `sbx run` would (compose.hpp), printed as TAP or JSON; exit 1 when one does
// not hold.
#include <algorithm>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "sbx/core/json_write.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "sbx/net/address.hpp"
#include "sbx/review/check.hpp"
#include "sbx/review/check_file.hpp"
#include "sbx/review/decision_json.hpp"
#include "sbx/settings/settings.hpp"

#include "cli_common.hpp"
#include "commands.hpp"
#include "compose.hpp"
#include "proxy/host_lookup.hpp"  // launchers/: this machine's addresses, as the proxy's

namespace sbx::cli {

namespace {

// What an outcome expected and got, in the check file's words, and why it got it.
struct OutcomeWords {
    std::string expected, got, why;
};

// A route in the words of a check file: "ask (a person) inside".
std::string route_words(std::optional<sbx::route::Approval> approval, const std::optional<std::string>& where,
                        bool person_only) {
    std::string out;
    if (approval) out += std::string(sbx::route::approval_name(*approval)) + (person_only ? " (a person)" : "");
    if (where) out += (out.empty() ? "" : " ") + *where;
    return out;
}

OutcomeWords words_of(const sbx::review::CheckOutcome& o) {
    const auto& e = *o.expectation;
    if (o.route) {
        // What the expectation names, as the route has it.
        const std::optional<std::string> where =
            !e.where ? std::nullopt
                     : std::optional<std::string>(*e.where == "outside" && o.route->where != sbx::route::Where::inside
                                                      ? std::string("outside")
                                                      : std::string(sbx::route::where_name(o.route->where)));
        std::optional<sbx::route::Approval> approval;
        if (e.approval) approval = o.route->approval;
        return {route_words(e.approval, e.where, false), route_words(approval, where, o.route->person_only),
                sbx::route::describe(o.route->approval_because) + "; " +
                    sbx::route::describe(o.route->where_because)};
    }
    if (o.host)
        return {std::string(sbx::net::verdict_name(e.verdict)), std::string(sbx::net::verdict_name(o.host->verdict)),
                o.host->why};
    return {std::string(sbx::allowed_word(e.allowed)), std::string(sbx::allowed_word(o.path->decision.allowed)),
            sbx::why(o.path->decision)};
}

// TAP: the plan line, then a line per expectation with the decision and its
// rule on the diagnostic lines under it, and where a failing one is in the file.
void print_check_tap(const Composed& l, const sbx::review::CheckFile& c, const std::vector<sbx::Warning>& warnings,
                     const std::vector<sbx::review::CheckOutcome>& outcomes) {
    auto& out = std::cout;
    out << "# sbx check " << c.file << ": policy for " << l.root << ": " << sbx::root_why(l.where)
        << (l.policy.trusted ? "" : "; untrusted project") << "\n";
    for (const auto& w : warnings) out << "# warning: " << sbx::to_string(w) << "\n";
    out << "1.." << outcomes.size() << "\n";
    std::size_t n = 0, failed = 0;
    for (const auto& o : outcomes) {
        const auto& e = *o.expectation;
        const auto w = words_of(o);
        out << (o.holds ? "ok " : "not ok ") << ++n << " - " << sbx::review::subject_name(e.subject) << " " << e.text
            << ": " << (o.holds ? w.got : "expected " + w.expected + ", got " + w.got) << "\n";
        if (o.host && sbx::net::to_string(e.target) != e.text) out << "#   host: " << sbx::net::to_string(e.target) << "\n";
        if (o.path && (o.path->path != e.text || o.path->real_path != o.path->path)) {
            out << "#   path: " << o.path->path;
            if (o.path->real_path != o.path->path) out << " (leads to " << o.path->real_path << ")";
            out << "\n";
        }
        out << "#   " << w.why << "\n";
        if (o.holds) continue;
        ++failed;
        if (!e.why.empty()) out << "#   expected because: " << e.why << "\n";
        out << "#   at " << c.file << ":" << e.line << " (" << e.key << ")\n";
    }
    if (failed == 0) out << "# all " << outcomes.size() << " expectations hold\n";
    else out << "# " << failed << " of " << outcomes.size() << " expectations " << (failed == 1 ? "does" : "do")
             << " not hold\n";
}

void print_check_json(const Composed& l, const sbx::review::CheckFile& c, const std::vector<sbx::Warning>& warnings,
                      const std::vector<sbx::review::CheckOutcome>& outcomes) {
    sbx::json::Writer w;
    w.begin_object();
    write_root(w, l.where);
    const auto failed = std::count_if(outcomes.begin(), outcomes.end(), [](const auto& o) { return !o.holds; });
    w.key("file").value(c.file).key("expectations").value(static_cast<std::uint64_t>(outcomes.size()));
    w.key("failed").value(static_cast<std::int64_t>(failed)).key("results").begin_array();
    for (const auto& o : outcomes) {
        const auto& e = *o.expectation;
        w.begin_object().key("key").value(e.key).key("line").value(static_cast<std::uint64_t>(e.line));
        w.key("subject").value(sbx::review::subject_name(e.subject)).key("text").value(e.text);
        if (o.route) {
            w.key("expected").begin_object();
            if (e.approval) w.key("approval").value(sbx::route::approval_name(*e.approval));
            if (e.where) w.key("where").value(*e.where);
            w.end_object();
        } else if (o.path) {
            w.key("path").value(o.path->path).key("realPath").value(o.path->real_path);
            w.key("expected").value(e.allowed);
        } else {
            w.key("host").value(e.target.host).key("port").value(static_cast<int>(e.target.port));
            w.key("expected").value(sbx::net::verdict_name(e.verdict));
        }
        w.key("holds").value(o.holds).key("why");
        if (e.why.empty()) w.null();
        else w.value(e.why);
        w.key("decision");
        if (o.route) {
            sbx::route::write_route(w, *o.route);
            w.end_object();
            continue;
        }
        w.begin_object();
        if (o.path) sbx::review::write_fs_decision_members(w, o.path->decision);
        else sbx::review::write_host_decision_members(w, *o.host);
        w.end_object().end_object();
    }
    w.end_array().key("warnings").begin_array();
    for (const auto& x : warnings) w.value(sbx::to_string(x));
    w.end_array().end_object();
    std::cout << w.take() << "\n";
}

// The check file FILE, relative to the current directory; the paths in it are
// the root's.
sbx::expected<sbx::review::CheckFile> read_check_file(const std::string& given, const Composed& c) {
    const std::string file = absolute(given);
    auto text = sbx::read_small_file(file, sbx::kMaxSettingsBytes, sbx::Errc::invalid_settings);
    SBX_TRY(text);
    if (!*text) return sbx::fail(sbx::Error(sbx::Errc::io_error, "no such file").in_file(given));
    return sbx::review::parse_check_file(**text, given, {c.home, c.root});
}

}  // namespace

int run_check(const CheckArgs& a) {
    auto composed = compose(a.settings, HomeRoot::allowed);
    if (!composed) return report(composed.error());
    auto check = read_check_file(a.file, *composed);
    if (!check) return report(check.error());
    sbx::CachedFs cached(*composed->view);
    auto rules = run_rules(*composed, run_inputs(*composed), cached);
    if (!rules) return report(rules.error());
    const std::vector<sbx::net::Address> own = sbx::launcher::own_addresses();
    const sbx::review::RouteContext routes{composed->policy, route_place(*composed)};
    auto outcomes = sbx::review::run_checks(*check, rules->fs.rules, rules->hosts, own, routes, cached);
    if (!outcomes) return report(outcomes.error());
    // What the settings left out bears on what the expectations meet (a
    // misspelt key is no deny): the policy's warnings and the rules'.
    std::vector<sbx::Warning> warnings = composed->policy.warnings;
    for (const auto* more : {&rules->fs.rules.warnings, &rules->fs.protected_warnings, &rules->fs.tool_cache_warnings})
        warnings.insert(warnings.end(), more->begin(), more->end());
    if (a.settings.json) print_check_json(*composed, *check, warnings, *outcomes);
    else print_check_tap(*composed, *check, warnings, *outcomes);
    const bool all = std::all_of(outcomes->begin(), outcomes->end(), [](const auto& o) { return o.holds; });
    return all ? kOk : kFailed;
}

}  // namespace sbx::cli
