// sbx/io/fs_view_disk.hpp - the FsView that reads the real filesystem.
//
// This is I/O by design: programs hand a DiskFs to the engine's pure functions.
#pragma once

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/inline.hpp"

namespace sbx {

// Everything left to read on `fd`, refusing more than `max_bytes` with
// `too_large` (named after `path`). For pipes, memfds and files alike.
SBX_INLINE expected<std::string> read_all(int fd, std::size_t max_bytes, const std::string& path,
                                      Errc too_large = Errc::io_error);

// The whole of a small regular file, following symlinks, or nullopt when nothing
// is at `path`. Anything but a regular file is refused without reading: a FIFO
// would block (it is opened O_NONBLOCK, so opening does not), a device never end.
SBX_INLINE expected<std::optional<std::string>> read_small_file(const std::string& path, std::size_t max_bytes,
                                                            Errc too_large = Errc::io_error);

class DiskFs final : public FsView {
public:
    expected<std::optional<FileStat>> lstat(const std::string& path) const override;

    expected<std::string> readlink(const std::string& path) const override;

    expected<std::vector<std::string>> list(const std::string& path) const override {
        return names_of(list_typed(path));
    }

    expected<std::vector<Entry>> list_typed(const std::string& path) const override;

    expected<std::optional<std::string>> read_text(const std::string& path, std::size_t max_bytes) const override {
        return read_small_file(path, max_bytes);
    }
};

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_IO)

namespace sbx {

SBX_INLINE expected<std::string> read_all(int fd, std::size_t max_bytes, const std::string& path,
                                      Errc too_large) {
    std::string text;
    char buf[65536];
    for (;;) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(Error(Errc::io_error, std::string("cannot read: ") + std::strerror(errno)).in_file(path));
        }
        if (n == 0) return text;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > max_bytes)
            return fail(Error(too_large, "the file is too large (more than " + std::to_string(max_bytes) + " bytes)")
                            .in_file(path));
    }
}

SBX_INLINE expected<std::optional<std::string>> read_small_file(const std::string& path, std::size_t max_bytes,
                                                            Errc too_large) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT || errno == ENOTDIR) return std::optional<std::string>{};
        return fail(Error(Errc::io_error, std::string("cannot open: ") + std::strerror(errno)).in_file(path));
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0)
        return fail(Error(Errc::io_error, std::string("cannot stat: ") + std::strerror(errno)).in_file(path));
    if (!S_ISREG(st.st_mode)) return fail(Error(Errc::io_error, "not a regular file").in_file(path));
    if (static_cast<std::size_t>(st.st_size) > max_bytes)
        return fail(Error(too_large, "the file is too large (more than " + std::to_string(max_bytes) + " bytes)")
                        .in_file(path));
    auto text = read_all(fd, max_bytes, path, too_large);
    SBX_TRY(text);
    return std::optional<std::string>(std::move(*text));
}

SBX_INLINE expected<std::optional<FileStat>> DiskFs::lstat(const std::string& path) const {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) return std::optional<FileStat>{};
        return fail(Error(Errc::io_error, std::strerror(errno)).in_file(path));
    }
    FileType type = S_ISDIR(st.st_mode)   ? FileType::directory
                    : S_ISREG(st.st_mode) ? FileType::regular
                    : S_ISLNK(st.st_mode) ? FileType::symlink
                                          : FileType::other;
    return std::optional<FileStat>(FileStat{type, static_cast<std::uint64_t>(st.st_dev),
                                            static_cast<std::uint64_t>(st.st_ino),
                                            static_cast<std::uint64_t>(st.st_nlink),
                                            static_cast<std::uint32_t>(st.st_uid)});
}

SBX_INLINE expected<std::string> DiskFs::readlink(const std::string& path) const {
    std::string buf(256, '\0');
    for (;;) {
        ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
        if (n < 0) return fail(Error(Errc::io_error, std::strerror(errno)).in_file(path));
        if (static_cast<std::size_t>(n) < buf.size()) {
            buf.resize(static_cast<std::size_t>(n));
            return buf;
        }
        if (buf.size() >= (1u << 16)) return fail(Error(Errc::io_error, "symbolic link target too long").in_file(path));
        buf.resize(buf.size() * 2);
    }
}

SBX_INLINE expected<std::vector<FsView::Entry>> DiskFs::list_typed(const std::string& path) const {
    // getdents64 on a plain descriptor: opendir(3) would add an fstat and a
    // 32 KiB allocation to every directory a plan looks through.
    const int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return fail(Error(Errc::io_error, std::strerror(errno)).in_file(path));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    std::vector<Entry> out;
    alignas(8) char buf[16384];
    for (;;) {
        const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return fail(Error(Errc::io_error, std::strerror(errno)).in_file(path));
        }
        if (n == 0) break;
        for (long off = 0; off < n;) {
            // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name
            unsigned short reclen;
            std::memcpy(&reclen, buf + off + 16, sizeof reclen);
            const auto d_type = static_cast<unsigned char>(buf[off + 18]);
            const std::string_view name(buf + off + 19);
            off += reclen;
            if (name == "." || name == "..") continue;
            std::optional<FileType> type;
            switch (d_type) {
                case DT_DIR: type = FileType::directory; break;
                case DT_REG: type = FileType::regular; break;
                case DT_LNK: type = FileType::symlink; break;
                case DT_UNKNOWN: break;  // some filesystems do not say: ask lstat
                default: type = FileType::other; break;
            }
            out.push_back(Entry{std::string(name), type});
        }
    }
    return out;
}

}  // namespace sbx
#endif
