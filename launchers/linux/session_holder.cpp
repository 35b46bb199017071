#include "linux/session_holder.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <iostream>
#include <list>
#include <map>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "base/session_wire.hpp"
#include "sbx/settings/limits.hpp"

namespace sbx::linux_sandbox {

namespace {

namespace wire = sbx::launcher::session_wire;
namespace proto = sbx::session;
using sbx::launcher::Fd;
using Clock = std::chrono::steady_clock;

// Descriptors a client may send ahead of the run that takes them.
constexpr std::size_t kMaxQueuedFds = 3;
// Clients at once; one more is refused.
constexpr std::size_t kMaxClients = 1024;
// Refusals queued for the clients at once; more are in the session's block
// alone (a command may make them faster than its client reads).
constexpr std::size_t kMaxQueuedRefusals = 4096;
// Ports exposed at once, and their connections relayed at once (a client
// beyond them is closed at once).
constexpr std::size_t kMaxExposed = 64;
constexpr std::size_t kMaxExposedConnections = 256;

// Copies both ways between two connected sockets, each one's end passed on as
// a shutdown of the other's writing side, until both ended (true) or either
// failed (false).
bool relay_sockets(int a, int b) {
    struct Half {
        int from, to;
        std::string pending;
        bool eof = false, done = false;
    };
    Half halves[2]{{a, b, {}}, {b, a, {}}};
    for (int fd : {a, b}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    char buf[64 * 1024];
    while (!halves[0].done || !halves[1].done) {
        pollfd p[2];
        for (std::size_t i = 0; i < 2; ++i) {
            const Half& h = halves[i];
            p[i] = h.done ? pollfd{-1, 0, 0} : h.pending.empty() ? pollfd{h.from, POLLIN, 0} : pollfd{h.to, POLLOUT, 0};
        }
        if (::poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        for (std::size_t i = 0; i < 2; ++i) {
            Half& h = halves[i];
            if (h.done || p[i].revents == 0) continue;
            if (!h.pending.empty()) {
                const ssize_t w = ::send(h.to, h.pending.data(), h.pending.size(), MSG_NOSIGNAL);
                if (w < 0 && errno != EAGAIN && errno != EINTR) return false;
                if (w > 0) h.pending.erase(0, static_cast<std::size_t>(w));
            } else {
                const ssize_t r = ::read(h.from, buf, sizeof buf);
                if (r > 0) h.pending.assign(buf, static_cast<std::size_t>(r));
                else if (r == 0) h.eof = true;
                else if (errno != EAGAIN && errno != EINTR) return false;
            }
            if (h.eof && h.pending.empty()) {
                h.done = true;
                ::shutdown(h.to, SHUT_WR);
            }
        }
    }
    return true;
}

// The inode of a process's PID namespace, by its pid as this process sees it;
// 0 when it cannot be read.
std::uint64_t pid_namespace(pid_t pid) {
    struct stat st {};
    const std::string path = pid == 0 ? std::string("/proc/self/ns/pid") : "/proc/" + std::to_string(pid) + "/ns/pid";
    return ::stat(path.c_str(), &st) == 0 ? static_cast<std::uint64_t>(st.st_ino) : 0;
}

// Why the peer of `fd` may not use the session: another user, or another
// PID namespace than this one (a command of any sandbox, whose pid reads 0
// where its namespace is not below this one); empty when it may.
std::string refuse_peer(int fd) {
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) return "its credentials cannot be read";
    if (cred.uid != ::geteuid()) return "uid " + std::to_string(cred.uid) + " is not the session's user";
    const std::uint64_t ours = pid_namespace(0);
    if (cred.pid <= 0 || ours == 0 || pid_namespace(cred.pid) != ours)
        return "it runs in another PID namespace (inside a sandbox): the control socket serves programs outside";
    return {};
}

}  // namespace

struct SessionHolder::State {
    struct Client {
        Fd fd;
        std::uint64_t serial = 0;
        std::string in;
        std::deque<Fd> fds;
        bool stopper = false;
        bool gone = false;
    };

    Fd listener, server, wake;
    HolderConfig config;
    std::thread thread;
    std::mutex mutex;
    std::string closing;  // under `mutex`

    // The proxy (serve_proxy), and the refusals of the commands (refused()):
    // (tag, line), queued by the proxy's and the broker's threads, `tapped`
    // made readable.
    std::mutex proxy_mutex;
    launcher::CommandProxy* proxy = nullptr;  // under proxy_mutex
    std::mutex tap_mutex;
    std::deque<std::pair<std::string, std::string>> refusals;  // under tap_mutex
    Fd tapped;
    std::map<std::string, std::string> tags;  // a command's pid (its listeners' tag) -> its id
    std::map<std::string, sbx::net::HostCall> calls;  // a running command's own call (its run's hosts), by id

    // Questions (ask()): each waits on the proxy thread that asked until the
    // holder's thread settles it, with its client's answer or with none.
    struct Question {
        std::uint64_t n = 0;
        std::string tag, id;  // id: its command's, once put to that command's client
        sbx::net::HostTarget target;
        bool put = false, settled = false;
        std::optional<launcher::Answer> answer;
    };
    std::mutex ask_mutex;
    std::condition_variable settled_cv;
    std::list<Question*> questions;                // open; under ask_mutex
    std::map<std::string, bool> session_answers;   // "host port" -> allowed; under ask_mutex
    std::vector<sbx::net::HostAnswer> answered;    // the same, in the order given; under ask_mutex
    std::uint64_t next_question = 1;               // under ask_mutex
    bool questions_closed = false;                 // under ask_mutex
    std::set<std::string> answering;               // ids of the running commands whose run asks

    // Exposed ports: each a listener on the host's loopback; each client
    // accepted waits (by its number) for the fork server's connection inside,
    // then is relayed to it on a thread of its own.
    struct Exposed {
        Fd listener;
        unsigned port = 0, listen = 0;
    };
    // The thread closes both sockets as it ends; until then end_relays() may
    // shut them, under `mutex` (never a number closed and taken again since).
    struct Relaying {
        Fd outside, inside;
        std::thread thread;
        std::mutex mutex;
        bool done = false;  // under `mutex`
    };
    std::vector<Exposed> exposed;
    std::map<std::uint64_t, Fd> waiting;
    std::uint64_t next_connection = 1;
    std::list<Relaying> relays;

    std::vector<Client> clients;
    std::uint64_t next_serial = 1;
    std::map<std::string, std::uint64_t> running;  // command id -> its client's serial
    // A terminal command's master (kept for resize) from its start to its
    // exit; before its start, the size its run asked for.
    std::map<std::string, Fd> terminals;
    std::map<std::string, winsize> sizes;
    bool stopping = false, server_gone = false;
    Clock::time_point last_activity = Clock::now();
    // The commands' timeouts (config.command_timeout), by id from their start:
    // when each gets SIGTERM, then SIGKILL.
    struct Deadline {
        Clock::time_point at;
        bool termed = false, killed = false;
    };
    std::map<std::string, Deadline> deadlines;
    void enforce_deadlines();

    void loop();
    void begin_stop();
    void accept_client();
    void read_client(Client& c);
    void handle(Client& c, std::string_view line);
    void run(Client& c, proto::Request& r);
    void from_server();
    void to_proxy(const wire::Frame& f);
    void tell_refusals();
    void put_questions();
    void answer(Client& c, const proto::Request& r);
    void settle_where(const std::function<bool(const Question&)>& which);
    void close_questions();
    void queue_refusal(const std::string& tag, std::string line);
    void expose(Client& c, const proto::Request& r);
    void accept_exposed(const Exposed& x);
    void relay_exposed(const wire::Frame& f);
    void end_relays();
    void send(std::uint64_t serial, const proto::Event& e);
    static void send_to(Client& c, const proto::Event& e, int fd = -1);
    void drop(Client& c);
    void close_all(const std::string& text);
    int timeout_ms() const;
    bool idle_over() const;
};

// `fd`, where given, goes with the line as SCM_RIGHTS (a terminal's master
// with its `started`).
void SessionHolder::State::send_to(Client& c, const proto::Event& e, int fd) {
    if (c.gone) return;
    std::string line = proto::event_line(e);
    // A client that does not read its events is let go rather than waited for
    // (its socket does not block).
    iovec iov{line.data(), line.size()};
    if (sbx::launcher::send_with_fds(c.fd.get(), std::span<iovec>(&iov, 1), std::span<const int>(&fd, fd >= 0 ? 1 : 0)) !=
        static_cast<ssize_t>(line.size()))
        c.gone = true;
}

void SessionHolder::State::send(std::uint64_t serial, const proto::Event& e) {
    for (auto& c : clients)
        if (c.serial == serial) send_to(c, e);
}

namespace {

// A host and port as the session's answers are kept by.
std::string answer_key(const sbx::net::HostTarget& t) { return t.host + " " + std::to_string(t.port); }

proto::Event error_event(std::string code, std::string message, std::string id = {}) {
    proto::Event e;
    e.kind = proto::EventKind::error;
    e.code = std::move(code);
    e.message = std::move(message);
    e.id = std::move(id);
    return e;
}

}  // namespace

void SessionHolder::State::begin_stop() {
    if (stopping || server_gone) return;
    stopping = true;
    close_questions();
    (void)wire::send_frame(server.get(), 'Q', {});
}

void SessionHolder::State::accept_client() {
    Fd fd(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (!fd.ok()) return;
    Client c;
    c.fd = std::move(fd);
    c.serial = next_serial++;
    if (auto why = refuse_peer(c.fd.get()); !why.empty() || clients.size() >= kMaxClients) {
        send_to(c, error_event("REFUSED", why.empty() ? "the session has too many clients" : "refused: " + why));
        return;
    }
    clients.push_back(std::move(c));
}

// The client's commands that still run get SIGHUP, as when a terminal closes.
void SessionHolder::State::drop(Client& c) {
    c.gone = true;
    for (const auto& [id, serial] : running)
        if (serial == c.serial) {
            const std::string words[] = {id, std::to_string(SIGHUP)};
            (void)wire::send_frame(server.get(), 'K', words);
        }
    // Its questions have no one to answer them.
    settle_where([&](const Question& q) {
        const auto run = running.find(q.id);
        return q.put && run != running.end() && run->second == c.serial;
    });
}

void SessionHolder::State::read_client(Client& c) {
    char buf[65536];
    alignas(cmsghdr) char control[CMSG_SPACE(8 * sizeof(int))]{};
    iovec iov{buf, sizeof buf};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    const ssize_t n = ::recvmsg(c.fd.get(), &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n > 0)
        for (Fd& fd : sbx::launcher::rights_of(msg)) c.fds.push_back(std::move(fd));
    if (n <= 0) {
        drop(c);
        return;
    }
    if ((msg.msg_flags & MSG_CTRUNC) != 0 || c.fds.size() > kMaxQueuedFds) {
        send_to(c, error_event(std::string(proto::kProtocolErrorCode),
                               "more descriptors than a run takes (three, with its line)"));
        drop(c);
        return;
    }
    c.in.append(buf, static_cast<std::size_t>(n));
    std::size_t at = 0;
    for (std::size_t nl; !c.gone && (nl = c.in.find('\n', at)) != std::string::npos; at = nl + 1)
        handle(c, std::string_view(c.in).substr(at, nl - at));
    c.in.erase(0, at);
    if (c.in.size() >= proto::kMaxLine) {
        send_to(c, error_event(std::string(proto::kProtocolErrorCode),
                               "a line longer than " + std::to_string(proto::kMaxLine) + " bytes"));
        drop(c);
    }
}

void SessionHolder::State::handle(Client& c, std::string_view line) {
    last_activity = Clock::now();
    auto r = proto::parse_request(line);
    if (!r) {
        send_to(c, error_event(std::string(proto::kProtocolErrorCode), sbx::to_string(r.error())));
        return;
    }
    switch (r->op) {
        case proto::Op::run: run(c, *r); return;
        case proto::Op::signal: {
            if (!running.contains(r->id)) {
                send_to(c, error_event("NO_SUCH_COMMAND", "no command " + r->id + " runs in the session", r->id));
                return;
            }
            static constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGKILL};
            const std::string words[] = {r->id, std::to_string(kSignals[static_cast<int>(r->signal)])};
            (void)wire::send_frame(server.get(), 'K', words);
            return;
        }
        case proto::Op::resize: {
            const auto t = terminals.find(r->id);
            if (t == terminals.end()) {
                send_to(c, error_event("NO_SUCH_COMMAND", "no command " + r->id + " with a terminal runs in the session", r->id));
                return;
            }
            const winsize ws{static_cast<unsigned short>(r->rows), static_cast<unsigned short>(r->cols), 0, 0};
            ::ioctl(t->second.get(), TIOCSWINSZ, &ws);  // the kernel sends its foreground job SIGWINCH
            return;
        }
        case proto::Op::stop:
            c.stopper = true;
            begin_stop();
            return;
        case proto::Op::expose: expose(c, *r); return;
        case proto::Op::answer: answer(c, *r); return;
        case proto::Op::status: {
            proto::Event e;
            e.kind = proto::EventKind::status;
            e.root = config.root;
            e.commands = running.size();
            send_to(c, e);
            return;
        }
    }
}

void SessionHolder::State::run(Client& c, proto::Request& r) {
    const auto refuse = [&](std::string code, std::string message) {
        send_to(c, error_event(std::move(code), std::move(message), r.id));
    };
    // Its descriptors come with its line, or before it: taken either way. A
    // terminal's run brings those of the streams the terminal does not take.
    std::vector<Fd> fds;
    const bool wants_fds = r.run.stdio == proto::Stdio::fds;
    const auto wanted = static_cast<std::size_t>(
        wants_fds ? 3 : std::count(r.run.tty.begin(), r.run.tty.end(), false));
    while (fds.size() < wanted && !c.fds.empty()) {
        fds.push_back(std::move(c.fds.front()));
        c.fds.pop_front();
    }
    if (stopping || server_gone) return refuse("SESSION_ENDED", "the session is ending");
    if (fds.size() != wanted)
        return refuse(std::string(proto::kProtocolErrorCode),
                      wants_fds ? "a run comes with three descriptors (its 0, 1 and 2) as SCM_RIGHTS with its line"
                                : "a terminal's run comes with a descriptor for each of 0-2 its tty does not list, "
                                  "as SCM_RIGHTS with its line");
    // Its own environment, made by the session's policy; none given: the session's.
    std::vector<std::string> env;
    if (!r.run.env.empty()) {
        auto made = config.environment ? config.environment(r.run)
                                       : sbx::expected<std::vector<std::string>>(sbx::fail(sbx::Errc::unavailable, "not built"));
        if (!made) return refuse(std::string(proto::kProtocolErrorCode), "env: " + sbx::to_string(made.error()));
        env = std::move(*made);
    }
    std::optional<sbx::net::HostCall> call;
    if (!r.run.hosts.empty()) {
        auto made = config.call ? config.call(r.run.hosts)
                                : sbx::expected<sbx::net::HostCall>(sbx::fail(sbx::Errc::unavailable, "not built"));
        if (!made) return refuse(std::string(proto::kProtocolErrorCode), "hosts: " + sbx::to_string(made.error()));
        call = std::move(*made);
    }
    if (r.id == kSessionLinesId) return refuse(std::string(proto::kProtocolErrorCode), "id: \"session\" is the session's own");
    if (running.contains(r.id)) return refuse(std::string(proto::kProtocolErrorCode), "id: " + r.id + " runs already");
    if (config.refuse)
        if (auto no = config.refuse(r.run)) return refuse(std::move(no->code), std::move(no->message));
    // A terminal's frame starts with which of 0-2 it takes ("011": 1 and 2).
    std::vector<std::string> words;
    if (!wants_fds) {
        std::string mask;
        for (const bool t : r.run.tty) mask += t ? '1' : '0';
        words.push_back(std::move(mask));
    }
    words.insert(words.end(), {r.id, r.run.cwd, std::to_string(env.size())});
    words.insert(words.end(), env.begin(), env.end());
    words.insert(words.end(), r.run.argv.begin(), r.run.argv.end());
    if (config.warnings)
        for (auto& message : config.warnings()) {
            proto::Event w;
            w.kind = proto::EventKind::warning;
            w.id = r.id;
            w.message = std::move(message);
            send_to(c, w);
        }
    std::vector<int> numbers;
    for (const Fd& fd : fds) numbers.push_back(fd.get());
    if (!wire::send_frame(server.get(), wants_fds ? 'R' : 'T', words, numbers))
        return refuse("SESSION_ENDED", std::string("the session's server is gone: ") + std::strerror(errno));
    running[r.id] = c.serial;
    if (r.run.asks) answering.insert(r.id);
    if (call) calls[r.id] = std::move(*call);
    if (!wants_fds && r.run.rows > 0 && r.run.cols > 0)
        sizes[r.id] = winsize{static_cast<unsigned short>(r.run.rows), static_cast<unsigned short>(r.run.cols), 0, 0};
}

void SessionHolder::State::from_server() {
    wire::Frame f;
    // A frame whose descriptors were lost (no room for them here) is taken
    // without them: a command's listeners never served, its terminal not given.
    if (const auto got = wire::read_frame(server.get(), f); got != wire::ReadResult::frame && got != wire::ReadResult::truncated) {
        server_gone = true;
        close_questions();
        for (const auto& [id, serial] : running) send(serial, error_event("SESSION_ENDED", "the session ended", id));
        running.clear();
        return;
    }
    if (f.kind == 'H') {
        if (config.on_ready) config.on_ready();
        return;
    }
    if (f.kind == 'L' || f.kind == 'G') return to_proxy(f);
    if (f.kind == 'D') return relay_exposed(f);
    if (f.words.size() != 2) return;
    const std::string& id = f.words[0];
    const auto it = running.find(id);
    if (it == running.end()) return;
    const std::uint64_t serial = it->second;
    proto::Event e;
    e.id = id;
    if (f.kind == 'S') {
        tags[f.words[1]] = id;
        if (config.command_timeout > 0)
            deadlines[id] = Deadline{Clock::now() + std::chrono::seconds(config.command_timeout)};
        e.kind = proto::EventKind::started;
        if (f.fds.size() != 1) return send(serial, e);
        // A terminal: its master goes to the client; a copy stays for resize.
        if (const auto size = sizes.find(id); size != sizes.end()) {
            ::ioctl(f.fds[0].get(), TIOCSWINSZ, &size->second);
            sizes.erase(size);
        }
        terminals[id] = Fd(::fcntl(f.fds[0].get(), F_DUPFD_CLOEXEC, 3));
        for (auto& c : clients)
            if (c.serial == serial) send_to(c, e, f.fds[0].get());
        return;
    }
    running.erase(it);
    std::optional<Deadline> ran_out;
    if (const auto d = deadlines.find(id); d != deadlines.end()) {
        if (d->second.termed) ran_out = d->second;
        deadlines.erase(d);
    }
    terminals.erase(id);
    sizes.erase(id);
    calls.erase(id);
    answering.erase(id);
    settle_where([&](const Question& q) { return q.put && q.id == id; });
    last_activity = Clock::now();
    const int n = std::atoi(f.words[1].c_str());
    if (f.kind == 'E') {
        send(serial, error_event(n == ENOENT ? "NOT_FOUND" : "CANNOT_RUN", std::strerror(n), id));
        return;
    }
    if (f.kind != 'X') return;
    // As sbx run ends a command a limit ended: its line, then 124.
    std::string limit_line;
    if (ran_out)
        limit_line = config.timeout_line ? config.timeout_line(ran_out->killed) : "limit timeoutSeconds reached";
    else if (WIFSIGNALED(n) && config.signal_line)
        limit_line = config.signal_line(WTERMSIG(n));
    if (!limit_line.empty()) {
        proto::Event v;
        v.kind = proto::EventKind::violation;
        v.id = id;
        v.line = std::move(limit_line);
        send(serial, v);
        e.kind = proto::EventKind::exit;
        e.status = sbx::kLimitStatus;
        send(serial, e);
        return;
    }
    e.kind = proto::EventKind::exit;
    if (WIFSIGNALED(n)) e.signal = WTERMSIG(n);
    else e.status = WEXITSTATUS(n);
    send(serial, e);
}

// Each command whose time ran out gets SIGTERM, and SIGKILL once the grace
// period has gone by too (the fork server signals its group: 'K').
void SessionHolder::State::enforce_deadlines() {
    const auto now = Clock::now();
    for (auto& [id, d] : deadlines) {
        if (d.killed || now < d.at) continue;
        const bool kill = d.termed || config.grace <= 0;
        const std::vector<std::string> words{id, std::to_string(kill ? SIGKILL : SIGTERM)};
        (void)wire::send_frame(server.get(), 'K', words);
        d.termed = true;
        d.killed = kill;
        d.at = now + std::chrono::seconds(config.grace);
    }
}

// A command's listeners to the proxy ('L'), or gone from it ('G'). Where the
// proxy cannot take them they close, and the command's proxy variables lead
// nowhere: refused, never past the proxy.
void SessionHolder::State::to_proxy(const wire::Frame& f) {
    if (f.words.size() != 1) return;
    const std::string& tag = f.words[0];
    std::lock_guard<std::mutex> lock(proxy_mutex);
    if (f.kind == 'G') {
        tags.erase(tag);
        if (proxy != nullptr) proxy->remove_listeners(tag);
        return;
    }
    if (f.fds.size() != 2 || proxy == nullptr) return;
    Fd http = std::move(const_cast<Fd&>(f.fds[0])), socks = std::move(const_cast<Fd&>(f.fds[1]));
    // Its run's own hosts, where it listed some.
    std::optional<sbx::net::HostCall> call;
    if (const auto id = tags.find(tag); id != tags.end())
        if (const auto c = calls.find(id->second); c != calls.end()) call = c->second;
    if (auto added = proxy->add_listeners(tag, http.release(), socks.release(), std::move(call)); !added)
        std::cerr << "sbx: warning: a command's proxy listeners: " << sbx::to_string(added.error())
                  << "; its connections through the proxy are refused\n";
}

void SessionHolder::State::queue_refusal(const std::string& tag, std::string line) {
    if (line.empty()) return;
    {
        std::lock_guard<std::mutex> lock(tap_mutex);
        if (refusals.size() >= kMaxQueuedRefusals) return;
        refusals.emplace_back(tag, std::move(line));
    }
    const std::uint64_t one = 1;
    (void)::write(tapped.get(), &one, sizeof one);
}

// The refusals queued since, each to the client of the command it was made by,
// while that command runs.
void SessionHolder::State::tell_refusals() {
    std::uint64_t count = 0;
    (void)::read(tapped.get(), &count, sizeof count);
    std::deque<std::pair<std::string, std::string>> taken;
    {
        std::lock_guard<std::mutex> lock(tap_mutex);
        taken.swap(refusals);
    }
    for (auto& [tag, line] : taken) {
        const auto id = tags.find(tag);
        const auto serial = id == tags.end() ? running.end() : running.find(id->second);
        if (serial == running.end()) continue;
        proto::Event e;
        e.kind = proto::EventKind::violation;
        e.id = id->second;
        e.line = std::move(line);
        send(serial->second, e);
    }
}

// Settles the open questions `which` picks with no answer (refused), under ask_mutex.
void SessionHolder::State::settle_where(const std::function<bool(const Question&)>& which) {
    std::lock_guard<std::mutex> lock(ask_mutex);
    for (Question* q : questions)
        if (!q->settled && which(*q)) q->settled = true;
    settled_cv.notify_all();
}

// No question is asked from now on, and those open are refused: the session ends.
void SessionHolder::State::close_questions() {
    {
        std::lock_guard<std::mutex> lock(ask_mutex);
        questions_closed = true;
    }
    settle_where([](const Question&) { return true; });
}

// The questions asked since, each to the client of the command whose group
// asked, where that command runs and its run asks; the others refused.
void SessionHolder::State::put_questions() {
    std::lock_guard<std::mutex> lock(ask_mutex);
    for (Question* q : questions) {
        if (q->put || q->settled) continue;
        const auto id = tags.find(q->tag);
        const auto run = id == tags.end() ? running.end() : running.find(id->second);
        Client* client = nullptr;
        if (run != running.end() && answering.contains(run->first))
            for (auto& c : clients)
                if (c.serial == run->second && !c.gone) client = &c;
        if (client != nullptr) {
            proto::Event e;
            e.kind = proto::EventKind::ask;
            e.id = run->first;
            e.ask = q->n;
            e.host = q->target.host;
            e.port = q->target.port;
            send_to(*client, e);
        }
        if (client == nullptr || client->gone) {
            q->settled = true;
            continue;
        }
        q->put = true;
        q->id = run->first;
    }
    settled_cv.notify_all();
}

// A client's answer to a question put to it about one of its own commands.
void SessionHolder::State::answer(Client& c, const proto::Request& r) {
    std::lock_guard<std::mutex> lock(ask_mutex);
    const auto run = running.find(r.id);
    const auto q = std::find_if(questions.begin(), questions.end(), [&](const Question* x) {
        return x->put && !x->settled && x->n == r.ask && x->id == r.id;
    });
    if (q == questions.end() || run == running.end() || run->second != c.serial) {
        send_to(c, error_event("NO_SUCH_QUESTION",
                               "no question " + std::to_string(r.ask) + " about command " + r.id + " is open", r.id));
        return;
    }
    const launcher::Answer a{r.allow, r.for_session ? launcher::AnswerScope::session : launcher::AnswerScope::command};
    if (r.for_session) {
        const sbx::net::HostTarget& t = (*q)->target;
        session_answers[answer_key(t)] = r.allow;
        std::erase_if(answered, [&](const sbx::net::HostAnswer& h) { return h.host == t.host && h.port == t.port; });
        answered.push_back({t.host, t.port, r.allow});
    }
    (*q)->answer = a;
    (*q)->settled = true;
    settled_cv.notify_all();
}

// A listener on the host's loopback for `port` of the session's; told to the
// client, and to the stop's (on the launcher's standard error).
void SessionHolder::State::expose(Client& c, const proto::Request& r) {
    const auto refuse = [&](std::string code, std::string message) { send_to(c, error_event(std::move(code), std::move(message))); };
    const auto tell = [&](const Exposed& x) {
        proto::Event e;
        e.kind = proto::EventKind::exposed;
        e.port = x.port;
        e.listen = x.listen;
        send_to(c, e);
    };
    if (stopping || server_gone) return refuse("SESSION_ENDED", "the session is ending");
    const unsigned want = r.listen ? *r.listen : r.port;
    for (const auto& x : exposed) {
        if (x.port == r.port && (want == 0 || want == x.listen)) return tell(x);
        if (x.listen == want)
            return refuse("EXPOSE_FAILED", "127.0.0.1:" + std::to_string(want) + " leads to the session's port " +
                                               std::to_string(x.port) + " already");
    }
    if (exposed.size() >= kMaxExposed)
        return refuse("EXPOSE_FAILED", "a session exposes " + std::to_string(kMaxExposed) + " ports at most");
    std::uint16_t bound = 0;
    Fd fd = sbx::launcher::listen_on_loopback(static_cast<std::uint16_t>(want), bound, true, 128);
    if (!fd.ok()) return refuse("EXPOSE_FAILED", "127.0.0.1:" + std::to_string(want) + ": " + std::strerror(errno));
    Exposed x{std::move(fd), r.port, bound};
    std::cerr << "sbx: the session's port " << x.port << " was exposed on 127.0.0.1:" << x.listen
              << " (sbx session expose), where any local program could reach it\n";
    tell(exposed.emplace_back(std::move(x)));
}

// A client of an exposed port: the fork server is asked for a connection
// inside. Beyond kMaxExposedConnections it is closed at once.
void SessionHolder::State::accept_exposed(const Exposed& x) {
    Fd fd(::accept4(x.listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!fd.ok() || server_gone || stopping) return;
    relays.remove_if([](Relaying& r) {
        {
            std::lock_guard<std::mutex> lock(r.mutex);
            if (!r.done) return false;
        }
        r.thread.join();
        return true;
    });
    if (waiting.size() + relays.size() >= kMaxExposedConnections) return;
    const std::uint64_t n = next_connection++;
    const std::string words[] = {std::to_string(n), std::to_string(x.port)};
    if (wire::send_frame(server.get(), 'C', words)) waiting.emplace(n, std::move(fd));
}

// The fork server's connection for a waiting client ('D'): relayed to it on a
// thread; without one, the client is reset, as a closed port resets it.
void SessionHolder::State::relay_exposed(const wire::Frame& f) {
    if (f.words.empty()) return;
    const auto it = waiting.find(std::strtoull(f.words[0].c_str(), nullptr, 10));
    if (it == waiting.end()) return;
    Fd outside = std::move(it->second);
    waiting.erase(it);
    if (f.fds.size() != 1) return sbx::launcher::reset_on_close(outside.get());
    Relaying& r = relays.emplace_back();
    r.outside = std::move(outside);
    r.inside = std::move(const_cast<Fd&>(f.fds[0]));
    try {
        r.thread = std::thread([&r] {
            // A broken relay resets the client, as a broken connection would.
            if (!relay_sockets(r.outside.get(), r.inside.get())) sbx::launcher::reset_on_close(r.outside.get());
            std::lock_guard<std::mutex> lock(r.mutex);
            r.outside.reset();
            r.inside.reset();
            r.done = true;
        });
    } catch (const std::system_error&) {
        relays.pop_back();
    }
}

// Every relay ended (their sockets shut, so that each thread sees its end) and joined.
void SessionHolder::State::end_relays() {
    for (auto& r : relays) {
        std::lock_guard<std::mutex> lock(r.mutex);
        if (r.done) continue;
        ::shutdown(r.outside.get(), SHUT_RDWR);
        ::shutdown(r.inside.get(), SHUT_RDWR);
    }
    for (auto& r : relays) r.thread.join();
    relays.clear();
    waiting.clear();
    exposed.clear();
}

int SessionHolder::State::timeout_ms() const {
    const auto now = Clock::now();
    const auto ms = [&](Clock::time_point at) {
        return std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(at - now).count() + 1);
    };
    std::int64_t wait = -1;
    for (const auto& [id, d] : deadlines)
        if (!d.killed) wait = wait < 0 ? ms(d.at) : std::min(wait, ms(d.at));
    if (config.idle_seconds > 0 && running.empty() && !stopping) {
        const auto idle = ms(last_activity + std::chrono::seconds(config.idle_seconds));
        wait = wait < 0 ? idle : std::min(wait, idle);
    }
    return static_cast<int>(std::min<std::int64_t>(wait, INT_MAX));
}

bool SessionHolder::State::idle_over() const {
    return config.idle_seconds > 0 && running.empty() && !stopping &&
           Clock::now() >= last_activity + std::chrono::seconds(config.idle_seconds);
}

void SessionHolder::State::close_all(const std::string& text) {
    for (auto& c : clients) {
        if (!c.stopper) continue;
        std::size_t at = 0;
        for (std::size_t nl; (nl = text.find('\n', at)) != std::string::npos || at < text.size(); at = nl + 1) {
            if (nl == std::string::npos) nl = text.size();
            if (nl == at) continue;
            proto::Event e;
            e.kind = proto::EventKind::violation;
            e.id = std::string(kSessionLinesId);
            e.line = text.substr(at, nl - at);
            send_to(c, e);
        }
    }
    clients.clear();
}

// Over 80 lines: one poll loop over every descriptor the holder serves, each
// case a few lines; split, its state would be passed around instead.
void SessionHolder::State::loop() {
    for (;;) {
        std::vector<pollfd> pfds{{wake.get(), POLLIN, 0},
                                 {listener.get(), POLLIN, 0},
                                 {server_gone ? -1 : server.get(), POLLIN, 0},
                                 {config.starter.get(), POLLIN, 0},
                                 {tapped.get(), POLLIN, 0}};
        for (const auto& x : exposed) pfds.push_back({x.listener.get(), POLLIN, 0});
        const std::size_t first_client = pfds.size();
        for (const auto& c : clients) pfds.push_back({c.gone ? -1 : c.fd.get(), POLLIN, 0});
        const int n = ::poll(pfds.data(), pfds.size(), timeout_ms());
        if (n < 0 && errno != EINTR) return;
        enforce_deadlines();
        if (n == 0) {
            if (idle_over()) begin_stop();
            continue;
        }
        if (pfds[0].revents != 0) {
            std::string text;
            {
                std::lock_guard<std::mutex> lock(mutex);
                text = closing;
            }
            close_questions();
            close_all(text);
            end_relays();
            return;
        }
        // Refusals before the exits read with them: a command's come before its end;
        // questions after its start.
        if (pfds[4].revents != 0) tell_refusals();
        if (pfds[2].revents != 0) from_server();
        if (pfds[4].revents != 0) put_questions();
        if (pfds[3].revents != 0) {
            config.starter.reset();
            begin_stop();
        }
        // The exposed ports and clients as they were polled (one added now comes next round).
        for (std::size_t i = 5; i < first_client; ++i)
            if (pfds[i].revents != 0) accept_exposed(exposed[i - 5]);
        const std::size_t polled = pfds.size() - first_client;
        for (std::size_t i = 0; i < polled; ++i)
            if (pfds[first_client + i].revents != 0) read_client(clients[i]);
        if (pfds[1].revents != 0) accept_client();
        std::erase_if(clients, [](const Client& c) { return c.gone && !c.stopper; });
    }
}

SessionHolder::SessionHolder(std::unique_ptr<State> state) : state_(std::move(state)) {}

sbx::expected<std::unique_ptr<SessionHolder>> SessionHolder::start(Fd listener, Fd server, HolderConfig config) {
    auto s = std::make_unique<State>();
    s->listener = std::move(listener);
    s->server = std::move(server);
    s->config = std::move(config);
    s->wake = Fd(::eventfd(0, EFD_CLOEXEC));
    s->tapped = Fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!s->wake.ok() || !s->tapped.ok())
        return sbx::fail(sbx::Error(sbx::Errc::internal, std::string("eventfd: ") + std::strerror(errno)));
    State* raw = s.get();
    try {
        s->thread = std::thread([raw] { raw->loop(); });
    } catch (const std::system_error& e) {
        return sbx::fail(sbx::Error(sbx::Errc::internal, std::string("cannot start the session's thread: ") + e.what()));
    }
    return std::unique_ptr<SessionHolder>(new SessionHolder(std::move(s)));
}

void SessionHolder::finish(std::string closing) {
    if (!state_->thread.joinable()) return;
    {
        std::lock_guard<std::mutex> lock(state_->mutex);
        state_->closing = std::move(closing);
    }
    const std::uint64_t one = 1;
    (void)::write(state_->wake.get(), &one, sizeof one);
    state_->thread.join();
}

void SessionHolder::serve_proxy(launcher::CommandProxy* proxy) {
    {
        std::lock_guard<std::mutex> lock(state_->proxy_mutex);
        state_->proxy = proxy;
    }
    if (proxy == nullptr) state_->close_questions();  // the proxy waits for them as it stops
}

std::optional<launcher::Answer> SessionHolder::ask(const sbx::net::HostTarget& t, const std::string& tag) {
    State& s = *state_;
    State::Question q;
    q.tag = tag;
    q.target = t;
    {
        std::unique_lock<std::mutex> lock(s.ask_mutex);
        if (const auto it = s.session_answers.find(answer_key(t)); it != s.session_answers.end())
            return launcher::Answer{it->second, launcher::AnswerScope::session};
        if (s.questions_closed || tag.empty()) return std::nullopt;
        q.n = s.next_question++;
        s.questions.push_back(&q);
    }
    // The holder's thread puts it to its client (put_questions).
    const std::uint64_t one = 1;
    (void)::write(s.tapped.get(), &one, sizeof one);
    std::unique_lock<std::mutex> lock(s.ask_mutex);
    s.settled_cv.wait(lock, [&] { return q.settled; });
    s.questions.remove(&q);
    return q.answer;
}

void SessionHolder::refused(const std::string& tag, std::string line) { state_->queue_refusal(tag, std::move(line)); }

std::vector<sbx::net::HostAnswer> SessionHolder::session_answers() const {
    std::lock_guard<std::mutex> lock(state_->ask_mutex);
    return state_->answered;
}

SessionHolder::~SessionHolder() { finish({}); }

}  // namespace sbx::linux_sandbox
