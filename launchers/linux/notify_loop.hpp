// launchers/linux/notify_loop.hpp - a seccomp listener's receiving loop and answers, for the brokers.
//
// The file broker (file_broker.hpp) and the connect broker (connect_broker.hpp)
// each serve a listener the stage hands over: wait for a notification or the
// broker's stop, receive it into a buffer as large as the kernel says its
// struct is, and answer it. A notification whose caller is gone by then is
// skipped; the loop ends when the listener does (its last filtered process
// gone) or the stop descriptor is readable.
#pragma once

#include <linux/seccomp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace sbx::linux_sandbox {

// Calls `answer(const seccomp_notif&)` for each notification of `listener`
// until `stop` is readable or the listener ends. Where the kernel has it
// (6.6), the caller and the broker hand over on one CPU, which shortens each
// round trip; without it, the same more slowly.
template <class Answer>
void serve_notifications(int listener, int stop, Answer answer) {
    seccomp_notif_sizes sizes{};
    if (::syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0) sizes = {};
    std::vector<unsigned char> buf(std::max<std::size_t>(sizes.seccomp_notif, sizeof(seccomp_notif)));
    constexpr unsigned long kSetFlags = SECCOMP_IOW(4, std::uint64_t);  // SECCOMP_IOCTL_NOTIF_SET_FLAGS
    constexpr std::uint64_t kSyncWakeUp = 1;                            // SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
    (void)::ioctl(listener, kSetFlags, kSyncWakeUp);
    for (;;) {
        pollfd fds[2] = {{listener, POLLIN, 0}, {stop, POLLIN, 0}};
        if (::poll(fds, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (fds[1].revents != 0) return;
        if ((fds[0].revents & POLLIN) == 0) {
            if ((fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) != 0) return;
            continue;
        }
        std::fill(buf.begin(), buf.end(), 0);
        if (::ioctl(listener, SECCOMP_IOCTL_NOTIF_RECV, buf.data()) != 0) continue;  // the caller is gone
        answer(*reinterpret_cast<const seccomp_notif*>(buf.data()));
    }
}

// Answers the call `id` with `result` (0, or -errno for the caller's errno).
inline void respond(int listener, std::uint64_t id, int result) {
    seccomp_notif_resp r{};
    r.id = id;
    r.error = result;
    (void)::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
}

// Lets the call `id` go on to the kernel, which decides it as it would alone.
// Only where nothing the broker read can make it unsafe: the kernel reads the
// caller's arguments again (seccomp_unotify(2)).
inline void go_on_with(int listener, std::uint64_t id) {
    seccomp_notif_resp r{};
    r.id = id;
    r.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    (void)::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, &r);
}

// Whether the call `id` still waits: what was read of its caller was not of
// another thread under the same number.
inline bool still_waiting(int listener, std::uint64_t id) {
    return ::ioctl(listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

}  // namespace sbx::linux_sandbox
