// weaker_fs_rules(): the plan's mounts as Landlock grants, split around what is
// protected or hidden, over in-memory trees.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "sbx/core/fs_view.hpp"
#include "sbx/linux/weaker_rules.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/rules/fs_rules.hpp"
#include "sbx/rules/protected_paths.hpp"
#include "sbx/settings/policy.hpp"
#include "sbx/settings/settings.hpp"

namespace {

using Kind = sbx::linux_sandbox::LandlockGrant::Kind;
using Paths = std::vector<std::string>;

void mount(sbx::Plan& plan, sbx::MountKind kind, const std::string& path) {
    plan.filesystem.mounts.push_back(sbx::Mount{kind, path, path, {}, std::string(sbx::mount_kind_name(kind)) + " " + path});
}

void placeholder(sbx::Plan& plan, const std::string& path) {
    plan.filesystem.placeholders.push_back(sbx::PlaceholderOp{path, sbx::Placeholder::file, {}, "protected"});
    mount(plan, sbx::MountKind::ro_bind, path);
}

sbx::linux_sandbox::WeakerFsRules rules_ok(const sbx::Plan& plan, const sbx::FsView& fs,
                                           std::size_t max = sbx::linux_sandbox::kMaxLandlockGrants) {
    auto r = sbx::linux_sandbox::weaker_fs_rules(plan, fs, max);
    REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : sbx::to_string(r.error())));
    return std::move(*r);
}

// The paths granted `kind`, in the order of the grants.
Paths granted(const sbx::linux_sandbox::WeakerFsRules& r, Kind kind) {
    Paths out;
    for (const auto& g : r.grants)
        if (g.kind == kind) out.push_back(g.path);
    return out;
}

const sbx::linux_sandbox::LandlockGrant* grant_at(const sbx::linux_sandbox::WeakerFsRules& r, const std::string& path,
                                                  Kind kind) {
    for (const auto& g : r.grants)
        if (g.path == path && g.kind == kind) return &g;
    return nullptr;
}

// Whether the grants give `kind` at `path` (one at it, or a directory's above it).
bool allows(const sbx::linux_sandbox::WeakerFsRules& r, const std::string& path, Kind kind) {
    return std::any_of(r.grants.begin(), r.grants.end(), [&](const auto& g) {
        return g.kind == kind && (g.path == path || (g.directory && sbx::paths::at_or_under(path, g.path)));
    });
}

// A view whose listing of some directories fails, as one without read permission would.
class Unlistable final : public sbx::FsView {
public:
    Unlistable(const sbx::FsView& inner, std::set<std::string> closed) : inner_(inner), closed_(std::move(closed)) {}
    sbx::expected<std::optional<sbx::FileStat>> lstat(const std::string& p) const override { return inner_.lstat(p); }
    sbx::expected<std::string> readlink(const std::string& p) const override { return inner_.readlink(p); }
    sbx::expected<std::vector<std::string>> list(const std::string& p) const override {
        if (closed_.count(p)) return sbx::fail(sbx::Error(sbx::Errc::io_error, "Permission denied").in_file(p));
        return inner_.list(p);
    }
    sbx::expected<std::optional<std::string>> read_text(const std::string& p, std::size_t max) const override {
        return inner_.read_text(p, max);
    }

private:
    const sbx::FsView& inner_;
    std::set<std::string> closed_;
};

// A root /r with a repository: its hooks and config read-only, a missing .bashrc covered.
sbx::Plan repository_plan(sbx::MemoryFs& fs) {
    fs.file("/r/README.md").dir("/r/src").file("/r/src/main.c").dir("/r/.git/objects").dir("/r/.git/refs");
    fs.file("/r/.git/HEAD").file("/r/.git/config").dir("/r/.git/hooks").file("/r/.git/hooks/pre-commit");
    sbx::Plan plan;
    mount(plan, sbx::MountKind::bind, "/r");
    mount(plan, sbx::MountKind::pin, "/r/.git");
    mount(plan, sbx::MountKind::ro_bind, "/r/.git/hooks");
    mount(plan, sbx::MountKind::ro_bind, "/r/.git/config");
    placeholder(plan, "/r/.bashrc");
    return plan;
}

}  // namespace

TEST_CASE("weaker rules: the root is split around .git/config, .git/hooks and a missing .bashrc") {
    sbx::MemoryFs fs;
    const auto plan = repository_plan(fs);
    const auto r = rules_ok(plan, fs);
    CHECK(granted(r, Kind::write) == Paths{"/r/.git/HEAD", "/r/.git/objects", "/r/.git/refs", "/r/README.md", "/r/src"});
    CHECK(grant_at(r, "/r/README.md", Kind::write)->directory == false);
    CHECK(grant_at(r, "/r/src", Kind::write)->directory);
    // Nothing can be made, removed or renamed directly in /r or /r/.git: not .bashrc, not hooks.
    CHECK_FALSE(allows(r, "/r/.bashrc", Kind::write));
    CHECK_FALSE(allows(r, "/r/.git/hooks/pre-commit", Kind::write));
    CHECK_FALSE(allows(r, "/r/.git/config", Kind::write));
    CHECK(grant_at(r, "/r/src", Kind::write)->why.find("split around .bashrc, .git/config and .git/hooks") !=
          std::string::npos);
    // Nothing is hidden but /dev (not in this tree): `/` may be listed, its entries read.
    CHECK(granted(r, Kind::read) == Paths{"/r"});
    CHECK(granted(r, Kind::list) == Paths{"/"});
    CHECK(r.warnings.empty());
}

TEST_CASE("weaker rules: a name renamed after the run under bubblewrap cannot be made here either") {
    sbx::MemoryFs fs;
    fs.file("/r/README.md").dir("/r/src");
    sbx::Plan plan;
    mount(plan, sbx::MountKind::bind, "/r");
    plan.filesystem.neutralise.push_back(sbx::NeutraliseOp{"/r/.envrc", "direnv runs it"});
    const auto r = rules_ok(plan, fs);
    CHECK(granted(r, Kind::write) == Paths{"/r/README.md", "/r/src"});
    CHECK_FALSE(allows(r, "/r/.envrc", Kind::write));
    // Control: without it /r is one grant, and the name could be made.
    plan.filesystem.neutralise.clear();
    CHECK(allows(rules_ok(plan, fs), "/r/.envrc", Kind::write));
}

TEST_CASE("weaker rules: of /dev only the devices every program opens, /dev/tty with its ioctls") {
    sbx::MemoryFs fs;
    fs.file("/dev/null").file("/dev/zero").file("/dev/urandom").file("/dev/random").file("/dev/tty");
    fs.file("/dev/console").file("/dev/tty1").file("/dev/ptmx").dir("/dev/pts").file("/dev/pts/0");
    fs.dir("/dev/shm").file("/dev/shm/other-program").dir("/dev/input").file("/dev/input/event0").dir("/etc");
    sbx::Plan plan;
    const auto r = rules_ok(plan, fs);
    CHECK(granted(r, Kind::device) == Paths{"/dev/null", "/dev/random", "/dev/urandom", "/dev/zero"});  // no /dev/full here
    CHECK(granted(r, Kind::terminal) == Paths{"/dev/tty"});
    CHECK(granted(r, Kind::read) == Paths{"/etc"});
    // Its names stay listable through `/`, as every hidden path's: names, no content.
    CHECK(granted(r, Kind::list) == Paths{"/"});
    for (const auto* p : {"/dev", "/dev/pts/0", "/dev/console", "/dev/tty1", "/dev/ptmx", "/dev/shm/other-program",
                          "/dev/input/event0"}) {
        CAPTURE(p);
        for (const auto k : {Kind::read, Kind::write, Kind::device, Kind::terminal}) CHECK_FALSE(allows(r, p, k));
    }
    CHECK(grant_at(r, "/dev/tty", Kind::terminal)->why.find("the command's own or none") != std::string::npos);
    // A device granted also under a writable place keeps its own grant (tidy drops none of them).
    sbx::Plan writable;
    mount(writable, sbx::MountKind::bind, "/dev");
    const auto w = rules_ok(writable, fs);
    CHECK(grant_at(w, "/dev/null", Kind::device) != nullptr);
}

TEST_CASE("weaker rules: hidden ~/.ssh and ~/.netrc leave their ancestors listable and the rest readable") {
    sbx::MemoryFs fs;
    fs.file("/etc/passwd").dir("/usr/bin").dir("/home/v").file("/home/u/.profile").dir("/home/u/work");
    fs.dir("/home/u/.ssh").file("/home/u/.ssh/id_ed25519").file("/home/u/.netrc");
    sbx::Plan plan;
    mount(plan, sbx::MountKind::mask_dir, "/home/u/.ssh");
    mount(plan, sbx::MountKind::mask_file, "/home/u/.netrc");
    const auto r = rules_ok(plan, fs);
    CHECK(granted(r, Kind::list) == Paths{"/", "/home", "/home/u"});
    CHECK(granted(r, Kind::read) == Paths{"/etc", "/home/u/.profile", "/home/u/work", "/home/v", "/usr"});
    CHECK(grant_at(r, "/home/u/.profile", Kind::read)->directory == false);
    CHECK_FALSE(allows(r, "/home/u/.ssh/id_ed25519", Kind::read));
    // Listing is inherited: the names in ~/.ssh can be listed through the grant on `/`.
    CHECK(grant_at(r, "/home/u/.ssh", Kind::list) == nullptr);
    CHECK_FALSE(allows(r, "/home/u/.netrc", Kind::read));
    CHECK(grant_at(r, "/home/u", Kind::list)->why == "listable, not readable: holds the hidden .netrc and .ssh");
    CHECK(granted(r, Kind::write).empty());  // no writable bind
}

TEST_CASE("weaker rules: paths re-opened inside a hidden directory are readable, and writable when bound so") {
    sbx::MemoryFs fs;
    fs.dir("/home/u/projects/app/src").dir("/home/u/projects/shared").dir("/home/u/.aws").file("/home/u/.profile");
    fs.dir("/home/u/.config/gh").file("/home/u/.config/gh/config.yml").file("/home/u/.config/gh/hosts.yml");
    sbx::Plan plan;
    mount(plan, sbx::MountKind::mask_dir, "/home/u");
    mount(plan, sbx::MountKind::bind, "/home/u/projects/app");
    mount(plan, sbx::MountKind::ro_bind, "/home/u/projects/shared");
    // A narrower hidden file inside a re-opened directory stays hidden.
    mount(plan, sbx::MountKind::ro_bind, "/home/u/.config/gh");
    mount(plan, sbx::MountKind::mask_file, "/home/u/.config/gh/hosts.yml");
    const auto r = rules_ok(plan, fs);
    CHECK(granted(r, Kind::read) ==
          Paths{"/home/u/.config/gh/config.yml", "/home/u/projects/app", "/home/u/projects/shared"});
    CHECK(granted(r, Kind::list) == Paths{"/", "/home", "/home/u/.config/gh"});
    CHECK(granted(r, Kind::write) == Paths{"/home/u/projects/app"});
    CHECK_FALSE(allows(r, "/home/u/.profile", Kind::read));
    CHECK_FALSE(allows(r, "/home/u/.aws", Kind::read));
    CHECK_FALSE(allows(r, "/home/u/.config/gh/hosts.yml", Kind::read));
    CHECK(grant_at(r, "/home/u/projects/shared", Kind::read)->why == "readable: ro-bind /home/u/projects/shared");
}

TEST_CASE("weaker rules: a symlink gets no grant, on either side") {
    sbx::MemoryFs fs;
    fs.dir("/r/.git").file("/r/.git/config").file("/r/notes").symlink("/r/link", "/etc").dir("/etc");
    fs.dir("/home/u/.ssh").symlink("/home/u/dots", "/r");
    sbx::Plan plan;
    mount(plan, sbx::MountKind::bind, "/r");
    mount(plan, sbx::MountKind::ro_bind, "/r/.git/config");
    mount(plan, sbx::MountKind::mask_dir, "/home/u/.ssh");
    const auto r = rules_ok(plan, fs);
    CHECK(granted(r, Kind::write) == Paths{"/r/notes"});
    CHECK(grant_at(r, "/home/u/dots", Kind::read) == nullptr);
    CHECK(grant_at(r, "/r/link", Kind::write) == nullptr);
    for (const auto& g : r.grants) CHECK(g.path != "/r/link");
}

TEST_CASE("weaker rules: a protected symlink's name is a stop: its directory gets no write of its own") {
    sbx::MemoryFs fs;
    fs.dir("/r/sub").file("/r/sub/notes").symlink("/r/sub/.mcp.json", "/shared/mcp.json").dir("/shared");
    sbx::Plan plan;
    mount(plan, sbx::MountKind::bind, "/r");
    const auto open = rules_ok(plan, fs);
    CHECK(allows(open, "/r/sub", Kind::write));  // without it, /r/sub's entries could be removed
    plan.filesystem.mounts.push_back(sbx::Mount{sbx::MountKind::ro_link, "/r/sub/.mcp.json", {}, {}, "protected link"});
    const auto r = rules_ok(plan, fs);
    CHECK_FALSE(allows(r, "/r/sub", Kind::write));  // no removing, renaming or replacing in it
    CHECK_FALSE(allows(r, "/r/sub/.mcp.json", Kind::write));
    CHECK(allows(r, "/r/sub/notes", Kind::write));
}

TEST_CASE("weaker rules: a writable place with nothing protected beneath is one grant") {
    sbx::MemoryFs fs;
    fs.dir("/w/a/b").file("/w/a/b/c").file("/f");
    sbx::Plan plan;
    mount(plan, sbx::MountKind::bind, "/w");
    mount(plan, sbx::MountKind::bind, "/w/a");  // inside the first: covered by it
    mount(plan, sbx::MountKind::bind, "/f");    // a file (allowWrite of one)
    const auto r = rules_ok(plan, fs);
    CHECK(granted(r, Kind::write) == Paths{"/f", "/w"});
    CHECK(grant_at(r, "/w", Kind::write)->why == "writable: bind /w");
    CHECK(grant_at(r, "/f", Kind::write)->directory == false);
    CHECK(r.grants.size() == 5);  // and `/` split around /dev: listed, /f and /w read
}

TEST_CASE("weaker rules: a directory that cannot be listed gets nothing beneath it, and a warning") {
    sbx::MemoryFs mem;
    auto plan = repository_plan(mem);
    mem.dir("/home/u/.ssh").file("/home/u/.ssh/id").dir("/home/u/work");
    mount(plan, sbx::MountKind::mask_dir, "/home/u/.ssh");
    const Unlistable fs(mem, {"/r/.git", "/home/u"});
    const auto r = rules_ok(plan, fs);
    CHECK(granted(r, Kind::write) == Paths{"/r/README.md", "/r/src"});
    CHECK(granted(r, Kind::list) == Paths{"/", "/home"});
    CHECK_FALSE(allows(r, "/home/u/work", Kind::read));
    CHECK(grant_at(r, "/home/u", Kind::list) == nullptr);
    REQUIRE(r.warnings.size() == 2);
    CHECK(r.warnings[0].file == "/r/.git");
    CHECK(r.warnings[0].message.find("cannot list /r/.git (Permission denied)") != std::string::npos);
    CHECK(r.warnings[0].message.find("protected paths config and hooks") != std::string::npos);
    CHECK(r.warnings[0].message.find("writable") != std::string::npos);
    CHECK(r.warnings[1].file == "/home/u");
    CHECK(r.warnings[1].message.find("hidden path .ssh") != std::string::npos);
    CHECK(r.warnings[1].message.find("readable") != std::string::npos);
    CHECK(r.warnings[1].scope == sbx::WarningScope::linux_only);
}

TEST_CASE("weaker rules: an entry that cannot be looked at gets nothing, and a warning") {
    sbx::MemoryFs fs;
    auto plan = repository_plan(fs);
    fs.unreadable("/r/.git");  // lstat beneath it fails
    const auto r = rules_ok(plan, fs);
    CHECK(granted(r, Kind::write) == Paths{"/r/README.md", "/r/src"});
    REQUIRE(r.warnings.size() == 3);  // HEAD, objects, refs
    CHECK(r.warnings[0].file == "/r/.git/HEAD");
    CHECK(r.warnings[0].message.find("cannot look at /r/.git/HEAD (permission denied), so it is not writable as "
                                     "part of /r/.git") != std::string::npos);
}

TEST_CASE("weaker rules: more grants than the limit fail, saying why") {
    sbx::MemoryFs fs;
    for (int i = 0; i < 30; ++i) fs.file("/r/f" + std::to_string(i));
    fs.file("/r/.git/config");
    sbx::Plan plan;
    mount(plan, sbx::MountKind::bind, "/r");
    mount(plan, sbx::MountKind::ro_bind, "/r/.git/config");
    // 30 files, /r/.git's entries (none but config), and `/` split around /dev (listed, /r read).
    CHECK(rules_ok(plan, fs, 32).grants.size() == 32);
    auto r = sbx::linux_sandbox::weaker_fs_rules(plan, fs, 31);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == sbx::Errc::sandbox_unavailable);
    CHECK(r.error().message.find("needs 32 Landlock rules, more than the limit of 31") != std::string::npos);
    r = sbx::linux_sandbox::weaker_fs_rules(plan, fs, 10);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().message.find("more than 10 Landlock rules") != std::string::npos);
    CHECK(r.error().message.find("the limit was reached while splitting /r") != std::string::npos);
    CHECK(r.error().file == "/r");
}

TEST_CASE("weaker rules: a name that shares a prefix with a protected or hidden path is not beneath it") {
    sbx::MemoryFs fs;
    fs.dir("/r/.git").file("/r/.git/config").dir("/r/.gitx").dir("/r/.git-x").dir("/home/u/.ssh").dir("/home/u/.sshx");
    sbx::Plan plan;
    mount(plan, sbx::MountKind::bind, "/r");
    mount(plan, sbx::MountKind::ro_bind, "/r/.git");
    mount(plan, sbx::MountKind::mask_dir, "/home/u/.ssh");
    const auto r = rules_ok(plan, fs);
    CHECK(granted(r, Kind::write) == Paths{"/r/.git-x", "/r/.gitx"});
    CHECK(allows(r, "/home/u/.sshx", Kind::read));
    CHECK_FALSE(allows(r, "/home/u/.ssh", Kind::read));
}

TEST_CASE("weaker rules: paths that do not exist get nothing, and are no error") {
    sbx::MemoryFs fs;
    fs.dir("/etc");
    sbx::Plan plan;
    mount(plan, sbx::MountKind::bind, "/tmp/sbx-made-later");
    mount(plan, sbx::MountKind::mask_dir, "/gone");
    const auto r = rules_ok(plan, fs);
    CHECK(granted(r, Kind::write).empty());
    CHECK(granted(r, Kind::read) == Paths{"/etc"});  // `/` is still split around /gone: it may appear
    CHECK(granted(r, Kind::list) == Paths{"/"});
    CHECK(r.warnings.empty());
}

TEST_CASE("weaker rules: a plan that isolates nothing reads and writes `/`") {
    sbx::MemoryFs fs;
    sbx::Plan plan;
    plan.filesystem.isolated = false;
    mount(plan, sbx::MountKind::mask_dir, "/home");  // not looked at
    const auto r = rules_ok(plan, fs);
    REQUIRE(r.grants.size() == 2);
    CHECK(r.grants[0].path == "/");
    CHECK(r.grants[0].kind == Kind::read);
    CHECK(r.grants[1].path == "/");
    CHECK(r.grants[1].kind == Kind::write);
}

TEST_CASE("weaker rules: grants are sorted by path then kind, none twice") {
    sbx::MemoryFs fs;
    fs.dir("/a/b").dir("/a/c").dir("/a-b");
    sbx::Plan plan;
    mount(plan, sbx::MountKind::mask_dir, "/a/c");
    mount(plan, sbx::MountKind::bind, "/a/b");
    mount(plan, sbx::MountKind::bind, "/a/b");
    const auto r = rules_ok(plan, fs);
    for (std::size_t i = 1; i < r.grants.size(); ++i) {
        const auto& x = r.grants[i - 1];
        const auto& y = r.grants[i];
        CHECK((x.path < y.path || (x.path == y.path && x.kind < y.kind)));
    }
    CHECK(granted(r, Kind::write) == Paths{"/a/b"});
    CHECK(granted(r, Kind::read) == Paths{"/a-b", "/a/b"});
}

// Made by the planner from settings: what the weaker sandbox lets the command
// do is never more than explain allows.
TEST_CASE("weaker rules: from a real plan, nothing beyond what the rules allow") {
    sbx::MemoryFs fs;
    fs.dir("/r/src").file("/r/src/main.c").dir("/r/.git/objects").dir("/r/.git/refs").file("/r/.git/HEAD", "ref: x\n");
    fs.file("/r/.git/config").dir("/r/.git/hooks").file("/r/.git/hooks/pre-commit.sample").file("/r/README.md");
    fs.dir("/home/u/.ssh").file("/home/u/.ssh/id_ed25519").file("/home/u/.profile").dir("/home/u/.claude");
    fs.dir("/home/u/.ssh/public").file("/home/u/.ssh/public/key.pub").file("/etc/hosts");
    const std::string settings =
        R"J({"sandbox": {"filesystem": {"denyRead": ["~/.ssh"], "allowRead": ["~/.ssh/public"]}}})J";
    sbx::SettingsSource src{sbx::LayerKind::user, "/home/u/.claude/settings.json", {"/home/u", "/home/u"}, "/r"};
    auto parsed = sbx::parse_settings(settings, src);
    REQUIRE(parsed.has_value());
    std::vector<sbx::Settings> layers;
    layers.push_back(std::move(*parsed));
    auto policy = sbx::merge(std::move(layers), {}, fs);
    REQUIRE(policy.has_value());
    auto prot = sbx::protected_paths("/r", "/home/u", fs);
    REQUIRE(prot.has_value());
    auto rules = sbx::compile_fs_rules(*policy, {"/r", "/tmp/sbx-test", "/home/u"}, prot->paths, fs);
    REQUIRE(rules.has_value());
    auto fs_plan = sbx::make_fs_plan(*rules, fs);
    REQUIRE(fs_plan.has_value());
    sbx::Plan plan;
    plan.filesystem = std::move(*fs_plan);
    const auto r = rules_ok(plan, fs);

    CHECK_FALSE(allows(r, "/r", Kind::write));
    CHECK_FALSE(allows(r, "/r/.git", Kind::write));
    CHECK_FALSE(allows(r, "/r/.git/config", Kind::write));
    CHECK_FALSE(allows(r, "/r/.git/hooks/pre-commit.sample", Kind::write));
    CHECK(allows(r, "/r/src/main.c", Kind::write));
    CHECK(allows(r, "/r/README.md", Kind::write));
    CHECK(allows(r, "/r/.git/objects", Kind::write));
    CHECK_FALSE(allows(r, "/home/u/.ssh/id_ed25519", Kind::read));
    CHECK(allows(r, "/home/u/.ssh/public/key.pub", Kind::read));
    CHECK(allows(r, "/etc/hosts", Kind::read));
    CHECK(r.warnings.empty());
    for (const auto& p : {"/r", "/r/src", "/r/src/main.c", "/r/README.md", "/r/.git", "/r/.git/HEAD", "/r/.git/objects",
                          "/r/.git/refs", "/r/.git/config", "/r/.git/hooks", "/r/.git/hooks/pre-commit.sample",
                          "/home/u", "/home/u/.profile", "/home/u/.ssh", "/home/u/.ssh/id_ed25519",
                          "/home/u/.ssh/public/key.pub", "/etc/hosts"}) {
        CAPTURE(p);
        if (allows(r, p, Kind::write)) CHECK(sbx::decide(*rules, p, sbx::Access::write).allowed);
        if (allows(r, p, Kind::read)) CHECK(sbx::decide(*rules, p, sbx::Access::read).allowed);
    }
}
