// sbx-linux - carries out a plan with bubblewrap and seccomp.
//
//   sbx-linux [--plan-fd N] [--report-fd N]      run the plan read from fd N (default: standard input)
//   sbx-linux --doctor [--json] [--bwrap PATH]   can the sandbox run here; exit 1 when it cannot
//   sbx-linux --stage ...                        the in-sandbox stage (stage.hpp); not for people
//
// It decides nothing: the plan says what to mount, which environment the command
// gets and which seccomp switches apply. In order: read and check the plan,
// probe the machine, check that the disk is as planned, make the temporary
// directory and the placeholders (a reaper process removes them should this
// process die), build the seccomp program, run bubblewrap, which runs the stage,
// which loads the filter and execs the command; then remove what was made.
//
// Exit status: the command's own; 128+N when it died of signal N; 126 when it
// could not be run, 127 when it was not found; 125 when sbx-linux failed before
// the command ran (an invalid or stale plan, an unavailable sandbox), with one
// line on standard error: "sbx-linux: CODE: message".
#include <fcntl.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "fd_io.hpp"
#include "leftovers.hpp"
#include "root_group.hpp"
#include "probe.hpp"
#include "sbx/fs_view_disk.hpp"
#include "sbx/json.hpp"
#include "sbx/linux/bwrap.hpp"
#include "sbx/plan.hpp"
#include "seccomp_filter.hpp"
#include "stage.hpp"

namespace {

using namespace sbx::linux_sandbox;

constexpr int kFailedBeforeCommand = 125;
constexpr int kCannotRun = 126;
constexpr int kNotFound = 127;

int fail_before(const sbx::Error& e) {
    std::cerr << "sbx-linux: " << sbx::errc_name(e.code) << ": " << sbx::to_string(e) << "\n";
    return kFailedBeforeCommand;
}

int usage(const std::string& message) {
    std::cerr << "sbx-linux: USAGE: " << message
              << "\nusage: sbx-linux [--plan-fd N] [--report-fd N]\n       sbx-linux --doctor [--json] [--bwrap PATH]\n";
    return kFailedBeforeCommand;
}

// The JSON lines of --report-fd.
class Report {
public:
    explicit Report(int fd) : fd_(fd) {}
    void exit_event(bool sandboxed, std::string_view unsandboxed_reason, int status) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("exit").key("sandboxed").value(sandboxed);
        if (!sandboxed) w.key("unsandboxedReason").value(unsandboxed_reason);
        w.key("status").value(status).end_object();
        write_line(w.take());
    }
    void error_event(const sbx::Error& e) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("error").key("code").value(sbx::errc_name(e.code));
        w.key("message").value(sbx::to_string(e)).end_object();
        write_line(w.take());
    }

private:
    void write_line(std::string line) {
        line += '\n';
        write_all(fd_, line.data(), line.size());
    }
    int fd_;
};

// The signal that ended us, if one did: set by the handler, read by main.
volatile sig_atomic_t g_signal = 0;
volatile pid_t g_sandbox_pid = -1;

void on_signal(int sig) {
    g_signal = sig;
    // bubblewrap dies, and with it (--die-with-parent) everything inside.
    if (g_sandbox_pid > 0) ::kill(g_sandbox_pid, SIGKILL);
}

void install_signal_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(sig, &sa, nullptr);
    // Writes to the reaper's pipe must not kill us; the child undoes this.
    ::signal(SIGPIPE, SIG_IGN);
}

// Dies of the signal that ended the sandbox, so our caller sees what it sent.
[[noreturn]] void die_of(int sig) {
    ::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);
}

std::vector<char*> c_strings(std::vector<std::string>& v) {
    std::vector<char*> out;
    for (auto& s : v) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

std::vector<std::string> env_strings(const sbx::Plan& plan, bool with_loader) {
    std::vector<std::string> out;
    for (const auto& v : plan.env) out.push_back(v.name + "=" + v.value);
    if (with_loader)
        for (const auto& v : plan.loader_env) out.push_back(v.name + "=" + v.value);
    return out;
}

// The seccomp program for the plan, in a memfd the sandbox inherits.
sbx::expected<int> seccomp_program(const sbx::Plan& plan) {
    auto filter = build_filter(SeccompOptions{plan.allow_unix_sockets});
    if (!filter) return sbx::fail(filter.error());
    const int fd = ::memfd_create("sbx-seccomp", MFD_CLOEXEC);  // the bubblewrap child clears it
    if (fd < 0) return sbx::fail(sbx::Errc::sandbox_unavailable, std::string("memfd_create: ") + std::strerror(errno));
    if (int rc = seccomp_export_bpf(filter->get(), fd); rc < 0) {
        ::close(fd);
        return sbx::fail(sbx::Errc::sandbox_unavailable, std::string("seccomp_export_bpf: ") + std::strerror(-rc));
    }
    return fd;
}

// A descriptor on the program the sandbox runs first: sbx-stage where it lies
// beside this program (a static program starts fastest), else this program,
// whose --stage mode does the same. Opened here, outside, so that a directory
// the plan hides cannot hide it. -1 with errno on failure.
int open_stage_binary() {
    char self[4096];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        const std::string stage = sbx::paths::parent(std::string(self, static_cast<std::size_t>(n))) + "/sbx-stage";
        const int fd = ::open(stage.c_str(), O_RDONLY | O_CLOEXEC);
        struct stat st {};
        if (fd >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IXUSR) != 0) return fd;
        if (fd >= 0) ::close(fd);
    }
    return ::open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
}

// Makes the temporary directory and the placeholders. The directory and the
// removeIfCreated paths are this sandbox's (`made`, and the reaper's copy); the
// placeholders are the root's group's, whose last sandbox removes them.
sbx::expected<void> make_leftovers(const sbx::Plan& plan, Reaper& reaper, RootGroup& group,
                                   std::vector<Leftover>& made) {
    auto record = [&](LeftoverKind kind, const std::string& path) {
        made.push_back({kind, path, 0, 0});
        reaper.made(made.back());
    };
    if (::mkdir(plan.tmpdir.c_str(), 0700) != 0)
        return sbx::fail(sbx::Error(sbx::Errc::stale_plan, std::string("cannot make the temporary directory: ") +
                                                               std::strerror(errno))
                             .in_file(plan.tmpdir));
    record(LeftoverKind::tmpdir, plan.tmpdir);
    // removeIfCreated paths are recorded before the command can make them.
    for (const auto& r : plan.filesystem.remove_if_created) record(LeftoverKind::remove_if_created, r.path);
    for (const auto& ph : plan.filesystem.placeholders) {
        const std::string parent = sbx::paths::parent(ph.path);
        const std::string name = ph.path.substr(parent.size() == 1 ? 1 : parent.size() + 1);
        const int dirfd = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dirfd < 0)
            return sbx::fail(sbx::Error(sbx::Errc::stale_plan, std::string("cannot open a placeholder's directory: ") +
                                                                   std::strerror(errno))
                                 .in_file(parent));
        struct stat st {};
        const bool same = ::fstat(dirfd, &st) == 0 && st.st_dev == ph.parent.dev && st.st_ino == ph.parent.ino;
        int rc = -1;
        if (same) {
            if (ph.kind == sbx::Placeholder::file) {
                rc = ::openat(dirfd, name.c_str(), O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
                if (rc >= 0) ::close(rc);
            } else {
                rc = ::mkdirat(dirfd, name.c_str(), 0555);
            }
        }
        const int err = errno;
        struct stat made_st {};
        if (rc >= 0 && ::fstatat(dirfd, name.c_str(), &made_st, AT_SYMLINK_NOFOLLOW) != 0) made_st = {};
        ::close(dirfd);
        if (!same)
            return sbx::fail(sbx::Error(sbx::Errc::stale_plan, "a placeholder's directory changed since the plan was made")
                                 .in_file(parent));
        if (rc < 0)
            return sbx::fail(sbx::Error(sbx::Errc::stale_plan,
                                        std::string("cannot make the placeholder: ") + std::strerror(err) +
                                            (err == EEXIST ? " (something got there first)" : ""))
                                 .in_file(ph.path));
        const Leftover placeholder{
            ph.kind == sbx::Placeholder::file ? LeftoverKind::placeholder_file : LeftoverKind::placeholder_dir,
            ph.path, made_st.st_dev, made_st.st_ino};
        if (auto r = group.record(placeholder); !r) {
            remove_leftovers({placeholder});
            return r;
        }
    }
    return {};
}

void clean_up(const std::vector<Leftover>& made, Reaper& reaper, RootGroup* group = nullptr) {
    auto problems = remove_leftovers(made);
    if (group != nullptr) {
        auto more = group->leave();
        problems.insert(problems.end(), more.begin(), more.end());
    }
    for (const auto& p : problems) std::cerr << "sbx-linux: warning: " << p << "\n";
    // Whatever we could not remove, the reaper cannot either.
    reaper.dismiss();
}

// Runs argv with envp, waits, and returns a shell-style status. For the
// unconfined run only.
int run_unconfined(const sbx::Plan& plan) {
    auto env = env_strings(plan, true);
    auto argv = plan.argv;
    const pid_t pid = ::fork();
    if (pid < 0) return kFailedBeforeCommand;
    if (pid == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        if (::chdir(plan.cwd.c_str()) != 0) ::_exit(kCannotRun);
        auto e = c_strings(env);
        environ = e.data();
        auto a = c_strings(argv);
        ::execvp(a[0], a.data());
        ::_exit(errno == ENOENT ? kNotFound : kCannotRun);
    }
    g_sandbox_pid = pid;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    g_sandbox_pid = -1;
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

int run_plan(int plan_fd, int report_fd) {
    Report report(report_fd);
    const std::string origin = plan_fd == 0 ? "standard input" : "fd " + std::to_string(plan_fd);
    auto text = sbx::read_all(plan_fd, sbx::json::kMaxDocumentBytes, origin, sbx::Errc::invalid_plan);
    if (!text) return fail_before(text.error());
    if (plan_fd != 0) ::close(plan_fd);
    auto plan = sbx::parse_plan(*text, origin);
    if (!plan) {
        report.error_event(plan.error());
        return fail_before(plan.error());
    }
    for (const auto& w : plan->warnings) std::cerr << "sbx-linux: warning: " << sbx::to_string(w) << "\n";

    ProbeOptions popt{plan->bwrap_path, !plan->allow_unix_sockets, false};
    auto probed = probe(popt);
    bool unavailable = !probed.available();
    sbx::Error unavailable_why = unavailable ? probed.why() : sbx::Error{};

    // The seccomp program; where it cannot be built and the plan allows every
    // Unix socket, --disable-userns alone keeps namespaces shut (the reference's rule).
    int seccomp_fd = -1;
    if (!unavailable) {
        auto program = seccomp_program(*plan);
        if (program) {
            seccomp_fd = *program;
        } else if (plan->allow_unix_sockets) {
            std::cerr << "sbx-linux: warning: no seccomp filter (" << sbx::to_string(program.error())
                      << "); the plan allows every Unix socket, so --disable-userns alone keeps namespaces shut\n";
        } else {
            unavailable = true;
            unavailable_why = sbx::Error(sbx::Errc::unavailable, "the sandbox cannot run here").caused_by(program.error());
        }
    }
    if (unavailable && plan->fail_if_unavailable) {
        report.error_event(unavailable_why);
        return fail_before(unavailable_why);
    }

    sbx::DiskFs disk;
    if (unavailable) {
        if (auto v = sbx::verify_plan(*plan, disk); !v) {
            report.error_event(v.error());
            return fail_before(v.error());
        }
    }

    install_signal_handlers();
    auto reaper = Reaper::start();
    if (!reaper) return fail_before(reaper.error());
    std::vector<Leftover> made;

    if (unavailable) {
        std::cerr << "sbx-linux: warning: running the command WITHOUT a sandbox, as the plan allows "
                     "(failIfUnavailable: false): "
                  << sbx::to_string(unavailable_why) << "\n";
        if (::mkdir(plan->tmpdir.c_str(), 0700) != 0) {
            auto e = sbx::Error(sbx::Errc::stale_plan, std::string("cannot make the temporary directory: ") +
                                                           std::strerror(errno))
                         .in_file(plan->tmpdir);
            reaper->dismiss();
            return fail_before(e);
        }
        made.push_back({LeftoverKind::tmpdir, plan->tmpdir});
        reaper->made(made.back());
        const int status = run_unconfined(*plan);
        clean_up(made, *reaper);
        report.exit_event(false, "unavailable", status);
        if (g_signal != 0) die_of(g_signal);
        return status;
    }

    // Other sandboxes of the same root wait while this one checks the plan and
    // makes its placeholders, and the last one to end removes them.
    auto group = RootGroup::join(*plan);
    if (!group) {
        reaper->dismiss();
        report.error_event(group.error());
        return fail_before(group.error());
    }
    reaper->group(group->lock_path(), group->live_path());
    if (auto v = sbx::verify_plan(*plan, disk); !v) {
        clean_up(made, *reaper, &*group);
        report.error_event(v.error());
        return fail_before(v.error());
    }
    if (auto r = make_leftovers(*plan, *reaper, *group, made); !r) {
        clean_up(made, *reaper, &*group);
        report.error_event(r.error());
        return fail_before(r.error());
    }
    group->unlock();

    // The stage's binary (sbx-stage beside us, else ourselves), and the status pipe.
    const int exe_fd = open_stage_binary();
    int status_pipe[2] = {-1, -1};
    if (exe_fd < 0 || ::pipe2(status_pipe, O_CLOEXEC) != 0) {
        auto e = sbx::Error(sbx::Errc::internal, std::string("cannot set up the stage: ") + std::strerror(errno));
        clean_up(made, *reaper, &*group);
        return fail_before(e);
    }

    StageArgs stage;
    stage.exe_fd = exe_fd;
    stage.status_fd = status_pipe[1];
    stage.seccomp_fd = seccomp_fd;
    for (const auto& v : plan->loader_env) stage.loader_env.push_back(v.name + "=" + v.value);
    stage.command = plan->argv;

    std::vector<std::string> args{probed.bwrap,
                                  "--unshare-user",
                                  "--unshare-ipc",
                                  "--unshare-pid",
                                  "--unshare-net",
                                  "--unshare-uts",
                                  "--unshare-cgroup-try",
                                  "--disable-userns",
                                  "--die-with-parent",
                                  "--new-session",
                                  "--cap-drop",
                                  "ALL"};
    auto fs_args = bwrap_fs_args(plan->filesystem);
    args.insert(args.end(), fs_args.begin(), fs_args.end());
    // git inside reads the repository's exclude file with the placeholders added.
    int exclude_fd = -1;
    if (const auto& ex = plan->filesystem.git_exclude) {
        exclude_fd = ::memfd_create("sbx-git-exclude", MFD_CLOEXEC);  // the bubblewrap child clears it
        if (exclude_fd < 0 || !write_all(exclude_fd, ex->content.data(), ex->content.size()) ||
            ::lseek(exclude_fd, 0, SEEK_SET) != 0) {
            auto e = sbx::Error(sbx::Errc::internal, std::string("cannot write the git exclude file: ") + std::strerror(errno));
            clean_up(made, *reaper, &*group);
            return fail_before(e);
        }
        args.insert(args.end(), {"--ro-bind-data", std::to_string(exclude_fd), ex->path});
    }
    args.insert(args.end(), {"--chdir", plan->cwd, "--"});
    auto stage_args = stage_argv(stage);
    args.insert(args.end(), stage_args.begin(), stage_args.end());
    auto env = env_strings(*plan, false);

    const pid_t pid = ::fork();
    if (pid < 0) {
        auto e = sbx::Error(sbx::Errc::internal, std::string("fork: ") + std::strerror(errno));
        clean_up(made, *reaper, &*group);
        return fail_before(e);
    }
    if (pid == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
        // The descriptors the stage needs survive exec; the pipe's read end does not.
        for (int fd : {exe_fd, status_pipe[1], seccomp_fd, exclude_fd})
            if (fd >= 0) ::fcntl(fd, F_SETFD, 0);
        auto a = c_strings(args);
        auto e = c_strings(env);
        ::execve(a[0], a.data(), e.data());
        std::fprintf(stderr, "sbx-linux: cannot run %s: %s\n", a[0], std::strerror(errno));
        ::_exit(kFailedBeforeCommand);
    }
    g_sandbox_pid = pid;
    reaper->sandbox_pid(pid);
    ::close(status_pipe[1]);
    ::close(exe_fd);
    if (seccomp_fd >= 0) ::close(seccomp_fd);
    if (exclude_fd >= 0) ::close(exclude_fd);
    if (g_signal != 0) ::kill(pid, SIGKILL);  // a signal came before we knew the pid

    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    g_sandbox_pid = -1;
    auto bytes = sbx::read_all(status_pipe[0], 4096, "the stage's status pipe");
    ::close(status_pipe[0]);
    const StageReport stage_report = parse_stage_report(bytes ? *bytes : std::string());
    clean_up(made, *reaper, &*group);

    if (g_signal != 0) die_of(g_signal);
    const int status = WIFSIGNALED(wstatus) ? 128 + WTERMSIG(wstatus) : WEXITSTATUS(wstatus);
    if (!stage_report.started) {
        // bubblewrap could not build the sandbox; it said why on standard error.
        // The thorough probe explains what to do about it.
        popt.thorough = true;
        auto deep = probe(popt);
        sbx::Error e = deep.available()
                           ? sbx::Error(sbx::Errc::unavailable, "bubblewrap could not build the sandbox (status " +
                                                                    std::to_string(status) + "; its message is above)")
                           : deep.why();
        report.error_event(e);
        return fail_before(e);
    }
    if (!stage_report.failure.empty()) {
        auto e = sbx::Error(sbx::Errc::unavailable, "the sandbox could not be completed")
                     .caused_by(sbx::Error(sbx::Errc::sandbox_unavailable, stage_report.failure));
        report.error_event(e);
        return fail_before(e);
    }
    if (stage_report.exec_errno != 0) {
        std::cerr << "sbx-linux: " << plan->argv.front() << ": " << std::strerror(stage_report.exec_errno) << "\n";
        const int s = stage_report.exec_errno == ENOENT ? kNotFound : kCannotRun;
        report.exit_event(true, "", s);
        return s;
    }
    report.exit_event(true, "", status);
    return status;
}

int doctor(bool json, const std::string& bwrap) {
    if (!bwrap.empty() && !sbx::paths::is_absolute(bwrap)) return usage("--bwrap needs an absolute path");
    auto result = probe(ProbeOptions{bwrap, true, true});
    std::cout << (json ? to_json(result) + "\n" : to_text(result));
    return result.available() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc >= 2 && argv[1] == kStageFlag) {
        StageArgs stage;
        if (!parse_stage_args(argc - 2, argv + 2, stage)) {
            std::cerr << "sbx-linux: USAGE: --stage is sbx-linux's own, inside the sandbox\n";
            return kFailedBeforeCommand;
        }
        return run_stage(stage);
    }
    int plan_fd = 0;
    int report_fd = -1;
    bool doctor_mode = false, json = false;
    std::string bwrap;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
        if (a == "--plan-fd" || a == "--report-fd") {
            const char* v = next();
            int& out = a == "--plan-fd" ? plan_fd : report_fd;
            if (v == nullptr || !parse_fd(v, out)) return usage(std::string(a) + " needs a descriptor number");
            if (::fcntl(out, F_GETFD) < 0) return usage(std::string(a) + " " + v + ": the descriptor is not open");
            ::fcntl(out, F_SETFD, FD_CLOEXEC);  // the sandbox never sees it
        } else if (a == "--doctor") {
            doctor_mode = true;
        } else if (a == "--json") {
            json = true;
        } else if (a == "--bwrap") {
            const char* v = next();
            if (v == nullptr) return usage("--bwrap needs a path");
            bwrap = v;
        } else if (a == "--help" || a == "-h") {
            std::cout << "usage: sbx-linux [--plan-fd N] [--report-fd N]    run the plan read from fd N (default 0)\n"
                         "       sbx-linux --doctor [--json] [--bwrap PATH] can the sandbox run here\n"
                         "The plan is described in docs/plan.md.\n";
            return 0;
        } else {
            return usage("unknown argument '" + std::string(a) + "'");
        }
    }
    if (doctor_mode) return doctor(json, bwrap);
    if (json || !bwrap.empty()) return usage("--json and --bwrap go with --doctor");
    try {
        return run_plan(plan_fd, report_fd);
    } catch (const std::exception& e) {
        std::cerr << "sbx-linux: INTERNAL: " << e.what() << "\n";
        return kFailedBeforeCommand;
    }
}
