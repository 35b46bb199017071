#include "proxy/deadline_io.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "proxy/platform.hpp"

namespace sbx::proxy {

namespace {

// After an error answer the proxy reads and drops what the client still sends, up
// to this much and this long, so that closing does not reset the connection
// before the client has read the answer.
constexpr std::size_t kLingerBytes = 4 * 1024 * 1024;
constexpr std::chrono::milliseconds kLingerTime{2000};

}  // namespace

Clock::time_point after_ms(int ms) { return Clock::now() + std::chrono::milliseconds(std::max(ms, 0)); }

Io wait_for(int stop_fd, int fd, short events, Clock::time_point deadline) {
    for (;;) {
        int timeout = -1;
        if (deadline != Clock::time_point::max()) {
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (left <= 0) return Io::timeout;
            timeout = static_cast<int>(std::min<long long>(left, INT_MAX));
        }
        pollfd p[2] = {{fd, events, 0}, {stop_fd, POLLIN, 0}};
        const int n = ::poll(p, 2, timeout);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Io::failed;
        if (p[1].revents != 0) return Io::stopped;
        if (p[0].revents != 0) return Io::ok;
    }
}

Io read_some(int stop_fd, int fd, char* buf, std::size_t n, Clock::time_point deadline, std::size_t& got) {
    for (;;) {
        const ssize_t r = ::recv(fd, buf, n, 0);
        if (r > 0) {
            got = static_cast<std::size_t>(r);
            return Io::ok;
        }
        if (r == 0) return Io::closed;
        if (errno == EINTR) continue;
        if (errno != EAGAIN) return Io::failed;
        if (const Io w = wait_for(stop_fd, fd, POLLIN, deadline); w != Io::ok) return w;
    }
}

Io read_exact(int stop_fd, int fd, void* buf, std::size_t n, Clock::time_point deadline) {
    auto* p = static_cast<char*>(buf);
    while (n > 0) {
        std::size_t got = 0;
        if (const Io r = read_some(stop_fd, fd, p, n, deadline, got); r != Io::ok) return r;
        p += got;
        n -= got;
    }
    return Io::ok;
}

Io write_all(int stop_fd, int fd, std::string_view data, Clock::time_point deadline) {
    while (!data.empty()) {
        const ssize_t w = ::send(fd, data.data(), data.size(), kNoSignal);
        if (w > 0) {
            data.remove_prefix(static_cast<std::size_t>(w));
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno != EAGAIN) return Io::failed;
        if (const Io r = wait_for(stop_fd, fd, POLLOUT, deadline); r != Io::ok) return r;
    }
    return Io::ok;
}

void answer_and_close(int stop_fd, sbx::launcher::Fd& client, std::string_view answer, int timeout_ms) {
    if (!answer.empty() && write_all(stop_fd, client.get(), answer, after_ms(timeout_ms)) != Io::ok) {
        client.reset();
        return;
    }
    ::shutdown(client.get(), SHUT_WR);
    const auto deadline = Clock::now() + kLingerTime;
    std::size_t dropped = 0;
    char buf[16 * 1024];
    while (dropped < kLingerBytes) {
        std::size_t got = 0;
        if (read_some(stop_fd, client.get(), buf, sizeof buf, deadline, got) != Io::ok) break;
        dropped += got;
    }
    client.reset();
}

}  // namespace sbx::proxy
