// sbx/plan/session_protocol.hpp - the messages of a session's control socket (docs/sessions.md).
//
// A session is one sandbox that runs many commands (issue 37). This header is
// its protocol, so that the holder, `sbx run --session` and hosts in other
// languages are held to one text. A host
// speaks JSON lines on the session's Unix stream socket: each request is one
// line of one JSON object, at most kMaxLine bytes with its newline, and the
// descriptors a `run` hands over (the command's standard input, output and
// error, or its terminal) travel as SCM_RIGHTS in the same sendmsg() as the
// line's first byte. The session answers with event lines of the same shape.
// Every request is read strictly: an unknown key, a wrong type, a value out
// of range, a missing key or a second one is refused with the key named and,
// for a line that is no JSON, the byte where it goes wrong. A refused request
// changes nothing; its answer is an `error` event (kProtocolErrorCode).
// A run with "asks": true is asked, by `ask` events, about the hosts no rule
// decides for it; the client answers each with an `answer` request naming the
// question's number, "for" the command or the rest of the session. A run
// without it is never asked: such a host is refused.
// Pure: parse_request() and request_line() for both sides, event_line() and
// parse_event() likewise; the sockets are the holder's and the client's.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"

namespace sbx::session {

// The version every request carries as "v"; a session refuses another.
inline constexpr int kProtocolVersion = 1;

// Limits a request is held to; past them it is refused, never cut.
inline constexpr std::size_t kMaxLine = 256 * 1024;  // bytes, the newline included
inline constexpr std::size_t kMaxArgs = 4096;        // argv's words
inline constexpr std::size_t kMaxEnv = 4096;         // environment variables
inline constexpr std::size_t kMaxHosts = 256;        // hosts a call lists
inline constexpr std::size_t kMaxIdBytes = 64;       // a command's id
inline constexpr unsigned kMaxTerminalSide = 10000;  // rows or columns

// What a request asks.
enum class Op {
    run,     // start a command: argv, cwd, env, its descriptors (stdio) or terminal
    signal,  // send a signal to a command's process group
    resize,  // a command's terminal changed size
    stop,    // end the session: every command, the checks after, nothing left
    status,  // what the session is and runs
    expose,  // a port of the session's loopback, reached from the host's loopback
    answer,  // the answer to a question (an `ask` event) about one of the client's commands
};

// The signals a host may send to a command (signal names without SIG).
enum class Signal { term, interrupt, hangup, quit, kill };

// How a command gets its standard streams: three descriptors handed over with
// the request (`fds`, in the order 0, 1, 2), or one terminal the session makes
// for it whose master is handed back with the `started` event (`terminal`), in
// place of the streams RunRequest::tty names (the others' descriptors come
// with the request, in order), as sbx run gives one in place of each of its
// caller's streams that is a terminal.
enum class Stdio { fds, terminal };

struct RunRequest {
    std::vector<std::string> argv;  // argv[0] looked up on the command's PATH, as sbx run does
    std::string cwd;                // absolute; inside the session's root or another readable place
    std::vector<std::pair<std::string, std::string>> env;  // the command's own, before the session's policy filters it
    Stdio stdio = Stdio::fds;
    unsigned rows = 0, cols = 0;     // the terminal's size (Stdio::terminal), 0: the session's default
    std::array<bool, 3> tty{true, true, true};  // which of 0-2 the terminal takes (Stdio::terminal; "tty": [0, 1])
    std::vector<std::string> hosts;  // the hosts this call lists (sbx run --allow-host), for this command only
    bool violations = true;          // a <sandbox_violations> block on the command's standard error
    bool asks = false;               // the client answers questions about hosts (`ask` events) for it
    friend bool operator==(const RunRequest&, const RunRequest&) = default;
};

struct Request {
    Op op = Op::status;
    std::string id;  // a command's: chosen by the host (run), named again by signal and resize
    RunRequest run;  // Op::run
    Signal signal = Signal::term;  // Op::signal
    unsigned rows = 0, cols = 0;   // Op::resize
    unsigned port = 0;             // Op::expose: the session's port, 1-65535
    std::optional<unsigned> listen;  // Op::expose: the host's port, 0-65535 (0: any free one); unset: `port`
    std::uint64_t ask = 0;           // Op::answer: the question's number, from its `ask` event
    bool allow = false;              // Op::answer: "allow" or "deny"
    bool for_session = false;        // Op::answer: "for": "session" (else "command", the default)
    friend bool operator==(const Request&, const Request&) = default;
};

// The `code` of the error event that answers a request parse_request() refused.
inline constexpr std::string_view kProtocolErrorCode = "INVALID_REQUEST";

// One request line (without its newline). INVALID_ARGUMENT naming the key (or,
// for a line that is no JSON, the byte) and what is wrong.
SBX_INLINE expected<Request> parse_request(std::string_view line);

// `r` as the one line parse_request() reads back as `r`, newline included.
SBX_INLINE std::string request_line(const Request& r);

// What a session says, one line each.
enum class EventKind {
    started,    // a command runs: its id
    exit,       // a command ended: its id, and its status or the signal that ended it
    violation,  // a refusal while it ran: its id and the block's line
    error,      // a request refused, or a command that could not start: code and message (id when it had one)
    status,     // the answer to Op::status: the session's root and how many commands run
    exposed,    // the answer to Op::expose: the session's port and the host's that leads to it
    ask,        // a question about a host no rule decides, to the client of the command that would reach it
    warning,    // something the client's person should know before a run: its message (and the run's id)
};

struct Event {
    EventKind kind = EventKind::status;
    std::string id;
    int status = -1;  // exit: the exit status, or -1 when a signal ended it
    int signal = 0;   // exit: the signal that ended it, 0 when none did
    std::string code, message;  // error: an Errc name or kProtocolErrorCode, and one line; warning: message
    std::string line;           // violation: the block's line
    std::string root;           // status
    std::size_t commands = 0;   // status: commands running
    unsigned port = 0, listen = 0;  // exposed: the session's port, and the host's; ask: the port asked about
    std::uint64_t ask = 0;          // ask: the question's number, which its answer names
    std::string host;               // ask: the host, as the proxy read it (a name or an address, no brackets)
    friend bool operator==(const Event&, const Event&) = default;
};

// `e` as one line, newline included; parse_event() reads it back, strictly, for
// a client (a C++ host links both).
SBX_INLINE std::string event_line(const Event& e);
SBX_INLINE expected<Event> parse_event(std::string_view line);

// The names the protocol spells: "run", "TERM", "started", ...
SBX_INLINE std::string_view op_name(Op op);
SBX_INLINE std::string_view signal_name(Signal s);
SBX_INLINE std::string_view event_name(EventKind k);

}  // namespace sbx::session

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_PLAN)

#include <algorithm>
#include <array>
#include <memory>

#include "sbx/core/ascii.hpp"
#include "sbx/core/json.hpp"
#include "sbx/core/json_write.hpp"
#include "sbx/core/paths.hpp"

namespace sbx::session {

SBX_INLINE std::string_view op_name(Op op) {
    switch (op) {
        case Op::run: return "run";
        case Op::signal: return "signal";
        case Op::resize: return "resize";
        case Op::stop: return "stop";
        case Op::status: return "status";
        case Op::expose: return "expose";
        case Op::answer: return "answer";
    }
    return "?";
}

SBX_INLINE std::string_view signal_name(Signal s) {
    switch (s) {
        case Signal::term: return "TERM";
        case Signal::interrupt: return "INT";
        case Signal::hangup: return "HUP";
        case Signal::quit: return "QUIT";
        case Signal::kill: return "KILL";
    }
    return "?";
}

SBX_INLINE std::string_view event_name(EventKind k) {
    switch (k) {
        case EventKind::started: return "started";
        case EventKind::exit: return "exit";
        case EventKind::violation: return "violation";
        case EventKind::error: return "error";
        case EventKind::status: return "status";
        case EventKind::exposed: return "exposed";
        case EventKind::ask: return "ask";
        case EventKind::warning: return "warning";
    }
    return "?";
}

}  // namespace sbx::session

namespace sbx::session::detail {

using element = simdjson::dom::element;
using element_type = simdjson::dom::element_type;

// "a run", "an expose": a request's or event's name as the messages say it.
inline std::string with_article(std::string_view name) {
    return (name.find_first_of("aeiou") == 0 ? "an " : "a ") + std::string(name);
}

inline tl::unexpected<Error> refuse(std::string key, std::string message) {
    return fail(Error(Errc::invalid_argument, std::move(message)).at_key(std::move(key)));
}

// An object's members, each named in `known` and none twice; `required` there too.
SBX_INLINE expected<std::vector<std::pair<std::string_view, element>>> members(
    element v, const std::string& where, std::initializer_list<std::string_view> known,
    std::initializer_list<std::string_view> required) {
    if (v.type() != element_type::OBJECT)
        return refuse(where, std::string("expected an object, got ") + std::string(json::type_name(v.type())));
    std::vector<std::pair<std::string_view, element>> out;
    for (auto field : simdjson::dom::object(v)) {
        const std::string_view k = field.key;
        const std::string key = where.empty() ? std::string(k) : where + "." + std::string(k);
        if (std::find(known.begin(), known.end(), k) == known.end()) return refuse(key, "not a key of this request");
        if (std::any_of(out.begin(), out.end(), [&](const auto& m) { return m.first == k; }))
            return refuse(key, "given twice");
        out.emplace_back(k, field.value);
    }
    for (const auto r : required)
        if (std::none_of(out.begin(), out.end(), [&](const auto& m) { return m.first == r; }))
            return refuse(where.empty() ? std::string(r) : where + "." + std::string(r), "missing");
    return out;
}

SBX_INLINE const element* member(const std::vector<std::pair<std::string_view, element>>& m, std::string_view k) {
    for (const auto& [name, value] : m)
        if (name == k) return &value;
    return nullptr;
}

// A string with no control character (and, with `nonempty`, not empty).
SBX_INLINE expected<std::string> text(element v, const std::string& key, bool nonempty) {
    if (v.type() != element_type::STRING)
        return refuse(key, std::string("expected a string, got ") + std::string(json::type_name(v.type())));
    const std::string_view s = v.get_string().value_unsafe();
    if (nonempty && s.empty()) return refuse(key, "is empty");
    if (s.find('\0') != std::string_view::npos) return refuse(key, "holds a NUL byte");
    return std::string(s);
}

SBX_INLINE expected<std::uint64_t> whole(element v, const std::string& key, std::uint64_t max) {
    std::uint64_t n = 0;
    if (v.type() == element_type::UINT64) n = v.get_uint64().value_unsafe();
    else if (v.type() == element_type::INT64 && v.get_int64().value_unsafe() >= 0)
        n = static_cast<std::uint64_t>(v.get_int64().value_unsafe());
    else return refuse(key, "expected a whole number from 0 to " + std::to_string(max));
    if (n > max) return refuse(key, "is " + std::to_string(n) + "; the most is " + std::to_string(max));
    return n;
}

SBX_INLINE expected<bool> boolean(element v, const std::string& key) {
    if (v.type() != element_type::BOOL)
        return refuse(key, std::string("expected true or false, got ") + std::string(json::type_name(v.type())));
    return v.get_bool().value_unsafe();
}

SBX_INLINE expected<std::vector<std::string>> strings(element v, const std::string& key, std::size_t max,
                                                      bool nonempty_list) {
    if (v.type() != element_type::ARRAY)
        return refuse(key, std::string("expected an array, got ") + std::string(json::type_name(v.type())));
    std::vector<std::string> out;
    for (element item : simdjson::dom::array(v)) {
        const std::string at = key + "[" + std::to_string(out.size()) + "]";
        if (out.size() == max) return refuse(key, "has more than " + std::to_string(max) + " entries");
        auto s = text(item, at, true);
        SBX_TRY(s);
        out.push_back(std::move(*s));
    }
    if (nonempty_list && out.empty()) return refuse(key, "is empty");
    return out;
}

// A command's id: 1 to kMaxIdBytes of letters, digits and `._-`.
SBX_INLINE expected<std::string> command_id(element v) {
    auto id = text(v, "id", true);
    SBX_TRY(id);
    if (id->size() > kMaxIdBytes) return refuse("id", "is longer than " + std::to_string(kMaxIdBytes) + " bytes");
    for (const char c : *id)
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-'))
            return refuse("id", "holds a byte other than letters, digits and ._-");
    return id;
}

SBX_INLINE expected<std::vector<std::pair<std::string, std::string>>> environment(element v) {
    if (v.type() != element_type::OBJECT)
        return refuse("env", std::string("expected an object, got ") + std::string(json::type_name(v.type())));
    std::vector<std::pair<std::string, std::string>> out;
    for (auto field : simdjson::dom::object(v)) {
        const std::string_view k = field.key;
        const std::string key = "env." + std::string(k);
        if (out.size() == kMaxEnv) return refuse("env", "has more than " + std::to_string(kMaxEnv) + " variables");
        if (k.empty() || k.find('=') != std::string_view::npos || k.find('\0') != std::string_view::npos)
            return refuse(key, "is no variable name (empty, or holds = or NUL)");
        if (std::any_of(out.begin(), out.end(), [&](const auto& e) { return e.first == k; }))
            return refuse(key, "given twice");
        auto s = text(field.value, key, false);
        SBX_TRY(s);
        out.emplace_back(std::string(k), std::move(*s));
    }
    return out;
}

// Over 80 lines: one request's keys after another, each read and checked in turn.
SBX_INLINE expected<Request> read_request(element root) {
    auto m = members(root, "", {"v", "op", "id", "argv", "cwd", "env", "stdio", "rows", "cols", "tty", "hosts",
                                "violations", "asks", "signal", "port", "listen", "ask", "answer", "for"},
                     {"v", "op"});
    SBX_TRY(m);
    auto v = whole(*member(*m, "v"), "v", 1000);
    SBX_TRY(v);
    if (*v != static_cast<std::uint64_t>(kProtocolVersion))
        return refuse("v", "this session speaks version " + std::to_string(kProtocolVersion) + ", not " +
                               std::to_string(*v));
    auto op_text = text(*member(*m, "op"), "op", true);
    SBX_TRY(op_text);
    Request r;
    constexpr std::array kOps{Op::run, Op::signal, Op::resize, Op::stop, Op::status, Op::expose, Op::answer};
    const auto op = std::find_if(kOps.begin(), kOps.end(), [&](Op o) { return op_name(o) == *op_text; });
    if (op == kOps.end()) return refuse("op", "is none of run, signal, resize, stop, status, expose, answer");
    r.op = *op;
    // Which keys each op takes besides v and op, and which of them it needs.
    auto allowed = [&](std::initializer_list<std::string_view> keys, std::initializer_list<std::string_view> needed)
        -> expected<void> {
        for (const auto& [k, value] : *m) {
            (void)value;
            if (k != "v" && k != "op" && std::find(keys.begin(), keys.end(), k) == keys.end())
                return refuse(std::string(k), "not a key of " + with_article(*op_text) + " request");
        }
        for (const auto n : needed)
            if (member(*m, n) == nullptr)
                return refuse(std::string(n), "missing from " + with_article(*op_text) + " request");
        return {};
    };
    switch (r.op) {
        case Op::run:
            SBX_TRY(allowed({"id", "argv", "cwd", "env", "stdio", "rows", "cols", "tty", "hosts", "violations", "asks"},
                            {"id", "argv", "cwd"}));
            break;
        case Op::signal: SBX_TRY(allowed({"id", "signal"}, {"id", "signal"})); break;
        case Op::resize: SBX_TRY(allowed({"id", "rows", "cols"}, {"id", "rows", "cols"})); break;
        case Op::stop:
        case Op::status: SBX_TRY(allowed({}, {})); break;
        case Op::expose: SBX_TRY(allowed({"port", "listen"}, {"port"})); break;
        case Op::answer: SBX_TRY(allowed({"id", "ask", "answer", "for"}, {"id", "ask", "answer"})); break;
    }
    if (const auto* e = member(*m, "id")) {
        auto id = command_id(*e);
        SBX_TRY(id);
        r.id = std::move(*id);
    }
    for (const auto* side : {"rows", "cols"})
        if (const auto* e = member(*m, side)) {
            auto n = whole(*e, side, kMaxTerminalSide);
            SBX_TRY(n);
            (std::string_view(side) == "rows" ? r.rows : r.cols) = static_cast<unsigned>(*n);
        }
    if (r.op == Op::run) {
        r.run.rows = r.rows;
        r.run.cols = r.cols;
        r.rows = r.cols = 0;
        auto argv = strings(*member(*m, "argv"), "argv", kMaxArgs, true);
        SBX_TRY(argv);
        r.run.argv = std::move(*argv);
        auto cwd = text(*member(*m, "cwd"), "cwd", true);
        SBX_TRY(cwd);
        if (!paths::is_absolute(*cwd) || paths::normalize(*cwd) != *cwd)
            return refuse("cwd", "is not an absolute, normalised path");
        r.run.cwd = std::move(*cwd);
        if (const auto* e = member(*m, "env")) {
            auto env = environment(*e);
            SBX_TRY(env);
            r.run.env = std::move(*env);
        }
        if (const auto* e = member(*m, "stdio")) {
            auto s = text(*e, "stdio", true);
            SBX_TRY(s);
            if (*s != "fds" && *s != "terminal") return refuse("stdio", "is neither fds nor terminal");
            r.run.stdio = *s == "fds" ? Stdio::fds : Stdio::terminal;
        }
        if (r.run.stdio == Stdio::fds && (r.run.rows != 0 || r.run.cols != 0))
            return refuse(member(*m, "rows") != nullptr ? "rows" : "cols", "is for a terminal (stdio: terminal)");
        if (const auto* e = member(*m, "tty")) {
            if (r.run.stdio == Stdio::fds) return refuse("tty", "is for a terminal (stdio: terminal)");
            if (e->type() != element_type::ARRAY)
                return refuse("tty", std::string("expected an array, got ") + std::string(json::type_name(e->type())));
            r.run.tty = {false, false, false};
            int last = -1;
            for (element item : simdjson::dom::array(*e)) {
                auto n = whole(item, "tty", 2);
                SBX_TRY(n);
                if (static_cast<int>(*n) <= last) return refuse("tty", "lists 0, 1 and 2 in order, each once");
                last = static_cast<int>(*n);
                r.run.tty[*n] = true;
            }
            if (last < 0) return refuse("tty", "is empty; without a terminal, stdio is fds");
        }
        if (const auto* e = member(*m, "hosts")) {
            auto hosts = strings(*e, "hosts", kMaxHosts, false);
            SBX_TRY(hosts);
            r.run.hosts = std::move(*hosts);
        }
        for (auto [key, out] : {std::pair<std::string_view, bool*>{"violations", &r.run.violations}, {"asks", &r.run.asks}})
            if (const auto* e = member(*m, key)) {
                auto b = boolean(*e, std::string(key));
                SBX_TRY(b);
                *out = *b;
            }
    }
    if (r.op == Op::answer) {
        auto n = whole(*member(*m, "ask"), "ask", std::uint64_t{1} << 53);
        SBX_TRY(n);
        if (*n == 0) return refuse("ask", "is 0; questions are numbered from 1");
        r.ask = *n;
        auto a = text(*member(*m, "answer"), "answer", true);
        SBX_TRY(a);
        if (*a != "allow" && *a != "deny") return refuse("answer", "is neither allow nor deny");
        r.allow = *a == "allow";
        if (const auto* e = member(*m, "for")) {
            auto f = text(*e, "for", true);
            SBX_TRY(f);
            if (*f != "command" && *f != "session") return refuse("for", "is neither command nor session");
            r.for_session = *f == "session";
        }
    }
    if (r.op == Op::expose) {
        auto port = whole(*member(*m, "port"), "port", 65535);
        SBX_TRY(port);
        if (*port == 0) return refuse("port", "is 0; a port of the session's is 1 to 65535");
        r.port = static_cast<unsigned>(*port);
        if (const auto* e = member(*m, "listen")) {
            auto listen = whole(*e, "listen", 65535);
            SBX_TRY(listen);
            r.listen = static_cast<unsigned>(*listen);
        }
    }
    if (r.op == Op::signal) {
        auto s = text(*member(*m, "signal"), "signal", true);
        SBX_TRY(s);
        constexpr std::array kSignals{Signal::term, Signal::interrupt, Signal::hangup, Signal::quit, Signal::kill};
        const auto it = std::find_if(kSignals.begin(), kSignals.end(), [&](Signal g) { return signal_name(g) == *s; });
        if (it == kSignals.end()) return refuse("signal", "is none of TERM, INT, HUP, QUIT, KILL");
        r.signal = *it;
    }
    return r;
}

}  // namespace sbx::session::detail

namespace sbx::session {

SBX_INLINE expected<Request> parse_request(std::string_view line) {
    if (line.size() + 1 > kMaxLine)
        return detail::refuse("", "the line is " + std::to_string(line.size() + 1) + " bytes; the most is " +
                                      std::to_string(kMaxLine));
    auto doc = json::parse(line);
    if (!doc) {
        // A line has one line: its column is the byte, counted from 1.
        const Error& e = doc.error();
        return fail(Errc::invalid_argument, e.message + (e.column > 0 ? " (byte " + std::to_string(e.column) + ")" : ""));
    }
    return detail::read_request((*doc)->root());
}

SBX_INLINE std::string request_line(const Request& r) {
    json::Writer w;
    w.begin_object().key("v").value(kProtocolVersion).key("op").value(op_name(r.op));
    if (r.op == Op::run || r.op == Op::signal || r.op == Op::resize || r.op == Op::answer) w.key("id").value(r.id);
    if (r.op == Op::run) {
        w.key("argv").begin_array();
        for (const auto& a : r.run.argv) w.value(a);
        w.end_array().key("cwd").value(r.run.cwd);
        w.key("env").begin_object();
        for (const auto& [name, value] : r.run.env) w.key(name).value(value);
        w.end_object();
        w.key("stdio").value(r.run.stdio == Stdio::fds ? "fds" : "terminal");
        if (r.run.stdio == Stdio::terminal) {
            w.key("rows").value(static_cast<std::uint64_t>(r.run.rows)).key("cols").value(static_cast<std::uint64_t>(r.run.cols));
            w.key("tty").begin_array();
            for (int i = 0; i < 3; ++i)
                if (r.run.tty[static_cast<std::size_t>(i)]) w.value(i);
            w.end_array();
        }
        if (!r.run.hosts.empty()) {
            w.key("hosts").begin_array();
            for (const auto& h : r.run.hosts) w.value(h);
            w.end_array();
        }
        w.key("violations").value(r.run.violations);
        if (r.run.asks) w.key("asks").value(true);
    }
    if (r.op == Op::answer) {
        w.key("ask").value(r.ask).key("answer").value(r.allow ? "allow" : "deny");
        w.key("for").value(r.for_session ? "session" : "command");
    }
    if (r.op == Op::signal) w.key("signal").value(signal_name(r.signal));
    if (r.op == Op::resize)
        w.key("rows").value(static_cast<std::uint64_t>(r.rows)).key("cols").value(static_cast<std::uint64_t>(r.cols));
    if (r.op == Op::expose) {
        w.key("port").value(static_cast<std::uint64_t>(r.port));
        if (r.listen) w.key("listen").value(static_cast<std::uint64_t>(*r.listen));
    }
    w.end_object();
    return w.take() + "\n";
}

SBX_INLINE std::string event_line(const Event& e) {
    json::Writer w;
    w.begin_object().key("event").value(event_name(e.kind));
    if (!e.id.empty()) w.key("id").value(e.id);
    switch (e.kind) {
        case EventKind::started: break;
        case EventKind::exit:
            if (e.signal != 0) w.key("signal").value(e.signal);
            else w.key("status").value(e.status);
            break;
        case EventKind::violation: w.key("line").value(e.line); break;
        case EventKind::error: w.key("code").value(e.code).key("message").value(e.message); break;
        case EventKind::status:
            w.key("root").value(e.root).key("commands").value(static_cast<std::uint64_t>(e.commands));
            break;
        case EventKind::exposed:
            w.key("port").value(static_cast<std::uint64_t>(e.port)).key("listen").value(static_cast<std::uint64_t>(e.listen));
            break;
        case EventKind::ask:
            w.key("ask").value(e.ask).key("host").value(e.host).key("port").value(static_cast<std::uint64_t>(e.port));
            break;
        case EventKind::warning: w.key("message").value(e.message); break;
    }
    w.end_object();
    return w.take() + "\n";
}

SBX_INLINE expected<Event> parse_event(std::string_view line) {
    if (line.size() + 1 > kMaxLine) return detail::refuse("", "the line is longer than " + std::to_string(kMaxLine) + " bytes");
    auto doc = json::parse(line);
    if (!doc) return fail(Errc::invalid_argument, doc.error().message);
    auto m = detail::members((*doc)->root(), "",
                             {"event", "id", "status", "signal", "code", "message", "line", "root", "commands", "port",
                              "listen", "ask", "host"},
                             {"event"});
    SBX_TRY(m);
    auto name = detail::text(*detail::member(*m, "event"), "event", true);
    SBX_TRY(name);
    constexpr std::array kKinds{EventKind::started, EventKind::exit,    EventKind::violation, EventKind::error,
                                EventKind::status,  EventKind::exposed, EventKind::ask,       EventKind::warning};
    const auto kind = std::find_if(kKinds.begin(), kKinds.end(), [&](EventKind k) { return event_name(k) == *name; });
    if (kind == kKinds.end())
        return detail::refuse("event", "is none of started, exit, violation, error, status, exposed, ask, warning");
    Event e;
    e.kind = *kind;
    // Each kind's keys besides `event`: those it needs, then those it may have.
    std::vector<std::string_view> needed, may;
    switch (e.kind) {
        case EventKind::started: needed = {"id"}; break;
        case EventKind::exit: needed = {"id"}; may = {"status", "signal"}; break;
        case EventKind::violation: needed = {"id", "line"}; break;
        case EventKind::error: needed = {"code", "message"}; may = {"id"}; break;
        case EventKind::status: needed = {"root", "commands"}; break;
        case EventKind::exposed: needed = {"port", "listen"}; break;
        case EventKind::ask: needed = {"id", "ask", "host", "port"}; break;
        case EventKind::warning: needed = {"message"}; may = {"id"}; break;
    }
    for (const auto& [k, value] : *m) {
        (void)value;
        const bool known = k == "event" || std::find(needed.begin(), needed.end(), k) != needed.end() ||
                           std::find(may.begin(), may.end(), k) != may.end();
        if (!known) return detail::refuse(std::string(k), "not a key of " + detail::with_article(*name) + " event");
    }
    for (const auto n : needed)
        if (detail::member(*m, n) == nullptr)
            return detail::refuse(std::string(n), "missing from " + detail::with_article(*name) + " event");
    if (const auto* v = detail::member(*m, "id")) {
        auto id = detail::command_id(*v);
        SBX_TRY(id);
        e.id = std::move(*id);
    }
    const auto* status = detail::member(*m, "status");
    const auto* signal = detail::member(*m, "signal");
    if (e.kind == EventKind::exit && (status == nullptr) == (signal == nullptr))
        return detail::refuse("status", "an exit event has a status or a signal, one of the two");
    if (status != nullptr) {
        auto n = detail::whole(*status, "status", 255);
        SBX_TRY(n);
        e.status = static_cast<int>(*n);
    }
    if (signal != nullptr) {
        auto n = detail::whole(*signal, "signal", 64);
        SBX_TRY(n);
        if (*n == 0) return detail::refuse("signal", "is 0");
        e.signal = static_cast<int>(*n);
    }
    for (auto [key, out] : {std::pair<std::string_view, std::string*>{"code", &e.code}, {"message", &e.message},
                            {"line", &e.line}, {"root", &e.root}, {"host", &e.host}})
        if (const auto* v = detail::member(*m, key)) {
            auto t = detail::text(*v, std::string(key), true);
            SBX_TRY(t);
            *out = std::move(*t);
        }
    if (const auto* v = detail::member(*m, "ask")) {
        auto n = detail::whole(*v, "ask", std::uint64_t{1} << 53);
        SBX_TRY(n);
        if (*n == 0) return detail::refuse("ask", "is 0");
        e.ask = *n;
    }
    if (const auto* v = detail::member(*m, "commands")) {
        auto n = detail::whole(*v, "commands", 1u << 20);
        SBX_TRY(n);
        e.commands = static_cast<std::size_t>(*n);
    }
    for (auto [key, out] : {std::pair<std::string_view, unsigned*>{"port", &e.port}, {"listen", &e.listen}})
        if (const auto* v = detail::member(*m, key)) {
            auto n = detail::whole(*v, std::string(key), 65535);
            SBX_TRY(n);
            if (*n == 0) return detail::refuse(std::string(key), "is 0");
            *out = static_cast<unsigned>(*n);
        }
    return e;
}

}  // namespace sbx::session
#endif
