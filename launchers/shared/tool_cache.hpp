// launchers/shared/tool_cache.hpp - making a plan's tool cache home on the host.
//
// The plan's filesystem.toolCache is a directory under the caller's cache folder
// that persists between runs of one project (sbx/rules/tool_cache.hpp). The launcher
// makes it, and its missing parents, before the sandbox starts, and never removes
// it: it is no leftover.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "sbx/core/expected.hpp"

namespace sbx::launcher {

// Makes `path` (absolute, normalised) and its missing parents, mode 0700, walking
// from `/` one component at a time with openat and mkdirat, following no symlink.
// Refuses (INVALID_ARGUMENT, naming the path) a component that is a symlink or no
// directory, one owned by neither `uid` nor root, one that others may write to
// and that has no sticky bit (they could swap what lies in it), and a final
// directory not owned by `uid` or writable by others. IO_ERROR when a directory
// cannot be made or opened.
sbx::expected<void> make_tool_cache(const std::string& path, uid_t uid);

// The same checks of the directories on the way to `path` that exist, making
// nothing and stopping at the first that is missing, a symlink or no directory
// (make_plan refuses those): the owners and modes make_tool_cache would refuse,
// for `sbx plan` and `sbx run` to leave the cache out (with a warning) rather
// than plan one the launcher refuses.
sbx::expected<void> check_tool_cache(const std::string& path, uid_t uid);

// Files sbx keeps for a root under the same base, out of the command's reach:
// the record of its repositories and their directory stamps (git_audit.hpp),
// the warnings said once (sbx/plan/said_once.hpp). keep_file makes the folder as
// make_tool_cache does (the caller's own, mode 0700, no symlink on the way),
// writes `text` beside `path` and renames it over; forget_file removes it (a
// missing one is no error). `what` names the file in an error, which names the
// path.
sbx::expected<void> keep_file(const std::string& path, const std::string& text, std::string_view what);
sbx::expected<void> forget_file(const std::string& path, std::string_view what);

// The whole of a small regular file `name` in `dir` (AT_FDCWD and an absolute
// path alike), not following a symlink at its name; nullopt when it is none, is
// larger than `max` or cannot be read.
std::optional<std::string> read_small(int dir, const std::string& name, std::size_t max);

}  // namespace sbx::launcher
