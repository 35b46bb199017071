// Fuzzing the proxy's HTTP/1 head rules (sbx/net/http1.hpp).
//
// Any bytes are a request head or a refusal with the line the proxy answers
// ("sbx: ..."), and nothing throws. Scanning for the head's end from where new
// bytes begin finds what a scan from the start finds. An accepted request names
// a host that splits again into itself: CONNECT's host:port, an absolute URL's
// authority. The request the origin gets is itself a head the parser accepts,
// with the same method and version, the origin-form path, one Host header and no
// hop-by-hop header; the response head the client gets ends at its blank line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "check.hpp"
#include "sbx/net/http1.hpp"

namespace {

namespace http1 = sbx::net::http1;

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

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    check_scan(text);
    const std::size_t end = http1::head_end(text, 0);
    const std::string_view head = end == std::string_view::npos ? text : text.substr(0, end);
    check_request(head);

    bool interim = false;
    const std::string response = http1::client_response_head(head, interim);
    check(http1::head_end(response, 0) == response.size(), "the client's response head ends at its blank line");
    check(interim || response.ends_with("Connection: close\r\n\r\n"), "a final response says Connection: close");
    return 0;
}
