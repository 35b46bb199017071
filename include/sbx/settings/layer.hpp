// sbx/settings/layer.hpp - what one settings file says: the Settings layer.
//
// The types alone, for what reads layers without parsing one (merge(), the
// defaults, the protected entries): parse_settings() in settings.hpp makes
// them from a file's text, and pulls in the JSON reader (simdjson) to do so.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/settings/limits.hpp"

namespace sbx {

// `ignoreViolations`: for commands containing `command` (`*`: every command),
// violations containing any of `violations` are not reported.
struct IgnoreRule {
    std::string command;
    std::vector<std::string> violations;
    Source source;
};

// Claude Code's permission modes: a settings file's `permissions.defaultMode`,
// or the mode a host is in when it asks route.hpp about a command.
enum class PermissionMode {
    default_mode,        // default: ask where no rule decides
    accept_edits,        // acceptEdits
    plan,                // plan: nothing runs wider than it reads
    bypass_permissions,  // bypassPermissions: allow where no rule asks or denies
    dont_ask,            // dontAsk: refuse what would ask
    auto_mode,           // auto: a classifier answers what would ask
};

inline constexpr PermissionMode kPermissionModes[] = {
    PermissionMode::default_mode,       PermissionMode::accept_edits, PermissionMode::plan,
    PermissionMode::bypass_permissions, PermissionMode::dont_ask,     PermissionMode::auto_mode};

constexpr std::string_view mode_name(PermissionMode m) noexcept {
    switch (m) {
        case PermissionMode::default_mode: return "default";
        case PermissionMode::accept_edits: return "acceptEdits";
        case PermissionMode::plan: return "plan";
        case PermissionMode::bypass_permissions: return "bypassPermissions";
        case PermissionMode::dont_ask: return "dontAsk";
        case PermissionMode::auto_mode: return "auto";
    }
    return "?";
}

// The mode named `name` as Claude Code writes it; nullopt for any other text.
constexpr std::optional<PermissionMode> permission_mode(std::string_view name) noexcept {
    for (PermissionMode m : kPermissionModes)
        if (mode_name(m) == name) return m;
    return std::nullopt;
}

// What a layer was read from: a settings file, or an agent file (agent_file.hpp),
// which may come with the project it confines (`.claude/agents/`), whatever its
// layer: merge() does not let one weaken the sandbox itself (policy.hpp).
enum class LayerFile { settings, agent };

// What one settings file says. Unset values are nullopt or empty lists.
struct Settings {
    LayerKind layer = LayerKind::user;
    std::string file;
    LayerFile from = LayerFile::settings;

    SourcedBool enabled;
    SourcedBool auto_allow;         // autoAllowBashIfSandboxed
    SourcedBool allow_unsandboxed;  // allowUnsandboxedCommands
    SourcedBool fail_if_unavailable;
    SourcedBool tool_cache;  // sbx's own key: a writable cache home per project (tool_cache.hpp)
    SourcedBool quiet;       // sbx's own key: none of sbx run's informational lines
    // enableWeakerNestedSandbox: where user namespaces are refused, run under the
    // weaker sandbox (Landlock and seccomp, no namespaces) instead of refusing.
    // Only some layers may turn it on (policy.hpp).
    SourcedBool weaker_sandbox;
    SourcedList excluded_commands;
    // Program names no command may run, confined or not: an agent file's shell
    // skill's blocked_commands (no settings key sets them).
    SourcedList blocked_commands;
    std::vector<IgnoreRule> ignore_violations;

    struct Filesystem {
        SourcedList allow_write, deny_write, deny_read, allow_read;  // absolute paths or patterns
        SourcedBool disabled;
        SourcedBool managed_read_paths_only;  // allowManagedReadPathsOnly
        // The root the caller sandboxes is not writable: only the write folders
        // are. No settings key sets it; an agent file's strict preset does.
        SourcedBool root_read_only;
        bool configured = false;  // the file sets any sandbox.filesystem key
    } filesystem;

    struct Network {
        SourcedList allowed_domains, denied_domains;
        SourcedList allow_unix_sockets;  // absolute paths
        SourcedBool strict_allowlist;
        SourcedBool allow_local_binding;
        SourcedBool allow_all_unix_sockets;
        SourcedBool managed_domains_only;  // allowManagedDomainsOnly
    } network;

    struct Credentials {
        SourcedList env_vars;  // variable names
        SourcedList files;     // absolute paths or patterns
    } credentials;

    // sandbox.limits, by Limit (limits.hpp); nullopt where the file sets none.
    std::array<std::optional<Sourced<std::uint64_t>>, kLimitCount> limits{};

    SourcedList additional_directories;  // permissions.additionalDirectories
    std::optional<Sourced<std::string>> bwrap_path, socat_path;

    // The permission rules that decide about shell commands (route.hpp); the
    // Edit, Read and WebFetch rules are read into the lists above instead.
    struct Permissions {
        SourcedList allow, deny, ask;  // Bash rules as written: `Bash`, `Bash(git push *)`
        std::optional<Sourced<std::string>> default_mode;  // a mode_name()
        SourcedBool bypass_disabled;  // disableBypassPermissionsMode: "disable"
    } permissions;

    std::vector<Warning> warnings;
};

// Where a settings file came from, and how its relative paths resolve.
struct SettingsSource {
    LayerKind layer = LayerKind::user;
    std::string file;  // shown in errors and provenance; never opened here
    paths::Base base;  // home, and the file's project (X for X/.claude/settings.json)
    std::string root;  // the project being sandboxed: permission rules' `x` and `./x`
};

// The project a settings file belongs to: X for X/.claude/<file>, else the file's
// own directory. Relative paths in the file are relative to it.
SBX_INLINE std::string settings_project_dir(std::string_view file);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_SETTINGS)

namespace sbx {

SBX_INLINE std::string settings_project_dir(std::string_view file) {
    std::string dir = paths::parent(paths::normalize(file));
    auto comps = paths::components(dir);
    if (!comps.empty() && comps.back() == ".claude") return paths::parent(dir);
    return dir;
}

}  // namespace sbx
#endif
