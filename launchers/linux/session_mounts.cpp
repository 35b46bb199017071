// launchers/linux/session_mounts.cpp - mounts a session adds while it runs (session_mounts.hpp).
#include "linux/session_mounts.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/mount.h>
#include <linux/nsfs.h>
#include <linux/openat2.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/fd_io.hpp"
#include "linux/placeholders.hpp"
#include "sbx/io/placeholder_registry.hpp"

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

namespace sbx::linux_sandbox {

using launcher::Fd;

namespace {

// How far the helper got with one mount.
enum class Step : int {
    made = 0,
    open,         // its path could not be opened without a symbolic link
    not_planned,  // its path is not the file the plan saw
    copy,         // open_tree
    read_only,    // mount_setattr
    move,         // move_mount
    moved,        // made, but its path is no longer its root
};

struct Outcome {
    Step step = Step::made;
    int err = 0;
};

// One mount as the helper makes it: nothing in it is allocated after the fork.
struct Prepared {
    const char* path;
    std::uint64_t dev, ino;
    bool read_only;
};

// The sandbox's init: bubblewrap's one child. -1 where it has none (it ended).
pid_t sandbox_init(pid_t bubblewrap) {
    const std::string path = "/proc/" + std::to_string(bubblewrap) + "/task/" + std::to_string(bubblewrap) + "/children";
    const Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    char text[64] = {};
    if (!fd.ok() || ::read(fd.get(), text, sizeof text - 1) <= 0) return -1;
    char* end = nullptr;
    const long pid = std::strtol(text, &end, 10);
    return pid > 0 && (*end == ' ' || *end == '\0') ? static_cast<pid_t>(pid) : -1;
}

// `path` itself, for a mount (O_PATH), reached through no symbolic link.
int open_path(const char* path) {
    open_how how{};
    how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    return static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how));
}

// In the helper, inside the sandbox's mount namespace: one mount over itself.
// Only system calls, on what was prepared before the fork.
Outcome make_mount(const Prepared& m) {
    const Fd target(open_path(m.path));
    if (!target.ok()) return {Step::open, errno};
    struct stat st {};
    if (::fstat(target.get(), &st) != 0) return {Step::open, errno};
    if (st.st_dev != m.dev || st.st_ino != m.ino) return {Step::not_planned, 0};
    const Fd tree(static_cast<int>(::syscall(SYS_open_tree, target.get(), "",
                                             OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE)));
    if (!tree.ok()) return {Step::copy, errno};
    if (m.read_only) {
        mount_attr attr{};
        attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
        if (::syscall(SYS_mount_setattr, tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0)
            return {Step::read_only, errno};
    }
    if (::syscall(SYS_move_mount, tree.get(), "", target.get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
        return {Step::move, errno};
    // Looked up again: the command may have renamed the file since it was opened.
    const Fd again(open_path(m.path));
    struct statx sx {};
    struct statvfs vfs {};
    if (!again.ok() || ::statx(again.get(), "", AT_EMPTY_PATH, STATX_INO, &sx) != 0 ||
        ::fstatvfs(again.get(), &vfs) != 0)
        return {Step::moved, errno};
    const bool root = (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0 && (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
    const bool same = makedev(sx.stx_dev_major, sx.stx_dev_minor) == m.dev && sx.stx_ino == m.ino;
    if (!root || !same || (m.read_only && (vfs.f_flag & ST_RDONLY) == 0)) return {Step::moved, 0};
    return {};
}

// The helper: joins the namespaces open at `user` and `mnt`, makes each of
// `list`, and writes an Outcome for each to `out`. Never returns.
[[noreturn]] void helper(int user, int mnt, const std::vector<Prepared>& list, int out) {
    (void)::prctl(PR_SET_PDEATHSIG, SIGKILL);
    (void)::prctl(PR_SET_DUMPABLE, 0);
    if (::setns(user, CLONE_NEWUSER) != 0 || ::setns(mnt, CLONE_NEWNS) != 0) _exit(100 + (errno & 0x3f));
    for (const auto& m : list) {
        const Outcome o = make_mount(m);
        if (::write(out, &o, sizeof o) != static_cast<ssize_t>(sizeof o)) _exit(99);
    }
    _exit(0);
}

std::string describe(const Outcome& o) {
    const std::string err = o.err != 0 ? std::string(": ") + std::strerror(o.err) : std::string();
    switch (o.step) {
        case Step::made: break;
        case Step::open: return "cannot open it inside without a symbolic link on the way" + err;
        case Step::not_planned: return "it changed since the survey found it";
        case Step::copy: return "cannot copy its mount" + err;
        case Step::read_only: return "cannot make the copy read-only" + err;
        case Step::move: return "cannot mount it" + err;
        case Step::moved: return "it was moved away as it was mounted" + err;
    }
    return {};
}

// Reads one Outcome whole; false at the end or on an error.
bool read_outcome(int fd, Outcome& o) {
    auto* at = reinterpret_cast<char*>(&o);
    std::size_t got = 0;
    while (got < sizeof o) {
        const ssize_t n = ::read(fd, at + got, sizeof o - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        got += static_cast<std::size_t>(n);
    }
    return true;
}

// The helper's run: its namespaces opened here, its outcomes read. An error
// line names what failed before any mount could be made.
std::string run_helper(pid_t bubblewrap, const std::vector<Prepared>& list, std::vector<Outcome>& outcomes) {
    const pid_t init = sandbox_init(bubblewrap);
    if (init < 0) return "the sandbox's init cannot be found (it ended)";
    const std::string ns = "/proc/" + std::to_string(init) + "/ns/mnt";
    const Fd mnt(::open(ns.c_str(), O_RDONLY | O_CLOEXEC));
    if (!mnt.ok()) return "cannot open " + ns + ": " + std::strerror(errno);
    // Still bubblewrap's child once opened: the namespace is the sandbox's, not
    // that of a process that took the number since.
    if (sandbox_init(bubblewrap) != init) return "the sandbox's init ended";
    const Fd user(::ioctl(mnt.get(), NS_GET_USERNS));
    if (!user.ok()) return "cannot find the owner of the sandbox's mount namespace: " + std::string(std::strerror(errno));
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) return std::string("cannot make a pipe: ") + std::strerror(errno);
    Fd read_end(ends[0]), write_end(ends[1]);
    const pid_t pid = ::fork();
    if (pid < 0) return std::string("cannot fork: ") + std::strerror(errno);
    if (pid == 0) helper(user.get(), mnt.get(), list, write_end.get());
    write_end.reset();
    Outcome o;
    while (outcomes.size() < list.size() && read_outcome(read_end.get(), o)) outcomes.push_back(o);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) >= 100)
        return std::string("cannot enter the sandbox's namespaces: ") + std::strerror(WEXITSTATUS(status) - 100);
    if (outcomes.size() < list.size()) return "the helper that mounts them ended early";
    return {};
}

}  // namespace

std::string settle_placeholder(const sbx::RegisteredPlaceholder& p) {
    // Held by an O_PATH descriptor and reached again through /proc/self/fd:
    // the path's folders are the commands' to rename, and nothing here may
    // follow a link they put there, nor depend on the mode they left.
    const Fd at(::open(p.path.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    const bool dir = p.kind == sbx::Placeholder::directory;
    if (!at.ok() || ::fstat(at.get(), &st) != 0 || st.st_dev != p.dev || st.st_ino != p.ino ||
        S_ISDIR(st.st_mode) != dir || (!dir && !S_ISREG(st.st_mode)))
        return p.path + ": replaced as it was mounted";
    const std::string self = "/proc/self/fd/" + std::to_string(at.get());
    const mode_t made = dir ? 0555 : 0444;
    const bool mode = (st.st_mode & 07777) != made;
    (void)::chmod(self.c_str(), dir ? 0700 : 0600);  // the owner's, to look and put back
    std::string said;
    if (dir) {
        std::vector<std::string> names;
        const Fd d(::open(self.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        if (DIR* list = d.ok() ? ::fdopendir(::fcntl(d.get(), F_DUPFD_CLOEXEC, 0)) : nullptr) {
            while (const dirent* e = ::readdir(list))
                if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) names.emplace_back(e->d_name);
            ::closedir(list);
        }
        std::size_t left = 0;
        for (const auto& n : names)
            if (::unlinkat(d.get(), n.c_str(), 0) != 0 && ::unlinkat(d.get(), n.c_str(), AT_REMOVEDIR) != 0) ++left;
        if (left > 0)
            said = p.path + ": filled as it was mounted, and " + std::to_string(left) +
                   " folders in it are not empty: the audit when the session stops looks at them";
        else if (!names.empty())
            said = p.path + ": filled as it was mounted; emptied";
    } else {
        const std::string want = sbx::placeholder_content(p.kind, p.path);
        const Fd f(::open(self.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
        std::string got(want.size() + 1, '\0');
        const ssize_t n = f.ok() ? ::pread(f.get(), got.data(), got.size(), 0) : -1;
        if (n != static_cast<ssize_t>(want.size()) || got.compare(0, want.size(), want) != 0) {
            if (!f.ok() || ::ftruncate(f.get(), 0) != 0 ||
                ::pwrite(f.get(), want.data(), want.size(), 0) != static_cast<ssize_t>(want.size()))
                said = p.path + ": written as it was mounted, and cannot be put back: " + std::strerror(errno);
            else
                said = p.path + ": written as it was mounted; put back as made";
        }
    }
    (void)::chmod(self.c_str(), made);
    if (said.empty() && mode) said = p.path + ": its mode changed as it was mounted; put back as made";
    return said;
}

SessionMounts::Result SessionMounts::add(const AddedMounts& added) {
    Result out;
    auto& problems = out.problems;
    std::vector<sbx::Mount> mounts = added.mounts;
    std::vector<sbx::RegisteredPlaceholder> placeholders_now;  // those of `added`, as the group recorded them
    if (!added.placeholders.empty()) {
        // As a plan's: under the group's mutex, taking over the group's own.
        group_.lock();
        const auto existing = group_.placeholders();
        // Files of their own: the session's commands may write where they go.
        auto made = make_placeholders(added.placeholders, group_, existing, PlaceholderLinks::none);
        group_.hold_placeholders(added.placeholders);
        const auto now = group_.placeholders();
        group_.unlock();
        if (!made) problems.push_back(made.error().file + ": no placeholder: " + made.error().message);
        // Each placeholder's ro-bind expects the file made (or taken over).
        for (auto& m : mounts) {
            if (m.expect.exists) continue;
            for (const auto& p : now)
                if (p.path == m.path) {
                    m.expect = sbx::Identity{true, sbx::FileType::other, p.dev, p.ino, 1};
                    placeholders_now.push_back(p);
                }
        }
    }
    std::vector<Prepared> list;
    std::vector<const sbx::Mount*> of;
    for (const auto& m : mounts) {
        const bool kind_ok = m.kind == sbx::MountKind::pin || m.kind == sbx::MountKind::ro_bind;
        if (!kind_ok || m.source != m.path) {
            problems.push_back(m.path + ": not protected: a " + std::string(sbx::mount_kind_name(m.kind)) +
                               " mount is not made in a running session");
            continue;
        }
        if (!m.expect.exists) continue;  // its placeholder was not made: said above
        list.push_back(Prepared{m.path.c_str(), m.expect.dev, m.expect.ino, m.kind == sbx::MountKind::ro_bind});
        of.push_back(&m);
    }
    if (list.empty()) return out;
    std::vector<Outcome> outcomes;
    if (auto why = run_helper(bubblewrap_, list, outcomes); !why.empty()) {
        problems.push_back("not protected: " + why);
        return out;
    }
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (outcomes[i].step == Step::made)
            out.made.push_back(of[i]->path);
        else
            problems.push_back(of[i]->path + ": not protected: " + describe(outcomes[i]));
    }
    // The placeholders mounted: as made, whatever a command did before.
    for (const auto& p : placeholders_now)
        if (std::find(out.made.begin(), out.made.end(), p.path) != out.made.end())
            if (auto said = settle_placeholder(p); !said.empty()) problems.push_back(std::move(said));
    return out;
}

}  // namespace sbx::linux_sandbox
