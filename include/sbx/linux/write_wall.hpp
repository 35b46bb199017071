// sbx/linux/write_wall.hpp - where the Landlock wall under bubblewrap lets the
// command write.
//
// bubblewrap's mounts decide what the command may write: `/` read-only, the
// writable places bound writable, protected paths read-only again inside them.
// Where the kernel has Landlock (ABI 2 or later), the stage also walls the
// command in with it just before the exec: every change to the file tree
// (writing, truncating, making, removing, renaming, linking) is refused outside
// the paths below, whatever the mounts say. So a mistake in the mount list, or
// in the stage's making of it, cannot open a write anywhere else.
//
// The paths come from the plan's rules, which say what the settings allow, not
// from its mounts, which are the thing walled: the literal part of each
// `writable` rule (the root, the temporary directory, `allowWrite`, the tool
// cache), and `/dev`, which is the sandbox's own (its terminals, /dev/null,
// /dev/shm). A plan without rules (a program other than `sbx plan` may leave
// them out) falls back to its own writable binds.
//
// `/proc` is on the list too (procfs makes and removes nothing, so that is
// writing to its files): a debugger writes a process's memory through
// /proc/PID/mem, glibc names another thread through /proc/self/task/TID/comm,
// and Landlock, whose rules attach to inodes, cannot tell a process's files,
// made as processes start, from the kernel's settings under /proc/sys. Those
// the read-only covers of bwrap.hpp alone keep.
//
// The stage adds what the caller handed the command, so that reopening it by
// name works as it would without the wall: the file or device behind each of
// descriptors 0-2 and the plan's passFds that is open for writing (`/dev/stdout`
// when standard output is a log file outside the root), and the directory
// behind a passed descriptor, beneath which the command may then change things
// (the caller's explicit grant). A file passed open for reading only can no
// longer be reopened for writing through /proc/self/fd, which the mounts alone
// allowed (the descriptor is of the host's mount, not the sandbox's).
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/plan/plan.hpp"

namespace sbx::linux_sandbox {

// The directories (or files) beneath which the wall lets the command change
// anything, sorted, none beneath another; empty where the plan isolates
// nothing (`filesystem.disabled`: `/` is writable, and there is no wall).
SBX_INLINE std::vector<std::string> write_wall_paths(const Plan& plan);

}  // namespace sbx::linux_sandbox

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_LINUX)

namespace sbx::linux_sandbox {

SBX_INLINE std::vector<std::string> write_wall_paths(const Plan& plan) {
    if (!plan.filesystem.isolated) return {};
    std::vector<std::string> out;
    for (const auto& r : plan.rules)
        if (r.kind == FsRule::Kind::writable) out.push_back(glob::literal_prefix(r.pattern));
    if (plan.rules.empty()) {
        for (const auto& m : plan.filesystem.mounts)
            if (m.kind == MountKind::bind || m.kind == MountKind::pin) out.push_back(m.path);
        if (!plan.tmpdir.empty()) out.push_back(plan.tmpdir);
    }
    out.emplace_back("/dev");
    out.emplace_back("/proc");
    // '/' before every other byte: what lies beneath a path then follows it
    // without a gap ("/a", "/a/b", "/a-b"), so each needs a look at the last kept.
    std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
        return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
            const auto key = [](char c) { return c == '/' ? 0 : static_cast<unsigned char>(c) + 1; };
            return key(x) < key(y);
        });
    });
    out.erase(std::unique(out.begin(), out.end()), out.end());
    std::vector<std::string> kept;
    for (auto& p : out)
        if (kept.empty() || !paths::at_or_under(p, kept.back())) kept.push_back(std::move(p));
    return kept;
}

}  // namespace sbx::linux_sandbox
#endif
