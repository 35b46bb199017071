#include "proxy.hpp"

#include "host_lookup.hpp"

#include "fd_io.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#if defined(__linux__)
#include <sys/eventfd.h>
#endif
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <utility>

namespace sbx::linux_sandbox {

using sbx::launcher::Fd;  // fd_io.hpp's, shared with the launchers

namespace {

namespace net = sbx::net;
using Clock = std::chrono::steady_clock;

// A relay's buffer per direction starts at this size and doubles, up to the
// largest, while reads keep filling it: small for interactive connections, large
// for bulk transfers (on a 2-core loopback a 4 MiB buffer moved 1 GiB about 10%
// faster than 1 MiB and 35% faster than 256 KiB). What all buffers of one proxy
// grow beyond their first size is capped by the budget.
constexpr std::size_t kFirstBuffer = 64 * 1024;
constexpr std::size_t kLargestBuffer = 4 * 1024 * 1024;
constexpr std::size_t kGrowthBudget = 64 * 1024 * 1024;
// After an error answer the proxy reads and drops what the client still sends, up
// to this much and this long, so that closing does not reset the connection
// before the client has read the answer.
constexpr std::size_t kLingerBytes = 4 * 1024 * 1024;
constexpr std::chrono::milliseconds kLingerTime{2000};

enum class Protocol { http, socks5, forward };

// Portability: the proxy runs in sbx-linux and in sbx-mac. macOS has neither
// eventfd, accept4, SOCK_CLOEXEC nor MSG_NOSIGNAL; sbx-mac ignores SIGPIPE, so
// a send to a closed peer fails with EPIPE there as here. (Only the Linux
// branches are built and tested on this project's machines.)
#if !defined(MSG_NOSIGNAL)
constexpr int kNoSignal = 0;
#else
constexpr int kNoSignal = MSG_NOSIGNAL;
#endif

[[maybe_unused]] void cloexec_nonblock(int fd) {
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
}

int stream_socket(int family) {
#if defined(__linux__)
    return ::socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
#else
    const int fd = ::socket(family, SOCK_STREAM, 0);
    if (fd >= 0) cloexec_nonblock(fd);
    return fd;
#endif
}

int accept_client(int listener) {
#if defined(__linux__)
    return ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
#else
    const int fd = ::accept(listener, nullptr, nullptr);
    if (fd >= 0) cloexec_nonblock(fd);
    return fd;
#endif
}

// Something a poll waits on, set from another thread: an eventfd on Linux, a
// pipe elsewhere.
class Event {
public:
    bool open() {
#if defined(__linux__)
        read_ = Fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
        return read_.get() >= 0;
#else
        int fds[2];
        if (::pipe(fds) != 0) return false;
        read_ = Fd(fds[0]);
        write_ = Fd(fds[1]);
        cloexec_nonblock(fds[0]);
        cloexec_nonblock(fds[1]);
        return true;
#endif
    }
    int fd() const { return read_.get(); }
    void notify() const {
        const std::uint64_t one = 1;
        [[maybe_unused]] const ssize_t w = ::write(write_.get() >= 0 ? write_.get() : read_.get(), &one, sizeof one);
    }
    void drain() const {
        char buf[64];
        while (::read(read_.get(), buf, sizeof buf) > 0) {
        }
    }
    void close() {
        read_.reset();
        write_.reset();
    }

private:
    Fd read_, write_;
};

}  // namespace

struct Proxy::State {
    ProxyOptions options;
    Fd http_listener, socks_listener;
    struct Forward {
        Fd listener;
        std::string host;
        std::uint16_t port = 0;
    };
    std::vector<Forward> forwards;
    Event stop_event;  // readable from the moment stop() begins: every poll watches it
    Event reap_event;  // set by each connection thread as it ends
    std::atomic<bool> stopping{false};
    std::atomic<std::size_t> live{0};
    std::atomic<std::size_t> grown{0};  // bytes the relay buffers grew by, against kGrowthBudget

    struct Connection {
        std::thread thread;
        std::atomic<bool> done{false};
    };
    std::thread acceptor;
    std::list<Connection> connections;  // the acceptor's; stop()'s once the acceptor has ended

    // Questions: one at a time, each host:port once.
    std::mutex ask_mutex;
    std::condition_variable ask_cv;
    bool asking = false;
    std::map<std::string, bool> answers;

    std::mutex stop_mutex;
    bool stopped = false;
};

namespace {

using State = Proxy::State;

// ---- Waiting, reading and writing with a deadline, watching for stop() ------------

// (On Linux EWOULDBLOCK is EAGAIN.)
enum class Io { ok, closed, timeout, stopped, failed };

// Waits until `fd` reports one of `events` (or an error), stop() begins, or `deadline` passes.
Io wait_for(const State& s, int fd, short events, Clock::time_point deadline) {
    for (;;) {
        int timeout = -1;
        if (deadline != Clock::time_point::max()) {
            const auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
            if (left <= 0) return Io::timeout;
            timeout = static_cast<int>(std::min<long long>(left, INT_MAX));
        }
        pollfd p[2] = {{fd, events, 0}, {s.stop_event.fd(), POLLIN, 0}};
        const int n = ::poll(p, 2, timeout);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return Io::failed;
        if (p[1].revents != 0) return Io::stopped;
        if (p[0].revents != 0) return Io::ok;
    }
}

// Reads at least one byte and at most `n` into `buf`; `got` says how many.
Io read_some(const State& s, int fd, char* buf, std::size_t n, Clock::time_point deadline, std::size_t& got) {
    for (;;) {
        const ssize_t r = ::recv(fd, buf, n, 0);
        if (r > 0) {
            got = static_cast<std::size_t>(r);
            return Io::ok;
        }
        if (r == 0) return Io::closed;
        if (errno == EINTR) continue;
        if (errno != EAGAIN) return Io::failed;
        if (const Io w = wait_for(s, fd, POLLIN, deadline); w != Io::ok) return w;
    }
}

// Reads exactly `n` bytes, and not one more.
Io read_exact(const State& s, int fd, void* buf, std::size_t n, Clock::time_point deadline) {
    auto* p = static_cast<char*>(buf);
    while (n > 0) {
        std::size_t got = 0;
        if (const Io r = read_some(s, fd, p, n, deadline, got); r != Io::ok) return r;
        p += got;
        n -= got;
    }
    return Io::ok;
}

Io write_all(const State& s, int fd, std::string_view data, Clock::time_point deadline) {
    while (!data.empty()) {
        const ssize_t w = ::send(fd, data.data(), data.size(), kNoSignal);
        if (w > 0) {
            data.remove_prefix(static_cast<std::size_t>(w));
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        if (w < 0 && errno != EAGAIN) return Io::failed;
        if (const Io r = wait_for(s, fd, POLLOUT, deadline); r != Io::ok) return r;
    }
    return Io::ok;
}

Clock::time_point after_ms(int ms) { return Clock::now() + std::chrono::milliseconds(std::max(ms, 0)); }

// Sends `answer` (when not empty), then ends the connection gently: no more
// writes, and what the client still sends is read and dropped for a while, so
// that the close does not reset the connection before the client read the answer.
void answer_and_close(const State& s, Fd& client, std::string_view answer) {
    if (!answer.empty() && write_all(s, client.get(), answer, after_ms(s.options.header_timeout_ms)) != Io::ok) {
        client.reset();
        return;
    }
    ::shutdown(client.get(), SHUT_WR);
    const auto deadline = Clock::now() + kLingerTime;
    std::size_t dropped = 0;
    char buf[16 * 1024];
    while (dropped < kLingerBytes) {
        std::size_t got = 0;
        if (read_some(s, client.get(), buf, sizeof buf, deadline, got) != Io::ok) break;
        dropped += got;
    }
    client.reset();
}

// ---- Text --------------------------------------------------------------------------

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

std::string lowercase(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = lower(c);
    return out;
}

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

// `s` on one line of printable text: control characters become spaces.
std::string one_line(std::string_view s) {
    std::string out(s);
    for (char& c : out)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
    return out;
}

// "host:port", with an IPv6 address in brackets.
std::string display(const net::HostTarget& t) {
    const bool v6 = t.address && t.address->is_v6();
    return (v6 ? "[" + t.host + "]" : t.host) + ":" + std::to_string(t.port);
}

std::string http_response(int code, std::string_view phrase, std::string_view line) {
    const std::string body = one_line(line) + "\n";
    return "HTTP/1.1 " + std::to_string(code) + " " + std::string(phrase) +
           "\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: " + std::to_string(body.size()) +
           "\r\nConnection: close\r\n\r\n" + body;
}

// ---- Deciding, resolving and dialing ------------------------------------------------

void report(const State& s, const net::HostTarget& t, std::string_view protocol, std::string rule, std::string reason,
            net::AllowKind allow) {
    if (!s.options.on_refusal) return;
    ProxyEvent e;
    e.host = t.host;
    e.port = t.port;
    e.protocol = std::string(protocol);
    e.rule = std::move(rule);
    e.reason = std::move(reason);
    e.allow = allow;
    try {
        s.options.on_refusal(e);
    } catch (...) {
        // A callback that throws loses its own event and nothing else.
    }
}

// The answer to `t`'s question: the cached one, or ask's, asked by one thread at a time.
bool ask_once(State& s, const net::HostTarget& t) {
    const std::string key = display(t);
    std::unique_lock lock(s.ask_mutex);
    for (;;) {
        if (const auto it = s.answers.find(key); it != s.answers.end()) return it->second;
        if (s.stopping) return false;
        if (!s.asking) break;
        s.ask_cv.wait(lock);
    }
    s.asking = true;
    lock.unlock();
    bool yes = false;
    try {
        yes = s.options.ask(t);
    } catch (...) {
        yes = false;
    }
    lock.lock();
    s.asking = false;
    s.answers[key] = yes;
    s.ask_cv.notify_all();
    return yes;
}

socklen_t to_sockaddr(const net::Address& a, std::uint16_t port, sockaddr_storage& out) {
    std::memset(&out, 0, sizeof out);
    if (a.is_v4()) {
        auto* in = reinterpret_cast<sockaddr_in*>(&out);
        in->sin_family = AF_INET;
        in->sin_port = htons(port);
        std::memcpy(&in->sin_addr, a.bytes.data(), 4);
        return sizeof(sockaddr_in);
    }
    auto* in6 = reinterpret_cast<sockaddr_in6*>(&out);
    in6->sin6_family = AF_INET6;
    in6->sin6_port = htons(port);
    std::memcpy(&in6->sin6_addr, a.bytes.data(), 16);
    return sizeof(sockaddr_in6);
}

// A connected non-blocking socket to a:port, or -1 with errno: ETIMEDOUT after
// connect_timeout_ms, ECANCELED when stop() began.
int system_dial(const State& s, const net::Address& a, std::uint16_t port) {
    sockaddr_storage to;
    const socklen_t length = to_sockaddr(a, port, to);
    Fd fd(stream_socket(to.ss_family));
    if (fd.get() < 0) return -1;
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), length) == 0) return fd.release();
    if (errno != EINPROGRESS && errno != EINTR) {
        const int e = errno;
        fd.reset();
        errno = e;
        return -1;
    }
    int error = 0;
    switch (wait_for(s, fd.get(), POLLOUT, after_ms(s.options.connect_timeout_ms))) {
        case Io::ok: {
            socklen_t size = sizeof error;
            if (::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &error, &size) != 0) error = errno;
            break;
        }
        case Io::timeout: error = ETIMEDOUT; break;
        case Io::stopped: error = ECANCELED; break;
        default: error = EIO; break;
    }
    if (error == 0) return fd.release();
    fd.reset();
    errno = error;
    return -1;
}

void set_nodelay(int fd) {
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

struct Reached {
    enum class Kind {
        connected,
        malformed,    // the host is not one a client may name; reason says why
        refused,      // by the rules, or the resolved addresses; an event was reported
        unresolved,   // the name does not resolve; reason says why
        unreachable,  // dialing failed with `error`
        stopped,
    };
    Kind kind = Kind::stopped;
    net::HostTarget target;
    Fd upstream;
    std::string reason;
    int error = 0;
};

// Decides host:port for `protocol`, and connects when allowed.
Reached reach(State& s, std::string_view host, std::uint16_t port, std::string_view protocol) {
    using Kind = Reached::Kind;
    Reached out;
    auto target = net::canonical_target(host, port);
    if (!target) {
        out.kind = Kind::malformed;
        out.reason = target.error().message;
        return out;
    }
    out.target = std::move(*target);
    const net::HostTarget& t = out.target;
    auto refuse = [&](std::string rule, std::string reason, net::AllowKind allow) {
        report(s, t, protocol, std::move(rule), reason, allow);
        out.kind = Kind::refused;
        out.reason = std::move(reason);
        return std::move(out);
    };

    // Decide, ask, then resolve: a name is looked up only once the rules let it
    // through (a lookup is itself a message out, to whoever serves its domain).
    const auto& rules = s.options.rules;
    const auto& call = s.options.call;
    const auto& own = s.options.own_addresses;
    const net::HostDecision d = net::decide_host(rules, call, t, own);
    if (d.verdict == net::HostDecision::Verdict::deny)
        return refuse(d.rule ? d.rule->text : std::string(), d.why, net::allow_kind(d));
    if (d.verdict == net::HostDecision::Verdict::ask) {
        if (!s.options.ask) return refuse({}, d.why + "; nothing was there to answer", net::AllowKind::hosts);
        if (!ask_once(s, t)) {
            if (s.stopping) {
                out.kind = Kind::stopped;
                return out;
            }
            return refuse({}, d.why + "; refused when asked", net::AllowKind::hosts);
        }
    }

    std::vector<net::Address> resolved;
    if (!t.address) {
        auto r = s.options.resolve ? s.options.resolve(t.host) : sbx::launcher::resolve_host(t.host);
        if (s.stopping) {
            out.kind = Kind::stopped;
            return out;
        }
        if (!r) {
            out.kind = Kind::unresolved;
            out.reason = r.error().message;
            return out;
        }
        resolved = std::move(*r);
    }
    auto passed = net::choose_address(d, rules, call, t, resolved, own);
    // Only addresses a pattern names reach what a name resolved to here.
    if (!passed) return refuse({}, passed.error().message, net::AllowKind::local);
    const net::Address address = *passed;

    const int fd = s.options.dial ? s.options.dial(address, t.port) : system_dial(s, address, t.port);
    if (fd < 0) {
        out.error = errno;
        out.kind = s.stopping ? Kind::stopped : Kind::unreachable;
        out.reason = "connecting to " + (address.is_v6() ? "[" + net::to_string(address) + "]" : net::to_string(address)) +
                     ":" + std::to_string(t.port) + " failed: " + std::strerror(out.error);
        return out;
    }
    out.upstream = Fd(fd);
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    set_nodelay(fd);
    out.kind = Kind::connected;
    return out;
}

// ---- HTTP ----------------------------------------------------------------------------

// Where the head in `data` ends (just past its blank line), looking from about
// `from` on; npos while it has not ended. Lines end in CRLF or a bare LF.
std::size_t head_end(std::string_view data, std::size_t from) {
    for (std::size_t i = from >= 2 ? from - 2 : 0; i < data.size(); ++i) {
        if (data[i] != '\n') continue;
        if (i + 1 < data.size() && data[i + 1] == '\n') return i + 2;
        if (i + 2 < data.size() && data[i + 1] == '\r' && data[i + 2] == '\n') return i + 3;
    }
    return std::string_view::npos;
}

// The lines of a head, each without its line end, up to (not including) the blank one.
std::vector<std::string_view> head_lines(std::string_view head) {
    std::vector<std::string_view> lines;
    while (!head.empty()) {
        const auto nl = head.find('\n');
        std::string_view line = head.substr(0, nl);
        head.remove_prefix(nl == std::string_view::npos ? head.size() : nl + 1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (line.empty()) break;
        lines.push_back(line);
    }
    return lines;
}

bool is_tchar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool is_token(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar); }

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
}

struct Header {
    std::string_view name, value;
};

struct Request {
    std::string_view method, target, version;
    std::vector<Header> headers;
};

// The request in `head`, or nullopt with the reason: a request line of a token,
// one space, a target of visible ASCII, one space and HTTP/1.0 or HTTP/1.1; header
// lines of a token, a colon and a value without control characters; no folded lines.
std::optional<Request> parse_request(std::string_view head, std::string& why) {
    const auto lines = head_lines(head);
    if (lines.empty()) {
        why = "the request line is empty";
        return std::nullopt;
    }
    Request r;
    const std::string_view first = lines.front();
    const auto sp1 = first.find(' ');
    const auto sp2 = sp1 == std::string_view::npos ? sp1 : first.find(' ', sp1 + 1);
    if (sp2 == std::string_view::npos || first.find(' ', sp2 + 1) != std::string_view::npos) {
        why = "the request line is not METHOD TARGET VERSION";
        return std::nullopt;
    }
    r.method = first.substr(0, sp1);
    r.target = first.substr(sp1 + 1, sp2 - sp1 - 1);
    r.version = first.substr(sp2 + 1);
    if (!is_token(r.method)) {
        why = "the method is not a token";
        return std::nullopt;
    }
    if (r.target.empty() || !std::all_of(r.target.begin(), r.target.end(), [](char c) { return c > 0x20 && c < 0x7f; })) {
        why = "the request target is empty or has a character that is not visible ASCII";
        return std::nullopt;
    }
    if (r.version != "HTTP/1.1" && r.version != "HTTP/1.0") {
        why = "the version is not HTTP/1.0 or HTTP/1.1";
        return std::nullopt;
    }
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const std::string_view line = lines[i];
        if (line.front() == ' ' || line.front() == '\t') {
            why = "a header line is folded";
            return std::nullopt;
        }
        const auto colon = line.find(':');
        if (colon == std::string_view::npos || !is_token(line.substr(0, colon))) {
            why = "a header line is not NAME: VALUE";
            return std::nullopt;
        }
        const std::string_view value = trim(line.substr(colon + 1));
        for (char c : value) {
            const auto u = static_cast<unsigned char>(c);
            if ((u < 0x20 && c != '\t') || u == 0x7f) {
                why = "a header value has a control character";
                return std::nullopt;
            }
        }
        r.headers.push_back({line.substr(0, colon), value});
    }
    return r;
}

// "host", "host:port", "[v6]" or "[v6]:port": the host (brackets kept) and the port.
bool split_authority(std::string_view a, std::string_view& host, std::optional<std::uint16_t>& port, std::string& why) {
    std::size_t colon = std::string_view::npos;
    if (!a.empty() && a.front() == '[') {
        const auto close = a.find(']');
        if (close == std::string_view::npos) {
            why = "a '[' without its ']'";
            return false;
        }
        if (close + 1 < a.size() && a[close + 1] != ':') {
            why = "something after ']' that is not :PORT";
            return false;
        }
        host = a.substr(0, close + 1);
        if (close + 1 < a.size()) colon = close + 1;
    } else {
        colon = a.find(':');
        if (colon != std::string_view::npos && a.find(':', colon + 1) != std::string_view::npos) {
            why = "an IPv6 address is written in brackets";
            return false;
        }
        host = a.substr(0, colon);
    }
    if (host.empty()) {
        why = "the host is empty";
        return false;
    }
    port.reset();
    if (colon == std::string_view::npos) return true;
    const std::string_view digits = a.substr(colon + 1);
    unsigned value = 0;
    if (digits.empty() || digits.size() > 5 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) {
        why = "the port is not a number from 1 to 65535";
        return false;
    }
    for (char c : digits) value = value * 10 + static_cast<unsigned>(c - '0');
    if (value == 0 || value > 65535) {
        why = "the port is not a number from 1 to 65535";
        return false;
    }
    port = static_cast<std::uint16_t>(value);
    return true;
}

// The lower-case names a Connection (or Proxy-Connection) header lists, which are
// hop-by-hop too. The framing headers stay whatever it lists: the origin needs
// them to find where a body ends.
void add_listed(std::vector<std::string>& names, std::string_view value) {
    while (!value.empty()) {
        const auto comma = value.find(',');
        const std::string name = lowercase(trim(value.substr(0, comma)));
        value.remove_prefix(comma == std::string_view::npos ? value.size() : comma + 1);
        if (!name.empty() && name != "content-length" && name != "transfer-encoding") names.push_back(name);
    }
}

bool is_hop_by_hop(std::string_view name, const std::vector<std::string>& listed) {
    static constexpr std::string_view kHopByHop[] = {"connection", "proxy-connection",    "keep-alive", "proxy-authorization",
                                                     "te",         "proxy-authenticate", "upgrade"};
    for (auto h : kHopByHop)
        if (iequals(name, h)) return true;
    const std::string n = lowercase(name);
    return std::find(listed.begin(), listed.end(), n) != listed.end();
}

// The request as the origin gets it: origin-form, Host from the URL, no
// hop-by-hop headers, `Connection: close`.
std::string upstream_request(const Request& r, std::string_view path, std::string_view authority) {
    std::vector<std::string> listed;
    for (const auto& h : r.headers)
        if (iequals(h.name, "connection") || iequals(h.name, "proxy-connection")) add_listed(listed, h.value);
    std::string out;
    out.reserve(1024);
    out.append(r.method).append(" ").append(path).append(" ").append(r.version).append("\r\n");
    out.append("Host: ").append(authority).append("\r\n");
    for (const auto& h : r.headers) {
        if (iequals(h.name, "host") || is_hop_by_hop(h.name, listed)) continue;
        out.append(h.name).append(": ").append(h.value).append("\r\n");
    }
    out.append("Connection: close\r\n\r\n");
    return out;
}

// A response head (through its blank line) as the client gets it: hop-by-hop
// headers left out and, but for an interim (1xx) response, `Connection: close`
// added. `interim` says whether it was one, so that the next head is rewritten too.
// Lenient: lines it does not understand pass as they are.
std::string client_response_head(std::string_view head, bool& interim) {
    const auto lines = head_lines(head);
    interim = false;
    if (!lines.empty()) {
        const std::string_view status = lines.front();
        const auto sp = status.find(' ');
        if (sp != std::string_view::npos && sp + 4 <= status.size()) {
            const std::string_view code = status.substr(sp + 1, 3);
            interim = code[0] == '1' && code != "101";
        }
    }
    std::vector<std::string> listed;
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const auto colon = lines[i].find(':');
        if (colon == std::string_view::npos) continue;
        const std::string_view name = trim(lines[i].substr(0, colon));
        if (iequals(name, "connection") || iequals(name, "proxy-connection")) add_listed(listed, lines[i].substr(colon + 1));
    }
    std::string out;
    out.reserve(head.size() + 32);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto colon = lines[i].find(':');
        if (i > 0 && colon != std::string_view::npos && is_hop_by_hop(trim(lines[i].substr(0, colon)), listed)) continue;
        out.append(lines[i]).append("\r\n");
    }
    if (!interim) out.append("Connection: close\r\n");
    out.append("\r\n");
    return out;
}

// ---- Relaying ------------------------------------------------------------------------

// Response heads still to rewrite on their way to the client.
struct HeadRewrite {
    std::string data;    // what came so far of the next head
    std::string origin;  // host:port, for a 502
    std::size_t max_bytes = 0;
};

// One direction of a relay: bytes read from `from` wait in buf[begin, end) until
// they are written to `to`.
struct Flow {
    explicit Flow(std::atomic<std::size_t>& budget) : grown(budget) {}
    Flow(const Flow&) = delete;
    Flow& operator=(const Flow&) = delete;
    ~Flow() { grown -= extra; }

    std::atomic<std::size_t>& grown;  // the proxy's, shared by every flow
    std::size_t extra = 0;            // what this flow's buffer grew by
    int from = -1, to = -1;
    std::vector<char> buf = std::vector<char>(kFirstBuffer);
    std::size_t begin = 0, end = 0;
    bool eof = false;    // `from` has no more to give
    bool shut = false;   // and `to` was shut down for writing after the last byte
    bool grow = false;   // a read filled the buffer: double it once it is empty
    bool wrote = false;  // something was written to `to`
    std::optional<HeadRewrite> heads;

    std::size_t pending() const { return end - begin; }
    bool wants_read() const { return !eof && (heads || end < buf.size()); }

    void push(std::string_view data) {
        if (data.empty()) return;
        if (begin > 0 && buf.size() - end < data.size()) {
            std::memmove(buf.data(), buf.data() + begin, pending());
            end -= begin;
            begin = 0;
        }
        if (buf.size() - end < data.size()) buf.resize(end + data.size());
        std::memcpy(buf.data() + end, data.data(), data.size());
        end += data.size();
    }
};

// Moves what came of a response head in `f.heads` on: rewritten heads, then the
// rest as it is once the final head passed.
void pass_heads(Flow& f) {
    for (;;) {
        std::string& h = f.heads->data;
        constexpr std::string_view kStatus = "HTTP/";
        if (h.compare(0, std::min(h.size(), kStatus.size()), kStatus, 0, std::min(h.size(), kStatus.size())) != 0) {
            f.push(h);  // not HTTP/1: it passes as it is
            f.heads.reset();
            return;
        }
        const std::size_t end = head_end(h, 0);
        if (end == std::string::npos) {
            if (h.size() > f.heads->max_bytes) {
                f.push(http_response(502, "Bad Gateway", "sbx: " + f.heads->origin + " sent a response head over " +
                                                             std::to_string(f.heads->max_bytes) + " bytes"));
                f.heads.reset();
                f.eof = true;
            }
            return;
        }
        bool interim = false;
        f.push(client_response_head(std::string_view(h).substr(0, end), interim));
        h.erase(0, end);
        if (!interim) {
            f.push(h);
            f.heads.reset();
            return;
        }
    }
}

// Reads once into `f`. False on an error that ends the relay.
bool fill(Flow& f, bool& got_some) {
    got_some = false;
    ssize_t r = 0;
    char small[16 * 1024];
    if (f.heads) r = ::recv(f.from, small, sizeof small, 0);
    else r = ::recv(f.from, f.buf.data() + f.end, f.buf.size() - f.end, 0);
    if (r < 0) return errno == EAGAIN || errno == EINTR;
    if (r == 0) {
        f.eof = true;
        if (f.heads) {
            if (f.heads->data.empty() && !f.wrote && f.pending() == 0)
                f.push(http_response(502, "Bad Gateway", "sbx: " + f.heads->origin + " closed the connection without a response"));
            else f.push(f.heads->data);
            f.heads.reset();
        }
        got_some = f.pending() > 0;
        return true;
    }
    const auto n = static_cast<std::size_t>(r);
    if (f.heads) {
        f.heads->data.append(small, n);
        pass_heads(f);
    } else {
        if (n == f.buf.size() - f.end && f.buf.size() < kLargestBuffer) f.grow = true;
        f.end += n;
    }
    got_some = f.pending() > 0;
    return true;
}

// Writes once from `f`. False on an error that ends the relay.
bool drain(Flow& f) {
    const ssize_t w = ::send(f.to, f.buf.data() + f.begin, f.pending(), kNoSignal);
    if (w < 0) return errno == EAGAIN || errno == EINTR;
    f.wrote = true;
    f.begin += static_cast<std::size_t>(w);
    if (f.begin == f.end) {
        f.begin = f.end = 0;
        if (f.grow) {
            f.grow = false;
            const std::size_t more = std::min(f.buf.size() * 2, kLargestBuffer) - f.buf.size();
            if (f.grown.fetch_add(more) + more <= kGrowthBudget) {
                f.extra += more;
                f.buf.resize(f.buf.size() + more);
            } else {
                f.grown -= more;
            }
        }
    }
    return true;
}

// Relays between the client and the upstream server until both directions
// ended (each end's EOF passed on as a shutdown for writing), an error, or stop().
// `to_upstream` and `to_client` go first; `heads` rewrites the response heads.
void relay(State& s, int client, int upstream, std::string_view to_upstream, std::string_view to_client,
           std::optional<HeadRewrite> heads) {
    Flow up(s.grown), down(s.grown);
    up.from = down.to = client;
    up.to = down.from = upstream;
    up.push(to_upstream);
    down.push(to_client);
    down.heads = std::move(heads);
    constexpr short kIn = POLLIN | POLLHUP | POLLERR;
    constexpr short kOut = POLLOUT | POLLHUP | POLLERR;
    for (;;) {
        for (Flow* f : {&up, &down}) {
            if (f->eof && f->pending() == 0 && !f->shut) {
                ::shutdown(f->to, SHUT_WR);
                f->shut = true;
            }
            if (f->end == f->buf.size() && f->begin > 0) {
                std::memmove(f->buf.data(), f->buf.data() + f->begin, f->pending());
                f->end -= f->begin;
                f->begin = 0;
            }
        }
        if (up.shut && down.shut) return;
        const short client_events = static_cast<short>((up.wants_read() ? POLLIN : 0) | (down.pending() ? POLLOUT : 0));
        const short upstream_events = static_cast<short>((down.wants_read() ? POLLIN : 0) | (up.pending() ? POLLOUT : 0));
        pollfd p[3] = {{client_events ? client : -1, client_events, 0},
                       {upstream_events ? upstream : -1, upstream_events, 0},
                       {s.stop_event.fd(), POLLIN, 0}};
        const int n = ::poll(p, 3, -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || p[2].revents != 0) return;
        bool up_read = false, down_read = false;
        if ((p[0].revents & kIn) && up.wants_read() && !fill(up, up_read)) return;
        if ((p[1].revents & kIn) && down.wants_read() && !fill(down, down_read)) return;
        if (up.pending() && (up_read || (p[1].revents & kOut)) && !drain(up)) return;
        if (down.pending() && (down_read || (p[0].revents & kOut)) && !drain(down)) return;
    }
}

// Answers a client whose request reach() did not connect.
void answer_unreached(const State& s, Fd& client, const Reached& r, std::string_view host_text) {
    using Kind = Reached::Kind;
    switch (r.kind) {
        case Kind::malformed:
            return answer_and_close(s, client, http_response(400, "Bad Request", "sbx: '" + std::string(host_text) + "' is not a host: " + r.reason));
        case Kind::refused:
            return answer_and_close(s, client, http_response(403, "Forbidden", "sbx: " + display(r.target) + " refused: " + r.reason));
        case Kind::unresolved:
        case Kind::unreachable:
            return answer_and_close(s, client, http_response(502, "Bad Gateway", "sbx: " + display(r.target) + " unreachable: " + r.reason));
        case Kind::connected:
        case Kind::stopped: return;
    }
}

void serve_http(State& s, Fd& client) {
    const auto deadline = after_ms(s.options.header_timeout_ms);
    const std::size_t max = s.options.max_header_bytes;
    std::string data;
    std::size_t end = std::string::npos;
    char buf[16 * 1024];
    while (end == std::string::npos) {
        std::size_t got = 0;
        if (read_some(s, client.get(), buf, sizeof buf, deadline, got) != Io::ok) return;  // silent, slow or gone
        const std::size_t from = data.size();
        data.append(buf, got);
        end = head_end(data, from);
        if ((end == std::string::npos && data.size() > max) || (end != std::string::npos && end > max))
            return answer_and_close(s, client, http_response(431, "Request Header Fields Too Large",
                                                             "sbx: the request head is over " + std::to_string(max) + " bytes"));
    }
    const std::string_view head = std::string_view(data).substr(0, end);
    const std::string_view rest = std::string_view(data).substr(end);
    std::string why;
    const auto request = parse_request(head, why);
    if (!request) return answer_and_close(s, client, http_response(400, "Bad Request", "sbx: bad request: " + why));

    std::string_view host;
    std::optional<std::uint16_t> port;
    if (request->method == "CONNECT") {
        if (!split_authority(request->target, host, port, why) || !port)
            return answer_and_close(s, client, http_response(400, "Bad Request", "sbx: CONNECT takes HOST:PORT: " +
                                                                                     (why.empty() ? "no port" : why)));
        Reached r = reach(s, host, *port, "connect");
        if (r.kind != Reached::Kind::connected) return answer_unreached(s, client, r, host);
        return relay(s, client.get(), r.upstream.get(), rest, "HTTP/1.1 200 Connection established\r\n\r\n", std::nullopt);
    }

    constexpr std::string_view kScheme = "http://";
    const std::string_view target = request->target;
    if (target.size() < kScheme.size() || !iequals(target.substr(0, kScheme.size()), kScheme)) {
        const bool origin_form = target.front() == '/' || target == "*";
        return answer_and_close(
            s, client,
            http_response(400, "Bad Request",
                          origin_form ? "sbx: this is a proxy: ask for an absolute URL (GET http://host/path) or CONNECT host:port"
                                      : "sbx: the proxy forwards http:// URLs; use CONNECT for anything else"));
    }
    const std::string_view after = target.substr(kScheme.size());
    const auto cut = after.find_first_of("/?#");
    const std::string_view authority = after.substr(0, cut);
    std::string path(cut == std::string_view::npos ? std::string_view("/") : after.substr(cut));
    if (const auto hash = path.find('#'); hash != std::string::npos) path.erase(hash);
    if (path.empty() || path.front() != '/') path.insert(0, "/");
    if (authority.find('@') != std::string_view::npos)
        return answer_and_close(s, client, http_response(400, "Bad Request", "sbx: a URL with user information is not forwarded"));
    if (!split_authority(authority, host, port, why))
        return answer_and_close(s, client, http_response(400, "Bad Request", "sbx: bad URL: " + why));
    Reached r = reach(s, host, port.value_or(80), "http");
    if (r.kind != Reached::Kind::connected) return answer_unreached(s, client, r, host);
    HeadRewrite heads;
    heads.origin = display(r.target);
    heads.max_bytes = max;
    const std::string forward = upstream_request(*request, path, authority) + std::string(rest);
    relay(s, client.get(), r.upstream.get(), forward, {}, std::move(heads));
}

// ---- SOCKS5 (RFC 1928) -----------------------------------------------------------------

enum SocksReply : std::uint8_t {
    kSucceeded = 0x00,
    kGeneralFailure = 0x01,
    kNotAllowed = 0x02,
    kNetworkUnreachable = 0x03,
    kHostUnreachable = 0x04,
    kConnectionRefused = 0x05,
    kCommandNotSupported = 0x07,
    kAddressTypeNotSupported = 0x08,
};

std::string socks_reply(std::uint8_t code) { return std::string("\x05", 1) + static_cast<char>(code) + std::string("\x00\x01\x00\x00\x00\x00\x00\x00", 8); }

// The success reply, with the address the upstream socket is bound to.
std::string socks_bound_reply(int upstream) {
    sockaddr_storage bound{};
    socklen_t length = sizeof bound;
    if (::getsockname(upstream, reinterpret_cast<sockaddr*>(&bound), &length) != 0) return socks_reply(kSucceeded);
    std::string out("\x05\x00\x00", 3);
    if (bound.ss_family == AF_INET6) {
        const auto* in6 = reinterpret_cast<const sockaddr_in6*>(&bound);
        out += '\x04';
        out.append(reinterpret_cast<const char*>(&in6->sin6_addr), 16);
        out.append(reinterpret_cast<const char*>(&in6->sin6_port), 2);
    } else if (bound.ss_family == AF_INET) {
        const auto* in = reinterpret_cast<const sockaddr_in*>(&bound);
        out += '\x01';
        out.append(reinterpret_cast<const char*>(&in->sin_addr), 4);
        out.append(reinterpret_cast<const char*>(&in->sin_port), 2);
    } else {
        return socks_reply(kSucceeded);
    }
    return out;
}

std::uint8_t socks_code(const Reached& r) {
    using Kind = Reached::Kind;
    switch (r.kind) {
        case Kind::refused: return kNotAllowed;
        case Kind::unresolved: return kHostUnreachable;
        case Kind::unreachable:
            return r.error == ECONNREFUSED ? kConnectionRefused : r.error == ENETUNREACH ? kNetworkUnreachable : kHostUnreachable;
        case Kind::malformed:
        case Kind::connected:
        case Kind::stopped: break;
    }
    return kGeneralFailure;
}

void serve_socks(State& s, Fd& client) {
    const auto deadline = after_ms(s.options.header_timeout_ms);
    const int fd = client.get();
    std::uint8_t greeting[2];
    if (read_exact(s, fd, greeting, 2, deadline) != Io::ok || greeting[0] != 5) return;
    std::uint8_t methods[255];
    if (read_exact(s, fd, methods, greeting[1], deadline) != Io::ok) return;
    if (std::find(methods, methods + greeting[1], 0x00) == methods + greeting[1])
        return answer_and_close(s, client, std::string("\x05\xff", 2));  // only "no authentication" is offered
    if (write_all(s, fd, std::string_view("\x05\x00", 2), deadline) != Io::ok) return;

    std::uint8_t request[4];  // VER CMD RSV ATYP
    if (read_exact(s, fd, request, 4, deadline) != Io::ok || request[0] != 5 || request[2] != 0) return;
    std::string host;
    switch (request[3]) {
        case 0x01: {
            std::uint8_t a[4];
            if (read_exact(s, fd, a, 4, deadline) != Io::ok) return;
            host = net::to_string(net::Address::v4(a[0], a[1], a[2], a[3]));
            break;
        }
        case 0x03: {
            std::uint8_t length = 0;
            if (read_exact(s, fd, &length, 1, deadline) != Io::ok || length == 0) return;
            host.resize(length);
            if (read_exact(s, fd, host.data(), length, deadline) != Io::ok) return;
            break;
        }
        case 0x04: {
            std::array<std::uint8_t, 16> a{};
            if (read_exact(s, fd, a.data(), 16, deadline) != Io::ok) return;
            host = net::to_string(net::Address::v6(a));
            break;
        }
        default: return answer_and_close(s, client, socks_reply(kAddressTypeNotSupported));
    }
    std::uint8_t port_bytes[2];
    if (read_exact(s, fd, port_bytes, 2, deadline) != Io::ok) return;
    if (request[1] != 0x01) return answer_and_close(s, client, socks_reply(kCommandNotSupported));  // BIND, UDP ASSOCIATE
    const auto port = static_cast<std::uint16_t>(port_bytes[0] << 8 | port_bytes[1]);

    Reached r = reach(s, host, port, "socks5");
    if (r.kind == Reached::Kind::stopped) return;
    if (r.kind != Reached::Kind::connected) return answer_and_close(s, client, socks_reply(socks_code(r)));
    relay(s, fd, r.upstream.get(), {}, socks_bound_reply(r.upstream.get()), std::nullopt);
}

// ---- Forwards ---------------------------------------------------------------------------

// A client of forward `f` reaches its target as a CONNECT there would, or is
// reset: the nearest a listener that accepted comes to "connection refused".
void serve_forward(State& s, Fd& client, const State::Forward& f) {
    Reached r = reach(s, f.host, f.port, "forward");
    if (r.kind != Reached::Kind::connected) {
        const linger reset{1, 0};
        ::setsockopt(client.get(), SOL_SOCKET, SO_LINGER, &reset, sizeof reset);
        return;
    }
    relay(s, client.get(), r.upstream.get(), {}, {}, std::nullopt);
}

// ---- Accepting ---------------------------------------------------------------------------

// `forward`: the index of the forward whose listener accepted (Protocol::forward).
void serve(State& s, int fd, Protocol protocol, std::size_t forward) {
    Fd client(fd);
    try {
        if (protocol == Protocol::http) serve_http(s, client);
        else if (protocol == Protocol::socks5) serve_socks(s, client);
        else serve_forward(s, client, s.forwards[forward]);
    } catch (...) {
        // Out of memory, say: this connection ends, the proxy goes on.
    }
}

// Joins the connection threads that have ended.
void reap(State& s) {
    for (auto it = s.connections.begin(); it != s.connections.end();) {
        if (it->done) {
            it->thread.join();
            it = s.connections.erase(it);
        } else {
            ++it;
        }
    }
}

void accept_one(State& s, int listener, Protocol protocol, std::size_t forward = 0) {
    Fd client(accept_client(listener));
    if (client.get() < 0) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
            // Out of descriptors: the connection waits in the backlog; wait a little
            // instead of spinning on a listener that stays readable.
            pollfd p = {s.stop_event.fd(), POLLIN, 0};
            ::poll(&p, 1, 100);
        }
        return;
    }
    reap(s);
    if (s.live >= s.options.max_connections) {
        if (protocol == Protocol::http) {
            const std::string busy = http_response(503, "Service Unavailable", "sbx: the proxy serves " +
                                                                                   std::to_string(s.options.max_connections) +
                                                                                   " connections at once");
            ::send(client.get(), busy.data(), busy.size(), kNoSignal | MSG_DONTWAIT);
        }
        return;
    }
    set_nodelay(client.get());
    auto& c = s.connections.emplace_back();
    const int fd = client.get();
    ++s.live;
    try {
        c.thread = std::thread([&s, &c, fd, protocol, forward] {
            serve(s, fd, protocol, forward);
            --s.live;
            c.done = true;
            s.reap_event.notify();
        });
        client.release();  // the thread owns it now
    } catch (...) {
        --s.live;
        s.connections.pop_back();
    }
}

void accept_loop(State& s) {
    // The proxy's two listeners, the events, then each forward's listener.
    std::vector<pollfd> p = {{s.http_listener.get(), POLLIN, 0},
                             {s.socks_listener.get(), POLLIN, 0},
                             {s.stop_event.fd(), POLLIN, 0},
                             {s.reap_event.fd(), POLLIN, 0}};
    constexpr std::size_t kFirstForward = 4;
    for (const auto& f : s.forwards) p.push_back({f.listener.get(), POLLIN, 0});
    for (;;) {
        for (auto& one : p) one.revents = 0;
        const int n = ::poll(p.data(), static_cast<nfds_t>(p.size()), -1);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || p[2].revents != 0) return;
        if (p[3].revents != 0) {
            s.reap_event.drain();
            reap(s);
        }
        try {
            if (p[0].revents != 0) accept_one(s, s.http_listener.get(), Protocol::http);
            if (p[1].revents != 0) accept_one(s, s.socks_listener.get(), Protocol::socks5);
            for (std::size_t i = kFirstForward; i < p.size(); ++i)
                if (p[i].revents != 0) accept_one(s, p[i].fd, Protocol::forward, i - kFirstForward);
        } catch (...) {
            // Out of memory for the list: the client was closed; go on.
        }
    }
}

sbx::expected<void> check_listener(int fd, std::string_view which) {
    int accepting = 0, type = 0;
    socklen_t size = sizeof accepting;
    const bool listening = ::getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &accepting, &size) == 0 && accepting == 1;
    size = sizeof type;
    const bool stream = ::getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &size) == 0 && type == SOCK_STREAM;
    if (!listening || !stream)
        return sbx::fail(Errc::invalid_argument, "descriptor " + std::to_string(fd) + " (the " + std::string(which) +
                                                     " listener) is not a listening stream socket");
    if (::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
        return sbx::fail(Errc::io_error, "cannot make the " + std::string(which) + " listener non-blocking: " + std::strerror(errno));
    return {};
}

}  // namespace

Proxy::Proxy(std::unique_ptr<State> state) : state_(std::move(state)) {}

Proxy::~Proxy() { stop(); }

sbx::expected<std::unique_ptr<Proxy>> Proxy::start(ProxyOptions options, int http_listener, int socks_listener,
                                                   std::vector<ForwardListener> forwards) {
    auto s = std::make_unique<State>();
    s->http_listener = Fd(http_listener);
    s->socks_listener = Fd(socks_listener == http_listener ? -1 : socks_listener);
    // Each descriptor owned once, however often it is given.
    std::vector<int> owned{http_listener, socks_listener};
    int twice = -1;
    for (auto& f : forwards) {
        if (std::find(owned.begin(), owned.end(), f.fd) != owned.end()) {
            twice = f.fd;
            continue;
        }
        owned.push_back(f.fd);
        s->forwards.push_back(State::Forward{Fd(f.fd), std::move(f.host), f.port});
    }
    if (socks_listener == http_listener) return sbx::fail(Errc::invalid_argument, "the HTTP and SOCKS listeners are one descriptor");
    if (twice >= 0) return sbx::fail(Errc::invalid_argument, "descriptor " + std::to_string(twice) + " is given as two listeners");
    if (auto r = check_listener(http_listener, "HTTP"); !r) return sbx::fail(r.error());
    if (auto r = check_listener(socks_listener, "SOCKS"); !r) return sbx::fail(r.error());
    for (const auto& f : s->forwards)
        if (auto r = check_listener(f.listener.get(), "forward's"); !r) return sbx::fail(r.error());
    if (!s->stop_event.open() || !s->reap_event.open())
        return sbx::fail(Errc::io_error, std::string("cannot make the proxy's events: ") + std::strerror(errno));
    s->options = std::move(options);

    // The threads block every asynchronous signal (they inherit the mask), so the
    // launcher's signals reach its own threads.
    sigset_t all, old;
    ::sigfillset(&all);
    for (int sync : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGABRT, SIGSYS}) ::sigdelset(&all, sync);
    ::pthread_sigmask(SIG_BLOCK, &all, &old);
    try {
        State& state = *s;
        s->acceptor = std::thread([&state] { accept_loop(state); });
    } catch (const std::system_error& e) {
        ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
        return sbx::fail(Errc::io_error, std::string("cannot start the proxy's thread: ") + e.what());
    }
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return std::unique_ptr<Proxy>(new Proxy(std::move(s)));
}

void Proxy::stop() {
    State& s = *state_;
    std::lock_guard guard(s.stop_mutex);
    if (s.stopped) return;
    s.stopped = true;
    {
        std::lock_guard lock(s.ask_mutex);
        s.stopping = true;
    }
    s.ask_cv.notify_all();
    s.stop_event.notify();
    if (s.acceptor.joinable()) s.acceptor.join();
    for (auto& c : s.connections) c.thread.join();
    s.connections.clear();
    s.http_listener.reset();
    s.socks_listener.reset();
    s.forwards.clear();
    s.stop_event.close();
    s.reap_event.close();
}

std::size_t Proxy::connections() const { return state_->live; }

}  // namespace sbx::linux_sandbox
