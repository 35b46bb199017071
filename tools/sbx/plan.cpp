// plan.cpp - `sbx plan`: the plan `sbx run` would make here, as JSON
// (docs/plan.md), with the same defaults, so that piping it to the launcher
// does what `sbx run` does. What `sbx run` would not run confined is said: a
// program the agent file's shell skill blocks is refused here too (64), and a
// command `excludedCommands` sends outside gets a warning in the plan, which
// confines it all the same.
#include <iostream>

#include "sbx/plan/plan_json.hpp"
#include "sbx/route/route.hpp"

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
    const std::string line = shell_words(a.command);
    if (auto ok = refuse_blocked(*composed, line); !ok) return report(ok.error());
    auto plan = plan_for(*composed, a);
    if (!plan) return report(plan.error());
    if (const auto by = sbx::route::excluded_by(composed->policy, line))
        plan->warnings.push_back(sbx::Warning{by->source ? by->source->file.str() : std::string(),
                                              by->source ? by->source->key : std::string(),
                                              line + " runs outside the sandbox by the settings (" + by->why +
                                                  "): sbx run refuses it unless --unsandboxed; this plan confines it"});
    std::cout << sbx::to_json(*plan) << "\n";
    return kOk;
}

}  // namespace sbx::cli
