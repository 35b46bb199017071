// launchers/freeze.hpp - stopping every process of a sandbox while the launcher
// asks its person a question on the terminal the command shares, so that
// nothing the command does can repaint, forge or answer the question.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <functional>
#include <vector>

#include "signals.hpp"

namespace sbx::launcher {

// What a stop did: the kill() targets to continue with SIGCONT (process ids, or a
// negative process group), and whether every process of the sandbox is known to
// have stopped. When `complete` is false the ones listed are stopped all the same
// and must be continued.
struct Stopped {
    std::vector<pid_t> targets;
    bool complete = true;
};

// The launcher's hook: stops the sandbox's processes (see stop_pid_namespace on
// Linux; sbx-mac stops the command's process group).
using StopSandbox = std::function<Stopped()>;

// Linux: sends SIGSTOP to every process in the PID namespace of the children of
// `bubblewrap` (the sandbox's pid 1 and everything under it), scanning /proc
// until a scan finds no process it has not stopped (a process may be forking),
// then waits, up to about two seconds, until each is stopped or gone (or in
// uninterruptible sleep, from which it returns to no code of its own but stopped).
// Incomplete when the namespace cannot be found or a process does not stop.
Stopped stop_pid_namespace(pid_t bubblewrap);

// The children of `pid`: every process whose parent it is, read from each
// /proc/PID/stat.
std::vector<pid_t> children_of(pid_t pid);

// Sends SIGCONT to every target of `s`. (A stopped process cannot exit, so no id
// is reused before this; a SIGKILL ends one, but that ends the whole sandbox.)
inline void continue_stopped(const Stopped& s) {
    sandbox_frozen(false);
    for (pid_t target : s.targets) ::kill(target, SIGCONT);
}

}  // namespace sbx::launcher
