// own_programs.cpp - where sbx's own programs lie (own_programs.hpp).
#include "own_programs.hpp"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string_view>

#include "sbx/core/paths.hpp"

#include "cli_common.hpp"
#if defined(__linux__)
#include "stage/stage.hpp"  // launchers/: the stage, should sbx-stage not be there
#endif
#include "base/own_executable.hpp"  // launchers/: this program's path
#include "shared/run_program.hpp"  // launchers/: find_in_path, for the name sbx was started by

namespace sbx::cli {

std::vector<std::string> g_arguments;
std::string g_started_as;

namespace {

#if defined(__APPLE__)
constexpr std::string_view kLauncher = "sbx-mac";
#else
constexpr std::string_view kLauncher = "sbx-linux";
#endif

}  // namespace

std::string started_as() {
    if (!g_started_as.empty()) return g_started_as;
    if (g_arguments.empty() || g_arguments.front().empty()) return {};
    const std::string& name = g_arguments.front();
    if (name.find('/') != std::string::npos) return absolute(name);
    const char* path = std::getenv("PATH");
    return sbx::launcher::find_in_path(name, path != nullptr ? std::optional<std::string>(path) : std::nullopt).path;
}

std::string own_path() { return sbx::launcher::own_executable(); }

sbx::expected<std::string> find_launcher(const std::string& given) {
    if (!given.empty()) return absolute(given);
    const std::string self = own_path();
    const std::string name(kLauncher);
    if (self.empty()) return sbx::fail(sbx::Errc::internal, "cannot find this program's own path to look for " + name);
    const std::string dir = sbx::paths::parent(self);
    for (const auto& candidate : {sbx::paths::join(dir, name), sbx::paths::join(dir, "../launchers/" + name)})
        if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    return sbx::fail(sbx::Error(sbx::Errc::io_error, "no " + name + " beside sbx; install it there or pass --launcher PATH")
                         .in_file(sbx::paths::join(dir, name)));
}

std::vector<std::string> own_programs(const std::string& launcher) {
    std::vector<std::string> out;
    auto put = [&](const std::string& p) {
        if (p.empty() || !sbx::paths::is_absolute(p)) return;
        const std::string clean = sbx::paths::normalize(p);
        if (std::find(out.begin(), out.end(), clean) == out.end()) out.push_back(clean);
    };
    put(started_as());
    put(own_path());
#if defined(__linux__)
    put(sbx::linux_sandbox::stage_binary_path());
#endif
    if (auto l = find_launcher(launcher)) {
        put(*l);
        const std::string stage = sbx::paths::join(sbx::paths::parent(*l), "sbx-stage");
        if (::access(stage.c_str(), X_OK) == 0) put(stage);
    }
    return out;
}

}  // namespace sbx::cli
