// sbx/core/ascii.hpp - ASCII lower case, the one case folding every part of sbx uses, and control characters.
//
// Host names, HTTP header names, git config keys and settings keys compare
// without regard to ASCII case, and only ASCII case: a byte outside A-Z is left
// as it is (no locale, so the same text folds the same way on every machine).
#pragma once

#include <string>
#include <string_view>

#include "sbx/core/inline.hpp"

namespace sbx {

// `c` in lower case if it is an ASCII capital letter, else `c`.
constexpr char ascii_lower(char c) noexcept { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// `s` with every ASCII capital letter in lower case.
SBX_INLINE std::string ascii_lower(std::string_view s);

// Whether `c` is an ASCII control character (0-31, DEL).
constexpr bool ascii_control(char c) noexcept { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

// `s` with every ASCII control character replaced by `with`: text someone
// else chose, made safe to print as one line.
SBX_INLINE std::string replace_controls(std::string_view s, char with);

// Whether `a` and `b` are the same text but for ASCII case.
constexpr bool ascii_iequals(std::string_view a, std::string_view b) noexcept {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
    return true;
}

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_CORE)

namespace sbx {

SBX_INLINE std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (char& c : out) c = ascii_lower(c);
    return out;
}

SBX_INLINE std::string replace_controls(std::string_view s, char with) {
    std::string out(s);
    for (char& c : out)
        if (ascii_control(c)) c = with;
    return out;
}

}  // namespace sbx
#endif
