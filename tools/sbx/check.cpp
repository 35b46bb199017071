// check.cpp - `sbx check FILE`: each expectation of a check file decided as
// `sbx run` would (compose.hpp), printed as TAP or JSON; exit 1 when one does
// not hold.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <memory>
#include <optional>
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
#include "git_files.hpp"          // the repository's agent files
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
                     const std::vector<sbx::review::CheckOutcome>& outcomes, const std::vector<std::string>& under,
                     const std::vector<std::string>& agent_files) {
    auto& out = std::cout;
    out << "# sbx check " << c.file << ": policy for " << l.root << ": " << sbx::root_why(l.where)
        << (l.policy.trusted ? "" : "; untrusted project") << "\n";
    for (const auto& f : agent_files) out << "# expected refusals hold under the agent file " << f << " too\n";
    for (const auto& w : warnings) out << "# warning: " << sbx::to_string(w) << "\n";
    out << "1.." << outcomes.size() << "\n";
    std::size_t n = 0, failed = 0;
    for (const auto& o : outcomes) {
        const auto& e = *o.expectation;
        const auto w = words_of(o);
        const std::string& agent = under[n];
        out << (o.holds ? "ok " : "not ok ") << ++n << " - " << sbx::review::subject_name(e.subject) << " " << e.text
            << ": " << (o.holds ? w.got : "expected " + w.expected + ", got " + w.got)
            << (agent.empty() ? "" : " under the agent file " + agent) << "\n";
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
                      const std::vector<sbx::review::CheckOutcome>& outcomes, const std::vector<std::string>& under,
                      const std::vector<std::string>& agent_files) {
    sbx::json::Writer w;
    w.begin_object();
    write_root(w, l.where);
    const auto failed = std::count_if(outcomes.begin(), outcomes.end(), [](const auto& o) { return !o.holds; });
    w.key("file").value(c.file).key("expectations").value(static_cast<std::uint64_t>(outcomes.size()));
    w.key("failed").value(static_cast<std::int64_t>(failed)).key("agentFiles").begin_array();
    for (const auto& f : agent_files) w.value(f);
    w.end_array().key("results").begin_array();
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        const auto& o = outcomes[i];
        const auto& e = *o.expectation;
        w.begin_object().key("key").value(e.key).key("line").value(static_cast<std::uint64_t>(e.line));
        w.key("agentFile");
        if (under[i].empty()) w.null();
        else w.value(under[i]);
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
    auto text = read_given_file(given);
    SBX_TRY(text);
    return sbx::review::parse_check_file(*text, given, {c.home, c.root});
}

// Whether `e` expects a refusal: a path denied, a host denied, a command
// denied. Those hold under every agent file of the repository too (a secret
// stays unreadable whichever agent runs); what an expectation allows is the
// project's, which an agent file may narrow.
bool expects_refusal(const sbx::review::Expectation& e) {
    using S = sbx::review::Expectation::Subject;
    if (e.subject == S::host) return e.verdict == sbx::net::HostDecision::Verdict::deny;
    if (e.subject == S::command) return e.approval == sbx::route::Approval::deny;
    return !e.allowed;
}

// The expectations decided for commands of the root run as `args` says, kept
// with what their outcomes point into.
struct Decided {
    Composed composed;
    std::unique_ptr<sbx::CachedFs> cached;
    RunRules rules;
    std::vector<sbx::review::CheckOutcome> outcomes;
};

sbx::expected<std::unique_ptr<Decided>> decide_all(const SettingsArgs& args, const sbx::review::CheckFile* check,
                                                   const std::string& check_file, std::optional<sbx::review::CheckFile>& read,
                                                   const std::vector<sbx::net::Address>& own) {
    auto composed = compose(args, HomeRoot::allowed);
    SBX_TRY(composed);
    if (check == nullptr) {
        auto parsed = read_check_file(check_file, *composed);
        SBX_TRY(parsed);
        read = std::move(*parsed);
        check = &*read;
    }
    auto cached = std::make_unique<sbx::CachedFs>(*composed->view);
    auto rules = run_rules(*composed, run_inputs(*composed), *cached);
    SBX_TRY(rules);
    const sbx::review::RouteContext routes{composed->policy, route_place(*composed)};
    auto outcomes = sbx::review::run_checks(*check, rules->fs.rules, rules->hosts, own, routes, *cached);
    SBX_TRY(outcomes);
    return std::make_unique<Decided>(Decided{std::move(*composed), std::move(cached), std::move(*rules), std::move(*outcomes)});
}

// The repository's agent files (AGENT.md, AGENT-*.md: tracked, or not
// ignored), relative to the root; none where the root holds no .git.
sbx::expected<std::vector<std::string>> repository_agent_files(const Composed& c) {
    if (::access(sbx::paths::join(c.root, ".git").c_str(), F_OK) != 0) return std::vector<std::string>{};
    auto repo = sbx::tools::find_git(c.root);
    SBX_TRY(repo);
    return sbx::tools::agent_files_in_work_tree(*repo);
}

}  // namespace

int run_check(const CheckArgs& a) {
    std::optional<sbx::review::CheckFile> read;
    const std::vector<sbx::net::Address> own = sbx::launcher::own_addresses();  // this machine's, for every side
    auto base = decide_all(a.settings, nullptr, a.file, read, own);
    if (!base) return report(base.error());
    const sbx::review::CheckFile* check = &*read;
    const Composed* composed = &(*base)->composed;
    const auto* rules = &(*base)->rules;
    auto* outcomes = &(*base)->outcomes;
    // Each expected refusal again under each agent file of the repository
    // (unless --agent-file names the one): the first that lets it through
    // decides the outcome.
    std::vector<std::string> under(outcomes->size());
    std::vector<std::unique_ptr<Decided>> agents;
    std::vector<std::string> agent_files;
    if (a.settings.agent_file.empty()) {
        auto files = repository_agent_files(*composed);
        if (!files) return report(files.error());
        agent_files = *files;
        for (const auto& rel : agent_files) {
            SettingsArgs with = a.settings;
            with.agent_file = sbx::paths::join(composed->root, rel);
            auto d = decide_all(with, check, a.file, read, own);
            if (!d) return report(d.error());
            for (std::size_t i = 0; i < outcomes->size(); ++i)
                if (expects_refusal(check->expect[i]) && (*outcomes)[i].holds && !(*d)->outcomes[i].holds) {
                    (*outcomes)[i] = (*d)->outcomes[i];
                    under[i] = rel;
                }
            agents.push_back(std::move(*d));
        }
    }
    // What the settings left out bears on what the expectations meet (a
    // misspelt key is no deny): the policy's warnings and the rules'.
    std::vector<sbx::Warning> warnings = composed->policy.warnings;
    for (const auto* more : {&rules->fs.rules.warnings, &rules->fs.protected_warnings, &rules->fs.tool_cache_warnings})
        warnings.insert(warnings.end(), more->begin(), more->end());
    if (a.settings.json) print_check_json(*composed, *check, warnings, *outcomes, under, agent_files);
    else print_check_tap(*composed, *check, warnings, *outcomes, under, agent_files);
    const bool all = std::all_of(outcomes->begin(), outcomes->end(), [](const auto& o) { return o.holds; });
    return all ? kOk : kFailed;
}

}  // namespace sbx::cli
