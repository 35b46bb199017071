// sbx-mac - carries out a plan with macOS's Seatbelt (sandbox-exec).
//
//   sbx-mac [--plan-fd N] [--report-fd N] [--control-fd N] [--again-fd N] [--violations]
//                                      run the plan read from fd N (default: standard input)
//   sbx-mac --print-profile [--plan-fd N]
//                                      print the Seatbelt profile the plan would run under
//   sbx-mac --doctor [--json]          can the sandbox run here; exit 1 when it cannot
//
// It reads the same plan as sbx-linux (sbx::parse_plan, as strict), checks the
// disk is as planned, makes the command's temporary directory, starts the same
// filtering proxy on 127.0.0.1 (macOS has no network namespace of the command's
// own: the profile lets the command reach only the proxy's two ports), writes the
// profile with sbx::mac::profile() from the plan's filesystem rules, and runs
// `sandbox-exec -p PROFILE -- COMMAND` in a session of its own, whose process
// group ends with the command. Then it removes what it made, as sbx-linux does,
// with the same report, questions and <sandbox_violations> block (common.hpp).
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "common.hpp"
#include "fd_io.hpp"
#include "leftovers.hpp"
#include "proxy.hpp"
#include "proxy_env.hpp"
#include "sbx/core/json.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "sbx/mac/profile.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/plan/read_plan.hpp"
#include "sbx/plan/report.hpp"
#include "sbx/plan/verify_plan.hpp"
#include "tool_cache.hpp"

namespace {

using namespace sbx::linux_sandbox;
using namespace sbx::launcher;

// Seatbelt's runner. Only the tests' build changes it (tests/launcher/meson.build:
// sbx-mac-fake-seatbelt, never installed), to a script that checks the profile
// and runs the command, so this launcher's own work is tested where there is no
// Seatbelt.
#if !defined(SBX_MAC_SANDBOX_EXEC)
#define SBX_MAC_SANDBOX_EXEC "/usr/bin/sandbox-exec"
#endif
constexpr std::string_view kSandboxExec = SBX_MAC_SANDBOX_EXEC;
// sockaddr_un's sun_path on macOS.
constexpr std::size_t kUnixPathMax = 104;
// What programs add under TMPDIR for their sockets ("/tmux-501/default",
// "/ssh-XXXXXXXXXX/agent.12345"): about 30 bytes.
constexpr std::size_t kSocketNameRoom = 32;

int fail_before(const sbx::Error& e) {
    plan_again_if_stale(e);
    std::cerr << "sbx-mac: " << sbx::errc_name(e.code) << ": " << sbx::to_string(e) << "\n";
    return kFailedBeforeCommand;
}

int usage(const std::string& message) {
    std::cerr << "sbx-mac: USAGE: " << message
              << "\nusage: sbx-mac [--plan-fd N] [--report-fd N] [--control-fd N] [--again-fd N] [--violations]\n"
                 "       sbx-mac --print-profile [--plan-fd N]\n";
    return kFailedBeforeCommand;
}

// A listening TCP socket on 127.0.0.1 with a port of the system's choosing.
sbx::expected<std::pair<int, int>> listen_loopback() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return sbx::fail(sbx::Errc::io_error, std::string("socket: ") + std::strerror(errno));
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 128) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) {
        const int err = errno;
        ::close(fd);
        return sbx::fail(sbx::Errc::io_error, std::string("cannot listen on 127.0.0.1: ") + std::strerror(err));
    }
    return std::pair{fd, static_cast<int>(ntohs(sa.sin_port))};
}

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
void warn_long_tmpdir(const sbx::Plan& plan) {
    if (plan.tmpdir.size() + kSocketNameRoom <= kUnixPathMax) return;
    std::cerr << "sbx-mac: warning: the command's TMPDIR " << plan.tmpdir << " is " << plan.tmpdir.size()
              << " bytes long: a Unix socket a program makes inside it (ssh-agent, tmux, language servers) "
                 "would pass macOS's "
              << kUnixPathMax << "-byte limit and fail; point TMPDIR at a short directory (export TMPDIR=/tmp) "
                                 "and make the plan again\n";
}

struct Listeners {
    int http = -1, socks = -1;
    int http_port = 0, socks_port = 0;
};

sbx::expected<Listeners> open_listeners() {
    auto h = listen_loopback();
    if (!h) return sbx::fail(h.error());
    auto s = listen_loopback();
    if (!s) {
        ::close(h->first);
        return sbx::fail(s.error());
    }
    return Listeners{h->first, s->first, h->second, s->second};
}

sbx::mac::ProfileOptions profile_options(const sbx::Plan& plan, const Listeners& l) {
    sbx::mac::ProfileOptions o;
    if (plan.network.mode == sbx::NetworkMode::proxy) {
        o.http_proxy_port = static_cast<std::uint16_t>(l.http_port);
        o.socks_proxy_port = static_cast<std::uint16_t>(l.socks_port);
    }
    o.allow_pty = ::isatty(STDIN_FILENO) != 0;
    return o;
}

// The command's environment: the plan's, loader variables included (sandbox-exec
// is a system program, which macOS runs without them anyway), with the proxy's.
std::vector<std::string> command_environment(const sbx::Plan& plan, const Listeners& l) {
    auto env = env_strings(plan, true);
    if (plan.network.mode != sbx::NetworkMode::proxy) return env;
    for (const auto& [name, value] : proxy_environment(l.http_port, l.socks_port)) {
        const std::string prefix = name + "=";
        env.erase(std::remove_if(env.begin(), env.end(), [&](const std::string& v) { return v.rfind(prefix, 0) == 0; }),
                  env.end());
        env.push_back(prefix + value);
    }
    return env;
}

sbx::expected<sbx::Plan> read_plan(int plan_fd) {
    const std::string origin = plan_fd == 0 ? "standard input" : "fd " + std::to_string(plan_fd);
    auto text = sbx::read_all(plan_fd, sbx::json::kMaxDocumentBytes, origin, sbx::Errc::invalid_plan);
    if (!text) return sbx::fail(text.error());
    if (plan_fd != 0) ::close(plan_fd);
    return sbx::parse_plan(*text, origin);
}

int doctor(bool json) {
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

int print_profile(int plan_fd) {
    auto plan = read_plan(plan_fd);
    if (!plan) return fail_before(plan.error());
    auto listeners = open_listeners();
    if (!listeners) return fail_before(listeners.error());
    auto text = sbx::mac::profile(*plan, profile_options(*plan, *listeners));
    ::close(listeners->http);
    ::close(listeners->socks);
    if (!text) return fail_before(text.error());
    std::cout << *text;
    return 0;
}

// The plan's forwards are Linux's: there the command has a loopback of its own
// to listen on. Here it shares the host's, where the server itself holds the
// port, and Seatbelt lets it reach only the proxy: say so, once.
void warn_forwards(const sbx::Plan& plan) {
    if (plan.network.mode != sbx::NetworkMode::proxy || plan.network.forwards.empty()) return;
    std::string list;
    for (const auto& f : plan.network.forwards)
        list += (list.empty() ? "" : ", ") + sbx::net::address_port_text(f.listen, f.port);
    std::cerr << "sbx-mac: warning: no loopback forwards on macOS (" << list
              << "): the command reaches those servers only through its proxy variables (HTTP_PROXY, ALL_PROXY)\n";
}

int run_plan(int plan_fd, int report_fd, bool print_violations) {
    Report report(report_fd);
    g_report = &report;
    auto plan = read_plan(plan_fd);
    if (!plan) {
        report.error_event(plan.error());
        return fail_before(plan.error());
    }
    for (const auto& w : plan->warnings)
        // The Linux filter's limit is not this launcher's: Seatbelt tells socket paths apart.
        if (w.message.find("Linux cannot tell Unix socket paths apart") == std::string::npos)
            std::cerr << "sbx-mac: warning: " << sbx::to_string(w) << "\n";
    warn_long_tmpdir(*plan);
    warn_forwards(*plan);
    if (auto fds = check_pass_fds(*plan, {plan_fd, report_fd, g_control_fd}); !fds) {
        report.error_event(fds.error());
        return fail_before(fds.error());
    }

    const auto missing = sandbox_exec_missing();
    if (missing && plan->fail_if_unavailable) {
        report.error_event(*missing);
        return fail_before(*missing);
    }
    sbx::DiskFs disk;
    if (auto v = sbx::verify_plan(*plan, disk); !v) {
        report.error_event(v.error());
        return fail_before(v.error());
    }

    // The project's tool cache home persists between its runs: made here, never removed.
    if (plan->tool_cache)
        if (auto r = make_tool_cache(plan->tool_cache->path, ::getuid()); !r) {
            report.error_event(r.error());
            return fail_before(r.error());
        }

    install_signal_handlers();
    auto reaper = Reaper::start();
    if (!reaper) return fail_before(reaper.error());
    std::vector<Leftover> made;
    auto clean_up = [&] {
        for (const auto& p : remove_leftovers(made)) std::cerr << "sbx-mac: warning: " << p << "\n";
        reaper->dismiss();
    };
    auto give_up = [&](const sbx::Error& e) {
        clean_up();
        report.error_event(e);
        return fail_before(e);
    };

    if (::mkdir(plan->tmpdir.c_str(), 0700) != 0) {
        auto e = sbx::Error(sbx::Errc::stale_plan,
                            std::string("cannot make the temporary directory: ") + std::strerror(errno))
                     .in_file(plan->tmpdir);
        reaper->dismiss();
        report.error_event(e);
        return fail_before(e);
    }
    made.push_back({LeftoverKind::tmpdir, plan->tmpdir});
    reaper->made(made.back());

    if (missing) {
        std::cerr << "sbx-mac: warning: running the command WITHOUT a sandbox, as the plan allows "
                     "(failIfUnavailable: false): "
                  << sbx::to_string(*missing) << "\n";
        const int status = run_unconfined(*plan);
        clean_up();
        report.exit_event(false, "unavailable", status);
        if (g_signal != 0) die_of(g_signal);
        return status;
    }

    // The proxy on the host's loopback; the profile lets the command reach its
    // ports and nothing else. (Unlike on Linux, other local programs could
    // connect to it too: macOS has no namespace to hide it in.)
    Listeners listeners;
    std::unique_ptr<CommandProxy> proxy;
    if (plan->network.mode == sbx::NetworkMode::proxy) {
        auto l = open_listeners();
        if (!l) return give_up(l.error());
        listeners = *l;
        // While a question is on the terminal the command's process group is
        // stopped (the command leads it, see setsid below). A process that left
        // the group (a setsid of its own) keeps running: macOS has no PID
        // namespace to find it by. Not tested on Linux, where sbx-mac only builds.
        auto started = CommandProxy::start(*plan, report, listeners.http, listeners.socks, [] {
            Stopped s;
            const pid_t group = g_sandbox_pid;
            if (group <= 0 || ::kill(-group, SIGSTOP) != 0) {
                s.complete = false;
                return s;
            }
            s.targets.push_back(-group);
            return s;
        });
        if (!started) return give_up(started.error());
        proxy = std::move(*started);
    }
    auto profile = sbx::mac::profile(*plan, profile_options(*plan, listeners));
    if (!profile) {
        if (proxy) proxy->stop();
        return give_up(profile.error());
    }

    int err_pipe[2] = {-1, -1};
    const bool relay = plan->scan_stderr || (print_violations && ::isatty(STDERR_FILENO) == 0);
    if (relay && ::pipe(err_pipe) != 0) return give_up(sbx::Error(sbx::Errc::internal, "pipe"));
    for (int fd : err_pipe)
        if (fd >= 0) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    std::optional<sbx::StderrScanner> scanner;
    if (plan->scan_stderr) scanner.emplace(plan->filesystem, plan->cwd);
    // The child's exec failure comes back on this pipe; success closes it.
    int exec_pipe[2];
    if (::pipe(exec_pipe) != 0) return give_up(sbx::Error(sbx::Errc::internal, "pipe"));
    ::fcntl(exec_pipe[0], F_SETFD, FD_CLOEXEC);
    ::fcntl(exec_pipe[1], F_SETFD, FD_CLOEXEC);

    std::vector<std::string> args{std::string(kSandboxExec), "-p", *profile, "--"};
    args.insert(args.end(), plan->argv.begin(), plan->argv.end());
    auto env = command_environment(*plan, listeners);
    g_kill_group = true;  // the command leads a session of its own; the handler ends its whole group
    const pid_t pid = ::fork();
    if (pid < 0) return give_up(sbx::Error(sbx::Errc::internal, std::string("fork: ") + std::strerror(errno)));
    if (pid == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
        // A session of its own: no controlling terminal to push input into
        // (TIOCSTI), and one process group for the launcher to end.
        ::setsid();
        if (err_pipe[1] >= 0) ::dup2(err_pipe[1], STDERR_FILENO);
        // The command gets 0-2 and the plan's passFds; the exec pipe closes on exec.
        std::vector<int> keep = plan->pass_fds;
        keep.push_back(exec_pipe[1]);
        if (!sbx::linux_sandbox::sweep_fds(keep, sbx::linux_sandbox::FdSweep::cloexec)) {
            const int sweep_err = errno;
            write_all(exec_pipe[1], &sweep_err, sizeof sweep_err);
            ::_exit(kFailedBeforeCommand);
        }
        for (int fd : plan->pass_fds) ::fcntl(fd, F_SETFD, 0);
        int err = 0;
        if (::chdir(plan->cwd.c_str()) == 0) {
            auto a = c_strings(args);
            auto e = c_strings(env);
            ::execve(a[0], a.data(), e.data());
        }
        err = errno;
        write_all(exec_pipe[1], &err, sizeof err);
        ::_exit(kFailedBeforeCommand);
    }
    g_sandbox_pid = pid;
    reaper->sandbox_pid(pid);
    reaper->kill_group(pid);
    ::close(exec_pipe[1]);
    std::thread stderr_relay;
    if (err_pipe[0] >= 0) {
        ::close(err_pipe[1]);
        stderr_relay = std::thread(relay_stderr, err_pipe[0], scanner ? &*scanner : nullptr, &report);
    }
    if (g_signal != 0) {  // before we knew the pid
        ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);
    }

    // What the command left running in its group ends with it: killed while the
    // command is a zombie still, so its pid cannot have been reused yet.
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
    }
    ::kill(-pid, SIGKILL);
    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    g_sandbox_pid = -1;
    if (proxy) proxy->stop();  // open questions are answered no
    if (stderr_relay.joinable()) stderr_relay.join();
    int exec_errno = 0;
    const bool exec_failed = ::read(exec_pipe[0], &exec_errno, sizeof exec_errno) == sizeof exec_errno;
    ::close(exec_pipe[0]);
    clean_up();
    // Not here: the audit after the run (filesystem.gitAudit, launchers/git_audit.cpp)
    // uses Linux's renameat2 and is built into sbx-linux only. Seatbelt cannot refuse
    // the file names either, so a nested repository made under sbx-mac stays live for
    // git outside; docs/plan.md says so.
    if (g_signal != 0) die_of(g_signal);
    if (exec_failed) {
        auto e = sbx::Error(sbx::Errc::unavailable, "the sandbox cannot run here")
                     .caused_by(sbx::Error(sbx::Errc::sandbox_unavailable,
                                           std::string(kSandboxExec) + ": " + std::strerror(exec_errno)));
        report.error_event(e);
        return fail_before(e);
    }
    const int status = WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : WEXITSTATUS(wstatus);
    report.exit_event(true, "", status);
    if (print_violations)
        std::cerr << violations_text(*plan, proxy ? proxy->refused() : std::vector<ProxyEvent>{},
                                     scanner ? &*scanner : nullptr)
                  << std::flush;
    return status;
}

}  // namespace

int main(int argc, char** argv) {
    g_program = "sbx-mac";
    int plan_fd = 0;
    int report_fd = -1;
    bool print_violations = false, print = false, doctor_mode = false, json = false;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        if (a == "--plan-fd" || a == "--report-fd" || a == "--control-fd") {
            int& out = a == "--plan-fd" ? plan_fd : a == "--report-fd" ? report_fd : g_control_fd;
            if (auto why = take_fd_option(a, next(), out); !why.empty()) return usage(why);
        } else if (a == "--again-fd") {
            if (auto why = take_again_option(next()); !why.empty()) return usage(why);
        } else if (a == "--violations") {
            print_violations = true;
        } else if (a == "--print-profile") {
            print = true;
        } else if (a == "--doctor") {
            doctor_mode = true;
        } else if (a == "--json") {
            json = true;
        } else if (a == "--help" || a == "-h") {
            std::cout << "usage: sbx-mac [--plan-fd N] [--report-fd N] [--control-fd N] [--again-fd N] [--violations]\n"
                         "       sbx-mac --print-profile [--plan-fd N]\n"
                         "       sbx-mac --doctor [--json]\n"
                         "The plan is described in docs/plan.md, the profile in docs/seatbelt.md.\n";
            return 0;
        } else {
            return usage("unknown argument '" + std::string(a) + "'");
        }
    }
    if (doctor_mode) return doctor(json);
    if (json) return usage("--json goes with --doctor");
    if (g_control_fd >= 0 && report_fd < 0) return usage("--control-fd answers questions asked on --report-fd: give both");
    try {
        if (print) {
            if (report_fd >= 0 || g_control_fd >= 0 || print_violations)
                return usage("--print-profile runs nothing: it takes only --plan-fd");
            return print_profile(plan_fd);
        }
        return run_plan(plan_fd, report_fd, print_violations);
    } catch (const std::exception& e) {
        std::cerr << "sbx-mac: INTERNAL: " << e.what() << "\n";
        return kFailedBeforeCommand;
    }
}
