// launchers/shared/common.cpp - see common.hpp.
#include "proxy/platform.hpp"
#include "sbx/core/json.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "sbx/net/proxy_env.hpp"
#include "sbx/net/ssh_proxy.hpp"
#include "shared/common.hpp"
#include "shared/signals.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <iostream>
#include <mutex>
#include <utility>

#if defined(__APPLE__)
extern char** environ;  // unistd.h declares it on Linux only
#endif

namespace sbx::launcher {

namespace {

// Held while a question is on the terminal, and by relay_output for each write:
// what the command wrote before it was stopped does not land inside the question.
// (One terminal, one lock: it guards standard error, not a launcher's state.)
std::mutex g_terminal_mutex;

}  // namespace

std::mutex& terminal_mutex() { return g_terminal_mutex; }

std::vector<char*> c_strings(std::vector<std::string>& v) {
    std::vector<char*> out;
    for (auto& s : v) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

std::string refused_clients_warning(std::size_t n) {
    if (n == 0) return {};
    return "the proxy refused " + std::to_string(n) + (n == 1 ? " client" : " clients") +
           " without the command's proxy credentials (a program that drops the user information of HTTP_PROXY or "
           "ALL_PROXY, or another program on this machine)";
}

namespace {

// One listening socket on the host's 127.0.0.1: the descriptor and its port.
sbx::expected<std::pair<Fd, int>> listen_one() {
    Fd fd = proxy::stream_socket(AF_INET);
    if (!fd.ok()) return sbx::fail(sbx::Errc::io_error, std::string("socket: ") + std::strerror(errno));
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd.get(), 128) != 0 ||
        ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&sa), &len) != 0)
        return sbx::fail(sbx::Errc::io_error, std::string("cannot listen on 127.0.0.1: ") + std::strerror(errno));
    return std::pair{std::move(fd), static_cast<int>(ntohs(sa.sin_port))};
}

}  // namespace

sbx::expected<LoopbackListeners> listen_loopback() {
    auto http = listen_one();
    SBX_TRY(http);
    auto socks = listen_one();
    SBX_TRY(socks);
    return LoopbackListeners{std::move(http->first), std::move(socks->first), http->second, socks->second};
}

void put_proxy_environment(std::vector<std::string>& env, int http_port, int socks_port, const std::string& secret) {
    for (const auto& [name, value] : sbx::net::proxy_environment(http_port, socks_port, secret)) {
        const std::string prefix = name + "=";
        std::erase_if(env, [&](const std::string& kv) { return kv.rfind(prefix, 0) == 0; });
        env.push_back(prefix + value);
    }
}

void put_git_ssh_command(std::vector<std::string>& env, const sbx::Plan& plan, const std::string& program) {
    if (plan.network.mode != sbx::NetworkMode::proxy || program.empty() ||
        sbx::planned_access(plan.filesystem, program).kind == sbx::PlannedAccess::Kind::hidden)
        return;
    const bool own_ssh = std::any_of(env.begin(), env.end(), [](const std::string& kv) {
        return kv.starts_with("GIT_SSH_COMMAND=") || kv.starts_with("GIT_SSH=");
    });
    if (auto command = sbx::net::git_ssh_command(program); command && !own_ssh) env.push_back("GIT_SSH_COMMAND=" + *command);
}

std::vector<std::string> env_strings(const sbx::Plan& plan, bool with_loader) {
    std::vector<std::string> out;
    for (const auto& v : plan.env) out.push_back(v.name + "=" + v.value);
    if (with_loader)
        for (const auto& v : plan.loader_env) out.push_back(v.name + "=" + v.value);
    return out;
}

namespace {

// The question's words, and what a line typed in answer to it means.
std::string question_text(const std::string& where, const AnswerOffers& offers) {
    std::string q = "sbx: the command wants to reach " + where + ", which no rule decides. ";
    if (offers.session.empty() && offers.always.empty()) return q + "Allow it for the rest of this command? [y/N] ";
    q += "Allow it: [y] for this command";
    if (!offers.session.empty()) q += ", [s] for this session (kept in " + offers.session + ")";
    if (!offers.always.empty()) q += ", [a] always (written into the network.hosts of " + offers.always + ")";
    return q + ", [N] not at all? ";
}

Answer answer_typed(std::string_view typed, const AnswerOffers& offers) {
    const char c = typed.empty() ? '\0' : typed.front();
    if (c == 'y' || c == 'Y') return {true, AnswerScope::command};
    if ((c == 's' || c == 'S') && !offers.session.empty()) return {true, AnswerScope::session};
    if ((c == 'a' || c == 'A') && !offers.always.empty()) return {true, AnswerScope::always};
    return {false, AnswerScope::command};
}

std::string answered_text(const Answer& a, const AnswerOffers& offers) {
    if (!a.allow) return " refused";
    switch (a.scope) {
        case AnswerScope::command: return " allowed for the rest of this command";
        case AnswerScope::session: return " allowed for the rest of the session (kept in " + offers.session + ")";
        case AnswerScope::always:
            return " allowed always (written into the network.hosts of " + offers.always + " once the command is over)";
    }
    return " refused";
}

}  // namespace

std::optional<Answer> ask_on_terminal(const sbx::net::HostTarget& t, const StopSandbox& stop, int questions_end,
                                      const AnswerOffers& offers, const std::function<bool()>& ended) {
    const Fd tty_fd(::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY));
    if (!tty_fd.ok()) return std::nullopt;
    const int tty = tty_fd.get();
    // Destroyed in reverse: the terminal is given back, then the sandbox continues.
    struct Continue {
        Stopped stopped;
        ~Continue() { continue_stopped(stopped); }
    } frozen{stop ? stop() : Stopped{}};
    std::lock_guard<std::mutex> lock(g_terminal_mutex);
    const std::string where = sbx::net::printable_host(t.host) + ":" + std::to_string(t.port);
    // SGR reset, soft terminal reset (DECSTR: modes, margins, character sets),
    // normal video (DECSCNM off), cursor shown, the colours the command may have
    // changed (OSC 104: the palette, OSC 110, 111, 112: foreground, background
    // and cursor colour) back to the terminal's own, shift-in, and a fresh line:
    // nothing the command left set hides or restyles the question.
    const std::string reset = std::string(kTerminalReset) + "\r\n";
    auto say = [&](const std::string& text) { write_all(tty, text.data(), text.size()); };
    if (!frozen.stopped.complete) {
        say(reset + "sbx: " + where + " refused: the command could not be stopped to ask about it\r\n");
        return std::nullopt;
    }
    // A line of input, echoed, whatever mode the command left the terminal in.
    termios saved{};
    const bool have_mode = ::tcgetattr(tty, &saved) == 0;
    if (have_mode) {
        termios asking = saved;
        asking.c_lflag |= ICANON | ECHO | ECHOE | ECHOK;
        asking.c_iflag |= ICRNL;
        asking.c_iflag &= ~static_cast<tcflag_t>(INLCR | IGNCR);
        asking.c_oflag |= OPOST | ONLCR;  // the echoed newline returns the carriage too (raw mode has neither)
        ::tcsetattr(tty, TCSANOW, &asking);
    }
    ::tcflush(tty, TCIFLUSH);  // keys typed before the question do not answer it
    // The host is printed escaped; the offers name files of the caller's, whose
    // control characters are escaped as the host's are.
    AnswerOffers shown{offers.session.empty() ? "" : sbx::printable_line_part(offers.session),
                       offers.always.empty() ? "" : sbx::printable_line_part(offers.always)};
    say(reset + question_text(where, shown));
    pollfd fds[2] = {{tty, POLLIN, 0}, {questions_end, POLLIN, 0}};
    int ready;
    for (;;) {
        while ((ready = ::poll(fds, questions_end >= 0 ? 2 : 1, -1)) < 0 && errno == EINTR) {
        }
        // Something came on questions_end: the end, unless `ended` says it is not.
        if (ready <= 0 || fds[0].revents != 0 || !ended || (fds[1].revents & ~POLLIN) != 0 || ended()) break;
    }
    char answer[16] = {};
    ssize_t n = 0;
    if (ready > 0 && (fds[0].revents & POLLIN) != 0)
        while ((n = ::read(tty, answer, sizeof answer - 1)) < 0 && errno == EINTR) {
        }
    ::tcflush(tty, TCIFLUSH);  // nor does the rest of a long answer reach the command
    const Answer given = answer_typed(std::string_view(answer, n > 0 ? static_cast<std::size_t>(n) : 0), offers);
    say(std::string(n > 0 && answer[n - 1] == '\n' ? "" : "\r\n") + "sbx: " + where + answered_text(given, shown) +
        "\r\n");
    if (have_mode) ::tcsetattr(tty, TCSANOW, &saved);
    if (n <= 0) return std::nullopt;  // the command ended, or the terminal did: no one answered
    return given;
}

namespace {

// Writes all of `data` to `fd`, waiting where it is non-blocking (a descriptor
// the caller shares with other programs may be); false when it takes no more.
bool pass_on(int fd, const char* data, std::size_t n) {
    while (n > 0) {
        const ssize_t w = ::write(fd, data, n);
        if (w > 0) {
            data += w;
            n -= static_cast<std::size_t>(w);
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno == EAGAIN) {
            pollfd p{fd, POLLOUT, 0};
            if (::poll(&p, 1, -1) >= 0 || errno == EINTR) continue;
        }
        return false;
    }
    return true;
}

}  // namespace

void relay_output(Fd from, int to, sbx::StderrScanner* scanner, Report* report, std::atomic<std::size_t>* forged) {
    sbx::TagNeutralizer n;
    std::size_t reported = 0;
    auto report_new = [&] {
        if (scanner == nullptr) return;
        const auto& found = scanner->refusals();
        for (; reported < found.size(); ++reported) report->file_violation_event(found[reported]);
    };
    bool taking = true;
    char buf[65536];
    for (;;) {
        const ssize_t got = ::read(from.get(), buf, sizeof buf);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        const std::string_view chunk(buf, static_cast<std::size_t>(got));
        const std::string out = n.feed(chunk);
        {
            std::lock_guard<std::mutex> lock(g_terminal_mutex);
            taking = pass_on(to, out.data(), out.size());
        }
        if (scanner != nullptr) scanner->feed(chunk);
        report_new();
        if (!taking) break;  // the reader is gone: so is the command's
    }
    if (scanner != nullptr) scanner->finish();
    report_new();
    if (forged != nullptr) *forged += n.neutralised();
}

void OutputRelayThreads::start(Fd err_pipe, Fd out_pipe, bool merged, sbx::StderrScanner* scanner, Report& report,
                               OutputFindings& found) {
    if (err_pipe.ok())
        err_ = std::thread(relay_output, std::move(err_pipe), merged ? STDOUT_FILENO : STDERR_FILENO, scanner, &report,
                           &found.forged_tags);
    if (out_pipe.ok())
        out_ = std::thread(relay_output, std::move(out_pipe), STDOUT_FILENO, nullptr, nullptr, &found.forged_tags);
}

void OutputRelayThreads::finish(TerminalRelay* terminal, OutputFindings& found) {
    if (terminal != nullptr) {
        terminal->finish();
        found.clipboard_writes = terminal->clipboard_writes();
        found.clipboard_bytes = terminal->clipboard_bytes();
        found.forged_tags += terminal->forged_tags();
    }
    join();
}

void OutputRelayThreads::join() {
    for (auto* t : {&err_, &out_})
        if (t->joinable()) t->join();
}

void report_findings(const OutputFindings& found, Report& report) {
    if (found.clipboard_writes > 0) report.clipboard_event(found.clipboard_writes, found.clipboard_bytes);
    if (found.forged_tags > 0) report.forged_tags_event(found.forged_tags);
}

std::optional<Answer> CallerQuestions::ask(const sbx::net::HostTarget& t, int questions_end) {
    const std::uint64_t id = ++next_id_;
    report_->question_event(id, t);
    for (;;) {
        std::size_t nl;
        while ((nl = pending_.find('\n')) == std::string::npos) {
            pollfd fds[2] = {{control_fd_, POLLIN, 0}, {questions_end, POLLIN, 0}};
            int ready;
            while ((ready = ::poll(fds, questions_end >= 0 ? 2 : 1, -1)) < 0 && errno == EINTR) {
            }
            if (ready <= 0 || (fds[0].revents & (POLLIN | POLLHUP)) == 0) return std::nullopt;
            char buf[4096];
            ssize_t n;
            while ((n = ::read(control_fd_, buf, sizeof buf)) < 0 && errno == EINTR) {
            }
            if (n <= 0) return std::nullopt;
            pending_.append(buf, static_cast<std::size_t>(n));
            if (pending_.size() > 65536) return std::nullopt;
        }
        const std::string line = pending_.substr(0, nl);
        pending_.erase(0, nl + 1);
        auto doc = sbx::json::parse(line);
        std::uint64_t got_id = 0;
        std::string_view answer, scope = "command";
        std::optional<AnswerScope> held;
        if (doc && (*doc)->root()["id"].get(got_id) == simdjson::SUCCESS &&
            (*doc)->root()["answer"].get(answer) == simdjson::SUCCESS && got_id == id &&
            (answer == "allow" || answer == "deny")) {
            // "for" is optional; present, it is one of the scopes, or the line is no answer.
            simdjson::dom::element f;
            const bool has_for = (*doc)->root().get_object().at_key("for").get(f) == simdjson::SUCCESS;
            if (!has_for || f.get(scope) == simdjson::SUCCESS) held = parse_answer_scope(scope);
            if (held) return Answer{answer == "allow", *held};
        }
        std::cerr << std::string(program_) + ": warning: --control-fd: not an answer to question " << id << ", skipped: " << line
                  << "\n";
    }
}

namespace {

// What a question came to: no answer (no terminal, the command or the channel
// ended first) refuses; an answer is said on the report and to its caller.
bool settle(const std::optional<Answer>& a, const sbx::net::HostTarget& t, std::string_view by, Report& report,
            const std::function<void(const sbx::net::HostTarget&, const Answer&)>& told) {
    if (!a) return false;
    report.answer_event(t, *a, by);
    if (told) told(t, *a);
    return a->allow;
}

}  // namespace

sbx::expected<std::unique_ptr<CommandProxy>> CommandProxy::start(const sbx::Plan& plan, Report& report,
                                                                 Answering answering, int http_fd, int socks_fd,
                                                                 StopSandbox stop, const std::vector<int>& forward_fds,
                                                                 std::string secret, int direct_fd) {
    std::vector<proxy::ForwardListener> forwards;
    for (std::size_t i = 0; i < forward_fds.size(); ++i) {
        const auto& f = plan.network.forwards.at(i);
        forwards.push_back({forward_fds[i], f.target, f.target_port});
    }
    std::unique_ptr<CommandProxy> self(new CommandProxy());
    proxy::ProxyOptions po;
    po.rules = plan.network.rules;
    po.call = plan.network.call;
    po.own_addresses = own_addresses();
    po.secret = std::move(secret);
    CommandProxy* me = self.get();
    po.on_refusal = [me, &report](const ProxyEvent& e) {
        report.violation_event(e);
        std::lock_guard<std::mutex> lock(me->mutex_);
        me->refused_.push_back(e);
        if (me->tap_) me->tap_(e);
    };
    if (answering.asker) {
        po.ask = [&report, asker = std::move(answering.asker), told = answering.on_answer](const sbx::net::HostTarget& t,
                                                                                           const std::string& tag) {
            return settle(asker(t, tag), t, "client", report, told);
        };
    } else if (self->questions_.open()) {
        // Without the pipe, no question: it could outlive the command.
        if (answering.control_fd >= 0) {
            self->caller_ = std::make_unique<CallerQuestions>(answering.control_fd, report, answering.program);
            po.ask = [me, &report, told = answering.on_answer](const sbx::net::HostTarget& t, const std::string&) {
                return settle(me->caller_->ask(t, me->questions_.read.get()), t, "caller", report, told);
            };
        } else {
            po.ask = [me, &report, stop = std::move(stop), offers = answering.offers,
                      told = answering.on_answer](const sbx::net::HostTarget& t, const std::string&) {
                return settle(ask_on_terminal(t, stop, me->questions_.read.get(), offers), t, "terminal", report, told);
            };
        }
    }
    auto started = proxy::Proxy::start(std::move(po), http_fd, socks_fd, std::move(forwards), direct_fd);
    SBX_TRY(started);
    self->proxy_ = std::move(*started);
    return self;
}

sbx::expected<void> CommandProxy::add_listeners(std::string tag, int http_fd, int socks_fd,
                                                std::optional<sbx::net::HostCall> call) {
    if (!proxy_) {
        ::close(http_fd);
        ::close(socks_fd);
        return sbx::fail(sbx::Errc::unavailable, "the session has no proxy");
    }
    return proxy_->add_listeners(std::move(tag), http_fd, socks_fd, std::move(call));
}

void CommandProxy::stop() {
    questions_.write.reset();
    if (proxy_) proxy_->stop();
    questions_.read.reset();
}

std::vector<ProxyEvent> CommandProxy::refused() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return refused_;
}

std::string take_fd_option(std::string_view option, const char* value, int& out) {
    if (value == nullptr || !parse_fd(value, out)) return std::string(option) + " needs a descriptor number";
    if (::fcntl(out, F_GETFD) < 0) return std::string(option) + " " + value + ": the descriptor is not open";
    ::fcntl(out, F_SETFD, FD_CLOEXEC);  // the command never sees it
    return {};
}

std::string take_grace_option(const char* value, int& out) {
    const std::string_view v = value == nullptr ? std::string_view() : std::string_view(value);
    int n = 0;
    const bool digits = !v.empty() && v.size() <= 4 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits) n = std::stoi(std::string(v));
    if (!digits || n > kMaxGrace)
        return "--grace needs a number of seconds from 0 to " + std::to_string(kMaxGrace) +
               (value == nullptr ? std::string() : ", not '" + std::string(v) + "'");
    out = n;
    return {};
}

std::string take_again_option(const char* value, std::vector<std::string>& again) {
    int fd = -1;
    if (auto why = take_fd_option("--again-fd", value, fd); !why.empty()) return why;
    auto text = sbx::read_all(fd, std::size_t{256} << 10, "--again-fd", sbx::Errc::invalid_argument);
    ::close(fd);
    if (!text) return "--again-fd " + std::string(value) + ": " + sbx::to_string(text.error());
    if (text->empty() || text->back() != '\0' || text->front() == '\0' || (*text)[0] != '/')
        return "--again-fd " + std::string(value) +
               ": the descriptor does not hold an absolute program path and its arguments, each ending in a NUL";
    for (std::size_t at = 0; at < text->size();) {
        const std::size_t end = text->find('\0', at);
        again.push_back(text->substr(at, end - at));
        at = end + 1;
    }
    return {};
}

void plan_again_if_stale(const sbx::Error& e, const std::vector<std::string>& again, std::string_view program) {
    if (e.code != sbx::Errc::stale_plan || again.empty() || caught_signal() != 0) return;
    // The program starts as this one did: no signal of ours caught or blocked.
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE}) ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    std::vector<std::string> copy = again;
    auto argv = c_strings(copy);
    ::execv(argv[0], argv.data());
    std::cerr << program << ": cannot plan again with " << again.front() << ": " << std::strerror(errno) << "\n";
}

bool ignored_violation(const sbx::Plan& plan, const std::string& refused_line) {
    return std::any_of(plan.ignore_violations.begin(), plan.ignore_violations.end(),
                       [&](const std::string& v) { return refused_line.find(v) != std::string::npos; });
}

namespace {

// A proxy refusal's line, and the setting that would allow it, in the words of the plan's file.
std::pair<std::string, std::string> proxy_refusal_parts(const sbx::Plan& plan, const ProxyEvent& e) {
    using K = sbx::net::AllowKind;
    return {sbx::network_violation_line(e.host, e.port, e.program.empty() ? e.reason : e.reason + "; by " + e.program),
            sbx::allow_sentence(e.allow == K::hosts   ? plan.hints.hosts
                                : e.allow == K::local ? plan.hints.local
                                : e.allow == K::call  ? plan.hints.call
                                                      : std::string())};
}

}  // namespace

std::vector<RefusedLine> findings_lines(const OutputFindings& found) {
    std::vector<RefusedLine> out;
    if (found.clipboard_writes > 0)
        out.push_back({"deny terminal-clipboard (the command wrote to your terminal's clipboard with OSC 52, " +
                           std::to_string(found.clipboard_bytes) + " bytes; dropped)",
                       "; to allow it: --allow-clipboard-write", found.clipboard_writes});
    if (found.forged_tags > 0)
        out.push_back({"deny forged-report (the command wrote this block's tags itself; each came out with its closing > "
                       "written &gt;)",
                       "", found.forged_tags});
    return out;
}

std::vector<RefusedLine> file_refusal_lines(const sbx::Plan& plan, const sbx::StderrScanner& scanner) {
    std::vector<RefusedLine> out;
    for (const auto& r : scanner.refusals()) {
        std::string line = sbx::file_violation_line(r);
        if (!ignored_violation(plan, line)) out.push_back({std::move(line), sbx::file_refusal_hint(r, plan.hints), r.times});
    }
    return out;
}

std::string proxy_refusal_line(const sbx::Plan& plan, const ProxyEvent& e) {
    auto [line, hint] = proxy_refusal_parts(plan, e);
    return ignored_violation(plan, line) ? std::string() : line + hint;
}

std::string violations_text(const sbx::Plan& plan, const std::vector<ProxyEvent>& refused,
                            const sbx::StderrScanner* scanner, const std::vector<sbx::GitNeutralised>& neutralised,
                            const OutputFindings* found,
                            const std::vector<sbx::GitAuditFailure>& unchecked,
                            const std::vector<RefusedLine>& sockets, const std::vector<std::string>& limits) {
    std::vector<std::string> lines;
    std::vector<std::size_t> times;
    // A limit reached is said whatever ignoreViolations holds: the exit status says it too.
    for (const auto& l : limits) {
        lines.push_back(l);
        times.push_back(1);
    }
    auto add = [&](const std::string& refused_line, const std::string& hint, std::size_t count = 1) {
        if (ignored_violation(plan, refused_line)) return;
        lines.push_back(refused_line + hint);
        times.push_back(count);
    };
    for (const auto& e : refused) {
        auto [line, hint] = proxy_refusal_parts(plan, e);
        add(line, hint);
    }
    for (const auto& r : sockets) add(r.line, r.hint, r.times);
    if (scanner != nullptr)
        for (const auto& r : file_refusal_lines(plan, *scanner)) add(r.line, r.hint, r.times);
    for (const auto& n : neutralised) {
        lines.push_back(sbx::git_audit_line(n));
        times.push_back(1);
    }
    if (found != nullptr)
        for (const auto& f : findings_lines(*found)) add(f.line, f.hint, f.times);
    for (const auto& f : unchecked) {
        lines.push_back(sbx::git_audit_failure_line(f));
        times.push_back(1);
    }
    return sbx::violations_block(lines, times);
}

sbx::expected<void> check_pass_fds(const sbx::Plan& plan, std::initializer_list<int> own) {
    for (std::size_t i = 0; i < plan.pass_fds.size(); ++i) {
        const int fd = plan.pass_fds[i];
        const std::string key = "command.passFds[" + std::to_string(i) + "]";
        if (std::find(own.begin(), own.end(), fd) != own.end())
            return sbx::fail(sbx::Error(sbx::Errc::invalid_plan, "descriptor " + std::to_string(fd) +
                                                                    " is one of the launcher's own (the plan, "
                                                                    "report, control or trace descriptor)")
                                 .at_key(key));
        if (::fcntl(fd, F_GETFD) < 0)
            return sbx::fail(
                sbx::Error(sbx::Errc::invalid_plan, "descriptor " + std::to_string(fd) + " is not open").at_key(key));
    }
    return {};
}

// Runs the plan's command without a sandbox (failIfUnavailable: false), waits,
// and returns a shell-style status.
int run_unconfined(const sbx::Plan& plan) {
    auto env = env_strings(plan, true);
    auto argv = plan.argv;
    const pid_t pid = ::fork();
    if (pid < 0) return kFailedBeforeCommand;
    if (pid == 0) {
        ::signal(SIGPIPE, SIG_DFL);
        if (::chdir(plan.cwd.c_str()) != 0) ::_exit(kCannotRun);
        // As in the sandbox, the command gets 0-2 and the descriptors the plan names.
        if (!sweep_fds(plan.pass_fds, FdSweep::close)) ::_exit(kCannotRun);
        auto e = c_strings(env);
        environ = e.data();
        auto a = c_strings(argv);
        ::execvp(a[0], a.data());
        ::_exit(errno == ENOENT ? kNotFound : kCannotRun);
    }
    watch_sandbox(pid, KillScope::process);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    sandbox_ended();
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

}  // namespace sbx::launcher
