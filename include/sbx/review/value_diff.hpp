// sbx/review/value_diff.hpp - what changed between two policies, value by value.
//
// diff_values() compares two effective policies (policy.hpp) and returns each
// switch that changed and each list entry added or removed, with the settings
// entry behind it on each side and whether the change opens the sandbox
// (Direction). Which way opens is data: kSwitches and kLists, a line each. A
// list entry counts by its value and layer: one moved to another key of the
// same layer is no change, and one added or removed while another layer lists
// the same value changes nothing either way. Pure.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/provenance.hpp"
#include "sbx/settings/policy.hpp"

namespace sbx::review {

// Whether a change makes the sandbox more open, less, or neither.
enum class Direction { widens, narrows, neither };

constexpr std::string_view direction_name(Direction d) noexcept {
    return d == Direction::widens ? "widens" : d == Direction::narrows ? "narrows" : "neither";
}

// A switch of the policy, and which of its values is the more open one.
struct Switch {
    std::string_view name;                        // as `sbx policy` prints it
    const Value<bool>& (*get)(const Policy&);
    std::optional<bool> open;                     // the more open value; nullopt: neither is
    std::string_view meaning;                     // what `true` does, for people
};

inline constexpr Switch kSwitches[] = {
    {"enabled", [](const Policy& p) -> const Value<bool>& { return p.enabled; }, false,
     "commands run in the sandbox"},
    {"adminRequired", [](const Policy& p) -> const Value<bool>& { return p.admin_required; }, false,
     "the repository's files cannot loosen the sandbox"},
    {"autoAllow", [](const Policy& p) -> const Value<bool>& { return p.auto_allow; }, std::nullopt,
     "Claude Code runs sandboxed commands without asking; the sandbox is the same"},
    {"allowUnsandboxed", [](const Policy& p) -> const Value<bool>& { return p.allow_unsandboxed; }, true,
     "a command may be run outside the sandbox"},
    {"failIfUnavailable", [](const Policy& p) -> const Value<bool>& { return p.fail_if_unavailable; }, false,
     "a command that cannot be confined does not run"},
    {"weakerSandbox", [](const Policy& p) -> const Value<bool>& { return p.weaker_sandbox; }, true,
     "where user namespaces are refused, commands run in the weaker sandbox"},
    {"toolCache", [](const Policy& p) -> const Value<bool>& { return p.tool_cache; }, true,
     "commands get a writable cache home of the project's"},
    {"quiet", [](const Policy& p) -> const Value<bool>& { return p.quiet; }, std::nullopt,
     "sbx run prints none of its informational lines; refusals and warnings still print"},
    {"filesystem.disabled", [](const Policy& p) -> const Value<bool>& { return p.filesystem.disabled; }, true,
     "no filesystem isolation at all"},
    {"filesystem.allowManagedReadPathsOnly",
     [](const Policy& p) -> const Value<bool>& { return p.filesystem.managed_read_paths_only; }, false,
     "only managed allowRead entries count"},
    {"network.strictAllowlist", [](const Policy& p) -> const Value<bool>& { return p.network.strict_allowlist; }, false,
     "hosts no list allows are refused without asking"},
    {"network.allowLocalBinding", [](const Policy& p) -> const Value<bool>& { return p.network.allow_local_binding; },
     true, "commands reach servers on this machine's loopback"},
    {"network.allowAllUnixSockets",
     [](const Policy& p) -> const Value<bool>& { return p.network.allow_all_unix_sockets; }, true,
     "commands connect to every Unix socket"},
    {"network.allowManagedDomainsOnly",
     [](const Policy& p) -> const Value<bool>& { return p.network.managed_domains_only; }, false,
     "only managed allowedDomains count, and other hosts are refused"},
};

// What a list's entries name, for the decisions `sbx diff` makes about them.
enum class Names { paths, hosts, other };

// A list of the policy, and what adding an entry to it does.
struct List {
    std::string_view name;
    const SourcedList& (*get)(const Policy&);
    Direction adding;          // what adding an entry does; removing one does the opposite
    Names names;
    std::string_view meaning;  // what an entry does, for people
};

inline constexpr List kLists[] = {
    {"excludedCommands", [](const Policy& p) -> const SourcedList& { return p.excluded_commands; },
     Direction::widens, Names::other, "the command runs outside the sandbox"},
    {"filesystem.allowWrite", [](const Policy& p) -> const SourcedList& { return p.filesystem.allow_write; },
     Direction::widens, Names::paths, "commands may write there"},
    {"filesystem.denyWrite", [](const Policy& p) -> const SourcedList& { return p.filesystem.deny_write; },
     Direction::narrows, Names::paths, "commands may not write there"},
    {"filesystem.denyRead", [](const Policy& p) -> const SourcedList& { return p.filesystem.deny_read; },
     Direction::narrows, Names::paths, "commands may not read there"},
    {"filesystem.allowRead", [](const Policy& p) -> const SourcedList& { return p.filesystem.allow_read; },
     Direction::widens, Names::paths, "re-opens reading inside a denied region"},
    {"network.allowedDomains", [](const Policy& p) -> const SourcedList& { return p.network.allowed_domains; },
     Direction::widens, Names::hosts, "commands may reach the host"},
    {"network.deniedDomains", [](const Policy& p) -> const SourcedList& { return p.network.denied_domains; },
     Direction::narrows, Names::hosts, "commands may not reach the host"},
    {"network.allowUnixSockets", [](const Policy& p) -> const SourcedList& { return p.network.allow_unix_sockets; },
     Direction::widens, Names::other, "commands may connect to the socket"},
    {"credentials.envVars", [](const Policy& p) -> const SourcedList& { return p.credentials.env_vars; },
     Direction::narrows, Names::other, "the variable does not reach commands"},
    {"credentials.files", [](const Policy& p) -> const SourcedList& { return p.credentials.files; },
     Direction::narrows, Names::paths, "commands may not read the file"},
    {"permissions.additionalDirectories",
     [](const Policy& p) -> const SourcedList& { return p.additional_directories; }, Direction::widens, Names::paths,
     "commands may write there"},
};

constexpr Direction opposite(Direction d) noexcept {
    return d == Direction::widens ? Direction::narrows : d == Direction::narrows ? Direction::widens : Direction::neither;
}

// One value that changed.
struct ValueChange {
    enum class What { added, removed, changed };
    What what = What::changed;
    std::string name;           // a switch or list, as kSwitches and kLists name it
    std::string before, after;  // the values; empty for the side that has none (added, removed)
    std::optional<Source> before_source, after_source;  // nullopt: a default
    Direction direction = Direction::neither;
    std::string meaning;
};

constexpr std::string_view what_name(ValueChange::What w) noexcept {
    return w == ValueChange::What::added ? "added" : w == ValueChange::What::removed ? "removed" : "changed";
}

namespace detail {

inline std::string ignore_text(const IgnoreRule& r) {
    std::string out = r.command + ":";
    for (const auto& v : r.violations) out += " \"" + v + "\"";
    return out;
}

// Entries of `a` whose value `b` lacks.
template <class Entry, class Text>
std::vector<const Entry*> missing_from(const std::vector<Entry>& a, const std::vector<Entry>& b, Text text) {
    std::vector<const Entry*> out;
    for (const auto& e : a) {
        const auto t = text(e);
        const bool kept = std::any_of(b.begin(), b.end(), [&](const Entry& x) { return text(x) == t; });
        const bool told = std::any_of(out.begin(), out.end(), [&](const Entry* x) { return text(*x) == t; });
        if (!kept && !told) out.push_back(&e);
    }
    return out;
}

}  // namespace detail

// Every value that differs from `before` to `after`: the switches of kSwitches in
// the table's order, then each list's removed and added entries, ignoreViolations
// (neither way), and the programs bwrapPath and socatPath (a different program
// confines: counted as widening, for a person to look at).
inline std::vector<ValueChange> diff_values(const Policy& before, const Policy& after) {
    std::vector<ValueChange> out;
    auto word = [](bool b) { return std::string(b ? "true" : "false"); };
    for (const auto& s : kSwitches) {
        const auto& b = s.get(before);
        const auto& a = s.get(after);
        if (b.value == a.value) continue;
        const Direction d = !s.open ? Direction::neither : a.value == *s.open ? Direction::widens : Direction::narrows;
        out.push_back({ValueChange::What::changed, std::string(s.name), word(b.value), word(a.value), b.source, a.source,
                       d, std::string(s.meaning)});
    }
    // An entry is its value in its layer: the repository's entry gone while
    // the built-in list still holds the same path is a change that opens nothing.
    auto entry_text = [](const Sourced<std::string>& e) { return e.value + '\0' + std::string(layer_name(e.source.layer)); };
    auto still = [](const SourcedList& list, const std::string& value) -> std::optional<LayerKind> {
        for (const auto& e : list)
            if (e.value == value) return e.source.layer;
        return std::nullopt;
    };
    for (const auto& l : kLists) {
        for (const auto* e : detail::missing_from(l.get(before), l.get(after), entry_text)) {
            const auto kept = still(l.get(after), e->value);
            out.push_back({ValueChange::What::removed, std::string(l.name), e->value, "", e->source, std::nullopt,
                           kept ? Direction::neither : opposite(l.adding),
                           kept ? "still listed by the " + std::string(layer_name(*kept)) + " layer"
                                : std::string(l.meaning)});
        }
        for (const auto* e : detail::missing_from(l.get(after), l.get(before), entry_text)) {
            const auto had = still(l.get(before), e->value);
            out.push_back({ValueChange::What::added, std::string(l.name), "", e->value, std::nullopt, e->source,
                           had ? Direction::neither : l.adding,
                           had ? "listed already by the " + std::string(layer_name(*had)) + " layer"
                               : std::string(l.meaning)});
        }
    }
    constexpr std::string_view ignore_meaning = "violations of the command that hold the text are not reported";
    for (const auto* r : detail::missing_from(before.ignore_violations, after.ignore_violations, detail::ignore_text))
        out.push_back({ValueChange::What::removed, "ignoreViolations", detail::ignore_text(*r), "", r->source,
                       std::nullopt, Direction::neither, std::string(ignore_meaning)});
    for (const auto* r : detail::missing_from(after.ignore_violations, before.ignore_violations, detail::ignore_text))
        out.push_back({ValueChange::What::added, "ignoreViolations", "", detail::ignore_text(*r), std::nullopt, r->source,
                       Direction::neither, std::string(ignore_meaning)});
    for (auto [name, get] : {std::pair{"bwrapPath", &Policy::bwrap_path}, std::pair{"socatPath", &Policy::socat_path}}) {
        const auto& b = before.*get;
        const auto& a = after.*get;
        if ((b ? b->value : "") == (a ? a->value : "")) continue;
        out.push_back({!b ? ValueChange::What::added : !a ? ValueChange::What::removed : ValueChange::What::changed, name,
                       b ? b->value : "", a ? a->value : "", b ? std::optional(b->source) : std::nullopt,
                       a ? std::optional(a->source) : std::nullopt, Direction::widens,
                       "the program that confines commands"});
    }
    return out;
}

}  // namespace sbx::review
