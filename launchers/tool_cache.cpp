// launchers/tool_cache.cpp - see tool_cache.hpp.
#include "tool_cache.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "fd_io.hpp"
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

}  // namespace sbx::launcher
