// options.hpp - what each subcommand of sbx takes from its command line.
//
// Plain values: main.cpp, the one file that includes CLI11, registers the
// options and fills these in (the add_* members are defined there).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/net/hosts.hpp"
#include "sbx/rules/network.hpp"

#include "shared/signals.hpp"  // launchers/: the grace period after a signal

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace sbx::cli {

// The defaults of `sbx run`, which `sbx plan` shares. A host no rule decides is
// asked about on the terminal; with no terminal the launcher refuses it. File
// refusals are read from the command's standard error when a program reads it: on
// a terminal the command keeps the terminal (and its person sees the errors),
// unless --scan-stderr.
inline constexpr std::string_view kRunUnknownHost = sbx::net::unknown_host_name(sbx::net::kRunUnknownHost);
bool run_scans_stderr();

// How many times `sbx run` plans before it gives up on a plan the disk keeps
// making stale.
inline constexpr int kRunAttempts = 5;

// Whether a root that is or holds your home directory is refused: `sbx plan` and
// `sbx run` refuse it unless --allow-home-root; `sbx policy` and `sbx explain`
// run nothing.
enum class HomeRoot { allowed, refused };

// The options every command that reads settings takes.
struct SettingsArgs {
    std::string root;                    // --root; see root_given()
    CLI::Option* root_option = nullptr;  // counts whether --root was given
    std::vector<std::string> settings;
    std::string managed;
    bool untrusted = false;
    bool json = false;
    std::string agent_file;
    bool skill_script = false;    // --skill-script: the agent file's block, or strict when none or off
    bool weaker_sandbox = false;  // --weaker-sandbox (sbx plan and sbx run only): PlanArgs::add_weaker_sandbox_to
    std::vector<std::string> limits;  // --limit KEY=N, as given (sbx plan, run, session start): PlanArgs::add_limits_to

    bool root_given() const;
    void add_to(CLI::App* cmd, bool with_json = true);
};

// `sbx plan`'s options, which `sbx run` takes too.
struct PlanArgs {
    SettingsArgs settings;
    std::vector<std::string> pass_env;
    std::vector<std::string> allow_hosts;  // the call's own hosts
    std::string on_unknown_host;           // deny, allow, ask; empty: the command's default
    std::string answers;                   // --answers FILE: answers held for the session (answers.hpp)
    bool scan_stderr = false, no_scan_stderr = false;  // neither: the command's default
    std::vector<std::string> pass_fd_args;  // --pass-fd, as given
    std::vector<int> pass_fds;              // the same, checked by descriptors_to_pass (the plan's are sorted)
    std::vector<std::string> command;
    bool allow_home_root = false;  // --allow-home-root
    bool no_tool_cache = false;    // --no-tool-cache
    std::string launcher;          // sbx run's --launcher, whose programs the plan protects too

    HomeRoot home_root() const { return allow_home_root ? HomeRoot::allowed : HomeRoot::refused; }

    void add_tool_cache_to(CLI::App* cmd);
    void add_home_root_to(CLI::App* cmd);
    void add_weaker_sandbox_to(CLI::App* cmd);
    void add_limits_to(CLI::App* cmd);
    void add_pass_fd_to(CLI::App* cmd);
    void add_network_to(CLI::App* cmd);
};

struct ExplainArgs {
    SettingsArgs settings;
    std::string path;
    std::string host;                      // --host HOST[:PORT]
    std::string socket;                    // --socket PATH: a Unix socket by path
    std::vector<std::string> allow_hosts;  // as sbx run's
    std::string on_unknown_host{kRunUnknownHost};  // as sbx run's default
    std::string answers;                   // as sbx run's --answers
};

struct CheckArgs {
    SettingsArgs settings;
    std::string file;
};

struct RouteArgs {
    SettingsArgs settings;
    std::vector<std::string> line;  // LINE (one argument) or COMMAND... (route.cpp)
    std::string mode;               // --mode: a permission mode's name
    bool dangerously_disable_sandbox = false;
    std::string caller;             // --caller owner|other: other gets only confined commands
    std::string request;            // --request-json FILE|-: the whole call (sbx/route/request.hpp)
};

struct DiffArgs {
    SettingsArgs settings;
    std::string base;                // --base REV
    std::vector<std::string> files;  // OLD.json NEW.json
    bool fail_on_widening = false;
};

struct RunArgs {
    PlanArgs plan;
    std::string launcher;
    int attempt = 1;  // --attempt N: sbx's own, when the launcher runs it again
    bool pty = false;     // --pty: a terminal of the command's own even without one here
    bool no_pty = false;  // --no-pty: the caller's descriptors as they are, terminal or not
    bool allow_clipboard_write = false;  // --allow-clipboard-write: OSC 52 reaches the caller's terminal
    bool quiet = false;  // --quiet: none of sbx's informational lines (the root, the variables left out)
    bool unsandboxed = false;  // --unsandboxed: run a command excludedCommands sends outside, unconfined
    int grace = sbx::launcher::kDefaultGrace;  // --grace SECONDS: after a signal, before the sandbox is killed
    int trace_fd = -1;    // --trace-fd N: each step's time, here and in the launcher (launchers/base/trace.hpp)
    std::uint64_t started = 0;  // when main began, for --trace-fd
    std::string session;  // --session ID: run the command in that session (session.cpp)
};

// How long a session waits with no command running before it ends (--idle).
inline constexpr int kDefaultSessionIdle = 3600;  // seconds

// `sbx session start|stop|list`.
struct SessionArgs {
    PlanArgs plan;  // start: sbx run's settings and network options; the command is the session's
    int grace = sbx::launcher::kDefaultGrace;  // start: --grace, as sbx run's
    int idle = kDefaultSessionIdle;            // start: --idle SECONDS (0: never)
    bool quiet = false;                        // start: --quiet, as sbx run's
    int owner = 0;                             // start: --owner PID: the session ends when PID does
    std::string id;                            // stop, expose: the session
    unsigned port = 0;                         // expose: the session's port
    std::optional<unsigned> on;                // expose: --on PORT of the host's loopback (0: any free one)
};

struct DoctorArgs {
    bool json = false;
    std::string launcher;
    std::string agent_file;  // --agent-file: also say how this agent file's commands would be confined
};

}  // namespace sbx::cli
