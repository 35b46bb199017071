// sbx/rules/git_index.hpp - the gitlinks of a git index file, read strictly.
//
// gitlinks() reads the bytes of a repository's index (`.git/index`, git's
// "DIRC" format, versions 2, 3 and 4) and returns the paths of its gitlink
// entries (mode 0160000: a nested repository the index records by commit), which
// protected_paths() then looks at. Nothing else in the index matters here, so the
// reader stops after the last entry: the extensions and the trailing checksum are
// not read. Pure: the caller reads the file (through an FsView) and hands over its
// bytes. Anything malformed stops the reading with a problem naming the byte
// offset; the gitlinks read up to there are kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/inline.hpp"

namespace sbx {

namespace git_index {

// The largest index read (git's own for a 1 million file work tree is about
// 100 MiB; a project that large is not looked through for nested repositories).
inline constexpr std::size_t kMaxIndexBytes = std::size_t{64} << 20;
// The most gitlinks kept; past it the rest is left out with a problem.
inline constexpr std::size_t kMaxGitlinks = 1000;
// A gitlink's mode, and the mask of the object type bits.
inline constexpr std::uint32_t kGitlinkMode = 0160000;
inline constexpr std::uint32_t kTypeMask = 0170000;
// An entry's flags: the extended flag (versions 3 and 4 only), and the name
// length field, whose largest value means "this long or longer".
inline constexpr std::uint16_t kExtendedFlag = 0x4000;
inline constexpr std::uint16_t kNameMask = 0x0fff;
// The fixed part of an entry before the object name: ctime, mtime (seconds and
// nanoseconds each), dev, ino, mode, uid, gid, size, each 32 bits.
inline constexpr std::size_t kStatBytes = 40;

}  // namespace git_index

struct GitIndexRead {
    std::vector<std::string> gitlinks;  // paths relative to the work tree, in the index's order
    std::uint32_t version = 0;
    std::optional<std::string> problem;  // why reading stopped early, naming the byte offset
};

namespace index_detail {

SBX_INLINE std::uint32_t be32(std::string_view s, std::size_t at);

SBX_INLINE std::uint16_t be16(std::string_view s, std::size_t at);

// A path git itself would put in an index (verify_path): relative, no empty,
// `.` or `..` component, no `.git` component in any case, no NUL or control byte.
SBX_INLINE bool clean_path(std::string_view p);

}  // namespace index_detail

// The gitlinks of the index `bytes`, whose object names are `hash_bytes` long (20
// for SHA-1 repositories, 32 for SHA-256 ones: extensions.objectFormat says).
SBX_INLINE GitIndexRead gitlinks(std::string_view bytes, std::size_t hash_bytes = 20);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_RULES)

namespace sbx::index_detail {

SBX_INLINE std::uint32_t be32(std::string_view s, std::size_t at) {
    return (std::uint32_t{static_cast<unsigned char>(s[at])} << 24) |
           (std::uint32_t{static_cast<unsigned char>(s[at + 1])} << 16) |
           (std::uint32_t{static_cast<unsigned char>(s[at + 2])} << 8) | std::uint32_t{static_cast<unsigned char>(s[at + 3])};
}

SBX_INLINE std::uint16_t be16(std::string_view s, std::size_t at) {
    return static_cast<std::uint16_t>((static_cast<unsigned char>(s[at]) << 8) | static_cast<unsigned char>(s[at + 1]));
}

SBX_INLINE bool clean_path(std::string_view p) {
    if (p.empty() || p.front() == '/' || p.back() == '/') return false;
    std::size_t start = 0;
    for (;;) {
        const std::size_t slash = p.find('/', start);
        const std::string_view c = p.substr(start, slash == std::string_view::npos ? p.npos : slash - start);
        if (c.empty() || c == "." || c == "..") return false;
        if (c.size() == 4 && (c[0] == '.') && (c[1] | 0x20) == 'g' && (c[2] | 0x20) == 'i' && (c[3] | 0x20) == 't')
            return false;
        if (slash == std::string_view::npos) break;
        start = slash + 1;
    }
    for (unsigned char ch : p)
        if (ch < 0x20 || ch == 0x7f) return false;
    return true;
}

}  // namespace sbx::index_detail

namespace sbx {

SBX_INLINE GitIndexRead gitlinks(std::string_view bytes, std::size_t hash_bytes) {
    using namespace git_index;
    using index_detail::be16;
    using index_detail::be32;
    GitIndexRead out;
    auto stop = [&](std::size_t at, const std::string& why) {
        out.problem = "byte " + std::to_string(at) + ": " + why;
        return out;
    };
    if (hash_bytes != 20 && hash_bytes != 32) return stop(0, "unknown object name length");
    if (bytes.empty()) return out;  // git refuses an empty index, and runs nothing through it
    if (bytes.size() < 12) return stop(bytes.size(), "shorter than an index header");
    if (bytes.substr(0, 4) != "DIRC") return stop(0, "no DIRC signature: not a git index");
    out.version = be32(bytes, 4);
    if (out.version < 2 || out.version > 4)
        return stop(4, "index version " + std::to_string(out.version) + ", where 2, 3 and 4 are known");
    const std::uint32_t count = be32(bytes, 8);
    const std::size_t fixed = kStatBytes + hash_bytes + 2;  // up to and with the flags
    // Every entry takes at least its fixed part and a NUL (v4) or more: a count
    // the file cannot hold is refused before anything is read.
    if (std::uint64_t{count} * (fixed + 1) > bytes.size() - 12)
        return stop(8, std::to_string(count) + " entries cannot fit in " + std::to_string(bytes.size()) + " bytes");
    std::size_t at = 12;
    std::string v4_path;  // v4: each path is told as a change of the one before, kept here
    for (std::uint32_t e = 0; e < count; ++e) {
        const std::size_t start = at;
        if (bytes.size() - at < fixed) return stop(at, "entry " + std::to_string(e) + " is cut short");
        const std::uint32_t mode = be32(bytes, at + 24);
        const std::uint16_t flags = be16(bytes, at + kStatBytes + hash_bytes);
        at += fixed;
        if ((flags & kExtendedFlag) != 0) {
            if (out.version < 3) return stop(start, "entry " + std::to_string(e) + " has extended flags in a version 2 index");
            if (bytes.size() - at < 2) return stop(at, "entry " + std::to_string(e) + " is cut short");
            at += 2;
        }
        std::string_view path;
        if (out.version == 4) {
            // How many bytes to drop from the end of the previous path: git's
            // offset varint (each continuation adds one before shifting).
            std::uint64_t drop = 0;
            for (int n = 0;; ++n) {
                if (at >= bytes.size() || n == 9) return stop(at, "entry " + std::to_string(e) + " has a bad path prefix length");
                const auto c = static_cast<unsigned char>(bytes[at++]);
                drop = (drop << 7) | (c & 0x7fu);
                if ((c & 0x80u) == 0) break;
                ++drop;
            }
            if (drop > v4_path.size())
                return stop(start, "entry " + std::to_string(e) + " drops more of the previous path than it has");
            v4_path.resize(v4_path.size() - static_cast<std::size_t>(drop));
        }
        const std::size_t nul = bytes.find('\0', at);
        if (nul == std::string_view::npos) return stop(at, "entry " + std::to_string(e) + " has no end to its path");
        if (out.version == 4) {
            v4_path.append(bytes.substr(at, nul - at));
            path = v4_path;
        } else {
            path = bytes.substr(at, nul - at);
        }
        at = nul + 1;
        if (out.version != 4) {
            // 1 to 8 NULs end the entry on a multiple of 8 bytes from its start.
            const std::size_t padded = start + ((at - 1 - start) / 8 + 1) * 8;
            if (padded > bytes.size()) return stop(at, "entry " + std::to_string(e) + " is cut short in its padding");
            for (; at < padded; ++at)
                if (bytes[at] != '\0') return stop(at, "entry " + std::to_string(e) + " has bytes in its padding");
        }
        const std::size_t named = flags & kNameMask;
        if ((named < kNameMask && named != path.size()) || (named == kNameMask && path.size() < kNameMask))
            return stop(start, "entry " + std::to_string(e) + "'s name length does not match its path");
        if ((mode & kTypeMask) == kGitlinkMode) {
            // Only a gitlink's path is used, so only it must be one git would write.
            if (!index_detail::clean_path(path))
                return stop(start, "entry " + std::to_string(e) + " has a path git would not write");
            if (out.gitlinks.size() == kMaxGitlinks) return stop(start, "more than " + std::to_string(kMaxGitlinks) + " gitlinks");
            out.gitlinks.emplace_back(path);
        }
    }
    return out;
}

}  // namespace sbx
#endif
