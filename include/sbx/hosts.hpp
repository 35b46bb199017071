// sbx/hosts.hpp - which hosts a command may reach, and the rule that says so.
//
// Host patterns come from the settings' network.allowedDomains and deniedDomains
// and from the hosts a call lists for itself; decide_host() applies the
// reference's order to one connection's host and port:
//   1. a deniedDomains entry refuses it, whatever allows it;
//   2. an allowedDomains entry lets it through, and so does allowLocalBinding
//      for every loopback target (localhost, *.localhost, 127.0.0.0/8, ::1) on
//      any port;
//   3. the hosts the call lists let it through, and with such a list any other
//      host is refused without asking;
//   4. strictAllowlist (or allowManagedDomainsOnly) refuses it;
//   5. the call's onUnknownHost decides, else the sandbox's own, else it is
//      refused.
// Addresses of this machine's own kinds (loopback, link-local, cloud metadata,
// multicast, unspecified, broadcast, reserved) are reached only through a pattern
// that names the address itself; `*` and names never reach them, `localhost` and
// `*.localhost` aside, which reach loopback. check_resolved() applies the same
// rule to the addresses a name resolved to, and picks the one to dial.
// Pure functions: resolving names is the proxy's, outside the engine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/address.hpp"
#include "sbx/expected.hpp"
#include "sbx/host_pattern.hpp"
#include "sbx/policy.hpp"

namespace sbx::net {

// A pattern with where it came from.
struct HostRule {
    HostPattern pattern;
    std::string text;               // as written
    std::string list;               // "network.allowedDomains", "network.deniedDomains", "the call's hosts"
    std::optional<Source> source;   // the settings entry; nullopt for the call's own
};

enum class UnknownHost { deny, allow, ask };

struct HostRules {
    std::vector<HostRule> allowed, denied;
    bool strict = false;                    // strictAllowlist or allowManagedDomainsOnly
    std::optional<Source> strict_source;
    std::optional<UnknownHost> on_unknown;  // the sandbox's own decider; nullopt: refuse
    bool local = false;                     // allowLocalBinding: servers on this machine's loopback
    std::optional<Source> local_source;
};

// What one call adds: the hosts it lists for itself (nullopt: no list) and its
// own decider for the rest.
struct HostCall {
    std::optional<std::vector<HostRule>> hosts;
    std::optional<UnknownHost> on_unknown;
};

struct HostDecision {
    enum class Verdict { allow, deny, ask };
    enum class Step {
        denied_list,     // 1: a deniedDomains entry
        allowed_list,    // 2: an allowedDomains entry
        local_binding,   // 2: allowLocalBinding, and the target is loopback
        call_list,       // 3: the call's hosts let it through
        not_in_call,     // 3: the call lists hosts, and not this one
        local_address,   // a local address no pattern names: no decider opens it
        strict,          // 4
        call_decider,    // 5: the call's onUnknownHost
        sandbox_decider, // 5: the sandbox's onUnknownHost
        nothing_decides, // 5: no decider: refused
    };
    Verdict verdict = Verdict::deny;
    Step step = Step::nothing_decides;
    const HostRule* rule = nullptr;  // for the list steps
    std::string why;                 // one line, for violations and explain
};

namespace detail {

inline std::string describe(const HostRule& r) {
    std::string out = r.list + " " + r.text;
    if (r.source) out += " [" + std::string(layer_name(r.source->layer)) + " " + r.source->file.str() + " " + r.source->key + "]";
    return out;
}

inline std::string_view verdict_word(UnknownHost u) {
    return u == UnknownHost::allow ? "allowed" : u == UnknownHost::ask ? "asked" : "refused";
}

}  // namespace detail

inline HostDecision decide_host(const HostRules& rules, const HostCall& call, const HostTarget& t) {
    using V = HostDecision::Verdict;
    using S = HostDecision::Step;
    auto first_match = [&](const std::vector<HostRule>& list) -> const HostRule* {
        for (const auto& r : list)
            if (matches(r.pattern, t)) return &r;
        return nullptr;
    };
    // localhost names reach loopback as if an address pattern named it; nothing
    // else about them differs.
    if (const auto* r = first_match(rules.denied)) return {V::deny, S::denied_list, r, "denied by " + detail::describe(*r)};
    if (const auto* r = first_match(rules.allowed)) return {V::allow, S::allowed_list, r, "allowed by " + detail::describe(*r)};
    // Local servers are the sandbox's switch, like its allow list: a call's own
    // list does not close them.
    if (rules.local && (is_localhost(t) || (t.address && classify(*t.address) == AddressClass::loopback))) {
        std::string why = "a loopback target, allowed by network.allowLocalBinding";
        if (rules.local_source)
            why += " [" + std::string(layer_name(rules.local_source->layer)) + " " + rules.local_source->file.str() + " " +
                   rules.local_source->key + "]";
        return {V::allow, S::local_binding, nullptr, why};
    }
    if (call.hosts)
        if (const auto* r = first_match(*call.hosts)) return {V::allow, S::call_list, r, "allowed by " + detail::describe(*r)};
    // A local address (loopback, link-local, metadata, ...) written as such is
    // reached only through a pattern that names it, which steps 2 and 3 found;
    // no decider opens it.
    if (t.address && is_local_class(classify(*t.address)))
        return {V::deny, S::local_address, nullptr,
                std::string("a ") + std::string(class_name(classify(*t.address))) +
                    " address is reached only through a pattern that names it"};
    if (call.hosts) return {V::deny, S::not_in_call, nullptr, "not among the hosts the call lists"};
    if (rules.strict) {
        std::string why = "not on the allow list, and the allow list is strict";
        if (rules.strict_source) why += " [" + rules.strict_source->file.str() + " " + rules.strict_source->key + "]";
        return {V::deny, S::strict, nullptr, why};
    }
    auto verdict = [](UnknownHost u) { return u == UnknownHost::allow ? V::allow : u == UnknownHost::ask ? V::ask : V::deny; };
    if (call.on_unknown)
        return {verdict(*call.on_unknown), S::call_decider, nullptr,
                "not on the allow list; " + std::string(detail::verdict_word(*call.on_unknown)) + " by the call's onUnknownHost"};
    if (rules.on_unknown)
        return {verdict(*rules.on_unknown), S::sandbox_decider, nullptr,
                "not on the allow list; " + std::string(detail::verdict_word(*rules.on_unknown)) +
                    " by the sandbox's onUnknownHost"};
    return {V::deny, S::nothing_decides, nullptr, "not on the allow list, and nothing decides other hosts"};
}

// The policy's network lists as rules. Fails with INVALID_SETTINGS naming the
// file and key of the first entry that is not a host pattern (settings loading
// checks them too, so this fails only for a policy made by hand).
inline expected<HostRules> compile_host_rules(const Policy& policy) {
    HostRules rules;
    auto add = [](const SourcedList& list, std::string_view name, std::vector<HostRule>& out) -> expected<void> {
        for (const auto& e : list) {
            auto p = parse_host_pattern(e.value);
            if (!p) return fail(Error(p.error()).in_file(e.source.file.str()).at_key(e.source.key));
            out.push_back(HostRule{std::move(*p), e.value, std::string(name), e.source});
        }
        return {};
    };
    if (auto r = add(policy.network.denied_domains, "network.deniedDomains", rules.denied); !r) return fail(r.error());
    if (auto r = add(policy.network.allowed_domains, "network.allowedDomains", rules.allowed); !r) return fail(r.error());
    if (policy.network.allow_local_binding.value) {
        rules.local = true;
        rules.local_source = policy.network.allow_local_binding.source;
    }
    if (policy.network.strict_allowlist.value) {
        rules.strict = true;
        rules.strict_source = policy.network.strict_allowlist.source;
    } else if (policy.network.managed_domains_only.value) {
        rules.strict = true;
        rules.strict_source = policy.network.managed_domains_only.source;
    }
    return rules;
}

// What the proxy may dial for an allowed target: a literal address as it is; for
// a name, the first resolved address that is not of a local kind (see the file
// comment), or of loopback for localhost names, or one an address pattern of
// the allowed lists (or the call's) names with the target's port. `own` are
// this machine's addresses, which no name reaches either. Fails with the reason
// when none remains.
inline expected<Address> check_resolved(const HostTarget& t, const std::vector<Address>& resolved,
                                        const std::vector<Address>& own, const HostRules& rules, const HostCall& call) {
    auto named = [&](const Address& a) {
        HostTarget as_address{to_string(a), a, t.port};
        auto any_of = [&](const std::vector<HostRule>& list) {
            for (const auto& r : list)
                if (r.pattern.kind == HostPattern::Kind::address && matches(r.pattern, as_address)) return true;
            return false;
        };
        return any_of(rules.allowed) || (call.hosts && any_of(*call.hosts));
    };
    auto is_own = [&](const Address& a) {
        for (const auto& o : own)
            if (unmap(o) == a) return true;
        return false;
    };
    if (t.address) {
        // Decided by the patterns already: `*` and names never match a local
        // address, so one that got here was named.
        return *t.address;
    }
    std::string seen;
    for (const auto& raw : resolved) {
        const Address a = unmap(raw);
        const AddressClass c = classify(a);
        const bool local = is_local_class(c) || is_own(a);
        if (!local) return a;
        if (is_localhost(t) && c == AddressClass::loopback) return a;
        if (named(a)) return a;
        if (!seen.empty()) seen += ", ";
        seen += to_string(a) + " (" + std::string(is_own(a) && !is_local_class(c) ? "this machine" : class_name(c)) + ")";
    }
    if (resolved.empty()) return fail(Errc::invalid_argument, t.host + " resolved to no address");
    return fail(Errc::invalid_argument, t.host + " resolves only to addresses a name may not reach: " + seen +
                                            "; allow the address itself (such as 127.0.0.1:" + std::to_string(t.port) +
                                            ") to reach a local server");
}

}  // namespace sbx::net
