// Fuzzing the proxy's HTTP/1 head rules (sbx/net/http1.hpp).
//
// Any bytes are a request head or a refusal with the line the proxy answers
// ("sbx: ..."), and nothing throws. Scanning for the head's end from where new
// bytes begin finds what a scan from the start finds. An accepted request names
// a host that splits again into itself: CONNECT's host:port, an absolute URL's
// authority. The request the origin gets is itself a head the parser accepts,
// with the same method and version, the origin-form path, one Host header and no
// hop-by-hop header; the response head the client gets ends at its blank line.
// The proxy's credentials (sbx/net/proxy_auth.hpp): any value is Basic
// credentials or a refusal saying why; accepted ones are the one encoding of
// what they decode to; a request is allowed only with the secret as its password,
// and the 407 for any other is a head with one line of body.
// ssh's relay (sbx/net/ssh_proxy.hpp): any bytes are a proxy URL, a host and a
// CONNECT answer or a refusal; an accepted URL's credentials come back from the
// request the relay writes, which the proxy's parser accepts with that host.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "sbx/net/http1.hpp"
#include "sbx/net/proxy_auth.hpp"
#include "sbx/net/ssh_proxy.hpp"
#include "../base64_encode.hpp"

namespace {

namespace http1 = sbx::net::http1;
namespace proxy_auth = sbx::net::proxy_auth;

using sbx::fuzz::check;

constexpr std::size_t kMax = 64 * 1024;  // the proxy's default max_header_bytes

void check_scan(std::string_view text) {
    const std::size_t whole = http1::head_end(text, 0);
    check(whole == std::string_view::npos || (whole >= 2 && whole <= text.size()), "a head ends inside the bytes");
    // The proxy looks again from where each read's bytes begin.
    const std::size_t from = text.size() / 2;
    if (http1::head_end(text.substr(0, from), 0) != std::string_view::npos) return;  // it would have stopped there
    check(http1::head_end(text, from) == whole, "looking from the new bytes finds the same end");
    const auto scan = http1::scan_head(text, from, kMax);
    if (scan.state == http1::HeadScan::State::complete) check(scan.end == whole && whole <= kMax, "a complete head is within the limit");
    if (scan.state == http1::HeadScan::State::more) check(whole == std::string_view::npos && text.size() <= kMax, "more only under the limit");
}

void check_upstream(const http1::ProxyRequest& p) {
    const std::string out = http1::upstream_request(p.request, p.path, p.authority);
    check(http1::head_end(out, 0) == out.size(), "the origin's request ends at its blank line");
    auto again = http1::parse_request(out);
    check(again.has_value(), "the origin's request is a request");
    check(again->method == p.request.method && again->version == p.request.version, "same method and version");
    check(again->target == p.path, "the origin gets the path in origin form");
    std::size_t hosts = 0;
    for (const auto& h : again->headers) {
        if (sbx::ascii_iequals(h.name, "host")) ++hosts;
        for (const std::string_view hop : {"proxy-authorization", "proxy-connection", "keep-alive", "te", "upgrade"})
            check(!sbx::ascii_iequals(h.name, hop), "no hop-by-hop header reaches the origin");
    }
    check(hosts == 1, "one Host header");
}

void check_request(std::string_view head) {
    auto p = http1::parse_proxy_request(head);
    if (!p) {
        check(p.error().message.starts_with("sbx: "), "a refusal is the proxy's line");
        const std::string answer = http1::error_response(400, "Bad Request", p.error().message);
        check(http1::head_end(answer, 0) != std::string::npos, "the answer has a head");
        check(answer.find('\n', http1::head_end(answer, 0)) == answer.size() - 1, "the answer's body is one line");
        return;
    }
    check(!p->host.empty() && p->port != 0, "an accepted request names a host and a port");
    if (p->form == http1::ProxyRequest::Form::connect) {
        const std::string written = std::string(p->host) + ":" + std::to_string(p->port);
        auto again = sbx::net::split_host_port(written, http1::kClientHostPort);
        check(again && again->host == p->host && again->port == p->port, "CONNECT's host:port splits again into itself");
        return;
    }
    auto again = sbx::net::split_host_port(p->authority, http1::kClientHostPort);
    check(again && again->host == p->host && again->port.value_or(80) == p->port, "the URL's authority splits again into itself");
    check(p->authority.find('@') == std::string_view::npos, "no user information");
    check(!p->path.empty() && p->path.front() == '/' && p->path.find('#') == std::string::npos, "an origin-form path");
    check_upstream(*p);
}

using sbx_test::base64;

void check_basic(std::string_view value) {
    const auto decoded = proxy_auth::decode_base64(value);
    if (decoded) check(base64(*decoded) == value, "decoded base64 is the one encoding of its bytes");
    const auto c = proxy_auth::parse_basic(value);
    if (!c) {
        check(!c.error().message.empty(), "a refusal says why");
        return;
    }
    check(c->user.find(':') == std::string::npos, "the user ends at the first colon");
    check(value.size() > 6 && base64(c->user + ":" + c->password) == value.substr(6),
          "accepted credentials are the one encoding of user:password");
}

void check_credentials(const http1::Request& r) {
    constexpr std::string_view kSecret = "secret";
    const auto d = proxy_auth::check_request(r, kSecret);
    check(proxy_auth::check_request(r, "").verdict == proxy_auth::Decision::Verdict::allowed, "no secret: all allowed");
    std::size_t presented = 0;
    for (const auto& h : r.headers) {
        if (!sbx::ascii_iequals(h.name, "proxy-authorization")) continue;
        ++presented;
        check_basic(h.value);
        if (d.verdict == proxy_auth::Decision::Verdict::allowed) {
            const auto c = proxy_auth::parse_basic(h.value);
            check(c && c->password == kSecret, "allowed only with the secret as the password");
        }
    }
    if (d.verdict == proxy_auth::Decision::Verdict::allowed) {
        check(presented == 1, "allowed with exactly one Proxy-Authorization header");
        return;
    }
    check(!d.why.empty(), "a 407 says why");
    const std::string answer = proxy_auth::required_response(d.why);
    check(answer.starts_with("HTTP/1.1 407 "), "a 407");
    check(answer.find('\n', http1::head_end(answer, 0)) == answer.size() - 1, "the 407's body is one line");
}

void check_relay(std::string_view text) {
    if (auto reply = sbx::net::parse_connect_reply(text)) {
        check(reply->status >= 0 && reply->status <= 999, "a status of three digits");
        for (const char c : reply->reason) check(!sbx::ascii_control(c), "no control byte in the reason");
    }
    const auto url = sbx::net::parse_proxy_url(text);
    const auto host = sbx::net::relay_host(text);
    if (!url && !host) return;
    const sbx::net::ProxyUrl plain;
    const std::string request =
        sbx::net::connect_request(host ? std::string_view(*host) : "h", 22, url ? *url : plain);
    auto parsed = http1::parse_proxy_request(request);
    check(parsed.has_value(), "the relay's request is one the proxy accepts");
    if (host) check(parsed->port == 22 && parsed->request.target == sbx::net::connect_target(*host, 22),
                    "the proxy reads the relay's host and port back");
    if (url && url->credentials) {
        auto head = http1::parse_request(request);
        check(head && proxy_auth::check_request(*head, url->password).verdict == proxy_auth::Decision::Verdict::allowed,
              "the relay presents the URL's password as the secret");
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_scan(text);
    const std::size_t end = http1::head_end(text, 0);
    const std::string_view head = end == std::string_view::npos ? text : text.substr(0, end);
    check_request(head);
    check_basic(text);
    check_relay(text);
    if (const auto r = http1::parse_request(head)) check_credentials(*r);

    bool interim = false;
    const std::string response = http1::client_response_head(head, interim);
    check(http1::head_end(response, 0) == response.size(), "the client's response head ends at its blank line");
    check(interim || response.ends_with("Connection: close\r\n\r\n"), "a final response says Connection: close");
    return 0;
}
