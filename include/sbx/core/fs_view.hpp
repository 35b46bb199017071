// sbx/core/fs_view.hpp - the engine's only window on the filesystem.
//
// Decisions that depend on what is on disk (where a symlink leads, whether a file
// has other hard links, what a directory holds) take an FsView. The disk
// implementation is in io/fs_view_disk.hpp; MemoryFs here is a tree in memory, so
// every such decision is a fast, reproducible unit test.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"

namespace sbx {

enum class FileType { regular, directory, symlink, other };

// What lstat(2) says of a path: its type, the identity the launcher re-checks,
// and its owner (whose a project's `.git` or `.claude` is: project_root.hpp).
struct FileStat {
    FileType type = FileType::other;
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t nlink = 0;
    std::uint32_t uid = 0;
};

class FsView {
public:
    virtual ~FsView() = default;
    // The path itself, not where a symlink leads. nullopt when nothing is there
    // (ENOENT, or a component is not a directory); an error for anything else.
    virtual expected<std::optional<FileStat>> lstat(const std::string& path) const = 0;
    // The target of the symlink at `path`, as written in the link.
    virtual expected<std::string> readlink(const std::string& path) const = 0;
    // The names in a directory, without "." and "..", in no particular order.
    virtual expected<std::vector<std::string>> list(const std::string& path) const = 0;
    // A directory's entries with their types where the listing tells them for free
    // (readdir's d_type), sparing an lstat per entry; nullopt where it does not.
    struct Entry {
        std::string name;
        std::optional<FileType> type;
    };
    virtual expected<std::vector<Entry>> list_typed(const std::string& path) const;

protected:
    // The names of a typed listing, for views whose list() is their list_typed().
    static expected<std::vector<std::string>> names_of(expected<std::vector<Entry>> entries);

public:
    // The contents of a small regular file (a `.git` file's `gitdir:` line, a
    // `commondir`, a git index), byte for byte (binary files too), following
    // symlinks. nullopt when nothing is there; an error for anything but a regular
    // file, or one longer than `max_bytes`.
    virtual expected<std::optional<std::string>> read_text(const std::string& path, std::size_t max_bytes) const = 0;
};

// How many symlinks resolve() follows before it calls it a loop (as the kernel).
inline constexpr int kMaxSymlinkHops = 40;

// Where `path` (absolute, normalised) really leads: every symlink on the way
// replaced by its target, as realpath(3) would, except that components that do
// not exist are kept as written. Errors: a symlink loop, an unreadable component.
SBX_INLINE expected<std::string> resolve(const FsView& fs, std::string_view path);

// Remembers what another view answered, for the length of one computation (a
// merge, a plan) that asks about the same directories many times. Not for
// keeping: the disk changes.
class CachedFs final : public FsView {
public:
    explicit CachedFs(const FsView& inner) : inner_(inner) {}

    expected<std::optional<FileStat>> lstat(const std::string& path) const override;
    expected<std::string> readlink(const std::string& path) const override;
    expected<std::vector<std::string>> list(const std::string& path) const override {
        return names_of(list_typed(path));  // one listing serves both questions
    }
    expected<std::vector<Entry>> list_typed(const std::string& path) const override { return listing(path); }

    // The cached listing itself, without a copy, valid as long as this view.
    const expected<std::vector<Entry>>& listing(const std::string& path) const;
    expected<std::optional<std::string>> read_text(const std::string& path, std::size_t max_bytes) const override {
        return inner_.read_text(path, max_bytes);
    }

private:
    const FsView& inner_;
    mutable std::unordered_map<std::string, expected<std::vector<Entry>>> typed_;
    mutable std::unordered_map<std::string, expected<std::optional<FileStat>>> stats_;
    mutable std::unordered_map<std::string, expected<std::string>> links_;
};

// Calls `fn` with a caching view of `fs`: `fs` itself when it already is one, so
// that computations nested in one another share a single cache.
template <class Fn>
auto with_cache(const FsView& fs, Fn&& fn) {
    if (const auto* c = dynamic_cast<const CachedFs*>(&fs)) return fn(*c);
    const CachedFs cached(fs);
    return fn(cached);
}

// A filesystem tree in memory for tests: directories, files, symlinks and hard
// links, with made-up device and inode numbers.
class MemoryFs final : public FsView {
public:
    MemoryFs() { nodes_["/"] = node(FileType::directory); }

    MemoryFs& dir(std::string_view path);
    MemoryFs& file(std::string_view path, std::string_view content = {});
    MemoryFs& symlink(std::string_view path, std::string_view target);
    // A second name for the file at `existing`: both then report two links.
    MemoryFs& hardlink(std::string_view path, std::string_view existing);
    // Makes lstat of anything below `path` fail, as a directory without search
    // permission would.
    MemoryFs& unreadable(std::string_view path) {
        unreadable_.push_back(paths::normalize(path));
        return *this;
    }
    // Makes `uid` the owner of what is at `path` (everything is uid 0's otherwise).
    MemoryFs& owner(std::string_view path, std::uint32_t uid) {
        nodes_.at(paths::normalize(path)).uid = uid;
        return *this;
    }

    expected<std::optional<FileStat>> lstat(const std::string& path) const override;

    expected<std::string> readlink(const std::string& path) const override;

    expected<std::vector<std::string>> list(const std::string& path) const override;

    expected<std::optional<std::string>> read_text(const std::string& path, std::size_t max_bytes) const override;

private:
    struct Node {
        FileType type;
        std::string target;
        std::uint64_t ino;
        std::uint32_t uid = 0;
    };
    std::map<std::string, Node> nodes_;
    std::map<std::uint64_t, std::uint64_t> links_;  // inode -> names
    std::vector<std::string> symlinks_;             // every symlink ever made

    // Whether a symlink may stand on the way to `p` (then the path must be walked).
    bool symlink_above(const std::string& p) const;
    std::vector<std::string> unreadable_;
    std::uint64_t next_ino_ = 100;

    // The node a path names, as the kernel walks it: symlinks on the way are
    // followed (the last one too when `follow_last`). nullopt when nothing is
    // there, a component on the way is not a directory, or links loop.
    std::optional<std::string> locate(const std::string& path, bool follow_last) const;

    Node node(FileType type, std::string target = {}) {
        links_[next_ino_] = 1;
        return Node{type, std::move(target), next_ino_++, 0};
    }

    void make_parents(std::string_view path) {
        for (auto p = paths::parent(paths::normalize(path)); !nodes_.count(p); p = paths::parent(p))
            nodes_[p] = node(FileType::directory);
    }
};

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_CORE)

namespace sbx {

SBX_INLINE expected<std::vector<FsView::Entry>> FsView::list_typed(const std::string& path) const {
    auto names = list(path);
    SBX_TRY(names);
    std::vector<Entry> out;
    out.reserve(names->size());
    for (auto& n : *names) out.push_back(Entry{std::move(n), std::nullopt});
    return out;
}

SBX_INLINE expected<std::vector<std::string>> FsView::names_of(expected<std::vector<Entry>> entries) {
    SBX_TRY(entries);
    std::vector<std::string> names;
    names.reserve(entries->size());
    for (auto& e : *entries) names.push_back(std::move(e.name));
    return names;
}

SBX_INLINE expected<std::string> resolve(const FsView& fs, std::string_view path) {
    std::string rest(path);  // what is still to walk; a symlink's target is put in front
    std::size_t i = 0;       // where the walk is in `rest`
    std::string done;        // the real path so far, "" standing for `/`
    int hops = 0;
    bool missing = false;  // once something is missing, the rest is kept lexically
    while (i < rest.size()) {
        while (i < rest.size() && rest[i] == '/') ++i;
        std::size_t j = i;
        while (j < rest.size() && rest[j] != '/') ++j;
        if (j == i) break;
        const std::size_t start = i;
        i = j;
        const std::string_view comp = std::string_view(rest).substr(start, j - start);
        if (comp == ".") continue;
        if (comp == "..") {
            const auto pos = done.rfind('/');
            done.resize(pos == std::string::npos ? 0 : pos);
            continue;
        }
        const std::size_t before = done.size();
        done += '/';
        done += comp;
        if (missing) continue;
        auto st = fs.lstat(done);
        if (!st) return fail(std::move(st.error()));
        if (!*st) {
            missing = true;
            continue;
        }
        if ((*st)->type != FileType::symlink) continue;
        if (++hops > kMaxSymlinkHops)
            return fail(Error(Errc::invalid_argument, "too many levels of symbolic links").in_file(std::string(path)));
        auto target = fs.readlink(done);
        if (!target) return fail(std::move(target.error()));
        if (target->empty()) return fail(Error(Errc::invalid_argument, "an empty symbolic link").in_file(done));
        done.resize(before);
        if (paths::is_absolute(*target)) done.clear();
        rest = *target + "/" + rest.substr(i);
        i = 0;
    }
    if (done.empty()) done.push_back('/');
    return done;
}

SBX_INLINE expected<std::optional<FileStat>> CachedFs::lstat(const std::string& path) const {
    auto it = stats_.find(path);
    if (it == stats_.end()) it = stats_.emplace(path, inner_.lstat(path)).first;
    return it->second;
}

SBX_INLINE expected<std::string> CachedFs::readlink(const std::string& path) const {
    auto it = links_.find(path);
    if (it == links_.end()) it = links_.emplace(path, inner_.readlink(path)).first;
    return it->second;
}

SBX_INLINE const expected<std::vector<FsView::Entry>>& CachedFs::listing(const std::string& path) const {
    auto it = typed_.find(path);
    if (it == typed_.end()) it = typed_.emplace(path, inner_.list_typed(path)).first;
    return it->second;
}

SBX_INLINE MemoryFs& MemoryFs::dir(std::string_view path) {
    make_parents(path);
    auto p = paths::normalize(path);
    if (!nodes_.count(p)) nodes_[p] = node(FileType::directory);
    return *this;
}

SBX_INLINE MemoryFs& MemoryFs::file(std::string_view path, std::string_view content) {
    make_parents(path);
    auto n = node(FileType::regular);
    n.target = std::string(content);  // a regular file keeps its contents where a link keeps its target
    nodes_[paths::normalize(path)] = std::move(n);
    return *this;
}

SBX_INLINE MemoryFs& MemoryFs::symlink(std::string_view path, std::string_view target) {
    make_parents(path);
    nodes_[paths::normalize(path)] = node(FileType::symlink, std::string(target));
    symlinks_.push_back(paths::normalize(path));
    return *this;
}

SBX_INLINE MemoryFs& MemoryFs::hardlink(std::string_view path, std::string_view existing) {
    make_parents(path);
    auto& src = nodes_.at(paths::normalize(existing));
    nodes_[paths::normalize(path)] = src;
    ++links_[src.ino];
    return *this;
}

SBX_INLINE expected<std::optional<FileStat>> MemoryFs::lstat(const std::string& path) const {
    auto p = paths::normalize(path);
    for (const auto& u : unreadable_)
        if (paths::at_or_under(p, u) && p != u)
            return fail(Error(Errc::io_error, "permission denied").in_file(p));
    auto it = nodes_.end();
    if (!symlink_above(p)) {  // the common case: the path is its own key
        it = nodes_.find(p);
        for (auto up = paths::parent(p); it != nodes_.end() && up != "/"; up = paths::parent(up))
            if (nodes_.at(up).type != FileType::directory) it = nodes_.end();
    } else if (auto where = locate(p, false)) {
        it = nodes_.find(*where);
    }
    if (it == nodes_.end()) return std::optional<FileStat>{};
    std::uint64_t links = it->second.type == FileType::directory ? 2 : links_.at(it->second.ino);
    return std::optional<FileStat>(FileStat{it->second.type, 1, it->second.ino, links, it->second.uid});
}

SBX_INLINE expected<std::string> MemoryFs::readlink(const std::string& path) const {
    auto where = locate(paths::normalize(path), false);
    auto it = where ? nodes_.find(*where) : nodes_.end();
    if (it == nodes_.end() || it->second.type != FileType::symlink)
        return fail(Error(Errc::io_error, "not a symbolic link").in_file(path));
    return it->second.target;
}

SBX_INLINE expected<std::vector<std::string>> MemoryFs::list(const std::string& path) const {
    auto where = locate(paths::normalize(path), true);
    auto it = where ? nodes_.find(*where) : nodes_.end();
    if (it == nodes_.end() || it->second.type != FileType::directory)
        return fail(Error(Errc::io_error, "not a directory").in_file(path));
    const std::string& p = *where;
    std::vector<std::string> names;
    for (const auto& [q, _] : nodes_)
        if (q != p && paths::parent(q) == p) names.push_back(q.substr(p == "/" ? 1 : p.size() + 1));
    return names;
}

SBX_INLINE expected<std::optional<std::string>> MemoryFs::read_text(const std::string& path, std::size_t max_bytes) const {
    auto where = locate(paths::normalize(path), true);
    if (!where) return std::optional<std::string>{};
    const Node& n = nodes_.at(*where);
    if (n.type != FileType::regular) return fail(Error(Errc::io_error, "not a regular file").in_file(path));
    if (n.target.size() > max_bytes) return fail(Error(Errc::io_error, "the file is too large").in_file(path));
    return std::optional<std::string>(n.target);
}

SBX_INLINE bool MemoryFs::symlink_above(const std::string& p) const {
    for (const auto& l : symlinks_)
        if (p.size() > l.size() && paths::at_or_under(p, l)) return true;
    return false;
}

SBX_INLINE std::optional<std::string> MemoryFs::locate(const std::string& path, bool follow_last) const {
    std::string rest = path;  // still to walk; a symlink's target is put in front
    std::size_t i = 0;
    std::string at;  // the node reached so far, "" standing for `/`
    int hops = 0;
    while (i < rest.size()) {
        while (i < rest.size() && rest[i] == '/') ++i;
        std::size_t j = i;
        while (j < rest.size() && rest[j] != '/') ++j;
        if (j == i) break;
        const std::string comp = rest.substr(i, j - i);
        i = j;
        while (i < rest.size() && rest[i] == '/') ++i;
        const bool last = i >= rest.size();
        if (comp == ".") continue;
        if (comp == "..") {
            const auto pos = at.rfind('/');
            at.resize(pos == std::string::npos ? 0 : pos);
            continue;
        }
        auto dir = nodes_.find(at.empty() ? std::string("/") : at);
        if (dir == nodes_.end() || dir->second.type != FileType::directory) return std::nullopt;
        const std::size_t before = at.size();
        at += '/';
        at += comp;
        auto it = nodes_.find(at);
        if (it == nodes_.end()) return std::nullopt;
        if (it->second.type == FileType::symlink && (!last || follow_last)) {
            if (++hops > kMaxSymlinkHops) return std::nullopt;
            at.resize(before);
            if (paths::is_absolute(it->second.target)) at.clear();
            rest = it->second.target + "/" + rest.substr(i);
            i = 0;
        }
    }
    if (at.empty()) at.push_back('/');
    return at;
}

}  // namespace sbx
#endif
