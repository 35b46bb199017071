// find_project_root(): the project the current directory is in, over MemoryFs.
#include "sbx/settings/project_root.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

using sbx::MemoryFs;
using sbx::RootReason;

constexpr std::uint32_t kMe = 1000;
const std::vector<std::string> kHomes{"/home/ana"};

// A repository's `.git` directory, as git init leaves it (HEAD is what counts).
MemoryFs& repo(MemoryFs& fs, const std::string& dir) {
    return fs.dir(dir + "/.git/objects").dir(dir + "/.git/refs").file(dir + "/.git/HEAD", "ref: refs/heads/main\n");
}

sbx::ProjectRoot found(const MemoryFs& fs, const std::string& cwd, const std::vector<std::string>& homes = kHomes) {
    auto r = sbx::find_project_root(cwd, homes, kMe, fs);
    REQUIRE_MESSAGE(r.has_value(), sbx::to_string(r.error()));
    return *r;
}

sbx::Error refused(const MemoryFs& fs, const std::string& cwd) {
    auto r = sbx::find_project_root(cwd, kHomes, kMe, fs);
    REQUIRE_MESSAGE(!r.has_value(), "chose " << r->root);
    return r.error();
}

}  // namespace

TEST_CASE("project root: the top of the git work tree holding the current directory") {
    MemoryFs fs;
    repo(fs, "/home/ana/proj").dir("/home/ana/proj/src/lib");
    for (const std::string cwd : {"/home/ana/proj/src/lib", "/home/ana/proj/src", "/home/ana/proj"}) {
        auto r = found(fs, cwd);
        CHECK(r.root == "/home/ana/proj");
        CHECK(r.reason == RootReason::git_work_tree);
        CHECK(r.decided_by == "/home/ana/proj/.git");
        CHECK(sbx::root_why(r) == "the top of the git work tree holding the current directory (/home/ana/proj/.git)");
    }
}

TEST_CASE("project root: a .git file (a linked worktree, a submodule) marks the work tree") {
    MemoryFs fs;
    repo(fs, "/home/ana/main");
    fs.file("/home/ana/wt/.git", "gitdir: /home/ana/main/.git/worktrees/wt\n").dir("/home/ana/wt/src");
    auto r = found(fs, "/home/ana/wt/src");
    CHECK(r.root == "/home/ana/wt");
    CHECK(r.reason == RootReason::git_work_tree);
    CHECK(r.decided_by == "/home/ana/wt/.git");
}

TEST_CASE("project root: nested repositories, the nearest wins") {
    MemoryFs fs;
    repo(fs, "/home/ana/outer");
    repo(fs, "/home/ana/outer/vendor/inner");
    fs.dir("/home/ana/outer/vendor/inner/src");
    CHECK(found(fs, "/home/ana/outer/vendor/inner/src").root == "/home/ana/outer/vendor/inner");
    CHECK(found(fs, "/home/ana/outer/vendor").root == "/home/ana/outer");
}

TEST_CASE("project root: a .git anywhere on the way wins over a nearer .claude folder") {
    MemoryFs fs;
    repo(fs, "/home/ana/proj");
    fs.file("/home/ana/proj/pkg/.claude/settings.json", "{}").dir("/home/ana/proj/pkg/src");
    auto r = found(fs, "/home/ana/proj/pkg/src");
    CHECK(r.root == "/home/ana/proj");
    CHECK(r.reason == RootReason::git_work_tree);
}

TEST_CASE("project root: no git, the nearest folder with a .claude folder") {
    MemoryFs fs;
    fs.file("/home/ana/notes/.claude/settings.json", "{}").file("/home/ana/notes/a/.claude/CLAUDE.md", "x");
    fs.dir("/home/ana/notes/a/b");
    auto r = found(fs, "/home/ana/notes/a/b");
    CHECK(r.root == "/home/ana/notes/a");
    CHECK(r.reason == RootReason::claude_folder);
    CHECK(r.decided_by == "/home/ana/notes/a/.claude");
    CHECK(sbx::root_why(r).find("(/home/ana/notes/a/.claude)") != std::string::npos);
    CHECK(found(fs, "/home/ana/notes").root == "/home/ana/notes");
}

TEST_CASE("project root: neither, the current directory, looked for below the home") {
    MemoryFs fs;
    fs.dir("/home/ana/scratch/x");
    auto r = found(fs, "/home/ana/scratch/x");
    CHECK(r.root == "/home/ana/scratch/x");
    CHECK(r.reason == RootReason::current_directory);
    CHECK(r.decided_by.empty());
    CHECK(r.stopped_at == "/home/ana");
    CHECK(sbx::root_why(r) == "the current directory: no git work tree or .claude folder holds it below /home/ana");
    // Outside every home the walk stops at /.
    fs.dir("/srv/data/x");
    CHECK(found(fs, "/srv/data/x").stopped_at == "/");
}

TEST_CASE("project root: the home is never the project, not even a dotfiles repository with .claude") {
    MemoryFs fs;
    repo(fs, "/home/ana");
    fs.file("/home/ana/.claude/settings.json", "{}").dir("/home/ana/proj/src");
    auto r = found(fs, "/home/ana/proj/src");
    CHECK(r.root == "/home/ana/proj/src");
    CHECK(r.reason == RootReason::current_directory);
    CHECK(r.stopped_at == "/home/ana");
    // A project below it with a .claude folder of its own is found as usual.
    fs.file("/home/ana/proj/.claude/settings.json", "{}");
    CHECK(found(fs, "/home/ana/proj/src").root == "/home/ana/proj");
}

TEST_CASE("project root: nothing above a home either, nor /") {
    MemoryFs fs;
    repo(fs, "/");
    repo(fs, "/home");
    fs.dir("/home/ana/x").dir("/srv/x");
    CHECK(found(fs, "/home/ana/x").root == "/home/ana/x");
    CHECK(found(fs, "/srv/x").root == "/srv/x");
    CHECK(found(fs, "/srv/x").stopped_at == "/");
}

TEST_CASE("project root: in the home, above it or in /, the current directory, and nothing is looked at") {
    MemoryFs fs;
    repo(fs, "/home/ana");
    repo(fs, "/home");
    for (const std::string cwd : {"/home/ana", "/home", "/"}) {
        auto r = found(fs, cwd);
        CHECK(r.root == cwd);
        CHECK(r.reason == RootReason::current_directory);
        CHECK(r.stopped_at == cwd);
    }
    CHECK(sbx::root_why(found(fs, "/home/ana")).find("home directory") != std::string::npos);
    CHECK(sbx::root_why(found(fs, "/")).find("never looks for a project in /") != std::string::npos);
}

TEST_CASE("project root: each home as given, as written and as its real path") {
    MemoryFs fs;
    repo(fs, "/data/ana");
    fs.dir("/data/ana/proj");
    const std::vector<std::string> homes{"/home/ana", "/data/ana"};
    auto r = found(fs, "/data/ana/proj", homes);
    CHECK(r.root == "/data/ana/proj");
    CHECK(r.stopped_at == "/data/ana");
}

TEST_CASE("project root: an empty .git (a running sandbox's placeholder) and an empty .claude decide nothing") {
    MemoryFs fs;
    repo(fs, "/home/ana/proj");
    fs.dir("/home/ana/proj/sub/.git").dir("/home/ana/proj/sub/.claude").dir("/home/ana/proj/sub/x");
    CHECK(found(fs, "/home/ana/proj/sub/x").root == "/home/ana/proj");
    MemoryFs bare;
    bare.dir("/home/ana/p/.claude").dir("/home/ana/p/.git").dir("/home/ana/p/x");
    auto r = found(bare, "/home/ana/p/x");
    CHECK(r.root == "/home/ana/p/x");
    CHECK(r.reason == RootReason::current_directory);
    // A file named .claude is no folder.
    MemoryFs file;
    file.file("/home/ana/q/.claude", "x").dir("/home/ana/q/x");
    CHECK(found(file, "/home/ana/q/x").root == "/home/ana/q/x");
}

TEST_CASE("project root: a symlinked .git or .claude is refused, not followed and not skipped") {
    MemoryFs fs;
    repo(fs, "/home/ana/real");
    repo(fs, "/home/ana/outer");
    fs.symlink("/home/ana/outer/proj/.git", "/home/ana/real/.git").dir("/home/ana/outer/proj/src");
    auto e = refused(fs, "/home/ana/outer/proj/src");
    CHECK(e.code == sbx::Errc::invalid_argument);
    CHECK(e.file == "/home/ana/outer/proj/.git");
    CHECK(e.message.find("symbolic link") != std::string::npos);
    CHECK(e.message.find("--root") != std::string::npos);
    MemoryFs claude;
    claude.file("/home/ana/c/.claude/settings.json", "{}").symlink("/home/ana/c/p/.claude", "/home/ana/c/.claude");
    claude.dir("/home/ana/c/p/x");
    CHECK(refused(claude, "/home/ana/c/p/x").file == "/home/ana/c/p/.claude");
}

TEST_CASE("project root: a .git of an odd kind is refused") {
    struct Fifo final : sbx::FsView {
        MemoryFs m;
        sbx::expected<std::optional<sbx::FileStat>> lstat(const std::string& p) const override {
            auto st = m.lstat(p);
            if (st && *st && p == "/srv/p/.git") (*st)->type = sbx::FileType::other;
            return st;
        }
        sbx::expected<std::string> readlink(const std::string& p) const override { return m.readlink(p); }
        sbx::expected<std::vector<std::string>> list(const std::string& p) const override { return m.list(p); }
        sbx::expected<std::optional<std::string>> read_text(const std::string& p, std::size_t n) const override {
            return m.read_text(p, n);
        }
    } fs;
    fs.m.file("/srv/p/.git").dir("/srv/p/x");
    auto r = sbx::find_project_root("/srv/p/x", kHomes, kMe, fs);
    REQUIRE(!r);
    CHECK(r.error().file == "/srv/p/.git");
}

TEST_CASE("project root: another user's .git or .claude, or one in another user's folder, is refused") {
    MemoryFs fs;
    fs.dir("/tmp/work/x");
    repo(fs, "/tmp");
    fs.owner("/tmp/.git", 1001);  // planted in the shared /tmp by uid 1001
    auto e = refused(fs, "/tmp/work/x");
    CHECK(e.code == sbx::Errc::invalid_argument);
    CHECK(e.file == "/tmp/.git");
    CHECK(e.message.find("uid 1001") != std::string::npos);
    // Root's own are taken; so are the caller's.
    fs.owner("/tmp/.git", 0);
    CHECK(found(fs, "/tmp/work/x").root == "/tmp");
    fs.owner("/tmp/.git", kMe);
    CHECK(found(fs, "/tmp/work/x").root == "/tmp");
    // The caller's .git in a folder another user owns.
    fs.owner("/tmp", 1001);
    CHECK(refused(fs, "/tmp/work/x").file == "/tmp");
    MemoryFs claude;
    claude.file("/tmp/.claude/settings.json", "{\"sandbox\":{}}").owner("/tmp/.claude", 1001).dir("/tmp/w");
    CHECK(refused(claude, "/tmp/w").file == "/tmp/.claude");
}

TEST_CASE("project root: a .claude the walk cannot take matters only when no .git above decides") {
    MemoryFs fs;
    repo(fs, "/srv/repo");
    fs.file("/srv/repo/pkg/.claude/settings.json", "{}").owner("/srv/repo/pkg/.claude", 1001).dir("/srv/repo/pkg/x");
    auto r = found(fs, "/srv/repo/pkg/x");
    CHECK(r.root == "/srv/repo");
    CHECK(r.reason == RootReason::git_work_tree);
    MemoryFs alone;
    alone.file("/srv/p/.claude/settings.json", "{}").owner("/srv/p/.claude", 1001).dir("/srv/p/x");
    alone.file("/srv/.claude/settings.json", "{}");  // the user's own, further up: not taken instead
    CHECK(refused(alone, "/srv/p/x").file == "/srv/p/.claude");
}

TEST_CASE("project root: an ancestor that cannot be looked at stops the walk with an error") {
    MemoryFs fs;
    repo(fs, "/home/ana/proj");
    fs.dir("/home/ana/proj/locked/in").unreadable("/home/ana/proj/locked");
    auto r = sbx::find_project_root("/home/ana/proj/locked/in", kHomes, kMe, fs);
    REQUIRE(!r);
    CHECK(r.error().code == sbx::Errc::io_error);
    CHECK(r.error().file == "/home/ana/proj/locked/in/.git");
    REQUIRE(r.error().cause != nullptr);
}

TEST_CASE("project root: --root is named, and its reason says so") {
    auto r = sbx::named_root("/srv/p");
    CHECK(r.reason == RootReason::option);
    CHECK(sbx::root_why(r) == "named with --root");
    CHECK(sbx::root_reason_name(RootReason::git_work_tree) == "git-work-tree");
    CHECK(sbx::root_reason_name(RootReason::claude_folder) == "claude-folder");
    CHECK(sbx::root_reason_name(RootReason::current_directory) == "current-directory");
    CHECK(sbx::root_reason_name(RootReason::option) == "option");
}
