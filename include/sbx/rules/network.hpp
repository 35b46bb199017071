// sbx/rules/network.hpp - the policy's network lists compiled into HostRules.
//
// The rules net/hosts.hpp decides by, made from a merged Policy: each entry keeps
// the settings Source it came from, so that a decision names it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/net/host_pattern.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/settings/policy.hpp"

namespace sbx::net {

// What `sbx run` does with a host no rule names, unless its command line says
// otherwise: asks on the terminal (the launcher refuses it where there is none).
// `sbx explain`, `sbx check` and `sbx diff` decide with the same.
inline constexpr UnknownHost kRunUnknownHost = UnknownHost::ask;

// The policy's network lists as rules. Fails with INVALID_SETTINGS naming the
// file and key of the first entry that is not a host pattern (settings loading
// checks them too, so this fails only for a policy made by hand).
SBX_INLINE expected<HostRules> compile_host_rules(const Policy& policy);

}  // namespace sbx::net

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_RULES)

namespace sbx::net {

SBX_INLINE expected<HostRules> compile_host_rules(const Policy& policy) {
    HostRules rules;
    auto add = [](const SourcedList& list, std::string_view name, std::vector<HostRule>& out) -> expected<void> {
        for (const auto& e : list) {
            auto p = parse_host_pattern(e.value);
            if (!p) return fail(Error(p.error()).in_file(e.source.file.str()).at_key(e.source.key));
            out.push_back(HostRule{std::move(*p), e.value, std::string(name), e.source});
        }
        return {};
    };
    SBX_TRY(add(policy.network.denied_domains, "network.deniedDomains", rules.denied));
    SBX_TRY(add(policy.network.allowed_domains, "network.allowedDomains", rules.allowed));
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

}  // namespace sbx::net
#endif
