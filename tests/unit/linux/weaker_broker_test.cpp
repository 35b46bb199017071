// WeakerBroker: which changes the weaker sandbox's file broker makes for the
// command (where the plan allows and Landlock would refuse), over the grants
// weaker_fs_rules() makes of an in-memory tree.
#include <doctest/doctest.h>

#include <string>

#include "sbx/core/fs_view.hpp"
#include "sbx/linux/weaker_broker.hpp"
#include "sbx/linux/weaker_rules.hpp"
#include "sbx/plan/plan.hpp"

namespace {

using sbx::linux_sandbox::BrokerStep;
using sbx::linux_sandbox::FileChange;

void mount(sbx::Plan& plan, sbx::MountKind kind, const std::string& path) {
    plan.filesystem.mounts.push_back(sbx::Mount{kind, path, path, {}, std::string(sbx::mount_kind_name(kind)) + " " + path});
}

// A root /r with a repository (its hooks and config read-only), a covered
// .vscode, a name renamed after the run (.envrc), and TMPDIR elsewhere.
sbx::Plan repository_plan(sbx::MemoryFs& fs) {
    fs.file("/r/README.md").dir("/r/src").file("/r/src/main.c").dir("/r/.git/objects").dir("/r/.git/refs");
    fs.file("/r/.git/HEAD").file("/r/.git/config").dir("/r/.git/hooks").file("/r/.git/hooks/pre-commit");
    fs.dir("/r/.vscode").dir("/tmp/sbx-t").file("/home/u/.bashrc").file("/dev/null").file("/dev/sda");
    sbx::Plan plan;
    mount(plan, sbx::MountKind::bind, "/r");
    mount(plan, sbx::MountKind::bind, "/tmp/sbx-t");
    mount(plan, sbx::MountKind::pin, "/r/.git");
    mount(plan, sbx::MountKind::ro_bind, "/r/.git/hooks");
    mount(plan, sbx::MountKind::ro_bind, "/r/.git/config");
    mount(plan, sbx::MountKind::ro_bind, "/r/.vscode");
    plan.filesystem.neutralise.push_back(sbx::NeutraliseOp{"/r/.envrc", "direnv runs it"});
    return plan;
}

sbx::linux_sandbox::WeakerBroker broker_of(const sbx::Plan& plan, const sbx::FsView& fs) {
    auto rules = sbx::linux_sandbox::weaker_fs_rules(plan, fs);
    REQUIRE(rules.has_value());
    return sbx::linux_sandbox::WeakerBroker(plan, *rules);
}

}  // namespace

TEST_CASE("weaker broker: what Landlock grants, the kernel does") {
    sbx::MemoryFs fs;
    const auto b = broker_of(repository_plan(fs), fs);
    CHECK(b.step(FileChange::make, "/r/src/new.c") == BrokerStep::kernel);
    CHECK(b.step(FileChange::make_dir, "/r/src/lib") == BrokerStep::kernel);
    CHECK(b.step(FileChange::remove, "/r/src/main.c") == BrokerStep::kernel);
    CHECK(b.step(FileChange::write, "/r/README.md") == BrokerStep::kernel);  // a file's own grant
    CHECK(b.step(FileChange::make, "/r/.git/objects/ab") == BrokerStep::kernel);
    CHECK(b.step(FileChange::rename, "/r/src/b.c", "/r/src/main.c") == BrokerStep::kernel);
    CHECK(b.step(FileChange::make, "/tmp/sbx-t/x") == BrokerStep::kernel);
    // A device of kWeakerDevices, written in place.
    CHECK(b.landlock_allows(FileChange::write, "/dev/null"));
    CHECK_FALSE(b.landlock_allows(FileChange::make, "/dev/null"));
    CHECK_FALSE(b.landlock_allows(FileChange::write, "/dev/sda"));
}

TEST_CASE("weaker broker: new names at the root's top and in .git are the broker's") {
    sbx::MemoryFs fs;
    const auto b = broker_of(repository_plan(fs), fs);
    CHECK(b.step(FileChange::make, "/r/notes.md") == BrokerStep::broker);
    CHECK(b.step(FileChange::make_dir, "/r/lib") == BrokerStep::broker);
    // What lies in a folder made at the top has no grant either.
    CHECK(b.step(FileChange::make, "/r/lib/a.c") == BrokerStep::broker);
    CHECK(b.step(FileChange::write, "/r/lib/a.c") == BrokerStep::broker);
    // sed -i: a temporary file beside it, renamed over it.
    CHECK(b.step(FileChange::rename, "/r/README.md", "/r/sedXYZ") == BrokerStep::broker);
    CHECK(b.step(FileChange::remove, "/r/README.md") == BrokerStep::broker);
    // git commit: its lock files in .git.
    CHECK(b.step(FileChange::make, "/r/.git/index.lock") == BrokerStep::broker);
    CHECK(b.step(FileChange::rename, "/r/.git/index", "/r/.git/index.lock") == BrokerStep::broker);
    // Into a granted folder from the top.
    CHECK(b.step(FileChange::rename, "/r/src/notes.md", "/r/notes.md") == BrokerStep::broker);
    CHECK(b.step(FileChange::link, "/r/notes2.md", "/r/notes.md") == BrokerStep::broker);
}

TEST_CASE("weaker broker: what is protected, or a mount point, is the kernel's to refuse") {
    sbx::MemoryFs fs;
    const auto b = broker_of(repository_plan(fs), fs);
    for (const char* p : {"/r/.git/config", "/r/.git/hooks/pre-commit", "/r/.git/hooks/post-checkout",
                          "/r/.vscode/settings.json", "/r/.envrc", "/r/.vscode"}) {
        CAPTURE(p);
        CHECK(b.step(FileChange::make, p) == BrokerStep::kernel);
        CHECK(b.step(FileChange::write, p) == BrokerStep::kernel);
        CHECK(b.step(FileChange::remove, p) == BrokerStep::kernel);
        // Neither renamed in from a name of the command's, nor away.
        CHECK(b.step(FileChange::rename, p, "/r/lib") == BrokerStep::kernel);
        CHECK(b.step(FileChange::rename, "/r/lib", p) == BrokerStep::kernel);
        CHECK(b.step(FileChange::link, p, "/r/notes.md") == BrokerStep::kernel);
        CHECK(b.step(FileChange::link, "/r/notes.md", p) == BrokerStep::kernel);
    }
    CHECK(b.step(FileChange::make_dir, "/r/.envrc") == BrokerStep::kernel);
    CHECK(b.step(FileChange::make_dir, "/r/.vscode") == BrokerStep::kernel);
    // .git holds protected paths: not removed, renamed, replaced or linked away.
    CHECK(b.step(FileChange::rename, "/r/moved-git", "/r/.git") == BrokerStep::kernel);
    CHECK(b.step(FileChange::rename, "/r/.git", "/r/lib") == BrokerStep::kernel);
    CHECK(b.step(FileChange::remove, "/r/.git") == BrokerStep::kernel);
    CHECK(b.step(FileChange::make, "/r/.git") == BrokerStep::kernel);  // a symbolic link in its place
    // The root itself and a writable bind are mount points.
    CHECK(b.step(FileChange::rename, "/r2", "/r") == BrokerStep::kernel);
    CHECK(b.step(FileChange::remove, "/tmp/sbx-t") == BrokerStep::kernel);
    // Outside every writable bind.
    CHECK(b.step(FileChange::make, "/home/u/.bashrc") == BrokerStep::kernel);
    CHECK(b.step(FileChange::make, "/home/u/x") == BrokerStep::kernel);
    CHECK(b.step(FileChange::rename, "/home/u/x", "/r/notes.md") == BrokerStep::kernel);
    CHECK(b.step(FileChange::rename, "/r/notes.md", "/home/u/x") == BrokerStep::kernel);
    CHECK(b.step(FileChange::make, "/") == BrokerStep::kernel);
}

TEST_CASE("weaker broker: a writable place inside a protected one is writable again, the nearest deciding") {
    sbx::MemoryFs fs;
    fs.dir("/r/.claude/projects").file("/r/.claude/settings.json");
    sbx::Plan plan;
    mount(plan, sbx::MountKind::bind, "/r");
    mount(plan, sbx::MountKind::ro_bind, "/r/.claude");
    mount(plan, sbx::MountKind::bind, "/r/.claude/projects");
    mount(plan, sbx::MountKind::mask_file, "/r/.claude/projects/secret");
    const auto b = broker_of(plan, fs);
    CHECK(b.may_change("/r/.claude/projects/a"));
    CHECK_FALSE(b.may_change("/r/.claude/settings.json"));
    CHECK_FALSE(b.may_change("/r/.claude/projects/secret"));
    CHECK(b.step(FileChange::make, "/r/.claude/x") == BrokerStep::kernel);
    CHECK(b.step(FileChange::make, "/r/notes") == BrokerStep::broker);
}

TEST_CASE("weaker broker: a plan that does not isolate the filesystem wants none") {
    sbx::MemoryFs fs;
    sbx::Plan plan;
    plan.filesystem.isolated = false;
    const auto b = broker_of(plan, fs);
    CHECK_FALSE(b.active());
    CHECK(b.step(FileChange::make, "/r/x") == BrokerStep::kernel);
}

TEST_CASE("weaker broker: a new name a neutraliseNew pattern matches is the kernel's to refuse, by every route") {
    sbx::MemoryFs fs;
    auto plan = repository_plan(fs);
    fs.dir("/r/sub").file("/r/sub/AGENT-old.md").file("/r/sub/notes");
    mount(plan, sbx::MountKind::ro_bind, "/r/sub/AGENT-old.md");
    plan.filesystem.neutralise_new.push_back(sbx::NeutraliseNewOp{"/r/sub", "AGENT-*.md", {"AGENT-old.md"}, "agent files"});
    auto rules = sbx::linux_sandbox::weaker_fs_rules(plan, fs);
    REQUIRE(rules.has_value());
    // The directory is split: no grant of its own, so that what is made there is asked about.
    for (const auto& g : rules->grants)
        if (g.kind == sbx::linux_sandbox::LandlockGrant::Kind::write) CHECK_MESSAGE(g.path != "/r/sub", "/r/sub is granted whole");
    const sbx::linux_sandbox::WeakerBroker b(plan, *rules);
    CHECK(b.step(FileChange::make, "/r/sub/AGENT-new.md") == BrokerStep::kernel);
    CHECK(b.step(FileChange::make_dir, "/r/sub/AGENT-dir.md") == BrokerStep::kernel);
    CHECK(b.step(FileChange::rename, "/r/sub/AGENT-moved.md", "/r/sub/notes") == BrokerStep::kernel);
    CHECK(b.step(FileChange::link, "/r/sub/AGENT-linked.md", "/r/sub/notes") == BrokerStep::kernel);
    CHECK(b.step(FileChange::remove, "/r/sub/AGENT-old.md") == BrokerStep::kernel);
    CHECK_FALSE(b.landlock_allows(FileChange::make, "/r/sub/AGENT-new.md"));
    // The other names of the directory, and the pattern's names elsewhere, are made as before.
    CHECK(b.step(FileChange::make, "/r/sub/AGENT-new.txt") == BrokerStep::broker);
    CHECK(b.step(FileChange::rename, "/r/sub/renamed", "/r/sub/notes") == BrokerStep::broker);
    CHECK(b.step(FileChange::make, "/r/AGENT-new.md") == BrokerStep::broker);
    CHECK(b.step(FileChange::make, "/r/sub/x/AGENT-new.md") == BrokerStep::broker);
}
