// sbx/review/decision_json.hpp - a decision and the rule behind it, as JSON.
//
// The one spelling `sbx explain --json`, `sbx check --json` and `sbx diff
// --json` share: a path decision as {"allowed", "why", "rule"}, a host decision
// as {"verdict", "step", "why", "rule", "reach"}, each rule as {"list", "entry",
// "source"} (source as write_source() spells it), or null when no rule decided.
#pragma once

#include <string_view>

#include "sbx/core/inline.hpp"
#include "sbx/core/json_write.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/rules/fs_rules.hpp"

namespace sbx::review {

constexpr std::string_view step_name(net::HostDecision::Step s) noexcept {
    using S = net::HostDecision::Step;
    switch (s) {
        case S::denied_list: return "denied-list";
        case S::allowed_list: return "allowed-list";
        case S::local_binding: return "local-binding";
        case S::call_list: return "call-list";
        case S::not_in_call: return "not-in-call";
        case S::local_address: return "local-address";
        case S::named_address: return "named-address";
        case S::local_name: return "local-name";
        case S::strict: return "strict";
        case S::answered: return "answered";
        case S::call_decider: return "call-decider";
        case S::sandbox_decider: return "sandbox-decider";
        case S::nothing_decides: return "nothing-decides";
    }
    return "?";
}

constexpr std::string_view reach_name(net::Reach r) noexcept {
    using R = net::Reach;
    switch (r) {
        case R::nothing: return "nothing";
        case R::public_only: return "public";
        case R::public_or_private: return "public-or-private";
        case R::loopback: return "loopback";
        case R::named_address: return "named-address";
    }
    return "?";
}

// The members of a path decision, into an object `w` has open.
SBX_INLINE void write_fs_decision_members(json::Writer& w, const FsDecision& d);

// The members of a host decision, into an object `w` has open.
SBX_INLINE void write_host_decision_members(json::Writer& w, const net::HostDecision& d);

}  // namespace sbx::review

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_REVIEW)

namespace sbx::review {

SBX_INLINE void write_fs_decision_members(json::Writer& w, const FsDecision& d) {
    w.key("allowed").value(d.allowed).key("why").value(why(d)).key("rule");
    if (d.rule == nullptr) {
        w.null();
        return;
    }
    w.begin_object().key("list").value(d.rule->list).key("entry").value(d.rule->pattern).key("source");
    write_source(w, d.rule->source);
    w.end_object();
}

SBX_INLINE void write_host_decision_members(json::Writer& w, const net::HostDecision& d) {
    w.key("verdict").value(net::verdict_name(d.verdict)).key("step").value(step_name(d.step)).key("why").value(d.why);
    w.key("rule");
    if (d.rule == nullptr) {
        w.null();
    } else {
        w.begin_object().key("list").value(d.rule->list).key("entry").value(d.rule->text).key("source");
        write_source(w, d.rule->source);
        w.end_object();
    }
    w.key("reach").value(reach_name(d.reach));
}

}  // namespace sbx::review
#endif
