// launchers/proxy/platform.hpp - what the proxy needs from the system that Linux and
// macOS spell differently: sockets made close-on-exec and non-blocking, sends that
// raise no SIGPIPE, and an event one thread sets for another's poll.
//
// The proxy runs in sbx-linux and in sbx-mac. macOS has neither eventfd, accept4,
// SOCK_CLOEXEC nor MSG_NOSIGNAL; sbx-mac ignores SIGPIPE, so a send to a closed
// peer fails with EPIPE there as here. (Only the Linux branches are built and
// tested on this project's machines.)
#pragma once

#include <sys/socket.h>

#include "base/fd_io.hpp"

namespace sbx::proxy {

using sbx::launcher::Fd;

#if !defined(MSG_NOSIGNAL)
constexpr int kNoSignal = 0;
#else
constexpr int kNoSignal = MSG_NOSIGNAL;
#endif

// Makes `fd` close-on-exec and non-blocking.
void cloexec_nonblock(int fd);

// A close-on-exec, non-blocking TCP socket of `family`, or none with errno.
Fd stream_socket(int family);

// A client accepted on `listener`, close-on-exec and non-blocking, or none with errno.
Fd accept_client(int listener);

// Something a poll waits on, set from another thread: an eventfd on Linux, a
// pipe elsewhere. Once notified it stays readable until drained.
class Event {
public:
    bool open();  // false with errno when it cannot be made
    int fd() const { return read_.get(); }
    void notify() const;
    void drain() const;
    void close();

private:
    Fd read_, write_;
};

}  // namespace sbx::proxy
