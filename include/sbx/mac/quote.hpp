// sbx/mac/quote.hpp - the one quoting point: variable text as an SBPL string literal.
//
// A path or pattern pasted into a Seatbelt profile as it is could end its string
// and add rules of its own. Every path, pattern and other variable text reaches
// the profile through quote() (docs/seatbelt.md), so there is one place to get
// the quoting right and one to test.
#pragma once

#include <string>
#include <string_view>

#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"

namespace sbx::mac {

// The one function through which a path, a pattern or any other variable text
// enters a profile: an SBPL string literal that reads back as exactly `text`.
// Only `"` ends an SBPL string and only `\` starts an escape, so those two are
// escaped and every other byte (newline, `(`, `;`, `#` included) stands for
// itself inside the quotes. NUL is refused: sandbox-exec takes the profile as a
// C string, which would end there. Errors: INVALID_ARGUMENT.
SBX_INLINE expected<std::string> quote(std::string_view text);

}  // namespace sbx::mac

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_MAC)

namespace sbx::mac {

SBX_INLINE expected<std::string> quote(std::string_view text) {
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

}  // namespace sbx::mac
#endif
