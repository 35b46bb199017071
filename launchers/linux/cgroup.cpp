// launchers/linux/cgroup.cpp - a sandbox's own cgroup v2 (cgroup.hpp).
#include "linux/cgroup.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <set>
#include <string>
#include <utility>

#include "sbx/io/fs_view_disk.hpp"

namespace sbx::linux_sandbox {

using launcher::Fd;

namespace {

// The most this code reads of one control file: they hold a few lines, and
// cgroup.procs one line for each process.
constexpr std::size_t kControlMax = std::size_t{1} << 20;

// How many times kill_all reads cgroup.procs again, where it has no cgroup.kill,
// before it gives up on processes that keep appearing.
constexpr int kKillRounds = 16;

// The lines of `text` without their newlines; a last line without one too.
std::vector<std::string_view> lines_of(std::string_view text) {
    std::vector<std::string_view> out;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        out.push_back(text.substr(0, nl));
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    }
    return out;
}

// The fields of `line` between single spaces.
std::vector<std::string_view> fields_of(std::string_view line) {
    std::vector<std::string_view> out;
    for (std::size_t at = 0; at <= line.size();) {
        const auto space = std::min(line.find(' ', at), line.size());
        out.push_back(line.substr(at, space - at));
        at = space + 1;
    }
    return out;
}

// A field of mountinfo with its octal escapes undone: the kernel writes a
// space, tab, newline and backslash as \040, \011, \012 and \134. A backslash
// not followed by three octal digits that make a byte is kept as it is.
std::string unescape_mountinfo(std::string_view field) {
    const auto octal = [](char c) { return c >= '0' && c <= '7'; };
    std::string out;
    for (std::size_t i = 0; i < field.size(); ++i) {
        if (field[i] == '\\' && i + 3 < field.size() && field[i + 1] >= '0' && field[i + 1] <= '3' &&
            octal(field[i + 2]) && octal(field[i + 3])) {
            out += static_cast<char>((field[i + 1] - '0') * 64 + (field[i + 2] - '0') * 8 + (field[i + 3] - '0'));
            i += 3;
        } else {
            out += field[i];
        }
    }
    return out;
}

// One mount of the cgroup v2 hierarchy: the cgroup it shows at its mount
// point (as this process's cgroup namespace names it), and that point.
struct Cgroup2Mount {
    std::string root;
    std::string point;
};

// The cgroup2 mounts in mountinfo's text, in its order. A line is
// "ID PARENT MAJ:MIN ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE OPTIONS";
// spaces inside a field are escaped, so " - " is only ever the separator.
std::vector<Cgroup2Mount> cgroup2_mounts(std::string_view mountinfo) {
    std::vector<Cgroup2Mount> out;
    for (const auto line : lines_of(mountinfo)) {
        const auto dash = line.find(" - ");
        if (dash == std::string_view::npos) continue;
        const auto after = line.substr(dash + 3);
        if (after.substr(0, after.find(' ')) != "cgroup2") continue;
        const auto fields = fields_of(line.substr(0, dash));
        if (fields.size() < 6) continue;
        out.push_back({unescape_mountinfo(fields[3]), unescape_mountinfo(fields[4])});
    }
    return out;
}

// The path of this process's cgroup in the v2 hierarchy: the "0::PATH" line
// of /proc/self/cgroup's text. nullopt where there is none.
std::optional<std::string_view> unified_cgroup(std::string_view self_cgroup) {
    for (const auto line : lines_of(self_cgroup))
        if (line.substr(0, 3) == "0::") return line.substr(3);
    return std::nullopt;
}

// Whether `path` is absolute with no empty, "." or ".." component: "/" and
// "/a/b", not "a", "/a/", "/a//b" nor "/../b" (how /proc/self/cgroup names a
// cgroup outside this process's cgroup namespace).
bool is_clean_cgroup_path(std::string_view path) {
    if (path.empty() || path[0] != '/') return false;
    if (path == "/") return true;
    std::string_view rest = path.substr(1);
    for (;;) {
        const auto slash = rest.find('/');
        const auto part = rest.substr(0, slash);
        if (part.empty() || part == "." || part == "..") return false;
        if (slash == std::string_view::npos) return true;
        rest = rest.substr(slash + 1);
    }
}

// The cgroup that holds `path` ("/" holds "/a"); `path` is clean and not "/".
std::string_view parent_of(std::string_view path) {
    const auto slash = path.rfind('/');
    return slash == 0 ? std::string_view("/") : path.substr(0, slash);
}

// `path` as seen below the cgroup `root`: "" for `root` itself, else "/REST";
// nullopt when it is not at or below `root`.
std::optional<std::string_view> below(std::string_view path, std::string_view root) {
    if (root == "/") return path == "/" ? std::string_view() : path;
    if (path == root) return std::string_view();
    if (path.size() > root.size() && path.substr(0, root.size()) == root && path[root.size()] == '/')
        return path.substr(root.size());
    return std::nullopt;
}

// The directory where this process reaches the cgroup `path` (clean): below
// the first cgroup2 mount that shows it. nullopt where none does.
std::optional<std::string> directory_of(const std::vector<Cgroup2Mount>& mounts, std::string_view path) {
    for (const auto& m : mounts) {
        if (!is_clean_cgroup_path(m.root) || m.point.empty() || m.point[0] != '/') continue;
        const auto rest = below(path, m.root);
        if (!rest) continue;
        if (rest->empty()) return m.point;
        return m.point == "/" ? std::string(*rest) : m.point + std::string(*rest);
    }
    return std::nullopt;
}

// Whether the whitespace-separated list `controllers` holds `name`.
bool lists(std::string_view controllers, std::string_view name) {
    std::size_t at = 0;
    while (at < controllers.size()) {
        const auto start = controllers.find_first_not_of(" \t\n", at);
        if (start == std::string_view::npos) return false;
        const auto end = std::min(controllers.find_first_of(" \t\n", start), controllers.size());
        if (controllers.substr(start, end - start) == name) return true;
        at = end;
    }
    return false;
}

CgroupParent none(std::string why) {
    CgroupParent out;
    out.why = std::move(why);
    return out;
}

// The checks on the candidate `dir`, through `tree`: its children get memory
// and pids, and this process may make a cgroup there and move processes below it.
CgroupParent check_parent(const std::string& dir, const CgroupTreeView& tree) {
    const std::string control = dir + "/cgroup.subtree_control";
    const auto controllers = tree.read_text(control);
    if (!controllers) return none("cannot read " + control);
    const bool memory = lists(*controllers, "memory"), pids = lists(*controllers, "pids");
    if (!memory || !pids) {
        const std::string missing = !memory && !pids ? "memory and pids controllers" : !memory ? "memory controller" : "pids controller";
        return none(dir + " does not hand the " + missing + " to its children (its cgroup.subtree_control)");
    }
    if (!tree.writable(dir)) return none(dir + " is not writable by this user, so no cgroup can be made in it");
    if (!tree.writable(dir + "/cgroup.procs"))
        return none(dir + "/cgroup.procs is not writable by this user, so no process can be moved below it");
    if (!tree.delegated || !tree.delegated(dir))
        return none(dir + " is not marked as delegated (the user.delegate attribute systemd sets with Delegate=yes): "
                          "its service manager keeps it, and sbx makes no cgroup there (sbx-linux --cgroup-parent "
                          "names one that is yours)");
    CgroupParent out;
    out.dir = dir;
    out.why = dir + " is delegated, hands the memory and pids controllers to its children, and this user may make "
                    "cgroups in it";
    out.memory = out.pids = true;
    return out;
}

// Writes `value` to the control file `file` of the directory open at `dir`,
// in one write (cgroupfs takes a value whole or refuses it), creating nothing
// and following no symbolic link. 0, or the errno.
int write_control(int dir, std::string_view file, std::string_view value) {
    const Fd fd(::openat(dir, std::string(file).c_str(), O_WRONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.ok()) return errno;
    ssize_t n;
    while ((n = ::write(fd.get(), value.data(), value.size())) < 0 && errno == EINTR) {
    }
    if (n < 0) return errno;
    return n == static_cast<ssize_t>(value.size()) ? 0 : EIO;
}

// Reads the control file `file` of the directory open at `dir` into `text`,
// following no symbolic link. 0, or the errno (ENOENT: there is no such file),
// with `text` left empty.
int read_control(int dir, std::string_view file, std::string& text) {
    text.clear();
    const Fd fd(::openat(dir, std::string(file).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.ok()) return errno;
    std::array<char, 4096> buf;
    for (;;) {
        const ssize_t n = ::read(fd.get(), buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) return 0;
        if (n < 0 || text.size() + static_cast<std::size_t>(n) > kControlMax) {
            const int err = n < 0 ? errno : EFBIG;
            text.clear();
            return err;
        }
        text.append(buf.data(), static_cast<std::size_t>(n));
    }
}

// An error about the control file `file` of the cgroup at `dir_path`.
sbx::Error control_error(const std::string& dir_path, std::string_view file, const std::string& what, int err) {
    return sbx::Error(sbx::Errc::io_error, what + ": " + std::strerror(err)).in_file(dir_path + "/" + std::string(file));
}

// An error about the cgroup's directory `path` itself.
sbx::Error directory_error(const std::string& path, const std::string& what, int err) {
    return sbx::Error(sbx::Errc::io_error, what + ": " + std::strerror(err)).in_file(path);
}

// The whole decimal number `text`, with nothing around it; nullopt else, and
// where it does not fit.
template <class Int>
std::optional<Int> whole_number(std::string_view text) {
    Int v{};
    const char* end = text.data() + text.size();
    const auto [stop, ec] = std::from_chars(text.data(), end, v);
    if (text.empty() || ec != std::errc() || stop != end) return std::nullopt;
    return v;
}

// The count on the last well-formed "KEY COUNT" line of an events file's text
// for `key`; 0 where there is none.
std::uint64_t count_of(std::string_view text, std::string_view key) {
    std::uint64_t out = 0;
    for (const auto line : lines_of(text)) {
        const auto space = line.find(' ');
        if (space == std::string_view::npos || line.substr(0, space) != key) continue;
        if (const auto n = whole_number<std::uint64_t>(line.substr(space + 1))) out = *n;
    }
    return out;
}

// The process numbers cgroup.procs lists, one a line; other lines are left out.
std::vector<pid_t> pids_of(std::string_view procs) {
    std::vector<pid_t> out;
    for (const auto line : lines_of(procs))
        if (const auto pid = whole_number<pid_t>(line); pid && *pid > 0) out.push_back(*pid);
    return out;
}

// Whether `name` is one path component, which mkdirat makes in its parent.
bool is_one_component(const std::string& name) {
    return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos;
}

}  // namespace

CgroupTreeView host_cgroup_tree() {
    return CgroupTreeView{
        [](const std::string& path) -> std::optional<std::string> {
            auto text = sbx::read_small_file(path, kControlMax);
            if (!text || !*text) return std::nullopt;
            return std::move(**text);
        },
        [](const std::string& path) { return ::access(path.c_str(), W_OK) == 0; },
        [](const std::string& path) {
            for (const char* name : {"trusted.delegate", "user.delegate"}) {
                char value[2] = {};
                if (::getxattr(path.c_str(), name, value, sizeof value) == 1 && value[0] == '1') return true;
            }
            return false;
        },
    };
}

// This process's own cgroup, as its cgroup namespace names it, checked; or
// why it cannot be used.
struct OwnCgroup {
    std::string path;
    std::string why;
};
OwnCgroup own_cgroup(const std::vector<Cgroup2Mount>& mounts, std::string_view self_cgroup) {
    const auto own = unified_cgroup(self_cgroup);
    if (mounts.empty() || !own) return {{}, "no cgroup v2 hierarchy here"};
    const std::string shown(*own);
    if (shown.ends_with(" (deleted)")) return {{}, "this process's cgroup was removed"};
    if (!is_clean_cgroup_path(shown))
        return {{}, "this process's cgroup (" + shown + ") lies outside what its cgroup namespace shows"};
    return {shown, {}};
}

CgroupParent find_cgroup_parent(std::string_view mountinfo, std::string_view self_cgroup, const CgroupTreeView& tree) {
    const auto mounts = cgroup2_mounts(mountinfo);
    const auto own = own_cgroup(mounts, self_cgroup);
    if (own.path.empty()) return none(own.why);
    if (own.path == "/")
        return none("this process is in the root cgroup of the cgroup v2 hierarchy, which has no parent to make "
                    "the sandbox's cgroup in");
    const std::string parent(parent_of(own.path));
    const auto dir = directory_of(mounts, parent);
    if (!dir) return none("no cgroup v2 mount here shows " + parent + ", the parent of this process's cgroup");
    const auto own_dir = directory_of(mounts, own.path);
    if (!own_dir) return none("no cgroup v2 mount here shows this process's cgroup, " + own.path);
    auto out = check_parent(*dir, tree);
    if (out.found()) out.own = *own_dir;
    return out;
}

CgroupParent given_cgroup_parent(const std::string& dir, std::string_view mountinfo, std::string_view self_cgroup,
                                 const CgroupTreeView& tree) {
    const auto mounts = cgroup2_mounts(mountinfo);
    if (!is_clean_cgroup_path(dir)) return none(dir + " is not an absolute path without . or .. in it");
    const bool on_cgroupfs = std::any_of(mounts.begin(), mounts.end(), [&](const Cgroup2Mount& m) {
        const auto rest = below(dir, m.point);
        return rest && !rest->empty();
    });
    if (!on_cgroupfs) return none(dir + " lies below no cgroup v2 mount (other than the mount point itself)");
    const auto own = own_cgroup(mounts, self_cgroup);
    if (own.path.empty()) return none(own.why);
    const auto own_dir = directory_of(mounts, own.path);
    if (!own_dir) return none("no cgroup v2 mount here shows this process's cgroup, " + own.path);
    if (!tree.writable(dir)) return none(dir + " is not writable by this user, so no cgroup can be made in it");
    if (!tree.writable(dir + "/cgroup.procs"))
        return none(dir + "/cgroup.procs is not writable by this user, so no process can be moved below it");
    const auto controllers = tree.read_text(dir + "/cgroup.subtree_control");
    CgroupParent out;
    out.dir = dir;
    out.why = dir + " was named for the sandboxes' cgroups";
    out.own = *own_dir;
    out.memory = controllers && lists(*controllers, "memory");
    out.pids = controllers && lists(*controllers, "pids");
    return out;
}

sbx::expected<void> move_self(const std::string& dir) {
    const Fd at(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!at.ok()) return sbx::fail(directory_error(dir, "cannot open it", errno));
    if (const int err = write_control(at.get(), "cgroup.procs", std::to_string(::getpid())); err != 0)
        return sbx::fail(control_error(dir, "cgroup.procs", "cannot move this process into it", err));
    return {};
}

std::vector<CgroupWrite> cgroup_writes(const CgroupLimits& limits) {
    std::vector<CgroupWrite> out;
    if (limits.memory_bytes)
        out.push_back({"memory.max", std::to_string(*limits.memory_bytes), WhereMissing::fail,
                       "the memory limit: past it the kernel reclaims, then kills a process of the cgroup"});
    if (limits.processes)
        out.push_back({"pids.max", std::to_string(*limits.processes), WhereMissing::fail,
                       "the processes limit: a fork past it fails"});
    if (limits.memory_bytes)
        out.push_back({"memory.swap.max", "0", WhereMissing::skip,
                       "no swap, so that swapping does not stretch the memory limit; missing where swap is not "
                       "accounted"});
    return out;
}

sbx::expected<void> apply_cgroup_writes(int dir, const std::string& dir_path, std::span<const CgroupWrite> writes) {
    for (const auto& w : writes) {
        const int err = write_control(dir, w.file, w.value);
        if (err == ENOENT && w.missing == WhereMissing::skip) continue;
        if (err != 0) return sbx::fail(control_error(dir_path, w.file, "cannot write " + w.value + " to it", err));
    }
    return {};
}

CgroupEvents parse_cgroup_events(std::string_view memory_events, std::string_view pids_events) {
    CgroupEvents out;
    out.oom_kills = count_of(memory_events, "oom_kill");
    out.memory_max_hits = count_of(memory_events, "max");
    out.pids_max_hits = count_of(pids_events, "max");
    return out;
}

sbx::expected<std::string> sandbox_cgroup_name() {
    std::array<unsigned char, 8> bytes{};
    std::size_t have = 0;
    while (have < bytes.size()) {
        const ssize_t got = ::getrandom(bytes.data() + have, bytes.size() - have, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0)
            return sbx::fail(sbx::Errc::io_error, std::string("cannot name the sandbox's cgroup: getrandom: ") +
                                                      std::strerror(errno));
        have += static_cast<std::size_t>(got);
    }
    constexpr char kHex[] = "0123456789abcdef";
    std::string out = "sbx-" + std::to_string(::getpid()) + "-";
    for (const unsigned char b : bytes) {
        out += kHex[b >> 4];
        out += kHex[b & 0xf];
    }
    return out;
}

sbx::expected<SandboxCgroup> SandboxCgroup::make(const std::string& parent, const std::string& name,
                                                 const CgroupLimits& limits) {
    if (!is_one_component(name))
        return sbx::fail(sbx::Errc::invalid_argument, "a cgroup's name must be one path component, not \"" + name + "\"");
    const std::string path = parent + "/" + name;
    Fd up(::open(parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!up.ok()) return sbx::fail(directory_error(parent, "cannot open it", errno));
    if (::mkdirat(up.get(), name.c_str(), 0755) != 0) return sbx::fail(directory_error(path, "cannot make it", errno));
    Fd dir(::openat(up.get(), name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir.ok()) {
        const int err = errno;
        (void)::unlinkat(up.get(), name.c_str(), AT_REMOVEDIR);
        return sbx::fail(directory_error(path, "cannot open it once made", err));
    }
    if (auto written = apply_cgroup_writes(dir.get(), path, cgroup_writes(limits)); !written) {
        // Empty of processes, so on cgroupfs it goes with its control files.
        (void)::unlinkat(up.get(), name.c_str(), AT_REMOVEDIR);
        return sbx::fail(std::move(written.error()));
    }
    return SandboxCgroup(std::move(up), std::move(dir), name, path);
}

sbx::expected<void> SandboxCgroup::enter(pid_t pid) const {
    if (const int err = write_control(dir_.get(), "cgroup.procs", std::to_string(pid)); err != 0)
        return sbx::fail(
            control_error(path_, "cgroup.procs", "cannot move process " + std::to_string(pid) + " into it", err));
    return {};
}

sbx::expected<void> SandboxCgroup::limit(const CgroupLimits& limits) const {
    return apply_cgroup_writes(dir_.get(), path_, cgroup_writes(limits));
}

CgroupEvents SandboxCgroup::events() const {
    std::string memory, pids;
    (void)read_control(dir_.get(), "memory.events", memory);
    (void)read_control(dir_.get(), "pids.events", pids);
    return parse_cgroup_events(memory, pids);
}

bool SandboxCgroup::has_processes() const {
    std::string procs;
    return read_control(dir_.get(), "cgroup.procs", procs) != 0 || !pids_of(procs).empty();
}

sbx::expected<void> SandboxCgroup::kill_all() const {
    const int err = write_control(dir_.get(), "cgroup.kill", "1");
    if (err == 0) return {};
    if (err != ENOENT) return sbx::fail(control_error(path_, "cgroup.kill", "cannot write 1 to it", err));
    return kill_each();
}

// Before Linux 5.14. Frozen first where the kernel can (Linux 5.2): a frozen
// process neither forks nor exits of its own, so no number read from
// cgroup.procs passes to another process before its SIGKILL, which ends a
// frozen process all the same. Unfrozen, a number is sent SIGKILL once, and
// the rounds go on while they find new ones.
sbx::expected<void> SandboxCgroup::kill_each() const {
    (void)write_control(dir_.get(), "cgroup.freeze", "1");
    std::set<pid_t> killed;
    for (int round = 0; round < kKillRounds; ++round) {
        std::string procs;
        if (const int err = read_control(dir_.get(), "cgroup.procs", procs); err != 0)
            return sbx::fail(control_error(path_, "cgroup.procs", "cannot read it", err));
        bool fresh = false;
        for (const pid_t pid : pids_of(procs))
            if (killed.insert(pid).second) {
                (void)::kill(pid, SIGKILL);
                fresh = true;
            }
        if (!fresh) return {};
    }
    return sbx::fail(sbx::Error(sbx::Errc::io_error, "processes kept appearing in it after " +
                                                         std::to_string(kKillRounds) + " rounds of SIGKILL")
                         .in_file(path_ + "/cgroup.procs"));
}

sbx::expected<void> SandboxCgroup::remove() {
    struct stat held {}, now {};
    if (::fstat(dir_.get(), &held) != 0) return sbx::fail(directory_error(path_, "cannot look at it", errno));
    if (::fstatat(parent_.get(), name_.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0)
        return sbx::fail(directory_error(path_, "cannot find it", errno));
    if (now.st_dev != held.st_dev || now.st_ino != held.st_ino)
        return sbx::fail(sbx::Error(sbx::Errc::io_error, "another directory took its name; both are left as they are")
                             .in_file(path_));
    if (::unlinkat(parent_.get(), name_.c_str(), AT_REMOVEDIR) != 0)
        return sbx::fail(directory_error(path_, "cannot remove it", errno));
    dir_.reset();
    return {};
}

}  // namespace sbx::linux_sandbox
