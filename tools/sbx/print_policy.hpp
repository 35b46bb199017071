// print_policy.hpp - what `sbx policy` prints, as text or as JSON: the
// effective policy with the layer behind each value, the tool cache home, sbx's
// own programs and the git directories outside the root a command may write.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sbx/plan/command_fs_rules.hpp"

#include "compose.hpp"

namespace sbx::cli {

// The tool cache home `sbx run` would give commands of the root, and how
// large it has grown.
struct ToolCacheHome {
    std::optional<std::string> path;  // nullopt: none (why says why)
    bool exists = false;
    std::uint64_t bytes = 0, files = 0;  // regular files below it, symlinks not followed
    std::string why;
};

// What `sbx policy` says, composed as `sbx run` composes it.
struct PolicyReport {
    const Composed& composed;
    const RunInputs& inputs;
    const sbx::CommandFsRules& rules;
    const ToolCacheHome& cache;
};

void print_policy_json(const PolicyReport& r);
void print_policy_text(const PolicyReport& r);

}  // namespace sbx::cli
