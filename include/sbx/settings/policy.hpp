// sbx/settings/policy.hpp - settings layers merged into one effective Policy.
//
// merge() applies every layering rule of Claude Code's sandbox settings, plus the
// managed locks and the trust rules, and keeps for each value the layer, file and
// key that set it. Entries a rule leaves out become warnings that say which rule.
//
// The rules, in the words of docs/settings.md:
//  - a boolean comes from the highest layer that sets it: managed > flag (--settings)
//    > local > project > user; lists are combined across layers;
//  - managed `network.allowManagedDomainsOnly` keeps only managed allowedDomains,
//    managed `filesystem.allowManagedReadPathsOnly` only managed allowRead;
//  - admin-required mode (managed allowUnsandboxedCommands: false, or
//    allowManagedDomainsOnly): the repository's files (project, local) cannot
//    loosen the sandbox: see kAdminLocked;
//  - strictAllowlist and filesystem.disabled count from user, flag and managed
//    layers only; filesystem.disabled from managed alone once managed settings
//    configure the filesystem; bwrapPath and socatPath from managed only;
//  - a user, flag or managed `false` of allowUnsandboxedCommands holds against a
//    repository's `true`, and so does one of toolCache (sbx's own key);
//  - enableWeakerNestedSandbox (the weaker sandbox) is turned on only by user,
//    flag (--settings) or managed settings, or by the command line's
//    --weaker-sandbox, which ranks above every file but managed settings: a
//    `true` of the repository's files or of an agent file is left out, a
//    managed `false` holds against the command line;
//  - a repository's allowRead, allowWrite and additionalDirectories entries that
//    name a path at or under one that managed, flag, user or builtin settings (the
//    credential stores, credential_stores.hpp) deny reading are left out, with
//    symlinks resolved through the FsView;
//  - a builtin read deny is kept beside an equal entry of another layer: the two
//    yield differently (fs_rules.hpp);
//  - an untrusted project's files keep only what tightens the sandbox, and
//    of the permissions (route.hpp) only deny and ask rules and a mode that
//    allows no more than `default` does (default, plan, dontAsk);
//  - bypassPermissions as the default mode counts from user, flag and managed
//    settings only, and a `disableBypassPermissionsMode` of any layer holds.
#pragma once

#include <deque>
#include <iterator>
#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/settings/credential_stores.hpp"
#include "sbx/settings/layer.hpp"
#include "sbx/settings/limits.hpp"

namespace sbx {

// A merged value: what it is, and the layer that set it (nullopt: the default).
template <class T>
struct Value {
    T value{};
    std::optional<Source> source;
};

struct Policy {
    Value<bool> enabled{false, {}};
    Value<bool> auto_allow{true, {}};
    Value<bool> allow_unsandboxed{false, {}};   // sbx's default: false
    Value<bool> fail_if_unavailable{true, {}};  // sbx's default: true once enabled
    Value<bool> tool_cache{true, {}};           // sbx's own: a writable cache home per project
    Value<bool> quiet{false, {}};               // sbx's own: none of sbx run's informational lines
    // enableWeakerNestedSandbox or --weaker-sandbox: where user namespaces are
    // refused, the launcher runs the weaker sandbox instead of refusing.
    Value<bool> weaker_sandbox{false, {}};
    SourcedList excluded_commands;
    SourcedList blocked_commands;  // an agent file's shell skill's: refused whatever the mode or the sandbox
    std::vector<IgnoreRule> ignore_violations;

    struct Filesystem {
        SourcedList allow_write, deny_write, deny_read, allow_read;
        Value<bool> disabled{false, {}};
        Value<bool> managed_read_paths_only{false, {}};
        Value<bool> root_read_only{false, {}};  // an agent file's strict preset: the root is not writable
    } filesystem;

    struct Network {
        SourcedList allowed_domains, denied_domains, allow_unix_sockets;
        Value<bool> strict_allowlist{false, {}};
        Value<bool> allow_local_binding{false, {}};
        Value<bool> allow_all_unix_sockets{false, {}};
        Value<bool> managed_domains_only{false, {}};  // also refuses hosts no list allows
    } network;

    struct Credentials {
        SourcedList env_vars, files;
    } credentials;

    SourcedList additional_directories;
    std::optional<Sourced<std::string>> bwrap_path, socat_path;

    // The rules and mode that decide about shell commands (route.hpp).
    struct Permissions {
        SourcedList allow, deny, ask;  // Bash rules as written
        std::optional<Sourced<std::string>> default_mode;  // nullopt: default
        Value<bool> bypass_disabled{false, {}};
    } permissions;

    // sandbox.limits, by Limit (limits.hpp): the value (nullopt: no limit) and
    // the layer that set it (nullopt: sbx's default, LimitSpec::fallback).
    std::array<Value<std::optional<std::uint64_t>>, kLimitCount> limits = default_limits();

    static std::array<Value<std::optional<std::uint64_t>>, kLimitCount> default_limits() {
        std::array<Value<std::optional<std::uint64_t>>, kLimitCount> out{};
        for (std::size_t i = 0; i < kLimitCount; ++i) out[i].value = kLimits[i].fallback;
        return out;
    }

    // Admin-required mode; its source is the managed key that switched it on.
    Value<bool> admin_required{false, {}};
    bool trusted = true;

    std::vector<Warning> warnings;
};

struct MergeOptions {
    bool trusted = true;  // false: the project's files keep only what tightens
    // The command line asks for the weaker sandbox (`sbx run --weaker-sandbox`):
    // it counts above every file but managed settings.
    bool weaker_sandbox = false;
    // `sbx run --limit KEY=N`, by Limit: counted with the user's and managed
    // settings, the lowest of them winning.
    std::array<std::optional<std::uint64_t>, kLimitCount> limits{};
};


// The option that asks for the weaker sandbox, and the Source the policy gives it.
inline constexpr std::string_view kWeakerSandboxOption = "--weaker-sandbox";

// Whether a layer may turn the weaker sandbox on: it weakens confinement, so only
// the layers the sandboxed project can neither write nor ship may. Those are the
// user's, a --settings file and managed settings; not the repository's files,
// nor an agent file (which may come with the project), nor the builtin layer.
SBX_INLINE bool may_turn_on_weaker_sandbox(const Settings& layer);

// A path or pattern with the symlinks of its literal part resolved through `fs`:
// "/link/**/x" -> "/target/**/x"; a plain path as resolve() gives it.
SBX_INLINE expected<std::string> resolve_pattern(const FsView& fs, const std::string& p);

namespace detail {

inline constexpr std::string_view kUntrusted = "left out: the project is not trusted, and this would loosen the sandbox";
inline constexpr std::string_view kWeakerSandboxLayers =
    "only user, managed or --settings settings, or sbx run --weaker-sandbox, can turn on the weaker sandbox; left out";

// The command line's --weaker-sandbox over policy `p` (the layers merged, or the
// default policy): on, with the command line as its source, unless managed
// settings turned it off, which holds, with a warning naming them.
SBX_INLINE void weaker_sandbox_from_command_line(Policy& p);

// The command line's --limit values, as the Source each gets ("--limit KEY" of
// kCommandLineFile); nullopt where it gives none.
SBX_INLINE std::optional<Sourced<std::uint64_t>> limit_from_command_line(const MergeOptions& o, std::size_t i);

// The default policy's limits with the command line's given (no layer to merge):
// each one given holds, as the user's own.
SBX_INLINE void limits_from_command_line(Policy& p, const MergeOptions& o);

class Merger {
public:
    // Takes the layers over: their entries are moved into the policy.
    Merger(std::vector<Settings> layers, const MergeOptions& opt, const FsView& fs)
        : opt_(opt), fs_(fs), layers_(std::move(layers)) {  // fs: a CachedFs, since entries share directories
        // Highest precedence first. Several flag files (--settings, repeated) rank
        // among themselves by order: a later one above an earlier one.
        for (auto it = layers_.rbegin(); it != layers_.rend(); ++it) ordered_.push_back(&*it);
        std::stable_sort(ordered_.begin(), ordered_.end(),
                         [](const Settings* a, const Settings* b) { return a->layer > b->layer; });
    }

    expected<Policy> run();

private:
    const MergeOptions& opt_;
    const FsView& fs_;
    std::vector<Settings> layers_;
    std::vector<Settings*> ordered_;
    const Settings* managed_ = nullptr;
    Policy p_;

    bool admin() const { return p_.admin_required.value; }

    void drop(const Source& s, std::string why) { p_.warnings.push_back(Warning{s.file, s.key, std::move(why)}); }

    std::string admin_reason() const;

    // A boolean from the highest layer whose value `keep` accepts. `keep` returns
    // an empty string to accept, or the reason the value is left out.
    template <class Get, class Keep>
    void pick(Value<bool>& out, Get get, Keep keep) {
        for (const Settings* s : ordered_) {
            const SourcedBool& v = get(*s);
            if (!v) continue;
            std::string why = keep(*s, v->value);
            if (!why.empty()) {
                drop(v->source, std::move(why));
                continue;
            }
            out = {v->value, v->source};
            return;
        }
    }

    // Whether a layer other than the repository's set `field` to `value`.
    template <class Get>
    bool outside_repository_says(Get get, bool value) const {
        for (const Settings* s : ordered_)
            if (!is_repository(s->layer) && get(*s) && get(*s)->value == value) return true;
        return false;
    }

    // A repository value that would loosen: left out when untrusted, or when
    // admin-required mode locks it.
    std::string loosening(const Settings& s, bool admin_locked) const;

    // sandbox.limits (limits.hpp): the lowest value of the layers the project
    // neither writes nor ships, and of the command line, else the default; then
    // lowered, never raised, by the repository's files and an agent file.
    void limits();

    void booleans();

    // Entries of one list across layers, highest layer first, duplicates removed
    // (but a builtin entry, which yields only to an allowRead naming it, is no
    // duplicate of another layer's). `keep` returns an empty string to keep an
    // entry, or why it is left out.
    template <class Get, class Keep>
    void combine(SourcedList& out, Get get, Keep keep) {
        for (Settings* s : ordered_) {
            for (auto& e : get(*s)) {
                std::string why = keep(*s);
                if (!why.empty()) {
                    drop(e.source, std::move(why));
                    continue;
                }
                bool seen = false;
                for (const auto& o : out)
                    seen = seen || (o.value == e.value &&
                                    (o.source.layer == LayerKind::builtin) == (e.source.layer == LayerKind::builtin));
                if (!seen) out.push_back(std::move(e));
            }
        }
    }

    void lists();

    void permissions();

    // A path or pattern, split once, for the many comparisons below.
    struct Split {
        std::string text;
        bool wildcard;
        std::vector<std::string_view> comps;  // of text
        std::size_t literal = 0;             // how many leading components hold no wildcard

        explicit Split(std::string t) : text(std::move(t)), wildcard(glob::has_wildcard(text)) {
            comps = paths::components(text);
            while (literal < comps.size() && !glob::has_wildcard(comps[literal])) ++literal;
        }
        std::span<const std::string_view> literal_comps() const { return {comps.data(), literal}; }
        Split(const Split&) = delete;
        Split(Split&&) = delete;
    };

    // Whether `entry` (a path or pattern) names a path at or under `denied`. For a
    // plain deny the question is whether any path the entry can name lies there
    // (`~/*/id_rsa` reaches into `~/.ssh`). For a deny that is itself a pattern
    // only the entry's literal part is compared: a glob against a glob is settled
    // later, path by path, where the narrower rule wins and a tie goes to the deny.
    static bool reaches(const Split& entry, const Split& denied);

    // The repository's allowRead, allowWrite and additionalDirectories may not
    // reach into what managed, flag or user settings deny reading. Both sides are
    // compared as written and with their symlinks resolved.
    expected<void> leave_out_denied_reaches();
};

}  // namespace detail

// Merges settings layers (at most one per LayerKind but flag, whose files rank by
// their order, in any order otherwise) into the effective policy. Pure but for the FsView, which resolves symlinks.
SBX_INLINE expected<Policy> merge(std::vector<Settings>&& layers, const MergeOptions& options, const FsView& fs);

// The same, leaving the caller's layers as they are.
SBX_INLINE expected<Policy> merge(std::span<const Settings> layers, const MergeOptions& options, const FsView& fs);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_SETTINGS)

namespace sbx {

SBX_INLINE bool may_turn_on_weaker_sandbox(const Settings& layer) {
    if (layer.from == LayerFile::agent) return false;
    switch (layer.layer) {
        case LayerKind::user:
        case LayerKind::flag:
        case LayerKind::managed: return true;
        case LayerKind::builtin:
        case LayerKind::project:
        case LayerKind::local: return false;
    }
    return false;
}

SBX_INLINE expected<std::string> resolve_pattern(const FsView& fs, const std::string& p) {
    if (!glob::has_wildcard(p)) return resolve(fs, p);
    const std::string prefix = glob::literal_prefix(p);
    auto r = resolve(fs, prefix);
    SBX_TRY(r);
    return paths::normalize(*r + p.substr(prefix.size()));
}

}  // namespace sbx

namespace sbx::detail {

SBX_INLINE std::optional<Sourced<std::uint64_t>> limit_from_command_line(const MergeOptions& o, std::size_t i) {
    if (!o.limits[i]) return std::nullopt;
    return Sourced<std::uint64_t>{*o.limits[i], Source{LayerKind::flag, FileName(std::string(kCommandLineFile)),
                                                       std::string(kLimitOption) + " " + std::string(kLimits[i].key)}};
}

SBX_INLINE void limits_from_command_line(Policy& p, const MergeOptions& o) {
    for (std::size_t i = 0; i < kLimitCount; ++i)
        if (auto given = limit_from_command_line(o, i)) p.limits[i] = {given->value, given->source};
}

SBX_INLINE void weaker_sandbox_from_command_line(Policy& p) {
    const auto& from = p.weaker_sandbox.source;
    if (from && from->layer == LayerKind::managed && !p.weaker_sandbox.value) {
        p.warnings.push_back(Warning{std::string(kCommandLineFile), std::string(kWeakerSandboxOption),
                                     "left out: managed settings keep the weaker sandbox off (" + from->key + " in " +
                                         from->file + ")"});
        return;
    }
    p.weaker_sandbox = {true, Source{LayerKind::flag, FileName(std::string(kCommandLineFile)),
                                     std::string(kWeakerSandboxOption)}};
}

SBX_INLINE expected<Policy> Merger::run() {
    for (std::size_t i = 1; i < ordered_.size(); ++i)
        if (ordered_[i]->layer == ordered_[i - 1]->layer && ordered_[i]->layer != LayerKind::flag)
            return fail(Errc::invalid_argument,
                        "two settings files for the " + std::string(layer_name(ordered_[i]->layer)) + " layer");
    // Warnings of the files themselves, lowest layer first, as a person reads them.
    for (auto it = ordered_.rbegin(); it != ordered_.rend(); ++it)
        std::move((*it)->warnings.begin(), (*it)->warnings.end(), std::back_inserter(p_.warnings));
    p_.trusted = opt_.trusted;
    for (const Settings* s : ordered_)
        if (s->layer == LayerKind::managed) managed_ = s;

    if (managed_) {
        if (managed_->allow_unsandboxed && !managed_->allow_unsandboxed->value)
            p_.admin_required = {true, managed_->allow_unsandboxed->source};
        else if (managed_->network.managed_domains_only && managed_->network.managed_domains_only->value)
            p_.admin_required = {true, managed_->network.managed_domains_only->source};
    }
    booleans();
    lists();
    permissions();
    limits();
    SBX_TRY(leave_out_denied_reaches());
    return std::move(p_);
}

SBX_INLINE void Merger::limits() {
    const auto project_side = [](const Settings& s) { return is_repository(s.layer) || s.from == LayerFile::agent; };
    for (std::size_t i = 0; i < kLimitCount; ++i) {
        auto& out = p_.limits[i];
        std::optional<Sourced<std::uint64_t>> best;
        for (const Settings* s : ordered_) {
            const auto& v = s->limits[i];
            if (v && !project_side(*s) && (!best || v->value < best->value)) best = v;
        }
        if (auto given = detail::limit_from_command_line(opt_, i); given && (!best || given->value < best->value))
            best = std::move(given);
        if (best) out = {best->value, best->source};
        for (const Settings* s : ordered_) {
            const auto& v = s->limits[i];
            if (!v || !project_side(*s)) continue;
            if (!out.value || v->value <= *out.value) {
                if (!out.value || v->value < *out.value) out = {v->value, v->source};
                continue;
            }
            drop(v->source, "left out: the project's files can lower a limit, not raise it over " +
                                std::to_string(*out.value) + std::string(kLimits[i].unit) + " (" +
                                (out.source ? out.source->key + " in " + out.source->file : std::string("sbx's default")) +
                                ")");
        }
    }
}

SBX_INLINE std::string Merger::admin_reason() const {
    const auto& s = *p_.admin_required.source;
    return "left out: managed settings require the sandbox (" + s.key + " in " + s.file +
           "), and a repository file cannot loosen it";
}

SBX_INLINE std::string Merger::loosening(const Settings& s, bool admin_locked) const {
    if (!is_repository(s.layer)) return {};
    if (!opt_.trusted) return std::string(kUntrusted);
    if (admin_locked && admin()) return admin_reason();
    return {};
}

SBX_INLINE void Merger::booleans() {
    auto enabled = [](const Settings& s) -> const SourcedBool& { return s.enabled; };
    pick(p_.enabled, enabled, [&](const Settings& s, bool v) -> std::string {
        if (v) return {};
        auto why = loosening(s, false);
        if (!why.empty()) return why;
        if (is_repository(s.layer) && admin() && outside_repository_says(enabled, true)) return admin_reason();
        return {};
    });
    pick(p_.fail_if_unavailable, [](const Settings& s) -> const SourcedBool& { return s.fail_if_unavailable; },
         [&](const Settings& s, bool v) { return v ? std::string() : loosening(s, true); });
    auto unsandboxed = [](const Settings& s) -> const SourcedBool& { return s.allow_unsandboxed; };
    pick(p_.allow_unsandboxed, unsandboxed, [&](const Settings& s, bool v) -> std::string {
        if (!v) return {};
        auto why = loosening(s, false);
        if (!why.empty()) return why;
        if (is_repository(s.layer) && outside_repository_says(unsandboxed, false))
            return "left out: a user or managed `false` holds against a repository's `true`";
        return {};
    });
    // Any layer may turn the tool cache off; a repository cannot turn it back
    // on over a user's, flag file's or managed `false`.
    auto tool_cache = [](const Settings& s) -> const SourcedBool& { return s.tool_cache; };
    pick(p_.tool_cache, tool_cache, [&](const Settings& s, bool v) -> std::string {
        if (v && is_repository(s.layer) && outside_repository_says(tool_cache, false))
            return "left out: a user, flag or managed `false` holds against a repository's `true`";
        return {};
    });
    // Quiet: from the highest layer that says; it silences only lines that say
    // what sbx did (the root found, the variables left out), never a refusal
    // or a warning, so any layer may.
    pick(p_.quiet, [](const Settings& s) -> const SourcedBool& { return s.quiet; },
         [](const Settings&, bool) { return std::string(); });
    // The weaker sandbox: `true` only from a layer that may turn it on; `false`
    // from any. A managed `false` ranks above the rest (rule 1), and above
    // the command line too.
    pick(p_.weaker_sandbox, [](const Settings& s) -> const SourcedBool& { return s.weaker_sandbox; },
         [](const Settings& s, bool v) {
             return v && !may_turn_on_weaker_sandbox(s) ? std::string(kWeakerSandboxLayers) : std::string();
         });
    if (opt_.weaker_sandbox) weaker_sandbox_from_command_line(p_);
    pick(p_.auto_allow, [](const Settings& s) -> const SourcedBool& { return s.auto_allow; },
         [&](const Settings& s, bool v) { return v ? loosening(s, false) : std::string(); });
    pick(p_.network.allow_local_binding,
         [](const Settings& s) -> const SourcedBool& { return s.network.allow_local_binding; },
         [&](const Settings& s, bool v) { return v ? loosening(s, true) : std::string(); });
    pick(p_.network.allow_all_unix_sockets,
         [](const Settings& s) -> const SourcedBool& { return s.network.allow_all_unix_sockets; },
         [&](const Settings& s, bool v) { return v ? loosening(s, true) : std::string(); });
    pick(p_.network.strict_allowlist,
         [](const Settings& s) -> const SourcedBool& { return s.network.strict_allowlist; },
         [&](const Settings& s, bool) -> std::string {
             if (is_repository(s.layer)) return "left out: counts only from user and managed settings";
             return {};
         });
    const bool managed_fs = managed_ && managed_->filesystem.configured;
    pick(p_.filesystem.disabled, [](const Settings& s) -> const SourcedBool& { return s.filesystem.disabled; },
         [&](const Settings& s, bool) -> std::string {
             if (managed_fs && s.layer != LayerKind::managed)
                 return "left out: managed settings configure the filesystem, so only they can disable it";
             if (is_repository(s.layer)) return "left out: counts only from user and managed settings";
             return {};
         });
    auto managed_only = [&](const Settings& s, bool) -> std::string {
        if (s.layer != LayerKind::managed) return "left out: counts only from managed settings";
        return {};
    };
    pick(p_.filesystem.managed_read_paths_only,
         [](const Settings& s) -> const SourcedBool& { return s.filesystem.managed_read_paths_only; }, managed_only);
    pick(p_.network.managed_domains_only,
         [](const Settings& s) -> const SourcedBool& { return s.network.managed_domains_only; }, managed_only);
    // Only an agent file's strict preset sets it, and it only narrows: a true
    // holds whatever ranks above it.
    for (const Settings* s : ordered_)
        if (const auto& r = s->filesystem.root_read_only; r && r->value && !p_.filesystem.root_read_only.value)
            p_.filesystem.root_read_only = {true, r->source};

    for (const Settings* s : ordered_) {
        for (auto [slot, from] : {std::pair{&p_.bwrap_path, &s->bwrap_path}, std::pair{&p_.socat_path, &s->socat_path}}) {
            if (!*from) continue;
            if (s->layer != LayerKind::managed) drop((*from)->source, "left out: counts only from managed settings");
            else *slot = **from;
        }
    }
}

SBX_INLINE void Merger::lists() {
    auto always = [](const Settings&) { return std::string(); };
    auto locked = [&](const Settings& s) { return loosening(s, true); };
    auto untrusted_only = [&](const Settings& s) { return loosening(s, false); };
    const bool domains_managed_only = p_.network.managed_domains_only.value;
    const bool reads_managed_only = p_.filesystem.managed_read_paths_only.value;

    combine(p_.excluded_commands, [](Settings& s) -> SourcedList& { return s.excluded_commands; }, locked);
    combine(p_.blocked_commands, [](Settings& s) -> SourcedList& { return s.blocked_commands; }, always);
    for (Settings* s : ordered_) {
        for (auto& rule : s->ignore_violations) {
            std::string why = locked(*s);
            if (!why.empty()) drop(rule.source, std::move(why));
            else p_.ignore_violations.push_back(std::move(rule));
        }
    }
    combine(p_.filesystem.allow_write, [](Settings& s) -> SourcedList& { return s.filesystem.allow_write; },
            locked);
    combine(p_.filesystem.deny_write, [](Settings& s) -> SourcedList& { return s.filesystem.deny_write; },
            always);
    combine(p_.filesystem.deny_read, [](Settings& s) -> SourcedList& { return s.filesystem.deny_read; },
            always);
    combine(p_.filesystem.allow_read, [](Settings& s) -> SourcedList& { return s.filesystem.allow_read; },
            [&](const Settings& s) -> std::string {
                if (reads_managed_only && s.layer != LayerKind::managed)
                    return "left out: managed settings allow only their own allowRead paths "
                           "(allowManagedReadPathsOnly)";
                return untrusted_only(s);
            });
    combine(p_.network.allowed_domains,
            [](Settings& s) -> SourcedList& { return s.network.allowed_domains; },
            [&](const Settings& s) -> std::string {
                if (domains_managed_only && s.layer != LayerKind::managed)
                    return "left out: managed settings allow only their own domains (allowManagedDomainsOnly)";
                return locked(s);
            });
    combine(p_.network.denied_domains,
            [](Settings& s) -> SourcedList& { return s.network.denied_domains; }, always);
    combine(p_.network.allow_unix_sockets,
            [](Settings& s) -> SourcedList& { return s.network.allow_unix_sockets; }, locked);
    combine(p_.credentials.env_vars, [](Settings& s) -> SourcedList& { return s.credentials.env_vars; },
            always);
    combine(p_.credentials.files, [](Settings& s) -> SourcedList& { return s.credentials.files; },
            always);
    combine(p_.additional_directories,
            [](Settings& s) -> SourcedList& { return s.additional_directories; }, locked);
}

SBX_INLINE void Merger::permissions() {
    combine(p_.permissions.allow, [](Settings& s) -> SourcedList& { return s.permissions.allow; },
            [&](const Settings& s) { return loosening(s, false); });
    combine(p_.permissions.deny, [](Settings& s) -> SourcedList& { return s.permissions.deny; },
            [](const Settings&) { return std::string(); });
    combine(p_.permissions.ask, [](Settings& s) -> SourcedList& { return s.permissions.ask; },
            [](const Settings&) { return std::string(); });
    for (const Settings* s : ordered_) {
        const auto& mode = s->permissions.default_mode;
        if (!mode) continue;
        const auto m = permission_mode(mode->value);
        const bool wider = m == PermissionMode::accept_edits || m == PermissionMode::bypass_permissions ||
                           m == PermissionMode::auto_mode;
        if (is_repository(s->layer) && m == PermissionMode::bypass_permissions) {
            drop(mode->source, "left out: only user, flag or managed settings choose bypassPermissions");
            continue;
        }
        if (std::string why = wider ? loosening(*s, false) : std::string(); !why.empty()) {
            drop(mode->source, std::move(why));
            continue;
        }
        p_.permissions.default_mode = *mode;
        break;
    }
    for (const Settings* s : ordered_)
        if (const auto& d = s->permissions.bypass_disabled; d && d->value && !p_.permissions.bypass_disabled.value)
            p_.permissions.bypass_disabled = {true, d->source};
}

SBX_INLINE bool Merger::reaches(const Split& entry, const Split& denied) {
    if (denied.wildcard) return glob::matches_at_or_above(denied.comps, entry.literal_comps());
    if (!entry.wildcard) return paths::at_or_under(entry.text, denied.text);
    return glob::overlaps_at_or_under(entry.comps, denied.comps);
}

SBX_INLINE expected<void> Merger::leave_out_denied_reaches() {
    struct Denied {
        std::deque<Split> forms;  // as written, then resolved if different
        const Source* source;
    };
    std::deque<Denied> denied;
    for (auto* list : {&p_.filesystem.deny_read, &p_.credentials.files}) {
        for (const auto& d : *list) {
            if (is_repository(d.source.layer)) continue;
            auto& entry = denied.emplace_back(Denied{{}, &d.source});
            entry.forms.emplace_back(d.value);
            if (auto real = resolve_pattern(fs_, d.value); real && *real != d.value) entry.forms.emplace_back(std::move(*real));
        }
    }
    if (denied.empty()) return {};
    for (auto* list : {&p_.filesystem.allow_read, &p_.filesystem.allow_write, &p_.additional_directories}) {
        SourcedList kept;
        for (auto& e : *list) {
            if (!is_repository(e.source.layer)) {
                kept.push_back(std::move(e));
                continue;
            }
            auto real = resolve_pattern(fs_, e.value);
            if (!real) {
                drop(e.source, "left out: its symlinks could not be resolved (" + to_string(real.error()) +
                                   "), so it might reach a denied path");
                continue;
            }
            const Split as_written(e.value);
            const std::optional<Split> leads_to =
                *real != e.value ? std::optional<Split>(std::in_place, *real) : std::nullopt;
            const Denied* hit = nullptr;
            for (const auto& d : denied) {
                for (const auto& form : d.forms)
                    if (reaches(as_written, form) || (leads_to && reaches(*leads_to, form))) hit = &d;
                if (hit) break;
            }
            if (hit) {
                std::string via = *real != e.value ? " (it leads to " + *real + ")" : std::string();
                std::string what;
                if (const CredentialStore* store = credential_store_of(*hit->source))
                    what = ", a credential store sbx hides (" + std::string(store->reason) + ", " +
                           hit->source->key + "); only user, flag and managed settings can open one";
                else
                    what = ", which " + std::string(layer_name(hit->source->layer)) + " settings deny reading (" +
                           hit->source->key + " in " + hit->source->file + ")";
                drop(e.source, "left out: " + e.value + via + " is at or under " + hit->forms.front().text + what);
                continue;
            }
            kept.push_back(std::move(e));
        }
        *list = std::move(kept);
    }
    return {};
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE expected<Policy> merge(std::vector<Settings>&& layers, const MergeOptions& options, const FsView& fs) {
    return with_cache(fs, [&](const CachedFs& cached) { return detail::Merger(std::move(layers), options, cached).run(); });
}

SBX_INLINE expected<Policy> merge(std::span<const Settings> layers, const MergeOptions& options, const FsView& fs) {
    return merge(std::vector<Settings>(layers.begin(), layers.end()), options, fs);
}

}  // namespace sbx
#endif
