// sbx/linux/filter_fallback.hpp - whether a plan runs when its seccomp program cannot be built.
//
// The seccomp filter does two things a plan needs: it refuses Unix sockets the
// plan does not open, and it refuses the calls that would make a new namespace.
// bubblewrap's --disable-userns does the second on its own; so when libseccomp
// cannot build the program, a plan that allows every Unix socket needs nothing
// the filter alone gives, and runs without it, with a warning (the reference's
// rule). Any other plan cannot be sandboxed here. filter_fallback() decides which,
// and names the rule; the launcher builds the program and carries out the verdict.
#pragma once

#include <array>
#include <string_view>

#include "sbx/core/inline.hpp"
#include "sbx/plan/plan.hpp"

namespace sbx::linux_sandbox {

enum class FilterVerdict {
    filtered,     // bubblewrap loads the program (--seccomp)
    unfiltered,   // no program, and none is needed: --disable-userns alone
    unavailable,  // no program, and the plan needs one: the sandbox cannot run here
};

struct FilterRule {
    std::string_view name;
    FilterVerdict verdict;
    std::string_view why;  // for people: the unfiltered one ends the launcher's warning
};

inline constexpr std::array kFilterRules{
    FilterRule{"filter-built", FilterVerdict::filtered,
               "bubblewrap loads the seccomp program into its init (pid 1) and the stage"},
    FilterRule{"every-unix-socket-allowed", FilterVerdict::unfiltered,
               "the plan allows every Unix socket, so --disable-userns alone keeps namespaces shut"},
    FilterRule{"filter-needed", FilterVerdict::unavailable,
               "the plan refuses some Unix sockets, which only the seccomp filter does"},
};
static_assert(kFilterRules[0].verdict == FilterVerdict::filtered && kFilterRules[1].verdict == FilterVerdict::unfiltered &&
                  kFilterRules[2].verdict == FilterVerdict::unavailable,
              "filter_fallback picks the rules by position");

// The rule for a plan whose seccomp program was built (`program_built`) or not.
SBX_INLINE const FilterRule& filter_fallback(const Plan& plan, bool program_built);

}  // namespace sbx::linux_sandbox

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_LINUX)

namespace sbx::linux_sandbox {

SBX_INLINE const FilterRule& filter_fallback(const Plan& plan, bool program_built) {
    if (program_built) return kFilterRules[0];
    return plan.allow_unix_sockets ? kFilterRules[1] : kFilterRules[2];
}

}  // namespace sbx::linux_sandbox
#endif
