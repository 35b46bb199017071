// sbx/settings/defaults.hpp - the policy sbx uses when no settings file exists at all, and
// the built-in credential denies it keeps under every settings file.
//
// default_policy() decides what a command may do when nobody has written a word:
// the sandbox is on, and a command that cannot be confined does not run; it writes
// only where every plan lets it (the root and its own temporary directory); it
// reads everywhere but the credential stores of kCredentialStores; it has no
// network. effective_policy() decides between that default and the merge: with no
// layer at all the default applies; with any layer, an empty file included, the
// settings decide, as in Claude Code, but for the credential stores: they stay
// denied as a `builtin` layer below every file, and only an allowRead entry of
// user, flag or managed settings that names a store (or something in it) lifts
// its deny, with a warning. Claude Code has no such list.
//
// Every value the default sets carries the Source of the `builtin` layer, so
// `sbx policy` shows where it came from.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/settings/credential_stores.hpp"
#include "sbx/settings/policy.hpp"
#include "sbx/settings/layer.hpp"

namespace sbx {

// The policy for a machine with no settings file at all. `homes` are the home
// directories to keep the stores of (absolute and normalised: $HOME's and the
// account's, when they differ). Promises: enabled (source: the builtin layer),
// failIfUnavailable true, allowUnsandboxedCommands false, every credential store
// denied for reading under each home (credential_store_denies()) but the public
// files credential_store_openings() keeps readable (~/.ssh/known_hosts), no allowed
// domain and so no network, no write beyond what every plan grants, no warnings.
SBX_INLINE Policy default_policy(const std::vector<std::string>& homes);

namespace detail {

// `p` with `home` written as `~`, for people.
SBX_INLINE std::string tilde(const std::string& p, const std::string& home);

// A warning on every allowRead entry that lifts a built-in credential deny: one
// whose literal part is at or under the store (fs_rules.hpp decides the same).
// An entry that some other read deny names exactly stays hidden (a tie goes to
// that deny), so it lifts nothing and is not warned about.
SBX_INLINE void warn_lifts(Policy& p, const std::string& home);

}  // namespace detail

// The policy for a set of settings layers: default_policy(homes) when there are
// none (with options.trusted and options.weaker_sandbox applied), else merge()
// of the layers over a `builtin` layer holding credential_store_denies(homes),
// with the same options. Any layer, even a file
// that says nothing, means the settings decide everything else: the rest of the
// default is not merged under them. `homes` as for default_policy(); the first
// is $HOME's, which warnings write as `~`. The stores' openings follow the
// merged allowRead, those no settings deny covers (none under
// allowManagedReadPathsOnly, where managed settings alone open reads). Each
// allowRead entry that lifts a store's deny is a warning (detail::warn_lifts),
// sbx's openings aside.
SBX_INLINE expected<Policy> effective_policy(std::vector<Settings>&& layers, const MergeOptions& options,
                                         const FsView& fs, const std::vector<std::string>& homes);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_SETTINGS)

namespace sbx {

SBX_INLINE Policy default_policy(const std::vector<std::string>& homes) {
    const FileName file{std::string(kBuiltinFile)};
    Policy p;
    p.enabled = {true, Source{LayerKind::builtin, file, "defaults.enabled"}};
    p.fail_if_unavailable = {true, {}};  // sbx's default for every policy
    p.allow_unsandboxed = {false, {}};   // likewise
    p.filesystem.deny_read = credential_store_denies(homes);
    p.filesystem.allow_read = credential_store_openings(homes, p.filesystem.deny_read);
    return p;
}

}  // namespace sbx

namespace sbx::detail {

SBX_INLINE std::string tilde(const std::string& p, const std::string& home) {
    if (home.empty() || home == "/" || !paths::at_or_under(p, home)) return p;
    return "~" + p.substr(home.size());
}

SBX_INLINE void warn_lifts(Policy& p, const std::string& home) {
    for (const auto& a : p.filesystem.allow_read) {
        if (is_store_opening(a.source)) continue;  // sbx's own, and public
        const std::string named = glob::has_wildcard(a.value) ? glob::literal_prefix(a.value) : a.value;
        auto names_it = [&](const Sourced<std::string>& d) {
            return d.value == a.value && credential_store_of(d.source) == nullptr;
        };
        if (std::any_of(p.filesystem.deny_read.begin(), p.filesystem.deny_read.end(), names_it) ||
            std::any_of(p.credentials.files.begin(), p.credentials.files.end(), names_it))
            continue;
        for (const auto& d : p.filesystem.deny_read) {
            const CredentialStore* store = credential_store_of(d.source);
            if (store == nullptr || !paths::at_or_under(named, d.value)) continue;
            std::string msg = "filesystem.allowRead " + tilde(a.value, home) + " lifts the built-in denial of " +
                              tilde(d.value, home) + " (" + std::string(store->reason) + ")";
            msg += named == d.value && !glob::has_wildcard(a.value)
                       ? ": commands can read it"
                       : " for what it names: commands can read that, not the rest of the store";
            p.warnings.push_back(Warning{a.source.file, a.source.key, std::move(msg)});
        }
    }
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE expected<Policy> effective_policy(std::vector<Settings>&& layers, const MergeOptions& options,
                                         const FsView& fs, const std::vector<std::string>& homes) {
    if (layers.empty()) {
        Policy p = default_policy(homes);
        p.trusted = options.trusted;
        if (options.weaker_sandbox) detail::weaker_sandbox_from_command_line(p);
        detail::limits_from_command_line(p, options);
        return p;
    }
    Settings builtin;
    builtin.layer = LayerKind::builtin;
    builtin.file = std::string(kBuiltinFile);
    builtin.filesystem.deny_read = credential_store_denies(homes);
    layers.push_back(std::move(builtin));
    auto p = merge(std::move(layers), options, fs);
    SBX_TRY(p);
    // Where managed settings alone open reads, they open these too.
    if (!p->filesystem.managed_read_paths_only.value)
        for (auto& o : credential_store_openings(homes, p->filesystem.deny_read))
            p->filesystem.allow_read.push_back(std::move(o));
    detail::warn_lifts(*p, homes.empty() ? std::string() : paths::normalize(homes.front()));
    return p;
}

}  // namespace sbx
#endif
