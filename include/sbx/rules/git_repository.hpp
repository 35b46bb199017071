// sbx/rules/git_repository.hpp - the git directories a repository touches, walked through an FsView.
//
// From a directory's `.git` entry (a directory, or a file naming one) GitWalk finds
// every git directory git would use there: the main repository's for a linked
// worktree (`commondir`), its linked worktrees (`worktrees/NAME`, whose `gitdir`
// names their working tree), its submodules (`modules/`, to kMaxModuleDepth) and
// the nested repositories its index records as gitlinks (git_index.hpp). It adds
// the entries of kGitDirEntries of each to the Collector (protected_entries.hpp),
// and GitConfigs reads their config files (git_config.hpp parses them) for the
// places git runs hooks from (core.hooksPath) or reads more configuration from
// (include.path, includeIf.*.path), protecting those too. For a root that is a
// linked worktree it grants the main git directory (Guard::git_writable), which
// git writes for a commit there. It reads only through the FsView;
// protected_paths() (protected_paths.hpp) drives it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/rules/git_config.hpp"
#include "sbx/rules/git_index.hpp"
#include "sbx/rules/git_record.hpp"
#include "sbx/rules/protected_entries.hpp"

namespace sbx {

namespace protected_names {

// In a git directory: the root's, the main repository's, a submodule's. In a linked
// worktree's directory (`worktrees/NAME`) `hooks` and `config` only when present.
inline constexpr Name kGitDirEntries[] = {
    {"hooks", P::directory, "git hooks: scripts git runs on commit, checkout, merge and push", Contents::run},
    {"config", P::file, "git configuration: hooks path, filters, fsmonitor and aliases run commands"},
    {"commondir", P::commondir, "points git at another git directory, whose config and hooks it then uses",
     Contents::data, Worktree::even_missing},
    {"config.worktree", P::file, "per-worktree git configuration, as powerful as config", Contents::data,
     Worktree::even_missing},
    // .gitattributes in a work tree does the same, but only there: this file applies in
    // every work tree of the repository, the main one and the other linked worktrees.
    {"info/attributes", P::file,
     "git attributes for every work tree of the repository: they choose which filter, diff and merge drivers "
     "(programs a config git reads names, git-lfs among them) run on which files",
     Contents::data, Worktree::never},
};

static_assert(commondir_only_for_commondir(kGitDirEntries));

// How deep submodules and nested repositories are followed; past it the rest is
// left out with a warning.
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

SBX_INLINE std::string_view base_name(std::string_view p);

// The path a `.git` file (prefix "gitdir: ") or a `commondir` (prefix "") names,
// as git reads it: one line, trailing newlines and carriage returns dropped,
// relative to `base` unless absolute; folded through the FsView to a real path.
// nullopt when the file is not there. An error names the file when it cannot be read
// or says anything else.
SBX_INLINE expected<std::optional<std::string>> read_pointer(Collector& c, const FsView& fs, const std::string& file,
                                                         std::string_view prefix, const std::string& base);

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
    std::vector<std::string> worktrees(const std::string& file, const std::string& git_dir);

private:
    Collector& c_;
    const FsView& fs_;
    std::string home_;
    std::unordered_map<std::string, std::optional<GitConfigFacts>> parsed_;  // nullopt: missing or not read
    std::unordered_set<std::string> done_;  // file and trees already followed
    std::size_t includes_ = 0;              // includes followed so far

    static bool has_control(std::string_view s);

    void read(const std::string& file, const std::vector<std::string>& trees, int depth);

    // The file read and parsed once; nullptr when it is missing or cannot be read.
    const GitConfigFacts* facts(const std::string& file);

    // A path from a config value as git reads one: `~` and `~/` under the home
    // directory, anything else as written (absolute, or relative to the caller's base).
    // nullopt for an empty value, or with a warning for one that cannot be followed.
    std::optional<std::string> expand(const GitConfigValue& v, const std::string& file, std::string_view what);
};

// Whose `.git` entry GitWalk::dot_git() looks at: the root's own, guarded even
// when missing, or that of a directory above the root.
enum class DotGitOf { root, above_root };

// Walks the git directories a repository touches, protecting their entries and what
// their config files name.
class GitWalk {
public:
    GitWalk(Collector& c, const FsView& fs, GitConfigs& configs) : c_(c), fs_(fs), configs_(configs) {}

    // Every working tree met (for a bare repository, its git directory): where git
    // takes a relative core.hooksPath from the user's own config.
    const std::vector<std::string>& trees() const { return trees_; }

    // The git directory whose info/exclude git reads in the root, where sbx may list
    // its placeholders: the root's own `.git` directory (not a symlink), or, for a
    // root that is a linked worktree, the main repository's git directory its
    // commondir names (linked_worktree()). nullopt otherwise.
    const std::optional<std::string>& exclude_dir() const { return exclude_dir_; }

    // Protects the `.git` entry in `dir` and the git directories behind it. The root's
    // (DotGitOf::root) is guarded even when missing. Returns whether `dir` holds a
    // repository (a `.git` entry, or `dir` itself a bare git directory), which stops
    // the search upwards.
    expected<bool> dot_git(const std::string& dir, DotGitOf of);

    // The nested repositories the index of the repository dot_git() found records
    // as gitlinks, and those their own indexes record, protected as submodules are.
    void nested_repositories() {
        if (found_) gitlinked(found_->tree, found_->git_dir, 0);
    }

    // The repositories an earlier run's audit found in the root `root`
    // (git_record.hpp), protected as gitlinked ones are: each one still there,
    // strictly inside the root and outside its `.git`, with no symbolic link on the
    // way. One gone or changed since is passed over: the audit after this run
    // looks at the root again.
    void recorded(std::span<const RecordedRepository> repos, const std::string& root);

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
    std::optional<std::string> exclude_dir_;

    // The root `root`, whose `.git` file names the git directory `x`, as a linked
    // worktree: git writes that worktree's index, HEAD and logs in `x`, and the
    // objects, refs, logs and packed-refs all worktrees share in the main
    // repository's git directory its commondir names. Both are granted
    // (Guard::git_writable) when that is a git directory that does not hold the
    // root; what in them makes git run a program stays protected (git_dir() listed
    // it). Otherwise a warning says that git cannot commit in the root. A git
    // directory without a commondir is a repository's own, not a linked worktree's:
    // nothing is granted (a submodule checkout as the root commits no more than before).
    void linked_worktree(const std::string& x, const std::string& root);

    // Whether the repository of the git directory `g` names objects with SHA-256
    // (extensions.objectFormat in the config of its main git directory).
    bool sha256(const std::string& g);

    // The gitlinks in the index of the git directory `g`, whose working tree is `tree`.
    void gitlinked(const std::string& tree, const std::string& g, int depth);

    // The nested repository in `dir` (no symlink on the way): its `.git` entry and the
    // git directory behind it. What cannot be read is a warning: git cannot use it either.
    void nested(const std::string& dir, const std::string& context, int depth);

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

    // What kind of git directory git_files() protects the entries of: a repository's
    // own; a linked worktree's (`worktrees/NAME`), which has some only when present;
    // or the one a linked worktree in use names (the root's, a nested repository's),
    // whose entries are covered as a repository's own, but for those git reads from
    // the main git directory alone (Worktree::never).
    enum class GitDir { own, linked_worktree, worktree_in_use };

    void git_files(const std::string& x, GitDir kind, const std::string& context);

    // The config files of the git directory `x`, used in the working trees `trees`.
    void read_configs(const std::string& x, const std::vector<std::string>& trees);

    // The working tree of the git directory `g` as its own config has it: where
    // core.worktree says; else the directory holding it, when it is named `.git`; else
    // `g` itself, a bare repository.
    std::vector<std::string> own_trees(const std::string& g);

    // The working tree of the linked worktree whose git directory is `w`: the directory
    // of the `.git` file its `gitdir` file names. nullopt when that file is missing, or
    // with a warning when it names nothing usable.
    std::optional<std::string> linked_tree(const std::string& w);

    // The git directory `x` (real path), used in the working tree `tree`: its own
    // entries and config, then the main git directory it belongs to with that one's
    // linked worktrees and submodules.
    expected<void> git_dir(const std::string& x, const std::string& context, const std::string& tree);

    // The linked worktrees, config and submodules of the main git directory `m`, whose
    // config is used in `trees`, in its own working tree and in its linked worktrees.
    void repository(const std::string& m, const std::string& context, int depth, std::vector<std::string> trees);

    // Every git directory under `dir` (a `modules` directory). A submodule's name may
    // hold slashes, so a directory that is no git directory is looked into.
    void modules(const std::string& dir, const std::string& context, int depth);
};

}  // namespace protect_detail

// The common git directory of the repository whose work tree `root` (absolute,
// normalised) is: its `.git` directory, or the git directory its `.git` file
// names, or the main one that one's commondir names; a git directory only when it
// holds a HEAD (an empty placeholder `.git` is none). nullopt when `root` holds no
// `.git` git can use, or what it names cannot be read. Sandboxes whose roots share
// it share their placeholders (placeholder_registry.hpp): the main work tree and
// the linked worktrees of one repository have theirs in its git directory.
SBX_INLINE std::optional<std::string> common_git_dir(const std::string& root, const FsView& fs);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_RULES)

namespace sbx::protect_detail {

SBX_INLINE std::string_view base_name(std::string_view p) {
    const auto pos = p.rfind('/');
    return pos == std::string_view::npos ? p : p.substr(pos + 1);
}

SBX_INLINE expected<std::optional<std::string>> read_pointer(Collector& c, const FsView& fs, const std::string& file,
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

SBX_INLINE std::vector<std::string> GitConfigs::worktrees(const std::string& file, const std::string& git_dir) {
    std::vector<std::string> out;
    const GitConfigFacts* f = facts(file);
    if (f == nullptr) return out;
    for (const auto& v : f->worktrees) {
        if (v.value.empty() || has_control(v.value)) continue;
        out.push_back(c_.place(paths::is_absolute(v.value) ? v.value : git_dir + "/" + v.value));
    }
    return out;
}

SBX_INLINE bool GitConfigs::has_control(std::string_view s) {
    return std::any_of(s.begin(), s.end(), [](char ch) {
        const auto u = static_cast<unsigned char>(ch);
        return u < 0x20 || u == 0x7f;
    });
}

SBX_INLINE void GitConfigs::read(const std::string& file, const std::vector<std::string>& trees, int depth) {
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
                   "git runs hooks from here (core.hooksPath in " + file + ")", protected_names::Contents::run);
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

SBX_INLINE const GitConfigFacts* GitConfigs::facts(const std::string& file) {
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

SBX_INLINE std::optional<std::string> GitConfigs::expand(const GitConfigValue& v, const std::string& file, std::string_view what) {
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

SBX_INLINE expected<bool> GitWalk::dot_git(const std::string& dir, DotGitOf of) {
    const bool is_root = of == DotGitOf::root;
    const std::string dotgit = paths::join(dir, ".git");
    const std::string whose = is_root ? "the root's" : "the repository above the root: its";
    const Kind own = c_.kind_of(dotgit);
    auto [real, kind] = own == Kind::unknown ? std::pair<std::string, Kind>{dotgit, Kind::unknown} : c_.follow(dotgit);
    switch (kind) {
        case Kind::directory:
            c_.add(dotgit, Guard::pin, Placeholder::directory,
                   whose + " .git directory: no command may remove, rename or replace it (with a gitdir: file "
                           "of its own), while git still writes the index and objects inside");
            SBX_TRY(git_dir(real, is_root ? "" : "repository above the root", dir));
            found_ = Found{dir, real};
            if (is_root && own == Kind::directory) exclude_dir_ = dotgit;
            return true;
        case Kind::regular: {
            c_.add(dotgit, Guard::read_only, Placeholder::file,
                   whose + " .git file: it names the git directory git uses, which no command may change");
            auto x = read_pointer(c_, fs_, real, "gitdir: ", dir);
            SBX_TRY(x);
            if (!*x) return true;  // gone since lstat; the .git entry is guarded anyway
            SBX_TRY(git_dir(**x, "named by " + dotgit, dir));
            found_ = Found{dir, **x};
            if (is_root) linked_worktree(**x, dir);
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
        SBX_TRY(git_dir(dir, is_root ? "the root is a bare repository" : "bare repository above the root", dir));
        return true;
    }
    return false;
}

SBX_INLINE void GitWalk::recorded(std::span<const RecordedRepository> repos, const std::string& root) {
    const std::string own = paths::join(root, ".git");
    for (const auto& r : repos) {
        if (r.path == root || !paths::at_or_under(r.path, root) || paths::at_or_under(r.path, own)) continue;
        if (auto real = c_.real_path(r.path); !real || *real != r.path) continue;
        const std::string what = r.path.substr(root.size() + 1) + ", in the record of the repositories found in the root";
        if (r.kind == RecordedRepository::Kind::tree) {
            if (!nested_done_.insert(r.path).second) continue;
            nested(r.path, "repository " + what, 0);
        } else if (is_bare_git_dir(r.path)) {
            if (auto ok = git_dir(r.path, "bare repository " + what, r.path); !ok)
                c_.warn(ok.error().file.empty() ? r.path : ok.error().file, ok.error().message);
        }
    }
}

SBX_INLINE void GitWalk::linked_worktree(const std::string& x, const std::string& root) {
    const std::string file = paths::join(x, "commondir");
    const std::string stays =
        "; git cannot commit in the root, a linked worktree, since its main repository stays read-only";
    auto main = read_pointer(c_, fs_, file, "", x);
    if (!main || !*main) {
        // No commondir: a git directory of its own (a submodule's, --separate-git-dir),
        // no linked worktree; but one under worktrees/ lost it.
        if (!main || base_name(paths::parent(x)) == "worktrees")
            c_.warn(file, (main ? std::string("missing, so the main repository is not known") : main.error().message) + stays);
        return;
    }
    const std::string& m = **main;
    if (c_.kind_of(m) != Kind::directory || !is_bare_git_dir(m)) {
        c_.warn(m, "named by " + file + " as the main repository's git directory, but it is none" + stays);
        return;
    }
    if (paths::at_or_under(root, m)) {
        c_.warn(m, "named by " + file + " as the main repository's git directory, but it holds the root" + stays);
        return;
    }
    const std::string kept = "; its config, hooks, commondir, config.worktree and info/attributes, and what its "
                             "config names, stay protected";
    c_.add(m, Guard::git_writable, Placeholder::directory,
           "the main repository's git directory of the root, a linked worktree: git writes the objects, refs, logs "
           "and packed-refs they share here" + kept);
    if (!paths::at_or_under(x, m))
        c_.add(x, Guard::git_writable, Placeholder::directory,
               "the git directory of the root, a linked worktree: git writes its index, HEAD and logs here" + kept);
    exclude_dir_ = m;
}

SBX_INLINE bool GitWalk::sha256(const std::string& g) {
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

SBX_INLINE void GitWalk::gitlinked(const std::string& tree, const std::string& g, int depth) {
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

SBX_INLINE void GitWalk::nested(const std::string& dir, const std::string& context, int depth) {
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

SBX_INLINE void GitWalk::git_files(const std::string& x, GitDir kind, const std::string& context) {
    using protected_names::Worktree;
    for (const auto& n : protected_names::kGitDirEntries) {
        if (kind != GitDir::own && n.in_worktree == Worktree::never) continue;
        const bool only_when_present = n.in_worktree == Worktree::when_present;
        if (kind == GitDir::linked_worktree && only_when_present && !exists(paths::join(x, n.name))) continue;
        c_.add_name(x, n, context);
    }
}

SBX_INLINE void GitWalk::read_configs(const std::string& x, const std::vector<std::string>& trees) {
    configs_.read(paths::join(x, "config"), trees);
    configs_.read(paths::join(x, "config.worktree"), trees);
    add_unique(trees_, trees);
}

SBX_INLINE std::vector<std::string> GitWalk::own_trees(const std::string& g) {
    auto t = configs_.worktrees(paths::join(g, "config"), g);
    if (t.empty()) t.push_back(base_name(g) == ".git" ? paths::parent(g) : g);
    return t;
}

SBX_INLINE std::optional<std::string> GitWalk::linked_tree(const std::string& w) {
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

SBX_INLINE expected<void> GitWalk::git_dir(const std::string& x, const std::string& context, const std::string& tree) {
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
    auto main = read_pointer(c_, fs_, paths::join(x, "commondir"), "", x);
    SBX_TRY(main);
    std::string m = x;
    if (*main) {
        m = **main;
    } else if (base_name(paths::parent(x)) == "worktrees") {
        m = paths::parent(paths::parent(x));
    }
    git_files(x, m != x ? GitDir::worktree_in_use : GitDir::own, context);
    if (m != x) {
        git_files(m, GitDir::own, join_context("main repository", context));
        read_configs(x, {tree});  // a linked worktree's own; the main one's are read with all its trees
    }
    repository(m, context, 0, {tree});
    return {};
}

SBX_INLINE void GitWalk::repository(const std::string& m, const std::string& context, int depth, std::vector<std::string> trees) {
    if (auto [wt, kind] = c_.follow(paths::join(m, "worktrees")); kind == Kind::directory) {
        for (const auto& name : c_.list(wt)) {
            auto [w, w_kind] = c_.follow(paths::join(wt, name));
            if (w_kind != Kind::directory) continue;
            git_files(w, GitDir::linked_worktree, join_context("linked worktree " + name, context));
            const auto tree = linked_tree(w);
            read_configs(w, tree ? std::vector<std::string>{*tree} : std::vector<std::string>{});
            if (tree) add_unique(trees, {*tree});
        }
    }
    add_unique(trees, own_trees(m));
    read_configs(m, trees);
    modules(paths::join(m, "modules"), context, depth);
}

SBX_INLINE void GitWalk::modules(const std::string& dir, const std::string& context, int depth) {
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
            git_files(d, GitDir::own, ctx);
            repository(d, ctx, depth + 1, {});
        } else {
            modules(d, context, depth + 1);
        }
    }
}

}  // namespace sbx::protect_detail

namespace sbx {

SBX_INLINE std::optional<std::string> common_git_dir(const std::string& root, const FsView& fs) {
    using protect_detail::Kind;
    protect_detail::Collector c(fs);
    auto [real, kind] = c.follow(paths::join(root, ".git"));
    std::string g;
    if (kind == Kind::directory) {
        g = real;
    } else if (kind == Kind::regular) {
        auto x = protect_detail::read_pointer(c, fs, real, "gitdir: ", root);
        if (!x || !*x) return std::nullopt;
        g = **x;
    } else {
        return std::nullopt;
    }
    auto m = protect_detail::read_pointer(c, fs, paths::join(g, "commondir"), "", g);
    if (!m) return std::nullopt;
    if (*m) g = **m;
    if (c.kind_of(g) != Kind::directory || c.kind_of(paths::join(g, "HEAD")) == Kind::missing) return std::nullopt;
    return g;
}

}  // namespace sbx
#endif
