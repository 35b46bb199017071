#include "stage.hpp"

#include "fd_io.hpp"
#include "proxy_env.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace sbx::linux_sandbox {

namespace {

int stage_failed(int status_fd, const std::string& message) {
    write_all(status_fd, "F", 1);
    write_all(status_fd, message.data(), message.size());
    return 125;
}

}  // namespace

std::vector<std::string> stage_argv(const StageArgs& a) {
    std::vector<std::string> out{"/proc/self/fd/" + std::to_string(a.exe_fd), std::string(kStageFlag),
                                 "--exe-fd", std::to_string(a.exe_fd), "--status-fd", std::to_string(a.status_fd),
                                 "--proxy-fd", std::to_string(a.proxy_fd), "--filtered", a.filtered ? "1" : "0"};
    for (int fd : a.keep_fds) out.insert(out.end(), {"--keep-fd", std::to_string(fd)});
    for (const auto& kv : a.loader_env) out.insert(out.end(), {"--loader-env", kv});
    out.emplace_back("--");
    out.insert(out.end(), a.command.begin(), a.command.end());
    return out;
}

bool parse_stage_args(int argc, char** argv, StageArgs& out) {
    int i = 0;
    for (; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--") break;
        if (i + 1 >= argc) return false;
        const char* v = argv[++i];
        if (a == "--exe-fd" && parse_fd(v, out.exe_fd)) continue;
        if (a == "--status-fd" && parse_fd(v, out.status_fd)) continue;
        if (a == "--proxy-fd" && parse_fd(v, out.proxy_fd, -1)) continue;
        if (a == "--filtered" && (v == std::string_view("0") || v == std::string_view("1"))) {
            out.filtered = *v == '1';
            continue;
        }
        int keep = -1;
        if (a == "--keep-fd" && parse_fd(v, keep, 3)) {
            out.keep_fds.push_back(keep);
            continue;
        }
        if (a == "--loader-env" && std::strchr(v, '=') != nullptr && *v != '=') {
            out.loader_env.emplace_back(v);
            continue;
        }
        return false;
    }
    if (i == argc) return false;
    for (++i; i < argc; ++i) out.command.emplace_back(argv[i]);
    return !out.command.empty() && out.status_fd >= 0 && out.exe_fd >= 0;
}

namespace {

// Two listening sockets on the sandbox's own loopback, handed to the launcher,
// whose proxy serves them; the command gets their ports. Only processes in this
// network namespace can connect to them.
std::string hand_over_listeners(int proxy_fd) {
    int fds[2] = {-1, -1};
    int ports[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
        fds[i] = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof sa;
        if (fds[i] < 0 || ::bind(fds[i], reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 ||
            ::listen(fds[i], 512) != 0 || ::getsockname(fds[i], reinterpret_cast<sockaddr*>(&sa), &len) != 0)
            return std::string("cannot listen on the sandbox's loopback: ") + std::strerror(errno);
        ports[i] = ntohs(sa.sin_port);
    }
    char byte = 'L';
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof fds)] = {};
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
    ssize_t sent;
    while ((sent = ::sendmsg(proxy_fd, &msg, MSG_NOSIGNAL)) < 0 && errno == EINTR) {
    }
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    ::close(proxy_fd);
    if (sent != 1) return std::string("cannot hand the proxy's sockets to the launcher: ") + std::strerror(err);
    for (const auto& [name, value] : proxy_environment(ports[0], ports[1]))
        if (::setenv(name.c_str(), value.c_str(), 1) != 0) return "cannot set " + name;
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

}  // namespace

int run_stage(const StageArgs& a) {
    write_all(a.status_fd, "S", 1);
    if (a.exe_fd >= 0) ::close(a.exe_fd);
    if (a.proxy_fd >= 0)
        if (auto why = hand_over_listeners(a.proxy_fd); !why.empty()) return stage_failed(a.status_fd, why);
    for (const auto& kv : a.loader_env) {
        const auto eq = kv.find('=');
        if (::setenv(kv.substr(0, eq).c_str(), kv.c_str() + eq + 1, 1) != 0)
            return stage_failed(a.status_fd, "cannot set " + kv.substr(0, eq) + ": " + std::strerror(errno));
    }
    if (a.filtered)
        if (auto why = check_filtered(); !why.empty()) return stage_failed(a.status_fd, why);
    // The command gets 0-2 and the descriptors the plan names; the status pipe
    // closes on exec.
    std::vector<int> keep = a.keep_fds;
    keep.push_back(a.status_fd);
    if (!sweep_fds(keep, FdSweep::close))
        return stage_failed(a.status_fd, std::string("cannot close the descriptors the command is not given: ") +
                                             std::strerror(errno));
    // From here on, only a failed exec writes: a successful one closes the pipe.
    if (::fcntl(a.status_fd, F_SETFD, FD_CLOEXEC) != 0)
        return stage_failed(a.status_fd, std::string("fcntl: ") + std::strerror(errno));
    std::vector<char*> argv;
    for (const auto& s : a.command) argv.push_back(const_cast<char*>(s.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    const int err = errno;
    write_all(a.status_fd, "E", 1);
    write_all(a.status_fd, &err, sizeof err);
    return err == ENOENT ? 127 : 126;
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
