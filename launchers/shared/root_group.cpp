#include "shared/root_group.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#if defined(__linux__)
#include <linux/openat2.h>
#include <sys/syscall.h>
#endif
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <utility>
#include <string>
#include <vector>

#include "base/fd_io.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "sbx/io/placeholder_registry.hpp"
#include "sbx/plan/git_exclude.hpp"

namespace sbx::launcher {

namespace {

using sbx::detail::flock_retry;
using sbx::detail::group_error;
using sbx::detail::still_there;

Fd open_lock_file(const std::string& path) {
    return Fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600));
}

// The exclude file at `path` (no symlink on the way), when it is still the file
// of that device and inode, for reading and writing; none otherwise.
// (Linux alone has openat2; sbx-mac makes no placeholders and edits none.)
Fd open_exclude(const std::string& path, std::uint64_t dev, std::uint64_t ino) {
#if defined(__linux__)
    open_how how{};
    how.flags = O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    Fd fd(static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how)));
#else
    (void)path;
    Fd fd;
#endif
    struct stat st {};
    if (fd.ok() && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) && st.st_nlink == 1 && st.st_dev == dev &&
        st.st_ino == ino && st.st_size <= (off_t{1} << 20))
        return fd;
    return Fd();
}

// Rewrites the exclude file open at `fd` as `edit` makes its text; what stays
// in front of sbx's block is written over with itself, so that git reading the
// file meanwhile sees the user's lines whole.
template <class Edit>
bool rewrite_exclude(int fd, Edit&& edit) {
    auto text = sbx::read_all(fd, std::size_t{1} << 20, "the exclude file");
    if (!text) return false;
    const std::string out = edit(sbx::split_exclude(*text));
    if (out == *text) return true;
    return ::lseek(fd, 0, SEEK_SET) == 0 && write_all(fd, out.data(), out.size()) &&
           ::ftruncate(fd, static_cast<off_t>(out.size())) == 0;
}

// Removes every recorded placeholder still as it was made, takes sbx's block
// out of the exclude files it was added to, and empties the list.
std::vector<std::string> remove_recorded(int lock_fd) {
    std::vector<Leftover> list;
    std::vector<sbx::RegisteredExclude> excludes;
    for (auto& r : sbx::read_registry(lock_fd, &excludes))
        list.push_back(Leftover{leftover_kind(r.kind), std::move(r.path), r.dev, r.ino});
    auto problems = remove_leftovers(list);
    for (const auto& x : excludes) {
        const Fd fd = open_exclude(x.path, x.dev, x.ino);
        if (!fd.ok()) continue;  // gone or replaced: not sbx's to edit any more
        if (!rewrite_exclude(fd.get(), [](const sbx::ExcludeText& t) { return t.rest; }))
            problems.push_back(x.path + ": cannot take sbx's lines out: " + std::strerror(errno));
    }
    if (::ftruncate(lock_fd, 0) != 0) problems.push_back("cannot empty the list of placeholders: " + std::string(std::strerror(errno)));
    return problems;
}

// With the mutex held and this sandbox's shared lock gone: if no other sandbox
// of the root is live, remove the placeholders, then the group's files (a
// sandbox waiting for the mutex sees the file it locked is gone, and starts
// over), and the directory if nothing else is in it.
std::vector<std::string> leave_locked(int lock_fd, const std::string& lock_path, const std::string& live_path) {
    const Fd live(::open(live_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY));
    if (!live.ok()) return {live_path + ": cannot open: " + std::strerror(errno)};
    std::vector<std::string> problems;
    if (::flock(live.get(), LOCK_EX | LOCK_NB) == 0) {
        // What could not be removed is said, not kept: the list is emptied
        // either way, so the group's files would only be left behind.
        problems = remove_recorded(lock_fd);
        ::unlink(live_path.c_str());
        ::unlink(lock_path.c_str());
        ::rmdir(sbx::paths::parent(lock_path).c_str());  // fails while other roots' files are there
    }
    return problems;
}

}  // namespace

sbx::expected<RootGroup> RootGroup::join(const sbx::Plan& plan) {
    // The main work tree and the linked worktrees of a repository are one group.
    auto key = sbx::placeholder_group_key(plan.root);
    SBX_TRY(key);
    auto dir = sbx::make_group_directory();
    SBX_TRY(dir);
    // The command must not be able to edit the list a launcher outside acts on.
    for (const auto& m : plan.filesystem.mounts)
        if (m.kind == sbx::MountKind::bind && sbx::paths::at_or_under(*dir, m.path))
            return sbx::fail(group_error("the directory of sbx's lock files lies in " + m.path +
                                             ", which the command may write; sbx keeps them in /run/user/UID/sbx "
                                             "where that directory is the user's, else in /tmp/sbx-UID: leave it "
                                             "out of allowWrite",
                                         *dir, 0));
    const std::string name = sbx::placeholder_group_name(*dir, key->dev, key->ino);
    std::string lock_path = name + ".lock", live_path = name + ".live";
    auto locked = sbx::open_locked_group_file(lock_path, LOCK_EX, true);
    SBX_TRY(locked);
    Fd lock_fd(*locked);
    Fd live_fd = open_lock_file(live_path);
    if (!live_fd.ok() || !flock_retry(live_fd.get(), LOCK_SH))
        return sbx::fail(group_error("cannot lock", live_path, errno));
    return RootGroup(std::move(lock_path), std::move(live_path), std::move(lock_fd), std::move(live_fd));
}

void RootGroup::hold_placeholders(std::span<const sbx::PlaceholderOp> placeholders) {
    std::vector<std::pair<dev_t, ino_t>> seen;
    for (const auto& ph : placeholders) {
        Fd fd(sbx::open_to_lock(ph.path));
        struct stat st {};
        if (!fd.ok() || ::fstat(fd.get(), &st) != 0 ||
            std::find(seen.begin(), seen.end(), std::pair{st.st_dev, st.st_ino}) != seen.end() ||
            ::flock(fd.get(), LOCK_SH | LOCK_NB) != 0)  // held alone by a command inside: it shows use all the same
            continue;
        seen.emplace_back(st.st_dev, st.st_ino);
        held_.push_back(std::move(fd));
    }
}

std::optional<sbx::Error> RootGroup::foreign_group(const sbx::Plan& plan,
                                                  const std::vector<sbx::RegisteredPlaceholder>& ours) {
    // What the plan binds as the project's own files, and where it would make
    // placeholders that this group has not made.
    for (const auto& m : plan.filesystem.mounts)
        if (m.kind == sbx::MountKind::ro_bind && m.expect.exists && m.path == m.source &&
            sbx::paths::at_or_under(m.path, plan.root) && m.path != plan.root)
            if (auto why = sbx::foreign_placeholder(m.path, plan.root)) return why;
    for (const auto& ph : plan.filesystem.placeholders) {
        const bool own = std::any_of(ours.begin(), ours.end(), [&](const sbx::RegisteredPlaceholder& p) { return p.path == ph.path; });
        if (!own)
            if (auto why = sbx::foreign_placeholder(ph.path, plan.root)) return why;
    }
    return std::nullopt;
}

std::vector<sbx::RegisteredPlaceholder> RootGroup::placeholders() const {
    std::vector<sbx::RegisteredPlaceholder> out;
    if (!lock_fd_.ok()) return out;
    for (auto& p : sbx::read_registry(lock_fd_.get()))
        if (sbx::still_placeholder(p)) out.push_back(std::move(p));
    return out;
}

sbx::expected<void> RootGroup::record(const Leftover& placeholder) {
    const auto kind = placeholder_kind(placeholder.kind);
    if (!kind) return sbx::fail(group_error("not a placeholder", placeholder.path, EINVAL));
    const std::string rec =
        sbx::registry_record(sbx::RegisteredPlaceholder{*kind, placeholder.dev, placeholder.ino, placeholder.path});
    if (::lseek(lock_fd_.get(), 0, SEEK_END) < 0 || !write_all(lock_fd_.get(), rec.data(), rec.size()))
        return sbx::fail(group_error("cannot record a placeholder", lock_path_, errno));
    return {};
}

void RootGroup::exclude_placeholders(const sbx::Plan& plan) {
    const auto& ex = plan.filesystem.git_exclude;
    if (!ex || !lock_fd_.ok()) return;
    Fd fd = open_exclude(ex->path, ex->expect.dev, ex->expect.ino);
    if (!fd.ok()) return;  // verify_plan saw it; a race since: git outside lists the placeholders
    const auto mine = sbx::split_exclude(ex->content).lines;
    const bool rewritten = rewrite_exclude(fd.get(), [&](const sbx::ExcludeText& t) {
        auto lines = t.lines;
        for (const auto& l : mine)
            if (std::find(lines.begin(), lines.end(), l) == lines.end()) lines.push_back(l);
        return sbx::join_exclude(t.rest, lines);
    });
    fd.reset();
    if (!rewritten) return;
    std::vector<sbx::RegisteredExclude> known;
    (void)sbx::read_registry(lock_fd_.get(), &known);
    const bool recorded = std::any_of(known.begin(), known.end(), [&](const sbx::RegisteredExclude& x) {
        return x.path == ex->path && x.dev == ex->expect.dev && x.ino == ex->expect.ino;
    });
    if (recorded) return;
    const std::string rec = sbx::exclude_record({ex->expect.dev, ex->expect.ino, ex->path});
    if (::lseek(lock_fd_.get(), 0, SEEK_END) >= 0) (void)write_all(lock_fd_.get(), rec.data(), rec.size());
}

void RootGroup::unlock() {
    if (lock_fd_.ok()) flock_retry(lock_fd_.get(), LOCK_UN);
}

void RootGroup::lock() {
    if (lock_fd_.ok()) flock_retry(lock_fd_.get(), LOCK_EX);
}

std::vector<std::string> RootGroup::leave() {
    if (!lock_fd_.ok()) return {};
    flock_retry(lock_fd_.get(), LOCK_EX);
    live_fd_.reset();
    auto problems = leave_locked(lock_fd_.get(), lock_path_, live_path_);
    // Only now, the placeholders being gone if this was the last sandbox, may
    // another user's start.
    held_.clear();
    lock_fd_.reset();  // and with it the mutex
    return problems;
}

std::vector<std::string> RootGroup::leave_for_dead(const std::string& lock_path, const std::string& live_path) {
    const Fd lock_fd(::open(lock_path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY));
    if (!lock_fd.ok()) return {lock_path + ": cannot open: " + std::strerror(errno)};
    std::vector<std::string> problems;
    if (flock_retry(lock_fd.get(), LOCK_EX) && still_there(lock_fd.get(), lock_path))
        problems = leave_locked(lock_fd.get(), lock_path, live_path);
    return problems;
}

}  // namespace sbx::launcher
