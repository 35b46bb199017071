// tests/unit/git_index_writer.hpp - a tiny writer of git index files for the tests:
// entries with a mode and a path, in version 2, 3 or 4, with the zeros git would
// leave in the stat fields. No checksum: the reader never gets that far.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sbx_test {

struct IndexEntry {
    std::uint32_t mode;
    std::string path;
    bool extended = false;  // sets the extended flag and two more flag bytes (v3, v4)
};

inline void put32(std::string& out, std::uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>((v >> shift) & 0xff);
}

inline void put16(std::string& out, std::uint16_t v) {
    out += static_cast<char>(v >> 8);
    out += static_cast<char>(v & 0xff);
}

// git's offset varint, as the version 4 path prefix uses it.
inline std::string varint(std::uint64_t v) {
    std::string rev(1, static_cast<char>(v & 0x7f));
    while (v >>= 7) {
        --v;
        rev += static_cast<char>(0x80 | (v & 0x7f));
    }
    return std::string(rev.rbegin(), rev.rend());
}

inline std::string index_file(std::uint32_t version, const std::vector<IndexEntry>& entries, std::size_t hash = 20) {
    std::string out = "DIRC";
    put32(out, version);
    put32(out, static_cast<std::uint32_t>(entries.size()));
    std::string previous;
    for (const auto& e : entries) {
        const std::size_t start = out.size();
        for (int i = 0; i < 6; ++i) put32(out, 0);  // ctime, mtime, dev, ino
        put32(out, e.mode);
        for (int i = 0; i < 3; ++i) put32(out, 0);  // uid, gid, size
        out.append(hash, '\x11');                    // the object name
        const auto len = static_cast<std::uint16_t>(e.path.size() < 0xfff ? e.path.size() : 0xfff);
        put16(out, static_cast<std::uint16_t>(len | (e.extended ? 0x4000 : 0)));
        if (e.extended) put16(out, 0);
        if (version == 4) {
            std::size_t common = 0;
            while (common < previous.size() && common < e.path.size() && previous[common] == e.path[common]) ++common;
            out += varint(previous.size() - common);
            out += e.path.substr(common);
            out += '\0';
        } else {
            out += e.path;
            const std::size_t used = out.size() - start;
            out.append(8 - used % 8, '\0');  // 1 to 8 NULs
        }
        previous = e.path;
    }
    out.append(20, '\0');  // where extensions and the checksum would be
    return out;
}

}  // namespace sbx_test
