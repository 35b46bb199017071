// sbx/net/http1.hpp - an HTTP/1 proxy request head, read from bytes, and the heads the proxy writes.
//
// The proxy serves one request per client connection: CONNECT host:port, or an
// absolute http:// URL it forwards in origin form. This header holds every rule
// it applies to the bytes, as pure functions, so that a table can test them and a
// fuzzer can feed them anything: where a head ends and how large it may be
// (scan_head), what a request line and header lines must look like
// (parse_request), what a proxy request must name (parse_proxy_request), and the
// heads it writes: the request the origin gets (upstream_request), the response
// head the client gets (client_response_head), and its own answers
// (error_response). The sockets, the deadlines and the host decision are the
// proxy's (launchers/proxy/http.cpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/ascii.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/net/host_port.hpp"

namespace sbx::net::http1 {

// ---- The head --------------------------------------------------------------------

// Where the head in `data` ends (just past its blank line), looking from about
// `from` on (where the bytes new since the last look begin); npos while it has not
// ended. Lines end in CRLF or a bare LF.
SBX_INLINE std::size_t head_end(std::string_view data, std::size_t from);

// What the bytes of a request so far hold.
struct HeadScan {
    enum class State {
        more,       // the head has not ended: read on
        complete,   // it ends at `end`; what follows is the body or a pipelined request
        too_large,  // it is (or will be) over the limit: answered 431
    };
    State state = State::more;
    std::size_t end = std::string_view::npos;
};

// Scans `data` for the end of its head, the bytes from `from` on being new, with
// a head of at most `max_bytes` (its blank line included).
SBX_INLINE HeadScan scan_head(std::string_view data, std::size_t from, std::size_t max_bytes);

// The lines of a head, each without its line end, up to (not including) the blank one.
SBX_INLINE std::vector<std::string_view> head_lines(std::string_view head);

namespace detail {

constexpr bool is_tchar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

constexpr bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

constexpr std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

}  // namespace detail

// ---- The request ------------------------------------------------------------------

struct Header {
    std::string_view name, value;  // value without the spaces around it
};

// A request head, as views into the bytes it was parsed from.
struct Request {
    std::string_view method, target, version;
    std::vector<Header> headers;
};

// The request in `head` (its bytes through the blank line). A request line of a
// token, one space, a target of visible ASCII, one space and HTTP/1.0 or
// HTTP/1.1; header lines of a token, a colon and a value without control
// characters; no folded lines. Fails (INVALID_ARGUMENT) with the rule it breaks.
SBX_INLINE expected<Request> parse_request(std::string_view head);

// A request as the proxy serves it.
struct ProxyRequest {
    enum class Form {
        connect,   // CONNECT host:port: a tunnel
        absolute,  // METHOD http://authority/path: forwarded in origin form
    };
    Form form = Form::connect;
    Request request;
    std::string_view host;       // as the client wrote it (an IPv6 address in brackets), for canonical_target
    std::uint16_t port = 0;      // CONNECT's, the URL's, or 80
    std::string_view authority;  // absolute: the URL's host[:port], the origin's Host header
    std::string path;            // absolute: origin form ("/" for none), without the fragment
};

// Clients write ports as RFC 3986 does, zeros and all; IPv6 addresses in brackets.
inline constexpr HostPortRules kClientHostPort{.zeros = PortZeros::allowed, .bare_ipv6 = BareIpv6::refused};

// The request in `head` as the proxy serves it: CONNECT with host:port, or an
// absolute http:// URL without user information. Fails (INVALID_ARGUMENT) with
// the line the proxy answers 400 Bad Request with: "sbx: " and why.
SBX_INLINE expected<ProxyRequest> parse_proxy_request(std::string_view head);

// ---- The heads the proxy writes -----------------------------------------------------

namespace detail {

// The lower-case names a Connection (or Proxy-Connection) header lists, which are
// hop-by-hop too. The framing headers stay whatever it lists: the origin needs
// them to find where a body ends.
SBX_INLINE void add_listed(std::vector<std::string>& names, std::string_view value);

// Headers that describe one hop, never passed on (RFC 9110 7.6.1), and those the
// message's Connection headers list.
SBX_INLINE bool is_hop_by_hop(std::string_view name, const std::vector<std::string>& listed);

}  // namespace detail

// The request as the origin gets it: origin-form `path`, Host `authority` (the
// URL's), no hop-by-hop headers, `Connection: close`.
SBX_INLINE std::string upstream_request(const Request& r, std::string_view path, std::string_view authority);

// A response head (through its blank line) as the client gets it: hop-by-hop
// headers left out and, but for an interim (1xx) response, `Connection: close`
// added. `interim` says whether it was one, so that the next head is rewritten too.
// Lenient: lines it does not understand pass as they are.
SBX_INLINE std::string client_response_head(std::string_view head, bool& interim);

// `s` on one line of printable text: control characters become spaces.
SBX_INLINE std::string one_line(std::string_view s);

// The proxy's own answer: status `code` and `phrase`, `line` (on one line) as a
// plain-text body, `Connection: close`, and `headers` (each line "Name:
// value\r\n", the caller's own text) after those.
SBX_INLINE std::string error_response(int code, std::string_view phrase, std::string_view line, std::string_view headers = {});

}  // namespace sbx::net::http1

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_NET)

namespace sbx::net::http1 {

SBX_INLINE std::size_t head_end(std::string_view data, std::size_t from) {
    for (std::size_t i = from >= 2 ? from - 2 : 0; i < data.size(); ++i) {
        if (data[i] != '\n') continue;
        if (i + 1 < data.size() && data[i + 1] == '\n') return i + 2;
        if (i + 2 < data.size() && data[i + 1] == '\r' && data[i + 2] == '\n') return i + 3;
    }
    return std::string_view::npos;
}

SBX_INLINE HeadScan scan_head(std::string_view data, std::size_t from, std::size_t max_bytes) {
    const std::size_t end = head_end(data, from);
    if (end == std::string_view::npos)
        return {data.size() > max_bytes ? HeadScan::State::too_large : HeadScan::State::more, end};
    return {end > max_bytes ? HeadScan::State::too_large : HeadScan::State::complete, end};
}

SBX_INLINE std::vector<std::string_view> head_lines(std::string_view head) {
    std::vector<std::string_view> lines;
    while (!head.empty()) {
        const auto nl = head.find('\n');
        std::string_view line = head.substr(0, nl);
        head.remove_prefix(nl == std::string_view::npos ? head.size() : nl + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) break;
        lines.push_back(line);
    }
    return lines;
}

SBX_INLINE expected<Request> parse_request(std::string_view head) {
    auto refuse = [](const char* why) -> expected<Request> { return fail(Errc::invalid_argument, why); };
    const auto lines = head_lines(head);
    if (lines.empty()) return refuse("the request line is empty");
    Request r;
    const std::string_view first = lines.front();
    const auto sp1 = first.find(' ');
    const auto sp2 = sp1 == std::string_view::npos ? sp1 : first.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || first.find(' ', sp2 + 1) != std::string_view::npos)
        return refuse("the request line is not METHOD TARGET VERSION");
    r.method = first.substr(0, sp1);
    r.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
    r.version = first.substr(sp2 + 1);
    if (!detail::is_token(r.method)) return refuse("the method is not a token");
    if (r.target.empty() || !std::all_of(r.target.begin(), r.target.end(), [](char c) { return c > 0x20 && c < 0x7f; }))
        return refuse("the request target is empty or has a character that is not visible ASCII");
    if (r.version != "HTTP/1.1" && r.version != "HTTP/1.0") return refuse("the version is not HTTP/1.0 or HTTP/1.1");
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const std::string_view line = lines[i];
        if (line.front() == ' ' || line.front() == '\t') return refuse("a header line is folded");
        const auto colon = line.find(':');
        if (colon == std::string_view::npos || !detail::is_token(line.substr(0, colon)))
            return refuse("a header line is not NAME: VALUE");
        const std::string_view value = detail::trim(line.substr(colon + 1));
        for (const char c : value) {
            const auto u = static_cast<unsigned char>(c);
            if ((u < 0x20 && c != '\t') || u == 0x7f) return refuse("a header value has a control character");
        }
        r.headers.push_back({line.substr(0, colon), value});
    }
    return r;
}

SBX_INLINE expected<ProxyRequest> parse_proxy_request(std::string_view head) {
    auto refuse = [](std::string line) -> expected<ProxyRequest> { return fail(Errc::invalid_argument, std::move(line)); };
    auto request = parse_request(head);
    if (!request) return refuse("sbx: bad request: " + request.error().message);
    ProxyRequest out;
    out.request = std::move(*request);
    const std::string_view target = out.request.target;

    if (out.request.method == "CONNECT") {
        auto split = split_host_port(target, kClientHostPort);
        if (!split) return refuse("sbx: CONNECT takes HOST:PORT: " + split.error().message);
        if (!split->port) return refuse("sbx: CONNECT takes HOST:PORT: no port");
        out.form = ProxyRequest::Form::connect;
        out.host = split->host;
        out.port = *split->port;
        return out;
    }

    constexpr std::string_view kScheme = "http://";
    if (target.size() < kScheme.size() || !ascii_iequals(target.substr(0, kScheme.size()), kScheme)) {
        const bool origin_form = target.front() == '/' || target == "*";
        return refuse(origin_form ? "sbx: this is a proxy: ask for an absolute URL (GET http://host/path) or CONNECT host:port"
                                  : "sbx: the proxy forwards http:// URLs; use CONNECT for anything else");
    }
    const std::string_view after = target.substr(kScheme.size());
    const auto cut = after.find_first_of("/?#");
    out.form = ProxyRequest::Form::absolute;
    out.authority = after.substr(0, cut);
    out.path = std::string(cut == std::string_view::npos ? std::string_view("/") : after.substr(cut));
    if (const auto hash = out.path.find('#'); hash != std::string::npos) out.path.erase(hash);
    if (out.path.empty() || out.path.front() != '/') out.path.insert(0, "/");
    if (out.authority.find('@') != std::string_view::npos) return refuse("sbx: a URL with user information is not forwarded");
    auto split = split_host_port(out.authority, kClientHostPort);
    if (!split) return refuse("sbx: bad URL: " + split.error().message);
    out.host = split->host;
    out.port = split->port.value_or(80);
    return out;
}

}  // namespace sbx::net::http1

namespace sbx::net::http1::detail {

SBX_INLINE void add_listed(std::vector<std::string>& names, std::string_view value) {
    while (!value.empty()) {
        const auto comma = value.find(',');
        const std::string name = ascii_lower(trim(value.substr(0, comma)));
        value.remove_prefix(comma == std::string_view::npos ? value.size() : comma + 1);
        if (!name.empty() && name != "content-length" && name != "transfer-encoding") names.push_back(name);
    }
}

SBX_INLINE bool is_hop_by_hop(std::string_view name, const std::vector<std::string>& listed) {
    static constexpr std::string_view kHopByHop[] = {"connection", "proxy-connection",    "keep-alive", "proxy-authorization",
                                                     "te",         "proxy-authenticate", "upgrade"};
    for (const auto h : kHopByHop)
        if (ascii_iequals(name, h)) return true;
    const std::string n = ascii_lower(name);
    return std::find(listed.begin(), listed.end(), n) != listed.end();
}

}  // namespace sbx::net::http1::detail

namespace sbx::net::http1 {

SBX_INLINE std::string upstream_request(const Request& r, std::string_view path, std::string_view authority) {
    std::vector<std::string> listed;
    for (const auto& h : r.headers)
        if (ascii_iequals(h.name, "connection") || ascii_iequals(h.name, "proxy-connection")) detail::add_listed(listed, h.value);
    std::string out;
    out.reserve(1024);
    out.append(r.method).append(" ").append(path).append(" ").append(r.version).append("\r\n");
    out.append("Host: ").append(authority).append("\r\n");
    for (const auto& h : r.headers) {
        if (ascii_iequals(h.name, "host") || detail::is_hop_by_hop(h.name, listed)) continue;
        out.append(h.name).append(": ").append(h.value).append("\r\n");
    }
    out.append("Connection: close\r\n\r\n");
    return out;
}

SBX_INLINE std::string client_response_head(std::string_view head, bool& interim) {
    const auto lines = head_lines(head);
    interim = false;
    if (!lines.empty()) {
        const std::string_view status = lines.front();
        const auto sp = status.find(' ');
        if (sp != std::string_view::npos && sp + 4 <= status.size()) {
            const std::string_view code = status.substr(sp + 1, 3);
            interim = code[0] == '1' && code != "101";
        }
    }
    std::vector<std::string> listed;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const auto colon = lines[i].find(':');
        if (colon == std::string_view::npos) continue;
        const std::string_view name = detail::trim(lines[i].substr(0, colon));
        if (ascii_iequals(name, "connection") || ascii_iequals(name, "proxy-connection"))
            detail::add_listed(listed, lines[i].substr(colon + 1));
    }
    std::string out;
    out.reserve(head.size() + 32);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto colon = lines[i].find(':');
        if (i > 0 && colon != std::string_view::npos && detail::is_hop_by_hop(detail::trim(lines[i].substr(0, colon)), listed))
            continue;
        out.append(lines[i]).append("\r\n");
    }
    if (!interim) out.append("Connection: close\r\n");
    out.append("\r\n");
    return out;
}

SBX_INLINE std::string one_line(std::string_view s) { return replace_controls(s, ' '); }

SBX_INLINE std::string error_response(int code, std::string_view phrase, std::string_view line, std::string_view headers) {
    const std::string body = one_line(line) + "\n";
    return "HTTP/1.1 " + std::to_string(code) + " " + std::string(phrase) +
           "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n" + std::string(headers) + "\r\n" + body;
}

}  // namespace sbx::net::http1
#endif
