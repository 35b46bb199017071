// protected_paths(): every protected path for a root, over MemoryFs and the real disk.
#include "sbx/rules/protected_paths.hpp"
#include "temp_dir.hpp"
#include "sbx/io/fs_view_disk.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <span>
#include <string>
#include <system_error>
#include <vector>

namespace {

using sbx::Guard;
using sbx::MemoryFs;
using sbx::Placeholder;
using sbx::ProtectedPath;
using sbx::ProtectedPaths;

// What every answer promises: sorted, each path once, absolute and normalised,
// every entry with a reason, and nothing strictly inside a read-only directory entry.
void check_shape(const ProtectedPaths& pp, const sbx::FsView& fs) {
    std::set<std::string> seen;
    for (std::size_t i = 0; i < pp.paths.size(); ++i) {
        const ProtectedPath& p = pp.paths[i];
        CHECK_MESSAGE(sbx::paths::is_absolute(p.path), p.path);
        CHECK_MESSAGE(sbx::paths::normalize(p.path) == p.path, p.path);
        CHECK_MESSAGE(!p.reason.empty(), p.path);
        CHECK_MESSAGE(seen.insert(p.path).second, "listed twice: " << p.path);
        if (i > 0) CHECK_MESSAGE(pp.paths[i - 1].path < p.path, "out of order: " << p.path);
        if (p.guard == Guard::pin) {
            auto st = fs.lstat(p.path);
            REQUIRE(st.has_value());
            CHECK_MESSAGE((*st && ((*st)->type == sbx::FileType::directory || (*st)->type == sbx::FileType::symlink)),
                          "a pin that is no existing directory: " << p.path);
        }
    }
    for (const auto& w : pp.warnings) {
        CHECK(!w.file.empty());
        CHECK(w.key.empty());
        CHECK(!w.message.empty());
    }
}

ProtectedPaths compute(const sbx::FsView& fs, std::string_view root = "/r", std::string_view home = "/home/u") {
    auto pp = sbx::protected_paths(root, home, fs);
    REQUIRE_MESSAGE(pp.has_value(), (pp ? std::string() : sbx::to_string(pp.error())));
    check_shape(*pp, fs);
    return std::move(*pp);
}

const ProtectedPath& entry(const ProtectedPaths& pp, std::string_view path) {
    const ProtectedPath* p = pp.find(path);
    REQUIRE_MESSAGE(p != nullptr, "not protected: " << path);
    return *p;
}

bool listed(const ProtectedPaths& pp, std::string_view path) { return pp.find(path) != nullptr; }

bool warned_about(const ProtectedPaths& pp, std::string_view path) {
    for (const auto& w : pp.warnings)
        if (w.file == path) return true;
    return false;
}

std::string warnings_text(const ProtectedPaths& pp) {
    std::string out;
    for (const auto& w : pp.warnings) out += sbx::to_string(w) + "\n";
    return out;
}

void check_read_only(const ProtectedPaths& pp, std::string_view path, Placeholder ph) {
    const ProtectedPath& e = entry(pp, path);
    CHECK_MESSAGE(e.guard == Guard::read_only, path);
    CHECK_MESSAGE(e.placeholder == ph, path);
}

void check_pin(const ProtectedPaths& pp, std::string_view path) {
    CHECK_MESSAGE(entry(pp, path).guard == Guard::pin, path);
}

// The five entries of a git directory, read-only; a missing commondir is covered
// by one naming its own directory, the rest by empty ones.
void check_git_dir(const ProtectedPaths& pp, const std::string& x) {
    check_read_only(pp, x + "/hooks", Placeholder::directory);
    check_read_only(pp, x + "/config", Placeholder::file);
    check_read_only(pp, x + "/commondir", Placeholder::commondir);
    check_read_only(pp, x + "/config.worktree", Placeholder::file);
    check_read_only(pp, x + "/info/attributes", Placeholder::file);
}

// A main repository's git directory as `git init` leaves it.
void git_dir_in_memory(MemoryFs& fs, const std::string& x) {
    fs.file(x + "/HEAD", "ref: refs/heads/main\n").file(x + "/config", "[core]\n");
    fs.dir(x + "/hooks").file(x + "/hooks/pre-commit.sample", "#!/bin/sh\n");
    fs.dir(x + "/objects").dir(x + "/refs/heads");
}

using sbx_test::TempDir;

bool have_git() { return std::system("git --version >/dev/null 2>&1") == 0; }

// Runs git with no user or system configuration, in `dir`. Paths from mkdtemp hold
// no characters the shell treats specially.
int git(const TempDir& t, const std::string& dir, const std::string& args) {
    const std::string cmd = "cd '" + dir + "' && HOME='" + t.at("home") +
                            "' GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null "
                            "git -c user.name=sbx -c user.email=sbx@example.invalid -c init.defaultBranch=main "
                            "-c protocol.file.allow=always " +
                            args + " >/dev/null 2>&1";
    return std::system(cmd.c_str());
}

// What git prints for `args` run as git() runs it, without the trailing newline; empty
// when it fails.
std::string git_output(const TempDir& t, const std::string& dir, const std::string& args) {
    const std::string out = t.at("git-output.txt");
    const std::string cmd = "cd '" + dir + "' && HOME='" + t.at("home") +
                            "' GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git " + args + " >'" + out +
                            "' 2>/dev/null";
    if (std::system(cmd.c_str()) != 0) return {};
    std::ifstream in(out);
    std::string line;
    std::getline(in, line);
    return line;
}

// A repository at /r whose .git/config holds `config`, and an empty home.
MemoryFs repository_with_config(std::string_view config) {
    MemoryFs fs;
    git_dir_in_memory(fs, "/r/.git");
    fs.file("/r/.git/config", config).dir("/home/u");
    return fs;
}

bool warned(const ProtectedPaths& pp, std::string_view path, std::string_view says) {
    for (const auto& w : pp.warnings)
        if (w.file == path && w.message.find(says) != std::string::npos) return true;
    return false;
}

}  // namespace

// Over 80 lines: one root walked through, a check a line; split, each part
// would build the same disk again.
TEST_CASE("protected: a plain root without a repository") {
    MemoryFs fs;
    fs.dir("/r/src").file("/r/main.c").dir("/home/u");
    const auto pp = compute(fs);
    CHECK(pp.warnings.empty());

    // No repository: an empty read-only .git blocks `git init`, a HEAD file a bare one.
    check_read_only(pp, "/r/.git", Placeholder::directory);
    check_read_only(pp, "/r/HEAD", Placeholder::file);
    CHECK(!listed(pp, "/r/.git/hooks"));  // inside the placeholder, covered by it
    CHECK(!listed(pp, "/r/.git/config"));

    // The root's own files.
    check_read_only(pp, "/r/.cogitator", Placeholder::directory);
    check_read_only(pp, "/r/.mcp.json", Placeholder::file);
    check_read_only(pp, "/r/.gitmodules", Placeholder::file);
    check_read_only(pp, "/r/.vscode", Placeholder::directory);
    check_read_only(pp, "/r/.idea", Placeholder::directory);
    check_read_only(pp, "/r/.gitconfig", Placeholder::file);
    // What other tools run unasked: direnv, the hook managers, dev containers, the
    // folders other agents and editors load MCP servers, tasks and rules from.
    // Those an open editor applies at once are covered while the command runs;
    // the others only a later program reads, renamed after the run when made.
    using sbx::Missing;
    const struct {
        const char* path;
        Placeholder placeholder;
        const char* reason;
        Missing missing;
    } unasked[] = {
        {"/r/.envrc", Placeholder::file, "direnv runs it when a shell enters the directory", Missing::after_run},
        {"/r/.husky", Placeholder::directory, "git hooks husky installs, run on the next commit", Missing::after_run},
        {"/r/.pre-commit-config.yaml", Placeholder::file, "pre-commit runs the hooks it lists on the next commit",
         Missing::after_run},
        {"/r/.devcontainer", Placeholder::directory,
         "dev container commands an editor runs when it opens the folder, initializeCommand on the host",
         Missing::after_run},
        {"/r/.devcontainer.json", Placeholder::file,
         "the same dev container definition, read from the root when there is no .devcontainer folder",
         Missing::after_run},
        {"/r/.cursor", Placeholder::directory, "Cursor's MCP servers, rules and hooks; Cursor starts a new MCP server at once",
         Missing::covered},
        {"/r/.gemini", Placeholder::directory, "Gemini CLI's settings, MCP servers and custom commands", Missing::after_run},
        {"/r/.codex", Placeholder::directory, "Codex's project config and MCP servers", Missing::after_run},
        {"/r/.zed", Placeholder::directory,
         "Zed's project settings and tasks: MCP servers, language servers and commands; Zed applies new settings at once",
         Missing::covered},
        {"/r/.vscode", Placeholder::directory,
         "editor settings and tasks that run commands; VS Code applies new settings at once, executable paths included",
         Missing::covered},
        {"/r/.idea", Placeholder::directory, "IDE settings and run configurations that run commands", Missing::after_run},
        {"/r/.mcp.json", Placeholder::file, "MCP servers the agent starts outside the sandbox", Missing::after_run},
        {"/r/.gitmodules", Placeholder::file, "submodule URLs and update commands git follows", Missing::after_run},
        {"/r/.cogitator", Placeholder::directory, "the workspace's Cogitator directory: settings, trash and snapshots",
         Missing::covered},
        {"/r/.claude", Placeholder::directory, nullptr, Missing::covered},
        {"/r/.git", Placeholder::directory, nullptr, Missing::covered},
        {"/r/HEAD", Placeholder::file, nullptr, Missing::covered},
    };
    for (const auto& u : unasked) {
        check_read_only(pp, u.path, u.placeholder);
        if (u.reason != nullptr) CHECK_MESSAGE(entry(pp, u.path).reason == u.reason, u.path);
        CHECK_MESSAGE((entry(pp, u.path).missing == u.missing), u.path);
    }
    // Root-only: nothing of these in the home directory.
    CHECK(!listed(pp, "/home/u/.envrc"));
    CHECK(!listed(pp, "/home/u/.cursor"));
    for (const auto& n : sbx::protected_names::kRootAndHomeEntries) {
        check_read_only(pp, "/r/" + std::string(n.name), Placeholder::file);
        check_read_only(pp, "/home/u/" + std::string(n.name), Placeholder::file);
        // A shell started while the command runs reads the home's, only a later
        // HOME=ROOT the root's.
        CHECK((entry(pp, "/r/" + std::string(n.name)).missing == Missing::after_run));
        CHECK((entry(pp, "/home/u/" + std::string(n.name)).missing == Missing::covered));
    }

    // Missing agent directories, here and above: covered whole, entries not listed.
    for (const char* dir : {"/r/.claude", "/.claude", "/.cogitator", "/home/u/.claude", "/home/u/.cogitator"})
        check_read_only(pp, dir, Placeholder::directory);
    CHECK(!listed(pp, "/r/.claude/settings.json"));
    CHECK(!listed(pp, "/.claude/hooks"));

    // Nothing of the project's own files.
    CHECK(!listed(pp, "/r/src"));
    CHECK(!listed(pp, "/r/main.c"));
    CHECK(!listed(pp, "/r"));
}

TEST_CASE("protected: the tables say by name which directories run their entries, and what a worktree lacks") {
    using sbx::protected_names::Contents;
    using sbx::protected_names::Worktree;
    using Table = std::span<const sbx::protected_names::Name>;
    std::set<std::string> run;
    for (Table table : {Table(sbx::protected_names::kAgentEntries), Table(sbx::protected_names::kRootEntries),
                        Table(sbx::protected_names::kAgentDirs), Table(sbx::protected_names::kHomeEntries)})
        for (const auto& n : table)
            if (n.contents == Contents::run) run.insert(std::string(n.name));
    CHECK(run == std::set<std::string>{"hooks", ".husky"});
    std::set<std::string> git_run, even_missing, never;
    for (const auto& n : sbx::protected_names::kGitDirEntries) {
        if (n.contents == Contents::run) git_run.insert(std::string(n.name));
        if (n.in_worktree == Worktree::even_missing) even_missing.insert(std::string(n.name));
        if (n.in_worktree == Worktree::never) never.insert(std::string(n.name));
    }
    CHECK(git_run == std::set<std::string>{"hooks"});
    CHECK(even_missing == std::set<std::string>{"commondir", "config.worktree"});
    // git reads info/ from the main git directory alone.
    CHECK(never == std::set<std::string>{"info/attributes"});
    for (const auto& n : sbx::protected_names::kRootAndHomeEntries) {
        CHECK(n.contents == Contents::data);
        CHECK(n.in_worktree == Worktree::when_present);
    }
}

TEST_CASE("protected: existing folders other tools run are read-only whole; a symlinked .envrc guards its target") {
    MemoryFs fs;
    fs.file("/r/.devcontainer/devcontainer.json", "{}").file("/r/.cursor/mcp.json", "{}").dir("/r/.cursor/rules");
    fs.file("/dots/envrc", "use flake\n").symlink("/r/.envrc", "/dots/envrc").dir("/home/u");
    const auto pp = compute(fs);
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
    check_read_only(pp, "/r/.devcontainer", Placeholder::directory);
    check_read_only(pp, "/r/.cursor", Placeholder::directory);
    CHECK(!listed(pp, "/r/.devcontainer/devcontainer.json"));  // covered by the directory
    CHECK(!listed(pp, "/r/.cursor/mcp.json"));
    check_read_only(pp, "/r/.envrc", Placeholder::file);
    check_read_only(pp, "/dots/envrc", Placeholder::file);
    CHECK(entry(pp, "/dots/envrc").reason.find("target of symlink /r/.envrc") != std::string::npos);
}

TEST_CASE("protected: a normal repository pins .git and guards its hooks and config") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/r/.git");
    fs.file("/r/.git/index").dir("/home/u");
    const auto pp = compute(fs);
    CHECK(pp.warnings.empty());

    check_pin(pp, "/r/.git");
    check_git_dir(pp, "/r/.git");
    // The hook scripts lie inside the read-only hooks directory: not listed again.
    CHECK(!listed(pp, "/r/.git/hooks/pre-commit.sample"));
    // git keeps writing these.
    CHECK(!listed(pp, "/r/.git/index"));
    CHECK(!listed(pp, "/r/.git/objects"));
    CHECK(!listed(pp, "/r/.git/HEAD"));
    // No HEAD at the root: git takes the pinned .git first, and a HEAD file would make
    // `git diff HEAD` ambiguous. The audit after the run undoes a HEAD a command makes
    // there after breaking .git/HEAD.
    CHECK(!listed(pp, "/r/HEAD"));
}

TEST_CASE("protected: a linked worktree guards the main repository's hooks and config") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/src/main/.git");
    fs.dir("/src/main/.git/worktrees/wt")
        .file("/src/main/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n")
        .file("/src/main/.git/worktrees/wt/commondir", "../..\n")
        .file("/src/main/.git/worktrees/wt/gitdir", "/src/wt/.git\n");
    fs.dir("/src/main/.git/worktrees/other").file("/src/main/.git/worktrees/other/commondir", "../..\n");
    fs.file("/src/main/.git/worktrees/other/config.worktree", "[core]\n");
    fs.dir("/src/main/.git/worktrees/other/hooks");
    fs.dir("/home/u");

    SUBCASE("absolute gitdir") { fs.file("/src/wt/.git", "gitdir: /src/main/.git/worktrees/wt\n"); }
    SUBCASE("relative gitdir with CRLF") { fs.file("/src/wt/.git", "gitdir: ../main/.git/worktrees/wt\r\n"); }
    SUBCASE("gitdir through a symlink") {
        fs.symlink("/links/main-git", "/src/main/.git");
        fs.file("/src/wt/.git", "gitdir: /links/main-git/worktrees/wt");
    }
    const auto pp = compute(fs, "/src/wt");
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));

    // The worktree's .git file itself, read-only though it exists.
    check_read_only(pp, "/src/wt/.git", Placeholder::file);
    // The worktree's own git directory, with the commondir that leads to the main one.
    check_read_only(pp, "/src/main/.git/worktrees/wt/commondir", Placeholder::commondir);
    check_read_only(pp, "/src/main/.git/worktrees/wt/config.worktree", Placeholder::file);
    check_read_only(pp, "/src/main/.git/worktrees/wt/hooks", Placeholder::directory);
    check_read_only(pp, "/src/main/.git/worktrees/wt/config", Placeholder::file);
    // The main repository's: what git run in the worktree actually executes.
    check_git_dir(pp, "/src/main/.git");
    CHECK(entry(pp, "/src/main/.git/hooks").reason.find("main repository") != std::string::npos);
    // The main .git: git writes the objects and refs the worktree shares there.
    CHECK(entry(pp, "/src/main/.git").guard == Guard::git_writable);
    CHECK(pp.git_exclude == "/src/main/.git/info/exclude");
    // The other worktree: its commondir and config.worktree always, hooks and config
    // only as present (its hooks directory is, its config is not).
    check_read_only(pp, "/src/main/.git/worktrees/other/commondir", Placeholder::commondir);
    check_read_only(pp, "/src/main/.git/worktrees/other/config.worktree", Placeholder::file);
    check_read_only(pp, "/src/main/.git/worktrees/other/hooks", Placeholder::directory);
    CHECK(!listed(pp, "/src/main/.git/worktrees/other/config"));
    // Nothing through the symlink's own name.
    CHECK(!listed(pp, "/links/main-git/hooks"));
}

TEST_CASE("protected: a worktree without commondir belongs to the directory above worktrees/") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/m/.git");
    fs.file("/m/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n");
    fs.file("/w/.git", "gitdir: /m/.git/worktrees/wt\n").dir("/home/u");
    const auto pp = compute(fs, "/w");
    check_git_dir(pp, "/m/.git");
    check_read_only(pp, "/m/.git/worktrees/wt/commondir", Placeholder::commondir);
}

TEST_CASE("protected: a linked worktree as the root may write the main git directory, whose code stays protected") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/src/main/.git");
    fs.file("/src/main/.git/info/exclude", "*.o\n").file("/src/main/.git/packed-refs");
    fs.dir("/src/main/.git/worktrees/wt")
        .file("/src/main/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n")
        .file("/src/main/.git/worktrees/wt/commondir", "../..\n")
        .file("/src/main/.git/worktrees/wt/gitdir", "/src/wt/.git\n");
    fs.file("/src/wt/.git", "gitdir: /src/main/.git/worktrees/wt\n").dir("/home/u");
    const auto pp = compute(fs, "/src/wt");
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
    const ProtectedPath& m = entry(pp, "/src/main/.git");
    CHECK(m.guard == Guard::git_writable);
    CHECK(m.reason.find("linked worktree") != std::string::npos);
    CHECK(m.reason.find("stay protected") != std::string::npos);
    // The worktree's own git directory lies inside it: no grant of its own.
    CHECK(!listed(pp, "/src/main/.git/worktrees/wt"));
    // What makes git run a program stays read-only, in both git directories.
    check_git_dir(pp, "/src/main/.git");
    check_read_only(pp, "/src/main/.git/worktrees/wt/commondir", Placeholder::commondir);
    check_read_only(pp, "/src/main/.git/worktrees/wt/config.worktree", Placeholder::file);
    // What git writes for a commit is not listed: it lies in the grant. Nor is
    // info/ in the worktree's own directory, which git does not read.
    for (const char* p : {"/src/main/.git/objects", "/src/main/.git/refs", "/src/main/.git/packed-refs",
                          "/src/main/.git/info/exclude", "/src/main/.git/worktrees/wt/HEAD",
                          "/src/main/.git/worktrees/wt/info/attributes"})
        CHECK_MESSAGE(!listed(pp, p), p);
    CHECK(pp.git_exclude == "/src/main/.git/info/exclude");

    // Where the main repository is not there to write, the root keeps today's
    // read-only view, with a warning that git cannot commit.
    MemoryFs gone;
    gone.file("/src/wt/.git", "gitdir: /src/main/.git/worktrees/wt\n").dir("/home/u");
    const auto pg = compute(gone, "/src/wt");
    CHECK(warned(pg, "/src/main/.git/worktrees/wt/commondir", "git cannot commit in the root"));
    CHECK(!pg.git_exclude);
    for (const auto& p : pg.paths) CHECK_MESSAGE(p.guard != Guard::git_writable, p.path);

    MemoryFs not_git;  // commondir names a directory that is no git directory
    not_git.dir("/src/main/.git/worktrees/wt").file("/src/main/.git/worktrees/wt/commondir", "../..\n");
    not_git.file("/src/wt/.git", "gitdir: /src/main/.git/worktrees/wt\n").dir("/home/u");
    const auto pn = compute(not_git, "/src/wt");
    CHECK(warned(pn, "/src/main/.git", "but it is none"));
    CHECK(!pn.git_exclude);
    for (const auto& p : pn.paths) CHECK_MESSAGE(p.guard != Guard::git_writable, p.path);

    MemoryFs no_commondir;  // git takes such a directory for a whole git directory
    git_dir_in_memory(no_commondir, "/src/main/.git");
    no_commondir.file("/src/main/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n");
    no_commondir.file("/src/wt/.git", "gitdir: /src/main/.git/worktrees/wt\n").dir("/home/u");
    const auto pc = compute(no_commondir, "/src/wt");
    CHECK(warned(pc, "/src/main/.git/worktrees/wt/commondir", "git cannot commit in the root"));
    for (const auto& p : pc.paths) CHECK_MESSAGE(p.guard != Guard::git_writable, p.path);

    // A root inside a linked worktree is not the worktree: nothing is granted.
    MemoryFs inside;
    git_dir_in_memory(inside, "/src/main/.git");
    inside.file("/src/main/.git/worktrees/wt/commondir", "../..\n");
    inside.file("/src/wt/.git", "gitdir: /src/main/.git/worktrees/wt\n").dir("/src/wt/sub").dir("/home/u");
    const auto pi = compute(inside, "/src/wt/sub");
    for (const auto& p : pi.paths) CHECK_MESSAGE(p.guard != Guard::git_writable, p.path);
    CHECK(!pi.git_exclude);
}

TEST_CASE("protected: common_git_dir names the git directory a root's repository shares, which names its placeholder group") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/src/main/.git");
    fs.file("/src/main/.git/worktrees/wt/commondir", "../..\n").file("/src/main/.git/worktrees/wt/HEAD", "x\n");
    fs.file("/src/wt/.git", "gitdir: /src/main/.git/worktrees/wt\n");
    fs.dir("/plain").dir("/placeholder/.git").dir("/home/u");
    CHECK(sbx::common_git_dir("/src/main", fs) == "/src/main/.git");
    CHECK(sbx::common_git_dir("/src/wt", fs) == "/src/main/.git");  // one group with the main work tree
    CHECK(!sbx::common_git_dir("/plain", fs));
    CHECK(!sbx::common_git_dir("/placeholder", fs));  // an empty .git, as sbx's placeholder is: none
    // sbx's commondir placeholder names its own directory: still that one.
    fs.file("/src/main/.git/commondir", "/src/main/.git\n");
    CHECK(sbx::common_git_dir("/src/main", fs) == "/src/main/.git");
    // A .git file naming what is not there: none.
    fs.file("/gone/.git", "gitdir: /nowhere\n");
    CHECK(!sbx::common_git_dir("/gone", fs));
}

TEST_CASE("protected: commondir names the main git directory, wherever it is") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/m/.git");
    fs.dir("/home/u");
    SUBCASE("a .git directory with a commondir of its own") {
        fs.file("/r/.git/HEAD", "ref: refs/heads/x\n").file("/r/.git/commondir", "/m/.git\n");
    }
    SUBCASE("a .git file naming a git directory whose commondir is relative") {
        fs.file("/gd/x/HEAD", "ref: refs/heads/x\n").file("/gd/x/commondir", "../../m/.git");
        fs.file("/r/.git", "gitdir: /gd/x\n");
    }
    const auto pp = compute(fs);
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
    check_git_dir(pp, "/m/.git");
    CHECK(entry(pp, "/m/.git/config").reason.find("main repository") != std::string::npos);
    // Granted to a root that is a linked worktree (its .git a file) alone.
    auto dotgit = fs.lstat("/r/.git");
    REQUIRE((dotgit && *dotgit));
    if ((*dotgit)->type == sbx::FileType::directory) {
        CHECK(!listed(pp, "/m/.git"));
        CHECK(pp.git_exclude == "/r/.git/info/exclude");
    } else {
        CHECK(entry(pp, "/m/.git").guard == Guard::git_writable);
        CHECK(entry(pp, "/gd/x").guard == Guard::git_writable);  // not inside /m/.git: granted of its own
        CHECK(pp.git_exclude == "/m/.git/info/exclude");
    }
}

TEST_CASE("protected: a submodule checkout guards the git directory under the superproject's modules") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/r/.git");
    git_dir_in_memory(fs, "/r/.git/modules/sub");
    fs.file("/r/.gitmodules", "[submodule \"sub\"]\n").dir("/home/u");
    fs.file("/r/sub/.git", "gitdir: ../.git/modules/sub\n");
    git_dir_in_memory(fs, "/r/.git/modules/sub/modules/inner");
    const auto pp = compute(fs, "/r/sub");
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));

    check_read_only(pp, "/r/sub/.git", Placeholder::file);
    check_git_dir(pp, "/r/.git/modules/sub");
    // Its own submodules too.
    check_git_dir(pp, "/r/.git/modules/sub/modules/inner");
    // The superproject is not this root's repository.
    CHECK(!listed(pp, "/r/.git/hooks"));
    CHECK(!listed(pp, "/r/.git"));
    // A git directory of its own, no linked worktree's: nothing granted, no exclude file.
    for (const auto& p : pp.paths) CHECK_MESSAGE(p.guard != Guard::git_writable, p.path);
    CHECK(!pp.git_exclude);
    // The superproject's root holds agent directories all the same (an ancestor).
    check_read_only(pp, "/r/.claude", Placeholder::directory);
    check_read_only(pp, "/r/.cogitator", Placeholder::directory);
    CHECK(!listed(pp, "/r/.gitmodules"));  // a root-only name; /r is not the root
}

TEST_CASE("protected: nested submodules under .git/modules, names with slashes included") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/r/.git");
    git_dir_in_memory(fs, "/r/.git/modules/a");
    git_dir_in_memory(fs, "/r/.git/modules/a/modules/b");
    fs.file("/r/.git/modules/a/modules/b/modules/c/config", "[core]\n");  // config alone marks one
    git_dir_in_memory(fs, "/r/.git/modules/group/deep/d");                 // submodule named group/deep/d
    fs.dir("/r/.git/modules/junk/empty");                                  // no git directory in it
    fs.file("/r/.git/modules/stray-file");
    fs.dir("/r/.git/modules/a/worktrees/wa").file("/r/.git/modules/a/worktrees/wa/commondir", "../..\n");
    fs.dir("/home/u");
    const auto pp = compute(fs);
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));

    check_git_dir(pp, "/r/.git");
    check_git_dir(pp, "/r/.git/modules/a");
    check_git_dir(pp, "/r/.git/modules/a/modules/b");
    check_git_dir(pp, "/r/.git/modules/a/modules/b/modules/c");
    check_git_dir(pp, "/r/.git/modules/group/deep/d");
    check_read_only(pp, "/r/.git/modules/a/worktrees/wa/commondir", Placeholder::commondir);
    CHECK(entry(pp, "/r/.git/modules/a/modules/b/hooks").reason.find("submodule") != std::string::npos);
    // Directories on the way to a submodule's git directory, and other clutter, are not.
    CHECK(!listed(pp, "/r/.git/modules/group/hooks"));
    CHECK(!listed(pp, "/r/.git/modules/group/deep/config"));
    CHECK(!listed(pp, "/r/.git/modules/junk/hooks"));
    CHECK(!listed(pp, "/r/.git/modules/junk/empty/config"));
    CHECK(!listed(pp, "/r/.git/modules/stray-file/config"));
}

TEST_CASE("protected: .git/hooks as a symlink protects the directory it leads to") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/r/.git");
    fs.dir("/shared/hooks").file("/shared/hooks/pre-commit", "#!/bin/sh\n").dir("/home/u");
    SUBCASE("absolute link") { fs.symlink("/r/.git/hooks", "/shared/hooks"); }
    SUBCASE("relative link") { fs.symlink("/r/.git/hooks", "../../shared/hooks"); }
    SUBCASE("link to a link") {
        fs.symlink("/shared/current", "hooks");
        fs.symlink("/r/.git/hooks", "/shared/current");
    }
    const auto pp = compute(fs);
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
    // The link itself stays listed (the plan maker decides what it can mount) ...
    check_read_only(pp, "/r/.git/hooks", Placeholder::directory);
    // ... and where it leads is protected on its own.
    check_read_only(pp, "/shared/hooks", Placeholder::directory);
    CHECK(entry(pp, "/shared/hooks").reason.find("target of symlink /r/.git/hooks") != std::string::npos);
    CHECK(!listed(pp, "/shared/current"));
}

TEST_CASE("protected: a hook that is a symlink protects its script") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/r/.git");
    fs.file("/r/scripts/pre-commit", "#!/bin/sh\nmake lint\n").file("/r/scripts/other.sh").dir("/home/u");
    fs.symlink("/r/.git/hooks/pre-commit", "../../scripts/pre-commit");
    fs.symlink("/r/.git/hooks/pre-push", "/r/scripts/missing-yet");
    fs.symlink("/r/.git/hooks/post-merge", "pre-commit.sample");  // stays inside hooks: covered
    fs.dir("/r/.claude/hooks").symlink("/r/.claude/hooks/on-stop", "/r/scripts/stop.sh");
    const auto pp = compute(fs);
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
    check_read_only(pp, "/r/scripts/pre-commit", Placeholder::file);
    CHECK(entry(pp, "/r/scripts/pre-commit").reason.find("target of symlink /r/.git/hooks/pre-commit") !=
          std::string::npos);
    check_read_only(pp, "/r/scripts/missing-yet", Placeholder::file);  // no command may create it
    check_read_only(pp, "/r/scripts/stop.sh", Placeholder::file);       // the agent's hooks too
    CHECK(!listed(pp, "/r/scripts/other.sh"));
    CHECK(!listed(pp, "/r/.git/hooks/post-merge"));
    CHECK(!listed(pp, "/r/.git/hooks/pre-commit.sample"));
}

TEST_CASE("protected: a stow-managed ~/.bashrc protects its target") {
    MemoryFs fs;
    fs.dir("/r").file("/home/u/dotfiles/bash/.bashrc", "alias ll='ls -l'\n");
    fs.symlink("/home/u/.bashrc", "dotfiles/bash/.bashrc");
    fs.dir("/home/u/dotfiles/config/fish");
    fs.symlink("/home/u/.config", "dotfiles/config");  // every name below ~/.config leads there
    const auto pp = compute(fs);
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));

    check_read_only(pp, "/home/u/.bashrc", Placeholder::file);
    check_read_only(pp, "/home/u/dotfiles/bash/.bashrc", Placeholder::file);
    CHECK(entry(pp, "/home/u/dotfiles/bash/.bashrc").reason.find("target of symlink /home/u/.bashrc") !=
          std::string::npos);
    check_read_only(pp, "/home/u/.config/fish", Placeholder::directory);
    check_read_only(pp, "/home/u/dotfiles/config/fish", Placeholder::directory);
    check_read_only(pp, "/home/u/dotfiles/config/git", Placeholder::directory);  // missing, still guarded there
    CHECK(entry(pp, "/home/u/dotfiles/config/fish").reason.find("leads through a symlink") != std::string::npos);
    // A dangling link: the place it would create is guarded.
    MemoryFs dangling;
    dangling.dir("/r").dir("/home/u").symlink("/home/u/.zshrc", "/dots/zshrc");
    const auto pd = compute(dangling);
    check_read_only(pd, "/dots/zshrc", Placeholder::file);
}

TEST_CASE("protected: agent directories of the root and every directory above it") {
    MemoryFs fs;
    fs.dir("/work/team/r").dir("/home/u");
    fs.file("/work/.claude/settings.json", "{}").dir("/work/.claude/hooks");
    fs.dir("/work/team/r/.claude").file("/work/team/r/.claude/settings.local.json", "{}");
    fs.dir("/work/team/r/.cogitator/trash");
    fs.dir("/work/team/.cogitator");
    const auto pp = compute(fs, "/work/team/r");
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));

    // Present: pinned, every entry listed, present or not.
    for (const char* dir : {"/work/.claude", "/work/team/r/.claude", "/work/team/.cogitator"}) {
        check_pin(pp, dir);
        for (const auto& e : sbx::protected_names::kAgentEntries)
            check_read_only(pp, std::string(dir) + "/" + std::string(e.name), e.placeholder);
    }
    check_read_only(pp, "/work/.claude/settings.json", Placeholder::file);
    check_read_only(pp, "/work/.claude/hooks", Placeholder::directory);
    // Missing: covered whole by an empty read-only directory, entries not listed.
    for (const char* dir : {"/work/team/.claude", "/work/.cogitator", "/.claude", "/.cogitator"}) {
        check_read_only(pp, dir, Placeholder::directory);
        CHECK(!listed(pp, std::string(dir) + "/settings.json"));
    }
    // The root's .cogitator: whole, never pinned, its insides not listed.
    check_read_only(pp, "/work/team/r/.cogitator", Placeholder::directory);
    CHECK(!listed(pp, "/work/team/r/.cogitator/settings.json"));
    CHECK(!listed(pp, "/work/team/r/.cogitator/trash"));
}

TEST_CASE("protected: a symlinked .claude pins the link and its target, entries where it leads") {
    MemoryFs fs;
    fs.dir("/r").dir("/home/u").dir("/dots/claude").file("/dots/claude/settings.json", "{}");
    fs.symlink("/r/.claude", "/dots/claude");
    fs.symlink("/r/.gone", "/nowhere");
    fs.symlink("/r/../.claude", "/r/.gone");  // /.claude: a dangling chain
    const auto pp = compute(fs);
    check_pin(pp, "/r/.claude");
    check_pin(pp, "/dots/claude");
    check_read_only(pp, "/dots/claude/settings.json", Placeholder::file);
    check_read_only(pp, "/dots/claude/hooks", Placeholder::directory);
    CHECK(!listed(pp, "/r/.claude/settings.json"));
    // Dangling: no directory to pin; the link and where it ends are covered.
    check_read_only(pp, "/.claude", Placeholder::directory);
    check_read_only(pp, "/nowhere", Placeholder::directory);
}

TEST_CASE("protected: the user's own agent files are protected whole") {
    MemoryFs fs;
    fs.dir("/home/u/proj").file("/home/u/.claude/settings.json", "{}").dir("/home/u/.claude/projects");
    fs.file("/home/u/.claude.json", "{}").dir("/home/u/.config/git");
    const auto pp = compute(fs, "/home/u/proj");
    CHECK(pp.warnings.empty());
    // ~/.claude is also an ancestor's agent directory; the whole-directory rule wins.
    check_read_only(pp, "/home/u/.claude", Placeholder::directory);
    CHECK(entry(pp, "/home/u/.claude").reason.find("the user's") != std::string::npos);
    CHECK(!listed(pp, "/home/u/.claude/settings.json"));  // covered by the directory
    check_read_only(pp, "/home/u/.cogitator", Placeholder::directory);
    check_read_only(pp, "/home/u/.claude.json", Placeholder::file);
    check_read_only(pp, "/home/u/.config/git", Placeholder::directory);
    check_read_only(pp, "/home/u/.config/fish", Placeholder::directory);
    check_read_only(pp, "/home/u/.gitconfig", Placeholder::file);
    check_read_only(pp, "/home/u/.zshenv", Placeholder::file);
    // The root-only names are not home's.
    CHECK(!listed(pp, "/home/u/.mcp.json"));
    CHECK(!listed(pp, "/home/u/HEAD"));
}

TEST_CASE("protected: a path named by two rules is listed once, the stronger guard kept") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/home/u/.git");  // the home directory is a repository and the root
    fs.dir("/home/u/.claude/hooks").dir("/home/u/.cogitator");
    const auto pp = compute(fs, "/home/u", "/home/u");
    CHECK(pp.warnings.empty());
    // Each start-up file from the root's table and home's, once (check_shape counts).
    check_read_only(pp, "/home/u/.bashrc", Placeholder::file);
    // .claude: pinned as the root's agent directory, read-only as home's: read-only wins.
    check_read_only(pp, "/home/u/.claude", Placeholder::directory);
    check_read_only(pp, "/home/u/.cogitator", Placeholder::directory);
    check_pin(pp, "/home/u/.git");
    check_git_dir(pp, "/home/u/.git");
    std::size_t bashrc = 0;
    for (const auto& p : pp.paths) bashrc += p.path == "/home/u/.bashrc" ? 1 : 0;
    CHECK(bashrc == 1);

    // A pin and a read-only rule on one path: read-only wins, whichever comes first.
    // Here .git/hooks leads to the root's .claude, which is pinned as an agent directory.
    MemoryFs up;
    up.file("/r/.git/HEAD", "ref: refs/heads/main\n").file("/r/.git/config").dir("/r/.claude/skills").dir("/home/u");
    up.symlink("/r/.git/hooks", "../.claude");
    up.symlink("/r/.git/config.worktree", "../.gitconfig");
    const auto pu = compute(up);
    check_pin(pu, "/r/.git");
    check_read_only(pu, "/r/.claude", Placeholder::directory);
    CHECK(entry(pu, "/r/.claude").reason.find("target of symlink /r/.git/hooks") != std::string::npos);
    CHECK(!listed(pu, "/r/.claude/skills"));  // covered by the read-only directory now
    // The root's .gitconfig is also where config.worktree leads.
    check_read_only(pu, "/r/.gitconfig", Placeholder::file);

    // Two symlinks to the same target: one entry for it.
    MemoryFs two;
    two.dir("/r").file("/dots/rc").symlink("/r/.bashrc", "/dots/rc").symlink("/home/u/.bashrc", "/dots/rc");
    const auto pt = compute(two);
    check_read_only(pt, "/dots/rc", Placeholder::file);
}

TEST_CASE("protected: a .git file that does not name a git directory is an error naming it") {
    struct Case {
        const char* text;
        const char* says;
    };
    const Case cases[] = {
        {"", "gitdir: PATH"},
        {"\n", "gitdir: PATH"},
        {"gitdir:/x\n", "gitdir: PATH"},
        {"GITDIR: /x\n", "gitdir: PATH"},
        {"ref: refs/heads/main\n", "gitdir: PATH"},
        {"gitdir: \n", "names no git directory"},
        {"gitdir: /a\ngitdir: /b\n", "one line"},
        {"gitdir: /a\tb\n", "control"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.text);
        MemoryFs fs;
        fs.dir("/home/u").file("/r/.git", c.text);
        auto pp = sbx::protected_paths("/r", "/home/u", fs);
        REQUIRE(!pp.has_value());
        CHECK(pp.error().code == sbx::Errc::invalid_settings);
        CHECK(pp.error().file == "/r/.git");
        CHECK(pp.error().message.find(c.says) != std::string::npos);
    }
    // Too large to be one: an error with the cause.
    MemoryFs big;
    big.dir("/home/u").file("/r/.git", "gitdir: /" + std::string(5000, 'x'));
    auto pb = sbx::protected_paths("/r", "/home/u", big);
    REQUIRE(!pb.has_value());
    CHECK(pb.error().file == "/r/.git");
    REQUIRE(pb.error().cause != nullptr);
    // A commondir that names nothing, too.
    MemoryFs cd;
    cd.dir("/home/u").dir("/r/.git/hooks").file("/r/.git/HEAD").file("/r/.git/commondir", "\n");
    auto pc = sbx::protected_paths("/r", "/home/u", cd);
    REQUIRE(!pc.has_value());
    CHECK(pc.error().file == "/r/.git/commondir");
    // An ancestor's broken .git file breaks git in the root as well.
    MemoryFs up;
    up.dir("/home/u").dir("/a/r").file("/a/.git", "nonsense");
    auto pu = sbx::protected_paths("/a/r", "/home/u", up);
    REQUIRE(!pu.has_value());
    CHECK(pu.error().file == "/a/.git");
}

TEST_CASE("protected: a symlink loop is a warning naming the path, not a failure") {
    MemoryFs fs;
    fs.dir("/home/u").dir("/r");
    fs.symlink("/r/.bashrc", "/r/.bashrc");
    fs.symlink("/r/.claude", "/r/.claude-b").symlink("/r/.claude-b", "/r/.claude");
    git_dir_in_memory(fs, "/r/.git");
    fs.symlink("/r/.git/hooks/pre-commit", "pre-commit");
    fs.symlink("/r/.git/hooks-loop", "hooks-loop");
    const auto pp = compute(fs);
    CHECK(warned_about(pp, "/r/.bashrc"));
    CHECK(warned_about(pp, "/r/.claude"));
    CHECK(warned_about(pp, "/r/.git/hooks/pre-commit"));
    CHECK(warnings_text(pp).find("symbolic links") != std::string::npos);
    // The names themselves are still guarded.
    check_read_only(pp, "/r/.bashrc", Placeholder::file);
    check_read_only(pp, "/r/.claude", Placeholder::directory);
    check_git_dir(pp, "/r/.git");
    // A .git that loops: no git directory to follow; guarded, with a warning.
    MemoryFs g;
    g.dir("/home/u").dir("/r").symlink("/r/.git", ".git");
    const auto pg = compute(g);
    CHECK(warned_about(pg, "/r/.git"));
    check_read_only(pg, "/r/.git", Placeholder::directory);
}

TEST_CASE("protected: an unreadable directory is a warning naming it") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/r/.git");
    git_dir_in_memory(fs, "/r/.git/modules/a");
    fs.dir("/home/u").unreadable("/r/.git/modules");
    const auto pp = compute(fs);
    CHECK(warned_about(pp, "/r/.git/modules/a"));
    check_git_dir(pp, "/r/.git");
    CHECK(!listed(pp, "/r/.git/modules/a/hooks"));

    // A listing that fails: a dangling worktrees link is no directory, so nothing is
    // listed, and a directory the view cannot list warns.
    class NoListFs final : public sbx::FsView {
    public:
        explicit NoListFs(const MemoryFs& m) : m_(m) {}
        sbx::expected<std::optional<sbx::FileStat>> lstat(const std::string& p) const override { return m_.lstat(p); }
        sbx::expected<std::string> readlink(const std::string& p) const override { return m_.readlink(p); }
        sbx::expected<std::vector<std::string>> list(const std::string& p) const override {
            return sbx::fail(sbx::Error(sbx::Errc::io_error, "permission denied").in_file(p));
        }
        sbx::expected<std::optional<std::string>> read_text(const std::string& p, std::size_t n) const override {
            return m_.read_text(p, n);
        }

    private:
        const MemoryFs& m_;
    };
    MemoryFs m;
    git_dir_in_memory(m, "/r/.git");
    m.dir("/r/.git/worktrees/wt").dir("/home/u");
    NoListFs nl(m);
    const auto pn = compute(nl);
    CHECK(warned_about(pn, "/r/.git/worktrees"));
    CHECK(warned_about(pn, "/r/.git/hooks"));  // its symlinks could not be looked for
    check_git_dir(pn, "/r/.git");
}

TEST_CASE("protected: walks stop past a thousand entries, with a warning") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/r/.git");
    fs.dir("/home/u");
    for (int i = 0; i < 1005; ++i) {
        char name[16];
        std::snprintf(name, sizeof name, "wt%04d", i);
        fs.file("/r/.git/worktrees/" + std::string(name) + "/commondir", "../..\n");
    }
    const auto pp = compute(fs);
    CHECK(warned_about(pp, "/r/.git/worktrees"));
    check_read_only(pp, "/r/.git/worktrees/wt0000/commondir", Placeholder::commondir);
    check_read_only(pp, "/r/.git/worktrees/wt0999/commondir", Placeholder::commondir);
    CHECK(!listed(pp, "/r/.git/worktrees/wt1000/commondir"));
}

TEST_CASE("protected: a root inside a repository guards its own .git and the repository's git directory") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/a/.git");
    fs.dir("/a/b/r").dir("/home/u");
    const auto pp = compute(fs, "/a/b/r");
    check_read_only(pp, "/a/b/r/.git", Placeholder::directory);
    check_pin(pp, "/a/.git");
    check_git_dir(pp, "/a/.git");
    CHECK(!listed(pp, "/a/b/.git"));  // only the root's missing .git gets a placeholder

    // The repository above may be a linked worktree: its .git file is followed too.
    MemoryFs wt;
    git_dir_in_memory(wt, "/m/.git");
    wt.file("/m/.git/worktrees/x/commondir", "../..\n");
    wt.file("/a/.git", "gitdir: /m/.git/worktrees/x\n").dir("/a/r").dir("/home/u");
    const auto pw = compute(wt, "/a/r");
    check_read_only(pw, "/a/.git", Placeholder::file);
    check_git_dir(pw, "/m/.git");
    check_read_only(pw, "/a/r/.git", Placeholder::directory);

    // Only the nearest repository: git's discovery stops there.
    MemoryFs two;
    git_dir_in_memory(two, "/x/.git");
    git_dir_in_memory(two, "/x/y/.git");
    two.dir("/x/y/r").dir("/home/u");
    const auto p2 = compute(two, "/x/y/r");
    check_git_dir(p2, "/x/y/.git");
    CHECK(!listed(p2, "/x/.git/hooks"));
}

TEST_CASE("protected: a bare repository as the root guards its hooks and config") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/r");
    fs.dir("/home/u");
    const auto pp = compute(fs);
    check_read_only(pp, "/r/.git", Placeholder::directory);
    check_read_only(pp, "/r/HEAD", Placeholder::file);
    check_git_dir(pp, "/r");
}

TEST_CASE("protected: a .git file naming a missing git directory guards the place") {
    MemoryFs fs;
    fs.dir("/home/u").file("/r/.git", "gitdir: .real-git\n");
    const auto pp = compute(fs);
    CHECK(warned_about(pp, "/r/.real-git"));
    check_read_only(pp, "/r/.real-git", Placeholder::directory);
    check_read_only(pp, "/r/.git", Placeholder::file);
}

TEST_CASE("protected: the root and home must be absolute, normalised and symlink-free") {
    MemoryFs fs;
    fs.dir("/real/r").dir("/home/u").symlink("/link", "/real").file("/afile");
    for (auto args : {std::pair{"r", "/home/u"}, std::pair{"/real/r/", "/home/u"},
                              std::pair{"/real/./r", "/home/u"}, std::pair{"/link/r", "/home/u"},
                              std::pair{"/real/r", "~"}, std::pair{"/real/r", "/link"}, std::pair{"/afile", "/home/u"},
                              std::pair{"/missing", "/home/u"}, std::pair{"", "/home/u"}}) {
        const std::string root = args.first, home = args.second;
        CAPTURE(root);
        CAPTURE(home);
        auto pp = sbx::protected_paths(root, home, fs);
        REQUIRE(!pp.has_value());
        CHECK(pp.error().code == sbx::Errc::invalid_argument);
    }
    // A home directory that does not exist is fine: its names are still guarded.
    const auto pp = compute(fs, "/real/r", "/nonexistent");
    check_read_only(pp, "/nonexistent/.claude", Placeholder::directory);
}

TEST_CASE("protected: on disk, a symlinked hooks directory, a stow dotfile and a loop") {
    TempDir t;
    t.mkdir("home/dotfiles");
    t.mkdir("root/.git/objects");
    t.mkdir("root/.claude/skills");
    t.mkdir("shared-hooks");
    t.write("root/.git/HEAD", "ref: refs/heads/main\n");
    t.write("root/.git/config", "[core]\n");
    t.write("home/dotfiles/bashrc", "export A=1\n");
    t.symlink("root/.git/hooks", "../../shared-hooks");
    t.symlink("home/.bashrc", "dotfiles/bashrc");
    t.symlink("root/.profile", ".profile");

    sbx::DiskFs fs;
    const auto pp = compute(fs, t.at("root"), t.at("home"));
    check_pin(pp, t.at("root/.git"));
    check_read_only(pp, t.at("root/.git/hooks"), Placeholder::directory);
    check_read_only(pp, t.at("shared-hooks"), Placeholder::directory);
    check_read_only(pp, t.at("root/.git/config"), Placeholder::file);
    check_read_only(pp, t.at("root/.git/commondir"), Placeholder::commondir);
    check_read_only(pp, t.at("home/dotfiles/bashrc"), Placeholder::file);
    check_pin(pp, t.at("root/.claude"));
    check_read_only(pp, t.at("root/.claude/skills"), Placeholder::directory);
    check_read_only(pp, t.at("root/.claude/settings.json"), Placeholder::file);
    CHECK(warned_about(pp, t.at("root/.profile")));
    check_read_only(pp, t.at("root/.profile"), Placeholder::file);
}

TEST_CASE("protected: on disk, git init, git worktree add and a submodule") {
    if (!have_git()) {
        MESSAGE("skipped: git is not installed, so no real repository can be made");
        return;
    }
    TempDir t;
    t.mkdir("home");
    t.mkdir("main");
    REQUIRE(git(t, t.at("main"), "init -q") == 0);
    REQUIRE(git(t, t.at("main"), "commit -q --allow-empty -m init") == 0);
    REQUIRE(git(t, t.at("main"), "worktree add -q ../wt") == 0);
    sbx::DiskFs fs;

    SUBCASE("the linked worktree") {
        const auto pp = compute(fs, t.at("wt"), t.at("home"));
        CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
        check_read_only(pp, t.at("wt/.git"), Placeholder::file);
        check_git_dir(pp, t.at("main/.git"));
        // git wrote commondir there; it is protected (and was not created by a command).
        check_read_only(pp, t.at("main/.git/worktrees/wt/commondir"), Placeholder::commondir);
        check_read_only(pp, t.at("main/.git/worktrees/wt/config.worktree"), Placeholder::file);
        // The main git directory, which git writes for a commit in the worktree.
        CHECK(entry(pp, t.at("main/.git")).guard == Guard::git_writable);
        CHECK(pp.git_exclude == t.at("main/.git/info/exclude"));
    }
    SUBCASE("the main repository") {
        const auto pp = compute(fs, t.at("main"), t.at("home"));
        CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
        check_pin(pp, t.at("main/.git"));
        check_git_dir(pp, t.at("main/.git"));
        check_read_only(pp, t.at("main/.git/worktrees/wt/commondir"), Placeholder::commondir);
        CHECK(!listed(pp, t.at("wt/.git")));
    }
    SUBCASE("a submodule checkout") {
        t.mkdir("sub");
        REQUIRE(git(t, t.at("sub"), "init -q") == 0);
        REQUIRE(git(t, t.at("sub"), "commit -q --allow-empty -m sub") == 0);
        REQUIRE(git(t, t.at("main"), "submodule add -q ../sub sub") == 0);
        const auto pp = compute(fs, t.at("main/sub"), t.at("home"));
        CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
        check_read_only(pp, t.at("main/sub/.git"), Placeholder::file);
        check_git_dir(pp, t.at("main/.git/modules/sub"));
        CHECK(!listed(pp, t.at("main/.git/hooks")));
        // From the superproject, the submodule's git directory is found under modules/.
        const auto pm = compute(fs, t.at("main"), t.at("home"));
        check_git_dir(pm, t.at("main/.git/modules/sub"));
        check_read_only(pm, t.at("main/.gitmodules"), Placeholder::file);
    }
}

TEST_CASE("protected: a core.hooksPath in the working tree is protected, with the hooks it links to") {
    MemoryFs fs = repository_with_config("[core]\n\trepositoryformatversion = 0\n\thooksPath = tools/hooks\n");
    fs.file("/r/tools/hooks/h", "#!/bin/sh\n").file("/r/scripts/lint.sh", "#!/bin/sh\n");
    fs.symlink("/r/tools/hooks/pre-commit", "../../scripts/lint.sh");
    const auto pp = compute(fs);
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
    check_read_only(pp, "/r/tools/hooks", Placeholder::directory);
    CHECK(entry(pp, "/r/tools/hooks").reason == "git runs hooks from here (core.hooksPath in /r/.git/config)");
    // As for .git/hooks: a hook that is a symlink protects its script.
    check_read_only(pp, "/r/scripts/lint.sh", Placeholder::file);
    CHECK(entry(pp, "/r/scripts/lint.sh").reason.find("target of symlink /r/tools/hooks/pre-commit") != std::string::npos);
    CHECK(!listed(pp, "/r/tools"));
    CHECK(!listed(pp, "/r/tools/hooks/h"));  // inside the read-only directory
    check_git_dir(pp, "/r/.git");

    // Not there yet: still guarded, so no command can make it.
    MemoryFs fresh = repository_with_config("[core]\n\thooksPath = tools/hooks\n");
    check_read_only(compute(fresh), "/r/tools/hooks", Placeholder::directory);

    // A hooks directory that is a symlink protects where it leads, too.
    MemoryFs linked = repository_with_config("[core]\n\thooksPath = .githooks\n");
    linked.dir("/shared/hooks").symlink("/r/.githooks", "/shared/hooks");
    const auto pl = compute(linked);
    check_read_only(pl, "/r/.githooks", Placeholder::directory);
    check_read_only(pl, "/shared/hooks", Placeholder::directory);
}

TEST_CASE("protected: the root's .husky is protected whole, its hooksPath and the scripts its hooks link to") {
    // husky 9: git runs .husky/_/pre-commit, which runs the user's .husky/pre-commit.
    MemoryFs fs = repository_with_config("[core]\n\thooksPath = .husky/_\n");
    fs.file("/r/.husky/_/h", "#!/usr/bin/env sh\n").file("/r/scripts/lint.sh", "#!/bin/sh\n");
    fs.file("/r/scripts/check.sh", "#!/bin/sh\n");
    fs.symlink("/r/.husky/_/pre-push", "../../scripts/lint.sh");
    fs.symlink("/r/.husky/pre-commit", "../scripts/check.sh");
    const auto pp = compute(fs);
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
    check_read_only(pp, "/r/.husky", Placeholder::directory);
    CHECK(entry(pp, "/r/.husky").reason == "git hooks husky installs, run on the next commit");
    CHECK(!listed(pp, "/r/.husky/_"));  // the hooks path lies inside the read-only directory
    CHECK(!listed(pp, "/r/.husky/_/h"));
    // What its hooks link to lies outside it: protected, from either rule.
    check_read_only(pp, "/r/scripts/lint.sh", Placeholder::file);
    CHECK(entry(pp, "/r/scripts/lint.sh").reason.find("target of symlink /r/.husky/_/pre-push") != std::string::npos);
    check_read_only(pp, "/r/scripts/check.sh", Placeholder::file);
    CHECK(entry(pp, "/r/scripts/check.sh").reason.find("target of symlink /r/.husky/pre-commit") != std::string::npos);
    check_git_dir(pp, "/r/.git");

    // Not there yet (husky not installed): the placeholder for .husky covers its hooks path.
    const auto fresh = compute(repository_with_config("[core]\n\thooksPath = .husky/_\n"));
    check_read_only(fresh, "/r/.husky", Placeholder::directory);
    CHECK(!listed(fresh, "/r/.husky/_"));
}

TEST_CASE("protected: core.hooksPath is read as git reads its config syntax") {
    struct Case {
        const char* config;
        const char* protects;
    };
    const Case cases[] = {
        {"[core]\n\thooksPath = \"my hooks\"   # the team's\n", "/r/my hooks"},
        {"[core]\n\thooksPath = \"a\\\"b\\\\c\"\n", "/r/a\"b\\c"},
        {"[core]\n\thooksPath = a\" #not; a comment\"\n", "/r/a #not; a comment"},
        {"[core]\n\thooksPath = two  words\t\n", "/r/two  words"},
        {"[core]\n\thooksPath = ~/hooks\n", "/home/u/hooks"},
        {"[core]\n\thooksPath = /opt/team/hooks/\n", "/opt/team/hooks"},
        {"[core]\n\thooksPath = ../beside\n", "/beside"},
        {"[Core]\n\tHooksPath = .githooks\n", "/r/.githooks"},
        {"[CORE]\nHOOKSPATH=.githooks\n", "/r/.githooks"},
        {"# made by hand\n\n; really\n[core] # core things\n\n\t\thooksPath = a ; why\n\n", "/r/a"},
        {"[core] hooksPath = same-line\n", "/r/same-line"},
        {"[core]\n\thooksPath = long\\\n-name\n", "/r/long-name"},
        {"[core]\r\n\thooksPath = crlf\r\n", "/r/crlf"},
        {"[core]\n\thooksPath = no-newline", "/r/no-newline"},
        {"\xEF\xBB\xBF[core]\n\thooksPath = after-bom\n", "/r/after-bom"},
        {"[user]\n\tname = x\n[remote \"origin\"]\n\turl = u\n[core]\n\tbare = false\n\thooksPath = later\n", "/r/later"},
        // Every value is protected, not only the last (the one git uses).
        {"[core]\n\thooksPath = first\n[core]\n\thooksPath = second\n", "/r/first"},
        {"[core]\n\thooksPath = first\n[core]\n\thooksPath = second\n", "/r/second"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.config);
        const auto pp = compute(repository_with_config(c.config));
        CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
        check_read_only(pp, c.protects, Placeholder::directory);
    }

    // Not core.hooksPath: nothing protected beyond the fixed names, and no warning.
    const char* not_hooks[] = {
        "[core \"x\"]\n\thooksPath = nope\n",
        "[core.x]\n\thooksPath = nope\n",
        "[hooks]\n\tpath = nope\n",
        "[core]\n\thooksPathX = nope\n",
        "hooksPath = nope\n",
        "[core]\n\t# hooksPath = nope\n",
        "[core]\n\thooksPath\n",  // a bare key is a boolean
        "[core]\n\thooksPath =\n",
        "[include \"x\"]\n\tpath = nope\n",
        "[includeIf]\n\tpath = nope\n",
    };
    MemoryFs plain = repository_with_config("[core]\n");
    const auto base = compute(plain);
    for (const char* config : not_hooks) {
        CAPTURE(config);
        const auto pp = compute(repository_with_config(config));
        CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
        CHECK(pp.paths.size() == base.paths.size());
        CHECK(!listed(pp, "/r/nope"));
    }
}

TEST_CASE("protected: a git config line git cannot read is a warning naming the file and line") {
    struct Case {
        const char* config;
        const char* says;
    };
    const Case cases[] = {
        {"[core]\n\thooksPath = tools/hooks\n\t= oops\n", "line 3:"},
        {"[core]\n\thooksPath = tools/hooks\n[core\n", "line 3: a section header"},
        {"[core]\n\thooksPath = tools/hooks\n[core \"x]\n", "line 3: a section header"},
        {"[core]\n\thooksPath = tools/hooks\n[]\n", "line 3: a section header"},
        {"[core]\n\thooksPath = tools/hooks\n\tkey value\n", "line 3: expected '='"},
        {"[core]\n\thooksPath = tools/hooks\n\teditor = \"vim\n", "line 3: a quoted value"},
        {"[core]\n\thooksPath = tools/hooks\n\teditor = a\\qb\n", "line 3: an unknown escape '\\q'"},
        {"[core]\n\tpager = a\\\n  b\n\thooksPath = tools/hooks\n\t!\n", "line 5:"},  // a continued line counts
        {"[core]\n\thooksPath = tools/hooks\n\thooksPath = ~other/hooks\n", "line 3: core.hooksPath '~other/hooks'"},
        {"[core]\n\thooksPath = tools/hooks\n\thooksPath = \"a\\nb\"\n", "line 3: core.hooksPath holds a control character"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.config);
        auto pp = sbx::protected_paths("/r", "/home/u", repository_with_config(c.config));
        REQUIRE_MESSAGE(pp.has_value(), (pp ? std::string() : sbx::to_string(pp.error())));
        check_shape(*pp, repository_with_config(c.config));
        CHECK_MESSAGE(warned(*pp, "/r/.git/config", c.says), warnings_text(*pp));
        // What could be read is still followed.
        check_read_only(*pp, "/r/tools/hooks", Placeholder::directory);
        check_git_dir(*pp, "/r/.git");
    }
    // Keys below a header that cannot be read are not followed (git refuses the file anyway).
    const auto pb = compute(repository_with_config("[core\n\thooksPath = after-bad-header\n"));
    CHECK(warned(pb, "/r/.git/config", "line 1:"));
    CHECK(!listed(pb, "/r/after-bad-header"));
}

TEST_CASE("protected: a git config that cannot be read is a warning naming it") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/r/.git");
    fs.dir("/r/.git/config.worktree").dir("/home/u");  // not a regular file
    fs.file("/home/u/.gitconfig", std::string(sbx::protected_names::kMaxConfigFileBytes + 1, '#'));
    const auto pp = compute(fs);
    CHECK(warned(pp, "/r/.git/config.worktree", "not a regular file"));
    CHECK(warned(pp, "/home/u/.gitconfig", "too large"));
    check_git_dir(pp, "/r/.git");
    check_read_only(pp, "/home/u/.gitconfig", Placeholder::file);
}

TEST_CASE("protected: included git config files are protected and followed") {
    MemoryFs fs = repository_with_config(
        "[core]\n\tbare = false\n[include]\n\tpath = ../shared.gitconfig\n"
        "[includeIf \"onbranch:main\"]\n\tpath = ~/branch.gitconfig\n"
        "[IncludeIf \"gitdir/i:/R/\"]\n\tPath = /etc/team.gitconfig\n");
    fs.file("/r/shared.gitconfig", "[core]\n\thooksPath = from-shared\n[include]\n\tpath = more/deeper.gitconfig\n");
    fs.file("/r/more/deeper.gitconfig", "[core]\n\thooksPath = ~/deeper-hooks\n");
    const auto pp = compute(fs);
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
    check_read_only(pp, "/r/shared.gitconfig", Placeholder::file);
    CHECK(entry(pp, "/r/shared.gitconfig").reason == "git reads configuration from here (include in /r/.git/config)");
    // Every include is protected, whatever its condition, and whether or not it exists yet.
    check_read_only(pp, "/home/u/branch.gitconfig", Placeholder::file);
    check_read_only(pp, "/etc/team.gitconfig", Placeholder::file);
    // A hooks path in an included file: relative to the working tree, as in the including one.
    check_read_only(pp, "/r/from-shared", Placeholder::directory);
    CHECK(entry(pp, "/r/from-shared").reason.find("core.hooksPath in /r/shared.gitconfig") != std::string::npos);
    // An include in an included file: relative to that file's directory.
    check_read_only(pp, "/r/more/deeper.gitconfig", Placeholder::file);
    check_read_only(pp, "/home/u/deeper-hooks", Placeholder::directory);

    // Through a symlinked directory, `..` is taken where the link leads, as the kernel does.
    MemoryFs via = repository_with_config("[include]\n\tpath = conf/../up.gitconfig\n");
    via.dir("/dots/git").symlink("/r/.git/conf", "/dots/git");
    const auto pv = compute(via);
    check_read_only(pv, "/dots/up.gitconfig", Placeholder::file);
    CHECK(!listed(pv, "/r/.git/up.gitconfig"));

    // An included file that is a symlink: the link and the file it leads to.
    MemoryFs link = repository_with_config("[include]\n\tpath = ~/.gitconfig.local\n");
    link.file("/home/u/dots/local", "[core]\n\thooksPath = /opt/hooks\n").symlink("/home/u/.gitconfig.local", "dots/local");
    const auto pk = compute(link);
    check_read_only(pk, "/home/u/.gitconfig.local", Placeholder::file);
    check_read_only(pk, "/home/u/dots/local", Placeholder::file);
    check_read_only(pk, "/opt/hooks", Placeholder::directory);
}

TEST_CASE("protected: include loops end, and includes stop at git's depth") {
    MemoryFs fs = repository_with_config("[include]\n\tpath = ../a.gitconfig\n");
    fs.file("/r/a.gitconfig", "[include]\n\tpath = b.gitconfig\n\tpath = a.gitconfig\n[core]\n\thooksPath = from-a\n");
    fs.file("/r/b.gitconfig", "[include]\n\tpath = .git/config\n\tpath = a.gitconfig\n[core]\n\thooksPath = from-b\n");
    const auto pp = compute(fs);
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
    check_read_only(pp, "/r/a.gitconfig", Placeholder::file);
    check_read_only(pp, "/r/b.gitconfig", Placeholder::file);
    check_read_only(pp, "/r/from-a", Placeholder::directory);
    check_read_only(pp, "/r/from-b", Placeholder::directory);
    check_read_only(pp, "/r/.git/config", Placeholder::file);

    // A chain: git reads ten levels of includes and refuses to run past them.
    MemoryFs chain = repository_with_config("[include]\n\tpath = /c/1\n");
    for (int i = 1; i <= 12; ++i)
        chain.file("/c/" + std::to_string(i), "[core]\n\thooksPath = /h/" + std::to_string(i) + "\n[include]\n\tpath = " +
                                                  std::to_string(i + 1) + "\n");
    const auto pc = compute(chain);
    check_read_only(pc, "/h/10", Placeholder::directory);
    check_read_only(pc, "/c/11", Placeholder::file);  // named, so protected; not read
    CHECK(warned(pc, "/c/11", "levels deep"));
    CHECK(!listed(pc, "/h/11"));
    CHECK(!listed(pc, "/c/12"));
}

TEST_CASE("protected: the user's own git config is followed in the root's working tree") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/r/.git");
    fs.file("/home/u/.gitconfig", "[core]\n\thooksPath = .githooks\n[include]\n\tpath = .gitconfig.d/extra\n");
    fs.file("/home/u/.config/git/config", "[includeIf \"gitdir:~/work/\"]\n\tpath = ~/work.gitconfig\n");
    const auto pp = compute(fs);
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
    check_read_only(pp, "/r/.githooks", Placeholder::directory);
    CHECK(entry(pp, "/r/.githooks").reason.find("core.hooksPath in /home/u/.gitconfig") != std::string::npos);
    check_read_only(pp, "/home/u/.gitconfig.d/extra", Placeholder::file);
    check_read_only(pp, "/home/u/work.gitconfig", Placeholder::file);

    // No repository at all: a relative hooks path is taken in the root.
    MemoryFs none;
    none.dir("/r").file("/home/u/.gitconfig", "[core]\n\thooksPath = .githooks\n");
    check_read_only(compute(none), "/r/.githooks", Placeholder::directory);

    // A hooks path naming a pinned agent directory: read-only wins, and covers its entries.
    MemoryFs agent = repository_with_config("[core]\n\thooksPath = .claude\n");
    agent.dir("/r/.claude");
    const auto pa = compute(agent);
    check_read_only(pa, "/r/.claude", Placeholder::directory);
    CHECK(!listed(pa, "/r/.claude/settings.json"));
}

TEST_CASE("protected: hooks paths in a linked worktree, the main repository and a submodule") {
    MemoryFs fs;
    git_dir_in_memory(fs, "/src/main/.git");
    fs.file("/src/main/.git/config", "[core]\n\thooksPath = tools/hooks\n");
    fs.file("/src/main/.git/worktrees/wt/commondir", "../..\n").file("/src/main/.git/worktrees/wt/gitdir", "/src/wt/.git\n");
    fs.file("/src/main/.git/worktrees/wt/config.worktree", "[core]\n\thooksPath = wt-hooks\n");
    fs.file("/src/main/.git/worktrees/other/commondir", "../..\n");
    fs.file("/src/main/.git/worktrees/other/gitdir", "../../../../other/.git\n");  // relative, as newer git writes it
    fs.file("/src/main/.git/worktrees/lost/commondir", "../..\n");
    fs.file("/src/main/.git/worktrees/lost/config.worktree", "[core]\n\thooksPath = lost-hooks\n");
    fs.file("/src/wt/.git", "gitdir: /src/main/.git/worktrees/wt\n").dir("/home/u");
    const auto pp = compute(fs, "/src/wt");
    // The main config's hooks path: in this worktree, the main one and the other linked one.
    check_read_only(pp, "/src/wt/tools/hooks", Placeholder::directory);
    check_read_only(pp, "/src/main/tools/hooks", Placeholder::directory);
    check_read_only(pp, "/src/other/tools/hooks", Placeholder::directory);
    // This worktree's own config.worktree, in this worktree only.
    check_read_only(pp, "/src/wt/wt-hooks", Placeholder::directory);
    CHECK(!listed(pp, "/src/main/wt-hooks"));
    // A worktree without a gitdir file: its relative hooks path cannot be placed.
    CHECK(warned(pp, "/src/main/.git/worktrees/lost/config.worktree", "line 2: core.hooksPath 'lost-hooks' is relative"));
    CHECK(pp.warnings.size() == 1);
    // Run in that worktree, it is known all the same: the root.
    fs.file("/src/lost/.git", "gitdir: /src/main/.git/worktrees/lost\n");
    const auto pl = compute(fs, "/src/lost");
    check_read_only(pl, "/src/lost/lost-hooks", Placeholder::directory);
    check_read_only(pl, "/src/lost/tools/hooks", Placeholder::directory);

    // A submodule's git directory: relative to the working tree core.worktree names.
    MemoryFs sub;
    git_dir_in_memory(sub, "/r/.git");
    git_dir_in_memory(sub, "/r/.git/modules/lib");
    sub.file("/r/.git/modules/lib/config", "[core]\n\tworktree = ../../../lib\n\thooksPath = tools/hooks\n");
    git_dir_in_memory(sub, "/r/.git/modules/bare");
    sub.file("/r/.git/modules/bare/config", "[core]\n\thooksPath = bare-hooks\n");
    sub.file("/r/lib/.git", "gitdir: ../.git/modules/lib\n").dir("/home/u");
    for (const char* root : {"/r", "/r/lib"}) {
        CAPTURE(root);
        const auto ps = compute(sub, root);
        CHECK_MESSAGE(ps.warnings.empty(), warnings_text(ps));
        check_read_only(ps, "/r/lib/tools/hooks", Placeholder::directory);
        CHECK(!listed(ps, "/r/.git/modules/lib/tools/hooks"));
    }
    // Without core.worktree, a submodule's git directory stands for its working tree.
    check_read_only(compute(sub), "/r/.git/modules/bare/bare-hooks", Placeholder::directory);

    // A bare repository as the root: relative to the git directory.
    MemoryFs bare;
    git_dir_in_memory(bare, "/r");
    bare.file("/r/config", "[core]\n\tbare = true\n\thooksPath = hooks-elsewhere\n").dir("/home/u");
    check_read_only(compute(bare), "/r/hooks-elsewhere", Placeholder::directory);
}

TEST_CASE("protected: on disk, git's own core.hooksPath and include.path") {
    if (!have_git()) {
        MESSAGE("skipped: git is not installed, so no real repository can be made");
        return;
    }
    TempDir t;
    t.mkdir("home");
    t.mkdir("main");
    REQUIRE(git(t, t.at("main"), "init -q") == 0);
    REQUIRE(git(t, t.at("main"), "config core.hooksPath tools/hooks") == 0);
    // Git itself says where it runs hooks from: a directory in the working tree.
    const std::string hooks = git_output(t, t.at("main"), "rev-parse --path-format=absolute --git-path hooks");
    CHECK(hooks == t.at("main/tools/hooks"));
    t.mkdir("main/tools/hooks");
    t.mkdir("main/scripts");
    t.write("main/scripts/lint.sh", "#!/bin/sh\n");
    t.symlink("main/tools/hooks/pre-commit", "../../scripts/lint.sh");

    REQUIRE(git(t, t.at("main"), "config include.path ../extra.gitconfig") == 0);
    t.write("main/extra.gitconfig", "[core]\n\thooksPath = ~/global-hooks\n[includeIf \"gitdir:" + t.at("main") +
                                        "/\"]\n\tpath = ~/.more.gitconfig\n");
    // The included file's hooks path comes later, so git uses that one now.
    const std::string global = git_output(t, t.at("main"), "rev-parse --path-format=absolute --git-path hooks");
    CHECK(global == t.at("home/global-hooks"));

    sbx::DiskFs fs;
    const auto pp = compute(fs, t.at("main"), t.at("home"));
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
    check_read_only(pp, hooks, Placeholder::directory);
    check_read_only(pp, global, Placeholder::directory);
    check_read_only(pp, t.at("main/scripts/lint.sh"), Placeholder::file);
    check_read_only(pp, t.at("main/extra.gitconfig"), Placeholder::file);
    check_read_only(pp, t.at("home/.more.gitconfig"), Placeholder::file);
    check_pin(pp, t.at("main/.git"));
    check_git_dir(pp, t.at("main/.git"));
}
