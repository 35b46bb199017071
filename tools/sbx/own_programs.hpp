// own_programs.hpp - sbx's own programs: this one (under the name it was
// started by, and its own path), the launcher it hands plans to, and the stage.
//
// The engine protects them where a command could write them
// (sbx/rules/own_programs.hpp); `sbx run` runs the launcher, or itself again.
#pragma once

#include <string>
#include <vector>

#include "sbx/core/expected.hpp"

namespace sbx::cli {

// This program's own arguments (main sets them), and, on a later attempt of
// `sbx run` (--started-as), the name the first attempt was started by.
extern std::vector<std::string> g_arguments;
extern std::string g_started_as;

// The name this program was started by, absolute: argv[0] (looked up on PATH
// when it holds no '/'), or the first attempt's; empty when not found.
std::string started_as();

// This program's own path, or empty.
std::string own_path();

// The launcher for this platform (sbx-linux, or sbx-mac on macOS): `given`
// (--launcher), else beside this program, else where the build tree puts it.
sbx::expected<std::string> find_launcher(const std::string& given);

// sbx's own programs, for the engine to protect where a command could write them
// (sbx/rules/own_programs.hpp): this program under the name it was started by
// (argv[0], looked up on PATH when it holds no '/'), its own path, the stage the
// sandbox starts, and the launcher (`launcher`, else the one beside sbx) with the
// stage beside it. What is not there is left out: no run uses it.
std::vector<std::string> own_programs(const std::string& launcher);

}  // namespace sbx::cli
