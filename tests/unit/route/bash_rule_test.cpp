// sbx::route::parse_bash_rule and matches: Claude Code's Bash(...) rules, each
// matched against one command of a line at a time.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "sbx/route/bash_rule.hpp"

namespace {

using sbx::route::BashRule;

BashRule rule(std::string_view text) {
    auto r = sbx::route::parse_bash_rule(text);
    REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : r.error().message));
    REQUIRE(r->has_value());
    return **r;
}

// The match texts of each command of `line`, joined by " ; ".
std::string texts(std::string_view line) {
    const auto r = sbx::route::read_shell_line(line);
    REQUIRE(r.readable());
    std::string out;
    for (const auto& c : r.commands) out += (out.empty() ? "" : " ; ") + sbx::route::match_text(line, c);
    return out;
}

TEST_CASE("parse_bash_rule: the four kinds, other tools, and what is malformed") {
    CHECK(rule("Bash") == BashRule{});
    CHECK(rule("Bash(*)") == BashRule{});
    CHECK(rule("Bash(npm test)") == BashRule{BashRule::Kind::exact, "npm test"});
    CHECK(rule("Bash(npm run:*)") == BashRule{BashRule::Kind::prefix, "npm run"});
    CHECK(rule("Bash(git push *)") == BashRule{BashRule::Kind::wildcard, "git push *"});
    CHECK(rule("Bash(* --version)") == BashRule{BashRule::Kind::wildcard, "* --version"});
    CHECK(rule("Bash(echo \\*)") == BashRule{BashRule::Kind::exact, "echo *"});
    CHECK(rule("Bash(a:*b*)") == BashRule{BashRule::Kind::wildcard, "a:*b*"});
    for (const std::string_view other : {"Read(~/.ssh/**)", "WebFetch(domain:x.com)", "BashOutput", "bash(ls)", ""}) {
        CAPTURE(other);
        auto r = sbx::route::parse_bash_rule(other);
        REQUIRE(r.has_value());
        CHECK_FALSE(r->has_value());
    }
    for (const std::string_view bad : {"Bash(ls", "Bash()", "Bash(ls) x"}) {
        CAPTURE(bad);
        auto r = sbx::route::parse_bash_rule(bad);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == sbx::Errc::invalid_argument);
        CHECK(r.error().message.find("Bash") != std::string::npos);
    }
}

struct MatchRow {
    std::string_view rule;
    std::string_view text;
    bool matches;
};

TEST_CASE("matches: exact, prefix at a word's end, wildcards with spaces, the optional trailing wildcard") {
    const MatchRow rows[] = {
        {"Bash", "rm -rf /", true},
        {"Bash(npm test)", "npm test", true},
        {"Bash(npm test)", "npm test --watch", false},
        {"Bash(npm test)", "npm  test", false},
        {"Bash(npm run:*)", "npm run", true},
        {"Bash(npm run:*)", "npm run build", true},
        {"Bash(npm run:*)", "npm runx", false},
        {"Bash(npm run:*)", "npm", false},
        {"Bash(git push *)", "git push origin main", true},
        {"Bash(git push *)", "git push", true},
        {"Bash(git push *)", "git pushx", false},
        {"Bash(git *)", "git", true},
        {"Bash(git * main)", "git push origin main", true},
        {"Bash(git * main)", "git push origin dev", false},
        {"Bash(* --version)", "node --version", true},
        {"Bash(* --version)", "--version", false},
        {"Bash(npm run test*)", "npm run test:unit", true},
        {"Bash(npm run test*)", "npm run test", true},
        {"Bash(ls *)", "ls -la ~/.claude/", true},
        {"Bash(echo \\*)", "echo *", true},
        {"Bash(echo \\*)", "echo x", false},
        {"Bash(a * b *)", "a x b", false},
        {"Bash(a * b *)", "a x b y", true},
        {"Bash(cat \\\\x)", "cat \\x", true},
    };
    for (const auto& row : rows) {
        CAPTURE(row.rule);
        CAPTURE(row.text);
        CHECK(sbx::route::matches(rule(row.rule), row.text) == row.matches);
    }
}

TEST_CASE("match_text: each command's words as written, without its variables in front and its redirections") {
    CHECK(texts("npm test > log 2>&1") == "npm test");
    CHECK(texts("FOO=1 npm test") == "npm test");
    CHECK(texts("git commit -m \"a  b\" && git push") == "git commit -m \"a  b\" ; git push");
    CHECK(texts("cd x;  ls   -l") == "cd x ; ls -l");
    CHECK(texts("> out echo hi") == "echo hi");
    // So a rule for one command does not approve a line that adds another.
    const std::string_view line = "npm test && rm -rf x";
    const auto r = sbx::route::read_shell_line(line);
    REQUIRE(r.commands.size() == 2);
    CHECK(sbx::route::matches(rule("Bash(npm *)"), sbx::route::match_text(line, r.commands[0])));
    CHECK_FALSE(sbx::route::matches(rule("Bash(npm *)"), sbx::route::match_text(line, r.commands[1])));
}

TEST_CASE("matches: a pattern of many stars against a long text ends") {
    const std::string pattern = "Bash(" + std::string(200, '*') + "x)";
    const std::string text(100000, 'a');
    CHECK_FALSE(sbx::route::matches(rule(pattern), text));
}

}  // namespace
