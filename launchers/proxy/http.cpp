// The proxy's HTTP side: a client's request head read with a deadline, judged by
// sbx/net/http1.hpp, its credentials by sbx/net/proxy_auth.hpp, its host
// reached, and the request tunnelled (CONNECT) or forwarded in origin form
// (without its Proxy-Authorization, a hop-by-hop header) with its response
// heads rewritten.
#include <string>
#include <utility>

#include "proxy/state.hpp"
#include "sbx/net/http1.hpp"
#include "sbx/net/proxy_auth.hpp"

namespace sbx::proxy::detail {

namespace {

namespace http1 = sbx::net::http1;

// Answers a client whose request reach() did not connect.
void answer_unreached(const State& s, Fd& client, const Reached& r, std::string_view host_text) {
    using Kind = Reached::Kind;
    switch (r.kind) {
        case Kind::malformed:
            return answer_and_close(s, client, http1::error_response(400, "Bad Request", "sbx: '" + std::string(host_text) + "' is not a host: " + r.reason));
        case Kind::refused:
            return answer_and_close(s, client, http1::error_response(403, "Forbidden", "sbx: " + display(r.target) + " refused: " + r.reason));
        case Kind::unresolved:
        case Kind::unreachable:
            return answer_and_close(s, client, http1::error_response(502, "Bad Gateway", "sbx: " + display(r.target) + " unreachable: " + r.reason));
        case Kind::connected:
        case Kind::stopped: return;
    }
}

}  // namespace

void serve_http(State& s, Fd& client) {
    const auto deadline = after_ms(s.options.header_timeout_ms);
    const std::size_t max = s.options.max_header_bytes;
    std::string data;
    http1::HeadScan scan;
    char buf[16 * 1024];
    while (scan.state == http1::HeadScan::State::more) {
        std::size_t got = 0;
        if (read_some(s.stop_event.fd(), client.get(), buf, sizeof buf, deadline, got) != Io::ok) return;  // silent, slow or gone
        const std::size_t from = data.size();
        data.append(buf, got);
        scan = http1::scan_head(data, from, max);
        if (scan.state == http1::HeadScan::State::too_large)
            return answer_and_close(s, client, http1::error_response(431, "Request Header Fields Too Large",
                                                                     "sbx: the request head is over " + std::to_string(max) + " bytes"));
    }
    const std::string_view head = std::string_view(data).substr(0, scan.end);
    const std::string_view rest = std::string_view(data).substr(scan.end);
    const auto request = http1::parse_proxy_request(head);
    if (!request) return answer_and_close(s, client, http1::error_response(400, "Bad Request", request.error().message));
    // Before anything is decided: a client without the secret learns nothing of the rules.
    const auto auth = sbx::net::proxy_auth::check_request(request->request, s.options.secret);
    if (auth.verdict != sbx::net::proxy_auth::Decision::Verdict::allowed) {
        ++s.refused_clients;
        return answer_and_close(s, client, sbx::net::proxy_auth::required_response(auth.why));
    }

    if (request->form == http1::ProxyRequest::Form::connect) {
        Reached r = reach(s, request->host, request->port, "connect");
        if (r.kind != Reached::Kind::connected) return answer_unreached(s, client, r, request->host);
        return relay(s, client.get(), r.upstream.get(), rest, "HTTP/1.1 200 Connection established\r\n\r\n", std::nullopt);
    }

    Reached r = reach(s, request->host, request->port, "http");
    if (r.kind != Reached::Kind::connected) return answer_unreached(s, client, r, request->host);
    HeadRewrite heads;
    heads.origin = display(r.target);
    heads.max_bytes = max;
    const std::string forward = http1::upstream_request(request->request, request->path, request->authority) + std::string(rest);
    relay(s, client.get(), r.upstream.get(), forward, {}, std::move(heads));
}

}  // namespace sbx::proxy::detail
