// launchers/base/fd_io.hpp - small helpers on raw file descriptors, for the launcher
// and its stage (which is linked statically, so they are inline here).
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <utility>
#include <vector>

namespace sbx::launcher {

// The port of an IPv4 or IPv6 socket address, as getsockname and getpeername give it.
inline std::uint16_t port_of(const sockaddr_storage& a) {
    return ntohs(a.ss_family == AF_INET6 ? reinterpret_cast<const sockaddr_in6*>(&a)->sin6_port
                                         : reinterpret_cast<const sockaddr_in*>(&a)->sin_port);
}

// Writes all of data to fd, retrying short writes and EINTR. False when a write
// failed (the reader is gone): callers of these pipes have nothing else to do.
inline bool write_all(int fd, const void* data, std::size_t n) {
    const auto* p = static_cast<const char*>(data);
    while (n > 0) {
        const ssize_t w = ::write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

// A descriptor number given on a command line: a whole decimal number from
// `lowest` (-1 where "none" is allowed) to 2^20.
inline bool parse_fd(const char* s, int& out, long lowest = 0) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v < lowest || v > (1L << 20)) return false;
    out = static_cast<int>(v);
    return true;
}

// What sweep_fds does to a descriptor it does not keep.
enum class FdSweep {
    close,    // close it now
    cloexec,  // mark it close-on-exec: it ends at the next exec
};

// Every descriptor from 3 up, except those in `keep`, closed or marked
// close-on-exec: close_range(2) over the gaps where the kernel has it (Linux 5.9;
// CLOSE_RANGE_CLOEXEC 5.11), else each descriptor /proc/self/fd (/dev/fd) lists. False
// when neither worked; then some descriptors may be left as they were.
inline bool sweep_fds(std::span<const int> keep, FdSweep how) {
    std::vector<unsigned> kept;
    for (int fd : keep)
        if (fd >= 3) kept.push_back(static_cast<unsigned>(fd));
    std::sort(kept.begin(), kept.end());
    kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
#ifdef SYS_close_range
    constexpr unsigned kCloexec = 1u << 2;  // CLOSE_RANGE_CLOEXEC
    const unsigned flags = how == FdSweep::cloexec ? kCloexec : 0;
    bool ranged = true;
    unsigned lo = 3;
    for (unsigned k : kept) {
        if (k > lo && ::syscall(SYS_close_range, lo, k - 1, flags) != 0) ranged = false;
        lo = k + 1;
    }
    if (ranged && ::syscall(SYS_close_range, lo, ~0u, flags) == 0) return true;
#endif
#ifdef __linux__
    DIR* dir = ::opendir("/proc/self/fd");
#else
    DIR* dir = ::opendir("/dev/fd");
#endif
    if (dir == nullptr) return false;
    std::vector<int> found;
    while (const dirent* e = ::readdir(dir)) {
        char* end = nullptr;
        const long fd = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0' || fd < 3 || fd == ::dirfd(dir)) continue;
        if (!std::binary_search(kept.begin(), kept.end(), static_cast<unsigned>(fd))) found.push_back(static_cast<int>(fd));
    }
    ::closedir(dir);
    for (int fd : found) {
        if (how == FdSweep::close) ::close(fd);
        else ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    return true;
}

// One sendmsg() of `iov` on the Unix socket `sock` with `fds` (at most 8) as
// SCM_RIGHTS, retried on EINTR, never raising SIGPIPE: the bytes sent, or -1
// with errno. A stream socket may take only part of the bytes (the descriptors
// go with the first); the caller writes the rest.
inline ssize_t send_with_fds(int sock, std::span<iovec> iov, std::span<const int> fds) {
    alignas(cmsghdr) char control[CMSG_SPACE(8 * sizeof(int))]{};
    if (fds.size() > 8) {
        errno = EMSGSIZE;
        return -1;
    }
    msghdr msg{};
    msg.msg_iov = iov.data();
    msg.msg_iovlen = iov.size();
    if (!fds.empty()) {
        msg.msg_control = control;
        msg.msg_controllen = CMSG_SPACE(fds.size() * sizeof(int));
        cmsghdr* cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(fds.size() * sizeof(int));
        std::memcpy(CMSG_DATA(cm), fds.data(), fds.size() * sizeof(int));
    }
    ssize_t sent;
    while ((sent = ::sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    return sent;
}

// Sends `fds` over the Unix socket `sock` with one byte, `tag`. False with errno
// when the message could not be sent whole.
inline bool send_fds(int sock, std::span<const int> fds, char tag) {
    iovec iov{&tag, 1};
    const std::size_t bytes = fds.size() * sizeof(int);
    std::vector<char> control(CMSG_SPACE(bytes), 0);  // operator new aligns it for cmsghdr
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    cmsghdr* cm = CMSG_FIRSTHDR(&msg);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(bytes);
    std::memcpy(CMSG_DATA(cm), fds.data(), bytes);
    ssize_t sent;
    while ((sent = ::sendmsg(sock, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    return sent == 1;
}

// An owned descriptor, closed when it goes. Move-only. Closing keeps errno, so
// that a failure's errno survives the descriptors that go out of scope with it.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    Fd& operator=(Fd&& other) noexcept {
        if (this != &other) {
            reset();
            fd_ = std::exchange(other.fd_, -1);
        }
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() { reset(); }

    int get() const { return fd_; }
    bool ok() const { return fd_ >= 0; }
    int release() { return std::exchange(fd_, -1); }
    void reset() {
        if (fd_ >= 0) {
            const int err = errno;
            ::close(fd_);
            errno = err;
        }
        fd_ = -1;
    }

private:
    int fd_ = -1;
};

// A pipe, each end owned and close-on-exec.
struct Pipe {
    Fd read, write;
    // pipe2(2) where there is one: false with errno.
    bool open() {
        int fds[2];
#ifdef __linux__
        if (::pipe2(fds, O_CLOEXEC) != 0) return false;
#else
        if (::pipe(fds) != 0) return false;
        for (int fd : fds) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
#endif
        read = Fd(fds[0]);
        write = Fd(fds[1]);
        return true;
    }
};

// The descriptors a received message `msg` carries as SCM_RIGHTS, each owned
// (close-on-exec when it was received with MSG_CMSG_CLOEXEC).
inline std::vector<Fd> rights_of(msghdr& msg) {
    std::vector<Fd> out;
    for (cmsghdr* cm = CMSG_FIRSTHDR(&msg); cm != nullptr; cm = CMSG_NXTHDR(&msg, cm)) {
        if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS || cm->cmsg_len < CMSG_LEN(0)) continue;
        const std::size_t count = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int fd = -1;
            std::memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
            out.emplace_back(fd);
        }
    }
    return out;
}

// Receives exactly `want` descriptors (close-on-exec) sent by send_fds on
// `sock`, each owned; none when the other end closed, or sent another number
// of them.
inline std::vector<Fd> receive_fds(int sock, std::size_t want) {
    char tag = 0;
    iovec iov{&tag, 1};
    std::vector<char> control(CMSG_SPACE(want * sizeof(int)), 0);
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    ssize_t n;
#ifdef MSG_CMSG_CLOEXEC
    constexpr int kFlags = MSG_CMSG_CLOEXEC;
#else
    constexpr int kFlags = 0;  // macOS: marked below
#endif
    while ((n = ::recvmsg(sock, &msg, kFlags)) < 0 && errno == EINTR) {
    }
    std::vector<int> fds;
    const cmsghdr* cm = n == 1 ? CMSG_FIRSTHDR(&msg) : nullptr;
    if (cm != nullptr && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len >= CMSG_LEN(0)) {
        fds.resize((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        std::memcpy(fds.data(), CMSG_DATA(cm), fds.size() * sizeof(int));
        if (kFlags == 0)
            for (int fd : fds) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    }
    std::vector<Fd> owned(fds.begin(), fds.end());
    if (owned.size() != want || (msg.msg_flags & MSG_CTRUNC) != 0) owned.clear();
    return owned;
}

// A TCP listener on 127.0.0.1:`port` (0: any free one), close-on-exec, and
// non-blocking with `nonblocking`, with `backlog`; the port it took in
// `bound`. Not open, with errno, when it cannot be made.
inline Fd listen_on_loopback(std::uint16_t port, std::uint16_t& bound, bool nonblocking = false, int backlog = 512) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | (nonblocking ? SOCK_NONBLOCK : 0), 0));
    sockaddr_in in{};
    in.sin_family = AF_INET;
    in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    in.sin_port = htons(port);
    socklen_t len = sizeof in;
    if (!fd.ok() || ::bind(fd.get(), reinterpret_cast<const sockaddr*>(&in), sizeof in) != 0 || ::listen(fd.get(), backlog) != 0 ||
        ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&in), &len) != 0)
        return Fd();
    bound = ntohs(in.sin_port);
    return fd;
}

// Closing the connected socket `fd` then resets the connection (RST), the
// nearest a listener that accepted comes to "connection refused".
inline void reset_on_close(int fd) {
    const linger at_once{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &at_once, sizeof at_once);
}

}  // namespace sbx::launcher
