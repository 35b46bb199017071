// launchers/stage_mounts.hpp - the mounts the stage makes, where it makes them
// (stage_mounts.cpp says why and how).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace sbx::linux_sandbox {

// How many arguments a flag of the stage's mount list takes: --ro-bind SOURCE
// DEST and --ro-bind-try SOURCE DEST 2; --tmpfs DEST, --remount-ro DEST and
// --again DEST (the mount bubblewrap made at DEST, on top once more) 1. False
// for any other flag.
bool stage_mount_arity(std::string_view flag, std::size_t& arity);

// Makes the mounts of `list` (flags as above) in order, each from a copy of its
// source taken before the first; makes the second user namespace
// --disable-userns would have made, where the stage is `uid` and `gid` again;
// enters `cwd` again, drops every capability and loads the filter on
// `mounts_filter_fd` (which it closes). Empty on success, else what failed; the
// caller then runs nothing.
std::string make_stage_mounts(const std::vector<std::string>& list, int mounts_filter_fd, const std::string& cwd,
                              unsigned uid, unsigned gid);

}  // namespace sbx::linux_sandbox
