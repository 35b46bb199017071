// The proxy's SOCKS5 side: the greeting, the username/password where the proxy
// has a secret, and the request read with a deadline, exactly as many bytes as
// sbx/net/socks5.hpp asks for, the host reached, and the reply the RFC gives for
// what happened.
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <span>

#include "proxy/state.hpp"
#include "sbx/net/proxy_auth.hpp"
#include "sbx/net/socks5.hpp"

namespace sbx::proxy::detail {

namespace {

namespace net = sbx::net;
namespace socks5 = sbx::net::socks5;

// The success reply, with the address the upstream socket is bound to.
std::string bound_reply(int upstream) {
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    if (::getsockname(upstream, reinterpret_cast<sockaddr*>(&bound), &length) != 0)
        return socks5::reply(socks5::Reply::succeeded);
    if (bound.ss_family == AF_INET6) {
        const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&bound);
        std::array<std::uint8_t, 16> bytes{};
        std::memcpy(bytes.data(), &in6->sin6_addr, 16);
        return socks5::success_reply(net::Address::v6(bytes), ntohs(in6->sin6_port));
    }
    if (bound.ss_family == AF_INET) {
        const auto* in = reinterpret_cast<const sockaddr_in*>(&bound);
        std::uint8_t b[4];
        std::memcpy(b, &in->sin_addr, 4);
        return socks5::success_reply(net::Address::v4(b[0], b[1], b[2], b[3]), ntohs(in->sin_port));
    }
    return socks5::reply(socks5::Reply::succeeded);
}

socks5::Reply reply_for(const Reached& r) {
    using Kind = Reached::Kind;
    using R = socks5::Reply;
    switch (r.kind) {
        case Kind::refused: return R::not_allowed;
        case Kind::unresolved: return R::host_unreachable;
        case Kind::unreachable:
            return r.error == ECONNREFUSED ? R::connection_refused : r.error == ENETUNREACH ? R::network_unreachable : R::host_unreachable;
        case Kind::malformed:
        case Kind::connected:
        case Kind::stopped: break;
    }
    return R::general_failure;
}

// Reads into `bytes` until it holds `size` bytes; false when the client is slow, gone or stop() began.
bool read_until(const State& s, int fd, std::vector<std::uint8_t>& bytes, std::size_t size, Clock::time_point deadline) {
    if (bytes.size() >= size) return true;
    const std::size_t have = bytes.size();
    bytes.resize(size);
    return read_exact(s.stop_event.fd(), fd, bytes.data() + have, size - have, deadline) == Io::ok;
}

// RFC 1929's sub-negotiation, after the client was told to use it: whether
// the client presented the secret (and was told so). A client that did not is
// counted, answered and closed.
bool check_password(State& s, Fd& client, Clock::time_point deadline) {
    std::vector<std::uint8_t> bytes;
    socks5::PasswordRequest request;
    for (;;) {
        request = socks5::parse_password_request(bytes);
        if (request.verdict != socks5::PasswordRequest::Verdict::more) break;
        if (!read_until(s, client.get(), bytes, request.size, deadline)) return false;
    }
    if (request.verdict == socks5::PasswordRequest::Verdict::credentials &&
        sbx::net::proxy_auth::secret_matches(request.password, s.options.secret))
        return write_all(s.stop_event.fd(), client.get(), socks5::kPasswordAccepted, deadline) == Io::ok;
    ++s.refused_clients;
    answer_and_close(s, client, socks5::kPasswordRefused);
    return false;
}

// The greeting, and the username/password where the proxy has a secret:
// whether the client may send its request. Otherwise it was answered as the
// RFCs say, or not at all, and is to be closed.
bool negotiate(State& s, Fd& client, Clock::time_point deadline) {
    using V = socks5::Greeting::Verdict;
    const bool secret = !s.options.secret.empty();
    const auto required = secret ? socks5::Method::username_password : socks5::Method::no_authentication;
    std::vector<std::uint8_t> bytes;
    socks5::Greeting greeting;
    for (;;) {
        greeting = socks5::parse_greeting(bytes, required);
        if (greeting.verdict != V::more) break;
        if (!read_until(s, client.get(), bytes, greeting.size, deadline)) return false;
    }
    switch (greeting.verdict) {
        case V::no_authentication:
            return write_all(s.stop_event.fd(), client.get(), socks5::kChooseNoAuthentication, deadline) == Io::ok;
        case V::username_password:
            return write_all(s.stop_event.fd(), client.get(), socks5::kChooseUsernamePassword, deadline) == Io::ok &&
                   check_password(s, client, deadline);
        case V::no_acceptable_method:
            if (secret) ++s.refused_clients;
            answer_and_close(s, client, socks5::kNoAcceptableMethod);
            return false;
        case V::not_socks5:
        case V::more: break;
    }
    return false;
}

}  // namespace

void serve_socks(State& s, Fd& client) {
    const auto deadline = after_ms(s.options.header_timeout_ms);
    if (!negotiate(s, client, deadline)) return;
    const int fd = client.get();
    std::vector<std::uint8_t> bytes;
    socks5::Request request;
    for (;;) {
        request = socks5::parse_request(bytes);
        if (request.verdict != socks5::Request::Verdict::more) break;
        if (!read_until(s, fd, bytes, request.size, deadline)) return;
    }
    switch (request.verdict) {
        case socks5::Request::Verdict::close: return;
        case socks5::Request::Verdict::reply: return answer_and_close(s, client, socks5::reply(request.reply));
        case socks5::Request::Verdict::connect:
        case socks5::Request::Verdict::more: break;
    }

    Reached r = reach(s, request.host, request.port, "socks5");
    if (r.kind == Reached::Kind::stopped) return;
    if (r.kind != Reached::Kind::connected) return answer_and_close(s, client, socks5::reply(reply_for(r)));
    relay(s, fd, r.upstream.get(), {}, bound_reply(r.upstream.get()), std::nullopt);
}

}  // namespace sbx::proxy::detail
