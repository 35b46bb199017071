// sbx/review/check.hpp - a check file's expectations, decided as `sbx run` decides.
//
// run_checks() decides each expectation with the functions a sandboxed command
// meets: explain() for a path (symlinks resolved through the FsView, as the
// kernel would reach it) with the rules the command runs with
// (command_fs_rules.hpp), decide_host() for a host with the policy's host rules
// and this machine's own addresses. A host name is decided as the proxy decides
// it before resolving it: what the proxy then refuses for the addresses it
// resolves to (choose_address) depends on DNS at the time, not on the policy.
// A command line is routed (route.hpp) as `sbx route` routes it, in the mode
// the expectation names or the policy's default.
// Pure but for the FsView.
#pragma once

#include <optional>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/net/address.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/review/check_file.hpp"
#include "sbx/route/route.hpp"
#include "sbx/rules/fs_rules.hpp"
#include "sbx/settings/policy.hpp"

namespace sbx::review {

// One expectation and what the engine decided.
struct CheckOutcome {
    const Expectation* expectation = nullptr;
    bool holds = false;
    std::optional<FsExplanation> path;      // read, write
    std::optional<net::HostDecision> host;  // host; its rule points into the HostRules decided with
    std::optional<route::Route> route;      // command
};

// What a command expectation is routed with: the policy and where lines start.
struct RouteContext {
    const Policy& policy;
    route::Place place;
};

// Whether route `r` is what `e` expects: its approval and its where, each when given.
SBX_INLINE bool route_holds(const Expectation& e, const route::Route& r);

// Decides every expectation of `check`. `hosts` carries the sandbox's own
// decider for hosts no rule names (sbx run's default: ask); `own` are this
// machine's addresses. The outcomes point into `check` and `hosts`.
SBX_INLINE expected<std::vector<CheckOutcome>> run_checks(const CheckFile& check, const FsRules& rules,
                                                      const net::HostRules& hosts,
                                                      const std::vector<net::Address>& own, const RouteContext& routes,
                                                      const FsView& fs);

}  // namespace sbx::review

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_REVIEW)

namespace sbx::review {

SBX_INLINE bool route_holds(const Expectation& e, const route::Route& r) {
    if (e.approval && *e.approval != r.approval) return false;
    if (!e.where) return true;
    if (*e.where == "outside") return r.where != route::Where::inside;
    return *e.where == route::where_name(r.where);
}

SBX_INLINE expected<std::vector<CheckOutcome>> run_checks(const CheckFile& check, const FsRules& rules,
                                                      const net::HostRules& hosts,
                                                      const std::vector<net::Address>& own, const RouteContext& routes,
                                                      const FsView& fs) {
    std::vector<CheckOutcome> out;
    out.reserve(check.expect.size());
    for (const auto& e : check.expect) {
        CheckOutcome o;
        o.expectation = &e;
        if (e.subject == Expectation::Subject::command) {
            route::Request req;
            req.mode = e.mode;
            auto r = route::route(routes.policy, e.text, req, routes.place, fs);
            if (!r) {
                Error why = r.error();
                if (why.file.empty()) why.file = check.file;
                if (why.key.empty()) why.key = e.key;
                return fail(std::move(why));
            }
            o.holds = route_holds(e, *r);
            o.route = std::move(*r);
        } else if (e.subject == Expectation::Subject::host) {
            o.host = net::decide_host(hosts, net::HostCall{}, e.target, own);
            o.holds = o.host->verdict == e.verdict;
        } else {
            auto x = explain(rules, e.path, e.subject == Expectation::Subject::read ? Access::read : Access::write, fs);
            if (!x) {
                Error why = x.error();
                if (why.file.empty()) why.file = check.file;
                if (why.key.empty()) why.key = e.key;
                return fail(std::move(why));
            }
            o.holds = x->decision.allowed == e.allowed;
            o.path = std::move(*x);
        }
        out.push_back(std::move(o));
    }
    return out;
}

}  // namespace sbx::review
#endif
