#include "linux/probe.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <span>

#include "base/fd_io.hpp"
#include "linux/seccomp_filter.hpp"
#include "sbx/core/json_write.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "sbx/linux/bwrap.hpp"

namespace sbx::linux_sandbox {

using sbx::launcher::high_fd;
using sbx::launcher::Pipe;
using sbx::launcher::run_program;

namespace {

constexpr std::string_view kUnshareWhat = "unshare of user, mount, PID, network, IPC and UTS namespaces";

constexpr std::string_view kInstallFix =
    "install bubblewrap 0.8.0 or later: apt-get install bubblewrap (Debian, Ubuntu), dnf install bubblewrap "
    "(Fedora, RHEL), pacman -S bubblewrap (Arch), zypper install bubblewrap (openSUSE), apk add bubblewrap "
    "(Alpine); or set sandbox.bwrapPath to a bwrap of your own";

constexpr std::string_view kContainerFix =
    "in a Docker or Podman container, start it with --security-opt seccomp=unconfined (and --security-opt "
    "apparmor=unconfined where AppArmor runs), or give it CAP_SYS_ADMIN (--cap-add SYS_ADMIN) or --privileged; "
    "in Kubernetes, set the pod's seccompProfile to Unconfined";

constexpr std::string_view kMaxUsernsFix =
    "raise the limit as root: sysctl -w user.max_user_namespaces=15000 (put user.max_user_namespaces=15000 in "
    "/etc/sysctl.d/50-userns.conf to keep it)";

constexpr std::string_view kNoSeccompWay =
    "; or allow every Unix socket (sandbox.network.allowAllUnixSockets), which needs no seccomp filter";

std::string errno_name(int e) {
    switch (e) {
        case EPERM: return "EPERM";
        case EACCES: return "EACCES";
        case EINVAL: return "EINVAL";
        case ENOSPC: return "ENOSPC";
        case EUSERS: return "EUSERS";
        case ENOMEM: return "ENOMEM";
        case ENOSYS: return "ENOSYS";
        case EOPNOTSUPP: return "EOPNOTSUPP";
        case EFAULT: return "EFAULT";
        default: return "errno " + std::to_string(e);
    }
}

// "EPERM (Operation not permitted)"
std::string describe_errno(int e) { return errno_name(e) + " (" + std::strerror(e) + ")"; }

std::string signal_name(int sig) {
    if (sig == SIGSYS) return "SIGSYS";
    if (sig == SIGKILL) return "SIGKILL";
    if (sig == SIGSEGV) return "SIGSEGV";
    return "signal " + std::to_string(sig);
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
        s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
        s.remove_suffix(1);
    return s;
}

std::string_view first_line(std::string_view s) {
    s = trim(s);
    return s.substr(0, s.find('\n'));
}

// The non-empty lines of a program's stderr joined with "; ", at most 400 bytes.
std::string message_of(std::string_view err) {
    std::string out;
    err = trim(err);
    while (!err.empty()) {
        const auto nl = err.find('\n');
        const std::string_view line = trim(err.substr(0, nl));
        if (!line.empty()) {
            if (!out.empty()) out += "; ";
            out += line;
        }
        if (nl == std::string_view::npos) break;
        err.remove_prefix(nl + 1);
    }
    if (out.size() > 400) out = out.substr(0, 397) + "...";
    return out;
}

// An argument as a shell would need it: as is when plain, else in single quotes.
std::string shell_word(const std::string& a) {
    const bool plain = !a.empty() && std::all_of(a.begin(), a.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("_/.,:=+-@%").find(c) != std::string_view::npos;
    });
    if (plain) return a;
    std::string q = "'";
    for (char c : a) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return q + "'";
}

std::string command_line(const std::vector<std::string>& argv) {
    std::string out;
    for (const auto& a : argv) {
        if (!out.empty()) out += ' ';
        out += shell_word(a);
    }
    return out;
}

// How a run went wrong, for a detail: "exited with status 1", "timed out", ...
std::string run_failure(const RunOutcome& run) {
    std::string how;
    if (!run.spawn_error.empty()) return "could not be started: " + run.spawn_error;
    if (run.timed_out) how = "did not finish within 10 seconds and was killed";
    else if (run.signal != 0) how = "was killed by " + signal_name(run.signal);
    else how = "exited with status " + std::to_string(run.exit_code);
    if (const auto msg = message_of(run.err); !msg.empty()) how += ": " + msg;
    return how;
}

Check pass(std::string name, std::string detail) { return Check{std::move(name), true, std::move(detail), {}}; }

Check failure(std::string name, std::string detail, std::string fix) {
    return Check{std::move(name), false, std::move(detail), std::move(fix)};
}

std::string sysctl_text(const std::optional<long>& v) { return v ? std::to_string(*v) : std::string("absent"); }

std::string apparmor_fix(const std::string& bwrap) {
    return "as root, give bwrap an AppArmor profile that allows user namespaces: printf 'abi <abi/4.0>,\\ninclude "
           "<tunables/global>\\nprofile bwrap " +
           bwrap +
           " flags=(unconfined) {\\n  userns,\\n}\\n' > /etc/apparmor.d/bwrap && apparmor_parser -r "
           "/etc/apparmor.d/bwrap; or lift the restriction for every program: sysctl -w "
           "kernel.apparmor_restrict_unprivileged_userns=0";
}

}  // namespace

// ---- Pure decisions -------------------------------------------------------------

std::optional<Version> parse_bwrap_version(std::string_view output) {
    std::string_view line = first_line(output);
    constexpr std::string_view prefix = "bubblewrap";
    if (line.substr(0, prefix.size()) != prefix) return std::nullopt;
    line.remove_prefix(prefix.size());
    if (line.empty() || (line.front() != ' ' && line.front() != '\t')) return std::nullopt;
    line = trim(line);

    int parts[3] = {0, 0, 0};
    std::size_t count = 0;
    while (count < 3) {
        const char* begin = line.data();
        const char* end = line.data() + line.size();
        if (begin == end || *begin < '0' || *begin > '9') return std::nullopt;
        int v = 0;
        const auto [ptr, ec] = std::from_chars(begin, end, v);
        if (ec != std::errc{} || ptr - begin > 6) return std::nullopt;  // absurd or overflowing numbers
        parts[count++] = v;
        line.remove_prefix(static_cast<std::size_t>(ptr - begin));
        if (count == 3 || line.size() < 2 || line.front() != '.' || line[1] < '0' || line[1] > '9') break;
        line.remove_prefix(1);
    }
    if (count < 2) return std::nullopt;
    // What may follow the numbers: nothing, or a suffix that is not itself a number.
    if (!line.empty() && line.front() >= '0' && line.front() <= '9') return std::nullopt;
    return Version{parts[0], parts[1], parts[2]};
}

std::string to_string(const Version& v) {
    return std::to_string(v.major) + '.' + std::to_string(v.minor) + '.' + std::to_string(v.patch);
}

Check check_architecture(std::string_view machine, std::string_view build, bool need_seccomp) {
    const std::string name = "architecture";
    const bool filter_exists = build == "x86_64" || build == "aarch64";
    if (!need_seccomp)
        return pass(name, std::string(machine) +
                              "; the plan needs no seccomp filter, so the architecture does not matter");
    if (!filter_exists)
        return failure(name,
                       "this sbx is built for " + std::string(build) +
                           ", and the seccomp filter of sbx-linux exists only for x86_64 and aarch64",
                       "run an x86_64 or aarch64 build of sbx on a kernel of the same architecture" +
                           std::string(kNoSeccompWay));
    if (machine != build)
        return failure(name,
                       "this sbx is built for " + std::string(build) + " but the kernel reports " +
                           std::string(machine) +
                           " (an emulator, or a personality such as linux32): its seccomp filter would not match the "
                           "system calls made",
                       "run the build of sbx for " + std::string(machine) + std::string(kNoSeccompWay));
    return pass(name, std::string(machine));
}

Check check_bubblewrap(const ProbeInputs& in) {
    const std::string name = "bubblewrap";
    const ProgramFile& b = in.bwrap;
    const bool explicit_path = !in.bwrap_request.empty();
    if (explicit_path && in.bwrap_request.front() != '/')
        return failure(name, "the bwrap path \"" + in.bwrap_request + "\" is not absolute",
                       "give the absolute path of bwrap (sandbox.bwrapPath), e.g. /usr/bin/bwrap");
    if (b.path.empty()) {
        if (explicit_path)
            return failure(name, "nothing is at " + in.bwrap_request + ", the bwrap path sbx was given",
                           "correct sandbox.bwrapPath, or " + std::string(kInstallFix));
        return failure(name,
                       "bwrap is in no absolute directory of PATH (" +
                           (in.path_env ? "PATH=" + *in.path_env : "PATH is unset; searched " + std::string(kDefaultPath)) +
                           ")",
                       std::string(kInstallFix));
    }
    if (!b.regular)
        return failure(name, b.path + " is not a regular file", "point sandbox.bwrapPath at the bwrap program");
    if (!b.executable)
        return failure(name, b.path + " is not executable for this user",
                       "chmod 0755 " + b.path + " as its owner, or " + std::string(kInstallFix));
    if (b.setuid || b.setgid)
        return failure(name,
                       b.path + " has the " + (b.setuid ? "setuid" : "setgid") +
                           " bit: sbx runs bubblewrap unprivileged only, on user namespaces, and refuses a bwrap "
                           "that would set up the sandbox with privileges",
                       "chmod u-s,g-s " + b.path +
                           " (bubblewrap then uses user namespaces; see the user namespaces check), or install a "
                           "bwrap without the bit and set sandbox.bwrapPath to it");
    if (!in.version_run) return pass(name, b.path + ", version not checked (the thorough probe runs bwrap --version)");

    const RunOutcome& run = *in.version_run;
    if (!run.succeeded())
        return failure(name, b.path + " --version " + run_failure(run),
                       "reinstall bubblewrap, or " + std::string(kInstallFix));
    const auto version = parse_bwrap_version(run.out);
    if (!version)
        return failure(name,
                       b.path + " --version printed \"" + std::string(first_line(run.out)) +
                           "\", not \"bubblewrap X.Y.Z\": it does not look like bubblewrap",
                       "point sandbox.bwrapPath at bubblewrap's bwrap itself, not a wrapper, or " +
                           std::string(kInstallFix));
    if (*version < kMinBwrapVersion)
        return failure(name,
                       "bubblewrap " + to_string(*version) + " at " + b.path + " is too old: sbx needs " +
                           to_string(kMinBwrapVersion) + " or later, for --disable-userns",
                       "install bubblewrap " + to_string(kMinBwrapVersion) +
                           " or later (Debian 12 ships 0.8.0; elsewhere use backports, or build it from "
                           "https://github.com/containers/bubblewrap and set sandbox.bwrapPath to it)");
    return pass(name, b.path + " " + to_string(*version));
}

namespace {

// What the trial unshare in a child process said (f.trial is there).
Check interpret_trial(const UsernsFacts& f, const std::string& sysctls, bool apparmor,
                      const std::string& apparmor_detail) {
    const std::string name = "user namespaces";
    const UnshareOutcome& t = *f.trial;
    const std::string tried = std::string(kUnshareWhat) + " in a child process";
    const std::string in_filter =
        f.seccomp_mode == 2 ? "; this process already runs under a seccomp filter, as in a container" : "";
    if (!t.spawn_error.empty())
        return failure(name, "could not try the " + tried + ": " + t.spawn_error,
                       "free a process slot or memory (see ulimit -u) and run sbx doctor again");
    if (t.signal != 0)
        return failure(name,
                       "the " + tried + " was killed by " + signal_name(t.signal) +
                           (t.signal == SIGSYS ? ": a seccomp policy kills callers of unshare" : "") + in_filter,
                       std::string(kContainerFix));
    switch (t.error) {
        case 0: return pass(name, "the " + tried + " worked (" + sysctls + ")");
        case ENOSPC:
            return failure(name,
                           "the " + tried + " failed with ENOSPC: the limit on user namespaces (max_user_namespaces=" +
                               sysctl_text(f.max_user_namespaces) +
                               ") or another limit in /proc/sys/user/max_*_namespaces is used up",
                           std::string(kMaxUsernsFix) + ", and likewise any other /proc/sys/user/max_*_namespaces that is low");
        case EPERM:
        case EACCES:
            if (apparmor)
                return failure(name, apparmor_detail + ", and the " + tried + " failed with " + errno_name(t.error),
                               apparmor_fix(f.bwrap_path));
            return failure(name,
                           "the " + tried + " failed with " + errno_name(t.error) + " although the kernel settings allow it (" +
                               sysctls +
                               "): a container or seccomp policy without the needed capabilities refuses it (e.g. "
                               "Docker's default seccomp profile), or this process runs in a chroot" +
                               in_filter,
                           std::string(kContainerFix) + "; outside a container, run sbx outside any chroot");
        case EUSERS:
            return failure(name,
                           "the " + tried + " failed with EUSERS: this process is already 32 user namespaces deep, "
                                            "the kernel's limit",
                           "run sbx from a shallower sandbox or container (fewer nested user namespaces)");
        case EINVAL:
            return failure(name,
                           "the " + tried + " failed with EINVAL: the kernel lacks one of these namespaces (built "
                                            "without CONFIG_USER_NS, CONFIG_PID_NS, CONFIG_NET_NS, CONFIG_IPC_NS or "
                                            "CONFIG_UTS_NS)",
                           "boot a kernel built with user, PID, network, IPC and UTS namespaces (every mainstream "
                           "distribution kernel is)");
        case ENOMEM:
            return failure(name, "the " + tried + " failed with ENOMEM: the kernel is short of memory",
                           "free memory and run sbx doctor again");
        default:
            return failure(name, "the " + tried + " failed with " + describe_errno(t.error) + " (" + sysctls + ")",
                           std::string(kContainerFix));
    }
}

}  // namespace

Check interpret_userns(const UsernsFacts& f) {
    const std::string name = "user namespaces";
    const bool restricted = !f.cap_sys_admin;  // the sysctls for unprivileged callers apply
    const std::string sysctls = "max_user_namespaces=" + sysctl_text(f.max_user_namespaces) +
                                ", unprivileged_userns_clone=" + sysctl_text(f.unprivileged_userns_clone) +
                                ", apparmor_restrict_unprivileged_userns=" +
                                sysctl_text(f.apparmor_restrict_unprivileged_userns);
    const bool apparmor = restricted && f.apparmor_restrict_unprivileged_userns.value_or(0) == 1;

    if (f.max_user_namespaces && *f.max_user_namespaces == 0)
        return failure(name, "user namespaces are turned off: /proc/sys/user/max_user_namespaces is 0",
                       std::string(kMaxUsernsFix));
    if (restricted && f.unprivileged_userns_clone && *f.unprivileged_userns_clone == 0)
        return failure(name,
                       "user namespaces are refused to unprivileged users: /proc/sys/kernel/unprivileged_userns_clone "
                       "is 0 (a Debian and Ubuntu kernel switch)",
                       "allow them as root: sysctl -w kernel.unprivileged_userns_clone=1 (put "
                       "kernel.unprivileged_userns_clone=1 in /etc/sysctl.d/50-userns.conf to keep it)");

    // AppArmor grants user namespaces per program: what this process may do says
    // nothing about bwrap, which a profile may allow. Only a bwrap run decides.
    const std::string apparmor_detail =
        "AppArmor restricts unprivileged user namespaces (/proc/sys/kernel/apparmor_restrict_unprivileged_userns is "
        "1, as on Ubuntu 23.10 and later)";
    // When bwrap failed, the trial below and the bubblewrap run check say why.
    if (apparmor && f.bwrap_ran == true)
        return pass(name, apparmor_detail + ", and bwrap may make them (a profile allows it): it ran");
    if (apparmor && !f.trial)
        return pass(name, apparmor_detail + "; bwrap works only if a profile allows it, not verified (the thorough "
                                            "probe runs bwrap)");

    if (!f.trial) return pass(name, "allowed by the kernel settings (" + sysctls + "); not tried (cheap probe)");

    return interpret_trial(f, sysctls, apparmor, apparmor_detail);
}

Check check_seccomp(const std::optional<SeccompFacts>& facts) {
    const std::string name = "seccomp";
    if (!facts)
        return pass(name, "not needed: the plan allows every Unix socket, so --disable-userns alone keeps the "
                          "command out of new namespaces");
    const SeccompFacts& f = *facts;
    const std::string kernel_fix =
        "boot a kernel built with CONFIG_SECCOMP and CONFIG_SECCOMP_FILTER, Linux 4.14 or later (every mainstream "
        "distribution kernel is)" +
        std::string(kNoSeccompWay);
    if (f.get_seccomp_errno == EINVAL)
        return failure(name, "the kernel has no seccomp: prctl(PR_GET_SECCOMP) fails with EINVAL (no CONFIG_SECCOMP)",
                       kernel_fix);
    if (f.get_seccomp_errno != 0)
        return failure(name, "prctl(PR_GET_SECCOMP) fails with " + describe_errno(f.get_seccomp_errno),
                       std::string(kContainerFix) + std::string(kNoSeccompWay));
    switch (f.action_avail_errno) {
        case 0: break;
        case EOPNOTSUPP:
            return failure(name,
                           "the kernel does not offer the seccomp actions the filter uses (KILL_PROCESS needs Linux "
                           "4.14 or later)",
                           kernel_fix);
        case EINVAL:
        case ENOSYS:
            return failure(name,
                           "the kernel takes no seccomp filters: seccomp(SECCOMP_GET_ACTION_AVAIL) fails with " +
                               errno_name(f.action_avail_errno) + " (no CONFIG_SECCOMP_FILTER, or older than Linux 4.14)",
                           kernel_fix);
        default:
            return failure(name,
                           "seccomp(SECCOMP_GET_ACTION_AVAIL) fails with " + describe_errno(f.action_avail_errno) +
                               ": a container or seccomp policy refuses the seccomp system call",
                           std::string(kContainerFix) + std::string(kNoSeccompWay));
    }
    if (!f.build_error.empty())
        return failure(name, "libseccomp cannot build the filter: " + f.build_error,
                       "update libseccomp (apt-get install libseccomp2, dnf install libseccomp); if it is current, "
                       "report this message as a bug in sbx");
    return pass(name, "the kernel takes seccomp filters with the KILL_PROCESS and ERRNO actions, and libseccomp "
                      "builds the filter");
}

std::string explain_bwrap_failure(std::string_view err, const std::string& bwrap) {
    auto has = [&](std::string_view s) { return err.find(s) != std::string_view::npos; };
    if (has("Unknown option"))
        return "this bwrap lacks an option sbx uses: install bubblewrap " + to_string(kMinBwrapVersion) +
               " or later (Debian 12 ships 0.8.0) and set sandbox.bwrapPath to it if it is not first in PATH";
    if (has("ENOSPC") || has("No space left on device") || has("max_*_namespaces"))
        return std::string(kMaxUsernsFix) + ", and likewise any other /proc/sys/user/max_*_namespaces that is low";
    if (has("uid map") || has("gid map"))
        return "bwrap may not map its user into the new namespace: on Ubuntu 23.10 and later that is AppArmor's "
               "restriction, so " +
               apparmor_fix(bwrap) + "; " + std::string(kContainerFix);
    if (has("No permissions to creat") || has("Creating new namespace failed"))
        return "the kernel or a container refuses user namespaces to bwrap (see the user namespaces check): if "
               "kernel.unprivileged_userns_clone is 0, sysctl -w kernel.unprivileged_userns_clone=1; " +
               std::string(kContainerFix);
    if (has("Failed to make / slave"))
        return "an AppArmor profile forbids mounting (Docker's docker-default does): start the container with "
               "--security-opt apparmor=unconfined, or --privileged";
    if (has("Can't mount proc"))
        return "this container masks parts of /proc, so a new /proc cannot be mounted: start it with "
               "--security-opt systempaths=unconfined (Docker 20.10 and later), or --privileged";
    if (has("loopback") || has("RTM_NEW"))
        return "the new network namespace cannot be set up: " + std::string(kContainerFix);
    if (has("seccomp") || has("SECCOMP"))
        return "the kernel refused the seccomp filter: boot a kernel with CONFIG_SECCOMP_FILTER, Linux 4.14 or "
               "later" +
               std::string(kNoSeccompWay);
    if (has("Operation not permitted") || has("Permission denied")) return std::string(kContainerFix);
    return "run the command in the detail to see bubblewrap's whole message; the checks above may name the cause";
}

Check check_bwrap_run(const RunOutcome& run, const std::vector<std::string>& argv, const StageReport& stage) {
    const std::string name = "bubblewrap run";
    const bool with_seccomp = std::find(argv.begin(), argv.end(), "--seccomp") != argv.end();
    const std::string command = argv.empty() ? std::string("true") : argv.back();
    if (run.succeeded())
        return pass(name, "bwrap ran " + command + " in new namespaces with no capabilities" +
                              (with_seccomp ? " under the seccomp filter, which bubblewrap loads into its init (pid 1) too" : "") +
                              (std::find(argv.begin(), argv.end(), "--mounts-filter-fd") != argv.end()
                                   ? ", the stage making the mounts with the new mount API"
                                   : ""));
    // The stage says what went wrong inside on its status pipe, not on standard error.
    std::string inside;
    if (!stage.failure.empty()) inside = "; the stage failed: " + stage.failure;
    else if (stage.exec_errno != 0) inside = "; the stage could not run " + command + ": " + std::strerror(stage.exec_errno);
    return failure(name, command_line(argv) + " " + run_failure(run) + inside,
                   explain_bwrap_failure(run.err + stage.failure, argv.empty() ? std::string("/usr/bin/bwrap") : argv.front()));
}

ProbeResult evaluate(const ProbeInputs& in, const ProbeOptions& options) {
    ProbeResult r;
    r.checks.push_back(check_architecture(in.machine, in.build_arch, options.need_seccomp));
    Check bwrap = check_bubblewrap(in);
    if (bwrap.ok) {
        r.bwrap = in.bwrap.path;
        if (in.version_run)
            if (auto v = parse_bwrap_version(in.version_run->out)) r.bwrap_version = to_string(*v);
    }
    const bool bwrap_ok = bwrap.ok;
    r.checks.push_back(std::move(bwrap));
    r.checks.push_back(interpret_userns(in.userns));
    r.checks.push_back(check_seccomp(in.seccomp));
    if (bwrap_ok && in.bwrap_run)
        r.checks.push_back(check_bwrap_run(*in.bwrap_run, in.bwrap_run_argv, in.bwrap_run_stage));
    return r;
}

bool ProbeResult::available() const {
    return std::all_of(checks.begin(), checks.end(), [](const Check& c) { return c.ok; });
}

sbx::Error ProbeResult::why() const {
    for (const auto& c : checks) {
        if (c.ok) continue;
        return sbx::Error(Errc::unavailable, "the Linux sandbox cannot run here: the " + c.name + " check failed")
            .caused_by(sbx::Error(Errc::sandbox_unavailable, c.name + ": " + c.detail + "; to fix: " + c.fix));
    }
    return sbx::Error(Errc::internal, "ProbeResult::why called although every check passed");
}

std::string to_json(const ProbeResult& r) {
    json::Writer w;
    w.begin_object();
    w.key("available").value(r.available());
    w.key("bwrap").value(r.bwrap);
    w.key("bwrap_version").value(r.bwrap_version);
    w.key("checks").begin_array();
    for (const auto& c : r.checks) {
        w.begin_object();
        w.key("name").value(c.name);
        w.key("ok").value(c.ok);
        w.key("detail").value(c.detail);
        w.key("fix").value(c.fix);
        w.end_object();
    }
    w.end_array();
    w.end_object();
    return w.take();
}

std::string to_text(const ProbeResult& r) {
    std::size_t width = 0;
    for (const auto& c : r.checks) width = std::max(width, c.name.size());
    std::string out;
    for (const auto& c : r.checks) {
        out += c.ok ? "ok   " : "FAIL ";
        out += c.name;
        out.append(width - c.name.size() + 2, ' ');
        out += c.detail;
        out += '\n';
        if (!c.ok) out += "     fix: " + c.fix + '\n';
    }
    return out;
}

// ---- The thin layer that reads the machine ----------------------------------------

std::string_view build_arch() {
#if defined(__x86_64__) && defined(__ILP32__)
    return "x32";
#elif defined(__x86_64__)
    return "x86_64";
#elif defined(__aarch64__) && (defined(__ILP32__) || defined(__AARCH64EB__))
    return "aarch64_ilp32_or_be";
#elif defined(__aarch64__)
    return "aarch64";
#elif defined(__i386__)
    return "i386";
#elif defined(__arm__)
    return "arm";
#else
    return "unknown";
#endif
}

sbx::Plan trial_plan(const std::string& dir, const std::string& true_path) {
    const std::string root = dir + "/root";
    auto mount = [](MountKind kind, const std::string& path, const std::string& why) {
        return Mount{kind, path, path, {}, why};
    };
    sbx::Plan plan;
    plan.argv = {true_path};
    plan.root = root;
    plan.cwd = root;
    plan.filesystem.mounts = {
        mount(MountKind::bind, root, "the project root, writable"),
        mount(MountKind::ro_bind, root + "/.git", "a protected directory, read-only"),
        mount(MountKind::mask_dir, root + "/.ssh", "a denyRead directory, hidden"),
        mount(MountKind::mask_file, root + "/.netrc", "a denyRead file, hidden"),
    };
    return plan;
}

bool mount_api_available() {
    // A size of 0 is refused before anything else is looked at: EINVAL from the
    // kernel, ENOSYS where it lacks the call, another error where a seccomp
    // policy around us refuses it (then bubblewrap makes the mounts).
    errno = 0;
    const long rc = ::syscall(SYS_mount_setattr, -1, "", 0, nullptr, 0);
    return rc != 0 && errno == EINVAL;
}

bool pid_max_per_namespace() {
    utsname u{};
    if (::uname(&u) != 0) return false;
    unsigned major = 0, minor = 0;
    if (std::sscanf(u.release, "%u.%u", &major, &minor) != 2) return false;
    return major > 6 || (major == 6 && minor >= 14);
}

void stage_makes_mounts(const sbx::Plan& plan, BwrapLaunch& launch, StageArgs& stage, int mounts_filter_fd) {
    launch.stage_mounts = true;
    stage.mounts = stage_mount_ops(mount_ops(plan, launch));
    stage.mounts_filter_fd = mounts_filter_fd;
    stage.cwd = plan.cwd;
    stage.uid = ::getuid();
    stage.gid = ::getgid();
    if (const auto& p = plan.limits[static_cast<std::size_t>(sbx::Limit::processes)]; p && pid_max_per_namespace())
        stage.pid_max = p->value + kReservedPids + 1;
}

std::vector<std::string> bwrap_run_argv(const std::string& bwrap, const std::string& dir, const std::string& true_path,
                                        bool with_seccomp, bool stage_mounts) {
    const sbx::Plan plan = trial_plan(dir, true_path);
    StageArgs stage;
    stage.exe_fd = kTrialExeFd;
    stage.status_fd = kTrialStatusFd;
    stage.filtered = with_seccomp;
    stage.command = plan.argv;
    BwrapLaunch launch;
    launch.bwrap = bwrap;
    if (with_seccomp) launch.seccomp_fd = kTrialSeccompFd;
    launch.group_dir = dir + "/group";
    if (with_seccomp && stage_mounts) stage_makes_mounts(plan, launch, stage, kTrialMountsFilterFd);
    launch.stage_argv = stage_argv(stage);
    return bwrap_args(plan, launch);
}

namespace {

std::optional<long> read_sysctl(const std::string& path) {
    auto text = sbx::read_small_file(path, 64);
    if (!text || !*text) return std::nullopt;
    const std::string_view t = trim(**text);
    long v = 0;
    const auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
    if (ec != std::errc{} || ptr != t.data() + t.size()) return std::nullopt;
    return v;
}

bool has_cap_sys_admin() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (::syscall(SYS_capget, &header, data) != 0) return false;
    return (data[CAP_SYS_ADMIN / 32].effective & (1u << (CAP_SYS_ADMIN % 32))) != 0;
}

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

UnshareOutcome try_unshare() {
    UnshareOutcome t;
    const pid_t pid = ::fork();
    if (pid < 0) {
        t.spawn_error = errno_text("fork");
        return t;
    }
    if (pid == 0) {
        // The child: async-signal-safe calls only. errno values fit an exit status.
        const int flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS;
        ::_exit(::unshare(flags) == 0 ? 0 : (errno > 0 && errno < 256 ? errno : 255));
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            t.spawn_error = errno_text("waitpid");
            return t;
        }
    }
    if (WIFSIGNALED(status)) t.signal = WTERMSIG(status);
    else if (WIFEXITED(status)) t.error = WEXITSTATUS(status);
    return t;
}

SeccompFacts gather_seccomp(int get_seccomp_errno) {
    SeccompFacts f;
    f.get_seccomp_errno = get_seccomp_errno;
    for (std::uint32_t action : {SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_ERRNO}) {
        if (::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) != 0) {
            f.action_avail_errno = errno;
            break;
        }
    }
    if (auto filter = build_filter(SeccompOptions{}); !filter) f.build_error = sbx::to_string(filter.error());
    return f;
}

// The end-to-end run's temporary directory, holding the mount points of
// trial_plan and the group directory; removed, deepest first, when it goes.
class TrialDir {
public:
    TrialDir() {
        char tmpl[] = "/tmp/sbx-doctor-XXXXXX";
        if (::mkdtemp(tmpl) == nullptr) {
            error_ = errno_text("mkdtemp /tmp/sbx-doctor-XXXXXX");
            return;
        }
        dir_ = tmpl;
    }
    TrialDir(const TrialDir&) = delete;
    TrialDir& operator=(const TrialDir&) = delete;
    ~TrialDir() {
        for (auto it = made_.rbegin(); it != made_.rend(); ++it) (void)::remove(it->c_str());
        if (!dir_.empty()) (void)::rmdir(dir_.c_str());
    }
    const std::string& path() const { return dir_; }
    // Empty when the directory and every mount point of `plan` were made, else why not.
    std::string make(const sbx::Plan& plan) {
        if (!error_.empty()) return error_;
        if (!make_one(dir_ + "/group", false)) return error_;
        for (const auto& m : plan.filesystem.mounts)
            if (!make_one(m.path, m.kind == MountKind::mask_file)) return error_;
        return {};
    }

private:
    bool make_one(const std::string& path, bool file) {
        const int rc = file ? ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)
                            : ::mkdir(path.c_str(), 0700);
        if (rc < 0) {
            error_ = errno_text(file ? "open" : "mkdir") + " (" + path + ")";
            return false;
        }
        if (file) ::close(rc);
        made_.push_back(path);
        return true;
    }
    std::string dir_;
    std::string error_;
    std::vector<std::string> made_;
};

// The end-to-end run: bwrap_run_argv in a TrialDir, through the stage's real
// program, under the seccomp program `sbx run` would load for such a plan (one
// that allows every Unix socket when !need_seccomp) where libseccomp builds it
// (else the seccomp check says why, and the run goes without). Fills in
// bwrap_run_argv, bwrap_run and bwrap_run_stage.
void run_trial(ProbeInputs& in, const ProbeOptions& options, const std::string& bwrap, const std::string& true_path) {
    in.bwrap_run_argv = {bwrap};
    RunOutcome& run = in.bwrap_run.emplace();
    TrialDir dir;
    // The two parts of the filter where the stage makes the mounts, else the whole.
    const bool unix_sockets = !options.need_seccomp;
    auto split = mount_api_available() ? split_seccomp_programs(SeccompOptions{unix_sockets}) : std::nullopt;
    const bool stage_mounts = split.has_value();
    Fd bpf, mounts_bpf;
    if (split) {
        bpf = high_fd(Fd(split->first.release()));
        mounts_bpf = high_fd(Fd(split->second.release()));
    } else if (auto program = seccomp_program(SeccompOptions{unix_sockets})) {
        bpf = high_fd(Fd(program->release()));
    }
    in.bwrap_run_argv = bwrap_run_argv(bwrap, dir.path(), true_path, bpf.get() >= 0, stage_mounts);
    if (auto why = dir.make(trial_plan(dir.path(), true_path)); !why.empty()) {
        run.spawn_error = "cannot make the run's directory: " + why;
        return;
    }
    Fd exe = high_fd(options.stage_program.empty() ? open_stage_binary()
                                                   : Fd(::open(options.stage_program.c_str(), O_RDONLY | O_CLOEXEC)));
    if (!exe.ok()) {
        run.spawn_error = errno_text("cannot open the stage's program");
        return;
    }
    Pipe status;
    if (!status.open()) {
        run.spawn_error = errno_text("pipe2");
        return;
    }
    Fd status_r = high_fd(std::move(status.read)), status_w = high_fd(std::move(status.write));
    if (!status_r.ok() || !status_w.ok()) {
        run.spawn_error = errno_text("fcntl(F_DUPFD_CLOEXEC)");
        return;
    }
    static_assert(kTrialExeFd == 3 && kTrialStatusFd == 4 && kTrialSeccompFd == 5 && kTrialMountsFilterFd == 6,
                  "run_program passes them in this order");
    std::vector<int> pass{exe.get(), status_w.get()};
    if (bpf.get() >= 0) pass.push_back(bpf.get());
    if (mounts_bpf.get() >= 0) pass.push_back(mounts_bpf.get());
    run = run_program(in.bwrap_run_argv, pass);
    status_w.reset();  // bubblewrap and the stage are gone: the pipe ends here
    auto bytes = sbx::read_all(status_r.get(), 4096, "the stage's status pipe");
    in.bwrap_run_stage = parse_stage_report(bytes ? *bytes : std::string());
}

}  // namespace

ProbeInputs gather_inputs(const ProbeOptions& options) {
    ProbeInputs in;
    struct utsname u {};
    if (::uname(&u) == 0) in.machine = u.machine;
    in.build_arch = std::string(build_arch());
    in.bwrap_request = options.bwrap_path;
    if (const char* p = std::getenv("PATH")) in.path_env = p;

    if (options.bwrap_path.empty()) in.bwrap = find_in_path("bwrap", in.path_env);
    else if (options.bwrap_path.front() == '/') in.bwrap = inspect_program(options.bwrap_path);
    const ProgramFile& b = in.bwrap;
    const bool bwrap_usable = b.regular && b.executable && !b.setuid && !b.setgid &&
                              (options.bwrap_path.empty() || options.bwrap_path.front() == '/');

    in.userns.max_user_namespaces = read_sysctl("/proc/sys/user/max_user_namespaces");
    in.userns.unprivileged_userns_clone = read_sysctl("/proc/sys/kernel/unprivileged_userns_clone");
    in.userns.apparmor_restrict_unprivileged_userns = read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    in.userns.cap_sys_admin = has_cap_sys_admin();
    const int mode = ::prctl(PR_GET_SECCOMP, 0, 0, 0, 0);
    const int mode_errno = mode < 0 ? errno : 0;
    in.userns.seccomp_mode = mode < 0 ? 0 : mode;
    if (!b.path.empty()) in.userns.bwrap_path = b.path;

    if (options.need_seccomp) in.seccomp = gather_seccomp(mode_errno);

    if (options.thorough) {
        in.userns.trial = try_unshare();
        if (bwrap_usable) {
            in.version_run = run_program({b.path, "--version"});
            // A bwrap the bubblewrap check refuses is not run again: that check says why.
            const auto version = parse_bwrap_version(in.version_run->out);
            if (!in.version_run->succeeded() || !version || *version < kMinBwrapVersion) return in;
            std::string true_path = find_in_path("true", in.path_env).path;
            if (true_path.empty()) true_path = "/bin/true";
            run_trial(in, options, b.path, true_path);
            in.userns.bwrap_ran = in.bwrap_run->succeeded();
        }
    }
    return in;
}

ProbeResult probe(const ProbeOptions& options) { return evaluate(gather_inputs(options), options); }

UnshareOutcome user_namespace_trial() { return try_unshare(); }

}  // namespace sbx::linux_sandbox
