// launchers/linux/probe.hpp - can the Linux sandbox run here, and if not, why and what to do.
//
// Decides, check by check, whether sbx-linux can confine a command on this
// machine: the architecture, bubblewrap, user namespaces, seccomp and (thorough
// mode) one real bubblewrap run. Each check names what it found and, when it
// fails, a fix a user can act on.
//
// Two layers. gather_inputs() is the only part that touches the machine (uname,
// PATH, /proc/sys, capget, prctl, libseccomp, and in thorough mode a fork, two
// runs of bwrap and a temporary directory for the second); evaluate() and the check functions below it are pure and turn
// ProbeInputs into checks, so every message is testable without the machine.
//
// Cost: the cheap probe (thorough = false) spawns no process and runs before
// every sandboxed command; it fails only on what certainly stops bubblewrap. The
// thorough probe (`sbx doctor`, or to explain a launch that failed) also tries
// unshare in a child, asks bwrap for its version and runs it end to end: the
// command line `sbx run` makes (sbx/linux/bwrap.hpp) of a small plan of its own
// (trial_plan), under the seccomp program `sbx run` loads, through the real
// stage, so that a doctor that passes means `sbx run` starts.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/error.hpp"
#include "sbx/linux/bwrap.hpp"
#include "sbx/plan/plan.hpp"
#include "shared/run_program.hpp"
#include "stage/stage.hpp"

namespace sbx::linux_sandbox {

using sbx::launcher::find_in_path;
using sbx::launcher::inspect_program;
using sbx::launcher::kDefaultPath;
using sbx::launcher::ProgramFile;
using sbx::launcher::RunOutcome;

// One finding. `fix` is empty when ok, and says what to do when not.
struct Check {
    std::string name;
    bool ok = false;
    std::string detail;  // what was found; one sentence, no trailing period
    std::string fix;
};

struct ProbeOptions {
    std::string bwrap_path;    // absolute path of bwrap; empty: search PATH for "bwrap"
    bool need_seccomp = true;  // false: the plan allows every Unix socket, --disable-userns alone serves
    bool thorough = false;     // also spawn: unshare in a child, bwrap --version, a bwrap run
    // The stage's program for the bwrap run: an absolute path; empty: the one
    // sbx run starts (open_stage_binary: sbx-stage beside this program).
    std::string stage_program = {};
};

struct ProbeResult {
    std::vector<Check> checks;
    std::string bwrap;          // absolute path of the bwrap to run, when one was found
    std::string bwrap_version;  // "0.8.0"; empty unless the thorough probe read it

    // Every check is ok.
    bool available() const;
    // Errc::unavailable caused by Errc::sandbox_unavailable, which names the first
    // failing check, its detail and its fix. Call only when !available(); then it
    // returns Errc::internal.
    sbx::Error why() const;
};

// Probes this machine: evaluate(gather_inputs(options), options).
ProbeResult probe(const ProbeOptions& options);

// {"available":B,"bwrap":S,"bwrap_version":S,"checks":[{"name":S,"ok":B,"detail":S,"fix":S}]}
// with every key always present ("" when unknown or ok).
std::string to_json(const ProbeResult& result);

// One line per check, "ok   NAME  DETAIL" or "FAIL NAME  DETAIL" with the names
// padded to one width, and under a failing check "     fix: FIX". Ends with '\n'.
std::string to_text(const ProbeResult& result);

// ---- What a probe reads ----------------------------------------------------------



// What unshare(CLONE_NEWUSER | NEWNS | NEWPID | NEWNET | NEWIPC | NEWUTS) did in a
// forked child.
struct UnshareOutcome {
    int error = 0;            // its errno; 0 when it worked
    int signal = 0;           // the child was killed by this signal (SIGSYS: a seccomp policy)
    std::string spawn_error;  // non-empty: no child could be made (fork, waitpid)
};

// unshare() of the namespaces bubblewrap makes, tried in a forked child: what
// the thorough probe's user-namespace check reads. `sbx run` asks it before the
// weaker sandbox, which runs only where it fails.
UnshareOutcome user_namespace_trial();

// The facts the user-namespace check reads.
struct UsernsFacts {
    std::optional<long> max_user_namespaces;                    // /proc/sys/user/max_user_namespaces
    std::optional<long> unprivileged_userns_clone;              // /proc/sys/kernel/unprivileged_userns_clone
    std::optional<long> apparmor_restrict_unprivileged_userns;  // /proc/sys/kernel/apparmor_restrict_unprivileged_userns
    bool cap_sys_admin = false;  // CAP_SYS_ADMIN is effective (root outside a container): the sysctls above
                                 // that restrict unprivileged callers do not apply
    int seccomp_mode = 0;        // prctl(PR_GET_SECCOMP): 2 when this process already runs under a filter
    std::optional<UnshareOutcome> trial;  // nullopt: not tried (cheap probe)
    std::optional<bool> bwrap_ran;        // the thorough bwrap run worked; nullopt: not run
    std::string bwrap_path = "/usr/bin/bwrap";  // named in the AppArmor profile of a fix
};

// The facts the seccomp check reads.
struct SeccompFacts {
    int get_seccomp_errno = 0;   // errno of prctl(PR_GET_SECCOMP); EINVAL: kernel without CONFIG_SECCOMP
    int action_avail_errno = 0;  // errno of seccomp(SECCOMP_GET_ACTION_AVAIL, KILL_PROCESS and ERRNO); 0: both there
    std::string build_error;     // build_filter(SeccompOptions{}) failed with this; empty: it built
};

// Everything the checks read, so evaluate() needs no machine.
struct ProbeInputs {
    std::string machine;             // uname(2) machine: "x86_64", "aarch64", ...
    std::string build_arch;          // what this sbx was compiled for: "x86_64", "aarch64", "x32", "i386", ...
    std::string bwrap_request;       // ProbeOptions::bwrap_path as given
    std::optional<std::string> path_env;  // PATH; nullopt when unset
    ProgramFile bwrap;               // the bwrap found (see find_in_path, inspect_program)
    std::optional<RunOutcome> version_run;  // bwrap --version; nullopt: not run (cheap probe)
    UsernsFacts userns;
    std::optional<SeccompFacts> seccomp;    // nullopt: not gathered (need_seccomp false)
    std::optional<RunOutcome> bwrap_run;    // the end-to-end run; nullopt: not run
    std::vector<std::string> bwrap_run_argv;  // what that run executed, for its message
    StageReport bwrap_run_stage;              // what the stage wrote on its status pipe in that run
};

// ---- The thin layer that reads the machine ----------------------------------------

// The architecture this file was compiled for, spelled as uname(2) spells it.
std::string_view build_arch();


// The plan of the end-to-end run: `sbx run`'s filesystem in miniature, in the
// probe's temporary directory `dir` over the read-only `/`: DIR/root bound
// writable as a project root is, and the working directory; DIR/root/.git
// read-only, DIR/root/.ssh and DIR/root/.netrc hidden, as protected and
// denyRead paths are. The command is `true_path`. Its mounts come parents first:
// the probe makes each mount point (an empty file for a hidden file, else a
// directory) in that order.
sbx::Plan trial_plan(const std::string& dir, const std::string& true_path);

// The descriptors of the end-to-end run, as bubblewrap and the stage see them.
inline constexpr int kTrialExeFd = 3;      // the stage's program
inline constexpr int kTrialStatusFd = 4;   // the stage's status pipe
inline constexpr int kTrialSeccompFd = 5;  // the seccomp program, when there is one
inline constexpr int kTrialMountsFilterFd = 6;  // its second part, where the stage makes the mounts

// Whether the kernel has the new mount API the stage makes its mounts with
// (mount_setattr, Linux 5.12; launchers/stage/mounts.cpp), and no seccomp policy
// around sbx refuses it: asked with a call that can only fail.
bool mount_api_available();

// Whether the kernel keeps a pid_max per PID namespace (Linux 6.14), which
// the stage then sets to bound the sandbox's processes whoever the caller is.
bool pid_max_per_namespace();

// The process numbers the kernel keeps apart in every PID namespace once its
// numbers have wrapped (RESERVED_PIDS): a namespace whose pid_max is N + 301
// holds at least N processes at once, and at most N + 300.
inline constexpr std::uint64_t kReservedPids = 300;

// Makes `stage` the one that makes the mounts of `plan` and `launch`
// (stage_mount_ops), loading the second part of the filter from
// `mounts_filter_fd`, and `launch` the bubblewrap that leaves them to it: what
// `sbx run` and the doctor's trial run do alike. With the plan's processes
// limit, the stage sets the PID namespace's pid_max, where the kernel keeps one.
void stage_makes_mounts(const sbx::Plan& plan, BwrapLaunch& launch, StageArgs& stage, int mounts_filter_fd);

// The argument vector of the end-to-end run: what `sbx run` executes
// (bwrap_args) for trial_plan(dir, true_path), with DIR/group as the root
// group's directory, the stage (on kTrialExeFd, kTrialStatusFd) and the seccomp
// program on kTrialSeccompFd when `with_seccomp`; with `stage_mounts`, the stage
// makes the mounts, loading the second part on kTrialMountsFilterFd, as `sbx run`
// does where mount_api_available().
std::vector<std::string> bwrap_run_argv(const std::string& bwrap, const std::string& dir, const std::string& true_path,
                                        bool with_seccomp, bool stage_mounts = false);

// Reads the machine for `options` (see the file comment for what each mode does).
// The thorough mode waits for its children: SIGCHLD must not be ignored, or the
// waits fail and the checks say so. Child processes get an empty environment.
ProbeInputs gather_inputs(const ProbeOptions& options);

// ---- Pure decisions ---------------------------------------------------------------

struct Version {
    int major = 0;
    int minor = 0;
    int patch = 0;
    auto operator<=>(const Version&) const = default;
};

inline constexpr Version kMinBwrapVersion{0, 8, 0};  // --disable-userns

// The version in `bwrap --version` output: "bubblewrap 0.8.0\n" -> 0.8.0. Reads the
// first line only; takes "X.Y" as X.Y.0 and ignores a suffix after the numbers
// ("0.9.0-rc1", "0.10.0+git"). nullopt when the line is not "bubblewrap X.Y[.Z]...".
std::optional<Version> parse_bwrap_version(std::string_view output);

std::string to_string(const Version& v);

Check check_architecture(std::string_view machine, std::string_view build_arch, bool need_seccomp);
Check check_bubblewrap(const ProbeInputs& in);
Check interpret_userns(const UsernsFacts& facts);
Check check_seccomp(const std::optional<SeccompFacts>& facts);
// `stage`: what the stage reported; it names a failure of the stage's own.
Check check_bwrap_run(const RunOutcome& run, const std::vector<std::string>& argv, const StageReport& stage = {});

// A fix for a bwrap run that failed, from the message bwrap printed.
std::string explain_bwrap_failure(std::string_view stderr_text, const std::string& bwrap_path);

// The checks for `in`, in order: architecture, bubblewrap, user namespaces,
// seccomp, and "bubblewrap run" when it ran.
ProbeResult evaluate(const ProbeInputs& in, const ProbeOptions& options);

}  // namespace sbx::linux_sandbox
