// bwrap_args(): the whole bubblewrap command line sbx-linux runs for a plan.
// Golden files: tests/golden/bwrap/run-NAME.args, one argument per line (the
// filesystem part alone is fs_plan_test.cpp's). Set SBX_UPDATE_GOLDEN=1 to
// rewrite them, then review the diff.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sbx/linux/bwrap.hpp"
#include "sbx/linux/write_wall.hpp"
#include "golden.hpp"

namespace {

namespace lx = sbx::linux_sandbox;

sbx::Mount mount(sbx::MountKind kind, const std::string& path) { return sbx::Mount{kind, path, path, {}, "test"}; }

// A plan as make_plan makes one for /r: the root and the temporary directory
// writable, the hooks read-only, ~/.ssh hidden, a placeholder over /r/HEAD.
sbx::Plan plan() {
    sbx::Plan p;
    p.root = "/r";
    p.cwd = "/r/src";
    p.tmpdir = "/tmp/sbx-1000/run-1";
    p.filesystem.mounts = {mount(sbx::MountKind::bind, "/r"), mount(sbx::MountKind::bind, "/tmp/sbx-1000/run-1"),
                           mount(sbx::MountKind::pin, "/r/.git"), mount(sbx::MountKind::mask_dir, "/home/u/.ssh"),
                           mount(sbx::MountKind::mask_file, "/home/u/.netrc"),
                           mount(sbx::MountKind::ro_bind, "/r/.git/hooks"), mount(sbx::MountKind::ro_bind, "/r/HEAD")};
    p.filesystem.placeholders = {sbx::PlaceholderOp{"/r/HEAD", sbx::Placeholder::file, {}, "test"}};
    return p;
}

// What sbx-linux knows of that run: a filter on fd 5, the root's group, the stage.
lx::BwrapLaunch launch() {
    lx::BwrapLaunch l;
    l.bwrap = "/usr/bin/bwrap";
    l.seccomp_fd = 5;
    l.group_dir = "/tmp/sbx-1000/groups/2049-131";
    l.stage_argv = {"/proc/self/fd/3", "--stage", "--exe-fd", "3", "--status-fd", "4", "--proxy-fd", "-1",
                    "--filtered", "1", "--", "make", "test"};
    return l;
}

void check_golden(const std::string& name, const sbx::Plan& p, const lx::BwrapLaunch& l) {
    std::string text;
    for (const auto& a : lx::bwrap_args(p, l)) text += a + "\n";
    sbx_test::check_golden("bwrap/run-" + name + ".args", text, "bubblewrap command line");
}

bool has(const std::vector<std::string>& args, const std::string& a) {
    return std::find(args.begin(), args.end(), a) != args.end();
}

// `flag` followed by `value` somewhere in `args`.
bool has_pair(const std::vector<std::string>& args, const std::string& flag, const std::string& value) {
    for (std::size_t i = 0; i + 1 < args.size(); ++i)
        if (args[i] == flag && args[i + 1] == value) return true;
    return false;
}

// The arguments after the first `flag`, `n` of them.
std::vector<std::string> after(const std::vector<std::string>& args, const std::string& flag, std::size_t n) {
    auto it = std::find(args.begin(), args.end(), flag);
    if (it == args.end() || static_cast<std::size_t>(args.end() - it) <= n) return {};
    return {it + 1, it + 1 + static_cast<std::ptrdiff_t>(n)};
}

}  // namespace

TEST_CASE("bwrap_args golden: a filtered run") {
    const auto p = plan();
    const auto l = launch();
    const auto args = lx::bwrap_args(p, l);
    CHECK(args.front() == "/usr/bin/bwrap");
    CHECK(after(args, "--seccomp", 1) == std::vector<std::string>{"5"});
    // The filesystem part as fs_plan_test.cpp's goldens have it, then the group's cover.
    const auto fs = lx::bwrap_fs_args(p.filesystem);
    CHECK(std::search(args.begin(), args.end(), fs.begin(), fs.end()) != args.end());
    CHECK(has_pair(args, "--tmpfs", "/tmp/sbx-1000/groups/2049-131"));
    CHECK(has_pair(args, "--remount-ro", "/tmp/sbx-1000/groups/2049-131"));
    CHECK(after(args, "--chdir", 2) == std::vector<std::string>{"/r/src", "--"});
    CHECK(std::equal(l.stage_argv.rbegin(), l.stage_argv.rend(), args.rbegin()));
    check_golden("filtered", p, l);
}

TEST_CASE("bwrap_args golden: a run without the seccomp filter") {
    auto l = launch();
    l.seccomp_fd.reset();
    const auto args = lx::bwrap_args(plan(), l);
    CHECK_FALSE(has(args, "--seccomp"));
    CHECK(has(args, "--disable-userns"));  // what keeps namespaces shut without it
    check_golden("unfiltered", plan(), l);
}

TEST_CASE("bwrap_args golden: the git exclude file is bound from its descriptor") {
    auto p = plan();
    p.filesystem.git_exclude = sbx::GitExclude{"/r/.git/info/exclude", {}, "/HEAD\n"};
    auto l = launch();
    l.exclude_fd = 7;
    const auto args = lx::bwrap_args(p, l);
    CHECK(after(args, "--ro-bind-data", 2) == std::vector<std::string>{"7", "/r/.git/info/exclude"});
    check_golden("git-exclude", p, l);
    // No descriptor, no bind: the launcher gives one whenever the plan has an exclude.
    CHECK_FALSE(has(lx::bwrap_args(p, launch()), "--ro-bind-data"));
}

TEST_CASE("bwrap_args golden: the group's other placeholders are read-only too") {
    auto l = launch();
    l.group_placeholders = {"/r/HEAD",               // this plan's own: bound once, by the plan
                            "/r/.envrc",             // another sandbox's: bound read-only here too
                            "/home/u/.ssh/config"};  // inside a hidden directory: nothing to cover
    const auto args = lx::bwrap_args(plan(), l);
    CHECK(std::count(args.begin(), args.end(), "/r/HEAD") == 2);
    CHECK(std::count(args.begin(), args.end(), "/r/.envrc") == 2);
    CHECK_FALSE(has(args, "/home/u/.ssh/config"));
    check_golden("group-placeholders", plan(), l);
}

TEST_CASE("bwrap_args: a group directory inside a hidden directory needs no cover of its own") {
    auto l = launch();
    l.group_dir = "/home/u/.ssh/sbx";
    CHECK_FALSE(has(lx::bwrap_args(plan(), l), "/home/u/.ssh/sbx"));
    l.group_dir.reset();  // a run that joined no group
    const auto args = lx::bwrap_args(plan(), l);
    CHECK(std::count(args.begin(), args.end(), "--tmpfs") == 1);  // the plan's hidden ~/.ssh alone
}

TEST_CASE("bwrap_args: every sandbox flag is given, with its argument, in the table's order") {
    const auto args = lx::bwrap_args(plan(), launch());
    std::size_t at = 1;
    for (const auto& f : lx::kSandboxFlags) {
        CAPTURE(f.flag);
        CHECK_FALSE(f.reason.empty());
        REQUIRE(at < args.size());
        CHECK(args[at++] == f.flag);
        if (!f.value.empty()) CHECK(args[at++] == f.value);
    }
    CHECK(args[at] == "--seccomp");
}

TEST_CASE("bwrap_args golden: where the stage makes the mounts") {
    auto p = plan();
    p.filesystem.git_exclude = sbx::GitExclude{"/r/.git/info/exclude", {}, "/HEAD\n"};
    auto l = launch();
    l.exclude_fd = 7;
    l.stage_mounts = true;
    const auto args = lx::bwrap_args(p, l);
    // The second user namespace is the stage's to make, after the mounts.
    CHECK_FALSE(has(args, "--disable-userns"));
    CHECK(has_pair(args, "--uid", "0"));
    CHECK(has_pair(args, "--gid", "0"));
    for (const auto& f : lx::kStageMountFlags) {
        CHECK_FALSE(f.reason.empty());
        CHECK(has_pair(args, std::string(f.flag), std::string(f.value)));
    }
    // After --cap-drop ALL, which every other capability stays dropped by.
    const auto drop = std::find(args.begin(), args.end(), "--cap-drop");
    const auto add = std::find(args.begin(), args.end(), "--cap-add");
    CHECK(drop < add);
    CHECK(std::count(args.begin(), args.end(), "--cap-add") == 4);
    // bubblewrap makes the base alone: no writable bind, data file, read-only or hidden path.
    CHECK_FALSE(has(args, "--bind"));
    CHECK_FALSE(has(args, "--ro-bind-data"));
    CHECK(std::count(args.begin(), args.end(), "--ro-bind") == 1);  // `/` alone
    CHECK_FALSE(has(args, "--tmpfs"));
    CHECK_FALSE(has(args, "--remount-ro"));
    CHECK_FALSE(has(args, "--ro-bind-try"));
    check_golden("stage-mounts", p, l);
}

TEST_CASE("bwrap_args: a protected symlink is the stage's to bind; where bubblewrap mounts, it is left out and said") {
    auto p = plan();
    auto link = mount(sbx::MountKind::ro_link, "/r/.mcp.json");
    link.source.clear();
    p.filesystem.mounts.push_back(link);
    auto l = launch();
    // bubblewrap makes every mount: the link is none of its arguments, and a warning names it.
    const auto by_bwrap = lx::bwrap_args(p, l);
    CHECK_FALSE(has(by_bwrap, std::string(lx::kLinkFlag)));
    CHECK_FALSE(has(by_bwrap, "/r/.mcp.json"));
    const auto unmade = lx::bubblewrap_unmade(p.filesystem);
    REQUIRE(unmade.size() == 1);
    CHECK(unmade[0].file == "/r/.mcp.json");
    CHECK(unmade[0].message.find("can be removed, renamed or replaced") != std::string::npos);
    CHECK(lx::bubblewrap_unmade(plan().filesystem).empty());
    // The stage makes them: its list binds the link, in the plan's order, and bubblewrap's has none.
    l.stage_mounts = true;
    CHECK_FALSE(has(lx::bwrap_args(p, l), "/r/.mcp.json"));
    const auto ops = lx::mount_ops(p, l);
    CHECK(has_pair(lx::stage_mount_ops(ops), std::string(lx::kLinkFlag), "/r/.mcp.json"));
    CHECK(has_pair(lx::stage_waiting_mount_ops(ops), std::string(lx::kLinkFlag), "/r/.mcp.json"));
    CHECK(lx::bubblewrap_made(ops).empty());
    CHECK(lx::mount_flag_arity(lx::kLinkFlag) == 1);
}

TEST_CASE("stage_mount_ops: every mount in bubblewrap's order, what bubblewrap made as --again") {
    auto p = plan();
    p.filesystem.git_exclude = sbx::GitExclude{"/r/.git/info/exclude", {}, "/HEAD\n"};
    auto l = launch();
    l.exclude_fd = 7;
    const auto all = lx::mount_ops(p, l);
    // Where no writable bind comes from /dev or /proc, the stage makes every
    // mount, in the same order: the writable binds and the data file too.
    CHECK(lx::stage_mount_ops(all) == all);
    CHECK(lx::bubblewrap_made(all).empty());
    CHECK(has_pair(all, "--bind", "/r"));
    CHECK(after(all, "--ro-bind-data", 2) == std::vector<std::string>{"7", "/r/.git/info/exclude"});
    CHECK(has_pair(all, "--ro-bind-try", "/proc/sys"));
    CHECK(has_pair(all, "--tmpfs", "/home/u/.ssh"));
    CHECK(has_pair(all, "--remount-ro", "/home/u/.ssh"));
    // Every flag of the list is one the stage reads, with the arguments it takes.
    for (std::size_t i = 0; i < all.size(); i += 1 + lx::mount_flag_arity(all[i])) {
        CAPTURE(all[i]);
        REQUIRE(lx::mount_flag_arity(all[i]) > 0);
    }
}

TEST_CASE("stage_mount_ops: a writable bind from /dev or /proc is bubblewrap's, put on top again in its place") {
    // The sandbox's /dev and /proc are its own, not the host's the plan means.
    const std::vector<std::string> all{"--bind", "/r", "/r", "--bind", "/dev/shm", "/dev/shm", "--ro-bind", "/r/.git/hooks",
                                       "/r/.git/hooks", "--bind", "/proc/self", "/x", "--tmpfs", "/h/.ssh"};
    CHECK(lx::bubblewrap_made(all) == std::vector<std::string>{"--bind", "/dev/shm", "/dev/shm", "--bind", "/proc/self", "/x"});
    CHECK(lx::stage_mount_ops(all) == std::vector<std::string>{"--bind", "/r", "/r", "--again", "/dev/shm", "--ro-bind",
                                                               "/r/.git/hooks", "/r/.git/hooks", "--again", "/x",
                                                               "--tmpfs", "/h/.ssh"});
}

TEST_CASE("bwrap_waiting_args: a sandbox started before its plan gets `/` and /proc alone; the stage makes /dev first") {
    auto l = launch();
    l.stage_mounts = true;
    l.seccomp_fd = 5;
    l.stage_argv = {"/proc/self/fd/3", "--stage", "--exe-fd", "3", "--status-fd", "4", "--orders-fd", "6"};
    const auto args = lx::bwrap_waiting_args(l, true);
    CHECK_FALSE(has(args, "--disable-userns"));
    CHECK(has_pair(args, "--seccomp", "5"));
    CHECK(has_pair(args, "--ro-bind", "/"));
    CHECK(has_pair(args, "--proc", "/proc"));
    CHECK_FALSE(has(args, "--dev"));
    CHECK_FALSE(has(args, "--bind"));
    CHECK_FALSE(has(args, "--chdir"));
    CHECK(std::equal(l.stage_argv.rbegin(), l.stage_argv.rend(), args.rbegin()));
    CHECK(has_pair(lx::bwrap_waiting_args(l, false), "--bind", "/"));  // filesystem.disabled

    auto p = plan();
    const auto ops = lx::mount_ops(p, launch());
    auto staged = lx::stage_waiting_mount_ops(ops);
    REQUIRE(staged.size() == ops.size() + 2);
    CHECK(staged[0] == "--dev");
    CHECK(staged[1] == "/dev");
    CHECK(std::vector<std::string>(staged.begin() + 2, staged.end()) == lx::stage_mount_ops(ops));
}

TEST_CASE("write_wall_paths: the writable rules' literal parts, /dev and /proc, none beneath another") {
    auto p = plan();
    auto rule = [](const std::string& pattern) { return sbx::PlanRule{sbx::FsRule::Kind::writable, pattern, "test", {}}; };
    p.rules = {rule("/r"), rule("/tmp/sbx-1000/run-1"), rule("/r/sub"), rule("/home/u/.cache/*/x"), rule("/r-b"),
               sbx::PlanRule{sbx::FsRule::Kind::protect, "/etc", "test", {}}};
    CHECK(lx::write_wall_paths(p) ==
          std::vector<std::string>{"/dev", "/home/u/.cache", "/proc", "/r", "/r-b", "/tmp/sbx-1000/run-1"});

    // From the rules, not the mounts: a writable bind no rule names stays outside.
    p.filesystem.mounts.push_back(mount(sbx::MountKind::bind, "/opt/wrong"));
    CHECK_FALSE(has(lx::write_wall_paths(p), "/opt/wrong"));

    // No rules (a plan another program wrote): the writable binds, the pins and tmpdir.
    p.rules.clear();
    CHECK(lx::write_wall_paths(p) == std::vector<std::string>{"/dev", "/opt/wrong", "/proc", "/r", "/tmp/sbx-1000/run-1"});

    // Nothing isolated: no wall at all.
    p.filesystem.isolated = false;
    CHECK(lx::write_wall_paths(p).empty());
}

TEST_CASE("mount_ops: where the plan caps TMPDIR, its writable bind is a tmpfs of that size; bubblewrap gets its own flags") {
    auto p = plan();
    const auto uncapped = lx::mount_ops(p, launch());
    CHECK(has_pair(uncapped, "--bind", "/tmp/sbx-1000/run-1"));
    CHECK_FALSE(has(uncapped, std::string(lx::kSizedTmpfsFlag)));
    p.limits[static_cast<std::size_t>(sbx::Limit::tmpdir)] = sbx::PlanLimit{8, "sbx's default", "raise it"};
    const auto ops = lx::mount_ops(p, launch());
    // In the bind's place, in the plan's order; the root's bind stays.
    CHECK(after(ops, std::string(lx::kSizedTmpfsFlag), 2) == std::vector<std::string>{"8388608", "/tmp/sbx-1000/run-1"});
    CHECK_FALSE(has_pair(ops, "/tmp/sbx-1000/run-1", "/tmp/sbx-1000/run-1"));
    CHECK(has_pair(ops, "--bind", "/r"));
    CHECK(ops.size() == uncapped.size());
    CHECK(lx::mount_flag_arity(lx::kSizedTmpfsFlag) == 2);
    // The stage makes it itself; bubblewrap, where it makes every mount, is told in its own flags.
    CHECK(lx::stage_mount_ops(ops) == ops);
    CHECK(lx::bubblewrap_made(ops).empty());
    const auto by_bwrap = lx::bwrap_args(p, launch());
    CHECK_FALSE(has(by_bwrap, std::string(lx::kSizedTmpfsFlag)));
    const auto at = std::find(by_bwrap.begin(), by_bwrap.end(), "--perms");
    REQUIRE(at != by_bwrap.end());
    CHECK(std::vector<std::string>(at, at + 6) ==
          std::vector<std::string>{"--perms", "0700", "--size", "8388608", "--tmpfs", "/tmp/sbx-1000/run-1"});
}
