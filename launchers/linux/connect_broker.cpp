#include "linux/connect_broker.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <string_view>
#include <utility>

#include "base/connect_filter.hpp"
#include "linux/notify_loop.hpp"
#include "linux/proc_files.hpp"
#include "linux/quiet_thread.hpp"
#include "sbx/core/paths.hpp"

namespace sbx::linux_sandbox {

using launcher::Fd;

namespace {

constexpr int kMaxLinks = 40;            // as the kernel's MAXSYMLINKS
constexpr std::size_t kMaxWaiters = 64;  // connects waiting at once; one more fails with EAGAIN
constexpr std::size_t kMaxRefusals = 1000;  // paths kept for the block; more are counted on the last

// The signal stop() sends a thread waiting in connect(), whose handler does
// nothing and does not restart the call: a real-time one nothing else uses.
int wake_signal() { return SIGRTMIN + 3; }

void on_wake(int) {}

long pidfd_open(pid_t pid, unsigned flags) { return ::syscall(SYS_pidfd_open, pid, flags); }

// The folder `p` (a path's text) goes through, pushed in front of `todo`.
void push_front(std::deque<std::string>& todo, std::string_view p) {
    const auto parts = paths::components(p);
    for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.emplace_front(*it);
}

// The thread group of `tid`, from /proc; 0 when unreadable.
pid_t thread_group(pid_t tid) { return static_cast<pid_t>(std::atol(status_field(tid, "Tgid").c_str())); }

// A copy of descriptor `fd` of the thread `tid`: the same open file, taken
// with pidfd_getfd from the thread itself where the kernel can name a thread
// (PIDFD_THREAD, Linux 6.9), else from its thread group, checked to be the
// file the thread has under that number. -errno on failure.
std::pair<Fd, int> take_descriptor(pid_t tid, int fd) {
    constexpr unsigned kPidfdThread = O_EXCL;  // PIDFD_THREAD
    Fd pidfd(static_cast<int>(pidfd_open(tid, kPidfdThread)));
    const bool whole_group = !pidfd.ok();
    if (whole_group) pidfd = Fd(static_cast<int>(pidfd_open(thread_group(tid), 0)));
    if (!pidfd.ok()) return {Fd(), -ESRCH};
    Fd copy(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), fd, 0)));
    if (!copy.ok()) return {Fd(), errno == EBADF ? -EBADF : -EACCES};
    if (whole_group) {
        // A thread made without CLONE_FILES has a table of its own.
        struct stat mine {}, theirs {};
        const std::string link = "/proc/" + std::to_string(tid) + "/fd/" + std::to_string(fd);
        if (::fstat(copy.get(), &mine) != 0 || ::stat(link.c_str(), &theirs) != 0 || mine.st_ino != theirs.st_ino ||
            mine.st_dev != theirs.st_dev)
            return {Fd(), -EAGAIN};
    }
    return {std::move(copy), 0};
}

// `n` bytes at `address` in the thread's memory; nullopt when not all can be read.
std::optional<std::vector<unsigned char>> read_memory(pid_t tid, std::uint64_t address, std::size_t n) {
    std::vector<unsigned char> out(n);
    if (n == 0) return out;
    iovec local{out.data(), n};
    iovec remote{reinterpret_cast<void*>(address), n};
    if (::process_vm_readv(tid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(n)) return std::nullopt;
    return out;
}

// The thread's program, as /proc names it (comm); empty when unknown.
std::string program_of(pid_t tid) {
    const std::string path = "/proc/" + std::to_string(tid) + "/comm";
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    char buf[64];
    const ssize_t n = fd.ok() ? ::read(fd.get(), buf, sizeof buf) : -1;
    if (n <= 0) return {};
    std::string out(buf, static_cast<std::size_t>(n));
    while (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
}

// The thread's process group as its own PID namespace numbers it (the last
// of NSpgid); 0 when unknown.
pid_t group_of(pid_t tid) {
    const std::string path = "/proc/" + std::to_string(tid) + "/status";
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    char buf[4096];
    const ssize_t n = fd.ok() ? ::read(fd.get(), buf, sizeof buf - 1) : -1;
    if (n <= 0) return 0;
    const std::string_view text(buf, static_cast<std::size_t>(n));
    const auto at = text.find("\nNSpgid:");
    if (at == std::string_view::npos) return 0;
    const auto end = text.find('\n', at + 1);
    const std::string_view line = text.substr(at + 8, end == std::string_view::npos ? std::string_view::npos : end - at - 8);
    const auto last = line.find_last_of(" \t");
    const std::string_view number = last == std::string_view::npos ? line : line.substr(last + 1);
    pid_t out = 0;
    for (char c : number) {
        if (c < '0' || c > '9' || out > 10'000'000) return 0;
        out = out * 10 + (c - '0');
    }
    return out;
}

// `path` opened O_PATH beneath `at`, following no link on the way
// (RESOLVE_BENEATH as well where `beneath`). -errno on failure.
std::pair<Fd, int> open_exactly(int at, const std::string& path, bool beneath) {
    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | (beneath ? RESOLVE_BENEATH : 0);
    Fd fd(static_cast<int>(::syscall(SYS_openat2, at, path.c_str(), &how, sizeof how)));
    if (!fd.ok()) return {Fd(), -errno};
    return {std::move(fd), 0};
}

// The Unix address that names `fd` through /proc: connect() follows it to the
// socket itself, whatever path it lies at.
std::vector<unsigned char> address_of_descriptor(int fd) {
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string path = "/proc/self/fd/" + std::to_string(fd);
    std::memcpy(a.sun_path, path.c_str(), path.size() + 1);
    const auto len = offsetof(sockaddr_un, sun_path) + path.size() + 1;
    const auto* bytes = reinterpret_cast<const unsigned char*>(&a);
    return std::vector<unsigned char>(bytes, bytes + len);
}

}  // namespace

sbx::expected<void> connect_broker_available() {
    seccomp_notif_sizes sizes{};
    if (::syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0)
        return sbx::fail(Errc::sandbox_unavailable,
                         std::string("seccomp user notification: ") + std::strerror(errno));
    // With a descriptor that is none, the call exists when it fails with EBADF.
    if (::syscall(SYS_pidfd_getfd, -1, 0, 0) == 0 || errno == ENOSYS)
        return sbx::fail(Errc::sandbox_unavailable, "pidfd_getfd: this kernel does not have it (Linux 5.6)");
    return {};
}

std::optional<Resolved> resolve_in(int root, std::string_view cwd, std::string_view path) {
    if (path.empty() || path.size() >= PATH_MAX) return std::nullopt;
    std::deque<std::string> todo;
    push_front(todo, path);
    if (path.front() != '/') push_front(todo, cwd);
    std::vector<std::string> names;  // where the walk stands
    std::vector<Fd> folders;         // the folder each name is, while every one exists
    bool missing = false;            // from here on, the rest is folded by its text
    bool socket = false;             // the last component looked at is a socket
    int links = 0;
    while (!todo.empty()) {
        const std::string c = std::move(todo.front());
        todo.pop_front();
        if (c == ".") continue;
        if (c == "..") {
            if (!names.empty()) names.pop_back();
            if (folders.size() > names.size()) folders.pop_back();
            continue;
        }
        names.push_back(c);
        if (missing) continue;
        const int at = folders.empty() ? root : folders.back().get();
        struct stat st {};
        socket = false;
        if (::fstatat(at, c.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            missing = true;
        } else if (S_ISLNK(st.st_mode)) {
            if (++links > kMaxLinks) return std::nullopt;
            char buf[PATH_MAX];
            const ssize_t n = ::readlinkat(at, c.c_str(), buf, sizeof buf);
            if (n <= 0 || n >= static_cast<ssize_t>(sizeof buf)) {
                missing = true;
                continue;
            }
            names.pop_back();
            const std::string_view target(buf, static_cast<std::size_t>(n));
            if (target.front() == '/') {
                names.clear();
                folders.clear();
            }
            push_front(todo, target);
        } else if (S_ISDIR(st.st_mode)) {
            Fd folder(::openat(at, c.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (folder.ok()) folders.push_back(std::move(folder));
            else missing = true;
        } else {
            // A socket or file: the end of the walk, where whatever follows is the kernel's ENOTDIR.
            socket = S_ISSOCK(st.st_mode) && todo.empty();
            if (!todo.empty()) missing = true;
        }
    }
    Resolved out;
    for (const auto& n : names) out.path += "/" + n;
    if (out.path.empty()) out.path = "/";
    out.exists = !missing;
    out.socket = !missing && socket;
    return out;
}

// A connect waiting on a thread of its own.
struct ConnectBroker::Waiter {
    std::thread thread;
    std::atomic<bool> done{false};
};

ConnectBroker::ConnectBroker(Fd listener, Fd wake, Fd own, sbx::net::UnixSocketRules rules, BrokerNetwork network,
                             OnRefusal on_refusal)
    : listener_(std::move(listener)),
      wake_(std::move(wake)),
      own_(std::move(own)),
      rules_(std::move(rules)),
      network_(std::move(network)),
      on_refusal_(std::move(on_refusal)) {}

sbx::expected<std::unique_ptr<ConnectBroker>> ConnectBroker::make(Fd listener, sbx::net::UnixSocketRules rules,
                                                                  BrokerNetwork network, OnRefusal on_refusal, Fd own) {
    Fd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!wake.ok())
        return sbx::fail(Errc::sandbox_unavailable, std::string("the connect broker's eventfd: ") + std::strerror(errno));
    if (!rules.own.empty() && !own.ok()) {
        own = Fd(::open(rules.own.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!own.ok())
            return sbx::fail(Errc::sandbox_unavailable,
                             "the connect broker cannot open the temporary folder " + rules.own + ": " +
                                 std::strerror(errno));
    }
    struct sigaction sa {};
    sa.sa_handler = on_wake;
    sigemptyset(&sa.sa_mask);
    if (::sigaction(wake_signal(), &sa, nullptr) != 0)
        return sbx::fail(Errc::sandbox_unavailable, std::string("the connect broker's signal: ") + std::strerror(errno));
    return std::unique_ptr<ConnectBroker>(new ConnectBroker(std::move(listener), std::move(wake), std::move(own),
                                                            std::move(rules), std::move(network), std::move(on_refusal)));
}

sbx::expected<std::unique_ptr<ConnectBroker>> ConnectBroker::attach(Fd listener, sbx::net::UnixSocketRules rules,
                                                                    BrokerNetwork network, OnRefusal on_refusal) {
    return make(std::move(listener), std::move(rules), std::move(network), std::move(on_refusal), Fd());
}

sbx::expected<std::unique_ptr<ConnectBroker>> ConnectBroker::start(Fd listener, sbx::net::UnixSocketRules rules,
                                                                   BrokerNetwork network, OnRefusal on_refusal, Fd own) {
    auto made = make(std::move(listener), std::move(rules), std::move(network), std::move(on_refusal), std::move(own));
    SBX_TRY(made);
    std::unique_ptr<ConnectBroker> b = std::move(*made);
    auto thread = quiet_thread([p = b.get()] { p->serve(); }, "the connect broker's thread");
    SBX_TRY(thread);
    b->thread_ = std::move(*thread);
    return b;
}

ConnectBroker::~ConnectBroker() { stop(); }

void ConnectBroker::stop() {
    if (thread_.joinable()) {
        const std::uint64_t one = 1;
        (void)!::write(wake_.get(), &one, sizeof one);
        thread_.join();
    }
    reap_waiters(true);
    listener_.reset();
}

std::vector<SocketRefusal> ConnectBroker::refused() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<SocketRefusal> out;
    for (const auto& r : refusals_)
        if (!r.local || !reached_.contains(static_cast<std::uint16_t>(r.port))) out.push_back(r);
    return out;
}

void ConnectBroker::reached_loopback(std::uint16_t port) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (looked_.contains(port) && reached_.size() < kMaxPortsLooked) reached_.insert(port);
}

void ConnectBroker::refuse(SocketRefusal r) {
    if (on_refusal_) on_refusal_(r);
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& seen : refusals_)
        if (seen.path == r.path && seen.named == r.named && seen.host == r.host && seen.port == r.port &&
            seen.program == r.program) {
            ++seen.times;
            return;
        }
    if (refusals_.size() < kMaxRefusals) refusals_.push_back(std::move(r));
    else ++refusals_.back().times;
}

// Joins the waiters that are done; with `all`, ends the others first.
void ConnectBroker::reap_waiters(bool all) {
    std::list<std::unique_ptr<Waiter>> ended;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        for (auto it = waiters_.begin(); it != waiters_.end();) {
            if (all || (*it)->done.load()) {
                ended.push_back(std::move(*it));
                it = waiters_.erase(it);
            } else {
                ++it;
            }
        }
    }
    for (auto& w : ended) {
        // The signal finds it in connect(), or before it: then again.
        while (!w->done.load()) {
            ::pthread_kill(w->thread.native_handle(), wake_signal());
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        w->thread.join();
    }
}

void ConnectBroker::serve() {
    serve_notifications(listener_.get(), wake_.get(), [this](const seccomp_notif& n) { answer(n); });
}

// One call from the notification to its answer, in the order the header
// gives, each step failing the call where it cannot be made.
void ConnectBroker::answer(const seccomp_notif& n) {
    reap_waiters(false);
    const int listener = listener_.get();
    if (n.data.nr != SYS_connect || n.data.arch != launcher::kNativeAuditArch) return respond(listener, n.id, -ENOSYS);
    const auto tid = static_cast<pid_t>(n.pid);
    const int fd = static_cast<int>(static_cast<std::uint32_t>(n.data.args[0]));
    const auto length = static_cast<std::int32_t>(static_cast<std::uint32_t>(n.data.args[2]));
    if (length < 0 || static_cast<std::size_t>(length) > sizeof(sockaddr_storage)) return respond(listener, n.id, -EINVAL);
    auto address = read_memory(tid, n.data.args[1], static_cast<std::size_t>(length));
    auto [sock, taken] = take_descriptor(tid, fd);
    // Everything above was read of the caller, not of another thread under its number.
    if (!still_waiting(listener, n.id)) return;
    if (!address) return respond(listener, n.id, -EFAULT);
    if (!sock.ok()) return respond(listener, n.id, taken);
    int family = 0, type = 0;
    socklen_t family_len = sizeof family, type_len = sizeof type;
    if (::getsockopt(sock.get(), SOL_SOCKET, SO_DOMAIN, &family, &family_len) != 0 ||
        ::getsockopt(sock.get(), SOL_SOCKET, SO_TYPE, &type, &type_len) != 0)
        return respond(listener, n.id, -errno);
    const std::size_t path_at = offsetof(sockaddr_un, sun_path);
    sa_family_t asked = AF_UNSPEC;
    if (address->size() >= sizeof asked) std::memcpy(&asked, address->data(), sizeof asked);
    // Another family's address, an abstract name, or one the kernel refuses
    // by its shape: connected as read, in the sandbox's own network namespace.
    if (family != AF_UNIX || asked != AF_UNIX || address->size() <= path_at || (*address)[path_at] == '\0') {
        if (!network_.own_namespace && !other_allowed(family, type, *address, tid))
            return respond(listener, n.id, -EACCES);
        // A TCP connection to loopback or the unspecified address stays in the
        // sandbox's own namespace (reported, refused there, where the host has
        // the server: refused_on_loopback); to any other address it goes out.
        auto target = tcp_target(family, type, *address);
        const auto c = target ? sbx::net::classify(*target->address) : sbx::net::AddressClass::loopback;
        const bool inside = c == sbx::net::AddressClass::loopback || c == sbx::net::AddressClass::unspecified;
        if (target && !inside && network_.own_namespace)
            return connect_directly(n.id, std::move(sock), std::move(*target), program_of(tid), group_of(tid));
        LoopbackCall loopback;
        if (target && network_.own_namespace)
            loopback = LoopbackCall{target->host, target->port, program_of(tid), group_of(tid)};
        return connect_and_answer(n.id, std::move(sock), std::move(*address), Fd(), std::move(loopback));
    }
    const auto* text = reinterpret_cast<const char*>(address->data() + path_at);
    const std::string named(text, strnlen(text, address->size() - path_at));
    // The path as the caller's view of the file tree has it.
    const std::string proc = "/proc/" + std::to_string(tid);
    Fd root(::open((proc + "/root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    const std::string cwd = named.front() == '/' ? std::string("/") : read_link(proc + "/cwd");
    const std::string program = program_of(tid);
    const pid_t group = group_of(tid);
    if (!still_waiting(listener, n.id)) return;
    std::optional<Resolved> where;
    if (root.ok() && !cwd.empty() && cwd.front() == '/') where = resolve_in(root.get(), cwd, named);
    const auto d = sbx::net::decide_unix_socket(rules_, where ? where->path : std::string());
    if (d.verdict == sbx::net::UnixSocketVerdict::all) {
        // Every socket is open: the one the caller's view has there, as the kernel would find it.
        if (!where || !where->exists) return respond(listener, n.id, -ENOENT);
        if (!where->socket) return respond(listener, n.id, -ECONNREFUSED);
        open_how how{};
        how.flags = O_PATH | O_CLOEXEC;
        how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
        Fd there(static_cast<int>(::syscall(SYS_openat2, root.get(), where->path.c_str(), &how, sizeof how)));
        struct stat st {};
        if (!there.ok() || ::fstat(there.get(), &st) != 0 || !S_ISSOCK(st.st_mode))
            return respond(listener, n.id, -ECONNREFUSED);
        auto dial = address_of_descriptor(there.get());
        return connect_and_answer(n.id, std::move(sock), std::move(dial), std::move(there));
    }
    root.reset();
    if (d.verdict == sbx::net::UnixSocketVerdict::refused) {
        // Nothing to reach in the command's view (nscd's socket, which glibc
        // tries on every lookup, where nscd does not run): the kernel's answer.
        if (where && !where->exists) return respond(listener, n.id, -ENOENT);
        if (where && !where->socket) return respond(listener, n.id, -ECONNREFUSED);
        if (!d.quiet) refuse(SocketRefusal{where ? where->path : named, named, "", 0, program, d.why, 1, false, group});
        return respond(listener, n.id, -EACCES);
    }
    // The path the decision names, opened following no link: a listed one
    // from the root, the command's own beneath its temporary folder.
    const bool own = d.verdict == sbx::net::UnixSocketVerdict::own;
    auto [target, opened] = own ? open_exactly(own_.get(), d.dial.substr(rules_.own.size() + 1), true)
                                : open_exactly(AT_FDCWD, d.dial, false);
    if (!target.ok()) {
        if (opened == -ELOOP || opened == -EXDEV) {
            refuse(SocketRefusal{d.dial, named, "", 0, program, "a symbolic link now stands on the way to it", 1, false,
                                 group});
            return respond(listener, n.id, -EACCES);
        }
        return respond(listener, n.id, opened);
    }
    struct stat st {};
    if (::fstat(target.get(), &st) != 0 || !S_ISSOCK(st.st_mode)) return respond(listener, n.id, -ECONNREFUSED);
    auto dial = address_of_descriptor(target.get());
    connect_and_answer(n.id, std::move(sock), std::move(dial), std::move(target));
}

namespace {

// The address and port of an IPv4 or IPv6 socket address; false for another.
bool ip_of(const std::vector<unsigned char>& a, std::string& host, unsigned& port, bool& loopback) {
    sa_family_t family = AF_UNSPEC;
    if (a.size() >= sizeof family) std::memcpy(&family, a.data(), sizeof family);
    char text[INET6_ADDRSTRLEN] = {};
    if (family == AF_INET && a.size() >= sizeof(sockaddr_in)) {
        sockaddr_in in{};
        std::memcpy(&in, a.data(), sizeof in);
        port = ntohs(in.sin_port);
        loopback = (ntohl(in.sin_addr.s_addr) >> 24) == 127;
        host = ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text) != nullptr ? text : "?";
        return true;
    }
    if (family == AF_INET6 && a.size() >= sizeof(sockaddr_in6)) {
        sockaddr_in6 in6{};
        std::memcpy(&in6, a.data(), sizeof in6);
        port = ntohs(in6.sin6_port);
        loopback = IN6_IS_ADDR_LOOPBACK(&in6.sin6_addr);
        host = ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text) != nullptr ? text : "?";
        return true;
    }
    return false;
}

// Whether a TCP socket of this network namespace (the launcher's: the host's)
// listens on `port` on loopback or on every address, by /proc/net/tcp and
// tcp6, whose lines give the local address in hex, then the remote one, then
// the state (0A: listening).
bool host_listens(std::uint16_t port) {
    char want[8];
    std::snprintf(want, sizeof want, ":%04X", static_cast<unsigned>(port));
    for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
        std::FILE* f = std::fopen(table, "re");
        if (f == nullptr) continue;
        char line[512];
        bool found = false;
        while (!found && std::fgets(line, sizeof line, f) != nullptr) {
            char local[64] = {}, remote[64] = {}, state[8] = {};
            if (std::sscanf(line, " %*s %63s %63s %7s", local, remote, state) != 3 || std::strcmp(state, "0A") != 0)
                continue;
            const std::string_view l(local);
            const auto colon = l.find(':');
            if (colon == std::string_view::npos || l.substr(colon) != want) continue;
            const std::string_view addr = l.substr(0, colon);
            // In the kernel's byte order, word by word: 127.x.y.z ends in 7F;
            // ::1 is 00000000 00000000 00000000 01000000; ::ffff:127.x as v4.
            const bool any = addr.find_first_not_of('0') == std::string_view::npos;
            const bool v4_loopback = addr.size() == 8 && addr.substr(6) == "7F";
            const bool v6_loopback = addr == "00000000000000000000000001000000";
            const bool mapped = addr.size() == 32 && addr.substr(0, 24) == "0000000000000000FFFF0000" &&
                                (addr.substr(30) == "7F" || addr.substr(24) == "00000000");
            found = any || v4_loopback || v6_loopback || mapped;
        }
        std::fclose(f);
        if (found) return true;
    }
    return false;
}

}  // namespace

// A refused connection to the sandbox's own loopback where the host has a
// server on that port: what the command most likely meant to reach, and
// cannot without a setting. Where nothing listens outside either (a client
// that waits for its own server to start) nothing is said, nor where a later
// connection reaches the port (refused(): the command's own server was not
// up yet).
void ConnectBroker::refused_on_loopback(const LoopbackCall& call) {
    if (call.port == 0) return;
    const auto now = std::chrono::steady_clock::now();
    bool listens = false;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        const auto it = looked_.find(call.port);
        if (it != looked_.end() && (it->second.listens || now - it->second.at < std::chrono::seconds(1))) {
            listens = it->second.listens;
        } else {
            if (it == looked_.end() && looked_.size() >= kMaxPortsLooked) return;
            listens = host_listens(call.port);
            looked_.insert_or_assign(call.port, Looked{listens, now});
        }
    }
    if (!listens) return;
    SocketRefusal r{"", "", call.host, call.port, call.program,
                    "the sandbox's loopback is its own: nothing listens on this port inside, and the host's server on "
                    "it is reached only through an allowed entry",
                    1, true, call.group};
    refuse(std::move(r));
}

// A TCP connection of the command's to an IPv4 or IPv6 address: its target,
// with the address.
std::optional<sbx::net::HostTarget> ConnectBroker::tcp_target(int family, int type,
                                                              const std::vector<unsigned char>& address) {
    if ((family != AF_INET && family != AF_INET6) || type != SOCK_STREAM) return std::nullopt;
    std::string host;
    unsigned port = 0;
    bool loopback = false;
    if (!ip_of(address, host, port, loopback)) return std::nullopt;
    auto t = sbx::net::canonical_target(host, static_cast<std::uint16_t>(port));
    if (!t || !t->address) return std::nullopt;
    return std::move(*t);
}

// On the host's network (the weaker sandbox): what the Landlock domain lets
// through, a TCP stream to one of the proxy's ports on loopback, and a
// disconnect (AF_UNSPEC); any other IP connection is refused and reported, as
// is an abstract Unix name (the host's, here). Other families go on.
bool ConnectBroker::other_allowed(int family, int type, const std::vector<unsigned char>& address, pid_t tid) {
    sa_family_t asked = AF_UNSPEC;
    if (address.size() >= sizeof asked) std::memcpy(&asked, address.data(), sizeof asked);
    if (family == AF_UNIX) {
        if (asked != AF_UNIX || address.size() <= offsetof(sockaddr_un, sun_path)) return true;  // the kernel's EINVAL
        if (rules_.all) return true;  // allowAllUnixSockets: the host's abstract names too
        const auto* name = reinterpret_cast<const char*>(address.data() + offsetof(sockaddr_un, sun_path) + 1);
        const std::size_t n = address.size() - offsetof(sockaddr_un, sun_path) - 1;
        refuse(SocketRefusal{"", "@" + std::string(name, strnlen(name, n)), "", 0, program_of(tid),
                             "an abstract Unix socket is the host's: the weaker sandbox has no network namespace of "
                             "its own", 1, false, group_of(tid)});
        return false;
    }
    if (family != AF_INET && family != AF_INET6) return true;
    if (asked == AF_UNSPEC) return true;
    std::string host;
    unsigned port = 0;
    bool loopback = false;
    if (!ip_of(address, host, port, loopback)) return true;  // the kernel refuses its shape
    const bool proxy = type == SOCK_STREAM && loopback &&
                       std::find(network_.tcp_ports.begin(), network_.tcp_ports.end(), port) != network_.tcp_ports.end();
    if (proxy) return true;
    refuse(SocketRefusal{"", "", host, port, program_of(tid),
                         "a connection of its own, past the proxy: the weaker sandbox lets the command reach the "
                         "network only through the proxy (HTTP_PROXY, ALL_PROXY)", 1, false, group_of(tid)});
    return false;
}

template <class Job>
void ConnectBroker::on_own_thread(std::uint64_t id, Job job) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (waiters_.size() >= kMaxWaiters) return respond(listener_.get(), id, -EAGAIN);
    auto w = std::make_unique<Waiter>();
    Waiter* self = w.get();
    try {
        w->thread = std::thread([self, job = std::move(job)]() mutable {
            sigset_t wake;
            sigemptyset(&wake);
            sigaddset(&wake, wake_signal());
            ::pthread_sigmask(SIG_UNBLOCK, &wake, nullptr);
            job();
            self->done.store(true);
        });
    } catch (const std::system_error&) {
        return respond(listener_.get(), id, -EAGAIN);
    }
    waiters_.push_back(std::move(w));
}

// Connects `sock` (the caller's socket) to `address` and answers the call:
// here where it cannot wait, else on a thread of its own. `target`: the
// descriptor a /proc/self/fd address names, kept open until connect() has
// followed it.
void ConnectBroker::connect_and_answer(std::uint64_t id, Fd sock, std::vector<unsigned char> address, Fd target,
                                       LoopbackCall loopback) {
    const int listener = listener_.get();
    const int flags = ::fcntl(sock.get(), F_GETFL);
    auto connect_now = [this, listener, id, loopback = std::move(loopback)](int fd, const std::vector<unsigned char>& a) {
        const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(a.data()), static_cast<socklen_t>(a.size()));
        const int result = rc == 0 ? 0 : -errno;
        respond(listener, id, result);
        if (result == -ECONNREFUSED) refused_on_loopback(loopback);
        if ((result == 0 || result == -EINPROGRESS) && loopback.port != 0) reached_loopback(loopback.port);
    };
    if (flags < 0 || (flags & O_NONBLOCK) != 0) return connect_now(sock.get(), address);
    on_own_thread(id, [connect_now, fd = std::move(sock), a = std::move(address), t = std::move(target)]() mutable {
        connect_now(fd.get(), a);
        fd.reset();
        t.reset();
    });
}

// The command's own TCP connection to an address outside (bubblewrap's
// sandbox, whose namespace has nothing but loopback): decided by the proxy,
// asked about where the rules say so (on a thread of its own, as that may
// take a while); let through, the socket is bound to loopback and connected
// to the proxy's direct listener, which dials the address and relays. The
// command then sees that listener as its peer (getpeername).
void ConnectBroker::connect_directly(std::uint64_t id, Fd sock, sbx::net::HostTarget target, std::string program,
                                     pid_t group) {
    const int listener = listener_.get();
    on_own_thread(id, [this, listener, id, fd = std::move(sock), target = std::move(target),
                       program = std::move(program), group]() mutable {
        if (!network_.admit || network_.direct_port == 0) {
            refuse(SocketRefusal{"", "", target.host, target.port, program,
                                 "a connection of its own, past the proxy, where the sandbox has no network", 1, false,
                                 group});
            return respond(listener, id, -ENETUNREACH);
        }
        if (!network_.admit(target, program, group)) return respond(listener, id, -EACCES);
        sockaddr_storage local{};
        socklen_t size = sizeof local;
        if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &size) != 0) return respond(listener, id, -errno);
        const bool v6 = local.ss_family == AF_INET6;
        sockaddr_storage loopback{};
        socklen_t length = 0;
        auto at = [&](std::uint16_t port) {
            std::memset(&loopback, 0, sizeof loopback);
            if (v6) {
                auto* in6 = reinterpret_cast<sockaddr_in6*>(&loopback);
                in6->sin6_family = AF_INET6;
                in6->sin6_port = htons(port);
                in6->sin6_addr.s6_addr[10] = 0xff;  // ::ffff:127.0.0.1, where the listener is
                in6->sin6_addr.s6_addr[11] = 0xff;
                in6->sin6_addr.s6_addr[12] = 127;
                in6->sin6_addr.s6_addr[15] = 1;
                length = sizeof(sockaddr_in6);
            } else {
                auto* in = reinterpret_cast<sockaddr_in*>(&loopback);
                in->sin_family = AF_INET;
                in->sin_port = htons(port);
                in->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
                length = sizeof(sockaddr_in);
            }
        };
        std::uint16_t port = launcher::port_of(local);
        if (port == 0) {
            at(0);
            size = sizeof local;
            if (::bind(fd.get(), reinterpret_cast<const sockaddr*>(&loopback), length) != 0 ||
                ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &size) != 0)
                return respond(listener, id, -errno);
            port = launcher::port_of(local);
        }
        if (!network_.expect(port, target)) return respond(listener, id, -EAGAIN);
        at(network_.direct_port);
        const int result = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&loopback), length) == 0 ? 0 : -errno;
        if (result != 0 && result != -EINPROGRESS) network_.forget(port);
        respond(listener, id, result);
    });
}

}  // namespace sbx::linux_sandbox
