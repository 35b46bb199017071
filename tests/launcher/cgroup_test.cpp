// A sandbox's own cgroup v2 (launchers/linux/cgroup.cpp): where it may be
// made, which file gets which value, and what it writes, reads, kills and
// removes, over a directory of the real disk that stands in for the cgroup
// tree. Where cgroupfs behaves otherwise (rmdir of a directory holding
// control files), the test says so at the case.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

#include "../unit/temp_dir.hpp"
#include "linux/cgroup.hpp"

namespace {

using sbx::linux_sandbox::CgroupLimits;
using sbx::linux_sandbox::CgroupParent;
using sbx::linux_sandbox::CgroupTreeView;
using sbx::linux_sandbox::SandboxCgroup;
using sbx::linux_sandbox::WhereMissing;
using sbx::linux_sandbox::find_cgroup_parent;
using sbx::linux_sandbox::given_cgroup_parent;
using sbx::linux_sandbox::host_cgroup_tree;

// The caller's own cgroup in a systemd user session: its parent, app.slice,
// is the user's, with memory and pids handed down.
constexpr std::string_view kSelf = "0::/user.slice/user@1000.service/app.slice/term.scope\n";
constexpr std::string_view kAppSlice = "/user.slice/user@1000.service/app.slice";

// A mountinfo text: the root filesystem, a cgroup v1 hierarchy, then the
// cgroup2 one at `point` (escaped as mountinfo escapes it) showing `root`.
std::string mountinfo_with(const std::string& point, const std::string& root = "/") {
    return "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw,errors=remount-ro\n"
           "35 25 0:30 / /sys/fs/cgroup/memory rw,nosuid,nodev shared:12 - cgroup cgroup rw,memory\n"
           "30 25 0:26 " +
           root + " " + point + " rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
}

// A stand-in cgroup tree in a temporary directory: `top` below it is the
// cgroup2 mount point, with the user's app.slice and the caller's term.scope
// in it; app.slice's cgroup.subtree_control holds `subtree_control`, and
// app.slice is marked as delegated (user.delegate "1", as systemd marks a
// unit's cgroup with Delegate=yes) unless `delegated` is false.
struct StandIn {
    explicit StandIn(const std::string& subtree_control = "cpu memory pids\n", const std::string& top = "cg",
                     bool delegated = true)
        : mount(d.at(top)), parent(mount + std::string(kAppSlice)) {
        d.mkdir(top + std::string(kAppSlice) + "/term.scope");
        d.write(top + std::string(kAppSlice) + "/cgroup.subtree_control", subtree_control);
        d.touch(top + std::string(kAppSlice) + "/cgroup.procs");
        if (delegated) REQUIRE(::setxattr(parent.c_str(), "user.delegate", "1", 1, 0) == 0);
    }
    sbx_test::TempDir d{"sbx-cgroup"};
    std::string mount;
    std::string parent;  // app.slice: where the sandbox's cgroup goes
};

// A view of the real disk that records every path it is asked about.
struct Recorder {
    std::vector<std::string> asked;
    CgroupTreeView view() {
        const CgroupTreeView host = host_cgroup_tree();
        return CgroupTreeView{
            [this, host](const std::string& path) {
                asked.push_back(path);
                return host.read_text(path);
            },
            [this, host](const std::string& path) {
                asked.push_back(path);
                return host.writable(path);
            },
            [this, host](const std::string& path) {
                asked.push_back(path);
                return host.delegated(path);
            },
        };
    }
};

bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }

std::string text_of(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("find_cgroup_parent: the parent of the caller's cgroup, delegated with memory and pids, is chosen") {
    StandIn s;
    const CgroupParent p = find_cgroup_parent(mountinfo_with(s.mount), kSelf, host_cgroup_tree());
    CHECK(p.found());
    CHECK(p.dir == s.parent);
    CHECK(contains(p.why, "memory and pids"));
}

TEST_CASE("find_cgroup_parent: only files below the mount point are looked at") {
    StandIn s;
    Recorder r;
    CHECK(find_cgroup_parent(mountinfo_with(s.mount), kSelf, r.view()).found());
    // Caller at the top level: its parent is the mount point itself.
    s.d.write("cg/cgroup.subtree_control", "memory pids\n");
    s.d.touch("cg/cgroup.procs");
    REQUIRE(::setxattr(s.mount.c_str(), "user.delegate", "1", 1, 0) == 0);
    const CgroupParent top = find_cgroup_parent(mountinfo_with(s.mount), "0::/user.slice\n", r.view());
    CHECK(top.dir == s.mount);
    REQUIRE_FALSE(r.asked.empty());
    for (const auto& path : r.asked) {
        const bool below = path == s.mount || path.rfind(s.mount + "/", 0) == 0;
        CHECK_MESSAGE(below, path);
    }
    // A cgroup outside this process's cgroup namespace is named with "..": refused unseen.
    r.asked.clear();
    const CgroupParent outside = find_cgroup_parent(mountinfo_with(s.mount), "0::/../../etc/x\n", r.view());
    CHECK_FALSE(outside.found());
    CHECK(contains(outside.why, "outside"));
    CHECK(r.asked.empty());
}

TEST_CASE("find_cgroup_parent: a parent that does not hand down pids is refused, and the reason names pids") {
    StandIn s("cpu memory io\n");
    const CgroupParent p = find_cgroup_parent(mountinfo_with(s.mount), kSelf, host_cgroup_tree());
    CHECK_FALSE(p.found());
    CHECK(p.dir.empty());
    CHECK(contains(p.why, "pids controller"));
    CHECK_FALSE(contains(p.why, "memory"));
    CHECK(contains(p.why, s.parent));
    // A controller's name inside another's is not that controller.
    StandIn t("memory pids_extra\n");
    CHECK(contains(find_cgroup_parent(mountinfo_with(t.mount), kSelf, host_cgroup_tree()).why, "pids controller"));
    StandIn u("");
    CHECK(contains(find_cgroup_parent(mountinfo_with(u.mount), kSelf, host_cgroup_tree()).why,
                   "memory and pids controllers"));
}

TEST_CASE("find_cgroup_parent: a parent this user may not write is refused") {
    if (::geteuid() == 0) {
        MESSAGE("skipped: root passes every permission check, so a mode cannot refuse it");
        return;
    }
    StandIn s;
    REQUIRE(::chmod(s.parent.c_str(), 0555) == 0);
    const CgroupParent p = find_cgroup_parent(mountinfo_with(s.mount), kSelf, host_cgroup_tree());
    ::chmod(s.parent.c_str(), 0755);  // so that the temporary directory can be removed
    CHECK_FALSE(p.found());
    CHECK(contains(p.why, "is not writable"));
    // Its cgroup.procs alone not writable: no process could be moved below it.
    const std::string procs = s.parent + "/cgroup.procs";
    REQUIRE(::chmod(procs.c_str(), 0444) == 0);
    const CgroupParent q = find_cgroup_parent(mountinfo_with(s.mount), kSelf, host_cgroup_tree());
    CHECK_FALSE(q.found());
    CHECK(contains(q.why, "cgroup.procs is not writable"));
}

TEST_CASE("find_cgroup_parent: a process in the root cgroup has no parent") {
    StandIn s;
    const CgroupParent p = find_cgroup_parent(mountinfo_with(s.mount), "0::/\n", host_cgroup_tree());
    CHECK_FALSE(p.found());
    CHECK(contains(p.why, "root cgroup"));
}

TEST_CASE("find_cgroup_parent: no cgroup2 mount, or no 0:: line, is no cgroup v2 hierarchy") {
    StandIn s;
    const std::string v1_only = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
                                "35 25 0:30 / /sys/fs/cgroup/memory rw shared:12 - cgroup cgroup rw,memory\n";
    CHECK(find_cgroup_parent(v1_only, kSelf, host_cgroup_tree()).why == "no cgroup v2 hierarchy here");
    CHECK(find_cgroup_parent(mountinfo_with(s.mount), "12:pids:/user.slice\n1:name=systemd:/user.slice\n",
                             host_cgroup_tree())
              .why == "no cgroup v2 hierarchy here");
    CHECK(find_cgroup_parent("", "", host_cgroup_tree()).why == "no cgroup v2 hierarchy here");
    // A removed cgroup, as /proc/self/cgroup says it.
    CHECK(contains(find_cgroup_parent(mountinfo_with(s.mount), "0::/a/b (deleted)\n", host_cgroup_tree()).why,
                   "removed"));
}

TEST_CASE("find_cgroup_parent: mountinfo's octal escapes are undone in the mount point") {
    StandIn s("memory pids\n", "cgroup fs");
    const std::string escaped = s.d.path + "/cgroup\\040fs";
    const CgroupParent p = find_cgroup_parent(mountinfo_with(escaped), kSelf, host_cgroup_tree());
    CHECK(p.found());
    CHECK(p.dir == s.d.path + "/cgroup fs" + std::string(kAppSlice));
}

TEST_CASE("find_cgroup_parent: a mount showing part of the hierarchy is used below its root only") {
    StandIn s("memory pids\n", "part");
    // A mount at part/user.slice that shows the cgroup /user.slice (as a
    // container given only that part would have it): app.slice lies below it.
    const std::string point = s.mount + "/user.slice";
    const CgroupParent p = find_cgroup_parent(mountinfo_with(point, "/user.slice"), kSelf, host_cgroup_tree());
    CHECK(p.dir == s.parent);
    // A mount of another part does not show the caller's parent; one made
    // outside this cgroup namespace ("/..") is not used.
    CHECK(contains(find_cgroup_parent(mountinfo_with(point, "/system.slice"), kSelf, host_cgroup_tree()).why,
                   "no cgroup v2 mount here shows"));
    CHECK(contains(find_cgroup_parent(mountinfo_with(point, "/.."), kSelf, host_cgroup_tree()).why,
                   "no cgroup v2 mount here shows"));
}

TEST_CASE("find_cgroup_parent: a parent not marked as delegated is the service manager's, and refused") {
    StandIn s("cpu memory pids\n", "cg", false);
    const auto p = find_cgroup_parent(mountinfo_with(s.mount), kSelf, host_cgroup_tree());
    CHECK_FALSE(p.found());
    CHECK(contains(p.why, "not marked as delegated"));
    CHECK(contains(p.why, "--cgroup-parent"));
    // Marked with another value than "1": refused all the same.
    REQUIRE(::setxattr(s.parent.c_str(), "user.delegate", "0", 1, 0) == 0);
    CHECK_FALSE(find_cgroup_parent(mountinfo_with(s.mount), kSelf, host_cgroup_tree()).found());
}

TEST_CASE("find_cgroup_parent: the caller's own cgroup is known, to come back to after a start") {
    StandIn s;
    const auto p = find_cgroup_parent(mountinfo_with(s.mount), kSelf, host_cgroup_tree());
    REQUIRE(p.found());
    CHECK(p.own == s.parent + "/term.scope");
    CHECK(p.memory);
    CHECK(p.pids);
}

TEST_CASE("given_cgroup_parent: a folder named on a cgroup2 mount, writable, with the controllers it hands down") {
    StandIn s("pids\n");
    const auto mounts = mountinfo_with(s.mount);
    auto p = given_cgroup_parent(s.parent, mounts, kSelf, host_cgroup_tree());
    REQUIRE(p.found());
    CHECK(p.dir == s.parent);
    CHECK(p.own == s.parent + "/term.scope");
    CHECK(p.pids);
    CHECK_FALSE(p.memory);  // taken as it is: the memory limit then stays per process
    // Off the cgroup2 mount, the mount point itself, or not clean: refused, naming it.
    for (const std::string& dir : {std::string("/tmp"), s.mount, s.parent + "/../x", std::string("relative")}) {
        CAPTURE(dir);
        p = given_cgroup_parent(dir, mounts, kSelf, host_cgroup_tree());
        CHECK_FALSE(p.found());
        CHECK(contains(p.why, dir));
    }
    // No cgroup of this process's own to come back to.
    CHECK_FALSE(given_cgroup_parent(s.parent, mounts, "", host_cgroup_tree()).found());
}

TEST_CASE("cgroup_writes: which file gets which value") {
    using sbx::linux_sandbox::cgroup_writes;
    CHECK(cgroup_writes(CgroupLimits{}).empty());

    const auto memory = cgroup_writes(CgroupLimits{1073741824, std::nullopt});
    REQUIRE(memory.size() == 2);
    CHECK(memory[0].file == "memory.max");
    CHECK(memory[0].value == "1073741824");
    CHECK(memory[0].missing == WhereMissing::fail);
    CHECK(memory[1].file == "memory.swap.max");
    CHECK(memory[1].value == "0");
    CHECK(memory[1].missing == WhereMissing::skip);

    const auto processes = cgroup_writes(CgroupLimits{std::nullopt, 64});
    REQUIRE(processes.size() == 1);
    CHECK(processes[0].file == "pids.max");
    CHECK(processes[0].value == "64");
    CHECK(processes[0].missing == WhereMissing::fail);

    const auto both = cgroup_writes(CgroupLimits{512 * 1024 * 1024, 100});
    REQUIRE(both.size() == 3);
    CHECK(both[0].file == "memory.max");
    CHECK(both[0].value == "536870912");
    CHECK(both[1].file == "pids.max");
    CHECK(both[1].value == "100");
    CHECK(both[2].file == "memory.swap.max");
    for (const auto& w : both) CHECK_FALSE(w.why.empty());
}

TEST_CASE("apply_cgroup_writes: each value lands in its file; a missing swap file is skipped") {
    using sbx::linux_sandbox::apply_cgroup_writes;
    using sbx::linux_sandbox::cgroup_writes;
    sbx_test::TempDir d("sbx-cgroup");
    d.touch("memory.max");
    d.touch("pids.max");
    d.touch("memory.swap.max");
    const sbx::launcher::Fd dir(::open(d.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(dir.ok());
    const auto writes = cgroup_writes(CgroupLimits{1 << 30, 64});
    const auto done = apply_cgroup_writes(dir.get(), d.path, writes);
    REQUIRE_MESSAGE(done, sbx::to_string(done.error()));
    CHECK(text_of(d.at("memory.max")) == "1073741824");
    CHECK(text_of(d.at("pids.max")) == "64");
    CHECK(text_of(d.at("memory.swap.max")) == "0");

    sbx_test::TempDir e("sbx-cgroup");
    e.touch("memory.max");
    const sbx::launcher::Fd other(::open(e.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    CHECK(apply_cgroup_writes(other.get(), e.path, cgroup_writes(CgroupLimits{4096, std::nullopt})));
    CHECK(text_of(e.at("memory.max")) == "4096");
    CHECK_FALSE(exists(e.at("memory.swap.max")));  // nothing is created

    // pids.max missing: the processes limit cannot hold, and the error names the file.
    const auto failed = apply_cgroup_writes(other.get(), e.path, cgroup_writes(CgroupLimits{std::nullopt, 8}));
    REQUIRE_FALSE(failed);
    CHECK(failed.error().code == sbx::Errc::io_error);
    CHECK(failed.error().file == e.at("pids.max"));
    CHECK(contains(failed.error().message, "cannot write 8"));
}

TEST_CASE("SandboxCgroup::make: a failed write removes the directory and names the file") {
    sbx_test::TempDir d("sbx-cgroup");
    // The stand-in's new directory has no control files, as cgroupfs would
    // have: the first write, memory.max, fails.
    const auto made = SandboxCgroup::make(d.path, "sbx-1-00", CgroupLimits{1 << 20, 10});
    REQUIRE_FALSE(made);
    CHECK(made.error().file == d.at("sbx-1-00/memory.max"));
    CHECK(contains(made.error().message, "cannot write 1048576"));
    CHECK_FALSE(exists(d.at("sbx-1-00")));
}

TEST_CASE("SandboxCgroup::make: refuses a name that is taken or not one component") {
    sbx_test::TempDir d("sbx-cgroup");
    d.mkdir("taken");
    const auto taken = SandboxCgroup::make(d.path, "taken", CgroupLimits{});
    REQUIRE_FALSE(taken);
    CHECK(taken.error().file == d.at("taken"));
    CHECK(contains(taken.error().message, "cannot make it"));
    CHECK(exists(d.at("taken")));
    for (const char* name : {"", ".", "..", "a/b"}) {
        const auto bad = SandboxCgroup::make(d.path, name, CgroupLimits{});
        REQUIRE_FALSE(bad);
        CHECK(bad.error().code == sbx::Errc::invalid_argument);
    }
    const auto nowhere = SandboxCgroup::make(d.at("missing"), "x", CgroupLimits{});
    REQUIRE_FALSE(nowhere);
    CHECK(nowhere.error().file == d.at("missing"));
}

TEST_CASE("SandboxCgroup: enter, events, kill_all by cgroup.kill, and remove") {
    sbx_test::TempDir d("sbx-cgroup");
    const auto name = sbx::linux_sandbox::sandbox_cgroup_name();
    REQUIRE(name);
    auto made = SandboxCgroup::make(d.path, *name, CgroupLimits{});  // no limits: nothing written
    REQUIRE_MESSAGE(made, sbx::to_string(made.error()));
    SandboxCgroup cg = std::move(*made);
    CHECK(cg.path() == d.at(*name));
    const std::string at = *name + "/";

    // The files cgroupfs would have made.
    d.touch(at + "cgroup.procs");
    d.touch(at + "cgroup.kill");
    CHECK(cg.enter(4242));
    CHECK(text_of(d.at(at + "cgroup.procs")) == "4242");

    const auto zeros = cg.events();  // no events files yet
    CHECK(zeros.oom_kills == 0);
    CHECK(zeros.memory_max_hits == 0);
    CHECK(zeros.pids_max_hits == 0);
    d.write(at + "memory.events", "low 0\nhigh 0\nmax 12\noom 2\noom_kill 3\noom_group_kill 0\n");
    d.write(at + "pids.events", "max 5\n");
    const auto seen = cg.events();
    CHECK(seen.oom_kills == 3);
    CHECK(seen.memory_max_hits == 12);
    CHECK(seen.pids_max_hits == 5);

    CHECK(cg.kill_all());
    CHECK(text_of(d.at(at + "cgroup.kill")) == "1");

    // The stand-in keeps its files, where cgroupfs would remove them with the
    // directory: rmdir is attempted and refused, and the error names the path.
    const auto full = cg.remove();
    REQUIRE_FALSE(full);
    CHECK(full.error().file == d.at(*name));
    CHECK(contains(full.error().message, "cannot remove it"));
    for (const char* f : {"cgroup.procs", "cgroup.kill", "memory.events", "pids.events"})
        REQUIRE(::unlink(d.at(at + f).c_str()) == 0);
    CHECK(cg.remove());
    CHECK_FALSE(exists(d.at(*name)));
}

TEST_CASE("SandboxCgroup::kill_all: without cgroup.kill, each process cgroup.procs lists gets SIGKILL") {
    sbx_test::TempDir d("sbx-cgroup");
    auto made = SandboxCgroup::make(d.path, "sbx-kill", CgroupLimits{});
    REQUIRE(made);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
        for (;;) ::pause();
    }
    d.write("sbx-kill/cgroup.procs", std::to_string(child) + "\n");
    d.touch("sbx-kill/cgroup.freeze");
    const auto killed = made->kill_all();
    CHECK_MESSAGE(killed, (killed ? "" : sbx::to_string(killed.error())));
    if (!killed) ::kill(child, SIGKILL);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == SIGKILL);
    CHECK(text_of(d.at("sbx-kill/cgroup.freeze")) == "1");  // frozen first, where the kernel can

    // No cgroup.procs to read: the error names it.
    REQUIRE(::unlink(d.at("sbx-kill/cgroup.procs").c_str()) == 0);
    const auto unread = made->kill_all();
    REQUIRE_FALSE(unread);
    CHECK(unread.error().file == d.at("sbx-kill/cgroup.procs"));
}

TEST_CASE("SandboxCgroup::remove: refuses when another directory took its name") {
    sbx_test::TempDir d("sbx-cgroup");
    auto made = SandboxCgroup::make(d.path, "sbx-moved", CgroupLimits{});
    REQUIRE(made);
    REQUIRE(::rename(d.at("sbx-moved").c_str(), d.at("elsewhere").c_str()) == 0);
    d.mkdir("sbx-moved");
    const auto removed = made->remove();
    REQUIRE_FALSE(removed);
    CHECK(contains(removed.error().message, "another directory took its name"));
    CHECK(exists(d.at("sbx-moved")));
    CHECK(exists(d.at("elsewhere")));
}

TEST_CASE("parse_cgroup_events: strict lines, unknown keys and garbage left out") {
    using sbx::linux_sandbox::parse_cgroup_events;
    const auto none = parse_cgroup_events("", "");
    CHECK(none.oom_kills == 0);
    CHECK(none.memory_max_hits == 0);
    CHECK(none.pids_max_hits == 0);

    const auto last = parse_cgroup_events("oom_kill 1\nmax 2\noom_kill 4", "max 7\nmax.imposed 9\n");
    CHECK(last.oom_kills == 4);  // the last line for a key; a last line without a newline too
    CHECK(last.memory_max_hits == 2);
    CHECK(last.pids_max_hits == 7);

    const std::string garbage = std::string("max\nmax x\nmax -1\nmax +3\nmax 99999999999999999999999\n oom_kill 7\n"
                                            "oom_kill 7 8\noom_kill\t9\noom_kill  9\n\n\n") +
                                std::string("max 1\0 2\n", 9) + "oom_kill 0x10\nmaxx 3\n";
    const auto bad = parse_cgroup_events(garbage, "pids 3\nmax\n\xff\xfe\n");
    CHECK(bad.oom_kills == 0);
    CHECK(bad.memory_max_hits == 0);
    CHECK(bad.pids_max_hits == 0);

    const auto big = parse_cgroup_events("max 18446744073709551615\n", "");
    CHECK(big.memory_max_hits == 18446744073709551615ull);
}

TEST_CASE("sandbox_cgroup_name: sbx-PID- then 16 hexadecimal digits, new each time") {
    const auto a = sbx::linux_sandbox::sandbox_cgroup_name();
    const auto b = sbx::linux_sandbox::sandbox_cgroup_name();
    REQUIRE(a);
    REQUIRE(b);
    const std::string prefix = "sbx-" + std::to_string(::getpid()) + "-";
    REQUIRE(a->rfind(prefix, 0) == 0);
    const std::string hex = a->substr(prefix.size());
    CHECK(hex.size() == 16);
    CHECK(hex.find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(*a != *b);
}
