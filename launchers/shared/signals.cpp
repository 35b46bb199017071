// launchers/shared/signals.cpp - see signals.hpp.
#include "shared/signals.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

#include <initializer_list>

namespace sbx::launcher {

namespace {

// Written by the handler, read by the launcher.
volatile sig_atomic_t g_signal = 0;
// Read by the handler: the sandbox's process, and whether its group dies with it.
volatile pid_t g_sandbox_pid = -1;
volatile sig_atomic_t g_kill_group = 0;
// Written by the handler of SIGWINCH and SIGCONT: the terminal relay's pipe,
// the write end, a plain number because a signal handler reads it (made by
// watch_terminal, closed by stop_watching_terminal).
volatile sig_atomic_t g_terminal_pipe = -1;
// The grace period in seconds (0: none); whether a signal went to the command's
// group, the signal the grace period started after (0: none yet), and whether
// it ran out (then the sandbox was killed).
volatile sig_atomic_t g_grace = 0;
volatile sig_atomic_t g_forwarded = 0;
volatile sig_atomic_t g_grace_started = 0;
volatile sig_atomic_t g_grace_over = 0;
volatile sig_atomic_t g_frozen = 0;  // its processes are stopped for a question
// The timeout: armed (the next SIGALRM is it, not a grace period's end), and whether it ran out.
volatile sig_atomic_t g_timeout_armed = 0;
volatile sig_atomic_t g_timed_out = 0;

// Linux: bubblewrap dies, and with it (--die-with-parent) everything inside.
// macOS, the weaker sandbox: the command's whole process group (and the command
// itself, should the signal come before its setsid() made the group).
void kill_sandbox() {
    const pid_t pid = g_sandbox_pid;
    if (pid > 0) {
        if (g_kill_group != 0) ::kill(-pid, SIGKILL);
        ::kill(pid, SIGKILL);
    }
}

// What follows runs in a signal handler: open, read, close and kill only, no
// allocation.

// `n` in decimal at `out`, which has room; the end.
char* put_number(char* out, long n) {
    char digits[24];
    int k = 0;
    do digits[k++] = static_cast<char>('0' + n % 10);
    while ((n /= 10) > 0);
    while (k > 0) *out++ = digits[--k];
    return out;
}

// The start of /proc/PID/NAME (or /proc/PID/task/PID/NAME), NUL-terminated in
// `buf`; false when it cannot be read.
bool read_proc(pid_t pid, const char* name, bool task, char* buf, std::size_t size) {
    char path[96];
    char* at = put_number(path + sizeof "/proc/" - 1, pid);
    std::memcpy(path, "/proc/", sizeof "/proc/" - 1);
    if (task) {
        std::memcpy(at, "/task/", 6);
        at = put_number(at + 6, pid);
    }
    *at++ = '/';
    const std::size_t len = std::strlen(name);
    std::memcpy(at, name, len + 1);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ssize_t n;
    do n = ::read(fd, buf, size - 1);
    while (n < 0 && errno == EINTR);
    ::close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    return true;
}

// The first child of `pid`, or -1.
pid_t first_child(pid_t pid) {
    char buf[64];
    if (!read_proc(pid, "children", true, buf, sizeof buf) || buf[0] < '0' || buf[0] > '9') return -1;
    long n = 0;
    for (const char* c = buf; *c >= '0' && *c <= '9'; ++c) n = n * 10 + (*c - '0');
    return static_cast<pid_t>(n);
}

// The process group of the command in bubblewrap's sandbox, as this process
// numbers it: bubblewrap's child is the sandbox's init, whose child is the stage
// that became the command (the group is the init's, which --new-session made a
// session and group of their own, or the command's, where the stage made a
// session for its terminal). -1 before the stage runs.
pid_t bubblewrap_command_group(pid_t bwrap) {
    const pid_t init = first_child(bwrap);
    const pid_t command = init > 0 ? first_child(init) : -1;
    char buf[512];
    if (command <= 0 || !read_proc(command, "stat", false, buf, sizeof buf)) return -1;
    // PID (COMM) STATE PPID PGRP ...: COMM may hold anything, so from its last ')'.
    const char* c = std::strrchr(buf, ')');
    if (c == nullptr) return -1;
    for (int spaces = 0; *c != '\0' && spaces < 4; ++c)
        if (*c == ' ') ++spaces;
    long n = 0;
    for (; *c >= '0' && *c <= '9'; ++c) n = n * 10 + (*c - '0');
    return n > 0 ? static_cast<pid_t>(n) : -1;
}

// SIGTERM to the command's group and the grace period started (`sig` the
// signal that asks it), or the sandbox killed where there is no group yet or
// no grace period; with the state on_signal and on_alarm share.
void stop_command(int sig) {
    const pid_t pid = g_sandbox_pid;
    if (pid > 0) {
        // With a grace period, the signal goes to the command's process group,
        // which has that long to end; before the command's group is there, or
        // without one, the sandbox is killed.
        const pid_t group = g_grace <= 0 || g_frozen != 0 ? -1 : g_kill_group != 0 ? pid : bubblewrap_command_group(pid);
        if (group > 0 && ::kill(-group, sig) == 0) {
            g_forwarded = 1;
            // SIGINT asks a command to stop what it is doing, and a shell or a
            // REPL goes on after it, as outside: only a signal that asks it to
            // end starts the grace period.
            if (sig != SIGINT && g_grace_started == 0) {
                g_grace_started = sig;
                g_timeout_armed = 0;  // the alarm is the grace period's now
                ::alarm(static_cast<unsigned>(g_grace));
            }
        } else {
            kill_sandbox();
        }
    }
}

void on_signal(int sig) {
    const int saved = errno;
    g_signal = sig;
    stop_command(sig);
    errno = saved;
}

// SIGALRM: the timeout, or the grace period's end.
void on_alarm(int) {
    const int saved = errno;
    if (g_timeout_armed != 0) {
        g_timeout_armed = 0;
        if (g_sandbox_pid > 0) {
            g_timed_out = 1;
            stop_command(SIGTERM);
        }
    } else if (g_grace_started != 0 && g_sandbox_pid > 0) {
        g_grace_over = 1;
        kill_sandbox();
    }
    errno = saved;
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
    sa.sa_handler = on_alarm;
    ::sigaction(SIGALRM, &sa, nullptr);
    // Writes to the reaper's pipe must not kill us; the child undoes this.
    ::signal(SIGPIPE, SIG_IGN);
}

int caught_signal() { return g_signal; }

void set_grace(int seconds) { g_grace = seconds; }

void set_timeout(unsigned seconds) {
    if (seconds == 0 || g_grace_started != 0) return;
    g_timeout_armed = 1;
    ::alarm(seconds);
}

bool timed_out() { return g_timed_out != 0; }

bool signal_forwarded() { return g_forwarded != 0; }

bool grace_ran_out() { return g_grace_over != 0; }

int grace_signal() { return g_grace_started; }

void watch_sandbox(pid_t pid, KillScope scope) {
    g_kill_group = scope == KillScope::group ? 1 : 0;
    g_sandbox_pid = pid;
}

void sandbox_frozen(bool frozen) { g_frozen = frozen ? 1 : 0; }

void sandbox_ended() {
    g_sandbox_pid = -1;
    ::alarm(0);
}

pid_t watched_sandbox() { return g_sandbox_pid; }

Fd watch_terminal() {
    int fds[2];
    if (::pipe(fds) != 0) return Fd();
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
    return Fd(fds[0]);
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
