// commands.hpp - the subcommands main() dispatches to, one file each.
//
// Each takes its parsed options and returns the exit status (cli_common.hpp); each
// prints its own output and errors. `sbx run` may not return: it becomes the
// launcher, or carries the plan out in this process.
#pragma once

#include "options.hpp"

namespace sbx::cli {

int run_policy(const SettingsArgs& a);    // policy.cpp
int run_explain(const ExplainArgs& a);    // explain.cpp
int run_check(const CheckArgs& a);        // check.cpp
int run_diff(const DiffArgs& a);          // diff.cpp
int run_route(const RouteArgs& a);        // route.cpp
int run_plan(PlanArgs& a);                // plan.cpp
int run_run(RunArgs& a);                  // run.cpp
int run_doctor(const DoctorArgs& a);      // doctor.cpp
int run_session_start(SessionArgs& a);    // session.cpp
int run_session_stop(const SessionArgs& a);
int run_session_list(const SessionArgs& a);
int run_session_expose(const SessionArgs& a);
int run_in_session(const RunArgs& a);     // session.cpp: sbx run --session ID

}  // namespace sbx::cli
