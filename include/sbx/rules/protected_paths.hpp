// sbx/rules/protected_paths.hpp - the paths a sandboxed command must not write, for one root.
//
// protected_paths() decides, from a root, a home directory and what an FsView shows,
// every path inside which a command must not write because Claude Code, the Cogitator
// runtime, git, a shell, an editor or another tool later loads configuration or code
// from it unasked: the agent directories (`.claude`, `.cogitator`) of the root and of
// every directory above it, the user's own agent files, shell start-up files, the
// root's editor, dev container and other agents' folders, the files direnv, husky and
// pre-commit run, and the files of the repository's git directories that git runs or
// follows (the main repository's too for a linked worktree, its linked worktrees and
// its submodules, and the nested repositories its index records as gitlinks). The fixed names are the constexpr tables in sbx::protected_names
// below, one reason each. Beyond the fixed names, it reads those git config files (and
// the user's own) for the places git is told to run hooks from (`core.hooksPath`) or to
// read more configuration from (`include.path`, `includeIf.*.path`), and protects
// those too.
//
// It decides nothing about where a command may write: the plan maker keeps the entries
// that lie inside writable places, binds the existing ones read-only (or, for a pin,
// over themselves) and covers the missing ones with read-only placeholders. It reads
// only through the FsView (lstat, readlink, list, read_text of `.git` files,
// `commondir`, linked worktrees' `gitdir`, git config files and the index), so every
// answer is reproducible over a MemoryFs.
//
// A nested repository is protected when the repository's index holds a gitlink
// (mode 0160000) at its path and its working directory holds a `.git` (a directory,
// or a file naming a git directory): git outside runs git in it (`git status` asks
// each gitlinked repository whether it is dirty), so its git directory gets what a
// submodule's gets. A nested repository without a gitlink, or one made while the
// command runs, is not known here; the launcher audits those after the command
// (git_audit.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/rules/git_config.hpp"
#include "sbx/rules/git_index.hpp"
#include "sbx/settings/settings.hpp"  // sbx::Warning

namespace sbx {

// How the plan maker guards one protected path.
enum class Guard {
    read_only,  // bind read-only over it; when missing, cover it with a read-only placeholder
    pin,        // an existing directory bound over itself (writable), so it cannot be renamed,
                // removed or replaced; its protected children are listed separately
};

// What covers a read_only path while the command runs, when the path does not exist.
enum class Placeholder {
    file,       // an empty file (for a *.json name, an empty object: placeholder_content)
    directory,  // an empty directory
    commondir,  // a git directory's `commondir` holding that directory's own path: git
                // and libgit2 then see the repository as if it had none, where an empty
                // file would stop git and a missing one could be planted
};

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
        case Placeholder::commondir: return "commondir";
    }
    return "?";
}

// What a placeholder of kind `p` at `path` holds: nothing; for a file named
// *.json an empty JSON object, so that a program outside that loads it while the
// command runs (Claude Code reads .claude/settings.local.json) reads a valid,
// empty document; for a commondir its directory's path and a line end, as git
// writes one.
inline std::string placeholder_content(Placeholder p, std::string_view path) {
    if (p == Placeholder::commondir) return paths::parent(std::string(path)) + "\n";
    const std::string_view name = path.substr(path.rfind('/') + 1);
    if (p == Placeholder::file && name.size() > 5 && name.ends_with(".json")) return "{}\n";
    return {};
}

struct ProtectedPath {
    std::string path;         // absolute, normalised; may not exist
    Guard guard = Guard::read_only;
    Placeholder placeholder = Placeholder::file;  // meaningful for read_only entries only
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
    bool missing_in_worktree; // in kGitDirEntries: covered in a linked worktree's directory even when missing
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
    {".devcontainer", P::directory, false, false,
     "dev container commands an editor runs when it opens the folder, initializeCommand on the host"},
    {".devcontainer.json", P::file, false, false,
     "the same dev container definition, read from the root when there is no .devcontainer folder"},
    {".cursor", P::directory, false, false, "Cursor's MCP servers, rules and hooks"},
    {".gemini", P::directory, false, false, "Gemini CLI's settings, MCP servers and custom commands"},
    {".codex", P::directory, false, false, "Codex's project config and MCP servers"},
    {".zed", P::directory, false, false, "Zed's project settings and tasks: MCP servers, language servers and commands"},
    {".envrc", P::file, false, false, "direnv runs it when a shell enters the directory"},
    {".husky", P::directory, false, true, "git hooks husky installs, run on the next commit"},
    {".pre-commit-config.yaml", P::file, false, false, "pre-commit runs the hooks it lists on the next commit"},
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
    {"commondir", P::commondir, true, false, "points git at another git directory, whose config and hooks it then uses"},
    {"config.worktree", P::file, true, false, "per-worktree git configuration, as powerful as config"},
};

// A commondir placeholder names the git directory it lies in: only a git
// directory's own `commondir` may get one.
template <class Table>
constexpr bool commondir_only_for_commondir(const Table& table) {
    for (const auto& n : table)
        if ((n.placeholder == P::commondir) != (n.name == "commondir")) return false;
    return true;
}
static_assert(commondir_only_for_commondir(kGitDirEntries) && commondir_only_for_commondir(kAgentDirs) &&
              commondir_only_for_commondir(kAgentEntries) && commondir_only_for_commondir(kRootEntries) &&
              commondir_only_for_commondir(kHomeEntries) && commondir_only_for_commondir(kRootAndHomeEntries));

// How much of a directory tree one computation looks through: entries per listed
// directory, entries over all listings, and submodule nesting. Past any of them the
// rest is left out with a warning.
inline constexpr std::size_t kMaxEntriesPerDirectory = 1000;
inline constexpr std::size_t kMaxEntriesWalked = 10000;
inline constexpr int kMaxModuleDepth = 32;
// The largest `.git` file, `commondir` or `gitdir` read.
inline constexpr std::size_t kMaxPointerFileBytes = 4096;
// The largest git config file read; how deep includes are followed (git's own limit,
// past which it refuses to run at all); how many includes one computation follows.
inline constexpr std::size_t kMaxConfigFileBytes = std::size_t{1} << 20;
inline constexpr int kMaxIncludeDepth = 10;
inline constexpr std::size_t kMaxIncludes = 1000;

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

    // Where the kernel takes `p` (absolute, but perhaps with `.`, `..` and symlinks on
    // the way, as a value in a config file is joined to its base): the directories on
    // the way resolved, the last name kept as written, so that a symlink there is
    // protected itself and not only its target (add() takes care of that one).
    std::string place(std::string_view p) {
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
    void add(const std::string& path, Guard guard, Placeholder ph, const std::string& reason, bool links_inside = false) {
        put(path, guard, ph, reason);
        const Kind own = kind_of(path);
        if (own == Kind::unknown) return;
        auto [real, kind] = follow(path);
        if (real != path) {
            const std::string why = own == Kind::symlink ? "target of symlink " + path
                                                         : "where " + path + " leads through a symlink";
            const Guard g = guard == Guard::pin && kind != Kind::directory ? Guard::read_only : guard;
            // A commondir placeholder names the directory it lies in, which is not the
            // git directory when a symlink leads elsewhere: an empty file there stops git.
            put(real, g, ph == Placeholder::commondir ? Placeholder::file : ph, reason + "; " + why);
        }
        if (links_inside && kind == Kind::directory) {
            for (const auto& name : list(real)) {
                const std::string inside = paths::join(real, name);
                if (kind_of(inside) != Kind::symlink) continue;
                auto target = real_path(inside);
                if (target && *target != inside)
                    put(*target, Guard::read_only, Placeholder::file, reason + "; target of symlink " + inside);
            }
        }
    }

    void add_name(const std::string& dir, const protected_names::Name& n, const std::string& context = {}) {
        add(paths::join(dir, n.name), Guard::read_only, n.placeholder,
            context.empty() ? std::string(n.reason) : std::string(n.reason) + " (" + context + ")", n.links_inside);
    }

    // An error's text for a warning about `about`: its message alone when it names that path.
    static std::string describe(const Error& e, const std::string& about) {
        return e.file.empty() || e.file == about ? e.message : to_string(e);
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

    // One entry per path: read_only wins over pin (with its placeholder and reason).
    void put(const std::string& path, Guard guard, Placeholder ph, const std::string& reason) {
        auto [it, fresh] = index_.emplace(path, paths_.size());
        if (fresh) {
            paths_.push_back(ProtectedPath{path, guard, ph, reason});
            return;
        }
        ProtectedPath& e = paths_[it->second];
        if (e.guard == Guard::pin && guard == Guard::read_only) {
            e.guard = Guard::read_only;
            e.placeholder = ph;
            e.reason = reason;
        }
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

// Follows git config files: protects the directories their core.hooksPath names and
// the files their includes name, and reads those files in turn.
class GitConfigs {
public:
    GitConfigs(Collector& c, const FsView& fs, std::string home) : c_(c), fs_(fs), home_(std::move(home)) {}

    // Protects where the config file `file` (absolute, normalised, as git names it; it
    // may be missing) and the files it includes make git run hooks from and read more
    // configuration from. A relative core.hooksPath is taken in each of `trees`: the
    // working trees git uses this file in (for a bare repository, its git directory).
    // A file that cannot be read or understood is a warning naming it (and the line).
    void read(const std::string& file, const std::vector<std::string>& trees) { read(file, trees, 0); }

    // Where core.worktree in the config file `file` says the working tree is, relative
    // values taken from `git_dir`; empty when it does not say.
    std::vector<std::string> worktrees(const std::string& file, const std::string& git_dir) {
        std::vector<std::string> out;
        const GitConfigFacts* f = facts(file);
        if (f == nullptr) return out;
        for (const auto& v : f->worktrees) {
            if (v.value.empty() || has_control(v.value)) continue;
            out.push_back(c_.place(paths::is_absolute(v.value) ? v.value : git_dir + "/" + v.value));
        }
        return out;
    }

private:
    Collector& c_;
    const FsView& fs_;
    std::string home_;
    std::unordered_map<std::string, std::optional<GitConfigFacts>> parsed_;  // nullopt: missing or not read
    std::unordered_set<std::string> done_;  // file and trees already followed
    std::size_t includes_ = 0;              // includes followed so far

    static bool has_control(std::string_view s) {
        return std::any_of(s.begin(), s.end(), [](char ch) {
            const auto u = static_cast<unsigned char>(ch);
            return u < 0x20 || u == 0x7f;
        });
    }

    void read(const std::string& file, const std::vector<std::string>& trees, int depth) {
        std::string key = file;
        for (const auto& t : trees) key += '\0' + t;
        if (!done_.insert(std::move(key)).second) return;  // followed already, or an include loop
        const GitConfigFacts* f = facts(file);
        if (f == nullptr) return;
        for (const auto& v : f->hooks_paths) {
            auto p = expand(v, file, "core.hooksPath");
            if (!p) continue;
            std::vector<std::string> at;
            if (paths::is_absolute(*p)) {
                at.push_back(*p);
            } else if (trees.empty()) {
                c_.warn(file, "line " + std::to_string(v.line) + ": core.hooksPath '" + *p +
                                  "' is relative to a working tree, and which one is not known here; it is not protected");
            } else {
                for (const auto& t : trees) at.push_back(t + "/" + *p);
            }
            for (const auto& a : at)
                c_.add(c_.place(a), Guard::read_only, Placeholder::directory,
                       "git runs hooks from here (core.hooksPath in " + file + ")", true);
        }
        for (const auto& v : f->includes) {
            if (includes_ == protected_names::kMaxIncludes) {
                c_.warn(file, "more than " + std::to_string(protected_names::kMaxIncludes) +
                                  " includes followed; the rest, from here on, are not protected");
                break;
            }
            ++includes_;
            auto p = expand(v, file, "the include path");
            if (!p) continue;
            const std::string included = c_.place(paths::is_absolute(*p) ? *p : paths::parent(file) + "/" + *p);
            c_.add(included, Guard::read_only, Placeholder::file,
                   "git reads configuration from here (include in " + file + ")");
            if (depth >= protected_names::kMaxIncludeDepth) {
                c_.warn(included, "included more than " + std::to_string(protected_names::kMaxIncludeDepth) +
                                      " levels deep, past which git refuses to run; not read");
                continue;
            }
            read(included, trees, depth + 1);
        }
    }

    // The file read and parsed once; nullptr when it is missing or cannot be read.
    const GitConfigFacts* facts(const std::string& file) {
        if (auto it = parsed_.find(file); it != parsed_.end()) return it->second ? &*it->second : nullptr;
        std::optional<GitConfigFacts> f;
        if (auto text = fs_.read_text(file, protected_names::kMaxConfigFileBytes); !text) {
            c_.warn(file, "cannot read this git config file, so the hooks path and includes it may set are not "
                          "protected: " + Collector::describe(text.error(), file));
        } else if (*text) {
            f = GitConfigParser(**text).parse();
            for (const auto& problem : f->problems) c_.warn(file, problem + " (git refuses a config file like this)");
        }
        auto& slot = parsed_.emplace(file, std::move(f)).first->second;  // elements stay put as the map grows
        return slot ? &*slot : nullptr;
    }

    // A path from a config value as git reads one: `~` and `~/` under the home
    // directory, anything else as written (absolute, or relative to the caller's base).
    // nullopt for an empty value, or with a warning for one that cannot be followed.
    std::optional<std::string> expand(const GitConfigValue& v, const std::string& file, std::string_view what) {
        const std::string& s = v.value;
        const std::string where = "line " + std::to_string(v.line) + ": " + std::string(what);
        if (s.empty()) return std::nullopt;
        if (has_control(s)) {
            c_.warn(file, where + " holds a control character; it is not followed");
            return std::nullopt;
        }
        if (s == "~") return home_;
        if (s.substr(0, 2) == "~/") return home_ + s.substr(1);
        if (s.front() == '~') {
            c_.warn(file, where + " '" + s + "': only ~/ (the home directory) is understood, not ~user; it is not followed");
            return std::nullopt;
        }
        if (s.substr(0, 10) == "%(prefix)/") {
            c_.warn(file, where + " '" + s + "' lies under git's installation prefix, which is not known here; it is not followed");
            return std::nullopt;
        }
        return s;
    }
};

// Walks the git directories a repository touches, protecting their entries and what
// their config files name.
class GitWalk {
public:
    GitWalk(Collector& c, const FsView& fs, GitConfigs& configs) : c_(c), fs_(fs), configs_(configs) {}

    // Every working tree met (for a bare repository, its git directory): where git
    // takes a relative core.hooksPath from the user's own config.
    const std::vector<std::string>& trees() const { return trees_; }

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
                c_.add(dotgit, Guard::pin, Placeholder::directory,
                       whose + " .git directory: no command may remove, rename or replace it (with a gitdir: file "
                               "of its own), while git still writes the index and objects inside");
                if (auto ok = git_dir(real, is_root ? "" : "repository above the root", dir); !ok) return fail(ok.error());
                found_ = Found{dir, real};
                return true;
            case Kind::regular: {
                c_.add(dotgit, Guard::read_only, Placeholder::file,
                       whose + " .git file: it names the git directory git uses, which no command may change");
                auto x = read_pointer(c_, fs_, real, "gitdir: ", dir);
                if (!x) return fail(x.error());
                if (!*x) return true;  // gone since lstat; the .git entry is guarded anyway
                if (auto ok = git_dir(**x, "named by " + dotgit, dir); !ok) return fail(ok.error());
                found_ = Found{dir, **x};
                return true;
            }
            case Kind::other:
                c_.warn(dotgit, "neither a directory nor a file; git cannot use it");
                c_.add(dotgit, Guard::read_only, Placeholder::directory, whose + " .git entry, of an odd kind");
                return true;
            case Kind::missing:
            case Kind::unknown:
            case Kind::symlink:  // only when the walk could not finish
                break;
        }
        if (is_root)
            c_.add(dotgit, Guard::read_only, Placeholder::directory,
                   "no repository here yet: an empty read-only .git is skipped by git's discovery and keeps git "
                   "init from writing hooks or config");
        if (kind == Kind::missing && is_bare_git_dir(dir)) {
            if (auto ok = git_dir(dir, is_root ? "the root is a bare repository" : "bare repository above the root", dir);
                !ok)
                return fail(ok.error());
            return true;
        }
        return false;
    }

    // The nested repositories the index of the repository dot_git() found records
    // as gitlinks, and those their own indexes record, protected as submodules are.
    void nested_repositories() {
        if (found_) gitlinked(found_->tree, found_->git_dir, 0);
    }

private:
    // A working tree and the git directory holding its index.
    struct Found {
        std::string tree;
        std::string git_dir;
    };

    Collector& c_;
    const FsView& fs_;
    GitConfigs& configs_;
    std::vector<std::string> trees_;
    std::optional<Found> found_;
    std::unordered_set<std::string> nested_done_;  // working trees of nested repositories looked at

    // Whether the repository of the git directory `g` names objects with SHA-256
    // (extensions.objectFormat in the config of its main git directory).
    bool sha256(const std::string& g) {
        std::string m = g;
        auto common = fs_.read_text(paths::join(g, "commondir"), protected_names::kMaxPointerFileBytes);
        if (common && *common) {
            std::string_view s = **common;
            while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
            if (!s.empty()) m = paths::normalize(paths::is_absolute(s) ? std::string(s) : g + "/" + std::string(s));
        }
        auto text = fs_.read_text(paths::join(m, "config"), protected_names::kMaxConfigFileBytes);
        if (!text || !*text) return false;
        const GitConfigFacts f = GitConfigParser(**text).parse();
        for (const auto& e : f.entries)
            if (e.section == "extensions" && !e.subsection && e.name == "objectformat" && e.value &&
                (*e.value == "sha256" || *e.value == "SHA256"))
                return true;
        return false;
    }

    // The gitlinks in the index of the git directory `g`, whose working tree is `tree`.
    void gitlinked(const std::string& tree, const std::string& g, int depth) {
        const std::string file = paths::join(g, "index");
        auto bytes = fs_.read_text(file, git_index::kMaxIndexBytes);
        if (!bytes) {
            c_.warn(file, "cannot read the index, so the nested repositories it records are not protected: " +
                              Collector::describe(bytes.error(), file));
            return;
        }
        if (!*bytes) return;
        const GitIndexRead read = gitlinks(**bytes, sha256(g) ? 32 : 20);
        if (read.problem)
            c_.warn(file, "the index cannot be read past " + *read.problem +
                              "; the nested repositories recorded after it are not protected");
        for (const auto& link : read.gitlinks) {
            const std::string dir = paths::join(tree, link);
            if (!nested_done_.insert(dir).second) continue;  // a conflict lists a path up to three times
            if (depth >= protected_names::kMaxModuleDepth) {
                c_.warn(dir, "nested repositories nested more than " + std::to_string(protected_names::kMaxModuleDepth) +
                                 " deep; the deeper ones are not protected");
                return;
            }
            // git does not look beyond a symbolic link on the way to an index path.
            if (auto real = c_.real_path(dir); !real || *real != dir) continue;
            nested(dir, "nested repository " + link + ", a gitlink in " + file, depth);
        }
    }

    // The nested repository in `dir` (no symlink on the way): its `.git` entry and the
    // git directory behind it. What cannot be read is a warning: git cannot use it either.
    void nested(const std::string& dir, const std::string& context, int depth) {
        const std::string dotgit = paths::join(dir, ".git");
        const Kind own = c_.kind_of(dotgit);
        if (own == Kind::missing || own == Kind::unknown) return;  // no repository there for git to run in
        auto [real, kind] = c_.follow(dotgit);
        std::string g;
        if (kind == Kind::directory) {
            c_.add(dotgit, Guard::pin, Placeholder::directory,
                   "a nested repository's .git directory (" + context + "): no command may replace it");
            g = real;
        } else if (kind == Kind::regular) {
            c_.add(dotgit, Guard::read_only, Placeholder::file,
                   "a nested repository's .git file (" + context + "): it names the git directory git uses");
            auto x = read_pointer(c_, fs_, real, "gitdir: ", dir);
            if (!x) {
                c_.warn(x.error().file.empty() ? dotgit : x.error().file, x.error().message);
                return;
            }
            if (!*x) return;
            g = **x;
        } else {
            if (kind != Kind::unknown) c_.warn(dotgit, "neither a directory nor a file; git cannot use it");
            return;
        }
        if (auto ok = git_dir(g, context, dir); !ok) {
            c_.warn(ok.error().file.empty() ? g : ok.error().file, ok.error().message);
            return;
        }
        gitlinked(dir, g, depth + 1);
    }

    static void add_unique(std::vector<std::string>& to, const std::vector<std::string>& from) {
        for (const auto& t : from)
            if (std::find(to.begin(), to.end(), t) == to.end()) to.push_back(t);
    }

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
            if (worktree_entry && !n.missing_in_worktree && !exists(paths::join(x, n.name))) continue;
            c_.add_name(x, n, context);
        }
    }

    // The config files of the git directory `x`, used in the working trees `trees`.
    void read_configs(const std::string& x, const std::vector<std::string>& trees) {
        configs_.read(paths::join(x, "config"), trees);
        configs_.read(paths::join(x, "config.worktree"), trees);
        add_unique(trees_, trees);
    }

    // The working tree of the git directory `g` as its own config has it: where
    // core.worktree says; else the directory holding it, when it is named `.git`; else
    // `g` itself, a bare repository.
    std::vector<std::string> own_trees(const std::string& g) {
        auto t = configs_.worktrees(paths::join(g, "config"), g);
        if (t.empty()) t.push_back(base_name(g) == ".git" ? paths::parent(g) : g);
        return t;
    }

    // The working tree of the linked worktree whose git directory is `w`: the directory
    // of the `.git` file its `gitdir` file names. nullopt when that file is missing, or
    // with a warning when it names nothing usable.
    std::optional<std::string> linked_tree(const std::string& w) {
        const std::string file = paths::join(w, "gitdir");
        auto text = fs_.read_text(file, protected_names::kMaxPointerFileBytes);
        if (text && !*text) return std::nullopt;
        std::string_view s = text ? std::string_view(**text) : std::string_view();
        while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
        const bool clean = std::none_of(s.begin(), s.end(), [](char ch) {
            const auto u = static_cast<unsigned char>(ch);
            return u < 0x20 || u == 0x7f;
        });
        if (!text || s.empty() || !clean) {
            c_.warn(file, (text ? std::string("does not hold one line naming the linked worktree's .git file")
                                : "cannot read it: " + Collector::describe(text.error(), file)) +
                              "; a relative core.hooksPath is not followed into that worktree");
            return std::nullopt;
        }
        return paths::parent(c_.place(paths::is_absolute(s) ? std::string(s) : w + "/" + std::string(s)));
    }

    // The git directory `x` (real path), used in the working tree `tree`: its own
    // entries and config, then the main git directory it belongs to with that one's
    // linked worktrees and submodules.
    expected<void> git_dir(const std::string& x, const std::string& context, const std::string& tree) {
        const Kind k = c_.kind_of(x);
        if (k == Kind::missing) {
            c_.warn(x, "the git directory does not exist");
            c_.add(x, Guard::read_only, Placeholder::directory,
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
        if (m != x) {
            git_files(m, false, join_context("main repository", context));
            read_configs(x, {tree});  // a linked worktree's own; the main one's are read with all its trees
        }
        repository(m, context, 0, {tree});
        return {};
    }

    // The linked worktrees, config and submodules of the main git directory `m`, whose
    // config is used in `trees`, in its own working tree and in its linked worktrees.
    void repository(const std::string& m, const std::string& context, int depth, std::vector<std::string> trees) {
        if (auto [wt, kind] = c_.follow(paths::join(m, "worktrees")); kind == Kind::directory) {
            for (const auto& name : c_.list(wt)) {
                auto [w, w_kind] = c_.follow(paths::join(wt, name));
                if (w_kind != Kind::directory) continue;
                git_files(w, true, join_context("linked worktree " + name, context));
                const auto tree = linked_tree(w);
                read_configs(w, tree ? std::vector<std::string>{*tree} : std::vector<std::string>{});
                if (tree) add_unique(trees, {*tree});
            }
        }
        add_unique(trees, own_trees(m));
        read_configs(m, trees);
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
                repository(d, ctx, depth + 1, {});
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
// be looked at is a warning naming the path (a git config file that cannot be read or
// understood too, with the line); the entries still hold what could be decided, and a
// path that could not be looked at is listed read_only.
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
    // One cache for the whole computation, shared with the caller's when it has one.
    std::optional<CachedFs> own;
    const auto* shared = dynamic_cast<const CachedFs*>(&fs);
    if (shared == nullptr) own.emplace(fs);
    const FsView& cached = shared != nullptr ? static_cast<const FsView&>(*shared) : *own;
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
                c.add(p, Guard::pin, Placeholder::directory,
                      std::string(d.reason) + "; pinned so it cannot be renamed or replaced");
                for (const auto& e : kAgentEntries) c.add_name(real, e);
            } else {
                c.add(p, Guard::read_only, Placeholder::directory,
                      std::string(d.reason) + "; an empty read-only directory keeps anything from being made in it");
            }
        }
        if (dir == "/") break;
    }

    // Git: the root's repository, or the one the root lies in.
    protect_detail::GitConfigs configs(c, cached, h);
    protect_detail::GitWalk git(c, cached, configs);
    auto found = git.dot_git(r, true);
    if (!found) return fail(found.error());
    for (std::string dir = r; !*found && dir != "/";) {
        dir = paths::parent(dir);
        found = git.dot_git(dir, false);
        if (!found) return fail(found.error());
    }
    git.nested_repositories();
    // The user's own git config applies in every repository: a relative hooks path in
    // it is taken in each working tree met above, or in the root when there is none.
    std::vector<std::string> trees = git.trees();
    if (trees.empty()) trees.push_back(r);
    for (const char* name : {".gitconfig", ".config/git/config"}) configs.read(paths::join(h, name), trees);
    return c.finish();
}

}  // namespace sbx
