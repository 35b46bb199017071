// The probe of sbx-linux: its pure checks from recorded inputs (version strings,
// the user-namespace table, seccomp, bwrap's messages), the PATH search on a
// temporary directory, the JSON and text shapes, and real probes of this machine,
// as the current user and, when run as root, as the unprivileged user sbx-test.
#include <doctest/doctest.h>

#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string>
#include <vector>

#ifndef SBX_TEST_STAGE
#error "SBX_TEST_STAGE must name the stage's program (tests/launcher/meson.build sets it)"
#endif

#include "../../launchers/linux/probe.hpp"
#include "../unit/temp_dir.hpp"
#include "sbx/core/json.hpp"
#include "sbx/core/paths.hpp"

namespace lx = sbx::linux_sandbox;

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// GCC 12 warns about designated initializers that leave members out.
lx::ProbeOptions options(bool thorough, bool need_seccomp = true, std::string bwrap_path = {}) {
    lx::ProbeOptions o;
    o.bwrap_path = std::move(bwrap_path);
    o.need_seccomp = need_seccomp;
    o.thorough = thorough;
    o.stage_program = SBX_TEST_STAGE;  // this test program has no --stage mode
    return o;
}

lx::ProgramFile good_bwrap() { return lx::ProgramFile{"/usr/bin/bwrap", true, true, false, false}; }

lx::RunOutcome exited(int code, std::string out = {}, std::string err = {}) {
    lx::RunOutcome r;
    r.exit_code = code;
    r.out = std::move(out);
    r.err = std::move(err);
    return r;
}

// Inputs of a machine where everything works, as the cheap probe sees it.
lx::ProbeInputs healthy() {
    lx::ProbeInputs in;
    in.machine = "x86_64";
    in.build_arch = "x86_64";
    in.path_env = "/usr/bin:/bin";
    in.bwrap = good_bwrap();
    in.userns.max_user_namespaces = 15000;
    in.seccomp = lx::SeccompFacts{};
    return in;
}

}  // namespace

TEST_CASE("parse_bwrap_version reads bubblewrap's first line") {
    struct Row {
        const char* text;
        std::optional<lx::Version> want;
    };
    const Row rows[] = {
        {"bubblewrap 0.8.0\n", lx::Version{0, 8, 0}},
        {"bubblewrap 0.8.0", lx::Version{0, 8, 0}},
        {"bubblewrap 0.10.1\n", lx::Version{0, 10, 1}},
        {"bubblewrap 0.8\n", lx::Version{0, 8, 0}},
        {"bubblewrap 0.9.0-rc1\n", lx::Version{0, 9, 0}},
        {"bubblewrap 0.11.0+git20240101\n", lx::Version{0, 11, 0}},
        {"bubblewrap 1.2.3.4\n", lx::Version{1, 2, 3}},
        {"  bubblewrap 0.8.0  \r\n", lx::Version{0, 8, 0}},
        {"bubblewrap\t0.8.0\n", lx::Version{0, 8, 0}},
        {"bubblewrap   0.8.0\n", lx::Version{0, 8, 0}},
        {"bubblewrap 0.8.0\nsomething else\n", lx::Version{0, 8, 0}},
        {"bubblewrap 0.8.x\n", lx::Version{0, 8, 0}},
        {"", std::nullopt},
        {"\n", std::nullopt},
        {"bubblewrap", std::nullopt},
        {"bubblewrap \n", std::nullopt},
        {"bubblewrap0.8.0", std::nullopt},
        {"bwrap 0.8.0", std::nullopt},
        {"Bubblewrap 0.8.0", std::nullopt},
        {"bubblewrap v0.8.0", std::nullopt},
        {"bubblewrap 0", std::nullopt},
        {"bubblewrap 0.", std::nullopt},
        {"bubblewrap .8.0", std::nullopt},
        {"bubblewrap -1.8.0", std::nullopt},
        {"bubblewrap 99999999999.0.0", std::nullopt},
        {"bubblewrap 1234567.0.0", std::nullopt},
        {"warning: something\nbubblewrap 0.8.0\n", std::nullopt},
        {"bubblewrap: Unknown option --version\n", std::nullopt},
    };
    for (const auto& row : rows) {
        CAPTURE(std::string(row.text));
        CHECK(lx::parse_bwrap_version(row.text) == row.want);
    }
}

TEST_CASE("versions compare as numbers, not text") {
    CHECK(lx::Version{0, 7, 0} < lx::kMinBwrapVersion);
    CHECK(lx::Version{0, 7, 99} < lx::kMinBwrapVersion);
    CHECK_FALSE(lx::Version{0, 8, 0} < lx::kMinBwrapVersion);
    CHECK(lx::Version{0, 10, 0} > lx::kMinBwrapVersion);
    CHECK(lx::Version{1, 0, 0} > lx::Version{0, 99, 99});
    CHECK(lx::to_string(lx::Version{0, 10, 2}) == "0.10.2");
}

// Over 80 lines: a table, one row a machine.
TEST_CASE("interpret_userns: sysctls, privileges and what unshare said") {
    struct Row {
        const char* what;
        lx::UsernsFacts facts;
        bool ok;
        const char* detail_has;
        const char* fix_has;
    };
    auto facts = [](std::optional<long> max, std::optional<long> clone, std::optional<long> apparmor, bool admin,
                    std::optional<lx::UnshareOutcome> trial = std::nullopt,
                    std::optional<bool> bwrap_ran = std::nullopt) {
        lx::UsernsFacts f;
        f.max_user_namespaces = max;
        f.unprivileged_userns_clone = clone;
        f.apparmor_restrict_unprivileged_userns = apparmor;
        f.cap_sys_admin = admin;
        f.trial = trial;
        f.bwrap_ran = bwrap_ran;
        f.bwrap_path = "/opt/bw/bwrap";
        return f;
    };
    const lx::UnshareOutcome worked{};
    const lx::UnshareOutcome eperm{EPERM, 0, {}};
    const lx::UnshareOutcome eacces{EACCES, 0, {}};
    const lx::UnshareOutcome enospc{ENOSPC, 0, {}};
    const lx::UnshareOutcome einval{EINVAL, 0, {}};
    const lx::UnshareOutcome eusers{EUSERS, 0, {}};
    const lx::UnshareOutcome enomem{ENOMEM, 0, {}};
    const lx::UnshareOutcome ebadf{EBADF, 0, {}};
    const lx::UnshareOutcome sigsys{0, SIGSYS, {}};
    const lx::UnshareOutcome no_fork{0, 0, "fork: Resource temporarily unavailable"};

    const Row rows[] = {
        {"cheap, all allowed", facts(15000, std::nullopt, std::nullopt, false), true, "not tried", ""},
        {"cheap, sysctls unreadable", facts(std::nullopt, std::nullopt, std::nullopt, false), true,
         "max_user_namespaces=absent", ""},
        {"max 0 stops even root", facts(0, std::nullopt, std::nullopt, true), false, "max_user_namespaces is 0",
         "sysctl -w user.max_user_namespaces=15000"},
        {"max 0 wins over a working trial", facts(0, 1, 0, false, worked), false, "is 0", "user.max_user_namespaces"},
        {"Debian switch off, unprivileged", facts(15000, 0, std::nullopt, false), false,
         "unprivileged_userns_clone is 0", "sysctl -w kernel.unprivileged_userns_clone=1"},
        {"Debian switch off, CAP_SYS_ADMIN", facts(15000, 0, std::nullopt, true), true, "not tried", ""},
        {"Debian switch on", facts(15000, 1, std::nullopt, false, worked), true, "worked", ""},
        {"AppArmor, cheap: not decided", facts(15000, std::nullopt, 1, false), true, "not verified", ""},
        {"AppArmor, bwrap ran", facts(15000, std::nullopt, 1, false, eperm, true), true, "a profile allows it", ""},
        {"AppArmor, own unshare refused, bwrap failed", facts(15000, std::nullopt, 1, false, eperm, false), false,
         "AppArmor restricts", "\\nprofile bwrap /opt/bw/bwrap flags=(unconfined) {\\n  userns,\\n}\\n' > /etc/apparmor.d/bwrap"},
        {"AppArmor, EACCES", facts(15000, std::nullopt, 1, false, eacces, false), false, "with EACCES",
         "kernel.apparmor_restrict_unprivileged_userns=0"},
        {"AppArmor, own unshare worked, bwrap failed", facts(15000, std::nullopt, 1, false, worked, false), true,
         "worked", ""},
        {"AppArmor does not bind CAP_SYS_ADMIN", facts(15000, std::nullopt, 1, true, eperm), false,
         "container or seccomp policy", "--security-opt seccomp=unconfined"},
        {"AppArmor off", facts(15000, std::nullopt, 0, false, worked), true, "worked", ""},
        {"EPERM with sysctls fine: container", facts(15000, 1, 0, true, eperm), false,
         "although the kernel settings allow it", "CAP_SYS_ADMIN"},
        {"EPERM names the filter already on", [&] {
             auto f = facts(15000, std::nullopt, std::nullopt, true, eperm);
             f.seccomp_mode = 2;
             return f;
         }(),
         false, "already runs under a seccomp filter", "--privileged"},
        {"ENOSPC: limit used up", facts(3, std::nullopt, std::nullopt, false, enospc), false,
         "max_user_namespaces=3", "user.max_user_namespaces=15000"},
        {"EINVAL: kernel lacks a namespace", facts(std::nullopt, std::nullopt, std::nullopt, true, einval), false,
         "CONFIG_USER_NS", "kernel built with"},
        {"EUSERS: nested too deep", facts(15000, std::nullopt, std::nullopt, false, eusers), false, "32 user namespaces",
         "shallower"},
        {"ENOMEM", facts(15000, std::nullopt, std::nullopt, false, enomem), false, "short of memory", "free memory"},
        {"another errno", facts(15000, std::nullopt, std::nullopt, false, ebadf), false, "(Bad file descriptor)", "container"},
        {"SIGSYS: a policy kills unshare", facts(15000, std::nullopt, std::nullopt, false, sigsys), false,
         "killed by SIGSYS: a seccomp policy kills callers of unshare", "seccomp=unconfined"},
        {"no child", facts(15000, std::nullopt, std::nullopt, false, no_fork), false, "could not try",
         "ulimit -u"},
    };
    for (const auto& row : rows) {
        CAPTURE(std::string(row.what));
        const lx::Check c = lx::interpret_userns(row.facts);
        CAPTURE(c.detail);
        CAPTURE(c.fix);
        CHECK(c.name == "user namespaces");
        CHECK(c.ok == row.ok);
        CHECK(contains(c.detail, row.detail_has));
        CHECK(contains(c.fix, row.fix_has));
        CHECK(c.fix.empty() == c.ok);
    }
}

TEST_CASE("check_architecture: the filter exists for x86_64 and aarch64 only") {
    struct Row {
        const char* machine;
        const char* build;
        bool need_seccomp;
        bool ok;
        const char* detail_has;
    };
    const Row rows[] = {
        {"x86_64", "x86_64", true, true, "x86_64"},
        {"aarch64", "aarch64", true, true, "aarch64"},
        {"riscv64", "riscv64", true, false, "built for riscv64"},
        {"x86_64", "x32", true, false, "built for x32"},
        {"x86_64", "i386", true, false, "only for x86_64 and aarch64"},
        {"aarch64", "x86_64", true, false, "the kernel reports aarch64"},
        {"i686", "x86_64", true, false, "personality such as linux32"},
        {"riscv64", "riscv64", false, true, "needs no seccomp filter"},
    };
    for (const auto& row : rows) {
        CAPTURE(std::string(row.machine));
        CAPTURE(std::string(row.build));
        const lx::Check c = lx::check_architecture(row.machine, row.build, row.need_seccomp);
        CAPTURE(c.detail);
        CHECK(c.name == "architecture");
        CHECK(c.ok == row.ok);
        CHECK(contains(c.detail, row.detail_has));
        if (!c.ok) CHECK(contains(c.fix, "allowAllUnixSockets"));
    }
}

// Over 80 lines: one SUBCASE per finding, each a few lines.
TEST_CASE("check_bubblewrap: found, executable, not setuid, recent enough") {
    SUBCASE("cheap: found, version not read") {
        const lx::Check c = lx::check_bubblewrap(healthy());
        CHECK(c.ok);
        CHECK(c.detail == "/usr/bin/bwrap, version not checked (the thorough probe runs bwrap --version)");
    }
    SUBCASE("thorough: the version is read") {
        auto in = healthy();
        in.version_run = exited(0, "bubblewrap 0.8.0\n");
        const lx::Check c = lx::check_bubblewrap(in);
        CHECK(c.ok);
        CHECK(c.detail == "/usr/bin/bwrap 0.8.0");
    }
    SUBCASE("too old") {
        auto in = healthy();
        in.version_run = exited(0, "bubblewrap 0.7.0\n");
        const lx::Check c = lx::check_bubblewrap(in);
        CHECK_FALSE(c.ok);
        CHECK(c.detail == "bubblewrap 0.7.0 at /usr/bin/bwrap is too old: sbx needs 0.8.0 or later, for --disable-userns");
        CHECK(contains(c.fix, "install bubblewrap 0.8.0 or later"));
    }
    SUBCASE("not bubblewrap") {
        auto in = healthy();
        in.version_run = exited(0, "firejail version 0.9.72\n");
        const lx::Check c = lx::check_bubblewrap(in);
        CHECK_FALSE(c.ok);
        CHECK(contains(c.detail, "printed \"firejail version 0.9.72\", not \"bubblewrap X.Y.Z\""));
    }
    SUBCASE("--version fails") {
        auto in = healthy();
        in.version_run = exited(1, "", "bwrap: Unknown option --version\n");
        const lx::Check c = lx::check_bubblewrap(in);
        CHECK_FALSE(c.ok);
        CHECK(c.detail == "/usr/bin/bwrap --version exited with status 1: bwrap: Unknown option --version");
    }
    SUBCASE("not on PATH") {
        auto in = healthy();
        in.bwrap = {};
        const lx::Check c = lx::check_bubblewrap(in);
        CHECK_FALSE(c.ok);
        CHECK(c.detail == "bwrap is in no absolute directory of PATH (PATH=/usr/bin:/bin)");
        CHECK(contains(c.fix, "apt-get install bubblewrap (Debian, Ubuntu)"));
        CHECK(contains(c.fix, "dnf install bubblewrap"));
    }
    SUBCASE("PATH unset") {
        auto in = healthy();
        in.bwrap = {};
        in.path_env.reset();
        CHECK(contains(lx::check_bubblewrap(in).detail, "PATH is unset; searched /usr/local/bin:/usr/bin:/bin"));
    }
    SUBCASE("a relative bwrap path") {
        auto in = healthy();
        in.bwrap_request = "bin/bwrap";
        const lx::Check c = lx::check_bubblewrap(in);
        CHECK_FALSE(c.ok);
        CHECK(c.detail == "the bwrap path \"bin/bwrap\" is not absolute");
    }
    SUBCASE("nothing at the bwrap path") {
        auto in = healthy();
        in.bwrap_request = "/opt/bwrap";
        in.bwrap = {};
        const lx::Check c = lx::check_bubblewrap(in);
        CHECK_FALSE(c.ok);
        CHECK(c.detail == "nothing is at /opt/bwrap, the bwrap path sbx was given");
    }
    SUBCASE("a directory") {
        auto in = healthy();
        in.bwrap = lx::ProgramFile{"/opt/bwrap", false, false, false, false};
        CHECK(lx::check_bubblewrap(in).detail == "/opt/bwrap is not a regular file");
    }
    SUBCASE("not executable") {
        auto in = healthy();
        in.bwrap.executable = false;
        const lx::Check c = lx::check_bubblewrap(in);
        CHECK(c.detail == "/usr/bin/bwrap is not executable for this user");
        CHECK(contains(c.fix, "chmod 0755 /usr/bin/bwrap"));
    }
    SUBCASE("setuid") {
        auto in = healthy();
        in.bwrap.setuid = true;
        const lx::Check c = lx::check_bubblewrap(in);
        CHECK_FALSE(c.ok);
        CHECK(contains(c.detail, "has the setuid bit: sbx runs bubblewrap unprivileged only"));
        CHECK(contains(c.fix, "chmod u-s,g-s /usr/bin/bwrap"));
    }
    SUBCASE("setgid") {
        auto in = healthy();
        in.bwrap.setgid = true;
        CHECK(contains(lx::check_bubblewrap(in).detail, "has the setgid bit"));
    }
}

TEST_CASE("check_seccomp: kernel support, actions and the filter build") {
    struct Row {
        const char* what;
        std::optional<lx::SeccompFacts> facts;
        bool ok;
        const char* detail_has;
    };
    const Row rows[] = {
        {"not needed", std::nullopt, true, "not needed: the plan allows every Unix socket"},
        {"all there", lx::SeccompFacts{}, true, "libseccomp builds the filter"},
        {"no CONFIG_SECCOMP", lx::SeccompFacts{EINVAL, 0, {}}, false, "no CONFIG_SECCOMP"},
        {"no filters", lx::SeccompFacts{0, EINVAL, {}}, false, "no CONFIG_SECCOMP_FILTER"},
        {"no seccomp syscall", lx::SeccompFacts{0, ENOSYS, {}}, false, "fails with ENOSYS"},
        {"no KILL_PROCESS", lx::SeccompFacts{0, EOPNOTSUPP, {}}, false, "KILL_PROCESS needs Linux 4.14"},
        {"refused by a policy", lx::SeccompFacts{0, EPERM, {}}, false, "refuses the seccomp system call"},
        {"libseccomp fails", lx::SeccompFacts{0, 0, "seccomp: system call clone3 is unknown on x86_64"}, false,
         "libseccomp cannot build the filter: seccomp: system call clone3 is unknown"},
    };
    for (const auto& row : rows) {
        CAPTURE(std::string(row.what));
        const lx::Check c = lx::check_seccomp(row.facts);
        CAPTURE(c.detail);
        CHECK(c.name == "seccomp");
        CHECK(c.ok == row.ok);
        CHECK(contains(c.detail, row.detail_has));
        CHECK(c.fix.empty() == c.ok);
    }
}

TEST_CASE("explain_bwrap_failure reads bubblewrap's own messages") {
    struct Row {
        const char* err;
        const char* fix_has;
    };
    const Row rows[] = {
        {"bwrap: Unknown option --disable-userns\n", "install bubblewrap 0.8.0 or later"},
        {"bwrap: setting up uid map: Permission denied\n", "profile bwrap /usr/local/bin/bwrap"},
        // bubblewrap 0.8.0 on Debian 12, under a seccomp filter that refuses unshare:
        {"bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged "
         "user namespaces. See <https://deb.li/bubblewrap> or <file:///usr/share/doc/bubblewrap/README.Debian.gz>.\n",
         "kernel.unprivileged_userns_clone=1"},
        // Older bubblewrap:
        {"bwrap: No permissions to creating new namespace, likely because the kernel does not allow "
         "non-privileged user namespaces.\n",
         "seccomp=unconfined"},
        {"bwrap: Creating new namespace failed: Operation not permitted\n", "seccomp=unconfined"},
        // bubblewrap 0.8.0 with max_user_namespaces at 0:
        {"bwrap: Creating new namespace failed: nesting depth or /proc/sys/user/max_*_namespaces exceeded (ENOSPC)\n",
         "user.max_user_namespaces=15000"},
        {"bwrap: Creating new namespace failed: No space left on device\n", "user.max_user_namespaces=15000"},
        {"bwrap: Failed to make / slave: Permission denied\n", "apparmor=unconfined"},
        {"bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n", "systempaths=unconfined"},
        {"bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted\n", "network namespace"},
        {"bwrap: prctl(PR_SET_SECCOMP): Invalid argument\n", "CONFIG_SECCOMP_FILTER"},
        {"bwrap: execvp /usr/bin/true: Permission denied\n", "--privileged"},
        {"bwrap: something new\n", "run the command in the detail"},
        {"", "run the command in the detail"},
    };
    for (const auto& row : rows) {
        CAPTURE(std::string(row.err));
        CHECK(contains(lx::explain_bwrap_failure(row.err, "/usr/local/bin/bwrap"), row.fix_has));
    }
}

TEST_CASE("check_bwrap_run quotes the command and bwrap's message") {
    const auto argv = lx::bwrap_run_argv("/usr/bin/bwrap", "/tmp/sbx-doctor-1", "/usr/bin/true", true);
    CHECK(argv.front() == "/usr/bin/bwrap");
    CHECK(argv.back() == "/usr/bin/true");
    CHECK(argv[argv.size() - 2] == "--");
    for (const char* flag : {"--unshare-user", "--unshare-net", "--disable-userns", "--die-with-parent",
                             "--new-session", "--seccomp"})
        CHECK(std::find(argv.begin(), argv.end(), flag) != argv.end());
    CHECK(std::find(argv.begin(), argv.end(), "ALL") != argv.end());
    const auto plain = lx::bwrap_run_argv("/usr/bin/bwrap", "/tmp/sbx-doctor-1", "/usr/bin/true", false);
    CHECK(std::find(plain.begin(), plain.end(), "--seccomp") == plain.end());

    CHECK(lx::check_bwrap_run(exited(0), argv).detail ==
          "bwrap ran /usr/bin/true in new namespaces with no capabilities under the seccomp filter, which "
          "bubblewrap loads into its init (pid 1) too");

    const lx::Check c = lx::check_bwrap_run(exited(1, "", "bwrap: setting up uid map: Permission denied\n"),
                                            lx::bwrap_run_argv("/opt/my bwrap", "/tmp/d", "/bin/true", false));
    CHECK_FALSE(c.ok);
    CHECK(c.detail.rfind(
              "'/opt/my bwrap' --unshare-user --unshare-ipc --unshare-pid --unshare-net --unshare-uts "
              "--unshare-cgroup-try --disable-userns --die-with-parent --new-session --cap-drop ALL --ro-bind / / "
              "--dev /dev --proc /proc --bind /tmp/d/root /tmp/d/root ",
              0) == 0);
    CHECK(contains(c.detail,
                   " --tmpfs /tmp/d/group --remount-ro /tmp/d/group --chdir /tmp/d/root -- /proc/self/fd/3 --stage "
                   "--exe-fd 3 --status-fd 4 --proxy-fd -1 --filtered 0 -- /bin/true exited with status 1: bwrap: "
                   "setting up uid map: Permission denied"));
    CHECK(contains(c.fix, "profile bwrap /opt/my bwrap flags=(unconfined)"));

    // What the stage reported on its status pipe, which bubblewrap's message lacks.
    lx::StageReport stage;
    stage.started = true;
    stage.failure = "the sandbox's pid 1 (bubblewrap's init) runs without the seccomp filter";
    const lx::Check inside = lx::check_bwrap_run(exited(125), argv, stage);
    CHECK(contains(inside.detail, "exited with status 125; the stage failed: the sandbox's pid 1"));
    CHECK(contains(inside.fix, "CONFIG_SECCOMP_FILTER"));
    stage.failure.clear();
    stage.exec_errno = ENOENT;
    CHECK(contains(lx::check_bwrap_run(exited(127), argv, stage).detail,
                   "; the stage could not run /usr/bin/true: No such file or directory"));

    lx::RunOutcome hung;
    hung.timed_out = true;
    CHECK(contains(lx::check_bwrap_run(hung, argv).detail, "did not finish within 10 seconds"));
    lx::RunOutcome killed;
    killed.signal = SIGSYS;
    CHECK(contains(lx::check_bwrap_run(killed, argv).detail, "was killed by SIGSYS"));
    lx::RunOutcome never;
    never.spawn_error = "posix_spawn /usr/bin/bwrap: No such file or directory";
    CHECK(contains(lx::check_bwrap_run(never, argv).detail, "could not be started: posix_spawn"));
}

TEST_CASE("evaluate: the checks in order, why() names the first failure") {
    SUBCASE("healthy, cheap") {
        const auto r = lx::evaluate(healthy(), options(false));
        REQUIRE(r.checks.size() == 4);
        CHECK(r.checks[0].name == "architecture");
        CHECK(r.checks[1].name == "bubblewrap");
        CHECK(r.checks[2].name == "user namespaces");
        CHECK(r.checks[3].name == "seccomp");
        CHECK(r.available());
        CHECK(r.bwrap == "/usr/bin/bwrap");
        CHECK(r.bwrap_version.empty());
        CHECK(r.why().code == sbx::Errc::internal);
    }
    SUBCASE("healthy, thorough") {
        auto in = healthy();
        in.version_run = exited(0, "bubblewrap 0.9.0\n");
        in.userns.trial = lx::UnshareOutcome{};
        in.bwrap_run_argv = lx::bwrap_run_argv("/usr/bin/bwrap", "/tmp/sbx-doctor-1", "/usr/bin/true", true);
        in.bwrap_run = exited(0);
        const auto r = lx::evaluate(in, options(true));
        REQUIRE(r.checks.size() == 5);
        CHECK(r.checks[4].name == "bubblewrap run");
        CHECK(r.available());
        CHECK(r.bwrap_version == "0.9.0");
    }
    SUBCASE("the first failure is the cause") {
        auto in = healthy();
        in.userns.max_user_namespaces = 0;
        in.seccomp = lx::SeccompFacts{EINVAL, 0, {}};
        const auto r = lx::evaluate(in, options(false));
        CHECK_FALSE(r.available());
        const sbx::Error e = r.why();
        CHECK(e.code == sbx::Errc::unavailable);
        CHECK(e.message == "the Linux sandbox cannot run here: the user namespaces check failed");
        REQUIRE(e.cause != nullptr);
        CHECK(e.cause->code == sbx::Errc::sandbox_unavailable);
        CHECK(e.cause->message ==
              "user namespaces: user namespaces are turned off: /proc/sys/user/max_user_namespaces is 0; to fix: "
              "raise the limit as root: sysctl -w user.max_user_namespaces=15000 (put user.max_user_namespaces=15000 "
              "in /etc/sysctl.d/50-userns.conf to keep it)");
        CHECK(contains(sbx::to_string(e), "(caused by SANDBOX_UNAVAILABLE: user namespaces: "));
    }
    SUBCASE("no bwrap: no path, no run check") {
        auto in = healthy();
        in.bwrap.setuid = true;
        in.bwrap_run = exited(0);
        const auto r = lx::evaluate(in, options(true));
        CHECK(r.checks.size() == 4);
        CHECK(r.bwrap.empty());
        CHECK_FALSE(r.available());
    }
    SUBCASE("a failed run makes the sandbox unavailable") {
        auto in = healthy();
        in.bwrap_run_argv = lx::bwrap_run_argv("/usr/bin/bwrap", "/tmp/sbx-doctor-1", "/usr/bin/true", true);
        in.bwrap_run = exited(1, "", "bwrap: Can't mount proc on /newroot/proc: Operation not permitted\n");
        const auto r = lx::evaluate(in, options(true));
        CHECK_FALSE(r.available());
        CHECK(contains(sbx::to_string(r.why()), "systempaths=unconfined"));
    }
}

TEST_CASE("to_text and to_json") {
    lx::ProbeResult r;
    r.bwrap = "/usr/bin/bwrap";
    r.bwrap_version = "0.8.0";
    r.checks = {{"architecture", true, "x86_64", ""},
                {"bubblewrap", true, "/usr/bin/bwrap 0.8.0", ""},
                {"user namespaces", false, "refused \"here\"", "sysctl -w x=1"}};
    CHECK(lx::to_text(r) ==
          "ok   architecture     x86_64\n"
          "ok   bubblewrap       /usr/bin/bwrap 0.8.0\n"
          "FAIL user namespaces  refused \"here\"\n"
          "     fix: sysctl -w x=1\n");
    const std::string json = lx::to_json(r);
    CHECK(json ==
          R"({"available":false,"bwrap":"/usr/bin/bwrap","bwrap_version":"0.8.0","checks":[)"
          R"({"name":"architecture","ok":true,"detail":"x86_64","fix":""},)"
          R"({"name":"bubblewrap","ok":true,"detail":"/usr/bin/bwrap 0.8.0","fix":""},)"
          R"({"name":"user namespaces","ok":false,"detail":"refused \"here\"","fix":"sysctl -w x=1"}]})");
    auto doc = sbx::json::parse(json);
    REQUIRE_MESSAGE(doc.has_value(), sbx::to_string(doc.error()));
    CHECK(lx::to_text(lx::ProbeResult{}).empty());
}

TEST_CASE("find_in_path takes the first executable file in an absolute directory") {
    sbx_test::TempDir dir("sbx-probe");
    dir.mkdir("a");
    dir.mkdir("b");
    dir.mkdir("c/bwrap");  // a directory is never the program
    dir.write("a/bwrap", "#!/bin/sh\n");
    REQUIRE(::chmod(dir.at("a/bwrap").c_str(), 0644) == 0);
    dir.write("b/bwrap", "#!/bin/sh\n");
    REQUIRE(::chmod(dir.at("b/bwrap").c_str(), 0755) == 0);
    const std::string a = dir.at("a"), b = dir.at("b"), c = dir.at("c");

    SUBCASE("a non-executable file is skipped for an executable one") {
        const auto f = lx::find_in_path("bwrap", c + ":" + a + ":" + b);
        CHECK(f.path == b + "/bwrap");
        CHECK(f.executable);
    }
    SUBCASE("only a non-executable file: it is named, not executable") {
        const auto f = lx::find_in_path("bwrap", c + ":" + a);
        CHECK(f.path == a + "/bwrap");
        CHECK(f.regular);
        CHECK_FALSE(f.executable);
        lx::ProbeInputs in = healthy();
        in.bwrap = f;
        CHECK(lx::check_bubblewrap(in).detail == a + "/bwrap is not executable for this user");
    }
    SUBCASE("nothing") {
        CHECK(lx::find_in_path("bwrap", c).path.empty());
        CHECK(lx::find_in_path("bwrap", std::string()).path.empty());
    }
    SUBCASE("empty and relative entries are never searched") {
        REQUIRE(::chdir(b.c_str()) == 0);
        CHECK(lx::find_in_path("bwrap", std::string(":.:bwrap-dir::")).path.empty());
        CHECK(lx::find_in_path("bwrap", ":" + b).path == b + "/bwrap");
        REQUIRE(::chdir("/") == 0);
    }
    SUBCASE("a trailing slash is not doubled") {
        CHECK(lx::find_in_path("bwrap", b + "/").path == b + "/bwrap");
    }
    SUBCASE("setuid and setgid are reported") {
        if (::chmod(dir.at("b/bwrap").c_str(), 04755) != 0) {
            MESSAGE("skipped: chmod u+s failed in " << dir.path);
            return;
        }
        struct stat st {};
        REQUIRE(::stat(dir.at("b/bwrap").c_str(), &st) == 0);
        if ((st.st_mode & S_ISUID) == 0) {
            MESSAGE("skipped: the filesystem under /tmp drops the setuid bit");
            return;
        }
        const auto f = lx::find_in_path("bwrap", b);
        CHECK(f.setuid);
        CHECK_FALSE(f.setgid);
        lx::ProbeInputs in = healthy();
        in.bwrap = f;
        CHECK_FALSE(lx::check_bubblewrap(in).ok);
        REQUIRE(::chmod(dir.at("b/bwrap").c_str(), 02755) == 0);
        REQUIRE(::stat(dir.at("b/bwrap").c_str(), &st) == 0);
        if ((st.st_mode & S_ISGID) != 0) CHECK(lx::find_in_path("bwrap", b).setgid);
    }
    SUBCASE("inspect_program: nothing there") {
        CHECK(lx::inspect_program(dir.at("missing")).path.empty());
        const auto d = lx::inspect_program(c + "/bwrap");
        CHECK(d.path == c + "/bwrap");
        CHECK_FALSE(d.regular);
    }
}

TEST_CASE("probe: this machine runs the sandbox") {
    const auto thorough = lx::probe(options(true));
    MESSAGE("thorough probe:\n" << lx::to_text(thorough));
    CHECK_MESSAGE(thorough.available(), sbx::to_string(thorough.why()));
    CHECK(thorough.checks.size() == 5);
    CHECK_FALSE(thorough.bwrap.empty());
    CHECK_FALSE(thorough.bwrap_version.empty());

    const auto cheap = lx::probe(options(false));
    CHECK_MESSAGE(cheap.available(), sbx::to_string(cheap.why()));
    CHECK(cheap.checks.size() == 4);
    CHECK(cheap.bwrap == thorough.bwrap);

    const auto open = lx::probe(options(true, false));
    CHECK_MESSAGE(open.available(), sbx::to_string(open.why()));
    CHECK(contains(open.checks[3].detail, "not needed"));

    const auto given = lx::probe(options(false, true, thorough.bwrap));
    CHECK(given.available());
    CHECK(given.bwrap == thorough.bwrap);
}

TEST_CASE("probe: a bwrap path that is wrong makes the sandbox unavailable") {
    const auto relative = lx::probe(options(false, true, "bwrap"));
    CHECK_FALSE(relative.available());
    CHECK(contains(sbx::to_string(relative.why()), "the bwrap path \"bwrap\" is not absolute"));
    const auto missing = lx::probe(options(true, true, "/nonexistent/bwrap"));
    CHECK_FALSE(missing.available());
    CHECK(missing.checks.size() == 4);  // no run without a bwrap
    CHECK(contains(sbx::to_string(missing.why()), "nothing is at /nonexistent/bwrap"));
}

TEST_CASE("probe: the unprivileged user sbx-test can run the sandbox too") {
    if (::geteuid() != 0) {
        MESSAGE("skipped: only root can become sbx-test");
        return;
    }
    const passwd* pw = ::getpwnam("sbx-test");
    if (pw == nullptr) {
        MESSAGE("skipped: no user sbx-test on this machine");
        return;
    }
    const uid_t uid = pw->pw_uid;
    const gid_t gid = pw->pw_gid;
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        // The child: this test program is single-threaded, so it may allocate.
        ::close(fds[0]);
        if (::setgroups(0, nullptr) != 0 || ::setresgid(gid, gid, gid) != 0 || ::setresuid(uid, uid, uid) != 0)
            ::_exit(2);
        const auto r = lx::probe(options(true));
        const std::string text = lx::to_text(r);
        if (::write(fds[1], text.data(), text.size()) < 0) ::_exit(3);
        ::_exit(r.available() ? 0 : 1);
    }
    ::close(fds[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    ::close(fds[0]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    MESSAGE("thorough probe as sbx-test:\n" << text);
    REQUIRE(WIFEXITED(status));
    CHECK_MESSAGE(WEXITSTATUS(status) == 0, text);
}

TEST_CASE("trial_plan: sbx run's filesystem in miniature, mount points parents first") {
    const auto p = lx::trial_plan("/tmp/sbx-doctor-1", "/usr/bin/true");
    CHECK(p.cwd == "/tmp/sbx-doctor-1/root");
    CHECK(p.argv == std::vector<std::string>{"/usr/bin/true"});
    REQUIRE(p.filesystem.mounts.size() == 4);
    CHECK(p.filesystem.isolated);
    CHECK(p.filesystem.mounts[0].kind == sbx::MountKind::bind);
    CHECK(p.filesystem.mounts[0].path == p.cwd);
    for (const auto& m : p.filesystem.mounts) {
        CAPTURE(m.path);
        CHECK(sbx::paths::at_or_under(m.path, p.cwd));
        CHECK(m.source == m.path);
        CHECK_FALSE(m.why.empty());
    }
    // Every kind of mount a plan makes, as bubblewrap does it: --bind, --ro-bind, --tmpfs, /dev/null.
    for (auto kind : {sbx::MountKind::ro_bind, sbx::MountKind::mask_dir, sbx::MountKind::mask_file})
        CHECK(std::any_of(p.filesystem.mounts.begin(), p.filesystem.mounts.end(),
                          [&](const sbx::Mount& m) { return m.kind == kind; }));
}
