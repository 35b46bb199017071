// The plan layer of the engine, compiled once for sbx's own programs
// (sbx/core/inline.hpp): every header of include/sbx/plan/, with the
// definitions at its end read here alone.
#define SBX_DEFINE_PLAN

#include "sbx/plan/command_fs_rules.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/plan/git_exclude.hpp"
#include "sbx/plan/make_plan.hpp"
#include "sbx/plan/output_filter.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/plan/plan_json.hpp"
#include "sbx/plan/read_plan.hpp"
#include "sbx/plan/report.hpp"
#include "sbx/plan/said_once.hpp"
#include "sbx/plan/session_protocol.hpp"
#include "sbx/plan/verify_plan.hpp"
