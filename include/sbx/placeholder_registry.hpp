// sbx/placeholder_registry.hpp - the placeholders sandboxes sharing a root have
// made, as the planner and the launcher both need to see them.
//
// Sandboxes running in one root share its placeholders (launchers/root_group.hpp):
// the first makes them, the last one to end removes them, and a list of what was
// made (kind, device, inode, path) is kept in the group's lock file. A plan made
// while another sandbox runs must not take those placeholders for files the
// project has: it plans them as missing, as they will be once the group is done,
// and the launcher takes the existing ones over instead of making new ones.
// HidingFs is the FsView that shows the disk without them.
//
// This is I/O at the edge, like fs_view_disk.hpp: reading the list and looking at
// the disk. The group files live in $XDG_RUNTIME_DIR/sbx when that is the user's
// own directory, else /tmp/sbx-UID.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/fs_view.hpp"
#include "sbx/fs_view_disk.hpp"
#include "sbx/paths.hpp"
#include "sbx/protected_paths.hpp"

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
inline std::optional<Placeholder> registry_kind(char c) {
    if (c == 'F') return Placeholder::file;
    if (c == 'D') return Placeholder::directory;
    if (c == 'C') return Placeholder::commondir;
    return std::nullopt;
}

// The directory of the group files for this user (not made here).
inline std::string placeholder_group_directory() {
    const uid_t uid = ::geteuid();
    if (const char* xdg = std::getenv("XDG_RUNTIME_DIR"); xdg != nullptr && paths::is_absolute(xdg)) {
        struct stat st {};
        if (::stat(xdg, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == uid && (st.st_mode & 022) == 0)
            return paths::normalize(xdg) + "/sbx";
    }
    return "/tmp/sbx-" + std::to_string(uid);
}

// The group files' name for a root: DIR/root-DEV-INO (then .lock and .live).
inline std::string placeholder_group_name(const std::string& dir, std::uint64_t root_dev, std::uint64_t root_ino) {
    return dir + "/root-" + std::to_string(root_dev) + "-" + std::to_string(root_ino);
}

// One record: "F DEV INO PATH" (a file), "D ..." (a directory) or "C ..." (a
// commondir). The list is a sequence of NUL-terminated records; a malformed one
// ends it (what follows is not trusted).
inline std::string registry_record(const RegisteredPlaceholder& p) {
    return std::string(1, registry_letter(p.kind)) + ' ' + std::to_string(p.dev) + ' ' + std::to_string(p.ino) + ' ' +
           p.path + '\0';
}

inline std::vector<RegisteredPlaceholder> parse_registry(std::string_view text) {
    std::vector<RegisteredPlaceholder> out;
    std::size_t at = 0;
    while (at < text.size()) {
        const auto end = text.find('\0', at);
        if (end == std::string_view::npos) break;
        std::string_view rec = text.substr(at, end - at);
        at = end + 1;
        const auto kind = rec.size() < 2 || rec[1] != ' ' ? std::nullopt : registry_kind(rec[0]);
        if (!kind) break;
        RegisteredPlaceholder p;
        p.kind = *kind;
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
        out.push_back(std::move(p));
    }
    return out;
}

// Whether `st` (lstat of the placeholder's path) is still the placeholder that
// was made: the same inode, and a directory, or a file of its content's size.
inline bool is_made_placeholder(const struct stat& st, const RegisteredPlaceholder& p) {
    if (st.st_dev != p.dev || st.st_ino != p.ino) return false;
    if (p.kind == Placeholder::directory) return S_ISDIR(st.st_mode);
    return S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) == placeholder_content(p.kind, p.path).size();
}

// Whether what is at p.path now is the placeholder the record describes.
inline bool still_placeholder(const RegisteredPlaceholder& p) {
    struct stat st {};
    return ::lstat(p.path.c_str(), &st) == 0 && is_made_placeholder(st, p);
}

// The placeholders the group of `root` has made that are still there, read
// without the group's lock: a snapshot for planning, which the launcher checks
// again under the lock.
inline std::vector<RegisteredPlaceholder> live_placeholders(const std::string& root) {
    struct stat st {};
    if (::stat(root.c_str(), &st) != 0) return {};
    const std::string file = placeholder_group_name(placeholder_group_directory(), st.st_dev, st.st_ino) + ".lock";
    auto text = read_small_file(file, std::size_t{16} << 20);
    if (!text || !*text) return {};
    auto all = parse_registry(**text);
    std::vector<RegisteredPlaceholder> out;
    for (auto& p : all)
        if (paths::at_or_under(p.path, root) && still_placeholder(p)) out.push_back(std::move(p));
    return out;
}

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
    expected<std::vector<std::string>> list(const std::string& path) const override {
        auto names = inner_.list(path);
        if (!names || hidden_.empty()) return names;
        std::erase_if(*names, [&](const std::string& n) { return hides(paths::join(path, n)); });
        return names;
    }
    expected<std::vector<Entry>> list_typed(const std::string& path) const override {
        auto entries = inner_.list_typed(path);
        if (!entries || hidden_.empty()) return entries;
        std::erase_if(*entries, [&](const Entry& e) { return hides(paths::join(path, e.name)); });
        return entries;
    }
    expected<std::optional<std::string>> read_text(const std::string& path, std::size_t max_bytes) const override {
        if (hides(path)) return std::optional<std::string>{};
        return inner_.read_text(path, max_bytes);
    }

private:
    const FsView& inner_;
    std::vector<std::string> hidden_;

    bool hides(const std::string& path) const {
        for (const auto& h : hidden_)
            if (paths::at_or_under(path, h)) return true;
        return false;
    }
};

}  // namespace sbx
