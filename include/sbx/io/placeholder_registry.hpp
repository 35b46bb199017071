// sbx/io/placeholder_registry.hpp - the placeholders sandboxes sharing a root have
// made, as the planner and the launcher both need to see them.
//
// Sandboxes running in one root share its placeholders (launchers/shared/root_group.hpp):
// the first makes them, the last one to end removes them, and a list of what was
// made (kind, device, inode, path) is kept in the group's lock file. A plan made
// while another sandbox runs must not take those placeholders for files the
// project has: it plans them as missing, as they will be once the group is done,
// and the launcher takes the existing ones over instead of making new ones.
// HidingFs is the FsView that shows the disk without them, and GroupSnapshot
// holds the group's lock shared while a plan is made, so that no launcher makes
// or removes placeholders between reading the list and looking at the disk.
//
// This is I/O at the edge, like fs_view_disk.hpp: reading the list and looking at
// the disk. The group files live in a directory that depends on the user alone,
// never on the environment (two runs with different XDG_RUNTIME_DIR or TMPDIR
// are one group): /run/user/UID/sbx where /run/user/UID is the user's own,
// else /tmp/sbx-UID.
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "sbx/rules/protected_paths.hpp"

namespace sbx {

struct RegisteredPlaceholder {
    Placeholder kind = Placeholder::file;
    std::uint64_t dev = 0, ino = 0;
    std::string path;
};

// A kind's letter in a record, and back.
constexpr char registry_letter(Placeholder k) noexcept {
    return k == Placeholder::directory ? 'D' : k == Placeholder::commondir ? 'C' : 'F';
}
SBX_INLINE std::optional<Placeholder> registry_kind(char c);

// The directory of the group files for this user (not made here).
SBX_INLINE std::string placeholder_group_directory();

namespace detail {

SBX_INLINE Error group_error(const std::string& what, const std::string& path, int err);

SBX_INLINE bool flock_retry(int fd, int op);

// Whether `fd` is still the file at `path`: the last sandbox of a group removes
// the files, so one that waited for the lock may hold a file no longer there.
SBX_INLINE bool still_there(int fd, const std::string& path);

}  // namespace detail

// The directory of the group files, made 0700 when missing; refused when someone
// else owns it or others may write it, with what to do. The last sandbox out of
// another root's group removes the directory when it is empty, which may come
// between the mkdir and the look here: then it is made again.
SBX_INLINE expected<std::string> make_group_directory();

// Opens (with `create`, makes) the group file at `path` and takes the flock `op`
// on it, over again when the file it locked was removed meanwhile (the last
// sandbox out removes the group's files; the directory too, which is made again).
// -1 when there is no such file and `create` is false; a failure otherwise.
SBX_INLINE expected<int> open_locked_group_file(const std::string& path, int op, bool create);

// The directory whose identity names the placeholder group of `root` (absolute,
// normalised): the common git directory of its repository (common_git_dir), so
// that the main work tree and every linked worktree of one repository are one
// group, since their placeholders in its git directory (its commondir,
// config.worktree, info/attributes) and in its info/exclude are one set; any
// other root itself.
SBX_INLINE std::string placeholder_group_anchor(const std::string& root);

// What names the group of `root`: its placeholder_group_anchor() and that
// directory's device and inode; an error when either cannot be looked at.
struct PlaceholderGroupKey {
    std::string anchor;
    std::uint64_t dev = 0, ino = 0;
};
SBX_INLINE expected<PlaceholderGroupKey> placeholder_group_key(const std::string& root);

// The group files' name for a root: DIR/root-DEV-INO (then .lock and .live), of
// its placeholder_group_key().
SBX_INLINE std::string placeholder_group_name(const std::string& dir, std::uint64_t root_dev, std::uint64_t root_ino);

// One record: "F DEV INO PATH" (a file), "D ..." (a directory) or "C ..." (a
// commondir). The list is a sequence of NUL-terminated records; a malformed one
// ends it (what follows is not trusted).
SBX_INLINE std::string registry_record(const RegisteredPlaceholder& p);

// An exclude file the group added its block to ("X DEV INO PATH"), which the
// last sandbox out takes the block out of again.
struct RegisteredExclude {
    std::uint64_t dev = 0, ino = 0;
    std::string path;
};

SBX_INLINE std::string exclude_record(const RegisteredExclude& x);

SBX_INLINE std::vector<RegisteredPlaceholder> parse_registry(std::string_view text,
                                                         std::vector<RegisteredExclude>* excludes = nullptr);

// Whether `st` (lstat of the placeholder's path) is still the placeholder that
// was made: the same inode, and a directory, or a file of its content's size.
SBX_INLINE bool is_made_placeholder(const struct stat& st, const RegisteredPlaceholder& p);

// Whether what is at p.path now is the placeholder the record describes.
SBX_INLINE bool still_placeholder(const RegisteredPlaceholder& p);

// A descriptor to flock a placeholder through: a file or directory, never
// followed through a symlink, never blocking; -1 otherwise.
SBX_INLINE int open_to_lock(const std::string& path);

// Every sandbox holds a shared flock on each placeholder it uses (RootGroup),
// which anyone who can read one can see. Why a sandbox may not start in `root`,
// when `path` is a placeholder of another group's that is in use: another
// user's (the group is one user's), or the same user's seen from another group
// directory (a private /tmp, a /run/user/UID made or removed meanwhile). This
// sandbox would lose the placeholder when that group's last sandbox removes it.
// A placeholder of this sandbox's own group is never asked about: the plan was
// made without them.
SBX_INLINE std::optional<Error> foreign_placeholder(const std::string& path, const std::string& root);

// The records in a group's lock file, read from `fd`; a list too long to be one
// reads as none.
SBX_INLINE std::vector<RegisteredPlaceholder> read_registry(int fd, std::vector<RegisteredExclude>* excludes = nullptr);

// The group of a root as a planner sees it. take() holds the group's lock shared
// until release(): launchers make and remove placeholders holding it alone, so
// what the list says and what the disk shows agree while the settings are read
// and the plan is made. A planner that found no group leaves none behind.
class GroupSnapshot {
public:
    static expected<GroupSnapshot> take(const std::string& root);

    GroupSnapshot(GroupSnapshot&& o) noexcept : name_(std::move(o.name_)), fd_(o.fd_), placeholders_(std::move(o.placeholders_)) {
        o.fd_ = -1;
    }
    GroupSnapshot& operator=(GroupSnapshot&&) = delete;
    ~GroupSnapshot() { release(); }

    // The group's placeholders under the root and its common git directory that are
    // still as made.
    const std::vector<RegisteredPlaceholder>& placeholders() const { return placeholders_; }
    std::vector<std::string> paths() const;

    // Lets launchers go on, keeping the group's files for the one that follows
    // in this process (`sbx run`), which would only make them again; release()
    // after it removes them if it did not.
    void unlock() {
        if (fd_ >= 0) (void)::flock(fd_, LOCK_UN);
    }

    // Lets launchers go on. Removes the group's files when they list nothing and
    // no sandbox is in the group: then only this planner needed them (the
    // launcher that follows makes them again).
    void release();

private:
    GroupSnapshot(std::string name, int fd) : name_(std::move(name)), fd_(fd) {}
    std::string name_;
    int fd_ = -1;
    std::vector<RegisteredPlaceholder> placeholders_;
};

// The disk as `inner` shows it, without the given placeholders (and what is
// below a directory one): they are planned as missing.
class HidingFs final : public FsView {
public:
    HidingFs(const FsView& inner, std::vector<std::string> hidden) : inner_(inner), hidden_(std::move(hidden)) {
        std::sort(hidden_.begin(), hidden_.end());
    }

    expected<std::optional<FileStat>> lstat(const std::string& path) const override {
        if (hides(path)) return std::optional<FileStat>{};
        return inner_.lstat(path);
    }
    expected<std::string> readlink(const std::string& path) const override {
        if (hides(path)) return fail(Error(Errc::io_error, "no such file").in_file(path));
        return inner_.readlink(path);
    }
    expected<std::vector<std::string>> list(const std::string& path) const override;
    expected<std::vector<Entry>> list_typed(const std::string& path) const override;
    expected<std::optional<std::string>> read_text(const std::string& path, std::size_t max_bytes) const override {
        if (hides(path)) return std::optional<std::string>{};
        return inner_.read_text(path, max_bytes);
    }

private:
    const FsView& inner_;
    std::vector<std::string> hidden_;

    bool hides(const std::string& path) const;
};

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_IO)

namespace sbx {

SBX_INLINE std::optional<Placeholder> registry_kind(char c) {
    if (c == 'F') return Placeholder::file;
    if (c == 'D') return Placeholder::directory;
    if (c == 'C') return Placeholder::commondir;
    return std::nullopt;
}

SBX_INLINE std::string placeholder_group_directory() {
    const uid_t uid = ::geteuid();
    const std::string run = "/run/user/" + std::to_string(uid);
    struct stat st {};
    if (::lstat(run.c_str(), &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid && (st.st_mode & 022) == 0)
        return run + "/sbx";
    return "/tmp/sbx-" + std::to_string(uid);
}

}  // namespace sbx

namespace sbx::detail {

SBX_INLINE Error group_error(const std::string& what, const std::string& path, int err) {
    return Error(Errc::unavailable, what + (err != 0 ? std::string(": ") + std::strerror(err) : std::string()))
        .in_file(path);
}

SBX_INLINE bool flock_retry(int fd, int op) {
    while (::flock(fd, op) != 0)
        if (errno != EINTR) return false;
    return true;
}

SBX_INLINE bool still_there(int fd, const std::string& path) {
    struct stat a {}, b {};
    return ::fstat(fd, &a) == 0 && ::lstat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE expected<std::string> make_group_directory() {
    const uid_t uid = ::geteuid();
    const std::string dir = placeholder_group_directory();
    struct stat st {};
    for (int attempt = 0;; ++attempt) {
        // Made here: this user's, of mode 0700 (less by the umask), which no one
        // else can remove or replace (its parent is the user's own /run/user/UID,
        // or the sticky /tmp). Only one that was
        // there is looked at; gone meanwhile (another root's last sandbox removed
        // it empty), it is made again. No look stands between the mkdir and the
        // answer, so a remover in step with this loop cannot make it fail.
        if (::mkdir(dir.c_str(), 0700) == 0) return dir;
        if (errno != EEXIST)
            return fail(detail::group_error("cannot make the directory of sbx's lock files", dir, errno));
        if (::lstat(dir.c_str(), &st) == 0) break;
        if (errno != ENOENT || attempt == 100)
            return fail(detail::group_error("cannot look at the directory of sbx's lock files", dir, errno));
    }
    if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077) != 0)
        return fail(detail::group_error("the directory of sbx's lock files is not this user's alone (a directory of "
                                        "mode 0700 owned by uid " + std::to_string(uid) +
                                            "); someone else made it: remove it",
                                        dir, 0));
    return dir;
}

SBX_INLINE expected<int> open_locked_group_file(const std::string& path, int op, bool create) {
    for (int attempt = 0; attempt < 100; ++attempt) {
        if (attempt > 0 && create) (void)::mkdir(paths::parent(path).c_str(), 0700);
        const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY | (create ? O_CREAT : 0), 0600);
        if (fd < 0) {
            if (errno != ENOENT) return fail(detail::group_error("cannot open a lock file", path, errno));
            if (!create) return -1;
            continue;
        }
        if (!detail::flock_retry(fd, op)) {
            const int err = errno;
            ::close(fd);
            return fail(detail::group_error("cannot lock", path, err));
        }
        if (detail::still_there(fd, path)) return fd;
        ::close(fd);
        if (!create) return -1;
    }
    return fail(detail::group_error("cannot hold on to a lock file", path, 0));
}

SBX_INLINE std::string placeholder_group_anchor(const std::string& root) {
    const DiskFs disk;
    return common_git_dir(root, disk).value_or(root);
}

SBX_INLINE expected<PlaceholderGroupKey> placeholder_group_key(const std::string& root) {
    struct stat st {};
    if (::stat(root.c_str(), &st) != 0) return fail(detail::group_error("cannot look at the root", root, errno));
    PlaceholderGroupKey key{placeholder_group_anchor(root)};
    if (key.anchor != root && ::stat(key.anchor.c_str(), &st) != 0)
        return fail(detail::group_error("cannot look at the root's git directory", key.anchor, errno));
    key.dev = st.st_dev;
    key.ino = st.st_ino;
    return key;
}

SBX_INLINE std::string placeholder_group_name(const std::string& dir, std::uint64_t root_dev, std::uint64_t root_ino) {
    return dir + "/root-" + std::to_string(root_dev) + "-" + std::to_string(root_ino);
}

SBX_INLINE std::string registry_record(const RegisteredPlaceholder& p) {
    return std::string(1, registry_letter(p.kind)) + ' ' + std::to_string(p.dev) + ' ' + std::to_string(p.ino) + ' ' +
           p.path + '\0';
}

SBX_INLINE std::string exclude_record(const RegisteredExclude& x) {
    return "X " + std::to_string(x.dev) + ' ' + std::to_string(x.ino) + ' ' + x.path + '\0';
}

SBX_INLINE std::vector<RegisteredPlaceholder> parse_registry(std::string_view text,
                                                         std::vector<RegisteredExclude>* excludes) {
    std::vector<RegisteredPlaceholder> out;
    std::size_t at = 0;
    while (at < text.size()) {
        const auto end = text.find('\0', at);
        if (end == std::string_view::npos) break;
        std::string_view rec = text.substr(at, end - at);
        at = end + 1;
        const bool exclude = rec.size() >= 2 && rec[0] == 'X' && rec[1] == ' ';
        const auto kind = rec.size() < 2 || rec[1] != ' ' ? std::nullopt : registry_kind(rec[0]);
        if (!kind && !exclude) break;
        RegisteredPlaceholder p;
        if (kind) p.kind = *kind;
        rec.remove_prefix(2);
        auto number = [&](std::uint64_t& v) {
            auto [ptr, ec] = std::from_chars(rec.data(), rec.data() + rec.size(), v);
            if (ec != std::errc() || ptr == rec.data() || ptr == rec.data() + rec.size() || *ptr != ' ') return false;
            rec.remove_prefix(static_cast<std::size_t>(ptr - rec.data()) + 1);
            return true;
        };
        if (!number(p.dev) || !number(p.ino)) break;
        p.path = std::string(rec);
        if (!paths::is_absolute(p.path) || paths::normalize(p.path) != p.path) break;
        if (exclude) {
            if (excludes != nullptr) excludes->push_back(RegisteredExclude{p.dev, p.ino, std::move(p.path)});
            continue;
        }
        out.push_back(std::move(p));
    }
    return out;
}

SBX_INLINE bool is_made_placeholder(const struct stat& st, const RegisteredPlaceholder& p) {
    if (st.st_dev != p.dev || st.st_ino != p.ino) return false;
    if (p.kind == Placeholder::directory) return S_ISDIR(st.st_mode);
    return S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) == placeholder_content(p.kind, p.path).size();
}

SBX_INLINE bool still_placeholder(const RegisteredPlaceholder& p) {
    struct stat st {};
    return ::lstat(p.path.c_str(), &st) == 0 && is_made_placeholder(st, p);
}

SBX_INLINE int open_to_lock(const std::string& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st {};
    if (fd >= 0 && (::fstat(fd, &st) != 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))) {
        ::close(fd);
        return -1;
    }
    return fd;
}

SBX_INLINE std::optional<Error> foreign_placeholder(const std::string& path, const std::string& root) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
    const std::string_view name = std::string_view(path).substr(path.rfind('/') + 1);
    const auto kind = name == "commondir" ? Placeholder::commondir : Placeholder::file;
    const bool looks_made = (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) ==
                                                         placeholder_content(kind, path).size()) ||
                            (S_ISDIR(st.st_mode) && st.st_nlink == 2);
    if (!looks_made) return std::nullopt;
    const int fd = open_to_lock(path);
    if (fd < 0) return std::nullopt;
    const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    ::close(fd);
    if (!held) return std::nullopt;
    if (st.st_uid == ::geteuid())
        return Error(Errc::unavailable, "sandboxed commands of yours that keep their lock files elsewhere (another "
                                        "/tmp, or /run/user/" + std::to_string(st.st_uid) +
                                        " made or removed since they started) are running in " + root +
                                        " (this is a placeholder of theirs, in use); wait until they end")
            .in_file(path);
    const std::string who = "uid " + std::to_string(st.st_uid);
    return Error(Errc::unavailable, who + " has sandboxed commands running in " + root +
                                        " (this is a placeholder of theirs, in use); sandboxes of two users cannot "
                                        "share a root's placeholders: wait until those commands end, or run this "
                                        "one as " + who)
        .in_file(path);
}

SBX_INLINE std::vector<RegisteredPlaceholder> read_registry(int fd, std::vector<RegisteredExclude>* excludes) {
    if (::lseek(fd, 0, SEEK_SET) != 0) return {};
    auto text = read_all(fd, std::size_t{16} << 20, "the lock file");
    if (!text) return {};
    return parse_registry(*text, excludes);
}

SBX_INLINE expected<GroupSnapshot> GroupSnapshot::take(const std::string& root) {
    auto key = placeholder_group_key(root);
    SBX_TRY(key);
    auto dir = make_group_directory();
    if (!dir) {
        // No directory, and none can be made (a read-only /tmp): then no
        // sandbox of this user can have a group anywhere; the launcher says
        // why it cannot make one either.
        struct stat d {};
        if (::lstat(placeholder_group_directory().c_str(), &d) != 0 && errno == ENOENT)
            return GroupSnapshot("", -1);
        return fail(dir.error());
    }
    const std::string name = placeholder_group_name(*dir, key->dev, key->ino);
    auto fd = open_locked_group_file(name + ".lock", LOCK_SH, true);
    SBX_TRY(fd);
    GroupSnapshot g(name, *fd);
    for (auto& p : read_registry(*fd))
        if ((paths::at_or_under(p.path, root) || paths::at_or_under(p.path, key->anchor)) && still_placeholder(p))
            g.placeholders_.push_back(std::move(p));
    return g;
}

SBX_INLINE std::vector<std::string> GroupSnapshot::paths() const {
    std::vector<std::string> out;
    for (const auto& p : placeholders_) out.push_back(p.path);
    return out;
}

SBX_INLINE void GroupSnapshot::release() {
    if (fd_ < 0) return;
    const int fd = fd_;
    fd_ = -1;
    (void)::flock(fd, LOCK_UN);
    struct stat st {};
    const std::string lock = name_ + ".lock", live = name_ + ".live";
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0 && detail::still_there(fd, lock) && ::fstat(fd, &st) == 0 &&
        st.st_size == 0) {
        const int lfd = ::open(live.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
        if (lfd < 0 || ::flock(lfd, LOCK_EX | LOCK_NB) == 0) {
            if (lfd >= 0) ::unlink(live.c_str());
            ::unlink(lock.c_str());
            ::rmdir(paths::parent(lock).c_str());  // fails while other roots' files are there
        }
        if (lfd >= 0) ::close(lfd);
    }
    ::close(fd);
}

SBX_INLINE expected<std::vector<std::string>> HidingFs::list(const std::string& path) const {
    auto names = inner_.list(path);
    if (!names || hidden_.empty()) return names;
    std::erase_if(*names, [&](const std::string& n) { return hides(paths::join(path, n)); });
    return names;
}

SBX_INLINE expected<std::vector<FsView::Entry>> HidingFs::list_typed(const std::string& path) const {
    auto entries = inner_.list_typed(path);
    if (!entries || hidden_.empty()) return entries;
    std::erase_if(*entries, [&](const Entry& e) { return hides(paths::join(path, e.name)); });
    return entries;
}

SBX_INLINE bool HidingFs::hides(const std::string& path) const {
    for (const auto& h : hidden_)
        if (paths::at_or_under(path, h)) return true;
    return false;
}

}  // namespace sbx
#endif
