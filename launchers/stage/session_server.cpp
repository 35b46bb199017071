#include "stage/session_server.hpp"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd_io.hpp"
#include "base/session_wire.hpp"
#include "sbx/net/proxy_env.hpp"

extern char** environ;

namespace sbx::linux_sandbox {

namespace {

namespace wire = sbx::launcher::session_wire;
using sbx::launcher::Fd;

// How long the session's processes have after SIGTERM before the sandbox ends.
constexpr int kEndGraceMs = 2000;

// The most commands whose process groups live at once (each holds a folder
// and two listeners); a run beyond it is refused with EAGAIN.
// (The holder keeps their listeners open: 256 keeps it well within the
// usual 1,024 descriptors, with its clients'.)
constexpr std::size_t kMaxLive = 256;
// How deep remove_tree goes; the launcher removes what is deeper with the
// session's temporary folder when the session ends.
constexpr int kMaxRemoveDepth = 128;

// Removes what `dirfd` holds, then (by name) the entry `name` in `parent`. Run
// inside the sandbox: whatever the commands made of the folder, this process
// reaches only what they could.
void remove_tree_at(int parent, const char* name, int depth) {
    if (::unlinkat(parent, name, 0) == 0 || errno == ENOENT) return;
    int fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    // A folder made unreadable (chmod 000) is its owner's to open again.
    if (fd < 0 && errno == EACCES && ::fchmodat(parent, name, 0700, 0) == 0)
        fd = ::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || depth > kMaxRemoveDepth) {
        if (fd >= 0) ::close(fd);
        return;
    }
    ::fchmod(fd, 0700);  // a folder made unwritable empties all the same
    DIR* d = ::fdopendir(fd);
    if (d == nullptr) {
        ::close(fd);
        return;
    }
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
    for (const auto& n : names) remove_tree_at(::dirfd(d), n.c_str(), depth + 1);
    ::closedir(d);
    ::unlinkat(parent, name, AT_REMOVEDIR);
}

// A connection to `port` of the sandbox's loopback, 127.0.0.1 or else ::1 (a
// server that listens on "localhost" may have taken either), for the holder
// to relay a client of an exposed port to; -1 with errno. Its answer is
// waited for up to kConnectWaitMs (the connect broker decides each connect()
// first); a connection still in progress then is the relay's to finish.
constexpr int kConnectWaitMs = 250;
Fd connect_inside(int port) {
    for (const int family : {AF_INET, AF_INET6}) {
        Fd fd(::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
        if (!fd.ok()) return fd;
        sockaddr_storage ss{};
        socklen_t len = 0;
        if (family == AF_INET) {
            auto* in = reinterpret_cast<sockaddr_in*>(&ss);
            in->sin_family = AF_INET;
            in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
            in->sin_port = htons(static_cast<std::uint16_t>(port));
            len = sizeof *in;
        } else {
            auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss);
            in6->sin6_family = AF_INET6;
            in6->sin6_addr = in6addr_loopback;
            in6->sin6_port = htons(static_cast<std::uint16_t>(port));
            len = sizeof *in6;
        }
        int err = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&ss), len) == 0 ? 0 : errno;
        if (err == EINPROGRESS) {
            pollfd p{fd.get(), POLLOUT, 0};
            socklen_t size = sizeof err;
            if (::poll(&p, 1, kConnectWaitMs) != 1) return fd;
            if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &size) != 0) err = errno;
        }
        if (err == 0) return fd;
        errno = err;
        if (err != ECONNREFUSED && err != EADDRNOTAVAIL && err != EAFNOSUPPORT) return Fd();
    }
    errno = ECONNREFUSED;
    return Fd();
}

// What a command has of its own beside its processes: its temporary folder
// and its proxy's listeners (which the holder's proxy serves, tagged with the
// command's pid). `env` is the server's environment with both put in.
struct Own {
    std::string tmpdir;
    Fd http, socks;
    std::vector<std::string> env;
};

// `name`=`value` in `env`, in place of any there.
void put_env(std::vector<std::string>& env, const std::string& name, const std::string& value) {
    const std::string prefix = name + "=";
    std::erase_if(env, [&](const std::string& e) { return e.compare(0, prefix.size(), prefix) == 0; });
    env.push_back(prefix + value);
}

// A command's own folder in the session's TMPDIR, and its own listeners where
// the session has a proxy, put in `env` (its own, or this process's where
// empty); errno's value when either cannot be made.
int make_own(bool proxied, std::vector<std::string> env, Own& out) {
    out.env = std::move(env);
    if (out.env.empty())
        for (char** e = environ; *e != nullptr; ++e) out.env.emplace_back(*e);
    if (const char* base = std::getenv("TMPDIR"); base != nullptr && base[0] == '/') {
        std::string t = std::string(base) + "/cmd.XXXXXX";
        if (::mkdtemp(t.data()) == nullptr) return errno;
        out.tmpdir = t;
        put_env(out.env, "TMPDIR", t);
    }
    if (proxied) {
        std::uint16_t http = 0, socks = 0;
        out.http = sbx::launcher::listen_on_loopback(0, http);
        out.socks = sbx::launcher::listen_on_loopback(0, socks);
        if (!out.http.ok() || !out.socks.ok()) return errno != 0 ? errno : EMFILE;
        const char* no_proxy = std::getenv("NO_PROXY");
        const bool direct = no_proxy != nullptr && no_proxy == sbx::net::kDirectLoopback;
        for (const auto& [name, value] : sbx::net::proxy_environment(http, socks, {}, direct)) put_env(out.env, name, value);
    }
    return 0;
}

// A terminal for a command ('T'): its master, and the path of its other side
// on the sandbox's own devpts, which the command opens as its session's
// controlling terminal. errno's value when it cannot be made.
int open_terminal(Fd& master, std::string& slave) {
    master = Fd(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
    char name[64];
    if (!master.ok() || ::unlockpt(master.get()) != 0 || ::ptsname_r(master.get(), name, sizeof name) != 0) return errno;
    slave = name;
    return 0;
}

// A run's frame, read: 'R' ID CWD N ENV... ARG... with three descriptors, or
// 'T' MASK ID CWD N ENV... ARG... with one for each of 0-2 that MASK leaves to
// them (base/session_wire.hpp). nullopt: not such a frame (the holder's mistake).
struct RunFrame {
    std::string id, cwd;
    std::vector<std::string> env, argv;  // env: empty for the server's own
    bool terminal = false;
    std::array<bool, 3> tty{};  // 'T': which of 0-2 the terminal takes
    std::vector<int> fds;       // the descriptors sent, in order
};

std::optional<RunFrame> read_run(const wire::Frame& f) {
    RunFrame r;
    std::size_t at = 0;
    if (f.kind == 'T') {
        if (f.words.empty() || f.words[0].size() != 3) return std::nullopt;
        for (std::size_t i = 0; i < 3; ++i) r.tty[i] = f.words[0][i] == '1';
        r.terminal = true;
        at = 1;
    } else if (f.kind != 'R') {
        return std::nullopt;
    }
    // ID CWD N ENV... ARG..., ARG... not empty.
    if (f.words.size() < at + 4) return std::nullopt;
    const std::size_t n = std::strtoul(f.words[at + 2].c_str(), nullptr, 10);
    if (n > f.words.size() - at - 4) return std::nullopt;
    r.id = f.words[at];
    r.cwd = f.words[at + 1];
    r.env.assign(f.words.begin() + static_cast<std::ptrdiff_t>(at + 3), f.words.begin() + static_cast<std::ptrdiff_t>(at + 3 + n));
    r.argv.assign(f.words.begin() + static_cast<std::ptrdiff_t>(at + 3 + n), f.words.end());
    for (const Fd& fd : f.fds) r.fds.push_back(fd.get());
    const auto wanted = static_cast<std::size_t>(r.terminal ? std::count(r.tty.begin(), r.tty.end(), false) : 3);
    if (r.fds.size() != wanted || (r.terminal && wanted == 3)) return std::nullopt;
    return r;
}

// `argv` and `env` as the NULL-ended arrays exec takes, pointing into them.
std::vector<char*> c_array(const std::vector<std::string>& words) {
    std::vector<char*> out;
    for (const auto& w : words) out.push_back(const_cast<char*>(w.c_str()));
    out.push_back(nullptr);
    return out;
}

// A run with its three descriptors, started with `env`: the command's pid
// (the leader of a session and process group of its own), or the error
// posix_spawn gave.
int spawn_command(const RunFrame& run, const std::vector<std::string>& env, pid_t& pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    if (posix_spawn_file_actions_init(&actions) != 0) return ENOMEM;
    if (posix_spawnattr_init(&attr) != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return ENOMEM;
    }
    int err = 0;
    // dup2 onto 0-2 clears close-on-exec, even where a descriptor already has
    // that number; then everything above is closed.
    for (int target = 0; target < 3 && err == 0; ++target)
        err = posix_spawn_file_actions_adddup2(&actions, run.fds[static_cast<std::size_t>(target)], target);
    if (err == 0) err = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (err == 0) err = posix_spawn_file_actions_addchdir_np(&actions, run.cwd.c_str());
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if (err == 0) err = posix_spawnattr_setsigmask(&attr, &none);
    if (err == 0) err = posix_spawnattr_setsigdefault(&attr, &all);
    if (err == 0) err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    auto argv = c_array(run.argv);
    auto envp = c_array(env);
    if (err == 0) err = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return err;
}

// The first of 0-2 the terminal is on (a terminal's run has one at least):
// the descriptor its foreground is handed with.
int terminal_stream(const RunFrame& run) { return run.tty[0] ? 0 : run.tty[1] ? 1 : 2; }

// In the leader of a terminal's session (start_in_terminal): the command's
// process, which takes the terminal's foreground (as the leader gives it: the
// first of the two to run does), resets what the leader set, and executes the
// command; on failure it writes errno's value on `report` (close-on-exec: the
// leader reads nothing when the exec worked).
[[noreturn]] void become_command(const RunFrame& run, const std::vector<std::string>& env, int report) {
    ::setpgid(0, 0);
    ::tcsetpgrp(terminal_stream(run), ::getpid());  // SIGTTOU is ignored still, as in the leader
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    auto argv = c_array(run.argv);
    auto envp = c_array(env);
    if (::chdir(run.cwd.c_str()) == 0) ::execvpe(argv[0], argv.data(), envp.data());
    const int err = errno;
    (void)!::write(report, &err, sizeof err);
    ::_exit(127);
}

// The leader of a terminal's session (start_in_terminal): once the command
// runs, its pid and the command's go on `report` (a failure before: -1 and
// errno's value, and the leader ends), then it waits for the command, takes
// the foreground back, and ends as the command ended.
[[noreturn]] void lead_terminal(const RunFrame& run, const std::string& slave, const std::vector<std::string>& env,
                                int report) {
    int to = report;
    const auto fail = [&](int err) {
        const int words[2] = {-1, err};
        (void)!::write(to, words, sizeof words);
        ::_exit(127);
    };
    // Nothing the server holds but `report` and the run's descriptors; none of
    // the terminal's job-control signals stop or end the leader (the command
    // gets them, in the foreground).
    const int kept = ::fcntl(report, F_DUPFD_CLOEXEC, 3);
    if (kept < 0 || ::setsid() < 0) fail(errno);
    for (int sig : {SIGHUP, SIGINT, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU}) ::signal(sig, SIG_IGN);
    const int tty = ::open(slave.c_str(), O_RDWR);  // the session's controlling terminal
    if (tty < 0) fail(errno);
    // The terminal on the streams it takes, the descriptors sent on the others
    // (all above 2: 0-2 are the server's /dev/null).
    std::size_t sent = 0;
    for (std::size_t target = 0; target < 3; ++target)
        if (::dup2(run.tty[target] ? tty : run.fds[sent++], static_cast<int>(target)) < 0) fail(errno);
    if (kept != 3 && ::dup2(kept, 3) < 0) fail(errno);
    to = 3;
    ::fcntl(3, F_SETFD, FD_CLOEXEC);
    ::close_range(4, ~0U, 0);
    int exec_pipe[2];
    if (::pipe2(exec_pipe, O_CLOEXEC) != 0) fail(errno);
    const pid_t command = ::fork();
    if (command < 0) fail(errno);
    if (command == 0) become_command(run, env, exec_pipe[1]);
    ::close(exec_pipe[1]);
    ::setpgid(command, command);
    const int on = terminal_stream(run);
    ::tcsetpgrp(on, command);
    // Nothing comes when the exec closed the pipe; errno's value when it failed.
    int err = 0;
    ssize_t n;
    while ((n = ::read(exec_pipe[0], &err, sizeof err)) < 0 && errno == EINTR) {
    }
    if (n == static_cast<ssize_t>(sizeof err)) fail(err);
    const int words[2] = {::getpid(), command};
    (void)!::write(3, words, sizeof words);
    ::close(3);
    ::close(exec_pipe[0]);
    int status = 0;
    while (::waitpid(command, &status, 0) < 0 && errno == EINTR) {
    }
    // Its own group in the foreground as it ends: the SIGHUP a session
    // leader's end sends the foreground group reaches no process of the command's.
    ::tcsetpgrp(on, ::getpgrp());
    if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
    const int sig = WTERMSIG(status);
    ::signal(sig, SIG_DFL);
    sigset_t just;
    sigemptyset(&just);
    sigaddset(&just, sig);
    ::sigprocmask(SIG_UNBLOCK, &just, nullptr);
    ::kill(::getpid(), sig);  // undumpable, as the server is: no core is written
    ::_exit(128 + sig);
}

// A command on a terminal of its own, run as a shell runs a job: a leader
// (a fork of this process) makes a new session whose controlling terminal is
// `slave` and starts the command in a process group of its own in the
// terminal's foreground; it waits for the command, takes the foreground back
// and ends as the command ended. So the command's end hangs nothing up: what
// it left in the background goes on, as after a job of your shell (were the
// command the session's leader, its end would send SIGHUP to its own group).
// The leader's pid (the one to wait for) and the command's (its group's id),
// or errno's value: of the fork, the terminal, or the command's exec.
int start_in_terminal(const RunFrame& run, const std::string& slave, const std::vector<std::string>& env,
                      pid_t& leader, pid_t& pid) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return errno;
    Fd in(fds[0]), out(fds[1]);
    const pid_t child = ::fork();
    if (child < 0) return errno;
    if (child == 0) lead_terminal(run, slave, env, out.get());
    out.reset();
    // The leader's pid and the command's, or -1 and errno's value. A leader
    // that failed is reaped with the others.
    int words[2] = {0, 0};
    ssize_t n;
    while ((n = ::read(in.get(), words, sizeof words)) < 0 && errno == EINTR) {
    }
    if (n != static_cast<ssize_t>(sizeof words)) return EIO;  // the leader died first
    if (words[0] < 0) return words[1];
    leader = child;
    pid = words[1];
    return 0;
}

// Whether any process but the sandbox's init and this one is left.
bool others_left() {
    DIR* d = ::opendir("/proc");
    if (d == nullptr) return false;
    const pid_t self = ::getpid();
    bool found = false;
    while (const dirent* e = ::readdir(d)) {
        char* end = nullptr;
        const long pid = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0') continue;
        if (pid != 1 && pid != self) {
            found = true;
            break;
        }
    }
    ::closedir(d);
    return found;
}

// The end of the session: SIGTERM to every process this one may signal, then
// a moment for them to go (reaping its own children meanwhile).
void end_session() {
    ::kill(-1, SIGTERM);
    for (int waited = 0; waited < kEndGraceMs && others_left(); waited += 10) {
        while (::waitpid(-1, nullptr, WNOHANG) > 0) {
        }
        const timespec ms{0, 10'000'000};
        ::nanosleep(&ms, nullptr);
    }
}

class Server {
public:
    Server(int sock, bool proxied, std::uint64_t cpu) : sock_(sock), proxied_(proxied), cpu_(cpu) {}

    // Serves until the holder asks for the end or is gone, or SIGTERM, SIGINT
    // or SIGHUP comes: each ends the session. While a command's first process
    // has ended and its group has not, its group is looked at every second.
    void serve(int sigfd) {
        pollfd fds[2]{{sock_, POLLIN, 0}, {sigfd, POLLIN, 0}};
        for (;;) {
            const bool lingering = std::any_of(live_.begin(), live_.end(), [](const auto& c) { return !c.second.running; });
            const int n = ::poll(fds, 2, lingering ? 1000 : -1);
            if (n < 0) {
                if (errno == EINTR) continue;
                return;
            }
            if (n == 0) release_ended();
            if ((fds[1].revents & POLLIN) != 0) {
                signalfd_siginfo si{};
                while (::read(sigfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si))
                    if (si.ssi_signo != SIGCHLD) return;  // TERM, INT, HUP: the session ends
                reap();
            }
            if (fds[0].revents != 0) {
                wire::Frame f;
                const auto got = wire::read_frame(sock_, f);
                // A run whose descriptors were lost (no room for them here) is refused.
                if (got == wire::ReadResult::truncated) {
                    const std::size_t id = f.kind == 'T' ? 1 : 0;  // after a terminal's MASK
                    if (f.words.size() > id) say('E', {f.words[id], std::to_string(EMFILE)});
                    continue;
                }
                if (got != wire::ReadResult::frame || f.kind == 'Q') return;
                take(f);
            }
        }
    }

private:
    void say(char kind, std::initializer_list<std::string> words) {
        const std::vector<std::string> w(words);
        (void)wire::send_frame(sock_, kind, w);
    }

    void take(const wire::Frame& f) {
        if (f.kind == 'R' || f.kind == 'T') {
            const auto run = read_run(f);
            if (!run) return;
            Own own;
            int err = live_.size() >= kMaxLive ? EAGAIN : make_own(proxied_, run->env, own);
            Fd master;
            std::string slave;
            if (err == 0 && run->terminal) err = open_terminal(master, slave);
            pid_t pid = -1, leader = 0;
            if (err == 0)
                err = run->terminal ? start_in_terminal(*run, slave, own.env, leader, pid) : spawn_command(*run, own.env, pid);
            if (err != 0) {
                if (!own.tmpdir.empty()) remove_tree_at(AT_FDCWD, own.tmpdir.c_str(), 0);
                say('E', {run->id, std::to_string(err)});
                return;
            }
            // Its CPU time, as the stage limits a one-shot run's: SIGXCPU, then
            // SIGKILL two seconds of CPU later. Set as it starts (it may have
            // run for a moment without it: no more than that moment).
            if (cpu_ > 0) {
                const rlimit cpu{static_cast<rlim_t>(cpu_), static_cast<rlim_t>(cpu_ + 2)};
                if (::prlimit(pid, RLIMIT_CPU, &cpu, nullptr) != 0) {
                    const int failed = errno;
                    ::kill(-pid, SIGKILL);
                    if (!own.tmpdir.empty()) remove_tree_at(AT_FDCWD, own.tmpdir.c_str(), 0);
                    say('E', {run->id, std::to_string(failed)});
                    return;
                }
            }
            live_[pid] = Command{run->id, std::move(own.tmpdir), true, own.http.ok(), leader};
            const int m = master.get();
            (void)wire::send_frame(sock_, 'S', std::vector<std::string>{run->id, std::to_string(pid)},
                                   std::span<const int>(&m, master.ok() ? 1 : 0));
            // After its 'S', so that the holder knows whose they are (clients
            // wait in their backlog meanwhile).
            if (own.http.ok()) {
                const int listeners[] = {own.http.get(), own.socks.get()};
                (void)wire::send_frame(sock_, 'L', std::vector<std::string>{std::to_string(pid)}, listeners);
            }
            return;
        }
        if (f.kind == 'C' && f.words.size() == 2) {
            const int port = std::atoi(f.words[1].c_str());
            Fd c = port > 0 && port < 65536 ? connect_inside(port) : Fd();
            const int err = errno;
            if (!c.ok()) return say('D', {f.words[0], std::to_string(err)});
            const int fd = c.get();
            (void)wire::send_frame(sock_, 'D', std::vector<std::string>{f.words[0]}, std::span<const int>(&fd, 1));
            return;
        }
        if (f.kind == 'K' && f.words.size() == 2) {
            const int sig = std::atoi(f.words[1].c_str());
            for (const auto& [pid, c] : live_)
                if (c.id == f.words[0] && c.running && sig > 0 && sig < 65) ::kill(-pid, sig);
        }
        // Anything else is the holder's mistake: it is not answered.
    }

    // Every child that ended, told to the holder by its command's id; then
    // what of the ended commands' is no longer used.
    void reap() {
        int status = 0;
        pid_t pid;
        while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
            // A terminal's command ends with its leader, which ends as it did.
            auto it = std::find_if(live_.begin(), live_.end(), [&](const auto& c) {
                return c.second.leader == 0 ? c.first == pid : c.second.leader == pid;
            });
            if (it == live_.end() || !it->second.running) continue;
            say('X', {it->second.id, std::to_string(status)});
            it->second.running = false;
        }
        release_ended();
    }

    // A command's folder and listeners go when the last process of its group
    // has: what it left in the background keeps them until then. (A pid stays
    // taken while it names a group, so the number is still this group's.)
    void release_ended() {
        for (auto it = live_.begin(); it != live_.end();) {
            if (it->second.running || ::kill(-it->first, 0) == 0 || errno != ESRCH) {
                ++it;
                continue;
            }
            if (!it->second.tmpdir.empty()) remove_tree_at(AT_FDCWD, it->second.tmpdir.c_str(), 0);
            if (it->second.listeners) say('G', {std::to_string(it->first)});
            it = live_.erase(it);
        }
    }

    struct Command {
        std::string id;
        std::string tmpdir;     // its TMPDIR; empty: none of its own
        bool running = true;    // its first process has not ended
        bool listeners = false; // the holder's proxy serves listeners of its
        pid_t leader = 0;       // a terminal's: its session's leader, this process's child (0: none)
    };
    int sock_;
    bool proxied_;
    std::uint64_t cpu_;  // each command's CPU seconds (--cpu); 0: no limit
    std::map<pid_t, Command> live_;  // by the pid of its first process, its group's id
};

}  // namespace

int run_session_server(int argc, char** argv) {
    int sock = -1;
    bool proxied = false;
    std::uint64_t cpu = 0;
    bool ok = argc >= 1 && sbx::launcher::parse_fd(argv[0], sock, 3);
    for (int i = 1; ok && i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == kServeSessionProxied && !proxied) {
            proxied = true;
        } else if (a == kServeSessionCpu && cpu == 0 && i + 1 < argc) {
            const std::string_view v = argv[++i];
            const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), cpu);
            ok = !v.empty() && ec == std::errc{} && end == v.data() + v.size() && cpu > 0;
        } else {
            ok = false;
        }
    }
    if (!ok) {
        std::fputs("sbx-stage: USAGE: --serve-session is a session's own, inside the sandbox\n", stderr);
        return 125;
    }
    Fd owned(sock);
    ::fcntl(sock, F_SETFD, FD_CLOEXEC);
    // No command of the session may trace this process or open its descriptors.
    if (::prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) return 125;
    // The signals it waits for come on a descriptor; the commands start with none blocked.
    sigset_t waited;
    sigemptyset(&waited);
    for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP}) sigaddset(&waited, sig);
    if (::sigprocmask(SIG_BLOCK, &waited, nullptr) != 0) return 125;
    ::signal(SIGPIPE, SIG_IGN);
    Fd sigfd(::signalfd(-1, &waited, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!sigfd.ok()) return 125;
    // Only what the session's commands are given stays open: 0-2 (the
    // holder's, /dev/null) and this socket, until the first spawn closes the rest.
    const int keep[] = {sock, sigfd.get()};
    if (!sbx::launcher::sweep_fds(keep, sbx::launcher::FdSweep::close)) return 125;
    if (!wire::send_frame(sock, 'H', {})) return 125;
    Server server(sock, proxied, cpu);
    server.serve(sigfd.get());
    end_session();
    return 0;
}

}  // namespace sbx::linux_sandbox
