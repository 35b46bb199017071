// cache_folder.hpp - the folder sbx keeps a root's things in (the tool cache
// home, the record of its repositories, the warnings said once), and whether
// this user can make them there as the launcher would.
#pragma once

#include <optional>
#include <string>

namespace sbx::cli {

// Where tool caches go: $XDG_CACHE_HOME when set and absolute, else HOME/.cache.
std::string tool_cache_base(const std::string& home);

// Why this user cannot make the directory `dir` under the cache folder as the
// launcher makes it (make_tool_cache: another user's HOME, a folder others may
// write to, one the user cannot write), or nullopt when it can.
std::optional<std::string> why_cache_dir_unmakeable(std::string dir);

}  // namespace sbx::cli
