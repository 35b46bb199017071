// sbx/net/hosts.hpp - which hosts a command may reach, and the rule that says so.
//
// Host patterns come from the settings' network.allowedDomains and deniedDomains
// and from the hosts a call lists for itself. decide_host() applies the
// reference's order to one connection's host and port, knowing this machine's
// own addresses:
//   1. a deniedDomains entry refuses it, whatever allows it (`*` there refuses
//      every host, localhost and local addresses included);
//   2. an allowedDomains entry lets it through, and so does allowLocalBinding
//      for every loopback target (localhost, *.localhost, 127.0.0.0/8, ::1) on
//      any port;
//   3. the hosts the call lists let it through, and with such a list any other
//      host is refused without asking;
//   4. strictAllowlist (or allowManagedDomainsOnly) refuses it;
//   5. the call's onUnknownHost decides, else the sandbox's own, else it is
//      refused.
// What a rule that lets a host through reaches depends on the kind of rule
// (Reach), and of the rules that match, the one that reaches widest decides
// (an exact name over a `*`): a wildcard (`*`, `*.example.com`) and a decider reach public
// addresses only; an exact name private ones too; a localhost name, through a
// pattern that names it (`localhost`, `*.localhost`) or allowLocalBinding,
// loopback only; an address pattern the address it names, of whatever kind.
// Nothing but an address pattern reaches link-local, cloud metadata or this
// machine's own addresses. The same holds for a literal address a client asks
// for and for the addresses a name resolves to: choose_address() applies the
// decision to those and picks the one to dial.
// Pure functions: resolving names and listing this machine's addresses are the
// callers', outside the engine.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/net/address.hpp"
#include "sbx/net/host_pattern.hpp"

namespace sbx::net {

// A pattern with where it came from.
struct HostRule {
    HostPattern pattern;
    std::string text;               // as written
    std::string list;               // "network.allowedDomains", "network.deniedDomains", "the call's hosts"
    std::optional<Source> source;   // the settings entry; nullopt for the call's own
};

// The list a call's own hosts belong to, as rules and decisions name it.
inline constexpr std::string_view kCallHosts = "the call's hosts";

// One host the call lists for itself (sbx's --allow-host; a host program's own
// list), as PlanRequest::call_hosts takes it; fails with the pattern's error.
SBX_INLINE expected<HostRule> call_host_rule(const std::string& text);

enum class UnknownHost { deny, allow, ask };

// How UnknownHost is spelt in plans, in the JSON of `sbx explain` and on the
// command line (--on-unknown-host): one table for every reader and writer.
inline constexpr std::array<std::pair<std::string_view, UnknownHost>, 3> kUnknownHostNames{{
    {"deny", UnknownHost::deny},
    {"allow", UnknownHost::allow},
    {"ask", UnknownHost::ask},
}};

constexpr std::string_view unknown_host_name(UnknownHost u) noexcept {
    for (const auto& [name, value] : kUnknownHostNames)
        if (value == u) return name;
    return "deny";
}

constexpr std::optional<UnknownHost> parse_unknown_host(std::string_view name) noexcept {
    for (const auto& [n, value] : kUnknownHostNames)
        if (n == name) return value;
    return std::nullopt;
}

struct HostRules {
    std::vector<HostRule> allowed, denied;
    bool strict = false;                    // strictAllowlist or allowManagedDomainsOnly
    std::optional<Source> strict_source;
    std::optional<UnknownHost> on_unknown;  // the sandbox's own decider; nullopt: refuse
    bool local = false;                     // allowLocalBinding: servers on this machine's loopback
    std::optional<Source> local_source;
};

// A person's answer about one host, which the host program keeps for the rest
// of its session and passes back in with each later call (the plan's
// network.answers; sbx run --answers). It decides where a question would be
// asked: a host no list decides, at step 5, before the deciders.
struct HostAnswer {
    std::string host;        // as HostTarget::host: a lower-case name, or an address in canonical text
    std::uint16_t port = 0;  // 0: every port
    bool allow = false;
};

// The most answers a plan or an answers file holds: a longer list is refused.
inline constexpr std::size_t kMaxHostAnswers = 10000;

// Why `host` cannot be an answer's host: not as canonical_target() writes a
// host, or a localhost name or local address, which no question is asked
// about. Empty: it can.
SBX_INLINE std::string answer_host_problem(std::string_view host);

// What one call adds: the hosts it lists for itself (nullopt: no list), its
// own decider for the rest, and the answers held for its session.
struct HostCall {
    std::optional<std::vector<HostRule>> hosts;
    std::optional<UnknownHost> on_unknown;
    std::vector<HostAnswer> answers;
};

// What the addresses of a target that a rule lets through may be.
enum class Reach {
    nothing,            // refused: nothing is dialed
    public_only,        // a wildcard or a decider: public addresses that are not this machine's
    public_or_private,  // an exact name: public or private addresses that are not this machine's
    loopback,           // a localhost name a pattern names, or allowLocalBinding: loopback only
    named_address,      // a literal address an address pattern names: that address, whatever its kind
};

struct HostDecision {
    enum class Verdict { allow, deny, ask };
    enum class Step {
        denied_list,     // 1: a deniedDomains entry
        allowed_list,    // 2: an allowedDomains entry
        local_binding,   // 2: allowLocalBinding, and the target is loopback
        call_list,       // 3: the call's hosts let it through
        named_address,   // 3: the name leads, without the network, to an address a pattern names
        not_in_call,     // 3: the call lists hosts, and not this one
        local_address,   // an address only a pattern naming it reaches, and none does
        local_name,      // a localhost name no pattern names: no wildcard or decider opens it
        strict,          // 4
        answered,        // 5: an answer held for the session (HostCall::answers)
        call_decider,    // 5: the call's onUnknownHost
        sandbox_decider, // 5: the sandbox's onUnknownHost
        nothing_decides, // 5: no decider: refused
    };
    Verdict verdict = Verdict::deny;
    Step step = Step::nothing_decides;
    Reach reach = Reach::nothing;    // for allow, and for ask once answered yes; nothing for deny
    const HostRule* rule = nullptr;  // for the list steps
    std::string why;                 // one line, for violations and explain
    std::optional<Address> dial{};   // named_address: the address to dial, whatever the name resolves to
};

// How a verdict is spelt in the JSON of `sbx explain` and `sbx check`, and in
// check files: one table for every reader and writer.
inline constexpr std::array<std::pair<std::string_view, HostDecision::Verdict>, 3> kVerdictNames{{
    {"allow", HostDecision::Verdict::allow},
    {"deny", HostDecision::Verdict::deny},
    {"ask", HostDecision::Verdict::ask},
}};

constexpr std::string_view verdict_name(HostDecision::Verdict v) noexcept {
    for (const auto& [name, value] : kVerdictNames)
        if (value == v) return name;
    return "deny";
}

constexpr std::optional<HostDecision::Verdict> parse_verdict(std::string_view name) noexcept {
    for (const auto& [n, value] : kVerdictNames)
        if (n == name) return value;
    return std::nullopt;
}

// How open a verdict is, for comparing two: deny < ask < allow.
constexpr int openness(HostDecision::Verdict v) noexcept {
    return v == HostDecision::Verdict::allow ? 2 : v == HostDecision::Verdict::ask ? 1 : 0;
}

namespace detail {

SBX_INLINE std::string source_text(const std::optional<Source>& s);

inline std::string describe(const HostRule& r) { return r.list + " " + r.text + source_text(r.source); }

SBX_INLINE std::string_view verdict_word(UnknownHost u);

SBX_INLINE bool is_own(const Address& a, const std::vector<Address>& own);

// Whether `a` lies where `reach` goes (address patterns aside).
SBX_INLINE bool within(Reach reach, const Address& a, const std::vector<Address>& own);

// What a pattern that matches `t` lets it reach (see the file comment).
SBX_INLINE Reach pattern_reach(const HostPattern& p, const HostTarget& t);

// An address's kind for people: its class, or "this machine" for one of this
// machine's own that is not loopback.
SBX_INLINE std::string address_kind(const Address& a, const std::vector<Address>& own);

}  // namespace detail

// Decides one connection's host and port from the rules, the call and this
// machine's own addresses `own` (IPv4-mapped ones count as IPv4). Promises: a
// deny pattern that matches refuses; an allow or ask names the rule or step
// behind it and what the addresses may be (reach); a literal address no address
// pattern names is allowed or asked about only when it is public and not one of
// `own` (or loopback, under allowLocalBinding); a localhost name only through a
// pattern naming it or allowLocalBinding, never asked about.
SBX_INLINE HostDecision decide_host(const HostRules& rules, const HostCall& call, const HostTarget& t,
                                const std::vector<Address>& own);

// What would let a refused connection through, for the line that reports it
// (sbx::AllowHints words it): nothing for a deny-list entry, which no allow
// overrides; the allow list for a host nothing allows (or that was refused when
// asked); a pattern naming the address, or local binding, for a local target;
// the call's own list when the call lists hosts.
enum class AllowKind { none, hosts, local, call };

SBX_INLINE AllowKind allow_kind(const HostDecision& d) noexcept;

// One address a name resolved to, judged against a decision.
struct AddressVerdict {
    Address address;   // unmapped
    std::string kind;  // its class ("public", "private", "loopback", ...), or "this machine"
    bool allowed = false;
};

// Whether the proxy may dial `resolved` for target `t` under decision `d` (of
// decide_host with the same rules, call and own): never when d refuses, nor
// when a deny address pattern names it (on t's port); always when an address
// pattern of the allowed lists or the call names it on t's port; else, for a
// literal target, when it is that address, and for a name as d.reach says.
SBX_INLINE AddressVerdict judge_address(const HostDecision& d, const HostRules& rules, const HostCall& call,
                                    const HostTarget& t, const Address& resolved, const std::vector<Address>& own);

// The address to dial for `t` under decision `d` (an allow, or an ask answered
// yes): a literal address as it is; for a name, the first of `resolved` that
// judge_address() allows. Fails (INVALID_ARGUMENT) with d.why when d refuses,
// and with the reason, naming each address and its kind, when none is allowed.
SBX_INLINE expected<Address> choose_address(const HostDecision& d, const HostRules& rules, const HostCall& call,
                                        const HostTarget& t, const std::vector<Address>& resolved,
                                        const std::vector<Address>& own);

}  // namespace sbx::net

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_NET)

namespace sbx::net {

SBX_INLINE expected<HostRule> call_host_rule(const std::string& text) {
    auto p = parse_host_pattern(text);
    if (!p) return fail(p.error());
    return HostRule{std::move(*p), text, std::string(kCallHosts), std::nullopt};
}

}  // namespace sbx::net

namespace sbx::net::detail {

SBX_INLINE std::string source_text(const std::optional<Source>& s) {
    if (!s) return {};
    return " [" + std::string(layer_name(s->layer)) + " " + s->file.str() + " " + s->key + "]";
}

SBX_INLINE std::string_view verdict_word(UnknownHost u) {
    return u == UnknownHost::allow ? "allowed" : u == UnknownHost::ask ? "asked" : "refused";
}

SBX_INLINE bool is_own(const Address& a, const std::vector<Address>& own) {
    for (const auto& o : own)
        if (unmap(o) == unmap(a)) return true;
    return false;
}

SBX_INLINE bool within(Reach reach, const Address& a, const std::vector<Address>& own) {
    const AddressClass c = classify(a);
    switch (reach) {
        case Reach::nothing: return false;
        case Reach::public_only: return c == AddressClass::public_address && !is_own(a, own);
        case Reach::public_or_private:
            return (c == AddressClass::public_address || c == AddressClass::private_network) && !is_own(a, own);
        case Reach::loopback: return c == AddressClass::loopback;
        case Reach::named_address: return true;
    }
    return false;
}

SBX_INLINE Reach pattern_reach(const HostPattern& p, const HostTarget& t) {
    if (p.kind == HostPattern::Kind::address) return Reach::named_address;
    if (is_localhost(t)) return p.kind == HostPattern::Kind::any ? Reach::nothing : Reach::loopback;
    if (p.kind == HostPattern::Kind::name) return Reach::public_or_private;
    return Reach::public_only;
}

SBX_INLINE std::string address_kind(const Address& a, const std::vector<Address>& own) {
    const AddressClass c = classify(a);
    if (c != AddressClass::loopback && is_own(a, own)) return "this machine";
    return std::string(class_name(c));
}

}  // namespace sbx::net::detail

namespace sbx::net {

SBX_INLINE HostDecision decide_host(const HostRules& rules, const HostCall& call, const HostTarget& t,
                                const std::vector<Address>& own) {
    using V = HostDecision::Verdict;
    using S = HostDecision::Step;
    for (const auto& r : rules.denied)
        if (matches(r.pattern, t)) return {V::deny, S::denied_list, Reach::nothing, &r, "denied by " + detail::describe(r)};
    // The rule of `list` that matches and reaches t widest: an exact name, which
    // may lead to a private address, before a wildcard that matched first, which
    // may not. `passed` keeps the first one that matched but may not reach t, for
    // the reason.
    auto rank = [](Reach r) {
        return r == Reach::nothing ? 0 : r == Reach::public_only ? 1 : r == Reach::named_address ? 3 : 2;
    };
    const HostRule* passed = nullptr;
    auto widest = [&](const std::vector<HostRule>& list) -> std::pair<const HostRule*, Reach> {
        std::pair<const HostRule*, Reach> best{nullptr, Reach::nothing};
        for (const auto& r : list) {
            if (!matches(r.pattern, t)) continue;
            const Reach reach = detail::pattern_reach(r.pattern, t);
            if (reach != Reach::nothing && (!t.address || detail::within(reach, *t.address, own))) {
                if (rank(reach) > rank(best.second)) best = {&r, reach};
            } else if (passed == nullptr) {
                passed = &r;
            }
        }
        return best;
    };
    const auto allowed = widest(rules.allowed);
    const auto listed = call.hosts ? widest(*call.hosts) : std::pair<const HostRule*, Reach>{nullptr, Reach::nothing};
    // The call's list widens what the allow list lets through (an exact name there,
    // under a `*` of the settings); it does not narrow it.
    if (allowed.first && !(listed.first && rank(listed.second) > rank(allowed.second)))
        return {V::allow, S::allowed_list, allowed.second, allowed.first, "allowed by " + detail::describe(*allowed.first)};
    // Local servers are the sandbox's switch, like its allow list: a call's own
    // list does not close them.
    if (!allowed.first && rules.local && (is_localhost(t) || (t.address && classify(*t.address) == AddressClass::loopback)))
        return {V::allow, S::local_binding, Reach::loopback, nullptr,
                "a loopback target, allowed by network.allowLocalBinding" + detail::source_text(rules.local_source)};
    if (listed.first)
        return {V::allow, S::call_list, listed.second, listed.first, "allowed by " + detail::describe(*listed.first)};
    // A name that leads, without asking the network, to an address a pattern
    // names: that address, by this name too (127.0.0.1:3000 by localhost:3000).
    if (!t.address)
        for (const auto& a : t.local_addresses) {
            const HostTarget at{to_string(a), a, t.port, {}};
            bool denied = false;
            for (const auto& r : rules.denied) denied = denied || matches(r.pattern, at);
            if (denied) continue;
            for (const auto* list : {&rules.allowed, call.hosts ? &*call.hosts : nullptr}) {
                if (list == nullptr) continue;
                for (const auto& r : *list)
                    if (r.pattern.kind == HostPattern::Kind::address && matches(r.pattern, at))
                        return {V::allow, S::named_address, Reach::named_address, &r,
                                "allowed by " + detail::describe(r) + ": " + t.host + " is " + to_string(a) +
                                    " here (localhost, /etc/hosts; DNS is not asked)",
                                a};
            }
        }
    // What only a pattern naming it reaches, when steps 2 and 3 found none: no
    // decider opens it, and no question is asked.
    const std::string not_by = passed ? " (" + passed->list + " " + passed->text + " does not)" : std::string();
    if (t.address && !detail::within(Reach::public_only, *t.address, own)) {
        const std::string kind = detail::address_kind(*t.address, own);
        // A reserved address says which block of the special-purpose registries holds it.
        const auto c = classification(*t.address);
        const std::string block = kind == "reserved" && c.range != nullptr ? " (" + std::string(c.range->reason) + ")" : "";
        return {V::deny, S::local_address, Reach::nothing, nullptr,
                (kind == "this machine" ? std::string("an address of this machine") : "a " + kind + " address") +
                    block + " is reached only through a pattern that names the address" + not_by};
    }
    if (is_localhost(t))
        return {V::deny, S::local_name, Reach::nothing, nullptr,
                "a localhost name is reached only through a pattern that names it (localhost, *.localhost) or "
                "network.allowLocalBinding" + not_by};
    if (call.hosts) return {V::deny, S::not_in_call, Reach::nothing, nullptr, "not among the hosts the call lists"};
    if (rules.strict) {
        std::string why = "not on the allow list, and the allow list is strict";
        if (rules.strict_source) why += " [" + rules.strict_source->file.str() + " " + rules.strict_source->key + "]";
        return {V::deny, S::strict, Reach::nothing, nullptr, why};
    }
    auto by = [&](UnknownHost u, S step, std::string_view whose) -> HostDecision {
        const V v = u == UnknownHost::allow ? V::allow : u == UnknownHost::ask ? V::ask : V::deny;
        return {v, step, v == V::deny ? Reach::nothing : Reach::public_only, nullptr,
                "not on the allow list; " + std::string(detail::verdict_word(u)) + " by " + std::string(whose) +
                    " onUnknownHost"};
    };
    // An answer for this port before one for every port.
    const HostAnswer* answer = nullptr;
    for (const auto& a : call.answers)
        if (a.host == t.host && (a.port == t.port || (a.port == 0 && answer == nullptr))) answer = &a;
    if (answer != nullptr) {
        const std::string which = answer->port == 0 ? " (every port)" : " (port " + std::to_string(answer->port) + ")";
        return {answer->allow ? V::allow : V::deny, S::answered, answer->allow ? Reach::public_only : Reach::nothing,
                nullptr,
                std::string("not on the allow list; ") + (answer->allow ? "allowed" : "refused") +
                    " by an answer held for the session" + which};
    }
    if (call.on_unknown) return by(*call.on_unknown, S::call_decider, "the call's");
    if (rules.on_unknown) return by(*rules.on_unknown, S::sandbox_decider, "the sandbox's");
    return {V::deny, S::nothing_decides, Reach::nothing, nullptr, "not on the allow list, and nothing decides other hosts"};
}

SBX_INLINE std::string answer_host_problem(std::string_view host) {
    auto t = canonical_target(host, 443);
    if (!t || t->host != host) return "'" + std::string(host) + "' is not a host name or an address in canonical text";
    if (is_localhost(*t)) return "a localhost name is never asked about";
    if (t->address && classify(*t->address) != AddressClass::public_address)
        return "a " + std::string(class_name(classify(*t->address))) + " address is never asked about";
    return {};
}

SBX_INLINE AllowKind allow_kind(const HostDecision& d) noexcept {
    using S = HostDecision::Step;
    switch (d.step) {
        case S::denied_list: return AllowKind::none;
        case S::local_address:
        case S::local_name: return AllowKind::local;
        case S::not_in_call: return AllowKind::call;
        default: return AllowKind::hosts;
    }
}

SBX_INLINE AddressVerdict judge_address(const HostDecision& d, const HostRules& rules, const HostCall& call,
                                    const HostTarget& t, const Address& resolved, const std::vector<Address>& own) {
    AddressVerdict out{unmap(resolved), detail::address_kind(resolved, own), false};
    if (d.verdict == HostDecision::Verdict::deny) return out;
    const HostTarget as_address{to_string(out.address), out.address, t.port};
    auto named_in = [&](const std::vector<HostRule>& list) {
        for (const auto& r : list)
            if (r.pattern.kind == HostPattern::Kind::address && matches(r.pattern, as_address)) return true;
        return false;
    };
    if (named_in(rules.denied)) return out;
    if (named_in(rules.allowed) || (call.hosts && named_in(*call.hosts))) out.allowed = true;
    else if (t.address) out.allowed = out.address == *t.address;
    else out.allowed = detail::within(d.reach, out.address, own);
    return out;
}

SBX_INLINE expected<Address> choose_address(const HostDecision& d, const HostRules& rules, const HostCall& call,
                                        const HostTarget& t, const std::vector<Address>& resolved,
                                        const std::vector<Address>& own) {
    if (d.verdict == HostDecision::Verdict::deny) return fail(Errc::invalid_argument, d.why);
    if (t.address) return *t.address;
    if (d.dial) return *d.dial;
    std::string seen;
    for (const auto& a : resolved) {
        const AddressVerdict v = judge_address(d, rules, call, t, a, own);
        if (v.allowed) return v.address;
        if (!seen.empty()) seen += ", ";
        seen += to_string(v.address) + " (" + v.kind + ")";
    }
    if (resolved.empty()) return fail(Errc::invalid_argument, t.host + " resolved to no address");
    std::string_view reach = "no rule reaches them";
    if (d.reach == Reach::public_only) reach = "the rule that lets it through reaches public addresses only";
    else if (d.reach == Reach::public_or_private) reach = "a name reaches public and private addresses only";
    else if (d.reach == Reach::loopback) reach = "a localhost name reaches loopback only";
    return fail(Errc::invalid_argument, t.host + " resolves only to addresses a name may not reach: " + seen + "; " +
                                            std::string(reach) + "; allow the address itself (such as 127.0.0.1:" +
                                            std::to_string(t.port) + ") to reach a local server");
}

}  // namespace sbx::net
#endif
