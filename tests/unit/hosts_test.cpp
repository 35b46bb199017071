// Host patterns, decide_host's order, and which resolved address may be dialed:
// tables, one row a case.
#include "sbx/hosts.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

#include "sbx/settings.hpp"

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
        // Every host: names, public and private addresses; no local address.
        {"*", "anything.example", 443, true},
        {"*", "93.184.216.34", 443, true},
        {"*", "10.1.2.3", 443, true},
        {"*", "[2606:4700::1111]", 443, true},
        {"*", "127.0.0.1", 443, false},
        {"*", "2130706433", 443, false},
        {"*", "[::1]", 443, false},
        {"*", "169.254.169.254", 80, false},
        {"*", "0xa9fea9fe", 80, false},
        {"*", "[::ffff:169.254.169.254]", 80, false},
        {"*", "224.0.0.1", 80, false},
        {"*", "0.0.0.0", 80, false},
        {"*:443", "example.com", 80, false},
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
        {"the first matching rule of a list names the decision", {"*.github.com", "api.github.com"}, {}, false,
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
        const auto d = sbx::net::decide_host(rules, call, target(r.host, r.port));
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
    struct Row {
        std::string_view host;
        std::uint16_t port;
        Verdict verdict;
        Step step;
    };
    const Row rows[] = {
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
        {"10.0.0.1", 80, Verdict::deny, Step::nothing_decides},
        {"localhost.evil.example", 80, Verdict::deny, Step::nothing_decides},
        {"example.com", 443, Verdict::deny, Step::nothing_decides},
    };
    for (const auto& r : rows) {
        CAPTURE(r.host);
        const auto d = sbx::net::decide_host(rules, {}, target(r.host, r.port));
        CHECK(d.verdict == r.verdict);
        CHECK(d.step == r.step);
        if (d.step == Step::local_binding)
            CHECK_MESSAGE(d.why.find("sandbox.network.allowLocalBinding") != std::string::npos, d.why);
    }
    // A deny still beats it; a call's own list does not close it (it is the
    // sandbox's switch, like its allow list).
    rules.denied.push_back(rule("localhost:6379", "network.deniedDomains"));
    CHECK(sbx::net::decide_host(rules, {}, target("localhost", 6379)).step == Step::denied_list);
    HostCall call;
    call.hosts.emplace();
    call.hosts->push_back(rule("pypi.org", "the call's hosts"));
    CHECK(sbx::net::decide_host(rules, call, target("127.0.0.1", 3000)).verdict == Verdict::allow);
    CHECK(sbx::net::decide_host(rules, call, target("example.com", 443)).step == Step::not_in_call);
    // Without the switch, loopback stays closed to every decider.
    rules.local = false;
    rules.on_unknown = UnknownHost::allow;
    CHECK(sbx::net::decide_host(rules, {}, target("127.0.0.1", 3000)).step == Step::local_address);

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
    const auto nothing = sbx::net::decide_host(rules, {}, target("example.com", 443));
    CHECK(nothing.why == "not on the allow list, and nothing decides other hosts");
    rules.denied.push_back(rule("*.evil.com", "network.deniedDomains"));
    const auto denied = sbx::net::decide_host(rules, {}, target("x.evil.com", 443));
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
    const auto d = sbx::net::decide_host(*rules, {}, target("registry.npmjs.org", 443));
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

TEST_CASE("check_resolved: names never reach this machine's kinds of address, unless named") {
    HostRules rules;
    HostCall call;
    const std::vector<sbx::net::Address> none;
    auto ok = [&](std::string_view host, std::uint16_t port, std::vector<std::string_view> resolved,
                  std::string_view expect, const std::vector<sbx::net::Address>& own = {}) {
        CAPTURE(host);
        std::vector<sbx::net::Address> addrs;
        for (auto a : resolved) addrs.push_back(addr(a));
        auto got = sbx::net::check_resolved(target(host, port), addrs, own, rules, call);
        REQUIRE_MESSAGE(got.has_value(), (got ? std::string() : sbx::to_string(got.error())));
        CHECK(sbx::net::to_string(*got) == expect);
    };
    auto refused = [&](std::string_view host, std::uint16_t port, std::vector<std::string_view> resolved,
                       std::string_view why, const std::vector<sbx::net::Address>& own = {}) {
        CAPTURE(host);
        std::vector<sbx::net::Address> addrs;
        for (auto a : resolved) addrs.push_back(addr(a));
        auto got = sbx::net::check_resolved(target(host, port), addrs, own, rules, call);
        REQUIRE_FALSE(got.has_value());
        CHECK_MESSAGE(got.error().message.find(why) != std::string::npos, got.error().message);
    };
    ok("example.com", 443, {"93.184.216.34"}, "93.184.216.34");
    ok("example.com", 443, {"127.0.0.1", "93.184.216.34"}, "93.184.216.34");
    ok("intranet.corp", 443, {"10.0.0.5"}, "10.0.0.5");
    ok("localhost", 3000, {"127.0.0.1"}, "127.0.0.1");
    ok("app.localhost", 3000, {"[::1]"}, "::1");
    refused("evil.example", 80, {"127.0.0.1"}, "127.0.0.1 (loopback)");
    refused("evil.example", 80, {"[::ffff:127.0.0.1]"}, "loopback");
    refused("evil.example", 80, {"169.254.169.254"}, "metadata");
    refused("evil.example", 80, {"[fe80::1]"}, "link-local");
    refused("evil.example", 80, {"224.0.0.251"}, "multicast");
    refused("evil.example", 80, {"0.0.0.0"}, "unspecified");
    refused("evil.example", 80, {}, "no address");
    refused("localhost.evil.example", 80, {"127.0.0.1"}, "loopback");
    const std::vector<sbx::net::Address> own{addr("192.0.2.10")};
    refused("evil.example", 80, {"192.0.2.10"}, "this machine", own);
    ok("example.com", 80, {"192.0.2.10", "93.184.216.34"}, "93.184.216.34", own);

    // Allowing the address itself reaches a local server by any name, on that port.
    rules.allowed.push_back(rule("127.0.0.1:3000"));
    ok("dev.example", 3000, {"127.0.0.1"}, "127.0.0.1");
    refused("dev.example", 3001, {"127.0.0.1"}, "allow the address itself");
    rules.allowed.clear();
    call.hosts.emplace();
    call.hosts->push_back(rule("[::1]", "the call's hosts"));
    ok("dev.example", 8080, {"[::1]"}, "::1");

    // A literal address was decided by the patterns already, and is dialed as it is.
    ok("2130706433", 3000, {}, "127.0.0.1");
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
