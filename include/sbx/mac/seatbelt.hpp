// sbx/mac/seatbelt.hpp - the Seatbelt profile (SBPL) that confines one command on macOS.
//
// profile() turns a Plan into the text sbx-mac hands to `sandbox-exec -p`: deny by
// default; reads everywhere but the plan's read denies, with re-opened regions as
// the plan says; writes only in the writable roots, never to a protected or
// write-denied path nor to one hidden from reads; no guarded path, nor a directory
// above one, renamed or removed; network only to the launcher's proxy on loopback,
// local servers with allowLocalBinding, the Unix sockets the settings name; then a
// fixed block of what every command needs to start and run.
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
// Every path and pattern reaches the text through quote(), the one quoting point;
// comments name rules by their index in plan.rules, never by their path.
// Pure: no system call, no environment, no clock.
#pragma once

#include <algorithm>
#include <array>
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/plan/plan.hpp"

namespace sbx::mac {

// What the launcher adds to the plan.
struct ProfileOptions {
    // Ports of the launcher's proxy on 127.0.0.1. Absent (or a plan whose network
    // is `none`): the command reaches no proxy, so no host at all.
    std::optional<std::uint16_t> http_proxy_port, socks_proxy_port;
    // Pseudo-terminals: open new ones (script, expect, ssh -t) and use terminal
    // ioctls on them and on /dev/tty. Off for a command with no terminal.
    bool allow_pty = true;
};

// The one function through which a path, a pattern or any other variable text
// enters a profile: an SBPL string literal that reads back as exactly `text`.
// Only `"` ends an SBPL string and only `\` starts an escape, so those two are
// escaped and every other byte (newline, `(`, `;`, `#` included) stands for
// itself inside the quotes. NUL is refused: sandbox-exec takes the profile as a
// C string, which would end there. Errors: INVALID_ARGUMENT.
inline expected<std::string> quote(std::string_view text) {
    std::string out;
    out.reserve(text.size() + 2);
    out += '"';
    for (const char c : text) {
        if (c == '\0') {
            std::string shown;
            for (const char d : text) shown += d == '\0' ? std::string("\\0") : std::string(1, d);
            return fail(Error(Errc::invalid_argument,
                              "a NUL byte cannot be part of a Seatbelt profile, which sandbox-exec reads as a C string")
                            .in_file(std::move(shown)));
        }
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    out += '"';
    return out;
}

namespace detail {

// Characters a regex gives a meaning to outside brackets, escaped with a
// backslash. `]` and `}` alone are literal in POSIX extended regexes, where an
// escape of them is undefined, so they stay bare.
inline constexpr std::string_view kRegexSpecial = "\\^$.|?*+()[{";

inline void append_regex_literal(std::string& out, std::string_view s) {
    for (const char c : s) {
        if (kRegexSpecial.find(c) != std::string_view::npos) out += '\\';
        out += c;
    }
}

// The characters of a glob set `[...]` starting at pattern[i], as
// glob::detail::match_set reads them (before any negation). `valid` false: no
// closing `]`, so the `[` is a literal character.
struct GlobSet {
    std::bitset<256> members;
    bool negate = false;
    bool valid = false;
    std::size_t end = 0;  // one past the closing `]`
};

inline GlobSet parse_glob_set(std::string_view pat, std::size_t i) {
    // The engine's own matcher decides membership, so the regex can never read a
    // set otherwise than a rule's decision does.
    GlobSet s;
    s.negate = i + 1 < pat.size() && (pat[i + 1] == '!' || pat[i + 1] == '^');
    for (unsigned c = 0; c < 256; ++c) {
        std::size_t at = i;
        const bool matched = glob::detail::match_set(pat, at, static_cast<char>(c), s.valid);
        if (!s.valid) return GlobSet{};
        s.members.set(c, matched != s.negate);
        s.end = at;
    }
    return s;
}

enum class CharClass { digit, lower, upper, other };

constexpr CharClass char_class(unsigned c) {
    if (c >= '0' && c <= '9') return CharClass::digit;
    if (c >= 'a' && c <= 'z') return CharClass::lower;
    if (c >= 'A' && c <= 'Z') return CharClass::upper;
    return CharClass::other;
}

// The inside of a bracket expression for `m`, written so that POSIX and
// ECMAScript regexes read it alike: runs of letters or digits as ranges, `[`
// after the plain characters (never before `:`, `.` or `=`), `^` never first,
// `-` last. `m` holds neither `]`, `\` nor NUL, and more than `^` alone.
inline std::string bracket_body(const std::bitset<256>& m) {
    std::string plain;
    for (unsigned c = 1; c < 256; ++c) {
        if (!m.test(c) || c == '[' || c == '^' || c == '-') continue;
        const CharClass k = char_class(c);
        unsigned e = c;
        while (k != CharClass::other && e + 1 < 256 && m.test(e + 1) && char_class(e + 1) == k) ++e;
        if (e - c >= 2) {
            plain += static_cast<char>(c);
            plain += '-';
            plain += static_cast<char>(e);
            c = e;
        } else {
            plain += static_cast<char>(c);
        }
    }
    std::string out = plain;
    if (m.test('[')) out += '[';
    if (m.test('^')) out += '^';
    if (m.test('-')) out = out.empty() ? "-" + out : out + '-';
    if (!out.empty() && out.front() == '^') out = "-^";  // only `^` and `-`: `-` first keeps `^` literal
    return out;
}

// A glob set as a regex matching one character of a component (never `/`).
inline expected<std::string> set_regex(const GlobSet& s, std::string_view component) {
    const std::string where = "the set in '" + std::string(component) + "'";
    if (s.negate) {
        // `]` or `\` inside a negated bracket reads differently in POSIX and in
        // other regex dialects: refused rather than guessed.
        if (s.members.test(']') || s.members.test('\\'))
            return fail(Errc::invalid_argument,
                        where + " excludes `]` or `\\`, which a Seatbelt regex cannot say unambiguously");
        std::bitset<256> m = s.members;
        m.set('/');
        m.reset(0);
        return "[^" + bracket_body(m) + "]";
    }
    std::bitset<256> m = s.members;
    m.reset('/');  // a component holds no `/`
    m.reset(0);
    if (m.none()) return fail(Errc::invalid_argument, where + " matches no character a file name can hold");
    std::vector<std::string> alternatives;
    for (const char c : {']', '\\'}) {
        if (!m.test(static_cast<unsigned char>(c))) continue;
        m.reset(static_cast<unsigned char>(c));
        alternatives.push_back(c == '\\' ? "\\\\" : "]");
    }
    if (m.count() == 1) {
        for (unsigned c = 1; c < 256; ++c)
            if (m.test(c)) {
                std::string one;
                append_regex_literal(one, std::string(1, static_cast<char>(c)));
                alternatives.insert(alternatives.begin(), one);
            }
    } else if (m.any()) {
        alternatives.insert(alternatives.begin(), "[" + bracket_body(m) + "]");
    }
    if (alternatives.size() == 1) return alternatives.front();
    std::string out = "(";
    for (std::size_t i = 0; i < alternatives.size(); ++i) out += (i ? "|" : "") + alternatives[i];
    return out + ")";
}

// One component of a pattern (not `**`) as a regex for one path component.
inline expected<std::string> component_regex(std::string_view comp) {
    std::string out;
    for (std::size_t i = 0; i < comp.size();) {
        const char c = comp[i];
        if (c == '*') {
            if (!out.ends_with("[^/]*")) out += "[^/]*";
            ++i;
        } else if (c == '?') {
            out += "[^/]";
            ++i;
        } else if (c == '[') {
            const GlobSet s = parse_glob_set(comp, i);
            if (!s.valid) {
                out += "\\[";
                ++i;
                continue;
            }
            auto r = set_regex(s, comp);
            if (!r) return fail(r.error());
            out += *r;
            i = s.end;
        } else if (c == '\\' && i + 1 < comp.size()) {
            append_regex_literal(out, comp.substr(i + 1, 1));
            i += 2;
        } else {
            append_regex_literal(out, comp.substr(i, 1));
            ++i;
        }
    }
    return out;
}

// Components as a regex for the path they name, with no anchors: `**` is zero or
// more components, anything else one.
inline expected<std::string> components_regex(std::span<const std::string> comps) {
    std::string out;
    for (const auto& c : comps) {
        if (c == "**") {
            out += "(/[^/]+)*";
            continue;
        }
        auto r = component_regex(c);
        if (!r) return fail(r.error());
        out += "/" + *r;
    }
    return out;
}

// What a regex covers: the paths a pattern names, or those and everything below.
enum class Reach { exact, below };

inline expected<std::string> anchored(std::span<const std::string> comps, Reach reach) {
    if (comps.empty()) return std::string(reach == Reach::exact ? "^/$" : "^/.*$");
    auto body = components_regex(comps);
    if (!body) return body;
    return "^" + *body + (reach == Reach::exact ? "$" : "(/.*)?$");
}

inline std::vector<std::string> owned_components(std::string_view p) {
    std::vector<std::string> out;
    for (auto c : paths::components(p)) out.emplace_back(c);
    return out;
}

inline std::vector<std::string_view> views(const std::vector<std::string>& v) {
    return std::vector<std::string_view>(v.begin(), v.end());
}

// A trailing `**` adds nothing to what a rule covers (a rule on a directory
// covers everything below it), so it is dropped: `/a/**` is `/a`.
inline void drop_trailing_stars(std::vector<std::string>& comps) {
    while (!comps.empty() && comps.back() == "**") comps.pop_back();
}

inline std::string join_components(const std::vector<std::string>& comps) {
    if (comps.empty()) return "/";
    std::string out;
    for (const auto& c : comps) out += "/" + c;
    return out;
}

}  // namespace detail

// A pattern (glob.hpp) as an anchored regex matching every path the pattern
// names and everything below them, as a rule covers what lies under the
// directory it names. Literal characters are escaped; `*` and `?` never match
// `/`; `**` stands for zero or more whole components. Errors (INVALID_ARGUMENT):
// a set that matches no character, or a negated set excluding `]` or `\`.
inline expected<std::string> glob_regex(std::string_view pattern) {
    auto comps = detail::owned_components(pattern);
    detail::drop_trailing_stars(comps);
    return detail::anchored(comps, detail::Reach::below);
}

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
inline std::optional<std::string> literal_name(std::string_view comp) {
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

// The plan's patterns are globs throughout: a rule on a path (the root, the
// temporary directory, a protected path) comes with its special characters
// escaped (plan.hpp), so a component without a wildcard is a name to match as it is.
inline expected<Rule> make_rule(std::size_t index, bool alias, FsRule::Kind kind, const std::string& pattern) {
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
        if (!q) return fail(q.error());
        return "(" + std::string(name) + " " + *q + ")";
    };
    if (!r.wildcard) {
        auto region = filter("subpath", r.path), exact = filter("literal", r.path);
        if (!region) return fail(region.error());
        if (!exact) return fail(exact.error());
        r.region = std::move(*region);
        r.exact = std::move(*exact);
        return r;
    }
    auto below = anchored(r.comps, Reach::below), only = anchored(r.comps, Reach::exact);
    if (!below) return fail(below.error());
    if (!only) return fail(only.error());
    auto region = filter("regex", *below), exact = filter("regex", *only);
    if (!region) return fail(region.error());
    if (!exact) return fail(exact.error());
    r.region = std::move(*region);
    r.exact = std::move(*exact);
    return r;
}

// The plan's file rules, each followed by its /private form where it has one.
inline expected<std::vector<Rule>> plan_rules(const Plan& plan) {
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

// The pattern positions reachable after its first components have matched all of
// `comps` (a literal path's components), `**` closed over; empty when none is.
inline std::vector<std::size_t> positions_after(const std::vector<std::string>& pat,
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

// A filter for the paths strictly below the literal path `base` where the
// pattern `pat` matches, given the positions reached at `base`. Each position
// leaves at least one component to match, or the pattern would match `base`.
inline expected<std::string> below_filter(const std::string& base, const std::vector<std::string>& pat,
                                          const std::vector<std::size_t>& positions) {
    std::string re = "^";
    if (base != "/") append_regex_literal(re, base);
    std::vector<std::string> alternatives;
    for (const std::size_t j : positions) {
        auto alt = components_regex(std::span<const std::string>(pat).subspan(j));
        if (!alt) return fail(alt.error());
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
    if (!q) return fail(q.error());
    return "(regex " + *q + ")";
}

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

inline std::string rule_name(const Rule& r) {
    std::string out = "plan.rules[" + std::to_string(r.index) + "] " + std::string(plan_rule_kind_name(r.kind));
    if (r.alias) out += " (its /private form)";
    return out;
}

// The read rules in order (fs_rules.hpp's decide() for reads, as Seatbelt's last
// match): each rule at the shallowest depth it can match, and the repetitions a
// `**` rule needs where it can match deeper than a rule that comes after it.
inline expected<std::vector<Entry>> read_entries(const std::vector<Rule>& rules) {
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
                if (!f) return fail(f.error());
                out.push_back({a.key, 3, false, std::move(*f), &d, note + ": denied again below it"});
            }
            // A `**` allow placed before a deny, where it can match deeper than that deny.
            if (a.variable && a.key <= d.key && !d.wildcard) {
                if (glob::shallowest_match(views(a.comps), views(d.names))) continue;  // never deeper than the deny
                const auto at = positions_after(a.comps, d.names);
                if (at.empty()) continue;
                auto f = below_filter(d.path, a.comps, at);
                if (!f) return fail(f.error());
                out.push_back({d.key, 2, true, std::move(*f), &a,
                               rule_name(a) + " can match deeper than " + rule_name(d) + ": allowed again below it"});
            }
        }
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const Entry& x, const Entry& y) { return x.key != y.key ? x.key < y.key : x.phase < y.phase; });
    return out;
}

// The write rules in the same order: a path is writable where it is readable and
// inside a writable root, so every read deny denies writes, a writable root
// allows them, and a re-opened read allows them only inside a writable root.
inline std::vector<Entry> write_entries(const std::vector<Entry>& reads, const std::vector<Rule>& rules) {
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

inline expected<std::deque<StoreBlock>> store_blocks(const std::vector<Rule>& rules) {
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
        if (!reads) return fail(reads.error());
        b.reads = std::move(*reads);
    }
    return out;
}

// `e` cut to the region of `store`.
inline Entry inside(const Entry& e, const Rule& store) {
    return Entry{e.key, e.phase, e.allow, "(require-all " + e.filter + " " + store.region + ")", e.rule,
                 e.note + ", inside " + rule_name(store)};
}

// The directories above `r`'s paths, and (for a pattern) the partial matches
// above its first `**`: the rename or removal of any of them would carry the
// guarded path elsewhere.
inline expected<void> add_ancestors(const Rule& r, std::set<std::string>& literals, std::set<std::string>& regexes) {
    for (std::size_t k = 1; k < std::min(r.names.size(), r.literal_comps + 1); ++k)
        literals.insert(join_components(
            std::vector<std::string>(r.names.begin(), r.names.begin() + static_cast<std::ptrdiff_t>(k))));
    if (!r.wildcard) return {};
    for (std::size_t k = r.literal_comps + 1; k < r.comps.size(); ++k) {
        if (r.comps[k - 1] == "**") break;
        auto re = anchored(std::span<const std::string>(r.comps).first(k), Reach::exact);
        if (!re) return fail(re.error());
        regexes.insert(std::move(*re));
    }
    return {};
}

inline std::string render(std::string_view verb, std::string_view operations, const Entry& e) {
    return "; " + e.note + "\n(" + std::string(verb) + " " + std::string(operations) + " " + e.filter + ")\n";
}

}  // namespace detail

// What every command needs to start and run, whatever the plan says. It comes
// after the plan's file rules, so that its few file allowances hold under a read
// deny (Seatbelt's last match wins), and it ends with the denials no plan lifts.
// Sources: Chromium's sandbox/policy/mac/common.sb, Apple's system.sb, OpenAI
// Codex's seatbelt_base_policy.sbpl and sandbox-runtime's macOS profile; the
// choices (what is left out) are sbx's.
inline constexpr std::string_view kFixedRules = R"SBPL(; ---- What every command needs (fixed) ----
; Start programs and processes; each inherits this profile.
(allow process-exec)
(allow process-fork)
; Signals and process information, but only for processes in this sandbox.
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
; Hardware and kernel facts that libc, runtimes and build tools read (CPU count,
; page size, OS version, the command's own process entries). Not every sysctl:
; kern.procargs2 would show other processes' arguments and environment.
(allow sysctl-read
  (sysctl-name-prefix "hw.")
  (sysctl-name-prefix "machdep.cpu.")
  (sysctl-name-prefix "kern.proc.pid.")
  (sysctl-name-prefix "kern.proc.pgrp.")
  (sysctl-name "kern.argmax")
  (sysctl-name "kern.boottime")
  (sysctl-name "kern.hostname")
  (sysctl-name "kern.maxfiles")
  (sysctl-name "kern.maxfilesperproc")
  (sysctl-name "kern.maxproc")
  (sysctl-name "kern.ngroups")
  (sysctl-name "kern.osproductversion")
  (sysctl-name "kern.osrelease")
  (sysctl-name "kern.ostype")
  (sysctl-name "kern.osvariant_status")
  (sysctl-name "kern.osversion")
  (sysctl-name "kern.secure_kernel")
  (sysctl-name "kern.usrstack64")
  (sysctl-name "kern.version")
  (sysctl-name "machdep.ptrauth_enabled")
  (sysctl-name "security.mac.lockdown_mode_state")
  (sysctl-name "sysctl.proc_cputype")
  (sysctl-name "vm.loadavg"))
; User and group names (getpwuid, getgrgid: whoami, ls -l, git) and group membership.
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.opendirectoryd.membership"))
; Logging that libc and system libraries do on their own (os_log, asl).
(allow mach-lookup
  (global-name "com.apple.logd")
  (global-name "com.apple.system.logger"))
; notify(3), through which libc hears of time zone changes, and its shared page.
(allow mach-lookup (global-name "com.apple.system.notification_center"))
(allow ipc-posix-shm-read* (ipc-posix-name "apple.shm.notification_center"))
; The per-user temporary and cache directories (confstr), which dirhelper makes.
(allow mach-lookup (global-name "com.apple.bsd.dirhelper"))
; POSIX semaphores: the locks of Python's multiprocessing.
(allow ipc-posix-sem)
; The null and zero devices, read and written (> /dev/null).
(allow file-read* file-write-data file-ioctl
  (literal "/dev/null")
  (literal "/dev/zero"))
; Randomness.
(allow file-read*
  (literal "/dev/random")
  (literal "/dev/urandom"))
; The command's terminal, if it has one, and its own open descriptors (2> /dev/stderr).
(allow file-read* file-write-data (literal "/dev/tty"))
(allow file-read* file-write-data (subpath "/dev/fd"))
; DTrace's helper device, which dyld opens for programs with static probes.
(allow file-read* file-write-data file-ioctl (literal "/dev/dtracehelper"))
; Directory metadata for path traversal: realpath() and getcwd() stat every
; directory on a path, hidden ones included. Listing and reading stay denied.
(allow file-read-metadata (vnode-type DIRECTORY))
; Never start a program outside the sandbox: LaunchServices (open(1)) and Apple
; Events (osascript) would run it unconfined. Denied by default already; named
; here so that no later edit allows them by accident.
(deny lsopen)
(deny appleevent-send)
(deny mach-lookup
  (global-name "com.apple.coreservices.launchservicesd")
  (global-name "com.apple.coreservices.appleevents")
  (global-name "com.apple.CoreServices.coreservicesd")
  (global-name "com.apple.lsd.open")
  (global-name "com.apple.lsd.modifydb")
  (global-name "com.apple.lsd.mapdb"))
)SBPL";

// ProfileOptions::allow_pty: pseudo-terminals (after Codex's and sandbox-runtime's
// rules). Terminal ioctls include TIOCSTI, which types into a terminal: the
// launcher gives the command a session of its own so that none is its
// controlling terminal but one it opened itself.
inline constexpr std::string_view kTerminalRules = R"SBPL(; ---- Pseudo-terminals (allow_pty) ----
; Open new pseudo-terminals and use them: line modes, window size.
(allow pseudo-tty)
(allow file-read* file-write-data file-ioctl
  (literal "/dev/ptmx")
  (regex "^/dev/ttys[0-9]+$"))
; Terminal ioctls on the command's own terminal.
(allow file-ioctl (literal "/dev/tty"))
)SBPL";

// The profile for `plan`. Errors: INVALID_PLAN when the plan confines files but
// holds no file rules (an older plan, or one written by hand without them), or a
// pattern is not absolute; INVALID_ARGUMENT when a path holds NUL, a pattern
// cannot be said as a Seatbelt regex, or a proxy port is 0. The text is the same
// for the same plan and options, byte for byte.
inline expected<std::string> profile(const Plan& plan, const ProfileOptions& opt = {}) {
    std::string out =
        "; sbx: the Seatbelt profile of one command, made from its plan (docs/seatbelt.md).\n"
        "; Seatbelt decides by the last rule that matches, so the order below is the policy.\n"
        "(version 1)\n"
        "(deny default)\n";
    auto add = [&](std::string_view verb, std::string_view operations, const std::string& filter) {
        out += "(" + std::string(verb) + " " + std::string(operations) + " " + filter + ")\n";
    };
    auto quoted = [](std::string_view name, std::string_view text) -> expected<std::string> {
        auto q = quote(text);
        if (!q) return fail(q.error());
        return "(" + std::string(name) + " " + *q + ")";
    };

    // Network.
    out += "\n; ---- Network ----\n";
    if (plan.network.mode == NetworkMode::none) {
        out += "; The plan's network is none: no host, not even the proxy, is reachable.\n";
    } else {
        bool any_port = false;
        for (const auto& [port, what] :
             {std::pair{opt.http_proxy_port, "HTTP"}, std::pair{opt.socks_proxy_port, "SOCKS5"}}) {
            if (!port) continue;
            if (*port == 0) return fail(Errc::invalid_argument, std::string("the ") + what + " proxy port is 0");
            out += std::string("; The launcher's ") + what +
                   " proxy on loopback: every host goes through it, and it decides.\n";
            auto f = quoted("remote ip", "localhost:" + std::to_string(*port));
            if (!f) return fail(f.error());
            add("allow", "network-outbound", *f);
            any_port = true;
        }
        if (!any_port) out += "; No proxy port was given: no host is reachable.\n";
        if (plan.network.rules.local) {
            out += "; allowLocalBinding: listen on loopback ports, accept there, and reach loopback directly.\n";
            auto f = quoted("local ip", "localhost:*"), g = quoted("remote ip", "localhost:*");
            if (!f) return fail(f.error());
            if (!g) return fail(g.error());
            add("allow", "network-bind", *f);
            add("allow", "network-inbound", *f);
            add("allow", "network-outbound", *g);
        }
    }
    if (plan.all_unix_sockets || !plan.unix_socket_paths.empty()) {
        out += "; Unix sockets need a socket of the domain first (socket(2) names no path).\n";
        add("allow", "system-socket", "(socket-domain AF_UNIX)");
    }
    if (plan.all_unix_sockets) {
        out += "; allowAllUnixSockets: bind and connect any Unix socket path.\n";
        auto f = quoted("path-regex", "^/");
        if (!f) return fail(f.error());
        add("allow", "network-bind", "(local unix-socket " + *f + ")");
        add("allow", "network-outbound", "(remote unix-socket " + *f + ")");
    } else {
        for (std::size_t i = 0; i < plan.unix_socket_paths.size(); ++i) {
            const std::string key = "unixSockets.paths[" + std::to_string(i) + "]";
            const auto& p = plan.unix_socket_paths[i];
            if (!paths::is_absolute(p))
                return fail(Error(Errc::invalid_plan, "'" + p + "' is not an absolute path").at_key(key));
            std::vector<std::string> forms{p};
            for (const auto& a : detail::kPrivateAliases)
                if (paths::at_or_under(p, a.path)) forms.push_back("/private" + p);
            out += "; allowUnixSockets[" + std::to_string(i) + "]: bind and connect the sockets at or under it.\n";
            for (const auto& form : forms) {
                expected<std::string> f = std::string();
                if (glob::has_wildcard(form)) {
                    auto re = glob_regex(form);
                    if (!re) return fail(Error(re.error()).at_key(key));
                    f = quoted("path-regex", *re);
                } else {
                    f = quoted("subpath", form);
                }
                if (!f) return fail(Error(f.error()).at_key(key));
                add("allow", "network-bind", "(local unix-socket " + *f + ")");
                add("allow", "network-outbound", "(remote unix-socket " + *f + ")");
            }
        }
    }

    // Files.
    if (!plan.filesystem.isolated) {
        out += "\n; ---- Files: filesystem.disabled, no file restriction ----\n";
        out += "(allow file-read*)\n(allow file-write*)\n";
    } else {
        if (plan.rules.empty())
            return fail(Error(Errc::invalid_plan,
                              "the plan confines files but holds no file rules (filesystem.rules), from which the "
                              "profile is made; make the plan again with this sbx")
                            .at_key("filesystem.rules"));
        auto rules = detail::plan_rules(plan);
        if (!rules) return fail(rules.error());
        auto reads = detail::read_entries(*rules);
        if (!reads) return fail(reads.error());

        auto blocks = detail::store_blocks(*rules);
        if (!blocks) return fail(blocks.error());

        out += "\n; ---- Reads: everywhere but the read denies; the narrower rule wins ----\n";
        out += "(allow file-read*)\n";
        for (const auto& e : *reads) out += detail::render(e.allow ? "allow" : "deny", "file-read*", e);
        auto store_head = [](const detail::Rule& d) {
            return detail::Entry{d.key, 1, false, d.region, &d,
                                 detail::rule_name(d) + ", a credential store: only allow-read rules at or under it "
                                                        "open it"};
        };
        if (!blocks->empty()) out += "\n; ---- Reads in credential stores: only allowRead entries at or under one count ----\n";
        for (const auto& b : *blocks) {
            out += detail::render("deny", "file-read*", store_head(*b.store));
            for (const auto& e : b.reads)
                out += detail::render(e.allow ? "allow" : "deny", "file-read*", detail::inside(e, *b.store));
        }

        out += "\n; ---- Writes: only inside writable roots and where reads are allowed ----\n";
        for (const auto& e : detail::write_entries(*reads, *rules))
            out += detail::render(e.allow ? "allow" : "deny", e.allow ? "file-write*" : "file-write* file-link", e);
        if (!blocks->empty()) out += "\n; ---- Writes in credential stores: where reads are allowed there ----\n";
        for (const auto& b : *blocks) {
            out += detail::render("deny", "file-write* file-link", store_head(*b.store));
            for (const auto& e : detail::write_entries(b.reads, *rules))
                out += detail::render(e.allow ? "allow" : "deny", e.allow ? "file-write*" : "file-write* file-link",
                                      detail::inside(e, *b.store));
        }
        out += "\n; Protected and write-denied paths, whatever allows them (after every allow).\n";
        for (const auto& r : *rules)
            if (r.kind == FsRule::Kind::protect || r.kind == FsRule::Kind::deny_write)
                out += detail::render("deny", "file-write* file-link",
                                      detail::Entry{0, 0, false, r.region, &r, detail::rule_name(r)});

        // No guarded path, nor a directory above one, may be renamed or removed.
        std::set<std::string> literals, regexes;
        std::vector<std::string> exact;
        for (const auto& r : *rules) {
            if (r.kind != FsRule::Kind::protect && r.kind != FsRule::Kind::deny_write &&
                r.kind != FsRule::Kind::deny_read)
                continue;
            if (auto a = detail::add_ancestors(r, literals, regexes); !a) return fail(a.error());
            if (r.wildcard) {
                if (std::find(exact.begin(), exact.end(), r.exact) == exact.end()) exact.push_back(r.exact);
            } else {
                literals.insert(r.path);
            }
        }
        for (const auto& m : plan.filesystem.mounts)
            if (m.kind == MountKind::pin) literals.insert(m.path);
        literals.erase("/");
        if (!literals.empty() || !regexes.empty() || !exact.empty()) {
            out +=
                "\n; No protected, write-denied or hidden path, nor any directory above one, can be\n"
                "; renamed or removed: it would take the path where the rules above do not reach.\n"
                "(deny file-write-unlink";
            for (const auto& l : literals) {
                auto f = quoted("literal", l);
                if (!f) return fail(f.error());
                out += "\n  " + *f;
            }
            for (const auto& re : regexes) {
                auto f = quoted("regex", re);
                if (!f) return fail(f.error());
                out += "\n  " + *f;
            }
            for (const auto& f : exact) out += "\n  " + f;
            out += ")\n";
        }
    }

    out += "\n";
    out += kFixedRules;
    if (opt.allow_pty) {
        out += "\n";
        out += kTerminalRules;
    }
    return out;
}

}  // namespace sbx::mac
