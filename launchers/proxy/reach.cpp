// The proxy's one path from a host a client named to a connected socket: the
// engine decides (sbx::net::decide_host), the person is asked once per host:port
// when it says "ask", a name is resolved only once it may pass, and the engine
// chooses the address to dial (sbx::net::choose_address). Nothing is decided here.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "proxy/host_lookup.hpp"
#include "proxy/state.hpp"

namespace sbx::proxy::detail {

namespace net = sbx::net;

std::string display(const net::HostTarget& t) { return net::to_string(t); }

namespace {

void report(const State& s, const net::HostTarget& t, std::string_view protocol, std::string rule, std::string reason,
            net::AllowKind allow, const std::string& program = {}) {
    if (!s.options.on_refusal) return;
    ProxyEvent e;
    e.program = program;
    e.tag = serving_tag();
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

// The answer to `t`'s question for the calling thread's tag: the cached one,
// or ask's, asked by one thread of that tag at a time.
bool ask_once(State& s, const net::HostTarget& t) {
    const std::string key = display(t);
    const std::string& tag = serving_tag();
    std::unique_lock lock(s.ask_mutex);
    for (;;) {
        if (const auto of = s.answers.find(tag); of != s.answers.end())
            if (const auto it = of->second.find(key); it != of->second.end()) return it->second;
        if (s.stopping) return false;
        if (!s.asking.contains(tag)) break;
        s.ask_cv.wait(lock);
    }
    s.asking.insert(tag);
    lock.unlock();
    bool yes = false;
    try {
        yes = s.options.ask(t, tag);
    } catch (...) {
        yes = false;
    }
    lock.lock();
    s.asking.erase(tag);
    s.answers[tag][key] = yes;
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
    Fd fd = stream_socket(to.ss_family);
    if (!fd.ok()) return -1;
    if (::connect(fd.get(), reinterpret_cast<const sockaddr*>(&to), length) == 0) return fd.release();
    if (errno != EINPROGRESS && errno != EINTR) return -1;
    int error = 0;
    switch (wait_for(s.stop_event.fd(), fd.get(), POLLOUT, after_ms(s.options.connect_timeout_ms))) {
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
    errno = error;  // kept while `fd` closes
    return -1;
}

}  // namespace

bool admit(State& s, const net::HostCall& call, const net::HostTarget& t, std::string_view protocol,
           const std::string& program, net::HostDecision& d, std::string& why, bool& stopped) {
    stopped = false;
    d = net::decide_host(s.options.rules, call, t, s.options.own_addresses);
    auto refuse = [&](std::string rule, std::string reason, net::AllowKind allow) {
        report(s, t, protocol, std::move(rule), reason, allow, program);
        why = std::move(reason);
        return false;
    };
    if (d.verdict == net::HostDecision::Verdict::deny)
        return refuse(d.rule ? d.rule->text : std::string(), d.why, net::allow_kind(d));
    if (d.verdict == net::HostDecision::Verdict::ask) {
        if (!s.options.ask) return refuse({}, d.why + "; nothing was there to answer", net::AllowKind::hosts);
        if (!ask_once(s, t)) {
            if (s.stopping) {
                stopped = true;
                return false;
            }
            return refuse({}, d.why + "; refused when asked", net::AllowKind::hosts);
        }
    }
    return true;
}

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
    // Where the rules name an address, a name may lead there without DNS
    // (decide_host's named_address step); else no file is read for it.
    if (s.names_lead_to_addresses)
        out.target.local_addresses = s.options.local ? s.options.local(out.target) : launcher::local_addresses_of(out.target);
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
    const auto call = call_of(s);  // held to the end: remove_listeners() may drop the tag's meanwhile
    const auto& own = s.options.own_addresses;
    net::HostDecision d;
    bool stopped = false;
    if (!admit(s, *call, t, protocol, {}, d, out.reason, stopped)) {
        out.kind = stopped ? Kind::stopped : Kind::refused;
        return out;
    }

    std::vector<net::Address> resolved;
    if (!t.address && !d.dial) {
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
    auto passed = net::choose_address(d, rules, *call, t, resolved, own);
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
    cloexec_nonblock(fd);
    set_nodelay(fd);
    out.kind = Kind::connected;
    return out;
}

}  // namespace sbx::proxy::detail
