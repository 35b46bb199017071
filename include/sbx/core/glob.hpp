// sbx/core/glob.hpp - the one wildcard matcher every rule uses.
//
// Patterns are normalised absolute paths (paths.hpp) that may hold:
//   *      any run of characters within one component (not `/`)
//   ?      one character other than `/`
//   [...]  one character from a set: ranges `a-z`, negation `[!...]` or `[^...]`;
//          `]` first in the set is literal
//   **     as a whole component: zero or more components, so `/a/**` matches `/a`
//          and everything below it, and `/a/**/b` matches `/a/b` and `/a/x/y/b`
//   \c     the character c itself
// A leading `.` is matched by wildcards like any other character: a deny of
// `~/*/token` covers `~/.config/token` too, which is what a deny should do.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"

namespace sbx::glob {

inline bool is_special(char c) { return c == '*' || c == '?' || c == '[' || c == '\\'; }

// A path as a pattern that matches exactly it: each special character escaped.
SBX_INLINE std::string escape(std::string_view path);

// True when `p` holds any wildcard (or escape), so it is a pattern, not a path.
SBX_INLINE bool has_wildcard(std::string_view p);

// The leading components of `pattern` that hold no wildcard, as a path:
// "/home/u/**/.env" -> "/home/u"; "/a/b" -> "/a/b"; "/*" -> "/".
SBX_INLINE std::string literal_prefix(std::string_view pattern);

namespace detail {

// Matches a `[...]` set at pattern[i] (i points at '[') against c. On return `i`
// points past the set. A set with no closing `]` is a literal '['.
SBX_INLINE bool match_set(std::string_view pat, std::size_t& i, char c, bool& valid);

// One component against one component pattern (no `/` in either).
SBX_INLINE bool match_component(std::string_view pat, std::string_view s);

// Component-level match; `prefix_ok` accepts a path that some extension of would
// match (the path could be an ancestor of a match).
SBX_INLINE bool match_components(const std::vector<std::string_view>& pat, const std::vector<std::string_view>& path,
                             bool prefix_ok);

}  // namespace detail

// True when the normalised absolute `path` matches `pattern`.
SBX_INLINE bool match(std::string_view pattern, std::string_view path);

// True when some path at or below `path` could match `pattern`: the pattern
// matches `path` itself, or `path` is an ancestor of a possible match. Used to
// ask whether a pattern reaches into a directory. Errs on the side of `true`.
SBX_INLINE bool may_match_at_or_under(std::string_view pattern, std::string_view path);

// True when `path` or one of its ancestors matches `pattern`: the path lies at or
// under something the pattern names.
// How many components of `comps` make the shallowest ancestor-or-self of the path
// that `pat` matches, or nullopt when none does. Both are split into components
// (paths::components), for callers that ask many times about the same patterns.
SBX_INLINE std::optional<std::size_t> shallowest_match(const std::vector<std::string_view>& pat,
                                                   std::span<const std::string_view> comps);

SBX_INLINE bool matches_at_or_above(const std::vector<std::string_view>& pat, std::span<const std::string_view> comps);

SBX_INLINE bool matches_at_or_above(std::string_view pattern, std::string_view path);

// True when some path that `a` names lies at or under some path that `b` names;
// both are patterns or plain paths. Exact where a component on either side is
// free of wildcards; where both components hold wildcards it assumes they can
// meet, so it errs on the side of `true`.
SBX_INLINE bool overlaps_at_or_under(const std::vector<std::string_view>& pa, const std::vector<std::string_view>& pb);

SBX_INLINE bool overlaps_at_or_under(std::string_view a, std::string_view b);

}  // namespace sbx::glob

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_CORE)

namespace sbx::glob {

SBX_INLINE std::string escape(std::string_view path) {
    std::string out;
    out.reserve(path.size());
    for (char c : path) {
        if (is_special(c)) out += '\\';
        out += c;
    }
    return out;
}

SBX_INLINE bool has_wildcard(std::string_view p) {
    for (char c : p)
        if (is_special(c)) return true;
    return false;
}

SBX_INLINE std::string literal_prefix(std::string_view pattern) {
    std::string out;
    for (auto c : paths::components(pattern)) {
        if (has_wildcard(c)) break;
        out += '/';
        out += c;
    }
    return out.empty() ? std::string("/") : out;
}

}  // namespace sbx::glob

namespace sbx::glob::detail {

SBX_INLINE bool match_set(std::string_view pat, std::size_t& i, char c, bool& valid) {
    std::size_t j = i + 1;
    bool negate = false;
    if (j < pat.size() && (pat[j] == '!' || pat[j] == '^')) {
        negate = true;
        ++j;
    }
    bool matched = false;
    bool first = true;
    while (j < pat.size() && (pat[j] != ']' || first)) {
        first = false;
        char lo = pat[j];
        if (lo == '\\' && j + 1 < pat.size()) lo = pat[++j];
        char hi = lo;
        if (j + 2 < pat.size() && pat[j + 1] == '-' && pat[j + 2] != ']') {
            hi = pat[j + 2];
            if (hi == '\\' && j + 3 < pat.size()) {
                hi = pat[j + 3];
                ++j;
            }
            j += 2;
        }
        if (static_cast<unsigned char>(lo) <= static_cast<unsigned char>(c) &&
            static_cast<unsigned char>(c) <= static_cast<unsigned char>(hi))
            matched = true;
        ++j;
    }
    if (j >= pat.size()) {  // no closing bracket: '[' is literal
        valid = false;
        return c == '[';
    }
    valid = true;
    i = j + 1;
    return matched != negate;
}

SBX_INLINE bool match_component(std::string_view pat, std::string_view s) {
    std::size_t p = 0, t = 0;
    std::size_t star_p = std::string_view::npos, star_t = 0;
    while (t < s.size()) {
        bool advanced = false;
        if (p < pat.size()) {
            char pc = pat[p];
            if (pc == '*') {
                star_p = ++p;
                star_t = t;
                continue;
            }
            if (pc == '?') {
                ++p;
                ++t;
                advanced = true;
            } else if (pc == '[') {
                std::size_t q = p;
                bool valid = true;
                if (match_set(pat, q, s[t], valid)) {
                    p = valid ? q : p + 1;
                    ++t;
                    advanced = true;
                }
            } else {
                char want = pc;
                std::size_t step = 1;
                if (pc == '\\' && p + 1 < pat.size()) {
                    want = pat[p + 1];
                    step = 2;
                }
                if (want == s[t]) {
                    p += step;
                    ++t;
                    advanced = true;
                }
            }
        }
        if (advanced) continue;
        if (star_p == std::string_view::npos) return false;
        p = star_p;
        t = ++star_t;
    }
    while (p < pat.size() && pat[p] == '*') ++p;
    return p == pat.size();
}

SBX_INLINE bool match_components(const std::vector<std::string_view>& pat, const std::vector<std::string_view>& path,
                             bool prefix_ok) {
    // reach[j]: pattern components [0, j) can match path components consumed so far.
    std::vector<char> reach(pat.size() + 1, 0);
    auto close = [&](std::vector<char>& r) {  // `**` may match zero components
        for (std::size_t j = 0; j < pat.size(); ++j)
            if (r[j] && pat[j] == "**") r[j + 1] = 1;
    };
    reach[0] = 1;
    close(reach);
    for (auto comp : path) {
        std::vector<char> next(pat.size() + 1, 0);
        bool any = false;
        for (std::size_t j = 0; j < pat.size(); ++j) {
            if (!reach[j]) continue;
            if (pat[j] == "**") {
                next[j] = 1;  // ** consumes this component and may go on
                next[j + 1] = 1;
                any = true;
            } else if (match_component(pat[j], comp)) {
                next[j + 1] = 1;
                any = true;
            }
        }
        if (!any) return false;
        close(next);
        reach.swap(next);
    }
    if (reach[pat.size()]) return true;
    if (!prefix_ok) return false;
    for (std::size_t j = 0; j < pat.size(); ++j)
        if (reach[j]) return true;
    return false;
}

}  // namespace sbx::glob::detail

namespace sbx::glob {

SBX_INLINE bool match(std::string_view pattern, std::string_view path) {
    return detail::match_components(paths::components(pattern), paths::components(path), false);
}

SBX_INLINE bool may_match_at_or_under(std::string_view pattern, std::string_view path) {
    return detail::match_components(paths::components(pattern), paths::components(path), true);
}

SBX_INLINE std::optional<std::size_t> shallowest_match(const std::vector<std::string_view>& pat,
                                                   std::span<const std::string_view> comps) {
    const std::size_t n = pat.size();
    if (n >= 63) {  // too long for the bit set: ask about each ancestor in turn
        for (std::size_t k = 0; k <= comps.size(); ++k) {
            const std::vector<std::string_view> head(comps.begin(), comps.begin() + static_cast<std::ptrdiff_t>(k));
            if (detail::match_components(pat, head, false)) return k;
        }
        return std::nullopt;
    }
    // The walk of match_components, with the set of reached pattern positions as
    // bits, asking after every step whether the whole pattern has matched.
    std::uint64_t stars = 0;  // positions holding `**`
    for (std::size_t j = 0; j < n; ++j)
        if (pat[j] == "**") stars |= std::uint64_t{1} << j;
    auto close = [&](std::uint64_t r) {  // `**` may match zero components
        for (std::size_t j = 0; j < n; ++j)
            if ((r >> j & 1) && (stars >> j & 1)) r |= std::uint64_t{1} << (j + 1);
        return r;
    };
    const std::uint64_t done = std::uint64_t{1} << n;
    std::uint64_t reach = close(1);
    if (reach & done) return 0;
    for (std::size_t k = 0; k < comps.size(); ++k) {
        std::uint64_t next = 0;
        for (std::size_t j = 0; j < n; ++j) {
            if (!(reach >> j & 1)) continue;
            if (stars >> j & 1) next |= (std::uint64_t{3} << j);  // ** consumes it and may go on
            else if (detail::match_component(pat[j], comps[k])) next |= std::uint64_t{1} << (j + 1);
        }
        if (next == 0) return std::nullopt;
        reach = close(next);
        if (reach & done) return k + 1;
    }
    return std::nullopt;
}

SBX_INLINE bool matches_at_or_above(const std::vector<std::string_view>& pat, std::span<const std::string_view> comps) {
    return shallowest_match(pat, comps).has_value();
}

SBX_INLINE bool matches_at_or_above(std::string_view pattern, std::string_view path) {
    return matches_at_or_above(paths::components(pattern), paths::components(path));
}

SBX_INLINE bool overlaps_at_or_under(const std::vector<std::string_view>& pa, const std::vector<std::string_view>& pb) {
    const std::size_t na = pa.size(), nb = pb.size();
    auto meet = [](std::string_view x, std::string_view y) {
        if (x == "**" || y == "**") return true;
        const bool wx = has_wildcard(x), wy = has_wildcard(y);
        if (wx && wy) return true;
        if (wx) return detail::match_component(x, y);
        if (wy) return detail::match_component(y, x);
        return x == y;
    };
    // reach[i][j]: some path is matched both by a[0, i) and by b[0, j). Every step
    // moves i or j forward (a `**` that stays put on one side moves the other), so
    // one pass in order settles the table.
    std::vector<char> table((na + 1) * (nb + 1), 0);
    auto reach = [&](std::size_t i, std::size_t j) -> char& { return table[i * (nb + 1) + j]; };
    reach(0, 0) = 1;
    for (std::size_t i = 0; i <= na; ++i) {
        for (std::size_t j = 0; j <= nb; ++j) {
            if (!reach(i, j)) continue;
            if (j == nb) return true;  // b is matched: the rest of a lies below it
            const bool sa = i < na && pa[i] == "**";
            const bool sb = pb[j] == "**";
            if (sa) reach(i + 1, j) = 1;  // ** may match nothing
            if (sb) reach(i, j + 1) = 1;
            if (i < na && meet(pa[i], pb[j])) {  // one more component, matched by both
                if (!sa) reach(i + 1, sb ? j : j + 1) = 1;
                else if (!sb) reach(i, j + 1) = 1;
                // both `**`: the component changes nothing either could not do alone
            }
        }
    }
    return false;
}

SBX_INLINE bool overlaps_at_or_under(std::string_view a, std::string_view b) {
    return overlaps_at_or_under(paths::components(a), paths::components(b));
}

}  // namespace sbx::glob
#endif
