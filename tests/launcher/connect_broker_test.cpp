// The connect broker (launchers/linux/connect_broker.hpp) on the real kernel,
// without a sandbox: resolve_in over a tree of folders and links, and a child
// process under the broker's filter whose connects the broker answers: a
// listed socket reached, one beside it refused and reported, one in the own
// folder reached, another family connected as asked, and a connect that waits
// ended by stop().
#include "linux/connect_broker.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "base/connect_filter.hpp"
#include "base/fd_io.hpp"

namespace {

using sbx::launcher::Fd;
using sbx::linux_sandbox::resolve_in;

// A fresh folder under /tmp, removed with everything in it at the end.
struct Scratch {
    std::string path;
    Scratch() {
        char t[] = "/tmp/sbx-connect-test-XXXXXX";
        REQUIRE(::mkdtemp(t) != nullptr);
        path = t;
    }
    ~Scratch() { (void)!std::system(("rm -rf '" + path + "'").c_str()); }
};

void mkdirs(const std::string& p) { REQUIRE(std::system(("mkdir -p '" + p + "'").c_str()) == 0); }
void link_to(const std::string& target, const std::string& at) { REQUIRE(::symlink(target.c_str(), at.c_str()) == 0); }

// A socket listening at `path` with `backlog`.
Fd listen_at(const std::string& path, int backlog = 8) {
    Fd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd.get(), backlog) == 0);
    return fd;
}

// connect() to `path` on a new socket: 0 or errno.
int connect_to(const std::string& path, bool nonblocking = false) {
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | (nonblocking ? SOCK_NONBLOCK : 0), 0);
    if (fd < 0) return errno;
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    const int err = rc == 0 ? 0 : errno;
    ::close(fd);
    return err;
}

// Runs `body` in a child under the broker's filter, whose listener comes back
// here; the child writes what body returns (a line of numbers) to a pipe.
struct Child {
    pid_t pid = -1;
    Fd listener, out;
};

template <class Body>
Child start_child(Body body) {
    int pair[2], pipe_fds[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
    Child c;
    c.pid = ::fork();
    REQUIRE(c.pid >= 0);
    if (c.pid == 0) {
        auto filter = sbx::launcher::connect_filter();
        sock_fprog prog{static_cast<unsigned short>(filter.size()), filter.data()};
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(3);
        const long listener = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
        if (listener < 0) ::_exit(4);
        const int l = static_cast<int>(listener);
        if (!sbx::launcher::send_fds(pair[1], std::span<const int>(&l, 1), 'C')) ::_exit(5);
        ::close(l);
        const std::string said = body();
        (void)!::write(pipe_fds[1], said.data(), said.size());
        ::_exit(0);
    }
    ::close(pair[1]);
    ::close(pipe_fds[1]);
    auto fds = sbx::launcher::receive_fds(pair[0], 1);
    ::close(pair[0]);
    REQUIRE(fds.size() == 1);
    c.listener = std::move(fds.front());
    c.out = Fd(pipe_fds[0]);
    return c;
}

std::string finish(Child& c) {
    int status = 0;
    REQUIRE(::waitpid(c.pid, &status, 0) == c.pid);
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
    std::string out;
    char buf[256];
    ssize_t n;
    while ((n = ::read(c.out.get(), buf, sizeof buf)) > 0) out.append(buf, static_cast<std::size_t>(n));
    return out;
}

}  // namespace

// Where resolve_in leads, or "(none)".
std::string where(int root, std::string_view cwd, std::string_view path) {
    auto r = resolve_in(root, cwd, path);
    return r ? r->path : "(none)";
}

TEST_CASE("resolve_in follows links as the kernel would, inside the root it is given") {
    Scratch s;
    mkdirs(s.path + "/a/b");
    link_to("/a/b", s.path + "/abs");        // absolute: from the root given, not from /
    link_to("a/b", s.path + "/rel");
    link_to("../b", s.path + "/a/b/up");     // relative to the folder that holds it
    link_to("loop2", s.path + "/loop1");
    link_to("loop1", s.path + "/loop2");
    link_to("/../../..", s.path + "/escape");
    Fd sock = listen_at(s.path + "/a/b/s.sock");
    Fd root(::open(s.path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(root.ok());
    CHECK(where(root.get(), "/", "/abs/s.sock") == "/a/b/s.sock");
    CHECK(where(root.get(), "/", "/rel/s.sock") == "/a/b/s.sock");
    CHECK(where(root.get(), "/", "/a/b/up/s.sock") == "/a/b/s.sock");
    CHECK(where(root.get(), "/a", "b/../b/./s.sock") == "/a/b/s.sock");
    CHECK(where(root.get(), "/", "/../../a/s.sock") == "/a/s.sock");
    CHECK(where(root.get(), "/", "/escape/a") == "/a");
    // What does not exist is folded by its text, from where the walk stood.
    CHECK(where(root.get(), "/", "/abs/none/../x.sock") == "/a/b/x.sock");
    CHECK(where(root.get(), "/", "/nothing/here") == "/nothing/here");
    CHECK(where(root.get(), "/", "/loop1/s") == "(none)");
    CHECK(where(root.get(), "/", "") == "(none)");
    CHECK(where(root.get(), "/", std::string(5000, 'a')) == "(none)");
    // And what is there: a socket, something else, or nothing.
    const auto found = resolve_in(root.get(), "/", "/abs/s.sock");
    REQUIRE(found.has_value());
    CHECK((found->exists && found->socket));
    const auto folder = resolve_in(root.get(), "/", "/abs");
    REQUIRE(folder.has_value());
    CHECK((folder->exists && !folder->socket));
    const auto none = resolve_in(root.get(), "/", "/abs/x.sock");
    REQUIRE(none.has_value());
    CHECK_FALSE(none->exists);
    const auto below = resolve_in(root.get(), "/", "/abs/s.sock/more");
    REQUIRE(below.has_value());
    CHECK_FALSE(below->exists);
}

TEST_CASE("the broker connects a listed socket and the own folder's, refuses the one beside, and says so") {
    Scratch s;
    mkdirs(s.path + "/outside");
    mkdirs(s.path + "/own");
    Fd listed = listen_at(s.path + "/outside/listed.sock");
    Fd beside = listen_at(s.path + "/outside/beside.sock");
    Fd own = listen_at(s.path + "/own/mine.sock");
    link_to(s.path + "/outside/beside.sock", s.path + "/own/to-beside");
    link_to(s.path + "/outside/listed.sock", s.path + "/own/to-listed");

    sbx::net::UnixSocketRules rules;
    rules.entries.push_back(sbx::net::UnixSocketEntry{s.path + "/outside/listed.sock", "", false});
    rules.own = s.path + "/own";
    std::vector<std::string> reported;
    const std::string dir = s.path;
    Child child = start_child([dir] {
        std::string out;
        for (const std::string p : {"/outside/listed.sock", "/outside/beside.sock", "/own/mine.sock", "/own/to-beside",
                                    "/own/to-listed"})
            out += std::to_string(connect_to(dir + p)) + " ";
        out += std::to_string(connect_to(dir + "/outside/listed.sock", true)) + " ";
        // Another family is connected as asked: nothing listens on this port.
        const int tcp = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in in{};
        in.sin_family = AF_INET;
        in.sin_port = htons(9);
        in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        out += std::to_string(::connect(tcp, reinterpret_cast<sockaddr*>(&in), sizeof in) == 0 ? 0 : errno);
        return out;
    });
    auto broker = sbx::linux_sandbox::ConnectBroker::start(
        std::move(child.listener), rules, sbx::linux_sandbox::BrokerNetwork{},
        [&reported](const sbx::linux_sandbox::SocketRefusal& r) { reported.push_back(r.path + " " + r.named); });
    REQUIRE(broker.has_value());
    const std::string said = finish(child);
    (*broker)->stop();
    CHECK(said == "0 " + std::to_string(EACCES) + " 0 " + std::to_string(EACCES) + " 0 0 " + std::to_string(ECONNREFUSED));
    const auto refused = (*broker)->refused();
    REQUIRE(refused.size() == 2);
    CHECK(refused[0].path == s.path + "/outside/beside.sock");
    CHECK(refused[0].named == refused[0].path);
    CHECK(refused[1].path == s.path + "/outside/beside.sock");
    CHECK(refused[1].named == s.path + "/own/to-beside");
    CHECK_FALSE(refused[0].program.empty());
    CHECK(reported.size() == 2);
}

TEST_CASE("a connect that waits for a full backlog is answered on its own thread, and ended by stop()") {
    Scratch s;
    Fd full = listen_at(s.path + "/full.sock", 0);
    sbx::net::UnixSocketRules rules;
    rules.own = s.path;
    const std::string path = s.path + "/full.sock";
    Child child = start_child([path] {
        std::string out;
        // The first fills the backlog; the second waits until the broker stops.
        out += std::to_string(connect_to(path)) + " ";
        out += std::to_string(connect_to(path));
        return out;
    });
    auto broker =
        sbx::linux_sandbox::ConnectBroker::start(std::move(child.listener), rules, sbx::linux_sandbox::BrokerNetwork{}, nullptr);
    REQUIRE(broker.has_value());
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const auto t = std::chrono::steady_clock::now();
    (*broker)->stop();
    CHECK(std::chrono::steady_clock::now() - t < std::chrono::seconds(5));
    // Its caller got EINTR; or, where the listener closed first, ENOSYS.
    const std::string said = finish(child);
    CHECK((said == "0 " + std::to_string(EINTR) || said == "0 " + std::to_string(ENOSYS)));
}

TEST_CASE("on the host's network the broker lets through the proxy's TCP ports on loopback alone") {
    // The proxy stands for itself: a TCP listener on loopback.
    Fd proxy(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(proxy.get(), reinterpret_cast<sockaddr*>(&at), sizeof at) == 0);
    REQUIRE(::listen(proxy.get(), 8) == 0);
    socklen_t len = sizeof at;
    REQUIRE(::getsockname(proxy.get(), reinterpret_cast<sockaddr*>(&at), &len) == 0);
    const std::uint16_t port = ntohs(at.sin_port);
    Child child = start_child([port] {
        auto tcp = [](std::uint32_t address, std::uint16_t p) {
            const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
            sockaddr_in in{};
            in.sin_family = AF_INET;
            in.sin_port = htons(p);
            in.sin_addr.s_addr = htonl(address);
            const int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&in), sizeof in);
            const int err = rc == 0 ? 0 : errno;
            ::close(fd);
            return err;
        };
        std::string out = std::to_string(tcp(INADDR_LOOPBACK, port)) + " ";
        out += std::to_string(tcp(INADDR_LOOPBACK, static_cast<std::uint16_t>(port == 65535 ? 1 : port + 1))) + " ";
        out += std::to_string(tcp(0x08080808, 53)) + " ";
        // An abstract Unix name is the host's here.
        const int u = ::socket(AF_UNIX, SOCK_STREAM, 0);
        sockaddr_un a{};
        a.sun_family = AF_UNIX;
        std::memcpy(a.sun_path, "\0sbx-test", 9);
        out += std::to_string(::connect(u, reinterpret_cast<sockaddr*>(&a), offsetof(sockaddr_un, sun_path) + 9) == 0 ? 0 : errno);
        return out;
    });
    sbx::linux_sandbox::BrokerNetwork host;
    host.own_namespace = false;
    host.tcp_ports = {port};
    auto broker = sbx::linux_sandbox::ConnectBroker::start(std::move(child.listener), sbx::net::UnixSocketRules{}, host,
                                                           nullptr);
    REQUIRE(broker.has_value());
    const std::string said = finish(child);
    (*broker)->stop();
    const std::string eacces = std::to_string(EACCES);
    CHECK(said == "0 " + eacces + " " + eacces + " " + eacces);
    const auto refused = (*broker)->refused();
    REQUIRE(refused.size() == 3);
    CHECK(refused[0].host == "127.0.0.1");
    CHECK(refused[0].port == (port == 65535 ? 1u : port + 1u));
    CHECK(refused[1].host == "8.8.8.8");
    CHECK(refused[1].port == 53);
    CHECK(refused[2].named == "@sbx-test");
}
