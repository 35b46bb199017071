// launchers/proxy/state.hpp - what the proxy's parts share: the state its threads
// see, and each part's entry point.
//
// The parts, one file each: proxy.cpp starts, accepts and stops; proxy/reach.cpp
// decides, asks, resolves and dials a host; proxy/relay.cpp moves bytes both ways;
// proxy/http.cpp and proxy/socks.cpp serve the two protocols over the pure
// parsers of sbx/net/http1.hpp and sbx/net/socks5.hpp. Internal to the proxy:
// nothing outside launchers/proxy*.cpp includes it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "proxy/deadline_io.hpp"
#include "proxy/platform.hpp"
#include "proxy/proxy.hpp"

namespace sbx::proxy {

struct Proxy::State {
    ProxyOptions options;
    Fd http_listener, socks_listener;
    struct Forward {
        Fd listener;
        std::string host;
        std::uint16_t port = 0;
    };
    std::vector<Forward> forwards;
    // The rules name an address: a name may lead to it without DNS (its
    // local_addresses are looked up); without one, nothing is read for it.
    std::atomic<bool> names_lead_to_addresses{false};
    Fd direct_listener;  // -1: none (Proxy::start)
    // Listeners added after start (Proxy::add_listeners). The acceptor polls
    // them and is the one that closes them: remove_listeners() marks a pair
    // gone and wakes it through tagged_event.
    struct Tagged {
        std::string tag;
        Fd http, socks;
        bool gone = false;
    };
    std::mutex tagged_mutex;
    std::list<Tagged> tagged;
    Event tagged_event;
    // The options' call, and each tag's own (add_listeners, under tagged_mutex):
    // shared, so that a connection takes its call without copying its lists.
    std::shared_ptr<const sbx::net::HostCall> call;
    std::map<std::string, std::shared_ptr<const sbx::net::HostCall>> calls;
    std::mutex direct_mutex;
    std::map<std::uint16_t, sbx::net::HostTarget> direct;  // client port -> target (Proxy::expect_direct)
    Event stop_event;  // readable from the moment stop() begins: every poll watches it
    Event reap_event;  // set by each connection thread as it ends
    std::atomic<bool> stopping{false};
    std::atomic<std::size_t> live{0};
    std::atomic<std::size_t> grown{0};  // bytes the relay buffers grew by, against the relay's budget
    std::atomic<std::size_t> refused_clients{0};  // without the secret (Proxy::refused_clients)

    struct Connection {
        std::thread thread;
        std::atomic<bool> done{false};
    };
    std::thread acceptor;
    std::list<Connection> connections;  // the acceptor's; stop()'s once the acceptor has ended

    // Questions: one at a time for each tag (a session's commands are asked
    // each on its own client), each host:port once for each tag, forgotten
    // with the tag's listeners (a command's pid is taken again later).
    std::mutex ask_mutex;
    std::condition_variable ask_cv;
    std::set<std::string> asking;                // tags with a question open
    std::map<std::string, std::map<std::string, bool>> answers;  // tag -> host:port -> allowed

    std::mutex stop_mutex;
    bool stopped = false;
};

namespace detail {

using State = Proxy::State;

// The tag of the listener the calling thread's client came on (empty: one of
// start()'s), for its refusals: set once by each connection's thread.
const std::string& serving_tag();

// The call that decides for the calling thread's client: its tag's own
// (Proxy::add_listeners), else the options'.
std::shared_ptr<const sbx::net::HostCall> call_of(State& s);

// "host:port", with an IPv6 address in brackets.
std::string display(const sbx::net::HostTarget& t);

// answer_and_close with the proxy's stop event and header timeout.
void answer_and_close(const State& s, Fd& client, std::string_view answer);

void set_nodelay(int fd);

// What reach() made of a host:port.
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
    sbx::net::HostTarget target;
    Fd upstream;
    std::string reason;
    int error = 0;
};

// Decides host:port for `protocol` ("http", "connect", "socks5", "forward",
// "direct"), asks when the decision says so, resolves a name the rules let
// through, and connects to the address the engine chooses (proxy/reach.cpp).
Reached reach(State& s, std::string_view host, std::uint16_t port, std::string_view protocol);

// The first part of reach(): decides `t` and asks where the decision says so;
// a refusal is reported (with `program`). Whether it may go, its decision in
// `d`; `stopped` when stop() began meanwhile.
bool admit(State& s, const sbx::net::HostCall& call, const sbx::net::HostTarget& t, std::string_view protocol, const std::string& program,
           sbx::net::HostDecision& d, std::string& why, bool& stopped);

// Response heads still to rewrite on their way to the client.
struct HeadRewrite {
    std::string data;    // what came so far of the next head
    std::string origin;  // host:port, for a 502
    std::size_t max_bytes = 0;
};

// Relays between the client and the upstream server until both directions
// ended (each end's EOF passed on as a shutdown for writing), an error, or stop().
// `to_upstream` and `to_client` go first; `heads` rewrites the response heads
// (proxy/relay.cpp).
void relay(State& s, int client, int upstream, std::string_view to_upstream, std::string_view to_client,
           std::optional<HeadRewrite> heads);

// One client of each kind, served until its connection ends (proxy/http.cpp,
// proxy/socks.cpp, proxy.cpp).
void serve_http(State& s, Fd& client);
void serve_socks(State& s, Fd& client);

}  // namespace detail

}  // namespace sbx::proxy
