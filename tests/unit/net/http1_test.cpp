// The HTTP/1 request head as the proxy reads it, and the heads it writes: every
// refusal with the line the proxy answers, tables, one row a case.
#include "sbx/net/http1.hpp"

#include <doctest/doctest.h>

#include <string>
#include <string_view>

namespace {

namespace http1 = sbx::net::http1;
using Form = http1::ProxyRequest::Form;
using State = http1::HeadScan::State;

}  // namespace

TEST_CASE("http1: where a head ends, and how large it may be") {
    CHECK(http1::head_end("GET / HTTP/1.1\r\n\r\nbody", 0) == 18);
    CHECK(http1::head_end("GET / HTTP/1.1\n\nbody", 0) == 16);
    CHECK(http1::head_end("GET / HTTP/1.1\n\r\n", 0) == 17);
    CHECK(http1::head_end("GET / HTTP/1.1\r\nX: y\r\n", 0) == std::string_view::npos);
    CHECK(http1::head_end("", 0) == std::string_view::npos);
    // Looking from the new bytes on still finds a blank line that began before them.
    CHECK(http1::head_end("GET / HTTP/1.1\r\n\r\n", 17) == 18);
    CHECK(http1::head_end("GET / HTTP/1.1\r\n\r\n", 100) == std::string_view::npos);  // never read past the bytes

    CHECK(http1::scan_head("GET / HTTP/1.1\r\n", 0, 64).state == State::more);
    const auto done = http1::scan_head("GET / HTTP/1.1\r\n\r\nrest", 0, 18);
    CHECK(done.state == State::complete);
    CHECK(done.end == 18);
    CHECK(http1::scan_head("GET / HTTP/1.1\r\n\r\n", 0, 17).state == State::too_large);  // the blank line counts
    CHECK(http1::scan_head(std::string(65, 'a'), 0, 64).state == State::too_large);      // not ended, already over
    CHECK(http1::scan_head(std::string(64, 'a'), 0, 64).state == State::more);
}

TEST_CASE("http1: a request line and headers") {
    auto r = http1::parse_request("GET http://a.test/x HTTP/1.1\r\nHost:  a.test \r\nX-Tab: a\tb\r\nEmpty:\r\n\r\n");
    REQUIRE(r.has_value());
    CHECK(r->method == "GET");
    CHECK(r->target == "http://a.test/x");
    CHECK(r->version == "HTTP/1.1");
    REQUIRE(r->headers.size() == 3);
    CHECK(r->headers[0].name == "Host");
    CHECK(r->headers[0].value == "a.test");
    CHECK(r->headers[1].value == "a\tb");
    CHECK(r->headers[2].value.empty());
    auto bare = http1::parse_request("GET / HTTP/1.0\n\n");
    REQUIRE(bare.has_value());
    CHECK(bare->version == "HTTP/1.0");
}

TEST_CASE("http1: every refusal of a request head, with its reason") {
    struct Row {
        std::string_view head;
        std::string_view why;
    };
    const Row rows[] = {
        {"\r\n\r\n", "the request line is empty"},
        {"", "the request line is empty"},
        {"garbage\r\n\r\n", "the request line is not METHOD TARGET VERSION"},
        {"GET /\r\n\r\n", "the request line is not METHOD TARGET VERSION"},
        {"GET  / HTTP/1.1\r\n\r\n", "the request line is not METHOD TARGET VERSION"},
        {"GET / HTTP/1.1 \r\n\r\n", "the request line is not METHOD TARGET VERSION"},
        {"GET / HTTP/1.1 x\r\n\r\n", "the request line is not METHOD TARGET VERSION"},
        {" GET / HTTP/1.1\r\n\r\n", "the request line is not METHOD TARGET VERSION"},
        {" / HTTP/1.1\r\n\r\n", "the method is not a token"},
        {"GET  HTTP/1.1\r\n\r\n", "the request target is empty or has a character that is not visible ASCII"},
        {"G(T / HTTP/1.1\r\n\r\n", "the method is not a token"},
        {"GET /\x7f HTTP/1.1\r\n\r\n", "the request target is empty or has a character that is not visible ASCII"},
        {"GET /\x80 HTTP/1.1\r\n\r\n", "the request target is empty or has a character that is not visible ASCII"},
        {"GET /\t HTTP/1.1\r\n\r\n", "the request target is empty or has a character that is not visible ASCII"},
        {"GET / HTTP/2.0\r\n\r\n", "the version is not HTTP/1.0 or HTTP/1.1"},
        {"GET / http/1.1\r\n\r\n", "the version is not HTTP/1.0 or HTTP/1.1"},
        {"GET / HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n", "a header line is folded"},
        {"GET / HTTP/1.1\r\nX-A: 1\r\n\tfolded\r\n\r\n", "a header line is folded"},
        {"GET / HTTP/1.1\r\nBad Header: x\r\n\r\n", "a header line is not NAME: VALUE"},
        {"GET / HTTP/1.1\r\nNo-Colon\r\n\r\n", "a header line is not NAME: VALUE"},
        {"GET / HTTP/1.1\r\n: no name\r\n\r\n", "a header line is not NAME: VALUE"},
        {"GET / HTTP/1.1\r\nX-A: a\x01z\r\n\r\n", "a header value has a control character"},
        {"GET / HTTP/1.1\r\nX-A: a\x7fz\r\n\r\n", "a header value has a control character"},
        {"GET / HTTP/1.1\r\nX-A: a\rz\r\n\r\n", "a header value has a control character"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.head);
        auto p = http1::parse_request(r.head);
        REQUIRE_FALSE(p.has_value());
        CHECK(p.error().code == sbx::Errc::invalid_argument);
        CHECK(p.error().message == r.why);
    }
}

TEST_CASE("http1: what a proxy request names") {
    struct Row {
        std::string_view head;
        Form form;
        std::string_view host;
        std::uint16_t port;
        std::string_view authority, path;
    };
    const Row rows[] = {
        {"CONNECT a.test:443 HTTP/1.1\r\n\r\n", Form::connect, "a.test", 443, "", ""},
        {"CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", Form::connect, "[::1]", 8443, "", ""},
        {"CONNECT a.test:0443 HTTP/1.1\r\n\r\n", Form::connect, "a.test", 443, "", ""},  // clients may pad
        {"GET http://a.test/x?y HTTP/1.1\r\n\r\n", Form::absolute, "a.test", 80, "a.test", "/x?y"},
        {"GET http://a.test HTTP/1.1\r\n\r\n", Form::absolute, "a.test", 80, "a.test", "/"},
        {"GET http://a.test?q HTTP/1.1\r\n\r\n", Form::absolute, "a.test", 80, "a.test", "/?q"},
        {"GET http://a.test#frag HTTP/1.1\r\n\r\n", Form::absolute, "a.test", 80, "a.test", "/"},
        {"GET http://a.test/p#frag HTTP/1.1\r\n\r\n", Form::absolute, "a.test", 80, "a.test", "/p"},
        {"GET HTTP://A.test:8080/ HTTP/1.0\r\n\r\n", Form::absolute, "A.test", 8080, "A.test:8080", "/"},
        {"POST http://[::1]:81/p HTTP/1.1\r\n\r\n", Form::absolute, "[::1]", 81, "[::1]:81", "/p"},
        {"GET http://2852039166/ HTTP/1.1\r\n\r\n", Form::absolute, "2852039166", 80, "2852039166", "/"},  // canonical_target's to judge
    };
    for (const auto& r : rows) {
        CAPTURE(r.head);
        auto p = http1::parse_proxy_request(r.head);
        REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : p.error().message));
        CHECK(p->form == r.form);
        CHECK(p->host == r.host);
        CHECK(p->port == r.port);
        CHECK(p->authority == r.authority);
        CHECK(p->path == r.path);
    }
}

TEST_CASE("http1: every refusal of a proxy request, with the line the proxy answers 400 with") {
    struct Row {
        std::string_view head;
        std::string_view line;
    };
    const Row rows[] = {
        {"nonsense\r\n\r\n", "sbx: bad request: the request line is not METHOD TARGET VERSION"},
        {"GET http://a.test/ HTTP/2.0\r\n\r\n", "sbx: bad request: the version is not HTTP/1.0 or HTTP/1.1"},
        {"GET /path HTTP/1.1\r\nHost: a.test\r\n\r\n",
         "sbx: this is a proxy: ask for an absolute URL (GET http://host/path) or CONNECT host:port"},
        {"OPTIONS * HTTP/1.1\r\n\r\n", "sbx: this is a proxy: ask for an absolute URL (GET http://host/path) or CONNECT host:port"},
        {"GET ftp://a.test/ HTTP/1.1\r\n\r\n", "sbx: the proxy forwards http:// URLs; use CONNECT for anything else"},
        {"GET https://a.test/ HTTP/1.1\r\n\r\n", "sbx: the proxy forwards http:// URLs; use CONNECT for anything else"},
        {"GET http:/ HTTP/1.1\r\n\r\n", "sbx: the proxy forwards http:// URLs; use CONNECT for anything else"},
        {"GET http://user:pw@a.test/ HTTP/1.1\r\n\r\n", "sbx: a URL with user information is not forwarded"},
        {"GET http://@a.test/ HTTP/1.1\r\n\r\n", "sbx: a URL with user information is not forwarded"},
        {"GET http:///path HTTP/1.1\r\n\r\n", "sbx: bad URL: the host is empty"},
        {"GET http://:80/ HTTP/1.1\r\n\r\n", "sbx: bad URL: the host is empty"},
        {"GET http://a.test:/ HTTP/1.1\r\n\r\n", "sbx: bad URL: the port is not a number from 1 to 65535"},
        {"GET http://a.test:0/ HTTP/1.1\r\n\r\n", "sbx: bad URL: the port is not a number from 1 to 65535"},
        {"GET http://a.test:65536/ HTTP/1.1\r\n\r\n", "sbx: bad URL: the port is not a number from 1 to 65535"},
        {"GET http://::1/ HTTP/1.1\r\n\r\n", "sbx: bad URL: an IPv6 address is written in brackets, [::1]"},
        {"GET http://[::1/ HTTP/1.1\r\n\r\n", "sbx: bad URL: a '[' without its ']'"},
        {"GET http://[::1]x/ HTTP/1.1\r\n\r\n", "sbx: bad URL: something after ']' that is not ':PORT'"},
        {"CONNECT a.test HTTP/1.1\r\n\r\n", "sbx: CONNECT takes HOST:PORT: no port"},
        {"CONNECT [::1] HTTP/1.1\r\n\r\n", "sbx: CONNECT takes HOST:PORT: no port"},
        {"CONNECT a.test:0 HTTP/1.1\r\n\r\n", "sbx: CONNECT takes HOST:PORT: the port is not a number from 1 to 65535"},
        {"CONNECT a.test:99999 HTTP/1.1\r\n\r\n", "sbx: CONNECT takes HOST:PORT: the port is not a number from 1 to 65535"},
        {"CONNECT a.test:80x HTTP/1.1\r\n\r\n", "sbx: CONNECT takes HOST:PORT: the port is not a number from 1 to 65535"},
        {"CONNECT ::1:80 HTTP/1.1\r\n\r\n", "sbx: CONNECT takes HOST:PORT: an IPv6 address is written in brackets, [::1]"},
        {"CONNECT [::1:80 HTTP/1.1\r\n\r\n", "sbx: CONNECT takes HOST:PORT: a '[' without its ']'"},
        {"CONNECT :443 HTTP/1.1\r\n\r\n", "sbx: CONNECT takes HOST:PORT: the host is empty"},
        {"CONNECT http://a.test:443 HTTP/1.1\r\n\r\n",
         "sbx: CONNECT takes HOST:PORT: an IPv6 address is written in brackets, [::1]"},
        {"connect a.test:443 HTTP/1.1\r\n\r\n", "sbx: the proxy forwards http:// URLs; use CONNECT for anything else"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.head);
        auto p = http1::parse_proxy_request(r.head);
        REQUIRE_FALSE(p.has_value());
        CHECK(p.error().code == sbx::Errc::invalid_argument);
        CHECK(p.error().message == r.line);
    }
}

TEST_CASE("http1: the request the origin gets") {
    auto p = http1::parse_proxy_request(
        "POST http://a.test:8080/p?q HTTP/1.1\r\nHost: evil.test\r\nProxy-Authorization: Basic x\r\n"
        "Connection: keep-alive, X-Secret, Content-Length\r\nX-Secret: 1\r\nKeep-Alive: 5\r\nTE: trailers\r\n"
        "Upgrade: h2c\r\nProxy-Connection: x-other\r\nX-Other: 2\r\nContent-Length: 3\r\nUser-Agent: t\r\n\r\n");
    REQUIRE(p.has_value());
    CHECK(http1::upstream_request(p->request, p->path, p->authority) ==
          "POST /p?q HTTP/1.1\r\nHost: a.test:8080\r\nContent-Length: 3\r\nUser-Agent: t\r\nConnection: close\r\n\r\n");
}

TEST_CASE("http1: the response head the client gets") {
    bool interim = true;
    CHECK(http1::client_response_head("HTTP/1.1 200 OK\r\nConnection: keep-alive, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: 5\r\n"
                                      "Content-Length: 2\r\nodd line\r\n\r\n",
                                      interim) == "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nodd line\r\nConnection: close\r\n\r\n");
    CHECK_FALSE(interim);
    CHECK(http1::client_response_head("HTTP/1.1 100 Continue\r\n\r\n", interim) == "HTTP/1.1 100 Continue\r\n\r\n");
    CHECK(interim);
    CHECK(http1::client_response_head("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", interim) ==
          "HTTP/1.1 101 Switching Protocols\r\nConnection: close\r\n\r\n");
    CHECK_FALSE(interim);
    CHECK(http1::client_response_head("HTTP/1.1\r\n\r\n", interim) == "HTTP/1.1\r\nConnection: close\r\n\r\n");
    CHECK_FALSE(interim);
}

TEST_CASE("http1: the proxy's own answers") {
    CHECK(http1::error_response(403, "Forbidden", "sbx: a.test:80 refused:\r\nX-Injected: 1") ==
          "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 39\r\n"
          "Connection: close\r\n\r\nsbx: a.test:80 refused:  X-Injected: 1\n");
    CHECK(http1::one_line("a\x01\x7f\tb") == "a   b");
    CHECK(http1::error_response(407, "Proxy Authentication Required", "sbx: no", "A: 1\r\nB: 2\r\n") ==
          "HTTP/1.1 407 Proxy Authentication Required\r\nContent-Type: text/plain; charset=utf-8\r\n"
          "Content-Length: 8\r\nConnection: close\r\nA: 1\r\nB: 2\r\n\r\nsbx: no\n");
}
