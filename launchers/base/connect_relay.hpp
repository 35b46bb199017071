// launchers/base/connect_relay.hpp - ssh's ProxyCommand inside the sandbox.
//
// `sbx-stage --connect HOST PORT` (also `sbx-linux --connect`, `sbx-mac
// --connect` and `sbx --connect`: whichever of sbx's programs the launcher
// names) is the ProxyCommand ssh runs inside the sandbox: from the ssh_config
// sbx-linux binds (sbx/net/ssh_proxy.hpp), or from GIT_SSH_COMMAND where no
// file can be bound (the weaker sandbox, sbx-mac). It asks the proxy at
// HTTPS_PROXY for `CONNECT HOST:PORT`, presenting the URL's password where it
// has one (the proxy's secret on the host's loopback), then copies standard
// input to the connection and the connection to standard output until both
// ends are done. The proxy decides the host and reports a refusal in the
// violations block; the relay says it on standard error in one line, which ssh
// shows.
// Exit status: 0 when the connection ran to its end; 1 when the proxy refused
// or the connection failed; 2 for a malformed command line or HTTPS_PROXY.
// Inline, as base/ is: the statically linked stage starts it in well under a
// millisecond. It runs inside the sandbox, confined like any other program.
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "base/fd_io.hpp"
#include "sbx/core/ascii.hpp"
#include "sbx/net/ssh_proxy.hpp"

namespace sbx::launcher {

inline constexpr std::string_view kConnectFlag = "--connect";

// Runs the relay for the `argc` words of `argv` after kConnectFlag; returns
// the exit status. `self` names the program in its messages.
inline int run_connect_relay(std::string_view self, int argc, char** argv);

namespace relay_detail {

constexpr int kRefused = 1;
constexpr int kUsage = 2;
// The proxy's answer head and, after a refusal, its one-line body.
constexpr std::size_t kMaxHead = 16 * 1024;
constexpr std::size_t kMaxBody = 4 * 1024;

inline int say(std::string_view self, const std::string& what, int status) {
    const std::string line = std::string(self) + ": " + what + "\n";
    (void)write_all(STDERR_FILENO, line.data(), line.size());
    return status;
}

// A connection to the proxy's address, or none with errno.
inline Fd dial(const sbx::net::ProxyUrl& proxy) {
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (auto* in = reinterpret_cast<sockaddr_in*>(&ss); ::inet_pton(AF_INET, proxy.address.c_str(), &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons(proxy.port);
        len = sizeof(sockaddr_in);
    } else if (auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
               ::inet_pton(AF_INET6, proxy.address.c_str(), &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(proxy.port);
        len = sizeof(sockaddr_in6);
    } else {
        errno = EINVAL;
        return Fd();
    }
    Fd fd(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.ok()) return fd;
    int rc = 0;
    while ((rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&ss), len)) != 0 && errno == EINTR) {
    }
    return rc == 0 ? std::move(fd) : Fd();
}

// One direction of the copy: what was read and not yet written.
struct Half {
    int from = -1, to = -1;
    std::string pending;
    bool ended = false;  // `from` reached its end and `pending` is written
    bool eof = false;    // `from` reached its end
};

// Copies both ways until the connection's end: standard input to `sock`
// (its end shuts the connection's writing side, so the server sees it) and
// `sock` to standard output (its end ends the relay, as ssh then has all).
inline int copy_both_ways(int sock, std::string first) {
    Half up{STDIN_FILENO, sock, {}, false, false};
    Half down{sock, STDOUT_FILENO, std::move(first), false, false};
    for (int fd : {STDIN_FILENO, STDOUT_FILENO, sock}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    char buf[64 * 1024];
    while (!down.ended) {
        pollfd p[4];
        nfds_t n = 0;
        auto want = [&](int fd, short ev) {
            p[n++] = pollfd{fd, ev, 0};
        };
        for (Half* h : {&up, &down}) {
            if (!h->eof && h->pending.empty()) want(h->from, POLLIN);
            if (!h->pending.empty()) want(h->to, POLLOUT);
        }
        if (n == 0) break;
        if (::poll(p, n, -1) < 0) {
            if (errno == EINTR) continue;
            return 1;
        }
        for (Half* h : {&up, &down}) {
            if (!h->pending.empty()) {
                const ssize_t w = ::write(h->to, h->pending.data(), h->pending.size());
                if (w < 0 && errno != EAGAIN && errno != EINTR) return h == &down ? 0 : 1;  // ssh went away
                if (w > 0) h->pending.erase(0, static_cast<std::size_t>(w));
            } else if (!h->eof) {
                const ssize_t r = ::read(h->from, buf, sizeof buf);
                if (r > 0) h->pending.assign(buf, static_cast<std::size_t>(r));
                else if (r == 0 || (errno != EAGAIN && errno != EINTR)) h->eof = true;
            }
            if (h->eof && h->pending.empty() && !h->ended) {
                h->ended = true;
                if (h == &up) ::shutdown(sock, SHUT_WR);
            }
        }
    }
    return 0;
}

}  // namespace relay_detail

inline int run_connect_relay(std::string_view self, int argc, char** argv) {
    using namespace relay_detail;
    ::signal(SIGPIPE, SIG_IGN);
    if (argc != 2) return say(self, "USAGE: --connect HOST PORT (ssh's ProxyCommand inside the sandbox)", kUsage);
    auto host = sbx::net::relay_host(argv[0]);
    if (!host) return say(self, "--connect: " + host.error().message, kUsage);
    const std::string_view port_text = argv[1];
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port == 0 ||
        port > 65535)
        return say(self, "--connect: the port is not a number from 1 to 65535", kUsage);
    const char* url = std::getenv("HTTPS_PROXY");
    if (url == nullptr || *url == '\0') url = std::getenv("https_proxy");
    if (url == nullptr || *url == '\0')
        return say(self, "--connect: HTTPS_PROXY is not set (the sandbox sets it; was it unset?)", kUsage);
    auto proxy = sbx::net::parse_proxy_url(url);
    if (!proxy) return say(self, "--connect: HTTPS_PROXY: " + proxy.error().message, kUsage);
    Fd sock = dial(*proxy);
    if (!sock.ok()) return say(self, "cannot reach the sandbox's proxy: " + std::string(std::strerror(errno)), kRefused);
    const std::string request = sbx::net::connect_request(*host, static_cast<std::uint16_t>(port), *proxy);
    if (!write_all(sock.get(), request.data(), request.size()))
        return say(self, "cannot write to the sandbox's proxy: " + std::string(std::strerror(errno)), kRefused);
    std::string got;
    std::size_t head = std::string::npos;
    char buf[4096];
    while ((head = got.find("\r\n\r\n")) == std::string::npos) {
        if (got.size() > kMaxHead) return say(self, "the proxy's answer has no end to its head", kRefused);
        const ssize_t r = ::read(sock.get(), buf, sizeof buf);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return say(self, "the sandbox's proxy closed the connection without an answer", kRefused);
        got.append(buf, static_cast<std::size_t>(r));
    }
    auto reply = sbx::net::parse_connect_reply(std::string_view(got).substr(0, head + 4));
    if (!reply) return say(self, reply.error().message, kRefused);
    std::string rest = got.substr(head + 4);
    if (reply->status != 200) {
        // The proxy's body is one line that says why (sbx/net/http1.hpp).
        while (rest.find('\n') == std::string::npos && rest.size() < kMaxBody) {
            const ssize_t r = ::read(sock.get(), buf, sizeof buf);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            rest.append(buf, static_cast<std::size_t>(r));
        }
        std::string why = sbx::replace_controls(std::string_view(rest).substr(0, rest.find('\n')), '?');
        if (why.size() > 300) why.resize(300);
        return say(self,
                   "the sandbox's proxy refused " + sbx::net::connect_target(*host, static_cast<std::uint16_t>(port)) + ": " +
                       std::to_string(reply->status) + " " + reply->reason + (why.empty() ? "" : " (" + why + ")"),
                   kRefused);
    }
    return copy_both_ways(sock.get(), std::move(rest));
}

}  // namespace sbx::launcher
