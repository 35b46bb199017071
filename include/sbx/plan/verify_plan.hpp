// sbx/plan/verify_plan.hpp - whether the disk still looks as it did when the plan was made.
//
// A plan records the identity (device, inode, type, links) of every path it
// mounts from and every directory it puts a placeholder in. verify_plan()
// compares them with what the FsView shows now, just before the launcher
// carries the plan out, so a path swapped in between is refused (STALE_PLAN)
// rather than mounted.
#pragma once

#include <string>
#include <string_view>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/plan/plan.hpp"

namespace sbx {

namespace detail {

SBX_INLINE std::string describe_identity(const Identity& id);

// Whether the disk shows what the plan expects. A directory's link count is no
// part of its identity: it changes whenever a folder is made or removed in it
// (another sandbox of the root making its placeholders, a build making a
// folder). A file's is: a new hard link is a new name to read it through.
SBX_INLINE bool same_identity(const Identity& got, const Identity& want);

}  // namespace detail

// Whether the disk still looks as it did when the plan was made: every mount's
// source (binds) or path (pins, masks), every placeholder's parent, and nothing
// at the placeholders, the names renamed after the run (filesystem.neutralise)
// and the temporary directory.
// Fails with STALE_PLAN naming the first path that differs.
SBX_INLINE expected<void> verify_plan(const Plan& p, const FsView& fs);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_PLAN)

namespace sbx::detail {

SBX_INLINE std::string describe_identity(const Identity& id) {
    if (!id.exists) return "nothing";
    std::string_view type = id.type == FileType::directory ? "a directory"
                            : id.type == FileType::regular ? "a file"
                            : id.type == FileType::symlink ? "a symlink"
                                                           : "a special file";
    return std::string(type) + " (device " + std::to_string(id.dev) + ", inode " + std::to_string(id.ino) + ", " +
           std::to_string(id.nlink) + " links)";
}

SBX_INLINE bool same_identity(const Identity& got, const Identity& want) {
    if (got.exists != want.exists) return false;
    if (!got.exists) return true;
    return got.type == want.type && got.dev == want.dev && got.ino == want.ino &&
           (got.type == FileType::directory || got.nlink == want.nlink);
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE expected<void> verify_plan(const Plan& p, const FsView& fs) {
    auto check = [&](const std::string& path, const Identity& want, std::string_view what) -> expected<void> {
        auto st = fs.lstat(path);
        if (!st)
            return fail(Error(Errc::stale_plan, "cannot look at " + std::string(what)).in_file(path).caused_by(st.error()));
        const Identity got = detail::identity_of(*st);
        if (detail::same_identity(got, want)) return {};
        return fail(Error(Errc::stale_plan, std::string(what) + " changed since the plan was made: it was " +
                                                detail::describe_identity(want) + ", it is " +
                                                detail::describe_identity(got) + "; make the plan again")
                        .in_file(path));
    };
    SBX_TRY(check(p.tmpdir, Identity{}, "the temporary directory"));
    for (const auto& m : p.filesystem.mounts) {
        const bool binds = m.kind == MountKind::bind || m.kind == MountKind::ro_bind;
        // The temporary directory and the placeholders are made by the launcher.
        if (binds && !m.expect.exists) continue;
        SBX_TRY(check(binds ? m.source : m.path, m.expect, "a mounted path"));
    }
    for (const auto& ph : p.filesystem.placeholders) {
        SBX_TRY(check(paths::parent(ph.path), ph.parent, "a placeholder's directory"));
        SBX_TRY(check(ph.path, Identity{}, "a placeholder's path"));
    }
    // What is there after the run was made during it: nothing may be there before.
    for (const auto& n : p.filesystem.neutralise) SBX_TRY(check(n.path, Identity{}, "a protected name"));
    if (const auto& ex = p.filesystem.git_exclude)
        SBX_TRY(check(ex->path, ex->expect, "the repository's exclude file"));
    return {};
}

}  // namespace sbx
#endif
