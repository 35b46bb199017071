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
// its submodules, and the nested repositories its index records as gitlinks). The
// fixed names are the constexpr tables in sbx::protected_names below (and
// git_repository.hpp's kGitDirEntries), one reason each. Beyond the fixed names, it
// reads those git config files (and the user's own) for the places git is told to run
// hooks from (`core.hooksPath`) or to read more configuration from (`include.path`,
// `includeIf.*.path`), and protects those too.
//
// The entries and their collector are in protected_entries.hpp, the walk through
// git directories and their config files in git_repository.hpp.
//
// One grant is decided here too, with the protections it needs: for a root that is a
// linked worktree, the main repository's git directory (and the worktree's own, when
// it lies elsewhere) is Guard::git_writable, so that git in the root can commit,
// while its files above stay read-only; ProtectedPaths::git_exclude names the
// info/exclude git reads there.
//
// Otherwise it decides nothing about where a command may write: the plan maker keeps the entries
// that lie inside writable places, binds the existing ones read-only (or, for a pin,
// over themselves) and covers the missing ones with read-only placeholders, or for
// names only a later program reads (Missing::after_run) has the launcher rename
// what the command made there once it is over. It reads
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

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/rules/git_repository.hpp"
#include "sbx/rules/protected_entries.hpp"

namespace sbx {

// The fixed names, as data: where each applies is in the name of its table
// (kGitDirEntries, for git directories, is in git_repository.hpp).
namespace protected_names {

// In the root and in every directory above it. An existing one is pinned and its
// kAgentEntries are listed; a missing one is covered whole by an empty read-only
// directory. The root's own `.cogitator` is protected whole instead (kRootEntries).
inline constexpr Name kAgentDirs[] = {
    {".claude", P::directory, "Claude Code loads settings, hooks, skills, agents, commands and plugins from it"},
    {".cogitator", P::directory, "the Cogitator runtime loads settings, hooks, skills, agents, commands and plugins from it"},
};

// Inside an existing agent directory of kAgentDirs.
inline constexpr Name kAgentEntries[] = {
    {"settings.json", P::file, "settings: permissions, hooks, environment and sandbox rules"},
    {"settings.local.json", P::file, "local settings, as powerful as settings.json"},
    {"hooks", P::directory, "hook scripts run outside the sandbox", Contents::run},
    {"skills", P::directory, "skills: instructions and scripts the agent loads"},
    {"agents", P::directory, "agent definitions with their own prompts and tools"},
    {"commands", P::directory, "slash commands: prompts the agent runs"},
    {"plugins", P::directory, "plugins: hooks, commands and MCP servers the agent loads"},
};

// In the root only. Those an open editor reloads as soon as they appear are
// covered while missing; the rest are read only by a later program, and one a
// command makes is renamed after it (Missing::after_run). JetBrains IDEs make
// `.idea` when they open a folder, so a missing one has no IDE reading it.
inline constexpr Name kRootEntries[] = {
    {".cogitator", P::directory, "the workspace's Cogitator directory: settings, trash and snapshots"},
    {".vscode", P::directory,
     "editor settings and tasks that run commands; VS Code applies new settings at once, executable paths included"},
    {".cursor", P::directory, "Cursor's MCP servers, rules and hooks; Cursor starts a new MCP server at once"},
    {".zed", P::directory,
     "Zed's project settings and tasks: MCP servers, language servers and commands; Zed applies new settings at once"},
    {.name = ".mcp.json", .placeholder = P::file, .reason = "MCP servers the agent starts outside the sandbox",
     .missing = Missing::after_run},
    {.name = ".gitmodules", .placeholder = P::file, .reason = "submodule URLs and update commands git follows",
     .missing = Missing::after_run},
    {.name = ".idea", .placeholder = P::directory, .reason = "IDE settings and run configurations that run commands",
     .missing = Missing::after_run},
    {.name = ".devcontainer", .placeholder = P::directory,
     .reason = "dev container commands an editor runs when it opens the folder, initializeCommand on the host",
     .missing = Missing::after_run},
    {.name = ".devcontainer.json", .placeholder = P::file,
     .reason = "the same dev container definition, read from the root when there is no .devcontainer folder",
     .missing = Missing::after_run},
    {.name = ".gemini", .placeholder = P::directory,
     .reason = "Gemini CLI's settings, MCP servers and custom commands", .missing = Missing::after_run},
    {.name = ".codex", .placeholder = P::directory, .reason = "Codex's project config and MCP servers",
     .missing = Missing::after_run},
    {.name = ".envrc", .placeholder = P::file, .reason = "direnv runs it when a shell enters the directory",
     .missing = Missing::after_run},
    {.name = ".husky", .placeholder = P::directory, .reason = "git hooks husky installs, run on the next commit",
     .contents = Contents::run, .missing = Missing::after_run},
    {.name = ".pre-commit-config.yaml", .placeholder = P::file,
     .reason = "pre-commit runs the hooks it lists on the next commit", .missing = Missing::after_run},
};

// In a root that has no `.git` of its own. Where it has one (pinned, or read-only as
// a file), git looks there first and never takes the root for a bare repository
// while it is sound; a HEAD placeholder would only break `git diff HEAD` (an
// ambiguous argument). What a command can still do there, break the `.git/HEAD` it
// may write and make a HEAD of its own beside objects and refs, the audit after the
// run undoes (launchers/linux/git_audit.cpp).
inline constexpr Name kBareRootEntry = {
    "HEAD", P::file, "without it no command can turn the root into a bare repository whose config git would run later"};

// In the home directory only.
inline constexpr Name kHomeEntries[] = {
    {".claude", P::directory, "the user's Claude Code settings, hooks, skills, agents and credentials"},
    {".cogitator", P::directory, "the user's Cogitator settings and extensions"},
    {".claude.json", P::file, "Claude Code's user state: MCP servers and trusted projects"},
    {".config/fish", P::directory, "fish start-up files and functions"},
    {".config/git", P::directory, "git's own config and attributes: aliases, hooks path, filters"},
};

// In the root and in the home directory (a later command may run with either as
// HOME). In the home a shell started while the command runs reads them, so they
// are covered there; in a root that is no home only a later HOME=ROOT does, so a
// missing one there is renamed after the run instead.
inline constexpr Name kRootAndHomeEntries[] = {
    {".bashrc", P::file, "bash start-up file, read by interactive shells"},
    {".bash_profile", P::file, "bash login start-up file"},
    {".bash_login", P::file, "bash login start-up file, read without .bash_profile"},
    {".bash_logout", P::file, "run when a bash login shell exits"},
    {".profile", P::file, "POSIX shell login start-up file"},
    {".zshrc", P::file, "zsh start-up file, read by interactive shells"},
    {".zshenv", P::file, "zsh start-up file, read by every zsh"},
    {".zprofile", P::file, "zsh login start-up file"},
    {".zlogin", P::file, "zsh login start-up file"},
    {".zlogout", P::file, "run when a zsh login shell exits"},
    {".kshrc", P::file, "ksh start-up file"},
    {".cshrc", P::file, "csh and tcsh start-up file"},
    {".tcshrc", P::file, "tcsh start-up file"},
    {".login", P::file, "csh and tcsh login start-up file"},
    {".logout", P::file, "run when a csh login shell exits"},
    {".gitconfig", P::file, "git configuration: aliases, hooks path, filters and fsmonitor run commands"},
};

static_assert(commondir_only_for_commondir(kAgentDirs) && commondir_only_for_commondir(kAgentEntries) &&
              commondir_only_for_commondir(kRootEntries) && commondir_only_for_commondir(kHomeEntries) &&
              commondir_only_for_commondir(kRootAndHomeEntries));

}  // namespace protected_names

// Every path under which a sandboxed command run in `root` must not write.
// `root` and `home`: absolute, normalised, without symlinks; `root` an existing
// directory, `home` perhaps missing. Errors: a root or home that breaks that contract
// (INVALID_ARGUMENT), a `.git` file or `commondir` that cannot be read or does not
// name a git directory (INVALID_SETTINGS, naming the file). Anything else that cannot
// be looked at is a warning naming the path (a git config file that cannot be read or
// understood too, with the line); the entries still hold what could be decided, and a
// path that could not be looked at is listed read_only. `recorded`: the repositories
// the audit after an earlier run found in the root (git_record.hpp), protected too.
SBX_INLINE expected<ProtectedPaths> protected_paths(std::string_view root, std::string_view home, const FsView& fs,
                                                std::span<const RecordedRepository> recorded = {});

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_RULES)

namespace sbx {

SBX_INLINE expected<ProtectedPaths> protected_paths(std::string_view root, std::string_view home, const FsView& fs,
                                                std::span<const RecordedRepository> recorded) {
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
    if (const Kind dotgit = c.kind_of(paths::join(r, ".git")); dotgit != Kind::directory && dotgit != Kind::regular)
        c.add_name(r, kBareRootEntry);
    for (const auto& n : kRootAndHomeEntries) c.add_name(r, n, {}, Missing::after_run);
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
    auto found = git.dot_git(r, protect_detail::DotGitOf::root);
    SBX_TRY(found);
    for (std::string dir = r; !*found && dir != "/";) {
        dir = paths::parent(dir);
        found = git.dot_git(dir, protect_detail::DotGitOf::above_root);
        SBX_TRY(found);
    }
    git.nested_repositories();
    git.recorded(recorded, r);
    // The user's own git config applies in every repository: a relative hooks path in
    // it is taken in each working tree met above, or in the root when there is none.
    std::vector<std::string> trees = git.trees();
    if (trees.empty()) trees.push_back(r);
    for (const char* name : {".gitconfig", ".config/git/config"}) configs.read(paths::join(h, name), trees);
    ProtectedPaths out = c.finish();
    if (git.exclude_dir()) out.git_exclude = paths::join(*git.exclude_dir(), "info/exclude");
    return out;
}

}  // namespace sbx
#endif
