// launchers/linux/placeholders.hpp - the placeholders a Linux sandbox binds
// read-only over protected paths that are missing (docs/plan.md,
// `filesystem.placeholders`).
//
// They are the root's group's (shared/root_group.hpp): made under its mutex,
// recorded in its list, and removed by its last sandbox. sbx-linux makes a
// plan's before the sandbox starts; a session makes more while it runs, for
// the repositories its commands make (session_mounts.hpp).
#pragma once

#include <span>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/io/placeholder_registry.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "shared/root_group.hpp"

namespace sbx::linux_sandbox {

// Whether a new file placeholder may be a hard link to one of the same
// content (no new inode: ext4 slows down when many are made and removed), or
// is a file of its own. A link shares its inode: a command that can write the
// directory the new name lies in, before its mount is made, could chmod it and
// write every placeholder of that content. So placeholders made while
// commands run (a session's: session_mounts.hpp) are files of their own.
enum class PlaceholderLinks { shared, none };

// Makes `placeholders` and records each in `group`, whose mutex the caller
// holds. `existing`: the group's placeholders, read under that mutex, which are
// taken over as they are. STALE_PLAN names the path when a placeholder's
// directory is not the one the plan saw, or something is at the placeholder's
// path already; what was made before the failure stays recorded.
sbx::expected<void> make_placeholders(std::span<const sbx::PlaceholderOp> placeholders, launcher::RootGroup& group,
                                      const std::vector<sbx::RegisteredPlaceholder>& existing,
                                      PlaceholderLinks links = PlaceholderLinks::shared);

}  // namespace sbx::linux_sandbox
