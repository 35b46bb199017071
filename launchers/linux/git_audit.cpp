// launchers/linux/git_audit.cpp - the walk and the renames of the audit after a run
// (git_audit.hpp); which files and keys count is sbx/rules/git_audit.hpp's decision.
//
// Three steps. The walk goes through every directory of the audited ones, noting
// the git directories and the `.git` files and links it meets, and making the
// user's unreadable directories readable. Then each git directory is checked (its
// files, the hooks directories and included files its config names) and each
// `.git` pointer made during the run that leads outside is renamed. Last, the
// directories whose mode the walk changed get it back, deepest first.
#include "linux/git_audit.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>  // renameat2, RENAME_NOREPLACE
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <unordered_map>
#include <unordered_set>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "base/fd_io.hpp"  // Fd
#include "sbx/core/glob.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/rules/git_config.hpp"
#include "sbx/rules/git_repository.hpp"
#include "shared/tool_cache.hpp"

namespace sbx::launcher {

namespace {

// A directory to list; a directory passed through on the way (search permission only).
constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY;
constexpr int kPathFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

unsigned char type_of(const struct stat& st) {
    return S_ISDIR(st.st_mode) ? DT_DIR : S_ISLNK(st.st_mode) ? DT_LNK : S_ISREG(st.st_mode) ? DT_REG : DT_UNKNOWN;
}

// The entries of the directory `fd` (without . and ..) to `each`, with their d_type
// (asked with fstatat where the listing did not tell); false with errno on failure.
template <class F>
bool each_entry(int fd, F&& each) {
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
            auto type = static_cast<unsigned char>(buf[off + 18]);
            const std::string_view name(buf + off + 19);
            off += reclen;
            if (name == "." || name == "..") continue;
            if (type == DT_UNKNOWN) {
                struct stat st {};
                if (::fstatat(fd, std::string(name).c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) type = type_of(st);
            }
            each(name, type);
        }
    }
}

// What the walk keeps of a directory's entries: its subdirectories, and what says
// whether it is a git directory or holds a `.git`.
struct Listing {
    std::vector<std::string> subdirs;
    unsigned char dot_git = 0;  // the d_type of its `.git`; 0 without one
    bool head = false, objects = false, refs = false, commondir = false;

    // What git's own test asks (setup.c, is_git_directory), read generously: HEAD,
    // and objects and refs or a commondir that leads to them.
    bool git_dir() const { return head && ((objects && refs) || commondir); }
};

bool list(int fd, Listing& out) {
    return each_entry(fd, [&](std::string_view name, unsigned char type) {
        const bool dir_or_link = type == DT_DIR || type == DT_LNK;
        if (name == ".git") out.dot_git = type == DT_UNKNOWN ? static_cast<unsigned char>(DT_REG) : type;
        else if (name == "HEAD") out.head = type == DT_REG || type == DT_LNK;
        else if (name == "objects") out.objects = dir_or_link;
        else if (name == "refs") out.refs = dir_or_link;
        else if (name == "commondir") out.commondir = type == DT_REG;
        if (type == DT_DIR) out.subdirs.emplace_back(name);
    });
}

bool at_or_after(const struct timespec& t, const timespec& start) {
    return t.tv_sec > start.tv_sec || (t.tv_sec == start.tv_sec && t.tv_nsec >= start.tv_nsec);
}

// Opens the directory `path` (absolute; `..` taken as the kernel takes it, since no
// symlink is followed on the way) one component at a time from `/`, never following
// a symbolic link, passing through each with search permission alone and opening
// the last with `flags`; with the reason when it cannot.
std::pair<Fd, std::string> open_path(const std::string& path, int flags) {
    const auto parts = paths::components(path);
    Fd at(::open("/", parts.empty() ? flags : kPathFlags));
    for (std::size_t i = 0; i < parts.size() && at.ok(); ++i)
        at = Fd(::openat(at.get(), std::string(parts[i]).c_str(), i + 1 == parts.size() ? flags : kPathFlags));
    if (!at.ok())
        return {Fd(), errno == ELOOP || errno == ENOTDIR ? "a symbolic link or no directory on the way"
                                                         : std::strerror(errno)};
    return {std::move(at), ""};
}

// The path of `p` with every symlink resolved, as git would open it; nullopt with
// errno when it cannot be.
std::optional<std::string> real_path(const std::string& p) {
    char buf[PATH_MAX];
    if (::realpath(p.c_str(), buf) == nullptr) return std::nullopt;
    return std::string(buf);
}

using protect_detail::base_name;

// A directory stamp within this many seconds of the survey's start is not kept
// (GitSurvey::directories).
constexpr long long kStampSlack = 2;

std::string octal(mode_t m) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(m & 07777));
    return mode;
}

class Auditor {
public:
    // A survey (survey_git) only walks, passing over what it cannot look into, and
    // finds the repositories; it changes nothing.
    enum class Mode { audit, survey };

    Auditor(const std::string& root, const std::vector<std::string>& dirs, const timespec& start, Mode mode = Mode::audit,
            const GitSurvey* known = nullptr)
        : root_(root), dirs_(dirs), start_(start), survey_(mode == Mode::survey), known_(known) {
        protected_.insert(paths::join(root_, ".git"));
        if (known_ != nullptr)
            for (const auto& d : known_->directories) stamp_of_.emplace(d.path, std::pair{d.sec, d.nsec});
        for (const auto& d : dirs_)
            if (d != root_) protected_.insert(d);  // a main git directory the plan protects (a linked worktree's)
        if (const char* h = ::getenv("HOME"); h != nullptr && paths::is_absolute(h)) home_ = paths::normalize(h);
    }

    // The stamps a survey took (after run()).
    std::vector<sbx::DirectoryStamp> take_stamps() { return std::move(stamps_); }

    // What run() renames first once it has walked (and so given a root the
    // command left unreadable its u+rx back for the audit): whatever stands at
    // each of `names` (filesystem.neutralise: missing when the command started,
    // so made during the run).
    void rename_made(const std::vector<sbx::NeutraliseOp>& names) { names_ = &names; }
    // And every new name matching one of `patterns` (filesystem.neutraliseNew).
    void rename_new(const std::vector<sbx::NeutraliseNewOp>& patterns) { patterns_ = &patterns; }

    GitAuditResult run() {
        if (survey_ && known_ != nullptr) look_again();
        else
            for (const auto& d : dirs_) walk(d);
        if (survey_) {
            record_repositories();
            if (known_ != nullptr)  // what stands in the directories that did not change
                for (const auto& r : known_->repositories)
                    if (paths::at_or_under(r.path, root_) && r.path != root_ &&
                        unchanged_.contains(std::string_view(r.path).substr(root_.size() + 1)))
                        out_.repositories.push_back(r);
            out_.failures.clear();
            return std::move(out_);
        }
        protected_names();
        new_names();
        for (auto& p : pointers_) pointer(p);
        for (const auto& g : git_dirs_) git_dir(g);
        // A `.git` file or link names a git directory from another working tree, from
        // which a relative hooks path is taken too.
        for (const auto& p : pointers_)
            if (auto it = relative_hooks_.find(p.real); it != relative_hooks_.end())
                for (const auto& [hp, config] : it->second) hooks_dir(paths::join(p.tree, hp), config);
        restore_modes();
        record_repositories();
        return std::move(out_);
    }

private:
    // What run() renames first, once walked: whatever stands at each of the
    // names rename_made() was given.
    void protected_names() {
        if (names_ == nullptr) return;
        for (const auto& n : *names_) {
            auto [dir, err] = open_path(paths::parent(n.path), kDirFlags);
            if (!dir.ok()) {
                fail(n.path, "could not reach it to look at it (" + n.why + "): " + err, "protected");
                continue;
            }
            const std::string name(base_name(n.path));
            struct stat st {};
            if (::fstatat(dir.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
                if (errno != ENOENT)
                    fail(n.path, "could not look at it (" + n.why + "): " + std::strerror(errno), "protected");
                continue;
            }
            std::string why = n.why + "; made during the run";
            const auto* checked = std::find(std::begin(git_audit::kCheckedRootNames),
                                            std::end(git_audit::kCheckedRootNames), name);
            if (checked != std::end(git_audit::kCheckedRootNames) && S_ISREG(st.st_mode)) {
                auto text = read_small(dir.get(), name, git_audit::kMaxConfigBytes);
                if (text) {
                    const auto findings = sbx::config_runners(*text);
                    if (findings.empty()) continue;  // git runs nothing through it
                    why += ": " + sbx::runners_why(findings);
                } else {
                    why += ", and too large or unreadable to check";
                }
            }
            neutralise(dir.get(), paths::parent(n.path), name, "protected", why);
        }
    }

    // Then every entry of a neutraliseNew directory that its pattern matches
    // but that was not there (and read-only) when the plan was made.
    void new_names() {
        if (patterns_ == nullptr) return;
        for (const auto& op : *patterns_) {
            auto [dir, err] = open_path(op.dir, kDirFlags);
            if (!dir.ok()) {
                fail(paths::join(op.dir, op.pattern), "could not look into its directory (" + op.why + "): " + err,
                     "protected");
                continue;
            }
            std::vector<std::string> made;
            const bool listed = each_entry(dir.get(), [&](std::string_view name, unsigned char) {
                if (glob::detail::match_component(op.pattern, name) &&
                    !std::binary_search(op.present.begin(), op.present.end(), name))
                    made.emplace_back(name);
            });
            if (!listed)
                fail(paths::join(op.dir, op.pattern), "could not list its directory (" + op.why + "): " +
                     std::strerror(errno), "protected");
            for (const auto& name : made)
                neutralise(dir.get(), op.dir, name, "protected", op.why + "; made during the run");
        }
    }

    struct Frame {
        Fd fd;  // closed when kOpenDirectories others are open below it
        std::string path;
        dev_t dev;
        ino_t ino;
        std::vector<std::string> subdirs;
        std::size_t next = 0;
    };
    // A `.git` file or symbolic link outside the root's own.
    struct Pointer {
        std::string tree;      // the directory holding it
        unsigned char type;    // DT_REG or DT_LNK
        bool made;             // during the run
        std::string real;      // the git directory it leads to, resolved after the walk
    };
    struct Fixed {
        std::string path;
        mode_t mode;  // its own, put back at the end
    };

    const std::string& root_;
    const std::vector<std::string>& dirs_;
    timespec start_;
    bool survey_;
    const GitSurvey* known_;
    const std::vector<sbx::NeutraliseOp>* names_ = nullptr;  // rename_made()
    const std::vector<sbx::NeutraliseNewOp>* patterns_ = nullptr;  // rename_new()
    // A survey's stamps: those it was given (relative path: ctime), the directories
    // whose ctime was the stamped one, and the stamps it takes.
    std::unordered_map<std::string, std::pair<long long, long>> stamp_of_;
    std::unordered_set<std::string_view> unchanged_;  // relative paths, in known_
    std::vector<sbx::DirectoryStamp> stamps_;
    std::string home_;
    GitAuditResult out_;
    std::set<std::string> protected_;  // git directories whose files are protected during the run
    std::vector<std::string> git_dirs_;
    std::vector<Pointer> pointers_;
    std::vector<Fixed> fixed_;
    // core.hooksPath of the user's and system's config, with the file: read with the first git directory
    std::optional<std::vector<std::pair<std::string, std::string>>> global_hooks_;
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> relative_hooks_;  // git directory: paths
    std::set<std::pair<dev_t, ino_t>> git_done_;
    std::set<std::string> hooks_done_;

    void fail(std::string path, std::string why, std::string kind = "git") {
        out_.failures.push_back(sbx::GitAuditFailure{std::move(path), std::move(why), std::move(kind)});
    }

    bool in_audited(const std::string& p) const {
        for (const auto& d : dirs_)
            if (paths::at_or_under(p, d)) return true;
        return false;
    }

    // Whether the entry `name` of `dir` was made or changed during the run; its
    // lstat in `st`. False when it is not there.
    bool changed(int dir, const std::string& name, struct stat& st) const {
        if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
        return at_or_after(st.st_ctim, start_);
    }

    // The hooks paths of the user's and the system's git configuration: a relative
    // one is taken in every working tree. Read once, when a git directory needs them.
    const std::vector<std::pair<std::string, std::string>>& global_hooks() {
        if (global_hooks_) return *global_hooks_;
        global_hooks_.emplace();
        std::vector<std::string> files = {"/etc/gitconfig"};
        if (!home_.empty()) files.push_back(paths::join(home_, ".gitconfig"));
        const char* xdg = ::getenv("XDG_CONFIG_HOME");
        if (xdg != nullptr && paths::is_absolute(xdg)) files.push_back(paths::join(paths::normalize(xdg), "git/config"));
        else if (!home_.empty()) files.push_back(paths::join(home_, ".config/git/config"));
        for (const auto& f : files) {
            auto text = read_small(AT_FDCWD, f, protected_names::kMaxConfigFileBytes);
            if (!text) continue;
            for (const auto& v : GitConfigParser(*text).parse().hooks_paths) global_hooks_->emplace_back(v.value, f);
        }
        return *global_hooks_;
    }

    // --- the walk ---------------------------------------------------------------

    // A directory of the user's that its owner cannot list or search gets u+rx for the
    // audit (root needs none).
    bool needs_mode(const struct stat& st) const {
        const uid_t me = ::geteuid();
        return me != 0 && st.st_uid == me && (st.st_mode & (S_IRUSR | S_IXUSR)) != (S_IRUSR | S_IXUSR);
    }

    // The directory `name` of `at` (at `path`) opened for listing, made listable
    // first when it is the user's; a failure when it cannot be looked into. Not open
    // and no failure when it is gone, or no directory any more, since it was listed.
    Fd open_listable(int at, const std::string& name, const std::string& path) {
        Fd d(::openat(at, name.c_str(), kDirFlags));
        if (survey_) return d;
        if (!d.ok()) {
            const int err = errno;
            if (err == ENOENT || err == ELOOP || err == ENOTDIR) return Fd();
            struct stat st {};
            const bool there = ::fstatat(at, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
            // Another's directory the user cannot search: the command, the user's,
            // could not reach anything in it either.
            if (err == EACCES && there && !needs_mode(st) && ::faccessat(at, name.c_str(), X_OK, AT_EACCESS) != 0)
                return Fd();
            if (err != EACCES || !there || !S_ISDIR(st.st_mode) || !needs_mode(st)) {
                fail(path, "cannot look into it: " + std::string(std::strerror(err)) +
                               (err == EACCES && there ? " (it is uid " + std::to_string(st.st_uid) + "'s)" : ""));
                return Fd();
            }
            if (::fchmodat(at, name.c_str(), (st.st_mode & 07777) | S_IRUSR | S_IXUSR, 0) != 0) {
                fail(path, "cannot make it readable to look into it: " + std::string(std::strerror(errno)));
                return Fd();
            }
            fixed_.push_back(Fixed{path, st.st_mode & 07777});
            d = Fd(::openat(at, name.c_str(), kDirFlags));
            if (!d.ok()) {
                fail(path, "cannot look into it: " + std::string(std::strerror(errno)));
                return Fd();
            }
            return d;
        }
        struct stat st {};
        if (::fstat(d.get(), &st) == 0 && needs_mode(st)) {
            if (::fchmod(d.get(), (st.st_mode & 07777) | S_IRUSR | S_IXUSR) != 0) {
                fail(path, "cannot make it searchable to look into it: " + std::string(std::strerror(errno)));
                return Fd();
            }
            fixed_.push_back(Fixed{path, st.st_mode & 07777});
        }
        return d;
    }

    // Every directory of `top`, depth first, with at most kOpenDirectories open.
    // `top` itself may be one the command left unreadable (chmod 000 of the root).
    void walk(const std::string& top) {
        auto [above, why] = open_path(paths::parent(top), kPathFlags);
        const std::size_t failed = out_.failures.size();
        Fd fd = above.ok() ? open_listable(above.get(), std::string(base_name(top)), top) : Fd();
        if (!fd.ok()) {
            if (out_.failures.size() == failed)
                fail(top, "cannot open it: " + (above.ok() ? std::string("gone, or no directory") : why));
            return;
        }
        std::vector<Frame> stack;
        std::set<std::pair<dev_t, ino_t>> on_stack;  // a directory bound below itself is walked once
        auto enter = [&](Fd d, std::string path) {
            struct stat st {};
            if (::fstat(d.get(), &st) != 0 || !on_stack.insert({st.st_dev, st.st_ino}).second) return;
            if (survey_) stamp(path, st);
            Listing l;
            if (!list(d.get(), l)) {
                fail(path, "cannot list it: " + std::string(std::strerror(errno)));
                on_stack.erase({st.st_dev, st.st_ino});
                return;
            }
            visit(d.get(), path, l);
            if (survey_ && base_name(path) == ".git") l.subdirs.clear();  // nothing below a .git is recorded
            stack.push_back(Frame{std::move(d), std::move(path), st.st_dev, st.st_ino, std::move(l.subdirs)});
            if (stack.size() > kOpenDirectories) stack[stack.size() - 1 - kOpenDirectories].fd.reset();
        };
        enter(std::move(fd), top);
        while (!stack.empty()) {
            Frame& f = stack.back();
            if (f.next < f.subdirs.size()) {
                const std::string& name = f.subdirs[f.next++];
                std::string path = paths::join(f.path, name);
                if (Fd child = open_listable(f.fd.get(), name, path); child.ok()) enter(std::move(child), std::move(path));
                continue;
            }
            // Back up: the parent reopened through `..` when it was closed, and checked
            // to be the directory it was.
            Fd up;
            if (stack.size() > 1 && !stack[stack.size() - 2].fd.ok()) {
                const Frame& parent = stack[stack.size() - 2];
                up = Fd(::openat(f.fd.get(), "..", kDirFlags));
                struct stat st {};
                if (up.ok() && (::fstat(up.get(), &st) != 0 || st.st_dev != parent.dev || st.st_ino != parent.ino))
                    up.reset();
            }
            on_stack.erase({f.dev, f.ino});
            stack.pop_back();
            if (up.ok()) stack.back().fd = std::move(up);
            while (!stack.empty() && !stack.back().fd.ok()) {
                fail(stack.back().path, "it was moved while the audit looked into it; the rest of it was not looked at");
                on_stack.erase({stack.back().dev, stack.back().ino});
                stack.pop_back();
            }
        }
    }

    // A survey with the stamps of the last one: each stamped directory whose ctime
    // is its stamp's, and whose parent is one too or was listed with it, is
    // unchanged (one fstatat, no listing), and the repositories recorded at it
    // stand. The others are listed again, a new directory in them is walked whole,
    // and a stamped one that is gone, or no directory any more, is passed over
    // with all below it. A directory gains or loses an entry (a `.git`, a clone, a
    // rename over it) only with a new ctime, so nothing new is missed below one
    // that is unchanged.
    void look_again() {
        auto [top, why] = open_path(root_, kPathFlags);
        if (!top.ok()) return;
        std::vector<const sbx::DirectoryStamp*> order;
        for (const auto& d : known_->directories) order.push_back(&d);
        // Each directory after its parent: "." first, then by path ("a" < "a/b").
        std::sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
            return (a->path == ".") != (b->path == ".") ? a->path == "." : a->path < b->path;
        });
        enum class State { unchanged, listed, gone };
        std::unordered_map<std::string_view, State> state;
        std::unordered_map<std::string_view, std::set<std::string>> listed;  // a listed directory's subdirectories
        for (const auto* d : order) {
            const std::string_view rel = d->path;
            if (rel != ".") {
                const auto slash = rel.rfind('/');
                const std::string_view parent = slash == std::string_view::npos ? "." : rel.substr(0, slash);
                const auto p = state.find(parent);
                if (p == state.end() || p->second == State::gone ||
                    (p->second == State::listed && !listed[parent].contains(std::string(rel.substr(slash + 1))))) {
                    state[rel] = State::gone;
                    continue;
                }
            }
            struct stat st {};
            if (::fstatat(top.get(), d->path.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode)) {
                state[rel] = State::gone;
                continue;
            }
            if (d->sec != 0 && st.st_ctim.tv_sec == d->sec && st.st_ctim.tv_nsec == d->nsec) {
                unchanged_.insert(rel);
                stamps_.push_back(*d);
                state[rel] = State::unchanged;
                continue;
            }
            state[rel] = list_again(rel, listed[rel]) ? State::listed : State::gone;
        }
    }

    // look_again() on a changed directory: listed, its stamp taken anew, a `.git`
    // in it looked into, and a subdirectory no stamp names walked whole. Its
    // subdirectories in `subdirs`; false when it cannot be listed.
    bool list_again(std::string_view rel, std::set<std::string>& subdirs) {
        const std::string path = rel == "." ? root_ : paths::join(root_, rel);
        auto [fd, why] = open_path(path, kDirFlags);
        struct stat st {};
        if (!fd.ok() || ::fstat(fd.get(), &st) != 0) return false;
        stamp(path, st);
        Listing l;
        if (!list(fd.get(), l)) return false;
        visit(fd.get(), path, l);
        for (auto& name : l.subdirs) {
            const std::string sub = rel == "." ? name : std::string(rel) + "/" + name;
            if (name == ".git" || !stamp_of_.contains(sub)) walk(paths::join(path, name));
            subdirs.insert(std::move(name));
        }
        return true;
    }

    // A survey's path of a directory of the root, relative to it ("." for the root).
    std::string relative(const std::string& path) const {
        return path.size() == root_.size() ? std::string(".") : path.substr(root_.size() + 1);
    }

    // Takes the stamp of the directory `path` (its lstat in `st`) for the survey's
    // result, unless it is a `.git` (a survey enters none below one).
    void stamp(const std::string& path, const struct stat& st) {
        if (base_name(path) == ".git") return;
        // Too recent to trust: a change right after this look may carry the same time.
        const bool fresh = st.st_ctim.tv_sec + kStampSlack >= start_.tv_sec;
        stamps_.push_back({relative(path), fresh ? 0 : st.st_ctim.tv_sec, fresh ? 0 : st.st_ctim.tv_nsec});
    }

    // What the walk notes of a directory: whether it is a git directory, and its
    // `.git` file or link. The root's own `.git` is protected during the run, and
    // the root is no git directory while it is sound. A command may break it (its
    // HEAD is writable, as git must write it) and give the root a HEAD beside
    // objects and refs, which git outside would then take for a bare repository,
    // config and hooks included: such a HEAD made during the run is renamed. A root
    // without a `.git` has a HEAD placeholder while the command runs.
    void visit(int fd, const std::string& path, const Listing& l) {
        if (path == root_) {
            if (survey_) return;
            if (struct stat st {}; l.git_dir() && changed(fd, "HEAD", st))
                neutralise(fd, path, "HEAD", "git-head",
                           "made during the run at the root beside objects and refs: git takes the root for a bare "
                           "repository, with its config and hooks, once the root's .git is broken");
            return;
        }
        if (l.git_dir()) git_dirs_.push_back(path);
        if (l.dot_git == DT_REG || l.dot_git == DT_LNK) {
            struct stat st {};
            pointers_.push_back(Pointer{path, l.dot_git, changed(fd, ".git", st), ""});
        }
    }

    // --- what the walk found ------------------------------------------------------

    // Renames `name` in `dir` (at `dir_path`) to its first free disabled name,
    // adding u+w to `dir` for the rename when the command left it unwritable (and
    // it is ours), and putting its mode back after. Where it cannot, a failure.
    void neutralise(int dir, const std::string& dir_path, const std::string& name, std::string_view kind,
                    const std::string& why) {
        const std::string path = paths::join(dir_path, name);
        struct stat dst {};
        bool chmodded = false;
        std::string failure;
        for (int attempt = 0;; ++attempt) {
            std::string to;
            if (auto numbered = sbx::disabled_name(name, attempt)) to = std::move(*numbered);
            else if (attempt == git_audit::kMaxDisabledNames + 1) {
                timespec now{};
                ::clock_gettime(CLOCK_REALTIME, &now);
                to = sbx::disabled_unique_name(name, static_cast<long>(::getpid()),
                                               static_cast<long long>(now.tv_sec) * 1000000000LL + now.tv_nsec);
            } else {
                failure = "every name up to " + name + std::string(git_audit::kDisabledSuffix) + "." +
                          std::to_string(git_audit::kMaxDisabledNames) + ", and one made unique, is taken";
                break;
            }
            int rc = ::renameat2(dir, name.c_str(), dir, to.c_str(), RENAME_NOREPLACE);
            if (rc != 0 && errno == EINVAL) {
                // A filesystem without RENAME_NOREPLACE: look first, then rename.
                struct stat there {};
                if (::fstatat(dir, to.c_str(), &there, AT_SYMLINK_NOFOLLOW) == 0) continue;
                rc = ::renameat(dir, name.c_str(), dir, to.c_str());
            }
            if (rc == 0) {
                out_.neutralised.push_back(sbx::GitNeutralised{std::string(kind), path, why, paths::join(dir_path, to)});
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
        if (chmodded && ::fchmod(dir, dst.st_mode & 07777) != 0)
            out_.warnings.push_back("could not give " + dir_path + " its mode " + octal(dst.st_mode) +
                                    " back: " + std::strerror(errno));
        if (!failure.empty())
            fail(path, "could not rename it (" + why + "): " + failure, kind == "protected" ? "protected" : "git");
    }

    // neutralise() for the file at the absolute `path`.
    void neutralise_path(const std::string& path, std::string_view kind, const std::string& why) {
        auto [dir, err] = open_path(paths::parent(path), kDirFlags);
        if (!dir.ok()) {
            fail(path, "could not reach it to rename it (" + why + "): " + err);
            return;
        }
        neutralise(dir.get(), paths::parent(path), std::string(base_name(path)), kind, why);
    }

    // A `.git` file or link outside the root's own: one made during the run that
    // leads to no git directory the audit looks at is renamed (git would follow it
    // where the audit did not look); the others lead the checks of hooks paths.
    void pointer(Pointer& p) {
        const std::string dotgit = paths::join(p.tree, ".git");
        if (p.type == DT_LNK) {
            if (p.made) {
                neutralise_path(dotgit, "git-pointer",
                                "a .git symbolic link made during the run: git follows it to a git directory the "
                                "audit does not enter");
                return;
            }
            if (auto r = real_path(dotgit)) p.real = *r;
            return;
        }
        auto [dir, err] = open_path(p.tree, kDirFlags);
        if (!dir.ok()) {
            fail(dotgit, "could not reach it: " + err);
            return;
        }
        auto text = read_small(dir.get(), ".git", git_audit::kMaxPointerBytes);
        if (!text) {
            if (p.made)
                neutralise(dir.get(), p.tree, ".git", "git-pointer",
                           "a .git file made during the run that is too large or unreadable to check");
            return;
        }
        auto target = sbx::gitdir_target(*text);
        if (!target) return;  // git cannot use it either
        const std::string to = paths::normalize(paths::is_absolute(*target) ? *target : p.tree + "/" + *target);
        auto real = real_path(to);
        if (real && in_audited(*real)) {
            p.real = *real;
            return;
        }
        if (p.made)
            neutralise(dir.get(), p.tree, ".git", "git-pointer",
                       "a .git file made during the run naming a git directory outside the audited directory (" +
                           *target + "), which the audit does not enter");
        else if (real)
            p.real = *real;
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
        // What `git worktree add` writes: a git directory whose files are protected.
        // Or one naming its own directory, which git reads as none: the placeholder
        // of a run of the root's group that still goes on.
        if (S_ISREG(st.st_mode))
            if (auto text = read_small(g, name, git_audit::kMaxPointerBytes)) {
                if (sbx::commondir_names(*text, gpath, gpath)) return;
                for (const auto& p : protected_)
                    if (sbx::commondir_names(*text, gpath, p)) return;
            }
        neutralise(g, gpath, name, f.kind, std::string(f.reason));
    }

    // When `path` (normalised) lies in an audited directory: renames the first
    // symbolic link on the way to it from there that was made during the run, and
    // says whether it did.
    bool link_made_on_way(const std::string& path, std::string_view kind, const std::string& what) {
        for (const auto& d : dirs_) {
            if (!paths::at_or_under(path, d) || path == d) continue;
            std::string at = d;
            for (const auto c : paths::components(std::string_view(path).substr(d.size()))) {
                at = paths::join(at, c);
                struct stat st {};
                if (::lstat(at.c_str(), &st) != 0) return false;
                if (!S_ISLNK(st.st_mode)) continue;
                if (!at_or_after(st.st_ctim, start_)) return false;  // the user's: where it leads is resolved
                neutralise_path(at, kind, "a symbolic link made during the run on the way to " + what);
                return true;
            }
            return false;
        }
        return false;
    }

    // A hooks directory at `path` (the default one, or one a config's core.hooksPath
    // names, `config`): every hook in it made or changed during the run is renamed.
    void hooks_dir(const std::string& path, const std::string& config) {
        const std::string lexical = paths::normalize(path);
        const std::string what = config.empty() ? "a hooks directory" : "the hooks directory " + config + " names";
        if (link_made_on_way(lexical, "git-hook", what)) return;
        auto real = real_path(lexical);
        if (!real) {
            // Nothing there for git to run, or behind another's directory the user,
            // and so the command, cannot search.
            if (errno != ENOENT && errno != ENOTDIR && errno != EACCES)
                fail(lexical, what + ": cannot resolve it: " + std::strerror(errno));
            return;
        }
        if (!in_audited(*real) || !hooks_done_.insert(*real).second) return;
        if (struct stat st {}; ::stat(real->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return;  // none to run
        auto [h, err] = open_path(*real, kDirFlags);
        if (!h.ok()) {
            fail(*real, what + ": cannot look into it: " + err);
            return;
        }
        std::vector<std::string> names;
        if (!each_entry(h.get(), [&](std::string_view name, unsigned char) { names.emplace_back(name); })) {
            fail(*real, what + ": cannot list it: " + std::strerror(errno));
            return;
        }
        for (const auto& n : names) {
            if (!sbx::hook_git_runs(n)) continue;
            struct stat st {};
            if (changed(h.get(), n, st))
                neutralise(h.get(), *real, n, "git-hook",
                           "made during the run in " + what + ": git runs a hook by its name");
            else if (S_ISLNK(st.st_mode) && ::fstatat(h.get(), n.c_str(), &st, 0) == 0 && at_or_after(st.st_ctim, start_))
                neutralise(h.get(), *real, n, "git-hook",
                           "a symbolic link in " + what + " to a file changed during the run: git runs it as a hook");
        }
    }

    // A hooks path `value` of the config `config`, for the working trees `trees`.
    void hooks_path(const std::string& value, const std::string& config, const std::vector<std::string>& trees,
                    std::vector<std::pair<std::string, std::string>>& relative) {
        if (value.empty()) return;
        if (value.starts_with("~/")) {
            if (!home_.empty()) hooks_dir(paths::join(home_, value.substr(2)), config);
            return;
        }
        if (paths::is_absolute(value)) {
            hooks_dir(value, config);
            return;
        }
        relative.emplace_back(value, config);
        for (const auto& t : trees) hooks_dir(paths::join(t, value), config);
    }

    // A file that the config `from` includes (`value`, from the directory `base`),
    // to the depth git follows: one made or changed during the run with a key that
    // runs a program is renamed; what it names is followed like the config's own.
    void include(const std::string& value, const std::string& base, const std::string& from,
                 const std::vector<std::string>& trees, std::vector<std::pair<std::string, std::string>>& relative,
                 std::set<std::string>& seen, int depth) {
        if (depth > protected_names::kMaxIncludeDepth || value.empty()) return;  // git refuses to run past it
        std::string p;
        if (value.starts_with("~/")) {
            if (home_.empty()) return;
            p = paths::join(home_, value.substr(2));
        } else p = paths::is_absolute(value) ? value : base + "/" + value;
        const std::string lexical = paths::normalize(p);
        const std::string what = "a file " + from + " includes";
        if (link_made_on_way(lexical, "git-config", what)) return;
        auto real = real_path(lexical);
        if (!real) {
            if (errno != ENOENT && errno != ENOTDIR && errno != EACCES)
                fail(lexical, what + ": cannot resolve it: " + std::strerror(errno));
            return;
        }
        if (!seen.insert(*real).second) return;
        auto text = read_small(AT_FDCWD, *real, git_audit::kMaxConfigBytes);
        struct stat st {};
        if (in_audited(*real) && ::lstat(real->c_str(), &st) == 0 && at_or_after(st.st_ctim, start_)) {
            if (!text) {
                neutralise_path(*real, "git-config", what + ", made during the run and too large or unreadable to check");
                return;
            }
            if (const auto findings = sbx::config_runners(*text); !findings.empty()) {
                neutralise_path(*real, "git-config", what + ": " + sbx::runners_why(findings));
                return;
            }
        }
        if (!text) return;
        const auto facts = GitConfigParser(*text).parse();
        for (const auto& h : facts.hooks_paths) hooks_path(h.value, lexical, trees, relative);
        for (const auto& i : facts.includes)
            include(i.value, paths::parent(lexical), lexical, trees, relative, seen, depth + 1);
    }

    // The working trees of the git directory `gpath`, whose configs (file, what it
    // says) are `configs`: where a relative hooks path is taken from.
    std::vector<std::string> trees_of(int g, const std::string& gpath,
                                      const std::vector<std::pair<std::string, GitConfigFacts>>& configs) {
        std::vector<std::string> trees;
        if (base_name(gpath) == ".git") trees.push_back(paths::parent(gpath));
        for (const auto& [file, f] : configs)
            for (const auto& w : f.worktrees)
                if (!w.value.empty())
                    trees.push_back(paths::normalize(paths::is_absolute(w.value) ? w.value : gpath + "/" + w.value));
        if (base_name(paths::parent(gpath)) == "worktrees")
            if (auto text = read_small(g, "gitdir", git_audit::kMaxPointerBytes)) {
                std::string t = *text;
                while (!t.empty() && (t.back() == '\n' || t.back() == '\r')) t.pop_back();
                if (!t.empty())
                    trees.push_back(paths::parent(paths::normalize(paths::is_absolute(t) ? t : gpath + "/" + t)));
            }
        if (trees.empty()) trees.push_back(gpath);  // a bare repository runs its hooks there
        return trees;
    }

    // One git directory the walk found (not a protected one): its own files, then
    // what its configs name.
    void git_dir(const std::string& gpath) {
        if (protected_.contains(gpath)) return;
        auto [g, err] = open_path(gpath, kDirFlags);
        if (!g.ok()) {
            fail(gpath, "cannot open this git directory to check it: " + err);
            return;
        }
        struct stat st {};
        if (::fstat(g.get(), &st) != 0 || !git_done_.insert({st.st_dev, st.st_ino}).second) return;
        for (const auto& f : git_audit::kAuditedFiles) {
            if (f.scope == git_audit::Scope::each_entry) {
                const std::string name(f.name);
                if (struct stat hs {}; changed(g.get(), name, hs) && S_ISLNK(hs.st_mode))
                    neutralise(g.get(), gpath, name, f.kind,
                               "a symbolic link made during the run, which git follows for hooks");
                else hooks_dir(paths::join(gpath, name), "");
            } else if (f.check == git_audit::Check::always) commondir(g.get(), gpath, f);
            else config_file(g.get(), gpath, f);
        }
        // The configs git still reads there, changed or not.
        std::vector<std::pair<std::string, GitConfigFacts>> configs;
        for (const char* name : {"config", "config.worktree"}) {
            auto text = read_small(g.get(), name, git_audit::kMaxConfigBytes);
            if (text) configs.emplace_back(paths::join(gpath, name), GitConfigParser(*text).parse());
        }
        const auto trees = trees_of(g.get(), gpath, configs);
        auto& relative = relative_hooks_[gpath];
        for (const auto& [hp, config] : global_hooks()) hooks_path(hp, config, trees, relative);
        std::set<std::string> seen;
        for (const auto& [file, f] : configs) {
            for (const auto& h : f.hooks_paths) hooks_path(h.value, file, trees, relative);
            for (const auto& i : f.includes) include(i.value, gpath, file, trees, relative, seen, 1);
        }
    }

    // GitAuditResult::repositories, from what the walk found under the root.
    void record_repositories() {
        const std::string own = paths::join(root_, ".git");
        auto recordable = [&](const std::string& p) {
            if (p == root_ || !paths::at_or_under(p, root_) || paths::at_or_under(p, own)) return false;
            for (const auto& d : protected_)
                if (paths::at_or_under(p, d)) return false;
            const auto parts = paths::components(std::string_view(p).substr(root_.size()));
            return std::find(parts.begin(), parts.end(), ".git") == parts.end();
        };
        using Kind = sbx::RecordedRepository::Kind;
        for (const auto& g : git_dirs_) {
            const bool dotgit = base_name(g) == ".git";
            const std::string where = dotgit ? paths::parent(g) : g;
            if (recordable(where)) out_.repositories.push_back({dotgit ? Kind::tree : Kind::bare, where});
        }
        for (const auto& p : pointers_)
            if (recordable(p.tree)) out_.repositories.push_back({Kind::tree, p.tree});
    }

    // The modes the walk changed, put back deepest first.
    void restore_modes() {
        for (auto it = fixed_.rbegin(); it != fixed_.rend(); ++it) {
            auto [dir, err] = open_path(paths::parent(it->path), kPathFlags);
            if (!dir.ok() ||
                ::fchmodat(dir.get(), std::string(base_name(it->path)).c_str(), it->mode, 0) != 0)
                out_.warnings.push_back("could not give " + it->path + " its mode " + octal(it->mode) +
                                        " back: " + (dir.ok() ? std::strerror(errno) : err));
        }
    }
};

}  // namespace

timespec audit_clock() {
    timespec t{};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &t);
    return t;
}

GitAuditResult audit_git(const std::string& root, const std::vector<std::string>& dirs, const timespec& start,
                         const std::vector<sbx::NeutraliseOp>& names,
                         const std::vector<sbx::NeutraliseNewOp>& patterns) {
    Auditor a(root, dirs, start);
    a.rename_made(names);
    a.rename_new(patterns);
    return a.run();
}

GitSurvey survey_git(const std::string& root, const GitSurvey* known) {
    const std::vector<std::string> dirs{root};
    Auditor a(root, dirs, audit_clock(), Auditor::Mode::survey, known);
    GitSurvey out;
    out.repositories = a.run().repositories;
    out.directories = a.take_stamps();
    return out;
}

namespace {

// What the record at `path` holds, unless it cannot be read or understood.
std::optional<std::vector<sbx::RecordedRepository>> read_record(const std::string& path) {
    auto text = read_small(AT_FDCWD, path, git_record::kMaxBytes);
    if (!text) return std::nullopt;
    auto read = sbx::parse_git_record(*text);
    if (read.problem || read.truncated) return std::nullopt;
    return std::move(read.repos);
}

// keep_git_record() with what the record held already read: nullopt when it
// could not be read or understood (then it is written anew).
sbx::expected<void> keep_record(const std::string& path, std::optional<std::vector<sbx::RecordedRepository>> held,
                                const std::vector<std::string>& audited, const std::vector<sbx::RecordedRepository>& found) {
    // What it held is kept outside the audited directories.
    std::vector<sbx::RecordedRepository> before = held ? std::move(*held) : std::vector<sbx::RecordedRepository>{};
    std::vector<sbx::RecordedRepository> now;
    for (const auto& r : before)
        if (std::none_of(audited.begin(), audited.end(), [&](const std::string& d) { return paths::at_or_under(r.path, d); }))
            now.push_back(r);
    now.insert(now.end(), found.begin(), found.end());
    auto by_path = [](const sbx::RecordedRepository& a, const sbx::RecordedRepository& b) {
        return a.path != b.path ? a.path < b.path : a.kind < b.kind;
    };
    std::sort(now.begin(), now.end(), by_path);
    now.erase(std::unique(now.begin(), now.end()), now.end());
    std::sort(before.begin(), before.end(), by_path);
    if (held && now == before) return {};
    return keep_file(path, sbx::git_record_text(now), "the record of the repositories found");
}

}  // namespace

sbx::expected<void> keep_git_record(const std::string& path, const std::vector<std::string>& audited,
                                    const std::vector<sbx::RecordedRepository>& found) {
    return keep_record(path, read_record(path), audited, found);
}

sbx::expected<void> refresh_git_record(const std::string& record, const std::string& stamps, const std::string& root) {
    GitSurvey known;
    bool have = false;
    std::optional<std::string> kept;
    auto held = read_record(record);
    if (held) {
        known.repositories = std::move(*held);
        if ((kept = read_small(AT_FDCWD, stamps, git_stamps::kMaxBytes))) {
            auto read = sbx::parse_git_stamps(*kept);
            have = !read.problem;
            known.directories = std::move(read.dirs);
        }
    }
    auto now = survey_git(root, have ? &known : nullptr);
    // What the record held, for keeping: the survey is done with it.
    if (held) held = std::move(known.repositories);
    SBX_TRY(keep_record(record, std::move(held), {root}, now.repositories));
    const std::string text = sbx::git_stamps_text(now.directories);
    // Too many directories to keep: every run walks the whole root.
    if (text.size() > git_stamps::kMaxBytes) return forget_file(stamps, "the directory stamps of the root");
    if (have && text == *kept) return {};
    return keep_file(stamps, text, "the directory stamps of the root");
}

}  // namespace sbx::launcher
