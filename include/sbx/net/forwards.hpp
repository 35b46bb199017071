// sbx/net/forwards.hpp - loopback forwards: ports on the sandbox's own loopback that
// lead to a server on the host's.
//
// A client that ignores the proxy variables (Go never proxies loopback; database
// clients, redis-cli, Node before 24) opens its own socket to 127.0.0.1:5432 and,
// in the sandbox's network namespace, finds nothing there. For every allowed entry
// that names a loopback target on one port, loopback_forwards() says where to
// listen inside and what the proxy is to reach for each connection accepted
// there: the entry's own host and port, decided by decide_host like a CONNECT to
// it, so a forward reaches nothing the rules would not let a proxy client reach.
// Which entries: an address pattern of a loopback address (127.0.0.0/8, ::1) or
// the name `localhost`, with a port, from the allow list (network.allowedDomains,
// which the agent file's network.hosts join) or the hosts the call lists. Not a
// pattern without a port (every port: nothing to listen on), `*.localhost`, `*`,
// nor allowLocalBinding (every loopback port); nor a port below 1024, which the
// sandbox cannot listen on (those entries are listed, for a warning).
// Pure: the listeners are the launcher's (inside the namespace, before the
// proxy's own), the decision per connection the proxy's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/inline.hpp"
#include "sbx/net/address.hpp"
#include "sbx/net/hosts.hpp"

namespace sbx::net {

// One listener inside and the target behind it.
struct Forward {
    Address listen;                 // inside the sandbox: 127.x.y.z or ::1
    std::uint16_t port = 0;         // the port listened on inside
    std::string target;             // what each connection is decided and dialed as: canonical address text or "localhost"
    std::uint16_t target_port = 0;  // its port (the entry's: the same as `port`)
    std::string why;                // the entry behind it, for people and errors
    friend bool operator==(const Forward&, const Forward&) = default;
};

// At most this many forwards: the stage hands every listener to the launcher in
// one message, and Linux passes at most 253 descriptors in one (SCM_MAX_FD),
// the proxy's two among them.
inline constexpr std::size_t kMaxForwards = 250;

// The lowest port the stage can listen on: a new network namespace starts with
// net.ipv4.ip_unprivileged_port_start at 1024, and the sandbox drops every
// capability (CAP_NET_BIND_SERVICE too), root callers' included.
inline constexpr std::uint16_t kFirstForwardPort = 1024;

// Where a `localhost:PORT` entry listens inside: both loopbacks a client may
// try first for the name (/etc/hosts lists both).
struct LocalhostListen {
    Address address;
    std::string_view reason;
};
inline constexpr LocalhostListen kLocalhostListens[] = {
    {Address::v4(127, 0, 0, 1), "IPv4 clients, and those that try the A record first"},
    {Address::v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}), "IPv6 clients, and those that try ::1 first"},
};
static_assert(std::size(kLocalhostListens) == 2 && kLocalhostListens[0].address.is_v4() &&
                  kLocalhostListens[1].address.is_v6(),
              "localhost listens on one IPv4 and one IPv6 loopback");

// Whether `address` may be listened on by a forward: a loopback address.
constexpr bool forward_address(const Address& address) noexcept {
    return classify(unmap(address)) == AddressClass::loopback;
}

struct ForwardSet {
    std::vector<Forward> forwards;
    std::vector<const HostRule*> privileged;  // loopback entries on a port below kFirstForwardPort: no forward
};

// The forwards the allowed entries of `rules` and the hosts of `call` ask for,
// in the order of the entries, one per listening address and port. Promises:
// every forward listens on a loopback address on the entry's port, and its
// target is the entry's host and port; an address pattern's forward is made
// before a `localhost` one, so that when both name one listening address and
// port (`[::1]:8080`, `localhost:8080`) the entry that names the address
// decides where it leads; for the same listening address and port otherwise,
// the first entry. Entries on a port below kFirstForwardPort get none and are
// listed in `privileged`, each once. The rules are referred to, not copied.
SBX_INLINE ForwardSet loopback_forwards(const HostRules& rules, const HostCall& call);

// What sends a client of the proxy variables to the host's loopback on a port no
// forward listens on: allowLocalBinding ("allowLocalBinding"), or the first
// allowed entry (or host of the call) that names loopback with no port, a port
// below kFirstForwardPort, or `*.localhost` (its text). nullopt when there is
// none: every host loopback target the rules allow then has a forward on the
// sandbox's own loopback, and the command's clients may go to loopback directly
// (NO_PROXY), where they find the forwards and the servers the command starts.
// Otherwise loopback must go through the proxy, to the host's, as before.
SBX_INLINE std::optional<std::string> loopback_through_proxy(const HostRules& rules, const HostCall& call);

// `a:port` as a client writes it: 127.0.0.1:5432, [::1]:8080.
SBX_INLINE std::string address_port_text(const Address& a, std::uint16_t port);

}  // namespace sbx::net

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_NET)

namespace sbx::net {

SBX_INLINE ForwardSet loopback_forwards(const HostRules& rules, const HostCall& call) {
    std::vector<const HostRule*> entries;
    for (const auto& r : rules.allowed) entries.push_back(&r);
    if (call.hosts)
        for (const auto& r : *call.hosts) entries.push_back(&r);
    ForwardSet set;
    std::vector<Forward>& out = set.forwards;
    auto add = [&](const Address& listen, const HostRule& r) {
        const std::uint16_t port = *r.pattern.port;
        if (port < kFirstForwardPort) {
            if (std::find(set.privileged.begin(), set.privileged.end(), &r) == set.privileged.end())
                set.privileged.push_back(&r);
            return;
        }
        const bool taken = std::any_of(out.begin(), out.end(),
                                       [&](const Forward& f) { return f.listen == listen && f.port == port; });
        if (!taken) out.push_back(Forward{listen, port, r.pattern.host, port, detail::describe(r)});
    };
    for (const auto* r : entries) {
        const HostPattern& p = r->pattern;
        if (p.port && *p.port != 0 && p.kind == HostPattern::Kind::address && p.address && forward_address(*p.address))
            add(unmap(*p.address), *r);
    }
    for (const auto* r : entries) {
        const HostPattern& p = r->pattern;
        if (p.port && *p.port != 0 && p.kind == HostPattern::Kind::name && p.host == "localhost")
            for (const auto& l : kLocalhostListens) add(l.address, *r);
    }
    return set;
}

SBX_INLINE std::optional<std::string> loopback_through_proxy(const HostRules& rules, const HostCall& call) {
    if (rules.local) return std::string("allowLocalBinding");
    auto beyond = [](const HostRule& r) {
        const HostPattern& p = r.pattern;
        const bool unforwarded_port = !p.port || *p.port == 0 || *p.port < kFirstForwardPort;
        if (p.kind == HostPattern::Kind::address) return p.address && forward_address(*p.address) && unforwarded_port;
        if (p.kind == HostPattern::Kind::name) return p.host == "localhost" && unforwarded_port;
        return p.kind == HostPattern::Kind::subdomains && p.host == "localhost";
    };
    for (const auto& r : rules.allowed)
        if (beyond(r)) return detail::describe(r);
    if (call.hosts)
        for (const auto& r : *call.hosts)
            if (beyond(r)) return detail::describe(r);
    return std::nullopt;
}

SBX_INLINE std::string address_port_text(const Address& a, std::uint16_t port) {
    return (a.is_v6() ? "[" + to_string(a) + "]" : to_string(a)) + ":" + std::to_string(port);
}

}  // namespace sbx::net
#endif
