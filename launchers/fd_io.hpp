// launchers/fd_io.hpp - small helpers on raw file descriptors, for the launcher
// and its stage (which is linked statically, so they are inline here).
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <utility>

namespace sbx::linux_sandbox {

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

// An owned descriptor, closed when it goes. Move-only.
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
    int release() { return std::exchange(fd_, -1); }
    void reset() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

private:
    int fd_ = -1;
};

}  // namespace sbx::linux_sandbox
