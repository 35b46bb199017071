// plan.cpp - `sbx plan`: the plan `sbx run` would make here, as JSON
// (docs/plan.md), with the same defaults, so that piping it to the launcher
// does what `sbx run` does.
#include <iostream>

#include "sbx/plan/plan_json.hpp"

#include "cli_common.hpp"
#include "commands.hpp"
#include "compose.hpp"

namespace sbx::cli {

int run_plan(PlanArgs& a) {
    auto fds = descriptors_to_pass(a.pass_fd_args);
    if (!fds) return report(fds.error());
    a.pass_fds = std::move(*fds);
    auto composed = compose(a.settings, a.home_root());
    if (!composed) return report(composed.error());
    auto plan = plan_for(*composed, a);
    if (!plan) return report(plan.error());
    std::cout << sbx::to_json(*plan) << "\n";
    return kOk;
}

}  // namespace sbx::cli
