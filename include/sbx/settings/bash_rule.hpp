// sbx/settings/bash_rule.hpp - a `Bash(...)` permission rule, and the text it matches.
//
// Settings' permission rules and `excludedCommands` name commands as Claude Code
// writes them:
//   - `Bash` and `Bash(*)`: every command;
//   - `Bash(npm test)`: that command exactly;
//   - `Bash(npm run:*)` (the older form): `npm run`, or `npm run` then a space
//     and anything;
//   - `Bash(git push *)`, `Bash(* --version)`: `*` is any text, spaces and
//     slashes included, `\*` a star and `\\` a backslash; a pattern whose one
//     wildcard is a trailing ` *` also matches the text before it (`git *`
//     matches `git`).
// The settings reader refuses a malformed one where it stands (file and key);
// route/bash_rule.hpp says which text of a command a rule is matched against.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"

namespace sbx {

struct BashRule {
    enum class Kind {
        any,       // Bash, Bash(*)
        exact,     // Bash(npm test)
        prefix,    // Bash(npm run:*)
        wildcard,  // Bash(git push *)
    };
    Kind kind = Kind::any;
    std::string text;  // the command (escapes undone), the prefix, or the pattern as written
    friend bool operator==(const BashRule&, const BashRule&) = default;
};

// Reads `rule`: nullopt for a rule of another tool (`Read(...)`, `WebFetch`),
// an error (INVALID_ARGUMENT, naming what is wrong) for a Bash rule that is
// malformed (`Bash(` without its `)`, `Bash()`, text after the `)`).
SBX_INLINE expected<std::optional<BashRule>> parse_bash_rule(std::string_view rule);

// An `excludedCommands` entry: the inside of a Bash(...) rule, `docker *`, or
// the whole rule, `Bash(docker *)`, which is read as the rule it is.
SBX_INLINE expected<BashRule> parse_bash_pattern(std::string_view pattern);

// Whether `rule` matches a command whose match_text is `text`.
SBX_INLINE bool matches(const BashRule& rule, std::string_view text);

namespace detail {

// `pattern` (with `*`, `\*` and `\\`) against all of `text`.
SBX_INLINE bool wildcard_match(std::string_view pattern, std::string_view text);

}  // namespace detail

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_SETTINGS)

namespace sbx {

SBX_INLINE expected<std::optional<BashRule>> parse_bash_rule(std::string_view rule) {
    constexpr std::string_view kTool = "Bash";
    if (rule.substr(0, kTool.size()) != kTool) return std::optional<BashRule>();
    const std::string_view rest = rule.substr(kTool.size());
    if (rest.empty()) return std::optional<BashRule>(BashRule{});
    if (rest.front() != '(') return std::optional<BashRule>();  // another tool: BashOutput
    if (rest.back() != ')')
        return fail(Errc::invalid_argument, "the Bash rule '" + std::string(rule) + "' has no ')' at its end");
    const std::string_view inner = rest.substr(1, rest.size() - 2);
    if (inner.empty()) return fail(Errc::invalid_argument, "the Bash rule 'Bash()' names no command: write Bash for every one");
    if (inner == "*") return std::optional<BashRule>(BashRule{});
    if (inner.size() > 2 && inner.substr(inner.size() - 2) == ":*" && inner.find('*') == inner.size() - 1)
        return std::optional<BashRule>(BashRule{BashRule::Kind::prefix, std::string(inner.substr(0, inner.size() - 2))});
    for (std::size_t k = 0; k < inner.size(); ++k) {
        if (inner[k] == '\\') {
            ++k;
            continue;
        }
        if (inner[k] == '*') return std::optional<BashRule>(BashRule{BashRule::Kind::wildcard, std::string(inner)});
    }
    // No wildcard: the command itself, its escapes undone.
    std::string exact;
    for (std::size_t k = 0; k < inner.size(); ++k) exact += inner[k] == '\\' && k + 1 < inner.size() ? inner[++k] : inner[k];
    return std::optional<BashRule>(BashRule{BashRule::Kind::exact, std::move(exact)});
}

SBX_INLINE expected<BashRule> parse_bash_pattern(std::string_view pattern) {
    const bool whole = pattern.substr(0, 5) == "Bash(";
    auto r = parse_bash_rule(whole ? std::string(pattern) : "Bash(" + std::string(pattern) + ")");
    SBX_TRY(r);
    return **r;
}

SBX_INLINE bool matches(const BashRule& rule, std::string_view text) {
    switch (rule.kind) {
        case BashRule::Kind::any: return true;
        case BashRule::Kind::exact: return text == rule.text;
        case BashRule::Kind::prefix:
            return text == rule.text || (text.size() > rule.text.size() && text.substr(0, rule.text.size()) == rule.text &&
                                         text[rule.text.size()] == ' ');
        case BashRule::Kind::wildcard: {
            if (detail::wildcard_match(rule.text, text)) return true;
            // One wildcard, a trailing " *": the text before it matches too.
            const std::string& p = rule.text;
            std::size_t stars = 0;
            for (std::size_t k = 0; k < p.size(); ++k) {
                if (p[k] == '\\') ++k;
                else if (p[k] == '*') ++stars;
            }
            const bool trailing = p.size() >= 2 && p.substr(p.size() - 2) == " *" &&
                                  (p.size() < 3 || p[p.size() - 3] != '\\');
            return stars == 1 && trailing && detail::wildcard_match(std::string_view(p).substr(0, p.size() - 2), text);
        }
    }
    return false;
}

namespace detail {

SBX_INLINE bool wildcard_match(std::string_view pattern, std::string_view text) {
    // Backtracking to the last star only: linear in practice, at most
    // pattern × text steps whatever the input.
    std::size_t p = 0, t = 0;
    std::size_t star_p = std::string_view::npos, star_t = 0;
    while (t < text.size()) {
        if (p < pattern.size() && pattern[p] == '*') {
            star_p = ++p;
            star_t = t;
            continue;
        }
        if (p < pattern.size()) {
            const bool escaped = pattern[p] == '\\' && p + 1 < pattern.size();
            const char want = escaped ? pattern[p + 1] : pattern[p];
            if (want == text[t]) {
                p += escaped ? 2 : 1;
                ++t;
                continue;
            }
        }
        if (star_p == std::string_view::npos) return false;
        p = star_p;
        t = ++star_t;
    }
    while (p < pattern.size() && pattern[p] == '*') ++p;
    return p == pattern.size();
}

}  // namespace detail

}  // namespace sbx
#endif
