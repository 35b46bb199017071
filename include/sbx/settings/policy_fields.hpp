// sbx/settings/policy_fields.hpp - the effective policy's fields, one table.
//
// kPolicyFields lists every value of a Policy that people and programs read: its
// name, how to get it, which way it opens the sandbox and what it means. The
// JSON writer here, the text of `sbx policy` (tools/sbx/print_policy.cpp) and
// `sbx diff` (review/value_diff.hpp, review/decision_diff.hpp) all walk it, so a
// field added to the Policy is added to the three by one line here. The table's
// order is theirs: a name "group.key" is written inside the JSON object "group",
// and a group's fields stand together.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>

#include "sbx/core/inline.hpp"
#include "sbx/core/json_write.hpp"
#include "sbx/settings/limits.hpp"
#include "sbx/settings/policy.hpp"

namespace sbx {

// One field of the Policy.
struct PolicyField {
    enum class Kind {
        flag,     // a Value<bool>
        list,     // a SourcedList
        ignores,  // ignoreViolations: the IgnoreRules
        text,     // bwrapPath, socatPath, defaultMode: an optional Sourced<std::string>
        limit,    // sandbox.limits: a Value of an optional number (nullopt: no limit); higher opens
    };
    // What a list's entries name, for the samples `sbx diff` tries.
    enum class Names { paths, hosts, other };

    std::string_view name;  // as `sbx policy` and `sbx diff` print it
    Kind kind;
    const Value<bool>& (*flag)(const Policy&) = nullptr;
    const SourcedList& (*list)(const Policy&) = nullptr;
    const std::optional<Sourced<std::string>>& (*text)(const Policy&) = nullptr;
    // A flag's more open value (nullopt: neither is); for a list, whether adding
    // an entry opens the sandbox (true) or closes it (false). Unused otherwise.
    std::optional<bool> open;
    Names names = Names::other;
    std::string_view meaning;  // what `true`, an entry, or the value does, for people
    std::string_view unset;    // a text field's value when no layer sets it, for people
    const Value<std::optional<std::uint64_t>>& (*limit)(const Policy&) = nullptr;
    std::string_view unit;     // a limit's: "s", "MiB", "" (limits.hpp)

    // The JSON object the field is written in ("" for the top level), and its key there.
    constexpr std::string_view group() const noexcept {
        const auto dot = name.find('.');
        return dot == std::string_view::npos ? std::string_view() : name.substr(0, dot);
    }
    constexpr std::string_view key() const noexcept {
        const auto dot = name.find('.');
        return dot == std::string_view::npos ? name : name.substr(dot + 1);
    }
};

namespace detail {

constexpr PolicyField flag_field(std::string_view name, const Value<bool>& (*get)(const Policy&),
                                 std::optional<bool> open, std::string_view meaning) {
    return {name, PolicyField::Kind::flag, get, nullptr, nullptr, open, PolicyField::Names::other, meaning, {}, nullptr, {}};
}

constexpr PolicyField list_field(std::string_view name, const SourcedList& (*get)(const Policy&), bool adding_opens,
                                 PolicyField::Names names, std::string_view meaning) {
    return {name, PolicyField::Kind::list, nullptr, get, nullptr, adding_opens, names, meaning, {}, nullptr, {}};
}

constexpr PolicyField text_field(std::string_view name, const std::optional<Sourced<std::string>>& (*get)(const Policy&),
                                 std::string_view meaning, std::string_view unset) {
    return {name, PolicyField::Kind::text, nullptr, nullptr, get, true, PolicyField::Names::other, meaning, unset, nullptr, {}};
}

// A limit's field, named "limits.KEY" for the key of `l` (limits.hpp).
constexpr PolicyField limit_field(Limit l, std::string_view name,
                                  const Value<std::optional<std::uint64_t>>& (*get)(const Policy&)) {
    return {name, PolicyField::Kind::limit, nullptr, nullptr, nullptr, true, PolicyField::Names::other,
            limit_spec(l).meaning, "none", get, limit_spec(l).unit};
}

}  // namespace detail

// The fields in the order `sbx policy` prints them. A changed program counts as
// opening the sandbox: a different program confines, for a person to look at;
// and so does a changed default mode.
inline constexpr PolicyField kPolicyFields[] = {
    detail::flag_field("adminRequired", [](const Policy& p) -> const Value<bool>& { return p.admin_required; }, false,
                       "the repository's files cannot loosen the sandbox"),
    detail::flag_field("enabled", [](const Policy& p) -> const Value<bool>& { return p.enabled; }, false,
                       "commands run in the sandbox"),
    detail::flag_field("autoAllow", [](const Policy& p) -> const Value<bool>& { return p.auto_allow; }, std::nullopt,
                       "Claude Code runs sandboxed commands without asking; the sandbox is the same"),
    detail::flag_field("allowUnsandboxed", [](const Policy& p) -> const Value<bool>& { return p.allow_unsandboxed; },
                       true, "a command may be run outside the sandbox"),
    detail::flag_field("failIfUnavailable",
                       [](const Policy& p) -> const Value<bool>& { return p.fail_if_unavailable; }, false,
                       "a command that cannot be confined does not run"),
    detail::flag_field("weakerSandbox", [](const Policy& p) -> const Value<bool>& { return p.weaker_sandbox; }, true,
                       "where user namespaces are refused, commands run in the weaker sandbox"),
    detail::flag_field("toolCache", [](const Policy& p) -> const Value<bool>& { return p.tool_cache; }, true,
                       "commands get a writable cache home of the project's"),
    detail::flag_field("quiet", [](const Policy& p) -> const Value<bool>& { return p.quiet; }, std::nullopt,
                       "sbx run prints none of its informational lines; refusals and warnings still print"),
    detail::list_field("excludedCommands", [](const Policy& p) -> const SourcedList& { return p.excluded_commands; },
                       true, PolicyField::Names::other, "the command runs outside the sandbox"),
    detail::list_field("blockedCommands", [](const Policy& p) -> const SourcedList& { return p.blocked_commands; },
                       false, PolicyField::Names::other,
                       "no command of the line may run this program, confined or not (an agent file's shell skill)"),
    {"ignoreViolations", PolicyField::Kind::ignores, nullptr, nullptr, nullptr, std::nullopt,
     PolicyField::Names::other, "violations of the command that hold the text are not reported", {}, nullptr, {}},
    detail::list_field("filesystem.allowWrite",
                       [](const Policy& p) -> const SourcedList& { return p.filesystem.allow_write; }, true,
                       PolicyField::Names::paths, "commands may write there"),
    detail::list_field("filesystem.denyWrite",
                       [](const Policy& p) -> const SourcedList& { return p.filesystem.deny_write; }, false,
                       PolicyField::Names::paths, "commands may not write there"),
    detail::list_field("filesystem.denyRead",
                       [](const Policy& p) -> const SourcedList& { return p.filesystem.deny_read; }, false,
                       PolicyField::Names::paths, "commands may not read there"),
    detail::list_field("filesystem.allowRead",
                       [](const Policy& p) -> const SourcedList& { return p.filesystem.allow_read; }, true,
                       PolicyField::Names::paths, "re-opens reading inside a denied region"),
    detail::flag_field("filesystem.disabled",
                       [](const Policy& p) -> const Value<bool>& { return p.filesystem.disabled; }, true,
                       "no filesystem isolation at all"),
    detail::flag_field("filesystem.allowManagedReadPathsOnly",
                       [](const Policy& p) -> const Value<bool>& { return p.filesystem.managed_read_paths_only; },
                       false, "only managed allowRead entries count"),
    detail::flag_field("filesystem.rootReadOnly",
                       [](const Policy& p) -> const Value<bool>& { return p.filesystem.root_read_only; }, false,
                       "the root is not writable, only the write folders are (an agent file's strict preset)"),
    detail::list_field("network.allowedDomains",
                       [](const Policy& p) -> const SourcedList& { return p.network.allowed_domains; }, true,
                       PolicyField::Names::hosts, "commands may reach the host"),
    detail::list_field("network.deniedDomains",
                       [](const Policy& p) -> const SourcedList& { return p.network.denied_domains; }, false,
                       PolicyField::Names::hosts, "commands may not reach the host"),
    detail::list_field("network.allowUnixSockets",
                       [](const Policy& p) -> const SourcedList& { return p.network.allow_unix_sockets; }, true,
                       PolicyField::Names::other, "commands may connect to the socket"),
    detail::flag_field("network.strictAllowlist",
                       [](const Policy& p) -> const Value<bool>& { return p.network.strict_allowlist; }, false,
                       "hosts no list allows are refused without asking"),
    detail::flag_field("network.allowLocalBinding",
                       [](const Policy& p) -> const Value<bool>& { return p.network.allow_local_binding; }, true,
                       "commands reach servers on this machine's loopback"),
    detail::flag_field("network.allowAllUnixSockets",
                       [](const Policy& p) -> const Value<bool>& { return p.network.allow_all_unix_sockets; }, true,
                       "commands connect to every Unix socket"),
    detail::flag_field("network.allowManagedDomainsOnly",
                       [](const Policy& p) -> const Value<bool>& { return p.network.managed_domains_only; }, false,
                       "only managed allowedDomains count, and other hosts are refused"),
    detail::list_field("credentials.envVars",
                       [](const Policy& p) -> const SourcedList& { return p.credentials.env_vars; }, false,
                       PolicyField::Names::other, "the variable does not reach commands"),
    detail::list_field("credentials.files", [](const Policy& p) -> const SourcedList& { return p.credentials.files; },
                       false, PolicyField::Names::paths, "commands may not read the file"),
    detail::list_field("additionalDirectories",
                       [](const Policy& p) -> const SourcedList& { return p.additional_directories; }, true,
                       PolicyField::Names::paths, "commands may write there"),
    detail::list_field("permissions.bashAllow",
                       [](const Policy& p) -> const SourcedList& { return p.permissions.allow; }, true,
                       PolicyField::Names::other, "the shell commands it matches are approved (sbx route)"),
    detail::list_field("permissions.bashAsk", [](const Policy& p) -> const SourcedList& { return p.permissions.ask; },
                       false, PolicyField::Names::other, "the shell commands it matches ask first (sbx route)"),
    detail::list_field("permissions.bashDeny",
                       [](const Policy& p) -> const SourcedList& { return p.permissions.deny; }, false,
                       PolicyField::Names::other, "the shell commands it matches are refused (sbx route)"),
    detail::text_field(
        "permissions.defaultMode",
        [](const Policy& p) -> const std::optional<Sourced<std::string>>& { return p.permissions.default_mode; },
        "the permission mode when a host names none (sbx route)", "default"),
    detail::flag_field("permissions.disableBypassPermissionsMode",
                       [](const Policy& p) -> const Value<bool>& { return p.permissions.bypass_disabled; }, false,
                       "bypassPermissions mode is refused (sbx route)"),
    detail::limit_field(Limit::timeout, "limits.timeoutSeconds",
                        [](const Policy& p) -> const Value<std::optional<std::uint64_t>>& { return p.limits[0]; }),
    detail::limit_field(Limit::memory, "limits.memoryMiB",
                        [](const Policy& p) -> const Value<std::optional<std::uint64_t>>& { return p.limits[1]; }),
    detail::limit_field(Limit::processes, "limits.processes",
                        [](const Policy& p) -> const Value<std::optional<std::uint64_t>>& { return p.limits[2]; }),
    detail::limit_field(Limit::cpu, "limits.cpuSeconds",
                        [](const Policy& p) -> const Value<std::optional<std::uint64_t>>& { return p.limits[3]; }),
    detail::limit_field(Limit::file_size, "limits.fileSizeMiB",
                        [](const Policy& p) -> const Value<std::optional<std::uint64_t>>& { return p.limits[4]; }),
    detail::limit_field(Limit::tmpdir, "limits.tmpdirMiB",
                        [](const Policy& p) -> const Value<std::optional<std::uint64_t>>& { return p.limits[5]; }),
    detail::text_field(
        "bwrapPath", [](const Policy& p) -> const std::optional<Sourced<std::string>>& { return p.bwrap_path; },
        "the program that confines commands", "from PATH"),
    detail::text_field(
        "socatPath", [](const Policy& p) -> const std::optional<Sourced<std::string>>& { return p.socat_path; },
        "the program that confines commands", "from PATH"),
};

namespace detail {

// Whether each group's fields stand together and no name is there twice: the
// JSON writer opens a group's object once.
constexpr bool fields_well_formed() {
    constexpr std::size_t n = std::size(kPolicyFields);
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = i + 1; j < n; ++j) {
            if (kPolicyFields[i].name == kPolicyFields[j].name) return false;
            const bool apart = kPolicyFields[j - 1].group() != kPolicyFields[i].group();
            if (!kPolicyFields[i].group().empty() && kPolicyFields[j].group() == kPolicyFields[i].group() && apart)
                return false;
        }
    return true;
}
static_assert(fields_well_formed(), "kPolicyFields: a name twice, or a group's fields apart");

// Whether every limit has its field, named after its key, reading its own value.
constexpr bool limit_fields_match() {
    std::size_t seen = 0;
    for (const auto& f : kPolicyFields) {
        if (f.kind != PolicyField::Kind::limit) continue;
        if (seen >= kLimitCount || f.key() != kLimits[seen].key || f.group() != "limits") return false;
        ++seen;
    }
    return seen == kLimitCount;
}
static_assert(limit_fields_match(), "kPolicyFields: the limits' fields are not those of kLimits, in order");

}  // namespace detail

// An ignoreViolations rule in one line: `command: "text" "text"`.
SBX_INLINE std::string ignore_text(const IgnoreRule& r);

// The policy's members, into an object `w` has open: "version", "trusted", each
// field of kPolicyFields with its source ({layer, file, key}, or null for a
// default) and each list entry with its own, then the warnings. For a caller that
// adds members of its own (sbx policy: the root).
SBX_INLINE void write_policy_members(json::Writer& w, const Policy& p);

// The policy as a JSON object of write_policy_members.
SBX_INLINE std::string to_json(const Policy& p);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_SETTINGS)

namespace sbx {

SBX_INLINE std::string ignore_text(const IgnoreRule& r) {
    std::string out = r.command + ":";
    for (const auto& v : r.violations) out += " \"" + v + "\"";
    return out;
}

SBX_INLINE void write_policy_members(json::Writer& w, const Policy& p) {
    auto sourced = [&](const auto& value, const std::optional<Source>& s) {
        w.begin_object().key("value").value(value).key("source");
        write_source(w, s);
        w.end_object();
    };
    w.key("version").value(1);
    w.key("trusted").value(p.trusted);
    std::string_view group;
    for (const auto& f : kPolicyFields) {
        if (f.group() != group) {
            if (!group.empty()) w.end_object();
            group = f.group();
            if (!group.empty()) w.key(group).begin_object();
        }
        w.key(f.key());
        switch (f.kind) {
            case PolicyField::Kind::flag: sourced(f.flag(p).value, f.flag(p).source); break;
            case PolicyField::Kind::list:
                w.begin_array();
                for (const auto& e : f.list(p)) sourced(e.value, e.source);
                w.end_array();
                break;
            case PolicyField::Kind::ignores:
                w.begin_array();
                for (const auto& r : p.ignore_violations) {
                    w.begin_object().key("command").value(r.command).key("violations").begin_array();
                    for (const auto& v : r.violations) w.value(v);
                    w.end_array().key("source");
                    write_source(w, r.source);
                    w.end_object();
                }
                w.end_array();
                break;
            case PolicyField::Kind::text:
                if (const auto& v = f.text(p)) sourced(v->value, v->source);
                else w.null();
                break;
            case PolicyField::Kind::limit: {
                const auto& v = f.limit(p);
                w.begin_object().key("value");
                if (v.value) w.value(*v.value);
                else w.null();
                w.key("source");
                write_source(w, v.source);
                w.end_object();
                break;
            }
        }
    }
    if (!group.empty()) w.end_object();
    w.key("warnings").begin_array();
    for (const auto& wn : p.warnings)
        w.begin_object().key("file").value(wn.file).key("key").value(wn.key).key("message").value(wn.message).end_object();
    w.end_array();
}

SBX_INLINE std::string to_json(const Policy& p) {
    json::Writer w;
    w.begin_object();
    write_policy_members(w, p);
    w.end_object();
    return w.take();
}

}  // namespace sbx
#endif
