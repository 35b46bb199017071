// launchers/linux/placeholders.cpp - the placeholders (placeholders.hpp).
#include "linux/placeholders.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "base/fd_io.hpp"
#include "sbx/core/paths.hpp"
#include "shared/leftovers.hpp"

namespace sbx::linux_sandbox {

using namespace sbx::launcher;

namespace {

// Makes dirfd/name, mode 0444, holding `content`, all at once where the
// filesystem can (an unnamed file written, then linked in); elsewhere made and
// written. A descriptor on it, or none with errno (EEXIST when something is there).
Fd make_whole_file(int dirfd, const std::string& name, const std::string& content) {
    Fd fd(::openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0444));
    if (fd.ok()) {
        const std::string from = "/proc/self/fd/" + std::to_string(fd.get());
        if (write_all(fd.get(), content.data(), content.size()) &&
            ::linkat(AT_FDCWD, from.c_str(), dirfd, name.c_str(), AT_SYMLINK_FOLLOW) == 0)
            return fd;
        return Fd();  // the unnamed file goes with `fd`
    }
    fd = Fd(::openat(dirfd, name.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444));
    if (fd.ok() && !write_all(fd.get(), content.data(), content.size())) {
        const int err = errno;
        (void)::unlinkat(dirfd, name.c_str(), 0);
        errno = err;
        return Fd();
    }
    return fd;
}

// Open descriptors on file placeholders, one per content, that new ones are made
// hard links of.
class LinkSources {
public:
    // `linking` false: it offers none, and every placeholder is a file of its own.
    explicit LinkSources(bool linking) : linking_(linking) {}
    // An existing placeholder of the group, when it is still as made.
    void offer(const sbx::RegisteredPlaceholder& e) {
        if (!linking_) return;
        const std::string content = sbx::placeholder_content(e.kind, e.path);
        if (find(content) >= 0) return;
        Fd fd(::open(e.path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        struct stat st {};
        if (fd.ok() && ::fstat(fd.get(), &st) == 0 && sbx::is_made_placeholder(st, e))
            sources_.push_back({content, std::move(fd)});
    }
    // A placeholder just made; `fd` stays the caller's.
    void keep(const std::string& content, int fd) {
        if (!linking_ || find(content) >= 0) return;
        if (Fd copy(::fcntl(fd, F_DUPFD_CLOEXEC, 0)); copy.ok()) sources_.push_back({content, std::move(copy)});
    }
    int find(const std::string& content) const {
        for (const auto& s : sources_)
            if (s.content == content) return s.fd.get();
        return -1;
    }

private:
    struct Source {
        std::string content;
        Fd fd;
    };
    bool linking_;
    std::vector<Source> sources_;
};

// The directory a run of placeholders lies in (most lie at the root's top),
// opened once for the run, and what it was when opened.
class PlaceholderParent {
public:
    // Opens `parent` unless it is the one open.
    sbx::expected<void> open(const std::string& parent) {
        if (fd_.ok() && parent == path_) return {};
        path_ = parent;
        fd_ = Fd(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!fd_.ok())
            return sbx::fail(sbx::Error(sbx::Errc::stale_plan, std::string("cannot open a placeholder's directory: ") +
                                                                   std::strerror(errno))
                                 .in_file(parent));
        if (::fstat(fd_.get(), &st_) != 0) st_ = {};
        return {};
    }
    int fd() const { return fd_.get(); }
    // It is the directory the plan saw.
    bool is(const sbx::Identity& id) const { return st_.st_dev == id.dev && st_.st_ino == id.ino; }

private:
    std::string path_;
    Fd fd_;
    struct stat st_ {};
};

// Makes the placeholder `ph` as `name` in the directory open at `dirfd`: a file
// as a hard link to one of `sources` of the same content where it can, else
// made whole (and offered to `sources`); a directory empty, mode 0555. -1 with
// errno where it could not.
int make_placeholder_in(int dirfd, const std::string& name, const sbx::PlaceholderOp& ph, LinkSources& sources) {
    if (ph.kind != sbx::Placeholder::file && ph.kind != sbx::Placeholder::commondir)
        return ::mkdirat(dirfd, name.c_str(), 0555);
    const std::string content = sbx::placeholder_content(ph.kind, ph.path);
    const bool shared = ph.kind == sbx::Placeholder::file;  // a commondir names its own directory
    if (const int source = shared ? sources.find(content) : -1; source >= 0) {
        const std::string from = "/proc/self/fd/" + std::to_string(source);
        if (::linkat(AT_FDCWD, from.c_str(), dirfd, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
    }
    // The first of its content, or one a link cannot reach (another filesystem):
    // made whole before its name appears, so that no program outside ever reads
    // a half-written one.
    const Fd made = make_whole_file(dirfd, name, content);
    if (!made.ok()) return -1;
    if (shared) sources.keep(content, made.get());
    return 0;
}

}  // namespace

// Makes the placeholders, which are the root's group's: its last sandbox
// removes them. `existing`: the group's placeholders, read under its mutex.
sbx::expected<void> make_placeholders(std::span<const sbx::PlaceholderOp> placeholders, RootGroup& group,
                                      const std::vector<sbx::RegisteredPlaceholder>& existing, PlaceholderLinks links) {
    // Placeholders another sandbox of this root made are taken over as they are.
    // New file placeholders are hard links to one of the group's of the same
    // content: a link allocates no inode, and ext4 slows down sharply when inodes
    // are made and removed in quick succession. Every name is bound read-only.
    LinkSources sources(links == PlaceholderLinks::shared);
    for (const auto& e : existing)
        if (e.kind == sbx::Placeholder::file) sources.offer(e);
    PlaceholderParent dir;
    for (const auto& ph : placeholders) {
        const bool taken_over = std::any_of(existing.begin(), existing.end(), [&](const sbx::RegisteredPlaceholder& e) {
            return e.path == ph.path && e.kind == ph.kind;
        });
        if (taken_over) continue;
        const std::string parent = sbx::paths::parent(ph.path);
        const std::string name = ph.path.substr(parent.size() == 1 ? 1 : parent.size() + 1);
        SBX_TRY(dir.open(parent));
        if (!dir.is(ph.parent))
            return sbx::fail(sbx::Error(sbx::Errc::stale_plan, "a placeholder's directory changed since the plan was made")
                                 .in_file(parent));
        if (make_placeholder_in(dir.fd(), name, ph, sources) < 0) {
            const int err = errno;
            return sbx::fail(sbx::Error(sbx::Errc::stale_plan,
                                        std::string("cannot make the placeholder: ") + std::strerror(err) +
                                            (err == EEXIST ? " (something got there first)" : ""))
                                 .in_file(ph.path));
        }
        struct stat made_st {};
        if (::fstatat(dir.fd(), name.c_str(), &made_st, AT_SYMLINK_NOFOLLOW) != 0) made_st = {};
        const Leftover placeholder{leftover_kind(ph.kind), ph.path, made_st.st_dev, made_st.st_ino};
        if (auto r = group.record(placeholder); !r) {
            remove_leftovers({placeholder});
            return r;
        }
    }
    return {};
}

}  // namespace sbx::linux_sandbox
