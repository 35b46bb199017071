// sbx/protected_paths.hpp - the paths a sandboxed command must not write, for one root.
//
// protected_paths() decides, from a root, a home directory and what an FsView shows,
// every path inside which a command must not write because Claude Code, the Cogitator
// runtime, git or a shell later loads configuration or code from it: the agent
// directories (`.claude`, `.cogitator`) of the root and of every directory above it,
// the user's own agent files, shell start-up files, editor settings, and the files of
// the repository's git directories that git runs or follows (the main repository's too
// for a linked worktree, its linked worktrees and its submodules). The fixed names are
// the constexpr tables in sbx::protected_names below, one reason each.
//
// It decides nothing about where a command may write: the plan maker keeps the entries
// that lie inside writable places, binds the existing ones read-only (or, for a pin,
// over themselves) and covers the missing ones with read-only placeholders. It reads
// only through the FsView (lstat, readlink, list, read_text of `.git` files and
// `commondir`), so every answer is reproducible over a MemoryFs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sbx/expected.hpp"
#include "sbx/fs_view.hpp"
#include "sbx/paths.hpp"
#include "sbx/settings.hpp"  // sbx::Warning

namespace sbx {

// How the plan maker guards one protected path.
enum class Guard {
    read_only,  // bind read-only over it; when missing, cover it with a read-only placeholder
    pin,        // an existing directory bound over itself (writable), so it cannot be renamed,
                // removed or replaced; its protected children are listed separately
};

// What covers a read_only path while the command runs, when the path does not exist.
enum class Placeholder { file, directory };

constexpr std::string_view guard_name(Guard g) noexcept {
    switch (g) {
        case Guard::read_only: return "read-only";
        case Guard::pin: return "pin";
    }
    return "?";
}

constexpr std::string_view placeholder_name(Placeholder p) noexcept {
    switch (p) {
        case Placeholder::file: return "file";
        case Placeholder::directory: return "directory";
    }
    return "?";
}

struct ProtectedPath {
    std::string path;         // absolute, normalised; may not exist
    Guard guard = Guard::read_only;
    Placeholder placeholder = Placeholder::file;  // meaningful for read_only entries only
    bool remove_if_created = false;  // commondir, config.worktree: their mere presence changes git
    std::string reason;              // one line: why, plus context such as "target of symlink X"
};

struct ProtectedPaths {
    // Sorted by path, so a directory comes before anything inside it. Each path once;
    // when two rules name the same path the stronger guard wins (read_only over pin).
    // Nothing is listed strictly inside a read_only entry that is a directory or
    // missing: the read-only bind (or the empty placeholder) already covers it.
    std::vector<ProtectedPath> paths;
    // What could not be looked at (an unreadable directory, a symlink loop, a walk cut
    // short); `file` names the path, `key` is empty.
    std::vector<Warning> warnings;

    // The entry for exactly `path` (normalised), or nullptr.
    const ProtectedPath* find(std::string_view path) const {
        auto it = std::lower_bound(paths.begin(), paths.end(), path,
                                   [](const ProtectedPath& p, std::string_view v) { return p.path < v; });
        return it != paths.end() && it->path == path ? &*it : nullptr;
    }
};

// The fixed names, as data: where each applies is in the name of its table.
namespace protected_names {

struct Name {
    std::string_view name;   // relative to the directory the table applies to
    Placeholder placeholder;  // what covers it when missing: its natural kind
    bool remove_if_created;   // a missing one a command makes is removed afterwards
    bool links_inside;        // its direct entries are run: symlinks in it protect their targets
    std::string_view reason;
};

using P = Placeholder;

// In the root and in every directory above it. An existing one is pinned and its
// kAgentEntries are listed; a missing one is covered whole by an empty read-only
// directory. The root's own `.cogitator` is protected whole instead (kRootEntries).
inline constexpr Name kAgentDirs[] = {
    {".claude", P::directory, false, false, "Claude Code loads settings, hooks, skills, agents, commands and plugins from it"},
    {".cogitator", P::directory, false, false, "the Cogitator runtime loads settings, hooks, skills, agents, commands and plugins from it"},
};

// Inside an existing agent directory of kAgentDirs.
inline constexpr Name kAgentEntries[] = {
    {"settings.json", P::file, false, false, "settings: permissions, hooks, environment and sandbox rules"},
    {"settings.local.json", P::file, false, false, "local settings, as powerful as settings.json"},
    {"hooks", P::directory, false, true, "hook scripts run outside the sandbox"},
    {"skills", P::directory, false, false, "skills: instructions and scripts the agent loads"},
    {"agents", P::directory, false, false, "agent definitions with their own prompts and tools"},
    {"commands", P::directory, false, false, "slash commands: prompts the agent runs"},
    {"plugins", P::directory, false, false, "plugins: hooks, commands and MCP servers the agent loads"},
};

// In the root only.
inline constexpr Name kRootEntries[] = {
    {".cogitator", P::directory, false, false, "the workspace's Cogitator directory: settings, trash and snapshots"},
    {".mcp.json", P::file, false, false, "MCP servers the agent starts outside the sandbox"},
    {".gitmodules", P::file, false, false, "submodule URLs and update commands git follows"},
    {".vscode", P::directory, false, false, "editor settings and tasks that run commands"},
    {".idea", P::directory, false, false, "IDE settings and run configurations that run commands"},
    {"HEAD", P::file, false, false,
     "without it no command can turn the root into a bare repository whose config git would run later"},
};

// In the home directory only.
inline constexpr Name kHomeEntries[] = {
    {".claude", P::directory, false, false, "the user's Claude Code settings, hooks, skills, agents and credentials"},
    {".cogitator", P::directory, false, false, "the user's Cogitator settings and extensions"},
    {".claude.json", P::file, false, false, "Claude Code's user state: MCP servers and trusted projects"},
    {".config/fish", P::directory, false, false, "fish start-up files and functions"},
    {".config/git", P::directory, false, false, "git's own config and attributes: aliases, hooks path, filters"},
};

// In the root and in the home directory (a later command may run with either as HOME).
inline constexpr Name kRootAndHomeEntries[] = {
    {".bashrc", P::file, false, false, "bash start-up file, read by interactive shells"},
    {".bash_profile", P::file, false, false, "bash login start-up file"},
    {".bash_login", P::file, false, false, "bash login start-up file, read without .bash_profile"},
    {".bash_logout", P::file, false, false, "run when a bash login shell exits"},
    {".profile", P::file, false, false, "POSIX shell login start-up file"},
    {".zshrc", P::file, false, false, "zsh start-up file, read by interactive shells"},
    {".zshenv", P::file, false, false, "zsh start-up file, read by every zsh"},
    {".zprofile", P::file, false, false, "zsh login start-up file"},
    {".zlogin", P::file, false, false, "zsh login start-up file"},
    {".zlogout", P::file, false, false, "run when a zsh login shell exits"},
    {".kshrc", P::file, false, false, "ksh start-up file"},
    {".cshrc", P::file, false, false, "csh and tcsh start-up file"},
    {".tcshrc", P::file, false, false, "tcsh start-up file"},
    {".login", P::file, false, false, "csh and tcsh login start-up file"},
    {".logout", P::file, false, false, "run when a csh login shell exits"},
    {".gitconfig", P::file, false, false, "git configuration: aliases, hooks path, filters and fsmonitor run commands"},
};

// In a git directory: the root's, the main repository's, a submodule's. In a linked
// worktree's directory (`worktrees/NAME`) `hooks` and `config` only when present.
inline constexpr Name kGitDirEntries[] = {
    {"hooks", P::directory, false, true, "git hooks: scripts git runs on commit, checkout, merge and push"},
    {"config", P::file, false, false, "git configuration: hooks path, filters, fsmonitor and aliases run commands"},
    {"commondir", P::file, true, false, "points git at another git directory, whose config and hooks it then uses"},
    {"config.worktree", P::file, true, false, "per-worktree git configuration, as powerful as config"},
};

// A file whose mere presence changes git must be one that git reads, not a directory.
constexpr bool removable_entries_are_files(const Name* begin, const Name* end) {
    for (const Name* n = begin; n != end; ++n)
        if (n->remove_if_created && n->placeholder != P::file) return false;
    return true;
}
static_assert(removable_entries_are_files(std::begin(kGitDirEntries), std::end(kGitDirEntries)));
static_assert(removable_entries_are_files(std::begin(kAgentEntries), std::end(kAgentEntries)));

// How much of a directory tree one computation looks through: entries per listed
// directory, entries over all listings, and submodule nesting. Past any of them the
// rest is left out with a warning.
inline constexpr std::size_t kMaxEntriesPerDirectory = 1000;
inline constexpr std::size_t kMaxEntriesWalked = 10000;
inline constexpr int kMaxModuleDepth = 32;
// The largest `.git` file or `commondir` read.
inline constexpr std::size_t kMaxPointerFileBytes = 4096;

}  // namespace protected_names

namespace protect_detail {

enum class Kind { missing, directory, regular, symlink, other, unknown };

// Gathers entries and warnings for one protected_paths() call.
class Collector {
public:
    explicit Collector(const FsView& fs) : fs_(fs) {}

    // What is at `p` itself; unknown (with a warning) when lstat fails.
    Kind kind_of(const std::string& p) {
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

    // Where `p` really leads (sbx::resolve); nullopt with a warning on a symlink loop
    // or an unreadable component.
    std::optional<std::string> real_path(const std::string& p) {
        auto r = resolve(fs_, p);
        if (!r) {
            warn(p, "cannot follow its symbolic links: " + describe(r.error(), p));
            return std::nullopt;
        }
        return std::move(*r);
    }

    // What `p` leads to: its real path and the kind of thing there (`p`'s own kind
    // when it is no symlink and has none above it).
    std::pair<std::string, Kind> follow(const std::string& p) {
        auto r = real_path(p);
        if (!r) return {p, Kind::unknown};
        return {*r, kind_of(*r)};
    }

    // Lists `p` (a directory), sorted, cut to the limits with a warning.
    std::vector<std::string> list(const std::string& p) {
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

    // Adds `path` with a guard and, when a symlink lies at or above it, the place it
    // leads to as an entry of its own. A pin whose target is no directory becomes
    // read_only there. A directory whose entries are run (`links_inside`) also
    // protects the targets of the symlinks directly in it.
    void add(const std::string& path, Guard guard, Placeholder ph, bool remove_if_created, const std::string& reason,
             bool links_inside = false) {
        put(path, guard, ph, remove_if_created, reason);
        const Kind own = kind_of(path);
        if (own == Kind::unknown) return;
        auto [real, kind] = follow(path);
        if (real != path) {
            const std::string why = own == Kind::symlink ? "target of symlink " + path
                                                         : "where " + path + " leads through a symlink";
            const Guard g = guard == Guard::pin && kind != Kind::directory ? Guard::read_only : guard;
            put(real, g, ph, remove_if_created, reason + "; " + why);
        }
        if (links_inside && kind == Kind::directory) {
            for (const auto& name : list(real)) {
                const std::string inside = paths::join(real, name);
                if (kind_of(inside) != Kind::symlink) continue;
                auto target = real_path(inside);
                if (target && *target != inside)
                    put(*target, Guard::read_only, Placeholder::file, false,
                        reason + "; target of symlink " + inside);
            }
        }
    }

    void add_name(const std::string& dir, const protected_names::Name& n, const std::string& context = {}) {
        add(paths::join(dir, n.name), Guard::read_only, n.placeholder, n.remove_if_created,
            context.empty() ? std::string(n.reason) : std::string(n.reason) + " (" + context + ")", n.links_inside);
    }

    void warn(const std::string& path, std::string message) {
        for (const auto& w : warnings_)
            if (w.file == path && w.message == message) return;
        warnings_.push_back(Warning{path, "", std::move(message)});
    }

    // The entries, sorted, with those covered by a read_only directory left out.
    ProtectedPaths finish() {
        std::sort(paths_.begin(), paths_.end(),
                  [](const ProtectedPath& a, const ProtectedPath& b) { return a.path < b.path; });
        ProtectedPaths out;
        std::vector<std::string> covering;  // read_only entries that cover what lies inside them
        for (auto& p : paths_) {
            // Sorted order puts a directory before anything inside it, so each
            // covering entry is seen before what it covers.
            bool covered = false;
            for (const auto& c : covering)
                if (p.path != c && paths::at_or_under(p.path, c)) covered = true;
            if (covered) continue;
            if (p.guard == Guard::read_only) {
                const Kind k = kind_of(p.path);
                if (k == Kind::directory || k == Kind::missing) covering.push_back(p.path);
            }
            out.paths.push_back(std::move(p));
        }
        out.warnings = std::move(warnings_);
        return out;
    }

private:
    const FsView& fs_;
    std::vector<ProtectedPath> paths_;
    std::unordered_map<std::string, std::size_t> index_;
    std::vector<Warning> warnings_;
    std::size_t walked_ = 0;

    static std::string describe(const Error& e, const std::string& about) {
        return e.file.empty() || e.file == about ? e.message : to_string(e);
    }

    // One entry per path: read_only wins over pin (with its placeholder and reason),
    // and remove_if_created holds when any rule asks for it.
    void put(const std::string& path, Guard guard, Placeholder ph, bool remove_if_created, const std::string& reason) {
        auto [it, fresh] = index_.emplace(path, paths_.size());
        if (fresh) {
            paths_.push_back(ProtectedPath{path, guard, ph, remove_if_created, reason});
            return;
        }
        ProtectedPath& e = paths_[it->second];
        if (e.guard == Guard::pin && guard == Guard::read_only) {
            e.guard = Guard::read_only;
            e.placeholder = ph;
            e.reason = reason;
        }
        e.remove_if_created = e.remove_if_created || remove_if_created;
    }
};

inline std::string_view base_name(std::string_view p) {
    const auto pos = p.rfind('/');
    return pos == std::string_view::npos ? p : p.substr(pos + 1);
}

// The path a `.git` file (prefix "gitdir: ") or a `commondir` (prefix "") names,
// as git reads it: one line, trailing newlines and carriage returns dropped,
// relative to `base` unless absolute; folded through the FsView to a real path.
// nullopt when the file is not there. An error names the file when it cannot be read
// or says anything else.
inline expected<std::optional<std::string>> read_pointer(Collector& c, const FsView& fs, const std::string& file,
                                                         std::string_view prefix, const std::string& base) {
    auto text = fs.read_text(file, protected_names::kMaxPointerFileBytes);
    const std::string what = prefix.empty() ? "a commondir file" : "a .git file";
    if (!text)
        return fail(Error(Errc::invalid_settings, "cannot read " + what + ", so the git directory it names cannot be protected")
                        .in_file(file)
                        .caused_by(std::move(text.error())));
    if (!*text) return std::optional<std::string>{};
    std::string_view s = **text;
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
    if (s.substr(0, prefix.size()) != prefix)
        return fail(Error(Errc::invalid_settings, what + " must hold one line, 'gitdir: PATH'").in_file(file));
    s.remove_prefix(prefix.size());
    if (s.empty()) return fail(Error(Errc::invalid_settings, what + " names no git directory").in_file(file));
    for (unsigned char ch : s)
        if (ch < 0x20 || ch == 0x7f)
            return fail(Error(Errc::invalid_settings, what + " must hold one line naming a git directory, without control characters")
                            .in_file(file));
    // Unfolded: resolve() takes `..` after a symlink from the symlink's target, as the kernel does.
    const std::string joined = paths::is_absolute(s) ? std::string(s) : base + "/" + std::string(s);
    auto real = c.real_path(joined);
    return std::optional<std::string>(real ? *real : paths::normalize(joined));
}

// Walks the git directories a repository touches, protecting their entries.
class GitWalk {
public:
    GitWalk(Collector& c, const FsView& fs) : c_(c), fs_(fs) {}

    // Protects the `.git` entry in `dir` and the git directories behind it. The root's
    // (`is_root`) is guarded even when missing. Returns whether `dir` holds a
    // repository (a `.git` entry, or `dir` itself a bare git directory), which stops
    // the search upwards.
    expected<bool> dot_git(const std::string& dir, bool is_root) {
        const std::string dotgit = paths::join(dir, ".git");
        const std::string whose = is_root ? "the root's" : "the repository above the root: its";
        const Kind own = c_.kind_of(dotgit);
        auto [real, kind] = own == Kind::unknown ? std::pair<std::string, Kind>{dotgit, Kind::unknown} : c_.follow(dotgit);
        switch (kind) {
            case Kind::directory:
                c_.add(dotgit, Guard::pin, Placeholder::directory, false,
                       whose + " .git directory: no command may remove, rename or replace it (with a gitdir: file "
                               "of its own), while git still writes the index and objects inside");
                if (auto ok = git_dir(real, is_root ? "" : "repository above the root"); !ok) return fail(ok.error());
                return true;
            case Kind::regular: {
                c_.add(dotgit, Guard::read_only, Placeholder::file, false,
                       whose + " .git file: it names the git directory git uses, which no command may change");
                auto x = read_pointer(c_, fs_, real, "gitdir: ", dir);
                if (!x) return fail(x.error());
                if (!*x) return true;  // gone since lstat; the .git entry is guarded anyway
                if (auto ok = git_dir(**x, "named by " + dotgit); !ok) return fail(ok.error());
                return true;
            }
            case Kind::other:
                c_.warn(dotgit, "neither a directory nor a file; git cannot use it");
                c_.add(dotgit, Guard::read_only, Placeholder::directory, false, whose + " .git entry, of an odd kind");
                return true;
            case Kind::missing:
            case Kind::unknown:
            case Kind::symlink:  // only when the walk could not finish
                break;
        }
        if (is_root)
            c_.add(dotgit, Guard::read_only, Placeholder::directory, false,
                   "no repository here yet: an empty read-only .git is skipped by git's discovery and keeps git "
                   "init from writing hooks or config");
        if (kind == Kind::missing && is_bare_git_dir(dir)) {
            if (auto ok = git_dir(dir, is_root ? "the root is a bare repository" : "bare repository above the root"); !ok)
                return fail(ok.error());
            return true;
        }
        return false;
    }

private:
    Collector& c_;
    const FsView& fs_;

    static std::string join_context(const std::string& a, const std::string& b) {
        return a.empty() ? b : b.empty() ? a : a + ", " + b;
    }

    bool exists(const std::string& p) {
        const Kind k = c_.kind_of(p);
        return k != Kind::missing;  // unknown counts: better protect too much
    }

    // A directory git's discovery takes for a git directory of its own (HEAD, objects, refs).
    bool is_bare_git_dir(const std::string& dir) {
        return exists(paths::join(dir, "HEAD")) && c_.kind_of(paths::join(dir, "objects")) == Kind::directory &&
               c_.kind_of(paths::join(dir, "refs")) == Kind::directory;
    }

    // A git directory as a submodule walk recognises one: it holds HEAD or config.
    bool looks_like_git_dir(const std::string& dir) {
        return exists(paths::join(dir, "HEAD")) || exists(paths::join(dir, "config"));
    }

    void git_files(const std::string& x, bool worktree_entry, const std::string& context) {
        for (const auto& n : protected_names::kGitDirEntries) {
            if (worktree_entry && !n.remove_if_created && !exists(paths::join(x, n.name))) continue;
            c_.add_name(x, n, context);
        }
    }

    // The git directory `x` (real path): its own entries, then the main git directory
    // it belongs to with that one's linked worktrees and submodules.
    expected<void> git_dir(const std::string& x, const std::string& context) {
        const Kind k = c_.kind_of(x);
        if (k == Kind::missing) {
            c_.warn(x, "the git directory does not exist");
            c_.add(x, Guard::read_only, Placeholder::directory, false,
                   join_context("a git directory that does not exist yet: none may be made here", context));
            return {};
        }
        if (k != Kind::directory) {
            c_.warn(x, "named as a git directory, but it is not a directory");
            return {};
        }
        git_files(x, false, context);
        auto main = read_pointer(c_, fs_, paths::join(x, "commondir"), "", x);
        if (!main) return fail(main.error());
        std::string m = x;
        if (*main) {
            m = **main;
        } else if (base_name(paths::parent(x)) == "worktrees") {
            m = paths::parent(paths::parent(x));
        }
        if (m != x) git_files(m, false, join_context("main repository", context));
        repository(m, context, 0);
        return {};
    }

    // The linked worktrees and submodules of the main git directory `m`.
    void repository(const std::string& m, const std::string& context, int depth) {
        if (auto [wt, kind] = c_.follow(paths::join(m, "worktrees")); kind == Kind::directory) {
            for (const auto& name : c_.list(wt)) {
                auto [w, w_kind] = c_.follow(paths::join(wt, name));
                if (w_kind == Kind::directory) git_files(w, true, join_context("linked worktree " + name, context));
            }
        }
        modules(paths::join(m, "modules"), context, depth);
    }

    // Every git directory under `dir` (a `modules` directory). A submodule's name may
    // hold slashes, so a directory that is no git directory is looked into.
    void modules(const std::string& dir, const std::string& context, int depth) {
        if (c_.kind_of(dir) != Kind::directory) return;
        if (depth >= protected_names::kMaxModuleDepth) {
            c_.warn(dir, "submodules nested more than " + std::to_string(protected_names::kMaxModuleDepth) +
                             " deep; the deeper ones are not protected");
            return;
        }
        for (const auto& name : c_.list(dir)) {
            const std::string d = paths::join(dir, name);
            if (c_.kind_of(d) != Kind::directory) continue;
            if (looks_like_git_dir(d)) {
                const std::string ctx = join_context("submodule git directory", context);
                git_files(d, false, ctx);
                repository(d, ctx, depth + 1);
            } else {
                modules(d, context, depth + 1);
            }
        }
    }
};

}  // namespace protect_detail

// Every path under which a sandboxed command run in `root` must not write.
// `root` and `home`: absolute, normalised, without symlinks; `root` an existing
// directory, `home` perhaps missing. Errors: a root or home that breaks that contract
// (INVALID_ARGUMENT), a `.git` file or `commondir` that cannot be read or does not
// name a git directory (INVALID_SETTINGS, naming the file). Anything else that cannot
// be looked at is a warning naming the path; the entries still hold what could be
// decided, and a path that could not be looked at is listed read_only.
inline expected<ProtectedPaths> protected_paths(std::string_view root, std::string_view home, const FsView& fs) {
    using namespace protected_names;
    using protect_detail::Kind;
    for (auto [what, p] : {std::pair{"root", root}, std::pair{"home directory", home}}) {
        if (!paths::is_absolute(p) || paths::normalize(p) != p)
            return fail(Errc::invalid_argument,
                        std::string("the ") + what + " must be an absolute, normalised path, not '" + std::string(p) + "'");
        auto real = resolve(fs, p);
        if (!real)
            return fail(Error(Errc::invalid_argument, std::string("cannot look at the ") + what)
                            .in_file(std::string(p))
                            .caused_by(std::move(real.error())));
        if (*real != p)
            return fail(Error(Errc::invalid_argument,
                              std::string("the ") + what + " must be given without symlinks; it leads to " + *real)
                            .in_file(std::string(p)));
    }
    const std::string r(root), h(home);
    CachedFs cached(fs);
    protect_detail::Collector c(cached);
    if (c.kind_of(r) != Kind::directory)
        return fail(Error(Errc::invalid_argument, "the root is not a directory").in_file(r));

    for (const auto& n : kRootEntries) c.add_name(r, n);
    for (const auto& n : kRootAndHomeEntries) c.add_name(r, n);
    for (const auto& n : kHomeEntries) c.add_name(h, n);
    for (const auto& n : kRootAndHomeEntries) c.add_name(h, n);

    // The agent directories of the root and of every directory above it.
    for (std::string dir = r;; dir = paths::parent(dir)) {
        for (const auto& d : kAgentDirs) {
            if (dir == r && d.name == ".cogitator") continue;  // protected whole, kRootEntries
            const std::string p = paths::join(dir, d.name);
            auto [real, kind] = c.follow(p);
            if (kind == Kind::directory) {
                c.add(p, Guard::pin, Placeholder::directory, false,
                      std::string(d.reason) + "; pinned so it cannot be renamed or replaced");
                for (const auto& e : kAgentEntries) c.add_name(real, e);
            } else {
                c.add(p, Guard::read_only, Placeholder::directory, false,
                      std::string(d.reason) + "; an empty read-only directory keeps anything from being made in it");
            }
        }
        if (dir == "/") break;
    }

    // Git: the root's repository, or the one the root lies in.
    protect_detail::GitWalk git(c, cached);
    auto found = git.dot_git(r, true);
    if (!found) return fail(found.error());
    for (std::string dir = r; !*found && dir != "/";) {
        dir = paths::parent(dir);
        found = git.dot_git(dir, false);
        if (!found) return fail(found.error());
    }
    return c.finish();
}

}  // namespace sbx
