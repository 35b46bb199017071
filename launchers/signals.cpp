// launchers/signals.cpp - see signals.hpp.
#include "signals.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <initializer_list>

namespace sbx::launcher {

namespace {

// Written by the handler, read by the launcher.
volatile sig_atomic_t g_signal = 0;
// Read by the handler: the sandbox's process, and whether its group dies with it.
volatile pid_t g_sandbox_pid = -1;
volatile sig_atomic_t g_kill_group = 0;
// Written by the handler of SIGWINCH and SIGCONT: the terminal relay's pipe.
volatile sig_atomic_t g_terminal_pipe = -1;

void on_signal(int sig) {
    g_signal = sig;
    // Linux: bubblewrap dies, and with it (--die-with-parent) everything inside.
    // macOS: the command's whole process group (and the command itself, should
    // the signal come before its setsid() made the group).
    if (g_sandbox_pid > 0) {
        if (g_kill_group != 0) ::kill(-g_sandbox_pid, SIGKILL);
        ::kill(g_sandbox_pid, SIGKILL);
    }
}

void on_terminal_signal(int) {
    const int saved = errno;
    const char byte = 0;
    if (g_terminal_pipe >= 0) (void)!::write(g_terminal_pipe, &byte, 1);  // a full pipe has a wake-up already
    errno = saved;
}

}  // namespace

void install_signal_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) ::sigaction(sig, &sa, nullptr);
    // Writes to the reaper's pipe must not kill us; the child undoes this.
    ::signal(SIGPIPE, SIG_IGN);
}

int caught_signal() { return g_signal; }

void watch_sandbox(pid_t pid, KillScope scope) {
    g_kill_group = scope == KillScope::group ? 1 : 0;
    g_sandbox_pid = pid;
}

void sandbox_ended() { g_sandbox_pid = -1; }

pid_t watched_sandbox() { return g_sandbox_pid; }

int watch_terminal() {
    int fds[2];
    if (::pipe(fds) != 0) return -1;
    for (int fd : fds) {
        ::fcntl(fd, F_SETFD, FD_CLOEXEC);
        ::fcntl(fd, F_SETFL, O_NONBLOCK);
    }
    g_terminal_pipe = fds[1];
    struct sigaction sa {};
    sa.sa_handler = on_terminal_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGWINCH, SIGCONT}) ::sigaction(sig, &sa, nullptr);
    return fds[0];
}

void stop_watching_terminal() {
    for (int sig : {SIGWINCH, SIGCONT}) ::signal(sig, SIG_DFL);
    const int fd = g_terminal_pipe;
    g_terminal_pipe = -1;
    if (fd >= 0) ::close(fd);
}

[[noreturn]] void die_of(int sig) {
    ::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
    ::raise(sig);
    ::_exit(128 + sig);
}

}  // namespace sbx::launcher
