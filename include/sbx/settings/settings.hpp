// sbx/settings/settings.hpp - one settings file, read strictly into one Settings layer.
//
// parse_settings() takes the text of a Claude Code settings file and where it came
// from, and returns what its `sandbox` and `permissions` sections say, with every
// path made absolute and every value tagged with its Source (layer, file, key).
// It decides nothing about other layers: merge() in policy.hpp does that.
//
// Strictness: malformed JSON is an error naming the line and column; a value of
// the wrong type, a duplicate key or a path that cannot be made absolute is an
// error naming the key path; an unknown key inside `sandbox` or `permissions` is a
// warning with the closest known key; a key sbx does not support is left out with
// a warning. Keys outside those two sections belong to Claude Code and are ignored,
// except one that looks like a misspelling of them.
//
// A file in srt's format (sandbox-runtime's ~/.srt-settings.json: `network` and
// `filesystem` at the top level, no `sandbox`) is read as srt reads it: its top
// level is the sandbox section, and each key is named as the file writes it
// (`network.allowedDomains`). Both at once is an error: a file is one or the other.
#pragma once

#include <algorithm>
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/ascii.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/json.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/net/host_pattern.hpp"
#include "sbx/settings/bash_rule.hpp"
#include "sbx/settings/layer.hpp"

namespace sbx {

namespace detail {

// Edit distance, for "did you mean".
SBX_INLINE std::size_t edit_distance(std::string_view a, std::string_view b);

// The known key closest to `key`, if it is close enough to be a likely typo.
template <class Keys>
std::optional<std::string_view> closest(std::string_view key, const Keys& known) {
    std::optional<std::string_view> best;
    std::size_t best_d = std::max<std::size_t>(2, key.size() / 3) + 1;
    for (std::string_view k : known) {
        std::size_t d = edit_distance(key, k);
        if (d < best_d) {
            best_d = d;
            best = k;
        }
    }
    return best;
}

// The keys of each section, as data. `unsupported` keys are Claude Code's but not
// sbx's: they are left out with a warning that says so.
struct KeySet {
    std::string_view section;
    std::vector<std::string_view> known;
    std::vector<std::string_view> unsupported;
};

SBX_INLINE const KeySet& sandbox_keys();
SBX_INLINE const KeySet& filesystem_keys();
SBX_INLINE const KeySet& network_keys();
SBX_INLINE const KeySet& credentials_keys();
// Claude Code's permission keys, all of which sbx reads: Bash rules and the
// mode for route.hpp, the other rules and additionalDirectories for the sandbox.
SBX_INLINE const KeySet& permissions_keys();

using simdjson::dom::element;
using simdjson::dom::element_type;

// Walks one file's DOM, collecting the Settings and the first error.
class Reader {
public:
    Reader(const SettingsSource& src, Settings& out) : src_(src), file_(src.file), out_(out) {}

    expected<void> read(element root);

private:
    const SettingsSource& src_;
    FileName file_;
    Settings& out_;
    bool srt_ = false;  // srt's format: the top level is the sandbox section

    // The key path of `sub` in the sandbox section, as the file writes it.
    std::string sandbox_key(std::string_view sub) const {
        return srt_ ? std::string(sub) : "sandbox." + std::string(sub);
    }
    std::string section_of(const KeySet& keys) const;

    Source source(std::string key) const { return Source{src_.layer, file_, std::move(key)}; }

    void warn(std::string key, std::string message) {
        out_.warnings.push_back(Warning{src_.file, std::move(key), std::move(message)});
    }

    tl::unexpected<Error> error(std::string key, std::string message) const {
        return fail(Error(Errc::invalid_settings, std::move(message)).in_file(src_.file).at_key(std::move(key)));
    }

    tl::unexpected<Error> type_error(std::string key, std::string_view expected_type, element got) const {
        return error(std::move(key), "expected " + std::string(expected_type) + ", got " +
                                         std::string(json::type_name(got.type())));
    }

    static std::string join_key(std::string_view parent, std::string_view key) {
        return parent.empty() ? std::string(key) : std::string(parent) + "." + std::string(key);
    }
    static std::string index_key(std::string_view parent, std::size_t i);

    // An object's members in document order; a key seen twice is an error, since
    // readers disagree on which of the two wins.
    expected<std::vector<std::pair<std::string_view, element>>> unique_members(element obj, std::string_view path);

    // Checks an object against its KeySet: warns of unknown and unsupported keys
    // and returns the known members only.
    expected<std::vector<std::pair<std::string_view, element>>> known_members(element obj, const KeySet& keys);

    expected<Sourced<bool>> boolean(element v, std::string key) {
        if (v.type() != element_type::BOOL) return type_error(std::move(key), "a boolean (true or false)", v);
        return Sourced<bool>{bool(v.get_bool().value_unsafe()), source(std::move(key))};
    }

    expected<void> set_bool(SourcedBool& slot, element v, const std::string& key);

    // A string without control characters, not empty. The view lives as long as the document.
    expected<std::string_view> text(element v, const std::string& key);

    // An array of strings, each turned into a value by `make`.
    template <class Make>
    expected<void> string_list(element v, const std::string& key, SourcedList& out, Make make) {
        if (v.type() != element_type::ARRAY) return type_error(key, "an array of strings", v);
        std::size_t i = 0;
        for (auto item : simdjson::dom::array(v)) {
            auto k = index_key(key, i++);
            auto s = text(item, k);
            SBX_TRY(s);
            auto made = make(*s, k);
            SBX_TRY(made);
            out.push_back(Sourced<std::string>{std::move(*made), source(k)});
        }
        return {};
    }

    expected<std::string> path(std::string_view p, const std::string& key);

    static expected<std::string> as_is(std::string_view s, const std::string&) { return std::string(s); }

    // An excludedCommands entry, the inside of a Bash(...) rule: refused here,
    // naming the file and entry, when malformed.
    expected<std::string> bash_pattern(std::string_view s, const std::string& key) const {
        if (auto r = parse_bash_pattern(s); !r) return error(key, r.error().message);
        return std::string(s);
    }

    // A host pattern as written; refused here, naming the file and entry, when it
    // is none of the forms host_pattern.hpp takes.
    expected<std::string> host_pattern(std::string_view s, const std::string& key) {
        if (auto p = net::parse_host_pattern(s); !p) return error(key, p.error().message);
        return std::string(s);
    }

    expected<void> paths_list(element v, const std::string& key, SourcedList& out) {
        return string_list(v, key, out, [&](std::string_view s, const std::string& k) { return path(s, k); });
    }

    expected<std::string> absolute_program(element v, const std::string& key);

    static bool valid_env_name(std::string_view s);

    expected<void> read_sandbox(element v);

    expected<void> read_ignore(element v, const std::string& key);

    expected<void> read_filesystem(element v);

    expected<void> read_network(element v);

    // Each entry is a string, or {"name"|"path": ..., "mode": "deny"|"mask"}.
    // Masking needs TLS termination, which sbx does not do: a mask is a deny.
    expected<void> read_credential_list(element v, const std::string& key, bool files, SourcedList& out);

    expected<void> read_credentials(element v);

    // sandbox.limits (limits.hpp): sbx's own section, which no other program
    // writes, so a key it does not know is an error, not a warning: a limit
    // misspelt would hold nothing.
    expected<void> read_limits(element v);

    // Permission rule paths follow Claude Code: `//x` absolute, `~/x` home, `/x`
    // relative to the settings file's project, `x` and `./x` relative to the root.
    expected<std::string> rule_path(std::string_view p, const std::string& key);

    // One rule of permissions.allow, deny or ask: `Tool` or `Tool(spec)`. Bash
    // rules are kept for route.hpp; Edit, Read and WebFetch(domain:...) allow
    // and deny rules feed the sandbox; others pass.
    enum class RuleKind { allow, deny, ask };
    expected<void> read_rule(const Sourced<std::string>& rule, RuleKind kind);

    expected<void> read_permissions(element v);
};

}  // namespace detail

// Reads one settings file's text. Pure: `src.file` is only a name for messages.
SBX_INLINE expected<Settings> parse_settings(std::string_view text, const SettingsSource& src);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_SETTINGS)

namespace sbx::detail {

SBX_INLINE std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t sub = prev[j - 1] + (ascii_lower(a[i - 1]) == ascii_lower(b[j - 1]) ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        prev.swap(cur);
    }
    return prev[b.size()];
}

SBX_INLINE const KeySet& sandbox_keys() {
    static const KeySet k{"sandbox",
                          {"enabled", "autoAllowBashIfSandboxed", "allowUnsandboxedCommands", "failIfUnavailable",
                           "excludedCommands", "ignoreViolations", "filesystem", "network", "credentials",
                           "bwrapPath", "socatPath", "toolCache", "quiet", "enableWeakerNestedSandbox", "limits"},
                          {"enableWeakerNetworkIsolation", "allowAppleEvents", "allowNestedUserNamespaces", "ripgrep"}};
    return k;
}

SBX_INLINE const KeySet& filesystem_keys() {
    static const KeySet k{"sandbox.filesystem",
                          {"allowWrite", "denyWrite", "denyRead", "allowRead", "disabled", "allowManagedReadPathsOnly"},
                          {}};
    return k;
}

SBX_INLINE const KeySet& network_keys() {
    static const KeySet k{"sandbox.network",
                          {"allowedDomains", "deniedDomains", "allowUnixSockets", "strictAllowlist",
                           "allowLocalBinding", "allowAllUnixSockets", "allowManagedDomainsOnly"},
                          {"httpProxyPort", "socksProxyPort", "tlsTerminate", "allowMachLookup"}};
    return k;
}

SBX_INLINE const KeySet& credentials_keys() {
    static const KeySet k{"sandbox.credentials", {"envVars", "files"}, {}};
    return k;
}

SBX_INLINE const KeySet& permissions_keys() {
    static const KeySet k{"permissions",
                          {"allow", "deny", "ask", "additionalDirectories", "defaultMode",
                           "disableBypassPermissionsMode"},
                          {}};
    return k;
}

SBX_INLINE expected<void> Reader::read(element root) {
    if (root.type() != element_type::OBJECT) return type_error("", "an object", root);
    std::array<std::string_view, 2> sections{"sandbox", "permissions"};
    auto members = unique_members(root, "");
    SBX_TRY(members);
    auto has = [&](std::string_view k) {
        return std::any_of(members->begin(), members->end(), [&](const auto& m) { return m.first == k; });
    };
    if (has("network") || has("filesystem")) {
        const std::string_view which = has("network") ? "network" : "filesystem";
        if (has("sandbox"))
            return error(std::string(which),
                         "srt's settings format (network and filesystem at the top level) beside Claude Code's "
                         "sandbox section; a file is one or the other: move it under sandbox");
        srt_ = true;
        return read_sandbox(root);
    }
    for (auto& [key, value] : *members) {
        if (key == "sandbox") {
            SBX_TRY(read_sandbox(value));
        } else if (key == "permissions") {
            SBX_TRY(read_permissions(value));
        } else if (auto near = closest(key, sections); near && key != *near) {
            // Claude Code has many other keys; only a near miss of ours is worth a word.
            warn(std::string(key), "unknown key; did you mean '" + std::string(*near) + "'? It was left out");
        }
    }
    return {};
}

SBX_INLINE std::string Reader::section_of(const KeySet& keys) const {
    if (!srt_) return std::string(keys.section);
    if (keys.section == "sandbox") return "";
    return std::string(keys.section.substr(std::string_view("sandbox.").size()));
}

SBX_INLINE std::string Reader::index_key(std::string_view parent, std::size_t i) {
    char digits[24];
    char* end = digits + sizeof digits;
    char* p = end;
    *--p = ']';
    do *--p = static_cast<char>('0' + i % 10);
    while ((i /= 10) != 0);
    *--p = '[';
    std::string out;
    out.reserve(parent.size() + static_cast<std::size_t>(end - p));
    out.append(parent).append(p, end);
    return out;
}

SBX_INLINE expected<std::vector<std::pair<std::string_view, element>>> Reader::unique_members(element obj, std::string_view path) {
    std::vector<std::pair<std::string_view, element>> members;
    for (auto field : simdjson::dom::object(obj)) {
        for (const auto& m : members)
            if (m.first == field.key) return error(join_key(path, field.key), "the key appears twice");
        members.emplace_back(field.key, field.value);
    }
    return members;
}

SBX_INLINE expected<std::vector<std::pair<std::string_view, element>>> Reader::known_members(element obj, const KeySet& keys) {
    const std::string section = section_of(keys);
    if (obj.type() != element_type::OBJECT) return type_error(section, "an object", obj);
    auto members = unique_members(obj, section);
    SBX_TRY(members);
    std::vector<std::pair<std::string_view, element>> kept;
    for (auto& m : *members) {
        auto key = join_key(section, m.first);
        if (std::find(keys.known.begin(), keys.known.end(), m.first) != keys.known.end()) {
            kept.push_back(m);
        } else if (std::find(keys.unsupported.begin(), keys.unsupported.end(), m.first) != keys.unsupported.end()) {
            warn(key, "not supported by sbx; left out");
        } else if (auto near = closest(m.first, keys.known)) {
            warn(key, "unknown key; did you mean '" + std::string(*near) + "'? It was left out");
        } else {
            warn(key, "unknown key; left out");
        }
    }
    return kept;
}

SBX_INLINE expected<void> Reader::set_bool(SourcedBool& slot, element v, const std::string& key) {
    auto b = boolean(v, key);
    SBX_TRY(b);
    slot = std::move(*b);
    return {};
}

SBX_INLINE expected<std::string_view> Reader::text(element v, const std::string& key) {
    if (v.type() != element_type::STRING) return type_error(key, "a string", v);
    std::string_view s = v.get_string().value_unsafe();
    if (s.empty()) return error(key, "an empty string");
    for (unsigned char c : s)
        if (c < 0x20 || c == 0x7f) return error(key, "a control character in the string");
    return s;
}

SBX_INLINE expected<std::string> Reader::path(std::string_view p, const std::string& key) {
    auto r = paths::resolve(p, src_.base);
    if (!r) return error(key, r.error().message);
    return r;
}

SBX_INLINE expected<std::string> Reader::absolute_program(element v, const std::string& key) {
    auto s = text(v, key);
    SBX_TRY(s);
    if (!paths::is_absolute(*s)) return error(key, "expected an absolute path, got '" + std::string(*s) + "'");
    return paths::normalize(*s);
}

SBX_INLINE bool Reader::valid_env_name(std::string_view s) {
    if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
    return std::all_of(s.begin(), s.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

SBX_INLINE expected<void> Reader::read_sandbox(element v) {
    auto members = known_members(v, sandbox_keys());
    SBX_TRY(members);
    for (auto& [name, value] : *members) {
        std::string key = sandbox_key(name);
        expected<void> r;
        if (name == "enabled") r = set_bool(out_.enabled, value, key);
        else if (name == "autoAllowBashIfSandboxed") r = set_bool(out_.auto_allow, value, key);
        else if (name == "allowUnsandboxedCommands") r = set_bool(out_.allow_unsandboxed, value, key);
        else if (name == "failIfUnavailable") r = set_bool(out_.fail_if_unavailable, value, key);
        else if (name == "toolCache") r = set_bool(out_.tool_cache, value, key);
        else if (name == "quiet") r = set_bool(out_.quiet, value, key);
        else if (name == "enableWeakerNestedSandbox") r = set_bool(out_.weaker_sandbox, value, key);
        else if (name == "excludedCommands") r = string_list(value, key, out_.excluded_commands,
                                    [&](std::string_view e, const std::string& k) { return bash_pattern(e, k); });
        else if (name == "ignoreViolations") r = read_ignore(value, key);
        else if (name == "filesystem") r = read_filesystem(value);
        else if (name == "network") r = read_network(value);
        else if (name == "credentials") r = read_credentials(value);
        else if (name == "limits") r = read_limits(value);
        else if (name == "bwrapPath" || name == "socatPath") {
            auto p = absolute_program(value, key);
            SBX_TRY(p);
            (name == "bwrapPath" ? out_.bwrap_path : out_.socat_path) = Sourced<std::string>{*p, source(key)};
        }
        SBX_TRY(r);
    }
    return {};
}

SBX_INLINE expected<void> Reader::read_ignore(element v, const std::string& key) {
    if (v.type() != element_type::OBJECT) return type_error(key, "an object of command -> [violation text]", v);
    auto members = unique_members(v, key);
    SBX_TRY(members);
    for (auto& [command, list] : *members) {
        auto k = key + "." + std::string(command);
        if (command.empty()) return error(k, "an empty command key; use \"*\" for every command");
        SourcedList texts;
        SBX_TRY(string_list(list, k, texts, as_is));
        IgnoreRule rule{std::string(command), {}, source(k)};
        for (auto& t : texts) rule.violations.push_back(std::move(t.value));
        out_.ignore_violations.push_back(std::move(rule));
    }
    return {};
}

SBX_INLINE expected<void> Reader::read_filesystem(element v) {
    auto members = known_members(v, filesystem_keys());
    SBX_TRY(members);
    auto& fs = out_.filesystem;
    for (auto& [name, value] : *members) {
        std::string key = sandbox_key("filesystem." + std::string(name));
        fs.configured = true;
        expected<void> r;
        if (name == "allowWrite") r = paths_list(value, key, fs.allow_write);
        else if (name == "denyWrite") r = paths_list(value, key, fs.deny_write);
        else if (name == "denyRead") r = paths_list(value, key, fs.deny_read);
        else if (name == "allowRead") r = paths_list(value, key, fs.allow_read);
        else r = set_bool(name == "disabled" ? fs.disabled : fs.managed_read_paths_only, value, key);
        SBX_TRY(r);
    }
    return {};
}

SBX_INLINE expected<void> Reader::read_network(element v) {
    auto members = known_members(v, network_keys());
    SBX_TRY(members);
    auto& net = out_.network;
    for (auto& [name, value] : *members) {
        std::string key = sandbox_key("network." + std::string(name));
        expected<void> r;
        auto host = [&](std::string_view h, const std::string& k) { return host_pattern(h, k); };
        if (name == "allowedDomains") r = string_list(value, key, net.allowed_domains, host);
        else if (name == "deniedDomains") r = string_list(value, key, net.denied_domains, host);
        else if (name == "allowUnixSockets") r = paths_list(value, key, net.allow_unix_sockets);
        else {
            SourcedBool& slot = name == "strictAllowlist"     ? net.strict_allowlist
                                : name == "allowLocalBinding" ? net.allow_local_binding
                                : name == "allowAllUnixSockets" ? net.allow_all_unix_sockets
                                                                : net.managed_domains_only;
            r = set_bool(slot, value, key);
        }
        SBX_TRY(r);
    }
    return {};
}

SBX_INLINE expected<void> Reader::read_credential_list(element v, const std::string& key, bool files, SourcedList& out) {
    if (v.type() != element_type::ARRAY) return type_error(key, "an array", v);
    std::string_view field = files ? "path" : "name";
    std::size_t i = 0;
    for (auto item : simdjson::dom::array(v)) {
        auto k = index_key(key, i++);
        std::string value;
        if (item.type() == element_type::STRING) {
            auto s = text(item, k);
            SBX_TRY(s);
            value = *s;
        } else if (item.type() == element_type::OBJECT) {
            auto members = unique_members(item, k);
            SBX_TRY(members);
            std::optional<std::string_view> mode;
            for (auto& [mk, mv] : *members) {
                auto kk = k + "." + std::string(mk);
                if (mk == field) {
                    auto s = text(mv, kk);
                    SBX_TRY(s);
                    value = *s;
                } else if (mk == "mode") {
                    auto s = text(mv, kk);
                    SBX_TRY(s);
                    if (*s != "deny" && *s != "mask")
                        return error(kk, "expected \"deny\" or \"mask\", got \"" + std::string(*s) + "\"");
                    mode = *s;
                } else {
                    return error(kk, "unknown key; an entry has '" + std::string(field) + "' and 'mode'");
                }
            }
            if (value.empty()) return error(k, "the entry has no '" + std::string(field) + "'");
            if (mode == "mask")
                warn(k + ".mode", "masking needs TLS termination, which sbx does not do; denied instead");
        } else {
            return type_error(k, files ? "a path or an object {path, mode}" : "a name or an object {name, mode}", item);
        }
        if (files) {
            auto p = path(value, k);
            SBX_TRY(p);
            value = std::move(*p);
        } else if (!valid_env_name(value)) {
            return error(k, "'" + value + "' is not an environment variable name");
        }
        out.push_back(Sourced<std::string>{std::move(value), source(k)});
    }
    return {};
}

SBX_INLINE expected<void> Reader::read_credentials(element v) {
    auto members = known_members(v, credentials_keys());
    SBX_TRY(members);
    for (auto& [name, value] : *members) {
        std::string key = sandbox_key("credentials." + std::string(name));
        bool files = name == "files";
        auto r = read_credential_list(value, key, files, files ? out_.credentials.files : out_.credentials.env_vars);
        SBX_TRY(r);
    }
    return {};
}

SBX_INLINE expected<void> Reader::read_limits(element v) {
    const std::string section = sandbox_key("limits");
    if (v.type() != element_type::OBJECT) return type_error(section, "an object", v);
    auto members = unique_members(v, section);
    SBX_TRY(members);
    for (auto& [name, value] : *members) {
        const std::string key = join_key(section, name);
        const auto which = limit_named(name);
        if (!which) {
            std::vector<std::string_view> names;
            for (const auto& l : kLimits) names.push_back(l.key);
            const auto near = closest(name, names);
            return error(key, "not a limit sbx knows" +
                                  (near ? "; did you mean '" + std::string(*near) + "'?" : std::string()) +
                                  " (the limits are timeoutSeconds, memoryMiB, processes, cpuSeconds and fileSizeMiB)");
        }
        const LimitSpec& spec = limit_spec(*which);
        const std::string range = "a whole number from 1 to " + std::to_string(spec.max);
        std::uint64_t n = 0;
        if (value.type() == element_type::UINT64) {
            n = value.get_uint64().value_unsafe();
        } else if (value.type() == element_type::INT64) {
            const std::int64_t i = value.get_int64().value_unsafe();
            if (i < 1) return error(key, "out of range; give " + range);
            n = static_cast<std::uint64_t>(i);
        } else {
            return type_error(key, range, value);
        }
        if (n < 1 || n > spec.max) return error(key, "out of range; give " + range);
        out_.limits[static_cast<std::size_t>(*which)] = Sourced<std::uint64_t>{n, source(key)};
    }
    return {};
}

SBX_INLINE expected<std::string> Reader::rule_path(std::string_view p, const std::string& key) {
    if (p.substr(0, 2) == "//") return path(p.substr(1), key);
    if (p.substr(0, 1) == "/") return path(std::string(src_.base.dir) + std::string(p), key);
    if (p.substr(0, 1) == "~") return path(p, key);
    paths::Base at_root{src_.base.home, src_.root};
    auto r = paths::resolve(p, at_root);
    if (!r) return error(key, r.error().message);
    return r;
}

SBX_INLINE expected<void> Reader::read_rule(const Sourced<std::string>& sourced, RuleKind kind) {
    const std::string_view rule = sourced.value;
    const std::string& key = sourced.source.key;
    auto bash = parse_bash_rule(rule);
    if (!bash) return error(key, bash.error().message);
    if (*bash) {
        auto& p = out_.permissions;
        (kind == RuleKind::allow ? p.allow : kind == RuleKind::deny ? p.deny : p.ask).push_back(sourced);
        return {};
    }
    if (kind == RuleKind::ask) return {};  // an ask rule of another tool is Claude Code's alone
    const bool allow = kind == RuleKind::allow;
    auto open = rule.find('(');
    if (open == std::string_view::npos) return {};  // a bare tool name adds no path or host
    std::string_view tool = rule.substr(0, open);
    if (tool != "Edit" && tool != "Read" && tool != "WebFetch") return {};
    if (rule.back() != ')') return error(key, "'" + std::string(rule) + "': a rule's specifier must end with ')'");
    std::string_view spec = rule.substr(open + 1, rule.size() - open - 2);
    if (spec.empty()) return error(key, "'" + std::string(rule) + "': an empty specifier");
    auto& fs = out_.filesystem;
    if (tool == "WebFetch") {
        constexpr std::string_view prefix = "domain:";
        if (spec.substr(0, prefix.size()) != prefix) {
            warn(key, "only WebFetch(domain:...) rules name hosts for the sandbox; left out");
            return {};
        }
        auto host = spec.substr(prefix.size());
        if (host.empty()) return error(key, "'" + std::string(rule) + "': no domain after 'domain:'");
        SBX_TRY(host_pattern(host, key));
        auto& list = allow ? out_.network.allowed_domains : out_.network.denied_domains;
        list.push_back(Sourced<std::string>{std::string(host), source(key)});
        return {};
    }
    if (tool == "Read" && allow) return {};  // a Read allow does not re-open a sandbox deny
    auto p = rule_path(spec, key);
    SBX_TRY(p);
    auto& list = tool == "Read" ? fs.deny_read : (allow ? fs.allow_write : fs.deny_write);
    list.push_back(Sourced<std::string>{std::move(*p), source(key)});
    return {};
}

SBX_INLINE expected<void> Reader::read_permissions(element v) {
    auto members = known_members(v, permissions_keys());
    SBX_TRY(members);
    for (auto& [name, value] : *members) {
        std::string key = "permissions." + std::string(name);
        if (name == "allow" || name == "deny" || name == "ask") {
            SourcedList rules;
            SBX_TRY(string_list(value, key, rules, as_is));
            const RuleKind kind = name == "allow" ? RuleKind::allow : name == "deny" ? RuleKind::deny : RuleKind::ask;
            for (auto& rule : rules) SBX_TRY(read_rule(rule, kind));
        } else if (name == "additionalDirectories") {
            SBX_TRY(paths_list(value, key, out_.additional_directories));
        } else if (name == "defaultMode") {
            auto t = text(value, key);
            SBX_TRY(t);
            if (!permission_mode(*t)) {
                std::string names;
                for (PermissionMode m : kPermissionModes) names += (names.empty() ? "" : ", ") + std::string(mode_name(m));
                return error(key, "unknown mode '" + std::string(*t) + "'; expected one of " + names);
            }
            out_.permissions.default_mode = Sourced<std::string>{std::string(*t), source(key)};
        } else if (name == "disableBypassPermissionsMode") {
            auto t = text(value, key);
            SBX_TRY(t);
            if (*t != "disable") return error(key, "expected \"disable\", got \"" + std::string(*t) + "\"");
            out_.permissions.bypass_disabled = Sourced<bool>{true, source(key)};
        }
    }
    return {};
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE expected<Settings> parse_settings(std::string_view text, const SettingsSource& src) {
    Settings out;
    out.layer = src.layer;
    out.file = src.file;
    auto doc = json::parse(text, src.file);
    SBX_TRY(doc);
    detail::Reader reader(src, out);
    SBX_TRY(reader.read((*doc)->root()));
    return out;
}

}  // namespace sbx
#endif
