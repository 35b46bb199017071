// proxy_bench - what the filtering proxy costs: bulk throughput through a CONNECT
// tunnel against the same transfer straight over loopback, and the time to set up
// a connection through the proxy against a direct one.
//
//   proxy_bench [--mib N] [--runs N] [--connects N]
//
// Everything runs in this process on 127.0.0.1: a sink server, an echo server, and
// the launcher's Proxy (launchers/proxy*.cpp) with a rule that allows 127.0.0.1.
// Prints the medians and the ratio, and the verdict on issue 5's target (tunnel
// throughput at least 0.8 of direct). Exit status: 0 the target met, 2 missed,
// 1 a transfer failed, 64 usage.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../launchers/base/fd_io.hpp"
#include "../launchers/proxy/proxy.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using sbx::launcher::Fd;

int listen_loopback(int& port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 512) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
        std::perror("proxy_bench: listen");
        std::exit(1);
    }
    port = ntohs(sa.sin_port);
    return fd;
}

int connect_loopback(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(static_cast<std::uint16_t>(port));
    if (fd < 0 || ::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0) {
        std::perror("proxy_bench: connect");
        std::exit(1);
    }
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

// A server that runs `serve` on every connection, each in a thread of its own.
class Server {
public:
    template <class F>
    explicit Server(F serve) : fd_(listen_loopback(port_)) {
        thread_ = std::thread([this, serve] {
            for (;;) {
                const int c = ::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC);
                if (c < 0) return;
                std::thread([serve, c] {
                    serve(c);
                    ::close(c);
                }).detach();
            }
        });
    }
    ~Server() {
        ::shutdown(fd_.get(), SHUT_RDWR);
        thread_.join();
    }
    int port() const { return port_; }

private:
    int port_ = 0;
    Fd fd_;
    std::thread thread_;
};

// Opens a CONNECT tunnel through the proxy at `proxy_port` to 127.0.0.1:`port`.
int tunnel(int proxy_port, int port) {
    const int fd = connect_loopback(proxy_port);
    const std::string req = "CONNECT 127.0.0.1:" + std::to_string(port) + " HTTP/1.1\r\nHost: 127.0.0.1:" +
                            std::to_string(port) + "\r\n\r\n";
    sbx::launcher::write_all(fd, req.data(), req.size());
    std::string head;
    char c;
    while (head.find("\r\n\r\n") == std::string::npos && ::recv(fd, &c, 1, 0) == 1) head += c;
    if (head.rfind("HTTP/1.1 200", 0) != 0) {
        std::fprintf(stderr, "proxy_bench: the proxy answered: %s\n", head.c_str());
        std::exit(1);
    }
    return fd;
}

// Sends `total` bytes and waits for the sink to close: seconds taken.
double transfer(int fd, std::size_t total) {
    static const std::vector<char> buf(1 << 20, 'x');
    const auto start = Clock::now();
    for (std::size_t sent = 0; sent < total;) {
        const ssize_t w = ::send(fd, buf.data(), std::min(buf.size(), total - sent), MSG_NOSIGNAL);
        if (w <= 0) {
            std::perror("proxy_bench: send");
            std::exit(1);
        }
        sent += static_cast<std::size_t>(w);
    }
    ::shutdown(fd, SHUT_WR);
    char c;
    while (::recv(fd, &c, 1, 0) > 0) {
    }
    return std::chrono::duration<double>(Clock::now() - start).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

}  // namespace

// Over 80 lines: the options, then each measurement and its line, in order.
int main(int argc, char** argv) {
    std::size_t mib = 1024;
    int runs = 5, connects = 200;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (i + 1 < argc && (a == "--mib" || a == "--runs" || a == "--connects")) {
            const long v = std::atol(argv[++i]);
            if (v <= 0) return std::fprintf(stderr, "proxy_bench: %s needs a positive number\n", a.c_str()), 64;
            if (a == "--mib") mib = static_cast<std::size_t>(v);
            else if (a == "--runs") runs = static_cast<int>(v);
            else connects = static_cast<int>(v);
        } else {
            std::fprintf(stderr, "usage: proxy_bench [--mib N] [--runs N] [--connects N]\n");
            return 64;
        }
    }
    const std::size_t total = mib << 20;

    std::atomic<std::size_t> sunk{0};
    Server sink([&](int fd) {
        std::vector<char> buf(1 << 20);
        std::size_t n = 0;
        for (ssize_t r; (r = ::recv(fd, buf.data(), buf.size(), 0)) > 0;) n += static_cast<std::size_t>(r);
        sunk = n;
    });
    Server echo([](int fd) {
        char buf[4096];
        for (ssize_t r; (r = ::recv(fd, buf, sizeof buf, 0)) > 0;)
            if (!sbx::launcher::write_all(fd, buf, static_cast<std::size_t>(r))) return;
    });

    sbx::proxy::ProxyOptions options;
    auto pattern = sbx::net::parse_host_pattern("127.0.0.1");
    options.rules.allowed.push_back(sbx::net::HostRule{*pattern, "127.0.0.1", "network.allowedDomains", std::nullopt});
    int http_port = 0, socks_port = 0;
    const int http = listen_loopback(http_port);
    const int socks = listen_loopback(socks_port);
    auto proxy = sbx::proxy::Proxy::start(std::move(options), http, socks);
    if (!proxy) {
        std::fprintf(stderr, "proxy_bench: %s\n", sbx::to_string(proxy.error()).c_str());
        return 1;
    }

    // Throughput, direct and through the tunnel, alternating.
    std::vector<double> direct_gbs, tunnel_gbs;
    for (int r = 0; r < runs; ++r) {
        Fd d(connect_loopback(sink.port()));
        direct_gbs.push_back(static_cast<double>(total) / transfer(d.get(), total) / 1e9);
        if (sunk != total) return std::fprintf(stderr, "proxy_bench: the direct transfer lost bytes\n"), 1;
        Fd t(tunnel(http_port, sink.port()));
        tunnel_gbs.push_back(static_cast<double>(total) / transfer(t.get(), total) / 1e9);
        if (sunk != total) return std::fprintf(stderr, "proxy_bench: the tunnel lost bytes\n"), 1;
    }

    // Set-up: connect (and CONNECT), send one byte, get it back.
    auto round_trip = [](int fd) {
        char c = 'p';
        sbx::launcher::write_all(fd, &c, 1);
        return ::recv(fd, &c, 1, 0) == 1;
    };
    std::vector<double> direct_us, tunnel_us;
    for (int i = 0; i < connects; ++i) {
        auto start = Clock::now();
        {
            Fd d(connect_loopback(echo.port()));
            if (!round_trip(d.get())) return std::fprintf(stderr, "proxy_bench: the echo failed\n"), 1;
        }
        direct_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
        start = Clock::now();
        {
            Fd t(tunnel(http_port, echo.port()));
            if (!round_trip(t.get())) return std::fprintf(stderr, "proxy_bench: the echo through the proxy failed\n"), 1;
        }
        tunnel_us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
    }
    (*proxy)->stop();

    const double ratio = median(tunnel_gbs) / median(direct_gbs);
    char label[64];
    std::printf("%-24s %12s %12s %8s\n", "", "direct", "CONNECT", "ratio");
    std::snprintf(label, sizeof label, "GB/s, %zu MiB x%d", mib, runs);
    std::printf("%-24s %12.2f %12.2f %8.2f\n", label, median(direct_gbs), median(tunnel_gbs), ratio);
    std::snprintf(label, sizeof label, "set-up us, x%d", connects);
    std::printf("%-24s %12.1f %12.1f %8.2f\n", label, median(direct_us), median(tunnel_us),
                median(tunnel_us) / median(direct_us));
    const bool met = ratio >= 0.8;
    std::printf("tunnel/direct throughput %.2f: %s the 0.8x target\n", ratio, met ? "meets" : "MISSES");
    return met ? 0 : 2;
}
