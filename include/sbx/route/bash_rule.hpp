// sbx/route/bash_rule.hpp - the text of a command a `Bash(...)` rule matches.
//
// The rules themselves are the settings' (settings/bash_rule.hpp). A rule
// matches one command of a line at a time (route.hpp asks for each): its text
// is its words as written in the line, one space apart, without its variables
// in front and its redirections (match_text), so that `Bash(npm test)` matches
// `npm test > log` and `Bash(npm *)` does not match `npm test && rm -rf x` as a
// whole.
#pragma once

#include <string>
#include <string_view>

#include "sbx/core/inline.hpp"
#include "sbx/route/shell_line.hpp"
#include "sbx/settings/bash_rule.hpp"

namespace sbx::route {

using sbx::BashRule;
using sbx::matches;
using sbx::parse_bash_pattern;
using sbx::parse_bash_rule;

// The text a rule is matched against for command `c` of `line`.
SBX_INLINE std::string match_text(std::string_view line, const Command& c);

}  // namespace sbx::route

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_ROUTE)

namespace sbx::route {

SBX_INLINE std::string match_text(std::string_view line, const Command& c) {
    std::string out;
    for (const Word& w : c.words) {
        if (!out.empty()) out += ' ';
        out.append(line.substr(w.begin, w.end - w.begin));
    }
    return out;
}

}  // namespace sbx::route
#endif
