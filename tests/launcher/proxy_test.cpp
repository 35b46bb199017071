// The filtering proxy of sbx-linux, end to end on loopback: real servers (an HTTP
// origin that answers with the request it got, a TCP echo server), real clients
// (curl as a subprocess, raw sockets where curl cannot say it). Test names map to
// public addresses (93.184.215.0/24, 2606:2800:21f::/48; the documentation
// ranges are reserved to the engine) through the proxy's resolve hook, and its
// dial hook sends those to the loopback servers, so nothing is dialed outside;
// 127.0.0.1 is dialed for real.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "../../launchers/base/fd_io.hpp"
#include "../../launchers/proxy/proxy.hpp"
#include "../../launchers/shared/proxy_secret.hpp"
#include "../base64_encode.hpp"
#include "sbx/net/proxy_env.hpp"

namespace px = sbx::proxy;
namespace net = sbx::net;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

using sbx::launcher::Fd;

bool contains(const std::string& s, std::string_view part) { return s.find(part) != std::string::npos; }

// ---- Descriptors and sockets ---------------------------------------------------------

std::size_t count_entries(const char* dir) {
    DIR* d = ::opendir(dir);
    REQUIRE(d != nullptr);
    std::size_t n = 0;
    while (const dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') ++n;
    ::closedir(d);
    return n;
}

// Open descriptors of this process (the directory's own not counted) and its threads.
std::size_t open_fds() { return count_entries("/proc/self/fd") - 1; }
std::size_t threads() { return count_entries("/proc/self/task"); }

// A TCP socket listening on 127.0.0.1 at a port of the kernel's choosing.
Fd listen_loopback(std::uint16_t& port) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    REQUIRE(fd.get() >= 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(fd.get(), 512) == 0);
    socklen_t size = sizeof a;
    REQUIRE(::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&a), &size) == 0);
    port = ntohs(a.sin_port);
    return fd;
}

// A blocking connection to 127.0.0.1:port whose reads and writes give up after 5 s;
// -1 when it cannot be made.
int connect_loopback(std::uint16_t port) {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (fd.get() < 0) return -1;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return -1;
    const timeval five{5, 0};
    ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &five, sizeof five);
    ::setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &five, sizeof five);
    return fd.release();
}

bool send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t w = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(w));
    }
    return true;
}

// Reads until EOF, an error or a timeout, at most `max` bytes.
std::string read_to_end(int fd, std::size_t max = 1 << 20) {
    std::string out;
    char buf[16 * 1024];
    while (out.size() < max) {
        const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        out.append(buf, static_cast<std::size_t>(r));
    }
    return out;
}

// Reads exactly n bytes, or what came before EOF, an error or a timeout.
std::string read_n(int fd, std::size_t n) {
    std::string out(n, '\0');
    std::size_t have = 0;
    while (have < n) {
        const ssize_t r = ::recv(fd, out.data() + have, n - have, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        have += static_cast<std::size_t>(r);
    }
    out.resize(have);
    return out;
}

// Reads up to the end of a head ("\r\n\r\n"), one byte at a time.
std::string read_head(int fd) {
    std::string out;
    char c = 0;
    while (!out.ends_with("\r\n\r\n") && ::recv(fd, &c, 1, 0) == 1) out += c;
    return out;
}

// ---- Servers -------------------------------------------------------------------------

// A loopback server: each connection is served by `handler` in a thread of its own.
// The destructor shuts down every connection still open and joins every thread.
class Server {
public:
    explicit Server(std::function<void(int)> handler) : handler_(std::move(handler)) {
        listener_ = listen_loopback(port_);
        acceptor_ = std::thread([this] { accept_loop(); });
    }
    ~Server() {
        stopping_ = true;
        ::shutdown(listener_.get(), SHUT_RDWR);
        acceptor_.join();
        {
            std::lock_guard lock(mutex_);
            for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
        }
        for (auto& t : connections_) t.join();
    }
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    std::uint16_t port() const { return port_; }
    int accepted() const { return accepted_; }

private:
    void accept_loop() {
        for (;;) {
            const int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_CLOEXEC);
            if (fd < 0) {
                if (stopping_) return;
                if (errno == EINTR || errno == ECONNABORTED) continue;
                return;
            }
            ++accepted_;
            const timeval ten{10, 0};
            ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &ten, sizeof ten);
            ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &ten, sizeof ten);
            std::lock_guard lock(mutex_);
            open_.push_back(fd);
            connections_.emplace_back([this, fd] {
                handler_(fd);
                std::lock_guard inner(mutex_);
                open_.erase(std::find(open_.begin(), open_.end(), fd));
                ::close(fd);
            });
        }
    }

    std::function<void(int)> handler_;
    Fd listener_;
    std::uint16_t port_ = 0;
    std::thread acceptor_;
    std::atomic<bool> stopping_{false};
    std::atomic<int> accepted_{0};
    std::mutex mutex_;
    std::vector<int> open_;
    std::vector<std::thread> connections_;
};

// Echoes what it reads; after the client's EOF it sends "[eof]" and closes.
void echo(int fd) {
    char buf[64 * 1024];
    for (;;) {
        const ssize_t r = ::recv(fd, buf, sizeof buf, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return;
        if (r == 0) break;
        if (!send_all(fd, std::string_view(buf, static_cast<std::size_t>(r)))) return;
    }
    send_all(fd, "[eof]");
}

// An HTTP origin: answers each request with its whole head (and body) as the body,
// after "origin NAME\n", and says keep-alive; closes after a request that asked
// for `Connection: close`, else waits for the next one.
std::function<void(int)> origin(std::string name) {
    return [name](int fd) {
        for (;;) {
            const std::string head = read_head(fd);
            if (!head.ends_with("\r\n\r\n")) return;
            std::string body;
            std::string lower = head;
            for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            if (const auto at = lower.find("\r\ncontent-length:"); at != std::string::npos)
                body = read_n(fd, std::stoul(head.substr(at + 17)));
            const std::string text = "origin " + name + "\n" + head + body;
            send_all(fd, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + std::to_string(text.size()) +
                             "\r\nConnection: keep-alive\r\nKeep-Alive: timeout=5\r\nX-Origin: " + name + "\r\n\r\n" + text);
            if (contains(lower, "\r\nconnection: close\r\n")) return;
        }
    };
}

// ---- curl ----------------------------------------------------------------------------

struct CurlResult {
    int exit_code = -1;
    std::string out, err;
};

// Runs curl with `args` after "-q -sS --max-time 10", an environment of PATH only
// (no proxy variables), and returns what it printed.
CurlResult curl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {"curl", "-q", "-sS", "--max-time", "10"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    char path_env[] = "PATH=/usr/local/bin:/usr/bin:/bin";
    char* env[] = {path_env, nullptr};
    int out_pipe[2], err_pipe[2];
    REQUIRE(::pipe2(out_pipe, O_CLOEXEC) == 0);
    REQUIRE(::pipe2(err_pipe, O_CLOEXEC) == 0);
    Fd out_r(out_pipe[0]), out_w(out_pipe[1]), err_r(err_pipe[0]), err_w(err_pipe[1]);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, out_w.get(), 1);
    posix_spawn_file_actions_adddup2(&actions, err_w.get(), 2);
    const char* program = ::access("/usr/bin/curl", X_OK) == 0 ? "/usr/bin/curl" : "/usr/local/bin/curl";
    pid_t pid = -1;
    const int rc = ::posix_spawn(&pid, program, &actions, nullptr, cargv.data(), env);
    posix_spawn_file_actions_destroy(&actions);
    REQUIRE_MESSAGE(rc == 0, "cannot run curl: " << std::strerror(rc));
    out_w.reset();
    err_w.reset();
    CurlResult r;
    pollfd p[2] = {{out_r.get(), POLLIN, 0}, {err_r.get(), POLLIN, 0}};
    std::string* sinks[2] = {&r.out, &r.err};
    const auto deadline = Clock::now() + 20s;
    int open = 2;
    while (open > 0 && Clock::now() < deadline) {
        if (::poll(p, 2, 1000) < 0 && errno != EINTR) break;
        for (int i = 0; i < 2; ++i) {
            if (p[i].fd < 0 || p[i].revents == 0) continue;
            char buf[4096];
            const ssize_t got = ::read(p[i].fd, buf, sizeof buf);
            if (got <= 0) {
                p[i].fd = -1;
                --open;
            } else {
                sinks[i]->append(buf, static_cast<std::size_t>(got));
            }
        }
    }
    if (open > 0) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

// ---- The proxy under test --------------------------------------------------------------

net::HostRule rule(std::string_view text, std::string list = "network.allowedDomains") {
    auto p = net::parse_host_pattern(text);
    REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
    return net::HostRule{*p, std::string(text), std::move(list), std::nullopt};
}

net::Address address(std::string_view text) {
    auto t = net::canonical_target(text, 1);
    REQUIRE(t.has_value());
    REQUIRE(t->address.has_value());
    return *t->address;
}

// The servers, the name table, the proxy and the events it reported.
class Harness {
public:
    Server web{origin("web")};
    Server echoes{echo};

    Harness() {
        names_ = {
            {"allowed.test", {address("93.184.215.1")}},
            {"denied.test", {address("93.184.215.1")}},
            {"example.test", {address("93.184.215.1")}},
            {"sub.example.test", {address("93.184.215.1")}},
            {"not-listed.test", {address("93.184.215.1")}},
            {"yes.test", {address("93.184.215.1")}},
            {"no.test", {address("93.184.215.1")}},
            {"echo.test", {address("93.184.215.5")}},
            {"six.test", {address("2606:2800:21f::1")}},
            {"closed.test", {address("93.184.215.9")}},
            {"local.test", {address("127.0.0.1")}},
            {"metadata.test", {address("169.254.169.254"), address("127.0.0.1")}},
        };
        routes_ = {
            {address("93.184.215.1"), web.port()},
            {address("2606:2800:21f::1"), web.port()},
            {address("93.184.215.5"), echoes.port()},
            {address("2606:2800:21f::5"), echoes.port()},
        };
    }

    // Before start(): `name` resolves to `at`, and dialing `at` reaches 127.0.0.1:port.
    void route(const std::string& name, std::string_view at, std::uint16_t port) {
        names_[name] = {address(at)};
        routes_[address(at)] = port;
    }

    // Starts a proxy with `o` and the test hooks (resolve, dial, on_refusal), and
    // a forward's listener (its port in forward_ports) for each target.
    void start(px::ProxyOptions o, std::vector<std::pair<std::string, std::uint16_t>> forwards = {}) {
        o.resolve = [this](const std::string& host) -> sbx::expected<std::vector<net::Address>> {
            {
                std::lock_guard lock(mutex_);  // proxy threads resolve at once
                ++resolves_[host];
            }
            const auto it = names_.find(host);
            if (it == names_.end()) return sbx::fail(sbx::Errc::io_error, host + " does not resolve (test names)");
            return it->second;
        };
        o.dial = [this](const net::Address& a, std::uint16_t port) -> int {
            {
                std::lock_guard lock(mutex_);
                dialed_.push_back(net::to_string(a) + "/" + std::to_string(port));
            }
            if (a == address("127.0.0.1")) return connect_loopback(port);  // the real loopback
            const auto it = routes_.find(a);
            if (it == routes_.end()) {
                errno = ECONNREFUSED;
                return -1;
            }
            return connect_loopback(it->second);
        };
        o.on_refusal = [this](const px::ProxyEvent& e) {
            std::lock_guard lock(mutex_);
            events_.push_back(e);
        };
        Fd http = listen_loopback(http_port);
        Fd socks = listen_loopback(socks_port);
        std::vector<px::ForwardListener> listeners;
        for (auto& [host, port] : forwards) {
            Fd l = listen_loopback(forward_ports.emplace_back());
            listeners.push_back({l.release(), host, port});
        }
        auto p = px::Proxy::start(std::move(o), http.release(), socks.release(), std::move(listeners));
        REQUIRE_MESSAGE(p.has_value(), (p ? std::string() : sbx::to_string(p.error())));
        proxy = std::move(*p);
    }

    std::vector<px::ProxyEvent> events() {
        std::lock_guard lock(mutex_);
        return events_;
    }
    std::vector<std::string> dialed() {
        std::lock_guard lock(mutex_);
        return dialed_;
    }
    int resolves(const std::string& host) {
        std::lock_guard lock(mutex_);
        return resolves_[host];
    }

    std::string http_proxy() const { return "http://127.0.0.1:" + std::to_string(http_port); }
    std::string socks_proxy() const { return "127.0.0.1:" + std::to_string(socks_port); }

    // Sends `request` to the HTTP port and reads the answer to the end ("" when
    // the proxy cannot be reached). No assertions: threads call it too.
    std::string http_exchange(std::string_view request) const {
        Fd c(connect_loopback(http_port));
        if (c.get() < 0 || !send_all(c.get(), request)) return {};
        return read_to_end(c.get());
    }

    // Waits (up to 5 s) until the proxy serves exactly `n` connections.
    bool serving(std::size_t n) const {
        const auto deadline = Clock::now() + 5s;
        while (proxy->connections() != n && Clock::now() < deadline) std::this_thread::sleep_for(10ms);
        return proxy->connections() == n;
    }

    std::unique_ptr<px::Proxy> proxy;
    std::uint16_t http_port = 0, socks_port = 0;
    std::vector<std::uint16_t> forward_ports;

private:
    std::map<std::string, std::vector<net::Address>> names_;
    std::map<net::Address, std::uint16_t> routes_;
    std::mutex mutex_;
    std::vector<px::ProxyEvent> events_;
    std::vector<std::string> dialed_;
    std::map<std::string, int> resolves_;
};

px::ProxyOptions allowing(std::vector<std::string_view> allowed, std::vector<std::string_view> denied = {}) {
    px::ProxyOptions o;
    for (auto a : allowed) o.rules.allowed.push_back(rule(a));
    for (auto d : denied) o.rules.denied.push_back(rule(d, "network.deniedDomains"));
    o.header_timeout_ms = 2000;
    return o;
}

// A SOCKS5 request on `c`, after the greeting: `address` (ATYP and address
// bytes) and port. Returns the reply (all of it once it says what follows), or what came.
std::string socks_request(const Fd& c, const std::string& address_bytes, std::uint16_t port, char command = '\x01') {
    std::string request("\x05", 1);
    request += command;
    request += '\0';
    request += address_bytes;
    request += static_cast<char>(port >> 8);
    request += static_cast<char>(port & 0xff);
    REQUIRE(send_all(c.get(), request));
    std::string reply = read_n(c.get(), 4);
    if (reply.size() == 4) {
        const std::size_t rest = reply[3] == '\x04' ? 18 : 6;
        reply += read_n(c.get(), rest);
    }
    return reply;
}

// A SOCKS5 CONNECT: greeting, then `address` (ATYP and address bytes) and port.
// Returns the connection and the reply's first two bytes (version, code), or what came.
std::pair<Fd, std::string> socks_connect(std::uint16_t proxy_port, std::string address_bytes, std::uint16_t port,
                                         char command = '\x01') {
    Fd c(connect_loopback(proxy_port));
    REQUIRE(c.get() >= 0);
    REQUIRE(send_all(c.get(), std::string_view("\x05\x01\x00", 3)));
    const std::string method = read_n(c.get(), 2);
    REQUIRE(method == std::string("\x05\x00", 2));
    std::string reply = socks_request(c, address_bytes, port, command);
    return {std::move(c), reply};
}

std::string socks_domain(std::string_view name) { return std::string("\x03", 1) + static_cast<char>(name.size()) + std::string(name); }

// SOCKS reply code, or -1 when there was no reply.
int socks_code(const std::string& reply) { return reply.size() >= 2 ? static_cast<unsigned char>(reply[1]) : -1; }

// The status line's code of an HTTP response, or 0.
int status_of(const std::string& response) {
    if (!response.starts_with("HTTP/1.1 ") || response.size() < 12) return 0;
    return std::stoi(response.substr(9, 3));
}

// Opens a CONNECT tunnel to host:port through the HTTP port; "" and -1 when refused.
Fd connect_tunnel(const Harness& h, std::string_view host_port, std::string* answer = nullptr) {
    Fd c(connect_loopback(h.http_port));
    REQUIRE(c.get() >= 0);
    REQUIRE(send_all(c.get(), "CONNECT " + std::string(host_port) + " HTTP/1.1\r\nHost: " + std::string(host_port) + "\r\n\r\n"));
    const std::string head = read_head(c.get());
    if (answer) *answer = head;
    if (head != "HTTP/1.1 200 Connection established\r\n\r\n") return Fd();
    return c;
}

struct IgnoreSigpipe {
    IgnoreSigpipe() { ::signal(SIGPIPE, SIG_IGN); }
} ignore_sigpipe;

// ---- Credentials ----------------------------------------------------------------------

constexpr std::string_view kSecret = "00112233445566778899aabbccddeeff";

using sbx_test::base64;

// The header line that presents user:password.
std::string proxy_authorization(std::string_view user, std::string_view password) {
    return "Proxy-Authorization: Basic " + base64(std::string(user) + ":" + std::string(password)) + "\r\n";
}

// A SOCKS5 client through the greeting `greeting` and, when the proxy chose
// username/password, RFC 1929's request for user:password. Returns the
// connection and what the proxy answered to each, in order.
std::pair<Fd, std::string> socks_login(std::uint16_t proxy_port, std::string_view greeting, std::string_view user,
                                       std::string_view password) {
    Fd c(connect_loopback(proxy_port));
    REQUIRE(c.get() >= 0);
    REQUIRE(send_all(c.get(), greeting));
    std::string answers = read_n(c.get(), 2);
    if (answers != std::string("\x05\x02", 2)) return {std::move(c), answers};
    std::string login("\x01", 1);
    login += static_cast<char>(user.size());
    login += user;
    login += static_cast<char>(password.size());
    login += password;
    REQUIRE(send_all(c.get(), login));
    answers += read_n(c.get(), 2);
    return {std::move(c), answers};
}

}  // namespace

TEST_CASE("proxy: an allowed host is reached over HTTP, CONNECT and SOCKS5") {
    Harness h;
    h.start(allowing({"allowed.test", "93.184.215.1", "[2606:2800:21f::1]"}));

    SUBCASE("HTTP, absolute-form: the origin gets origin-form, its Host, no hop-by-hop headers") {
        const auto r = curl({"-x", h.http_proxy(), "http://allowed.test/hello?x=1"});
        CHECK(r.exit_code == 0);
        CHECK_MESSAGE(contains(r.out, "origin web\nGET /hello?x=1 HTTP/1.1\r\nHost: allowed.test\r\n"), r.out);
        CHECK_MESSAGE(contains(r.out, "Connection: close\r\n"), r.out);
        CHECK_FALSE(contains(r.out, "Proxy-Connection"));
    }
    SUBCASE("HTTP, raw: hop-by-hop headers both ways, Connection: close both ways") {
        const std::string response = h.http_exchange(
            "GET http://Allowed.TEST:80/raw HTTP/1.1\r\nHost: elsewhere.test\r\nProxy-Authorization: Basic eDp5\r\n"
            "Proxy-Connection: keep-alive\r\nConnection: keep-alive, X-Secret\r\nX-Secret: 1\r\nX-Kept: 2\r\n"
            "Keep-Alive: timeout=5\r\nTE: trailers\r\n\r\n");
        CHECK(status_of(response) == 200);
        CHECK_MESSAGE(contains(response, "GET /raw HTTP/1.1\r\nHost: Allowed.TEST:80\r\nX-Kept: 2\r\nConnection: close\r\n\r\n"),
                      response);
        for (std::string_view gone : {"elsewhere.test", "Proxy-Authorization", "Proxy-Connection", "X-Secret", "TE:"})
            CHECK_MESSAGE(!contains(response, gone), gone);
        const std::string head = response.substr(0, response.find("\r\n\r\n") + 4);
        CHECK_MESSAGE(contains(head, "\r\nConnection: close\r\n"), head);
        CHECK_MESSAGE(!contains(head, "keep-alive"), head);
        CHECK_MESSAGE(!contains(head, "Keep-Alive"), head);
        CHECK(contains(head, "X-Origin: web\r\n"));
    }
    SUBCASE("HTTP to an IPv6 address") {
        const std::string response = h.http_exchange("GET http://[2606:2800:21F::1]:80/v6 HTTP/1.1\r\n\r\n");
        CHECK(status_of(response) == 200);
        CHECK_MESSAGE(contains(response, "GET /v6 HTTP/1.1\r\nHost: [2606:2800:21F::1]:80\r\n"), response);
    }
    SUBCASE("a POST body goes with its request") {
        const auto r = curl({"-x", h.http_proxy(), "--data-binary", "a body", "http://allowed.test/post"});
        CHECK(r.exit_code == 0);
        CHECK_MESSAGE(contains(r.out, "POST /post HTTP/1.1\r\n"), r.out);
        CHECK_MESSAGE(r.out.ends_with("\r\n\r\na body"), r.out);
    }
    SUBCASE("CONNECT") {
        const auto r = curl({"-p", "-x", h.http_proxy(), "http://allowed.test:8080/tunnel"});
        CHECK(r.exit_code == 0);
        CHECK_MESSAGE(contains(r.out, "origin web\nGET /tunnel HTTP/1.1\r\nHost: allowed.test:8080\r\n"), r.out);
        CHECK(contains(h.dialed().at(0), "93.184.215.1/8080"));
    }
    SUBCASE("SOCKS5 with a domain name") {
        const auto r = curl({"--socks5-hostname", h.socks_proxy(), "http://allowed.test/by-name"});
        CHECK(r.exit_code == 0);
        CHECK_MESSAGE(contains(r.out, "GET /by-name HTTP/1.1"), std::string(r.out + r.err));
    }
    SUBCASE("SOCKS5 with an IPv4 address") {
        const auto r = curl({"--socks5", h.socks_proxy(), "http://93.184.215.1/by-v4"});
        CHECK(r.exit_code == 0);
        CHECK_MESSAGE(contains(r.out, "GET /by-v4 HTTP/1.1"), std::string(r.out + r.err));
        const auto [c, reply] = socks_connect(h.socks_port, std::string("\x01\x5d\xb8\xd7\x01", 5), 80);
        CHECK(socks_code(reply) == 0);
        CHECK(reply.size() == 10);  // bound to an IPv4 address
    }
    SUBCASE("SOCKS5 with an IPv6 address") {
        const auto r = curl({"--socks5", h.socks_proxy(), "http://[2606:2800:21f::1]/by-v6"});
        CHECK(r.exit_code == 0);
        CHECK_MESSAGE(contains(r.out, "GET /by-v6 HTTP/1.1"), std::string(r.out + r.err));
        std::string v6("\x04", 1);
        v6 += std::string("\x26\x06\x28\x00\x02\x1f", 6) + std::string(9, '\0') + "\x01";  // 2606:2800:21f::1
        const auto [c, reply] = socks_connect(h.socks_port, v6, 80);
        CHECK(socks_code(reply) == 0);
        CHECK(send_all(c.get(), "GET /raw-v6 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"));
        CHECK(contains(read_to_end(c.get()), "GET /raw-v6 HTTP/1.1"));
    }
    CHECK(h.events().empty());
}

TEST_CASE("proxy: refusals answer 403 or SOCKS 0x02, and each is an event") {
    Harness h;
    h.start(allowing({"allowed.test", "*.example.test", "denied.test"}, {"denied.test"}));

    SUBCASE("a host on no list, over HTTP: 403 with the reason, never resolved") {
        const auto r = curl({"-x", h.http_proxy(), "-w", "\n%{http_code}", "http://not-listed.test/"});
        CHECK(r.exit_code == 0);
        CHECK_MESSAGE(r.out == "sbx: not-listed.test:80 refused: not on the allow list, and nothing decides other hosts\n\n403", r.out);
        const auto events = h.events();
        REQUIRE(events.size() == 1);
        CHECK(events[0].host == "not-listed.test");
        CHECK(events[0].port == 80);
        CHECK(events[0].protocol == "http");
        CHECK(events[0].rule.empty());
        CHECK(events[0].reason == "not on the allow list, and nothing decides other hosts");
        CHECK(h.resolves("not-listed.test") == 0);
        CHECK(h.dialed().empty());
    }
    SUBCASE("denied beats allowed, over CONNECT") {
        const auto r = curl({"-p", "-x", h.http_proxy(), "http://denied.test:443/"});
        CHECK(r.exit_code != 0);
        CHECK_MESSAGE(contains(r.err, "403"), r.err);
        const auto events = h.events();
        REQUIRE(events.size() == 1);
        CHECK(events[0].host == "denied.test");
        CHECK(events[0].port == 443);
        CHECK(events[0].protocol == "connect");
        CHECK(events[0].rule == "denied.test");
        CHECK_MESSAGE(contains(events[0].reason, "denied by network.deniedDomains denied.test"), events[0].reason);
        std::string answer;
        CHECK(connect_tunnel(h, "denied.test:443", &answer).get() < 0);
        CHECK(status_of(answer) == 403);
    }
    SUBCASE("a subdomain wildcard does not match the bare domain, over SOCKS5") {
        const auto bare = curl({"--socks5-hostname", h.socks_proxy(), "http://example.test/"});
        CHECK(bare.exit_code != 0);
        const auto sub = curl({"--socks5-hostname", h.socks_proxy(), "http://sub.example.test/"});
        CHECK(sub.exit_code == 0);
        CHECK(contains(sub.out, "Host: sub.example.test"));
        const auto [c, reply] = socks_connect(h.socks_port, socks_domain("example.test"), 80);
        CHECK(socks_code(reply) == 0x02);
        CHECK(read_to_end(c.get()).empty());
        const auto events = h.events();
        REQUIRE(events.size() == 2);
        CHECK(events[0].host == "example.test");
        CHECK(events[0].protocol == "socks5");
    }
    SUBCASE("names are matched case-insensitively and without a trailing dot") {
        CHECK(status_of(h.http_exchange("GET http://SUB.Example.Test./ HTTP/1.1\r\n\r\n")) == 200);
        CHECK(h.events().empty());
    }
}

TEST_CASE("proxy: listeners added with a tag are served, their refusals carry it, and removed they close") {
    Harness h;
    h.start(allowing({"allowed.test"}, {}));
    std::uint16_t http_a = 0, socks_a = 0, http_b = 0, socks_b = 0;
    Fd ha = listen_loopback(http_a), sa = listen_loopback(socks_a), hb = listen_loopback(http_b), sb = listen_loopback(socks_b);
    REQUIRE(h.proxy->add_listeners("a", ha.release(), sa.release()).has_value());
    REQUIRE(h.proxy->add_listeners("b", hb.release(), sb.release()).has_value());
    const auto via = [](std::uint16_t port) { return "http://127.0.0.1:" + std::to_string(port); };

    CHECK(status_of(h.http_exchange("GET http://allowed.test/ HTTP/1.1\r\n\r\n")) == 200);
    const auto allowed = curl({"-x", via(http_a), "-w", "%{http_code}", "-o", "/dev/null", "http://allowed.test/"});
    CHECK(allowed.out == "200");
    CHECK(curl({"-x", via(http_a), "-o", "/dev/null", "http://other-a.test/"}).exit_code == 0);
    CHECK(curl({"--socks5-hostname", "127.0.0.1:" + std::to_string(socks_b), "http://other-b.test/"}).exit_code != 0);
    CHECK(curl({"-x", h.http_proxy(), "-o", "/dev/null", "http://other-none.test/"}).exit_code == 0);
    auto events = h.events();
    REQUIRE(events.size() == 3);
    CHECK(events[0].host == "other-a.test");
    CHECK(events[0].tag == "a");
    CHECK(events[1].host == "other-b.test");
    CHECK(events[1].tag == "b");
    CHECK(events[1].protocol == "socks5");
    CHECK(events[2].tag.empty());

    // A tag given twice is refused, its descriptors closed; removed, a tag's
    // listeners close (a client is refused) and the tag may be given again.
    std::uint16_t again_port = 0, again_socks = 0;
    Fd again = listen_loopback(again_port), again_s = listen_loopback(again_socks);
    const int again_fd = again.release();
    const auto twice = h.proxy->add_listeners("a", again_fd, again_s.release());
    CHECK_FALSE(twice.has_value());
    CHECK(::fcntl(again_fd, F_GETFD) < 0);
    h.proxy->remove_listeners("a");
    bool closed = false;
    for (int i = 0; i < 200 && !closed; ++i) {
        Fd c(connect_loopback(http_a));
        closed = c.get() < 0;
        if (!closed) std::this_thread::sleep_for(10ms);
    }
    CHECK(closed);
    Fd h2 = listen_loopback(http_a), s2 = listen_loopback(socks_a);
    CHECK(h.proxy->add_listeners("a", h2.release(), s2.release()).has_value());
    CHECK(curl({"-x", via(http_a), "-w", "%{http_code}", "-o", "/dev/null", "http://allowed.test/"}).out == "200");

    // A tag with a call of its own: its clients reach what the call lists,
    // and the others do not; removed, the call goes with its listeners.
    std::uint16_t http_c = 0, socks_c = 0;
    Fd hc = listen_loopback(http_c), sc = listen_loopback(socks_c);
    net::HostCall call;
    call.hosts.emplace();
    auto listed = net::call_host_rule("yes.test");
    REQUIRE(listed.has_value());
    call.hosts->push_back(std::move(*listed));
    REQUIRE(h.proxy->add_listeners("c", hc.release(), sc.release(), call).has_value());
    CHECK(curl({"-x", via(http_c), "-w", "%{http_code}", "-o", "/dev/null", "http://yes.test/"}).out == "200");
    CHECK(curl({"-x", via(http_a), "-w", "%{http_code}", "-o", "/dev/null", "http://yes.test/"}).out == "403");
    CHECK(curl({"-x", via(http_c), "-w", "%{http_code}", "-o", "/dev/null", "http://no.test/"}).out == "403");
    CHECK(h.proxy->admit(*net::canonical_target("yes.test", 443), "prog", "c"));
    CHECK_FALSE(h.proxy->admit(*net::canonical_target("yes.test", 443), "prog", "a"));

    // After stop(), no more are taken.
    h.proxy->stop();
    Fd h3 = listen_loopback(http_b), s3 = listen_loopback(socks_b);
    const int h3_fd = h3.release();
    CHECK_FALSE(h.proxy->add_listeners("c", h3_fd, s3.release()).has_value());
    CHECK(::fcntl(h3_fd, F_GETFD) < 0);
}

TEST_CASE("proxy: questions are asked with their tag, one tag's open question holds up no other, and answers go with the tag") {
    Harness h;
    px::ProxyOptions o = allowing({});
    o.rules.on_unknown = net::UnknownHost::ask;
    std::mutex mutex;
    std::condition_variable cv;
    bool release_a = false;
    std::vector<std::string> asked;  // "tag host"
    o.ask = [&](const net::HostTarget& t, const std::string& tag) {
        std::unique_lock lock(mutex);
        asked.push_back(tag + " " + t.host);
        cv.notify_all();
        // Tag a's question stays open until the test lets it go.
        if (tag == "a") cv.wait(lock, [&] { return release_a; });
        return t.host != "no.test";
    };
    h.start(std::move(o));
    std::uint16_t http_a = 0, socks_a = 0, http_b = 0, socks_b = 0;
    Fd ha = listen_loopback(http_a), sa = listen_loopback(socks_a), hb = listen_loopback(http_b), sb = listen_loopback(socks_b);
    REQUIRE(h.proxy->add_listeners("a", ha.release(), sa.release()).has_value());
    REQUIRE(h.proxy->add_listeners("b", hb.release(), sb.release()).has_value());
    const auto code = [](std::uint16_t port, const std::string& url) {
        return curl({"-x", "http://127.0.0.1:" + std::to_string(port), "-w", "%{http_code}", "-o", "/dev/null", url}).out;
    };

    std::string a_code;
    std::thread a([&] { a_code = code(http_a, "http://yes.test/"); });
    {
        std::unique_lock lock(mutex);
        REQUIRE(cv.wait_for(lock, 10s, [&] { return !asked.empty(); }));
    }
    // a's question is open: b is asked all the same, and answered.
    CHECK(code(http_b, "http://yes.test/") == "200");
    CHECK(code(http_b, "http://no.test/") == "403");
    {
        std::lock_guard lock(mutex);
        release_a = true;
        cv.notify_all();
    }
    a.join();
    CHECK(a_code == "200");
    // Each tag's answers stand for it: not asked again.
    CHECK(code(http_a, "http://yes.test/") == "200");
    CHECK(code(http_b, "http://yes.test/") == "200");
    CHECK(h.proxy->admit(*net::canonical_target("yes.test", 80), "prog", "b"));
    {
        std::lock_guard lock(mutex);
        CHECK(asked == std::vector<std::string>{"a yes.test", "b yes.test", "b no.test"});
    }
    // Removed and given again (a pid taken by a later command), the tag is asked afresh.
    h.proxy->remove_listeners("b");
    std::uint16_t http_b2 = 0, socks_b2 = 0;
    Fd hb2 = listen_loopback(http_b2), sb2 = listen_loopback(socks_b2);
    REQUIRE(h.proxy->add_listeners("b", hb2.release(), sb2.release()).has_value());
    CHECK(code(http_b2, "http://no.test/") == "403");
    std::lock_guard lock(mutex);
    CHECK(asked == std::vector<std::string>{"a yes.test", "b yes.test", "b no.test", "b no.test"});
}

TEST_CASE("proxy: a name resolving to loopback is refused; the address itself, allowed, is reached") {
    Harness h;
    const std::string web = std::to_string(h.web.port());
    const std::string echo_port = std::to_string(h.echoes.port());
    h.start(allowing({"local.test", "127.0.0.1:" + web, "*"}));

    // The address itself, allowed with its port, is reached, and then by any name.
    const auto by_address = curl({"-x", h.http_proxy(), "http://127.0.0.1:" + web + "/direct"});
    CHECK(by_address.exit_code == 0);
    CHECK_MESSAGE(contains(by_address.out, "origin web\nGET /direct HTTP/1.1\r\nHost: 127.0.0.1:" + web), by_address.out);
    const auto by_name = curl({"-x", h.http_proxy(), "http://local.test:" + web + "/by-name"});
    CHECK(by_name.exit_code == 0);
    CHECK_MESSAGE(contains(by_name.out, "GET /by-name HTTP/1.1\r\nHost: local.test:" + web), by_name.out);
    // On another port no pattern names the address: the name is refused, and so is
    // the address itself, which `*` does not reach.
    const auto name_elsewhere = curl({"-x", h.http_proxy(), "-w", "\n%{http_code}", "http://local.test:" + echo_port + "/"});
    CHECK(name_elsewhere.out.ends_with("403"));
    CHECK_MESSAGE(contains(name_elsewhere.out, "resolves only to addresses a name may not reach: 127.0.0.1 (loopback)"),
                  name_elsewhere.out);
    const auto address_elsewhere = curl({"-x", h.http_proxy(), "-w", "\n%{http_code}", "http://127.0.0.1:" + echo_port + "/"});
    CHECK(address_elsewhere.out.ends_with("403"));
    // A name with a metadata and a loopback address passes neither.
    const auto [c, reply] = socks_connect(h.socks_port, socks_domain("metadata.test"), 80);
    CHECK(socks_code(reply) == 0x02);

    const auto events = h.events();
    REQUIRE(events.size() == 3);
    CHECK(events[0].host == "local.test");
    CHECK(events[0].port == h.echoes.port());
    CHECK(events[0].rule.empty());
    CHECK(events[1].host == "127.0.0.1");
    CHECK(events[2].host == "metadata.test");
    CHECK_MESSAGE(contains(events[2].reason, "169.254.169.254 (metadata), 127.0.0.1 (loopback)"), events[2].reason);
    for (const auto& d : h.dialed()) CHECK_MESSAGE(d == "127.0.0.1/" + web, d);
}

TEST_CASE("proxy: numeric forms of 169.254.169.254 are refused in HTTP, CONNECT and SOCKS5") {
    Harness h;
    px::ProxyOptions o = allowing({"*"});
    SUBCASE("with `*` allowed") { h.start(std::move(o)); }
    SUBCASE("with onUnknownHost allow, the proxy's backstop") {
        o.rules.allowed.clear();
        o.rules.on_unknown = net::UnknownHost::allow;
        h.start(std::move(o));
    }
    for (std::string_view form : {"2852039166", "0xa9.0xfe.0xa9.0xfe", "0251.0376.0251.0376", "[::ffff:169.254.169.254]"}) {
        CAPTURE(form);
        const std::string response = h.http_exchange("GET http://" + std::string(form) + "/latest/meta-data/ HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK(status_of(response) == 403);
        CHECK_MESSAGE(contains(response, "sbx: 169.254.169.254:80 refused: "), response);
        std::string answer;
        CHECK(connect_tunnel(h, std::string(form) + ":80", &answer).get() < 0);
        CHECK(status_of(answer) == 403);
        if (!form.starts_with("[")) {
            const auto [c, reply] = socks_connect(h.socks_port, socks_domain(form), 80);
            CHECK(socks_code(reply) == 0x02);
        }
    }
    const auto [c, reply] = socks_connect(h.socks_port, std::string("\x04", 1) + std::string(10, '\0') + "\xff\xff\xa9\xfe\xa9\xfe", 80);
    CHECK(socks_code(reply) == 0x02);
    const auto [c4, reply4] = socks_connect(h.socks_port, std::string("\x01\xa9\xfe\xa9\xfe", 5), 80);
    CHECK(socks_code(reply4) == 0x02);
    const auto events = h.events();
    CHECK(events.size() == 4 * 2 + 3 + 2);
    for (const auto& e : events) CHECK(e.host == "169.254.169.254");
    CHECK(h.dialed().empty());
}

TEST_CASE("proxy: ask is called once per host and port, and its answer stands") {
    Harness h;
    px::ProxyOptions o = allowing({});
    o.rules.on_unknown = net::UnknownHost::ask;
    std::mutex mutex;
    std::map<std::string, int> asked;
    o.ask = [&](const net::HostTarget& t, const std::string&) {
        {
            std::lock_guard lock(mutex);
            ++asked[t.host + ":" + std::to_string(t.port)];
        }
        std::this_thread::sleep_for(100ms);  // long enough for the others to queue behind
        return t.host != "no.test";
    };
    h.start(std::move(o));

    for (int i = 0; i < 3; ++i) {
        CHECK(status_of(h.http_exchange("GET http://yes.test/ HTTP/1.1\r\n\r\n")) == 200);
        CHECK(status_of(h.http_exchange("GET http://no.test/ HTTP/1.1\r\n\r\n")) == 403);
    }
    std::vector<std::thread> at_once;
    std::atomic<int> reached{0};
    for (int i = 0; i < 10; ++i)
        at_once.emplace_back([&] { reached += status_of(h.http_exchange("GET http://yes.test:8080/ HTTP/1.1\r\n\r\n")) == 200; });
    for (auto& t : at_once) t.join();
    CHECK(reached == 10);
    const auto [c, reply] = socks_connect(h.socks_port, socks_domain("yes.test"), 80);
    CHECK(socks_code(reply) == 0);

    std::lock_guard lock(mutex);
    CHECK(asked == std::map<std::string, int>{{"no.test:80", 1}, {"yes.test:80", 1}, {"yes.test:8080", 1}});
    const auto events = h.events();
    REQUIRE(events.size() == 3);
    CHECK(events[0].host == "no.test");
    CHECK_MESSAGE(contains(events[0].reason, "asked by the sandbox's onUnknownHost; refused when asked"), events[0].reason);
}

TEST_CASE("proxy: with onUnknownHost ask and nothing to ask, the host is refused") {
    Harness h;
    px::ProxyOptions o = allowing({});
    o.rules.on_unknown = net::UnknownHost::ask;
    h.start(std::move(o));
    CHECK(status_of(h.http_exchange("GET http://yes.test/ HTTP/1.1\r\n\r\n")) == 403);
    REQUIRE(h.events().size() == 1);
    CHECK(contains(h.events()[0].reason, "nothing was there to answer"));
}

TEST_CASE("proxy: network errors answer 502 or a SOCKS error, and are no refusals") {
    Harness h;
    h.start(allowing({"*"}));
    const std::string unresolved = h.http_exchange("GET http://nowhere.test/ HTTP/1.1\r\n\r\n");
    CHECK(status_of(unresolved) == 502);
    CHECK_MESSAGE(contains(unresolved, "sbx: nowhere.test:80 unreachable: nowhere.test does not resolve"), unresolved);
    const std::string refused = h.http_exchange("GET http://closed.test/ HTTP/1.1\r\n\r\n");
    CHECK(status_of(refused) == 502);
    CHECK_MESSAGE(contains(refused, "connecting to 93.184.215.9:80 failed: Connection refused"), refused);
    CHECK(socks_code(socks_connect(h.socks_port, socks_domain("nowhere.test"), 80).second) == 0x04);
    CHECK(socks_code(socks_connect(h.socks_port, socks_domain("closed.test"), 80).second) == 0x05);
    CHECK(h.events().empty());
}

TEST_CASE("proxy: what an origin sends back: interim heads, no answer, a head too large, not HTTP") {
    Harness h;
    // Each answers a request (read to the end of its head) in its own way.
    auto answering = [](std::string answer) {
        return [answer](int fd) {
            if (!read_head(fd).empty()) send_all(fd, answer);
        };
    };
    Server interim(answering("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
                             "Connection: keep-alive, X-Hop\r\nX-Hop: 1\r\nX-End: 1\r\n\r\nok"));
    Server mute(answering(""));
    Server big(answering("HTTP/1.1 200 OK\r\n" + std::string(70000, 'x')));
    Server ssh(answering("SSH-2.0-OpenSSH_9.2\r\n\r\n"));
    h.route("interim.test", "93.184.215.11", interim.port());
    h.route("mute.test", "93.184.215.12", mute.port());
    h.route("big.test", "93.184.215.13", big.port());
    h.route("ssh.test", "93.184.215.14", ssh.port());
    h.start(allowing({"*"}));

    const std::string both = h.http_exchange("POST http://interim.test/ HTTP/1.1\r\nExpect: 100-continue\r\n\r\n");
    CHECK_MESSAGE(both == "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-End: 1\r\n"
                          "Connection: close\r\n\r\nok",
                  both);
    const std::string none = h.http_exchange("GET http://mute.test/ HTTP/1.1\r\n\r\n");
    CHECK(status_of(none) == 502);
    CHECK_MESSAGE(contains(none, "sbx: mute.test:80 closed the connection without a response"), none);
    const std::string large = h.http_exchange("GET http://big.test/ HTTP/1.1\r\n\r\n");
    CHECK(status_of(large) == 502);
    CHECK_MESSAGE(contains(large, "sbx: big.test:80 sent a response head over 65536 bytes"), large);
    CHECK(h.http_exchange("GET http://ssh.test/ HTTP/1.1\r\n\r\n") == "SSH-2.0-OpenSSH_9.2\r\n\r\n");
    CHECK(h.events().empty());
    CHECK(h.serving(0));
}

TEST_CASE("proxy: 200 concurrent CONNECT tunnels through one proxy all echo") {
    Harness h;
    h.start(allowing({"echo.test"}));
    constexpr int kTunnels = 200;
    std::vector<Fd> tunnels;
    for (int i = 0; i < kTunnels; ++i) {
        Fd c(connect_loopback(h.http_port));
        REQUIRE(c.get() >= 0);
        REQUIRE(send_all(c.get(), "CONNECT echo.test:7 HTTP/1.1\r\n\r\n"));
        tunnels.push_back(std::move(c));
    }
    int established = 0;
    for (auto& c : tunnels) established += read_head(c.get()) == "HTTP/1.1 200 Connection established\r\n\r\n";
    CHECK(established == kTunnels);
    CHECK(h.proxy->connections() == kTunnels);
    auto payload = [](int i) { return "tunnel " + std::to_string(i) + " " + std::string(4000, static_cast<char>('a' + i % 26)); };
    for (int i = 0; i < kTunnels; ++i) REQUIRE(send_all(tunnels[i].get(), payload(i)));
    int echoed = 0;
    for (int i = 0; i < kTunnels; ++i) {
        ::shutdown(tunnels[i].get(), SHUT_WR);
        echoed += read_to_end(tunnels[i].get()) == payload(i) + "[eof]";
    }
    CHECK(echoed == kTunnels);
    tunnels.clear();
    CHECK(h.serving(0));
}

TEST_CASE("proxy: oversized, slow and silent clients") {
    Harness h;
    px::ProxyOptions o = allowing({"allowed.test"});
    o.header_timeout_ms = 300;
    h.start(std::move(o));

    SUBCASE("1 MiB of headers: 431, and the proxy goes on") {
        Fd c(connect_loopback(h.http_port));
        REQUIRE(c.get() >= 0);
        std::string request = "GET http://allowed.test/ HTTP/1.1\r\n";
        while (request.size() < (1 << 20)) request += "X-Filler: " + std::string(100, 'f') + "\r\n";
        std::thread sender([&] { send_all(c.get(), request); });
        const std::string response = read_to_end(c.get());
        sender.join();
        CHECK(status_of(response) == 431);
        CHECK(contains(response, "sbx: the request head is over 65536 bytes"));
        c.reset();
        CHECK(status_of(h.http_exchange("GET http://allowed.test/after HTTP/1.1\r\n\r\n")) == 200);
    }
    SUBCASE("a client that says nothing is dropped after the timeout, on either port") {
        for (std::uint16_t port : {h.http_port, h.socks_port}) {
            Fd c(connect_loopback(port));
            const auto start = Clock::now();
            CHECK(read_to_end(c.get()).empty());
            const auto took = Clock::now() - start;
            CHECK(took >= 250ms);
            CHECK(took < 3s);
        }
    }
    SUBCASE("a client that dribbles its head is dropped at the same time") {
        Fd c(connect_loopback(h.http_port));
        const auto start = Clock::now();
        const std::string head = "GET http://allowed.test/ HTTP/1.1\r\nX: ";
        bool dropped = false;
        for (std::size_t i = 0; i < 40 && !dropped; ++i) {
            dropped = !send_all(c.get(), std::string(1, head[i % head.size()]));
            pollfd p = {c.get(), POLLIN, 0};
            dropped = dropped || ::poll(&p, 1, 50) == 1;
        }
        CHECK(dropped);
        CHECK(Clock::now() - start < 1500ms);
        CHECK(read_to_end(c.get()).empty());
    }
    SUBCASE("a SOCKS client that stops after its greeting is dropped too") {
        Fd c(connect_loopback(h.socks_port));
        REQUIRE(send_all(c.get(), std::string_view("\x05\x01\x00", 3)));
        CHECK(read_to_end(c.get()) == std::string("\x05\x00", 2));
    }
    CHECK(h.serving(0));
}

TEST_CASE("proxy: half-closed connections relay both ways") {
    Harness h;
    std::mutex mutex;
    std::string after_shutdown;
    // Greets, shuts down its writing, then keeps reading what the client sends.
    Server greeter([&](int fd) {
        send_all(fd, "hello");
        ::shutdown(fd, SHUT_WR);
        const std::string rest = read_to_end(fd);
        std::lock_guard lock(mutex);
        after_shutdown = rest;
    });
    h.start(allowing({"echo.test", "allowed.test", "127.0.0.1"}));

    SUBCASE("the client shuts down writing and still gets the reply: CONNECT") {
        Fd c = connect_tunnel(h, "echo.test:7");
        REQUIRE(c.get() >= 0);
        REQUIRE(send_all(c.get(), "ping"));
        ::shutdown(c.get(), SHUT_WR);
        CHECK(read_to_end(c.get()) == "ping[eof]");
    }
    SUBCASE("the same through SOCKS5") {
        auto [c, reply] = socks_connect(h.socks_port, socks_domain("echo.test"), 7);
        REQUIRE(socks_code(reply) == 0);
        REQUIRE(send_all(c.get(), "pong"));
        ::shutdown(c.get(), SHUT_WR);
        CHECK(read_to_end(c.get()) == "pong[eof]");
    }
    SUBCASE("an HTTP request whose client shut down writing after its body") {
        Fd c(connect_loopback(h.http_port));
        REQUIRE(send_all(c.get(), "POST http://allowed.test/half HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody"));
        ::shutdown(c.get(), SHUT_WR);
        const std::string response = read_to_end(c.get());
        CHECK(status_of(response) == 200);
        CHECK(response.ends_with("\r\n\r\nbody"));
    }
    SUBCASE("the server shuts down writing first and still gets what the client sends") {
        Fd c = connect_tunnel(h, "127.0.0.1:" + std::to_string(greeter.port()));
        REQUIRE(c.get() >= 0);
        CHECK(read_to_end(c.get()) == "hello");  // its EOF came through
        REQUIRE(send_all(c.get(), "after"));
        ::shutdown(c.get(), SHUT_WR);
        const auto deadline = Clock::now() + 5s;
        for (;;) {
            {
                std::lock_guard lock(mutex);
                if (after_shutdown == "after" || Clock::now() > deadline) break;
            }
            std::this_thread::sleep_for(10ms);
        }
        std::lock_guard lock(mutex);
        CHECK(after_shutdown == "after");
    }
    CHECK(h.serving(0));
}

TEST_CASE("proxy: malformed requests") {
    Harness h;
    h.start(allowing({"allowed.test"}));

    SUBCASE("HTTP: 400 with the reason") {
        const std::string_view requests[] = {
            "GET /path HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
            "GET * HTTP/1.1\r\n\r\n",
            "garbage\r\n\r\n",
            "\r\n\r\n",
            "GET http://allowed.test/ HTTP/2.0\r\n\r\n",
            "GET  http://allowed.test/ HTTP/1.1\r\n\r\n",
            "GET http://allowed.test/ HTTP/1.1 \r\n\r\n",
            "G(T http://allowed.test/ HTTP/1.1\r\n\r\n",
            "GET http://allowed.test/ HTTP/1.1\r\nX-A: 1\r\n folded\r\n\r\n",
            "GET http://allowed.test/ HTTP/1.1\r\nBad Header: x\r\n\r\n",
            "GET http://allowed.test/ HTTP/1.1\r\nNo-Colon\r\n\r\n",
            "GET http://allowed.test/ HTTP/1.1\r\nX-A: a\x01z\r\n\r\n",
            "GET http://allowed.test/\x7f HTTP/1.1\r\n\r\n",
            "CONNECT allowed.test HTTP/1.1\r\n\r\n",
            "CONNECT allowed.test:0 HTTP/1.1\r\n\r\n",
            "CONNECT allowed.test:99999 HTTP/1.1\r\n\r\n",
            "CONNECT allowed.test:80x HTTP/1.1\r\n\r\n",
            "CONNECT ::1:80 HTTP/1.1\r\n\r\n",
            "CONNECT [::1:80 HTTP/1.1\r\n\r\n",
            "GET http://user:pw@allowed.test/ HTTP/1.1\r\n\r\n",
            "GET ftp://allowed.test/ HTTP/1.1\r\n\r\n",
            "GET https://allowed.test/ HTTP/1.1\r\n\r\n",
            "GET http:///path HTTP/1.1\r\n\r\n",
            "GET http://allo%77ed.test/ HTTP/1.1\r\n\r\n",
            "GET http://allowed.test:/ HTTP/1.1\r\n\r\n",
            "GET http://-allowed.test/ HTTP/1.1\r\n\r\n",
        };
        for (auto request : requests) {
            CAPTURE(request);
            const std::string response = h.http_exchange(request);
            CHECK(status_of(response) == 400);
            CHECK(contains(response, "\r\nConnection: close\r\n"));
        }
    }
    SUBCASE("SOCKS5: closed, or the RFC's reply") {
        {  // SOCKS4: closed without a word
            Fd c(connect_loopback(h.socks_port));
            REQUIRE(send_all(c.get(), std::string_view("\x04\x01\x00\x50\x7f\x00\x00\x01\x00", 9)));
            CHECK(read_to_end(c.get()).empty());
        }
        {  // only username/password offered: no acceptable method
            Fd c(connect_loopback(h.socks_port));
            REQUIRE(send_all(c.get(), std::string_view("\x05\x01\x02", 3)));
            CHECK(read_to_end(c.get()) == std::string("\x05\xff", 2));
        }
        {  // no methods at all
            Fd c(connect_loopback(h.socks_port));
            REQUIRE(send_all(c.get(), std::string_view("\x05\x00", 2)));
            CHECK(read_to_end(c.get()) == std::string("\x05\xff", 2));
        }
        CHECK(socks_code(socks_connect(h.socks_port, socks_domain("allowed.test"), 80, '\x02').second) == 0x07);  // BIND
        CHECK(socks_code(socks_connect(h.socks_port, socks_domain("allowed.test"), 80, '\x03').second) == 0x07);  // UDP
        CHECK(socks_code(socks_connect(h.socks_port, std::string("\x05\x01\x02\x03\x04", 5), 80).second) == 0x08);
        CHECK(socks_code(socks_connect(h.socks_port, socks_domain(std::string("allowed\0.test", 13)), 80).second) == 0x01);
        CHECK(socks_code(socks_connect(h.socks_port, socks_domain("allowed.test\r\nX"), 80).second) == 0x01);
        CHECK(socks_code(socks_connect(h.socks_port, socks_domain("allowed.test"), 0).second) == 0x01);
        CHECK(socks_connect(h.socks_port, socks_domain(""), 80).second.empty());  // a name of no bytes
        {  // a reserved byte that is not 0
            Fd c(connect_loopback(h.socks_port));
            REQUIRE(send_all(c.get(), std::string_view("\x05\x01\x00", 3)));
            CHECK(read_n(c.get(), 2) == std::string("\x05\x00", 2));
            REQUIRE(send_all(c.get(), std::string("\x05\x01\x01\x01\x5d\xb8\xd7\x01\x00\x50", 10)));
            CHECK(read_to_end(c.get()).empty());
        }
    }
    CHECK(h.events().empty());
    CHECK(curl({"-x", h.http_proxy(), "http://allowed.test/still"}).exit_code == 0);
    CHECK(h.serving(0));
}

TEST_CASE("proxy: connections beyond max_connections are answered 503 or closed") {
    Harness h;
    px::ProxyOptions o = allowing({"echo.test"});
    o.max_connections = 2;
    h.start(std::move(o));
    Fd one = connect_tunnel(h, "echo.test:7");
    Fd two = connect_tunnel(h, "echo.test:7");
    REQUIRE(one.get() >= 0);
    REQUIRE(two.get() >= 0);
    // (Without a request: one that came before the close would reset the connection.)
    Fd busy(connect_loopback(h.http_port));
    CHECK(status_of(read_to_end(busy.get())) == 503);
    Fd socks(connect_loopback(h.socks_port));
    CHECK(read_to_end(socks.get()).empty());
    one.reset();
    CHECK(h.serving(1));
    Fd three = connect_tunnel(h, "echo.test:7");
    CHECK(three.get() >= 0);
}

TEST_CASE("proxy: stop() returns promptly with connections open, and leaves no descriptor or thread") {
    const std::size_t fds_before = open_fds();
    const std::size_t threads_before = threads();
    {
        Harness h;
        px::ProxyOptions o = allowing({"echo.test", "allowed.test"});
        o.header_timeout_ms = 30000;
        h.start(std::move(o));
        // Served and finished: allowed, refused, malformed.
        CHECK(status_of(h.http_exchange("GET http://allowed.test/ HTTP/1.1\r\n\r\n")) == 200);
        CHECK(status_of(h.http_exchange("GET http://other.test/ HTTP/1.1\r\n\r\n")) == 403);
        CHECK(status_of(h.http_exchange("nonsense\r\n\r\n")) == 400);
        // Open at stop(): a tunnel, a silent client, half a head, half a SOCKS handshake, a tunnel via SOCKS.
        Fd tunnel = connect_tunnel(h, "echo.test:7");
        REQUIRE(tunnel.get() >= 0);
        Fd silent(connect_loopback(h.http_port));
        Fd half(connect_loopback(h.http_port));
        REQUIRE(send_all(half.get(), "GET http://allowed.test/ HTTP/1.1\r\nX-"));
        Fd greeted(connect_loopback(h.socks_port));
        REQUIRE(send_all(greeted.get(), std::string_view("\x05\x01\x00", 3)));
        auto [socks_tunnel, reply] = socks_connect(h.socks_port, socks_domain("echo.test"), 7);
        REQUIRE(socks_code(reply) == 0);
        CHECK(h.serving(5));

        const auto start = Clock::now();
        h.proxy->stop();
        CHECK(Clock::now() - start < 1s);
        CHECK(h.proxy->connections() == 0);
        h.proxy->stop();  // again: nothing to do
        CHECK(read_to_end(tunnel.get()).empty());
        CHECK(read_to_end(silent.get()).empty());
        CHECK(read_to_end(socks_tunnel.get()).empty());
        CHECK(connect_loopback(h.http_port) < 0);  // the listener is closed
        h.proxy.reset();
    }
    CHECK(open_fds() == fds_before);
    CHECK(threads() == threads_before);
}

TEST_CASE("proxy: start refuses descriptors that are not listening stream sockets, and closes them") {
    const std::size_t fds_before = open_fds();
    std::uint16_t port = 0;
    Fd listening = listen_loopback(port);
    const int not_listening = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    REQUIRE(not_listening >= 0);
    auto p = px::Proxy::start(px::ProxyOptions{}, listening.release(), not_listening);
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error().code == sbx::Errc::invalid_argument);
    CHECK_MESSAGE(contains(p.error().message, "the SOCKS listener) is not a listening stream socket"), p.error().message);
    CHECK(open_fds() == fds_before);

    Fd again = listen_loopback(port);
    const int fd = again.release();
    auto same = px::Proxy::start(px::ProxyOptions{}, fd, fd);
    REQUIRE_FALSE(same.has_value());
    CHECK(open_fds() == fds_before);
}

// Not run by default (./sbx-proxy-test --no-skip -tc='*throughput*'): SBX_PROXY_MIB
// (default 1024) MiB through a CONNECT tunnel against the same direct on loopback.
TEST_CASE("proxy: throughput of a CONNECT tunnel against direct loopback" * doctest::skip()) {
    const char* mib_text = std::getenv("SBX_PROXY_MIB");
    const std::size_t total = static_cast<std::size_t>(mib_text ? std::atol(mib_text) : 1024) << 20;
    std::atomic<std::size_t> sunk{0};
    Server sink([&](int fd) {
        std::vector<char> buf(1 << 20);
        std::size_t n = 0;
        for (ssize_t r; (r = ::recv(fd, buf.data(), buf.size(), 0)) > 0;) n += static_cast<std::size_t>(r);
        sunk = n;
    });
    auto send_through = [&](int fd) {
        const std::vector<char> buf(1 << 20, 'x');
        const auto start = Clock::now();
        for (std::size_t sent = 0; sent < total;) {
            const ssize_t w = ::send(fd, buf.data(), std::min(buf.size(), total - sent), MSG_NOSIGNAL);
            REQUIRE(w > 0);
            sent += static_cast<std::size_t>(w);
        }
        ::shutdown(fd, SHUT_WR);
        char c;
        while (::recv(fd, &c, 1, 0) > 0) {
        }
        return std::chrono::duration<double>(Clock::now() - start).count();
    };
    Fd direct(connect_loopback(sink.port()));
    const double direct_s = send_through(direct.get());
    CHECK(sunk == total);

    Harness h;
    h.start(allowing({"127.0.0.1"}));
    Fd tunnel = connect_tunnel(h, "127.0.0.1:" + std::to_string(sink.port()));
    REQUIRE(tunnel.get() >= 0);
    const double proxy_s = send_through(tunnel.get());
    CHECK(sunk == total);
    MESSAGE("direct " << (static_cast<double>(total) / direct_s / 1e9) << " GB/s, CONNECT "
                      << (static_cast<double>(total) / proxy_s / 1e9) << " GB/s, ratio " << direct_s / proxy_s);
}

TEST_CASE("proxy: a forward leads to its own target, decided like a CONNECT there, whatever the client sends") {
    Harness h;
    const std::string echo = "127.0.0.1:" + std::to_string(h.echoes.port());
    h.route("localhost", "127.0.0.1", h.echoes.port());
    h.start(allowing({echo, "localhost:" + std::to_string(h.echoes.port())}, {"localhost"}),
            {{"127.0.0.1", h.echoes.port()}, {"localhost", h.echoes.port()}});
    // Allowed: the bytes go to the target and back, a request for elsewhere included.
    Fd c(connect_loopback(h.forward_ports[0]));
    REQUIRE(c.get() >= 0);
    REQUIRE(send_all(c.get(), "CONNECT other.test:443 HTTP/1.1\r\n\r\n"));
    ::shutdown(c.get(), SHUT_WR);
    CHECK(read_to_end(c.get()) == "CONNECT other.test:443 HTTP/1.1\r\n\r\n[eof]");
    CHECK(h.dialed() == std::vector<std::string>{"127.0.0.1/" + std::to_string(h.echoes.port())});
    CHECK(h.events().empty());
    // Refused (localhost is denied): reset without a byte, reported as a forward's,
    // and never resolved.
    Fd d(connect_loopback(h.forward_ports[1]));
    REQUIRE(d.get() >= 0);
    char byte = 0;
    const ssize_t got = ::recv(d.get(), &byte, 1, 0);
    const int why = errno;
    CHECK(got < 0);
    CHECK(why == ECONNRESET);
    const auto events = h.events();
    REQUIRE(events.size() == 1);
    CHECK(events[0].protocol == "forward");
    CHECK(events[0].host == "localhost");
    CHECK(events[0].port == h.echoes.port());
    CHECK(events[0].rule == "localhost");
    CHECK(h.resolves("localhost") == 0);
    CHECK(h.dialed().size() == 1);
    CHECK(h.serving(0));
}

TEST_CASE("proxy: start refuses a forward's descriptor that is not a listener, or one given twice") {
    std::uint16_t port = 0;
    Fd http = listen_loopback(port), socks = listen_loopback(port), forward = listen_loopback(port);
    const int not_listening = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    auto p = px::Proxy::start(px::ProxyOptions{}, http.release(), socks.release(), {{not_listening, "127.0.0.1", 1}});
    REQUIRE_FALSE(p.has_value());
    CHECK(contains(p.error().message, "the forward's listener"));
    CHECK(::fcntl(not_listening, F_GETFD) < 0);  // closed
    Fd http2 = listen_loopback(port), socks2 = listen_loopback(port);
    const int f = forward.release();
    auto twice = px::Proxy::start(px::ProxyOptions{}, http2.release(), socks2.release(),
                                  {{f, "127.0.0.1", 1}, {f, "127.0.0.1", 2}});
    REQUIRE_FALSE(twice.has_value());
    CHECK(contains(twice.error().message, "given as two listeners"));
    CHECK(::fcntl(f, F_GETFD) < 0);  // closed once
}

TEST_CASE("proxy: decide, then ask, then resolve: nothing refused is ever looked up") {
    Harness h;
    px::ProxyOptions o = allowing({"*"}, {"denied.test"});
    o.rules.on_unknown = net::UnknownHost::ask;
    o.call.hosts.emplace();  // the call lists hosts: others are refused without asking
    o.call.hosts->push_back(rule("yes.test", "the call's hosts"));
    int asked = 0;
    o.ask = [&](const net::HostTarget&, const std::string&) {
        ++asked;
        return true;
    };
    h.start(std::move(o));
    CHECK(status_of(h.http_exchange("GET http://denied.test/ HTTP/1.1\r\n\r\n")) == 403);
    CHECK(status_of(h.http_exchange("GET http://localhost/ HTTP/1.1\r\n\r\n")) == 403);
    CHECK(status_of(h.http_exchange("GET http://x.localhost/ HTTP/1.1\r\n\r\n")) == 403);
    CHECK(socks_code(socks_connect(h.socks_port, socks_domain("LOCALHOST."), 80).second) == 0x02);
    CHECK(h.resolves("denied.test") == 0);
    CHECK(h.resolves("localhost") == 0);
    CHECK(h.resolves("x.localhost") == 0);
    CHECK(asked == 0);
    // `*` lets the name through: it is resolved, once, and its address judged.
    CHECK(status_of(h.http_exchange("GET http://local.test/ HTTP/1.1\r\n\r\n")) == 403);
    CHECK(h.resolves("local.test") == 1);
    CHECK(h.dialed().empty());

    Harness asking;
    px::ProxyOptions q = allowing({});
    q.rules.on_unknown = net::UnknownHost::ask;
    q.ask = [](const net::HostTarget&, const std::string&) { return false; };
    asking.start(std::move(q));
    CHECK(status_of(asking.http_exchange("GET http://yes.test/ HTTP/1.1\r\n\r\n")) == 403);
    CHECK(asking.resolves("yes.test") == 0);
}

TEST_CASE("proxy: this machine's addresses are decided by the engine, literal or resolved") {
    Harness h;
    // 93.184.215.1 (where yes.test resolves) plays an address of this machine.
    px::ProxyOptions o = allowing({"*", "yes.test", "93.184.215.5"});
    o.own_addresses = {address("93.184.215.1"), address("93.184.215.5")};
    h.start(std::move(o));
    CHECK(status_of(h.http_exchange("GET http://93.184.215.1/ HTTP/1.1\r\n\r\n")) == 403);  // `*`: not this machine
    CHECK(status_of(h.http_exchange("GET http://yes.test/ HTTP/1.1\r\n\r\n")) == 403);      // an exact name: neither
    const auto [c, reply] = socks_connect(h.socks_port, std::string("\x01\x5d\xb8\xd7\x05", 5), 80);
    CHECK(socks_code(reply) == 0);  // the address named: reached
    const auto events = h.events();
    REQUIRE(events.size() == 2);
    CHECK_MESSAGE(contains(events[0].reason, "an address of this machine is reached only through a pattern that names"),
                  events[0].reason);
    CHECK_MESSAGE(contains(events[1].reason, "93.184.215.1 (this machine)"), events[1].reason);
    CHECK(h.dialed() == std::vector<std::string>{"93.184.215.5/80"});
}

TEST_CASE("proxy: with a secret, an HTTP client without it is answered 407, and nothing is decided or dialed") {
    Harness h;
    px::ProxyOptions o = allowing({"allowed.test", "echo.test"});
    o.secret = std::string(kSecret);
    o.rules.on_unknown = net::UnknownHost::ask;
    int asked = 0;
    o.ask = [&](const net::HostTarget&, const std::string&) {
        ++asked;
        return true;
    };
    h.start(std::move(o));

    const std::string wrong = proxy_authorization("sbx", "00112233445566778899aabbccddeefF");
    const std::string no_colon = "Proxy-Authorization: Basic " + base64("sbx" + std::string(kSecret)) + "\r\n";
    const std::string right_b64 = base64("sbx:" + std::string(kSecret));
    const std::string credentials[] = {
        "",                                                        // none
        wrong,                                                     // a wrong password, one letter's case
        proxy_authorization("sbx", ""),                            // an empty one
        proxy_authorization(kSecret, "sbx"),                       // the secret as the user
        proxy_authorization("sbx", std::string(kSecret) + "0"),    // longer
        no_colon,                                                  // no colon in the decoded text
        "Proxy-Authorization: Basic " + right_b64.substr(1) + "\r\n",        // not base64
        "Proxy-Authorization: Basic " + right_b64 + "=\r\n",                 // too much padding
        "Proxy-Authorization: Basic  " + right_b64 + "\r\n",                 // two spaces
        "Proxy-Authorization: Basic%" + right_b64 + "\r\n",
        "Proxy-Authorization: Bearer " + std::string(kSecret) + "\r\n",      // another scheme
        "Proxy-Authorization: " + std::string(kSecret) + "\r\n",
        "Proxy-Authorization: Basic ####\r\n",
        "Proxy-Authorization: Basic\r\n",
        "Authorization: Basic " + right_b64 + "\r\n",                        // the origin's header
        proxy_authorization("sbx", kSecret) + proxy_authorization("sbx", kSecret),  // twice
    };
    const std::string targets[] = {
        "GET http://allowed.test/secret-less HTTP/1.1\r\nHost: allowed.test\r\n",
        "CONNECT echo.test:7 HTTP/1.1\r\nHost: echo.test:7\r\n",
        "GET http://not-listed.test/ HTTP/1.1\r\n",  // would be asked about
        "CONNECT not-listed.test:443 HTTP/1.1\r\n",
    };
    std::size_t refused = 0;
    for (const auto& target : targets) {
        for (const auto& c : credentials) {
            CAPTURE(target);
            CAPTURE(c);
            const std::string response = h.http_exchange(target + c + "\r\n");
            CHECK(status_of(response) == 407);
            const std::string head = response.substr(0, response.find("\r\n\r\n") + 4);
            CHECK_MESSAGE(contains(head, "\r\nProxy-Authenticate: Basic realm=\"sbx\"\r\n"), head);
            CHECK_MESSAGE(contains(head, "\r\nConnection: close\r\n"), head);
            ++refused;
        }
    }
    // A body after the head goes nowhere either.
    CHECK(status_of(h.http_exchange("POST http://allowed.test/post HTTP/1.1\r\nContent-Length: 4\r\n\r\nbody")) == 407);
    ++refused;
    // A malformed request is still 400, before credentials are looked at.
    CHECK(status_of(h.http_exchange("GET /origin-form HTTP/1.1\r\n\r\n")) == 400);

    CHECK(h.proxy->refused_clients() == refused);
    CHECK(h.web.accepted() == 0);
    CHECK(h.echoes.accepted() == 0);
    CHECK(h.dialed().empty());
    CHECK(h.resolves("allowed.test") == 0);
    CHECK(h.resolves("not-listed.test") == 0);
    CHECK(asked == 0);
    CHECK(h.events().empty());  // not a refusal of a host: nothing for the violations block
    CHECK(h.serving(0));
}

TEST_CASE("proxy: with a secret, an HTTP client that presents it is served, and the origin never sees it") {
    Harness h;
    px::ProxyOptions o = allowing({"allowed.test", "echo.test"});
    o.secret = std::string(kSecret);
    h.start(std::move(o));

    SUBCASE("absolute-form: Proxy-Authorization does not go upstream") {
        const std::string response = h.http_exchange("GET http://allowed.test/with HTTP/1.1\r\nHost: allowed.test\r\n" +
                                                     proxy_authorization("sbx", kSecret) + "X-Kept: 1\r\n\r\n");
        CHECK(status_of(response) == 200);
        CHECK_MESSAGE(contains(response, "origin web\nGET /with HTTP/1.1\r\nHost: allowed.test\r\nX-Kept: 1\r\n"), response);
        CHECK_FALSE(contains(response, "Proxy-Authorization"));
        CHECK_FALSE(contains(response, base64("sbx:" + std::string(kSecret))));
    }
    SUBCASE("any user, the scheme and the header's name in any case") {
        const std::string response = h.http_exchange("GET http://allowed.test/any HTTP/1.1\r\nproxy-authorization: bASIC " +
                                                     base64("someone else:" + std::string(kSecret)) + "\r\n\r\n");
        CHECK(status_of(response) == 200);
        CHECK_FALSE(contains(response, "roxy-"));
    }
    SUBCASE("a password with a colon in it is the part after the first") {
        Harness colon;
        px::ProxyOptions q = allowing({"allowed.test"});
        q.secret = "a:b";
        colon.start(std::move(q));
        CHECK(status_of(colon.http_exchange("GET http://allowed.test/ HTTP/1.1\r\n" + proxy_authorization("u", "a:b") +
                                            "\r\n")) == 200);
        CHECK(status_of(colon.http_exchange("GET http://allowed.test/ HTTP/1.1\r\n" + proxy_authorization("a", "b") +
                                            "\r\n")) == 407);
    }
    SUBCASE("CONNECT: the tunnel carries the client's bytes, and what it sent after its head") {
        Fd c(connect_loopback(h.http_port));
        REQUIRE(c.get() >= 0);
        REQUIRE(send_all(c.get(), "CONNECT echo.test:7 HTTP/1.1\r\n" + proxy_authorization("sbx", kSecret) + "\r\nearly "));
        CHECK(read_head(c.get()) == "HTTP/1.1 200 Connection established\r\n\r\n");
        REQUIRE(send_all(c.get(), "late"));
        ::shutdown(c.get(), SHUT_WR);
        CHECK(read_to_end(c.get()) == "early late[eof]");
    }
    SUBCASE("a host the rules refuse is still refused, and reported") {
        const std::string response =
            h.http_exchange("GET http://not-listed.test/ HTTP/1.1\r\n" + proxy_authorization("sbx", kSecret) + "\r\n");
        CHECK(status_of(response) == 403);
        REQUIRE(h.events().size() == 1);
        CHECK(h.events()[0].host == "not-listed.test");
    }
    CHECK(h.proxy->refused_clients() == 0);
}

TEST_CASE("proxy: with a secret, SOCKS5 requires username/password, and the password must be the secret") {
    Harness h;
    px::ProxyOptions o = allowing({"echo.test"});
    o.secret = std::string(kSecret);
    h.start(std::move(o));
    const std::string offer_both("\x05\x02\x00\x02", 4);

    {  // "no authentication" only: no acceptable method, then closed
        auto [c, answers] = socks_login(h.socks_port, std::string_view("\x05\x01\x00", 3), "sbx", kSecret);
        CHECK(answers == std::string("\x05\xff", 2));
        CHECK(read_to_end(c.get()).empty());
    }
    {  // no methods at all
        auto [c, answers] = socks_login(h.socks_port, std::string_view("\x05\x00", 2), "sbx", kSecret);
        CHECK(answers == std::string("\x05\xff", 2));
    }
    for (const std::string& password : {std::string("wrong"), std::string(kSecret.substr(1)), std::string(kSecret) + "f",
                                        std::string("00112233445566778899aabbccddeefF")}) {
        CAPTURE(password);
        auto [c, answers] = socks_login(h.socks_port, offer_both, "sbx", password);
        CHECK(answers == std::string("\x05\x02\x01\x01", 4));  // username/password chosen, then refused
        CHECK(read_to_end(c.get()).empty());
    }
    {  // not RFC 1929's version, and an empty user name: refused the same way
        Fd c(connect_loopback(h.socks_port));
        REQUIRE(send_all(c.get(), offer_both));
        CHECK(read_n(c.get(), 2) == std::string("\x05\x02", 2));
        REQUIRE(send_all(c.get(), std::string("\x05\x03sbx\x20", 6) + std::string(kSecret)));
        CHECK(read_to_end(c.get()) == std::string("\x01\x01", 2));
        Fd d(connect_loopback(h.socks_port));
        REQUIRE(send_all(d.get(), offer_both));
        CHECK(read_n(d.get(), 2) == std::string("\x05\x02", 2));
        REQUIRE(send_all(d.get(), std::string("\x01\x00\x20", 3) + std::string(kSecret)));
        CHECK(read_to_end(d.get()) == std::string("\x01\x01", 2));
    }
    CHECK(h.proxy->refused_clients() == 8);
    CHECK(h.echoes.accepted() == 0);
    CHECK(h.dialed().empty());
    CHECK(h.resolves("echo.test") == 0);
    CHECK(h.events().empty());

    {  // the secret, any user, and "no authentication" offered too: the tunnel works
        auto [c, answers] = socks_login(h.socks_port, offer_both, "anyone", kSecret);
        REQUIRE(answers == std::string("\x05\x02\x01\x00", 4));
        CHECK(socks_code(socks_request(c, socks_domain("echo.test"), 7)) == 0);
        REQUIRE(send_all(c.get(), "through"));
        ::shutdown(c.get(), SHUT_WR);
        CHECK(read_to_end(c.get()) == "through[eof]");
    }
    {  // username/password alone offered
        auto [c, answers] = socks_login(h.socks_port, std::string_view("\x05\x01\x02", 3), "sbx", kSecret);
        REQUIRE(answers == std::string("\x05\x02\x01\x00", 4));
        CHECK(socks_code(socks_request(c, socks_domain("other.test"), 80)) == 0x02);  // the rules still decide
    }
    CHECK(h.proxy->refused_clients() == 8);
    CHECK(h.echoes.accepted() == 1);
    CHECK(h.events().size() == 1);
    CHECK(h.serving(0));
}

TEST_CASE("proxy: a secret is at most 255 bytes, SOCKS5's limit; start refuses a longer one and closes its listeners") {
    const std::size_t fds_before = open_fds();
    std::uint16_t port = 0;
    Fd http = listen_loopback(port), socks = listen_loopback(port);
    px::ProxyOptions o;
    o.secret = std::string(256, 'x');
    auto p = px::Proxy::start(std::move(o), http.release(), socks.release());
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error().code == sbx::Errc::invalid_argument);
    CHECK_MESSAGE(contains(p.error().message, "256 bytes long"), p.error().message);
    CHECK(open_fds() == fds_before);

    Harness h;  // 255 bytes: served
    px::ProxyOptions q = allowing({"echo.test"});
    q.secret = std::string(255, 'y');
    h.start(std::move(q));
    auto [c, answers] = socks_login(h.socks_port, std::string_view("\x05\x01\x02", 3), "u", std::string(255, 'y'));
    CHECK(answers == std::string("\x05\x02\x01\x00", 4));
}

TEST_CASE("proxy: make_proxy_secret gives 32 lower-case hex characters, fresh each time") {
    auto a = sbx::launcher::make_proxy_secret();
    auto b = sbx::launcher::make_proxy_secret();
    REQUIRE(a.has_value());
    REQUIRE(b.has_value());
    CHECK(a->size() == 32);
    CHECK(a->find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(b->find_first_not_of("0123456789abcdef") == std::string::npos);
    CHECK(*a != *b);
}

TEST_CASE("proxy: curl through a proxy with a secret: the proxy variables' URLs work, without their user information refused") {
    Harness h;
    px::ProxyOptions o = allowing({"allowed.test"});
    auto secret = sbx::launcher::make_proxy_secret();
    REQUIRE(secret.has_value());
    o.secret = *secret;
    h.start(std::move(o));
    // The URLs the command gets (sbx::net::proxy_environment), as curl takes them.
    std::map<std::string, std::string> env;
    for (auto& [name, value] : net::proxy_environment(h.http_port, h.socks_port, *secret)) env[name] = value;
    const std::string http = env.at("HTTP_PROXY");
    const std::string socks = env.at("ALL_PROXY");
    REQUIRE(http == "http://sbx:" + *secret + "@127.0.0.1:" + std::to_string(h.http_port));
    REQUIRE(socks == "socks5h://sbx:" + *secret + "@127.0.0.1:" + std::to_string(h.socks_port));
    const std::string wrong_http = "http://sbx:" + std::string(kSecret) + "@127.0.0.1:" + std::to_string(h.http_port);

    // Served: absolute-form, CONNECT, SOCKS5 (-x socks5h://, and --socks5-hostname with --proxy-user).
    const auto get = curl({"-x", http, "http://allowed.test/curl-get"});
    CHECK(get.exit_code == 0);
    CHECK_MESSAGE(contains(get.out, "origin web\nGET /curl-get HTTP/1.1\r\nHost: allowed.test\r\n"), std::string(get.out + get.err));
    CHECK_FALSE(contains(get.out, "Proxy-Authorization"));
    const auto tunnel = curl({"-p", "-x", http, "http://allowed.test:8080/curl-connect"});
    CHECK(tunnel.exit_code == 0);
    CHECK_MESSAGE(contains(tunnel.out, "GET /curl-connect HTTP/1.1\r\n"), std::string(tunnel.out + tunnel.err));
    const auto by_socks = curl({"-x", socks, "http://allowed.test/curl-socks"});
    CHECK(by_socks.exit_code == 0);
    CHECK_MESSAGE(contains(by_socks.out, "GET /curl-socks HTTP/1.1\r\n"), std::string(by_socks.out + by_socks.err));
    const auto by_option = curl({"--socks5-hostname", h.socks_proxy(), "--proxy-user", "sbx:" + *secret,
                                 "http://allowed.test/curl-socks-option"});
    CHECK(by_option.exit_code == 0);
    CHECK_MESSAGE(contains(by_option.out, "GET /curl-socks-option HTTP/1.1\r\n"), std::string(by_option.out + by_option.err));
    CHECK(h.web.accepted() == 4);

    // Refused: no user information, or a wrong password.
    for (const std::string& proxy : {h.http_proxy(), wrong_http}) {
        CAPTURE(proxy);
        const auto r = curl({"-x", proxy, "-w", "\n%{http_code}", "http://allowed.test/curl-refused"});
        CHECK(r.exit_code == 0);
        CHECK_MESSAGE(r.out.ends_with("\n407"), r.out);
        CHECK_MESSAGE(contains(r.out, "sbx: the proxy serves only its command"), r.out);
        const auto t = curl({"-p", "-x", proxy, "http://allowed.test:8080/curl-refused"});
        CHECK(t.exit_code != 0);
        CHECK_MESSAGE(contains(t.err, "407"), t.err);
    }
    const auto no_user = curl({"--socks5-hostname", h.socks_proxy(), "http://allowed.test/curl-refused"});
    CHECK(no_user.exit_code != 0);
    const auto wrong_socks =
        curl({"-x", "socks5h://sbx:" + std::string(kSecret) + "@" + h.socks_proxy(), "http://allowed.test/curl-refused"});
    CHECK(wrong_socks.exit_code != 0);
    CHECK(h.web.accepted() == 4);
    CHECK(h.proxy->refused_clients() == 6);
    CHECK(h.events().empty());
}
