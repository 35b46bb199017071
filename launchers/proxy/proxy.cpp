// The proxy's server: it takes over the listeners, accepts on them from one
// thread, serves each connection on a thread of its own (HTTP, SOCKS5, or a
// forward's fixed target), and stops them all. The parts it calls are named in
// proxy/state.hpp.
#include "proxy/proxy.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "proxy/state.hpp"
#include "sbx/net/http1.hpp"

namespace sbx::proxy {

namespace detail {

void answer_and_close(const State& s, Fd& client, std::string_view answer) {
    proxy::answer_and_close(s.stop_event.fd(), client, answer, s.options.header_timeout_ms);
}

void set_nodelay(int fd) {
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

namespace {
thread_local std::string tag_of_thread;
}  // namespace

const std::string& serving_tag() { return tag_of_thread; }

std::shared_ptr<const sbx::net::HostCall> call_of(State& s) {
    if (!tag_of_thread.empty()) {
        std::lock_guard lock(s.tagged_mutex);
        if (const auto it = s.calls.find(tag_of_thread); it != s.calls.end()) return it->second;
    }
    return s.call;
}

}  // namespace detail

namespace {

using namespace detail;

enum class Protocol { http, socks5, forward, direct };

// The most direct connections expected at once (Proxy::expect_direct).
constexpr std::size_t kMaxDirect = 1024;

// A client that names no host (a forward's, a direct one) reaches host:port
// as a CONNECT there would, and is relayed; or is reset (launcher::reset_on_close).
void reset(Fd& client) { launcher::reset_on_close(client.get()); }

void reach_or_reset(State& s, Fd& client, std::string_view host, std::uint16_t port, std::string_view protocol) {
    Reached r = reach(s, host, port, protocol);
    if (r.kind != Reached::Kind::connected) return reset(client);
    relay(s, client.get(), r.upstream.get(), {}, {}, std::nullopt);
}

// A client of forward `f`, to its target.
void serve_forward(State& s, Fd& client, const State::Forward& f) {
    reach_or_reset(s, client, f.host, f.port, "forward");
}

// A direct client (Proxy::start): the target expected for its port, as a
// forward's; without one, reset.
void serve_direct(State& s, Fd& client) {
    sockaddr_storage peer{};
    socklen_t size = sizeof peer;
    std::optional<sbx::net::HostTarget> target;
    if (::getpeername(client.get(), reinterpret_cast<sockaddr*>(&peer), &size) == 0) {
        std::lock_guard lock(s.direct_mutex);
        if (auto it = s.direct.find(launcher::port_of(peer)); it != s.direct.end()) {
            target = std::move(it->second);
            s.direct.erase(it);
        }
    }
    if (!target) return reset(client);
    reach_or_reset(s, client, target->host, target->port, "direct");
}

// ---- Accepting ---------------------------------------------------------------------------

// `forward`: the index of the forward whose listener accepted (Protocol::forward).
void serve(State& s, int fd, Protocol protocol, std::size_t forward) {
    Fd client(fd);
    try {
        if (protocol == Protocol::http) serve_http(s, client);
        else if (protocol == Protocol::socks5) serve_socks(s, client);
        else if (protocol == Protocol::direct) serve_direct(s, client);
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

void accept_one(State& s, int listener, Protocol protocol, std::size_t forward = 0, const std::string& tag = {}) {
    Fd client = accept_client(listener);
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
            const std::string busy = sbx::net::http1::error_response(
                503, "Service Unavailable",
                "sbx: the proxy serves " + std::to_string(s.options.max_connections) + " connections at once");
            ::send(client.get(), busy.data(), busy.size(), kNoSignal | MSG_DONTWAIT);
        }
        return;
    }
    set_nodelay(client.get());
    auto& c = s.connections.emplace_back();
    const int fd = client.get();
    ++s.live;
    try {
        c.thread = std::thread([&s, &c, fd, protocol, forward, tag] {
            tag_of_thread = tag;
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

// The tagged listeners to poll (Proxy::add_listeners), after closing those
// removed: each pair's two, in the list's order, from p[first] on.
void poll_tagged(State& s, std::vector<pollfd>& p, std::size_t first) {
    p.resize(first);
    std::lock_guard lock(s.tagged_mutex);
    s.tagged.remove_if([](const State::Tagged& t) { return t.gone; });
    for (const auto& t : s.tagged) {
        p.push_back({t.http.get(), POLLIN, 0});
        p.push_back({t.socks.get(), POLLIN, 0});
    }
}

// Accepts on the tagged listeners that are readable. Only this thread erases
// from the list, so its entries stay while the lock is let go.
void accept_tagged(State& s, const std::vector<pollfd>& p, std::size_t first) {
    std::vector<std::pair<std::size_t, const State::Tagged*>> ready;
    {
        std::lock_guard lock(s.tagged_mutex);
        std::size_t i = first;
        for (const auto& t : s.tagged) {
            if (i + 1 >= p.size()) break;
            if (p[i].revents != 0) ready.emplace_back(i, &t);
            if (p[i + 1].revents != 0) ready.emplace_back(i + 1, &t);
            i += 2;
        }
    }
    for (const auto& [i, t] : ready)
        accept_one(s, p[i].fd, (i - first) % 2 == 0 ? Protocol::http : Protocol::socks5, 0, t->tag);
}

void accept_loop(State& s) {
    // The proxy's two listeners, the events, then each forward's listener,
    // the direct one and the tagged ones.
    std::vector<pollfd> p = {{s.http_listener.get(), POLLIN, 0},
                             {s.socks_listener.get(), POLLIN, 0},
                             {s.stop_event.fd(), POLLIN, 0},
                             {s.reap_event.fd(), POLLIN, 0},
                             {s.tagged_event.fd(), POLLIN, 0}};
    constexpr std::size_t kFirstForward = 5;
    for (const auto& f : s.forwards) p.push_back({f.listener.get(), POLLIN, 0});
    const std::size_t direct = p.size();  // the direct listener's, where there is one
    if (s.direct_listener.ok()) p.push_back({s.direct_listener.get(), POLLIN, 0});
    const std::size_t first_tagged = p.size();
    poll_tagged(s, p, first_tagged);
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
            for (std::size_t i = kFirstForward; i < direct; ++i)
                if (p[i].revents != 0) accept_one(s, p[i].fd, Protocol::forward, i - kFirstForward);
            if (direct < first_tagged && p[direct].revents != 0) accept_one(s, p[direct].fd, Protocol::direct);
            accept_tagged(s, p, first_tagged);
            if (p[4].revents != 0) {
                s.tagged_event.drain();
                poll_tagged(s, p, first_tagged);
            }
        } catch (...) {
            // Out of memory for the list: the client was closed; go on.
        }
    }
}

bool names_an_address(const std::vector<sbx::net::HostRule>& list) {
    return std::any_of(list.begin(), list.end(),
                       [](const sbx::net::HostRule& r) { return r.pattern.kind == sbx::net::HostPattern::Kind::address; });
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
                                                   std::vector<ForwardListener> forwards, int direct_listener) {
    auto s = std::make_unique<State>();
    s->http_listener = Fd(http_listener);
    s->socks_listener = Fd(socks_listener == http_listener ? -1 : socks_listener);
    // Each descriptor owned once, however often it is given.
    std::vector<int> owned{http_listener, socks_listener};
    int twice = -1;
    if (direct_listener >= 0) {
        if (std::find(owned.begin(), owned.end(), direct_listener) != owned.end()) twice = direct_listener;
        else s->direct_listener = Fd(direct_listener);
        owned.push_back(direct_listener);
    }
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
    if (options.secret.size() > 255)
        return sbx::fail(Errc::invalid_argument, "the proxy's secret is " + std::to_string(options.secret.size()) +
                                                     " bytes long: a SOCKS5 password holds at most 255");
    SBX_TRY(check_listener(http_listener, "HTTP"));
    SBX_TRY(check_listener(socks_listener, "SOCKS"));
    for (const auto& f : s->forwards)
        SBX_TRY(check_listener(f.listener.get(), "forward's"));
    if (s->direct_listener.ok()) SBX_TRY(check_listener(s->direct_listener.get(), "direct"));
    if (!s->stop_event.open() || !s->reap_event.open() || !s->tagged_event.open())
        return sbx::fail(Errc::io_error, std::string("cannot make the proxy's events: ") + std::strerror(errno));
    s->options = std::move(options);
    s->call = std::make_shared<const sbx::net::HostCall>(s->options.call);
    s->names_lead_to_addresses = names_an_address(s->options.rules.allowed) ||
                                 (s->options.call.hosts && names_an_address(*s->options.call.hosts));

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
    s.direct_listener.reset();
    {
        std::lock_guard lock(s.tagged_mutex);
        s.tagged.clear();
    }
    s.stop_event.close();
    s.reap_event.close();
    s.tagged_event.close();
}

namespace {

// The answers given for `tag`'s clients, forgotten (a question open goes on).
void forget_answers(State& s, const std::string& tag) {
    std::lock_guard lock(s.ask_mutex);
    s.answers.erase(tag);
}

}  // namespace

sbx::expected<void> Proxy::add_listeners(std::string tag, int http_listener, int socks_listener,
                                         std::optional<sbx::net::HostCall> call) {
    State& s = *state_;
    Fd http(http_listener), socks(socks_listener == http_listener ? -1 : socks_listener);
    if (socks_listener == http_listener) return sbx::fail(Errc::invalid_argument, "the HTTP and SOCKS listeners are one descriptor");
    SBX_TRY(check_listener(http.get(), "HTTP"));
    SBX_TRY(check_listener(socks.get(), "SOCKS"));
    std::lock_guard guard(s.stop_mutex);
    if (s.stopped) return sbx::fail(Errc::unavailable, "the proxy has stopped");
    {
        std::lock_guard lock(s.tagged_mutex);
        std::size_t live = 0;
        for (const auto& t : s.tagged) {
            if (t.gone) continue;
            if (t.tag == tag) return sbx::fail(Errc::invalid_argument, "the proxy has listeners tagged " + tag + " already");
            ++live;
        }
        if (live >= kMaxTagged)
            return sbx::fail(Errc::unavailable, "the proxy serves " + std::to_string(kMaxTagged) + " tagged listeners at most");
        if (call) {
            if (call->hosts && names_an_address(*call->hosts)) s.names_lead_to_addresses = true;
            s.calls[tag] = std::make_shared<const sbx::net::HostCall>(std::move(*call));
        }
        forget_answers(s, tag);  // a command's pid, taken again: not the earlier command's
        s.tagged.push_back(State::Tagged{std::move(tag), std::move(http), std::move(socks), false});
    }
    s.tagged_event.notify();  // under stop_mutex: stop() closes the event
    return {};
}

void Proxy::remove_listeners(const std::string& tag) {
    State& s = *state_;
    std::lock_guard guard(s.stop_mutex);
    if (s.stopped) return;
    {
        std::lock_guard lock(s.tagged_mutex);
        for (auto& t : s.tagged)
            if (t.tag == tag) t.gone = true;
        s.calls.erase(tag);
    }
    forget_answers(s, tag);
    s.tagged_event.notify();  // under stop_mutex: stop() closes the event
}

bool Proxy::admit(const sbx::net::HostTarget& t, const std::string& program, const std::string& tag) {
    sbx::net::HostDecision d;
    std::string why;
    bool stopped = false;
    // This thread (the broker's) serves the one connection meanwhile.
    const std::string before = std::exchange(detail::tag_of_thread, tag);
    const bool ok = detail::admit(*state_, *detail::call_of(*state_), t, "direct", program, d, why, stopped);
    detail::tag_of_thread = before;
    return ok;
}

bool Proxy::expect_direct(std::uint16_t port, sbx::net::HostTarget t) {
    std::lock_guard lock(state_->direct_mutex);
    if (state_->direct.size() >= kMaxDirect && state_->direct.find(port) == state_->direct.end()) return false;
    state_->direct[port] = std::move(t);
    return true;
}

void Proxy::forget_direct(std::uint16_t port) {
    std::lock_guard lock(state_->direct_mutex);
    state_->direct.erase(port);
}

std::size_t Proxy::connections() const { return state_->live; }

std::size_t Proxy::refused_clients() const { return state_->refused_clients; }

}  // namespace sbx::proxy
