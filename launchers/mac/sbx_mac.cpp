// sbx-mac - carries out a plan with macOS's Seatbelt (sandbox-exec).
//
//   sbx-mac [--plan-fd N] [--report-fd N] [--control-fd N] [--again-fd N] [--trace-fd N] [--violations] [--pty | --no-pty] [--allow-clipboard-write]
//                                      run the plan read from fd N (default: standard input)
//   sbx-mac --print-profile [--plan-fd N]
//                                      print the Seatbelt profile the plan would run under
//   sbx-mac --doctor [--json]          can the sandbox run here; exit 1 when it cannot
//   sbx-mac --connect HOST PORT        ssh's ProxyCommand inside the sandbox (base/connect_relay.hpp),
//                                      which the command's GIT_SSH_COMMAND names
//
// It reads the same plan as sbx-linux (sbx::parse_plan, as strict), checks the
// disk is as planned, makes the command's temporary directory, starts the same
// filtering proxy on 127.0.0.1 (macOS has no network namespace of the command's
// own: the profile lets the command reach only the proxy's two ports, and the
// proxy serves only clients that present the command's fresh secret), writes the
// profile with sbx::mac::profile() from the plan's filesystem rules, and runs
// `sandbox-exec -p PROFILE -- COMMAND` in a session of its own, whose process
// group ends with the command. Then it removes what it made, as sbx-linux does,
// with the same report, questions and <sandbox_violations> block (common.hpp),
// and the same skeleton (launcher_main.hpp): this file holds Seatbelt's steps.
//
// Built on every platform so that CI keeps it compiling; where there is no
// /usr/bin/sandbox-exec it fails with SANDBOX_UNAVAILABLE (or, under
// failIfUnavailable: false, runs the command unconfined and says so), and
// --print-profile works anywhere. What only a Mac can show: that sandbox-exec
// takes the profile and that the profile confines (tests/macos/).
//
// Exit statuses: as sbx-linux's (docs/plan.md): the command's own, 128+N, 125
// when nothing ran.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/connect_relay.hpp"
#include "base/fd_io.hpp"
#include "base/own_executable.hpp"
#include "mac/sandbox_exec.hpp"
#include "sbx/core/json_write.hpp"
#include "sbx/mac/profile.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/plan/read_plan.hpp"
#include "sbx/plan/report.hpp"
#include "shared/common.hpp"
#include "shared/launcher_main.hpp"
#include "shared/leftovers.hpp"
#include "shared/proxy_secret.hpp"
#include "shared/signals.hpp"
#include "shared/terminal.hpp"

namespace {

using namespace sbx::launcher;

using sbx::mac_sandbox::kSandboxExec;  // Seatbelt's runner
// sockaddr_un's sun_path on macOS.
constexpr std::size_t kUnixPathMax = 104;
// What programs add under TMPDIR for their sockets ("/tmux-501/default",
// "/ssh-XXXXXXXXXX/agent.12345"): about 30 bytes.
constexpr std::size_t kSocketNameRoom = 32;

// Why sandbox-exec cannot be used here, or nullopt when it can.
std::optional<sbx::Error> sandbox_exec_missing() {
    const std::string path(kSandboxExec);
    if (::access(path.c_str(), X_OK) == 0) return std::nullopt;
    const int err = errno;
    return sbx::Error(sbx::Errc::unavailable, "the sandbox cannot run here")
        .caused_by(sbx::Error(sbx::Errc::sandbox_unavailable,
                              path + ": " + std::strerror(err) +
                                  ": sbx-mac confines commands with macOS's Seatbelt (sandbox-exec), which this "
                                  "system does not have; on Linux use sbx-linux"));
}

// The plan's TMPDIR leaves too little room for a Unix socket path inside it.
void warn_long_tmpdir(const char* program, const sbx::Plan& plan) {
    if (plan.tmpdir.size() + kSocketNameRoom <= kUnixPathMax) return;
    std::cerr << program << ": warning: the command's TMPDIR " << plan.tmpdir << " is " << plan.tmpdir.size()
              << " bytes long: a Unix socket a program makes inside it (ssh-agent, tmux, language servers) "
                 "would pass macOS's "
              << kUnixPathMax << "-byte limit and fail; point TMPDIR at a short directory (export TMPDIR=/tmp) "
                                 "and make the plan again\n";
}

// The proxy's listeners, and the secret its clients must present (empty until
// the run makes one: --print-profile needs none).
struct Listeners : LoopbackListeners {
    std::string secret;
};

sbx::mac::ProfileOptions profile_options(const sbx::Plan& plan, const LoopbackListeners& l, bool allow_pty) {
    sbx::mac::ProfileOptions o;
    if (plan.network.mode == sbx::NetworkMode::proxy) {
        o.http_proxy_port = static_cast<std::uint16_t>(l.http_port);
        o.socks_proxy_port = static_cast<std::uint16_t>(l.socks_port);
    }
    o.allow_pty = allow_pty;
    return o;
}

// The command's environment: the plan's, loader variables included (sandbox-exec
// is a system program, which macOS runs without them anyway), with the proxy's,
// whose URLs carry the secret.
std::vector<std::string> command_environment(const sbx::Plan& plan, const Listeners& l) {
    auto env = env_strings(plan, true);
    if (plan.network.mode == sbx::NetworkMode::proxy) put_proxy_environment(env, l.http_port, l.socks_port, l.secret);
    // No ssh_config can be bound here: git's ssh runs `sbx-mac --connect` as its ProxyCommand.
    put_git_ssh_command(env, plan, sbx::launcher::own_executable());
    return env;
}

// The plan's forwards are Linux's: there the command has a loopback of its own
// to listen on. Here it shares the host's, where the server itself holds the
// port, and Seatbelt lets it reach only the proxy: say so, once.
void warn_forwards(const char* program, const sbx::Plan& plan) {
    if (plan.network.mode != sbx::NetworkMode::proxy || plan.network.forwards.empty()) return;
    std::string list;
    for (const auto& f : plan.network.forwards)
        list += (list.empty() ? "" : ", ") + sbx::net::address_port_text(f.listen, f.port);
    std::cerr << program << ": warning: no loopback forwards on macOS (" << list
              << "): the command reaches those servers only through its proxy variables (HTTP_PROXY, ALL_PROXY)\n";
}

// Whether sbx-mac holds limit `l` (README, "Limits"): the timeout itself, CPU
// time and file size by rlimits, as sbx-linux does. Not the processes (macOS
// counts RLIMIT_NPROC over all the user's processes, and has no namespace to
// count the command's apart), memory (macOS does not hold RLIMIT_DATA against
// the allocations programs make) nor TMPDIR's size (no tmpfs).
bool mac_holds(sbx::Limit l) {
    return l == sbx::Limit::timeout || l == sbx::Limit::cpu || l == sbx::Limit::file_size;
}

// The limits sbx-mac does not hold that a setting or --limit asked for are
// named, once; sbx's defaults (the process count, TMPDIR's size), which no one
// asked for here, are not.
void warn_limits(const char* program, const sbx::Plan& plan) {
    std::string list;
    for (std::size_t i = 0; i < sbx::kLimitCount; ++i)
        if (const auto& l = plan.limits[i]; l && l->set_by != "sbx's default" && !mac_holds(sbx::kLimits[i].which))
            list += (list.empty() ? "" : ", ") + std::string(sbx::kLimits[i].key);
    if (!list.empty())
        std::cerr << program << ": warning: sbx-mac does not hold these limits (" << list
                  << "): the command runs without them\n";
}

// The rlimits of the limits sbx-mac holds per process, for the command's
// process to set before it runs sandbox-exec: CPU time with its hard limit two
// seconds above (SIGXCPU first, then SIGKILL), as sbx-linux's stage sets them.
struct CommandRlimit {
    int resource;
    rlimit value;
};
std::vector<CommandRlimit> command_rlimits(const sbx::Plan& plan) {
    std::vector<CommandRlimit> out;
    if (const auto& c = plan.limits[static_cast<std::size_t>(sbx::Limit::cpu)])
        out.push_back({RLIMIT_CPU, {static_cast<rlim_t>(c->value), static_cast<rlim_t>(c->value + 2)}});
    if (const auto& f = plan.limits[static_cast<std::size_t>(sbx::Limit::file_size)]) {
        const auto bytes = static_cast<rlim_t>(sbx::limit_in_base_unit(sbx::Limit::file_size, f->value));
        out.push_back({RLIMIT_FSIZE, {bytes, bytes}});
    }
    // Never above what the caller has: a hard limit cannot be raised.
    for (auto& r : out) {
        rlimit now{};
        if (::getrlimit(r.resource, &now) != 0) continue;
        r.value.rlim_cur = std::min(r.value.rlim_cur, now.rlim_max);
        r.value.rlim_max = std::min(r.value.rlim_max, now.rlim_max);
    }
    return out;
}

// The proxy on the host's loopback; the profile lets the command reach its
// ports and nothing else. Unlike on Linux, other local programs can connect to
// it too (macOS has no namespace to hide it in), so it serves only clients that
// present the listeners' secret, which the command's proxy variables carry.
// While a question is
// on the terminal the command's process group is stopped (the command leads it,
// see setsid in start_command). A process that left the group (a setsid of its
// own) keeps running: macOS has no PID namespace to find it by. Not tested on
// Linux, where sbx-mac only builds.
sbx::expected<std::unique_ptr<CommandProxy>> start_proxy(Launcher& l, const sbx::Plan& plan, Listeners& listeners) {
    auto stop = [] {
        Stopped s;
        sandbox_frozen(true);  // until continue_stopped()
        const pid_t group = watched_sandbox();
        if (group <= 0 || ::kill(-group, SIGSTOP) != 0) {
            s.complete = false;
            return s;
        }
        s.targets.push_back(-group);
        return s;
    };
    // The listeners are the proxy's to close from here on.
    return CommandProxy::start(plan, l.report(), l.answering(), listeners.http.release(), listeners.socks.release(),
                               stop, {}, listeners.secret);
}

// Clients the proxy refused for want of the secret, said once after the command
// (on stderr and as a warning event): a program of the command's that drops the
// user information of its proxy URL fails with 407 or a SOCKS refusal, and this
// names the cause. They are not violations: no host was asked for.
void warn_refused_clients(const char* program, const CommandProxy& proxy, Report& report, const TerminalRelay* terminal) {
    const std::string message = refused_clients_warning(proxy.refused_clients());
    if (message.empty()) return;
    report.warning_event(message);
    std::string line = std::string(program) + ": warning: " + message + "\n";
    if (terminal) line = terminal->on_own_line(std::move(line));
    std::cerr << line << std::flush;
}

// The command's terminal (terminal.hpp): what it stands in for, and its sides.
struct CommandTerminal {
    TerminalUse use;
    Fd master, slave;
};

// The command's process and the pipes the launcher keeps of it.
struct Started {
    pid_t pid = -1;
    Fd exec_pipe;  // the child's exec failure comes back on it; success closes it
    Fd err_pipe;   // its standard error (and output, merged), for relay_output, or none
    Fd out_pipe;   // its standard output, relayed apart, or none
};

// `sandbox-exec -p PROFILE -- COMMAND` in a session of its own, with the plan's
// environment (and the proxy's), in its directory, with 0-2 and the passFds.
sbx::expected<Started> start_command(const sbx::Plan& plan, const std::string& profile, const Listeners& listeners,
                                     const OutputRelays& relays, const CommandTerminal* terminal, Reaper& reaper) {
    Pipe err_pipe, out_pipe, exec_pipe;
    if ((relays.err && !err_pipe.open()) || (relays.out && !relays.merged && !out_pipe.open()) || !exec_pipe.open())
        return sbx::fail(sbx::Error(sbx::Errc::internal, std::string("pipe: ") + std::strerror(errno)));
    const int exec_write = exec_pipe.write.get();

    std::vector<std::string> args{std::string(kSandboxExec), "-p", profile, "--"};
    args.insert(args.end(), plan.argv.begin(), plan.argv.end());
    auto env = command_environment(plan, listeners);
    const auto rlimits = command_rlimits(plan);
    const pid_t pid = ::fork();
    if (pid < 0) return sbx::fail(sbx::Error(sbx::Errc::internal, std::string("fork: ") + std::strerror(errno)));
    if (pid == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
        // A session of its own: no controlling terminal to push input into
        // (TIOCSTI) but its own, and one process group for the launcher to end.
        ::setsid();
        if (terminal != nullptr) {
            // Its own terminal, the session's controlling terminal, in place of
            // those of 0-2 that were the caller's.
            const int slave = terminal->slave.get();
            bool ok = ::ioctl(slave, TIOCSCTTY, 0) == 0;
            for (int fd = 0; fd < 3 && ok; ++fd)
                if (terminal->use.replaces[static_cast<std::size_t>(fd)]) ok = ::dup2(slave, fd) == fd;
            if (!ok) {
                const int err = errno;
                write_all(exec_write, &err, sizeof err);
                ::_exit(kFailedBeforeCommand);
            }
        }
        if (err_pipe.write.ok()) ::dup2(err_pipe.write.get(), STDERR_FILENO);
        if (relays.out) ::dup2(relays.merged ? err_pipe.write.get() : out_pipe.write.get(), STDOUT_FILENO);
        // The command gets 0-2 and the plan's passFds; the exec pipe closes on exec.
        std::vector<int> keep = plan.pass_fds;
        keep.push_back(exec_write);
        if (!sweep_fds(keep, FdSweep::cloexec)) {
            const int sweep_err = errno;
            write_all(exec_write, &sweep_err, sizeof sweep_err);
            ::_exit(kFailedBeforeCommand);
        }
        for (int fd : plan.pass_fds) ::fcntl(fd, F_SETFD, 0);
        for (const auto& r : rlimits)
            if (::setrlimit(r.resource, &r.value) != 0) {
                const int limit_err = errno;
                write_all(exec_write, &limit_err, sizeof limit_err);
                ::_exit(kFailedBeforeCommand);
            }
        int err = 0;
        if (::chdir(plan.cwd.c_str()) == 0) {
            auto a = c_strings(args);
            auto e = c_strings(env);
            ::execve(a[0], a.data(), e.data());
        }
        err = errno;
        write_all(exec_write, &err, sizeof err);
        ::_exit(kFailedBeforeCommand);
    }
    // The command leads a session of its own; the handler ends its whole group.
    watch_sandbox(pid, KillScope::group);
    reaper.sandbox_pid(pid);
    reaper.kill_group(pid);
    for (Pipe* p : {&exec_pipe, &err_pipe, &out_pipe}) p->write.reset();
    if (caught_signal() != 0) {  // before we knew the pid
        ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);
    }
    return Started{pid, std::move(exec_pipe.read), std::move(err_pipe.read), std::move(out_pipe.read)};
}

// Waits for the command; what it left running in its group ends with it:
// killed while the command is a zombie still, so its pid cannot have been
// reused yet. Returns its wait status.
int wait_command(pid_t pid) {
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
    }
    ::kill(-pid, SIGKILL);
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    sandbox_ended();
    return wstatus;
}

class MacPlatform final : public Platform {
public:
    const char* name() const override { return "sbx-mac"; }
    std::string_view usage_lines() const override {
        return "usage: sbx-mac [--plan-fd N] [--report-fd N] [--control-fd N] [--again-fd N] [--trace-fd N] [--violations] [--pty | --no-pty] [--allow-clipboard-write]\n"
               "               [--grace SECONDS] [--name NAME]\n"
               "       sbx-mac --print-profile [--plan-fd N]\n";
    }
    std::string_view help_text() const override {
        return "usage: sbx-mac [--plan-fd N] [--report-fd N] [--control-fd N] [--again-fd N] [--trace-fd N] [--violations] [--pty | --no-pty] [--allow-clipboard-write]\n"
               "               [--grace SECONDS] [--name NAME]\n"
               "       sbx-mac --print-profile [--plan-fd N]\n"
               "       sbx-mac --doctor [--json]\n"
               "The plan is described in docs/plan.md, the profile in docs/seatbelt.md.\n";
    }
    bool take_option(std::string_view arg, const std::function<const char*()>&, std::string&) override {
        if (arg != "--print-profile") return false;
        print_profile_ = true;
        return true;
    }
    std::string check_options(const Options& o) const override {
        return o.json ? "--json goes with --doctor" : "";
    }
    int doctor(Launcher& l) override;
    std::optional<int> other_mode(Launcher& l) override;

    // A limit of Linux's sandbox is not this launcher's (Seatbelt tells Unix
    // socket paths apart, for one): the plan tags those.
    bool shows(const sbx::Warning& w) const override { return w.scope != sbx::WarningScope::linux_only; }
    void warn(const sbx::Plan& plan) override {
        warn_long_tmpdir(program(), plan);
        warn_forwards(program(), plan);
        warn_limits(program(), plan);
    }
    std::optional<sbx::Error> unavailable(const sbx::Plan&) override { return sandbox_exec_missing(); }
    bool verifies_first() const override { return true; }
    int run(Launcher& l, const sbx::Plan& plan, Reaper& reaper) override;

private:
    bool print_profile_ = false;
};

int MacPlatform::doctor(Launcher& l) {
    const bool json = l.options().json;
    const auto missing = sandbox_exec_missing();
    const std::string detail = missing ? sbx::to_string(*missing) : std::string(kSandboxExec) + " is there";
    if (json) {
        sbx::json::Writer w;
        w.begin_object().key("available").value(!missing).key("checks").begin_array();
        w.begin_object().key("name").value("sandbox-exec").key("ok").value(!missing).key("detail").value(detail).end_object();
        w.end_array().end_object();
        std::cout << w.take() << "\n";
    } else {
        std::cout << (missing ? "FAIL" : "ok  ") << " sandbox-exec     " << detail << "\n";
    }
    return missing ? 1 : 0;
}

// --print-profile: the Seatbelt profile the plan would run under, on standard output.
std::optional<int> MacPlatform::other_mode(Launcher& l) {
    if (!print_profile_) return std::nullopt;
    const Options& o = l.options();
    if (o.report_fd >= 0 || o.control_fd >= 0 || o.print_violations)
        return l.usage("--print-profile runs nothing: it takes only --plan-fd");
    auto plan = l.read_plan();
    if (!plan) return l.fail_before(plan.error());
    auto listeners = listen_loopback();
    if (!listeners) return l.fail_before(listeners.error());
    auto profile = sbx::mac::profile(*plan, profile_options(*plan, *listeners, ::isatty(STDIN_FILENO) != 0));
    if (!profile) return l.fail_before(profile.error());
    std::cout << *profile;
    return 0;
}

// The proxy for a plan with a network, on two loopback listeners of the host's
// (`listeners`), whose clients must present a secret made for this command.
sbx::expected<std::unique_ptr<CommandProxy>> start_network(Launcher& l, const sbx::Plan& plan, Listeners& listeners) {
    auto secret = make_proxy_secret();  // a fresh one for each command
    SBX_TRY(secret);
    auto opened = listen_loopback();
    SBX_TRY(opened);
    listeners = Listeners{std::move(*opened), std::move(*secret)};
    return start_proxy(l, plan, listeners);
}

// The command ended with `wstatus`: its status (124 where a limit ended it),
// what the run found on the report, and the <sandbox_violations> block when
// asked for, with the lines of the limits it reached.
int report_end(Launcher& l, const sbx::Plan& plan, int wstatus, const OutputFindings& found, const CommandProxy* proxy,
               const sbx::StderrScanner* scanner, const TerminalRelay* terminal_relay) {
    Report& report = l.report();
    const int status = WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : WEXITSTATUS(wstatus);
    report_findings(found, report);
    report.exit_event(true, "", status);
    const LimitLines reached = limit_lines(plan, status, scanner);
    if (!l.options().print_violations)
        for (const auto& line : reached.lines) l.warn(line);
    if (l.options().print_violations) {
        std::string block = violations_text(plan, proxy ? proxy->refused() : std::vector<ProxyEvent>{}, scanner, {},
                                            &found, {}, {}, reached.lines);
        if (terminal_relay) block = terminal_relay->on_own_line(std::move(block));
        std::cerr << block << std::flush;
    }
    return reached.ended ? sbx::kLimitStatus : status;
}

// The confined run: the temporary directory, the proxy, the profile, the
// command under sandbox-exec, and what it left behind.
int MacPlatform::run(Launcher& l, const sbx::Plan& plan, Reaper& reaper) {
    Report& report = l.report();
    std::vector<Leftover> made;
    if (auto r = make_tmpdir(plan, reaper, made); !r) {
        reaper.dismiss();
        return l.fail_reported(r.error());
    }
    auto give_up = [&](const sbx::Error& e) {
        l.clean_up(made, reaper);
        return l.fail_reported(e);
    };

    Listeners listeners;
    std::unique_ptr<CommandProxy> proxy;
    if (plan.network.mode == sbx::NetworkMode::proxy) {
        auto started = start_network(l, plan, listeners);
        if (!started) return give_up(started.error());
        proxy = std::move(*started);
    }
    const OutputRelays relays = output_relays(l.options().pty, l.options().print_violations, plan.scan_stderr);
    // A terminal of the command's own where any of 0-2 is the caller's (terminal.hpp).
    std::optional<CommandTerminal> terminal;
    if (auto use = terminal_use(l.options().pty, relays.err, l.options().allow_clipboard_write)) {
        auto pty = open_pty();
        if (!pty) {
            if (proxy) proxy->stop();
            return give_up(pty.error());
        }
        terminal = CommandTerminal{*use, std::move(pty->master), std::move(pty->slave)};
    }
    // With a terminal of its own the command may use it (and open others, as
    // it may without one when the caller's standard input is a terminal).
    const bool allow_pty = terminal || ::isatty(STDIN_FILENO) != 0;
    auto profile = sbx::mac::profile(plan, profile_options(plan, listeners, allow_pty));
    if (!profile) {
        if (proxy) proxy->stop();
        return give_up(profile.error());
    }

    const sbx::FsPlan refusing = sbx::with_names_refused(plan.filesystem);
    std::optional<sbx::StderrScanner> scanner;
    if (plan.scan_stderr) scanner.emplace(refusing, plan.cwd);
    // The caller's size and modes are the terminal's before the command starts.
    std::unique_ptr<TerminalRelay> terminal_relay;
    if (terminal) terminal_relay = std::make_unique<TerminalRelay>(terminal->use, std::move(terminal->master), reaper);
    HeldTerminal held(terminal ? std::optional<TerminalUse>(terminal->use) : std::nullopt, relays, reaper);
    auto started = start_command(plan, *profile, listeners, relays, terminal ? &*terminal : nullptr, reaper);
    set_grace(l.options().grace);  // a signal now goes to the command's group first
    if (!started) return give_up(started.error());
    if (const auto& t = plan.limits[static_cast<std::size_t>(sbx::Limit::timeout)])
        set_timeout(static_cast<unsigned>(t->value));
    if (terminal) terminal->slave.reset();  // the command's alone: its end is the relay's end
    if (terminal_relay) terminal_relay->start();
    OutputFindings found;
    OutputRelayThreads output;
    output.start(std::move(started->err_pipe), std::move(started->out_pipe), relays.merged, scanner ? &*scanner : nullptr, report, found);

    const int wstatus = wait_command(started->pid);
    if (proxy) proxy->stop();  // open questions are answered no
    // The command's last output is written and the caller's terminal has its modes back.
    output.finish(terminal_relay.get(), found);
    held.restore();
    if (proxy) warn_refused_clients(l.program(), *proxy, report, terminal_relay.get());
    int exec_errno = 0;
    const bool exec_failed = ::read(started->exec_pipe.get(), &exec_errno, sizeof exec_errno) == sizeof exec_errno;
    started->exec_pipe.reset();
    l.clean_up(made, reaper);
    // Not here: the audit after the run (filesystem.gitAudit, launchers/linux/git_audit.cpp)
    // uses Linux's renameat2 and is built into sbx-linux only. Seatbelt cannot refuse
    // the file names either, so a nested repository made under sbx-mac stays live for
    // git outside; docs/plan.md says so.
    if (caught_signal() != 0 && !signal_forwarded()) die_of(caught_signal());
    say_grace_ran_out(l);
    if (exec_failed) {
        auto e = sbx::Error(sbx::Errc::unavailable, "the sandbox cannot run here")
                     .caused_by(sbx::Error(sbx::Errc::sandbox_unavailable,
                                           std::string(kSandboxExec) + ": " + std::strerror(exec_errno)));
        return l.fail_reported(e);
    }
    return report_end(l, plan, wstatus, found, proxy.get(), scanner ? &*scanner : nullptr, terminal_relay.get());
}

}  // namespace

int main(int argc, char** argv) {
    // ssh's ProxyCommand inside the sandbox (base/connect_relay.hpp).
    if (argc >= 2 && argv[1] == sbx::launcher::kConnectFlag)
        return sbx::launcher::run_connect_relay("sbx-mac", argc - 2, argv + 2);
    MacPlatform mac;
    return launcher_main(argc, argv, mac);
}
