#include "proxy/platform.hpp"

#include <fcntl.h>
#if defined(__linux__)
#include <sys/eventfd.h>
#endif
#include <unistd.h>

#include <cstdint>

namespace sbx::proxy {

void cloexec_nonblock(int fd) {
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

Fd stream_socket(int family) {
#if defined(__linux__)
    return Fd(::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
#else
    Fd fd(::socket(family, SOCK_STREAM, 0));
    if (fd.ok()) cloexec_nonblock(fd.get());
    return fd;
#endif
}

Fd accept_client(int listener) {
#if defined(__linux__)
    return Fd(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
#else
    Fd fd(::accept(listener, nullptr, nullptr));
    if (fd.ok()) cloexec_nonblock(fd.get());
    return fd;
#endif
}

bool Event::open() {
#if defined(__linux__)
    read_ = Fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    return read_.get() >= 0;
#else
    int fds[2];
    if (::pipe(fds) != 0) return false;
    read_ = Fd(fds[0]);
    write_ = Fd(fds[1]);
    cloexec_nonblock(fds[0]);
    cloexec_nonblock(fds[1]);
    return true;
#endif
}

void Event::notify() const {
    const std::uint64_t one = 1;
    [[maybe_unused]] const ssize_t w = ::write(write_.get() >= 0 ? write_.get() : read_.get(), &one, sizeof one);
}

void Event::drain() const {
    char buf[64];
    while (::read(read_.get(), buf, sizeof buf) > 0) {
    }
}

void Event::close() {
    read_.reset();
    write_.reset();
}

}  // namespace sbx::proxy
