// launchers/shared/signals.hpp - the launchers' signal handling. SIGINT, SIGTERM, SIGHUP
// and SIGQUIT that come while the command runs go to the command's process group
// as they are; after any but SIGINT (which a shell or a REPL answers and goes on)
// the command has a grace period to end (its traps and clean-up run) before the
// sandbox is killed; the launcher exits with the command's status, by
// the shell's convention (128+N for a command that died of signal N). One that
// comes before the command's group is there, or with no grace period, ends the
// sandbox at once and is remembered, so that the launcher, once it has cleaned
// up, dies of the same signal and its caller sees what it sent. SIGWINCH and
// SIGCONT wake the terminal relay.
//
// The handler's state (the signal caught, the process to kill) is the only
// mutable state of the launchers outside the objects main passes around: a
// handler can be handed nothing, so it lives in signals.cpp, behind these calls.
#pragma once

#include <sys/types.h>

#include "base/fd_io.hpp"

namespace sbx::launcher {

// Installs the handler for SIGINT, SIGTERM, SIGHUP, SIGQUIT and SIGALRM (the
// grace period's end); ignores SIGPIPE (a child undoes both before it execs).
void install_signal_handlers();

// The default grace period, in seconds: what `docker stop` gives a container.
inline constexpr int kDefaultGrace = 10;

// The grace period from now on, in seconds; 0 for none (the sandbox is killed at
// once). None until this is called.
void set_grace(int seconds);

// The plan's timeout (sbx/settings/limits.hpp), from now on: once `seconds`
// have passed, the command's process group gets SIGTERM as if it had come to
// this process, and the grace period starts (with none, the sandbox is
// killed). Call after watch_sandbox() and set_grace(). A signal that comes
// first starts its own grace period, which replaces the timeout.
void set_timeout(unsigned seconds);
// Whether the timeout ran out (the command was sent SIGTERM, or killed, for it).
bool timed_out();

// The last signal that came, or 0 when none came.
int caught_signal();
// Whether a signal went to the command's group (the launcher then exits with the
// command's status), and whether the grace period ran out after it.
bool signal_forwarded();
bool grace_ran_out();
// The signal the grace period started after, or 0.
int grace_signal();

// Which processes the handler kills with the sandbox's process.
enum class KillScope {
    process,  // the process alone (Linux: bubblewrap, and with it, --die-with-parent, everything inside)
    group,    // its whole process group too (macOS: the command leads a session of its own)
};

// From now on a signal kills `pid` (and its group, with KillScope::group).
void watch_sandbox(pid_t pid, KillScope scope);
// While a question is open the sandbox is stopped (freeze.hpp), and could not
// act on a signal: one that comes then kills it at once, as with no grace.
void sandbox_frozen(bool frozen);
// The sandbox's process was reaped: a signal kills nothing any more.
void sandbox_ended();
// The process being watched, or -1.
pid_t watched_sandbox();

// SIGWINCH and SIGCONT (the caller's window changed size; this process was
// continued, maybe in the terminal's foreground again) each write a byte to a
// pipe, whose non-blocking read end this returns (none when it cannot be made).
// For the terminal relay (terminal.hpp), until stop_watching_terminal().
Fd watch_terminal();
void stop_watching_terminal();

// Dies of `sig`, so our caller sees what it sent; exits 128+sig should it survive.
[[noreturn]] void die_of(int sig);

}  // namespace sbx::launcher
