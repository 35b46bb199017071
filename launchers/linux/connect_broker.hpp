// launchers/linux/connect_broker.hpp - the launcher's answer to each connect() of the command.
//
// A Unix socket by path reaches whatever listens there, inside the sandbox or
// outside it, and neither the network namespace nor the read-only view of the
// file tree stops that. So the whole filter sends every connect() to the
// launcher (seccomp user notification: SeccompOptions::connect_broker), and the
// stage, after its other filters, loads one whose listener it hands over. For
// each call the broker here:
//   - takes a copy of the command's socket (pidfd_getfd: the same socket, not a
//     new one) and reads the address from the command's memory, once;
//   - for a Unix socket by path, resolves the path as the command's view of the
//     file tree would (through /proc/PID/root, following its links one by one,
//     at most 40, as the kernel does), asks sbx::net::decide_unix_socket, and
//     connects its copy to the path the decision names, opened without
//     following any link (a listed entry as resolved when the run began; the
//     command's own under its temporary folder, beneath it). Refused, the call
//     fails with EACCES and the refusal is reported with its path;
//   - for any other address (IP in the sandbox's own network namespace, an
//     abstract Unix name, which belongs to that namespace too), connects its
//     copy to the address it read.
// The command's memory is read once and the kernel never reads it again for
// the call: what it changes after the launcher read it changes nothing. A
// connect that would wait (a socket without O_NONBLOCK, whose peer's backlog is
// full) waits on a thread of its own, so that others are answered meanwhile.
// Where the copy cannot be taken or the memory read, the call fails; nothing
// is ever let through unseen. The peer sees the launcher's credentials
// (SO_PEERCRED): the same user, another process.
#pragma once

#include <linux/seccomp.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
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

#include "base/fd_io.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/net/unix_socket.hpp"

namespace sbx::linux_sandbox {

// Whether this kernel lets the broker work: seccomp user notification and
// pidfd_getfd (Linux 5.6). Errc::sandbox_unavailable naming what is missing.
sbx::expected<void> connect_broker_available();

// Where a path leads, and what is there.
struct Resolved {
    std::string path;     // absolute, normalised
    bool exists = false;  // something is there (a link that leads nowhere is not)
    bool socket = false;  // and it is a socket
};

// Where `path` leads inside the tree whose root is `root` (an O_PATH
// descriptor, such as /proc/PID/root): each component looked up without
// following a link, each link read and followed as the kernel would (relative
// to the folder that holds it, absolute from `root`), `..` going up a folder
// (never above `root`). Where a component does not exist (or cannot be looked
// at), the rest is folded by its text. Relative paths start from `cwd` (an
// absolute path in that tree). nullopt after more than 40 links, or for a path
// that is empty or longer than PATH_MAX.
std::optional<Resolved> resolve_in(int root, std::string_view cwd, std::string_view path);

// Where the command's other connections go: the sandbox's own network
// namespace (bubblewrap's), where the broker connects them as asked; or the
// host's (the weaker sandbox), where it connects only a TCP stream to one of
// `tcp_ports` on loopback (the proxy's), as the Landlock domain would, and no
// abstract Unix name, which would be the host's.
struct BrokerNetwork {
    bool own_namespace = true;
    std::vector<std::uint16_t> tcp_ports;
    // In the sandbox's own namespace, a TCP connection to an address outside
    // it goes through the proxy (Proxy::admit, expect_direct, forget_direct):
    // its direct listener on the sandbox's 127.0.0.1 at `direct_port` (0:
    // none, and such connections are refused).
    // `group`: the caller's process group, as SocketRefusal's.
    std::function<bool(const sbx::net::HostTarget&, const std::string& program, pid_t group)> admit;
    std::function<bool(std::uint16_t port, sbx::net::HostTarget)> expect;
    std::function<void(std::uint16_t port)> forget;
    std::uint16_t direct_port = 0;
};

// A refused connection, for the violations block.
struct SocketRefusal {
    std::string path;     // a Unix socket: where it led; else empty
    std::string named;    // a Unix socket: as the command wrote it; an abstract one: its name, `@` first
    std::string host;     // an IP connection: the address, and its port
    unsigned port = 0;
    std::string program;  // the caller's program (its comm), when known
    std::string why;
    std::size_t times = 1;
    bool local = false;   // the host's loopback: network.allowedDomains would reach it (AllowHints::local)
    pid_t group = 0;      // the caller's process group in its own PID namespace (a session's command); 0: unknown
};

// A TCP connection to the sandbox's own loopback, which, refused there, is
// reported where a server listens on that port of the host's.
struct LoopbackCall {
    std::string host;
    std::uint16_t port = 0;  // 0: not such a connection
    std::string program;
    pid_t group = 0;         // as SocketRefusal's
};

class ConnectBroker {
public:
    // At most this many loopback ports are looked up among the host's
    // listeners (refused_on_loopback); past them, such refusals go unsaid.
    static constexpr std::size_t kMaxPortsLooked = 256;
    // Reported as it happens (the report's event).
    using OnRefusal = std::function<void(const SocketRefusal&)>;

    // Serves `listener` (the stage's filter's) on a thread of its own until
    // stop(). Fails with Errc::sandbox_unavailable where the thread, its stop
    // signal or the command's temporary folder cannot be had. `own`: that
    // folder as the stage opened it inside the sandbox (a tmpfs of the
    // sandbox's own, of which the launcher sees only the empty mount point);
    // none: rules.own, opened here.
    static sbx::expected<std::unique_ptr<ConnectBroker>> start(launcher::Fd listener, sbx::net::UnixSocketRules rules,
                                                               BrokerNetwork network, OnRefusal on_refusal,
                                                               launcher::Fd own = {});
    // The same for a listener another thread serves, which calls answer() for
    // each connect(): the file broker's, in the weaker sandbox (the kernel
    // lets a process have one listener only). `listener`: a copy of it.
    static sbx::expected<std::unique_ptr<ConnectBroker>> attach(launcher::Fd listener, sbx::net::UnixSocketRules rules,
                                                                BrokerNetwork network, OnRefusal on_refusal);
    ~ConnectBroker();
    ConnectBroker(const ConnectBroker&) = delete;
    ConnectBroker& operator=(const ConnectBroker&) = delete;

    // Ends the thread and the connects still waiting (EINTR for their callers,
    // if any is left). Idempotent.
    void stop();

    // The refusals so far, each path once with how many times; not a refusal
    // on the sandbox's loopback at a port a later connection reached.
    std::vector<SocketRefusal> refused() const;

    // Answers one connect() notification of the listener.
    void answer(const seccomp_notif& n);

private:
    struct Waiter;
    ConnectBroker(launcher::Fd listener, launcher::Fd wake, launcher::Fd own, sbx::net::UnixSocketRules rules,
                  BrokerNetwork network, OnRefusal on_refusal);
    // Whether a connection outside the Unix paths may go on as asked; where
    // not, it is refused and reported here.
    bool other_allowed(int family, int type, const std::vector<unsigned char>& address, pid_t tid);
    static sbx::expected<std::unique_ptr<ConnectBroker>> make(launcher::Fd listener, sbx::net::UnixSocketRules rules,
                                                              BrokerNetwork network, OnRefusal on_refusal,
                                                              launcher::Fd own);
    void serve();
    void refuse(SocketRefusal r);
    void connect_and_answer(std::uint64_t id, launcher::Fd sock, std::vector<unsigned char> address,
                            launcher::Fd target, LoopbackCall loopback = {});
    void refused_on_loopback(const LoopbackCall& call);
    void reached_loopback(std::uint16_t port);
    // Runs `job` (which answers call `id`) on a thread of its own; EAGAIN for
    // the call where too many wait already. Defined where it is used alone.
    template <class Job>
    void on_own_thread(std::uint64_t id, Job job);
    static std::optional<sbx::net::HostTarget> tcp_target(int family, int type,
                                                          const std::vector<unsigned char>& address);
    void connect_directly(std::uint64_t id, launcher::Fd sock, sbx::net::HostTarget target, std::string program,
                          pid_t group);
    void reap_waiters(bool all);

    launcher::Fd listener_, wake_, own_;
    sbx::net::UnixSocketRules rules_;
    BrokerNetwork network_;
    OnRefusal on_refusal_;
    std::thread thread_;
    mutable std::mutex mutex_;           // refusals_, waiters_, looked_ and reached_
    std::vector<SocketRefusal> refusals_;
    std::list<std::unique_ptr<Waiter>> waiters_;
    // refused_on_loopback's looks at the host's listeners, by port: whether one
    // listened, and when that was looked at (a port where none did is looked at
    // again a second later). Beyond kMaxPortsLooked ports, no more is said.
    struct Looked {
        bool listens = false;
        std::chrono::steady_clock::time_point at;
    };
    std::map<std::uint16_t, Looked> looked_;
    // Loopback ports a connection reached in the end (the command's own server,
    // once up): their refusals before are left out of refused().
    std::set<std::uint16_t> reached_;
};

}  // namespace sbx::linux_sandbox
