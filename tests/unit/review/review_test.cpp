// sbx::review: check files read strictly, expectations decided as `sbx run`
// decides, and two policies compared value by value and decision by decision.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/json.hpp"
#include "sbx/plan/command_fs_rules.hpp"
#include "sbx/review/check.hpp"
#include "sbx/review/check_file.hpp"
#include "sbx/review/decision_diff.hpp"
#include "sbx/review/value_diff.hpp"
#include "sbx/rules/network.hpp"
#include "sbx/settings/defaults.hpp"
#include "sbx/settings/settings.hpp"

namespace {

using sbx::review::Direction;
using sbx::review::Expectation;
using Verdict = sbx::net::HostDecision::Verdict;

const sbx::paths::Base kBase{"/home/u", "/r"};

sbx::review::CheckFile check_of(std::string_view text) {
    auto c = sbx::review::parse_check_file(text, "check.json", kBase);
    REQUIRE_MESSAGE(c.has_value(), (c ? std::string() : sbx::to_string(c.error())));
    return std::move(*c);
}

sbx::Error check_error(std::string_view text) {
    auto c = sbx::review::parse_check_file(text, "check.json", kBase);
    REQUIRE_FALSE(c.has_value());
    CHECK(c.error().code == sbx::Errc::invalid_settings);
    CHECK(c.error().file == "check.json");
    return c.error();
}

// The effective policy of one project settings file of root /r (HOME /home/u),
// the built-in credential stores under it, as `sbx run` makes it.
sbx::Policy project_policy(std::string_view json, const sbx::FsView& fs) {
    sbx::SettingsSource src{sbx::LayerKind::project, "/r/.claude/settings.json", {"/home/u", "/r"}, "/r"};
    auto s = sbx::parse_settings(json, src);
    REQUIRE_MESSAGE(s.has_value(), (s ? std::string() : sbx::to_string(s.error())));
    std::vector<sbx::Settings> layers;
    layers.push_back(std::move(*s));
    auto p = sbx::effective_policy(std::move(layers), {}, fs, {"/home/u"});
    REQUIRE(p.has_value());
    return std::move(*p);
}

// What a command runs with under a policy: `sbx run`'s rules, and host rules
// that ask about hosts no rule names.
struct Rules {
    sbx::CommandFsRules fs;
    sbx::net::HostRules hosts;
};

Rules rules_of(const sbx::Policy& p, const sbx::FsView& fs) {
    sbx::CachedFs cached(fs);
    auto r = sbx::command_fs_rules(p, {"/r", "/tmp/sbx-1", "/home/u"}, std::nullopt, cached);
    REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : sbx::to_string(r.error())));
    auto h = sbx::net::compile_host_rules(p);
    REQUIRE(h.has_value());
    h->on_unknown = sbx::net::kRunUnknownHost;
    return {std::move(*r), std::move(*h)};
}

sbx::MemoryFs project_fs() {
    sbx::MemoryFs fs;
    fs.dir("/r/.git/hooks").dir("/r/src").dir("/r/secrets").dir("/home/u/.aws");
    return fs;
}

}  // namespace

TEST_CASE("json::locate_key: the line and column of a key's value, or of the deepest part there") {
    constexpr std::string_view text = "{\n  \"expect\": [\n    {\"read\": \"a\"},\n    {\"a.b\": {\"c\": [1, 2]}}\n  ]\n}";
    auto at = [&](std::string_view key) { return sbx::json::locate_key(text, key); };
    REQUIRE(at("expect"));
    CHECK(at("expect")->line == 2);
    CHECK(at("expect")->column == 13);
    CHECK(at("expect[0].read")->line == 3);
    CHECK(at("expect[0].read")->column == 14);
    // A member whose name holds a dot, and an index inside it.
    CHECK(at("expect[1].a.b.c[1]")->line == 4);
    CHECK(at("expect[1].a.b.c[1]")->column == 23);
    // Not there: the deepest part that is.
    CHECK(at("expect[1].missing")->line == 4);
    CHECK(at("expect[7]")->line == 2);
    CHECK_FALSE(at("nothing").has_value());
    CHECK_FALSE(at("").has_value());
    // Escapes in a member's name are decoded before comparing.
    CHECK(sbx::json::locate_key(R"({"a\u0062": 1})", "ab")->column == 13);
}

TEST_CASE("parse_check_file: each kind of expectation, paths as settings take them") {
    const auto c = check_of(R"({"expect": [
        {"read": "~/.aws/credentials", "allowed": false, "why": "cloud keys"},
        {"write": ".git/hooks/pre-commit", "allowed": false},
        {"write": "/r/src/../src/main.c", "allowed": true},
        {"host": "GitHub.com", "verdict": "allow"},
        {"host": "[::1]:8080", "verdict": "deny"},
        {"host": "169.254.169.254:80", "verdict": "ask"}
    ]})");
    REQUIRE(c.expect.size() == 6);
    CHECK(c.expect[0].subject == Expectation::Subject::read);
    CHECK(c.expect[0].path == "/home/u/.aws/credentials");
    CHECK_FALSE(c.expect[0].allowed);
    CHECK(c.expect[0].why == "cloud keys");
    CHECK(c.expect[0].key == "expect[0]");
    CHECK(c.expect[0].line == 2);
    CHECK(c.expect[1].path == "/r/.git/hooks/pre-commit");
    CHECK(c.expect[2].path == "/r/src/main.c");
    CHECK(c.expect[2].allowed);
    CHECK(c.expect[3].target.host == "github.com");
    CHECK(c.expect[3].target.port == 443);
    CHECK(c.expect[3].verdict == Verdict::allow);
    CHECK(c.expect[4].target.host == "::1");
    CHECK(c.expect[4].target.port == 8080);
    CHECK(c.expect[5].verdict == Verdict::ask);
    CHECK(c.expect[5].line == 7);
}

TEST_CASE("parse_check_file: every refusal names the key and its line") {
    struct Case {
        std::string_view text, key, message;
        std::size_t line;
    };
    const Case cases[] = {
        {"[]", "", "expected an object", 0},
        {R"({"expect": [], "extra": 1})", "extra", "unknown key", 1},
        {R"({"expect": []})", "expect", "would check nothing", 1},
        {R"({"expect": {}})", "expect", "expected an array", 1},
        {"{}", "", "no 'expect'", 0},
        {"{\"expect\": [\n  {\"read\": \"a\", \"allowed\": \"no\"}]}", "expect[0].allowed", "a boolean", 2},
        {"{\"expect\": [\n  {\"read\": \"a\", \"allowed\": true},\n  {\"read\": \"b\", \"write\": \"c\"}]}", "expect[1].write",
         "one subject", 3},
        {R"({"expect": [{"allowed": true}]})", "expect[0]", "names no subject", 1},
        {R"({"expect": [{"read": "a"}]})", "expect[0]", "no 'allowed'", 1},
        {R"({"expect": [{"read": "a", "verdict": "allow"}]})", "expect[0].verdict", "not 'verdict'", 1},
        {R"({"expect": [{"host": "a", "allowed": true}]})", "expect[0].allowed", "not 'allowed'", 1},
        {R"({"expect": [{"host": "a"}]})", "expect[0]", "no 'verdict'", 1},
        {R"({"expect": [{"host": "a", "verdict": "open"}]})", "expect[0].verdict", "got \"open\"", 1},
        {R"({"expect": [{"host": "https://a", "verdict": "deny"}]})", "expect[0].host", "not a URL", 1},
        {R"({"expect": [{"host": "a:0", "verdict": "deny"}]})", "expect[0].host", "names no host", 1},
        {R"({"expect": [{"read": "~bob/x", "allowed": true}]})", "expect[0].read", "~user", 1},
        {R"({"expect": [{"read": "", "allowed": true}]})", "expect[0].read", "an empty string", 1},
        {R"({"expect": [{"read": "a\u0001", "allowed": true}]})", "expect[0].read", "control character", 1},
        {R"({"expect": [{"read": "a", "allowed": true, "allowed": false}]})", "expect[0].allowed", "twice", 1},
        {R"({"expect": [{"read": "a", "allowed": true, "colour": 1}]})", "expect[0].colour", "unknown key", 1},
        {R"({"expect": [{"read": "a", "allowed": true, "why": 3}]})", "expect[0].why", "a string", 1},
        {R"({"expect": ["a"]})", "expect[0]", "an object", 1},
        {R"({"expect": [{"command": "ls"}]})", "expect[0]", "an 'approval', a 'where', or both", 1},
        {R"({"expect": [{"command": "ls", "approval": "maybe"}]})", "expect[0].approval", "got \"maybe\"", 1},
        {R"({"expect": [{"command": "ls", "where": "elsewhere"}]})", "expect[0].where", "got \"elsewhere\"", 1},
        {R"({"expect": [{"command": "ls", "where": "inside", "mode": "yolo"}]})", "expect[0].mode", "unknown mode", 1},
        {R"({"expect": [{"command": "ls", "allowed": true}]})", "expect[0].allowed", "not 'allowed'", 1},
        {R"({"expect": [{"read": "a", "allowed": true, "approval": "ask"}]})", "expect[0].approval", "a command's", 1},
        {R"({"expect": [{"command": "", "approval": "ask"}]})", "expect[0].command", "an empty string", 1},
    };
    for (const auto& c : cases) {
        CAPTURE(c.text);
        const auto e = check_error(c.text);
        CHECK(e.key == c.key);
        CHECK(e.line == c.line);
        CHECK_MESSAGE(e.message.find(c.message) != std::string::npos, e.message);
    }
    // Malformed JSON: the line and column of the first wrong byte.
    const auto e = check_error("{\"expect\": [\n  {\"read\": \"a\",}\n]}");
    CHECK(e.line == 2);
    CHECK(e.message.find("trailing comma") != std::string::npos);
}

TEST_CASE("run_checks: each expectation decided with the rule behind it, holding or not") {
    const auto fs = project_fs();
    const auto policy = project_policy(R"({"sandbox": {
        "filesystem": {"denyRead": ["secrets"]},
        "network": {"allowedDomains": ["github.com"], "deniedDomains": ["bad.example"]}}})", fs);
    const auto rules = rules_of(policy, fs);
    const auto check = check_of(R"({"expect": [
        {"read": "~/.aws/credentials", "allowed": false},
        {"write": ".git/hooks/pre-commit", "allowed": false},
        {"write": "src/main.c", "allowed": true},
        {"read": "secrets/key", "allowed": true},
        {"host": "github.com", "verdict": "allow"},
        {"host": "169.254.169.254:80", "verdict": "deny"},
        {"host": "bad.example", "verdict": "deny"},
        {"host": "unknown.example", "verdict": "deny"}
    ]})");
    const sbx::review::RouteContext routes{policy, sbx::route::Place{"/r", "/home/u", "/r", false}};
    auto out = sbx::review::run_checks(check, rules.fs.rules, rules.hosts, {}, routes, fs);
    REQUIRE(out.has_value());
    REQUIRE(out->size() == 8);
    const auto& o = *out;
    CHECK(o[0].holds);
    REQUIRE(o[0].path);
    CHECK(o[0].path->decision.rule->list == "credential store");
    CHECK(o[1].holds);
    CHECK(o[1].path->decision.because == sbx::FsDecision::Because::protected_path);
    CHECK(o[2].holds);
    CHECK(o[2].path->decision.because == sbx::FsDecision::Because::writable_root);
    // The file expects wrong: the outcome says so and names the deny.
    CHECK_FALSE(o[3].holds);
    CHECK(o[3].path->decision.rule->source->key == "sandbox.filesystem.denyRead[0]");
    CHECK(o[4].holds);
    REQUIRE(o[4].host);
    CHECK(o[4].host->rule->source->key == "sandbox.network.allowedDomains[0]");
    CHECK(o[5].holds);
    CHECK(o[5].host->step == sbx::net::HostDecision::Step::local_address);
    CHECK(o[6].holds);
    CHECK(o[6].host->step == sbx::net::HostDecision::Step::denied_list);
    // `sbx run` asks about a host no rule names.
    CHECK_FALSE(o[7].holds);
    CHECK(o[7].host->verdict == Verdict::ask);
}

TEST_CASE("check file: a command may span lines (a here-document); a path or a host may not") {
    const auto c = check_of(R"({"expect": [{"command": "cat <<EOF\nx\nEOF", "approval": "auto"}]})");
    CHECK(c.expect[0].text == "cat <<EOF\nx\nEOF");
    auto bad = sbx::review::parse_check_file(R"({"expect": [{"read": "a\nb", "allowed": true}]})", "c.json",
                                             sbx::paths::Base{"/home/u", "/r"});
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().message.find("control character") != std::string::npos);
}

TEST_CASE("run_checks: a command expectation is routed, in its mode, and holds on each part it names") {
    const auto fs = project_fs();
    const auto policy = project_policy(R"J({"sandbox": {"enabled": true, "excludedCommands": ["docker *"]},
        "permissions": {"ask": ["Bash(git push *)"], "deny": ["Bash(curl:*)"]}})J", fs);
    const auto rules = rules_of(policy, fs);
    const auto check = check_of(R"({"expect": [
        {"command": "git push origin main", "approval": "ask"},
        {"command": "npm test", "approval": "auto", "where": "inside"},
        {"command": "docker ps", "where": "outside"},
        {"command": "docker ps", "where": "excluded", "approval": "normal"},
        {"command": "rm -rf ~", "approval": "deny", "mode": "dontAsk"},
        {"command": "curl https://example.com", "approval": "ask"},
        {"command": "npm test", "where": "outside"}
    ]})");
    CHECK(check.expect[4].mode == sbx::PermissionMode::dont_ask);
    const sbx::review::RouteContext routes{policy, sbx::route::Place{"/r", "/home/u", "/r", false}};
    auto out = sbx::review::run_checks(check, rules.fs.rules, rules.hosts, {}, routes, fs);
    REQUIRE(out.has_value());
    const auto& o = *out;
    REQUIRE(o.size() == 7);
    for (std::size_t i = 0; i < 5; ++i) {
        CAPTURE(i);
        CHECK(o[i].holds);
        REQUIRE(o[i].route);
    }
    CHECK(o[0].route->approval_because.source->key == "permissions.ask[0]");
    // Expected wrong: the outcome says so, with the route that decided.
    CHECK_FALSE(o[5].holds);
    CHECK(o[5].route->approval == sbx::route::Approval::deny);
    CHECK_FALSE(o[6].holds);
    CHECK(o[6].route->where == sbx::route::Where::inside);
}

TEST_CASE("diff_values: switches and entries, which way each opens, provenance on both sides") {
    sbx::MemoryFs fs;
    const auto before = project_policy(R"({"sandbox": {
        "filesystem": {"denyRead": ["secrets", "~/.aws"], "allowWrite": ["/opt/out"]},
        "network": {"allowedDomains": ["github.com"]}}})", fs);
    const auto after = project_policy(R"({"sandbox": {
        "filesystem": {"allowWrite": ["/opt/out"], "denyWrite": ["src/gen"]},
        "network": {"allowedDomains": ["github.com", "evil.example"], "allowLocalBinding": true}}})", fs);
    const auto changes = sbx::review::diff_values(before, after);
    auto find = [&](std::string_view name, std::string_view value) -> const sbx::review::ValueChange* {
        for (const auto& c : changes)
            if (c.name == name && (c.before == value || c.after == value)) return &c;
        return nullptr;
    };
    using W = sbx::review::ValueChange::What;
    const auto* local = find("network.allowLocalBinding", "true");
    REQUIRE(local);
    CHECK(local->what == W::changed);
    CHECK(local->direction == Direction::widens);
    CHECK_FALSE(local->before_source.has_value());
    CHECK(local->after_source->key == "sandbox.network.allowLocalBinding");
    const auto* secrets = find("filesystem.denyRead", "/r/secrets");
    REQUIRE(secrets);
    CHECK(secrets->what == W::removed);
    CHECK(secrets->direction == Direction::widens);
    CHECK(secrets->before_source->key == "sandbox.filesystem.denyRead[0]");
    // The built-in list still hides ~/.aws: its removal from the project opens nothing.
    const auto* aws = find("filesystem.denyRead", "/home/u/.aws");
    REQUIRE(aws);
    CHECK(aws->direction == Direction::neither);
    CHECK(aws->meaning.find("builtin") != std::string::npos);
    const auto* gen = find("filesystem.denyWrite", "/r/src/gen");
    REQUIRE(gen);
    CHECK(gen->what == W::added);
    CHECK(gen->direction == Direction::narrows);
    const auto* evil = find("network.allowedDomains", "evil.example");
    REQUIRE(evil);
    CHECK(evil->direction == Direction::widens);
    CHECK(evil->after_source->key == "sandbox.network.allowedDomains[1]");
    CHECK_FALSE(find("filesystem.allowWrite", "/opt/out"));
    CHECK(changes.size() == 5);
    CHECK(sbx::review::diff_values(after, after).empty());
}

TEST_CASE("diff_values: a limit lowered or set narrows; raised or removed widens; its unit said") {
    sbx::MemoryFs fs;
    const auto none = project_policy(R"({})", fs);
    const auto short_timeout = project_policy(R"({"sandbox": {"limits": {"timeoutSeconds": 60, "processes": 100}}})", fs);
    const auto set = sbx::review::diff_values(none, short_timeout);
    REQUIRE(set.size() == 2);
    CHECK(set[0].name == "limits.timeoutSeconds");
    CHECK(set[0].before == "none");
    CHECK(set[0].after == "60s");
    CHECK(set[0].direction == Direction::narrows);
    CHECK(set[1].name == "limits.processes");
    CHECK(set[1].before == "4096");
    CHECK(set[1].after == "100");
    CHECK(set[1].direction == Direction::narrows);
    const auto back = sbx::review::diff_values(short_timeout, none);
    REQUIRE(back.size() == 2);
    CHECK(back[0].after == "none");
    CHECK(back[0].direction == Direction::widens);
    CHECK(back[1].direction == Direction::widens);
}

TEST_CASE("sample_path: one path each pattern matches") {
    using sbx::review::detail::sample_path;
    CHECK(sample_path("/home/u/*/token") == "/home/u/sbx-sample/token");
    CHECK(sample_path("/home/u/**/.env") == "/home/u/.env");
    CHECK(sample_path("/r/*.pem") == "/r/sample.pem");
    CHECK(sample_path("/r/key?") == "/r/keyx");
    CHECK(sample_path("/r/[!a]x") == "/r/bx");
    CHECK(sample_path("/r/[ab]x") == "/r/ax");
    CHECK(sample_path("/r/a\\*b") == "/r/a*b");
    CHECK(sample_path("/r/**") == "/r");
}

TEST_CASE("diff_probes and diff_decisions: what a change opens and closes, with each side's rule") {
    const auto fs = project_fs();
    const auto before = project_policy(R"({"sandbox": {
        "filesystem": {"denyRead": ["secrets"]},
        "network": {"allowedDomains": ["github.com", "*.npmjs.org"]}}})", fs);
    const auto after = project_policy(R"({"sandbox": {
        "filesystem": {"denyWrite": ["src"]},
        "network": {"allowedDomains": ["github.com", "evil.example"], "deniedDomains": ["*.npmjs.org"]}}})", fs);
    const auto rb = rules_of(before, fs);
    const auto ra = rules_of(after, fs);
    const sbx::review::DiffSide b{before, rb.fs.rules, rb.hosts}, a{after, ra.fs.rules, ra.hosts};
    const sbx::review::DiffContext ctx{{"/home/u"}, {}};
    const auto probes = sbx::review::diff_probes(b, a, ctx);
    auto probed = [&](std::string_view what) {
        return std::any_of(probes.begin(), probes.end(), [&](const sbx::review::Probe& p) {
            return p.kind == sbx::review::Probe::Kind::path ? p.path == what : sbx::net::to_string(p.target) == what;
        });
    };
    CHECK(probed("/r/secrets"));
    CHECK(probed("/r/src"));
    CHECK(probed("/home/u/.aws"));          // a built-in credential store
    CHECK(probed("/r/.git/hooks"));         // a protected path
    CHECK(probed("169.254.169.254:80"));    // a metadata address
    CHECK(probed("[fd00:ec2::254]:80"));
    CHECK(probed("localhost:443"));
    CHECK(probed("sbx-sample.npmjs.org:443"));
    CHECK(probed("evil.example:443"));
    CHECK(probed("unlisted.example:443"));  // what the policy does with hosts no list names

    auto changes = sbx::review::diff_decisions(b, a, probes, ctx, fs);
    REQUIRE(changes.has_value());
    using A = sbx::review::DecisionChange::Aspect;
    auto find = [&](std::string_view subject, A aspect) -> const sbx::review::DecisionChange* {
        for (const auto& c : *changes) {
            const auto s = c.probe.kind == sbx::review::Probe::Kind::path ? c.probe.path : sbx::net::to_string(c.probe.target);
            if (s == subject && c.aspect == aspect) return &c;
        }
        return nullptr;
    };
    const auto* read = find("/r/secrets", A::read);
    REQUIRE(read);
    CHECK(read->before == "denied");
    CHECK(read->after == "allowed");
    CHECK(read->direction == Direction::widens);
    CHECK(read->change == "became readable");
    CHECK(read->before_why.find("sandbox.filesystem.denyRead[0]") != std::string::npos);
    const auto* write = find("/r/src", A::write);
    REQUIRE(write);
    CHECK(write->direction == Direction::narrows);
    CHECK(write->change == "stopped being writable");
    CHECK(write->after_why.find("sandbox.filesystem.denyWrite[0]") != std::string::npos);
    const auto* evil = find("evil.example:443", A::reach);
    REQUIRE(evil);
    CHECK(evil->before == "ask");
    CHECK(evil->after == "allow");
    CHECK(evil->direction == Direction::widens);
    CHECK(evil->change == "became reachable");
    const auto* npm = find("sbx-sample.npmjs.org:443", A::reach);
    REQUIRE(npm);
    CHECK(npm->after == "deny");
    CHECK(npm->direction == Direction::narrows);
    CHECK(npm->change == "stopped being reachable");
    // Unchanged: not reported.
    CHECK_FALSE(find("github.com:443", A::reach));
    CHECK_FALSE(find("/home/u/.aws", A::read));
    CHECK_FALSE(find("169.254.169.254:80", A::reach));
    // The same policy on both sides changes nothing.
    auto none = sbx::review::diff_decisions(a, a, probes, ctx, fs);
    REQUIRE(none.has_value());
    CHECK(none->empty());
}

TEST_CASE("diff_decisions: a path the FsView cannot look at is decided as named, not an error") {
    auto fs = project_fs();
    fs.unreadable("/r/secrets");
    const auto before = project_policy(R"({"sandbox": {"filesystem": {"denyRead": ["secrets/key"]}}})", fs);
    const auto after = project_policy(R"({"sandbox": {}})", fs);
    const auto rb = rules_of(before, fs);
    const auto ra = rules_of(after, fs);
    const sbx::review::DiffSide b{before, rb.fs.rules, rb.hosts}, a{after, ra.fs.rules, ra.hosts};
    const sbx::review::DiffContext ctx{{"/home/u"}, {}};
    REQUIRE_FALSE(sbx::resolve(fs, "/r/secrets/key").has_value());
    auto changes = sbx::review::diff_decisions(b, a, sbx::review::diff_probes(b, a, ctx), ctx, fs);
    REQUIRE_MESSAGE(changes.has_value(), (changes ? std::string() : sbx::to_string(changes.error())));
    const bool found = std::any_of(changes->begin(), changes->end(), [](const sbx::review::DecisionChange& c) {
        return c.probe.path == "/r/secrets/key" && c.aspect == sbx::review::DecisionChange::Aspect::read &&
               c.direction == Direction::widens;
    });
    CHECK(found);
}
