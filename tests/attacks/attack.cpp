// tests/attacks/attack.cpp - sbx-attack: one sandbox escape attempt per subcommand.
//
// Each subcommand tries one way out of a sandbox and prints one line on stdout
// saying what happened: `NAME: succeeded: ...` or `NAME: refused: ERRNO (text)`.
// The exit status is the verdict: 0 the attack worked (the escape is open),
// 1 it was refused, 2 a usage or setup error (nothing was learnt). A subcommand
// the kernel kills (SIGSYS from a seccomp filter) simply dies, and its caller
// sees the signal. tests/attacks/attacks_test.sh runs each one inside sbx and,
// as a control, where nothing confines it.
//
// Standalone on purpose: libc and libstdc++ only, so that nothing of sbx (and no
// libseccomp) is in the program that attacks it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace {

constexpr int kSucceeded = 0;
constexpr int kRefused = 1;
constexpr int kUsage = 2;

// System call numbers of x86_64 and aarch64 (asm-generic) that older headers may
// lack: both architectures share these.
constexpr long kSysIoUringSetup = 425;
constexpr long kSysClone3 = 435;

// The names of the errno values these attacks can meet.
struct ErrnoName {
    int value;
    const char* name;
};
constexpr std::array kErrnoNames{
    ErrnoName{EPERM, "EPERM"},
    ErrnoName{ENOENT, "ENOENT"},
    ErrnoName{ESRCH, "ESRCH"},
    ErrnoName{EINTR, "EINTR"},
    ErrnoName{EIO, "EIO"},
    ErrnoName{ENXIO, "ENXIO"},
    ErrnoName{EBADF, "EBADF"},
    ErrnoName{EAGAIN, "EAGAIN"},
    ErrnoName{ENOMEM, "ENOMEM"},
    ErrnoName{EACCES, "EACCES"},
    ErrnoName{EFAULT, "EFAULT"},
    ErrnoName{EBUSY, "EBUSY"},
    ErrnoName{EEXIST, "EEXIST"},
    ErrnoName{EXDEV, "EXDEV"},
    ErrnoName{ENODEV, "ENODEV"},
    ErrnoName{ENOTDIR, "ENOTDIR"},
    ErrnoName{EISDIR, "EISDIR"},
    ErrnoName{EINVAL, "EINVAL"},
    ErrnoName{EMFILE, "EMFILE"},
    ErrnoName{ENOTTY, "ENOTTY"},
    ErrnoName{ETXTBSY, "ETXTBSY"},
    ErrnoName{ENOSPC, "ENOSPC"},
    ErrnoName{EROFS, "EROFS"},
    ErrnoName{EPIPE, "EPIPE"},
    ErrnoName{ENAMETOOLONG, "ENAMETOOLONG"},
    ErrnoName{ENOSYS, "ENOSYS"},
    ErrnoName{ENOTEMPTY, "ENOTEMPTY"},
    ErrnoName{ELOOP, "ELOOP"},
    ErrnoName{ENOTSOCK, "ENOTSOCK"},
    ErrnoName{EPROTOTYPE, "EPROTOTYPE"},
    ErrnoName{EPROTONOSUPPORT, "EPROTONOSUPPORT"},
    ErrnoName{ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT"},
    ErrnoName{EOPNOTSUPP, "EOPNOTSUPP"},
    ErrnoName{EAFNOSUPPORT, "EAFNOSUPPORT"},
    ErrnoName{EADDRINUSE, "EADDRINUSE"},
    ErrnoName{ECONNRESET, "ECONNRESET"},
    ErrnoName{ECONNREFUSED, "ECONNREFUSED"},
    ErrnoName{EUSERS, "EUSERS"},
};

// "EPERM (Operation not permitted)" for errno value `err`.
std::string describe_errno(int err) {
    std::string name = "E?" + std::to_string(err);
    for (const auto& e : kErrnoNames)
        if (e.value == err) name = e.name;
    return name + " (" + std::strerror(err) + ")";
}

// Prints the one line of a refusal with the current errno and returns kRefused.
int refused(const std::string& what, const std::string& step = {}) {
    const int err = errno;
    std::printf("%s: refused: %s%s%s\n", what.c_str(), describe_errno(err).c_str(), step.empty() ? "" : " at ",
                step.c_str());
    return kRefused;
}

int succeeded(const std::string& what, const std::string& detail) {
    std::printf("%s: succeeded: %s\n", what.c_str(), detail.c_str());
    return kSucceeded;
}

// Prints a setup error (the attack did not take place) on stderr and returns kUsage.
int setup_error(const std::string& what, const std::string& detail) {
    std::fprintf(stderr, "sbx-attack: %s: %s\n", what.c_str(), detail.c_str());
    return kUsage;
}

// `text` with control characters escaped, cut at 200 bytes, to fit on one line.
std::string one_line(std::string_view text) {
    std::string out;
    for (char c : text.substr(0, 200)) {
        if (c == '\n')
            out += "\\n";
        else if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            out += '?';
        else
            out += c;
    }
    if (text.size() > 200) out += "...";
    return out;
}

// The namespace flags of a comma list such as "user,mount"; false on an unknown name.
bool parse_ns_flags(std::string_view list, int& flags) {
    struct Name {
        std::string_view name;
        int flag;
    };
    constexpr std::array kNames{
        Name{"user", CLONE_NEWUSER}, Name{"mount", CLONE_NEWNS}, Name{"net", CLONE_NEWNET},
        Name{"pid", CLONE_NEWPID},   Name{"ipc", CLONE_NEWIPC},  Name{"uts", CLONE_NEWUTS},
    };
    flags = 0;
    while (!list.empty()) {
        const auto comma = list.find(',');
        const auto word = list.substr(0, comma);
        bool known = false;
        for (const auto& n : kNames)
            if (n.name == word) {
                flags |= n.flag;
                known = true;
            }
        if (!known) return false;
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
    }
    return flags != 0;
}

// waitpid that retries on EINTR; the child's status, or -1.
int wait_for(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return -1;
    return status;
}

bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

// Reads at most `limit` bytes of `fd`; false (errno set) on a read error.
bool read_some(int fd, std::string& out, std::size_t limit = 65536) {
    char buf[4096];
    while (out.size() < limit) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return true;
}

// --- the filesystem -------------------------------------------------------------

// Writing where the sandbox allows no write: outside the writable roots, or over a
// protected file (.git/hooks/pre-commit, .bashrc, ...).
int attack_write(const std::string& path, const std::string& text) {
    const std::string what = "write " + path;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return refused(what, "open");
    const bool ok = write_all(fd, text);
    const int err = errno;
    ::close(fd);
    errno = err;
    if (!ok) return refused(what, "write");
    return succeeded(what, "wrote " + std::to_string(text.size()) + " bytes");
}

// Reading a file the sandbox hides. A mask reads as empty (/dev/null), which hides
// the content as well as an error does: only bytes read count as success.
int attack_read(const std::string& path, const std::string& what) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return refused(what, "open");
    std::string content;
    const bool ok = read_some(fd, content);
    const int err = errno;
    ::close(fd);
    errno = err;
    if (!ok) return refused(what, "read");
    if (content.empty()) {
        std::printf("%s: refused: read 0 bytes (empty, or masked)\n", what.c_str());
        return kRefused;
    }
    return succeeded(what, std::to_string(content.size()) + " bytes: " + one_line(content));
}

// Reading a hidden file through a symlink the command makes itself, in a place it
// may write: the link must not lead past the mask.
int attack_symlink_read(const std::string& target, const std::string& link) {
    if (::symlink(target.c_str(), link.c_str()) != 0)
        return setup_error("symlink-read", "cannot make the link " + link + ": " + describe_errno(errno));
    return attack_read(link, "symlink-read " + link + " -> " + target);
}

// Renaming a pinned directory (.git) away, to put another in its place from which
// the protected paths are gone.
int attack_rename(const std::string& from, const std::string& to) {
    const std::string what = "rename " + from + " " + to;
    if (::rename(from.c_str(), to.c_str()) != 0) return refused(what);
    return succeeded(what, "renamed");
}

// Creating a file that must not appear (HEAD at a root that is no repository, which
// makes git take the root for a git directory).
int attack_create(const std::string& path) {
    const std::string what = "create " + path;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return refused(what);
    ::close(fd);
    return succeeded(what, "created");
}

// --- namespaces and the mount table ---------------------------------------------

// A new namespace (a user namespace grants the capabilities to remount; a mount or
// network namespace undoes the sandbox's view).
int attack_unshare(const std::string& list) {
    int flags = 0;
    if (!parse_ns_flags(list, flags)) return setup_error("unshare", "unknown namespace list: " + list);
    const std::string what = "unshare " + list;
    if (::unshare(flags) != 0) return refused(what);
    return succeeded(what, "in new namespaces");
}

// The same through clone with namespace flags, which the filter inspects by value.
int attack_clone_ns(const std::string& list) {
    int flags = 0;
    if (!parse_ns_flags(list, flags)) return setup_error("clone-ns", "unknown namespace list: " + list);
    const std::string what = "clone-ns " + list;
    std::fflush(stdout);
    // The raw call with no new stack behaves like fork: the child runs on a copy.
    const long pid = ::syscall(SYS_clone, static_cast<unsigned long>(flags) | SIGCHLD, 0L, 0L, 0L, 0L);
    if (pid < 0) return refused(what);
    if (pid == 0) ::_exit(0);
    const int status = wait_for(static_cast<pid_t>(pid));
    return succeeded(what, "child " + std::to_string(pid) + " ran in new namespaces, status " + std::to_string(status));
}

// clone3, whose flags sit in memory a seccomp filter cannot read: the filter must
// answer ENOSYS so that libc falls back to clone.
int attack_clone3() {
    // struct clone_args up to `tls` (CLONE_ARGS_SIZE_VER0, 64 bytes).
    struct CloneArgs {
        std::uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
    } args{};
    args.exit_signal = SIGCHLD;
    std::fflush(stdout);
    const long pid = ::syscall(kSysClone3, &args, sizeof args);
    if (pid < 0) return refused("clone3");
    if (pid == 0) ::_exit(0);
    wait_for(static_cast<pid_t>(pid));
    return succeeded("clone3", "made child " + std::to_string(pid));
}

// A mount, which could cover or uncover what the sandbox mounted.
int attack_mount(const std::string& dir) {
    const std::string what = "mount tmpfs on " + dir;
    if (::mount("none", dir.c_str(), "tmpfs", 0, nullptr) != 0) return refused(what);
    return succeeded(what, "mounted");
}

// io_uring, whose operations (IORING_OP_SOCKET, openat) never pass the filter.
int attack_io_uring() {
    // struct io_uring_params is 120 bytes; all zero asks for the defaults.
    alignas(8) std::array<unsigned char, 120> params{};
    const long fd = ::syscall(kSysIoUringSetup, 1L, params.data());
    if (fd < 0) return refused("io_uring_setup");
    ::close(static_cast<int>(fd));
    return succeeded("io_uring_setup", "got ring fd " + std::to_string(fd));
}

// --- sockets and the terminal ---------------------------------------------------

// A Unix socket to a service outside the sandbox (a path socket crosses network
// namespaces).
int attack_unix_connect(const std::string& path) {
    const std::string what = "unix-connect " + path;
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path) return setup_error("unix-connect", "path too long: " + path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return refused(what, "socket");
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
        const int err = errno;
        ::close(fd);
        errno = err;
        return refused(what, "connect");
    }
    const bool sent = write_all(fd, "hello\n");
    ::close(fd);
    return succeeded(what, sent ? "connected, sent hello" : "connected, send failed");
}

// Not an attack: the service outside that unix-connect aims at. Listens on PATH,
// creates READYFILE once listening, and prints one line per connection with what
// it received, until it is killed.
int unix_serve(const std::string& path, const std::string& ready) {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (path.size() >= sizeof addr.sun_path) return setup_error("unix-serve", "path too long: " + path);
    std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return setup_error("unix-serve", "socket: " + describe_errno(errno));
    ::unlink(path.c_str());
    if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd, 8) != 0)
        return setup_error("unix-serve", "bind/listen " + path + ": " + describe_errno(errno));
    const int rfd = ::open(ready.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (rfd < 0) return setup_error("unix-serve", "cannot create " + ready + ": " + describe_errno(errno));
    ::close(rfd);
    for (;;) {
        const int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR) continue;
            return setup_error("unix-serve", "accept: " + describe_errno(errno));
        }
        std::string got;
        read_some(c, got, 256);
        ::close(c);
        std::printf("unix-serve %s: accepted a connection: %s\n", path.c_str(), one_line(got).c_str());
        std::fflush(stdout);
    }
}

// Not an attack: a web server on the host's loopback, for the network tests.
// Listens on 127.0.0.1 (port 0: any), writes the port to PORTFILE once
// listening, and answers every request with 200 and the body "sbx-test-server
// METHOD TARGET", one line per connection on stdout, until it is killed.
int http_serve(const std::string& port_file) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 || ::listen(fd, 64) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
        return setup_error("http-serve", "listen: " + describe_errno(errno));
    const std::string tmp = port_file + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) return setup_error("http-serve", "cannot write " + tmp);
    std::fprintf(f, "%d\n", ntohs(sa.sin_port));
    std::fclose(f);
    if (::rename(tmp.c_str(), port_file.c_str()) != 0) return setup_error("http-serve", "cannot write " + port_file);
    for (;;) {
        const int c = ::accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
        if (c < 0) {
            if (errno == EINTR) continue;
            return setup_error("http-serve", "accept: " + describe_errno(errno));
        }
        std::string got;
        char buf[4096];
        while (got.find("\r\n\r\n") == std::string::npos && got.size() < 65536) {
            const ssize_t n = ::read(c, buf, sizeof buf);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got.append(buf, static_cast<std::size_t>(n));
        }
        const std::string request_line = got.substr(0, got.find("\r\n"));
        const auto sp1 = request_line.find(' ');
        const auto sp2 = request_line.find(' ', sp1 + 1);
        const std::string body = "sbx-test-server " + request_line.substr(0, sp1) + " " +
                                 (sp1 == std::string::npos ? "" : request_line.substr(sp1 + 1, sp2 - sp1 - 1)) + "\n";
        const std::string reply = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " +
                                  std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
        write_all(c, reply);
        ::close(c);
        std::printf("http-serve: %s\n", one_line(request_line).c_str());
        std::fflush(stdout);
    }
}

// A UDP datagram to 127.0.0.1:PORT: from inside the sandbox it reaches the
// sandbox's own loopback, never a server on the host's.
int attack_udp_send(const std::string& port_text) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return refused("udp-send", "socket");
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sa.sin_port = htons(static_cast<std::uint16_t>(std::atoi(port_text.c_str())));
    const char msg[] = "sbx-udp-probe\n";
    if (::sendto(fd, msg, sizeof msg - 1, 0, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) < 0)
        return refused("udp-send", "sendto");
    ::close(fd);
    return succeeded("udp-send", "sent a datagram to 127.0.0.1:" + port_text);
}

// Not an attack: waits up to SECONDS for one datagram on 127.0.0.1 (port written
// to PORTFILE); exit 0 and the datagram when one came, 1 when none did.
int udp_listen(const std::string& port_file, const std::string& seconds) {
    const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof sa;
    if (fd < 0 || ::bind(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof sa) != 0 ||
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
        return setup_error("udp-listen", "bind: " + describe_errno(errno));
    const std::string tmp = port_file + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) return setup_error("udp-listen", "cannot write " + tmp);
    std::fprintf(f, "%d\n", ntohs(sa.sin_port));
    std::fclose(f);
    if (::rename(tmp.c_str(), port_file.c_str()) != 0) return setup_error("udp-listen", "cannot write " + port_file);
    timeval tv{std::atoi(seconds.c_str()), 0};
    ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char buf[256];
    const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) {
        std::printf("udp-listen: nothing arrived\n");
        return 1;
    }
    std::printf("udp-listen: received %s\n", one_line(std::string(buf, static_cast<std::size_t>(n))).c_str());
    return 0;
}

// A Unix socket pair of a given type: a datagram end can be re-targeted with
// connect, so only stream pairs (pipes between processes) should be allowed.
int attack_socketpair(const std::string& type_name) {
    int type = 0;
    if (type_name == "stream")
        type = SOCK_STREAM;
    else if (type_name == "dgram")
        type = SOCK_DGRAM;
    else if (type_name == "seqpacket")
        type = SOCK_SEQPACKET;
    else if (type_name == "raw")
        type = SOCK_RAW;
    else
        return setup_error("socketpair", "type must be stream, dgram, seqpacket or raw: " + type_name);
    const std::string what = "socketpair " + type_name;
    int sv[2];
    if (::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) != 0) return refused(what);
    ::close(sv[0]);
    ::close(sv[1]);
    return succeeded(what, "made a pair");
}

// Pushing input into the terminal (CVE-2017-5226): one harmless character into
// fd 0, which the shell reading the terminal would get after the command ends.
int attack_tiocsti() {
    const char c = 'x';
    if (::ioctl(0, TIOCSTI, &c) != 0) return refused("tiocsti");
    return succeeded("tiocsti", "pushed one character into the terminal on fd 0");
}

// A call through the x32 numbering (bit 30), which a filter for the native ABI
// alone would not match by number: the filter must kill, not let it through.
int attack_x32() {
    constexpr long kX32Bit = 0x40000000L;
    const long pid = ::syscall(kX32Bit | SYS_getpid);
    if (pid < 0) return refused("x32 getpid");
    return succeeded("x32 getpid", "answered " + std::to_string(pid));
}

// A call through the i386 ABI (int $0x80), the same bypass by another numbering.
int attack_i386() {
#if defined(__x86_64__)
    long ret = 20;  // getpid in the i386 table
    asm volatile("int $0x80" : "+a"(ret) : : "memory", "r8", "r9", "r10", "r11");
    if (ret < 0 && ret > -4096) {
        errno = static_cast<int>(-ret);
        return refused("i386 getpid");
    }
    return succeeded("i386 getpid", "answered " + std::to_string(ret));
#else
    return setup_error("i386", "int $0x80 exists only on x86_64");
#endif
}

// --- processes ------------------------------------------------------------------

// Seeing a process outside the sandbox, in /proc or through kill(pid, 0).
int attack_see_pid(pid_t pid) {
    const std::string what = "see-pid " + std::to_string(pid);
    const std::string proc = "/proc/" + std::to_string(pid);
    struct stat st{};
    const bool in_proc = ::stat(proc.c_str(), &st) == 0;
    const bool signalable = ::kill(pid, 0) == 0;
    const int err = errno;
    if (in_proc || signalable)
        return succeeded(what, std::string(in_proc ? proc + " exists" : proc + " is absent") +
                                   (signalable ? ", kill(pid, 0) works" : ", kill(pid, 0) fails"));
    errno = err;
    return refused(what, "kill(pid, 0), and " + proc + " is absent");
}

// Signalling a process outside the sandbox.
int attack_kill(pid_t pid) {
    const std::string what = "kill " + std::to_string(pid);
    if (::kill(pid, SIGTERM) != 0) return refused(what);
    return succeeded(what, "sent SIGTERM");
}

// Tracing a process outside the sandbox (reading its memory, changing its code).
int attack_ptrace(pid_t pid) {
    const std::string what = "ptrace " + std::to_string(pid);
    if (::ptrace(PTRACE_ATTACH, pid, nullptr, nullptr) != 0) return refused(what);
    wait_for(pid);
    ::ptrace(PTRACE_DETACH, pid, nullptr, nullptr);
    return succeeded(what, "attached and detached");
}

// A process that outlives the command: a double fork into a new session, so it is
// no child of anything the launcher waits for. It runs `sleep 300` under the name
// MARKER (argv[0]), which `pgrep -f MARKER` finds. Exit 0 means it was started; the
// escape is whether it is still alive after the sandbox ended, which the caller
// checks.
int spawn_orphan(const std::string& marker) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return setup_error("spawn-orphan", "pipe: " + describe_errno(errno));
    std::fflush(stdout);
    const pid_t child = ::fork();
    if (child < 0) return setup_error("spawn-orphan", "fork: " + describe_errno(errno));
    if (child == 0) {
        ::setsid();
        const pid_t grandchild = ::fork();
        if (grandchild == 0) {
            // Away from the caller's pipes, so that no reader waits for it.
            const int null = ::open("/dev/null", O_RDWR);
            if (null >= 0) {
                ::dup2(null, 0);
                ::dup2(null, 1);
                ::dup2(null, 2);
            }
            char* const argv[] = {const_cast<char*>(marker.c_str()), const_cast<char*>("300"), nullptr};
            ::execvp("sleep", argv);
            ::_exit(127);
        }
        const long sent = grandchild;
        write_all(pipe_fds[1], std::string_view(reinterpret_cast<const char*>(&sent), sizeof sent));
        ::_exit(grandchild < 0 ? 1 : 0);
    }
    ::close(pipe_fds[1]);
    std::string got;
    read_some(pipe_fds[0], got, sizeof(long));
    ::close(pipe_fds[0]);
    const int status = wait_for(child);
    long grandchild = -1;
    if (got.size() == sizeof grandchild) std::memcpy(&grandchild, got.data(), sizeof grandchild);
    if (status != 0 || grandchild <= 0) return setup_error("spawn-orphan", "the second fork failed");
    return succeeded("spawn-orphan " + marker, "started pid " + std::to_string(grandchild) + " in a new session");
}

// --- the command line -----------------------------------------------------------

bool parse_pid(const std::string& text, pid_t& pid) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str() || *end != '\0' || v <= 0 || v > 0x3fffffff) return false;
    pid = static_cast<pid_t>(v);
    return true;
}

struct Subcommand {
    std::string_view name;
    std::string_view args;  // for the usage text
    std::size_t min_args;
    std::size_t max_args;
    std::function<int(const std::vector<std::string>&)> run;
};

int with_pid(const std::string& text, const std::function<int(pid_t)>& f) {
    pid_t pid = 0;
    if (!parse_pid(text, pid)) return setup_error("pid", "not a process id: " + text);
    return f(pid);
}

const std::vector<Subcommand>& subcommands() {
    using Args = std::vector<std::string>;
    static const std::vector<Subcommand> table{
        {"write", "PATH [TEXT]", 1, 2,
         [](const Args& a) { return attack_write(a[0], a.size() > 1 ? a[1] : "written by sbx-attack\n"); }},
        {"read", "PATH", 1, 1, [](const Args& a) { return attack_read(a[0], "read " + a[0]); }},
        {"symlink-read", "TARGET LINK", 2, 2, [](const Args& a) { return attack_symlink_read(a[0], a[1]); }},
        {"rename", "FROM TO", 2, 2, [](const Args& a) { return attack_rename(a[0], a[1]); }},
        {"create", "PATH", 1, 1, [](const Args& a) { return attack_create(a[0]); }},
        {"unshare", "user,mount,net,pid,ipc,uts", 1, 1, [](const Args& a) { return attack_unshare(a[0]); }},
        {"clone-ns", "user,mount,net,pid,ipc,uts", 1, 1, [](const Args& a) { return attack_clone_ns(a[0]); }},
        {"clone3", "", 0, 0, [](const Args&) { return attack_clone3(); }},
        {"mount", "DIR", 1, 1, [](const Args& a) { return attack_mount(a[0]); }},
        {"io-uring", "", 0, 0, [](const Args&) { return attack_io_uring(); }},
        {"unix-connect", "PATH", 1, 1, [](const Args& a) { return attack_unix_connect(a[0]); }},
        {"unix-serve", "PATH READYFILE", 2, 2, [](const Args& a) { return unix_serve(a[0], a[1]); }},
        {"http-serve", "PORTFILE", 1, 1, [](const Args& a) { return http_serve(a[0]); }},
        {"udp-send", "PORT", 1, 1, [](const Args& a) { return attack_udp_send(a[0]); }},
        {"udp-listen", "PORTFILE SECONDS", 2, 2, [](const Args& a) { return udp_listen(a[0], a[1]); }},
        {"socketpair", "stream|dgram|seqpacket|raw", 1, 1, [](const Args& a) { return attack_socketpair(a[0]); }},
        {"tiocsti", "", 0, 0, [](const Args&) { return attack_tiocsti(); }},
        {"x32", "", 0, 0, [](const Args&) { return attack_x32(); }},
        {"i386", "", 0, 0, [](const Args&) { return attack_i386(); }},
        {"see-pid", "PID", 1, 1, [](const Args& a) { return with_pid(a[0], attack_see_pid); }},
        {"kill", "PID", 1, 1, [](const Args& a) { return with_pid(a[0], attack_kill); }},
        {"ptrace", "PID", 1, 1, [](const Args& a) { return with_pid(a[0], attack_ptrace); }},
        {"spawn-orphan", "MARKER", 1, 1, [](const Args& a) { return spawn_orphan(a[0]); }},
    };
    return table;
}

int usage() {
    std::fprintf(stderr,
                 "usage: sbx-attack SUBCOMMAND [ARG...]\n"
                 "Exit status: 0 the attack succeeded, 1 it was refused, 2 a usage or setup error.\n"
                 "Subcommands:\n");
    for (const auto& s : subcommands())
        std::fprintf(stderr, "  %.*s%s%.*s\n", static_cast<int>(s.name.size()), s.name.data(),
                     s.args.empty() ? "" : " ", static_cast<int>(s.args.size()), s.args.data());
    return kUsage;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) return usage();
    const std::string_view name = argv[1];
    const std::vector<std::string> args(argv + 2, argv + argc);
    for (const auto& s : subcommands()) {
        if (s.name != name) continue;
        if (args.size() < s.min_args || args.size() > s.max_args) return usage();
        const int rc = s.run(args);
        std::fflush(stdout);
        return rc;
    }
    return usage();
}
