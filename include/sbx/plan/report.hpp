// sbx/plan/report.hpp - the block of refusals appended to a command's standard
// error, and the forged blocks a command prints itself.
//
// After a sandboxed command, `sbx run` appends
//   <sandbox_violations>
//   deny network-outbound example.com:443 (not on the allow list, ...)
//   </sandbox_violations>
// to its standard error. A command could print such a block itself to mislead
// whoever reads the output (a model, say), so the launcher passes the command's
// output through TagNeutralizer (output_filter.hpp), which writes the closing
// `>` of any `<sandbox_violations>` or `</sandbox_violations>` the command
// writes as `&gt;`: only the real block then reads as one.
//
// File refusals have no log on Linux: find_file_refusal() reads them from a line
// the command wrote to standard error ("touch: cannot touch '/r/.bashrc':
// Read-only file system"), and reports one only when the plan's own mounts
// refuse that path. They are advisory: a command can hide one or print one that
// never happened; the access is refused either way.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sbx/core/ascii.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/plan/output_filter.hpp"
#include "sbx/settings/home_env_files.hpp"
#include "sbx/settings/limits.hpp"

namespace sbx {

// What a line of the block says after its reason: "; to allow it: SETTING", or
// nothing when no setting opens the refusal.
SBX_INLINE std::string allow_sentence(std::string_view setting);

// One line of the block, without the newline: "deny network-outbound HOST:PORT
// (REASON)". The launcher adds allow_sentence() for the setting that would allow it.
SBX_INLINE std::string network_violation_line(std::string_view host, unsigned port, std::string_view reason);

// The block for these lines; empty when there are none. A line holding a tag or
// a newline of its own (a reason is the launcher's, but its host came from the
// command) is neutralised too. The same line twice or more is said once, where
// it first came, with how many times: "... (3 times)". `times[i]`, when given,
// is how many times lines[i] happened (1 without).
SBX_INLINE std::string violations_block(const std::vector<std::string>& lines, const std::vector<std::size_t>& times = {});

// What the plan makes of a path inside the sandbox.
struct PlannedAccess {
    enum class Kind {
        writable,   // a writable bind or pin covers it (or `/` without isolation)
        read_only,  // a read-only bind, or `/` itself
        hidden,     // a mask covers it
        system,     // /dev or /proc: bubblewrap's own, not the plan's
    };
    Kind kind = Kind::read_only;
    const Mount* mount = nullptr;  // the plan's mount that decides; nullptr: the base `/`, or `pattern`
    // With FsPlan::names_refused: the neutraliseNew pattern a new name matches.
    const NeutraliseNewOp* pattern = nullptr;
};

// The last of the plan's mounts at or above `path` decides (mounts are carried
// out shallow before deep, and a later one over the same path wins).
SBX_INLINE PlannedAccess planned_access(const FsPlan& plan, std::string_view path);

// `plan` as Seatbelt and the weaker sandbox carry it out, for reading
// refusals: the names the Linux plan leaves writable and renames after the run
// (filesystem.neutralise) they refuse by their paths while the command runs, as
// read-only mounts would, and the new names a neutraliseNew pattern matches.
SBX_INLINE FsPlan with_names_refused(FsPlan plan);

// A refusal the command reported: the path as it wrote it, the same made
// absolute, and its whole line; what the plan makes of the path, and the rule
// of the mount that decides (empty: the read-only `/`, outside every writable
// place).
struct FileRefusal {
    std::string written;
    std::string path;
    std::string message;
    std::size_t times = 1;  // how often the command printed a refusal of this path (StderrScanner)
    PlannedAccess::Kind access = PlannedAccess::Kind::read_only;
    std::string rule;
};

// The settings that would allow what a plan refuses, in the words of the file its
// policy came from (settings, or an agent file), for the lines of the block.
// Empty: no setting opens it.
struct AllowHints {
    std::string hosts;  // a host no rule lets through
    std::string local;  // a loopback, private or own address, or a localhost name
    std::string call;   // a host outside the hosts the call lists
    std::string write;  // a path outside every writable place
    std::string read;   // a path a read deny hides
    std::string env;    // a .env file a read deny hides: how to pass a variable it holds
    std::string sockets;  // a Unix socket by a path no setting opens

    bool operator==(const AllowHints&) const = default;
};

enum class SettingsWords { settings, agent_file };

SBX_INLINE AllowHints allow_hints(SettingsWords w);

// What follows a file refusal's message: the rule that refused it, and the
// setting that would allow it, if one can. Protected paths (and their
// placeholders) are read-only whatever the settings say.
SBX_INLINE std::string file_refusal_hint(const FileRefusal& r, const AllowHints& hints);

// One line of "deny file-access PATH (MESSAGE)"; the launcher adds
// file_refusal_hint(). The message is the command's: its control characters
// become `?` and it is cut at 300 bytes.
SBX_INLINE std::string file_violation_line(const FileRefusal& r);

namespace detail {

SBX_INLINE std::size_t find_folded(std::string_view hay, std::string_view needle);

// The quoted strings of `s`, in order: '...', "...", `...', and the typographic
// quotes coreutils print in UTF-8 locales.
SBX_INLINE std::vector<std::string_view> quoted(std::string_view s);

SBX_INLINE std::string_view trim(std::string_view s);

}  // namespace detail

// The refusal `line` reports, when it names a path the plan refuses in the way
// the message says. "Read-only file system" counts for any path the plan keeps
// from writes (a protected path, or anything outside the writable ones);
// "Permission denied" and "Operation not permitted", which ordinary file modes
// cause too, and "Device or resource busy" (a rename over a mount point, as git
// writes its config and .gitmodules), which other mounts cause too, only for a
// path one of the plan's own mounts protects or hides.
// Relative paths are taken from `cwd`, where the command started. The path is
// the one nearest before the message (`prog: PATH: message`, `cannot touch
// 'PATH': message`), else the first quoted one after it (`Permission denied:
// 'PATH'`).
SBX_INLINE std::optional<FileRefusal> find_file_refusal(std::string_view line, const FsPlan& plan, std::string_view cwd);

// Whether `line` holds one of the messages find_file_refusal() reads, in any
// case: what a reader without the plan keeps for it (a session's client).
SBX_INLINE bool may_be_file_refusal(std::string_view line);

// The limit a line of the command's standard error says it met, by what
// shells, runtimes and the C library print when a fork or an allocation fails:
// Limit::processes for "fork: retry: Resource temporarily unavailable" (bash),
// "unable to create native thread" (Java), "failed to create new OS thread"
// (Go), "spawn EAGAIN" (Node); Limit::memory for "Cannot allocate memory",
// MemoryError (Python), std::bad_alloc, "out of memory". Either can have
// another cause (the caller's own ulimit, the machine's memory), which the
// line sbx writes leaves open. nullopt for any other line.
SBX_INLINE std::optional<Limit> limit_sign(std::string_view line);

// Reads the command's standard error as it comes, a line at a time, and keeps
// the file refusals of find_file_refusal(), each path once with the first
// message and how many times it was refused, and the first line limit_sign()
// reads for each limit. A line longer than 4 KiB is not read (no tool prints
// one that long).
class StderrScanner {
public:
    StderrScanner(const FsPlan& plan, std::string cwd, std::size_t max_refusals = 100)
        : plan_(plan), cwd_(std::move(cwd)), max_(max_refusals) {}

    void feed(std::string_view chunk);

    // The end of the stream: a last line without a newline counts too.
    void finish() { end_line(); }

    const std::vector<FileRefusal>& refusals() const { return refusals_; }

    // The first line that said `l` was met (limit_sign), trimmed, its control
    // characters `?`, at most 160 bytes of it; empty: none.
    const std::string& limit_sign_line(Limit l) const { return signs_[static_cast<std::size_t>(l)]; }

private:
    static constexpr std::size_t kMaxLine = 4096;

    void end_line();

    const FsPlan& plan_;
    std::string cwd_;
    std::size_t max_;
    std::string line_;
    bool too_long_ = false;
    std::map<std::string, std::size_t> seen_;  // path -> its place in refusals_
    std::vector<FileRefusal> refusals_;
    std::array<std::string, kLimitCount> signs_;
};

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_PLAN)

namespace sbx {

SBX_INLINE std::string allow_sentence(std::string_view setting) {
    return setting.empty() ? std::string() : "; to allow it: " + std::string(setting);
}

SBX_INLINE std::string network_violation_line(std::string_view host, unsigned port, std::string_view reason) {
    const bool v6 = host.find(':') != std::string_view::npos;
    std::string out = "deny network-outbound ";
    if (v6) out += '[';
    out += host;
    if (v6) out += ']';
    out += ':' + std::to_string(port) + " (" + std::string(reason) + ")";
    return out;
}

SBX_INLINE std::string violations_block(const std::vector<std::string>& lines, const std::vector<std::size_t>& times) {
    if (lines.empty()) return {};
    std::vector<std::pair<std::string, std::size_t>> said;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        TagNeutralizer n;
        std::string safe = n.feed(lines[i]) + n.finish();
        for (auto& c : safe)
            if (c == '\n' || c == '\r') c = ' ';
        const std::size_t count = i < times.size() ? times[i] : 1;
        auto same = std::find_if(said.begin(), said.end(), [&](const auto& s) { return s.first == safe; });
        if (same != said.end()) same->second += count;
        else said.emplace_back(std::move(safe), count);
    }
    std::string out = "<sandbox_violations>\n";
    for (const auto& [line, count] : said)
        out += line + (count > 1 ? " (" + std::to_string(count) + " times)" : std::string()) + "\n";
    return out + "</sandbox_violations>\n";
}

SBX_INLINE PlannedAccess planned_access(const FsPlan& plan, std::string_view path) {
    using K = PlannedAccess::Kind;
    if (paths::at_or_under(path, "/dev") || paths::at_or_under(path, "/proc")) return {K::system, nullptr};
    PlannedAccess out{plan.isolated ? K::read_only : K::writable, nullptr};
    for (const auto& m : plan.mounts) {
        if (!paths::at_or_under(path, m.path)) continue;
        out.mount = &m;
        switch (m.kind) {
            case MountKind::bind:
            case MountKind::pin: out.kind = K::writable; break;
            case MountKind::ro_bind:
            case MountKind::ro_link: out.kind = K::read_only; break;
            case MountKind::mask_dir:
            case MountKind::mask_file: out.kind = K::hidden; break;
        }
    }
    if (out.kind == K::writable && plan.names_refused)
        for (const auto& op : plan.neutralise_new)
            if (op.matches(path)) return {K::read_only, nullptr, &op};
    return out;
}

SBX_INLINE FsPlan with_names_refused(FsPlan plan) {
    for (const auto& n : plan.neutralise)
        plan.mounts.push_back(Mount{MountKind::ro_bind, n.path, n.path, {}, "protected: " + n.why});
    plan.names_refused = true;
    return plan;
}

SBX_INLINE AllowHints allow_hints(SettingsWords w) {
    if (w == SettingsWords::agent_file)
        // The agent file's built-in denies and its files.deny have no key that
        // re-opens them: the rule the line names is the one to change.
        return {"network.hosts in the agent file", "network.local in the agent file", "--allow-host",
                "files.write in the agent file", "",
                "env in the agent file, which passes the variable it names without the file",
                "network.sockets in the agent file, naming the path"};
    return {"network.allowedDomains",
            "network.allowedDomains naming the address or localhost with its port (127.0.0.1:3000), or "
            "network.allowLocalBinding for loopback; these are for this machine's servers: under bubblewrap a server "
            "the command starts is reached on the sandbox's own loopback without the proxy (NO_PROXY), and a port "
            "allowed here is taken there by its forward",
            "--allow-host", "filesystem.allowWrite", "filesystem.allowRead naming the path", "",
            "network.allowUnixSockets naming the path (network.allowAllUnixSockets opens every one)"};
}

SBX_INLINE std::string file_refusal_hint(const FileRefusal& r, const AllowHints& hints) {
    using K = PlannedAccess::Kind;
    if (r.access == K::hidden) {
        const auto comps = paths::components(r.path);
        if (!hints.env.empty() && !comps.empty() && is_env_file_name(comps.back()))
            return "; " + r.rule + "; to pass a variable it holds: " + hints.env;
        return "; " + r.rule + allow_sentence(hints.read);
    }
    if (r.rule.empty()) return "; outside every writable place" + allow_sentence(hints.write);
    if (r.rule.rfind("protected: ", 0) == 0 || r.rule.rfind("placeholder: ", 0) == 0)
        return "; " + r.rule + "; no setting makes it writable";
    return "; " + r.rule;
}

SBX_INLINE std::string file_violation_line(const FileRefusal& r) {
    std::size_t cut = r.message.size();
    if (cut > 300) {
        cut = 300;
        while (cut > 0 && (static_cast<unsigned char>(r.message[cut]) & 0xC0) == 0x80) --cut;  // not inside a character
    }
    const std::string message = replace_controls(r.message.substr(0, cut), '?') + (cut < r.message.size() ? "..." : "");
    return "deny file-access " + r.written + " (" + message + ")";
}

}  // namespace sbx

namespace sbx::detail {

SBX_INLINE std::size_t find_folded(std::string_view hay, std::string_view needle) {
    if (needle.size() > hay.size()) return std::string_view::npos;
    for (std::size_t i = 0; i + needle.size() <= hay.size(); ++i) {
        std::size_t j = 0;
        while (j < needle.size() && ascii_lower(hay[i + j]) == needle[j]) ++j;
        if (j == needle.size()) return i;
    }
    return std::string_view::npos;
}

SBX_INLINE std::vector<std::string_view> quoted(std::string_view s) {
    static constexpr std::pair<std::string_view, std::string_view> kQuotes[] = {
        {"\xe2\x80\x98", "\xe2\x80\x99"},  // U+2018 U+2019
        {"\xe2\x80\x9c", "\xe2\x80\x9d"},  // U+201C U+201D
        {"'", "'"},
        {"\"", "\""},
        {"`", "'"},
    };
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < s.size()) {
        bool found = false;
        for (const auto& [open, close] : kQuotes) {
            if (s.substr(i, open.size()) != open) continue;
            const std::size_t start = i + open.size();
            const std::size_t end = s.find(close, start);
            if (end == std::string_view::npos) continue;
            out.push_back(s.substr(start, end - start));
            i = end + close.size();
            found = true;
            break;
        }
        if (!found) ++i;
    }
    return out;
}

SBX_INLINE std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

}  // namespace sbx::detail

namespace sbx {

namespace detail {
inline constexpr std::pair<std::string_view, bool> kFileRefusalMessages[] = {
    {"read-only file system", true},     // EROFS: any path the plan keeps read-only
    {"permission denied", false},        // EACCES
    {"operation not permitted", false},  // EPERM
    {"device or resource busy", false},  // EBUSY: a rename over a protected file's mount (git's lock files)
};
}  // namespace detail

SBX_INLINE bool may_be_file_refusal(std::string_view line) {
    for (const auto& [text, erofs] : detail::kFileRefusalMessages)
        if (detail::find_folded(line, text) != std::string_view::npos) return true;
    return false;
}

SBX_INLINE std::optional<FileRefusal> find_file_refusal(std::string_view line, const FsPlan& plan, std::string_view cwd) {
    const auto& kMessages = detail::kFileRefusalMessages;
    line = detail::trim(line);
    if (line.empty() || line.size() > 4096) return std::nullopt;
    for (char c : line)
        if (c == '\0') return std::nullopt;
    std::size_t at = std::string_view::npos;
    bool any_read_only = false;
    for (const auto& [text, erofs] : kMessages) {
        at = detail::find_folded(line, text);
        if (at != std::string_view::npos) {
            any_read_only = erofs;
            break;
        }
    }
    if (at == std::string_view::npos) return std::nullopt;

    auto refused = [&](std::string_view written) -> std::optional<FileRefusal> {
        written = detail::trim(written);
        if (written.empty() || written.size() > 1024) return std::nullopt;
        for (char c : written)
            if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return std::nullopt;
        if (!paths::is_absolute(written) && cwd.empty()) return std::nullopt;
        const std::string path = paths::is_absolute(written) ? paths::normalize(written) : paths::join(cwd, written);
        const PlannedAccess a = planned_access(plan, path);
        using K = PlannedAccess::Kind;
        const bool counts = any_read_only ? (a.kind == K::read_only || a.kind == K::hidden)
                                          : ((a.mount != nullptr || a.pattern != nullptr) &&
                                             (a.kind == K::read_only || a.kind == K::hidden));
        if (!counts) return std::nullopt;
        std::string rule = a.mount ? a.mount->why : a.pattern ? "protected: " + a.pattern->why : std::string();
        return FileRefusal{std::string(written), path, std::string(line), 1, a.kind, std::move(rule)};
    };

    // Before the message: the fields of "a: b: c: message"; in the nearest, its
    // last quoted string, else its last word.
    std::string_view before = line.substr(0, at);
    while (!before.empty() && (before.back() == ' ' || before.back() == ':' || before.back() == ',')) before.remove_suffix(1);
    // "[Errno 30] Read-only file system": the number is no path.
    if (!before.empty() && before.back() == ']') {
        const std::size_t open = before.rfind('[');
        if (open != std::string_view::npos) before = detail::trim(before.substr(0, open));
        while (!before.empty() && (before.back() == ':' || before.back() == ' ')) before.remove_suffix(1);
    }
    std::vector<std::string_view> fields;
    for (std::size_t start = 0;;) {
        const std::size_t sep = before.find(": ", start);
        fields.push_back(before.substr(start, sep == std::string_view::npos ? std::string_view::npos : sep - start));
        if (sep == std::string_view::npos) break;
        start = sep + 2;
    }
    // Only the nearest field is read: further left sit the program's name and
    // its own words.
    const std::string_view nearest = detail::trim(fields.back());
    if (const auto q = detail::quoted(nearest); !q.empty()) {
        if (auto r = refused(q.back())) return r;
    } else if (!nearest.empty()) {
        const std::size_t space = nearest.rfind(' ');
        if (auto r = refused(space == std::string_view::npos ? nearest : nearest.substr(space + 1))) return r;
    }
    // After the message: Python's "Permission denied: '/x'", Node's "EACCES:
    // permission denied, open '/x'".
    for (auto q : detail::quoted(line.substr(at))) {
        if (auto r = refused(q)) return r;
    }
    return std::nullopt;
}

SBX_INLINE void StderrScanner::feed(std::string_view chunk) {
    while (!chunk.empty()) {
        const std::size_t nl = chunk.find('\n');
        const std::string_view part = chunk.substr(0, nl);
        if (!too_long_) {
            if (line_.size() + part.size() > kMaxLine) {
                too_long_ = true;
                line_.clear();
            } else {
                line_.append(part);
            }
        }
        if (nl == std::string_view::npos) return;
        end_line();
        chunk.remove_prefix(nl + 1);
    }
}

SBX_INLINE std::optional<Limit> limit_sign(std::string_view line) {
    using detail::find_folded;
    const auto has = [&](std::string_view text) { return find_folded(line, text) != std::string_view::npos; };
    if (has("resource temporarily unavailable") &&
        (has("fork") || has("clone") || has("thread") || has("spawn") || has("exec")))
        return Limit::processes;
    for (std::string_view text : {"cannot fork", "can't fork", "could not fork", "unable to fork",
                                  "unable to create native thread", "unable to create new native thread",
                                  "failed to create new os thread", "spawn eagain"})
        if (has(text)) return Limit::processes;
    for (std::string_view text :
         {"cannot allocate memory", "memoryerror", "std::bad_alloc", "out of memory", "memory exhausted"})
        if (has(text)) return Limit::memory;
    return std::nullopt;
}

SBX_INLINE void StderrScanner::end_line() {
    if (!too_long_ && !line_.empty())
        if (const auto l = limit_sign(line_); l && signs_[static_cast<std::size_t>(*l)].empty()) {
            constexpr std::size_t kShown = 160;  // of the line, in the block
            const std::string_view t = detail::trim(line_);
            signs_[static_cast<std::size_t>(*l)] =
                replace_controls(t.substr(0, kShown), '?') + (t.size() > kShown ? "..." : "");
        }
    if (!too_long_ && !line_.empty() && refusals_.size() < max_) {
        if (auto r = find_file_refusal(line_, plan_, cwd_)) {
            if (auto [at, fresh] = seen_.emplace(r->path, refusals_.size()); fresh) refusals_.push_back(std::move(*r));
            else ++refusals_[at->second].times;
        }
    }
    line_.clear();
    too_long_ = false;
}

}  // namespace sbx
#endif
