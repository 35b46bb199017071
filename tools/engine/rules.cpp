// The rules layer of the engine, compiled once for sbx's own programs
// (sbx/core/inline.hpp): every header of include/sbx/rules/, with the
// definitions at its end read here alone.
#define SBX_DEFINE_RULES

#include "sbx/rules/env.hpp"
#include "sbx/rules/fs_rules.hpp"
#include "sbx/rules/git_audit.hpp"
#include "sbx/rules/git_config.hpp"
#include "sbx/rules/git_index.hpp"
#include "sbx/rules/git_record.hpp"
#include "sbx/rules/git_repository.hpp"
#include "sbx/rules/network.hpp"
#include "sbx/rules/own_programs.hpp"
#include "sbx/rules/protected_entries.hpp"
#include "sbx/rules/protected_paths.hpp"
#include "sbx/rules/tool_cache.hpp"
