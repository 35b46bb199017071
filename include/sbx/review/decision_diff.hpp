// sbx/review/decision_diff.hpp - what a policy change opens and closes, decision by decision.
//
// diff_decisions() decides the same paths and hosts under two policies and
// returns every decision that differs: a path that became readable or writable
// or stopped being so, a host whose verdict changed. Which paths and hosts
// (diff_probes()): every one either policy names (a pattern is decided at its
// literal part and at one path it matches), the built-in credential stores, both
// sides' protected paths, the cloud metadata addresses of address.hpp's table,
// loopback, this machine's own addresses, and one public name no list names
// (what the policy does with unknown hosts). Paths are decided as `sbx run`'s
// command meets them (explain(): symlinks resolved through the FsView), hosts as
// its proxy decides them before resolving a name (decide_host()); a path the
// FsView cannot look at is decided as named (decide()). Pure but for the FsView.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/net/address.hpp"
#include "sbx/net/host_pattern.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/review/value_diff.hpp"
#include "sbx/rules/fs_rules.hpp"
#include "sbx/settings/credential_stores.hpp"
#include "sbx/settings/policy.hpp"
#include "sbx/settings/policy_fields.hpp"

namespace sbx::review {

// One side of a comparison: the policy and the rules a command runs with under it.
struct DiffSide {
    const Policy& policy;
    const FsRules& fs;            // command_fs_rules() of the policy
    const net::HostRules& hosts;  // compile_host_rules() of the policy, with the run's decider for unknown hosts
};

// What both sides share: the homes whose credential stores are built in
// (effective_policy's), and this machine's own addresses.
struct DiffContext {
    std::vector<std::string> homes;
    std::vector<net::Address> own;
};

// A path or host decided on both sides, and why it is.
struct Probe {
    enum class Kind { path, host };
    Kind kind = Kind::path;
    std::string path;        // path: absolute, normalised
    net::HostTarget target;  // host
    std::string origin;      // "filesystem.denyRead ~/.kube/**", "a built-in credential store", ...
};

// One decision that differs.
struct DecisionChange {
    enum class Aspect { read, write, reach };
    Probe probe;
    Aspect aspect = Aspect::read;
    std::string before, after;          // "allowed" or "denied"; for reach the verdict: allow, ask, deny
    std::string before_why, after_why;  // each side's reason, naming its rule
    Direction direction = Direction::neither;
    std::string change;  // in words: "became readable", "stopped being writable", "is now asked about"
};

constexpr std::string_view aspect_name(DecisionChange::Aspect a) noexcept {
    return a == DecisionChange::Aspect::read ? "read" : a == DecisionChange::Aspect::write ? "write" : "reach";
}

namespace detail {

// A name for `*` to stand in for, in a sample path.
inline constexpr std::string_view kSampleName = "sbx-sample";

// One path `pattern` matches, for deciding what the pattern covers: `**` as no
// component, `*` as kSampleName (inside a name, as "sample"), `?` and a set as
// a character they take; nullopt when the sample made does not match.
SBX_INLINE std::optional<std::string> sample_path(std::string_view pattern);

// The targets a host pattern names: a name or address at the pattern's port (or
// the default port), a subdomain pattern at one name under it; nothing for `*`,
// which the public name every diff decides stands for.
SBX_INLINE std::optional<net::HostTarget> sample_target(std::string_view text);

}  // namespace detail

// A public name no list is likely to name, which stands for every host no rule
// names, and the port the metadata addresses are probed at.
inline constexpr std::string_view kUnknownHostSample = "unlisted.example";
inline constexpr std::uint16_t kMetadataPort = 80;

// The paths and hosts diff_decisions() decides (see the file comment), each
// once, the first reason it is there kept.
SBX_INLINE std::vector<Probe> diff_probes(const DiffSide& before, const DiffSide& after, const DiffContext& ctx);

// Every decision about `probes` that differs from `before` to `after`, in the
// probes' order, read before write.
SBX_INLINE expected<std::vector<DecisionChange>> diff_decisions(const DiffSide& before, const DiffSide& after,
                                                           const std::vector<Probe>& probes, const DiffContext& ctx,
                                                           const FsView& fs);

}  // namespace sbx::review

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_REVIEW)

namespace sbx::review::detail {

SBX_INLINE std::optional<std::string> sample_path(std::string_view pattern) {
    std::string out;
    for (auto c : paths::components(pattern)) {
        if (c == "**") continue;
        std::string name;
        for (std::size_t i = 0; i < c.size(); ++i) {
            const char ch = c[i];
            if (ch == '\\' && i + 1 < c.size()) {
                name += c[++i];
            } else if (ch == '*') {
                name += c.size() == 1 ? kSampleName : std::string_view("sample");
            } else if (ch == '?') {
                name += 'x';
            } else if (ch == '[') {
                std::size_t end = i + 1;
                if (end < c.size() && (c[end] == '!' || c[end] == '^')) ++end;
                if (end < c.size()) ++end;  // a `]` first in the set is literal
                while (end < c.size() && c[end] != ']') ++end;
                if (end >= c.size()) {  // no closing bracket: a literal '['
                    name += ch;
                    continue;
                }
                const std::string set = "/" + std::string(c.substr(i, end - i + 1));
                for (char pick : std::string_view("abcdefghijklmnopqrstuvwxyz0123456789._-ABCDEFGHIJKLMNOPQRSTUVWXYZ"))
                    if (glob::match(set, "/" + std::string(1, pick))) {
                        name += pick;
                        break;
                    }
                i = end;
            } else {
                name += ch;
            }
        }
        out += '/';
        out += name;
    }
    if (out.empty()) out = "/";
    if (!glob::match(pattern, out)) return std::nullopt;
    return out;
}

SBX_INLINE std::optional<net::HostTarget> sample_target(std::string_view text) {
    auto p = net::parse_host_pattern(text);
    if (!p) return std::nullopt;
    const std::uint16_t port = p->port.value_or(net::kNamedHostPort);
    switch (p->kind) {
        case net::HostPattern::Kind::any: return std::nullopt;
        case net::HostPattern::Kind::subdomains: return net::HostTarget{"sbx-sample." + p->host, std::nullopt, port};
        case net::HostPattern::Kind::name: return net::HostTarget{p->host, std::nullopt, port};
        case net::HostPattern::Kind::address: return net::HostTarget{net::to_string(*p->address), *p->address, port};
    }
    return std::nullopt;
}

}  // namespace sbx::review::detail

namespace sbx::review {

SBX_INLINE std::vector<Probe> diff_probes(const DiffSide& before, const DiffSide& after, const DiffContext& ctx) {
    std::vector<Probe> out;
    auto add_path = [&](const std::string& p, const std::string& origin) {
        for (const auto& x : out)
            if (x.kind == Probe::Kind::path && x.path == p) return;
        out.push_back(Probe{Probe::Kind::path, p, {}, origin});
    };
    auto add_pattern = [&](const std::string& pattern, const std::string& origin) {
        if (!glob::has_wildcard(pattern)) return add_path(pattern, origin);
        add_path(glob::literal_prefix(pattern), origin);
        if (auto sample = detail::sample_path(pattern)) add_path(*sample, origin);
    };
    auto add_host = [&](const net::HostTarget& t, const std::string& origin) {
        for (const auto& x : out)
            if (x.kind == Probe::Kind::host && x.target.host == t.host && x.target.port == t.port) return;
        out.push_back(Probe{Probe::Kind::host, {}, t, origin});
    };
    for (const DiffSide* side : {&before, &after})
        for (const auto& f : kPolicyFields) {
            if (f.kind != PolicyField::Kind::list) continue;
            for (const auto& e : f.list(side->policy)) {
                const std::string origin = std::string(f.name) + " " + e.value;
                if (f.names == PolicyField::Names::paths) add_pattern(e.value, origin);
                if (f.names == PolicyField::Names::hosts)
                    if (auto t = detail::sample_target(e.value)) add_host(*t, origin);
            }
        }
    for (const auto& e : credential_store_denies(ctx.homes)) add_pattern(e.value, "a built-in credential store");
    for (const DiffSide* side : {&before, &after})
        for (const auto& p : side->fs.protected_paths) add_path(p.path, "a protected path: " + p.reason);
    for (const auto& r : net::kClassRanges) {
        const bool one = r.bits == (r.prefix.find(':') == std::string_view::npos ? 32u : 128u);
        if (r.address_class != net::AddressClass::metadata || !one) continue;
        if (auto t = net::canonical_target(r.prefix, kMetadataPort))
            add_host(*t, "a metadata address: " + std::string(r.reason));
    }
    for (std::string_view loop : {"localhost", "127.0.0.1", "::1"})
        if (auto t = net::canonical_target(loop, net::kNamedHostPort)) add_host(*t, "loopback");
    for (const auto& a : ctx.own)
        if (auto t = net::canonical_target(net::to_string(a), net::kNamedHostPort))
            add_host(*t, "an address of this machine");
    if (auto t = net::canonical_target(kUnknownHostSample, net::kNamedHostPort))
        add_host(*t, "a host no list names");
    return out;
}

SBX_INLINE expected<std::vector<DecisionChange>> diff_decisions(const DiffSide& before, const DiffSide& after,
                                                           const std::vector<Probe>& probes, const DiffContext& ctx,
                                                           const FsView& fs) {
    using V = net::HostDecision::Verdict;
    std::vector<DecisionChange> out;
    for (const auto& p : probes) {
        if (p.kind == Probe::Kind::host) {
            const auto b = net::decide_host(before.hosts, net::HostCall{}, p.target, ctx.own);
            const auto a = net::decide_host(after.hosts, net::HostCall{}, p.target, ctx.own);
            if (a.verdict == b.verdict) continue;
            out.push_back({p, DecisionChange::Aspect::reach, std::string(net::verdict_name(b.verdict)),
                           std::string(net::verdict_name(a.verdict)), b.why, a.why,
                           net::openness(a.verdict) > net::openness(b.verdict) ? Direction::widens : Direction::narrows,
                           a.verdict == V::allow ? "became reachable"
                           : a.verdict == V::ask ? "is now asked about"
                                                 : "stopped being reachable"});
            continue;
        }
        // A path the FsView cannot look at (a folder of another user's that
        // a policy names) is decided as named, on both sides alike.
        auto resolved = resolve(fs, p.path);
        for (auto access : {Access::read, Access::write}) {
            FsDecision b, a;
            if (resolved) {
                auto xb = explain(before.fs, p.path, access, fs);
                SBX_TRY(xb);
                auto xa = explain(after.fs, p.path, access, fs);
                SBX_TRY(xa);
                b = xb->decision;
                a = xa->decision;
            } else {
                b = decide(before.fs, p.path, access);
                a = decide(after.fs, p.path, access);
            }
            if (a.allowed == b.allowed) continue;
            const std::string able = access == Access::read ? "readable" : "writable";
            out.push_back({p, access == Access::read ? DecisionChange::Aspect::read : DecisionChange::Aspect::write,
                           std::string(allowed_word(b.allowed)), std::string(allowed_word(a.allowed)), why(b), why(a),
                           a.allowed ? Direction::widens : Direction::narrows,
                           (a.allowed ? "became " : "stopped being ") + able});
        }
    }
    return out;
}

}  // namespace sbx::review
#endif
