// launchers/shared/common.hpp - what both launchers (sbx-linux, sbx-mac) do alike once
// the command runs: the report on --report-fd, questions about hosts (on the
// terminal, or to the caller over --control-fd), the relay of the command's
// standard error, the <sandbox_violations> block, and small helpers. Their
// skeleton (options, plan, the fallback) is launcher_main.hpp; signals, signals.hpp.
#pragma once

#include <sys/types.h>

#include <atomic>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "base/fd_io.hpp"
#include "proxy/host_lookup.hpp"
#include "proxy/proxy.hpp"
#include "sbx/core/error.hpp"
#include "sbx/core/json_write.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/plan/report.hpp"
#include "sbx/rules/git_audit.hpp"
#include "shared/freeze.hpp"
#include "shared/terminal.hpp"

namespace sbx::launcher {

using proxy::ProxyEvent;

// --plan-fd N, --report-fd N and --control-fd N: `value` must name an open
// descriptor, which is then kept from the command (close-on-exec). Returns the
// usage message, or an empty string when the value was taken into `out`.
std::string take_fd_option(std::string_view option, const char* value, int& out);
// --grace SECONDS: a whole number from 0 to kMaxGrace; a usage message when it is not.
inline constexpr int kMaxGrace = 3600;
std::string take_grace_option(const char* value, int& out);

// --again-fd N: N holds a program and its arguments, each ending in a NUL (at
// most 256 KiB), read and closed here. When the plan turns out stale before the
// command ran (another sandbox of the root, or a build, changed the disk since
// it was planned), the launcher, having removed what it made, runs that program
// in its place, with its environment and descriptors, instead of failing: `sbx
// run` passes itself, so that it plans again. Returns the usage message, or an
// empty string when the arguments were taken into `again`.
std::string take_again_option(const char* value, std::vector<std::string>& again);

// With `again` and a STALE_PLAN error, and no signal caught: execs `again`, and
// returns only when that fails (then `program`, the launcher, fails as it would have).
void plan_again_if_stale(const sbx::Error& e, const std::vector<std::string>& again, std::string_view program);

// Exit statuses of both launchers (see docs/plan.md).
constexpr int kFailedBeforeCommand = 125;
constexpr int kCannotRun = 126;
constexpr int kNotFound = 127;

// The JSON lines of --report-fd. Proxy threads write violations, so each line
// is written whole under a lock.
// How long a person's answer about a host holds. The launcher keeps each for
// the rest of the command; a longer one is its caller's to keep: `session`, by
// passing it back in with later plans (network.answers), `always`, by writing it
// where the policy comes from (an agent file's network.hosts).
enum class AnswerScope { command, session, always };

constexpr std::string_view answer_scope_name(AnswerScope s) noexcept {
    return s == AnswerScope::session ? "session" : s == AnswerScope::always ? "always" : "command";
}

constexpr std::optional<AnswerScope> parse_answer_scope(std::string_view s) noexcept {
    for (auto scope : {AnswerScope::command, AnswerScope::session, AnswerScope::always})
        if (answer_scope_name(scope) == s) return scope;
    return std::nullopt;
}

struct Answer {
    bool allow = false;
    AnswerScope scope = AnswerScope::command;
};

// What the terminal's question offers besides this command: each is offered
// where its caller keeps it, named here for the question's words. Empty: not
// offered.
struct AnswerOffers {
    std::string session;  // the file a session's answers are kept in (sbx run --answers FILE)
    std::string always;   // the agent file whose network.hosts an `always` answer is written into
};

class Report {
public:
    explicit Report(int fd) : fd_(fd) {}
    void violation_event(const ProxyEvent& v) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("violation").key("kind").value("network-outbound");
        w.key("host").value(v.host).key("port").value(static_cast<int>(v.port)).key("protocol").value(v.protocol);
        if (!v.program.empty()) w.key("program").value(v.program);
        w.key("rule").value(v.rule).key("reason").value(v.reason).end_object();
        write_line(w.take());
    }
    // Advisory: read from what the command printed (see sbx/plan/report.hpp).
    void file_violation_event(const sbx::FileRefusal& r) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("violation").key("kind").value("file-access");
        w.key("path").value(r.path).key("written").value(r.written).key("message").value(r.message);
        w.key("advisory").value(true).end_object();
        write_line(w.take());
    }
    // A file the audit after the run renamed (git_audit.hpp).
    void git_neutralised_event(const sbx::GitNeutralised& n) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("violation").key("kind").value("git-neutralised");
        w.key("file").value(n.kind).key("path").value(n.path).key("reason").value(n.why);
        w.key("renamedTo").value(n.renamed_to).end_object();
        write_line(w.take());
    }
    // What the audit after the run could not make safe (git_audit.hpp).
    void git_unchecked_event(const sbx::GitAuditFailure& f) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("violation").key("kind").value("git-unchecked");
        w.key("path").value(f.path).key("reason").value(f.why).end_object();
        write_line(w.take());
    }
    // A connection to a Unix socket by path the launcher refused (connect_broker.hpp).
    void unix_socket_event(std::string_view path, std::string_view named, std::string_view program,
                           std::string_view reason) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("violation").key("kind").value("unix-socket");
        w.key("path").value(path).key("named").value(named);
        if (!program.empty()) w.key("program").value(program);
        w.key("reason").value(reason).end_object();
        write_line(w.take());
    }
    // Something the launcher could not do after the command, said on stderr too.
    void warning_event(std::string_view message) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("warning").key("message").value(message).end_object();
        write_line(w.take());
    }
    // `landlock`: the ABI of the Landlock wall the command ran under, 0 for
    // none; -1 leaves the key out (a launcher that has no such wall).
    // `mode`: sbx-linux's "bubblewrap" or "landlock" (the weaker sandbox); empty leaves it out.
    void exit_event(bool sandboxed, std::string_view unsandboxed_reason, int status, int landlock = -1,
                    std::string_view mode = {}) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("exit").key("sandboxed").value(sandboxed);
        if (!sandboxed) w.key("unsandboxedReason").value(unsandboxed_reason);
        if (!mode.empty()) w.key("mode").value(mode);
        if (landlock >= 0) w.key("landlock").value(landlock);
        w.key("status").value(status).end_object();
        write_line(w.take());
    }
    // OSC 52 the terminal's relay dropped: how many, and the first one's length.
    void clipboard_event(std::size_t times, std::size_t bytes) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("violation").key("kind").value("terminal-clipboard");
        w.key("times").value(static_cast<std::uint64_t>(times)).key("bytes").value(static_cast<std::uint64_t>(bytes));
        w.end_object();
        write_line(w.take());
    }
    // <sandbox_violations> tags the command wrote, neutralised.
    void forged_tags_event(std::size_t times) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("violation").key("kind").value("forged-report");
        w.key("times").value(static_cast<std::uint64_t>(times)).end_object();
        write_line(w.take());
    }
    // A person's answer to a question, on the terminal or from the caller, and
    // how long it is to hold (AnswerScope).
    void answer_event(const sbx::net::HostTarget& t, const Answer& a, std::string_view by) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("answer").key("host").value(t.host);
        w.key("port").value(static_cast<int>(t.port)).key("answer").value(a.allow ? "allow" : "deny");
        w.key("for").value(answer_scope_name(a.scope)).key("by").value(by).end_object();
        write_line(w.take());
    }
    void question_event(std::uint64_t id, const sbx::net::HostTarget& t) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("question").key("id").value(id).key("host").value(t.host);
        w.key("port").value(static_cast<int>(t.port)).end_object();
        write_line(w.take());
    }
    void error_event(const sbx::Error& e) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("error").key("code").value(sbx::errc_name(e.code));
        w.key("message").value(sbx::to_string(e)).end_object();
        write_line(w.take());
    }

private:
    void write_line(std::string line) {
        line += '\n';
        std::lock_guard<std::mutex> lock(mutex_);
        write_all(fd_, line.data(), line.size());
    }
    int fd_;
    std::mutex mutex_;
};

// NULL-terminated pointers into v, for exec.
std::vector<char*> c_strings(std::vector<std::string>& v);

// The plan's environment as "NAME=VALUE", with the loader variables or without.
std::vector<std::string> env_strings(const sbx::Plan& plan, bool with_loader);

// What to say, after the command, of `n` clients its proxy refused for want of
// the secret (empty for none): not violations, as no host was asked for, but
// why a program that drops its proxy URL's user information failed.
std::string refused_clients_warning(std::size_t n);

// The proxy's two listeners where it serves on the host's loopback (sbx-mac,
// and sbx-linux's weaker sandbox): listening TCP sockets on 127.0.0.1, on
// ports of the system's choosing (close-on-exec, non-blocking), and their
// ports. Neither is left open when the other cannot be made.
struct LoopbackListeners {
    Fd http, socks;
    int http_port = 0, socks_port = 0;
};
sbx::expected<LoopbackListeners> listen_loopback();

// `env` ("NAME=VALUE" strings) with the proxy's variables for those ports and
// secret (sbx::net::proxy_environment) in place of any of the same names.
void put_proxy_environment(std::vector<std::string>& env, int http_port, int socks_port, const std::string& secret);

// Where no ssh_config can be bound (the weaker sandbox, sbx-mac): `env` with
// GIT_SSH_COMMAND naming `program --connect` as ssh's ProxyCommand
// (sbx::net::git_ssh_command, base/connect_relay.hpp), so that git over ssh
// goes through the proxy; unless the plan has no proxy, `env` names an ssh for
// git already (GIT_SSH_COMMAND, GIT_SSH), `program` is empty or the plan hides it.
void put_git_ssh_command(std::vector<std::string>& env, const sbx::Plan& plan, const std::string& program);

// Runs the plan's command without a sandbox (failIfUnavailable: false), in the
// plan's directory with its environment, waits, and returns a shell-style status.
int run_unconfined(const sbx::Plan& plan);

// Whether every descriptor the plan passes to the command (passFds) is open here
// and none is one of the launcher's own (`own`: the plan, report and control
// descriptors; -1 entries are ignored). Errc::invalid_plan naming the key otherwise.
sbx::expected<void> check_pass_fds(const sbx::Plan& plan, std::initializer_list<int> own);

// Questions about hosts. `questions_end` becomes readable when the command has
// ended (-1: never): an open question is then answered no. With --control-fd the
// caller answers (CallerQuestions), else the terminal does (ask_on_terminal).

// Asks on the terminal (/dev/tty) whether `t` may be reached, the command
// stopped meanwhile so that it can neither repaint the question nor read the
// answer: `stop` stops every process of the sandbox (an empty hook stops
// nothing; a stop that is not complete is answered no without asking). Before
// the question the terminal's rendition, colours and palette are reset (kTerminalReset), the cursor shown, type-ahead
// dropped and a fresh line started; the host is printed escaped
// (sbx::net::printable_host); after the answer one line says what was decided.
// The sandbox continues however the question ends (an answer, no terminal, the
// end of the command).
// With `offers`, the question offers those answers too ([s] this session, [a]
// always) and says where each is kept; without, it reads as it always has.
// With `ended`, what becomes readable on `questions_end` ends the question
// only where ended() says so (it takes what came, so that poll waits again).
// nullopt: no one answered (no terminal, the sandbox not stopped, the command
// or the terminal ended first), which refuses the host as a no does.
std::optional<Answer> ask_on_terminal(const sbx::net::HostTarget& t, const StopSandbox& stop, int questions_end,
                                      const AnswerOffers& offers = {}, const std::function<bool()>& ended = {});

// What ask_on_terminal writes before its question (see there).
inline constexpr std::string_view kTerminalReset =
    "\x1b[0m\x1b[!p\x1b[0m\x1b[?5l\x1b[?25h\x1b]104\x1b\\\x1b]110\x1b\\\x1b]111\x1b\\\x1b]112\x1b\\\x0f";

// The lock a question holds while it is on the terminal: whatever else writes
// to the caller's terminal (relay_output, the terminal relay) or reads from it
// (the terminal relay) takes it for each write or read.
std::mutex& terminal_mutex();

// The caller's answers, one JSON object a line on --control-fd:
// {"id": N, "answer": "allow"} or "deny", N being the question event's id, and
// optionally "for": "command" (the default), "session" or "always", which the
// launcher reports back (Report::answer_event) and keeps for the command alike.
// Asked by one thread at a time (the proxy asks one question at a time).
class CallerQuestions {
public:
    // `program`: the launcher's name, for the warning about a line that is no answer.
    CallerQuestions(int control_fd, Report& report, std::string_view program)
        : control_fd_(control_fd), report_(&report), program_(program) {}
    // Asks through --report-fd and waits for the answer on --control-fd. A line
    // that is not an answer to this question is skipped with a warning; the end
    // of the control channel, or of the command (questions_end), is no answer
    // (nullopt), which refuses the host.
    std::optional<Answer> ask(const sbx::net::HostTarget& t, int questions_end);

private:
    int control_fd_;
    Report* report_;
    std::string_view program_;
    std::uint64_t next_id_ = 0;
    std::string pending_;  // bytes read past the last line
};

// Who answers the proxy's questions: the caller (control_fd >= 0, see
// CallerQuestions), else the terminal.
struct Answering {
    int control_fd = -1;
    std::string_view program;  // the launcher's name, for its messages
    AnswerOffers offers;       // what the terminal's question offers besides this command
    // Told each answer, from a proxy thread, after the report is.
    std::function<void(const sbx::net::HostTarget&, const Answer&)> on_answer;
    // Where set (a session's holder), every question goes to it, from a proxy
    // thread, with the tag of the client that asks (a session command's pid):
    // the answer, or nullopt where no one answered (refused).
    std::function<std::optional<Answer>(const sbx::net::HostTarget&, const std::string& tag)> asker;
};

// The launcher's proxy for one command: started on its two listening sockets
// with the plan's host rules, it reports each refusal as it comes and keeps it
// for the <sandbox_violations> block, and asks about hosts (a session's
// Answering::asker; else CallerQuestions with --control-fd, else
// ask_on_terminal, only while the command runs).
class CommandProxy {
public:
    // Takes the listeners; fails with the proxy's error. `stop` stops the
    // sandbox while a question is open on the terminal (see ask_on_terminal).
    // `forward_fds`: a listener for each of the plan's network.forwards, in order.
    // `secret`: the password every client must present (ProxyOptions::secret;
    // make_proxy_secret), or empty where only the command reaches the listeners.
    static sbx::expected<std::unique_ptr<CommandProxy>> start(const sbx::Plan& plan, Report& report,
                                                               Answering answering, int http_fd, int socks_fd,
                                                               StopSandbox stop,
                                                               const std::vector<int>& forward_fds = {},
                                                               std::string secret = {}, int direct_fd = -1);
    CommandProxy(const CommandProxy&) = delete;
    CommandProxy& operator=(const CommandProxy&) = delete;
    ~CommandProxy() { stop(); }

    // The command has ended: open questions are answered no, and the proxy stops.
    void stop();
    std::vector<ProxyEvent> refused() const;
    // Clients refused for not presenting the secret (proxy::Proxy::refused_clients).
    std::size_t refused_clients() const { return proxy_ ? proxy_->refused_clients() : 0; }
    // The command's own connections to an address (proxy::Proxy::admit, expect_direct).
    bool admit(const sbx::net::HostTarget& t, const std::string& program, const std::string& tag = {}) {
        return proxy_ && proxy_->admit(t, program, tag);
    }
    bool expect_direct(std::uint16_t port, sbx::net::HostTarget t) {
        return proxy_ && proxy_->expect_direct(port, std::move(t));
    }
    void forget_direct(std::uint16_t port) {
        if (proxy_) proxy_->forget_direct(port);
    }
    // A session command's own listeners (proxy::Proxy::add_listeners); `tap`
    // is called with each refusal besides the report, from the proxy's
    // threads, until tap({}) (a session's holder routes the tagged ones to the
    // command's client).
    sbx::expected<void> add_listeners(std::string tag, int http_fd, int socks_fd,
                                      std::optional<sbx::net::HostCall> call = std::nullopt);
    void remove_listeners(const std::string& tag) {
        if (proxy_) proxy_->remove_listeners(tag);
    }
    void tap(std::function<void(const ProxyEvent&)> fn) {
        std::lock_guard<std::mutex> lock(mutex_);
        tap_ = std::move(fn);
    }

private:
    CommandProxy() = default;
    mutable std::mutex mutex_;
    std::vector<ProxyEvent> refused_;
    std::function<void(const ProxyEvent&)> tap_;
    Pipe questions_;  // closing its write end makes its read end readable: the command has ended
    std::unique_ptr<CallerQuestions> caller_;
    std::unique_ptr<proxy::Proxy> proxy_;
};

// What the launcher's relays of the command's output found in it, for the
// block and the report: the <sandbox_violations> tags it wrote (each
// neutralised), and the clipboard writes (OSC 52) its terminal's relay dropped.
struct OutputFindings {
    std::atomic<std::size_t> forged_tags{0};
    std::size_t clipboard_writes = 0;  // set once the terminal's relay is done
    std::size_t clipboard_bytes = 0;   // the first one's length
};

// Copies what the command writes on `from` to `to` until every writer is gone,
// each <sandbox_violations> tag in it neutralised (sbx/plan/output_filter.hpp)
// and counted in `forged`, each write under the terminal lock. With a scanner,
// the file refusals it finds become violation events as they come. When `to`
// takes nothing more (its reader is gone), `from` is closed at once, so that
// the command's next write fails as it would have without the relay (EPIPE,
// SIGPIPE). Closes `from` once done.
void relay_output(Fd from, int to, sbx::StderrScanner* scanner, Report* report, std::atomic<std::size_t>* forged);

// The relays of the command's output, each on a thread of its own.
class OutputRelayThreads {
public:
    OutputRelayThreads() = default;
    OutputRelayThreads(const OutputRelayThreads&) = delete;
    OutputRelayThreads& operator=(const OutputRelayThreads&) = delete;
    ~OutputRelayThreads() { join(); }

    // One for each pipe given (none: not open), which it closes: `err_pipe`
    // to standard error (to standard output when `merged`), read for file
    // refusals with a scanner; `out_pipe` to standard output.
    void start(Fd err_pipe, Fd out_pipe, bool merged, sbx::StderrScanner* scanner, Report& report,
               OutputFindings& found);
    // Once the sandbox has ended: the terminal's relay (if any) finished and
    // the others joined, what they found kept in `found`.
    void finish(TerminalRelay* terminal, OutputFindings& found);

private:
    void join();
    std::thread err_, out_;
};

// The findings of the relays as events on the report, after the command.
void report_findings(const OutputFindings& found, Report& report);

// The <sandbox_violations> block for the proxy's refusals, the Unix sockets the
// launcher refused (`sockets`) and the scanner's file refusals, less those the
// plan's ignoreViolations expects; empty when none.
// The files the audit after the run renamed are listed after them, whatever
// ignoreViolations says: they were changed on the caller's disk; and what the
// relays found in the command's output; and, last, what the audit could not make
// safe (`unchecked`).
// A refusal of the launcher's own (a Unix socket by path, a connection past
// the proxy): its line of the block, what follows it (allow_sentence() of
// the setting that would allow it, or nothing), and how many times.
struct RefusedLine {
    std::string line;
    std::string hint;
    std::size_t times = 1;
};

// ignoreViolations: the settings expect this line; it is not said. A rule is
// matched against what was refused, not against the setting named after it.
bool ignored_violation(const sbx::Plan& plan, const std::string& refused_line);

// The lines of that block for the file refusals `scanner` read, less those
// ignoreViolations expects.
std::vector<RefusedLine> file_refusal_lines(const sbx::Plan& plan, const sbx::StderrScanner& scanner);

// The lines of that block for what the relays found (forged tags, clipboard writes).
std::vector<RefusedLine> findings_lines(const OutputFindings& found);

// One proxy refusal's line of that block, with the setting that would allow
// it; empty where ignoreViolations expects it.
std::string proxy_refusal_line(const sbx::Plan& plan, const ProxyEvent& e);

std::string violations_text(const sbx::Plan& plan, const std::vector<ProxyEvent>& refused,
                            const sbx::StderrScanner* scanner, const std::vector<sbx::GitNeutralised>& neutralised = {},
                            const OutputFindings* found = nullptr,
                            const std::vector<sbx::GitAuditFailure>& unchecked = {},
                            const std::vector<RefusedLine>& sockets = {},
                            const std::vector<std::string>& limits = {});

}  // namespace sbx::launcher
