#include "root_group.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "fd_io.hpp"
#include "sbx/fs_view_disk.hpp"
#include "sbx/paths.hpp"
#include "sbx/placeholder_registry.hpp"

namespace sbx::linux_sandbox {

namespace {

sbx::Error group_error(const std::string& what, const std::string& path, int err) {
    return sbx::Error(Errc::unavailable, what + (err != 0 ? std::string(": ") + std::strerror(err) : std::string()))
        .in_file(path);
}

bool flock_retry(int fd, int op) {
    while (::flock(fd, op) != 0)
        if (errno != EINTR) return false;
    return true;
}

int open_lock_file(const std::string& path) {
    return ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
}

// A directory of the user's own for the group files: $XDG_RUNTIME_DIR/sbx when
// that is the user's, else /tmp/sbx-UID. Made 0700; refused when someone else
// owns it or others may write it.
sbx::expected<std::string> lock_directory() {
    const uid_t uid = ::geteuid();
    const std::string dir = sbx::placeholder_group_directory();
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
        return sbx::fail(group_error("cannot make the directory of sbx's lock files", dir, errno));
    struct stat st {};
    if (::lstat(dir.c_str(), &st) != 0)
        return sbx::fail(group_error("cannot look at the directory of sbx's lock files", dir, errno));
    if (!S_ISDIR(st.st_mode) || st.st_uid != uid || (st.st_mode & 077) != 0)
        return sbx::fail(group_error("the directory of sbx's lock files is not this user's alone (a directory of mode "
                                     "0700 owned by uid " + std::to_string(uid) +
                                         "); remove it, or set XDG_RUNTIME_DIR to a directory of your own",
                                     dir, 0));
    return dir;
}

// The records in the lock file.
std::vector<sbx::RegisteredPlaceholder> read_records(int fd) {
    if (::lseek(fd, 0, SEEK_SET) != 0) return {};
    auto text = sbx::read_all(fd, std::size_t{16} << 20, "the lock file");
    if (!text) return {};
    return sbx::parse_registry(*text);
}

// Removes every recorded placeholder still as it was made, and empties the list.
std::vector<std::string> remove_recorded(int lock_fd) {
    std::vector<Leftover> list;
    for (auto& r : read_records(lock_fd))
        list.push_back(Leftover{leftover_kind(r.kind), std::move(r.path), r.dev, r.ino});
    auto problems = remove_leftovers(list);
    if (::ftruncate(lock_fd, 0) != 0) problems.push_back("cannot empty the list of placeholders: " + std::string(std::strerror(errno)));
    return problems;
}

// With the mutex held and this sandbox's shared lock gone: if no other sandbox
// of the root is live, remove the placeholders, then the group's files (a
// sandbox waiting for the mutex sees the file it locked is gone, and starts
// over), and the directory if nothing else is in it.
std::vector<std::string> leave_locked(int lock_fd, const std::string& lock_path, const std::string& live_path) {
    const int live = ::open(live_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
    if (live < 0) return {live_path + ": cannot open: " + std::strerror(errno)};
    std::vector<std::string> problems;
    if (::flock(live, LOCK_EX | LOCK_NB) == 0) {
        problems = remove_recorded(lock_fd);
        if (problems.empty()) {
            ::unlink(live_path.c_str());
            ::unlink(lock_path.c_str());
            ::rmdir(sbx::paths::parent(lock_path).c_str());  // fails while other roots' files are there
        }
    }
    ::close(live);
    return problems;
}

// Whether `fd` is still the file at `path`: the last sandbox of a group removes
// the files, so one that waited for the lock may hold a file no longer there.
bool still_there(int fd, const std::string& path) {
    struct stat a {}, b {};
    return ::fstat(fd, &a) == 0 && ::lstat(path.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

sbx::expected<RootGroup> RootGroup::join(const sbx::Plan& plan) {
    struct stat root {};
    if (::stat(plan.root.c_str(), &root) != 0) return sbx::fail(group_error("cannot look at the root", plan.root, errno));
    auto dir = lock_directory();
    if (!dir) return sbx::fail(dir.error());
    // The command must not be able to edit the list a launcher outside acts on.
    for (const auto& m : plan.filesystem.mounts)
        if (m.kind == sbx::MountKind::bind && sbx::paths::at_or_under(*dir, m.path))
            return sbx::fail(group_error("the directory of sbx's lock files lies in " + m.path +
                                             ", which the command may write; set XDG_RUNTIME_DIR to a directory "
                                             "outside it",
                                         *dir, 0));
    const std::string name = sbx::placeholder_group_name(*dir, root.st_dev, root.st_ino);
    std::string lock_path = name + ".lock", live_path = name + ".live";
    int lock_fd = -1;
    for (int attempt = 0; attempt < 100 && lock_fd < 0; ++attempt) {
        if (attempt > 0) (void)::mkdir(dir->c_str(), 0700);  // the last sandbox out may have removed it
        lock_fd = open_lock_file(lock_path);
        if (lock_fd < 0) {
            if (errno == ENOENT) continue;
            return sbx::fail(group_error("cannot open a lock file", lock_path, errno));
        }
        if (!flock_retry(lock_fd, LOCK_EX)) {
            const int err = errno;
            ::close(lock_fd);
            return sbx::fail(group_error("cannot lock", lock_path, err));
        }
        if (!still_there(lock_fd, lock_path)) {
            ::close(lock_fd);
            lock_fd = -1;
        }
    }
    if (lock_fd < 0) return sbx::fail(group_error("cannot hold on to a lock file", lock_path, 0));
    const int live_fd = open_lock_file(live_path);
    if (live_fd < 0 || !flock_retry(live_fd, LOCK_SH)) {
        const int err = errno;
        if (live_fd >= 0) ::close(live_fd);
        ::close(lock_fd);
        return sbx::fail(group_error("cannot lock", live_path, err));
    }
    return RootGroup(std::move(lock_path), std::move(live_path), lock_fd, live_fd);
}

RootGroup::RootGroup(RootGroup&& other) noexcept
    : lock_path_(std::move(other.lock_path_)),
      live_path_(std::move(other.live_path_)),
      lock_fd_(other.lock_fd_),
      live_fd_(other.live_fd_) {
    other.lock_fd_ = -1;
    other.live_fd_ = -1;
}

RootGroup::~RootGroup() {
    if (live_fd_ >= 0) ::close(live_fd_);
    if (lock_fd_ >= 0) ::close(lock_fd_);
}

std::vector<sbx::RegisteredPlaceholder> RootGroup::placeholders() const {
    std::vector<sbx::RegisteredPlaceholder> out;
    if (lock_fd_ < 0) return out;
    for (auto& p : read_records(lock_fd_))
        if (sbx::still_placeholder(p)) out.push_back(std::move(p));
    return out;
}

sbx::expected<void> RootGroup::record(const Leftover& placeholder) {
    const auto kind = placeholder_kind(placeholder.kind);
    if (!kind) return sbx::fail(group_error("not a placeholder", placeholder.path, EINVAL));
    const std::string rec =
        sbx::registry_record(sbx::RegisteredPlaceholder{*kind, placeholder.dev, placeholder.ino, placeholder.path});
    if (::lseek(lock_fd_, 0, SEEK_END) < 0 || !write_all(lock_fd_, rec.data(), rec.size()))
        return sbx::fail(group_error("cannot record a placeholder", lock_path_, errno));
    return {};
}

void RootGroup::unlock() {
    if (lock_fd_ >= 0) flock_retry(lock_fd_, LOCK_UN);
}

std::vector<std::string> RootGroup::leave() {
    if (lock_fd_ < 0) return {};
    flock_retry(lock_fd_, LOCK_EX);
    if (live_fd_ >= 0) ::close(live_fd_);
    live_fd_ = -1;
    auto problems = leave_locked(lock_fd_, lock_path_, live_path_);
    ::close(lock_fd_);  // and with it the mutex
    lock_fd_ = -1;
    return problems;
}

std::vector<std::string> RootGroup::leave_for_dead(const std::string& lock_path, const std::string& live_path) {
    const int lock_fd = ::open(lock_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
    if (lock_fd < 0) return {lock_path + ": cannot open: " + std::strerror(errno)};
    std::vector<std::string> problems;
    if (flock_retry(lock_fd, LOCK_EX) && still_there(lock_fd, lock_path))
        problems = leave_locked(lock_fd, lock_path, live_path);
    ::close(lock_fd);
    return problems;
}

}  // namespace sbx::linux_sandbox
