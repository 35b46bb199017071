// Fuzzing read_shell_line().
//
// Any bytes come back as commands or as unreadable, at a byte inside the line,
// with a reason. What it reads is consistent: each command's bytes and each
// word's lie in the line, in order; a command has a word, an assignment or a
// redirection; only the last command may end the line. A line it calls
// readable re-reads to the same words: each word's own bytes, read again as the
// argument of `:`, give the same text and the same expansions. The removal
// check (removals.hpp) takes any reading: each finding says why and points
// into the line, and a line not read whole leaves the check incomplete; so
// does each finding of hidden_code (hidden_code.hpp). The same bytes read as a
// Bash(...) rule (bash_rule.hpp) parse or fail with a message, and a rule that
// parses matches each command's text without crashing. The line routed
// (route.hpp) under a policy with deny, ask and allow rules and an
// excludedCommands pattern, in each mode, always gets a route: each decision
// says why and points into the line (or at its end), only a line inside is `auto`, only an
// `ask` is a person's, and dontAsk never asks.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "check.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/route/bash_rule.hpp"
#include "sbx/route/hidden_code.hpp"
#include "sbx/route/removals.hpp"
#include "sbx/route/route.hpp"
#include "sbx/route/shell_line.hpp"
#include "sbx/settings/defaults.hpp"
#include "sbx/settings/settings.hpp"

namespace {

using sbx::fuzz::check;
using sbx::route::Word;

void check_word(const Word& w, std::string_view line) {
    check(w.begin <= w.end && w.end <= line.size(), "a word's bytes lie in the line");
    const std::string raw(line.substr(w.begin, w.end - w.begin));
    const auto reread = sbx::route::read_shell_line(": " + raw);
    check(reread.readable(), "a word of a readable line reads again");
    check(reread.commands.size() == 1 && reread.commands[0].words.size() == 2, "a word reads again as one word");
    const Word& again = reread.commands[0].words[1];
    check(again.text == w.text, "a word reads again to the same text");
    check(again.expansions == w.expansions, "a word reads again with the same expansions");
}

// The policy lines are routed under, made once.
const sbx::Policy& routing_policy() {
    static const sbx::Policy policy = [] {
        constexpr std::string_view text = R"J({
            "sandbox": {"enabled": true, "excludedCommands": ["docker *"]},
            "permissions": {"allow": ["Bash(npm test)", "Bash(make *)"], "deny": ["Bash(curl:*)"],
                            "ask": ["Bash(git push *)"]}})J";
        const sbx::SettingsSource source{sbx::LayerKind::project, "/home/u/proj/.claude/settings.json",
                                         {"/home/u", "/home/u/proj"}, "/home/u/proj"};
        auto settings = sbx::parse_settings(text, source);
        check(settings.has_value(), "the routing policy's settings parse");
        const sbx::MemoryFs fs;
        auto merged = sbx::effective_policy({*settings}, sbx::MergeOptions{}, fs, {"/home/u"});
        check(merged.has_value(), "the routing policy merges");
        return *merged;
    }();
    return policy;
}

void check_because(const sbx::route::Because& b, std::string_view line) {
    check(!b.why.empty(), "a route's decision says why");
    // At most the line's end: an unreadable line can end too soon.
    check(!b.at || *b.at <= line.size(), "a route's decision points into the line, or at its end");
}

void check_routes(std::string_view line) {
    const sbx::MemoryFs fs;
    const sbx::route::Place place{"/home/u/proj", "/home/u", "/home/u/proj", false};
    for (auto mode : sbx::kPermissionModes) {
        sbx::route::Request call;
        call.mode = mode;
        const auto r = sbx::route::route(routing_policy(), line, call, place, fs);
        check(r.has_value(), "a line always gets a route");
        for (const auto* b : {&r->mode_because, &r->where_because, &r->approval_because, &r->unknown_host_because})
            check_because(*b, line);
        for (const auto& n : r->notes) check_because(n, line);
        check(r->approval != sbx::route::Approval::automatic || r->where == sbx::route::Where::inside,
              "only a line inside the sandbox is auto");
        check(!r->person_only || r->approval == sbx::route::Approval::ask, "only an ask is a person's");
        check(mode != sbx::PermissionMode::dont_ask || r->approval != sbx::route::Approval::ask, "dontAsk never asks");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view line(reinterpret_cast<const char*>(data), size);
    const auto r = sbx::route::read_shell_line(line);
    if (!r.readable()) {
        check(!r.unreadable->why.empty(), "an unreadable line says why");
        check(r.unreadable->at <= line.size(), "an unreadable line names a byte in it");
    }
    std::size_t after = 0;
    for (std::size_t k = 0; k < r.commands.size(); ++k) {
        const auto& c = r.commands[k];
        check(!c.words.empty() || !c.assignments.empty() || !c.redirects.empty(), "a command has something in it");
        check(c.begin >= after && c.begin <= c.end && c.end <= line.size(), "commands lie in the line, in order");
        after = c.begin;
        if (!r.readable()) continue;
        check(c.joint != sbx::route::Joint::and_if || k + 1 < r.commands.size(), "&& is followed by a command");
        for (const auto& w : c.assignments) check_word(w, line);
        for (const auto& w : c.words) check_word(w, line);
        for (const auto& rd : c.redirects) check_word(rd.target, line);
    }
    const sbx::route::RemovalPlace place{"/home/u/proj", "/home/u", "", false};
    const auto removals = sbx::route::critical_removals(r, place);
    if (!r.readable()) check(!removals.complete, "a line not read whole leaves the removal check incomplete");
    for (const auto& f : removals.critical) {
        check(!f.why.empty() && !f.program.empty(), "a critical removal names its program and why");
        check(f.at < line.size(), "a critical removal points into the line");
    }
    if (auto rule = sbx::route::parse_bash_rule(line); !rule) {
        check(!rule.error().message.empty(), "a malformed Bash rule says why");
    } else if (*rule) {
        check(sbx::route::matches(**rule, (*rule)->kind == sbx::route::BashRule::Kind::exact ? (*rule)->text : "x") ||
                  (*rule)->kind != sbx::route::BashRule::Kind::exact,
              "an exact rule matches its own command");
        for (const auto& c : r.commands) (void)sbx::route::matches(**rule, sbx::route::match_text(line, c));
    }
    for (const auto& h : sbx::route::hidden_code(r))
        check(!h.why.empty() && h.at < line.size(), "hidden code says why and points into the line");
    check_routes(line);
    return 0;
}
