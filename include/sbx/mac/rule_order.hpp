// sbx/mac/rule_order.hpp - the plan's file rules placed in the order Seatbelt's last match needs.
//
// Seatbelt decides an operation by the last rule that matches it, so the file
// rules come in the order of fs_rules.hpp's decision: shallow before deep, at one
// depth an allow before a deny (a tie goes to the deny). A pattern whose `**`
// lets it match at several depths is placed at the shallowest, and repeated, cut
// to the region below, after each rule it can be deeper than (docs/seatbelt.md).
// A credential store that some allow can reach into is denied again after all
// of them, and only the rules that count inside it follow, cut to it: every other
// read deny and the allow-read rules at or under it (fs_rules.hpp).
//
// The entries carry their filters already quoted (quote.hpp) and a note that
// names the rule by its index in plan.rules, never by its path; profile.hpp
// writes them out. Pure.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <deque>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/mac/quote.hpp"
#include "sbx/mac/sbpl_regex.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/rules/fs_rules.hpp"

namespace sbx::mac {

namespace detail {

// macOS links these top-level names to /private; Seatbelt matches the path an
// access resolves to, so a rule naming one of them is also written for /private.
struct PrivateAlias {
    std::string_view path;
    std::string_view reason;
};

inline constexpr std::array kPrivateAliases = {
    PrivateAlias{"/tmp", "a symlink to /private/tmp: per-command temporary directories often live there"},
    PrivateAlias{"/var", "a symlink to /private/var: $TMPDIR (/var/folders/...) and /var/run live there"},
    PrivateAlias{"/etc", "a symlink to /private/etc"},
};

// One file rule of the plan, ready to be placed.
struct Rule {
    std::size_t index = 0;  // in plan.rules
    bool alias = false;     // the /private form of plan.rules[index]
    FsRule::Kind kind = FsRule::Kind::deny_read;
    std::vector<std::string> names;  // the components as written, without a trailing `**`
    std::vector<std::string> comps;  // the same in glob syntax: a literal head escaped
    std::string path;                // names joined: the path a rule without wildcards names
    std::string glob;                // comps joined: the pattern
    std::string literal;             // the leading components that hold no wildcard, as a path
    std::size_t literal_comps = 0;
    bool wildcard = false;
    bool variable = false;  // holds `**`, so it matches at more than one depth
    bool store = false;     // a credential store's deny-read (PlanRule::deny)
    std::size_t key = 0;    // the shallowest depth it can match: its components but `**`
    std::string region;     // filter: what it names and everything below
    std::string exact;      // filter: what it names
};

inline bool is_allow(FsRule::Kind k) { return k == FsRule::Kind::allow_read || k == FsRule::Kind::writable; }

// The name a glob component without wildcards matches (its escapes undone), or
// nullopt when it holds an unescaped `*`, `?` or `[`.
SBX_INLINE std::optional<std::string> literal_name(std::string_view comp);

// The plan's patterns are globs throughout: a rule on a path (the root, the
// temporary directory, a protected path) comes with its special characters
// escaped (make_plan.hpp), so a component without a wildcard is a name to match as it is.
SBX_INLINE expected<Rule> make_rule(std::size_t index, bool alias, FsRule::Kind kind, const std::string& pattern);

// The plan's file rules, each followed by its /private form where it has one.
SBX_INLINE expected<std::vector<Rule>> plan_rules(const Plan& plan);

// The pattern positions reachable after its first components have matched all of
// `comps` (a literal path's components), `**` closed over; empty when none is.
SBX_INLINE std::vector<std::size_t> positions_after(const std::vector<std::string>& pat,
                                                const std::vector<std::string>& comps);

// A filter for the paths strictly below the literal path `base` where the
// pattern `pat` matches, given the positions reached at `base`. Each position
// leaves at least one component to match, or the pattern would match `base`.
SBX_INLINE expected<std::string> below_filter(const std::string& base, const std::vector<std::string>& pat,
                                          const std::vector<std::size_t>& positions);

// One file rule in its place. Phases at one depth: allows, then denies (a tie
// goes to the deny), then allows a `**` makes deeper than a deny, then denies a
// `**` makes deeper than an allow (a conflict between two `**` rules stays denied).
struct Entry {
    std::size_t key = 0;
    int phase = 0;
    bool allow = false;
    std::string filter;
    const Rule* rule = nullptr;  // whose region this is part of
    std::string note;            // the comment above it
};

SBX_INLINE std::string rule_name(const Rule& r);

// The read rules in order (fs_rules.hpp's decide() for reads, as Seatbelt's last
// match): each rule at the shallowest depth it can match, and the repetitions a
// `**` rule needs where it can match deeper than a rule that comes after it.
SBX_INLINE expected<std::vector<Entry>> read_entries(const std::vector<Rule>& rules);

// The write rules in the same order: a path is writable where it is readable and
// inside a writable root, so every read deny denies writes, a writable root
// allows them, and a re-opened read allows them only inside a writable root.
SBX_INLINE std::vector<Entry> write_entries(const std::vector<Entry>& reads, const std::vector<Rule>& rules);

// A credential store placed again after every other file rule: inside it only
// the allow-read rules at or under it count (fs_rules.hpp), so its region is
// denied once more and then decided by those and every other read deny alone,
// each cut to the region. Without an allow that can reach into the store, the
// ordinary order decides it already and it needs no block.
struct StoreBlock {
    const Rule* store = nullptr;
    std::vector<Rule> rules;   // the read denies but the store, and the allow-reads at or under it
    std::vector<Entry> reads;  // their entries, as read_entries() places them
};

SBX_INLINE expected<std::deque<StoreBlock>> store_blocks(const std::vector<Rule>& rules);

// `e` cut to the region of `store`.
SBX_INLINE Entry inside(const Entry& e, const Rule& store);

// The directories above `r`'s paths, and (for a pattern) the partial matches
// above its first `**`: the rename or removal of any of them would carry the
// guarded path elsewhere.
SBX_INLINE expected<void> add_ancestors(const Rule& r, std::set<std::string>& literals, std::set<std::string>& regexes);

}  // namespace detail

}  // namespace sbx::mac

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_MAC)

namespace sbx::mac::detail {

SBX_INLINE std::optional<std::string> literal_name(std::string_view comp) {
    std::string out;
    for (std::size_t i = 0; i < comp.size(); ++i) {
        const char c = comp[i];
        if (c == '\\' && i + 1 < comp.size()) {
            out += comp[++i];
        } else if (c == '*' || c == '?' || c == '[') {
            return std::nullopt;
        } else {
            out += c;
        }
    }
    return out;
}

SBX_INLINE expected<Rule> make_rule(std::size_t index, bool alias, FsRule::Kind kind, const std::string& pattern) {
    Rule r;
    r.index = index;
    r.alias = alias;
    r.kind = kind;
    r.comps = owned_components(pattern);
    while (!r.comps.empty() && r.comps.back() == "**") r.comps.pop_back();
    for (const auto& c : r.comps) {
        auto name = literal_name(c);
        r.names.push_back(name ? *name : c);
    }
    r.path = join_components(r.names);
    r.glob = join_components(r.comps);
    while (r.literal_comps < r.comps.size() && literal_name(r.comps[r.literal_comps])) ++r.literal_comps;
    r.literal = join_components(
        std::vector<std::string>(r.names.begin(), r.names.begin() + static_cast<std::ptrdiff_t>(r.literal_comps)));
    r.wildcard = r.literal_comps < r.names.size();
    for (const auto& c : r.comps) {
        if (c == "**")
            r.variable = true;
        else
            ++r.key;
    }
    auto filter = [](std::string_view name, const std::string& text) -> expected<std::string> {
        auto q = quote(text);
        SBX_TRY(q);
        return "(" + std::string(name) + " " + *q + ")";
    };
    if (!r.wildcard) {
        auto region = filter("subpath", r.path), exact = filter("literal", r.path);
        SBX_TRY(region);
        SBX_TRY(exact);
        r.region = std::move(*region);
        r.exact = std::move(*exact);
        return r;
    }
    auto below = anchored(r.comps, Reach::below), only = anchored(r.comps, Reach::exact);
    SBX_TRY(below);
    SBX_TRY(only);
    auto region = filter("regex", *below), exact = filter("regex", *only);
    SBX_TRY(region);
    SBX_TRY(exact);
    r.region = std::move(*region);
    r.exact = std::move(*exact);
    return r;
}

SBX_INLINE expected<std::vector<Rule>> plan_rules(const Plan& plan) {
    std::vector<Rule> out;
    for (std::size_t i = 0; i < plan.rules.size(); ++i) {
        const auto& pr = plan.rules[i];
        const std::string key = "filesystem.rules[" + std::to_string(i) + "].pattern";
        if (!paths::is_absolute(pr.pattern))
            return fail(Error(Errc::invalid_plan, "'" + pr.pattern + "' is not an absolute path").at_key(key));
        auto r = make_rule(i, false, pr.kind, pr.pattern);
        if (!r) return fail(Error(r.error()).at_key(key));
        r->store = pr.deny == FsRule::Deny::credential_store;
        out.push_back(std::move(*r));
        for (const auto& a : kPrivateAliases) {
            if (!paths::at_or_under(pr.pattern, a.path)) continue;
            auto ar = make_rule(i, true, pr.kind, "/private" + pr.pattern);
            if (!ar) return fail(Error(ar.error()).at_key(key));
            ar->store = pr.deny == FsRule::Deny::credential_store;
            out.push_back(std::move(*ar));
        }
    }
    return out;
}

SBX_INLINE std::vector<std::size_t> positions_after(const std::vector<std::string>& pat,
                                                const std::vector<std::string>& comps) {
    const std::size_t n = pat.size();
    std::vector<char> reach(n + 1, 0);
    auto close = [&](std::vector<char>& r) {
        for (std::size_t j = 0; j < n; ++j)
            if (r[j] && pat[j] == "**") r[j + 1] = 1;
    };
    reach[0] = 1;
    close(reach);
    for (const auto& c : comps) {
        std::vector<char> next(n + 1, 0);
        bool any = false;
        for (std::size_t j = 0; j < n; ++j) {
            if (!reach[j]) continue;
            if (pat[j] == "**") {
                next[j] = next[j + 1] = 1;
                any = true;
            } else if (glob::detail::match_component(pat[j], c)) {
                next[j + 1] = 1;
                any = true;
            }
        }
        if (!any) return {};
        close(next);
        reach.swap(next);
    }
    std::vector<std::size_t> out;
    for (std::size_t j = 0; j <= n; ++j)
        // A position right after a reached `**` adds nothing the `**` does not cover.
        if (reach[j] && !(j > 0 && reach[j - 1] && pat[j - 1] == "**")) out.push_back(j);
    return out;
}

SBX_INLINE expected<std::string> below_filter(const std::string& base, const std::vector<std::string>& pat,
                                          const std::vector<std::size_t>& positions) {
    std::string re = "^";
    if (base != "/") append_regex_literal(re, base);
    std::vector<std::string> alternatives;
    for (const std::size_t j : positions) {
        auto alt = components_regex(std::span<const std::string>(pat).subspan(j));
        SBX_TRY(alt);
        alternatives.push_back(std::move(*alt));
    }
    if (alternatives.size() == 1) {
        re += alternatives.front();
    } else {
        re += "(";
        for (std::size_t i = 0; i < alternatives.size(); ++i) re += (i ? "|" : "") + alternatives[i];
        re += ")";
    }
    re += "(/.*)?$";
    auto q = quote(re);
    SBX_TRY(q);
    return "(regex " + *q + ")";
}

SBX_INLINE std::string rule_name(const Rule& r) {
    std::string out = "plan.rules[" + std::to_string(r.index) + "] " + std::string(plan_rule_kind_name(r.kind));
    if (r.alias) out += " (its /private form)";
    return out;
}

SBX_INLINE expected<std::vector<Entry>> read_entries(const std::vector<Rule>& rules) {
    std::vector<Entry> out;
    for (const auto& r : rules) {
        if (r.kind == FsRule::Kind::deny_read)
            out.push_back({r.key, 1, false, r.region, &r, rule_name(r)});
        else if (is_allow(r.kind))
            out.push_back({r.key, 0, true, r.region, &r, rule_name(r)});
    }
    for (const auto& d : rules) {
        if (d.kind != FsRule::Kind::deny_read) continue;
        for (const auto& a : rules) {
            if (!is_allow(a.kind)) continue;
            // A `**` deny placed before an allow, where it can match deeper than that allow.
            if (d.variable && d.key < a.key) {
                const std::string note = rule_name(d) + " can match deeper than " + rule_name(a);
                if (a.wildcard) {
                    // Two patterns: denied wherever both reach (stricter than the engine
                    // where the allow is the deeper one).
                    if (glob::overlaps_at_or_under(d.glob, a.glob) || glob::overlaps_at_or_under(a.glob, d.glob))
                        out.push_back({a.key, 3, false, "(require-all " + a.region + " " + d.region + ")", &d,
                                       note + ": denied where both reach"});
                    continue;
                }
                const auto dv = views(d.comps), av = views(a.names);
                if (auto s = glob::shallowest_match(dv, av)) {
                    // It matches the allow's own path (a tie, the deny wins) or above it (the allow wins).
                    if (*s == a.names.size())
                        out.push_back({a.key, 3, false, a.region, &d, note + ": it names that path itself"});
                    continue;
                }
                const auto at = positions_after(d.comps, a.names);
                if (at.empty()) continue;
                auto f = below_filter(a.path, d.comps, at);
                SBX_TRY(f);
                out.push_back({a.key, 3, false, std::move(*f), &d, note + ": denied again below it"});
            }
            // A `**` allow placed before a deny, where it can match deeper than that deny.
            if (a.variable && a.key <= d.key && !d.wildcard) {
                if (glob::shallowest_match(views(a.comps), views(d.names))) continue;  // never deeper than the deny
                const auto at = positions_after(a.comps, d.names);
                if (at.empty()) continue;
                auto f = below_filter(d.path, a.comps, at);
                SBX_TRY(f);
                out.push_back({d.key, 2, true, std::move(*f), &a,
                               rule_name(a) + " can match deeper than " + rule_name(d) + ": allowed again below it"});
            }
        }
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const Entry& x, const Entry& y) { return x.key != y.key ? x.key < y.key : x.phase < y.phase; });
    return out;
}

SBX_INLINE std::vector<Entry> write_entries(const std::vector<Entry>& reads, const std::vector<Rule>& rules) {
    std::vector<Entry> out;
    for (const auto& e : reads) {
        if (!e.allow || e.rule->kind == FsRule::Kind::writable) {
            out.push_back(e);
            continue;
        }
        const Rule& a = *e.rule;  // an allowRead
        const std::string& a_literal = a.literal;
        for (const auto& w : rules) {
            if (w.kind != FsRule::Kind::writable) continue;
            if (paths::at_or_under(a_literal, w.path)) {  // all of it lies in the root
                out.push_back({e.key, e.phase, true, e.filter, e.rule, e.note + ", inside " + rule_name(w)});
                break;
            }
            // A root inside a re-opened pattern: written where both reach. A root
            // inside a re-opened path is allowed by its own, deeper, rule.
            if (a.wildcard && paths::at_or_under(w.path, a_literal) &&
                (glob::may_match_at_or_under(a.glob, w.path) || glob::matches_at_or_above(a.glob, w.path)))
                out.push_back({e.key, e.phase, true, "(require-all " + e.filter + " " + w.region + ")", e.rule,
                               e.note + ", where it meets " + rule_name(w)});
        }
    }
    return out;
}

SBX_INLINE expected<std::deque<StoreBlock>> store_blocks(const std::vector<Rule>& rules) {
    // Whether `r` can name a path at or under the store `d` (a plain path).
    auto reaches_into = [](const Rule& r, const Rule& d) {
        return paths::at_or_under(r.literal, d.literal) ||
               (r.wildcard && paths::at_or_under(d.literal, r.literal) && glob::overlaps_at_or_under(r.glob, d.glob));
    };
    std::vector<const Rule*> stores;
    for (const auto& d : rules) {
        if (d.kind != FsRule::Kind::deny_read || !d.store) continue;
        if (std::any_of(rules.begin(), rules.end(), [&](const Rule& a) { return is_allow(a.kind) && reaches_into(a, d); }))
            stores.push_back(&d);
    }
    // Shallow before deep: the deepest store that holds a path decides it.
    std::stable_sort(stores.begin(), stores.end(), [](const Rule* a, const Rule* b) { return a->key < b->key; });
    std::deque<StoreBlock> out;
    for (const Rule* d : stores) {
        auto& b = out.emplace_back();
        b.store = d;
        // A plain deny above the store changes nothing inside it: every allow-read
        // that counts there is deeper.
        for (const auto& r : rules) {
            if (r.kind == FsRule::Kind::deny_read && !(r.store && r.literal == d->literal) && reaches_into(r, *d))
                b.rules.push_back(r);
            if (r.kind == FsRule::Kind::allow_read && paths::at_or_under(r.literal, d->literal)) b.rules.push_back(r);
        }
        auto reads = read_entries(b.rules);
        SBX_TRY(reads);
        b.reads = std::move(*reads);
    }
    return out;
}

SBX_INLINE Entry inside(const Entry& e, const Rule& store) {
    return Entry{e.key, e.phase, e.allow, "(require-all " + e.filter + " " + store.region + ")", e.rule,
                 e.note + ", inside " + rule_name(store)};
}

SBX_INLINE expected<void> add_ancestors(const Rule& r, std::set<std::string>& literals, std::set<std::string>& regexes) {
    for (std::size_t k = 1; k < std::min(r.names.size(), r.literal_comps + 1); ++k)
        literals.insert(join_components(
            std::vector<std::string>(r.names.begin(), r.names.begin() + static_cast<std::ptrdiff_t>(k))));
    if (!r.wildcard) return {};
    for (std::size_t k = r.literal_comps + 1; k < r.comps.size(); ++k) {
        if (r.comps[k - 1] == "**") break;
        auto re = anchored(std::span<const std::string>(r.comps).first(k), Reach::exact);
        SBX_TRY(re);
        regexes.insert(std::move(*re));
    }
    return {};
}

}  // namespace sbx::mac::detail
#endif
