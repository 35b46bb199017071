// sbx/fs_view.hpp - the engine's only window on the filesystem.
//
// Decisions that depend on what is on disk (where a symlink leads, whether a file
// has other hard links, what a directory holds) take an FsView. The disk
// implementation is in fs_view_disk.hpp; MemoryFs here is a tree in memory, so
// every such decision is a fast, reproducible unit test.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/expected.hpp"
#include "sbx/paths.hpp"

namespace sbx {

enum class FileType { regular, directory, symlink, other };

// What lstat(2) says of a path: its type and the identity the launcher re-checks.
struct FileStat {
    FileType type = FileType::other;
    std::uint64_t dev = 0;
    std::uint64_t ino = 0;
    std::uint64_t nlink = 0;
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
};

// How many symlinks resolve() follows before it calls it a loop (as the kernel).
inline constexpr int kMaxSymlinkHops = 40;

// Where `path` (absolute, normalised) really leads: every symlink on the way
// replaced by its target, as realpath(3) would, except that components that do
// not exist are kept as written. Errors: a symlink loop, an unreadable component.
inline expected<std::string> resolve(const FsView& fs, std::string_view path) {
    std::vector<std::string> todo;  // components still to walk, last first
    for (auto c : paths::components(path)) todo.emplace(todo.begin(), c);
    std::string done = "/";
    int hops = 0;
    bool missing = false;  // once something is missing, the rest is kept lexically
    while (!todo.empty()) {
        std::string comp = std::move(todo.back());
        todo.pop_back();
        if (comp == ".") continue;
        if (comp == "..") {
            done = paths::parent(done);
            continue;
        }
        std::string next = done == "/" ? "/" + comp : done + "/" + comp;
        if (missing) {
            done = std::move(next);
            continue;
        }
        auto st = fs.lstat(next);
        if (!st) return fail(std::move(st.error()));
        if (!*st) {
            missing = true;
            done = std::move(next);
            continue;
        }
        if ((*st)->type != FileType::symlink) {
            done = std::move(next);
            continue;
        }
        if (++hops > kMaxSymlinkHops)
            return fail(Error(Errc::invalid_argument, "too many levels of symbolic links").in_file(std::string(path)));
        auto target = fs.readlink(next);
        if (!target) return fail(std::move(target.error()));
        if (target->empty()) return fail(Error(Errc::invalid_argument, "an empty symbolic link").in_file(next));
        if (paths::is_absolute(*target)) done = "/";
        auto parts = paths::components(*target);
        for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.emplace_back(*it);
    }
    return done;
}

// A filesystem tree in memory for tests: directories, files, symlinks and hard
// links, with made-up device and inode numbers.
class MemoryFs final : public FsView {
public:
    MemoryFs() { nodes_["/"] = Node{FileType::directory, {}, next_ino_++}; }

    MemoryFs& dir(std::string_view path) {
        make_parents(path);
        auto p = paths::normalize(path);
        if (!nodes_.count(p)) nodes_[p] = Node{FileType::directory, {}, next_ino_++};
        return *this;
    }
    MemoryFs& file(std::string_view path) {
        make_parents(path);
        nodes_[paths::normalize(path)] = Node{FileType::regular, {}, next_ino_++};
        return *this;
    }
    MemoryFs& symlink(std::string_view path, std::string_view target) {
        make_parents(path);
        nodes_[paths::normalize(path)] = Node{FileType::symlink, std::string(target), next_ino_++};
        return *this;
    }
    // A second name for the file at `existing`: both then report two links.
    MemoryFs& hardlink(std::string_view path, std::string_view existing) {
        make_parents(path);
        auto& src = nodes_.at(paths::normalize(existing));
        nodes_[paths::normalize(path)] = src;
        return *this;
    }
    // Makes lstat of anything below `path` fail, as a directory without search
    // permission would.
    MemoryFs& unreadable(std::string_view path) {
        unreadable_.push_back(paths::normalize(path));
        return *this;
    }

    expected<std::optional<FileStat>> lstat(const std::string& path) const override {
        auto p = paths::normalize(path);
        for (const auto& u : unreadable_)
            if (paths::at_or_under(p, u) && p != u)
                return fail(Error(Errc::io_error, "permission denied").in_file(p));
        auto where = locate(p, false);
        if (!where) return std::optional<FileStat>{};
        auto it = nodes_.find(*where);
        std::uint64_t links = 0;
        for (const auto& [_, n] : nodes_)
            if (n.ino == it->second.ino) ++links;
        if (it->second.type == FileType::directory) links = 2;
        return std::optional<FileStat>(FileStat{it->second.type, 1, it->second.ino, links});
    }

    expected<std::string> readlink(const std::string& path) const override {
        auto where = locate(paths::normalize(path), false);
        auto it = where ? nodes_.find(*where) : nodes_.end();
        if (it == nodes_.end() || it->second.type != FileType::symlink)
            return fail(Error(Errc::io_error, "not a symbolic link").in_file(path));
        return it->second.target;
    }

    expected<std::vector<std::string>> list(const std::string& path) const override {
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

private:
    struct Node {
        FileType type;
        std::string target;
        std::uint64_t ino;
    };
    std::map<std::string, Node> nodes_;
    std::vector<std::string> unreadable_;
    std::uint64_t next_ino_ = 100;

    // The node a path names, as the kernel walks it: symlinks on the way are
    // followed (the last one too when `follow_last`). nullopt when nothing is
    // there, a component on the way is not a directory, or links loop.
    std::optional<std::string> locate(const std::string& path, bool follow_last) const {
        std::vector<std::string> todo;  // components still to walk, last first
        auto push = [&](std::string_view p) {
            auto parts = paths::components(p);
            for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.emplace_back(*it);
        };
        push(path);
        std::string at = "/";
        int hops = 0;
        while (!todo.empty()) {
            std::string comp = std::move(todo.back());
            todo.pop_back();
            if (comp == ".") continue;
            if (comp == "..") {
                at = paths::parent(at);
                continue;
            }
            auto dir = nodes_.find(at);
            if (dir == nodes_.end() || dir->second.type != FileType::directory) return std::nullopt;
            std::string next = at == "/" ? "/" + comp : at + "/" + comp;
            auto it = nodes_.find(next);
            if (it == nodes_.end()) return std::nullopt;
            if (it->second.type == FileType::symlink && (!todo.empty() || follow_last)) {
                if (++hops > kMaxSymlinkHops) return std::nullopt;
                if (paths::is_absolute(it->second.target)) at = "/";
                push(it->second.target);
                continue;
            }
            at = std::move(next);
        }
        return at;
    }

    void make_parents(std::string_view path) {
        for (auto p = paths::parent(paths::normalize(path)); !nodes_.count(p); p = paths::parent(p))
            nodes_[p] = Node{FileType::directory, {}, next_ino_++};
    }
};

}  // namespace sbx
