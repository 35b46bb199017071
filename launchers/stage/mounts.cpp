// launchers/stage/mounts.cpp - the sandbox's mounts, made by the stage (stage.hpp).
//
// bubblewrap spends about a quarter of a millisecond on each mount it makes,
// reading the whole mount table again for each; the new mount API makes one in
// three system calls. So where the kernel has that API and the plan runs under
// the seccomp filter, bubblewrap makes the base (`/` read-only, /dev, /proc) and
// the stage the rest, in the plan's order, with capabilities bubblewrap leaves
// it (kStageMountFlags in sbx/linux/bwrap.hpp); the writable binds too, from a
// copy of the read-only `/` made writable again where the host has it writable.
// The stage then gives up every capability and loads the mount family's filter
// before anything else runs; the command gets neither.
#include "stage/mounts.hpp"

#include <fcntl.h>
#include <sched.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "base/connect_filter.hpp"
#include "base/fd_io.hpp"
#include "sbx/linux/mount_flags.hpp"

#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

namespace sbx::linux_sandbox {

using sbx::launcher::Fd;

namespace {

std::string failed(const std::string& what) { return what + ": " + std::strerror(errno); }

// A detached copy of the mount at `path` (and, `recursive`, of those below it); none with errno.
Fd open_tree_clone(const char* path, bool recursive) {
    return Fd(static_cast<int>(::syscall(SYS_open_tree, AT_FDCWD, path,
                                         OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0))));
}

// A copy of the mount of the symbolic link at `path` itself, not of where it leads; none with errno.
Fd open_link_clone(const char* path) {
    return Fd(static_cast<int>(
        ::syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW)));
}

int set_attributes(int dirfd, const char* path, unsigned flags, std::uint64_t set, std::uint64_t clear) {
    mount_attr attr{};
    attr.attr_set = set;
    attr.attr_clr = clear;
    return static_cast<int>(::syscall(SYS_mount_setattr, dirfd, path, flags, &attr, sizeof attr));
}

int attach(int mount_fd, const std::string& dest) {
    return static_cast<int>(
        ::syscall(SYS_move_mount, mount_fd, "", AT_FDCWD, dest.c_str(), MOVE_MOUNT_F_EMPTY_PATH));
}

// Makes the directories above `path` that are missing, as bubblewrap does (0755).
bool make_parents(const std::string& path) {
    for (std::size_t at = path.find('/', 1); at != std::string::npos; at = path.find('/', at + 1)) {
        const std::string dir = path.substr(0, at);
        if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) return false;
    }
    return true;
}

// The mount point `dest`, made where it is missing (inside a hidden directory's
// empty tmpfs): a directory for a directory, else an empty file, as bubblewrap
// makes them.
std::string mount_point(const std::string& dest, bool directory) {
    struct stat st {};
    if (::stat(dest.c_str(), &st) == 0) return {};
    if (!make_parents(dest)) return failed("cannot make the directories above " + dest);
    if (directory) {
        if (::mkdir(dest.c_str(), 0755) != 0 && errno != EEXIST) return failed("cannot make the mount point " + dest);
        return {};
    }
    if (!Fd(::open(dest.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0444)).ok())
        return failed("cannot make the mount point " + dest);
    return {};
}

// One mount of the list, with the detached copy of its source taken before any
// of the list was made (so that each is the sandbox as bubblewrap left it, as
// bubblewrap's own sources are the host's).
struct Op {
    std::string_view flag;
    std::string source;  // for --ro-bind-data, the descriptor; for --sized-tmpfs, the size in bytes
    std::string dest;
    Fd tree;  // the copy; none for a tmpfs, --remount-ro, --ro-bind-data, and a missing --ro-bind-try source
    bool directory = false;
    dev_t dev = 0;  // the copy's root
    ino_t ino = 0;
    bool read_only = false;
};

// Whether `dest` shows the file of `op`'s copy already, as writable or not as
// it: a file's mount has nothing below it, so the view is the same. (A data
// file's own mount is of a file bubblewrap removed, on which nothing can be
// mounted: where the directories above were copied with it, it is there.)
bool file_already_there(const Op& op) {
    struct stat st {};
    struct statvfs vfs {};
    return !op.directory && ::stat(op.dest.c_str(), &st) == 0 && ::statvfs(op.dest.c_str(), &vfs) == 0 &&
           st.st_dev == op.dev && st.st_ino == op.ino && ((vfs.f_flag & ST_RDONLY) != 0) == op.read_only;
}

// What `op`'s copy is: a directory or not, its root's identity, read-only or
// not. False with errno.
bool describe_copy(Op& op) {
    struct stat st {};
    struct statvfs vfs {};
    if (::fstat(op.tree.get(), &st) != 0 || ::fstatvfs(op.tree.get(), &vfs) != 0) return false;
    op.directory = S_ISDIR(st.st_mode);
    op.dev = st.st_dev;
    op.ino = st.st_ino;
    op.read_only = (vfs.f_flag & ST_RDONLY) != 0;
    return true;
}

std::string take_copies(std::vector<Op>& ops) {
    for (auto& op : ops) {
        if (op.flag == "--tmpfs" || op.flag == "--sized-tmpfs" || op.flag == "--remount-ro" ||
            op.flag == "--ro-bind-data" || op.flag == "--dev")
            continue;
        const bool link = op.flag == "--ro-bind-link";
        const std::string& from = op.flag == "--again" || link ? op.dest : op.source;
        op.tree = link ? open_link_clone(from.c_str()) : open_tree_clone(from.c_str(), true);
        if (!op.tree.ok()) {
            if (errno == ENOENT && op.flag == "--ro-bind-try") continue;
            return failed("cannot copy the mount of " + from);
        }
        // What bubblewrap made is looked at now, before the mounts above it;
        // the others only where their mount point is missing (make_one).
        if (op.flag == "--again" && !describe_copy(op)) return failed("cannot read the mount of " + from);
    }
    return {};
}

// The mount points strictly below `dir` in this mount namespace, as paths
// relative to it, from /proc/self/mountinfo (whose octal escapes are undone).
std::vector<std::string> mounts_below(const std::string& dir) {
    std::vector<std::string> out;
    std::string text;
    {
        const Fd fd(::open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC));
        if (!fd.ok()) return out;
        char buf[8192];
        ssize_t n;
        while ((n = ::read(fd.get(), buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
    }
    const std::string prefix = dir == "/" ? "/" : dir + "/";
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = std::min(text.find('\n', at), text.size());
        const std::string_view line(text.data() + at, end - at);
        at = end + 1;
        // ID PARENT MAJ:MIN ROOT MOUNT-POINT ...: the fifth field.
        std::size_t from = 0;
        for (int field = 0; field < 4 && from != std::string_view::npos; ++field) {
            from = line.find(' ', from);
            if (from != std::string_view::npos) ++from;
        }
        if (from == std::string_view::npos) continue;
        const std::string_view raw = line.substr(from, line.find(' ', from) - from);
        std::string point;
        for (std::size_t i = 0; i < raw.size(); ++i) {
            if (raw[i] == '\\' && i + 3 < raw.size()) {
                point += static_cast<char>((raw[i + 1] - '0') * 64 + (raw[i + 2] - '0') * 8 + (raw[i + 3] - '0'));
                i += 3;
            } else {
                point += raw[i];
            }
        }
        if (point.size() > prefix.size() && point.compare(0, prefix.size(), prefix) == 0)
            out.push_back(point.substr(prefix.size()));
    }
    return out;
}

// Makes the writable bind just mounted at `op.dest` writable again. It was
// copied from the sandbox's read-only `/`, whose mounts bubblewrap made
// read-only (those it may make writable again) but for those the host has
// read-only (the kernel locks these: EPERM): each mount ends as the host has
// it, as bubblewrap's own --bind would give it. Mounts below the top are
// changed once attached, as the kernel changes no mount inside a copy but its top.
std::string make_writable(const Op& op) {
    const Fd top(static_cast<int>(
        ::syscall(SYS_open_tree, AT_FDCWD, op.dest.c_str(), OPEN_TREE_CLOEXEC | AT_SYMLINK_NOFOLLOW)));
    if (!top.ok()) return failed("cannot open the mount at " + op.dest);
    int rc = set_attributes(top.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, 0, MOUNT_ATTR_RDONLY);
    if (rc != 0 && errno == EPERM) {
        // Some mount of it is read-only on the host: one by one, leaving those.
        rc = set_attributes(top.get(), "", AT_EMPTY_PATH, 0, MOUNT_ATTR_RDONLY);
        if (rc != 0 && errno == EPERM) rc = 0;
        for (const auto& below : mounts_below(op.dest)) {
            if (rc != 0) break;
            // Beneath the bind and through no symbolic link, whatever the disk holds now.
            open_how how{};
            how.flags = O_PATH | O_CLOEXEC;
            how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
            const Fd fd(static_cast<int>(::syscall(SYS_openat2, top.get(), below.c_str(), &how, sizeof how)));
            if (!fd.ok()) continue;  // gone, or reached through a link: left read-only
            rc = set_attributes(fd.get(), "", AT_EMPTY_PATH, 0, MOUNT_ATTR_RDONLY);
            if (rc != 0 && (errno == EPERM || errno == EINVAL)) rc = 0;  // the host's own read-only; no mount's top
        }
    }
    if (rc != 0) return failed("cannot make " + op.dest + " writable");
    return {};
}

// A new filesystem of `type` (named so in the mount table), with `options`,
// mounted with `attributes` and not attached anywhere; none with errno.
Fd detached_fs(const char* type, std::initializer_list<std::pair<const char*, const char*>> options,
               std::uint64_t attributes) {
    const Fd fs(static_cast<int>(::syscall(SYS_fsopen, type, FSOPEN_CLOEXEC)));
    if (!fs.ok()) return Fd();
    bool ok = ::syscall(SYS_fsconfig, fs.get(), FSCONFIG_SET_STRING, "source", type, 0) == 0;
    for (const auto& [key, value] : options)
        ok = ok && ::syscall(SYS_fsconfig, fs.get(), FSCONFIG_SET_STRING, key, value, 0) == 0;
    ok = ok && ::syscall(SYS_fsconfig, fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) == 0;
    if (!ok) return Fd();
    return Fd(static_cast<int>(::syscall(SYS_fsmount, fs.get(), FSMOUNT_CLOEXEC, attributes)));
}

// A tmpfs of the stage's own (mode 0755, nosuid, nodev), not attached anywhere; none with errno.
Fd detached_tmpfs() { return detached_fs("tmpfs", {{"mode", "0755"}}, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV); }

// --ro-bind-data FD DEST: the descriptor's content, read from its start, as a
// read-only file of a tmpfs of its own mounted at DEST, as bubblewrap makes
// it. The tmpfs goes on DEST's directory for a moment, where the file can be
// copied from (older kernels copy nothing from a mount not attached), and
// comes off again before anything else runs.
std::string make_data_file(const Op& op) {
    int from = -1;
    if (!sbx::launcher::parse_fd(op.source.c_str(), from, 3)) return "the stage's mount list names no descriptor for " + op.dest;
    const std::string dir = op.dest.substr(0, std::max<std::size_t>(op.dest.rfind('/'), 1));
    const std::string name = "sbx-data";
    if (auto why = mount_point(op.dest, false); !why.empty()) return why;
    Fd mnt = detached_tmpfs();
    if (!mnt.ok()) return failed("cannot make the tmpfs for " + op.dest);
    std::string why;
    {
        const Fd file(::openat(mnt.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444));
        if (!file.ok()) why = failed("cannot make the file for " + op.dest);
        char buf[8192];
        ssize_t n = 0;
        for (off_t off = 0; why.empty() && (n = ::pread(from, buf, sizeof buf, off)) != 0; off += n) {
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 || ::write(file.get(), buf, static_cast<std::size_t>(n)) != n)
                why = failed("cannot copy the content of " + op.dest);
        }
    }
    Fd tree;
    if (why.empty()) {
        if (attach(mnt.get(), dir) != 0) why = failed("cannot mount the tmpfs for " + op.dest);
        else {
            tree = open_tree_clone((dir + "/" + name).c_str(), false);
            const int err = errno;
            if (::umount2(dir.c_str(), MNT_DETACH) != 0 && why.empty()) why = failed("cannot take the tmpfs off " + dir);
            errno = err;
            if (!tree.ok() && why.empty()) why = failed("cannot copy the file for " + op.dest);
        }
    }
    mnt.reset();
    if (why.empty() &&
        set_attributes(tree.get(), "", AT_EMPTY_PATH, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0) != 0)
        why = failed("cannot make " + op.dest + " read-only");
    if (why.empty() && attach(tree.get(), op.dest) != 0) why = failed("cannot mount " + op.dest);
    return why;
}

// The device nodes a /dev of bubblewrap's --dev has, bound from the host's.
constexpr const char* kDevNodes[] = {"null", "zero", "full", "random", "urandom", "tty"};

// The mount at `tree` (a copy of a device node) made usable as a device:
// writable and nosuid, as bubblewrap binds devices, then mounted at `dest`.
std::string bind_device(int tree, const std::string& dest) {
    if (set_attributes(tree, "", AT_EMPTY_PATH, MOUNT_ATTR_NOSUID, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV) != 0)
        return failed("cannot make the copy of a device for " + dest + " usable");
    if (attach(tree, dest) != 0) return failed("cannot mount " + dest);
    return {};
}

// --dev DEST: what bubblewrap's --dev makes, with the new mount API: a tmpfs
// (mode 0755, nosuid, nodev) holding null, zero, full, random, urandom and tty
// bound from the host's (nosuid, the only mounts where a device works),
// stdin, stdout, stderr, fd and core as symbolic links, an empty shm, ptmx
// naming pts/ptmx, a devpts of its own at pts (newinstance, ptmxmode=0666,
// mode=620, nosuid, noexec), and, where standard output is a terminal,
// console bound from it (which makes ttyname() work inside).
std::string make_dev(const std::string& dest) {
    // The host's nodes, copied before the tmpfs hides them.
    std::vector<Fd> nodes;
    for (const char* n : kDevNodes) {
        nodes.push_back(open_tree_clone(("/dev/" + std::string(n)).c_str(), false));
        if (!nodes.back().ok()) return failed(std::string("cannot copy /dev/") + n);
    }
    char tty[256] = {};
    const bool console = ::isatty(STDOUT_FILENO) != 0 && ::ttyname_r(STDOUT_FILENO, tty, sizeof tty) == 0;
    if (console) {
        nodes.push_back(open_tree_clone(tty, false));
        if (!nodes.back().ok()) return failed(std::string("cannot copy ") + tty);
    }
    Fd mnt = detached_tmpfs();
    if (!mnt.ok()) return failed("cannot make the tmpfs for " + dest);
    std::string why;
    auto file = [&](const char* name) {
        const Fd fd(::openat(mnt.get(), name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444));
        if (!fd.ok() && why.empty()) why = failed(std::string("cannot make ") + dest + "/" + name);
    };
    auto link = [&](const char* target, const char* name) {
        if (::symlinkat(target, mnt.get(), name) != 0 && why.empty())
            why = failed(std::string("cannot make ") + dest + "/" + name);
    };
    auto dir = [&](const char* name) {
        if (::mkdirat(mnt.get(), name, 0755) != 0 && why.empty())
            why = failed(std::string("cannot make ") + dest + "/" + name);
    };
    for (const char* n : kDevNodes) file(n);
    if (console) file("console");
    link("/proc/self/fd/0", "stdin");
    link("/proc/self/fd/1", "stdout");
    link("/proc/self/fd/2", "stderr");
    link("/proc/self/fd", "fd");
    link("/proc/kcore", "core");
    dir("shm");
    dir("pts");
    link("pts/ptmx", "ptmx");
    if (why.empty() && attach(mnt.get(), dest) != 0) why = failed("cannot mount the tmpfs on " + dest);
    mnt.reset();
    if (!why.empty()) return why;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const std::string at = dest + "/" + (i < std::size(kDevNodes) ? kDevNodes[i] : "console");
        if (auto bad = bind_device(nodes[i].get(), at); !bad.empty()) return bad;
        nodes[i].reset();
    }
    const Fd pts = detached_fs("devpts", {{"ptmxmode", "0666"}, {"mode", "620"}}, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
    if (!pts.ok()) return failed("cannot make the devpts for " + dest + "/pts");
    if (attach(pts.get(), dest + "/pts") != 0) return failed("cannot mount the devpts on " + dest + "/pts");
    return {};
}

// --ro-bind-link DEST: the symbolic link at DEST bound read-only over itself,
// so that its name is a mount point, which cannot be removed, renamed or
// replaced (EBUSY). The copy was taken without following it, and it is
// mounted at DEST without following what is there now: something else at DEST
// (the link swapped since the launcher checked the plan) fails the run rather
// than be bound, or have its target bound, in the link's place.
std::string bind_link(Op& op) {
    struct stat st {};
    if (::fstatat(op.tree.get(), "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
        return failed("cannot read the mount of " + op.dest);
    if (!S_ISLNK(st.st_mode)) return op.dest + " is no longer a symbolic link; make the plan again";
    if (set_attributes(op.tree.get(), "", AT_EMPTY_PATH, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0) != 0)
        return failed("cannot make the copy of " + op.dest + " read-only");
    struct stat now {};
    if (::fstatat(AT_FDCWD, op.dest.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0 || now.st_dev != st.st_dev ||
        now.st_ino != st.st_ino)
        return op.dest + " changed while the sandbox was made; make the plan again";
    if (attach(op.tree.get(), op.dest) != 0) return failed("cannot mount " + op.dest);  // no MOVE_MOUNT_T_SYMLINKS: not followed
    op.tree.reset();
    return {};
}

std::string make_one(Op& op) {
    if (op.flag == "--dev") return make_dev(op.dest);
    if (op.flag == "--remount-ro") {
        if (set_attributes(AT_FDCWD, op.dest.c_str(), 0, MOUNT_ATTR_RDONLY, 0) != 0)
            return failed("cannot make " + op.dest + " read-only");
        return {};
    }
    if (op.flag == "--tmpfs") {
        if (auto why = mount_point(op.dest, true); !why.empty()) return why;
        const Fd mnt = detached_tmpfs();
        if (!mnt.ok()) return failed("cannot make the tmpfs for " + op.dest);
        if (attach(mnt.get(), op.dest) != 0) return failed("cannot mount the tmpfs on " + op.dest);
        return {};
    }
    // The command's TMPDIR: its own, of the plan's size, owned by the caller
    // (the stage's uid 0 here is the caller's uid outside, and in the second
    // user namespace), which only the caller may enter.
    if (op.flag == "--sized-tmpfs") {
        if (auto why = mount_point(op.dest, true); !why.empty()) return why;
        const Fd mnt = detached_fs("tmpfs", {{"mode", "0700"}, {"size", op.source.c_str()}},
                                   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
        if (!mnt.ok()) return failed("cannot make the tmpfs for " + op.dest);
        if (attach(mnt.get(), op.dest) != 0) return failed("cannot mount the tmpfs on " + op.dest);
        return {};
    }
    if (op.flag == "--ro-bind-data") return make_data_file(op);
    if (op.flag == "--ro-bind-link") return bind_link(op);
    if (!op.tree.ok()) return {};  // --ro-bind-try of nothing
    if (op.flag == "--again" && file_already_there(op)) return {};
    // A read-only bind is read-only, nosuid and nodev all through, as bubblewrap
    // makes it; a writable one nosuid and nodev, as the `/` it was copied from;
    // --again is bubblewrap's mount as it made it.
    if (op.flag != "--again" && op.flag != "--bind" &&
               set_attributes(op.tree.get(), "", AT_EMPTY_PATH | AT_RECURSIVE,
                              MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0) != 0) {
        return failed("cannot make the copy of " + op.source + " read-only");
    }
    // Most mount points are there (the placeholders are made for them); where
    // one is missing, it is made as bubblewrap makes it, and the mount tried again.
    if (attach(op.tree.get(), op.dest) != 0) {
        if (errno != ENOENT) return failed("cannot mount " + op.dest);
        if (op.flag != "--again" && !describe_copy(op)) return failed("cannot read the mount of " + op.source);
        if (auto why = mount_point(op.dest, op.directory); !why.empty()) return why;
        if (attach(op.tree.get(), op.dest) != 0) return failed("cannot mount " + op.dest);
    }
    op.tree.reset();
    return op.flag == "--bind" ? make_writable(op) : std::string();
}

bool write_file(const char* path, std::string_view text) {
    const Fd fd(::open(path, O_WRONLY | O_CLOEXEC));
    return fd.ok() && ::write(fd.get(), text.data(), text.size()) == static_cast<ssize_t>(text.size());
}

// Writes `text` to the sysctl at `rel` under /proc/sys, through a detached
// writable copy of /proc/sys (bubblewrap binds it read-only for a root caller);
// `failure` says what did not happen, with errno. Empty on success.
std::string write_sysctl(const char* rel, std::string_view text, const std::string& failure) {
    const Fd sys = open_tree_clone("/proc/sys", false);
    if (!sys.ok()) return failed("cannot copy /proc/sys");
    if (set_attributes(sys.get(), "", AT_EMPTY_PATH, 0, MOUNT_ATTR_RDONLY) != 0) return failed("cannot write to /proc/sys");
    const Fd fd(::openat(sys.get(), rel, O_WRONLY | O_CLOEXEC));
    if (!fd.ok() || ::write(fd.get(), text.data(), text.size()) != static_cast<ssize_t>(text.size())) return failed(failure);
    return {};
}

// What --disable-userns does, which bubblewrap cannot do here (it would move the
// stage into that second namespace before the mounts): user.max_user_namespaces
// of the sandbox's user namespace to 1, then a user namespace inside it, which
// takes that one place, mapping `uid` and `gid` (the caller's; bubblewrap was
// told uid 0 and gid 0) to the stage's own. No user namespace can be made after
// it, whatever the filter. The sysctl is written through a detached writable
// copy of /proc/sys, which bubblewrap has bound read-only for a root caller.
std::string second_user_namespace(unsigned uid, unsigned gid) {
    if (auto why = write_sysctl("user/max_user_namespaces", "1\n", "cannot set user.max_user_namespaces to 1");
        !why.empty())
        return why;
    if (::unshare(CLONE_NEWUSER) != 0) return failed("cannot make the sandbox's second user namespace");
    const std::string uid_map = std::to_string(uid) + " 0 1\n";
    const std::string gid_map = std::to_string(gid) + " 0 1\n";
    if (!write_file("/proc/self/setgroups", "deny") || !write_file("/proc/self/uid_map", uid_map) ||
        !write_file("/proc/self/gid_map", gid_map))
        return failed("cannot map the caller's user and group in the second user namespace");
    // As bubblewrap checks: no further one can be made.
    if (::unshare(CLONE_NEWUSER) == 0) return "a user namespace could still be made after the sandbox's second";
    return {};
}

// The sandbox's PID namespace's pid_max (Linux 6.14 keeps one per namespace,
// which whoever holds CAP_SYS_ADMIN over the namespace sets): no process of the
// sandbox gets a number at or above it, so it bounds how many there can be at
// once, for any caller, root too.
std::string set_pid_max(std::uint64_t n) {
    return write_sysctl("kernel/pid_max", std::to_string(n) + "\n",
                        "cannot set the sandbox's kernel.pid_max to " + std::to_string(n) +
                            " (a kernel before Linux 6.14 has one for the whole machine)");
}

// /proc/self/status, read whole (the kernel writes it anew for each read).
std::string own_status() {
    const Fd fd(::open("/proc/self/status", O_RDONLY | O_CLOEXEC));
    if (!fd.ok()) return {};
    std::string text;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd.get(), buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
    return text;
}

// A field of a /proc/PID/status text ("CapEff:"), without its name and blanks;
// empty when missing.
std::string status_field(const std::string& text, std::string_view name) {
    const std::string key = "\n" + std::string(name) + ":";
    const auto at = text.find(key);
    if (at == std::string::npos) return {};
    auto from = text.find_first_not_of(" \t", at + key.size());
    const auto end = text.find('\n', from);
    return text.substr(from, end == std::string::npos ? std::string::npos : end - from);
}

// Every capability out of every set, the bounding set first (which needs
// CAP_SETPCAP), then checked in /proc/self/status, whose text is left in `status`.
std::string drop_capabilities(std::string& status) {
    for (int cap = 0; ::prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; ++cap)
        if (::prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0) return failed("cannot drop capability " + std::to_string(cap));
    if (::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) return failed("cannot clear the ambient set");
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
    if (::syscall(SYS_capset, &header, data) != 0) return failed("cannot drop the capabilities");
    status = own_status();
    for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"})
        if (const std::string value = status_field(status, set); value != "0000000000000000")
            return std::string("the stage still holds capabilities after dropping them (") + set + " " + value + ")";
    return {};
}

// Loads `prog` as a seccomp filter of this process, after PR_SET_NO_NEW_PRIVS,
// stacked on any filter already loaded. `status`: /proc/self/status before.
// `listener`: where to put the descriptor of a filter made with its user
// notifications' listener (SECCOMP_FILTER_FLAG_NEW_LISTENER, with `flags`);
// null for none.
std::string install_program(sock_fprog& prog, const std::string& status, const std::string& name, int* listener,
                            unsigned long flags = 0) {
    const std::string before = status_field(status, "Seccomp_filters");
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return failed("PR_SET_NO_NEW_PRIVS");
    if (listener != nullptr) {
        const long got = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER | flags, &prog);
        if (got < 0) {
            const int err = errno;
            std::string why = failed("cannot load " + name);
            errno = err;  // for a caller that tries again without `flags`
            return why;
        }
        *listener = static_cast<int>(got);
    } else if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0) {
        return failed("cannot load " + name);
    }
    // Where the kernel counts the filters, one more must be there now.
    if (!before.empty() &&
        std::atoi(status_field(own_status(), "Seccomp_filters").c_str()) != std::atoi(before.c_str()) + 1)
        return name + " is not counted after loading it";
    return {};
}

// A BPF program on `fd` (made by the launcher), loaded as install_program does.
std::string load_program(int fd, const std::string& status, std::string_view what, int* listener = nullptr) {
    const std::string name(what);
    std::string program;
    char buf[4096];
    ssize_t n;
    while ((n = ::pread(fd, buf, sizeof buf, static_cast<off_t>(program.size()))) > 0)
        program.append(buf, static_cast<std::size_t>(n));
    ::close(fd);
    if (n < 0) return failed("cannot read " + name);
    if (program.empty() || program.size() % sizeof(sock_filter) != 0 || program.size() / sizeof(sock_filter) > 0xffff)
        return name + " is not a BPF program";
    sock_fprog prog{static_cast<unsigned short>(program.size() / sizeof(sock_filter)),
                    reinterpret_cast<sock_filter*>(program.data())};
    return install_program(prog, status, name, listener);
}

}  // namespace

std::string make_stage_mounts(const std::vector<std::string>& list, int mounts_filter_fd, const std::string& cwd,
                              unsigned uid, unsigned gid, std::uint64_t pid_max) {
    std::vector<Op> ops;
    for (std::size_t i = 0; i < list.size();) {
        const std::size_t arity = mount_flag_arity(list[i]);
        if (arity == 0 || i + arity >= list.size()) return "the stage's mount list is malformed";
        Op op;
        op.flag = list[i];
        if (arity == 2) op.source = list[i + 1];
        op.dest = list[i + arity];
        ops.push_back(std::move(op));
        i += 1 + arity;
    }
    if (auto why = take_copies(ops); !why.empty()) return why;
    for (auto& op : ops)
        if (auto why = make_one(op); !why.empty()) return why;
    if (pid_max != 0)
        if (auto why = set_pid_max(pid_max); !why.empty()) return why;
    if (auto why = second_user_namespace(uid, gid); !why.empty()) return why;
    // The working directory bubblewrap entered lies under the mounts now made
    // over it: entered again, by its path, it is the one they cover.
    if (::chdir(cwd.c_str()) != 0) return failed("cannot enter " + cwd + " again");
    std::string status;
    if (auto why = drop_capabilities(status); !why.empty()) return why;
    return load_program(mounts_filter_fd, status, "the mount family's filter");
}

std::string drop_capabilities_for_good() {
    std::string status = own_status();
    bool holds = false;
    for (const char* set : {"CapPrm", "CapEff", "CapAmb"})
        holds = holds || status_field(status, set) != "0000000000000000";
    if (!holds) return {};
    // Locked first: from here on uid 0 is no reason for an exec to grant any.
    constexpr unsigned long kSecureBits = (1UL << 0) | (1UL << 1) | (1UL << 2) | (1UL << 3) | (1UL << 5);
    // SECBIT_NOROOT, _LOCKED, SECBIT_NO_SETUID_FIXUP, _LOCKED, SECBIT_KEEP_CAPS_LOCKED
    if (::prctl(PR_SET_SECUREBITS, kSecureBits, 0, 0, 0) != 0) return failed("cannot lock root out of capabilities");
    return drop_capabilities(status);
}

std::string load_filter_program(int fd, std::string_view what) { return load_program(fd, own_status(), what); }

std::string load_listener_program(int fd, std::string_view what, int& listener) {
    return load_program(fd, own_status(), what, &listener);
}

std::string load_connect_listener(int& listener) {
    auto filter = sbx::launcher::connect_filter();
    sock_fprog prog{static_cast<unsigned short>(filter.size()), filter.data()};
    // Once the launcher has the call, a signal does not interrupt it: the
    // launcher may have connected the socket already, and the call, started
    // again, would find it connected (Linux 5.19; without it, as before).
    constexpr unsigned long kWaitKillableRecv = 1UL << 5;  // SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
    const std::string status = own_status();
    std::string why = install_program(prog, status, "the connect broker's filter", &listener, kWaitKillableRecv);
    if (!why.empty() && errno == EINVAL)
        why = install_program(prog, status, "the connect broker's filter", &listener);
    return why;
}

}  // namespace sbx::linux_sandbox
