// sbx-linux - carries out a plan with bubblewrap and seccomp.
//
//   sbx-linux [--plan-fd N] [--report-fd N] [--control-fd N] [--again-fd N] [--violations]
//                                                run the plan read from fd N (default: standard input);
//                                                --violations: append a <sandbox_violations> block to
//                                                standard error after the command
//   sbx-linux --doctor [--json] [--bwrap PATH]   can the sandbox run here; exit 1 when it cannot
//   sbx-linux --stage ...                        the in-sandbox stage (stage.hpp); not for people
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
// The command gets descriptors 0-2 and the plan's passFds, nothing else.
//
// Exit status: the command's own; 128+N when it died of signal N; 126 when it
// could not be run, 127 when it was not found; 125 when sbx-linux failed before
// the command ran (an invalid or stale plan, an unavailable sandbox), with one
// line on standard error: "sbx-linux: CODE: message".
#include <fcntl.h>
#include <signal.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <ifaddrs.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
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

#include "common.hpp"
#include "fd_io.hpp"
#include "git_audit.hpp"
#include "leftovers.hpp"
#include "root_group.hpp"
#include "probe.hpp"
#include "proxy.hpp"
#include "sbx/core/json.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "sbx/io/placeholder_registry.hpp"
#include "sbx/linux/bwrap.hpp"
#include "sbx/linux/filter_fallback.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/plan/read_plan.hpp"
#include "sbx/plan/report.hpp"
#include "sbx/plan/verify_plan.hpp"
#include "seccomp_filter.hpp"
#include "stage.hpp"
#include "tool_cache.hpp"

namespace {

using namespace sbx::linux_sandbox;
using namespace sbx::launcher;

int fail_before(const sbx::Error& e) {
    plan_again_if_stale(e);
    std::cerr << "sbx-linux: " << sbx::errc_name(e.code) << ": " << sbx::to_string(e) << "\n";
    return kFailedBeforeCommand;
}

int usage(const std::string& message) {
    std::cerr << "sbx-linux: USAGE: " << message
              << "\nusage: sbx-linux [--plan-fd N] [--report-fd N] [--control-fd N] [--again-fd N] [--violations]\n       sbx-linux --doctor [--json] [--bwrap PATH]\n";
    return kFailedBeforeCommand;
}

// Makes dirfd/name, mode 0444, holding `content`, all at once where the
// filesystem can (an unnamed file written, then linked in); elsewhere made and
// written. A descriptor on it, or -1 with errno (EEXIST when something is there).
int make_whole_file(int dirfd, const std::string& name, const std::string& content) {
    int fd = ::openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0444);
    if (fd >= 0) {
        const std::string from = "/proc/self/fd/" + std::to_string(fd);
        if (write_all(fd, content.data(), content.size()) &&
            ::linkat(AT_FDCWD, from.c_str(), dirfd, name.c_str(), AT_SYMLINK_FOLLOW) == 0)
            return fd;
        const int err = errno;
        ::close(fd);
        errno = err;
        return -1;
    }
    fd = ::openat(dirfd, name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
    if (fd < 0) return -1;
    if (!write_all(fd, content.data(), content.size())) {
        const int err = errno;
        ::close(fd);
        (void)::unlinkat(dirfd, name.c_str(), 0);
        errno = err;
        return -1;
    }
    return fd;
}

// Open descriptors on file placeholders, one per content, that new ones are made
// hard links of.
class LinkSources {
public:
    LinkSources() = default;
    LinkSources(const LinkSources&) = delete;
    LinkSources& operator=(const LinkSources&) = delete;
    ~LinkSources() {
        for (auto& s : sources_) ::close(s.fd);
    }
    // An existing placeholder of the group, when it is still as made.
    void offer(const sbx::RegisteredPlaceholder& e) {
        const std::string content = sbx::placeholder_content(e.kind, e.path);
        if (find(content) >= 0) return;
        const int fd = ::open(e.path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
        struct stat st {};
        if (fd >= 0 && ::fstat(fd, &st) == 0 && sbx::is_made_placeholder(st, e)) {
            sources_.push_back({content, fd});
            return;
        }
        if (fd >= 0) ::close(fd);
    }
    // A placeholder just made; `fd` stays the caller's.
    void keep(const std::string& content, int fd) {
        if (find(content) >= 0) return;
        if (const int copy = ::fcntl(fd, F_DUPFD_CLOEXEC, 0); copy >= 0) sources_.push_back({content, copy});
    }
    int find(const std::string& content) const {
        for (const auto& s : sources_)
            if (s.content == content) return s.fd;
        return -1;
    }

private:
    struct Source {
        std::string content;
        int fd;
    };
    std::vector<Source> sources_;
};

// Makes the temporary directory and the placeholders. The directory is this
// sandbox's (`made`, and the reaper's copy); the placeholders are the root's
// group's, whose last sandbox removes them.
// `existing`: the group's placeholders, read under its mutex.
sbx::expected<void> make_leftovers(const sbx::Plan& plan, Reaper& reaper, RootGroup& group,
                                   const std::vector<sbx::RegisteredPlaceholder>& existing, std::vector<Leftover>& made) {
    auto record = [&](LeftoverKind kind, const std::string& path) {
        made.push_back({kind, path, 0, 0});
        reaper.made(made.back());
    };
    // Placeholders another sandbox of this root made are taken over as they are.
    // New file placeholders are hard links to one of the group's of the same
    // content: a link allocates no inode, and ext4 slows down sharply when inodes
    // are made and removed in quick succession. Every name is bound read-only.
    LinkSources sources;
    for (const auto& e : existing)
        if (e.kind == sbx::Placeholder::file) sources.offer(e);
    if (::mkdir(plan.tmpdir.c_str(), 0700) != 0)
        return sbx::fail(sbx::Error(sbx::Errc::stale_plan, std::string("cannot make the temporary directory: ") +
                                                               std::strerror(errno))
                             .in_file(plan.tmpdir));
    record(LeftoverKind::tmpdir, plan.tmpdir);
    for (const auto& ph : plan.filesystem.placeholders) {
        const bool taken_over = std::any_of(existing.begin(), existing.end(), [&](const sbx::RegisteredPlaceholder& e) {
            return e.path == ph.path && e.kind == ph.kind;
        });
        if (taken_over) continue;
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
            if (ph.kind == sbx::Placeholder::file || ph.kind == sbx::Placeholder::commondir) {
                const std::string content = sbx::placeholder_content(ph.kind, ph.path);
                const bool shared = ph.kind == sbx::Placeholder::file;  // a commondir names its own directory
                if (const int source = shared ? sources.find(content) : -1; source >= 0) {
                    const std::string from = "/proc/self/fd/" + std::to_string(source);
                    rc = ::linkat(AT_FDCWD, from.c_str(), dirfd, name.c_str(), AT_SYMLINK_FOLLOW);
                }
                if (rc < 0) {
                    // The first of its content, or one a link cannot reach (another
                    // filesystem): made whole before its name appears, so that no
                    // program outside ever reads a half-written one.
                    const int fd = make_whole_file(dirfd, name, content);
                    rc = fd;
                    if (fd >= 0) {
                        if (shared) sources.keep(content, fd);
                        ::close(fd);
                    }
                }
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
        const Leftover placeholder{leftover_kind(ph.kind), ph.path, made_st.st_dev, made_st.st_ino};
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

// Says what the audit after the command renamed (events now; lines in the
// <sandbox_violations> block, or here without one) and, loudly, what it could not
// look at or rename. The command's exit status stays as it is.
void report_audit(const GitAuditResult& audit, Report& report, bool in_block) {
    for (const auto& n : audit.neutralised) {
        report.git_neutralised_event(n);
        if (!in_block) std::cerr << "sbx-linux: " << sbx::git_audit_line(n) << "\n";
    }
    for (const auto& w : audit.warnings) {
        report.warning_event(w);
        std::cerr << "sbx-linux: warning: " << w << "\n";
    }
}

// The listening sockets the stage made inside: one per forward, then the
// proxy's HTTP and SOCKS ones; empty when the sandbox never got that far
// (bubblewrap failed, or the stage could not make one; its exit closes the
// socket). Whatever else arrives is closed.
std::vector<int> receive_listeners(int sock, std::size_t forwards) {
    const std::size_t want = forwards + 2;
    char byte = 0;
    iovec iov{&byte, 1};
    std::vector<char> control(CMSG_SPACE(want * sizeof(int)), 0);  // operator new aligns it for cmsghdr
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.data();
    msg.msg_controllen = control.size();
    ssize_t n;
    while ((n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC)) < 0 && errno == EINTR) {
    }
    std::vector<int> fds;
    const cmsghdr* cm = n == 1 ? CMSG_FIRSTHDR(&msg) : nullptr;
    if (cm != nullptr && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS && cm->cmsg_len >= CMSG_LEN(0)) {
        fds.resize((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
        std::memcpy(fds.data(), CMSG_DATA(cm), fds.size() * sizeof(int));
    }
    if (fds.size() == want && (msg.msg_flags & MSG_CTRUNC) == 0) return fds;
    for (int fd : fds) ::close(fd);
    return {};
}

int run_plan(int plan_fd, int report_fd, bool print_violations) {
    Report report(report_fd);
    g_report = &report;
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
    if (auto fds = check_pass_fds(*plan, {plan_fd, report_fd, g_control_fd}); !fds) {
        report.error_event(fds.error());
        return fail_before(fds.error());
    }

    ProbeOptions popt{plan->bwrap_path, !plan->allow_unix_sockets, false};
    auto probed = probe(popt);
    bool unavailable = !probed.available();
    sbx::Error unavailable_why = unavailable ? probed.why() : sbx::Error{};

    // The seccomp program; where it cannot be built, filter_fallback says whether
    // the plan runs without it.
    int seccomp_fd = -1;
    if (!unavailable) {
        auto program = seccomp_program(SeccompOptions{plan->allow_unix_sockets});
        const FilterRule& fallback = filter_fallback(*plan, program.has_value());
        switch (fallback.verdict) {
            case FilterVerdict::filtered: seccomp_fd = program->release(); break;
            case FilterVerdict::unfiltered:
                std::cerr << "sbx-linux: warning: no seccomp filter (" << sbx::to_string(program.error()) << "); "
                          << fallback.why << "\n";
                break;
            case FilterVerdict::unavailable:
                unavailable = true;
                unavailable_why =
                    sbx::Error(sbx::Errc::unavailable, "the sandbox cannot run here").caused_by(program.error());
                break;
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
        // No audit of gitAudit here: the command ran without any sandbox, as the
        // plan allowed, and could have written anything anywhere.
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
    // Before the command ran: remove what was made, say why, and give 125.
    auto give_up = [&](const sbx::Error& e) {
        clean_up(made, *reaper, &*group);
        return fail_before(e);
    };
    auto give_up_errno = [&](const std::string& what) {
        return give_up(sbx::Error(sbx::Errc::internal, what + ": " + std::strerror(errno)));
    };
    const auto group_placeholders = group->placeholders();
    if (auto other = RootGroup::foreign_group(*plan, group_placeholders)) {
        report.error_event(*other);
        return give_up(*other);
    }
    std::vector<std::string> group_paths;
    for (const auto& e : group_placeholders) group_paths.push_back(e.path);
    const sbx::HidingFs without_group(disk, std::move(group_paths));  // as the plan was made
    if (auto v = sbx::verify_plan(*plan, without_group); !v) {
        report.error_event(v.error());
        return give_up(v.error());
    }
    if (auto r = make_leftovers(*plan, *reaper, *group, group_placeholders, made); !r) {
        report.error_event(r.error());
        return give_up(r.error());
    }
    group->hold_placeholders(*plan);
    group->exclude_placeholders(*plan);
    group->unlock();

    // The stage's binary (sbx-stage beside us, else ourselves), and the status pipe.
    const int exe_fd = open_stage_binary();
    int status_pipe[2] = {-1, -1};
    if (exe_fd < 0 || ::pipe2(status_pipe, O_CLOEXEC) != 0) return give_up_errno("cannot set up the stage");

    StageArgs stage;
    stage.exe_fd = exe_fd;
    stage.status_fd = status_pipe[1];
    stage.filtered = seccomp_fd >= 0;
    stage.keep_fds = plan->pass_fds;
    for (const auto& v : plan->loader_env) stage.loader_env.push_back(v.name + "=" + v.value);
    stage.command = plan->argv;
    // With the block to append and standard error not a terminal (a program
    // reads it), or file refusals to read from it, the command's standard error
    // passes through relay_stderr.
    int err_pipe[2] = {-1, -1};
    const bool relay = plan->scan_stderr || (print_violations && ::isatty(STDERR_FILENO) == 0);
    if (relay && ::pipe2(err_pipe, O_CLOEXEC) != 0) return give_up_errno("pipe");
    std::optional<sbx::StderrScanner> scanner;
    if (plan->scan_stderr) scanner.emplace(plan->filesystem, plan->cwd);
    int proxy_pair[2] = {-1, -1};
    if (plan->network.mode == sbx::NetworkMode::proxy) {
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, proxy_pair) != 0) return give_up_errno("socketpair");
        stage.proxy_fd = proxy_pair[1];
        for (const auto& f : plan->network.forwards)
            stage.forwards.push_back({sbx::net::to_string(f.listen), f.port, f.why.empty() ? f.target : f.why});
    }

    // git inside reads the repository's exclude file with the placeholders added.
    int exclude_fd = -1;
    if (const auto& ex = plan->filesystem.git_exclude) {
        exclude_fd = ::memfd_create("sbx-git-exclude", MFD_CLOEXEC);  // the bubblewrap child clears it
        if (exclude_fd < 0 || !write_all(exclude_fd, ex->content.data(), ex->content.size()) ||
            ::lseek(exclude_fd, 0, SEEK_SET) != 0)
            return give_up_errno("cannot write the git exclude file");
    }
    // The whole command line (sbx/linux/bwrap.hpp), with what only this run knows.
    BwrapLaunch launch;
    launch.bwrap = probed.bwrap;
    if (seccomp_fd >= 0) launch.seccomp_fd = seccomp_fd;
    launch.group_dir = sbx::paths::parent(group->lock_path());
    for (const auto& e : group_placeholders) launch.group_placeholders.push_back(e.path);
    if (exclude_fd >= 0) launch.exclude_fd = exclude_fd;
    launch.stage_argv = stage_argv(stage);
    auto args = bwrap_args(*plan, launch);
    auto env = env_strings(*plan, false);

    std::vector<int> keep_fds = plan->pass_fds;
    for (int fd : {exe_fd, status_pipe[1], seccomp_fd, exclude_fd, proxy_pair[1]})
        if (fd >= 0) keep_fds.push_back(fd);
    // Whatever the command writes is stamped at or after this.
    const timespec run_start = audit_clock();
    const pid_t pid = ::fork();
    if (pid < 0) return give_up_errno("fork");
    if (pid == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::signal(sig, SIG_DFL);
        // bubblewrap and the stage get the descriptors they need and those the
        // plan passes to the command; nothing else the caller or this process
        // has open survives the exec.
        if (!sweep_fds(keep_fds, FdSweep::cloexec)) {
            std::fprintf(stderr, "sbx-linux: cannot close the descriptors the sandbox is not given: %s\n",
                         std::strerror(errno));
            ::_exit(kFailedBeforeCommand);
        }
        for (int fd : keep_fds) ::fcntl(fd, F_SETFD, 0);
        if (err_pipe[1] >= 0) ::dup2(err_pipe[1], STDERR_FILENO);
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
    std::thread stderr_relay;
    if (err_pipe[0] >= 0) {
        ::close(err_pipe[1]);
        stderr_relay = std::thread(relay_stderr, err_pipe[0], scanner ? &*scanner : nullptr, &report);
    }

    // The proxy: the stage hands over the listening sockets it made inside.
    std::unique_ptr<CommandProxy> proxy;
    if (proxy_pair[0] >= 0) {
        ::close(proxy_pair[1]);
        auto fds = receive_listeners(proxy_pair[0], plan->network.forwards.size());
        ::close(proxy_pair[0]);
        if (!fds.empty()) {
            const int socks_fd = fds.back();
            fds.pop_back();
            const int http_fd = fds.back();
            fds.pop_back();
            // While a question is on the terminal, every process of the sandbox's
            // PID namespace is stopped.
            auto started = CommandProxy::start(*plan, report, http_fd, socks_fd,
                                               [] { return stop_pid_namespace(g_sandbox_pid); }, fds);
            if (!started) {
                // The command would run without the network it was promised: stop it.
                std::cerr << "sbx-linux: " << sbx::errc_name(started.error().code) << ": "
                          << sbx::to_string(started.error()) << "\n";
                ::kill(pid, SIGKILL);
            } else {
                proxy = std::move(*started);
            }
        }
    }
    if (g_signal != 0) ::kill(pid, SIGKILL);  // a signal came before we knew the pid

    int wstatus = 0;
    while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
    }
    g_sandbox_pid = -1;
    if (proxy) proxy->stop();  // open questions are answered no
    // Every writer was inside the sandbox, whose processes ended with it.
    if (stderr_relay.joinable()) stderr_relay.join();
    auto bytes = sbx::read_all(status_pipe[0], 4096, "the stage's status pipe");
    ::close(status_pipe[0]);
    const StageReport stage_report = parse_stage_report(bytes ? *bytes : std::string());
    clean_up(made, *reaper, &*group);
    // Every process of the sandbox is gone: nothing can change what the audit renames.
    const auto audit = audit_git(plan->root, plan->filesystem.git_audit, run_start);
    report_audit(audit, report, print_violations);

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
    if (print_violations)
        std::cerr << violations_text(*plan, proxy ? proxy->refused() : std::vector<ProxyEvent>{},
                                     scanner ? &*scanner : nullptr, audit.neutralised)
                  << std::flush;
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
    g_program = "sbx-linux";
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
    bool doctor_mode = false, json = false, print_violations = false;
    std::string bwrap;
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
        } else if (a == "--doctor") {
            doctor_mode = true;
        } else if (a == "--json") {
            json = true;
        } else if (a == "--bwrap") {
            const char* v = next();
            if (v == nullptr) return usage("--bwrap needs a path");
            bwrap = v;
        } else if (a == "--help" || a == "-h") {
            std::cout << "usage: sbx-linux [--plan-fd N] [--report-fd N] [--control-fd N] [--again-fd N] [--violations]\n"
                         "                                                 run the plan read from fd N (default 0)\n"
                         "       sbx-linux --doctor [--json] [--bwrap PATH] can the sandbox run here\n"
                         "The plan is described in docs/plan.md.\n";
            return 0;
        } else {
            return usage("unknown argument '" + std::string(a) + "'");
        }
    }
    if (doctor_mode) return doctor(json, bwrap);
    if (json || !bwrap.empty()) return usage("--json and --bwrap go with --doctor");
    if (g_control_fd >= 0 && report_fd < 0) return usage("--control-fd answers questions asked on --report-fd: give both");
    try {
        return run_plan(plan_fd, report_fd, print_violations);
    } catch (const std::exception& e) {
        std::cerr << "sbx-linux: INTERNAL: " << e.what() << "\n";
        return kFailedBeforeCommand;
    }
}
