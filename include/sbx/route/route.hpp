// sbx/route/route.hpp - where a shell command runs, and whether it is approved.
//
// A program that hosts an agent asks this before each shell command the agent
// wants to run. From the policy (its sandbox switches and its Bash permission
// rules), the command line as the host received it, and the call's request (its
// permission mode, dangerouslyDisableSandbox, hosts of its own, rules of the
// host's session), route() says:
//   - where it runs: inside the sandbox; outside because an excludedCommands
//     pattern took it out; outside because the policy honours the call's
//     dangerouslyDisableSandbox; outside because the sandbox is off;
//   - its approval: `auto` (it runs sandboxed, and the sandbox stands in for
//     the approval it would need), `allow` (an allow rule or the mode approves
//     it), `ask`, `deny`, or `normal` (no rule decides: the host's own flow for
//     the mode does, its classifier or a person), and whether only a person may
//     answer an `ask`;
//   - what hosts no list decides get in this mode (unknown_host);
// each with the rule or key that decided and its layer, file and key.
//
// The approval, in this order (the first that applies decides):
//   -. for a caller other than the owner (Request::owner false: a person the
//      host serves, not the one it runs for), a command that would run outside
//      the sandbox is refused in every mode: such callers get only confined
//      commands, whatever excludedCommands, dangerouslyDisableSandbox or
//      `enabled` say;
//   0. a program an agent file's shell skill blocks (blocked_commands), run by
//      any command of the line as deny rules see it, refuses it; a line not read
//      in full asks when there are blocked names;
//   1. a deny rule that matches any command of the line, behind wrappers and in
//      the code of `sh -c` and `eval` too, refuses it;
//   2. a line the reader could not read in full asks when a deny rule with a
//      pattern could not be checked against it;
//   3. a critical removal (removals.hpp), or a line whose removals could not be
//      checked in full and that names a remover, asks a person in every mode
//      over any allow rule (dontAsk refuses it);
//   4. a command that runs outside the sandbox and removes a path outside the
//      workspace and its additionalDirectories asks, in every mode but
//      bypassPermissions (dontAsk refuses it);
//   5. a call that names hosts of its own asks (strictAllowlist refuses it;
//      bypassPermissions allows it, dontAsk refuses it): no allow rule approves it;
//   6. an ask rule with a pattern that matches any command asks (dontAsk
//      refuses), and so does a line the reader could not read in full when one
//      could not be checked against it;
//   7. a command that runs inside is `auto`, unless autoAllowBashIfSandboxed is
//      false, the mode is plan, the line hides code (hidden_code.hpp) or the
//      reader could not read it in full: those go to the normal flow;
//   8. the normal flow: a bare `Bash` ask rule asks; allow rules that match
//      every command of the line (as written, variables in front included)
//      allow; then the mode: bypassPermissions allows, dontAsk refuses, the
//      others leave it to the host (`normal`).
// Matching is conservative where it matters: deny and ask rules see each command
// as written and again without its wrappers (`timeout 5 rm -rf x` is `rm -rf x`
// to `Bash(rm:*)`), and the commands in the code of `sh -c` and `eval`; an allow
// rule must match each command as written.
//
// Pure: no I/O but the FsView, through which a removal's directory is resolved
// (a link in the workspace that leads to the home directory or out of the
// workspace counts as where it leads).
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/json_write.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/route/bash_rule.hpp"
#include "sbx/route/hidden_code.hpp"
#include "sbx/route/removals.hpp"
#include "sbx/route/shell_line.hpp"
#include "sbx/settings/layer.hpp"
#include "sbx/settings/policy.hpp"

namespace sbx::route {

// What the call asks for, beyond its command line.
struct Request {
    std::optional<PermissionMode> mode;  // nullopt: the policy's defaultMode, else default
    bool dangerously_disable_sandbox = false;
    std::vector<std::string> allowed_domains;  // hosts the call names for itself
    // The host's own Bash rules (a session's answers), as written, each with
    // where it came from: checked here, an error naming its key if malformed.
    SourcedList allow, deny, ask;
    // false: the caller is not the owner (the agent's, or the person the host
    // runs for), and gets only confined commands.
    bool owner = true;
};

// Where the command line starts.
struct Place {
    std::string root;  // the workspace root: absolute and clean
    std::string home;  // absolute and clean
    std::string cwd;   // absolute and clean; empty: the root
    bool folds_case = false;
};

enum class Where {
    inside,       // in the sandbox
    excluded,     // outside: an excludedCommands pattern took it out
    unsandboxed,  // outside: dangerouslyDisableSandbox, which the policy honours
    sandbox_off,  // outside: the sandbox is not enabled
};

enum class Approval {
    automatic,  // `auto`: it runs sandboxed, and skips the approval it would need
    allow,      // an allow rule, or the mode, approves it
    ask,        // someone answers before it runs (Route::person_only: a person)
    deny,       // it does not run
    normal,     // no rule decides: the host's flow for the mode does
};

// Why: one sentence, and the rule or key behind it.
struct Because {
    std::string why;
    std::string rule;              // the rule or key as written ("Bash(git push *)"); empty: none
    std::optional<Source> source;  // its layer, file and key; nullopt: sbx's own default
    std::optional<std::size_t> at; // the byte of the line it is about
};

struct Route {
    PermissionMode mode = PermissionMode::default_mode;
    Because mode_because;
    Where where = Where::inside;
    Because where_because;
    Approval approval = Approval::normal;
    bool person_only = false;  // an `ask` no hook or classifier answers
    Because approval_because;
    // What hosts no sandbox list decides get, for this call, in this mode.
    net::UnknownHost unknown_host = net::UnknownHost::ask;
    Because unknown_host_because;
    // What else was found, that would have decided had the one above not:
    // hidden code, the line's unreadable part, removals, a sandbox opt-out
    // that was not honoured.
    std::vector<Because> notes;
};

// The decision for `line` under `policy`, by the order above. Fails
// (INVALID_ARGUMENT) for a malformed rule of the request, naming its key, and
// for bypassPermissions when the policy disables that mode.
SBX_INLINE expected<Route> route(const Policy& policy, std::string_view line, const Request& request,
                                 const Place& place, const FsView& fs);

// The excludedCommands pattern that takes `line` out of the sandbox, whatever
// `enabled` says; nullopt when none does or the line cannot be read in full
// (which never leaves the sandbox by a pattern). For a program that confines
// every command, as `sbx run` does, and must not confine one the settings
// send outside without saying so.
SBX_INLINE std::optional<Because> excluded_by(const Policy& policy, std::string_view line);

// The blocked_commands entry (an agent file's shell skill) a command of `line`
// runs, as written, behind its wrappers, or in the code of `sh -c` and `eval`;
// nullopt when none does. A name in code sbx cannot read (a substitution, a
// script) is not seen: `route()` asks about such a line instead.
SBX_INLINE std::optional<Because> blocked_by(const Policy& policy, std::string_view line);

// What hosts no sandbox list decides get in `mode`: bypassPermissions allows
// them, auto and dontAsk refuse them, the others ask (the WebFetch rules are
// already in the policy's host lists). Under strictAllowlist or
// allowManagedDomainsOnly they are refused whatever the mode.
SBX_INLINE std::pair<net::UnknownHost, Because> unknown_host(const Policy& policy, PermissionMode mode,
                                                             const Because& mode_because);

constexpr std::string_view where_name(Where w) noexcept {
    switch (w) {
        case Where::inside: return "inside";
        case Where::excluded: return "excluded";
        case Where::unsandboxed: return "unsandboxed";
        case Where::sandbox_off: return "sandbox-off";
    }
    return "?";
}

constexpr std::string_view approval_name(Approval a) noexcept {
    switch (a) {
        case Approval::automatic: return "auto";
        case Approval::allow: return "allow";
        case Approval::ask: return "ask";
        case Approval::deny: return "deny";
        case Approval::normal: return "normal";
    }
    return "?";
}

constexpr std::optional<Approval> parse_approval(std::string_view name) noexcept {
    for (Approval a : {Approval::automatic, Approval::allow, Approval::ask, Approval::deny, Approval::normal})
        if (approval_name(a) == name) return a;
    return std::nullopt;
}

// The route as a JSON object: mode, where, approval, personOnly, unknownHost,
// each decision as {"why", "rule", "source", "at"}, and the notes.
SBX_INLINE void write_route(json::Writer& w, const Route& r);

// One line for people: "where: why [rule, layer file key]".
SBX_INLINE std::string describe(const Because& b);

namespace detail {

// A Bash rule with where it came from.
struct SourcedRule {
    BashRule rule;
    const Sourced<std::string>* from;
};

struct Rules {
    std::vector<SourcedRule> allow, deny, ask;
    std::vector<SourcedRule> blocked;  // the policy's blocked_commands, as `Bash(NAME:*)`
};

// The policy's blocked_commands as rules that match a command running the program.
SBX_INLINE std::vector<SourcedRule> blocked_rules(const Policy& policy);

// The texts deny and ask rules are matched against: each command as written,
// again without its wrappers, and the commands of the code it runs (sh -c,
// eval, env -S), read again up to kMaxNesting deep.
struct Candidate {
    std::string text;
    std::size_t at;
};
SBX_INLINE void candidates(std::string_view line, const Reading& r, std::size_t base, int nesting,
                           std::vector<Candidate>& out, bool& complete);

// Whether a token of `line` names a program that removes (rm, rmdir, unlink,
// mv, rsync, find, xargs, shred), wherever it stands: for lines the removal
// check could not read in full.
SBX_INLINE bool names_remover(std::string_view line);

// The first excludedCommands pattern that matches a command of the readable `r`.
SBX_INLINE std::optional<Because> excluded_match(const Policy& policy, std::string_view line, const Reading& r);

class Router {
public:
    Router(const Policy& policy, std::string_view line, const Request& request, const Place& place, const FsView& fs)
        : policy_(policy), line_(line), request_(request), place_(place), fs_(fs) {}
    expected<Route> run();

private:
    expected<void> read_rules();
    expected<void> choose_mode();
    void choose_where();
    // Steps 1 to 6: a rule or check that decides whatever the sandbox. False: none did.
    bool decided_before_sandbox();
    void removals();  // steps 3 and 4
    void normal_flow();
    // Sets the approval; an ask under dontAsk is a refusal, which it says.
    void decide(Approval a, Because b, bool person_only = false);
    bool dont_ask() const { return out_.mode == PermissionMode::dont_ask; }
    const SourcedRule* first_match(const std::vector<SourcedRule>& rules, std::size_t& at) const;
    static Because rule_because(std::string why, const SourcedRule& r, std::optional<std::size_t> at);

    const Policy& policy_;
    std::string_view line_;
    const Request& request_;
    const Place& place_;
    const FsView& fs_;
    Rules rules_;
    Reading reading_;
    std::vector<Candidate> candidates_;
    bool candidates_complete_ = true;
    Route out_;
    bool decided_ = false;
};

}  // namespace detail

}  // namespace sbx::route

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_ROUTE)

namespace sbx::route {

SBX_INLINE expected<Route> route(const Policy& policy, std::string_view line, const Request& request,
                                 const Place& place, const FsView& fs) {
    return detail::Router(policy, line, request, place, fs).run();
}

SBX_INLINE std::pair<net::UnknownHost, Because> unknown_host(const Policy& policy, PermissionMode mode,
                                                             const Because& mode_because) {
    const auto& strict = policy.network.strict_allowlist.value ? policy.network.strict_allowlist
                                                               : policy.network.managed_domains_only;
    if (strict.value)
        return {net::UnknownHost::deny,
                Because{"the allow list is strict: hosts it does not name are refused in every mode",
                        strict.source ? strict.source->key : std::string("network.strictAllowlist"), strict.source,
                        std::nullopt}};
    const std::string in = "in " + std::string(mode_name(mode)) + " mode";
    switch (mode) {
        case PermissionMode::bypass_permissions:
            return {net::UnknownHost::allow, Because{in + ", hosts no list names are allowed", mode_because.rule,
                                                     mode_because.source, std::nullopt}};
        case PermissionMode::auto_mode:
        case PermissionMode::dont_ask:
            return {net::UnknownHost::deny, Because{in + ", hosts no list names are refused", mode_because.rule,
                                                    mode_because.source, std::nullopt}};
        case PermissionMode::default_mode:
        case PermissionMode::accept_edits:
        case PermissionMode::plan: break;
    }
    return {net::UnknownHost::ask, Because{in + ", a person is asked about each host no list names",
                                           mode_because.rule, mode_because.source, std::nullopt}};
}

SBX_INLINE std::string describe(const Because& b) {
    std::string out = b.why;
    std::string from = b.rule;
    if (b.source) {
        if (!from.empty() && from != b.source->key) from += ", ";
        else from.clear();
        from += std::string(layer_name(b.source->layer)) + " " + b.source->file.str() + " " + b.source->key;
    }
    if (!from.empty()) out += " [" + from + "]";
    return out;
}

SBX_INLINE std::optional<Because> excluded_by(const Policy& policy, std::string_view line) {
    const Reading r = read_shell_line(line);
    if (!r.readable()) return std::nullopt;
    return detail::excluded_match(policy, line, r);
}

SBX_INLINE std::optional<Because> blocked_by(const Policy& policy, std::string_view line) {
    if (policy.blocked_commands.empty()) return std::nullopt;
    const Reading r = read_shell_line(line);
    std::vector<detail::Candidate> found;
    bool complete = true;
    detail::candidates(line, r, 0, 0, found, complete);
    for (const auto& rule : detail::blocked_rules(policy))
        for (const auto& c : found)
            if (matches(rule.rule, c.text))
                return Because{"the agent file's shell skill blocks " + rule.from->value + ", confined or not",
                               rule.from->value, rule.from->source, c.at};
    return std::nullopt;
}

SBX_INLINE void write_route(json::Writer& w, const Route& r) {
    auto because = [&](const Because& b) {
        w.begin_object().key("why").value(b.why).key("rule");
        if (b.rule.empty()) w.null();
        else w.value(b.rule);
        w.key("source");
        write_source(w, b.source);
        w.key("at");
        if (b.at) w.value(static_cast<std::uint64_t>(*b.at));
        else w.null();
        w.end_object();
    };
    w.begin_object();
    w.key("mode").value(mode_name(r.mode)).key("modeBecause");
    because(r.mode_because);
    w.key("where").value(where_name(r.where)).key("inside").value(r.where == Where::inside).key("whereBecause");
    because(r.where_because);
    w.key("approval").value(approval_name(r.approval)).key("personOnly").value(r.person_only).key("approvalBecause");
    because(r.approval_because);
    w.key("unknownHost").value(net::unknown_host_name(r.unknown_host)).key("unknownHostBecause");
    because(r.unknown_host_because);
    w.key("notes").begin_array();
    for (const auto& n : r.notes) because(n);
    w.end_array();
    w.end_object();
}

namespace detail {

SBX_INLINE void candidates(std::string_view line, const Reading& r, std::size_t base, int nesting,
                           std::vector<Candidate>& out, bool& complete) {
    if (!r.readable()) complete = false;
    for (const Command& c : r.commands) {
        if (c.words.empty()) continue;
        const std::size_t at = base + c.begin;
        out.push_back(Candidate{match_text(line, c), at});
        const Unwrapped u = unwrap(c.words, 0);
        if (u.program >= c.words.size()) continue;
        const Word& prog = c.words[u.program];
        // As it runs: without its wrappers, its program by name (/bin/rm, 'rm'
        // and \rm are rm), its words with their quoting undone.
        if (!u.split) {
            std::string text = program_name(prog);
            for (std::size_t k = u.program + 1; k < c.words.size(); ++k) text += " " + c.words[k].text;
            if (text != out.back().text) out.push_back(Candidate{std::move(text), base + prog.begin});
        }
        // The code it runs: sh -c CODE, eval WORDS, env -S CODE, flock -c CODE.
        std::optional<std::string> code;
        bool literal = true;
        const std::string name = program_name(prog);
        if (u.split) {
            code = prog.text.substr(std::min(u.split_at, prog.text.size()));
            literal = prog.literal();
        } else if (name == "eval") {
            std::string text;
            for (std::size_t k = u.program + 1; k < c.words.size(); ++k) {
                literal = literal && c.words[k].literal();
                text += (k > u.program + 1 ? " " : "") + c.words[k].text;
            }
            code = std::move(text);
        } else if (is_one_of(name, kShells)) {
            for (std::size_t k = u.program + 1; k < c.words.size(); ++k) {
                const std::string& t = c.words[k].text;
                if (t.empty() || t[0] != '-' || t == "-" || t == "--") break;
                if (t[1] != '-' && t.find('c') != std::string::npos && k + 1 < c.words.size()) {
                    code = c.words[k + 1].text;
                    literal = c.words[k + 1].literal();
                    break;
                }
            }
        }
        if (!code) continue;
        if (!literal || nesting + 1 > kMaxNesting) {
            complete = false;
            continue;
        }
        // Offsets inside the code are not the line's: its commands point at the command.
        const Reading inner = read_shell_line(*code);
        std::vector<Candidate> found;
        candidates(*code, inner, 0, nesting + 1, found, complete);
        for (auto& f : found) out.push_back(Candidate{std::move(f.text), at});
    }
}

SBX_INLINE bool names_remover(std::string_view line) {
    static constexpr std::string_view kNames[] = {"rm", "rmdir", "unlink", "mv", "rsync", "find", "xargs", "shred"};
    auto word_char = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
               c == '.';
    };
    std::size_t k = 0;
    while (k < line.size()) {
        if (!word_char(line[k])) {
            ++k;
            continue;
        }
        std::size_t end = k;
        while (end < line.size() && word_char(line[end])) ++end;
        const std::string_view token = line.substr(k, end - k);
        for (auto n : kNames)
            if (token == n) return true;
        k = end;
    }
    return false;
}

SBX_INLINE Because Router::rule_because(std::string why, const SourcedRule& r, std::optional<std::size_t> at) {
    return Because{std::move(why), r.from->value, r.from->source, at};
}

SBX_INLINE expected<void> Router::read_rules() {
    auto add = [](const SourcedList& list, std::vector<SourcedRule>& out) -> expected<void> {
        for (const auto& e : list) {
            auto r = parse_bash_rule(e.value);
            if (!r) return fail(Errc::invalid_argument, e.source.file.str() + ": " + e.source.key + ": " + r.error().message);
            if (!*r)
                return fail(Errc::invalid_argument, e.source.file.str() + ": " + e.source.key + ": '" + e.value +
                                                        "' is not a Bash rule");
            out.push_back(SourcedRule{**r, &e});
        }
        return {};
    };
    const auto& p = policy_.permissions;
    SBX_TRY(add(p.deny, rules_.deny));
    SBX_TRY(add(request_.deny, rules_.deny));
    SBX_TRY(add(p.ask, rules_.ask));
    SBX_TRY(add(request_.ask, rules_.ask));
    SBX_TRY(add(p.allow, rules_.allow));
    SBX_TRY(add(request_.allow, rules_.allow));
    rules_.blocked = blocked_rules(policy_);
    return {};
}

SBX_INLINE expected<void> Router::choose_mode() {
    const auto& d = policy_.permissions.default_mode;
    if (request_.mode) {
        out_.mode = *request_.mode;
        out_.mode_because = Because{"the mode the call names", "mode", std::nullopt, std::nullopt};
    } else if (d) {
        out_.mode = permission_mode(d->value).value_or(PermissionMode::default_mode);
        out_.mode_because = Because{"the settings' default mode", d->source.key, d->source, std::nullopt};
    } else {
        out_.mode_because = Because{"neither the call nor the settings name a mode", "", std::nullopt, std::nullopt};
    }
    const auto& off = policy_.permissions.bypass_disabled;
    if (out_.mode == PermissionMode::bypass_permissions && off.value)
        return fail(Errc::invalid_argument, "bypassPermissions mode is disabled by " +
                                                (off.source ? off.source->key + " in " + off.source->file.str()
                                                            : std::string("the settings")));
    return {};
}

SBX_INLINE std::vector<SourcedRule> blocked_rules(const Policy& policy) {
    std::vector<SourcedRule> out;
    for (const auto& e : policy.blocked_commands) out.push_back(SourcedRule{BashRule{BashRule::Kind::prefix, e.value}, &e});
    return out;
}

SBX_INLINE std::optional<Because> excluded_match(const Policy& policy, std::string_view line, const Reading& r) {
    for (const auto& e : policy.excluded_commands) {
        auto rule = parse_bash_pattern(e.value);
        if (!rule) continue;  // refused when the settings were read
        for (const Command& c : r.commands)
            if (!c.words.empty() && matches(*rule, match_text(line, c)))
                return Because{"an excludedCommands pattern matches " + match_text(line, c), e.value, e.source, c.begin};
    }
    return std::nullopt;
}

SBX_INLINE void Router::choose_where() {
    const auto& enabled = policy_.enabled;
    if (!enabled.value) {
        out_.where = Where::sandbox_off;
        out_.where_because = Because{"the sandbox is not enabled", "sandbox.enabled", enabled.source, std::nullopt};
        return;
    }
    const auto& unsandboxed = policy_.allow_unsandboxed;
    if (request_.dangerously_disable_sandbox) {
        if (unsandboxed.value) {
            out_.where = Where::unsandboxed;
            out_.where_because = Because{"the call sets dangerouslyDisableSandbox, and the policy honours it",
                                         "allowUnsandboxedCommands", unsandboxed.source, std::nullopt};
            return;
        }
        out_.notes.push_back(Because{"dangerouslyDisableSandbox is ignored: the policy does not allow unsandboxed "
                                     "commands",
                                     "allowUnsandboxedCommands", unsandboxed.source, std::nullopt});
    }
    // excludedCommands: one command of a readable line that a pattern matches
    // takes the line out (its approval then goes through the normal flow).
    if (reading_.readable()) {
        if (auto by = excluded_match(policy_, line_, reading_)) {
            out_.where = Where::excluded;
            out_.where_because = std::move(*by);
            return;
        }
    } else if (!policy_.excluded_commands.empty()) {
        out_.notes.push_back(Because{"excludedCommands were not applied: the line could not be read in full (" +
                                         reading_.unreadable->why + ")",
                                     "", std::nullopt, reading_.unreadable->at});
    }
    out_.where = Where::inside;
    out_.where_because = Because{"the sandbox is enabled, and nothing takes the command out", "sandbox.enabled",
                                 enabled.source, std::nullopt};
}

SBX_INLINE void Router::decide(Approval a, Because b, bool person_only) {
    if (a == Approval::ask && dont_ask()) {
        b.why += "; dontAsk refuses what would ask";
        a = Approval::deny;
        person_only = false;
    }
    out_.approval = a;
    out_.person_only = person_only;
    out_.approval_because = std::move(b);
    decided_ = true;
}

SBX_INLINE const SourcedRule* Router::first_match(const std::vector<SourcedRule>& rules, std::size_t& at) const {
    for (const auto& r : rules)
        for (const auto& c : candidates_)
            if (matches(r.rule, c.text)) {
                at = c.at;
                return &r;
            }
    return nullptr;
}

SBX_INLINE void Router::removals() {
    const RemovalPlace rp{place_.root, place_.home, place_.cwd, place_.folds_case};
    RemovalCheck check = critical_removals(reading_, rp);
    // A removal through a link: its directory as the kernel finds it, and what
    // a wildcard's directory or a `dir/` leads to.
    for (const auto& r : check.removed) {
        const auto comps = paths::components(r.path);
        if (comps.empty()) continue;
        auto dir = resolve(fs_, r.through ? r.path : paths::parent(r.path));
        if (!dir) continue;
        const std::string real = r.through ? *dir : paths::join(*dir, comps.back());
        if (real == r.path) continue;
        if (auto why = critical_path(real, rp))
            check.critical.push_back(CriticalRemoval{r.program, r.path, *why + " (through a link: " + real + ")", r.at});
    }
    if (!check.critical.empty()) {
        const auto& c = check.critical.front();
        return decide(Approval::ask,
                      Because{c.program + (c.operand.empty() ? "" : " " + c.operand) + " removes " + c.why +
                                  ": a person decides, in every mode",
                              "", std::nullopt, c.at},
                      true);
    }
    if (!check.complete && names_remover(line_))
        return decide(Approval::ask,
                      Because{"a remover is named in a line whose removals could not be checked in full: a person "
                              "decides, in every mode",
                              "", std::nullopt, reading_.unreadable ? std::optional(reading_.unreadable->at) : std::nullopt},
                      true);
    if (out_.where == Where::inside || out_.mode == PermissionMode::bypass_permissions) return;
    auto within = [&](const std::string& p) {
        if (paths::at_or_under(p, place_.root)) return true;
        for (const auto& d : policy_.additional_directories)
            if (paths::at_or_under(p, d.value)) return true;
        return false;
    };
    for (const auto& r : check.removed) {
        auto real = resolve(fs_, r.through ? r.path : paths::parent(r.path));
        if (within(r.path) && (!real || within(*real))) continue;
        return decide(Approval::ask,
                      Because{r.program + " removes " + r.path +
                                  ", outside the workspace, in a command that runs outside the sandbox",
                              "", std::nullopt, r.at});
    }
}

SBX_INLINE bool Router::decided_before_sandbox() {
    if (!request_.owner && out_.where != Where::inside) {
        // Not decide(): no ask to turn into a refusal, whatever the mode.
        out_.approval = Approval::deny;
        out_.approval_because = Because{"a caller other than the owner gets only confined commands, and this one "
                                        "would run outside the sandbox (" + out_.where_because.why + ")",
                                        out_.where_because.rule, out_.where_because.source, out_.where_because.at};
        decided_ = true;
        return true;
    }
    std::size_t at = 0;
    if (const SourcedRule* r = first_match(rules_.blocked, at)) {
        decide(Approval::deny, rule_because("the agent file's shell skill blocks " + r->from->value +
                                                ", confined or not",
                                            *r, at));
        return true;
    }
    if (!candidates_complete_ && !rules_.blocked.empty()) {
        decide(Approval::ask, Because{"the line could not be read in full (" +
                                          (reading_.unreadable ? reading_.unreadable->why : std::string("code it runs")) +
                                          "), so the shell skill's blocked commands could not be checked against it",
                                      rules_.blocked.front().from->value, rules_.blocked.front().from->source,
                                      reading_.unreadable ? std::optional(reading_.unreadable->at) : std::nullopt});
        return true;
    }
    if (const SourcedRule* r = first_match(rules_.deny, at)) {
        decide(Approval::deny, rule_because("a deny rule matches", *r, at));
        return true;
    }
    auto patterned = [](const std::vector<SourcedRule>& rules) {
        for (const auto& r : rules)
            if (r.rule.kind != BashRule::Kind::any) return &r;
        return static_cast<const SourcedRule*>(nullptr);
    };
    const std::string unread = reading_.unreadable ? reading_.unreadable->why : std::string("code it runs");
    if (!candidates_complete_)
        if (const SourcedRule* r = patterned(rules_.deny)) {
            decide(Approval::ask, rule_because("the line could not be read in full (" + unread +
                                                   "), so this deny rule could not be checked against it",
                                               *r, reading_.unreadable ? std::optional(reading_.unreadable->at) : std::nullopt));
            return true;
        }
    removals();
    if (decided_) return true;
    if (!request_.allowed_domains.empty()) {
        std::string hosts;
        for (const auto& h : request_.allowed_domains) hosts += (hosts.empty() ? "" : ", ") + h;
        const auto& strict = policy_.network.strict_allowlist;
        if (strict.value)
            decide(Approval::deny, Because{"the call names hosts of its own (" + hosts + "), which a strict allow list refuses",
                                           "network.strictAllowlist", strict.source, std::nullopt});
        else if (out_.mode == PermissionMode::bypass_permissions)
            decide(Approval::allow, Because{"the call names hosts of its own (" + hosts + "); bypassPermissions allows it",
                                            "", std::nullopt, std::nullopt});
        else
            decide(Approval::ask, Because{"the call names hosts of its own (" + hosts + "): no allow rule approves it",
                                          "", std::nullopt, std::nullopt});
        return true;
    }
    for (const auto& r : rules_.ask) {
        if (r.rule.kind == BashRule::Kind::any) continue;
        for (const auto& c : candidates_)
            if (matches(r.rule, c.text)) {
                decide(Approval::ask, rule_because("an ask rule matches", r, c.at));
                return true;
            }
    }
    if (!candidates_complete_)
        if (const SourcedRule* r = patterned(rules_.ask)) {
            decide(Approval::ask, rule_because("the line could not be read in full (" + unread +
                                                   "), so this ask rule could not be checked against it",
                                               *r, reading_.unreadable ? std::optional(reading_.unreadable->at) : std::nullopt));
            return true;
        }
    return false;
}

SBX_INLINE void Router::normal_flow() {
    for (const auto& r : rules_.ask)
        if (r.rule.kind == BashRule::Kind::any) return decide(Approval::ask, rule_because("a bare Bash ask rule", r, std::nullopt));
    // Every command of a readable line, as written (its variables in front too),
    // matched by some allow rule.
    const SourcedRule* first = nullptr;
    bool all = reading_.readable() && candidates_complete_;
    std::size_t commands = 0;
    for (const Command& c : reading_.commands) {
        if (!all) break;
        if (c.words.empty() && c.assignments.empty()) continue;
        ++commands;
        std::string text;
        for (const Word& a : c.assignments) text += std::string(line_.substr(a.begin, a.end - a.begin)) + " ";
        text += match_text(line_, c);
        if (!c.words.empty() || !text.empty()) text = text.substr(0, text.find_last_not_of(' ') + 1);
        const SourcedRule* hit = nullptr;
        for (const auto& r : rules_.allow)
            if (matches(r.rule, text)) {
                hit = &r;
                break;
            }
        if (!hit) all = false;
        else if (!first) first = hit;
    }
    if (all && commands > 0 && first)
        return decide(Approval::allow, rule_because(commands == 1 ? "an allow rule matches the command"
                                                                  : "allow rules match every command of the line",
                                                    *first, std::nullopt));
    const Because mode{"in " + std::string(mode_name(out_.mode)) + " mode", out_.mode_because.rule,
                       out_.mode_because.source, std::nullopt};
    switch (out_.mode) {
        case PermissionMode::bypass_permissions:
            return decide(Approval::allow, Because{mode.why + ", what no rule decides is allowed", mode.rule, mode.source, std::nullopt});
        case PermissionMode::dont_ask:
            return decide(Approval::deny, Because{mode.why + ", what no rule allows is refused", mode.rule, mode.source, std::nullopt});
        case PermissionMode::default_mode:
        case PermissionMode::accept_edits:
        case PermissionMode::plan:
        case PermissionMode::auto_mode: break;
    }
    decide(Approval::normal, Because{mode.why + ", no rule decides: the host's own flow does", mode.rule, mode.source, std::nullopt});
}

SBX_INLINE expected<Route> Router::run() {
    SBX_TRY(read_rules());
    SBX_TRY(choose_mode());
    std::tie(out_.unknown_host, out_.unknown_host_because) = unknown_host(policy_, out_.mode, out_.mode_because);
    reading_ = read_shell_line(line_);
    if (reading_.unreadable)
        out_.notes.push_back(Because{"the line could not be read in full: " + reading_.unreadable->why, "",
                                     std::nullopt, reading_.unreadable->at});
    candidates(line_, reading_, 0, 0, candidates_, candidates_complete_);
    choose_where();
    if (decided_before_sandbox()) return out_;
    if (out_.where == Where::inside) {
        const auto& auto_allow = policy_.auto_allow;
        const auto hidden = reading_.readable() ? hidden_code(reading_) : std::vector<HiddenCode>{};
        for (const auto& h : hidden) out_.notes.push_back(Because{"hidden code: " + h.why, "", std::nullopt, h.at});
        std::optional<Because> not_auto;
        if (!auto_allow.value)
            not_auto = Because{"sandboxed commands are not approved by the sandbox (autoAllowBashIfSandboxed is false)",
                               "autoAllowBashIfSandboxed", auto_allow.source, std::nullopt};
        else if (out_.mode == PermissionMode::plan)
            not_auto = Because{"in plan mode the sandbox approves nothing", out_.mode_because.rule,
                               out_.mode_because.source, std::nullopt};
        else if (!reading_.readable())
            not_auto = Because{"the line could not be read in full (" + reading_.unreadable->why + ")", "",
                               std::nullopt, reading_.unreadable->at};
        else if (!hidden.empty())
            not_auto = Because{"the line can change what runs (" + hidden.front().why + ")", "", std::nullopt,
                               hidden.front().at};
        if (!not_auto) {
            decide(Approval::automatic, Because{"it runs in the sandbox, which stands in for its approval",
                                                "autoAllowBashIfSandboxed", auto_allow.source, std::nullopt});
            return out_;
        }
        out_.notes.push_back(Because{"not approved by the sandbox: " + not_auto->why, not_auto->rule,
                                     not_auto->source, not_auto->at});
    }
    normal_flow();
    return out_;
}

}  // namespace detail

}  // namespace sbx::route
#endif
