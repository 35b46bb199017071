// launchers/stage/mounts.hpp - the mounts the stage makes, where it makes them
// (stage/mounts.cpp says why and how).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace sbx::linux_sandbox {

// Makes the mounts of `list` (the flags of sbx/linux/mount_flags.hpp: --bind
// and --ro-bind SOURCE DEST, --ro-bind-try SOURCE DEST, --ro-bind-data FD DEST,
// --tmpfs DEST, --remount-ro DEST, --again DEST, the mount bubblewrap made at
// DEST on top once more, and --ro-bind-link DEST, the symbolic link there bound
// read-only over itself, not followed) in order, each from a copy of its source taken before
// the first; sets the PID namespace's pid_max to `pid_max` (0: leaves it);
// makes the second user namespace
// --disable-userns would have made, where the stage is `uid` and `gid` again;
// enters `cwd` again, drops every capability and loads the filter on
// `mounts_filter_fd` (which it closes). Empty on success, else what failed; the
// caller then runs nothing.
std::string make_stage_mounts(const std::vector<std::string>& list, int mounts_filter_fd, const std::string& cwd,
                              unsigned uid, unsigned gid, std::uint64_t pid_max);

// The weaker sandbox's, where there is no namespace: a process that holds a
// capability (a root caller) drops every one, and locks root out of getting
// them back on exec (SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP, each locked). A
// process that holds none is left as it is (no_new_privs, set by the Landlock
// step, keeps an exec from granting any). Empty on success, else what failed.
std::string drop_capabilities_for_good();

// Loads the BPF program on `fd` (which it closes) as a seccomp filter of this
// process, after PR_SET_NO_NEW_PRIVS; `what` names it in messages. Empty on
// success, else what failed.
std::string load_filter_program(int fd, std::string_view what);

// The same for a filter whose user notifications a listener takes (the weaker
// sandbox's file broker): its descriptor in `listener`, close-on-exec.
std::string load_listener_program(int fd, std::string_view what, int& listener);

// The connect broker's filter (base/connect_filter.hpp), with its listener in
// `listener`, close-on-exec; loaded so that a signal does not interrupt a call
// the launcher has taken, where the kernel can (Linux 5.19). Empty on success,
// else what failed.
std::string load_connect_listener(int& listener);

}  // namespace sbx::linux_sandbox
