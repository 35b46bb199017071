// check.hpp - what a fuzz harness does when an invariant breaks: say which, and stop.
//
// libFuzzer counts a crash, not a false return, as a finding. A broken invariant
// prints its name and the input's size on standard error and traps, so that the
// run stops there, writes the input to crash-<sha1> and the test fails.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string_view>

#include "sbx/core/error.hpp"

namespace sbx::fuzz {

inline void check(bool holds, const char* invariant) {
    if (holds) return;
    std::fprintf(stderr, "fuzz: broken invariant: %s\n", invariant);
    __builtin_trap();
}

// An error says what went wrong, and the file it is about when the caller named one.
inline void check_error(const Error& e, std::string_view file) {
    check(!e.message.empty(), "an error has a message");
    if (!file.empty()) check(e.file == file, "an error names the file it is about");
}

}  // namespace sbx::fuzz
