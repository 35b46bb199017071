// launchers/common.hpp - what both launchers (sbx-linux, sbx-mac) do alike once
// the command runs: the report on --report-fd, questions about hosts (on the
// terminal, or to the caller over --control-fd), the relay of the command's
// standard error, the <sandbox_violations> block, signals, and small helpers.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "fd_io.hpp"
#include "freeze.hpp"
#include "host_lookup.hpp"
#include "proxy.hpp"
#include "sbx/core/error.hpp"
#include "sbx/core/json.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/plan/report.hpp"
#include "sbx/rules/git_audit.hpp"

namespace sbx::launcher {

using proxy::ProxyEvent;
using linux_sandbox::write_all;

// --plan-fd N, --report-fd N and --control-fd N: `value` must name an open
// descriptor, which is then kept from the command (close-on-exec). Returns the
// usage message, or an empty string when the value was taken into `out`.
std::string take_fd_option(std::string_view option, const char* value, int& out);

// --again-fd N: N holds a program and its arguments, each ending in a NUL (at
// most 256 KiB), read and closed here. When the plan turns out stale before the
// command ran (another sandbox of the root, or a build, changed the disk since
// it was planned), the launcher, having removed what it made, runs that program
// in its place, with its environment and descriptors, instead of failing: `sbx
// run` passes itself, so that it plans again. Returns the usage message, or an
// empty string when the arguments were taken into g_again.
std::string take_again_option(const char* value);
extern std::vector<std::string> g_again;

// With g_again and a STALE_PLAN error: execs g_again, and returns only when that
// fails (then the launcher fails as it would have).
void plan_again_if_stale(const sbx::Error& e);

// Exit statuses of both launchers (see docs/plan.md).
constexpr int kFailedBeforeCommand = 125;
constexpr int kCannotRun = 126;
constexpr int kNotFound = 127;

// The launcher's name in its messages: "sbx-linux" or "sbx-mac".
extern const char* g_program;

// The JSON lines of --report-fd. Proxy threads write violations, so each line
// is written whole under a lock.
class Report {
public:
    explicit Report(int fd) : fd_(fd) {}
    void violation_event(const ProxyEvent& v) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("violation").key("kind").value("network-outbound");
        w.key("host").value(v.host).key("port").value(static_cast<int>(v.port)).key("protocol").value(v.protocol);
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
    // Something the launcher could not do after the command, said on stderr too.
    void warning_event(std::string_view message) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("warning").key("message").value(message).end_object();
        write_line(w.take());
    }
    void exit_event(bool sandboxed, std::string_view unsandboxed_reason, int status) {
        if (fd_ < 0) return;
        sbx::json::Writer w;
        w.begin_object().key("event").value("exit").key("sandboxed").value(sandboxed);
        if (!sandboxed) w.key("unsandboxedReason").value(unsandboxed_reason);
        w.key("status").value(status).end_object();
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

// The signal that ended us, if one did: set by the handler, read by main.
extern volatile sig_atomic_t g_signal;
// The process the handler kills; with g_kill_group, its whole process group.
extern volatile pid_t g_sandbox_pid;
extern bool g_kill_group;

// SIGINT, SIGTERM, SIGHUP and SIGQUIT kill the sandbox and are remembered in
// g_signal; SIGPIPE is ignored (a child undoes both before it execs).
void install_signal_handlers();

// Dies of the signal that ended the sandbox, so our caller sees what it sent.
[[noreturn]] void die_of(int sig);

// NULL-terminated pointers into v, for exec.
std::vector<char*> c_strings(std::vector<std::string>& v);

// The plan's environment as "NAME=VALUE", with the loader variables or without.
std::vector<std::string> env_strings(const sbx::Plan& plan, bool with_loader);

// Runs the plan's command without a sandbox (failIfUnavailable: false), in the
// plan's directory with its environment, waits, and returns a shell-style status.
int run_unconfined(const sbx::Plan& plan);

// Whether every descriptor the plan passes to the command (passFds) is open here
// and none is one of the launcher's own (`own`: the plan, report and control
// descriptors; -1 entries are ignored). Errc::invalid_plan naming the key otherwise.
sbx::expected<void> check_pass_fds(const sbx::Plan& plan, std::initializer_list<int> own);

// Questions about hosts. g_questions_end becomes readable when the command has
// ended: an open question is then answered no. With g_control_fd the caller
// answers (ask_caller), else the terminal does (ask_on_terminal).
extern int g_questions_end;
extern int g_control_fd;
extern Report* g_report;

// Asks on the terminal (/dev/tty) whether `t` may be reached, the command
// stopped meanwhile so that it can neither repaint the question nor read the
// answer: `stop` stops every process of the sandbox (an empty hook stops
// nothing; a stop that is not complete is answered no without asking). Before
// the question the terminal's rendition is reset, the cursor shown, type-ahead
// dropped and a fresh line started; the host is printed escaped
// (sbx::net::printable_host); after the answer one line says what was decided.
// The sandbox continues however the question ends (an answer, no terminal, the
// end of the command).
bool ask_on_terminal(const sbx::net::HostTarget& t, const StopSandbox& stop);
bool ask_caller(const sbx::net::HostTarget& t);

// The launcher's proxy for one command: started on its two listening sockets
// with the plan's host rules, it reports each refusal as it comes and keeps it
// for the <sandbox_violations> block, and asks about hosts (ask_caller with
// --control-fd, else ask_on_terminal) only while the command runs.
class CommandProxy {
public:
    // Takes the listeners; fails with the proxy's error. `stop` stops the
    // sandbox while a question is open on the terminal (see ask_on_terminal).
    // `forward_fds`: a listener for each of the plan's network.forwards, in order.
    static sbx::expected<std::unique_ptr<CommandProxy>> start(const sbx::Plan& plan, Report& report, int http_fd,
                                                               int socks_fd, StopSandbox stop,
                                                               const std::vector<int>& forward_fds = {});
    CommandProxy(const CommandProxy&) = delete;
    CommandProxy& operator=(const CommandProxy&) = delete;
    ~CommandProxy() { stop(); }

    // The command has ended: open questions are answered no, and the proxy stops.
    void stop();
    std::vector<ProxyEvent> refused() const;

private:
    CommandProxy() = default;
    mutable std::mutex mutex_;
    std::vector<ProxyEvent> refused_;
    int questions_done_ = -1;  // closing it makes g_questions_end readable
    std::unique_ptr<proxy::Proxy> proxy_;
};

// Copies the command's standard error from `from` to ours until every writer
// is gone, writing any <sandbox_violations> tag the command prints as
// &lt;sandbox_violations>. With a scanner, the file refusals it finds become
// violation events as they come. Closes `from`.
void relay_stderr(int from, sbx::StderrScanner* scanner, Report* report);

// The <sandbox_violations> block for the proxy's refusals and the scanner's file
// refusals, less those the plan's ignoreViolations expects; empty when none.
// The files the audit after the run renamed are listed after them, whatever
// ignoreViolations says: they were changed on the caller's disk.
std::string violations_text(const sbx::Plan& plan, const std::vector<ProxyEvent>& refused,
                            const sbx::StderrScanner* scanner, const std::vector<sbx::GitNeutralised>& neutralised = {});

}  // namespace sbx::launcher
