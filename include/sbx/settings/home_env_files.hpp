// sbx/settings/home_env_files.hpp - the `.env` files under a home directory, found through an FsView.
//
// An agent file's layer denies reading every `.env` and `.env.*` under the home
// directory, so that a command of one project cannot read another's keys
// (deny_home_env_files() in agent_file.hpp adds the denies). This is the walk that
// finds them, bounded in depth and in entries, and past tool caches. Pure: it
// looks only through the FsView it is handed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sbx/core/fs_view.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/core/provenance.hpp"

namespace sbx {

// The reference's walk for `.env` files under the home directory: every `.env`
// and `.env.*` in it and in the folders up to kEnvWalkDepth levels below, for the
// built-in read deny (keys of one project must not reach a command of another).
// Tool caches, which hold no one's keys but many files, are not entered, nor
// symlinked folders. A file made after the walk is not covered (Linux denies paths
// that exist; see the reference).
inline constexpr std::size_t kEnvWalkDepth = 4;
inline constexpr std::size_t kEnvWalkEntries = 20000;  // looked at in all; past it a warning
struct EnvWalkSkip {
    std::string_view name;
    std::string_view reason;
};
inline constexpr EnvWalkSkip kEnvWalkSkips[] = {
    {"node_modules", "npm's packages"},
    {".cache", "the XDG cache: pip, go, ccache and others"},
    {".git", "git's objects"},
    {".npm", "npm's cache"},
    {".cargo", "cargo's registry and builds"},
    {".rustup", "Rust toolchains"},
    {".pyenv", "Python builds"},
    {".venv", "a virtual environment's packages"},
    {"__pycache__", "Python's compiled files"},
    {".gradle", "Gradle's cache"},
    {".m2", "Maven's repository"},
    {"go", "Go's module cache and builds (GOPATH)"},
    {".local", "installed programs and their data"},
    {"snap", "snap packages' data"},
    {"Library", "macOS's application data"},
    {".Trash", "deleted files"},
};

inline bool is_env_file_name(std::string_view n) { return n == ".env" || (n.size() > 5 && n.starts_with(".env.")); }

// The `.env` files of the walk, sorted, and a warning when it was cut short or a
// folder could not be listed (the walk goes on past it).
struct EnvFiles {
    std::vector<std::string> files;
    std::vector<Warning> warnings;
};

SBX_INLINE EnvFiles find_home_env_files(const std::string& home, const FsView& fs);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_SETTINGS)

namespace sbx {

SBX_INLINE EnvFiles find_home_env_files(const std::string& home, const FsView& fs) {
    EnvFiles out;
    std::size_t seen = 0;
    bool cut = false;
    std::vector<std::pair<std::string, std::size_t>> todo{{home, 0}};
    while (!todo.empty() && !cut) {
        auto [dir, depth] = std::move(todo.back());
        todo.pop_back();
        if (dir == home) {  // a home directory that is not there holds no keys
            auto st = fs.lstat(home);
            if (st && (!*st || (*st)->type != FileType::directory)) break;
        }
        auto entries = fs.list_typed(dir);
        if (!entries) {
            out.warnings.push_back(Warning{dir, "", "the .env walk could not list it: " + entries.error().message});
            continue;
        }
        for (const auto& e : *entries) {
            if (++seen > kEnvWalkEntries) {
                cut = true;
                break;
            }
            const std::string path = paths::join(dir, e.name);
            std::optional<FileType> type = e.type;
            if (!type) {  // the listing did not say: look
                auto st = fs.lstat(path);
                if (!st || !*st) continue;
                type = (*st)->type;
            }
            if (*type != FileType::directory) {
                if (is_env_file_name(e.name)) out.files.push_back(path);
                continue;
            }
            if (depth == kEnvWalkDepth) continue;
            const bool skipped = std::any_of(std::begin(kEnvWalkSkips), std::end(kEnvWalkSkips),
                                             [&](const EnvWalkSkip& k) { return k.name == e.name; });
            if (!skipped) todo.emplace_back(path, depth + 1);
        }
    }
    if (cut)
        out.warnings.push_back(Warning{home, "", "the .env walk stopped after " + std::to_string(kEnvWalkEntries) +
                                                     " entries; .env files past them are readable"});
    std::sort(out.files.begin(), out.files.end());
    return out;
}

}  // namespace sbx
#endif
