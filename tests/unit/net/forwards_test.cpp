// loopback_forwards(): which allowed entries get a listener inside the sandbox,
// where it listens and what it leads to. One row a case.
#include "sbx/net/forwards.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

namespace {

using sbx::net::Forward;
using sbx::net::HostCall;
using sbx::net::HostRule;
using sbx::net::HostRules;

HostRule rule(std::string_view text, std::string list = "network.allowedDomains") {
    auto p = sbx::net::parse_host_pattern(text);
    REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
    return HostRule{*p, std::string(text), std::move(list), std::nullopt};
}

// The forwards as "LISTEN -> TARGET:PORT" lines, in order.
std::vector<std::string> shown(const std::vector<Forward>& fs) {
    std::vector<std::string> out;
    for (const auto& f : fs) {
        CHECK(f.port == f.target_port);  // a forward never changes the port
        out.push_back(sbx::net::address_port_text(f.listen, f.port) + " -> " + f.target + ":" + std::to_string(f.target_port));
    }
    return out;
}

std::vector<std::string> forwards_of(std::initializer_list<std::string_view> allowed,
                                     std::optional<std::vector<std::string_view>> call = std::nullopt) {
    HostRules rules;
    for (auto a : allowed) rules.allowed.push_back(rule(a));
    HostCall c;
    if (call) {
        c.hosts.emplace();
        for (auto h : *call) c.hosts->push_back(rule(h, "the call's hosts"));
    }
    return shown(sbx::net::loopback_forwards(rules, c).forwards);
}

}  // namespace

TEST_CASE("forwards: a loopback entry with a port gets a listener inside, leading to itself") {
    struct Row {
        std::string_view entry;
        std::vector<std::string> forwards;
    };
    const Row rows[] = {
        {"127.0.0.1:5432", {"127.0.0.1:5432 -> 127.0.0.1:5432"}},
        {"127.0.0.2:6379", {"127.0.0.2:6379 -> 127.0.0.2:6379"}},      // the whole of 127.0.0.0/8
        {"127.255.255.254:9999", {"127.255.255.254:9999 -> 127.255.255.254:9999"}},
        {"[::1]:8080", {"[::1]:8080 -> ::1:8080"}},
        {"[::ffff:127.0.0.1]:7000", {"127.0.0.1:7000 -> 127.0.0.1:7000"}},  // a mapped address is the IPv4 one
        {"localhost:3000", {"127.0.0.1:3000 -> localhost:3000", "[::1]:3000 -> localhost:3000"}},
        {"LocalHost.:3000", {"127.0.0.1:3000 -> localhost:3000", "[::1]:3000 -> localhost:3000"}},
        // No port, every port: nothing to listen on.
        {"127.0.0.1", {}},
        {"[::1]", {}},
        {"localhost", {}},
        // Not loopback, or not the one name.
        {"10.0.0.5:5432", {}},
        {"192.168.1.1:80", {}},
        {"169.254.169.254:80", {}},
        {"[fe80::1]:80", {}},
        {"[::]:80", {}},
        {"0.0.0.0:80", {}},
        {"db.localhost:5432", {}},
        {"*.localhost:5432", {}},
        {"*:5432", {}},
        {"example.com:443", {}},
        {"localhost.example.com:80", {}},
    };
    for (const auto& r : rows) {
        CAPTURE(r.entry);
        CHECK(forwards_of({r.entry}) == r.forwards);
        // The hosts the call lists count the same.
        CHECK(forwards_of({}, std::vector<std::string_view>{r.entry}) == r.forwards);
    }
}

TEST_CASE("forwards: one per listening address and port; the entry naming the address decides") {
    // localhost:8080 and [::1]:8080 both want [::1]:8080: the address entry leads there.
    CHECK(forwards_of({"localhost:8080", "[::1]:8080"}) ==
          std::vector<std::string>{"[::1]:8080 -> ::1:8080", "127.0.0.1:8080 -> localhost:8080"});
    CHECK(forwards_of({"[::1]:8080", "localhost:8080"}) ==
          std::vector<std::string>{"[::1]:8080 -> ::1:8080", "127.0.0.1:8080 -> localhost:8080"});
    // The same entry twice, in the settings and the call: once.
    CHECK(forwards_of({"127.0.0.1:5432"}, std::vector<std::string_view>{"127.0.0.1:5432"}) ==
          std::vector<std::string>{"127.0.0.1:5432 -> 127.0.0.1:5432"});
    // Other ports and other addresses each get their own.
    CHECK(forwards_of({"127.0.0.1:5432", "127.0.0.1:5433", "127.0.0.2:5432"}) ==
          std::vector<std::string>{"127.0.0.1:5432 -> 127.0.0.1:5432", "127.0.0.1:5433 -> 127.0.0.1:5433",
                                   "127.0.0.2:5432 -> 127.0.0.2:5432"});
    // Nothing allowed, nothing forwarded; allowLocalBinding (every port) adds none.
    HostRules local;
    local.local = true;
    CHECK(sbx::net::loopback_forwards(local, HostCall{}).forwards.empty());
}

TEST_CASE("forwards: the entry behind each is named, with its list") {
    HostRules rules;
    rules.allowed.push_back(rule("127.0.0.1:5432"));
    HostCall call;
    call.hosts.emplace();
    call.hosts->push_back(rule("localhost:3000", "the call's hosts"));
    const auto fs = sbx::net::loopback_forwards(rules, call).forwards;
    REQUIRE(fs.size() == 3);
    CHECK(fs[0].why == "network.allowedDomains 127.0.0.1:5432");
    CHECK(fs[1].why == "the call's hosts localhost:3000");
    CHECK(fs[2].why == "the call's hosts localhost:3000");
}

TEST_CASE("forwards: a denied entry still gets its listener, so that each connection is refused and reported") {
    HostRules rules;
    rules.allowed.push_back(rule("127.0.0.1:5432"));
    rules.denied.push_back(rule("127.0.0.1:5432", "network.deniedDomains"));
    const auto fs = sbx::net::loopback_forwards(rules, HostCall{}).forwards;
    REQUIRE(fs.size() == 1);
    const auto t = sbx::net::canonical_target(fs[0].target, fs[0].target_port);
    REQUIRE(t.has_value());
    CHECK(sbx::net::decide_host(rules, HostCall{}, *t, {}).verdict == sbx::net::HostDecision::Verdict::deny);
    // Allowed alone, its target is allowed.
    rules.denied.clear();
    CHECK(sbx::net::decide_host(rules, HostCall{}, *t, {}).verdict == sbx::net::HostDecision::Verdict::allow);
}

TEST_CASE("forwards: a port below 1024 gets none, and its entry is listed once for a warning") {
    HostRules rules;
    for (auto e : {"127.0.0.1:80", "localhost:443", "127.0.0.1:1024", "[::1]:1023"}) rules.allowed.push_back(rule(e));
    const auto set = sbx::net::loopback_forwards(rules, HostCall{});
    CHECK(shown(set.forwards) == std::vector<std::string>{"127.0.0.1:1024 -> 127.0.0.1:1024"});
    REQUIRE(set.privileged.size() == 3);
    CHECK(set.privileged[0]->text == "127.0.0.1:80");
    CHECK(set.privileged[1]->text == "[::1]:1023");  // address entries first
    CHECK(set.privileged[2]->text == "localhost:443");  // once, for both of its listeners
}

TEST_CASE("loopback_through_proxy: only what no forward serves sends loopback through the proxy") {
    struct Row {
        std::vector<std::string_view> allowed;
        bool local;
        std::optional<std::string> through;  // nullopt: NO_PROXY may name loopback
    };
    const Row rows[] = {
        {{}, false, std::nullopt},
        {{"github.com", "*.example.com", "*"}, false, std::nullopt},  // none of them reaches loopback
        {{"127.0.0.1:5432", "localhost:3000", "[::1]:8080"}, false, std::nullopt},  // each has its forward
        {{"10.0.0.1"}, false, std::nullopt},                                         // private, not loopback
        {{}, true, "allowLocalBinding"},
        {{"github.com", "127.0.0.1"}, false, "127.0.0.1"},    // every port
        {{"localhost"}, false, "localhost"},
        {{"[::1]"}, false, "[::1]"},
        {{"127.0.0.2:80"}, false, "127.0.0.2:80"},              // below 1024: no forward
        {{"*.localhost"}, false, "*.localhost"},
    };
    for (const auto& r : rows) {
        HostRules rules;
        for (auto a : r.allowed) rules.allowed.push_back(rule(a));
        rules.local = r.local;
        const auto got = sbx::net::loopback_through_proxy(rules, HostCall{});
        CAPTURE(r.allowed.size());
        CHECK(got.has_value() == r.through.has_value());
        if (got && r.through) CHECK_MESSAGE(got->find(*r.through) != std::string::npos, *got);
    }
    // The call's own hosts count too.
    HostCall call;
    call.hosts.emplace();
    call.hosts->push_back(rule("localhost", "the call's hosts"));
    CHECK(sbx::net::loopback_through_proxy(HostRules{}, call).has_value());
}
