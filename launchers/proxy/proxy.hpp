// launchers/proxy/proxy.hpp - the per-command filtering proxy: HTTP (absolute-form and
// CONNECT) and SOCKS5, every host decided by the engine.
//
// One Proxy serves one sandboxed command. The launcher hands it two listening TCP
// sockets; the Proxy serves HTTP proxy requests on the first and SOCKS5 on the
// second, and on each forward's listener connections that lead to
// that forward's fixed target, until stop(). For each connection it canonicalises the
// host the client named (sbx::net::canonical_target), decides it
// (sbx::net::decide_host, asking through ProxyOptions::ask when the decision is
// "ask"), resolves a name once the decision lets it through or the answer is
// yes, and dials the address sbx::net::choose_address picks from the answers.
// Every refusal by the rules becomes a ProxyEvent; network errors (a name that
// does not resolve, a server that does not answer) are answered to the client
// but are not refusals. The engine decides everything, this machine's own
// addresses (ProxyOptions::own_addresses) included: nothing is decided here.
//
// Who can connect depends on the launcher. sbx-linux makes the listeners inside
// the sandbox's network namespace, so only the command reaches them, and gives
// no secret. Where the listeners are 127.0.0.1 ports of the host, which every
// local process can reach (sbx-mac; a Linux sandbox without namespaces), the
// launcher gives the Proxy a fresh secret for each command
// (ProxyOptions::secret, launchers/shared/proxy_secret.hpp) and puts it in the
// command's proxy variables: the Proxy then serves only clients that present
// it (sbx/net/proxy_auth.hpp), HTTP ones as the password of
// `Proxy-Authorization: Basic` (else 407, never forwarded), SOCKS5 ones through
// RFC 1929's username/password (else refused and closed). The user name is not
// checked. A client refused so is no refusal of a host: no ProxyEvent, nothing
// decided, resolved or dialed; Proxy::refused_clients() counts them. A local
// process that can read the command's environment (the same user's, through
// ps or /proc, where nothing else forbids it) can learn the secret too.
//
// A forward (sbx/net/forwards.hpp) serves clients that ignore proxies: a connection
// accepted on its listener is handled as a CONNECT to its target, decided,
// asked about, resolved and dialed the same way, and reported as a refusal with
// protocol "forward"; a connection it does not make is reset (the client reads
// ECONNRESET). A forward
// reaches its target and nothing else: the client names no host.
//
// Threads: one that accepts, and one per connection (at most
// ProxyOptions::max_connections; more are answered 503, best effort, or closed). They block
// every asynchronous signal, so the launcher's signals go to its own threads. The
// callbacks in ProxyOptions are called from these threads.
//
// HTTP serves one request per client connection: the request goes upstream with
// `Connection: close`, the response comes back with `Connection: close`, and the
// connection ends when the origin closes it. Bytes the client sends after its
// request (a body, or a request it pipelines) go on to the same origin and
// nowhere else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/net/address.hpp"
#include "sbx/net/hosts.hpp"

namespace sbx::proxy {

// One refusal, for the report and the <sandbox_violations> block.
struct ProxyEvent {
    std::string host;        // canonical target host ("example.com", "169.254.169.254", "::1")
    std::uint16_t port = 0;
    std::string protocol;    // "http", "connect", "socks5" or "forward"
    std::string rule;        // the text of the deciding rule, or empty
    std::string reason;      // one line: HostDecision::why, or why the resolved addresses were refused
    sbx::net::AllowKind allow = sbx::net::AllowKind::none;  // what would let it through
    std::string program;     // a direct connection's program (its comm), where the launcher knows it
    std::string tag;         // the tag of the listeners the client came on (Proxy::add_listeners); empty: start()'s
};

struct ProxyOptions {
    sbx::net::HostRules rules;
    sbx::net::HostCall call;
    std::vector<sbx::net::Address> own_addresses;  // this machine's addresses, for decide_host

    // Asked when decide_host says "ask"; returns whether to allow. Unset: refused.
    // `tag`: the asking client's (add_listeners, admit; empty for start()'s
    // listeners). Called by one proxy thread at a time for each tag, at most
    // once per host:port and tag: its answer, yes or no, stands for the rest
    // of the command, until remove_listeners() or add_listeners() of that tag.
    // stop() waits for a call in progress, so it must return when the launcher
    // stops (its control channel closed, say).
    std::function<bool(const sbx::net::HostTarget&, const std::string& tag)> ask;
    // Each refusal. Called from proxy threads, possibly at once: must be thread-safe.
    std::function<void(const ProxyEvent&)> on_refusal;

    // Test hooks. resolve: the addresses of a name (default: getaddrinfo,
    // AF_UNSPEC, SOCK_STREAM, AI_ADDRCONFIG), called once per connection. dial: a
    // connected TCP socket to address:port, or -1 with errno set (default: a
    // non-blocking connect that gives up after connect_timeout_ms or at stop()).
    // The Proxy owns the descriptor dial returns.
    std::function<sbx::expected<std::vector<sbx::net::Address>>(const std::string& host)> resolve;
    std::function<int(const sbx::net::Address&, std::uint16_t port)> dial;
    // Where a name leads without the network (default: localhost and
    // /etc/hosts, launcher::local_addresses_of), for the rules' address patterns.
    std::function<std::vector<sbx::net::Address>(const sbx::net::HostTarget&)> local;

    std::size_t max_header_bytes = 64 * 1024;  // an HTTP request head (431 beyond it), a response head (502)
    int header_timeout_ms = 30000;  // a client sends its request (HTTP head, SOCKS handshake) within this
    int connect_timeout_ms = 30000; // the default dial gives up after this
    std::size_t max_connections = 1024;  // served at once; more are answered 503 (HTTP) or closed (SOCKS)

    // Empty: every client is served. Otherwise the password each client must
    // present (any user name): HTTP in a Proxy-Authorization header, SOCKS5 by
    // RFC 1929; compared in constant time. Bytes 1 to 255 long (RFC 1929's limit).
    std::string secret;
};

// A listening socket of a forward's, with the target every connection on it leads to.
struct ForwardListener {
    int fd = -1;
    std::string host;        // as the plan writes it: canonical address text or "localhost"
    std::uint16_t port = 0;
};

class Proxy {
public:
    // Takes over two listening TCP sockets (bound, listening; they are made
    // non-blocking) and serves HTTP proxy requests on the first and SOCKS5 on the
    // second until stop(). The Proxy owns both descriptors from the call on, and
    // closes them also when start fails: INVALID_ARGUMENT for a descriptor that is
    // not a listening stream socket, IO_ERROR when a thread or an eventfd cannot be
    // made. The same holds for the forwards' listeners.
    // `direct_listener` (-1: none) serves the command's own connections to an
    // address (the connect broker, launchers/linux/connect_broker.hpp, connects
    // them there once admit() let them through): each leads to the target
    // expect_direct() named for its client's port, dialed and relayed as a
    // forward's; any other is reset.
    static sbx::expected<std::unique_ptr<Proxy>> start(ProxyOptions options, int http_listener, int socks_listener,
                                                       std::vector<ForwardListener> forwards = {},
                                                       int direct_listener = -1);

    // A connection the command makes itself to `t` (an address), past the
    // proxy variables: decided as a CONNECT there would be (asked about where
    // the rules say so; blocks meanwhile), a refusal reported with protocol
    // "direct" and `program`. Whether it may go.
    // `tag`: its refusal's (ProxyEvent::tag), as for a tagged listener's client.
    bool admit(const sbx::net::HostTarget& t, const std::string& program, const std::string& tag = {});
    // The direct listener's client from port `port` (on loopback) goes to `t`,
    // admitted; false when too many are expected at once. forget_direct()
    // withdraws it where that client never came.
    bool expect_direct(std::uint16_t port, sbx::net::HostTarget t);
    void forget_direct(std::uint16_t port);

    // Two more listeners, HTTP and SOCKS5, served as start()'s are, whose
    // clients' refusals carry `tag` (a session's command: which command a
    // connection belongs to is which listeners it came on). The Proxy owns both
    // descriptors from the call on, and closes them also on failure:
    // INVALID_ARGUMENT as for start() and for a tag given twice, UNAVAILABLE
    // beyond kMaxTagged pairs or once stop() began. remove_listeners() closes a
    // tag's (clients it accepted are served to their end). `call`, where
    // given, decides for the tag's clients in place of ProxyOptions::call (a
    // session command's own hosts), and for admit() with that tag.
    static constexpr std::size_t kMaxTagged = 1024;
    sbx::expected<void> add_listeners(std::string tag, int http_listener, int socks_listener,
                                      std::optional<sbx::net::HostCall> call = std::nullopt);
    void remove_listeners(const std::string& tag);

    // Stops accepting, ends every connection, joins every thread and closes every
    // descriptor the Proxy owns. Returns once that is done: promptly, except for a
    // call of ask or of the resolver in progress, which it waits for. Idempotent;
    // the destructor calls it. Not from a callback (it would wait for itself).
    void stop();

    // How many connections are being served now (the accepting thread not counted).
    std::size_t connections() const;

    // How many clients were refused because they did not present the secret
    // (ProxyOptions::secret): an HTTP request answered 407, a SOCKS5 client that
    // offered no username/password or sent a wrong one. Always 0 without a secret.
    std::size_t refused_clients() const;

    Proxy(const Proxy&) = delete;
    Proxy& operator=(const Proxy&) = delete;
    ~Proxy();

    struct State;  // shared with the proxy's threads; defined in proxy/state.hpp

private:
    explicit Proxy(std::unique_ptr<State> state);
    std::unique_ptr<State> state_;
};

}  // namespace sbx::proxy
