#include "stage/stage.hpp"

#include "base/fd_io.hpp"
#include "base/trace.hpp"
#include "sbx/linux/mount_flags.hpp"
#include "sbx/net/proxy_env.hpp"
#include "stage/landlock.hpp"
#include "stage/mounts.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <vector>

namespace sbx::linux_sandbox {

// fd_io.hpp's, shared with the launchers.
using sbx::launcher::Fd;
using sbx::launcher::FdSweep;
using sbx::launcher::parse_fd;
using sbx::launcher::send_fds;
using sbx::launcher::sweep_fds;
using sbx::launcher::write_all;

namespace {

int stage_failed(int status_fd, const std::string& message) {
    write_all(status_fd, "F", 1);
    write_all(status_fd, message.data(), message.size());
    return 125;
}

}  // namespace

namespace {

// The first sbx-stage beside this program (or in launchers/ beside tools/) that
// is an executable regular file, open, with its path in `path`; none when none is.
Fd open_stage_beside(std::string* path) {
    char self[4096];
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) {
        // /proc/self/exe is absolute: its directory is what comes before the last
        // '/'. Beside this program, where both are installed, or, for `sbx` in a
        // build tree, in launchers/ beside tools/.
        const std::string exe(self, static_cast<std::size_t>(n));
        const std::string dir = exe.substr(0, exe.rfind('/'));
        for (const std::string& stage : {dir + "/sbx-stage", dir + "/../launchers/sbx-stage"}) {
            Fd fd(::open(stage.c_str(), O_RDONLY | O_CLOEXEC));
            struct stat st {};
            if (fd.ok() && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & S_IXUSR) != 0) {
                if (path != nullptr) *path = stage;
                return fd;
            }
        }
    }
    return Fd();
}

}  // namespace

Fd open_stage_binary() {
    Fd fd = open_stage_beside(nullptr);
    return fd.ok() ? std::move(fd) : Fd(::open("/proc/self/exe", O_RDONLY | O_CLOEXEC));
}

std::string stage_binary_path() {
    std::string path;
    (void)open_stage_beside(&path);
    return path;
}

std::vector<std::string> stage_argv(const StageArgs& a) {
    std::vector<std::string> out{"/proc/self/fd/" + std::to_string(a.exe_fd), std::string(kStageFlag),
                                 "--exe-fd", std::to_string(a.exe_fd), "--status-fd", std::to_string(a.status_fd),
                                 "--proxy-fd", std::to_string(a.proxy_fd), "--filtered", a.filtered ? "1" : "0"};
    if (a.pty_fd >= 0) {
        std::string on;
        for (int fd = 0; fd < 3; ++fd)
            if (a.pty_on[fd]) on += static_cast<char>('0' + fd);
        out.insert(out.end(), {"--pty-fd", std::to_string(a.pty_fd), "--pty-on", on});
    }
    if (a.trace_fd >= 0) out.insert(out.end(), {"--trace-fd", std::to_string(a.trace_fd)});
    if (a.connect_fd >= 0) out.insert(out.end(), {"--connect-fd", std::to_string(a.connect_fd)});
    if (!a.own_dir.empty()) out.insert(out.end(), {"--own-dir", a.own_dir});
    if (a.mounts_filter_fd >= 0) {
        out.insert(out.end(), {"--mounts-filter-fd", std::to_string(a.mounts_filter_fd), "--cwd", a.cwd, "--uid",
                               std::to_string(a.uid), "--gid", std::to_string(a.gid)});
        for (std::size_t i = 0; i < a.mounts.size();) {
            const std::size_t arity = mount_flag_arity(a.mounts[i]);
            if (arity == 0) break;  // bwrap.hpp's list has only these
            out.emplace_back("--mount");
            for (std::size_t k = 0; k <= arity && i < a.mounts.size(); ++k) out.push_back(a.mounts[i++]);
        }
    }
    for (int fd : a.keep_fds) out.insert(out.end(), {"--keep-fd", std::to_string(fd)});
    for (const auto& [name, value] : a.rlimits) out.insert(out.end(), {"--rlimit", name + "=" + std::to_string(value)});
    if (a.pid_max != 0) out.insert(out.end(), {"--pid-max", std::to_string(a.pid_max)});
    for (const auto& f : a.forwards) out.insert(out.end(), {"--forward", f.address, std::to_string(f.port), f.entry});
    if (a.direct_loopback) out.emplace_back("--direct-loopback");
    for (const auto& kv : a.loader_env) out.insert(out.end(), {"--loader-env", kv});
    for (const auto& p : a.write_wall) out.insert(out.end(), {"--write-wall", p});
    if (a.weaker) {
        out.insert(out.end(), {"--weaker", "--filter-fd", std::to_string(a.filter_fd)});
        if (a.broker_filter_fd >= 0)
            out.insert(out.end(), {"--broker-filter-fd", std::to_string(a.broker_filter_fd), "--broker-fd",
                                   std::to_string(a.broker_fd)});
        if (a.broker_connects) out.emplace_back("--broker-connects");
        for (const auto& g : a.grants) out.insert(out.end(), {"--grant", g});
        for (int port : a.connect_ports) out.insert(out.end(), {"--connect-port", std::to_string(port)});
    }
    out.emplace_back("--");
    out.insert(out.end(), a.command.begin(), a.command.end());
    return out;
}

std::vector<std::string> stage_waiting_argv(const StageArgs& a) {
    std::vector<std::string> out{"/proc/self/fd/" + std::to_string(a.exe_fd), std::string(kStageFlag),
                                 "--exe-fd", std::to_string(a.exe_fd), "--status-fd", std::to_string(a.status_fd),
                                 "--orders-fd", std::to_string(a.orders_fd)};
    if (a.trace_fd >= 0) out.insert(out.end(), {"--trace-fd", std::to_string(a.trace_fd)});
    return out;
}

std::string stage_orders(const StageArgs& a) {
    auto words = stage_argv(a);
    words.erase(words.begin(), words.begin() + 2);  // the binary and kStageFlag
    // The environment before the command's "--".
    const auto dashes = std::find(words.begin(), words.end(), "--");
    std::vector<std::string> env;
    for (const auto& kv : a.env) env.insert(env.end(), {"--env", kv});
    words.insert(dashes, env.begin(), env.end());
    std::string out;
    for (const auto& w : words) {
        out += w;
        out += '\0';
    }
    return out;
}

namespace {

// The resource of an --rlimit name; -1 for any other.
int rlimit_resource(std::string_view name) {
    if (name == "nproc") return RLIMIT_NPROC;
    if (name == "cpu") return RLIMIT_CPU;
    if (name == "fsize") return RLIMIT_FSIZE;
    if (name == "data") return RLIMIT_DATA;
    return -1;
}

// The plan's per-process limits, each no higher than it is already (a hard
// limit cannot be raised without a capability, and none is asked for). CPU
// time gets a hard limit two seconds above the soft one: SIGXCPU first, which a
// process may catch to end cleanly, then SIGKILL.
std::string set_rlimits(const StageArgs& a) {
    for (const auto& [name, value] : a.rlimits) {
        const int resource = rlimit_resource(name);
        rlimit now{};
        if (::getrlimit(resource, &now) != 0) return "getrlimit " + name + ": " + std::strerror(errno);
        const rlim_t want = static_cast<rlim_t>(value);
        rlimit set{std::min(want, now.rlim_max),
                   std::min(resource == RLIMIT_CPU ? want + 2 : want, now.rlim_max)};
        if (::setrlimit(resource, &set) != 0)
            return "cannot limit " + name + " to " + std::to_string(value) + ": " + std::strerror(errno);
    }
    return {};
}

// parse_stage_args for the whole command line (`orders`: what came on the
// orders, where every argument has to be).
// The option `a` with its value `v`, into `out`: false for an option this
// does not know (or, with `orders`, one the orders cannot carry) or a bad value.
bool take_valued(std::string_view a, const char* v, StageArgs& out, bool orders) {
    if (a == "--filter-fd" && parse_fd(v, out.filter_fd, 3)) return true;
    if (a == "--broker-filter-fd" && parse_fd(v, out.broker_filter_fd, 3)) return true;
    if (a == "--broker-fd" && parse_fd(v, out.broker_fd, 3)) return true;
    if (a == "--grant" && std::string_view("rlwdt").find(v[0]) != std::string_view::npos && v[1] == ':' &&
        v[2] == '/') {
        out.grants.emplace_back(v);
        return true;
    }
    int port = 0;
    if (a == "--connect-port" && parse_fd(v, port, 1) && port <= 65535) {
        out.connect_ports.push_back(port);
        return true;
    }
    if (a == "--exe-fd" && parse_fd(v, out.exe_fd)) return true;
    if (a == "--status-fd" && parse_fd(v, out.status_fd)) return true;
    if (a == "--proxy-fd" && parse_fd(v, out.proxy_fd, -1)) return true;
    if (a == "--pty-fd" && parse_fd(v, out.pty_fd)) return true;
    if (a == "--connect-fd" && parse_fd(v, out.connect_fd, 3)) return true;
    if (a == "--trace-fd" && parse_fd(v, out.trace_fd, 3)) return true;
    if (a == "--mounts-filter-fd" && parse_fd(v, out.mounts_filter_fd, 3)) return true;
    if (a == "--orders-fd" && !orders && parse_fd(v, out.orders_fd, 3)) return true;
    int id = -1;
    if ((a == "--uid" || a == "--gid") && parse_fd(v, id, 0)) {
        (a == "--uid" ? out.uid : out.gid) = static_cast<unsigned>(id);
        return true;
    }
    if (a == "--cwd" && *v == '/') {
        out.cwd = v;
        return true;
    }
    if (a == "--own-dir" && *v == '/') {
        out.own_dir = v;
        return true;
    }
    if (a == "--pty-on" && *v != '\0' && std::strspn(v, "012") == std::strlen(v)) {
        for (const char* c = v; *c != '\0'; ++c) out.pty_on[static_cast<std::size_t>(*c - '0')] = true;
        return true;
    }
    if (a == "--filtered" && (v == std::string_view("0") || v == std::string_view("1"))) {
        out.filtered = *v == '1';
        return true;
    }
    int keep = -1;
    if (a == "--keep-fd" && parse_fd(v, keep, 3)) {
        out.keep_fds.push_back(keep);
        return true;
    }
    if (a == "--loader-env" && std::strchr(v, '=') != nullptr && *v != '=') {
        out.loader_env.emplace_back(v);
        return true;
    }
    if (a == "--rlimit" || a == "--pid-max") {
        // A whole number; --rlimit's after one of the names run_ordered sets.
        std::string_view text(v);
        std::string name;
        if (a == "--rlimit") {
            const auto eq = text.find('=');
            if (eq == std::string_view::npos) return false;
            name = std::string(text.substr(0, eq));
            if (rlimit_resource(name) < 0) return false;
            text.remove_prefix(eq + 1);
        }
        std::uint64_t n = 0;
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
        if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || n == 0) return false;
        if (a == "--pid-max") {
            out.pid_max = n;
        } else {
            out.rlimits.emplace_back(std::move(name), n);
        }
        return true;
    }
    if (a == "--write-wall" && *v == '/') {
        out.write_wall.emplace_back(v);
        return true;
    }
    if (a == "--env" && orders && std::strchr(v, '=') != nullptr && *v != '=') {
        out.env.emplace_back(v);
        return true;
    }
    return false;
}

// Whether the options read make a whole stage: each part with what it needs.
bool whole(const StageArgs& out) {
    // A mount list comes with the filter that follows it and the directory to enter again.
    if ((!out.mounts.empty() || !out.cwd.empty()) && out.mounts_filter_fd < 0) return false;
    if (out.mounts_filter_fd >= 0 && out.cwd.empty()) return false;
    // The weaker sandbox comes with its filter, and without mounts or a write wall.
    if (out.weaker != (out.filter_fd >= 0)) return false;
    if (out.weaker && (out.mounts_filter_fd >= 0 || !out.write_wall.empty())) return false;
    // The broker's filter comes with the weaker sandbox, and with its socket.
    if ((out.broker_filter_fd >= 0) != (out.broker_fd >= 0) || (out.broker_fd >= 0 && !out.weaker)) return false;
    // connect() goes to one listener: the file broker's, or the connect broker's own.
    if (out.broker_connects && (out.broker_filter_fd < 0 || out.connect_fd >= 0)) return false;
    // The TMPDIR goes to the connect broker, with its listener.
    if (!out.own_dir.empty() && out.connect_fd < 0) return false;
    return !out.command.empty() && out.status_fd >= 0 && out.exe_fd >= 0;
}

bool parse_stage_words(int argc, char** argv, StageArgs& out, bool orders) {
    int i = 0;
    for (; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--") break;
        if (a == "--mount") {
            const std::size_t arity = i + 1 < argc ? mount_flag_arity(argv[i + 1]) : 0;
            if (arity == 0 || i + 1 + static_cast<int>(arity) >= argc) return false;
            for (std::size_t k = 0; k <= arity; ++k) out.mounts.emplace_back(argv[i + 1 + static_cast<int>(k)]);
            i += 1 + static_cast<int>(arity);
            continue;
        }
        if (a == "--forward") {
            StageForward f;
            if (i + 3 >= argc || !parse_fd(argv[i + 2], f.port, 1) || f.port > 65535) return false;
            f.address = argv[i + 1];
            f.entry = argv[i + 3];
            out.forwards.push_back(std::move(f));
            i += 3;
            continue;
        }
        if (a == "--weaker") {
            out.weaker = true;
            continue;
        }
        if (a == "--direct-loopback") {
            out.direct_loopback = true;
            continue;
        }
        if (a == "--broker-connects") {
            out.broker_connects = true;
            continue;
        }
        if (i + 1 >= argc || !take_valued(a, argv[i + 1], out, orders)) return false;
        ++i;
    }
    // Started to wait for its orders: nothing else yet.
    if (!orders && out.orders_fd >= 0) return i == argc && out.status_fd >= 0 && out.exe_fd >= 0;
    if (i == argc) return false;
    for (++i; i < argc; ++i) out.command.emplace_back(argv[i]);
    return whole(out);
}

}  // namespace

bool parse_stage_args(int argc, char** argv, StageArgs& out) { return parse_stage_words(argc, argv, out, false); }

std::string read_stage_orders(int fd, StageArgs& out, bool& gave_up) {
    // Far above any plan's (a thousand hidden paths make some 200 KiB).
    constexpr std::size_t kMaxOrdersBytes = std::size_t{16} << 20;
    std::string text;
    char buf[16384];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof buf)) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 || text.size() + static_cast<std::size_t>(n) > kMaxOrdersBytes) {
            const int err = n < 0 ? errno : EFBIG;
            ::close(fd);
            return std::string("cannot read the stage's orders: ") + std::strerror(err);
        }
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    gave_up = text.empty();
    if (gave_up) return {};
    if (text.back() != '\0') return "the stage's orders are cut short";
    std::vector<char*> words;
    for (std::size_t at = 0; at < text.size(); at = text.find('\0', at) + 1) words.push_back(text.data() + at);
    StageArgs given = out;
    StageArgs read;
    if (!parse_stage_words(static_cast<int>(words.size()), words.data(), read, true)) return "the stage's orders are malformed";
    if (read.exe_fd != given.exe_fd || read.status_fd != given.status_fd || read.trace_fd != given.trace_fd)
        return "the stage's orders name other descriptors than its command line";
    read.orders_fd = given.orders_fd;
    out = std::move(read);
    return {};
}

namespace {

// The listening sockets made so far, closed when the stage is done with them.
struct Listeners {
    std::vector<Fd> fds;
    // Their numbers, in order, for send_fds.
    std::vector<int> numbers() const {
        std::vector<int> out;
        for (const Fd& fd : fds) out.push_back(fd.get());
        return out;
    }
};

// A listening TCP socket on `address`:`port` (0: any free one) of the sandbox's
// loopback, added to `out`; its port, or -1 with errno.
int listen_on(Listeners& out, const std::string& address, int port) {
    sockaddr_storage ss{};
    socklen_t len = 0;
    if (auto* in = reinterpret_cast<sockaddr_in*>(&ss); ::inet_pton(AF_INET, address.c_str(), &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons(static_cast<std::uint16_t>(port));
        len = sizeof(sockaddr_in);
    } else if (auto* in6 = reinterpret_cast<sockaddr_in6*>(&ss); ::inet_pton(AF_INET6, address.c_str(), &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons(static_cast<std::uint16_t>(port));
        len = sizeof(sockaddr_in6);
    } else {
        errno = EINVAL;
        return -1;
    }
    const int fd = out.fds.emplace_back(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)).get();
    if (fd < 0) return -1;
    const int one = 1;
    if (ss.ss_family == AF_INET6 && ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one) != 0) return -1;
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&ss), len) != 0 || ::listen(fd, 512) != 0) return -1;
    len = sizeof ss;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return -1;
    return sbx::launcher::port_of(ss);
}

// The forwards' listening sockets, then the proxy's two, on the sandbox's own
// loopback, handed to the launcher in that order; its proxy serves them, and
// the command gets the proxy's ports. Only processes in this network namespace
// can connect to them. The forwards go first, so that the proxy's ephemeral
// ports cannot take theirs. The caller closes proxy_fd.
std::string hand_over_listeners(int proxy_fd, const std::vector<StageForward>& forwards, bool direct_loopback) {
    Listeners made;
    for (const auto& f : forwards)
        if (listen_on(made, f.address, f.port) < 0) {
            const int err = errno;
            const std::string where = f.address.find(':') != std::string::npos ? "[" + f.address + "]" : f.address;
            return "cannot listen on " + where + ":" + std::to_string(f.port) + " inside the sandbox for the forward of " +
                   f.entry + ": " + std::strerror(err) +
                   (err == EADDRNOTAVAIL ? " (the sandbox's loopback has no such address)" : "");
        }
    // The direct listener (the connect broker's way out for the command's own
    // connections to an address), then the proxy's two.
    int ports[3] = {0, 0, 0};
    for (int& port : ports)
        if ((port = listen_on(made, "127.0.0.1", 0)) < 0)
            return std::string("cannot listen on the sandbox's loopback: ") + std::strerror(errno);
    if (!send_fds(proxy_fd, made.numbers(), 'L'))
        return std::string("cannot hand the proxy's sockets to the launcher: ") + std::strerror(errno);
    for (const auto& [name, value] : sbx::net::proxy_environment(ports[1], ports[2], {}, direct_loopback))
        if (::setenv(name.c_str(), value.c_str(), 1) != 0) return "cannot set " + name;
    return {};
}

// The command's terminal: a pseudo-terminal on the sandbox's own devpts (so
// that `tty` names it inside), whose master goes to the launcher over pty_fd.
// Once the launcher has given it the caller's window size and modes (it answers
// 'G'), this process leads a session of its own with the terminal as its
// controlling terminal, and the terminal stands in for `on` of 0-2. bubblewrap
// and its init were given /dev/null (or a pipe) there: nothing in the sandbox
// has the caller's terminal.
std::string make_terminal(int pty_fd, const std::array<bool, 3>& on) {
    auto failed = [](const char* what) {
        return std::string("cannot make the command's terminal (") + what + "): " + std::strerror(errno) +
               "; sbx run --no-pty gives it the caller's descriptors instead";
    };
    const int master = ::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (master < 0) return failed("/dev/ptmx");
    if (::unlockpt(master) != 0) {
        auto why = failed("unlockpt");  // before close() can change errno
        ::close(master);
        return why;
    }
    // Its other side, opened from the master itself: no path to look up.
    int slave = ::ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (slave < 0) {
        char name[64];
        if (::ptsname_r(master, name, sizeof name) == 0) slave = ::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC);
    }
    if (slave < 0) {
        auto why = failed("its other side");
        ::close(master);
        return why;
    }
    const int sent = send_fds(pty_fd, std::span<const int>(&master, 1), 'T') ? 0 : errno;
    ::close(master);
    char go = 0;
    ssize_t n = -1;
    if (sent == 0)
        while ((n = ::read(pty_fd, &go, 1)) < 0 && errno == EINTR) {
        }
    if (sent != 0 || n != 1 || go != 'G') {
        errno = sent != 0 ? sent : EPIPE;
        auto why = failed("the launcher did not take it");
        ::close(slave);
        return why;
    }
    if (::setsid() < 0 || ::ioctl(slave, TIOCSCTTY, 0) != 0) {
        auto why = failed("controlling terminal");
        ::close(slave);
        return why;
    }
    for (int fd = 0; fd < 3; ++fd)
        if (on[static_cast<std::size_t>(fd)] && ::dup2(slave, fd) < 0) {
            auto why = failed("dup2");
            ::close(slave);
            return why;
        }
    ::close(slave);
    return {};
}

// The Seccomp field of /proc/PID/status: 0 none, 1 strict, 2 filter; -1 unreadable.
int seccomp_mode(const char* status_path) {
    const int fd = ::open(status_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[4096];
    std::size_t len = 0;
    ssize_t n;
    while (len < sizeof buf - 1 && (n = ::read(fd, buf + len, sizeof buf - 1 - len)) != 0) {
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) break;
        len += static_cast<std::size_t>(n);
    }
    ::close(fd);
    buf[len] = '\0';
    const char* field = std::strstr(buf, "\nSeccomp:");
    if (field == nullptr) return -1;
    return std::atoi(field + std::strlen("\nSeccomp:"));
}

// Empty when this process and the sandbox's pid 1 (bubblewrap's init) both run
// under a seccomp filter, else why not. bubblewrap's init loads the filter just
// after it forks this process's parent, so it may be a moment late.
std::string check_filtered() {
    constexpr const char* kUnreadable = " is unreadable, so the seccomp filter cannot be checked (do the settings hide /proc?)";
    const int self = seccomp_mode("/proc/self/status");
    if (self < 0) return std::string("/proc/self/status") + kUnreadable;
    if (self != 2) return "the stage runs without the seccomp filter";
    for (int tries = 0; tries < 2000; ++tries) {
        const int pid1 = seccomp_mode("/proc/1/status");
        if (pid1 == 2) return {};
        if (pid1 < 0) return std::string("/proc/1/status") + kUnreadable;
        const timespec ms{0, 1'000'000};
        ::nanosleep(&ms, nullptr);
    }
    return "the sandbox's pid 1 (bubblewrap's init) runs without the seccomp filter";
}

// What the caller handed the command keeps working when reopened by name
// (/dev/stdout, /proc/self/fd/N), as far as `r` handles it: a file or device
// open for writing may be written again, one open for reading read again, and
// beneath a directory passed with --pass-fd whatever `r` handles is allowed.
// Pipes and sockets have no name, and Landlock leaves their reopening alone; a
// descriptor open only for reading gives no write.
void grant_handed(sbx::launcher::landlock::Ruleset& r, const StageArgs& a) {
    namespace ll = sbx::launcher::landlock;
    std::vector<int> streams{0, 1, 2};
    streams.insert(streams.end(), a.keep_fds.begin(), a.keep_fds.end());
    for (std::size_t i = 0; i < streams.size(); ++i) {
        const int fd = streams[i];
        struct stat st {};
        const int flags = ::fcntl(fd, F_GETFL);
        if (flags < 0 || ::fstat(fd, &st) != 0) continue;
        const std::string path = "/proc/self/fd/" + std::to_string(fd);
        const int mode = flags & O_ACCMODE;
        if (S_ISDIR(st.st_mode) && i >= 3) {
            r.paths.push_back({path, r.handled_fs});
        } else if (S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) {
            std::uint64_t access = mode != O_WRONLY ? ll::kReadFile : 0;
            if (mode != O_RDONLY) access |= ll::kWriteFile | ll::kTruncate;
            // A device it holds it may use reopened as it uses it held.
            if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)) access |= ll::kIoctlDev;
            r.paths.push_back({path, access});  // restrict_self keeps what `r` handles
        }
    }
}

// The Landlock wall (sbx/linux/write_wall.hpp): every change to the file tree
// refused outside the plan's writable places and what the caller handed the
// command. The launcher asks for it only where the kernel has ABI 2
// (cross-directory renames); once asked, it stands or the stage fails.
std::string raise_write_wall(const StageArgs& a) {
    namespace ll = sbx::launcher::landlock;
    const int abi = ll::abi();
    if (abi < 2) return "the kernel's Landlock (ABI " + std::to_string(abi) + ") cannot make the write wall it was asked for";
    ll::Ruleset r;
    r.handled_fs = ll::write_rights(abi);
    for (const auto& p : a.write_wall) r.paths.push_back({p, r.handled_fs});
    grant_handed(r, a);
    ll::Applied applied;
    return ll::restrict_self(r, applied);
}

// The weaker sandbox's Landlock domain: files by the grants, TCP connect() to
// the proxy's ports only and no TCP bind(), and, where the kernel has them
// (ABI 6), no abstract Unix socket and no signal outside the domain; what the
// caller handed the command as above, for reading too. The launcher asks for
// it only on ABI 4 or later.
std::string raise_weaker_domain(const StageArgs& a) {
    namespace ll = sbx::launcher::landlock;
    const int abi = ll::abi();
    if (abi < 4) return "the kernel's Landlock (ABI " + std::to_string(abi) + ") cannot make the weaker sandbox (ABI 4 or later)";
    ll::Ruleset r;
    const std::uint64_t write = ll::write_rights(abi);
    r.handled_fs = ll::kReadRights | write;
    // Device ioctls (ABI 5): a device opened inside takes none but where a
    // grant gives them (/dev/tty, the command's own terminal). Below ABI 5 the
    // filter refuses the ioctls that reach past a terminal (TIOCSTI,
    // TIOCLINUX, TIOCSETD), and the grants keep every other terminal closed.
    if (abi >= 5) r.handled_fs |= ll::kIoctlDev;
    r.handled_net = ll::kBindTcp | ll::kConnectTcp;
    if (abi >= 6) r.scoped = ll::kScopeAbstractUnix | ll::kScopeSignal;
    for (const auto& g : a.grants) {
        const std::uint64_t access = g[0] == 'r'   ? ll::kReadRights
                                     : g[0] == 'l' ? ll::kReadDir
                                     : g[0] == 'd' ? ll::kReadFile | ll::kWriteFile
                                     : g[0] == 't' ? ll::kReadFile | ll::kWriteFile | ll::kIoctlDev
                                                   : write;
        r.paths.push_back({g.substr(2), access, true});
    }
    for (int port : a.connect_ports) r.connect_ports.push_back(static_cast<std::uint16_t>(port));
    grant_handed(r, a);
    ll::Applied applied;
    return ll::restrict_self(r, applied);
}

// Sends the `listener` of a filter just loaded (-1: none) to the launcher on
// `sock` with `tag`, and `also` with it where it is one, and closes both;
// `why`, a failure to load that counts, is kept. Empty on success, else what
// failed.
std::string send_listener(int sock, int listener, char tag, std::string_view whose, std::string why, int also = -1) {
    const int fds[2] = {listener, also};
    if (why.empty() && listener >= 0 && !send_fds(sock, std::span<const int>(fds, also >= 0 ? 2 : 1), tag))
        why = "cannot hand " + std::string(whose) + " listener to the launcher: " + std::strerror(errno);
    if (listener >= 0) ::close(listener);
    ::close(sock);
    return why;
}

// The file broker's filter, whose listener goes to the launcher: from here on
// each call that could change the file tree waits for the broker's answer.
// Loaded before the whole filter, which takes precedence where it refuses.
// Where the kernel (or a filter around this one) refuses it, the socket closes
// with nothing on it, and the launcher says that Landlock decides alone (but
// where it carries connect(), broker_connects: then the stage fails); once
// loaded, the listener reaches the launcher or the stage fails.
std::string hand_over_listener(const StageArgs& a) {
    int listener = -1;
    std::string why = load_listener_program(a.broker_filter_fd, "the file broker's filter", listener);
    // Carrying connect(), it may not be missing: the command's connections would go undecided.
    if (!a.broker_connects) why.clear();
    return send_listener(a.broker_fd, listener, 'B', "the file broker's", std::move(why));
}

// The connect broker's filter, loaded last (its listener must be the newest
// filter's), whose listener goes to the launcher: from here on each connect()
// waits for the launcher's answer. Without it every connect() would fail
// (ENOSYS from the whole filter), so the stage fails instead. The TMPDIR
// goes with it, opened here, before anything of the command's has run.
std::string hand_over_connect_listener(const StageArgs& a) {
    Fd own;
    if (!a.own_dir.empty()) {
        own = Fd(::open(a.own_dir.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!own.ok()) return "cannot open the temporary folder " + a.own_dir + ": " + std::strerror(errno);
    }
    int listener = -1;
    std::string why = load_connect_listener(listener);
    return send_listener(a.connect_fd, listener, 'C', "the connect broker's", std::move(why), own.get());
}

// The rest of run_stage, with every argument known.
int run_ordered(const StageArgs& a, const sbx::launcher::Trace& trace, std::uint64_t started) {
    // First of all, with the capabilities bubblewrap left for it: the mounts,
    // then no capability and the mount family's filter.
    if (a.mounts_filter_fd >= 0) {
        const auto t = sbx::launcher::Trace::now();
        if (auto why = make_stage_mounts(a.mounts, a.mounts_filter_fd, a.cwd, a.uid, a.gid, a.pid_max); !why.empty())
            return stage_failed(a.status_fd, why);
        trace.step("stage.mounts", t);
    }
    if (a.proxy_fd >= 0) {
        const auto t = sbx::launcher::Trace::now();
        const std::string why = hand_over_listeners(a.proxy_fd, a.forwards, a.direct_loopback);
        ::close(a.proxy_fd);  // the launcher's end reads the end of the stream, or the sockets
        if (!why.empty()) return stage_failed(a.status_fd, why);
        trace.step("stage.listeners", t);
    }
    for (const auto& kv : a.loader_env) {
        const auto eq = kv.find('=');
        if (::setenv(kv.substr(0, eq).c_str(), kv.c_str() + eq + 1, 1) != 0)
            return stage_failed(a.status_fd, "cannot set " + kv.substr(0, eq) + ": " + std::strerror(errno));
    }
    if (a.filtered && !a.weaker) {
        const auto t = sbx::launcher::Trace::now();
        if (auto why = check_filtered(); !why.empty()) return stage_failed(a.status_fd, why);
        trace.step("stage.filter-check", t);
    }
    // With no namespace to end them by, the weaker sandbox's processes are a
    // session of their own, one group for the launcher to stop and kill, and
    // with no controlling terminal (a terminal of the command's own is made
    // theirs below): /dev/tty then never opens the caller's terminal, as
    // bubblewrap's --new-session has it.
    if (a.weaker && a.pty_fd < 0 && ::setsid() < 0)
        return stage_failed(a.status_fd, std::string("setsid: ") + std::strerror(errno));
    if (a.pty_fd >= 0) {
        const std::string why = make_terminal(a.pty_fd, a.pty_on);
        ::close(a.pty_fd);
        if (!why.empty()) return stage_failed(a.status_fd, why);
    }
    if (!a.write_wall.empty()) {
        const auto t = sbx::launcher::Trace::now();
        if (auto why = raise_write_wall(a); !why.empty()) return stage_failed(a.status_fd, why);
        trace.step("stage.landlock", t);
    }
    // The weaker sandbox: no capability, the Landlock domain, then the whole
    // filter (which refuses no Landlock call, but is loaded last all the same),
    // and a check that this process runs under it.
    if (a.weaker) {
        const auto t = sbx::launcher::Trace::now();
        if (auto why = drop_capabilities_for_good(); !why.empty()) return stage_failed(a.status_fd, why);
        if (auto why = raise_weaker_domain(a); !why.empty()) return stage_failed(a.status_fd, why);
        if (a.broker_filter_fd >= 0)
            if (auto why = hand_over_listener(a); !why.empty()) return stage_failed(a.status_fd, why);
        if (auto why = load_filter_program(a.filter_fd, "the seccomp filter"); !why.empty())
            return stage_failed(a.status_fd, why);
        if (seccomp_mode("/proc/self/status") != 2) return stage_failed(a.status_fd, "the stage runs without the seccomp filter");
        trace.step("stage.weaker", t);
    }
    if (a.connect_fd >= 0)
        if (auto why = hand_over_connect_listener(a); !why.empty()) return stage_failed(a.status_fd, why);
    if (auto why = set_rlimits(a); !why.empty()) return stage_failed(a.status_fd, why);
    // The command gets 0-2 and the descriptors the plan names; the status pipe
    // closes on exec.
    std::vector<int> keep = a.keep_fds;
    keep.push_back(a.status_fd);
    if (a.trace_fd >= 0) keep.push_back(a.trace_fd);
    if (!sweep_fds(keep, FdSweep::close))
        return stage_failed(a.status_fd, std::string("cannot close the descriptors the command is not given: ") +
                                             std::strerror(errno));
    // From here on, only a failed exec writes: a successful one closes the pipe.
    if (::fcntl(a.status_fd, F_SETFD, FD_CLOEXEC) != 0)
        return stage_failed(a.status_fd, std::string("fcntl: ") + std::strerror(errno));
    std::vector<char*> argv;
    for (const auto& s : a.command) argv.push_back(const_cast<char*>(s.c_str()));
    argv.push_back(nullptr);
    trace.step("stage", started);
    if (a.trace_fd >= 0) ::close(a.trace_fd);
    ::execvp(argv[0], argv.data());
    const int err = errno;
    write_all(a.status_fd, "E", 1);
    write_all(a.status_fd, &err, sizeof err);
    return err == ENOENT ? 127 : 126;
}

}  // namespace

int run_stage(const StageArgs& a) {
    const sbx::launcher::Trace trace(a.trace_fd);
    const auto started = sbx::launcher::Trace::now();
    write_all(a.status_fd, "S", 1);
    if (a.exe_fd >= 0) ::close(a.exe_fd);
    // Started before the launcher knew the rest: it comes now, once the
    // placeholders the mounts cover are made, with the command's environment.
    StageArgs ordered;
    if (a.orders_fd >= 0) {
        const auto t = sbx::launcher::Trace::now();
        ordered = a;
        bool gave_up = false;
        if (auto why = read_stage_orders(a.orders_fd, ordered, gave_up); !why.empty()) return stage_failed(a.status_fd, why);
        if (gave_up) return 125;  // the launcher ends this sandbox and says why
        ::clearenv();
        for (const auto& kv : ordered.env) {
            const auto eq = kv.find('=');
            if (::setenv(kv.substr(0, eq).c_str(), kv.c_str() + eq + 1, 1) != 0)
                return stage_failed(a.status_fd, "cannot set " + kv.substr(0, eq) + ": " + std::strerror(errno));
        }
        trace.step("stage.wait", t);
    }
    return run_ordered(a.orders_fd >= 0 ? ordered : a, trace, started);
}

StageReport parse_stage_report(std::string_view bytes) {
    StageReport r;
    if (bytes.empty() || bytes.front() != 'S') return r;
    r.started = true;
    bytes.remove_prefix(1);
    if (bytes.size() >= 1 + sizeof(int) && bytes.front() == 'E') {
        std::memcpy(&r.exec_errno, bytes.data() + 1, sizeof(int));
        if (r.exec_errno == 0) r.exec_errno = EIO;
    } else if (!bytes.empty() && bytes.front() == 'F') {
        r.failure = std::string(bytes.substr(1));
        if (r.failure.empty()) r.failure = "the stage failed";
    } else if (!bytes.empty()) {
        r.failure = "the stage wrote something unexpected on its status pipe";
    }
    return r;
}

}  // namespace sbx::linux_sandbox
