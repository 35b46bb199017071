// TerminalRelay (launchers/shared/terminal.cpp) between two real pseudo-terminals: one
// stands for the caller's terminal, the other for the command's. What is typed
// reaches the command, what the command writes reaches the caller in order, the
// caller's terminal is raw while it runs and has its modes back after, the size
// is copied, and the end of piped input is the command's end of file.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <utility>

#include "base/fd_io.hpp"
#include "shared/leftovers.hpp"
#include "shared/terminal.hpp"

namespace {

using sbx::launcher::PtyMode;
using sbx::launcher::Reaper;
using sbx::launcher::TerminalRelay;
using sbx::launcher::TerminalUse;

// A pseudo-terminal: its master (what a terminal window holds) and its slave.
struct Pty {
    int master = -1, slave = -1;
    Pty() {
        REQUIRE(::openpty(&master, &slave, nullptr, nullptr, nullptr) == 0);
        ::fcntl(master, F_SETFD, FD_CLOEXEC);
        ::fcntl(slave, F_SETFD, FD_CLOEXEC);
    }
    Pty(const Pty&) = delete;
    Pty& operator=(const Pty&) = delete;
    ~Pty() {
        if (master >= 0) ::close(master);
        if (slave >= 0) ::close(slave);
    }
};

// Reads from fd until `want` is in what was read, or 5 s pass.
std::string read_until(int fd, const std::string& want) {
    std::string got;
    const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    char buf[65536];
    while (got.find(want) == std::string::npos && std::chrono::steady_clock::now() < end) {
        pollfd p{fd, POLLIN, 0};
        if (::poll(&p, 1, 100) != 1) continue;
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n <= 0) break;
        got.append(buf, static_cast<std::size_t>(n));
    }
    return got;
}

bool canonical(int fd) {
    termios t{};
    REQUIRE(::tcgetattr(fd, &t) == 0);
    return (t.c_lflag & ICANON) != 0;
}

// The caller's terminal on `caller.slave` (input, output and the one set raw);
// the command's terminal is `command`, whose master the relay takes.
TerminalUse caller_use(const Pty& caller) {
    TerminalUse use;
    use.replaces = {true, true, true};
    use.input_fd = caller.slave;
    use.output_fd = caller.slave;
    use.caller_tty = caller.slave;
    return use;
}

}  // namespace

TEST_CASE("the relay copies keys in and output out, raw meanwhile, and gives the modes back") {
    Pty caller, command;
    const winsize size{40, 100, 0, 0};
    REQUIRE(::ioctl(caller.slave, TIOCSWINSZ, &size) == 0);
    REQUIRE(canonical(caller.slave));
    auto reaper = Reaper::start();
    REQUIRE(reaper.has_value());
    {
        TerminalRelay relay(caller_use(caller), sbx::launcher::Fd(std::exchange(command.master, -1)), *reaper);
        winsize inside{};
        REQUIRE(::ioctl(command.slave, TIOCGWINSZ, &inside) == 0);
        CHECK(inside.ws_row == 40);
        CHECK(inside.ws_col == 100);
        relay.start();
        CHECK_FALSE(canonical(caller.slave));

        // Typed at the caller's terminal: a line for the command's.
        REQUIRE(::write(caller.master, "hello\r", 6) == 6);
        CHECK(read_until(command.slave, "hello\n").find("hello\n") != std::string::npos);

        // Written by the command: in order and whole, a megabyte of it.
        std::string lines;
        for (int i = 0; lines.size() < (1u << 20); ++i) lines += "line " + std::to_string(i) + "\n";
        bool written = false;
        std::thread writer([&] { written = sbx::launcher::write_all(command.slave, lines.data(), lines.size()); });
        std::string expected;
        for (char c : lines) {
            if (c == '\n') expected += '\r';  // the command's terminal turns \n into \r\n
            expected += c;
        }
        const std::string out = read_until(caller.master, expected.substr(expected.size() - 20));
        writer.join();
        CHECK(written);
        CHECK(out.size() >= expected.size());
        CHECK(out.find(expected) != std::string::npos);
        CHECK(relay.at_line_start());
        REQUIRE(::write(command.slave, "prompt$ ", 8) == 8);
        read_until(caller.master, "prompt$ ");
        CHECK_FALSE(relay.at_line_start());

        // A resize of the caller's window reaches the command's terminal (the
        // relay is woken by SIGWINCH, which the caller's kernel sends its
        // foreground group; here the test sends it).
        const winsize bigger{50, 132, 0, 0};
        REQUIRE(::ioctl(caller.slave, TIOCSWINSZ, &bigger) == 0);
        ::raise(SIGWINCH);
        bool resized = false;
        for (int i = 0; i < 50 && !resized; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            REQUIRE(::ioctl(command.slave, TIOCGWINSZ, &inside) == 0);
            resized = inside.ws_row == 50 && inside.ws_col == 132;
        }
        CHECK(resized);
        relay.finish();
        CHECK(canonical(caller.slave));
    }
    reaper->dismiss();
}

TEST_CASE("when nothing inside has the terminal open, the caller's modes come back at once") {
    Pty caller, command;
    auto reaper = Reaper::start();
    REQUIRE(reaper.has_value());
    TerminalRelay relay(caller_use(caller), sbx::launcher::Fd(std::exchange(command.master, -1)), *reaper);
    relay.start();
    CHECK_FALSE(canonical(caller.slave));
    ::close(std::exchange(command.slave, -1));
    bool back = false;
    for (int i = 0; i < 100 && !back; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        back = canonical(caller.slave);
    }
    CHECK(back);
    relay.finish();
    reaper->dismiss();
}

TEST_CASE("the end of piped input is the command's end of file") {
    Pty command;
    int in[2], out[2];
    REQUIRE(::pipe(in) == 0);
    REQUIRE(::pipe(out) == 0);
    auto reaper = Reaper::start();
    REQUIRE(reaper.has_value());
    TerminalUse use;
    use.replaces = {true, true, true};
    use.input_fd = in[0];
    use.output_fd = out[1];
    TerminalRelay relay(use, sbx::launcher::Fd(std::exchange(command.master, -1)), *reaper);
    relay.start();
    REQUIRE(::write(in[1], "abc\n", 4) == 4);
    ::close(in[1]);
    // In canonical mode a read returns a line, then 0 at the end-of-file key.
    char buf[64];
    pollfd p{command.slave, POLLIN, 0};
    REQUIRE(::poll(&p, 1, 5000) == 1);
    CHECK(::read(command.slave, buf, sizeof buf) == 4);
    REQUIRE(::poll(&p, 1, 5000) == 1);
    CHECK(::read(command.slave, buf, sizeof buf) == 0);
    relay.finish();
    for (int fd : {in[0], out[0], out[1]}) ::close(fd);
    reaper->dismiss();
}

TEST_CASE("no terminal of its own with --no-pty") {
    CHECK_FALSE(sbx::launcher::terminal_use(PtyMode::never, false).has_value());
    const auto always = sbx::launcher::terminal_use(PtyMode::always, true);
    REQUIRE(always.has_value());
    CHECK(always->replaces[0]);
    CHECK(always->replaces[1]);
    CHECK_FALSE(always->replaces[2]);  // standard error the launcher reads stays a pipe
    CHECK(always->output_fd == 1);
}
