// sbx/linux/weaker_broker.hpp - which changes the weaker sandbox's file broker makes.
//
// Landlock grants by hierarchy and never takes away, so the weaker sandbox
// (weaker_rules.hpp) gives no rule of its own to a writable directory with a
// protected path beneath it (the root, with its placeholders' names; `.git`,
// with its config and hooks): nothing can be made, removed or renamed directly
// in it, and nothing in what is made there later either. Left there, `mkdir
// src`, `touch notes.md` and the lock files of `git commit` fail.
//
// A broker outside the sandbox makes those changes for the command: every
// system call that could change the file tree stops in the launcher (a seccomp
// filter's user notification), which either lets the kernel go on (Landlock
// then decides, as it would have alone) or, where Landlock would refuse and
// the plan allows, makes the change itself and answers for the kernel. This
// header decides which, from the plan and the grants, on paths alone; the
// launcher (launchers/linux/file_broker.cpp) resolves the command's paths to where
// they lie, and acts through descriptors, never following a link at the last
// step.
//
// The plan allows a change at a path when, of the writable binds and the
// protected paths (weaker_rules.hpp's stops) at or above it, the nearest is a
// writable bind: as under bubblewrap, where the innermost mount decides. A
// path that is itself a mount point, or has one beneath it, is never removed,
// renamed, replaced or made anything but a directory: under bubblewrap it
// would be busy or covered. Nor is a name matching one of the plan's
// filesystem.neutraliseNew patterns in its directory (a new `AGENT-x.md`, which
// bubblewrap's sandbox lets be made and renames after the run): the weaker
// sandbox refuses it while the command runs. Whatever the broker does not make, the kernel
// decides, so a mistake here can refuse what the plan allows, never the other
// way round: the broker only adds what Landlock cannot say.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/linux/weaker_rules.hpp"
#include "sbx/plan/plan.hpp"

namespace sbx::linux_sandbox {

// A change the command asked for, by what it needs of its path or paths.
enum class FileChange {
    write,     // open an existing file for writing (or truncate it)
    make,      // make a file, a FIFO, a symbolic link or a hard link's new name at `path`
    make_dir,  // make a directory at `path`
    remove,    // remove `path` (a file or an empty directory)
    rename,    // rename `from` to `path` (or exchange them)
    link,      // a hard link to `from` at `path`
};

// Who makes it.
enum class BrokerStep {
    kernel,  // the kernel goes on: Landlock allows or refuses it as it would alone
    broker,  // the broker makes it: the plan allows it and Landlock would refuse
};

class WeakerBroker {
public:
    WeakerBroker(const Plan& plan, const WeakerFsRules& rules) {
        std::vector<std::string> stops = detail::protected_points(plan), writable, mounts = stops, write_grants;
        for (const auto& m : plan.filesystem.mounts) {
            if (m.kind == MountKind::bind) writable.push_back(m.path);
            mounts.push_back(m.path);
        }
        std::vector<std::string> devices;
        for (const auto& g : rules.grants) {
            if (g.kind == LandlockGrant::Kind::write) write_grants.push_back(g.path);
            if (g.kind == LandlockGrant::Kind::device || g.kind == LandlockGrant::Kind::terminal)
                devices.push_back(g.path);
        }
        devices_ = detail::PathPoints(std::move(devices));
        stops_ = detail::PathPoints(std::move(stops));
        starts_ = detail::PathPoints(std::move(writable));
        mounts_ = detail::PathPoints(std::move(mounts));
        grants_ = detail::PathPoints(std::move(write_grants));
        active_ = plan.filesystem.isolated;
        patterns_ = plan.filesystem.neutralise_new;
    }

    // Whether the broker is wanted at all: a plan that does not isolate the
    // filesystem grants `/` whole.
    bool active() const { return active_; }

    // `path` (and `from`): absolute and clean, where they lie (no symbolic
    // link in them, but perhaps the last component).
    BrokerStep step(FileChange change, const std::string& path, const std::string& from = {}) const;

    // Whether Landlock's grants allow `change` by themselves: the file's own
    // grant or its folder's (for a rename or link, both folders').
    bool landlock_allows(FileChange change, const std::string& path, const std::string& from = {}) const;

    // Whether the plan lets the command change `path`: the nearest writable
    // bind or protected path at or above it is a writable bind.
    bool may_change(std::string p) const;

    // Whether Landlock lets the command change `path`: it lies at or beneath
    // a write grant.
    bool granted(const std::string& path) const { return grants_.at_or_under_one(path); }

    // Whether `path` is a mount point of the plan's, or has one beneath it.
    bool holds_mount(const std::string& path) const { return mounts_.contains(path) || !mounts_.beneath(path).empty(); }

private:
    detail::PathPoints stops_{{}}, starts_{{}}, mounts_{{}}, grants_{{}}, devices_{{}};
    std::vector<NeutraliseNewOp> patterns_;  // filesystem.neutraliseNew
    bool active_ = false;

    // Whether `p` is a name one of the plan's neutraliseNew patterns refuses.
    bool refused_name(const std::string& p) const;

    static BrokerStep ours(bool allowed) { return allowed ? BrokerStep::broker : BrokerStep::kernel; }
};

}  // namespace sbx::linux_sandbox

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_LINUX)

namespace sbx::linux_sandbox {

SBX_INLINE BrokerStep WeakerBroker::step(FileChange change, const std::string& path, const std::string& from) const {
    if (!active_ || path.empty() || path == "/" || landlock_allows(change, path, from)) return BrokerStep::kernel;
    switch (change) {
        case FileChange::write: return ours(may_change(path));
        case FileChange::make:
        case FileChange::remove: return ours(may_change(path) && !holds_mount(path));
        case FileChange::make_dir: return ours(may_change(path) && !mounts_.contains(path));
        case FileChange::rename:
        case FileChange::link:
            if (from.empty() || from == "/") return BrokerStep::kernel;
            return ours(may_change(path) && !holds_mount(path) && may_change(from) && !holds_mount(from));
    }
    return BrokerStep::kernel;
}

SBX_INLINE bool WeakerBroker::landlock_allows(FileChange change, const std::string& path, const std::string& from) const {
    switch (change) {
        case FileChange::write: return granted(path) || devices_.contains(path);  // `>/dev/null`
        case FileChange::make: return granted(paths::parent(path)) || granted(path);
        case FileChange::make_dir:
        case FileChange::remove: return granted(paths::parent(path));
        case FileChange::rename:
        case FileChange::link: return !from.empty() && granted(paths::parent(path)) && granted(paths::parent(from));
    }
    return false;
}

SBX_INLINE bool WeakerBroker::refused_name(const std::string& p) const {
    return std::any_of(patterns_.begin(), patterns_.end(), [&](const NeutraliseNewOp& op) { return op.matches(p); });
}

SBX_INLINE bool WeakerBroker::may_change(std::string p) const {
    if (refused_name(p)) return false;
    for (;;) {
        if (stops_.contains(p)) return false;
        if (starts_.contains(p)) return true;
        if (p == "/") return false;
        p = paths::parent(p);
    }
}

}  // namespace sbx::linux_sandbox
#endif
