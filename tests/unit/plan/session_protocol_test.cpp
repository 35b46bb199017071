// A session's control socket (sbx/plan/session_protocol.hpp): requests read
// strictly, each refusal naming its key; requests and events written as lines
// that read back as themselves.
#include "sbx/plan/session_protocol.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

namespace s = sbx::session;

s::Request run_request() {
    s::Request r;
    r.op = s::Op::run;
    r.id = "c-1.a_b";
    r.run.argv = {"npm", "run", "dev", "with \"quotes\" and \\ and \t tab"};
    r.run.cwd = "/home/ana/proj/web";
    r.run.env = {{"PATH", "/usr/bin:/bin"}, {"EMPTY", ""}, {"ÜNICODE", "wert ✓"}};
    r.run.hosts = {"registry.npmjs.org", "[::1]:3000"};
    r.run.violations = false;
    return r;
}

// The refusal of `line`: its key and message.
std::string refusal(const std::string& line) {
    auto r = s::parse_request(line);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == sbx::Errc::invalid_argument);
    return (r.error().key.empty() ? "" : r.error().key + ": ") + r.error().message;
}

}  // namespace

TEST_CASE("session protocol: every request reads back as itself") {
    std::vector<s::Request> all;
    all.push_back(run_request());
    s::Request terminal = run_request();
    terminal.run.stdio = s::Stdio::terminal;
    terminal.run.rows = 40;
    terminal.run.cols = 120;
    all.push_back(terminal);
    terminal.run.tty = {false, true, true};  // its standard input comes as a descriptor
    all.push_back(terminal);
    s::Request signal;
    signal.op = s::Op::signal;
    signal.id = "c1";
    signal.signal = s::Signal::interrupt;
    all.push_back(signal);
    s::Request resize;
    resize.op = s::Op::resize;
    resize.id = "c1";
    resize.rows = 50;
    resize.cols = 200;
    all.push_back(resize);
    s::Request stop;
    stop.op = s::Op::stop;
    all.push_back(stop);
    all.push_back(s::Request{});  // status
    s::Request expose;
    expose.op = s::Op::expose;
    expose.port = 3000;
    all.push_back(expose);
    expose.listen = 0;
    all.push_back(expose);
    expose.listen = 8080;
    all.push_back(expose);
    s::Request asking = run_request();
    asking.run.asks = true;
    all.push_back(asking);
    s::Request answer;
    answer.op = s::Op::answer;
    answer.id = "c1";
    answer.ask = 7;
    answer.allow = true;
    all.push_back(answer);
    answer.for_session = true;
    answer.allow = false;
    all.push_back(answer);
    for (const auto& r : all) {
        const std::string line = s::request_line(r);
        CAPTURE(line);
        REQUIRE(line.back() == '\n');
        CHECK(line.find('\n') == line.size() - 1);
        auto back = s::parse_request(std::string_view(line).substr(0, line.size() - 1));
        REQUIRE(back.has_value());
        CHECK(*back == r);
    }
}

TEST_CASE("session protocol: a request is refused with its key named, never cut or defaulted") {
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"]})") == "cwd: missing from a run request");
    CHECK(refusal(R"({"v":2,"op":"status"})") == "v: this session speaks version 1, not 2");
    CHECK(refusal(R"({"op":"status"})") == "v: missing");
    CHECK(refusal(R"({"v":1,"op":"launch"})") == "op: is none of run, signal, resize, stop, status, expose, answer");
    CHECK(refusal(R"({"v":1,"op":"answer","id":"c1","answer":"allow"})") == "ask: missing from an answer request");
    CHECK(refusal(R"({"v":1,"op":"answer","id":"c1","ask":0,"answer":"allow"})") ==
          "ask: is 0; questions are numbered from 1");
    CHECK(refusal(R"({"v":1,"op":"answer","id":"c1","ask":1,"answer":"yes"})") == "answer: is neither allow nor deny");
    CHECK(refusal(R"({"v":1,"op":"answer","id":"c1","ask":1,"answer":"allow","for":"always"})") ==
          "for: is neither command nor session");
    CHECK(refusal(R"({"v":1,"op":"answer","ask":1,"answer":"allow"})") == "id: missing from an answer request");
    CHECK(refusal(R"({"v":1,"op":"answer","id":"c1","ask":1,"answer":"allow","port":1})") ==
          "port: not a key of an answer request");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"],"cwd":"/","asks":1})") ==
          "asks: expected true or false, got a number");
    CHECK(refusal(R"({"v":1,"op":"status","asks":true})") == "asks: not a key of a status request");
    CHECK(refusal(R"({"v":1,"op":"expose"})") == "port: missing from an expose request");
    CHECK(refusal(R"({"v":1,"op":"expose","port":0})") == "port: is 0; a port of the session's is 1 to 65535");
    CHECK(refusal(R"({"v":1,"op":"expose","port":65536})") == "port: is 65536; the most is 65535");
    CHECK(refusal(R"({"v":1,"op":"expose","port":80,"listen":-1})") == "listen: expected a whole number from 0 to 65535");
    CHECK(refusal(R"({"v":1,"op":"expose","port":80,"id":"c1"})") == "id: not a key of an expose request");
    CHECK(refusal(R"({"v":1,"op":"status","port":80})") == "port: not a key of a status request");
    CHECK(refusal(R"({"v":1,"op":"status","id":"c1"})") == "id: not a key of a status request");
    CHECK(refusal(R"({"v":1,"op":"status","extra":1})") == "extra: not a key of this request");
    CHECK(refusal(R"({"v":1,"op":"status","v":1})") == "v: given twice");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c 1","argv":["true"],"cwd":"/"})") ==
          "id: holds a byte other than letters, digits and ._-");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":[],"cwd":"/"})") == "argv: is empty");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true",7],"cwd":"/"})") ==
          "argv[1]: expected a string, got a number");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["a\u0000b"],"cwd":"/"})") == "argv[0]: holds a NUL byte");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"],"cwd":"proj"})") ==
          "cwd: is not an absolute, normalised path");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"],"cwd":"/a/../b"})") ==
          "cwd: is not an absolute, normalised path");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"],"cwd":"/","env":{"A=B":"x"}})") ==
          "env.A=B: is no variable name (empty, or holds = or NUL)");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"],"cwd":"/","env":{"A":"x","A":"y"}})") ==
          "env.A: given twice");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"],"cwd":"/","rows":24})") ==
          "rows: is for a terminal (stdio: terminal)");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"],"cwd":"/","stdio":"pipe"})") ==
          "stdio: is neither fds nor terminal");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"],"cwd":"/","tty":[0]})") ==
          "tty: is for a terminal (stdio: terminal)");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"],"cwd":"/","stdio":"terminal","tty":[]})") ==
          "tty: is empty; without a terminal, stdio is fds");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"],"cwd":"/","stdio":"terminal","tty":[1,0]})") ==
          "tty: lists 0, 1 and 2 in order, each once");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"],"cwd":"/","stdio":"terminal","tty":[1,1]})") ==
          "tty: lists 0, 1 and 2 in order, each once");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"],"cwd":"/","stdio":"terminal","tty":[3]})") ==
          "tty: is 3; the most is 2");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"],"cwd":"/","stdio":"terminal","tty":"0"})") ==
          "tty: expected an array, got a string");
    CHECK(refusal(R"({"v":1,"op":"resize","id":"c1","rows":-1,"cols":80})") ==
          "rows: expected a whole number from 0 to 10000");
    CHECK(refusal(R"({"v":1,"op":"resize","id":"c1","rows":10001,"cols":80})") == "rows: is 10001; the most is 10000");
    CHECK(refusal(R"({"v":1,"op":"resize","id":"c1","rows":1.5,"cols":80})") ==
          "rows: expected a whole number from 0 to 10000");
    CHECK(refusal(R"({"v":1,"op":"signal","id":"c1","signal":"USR1"})") ==
          "signal: is none of TERM, INT, HUP, QUIT, KILL");
    CHECK(refusal(R"({"v":1,"op":"run","id":"c1","argv":["true"],"cwd":"/","violations":"yes"})") ==
          "violations: expected true or false, got a string");
    CHECK(refusal("[1]") == "expected an object, got an array");
    // A line that is no JSON: the byte where it goes wrong.
    CHECK(refusal(R"({"v":1,"op":})").find("(byte 13)") != std::string::npos);
    // Limits an attacker can reach fail closed.
    std::string many = R"({"v":1,"op":"run","id":"c1","cwd":"/","argv":[)";
    for (std::size_t i = 0; i <= s::kMaxArgs; ++i) many += std::string(i ? "," : "") + "\"a\"";
    CHECK(refusal(many + "]}") == "argv: has more than 4096 entries");
    CHECK(refusal(std::string(s::kMaxLine, ' ')).find("the most is 262144") != std::string::npos);
    CHECK(refusal(R"({"v":1,"op":"run","id":")" + std::string(65, 'a') + R"(","argv":["true"],"cwd":"/"})") ==
          "id: is longer than 64 bytes");
}

TEST_CASE("session protocol: events read back as themselves, and strictly") {
    std::vector<s::Event> all(10);
    all[0].kind = s::EventKind::started;
    all[0].id = "c1";
    all[1].kind = s::EventKind::exit;
    all[1].id = "c1";
    all[1].status = 3;
    all[2].kind = s::EventKind::exit;
    all[2].id = "c1";
    all[2].signal = 15;
    all[3].kind = s::EventKind::violation;
    all[3].id = "c1";
    all[3].line = "deny network-outbound example.com:443 (not allowed)";
    all[4].kind = s::EventKind::error;
    all[4].code = std::string(s::kProtocolErrorCode);
    all[4].message = "cwd: missing from a run request";
    all[5].kind = s::EventKind::status;
    all[5].root = "/home/ana/proj";
    all[5].commands = 2;
    all[6].kind = s::EventKind::exposed;
    all[6].port = 3000;
    all[6].listen = 43123;
    all[7].kind = s::EventKind::ask;
    all[7].id = "c1";
    all[7].ask = 2;
    all[7].host = "pypi.org";
    all[7].port = 443;
    all[8].kind = s::EventKind::warning;
    all[8].id = "c1";
    all[8].message = "sub/.git: a repository made during this session";
    all[9].kind = s::EventKind::warning;
    all[9].message = "without an id";
    for (const auto& e : all) {
        const std::string line = s::event_line(e);
        CAPTURE(line);
        auto back = s::parse_event(std::string_view(line).substr(0, line.size() - 1));
        REQUIRE(back.has_value());
        CHECK(*back == e);
    }
    CHECK_FALSE(s::parse_event(R"({"event":"exit","id":"c1"})"));
    CHECK_FALSE(s::parse_event(R"({"event":"exit","id":"c1","status":0,"signal":9})"));
    CHECK_FALSE(s::parse_event(R"({"event":"exit","id":"c1","status":256})"));
    CHECK_FALSE(s::parse_event(R"({"event":"started"})"));
    CHECK_FALSE(s::parse_event(R"({"event":"started","id":"c1","line":"x"})"));
    CHECK_FALSE(s::parse_event(R"({"event":"done","id":"c1"})"));
    CHECK_FALSE(s::parse_event(R"({"event":"exposed","port":3000})"));
    CHECK_FALSE(s::parse_event(R"({"event":"exposed","port":0,"listen":1})"));
    CHECK_FALSE(s::parse_event(R"({"event":"status","root":"/","commands":0,"port":1})"));
    CHECK_FALSE(s::parse_event(R"({"event":"ask","id":"c1","ask":1,"host":"pypi.org"})"));
    CHECK_FALSE(s::parse_event(R"({"event":"ask","id":"c1","ask":0,"host":"pypi.org","port":443})"));
    CHECK_FALSE(s::parse_event(R"({"event":"ask","id":"c1","ask":1,"host":"","port":443})"));
    CHECK_FALSE(s::parse_event(R"({"event":"ask","ask":1,"host":"pypi.org","port":443})"));
    CHECK_FALSE(s::parse_event(R"({"event":"warning","id":"c1"})"));
    CHECK_FALSE(s::parse_event(R"({"event":"warning","message":""})"));
    CHECK_FALSE(s::parse_event(R"({"event":"warning","message":"x","line":"y"})"));
}
