// session_bench - what starting a command in a session costs, beside a bare
// fork and exec of the same command from this process (docs/sessions.md).
//
//   session_bench --socket PATH [--cwd DIR] [--runs N] [--warmup N] [--at-once K] [--json] [-- COMMAND...]
//
// Round-robin, N times each (default 200, after 20 warm-up runs): `fork` starts
// COMMAND (default: true) with posix_spawnp and waits for it; `socket` sends a
// run of the session's protocol on the control socket at PATH, with this
// process's descriptors 0-2, and waits for its exit event. Prints the median,
// p90 and p99 wall time of each. With --at-once K, then K clients at once
// (each its own connection, on its own thread) run N commands in all, and it
// prints how many failed and the wall time per command. Exit status: 0 every
// command exited 0; 1 one did not, or the socket failed; 64 usage.
//
// Plain C++ with no library: the protocol is written and read by hand (the
// lines are fixed but for the id), so the client costs what a host's would.
#include <spawn.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
    std::string socket, cwd;
    int runs = 200, warmup = 20, at_once = 0;
    bool json = false;
    std::vector<std::string> command{"true"};
};

[[noreturn]] void usage(const std::string& why) {
    std::fprintf(stderr, "session_bench: %s\nusage: session_bench --socket PATH [--cwd DIR] [--runs N] [--warmup N] "
                         "[--at-once K] [--json] [-- COMMAND...]\n", why.c_str());
    std::exit(64);
}

Options parse(int argc, char** argv) {
    Options o;
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd) != nullptr) o.cwd = cwd;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(a + " needs a value");
            return argv[++i];
        };
        const auto number = [&](int min) {
            const std::string v = value();
            char* end = nullptr;
            const long n = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end != '\0' || n < min || n > 1000000) usage(a + " wants a whole number, not " + v);
            return static_cast<int>(n);
        };
        if (a == "--socket") o.socket = value();
        else if (a == "--cwd") o.cwd = value();
        else if (a == "--runs") o.runs = number(1);
        else if (a == "--warmup") o.warmup = number(0);
        else if (a == "--at-once") o.at_once = number(1);
        else if (a == "--json") o.json = true;
        else if (a == "--") {
            o.command.assign(argv + i + 1, argv + argc);
            if (o.command.empty()) usage("no command after --");
            break;
        } else usage("unknown option " + a);
    }
    if (o.socket.empty()) usage("--socket is needed");
    return o;
}

std::string quoted(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}

// A connection to the session's control socket.
class Client {
public:
    explicit Client(const Options& o) : o_(o) {
        fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_un addr{};
        addr.sun_family = AF_UNIX;
        std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", o.socket.c_str());
        if (fd_ < 0 || ::connect(fd_, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) fd_ = -1;
        argv_ = "[";
        for (std::size_t i = 0; i < o.command.size(); ++i) argv_ += (i ? "," : "") + quoted(o.command[i]);
        argv_ += "]";
    }
    ~Client() {
        if (fd_ >= 0) ::close(fd_);
    }
    bool ok() const { return fd_ >= 0; }

    // Runs the command once: true when it exited 0.
    bool run(const std::string& id) {
        const std::string line = "{\"v\":1,\"op\":\"run\",\"id\":\"" + id + "\",\"argv\":" + argv_ +
                                 ",\"cwd\":" + quoted(o_.cwd) + "}\n";
        const int fds[3] = {0, 1, 2};
        iovec iov{const_cast<char*>(line.data()), line.size()};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)]{};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control;
        msg.msg_controllen = sizeof control;
        cmsghdr* cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof fds);
        std::memcpy(CMSG_DATA(cm), fds, sizeof fds);
        if (::sendmsg(fd_, &msg, MSG_NOSIGNAL) != static_cast<ssize_t>(line.size())) return false;
        for (;;) {
            const std::string ev = next_line();
            if (ev.empty()) return false;
            if (ev.find("\"event\":\"exit\"") != std::string::npos) return ev.find("\"status\":0") != std::string::npos;
            if (ev.find("\"event\":\"error\"") != std::string::npos) {
                std::fprintf(stderr, "session_bench: %s", ev.c_str());
                return false;
            }
        }
    }

private:
    std::string next_line() {
        for (;;) {
            if (const auto nl = buf_.find('\n'); nl != std::string::npos) {
                std::string line = buf_.substr(0, nl + 1);
                buf_.erase(0, nl + 1);
                return line;
            }
            char chunk[4096];
            const ssize_t n = ::read(fd_, chunk, sizeof chunk);
            if (n <= 0) return {};
            buf_.append(chunk, static_cast<std::size_t>(n));
        }
    }

    const Options& o_;
    int fd_ = -1;
    std::string argv_, buf_;
};

bool fork_exec(const Options& o) {
    std::vector<char*> argv;
    for (const auto& w : o.command) argv.push_back(const_cast<char*>(w.c_str()));
    argv.push_back(nullptr);
    pid_t pid = -1;
    if (::posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return false;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

struct Figures {
    double median = 0, p90 = 0, p99 = 0;
};

Figures figures(std::vector<double> xs) {
    std::sort(xs.begin(), xs.end());
    const auto at = [&](double q) { return xs[std::min(xs.size() - 1, static_cast<std::size_t>(q * static_cast<double>(xs.size())))]; };
    return {at(0.5), at(0.9), at(0.99)};
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    Client client(o);
    if (!client.ok()) {
        std::fprintf(stderr, "session_bench: cannot connect to %s: %s\n", o.socket.c_str(), std::strerror(errno));
        return 1;
    }
    int failed = 0;
    std::vector<double> fork_ms, socket_ms;
    for (int i = 0; i < o.warmup + o.runs; ++i) {
        auto t = Clock::now();
        failed += fork_exec(o) ? 0 : 1;
        const double f = ms_since(t);
        t = Clock::now();
        failed += client.run("b" + std::to_string(i)) ? 0 : 1;
        const double s = ms_since(t);
        if (i < o.warmup) continue;
        fork_ms.push_back(f);
        socket_ms.push_back(s);
    }
    const Figures f = figures(fork_ms), s = figures(socket_ms);
    int at_once_failed = 0;
    double per_command = 0;
    if (o.at_once > 0) {
        std::atomic<int> bad{0};
        const auto t = Clock::now();
        std::vector<std::thread> threads;
        for (int k = 0; k < o.at_once; ++k)
            threads.emplace_back([&, k] {
                Client c(o);
                const int mine = o.runs / o.at_once + (k < o.runs % o.at_once ? 1 : 0);
                for (int i = 0; i < mine; ++i)
                    if (!c.ok() || !c.run("p" + std::to_string(k) + "-" + std::to_string(i))) ++bad;
            });
        for (auto& th : threads) th.join();
        per_command = ms_since(t) / o.runs;
        at_once_failed = bad;
    }
    if (o.json) {
        std::printf("{\"runs\":%d,\"failed\":%d,\"fork\":{\"median\":%.3f,\"p90\":%.3f,\"p99\":%.3f},"
                    "\"socket\":{\"median\":%.3f,\"p90\":%.3f,\"p99\":%.3f}",
                    o.runs, failed, f.median, f.p90, f.p99, s.median, s.p90, s.p99);
        if (o.at_once > 0) std::printf(",\"atOnce\":{\"clients\":%d,\"failed\":%d,\"msPerCommand\":%.3f}", o.at_once, at_once_failed, per_command);
        std::printf("}\n");
    } else {
        std::printf("how        runs   median ms   p90 ms   p99 ms\n");
        std::printf("fork+exec  %4d   %9.3f  %7.3f  %7.3f\n", o.runs, f.median, f.p90, f.p99);
        std::printf("socket     %4d   %9.3f  %7.3f  %7.3f   (%.2fx fork+exec)\n", o.runs, s.median, s.p90, s.p99,
                    s.median / f.median);
        if (o.at_once > 0)
            std::printf("at once    %d clients, %d commands, %d failed, %.3f ms a command\n", o.at_once, o.runs,
                        at_once_failed, per_command);
        if (failed > 0) std::printf("%d runs failed\n", failed);
    }
    return failed + at_once_failed == 0 ? 0 : 1;
}
