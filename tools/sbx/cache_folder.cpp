// cache_folder.cpp - the cache folder and the launcher's checks of it (cache_folder.hpp).
#include "cache_folder.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "sbx/core/paths.hpp"
#include "sbx/rules/tool_cache.hpp"

#include "shared/tool_cache.hpp"  // launchers/: the checks the launcher makes before it makes the tool cache home

namespace sbx::cli {

std::string tool_cache_base(const std::string& home) {
    const char* x = std::getenv("XDG_CACHE_HOME");
    return sbx::tool_cache_base(x != nullptr ? std::optional<std::string_view>(x) : std::nullopt, home);
}

std::optional<std::string> why_cache_dir_unmakeable(std::string dir) {
    if (auto safe = sbx::launcher::check_tool_cache(dir, ::getuid()); !safe) return sbx::to_string(safe.error());
    struct stat st {};
    while (dir != "/" && ::lstat(dir.c_str(), &st) != 0) dir = sbx::paths::parent(dir);
    if (::access(dir.c_str(), W_OK | X_OK) == 0) return std::nullopt;
    return "you cannot write to " + dir + " (" + std::strerror(errno) + ")";
}

}  // namespace sbx::cli
