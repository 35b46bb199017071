// launchers/linux/session_mounts.hpp - mounts a session adds to its sandbox while it runs.
//
// A session's mounts are made once, as its sandbox starts. `sbx run` plans every
// run anew, and its next plan protects a repository made since the last one by
// mounts: its .git pinned, its git directory's hooks, config and the rest
// read-only, placeholders over the ones missing. So that a session's later
// commands are confined as that plan would confine them, the session
// (tools/sbx/session.cpp) makes such a plan when its survey finds a new
// repository and hands what it adds here, where it is made in the running
// sandbox: the placeholders on the host, as a plan's are (placeholders.hpp,
// the root's group's, under its mutex), then the mounts by a helper process
// inside the sandbox's mount namespace.
//
// The helper is forked from this process: this user's, outside every sandbox's
// PID namespace, so no command sees, traces or signals it, and undumpable. It
// joins the user namespace that owns the sandbox's mount namespace (this user
// made it, so holds every capability there), then that mount namespace, and for
// each mount, in the plan's order: opens its path with openat2, never through a
// symbolic link; checks it is the file the plan saw (device and inode); copies
// the mount there (open_tree), read-only for a ro-bind (mount_setattr); and moves
// the copy onto the very file it opened (move_mount). A command may rename
// things meanwhile, and a mount goes where its file went; so each path is
// looked up again afterwards, and one that is not that mount's root is said.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "sbx/io/placeholder_registry.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "shared/root_group.hpp"

namespace sbx::linux_sandbox {

// What a later plan adds to a running session's sandbox: `pin` and `ro-bind`
// mounts of a path over itself, in the plan's order, and the placeholders
// some of them go over (each with its ro-bind among `mounts`).
struct AddedMounts {
    std::vector<sbx::Mount> mounts;
    std::vector<sbx::PlaceholderOp> placeholders;
};

// A placeholder made while commands run could be changed by one between its
// making and its mount (a file chmod-ed and written, a folder filled), which
// the mount would then keep. Once it is mounted read-only inside, nothing
// inside can change it, and this process (outside, the file's owner) puts it
// back as made: its content and mode 0444, or a folder emptied (through its
// descriptor alone, following no link) and mode 0555. Empty when it was as
// made; else what was found, and what was put back.
std::string settle_placeholder(const sbx::RegisteredPlaceholder& p);

class SessionMounts {
public:
    // `bubblewrap`: the sandbox's bubblewrap, this process's child, whose one
    // child is the sandbox's init; `group`: the root's group this sandbox is in.
    SessionMounts(launcher::RootGroup& group, pid_t bubblewrap) : group_(group), bubblewrap_(bubblewrap) {}

    struct Result {
        std::vector<std::string> made;      // the paths of the mounts made, in order
        std::vector<std::string> problems;  // one line for each mount or placeholder not made, or made where it no longer stands
    };
    // Makes `added`. Not thread-safe: one caller at a time, and none once the
    // sandbox has ended.
    Result add(const AddedMounts& added);

private:
    launcher::RootGroup& group_;
    pid_t bubblewrap_;
};

}  // namespace sbx::linux_sandbox
