// launchers/shared/tool_cache.cpp - see tool_cache.hpp.
#include "shared/tool_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/fd_io.hpp"
#include "sbx/core/paths.hpp"

namespace sbx::launcher {

namespace {

tl::unexpected<sbx::Error> refuse(const std::string& at, const std::string& why) {
    return sbx::fail(sbx::Error(sbx::Errc::invalid_argument, "the tool cache home cannot be made safely: " + why +
                                                                 "; fix it, or run with --no-tool-cache")
                         .in_file(at));
}

tl::unexpected<sbx::Error> io(const std::string& at, const std::string& what, int err) {
    return sbx::fail(sbx::Error(sbx::Errc::io_error, "cannot " + what + " for the tool cache home: " + std::strerror(err))
                         .in_file(at));
}

// Whether a directory's owner and mode let nobody but `uid` (and root) change
// what lies in it.
sbx::expected<void> check_directory(int fd, const std::string& at, uid_t uid, bool last) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) return io(at, "look at a directory", errno);
    if (!S_ISDIR(st.st_mode)) return refuse(at, "not a directory");
    if (last && st.st_uid != uid)
        return refuse(at, "owned by uid " + std::to_string(st.st_uid) + ", not by you (uid " + std::to_string(uid) + ")");
    if (st.st_uid != uid && st.st_uid != 0)
        return refuse(at, "owned by uid " + std::to_string(st.st_uid) + ", neither you nor root");
    const bool others_write = (st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
    if (others_write && (last || (st.st_mode & S_ISVTX) == 0))
        return refuse(at, last ? "others may write to it" : "others may write to it and it has no sticky bit");
    return {};
}

}  // namespace

namespace {

// The walk of make_tool_cache; with `make` false, it stops at the first missing
// component, having checked those that exist.
sbx::expected<void> walk_tool_cache(const std::string& path, uid_t uid, bool make) {
    if (!sbx::paths::is_absolute(path) || sbx::paths::normalize(path) != path || path == "/")
        return refuse(path, "not an absolute, normalised path below /");
    Fd dir(::open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.get() < 0) return io("/", "open", errno);
    SBX_TRY(check_directory(dir.get(), "/", uid, false));
    const auto comps = sbx::paths::components(path);
    std::string at;
    for (std::size_t i = 0; i < comps.size(); ++i) {
        const std::string name(comps[i]);
        at += "/" + name;
        const bool last = i + 1 == comps.size();
        int next = ::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        // Checking only: a missing component is made later, and a symlink or a
        // file on the way is the plan's to refuse (make_plan fails on it).
        if (next < 0 && !make && (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)) return {};
        if (next < 0 && errno == ENOENT) {
            if (::mkdirat(dir.get(), name.c_str(), 0700) != 0 && errno != EEXIST) return io(at, "make a directory", errno);
            next = ::openat(dir.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (next < 0) {
            const int err = errno;
            struct stat st {};
            if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
                if (S_ISLNK(st.st_mode)) return refuse(at, "a symlink (sbx follows none on the way)");
                if (!S_ISDIR(st.st_mode)) return refuse(at, "not a directory");
            }
            return io(at, "open a directory", err);
        }
        dir = Fd(next);
        SBX_TRY(check_directory(dir.get(), at, uid, last));
    }
    return {};
}

}  // namespace

sbx::expected<void> make_tool_cache(const std::string& path, uid_t uid) { return walk_tool_cache(path, uid, true); }

sbx::expected<void> check_tool_cache(const std::string& path, uid_t uid) { return walk_tool_cache(path, uid, false); }

namespace {

tl::unexpected<sbx::Error> keep_error(const std::string& path, std::string_view what, const std::string& why, int err) {
    return sbx::fail(sbx::Error(sbx::Errc::io_error, "cannot keep " + std::string(what) + ": " + why +
                                                          (err != 0 ? std::string(": ") + std::strerror(err) : ""))
                         .in_file(path));
}

// The folder of `path`, made as make_tool_cache makes it, opened.
sbx::expected<Fd> kept_folder(const std::string& path, std::string_view what) {
    const std::string folder = sbx::paths::parent(path);
    SBX_TRY(make_tool_cache(folder, ::geteuid()));
    Fd dir(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (dir.get() < 0) return keep_error(path, what, "cannot open its folder", errno);
    return dir;
}

std::string base_of(const std::string& path) { return path.substr(path.rfind('/') + 1); }

}  // namespace

sbx::expected<void> keep_file(const std::string& path, const std::string& text, std::string_view what) {
    auto dir = kept_folder(path, what);
    SBX_TRY(dir);
    const std::string folder = sbx::paths::parent(path), name = base_of(path);
    const std::string temp = "." + name + ".new." + std::to_string(::getpid());
    Fd out(::openat(dir->get(), temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600));
    if (out.get() < 0) return keep_error(path, what, "cannot make " + sbx::paths::join(folder, temp), errno);
    if (!write_all(out.get(), text.data(), text.size())) {
        const int err = errno;
        (void)::unlinkat(dir->get(), temp.c_str(), 0);
        return keep_error(path, what, "cannot write " + sbx::paths::join(folder, temp), err);
    }
    out = Fd();
    if (::renameat(dir->get(), temp.c_str(), dir->get(), name.c_str()) != 0) {
        const int err = errno;
        (void)::unlinkat(dir->get(), temp.c_str(), 0);
        return keep_error(path, what, "cannot rename " + sbx::paths::join(folder, temp) + " to it", err);
    }
    return {};
}

sbx::expected<void> forget_file(const std::string& path, std::string_view what) {
    auto dir = kept_folder(path, what);
    SBX_TRY(dir);
    if (::unlinkat(dir->get(), base_of(path).c_str(), 0) != 0 && errno != ENOENT)
        return keep_error(path, what, "cannot remove it", errno);
    return {};
}

std::optional<std::string> read_small(int dir, const std::string& name, std::size_t max) {
    Fd fd(::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (fd.get() < 0) return std::nullopt;
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || static_cast<std::size_t>(st.st_size) > max)
        return std::nullopt;
    std::string text(static_cast<std::size_t>(st.st_size), '\0');
    std::size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return std::nullopt;
        got += static_cast<std::size_t>(n);
    }
    return text;
}

}  // namespace sbx::launcher
