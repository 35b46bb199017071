// launchers/stage_mounts.hpp - the mounts the stage makes, where it makes them
// (stage_mounts.cpp says why and how).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sbx::linux_sandbox {

// Makes the mounts of `list` (the flags of sbx/linux/mount_flags.hpp: --bind
// and --ro-bind SOURCE DEST, --ro-bind-try SOURCE DEST, --ro-bind-data FD DEST,
// --tmpfs DEST, --remount-ro DEST, and --again DEST, the mount bubblewrap made at
// DEST on top once more) in order, each from a copy of its source taken before
// the first; makes the second user namespace
// --disable-userns would have made, where the stage is `uid` and `gid` again;
// enters `cwd` again, drops every capability and loads the filter on
// `mounts_filter_fd` (which it closes). Empty on success, else what failed; the
// caller then runs nothing.
std::string make_stage_mounts(const std::vector<std::string>& list, int mounts_filter_fd, const std::string& cwd,
                              unsigned uid, unsigned gid);

}  // namespace sbx::linux_sandbox
