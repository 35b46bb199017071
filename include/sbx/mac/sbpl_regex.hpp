// sbx/mac/sbpl_regex.hpp - glob patterns (core/glob.hpp) as the regexes of Seatbelt filters.
//
// Seatbelt matches patterns with POSIX extended regexes; sbx's rules are globs.
// glob_regex() turns a pattern into an anchored regex that matches the paths the
// pattern names and everything below them, as a rule covers what lies under the
// directory it names; the detail functions give the pieces (one component, a run
// of components, a set) that rule_order.hpp builds its narrower filters from.
// A set's members are decided by the engine's own matcher, so a regex never
// reads a set otherwise than a rule's decision does. Pure.
#pragma once

#include <bitset>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"

namespace sbx::mac {

namespace detail {

// Characters a regex gives a meaning to outside brackets, escaped with a
// backslash. `]` and `}` alone are literal in POSIX extended regexes, where an
// escape of them is undefined, so they stay bare.
inline constexpr std::string_view kRegexSpecial = "\\^$.|?*+()[{";

SBX_INLINE void append_regex_literal(std::string& out, std::string_view s);

// The characters of a glob set `[...]` starting at pattern[i], as
// glob::detail::match_set reads them (before any negation). `valid` false: no
// closing `]`, so the `[` is a literal character.
struct GlobSet {
    std::bitset<256> members;
    bool negate = false;
    bool valid = false;
    std::size_t end = 0;  // one past the closing `]`
};

SBX_INLINE GlobSet parse_glob_set(std::string_view pat, std::size_t i);

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
SBX_INLINE std::string bracket_body(const std::bitset<256>& m);

// A glob set as a regex matching one character of a component (never `/`).
SBX_INLINE expected<std::string> set_regex(const GlobSet& s, std::string_view component);

// One component of a pattern (not `**`) as a regex for one path component.
SBX_INLINE expected<std::string> component_regex(std::string_view comp);

// Components as a regex for the path they name, with no anchors: `**` is zero or
// more components, anything else one.
SBX_INLINE expected<std::string> components_regex(std::span<const std::string> comps);

// What a regex covers: the paths a pattern names, or those and everything below.
enum class Reach { exact, below };

SBX_INLINE expected<std::string> anchored(std::span<const std::string> comps, Reach reach);

SBX_INLINE std::vector<std::string> owned_components(std::string_view p);

SBX_INLINE std::vector<std::string_view> views(const std::vector<std::string>& v);

// A trailing `**` adds nothing to what a rule covers (a rule on a directory
// covers everything below it), so it is dropped: `/a/**` is `/a`.
SBX_INLINE void drop_trailing_stars(std::vector<std::string>& comps);

SBX_INLINE std::string join_components(const std::vector<std::string>& comps);

}  // namespace detail

// A pattern (glob.hpp) as an anchored regex matching every path the pattern
// names and everything below them, as a rule covers what lies under the
// directory it names. Literal characters are escaped; `*` and `?` never match
// `/`; `**` stands for zero or more whole components. Errors (INVALID_ARGUMENT):
// a set that matches no character, or a negated set excluding `]` or `\`.
SBX_INLINE expected<std::string> glob_regex(std::string_view pattern);

}  // namespace sbx::mac

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_MAC)

namespace sbx::mac::detail {

SBX_INLINE void append_regex_literal(std::string& out, std::string_view s) {
    for (const char c : s) {
        if (kRegexSpecial.find(c) != std::string_view::npos) out += '\\';
        out += c;
    }
}

SBX_INLINE GlobSet parse_glob_set(std::string_view pat, std::size_t i) {
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

SBX_INLINE std::string bracket_body(const std::bitset<256>& m) {
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

SBX_INLINE expected<std::string> set_regex(const GlobSet& s, std::string_view component) {
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

SBX_INLINE expected<std::string> component_regex(std::string_view comp) {
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
            SBX_TRY(r);
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

SBX_INLINE expected<std::string> components_regex(std::span<const std::string> comps) {
    std::string out;
    for (const auto& c : comps) {
        if (c == "**") {
            out += "(/[^/]+)*";
            continue;
        }
        auto r = component_regex(c);
        SBX_TRY(r);
        out += "/" + *r;
    }
    return out;
}

SBX_INLINE expected<std::string> anchored(std::span<const std::string> comps, Reach reach) {
    if (comps.empty()) return std::string(reach == Reach::exact ? "^/$" : "^/.*$");
    auto body = components_regex(comps);
    SBX_TRY(body);
    return "^" + *body + (reach == Reach::exact ? "$" : "(/.*)?$");
}

SBX_INLINE std::vector<std::string> owned_components(std::string_view p) {
    std::vector<std::string> out;
    for (auto c : paths::components(p)) out.emplace_back(c);
    return out;
}

SBX_INLINE std::vector<std::string_view> views(const std::vector<std::string>& v) {
    return std::vector<std::string_view>(v.begin(), v.end());
}

SBX_INLINE void drop_trailing_stars(std::vector<std::string>& comps) {
    while (!comps.empty() && comps.back() == "**") comps.pop_back();
}

SBX_INLINE std::string join_components(const std::vector<std::string>& comps) {
    if (comps.empty()) return "/";
    std::string out;
    for (const auto& c : comps) out += "/" + c;
    return out;
}

}  // namespace sbx::mac::detail

namespace sbx::mac {

SBX_INLINE expected<std::string> glob_regex(std::string_view pattern) {
    auto comps = detail::owned_components(pattern);
    detail::drop_trailing_stars(comps);
    return detail::anchored(comps, detail::Reach::below);
}

}  // namespace sbx::mac
#endif
