// A SOCKS5 client's greeting and request as the proxy reads them, and the
// replies it builds: every verdict, with the bytes it needs.
#include "sbx/net/socks5.hpp"

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace {

namespace socks5 = sbx::net::socks5;
using GV = socks5::Greeting::Verdict;
using RV = socks5::Request::Verdict;

std::vector<std::uint8_t> bytes(std::string_view s) { return {s.begin(), s.end()}; }

socks5::Greeting greeting(std::string_view s) { return socks5::parse_greeting(bytes(s)); }
socks5::Request request(std::string_view s) { return socks5::parse_request(bytes(s)); }

}  // namespace

TEST_CASE("socks5: the greeting") {
    struct Row {
        std::string_view in;
        GV verdict;
        std::size_t size;
    };
    const Row rows[] = {
        {{"", 0}, GV::more, 2},
        {{"\x05", 1}, GV::more, 2},
        {{"\x05\x02", 2}, GV::more, 4},
        {{"\x05\x02\x02", 3}, GV::more, 4},
        {{"\x05\x01\x00", 3}, GV::no_authentication, 3},
        {{"\x05\x02\x02\x00", 4}, GV::no_authentication, 4},
        {{"\x05\x01\x00GET", 6}, GV::no_authentication, 3},  // what follows is not looked at
        {{"\x05\x01\x02", 3}, GV::no_acceptable_method, 3},  // username/password only
        {{"\x05\x00", 2}, GV::no_acceptable_method, 2},      // no methods at all
        {{"\x04\x01", 2}, GV::not_socks5, 2},                // SOCKS4
        {{"\x04", 1}, GV::more, 2},                          // judged once both bytes came
        {{"GET / HTTP/1.1", 14}, GV::not_socks5, 2},
    };
    for (const auto& r : rows) {
        CAPTURE(r.in);
        const auto g = greeting(r.in);
        CHECK(g.verdict == r.verdict);
        CHECK(g.size == r.size);
    }
    CHECK(socks5::kChooseNoAuthentication == std::string_view("\x05\x00", 2));
    CHECK(socks5::kNoAcceptableMethod == std::string_view("\x05\xff", 2));
}

TEST_CASE("socks5: the greeting when the proxy requires username/password") {
    struct Row {
        std::string_view in;
        GV verdict;
        std::size_t size;
    };
    const Row rows[] = {
        {{"\x05\x01\x02", 3}, GV::username_password, 3},
        {{"\x05\x02\x00\x02", 4}, GV::username_password, 4},  // both offered: username/password
        {{"\x05\x02\x02\x00", 4}, GV::username_password, 4},
        {{"\x05\x01\x00", 3}, GV::no_acceptable_method, 3},  // "no authentication" is no longer enough
        {{"\x05\x02\x01\x03", 4}, GV::no_acceptable_method, 4},
        {{"\x05\x00", 2}, GV::no_acceptable_method, 2},
        {{"\x05\x02\x00", 3}, GV::more, 4},
        {{"\x04\x01", 2}, GV::not_socks5, 2},
    };
    for (const auto& r : rows) {
        CAPTURE(r.in);
        const auto g = socks5::parse_greeting(bytes(r.in), socks5::Method::username_password);
        CHECK(g.verdict == r.verdict);
        CHECK(g.size == r.size);
    }
    CHECK(socks5::kChooseUsernamePassword == std::string_view("\x05\x02", 2));
}

TEST_CASE("socks5: the username/password request (RFC 1929)") {
    using PV = socks5::PasswordRequest::Verdict;
    auto password_request = [](std::string_view s) { return socks5::parse_password_request(bytes(s)); };
    const auto ok = password_request({"\x01\x03sbx\x04s:cr", 10});
    REQUIRE(ok.verdict == PV::credentials);
    CHECK(ok.username == "sbx");
    CHECK(ok.password == "s:cr");
    CHECK(ok.size == 10);
    const auto tunnel = password_request({"\x01\x01u\x01p\x05\x01\x00", 8});  // what follows is not looked at
    REQUIRE(tunnel.verdict == PV::credentials);
    CHECK(tunnel.password == "p");
    CHECK(tunnel.size == 5);
    const std::string longest = std::string("\x01\xff", 2) + std::string(255, 'u') + "\xff" + std::string(255, 'p');
    const auto full = password_request(longest);
    REQUIRE(full.verdict == PV::credentials);
    CHECK(full.username.size() == 255);
    CHECK(full.password == std::string(255, 'p'));

    struct Row {
        std::string_view in;
        PV verdict;
        std::size_t size;
    };
    const Row rows[] = {
        {{"", 0}, PV::more, 2},
        {{"\x01", 1}, PV::more, 2},
        {{"\x01\x03", 2}, PV::more, 6},
        {{"\x01\x03sb", 4}, PV::more, 6},
        {{"\x01\x03sbx", 5}, PV::more, 6},
        {{"\x01\x03sbx\x04", 6}, PV::more, 10},
        {{"\x01\x03sbx\x04sec", 9}, PV::more, 10},
        {{"\x05\x03sbx\x04secr", 10}, PV::refused, 2},  // a SOCKS5 version byte, not RFC 1929's
        {{"\x00\x03sbx\x04secr", 10}, PV::refused, 2},
        {{"\x01\x00\x04secr", 7}, PV::refused, 2},      // no user name
        {{"\x01\x03sbx\x00", 6}, PV::refused, 6},       // no password
    };
    for (const auto& r : rows) {
        CAPTURE(r.in);
        const auto q = password_request(r.in);
        CHECK(q.verdict == r.verdict);
        CHECK(q.size == r.size);
        if (r.verdict == PV::more) CHECK(q.size > r.in.size());
        if (r.verdict == PV::refused) {
            CHECK_FALSE(q.why.empty());
            CHECK(q.size <= r.in.size());
        }
    }
    CHECK(socks5::kPasswordAccepted == std::string_view("\x01\x00", 2));
    CHECK(socks5::kPasswordRefused == std::string_view("\x01\x01", 2));
}

TEST_CASE("socks5: a CONNECT request, each address type") {
    struct Row {
        std::string_view in;
        std::string_view host;
        std::uint16_t port;
        std::size_t size;
    };
    const Row rows[] = {
        {{"\x05\x01\x00\x01\xc6\x33\x64\x01\x00\x50", 10}, "198.51.100.1", 80, 10},
        {{"\x05\x01\x00\x03\x06" "a.test" "\x01\xbb", 13}, "a.test", 443, 13},
        {{"\x05\x01\x00\x03\x02" "\r\n" "\x00\x07", 9}, "\r\n", 7, 9},  // a name as sent: canonical_target judges it
        {{"\x05\x01\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x1f\x90", 22}, "::1", 8080, 22},
        {{"\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x00", 10}, "127.0.0.1", 0, 10},  // port 0: the decision refuses it
        {{"\x05\x01\x00\x01\x7f\x00\x00\x01\x00\x50tunnel", 16}, "127.0.0.1", 80, 10},
    };
    for (const auto& r : rows) {
        CAPTURE(r.in);
        const auto q = request(r.in);
        REQUIRE(q.verdict == RV::connect);
        CHECK(q.host == r.host);
        CHECK(q.port == r.port);
        CHECK(q.size == r.size);
    }
}

TEST_CASE("socks5: every request the proxy does not serve, and what it needs to tell") {
    struct Row {
        std::string_view in;
        RV verdict;
        std::size_t size;
        socks5::Reply reply;
    };
    using R = socks5::Reply;
    const Row rows[] = {
        {{"", 0}, RV::more, 4, R::general_failure},
        {{"\x05\x01\x00", 3}, RV::more, 4, R::general_failure},
        {{"\x05\x01\x00\x01", 4}, RV::more, 10, R::general_failure},
        {{"\x05\x01\x00\x01\x7f\x00\x00\x01\x00", 9}, RV::more, 10, R::general_failure},
        {{"\x05\x01\x00\x03", 4}, RV::more, 5, R::general_failure},
        {{"\x05\x01\x00\x03\x06" "a.te", 9}, RV::more, 13, R::general_failure},
        {{"\x05\x01\x00\x04", 4}, RV::more, 22, R::general_failure},
        {{"\x04\x01\x00\x01", 4}, RV::close, 4, R::general_failure},      // not version 5
        {{"\x05\x01\x01\x01", 4}, RV::close, 4, R::general_failure},      // a reserved byte that is not 0
        {{"\x05\x01\x00\x03\x00", 5}, RV::close, 5, R::general_failure},  // a name of no bytes
        {{"\x05\x01\x00\x02", 4}, RV::reply, 4, R::address_type_not_supported},
        {{"\x05\x01\x00\xff", 4}, RV::reply, 4, R::address_type_not_supported},
        {{"\x05\x02\x00\x03\x06" "a.test" "\x00\x50", 13}, RV::reply, 13, R::command_not_supported},  // BIND
        {{"\x05\x03\x00\x01\x7f\x00\x00\x01\x00\x50", 10}, RV::reply, 10, R::command_not_supported},   // UDP ASSOCIATE
        {{"\x05\x02\x00\x01\x7f\x00\x00", 7}, RV::more, 10, R::general_failure},  // the command is judged on the whole request
    };
    for (const auto& r : rows) {
        CAPTURE(r.in);
        const auto q = request(r.in);
        CHECK(q.verdict == r.verdict);
        CHECK(q.size == r.size);
        if (r.verdict == RV::reply) CHECK(q.reply == r.reply);
        if (r.verdict == RV::more) CHECK(q.size > r.in.size());
        if (r.verdict == RV::close || r.verdict == RV::reply) CHECK_FALSE(q.why.empty());
    }
}

TEST_CASE("socks5: replies") {
    CHECK(socks5::reply(socks5::Reply::not_allowed) == std::string("\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00", 10));
    CHECK(socks5::reply(socks5::Reply::succeeded) == std::string("\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10));
    CHECK(socks5::success_reply(sbx::net::Address::v4(127, 0, 0, 1), 0x1f90) ==
          std::string("\x05\x00\x00\x01\x7f\x00\x00\x01\x1f\x90", 10));
    std::array<std::uint8_t, 16> one{};
    one[15] = 1;
    CHECK(socks5::success_reply(sbx::net::Address::v6(one), 443) ==
          std::string("\x05\x00\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x01\xbb", 22));
}
