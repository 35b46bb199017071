// session.cpp - `sbx session start|stop|list` and `sbx run --session ID`
// (docs/sessions.md).
//
// `sbx session start` makes the plan `sbx run` would make for the root, with
// the session's fork server (launchers/stage/session_server.hpp) as its
// command, and leaves a holder process behind that carries that plan out and
// serves the session's control socket (launchers/linux/session_holder.hpp).
// It prints the session's id once the fork server runs, or what stopped it
// and 125. The other commands are clients of the control socket.
#if defined(__linux__)
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdlib>
#include <span>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sbx/core/paths.hpp"
#include "sbx/io/placeholder_registry.hpp"
#include "sbx/plan/output_filter.hpp"
#include "sbx/plan/plan_json.hpp"
#include "sbx/plan/read_plan.hpp"
#include "sbx/plan/report.hpp"
#include "sbx/plan/session_protocol.hpp"
#include "sbx/route/route.hpp"
#include "sbx/rules/env.hpp"

#include "answers.hpp"
#include "linux/git_audit.hpp"       // launchers/: the survey of the root's repositories
#include "cli_common.hpp"
#include "commands.hpp"
#include "compose.hpp"
#include "session_repos.hpp"

#include "base/fd_io.hpp"                // launchers/: owned descriptors
#include "base/own_executable.hpp"       // launchers/: the program the fork server is
#include "linux/platform.hpp"            // launchers/: the launcher's steps, which the holder runs
#include "linux/session_holder.hpp"      // launchers/: the control socket
#include "shared/common.hpp"             // launchers/: the block's lines for what the relays found
#include "shared/leftovers.hpp"          // launchers/: the reaper
#include "shared/terminal.hpp"           // launchers/: the command's terminal, relayed
#include "stage/session_server.hpp"      // launchers/: the fork server's flag
#include "stage/stage.hpp"               // launchers/: the stage's program

namespace sbx::cli {

namespace {

namespace proto = sbx::session;
using sbx::launcher::Fd;

// A session's id: 16 lowercase hexadecimal digits.
constexpr std::size_t kIdDigits = 16;

bool valid_id(const std::string& id) {
    return id.size() == kIdDigits && std::all_of(id.begin(), id.end(), [](char c) {
               return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
           });
}

int failed(const std::string& code, const std::string& message) {
    std::cerr << "sbx: " << code << ": " << message << "\n";
    return kRunFailed;
}

int say_failed(const sbx::Error& e) { return failed(std::string(sbx::errc_name(e.code)), sbx::to_string(e)); }

// Where this user's sessions are: each a folder `session-ID` among the root
// groups' lock files (sbx::placeholder_group_directory), which every sandbox
// covers with an empty folder, so no command sees a session's socket; and
// which goes, as theirs do, when the last thing in it goes. With `make`, the
// folder is made (sbx::make_group_directory checks it is this user's alone).
sbx::expected<std::string> sessions_directory(bool make) {
    if (make) return sbx::make_group_directory();
    return sbx::placeholder_group_directory();
}

constexpr std::string_view kSessionPrefix = "session-";

std::string session_folder(const std::string& dir, const std::string& id) {
    return dir + "/" + std::string(kSessionPrefix) + id;
}

std::string socket_path(const std::string& dir, const std::string& id) { return session_folder(dir, id) + "/control.sock"; }

// The session's plan, which its clients read the file refusals their
// command's standard error reports against (as sbx run's scanner does).
std::string plan_path(const std::string& dir, const std::string& id) { return session_folder(dir, id) + "/plan.json"; }

// A Unix stream socket connected to the session `id`'s control socket.
// `refused`, when given, is set where nothing listens on the socket.
sbx::expected<Fd> connect_session(const std::string& id, bool* refused = nullptr) {
    if (!valid_id(id))
        return sbx::fail(sbx::Error(sbx::Errc::invalid_argument,
                                    "not a session's id (16 hexadecimal digits, as sbx session start prints it)")
                             .at_key(id));
    auto dir = sessions_directory(false);
    SBX_TRY(dir);
    const std::string path = socket_path(*dir, id);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path)
        return sbx::fail(sbx::Error(sbx::Errc::unavailable, "the socket's path is too long").in_file(path));
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.ok() || ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        const int err = errno;
        if (refused != nullptr) *refused = err == ECONNREFUSED;
        return sbx::fail(sbx::Error(sbx::Errc::invalid_argument,
                                    "no session " + id + " runs" +
                                        (err == ENOENT || err == ECONNREFUSED ? std::string(" (sbx session list)")
                                                                              : std::string(": ") + std::strerror(err)))
                             .in_file(path));
    }
    return fd;
}

// Reads events from `fd` one line at a time.
class EventReader {
public:
    explicit EventReader(int fd) : fd_(fd) {}
    // The next event; nullopt at the end of the stream; an error for a line
    // that is no event.
    sbx::expected<std::optional<proto::Event>> next() {
        for (;;) {
            if (const auto nl = buf_.find('\n'); nl != std::string::npos) {
                const std::string line = buf_.substr(0, nl);
                buf_.erase(0, nl + 1);
                auto e = proto::parse_event(line);
                SBX_TRY(e);
                return std::optional<proto::Event>(std::move(*e));
            }
            if (buf_.size() >= proto::kMaxLine)
                return sbx::fail(sbx::Errc::invalid_argument, "the session sent a line too long");
            const ssize_t n = receive(0);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) return std::optional<proto::Event>();
        }
    }
    bool buffered() const { return buf_.find('\n') != std::string::npos; }
    // Takes what came without waiting; false at the end of the stream.
    bool take_waiting() {
        for (;;) {
            if (buf_.size() >= proto::kMaxLine) return true;  // next() says what is wrong
            const ssize_t n = receive(MSG_DONTWAIT);
            if (n > 0) continue;
            return n < 0 && (errno == EAGAIN || errno == EINTR);
        }
    }
    // Whether a line taken and not yet read ends command `id`: its exit, or an
    // error for it or for the session (not an answer that came too late).
    bool ends_buffered(std::string_view id) const {
        std::size_t at = 0;
        for (std::size_t nl; (nl = buf_.find('\n', at)) != std::string::npos; at = nl + 1) {
            const auto e = proto::parse_event(std::string_view(buf_).substr(at, nl - at));
            if (!e) return true;  // next() fails on it
            if ((e->kind == proto::EventKind::exit && e->id == id) ||
                (e->kind == proto::EventKind::error && e->code != kLateAnswer && (e->id.empty() || e->id == id)))
                return true;
        }
        return false;
    }
    // The code of the error event that answers an answer to a question no longer open.
    static constexpr std::string_view kLateAnswer = "NO_SUCH_QUESTION";
    // A descriptor that came with the lines read (a terminal's master, with
    // its `started`); none: not open.
    Fd take_fd() {
        if (fds_.empty()) return Fd();
        Fd fd = std::move(fds_.front());
        fds_.erase(fds_.begin());
        return fd;
    }

private:
    // One recvmsg() into the buffer, and the descriptors that came with it.
    ssize_t receive(int flags) {
        char chunk[4096];
        iovec iov{chunk, sizeof chunk};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))]{};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        const ssize_t n = ::recvmsg(fd_, &msg, MSG_CMSG_CLOEXEC | flags);
        if (n <= 0) return n;
        for (Fd& fd : sbx::launcher::rights_of(msg)) fds_.push_back(std::move(fd));
        buf_.append(chunk, static_cast<std::size_t>(n));
        return n;
    }

    int fd_;
    std::string buf_;
    std::vector<Fd> fds_;
};

bool send_line(int fd, const std::string& line, std::span<const int> fds = {}) {
    iovec iov{const_cast<char*>(line.data()), line.size()};
    const ssize_t n = sbx::launcher::send_with_fds(fd, std::span<iovec>(&iov, 1), fds);
    if (n < 0) return false;
    return static_cast<std::size_t>(n) == line.size() ||
           sbx::launcher::write_all(fd, line.data() + n, line.size() - static_cast<std::size_t>(n));
}

// ---- sbx session start ---------------------------------------------------------------

// What a file was: nothing there, or its identity, size and times.
struct Stamp {
    bool exists = false;
    dev_t dev = 0;
    ino_t ino = 0;
    off_t size = 0;
    timespec mtime{}, ctime{};
};

Stamp stamp_of(const std::string& path) {
    Stamp s;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return s;
    s.exists = true;
    s.dev = st.st_dev;
    s.ino = st.st_ino;
    s.size = st.st_size;
    s.mtime = st.st_mtim;
    s.ctime = st.st_ctim;
    return s;
}

bool same(const Stamp& a, const Stamp& b) {
    if (a.exists != b.exists) return false;
    if (!a.exists) return true;
    return a.dev == b.dev && a.ino == b.ino && a.size == b.size && a.mtime.tv_sec == b.mtime.tv_sec &&
           a.mtime.tv_nsec == b.mtime.tv_nsec && a.ctime.tv_sec == b.ctime.tv_sec && a.ctime.tv_nsec == b.ctime.tv_nsec;
}

// A settings or agent file the session's policy was made from (or would be):
// what it was when the settings were read and, where it was missing and is
// since a placeholder of the root's group (the session's own sandbox made
// it), that placeholder as made, which the policy reads as missing still.
struct Source {
    std::string path;
    Stamp read;
    std::optional<Stamp> placeholder;
};

// Notes the placeholders of the root's group among the missing sources.
void note_placeholders(std::vector<Source>& sources, const std::string& root) {
    auto group = sbx::GroupSnapshot::take(root);
    if (!group) return;  // then any file there counts as a change
    const auto paths = group->paths();
    group->release();
    for (auto& s : sources)
        if (!s.read.exists && std::find(paths.begin(), paths.end(), s.path) != paths.end())
            s.placeholder = stamp_of(s.path);
}

// The first source that changed since the settings were read, or nullopt.
std::optional<std::string> changed_source(const std::vector<Source>& sources) {
    for (const auto& s : sources) {
        const Stamp now = stamp_of(s.path);
        if (!same(s.read, now) && !(s.placeholder && same(*s.placeholder, now))) return s.path;
    }
    return std::nullopt;
}

// What a session's holder carries: the composed settings (for each
// command's route), the files they came from, and the id.
struct HolderState {
    std::string id;
    Composed composed;
    std::vector<Source> sources;
};

// Each command is routed as sbx run routes it: a line the agent file's shell
// skill blocks is refused, and so is one an excludedCommands pattern sends
// outside (a session runs nothing unconfined); a policy file that changed
// refuses every command until the session is started again.
std::optional<sbx::linux_sandbox::RunRefusal> refuse_run(const HolderState& h, const proto::RunRequest& run) {
    if (auto changed = changed_source(h.sources))
        return sbx::linux_sandbox::RunRefusal{
            "STALE_SESSION", *changed + " changed since the session started, so its policy may no longer be the "
                                        "settings': sbx session stop " + h.id + ", then sbx session start"};
    const std::string line = shell_words(run.argv);
    if (auto blocked = refuse_blocked(h.composed, line); !blocked)
        return sbx::linux_sandbox::RunRefusal{std::string(sbx::errc_name(blocked.error().code)), sbx::to_string(blocked.error())};
    if (const auto by = sbx::route::excluded_by(h.composed.policy, line))
        return sbx::linux_sandbox::RunRefusal{
            "OUTSIDE", line + " runs outside the sandbox by the settings (" + sbx::route::describe(*by) +
                           "), and a session runs nothing unconfined: run it with sbx run --unsandboxed"};
    return std::nullopt;
}

// The program the fork server is inside: sbx-stage beside this program, else this program.
std::string server_program() {
    std::string program = sbx::linux_sandbox::stage_binary_path();
    char* real = program.empty() ? nullptr : ::realpath(program.c_str(), nullptr);
    program = real != nullptr ? std::string(real) : sbx::launcher::own_executable();
    std::free(real);
    return program;
}

// The readiness pipe's first byte: 'R' ready, 'F' failed (then the exit status
// as text and a newline); what the holder said follows.
// What the holder has said on its standard error, the memfd `memfd`, since
// `said` bytes; `said` moves past it.
std::string said_since(int memfd, off_t& said) {
    struct stat st {};
    if (::fstat(memfd, &st) != 0 || st.st_size <= said) return {};
    std::string text(static_cast<std::size_t>(st.st_size - said), '\0');
    if (::pread(memfd, text.data(), text.size(), said) != static_cast<ssize_t>(text.size())) return {};
    said = st.st_size;
    return text;
}

void tell_starter(int pipe_fd, int memfd, char kind, int status, off_t& said) {
    std::string head(1, kind);
    if (kind == 'F') head += std::to_string(status) + "\n";
    head += said_since(memfd, said);
    (void)sbx::launcher::write_all(pipe_fd, head.data(), head.size());
}

// A command's environment from the one its run brings, as the session's plan
// was made of sbx session start's (sbx::command_environment: secrets and
// what the policy leaves out removed, the loader's variables last), with the
// names the session passes (--env) where the run has them; "NAME=VALUE" each.
sbx::expected<std::vector<std::string>> command_environment_of(const sbx::Policy& policy, const sbx::Plan& plan,
                                                               const std::vector<std::string>& passed,
                                                               const std::vector<std::pair<std::string, std::string>>& env) {
    std::vector<std::string> given, pass;
    for (const auto& [name, value] : env) given.push_back(name + "=" + value);
    for (const auto& name : passed)
        if (std::any_of(env.begin(), env.end(), [&](const auto& e) { return e.first == name; })) pass.push_back(name);
    const std::optional<std::string> cache = plan.tool_cache ? std::optional<std::string>(plan.tool_cache->path) : std::nullopt;
    auto made = sbx::command_environment(policy, sbx::EnvRequest{given, pass, plan.tmpdir, cache});
    SBX_TRY(made);
    std::vector<std::string> out;
    for (const auto* list : {&made->env, &made->loader})
        for (const auto& v : *list) out.push_back(v.name + "=" + v.value);
    return out;
}

// The holder: the launcher's steps for the plan whose command is the fork
// server, the control socket on a thread beside them; its standard error a
// memfd (`memfd`, its fd 2) read by the starter until the session is ready,
// and sent to the stop's client after. Returns the process's exit status.
// Over 80 lines: the session's whole life in the holder, in order; each step
// is a call, and the descriptors they share would otherwise travel as arguments.
int hold_session(SessionArgs& a, const std::string& id, const std::string& dir, Fd ready_pipe, int memfd, Fd owner) {
    const auto fail_start = [&](int status) {
        off_t said = 0;
        tell_starter(ready_pipe.get(), memfd, 'F', status, said);
        return status;
    };
    auto reaper = sbx::launcher::Reaper::start();
    if (!reaper) return fail_start(say_failed(reaper.error()));
    // The lock files' folder goes when its last file does: made again when
    // another's last run removed it between the two calls.
    const std::string session_dir = session_folder(dir, id);
    int made = -1;
    for (int attempt = 0; attempt < 100 && made != 0; ++attempt) {
        if (auto again = sessions_directory(true); !again) {
            reaper->dismiss();
            return fail_start(say_failed(again.error()));
        }
        made = ::mkdir(session_dir.c_str(), 0700);
        if (made != 0 && errno != ENOENT) break;
    }
    if (made != 0) {
        reaper->dismiss();
        std::cerr << "sbx: UNAVAILABLE: " << session_dir << ": " << std::strerror(errno) << "\n";
        return fail_start(kRunFailed);
    }
    reaper->made(sbx::launcher::Leftover{sbx::launcher::LeftoverKind::tmpdir, session_dir});
    struct RemoveDir {
        std::string path, parent;
        ~RemoveDir() {
            (void)sbx::launcher::remove_tree(path);
            ::rmdir(parent.c_str());  // when nothing else is there
        }
    } remove_dir{session_dir, dir};
    // The control socket, and the pair to the fork server (its end passed to it).
    const std::string path = socket_path(dir, id);
    Fd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    int pair[2] = {-1, -1};
    if (path.size() >= sizeof addr.sun_path || !listener.ok() ||
        (std::memcpy(addr.sun_path, path.c_str(), path.size() + 1),
         ::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) ||
        ::listen(listener.get(), 128) != 0 || ::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
        reaper->dismiss();
        std::cerr << "sbx: UNAVAILABLE: cannot make the session's sockets: " << std::strerror(errno) << "\n";
        return fail_start(kRunFailed);
    }
    Fd ours(pair[0]), theirs(pair[1]);
    // The plan: sbx run's for the root, the fork server its command.
    auto composed = compose(a.plan.settings, a.plan.home_root());
    if (!composed) {
        reaper->dismiss();
        return fail_start(say_failed(composed.error()));
    }
    std::vector<Source> sources;
    for (const auto& file : composed->sources) sources.push_back(Source{file, stamp_of(file), std::nullopt});
    // The answers held for the session (--answers) are policy too.
    if (!a.plan.answers.empty()) {
        const std::string answers = absolute(a.plan.answers);
        sources.push_back(Source{answers, stamp_of(answers), std::nullopt});
    }
    const std::string program = server_program();
    a.plan.command = {program, std::string(sbx::linux_sandbox::kServeSessionFlag), std::to_string(theirs.get())};
    a.plan.pass_fds = {theirs.get()};
    // The clients read their commands' standard error (against plan.json,
    // written only for that); the launcher has none of its own to read.
    const bool clients_scan = !a.plan.no_scan_stderr;
    a.plan.no_scan_stderr = true;
    a.plan.scan_stderr = false;
    auto plan = plan_for(*composed, a.plan);
    if (plan && plan->weaker_sandbox) {
        plan = sbx::fail(sbx::Error(sbx::Errc::unavailable,
                                    "a session needs bubblewrap's sandbox: in the weaker sandbox its commands would "
                                    "share this process's PID namespace, where the control socket tells them from "
                                    "its clients"));
    }
    if (plan && sbx::planned_access(plan->filesystem, program).kind == sbx::PlannedAccess::Kind::hidden)
        plan = sbx::fail(sbx::Error(sbx::Errc::unavailable,
                                    "the settings hide sbx's own program, which a session runs inside as its server")
                             .in_file(program));
    if (!plan) {
        composed->group->release();
        reaper->dismiss();
        return fail_start(say_failed(plan.error()));
    }
    // Each command gets proxy listeners of its own, for its refusals.
    const bool proxied = plan->network.mode == sbx::NetworkMode::proxy;
    if (proxied) plan->argv.emplace_back(sbx::linux_sandbox::kServeSessionProxied);
    // Each command's CPU time apart: the fork server outlives them (the
    // stage leaves the server's own unlimited).
    if (const auto& cpu = plan->limits[static_cast<std::size_t>(sbx::Limit::cpu)])
        plan->argv.insert(plan->argv.end(), {std::string(sbx::linux_sandbox::kServeSessionCpu), std::to_string(cpu->value)});
    if (clients_scan) {
        // What the clients read it for: not its environment, which may hold
        // what --env passed (a token), and is no file's to keep; only what
        // sbx set there itself (TMPDIR, the tool cache's), which the plan's
        // own checks expect.
        sbx::Plan kept = *plan;
        std::erase_if(kept.env, [&](const sbx::EnvVar& v) {
            return v.name != "TMPDIR" && !(kept.tool_cache && std::find(kept.tool_cache->set.begin(), kept.tool_cache->set.end(),
                                                                       v.name) != kept.tool_cache->set.end());
        });
        kept.loader_env.clear();
        const std::string text = sbx::to_json(kept);
        Fd out(::open(plan_path(dir, id).c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
        if (!out.ok() || !sbx::launcher::write_all(out.get(), text.data(), text.size())) {
            composed->group->release();
            reaper->dismiss();
            std::cerr << "sbx: UNAVAILABLE: " << plan_path(dir, id) << ": " << std::strerror(errno) << "\n";
            return fail_start(kRunFailed);
        }
    }
    composed->group->unlock();
    if (!a.quiet && !composed->policy.quiet.value && !a.plan.settings.root_given() && composed->root != composed->cwd)
        std::cerr << "sbx: root " << composed->root << ": " << sbx::root_why(composed->where) << "\n";
    HolderState state{id, std::move(*composed), std::move(sources)};
    // The control socket's thread: ready once the fork server runs.
    // Written on the holder's thread when the session is ready, read here once
    // the sandbox has ended: how much of the memfd the starter was given.
    off_t said = 0;
    std::atomic<bool> ready{false};
    sbx::linux_sandbox::HolderConfig config;
    config.root = state.composed.root;
    config.idle_seconds = a.idle;
    config.starter = std::move(owner);
    config.refuse = [&state](const proto::RunRequest& r) { return refuse_run(state, r); };
    // Each command's timeout, as sbx run's: the holder ends a command whose
    // time ran out (the session itself has none).
    if (const auto& timeout = plan->limits[static_cast<std::size_t>(sbx::Limit::timeout)]) {
        config.command_timeout = static_cast<int>(std::min<std::uint64_t>(timeout->value, INT_MAX));
        config.grace = a.grace;
        config.timeout_line = [limit = *timeout](bool killed) {
            return sbx::limit_line(sbx::Limit::timeout, limit, killed ? sbx::kTimedOutKilled : sbx::kTimedOut);
        };
    }
    const sbx::Plan& the_plan = *plan;
    config.signal_line = [&the_plan](int signal) { return sbx::limit_signal_line(the_plan, signal); };
    // A run's own hosts widen the session's call for that command, as sbx run
    // --allow-host widens a run's (sbx::net::decide_host).
    config.call = [&the_plan](const std::vector<std::string>& hosts) -> sbx::expected<sbx::net::HostCall> {
        sbx::net::HostCall call = the_plan.network.call;
        if (!call.hosts) call.hosts.emplace();
        for (const auto& h : hosts) {
            auto rule = sbx::net::call_host_rule(h);
            if (!rule) return sbx::fail(sbx::Error(rule.error()).at_key(h));
            call.hosts->push_back(std::move(*rule));
        }
        return call;
    };
    // Repositories made during the session: found, audited and protected
    // before the next command runs, as sbx run's next plan protects them.
    SessionRepositories repositories(state.composed, a.plan, the_plan, id, sbx::launcher::audit_clock());
    config.warnings = [&repositories] { return repositories.before_run(); };
    config.environment = [&state, &the_plan, &a](const proto::RunRequest& r) {
        return command_environment_of(state.composed.policy, the_plan, a.plan.pass_env, r.env);
    };
    int theirs_number = theirs.get();
    config.on_ready = [&] {
        ::close(theirs_number);  // the sandbox's now: its end closes with the sandbox
        // Settings that changed while the sandbox was made are stale already.
        note_placeholders(state.sources, state.composed.root);
        tell_starter(ready_pipe.get(), memfd, 'R', 0, said);
        ready_pipe.reset();
        ready.store(true, std::memory_order_release);
    };
    (void)theirs.release();
    auto holder = sbx::linux_sandbox::SessionHolder::start(std::move(listener), std::move(ours), std::move(config));
    if (!holder) {
        ::close(theirs_number);
        reaper->dismiss();
        return fail_start(say_failed(holder.error()));
    }
    sbx::linux_sandbox::LinuxPlatform platform;
    platform.set_program("sbx");
    sbx::linux_sandbox::LinuxPlatform::SessionHooks hooks;
    if (proxied) hooks.proxy = [&holder](sbx::launcher::CommandProxy* p) { (*holder)->serve_proxy(p); };
    hooks.refused = [&holder](const std::string& tag, const std::string& line) { (*holder)->refused(tag, line); };
    hooks.mounts = [&repositories](sbx::linux_sandbox::SessionMounts* m) { repositories.serve(m); };
    platform.session_hooks(std::move(hooks));
    sbx::launcher::Options o;
    o.plan_fd = -1;
    o.print_violations = true;
    o.pty = sbx::launcher::PtyMode::never;
    o.grace = a.grace;
    // Questions about hosts go to the client of the command that asks.
    o.asker = [&holder](const sbx::net::HostTarget& t, const std::string& tag) { return (*holder)->ask(t, tag); };
    sbx::launcher::Launcher launcher(platform, std::move(o));
    int status = kRunFailed;
    try {
        status = launcher.run_plan(*plan, std::move(*reaper));
    } catch (const std::exception& e) {
        std::cerr << "sbx: INTERNAL: " << e.what() << "\n";
    }
    state.composed.group->release();
    // Answers given for the session outlive it in the --answers file, as sbx run keeps them.
    if (!a.plan.answers.empty()) {
        std::vector<std::pair<sbx::net::HostTarget, sbx::launcher::Answer>> given;
        for (const auto& h : (*holder)->session_answers())
            if (auto t = sbx::net::canonical_target(h.host, h.port))
                given.emplace_back(std::move(*t), sbx::launcher::Answer{h.allow, sbx::launcher::AnswerScope::session});
        keep_answers(absolute(a.plan.answers), std::nullopt, given);
    }
    if (!ready.load(std::memory_order_acquire)) {
        (*holder)->finish({});
        if (::fcntl(theirs_number, F_GETFD) >= 0) ::close(theirs_number);
        return fail_start(status == 0 ? kRunFailed : status);
    }
    // What the launcher said after the session was ready, for the stop's client.
    std::cerr.flush();
    std::string closing = said_since(memfd, said);
    // The folder goes before the stop's client is let go: once `sbx session
    // stop` returns, nothing of the session is there.
    (void)sbx::launcher::remove_tree(session_dir);
    ::rmdir(dir.c_str());  // the lock files' folder, when nothing else is there
    (*holder)->finish(std::move(closing));
    return status;
}

}  // namespace

int run_session_start(SessionArgs& a) {
    // Its clients read their command's standard error where it is no terminal,
    // as sbx run does by default; that reading can be turned off, not widened.
    if (a.plan.scan_stderr) {
        std::cerr << "sbx: USAGE: sbx session start --scan-stderr: a session's clients read their command's standard "
                     "error where it is no terminal, and never a terminal (--no-scan-stderr turns it off)\n";
        return kRunFailed;
    }
    auto dir = sessions_directory(true);
    if (!dir) return say_failed(dir.error());
    std::array<unsigned char, kIdDigits / 2> bytes{};
    if (::getrandom(bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size()))
        return failed("INTERNAL", std::string("getrandom: ") + std::strerror(errno));
    std::string id;
    for (unsigned char b : bytes) {
        static constexpr char kHex[] = "0123456789abcdef";
        id += kHex[b >> 4];
        id += kHex[b & 15];
    }
    sbx::launcher::Pipe ready;
    if (!ready.open()) return failed("INTERNAL", std::string("pipe: ") + std::strerror(errno));
    // --owner: the process whose end ends the session, looked at now.
    Fd owner;
    if (a.owner > 0) {
        owner = Fd(static_cast<int>(::syscall(SYS_pidfd_open, a.owner, 0)));
        if (!owner.ok())
            return failed("INVALID_ARGUMENT", "--owner " + std::to_string(a.owner) + ": " + std::strerror(errno));
        ::fcntl(owner.get(), F_SETFD, FD_CLOEXEC);
    }
    std::cout.flush();
    std::cerr.flush();
    const pid_t pid = ::fork();
    if (pid < 0) return failed("INTERNAL", std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        // The holder: a session of its own, with no terminal; what it says
        // goes to a memfd, which the starter reads until the session is ready.
        ready.read.reset();
        ::setsid();
        const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        const int memfd = ::memfd_create("sbx-session-said", 0);
        if (null < 0 || memfd < 0 || ::dup2(null, 0) < 0 || ::dup2(null, 1) < 0 || ::dup2(memfd, 2) < 0) _exit(kRunFailed);
        ::close(null);
        std::_Exit(hold_session(a, id, *dir, std::move(ready.write), memfd, std::move(owner)));
    }
    ready.write.reset();
    std::string got;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(ready.read.get(), buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        got.append(buf, static_cast<std::size_t>(n));
    }
    if (!got.empty() && got.front() == 'R') {
        std::cerr << got.substr(1);
        std::cout << id << "\n";
        return kOk;
    }
    // It failed: what it said, and its status; the holder is gone or going.
    int status = kRunFailed;
    std::size_t text = 0;
    if (!got.empty() && got.front() == 'F') {
        const auto nl = got.find('\n');
        if (nl != std::string::npos) {
            status = std::atoi(got.substr(1, nl - 1).c_str());
            text = nl + 1;
        }
    } else {
        std::cerr << "sbx: INTERNAL: the session's holder ended before it was ready\n";
    }
    std::cerr << got.substr(std::min(text, got.size()));
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return status == 0 ? kRunFailed : status;
}

// ---- sbx session stop, list ----------------------------------------------------------

int run_session_stop(const SessionArgs& a) {
    auto fd = connect_session(a.id);
    if (!fd) return report(fd.error());
    proto::Request r;
    r.op = proto::Op::stop;
    if (!send_line(fd->get(), proto::request_line(r))) return failed("UNAVAILABLE", "the session did not take the stop");
    // The session's last lines, then the end of the stream once it is gone.
    EventReader events(fd->get());
    for (;;) {
        auto e = events.next();
        if (!e) return report(e.error());
        if (!*e) break;
        if ((*e)->kind == proto::EventKind::violation) std::cerr << (*e)->line << "\n";
        if ((*e)->kind == proto::EventKind::error) return failed((*e)->code, (*e)->message);
    }
    return kOk;
}

int run_session_expose(const SessionArgs& a) {
    auto fd = connect_session(a.id);
    if (!fd) return report(fd.error());
    proto::Request r;
    r.op = proto::Op::expose;
    r.port = a.port;
    r.listen = a.on;
    if (!send_line(fd->get(), proto::request_line(r))) return failed("UNAVAILABLE", "the session did not take the request");
    EventReader events(fd->get());
    auto e = events.next();
    if (!e) return report(e.error());
    if (!*e) return failed("SESSION_ENDED", "the session ended before it answered");
    if ((*e)->kind == proto::EventKind::error) return failed((*e)->code, (*e)->message);
    std::cout << "127.0.0.1:" << (*e)->listen << "\n";
    return kOk;
}

int run_session_list(const SessionArgs&) {
    auto dir = sessions_directory(false);
    if (!dir) return report(dir.error());
    DIR* d = ::opendir(dir->c_str());
    if (d == nullptr) return kOk;  // none yet
    std::vector<std::string> ids;
    while (const dirent* e = ::readdir(d)) {
        const std::string_view name = e->d_name;
        if (name.starts_with(kSessionPrefix) && valid_id(std::string(name.substr(kSessionPrefix.size()))))
            ids.emplace_back(name.substr(kSessionPrefix.size()));
    }
    ::closedir(d);
    std::sort(ids.begin(), ids.end());
    for (const auto& id : ids) {
        bool refused = false;
        auto fd = connect_session(id, &refused);
        if (!fd) {
            // Nothing has listened there for a while: a holder killed before
            // its reaper removed the folder. (A session just starting binds
            // and listens at once; a full backlog is no refusal.)
            struct stat st {};
            const std::string sock = socket_path(*dir, id);
            if (refused && ::lstat(sock.c_str(), &st) == 0 && st.st_mtime + 10 < ::time(nullptr))
                (void)sbx::launcher::remove_tree(session_folder(*dir, id));
            continue;
        }
        proto::Request r;
        r.op = proto::Op::status;
        if (!send_line(fd->get(), proto::request_line(r))) continue;
        EventReader events(fd->get());
        auto e = events.next();
        if (!e || !*e || (*e)->kind != proto::EventKind::status) continue;
        std::cout << id << "  " << (*e)->root << "  " << (*e)->commands << ((*e)->commands == 1 ? " command" : " commands")
                  << " running\n";
    }
    return kOk;
}

// ---- sbx run --session ---------------------------------------------------------------

namespace {

// The lines of a command's standard error that may report a file refused
// (sbx::may_be_file_refusal), at most kMax, and the first that says it met a
// limit (sbx::limit_sign) for each, for the block after it.
struct RefusalLines {
    static constexpr std::size_t kMax = 100;
    std::string line;  // the current one, so far
    std::vector<std::string> kept;

    void feed(std::string_view chunk) {
        for (char c : chunk) {
            if (c != '\n') {
                if (line.size() <= 4096) line += c;  // longer is read for nothing (StderrScanner)
                continue;
            }
            end_line();
        }
    }
    void end_line() {
        if (line.size() <= 4096) {
            if (kept.size() < kMax && sbx::may_be_file_refusal(line)) kept.push_back(line);
            else if (const auto l = sbx::limit_sign(line); l && !signed_[static_cast<std::size_t>(*l)]) {
                signed_[static_cast<std::size_t>(*l)] = true;
                kept.push_back(line);
            }
        }
        line.clear();
    }
    std::array<bool, sbx::kLimitCount> signed_{};
};

// The caller's standard streams, as the command gets them. Standard input
// goes as it is, but a terminal, relayed through a pipe: a session's command
// gets no terminal of the caller's (it could change its modes for good, or
// read what is typed after it ends). Standard output and error are always
// relayed, as `sbx run` relays them: each <sandbox_violations> tag the command
// writes comes out neutralised, so that only the block this client writes
// has tags that end in `>`; and into a terminal, OSC 52 (the clipboard) is
// dropped. Both to one file (2>&1): one pipe for both, to keep their order.
struct Relay {
    int ours = -1;    // the caller's descriptor: 0, 1 or 2
    Fd pipe_end;      // our end of the pipe
    std::string pending;  // read from 0, not yet written into the pipe
    bool open = false;
    std::optional<sbx::TerminalOutputFilter> terminal;  // output to a terminal
    sbx::TagNeutralizer tags;                            // output to anything else
    std::optional<RefusalLines> scanned;                 // standard error that is no terminal, as sbx run reads it
};

// Writes what the command wrote, filtered; false at the end of its stream.
// false also when the caller reads no more.
bool pass_on(Relay& r) {
    char buf[65536];
    const ssize_t n = ::read(r.pipe_end.get(), buf, sizeof buf);
    if (n < 0) return errno == EAGAIN || errno == EINTR;
    const std::string_view got(buf, static_cast<std::size_t>(n));
    if (r.scanned) {
        r.scanned->feed(got);
        if (n == 0) r.scanned->end_line();
    }
    const std::string out = n == 0 ? (r.terminal ? r.terminal->finish() : r.tags.finish())
                                   : (r.terminal ? r.terminal->feed(got) : r.tags.feed(got));
    return sbx::launcher::write_all(r.ours, out.data(), out.size()) && n > 0;
}

// Copies what the command wrote and is still in the pipe, without waiting.
void drain(Relay& r) {
    while (r.open) {
        if (!pass_on(r)) {
            r.open = false;
            r.pipe_end.reset();  // its writers get EPIPE, as they would from the caller's
            return;
        }
        pollfd p{r.pipe_end.get(), POLLIN, 0};
        if (::poll(&p, 1, 0) != 1) break;
    }
}

// The relays for those of 0-2 the command's terminal does not take (`on_tty`),
// and the descriptors the command gets for them (`passed`, by stream, and
// `theirs` owning the pipes' other ends); false with errno.
bool open_relays(std::array<Relay, 3>& relays, const std::array<bool, 3>& on_tty, int (&passed)[3],
                 std::vector<Fd>& theirs) {
    struct stat st[3]{};
    bool open[3];
    for (int i = 0; i < 3; ++i) open[i] = ::fstat(i, &st[i]) == 0;
    const bool merged = open[1] && open[2] && !on_tty[1] && !on_tty[2] && ::isatty(1) == 0 &&
                        st[1].st_dev == st[2].st_dev && st[1].st_ino == st[2].st_ino;
    for (int i = 0; i < 3; ++i) {
        if (on_tty[static_cast<std::size_t>(i)]) continue;
        if (!open[i]) {
            // A closed stream: the command gets /dev/null there.
            theirs.emplace_back(::open("/dev/null", O_RDWR | O_CLOEXEC));
            if (!theirs.back().ok()) return false;
            passed[i] = theirs.back().get();
            continue;
        }
        if (i == 0 && ::isatty(0) == 0) {
            passed[0] = 0;
            continue;
        }
        if (i == 2 && merged) {
            passed[2] = passed[1];
            continue;
        }
        int p[2];
        if (::pipe2(p, O_CLOEXEC) != 0) return false;
        Relay& rl = relays[static_cast<std::size_t>(i)];
        rl.ours = i;
        rl.open = true;
        rl.pipe_end = Fd(i == 0 ? p[1] : p[0]);
        theirs.emplace_back(i == 0 ? p[0] : p[1]);
        passed[i] = theirs.back().get();
        ::fcntl(rl.pipe_end.get(), F_SETFL, O_NONBLOCK);
        if (i > 0 && ::isatty(i) == 1) rl.terminal.emplace(false);
        // Standard error, or both where they share a pipe.
        if ((i == 2 || (i == 1 && merged)) && ::isatty(2) == 0) rl.scanned.emplace();
    }
    return true;
}

// The block's lines for the file refusals `lines` report, read against the
// session's plan with the command's directory, as sbx run's scanner reads, and
// for the processes and memory limits where the command said it met one
// (`limited` then says so).
std::vector<std::string> file_refusals(const std::string& session, const std::string& cwd, const RefusalLines& lines,
                                       bool& limited) {
    std::vector<std::string> out;
    auto dir = sessions_directory(false);
    if (lines.kept.empty() || !dir) return out;
    // Not there, or not readable: the session has ended meanwhile (its own block
    // has them), or was started with --no-scan-stderr.
    const std::string path = plan_path(*dir, session);
    const Fd in(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!in.ok()) return out;
    auto text = sbx::read_all(in.get(), std::size_t{64} << 20, "the session's plan");
    if (!text) return out;
    auto plan = sbx::parse_plan(*text, path);
    if (!plan) return out;
    sbx::StderrScanner scanner(plan->filesystem, cwd);
    for (const auto& l : lines.kept) scanner.feed(l + "\n");
    for (const auto& r : sbx::launcher::file_refusal_lines(*plan, scanner)) {
        for (std::size_t i = 0; i < r.times; ++i) out.push_back(r.line + r.hint);
    }
    for (const auto l : {sbx::Limit::processes, sbx::Limit::memory})
        if (auto line = sbx::limit_said_line(*plan, l, scanner.limit_sign_line(l)); !line.empty()) {
            out.push_back(std::move(line));
            limited = true;
        }
    return out;
}

// The block the client writes after the command: the session's refusals of
// the command, and what the relays found in its output (the terminal's, with one).
void write_block(std::vector<std::string> lines, const std::array<Relay, 3>& relays,
                 const sbx::launcher::TerminalRelay* terminal) {
    sbx::launcher::OutputFindings found;
    for (const Relay& r : relays) {
        found.forged_tags += r.tags.neutralised() + (r.terminal ? r.terminal->tags_neutralised() : 0);
        if (r.terminal && r.terminal->clipboard_refused() > 0) {
            found.clipboard_writes += r.terminal->clipboard_refused();
            found.clipboard_bytes = r.terminal->clipboard_bytes();
        }
    }
    if (terminal != nullptr) {
        found.forged_tags += terminal->forged_tags();
        found.clipboard_writes = terminal->clipboard_writes();
        found.clipboard_bytes = terminal->clipboard_bytes();
    }
    std::vector<std::size_t> times(lines.size(), 1);
    for (const auto& f : sbx::launcher::findings_lines(found)) {
        lines.push_back(f.line + f.hint);
        times.push_back(f.times);
    }
    const std::string block = sbx::violations_block(lines, times);
    std::cerr << (terminal != nullptr ? terminal->on_own_line(block) : block);
}

// After the command's first process ended: where something it left in the
// background still holds its standard output or error, a process of this
// one's goes on relaying those, as the caller's streams would have stayed
// open to it outside, until the last writer is gone or the caller reads no
// more (the writers then get EPIPE, as they would have). It leads a session
// of its own: the caller's terminal's signals are not for it.
void keep_relaying(std::array<Relay, 3>& relays) {
    relays[0].pipe_end.reset();  // the caller's input is the caller's again
    if (!relays[1].open && !relays[2].open) return;
    std::cout.flush();
    std::cerr.flush();
    if (::fork() != 0) return;  // the relays' pipes close with this process
    // Nothing but the caller's streams and the pipes: the control socket
    // closes, so the session sees this client gone.
    std::vector<int> keep{0, 1, 2};
    for (const Relay& r : relays)
        if (r.open) keep.push_back(r.pipe_end.get());
    if (!sbx::launcher::sweep_fds(keep, sbx::launcher::FdSweep::close)) std::_Exit(0);
    ::setsid();
    ::signal(SIGPIPE, SIG_IGN);
    // A SIGHUP for the caller's session (this process's parent led it: its end
    // hangs up its foreground group) is not for it: a terminal gone ends it by
    // EIO. Ignored before the signals are unblocked, one pending is dropped.
    ::signal(SIGHUP, SIG_IGN);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (;;) {
        pollfd p[2]{{relays[1].open ? relays[1].pipe_end.get() : -1, POLLIN, 0},
                    {relays[2].open ? relays[2].pipe_end.get() : -1, POLLIN, 0}};
        if (p[0].fd < 0 && p[1].fd < 0) break;
        if (::poll(p, 2, -1) < 0 && errno != EINTR) break;
        for (std::size_t i = 0; i < 2; ++i)
            if (p[i].revents != 0) drain(relays[i + 1]);
    }
    std::_Exit(0);
}

// A question about a host (an `ask` event), asked on the caller's terminal as
// sbx run asks its own (ask_on_terminal), and its answer sent back: no answer
// (no terminal, the command or the session ended first) is a deny. The command
// is not stopped meanwhile, and needs not be: it never holds the caller's
// terminal (its streams are this process's pipes, or a terminal of its own that
// this process relays), and this process relays nothing while the question is
// open, so nothing it does repaints the question or reads the answer.
void answer_question(int control, EventReader& events, const std::string& id, const proto::Event& ev) {
    std::optional<sbx::launcher::Answer> a;
    if (auto t = sbx::net::canonical_target(ev.host, static_cast<std::uint16_t>(ev.port)); t && ev.port > 0) {
        sbx::launcher::AnswerOffers offers;
        offers.session = "the session";
        a = sbx::launcher::ask_on_terminal(*t, {}, control, offers,
                                           [&] { return !events.take_waiting() || events.ends_buffered(id); });
    }
    proto::Request r;
    r.op = proto::Op::answer;
    r.id = id;
    r.ask = ev.ask;
    r.allow = a && a->allow;
    r.for_session = a && a->scope == sbx::launcher::AnswerScope::session;
    (void)send_line(control, proto::request_line(r));
}

}  // namespace

// Over 80 lines: the client's one poll loop (the session's events, the
// caller's signals, the relayed streams), each case a few lines.
int run_in_session(const RunArgs& a) {
    auto fd = connect_session(a.session);
    if (!fd) return say_failed(fd.error());
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr) return failed("UNAVAILABLE", std::string("getcwd: ") + std::strerror(errno));
    proto::Request r;
    r.op = proto::Op::run;
    r.id = "c" + std::to_string(::getpid());
    r.run.argv = a.plan.command;
    r.run.cwd = sbx::paths::normalize(cwd);
    // Its environment is this one's, as the session's policy makes it (a
    // variable set for this call reaches it, as under sbx run).
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string_view kv(*e);
        const auto eq = kv.find('=');
        if (eq == 0 || eq == std::string_view::npos) continue;
        const std::string name(kv.substr(0, eq));
        if (std::none_of(r.run.env.begin(), r.run.env.end(), [&](const auto& v) { return v.first == name; }))
            r.run.env.emplace_back(name, std::string(kv.substr(eq + 1)));
    }
    if (r.run.env.size() > proto::kMaxEnv || proto::request_line(r).size() > proto::kMaxLine)
        return failed("INVALID_ARGUMENT", "your environment (" + std::to_string(r.run.env.size()) +
                                              " variables) is larger than a session's run takes (" +
                                              std::to_string(proto::kMaxEnv) + " variables, " +
                                              std::to_string(proto::kMaxLine / 1024) + " KiB in all); sbx run takes it");
    // Asked about hosts no rule decides where it can ask: on the caller's terminal.
    r.run.asks = Fd(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY)).ok();
    std::array<Relay, 3> relays;
    int passed[3] = {0, 1, 2};
    std::vector<Fd> theirs;
    // Each of 0-2 that is a terminal: the command gets one of its own in its
    // place, which the session makes and this process relays, as sbx run
    // relays its own (terminal_use); the others are relayed, or passed on.
    const auto use = sbx::launcher::terminal_use(sbx::launcher::PtyMode::automatic, false);
    const bool terminal = use.has_value();
    std::optional<sbx::launcher::Reaper> reaper;
    std::unique_ptr<sbx::launcher::TerminalRelay> relay;
    if (terminal) {
        auto started = sbx::launcher::Reaper::start();  // gives the terminal its modes back should this die
        if (!started) return say_failed(started.error());
        reaper.emplace(std::move(*started));
        r.run.stdio = proto::Stdio::terminal;
        r.run.tty = use->replaces;
        winsize ws{};
        for (int t = 0; t < 3; ++t)
            if (use->replaces[static_cast<std::size_t>(t)] && ::ioctl(t, TIOCGWINSZ, &ws) == 0) {
                r.run.rows = std::min<unsigned>(ws.ws_row, proto::kMaxTerminalSide);
                r.run.cols = std::min<unsigned>(ws.ws_col, proto::kMaxTerminalSide);
                break;
            }
    }
    if (!open_relays(relays, terminal ? use->replaces : std::array<bool, 3>{}, passed, theirs))
        return failed("INTERNAL", std::string("pipe: ") + std::strerror(errno));
    // The descriptors that go with the line: one for each stream the terminal does not take.
    std::vector<int> sent;
    for (std::size_t i = 0; i < 3; ++i)
        if (!terminal || !use->replaces[i]) sent.push_back(passed[i]);
    struct Dismiss {
        std::optional<sbx::launcher::Reaper>& reaper;
        std::unique_ptr<sbx::launcher::TerminalRelay>& relay;
        ~Dismiss() {
            if (relay) relay->finish();
            if (reaper) reaper->dismiss();
        }
    } dismiss{reaper, relay};
    // Signals the caller gets go to the command's process group.
    sigset_t caught;
    sigemptyset(&caught);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) sigaddset(&caught, sig);
    ::sigprocmask(SIG_BLOCK, &caught, nullptr);
    Fd sigfd(::signalfd(-1, &caught, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!send_line(fd->get(), proto::request_line(r), sent))
        return failed("UNAVAILABLE", "the session did not take the command");
    theirs.clear();
    EventReader events(fd->get());
    std::vector<std::string> violations;
    const auto drain_all = [&] {
        for (std::size_t i = 1; i < 3; ++i) drain(relays[i]);
    };
    for (;;) {
        std::vector<pollfd> p{{fd->get(), POLLIN, 0}, {sigfd.get(), POLLIN, 0}};
        Relay& in = relays[0];
        if (in.open && in.pending.empty()) p.push_back({0, POLLIN, 0});
        else if (in.open) p.push_back({in.pipe_end.get(), POLLOUT, 0});
        else p.push_back({-1, 0, 0});
        for (std::size_t i = 1; i < 3; ++i) p.push_back({relays[i].open ? relays[i].pipe_end.get() : -1, POLLIN, 0});
        if (!events.buffered() && ::poll(p.data(), p.size(), -1) < 0 && errno != EINTR) break;
        if (p[1].revents != 0) {
            signalfd_siginfo si{};
            while (::read(sigfd.get(), &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
                proto::Request s;
                s.op = proto::Op::signal;
                s.id = r.id;
                s.signal = si.ssi_signo == SIGINT    ? proto::Signal::interrupt
                           : si.ssi_signo == SIGHUP  ? proto::Signal::hangup
                           : si.ssi_signo == SIGQUIT ? proto::Signal::quit
                                                     : proto::Signal::term;
                (void)send_line(fd->get(), proto::request_line(s));
            }
        }
        if (p[2].revents != 0 && in.open) {
            if (in.pending.empty()) {
                char buf[4096];
                const ssize_t n = ::read(0, buf, sizeof buf);
                if (n > 0) in.pending.assign(buf, static_cast<std::size_t>(n));
                else if (n == 0 || errno != EINTR) {
                    in.open = false;
                    in.pipe_end.reset();
                }
            } else {
                const ssize_t n = ::write(in.pipe_end.get(), in.pending.data(), in.pending.size());
                if (n > 0) in.pending.erase(0, static_cast<std::size_t>(n));
                else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                    in.open = false;
                    in.pipe_end.reset();
                }
            }
        }
        for (std::size_t i = 1; i < 3; ++i)
            if (p[2 + i].revents != 0) drain(relays[i]);
        if (p[0].revents == 0 && !events.buffered()) continue;
        auto e = events.next();
        if (!e) return say_failed(e.error());
        if (!*e) return failed("SESSION_ENDED", "the session ended before the command did");
        const proto::Event& ev = **e;
        if (ev.kind == proto::EventKind::violation) violations.push_back(ev.line);
        if (ev.kind == proto::EventKind::ask) answer_question(fd->get(), events, r.id, ev);
        if (ev.kind == proto::EventKind::warning) std::cerr << "sbx: warning: " << ev.message << "\n";
        if (ev.kind == proto::EventKind::error && ev.code == EventReader::kLateAnswer) continue;
        if (ev.kind == proto::EventKind::started && terminal && !relay) {
            Fd master = events.take_fd();
            if (!master.ok()) return failed("UNAVAILABLE", "the session sent no terminal with the command's start");
            relay = std::make_unique<sbx::launcher::TerminalRelay>(*use, std::move(master), *reaper);
            relay->start();
        }
        if (ev.kind == proto::EventKind::error) {
            drain_all();
            if (ev.code == "NOT_FOUND" || ev.code == "CANNOT_RUN") {
                std::cerr << "sbx: " << a.plan.command.front() << ": " << ev.message << "\n";
                return ev.code == "NOT_FOUND" ? 127 : 126;
            }
            return failed(ev.code, ev.message);
        }
        if (ev.kind != proto::EventKind::exit) continue;
        drain_all();
        Fd master;
        if (relay) master = relay->release_master();  // its last output written, the caller's modes back
        bool limited = false;  // the command said it met the processes or memory limit
        for (const Relay& rl : relays)
            if (rl.scanned)
                for (auto& line : file_refusals(a.session, r.run.cwd, *rl.scanned, limited))
                    violations.push_back(std::move(line));
        write_block(std::move(violations), relays, relay.get());
        if (master.ok() && (use->output_fd == 1 || use->output_fd == 2)) {
            // What it left in the background on its terminal writes there
            // still, as a job of your shell does: relayed as its pipes are
            // (a terminal no process holds any more reads EIO: nothing to keep).
            Relay& out = relays[static_cast<std::size_t>(use->output_fd)];
            out.ours = use->output_fd;
            out.pipe_end = std::move(master);
            out.open = true;
            out.terminal.emplace(false);
            ::fcntl(out.pipe_end.get(), F_SETFL, O_NONBLOCK);
            drain(out);
        }
        keep_relaying(relays);
        const int status = ev.signal != 0 ? 128 + ev.signal : ev.status;
        // A command that failed after saying so was ended by the limit, as sbx run has it.
        return limited && status != 0 ? sbx::kLimitStatus : status;
    }
    return failed("UNAVAILABLE", std::string("poll: ") + std::strerror(errno));
}

}  // namespace sbx::cli

#else  // sessions are built on Linux alone: every subcommand says so.
#include <iostream>

#include "cli_common.hpp"
#include "commands.hpp"

namespace sbx::cli {

namespace {
int not_here() {
    std::cerr << "sbx: UNAVAILABLE: sessions are built on Linux only (docs/sessions.md)\n";
    return kRunFailed;
}
}  // namespace

int run_session_start(SessionArgs&) { return not_here(); }
int run_session_stop(const SessionArgs&) { return not_here(); }
int run_session_list(const SessionArgs&) { return not_here(); }
int run_session_expose(const SessionArgs&) { return not_here(); }
int run_in_session(const RunArgs&) { return not_here(); }

}  // namespace sbx::cli
#endif
