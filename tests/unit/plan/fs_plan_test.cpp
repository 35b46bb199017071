// make_fs_plan() and the bubblewrap arguments it becomes, over in-memory trees.
// Golden files: tests/golden/bwrap/NAME.args, one argument per line. Set
// SBX_UPDATE_GOLDEN=1 to rewrite them, then review the diff.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "sbx/io/fs_view_disk.hpp"
#include "sbx/linux/bwrap.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/settings/settings.hpp"
#include "golden.hpp"
#include "temp_dir.hpp"

namespace {

struct Setup {
    std::string root = "/r";
    std::string home = "/home/u";
    std::string settings = "{}";  // the user's settings file
};

sbx::expected<sbx::FsPlan> plan_for(const Setup& s, const sbx::FsView& fs, const sbx::PlanLimits& limits = {}) {
    sbx::SettingsSource src{sbx::LayerKind::user, s.home + "/.claude/settings.json", {s.home, s.home}, s.root};
    auto parsed = sbx::parse_settings(s.settings, src);
    REQUIRE_MESSAGE(parsed.has_value(), (parsed ? std::string() : sbx::to_string(parsed.error())));
    std::vector<sbx::Settings> layers;
    layers.push_back(std::move(*parsed));
    auto policy = sbx::merge(std::move(layers), {}, fs);
    REQUIRE(policy.has_value());
    auto prot = sbx::protected_paths(s.root, s.home, fs);
    REQUIRE_MESSAGE(prot.has_value(), (prot ? std::string() : sbx::to_string(prot.error())));
    auto rules = sbx::compile_fs_rules(*policy, {s.root, "/tmp/sbx-test", s.home}, prot->paths, fs);
    REQUIRE(rules.has_value());
    return sbx::make_fs_plan(*rules, fs, limits);
}

sbx::FsPlan plan_ok(const Setup& s, const sbx::FsView& fs, const sbx::PlanLimits& limits = {}) {
    auto p = plan_for(s, fs, limits);
    REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
    return std::move(*p);
}

void check_golden(const std::string& name, const sbx::FsPlan& plan) {
    std::string text;
    for (const auto& a : sbx::linux_sandbox::bwrap_fs_args(plan)) text += a + "\n";
    sbx_test::check_golden("bwrap/" + name + ".args", text, "bubblewrap arguments");
}

bool has_mount(const sbx::FsPlan& p, sbx::MountKind k, std::string_view path) {
    for (const auto& m : p.mounts)
        if (m.kind == k && m.path == path) return true;
    return false;
}

// Position of the first mount at `path`, to check the order.
std::size_t index_of(const sbx::FsPlan& p, std::string_view path) {
    for (std::size_t i = 0; i < p.mounts.size(); ++i)
        if (p.mounts[i].path == path) return i;
    FAIL("no mount at " << path);
    return 0;
}

bool has_placeholder(const sbx::FsPlan& p, std::string_view path) {
    for (const auto& ph : p.placeholders)
        if (ph.path == path) return true;
    return false;
}

void repository(sbx::MemoryFs& fs, const std::string& root) {
    fs.dir(root + "/src").file(root + "/src/main.c");
    fs.dir(root + "/.git/objects").dir(root + "/.git/refs").file(root + "/.git/HEAD", "ref: refs/heads/main\n");
    fs.file(root + "/.git/config").dir(root + "/.git/hooks").file(root + "/.git/hooks/pre-commit.sample");
}

}  // namespace

TEST_CASE("fs_plan golden: a git repository") {
    sbx::MemoryFs fs;
    repository(fs, "/r");
    fs.dir("/home/u/.ssh").file("/home/u/.ssh/id_ed25519").dir("/home/u/.claude").file("/home/u/.bashrc");
    auto p = plan_ok({"/r", "/home/u", R"J({"sandbox": {"filesystem": {"denyRead": ["~/.ssh"]}}})J"}, fs);
    CHECK(has_mount(p, sbx::MountKind::pin, "/r/.git"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/r/.git/hooks"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/r/.git/config"));
    CHECK(has_mount(p, sbx::MountKind::mask_dir, "/home/u/.ssh"));
    // A missing commondir is covered by one naming its own directory, which git
    // reads as none; an empty one would stop git.
    CHECK(has_placeholder(p, "/r/.git/commondir"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/r/.git/commondir"));
    for (const auto& ph : p.placeholders)
        if (ph.path == "/r/.git/commondir") CHECK(ph.kind == sbx::Placeholder::commondir);
    CHECK(sbx::placeholder_content(sbx::Placeholder::commondir, "/r/.git/commondir") == ".\n");
    CHECK(sbx::placeholder_content(sbx::Placeholder::file, "/r/.git/config.worktree").empty());
    CHECK(has_placeholder(p, "/r/.git/config.worktree"));
    // A root with a .git of its own needs no HEAD placeholder: git looks at .git first.
    CHECK_FALSE(has_placeholder(p, "/r/HEAD"));
    // Pins before masks before read-only binds: a later bind would take its source from the host.
    CHECK(index_of(p, "/r") < index_of(p, "/r/.git"));
    CHECK(index_of(p, "/r/.git") < index_of(p, "/home/u/.ssh"));
    CHECK(index_of(p, "/home/u/.ssh") < index_of(p, "/r/.git/hooks"));
    check_golden("git-repository", p);
}

TEST_CASE("fs_plan: a write deny's pattern in its last component: new names renamed after the run, old ones read-only") {
    sbx::MemoryFs fs;
    repository(fs, "/r");
    fs.dir("/home/u").dir("/r/agents").file("/r/agents/AGENT-b.md").file("/r/agents/AGENT-a.md").file("/r/notes.md");
    fs.symlink("/r/agents/AGENT-l.md", "/r/notes.md");
    auto p = plan_ok({"/r", "/home/u",
                      R"J({"sandbox": {"filesystem": {"denyWrite": ["/r/agents/AGENT-*.md", "/r/*/x*", "/etc/*.conf"]}}})J"},
                     fs);
    // Only the first: the second has its wildcard on the way, the third is read-only already.
    REQUIRE(p.neutralise_new.size() == 1);
    const auto& op = p.neutralise_new[0];
    CHECK(op.dir == "/r/agents");
    CHECK(op.pattern == "AGENT-*.md");
    CHECK(op.present == std::vector<std::string>{"AGENT-a.md", "AGENT-b.md", "AGENT-l.md"});
    CHECK(op.why.find("filesystem.denyWrite /r/agents/AGENT-*.md") != std::string::npos);
    // Its directory cannot be moved away and made anew; the names there stay read-only,
    // a link's own name bound over, not followed.
    CHECK(has_mount(p, sbx::MountKind::pin, "/r/agents"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/r/agents/AGENT-a.md"));
    CHECK(has_mount(p, sbx::MountKind::ro_link, "/r/agents/AGENT-l.md"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/r/notes.md"));  // where the link leads

    // A directory that does not exist yet, or lies outside every writable place: nothing to rename.
    auto q = plan_ok({"/r", "/home/u", R"J({"sandbox": {"filesystem": {"denyWrite": ["/r/later/AGENT-*.md"]}}})J"}, fs);
    CHECK(q.neutralise_new.empty());
}

bool has_neutralise(const sbx::FsPlan& p, std::string_view path) {
    for (const auto& n : p.neutralise)
        if (n.path == path) return true;
    return false;
}

TEST_CASE("fs_plan: in a fresh repository the root shows only the placeholders something outside reads live") {
    sbx::MemoryFs fs;
    repository(fs, "/r");
    fs.dir("/home/u");
    auto p = plan_ok({"/r", "/home/u", "{}"}, fs);
    std::vector<std::string> at_root;
    for (const auto& ph : p.placeholders)
        if (sbx::paths::parent(ph.path) == "/r") at_root.push_back(ph.path);
    std::sort(at_root.begin(), at_root.end());
    CHECK(at_root == std::vector<std::string>{"/r/.claude", "/r/.cogitator", "/r/.cursor", "/r/.vscode", "/r/.zed"});
    // The rest are renamed after the run when the command made them, and have no mount.
    for (const char* name : {".envrc", ".mcp.json", ".gitmodules", ".idea", ".devcontainer", ".devcontainer.json",
                             ".gemini", ".codex", ".husky", ".pre-commit-config.yaml", ".bashrc", ".profile",
                             ".zshrc", ".gitconfig", ".logout"}) {
        const std::string path = std::string("/r/") + name;
        CHECK_MESSAGE(has_neutralise(p, path), path);
        CHECK_FALSE_MESSAGE(has_placeholder(p, path), path);
        for (const auto& m : p.mounts) CHECK_MESSAGE(m.path != path, path);
    }
    CHECK(p.neutralise.size() == 26);
    for (const auto& n : p.neutralise) CHECK_FALSE(n.why.empty());
}

TEST_CASE("fs_plan: a name left to the audit is covered while the command runs when something inside it is read then, or a denyWrite names it") {
    sbx::MemoryFs fs;
    repository(fs, "/r");
    fs.dir("/home/u");
    // husky's hooks path, inside a .husky that is not there yet: git outside runs
    // hooks from it on a commit made while the command runs.
    fs.file("/r/.git/config", "[core]\n\thooksPath = .husky/_\n");
    auto p = plan_ok({"/r", "/home/u", R"J({"sandbox": {"filesystem": {"denyWrite": ["/r/.envrc"]}}})J"}, fs);
    CHECK(has_placeholder(p, "/r/.husky"));
    CHECK_FALSE(has_neutralise(p, "/r/.husky"));
    CHECK(has_placeholder(p, "/r/.envrc"));
    CHECK_FALSE(has_neutralise(p, "/r/.envrc"));
    CHECK(has_neutralise(p, "/r/.mcp.json"));  // the others as before
    // Control: without the hooks path and the denyWrite, both are renamed after the run.
    fs.file("/r/.git/config", "[core]\n");
    auto q = plan_ok({"/r", "/home/u", "{}"}, fs);
    CHECK(has_neutralise(q, "/r/.husky"));
    CHECK(has_neutralise(q, "/r/.envrc"));
}

TEST_CASE("fs_plan: an existing protected name is read-only, and a root that is the home covers its start-up files") {
    sbx::MemoryFs fs;
    repository(fs, "/home/u");
    fs.file("/home/u/.envrc", "use nix\n");
    auto p = plan_ok({"/home/u", "/home/u", "{}"}, fs);
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/home/u/.envrc"));
    CHECK_FALSE(has_neutralise(p, "/home/u/.envrc"));
    // A shell started while the command runs reads the home's start-up files.
    for (const char* name : {".bashrc", ".profile", ".zshrc", ".gitconfig"}) {
        CHECK_MESSAGE(has_placeholder(p, std::string("/home/u/") + name), name);
        CHECK_FALSE_MESSAGE(has_neutralise(p, std::string("/home/u/") + name), name);
    }
    CHECK(has_neutralise(p, "/home/u/.mcp.json"));
}

TEST_CASE("fs_plan golden: a linked worktree protects the main repository's hooks and config") {
    sbx::MemoryFs fs;
    repository(fs, "/src/main");
    fs.dir("/src/main/.git/worktrees/wt").file("/src/main/.git/worktrees/wt/commondir", "../..\n");
    fs.file("/src/main/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n").file("/src/main/.git/worktrees/wt/gitdir", "/r/.git\n");
    fs.dir("/r/src").file("/r/.git", "gitdir: /src/main/.git/worktrees/wt\n");
    fs.dir("/home/u");
    auto p = plan_ok({"/r", "/home/u", R"J({"sandbox": {"filesystem": {"allowWrite": ["/src/main"]}}})J"}, fs);
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/r/.git"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/src/main/.git/hooks"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/src/main/.git/config"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/src/main/.git/worktrees/wt/commondir"));
    CHECK(has_placeholder(p, "/src/main/.git/worktrees/wt/config.worktree"));
    check_golden("linked-worktree", p);
}

TEST_CASE("fs_plan golden: a linked worktree writes the main git directory, pinned, its config and hooks read-only") {
    sbx::MemoryFs fs;
    repository(fs, "/src/main");
    fs.dir("/src/main/.git/info").file("/src/main/.git/info/exclude", "*.o\n");
    fs.dir("/src/main/.git/worktrees/wt").file("/src/main/.git/worktrees/wt/commondir", "../..\n");
    fs.file("/src/main/.git/worktrees/wt/HEAD", "ref: refs/heads/wt\n").file("/src/main/.git/worktrees/wt/gitdir", "/r/.git\n");
    fs.dir("/r/src").file("/r/.git", "gitdir: /src/main/.git/worktrees/wt\n");
    fs.dir("/home/u");
    auto p = plan_ok({"/r", "/home/u", "{}"}, fs);
    CHECK(p.warnings.empty());
    // Writable, and as a mount point it cannot be renamed, removed or replaced.
    CHECK(has_mount(p, sbx::MountKind::bind, "/src/main/.git"));
    for (const auto& m : p.mounts)
        if (m.path == "/src/main/.git") CHECK(m.why.find("linked worktree") != std::string::npos);
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/r/.git"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/src/main/.git/hooks"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/src/main/.git/config"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/src/main/.git/worktrees/wt/commondir"));
    // The directories that hold them cannot be moved away either.
    CHECK(has_mount(p, sbx::MountKind::pin, "/src/main/.git/worktrees"));
    CHECK(has_mount(p, sbx::MountKind::pin, "/src/main/.git/worktrees/wt"));
    CHECK(has_mount(p, sbx::MountKind::pin, "/src/main/.git/info"));
    for (const char* ph : {"/src/main/.git/commondir", "/src/main/.git/config.worktree", "/src/main/.git/info/attributes",
                           "/src/main/.git/worktrees/wt/config.worktree"})
        CHECK_MESSAGE(has_placeholder(p, ph), ph);
    CHECK(index_of(p, "/src/main/.git") < index_of(p, "/src/main/.git/hooks"));
    check_golden("linked-worktree-commit", p);
}

TEST_CASE("fs_plan golden: a root that is no repository yet") {
    sbx::MemoryFs fs;
    fs.dir("/r/docs").file("/r/notes.txt").dir("/home/u");
    auto p = plan_ok({"/r", "/home/u", "{}"}, fs);
    CHECK(has_placeholder(p, "/r/.git"));
    CHECK(has_placeholder(p, "/r/HEAD"));
    for (const auto& ph : p.placeholders)
        if (ph.path == "/r/.git") CHECK(ph.kind == sbx::Placeholder::directory);
    check_golden("no-repository", p);
}

TEST_CASE("fs_plan golden: symlinked dotfiles protect their targets") {
    sbx::MemoryFs fs;
    fs.dir("/home/u/dotfiles").file("/home/u/dotfiles/bashrc").file("/home/u/dotfiles/gitconfig");
    fs.symlink("/home/u/.bashrc", "dotfiles/bashrc").symlink("/home/u/.gitconfig", "/home/u/dotfiles/gitconfig");
    fs.dir("/home/u/work");
    auto p = plan_ok({"/home/u", "/home/u", "{}"}, fs);
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/home/u/dotfiles/bashrc"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/home/u/dotfiles/gitconfig"));
    CHECK_FALSE(has_mount(p, sbx::MountKind::ro_bind, "/home/u/.bashrc"));  // a bind would follow the link
    // The names themselves are bound over, so that they cannot be removed or replaced.
    CHECK(has_mount(p, sbx::MountKind::ro_link, "/home/u/.bashrc"));
    CHECK(has_mount(p, sbx::MountKind::ro_link, "/home/u/.gitconfig"));
    CHECK(has_mount(p, sbx::MountKind::pin, "/home/u/dotfiles"));  // no rename of the parent either
    check_golden("symlinked-dotfiles", p);
}

TEST_CASE("fs_plan: a protected symlink at the root is bound over itself, planned against its own identity") {
    sbx::MemoryFs fs;
    fs.dir("/r").dir("/home/u").dir("/shared").file("/shared/mcp.json", "{}").file("/shared/bashrc");
    fs.symlink("/r/.mcp.json", "/shared/mcp.json").symlink("/r/.bashrc", "../shared/bashrc");
    fs.symlink("/home/u/.zshrc", "/shared/zshrc");  // outside every writable root: read-only already
    auto p = plan_ok({"/r", "/home/u", "{}"}, fs);
    for (const std::string path : {"/r/.mcp.json", "/r/.bashrc"}) {
        CAPTURE(path);
        const auto at = std::find_if(p.mounts.begin(), p.mounts.end(), [&](const sbx::Mount& m) { return m.path == path; });
        REQUIRE(at != p.mounts.end());
        CHECK(at->kind == sbx::MountKind::ro_link);
        CHECK(at->source.empty());
        CHECK(at->expect.exists);
        CHECK(at->expect.type == sbx::FileType::symlink);  // the link's, not its target's
        CHECK(at->why.find("protected symbolic link") != std::string::npos);
        CHECK_FALSE(has_placeholder(p, path));
        CHECK(index_of(p, "/r") < index_of(p, path));  // after the root it lies in
    }
    CHECK_FALSE(has_mount(p, sbx::MountKind::ro_link, "/home/u/.zshrc"));
    CHECK_FALSE(has_mount(p, sbx::MountKind::ro_bind, "/shared/mcp.json"));  // outside the root: read-only already
    // bubblewrap gets no link of the plan; the stage's flag names each one.
    const auto args = sbx::linux_sandbox::bwrap_fs_args(p);
    const auto count = std::count(args.begin(), args.end(), std::string(sbx::linux_sandbox::kLinkFlag));
    CHECK(count == 2);
}

TEST_CASE("fs_plan: a protected symlink inside the root leading inside it protects both names") {
    sbx::MemoryFs fs;
    fs.dir("/r/config").file("/r/config/mcp.json", "{}").dir("/home/u");
    fs.symlink("/r/.mcp.json", "config/mcp.json");
    auto p = plan_ok({"/r", "/home/u", "{}"}, fs);
    CHECK(has_mount(p, sbx::MountKind::ro_link, "/r/.mcp.json"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/r/config/mcp.json"));  // the target, read-only
    CHECK(has_mount(p, sbx::MountKind::pin, "/r/config"));                // its folder cannot be moved
}

TEST_CASE("fs_plan golden: a read deny with a re-opened subdirectory") {
    sbx::MemoryFs fs;
    fs.dir("/home/u/projects/app/src").dir("/home/u/projects/shared").dir("/home/u/.aws").file("/home/u/.profile");
    auto p = plan_ok({"/home/u/projects/app", "/home/u",
                      R"J({"sandbox": {"filesystem": {"denyRead": ["~/"], "allowRead": ["~/projects/shared"]}}})J"},
                     fs);
    CHECK(has_mount(p, sbx::MountKind::mask_dir, "/home/u"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/home/u/projects/shared"));
    CHECK(has_mount(p, sbx::MountKind::bind, "/home/u/projects/app"));  // the root, re-opened writable
    CHECK(index_of(p, "/home/u") < index_of(p, "/home/u/projects/shared"));
    auto args = sbx::linux_sandbox::bwrap_fs_args(p);
    // The mask turns read-only last, after the re-opened paths have their mount points.
    CHECK(args[args.size() - 2] == "--remount-ro");
    CHECK(args.back() == "/home/u");
    check_golden("read-deny-reopened", p);
}

// What explain says of writing `path`, in the same rules the plan is made from.
bool write_allowed(const Setup& s, const sbx::FsView& fs, const std::string& path) {
    sbx::SettingsSource src{sbx::LayerKind::user, s.home + "/.claude/settings.json", {s.home, s.home}, s.root};
    auto parsed = sbx::parse_settings(s.settings, src);
    REQUIRE(parsed.has_value());
    std::vector<sbx::Settings> layers;
    layers.push_back(std::move(*parsed));
    auto policy = sbx::merge(std::move(layers), {}, fs);
    REQUIRE(policy.has_value());
    auto prot = sbx::protected_paths(s.root, s.home, fs);
    REQUIRE(prot.has_value());
    auto rules = sbx::compile_fs_rules(*policy, {s.root, "/tmp/sbx-test", s.home}, prot->paths, fs);
    REQUIRE(rules.has_value());
    auto e = sbx::explain(*rules, path, sbx::Access::write, fs);
    REQUIRE(e.has_value());
    return e->decision.allowed;
}

TEST_CASE("fs_plan: the first missing folder on the way to a protected path is covered, and explain agrees") {
    sbx::MemoryFs fs;
    repository(fs, "/r");
    fs.file("/r/.git/config", "[core]\n\thooksPath = tools/git-hooks\n[include]\n\tpath = ../conf/extra/git.inc\n");
    fs.dir("/home/u");
    const Setup s{"/r", "/home/u", "{}"};
    auto p = plan_ok(s, fs);
    // core.hooksPath names tools/git-hooks, and there is no tools/: tools/ is covered.
    CHECK(has_placeholder(p, "/r/tools"));
    CHECK_FALSE(has_placeholder(p, "/r/tools/git-hooks"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/r/tools"));
    CHECK_FALSE(write_allowed(s, fs, "/r/tools/git-hooks/pre-commit"));
    CHECK_FALSE(write_allowed(s, fs, "/r/tools/other.txt"));  // the plan covers it too: explain says so
    // The include lies in /r/conf/extra, and there is no /r/conf.
    CHECK(has_placeholder(p, "/r/conf"));
    CHECK_FALSE(write_allowed(s, fs, "/r/conf/extra/git.inc"));
    for (const auto& ph : p.placeholders)
        if (ph.path == "/r/tools") {
            CHECK(ph.kind == sbx::Placeholder::directory);
            CHECK(ph.why.find("the first missing folder on the way to /r/tools/git-hooks") != std::string::npos);
        }
    CHECK(write_allowed(s, fs, "/r/src/new.c"));
    // Once the folder is there, the path itself is covered, and the rest of the folder is writable.
    fs.dir("/r/tools");
    auto q = plan_ok(s, fs);
    CHECK_FALSE(has_placeholder(q, "/r/tools"));
    CHECK(has_placeholder(q, "/r/tools/git-hooks"));
    CHECK(write_allowed(s, fs, "/r/tools/other.txt"));
    CHECK_FALSE(write_allowed(s, fs, "/r/tools/git-hooks/pre-commit"));
}

TEST_CASE("fs_plan: a missing write-denied path is covered, at the first missing folder on its way") {
    sbx::MemoryFs fs;
    repository(fs, "/r");
    fs.dir("/home/u");
    const Setup s{"/r", "/home/u", R"J({"sandbox": {"filesystem": {"denyWrite": ["/r/.agents/skills", "/r/out.lock", "/elsewhere/x/y"]}}})J"};
    auto p = plan_ok(s, fs);
    CHECK(has_placeholder(p, "/r/.agents"));  // no .agents yet: the folder itself
    CHECK(has_placeholder(p, "/r/out.lock"));  // its folder is there: an empty file
    CHECK_FALSE(has_placeholder(p, "/elsewhere"));  // not writable anyway
    CHECK_FALSE(write_allowed(s, fs, "/r/.agents/skills/evil/SKILL.md"));
    CHECK_FALSE(write_allowed(s, fs, "/r/.agents/other"));
    fs.dir("/r/.agents");
    auto q = plan_ok(s, fs);
    CHECK(has_placeholder(q, "/r/.agents/skills"));
    CHECK(write_allowed(s, fs, "/r/.agents/other"));
    CHECK_FALSE(write_allowed(s, fs, "/r/.agents/skills/x"));
}

TEST_CASE("fs_plan: wildcards in read denies are expanded against the disk") {
    sbx::MemoryFs fs;
    fs.file("/home/u/a/.env").file("/home/u/a/b/.env").file("/home/u/a/b/env").file("/home/u/c/.env.local");
    fs.file("/r/key.pem").file("/r/cert.pem").file("/r/readme").dir("/r/logs");
    auto p = plan_ok({"/r", "/home/u", R"J({"sandbox": {"filesystem": {"denyRead": ["~/**/.env", "/r/*.pem", "/r/logs/**"]}}})J"},
                     fs);
    CHECK(has_mount(p, sbx::MountKind::mask_file, "/home/u/a/.env"));
    CHECK(has_mount(p, sbx::MountKind::mask_file, "/home/u/a/b/.env"));
    CHECK_FALSE(has_mount(p, sbx::MountKind::mask_file, "/home/u/a/b/env"));
    CHECK_FALSE(has_mount(p, sbx::MountKind::mask_file, "/home/u/c/.env.local"));
    CHECK(has_mount(p, sbx::MountKind::mask_file, "/r/key.pem"));
    CHECK(has_mount(p, sbx::MountKind::mask_file, "/r/cert.pem"));
    CHECK(has_mount(p, sbx::MountKind::mask_dir, "/r/logs"));  // a trailing /** is the directory
    CHECK_FALSE(has_mount(p, sbx::MountKind::mask_file, "/r/readme"));
}

TEST_CASE("fs_plan: a hidden or protected file with more than one hard link fails the plan") {
    {
        sbx::MemoryFs fs;
        fs.file("/home/u/.ssh/id_ed25519").hardlink("/r/copy", "/home/u/.ssh/id_ed25519");
        auto p = plan_for({"/r", "/home/u", R"J({"sandbox": {"filesystem": {"denyRead": ["~/.ssh"]}}})J"}, fs);
        REQUIRE_FALSE(p.has_value());
        CHECK(p.error().file == "/home/u/.ssh/id_ed25519");
        CHECK(p.error().message.find("hard links") != std::string::npos);
    }
    {
        sbx::MemoryFs fs;
        fs.file("/r/secret.txt").hardlink("/tmp/other", "/r/secret.txt");
        auto p = plan_for({"/r", "/home/u", R"J({"sandbox": {"filesystem": {"denyRead": ["/r/secret.txt"]}}})J"}, fs);
        REQUIRE_FALSE(p.has_value());
        CHECK(p.error().file == "/r/secret.txt");
    }
    {
        sbx::MemoryFs fs;
        repository(fs, "/r");
        fs.file("/r/.git/hooks/pre-commit").hardlink("/r/tools/hook", "/r/.git/hooks/pre-commit");
        auto p = plan_for({"/r", "/home/u", "{}"}, fs);
        REQUIRE_FALSE(p.has_value());
        CHECK(p.error().message.find("hook script") != std::string::npos);
    }
    {
        sbx::MemoryFs fs;
        fs.file("/r/.mcp.json").hardlink("/r/mcp-copy.json", "/r/.mcp.json");
        auto p = plan_for({"/r", "/home/u", "{}"}, fs);
        REQUIRE_FALSE(p.has_value());
        CHECK(p.error().file == "/r/.mcp.json");
    }
}

TEST_CASE("fs_plan: a denied directory is looked through up to the limit, with a warning past it") {
    sbx::MemoryFs fs;
    fs.dir("/r");
    for (int i = 0; i < 10; ++i) fs.file("/home/u/.aws/f" + std::to_string(i));
    sbx::PlanLimits small;
    small.dir_entries = 4;
    auto p = plan_ok({"/r", "/home/u", R"J({"sandbox": {"filesystem": {"denyRead": ["~/.aws"]}}})J"}, fs, small);
    CHECK(has_mount(p, sbx::MountKind::mask_dir, "/home/u/.aws"));
    bool warned = false;
    for (const auto& w : p.warnings)
        if (w.message.find("stopped") != std::string::npos) {
            warned = true;
            CHECK(w.once);  // the same every run: sbx run says it once for the root
        }
    CHECK(warned);
}

TEST_CASE("fs_plan: every directory between a writable root and a guarded path is pinned") {
    sbx::MemoryFs fs;
    fs.file("/r/a/b/secret.txt").file("/r/config/prod/db.json");
    auto p = plan_ok({"/r", "/home/u", R"J({"sandbox": {"filesystem": {"denyRead": ["/r/a/b/secret.txt"],
                                                                      "denyWrite": ["/r/config/prod/db.json"]}}})J"},
                     fs);
    CHECK(has_mount(p, sbx::MountKind::pin, "/r/a"));
    CHECK(has_mount(p, sbx::MountKind::pin, "/r/a/b"));
    CHECK(has_mount(p, sbx::MountKind::pin, "/r/config"));
    CHECK(has_mount(p, sbx::MountKind::pin, "/r/config/prod"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, "/r/config/prod/db.json"));
    CHECK(has_mount(p, sbx::MountKind::mask_file, "/r/a/b/secret.txt"));
    for (const auto& m : p.mounts)
        if (m.kind != sbx::MountKind::bind && !has_placeholder(p, m.path)) CHECK(m.expect.exists);
}

TEST_CASE("fs_plan: filesystem.disabled plans no mounts, and says so") {
    sbx::MemoryFs fs;
    fs.dir("/r");
    auto p = plan_ok({"/r", "/home/u", R"J({"sandbox": {"filesystem": {"disabled": true}}})J"}, fs);
    CHECK(p.mounts.empty());
    CHECK(p.placeholders.empty());
    REQUIRE(p.warnings.size() == 1);
    CHECK(p.warnings[0].message.find("disabled") != std::string::npos);
}

namespace {


}  // namespace

TEST_CASE("fs_plan: a real git repository on disk") {
    if (std::system("git --version >/dev/null 2>&1") != 0) {
        MESSAGE("skipped: git is not installed, so no real repository can be made");
        return;
    }
    sbx_test::TempDir t("sbx-plan-test");
    const std::string root = t.path + "/proj", home = t.path + "/home";
    t.write("proj/src/main.c", "int main(void) { return 0; }\n");
    t.write("home/.ssh/id_ed25519", "secret\n");
    REQUIRE(std::system(("git init -q " + root).c_str()) == 0);
    sbx::DiskFs fs;
    auto p = plan_ok({root, home, R"J({"sandbox": {"filesystem": {"denyRead": ["~/.ssh"]}}})J"}, fs);
    CHECK(has_mount(p, sbx::MountKind::pin, root + "/.git"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, root + "/.git/hooks"));
    CHECK(has_mount(p, sbx::MountKind::ro_bind, root + "/.git/config"));
    CHECK(has_mount(p, sbx::MountKind::mask_dir, home + "/.ssh"));
    CHECK_FALSE(has_placeholder(p, root + "/HEAD"));  // `git diff HEAD` stays unambiguous
    for (const auto& m : p.mounts) {
        if (m.path == root + "/.git/config") {
            struct stat st {};
            REQUIRE(::lstat(m.path.c_str(), &st) == 0);
            CHECK(m.expect.ino == static_cast<std::uint64_t>(st.st_ino));
            CHECK(m.expect.dev == static_cast<std::uint64_t>(st.st_dev));
        }
    }
    // A second name for a hidden file fails the plan.
    REQUIRE(::link((home + "/.ssh/id_ed25519").c_str(), (root + "/copy").c_str()) == 0);
    auto refused = plan_for({root, home, R"J({"sandbox": {"filesystem": {"denyRead": ["~/.ssh"]}}})J"}, fs);
    REQUIRE_FALSE(refused.has_value());
    CHECK(refused.error().file == home + "/.ssh/id_ed25519");
}

TEST_CASE("fs_plan: a write-denied file with another hard link fails the plan") {
    sbx::MemoryFs fs;
    fs.file("/r/config/prod.json").hardlink("/r/prod-alias.json", "/r/config/prod.json");
    auto p = plan_for({"/r", "/home/u", R"J({"sandbox": {"filesystem": {"denyWrite": ["/r/config/prod.json"]}}})J"}, fs);
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error().file == "/r/config/prod.json");
    CHECK(p.error().message.find("hard links") != std::string::npos);
}

TEST_CASE("fs_plan: without isolation the bubblewrap view of / is writable") {
    sbx::MemoryFs fs;
    fs.dir("/r");
    auto p = plan_ok({"/r", "/home/u", R"J({"sandbox": {"filesystem": {"disabled": true}}})J"}, fs);
    CHECK_FALSE(p.isolated);
    auto args = sbx::linux_sandbox::bwrap_fs_args(p);
    REQUIRE(args.size() >= 3);
    CHECK(args[0] == "--bind");
    auto normal = plan_ok({"/r", "/home/u", "{}"}, fs);
    CHECK(normal.isolated);
    CHECK(sbx::linux_sandbox::bwrap_fs_args(normal)[0] == "--ro-bind");
}

TEST_CASE("fs_plan: no mount comes after a mount inside it, so nothing is undone") {
    sbx::MemoryFs fs;
    repository(fs, "/home/u/projects/app");
    fs.dir("/home/u/projects/app/config").file("/home/u/projects/app/config/secret.json");
    // The root under a masked home, a write deny over a directory holding a hidden file.
    auto p = plan_ok({"/home/u/projects/app", "/home/u", R"J({"sandbox": {"filesystem": {
        "denyRead": ["~/", "/home/u/projects/app/config/secret.json"],
        "denyWrite": ["/home/u/projects/app/config"]}}})J"},
                     fs);
    for (std::size_t i = 0; i < p.mounts.size(); ++i)
        for (std::size_t j = i + 1; j < p.mounts.size(); ++j) {
            CAPTURE(p.mounts[i].path);
            CAPTURE(p.mounts[j].path);
            CHECK_FALSE((sbx::paths::at_or_under(p.mounts[i].path, p.mounts[j].path) &&
                         p.mounts[i].path != p.mounts[j].path));
        }
    // The pin of .git survives the root being bound again after the mask of home.
    CHECK(index_of(p, "/home/u") < index_of(p, "/home/u/projects/app"));
    std::size_t last_root = 0, git_pin = 0;
    for (std::size_t i = 0; i < p.mounts.size(); ++i) {
        if (p.mounts[i].path == "/home/u/projects/app") last_root = i;
        if (p.mounts[i].path == "/home/u/projects/app/.git" && p.mounts[i].kind == sbx::MountKind::pin) git_pin = i;
    }
    CHECK(last_root < git_pin);
    // The hidden file stays hidden under the read-only directory.
    CHECK(index_of(p, "/home/u/projects/app/config") < index_of(p, "/home/u/projects/app/config/secret.json"));
}

namespace {

// The index of the first `--ro-bind-try PATH PATH` in args, or args.size().
std::size_t cover_index(const std::vector<std::string>& args, const std::string& path) {
    for (std::size_t i = 0; i + 2 < args.size(); ++i)
        if (args[i] == "--ro-bind-try" && args[i + 1] == path && args[i + 2] == path) return i;
    return args.size();
}

}  // namespace

TEST_CASE("bwrap: the kernel's host-wide files are covered read-only after every mount of the plan") {
    sbx::MemoryFs fs;
    fs.dir("/r").dir("/home/u/.ssh");
    auto p = plan_ok({"/r", "/home/u", R"J({"sandbox": {"filesystem": {"denyRead": ["~/.ssh"]}}})J"}, fs);
    auto args = sbx::linux_sandbox::bwrap_fs_args(p);
    const auto sys = cover_index(args, "/proc/sys");
    REQUIRE(sys < args.size());
    CHECK(cover_index(args, "/proc/sysrq-trigger") < args.size());
    // After the plan's own mounts (a writable bind could otherwise cover a cover).
    const auto root = std::find(args.begin(), args.end(), "/r") - args.begin();
    CHECK(static_cast<std::size_t>(root) < sys);
    // With a read-only `/`, /sys is read-only already: no cover for it.
    CHECK(cover_index(args, "/sys") == args.size());

    // With / bound writable, /sys is covered too.
    auto open = plan_ok({"/r", "/home/u", R"J({"sandbox": {"filesystem": {"disabled": true}}})J"}, fs);
    auto open_args = sbx::linux_sandbox::bwrap_fs_args(open);
    CHECK(cover_index(open_args, "/sys") < open_args.size());
    CHECK(cover_index(open_args, "/proc/sys") < open_args.size());
}

TEST_CASE("bwrap: a hidden path inside a cover is hidden again on top of it; nothing is covered inside a mask") {
    sbx::FsPlan p;
    p.mounts.push_back(sbx::Mount{sbx::MountKind::mask_file, "/proc/sys/kernel/random/boot_id", {}, {}, "hidden"});
    auto args = sbx::linux_sandbox::bwrap_fs_args(p);
    const auto cover = cover_index(args, "/proc/sys");
    REQUIRE(cover < args.size());
    std::size_t last_mask = 0;
    for (std::size_t i = 0; i + 2 < args.size(); ++i)
        if (args[i] == "--ro-bind" && args[i + 1] == "/dev/null" && args[i + 2] == "/proc/sys/kernel/random/boot_id")
            last_mask = i;
    CHECK(last_mask > cover);

    sbx::FsPlan hidden_proc;
    hidden_proc.mounts.push_back(sbx::Mount{sbx::MountKind::mask_dir, "/proc", {}, {}, "hidden"});
    auto hidden_args = sbx::linux_sandbox::bwrap_fs_args(hidden_proc);
    CHECK(cover_index(hidden_args, "/proc/sys") == hidden_args.size());
    CHECK(hidden_args.back() == "/proc");  // the mask is still made read-only
}

TEST_CASE("fs_plan: a write rule on /proc or /sys is left out, with a warning") {
    sbx::MemoryFs fs;
    fs.dir("/r").dir("/proc/sys/kernel").dir("/sys/kernel").dir("/srv/data");
    auto p = plan_ok({"/r", "/home/u", R"J({"sandbox": {"filesystem": {
        "allowWrite": ["/proc", "/proc/sys/kernel", "/sys/kernel", "/srv/data"]}}})J"},
                     fs);
    CHECK(has_mount(p, sbx::MountKind::bind, "/srv/data"));
    for (const auto& m : p.mounts) {
        CAPTURE(m.path);
        CHECK_FALSE(sbx::paths::at_or_under(m.path, "/proc"));
        CHECK_FALSE(sbx::paths::at_or_under(m.path, "/sys"));
    }
    std::size_t warned = 0;
    for (const auto& w : p.warnings) warned += w.message.find("is not mounted writable") != std::string::npos ? 1 : 0;
    CHECK(warned == 3);
}
