// launchers/git_audit.cpp - the walk and the renames of the audit after a run
// (git_audit.hpp); which files and keys count is sbx/rules/git_audit.hpp's decision.
#include "git_audit.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>  // renameat2, RENAME_NOREPLACE
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "sbx/core/paths.hpp"

namespace sbx::launcher {

namespace {

// A directory descriptor, closed when it goes.
class Dir {
public:
    Dir() = default;
    explicit Dir(int fd) : fd_(fd) {}
    Dir(Dir&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
    Dir& operator=(Dir&& o) noexcept {
        std::swap(fd_, o.fd_);
        return *this;
    }
    Dir(const Dir&) = delete;
    Dir& operator=(const Dir&) = delete;
    ~Dir() {
        if (fd_ >= 0) ::close(fd_);
    }
    int fd() const { return fd_; }
    bool ok() const { return fd_ >= 0; }

private:
    int fd_ = -1;
};

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;

Dir open_in(int at, const std::string& name) { return Dir(::openat(at, name.c_str(), kDirFlags)); }

struct Entry {
    std::string name;
    unsigned char type;  // d_type
};

// The entries of the directory `fd` (without . and ..); false with errno on failure.
bool read_entries(int fd, std::vector<Entry>& out) {
    alignas(8) char buf[32768];
    for (;;) {
        const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        if (n == 0) return true;
        for (long off = 0; off < n;) {
            unsigned short reclen;
            std::memcpy(&reclen, buf + off + 16, sizeof reclen);
            const auto type = static_cast<unsigned char>(buf[off + 18]);
            const std::string_view name(buf + off + 19);
            off += reclen;
            if (name != "." && name != "..") out.push_back(Entry{std::string(name), type});
        }
    }
}

bool at_or_after(const struct timespec& t, const timespec& start) {
    return t.tv_sec > start.tv_sec || (t.tv_sec == start.tv_sec && t.tv_nsec >= start.tv_nsec);
}

// The whole of a small regular file in `dir`, not following a symlink; nullopt when
// it is none or is larger than `max`.
std::optional<std::string> read_small(int dir, const std::string& name, std::size_t max) {
    const int fd = ::openat(dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return std::nullopt;
    struct stat st {};
    std::optional<std::string> out;
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) <= max) {
        std::string text(static_cast<std::size_t>(st.st_size), '\0');
        std::size_t got = 0;
        while (got < text.size()) {
            const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += static_cast<std::size_t>(n);
        }
        if (got == text.size()) out = std::move(text);
    }
    ::close(fd);
    return out;
}

class Auditor {
public:
    Auditor(const std::string& root, const std::vector<std::string>& dirs, const timespec& start)
        : root_(root), dirs_(dirs), start_(start) {}

    GitAuditResult run() {
        for (const auto& d : dirs_) {
            auto [dir, why] = open_path(d);
            if (!dir.ok()) {
                out_.warnings.push_back("cannot audit " + d + " for git repositories the command made: " + why);
                continue;
            }
            walk(dir, d, 0);
        }
        return std::move(out_);
    }

private:
    const std::string& root_;
    const std::vector<std::string>& dirs_;
    timespec start_;
    GitAuditResult out_;
    std::size_t entries_ = 0;
    bool cut_ = false;
    std::set<std::pair<dev_t, ino_t>> audited_;  // git directories done (reached twice through a .git file)

    void warn(std::string line) { out_.warnings.push_back(std::move(line)); }

    bool in_audited(const std::string& p) const {
        for (const auto& d : dirs_)
            if (paths::at_or_under(p, d)) return true;
        return false;
    }

    // Opens the directory `path` (absolute; `..` taken as the kernel takes it, since
    // no symlink is followed on the way) one component at a time from `/`, never
    // following a symbolic link; with the reason when it cannot.
    static std::pair<Dir, std::string> open_path(const std::string& path) {
        Dir at(::open("/", kDirFlags));
        if (!at.ok()) return {Dir(), std::strerror(errno)};
        std::string_view rest = path;
        while (!rest.empty()) {
            const auto slash = rest.find('/');
            const std::string c(rest.substr(0, slash));
            rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
            if (c.empty() || c == ".") continue;
            Dir next = open_in(at.fd(), c);
            if (!next.ok())
                return {Dir(), errno == ELOOP || errno == ENOTDIR ? "a symbolic link or no directory on the way"
                                                                  : std::strerror(errno)};
            at = std::move(next);
        }
        return {std::move(at), ""};
    }

    // `rel` (a .git file's or symlink's target) taken from `base` and folded, as
    // open_path() walks it.
    static std::string joined(const std::string& base, const std::string& rel) {
        return paths::normalize(paths::is_absolute(rel) ? rel : base + "/" + rel);
    }

    // Whether the entry `name` of `dir` was made or changed during the run; its
    // lstat in `st`. False when it is not there.
    bool changed(int dir, const std::string& name, struct stat& st) const {
        if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
        return at_or_after(st.st_ctim, start_);
    }

    // Renames `name` in `dir` (at `dir_path`) to its first free disabled name,
    // adding u+w to `dir` for the rename when the command left it unwritable (and
    // it is ours), and putting its mode back after.
    void neutralise(int dir, const std::string& dir_path, const std::string& name, std::string_view kind,
                    const std::string& why) {
        const std::string path = paths::join(dir_path, name);
        struct stat dst {};
        bool chmodded = false;
        std::string failure;
        for (int attempt = 0;; ++attempt) {
            auto to = sbx::disabled_name(name, attempt);
            if (!to) {
                failure = "every name up to " + name + std::string(git_audit::kDisabledSuffix) + "." +
                          std::to_string(git_audit::kMaxDisabledNames) + " is taken";
                break;
            }
            int rc = ::renameat2(dir, name.c_str(), dir, to->c_str(), RENAME_NOREPLACE);
            if (rc != 0 && errno == EINVAL) {
                // A filesystem without RENAME_NOREPLACE: look first, then rename.
                struct stat there {};
                if (::fstatat(dir, to->c_str(), &there, AT_SYMLINK_NOFOLLOW) == 0) continue;
                rc = ::renameat(dir, name.c_str(), dir, to->c_str());
            }
            if (rc == 0) {
                out_.neutralised.push_back(sbx::GitNeutralised{std::string(kind), path, why, paths::join(dir_path, *to)});
                break;
            }
            if (errno == EEXIST) continue;
            if ((errno == EACCES || errno == EPERM) && !chmodded && ::fstat(dir, &dst) == 0 && dst.st_uid == ::geteuid() &&
                (dst.st_mode & S_IWUSR) == 0 && ::fchmod(dir, (dst.st_mode & 07777) | S_IWUSR) == 0) {
                chmodded = true;
                --attempt;  // the same name again, now that the directory is writable
                continue;
            }
            failure = std::strerror(errno);
            break;
        }
        if (chmodded && ::fchmod(dir, dst.st_mode & 07777) != 0) {
            char mode[8];
            std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(dst.st_mode & 07777));
            warn("could not give " + dir_path + " its mode " + mode + " back: " + std::strerror(errno));
        }
        if (!failure.empty())
            warn("could NOT neutralise " + path + " (" + why + "): " + failure +
                 "; git run here may run what the command put there");
    }

    // A config or config.worktree made or changed during the run.
    void config_file(int g, const std::string& gpath, const git_audit::AuditedFile& f) {
        struct stat st {};
        if (!changed(g, std::string(f.name), st)) return;
        const std::string name(f.name);
        if (S_ISLNK(st.st_mode)) {
            neutralise(g, gpath, name, f.kind, "a symbolic link made during the run, which git follows");
            return;
        }
        if (!S_ISREG(st.st_mode)) return;  // git reads no configuration from it
        auto text = read_small(g, name, git_audit::kMaxConfigBytes);
        if (!text) {
            neutralise(g, gpath, name, f.kind, "made during the run and too large or unreadable to check");
            return;
        }
        const auto findings = sbx::config_runners(*text);
        if (!findings.empty()) neutralise(g, gpath, name, f.kind, sbx::runners_why(findings));
    }

    void commondir(int g, const std::string& gpath, const git_audit::AuditedFile& f) {
        struct stat st {};
        const std::string name(f.name);
        if (!changed(g, name, st)) return;
        // What `git worktree add` writes: the root's own git directory, protected.
        if (S_ISREG(st.st_mode))
            if (auto text = read_small(g, name, git_audit::kMaxPointerBytes);
                text && sbx::commondir_names(*text, gpath, paths::join(root_, ".git")))
                return;
        neutralise(g, gpath, name, f.kind, std::string(f.reason));
    }

    void hooks(int g, const std::string& gpath, const git_audit::AuditedFile& f) {
        struct stat st {};
        const std::string name(f.name);
        const bool made = changed(g, name, st);
        if (::fstatat(g, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return;
        if (S_ISLNK(st.st_mode)) {
            if (made) neutralise(g, gpath, name, f.kind, "a symbolic link made during the run, which git follows for hooks");
            return;
        }
        if (!S_ISDIR(st.st_mode)) return;
        Dir h = open_in(g, name);
        const std::string hpath = paths::join(gpath, name);
        std::vector<Entry> entries;
        if (!h.ok() || !read_entries(h.fd(), entries)) {
            warn("cannot look into " + hpath + ": " + std::strerror(errno) + "; a hook the command made there may run");
            return;
        }
        for (const auto& e : entries) {
            if (!sbx::hook_git_runs(e.name)) continue;
            struct stat hs {};
            if (changed(h.fd(), e.name, hs)) neutralise(h.fd(), hpath, e.name, f.kind, std::string(f.reason));
        }
    }

    // One git directory, opened as `g` at `gpath`; `own_files` false for the root's
    // main one, whose files are protected during the run.
    void git_dir(int g, const std::string& gpath, bool own_files, int depth) {
        struct stat st {};
        if (::fstat(g, &st) != 0 || !audited_.insert({st.st_dev, st.st_ino}).second) return;
        if (own_files)
            for (const auto& f : git_audit::kAuditedFiles) {
                if (f.scope == git_audit::Scope::each_entry) hooks(g, gpath, f);
                else if (f.check == git_audit::Check::always) commondir(g, gpath, f);
                else config_file(g, gpath, f);
            }
        if (Dir w = open_in(g, "worktrees"); w.ok()) {
            std::vector<Entry> entries;
            if (read_entries(w.fd(), entries))
                for (const auto& e : entries)
                    if (Dir d = open_in(w.fd(), e.name); d.ok())
                        git_dir(d.fd(), paths::join(gpath, "worktrees/" + e.name), true, depth + 1);
        }
        if (Dir m = open_in(g, "modules"); m.ok()) modules(m.fd(), paths::join(gpath, "modules"), depth + 1);
    }

    // A `modules` directory: git directories, perhaps under names with slashes.
    void modules(int m, const std::string& mpath, int depth) {
        if (depth > kMaxAuditDepth) return;
        std::vector<Entry> entries;
        if (!read_entries(m, entries)) return;
        for (const auto& e : entries) {
            Dir d = open_in(m, e.name);
            if (!d.ok()) continue;
            struct stat st {};
            const bool is_git = ::fstatat(d.fd(), "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
                                ::fstatat(d.fd(), "config", &st, AT_SYMLINK_NOFOLLOW) == 0;
            if (is_git) git_dir(d.fd(), paths::join(mpath, e.name), true, depth + 1);
            else modules(d.fd(), paths::join(mpath, e.name), depth + 1);
        }
    }

    // A `.git` file's or symlink's target `target`, from the directory `base`: the
    // git directory there when it lies in an audited directory. False when it does
    // not, or cannot be reached without following a symlink.
    bool pointed(const std::string& base, const std::string& target, int depth) {
        const std::string to = joined(base, target);
        if (!in_audited(to)) return false;
        auto [g, why] = open_path(to);
        if (!g.ok()) return false;
        git_dir(g.fd(), to, to != paths::join(root_, ".git"), depth + 1);
        return true;
    }

    // The `.git` entry of the directory `dir` (at `path`), of d_type `type`.
    void dot_git(int dir, const std::string& path, unsigned char type, int depth) {
        const bool root = path == root_;
        if (type == DT_DIR) {
            if (Dir g = open_in(dir, ".git"); g.ok()) git_dir(g.fd(), paths::join(path, ".git"), !root, depth + 1);
            return;
        }
        if (root) return;  // the root's own .git file or symlink is protected during the run
        struct stat st {};
        const bool made = changed(dir, ".git", st);
        if (type == DT_LNK) {
            if (made) {
                neutralise(dir, path, ".git", "git-pointer",
                           "a .git symbolic link made during the run: git follows it to a git directory the audit "
                           "does not enter");
                return;
            }
            char buf[4096];
            const ssize_t n = ::readlinkat(dir, ".git", buf, sizeof buf - 1);
            if (n > 0) pointed(path, std::string(buf, static_cast<std::size_t>(n)), depth);
            return;
        }
        if (type != DT_REG) return;
        auto text = read_small(dir, ".git", git_audit::kMaxPointerBytes);
        auto target = text ? sbx::gitdir_target(*text) : std::nullopt;
        if (!target) return;  // git cannot use it either
        if (!pointed(path, *target, depth) && made)
            neutralise(dir, path, ".git", "git-pointer",
                       "a .git file made during the run naming a git directory outside the audited directory, or "
                       "behind a symbolic link (" + *target + "), which the audit does not enter");
    }

    void walk(const Dir& dir, const std::string& path, int depth) {
        if (cut_) return;
        if (depth > kMaxAuditDepth) {
            warn("the git audit did not go deeper than " + std::to_string(kMaxAuditDepth) + " directories at " + path +
                 "; a repository further in was not looked at");
            return;
        }
        std::vector<Entry> entries;
        if (!read_entries(dir.fd(), entries)) {
            warn("cannot look into " + path + " for git repositories the command made: " + std::strerror(errno));
            return;
        }
        entries_ += entries.size();
        if (entries_ > kMaxAuditEntries) {
            cut_ = true;
            warn("the git audit stopped after " + std::to_string(kMaxAuditEntries) + " entries, at " + path +
                 "; repositories further on were not looked at");
            return;
        }
        // Entries whose type the listing did not tell are asked once.
        for (auto& e : entries)
            if (e.type == DT_UNKNOWN) {
                struct stat st {};
                if (::fstatat(dir.fd(), e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
                    e.type = S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
            }
        auto has = [&](std::string_view name, unsigned char type) {
            for (const auto& e : entries)
                if (e.name == name && e.type == type) return true;
            return false;
        };
        // A bare repository: git outside takes the directory for a git directory.
        if (path != root_ && (has("HEAD", DT_REG) || has("HEAD", DT_LNK)) && has("objects", DT_DIR) && has("refs", DT_DIR)) {
            git_dir(dir.fd(), path, true, depth);
            return;
        }
        for (const auto& e : entries) {
            if (cut_) return;
            if (e.name == ".git") {
                dot_git(dir.fd(), path, e.type, depth);
                continue;
            }
            if (e.type != DT_DIR) continue;
            Dir child = open_in(dir.fd(), e.name);
            if (!child.ok()) {
                if (errno != ELOOP && errno != ENOTDIR)  // replaced by a symlink since: not ours to follow
                    warn("cannot look into " + paths::join(path, e.name) + " for git repositories the command made: " +
                         std::strerror(errno));
                continue;
            }
            walk(child, paths::join(path, e.name), depth + 1);
        }
    }
};

}  // namespace

timespec audit_clock() {
    timespec t{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &t);
    return t;
}

GitAuditResult audit_git(const std::string& root, const std::vector<std::string>& dirs, const timespec& start) {
    return Auditor(root, dirs, start).run();
}

}  // namespace sbx::launcher
