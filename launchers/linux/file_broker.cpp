#include "linux/file_broker.hpp"

#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "linux/notify_loop.hpp"
#include "linux/proc_files.hpp"
#include "linux/quiet_thread.hpp"
#include "sbx/core/paths.hpp"

namespace sbx::linux_sandbox {

using launcher::Fd;

namespace {

// The calls the filter stops, by how their arguments lie.
enum class Call {
    open,       // open(path, flags, mode)
    openat,     // openat(dirfd, path, flags, mode)
    creat,      // creat(path, mode)
    mkdir,      // mkdir(path, mode)
    mkdirat,    // mkdirat(dirfd, path, mode)
    mknod,      // mknod(path, mode, dev)
    mknodat,    // mknodat(dirfd, path, mode, dev)
    symlink,    // symlink(target, path)
    symlinkat,  // symlinkat(target, dirfd, path)
    link,       // link(from, path)
    linkat,     // linkat(fromdirfd, from, dirfd, path, flags)
    unlink,     // unlink(path)
    unlinkat,   // unlinkat(dirfd, path, flags)
    rmdir,      // rmdir(path)
    rename,     // rename(from, path)
    renameat,   // renameat(fromdirfd, from, dirfd, path)
    renameat2,  // renameat2(fromdirfd, from, dirfd, path, flags)
    truncate,   // truncate(path, length)
};

struct CallName {
    const char* name;
    Call call;
};

// Those an architecture lacks (aarch64 has no open, mkdir, ...) are left out.
constexpr CallName kCalls[] = {
    {"open", Call::open},         {"openat", Call::openat},       {"creat", Call::creat},
    {"mkdir", Call::mkdir},       {"mkdirat", Call::mkdirat},     {"mknod", Call::mknod},
    {"mknodat", Call::mknodat},   {"symlink", Call::symlink},     {"symlinkat", Call::symlinkat},
    {"link", Call::link},         {"linkat", Call::linkat},       {"unlink", Call::unlink},
    {"unlinkat", Call::unlinkat}, {"rmdir", Call::rmdir},         {"rename", Call::rename},
    {"renameat", Call::renameat}, {"renameat2", Call::renameat2}, {"truncate", Call::truncate},
};

// The open flags that may change a file: an open without them only reads.
constexpr std::uint64_t kChangingOpenFlags[] = {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC};

sbx::Error filter_error(const std::string& what, int rc) {
    return sbx::Error(Errc::sandbox_unavailable, "the file broker's filter: " + what + ": " + std::strerror(-rc));
}

// A path in the command's memory, up to PATH_MAX with its NUL, read a page at
// a time (one may end where the next is not mapped). nullopt when it cannot be
// read whole.
std::optional<std::string> read_string(pid_t tid, std::uint64_t address) {
    constexpr std::size_t kMax = 4096;
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    std::string out;
    while (out.size() < kMax) {
        const std::uint64_t at = address + out.size();
        const std::size_t want = std::min<std::uint64_t>(page - at % page, kMax - out.size());
        char buf[4096];
        iovec local{buf, want};
        iovec remote{reinterpret_cast<void*>(at), want};
        const ssize_t n = ::process_vm_readv(tid, &local, 1, &remote, 1, 0);
        if (n <= 0) return std::nullopt;
        const auto* nul = static_cast<const char*>(std::memchr(buf, '\0', static_cast<std::size_t>(n)));
        if (nul != nullptr) return out.append(buf, static_cast<std::size_t>(nul - buf));
        out.append(buf, static_cast<std::size_t>(n));
    }
    return std::nullopt;
}

// The command's umask, from /proc/TID/status; nullopt when unreadable.
std::optional<mode_t> umask_of(pid_t tid) {
    const std::string field = status_field(tid, "Umask");
    char* end = nullptr;
    const long mask = std::strtol(field.c_str(), &end, 8);
    if (end == field.c_str() || mask < 0 || mask > 0777) return std::nullopt;
    return static_cast<mode_t>(mask);
}

// Where a path of the command's lies: a descriptor on its folder (O_PATH), that
// folder's absolute path, and its last component.
struct Where {
    Fd folder;
    std::string path;  // folder + "/" + name
    std::string name;
    bool slash = false;  // the command wrote it with a trailing slash
};

// The /proc link to the folder a relative path of the command `tid` starts
// from: its working directory (AT_FDCWD) or descriptor `dirfd`; empty for any
// other negative number.
std::string start_link(pid_t tid, int dirfd) {
    if (dirfd == AT_FDCWD) return "/proc/" + std::to_string(tid) + "/cwd";
    if (dirfd >= 0) return "/proc/" + std::to_string(tid) + "/fd/" + std::to_string(dirfd);
    return {};
}

// `text` relative to `dirfd` (AT_FDCWD: the working directory) in the command
// `tid`, resolved as the kernel would up to its last component. nullopt where
// that cannot be done exactly: the kernel then decides.
std::optional<Where> where(pid_t tid, int dirfd, const std::string& text) {
    if (text.empty()) return std::nullopt;
    std::string p = text;
    Where w;
    while (p.size() > 1 && p.back() == '/') {
        p.pop_back();
        w.slash = true;
    }
    const auto cut = p.rfind('/');
    w.name = cut == std::string::npos ? p : p.substr(cut + 1);
    if (w.name.empty() || w.name == "." || w.name == "..") return std::nullopt;
    const std::string folder = cut == std::string::npos ? std::string() : cut == 0 ? std::string("/") : p.substr(0, cut);
    const std::string base = p.front() == '/' ? std::string("/") : start_link(tid, dirfd);
    if (base.empty()) return std::nullopt;
    Fd start(::open(base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (start.get() < 0) return std::nullopt;
    if (folder.empty() || folder == "/") {
        w.folder = std::move(start);
    } else {
        open_how how{};
        how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
        how.resolve = RESOLVE_NO_MAGICLINKS;
        w.folder = Fd(static_cast<int>(::syscall(SYS_openat2, start.get(), folder.c_str(), &how, sizeof how)));
        if (w.folder.get() < 0) return std::nullopt;
    }
    const std::string at = read_link("/proc/self/fd/" + std::to_string(w.folder.get()));
    constexpr std::string_view kDeleted = " (deleted)";
    if (at.empty() || at.front() != '/' || std::string_view(at).ends_with(kDeleted)) return std::nullopt;
    w.path = at == "/" ? "/" + w.name : at + "/" + w.name;
    return w;
}

// What is at `w` (not following a link), or nullopt where nothing is.
std::optional<struct stat> look(const Where& w) {
    struct stat st {};
    if (::fstatat(w.folder.get(), w.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return std::nullopt;
    return st;
}

// A trailing slash names a directory: the broker makes the call only where one
// stands there (or, for mkdir, is to be made), as the kernel would.
bool slash_fits(const Where& w) {
    if (!w.slash) return true;
    const auto st = look(w);
    return st && S_ISDIR(st->st_mode);
}

// The answer to one call.
struct Answer {
    enum class Kind { go_on, result, descriptor } kind = Kind::go_on;
    long value = 0;  // result: 0 or -errno
    Fd fd;           // descriptor: to place in the command
    bool cloexec = false;
};

Answer go_on() { return Answer{}; }
Answer result(int rc) { return Answer{Answer::Kind::result, rc < 0 ? -errno : 0, Fd(), false}; }

// Drops every capability of the calling thread (the others keep theirs): the
// broker makes changes with the command's rights, never more.
bool drop_thread_capabilities() {
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[2]{};
    return ::syscall(SYS_capset, &header, data) == 0;
}

}  // namespace

sbx::expected<Fd> broker_filter_program(bool with_connect) {
    scmp_filter_ctx raw = seccomp_init(SCMP_ACT_ALLOW);
    if (raw == nullptr) return sbx::fail(Errc::sandbox_unavailable, "the file broker's filter: seccomp_init failed");
    struct Release {
        scmp_filter_ctx ctx;
        ~Release() { seccomp_release(ctx); }
    } release{raw};
    if (int rc = seccomp_attr_set(raw, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW); rc < 0)
        return sbx::fail(filter_error("setting the bad-architecture action", rc));
    for (const auto& c : kCalls) {
        const int nr = seccomp_syscall_resolve_name(c.name);
        if (nr < 0) continue;  // not on this architecture
        int rc = 0;
        if (c.call == Call::open || c.call == Call::openat) {
            const unsigned arg = c.call == Call::open ? 1 : 2;
            for (std::uint64_t flag : kChangingOpenFlags) {
                // (flags & flag) == flag; SCMP_CMP's compound literal is C alone.
                const scmp_arg_cmp cmp{arg, SCMP_CMP_MASKED_EQ, flag, flag};
                if (rc == 0) rc = seccomp_rule_add_array(raw, SCMP_ACT_NOTIFY, nr, 1, &cmp);
            }
        } else {
            rc = seccomp_rule_add(raw, SCMP_ACT_NOTIFY, nr, 0);
        }
        if (rc < 0) return sbx::fail(filter_error(std::string("adding ") + c.name, rc));
    }
    if (with_connect)
        if (int rc = seccomp_rule_add(raw, SCMP_ACT_NOTIFY, SCMP_SYS(connect), 0); rc < 0)
            return sbx::fail(filter_error("adding connect", rc));
    Fd fd(::memfd_create("sbx-broker-filter", MFD_CLOEXEC));
    if (fd.get() < 0) return sbx::fail(Errc::sandbox_unavailable, std::string("memfd_create: ") + std::strerror(errno));
    if (int rc = seccomp_export_bpf(raw, fd.get()); rc < 0) return sbx::fail(filter_error("exporting it", rc));
    if (::lseek(fd.get(), 0, SEEK_SET) != 0)
        return sbx::fail(Errc::sandbox_unavailable, std::string("lseek on the broker's filter: ") + std::strerror(errno));
    return fd;
}

sbx::expected<std::unique_ptr<FileBroker>> FileBroker::start(Fd listener, WeakerBroker rules, OnConnect on_connect) {
    Fd wake(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (wake.get() < 0)
        return sbx::fail(Errc::sandbox_unavailable, std::string("the file broker's eventfd: ") + std::strerror(errno));
    std::unique_ptr<FileBroker> b(
        new FileBroker(std::move(listener), std::move(wake), std::move(rules), std::move(on_connect)));
    auto thread = quiet_thread([p = b.get()] { p->serve(); }, "the file broker's thread");
    SBX_TRY(thread);
    b->thread_ = std::move(*thread);
    return b;
}

FileBroker::~FileBroker() { stop(); }

void FileBroker::stop() {
    if (!thread_.joinable()) return;
    const std::uint64_t one = 1;
    (void)!::write(wake_.get(), &one, sizeof one);
    thread_.join();
    listener_.reset();
}

namespace {

// The broker's side of one call, `n` (of `nr` on the native architecture).
class Serving {
public:
    Serving(const WeakerBroker& rules, const seccomp_notif& n, int listener) : rules_(rules), n_(n), listener_(listener) {}

    Answer answer(Call call) {
        const auto& a = n_.data.args;
        switch (call) {
            case Call::open: return open(AT_FDCWD, a[0], a[1], a[2]);
            case Call::openat: return open(dirfd(a[0]), a[1], a[2], a[3]);
            case Call::creat: return open(AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC, a[1]);
            case Call::mkdir: return make_dir(AT_FDCWD, a[0], a[1]);
            case Call::mkdirat: return make_dir(dirfd(a[0]), a[1], a[2]);
            case Call::mknod: return make_node(AT_FDCWD, a[0], a[1], a[2]);
            case Call::mknodat: return make_node(dirfd(a[0]), a[1], a[2], a[3]);
            case Call::symlink: return make_symlink(a[0], AT_FDCWD, a[1]);
            case Call::symlinkat: return make_symlink(a[0], dirfd(a[1]), a[2]);
            case Call::link: return link(AT_FDCWD, a[0], AT_FDCWD, a[1], 0);
            case Call::linkat: return link(dirfd(a[0]), a[1], dirfd(a[2]), a[3], a[4]);
            case Call::unlink: return remove(AT_FDCWD, a[0], 0);
            case Call::unlinkat: return remove(dirfd(a[0]), a[1], a[2]);
            case Call::rmdir: return remove(AT_FDCWD, a[0], AT_REMOVEDIR);
            case Call::rename: return rename(AT_FDCWD, a[0], AT_FDCWD, a[1], 0);
            case Call::renameat: return rename(dirfd(a[0]), a[1], dirfd(a[2]), a[3], 0);
            case Call::renameat2: return rename(dirfd(a[0]), a[1], dirfd(a[2]), a[3], a[4]);
            case Call::truncate: return truncate(a[0], a[1]);
        }
        return go_on();
    }

private:
    const WeakerBroker& rules_;
    const seccomp_notif& n_;
    int listener_;  // the broker's (FileBroker::listener_), borrowed for this one call

    pid_t tid() const { return static_cast<pid_t>(n_.pid); }
    static int dirfd(std::uint64_t v) { return static_cast<int>(static_cast<std::uint32_t>(v)); }

    // A path of the command's: its text, read once, and where it was given from.
    struct Named {
        int dirfd;
        std::string text;
    };

    std::optional<Named> named(int dirfd, std::uint64_t address) const {
        auto text = read_string(tid(), address);
        if (!text) return std::nullopt;
        return Named{dirfd, std::move(*text)};
    }

    // The quick way for a call Landlock's grants allow by themselves (most
    // of them: a build's output, node_modules): the path made absolute from
    // where its starting folder lies now, folded by its text alone (nullopt
    // where `..` makes that guesswork). A link on the way can make it wrong,
    // which only ever lets the kernel go on, where Landlock decides on where
    // the path really leads.
    std::optional<std::string> by_text(const Named& p) const {
        if (p.text.empty()) return std::nullopt;
        for (auto c : paths::components(p.text))
            if (c == "..") return std::nullopt;
        if (p.text.front() == '/') return paths::normalize(p.text);
        const std::string link = start_link(tid(), p.dirfd);
        const std::string at = link.empty() ? std::string() : read_link(link);
        if (at.empty() || at.front() != '/') return std::nullopt;
        return paths::join(at, p.text);
    }

    bool landlock_allows(FileChange change, const Named& p, const Named* from = nullptr) const {
        const auto path = by_text(p);
        if (!path) return false;
        if (from == nullptr) return rules_.landlock_allows(change, *path);
        const auto from_path = by_text(*from);
        return from_path && rules_.landlock_allows(change, *path, *from_path);
    }

    // The call's path resolved exactly, unless Landlock allows the change
    // anyway (then nullopt, as where it cannot be resolved).
    std::optional<Where> where_of(FileChange change, int dirfd, std::uint64_t address) const {
        auto p = named(dirfd, address);
        if (!p || landlock_allows(change, *p)) return std::nullopt;
        return where(tid(), p->dirfd, p->text);
    }

    // Both paths of a rename or a link, the same way.
    std::optional<std::pair<Where, Where>> where_of_two(FileChange change, int from_dirfd, std::uint64_t from_address,
                                                        int dirfd, std::uint64_t address) const {
        auto from = named(from_dirfd, from_address);
        auto p = named(dirfd, address);
        if (!from || !p || landlock_allows(change, *p, &*from)) return std::nullopt;
        auto w_from = where(tid(), from->dirfd, from->text);
        auto w = where(tid(), p->dirfd, p->text);
        if (!w_from || !w) return std::nullopt;
        return std::pair<Where, Where>(std::move(*w_from), std::move(*w));
    }

    // Whether the broker makes `change`; for what it makes, the command's
    // umask set for it. Everything was read of a caller still waiting: not of
    // another process under a number used again.
    bool ours(FileChange change, const Where& w, const Where* from = nullptr) const {
        if (rules_.step(change, w.path, from != nullptr ? from->path : std::string()) != BrokerStep::broker)
            return false;
        if (change == FileChange::make || change == FileChange::make_dir) {
            const auto mask = umask_of(tid());
            if (!mask) return false;
            ::umask(*mask);
        }
        std::uint64_t id = n_.id;
        return still_waiting(listener_, id);
    }

    Answer open(int dirfd, std::uint64_t path, std::uint64_t flags64, std::uint64_t mode) {
        const int flags = static_cast<int>(flags64);
        // O_TMPFILE holds O_DIRECTORY's bit; O_PATH opens nothing for writing.
        if ((flags & (O_PATH | O_DIRECTORY)) != 0) return go_on();
        const FileChange change = (flags & O_CREAT) != 0 ? FileChange::make : FileChange::write;
        auto w = where_of(change, dirfd, path);
        if (!w || w->slash || !ours(change, *w)) return go_on();
        // Never following a link at the last step, never waiting on a FIFO.
        Fd fd(::openat(w->folder.get(), w->name.c_str(), flags | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
                       static_cast<mode_t>(mode & 07777)));
        if (fd.get() < 0) {
            // A link there the caller would follow: the kernel follows it, and
            // Landlock decides. A FIFO with no reader (ENXIO, for O_NONBLOCK):
            // the broker waits on nobody, so the kernel decides that too.
            if ((errno == ELOOP && (flags & O_NOFOLLOW) == 0) || errno == ENXIO) return go_on();
            return result(-1);
        }
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return go_on();
        if ((flags & O_NONBLOCK) == 0) ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
        return Answer{Answer::Kind::descriptor, 0, std::move(fd), (flags & O_CLOEXEC) != 0};
    }

    Answer make_dir(int dirfd, std::uint64_t path, std::uint64_t mode) {
        auto w = where_of(FileChange::make_dir, dirfd, path);
        if (!w || !ours(FileChange::make_dir, *w)) return go_on();
        return result(::mkdirat(w->folder.get(), w->name.c_str(), static_cast<mode_t>(mode & 07777)));
    }

    Answer make_node(int dirfd, std::uint64_t path, std::uint64_t mode64, std::uint64_t) {
        const auto mode = static_cast<mode_t>(mode64);
        const mode_t type = mode & S_IFMT;
        if (type != 0 && type != S_IFREG && type != S_IFIFO) return go_on();  // devices and sockets: the kernel's
        auto w = where_of(FileChange::make, dirfd, path);
        if (!w || w->slash || !ours(FileChange::make, *w)) return go_on();
        return result(::mknodat(w->folder.get(), w->name.c_str(), mode & (S_IFMT | 07777), 0));
    }

    Answer make_symlink(std::uint64_t target, int dirfd, std::uint64_t path) {
        const auto text = read_string(tid(), target);
        if (!text) return go_on();
        auto w = where_of(FileChange::make, dirfd, path);
        if (!w || w->slash || !ours(FileChange::make, *w)) return go_on();
        return result(::symlinkat(text->c_str(), w->folder.get(), w->name.c_str()));
    }

    Answer link(int from_dirfd, std::uint64_t from_path, int dirfd, std::uint64_t path, std::uint64_t flags) {
        if (flags != 0) return go_on();  // following a link, or a descriptor's file: the kernel's
        auto both = where_of_two(FileChange::link, from_dirfd, from_path, dirfd, path);
        if (!both) return go_on();
        auto& [from, w] = *both;
        if (from.slash || w.slash || !ours(FileChange::link, w, &from)) return go_on();
        return result(::linkat(from.folder.get(), from.name.c_str(), w.folder.get(), w.name.c_str(), 0));
    }

    Answer remove(int dirfd, std::uint64_t path, std::uint64_t flags) {
        if ((flags & ~static_cast<std::uint64_t>(AT_REMOVEDIR)) != 0) return go_on();
        auto w = where_of(FileChange::remove, dirfd, path);
        if (!w || (w->slash && flags == 0) || !slash_fits(*w) || !ours(FileChange::remove, *w)) return go_on();
        return result(::unlinkat(w->folder.get(), w->name.c_str(), static_cast<int>(flags)));
    }

    Answer rename(int from_dirfd, std::uint64_t from_path, int dirfd, std::uint64_t path, std::uint64_t flags) {
        if ((flags & ~static_cast<std::uint64_t>(RENAME_NOREPLACE | RENAME_EXCHANGE)) != 0) return go_on();
        auto both = where_of_two(FileChange::rename, from_dirfd, from_path, dirfd, path);
        if (!both) return go_on();
        auto& [from, w] = *both;
        if (!ours(FileChange::rename, w, &from)) return go_on();
        // A trailing slash on either names a directory.
        if (from.slash || w.slash) {
            const auto st = look(from);
            if (!st || !S_ISDIR(st->st_mode)) return go_on();
        }
        return result(::renameat2(from.folder.get(), from.name.c_str(), w.folder.get(), w.name.c_str(),
                                  static_cast<unsigned>(flags)));
    }

    Answer truncate(std::uint64_t path, std::uint64_t length) {
        auto w = where_of(FileChange::write, AT_FDCWD, path);
        if (!w || w->slash || !ours(FileChange::write, *w)) return go_on();
        Fd fd(::openat(w->folder.get(), w->name.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        if (fd.get() < 0) return errno == ELOOP ? go_on() : result(-1);
        struct stat st {};
        if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return go_on();
        return result(::ftruncate(fd.get(), static_cast<off_t>(length)));
    }
};

}  // namespace

void FileBroker::serve() {
    // A working directory and umask of the thread's own, and no capability;
    // without them the broker makes nothing: every call goes on to the kernel.
    const bool fit = ::unshare(CLONE_FS) == 0 && drop_thread_capabilities();
    std::array<std::pair<int, Call>, std::size(kCalls)> numbers{};
    std::size_t known = 0;
    for (const auto& c : kCalls)
        if (const int nr = seccomp_syscall_resolve_name(c.name); nr >= 0) numbers[known++] = {nr, c.call};
    const auto native = static_cast<std::uint32_t>(seccomp_arch_native());
    serve_notifications(listener_.get(), wake_.get(), [&](const seccomp_notif& n) {
        if (on_connect_ && n.data.nr == SCMP_SYS(connect) && n.data.arch == native) return on_connect_(n);
        std::optional<Call> call;
        for (std::size_t i = 0; i < known; ++i)
            if (numbers[i].first == n.data.nr) call = numbers[i].second;
        Answer a;
        if (fit && call && n.data.arch == native) a = Serving(rules_, n, listener_.get()).answer(*call);
        (a.kind == Answer::Kind::go_on ? continued_ : made_).fetch_add(1);
        if (a.kind == Answer::Kind::descriptor) {
            seccomp_notif_addfd add{};
            add.id = n.id;
            add.flags = SECCOMP_ADDFD_FLAG_SEND;
            add.srcfd = static_cast<std::uint32_t>(a.fd.get());
            add.newfd_flags = a.cloexec ? O_CLOEXEC : 0;
            if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ADDFD, &add) >= 0 || errno == ENOENT) return;
            a = result(-1);  // EMFILE and the like: the call fails so
        }
        if (a.kind == Answer::Kind::go_on) go_on_with(listener_.get(), n.id);
        else respond(listener_.get(), n.id, static_cast<int>(a.value));
    });
}

}  // namespace sbx::linux_sandbox
