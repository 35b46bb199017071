// sbx/rules/protected_entries.hpp - what a protected path is, and the collector that gathers them through an FsView.
//
// protected_paths() (protected_paths.hpp) and the git repository walk
// (git_repository.hpp) both end in entries: a path, how the plan maker guards it
// (Guard) and what covers it while missing (Placeholder), with a reason. The
// Collector holds them for one computation: it looks at each path through the
// FsView it is handed, adds where a symlink leads as an entry of its own, keeps
// one entry per path (the stronger guard wins), bounds the directory listings and
// turns what cannot be looked at into warnings. Name is the row of the fixed-name
// tables.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/settings/layer.hpp"

namespace sbx {

// How the plan maker guards one protected path.
enum class Guard {
    read_only,  // bind read-only over it; when missing, cover it with a read-only placeholder
    pin,        // an existing directory bound over itself (writable), so it cannot be renamed,
                // removed or replaced; its protected children are listed separately
    // An existing directory outside the root that git writes for the root's own
    // repository (the main repository's git directory of a linked worktree): a
    // writable place of its own, bound over itself like a pin, so it cannot be
    // renamed, removed or replaced either; its protected children are listed
    // separately. Not a protection but a grant, decided with them.
    git_writable,
};

// What covers a read_only path while the command runs, when the path does not exist.
enum class Placeholder {
    file,       // an empty file (for a *.json name, an empty object: placeholder_content)
    directory,  // an empty directory
    commondir,  // a git directory's `commondir` naming that directory itself (`.`): git
                // and libgit2 then see the repository as if it had none, where an empty
                // file would stop git and a missing one could be planted
};

// How a missing read_only path is guarded under bubblewrap. Seatbelt refuses a
// write by its path, missing or not, so on macOS both are refused while the
// command runs.
enum class Missing {
    // Covered by a read-only placeholder while the command runs: something
    // outside reads it then (the agent host its settings and hooks, an open
    // editor its settings), so it may not exist for a moment.
    covered,
    // Left uncovered, and renamed to NAME.sbx-disabled once the command is over
    // when it was made (filesystem.neutralise, launchers/linux/git_audit.cpp): only a
    // later program reads it (a shell started in that directory, direnv, the next
    // commit, an agent's next start), and a placeholder would be one more entry
    // that everything listing the root sees (`ls`, `tar`, an MCP server). A
    // missing one that holds a covered entry (a hooks path inside `.husky`:
    // Collector::finish) or that a denyWrite names (cover_missing_folders) is
    // covered instead.
    after_run,
};

constexpr std::string_view guard_name(Guard g) noexcept {
    switch (g) {
        case Guard::read_only: return "read-only";
        case Guard::pin: return "pin";
        case Guard::git_writable: return "git-writable";
    }
    return "?";
}

constexpr std::string_view placeholder_name(Placeholder p) noexcept {
    switch (p) {
        case Placeholder::file: return "file";
        case Placeholder::directory: return "directory";
        case Placeholder::commondir: return "commondir";
    }
    return "?";
}

// What a placeholder of kind `p` at `path` holds: nothing; for a file named
// *.json an empty JSON object, so that a program outside that loads it while the
// command runs (Claude Code reads .claude/settings.local.json) reads a valid,
// empty document; for a commondir `.` and a line end: its own directory, named
// relative to itself so that a copy of the repository made while the command
// runs (`tar c .`) names itself too, not this one.
SBX_INLINE std::string placeholder_content(Placeholder p, std::string_view path);

struct ProtectedPath {
    std::string path;         // absolute, normalised; may not exist
    Guard guard = Guard::read_only;
    Placeholder placeholder = Placeholder::file;  // meaningful for read_only entries only
    std::string reason;              // one line: why, plus context such as "target of symlink X"
    Missing missing = Missing::covered;  // for read_only entries that do not exist
};

// Whether `p`, when missing, is left uncovered under bubblewrap and renamed after
// the run (filesystem.neutralise): a Missing::after_run name directly in `root`.
SBX_INLINE bool renamed_after_run(const ProtectedPath& p, std::string_view root);

struct ProtectedPaths {
    // Sorted by path, so a directory comes before anything inside it. Each path once;
    // when two rules name the same path the stronger guard wins (read_only over
    // git_writable over pin: both of those pin, one also grants writes).
    // Nothing is listed strictly inside a read_only entry that is a directory or
    // missing: the read-only bind (or the empty placeholder) already covers it.
    std::vector<ProtectedPath> paths;
    // What could not be looked at (an unreadable directory, a symlink loop, a walk cut
    // short); `file` names the path, `key` is empty.
    std::vector<Warning> warnings;
    // The info/exclude file git reads in the root (its own `.git` directory's, or a
    // linked worktree's main repository's), where sbx lists its placeholders while
    // commands run; nullopt when the root has none of these.
    std::optional<std::string> git_exclude;

    // The entry for exactly `path` (normalised), or nullptr.
    const ProtectedPath* find(std::string_view path) const;
};

// The fixed names, as data: the tables are in protected_paths.hpp and, for git
// directories, git_repository.hpp.
namespace protected_names {

// What lies directly in a protected directory: data, or programs something runs
// (hooks), whose symlinks then protect their targets too.
enum class Contents { data, run };

// For kGitDirEntries: whether a name is covered in a linked worktree's directory
// (`worktrees/NAME`) only when it is there, or even when missing; or not at all,
// since git reads it from the main git directory alone (`info/`).
enum class Worktree { when_present, even_missing, never };

struct Name {
    std::string_view name;    // relative to the directory the table applies to
    Placeholder placeholder;  // what covers it when missing: its natural kind
    std::string_view reason;
    Contents contents = Contents::data;
    Worktree in_worktree = Worktree::when_present;
    Missing missing = Missing::covered;
};

using P = Placeholder;

// A commondir placeholder names the git directory it lies in: only a git
// directory's own `commondir` may get one.
template <class Table>
constexpr bool commondir_only_for_commondir(const Table& table) {
    for (const auto& n : table)
        if ((n.placeholder == P::commondir) != (n.name == "commondir")) return false;
    return true;
}

// How much of a directory tree one computation looks through: entries per listed
// directory and entries over all listings (git_repository.hpp bounds submodule
// nesting). Past either the rest is left out with a warning.
inline constexpr std::size_t kMaxEntriesPerDirectory = 1000;
inline constexpr std::size_t kMaxEntriesWalked = 10000;

}  // namespace protected_names

namespace protect_detail {

enum class Kind { missing, directory, regular, symlink, other, unknown };

// Gathers entries and warnings for one protected_paths() call.
class Collector {
public:
    explicit Collector(const FsView& fs) : fs_(fs) {}

    // What is at `p` itself; unknown (with a warning) when lstat fails.
    Kind kind_of(const std::string& p);

    // Where `p` really leads (sbx::resolve); nullopt with a warning on a symlink loop
    // or an unreadable component.
    std::optional<std::string> real_path(const std::string& p);

    // What `p` leads to: its real path and the kind of thing there (`p`'s own kind
    // when it is no symlink and has none above it).
    std::pair<std::string, Kind> follow(const std::string& p);

    // Where the kernel takes `p` (absolute, but perhaps with `.`, `..` and symlinks on
    // the way, as a value in a config file is joined to its base): the directories on
    // the way resolved, the last name kept as written, so that a symlink there is
    // protected itself and not only its target (add() takes care of that one).
    std::string place(std::string_view p);

    // Lists `p` (a directory), sorted, cut to the limits with a warning.
    std::vector<std::string> list(const std::string& p);

    // Adds `path` with a guard and, when a symlink lies at or above it, the place it
    // leads to as an entry of its own. A pin or git_writable whose target is no
    // directory becomes read_only there. A directory whose entries are run (Contents::run) also
    // protects the targets of the symlinks directly in it.
    void add(const std::string& path, Guard guard, Placeholder ph, const std::string& reason,
             protected_names::Contents contents = protected_names::Contents::data, Missing missing = Missing::covered);

    // `missing`: how it is guarded while missing, when not as the table says.
    void add_name(const std::string& dir, const protected_names::Name& n, const std::string& context = {},
                  std::optional<Missing> missing = std::nullopt);

    // An error's text for a warning about `about`: its message alone when it names that path.
    static std::string describe(const Error& e, const std::string& about) {
        return e.file.empty() || e.file == about ? e.message : to_string(e);
    }

    void warn(const std::string& path, std::string message);

    // The entries, sorted, with those covered by a read_only directory left out.
    ProtectedPaths finish();

private:
    const FsView& fs_;
    std::vector<ProtectedPath> paths_;
    std::unordered_map<std::string, std::size_t> index_;
    std::vector<Warning> warnings_;
    std::size_t walked_ = 0;

    // How strong a guard is, for put(): read_only refuses writes, git_writable grants
    // them where a pin only keeps the directory in place.
    static int strength(Guard g);

    // One entry per path: the stronger guard wins (with its placeholder and
    // reason), and a placeholder while the command runs over a rename after it.
    void put(const std::string& path, Guard guard, Placeholder ph, const std::string& reason,
             Missing missing = Missing::covered);
};

}  // namespace protect_detail

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_RULES)

namespace sbx {

SBX_INLINE std::string placeholder_content(Placeholder p, std::string_view path) {
    if (p == Placeholder::commondir) return ".\n";
    const std::string_view name = path.substr(path.rfind('/') + 1);
    if (p == Placeholder::file && name.size() > 5 && name.ends_with(".json")) return "{}\n";
    return {};
}

SBX_INLINE bool renamed_after_run(const ProtectedPath& p, std::string_view root) {
    return p.guard == Guard::read_only && p.missing == Missing::after_run && paths::parent(p.path) == root;
}

SBX_INLINE const ProtectedPath* ProtectedPaths::find(std::string_view path) const {
    auto it = std::lower_bound(paths.begin(), paths.end(), path,
                               [](const ProtectedPath& p, std::string_view v) { return p.path < v; });
    return it != paths.end() && it->path == path ? &*it : nullptr;
}

}  // namespace sbx

namespace sbx::protect_detail {

SBX_INLINE Kind Collector::kind_of(const std::string& p) {
    auto st = fs_.lstat(p);
    if (!st) {
        warn(p, "cannot look at it: " + describe(st.error(), p));
        return Kind::unknown;
    }
    if (!*st) return Kind::missing;
    switch ((*st)->type) {
        case FileType::directory: return Kind::directory;
        case FileType::regular: return Kind::regular;
        case FileType::symlink: return Kind::symlink;
        case FileType::other: return Kind::other;
    }
    return Kind::other;
}

SBX_INLINE std::optional<std::string> Collector::real_path(const std::string& p) {
    auto r = resolve(fs_, p);
    if (!r) {
        warn(p, "cannot follow its symbolic links: " + describe(r.error(), p));
        return std::nullopt;
    }
    return std::move(*r);
}

SBX_INLINE std::pair<std::string, Kind> Collector::follow(const std::string& p) {
    auto r = real_path(p);
    if (!r) return {p, Kind::unknown};
    return {*r, kind_of(*r)};
}

SBX_INLINE std::string Collector::place(std::string_view p) {
    std::string s(p);
    while (s.size() > 1 && s.back() == '/') s.pop_back();
    const auto slash = s.rfind('/');
    const std::string_view last = std::string_view(s).substr(slash + 1);
    if (last.empty() || last == "." || last == "..") {
        auto whole = real_path(s);
        return whole ? *whole : paths::normalize(s);
    }
    const std::string dir = slash == 0 ? std::string("/") : s.substr(0, slash);
    auto real = real_path(dir);
    return paths::join(real ? *real : paths::normalize(dir), last);
}

SBX_INLINE std::vector<std::string> Collector::list(const std::string& p) {
    using namespace protected_names;
    auto names = fs_.list(p);
    if (!names) {
        warn(p, "cannot list it: " + describe(names.error(), p));
        return {};
    }
    std::sort(names->begin(), names->end());
    if (names->size() > kMaxEntriesPerDirectory) {
        warn(p, "more than " + std::to_string(kMaxEntriesPerDirectory) +
                    " entries; those past the first (by name) are not looked at");
        names->resize(kMaxEntriesPerDirectory);
    }
    if (walked_ + names->size() > kMaxEntriesWalked) {
        warn(p, "more than " + std::to_string(kMaxEntriesWalked) +
                    " directory entries looked at in all; the rest of this walk is left out");
        names->resize(kMaxEntriesWalked - std::min(walked_, kMaxEntriesWalked));
    }
    walked_ += names->size();
    return std::move(*names);
}

SBX_INLINE void Collector::add(const std::string& path, Guard guard, Placeholder ph, const std::string& reason,
         protected_names::Contents contents, Missing missing) {
    put(path, guard, ph, reason, missing);
    const Kind own = kind_of(path);
    if (own == Kind::unknown) return;
    auto [real, kind] = follow(path);
    if (real != path) {
        const std::string why = own == Kind::symlink ? "target of symlink " + path
                                                     : "where " + path + " leads through a symlink";
        const Guard g = guard != Guard::read_only && kind != Kind::directory ? Guard::read_only : guard;
        // A commondir placeholder names the directory it lies in, which is not the
        // git directory when a symlink leads elsewhere: an empty file there stops git.
        put(real, g, ph == Placeholder::commondir ? Placeholder::file : ph, reason + "; " + why, missing);
    }
    if (contents == protected_names::Contents::run && kind == Kind::directory) {
        for (const auto& name : list(real)) {
            const std::string inside = paths::join(real, name);
            if (kind_of(inside) != Kind::symlink) continue;
            auto target = real_path(inside);
            if (target && *target != inside)
                put(*target, Guard::read_only, Placeholder::file, reason + "; target of symlink " + inside);
        }
    }
}

SBX_INLINE void Collector::add_name(const std::string& dir, const protected_names::Name& n, const std::string& context,
              std::optional<Missing> missing) {
    add(paths::join(dir, n.name), Guard::read_only, n.placeholder,
        context.empty() ? std::string(n.reason) : std::string(n.reason) + " (" + context + ")", n.contents,
        missing.value_or(n.missing));
}

SBX_INLINE void Collector::warn(const std::string& path, std::string message) {
    for (const auto& w : warnings_)
        if (w.file == path && w.message == message) return;
    warnings_.push_back(Warning{path, "", std::move(message)});
}

SBX_INLINE ProtectedPaths Collector::finish() {
    std::sort(paths_.begin(), paths_.end(),
              [](const ProtectedPath& a, const ProtectedPath& b) { return a.path < b.path; });
    ProtectedPaths out;
    std::vector<std::size_t> covering;  // read_only entries of out.paths that cover what lies inside them
    for (auto& p : paths_) {
        // Sorted order puts a directory before anything inside it, so each
        // covering entry is seen before what it covers. One that covers an
        // entry read while the command runs (a hooks path inside a missing
        // `.husky`) is covered then too.
        bool covered = false;
        for (const std::size_t c : covering) {
            ProtectedPath& by = out.paths[c];
            if (p.path == by.path || !paths::at_or_under(p.path, by.path)) continue;
            covered = true;
            if (p.missing == Missing::covered) by.missing = Missing::covered;
        }
        if (covered) continue;
        if (p.guard == Guard::read_only) {
            const Kind k = kind_of(p.path);
            if (k == Kind::directory || k == Kind::missing) covering.push_back(out.paths.size());
        }
        out.paths.push_back(std::move(p));
    }
    out.warnings = std::move(warnings_);
    return out;
}

SBX_INLINE int Collector::strength(Guard g) {
    switch (g) {
        case Guard::read_only: return 2;
        case Guard::git_writable: return 1;
        case Guard::pin: return 0;
    }
    return 2;
}

SBX_INLINE void Collector::put(const std::string& path, Guard guard, Placeholder ph, const std::string& reason,
         Missing missing) {
    auto [it, fresh] = index_.emplace(path, paths_.size());
    if (fresh) {
        paths_.push_back(ProtectedPath{path, guard, ph, reason, missing});
        return;
    }
    ProtectedPath& e = paths_[it->second];
    if (missing == Missing::covered) e.missing = Missing::covered;
    if (strength(guard) > strength(e.guard)) {
        e.guard = guard;
        e.placeholder = ph;
        e.reason = reason;
    }
}

}  // namespace sbx::protect_detail
#endif
