// launchers/shared/terminal.cpp - see terminal.hpp.
#include "shared/terminal.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <stdlib.h>

#include <pthread.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <initializer_list>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "shared/common.hpp"
#include "shared/signals.hpp"

namespace sbx::launcher {

OutputRelays output_relays(PtyMode mode, bool print_violations, bool scan_stderr) {
    auto open_not_tty = [](int fd) { return ::fcntl(fd, F_GETFD) >= 0 && ::isatty(fd) == 0; };
    OutputRelays r;
    r.out = print_violations && mode != PtyMode::always && open_not_tty(STDOUT_FILENO);
    r.err = scan_stderr || (print_violations && open_not_tty(STDERR_FILENO));
    struct stat out {}, err {};
    r.merged = r.out && r.err && ::fstat(STDOUT_FILENO, &out) == 0 && ::fstat(STDERR_FILENO, &err) == 0 &&
               out.st_dev == err.st_dev && out.st_ino == err.st_ino;
    return r;
}

std::optional<TerminalUse> terminal_use(PtyMode mode, bool stderr_relayed, bool allow_clipboard) {
    if (mode == PtyMode::never) return std::nullopt;
    TerminalUse use;
    use.allow_clipboard = allow_clipboard;
    for (int fd = 0; fd < 3; ++fd) use.replaces[fd] = mode == PtyMode::always || ::isatty(fd) != 0;
    if (stderr_relayed) use.replaces[2] = false;
    if (!use.replaces[0] && !use.replaces[1] && !use.replaces[2]) return std::nullopt;
    // Typed into it: the caller's input, when the terminal stands in for it.
    if (use.replaces[0]) use.input_fd = 0;
    if (::isatty(0) != 0) use.caller_tty = 0;
    // Its output goes where the command's would have: standard output, else
    // standard error, else (only standard input was a terminal) back to the
    // terminal on 0, for the echo of what is typed.
    use.output_fd = use.replaces[1] ? 1 : use.replaces[2] ? 2 : 0;
    return use;
}

sbx::expected<PtyPair> open_pty() {
    auto failed = [](const char* what) {
        return sbx::fail(sbx::Error(sbx::Errc::internal, std::string("cannot make the command's terminal (") + what +
                                                             "): " + std::strerror(errno)));
    };
    PtyPair p;
    p.master = Fd(::posix_openpt(O_RDWR | O_NOCTTY));
    if (p.master.get() < 0) return failed("posix_openpt");
    ::fcntl(p.master.get(), F_SETFD, FD_CLOEXEC);
    if (::grantpt(p.master.get()) != 0 || ::unlockpt(p.master.get()) != 0) return failed("unlockpt");
    const char* name = ::ptsname(p.master.get());  // one thread makes terminals
    if (name == nullptr) return failed("ptsname");
    p.slave = Fd(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (p.slave.get() < 0) return failed(name);
    return p;
}

namespace {

// Raw mode as a terminal client wants it (ssh's): every byte passes as it is,
// both ways; the command's terminal does the line editing, echo and signals.
termios raw_of(termios t) {
    t.c_iflag &= ~static_cast<tcflag_t>(IGNPAR | ISTRIP | INLCR | IGNCR | ICRNL | IXON | IXANY | IXOFF);
    t.c_lflag &= ~static_cast<tcflag_t>(ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHONL | IEXTEN);
    t.c_oflag &= ~static_cast<tcflag_t>(OPOST);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    return t;
}

// Whether `seen` holds a terminal's answer to primary device attributes:
// ESC [ ? then digits and semicolons, then c.
bool answered_attributes(std::string_view seen) {
    for (std::size_t at = seen.find("\x1b[?"); at != std::string_view::npos; at = seen.find("\x1b[?", at + 1)) {
        std::size_t i = at + 3;
        while (i < seen.size() && ((seen[i] >= '0' && seen[i] <= '9') || seen[i] == ';')) ++i;
        if (i < seen.size() && seen[i] == 'c') return true;
    }
    return false;
}

// Whether this process may read `tty` and change its modes without being
// stopped: it is in the terminal's foreground, or the terminal is not its
// controlling terminal (then no job control applies).
bool in_foreground(int tty) {
    const pid_t fg = ::tcgetpgrp(tty);
    return fg == ::getpgrp() || (fg < 0 && errno == ENOTTY);
}

}  // namespace

HeldTerminal::HeldTerminal(const std::optional<TerminalUse>& use, const OutputRelays& relays, Reaper& reaper)
    : reaper_(reaper) {
    const bool relayed[3] = {false, relays.out, relays.err};
    for (int fd = 0; fd < 3 && tty_ < 0; ++fd)
        if (::isatty(fd) != 0 && !relayed[fd] && !(use && use->replaces[static_cast<std::size_t>(fd)])) tty_ = fd;
    if (tty_ < 0 || ::tcgetattr(tty_, &saved_) != 0) {
        tty_ = -1;
        return;
    }
    if (::ioctl(tty_, TIOCGETD, &ldisc_) != 0) ldisc_ = -1;
    held_ = true;
    if (tty_ == STDIN_FILENO) reaper_.terminal_modes(&saved_, ldisc_);  // the reaper holds standard input's terminal
}

void HeldTerminal::restore() {
    if (!held_) return;
    held_ = false;
    int now = -1;
    if (ldisc_ >= 0 && ::ioctl(tty_, TIOCGETD, &now) == 0 && now != ldisc_) ::ioctl(tty_, TIOCSETD, &ldisc_);
    ::tcsetattr(tty_, TCSANOW, &saved_);
    ::tcflush(tty_, TCIFLUSH);
    if (tty_ == STDIN_FILENO) reaper_.terminal_modes(nullptr);
}

TerminalRelay::TerminalRelay(const TerminalUse& use, Fd master, Reaper& reaper)
    : use_(use), master_(std::move(master)), reaper_(reaper), filter_(use.allow_clipboard) {
    ::fcntl(master_.get(), F_SETFL, ::fcntl(master_.get(), F_GETFL) | O_NONBLOCK);
    if (use_.caller_tty >= 0) {
        termios t{};
        if (::tcgetattr(use_.caller_tty, &t) == 0) {
            saved_ = t;
            // The command's terminal starts as the caller's was (erase key,
            // flow control, UTF-8 input), before the caller's goes raw.
            ::tcsetattr(master_.get(), TCSANOW, &t);
        }
    }
    copy_size();
}

void TerminalRelay::copy_size() {
    winsize ws{};
    for (int fd : {use_.output_fd, use_.caller_tty})
        if (fd >= 0 && ::ioctl(fd, TIOCGWINSZ, &ws) == 0) {
            ::ioctl(master_.get(), TIOCSWINSZ, &ws);  // the kernel sends the command's foreground job SIGWINCH
            return;
        }
}

void TerminalRelay::make_raw() {
    if (raw_ || !saved_ || !in_foreground(use_.caller_tty)) return;
    const termios raw = raw_of(*saved_);
    reaper_.terminal_modes(&*saved_);  // should we be killed from here on
    if (::tcsetattr(use_.caller_tty, TCSANOW, &raw) == 0) raw_ = true;
}

void TerminalRelay::give_back() {
    if (filter_.queried() && !fenced_ && caught_signal() == 0) {
        fenced_ = true;
        drop_late_answers();
    }
    restore();
}

void TerminalRelay::restore() {
    if (!raw_) return;
    ::tcsetattr(use_.caller_tty, TCSANOW, &*saved_);  // never waits for output a stalled reader does not take
    raw_ = false;
    reaper_.terminal_modes(nullptr);
}

void TerminalRelay::start() {
    (void)stop_.open();  // without it, the relay stops when the command's terminal closes
    signal_fd_ = watch_terminal();
    make_raw();
    thread_ = std::thread([this] {
        loop();
        ended_.set_value();
    });
}

void TerminalRelay::finish() {
    if (finished_) return;
    finished_ = true;
    if (thread_.joinable()) {
        if (stop_.write.ok()) write_all(stop_.write.get(), "x", 1);
        // The last output waits for a slow terminal, unless a signal is ending
        // the launcher: then a terminal that takes nothing (a stalled
        // connection) gets a second, and the write it blocks is interrupted.
        if (const int sig = caught_signal(); sig != 0 &&
            ended_.get_future().wait_for(std::chrono::seconds(1)) != std::future_status::ready) {
            abandon_ = true;
            ::pthread_kill(thread_.native_handle(), sig);  // its handler has no SA_RESTART: EINTR
        }
        thread_.join();
    }
    give_back();
    stop_watching_terminal();
    for (Fd* fd : {&stop_.read, &stop_.write, &signal_fd_}) fd->reset();
    if (!keep_master_) master_.reset();
}

// Writes the command's output to the caller, through the filter
// (sbx/plan/output_filter.hpp). The terminal lock keeps it out of a question
// the proxy has open (common.hpp).
void TerminalRelay::put(const std::string& text) {
    const char* data = text.data();
    std::size_t n = text.size();
    if (!output_ok_ || n == 0) return;
    std::lock_guard<std::mutex> lock(terminal_mutex());
    at_line_start_ = data[n - 1] == '\n';
    while (n > 0) {
        const ssize_t w = ::write(use_.output_fd, data, n);
        if (w < 0 && errno == EINTR && !abandon_) continue;
        if (w <= 0) {
            output_ok_ = false;  // the caller's terminal is gone (or given up): the rest is dropped
            return;
        }
        data += w;
        n -= static_cast<std::size_t>(w);
    }
}

bool TerminalRelay::drain(std::span<char> buf) {
    for (;;) {
        const ssize_t got = ::read(master_.get(), buf.data(), buf.size());
        if (got > 0) {
            put(filter_.feed(std::string_view(buf.data(), static_cast<std::size_t>(got))));
            if (abandon_) return false;
            continue;
        }
        if (got < 0 && errno == EINTR) continue;
        return got < 0 && errno == EAGAIN;
    }
}

void TerminalRelay::on_size_or_continue(std::span<char> buf) {
    while (::read(signal_fd_.get(), buf.data(), buf.size()) > 0) {
    }
    copy_size();
    // Continued after a stop, the shell having taken its modes back meanwhile:
    // in the foreground again (fg) the terminal is made raw again; in the
    // background (bg) the shell's modes stay. Under the terminal lock: a
    // question open now has the terminal in its own mode.
    std::lock_guard<std::mutex> lock(terminal_mutex());
    if (use_.caller_tty >= 0 && in_foreground(use_.caller_tty)) {
        raw_ = false;
        make_raw();
    } else if (raw_) {
        raw_ = false;
        reaper_.terminal_modes(nullptr);  // they are the shell's now
    }
}

bool TerminalRelay::read_input(std::span<char> buf, std::string& to_command) {
    // Read under the terminal lock, and only what is there: a question the
    // proxy asked meanwhile has taken its answer from the same terminal.
    std::lock_guard<std::mutex> lock(terminal_mutex());
    pollfd again{use_.input_fd, POLLIN, 0};
    if (::poll(&again, 1, 0) != 1) return true;
    const ssize_t got = ::read(use_.input_fd, buf.data(), buf.size() - to_command.size());
    if (got > 0) {
        to_command.append(buf.data(), static_cast<std::size_t>(got));
        return true;
    }
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    // The end of a piped input (--pty) is the end of the command's: its
    // terminal's end-of-file key, at the start of a line.
    termios t{};
    if (use_.caller_tty != use_.input_fd && ::tcgetattr(master_.get(), &t) == 0 && (t.c_lflag & ICANON) != 0)
        to_command.push_back(static_cast<char>(t.c_cc[VEOF]));
    return false;
}

void TerminalRelay::loop() {
    std::string to_command;  // read from the caller, not yet taken by the command's terminal
    bool input_open = use_.input_fd >= 0;
    bool stopping = false;
    std::vector<char> buf(65536);
    for (;;) {
        // The caller's input is read while this process is in its terminal's
        // foreground (a background job reading it would be stopped), and no more
        // than the command's terminal is behind.
        const bool reading = input_open && !stopping && to_command.size() < buf.size() &&
                             (use_.caller_tty != use_.input_fd || in_foreground(use_.input_fd));
        pollfd fds[4] = {{master_.get(), static_cast<short>(POLLIN | (to_command.empty() ? 0 : POLLOUT)), 0},
                         {stop_.read.get(), POLLIN, 0},
                         {signal_fd_.get(), POLLIN, 0},
                         {reading ? use_.input_fd : -1, POLLIN, 0}};
        // Once stopping, whatever is still there is taken without waiting.
        const int ready = ::poll(fds, 4, stopping ? 0 : -1);
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) break;
        if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0 || stopping) {
            if (!drain(buf)) {
                // Nothing inside has the terminal open any more, though the sandbox
                // may run on (a daemon that closed it): the caller's terminal gets
                // its modes back now, so that its Ctrl-C ends the launcher again.
                give_back();
                break;
            }
            if (stopping) break;
        }
        if ((fds[0].revents & POLLOUT) != 0 && !to_command.empty()) {
            const ssize_t w = ::write(master_.get(), to_command.data(), to_command.size());
            if (w > 0) to_command.erase(0, static_cast<std::size_t>(w));
        }
        if ((fds[1].revents & POLLIN) != 0) stopping = true;
        if ((fds[2].revents & POLLIN) != 0) on_size_or_continue(buf);
        if ((fds[3].revents & (POLLIN | POLLHUP | POLLERR)) != 0) input_open = read_input(buf, to_command);
    }
    put(filter_.finish());  // a sequence's start held back, as it was
}

// The command asked the terminal something (filter_.queried()): answers still
// on their way when it ended would land in the caller's shell as typed keys.
// Terminals answer in order, so a query of our own goes last (primary device
// attributes, which every terminal that answers anything answers), and what
// comes until its answer, for at most a second, is read and dropped, with what
// was already waiting. Only while the caller's terminal is ours (raw, in the
// foreground).
void TerminalRelay::drop_late_answers() {
    const int tty = use_.caller_tty;
    if (!raw_ || tty < 0) return;
    const int out = ::isatty(use_.output_fd) != 0 ? use_.output_fd : tty;
    {
        std::lock_guard<std::mutex> lock(terminal_mutex());
        if (!write_all(out, "\x1b[c", 3)) return;
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    std::string seen;
    char buf[4096];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) break;
        pollfd p{tty, POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) break;
        const ssize_t got = ::read(tty, buf, sizeof buf);
        if (got <= 0) break;
        seen.append(buf, static_cast<std::size_t>(got));
        if (seen.size() > 65536) seen.erase(0, seen.size() - 64);
        if (answered_attributes(seen)) break;
    }
    ::tcflush(tty, TCIFLUSH);
}

}  // namespace sbx::launcher
