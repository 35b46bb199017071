// launchers/linux/platform.cpp - the Linux launcher's steps (linux/platform.hpp).
//
// It decides nothing: the plan says what to mount, which environment the command
// gets and which seccomp switches apply. In order: read and check the plan,
// probe the machine, check that the disk is as planned, make the temporary
// directory and the placeholders (a reaper process removes them should this
// process die) and the tool cache home (which stays), build the seccomp program, run bubblewrap with it (bubblewrap
// loads it into its init, pid 1, and into the stage), and the stage closes what
// the command is not given and execs the command; then remove what was made,
// and audit the plan's gitAudit directories (git_audit.hpp): what the command
// left there for git outside to run is renamed, and listed.
// The command gets descriptors 0-2 and the plan's passFds, nothing else; where
// 0-2 hold the caller's terminal, a terminal of its own stands in (terminal.hpp).
// The options, the plan, the failures before the command and the unconfined
// fallback are the skeleton both launchers share (launcher_main.hpp).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <memory>
#include <optional>
#include <mutex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/fd_io.hpp"
#include "base/own_executable.hpp"
#include "base/trace.hpp"
#include "linux/cgroup.hpp"
#include "linux/connect_broker.hpp"
#include "linux/file_broker.hpp"
#include "linux/git_audit.hpp"
#include "linux/placeholders.hpp"
#include "linux/platform.hpp"
#include "linux/probe.hpp"
#include "linux/seccomp_filter.hpp"
#include "linux/stop_namespace.hpp"
#include "sbx/core/json_write.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "sbx/io/placeholder_registry.hpp"
#include "sbx/linux/bwrap.hpp"
#include "sbx/linux/filter_fallback.hpp"
#include "sbx/linux/weaker_broker.hpp"
#include "sbx/linux/weaker_rules.hpp"
#include "sbx/linux/write_wall.hpp"
#include "sbx/net/ssh_proxy.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/plan/read_plan.hpp"
#include "sbx/plan/report.hpp"
#include "sbx/plan/verify_plan.hpp"
#include "shared/common.hpp"
#include "shared/launcher_main.hpp"
#include "shared/leftovers.hpp"
#include "shared/proxy_secret.hpp"
#include "shared/root_group.hpp"
#include "shared/signals.hpp"
#include "shared/terminal.hpp"
#include "shared/tool_cache.hpp"
#include "stage/landlock.hpp"
#include "stage/stage.hpp"

namespace sbx::linux_sandbox {

using namespace sbx::launcher;

namespace {
// Says what the audit after the command renamed and what it could not make safe
// (events now; lines in the <sandbox_violations> block, or here without one) and
// what else went wrong. finish() makes the exit status say the second.
void report_audit(const GitAuditResult& audit, Launcher& l) {
    Report& report = l.report();
    const bool in_block = l.options().print_violations;
    for (const auto& n : audit.neutralised) {
        report.git_neutralised_event(n);
        if (!in_block) std::cerr << l.program() << ": " << sbx::git_audit_line(n) << "\n";
    }
    for (const auto& f : audit.failures) {
        report.git_unchecked_event(f);
        if (!in_block) std::cerr << l.program() << ": " << sbx::git_audit_failure_line(f) << "\n";
    }
    for (const auto& w : audit.warnings) l.warn_reported(w);
}

// The seccomp program, in the descriptor returned, or none (-1). Where it cannot be
// built, filter_fallback (sbx/linux/filter_fallback.hpp) says whether the plan
// runs without it; when it may not, the sandbox is `unavailable` here, for
// `unavailable_why`.
Fd seccomp_step(const char* program_name, const sbx::Plan& plan, SeccompOptions options, bool& unavailable,
                sbx::Error& unavailable_why) {
    if (unavailable) return Fd();
    auto program = seccomp_program(options);
    const FilterRule& fallback = filter_fallback(plan, program.has_value());
    switch (fallback.verdict) {
        case FilterVerdict::filtered: return std::move(*program);
        case FilterVerdict::unfiltered:
            std::cerr << program_name << ": warning: no seccomp filter (" << sbx::to_string(program.error()) << "); "
                      << fallback.why << "\n";
            return Fd();
        case FilterVerdict::unavailable:
            unavailable = true;
            unavailable_why = sbx::Error(sbx::Errc::unavailable, "the sandbox cannot run here").caused_by(program.error());
            return Fd();
    }
    return Fd();
}

// Copies the whole of `from` (a memfd's program, read from its start) to `to`.
bool copy_program(int from, int to) {
    char buf[8192];
    off_t off = 0;
    for (;;) {
        const ssize_t n = ::pread(from, buf, sizeof buf, off);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        if (n == 0) return true;
        if (!write_all(to, buf, static_cast<std::size_t>(n))) return false;
        off += n;
    }
}

// An internal error: `what`, with errno's text.
sbx::Error errno_error(const std::string& what) {
    return sbx::Error(sbx::Errc::internal, what + ": " + std::strerror(errno));
}

// A memfd (close-on-exec) named `name`: false with errno.
bool open_memfd(Fd& fd, const char* name) {
    fd = Fd(::memfd_create(name, MFD_CLOEXEC));
    return fd.get() >= 0;
}

}  // namespace

// A sandbox's descriptors and the types that hold them (with fd_io.hpp's Fd and
// Pipe); outside the anonymous namespace, as LinuxPlatform::waiting_sandbox
// returns a Sandbox.

// A Unix stream socket pair, each end owned: ours, and the one the stage has.
struct SocketPair {
    Fd ours, stages;
    // socketpair(2), close-on-exec: false with errno.
    bool open() {
        int fds[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) return false;
        ours = Fd(fds[0]);
        stages = Fd(fds[1]);
        return true;
    }
};

// A sandbox's bubblewrap and the descriptors it and the stage hold, with ours of
// each pair. Started the usual way (stage_argv: everything on the command line,
// bubblewrap given the plan's mounts) or waiting (stage_waiting_argv: bubblewrap
// makes the base alone and the stage waits for its orders, which the launcher
// sends once the placeholders are made; its seccomp program comes on a pipe,
// which bubblewrap reads just before it starts the stage).
// Each descriptor is owned (fd_io.hpp's Fd) and closed with the Sandbox, or
// where it is given away or no longer needed.
struct Sandbox {
    Sandbox() = default;
    // The sandbox started early, taken over by the run: the descriptors move;
    // the pid is copied, and the caller marks `from` as naming no process.
    Sandbox(Sandbox&& from) noexcept = default;
    Sandbox& operator=(Sandbox&&) = delete;

    pid_t pid = -1;
    SandboxFacts facts;  // what it was started for
    StageArgs stage;     // the stage's command line: its binary, status, orders and trace descriptors
    Fd exe;              // the stage's binary
    Pipe status;         // the stage's report
    Pipe err;            // the command's standard error, when it is relayed
    Pipe out;            // the command's standard output, when it is relayed apart from its error
    SocketPair proxy;    // the stage hands the proxy's listeners over it
    SocketPair pty;      // the stage hands the command's terminal over it
    SocketPair connect;  // the stage hands the connect broker's listener over it
    Pipe orders;         // waiting: the stage's orders
    Pipe seccomp;        // waiting: bubblewrap's --seccomp, the first part
    Fd seccomp_program;  // the usual way: bubblewrap's --seccomp
    Fd mounts_filter;    // the stage's second part, where it makes the mounts
    Fd exclude;          // the git exclude file's content
    Fd ssh_config;       // ssh's system configuration, with the proxy's way out (ssh_config_for)
    int stage_pty_fd = -1;    // the stage's ends of the pairs, by the numbers it has them
    int stage_proxy_fd = -1;  // (ours are closed once bubblewrap has started)
    int stage_connect_fd = -1;
    std::optional<TerminalUse> terminal;
    OutputRelays relays;  // the command's standard output and error that pass through relay_output
    // The sandbox's own cgroup (cgroup.hpp), where one is made: bubblewrap
    // starts in it (start_bubblewrap), and this process goes back to `cgroup_own`.
    std::optional<SandboxCgroup> cgroup;
    CgroupLimits cgroup_limits;  // what it holds
    std::string cgroup_own;
    std::string cgroup_trouble;  // what went wrong with it, to say; empty: nothing
};

namespace {

// The stage's binary (sbx-stage beside us, else ourselves), its status pipe,
// the pipes of the command's standard output and error when they are relayed
// (output_relays: `scan_stderr`, or tags to neutralise), the command's terminal, and
// the socket pair on which the stage hands over the proxy's listeners (`proxy`);
// waiting, the orders' and the seccomp program's pipes and the memfds the
// stage reads later.
sbx::expected<void> open_sandbox_fds(Sandbox& sb, const Options& o, bool scan_stderr, bool proxy, bool waiting) {
    auto failed = [](const std::string& what) { return sbx::fail(errno_error(what)); };
    sb.exe = open_stage_binary();
    if (sb.exe.get() < 0 || !sb.status.open()) return failed("cannot set up the stage");
    sb.stage.exe_fd = sb.exe.get();
    sb.stage.status_fd = sb.status.write.get();
    sb.stage.trace_fd = o.trace.fd();
    sb.relays = output_relays(o.pty, o.print_violations, scan_stderr);
    // A terminal of its own (terminal.hpp) stands in for those of 0-2 that are
    // the caller's terminal. bubblewrap gets none of them: its messages, should
    // it fail, come through the pipe of standard error.
    sb.terminal = terminal_use(o.pty, sb.relays.err, o.allow_clipboard_write);
    const bool err_pipe = sb.relays.err || (sb.terminal && sb.terminal->replaces[2]);
    if (err_pipe && !sb.err.open()) return failed("pipe");
    // Merged with standard error (2>&1), standard output takes the same pipe.
    if (sb.relays.out && !sb.relays.merged && !sb.out.open()) return failed("pipe");
    if (sb.terminal && !sb.pty.open()) return failed("socketpair");
    if (proxy && !sb.proxy.open()) return failed("socketpair");
    // Made whether the plan will want the connect broker or not: the stage
    // may be started before the plan is known.
    if (!sb.connect.open()) return failed("socketpair");
    sb.stage_pty_fd = sb.pty.stages.get();
    sb.stage_proxy_fd = sb.proxy.stages.get();
    sb.stage_connect_fd = sb.connect.stages.get();
    if (!waiting) return {};
    if (!sb.orders.open() || !sb.seccomp.open()) return failed("pipe");
    sb.stage.orders_fd = sb.orders.read.get();
    if (!open_memfd(sb.mounts_filter, "sbx-mounts-filter") || !open_memfd(sb.exclude, "sbx-git-exclude") ||
        !open_memfd(sb.ssh_config, "sbx-ssh-config"))
        return failed("memfd_create");
    return {};
}

// The limits a sandbox's cgroup holds for `plan`, of those its parent hands
// down: its memory as a whole, and its processes (bubblewrap's own one more).
// Without a plan (a sandbox started early), none yet: SandboxCgroup::limit
// writes them once it comes.
CgroupLimits cgroup_limits(const sbx::Plan* plan, const CgroupParent& where) {
    CgroupLimits out;
    if (plan == nullptr) return out;
    if (const auto& m = plan->limits[static_cast<std::size_t>(sbx::Limit::memory)]; m && where.memory)
        out.memory_bytes = sbx::limit_in_base_unit(sbx::Limit::memory, m->value);
    if (const auto& p = plan->limits[static_cast<std::size_t>(sbx::Limit::processes)]; p && where.pids)
        out.processes = p->value + 1;
    return out;
}

// Makes the sandbox's own cgroup in `where`, with `limits`, for
// start_bubblewrap to start bubblewrap in, and tells the reaper (which
// removes it after the sandbox should this process die). Where it cannot, the
// sandbox starts without one, and sb.cgroup_trouble says why.
void make_cgroup(Sandbox& sb, const CgroupParent& where, const CgroupLimits& limits, Reaper& reaper) {
    if (!where.found()) return;
    auto name = sandbox_cgroup_name();
    auto made = name ? SandboxCgroup::make(where.dir, *name, limits) : sbx::fail(name.error());
    if (!made) {
        sb.cgroup_trouble = "the sandbox gets no cgroup of its own: " + sbx::to_string(made.error());
        return;
    }
    sb.cgroup.emplace(std::move(*made));
    sb.cgroup_limits = limits;
    sb.cgroup_own = where.own;
    reaper.made(Leftover{LeftoverKind::cgroup, sb.cgroup->path(), 0, 0});
}

// Takes the sandbox's cgroup down once every process of it is gone (a moment
// after bubblewrap, whose init's end kills the rest): what its limits counted,
// anything left killed, then its directory removed, tried again while the
// last processes leave it. Where it cannot be, `trouble` says why.
KernelLimitCounts end_cgroup(Sandbox& sb, std::string& trouble) {
    KernelLimitCounts counts;
    if (!sb.cgroup) return counts;
    const CgroupEvents events = sb.cgroup->events();
    counts.processes = sb.cgroup_limits.processes.has_value();
    counts.memory = sb.cgroup_limits.memory_bytes.has_value();
    counts.forks_refused = events.pids_max_hits;
    counts.oom_kills = events.oom_kills;
    // Out of it first, should the move back after the start have failed:
    // cgroup.kill would end this process too.
    if (auto out = move_self(sb.cgroup_own); !out) {
        trouble = "the sandbox's cgroup is left, with sbx-linux in it: " + sbx::to_string(out.error());
        sb.cgroup.reset();
        return counts;
    }
    (void)sb.cgroup->kill_all();
    for (int attempt = 0; attempt < 100 && sb.cgroup->has_processes(); ++attempt) {
        const timespec ten_ms{0, 10'000'000};
        ::nanosleep(&ten_ms, nullptr);
    }
    if (auto removed = sb.cgroup->remove(); !removed)
        trouble = "the sandbox's cgroup is left: " + sbx::to_string(removed.error());
    sb.cgroup.reset();
    return counts;
}

// Starts bubblewrap with `args` and `env`, giving it `keep` (and the stage's
// descriptors of `sb`): sb.pid, or -1 with errno when it could not be started.
// posix_spawn starts it without copying this process (a vfork): neither
// process then pays for the pages the other writes. So the descriptors
// bubblewrap is not given are marked close-on-exec here, in this process, which
// execs nothing else but sbx itself again for a stale plan (and that needs none
// of them).
pid_t start_bubblewrap(Sandbox& sb, std::vector<std::string>& args, std::vector<std::string>& env,
                       std::vector<int> keep, Reaper& reaper, const std::string& cwd = {},
                       KillScope scope = KillScope::process) {
    for (int fd : {sb.exe.get(), sb.status.write.get(), sb.seccomp_program.get(), sb.exclude.get(), sb.ssh_config.get(),
                   sb.proxy.stages.get(), sb.pty.stages.get(), sb.connect.stages.get(), sb.stage.trace_fd,
                   sb.mounts_filter.get(),
                   sb.orders.read.get(), sb.seccomp.read.get()})
        if (fd >= 0) keep.push_back(fd);
    // bubblewrap and the stage get the descriptors they need and those the plan
    // passes to the command; nothing else the caller or this process has open
    // survives the exec.
    if (!sweep_fds(keep, FdSweep::cloexec)) return -1;
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawnattr_init(&attr);
    struct Done {
        posix_spawn_file_actions_t& a;
        posix_spawnattr_t& b;
        ~Done() {
            ::posix_spawn_file_actions_destroy(&a);
            ::posix_spawnattr_destroy(&b);
        }
    } done{actions, attr};
    int rc = 0;
    // A descriptor dup2'd onto itself keeps no close-on-exec flag, in the child alone.
    for (int fd : keep)
        if (rc == 0) rc = ::posix_spawn_file_actions_adddup2(&actions, fd, fd);
    // Where the command gets a terminal of its own, neither bubblewrap nor its
    // init (pid 1 inside) keeps the caller's: /dev/null stands in until the
    // stage puts the command's terminal there.
    if (sb.terminal)
        for (int fd = 0; fd < 2; ++fd)
            if (rc == 0 && sb.terminal->replaces[static_cast<std::size_t>(fd)])
                rc = ::posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", O_RDWR, 0);
    if (rc == 0 && sb.err.write.get() >= 0)
        rc = ::posix_spawn_file_actions_adddup2(&actions, sb.err.write.get(), STDERR_FILENO);
    const int out_pipe = sb.relays.merged ? sb.err.write.get() : sb.out.write.get();
    if (rc == 0 && sb.relays.out && out_pipe >= 0) rc = ::posix_spawn_file_actions_adddup2(&actions, out_pipe, STDOUT_FILENO);
    if (rc == 0 && !cwd.empty()) rc = ::posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    // The signals this process catches or ignores are bubblewrap's to take as they come.
    sigset_t defaults, none;
    sigemptyset(&defaults);
    sigemptyset(&none);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) sigaddset(&defaults, sig);
    if (rc == 0) rc = ::posix_spawnattr_setsigdefault(&attr, &defaults);
    if (rc == 0) rc = ::posix_spawnattr_setsigmask(&attr, &none);
    // bubblewrap leads a process group of its own: a signal sent to this
    // process's group (timeout(1), a terminal's Ctrl-C under --no-pty) reaches
    // this process alone, which passes it to the command's group (signals.hpp),
    // rather than killing bubblewrap and with it the command before its traps
    // run. Not the weaker sandbox's stage, which makes a session of its own
    // (a group leader could not).
    short flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK;
    if (scope == KillScope::process) {
        flags |= POSIX_SPAWN_SETPGROUP;
        if (rc == 0) rc = ::posix_spawnattr_setpgroup(&attr, 0);
    }
    if (rc == 0) rc = ::posix_spawnattr_setflags(&attr, flags);
    auto a = c_strings(args);
    auto e = c_strings(env);
    // Started in the sandbox's cgroup, where it has one: this process goes in
    // for the start alone (a child starts in its parent's cgroup; bubblewrap,
    // once started, could fork before it was moved), then back to its own.
    if (sb.cgroup) {
        if (auto in = move_self(sb.cgroup->path()); !in) {
            sb.cgroup_trouble = "the sandbox gets no cgroup of its own: " + sbx::to_string(in.error());
            (void)sb.cgroup->remove();
            sb.cgroup.reset();
        }
    }
    if (rc == 0) rc = ::posix_spawn(&sb.pid, a[0], &actions, &attr, a.data(), e.data());
    if (sb.cgroup)
        if (auto back = move_self(sb.cgroup_own); !back && !move_self(sb.cgroup_own))
            sb.cgroup_trouble = "sbx-linux stays in the sandbox's cgroup: " + sbx::to_string(back.error());
    if (rc != 0) {
        sb.pid = -1;
        errno = rc;
        return -1;
    }
    watch_sandbox(sb.pid, scope);
    reaper.sandbox_pid(sb.pid);
    // Bubblewrap's and the stage's ends, which this process needs no more.
    for (Fd* fd : {&sb.status.write, &sb.exe, &sb.seccomp_program, &sb.err.write, &sb.out.write, &sb.pty.stages,
                   &sb.orders.read, &sb.seccomp.read})
        fd->reset();
    return sb.pid;
}

// Starts a sandbox that waits for its orders, for a plan with `facts`, on the
// bubblewrap the probe found, in a cgroup of its own made in `cgroup` where
// one is found (its limits written once the plan comes); -1 with errno, or the pid.
pid_t start_waiting(Sandbox& sb, const SandboxFacts& facts, const std::string& bwrap, const Options& o, Reaper& reaper,
                    const CgroupParent& cgroup) {
    sb.facts = facts;
    if (!open_sandbox_fds(sb, o, facts.scan_stderr, true, true)) return -1;
    make_cgroup(sb, cgroup, cgroup_limits(nullptr, cgroup), reaper);
    BwrapLaunch launch;
    launch.bwrap = bwrap;
    launch.seccomp_fd = sb.seccomp.read.get();
    launch.stage_mounts = true;
    launch.stage_argv = stage_waiting_argv(sb.stage);
    auto args = bwrap_waiting_args(launch, facts.isolated);
    std::vector<std::string> env;  // the command's comes with the orders
    const pid_t pid = start_bubblewrap(sb, args, env, facts.pass_fds, reaper);
    if (pid < 0 && sb.cgroup) {  // nothing started in it
        (void)sb.cgroup->remove();
        sb.cgroup.reset();
    }
    return pid;
}

// A sandbox that waits for orders it will never get: its stage ends without a
// mount (the orders' pipe ends empty), and bubblewrap with it (the seccomp
// pipe ends empty too, where it had not started the stage yet), waited for.
// The bubblewrap waited for leaves as soon as the stage is gone, and its init
// in the sandbox (killed by its parent's death) may outlive it by a moment:
// every process of the sandbox holds the status pipe's write end, so its end
// is theirs, as for a run (end_run).
// Its cgroup goes with it; what went wrong there is returned, to say
// (say_trouble).
std::string end_waiting(Sandbox& sb) {
    sb.orders.write.reset();
    sb.seccomp.write.reset();
    if (sb.pid > 0) {
        while (::waitpid(sb.pid, nullptr, 0) < 0 && errno == EINTR) {
        }
        if (sb.status.read.get() >= 0) (void)sbx::read_all(sb.status.read.get(), 4096, "the stage's status pipe");
        sandbox_ended();
    }
    sb.status.read.reset();
    sb.pid = -1;
    std::string trouble;
    (void)end_cgroup(sb, trouble);
    return trouble;
}

// `trouble`, where there is some, as a warning of `program`'s.
void say_trouble(const char* program, const std::string& trouble) {
    if (!trouble.empty()) std::cerr << program << ": warning: " << trouble << "\n";
}

// What one confined run holds between its steps: the root's group, what was
// made, the sandbox.
struct Run {
    Run(Launcher& launcher, const sbx::Plan& p, Reaper& r, RootGroup g)
        : l(launcher), plan(p), reaper(r), group(std::move(g)) {}
    Launcher& l;
    const sbx::Plan& plan;
    Reaper& reaper;
    RootGroup group;
    std::vector<sbx::RegisteredPlaceholder> group_placeholders;  // read under the group's lock
    std::vector<Leftover> made;
    std::unique_ptr<Sandbox> sb;
    std::unique_ptr<TerminalRelay> terminal_relay;
    std::optional<sbx::StderrScanner> scanner;
    // The weaker sandbox's scanner reads refusals against this: the names the
    // plan renames after the run are refused while it runs (with_names_refused).
    std::optional<sbx::FsPlan> names_refused;
    OutputFindings found;  // what the relays found in the command's output
    std::unique_ptr<HeldTerminal> held;  // the caller's terminal, where the command holds it itself (--no-pty)
    int wall_abi = 0;  // the Landlock ABI the stage's write wall uses; 0: no wall
    bool weaker = false;  // the weaker sandbox (no bubblewrap; wall_abi is its domain's ABI)
    bool connect_broker = false;  // the launcher answers each connect() (connect_broker.hpp)
    std::vector<RefusedLine> socket_refusals;  // its refusals, once it has stopped
    const CgroupParent* cgroup = nullptr;  // where the sandbox gets a cgroup of its own (found() or not)
    KernelLimitCounts counts;              // what that cgroup counted, once it is gone
    std::uint16_t direct_port = 0;  // the proxy's direct listener on the sandbox's loopback; 0: none
    const LinuxPlatform::SessionHooks* hooks = nullptr;  // LinuxPlatform::session_hooks; null: none

    // Before the command ran: remove what was made, say why, and give 125.
    int give_up(const sbx::Error& e) {
        if (sb)
            if (const std::string trouble = end_waiting(*sb); !trouble.empty()) l.warn(trouble);
        l.clean_up(made, reaper, &group);
        reaper.wait();  // a stale plan's next attempt replaces this program
        return l.fail_before(e);
    }
    int give_up_reported(const sbx::Error& e) {
        l.report().error_event(e);
        return give_up(e);
    }
    int give_up_errno(const std::string& what) { return give_up(errno_error(what)); }
};

// Under the root group's lock (other sandboxes of the root wait meanwhile):
// refuses a group of another policy, checks the disk is as planned (the group's
// placeholders hidden, as when the plan was made), and makes the temporary
// directory (this sandbox's: `made`, and the reaper's copy).
sbx::expected<void> check_under_lock(Run& run) {
    const sbx::Plan& plan = run.plan;
    run.group_placeholders = run.group.placeholders();
    if (auto other = RootGroup::foreign_group(plan, run.group_placeholders)) return sbx::fail(*other);
    std::vector<std::string> group_paths;
    for (const auto& e : run.group_placeholders) group_paths.push_back(e.path);
    sbx::DiskFs disk;
    const sbx::HidingFs without_group(disk, std::move(group_paths));  // as the plan was made
    SBX_TRY(sbx::verify_plan(plan, without_group));
    return make_tmpdir(plan, run.reaper, run.made);
}

// Still under the lock: makes the placeholders, holds them for the group and
// keeps them out of git's view; then lets the others go on.
sbx::expected<void> make_under_lock(Run& run) {
    SBX_TRY(make_placeholders(run.plan.filesystem.placeholders, run.group, run.group_placeholders));
    run.group.hold_placeholders(run.plan);
    run.group.exclude_placeholders(run.plan);
    run.group.unlock();
    return {};
}

// The tasks (processes and threads) whose real user is `uid` on the machine
// now, as RLIMIT_NPROC counts them where no user namespace of the sandbox's
// own counts them apart (the weaker sandbox).
std::uint64_t user_tasks(uid_t uid) {
    std::uint64_t n = 0;
    DIR* d = ::opendir("/proc");
    if (d == nullptr) return 0;
    const auto field = [](std::string_view text, std::string_view key) -> unsigned long {
        const auto at = text.find(key);
        return at == std::string_view::npos ? ULONG_MAX : std::strtoul(text.data() + at + key.size(), nullptr, 10);
    };
    while (const dirent* e = ::readdir(d)) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
        const Fd fd(::openat(::dirfd(d), (std::string(e->d_name) + "/status").c_str(), O_RDONLY | O_CLOEXEC));
        char buf[4096];
        const ssize_t got = fd.ok() ? ::read(fd.get(), buf, sizeof buf - 1) : -1;
        if (got <= 0) continue;
        buf[got] = '\0';
        const std::string_view text(buf, static_cast<std::size_t>(got));
        if (field(text, "\nUid:\t") == uid) {
            const unsigned long threads = field(text, "\nThreads:\t");
            n += threads == ULONG_MAX ? 1 : threads;
        }
    }
    ::closedir(d);
    return n;
}

// The stage's arguments the plan gives (for its command line, or its orders):
// the command, its environment and descriptors, the terminal, the proxy's
// listeners.
void plan_stage(Run& run) {
    const sbx::Plan& plan = run.plan;
    Sandbox& sb = *run.sb;
    StageArgs& stage = sb.stage;
    stage.filtered = sb.seccomp_program.get() >= 0 || sb.seccomp.write.get() >= 0;
    stage.keep_fds = plan.pass_fds;
    // The plan's limits the kernel holds per process (the processes' count
    // for the whole sandbox too, where the stage makes the mounts:
    // stage_makes_mounts). A session's server outlives its commands, so its
    // CPU time is no command's: it limits each command's itself.
    const auto limit = [&](sbx::Limit l) -> const std::optional<sbx::PlanLimit>& {
        return plan.limits[static_cast<std::size_t>(l)];
    };
    // RLIMIT_NPROC counts the user's tasks in the sandbox's own user namespace;
    // the weaker sandbox has none, so there it counts all the user's, and the
    // limit is that many more than the user has now.
    if (const auto& p = limit(sbx::Limit::processes))
        stage.rlimits.emplace_back("nproc", p->value + (run.weaker ? user_tasks(::getuid()) : 0));
    const bool session = run.hooks != nullptr && run.hooks->mounts;  // set by a session's holder alone
    if (const auto& c = limit(sbx::Limit::cpu); c && !session) stage.rlimits.emplace_back("cpu", c->value);
    if (const auto& f = limit(sbx::Limit::file_size))
        stage.rlimits.emplace_back("fsize", sbx::limit_in_base_unit(sbx::Limit::file_size, f->value));
    if (const auto& m = limit(sbx::Limit::memory))
        stage.rlimits.emplace_back("data", sbx::limit_in_base_unit(sbx::Limit::memory, m->value));
    for (const auto& v : plan.loader_env) stage.loader_env.push_back(v.name + "=" + v.value);
    stage.env = env_strings(plan, false);
    stage.command = plan.argv;
    // The second wall, where the kernel can make it without refusing renames
    // (the weaker sandbox's domain is run_weaker's to give).
    if (const int abi = sbx::launcher::landlock::abi(); abi >= 2 && !run.weaker) {
        stage.write_wall = sbx::linux_sandbox::write_wall_paths(plan);
        if (!stage.write_wall.empty()) run.wall_abi = abi;
    }
    if (plan.scan_stderr) {
        if (run.weaker) run.names_refused.emplace(sbx::with_names_refused(plan.filesystem));
        run.scanner.emplace(run.weaker ? *run.names_refused : plan.filesystem, plan.cwd);
    }
    if (sb.terminal) {
        stage.pty_fd = sb.stage_pty_fd;
        stage.pty_on = sb.terminal->replaces;
    }
    if (run.connect_broker) stage.connect_fd = sb.stage_connect_fd;
    // The TMPDIR is the sandbox's own tmpfs (mount_ops) where the plan caps it.
    if (run.connect_broker && !run.weaker && limit(sbx::Limit::tmpdir)) stage.own_dir = plan.tmpdir;
    // The weaker sandbox's proxy listens outside, and it has no forwards.
    if (plan.network.mode == sbx::NetworkMode::proxy && !run.weaker) {
        stage.proxy_fd = sb.stage_proxy_fd;
        for (const auto& f : plan.network.forwards)
            stage.forwards.push_back({sbx::net::to_string(f.listen), f.port, f.why.empty() ? f.target : f.why});
        stage.direct_loopback = !sbx::net::loopback_through_proxy(plan.network.rules, plan.network.call);
    }
}

// Before the command can start: the caller's terminal, where the command gets
// it as it is (--no-pty), is taken note of, to be given back as it was.
void hold_caller_terminal(Run& run) {
    run.held = std::make_unique<HeldTerminal>(run.sb->terminal, run.sb->relays, run.reaper);
}

// The program ssh's ProxyCommand runs inside (stage/connect_relay.hpp): the
// stage's binary, by the path the command sees it at. Nothing where the
// command has no proxy or the plan hides it.
std::optional<std::string> relay_program(const sbx::Plan& plan) {
    if (plan.network.mode != sbx::NetworkMode::proxy) return std::nullopt;
    std::string program = stage_binary_path();
    char* real = program.empty() ? nullptr : ::realpath(program.c_str(), nullptr);
    program = real != nullptr ? std::string(real) : sbx::launcher::own_executable();
    std::free(real);
    if (program.empty()) return std::nullopt;
    if (sbx::planned_access(plan.filesystem, program).kind == sbx::PlannedAccess::Kind::hidden) return std::nullopt;
    return program;
}

// ssh's system configuration as the command is to read it: the system's file
// and a ProxyCommand for every host (sbx/net/ssh_proxy.hpp) that runs the
// relay_program(). Nothing where there is none, where the plan hides the file,
// or where the file is not a regular file of at most kMaxSshConfig bytes (no
// ssh installed: nothing to bind).
std::optional<std::string> ssh_config_for(const sbx::Plan& plan) {
    const std::string file(sbx::net::kSshConfigPath);
    const auto program = relay_program(plan);
    if (!program || sbx::planned_access(plan.filesystem, file).kind == sbx::PlannedAccess::Kind::hidden)
        return std::nullopt;
    const auto text = read_small(AT_FDCWD, file, sbx::net::kMaxSshConfig);
    if (!text) return std::nullopt;
    return sbx::net::ssh_config_with_proxy(
        *text, *program, !sbx::net::loopback_through_proxy(plan.network.rules, plan.network.call));
}

// What bubblewrap and the stage are told of the root's group, the git
// exclude file and ssh's configuration (sbx/linux/bwrap.hpp); the files'
// contents go into sb.exclude and sb.ssh_config (made here the usual way).
sbx::expected<BwrapLaunch> launch_of(Run& run, const std::string& bwrap) {
    const sbx::Plan& plan = run.plan;
    Sandbox& sb = *run.sb;
    BwrapLaunch launch;
    launch.bwrap = bwrap;
    if (const auto& ex = plan.filesystem.git_exclude) {
        if ((sb.exclude.get() < 0 && !open_memfd(sb.exclude, "sbx-git-exclude")) ||
            !write_all(sb.exclude.get(), ex->content.data(), ex->content.size()) ||
            ::lseek(sb.exclude.get(), 0, SEEK_SET) != 0)
            return sbx::fail(errno_error("cannot write the git exclude file"));
        launch.exclude_fd = sb.exclude.get();
    }
    if (auto ssh = ssh_config_for(plan)) {
        if ((sb.ssh_config.get() < 0 && !open_memfd(sb.ssh_config, "sbx-ssh-config")) ||
            !write_all(sb.ssh_config.get(), ssh->data(), ssh->size()) || ::lseek(sb.ssh_config.get(), 0, SEEK_SET) != 0)
            return sbx::fail(errno_error("cannot write ssh's configuration"));
        launch.ssh_config_fd = sb.ssh_config.get();
    }
    if (sb.seccomp_program.get() >= 0) launch.seccomp_fd = sb.seccomp_program.get();
    launch.group_dir = sbx::paths::parent(run.group.lock_path());
    for (const auto& e : run.group_placeholders) launch.group_placeholders.push_back(e.path);
    return launch;
}

// The command's terminal: the stage hands over its master and waits until the
// relay has copied the caller's size and modes to it and set the caller's
// terminal raw, then makes it the command's. Nothing when the plan gives the
// command no terminal of its own, or the sandbox never got that far (the
// stage's exit closes the socket).
void start_terminal(Run& run) {
    Sandbox& sb = *run.sb;
    if (sb.pty.ours.get() < 0) return;
    auto fds = receive_fds(sb.pty.ours.get(), 1);
    if (!fds.empty()) {
        // The relay's to close from here on.
        run.terminal_relay = std::make_unique<TerminalRelay>(*sb.terminal, std::move(fds.front()), run.reaper);
        run.terminal_relay->start();
        write_all(sb.pty.ours.get(), "G", 1);
    }
    sb.pty.ours.reset();
}

// Starts the relays of the command's output (standard error, with standard
// output where merged, and standard output apart); the pipes are theirs to close.
void start_output_relays(Run& run, OutputRelayThreads& threads) {
    Sandbox& box = *run.sb;
    threads.start(std::move(box.err.read), std::move(box.out.read), box.relays.merged,
                  run.scanner ? &*run.scanner : nullptr, run.l.report(), run.found);
}

// Once the sandbox has ended: the command's last output written, the relays
// done and what they found kept, the caller's terminal given back.
void end_output(Run& run, OutputRelayThreads& threads) {
    threads.finish(run.terminal_relay.get(), run.found);
    if (run.held) run.held->restore();
}

// The proxy: the stage hands over the listening sockets it made inside. Null
// when the plan has no proxy or the sandbox never got that far; when the proxy
// cannot start, the command would run without the network it was promised: it
// is stopped.
std::unique_ptr<CommandProxy> start_proxy(Run& run, pid_t pid, const Trace& trace) {
    Sandbox& sb = *run.sb;
    std::unique_ptr<CommandProxy> proxy;
    sb.proxy.stages.reset();
    Fd ours = std::move(sb.proxy.ours);
    if (ours.get() < 0 || sb.stage.proxy_fd < 0) return proxy;
    auto fds = receive_fds(ours.get(), run.plan.network.forwards.size() + 3);
    ours.reset();
    if (fds.empty()) return proxy;
    const auto t = Trace::now();
    // The proxy's to close from here on: the listeners, the direct one and the forwards' below them.
    const int socks_fd = fds.back().release();
    fds.pop_back();
    const int http_fd = fds.back().release();
    fds.pop_back();
    sockaddr_in direct{};
    socklen_t direct_size = sizeof direct;
    if (::getsockname(fds.back().get(), reinterpret_cast<sockaddr*>(&direct), &direct_size) == 0)
        run.direct_port = ntohs(direct.sin_port);
    const int direct_fd = fds.back().release();
    fds.pop_back();
    std::vector<int> forward_fds;
    for (Fd& fd : fds) forward_fds.push_back(fd.release());
    // While a question is on the terminal, every process of the sandbox's
    // PID namespace is stopped.
    auto started = CommandProxy::start(run.plan, run.l.report(), run.l.answering(), http_fd, socks_fd,
                                       [] { return stop_pid_namespace(watched_sandbox()); }, forward_fds, {}, direct_fd);
    if (!started) {
        std::cerr << run.l.program() << ": " << sbx::errc_name(started.error().code) << ": " << sbx::to_string(started.error())
                  << "\n";
        ::kill(pid, SIGKILL);
    } else {
        proxy = std::move(*started);
    }
    trace.step("launcher.proxy", t);
    return proxy;
}

// What the connect broker decides by: the plan's Unix sockets, each entry's
// links resolved now, once (sbx/net/unix_socket.hpp), and the command's
// temporary folder.
sbx::net::UnixSocketRules unix_socket_rules(const sbx::Plan& plan) {
    sbx::net::UnixSocketRules rules;
    rules.all = plan.all_unix_sockets;
    const Fd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
    auto resolved = [&](const std::string& path) {
        auto r = root.ok() ? resolve_in(root.get(), "/", path) : std::nullopt;
        return r ? r->path : path;
    };
    for (const auto& p : plan.unix_socket_paths) {
        sbx::net::UnixSocketEntry e{p, resolved(p), false};
        struct stat st {};
        e.folder = ::stat(e.path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
        rules.entries.push_back(std::move(e));
    }
    rules.own = resolved(plan.tmpdir);
    return rules;
}

// A connect broker for `listener` (a thread of its own, or `attached` to the
// file broker's), with the plan's rules, the network the command has, and its
// refusals reported as they come.
// A refusal of the connect broker's as a line of the block: a Unix socket's
// with the setting that opens it; one to the sandbox's loopback where the
// host's has the server with the setting that reaches that; a connection of
// the command's own past the proxy (the weaker sandbox) with none, as no
// setting does.
RefusedLine socket_refusal_line(const sbx::Plan& plan, const SocketRefusal& r) {
    if (!r.host.empty()) {
        const std::string by = r.program.empty() ? std::string() : "; by " + r.program;
        return {sbx::network_violation_line(r.host, r.port, r.why + by),
                r.local ? sbx::allow_sentence(plan.hints.local) : std::string(), r.times};
    }
    return {sbx::net::unix_socket_violation_line(r.path.empty() ? r.named : r.path, r.named, r.program, r.why),
            sbx::allow_sentence(plan.hints.sockets), r.times};
}

sbx::expected<std::unique_ptr<ConnectBroker>> connect_broker_of(Run& run, Fd listener, bool attached,
                                                                CommandProxy* proxy = nullptr, Fd own = {}) {
    Report& report = run.l.report();
    BrokerNetwork network;
    network.own_namespace = !run.weaker;
    if (proxy != nullptr && !run.weaker && run.direct_port != 0) {
        network.admit = [proxy](const sbx::net::HostTarget& t, const std::string& program, pid_t group) {
            return proxy->admit(t, program, group > 0 ? std::to_string(group) : std::string());
        };
        network.expect = [proxy](std::uint16_t port, sbx::net::HostTarget t) {
            return proxy->expect_direct(port, std::move(t));
        };
        network.forget = [proxy](std::uint16_t port) { proxy->forget_direct(port); };
        network.direct_port = run.direct_port;
    }
    for (int port : run.sb->stage.connect_ports) network.tcp_ports.push_back(static_cast<std::uint16_t>(port));
    auto on_refusal = [&report, &run](const SocketRefusal& r) {
        if (run.hooks != nullptr && run.hooks->refused && r.group > 0)
            if (const RefusedLine line = socket_refusal_line(run.plan, r); !ignored_violation(run.plan, line.line))
                run.hooks->refused(std::to_string(r.group), line.line + line.hint);
        if (r.host.empty()) {
            report.unix_socket_event(r.path, r.named, r.program, r.why);
            return;
        }
        ProxyEvent e;
        e.host = r.host;
        e.port = static_cast<std::uint16_t>(r.port);
        e.protocol = "direct";
        e.reason = r.why;
        e.program = r.program;
        if (r.local) e.allow = sbx::net::AllowKind::local;
        report.violation_event(e);
    };
    auto rules = unix_socket_rules(run.plan);
    return attached ? ConnectBroker::attach(std::move(listener), std::move(rules), std::move(network), on_refusal)
                    : ConnectBroker::start(std::move(listener), std::move(rules), std::move(network), on_refusal,
                                           std::move(own));
}

// A broker that could not start, said; the sandbox is killed, as its
// command would wait for the broker's answers for ever (the weaker sandbox's
// processes are a group of their own).
void kill_for(const Run& run, pid_t pid, const sbx::Error& e) {
    std::cerr << run.l.program() << ": " << sbx::errc_name(e.code) << ": " << sbx::to_string(e) << "\n";
    if (run.weaker) ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
}

// The connect broker, once the stage has sent its filter's listener (after
// the proxy's listeners and the command's terminal). Null where the plan has
// none or the sandbox never got that far; where it cannot start, every
// connect() would wait for ever: the sandbox is killed.
std::unique_ptr<ConnectBroker> start_connect_broker(Run& run, pid_t pid, const Trace& trace,
                                                    CommandProxy* proxy = nullptr) {
    Sandbox& sb = *run.sb;
    sb.connect.stages.reset();
    Fd ours = std::move(sb.connect.ours);
    if (ours.get() < 0 || sb.stage.connect_fd < 0) return nullptr;
    // With the TMPDIR where the stage sends it (a tmpfs of the sandbox's own).
    const bool with_own = !sb.stage.own_dir.empty();
    auto fds = receive_fds(ours.get(), with_own ? 2 : 1);
    if (fds.empty()) return nullptr;
    const auto t = Trace::now();
    auto started = connect_broker_of(run, std::move(fds.front()), false, proxy, with_own ? std::move(fds[1]) : Fd());
    trace.step("launcher.connect-broker", t);
    if (started) return std::move(*started);
    kill_for(run, pid, started.error());
    return nullptr;
}

// Its refusals, as lines of the block, once it has stopped.
void keep_socket_refusals(Run& run, const ConnectBroker& broker) {
    for (const auto& r : broker.refused()) run.socket_refusals.push_back(socket_refusal_line(run.plan, r));
}

// The probe's reason, and where user namespaces are what is refused, the
// switch that would run the weaker sandbox instead.
sbx::Error with_weaker_hint(const ProbeResult& deep) {
    sbx::Error e = deep.why();
    for (const auto& c : deep.checks)
        if (!c.ok && c.name == "user namespaces") {
            e.message += " (to run the weaker sandbox instead, Landlock and seccomp without namespaces: set "
                         "sandbox.enableWeakerNestedSandbox: true in your user settings, or pass --weaker-sandbox; "
                         "README, \"The weaker sandbox\")";
            break;
        }
    return e;
}

// The sandbox has ended: the command's exit status, or how bubblewrap or the
// stage failed (then 125, with the thorough probe's explanation when bubblewrap
// could not build the sandbox), or 126/127 when the command could not be run,
// or kAuditFailedStatus when the audit after it could not make every git
// directory safe; the exit event and the <sandbox_violations> block.
int finish(Run& run, ProbeOptions popt, int wstatus, const StageReport& stage_report,
           const std::vector<ProxyEvent>& refused, const GitAuditResult& audit) {
    const sbx::Plan& plan = run.plan;
    Report& report = run.l.report();
    const int status = WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : WEXITSTATUS(wstatus);
    if (!stage_report.started && run.weaker) {
        return run.l.fail_reported(sbx::Error(sbx::Errc::unavailable, "the weaker sandbox's stage did not start (status " +
                                                                          std::to_string(status) + ")"));
    }
    if (!stage_report.started) {
        // bubblewrap could not build the sandbox; it said why on standard error.
        // The thorough probe explains what to do about it.
        popt.thorough = true;
        auto deep = probe(popt);
        sbx::Error e = deep.available()
                           ? sbx::Error(sbx::Errc::unavailable, "bubblewrap could not build the sandbox (status " +
                                                                    std::to_string(status) + "; its message is above)")
                           : with_weaker_hint(deep);
        return run.l.fail_reported(e);
    }
    if (!stage_report.failure.empty()) {
        auto e = sbx::Error(sbx::Errc::unavailable, "the sandbox could not be completed")
                     .caused_by(sbx::Error(sbx::Errc::sandbox_unavailable, stage_report.failure));
        return run.l.fail_reported(e);
    }
    if (stage_report.exec_errno != 0) {
        std::cerr << run.l.program() << ": " << plan.argv.front() << ": " << std::strerror(stage_report.exec_errno) << "\n";
        const int s = stage_report.exec_errno == ENOENT ? kNotFound : kCannotRun;
        report.exit_event(true, "", s, run.wall_abi, run.weaker ? "landlock" : "bubblewrap");
        return s;
    }
    report_findings(run.found, report);
    report.exit_event(true, "", status, run.wall_abi, run.weaker ? "landlock" : "bubblewrap");
    const LimitLines reached = limit_lines(plan, status, run.scanner ? &*run.scanner : nullptr, run.counts);
    const std::vector<std::string>& limits = reached.lines;
    if (!run.l.options().print_violations)
        for (const auto& line : limits) run.l.warn(line);
    if (run.l.options().print_violations) {
        std::string block =
            violations_text(plan, refused, run.scanner ? &*run.scanner : nullptr, audit.neutralised, &run.found,
                            audit.failures, run.socket_refusals, limits);
        if (run.terminal_relay) block = run.terminal_relay->on_own_line(std::move(block));
        std::cerr << block << std::flush;
    }
    // Git outside may run what the command planted where the audit could not look:
    // the status says so whatever the command's was (its own is in the exit event);
    // else a limit the command reached does.
    if (!audit.failures.empty()) return sbx::git_audit::kAuditFailedStatus;
    return reached.ended ? sbx::kLimitStatus : status;
}

// Once every process of the sandbox is gone: the stage's report read, what
// was made removed, the audit (nothing can change what it renames any more),
// and how it ended. `t`: when the cleanup's step began.
int end_run(Run& run, const ProbeOptions& popt, int wstatus, std::uint64_t t, const timespec& run_start,
            const CommandProxy* proxy) {
    Launcher& l = run.l;
    const Trace& trace = l.trace();
    Sandbox& box = *run.sb;
    auto bytes = sbx::read_all(box.status.read.get(), 4096, "the stage's status pipe");
    box.status.read.reset();
    const StageReport stage_report = parse_stage_report(bytes ? *bytes : std::string());
    std::string trouble;
    run.counts = end_cgroup(box, trouble);
    if (!trouble.empty()) l.warn(trouble);
    l.clean_up(run.made, run.reaper, &run.group);
    trace.step("launcher.cleanup", t);
    t = Trace::now();
    auto audit = audit_git(run.plan.root, run.plan.filesystem.git_audit, run_start, run.plan.filesystem.neutralise,
                           run.plan.filesystem.neutralise_new);
    if (const auto& record = run.plan.filesystem.git_record)
        if (auto kept = keep_git_record(*record, run.plan.filesystem.git_audit, audit.repositories); !kept)
            audit.warnings.push_back(sbx::to_string(kept.error()));
    report_audit(audit, l);
    trace.step("launcher.git-audit", t);
    if (caught_signal() != 0 && !signal_forwarded()) die_of(caught_signal());
    say_grace_ran_out(l);
    return finish(run, popt, wstatus, stage_report, proxy ? proxy->refused() : std::vector<ProxyEvent>{}, audit);
}

}  // namespace

std::string_view LinuxPlatform::usage_lines() const {
    return "usage: sbx-linux [--plan-fd N] [--report-fd N] [--control-fd N] [--again-fd N] [--trace-fd N] [--violations] [--pty | --no-pty] [--allow-clipboard-write]\n"
           "                 [--grace SECONDS] [--name NAME] [--bubblewrap-mounts] [--cgroup-parent DIR]\n"
           "       sbx-linux --doctor [--json] [--bwrap PATH]\n";
}

std::string_view LinuxPlatform::help_text() const {
    return "usage: sbx-linux [--plan-fd N] [--report-fd N] [--control-fd N] [--again-fd N] [--trace-fd N] [--violations] [--pty | --no-pty] [--allow-clipboard-write]\n"
           "                                                 run the plan read from fd N (default 0)\n"
           "       --grace SECONDS                            after SIGTERM, SIGHUP or SIGQUIT, which go to the command's\n"
           "                                                 process group (as SIGINT does), the seconds it has to end\n"
           "                                                 before the sandbox is killed (default 10; 0: at once,\n"
           "                                                 SIGINT too)\n"
           "       --name NAME                                start messages with NAME: instead of sbx-linux:\n"
           "       --bubblewrap-mounts                        bubblewrap makes every mount, as on a kernel\n"
           "                                                 without the new mount API (to compare, to test)\n"
           "       --cgroup-parent DIR                        make each sandbox's own cgroup in DIR, a cgroup v2\n"
           "                                                 directory delegated to you (default: beside your own\n"
           "                                                 cgroup, where its parent hands memory and pids down)\n"
           "       sbx-linux --doctor [--json] [--bwrap PATH] can the sandbox run here\n"
           "The plan is described in docs/plan.md.\n";
}

bool LinuxPlatform::take_option(std::string_view arg, const std::function<const char*()>& next, std::string& why) {
    if (arg == "--bubblewrap-mounts") {
        bubblewrap_mounts_ = true;
        return true;
    }
    if (arg == "--cgroup-parent") {
        const char* v = next();
        if (v == nullptr || v[0] != '/') why = "--cgroup-parent needs an absolute path";
        else cgroup_given_ = sbx::paths::normalize(v);
        return true;
    }
    if (arg != "--bwrap") return false;
    const char* v = next();
    if (v == nullptr) why = "--bwrap needs a path";
    else bwrap_ = v;
    return true;
}

namespace {

// What the weaker sandbox lacks, in one line for standard error.
constexpr std::string_view kWeakerLacks =
    "no PID namespace (the command sees every process, though it cannot signal or trace one outside), "
    "no private /tmp, /dev or /proc (it cannot write /dev/shm, make a terminal or write /proc; its TMPDIR is a "
    "folder of the host's /tmp, which limits.tmpdirMiB does not cap), "
    "no loopback forwards, "
    "and its TCP connections are held to the proxy's ports (on loopback too, where the launcher can decide each "
    "connection)";

}  // namespace

std::string LinuxPlatform::check_options(const Options& o) const {
    return o.json || !bwrap_.empty() ? "--json and --bwrap go with --doctor" : "";
}

namespace {

// What holds the plan's limits here (sbx/settings/limits.hpp), for the doctor:
// the processes' count for the whole sandbox where the kernel keeps a pid_max
// per PID namespace, the rest per process, TMPDIR by its tmpfs; and where each
// sandbox gets a cgroup of its own (LinuxPlatform::cgroup_parent), which holds
// its memory and processes as a whole where the controllers are handed down.
// A small file's text (/proc, /sys); empty where it cannot be read.
std::string text_of(const std::string& path, std::size_t max) {
    auto text = sbx::read_small_file(path, max);
    return text && *text ? std::move(**text) : std::string();
}

std::string limits_detail(const CgroupParent& cgroup) {
    std::string out = pid_max_per_namespace()
                          ? "processes for the whole sandbox, by its PID namespace's pid_max (at most the limit plus "
                            "300), and for a user also by RLIMIT_NPROC"
                          : "processes by RLIMIT_NPROC, for the user's processes in the sandbox (it does not bind root: "
                            "Linux 6.14 keeps a pid_max per PID namespace, which would)";
    out += "; memory (for data), CPU time and file size per process, by rlimits; TMPDIR by the size of its tmpfs; the "
           "timeout by sbx itself";
    if (!cgroup.found())
        return out + "; no delegated cgroup v2 hierarchy (" + cgroup.why +
               "), so no limit holds for the sandbox's memory as a whole";
    std::string held = cgroup.memory && cgroup.pids ? "its memory and processes"
                       : cgroup.memory             ? "its memory (not its processes: no pids controller there)"
                       : cgroup.pids               ? "its processes (not its memory: no memory controller there)"
                                                   : "neither its memory nor its processes (no controller there)";
    return out + "; each sandbox gets a cgroup of its own in " + cgroup.dir + " (" + cgroup.why + "), which holds " +
           held + " as a whole";
}

}  // namespace

const CgroupParent& LinuxPlatform::cgroup_parent() {
    if (!cgroup_parent_) {
        const std::string mountinfo = text_of("/proc/self/mountinfo", std::size_t{1} << 20);
        const std::string self = text_of("/proc/self/cgroup", 65536);
        cgroup_parent_ = cgroup_given_.empty() ? find_cgroup_parent(mountinfo, self, host_cgroup_tree())
                                               : given_cgroup_parent(cgroup_given_, mountinfo, self, host_cgroup_tree());
    }
    return *cgroup_parent_;
}

int LinuxPlatform::doctor(Launcher& l) {
    if (!bwrap_.empty() && !sbx::paths::is_absolute(bwrap_)) return l.usage("--bwrap needs an absolute path");
    auto result = probe(ProbeOptions{bwrap_, true, true});
    // The weaker sandbox, which runs only where user namespaces are refused
    // and the caller asks for it: whether it could run here, and what it lacks.
    const int abi = sbx::launcher::landlock::abi();
    const bool weaker_ok = abi >= 4;
    // Its devices: what the kernel lets Landlock hold of them.
    const std::string devices =
        std::string("; of /dev it opens only null, zero, full, random, urandom and tty (its own terminal or none), and ") +
        (abi >= 5 ? "no device opened inside takes an ioctl but tty (Landlock ABI 5)"
                  : "below Landlock ABI 5 a device opened inside takes every ioctl but TIOCSTI, TIOCLINUX and TIOCSETD, "
                    "which the filter refuses");
    const std::string weaker_detail =
        weaker_ok ? "could run here (Landlock ABI " + std::to_string(abi) +
                        ") where user namespaces are refused, if asked for; it has " + std::string(kWeakerLacks) + devices
                  : "cannot run here: it needs Landlock ABI 4 (Linux 6.7); this kernel has " +
                        (abi == 0 ? std::string("no Landlock") : "ABI " + std::to_string(abi));
    // The connect broker: whether the launcher can decide each connection here.
    const auto broker = connect_broker_available();
    const std::string broker_detail =
        broker ? "the launcher decides each connect() of the command (seccomp user notification, pidfd_getfd): a Unix "
                 "socket by path as allowUnixSockets lists it, an address outside through the proxy"
               : "unavailable (" + sbx::to_string(broker.error()) + "): listed Unix sockets stay closed, and a program "
                 "that dials an address itself reaches nothing";
    // ssh: whether there is a system file to bind its ProxyCommand into.
    struct stat ssh_st {};
    const std::string ssh_file(sbx::net::kSshConfigPath);
    const bool ssh_bound = ::lstat(ssh_file.c_str(), &ssh_st) == 0 && S_ISREG(ssh_st.st_mode) &&
                           static_cast<std::size_t>(ssh_st.st_size) <= sbx::net::kMaxSshConfig;
    const std::string ssh_detail =
        ssh_bound ? "by name through the proxy: a copy of " + ssh_file +
                        " with a ProxyCommand for every host (the stage's --connect) is bound over it where the command "
                        "has a proxy; the weaker sandbox sets GIT_SSH_COMMAND instead"
                  : "no " + ssh_file + " here (a regular file of at most 256 KiB) to bind a ProxyCommand into: ssh "
                        "inside reaches only addresses the rules allow, by address";
    if (l.options().json) {
        std::string json = to_json(result);
        json.pop_back();  // the closing brace
        sbx::json::Writer w;
        w.begin_object().key("available").value(weaker_ok).key("landlock").value(abi).key("detail").value(weaker_detail).end_object();
        std::cout << json << ",\"weaker\":" << w.take();
        sbx::json::Writer c;
        c.begin_object().key("available").value(broker.has_value()).key("detail").value(broker_detail).end_object();
        std::cout << ",\"connections\":" << c.take();
        sbx::json::Writer h;
        h.begin_object().key("bound").value(ssh_bound).key("detail").value(ssh_detail).end_object();
        std::cout << ",\"ssh\":" << h.take();
        sbx::json::Writer lim;
        lim.begin_object().key("detail").value(limits_detail(cgroup_parent())).end_object();
        std::cout << ",\"limits\":" << lim.take();
        for (const auto& n : notes_) std::cout << "," << sbx::json::quote(n.key) << ":" << n.json;
        std::cout << "}\n";
    } else {
        std::cout << to_text(result) << "     weaker sandbox: " << weaker_detail << "\n";
        std::cout << "     connections: " << broker_detail << "\n";
        std::cout << "     ssh: " << ssh_detail << "\n";
        std::cout << "     limits: " << limits_detail(cgroup_parent()) << "\n";
        for (const auto& n : notes_) std::cout << "     " << n.label << ": " << n.text << "\n";
    }
    return result.available() ? 0 : 1;
}

SandboxFacts facts_of(const sbx::Plan& plan) {
    return SandboxFacts{plan.bwrap_path, plan.filesystem.isolated, plan.scan_stderr, plan.pass_fds};
}

// A sandbox started early: it, and when bubblewrap started (for the trace).
struct LinuxPlatform::Waiting {
    Sandbox sb;
    std::uint64_t started = 0;
    ProbeResult probed;  // the quick probe it was started after, but for its seccomp checks
};

LinuxPlatform::LinuxPlatform() = default;

LinuxPlatform::~LinuxPlatform() {
    if (waiting_) say_trouble(program(), end_waiting(waiting_->sb));
}

void LinuxPlatform::cancel_early() {
    if (!waiting_) return;
    say_trouble(program(), end_waiting(waiting_->sb));
    waiting_.reset();
}

void LinuxPlatform::start_early(Launcher& l, const SandboxFacts& facts, Reaper& reaper) {
    if (bubblewrap_mounts_ || (waiting_ && waiting_->sb.facts == facts)) return;
    if (waiting_) {
        say_trouble(program(), end_waiting(waiting_->sb));  // started for other facts
        waiting_.reset();
    }
    const auto t = Trace::now();
    // The quick probe without the seccomp checks: unavailable() makes them all
    // again for the plan, while bubblewrap builds the sandbox (which waits for
    // the filter the launcher hands it, and for the stage's orders).
    const ProbeResult quick = probe(ProbeOptions{facts.bwrap_path, false, false});
    if (!quick.available() || !mount_api_available()) return;
    install_signal_handlers();  // a signal from now on ends the sandbox too
    auto w = std::make_unique<Waiting>();
    w->probed = quick;
    w->started = Trace::now();
    if (start_waiting(w->sb, facts, quick.bwrap, l.options(), reaper, cgroup_parent()) < 0) return;  // run() tries again
    waiting_ = std::move(w);
    l.trace().step("launcher.start-early", t);
}

std::optional<sbx::Error> LinuxPlatform::unavailable(const sbx::Plan& plan) {
    // The launcher decides each connection where the kernel lets it, in either
    // sandbox; without that, listed sockets stay closed (every socket, with
    // allowAllUnixSockets).
    connect_broker_ = false;
    broker_warning_.clear();
    if (auto can = connect_broker_available()) connect_broker_ = true;
    else if (!plan.allow_unix_sockets && !plan.unix_socket_paths.empty())
        broker_warning_ = "the Unix sockets the settings list stay closed: this kernel cannot let the launcher "
                          "decide each connection (" + sbx::to_string(can.error()) + ")";
    // Asked for, the weaker sandbox runs where user namespaces are refused, and only there.
    if (plan.weaker_sandbox) {
        const UnshareOutcome trial = user_namespace_trial();
        if (trial.spawn_error.empty() && (trial.error != 0 || trial.signal != 0)) return weaker_unavailable(plan, trial);
    }
    popt_ = ProbeOptions{plan.bwrap_path, !plan.allow_unix_sockets, false};
    const SeccompOptions options{plan.allow_unix_sockets, SeccompPart::whole, false, connect_broker_};
    // A sandbox started early for this bubblewrap passed the quick probe but for
    // its seccomp checks, whose test build both parts of the filter built make
    // too (a kernel that refuses the filter's actions makes bubblewrap fail,
    // and finish() asks the thorough probe why). Else the probe runs again, all of it.
    if (waiting_ && waiting_->sb.facts.bwrap_path == plan.bwrap_path)
        if (auto split = split_seccomp_programs(options)) {
            probed_ = waiting_->probed;
            seccomp_program_ = std::move(split->first);
            mounts_filter_ = std::move(split->second);
            return std::nullopt;
        }
    probed_ = probe(popt_);
    bool unavailable = !probed_.available();
    sbx::Error unavailable_why = unavailable ? probed_.why() : sbx::Error{};
    // The stage makes the mounts where the kernel has the new mount API and
    // both parts of the filter build; else bubblewrap makes them all.
    if (!unavailable && !bubblewrap_mounts_ && mount_api_available())
        if (auto split = split_seccomp_programs(options)) {
            seccomp_program_ = std::move(split->first);
            mounts_filter_ = std::move(split->second);
            return std::nullopt;
        }
    seccomp_program_ = seccomp_step(program(), plan, options, unavailable, unavailable_why);
    if (unavailable) return unavailable_why;
    return std::nullopt;
}

namespace {

// Waiting: the stage's orders, now that what its mounts cover is there, with
// the filter's second part (`mounts_filter`, handed over).
sbx::expected<void> give_orders(Run& run, const std::string& bwrap, Fd& mounts_filter) {
    const auto t = Trace::now();
    Sandbox& box = *run.sb;
    plan_stage(run);
    hold_caller_terminal(run);
    box.stage.filtered = true;
    auto launch = launch_of(run, bwrap);
    if (!launch) return sbx::fail(launch.error());
    if (!copy_program(mounts_filter.get(), box.mounts_filter.get()))
        return sbx::fail(errno_error("cannot hand the stage the mount family's filter"));
    mounts_filter.reset();
    stage_makes_mounts(run.plan, *launch, box.stage, box.mounts_filter.get());
    box.stage.mounts = stage_waiting_mount_ops(mount_ops(run.plan, *launch));  // /dev first: bubblewrap made none
    const std::string orders = stage_orders(box.stage);
    // A stage that cannot read them is gone, and bubblewrap with it: the end
    // says why (finish).
    (void)write_all(box.orders.write.get(), orders.data(), orders.size());
    box.orders.write.reset();
    // The stage has its own of these; ours would only be closed at the end.
    box.mounts_filter.reset();
    box.exclude.reset();
    box.ssh_config.reset();
    run.l.trace().step("launcher.orders", t);
    return {};
}

// The usual way: bubblewrap started with everything on its command line, given
// the filter (`seccomp_program`) and, where the stage makes the mounts, their
// filter (`mounts_filter`), both handed over. `sandbox_start`: when it started.
sbx::expected<void> start_usual_way(Run& run, const std::string& bwrap, Fd& seccomp_program, Fd& mounts_filter,
                                    std::uint64_t& sandbox_start) {
    const auto t = Trace::now();
    const sbx::Plan& plan = run.plan;
    Launcher& l = run.l;
    Sandbox& box = *run.sb;
    SBX_TRY(open_sandbox_fds(box, l.options(), plan.scan_stderr, plan.network.mode == sbx::NetworkMode::proxy, false));
    box.seccomp_program = std::move(seccomp_program);
    plan_stage(run);
    hold_caller_terminal(run);
    auto launch = launch_of(run, bwrap);
    if (!launch) return sbx::fail(launch.error());
    if (mounts_filter.get() >= 0) {
        box.mounts_filter = std::move(mounts_filter);
        stage_makes_mounts(plan, *launch, box.stage, box.mounts_filter.get());
    } else {
        // What bubblewrap cannot protect (bwrap.hpp) is said, not skipped.
        for (const auto& w : bubblewrap_unmade(plan.filesystem)) l.warn_reported(sbx::to_string(w));
    }
    launch->stage_argv = stage_argv(box.stage);
    auto args = bwrap_args(plan, *launch);
    auto env = env_strings(plan, false);
    l.trace().step("launcher.stage-args", t);
    sandbox_start = Trace::now();
    if (run.cgroup != nullptr) make_cgroup(box, *run.cgroup, cgroup_limits(&plan, *run.cgroup), run.reaper);
    if (start_bubblewrap(box, args, env, plan.pass_fds, run.reaper) < 0)
        return sbx::fail(errno_error("cannot start " + args[0]));
    if (!box.cgroup_trouble.empty()) l.warn(box.cgroup_trouble);
    box.mounts_filter.reset();  // bubblewrap's and the stage's now
    box.exclude.reset();
    box.ssh_config.reset();
    return {};
}

// The sandbox has started: its output relayed, the proxy and the command's
// terminal started; waited for, and the run ended (end_run).
int wait_and_end(Run& run, const ProbeOptions& popt, std::uint64_t sandbox_start, const timespec& run_start) {
    Launcher& l = run.l;
    const Trace& trace = l.trace();
    const pid_t pid = run.sb->pid;
    OutputRelayThreads relays;
    start_output_relays(run, relays);
    auto proxy = start_proxy(run, pid, trace);
    if (proxy && run.hooks != nullptr) {
        // A session's command's refusals (tagged by its listeners, or by its
        // group for its own connections) go to the holder as the broker's do.
        if (run.hooks->refused)
            proxy->tap([&run](const ProxyEvent& e) {
                if (e.tag.empty()) return;
                if (const std::string line = proxy_refusal_line(run.plan, e); !line.empty()) run.hooks->refused(e.tag, line);
            });
        if (run.hooks->proxy) run.hooks->proxy(proxy.get());
    }
    // A session's later plans add mounts to its sandbox (session_mounts.hpp).
    SessionMounts session_mounts(run.group, pid);
    const bool adds_mounts = run.hooks != nullptr && run.hooks->mounts;
    if (adds_mounts) run.hooks->mounts(&session_mounts);
    start_terminal(run);
    auto broker = start_connect_broker(run, pid, trace, proxy.get());
    set_grace(l.options().grace);  // a signal now goes to the command's group first
    if (caught_signal() != 0 && !signal_forwarded()) ::kill(pid, SIGKILL);  // it came before we knew the pid
    // A session's commands have a timeout each (the fork server's), not the session.
    if (const auto& t = run.plan.limits[static_cast<std::size_t>(sbx::Limit::timeout)]; t && !adds_mounts)
        set_timeout(static_cast<unsigned>(t->value));

    int wstatus = 0;
    if (adds_mounts) {
        // Ended, but not reaped until no mount is being added: an add() under
        // way names the sandbox by bubblewrap's pid, which must not be reused.
        siginfo_t info{};
        while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
        }
        run.hooks->mounts(nullptr);
    }
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    run.sb->pid = -1;
    sandbox_ended();
    trace.step("sandbox", sandbox_start);
    const auto t = Trace::now();
    if (proxy && run.hooks != nullptr) {
        if (run.hooks->proxy) run.hooks->proxy(nullptr);
        proxy->tap({});
    }
    if (proxy) proxy->stop();  // open questions are answered no
    if (broker) {
        broker->stop();
        keep_socket_refusals(run, *broker);
    }
    // The command's last output is written and the caller's terminal has its
    // modes back; every writer was inside the sandbox, whose processes ended with it.
    end_output(run, relays);
    trace.step("launcher.threads", t);
    return end_run(run, popt, wstatus, t, run_start, proxy.get());
}

}  // namespace

// Where the plan can take the waiting way (the stage makes every mount): the
// sandbox started early, taken over whole when it was started for the plan's
// facts, else one started now, given the filter's first part, which bubblewrap
// reads before it starts the stage (and, should it end empty, refuses to start
// it). Null on the usual way. An early sandbox for other facts is ended.
sbx::expected<std::unique_ptr<Sandbox>> LinuxPlatform::waiting_sandbox(Launcher& l, const sbx::Plan& plan,
                                                                       Reaper& reaper, std::uint64_t& sandbox_start) {
    const bool can_wait = mounts_filter_.get() >= 0 && bubblewrap_made(mount_ops(plan, BwrapLaunch{})).empty();
    std::unique_ptr<Sandbox> sb;
    const auto t = Trace::now();
    if (waiting_ && can_wait && waiting_->sb.facts == facts_of(plan)) {
        sb = std::make_unique<Sandbox>(std::move(waiting_->sb));
        waiting_->sb.pid = -1;
        sandbox_start = waiting_->started;
        waiting_.reset();
    } else {
        if (waiting_) say_trouble(program(), end_waiting(waiting_->sb));
        waiting_.reset();
        if (!can_wait) return sb;
        sb = std::make_unique<Sandbox>();
        sandbox_start = Trace::now();
        if (start_waiting(*sb, facts_of(plan), probed_.bwrap, l.options(), reaper, cgroup_parent()) < 0)
            return sbx::fail(errno_error("cannot start " + probed_.bwrap));
        l.trace().step("launcher.start", t);
    }
    // EPIPE: bubblewrap is gone already, and finish() says why.
    if (!copy_program(seccomp_program_.get(), sb->seccomp.write.get()) && errno != EPIPE)
        std::cerr << program() << ": cannot hand bubblewrap its seccomp program: " << std::strerror(errno) << "\n";
    sb->seccomp.write.reset();
    seccomp_program_.reset();
    return sb;
}

// The confined run, step by step: take over or start the sandbox that waits
// for its orders (where the plan can), join the root's group, check and make
// under its lock, give the stage its orders (or, the usual way, start
// bubblewrap with everything on its command line), then wait and end: the
// proxy, the cleanup, the audit, and how it ended.
int LinuxPlatform::run(Launcher& l, const sbx::Plan& plan, Reaper& reaper) {
    if (weaker_) return run_weaker(l, plan, reaper);
    const Trace& trace = l.trace();
    const timespec run_start = audit_clock();  // whatever the command writes is stamped at or after this
    std::uint64_t sandbox_start = 0;
    auto sb = waiting_sandbox(l, plan, reaper, sandbox_start);
    if (!sb) {
        reaper.dismiss();
        return l.fail_reported(sb.error());
    }
    // Other sandboxes of the same root wait while this one checks the plan and
    // makes its placeholders, and the last one to end removes them.
    auto t = Trace::now();
    auto group = RootGroup::join(plan);
    if (!group) {
        if (*sb) say_trouble(program(), end_waiting(**sb));
        reaper.dismiss();
        return l.fail_reported(group.error());
    }
    reaper.group(group->lock_path(), group->live_path());
    Run run(l, plan, reaper, std::move(*group));
    run.connect_broker = connect_broker_;
    run.hooks = &hooks_;
    if (!broker_warning_.empty()) l.warn_reported(broker_warning_);
    const bool waiting = *sb != nullptr;
    run.sb = waiting ? std::move(*sb) : std::make_unique<Sandbox>();
    run.cgroup = &cgroup_parent();
    // A sandbox started early got its cgroup before the plan: its limits now,
    // before the stage gets its orders.
    if (waiting && run.sb->cgroup) {
        const CgroupLimits limits = cgroup_limits(&plan, *run.cgroup);
        if (auto r = run.sb->cgroup->limit(limits); r) run.sb->cgroup_limits = limits;
        else run.sb->cgroup_trouble = "the sandbox's cgroup holds no limit: " + sbx::to_string(r.error());
    }
    if (waiting && !run.sb->cgroup_trouble.empty()) l.warn(run.sb->cgroup_trouble);
    trace.step("launcher.group", t);
    t = Trace::now();
    if (auto r = check_under_lock(run); !r) return run.give_up_reported(r.error());
    trace.step("launcher.check", t);
    t = Trace::now();
    if (auto r = make_under_lock(run); !r) return run.give_up_reported(r.error());
    trace.step("launcher.placeholders", t);
    auto started = waiting ? give_orders(run, probed_.bwrap, mounts_filter_)
                           : start_usual_way(run, probed_.bwrap, seccomp_program_, mounts_filter_, sandbox_start);
    if (!started) return run.give_up(started.error());
    return wait_and_end(run, popt_, sandbox_start, run_start);
}

// ---- The weaker sandbox -------------------------------------------------------------

namespace {

// A grant as the stage takes it (stage.hpp): its kind's letter, a colon, the path.
std::string stage_grant(const LandlockGrant& g) {
    using K = LandlockGrant::Kind;
    const char kind = g.kind == K::read     ? 'r'
                      : g.kind == K::list   ? 'l'
                      : g.kind == K::write  ? 'w'
                      : g.kind == K::device ? 'd'
                                            : 't';
    return std::string(1, kind) + ":" + g.path;
}

// The command has ended: whatever it left running (there is no PID namespace
// to end with it) came to this process, its subreaper, as its parents ended;
// each is killed and waited for, until none is left. `keep`: the reaper.
void end_descendants(pid_t keep) {
    for (int round = 0; round < 1000; ++round) {
        auto children = children_of(::getpid());
        std::erase(children, keep);
        if (children.empty()) return;
        for (pid_t pid : children) ::kill(pid, SIGKILL);
        for (pid_t pid : children)
            while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
            }
    }
}


}  // namespace

std::optional<sbx::Error> LinuxPlatform::weaker_unavailable(const sbx::Plan& plan, const UnshareOutcome& trial) {
    if (waiting_) {
        say_trouble(program(), end_waiting(waiting_->sb));  // bubblewrap started early, before the plan asked for this
        waiting_.reset();
    }
    const std::string refused = "user namespaces are refused here (unshare: " +
                                (trial.signal != 0 ? "killed by signal " + std::to_string(trial.signal)
                                                   : std::string(strerrorname_np(trial.error) ? strerrorname_np(trial.error) : "error")) +
                                ")";
    const auto cannot = [](std::string why) {
        return sbx::Error(sbx::Errc::unavailable, "the weaker sandbox cannot run here")
            .caused_by(sbx::Error(sbx::Errc::sandbox_unavailable, std::move(why)));
    };
    const int abi = sbx::launcher::landlock::abi();
    if (abi < 4)
        return cannot(refused + ", and the weaker sandbox needs Landlock ABI 4 (Linux 6.7) for its network rules; this kernel has " +
                      (abi == 0 ? std::string("no Landlock (or it is not enabled: lsm= on the kernel's command line)")
                                : "ABI " + std::to_string(abi)));
    auto program = seccomp_program(SeccompOptions{plan.allow_unix_sockets, SeccompPart::whole, true, connect_broker_});
    if (!program) return cannot(refused + ", and the seccomp filter does not build: " + sbx::to_string(program.error()));
    seccomp_program_ = std::move(*program);
    weaker_ = true;
    weaker_abi_ = abi;
    return std::nullopt;
}

namespace {

// The file broker, once the stage has sent its listener (after the command's
// terminal, which the stage makes first). Where the stage sent none (its
// kernel refused the filter, or it failed before), the command runs with
// Landlock deciding alone, and a warning says what that refuses; where the
// broker cannot start with the listener made, the command would wait on it
// for ever: it is stopped.
std::unique_ptr<FileBroker> start_broker(Run& run, Fd& socket, const sbx::linux_sandbox::WeakerBroker& rules, pid_t pid,
                                         std::unique_ptr<ConnectBroker>& connects) {
    auto fds = receive_fds(socket.get(), 1);
    socket.reset();
    // Where its filter carries connect() too, the connect broker answers those on its thread.
    FileBroker::OnConnect on_connect;
    if (!fds.empty() && run.sb->stage.broker_connects) {
        Fd copy(::fcntl(fds.front().get(), F_DUPFD_CLOEXEC, 3));
        auto attached = copy.ok() ? connect_broker_of(run, std::move(copy), true)
                                  : sbx::fail(errno_error("a copy of the file broker's listener"));
        if (!attached) {
            kill_for(run, pid, attached.error());
            return nullptr;
        }
        connects = std::move(*attached);
        on_connect = [c = connects.get()](const seccomp_notif& n) { c->answer(n); };
    }
    if (fds.empty()) {
        run.l.warn("the weaker sandbox's file broker did not start, so Landlock decides alone: nothing can be made, "
                   "removed or renamed directly in the root or in a folder beside a protected path (README, \"The "
                   "weaker sandbox\")");
        return nullptr;
    }
    auto started = FileBroker::start(std::move(fds.front()), rules, std::move(on_connect));
    if (!started) {
        kill_for(run, pid, started.error());
        return nullptr;
    }
    return std::move(*started);
}

// The file broker's descriptors (file_broker.hpp), where the plan's rules need
// one: its filter, which the stage loads, and the socket pair the stage sends
// its listener back on.
struct BrokerFds {
    Fd program, ours, theirs;
};

// The stage's arguments for the weaker sandbox: the plan's (plan_stage), the
// whole filter, the Landlock grants of `rules` and the file broker's filter and
// socket, which it returns.
sbx::expected<BrokerFds> weaker_stage(Run& run, const WeakerFsRules& rules,
                                      const sbx::linux_sandbox::WeakerBroker& broker_rules) {
    Sandbox& box = *run.sb;
    SBX_TRY(open_sandbox_fds(box, run.l.options(), run.plan.scan_stderr, false, true));
    for (Fd* fd : {&box.seccomp.read, &box.seccomp.write, &box.mounts_filter, &box.exclude, &box.ssh_config})
        fd->reset();
    plan_stage(run);
    hold_caller_terminal(run);
    StageArgs& stage = box.stage;
    stage.weaker = true;
    stage.filter_fd = box.seccomp_program.get();
    for (const auto& g : rules.grants) stage.grants.push_back(stage_grant(g));
    BrokerFds broker;
    if (!broker_rules.active()) return broker;
    // A process may have one listener only: the file broker's takes connect() too.
    stage.broker_connects = stage.connect_fd >= 0;
    stage.connect_fd = -1;
    auto program = broker_filter_program(stage.broker_connects);
    if (!program) return sbx::fail(program.error());
    SocketPair pair;
    if (!pair.open()) return sbx::fail(errno_error("socketpair for the file broker"));
    broker.program = std::move(*program);
    broker.ours = std::move(pair.ours);
    broker.theirs = std::move(pair.stages);
    stage.broker_filter_fd = broker.program.get();
    stage.broker_fd = broker.theirs.get();
    return broker;
}

// The weaker sandbox's proxy, where the plan has one, listens on the host's
// loopback, where any local process reaches it: it asks every client for this
// command's secret, which only the command's proxy variables (put in `stage`)
// carry. For a question it stops the command's group, `pid` (a variable of the
// caller's, set once the stage has started; the proxy stops before it goes).
sbx::expected<std::unique_ptr<CommandProxy>> weaker_proxy(Run& run, const pid_t& pid) {
    std::unique_ptr<CommandProxy> proxy;
    StageArgs& stage = run.sb->stage;
    if (run.plan.network.mode != sbx::NetworkMode::proxy) return proxy;
    auto secret = make_proxy_secret();
    if (!secret) return sbx::fail(secret.error());
    auto listeners = listen_loopback();
    if (!listeners) return sbx::fail(listeners.error());
    put_proxy_environment(stage.env, listeners->http_port, listeners->socks_port, *secret);
    // No ssh_config can be bound here: git's ssh gets the ProxyCommand on its command line.
    put_git_ssh_command(stage.env, run.plan, relay_program(run.plan).value_or(std::string()));
    stage.connect_ports = {listeners->http_port, listeners->socks_port};
    // The listeners are the proxy's to close from here on.
    auto started = CommandProxy::start(run.plan, run.l.report(), run.l.answering(), listeners->http.release(),
                                       listeners->socks.release(),
                                       [&pid] {
                                           // The command's group (its session, with a terminal of its own).
                                           if (pid > 0) ::kill(-pid, SIGSTOP);
                                           return Stopped{{-pid}, pid > 0};
                                       },
                                       {}, *secret);
    if (!started) return sbx::fail(started.error());
    return std::move(*started);
}

// Starts the weaker sandbox's stage (without bubblewrap: the command's orphans
// come to this process, its subreaper) and gives it its orders; its output's
// relays and its terminal start. The stage's pid.
sbx::expected<pid_t> start_weaker(Run& run, BrokerFds& broker_fds, OutputRelayThreads& relays) {
    if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) return sbx::fail(errno_error("PR_SET_CHILD_SUBREAPER"));
    install_signal_handlers();
    Sandbox& box = *run.sb;
    auto args = stage_waiting_argv(box.stage);
    std::vector<std::string> env;  // the command's comes with the orders
    std::vector<int> keep = run.plan.pass_fds;
    for (const Fd* fd : {&broker_fds.program, &broker_fds.theirs})
        if (fd->get() >= 0) keep.push_back(fd->get());
    if (start_bubblewrap(box, args, env, keep, run.reaper, run.plan.cwd, KillScope::group) < 0)
        return sbx::fail(errno_error("cannot start the weaker sandbox's stage"));
    broker_fds.program.reset();
    broker_fds.theirs.reset();
    run.reaper.kill_group(box.pid);
    const std::string orders = stage_orders(box.stage);
    (void)write_all(box.orders.write.get(), orders.data(), orders.size());
    box.orders.write.reset();
    start_output_relays(run, relays);
    box.proxy.ours.reset();
    box.proxy.stages.reset();
    start_terminal(run);
    return box.pid;
}

}  // namespace

// The weaker sandbox, step by step: the disk checked and the temporary
// directory made under the root's group, the Landlock grants read from the disk
// as it is then, the proxy's listeners on the host's loopback with a secret of
// this command's, the stage started without bubblewrap (it drops capabilities,
// makes the Landlock domain, loads the filters and execs), the file broker on
// the listener the stage sends, then as the usual way: wait, end what the
// command left, stop the broker, clean up, audit.
int LinuxPlatform::run_weaker(Launcher& l, const sbx::Plan& plan, Reaper& reaper) {
    const Trace& trace = l.trace();
    const timespec run_start = audit_clock();
    l.warn("user namespaces are refused here: the command runs in the weaker sandbox (Landlock ABI " +
           std::to_string(weaker_abi_) + " and seccomp), as asked, which has " + std::string(kWeakerLacks));
    auto t = Trace::now();
    auto group = RootGroup::join(plan);
    if (!group) {
        reaper.dismiss();
        return l.fail_reported(group.error());
    }
    reaper.group(group->lock_path(), group->live_path());
    Run run(l, plan, reaper, std::move(*group));
    run.weaker = true;
    run.wall_abi = weaker_abi_;
    run.connect_broker = connect_broker_;
    if (!broker_warning_.empty()) l.warn_reported(broker_warning_);
    run.sb = std::make_unique<Sandbox>();
    Sandbox& box = *run.sb;
    box.seccomp_program = std::move(seccomp_program_);
    if (auto r = check_under_lock(run); !r) return run.give_up_reported(r.error());
    run.group.unlock();  // no placeholder: Landlock refuses to make what they would cover
    trace.step("launcher.check", t);

    t = Trace::now();
    const sbx::DiskFs disk;
    auto rules = weaker_fs_rules(plan, disk);
    if (!rules)
        return run.give_up_reported(
            sbx::Error(sbx::Errc::unavailable, "the weaker sandbox cannot run here").caused_by(rules.error()));
    for (const auto& w : rules->warnings) l.warn(sbx::to_string(w));
    const sbx::linux_sandbox::WeakerBroker broker_rules(plan, *rules);
    auto broker_fds = weaker_stage(run, *rules, broker_rules);
    if (!broker_fds) return run.give_up(broker_fds.error());
    trace.step("launcher.grants", t);
    t = Trace::now();
    pid_t pid = -1;
    auto proxy = weaker_proxy(run, pid);
    if (!proxy) return run.give_up(proxy.error());
    trace.step("launcher.proxy", t);

    const std::uint64_t sandbox_start = Trace::now();
    OutputRelayThreads relays;
    auto started = start_weaker(run, *broker_fds, relays);
    if (!started) return run.give_up(started.error());
    pid = *started;
    std::unique_ptr<FileBroker> broker;
    std::unique_ptr<ConnectBroker> connect_broker;
    if (broker_fds->ours.get() >= 0) {
        t = Trace::now();
        broker = start_broker(run, broker_fds->ours, broker_rules, pid, connect_broker);
        trace.step("launcher.broker", t);
    }
    if (!connect_broker) connect_broker = start_connect_broker(run, pid, trace);
    set_grace(l.options().grace);  // a signal now goes to the command's group first
    if (caught_signal() != 0 && !signal_forwarded()) {  // it came before we knew the pid (or the stage its group)
        ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);
    }
    if (const auto& limit = plan.limits[static_cast<std::size_t>(sbx::Limit::timeout)])
        set_timeout(static_cast<unsigned>(limit->value));

    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    end_descendants(reaper.pid());
    box.pid = -1;
    sandbox_ended();
    trace.step("sandbox", sandbox_start);
    t = Trace::now();
    if (broker) broker->stop();
    if (connect_broker) {
        connect_broker->stop();
        keep_socket_refusals(run, *connect_broker);
    }
    if (*proxy) (*proxy)->stop();
    end_output(run, relays);
    trace.step("launcher.threads", t);
    if (const std::string message = refused_clients_warning(*proxy ? (*proxy)->refused_clients() : 0); !message.empty())
        l.warn_reported(message);
    return end_run(run, popt_, wstatus, t, run_start, proxy->get());
}

}  // namespace sbx::linux_sandbox
