// Host patterns, decide_host's order, and which resolved address may be dialed:
// tables, one row a case.
#include "sbx/net/hosts.hpp"
#include "sbx/net/hosts_file.hpp"
#include "sbx/rules/network.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "sbx/settings/settings.hpp"

namespace {

using sbx::net::HostCall;
using sbx::net::HostDecision;
using sbx::net::HostPattern;
using sbx::net::HostRule;
using sbx::net::HostRules;
using sbx::net::UnknownHost;
using Kind = HostPattern::Kind;
using Verdict = HostDecision::Verdict;
using Step = HostDecision::Step;

sbx::net::HostTarget target(std::string_view host, std::uint16_t port) {
    auto t = sbx::net::canonical_target(host, port);
    REQUIRE_MESSAGE(t.has_value(), (t ? std::string() : sbx::to_string(t.error())));
    return *t;
}

HostRule rule(std::string_view text, std::string list = "network.allowedDomains") {
    auto p = sbx::net::parse_host_pattern(text);
    REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
    return HostRule{*p, std::string(text), std::move(list), std::nullopt};
}

// A host and port, and the verdict and step decide_host gives them.
struct DecisionRow {
    std::string_view host;
    std::uint16_t port;
    Verdict verdict;
    Step step;
};

sbx::net::Address addr(std::string_view text) {
    auto t = sbx::net::canonical_target(text, 1);
    REQUIRE(t.has_value());
    REQUIRE(t->address.has_value());
    return *t->address;
}

}  // namespace

TEST_CASE("host patterns: the forms settings may use, normalised") {
    struct Row {
        std::string_view text;
        Kind kind;
        std::string_view host;
        std::optional<std::uint16_t> port;
    };
    const Row rows[] = {
        {"github.com", Kind::name, "github.com", std::nullopt},
        {"GitHub.COM", Kind::name, "github.com", std::nullopt},
        {"github.com.", Kind::name, "github.com", std::nullopt},
        {"github.com:443", Kind::name, "github.com", 443},
        {"registry-1.docker.io", Kind::name, "registry-1.docker.io", std::nullopt},
        {"under_score.example.com", Kind::name, "under_score.example.com", std::nullopt},
        {"xn--nxasmq6b.example", Kind::name, "xn--nxasmq6b.example", std::nullopt},
        {"localhost", Kind::name, "localhost", std::nullopt},
        {"localhost:3000", Kind::name, "localhost", 3000},
        {"*.example.com", Kind::subdomains, "example.com", std::nullopt},
        {"*.Example.COM:8080", Kind::subdomains, "example.com", 8080},
        {"*", Kind::any, "", std::nullopt},
        {"*:443", Kind::any, "", 443},
        {"127.0.0.1", Kind::address, "127.0.0.1", std::nullopt},
        {"127.0.0.1:3000", Kind::address, "127.0.0.1", 3000},
        {"0.0.0.0", Kind::address, "0.0.0.0", std::nullopt},
        {"[::1]", Kind::address, "::1", std::nullopt},
        {"[::1]:8080", Kind::address, "::1", 8080},
        {"[2001:DB8::1]", Kind::address, "2001:db8::1", std::nullopt},
        {"[::ffff:127.0.0.1]:5432", Kind::address, "127.0.0.1", 5432},
        {"example.com:65535", Kind::name, "example.com", 65535},
        {"example.com:1", Kind::name, "example.com", 1},
    };
    for (const auto& r : rows) {
        CAPTURE(r.text);
        auto p = sbx::net::parse_host_pattern(r.text);
        REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
        CHECK(p->kind == r.kind);
        CHECK(p->host == r.host);
        CHECK(p->port == r.port);
        CHECK(p->address.has_value() == (r.kind == Kind::address));
    }
}

TEST_CASE("host patterns: anything else is refused, saying why") {
    struct Row {
        std::string_view text;
        std::string_view why;
    };
    const Row rows[] = {
        {"https://github.com", "not a URL"},
        {"http://github.com/", "not a URL"},
        {"github.com/org/repo", "'/'"},
        {"10.0.0.0/8", "CIDR"},
        {"::1", "brackets"},
        {"fe80::1", "brackets"},
        {"[::1", "']'"},
        {"[::1]x", "':PORT'"},
        {"[not-v6]", "IPv6"},
        {"[fe80::1%eth0]", "IPv6"},
        {"a.*.com", "first label"},
        {"*example.com", "first label"},
        {"**.example.com", "first label"},
        {"*.", "empty"},
        {"*.*", "character '*'"},
        {"", "empty"},
        {".", "empty"},
        {"a..b", "empty label"},
        {" github.com", "space"},
        {"git hub.com", "space"},
        {"github.com\n", "control"},
        {std::string_view("git\0hub.com", 10), "control"},
        {"github.com:0", "port"},
        {"github.com:65536", "port"},
        {"github.com:08", "port"},
        {"github.com:", "port"},
        {"github.com:http", "port"},
        {"github.com:-1", "port"},
        {"127.1", "ends in a number"},
        {"2852039166", "ends in a number"},
        {"0x7f.0.0.1", "ends in a number"},
        {"1.2.3.4.5", "ends in a number"},
        {"256.1.1.1", "ends in a number"},
        {"-github.com", "'-'"},
        {"github-.com", "'-'"},
        {"github.com;", "character ';'"},
        {"user@github.com", "character '@'"},
        {"\xc3\xbcnicode.com", "non-ASCII"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.text);
        auto p = sbx::net::parse_host_pattern(r.text);
        REQUIRE_FALSE(p.has_value());
        CHECK(p.error().code == sbx::Errc::invalid_settings);
        CHECK_MESSAGE(p.error().message.find(r.why) != std::string::npos, p.error().message);
    }
    CHECK_FALSE(sbx::net::parse_host_pattern(std::string(64, 'a') + ".com").has_value());
    CHECK(sbx::net::parse_host_pattern(std::string(63, 'a') + ".com").has_value());
    std::string long_name;
    while (long_name.size() < 251) long_name += "abcdefghi.";
    long_name += "com";
    CHECK_FALSE(sbx::net::parse_host_pattern(long_name).has_value());
}

TEST_CASE("call_host_rule: a call's own host is a rule of the call's list, or the pattern's error") {
    auto r = sbx::net::call_host_rule("*.example.com:8443");
    REQUIRE(r.has_value());
    CHECK(r->text == "*.example.com:8443");
    CHECK(r->list == sbx::net::kCallHosts);
    CHECK_FALSE(r->source.has_value());
    CHECK(r->pattern.port == 8443);
    auto bad = sbx::net::call_host_rule("github.com/org");
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().code == sbx::Errc::invalid_settings);
    CHECK(bad.error().message.find("'/'") != std::string::npos);
}

TEST_CASE("what a client asks for is normalised before any rule sees it") {
    struct Row {
        std::string_view host;
        std::string_view canonical;
        bool address;
    };
    const Row rows[] = {
        {"EXAMPLE.com.", "example.com", false},
        {"2852039166", "169.254.169.254", true},
        {"0xa9.0xfe.0xa9.0xfe", "169.254.169.254", true},
        {"0251.0376.0251.0376", "169.254.169.254", true},
        {"169.16689662", "169.254.169.254", true},
        {"0xA9FEA9FE", "169.254.169.254", true},
        {"127.1", "127.0.0.1", true},
        {"[::ffff:169.254.169.254]", "169.254.169.254", true},
        {"::ffff:7f00:1", "127.0.0.1", true},
        {"[::1]", "::1", true},
        {"[0:0:0:0:0:0:0:1]", "::1", true},
    };
    for (const auto& r : rows) {
        CAPTURE(r.host);
        auto t = target(r.host, 80);
        CHECK(t.host == r.canonical);
        CHECK(t.address.has_value() == r.address);
    }
    for (std::string_view bad : {"", "bad host", "a..b", "[::1", "[zz::1]", "exa\x01mple.com", "-x.com"}) {
        CAPTURE(bad);
        CHECK_FALSE(sbx::net::canonical_target(bad, 80).has_value());
    }
    CHECK_FALSE(sbx::net::canonical_target("example.com", 0).has_value());
}

// Found by tests/fuzz/host_pattern_fuzz: "0XBB003." was the name 0xbb003, whose
// canonical text read back as the address 0.11.176.3. With the dot gone a number
// is an address, and meets the rules as one.
TEST_CASE("a numeric host with a trailing dot is the address it spells") {
    for (std::string_view host : {"0XBB003.", "0xa9fea9fe.", "0x7f.0x1."}) {
        CAPTURE(host);
        auto t = target(host, 80);
        REQUIRE(t.address.has_value());
        auto again = target(t.host, 80);
        CHECK(again.host == t.host);
        CHECK(again.address == t.address);
    }
    CHECK(target("0xa9fea9fe.", 80).host == "169.254.169.254");
    CHECK(target("0XBB003.", 80).host == "0.11.176.3");
}

TEST_CASE("printable_host: canonical host text as it is, every other byte escaped") {
    CHECK(sbx::net::printable_host("evil.example") == "evil.example");
    CHECK(sbx::net::printable_host("2001:db8::1") == "2001:db8::1");
    CHECK(sbx::net::printable_host("a_b-c.9") == "a_b-c.9");
    CHECK(sbx::net::printable_host("\x1b[2Kgood.example") == "\\x1b\\x5b2\\x4bgood.example");
    CHECK(sbx::net::printable_host("A\r\n") == "\\x41\\x0d\\x0a");
    CHECK(sbx::net::printable_host(std::string_view("\0\xff", 2)) == "\\x00\\xff");
}

TEST_CASE("a pattern matches the hosts and ports it names, and no others") {
    struct Row {
        std::string_view pattern, host;
        std::uint16_t port;
        bool match;
    };
    const Row rows[] = {
        // A name: that host only, any case, any port unless one is named.
        {"github.com", "github.com", 443, true},
        {"github.com", "GITHUB.com.", 80, true},
        {"github.com", "api.github.com", 443, false},
        {"github.com", "github.com.evil.net", 443, false},
        {"github.com", "notgithub.com", 443, false},
        {"github.com:443", "github.com", 443, true},
        {"github.com:443", "github.com", 80, false},
        // Subdomains: not the bare domain, not a look-alike, never an address.
        {"*.example.com", "a.example.com", 443, true},
        {"*.example.com", "a.b.example.com", 443, true},
        {"*.example.com", "example.com", 443, false},
        {"*.example.com", "badexample.com", 443, false},
        {"*.example.com", "example.com.evil.net", 443, false},
        {"*.example.com", "93.184.216.34", 443, false},
        {"*.example.com:8443", "a.example.com", 443, false},
        // Every host, as text: names and addresses of every kind (what an allowed
        // `*` reaches is decide_host's; a denied one refuses them all).
        {"*", "anything.example", 443, true},
        {"*", "93.184.216.34", 443, true},
        {"*", "10.1.2.3", 443, true},
        {"*", "[2606:4700::1111]", 443, true},
        {"*", "127.0.0.1", 443, true},
        {"*", "2130706433", 443, true},
        {"*", "[::1]", 443, true},
        {"*", "169.254.169.254", 80, true},
        {"*", "localhost", 80, true},
        {"*", "x.localhost", 80, true},
        {"*:443", "example.com", 80, false},
        // localhost names: a name pattern for localhost, a subdomain one for the rest.
        {"localhost", "LOCALHOST.", 80, true},
        {"localhost", "x.localhost", 80, false},
        {"*.localhost", "X.Localhost.", 80, true},
        {"*.localhost", "localhost", 80, false},
        // An address: that address, in any spelling, on its port.
        {"127.0.0.1:3000", "127.0.0.1", 3000, true},
        {"127.0.0.1:3000", "127.0.0.1", 3001, false},
        {"127.0.0.1:3000", "2130706433", 3000, true},
        {"127.0.0.1:3000", "[::ffff:127.0.0.1]", 3000, true},
        {"127.0.0.1:3000", "localhost", 3000, false},
        {"[::1]", "[0::1]", 80, true},
        {"[::1]", "127.0.0.1", 80, false},
        {"169.254.169.254", "0251.0376.0251.0376", 80, true},
    };
    for (const auto& r : rows) {
        CAPTURE(r.pattern);
        CAPTURE(r.host);
        CAPTURE(r.port);
        CHECK(sbx::net::matches(rule(r.pattern).pattern, target(r.host, r.port)) == r.match);
    }
}

// Over 80 lines: a table, one row a case, and the loop that checks each.
TEST_CASE("decide_host: the reference's five steps, in order, each naming its rule") {
    struct Row {
        std::string_view name;
        std::vector<std::string_view> allowed, denied;
        bool strict;
        std::optional<UnknownHost> sandbox_unknown;
        std::optional<std::vector<std::string_view>> call_hosts;
        std::optional<UnknownHost> call_unknown;
        std::string_view host;
        std::uint16_t port;
        Verdict verdict;
        Step step;
        std::string_view rule;  // the pattern of the deciding rule; empty: none
    };
    using U = UnknownHost;
    const std::vector<Row> rows = {
        {"a deny refuses what an allow lets through", {"*"}, {"*.evil.com"}, false, std::nullopt, std::nullopt,
         std::nullopt, "a.evil.com", 443, Verdict::deny, Step::denied_list, "*.evil.com"},
        {"a deny refuses what the call lists", {}, {"evil.com"}, false, std::nullopt,
         std::vector<std::string_view>{"evil.com"}, std::nullopt, "evil.com", 443, Verdict::deny, Step::denied_list,
         "evil.com"},
        {"a deny refuses whatever the deciders say", {}, {"evil.com"}, false, U::allow, std::nullopt, U::allow,
         "evil.com", 443, Verdict::deny, Step::denied_list, "evil.com"},
        {"a deny of one port leaves the others", {"evil.com"}, {"evil.com:25"}, false, std::nullopt, std::nullopt,
         std::nullopt, "evil.com", 443, Verdict::allow, Step::allowed_list, "evil.com"},
        {"a deny in another spelling of the address", {"*"}, {"169.254.169.254"}, false, U::allow, std::nullopt,
         std::nullopt, "2852039166", 80, Verdict::deny, Step::denied_list, "169.254.169.254"},
        {"an allow lets it through", {"github.com"}, {}, false, std::nullopt, std::nullopt, std::nullopt,
         "github.com", 443, Verdict::allow, Step::allowed_list, "github.com"},
        {"an allow beats strict", {"github.com"}, {}, true, std::nullopt, std::nullopt, std::nullopt, "github.com",
         443, Verdict::allow, Step::allowed_list, "github.com"},
        {"an allow lets through a host the call does not list", {"github.com"}, {}, false, std::nullopt,
         std::vector<std::string_view>{"pypi.org"}, std::nullopt, "github.com", 443, Verdict::allow,
         Step::allowed_list, "github.com"},
        {"the call's list lets it through", {}, {}, false, std::nullopt, std::vector<std::string_view>{"*.pypi.org"},
         std::nullopt, "files.pypi.org", 443, Verdict::allow, Step::call_list, "*.pypi.org"},
        {"the call's list lets it through even when strict", {}, {}, true, std::nullopt,
         std::vector<std::string_view>{"pypi.org"}, std::nullopt, "pypi.org", 443, Verdict::allow, Step::call_list,
         "pypi.org"},
        {"with a list of its own, the call's other hosts are refused without asking", {}, {}, false, U::ask,
         std::vector<std::string_view>{"pypi.org"}, U::allow, "example.com", 443, Verdict::deny, Step::not_in_call,
         ""},
        {"an empty list of the call's allows nothing", {}, {}, false, U::allow, std::vector<std::string_view>{},
         std::nullopt, "example.com", 443, Verdict::deny, Step::not_in_call, ""},
        {"strict refuses what no list names", {}, {}, true, U::allow, std::nullopt, U::allow, "example.com", 443,
         Verdict::deny, Step::strict, ""},
        {"the call's decider", {}, {}, false, U::deny, std::nullopt, U::allow, "example.com", 443, Verdict::allow,
         Step::call_decider, ""},
        {"the call's decider may ask", {}, {}, false, std::nullopt, std::nullopt, U::ask, "example.com", 443,
         Verdict::ask, Step::call_decider, ""},
        {"the call's decider may refuse", {}, {}, false, U::allow, std::nullopt, U::deny, "example.com", 443,
         Verdict::deny, Step::call_decider, ""},
        {"the sandbox's decider", {}, {}, false, U::ask, std::nullopt, std::nullopt, "example.com", 443, Verdict::ask,
         Step::sandbox_decider, ""},
        {"nothing decides: refused", {}, {}, false, std::nullopt, std::nullopt, std::nullopt, "example.com", 443,
         Verdict::deny, Step::nothing_decides, ""},
        {"an empty allow list allows nothing", {}, {}, false, std::nullopt, std::nullopt, std::nullopt, "github.com",
         443, Verdict::deny, Step::nothing_decides, ""},
        {"the bare domain is not one of its subdomains", {"*.example.com"}, {}, false, std::nullopt, std::nullopt,
         std::nullopt, "example.com", 443, Verdict::deny, Step::nothing_decides, ""},
        {"`*` reaches no metadata address", {"*"}, {}, false, std::nullopt, std::nullopt, std::nullopt,
         "0xa9.0xfe.0xa9.0xfe", 80, Verdict::deny, Step::local_address, ""},
        {"an address pattern reaches a local server", {"127.0.0.1:3000"}, {}, false, std::nullopt, std::nullopt,
         std::nullopt, "127.0.0.1", 3000, Verdict::allow, Step::allowed_list, "127.0.0.1:3000"},
        {"on its port only", {"127.0.0.1:3000"}, {}, false, std::nullopt, std::nullopt, std::nullopt, "127.0.0.1",
         22, Verdict::deny, Step::local_address, ""},
        {"no decider opens a local address", {}, {}, false, U::allow, std::nullopt, U::allow, "2852039166", 80,
         Verdict::deny, Step::local_address, ""},
        {"no question is asked about a local address", {}, {}, false, U::ask, std::nullopt, std::nullopt, "[::1]", 80,
         Verdict::deny, Step::local_address, ""},
        {"a call's `*` does not reach a local address either, and says so", {}, {}, false, std::nullopt,
         std::vector<std::string_view>{"*"}, std::nullopt, "169.254.169.254", 80, Verdict::deny, Step::local_address,
         ""},
        {"the rule that reaches widest names the decision: an exact name over a wildcard", {"*.github.com", "api.github.com"}, {}, false,
         std::nullopt, std::nullopt, std::nullopt, "api.github.com", 443, Verdict::allow, Step::allowed_list,
         "api.github.com"},
        {"among rules that reach alike, the first names the decision", {"*.github.com", "*"}, {}, false,
         std::nullopt, std::nullopt, std::nullopt, "api.github.com", 443, Verdict::allow, Step::allowed_list,
         "*.github.com"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.name);
        HostRules rules;
        for (auto t : r.allowed) rules.allowed.push_back(rule(t, "network.allowedDomains"));
        for (auto t : r.denied) rules.denied.push_back(rule(t, "network.deniedDomains"));
        rules.strict = r.strict;
        rules.on_unknown = r.sandbox_unknown;
        HostCall call;
        if (r.call_hosts) {
            call.hosts.emplace();
            for (auto t : *r.call_hosts) call.hosts->push_back(rule(t, "the call's hosts"));
        }
        call.on_unknown = r.call_unknown;
        const auto d = sbx::net::decide_host(rules, call, target(r.host, r.port), {});
        CHECK(d.verdict == r.verdict);
        CHECK(d.step == r.step);
        CHECK((d.rule ? d.rule->text : std::string_view()) == r.rule);
        CHECK_FALSE(d.why.empty());
        if (d.rule) CHECK_MESSAGE(d.why.find(d.rule->text) != std::string::npos, d.why);
    }
}

TEST_CASE("decide_host: allowLocalBinding opens loopback, on every port, and nothing else") {
    HostRules rules;
    rules.local = true;
    rules.local_source = sbx::Source{sbx::LayerKind::user, sbx::FileName("/home/u/.claude/settings.json"),
                                     "sandbox.network.allowLocalBinding"};
    const DecisionRow rows[] = {
        {"localhost", 3000, Verdict::allow, Step::local_binding},
        {"LocalHost.", 1, Verdict::allow, Step::local_binding},
        {"app.localhost", 8080, Verdict::allow, Step::local_binding},
        {"127.0.0.1", 5432, Verdict::allow, Step::local_binding},
        {"127.9.8.7", 22, Verdict::allow, Step::local_binding},
        {"2130706433", 80, Verdict::allow, Step::local_binding},       // 127.0.0.1 spelled as a number
        {"[::1]", 6379, Verdict::allow, Step::local_binding},
        {"[::ffff:127.0.0.1]", 80, Verdict::allow, Step::local_binding},
        // Not loopback: the switch opens none of these.
        {"0.0.0.0", 80, Verdict::deny, Step::local_address},
        {"169.254.169.254", 80, Verdict::deny, Step::local_address},
        {"0xa9.0xfe.0xa9.0xfe", 80, Verdict::deny, Step::local_address},
        {"[fe80::1]", 80, Verdict::deny, Step::local_address},
        {"10.0.0.1", 80, Verdict::deny, Step::local_address},
        {"localhost.evil.example", 80, Verdict::deny, Step::nothing_decides},
        {"example.com", 443, Verdict::deny, Step::nothing_decides},
    };
    for (const auto& r : rows) {
        CAPTURE(r.host);
        const auto d = sbx::net::decide_host(rules, {}, target(r.host, r.port), {});
        CHECK(d.verdict == r.verdict);
        CHECK(d.step == r.step);
        if (d.step == Step::local_binding)
            CHECK_MESSAGE(d.why.find("sandbox.network.allowLocalBinding") != std::string::npos, d.why);
    }
    // A deny still beats it; a call's own list does not close it (it is the
    // sandbox's switch, like its allow list).
    rules.denied.push_back(rule("localhost:6379", "network.deniedDomains"));
    CHECK(sbx::net::decide_host(rules, {}, target("localhost", 6379), {}).step == Step::denied_list);
    HostCall call;
    call.hosts.emplace();
    call.hosts->push_back(rule("pypi.org", "the call's hosts"));
    CHECK(sbx::net::decide_host(rules, call, target("127.0.0.1", 3000), {}).verdict == Verdict::allow);
    CHECK(sbx::net::decide_host(rules, call, target("example.com", 443), {}).step == Step::not_in_call);
    // Without the switch, loopback stays closed to every decider.
    rules.local = false;
    rules.on_unknown = UnknownHost::allow;
    CHECK(sbx::net::decide_host(rules, {}, target("127.0.0.1", 3000), {}).step == Step::local_address);

    // The policy's switch becomes the rules', with its settings entry.
    sbx::Policy policy;
    policy.network.allow_local_binding = {true, rules.local_source};
    auto compiled = sbx::net::compile_host_rules(policy);
    REQUIRE(compiled.has_value());
    CHECK(compiled->local);
    REQUIRE(compiled->local_source.has_value());
    CHECK(compiled->local_source->key == "sandbox.network.allowLocalBinding");
}

TEST_CASE("decide_host's reasons read as the violation block prints them") {
    HostRules rules;
    const auto nothing = sbx::net::decide_host(rules, {}, target("example.com", 443), {});
    CHECK(nothing.why == "not on the allow list, and nothing decides other hosts");
    rules.denied.push_back(rule("*.evil.com", "network.deniedDomains"));
    const auto denied = sbx::net::decide_host(rules, {}, target("x.evil.com", 443), {});
    CHECK(denied.why == "denied by network.deniedDomains *.evil.com");
}

TEST_CASE("host rules come from the policy, with their settings entries") {
    sbx::SettingsSource src{sbx::LayerKind::project, "/r/.claude/settings.json", {"/home/u", "/r"}, "/r"};
    auto s = sbx::parse_settings(
        R"({"sandbox": {"network": {"allowedDomains": ["github.com", "*.npmjs.org"], "deniedDomains": ["evil.com"]}}})", src);
    REQUIRE_MESSAGE(s.has_value(), (s ? std::string() : sbx::to_string(s.error())));
    std::vector<sbx::Settings> layers;
    layers.push_back(std::move(*s));
    sbx::MemoryFs fs;
    auto policy = sbx::merge(std::move(layers), sbx::MergeOptions{true}, fs);
    REQUIRE(policy.has_value());
    auto rules = sbx::net::compile_host_rules(*policy);
    REQUIRE_MESSAGE(rules.has_value(), (rules ? std::string() : sbx::to_string(rules.error())));
    REQUIRE(rules->allowed.size() == 2);
    REQUIRE(rules->denied.size() == 1);
    CHECK_FALSE(rules->strict);
    const auto d = sbx::net::decide_host(*rules, {}, target("registry.npmjs.org", 443), {});
    CHECK(d.verdict == Verdict::allow);
    REQUIRE(d.rule != nullptr);
    REQUIRE(d.rule->source.has_value());
    CHECK(d.rule->source->key == "sandbox.network.allowedDomains[1]");
    CHECK(d.why.find("/r/.claude/settings.json") != std::string::npos);

    // A policy made by hand with a bad entry: refused, naming the entry.
    sbx::Policy by_hand;
    by_hand.network.allowed_domains.push_back({"https://github.com", sbx::Source{sbx::LayerKind::user, {}, "k[0]"}});
    auto bad = sbx::net::compile_host_rules(by_hand);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error().key == "k[0]");

    // strictAllowlist and allowManagedDomainsOnly both make the list strict.
    sbx::Policy strict;
    strict.network.managed_domains_only.value = true;
    auto sr = sbx::net::compile_host_rules(strict);
    REQUIRE(sr.has_value());
    CHECK(sr->strict);
}

namespace {

std::string_view step_text(Step s) {
    switch (s) {
        case Step::denied_list: return "denied_list";
        case Step::allowed_list: return "allowed_list";
        case Step::local_binding: return "local_binding";
        case Step::call_list: return "call_list";
        case Step::named_address: return "named_address";
        case Step::not_in_call: return "not_in_call";
        case Step::local_address: return "local_address";
        case Step::local_name: return "local_name";
        case Step::strict: return "strict";
        case Step::answered: return "answered";
        case Step::call_decider: return "call_decider";
        case Step::sandbox_decider: return "sandbox_decider";
        case Step::nothing_decides: return "nothing_decides";
    }
    return "?";
}

// This machine in the tables: loopback, a public address (93.184.215.10 classifies
// as public), a private one and a link-local one.
std::vector<sbx::net::Address> own_addresses() {
    return {addr("127.0.0.1"), addr("[::1]"), addr("93.184.215.10"), addr("10.9.9.9"), addr("[fe80::1]")};
}

}  // namespace

// Over 80 lines: a table, one row a case, and the loop that checks each.
TEST_CASE("decide_host then choose_address: what each kind of rule reaches, in a long table") {
    struct Row {
        std::string_view name;
        std::vector<std::string_view> allowed, denied;
        bool local;                                                // allowLocalBinding
        std::optional<UnknownHost> unknown;                        // the sandbox's decider
        std::optional<std::vector<std::string_view>> call_hosts;  // the call's own list
        std::string_view host;
        std::uint16_t port;
        std::vector<std::string_view> resolved;  // what a name resolves to
        // "allow ADDR" or "ask ADDR": allowed (or asked about), ADDR dialed;
        // "deny STEP": refused by decide_host at STEP; "unreachable": allowed,
        // but choose_address refuses every resolved address.
        std::string_view expect;
    };
    using U = UnknownHost;
    const auto none = std::nullopt;
    using L = std::vector<std::string_view>;
    const std::vector<Row> rows = {
        // 1. Wildcards and deciders reach public addresses only, never a localhost name.
        {"* vs localhost", {"*"}, {}, false, none, none, "localhost", 80, {"127.0.0.1"}, "deny local_name"},
        {"* vs LOCALHOST.", {"*"}, {}, false, none, none, "LOCALHOST.", 80, {"127.0.0.1"}, "deny local_name"},
        {"* vs X.Localhost.", {"*"}, {}, false, none, none, "X.Localhost.", 80, {"127.0.0.1"}, "deny local_name"},
        {"* vs 127.0.0.1", {"*"}, {}, false, none, none, "127.0.0.1", 80, {}, "deny local_address"},
        {"* vs 2130706433", {"*"}, {}, false, none, none, "2130706433", 80, {}, "deny local_address"},
        {"* vs [::1]", {"*"}, {}, false, none, none, "[::1]", 80, {}, "deny local_address"},
        {"* vs 10.1.2.3", {"*"}, {}, false, none, none, "10.1.2.3", 80, {}, "deny local_address"},
        {"* vs 172.16.5.5", {"*"}, {}, false, none, none, "172.16.5.5", 80, {}, "deny local_address"},
        {"* vs 192.168.1.1", {"*"}, {}, false, none, none, "192.168.1.1", 80, {}, "deny local_address"},
        {"* vs 100.64.1.1", {"*"}, {}, false, none, none, "100.64.1.1", 80, {}, "deny local_address"},
        {"* vs [fd00::1]", {"*"}, {}, false, none, none, "[fd00::1]", 80, {}, "deny local_address"},
        {"* vs 169.254.169.254", {"*"}, {}, false, none, none, "169.254.169.254", 80, {}, "deny local_address"},
        {"* vs [::ffff:169.254.169.254]", {"*"}, {}, false, none, none, "[::ffff:169.254.169.254]", 80, {},
         "deny local_address"},
        {"* vs [fe80::2]", {"*"}, {}, false, none, none, "[fe80::2]", 80, {}, "deny local_address"},
        {"* vs this machine's public address", {"*"}, {}, false, none, none, "93.184.215.10", 80, {}, "deny local_address"},
        {"* vs this machine's private address", {"*"}, {}, false, none, none, "10.9.9.9", 80, {}, "deny local_address"},
        {"* vs a public address", {"*"}, {}, false, none, none, "93.184.216.34", 80, {}, "allow 93.184.216.34"},
        {"* vs a name of a public address", {"*"}, {}, false, none, none, "example.com", 443, {"93.184.216.34"},
         "allow 93.184.216.34"},
        {"* vs a name of 127.0.0.1", {"*"}, {}, false, none, none, "rebind.test", 80, {"127.0.0.1"}, "unreachable"},
        {"* vs a name of a private address", {"*"}, {}, false, none, none, "intranet.test", 80, {"10.0.0.5"},
         "unreachable"},
        {"* vs a name of a carrier-grade NAT address", {"*"}, {}, false, none, none, "cgn.test", 80, {"100.64.0.9"},
         "unreachable"},
        {"* vs a name of a unique-local address", {"*"}, {}, false, none, none, "ula.test", 80, {"[fd12::1]"},
         "unreachable"},
        {"* vs a name of the metadata address", {"*"}, {}, false, none, none, "meta.test", 80, {"169.254.169.254"},
         "unreachable"},
        {"* vs a name of this machine", {"*"}, {}, false, none, none, "me.test", 80, {"93.184.215.10"}, "unreachable"},
        {"* vs a name of a mapped loopback address", {"*"}, {}, false, none, none, "m.test", 80,
         {"[::ffff:127.0.0.1]"}, "unreachable"},
        {"* skips the private address of a name for its public one", {"*"}, {}, false, none, none, "both.test", 80,
         {"10.0.0.5", "127.0.0.1", "93.184.216.34"}, "allow 93.184.216.34"},
        {"*.example.test vs a private subdomain", {"*.example.test"}, {}, false, none, none, "db.example.test", 5432,
         {"10.0.0.5"}, "unreachable"},
        {"*.example.test vs a public subdomain", {"*.example.test"}, {}, false, none, none, "www.Example.Test.", 443,
         {"93.184.216.34"}, "allow 93.184.216.34"},
        {"the call's * vs the metadata address", {}, {}, false, none, L{"*"}, "169.254.169.254", 80, {},
         "deny local_address"},
        {"the call's * vs localhost", {}, {}, false, none, L{"*"}, "localhost", 80, {"127.0.0.1"}, "deny local_name"},
        {"onUnknownHost allow vs localhost", {}, {}, false, U::allow, none, "localhost", 80, {"127.0.0.1"},
         "deny local_name"},
        {"onUnknownHost allow vs x.localhost", {}, {}, false, U::allow, none, "x.localhost", 80, {"127.0.0.1"},
         "deny local_name"},
        {"onUnknownHost allow vs a private literal", {}, {}, false, U::allow, none, "10.0.0.1", 80, {},
         "deny local_address"},
        {"onUnknownHost allow vs this machine", {}, {}, false, U::allow, none, "93.184.215.10", 80, {},
         "deny local_address"},
        {"onUnknownHost allow vs a name of a private address", {}, {}, false, U::allow, none, "intranet.test", 80,
         {"10.0.0.5"}, "unreachable"},
        {"onUnknownHost allow vs a public name", {}, {}, false, U::allow, none, "example.com", 80, {"93.184.216.34"},
         "allow 93.184.216.34"},
        {"onUnknownHost ask vs loopback: no question", {}, {}, false, U::ask, none, "127.0.0.1", 80, {},
         "deny local_address"},
        {"onUnknownHost ask vs localhost: no question", {}, {}, false, U::ask, none, "localhost", 80, {"127.0.0.1"},
         "deny local_name"},
        {"onUnknownHost ask vs a public name", {}, {}, false, U::ask, none, "example.com", 80, {"93.184.216.34"},
         "ask 93.184.216.34"},
        {"onUnknownHost ask vs a name of a private address", {}, {}, false, U::ask, none, "intranet.test", 80,
         {"10.0.0.5"}, "unreachable"},
        // 2. localhost names: only a pattern naming them, or allowLocalBinding; loopback only.
        {"localhost vs localhost", {"localhost"}, {}, false, none, none, "localhost", 3000, {"127.0.0.1"},
         "allow 127.0.0.1"},
        {"localhost vs LOCALHOST.", {"localhost"}, {}, false, none, none, "LOCALHOST.", 3000, {"[::1]"}, "allow ::1"},
        {"localhost vs localhost resolving elsewhere", {"localhost"}, {}, false, none, none, "localhost", 3000,
         {"10.0.0.5", "93.184.216.34"}, "unreachable"},
        {"localhost vs x.localhost", {"localhost"}, {}, false, none, none, "x.localhost", 3000, {"127.0.0.1"},
         "deny local_name"},
        {"*.localhost vs x.localhost", {"*.localhost"}, {}, false, none, none, "X.Localhost.", 80, {"127.0.0.1"},
         "allow 127.0.0.1"},
        {"*.localhost vs localhost", {"*.localhost"}, {}, false, none, none, "localhost", 80, {"127.0.0.1"},
         "deny local_name"},
        {"x.localhost vs x.localhost", {"x.localhost"}, {}, false, none, none, "x.localhost", 80, {"127.0.0.1"},
         "allow 127.0.0.1"},
        {"the call's localhost:3000", {}, {}, false, none, L{"localhost:3000"}, "localhost", 3000, {"127.0.0.1"},
         "allow 127.0.0.1"},
        {"allowLocalBinding vs localhost", {}, {}, true, none, none, "localhost", 8080, {"127.0.0.1"},
         "allow 127.0.0.1"},
        {"allowLocalBinding vs x.localhost", {}, {}, true, none, none, "x.localhost", 8080, {"[::1]"}, "allow ::1"},
        {"allowLocalBinding vs 127.0.0.2", {}, {}, true, none, none, "127.0.0.2", 22, {}, "allow 127.0.0.2"},
        {"allowLocalBinding vs a private address", {}, {}, true, U::allow, none, "10.0.0.1", 80, {},
         "deny local_address"},
        {"allowLocalBinding vs this machine's private address", {}, {}, true, none, none, "10.9.9.9", 80, {},
         "deny local_address"},
        {"allowLocalBinding vs a name of loopback", {}, {}, true, none, none, "rebind.test", 80, {"127.0.0.1"},
         "deny nothing_decides"},
        // 3. An exact name: private addresses too, never loopback, link-local, metadata or this machine.
        {"exact name vs private", {"git.corp.test"}, {}, false, none, none, "git.corp.test", 443, {"10.0.0.5"},
         "allow 10.0.0.5"},
        {"exact name vs private, in capitals with a dot", {"git.corp.test"}, {}, false, none, none, "GIT.Corp.Test.",
         443, {"10.0.0.5"}, "allow 10.0.0.5"},
        {"exact name vs public", {"git.corp.test"}, {}, false, none, none, "git.corp.test", 443, {"93.184.216.34"},
         "allow 93.184.216.34"},
        {"exact name vs loopback", {"git.corp.test"}, {}, false, none, none, "git.corp.test", 443, {"127.0.0.1"},
         "unreachable"},
        {"exact name vs metadata", {"git.corp.test"}, {}, false, none, none, "git.corp.test", 80,
         {"169.254.169.254"}, "unreachable"},
        {"exact name vs link-local", {"git.corp.test"}, {}, false, none, none, "git.corp.test", 80, {"[fe80::9]"},
         "unreachable"},
        {"exact name vs this machine's private address", {"git.corp.test"}, {}, false, none, none, "git.corp.test",
         80, {"10.9.9.9"}, "unreachable"},
        {"exact name vs this machine's public address", {"git.corp.test"}, {}, false, none, none, "git.corp.test",
         80, {"93.184.215.10"}, "unreachable"},
        {"the call's exact name vs private", {}, {}, false, none, L{"git.corp.test"}, "git.corp.test", 443,
         {"192.168.7.7"}, "allow 192.168.7.7"},
        // 4. An address pattern: the address it names, whatever its kind, on its port.
        {"127.0.0.1:3000 vs itself", {"127.0.0.1:3000"}, {}, false, none, none, "127.0.0.1", 3000, {},
         "allow 127.0.0.1"},
        {"127.0.0.1:3000 vs another port", {"127.0.0.1:3000"}, {}, false, U::allow, none, "127.0.0.1", 3001, {},
         "deny local_address"},
        {"127.0.0.1:3000 vs 2130706433:3000", {"127.0.0.1:3000"}, {}, false, none, none, "2130706433", 3000, {},
         "allow 127.0.0.1"},
        {"the metadata address, named", {"169.254.169.254"}, {}, false, none, none, "0xa9.0xfe.0xa9.0xfe", 80, {},
         "allow 169.254.169.254"},
        {"this machine's address, named", {"93.184.215.10"}, {}, false, none, none, "93.184.215.10", 80, {},
         "allow 93.184.215.10"},
        {"a private address, named by the call", {}, {}, false, none, L{"10.1.2.3:22"}, "10.1.2.3", 22, {},
         "allow 10.1.2.3"},
        {"* then 127.0.0.1:3000 vs a name of 127.0.0.1", {"*", "127.0.0.1:3000"}, {}, false, none, none, "dev.test",
         3000, {"127.0.0.1"}, "allow 127.0.0.1"},
        {"* and 127.0.0.1:3000 vs a name of 127.0.0.1, other port", {"*", "127.0.0.1:3000"}, {}, false, none, none,
         "dev.test", 3001, {"127.0.0.1"}, "unreachable"},
        {"a decider and a named address vs a name of it", {"127.0.0.1:3000"}, {}, false, U::allow, none, "dev.test",
         3000, {"127.0.0.1"}, "allow 127.0.0.1"},
        {"an exact name and the call's [::1] vs a name of ::1", {"dev.test"}, {}, false, none, L{"[::1]"}, "dev.test",
         8080, {"[::1]"}, "allow ::1"},
        // 5. Deny first, and broadly.
        {"denied * vs an allowed exact name", {"git.corp.test"}, {"*"}, false, none, none, "git.corp.test", 443,
         {"10.0.0.5"}, "deny denied_list"},
        {"denied * vs localhost under allowLocalBinding", {"localhost"}, {"*"}, true, none, none, "localhost", 80,
         {"127.0.0.1"}, "deny denied_list"},
        {"denied * vs a named address", {"127.0.0.1:3000"}, {"*"}, false, none, none, "127.0.0.1", 3000, {},
         "deny denied_list"},
        {"denied *.localhost vs an allowed x.localhost", {"*.localhost"}, {"*.localhost"}, false, none, none,
         "x.localhost", 80, {"127.0.0.1"}, "deny denied_list"},
        {"denied localhost vs LOCALHOST.", {}, {"localhost"}, true, none, none, "LOCALHOST.", 80, {"127.0.0.1"},
         "deny denied_list"},
        {"a denied address is not dialed for a name", {"git.corp.test"}, {"10.0.0.5"}, false, none, none,
         "git.corp.test", 443, {"10.0.0.5", "10.0.0.6"}, "allow 10.0.0.6"},
        {"a denied address beats the name's only address", {"*", "169.254.169.254"}, {"169.254.169.254"}, false, none,
         none, "meta.test", 80, {"169.254.169.254"}, "unreachable"},
        // 6. Case and a trailing dot change nothing.
        {"Example.COM. vs example.com", {"example.com"}, {}, false, none, none, "Example.COM.", 443,
         {"93.184.216.34"}, "allow 93.184.216.34"},
        {"EXAMPLE.com vs denied example.com.", {"*"}, {"example.com."}, false, none, none, "EXAMPLE.com", 443,
         {"93.184.216.34"}, "deny denied_list"},
    };
    const auto own = own_addresses();
    for (const auto& r : rows) {
        CAPTURE(r.name);
        HostRules rules;
        for (auto t : r.allowed) rules.allowed.push_back(rule(t, "network.allowedDomains"));
        for (auto t : r.denied) rules.denied.push_back(rule(t, "network.deniedDomains"));
        rules.local = r.local;
        rules.on_unknown = r.unknown;
        HostCall call;
        if (r.call_hosts) {
            call.hosts.emplace();
            for (auto t : *r.call_hosts) call.hosts->push_back(rule(t, "the call's hosts"));
        }
        const auto t = target(r.host, r.port);
        std::vector<sbx::net::Address> resolved;
        for (auto a : r.resolved) resolved.push_back(addr(a));
        const auto d = sbx::net::decide_host(rules, call, t, own);
        CHECK_FALSE(d.why.empty());
        std::string got;
        if (d.verdict == Verdict::deny) {
            got = "deny " + std::string(step_text(d.step));
            CHECK(d.reach == sbx::net::Reach::nothing);
            CHECK_FALSE(sbx::net::choose_address(d, rules, call, t, resolved, own).has_value());
        } else {
            auto chosen = sbx::net::choose_address(d, rules, call, t, resolved, own);
            if (chosen) got = std::string(d.verdict == Verdict::ask ? "ask " : "allow ") + sbx::net::to_string(*chosen);
            else got = "unreachable";
            // judge_address says the same of each address as choose_address does.
            if (!t.address) {
                bool any = false;
                for (const auto& a : resolved) {
                    const auto v = sbx::net::judge_address(d, rules, call, t, a, own);
                    if (v.allowed && !any) CHECK((chosen.has_value() && *chosen == v.address));
                    any = any || v.allowed;
                }
                CHECK(any == chosen.has_value());
            }
        }
        CHECK(got == r.expect);
    }
}

TEST_CASE("the reasons name the wildcard that does not reach, and each address refused with its kind") {
    HostRules rules;
    rules.allowed.push_back(rule("*"));
    const auto own = own_addresses();
    const auto local = sbx::net::decide_host(rules, {}, target("127.0.0.1", 80), own);
    CHECK_MESSAGE(local.why == "a loopback address is reached only through a pattern that names the address "
                               "(network.allowedDomains * does not)",
                  local.why);
    const auto mine = sbx::net::decide_host(rules, {}, target("93.184.215.10", 80), own);
    CHECK_MESSAGE(mine.why.starts_with("an address of this machine is reached only"), mine.why);
    // A reserved address names its block of the special-purpose registries.
    const auto fake = sbx::net::decide_host(rules, {}, target("198.18.0.1", 80), own);
    CHECK(fake.verdict == sbx::net::HostDecision::Verdict::deny);
    CHECK_MESSAGE(fake.why.starts_with("a reserved address (benchmarking (RFC 2544)"), fake.why);
    const auto nat64 = sbx::net::decide_host(rules, {}, target("192.0.0.170", 80), own);
    CHECK_MESSAGE(nat64.why.find("discover a NAT64 prefix (RFC 7050)") != std::string::npos, nat64.why);
    const auto name = sbx::net::decide_host(rules, {}, target("localhost", 80), own);
    CHECK_MESSAGE(name.why.find("localhost, *.localhost") != std::string::npos, name.why);
    CHECK_MESSAGE(name.why.find("network.allowedDomains * does not") != std::string::npos, name.why);

    const auto t = target("mixed.test", 8080);
    const auto d = sbx::net::decide_host(rules, {}, t, own);
    REQUIRE(d.verdict == Verdict::allow);
    CHECK(d.reach == sbx::net::Reach::public_only);
    auto chosen = sbx::net::choose_address(d, rules, {}, t, {addr("10.0.0.5"), addr("93.184.215.10"), addr("[fe80::1]")}, own);
    REQUIRE_FALSE(chosen.has_value());
    const std::string& why = chosen.error().message;
    CHECK_MESSAGE(why.find("10.0.0.5 (private), 93.184.215.10 (this machine), fe80::1 (this machine)") != std::string::npos, why);
    CHECK_MESSAGE(why.find("public addresses only") != std::string::npos, why);
    CHECK_MESSAGE(why.find("127.0.0.1:8080") != std::string::npos, why);
    auto empty = sbx::net::choose_address(d, rules, {}, t, {}, own);
    REQUIRE_FALSE(empty.has_value());
    CHECK(empty.error().message == "mixed.test resolved to no address");
}

TEST_CASE("settings refuse a host entry that is no pattern, naming the file and entry") {
    sbx::SettingsSource src{sbx::LayerKind::project, "/r/.claude/settings.json", {"/home/u", "/r"}, "/r"};
    struct Row {
        std::string_view text, key;
    };
    const Row rows[] = {
        {R"J({"sandbox": {"network": {"allowedDomains": ["github.com", "https://pypi.org"]}}})J",
         "sandbox.network.allowedDomains[1]"},
        {R"J({"sandbox": {"network": {"deniedDomains": ["10.0.0.0/8"]}}})J", "sandbox.network.deniedDomains[0]"},
        {R"J({"sandbox": {"network": {"allowedDomains": ["evil .com"]}}})J",
         "sandbox.network.allowedDomains[0]"},
        {R"J({"permissions": {"allow": ["WebFetch(domain:https://github.com)"]}})J", "permissions.allow[0]"},
        {R"J({"permissions": {"deny": ["WebFetch(domain:a.*.com)"]}})J", "permissions.deny[0]"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.text);
        auto s = sbx::parse_settings(r.text, src);
        REQUIRE_FALSE(s.has_value());
        CHECK(s.error().code == sbx::Errc::invalid_settings);
        CHECK(s.error().file == "/r/.claude/settings.json");
        CHECK(s.error().key == r.key);
        CHECK_MESSAGE(s.error().message.find("is not a host pattern") != std::string::npos, s.error().message);
    }
    auto ok = sbx::parse_settings(
        R"J({"sandbox": {"network": {"allowedDomains": ["*.npmjs.org", "[::1]:8080", "127.0.0.1:3000", "*"]}},
            "permissions": {"allow": ["WebFetch(domain:docs.python.org)"]}})J",
        src);
    CHECK_MESSAGE(ok.has_value(), (ok ? std::string() : sbx::to_string(ok.error())));
}

TEST_CASE("decide_host: an exact name reaches private addresses even where a wildcard matches first") {
    sbx::net::HostRules rules;
    auto rule = [](std::string_view text, std::string list) {
        auto p = sbx::net::parse_host_pattern(text);
        REQUIRE(p.has_value());
        return sbx::net::HostRule{*p, std::string(text), std::move(list), std::nullopt};
    };
    rules.allowed.push_back(rule("*", "network.allowedDomains"));
    rules.allowed.push_back(rule("git.corp.example", "network.allowedDomains"));
    const auto t = sbx::net::canonical_target("git.corp.example", 443);
    REQUIRE(t.has_value());
    const std::vector<sbx::net::Address> own;
    auto d = sbx::net::decide_host(rules, {}, *t, own);
    CHECK(d.verdict == Verdict::allow);
    CHECK(d.reach == sbx::net::Reach::public_or_private);
    REQUIRE(d.rule != nullptr);
    CHECK(d.rule->text == "git.corp.example");
    const auto private_one = sbx::net::Address::v4(10, 1, 2, 3);
    auto chosen = sbx::net::choose_address(d, rules, {}, *t, {private_one}, own);
    REQUIRE(chosen.has_value());
    CHECK(*chosen == private_one);

    // The same exact name in the call's own list widens a settings `*`.
    sbx::net::HostRules star;
    star.allowed.push_back(rule("*", "network.allowedDomains"));
    sbx::net::HostCall call;
    call.hosts.emplace();
    call.hosts->push_back(rule("git.corp.example", "the call's hosts"));
    d = sbx::net::decide_host(star, call, *t, own);
    CHECK(d.step == Step::call_list);
    CHECK(d.reach == sbx::net::Reach::public_or_private);
    // Under `*` alone, the private address is not reached.
    d = sbx::net::decide_host(star, {}, *t, own);
    CHECK(d.reach == sbx::net::Reach::public_only);
    CHECK_FALSE(sbx::net::choose_address(d, star, {}, *t, {private_one}, own).has_value());
}

TEST_CASE("decide_host: an answer held for the session decides where a question would be asked, and nowhere else") {
    HostRules rules;
    rules.allowed.push_back(rule("allowed.example"));
    rules.denied.push_back(rule("denied.example", "network.deniedDomains"));
    rules.on_unknown = UnknownHost::ask;
    HostCall call;
    call.answers = {{"pypi.org", 443, true},  {"pypi.org", 0, false},       {"denied.example", 0, true},
                    {"allowed.example", 0, false}, {"93.184.215.7", 0, true}, {"evil.example", 0, false}};
    const std::vector<sbx::net::Address> own;
    const DecisionRow rows[] = {
        {"pypi.org", 443, Verdict::allow, Step::answered},   // the answer for the port, before every port's
        {"PyPI.org.", 443, Verdict::allow, Step::answered},  // as the target is normalised
        {"pypi.org", 80, Verdict::deny, Step::answered},     // every port's
        {"files.pypi.org", 443, Verdict::ask, Step::sandbox_decider},  // a name, not a pattern
        {"evil.example", 443, Verdict::deny, Step::answered},
        {"93.184.215.7", 8443, Verdict::allow, Step::answered},
        {"denied.example", 443, Verdict::deny, Step::denied_list},     // a list decides first
        {"allowed.example", 443, Verdict::allow, Step::allowed_list},
        {"localhost", 443, Verdict::deny, Step::local_name},           // never asked, never answered
        {"other.example", 443, Verdict::ask, Step::sandbox_decider},
    };
    for (const auto& r : rows) {
        CAPTURE(r.host);
        CAPTURE(r.port);
        const auto d = sbx::net::decide_host(rules, call, target(r.host, r.port), own);
        CHECK(d.verdict == r.verdict);
        CHECK(d.step == r.step);
        if (d.step == Step::answered) {
            CHECK(d.why.find("an answer held for the session") != std::string::npos);
            CHECK(d.reach == (d.verdict == Verdict::allow ? sbx::net::Reach::public_only : sbx::net::Reach::nothing));
        }
    }
    // Strict lists and the call's own list are not opened by an answer.
    rules.strict = true;
    CHECK(sbx::net::decide_host(rules, call, target("pypi.org", 443), own).step == Step::strict);
    rules.strict = false;
    call.hosts = std::vector<HostRule>{rule("other.example", std::string(sbx::net::kCallHosts))};
    CHECK(sbx::net::decide_host(rules, call, target("pypi.org", 443), own).step == Step::not_in_call);
}

TEST_CASE("answer_host_problem: an answer names one host as a target is normalised, never a local one") {
    for (const char* ok : {"pypi.org", "93.184.215.7", "2606:2800:21f::1", "registry.npmjs.org"}) {
        CAPTURE(ok);
        CHECK(sbx::net::answer_host_problem(ok).empty());
    }
    for (const char* bad : {"PyPI.org", "*.pypi.org", "pypi.org.", "localhost", "app.localhost", "127.0.0.1",
                            "10.0.0.1", "169.254.169.254", "[2001:db8::1]", "", "a b", "pypi.org:443"}) {
        CAPTURE(bad);
        CHECK_FALSE(sbx::net::answer_host_problem(bad).empty());
    }
}

TEST_CASE("decide_host: an address pattern reaches its address by a name that leads there without DNS") {
    HostRules rules;
    rules.allowed.push_back(rule("127.0.0.1:3000"));
    rules.allowed.push_back(rule("[::1]:8080"));
    const auto own = own_addresses();
    auto with_local = [](std::string_view host, std::uint16_t port, std::vector<sbx::net::Address> local) {
        auto t = target(host, port);
        t.local_addresses = std::move(local);
        return t;
    };
    // localhost:3000, and a name the hosts file gives 127.0.0.1: that address, dialed as it is.
    for (const char* name : {"localhost", "app.test"}) {
        CAPTURE(name);
        const auto t = with_local(name, 3000, {addr("127.0.0.1"), addr("[::1]")});
        const auto d = sbx::net::decide_host(rules, {}, t, own);
        CHECK(d.verdict == Verdict::allow);
        CHECK(d.step == Step::named_address);
        REQUIRE(d.dial.has_value());
        CHECK(sbx::net::to_string(*d.dial) == "127.0.0.1");
        CHECK_MESSAGE(d.why.find("allowed by network.allowedDomains 127.0.0.1:3000") == 0, d.why);
        auto chosen = sbx::net::choose_address(d, rules, {}, t, {}, own);
        REQUIRE(chosen.has_value());
        CHECK(sbx::net::to_string(*chosen) == "127.0.0.1");
    }
    const auto six = sbx::net::decide_host(rules, {}, with_local("localhost", 8080, {addr("127.0.0.1"), addr("[::1]")}), own);
    REQUIRE(six.dial.has_value());
    CHECK(sbx::net::to_string(*six.dial) == "::1");
    // Another port, no local address (DNS is never asked), or the address denied: as before.
    CHECK(sbx::net::decide_host(rules, {}, with_local("localhost", 3001, {addr("127.0.0.1")}), own).step == Step::local_name);
    CHECK(sbx::net::decide_host(rules, {}, with_local("app.test", 3000, {}), own).verdict == Verdict::deny);
    HostRules denied = rules;
    denied.denied.push_back(rule("127.0.0.1", "network.deniedDomains"));
    CHECK(sbx::net::decide_host(denied, {}, with_local("localhost", 3000, {addr("127.0.0.1")}), own).verdict ==
          Verdict::deny);
    // A name denied by its own pattern stays denied.
    HostRules named = rules;
    named.denied.push_back(rule("app.test", "network.deniedDomains"));
    CHECK(sbx::net::decide_host(named, {}, with_local("app.test", 3000, {addr("127.0.0.1")}), own).step ==
          Step::denied_list);
}

TEST_CASE("hosts file: the addresses of a name, as the resolver reads the file") {
    const std::string text =
        "127.0.0.1\tlocalhost\n"
        "::1     localhost ip6-localhost   # the IPv6 one\n"
        "# 10.0.0.1 commented.test\n"
        "10.1.2.3 App.Test app2.test\n"
        "not-an-address app.test\n"
        "10.1.2.4 app.test\n"
        "10.1.2.3 app.test\n"
        "::ffff:10.9.9.9 mapped.test\r\n"
        "10.5.5.5\n";
    auto names = [&](std::string_view n) {
        std::string out;
        for (const auto& a : sbx::net::hosts_file_addresses(text, n)) out += sbx::net::to_string(a) + " ";
        return out;
    };
    CHECK(names("app.test") == "10.1.2.3 10.1.2.4 ");
    CHECK(names("APP.test.") == "10.1.2.3 10.1.2.4 ");
    CHECK(names("commented.test").empty());
    CHECK(names("mapped.test") == "10.9.9.9 ");
    CHECK(names("ip6-localhost") == "::1 ");
    CHECK(names("").empty());
    // localhost and the names under it lead to loopback whatever the file says.
    std::string local;
    for (const auto& a : sbx::net::local_addresses("", "web.localhost")) local += sbx::net::to_string(a) + " ";
    CHECK(local == "127.0.0.1 ::1 ");
    CHECK(sbx::net::local_addresses(text, "nowhere.test").empty());
    CHECK(sbx::net::local_addresses("", "notlocalhost").empty());
}
