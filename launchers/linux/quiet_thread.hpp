// launchers/linux/quiet_thread.hpp - a thread of the launcher's that takes no asynchronous signal.
//
// The launcher's main thread handles the signals that end or stop a run
// (launchers/shared/signals.hpp); a helper thread that took one would keep it
// from them. So the brokers' threads start with every signal blocked, which a
// thread inherits, and the caller's mask is put back at once.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <utility>

#include "sbx/core/expected.hpp"

namespace sbx::linux_sandbox {

// `body` on a new thread with every signal blocked; Errc::sandbox_unavailable
// naming `what` where the thread cannot be made.
template <class Body>
sbx::expected<std::thread> quiet_thread(Body body, std::string_view what) {
    sigset_t all, old;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    try {
        std::thread t(std::move(body));
        ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
        return t;
    } catch (const std::system_error& e) {
        ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
        return sbx::fail(Errc::sandbox_unavailable, std::string(what) + ": " + e.what());
    }
}

}  // namespace sbx::linux_sandbox
