// launchers/shared/root_group.hpp - sandboxes that share a root share its placeholders.
//
// Two commands may run at once in one project (an agent's test run beside its
// build). The second one's plan sees the first one's placeholders as files that
// exist, and binds them read-only like any protected file. If the first removed
// them when it ended, the second sandbox would lose those mounts (removing a
// mount point on the host detaches it in every other namespace) and its command
// could create `.bashrc` after all. So placeholders belong to the group of
// sandboxes running in the root, and the last one to leave removes them.
//
// The group lives in two files in a directory of the user's own (below
// $XDG_RUNTIME_DIR, else /tmp/sbx-UID, mode 0700), named after the root's device
// and inode (its repository's common git directory's: see below): NAME.lock, whose flock is the group's mutex and whose content lists
// the placeholders made (NUL-terminated records), and NAME.live, on which every
// running sandbox holds a shared flock. Leaving takes the mutex, drops the
// shared lock and tries for an exclusive one: only the last sandbox gets it.
// A crashed launcher's lock goes with its process, and its reaper leaves for it.
//
// The group is one user's (its files are in that user's directory), and one
// directory's: the root's, or, for a root in a repository, its common git
// directory's (placeholder_group_anchor), so that the main work tree and the
// linked worktrees of one repository, whose placeholders in its git directory and
// whose lines in its info/exclude are one set, share them. Sandboxes of another user in the same root, or of the same user
// seeing another directory (a private /tmp), would take this group's
// placeholders for the project's files, and lose them when this group's last
// sandbox removes them. So every sandbox holds a shared flock on each
// placeholder it uses, which anyone who can read the placeholder can see, and a
// sandbox finding one of another group's held refuses to start (foreign_group()).
#pragma once

#include <sys/types.h>

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/fd_io.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/io/placeholder_registry.hpp"
#include "sbx/plan/plan.hpp"
#include "shared/leftovers.hpp"

namespace sbx::launcher {

class RootGroup {
public:
    // Joins the group of `plan.root`, holding the group's mutex until unlock().
    // Fails when the root cannot be looked at or the lock directory is not the
    // user's own, or lies where the sandbox can write.
    static sbx::expected<RootGroup> join(const sbx::Plan& plan);

    RootGroup(RootGroup&& other) noexcept = default;
    RootGroup& operator=(RootGroup&&) = delete;
    ~RootGroup() = default;  // the placeholders' locks, then the shared lock, then the mutex's file

    // The placeholders the group made that are still as made; call while holding
    // the mutex (they cannot then go away).
    std::vector<sbx::RegisteredPlaceholder> placeholders() const;

    // Records a placeholder this sandbox made; call while holding the mutex.
    sbx::expected<void> record(const Leftover& placeholder);

    // Holds a shared flock on the placeholders the plan uses, each inode once,
    // until leave(): the sign that they are in use, for other users.
    void hold_placeholders(const sbx::Plan& plan) { hold_placeholders(plan.filesystem.placeholders); }
    void hold_placeholders(std::span<const sbx::PlaceholderOp> placeholders);

    // Why this sandbox may not start, when something the plan protects in the
    // root as the project's is a placeholder of another group's sandbox still
    // running (sbx::foreign_placeholder). `ours`: placeholders(), read while
    // holding the mutex.
    static std::optional<sbx::Error> foreign_group(const sbx::Plan& plan,
                                                   const std::vector<sbx::RegisteredPlaceholder>& ours);

    // Adds the plan's placeholders to the block sbx keeps in the repository's
    // info/exclude while the group runs (the last sandbox out takes it out), so
    // that git outside does not list them; call while holding the mutex.
    void exclude_placeholders(const sbx::Plan& plan);

    // Lets other sandboxes of the root start or leave.
    void unlock();
    // Takes the group's mutex again, after unlock(), to make more placeholders
    // while the sandbox runs (a session's: session_mounts.hpp).
    void lock();

    // Leaves the group; the last sandbox out removes every recorded placeholder
    // still as it was made. Returns one line per thing it could not remove.
    std::vector<std::string> leave();

    // The files, for the reaper, which leaves for a launcher that died.
    const std::string& lock_path() const { return lock_path_; }
    const std::string& live_path() const { return live_path_; }

    // Leaves the group of these files on behalf of a sandbox whose shared lock is
    // already gone (its launcher died).
    static std::vector<std::string> leave_for_dead(const std::string& lock_path, const std::string& live_path);

private:
    RootGroup(std::string lock_path, std::string live_path, Fd lock_fd, Fd live_fd)
        : lock_path_(std::move(lock_path)),
          live_path_(std::move(live_path)),
          lock_fd_(std::move(lock_fd)),
          live_fd_(std::move(live_fd)) {}
    std::string lock_path_, live_path_;
    Fd lock_fd_;  // closed last of the three (members go in reverse order)
    Fd live_fd_;
    std::vector<Fd> held_;  // hold_placeholders()
};

}  // namespace sbx::launcher
