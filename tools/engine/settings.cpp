// The settings layer of the engine, compiled once for sbx's own programs
// (sbx/core/inline.hpp): every header of include/sbx/settings/, with the
// definitions at its end read here alone.
#define SBX_DEFINE_SETTINGS

#include "sbx/settings/agent_env.hpp"
#include "sbx/settings/agent_file.hpp"
#include "sbx/settings/agent_file_edit.hpp"
#include "sbx/settings/bash_rule.hpp"
#include "sbx/settings/credential_stores.hpp"
#include "sbx/settings/defaults.hpp"
#include "sbx/settings/dotenv.hpp"
#include "sbx/settings/front_matter.hpp"
#include "sbx/settings/home_env_files.hpp"
#include "sbx/settings/layer.hpp"
#include "sbx/settings/limits.hpp"
#include "sbx/settings/policy.hpp"
#include "sbx/settings/policy_fields.hpp"
#include "sbx/settings/project_root.hpp"
#include "sbx/settings/settings.hpp"
