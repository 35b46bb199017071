// sbx/linux/weaker_rules.hpp - the Landlock file rules of the weaker sandbox.
//
// Where user namespaces are refused (in Docker, under Ubuntu's AppArmor), sbx
// offers, when asked for it by name, a weaker sandbox: no bubblewrap and no
// mounts; Landlock (with seccomp) alone confines the command. Landlock only
// allows: a ruleset handles kinds of access, and each rule gives some back
// beneath a directory (or on a file), for everything beneath it, with nothing to
// take away again. So the plan's mounts are written as their complement, split
// along the way to each exception:
//
//   - writing: each writable bind (the root, TMPDIR, allowWrite, the tool cache,
//     a writable place re-opened) is granted whole when nothing protected lies
//     beneath it. Otherwise it gets no rule of its own (nothing can be made,
//     removed or renamed directly in it but what the file broker makes where
//     the plan allows: weaker_broker.hpp) and each of its entries is looked at in
//     the same way, down to the protected paths, which get nothing. Protected
//     paths are every read-only bind, mask and placeholder, and the names the
//     plan renames after the run (filesystem.neutralise): a placeholder's or
//     such a name's parent is split too, so the missing name cannot be made.
//   - reading: `/` is granted whole when nothing hidden lies beneath it;
//     otherwise it may only be listed (names, no content) and its entries are
//     looked at in the same way, down to the hidden paths (the masks), which get
//     nothing. A path re-opened inside a hidden directory is looked at in the
//     same way from itself. Listing, like every Landlock right, holds beneath
//     the directory it is granted on: the names (never the contents) inside a
//     hidden directory can be listed, where a mask shows an empty one.
//
//   - devices: `/dev` is a hidden path of its own. Landlock grants by
//     hierarchy, so `/dev` readable would hand the command every terminal of
//     the user (`/dev/pts/N` opened for reading receives what is typed there),
//     the virtual consoles, the input devices and other programs' `/dev/shm`.
//     Only the devices of kWeakerDevices are granted, one by one.
//
// Entries are read from the disk through the FsView; symlinks get no rule (a
// rule would land on the target). A directory that cannot be listed where it
// must be split gets nothing beneath it but what other rules give (the safe
// side), and a warning. Pins are no concern here: with no mounts there is
// nothing to pin, a directory without a rule of its own cannot be renamed by
// the command, and the file broker renames no mount point of the plan's.
// The caller adds what is no part of the plan's mounts (the descriptors handed
// to the command: write_wall.hpp) and turns an error into "unavailable".
#pragma once

#include <algorithm>
#include <iterator>
#include <cstddef>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "sbx/core/error.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/plan/plan.hpp"

namespace sbx::linux_sandbox {

// One Landlock rule of the weaker sandbox.
struct LandlockGrant {
    enum class Kind {
        read,   // read files, list directories and execute beneath `path` (or that file)
        list,   // list directories beneath `path` (names only, no file content): ancestors of hidden paths
        write,  // every change of the file tree beneath `path` (or writing that file)
        device,    // reading and writing that device, no ioctl (kWeakerDevices)
        terminal,  // reading, writing and ioctls of that device: /dev/tty, the command's own terminal or none
    };
    std::string path;  // absolute, normalised; never a symlink
    Kind kind = Kind::read;
    bool directory = true;  // as the FsView saw it
    std::string why;        // for people: "readable: no hidden path beneath", ...
};

constexpr std::string_view landlock_grant_kind_name(LandlockGrant::Kind k) noexcept {
    switch (k) {
        case LandlockGrant::Kind::read: return "read";
        case LandlockGrant::Kind::list: return "list";
        case LandlockGrant::Kind::write: return "write";
        case LandlockGrant::Kind::device: return "device";
        case LandlockGrant::Kind::terminal: return "terminal";
    }
    return "?";
}

struct WeakerFsRules {
    std::vector<LandlockGrant> grants;  // sorted by path, then kind; none twice, none beneath one that covers it
    std::vector<Warning> warnings;      // directories that could not be listed, and what that closes
};

// The host's devices, which the weaker sandbox does not isolate: hidden whole.
inline constexpr std::string_view kHostDevices = "/dev";

// The devices the weaker sandbox's command may open, and nothing else of
// `/dev`: what every program opens by name. Its standard streams' own files
// (a terminal of its own, or the caller's with --no-pty) it holds already and
// may reopen (grant_handed, in the stage). Not here: /dev/pts/N, /dev/ptmx (no
// new terminal: one would sit on the host's devpts beside the user's),
// /dev/console, /dev/ttyN, /dev/input, /dev/shm and /dev/mqueue (other
// programs' shared memory and queues).
struct WeakerDevice {
    std::string_view path;
    LandlockGrant::Kind kind;  // device or terminal
    std::string_view why;
};
inline constexpr WeakerDevice kWeakerDevices[] = {
    {"/dev/null", LandlockGrant::Kind::device, "discards what is written to it; reads as empty"},
    {"/dev/zero", LandlockGrant::Kind::device, "reads as zeros"},
    {"/dev/full", LandlockGrant::Kind::device, "a write to it fails as on a full disk"},
    {"/dev/random", LandlockGrant::Kind::device, "random bytes"},
    {"/dev/urandom", LandlockGrant::Kind::device, "random bytes"},
    // The stage makes the command lead a session of its own, whose controlling
    // terminal is the command's own pseudo-terminal or none: /dev/tty never
    // opens the caller's terminal.
    {"/dev/tty", LandlockGrant::Kind::terminal, "the controlling terminal, which is the command's own or none"},
};
static_assert(std::all_of(std::begin(kWeakerDevices), std::end(kWeakerDevices), [](const WeakerDevice& d) {
    return d.path.starts_with("/dev/") &&
           (d.kind == LandlockGrant::Kind::device || d.kind == LandlockGrant::Kind::terminal);
}));

// The most rules weaker_fs_rules() makes unless told otherwise.
inline constexpr std::size_t kMaxLandlockGrants = 20000;

namespace detail {

// A set of clean absolute paths in which those beneath any one path are found
// as one run (every string that starts with "DIR/" sorts together).
class PathPoints {
public:
    explicit PathPoints(std::vector<std::string> points) : points_(std::move(points)) {
        std::sort(points_.begin(), points_.end());
        points_.erase(std::unique(points_.begin(), points_.end()), points_.end());
    }

    bool contains(const std::string& p) const { return std::binary_search(points_.begin(), points_.end(), p); }

    // The points strictly beneath `dir`, in order.
    std::span<const std::string> beneath(const std::string& dir) const;

    // Whether `p` or a directory above it is one of the points (a walk up, not a scan).
    bool at_or_under_one(std::string p) const;

private:
    std::vector<std::string> points_;
};

// "a/b, c and 2 more": the first points beneath `dir`, relative to it (beneath
// `/`, as they are).
SBX_INLINE std::string name_points(const std::string& dir, std::span<const std::string> points);

SBX_INLINE std::string child_of(const std::string& dir, const std::string& name);

// What one side of the split (writing or reading) needs to know.
struct Side {
    const PathPoints& stops;                   // nothing beneath these: protected (writing), hidden (reading)
    LandlockGrant::Kind whole;                 // what a path with no stop beneath gets
    std::optional<LandlockGrant::Kind> along;  // what a split directory gets: nothing (writing), list (reading)
    std::string_view stop_word;                // "protected", "hidden"
    std::string_view access_word;              // "writable", "readable"
};

// Splits directories around the stops of a side, collecting grants and warnings.
class Splitter {
public:
    // `slack`: grants allowed beyond `limit` while splitting, for those tidy()
    // drops afterwards.
    Splitter(const CachedFs& fs, std::size_t limit, std::size_t slack) : fs_(fs), limit_(limit), slack_(slack) {}

    // Grants `start` whole under `why`, or splits it (see the header comment).
    // Fails when more than `limit` + `slack` grants have been made.
    expected<void> split(const Side& side, const std::string& start, const std::string& why);

    std::vector<LandlockGrant> grants;
    std::vector<Warning> warnings;

private:
    const CachedFs& fs_;
    std::size_t limit_, slack_;
    std::set<std::string> split_dirs_[2];  // by side: reading, writing
    std::string splitting_;                // the directory being split, for the error

    // The directory `dir`, which has stops beneath it: its own grant, if the
    // side gives one, and each entry granted (under `why`) or queued.
    expected<void> split_one(const Side& side, const std::string& dir, const std::string& why,
                             std::vector<std::string>& todo);

    // What is at `p` when it can be granted or split: nullopt when nothing is
    // there, a symlink is, or it cannot be looked at (then with a warning).
    std::optional<FileStat> look(const Side& side, const std::string& p, const std::string& in);

    expected<void> grant(const std::string& p, LandlockGrant::Kind kind, const FileStat& st, std::string why);
};

// Sorted by path then kind, without grants another one already covers: the same
// again, or one beneath a directory granted read (for read and list) or write.
SBX_INLINE std::vector<LandlockGrant> tidy(std::vector<LandlockGrant> grants);

// The writing side's stops: what is read-only, masked or a placeholder in the
// plan (a read-only link's name too: its directory splits around it), and the
// names bubblewrap leaves writable and renames after the run
// (filesystem.neutralise), which Landlock keeps from being made as it keeps
// the placeholders' names; and for each filesystem.neutraliseNew pattern, its
// directory joined with the pattern, a name that splits the directory so that
// what is made in it goes through the broker (weaker_broker.hpp).
SBX_INLINE std::vector<std::string> protected_points(const Plan& plan);

}  // namespace detail

// The Landlock file rules that stand in for the plan's mounts in the weaker
// sandbox: writing where the writable binds are, except at and above what is
// read-only, masked or a placeholder in them; reading everywhere except the
// masks and `/dev` and, in place of each directory above one, listing; reading
// the paths re-opened inside a masked directory; the devices of kWeakerDevices
// that exist. A plan that does not isolate the
// filesystem (filesystem.disabled) gets `/` to read and to write. Paths that do
// not exist get nothing. Fails (Errc::sandbox_unavailable, naming the directory
// being split) when it would take more than `max_grants` rules.
SBX_INLINE expected<WeakerFsRules> weaker_fs_rules(const Plan& plan, const FsView& fs,
                                               std::size_t max_grants = kMaxLandlockGrants);

}  // namespace sbx::linux_sandbox

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_LINUX)

namespace sbx::linux_sandbox::detail {

SBX_INLINE std::span<const std::string> PathPoints::beneath(const std::string& dir) const {
    // Those that start with "DIR/" sort from "DIR/" up to "DIR0" ('0' follows '/').
    const std::string prefix = dir == "/" ? dir : dir + "/";
    std::string end = prefix;
    end.back() = '0';
    auto first = std::lower_bound(points_.begin(), points_.end(), prefix);
    if (first != points_.end() && *first == dir) ++first;  // `/` itself
    return {first, std::lower_bound(first, points_.end(), end)};
}

SBX_INLINE bool PathPoints::at_or_under_one(std::string p) const {
    for (;;) {
        if (contains(p)) return true;
        if (p == "/") return false;
        p = paths::parent(p);
    }
}

SBX_INLINE std::string name_points(const std::string& dir, std::span<const std::string> points) {
    constexpr std::size_t kNamed = 3;
    const std::size_t skip = dir == "/" ? 0 : dir.size() + 1;
    std::string out;
    const std::size_t n = std::min(points.size(), kNamed);
    for (std::size_t i = 0; i < n; ++i) {
        if (i > 0) out += i + 1 == n && points.size() <= kNamed ? " and " : ", ";
        out += points[i].substr(skip);
    }
    if (points.size() > kNamed) out += " and " + std::to_string(points.size() - kNamed) + " more";
    return out;
}

SBX_INLINE std::string child_of(const std::string& dir, const std::string& name) {
    return dir == "/" ? "/" + name : dir + "/" + name;
}

SBX_INLINE expected<void> Splitter::split(const Side& side, const std::string& start, const std::string& why) {
    auto st = look(side, start, "");
    if (!st) return {};
    if (side.stops.contains(start)) return {};
    if (side.stops.beneath(start).empty() || st->type != FileType::directory)
        return grant(start, side.whole, *st, why);
    const std::string part_why = std::string(side.access_word) + ": no " + std::string(side.stop_word) +
                                 " path beneath; part of " + start + ", split around " +
                                 name_points(start, side.stops.beneath(start));
    std::vector<std::string> todo{start};
    while (!todo.empty()) {
        const std::string dir = std::move(todo.back());
        todo.pop_back();
        if (!split_dirs_[side.whole == LandlockGrant::Kind::write].insert(dir).second) continue;  // split already
        splitting_ = dir;
        SBX_TRY(split_one(side, dir, part_why, todo));
    }
    splitting_.clear();
    return {};
}

SBX_INLINE expected<void> Splitter::split_one(const Side& side, const std::string& dir, const std::string& why,
                         std::vector<std::string>& todo) {
    const auto stops = side.stops.beneath(dir);
    const auto& listing = fs_.listing(dir);
    if (!listing) {
        warnings.push_back(Warning{dir, "",
                                   "the weaker sandbox cannot list " + dir + " (" + listing.error().message +
                                       ") to split it around the " + std::string(side.stop_word) + " path" +
                                       (stops.size() == 1 ? " " : "s ") + name_points(dir, stops) +
                                       ", so nothing in or beneath it is " + std::string(side.access_word) +
                                       " unless another rule grants it",
                                   WarningScope::linux_only});
        return {};
    }
    if (side.along)
        SBX_TRY(grant(dir, *side.along, FileStat{FileType::directory},
                      "listable, not readable: holds the " + std::string(side.stop_word) + " " +
                          name_points(dir, stops)));
    std::vector<const FsView::Entry*> entries;
    entries.reserve(listing->size());
    for (const auto& e : *listing) entries.push_back(&e);
    std::sort(entries.begin(), entries.end(), [](const auto* a, const auto* b) { return a->name < b->name; });
    for (const auto* e : entries) {
        const std::string p = child_of(dir, e->name);
        if (side.stops.contains(p)) continue;
        const auto st = e->type ? std::optional<FileStat>(FileStat{*e->type}) : look(side, p, dir);
        if (!st || st->type == FileType::symlink) continue;
        if (st->type == FileType::directory && !side.stops.beneath(p).empty()) todo.push_back(p);
        else SBX_TRY(grant(p, side.whole, *st, why));
    }
    return {};
}

SBX_INLINE std::optional<FileStat> Splitter::look(const Side& side, const std::string& p, const std::string& in) {
    auto st = fs_.lstat(p);
    if (!st) {
        warnings.push_back(Warning{p, "",
                                   "the weaker sandbox cannot look at " + p + " (" + st.error().message +
                                       "), so it is not " + std::string(side.access_word) +
                                       (in.empty() ? std::string() : " as part of " + in),
                                   WarningScope::linux_only});
        return std::nullopt;
    }
    if (!*st || (*st)->type == FileType::symlink) return std::nullopt;
    return **st;
}

SBX_INLINE expected<void> Splitter::grant(const std::string& p, LandlockGrant::Kind kind, const FileStat& st, std::string why) {
    grants.push_back(LandlockGrant{p, kind, st.type == FileType::directory, std::move(why)});
    if (grants.size() <= limit_ + slack_) return {};
    const std::string& where = splitting_.empty() ? p : splitting_;
    return fail(Error(Errc::sandbox_unavailable,
                      "the weaker sandbox needs more than " + std::to_string(limit_) +
                          " Landlock rules: splitting around protected and hidden paths gives a rule to each "
                          "entry of every directory on the way to one, and the limit was reached " +
                          (splitting_.empty() ? "at " : "while splitting ") + where)
                    .in_file(where));
}

SBX_INLINE std::vector<LandlockGrant> tidy(std::vector<LandlockGrant> grants) {
    std::stable_sort(grants.begin(), grants.end(), [](const LandlockGrant& a, const LandlockGrant& b) {
        return std::tie(a.path, a.kind) < std::tie(b.path, b.kind);
    });
    grants.erase(std::unique(grants.begin(), grants.end(),
                             [](const LandlockGrant& a, const LandlockGrant& b) {
                                 return a.path == b.path && a.kind == b.kind;
                             }),
                 grants.end());
    std::vector<std::string> readable, writable;
    for (const auto& g : grants) {
        if (!g.directory) continue;
        if (g.kind == LandlockGrant::Kind::read) readable.push_back(g.path);
        if (g.kind == LandlockGrant::Kind::write) writable.push_back(g.path);
    }
    const PathPoints read_dirs(std::move(readable)), write_dirs(std::move(writable));
    std::vector<LandlockGrant> kept;
    kept.reserve(grants.size());
    for (auto& g : grants) {
        // A device's grant is of its own kind: no directory's covers it.
        if (g.kind == LandlockGrant::Kind::device || g.kind == LandlockGrant::Kind::terminal) {
            kept.push_back(std::move(g));
            continue;
        }
        const auto& covering = g.kind == LandlockGrant::Kind::write ? write_dirs : read_dirs;
        if (g.path != "/" && covering.at_or_under_one(paths::parent(g.path))) continue;
        kept.push_back(std::move(g));
    }
    return kept;
}

SBX_INLINE std::vector<std::string> protected_points(const Plan& plan) {
    std::vector<std::string> out;
    for (const auto& m : plan.filesystem.mounts)
        if (m.kind != MountKind::bind && m.kind != MountKind::pin) out.push_back(m.path);
    for (const auto& ph : plan.filesystem.placeholders) out.push_back(ph.path);
    for (const auto& n : plan.filesystem.neutralise) out.push_back(n.path);
    // A name no entry has: the directory is split, so that nothing new is made
    // in it but through the broker, which refuses the pattern's names.
    for (const auto& n : plan.filesystem.neutralise_new) out.push_back(paths::join(n.dir, n.pattern));
    return out;
}

}  // namespace sbx::linux_sandbox::detail

namespace sbx::linux_sandbox {

SBX_INLINE expected<WeakerFsRules> weaker_fs_rules(const Plan& plan, const FsView& fs,
                                               std::size_t max_grants) {
    using Kind = LandlockGrant::Kind;
    WeakerFsRules out;
    if (!plan.filesystem.isolated) {
        const std::string why = "filesystem.disabled: the command can read and write everything you can";
        out.grants = {LandlockGrant{"/", Kind::read, true, why}, LandlockGrant{"/", Kind::write, true, why}};
        return out;
    }
    std::vector<const Mount*> writable, reopened;
    std::vector<std::string> no_read, masked_dirs;
    for (const auto& m : plan.filesystem.mounts) {
        if (m.kind == MountKind::bind) writable.push_back(&m);
        if (m.kind == MountKind::mask_dir) masked_dirs.push_back(m.path);
        if (m.kind == MountKind::mask_dir || m.kind == MountKind::mask_file) no_read.push_back(m.path);
    }
    no_read.emplace_back(kHostDevices);
    const detail::PathPoints nw(detail::protected_points(plan)), nr(std::move(no_read)), masks(std::move(masked_dirs));
    for (const auto& m : plan.filesystem.mounts)
        if ((m.kind == MountKind::bind || m.kind == MountKind::ro_bind) && m.path != "/" &&
            masks.at_or_under_one(paths::parent(m.path)))
            reopened.push_back(&m);

    // Grants beneath one that covers them (a writable place inside another) are
    // made, then dropped: at most one for each starting point.
    const std::size_t slack = writable.size() + reopened.size() + 1;
    const detail::Side write_side{nw, Kind::write, std::nullopt, "protected", "writable"};
    const detail::Side read_side{nr, Kind::read, Kind::list, "hidden", "readable"};
    auto run = [&](const CachedFs& cached) -> expected<void> {
        detail::Splitter s(cached, max_grants, slack);
        for (const auto* m : writable) SBX_TRY(s.split(write_side, m->path, "writable: " + m->why));
        SBX_TRY(s.split(read_side, "/", "readable: no hidden path beneath"));
        for (const auto* m : reopened) SBX_TRY(s.split(read_side, m->path, "readable: " + m->why));
        for (const auto& d : kWeakerDevices) {
            const std::string path(d.path);
            auto st = cached.lstat(path);
            if (!st || !*st || (*st)->type == FileType::symlink || (*st)->type == FileType::directory) continue;
            s.grants.push_back(LandlockGrant{path, d.kind, false, std::string(d.why)});
        }
        out.grants = detail::tidy(std::move(s.grants));
        out.warnings = std::move(s.warnings);
        return {};
    };
    SBX_TRY(with_cache(fs, run));
    if (out.grants.size() > max_grants)
        return fail(Error(Errc::sandbox_unavailable, "the weaker sandbox needs " + std::to_string(out.grants.size()) +
                                                         " Landlock rules, more than the limit of " +
                                                         std::to_string(max_grants) +
                                                         ": splitting around protected and hidden paths gives a "
                                                         "rule to each entry of every directory on the way to one"));
    return out;
}

}  // namespace sbx::linux_sandbox
#endif
