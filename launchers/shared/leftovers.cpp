#include "shared/leftovers.hpp"

#include "base/fd_io.hpp"
#include "sbx/io/placeholder_registry.hpp"
#include "shared/root_group.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sbx/core/error.hpp"
#include "sbx/core/paths.hpp"

namespace sbx::launcher {

namespace {

sbx::Error errno_error(const std::string& what, const std::string& path, int err) {
    return sbx::Error(Errc::io_error, what + ": " + std::strerror(err)).in_file(path);
}

// Directories on the way to a placeholder are opened one at a time, never through
// a symlink; on Linux as O_PATH descriptors, which need no permission on the
// directory itself, so one the command left at mode 000 can still be opened up.
#if defined(O_PATH)
constexpr int kWalkFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
int set_mode(int fd, mode_t mode) { return ::chmod(("/proc/self/fd/" + std::to_string(fd)).c_str(), mode); }
#else
constexpr int kWalkFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
int set_mode(int fd, mode_t mode) { return ::fchmod(fd, mode); }
#endif

// How deep remove_tree holds directories open at once: a folder deeper than
// this (a command can nest thousands, past PATH_MAX and past the descriptors
// a process may hold) is moved up to the top and emptied from there.
constexpr int kMaxOpenDepth = 64;

// At most this many passes (each 64 deeper than the last): a tree a quarter
// of a million folders deep, far past what any file system holds usefully.
constexpr int kMaxPasses = 4096;

// One removal's top directory, where folders too deep to reach are moved.
struct TreeRemoval {
    int top = -1;
    std::size_t counter = 0;  // names given to moved folders
    std::size_t moved = 0;    // folders moved in this pass
};

// The folder `name` of `dirfd`, which its owner (us: the command ran as us)
// made unreadable, made readable again and opened, following no link on the
// way (a link put in its place is not followed to chmod what it names).
Fd open_up(int dirfd, const std::string& name) {
#if defined(O_PATH)
    const Fd at(::openat(dirfd, name.c_str(), kWalkFlags));
    if (!at.ok() || set_mode(at.get(), 0700) != 0) return Fd();
    return Fd(::openat(at.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
#else
    if (::fchmodat(dirfd, name.c_str(), 0700, AT_SYMLINK_NOFOLLOW) != 0) return Fd();
    return Fd(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
#endif
}

// Moves the folder `name` of `dirfd` to the top under a name not taken there.
sbx::expected<void> move_to_top(int dirfd, const std::string& name, const std::string& path, TreeRemoval& r) {
    for (int attempt = 0; attempt < 1000; ++attempt) {
        const std::string to = ".sbx-deep-" + std::to_string(r.counter++);
        struct stat st {};
        if (::fstatat(r.top, to.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) continue;
        if (::renameat(dirfd, name.c_str(), r.top, to.c_str()) != 0) return sbx::fail(errno_error("cannot move", path, errno));
        ++r.moved;
        return {};
    }
    return sbx::fail(errno_error("cannot move", path, EEXIST));
}

// Empties the directory open at `dirfd`, `depth` below the top. Directories
// the command made unwritable or unreadable are opened up first: they are ours.
sbx::expected<void> empty_directory(Fd dirfd, const std::string& path, TreeRemoval& r, int depth) {
    struct stat st {};
    if (::fstat(dirfd.get(), &st) == 0 && (st.st_mode & 0700) != 0700)
        (void)::fchmod(dirfd.get(), (st.st_mode & 07777) | 0700);
    DIR* dir = ::fdopendir(dirfd.get());
    if (dir == nullptr) return sbx::fail(errno_error("cannot list", path, errno));
    (void)dirfd.release();  // the DIR's now, closed by closedir
    ::rewinddir(dir);         // a copy of the top's descriptor shares its offset with the last pass's
    std::vector<std::string> names;
    while (const dirent* e = ::readdir(dir)) {
        const std::string_view n = e->d_name;
        if (n != "." && n != "..") names.emplace_back(n);
    }
    sbx::expected<void> result;
    for (const auto& name : names) {
        const std::string child = path + "/" + name;
        if (::unlinkat(::dirfd(dir), name.c_str(), 0) == 0 || errno == ENOENT) continue;
        if (errno != EISDIR && errno != EPERM) {
            result = sbx::fail(errno_error("cannot remove", child, errno));
            continue;
        }
        if (depth + 1 >= kMaxOpenDepth) {
            if (auto moved = move_to_top(::dirfd(dir), name, child, r); !moved) result = moved;
            continue;
        }
        Fd sub(::openat(::dirfd(dir), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        // A folder made unreadable (chmod 000) is ours to open up again.
        if (!sub.ok() && errno == EACCES) sub = open_up(::dirfd(dir), name);
        if (!sub.ok()) {
            result = sbx::fail(errno_error("cannot open", child, errno));
            continue;
        }
        if (auto e = empty_directory(std::move(sub), child, r, depth + 1); !e) result = e;
        if (::unlinkat(::dirfd(dir), name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
            result = sbx::fail(errno_error("cannot remove", child, errno));
    }
    ::closedir(dir);
    return result;
}

// Directory modes changed for one removal, put back when it is done.
class ModeChanges {
public:
    ModeChanges() = default;
    ModeChanges(const ModeChanges&) = delete;
    ModeChanges& operator=(const ModeChanges&) = delete;
    ~ModeChanges() {
        for (auto it = changed_.rbegin(); it != changed_.rend(); ++it) (void)set_mode(it->first.get(), it->second);
    }
    // Gives us `bits` on the directory open at `fd` when it is ours and lacks
    // them: the command, running as us, may have taken them away.
    bool grant(int fd, mode_t bits) {
        struct stat st {};
        if (::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || (st.st_mode & bits) == bits)
            return false;
        Fd keep(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
        if (!keep.ok() || set_mode(fd, (st.st_mode & 07777) | bits) != 0) return false;
        changed_.emplace_back(std::move(keep), st.st_mode & 07777);
        return true;
    }

private:
    std::vector<std::pair<Fd, mode_t>> changed_;  // each with its mode before; restored in reverse
};

// The directory placeholders are removed from, opened once for each run of
// them that lies there (most lie at the root's top): each directory on the way
// opened without following a symlink, search permission taken back where the
// command removed ours, and the modes restored when the next one is opened or
// the removals are done.
class PlaceholderDir {
public:
    PlaceholderDir() = default;
    PlaceholderDir(const PlaceholderDir&) = delete;
    PlaceholderDir& operator=(const PlaceholderDir&) = delete;
    ~PlaceholderDir() { close(); }

    // Opens `path` unless it is the one open. -1: it is gone (ENOENT), or the
    // problem is in `why`.
    int open(const std::string& path, std::string& why) {
        if (fd_.ok() && path == path_) return fd_.get();
        close();
        auto modes = std::make_unique<ModeChanges>();
        Fd dir(::open("/", kWalkFlags));
        if (!dir.ok()) {
            why = "cannot open /: " + std::string(std::strerror(errno));
            return -1;
        }
        for (const auto comp : sbx::paths::components(path)) {
            const std::string name(comp);
            Fd next(::openat(dir.get(), name.c_str(), kWalkFlags));
            if (!next.ok() && errno == EACCES && modes->grant(dir.get(), S_IXUSR))
                next = Fd(::openat(dir.get(), name.c_str(), kWalkFlags));
            if (!next.ok()) {
                if (errno != ENOENT) why = "cannot open the directory " + name + " on the way: " + std::strerror(errno);
                return -1;
            }
            dir = std::move(next);
        }
        fd_ = std::move(dir);
        path_ = path;
        modes_ = std::move(modes);
        return fd_.get();
    }
    ModeChanges& modes() { return *modes_; }

private:
    void close() {
        modes_.reset();  // the modes back first, through their own descriptors
        fd_.reset();
        path_.clear();
    }
    std::string path_;
    Fd fd_;
    std::unique_ptr<ModeChanges> modes_;
};

// Removes the placeholder `l` when it is still the one made, from its directory
// opened in `dir`, write permission taken back where the command removed ours.
// Returns the problem, if any.
std::optional<std::string> remove_placeholder(const Leftover& l, sbx::Placeholder kind, PlaceholderDir& dirs) {
    const std::string where = l.path + ": ";
    if (!sbx::paths::is_absolute(l.path) || l.path == "/") return where + "not a placeholder's path";
    std::string why;
    const int dir = dirs.open(sbx::paths::parent(l.path), why);
    if (dir < 0) {
        if (why.empty()) return std::nullopt;  // gone with its directory
        return where + why;
    }
    ModeChanges& modes = dirs.modes();
    const std::string name(sbx::paths::components(l.path).back());
    struct stat st {};
    int rc = ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW);
    if (rc != 0 && errno == EACCES && modes.grant(dir, S_IXUSR)) rc = ::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW);
    if (rc != 0) {
        if (errno == ENOENT) return std::nullopt;
        return where + "cannot look at the placeholder: " + std::strerror(errno);
    }
    if (!sbx::is_made_placeholder(st, sbx::RegisteredPlaceholder{kind, l.dev, l.ino, l.path}))
        return where + "left in place: it is no longer the placeholder sbx made";
    const int flags = kind == sbx::Placeholder::directory ? AT_REMOVEDIR : 0;
    rc = ::unlinkat(dir, name.c_str(), flags);
    if (rc != 0 && (errno == EACCES || errno == EPERM) && modes.grant(dir, S_IWUSR | S_IXUSR))
        rc = ::unlinkat(dir, name.c_str(), flags);
    if (rc != 0 && errno != ENOENT) return where + "cannot remove the placeholder: " + std::strerror(errno);
    return std::nullopt;
}

bool wait_gone(pid_t pid) {
    // The sandbox's bubblewrap dies with the launcher (--die-with-parent), and
    // the processes inside with it; a zombie nobody reaps counts as gone.
    for (int i = 0; i < 500; ++i) {
        if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
#if defined(__linux__)
        char buf[256] = {};
        const std::string stat_path = "/proc/" + std::to_string(pid) + "/stat";
        const int fd = ::open(stat_path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) return true;
        const ssize_t n = ::read(fd, buf, sizeof buf - 1);
        ::close(fd);
        if (n > 0) {
            const char* paren = std::strrchr(buf, ')');
            if (paren != nullptr && paren[1] == ' ' && (paren[2] == 'Z' || paren[2] == 'X')) return true;
        }
#endif  // elsewhere the dead launcher's zombie goes to init, which reaps it
        const timespec ten_ms{0, 10'000'000};
        ::nanosleep(&ten_ms, nullptr);
    }
    return false;
}

// What the launcher has told the reaper so far.
struct ReaperOrders {
    std::optional<termios> modes;  // the caller's terminal's, while the launcher has it raw or the command holds it
    int ldisc = -1;                 // and its line discipline, where the command holds it
    std::vector<Leftover> list;
    pid_t sandbox = -1;
    pid_t group_to_kill = -1;
    std::string group_lock, group_live;
};

// Reads the launcher's messages until its end of the pipe closes (it is gone)
// or a message is malformed; at 'X' (dismissed) the reaper exits.
void read_orders(int fd, ReaperOrders& o) {
    auto read_exact = [&](void* out, std::size_t n) {
        auto* p = static_cast<char*>(out);
        while (n > 0) {
            const ssize_t r = ::read(fd, p, n);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) return false;
            p += r;
            n -= static_cast<std::size_t>(r);
        }
        return true;
    };
    for (;;) {
        char kind = 0;
        std::uint32_t len = 0;
        if (!read_exact(&kind, 1) || !read_exact(&len, sizeof len) || len > (1u << 20)) return;
        std::string payload(len, '\0');
        if (!read_exact(payload.data(), len)) return;
        if (kind == 'X') ::_exit(0);
        if (kind == 'P') {
            o.sandbox = static_cast<pid_t>(std::stol(payload));
            continue;
        }
        if (kind == 'K') {
            o.group_to_kill = static_cast<pid_t>(std::stol(payload));
            continue;
        }
        if (kind == 'M') {
            o.modes.reset();
            o.ldisc = -1;
            if (payload.size() == sizeof(termios) + sizeof(int)) {
                std::memcpy(&o.modes.emplace(), payload.data(), sizeof(termios));
                std::memcpy(&o.ldisc, payload.data() + sizeof(termios), sizeof(int));
            }
            continue;
        }
        if (kind == 'G') {
            const auto nul = payload.find('\0');
            if (nul == std::string::npos) return;
            o.group_lock = payload.substr(0, nul);
            o.group_live = payload.substr(nul + 1);
            continue;
        }
        Leftover l{static_cast<LeftoverKind>(kind), {}, 0, 0};
        if (payload.size() < 2 * sizeof(std::uint64_t)) return;
        std::memcpy(&l.dev, payload.data(), sizeof l.dev);
        std::memcpy(&l.ino, payload.data() + sizeof l.dev, sizeof l.ino);
        l.path = payload.substr(2 * sizeof(std::uint64_t));
        o.list.push_back(std::move(l));
    }
}

// The launcher is gone without dismissing us. The caller gets its terminal back
// as it was, at once. Where nothing ends the command with it (sbx-mac), its
// process group is ended here. Then what the launcher made is removed.
[[noreturn]] void clean_up_after(const ReaperOrders& o, int tty) {
    if (o.modes && tty >= 0) {
        int now = -1;
        if (o.ldisc >= 0 && ::ioctl(tty, TIOCGETD, &now) == 0 && now != o.ldisc) ::ioctl(tty, TIOCSETD, &o.ldisc);
        ::tcsetattr(tty, TCSANOW, &*o.modes);
        ::tcflush(tty, TCIFLUSH);  // what the command's queries provoked is no input for the shell
    }
    if (o.group_to_kill > 0) ::kill(-o.group_to_kill, SIGKILL);
    if (o.sandbox > 0) wait_gone(o.sandbox);
    for (int attempt = 0; attempt < 20; ++attempt) {
        if (remove_leftovers(o.list).empty()) break;
        const timespec fifty_ms{0, 50'000'000};
        ::nanosleep(&fifty_ms, nullptr);
    }
    // The launcher's shared lock went with it; leave the root's group for it.
    if (!o.group_lock.empty()) RootGroup::leave_for_dead(o.group_lock, o.group_live);
    ::_exit(0);
}

[[noreturn]] void reaper_main(int fd, int tty) {
    ::setsid();
    for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2})
        ::signal(sig, SIG_IGN);
    const int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0)
        for (int std_fd = 0; std_fd < 3; ++std_fd) ::dup2(null, std_fd);
    // Nothing the caller left open stays open for the reaper's life (a pipe whose
    // reader waits for the end, a lock).
    const int keep[] = {fd, tty};
    sbx::launcher::sweep_fds(keep, sbx::launcher::FdSweep::close);
    ReaperOrders orders;
    read_orders(fd, orders);
    clean_up_after(orders, tty);
}

}  // namespace

sbx::expected<void> remove_tree(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return {};
        return sbx::fail(errno_error("cannot look at", path, errno));
    }
    if (!S_ISDIR(st.st_mode)) {
        if (::unlink(path.c_str()) != 0 && errno != ENOENT) return sbx::fail(errno_error("cannot remove", path, errno));
        return {};
    }
    Fd top(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!top.ok()) return sbx::fail(errno_error("cannot open", path, errno));
    // Each pass empties what lies within kMaxOpenDepth and moves what lies
    // deeper to the top, for the next pass.
    TreeRemoval r{top.get()};
    sbx::expected<void> emptied;
    int passes = 0;
    do {
        r.moved = 0;
        Fd pass(::fcntl(top.get(), F_DUPFD_CLOEXEC, 0));
        if (!pass.ok()) return sbx::fail(errno_error("cannot open", path, errno));
        emptied = empty_directory(std::move(pass), path, r, 0);
    } while (emptied && r.moved > 0 && ++passes < kMaxPasses);
    if (::rmdir(path.c_str()) != 0 && errno != ENOENT) return sbx::fail(errno_error("cannot remove", path, errno));
    return emptied;
}

std::vector<std::string> remove_leftovers(const std::vector<Leftover>& list) {
    std::vector<std::string> problems;
    PlaceholderDir dirs;
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
        if (const auto kind = placeholder_kind(it->kind)) {
            if (auto problem = remove_placeholder(*it, *kind, dirs)) problems.push_back(std::move(*problem));
            continue;
        }
        if (it->kind == LeftoverKind::cgroup) {
            if (::rmdir(it->path.c_str()) != 0 && errno != ENOENT)
                problems.push_back(sbx::to_string(errno_error("cannot remove the cgroup", it->path, errno)));
            continue;
        }
        if (auto r = remove_tree(it->path); !r) problems.push_back(sbx::to_string(r.error()));
    }
    return problems;
}

sbx::expected<Reaper> Reaper::start() {
    Pipe orders;
    if (!orders.open()) return sbx::fail(errno_error("cannot make the reaper's pipe", "", errno));
    const pid_t pid = ::fork();
    if (pid < 0) return sbx::fail(errno_error("cannot start the reaper", "", errno));
    if (pid == 0) {
        orders.write.reset();
        // Nothing but the pipe: the reaper must not keep the caller's pipes or any
        // descriptor of the sandbox open; the caller's terminal only to restore its
        // modes (and only a terminal: a pipe's reader would wait for us).
        if (orders.read.get() != 3 && ::dup2(orders.read.get(), 3) < 0) ::_exit(1);
        const int tty = ::isatty(STDIN_FILENO) != 0 && ::dup2(STDIN_FILENO, 4) == 4 ? 4 : -1;
#if defined(__linux__)
        ::close_range(5, ~0U, 0);
#else
        for (int fd = 5, end = static_cast<int>(::getdtablesize()); fd < end; ++fd) ::close(fd);
#endif
        if (tty < 0) ::close(4);
        reaper_main(3, tty);  // never returns
    }
    return Reaper(pid, std::move(orders.write));
}

Reaper::Reaper(Reaper&& other) noexcept : pid_(std::exchange(other.pid_, -1)), fd_(std::move(other.fd_)) {}

Reaper::~Reaper() {
    fd_.reset();
    wait();
}

void Reaper::wait() {
    if (pid_ <= 0) return;
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
}

void Reaper::send(char kind, const std::string& payload) {
    if (!fd_.ok()) return;
    std::string msg(1, kind);
    const auto len = static_cast<std::uint32_t>(payload.size());
    msg.append(reinterpret_cast<const char*>(&len), sizeof len);
    msg += payload;
    write_all(fd_.get(), msg.data(), msg.size());
}

void Reaper::made(const Leftover& l) {
    std::string payload(2 * sizeof(std::uint64_t), '\0');
    std::memcpy(payload.data(), &l.dev, sizeof l.dev);
    std::memcpy(payload.data() + sizeof l.dev, &l.ino, sizeof l.ino);
    send(static_cast<char>(l.kind), payload + l.path);
}

void Reaper::sandbox_pid(pid_t pid) { send('P', std::to_string(pid)); }

void Reaper::kill_group(pid_t pgid) { send('K', std::to_string(pgid)); }

void Reaper::group(const std::string& lock_path, const std::string& live_path) {
    send('G', lock_path + '\0' + live_path);
}

void Reaper::terminal_modes(const termios* modes, int ldisc) {
    std::string payload;
    if (modes != nullptr) {
        payload.assign(reinterpret_cast<const char*>(modes), sizeof *modes);
        payload.append(reinterpret_cast<const char*>(&ldisc), sizeof ldisc);
    }
    send('M', payload);
}

void Reaper::dismiss() {
    send('X', "");
    fd_.reset();
}

}  // namespace sbx::launcher
