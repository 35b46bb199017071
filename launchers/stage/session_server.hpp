// launchers/stage/session_server.hpp - a session's fork server, inside the sandbox.
//
// A session (docs/sessions.md) is a sandbox made once by the usual run, whose
// command is this server: `STAGE --serve-session FD`, run by the stage after
// every mount, filter and Landlock rule, as any command is. It holds the
// session's side of the socket pair to its holder (base/session_wire.hpp,
// passed as the plan's descriptor FD) and, for each run the holder sends,
// starts the command with posix_spawn: a session and process group of its
// own, the three descriptors sent on 0-2 and nothing else (or, for a 'T', a
// terminal it makes on the sandbox's devpts, run as a shell runs a job: a
// fork of the server leads the terminal's session and starts the command in a
// process group of its own in the foreground, so that the command's end sends
// nothing of its background a SIGHUP), the directory and
// the arguments sent, the environment sent (the holder made it of the run's
// own, by the session's policy) or else the server's own (the session's,
// made by the plan), and over it what each command has of its own: a TMPDIR made in the
// session's, and, where the session has a proxy (`--serve-session FD
// --proxied`), two listeners of its own on the sandbox's loopback, whose ports
// its proxy variables name and which go to the holder for the proxy outside
// to serve, tagged with the command's pid: each refusal is told to the
// command's client. Each command is a child of a process that already runs
// under every filter, with no capability, in the sandbox's mounts: it is
// confined exactly as the command of `sbx run` is, by construction.
//
// It tells the holder when each command started and when its first process
// ended. What a command leaves running in the background stays, a child of
// the sandbox's init, until the session ends, and so do its TMPDIR and
// listeners while any process of its group lives (one that leaves the group,
// with setsid, keeps neither). When the holder says so or is gone, the server
// sends every process it can signal SIGTERM, waits a moment, and ends; the
// sandbox's init ends with it, and the kernel kills what is left of its PID
// namespace.
//
// The commands run as the server does, so it makes itself undumpable: they
// cannot trace it or open its descriptors through /proc. They can signal it,
// which ends their own session.
#pragma once

#include <string_view>

namespace sbx::linux_sandbox {

inline constexpr std::string_view kServeSessionFlag = "--serve-session";
inline constexpr std::string_view kServeSessionProxied = "--proxied";
// `--cpu N`: each command's CPU time is limited to N seconds (RLIMIT_CPU, set
// on it as it starts; the server's own is not).
inline constexpr std::string_view kServeSessionCpu = "--cpu";

// `argv` after kServeSessionFlag: the socket's descriptor, then
// kServeSessionProxied where the session has a proxy. Returns the exit
// status of the server (0 when the session ended as asked, 125 on a usage
// error or a socket that is not one).
int run_session_server(int argc, char** argv);

}  // namespace sbx::linux_sandbox
