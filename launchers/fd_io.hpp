// launchers/fd_io.hpp - small helpers on raw file descriptors, for the launcher
// and its stage (which is linked statically, so they are inline here).
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <span>
#include <utility>
#include <vector>

namespace sbx::launcher {

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

}  // namespace sbx::launcher
