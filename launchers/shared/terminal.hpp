// launchers/shared/terminal.hpp - the command's own terminal, and the relay to the caller's.
//
// A command given the caller's terminal could type into it (TIOCSTI) or keep a
// descriptor of it; taking it away as the controlling terminal (bubblewrap's
// --new-session) takes job control, Ctrl-C, Ctrl-Z and SIGWINCH with it. So
// the command gets a pseudo-terminal of its own instead: made inside the
// sandbox (on its own devpts) by the stage, the controlling terminal of the
// command's own session. The launcher holds its other side, the master, and
// relays: the caller's keys in, the command's output out. Meanwhile the caller's
// terminal is in raw mode, so that Ctrl-C, Ctrl-Z and Ctrl-\ reach the command's
// terminal as bytes, which it turns into signals for its foreground job. The
// caller's modes come back on every way out: restored here, or by the reaper
// (leftovers.hpp) when the launcher was killed.
#pragma once

#include <termios.h>

#include <array>
#include <atomic>
#include <future>
#include <optional>
#include <span>
#include <string>
#include <thread>

#include "base/fd_io.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/plan/output_filter.hpp"
#include "shared/leftovers.hpp"

namespace sbx::launcher {

// --pty, --no-pty, or neither.
enum class PtyMode {
    automatic,  // a terminal of its own when any of the caller's 0-2 is a terminal
    always,     // always, standing in for all of 0-2 (the caller's input and output relayed)
    never,      // none: the command gets the caller's descriptors as they are
};

// What the command's terminal stands in for.
struct TerminalUse {
    std::array<bool, 3> replaces{};  // these of 0-2 become the terminal; the others stay the caller's own
    int input_fd = -1;               // the caller's descriptor whose bytes are typed into it (0), or -1
    int output_fd = -1;              // where its output is written: 1, 2, or 0 (a terminal opened read-write)
    int caller_tty = -1;             // the caller's terminal set raw meanwhile (0), or -1
    bool allow_clipboard = false;    // OSC 52 passes to the caller's terminal (--allow-clipboard-write)
};

// Which of the command's standard output and error the launcher reads itself
// and passes on (relay_output, common.hpp): each that is open and no terminal,
// when the launcher appends its <sandbox_violations> block (so that every tag
// the command writes there is neutralised), but standard output with --pty,
// where the command's terminal stands in for it; and standard error whatever
// it is when the launcher reads it for file refusals. `merged`: both lead to
// one file (2>&1), and the command gets one pipe for both, which keeps their
// order as written.
struct OutputRelays {
    bool out = false, err = false, merged = false;
};
OutputRelays output_relays(PtyMode mode, bool print_violations, bool scan_stderr);

// nullopt: the command gets no terminal of its own (`never`, or `automatic`
// and none of 0-2 is a terminal). `stderr_relayed`: the launcher reads the
// command's standard error itself (to scan it, or to mark tags in it), so the
// terminal does not stand in for it.
std::optional<TerminalUse> terminal_use(PtyMode mode, bool stderr_relayed, bool allow_clipboard = false);

// The caller's terminal where the command holds it itself: one of 0-2 that is
// a terminal and that neither the command's own terminal nor a relay stands in
// for (--no-pty). Its modes and line discipline are taken before the command
// starts and put back once it has ended (and by the reaper, should the
// launcher be killed), and the input the terminal holds then, which may be
// answers to the command's queries, is dropped. Answers still on their way
// after that cannot be told from keys typed for the shell (README).
class HeldTerminal {
public:
    HeldTerminal(const std::optional<TerminalUse>& use, const OutputRelays& relays, Reaper& reaper);
    HeldTerminal(const HeldTerminal&) = delete;
    HeldTerminal& operator=(const HeldTerminal&) = delete;
    ~HeldTerminal() { restore(); }
    // Puts the terminal back as it was; safe to call twice.
    void restore();

private:
    Reaper& reaper_;
    int tty_ = -1;  // one of 0-2, not ours to close
    termios saved_{};
    int ldisc_ = -1;
    bool held_ = false;
};

// A new pseudo-terminal of this machine, both sides close-on-exec: where the
// launcher itself makes the command's terminal (sbx-mac; sbx-linux's stage makes
// it inside the sandbox instead). INTERNAL when it cannot.
struct PtyPair {
    Fd master, slave;
};
sbx::expected<PtyPair> open_pty();

// The launcher's side of the command's terminal, relayed on a thread of its own.
class TerminalRelay {
public:
    // Takes `master`. Copies the caller's window size and modes to the command's
    // terminal; nothing is relayed before start().
    TerminalRelay(const TerminalUse& use, Fd master, Reaper& reaper);
    TerminalRelay(const TerminalRelay&) = delete;
    TerminalRelay& operator=(const TerminalRelay&) = delete;
    ~TerminalRelay() { finish(); }

    // Sets the caller's terminal raw (when this process is in its foreground;
    // the reaper is told the modes to restore) and starts relaying.
    void start();
    // Once the sandbox has ended: the command's last output is written, the
    // relay stops, and the caller's modes are restored. Safe to call twice.
    void finish();
    // finish(), keeping the command's terminal open: its master, for a process
    // that goes on copying what the command left in the background writes
    // there (a session's command; invalid when finished before).
    Fd release_master() {
        keep_master_ = true;
        finish();
        return std::move(master_);
    }
    // Whether the last byte written to the caller was a newline (or nothing was):
    // what the launcher writes next starts on a line of its own.
    bool at_line_start() const { return at_line_start_.load(); }

    // What the filter of the command's output found (once finished): OSC 52
    // dropped, and the first one's length; tags neutralised.
    std::size_t clipboard_writes() const { return filter_.clipboard_refused(); }
    std::size_t clipboard_bytes() const { return filter_.clipboard_bytes(); }
    std::size_t forged_tags() const { return filter_.tags_neutralised(); }

    // `text` (the <sandbox_violations> block), after a newline when the
    // command's last output ended mid-line: it starts a line of its own.
    std::string on_own_line(std::string text) const {
        if (!text.empty() && !at_line_start()) text.insert(0, "\n");
        return text;
    }

private:
    void loop();
    // The loop's steps, on the relay thread. put: output to the caller. drain:
    // what the command's terminal has now, put; false once it is closed (every
    // process of the sandbox is gone) or broken. on_size_or_continue: SIGWINCH
    // or SIGCONT came. read_input: what the caller typed, kept for the command;
    // false at its end.
    void put(const std::string& text);
    bool drain(std::span<char> buf);
    void on_size_or_continue(std::span<char> buf);
    bool read_input(std::span<char> buf, std::string& to_command);
    void make_raw();
    void restore();
    void copy_size();
    void drop_late_answers();
    void give_back();  // the late answers dropped, then restore()

    TerminalUse use_;
    Fd master_;
    Reaper& reaper_;
    Pipe stop_;  // finish() tells the relay thread to stop
    Fd signal_fd_;               // SIGWINCH and SIGCONT (signals.hpp)
    sbx::TerminalOutputFilter filter_;  // the command's output on its way to the caller (relay thread only)
    std::optional<termios> saved_;  // the caller's modes, when its terminal was read
    bool raw_ = false;               // the caller's terminal is raw now (relay thread only, after start)
    bool output_ok_ = true;          // the caller takes output (relay thread only)
    bool fenced_ = false;            // drop_late_answers() ran
    std::atomic<bool> at_line_start_{true};
    std::atomic<bool> abandon_{false};  // finish() gave up on a caller's terminal that takes nothing
    bool keep_master_ = false;          // release_master(): finish() leaves master_ open
    std::promise<void> ended_;          // set when the relay thread is done
    std::thread thread_;
    bool finished_ = false;
};

}  // namespace sbx::launcher
