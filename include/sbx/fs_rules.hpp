// sbx/fs_rules.hpp - who may read and write a path, and the rule that says so.
//
// compile_fs_rules() turns a Policy, the root, the command's temporary directory
// and the protected paths into FsRules: every rule split once, symlinked entries
// present under their real location too. decide() then answers for one clean
// absolute path without touching the disk; explain() resolves the path through an
// FsView first and decides for what the kernel would reach.
//
// Reads: allowed everywhere no read deny reaches. Between a deny and an allow
// (allowRead, or a writable root) that both reach a path, the narrower one wins:
// the rule whose named region starts deeper. A tie goes to the deny.
// Writes: only inside writable roots (the root, the temporary directory,
// allowWrite, additionalDirectories); a protected path or a denyWrite refuses
// whatever allows; a path hidden from reads is not writable either.
// filesystem.disabled allows everything (the network stays confined).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/fs_view.hpp"
#include "sbx/glob.hpp"
#include "sbx/policy.hpp"
#include "sbx/protected_paths.hpp"

namespace sbx {

enum class Access { read, write };

constexpr std::string_view access_name(Access a) noexcept { return a == Access::read ? "read" : "write"; }

// One rule a decision can name.
struct FsRule {
    enum class Kind { deny_read, allow_read, writable, deny_write, protect };

    Kind kind;
    std::string pattern;     // absolute, normalised; may hold wildcards
    std::string list;        // where it comes from: "filesystem.denyRead", "the root", "protected path", ...
    std::optional<Source> source;  // the settings entry; nullopt for the root, TMPDIR, protected paths
    std::string note;        // more: "where /home/u/.aws leads", a protected path's reason
    bool wildcard = false;
    std::vector<std::string_view> comps;  // of pattern

    FsRule(Kind k, std::string p, std::string l, std::optional<Source> s, std::string n)
        : kind(k), pattern(std::move(p)), list(std::move(l)), source(std::move(s)), note(std::move(n)) {
        wildcard = glob::has_wildcard(pattern);
        comps = paths::components(pattern);
    }
    FsRule(const FsRule&) = delete;  // comps point into pattern
    FsRule& operator=(const FsRule&) = delete;
};

// One sentence naming a rule: "filesystem.denyRead ~/.ssh (user /home/u/.claude/settings.json sandbox.filesystem.denyRead[0])".
inline std::string describe(const FsRule& r) {
    std::string out = r.list + " " + r.pattern;
    if (!r.note.empty()) out += " (" + r.note + ")";
    if (r.source)
        out += " [" + std::string(layer_name(r.source->layer)) + " " + r.source->file + " " + r.source->key + "]";
    return out;
}

struct FsRules {
    std::deque<FsRule> rules;  // deque: rules never move, so their comps stay valid
    bool disabled = false;     // filesystem.disabled: no isolation at all
    std::optional<Source> disabled_source;
    std::string root, tmpdir, home;
    std::vector<ProtectedPath> protected_paths;
    std::vector<Warning> warnings;
};

struct FsContext {
    std::string root;    // absolute, normalised, symlink-free
    std::string tmpdir;  // the command's temporary directory (made later by the launcher)
    std::string home;
};

namespace detail {

// How deep the region a rule names starts, for `path` (components): the number of
// components of the shallowest ancestor-or-self of `path` the rule matches, or
// nullopt when the rule does not reach the path.
inline std::optional<std::size_t> reach_depth(const FsRule& r, std::span<const std::string_view> path) {
    if (r.wildcard) return glob::shallowest_match(r.comps, path);
    if (r.comps.size() > path.size()) return std::nullopt;
    for (std::size_t i = 0; i < r.comps.size(); ++i)
        if (r.comps[i] != path[i]) return std::nullopt;
    return r.comps.size();
}

}  // namespace detail

// A decision and the rule behind it (nullptr: the default of the access).
struct FsDecision {
    bool allowed = false;
    const FsRule* rule = nullptr;
    std::string why;  // one sentence
};

// The decision for one clean absolute path (no symlinks resolved: see explain()).
inline FsDecision decide(const FsRules& rules, std::string_view path, Access access) {
    if (rules.disabled) return {true, nullptr, "filesystem isolation is disabled (filesystem.disabled)"};
    const auto comps = paths::components(path);
    auto best = [&](FsRule::Kind a, FsRule::Kind b) {
        const FsRule* found = nullptr;
        std::size_t depth = 0;
        for (const auto& r : rules.rules) {
            if (r.kind != a && r.kind != b) continue;
            auto d = detail::reach_depth(r, comps);
            if (d && (!found || *d > depth)) {
                found = &r;
                depth = *d;
            }
        }
        return std::pair{found, depth};
    };
    auto [deny, deny_depth] = best(FsRule::Kind::deny_read, FsRule::Kind::deny_read);
    FsDecision read{true, nullptr, "reads are allowed wherever no read deny reaches"};
    if (deny) {
        auto [allow, allow_depth] = best(FsRule::Kind::allow_read, FsRule::Kind::writable);
        if (allow && allow_depth > deny_depth)
            read = {true, allow, "re-opened by " + describe(*allow) + ", narrower than " + describe(*deny)};
        else
            read = {false, deny, "hidden by " + describe(*deny)};
    }
    if (access == Access::read) return read;

    auto [prot, prot_depth] = best(FsRule::Kind::protect, FsRule::Kind::protect);
    if (prot) return {false, prot, "protected: " + describe(*prot)};
    auto [dw, dw_depth] = best(FsRule::Kind::deny_write, FsRule::Kind::deny_write);
    if (dw) return {false, dw, "denied by " + describe(*dw)};
    if (!read.allowed) return {false, read.rule, "not writable where reads are refused: " + read.why};
    auto [w, w_depth] = best(FsRule::Kind::writable, FsRule::Kind::writable);
    if (w) return {true, w, "inside " + describe(*w)};
    return {false, nullptr, "not inside a writable root"};
}

// A decision made for a path as the command would name it: the path is
// normalised (relative paths are relative to the root) and its symlinks resolved.
// Reads are refused when either the path as named or where it leads is refused.
struct FsExplanation {
    std::string path;       // as asked, absolute
    std::string real_path;  // where it leads
    Access access = Access::read;
    FsDecision decision;
};

inline expected<FsExplanation> explain(const FsRules& rules, std::string_view path, Access access, const FsView& fs) {
    if (path.empty()) return fail(Errc::invalid_argument, "an empty path");
    FsExplanation out;
    out.path = paths::is_absolute(path) ? paths::normalize(path) : paths::join(rules.root, path);
    auto real = resolve(fs, out.path);
    if (!real) return fail(real.error());
    out.real_path = *real;
    out.access = access;
    out.decision = decide(rules, out.real_path, access);
    if (out.decision.allowed && out.real_path != out.path) {
        auto named = decide(rules, out.path, access);
        // Writing through a link lands on the real location; only a deny on the
        // name as written (a protected link, a denied name) also counts.
        if (!named.allowed && (access == Access::read || named.rule != nullptr)) out.decision = std::move(named);
    }
    return out;
}

namespace detail {

// `p` with the symlinks of its literal part resolved; `p` itself when that fails.
inline std::string real_form(const FsView& fs, const std::string& p) {
    const std::string prefix = glob::has_wildcard(p) ? glob::literal_prefix(p) : p;
    auto r = resolve(fs, prefix);
    if (!r) return p;
    return paths::normalize(*r + p.substr(prefix.size()));
}

}  // namespace detail

// Compiles the rules for one command. Pure but for the FsView, which resolves
// symlinks so that a denied path reached through a link is denied where it leads.
inline expected<FsRules> compile_fs_rules(const Policy& policy, const FsContext& ctx,
                                          std::vector<ProtectedPath> protected_list, const FsView& fs) {
    FsRules out;
    out.root = ctx.root;
    out.tmpdir = ctx.tmpdir;
    out.home = ctx.home;
    out.disabled = policy.filesystem.disabled.value;
    out.disabled_source = policy.filesystem.disabled.source;
    out.protected_paths = std::move(protected_list);
    CachedFs cached(fs);

    // A rule under its own name and, when a symlink stands on the way, where it leads.
    auto add_both = [&](FsRule::Kind kind, const Sourced<std::string>& e, const std::string& list) {
        out.rules.emplace_back(kind, e.value, list, e.source, std::string());
        const std::string real = detail::real_form(cached, e.value);
        if (real != e.value) out.rules.emplace_back(kind, real, list, e.source, "where " + e.value + " leads");
    };

    for (const auto& e : policy.filesystem.deny_read) add_both(FsRule::Kind::deny_read, e, "filesystem.denyRead");
    for (const auto& e : policy.credentials.files) add_both(FsRule::Kind::deny_read, e, "credentials.files");

    // An allowRead re-opens only what it names inside a denied region: one whose
    // name lies outside every deny but whose target lies inside reaches in through
    // a symlink, and is ignored.
    for (const auto& e : policy.filesystem.allow_read) {
        const std::string real = detail::real_form(cached, e.value);
        auto inside_deny = [&](const std::string& p) {
            const auto comps = paths::components(glob::has_wildcard(p) ? glob::literal_prefix(p) : p);
            for (const auto& r : out.rules)
                if (r.kind == FsRule::Kind::deny_read && detail::reach_depth(r, comps)) return true;
            return false;
        };
        if (real != e.value && !inside_deny(e.value) && inside_deny(real)) {
            out.warnings.push_back(Warning{e.source.file, e.source.key,
                                           "ignored: " + e.value + " reaches a denied path only through a symlink (" +
                                               real + ")"});
            continue;
        }
        out.rules.emplace_back(FsRule::Kind::allow_read, e.value, "filesystem.allowRead", e.source, std::string());
    }

    out.rules.emplace_back(FsRule::Kind::writable, ctx.root, "the root", std::nullopt, std::string());
    out.rules.emplace_back(FsRule::Kind::writable, ctx.tmpdir, "the command's temporary directory", std::nullopt,
                           std::string());
    // A writable path is mounted, and bubblewrap mounts concrete paths: a trailing
    // `/**` names the directory itself; any other wildcard cannot be mounted.
    auto writable = [&](const Sourced<std::string>& e, const std::string& list) {
        std::string p = e.value;
        if (p.size() > 3 && p.ends_with("/**")) p.resize(p.size() - 3);
        if (glob::has_wildcard(p)) {
            out.warnings.push_back(Warning{e.source.file, e.source.key,
                                           "refused: " + e.value +
                                               " holds a wildcard that cannot be mounted writable; name directories"});
            return;
        }
        add_both(FsRule::Kind::writable, Sourced<std::string>{p, e.source}, list);
    };
    for (const auto& e : policy.filesystem.allow_write) writable(e, "filesystem.allowWrite");
    for (const auto& e : policy.additional_directories) writable(e, "permissions.additionalDirectories");
    for (const auto& e : policy.filesystem.deny_write) add_both(FsRule::Kind::deny_write, e, "filesystem.denyWrite");

    for (const auto& p : out.protected_paths)
        if (p.guard == Guard::read_only)
            out.rules.emplace_back(FsRule::Kind::protect, p.path, "protected path", std::nullopt, p.reason);
    return out;
}

}  // namespace sbx
