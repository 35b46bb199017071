// tests/attacks/attack.cpp - sbx-attack: one sandbox escape attempt per subcommand.
//
// Each subcommand tries one way out of a sandbox and prints one line on stdout
// saying what happened: `NAME: succeeded: ...` or `NAME: refused: ERRNO (text)`.
// The exit status is the verdict: 0 the attack worked (the escape is open),
// 1 it was refused, 2 a usage or setup error (nothing was learnt). A subcommand
// the kernel kills (SIGSYS from a seccomp filter) simply dies, and its caller
// sees the signal. tests/attacks/attacks_test.sh runs each one inside sbx and,
// as a control, where nothing confines it. A few subcommands are no attacks but
// the harness's helpers outside the sandbox (unix-serve, http-serve, udp-listen,
// with-key); their comments say so.
//
// Standalone on purpose: libc and libstdc++ only (and the kernel's headers for
// constants and structures), so that nothing of sbx (and no libseccomp) is in the
// program that attacks it.
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/keyctl.h>
#include <linux/magic.h>
#include <linux/perf_event.h>
#include <linux/seccomp.h>
#include <linux/userfaultfd.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

namespace {

constexpr int kSucceeded = 0;
constexpr int kRefused = 1;
constexpr int kUsage = 2;

// System call numbers of x86_64 and aarch64 (asm-generic) that older headers may
// lack: both architectures share these.
constexpr long kSysIoUringSetup = 425;
constexpr long kSysPidfdOpen = 434;
constexpr long kSysClone3 = 435;
constexpr long kSysPidfdGetfd = 438;

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1  // Linux 5.11
#endif

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
    ErrnoName{EDQUOT, "EDQUOT"},
    ErrnoName{ENOKEY, "ENOKEY"},
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

// Removing a name (a protected symbolic link: the next `write` would then make a
// regular file in its place).
int attack_unlink(const std::string& path) {
    const std::string what = "unlink " + path;
    if (::unlink(path.c_str()) != 0) return refused(what);
    return succeeded(what, "removed");
}

// Replacing a name with a regular file holding `text`, as an editor saves: a new
// file beside it renamed over it (a symbolic link there is replaced, not followed).
// The new file is removed again when the rename is refused.
int attack_replace(const std::string& path, const std::string& text) {
    const std::string what = "replace " + path;
    const std::string fresh = path + ".sbx-attack-new";
    const int fd = ::open(fresh.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return refused(what, "open " + fresh);
    const bool ok = write_all(fd, text);
    int err = errno;
    ::close(fd);
    if (ok && ::rename(fresh.c_str(), path.c_str()) == 0) return succeeded(what, "a regular file is there now");
    if (ok) err = errno;
    ::unlink(fresh.c_str());
    errno = err;
    return refused(what, ok ? "rename" : "write");
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

// What the walk of `writable` found: how many entries, and the first of them.
struct WritableFound {
    static constexpr std::size_t kShown = 20;
    std::size_t count = 0;
    std::vector<std::string> first;

    void add(const std::string& path) {
        if (count++ < kShown) first.push_back(path);
    }
};

// `dir` joined with `name`, without doubling the slash of "/".
std::string join_path(const std::string& dir, std::string_view name) {
    return (dir.empty() || dir.back() != '/' ? dir + "/" : dir) + std::string(name);
}

bool all_digits(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Adds to `found` every regular file and directory below the directory open on
// `fd` (named `path`) that the caller could write, and closes `fd`. Nothing is
// opened for writing: faccessat answers as an open would, EROFS on a read-only
// mount included. Symlinks are never followed, unreadable directories are passed
// over, and a procfs root's process directories are not entered (self and
// thread-self are symlinks), which would be every process's view again.
void walk_writable(int fd, const std::string& path, WritableFound& found) {
    DIR* dir = ::fdopendir(fd);
    if (dir == nullptr) {
        ::close(fd);
        return;
    }
    struct statfs fs{};
    struct stat st{};
    const bool proc_root = ::fstatfs(fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC && ::fstat(fd, &st) == 0 &&
                           st.st_ino == 1;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string_view name = entry->d_name;
        if (name == "." || name == ".." || (proc_root && all_digits(name))) continue;
        // Not d_type: that is the type of what a mount covers (bubblewrap mounts each
        // device of its /dev over an empty file), and fstatat sees what is mounted.
        if (::fstatat(fd, entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode)) continue;
        const std::string child = join_path(path, name);
        if (::faccessat(fd, entry->d_name, W_OK, AT_EACCESS) == 0) found.add(child);
        if (!S_ISDIR(st.st_mode)) continue;
        const int sub = ::openat(fd, entry->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) walk_writable(sub, child, found);
    }
    ::closedir(dir);
}

// Finding anything writable below DIRs the sandbox shows read-only (/sys, /proc,
// the system's directories). Each DIR itself counts too, and is followed if it is
// a symlink, as `find -H` does.
// The weaker sandbox's file broker reads a path from the caller's memory and
// lets the kernel go on, which reads it again: a second thread flips the one
// buffer between `benign` and `target` while the first makes a file and a
// folder by it, `rounds` times. Succeeds when `target` was made (the file
// broker acted on one reading and the kernel on another, or either alone
// allowed it).
int attack_flip_create(const std::string& benign, const std::string& target, const std::string& rounds_text) {
    const long rounds = std::strtol(rounds_text.c_str(), nullptr, 10);
    if (rounds <= 0 || benign.size() != target.size())
        return setup_error("flip-create", "ROUNDS must be positive and both names of one length");
    static char buf[4096];
    std::memcpy(buf, benign.c_str(), benign.size() + 1);
    std::atomic<bool> done{false};
    std::thread flipper([&] {
        volatile char* b = buf;
        while (!done.load(std::memory_order_relaxed))
            for (const std::string* name : {&target, &benign})
                for (std::size_t i = 0; i < name->size(); ++i) b[i] = (*name)[i];
    });
    int last_errno = 0;
    for (long i = 0; i < rounds; ++i) {
        const int fd = ::open(buf, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
        if (fd >= 0) ::close(fd);
        else last_errno = errno;
        (void)::unlink(benign.c_str());
        if (::mkdir(buf, 0755) != 0) last_errno = errno;
        (void)::rmdir(benign.c_str());
    }
    done = true;
    flipper.join();
    struct stat st {};
    if (::lstat(target.c_str(), &st) == 0) return succeeded("flip-create", target + " was made");
    errno = last_errno;
    return refused("flip-create " + target);
}

int attack_writable(const std::vector<std::string>& dirs) {
    WritableFound found;
    std::string names;
    for (const auto& dir : dirs) {
        struct stat st{};
        if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            return setup_error("writable", "not a directory: " + dir);
        names += " " + dir;
        if (::faccessat(AT_FDCWD, dir.c_str(), W_OK, AT_EACCESS) == 0) found.add(dir);
        const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) walk_writable(fd, dir, found);
    }
    if (found.count == 0) {
        std::printf("writable: refused: nothing writable under%s\n", names.c_str());
        return kRefused;
    }
    std::string first;
    for (const auto& path : found.first) first += " " + path;
    return succeeded("writable", std::to_string(found.count) + " writable, the first:" + first);
}

// Opening for writing what the sandbox shows read-only, devices and procfs files
// included. No O_TRUNC, no O_CREAT, and not a byte written: each descriptor is
// closed at once. A path that does not exist says nothing and is only listed.
int attack_open_write(const std::vector<std::string>& paths) {
    std::string opened;
    std::string absent;
    // The paths that exist but did not open, by errno in the order first met.
    std::vector<std::pair<int, std::string>> failures;
    for (const auto& path : paths) {
        const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        if (fd >= 0) {
            ::close(fd);
            opened += " " + path;
            continue;
        }
        const int err = errno;
        if (err == ENOENT) {
            absent += " " + path;
            continue;
        }
        auto same = std::find_if(failures.begin(), failures.end(), [err](const auto& f) { return f.first == err; });
        if (same == failures.end()) same = failures.insert(failures.end(), {err, ""});
        same->second += " " + path;
    }
    const std::string absent_note = absent.empty() ? "" : "; absent:" + absent;
    if (!opened.empty()) return succeeded("open-write", "opened for writing:" + opened + absent_note);
    if (failures.empty()) return setup_error("open-write", "none of the paths exists");
    std::string detail;
    for (const auto& [err, list] : failures)
        detail += (detail.empty() ? "" : "; ") + describe_errno(err) + " for" + list;
    std::printf("open-write: refused: %s%s\n", detail.c_str(), absent_note.c_str());
    return kRefused;
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

// The new mount API's way to make a read-only mount writable again: what the
// capability the stage holds while it makes the mounts could do, were it left.
int attack_remount_rw(const std::string& path) {
    const std::string what = "mount_setattr clearing read-only on " + path;
    struct {
        std::uint64_t attr_set, attr_clr, propagation, userns_fd;
    } attr{0, 0x1 /* MOUNT_ATTR_RDONLY */, 0, 0};
    if (::syscall(SYS_mount_setattr, AT_FDCWD, path.c_str(), 0, &attr, sizeof attr) != 0) return refused(what);
    return succeeded(what, "the mount is writable");
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
// Listens on 127.0.0.1 (or ADDRESS, an IPv4 one; port 0: any), writes the
// port to PORTFILE once listening, and answers every request with 200 and the
// body "sbx-test-server METHOD TARGET", one line per connection on stdout,
// until it is killed.
int http_serve(const std::string& port_file, const std::string& address) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (!address.empty() && ::inet_pton(AF_INET, address.c_str(), &sa.sin_addr) != 1)
        return setup_error("http-serve", "not an IPv4 address: " + address);
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

// A socket of a family the sandbox has no use for (netlink, vsock to the host or
// its virtual machines, AF_ALG's kernel crypto, packet sockets, ...) or of one it
// confines (unix, inet): socket(FAMILY, TYPE, PROTOCOL) exactly, no flags added.
int attack_socket(const std::vector<std::string>& args) {
    struct Family {
        std::string_view name;
        int value;
        int default_type;
    };
    constexpr std::array kFamilies{
        Family{"unix", AF_UNIX, SOCK_STREAM},       Family{"inet", AF_INET, SOCK_STREAM},
        Family{"inet6", AF_INET6, SOCK_STREAM},     Family{"netlink", AF_NETLINK, SOCK_RAW},
        Family{"vsock", AF_VSOCK, SOCK_STREAM},     Family{"alg", AF_ALG, SOCK_SEQPACKET},
        Family{"packet", AF_PACKET, SOCK_RAW},      Family{"bluetooth", AF_BLUETOOTH, SOCK_STREAM},
        Family{"key", AF_KEY, SOCK_STREAM},         Family{"tipc", AF_TIPC, SOCK_STREAM},
        Family{"xdp", AF_XDP, SOCK_STREAM},         Family{"can", AF_CAN, SOCK_STREAM},
    };
    struct Type {
        std::string_view name;
        int value;
    };
    constexpr std::array kTypes{
        Type{"stream", SOCK_STREAM},
        Type{"dgram", SOCK_DGRAM},
        Type{"seqpacket", SOCK_SEQPACKET},
        Type{"raw", SOCK_RAW},
    };
    // A number in decimal, as a family or a protocol.
    const auto number = [](const std::string& text, int& value) {
        char* end = nullptr;
        errno = 0;
        const long v = std::strtol(text.c_str(), &end, 10);
        if (errno != 0 || end == text.c_str() || *end != '\0' || v < 0 || v > 0xffff) return false;
        value = static_cast<int>(v);
        return true;
    };
    int family = -1;
    int type = SOCK_STREAM;
    for (const auto& f : kFamilies)
        if (f.name == args[0]) {
            family = f.value;
            type = f.default_type;
        }
    if (family < 0 && !number(args[0], family))
        return setup_error("socket", "family must be a number or one of unix, inet, inet6, netlink, vsock, alg, "
                                     "packet, bluetooth, key, tipc, xdp, can: " + args[0]);
    std::string_view type_name = "stream";
    for (const auto& t : kTypes)
        if (t.value == type) type_name = t.name;
    if (args.size() > 1) {
        const auto named = std::find_if(kTypes.begin(), kTypes.end(), [&](const Type& t) { return t.name == args[1]; });
        if (named == kTypes.end())
            return setup_error("socket", "type must be stream, dgram, seqpacket or raw: " + args[1]);
        type = named->value;
        type_name = named->name;
    }
    int protocol = 0;
    if (args.size() > 2 && !number(args[2], protocol))
        return setup_error("socket", "protocol must be a number: " + args[2]);
    const std::string call =
        "socket(" + args[0] + ", " + std::string(type_name) + ", " + std::to_string(protocol) + ")";
    const int fd = ::socket(family, type, protocol);
    if (fd < 0) return refused("socket", call);
    ::close(fd);
    return succeeded("socket", call + " = fd " + std::to_string(fd));
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
    // Where the kernel has no i386 ABI, int $0x80 faults: the process dies of
    // SIGSEGV, as the test expects, and not of a sanitizer's handler (134).
    ::signal(SIGSEGV, SIG_DFL);
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

// The Seccomp field of /proc/PID/status (0 none, 1 strict, 2 filter) and the
// process's name; false when the process is gone or hides its status.
bool read_seccomp_status(const std::string& pid, std::string& mode, std::string& comm) {
    const int fd = ::open(("/proc/" + pid + "/status").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    std::string status;
    const bool ok = read_some(fd, status);
    ::close(fd);
    mode.clear();
    comm.clear();
    std::string_view rest = status;
    while (ok && !rest.empty()) {
        const auto eol = rest.find('\n');
        const std::string_view line = rest.substr(0, eol);
        rest = eol == std::string_view::npos ? std::string_view{} : rest.substr(eol + 1);
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == '\t' || value.front() == ' ')) value.remove_prefix(1);
        if (line.substr(0, colon) == "Name") comm = value;
        if (line.substr(0, colon) == "Seccomp") mode = value;
    }
    return !mode.empty();
}

// Finding a process that runs under no seccomp filter, whose hands a process that
// may trace it could borrow (pid1-inject does): every process the sandbox shows
// must carry a filter. The first with Seccomp 0 is the success.
int attack_seccomp_status() {
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) return setup_error("seccomp-status", "cannot read /proc: " + describe_errno(errno));
    std::size_t seen = 0;
    std::string found;
    while (const dirent* entry = ::readdir(proc)) {
        const std::string pid = entry->d_name;
        std::string mode;
        std::string comm;
        if (!all_digits(pid) || !read_seccomp_status(pid, mode, comm)) continue;
        ++seen;
        if (mode == "0") {
            found = "pid " + pid + " has Seccomp: " + mode + " (" + one_line(comm) + ")";
            break;
        }
    }
    ::closedir(proc);
    if (!found.empty()) return succeeded("seccomp-status", found);
    if (seen == 0) return setup_error("seccomp-status", "no process's status could be read");
    std::printf("seccomp-status: refused: every process (%zu) runs under a seccomp filter\n", seen);
    return kRefused;
}

// waitpid with __WALL for a tracee, retrying on EINTR; false (errno set) on failure.
bool wait_traced(pid_t pid, int& status) {
    while (::waitpid(pid, &status, __WALL) < 0)
        if (errno != EINTR) return false;
    return true;
}

#if defined(__x86_64__)
// A classic BPF instruction, as the BPF_STMT and BPF_JUMP macros make them.
constexpr sock_filter bpf(std::uint16_t code, std::uint32_t k, std::uint8_t jt = 0, std::uint8_t jf = 0) {
    return {code, jt, jf, k};
}

// Puts the calling thread under a filter that answers socket(AF_UNIX, ...) with
// EPERM and allows everything else: the stand-in for a sandbox's filter. False
// (errno set) when the kernel refuses it.
bool refuse_unix_sockets_here() {
    // args[0] of x86_64 is little-endian: its low 32 bits come first.
    std::array filter{
        bpf(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        bpf(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 0, 5),
        bpf(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        bpf(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3),
        bpf(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args)),
        bpf(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
        bpf(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        bpf(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog prog{static_cast<unsigned short>(filter.size()), filter.data()};
    return ::prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) == 0 &&
           ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0L, &prog) == 0;
}

// Makes the tracee `pid`, in a ptrace stop with the registers `saved` just past a
// `syscall` instruction, run the call `nr` (a0, a1, a2) on that instruction: rip
// back onto it, a single step over it. False (errno set) when a ptrace request
// failed. Otherwise `signal` is 0 and `result` the call's answer (-errno on
// failure), or `signal` is the signal that stopped the tracee before the call ran.
// The registers are left as the call left them: the caller puts `saved` back.
bool run_in_tracee(pid_t pid, const user_regs_struct& saved, long nr, long a0, long a1, long a2, long& result,
                   int& signal) {
    signal = 0;
    user_regs_struct regs = saved;
    regs.orig_rax = static_cast<unsigned long long>(-1L);  // no system call to restart
    regs.rax = static_cast<unsigned long long>(nr);
    regs.rdi = static_cast<unsigned long long>(a0);
    regs.rsi = static_cast<unsigned long long>(a1);
    regs.rdx = static_cast<unsigned long long>(a2);
    regs.rip = saved.rip - 2;
    int status = 0;
    if (::ptrace(PTRACE_SETREGS, pid, nullptr, &regs) != 0 || ::ptrace(PTRACE_SINGLESTEP, pid, nullptr, nullptr) != 0 ||
        !wait_traced(pid, status))
        return false;
    if (!WIFSTOPPED(status)) {
        errno = ESRCH;
        return false;
    }
    // The step's SIGTRAP comes first of all pending signals; another means none ran.
    if (WSTOPSIG(status) != SIGTRAP) {
        signal = WSTOPSIG(status);
        return true;
    }
    if (::ptrace(PTRACE_GETREGS, pid, nullptr, &regs) != 0) return false;
    result = static_cast<long>(regs.rax);
    return true;
}

// Lets the stopped tracee go as it was: the registers `saved` back (orig_rax and an
// -ERESTART* rax make the kernel re-run the call it was in) and `signal`, if not
// 0, delivered to it.
void release_tracee(pid_t pid, const user_regs_struct& saved, int signal) {
    ::ptrace(PTRACE_SETREGS, pid, nullptr, &saved);
    ::ptrace(PTRACE_DETACH, pid, nullptr, reinterpret_cast<void*>(static_cast<long>(signal)));
}
#endif

// Borrowing pid 1's hands: the init of the PID namespace (bubblewrap's, under
// --unshare-pid) may run without the filters the command has (the connect
// broker's listener is the stage's), and the command may trace it. It stops
// pid 1 in its wait4, makes it call socket(AF_UNIX) and connect it to
// SOCKET_PATH (the address written below pid 1's stack pointer), takes the
// descriptor with pidfd_getfd, closes pid 1's copy, puts pid 1 back as it was
// and sends hello. An error from pid 1's socket or connect call means pid 1 is
// filtered too (ENOSYS from connect: the whole filter sends it to a listener
// pid 1 has none of). --self-filter first puts this process under a filter that
// refuses AF_UNIX sockets, which stands for a command whose sandbox filters it
// and not pid 1.
// Over 80 lines: one attack, its steps in the order the attacker takes them.
int attack_pid1_inject(const std::string& socket_path, bool self_filter) {
#if defined(__x86_64__)
    const std::string what = "pid1-inject";
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_path.size() >= sizeof addr.sun_path) return setup_error(what, "path too long: " + socket_path);
    std::memcpy(addr.sun_path, socket_path.c_str(), socket_path.size() + 1);
    if (self_filter) {
        if (!refuse_unix_sockets_here())
            return setup_error(what, "cannot install the filter: " + describe_errno(errno));
        const int probe = ::socket(AF_UNIX, SOCK_STREAM, 0);
        if (probe >= 0 || errno != EPERM) {
            if (probe >= 0) ::close(probe);
            return setup_error(what, "the filter does not refuse socket(AF_UNIX) with EPERM");
        }
    }
    constexpr pid_t kInit = 1;
    const long pidfd = ::syscall(kSysPidfdOpen, kInit, 0L);
    if (pidfd < 0) return refused(what, "pidfd_open");
    if (::ptrace(PTRACE_SEIZE, kInit, nullptr, nullptr) != 0) return refused(what, "PTRACE_SEIZE");
    // Until pid 1 stops, nothing of it has changed: this process's exit detaches it.
    int status = 0;
    if (::ptrace(PTRACE_INTERRUPT, kInit, nullptr, nullptr) != 0) return refused(what, "PTRACE_INTERRUPT");
    if (!wait_traced(kInit, status)) return refused(what, "waitpid");
    if (!WIFSTOPPED(status)) return setup_error(what, "pid 1 did not stop");
    // The interrupt's stop, or a signal's that came first and must still be delivered.
    const int first_signal = status >> 16 == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(status);
    user_regs_struct saved{};
    if (::ptrace(PTRACE_GETREGS, kInit, nullptr, &saved) != 0) {
        const int err = errno;
        ::ptrace(PTRACE_DETACH, kInit, nullptr, reinterpret_cast<void*>(static_cast<long>(first_signal)));
        errno = err;
        return refused(what, "PTRACE_GETREGS");
    }
    if (first_signal != 0) {
        release_tracee(kInit, saved, first_signal);
        return setup_error(what, "pid 1 stopped for signal " + std::to_string(first_signal) + ", not the interrupt");
    }
    errno = 0;
    const long code = ::ptrace(PTRACE_PEEKTEXT, kInit, reinterpret_cast<void*>(saved.rip - 2), nullptr);
    if (errno != 0) {
        const int err = errno;
        release_tracee(kInit, saved, 0);
        errno = err;
        return refused(what, "PTRACE_PEEKTEXT");
    }
    if ((code & 0xffff) != 0x050f) {  // 0f 05, syscall
        release_tracee(kInit, saved, 0);
        return setup_error(what, "pid 1 is not stopped just past a syscall instruction");
    }
    long fd_in_init = 0;
    int signal = 0;
    if (!run_in_tracee(kInit, saved, __NR_socket, AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fd_in_init, signal)) {
        const int err = errno;
        release_tracee(kInit, saved, 0);
        errno = err;
        return refused(what, "making pid 1 call socket");
    }
    if (signal != 0) {
        release_tracee(kInit, saved, signal);
        return setup_error(what, "pid 1 stopped for signal " + std::to_string(signal) + " before its call ran");
    }
    if (fd_in_init < 0) {
        release_tracee(kInit, saved, 0);
        errno = static_cast<int>(-fd_in_init);
        return refused(what, "socket in pid 1");
    }
    // Below the red zone, where nothing of pid 1's lives while it waits.
    const unsigned long long at = (saved.rsp - 512) & ~15ULL;
    std::array<long, (sizeof addr + sizeof(long) - 1) / sizeof(long)> words{};
    std::memcpy(words.data(), &addr, sizeof addr);
    long connected = 0;
    bool poked = true;
    for (std::size_t i = 0; i < words.size() && poked; ++i)
        poked = ::ptrace(PTRACE_POKEDATA, kInit, reinterpret_cast<void*>(at + i * sizeof(long)),
                         reinterpret_cast<void*>(words[i])) == 0;
    if (!poked || !run_in_tracee(kInit, saved, __NR_connect, fd_in_init, static_cast<long>(at), sizeof addr, connected,
                                 signal) ||
        signal != 0 || connected < 0) {
        const int err = !poked ? errno : connected < 0 ? static_cast<int>(-connected) : EINTR;
        long closed = 0;
        if (signal == 0) run_in_tracee(kInit, saved, __NR_close, fd_in_init, 0, 0, closed, signal);
        release_tracee(kInit, saved, signal);
        errno = err;
        return refused(what, !poked ? "writing the address into pid 1" : "connect in pid 1");
    }
    const long fd = ::syscall(kSysPidfdGetfd, pidfd, fd_in_init, 0L);
    const int getfd_err = errno;
    // Pid 1's copy closed as well, so that it keeps nothing of the attack's.
    long closed = 0;
    run_in_tracee(kInit, saved, __NR_close, fd_in_init, 0, 0, closed, signal);
    release_tracee(kInit, saved, signal);
    ::close(static_cast<int>(pidfd));
    if (fd < 0) {
        errno = getfd_err;
        return refused(what, "pidfd_getfd");
    }
    const bool sent = write_all(static_cast<int>(fd), "hello\n");
    ::close(static_cast<int>(fd));
    return succeeded(what, "pid 1 opened a Unix socket (fd " + std::to_string(fd_in_init) + " in pid 1) that reached " +
                               socket_path + (sent ? "" : ", but sending hello failed"));
#else
    (void)socket_path;
    (void)self_filter;
    return setup_error("pid1-inject", "the register work is written for x86_64 only");
#endif
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

// --- keyrings -------------------------------------------------------------------

// Not an attack: runs COMMAND in a new session keyring that holds the "user" key
// NAME=VALUE, which COMMAND and all it starts inherit: the secret key-read goes
// after, in the keyring key-add writes to. Prints nothing; exit 2 on an error
// before the exec.
int with_key(const std::vector<std::string>& args) {
    if (args[2] != "--") return setup_error("with-key", "usage: with-key NAME VALUE -- COMMAND [ARG...]");
    if (::syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, nullptr) < 0)
        return setup_error("with-key", "cannot join a new session keyring: " + describe_errno(errno));
    if (::syscall(SYS_add_key, "user", args[0].c_str(), args[1].data(), args[1].size(), KEY_SPEC_SESSION_KEYRING) < 0)
        return setup_error("with-key", "cannot add the key " + args[0] + ": " + describe_errno(errno));
    std::vector<char*> argv;
    for (auto it = args.begin() + 3; it != args.end(); ++it) argv.push_back(const_cast<char*>(it->c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    return setup_error("with-key", "cannot run " + args[3] + ": " + describe_errno(errno));
}

// The harness's stand-in for a kernel without Landlock: COMMAND runs under a
// filter that answers landlock_create_ruleset (444 on every architecture) with
// ENOSYS, as a kernel built without it does, and allows everything else.
// Prints nothing; exit 2 on an error before the exec.
int without_landlock(const std::vector<std::string>& args) {
    if (args[0] != "--") return setup_error("without-landlock", "usage: without-landlock -- COMMAND [ARG...]");
    constexpr std::uint32_t kLandlockCreateRuleset = 444;
    std::array<sock_filter, 4> filter{{
        {BPF_LD | BPF_W | BPF_ABS, 0, 0, offsetof(seccomp_data, nr)},
        {BPF_JMP | BPF_JEQ | BPF_K, 0, 1, kLandlockCreateRuleset},
        {BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS},
        {BPF_RET | BPF_K, 0, 0, SECCOMP_RET_ALLOW},
    }};
    sock_fprog prog{static_cast<unsigned short>(filter.size()), filter.data()};
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1L, 0L, 0L, 0L) != 0 || ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0L, &prog) != 0)
        return setup_error("without-landlock", "cannot load the filter: " + describe_errno(errno));
    std::vector<char*> argv;
    for (auto it = args.begin() + 1; it != args.end(); ++it) argv.push_back(const_cast<char*>(it->c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    return setup_error("without-landlock", "cannot run " + args[1] + ": " + describe_errno(errno));
}

// Reading a key of the keyrings the caller's session holds (tokens, Kerberos
// tickets, what a credential helper keeps there).
int attack_key_read(const std::string& name) {
    const std::string what = "key-read";
    const long id = ::syscall(SYS_request_key, "user", name.c_str(), nullptr, 0L);
    if (id < 0) return refused(what, "request_key");
    std::array<char, 4096> buf{};
    const long n = ::syscall(SYS_keyctl, KEYCTL_READ, id, buf.data(), buf.size());
    if (n < 0) return refused(what, "keyctl(KEYCTL_READ)");
    const std::string_view value(buf.data(), std::min(static_cast<std::size_t>(n), buf.size()));
    return succeeded(what, "read the caller's key " + name + ": " + one_line(value));
}

// Writing to the session keyring the caller shares: a key planted there is found
// by the caller's own later lookups.
int attack_key_add(const std::string& name, const std::string& value) {
    const std::string what = "key-add";
    const long id = ::syscall(SYS_add_key, "user", name.c_str(), value.data(), value.size(), KEY_SPEC_SESSION_KEYRING);
    if (id < 0) return refused(what, "add_key");
    return succeeded(what, "added the key " + name + " (id " + std::to_string(id) + ") to the session keyring");
}

// --- the kernel's other interfaces ----------------------------------------------

// perf_event_open, a large attack surface of the kernel's, on the mildest event
// there is: a software counter of this process's own user time.
int attack_perf_event() {
    perf_event_attr attr{};
    attr.type = PERF_TYPE_SOFTWARE;
    attr.size = sizeof attr;
    attr.config = PERF_COUNT_SW_TASK_CLOCK;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    const long fd = ::syscall(SYS_perf_event_open, &attr, 0L, -1L, -1L, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) return refused("perf-event");
    ::close(static_cast<int>(fd));
    return succeeded("perf-event", "opened a software counter, fd " + std::to_string(fd));
}

// userfaultfd, which lets a process stall the kernel in the middle of a copy (the
// usual tool for winning a kernel race); user-mode-only faults are what an
// unprivileged user may ask for.
int attack_userfaultfd() {
    const long fd = ::syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
    if (fd < 0) return refused("userfaultfd");
    ::close(static_cast<int>(fd));
    return succeeded("userfaultfd", "got fd " + std::to_string(fd));
}

// A persona other than the one the sandbox set (ADDR_NO_RANDOMIZE turns off
// address randomisation, READ_IMPLIES_EXEC makes data executable). The persona it
// had is put back at once.
int attack_personality(const std::string& text) {
    char* end = nullptr;
    errno = 0;
    const unsigned long value = std::strtoul(text.c_str(), &end, 0);
    if (errno != 0 || end == text.c_str() || *end != '\0' || value > 0xffffffffUL)
        return setup_error("personality", "not a 32-bit persona: " + text);
    if (value == 0xffffffffUL) return setup_error("personality", "0xffffffff only asks for the persona");
    const std::string what = "personality";
    const int previous = ::personality(value);
    if (previous == -1) return refused(what);
    ::personality(static_cast<unsigned int>(previous));
    char detail[96];
    std::snprintf(detail, sizeof detail, "changed the persona from 0x%x to 0x%lx (and back)",
                  static_cast<unsigned int>(previous), value);
    return succeeded(what, detail);
}

// --- descriptors the caller left open -------------------------------------------

// Creating a file NAME in the directory open on descriptor FD, which may be one
// the sandbox does not let the command write (a directory fd the caller leaked).
int attack_fd_write(int dir_fd, const std::string& name, const std::string& text) {
    const std::string what = "fd-write " + std::to_string(dir_fd) + " " + name;
    const int fd = ::openat(dir_fd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) return refused(what, "openat");
    const bool ok = write_all(fd, text);
    const int err = errno;
    ::close(fd);
    errno = err;
    if (!ok) return refused(what, "write");
    return succeeded(what, "created it and wrote " + std::to_string(text.size()) + " bytes");
}

// Sending on an inherited descriptor (a socket connected to a service outside, a
// pipe into the caller's shell).
int attack_fd_send(int fd, const std::string& text) {
    const std::string what = "fd-send " + std::to_string(fd);
    if (!write_all(fd, text + "\n")) return refused(what);
    return succeeded(what, "sent " + std::to_string(text.size() + 1) + " bytes");
}

// Reading from an inherited descriptor: one read of up to 4 KiB.
int attack_fd_read(int fd) {
    const std::string what = "fd-read " + std::to_string(fd);
    std::array<char, 4096> buf{};
    ssize_t n = 0;
    while ((n = ::read(fd, buf.data(), buf.size())) < 0)
        if (errno != EINTR) return refused(what);
    const std::string_view got(buf.data(), static_cast<std::size_t>(n));
    return succeeded(what, "read " + std::to_string(n) + " bytes: " + one_line(got.substr(0, got.find('\n'))));
}

// The descriptors beyond 0, 1 and 2 that the process started with: what the
// sandbox let through from its caller.
int attack_fds() {
    DIR* dir = ::opendir("/proc/self/fd");
    if (dir == nullptr) return setup_error("fds", "cannot read /proc/self/fd: " + describe_errno(errno));
    std::vector<int> open_fds;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string_view name = entry->d_name;
        if (!all_digits(name)) continue;
        const int fd = std::atoi(entry->d_name);
        if (fd > 2 && fd != ::dirfd(dir)) open_fds.push_back(fd);
    }
    ::closedir(dir);
    if (open_fds.empty()) {
        std::printf("fds: refused: only 0, 1 and 2 are open\n");
        return kRefused;
    }
    std::sort(open_fds.begin(), open_fds.end());
    std::string list;
    for (int fd : open_fds) list += " " + std::to_string(fd);
    return succeeded("fds", "open beyond 0-2:" + list);
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

bool parse_fd(const std::string& text, int& fd) {
    char* end = nullptr;
    errno = 0;
    const long v = std::strtol(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str() || *end != '\0' || v < 0 || v > 0x7fffffff) return false;
    fd = static_cast<int>(v);
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

int with_fd(const std::string& text, const std::function<int(int)>& f) {
    int fd = 0;
    if (!parse_fd(text, fd)) return setup_error("fd", "not a descriptor: " + text);
    return f(fd);
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
        {"flip-create", "BENIGN TARGET ROUNDS", 3, 3,
         [](const Args& a) { return attack_flip_create(a[0], a[1], a[2]); }},
        {"unlink", "PATH", 1, 1, [](const Args& a) { return attack_unlink(a[0]); }},
        {"replace", "PATH TEXT", 2, 2, [](const Args& a) { return attack_replace(a[0], a[1]); }},
        {"writable", "DIR...", 1, SIZE_MAX, [](const Args& a) { return attack_writable(a); }},
        {"open-write", "PATH...", 1, SIZE_MAX, [](const Args& a) { return attack_open_write(a); }},
        {"unshare", "user,mount,net,pid,ipc,uts", 1, 1, [](const Args& a) { return attack_unshare(a[0]); }},
        {"clone-ns", "user,mount,net,pid,ipc,uts", 1, 1, [](const Args& a) { return attack_clone_ns(a[0]); }},
        {"clone3", "", 0, 0, [](const Args&) { return attack_clone3(); }},
        {"mount", "DIR", 1, 1, [](const Args& a) { return attack_mount(a[0]); }},
        {"remount-rw", "PATH", 1, 1, [](const Args& a) { return attack_remount_rw(a[0]); }},
        {"io-uring", "", 0, 0, [](const Args&) { return attack_io_uring(); }},
        {"unix-connect", "PATH", 1, 1, [](const Args& a) { return attack_unix_connect(a[0]); }},
        {"unix-serve", "PATH READYFILE", 2, 2, [](const Args& a) { return unix_serve(a[0], a[1]); }},
        {"http-serve", "PORTFILE [ADDRESS]", 1, 2,
         [](const Args& a) { return http_serve(a[0], a.size() > 1 ? a[1] : std::string()); }},
        {"udp-send", "PORT", 1, 1, [](const Args& a) { return attack_udp_send(a[0]); }},
        {"udp-listen", "PORTFILE SECONDS", 2, 2, [](const Args& a) { return udp_listen(a[0], a[1]); }},
        {"socketpair", "stream|dgram|seqpacket|raw", 1, 1, [](const Args& a) { return attack_socketpair(a[0]); }},
        {"socket", "FAMILY [stream|dgram|seqpacket|raw [PROTOCOL]]", 1, 3,
         [](const Args& a) { return attack_socket(a); }},
        {"tiocsti", "", 0, 0, [](const Args&) { return attack_tiocsti(); }},
        {"x32", "", 0, 0, [](const Args&) { return attack_x32(); }},
        {"i386", "", 0, 0, [](const Args&) { return attack_i386(); }},
        {"see-pid", "PID", 1, 1, [](const Args& a) { return with_pid(a[0], attack_see_pid); }},
        {"kill", "PID", 1, 1, [](const Args& a) { return with_pid(a[0], attack_kill); }},
        {"ptrace", "PID", 1, 1, [](const Args& a) { return with_pid(a[0], attack_ptrace); }},
        {"seccomp-status", "", 0, 0, [](const Args&) { return attack_seccomp_status(); }},
        {"pid1-inject", "SOCKET_PATH [--self-filter]", 1, 2,
         [](const Args& a) {
             if (a.size() > 1 && a[1] != "--self-filter")
                 return setup_error("pid1-inject", "unknown option: " + a[1]);
             return attack_pid1_inject(a[0], a.size() > 1);
         }},
        {"spawn-orphan", "MARKER", 1, 1, [](const Args& a) { return spawn_orphan(a[0]); }},
        {"with-key", "NAME VALUE -- COMMAND [ARG...]", 4, SIZE_MAX, [](const Args& a) { return with_key(a); }},
        {"key-read", "NAME", 1, 1, [](const Args& a) { return attack_key_read(a[0]); }},
        {"without-landlock", "-- COMMAND [ARG...]", 2, SIZE_MAX, [](const Args& a) { return without_landlock(a); }},
        {"key-add", "NAME VALUE", 2, 2, [](const Args& a) { return attack_key_add(a[0], a[1]); }},
        {"perf-event", "", 0, 0, [](const Args&) { return attack_perf_event(); }},
        {"userfaultfd", "", 0, 0, [](const Args&) { return attack_userfaultfd(); }},
        {"personality", "VALUE", 1, 1, [](const Args& a) { return attack_personality(a[0]); }},
        {"fd-write", "FD NAME TEXT", 3, 3,
         [](const Args& a) { return with_fd(a[0], [&](int fd) { return attack_fd_write(fd, a[1], a[2]); }); }},
        {"fd-send", "FD TEXT", 2, 2,
         [](const Args& a) { return with_fd(a[0], [&](int fd) { return attack_fd_send(fd, a[1]); }); }},
        {"fd-read", "FD", 1, 1, [](const Args& a) { return with_fd(a[0], attack_fd_read); }},
        {"fds", "", 0, 0, [](const Args&) { return attack_fds(); }},
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
