// sbx/rules/fs_rules.hpp - who may read and write a path, and the rule that says so.
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
// Credential stores (the builtin layer's denies, credential_stores.hpp) yield
// otherwise: inside one only allowRead entries at or under it count, from any
// layer but the repository's; such an entry lifts the store's deny, a tie
// included, and between it and any other deny there the narrower one wins. A
// broad allowRead (`~`, `~/*/credentials`) or a writable root does not reach in.
// Writes: only inside writable roots (the root, the temporary directory, the
// root's git directory outside it when the root is a linked worktree,
// allowWrite, additionalDirectories); a protected path or a denyWrite refuses
// whatever allows; a path hidden from reads is not writable either. A writable
// entry inside a credential store is refused (a warning), and a root or
// temporary directory in one is an error.
// filesystem.disabled allows everything (the network stays confined).
#pragma once

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/rules/protected_paths.hpp"
#include "sbx/settings/credential_stores.hpp"
#include "sbx/settings/policy.hpp"

namespace sbx {

enum class Access { read, write };

constexpr std::string_view access_name(Access a) noexcept { return a == Access::read ? "read" : "write"; }

// A path decision in one word, as `sbx explain`, `sbx check` and `sbx diff` print it.
constexpr std::string_view allowed_word(bool allowed) noexcept { return allowed ? "allowed" : "denied"; }

// One rule a decision can name.
struct FsRule {
    enum class Kind { deny_read, allow_read, writable, deny_write, protect };
    // How a read deny yields: to a narrower allow, or (a credential store) only
    // to an allowRead entry at or under it, a tie included.
    enum class Deny { ordinary, credential_store };

    Kind kind;
    Deny deny = Deny::ordinary;  // for deny_read
    std::string pattern;     // absolute, normalised; may hold wildcards
    std::string list;        // where it comes from: "filesystem.denyRead", "the root", "protected path", ...
    std::optional<Source> source;  // the settings entry; nullopt for the root, TMPDIR, protected paths
    std::string note;        // more: "where /home/u/.aws leads", a protected path's reason
    bool wildcard = false;   // false for a path: the root, TMPDIR, a protected path, where a plain entry leads
    std::vector<std::string_view> comps;  // of pattern
    std::string literal;                  // the leading components without wildcards, as a path

    // `path`: `p` names one path, whatever characters it holds (a root named
    // `a*b` is no pattern), rather than a settings pattern.
    FsRule(Kind k, std::string p, std::string l, std::optional<Source> s, std::string n, bool path = false)
        : kind(k), pattern(std::move(p)), list(std::move(l)), source(std::move(s)), note(std::move(n)) {
        wildcard = !path && glob::has_wildcard(pattern);
        comps = paths::components(pattern);
        literal = wildcard ? glob::literal_prefix(pattern) : pattern;
    }
    FsRule(const FsRule&) = delete;  // comps point into pattern
    FsRule& operator=(const FsRule&) = delete;
};

// One sentence naming a rule: "filesystem.denyRead ~/.ssh (user /home/u/.claude/settings.json sandbox.filesystem.denyRead[0])".
SBX_INLINE std::string describe(const FsRule& r);

struct FsRules {
    std::deque<FsRule> rules;  // deque: rules never move, so their comps stay valid
    // The rules again, by kind, for decide(): filled by index_rules().
    std::vector<const FsRule*> by_kind[5];
    bool disabled = false;     // filesystem.disabled: no isolation at all
    std::optional<Source> disabled_source;
    std::string root, tmpdir, home;
    std::string tool_cache;  // the project's tool cache home (add_tool_cache); empty: none
    std::vector<ProtectedPath> protected_paths;
    std::vector<Warning> warnings;
};

// The list a writable rule for the root's git directory outside it names
// (Guard::git_writable), as `sbx explain` and `sbx policy` show it.
inline constexpr std::string_view kRootGitDirList = "the root's git directory";

struct FsContext {
    std::string root;    // absolute, normalised, symlink-free
    std::string tmpdir;  // the command's temporary directory (made later by the launcher)
    std::string home;
};

namespace detail {

// How deep the region a rule names starts, for `path`: the number of components
// of the shallowest ancestor-or-self of `path` the rule matches, or nullopt when
// the rule does not reach the path. `comps` are the path's components.
SBX_INLINE std::optional<std::size_t> reach_depth(const FsRule& r, std::string_view path,
                                              std::span<const std::string_view> comps);

}  // namespace detail

// Files each rule under its kind, for decide(). compile_fs_rules() calls it; a
// caller that adds rules by hand calls it again.
SBX_INLINE void index_rules(FsRules& rules);

// A decision, the rule behind it, and why, as data: why() makes the sentence.
struct FsDecision {
    enum class Because {
        disabled,           // filesystem.disabled
        no_read_deny,       // reads are allowed where no deny reaches
        reopened,           // `rule` (an allow) is narrower than `other` (a deny)
        lifted,             // `rule` (an allowRead) names `other`, a credential store, or lies in it
        hidden,             // `rule` denies reading
        protected_path,     // `rule` is a protected path
        write_denied,       // `rule` is a denyWrite
        hidden_from_reads,  // `rule` denies reading, so writing too
        writable_root,      // `rule` is a writable root
        no_writable_root,   // no writable root holds the path
    };
    bool allowed = false;
    Because because = Because::no_writable_root;
    const FsRule* rule = nullptr;   // nullptr for disabled, no_read_deny, no_writable_root
    const FsRule* other = nullptr;  // the deny a re-opening allow won over
};

// The decision in one sentence, naming its rule.
SBX_INLINE std::string why(const FsDecision& d);

namespace detail {

// Whether `allow` (an allowRead) may lift `store`, a credential store's deny: it
// lies at or under the store, and no repository file wrote it.
SBX_INLINE bool lifts(const FsRule& allow, const FsRule& store);

// The read half of decide(). `comps` is split on first need (`split` says so).
SBX_INLINE FsDecision decide_read(const FsRules& rules, std::string_view path, std::vector<std::string_view>& comps,
                              bool& split);

}  // namespace detail

// The decision for one clean absolute path (no symlinks resolved: see explain()).
SBX_INLINE FsDecision decide(const FsRules& rules, std::string_view path, Access access);

// A decision made for a path as the command would name it: the path is
// normalised (relative paths are relative to the root) and its symlinks resolved.
// Reads are refused when either the path as named or where it leads is refused.
struct FsExplanation {
    std::string path;       // as asked, absolute
    std::string real_path;  // where it leads
    Access access = Access::read;
    FsDecision decision;
    // For a write, when the path as named is a symbolic link: the decision for
    // its name itself, which removing, renaming or replacing the link writes
    // (not its target). A protected link is bound over itself (fs_plan.hpp),
    // so its name is refused as its target is.
    std::optional<FsDecision> link;
};

SBX_INLINE expected<FsExplanation> explain(const FsRules& rules, std::string_view path, Access access, const FsView& fs);

namespace detail {

// `p` with the symlinks of its literal part resolved; `p` itself when that fails.
inline std::string real_form(const FsView& fs, const std::string& p) { return resolve_pattern(fs, p).value_or(p); }

}  // namespace detail

// Compiles the rules for one command. Pure but for the FsView, which resolves
// symlinks so that a denied path reached through a link is denied where it leads.
namespace detail {

// A protected or write-denied path under a folder that does not exist yet would be
// only a name: the command makes the folder and writes inside it (a core.hooksPath
// of tools/git-hooks with no tools/). So the first missing folder on the way, when a
// writable root holds it, becomes a protected path of its own, empty and read-only
// for the whole run, and what lies inside it is dropped (it covers them). A
// write-denied path that is missing itself, its folder there, is covered by an
// empty file. `writable` are the writable roots, real paths.
SBX_INLINE void cover_missing_folders(std::vector<ProtectedPath>& list, const std::deque<FsRule>& rules,
                                  const std::vector<std::string>& writable, const CachedFs& fs);

// The rules of compile_fs_rules, list by list, into `out`: each entry under its
// own name and, when a symlink stands on the way, where it leads; the credential
// stores found among the read denies decide what the later lists may open.
class RuleBuilder {
public:
    RuleBuilder(FsRules& out, const CachedFs& cached) : out_(out), cached_(cached) {}

    // A rule under its own name and, when a symlink stands on the way, where it leads.
    void add_both(FsRule::Kind kind, const Sourced<std::string>& e, const std::string& list);

    // The credential store (either form) holding `p`, or none; `strictly`: not the store itself.
    const FsRule* store_holding(const std::string& p, bool strictly) const;

    // filesystem.denyRead (the credential stores among them marked so) and
    // credentials.files.
    void deny_reads(const Policy& policy);

    // An allowRead re-opens only what it names inside a denied region: one whose
    // name lies outside every deny but whose target lies inside reaches in through
    // a symlink, and is ignored.
    void allow_reads(const Policy& policy);

    // Where git writes for the root's own repository outside it (Guard::git_writable:
    // a linked worktree's main git directory), writable as the root is; what in it
    // makes git run a program is a protected path, refused below.
    void git_writable();

    // A writable path is mounted, and bubblewrap mounts concrete paths: a trailing
    // `/**` names the directory itself; any other wildcard cannot be mounted.
    void writable(const Sourced<std::string>& e, const std::string& list);

    // The protected paths kept read-only, after the folders they need are covered.
    void protect(const FsContext& ctx);

private:
    // A credential store's rule as named and where it leads (or nullptr).
    struct Store {
        const FsRule* named;
        const FsRule* target;
    };
    FsRules& out_;  // its rules are a deque: the pointers below stay valid
    const CachedFs& cached_;
    std::vector<Store> named_stores_;
    std::vector<const FsRule*> stores_;  // both forms
};

SBX_INLINE expected<FsRules> compile_fs_rules(const Policy& policy, const FsContext& ctx,
                                          std::vector<ProtectedPath> protected_list, const CachedFs& cached);

}  // namespace detail

// Makes `dir`, the project's tool cache home (tool_cache.hpp), a writable root of
// its own: the launcher makes it, so it need not exist when the plan is made.
// `dir` absolute, normalised and symlink-free; make_plan checks where it lies.
SBX_INLINE void add_tool_cache(FsRules& rules, const std::string& dir);

SBX_INLINE expected<FsRules> compile_fs_rules(const Policy& policy, const FsContext& ctx,
                                          std::vector<ProtectedPath> protected_list, const FsView& fs);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_RULES)

namespace sbx {

SBX_INLINE std::string describe(const FsRule& r) {
    std::string out = r.list + " " + r.pattern;
    if (!r.note.empty()) out += " (" + r.note + ")";
    if (r.source)
        out += " [" + std::string(layer_name(r.source->layer)) + " " + r.source->file + " " + r.source->key + "]";
    return out;
}

}  // namespace sbx

namespace sbx::detail {

SBX_INLINE std::optional<std::size_t> reach_depth(const FsRule& r, std::string_view path,
                                              std::span<const std::string_view> comps) {
    if (!paths::at_or_under(path, r.literal)) return std::nullopt;  // cheap, and rules out most
    if (!r.wildcard) return r.comps.size();
    return glob::shallowest_match(r.comps, comps);
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE void index_rules(FsRules& rules) {
    for (auto& v : rules.by_kind) v.clear();
    for (const auto& r : rules.rules) rules.by_kind[static_cast<int>(r.kind)].push_back(&r);
}

SBX_INLINE std::string why(const FsDecision& d) {
    using B = FsDecision::Because;
    switch (d.because) {
        case B::disabled: return "filesystem isolation is disabled (filesystem.disabled)";
        case B::no_read_deny: return "reads are allowed wherever no read deny reaches";
        case B::reopened: return "re-opened by " + describe(*d.rule) + ", narrower than " + describe(*d.other);
        case B::lifted:
            return "re-opened by " + describe(*d.rule) + (d.rule->literal == d.other->literal ? ", which names " : ", in ") +
                   describe(*d.other) + ": an allowRead that names a credential store lifts its built-in denial";
        case B::hidden: return "hidden by " + describe(*d.rule);
        case B::protected_path: return "protected: " + describe(*d.rule);
        case B::write_denied: return "denied by " + describe(*d.rule);
        case B::hidden_from_reads: return "not writable where reads are refused: hidden by " + describe(*d.rule);
        case B::writable_root: return "inside " + describe(*d.rule);
        case B::no_writable_root: return "not inside a writable root";
    }
    return "?";
}

}  // namespace sbx

namespace sbx::detail {

SBX_INLINE bool lifts(const FsRule& allow, const FsRule& store) {
    return allow.kind == FsRule::Kind::allow_read && !(allow.source && is_repository(allow.source->layer)) &&
           paths::at_or_under(allow.literal, store.literal);
}

SBX_INLINE FsDecision decide_read(const FsRules& rules, std::string_view path, std::vector<std::string_view>& comps,
                              bool& split) {
    using B = FsDecision::Because;
    struct Hit {
        const FsRule* rule;
        std::size_t depth;
    };
    auto reach = [&](const FsRule* r) -> std::optional<std::size_t> {
        if (!paths::at_or_under(path, r->literal)) return std::nullopt;
        if (!r->wildcard) return r->comps.size();
        if (!split) {
            comps = paths::components(path);
            split = true;
        }
        return glob::shallowest_match(r->comps, comps);
    };
    std::vector<Hit> denies;
    const Hit* store = nullptr;  // the deepest credential store that reaches the path
    for (const FsRule* r : rules.by_kind[static_cast<int>(FsRule::Kind::deny_read)])
        if (auto d = reach(r)) denies.push_back({r, *d});
    if (denies.empty()) return {true, B::no_read_deny, nullptr, nullptr};
    for (const auto& h : denies)
        if (h.rule->deny == FsRule::Deny::credential_store && (!store || h.depth > store->depth)) store = &h;
    // The allows that count here: inside a credential store, only those that may lift it.
    std::vector<Hit> allows;
    for (const FsRule* r : rules.by_kind[static_cast<int>(FsRule::Kind::allow_read)])
        if (!store || lifts(*r, *store->rule))
            if (auto d = reach(r)) allows.push_back({r, *d});
    if (!store)
        for (const FsRule* r : rules.by_kind[static_cast<int>(FsRule::Kind::writable)])
            if (auto d = reach(r)) allows.push_back({r, *d});
    // Every deny must be beaten: a credential store by an allow that may lift it,
    // any other deny by a narrower allow. The deepest one left standing decides.
    const Hit* held = nullptr;
    const Hit* deepest = nullptr;
    for (const auto& h : denies) {
        if (!deepest || h.depth > deepest->depth) deepest = &h;
        const bool beaten = std::any_of(allows.begin(), allows.end(), [&](const Hit& a) {
            return h.rule->deny == FsRule::Deny::credential_store ? lifts(*a.rule, *h.rule) : a.depth > h.depth;
        });
        if (!beaten && (!held || h.depth > held->depth)) held = &h;
    }
    if (held) return {false, B::hidden, held->rule, nullptr};
    const Hit* best = nullptr;
    for (const auto& a : allows)
        if (!best || a.depth > best->depth) best = &a;
    if (deepest->rule->deny == FsRule::Deny::credential_store) return {true, B::lifted, best->rule, deepest->rule};
    return {true, B::reopened, best->rule, deepest->rule};
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE FsDecision decide(const FsRules& rules, std::string_view path, Access access) {
    using B = FsDecision::Because;
    if (rules.disabled) return {true, B::disabled, nullptr, nullptr};
    std::vector<std::string_view> comps;  // split only when a wildcard rule needs it
    bool split = false;
    auto best = [&](FsRule::Kind kind, const FsRule*& found, std::size_t& depth) {
        for (const FsRule* r : rules.by_kind[static_cast<int>(kind)]) {
            if (!paths::at_or_under(path, r->literal)) continue;
            if (r->wildcard && !split) {
                comps = paths::components(path);
                split = true;
            }
            auto d = r->wildcard ? glob::shallowest_match(r->comps, comps) : std::optional(r->comps.size());
            if (d && (!found || *d > depth)) {
                found = r;
                depth = *d;
            }
        }
    };
    FsDecision read = detail::decide_read(rules, path, comps, split);
    if (access == Access::read) return read;

    const FsRule* found = nullptr;
    std::size_t depth = 0;
    best(FsRule::Kind::protect, found, depth);
    if (found) return {false, B::protected_path, found, nullptr};
    best(FsRule::Kind::deny_write, found, depth);
    if (found) return {false, B::write_denied, found, nullptr};
    if (!read.allowed) return {false, B::hidden_from_reads, read.rule, nullptr};
    best(FsRule::Kind::writable, found, depth);
    if (found) return {true, B::writable_root, found, nullptr};
    return {false, B::no_writable_root, nullptr, nullptr};
}

SBX_INLINE expected<FsExplanation> explain(const FsRules& rules, std::string_view path, Access access, const FsView& fs) {
    if (path.empty()) return fail(Errc::invalid_argument, "an empty path");
    FsExplanation out;
    out.path = paths::is_absolute(path) ? paths::normalize(path) : paths::join(rules.root, path);
    auto real = resolve(fs, out.path);
    SBX_TRY(real);
    out.real_path = *real;
    out.access = access;
    out.decision = decide(rules, out.real_path, access);
    if (out.decision.allowed && out.real_path != out.path) {
        auto named = decide(rules, out.path, access);
        // Writing through a link lands on the real location; only a deny on the
        // name as written (a protected link, a denied name) also counts.
        if (!named.allowed && (access == Access::read || named.rule != nullptr)) out.decision = named;
    }
    if (access == Access::write) {
        auto st = fs.lstat(out.path);
        SBX_TRY(st);
        if (*st && (*st)->type == FileType::symlink) out.link = decide(rules, out.path, Access::write);
    }
    return out;
}

}  // namespace sbx

namespace sbx::detail {

SBX_INLINE void cover_missing_folders(std::vector<ProtectedPath>& list, const std::deque<FsRule>& rules,
                                  const std::vector<std::string>& writable, const CachedFs& fs) {
    auto missing = [&](const std::string& p) {
        auto st = fs.lstat(p);
        return st && !*st;  // an error is not known to be missing
    };
    auto strictly_in_writable = [&](const std::string& p) {
        return std::any_of(writable.begin(), writable.end(),
                           [&](const std::string& w) { return p != w && paths::at_or_under(p, w); });
    };
    std::vector<ProtectedPath> covers;
    // `own`: what covers `path` when its folder is there; nullopt when the path is
    // a protected one, which the plan covers already.
    auto cover = [&](const std::string& path, const std::string& what, std::optional<Placeholder> own) {
        if (!strictly_in_writable(path) || !missing(path)) return;
        std::string first = path;
        while (strictly_in_writable(paths::parent(first)) && missing(paths::parent(first))) first = paths::parent(first);
        if (first != path)
            covers.push_back(ProtectedPath{first, Guard::read_only, Placeholder::directory,
                                           "the first missing folder on the way to " + path +
                                               ", so that no command makes it: " + what});
        else if (own)
            covers.push_back(ProtectedPath{path, Guard::read_only, *own, what});
    };
    for (const auto& p : list)
        if (p.guard == Guard::read_only) cover(p.path, p.reason, std::nullopt);
    for (const auto& r : rules)
        if (r.kind == FsRule::Kind::deny_write && !r.wildcard) cover(r.pattern, "denied by " + describe(r), Placeholder::file);
    if (covers.empty()) return;
    for (auto& c : covers) {
        // A protected name left to the audit after the run (Missing::after_run)
        // that a denyWrite names is refused while the command runs, as asked.
        for (auto& p : list)
            if (p.path == c.path && p.guard == Guard::read_only) p.missing = Missing::covered;
        // Already covered: by itself or by a read-only entry above it.
        const bool known = std::any_of(list.begin(), list.end(), [&](const ProtectedPath& p) {
            return p.guard == Guard::read_only && paths::at_or_under(c.path, p.path);
        });
        if (!known) list.push_back(std::move(c));
    }
    // Nothing strictly inside a missing read-only entry: it covers them.
    std::sort(list.begin(), list.end(), [](const ProtectedPath& a, const ProtectedPath& b) { return a.path < b.path; });
    std::vector<ProtectedPath> kept;
    for (auto& p : list) {
        const bool inside = std::any_of(kept.begin(), kept.end(), [&](const ProtectedPath& k) {
            return k.guard == Guard::read_only && k.path != p.path && paths::at_or_under(p.path, k.path) && missing(k.path);
        });
        if (!inside) kept.push_back(std::move(p));
    }
    list = std::move(kept);
}

SBX_INLINE void RuleBuilder::add_both(FsRule::Kind kind, const Sourced<std::string>& e, const std::string& list) {
    out_.rules.emplace_back(kind, e.value, list, e.source, std::string());
    const std::string real = real_form(cached_, e.value);
    // Where a plain entry leads is a path, whatever its name holds.
    if (real != e.value)
        out_.rules.emplace_back(kind, real, list, e.source, "where " + e.value + " leads", !glob::has_wildcard(e.value));
}

SBX_INLINE const FsRule* RuleBuilder::store_holding(const std::string& p, bool strictly) const {
    for (const FsRule* s : stores_)
        if (paths::at_or_under(p, s->literal) && (!strictly || p != s->literal)) return s;
    return nullptr;
}

SBX_INLINE void RuleBuilder::deny_reads(const Policy& policy) {
    for (const auto& e : policy.filesystem.deny_read) {
        const CredentialStore* store = credential_store_of(e.source);
        const std::size_t first = out_.rules.size();
        add_both(FsRule::Kind::deny_read, e, store ? "credential store" : "filesystem.denyRead");
        if (!store) continue;
        for (std::size_t i = first; i < out_.rules.size(); ++i) {
            out_.rules[i].deny = FsRule::Deny::credential_store;
            out_.rules[i].note = out_.rules[i].note.empty() ? std::string(store->reason)
                                                            : std::string(store->reason) + "; " + out_.rules[i].note;
            stores_.push_back(&out_.rules[i]);
        }
        named_stores_.push_back({&out_.rules[first], out_.rules.size() > first + 1 ? &out_.rules[first + 1] : nullptr});
    }
    for (const auto& e : policy.credentials.files) add_both(FsRule::Kind::deny_read, e, "credentials.files");
}

SBX_INLINE void RuleBuilder::allow_reads(const Policy& policy) {
    for (const auto& e : policy.filesystem.allow_read) {
        const std::string real = real_form(cached_, e.value);
        auto inside_deny = [&](const std::string& p) {
            const std::string named = glob::has_wildcard(p) ? glob::literal_prefix(p) : p;
            const auto comps = paths::components(named);
            for (const auto& r : out_.rules)
                if (r.kind == FsRule::Kind::deny_read && reach_depth(r, named, comps)) return true;
            return false;
        };
        if (real != e.value && !inside_deny(e.value) && inside_deny(real)) {
            out_.warnings.push_back(Warning{e.source.file, e.source.key,
                                            "ignored: " + e.value + " reaches a denied path only through a symlink (" +
                                                real + ")"});
            continue;
        }
        out_.rules.emplace_back(FsRule::Kind::allow_read, e.value, "filesystem.allowRead", e.source, std::string());
        // An entry in a credential store that is a symlink (dotfiles kept elsewhere)
        // lifts it where it leads too, as long as it leads into that store's target.
        if (real == e.value) continue;
        const FsRule& named = out_.rules.back();
        const std::string real_named = glob::has_wildcard(real) ? glob::literal_prefix(real) : real;
        for (const auto& st : named_stores_) {
            if (!st.target || !lifts(named, *st.named) || !paths::at_or_under(real_named, st.target->literal))
                continue;
            out_.rules.emplace_back(FsRule::Kind::allow_read, real, "filesystem.allowRead", e.source,
                                    "where " + e.value + " leads", !glob::has_wildcard(e.value));
            break;
        }
    }
}

SBX_INLINE void RuleBuilder::git_writable() {
    for (const auto& p : out_.protected_paths) {
        if (p.guard != Guard::git_writable) continue;
        if (const FsRule* s = store_holding(p.path, false)) {
            out_.warnings.push_back(Warning{p.path, "", "not writable: it lies in " + describe(*s) +
                                                            ", a credential store sbx hides; git cannot commit in the root"});
            continue;
        }
        out_.rules.emplace_back(FsRule::Kind::writable, p.path, std::string(kRootGitDirList), std::nullopt, p.reason,
                                true);
    }
}

SBX_INLINE void RuleBuilder::writable(const Sourced<std::string>& e, const std::string& list) {
    std::string p = e.value;
    if (p.size() > 3 && p.ends_with("/**")) p.resize(p.size() - 3);
    if (glob::has_wildcard(p)) {
        out_.warnings.push_back(Warning{e.source.file, e.source.key,
                                        "refused: " + e.value +
                                            " holds a wildcard that cannot be mounted writable; name directories"});
        return;
    }
    // A writable folder inside a credential store would open it: refused. A
    // folder that is the store, or holds it, writes there only where an
    // allowRead lifts the store.
    for (const std::string& form : {p, real_form(cached_, p)})
        if (const FsRule* s = store_holding(form, true)) {
            out_.warnings.push_back(Warning{e.source.file, e.source.key,
                                            "refused: " + e.value + " lies inside " + describe(*s) +
                                                ", a credential store sbx hides; a writable folder there is not "
                                                "mounted (name the store itself in allowRead and allowWrite)"});
            return;
        }
    add_both(FsRule::Kind::writable, Sourced<std::string>{p, e.source}, list);
}

SBX_INLINE void RuleBuilder::protect(const FsContext& ctx) {
    std::vector<std::string> roots;
    for (const auto& r : out_.rules)
        if (r.kind == FsRule::Kind::writable && !r.wildcard) roots.push_back(r.pattern);
    if (!out_.disabled) cover_missing_folders(out_.protected_paths, out_.rules, roots, cached_);
    for (const auto& p : out_.protected_paths) {
        if (p.guard != Guard::read_only) continue;
        std::string note = p.reason;
        // make_fs_plan() leaves such a name uncovered under bubblewrap (Missing::after_run).
        if (!out_.disabled && renamed_after_run(p, ctx.root))
            if (auto st = cached_.lstat(p.path); st && !*st)
                note += "; missing now: under bubblewrap one the command makes is renamed to " +
                        std::string(protect_detail::base_name(p.path)) + ".sbx-disabled once it is over";
        out_.rules.emplace_back(FsRule::Kind::protect, p.path, "protected path", std::nullopt, std::move(note), true);
    }
}

SBX_INLINE expected<FsRules> compile_fs_rules(const Policy& policy, const FsContext& ctx,
                                          std::vector<ProtectedPath> protected_list, const CachedFs& cached) {
    FsRules out;
    out.root = ctx.root;
    out.tmpdir = ctx.tmpdir;
    out.home = ctx.home;
    out.disabled = policy.filesystem.disabled.value;
    out.disabled_source = policy.filesystem.disabled.source;
    out.protected_paths = std::move(protected_list);
    RuleBuilder build(out, cached);
    build.deny_reads(policy);
    for (const auto& [what, p] : {std::pair{"the root", &ctx.root}, std::pair{"the temporary directory", &ctx.tmpdir}})
        if (const FsRule* s = build.store_holding(*p, false))
            return fail(Error(Errc::invalid_argument, std::string(what) + " lies in " + describe(*s) +
                                                          ", a credential store sbx hides; pick a folder outside it")
                            .in_file(*p));
    build.allow_reads(policy);
    if (!policy.filesystem.root_read_only.value)
        out.rules.emplace_back(FsRule::Kind::writable, ctx.root, "the root", std::nullopt, std::string(), true);
    out.rules.emplace_back(FsRule::Kind::writable, ctx.tmpdir, "the command's temporary directory", std::nullopt,
                           std::string(), true);
    build.git_writable();
    for (const auto& e : policy.filesystem.allow_write) build.writable(e, "filesystem.allowWrite");
    for (const auto& e : policy.additional_directories) build.writable(e, "permissions.additionalDirectories");
    for (const auto& e : policy.filesystem.deny_write) build.add_both(FsRule::Kind::deny_write, e, "filesystem.denyWrite");
    build.protect(ctx);
    index_rules(out);
    return out;
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE void add_tool_cache(FsRules& rules, const std::string& dir) {
    rules.tool_cache = dir;
    rules.rules.emplace_back(FsRule::Kind::writable, dir, "the project's tool cache", std::nullopt, std::string(), true);
    index_rules(rules);
}

SBX_INLINE expected<FsRules> compile_fs_rules(const Policy& policy, const FsContext& ctx,
                                          std::vector<ProtectedPath> protected_list, const FsView& fs) {
    return with_cache(fs, [&](const CachedFs& cached) {
        return detail::compile_fs_rules(policy, ctx, std::move(protected_list), cached);
    });
}

}  // namespace sbx
#endif
