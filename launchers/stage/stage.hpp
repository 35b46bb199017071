// launchers/stage/stage.hpp - the in-sandbox stage of sbx-linux, and how it reports.
//
// bubblewrap runs `sbx-linux --stage ...` as the sandbox's first process, exec'd
// through /proc/self/fd/N from a descriptor the launcher opened on its own
// binary (so a read-denied install directory cannot hide it). bubblewrap loads
// the seccomp program the launcher built (--seccomp) into its own init (pid 1)
// and into the stage, so no process of the sandbox runs without it. Where the
// stage makes the mounts (stage/mounts.hpp: the kernel has the new mount API),
// that is the filter's first part, and the stage first makes the mounts, the
// second user namespace, drops every capability bubblewrap left it and loads
// the second part. Then the stage checks that it and pid 1 run filtered, makes
// the listening sockets of the plan's forwards and then the proxy's own (so
// that no ephemeral port of the proxy's takes a forward's), hands them all to
// the launcher, sets the loader
// variables, makes the command's terminal where the launcher asks for one
// (terminal.hpp: a pseudo-terminal on the sandbox's own devpts, whose master it
// hands to the launcher, and which becomes the controlling terminal of a
// session of the stage's own), loads the connect broker's filter last of all
// its filters where the launcher asks (base/connect_filter.hpp) and hands its
// listener over, closes every descriptor the command is not given, and execs
// the command. Where the launcher starts bubblewrap before it
// knows the plan, the stage's command line names its orders' pipe alone, and
// the rest of its arguments and the command's environment come on that pipe
// (stage_orders) before anything else is done.
// It tells the launcher how far it got on an inherited pipe:
//   nothing   the sandbox was never built (bubblewrap failed before the stage)
//   "S"       the stage ran; the command was exec'd unless more follows
//   "S" "E" + errno (4 bytes)  the command could not be exec'd
//   "S" "F" + message          the stage itself failed (a process without the filter)
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/fd_io.hpp"

namespace sbx::linux_sandbox {

inline constexpr std::string_view kStageFlag = "--stage";

// A forward's listener: `--forward ADDRESS PORT ENTRY` (ADDRESS as the plan
// writes it, 127.0.0.1 or ::1; ENTRY the allowed entry behind it, for errors).
struct StageForward {
    std::string address;
    int port = 0;
    std::string entry;
};

// What the stage needs, on its command line.
struct StageArgs {
    int exe_fd = -1;      // the descriptor the stage was exec'd from: closed before the command
    int status_fd = -1;   // the pipe above
    bool filtered = false;  // bubblewrap was given a filter: check that this process and pid 1 run under it
    int proxy_fd = -1;    // a Unix stream socket to the launcher: the stage makes the proxy's listening
                          // sockets on the sandbox's loopback and hands them over it; -1: no proxy
    std::vector<StageForward> forwards;   // listened on before the proxy's, handed over first, in this order
    bool direct_loopback = false;         // NO_PROXY names loopback (sbx/net/proxy_env.hpp): --direct-loopback
    int pty_fd = -1;      // a Unix stream socket to the launcher: the stage makes the command's terminal
                          // (launchers/shared/terminal.hpp) and hands its master over it; -1: none
    std::array<bool, 3> pty_on{};         // which of 0-2 the terminal stands in for
    int trace_fd = -1;    // the launcher's --trace-fd (trace.hpp): the stage's steps; closed before the command
    // Where the stage makes the mounts (stage/mounts.hpp): the list, the mount
    // family's filter it loads after them, and the working directory it enters
    // again; mounts_filter_fd -1: bubblewrap made them all.
    std::vector<std::string> mounts;
    int mounts_filter_fd = -1;
    // A pipe from the launcher, which starts bubblewrap before it knows the
    // rest (stage_orders): the stage's other arguments come on it, once the
    // placeholders the mounts cover are made; its end with none means the
    // launcher gave up, and the stage ends. -1: all are on the command line.
    int orders_fd = -1;
    std::vector<std::string> env;  // NAME=VALUE: the command's environment, given with the orders
    std::string cwd;
    unsigned uid = 0;  // the caller's, which the stage maps in the second user namespace it makes
    unsigned gid = 0;
    std::vector<int> keep_fds;            // the descriptors the command gets beyond 0-2 (the plan's passFds)
    // The plan's limits the kernel holds per process, set just before the
    // command is exec'd (--rlimit NAME=N): "nproc", "cpu" (seconds), "fsize"
    // and "data" (bytes). The sandbox's PID namespace's pid_max where the
    // stage makes the mounts (--pid-max N; 0: left as it is), which bounds its
    // processes whoever the caller is (RLIMIT_NPROC does not bind root).
    std::vector<std::pair<std::string, std::uint64_t>> rlimits;
    std::uint64_t pid_max = 0;
    std::vector<std::string> loader_env;  // NAME=VALUE
    // The Landlock wall (sbx/linux/write_wall.hpp): the paths beneath which the
    // command may change the file tree; empty: no wall.
    std::vector<std::string> write_wall;
    // The weaker sandbox (no bubblewrap, no namespace: where user namespaces are
    // refused and the caller asked for it): the launcher starts the stage
    // itself; the stage drops its capabilities, makes the command a Landlock
    // domain of `grants` and `connect_ports`, and loads the whole seccomp filter
    // from `filter_fd`. Each grant is "r:PATH" (read, list, execute beneath),
    // "l:PATH" (list directories beneath), "w:PATH" (change beneath, or write
    // the file), "d:PATH" (read and write that device) or "t:PATH" (read,
    // write and ioctl that device), none following a symbolic link
    // (sbx/linux/weaker_rules.hpp).
    // With `broker_filter_fd`, the stage first loads that filter with a
    // listener (launchers/linux/file_broker.hpp) and sends the listener on the Unix
    // socket `broker_fd` to the launcher, whose broker answers it.
    bool weaker = false;
    int filter_fd = -1;
    int broker_filter_fd = -1;
    int broker_fd = -1;
    // The file broker's filter sends connect() to its listener as well (for the
    // connect broker: a process may have one listener only). Then the stage
    // fails where it cannot load it, as the command's connections would go
    // undecided.
    bool broker_connects = false;
    std::vector<std::string> grants;
    std::vector<int> connect_ports;  // TCP ports connect() may reach (the proxy's)
    // A Unix stream socket to the launcher: the stage loads the connect
    // broker's filter last (after the weaker sandbox's whole filter too) and
    // hands its listener over it (launchers/linux/connect_broker.hpp); -1: no broker.
    int connect_fd = -1;
    // The command's TMPDIR, a tmpfs of the sandbox's own: the stage opens it
    // (O_PATH) and hands it over with the connect broker's listener, which
    // connects the command's own sockets there through it (the launcher's view
    // of the path is the host's empty mount point). Empty: not sent.
    std::string own_dir;
    std::vector<std::string> command;
};

// A descriptor on the stage's program, which the sandbox runs first: sbx-stage
// where it lies beside this program or, in a build tree, in launchers/ (a static
// program starts fastest), else this program, whose --stage mode does the same
// (sbx-linux's and sbx's). Opened outside the sandbox, so that
// a directory the plan hides cannot hide it. None, with errno, on failure.
launcher::Fd open_stage_binary();

// The path of the sbx-stage open_stage_binary() would open; empty when it would
// open this program itself. (sbx hands it to the engine, which protects it where
// a command could replace it: sbx/rules/own_programs.hpp.)
std::string stage_binary_path();

std::vector<std::string> stage_argv(const StageArgs& a);

// Where the orders come later (orders_fd): the command line that starts the
// stage (its binary, status and orders descriptors, and the trace's), and the
// orders, which say the rest and the command's environment, each word ending
// in a NUL.
std::vector<std::string> stage_waiting_argv(const StageArgs& a);
std::string stage_orders(const StageArgs& a);

// Parses the stage's own arguments (after kStageFlag); false when malformed. With
// --orders-fd the rest may come in the orders.
bool parse_stage_args(int argc, char** argv, StageArgs& out);

// Reads the orders on `fd` to their end (and closes it), parsed into `out`,
// which holds what the command line said: the orders must name the same
// descriptors. Empty on success, else why not; with nothing at all to read,
// empty and `gave_up` (the launcher ended the sandbox).
std::string read_stage_orders(int fd, StageArgs& out, bool& gave_up);

// Runs the stage; returns only when it failed (an exit status for main).
int run_stage(const StageArgs& a);

// What the launcher read from the status pipe once bubblewrap was gone.
struct StageReport {
    bool started = false;   // "S" seen
    int exec_errno = 0;     // non-zero: the command could not be exec'd
    std::string failure;    // non-empty: the stage failed before exec
};

StageReport parse_stage_report(std::string_view bytes);

}  // namespace sbx::linux_sandbox
