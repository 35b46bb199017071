// sbx/plan/fs_plan.hpp - the filesystem part of a plan: ordered mounts and placeholders.
//
// make_fs_plan() turns compiled FsRules into what a Linux launcher carries out,
// looking at the disk only through the FsView it is handed. bubblewrap takes the
// source of every bind from the host's tree, not from the sandbox being built, so
// a later bind of a directory would uncover whatever an earlier mount changed
// inside it (a hidden file readable again, a pinned directory movable again).
// Hence the mounts come shallow before deep, whatever step made them; at one
// depth the steps keep this order:
//   1. writable binds: the root, TMPDIR, the root's git directory outside it (a linked
//      worktree's main repository's), the tool cache, allowWrite, additionalDirectories;
//   2. pins: directories bound over themselves so that no parent of a protected or
//      hidden path can be renamed or removed (a mount point cannot), and the
//      root's `.git`;
//   3. masks: an empty tmpfs over a hidden directory (made read-only at the very
//      end), /dev/null over a hidden file;
//   4. re-opened paths: allowRead entries and writable roots inside a mask;
//   5. read-only binds over denyWrite paths and protected paths; missing protected
//      paths get read-only placeholders (a missing `commondir` one that names its
//      own git directory, which git reads as no commondir at all), and so does the
//      first missing folder on the way to one (fs_rules.hpp). A missing name in
//      the root that only a later program reads (Missing::after_run) gets none:
//      it is listed in `neutralise`, and the launcher renames what the command
//      made there once it is over. A protected path that
//      is a symbolic link is bound over itself, not followed (its target, listed
//      on its own, gets its own bind), so that its name cannot be removed, renamed
//      or replaced either.
// Every mount records the identity (device, inode, link count) of what it was
// planned against, so the launcher can refuse a path swapped since. Hard links
// defeat path rules: a hidden or protected file with more than one link fails
// the plan.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/rules/fs_rules.hpp"

namespace sbx {

// What a path was when the plan was made. `exists` false: nothing was there.
struct Identity {
    bool exists = false;
    FileType type = FileType::other;
    std::uint64_t dev = 0, ino = 0, nlink = 0;
};

enum class MountKind {
    bind,       // `source` at `path`, writable
    ro_bind,    // `source` at `path`, read-only
    pin,        // a directory over itself, writable: it cannot be renamed or removed
    mask_dir,   // an empty read-only tmpfs over a directory
    mask_file,  // /dev/null, read-only, over a file
    // A symbolic link bound read-only over itself, not followed: a mount point,
    // so its name cannot be removed, renamed or replaced (its target has a
    // mount of its own). Only the new mount API makes one (the stage, in
    // launchers/stage/mounts.cpp); bubblewrap follows a link it binds to, so
    // where it makes the mounts this one is left out, with a warning
    // (sbx/linux/bwrap.hpp, bubblewrap_unmade).
    ro_link,
};

constexpr std::string_view mount_kind_name(MountKind k) noexcept {
    switch (k) {
        case MountKind::bind: return "bind";
        case MountKind::ro_bind: return "ro-bind";
        case MountKind::pin: return "pin";
        case MountKind::mask_dir: return "mask-dir";
        case MountKind::mask_file: return "mask-file";
        case MountKind::ro_link: return "ro-link";
    }
    return "?";
}

struct Mount {
    MountKind kind = MountKind::ro_bind;
    std::string path;    // where, inside the sandbox (the same path as on the host)
    std::string source;  // for binds: the host path bound there (== path unless re-opened through a link)
    Identity expect;     // of `source` (binds) or `path` (masks, pins, links: the link's own, not its target's)
    std::string why;     // the rule, in one line
};

// Kernel interfaces a plan never binds from the host: the sandbox's /proc is a
// fresh one of its own PID namespace, and /sys stays read-only. A rule that would
// bind one is left out, with a warning; parse_plan refuses such a mount.
struct KernelInterface {
    std::string_view path;
    bool read_only_ok = false;  // a read-only bind is harmless
    std::string_view reason;
};

inline constexpr std::array kKernelInterfaces{
    KernelInterface{"/proc", false, "the sandbox's /proc is its own; the host's would show every process of the machine"},
    KernelInterface{"/sys", true, "its files act on the host, so it stays read-only"},
};

// The kernel interface that a bind at `path` (writable or not) would expose, or nullptr.
SBX_INLINE const KernelInterface* kernel_interface(std::string_view path, bool writable);

// A missing protected path, covered while the command runs: the launcher
// creates it (nothing may be there), binds it read-only, and removes it after.
struct PlaceholderOp {
    std::string path;
    Placeholder kind = Placeholder::file;
    Identity parent;  // of the directory it goes in
    std::string why;
};

// A protected path in the root, missing when the plan was made, that nothing
// outside reads while the command runs (Missing::after_run): no placeholder, so
// the root shows the command only the project. It must still be missing when
// the command starts; whatever is at it once the command is over was made during
// the run, and the launcher renames it to NAME.sbx-disabled, as the git audit
// does (launchers/linux/git_audit.cpp).
struct NeutraliseOp {
    std::string path;
    std::string why;
};

// A write deny whose wildcard is in its last component only (`DIR/AGENT-*.md`),
// over a directory the command may write: the names matching it when the plan
// was made are bound read-only, but Linux refuses paths, not patterns, so the
// command could make a new one. `dir` is a mount point of the plan (a writable
// bind's own path, or pinned), so it cannot be renamed or replaced; once the
// command is over the launcher renames every entry of `dir` matching `pattern`
// but those in `present` to NAME.sbx-disabled, and says so.
inline constexpr bool writable_mount(MountKind k) { return k == MountKind::bind || k == MountKind::pin; }

struct NeutraliseNewOp {
    std::string dir;      // absolute, normalised, symlink-free
    std::string pattern;  // one component, with a wildcard
    std::vector<std::string> present;  // the names that matched when the plan was made, sorted
    std::string why;

    // Whether the absolute, normalised `path` is a name in `dir` that `pattern` matches.
    bool matches(std::string_view path) const {
        const std::size_t slash = path.rfind('/');
        return slash != std::string_view::npos && path.substr(0, slash == 0 ? 1 : slash) == dir &&
               glob::detail::match_component(pattern, path.substr(slash + 1));
    }
};

// What git inside the sandbox reads as the repository's info/exclude: the file's
// own lines and the placeholders in the root, so that `git status` and `git add
// -A` inside pass over them. Bound read-only over the file for the command only.
struct GitExclude {
    std::string path;  // ROOT/.git/info/exclude, or a linked worktree's MAIN/.git/info/exclude (a writable bind)
    Identity expect;   // of that file when the plan was made
    std::string content;
};

struct FsPlan {
    bool isolated = true;       // false: filesystem.disabled, the command sees the filesystem as you do
    std::vector<Mount> mounts;  // in order
    std::vector<PlaceholderOp> placeholders;
    std::vector<NeutraliseOp> neutralise;
    std::vector<NeutraliseNewOp> neutralise_new;
    // Set by with_names_refused (report.hpp) for reading refusals where the
    // sandbox refuses the names of `neutralise` and `neutralise_new` while the
    // command runs (Seatbelt, the weaker sandbox), not the plan's own.
    bool names_refused = false;
    std::optional<GitExclude> git_exclude;
    // Directories the launcher audits once the command is over: it renames what the
    // command made or changed in their git directories that would make git run a
    // program (git_audit.hpp). The root, for an isolated plan.
    std::vector<std::string> git_audit;
    // Where the launcher then records the repositories the audit found under the
    // root, for the next plan to protect (git_record.hpp); nullopt: nowhere.
    std::optional<std::string> git_record;
    std::vector<Warning> warnings;
};

// Limits on looking through the disk while planning.
struct PlanLimits {
    std::size_t dir_entries = 5000;  // looked through per hidden directory, and per wildcard
    std::size_t glob_depth = 8;      // components a `**` descends
};

namespace detail {

SBX_INLINE Identity identity_of(const std::optional<FileStat>& st);

// Expands a pattern against the disk to the paths that exist and match, the
// shallowest match of each branch (what lies below a match is covered by it).
class GlobWalker {
public:
    GlobWalker(const CachedFs& fs, const PlanLimits& limits, std::vector<Warning>& warnings)
        : fs_(fs), limits_(limits), warnings_(warnings) {}

    // A rule's paths: a path rule (fs_rules.hpp) names itself, whatever it holds.
    std::vector<std::string> expand(const FsRule& r);

    std::vector<std::string> expand(const std::string& pattern, const std::optional<Source>& source);

private:
    const CachedFs& fs_;
    const PlanLimits& limits_;
    std::vector<Warning>& warnings_;
    std::string pattern_;
    std::vector<std::string_view> comps_;
    std::vector<std::string> out_;
    std::size_t seen_ = 0;
    bool cut_ = false;

    static std::string child(const std::string& dir, std::string_view name) {
        return dir == "/" ? "/" + std::string(name) : dir + "/" + std::string(name);
    }

    bool is_dir(const std::string& p) const {
        auto st = fs_.lstat(p);
        return st && *st && (*st)->type == FileType::directory;
    }

    // A directory's entries, as far as the limit on entries looked through allows.
    std::span<const FsView::Entry> entries(const std::string& dir);

    // Whether an entry is a directory (not a link to one), from the listing when it says.
    bool entry_is_dir(const std::string& path, const FsView::Entry& e) const {
        return e.type ? *e.type == FileType::directory : is_dir(path);
    }

    // What a listing already told of a path, so the walk need not ask again.
    enum class Known { nothing, exists, directory };

    void walk(const std::string& at, std::size_t j, std::size_t depth, Known known = Known::nothing);
};

class Planner {
public:
    Planner(const FsRules& rules, const CachedFs& fs, const PlanLimits& limits)
        : rules_(rules), fs_(fs), limits_(limits), globs_(fs, limits, plan_.warnings) {}

    expected<FsPlan> run();

private:
    const FsRules& rules_;
    const FsView& fs_;
    const PlanLimits& limits_;
    FsPlan plan_;
    GlobWalker globs_;
    std::vector<Mount> binds_, pins_, masks_, reopens_, readonly_;
    std::vector<std::string> writable_roots_;  // real paths of the writable binds
    std::vector<std::string> hidden_;          // paths masked
    std::vector<std::string> guarded_;         // protected and denyWrite paths, for pins

    expected<std::optional<FileStat>> stat(const std::string& p) const { return fs_.lstat(p); }

    bool in_writable(const std::string& p) const {
        return std::any_of(writable_roots_.begin(), writable_roots_.end(),
                           [&](const std::string& w) { return paths::at_or_under(p, w); });
    }

    bool is_writable_root(const std::string& p) const {
        return std::find(writable_roots_.begin(), writable_roots_.end(), p) != writable_roots_.end();
    }

    bool mounted_at(const std::vector<Mount>& v, const std::string& p) const {
        return std::any_of(v.begin(), v.end(), [&](const Mount& m) { return m.path == p; });
    }

    expected<void> writable_binds();

    // A hidden file with other names can be read through them: refuse it.
    expected<void> check_links(const std::string& p, const FileStat& st, std::string_view what) const;

    // Files inside a hidden or protected directory, looked through up to the limit.
    expected<void> check_links_below(const std::string& dir, std::string_view what, const std::optional<Source>& src);

    expected<void> hidden();

    expected<void> protected_and_denied_writes();
    // A write deny with a wildcard in its last component only, over a writable
    // directory: what the command makes there matching it is renamed after the
    // run (NeutraliseNewOp), and the directory pinned.
    expected<void> new_matches(const FsRule& r);

    // Every directory strictly between a writable root and a guarded or hidden path.
    void pins();

    // allowRead entries and writable roots inside a masked directory come back.
    void reopened();
};

}  // namespace detail

// The filesystem part of a plan for one command.
SBX_INLINE expected<FsPlan> make_fs_plan(const FsRules& rules, const FsView& fs, const PlanLimits& limits = {});

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_PLAN)

namespace sbx {

SBX_INLINE const KernelInterface* kernel_interface(std::string_view path, bool writable) {
    for (const auto& k : kKernelInterfaces)
        if (paths::at_or_under(path, k.path) && (writable || !k.read_only_ok)) return &k;
    return nullptr;
}

}  // namespace sbx

namespace sbx::detail {

SBX_INLINE Identity identity_of(const std::optional<FileStat>& st) {
    if (!st) return {};
    return Identity{true, st->type, st->dev, st->ino, st->nlink};
}

SBX_INLINE std::vector<std::string> GlobWalker::expand(const FsRule& r) {
    if (!r.wildcard) {
        auto st = fs_.lstat(r.pattern);
        if (st && *st) return {r.pattern};
        return {};
    }
    return expand(r.pattern, r.source);
}

SBX_INLINE std::vector<std::string> GlobWalker::expand(const std::string& pattern, const std::optional<Source>& source) {
    if (!glob::has_wildcard(pattern)) {  // a plain path: itself, when something is there
        auto st = fs_.lstat(pattern);
        if (st && *st) return {pattern};
        return {};
    }
    out_.clear();
    seen_ = 0;
    cut_ = false;
    pattern_ = pattern;
    comps_ = paths::components(pattern);
    std::size_t literal = 0;
    while (literal < comps_.size() && !glob::has_wildcard(comps_[literal])) ++literal;
    std::string start;
    for (std::size_t i = 0; i < literal; ++i) start += "/" + std::string(comps_[i]);
    if (start.empty()) start = "/";
    // A trailing `/**` names the directory itself, as bubblewrap can mount it.
    if (literal + 1 == comps_.size() && comps_.back() == "**") comps_.pop_back();
    walk(start, literal, 0);
    if (cut_ && source)
        warnings_.push_back(Warning{source->file, source->key,
                                    "expanding " + pattern + " stopped after " +
                                        std::to_string(limits_.dir_entries) + " entries; what lies beyond is not covered"});
    std::sort(out_.begin(), out_.end());
    out_.erase(std::unique(out_.begin(), out_.end()), out_.end());
    return out_;
}

SBX_INLINE std::span<const FsView::Entry> GlobWalker::entries(const std::string& dir) {
    const auto& l = fs_.listing(dir);
    if (!l) return {};
    std::size_t n = l->size();
    if (seen_ + n > limits_.dir_entries) {
        cut_ = true;
        n = limits_.dir_entries > seen_ ? limits_.dir_entries - seen_ : 0;
    }
    seen_ += n;
    return {l->data(), n};
}

SBX_INLINE void GlobWalker::walk(const std::string& at, std::size_t j, std::size_t depth, Known known) {
    if (j == comps_.size()) {
        if (known != Known::nothing) {
            out_.push_back(at);
            return;
        }
        auto st = fs_.lstat(at);
        if (st && *st) out_.push_back(at);
        return;
    }
    if (cut_) return;
    const bool dir = known == Known::directory || (known == Known::nothing && is_dir(at)) ||
                     (known == Known::exists && is_dir(at));
    const std::string_view c = comps_[j];
    if (c == "**") {
        walk(at, j + 1, depth, known);  // zero components
        if (depth >= limits_.glob_depth || !dir) return;
        for (const auto& e : entries(at)) {
            const std::string next = child(at, e.name);
            if (entry_is_dir(next, e)) walk(next, j, depth + 1, Known::directory);  // links are not followed
            else if (j + 1 < comps_.size() && glob::detail::match_component(comps_[j + 1], e.name))
                walk(next, j + 2, depth + 1, Known::exists);
        }
        return;
    }
    if (!glob::has_wildcard(c)) {
        walk(child(at, c), j + 1, depth);
        return;
    }
    if (!dir) return;
    for (const auto& e : entries(at))
        if (glob::detail::match_component(c, e.name))
            walk(child(at, e.name), j + 1, depth, entry_is_dir(child(at, e.name), e) ? Known::directory : Known::exists);
}

SBX_INLINE expected<FsPlan> Planner::run() {
    if (rules_.disabled) {
        plan_.warnings.push_back(Warning{rules_.disabled_source ? rules_.disabled_source->file.str() : "",
                                         rules_.disabled_source ? rules_.disabled_source->key : "",
                                         "filesystem isolation is disabled: the command can read and write "
                                         "everything you can"});
        plan_.isolated = false;
        return std::move(plan_);
    }
    SBX_TRY(writable_binds());
    SBX_TRY(hidden());
    SBX_TRY(protected_and_denied_writes());
    pins();
    reopened();
    // Shallow before deep, across all steps: a bind takes its source from the
    // host, so a mount at a directory would undo every mount made inside it
    // before. At one depth the steps keep their order.
    for (auto* step : {&binds_, &pins_, &masks_, &reopens_, &readonly_})
        plan_.mounts.insert(plan_.mounts.end(), step->begin(), step->end());
    auto depth = [](const Mount& m) { return std::count(m.path.begin(), m.path.end(), '/'); };  // normalised
    std::stable_sort(plan_.mounts.begin(), plan_.mounts.end(),
                     [&](const Mount& a, const Mount& b) { return depth(a) < depth(b); });
    // A writable root inside a mask is bound and re-opened alike: once is enough.
    auto same = [](const Mount& a, const Mount& b) {
        return a.kind == b.kind && a.path == b.path && a.source == b.source;
    };
    plan_.mounts.erase(std::unique(plan_.mounts.begin(), plan_.mounts.end(), same), plan_.mounts.end());
    // A name that matched when the plan was made is left alone after the run
    // only where the command could not change it.
    for (auto& op : plan_.neutralise_new) {
        std::erase_if(op.present, [&](const std::string& name) {
            const std::string at = paths::join(op.dir, name);
            return std::none_of(plan_.mounts.begin(), plan_.mounts.end(),
                                [&](const Mount& m) { return m.path == at && !writable_mount(m.kind); });
        });
        std::sort(op.present.begin(), op.present.end());
        op.present.erase(std::unique(op.present.begin(), op.present.end()), op.present.end());
    }
    return std::move(plan_);
}

SBX_INLINE expected<void> Planner::writable_binds() {
    for (const auto& r : rules_.rules) {
        if (r.kind != FsRule::Kind::writable) continue;
        // Mount the real location; the rule under its written name, when a link
        // stands on the way, has a twin with the real path.
        auto real = resolve(fs_, r.pattern);
        if (!real || *real != r.pattern) continue;
        if (const auto* k = kernel_interface(r.pattern, true)) {
            if (r.source)
                plan_.warnings.push_back(Warning{r.source->file, r.source->key,
                                                 r.pattern + " is not mounted writable: " + std::string(k->reason)});
            continue;
        }
        auto st = stat(r.pattern);
        SBX_TRY(st);
        // The launcher makes these two; the others must be there.
        const bool made = r.pattern == rules_.tmpdir || (!rules_.tool_cache.empty() && r.pattern == rules_.tool_cache);
        if (!*st && !made) {
            if (r.source)
                plan_.warnings.push_back(Warning{r.source->file, r.source->key,
                                                 r.pattern + " does not exist, so it is not mounted writable"});
            continue;
        }
        if (std::find(writable_roots_.begin(), writable_roots_.end(), r.pattern) != writable_roots_.end()) continue;
        writable_roots_.push_back(r.pattern);
        binds_.push_back(Mount{MountKind::bind, r.pattern, r.pattern, identity_of(*st), describe(r)});
    }
    return {};
}

SBX_INLINE expected<void> Planner::check_links(const std::string& p, const FileStat& st, std::string_view what) const {
    if (st.type == FileType::regular && st.nlink > 1)
        return fail(Error(Errc::invalid_plan, std::string(what) + " has " + std::to_string(st.nlink) +
                                                  " hard links; the rule holds only for this name, so sbx "
                                                  "refuses to run (remove the other links)")
                        .in_file(p));
    return {};
}

SBX_INLINE expected<void> Planner::check_links_below(const std::string& dir, std::string_view what, const std::optional<Source>& src) {
    std::vector<std::string> todo{dir};
    std::size_t seen = 0;
    while (!todo.empty()) {
        const std::string d = std::move(todo.back());
        todo.pop_back();
        auto names = fs_.list(d);
        if (!names) continue;  // unreadable: nothing can be read through it either
        for (const auto& n : *names) {
            if (++seen > limits_.dir_entries) {
                plan_.warnings.push_back(
                    Warning{src ? src->file.str() : dir, src ? src->key : "",
                            "looked through " + std::to_string(limits_.dir_entries) + " entries of " + dir +
                                " for hard links and stopped: a file beyond with a hard link in a readable "
                                "place can be read there (sbx run says this once for the root; hiding "
                                "narrower folders lets the check finish)",
                            WarningScope::any, true});
                return {};
            }
            const std::string p = d + "/" + n;
            auto st = stat(p);
            if (!st || !*st) continue;
            if ((*st)->type == FileType::directory) todo.push_back(p);
            else SBX_TRY(check_links(p, **st, what));
        }
    }
    return {};
}

SBX_INLINE expected<void> Planner::hidden() {
    for (const auto& r : rules_.rules) {
        if (r.kind != FsRule::Kind::deny_read) continue;
        for (const auto& p : globs_.expand(r)) {
            auto real = resolve(fs_, p);
            SBX_TRY(real);
            auto st = stat(*real);
            SBX_TRY(st);
            if (!*st) continue;
            if (sbx::decide(rules_, *real, Access::read).allowed) continue;  // a narrower allow re-opens it
            if (std::find(hidden_.begin(), hidden_.end(), *real) != hidden_.end()) continue;
            const bool dir = (*st)->type == FileType::directory;
            if (dir) {
                SBX_TRY(check_links_below(*real, "a file under a read deny", r.source));
            } else if (auto c = check_links(*real, **st, "a file a read deny names"); !c) {
                return c;
            }
            hidden_.push_back(*real);
            masks_.push_back(Mount{dir ? MountKind::mask_dir : MountKind::mask_file, *real, {}, identity_of(*st),
                                   "hidden by " + describe(r)});
        }
    }
    return {};
}

SBX_INLINE expected<void> Planner::protected_and_denied_writes() {
    for (const auto& p : rules_.protected_paths) {
        if (!in_writable(p.path)) continue;  // read-only already
        // A writable root of its own (writable_binds), a mount point like a pin;
        // the directories above it inside another writable root are pinned.
        if (p.guard == Guard::git_writable) {
            guarded_.push_back(p.path);
            continue;
        }
        auto st = stat(p.path);
        SBX_TRY(st);
        if (p.guard == Guard::pin) {
            if (*st && (*st)->type == FileType::directory) {
                guarded_.push_back(p.path);
                // A writable root is a mount point already: bound once.
                if (!is_writable_root(p.path))
                    pins_.push_back(Mount{MountKind::pin, p.path, p.path, identity_of(*st), "pinned: " + p.reason});
            }
            continue;
        }
        if (!sbx::decide(rules_, p.path, Access::read).allowed) continue;  // masked, read-only already
        if (!*st && renamed_after_run(p, rules_.root) && is_writable_root(rules_.root)) {
            // The root is a mount point: nothing needs pinning on the way.
            plan_.neutralise.push_back(NeutraliseOp{p.path, p.reason});
            continue;
        }
        guarded_.push_back(p.path);
        if (!*st) {
            auto parent = stat(paths::parent(p.path));
            SBX_TRY(parent);
            if (!*parent || (*parent)->type != FileType::directory) continue;  // covered by a placeholder above
            plan_.placeholders.push_back(PlaceholderOp{p.path, p.placeholder, identity_of(*parent), p.reason});
            readonly_.push_back(Mount{MountKind::ro_bind, p.path, p.path, {}, "placeholder: " + p.reason});
            continue;
        }
        if ((*st)->type == FileType::symlink) {
            // Its target is listed on its own; the name itself is bound over.
            if (!mounted_at(readonly_, p.path))
                readonly_.push_back(Mount{MountKind::ro_link, p.path, {}, identity_of(*st),
                                          "protected symbolic link: " + p.reason});
            continue;
        }
        SBX_TRY(check_links(p.path, **st, "a protected file"));
        if ((*st)->type == FileType::directory && p.path.ends_with("/hooks")) {
            // The scripts directly in a hooks directory are what git runs.
            auto names = fs_.list(p.path);
            if (names)
                for (const auto& n : *names) {
                    auto hs = stat(p.path + "/" + n);
                    if (hs && *hs)
                        SBX_TRY(check_links(p.path + "/" + n, **hs, "a hook script"));
                }
        }
        if (!mounted_at(readonly_, p.path))
            readonly_.push_back(Mount{MountKind::ro_bind, p.path, p.path, identity_of(*st), "protected: " + p.reason});
    }
    for (const auto& r : rules_.rules) {
        if (r.kind != FsRule::Kind::deny_write) continue;
        SBX_TRY(new_matches(r));
        for (const auto& p : globs_.expand(r)) {
            auto real = resolve(fs_, p);
            if (!real || !in_writable(*real)) continue;
            if (!sbx::decide(rules_, *real, Access::read).allowed) continue;
            auto st = stat(*real);
            if (!st || !*st) continue;
            // Another name for the file would stay writable.
            if ((*st)->type == FileType::directory) {
                SBX_TRY(check_links_below(*real, "a file under a write deny", r.source));
            } else if (auto c = check_links(*real, **st, "a file a write deny names"); !c) {
                return c;
            }
            guarded_.push_back(*real);
            if (!mounted_at(readonly_, *real))
                readonly_.push_back(Mount{MountKind::ro_bind, *real, *real, identity_of(*st), "denied by " + describe(r)});
        }
    }
    return {};
}

SBX_INLINE expected<void> Planner::new_matches(const FsRule& r) {
    if (!r.wildcard) return {};
    const std::string dir = paths::parent(r.pattern);
    if (glob::has_wildcard(dir)) return {};
    auto real = resolve(fs_, dir);
    if (!real || !in_writable(*real) || !sbx::decide(rules_, *real, Access::read).allowed) return {};
    auto st = stat(*real);
    SBX_TRY(st);
    if (!*st || (*st)->type != FileType::directory) return {};  // a later program made it: not covered
    auto last = [](std::string_view p) { return std::string(p.substr(p.rfind('/') + 1)); };
    const std::string pattern = last(r.pattern);
    for (const auto& op : plan_.neutralise_new)
        if (op.dir == *real && op.pattern == pattern) return {};
    NeutraliseNewOp op{*real, pattern, {}, "denied by " + describe(r)};
    for (const auto& p : globs_.expand(r)) {
        if (paths::parent(p) != dir) continue;
        const std::string at = paths::join(*real, last(p));
        auto ps = stat(at);
        SBX_TRY(ps);
        if (!*ps) continue;
        // The loop below binds what a link leads to; the name itself is bound
        // over too, so that the command can neither remove nor replace it.
        if ((*ps)->type == FileType::symlink && !mounted_at(readonly_, at))
            readonly_.push_back(Mount{MountKind::ro_link, at, {}, identity_of(*ps), "denied by " + describe(r)});
        op.present.push_back(last(p));  // kept by run() when a read-only mount stands at it
    }
    if (!is_writable_root(*real) && !mounted_at(pins_, *real))
        pins_.push_back(Mount{MountKind::pin, *real, *real, identity_of(*st), "pinned: new names matching " +
                                                                                  r.pattern + " are renamed after the run"});
    guarded_.push_back(*real + "/" + pattern);  // pins the directories above it
    plan_.neutralise_new.push_back(std::move(op));
    return {};
}

SBX_INLINE void Planner::pins() {
    std::set<std::string> want;
    auto add = [&](const std::string& p) {
        for (const auto& w : writable_roots_) {
            if (!paths::at_or_under(p, w) || p == w) continue;
            for (auto d = paths::parent(p); d != w && paths::at_or_under(d, w); d = paths::parent(d)) want.insert(d);
        }
    };
    for (const auto& p : guarded_) add(p);
    for (const auto& p : hidden_) add(p);
    for (const auto& d : want) {
        // A writable root is a mount point already: bound once.
        if (mounted_at(pins_, d) || is_writable_root(d)) continue;
        auto st = stat(d);
        if (!st || !*st || (*st)->type != FileType::directory) continue;
        pins_.push_back(Mount{MountKind::pin, d, d, identity_of(*st), "pinned: holds a protected or hidden path"});
    }
}

SBX_INLINE void Planner::reopened() {
    auto under_mask = [&](const std::string& p) {
        return std::any_of(masks_.begin(), masks_.end(), [&](const Mount& m) {
            return m.kind == MountKind::mask_dir && paths::at_or_under(p, m.path) && p != m.path;
        });
    };
    for (const auto& r : rules_.rules) {
        if (r.kind != FsRule::Kind::allow_read && r.kind != FsRule::Kind::writable) continue;
        // Only a rule whose named region meets a mask can re-open anything.
        const bool meets = std::any_of(masks_.begin(), masks_.end(), [&](const Mount& m) {
            return m.kind == MountKind::mask_dir &&
                   (paths::at_or_under(r.literal, m.path) || paths::at_or_under(m.path, r.literal));
        });
        if (!meets) continue;
        for (const auto& p : globs_.expand(r)) {
            if (!under_mask(p) || mounted_at(reopens_, p)) continue;
            auto real = resolve(fs_, p);
            if (!real) continue;
            if (!sbx::decide(rules_, p, Access::read).allowed) continue;
            auto st = stat(*real);
            if (!st || !*st) continue;
            const bool writable = sbx::decide(rules_, *real, Access::write).allowed;
            if (kernel_interface(p, writable) != nullptr || kernel_interface(*real, writable) != nullptr) continue;
            reopens_.push_back(Mount{writable ? MountKind::bind : MountKind::ro_bind, p, *real, identity_of(*st),
                                     "re-opened by " + describe(r)});
        }
    }
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE expected<FsPlan> make_fs_plan(const FsRules& rules, const FsView& fs, const PlanLimits& limits) {
    return with_cache(fs, [&](const CachedFs& cached) { return detail::Planner(rules, cached, limits).run(); });
}

}  // namespace sbx
#endif
