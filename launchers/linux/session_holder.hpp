// launchers/linux/session_holder.hpp - a session's control socket, served
// outside the sandbox (docs/sessions.md).
//
// `sbx session start` carries out one plan whose command is the session's fork
// server (stage/session_server.hpp) and, while that sandbox runs, serves the
// session's control socket on a thread of its own: JSON lines
// (sbx/plan/session_protocol.hpp) from clients of this user outside the
// sandbox, each run handed on to the fork server with its three descriptors
// (base/session_wire.hpp), and each command's start and exit told back to the
// client that asked for it, with the refusals each command's process group
// makes (the proxy's on its listeners, the connect broker's), and the
// questions about hosts its process group asks where its run asked to be asked
// (`asks`). A port exposed
// (`expose`) is a listener on the host's loopback whose clients are relayed
// to connections the fork server makes inside. A peer of another user, or in
// another PID namespace (a command of any sandbox), is refused before it is read.
//
// The session ends on a `stop`, the end of its owner process (where it has one), an
// idle time with no command running, or the fork server's end: the holder
// tells the server to end, the sandbox ends, the launcher's steps clean up
// and audit as after any run, and finish() sends what they said to the
// clients that asked for the stop.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/fd_io.hpp"
#include "sbx/plan/session_protocol.hpp"
#include "shared/common.hpp"

namespace sbx::linux_sandbox {

// Why a command may not run in the session now: an error event's code and message.
struct RunRefusal {
    std::string code, message;
};

struct HolderConfig {
    std::string root;       // the session's root, for `status`
    int idle_seconds = 0;   // the session ends after this long with no command running; 0: never
    launcher::Fd starter;   // a pidfd of the process whose end ends the session; none: none
    // Asked before each run: a refusal, or nullopt to run it.
    std::function<std::optional<RunRefusal>(const sbx::session::RunRequest&)> refuse;
    // The environment ("NAME=VALUE") of a run that brings its own `env`, as
    // the session's policy makes it of that env (sbx::command_environment);
    // an error refuses the run (INVALID_REQUEST). Unset: such a run is refused.
    std::function<sbx::expected<std::vector<std::string>>(const sbx::session::RunRequest&)> environment;
    // The call deciding for a run that lists its own `hosts` (sbx run
    // --allow-host's, for that command only); an error names the host and
    // refuses the run (INVALID_REQUEST). Unset: such a run is refused.
    std::function<sbx::expected<sbx::net::HostCall>(const std::vector<std::string>& hosts)> call;
    // Called once, on the holder's thread, when the fork server runs (the session is ready).
    std::function<void()> on_ready;
    // Asked before each run that may go: what that run's client is warned of
    // first (`warning` events), one line each. Unset: nothing.
    std::function<std::vector<std::string>()> warnings;
    // The plan's timeoutSeconds, for each command apart (0: none): once it
    // has run that long its group gets SIGTERM, and SIGKILL `grace` seconds
    // later (at once with 0); its client then gets `timeout_line(killed)` as a
    // `violation` event and an exit status of sbx::kLimitStatus.
    int command_timeout = 0;
    int grace = 0;
    std::function<std::string(bool killed)> timeout_line;
    // The line of a limit a command that died of `signal` reached (SIGXCPU,
    // SIGXFSZ: sbx/settings/limits.hpp), or empty; where one is given, its
    // client gets it and an exit status of sbx::kLimitStatus.
    std::function<std::string(int signal)> signal_line;
};

class SessionHolder {
public:
    // Serves `listener` (the control socket, listening) and `server` (the
    // holder's end of the socket pair to the fork server) on a thread of its
    // own. INTERNAL when the thread or its wake-up descriptor cannot be made.
    static sbx::expected<std::unique_ptr<SessionHolder>> start(launcher::Fd listener, launcher::Fd server,
                                                               HolderConfig config);
    ~SessionHolder();
    SessionHolder(const SessionHolder&) = delete;
    SessionHolder& operator=(const SessionHolder&) = delete;

    // The sandbox has ended and been cleaned up: `closing`, what the launcher
    // said since the session was ready (its warnings and the violations
    // block), goes line by line to the clients that asked for the stop; then
    // every client is let go and the thread ends.
    void finish(std::string closing);

    // The session's proxy once it serves, or nullptr before it stops: the
    // listeners the fork server makes for each command go to it, tagged with
    // the command. Called from the launcher's thread.
    void serve_proxy(launcher::CommandProxy* proxy);

    // A refusal by the process group `tag` (a command's pid in the sandbox,
    // in decimal), as its line of the block: told to that command's client
    // while it runs, as a `violation` event. From any thread; it takes no
    // lock but its queue's.
    void refused(const std::string& tag, std::string line);

    // A question about `t` by the process group `tag` (a command's pid in the
    // sandbox), from a proxy thread (Answering::asker), which waits here for
    // its answer: put to the client of that command as an `ask` event, where
    // its run asked to be asked, and answered by that client's `answer`. An
    // answer "for the session" stands for every later command, which is
    // answered from it with no question. nullopt (refused) where no one
    // answers: the tag is no running command's, its run did not ask, its
    // client went, it ended first, or the proxy stops (serve_proxy(nullptr)).
    std::optional<launcher::Answer> ask(const sbx::net::HostTarget& t, const std::string& tag);

    // The answers given for the session so far, in the order first given.
    std::vector<sbx::net::HostAnswer> session_answers() const;

    struct State;  // session_holder.cpp

private:
    explicit SessionHolder(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

// The id of a session's closing lines in `violation` events, which the holder
// refuses as a command's.
inline constexpr std::string_view kSessionLinesId = "session";

}  // namespace sbx::linux_sandbox
