// The one host:port splitter, and ASCII case folding: tables, one row a case.
#include "sbx/core/ascii.hpp"
#include "sbx/net/host_port.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>

namespace {

using sbx::net::BareIpv6;
using sbx::net::HostPortRules;
using sbx::net::PortZeros;
using sbx::net::split_host_port;

constexpr HostPortRules kClient{.zeros = PortZeros::allowed, .bare_ipv6 = BareIpv6::refused};
constexpr HostPortRules kExplain{.zeros = PortZeros::allowed, .bare_ipv6 = BareIpv6::whole_host};

}  // namespace

TEST_CASE("split_host_port: the host as written, brackets kept, and the port") {
    struct Row {
        std::string_view text;
        std::string_view host;
        std::optional<std::uint16_t> port;
    };
    const Row rows[] = {
        {"github.com", "github.com", std::nullopt},
        {"github.com:443", "github.com", 443},
        {"127.0.0.1:1", "127.0.0.1", 1},
        {"x:65535", "x", 65535},
        {"[::1]", "[::1]", std::nullopt},
        {"[::1]:8080", "[::1]", 8080},
        {"[]", "[]", std::nullopt},  // brackets: what is inside is the caller's to judge
        {"[not-v6]:80", "[not-v6]", 80},
        {"*", "*", std::nullopt},
        {"*.example.com:22", "*.example.com", 22},
    };
    for (const auto& r : rows) {
        CAPTURE(r.text);
        for (const HostPortRules rules : {HostPortRules{}, kClient, kExplain}) {
            auto s = split_host_port(r.text, rules);
            REQUIRE_MESSAGE(s.has_value(), (s ? std::string() : s.error().message));
            CHECK(s->host == r.host);
            CHECK(s->port == r.port);
        }
    }
}

TEST_CASE("split_host_port: every refusal, with its reason") {
    struct Row {
        std::string_view text;
        std::string_view why;
    };
    const Row rows[] = {
        {"[::1", "a '[' without its ']'"},
        {"[", "a '[' without its ']'"},
        {"[::1]x", "something after ']' that is not ':PORT'"},
        {"[::1]:", "the port is not a number from 1 to 65535"},
        {"::1", "an IPv6 address is written in brackets, [::1]"},
        {"::1:80", "an IPv6 address is written in brackets, [::1]"},
        {"", "the host is empty"},
        {":80", "the host is empty"},
        {"host:", "the port is not a number from 1 to 65535"},
        {"host:0", "the port is not a number from 1 to 65535"},
        {"host:00", "the port is not a number from 1 to 65535"},
        {"host:65536", "the port is not a number from 1 to 65535"},
        {"host:99999", "the port is not a number from 1 to 65535"},
        {"host:123456", "the port is not a number from 1 to 65535"},
        {"host:99999999999999999999", "the port is not a number from 1 to 65535"},
        {"host:-1", "the port is not a number from 1 to 65535"},
        {"host:+1", "the port is not a number from 1 to 65535"},
        {"host:8o", "the port is not a number from 1 to 65535"},
        {"host: 80", "the port is not a number from 1 to 65535"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.text);
        for (const HostPortRules rules : {HostPortRules{}, kClient}) {
            auto s = split_host_port(r.text, rules);
            REQUIRE_FALSE(s.has_value());
            CHECK(s.error().code == sbx::Errc::invalid_argument);
            CHECK(s.error().message == r.why);
        }
    }
}

TEST_CASE("split_host_port: the named differences") {
    // PortZeros: a pattern spells each port one way; a client may pad it.
    CHECK_FALSE(split_host_port("host:080").has_value());
    CHECK_FALSE(split_host_port("host:01").has_value());
    CHECK(split_host_port("host:080", kClient)->port == 80);
    CHECK(split_host_port("[::1]:00443", kClient)->port == 443);
    CHECK_FALSE(split_host_port("host:000000080", kClient).has_value());  // still at most five digits
    // BareIpv6: explain takes a bare IPv6 address as the whole host, with no port.
    auto whole = split_host_port("::1:80", kExplain);
    REQUIRE(whole.has_value());
    CHECK(whole->host == "::1:80");
    CHECK_FALSE(whole->port.has_value());
    CHECK(split_host_port("fe80::1", kExplain)->host == "fe80::1");
    CHECK(split_host_port("host:80", kExplain)->port == 80);  // one colon is still host:port
}

TEST_CASE("ascii_lower: A-Z and nothing else") {
    CHECK(sbx::ascii_lower('A') == 'a');
    CHECK(sbx::ascii_lower('Z') == 'z');
    CHECK(sbx::ascii_lower('a') == 'a');
    CHECK(sbx::ascii_lower('@') == '@');
    CHECK(sbx::ascii_lower('[') == '[');
    CHECK(sbx::ascii_lower('\xc4') == '\xc4');  // no locale: bytes above 0x7f stay
    CHECK(sbx::ascii_lower(std::string_view("GitHub.COM:443")) == "github.com:443");
    CHECK(sbx::ascii_lower(std::string_view("\xc3\x84Ä")) == "\xc3\x84Ä");
    CHECK(sbx::ascii_iequals("Proxy-Connection", "proxy-connection"));
    CHECK_FALSE(sbx::ascii_iequals("Connection", "connections"));
    CHECK_FALSE(sbx::ascii_iequals("a", "b"));
    static_assert(sbx::ascii_iequals("HOST", "host"));
}
