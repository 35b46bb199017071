// launchers/linux/cgroup.hpp - memory and processes limited for a whole sandbox, by a cgroup v2 of its own.
//
// Where this process sits in a delegated cgroup v2 hierarchy (a systemd user
// session's, a container's own), sbx-linux can make one cgroup for each
// sandbox, set the sandbox's memory and processes limits there, and move
// bubblewrap into it before it starts anything: every process of the sandbox
// then counts against one limit, which no fork and no setrlimit inside escapes.
//
// Two parts, the decision apart from the doing:
//   find_cgroup_parent  decides where such a cgroup may be made, from the text
//                       of /proc/self/mountinfo and /proc/self/cgroup and what
//                       a CgroupTreeView shows of the tree; or says why nowhere.
//   SandboxCgroup       makes it, writes what cgroup_writes says, and moves
//                       processes in, counts what its limits did, kills what
//                       is left and removes it.
//
// The sandboxed command runs inside this cgroup, as the user who owns it, and
// must not raise its own limits. It cannot reach them: it sees no writable
// cgroupfs (/sys is read-only inside, under the read-only `/` or kKernelCovers
// of sbx/linux/bwrap.hpp), it cannot mount one (no capabilities, and the
// seccomp filter refuses the mount family), and bubblewrap's cgroup namespace
// (--unshare-cgroup-try) makes this cgroup its namespace's root, whose control
// files the kernel refuses to a writer inside that namespace where the
// hierarchy is mounted with nsdelegate (systemd's default). For the last to
// hold, bubblewrap must be moved in (enter) before it unshares its namespaces.
// SandboxCgroup itself holds its directory by a descriptor and reaches every
// file through it, so a path renamed or replaced meanwhile is never followed.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd_io.hpp"
#include "sbx/core/expected.hpp"

namespace sbx::linux_sandbox {

// How find_cgroup_parent looks at the cgroup tree. It asks only about files
// below the cgroup2 mount point it found; a test hands a view of a stand-in
// directory, or one that records what it was asked.
struct CgroupTreeView {
    // The text of a small file; nullopt when it cannot be read.
    std::function<std::optional<std::string>(const std::string& path)> read_text;
    // Whether this process may write `path` (access(2) with W_OK).
    std::function<bool(const std::string& path)> writable;
    // Whether the cgroup directory `path` is marked as delegated: its extended
    // attribute user.delegate or trusted.delegate is "1", as systemd marks the
    // cgroup of a unit with Delegate=yes. A cgroup systemd manages itself (a
    // slice, a scope without it) is the service manager's alone to change.
    std::function<bool(const std::string& path)> delegated;
};

// The view of this machine's files, as they are.
CgroupTreeView host_cgroup_tree();

// Where a sandbox's cgroup may be made, or why nowhere.
struct CgroupParent {
    std::string dir;  // the directory to make it in, as this process reaches it; empty when there is none
    std::string why;  // one sentence for `sbx doctor`: why `dir` qualifies, or why there is none
    std::string own;  // this process's own cgroup's directory, which it goes back to after a start (move_self)
    bool memory = false;  // `dir` hands the memory controller to its children
    bool pids = false;    // and the pids controller

    bool found() const { return !dir.empty(); }
};

// Decides where a sandbox's cgroup may be made. `mountinfo` and `self_cgroup`
// are the texts of /proc/self/mountinfo and /proc/self/cgroup. The place is
// the parent of this process's own cgroup (the sandbox's becomes a sibling of
// its caller's: cgroup v2 lets no cgroup with processes of its own hand
// controllers to children). It qualifies only where it is marked as delegated
// (CgroupTreeView::delegated: never a tree systemd manages itself), its
// cgroup.subtree_control already lists memory and pids (sbx never changes it:
// that would change the caller's hierarchy), and this process may write the
// directory and its cgroup.procs (moving a process between two cgroups needs
// their common ancestor's). Nothing outside the cgroup2 mount point is looked at.
CgroupParent find_cgroup_parent(std::string_view mountinfo, std::string_view self_cgroup, const CgroupTreeView& tree);

// The same for a directory the caller names (sbx-linux --cgroup-parent DIR: a
// CI runner's or a service's own delegated cgroup). It qualifies where it
// lies on a cgroup2 mount, this process may write it and its cgroup.procs,
// and this process's own cgroup is found to come back to; the controllers it
// hands down are taken as they are (a limit whose controller it lacks stays
// per process). Nothing outside the cgroup2 mount points is looked at.
CgroupParent given_cgroup_parent(const std::string& dir, std::string_view mountinfo, std::string_view self_cgroup,
                                 const CgroupTreeView& tree);

// Moves this process, all its threads, into the cgroup whose directory is
// `dir` (its cgroup.procs). IO_ERROR naming that file.
sbx::expected<void> move_self(const std::string& dir);

// The limits a sandbox's cgroup holds; nullopt: none of that kind.
struct CgroupLimits {
    std::optional<std::uint64_t> memory_bytes;
    std::optional<std::uint64_t> processes;
};

// What a write does where its control file is missing (an older kernel, a
// controller left out).
enum class WhereMissing {
    fail,  // the limit cannot hold: the cgroup is not made
    skip,  // the write only tightens another limit: left out
};

// One control file of a sandbox's cgroup and the value it is given.
struct CgroupWrite {
    std::string_view file;  // relative to the sandbox's cgroup
    std::string value;
    WhereMissing missing;
    std::string_view why;
};

// Which file gets which value for `limits`, in the order they are written.
std::vector<CgroupWrite> cgroup_writes(const CgroupLimits& limits);

// Writes each of `writes` into the control files of the directory open at
// `dir` (any descriptor on it, O_PATH will do), opening each relative to it,
// without creating one and following no symbolic link. `dir_path` names the
// files in errors. IO_ERROR naming the file at the first that fails.
sbx::expected<void> apply_cgroup_writes(int dir, const std::string& dir_path, std::span<const CgroupWrite> writes);

// What a sandbox's limits did, from its cgroup's memory.events and pids.events.
struct CgroupEvents {
    std::uint64_t oom_kills = 0;        // processes the kernel killed at the memory limit (oom_kill)
    std::uint64_t memory_max_hits = 0;  // times the memory use was about to pass the limit (memory's max)
    std::uint64_t pids_max_hits = 0;    // forks that failed at the processes limit (pids' max)
};

// Reads the texts of memory.events and pids.events (empty where a file is
// missing). Each line is a key, one space and a decimal count; a line of any
// other shape, a count that does not fit, and keys it does not know are left
// out, so that no text can make it fail.
CgroupEvents parse_cgroup_events(std::string_view memory_events, std::string_view pids_events);

// A fresh name for a sandbox's cgroup: "sbx-PID-" then 16 hexadecimal digits
// from the kernel's random source, so that a cgroup left by a launcher that
// died is never taken for this one's. IO_ERROR when the kernel gives none.
sbx::expected<std::string> sandbox_cgroup_name();

// One sandbox's cgroup: a child of the directory find_cgroup_parent chose.
// Move-only; it is not removed when it goes (the launcher kills what is left
// and removes it, in its clean-up). Not thread-safe.
class SandboxCgroup {
public:
    // Makes parent/name (mode 0755, failing where something is there already)
    // and writes what cgroup_writes(limits) says. Where a write fails, the
    // directory is removed again and the error names the file. INVALID_ARGUMENT
    // when `name` is not one path component; IO_ERROR naming the path else.
    static sbx::expected<SandboxCgroup> make(const std::string& parent, const std::string& name,
                                             const CgroupLimits& limits);

    // The cgroup's directory, for messages.
    const std::string& path() const { return path_; }

    // Moves process `pid`, all its threads, into it by its cgroup.procs; the
    // children it makes afterwards start there. IO_ERROR naming that file.
    sbx::expected<void> enter(pid_t pid) const;

    // Writes what cgroup_writes(limits) says, as make() does: for a cgroup made
    // before its plan was known (a sandbox started early).
    sbx::expected<void> limit(const CgroupLimits& limits) const;

    // What its limits did so far; zeros for a file it lacks or that cannot be read.
    CgroupEvents events() const;

    // Whether a process is still in it (its cgroup.procs lists one, or cannot be read).
    bool has_processes() const;

    // Kills every process in it: by cgroup.kill (Linux 5.14), else by freezing
    // it where cgroup.freeze exists (Linux 5.2) and sending SIGKILL to each
    // process cgroup.procs lists until it lists no new one. The processes may
    // take a moment to leave once killed. IO_ERROR naming the file it could not
    // write or read.
    sbx::expected<void> kill_all() const;

    // Removes its directory (rmdir: on cgroupfs, a cgroup with no process left
    // goes with its control files). EBUSY means processes are still in it:
    // kill_all, wait for them, and remove again. Refuses, leaving both, when its
    // name now holds another directory than the one it made. IO_ERROR naming
    // the path.
    sbx::expected<void> remove();

private:
    SandboxCgroup(launcher::Fd parent, launcher::Fd dir, std::string name, std::string path)
        : parent_(std::move(parent)), dir_(std::move(dir)), name_(std::move(name)), path_(std::move(path)) {}

    sbx::expected<void> kill_each() const;

    launcher::Fd parent_;  // the parent directory, O_PATH: where `name_` is removed
    launcher::Fd dir_;     // the cgroup's own directory, O_PATH, opened once without following a link
    std::string name_;
    std::string path_;
};

}  // namespace sbx::linux_sandbox
