// sbx/settings/project_root.hpp - which directory is the project when no --root names it.
//
// find_project_root() decides it from the current directory, the homes to keep
// out and what an FsView shows, and says why: the top of the git work tree that
// holds the current directory (the nearest directory above it, or itself, with
// a `.git`), else the nearest with a `.claude` folder, else the current
// directory itself. The walk never takes a home directory, a directory holding
// one, or `/`: it stops below them (a home's own `.claude` is the user layer, and
// a home that is a dotfiles repository is not the project of every folder in it).
// The root the walk finds is made writable and its settings are read as the
// project's, so every marker it takes must be one git or Claude Code would take
// too, and be the caller's own; anything it cannot judge stops it with an error
// rather than letting it pick another root.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "sbx/core/error.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"

namespace sbx {

enum class RootReason {
    option,             // named with --root
    git_work_tree,      // the nearest directory with a `.git` (directory or file)
    claude_folder,      // no `.git` on the way: the nearest with a `.claude` folder
    current_directory,  // neither below the first home, directory holding one, or `/`
};

// A reason's name in JSON (`sbx policy --json`, `sbx explain --json`).
constexpr std::string_view root_reason_name(RootReason r) noexcept {
    switch (r) {
        case RootReason::option: return "option";
        case RootReason::git_work_tree: return "git-work-tree";
        case RootReason::claude_folder: return "claude-folder";
        case RootReason::current_directory: return "current-directory";
    }
    return "?";
}

struct ProjectRoot {
    std::string root;  // absolute, normalised, symlink-free
    RootReason reason = RootReason::option;
    // git_work_tree and claude_folder: the `.git` or `.claude` that decided.
    std::string decided_by;
    // current_directory: the first directory the walk did not look in (a home,
    // a directory holding one, or `/`); the current directory itself when it is
    // one of those, and nothing was looked at.
    std::string stopped_at;
};

// The root --root names (absolute, normalised, symlink-free).
inline ProjectRoot named_root(std::string root) { return ProjectRoot{std::move(root), RootReason::option, {}, {}}; }

// Why `r` is the root, in words, for people: the header of `sbx policy`, the
// plan's `rootWhy`, the line `sbx run` prints.
SBX_INLINE std::string root_why(const ProjectRoot& r);

namespace detail {

// The markers, in the order they rank: a `.git` anywhere on the way wins over a
// nearer `.claude`, as a repository's work tree is what git writes in.
struct RootMarker {
    std::string_view name;
    RootReason reason;
    std::string_view why;
};
inline constexpr RootMarker kRootMarkers[] = {
    {".git", RootReason::git_work_tree,
     "the top of a git work tree: git writes its index and objects here from any folder below"},
    {".claude", RootReason::claude_folder, "Claude Code's project folder: the project's settings are read from it"},
};
static_assert(kRootMarkers[0].reason == RootReason::git_work_tree, "git ranks first");

// Whether the walk may look in `dir` at all: not `/`, not a home and not above one.
SBX_INLINE bool may_be_project(std::string_view dir, std::span<const std::string> homes);

SBX_INLINE Error root_error(std::string why, const std::string& path);
// What cannot be looked at is not skipped: that would pick another root.
SBX_INLINE Error unreadable(const std::string& path, Error cause);

// Whether `uid` may own something the walk takes: the caller, or root (who
// could change anything of the caller's anyway).
inline bool trusted_owner(std::uint32_t owner, std::uint32_t uid) { return owner == uid || owner == 0; }

// Whether `dir` holds marker `m` that the walk takes: a `.git` directory with a
// HEAD (git's own test, in short: an empty `.git`, such as the placeholder of a
// running sandbox, is skipped, as git skips it) or a `.git` file (a linked
// worktree or a submodule); a `.claude` directory that holds something (an empty
// one decides nothing, and is what a running sandbox covers a missing one with).
// Errors stop the walk: a symlinked marker (sbx does not follow it to decide
// which directory becomes writable), one of another owner than the caller or
// root (anyone can make `/tmp/.git`), one that cannot be looked at.
SBX_INLINE expected<bool> holds_marker(const std::string& dir, const RootMarker& m, std::uint32_t uid, const FsView& fs);

}  // namespace detail

// The project that holds `cwd` (absolute, normalised, symlink-free), walking up
// from it and looking in no directory that is `/` or is or holds one of `homes`
// (as homes_to_keep_out gives them: each as written and as its real path). When
// `cwd` is itself such a directory, it is the root (and the caller's refusal of a
// root exposing a home applies). `uid` is the caller's: a marker, and the
// directory holding it, must be its or root's. Errors name the path: a marker
// that is a symlink or another user's (INVALID_ARGUMENT), or that cannot be
// looked at (IO_ERROR); the walk never skips one to pick another root. A
// `.claude` the walk cannot take is an error only when no `.git` above it
// decides instead, as that would outrank the `.claude` anyway.
SBX_INLINE expected<ProjectRoot> find_project_root(std::string_view cwd, std::span<const std::string> homes,
                                               std::uint32_t uid, const FsView& fs);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_SETTINGS)

namespace sbx {

SBX_INLINE std::string root_why(const ProjectRoot& r) {
    switch (r.reason) {
        case RootReason::option: return "named with --root";
        case RootReason::git_work_tree:
            return "the top of the git work tree holding the current directory (" + r.decided_by + ")";
        case RootReason::claude_folder:
            return "the nearest folder holding the current directory with a .claude folder (" + r.decided_by +
                   "), and no git work tree";
        case RootReason::current_directory:
            if (r.stopped_at == r.root)
                return r.root == "/" ? "the current directory: sbx never looks for a project in /"
                                     : "the current directory: it is or holds your home directory, where sbx does "
                                       "not look for a project";
            return "the current directory: no git work tree or .claude folder holds it below " + r.stopped_at;
    }
    return "?";
}

}  // namespace sbx

namespace sbx::detail {

SBX_INLINE bool may_be_project(std::string_view dir, std::span<const std::string> homes) {
    if (dir == "/") return false;
    for (const auto& h : homes)
        if (paths::at_or_under(h, dir)) return false;
    return true;
}

SBX_INLINE Error root_error(std::string why, const std::string& path) {
    return Error(Errc::invalid_argument, std::move(why) + "; name the project with --root DIR").in_file(path);
}

SBX_INLINE Error unreadable(const std::string& path, Error cause) {
    return Error(Errc::io_error, "cannot tell whether the project's root is here; name the project with --root DIR")
        .in_file(path)
        .caused_by(std::move(cause));
}

SBX_INLINE expected<bool> holds_marker(const std::string& dir, const RootMarker& m, std::uint32_t uid, const FsView& fs) {
    const std::string at = paths::join(dir, m.name);
    auto st = fs.lstat(at);
    if (!st) return fail(unreadable(at, std::move(st.error())));
    if (!*st) return false;
    const bool git = m.reason == RootReason::git_work_tree;
    switch ((*st)->type) {
        case FileType::symlink:
            return fail(root_error("a symbolic link: sbx does not follow it to decide which folder is the project", at));
        case FileType::other:
            if (!git) return false;
            return fail(root_error("neither a directory nor a file, so git cannot use it", at));
        case FileType::regular:
            if (!git) return false;  // a file named .claude is no folder
            break;
        case FileType::directory: {
            if (git) {
                auto head = fs.lstat(paths::join(at, "HEAD"));
                if (!head) return fail(unreadable(at, std::move(head.error())));
                if (!*head) return false;
            } else {
                auto names = fs.list(at);
                if (!names) return fail(unreadable(at, std::move(names.error())));
                if (names->empty()) return false;
            }
            break;
        }
    }
    auto holder = fs.lstat(dir);
    if (!holder) return fail(unreadable(dir, std::move(holder.error())));
    if (!*holder) return false;  // gone since
    for (const auto& [path, owner] : {std::pair{at, (*st)->uid}, std::pair{dir, (*holder)->uid}})
        if (!trusted_owner(owner, uid))
            return fail(root_error("owned by uid " + std::to_string(owner) + ", neither you (uid " + std::to_string(uid) +
                                       ") nor root: sbx does not take another user's folder for your project (nor "
                                       "does git)",
                                   path));
    return true;
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE expected<ProjectRoot> find_project_root(std::string_view cwd, std::span<const std::string> homes,
                                               std::uint32_t uid, const FsView& fs) {
    const std::string here = paths::normalize(cwd);
    if (!detail::may_be_project(here, homes)) return ProjectRoot{here, RootReason::current_directory, {}, here};
    // The nearest .claude folder, or why it cannot be taken, should no .git come.
    std::optional<expected<ProjectRoot>> claude;
    std::string dir = here;
    for (; detail::may_be_project(dir, homes); dir = paths::parent(dir)) {
        for (const auto& m : detail::kRootMarkers) {
            const bool git = m.reason == RootReason::git_work_tree;
            if (!git && claude) continue;
            auto found = detail::holds_marker(dir, m, uid, fs);
            if (!found && git) return fail(found.error());
            if (!found) claude = fail(found.error());
            if (!found || !*found) continue;
            ProjectRoot r{dir, m.reason, paths::join(dir, m.name), {}};
            if (git) return r;
            claude = std::move(r);
        }
    }
    if (claude) return *claude;
    return ProjectRoot{here, RootReason::current_directory, {}, dir};
}

}  // namespace sbx
#endif
