// Every engine header in a second translation unit with link_b.cpp: a definition
// in a header that is not inline or constexpr makes the link fail.
#include "sbx/address.hpp"
#include "sbx/agent_file.hpp"
#include "sbx/defaults.hpp"
#include "sbx/env.hpp"
#include "sbx/error.hpp"
#include "sbx/expected.hpp"
#include "sbx/fs_plan.hpp"
#include "sbx/fs_rules.hpp"
#include "sbx/fs_view.hpp"
#include "sbx/fs_view_disk.hpp"
#include "sbx/git_audit.hpp"
#include "sbx/git_config.hpp"
#include "sbx/git_index.hpp"
#include "sbx/glob.hpp"
#include "sbx/host_pattern.hpp"
#include "sbx/hosts.hpp"
#include "sbx/json.hpp"
#include "sbx/linux/bwrap.hpp"
#include "sbx/linux/seccomp_spec.hpp"
#include "sbx/mac/seatbelt.hpp"
#include "sbx/paths.hpp"
#include "sbx/placeholder_registry.hpp"
#include "sbx/plan.hpp"
#include "sbx/policy.hpp"
#include "sbx/protected_paths.hpp"
#include "sbx/report.hpp"
#include "sbx/settings.hpp"
#include "sbx/settings_files.hpp"

#include <doctest/doctest.h>

TEST_CASE("headers link from two translation units (a)") { CHECK(sbx::paths::normalize("/a/../b") == "/b"); }
