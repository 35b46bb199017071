// sbx - the command line people run: its options, parsed with CLI11 (this is
// the one file that includes it), and the dispatch to the subcommands, one file
// each in this folder.
//
//   sbx policy  [--root DIR] [--settings FILE] [--managed-settings FILE] [--untrusted] [--agent-file FILE] [--json]
//   sbx explain [same options] PATH | --host HOST[:PORT]
//   sbx check   [same options] FILE
//   sbx diff    [same options] [--fail-on-widening] --base REV | OLD.json NEW.json
//   sbx route   [same options] [--mode MODE] [--dangerously-disable-sandbox] [--caller owner|other] [--request-json FILE|-] [LINE | -- COMMAND [ARG...]]
//   sbx plan    [same options] [--allow-home-root] [--no-tool-cache] [--weaker-sandbox] [--env NAME]... [--pass-fd N]... -- COMMAND [ARG...]
//   sbx run     [same options] [--allow-home-root] [--no-tool-cache] [--weaker-sandbox] [--env NAME]... [--pass-fd N]... [--[no-]scan-stderr] [--unsandboxed] [--launcher PATH] -- COMMAND [ARG...]
//   sbx doctor  [--json] [--agent-file FILE] [--launcher PATH]
//   sbx session start [sbx run's settings and network options] [--grace S] [--idle S] [--owner PID] [--quiet]
//   sbx session stop ID | sbx session list | sbx session expose ID PORT [--on PORT]
//   sbx run --session ID -- COMMAND [ARG...]
//
// With no --root, the root is the project the current directory is in
// (sbx::find_project_root: the top of its git work tree, else the nearest folder
// with a .claude folder, else the current directory; never the home directory or
// /). Each command says which root it chose and why; the command still starts in
// the current directory. Every subcommand composes what `sbx run` would run in
// one place (compose.hpp).
//
// Only this folder prints and picks exit statuses (cli_common.hpp); the engine
// returns values.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <climits>
#include <exception>
#include <optional>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/net/hosts.hpp"
#include "sbx/settings/policy.hpp"

#include "cli_common.hpp"
#include "commands.hpp"
#include "own_programs.hpp"
#include "shared/common.hpp"  // launchers/: --grace's limit
#if defined(__linux__)
#include "stage/session_server.hpp"  // launchers/: a session's fork server, should sbx-stage not be there
#include "stage/stage.hpp"  // launchers/: the stage, should sbx-stage not be there
#endif
#include "base/connect_relay.hpp"  // launchers/: ssh's ProxyCommand, where sbx is the relay
#include "base/trace.hpp"  // launchers/: when main began, for --trace-fd

namespace sbx::cli {

// ---- The options each subcommand shares (options.hpp) -----------------------------

bool SettingsArgs::root_given() const { return root_option != nullptr && root_option->count() > 0; }

void SettingsArgs::add_to(CLI::App* cmd, bool with_json) {
    root_option = cmd->add_option("--root", root,
                                  "The project directory (default: the top of the git work tree holding the current "
                                  "directory, else the nearest folder above with a .claude folder, else the current "
                                  "directory; never your home directory or /)");
    cmd->add_option("--settings", settings,
                    "More settings files, above the project's and below managed ones; a later one ranks higher")
        ->take_all()
        ->allow_extra_args(false);
    cmd->add_option("--managed-settings", managed, "Read managed settings from FILE instead of the system path");
    cmd->add_flag("--untrusted", untrusted, "The project is not trusted: keep only what tightens the sandbox");
    cmd->add_option("--agent-file", agent_file,
                    "Confine as the sandbox block of this agent file says (a layer just below --settings)");
    cmd->add_flag("--skill-script", skill_script,
                  "The command is one of the agent's SKILL.md scripts: it runs under the agent file's sandbox block, "
                  "or strict when the file declares none or turns the sandbox off");
    if (with_json) cmd->add_flag("--json", json, "Print JSON instead of text");
}

namespace {

// What --on-unknown-host takes.
std::vector<std::string> unknown_host_choices() {
    std::vector<std::string> out;
    for (const auto& entry : sbx::net::kUnknownHostNames) out.emplace_back(entry.first);
    return out;
}

}  // namespace

void PlanArgs::add_tool_cache_to(CLI::App* cmd) {
    cmd->add_flag("--no-tool-cache", no_tool_cache,
                  "Give the command no writable cache home of the project's (XDG_CACHE_HOME, npm, Go, pip, ccache, "
                  "cargo...): tools then find their caches read-only");
}

void PlanArgs::add_home_root_to(CLI::App* cmd) {
    cmd->add_flag("--allow-home-root", allow_home_root,
                  "Accept a root that is or holds your home directory, although every dotfile in it (shell "
                  "start-up files, ~/.local/bin, ~/.config) is then writable to the command");
}

void PlanArgs::add_weaker_sandbox_to(CLI::App* cmd) {
    cmd->add_flag(std::string(sbx::kWeakerSandboxOption), settings.weaker_sandbox,
                  "Where user namespaces are refused, run with the weaker sandbox (Landlock and seccomp, no "
                  "namespaces) instead of refusing; see 'The weaker sandbox' in README.md");
}

void PlanArgs::add_limits_to(CLI::App* cmd) {
    cmd->add_option(std::string(sbx::kLimitOption), settings.limits,
                    "Set a limit (timeoutSeconds, memoryMiB, processes, cpuSeconds, fileSizeMiB) for this command, "
                    "as sandbox.limits in your user settings would; the lowest of it, your settings and managed "
                    "settings holds")
        ->type_name("KEY=N")
        ->take_all()
        ->allow_extra_args(false);
}

void PlanArgs::add_pass_fd_to(CLI::App* cmd) {
    cmd->add_option("--pass-fd", pass_fd_args,
                    "Pass the open descriptor N (3 or more) to the command; by default it gets only 0, 1 and 2")
        ->type_name("N")
        ->take_all()
        ->allow_extra_args(false);
}

void PlanArgs::add_network_to(CLI::App* cmd) {
    cmd->add_option("--allow-host", allow_hosts,
                    "Let the command reach PATTERN (github.com, *.pypi.org, 127.0.0.1:3000) and refuse every host no "
                    "settings list allows")
        ->take_all()
        ->allow_extra_args(false);
    cmd->add_option("--on-unknown-host", on_unknown_host,
                    "What to do with a host no rule decides: deny, allow, or ask on the terminal")
        ->check(CLI::IsMember(unknown_host_choices()));
    cmd->add_option("--answers", answers,
                    "Answers about hosts held for this session, in FILE (kept outside every place the command "
                    "writes); sbx run adds the ones you give for the session")
        ->type_name("FILE");
    auto* scan = cmd->add_flag("--scan-stderr", scan_stderr,
                               "Report the file refusals the command prints on standard error (advisory)");
    auto* no_scan = cmd->add_flag("--no-scan-stderr", no_scan_stderr, "Do not read the command's standard error");
    scan->excludes(no_scan);
}

namespace {

// ---- Each subcommand's options -----------------------------------------------------

// The options of every subcommand, filled in by CLI11, and the subcommands.
struct Cli {
    CLI::App app{"sbx: confine one command with the operating system's own sandbox", "sbx"};
    SettingsArgs policy_args;
    ExplainArgs explain_args;
    CheckArgs check_args;
    DiffArgs diff_args;
    RouteArgs route_args;
    PlanArgs plan_args;
    RunArgs run_args;
    DoctorArgs doctor_args;
    SessionArgs session_args;
    CLI::App *policy = nullptr, *explain = nullptr, *check = nullptr, *diff = nullptr, *route = nullptr,
             *plan = nullptr, *run = nullptr, *doctor = nullptr, *session = nullptr, *session_start = nullptr,
             *session_stop = nullptr, *session_list = nullptr, *session_expose = nullptr;
};

void add_policy(Cli& c) {
    c.policy = c.app.add_subcommand("policy", "Print the effective policy, each value with the layer that set it");
    c.policy_args.add_to(c.policy);
}

void add_explain(Cli& c) {
    ExplainArgs& ea = c.explain_args;
    auto* explain = c.explain =
        c.app.add_subcommand("explain", "Say whether a command may read and write PATH, and which rule says so");
    ea.settings.add_to(explain);
    auto* explain_path = explain->add_option(
        "path", ea.path, "The path, absolute, or relative to --root when given and else to the current directory");
    auto* explain_host_opt =
        explain->add_option("--host", ea.host, "Explain HOST[:PORT] (default port 443) instead of a path");
    auto* explain_socket_opt = explain->add_option(
        "--socket", ea.socket, "Explain connecting to the Unix socket PATH instead (allowUnixSockets)");
    explain_path->excludes(explain_host_opt);
    explain_path->excludes(explain_socket_opt);
    explain_host_opt->excludes(explain_socket_opt);
    explain->add_option("--allow-host", ea.allow_hosts, "As sbx run's --allow-host")
        ->take_all()
        ->allow_extra_args(false);
    explain->add_option("--on-unknown-host", ea.on_unknown_host, "As sbx run's (default: ask)")
        ->check(CLI::IsMember(unknown_host_choices()));
    explain->add_option("--answers", ea.answers, "As sbx run's: the answers held for the session")->type_name("FILE");
}

void add_check(Cli& c) {
    c.check = c.app.add_subcommand("check", "Decide each expectation of a check file as sbx run would, as TAP; exit 1 "
                                            "when one does not hold");
    c.check_args.settings.add_to(c.check);
    c.check->add_option("file", c.check_args.file, "The check file: {\"expect\": [{\"read\": PATH, \"allowed\": false}, ...]}")
        ->required();
}

void add_diff(Cli& c) {
    DiffArgs& da = c.diff_args;
    auto* diff = c.diff = c.app.add_subcommand("diff", "Say what a settings change opens and closes: the project's settings at a "
                                                       "git revision against the work tree, or two settings files");
    da.settings.add_to(diff);
    auto* diff_base = diff->add_option("--base", da.base,
                                       "Compare the project's settings files at this git revision with the work tree's");
    diff->add_option("files", da.files, "OLD.json NEW.json: two settings files, each in place of the project's "
                                        ".claude/settings.json")
        ->excludes(diff_base);
    diff->add_flag("--fail-on-widening", da.fail_on_widening, "Exit 1 when anything became more open");
}

// What modes --mode takes.
std::vector<std::string> mode_choices() {
    std::vector<std::string> out;
    for (auto m : sbx::kPermissionModes) out.emplace_back(sbx::mode_name(m));
    return out;
}

void add_route(Cli& c) {
    RouteArgs& ra = c.route_args;
    auto* route = c.route = c.app.add_subcommand(
        "route", "Say where a host should run a shell command line (in the sandbox or outside) and whether it needs "
                 "approval, and which rule says so");
    ra.settings.add_to(route);
    route->add_option("line", ra.line,
                      "The command line as one argument, as the host received it ('git push origin main'), or a "
                      "command and its arguments, which are quoted and joined into one");
    auto* mode = route->add_option("--mode", ra.mode, "The permission mode of the call (default: the settings' "
                                                      "defaultMode, else default)")
                     ->check(CLI::IsMember(mode_choices()));
    auto* disable = route->add_flag("--dangerously-disable-sandbox", ra.dangerously_disable_sandbox,
                                    "The call asks to run outside the sandbox (honoured only where "
                                    "allowUnsandboxedCommands is not false)");
    auto* caller = route->add_option("--caller", ra.caller,
                                     "Who asks: the owner (the default), or other, who gets only confined commands")
                       ->check(CLI::IsMember(std::vector<std::string>{"owner", "other"}));
    route->add_option("--request-json", ra.request,
                      "Read the whole call as JSON from FILE ('-': standard input): command, mode, "
                      "dangerouslyDisableSandbox, allowedDomains, permissions, caller (README.md, sbx route)")
        ->excludes(mode)
        ->excludes(disable)
        ->excludes(caller);
}

// The options `sbx plan` and `sbx run` both take, but for --json, which only
// `sbx plan` takes (its output is JSON either way).
void add_plan_options(CLI::App* cmd, PlanArgs& pa, bool with_json) {
    pa.settings.add_to(cmd, with_json);
    cmd->add_option("--env", pa.pass_env, "Pass the variable NAME to the command although it looks like a secret")
        ->take_all()
        ->allow_extra_args(false);
    pa.add_network_to(cmd);
    pa.add_pass_fd_to(cmd);
    pa.add_home_root_to(cmd);
    pa.add_tool_cache_to(cmd);
    pa.add_weaker_sandbox_to(cmd);
    pa.add_limits_to(cmd);
}

void add_plan(Cli& c) {
    c.plan = c.app.add_subcommand("plan", "Print the plan for a command as JSON (docs/plan.md)");
    add_plan_options(c.plan, c.plan_args, true);
    c.plan->add_option("command", c.plan_args.command, "The command and its arguments (after -- when it starts with -)")
        ->required();
}

// sbx run's own options, beyond sbx plan's: the attempts, the launcher, the
// terminal, signals, quiet and the trace.
void add_run_own_options(CLI::App* run, RunArgs& ra) {
    run->add_option("--attempt", ra.attempt, "sbx's own: the attempt this is, when the launcher runs sbx again")
        ->check(CLI::Range(1, kRunAttempts))
        ->group("");
    run->add_option("--started-as", g_started_as, "sbx's own: the name the first attempt was started by")
        ->needs(run->get_option("--attempt"))
        ->group("");
    run->add_option("--launcher", ra.launcher, "The launcher to use (default: sbx-linux, or sbx-mac on macOS, beside sbx)");
    auto* pty_flag = run->add_flag("--pty", ra.pty,
                                   "Give the command a terminal of its own even when none of 0-2 is a terminal "
                                   "(the default when one is)");
    run->add_flag("--no-pty", ra.no_pty,
                  "Give the command the caller's descriptors as they are, terminal or not: no job control inside, "
                  "and what it writes to your terminal is not filtered (tags, OSC 52); modes and line discipline are "
                  "restored after, but answers to its terminal queries that arrive after it ends reach your shell")
        ->excludes(pty_flag);
    run->add_flag("--allow-clipboard-write", ra.allow_clipboard_write,
                  "Let the command set your terminal's clipboard (OSC 52) through its terminal; dropped by default");
    run->add_option("--grace", ra.grace,
                    "Seconds the command has to end after sbx passes it SIGTERM, SIGHUP or SIGQUIT, before its "
                    "sandbox is killed (0: at once, SIGINT too; SIGINT alone kills nothing, as outside)")
        ->check(CLI::Range(0, sbx::launcher::kMaxGrace))
        ->default_val(sbx::launcher::kDefaultGrace)
        ->option_text("SECONDS (default 10)");
    run->add_flag("--quiet", ra.quiet,
                  "Print none of sbx's informational lines (the root found above the current directory, the variables "
                  "left out of the environment); refusals and warnings still print");
    run->add_flag("--unsandboxed", ra.unsandboxed,
                  "Run a command an excludedCommands pattern takes out of the sandbox outside it, unconfined, saying "
                  "so before and after (without this, sbx run refuses such a command)");
    run->add_option("--trace-fd", ra.trace_fd,
                    "Write each step's time to descriptor N, a line of JSON per step (docs/plan.md)")
        ->check(CLI::Range(3, INT_MAX));
}

void add_run(Cli& c) {
    c.run = c.app.add_subcommand("run", "Run a command in the sandbox");
    add_plan_options(c.run, c.run_args.plan, false);
    add_run_own_options(c.run, c.run_args);
    c.run->add_option("--session", c.run_args.session,
                      "Run the command in the session ID (sbx session start), which alone decides how it is "
                      "confined: no other option goes with it")
        ->type_name("ID");
    c.run->add_option("command", c.run_args.plan.command, "The command and its arguments (after -- when it starts with -)")
        ->required();
}

void add_session(Cli& c) {
    c.session = c.app.add_subcommand("session", "Keep one sandbox for many commands (docs/sessions.md)");
    c.session->require_subcommand(1);
    auto& sa = c.session_args;
    c.session_start = c.session->add_subcommand(
        "start", "Make the root's sandbox as sbx run would, keep it, and print its id; commands then run in it with "
                 "sbx run --session ID");
    sa.plan.settings.add_to(c.session_start, false);
    c.session_start->add_option("--env", sa.plan.pass_env, "As sbx run's: pass NAME to every command of the session")
        ->take_all()
        ->allow_extra_args(false);
    sa.plan.add_network_to(c.session_start);
    sa.plan.add_home_root_to(c.session_start);
    sa.plan.add_tool_cache_to(c.session_start);
    sa.plan.add_limits_to(c.session_start);
    c.session_start->add_option("--grace", sa.grace, "As sbx run's, for the session's end")
        ->check(CLI::Range(0, sbx::launcher::kMaxGrace))
        ->default_val(sbx::launcher::kDefaultGrace);
    c.session_start->add_option("--idle", sa.idle,
                                "End the session after SECONDS with no command running (0: never; default 3600)")
        ->check(CLI::Range(0, 30 * 24 * 3600))
        ->default_val(kDefaultSessionIdle)
        ->type_name("SECONDS");
    c.session_start->add_flag("--quiet", sa.quiet, "As sbx run's");
    c.session_start->add_option("--owner", sa.owner,
                                "End the session when the process PID ends (an agent host gives its own pid)")
        ->check(CLI::Range(1, INT_MAX))
        ->type_name("PID");
    c.session_stop = c.session->add_subcommand("stop", "End a session: its commands, its checks after, nothing left");
    c.session_stop->add_option("id", sa.id, "The session's id")->required();
    c.session_list = c.session->add_subcommand("list", "List this user's sessions: id, root, commands running");
    c.session_expose = c.session->add_subcommand(
        "expose", "Let programs outside reach a server in the session: PORT of its loopback on the host's 127.0.0.1");
    c.session_expose->add_option("id", sa.id, "The session's id")->required();
    c.session_expose->add_option("port", sa.port, "The port a server listens on in the session")
        ->required()
        ->check(CLI::Range(1, 65535));
    c.session_expose->add_option("--on", sa.on, "The port on the host's 127.0.0.1 (default: the same; 0: any free one)")
        ->type_name("PORT")
        ->check(CLI::Range(0, 65535));
}

// What sbx run was given besides --session and the command, which a session
// decides alone: empty when nothing.
std::string beside_session(const CLI::App* run) {
    std::string given;
    for (const CLI::Option* o : run->get_options())
        if (o->count() > 0 && o->get_name() != "--session" && o->get_name() != "command" && o->get_name() != "--help")
            given += (given.empty() ? "" : ", ") + o->get_name();
    return given;
}

void add_doctor(Cli& c) {
    c.doctor = c.app.add_subcommand("doctor", "Check whether the sandbox can run here, and what to do if not");
    c.doctor->add_flag("--json", c.doctor_args.json, "Print JSON instead of text");
    c.doctor->add_option("--agent-file", c.doctor_args.agent_file,
                         "Also say which preset this agent file's commands run under, and where it came from");
    c.doctor->add_option("--launcher", c.doctor_args.launcher,
                         "The launcher to ask (default: sbx-linux, or sbx-mac on macOS, beside sbx)");
}

void add_commands(Cli& c) {
    c.app.require_subcommand(1);
    c.app.set_version_flag("--version", "sbx 0.1.0");
    add_policy(c);
    add_explain(c);
    add_check(c);
    add_diff(c);
    add_route(c);
    add_plan(c);
    add_run(c);
    add_doctor(c);
    add_session(c);
}

// ---- Parsing and dispatch ----------------------------------------------------------

// Whether argv[1] is a word that names no subcommand (an option is CLI11's to judge).
bool unknown_command(const Cli& c, int argc, char** argv) {
    const auto commands = c.app.get_subcommands([](const CLI::App*) { return true; });
    const bool known = argc > 1 && std::any_of(commands.begin(), commands.end(),
                                               [&](const CLI::App* cmd) { return cmd->check_name(argv[1]); });
    return argc > 1 && argv[1][0] != '-' && !known;
}

// `sbx run ls -la` as `sbx run -- ls -la`: the first word that is no option of
// run's, plan's or route's (nor an option's value) starts the command.
std::vector<char*> with_dashes(const Cli& c, int argc, char** argv) {
    std::vector<char*> args(argv, argv + argc);
    static char dashes[] = "--";
    if (argc <= 2) return args;
    const CLI::App* sub = c.run->check_name(argv[1])     ? c.run
                          : c.plan->check_name(argv[1])  ? c.plan
                          : c.route->check_name(argv[1]) ? c.route
                                                         : nullptr;
    for (std::size_t i = 2; sub != nullptr && i < args.size();) {
        const std::string_view arg = args[i];
        if (arg == "--") break;
        if (arg.empty() || arg[0] != '-' || arg == "-") {
            args.insert(args.begin() + static_cast<std::ptrdiff_t>(i), dashes);
            break;
        }
        const CLI::Option* opt = sub->get_option_no_throw(std::string(arg.substr(0, arg.find('='))));
        if (opt == nullptr) break;  // CLI11 names it
        i += opt->get_expected_min() > 0 && arg.find('=') == std::string_view::npos ? 2 : 1;
    }
    return args;
}

// Runs the subcommand the command line names.
int dispatch(Cli& c) {
    if (*c.policy) return run_policy(c.policy_args);
    if (*c.explain) {
        const auto& e = c.explain_args;
        if (!e.path.empty() + !e.host.empty() + !e.socket.empty() != 1) {
            std::cerr << "sbx: USAGE: explain needs a path, --host HOST[:PORT] or --socket PATH (see sbx explain --help)\n";
            return kUsage;
        }
        return run_explain(c.explain_args);
    }
    if (*c.check) return run_check(c.check_args);
    if (*c.diff) return run_diff(c.diff_args);
    if (*c.route) return run_route(c.route_args);
    if (*c.plan) return run_plan(c.plan_args);
    if (*c.run && c.run->get_option("--session")->count() > 0) {
        if (const auto given = beside_session(c.run); !given.empty()) {
            std::cerr << "sbx: USAGE: --session takes no other option of sbx run (given: " << given
                      << "): the session decides how its commands are confined\n";
            return kRunFailed;
        }
        return run_in_session(c.run_args);
    }
    if (*c.run) return run_run(c.run_args);
    if (*c.session_start) return run_session_start(c.session_args);
    if (*c.session_stop) return run_session_stop(c.session_args);
    if (*c.session_list) return run_session_list(c.session_args);
    if (*c.session_expose) return run_session_expose(c.session_args);
    if (*c.doctor) return run_doctor(c.doctor_args);
    return kUsage;
}

// Parses the command line and runs the subcommand; help, the version and usage
// errors are said here.
int parse_and_run(Cli& c, int argc, char** argv) {
    std::vector<char*> args = with_dashes(c, argc, argv);
    try {
        c.app.parse(static_cast<int>(args.size()), args.data());
    } catch (const CLI::CallForHelp& e) {
        return c.app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return c.app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return c.app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "sbx: USAGE: " << e.what() << " (see sbx --help)\n";
        // `sbx run` promises 125 for anything that stops the command before it runs.
        return argc > 1 && c.run->check_name(argv[1]) ? kRunFailed : kUsage;
    }
    try {
        return dispatch(c);
    } catch (const std::exception& e) {
        std::cerr << "sbx: INTERNAL: " << e.what() << "\n";
        return *c.run ? kRunFailed : kInternal;
    }
}

}  // namespace

}  // namespace sbx::cli

namespace {

// `run --session ID [--] COMMAND...` exactly (ID a word of its own, the
// command not starting with '-' unless after "--"); nullopt for anything else.
std::optional<sbx::cli::RunArgs> session_run_args(int argc, char** argv) {
    if (argc < 5 || std::string_view(argv[1]) != "run" || std::string_view(argv[2]) != "--session" || argv[3][0] == '-')
        return std::nullopt;
    int first = 4;
    if (std::string_view(argv[first]) == "--") ++first;
    else if (argv[first][0] == '-') return std::nullopt;
    if (first >= argc) return std::nullopt;
    sbx::cli::RunArgs a;
    a.session = argv[3];
    a.plan.command.assign(argv + first, argv + argc);
    return a;
}

}  // namespace

int main(int argc, char** argv) {
    using namespace sbx::cli;
    const std::uint64_t started = sbx::launcher::Trace::now();
    // ssh's ProxyCommand inside the sandbox, where sbx is the program the
    // launcher names (launchers/base/connect_relay.hpp).
    if (argc >= 2 && argv[1] == sbx::launcher::kConnectFlag)
        return sbx::launcher::run_connect_relay("sbx", argc - 2, argv + 2);
#if defined(__linux__)
    // The stage, where no sbx-stage lies beside this program (launchers/stage/stage.hpp).
    if (argc >= 2 && argv[1] == sbx::linux_sandbox::kStageFlag) {
        sbx::linux_sandbox::StageArgs stage;
        if (!sbx::linux_sandbox::parse_stage_args(argc - 2, argv + 2, stage)) {
            std::cerr << "sbx: USAGE: --stage is the sandbox's own, inside it\n";
            return kRunFailed;
        }
        return sbx::linux_sandbox::run_stage(stage);
    }
    // A session's fork server, where no sbx-stage lies beside this program.
    if (argc >= 2 && argv[1] == sbx::linux_sandbox::kServeSessionFlag)
        return sbx::linux_sandbox::run_session_server(argc - 2, argv + 2);
#endif
    // `sbx run --session ID [--] COMMAND...`, the way a host starts a session's
    // command, without the command line's parser: it runs per command, and
    // making the parser costs more than the rest. Any other form takes the
    // parser, which says what is wrong with it.
    if (auto in_session = session_run_args(argc, argv)) return run_in_session(*in_session);
    g_arguments.assign(argv, argv + argc);
    Cli cli;
    add_commands(cli);
    cli.run_args.started = started;
    if (unknown_command(cli, argc, argv)) {
        std::cerr << "sbx: USAGE: unknown command '" << argv[1]
                  << "'; the commands are: policy, explain, check, diff, route, plan, run, doctor, session (see sbx --help)\n";
        return kUsage;
    }
    return parse_and_run(cli, argc, argv);
}
