// launchers/linux/stop_namespace.hpp - the Linux launcher's way to stop a
// sandbox for a question (shared/freeze.hpp): every process of its PID namespace.
#pragma once

#include <sys/types.h>

#include <vector>

#include "shared/freeze.hpp"

namespace sbx::launcher {

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

}  // namespace sbx::launcher
