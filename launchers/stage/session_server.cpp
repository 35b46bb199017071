#include "stage/session_server.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "base/fd_io.hpp"
#include "base/session_wire.hpp"

extern char** environ;

namespace sbx::linux_sandbox {

namespace {

namespace wire = sbx::launcher::session_wire;
using sbx::launcher::Fd;

// How long the session's processes have after SIGTERM before the sandbox ends.
constexpr int kEndGraceMs = 2000;

// A run's frame: ID CWD ARG..., with three descriptors. The command's pid, or
// the error posix_spawn gave.
int spawn_command(const wire::Frame& f, pid_t& pid) {
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
        err = posix_spawn_file_actions_adddup2(&actions, f.fds[static_cast<std::size_t>(target)].get(), target);
    if (err == 0) err = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
    if (err == 0) err = posix_spawn_file_actions_addchdir_np(&actions, f.words[1].c_str());
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    if (err == 0) err = posix_spawnattr_setsigmask(&attr, &none);
    if (err == 0) err = posix_spawnattr_setsigdefault(&attr, &all);
    if (err == 0) err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    std::vector<char*> argv;
    for (std::size_t i = 2; i < f.words.size(); ++i) argv.push_back(const_cast<char*>(f.words[i].c_str()));
    argv.push_back(nullptr);
    if (err == 0) err = ::posix_spawnp(&pid, argv[0], &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return err;
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
    explicit Server(int sock) : sock_(sock) {}

    // Serves until the holder asks for the end or is gone, or SIGTERM, SIGINT
    // or SIGHUP comes: each ends the session.
    void serve(int sigfd) {
        pollfd fds[2]{{sock_, POLLIN, 0}, {sigfd, POLLIN, 0}};
        for (;;) {
            if (::poll(fds, 2, -1) < 0) {
                if (errno == EINTR) continue;
                return;
            }
            if ((fds[1].revents & POLLIN) != 0) {
                signalfd_siginfo si{};
                while (::read(sigfd, &si, sizeof si) == static_cast<ssize_t>(sizeof si))
                    if (si.ssi_signo != SIGCHLD) return;  // TERM, INT, HUP: the session ends
                reap();
            }
            if (fds[0].revents != 0) {
                wire::Frame f;
                const auto got = wire::read_frame(sock_, f);
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
        if (f.kind == 'R' && f.words.size() >= 3 && f.fds.size() == 3) {
            pid_t pid = -1;
            if (const int err = spawn_command(f, pid); err != 0) {
                say('E', {f.words[0], std::to_string(err)});
                return;
            }
            running_[pid] = f.words[0];
            say('S', {f.words[0], std::to_string(pid)});
            return;
        }
        if (f.kind == 'K' && f.words.size() == 2) {
            const int sig = std::atoi(f.words[1].c_str());
            for (const auto& [pid, id] : running_)
                if (id == f.words[0] && sig > 0 && sig < 65) ::kill(-pid, sig);
        }
        // Anything else is the holder's mistake: it is not answered.
    }

    // Every child that ended, told to the holder by its command's id.
    void reap() {
        int status = 0;
        pid_t pid;
        while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
            const auto it = running_.find(pid);
            if (it == running_.end()) continue;
            say('X', {it->second, std::to_string(status)});
            running_.erase(it);
        }
    }

    int sock_;
    std::map<pid_t, std::string> running_;
};

}  // namespace

int run_session_server(int argc, char** argv) {
    int sock = -1;
    if (argc != 1 || !sbx::launcher::parse_fd(argv[0], sock, 3)) {
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
    Server server(sock);
    server.serve(sigfd.get());
    end_session();
    return 0;
}

}  // namespace sbx::linux_sandbox
