// launchers/shared/freeze.hpp - stopping every process of a sandbox while the launcher
// asks its person a question on the terminal the command shares, so that
// nothing the command does can repaint, forge or answer the question.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <vector>

#include "shared/signals.hpp"

namespace sbx::launcher {

// What a stop did: the kill() targets to continue with SIGCONT (process ids, or a
// negative process group), and whether every process of the sandbox is known to
// have stopped. When `complete` is false the ones listed are stopped all the same
// and must be continued.
struct Stopped {
    std::vector<pid_t> targets;
    bool complete = true;
};

// The launcher's hook: stops the sandbox's processes (Linux: stop_pid_namespace,
// linux/stop_namespace.hpp; sbx-mac stops the command's process group).
using StopSandbox = std::function<Stopped()>;

// Sends SIGCONT to every target of `s`. (A stopped process cannot exit, so no id
// is reused before this; a SIGKILL ends one, but that ends the whole sandbox.)
inline void continue_stopped(const Stopped& s) {
    sandbox_frozen(false);
    for (pid_t target : s.targets) ::kill(target, SIGCONT);
}

}  // namespace sbx::launcher
