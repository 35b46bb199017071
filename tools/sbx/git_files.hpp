// git_files.hpp - a project's files as a git revision holds them, read with git itself.
//
// `sbx diff --base REV` compares the settings at REV with the work tree's
// without checking REV out. Only plumbing commands run (rev-parse, ls-tree,
// cat-file, ls-files), which run no hook, filter, fsmonitor or pager a
// repository's configuration could name; replace refs are not followed, so an
// object is what its hash says. git runs with no environment but HOME (for
// safe.directory) and LC_ALL=C.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "sbx/core/expected.hpp"

namespace sbx::tools {

// git, found on PATH, run in one directory of a repository.
struct GitRepo {
    std::string git;  // absolute path of the program
    std::string dir;  // where it runs (-C): the root
    std::vector<std::string> environment;
};

// git on PATH, to run in `dir`. IO_ERROR when there is none.
expected<GitRepo> find_git(const std::string& dir);

// The commit `rev` names, as its full hash. INVALID_ARGUMENT (at --base REV),
// with git's words, when `rev` names no commit or `dir` is in no repository.
expected<std::string> resolve_commit(const GitRepo& repo, const std::string& rev);

// The bytes of the file at `rel` (relative to the directory) in `commit`, or
// nullopt when the commit has nothing there. INVALID_SETTINGS, naming
// "REV:rel", for a symlink, a folder or a submodule there, and for a file past
// `limit` bytes; IO_ERROR when git fails.
expected<std::optional<std::string>> file_at(const GitRepo& repo, const std::string& commit, const std::string& rev,
                                             const std::string& rel, std::size_t limit);

// Whether git's index holds a file at `rel`, relative to the directory.
expected<bool> in_index(const GitRepo& repo, const std::string& rel);

// Whether `rel`'s last component names an agent file: AGENT.md or AGENT-*.md.
bool is_agent_file_name(const std::string& rel);

// The agent files below the directory, relative to it: in `commit`, or in
// the work tree (those git tracks, and those it would add: not ignored).
// IO_ERROR when git fails; INVALID_SETTINGS when the commit lists more files
// than sbx reads (kListLimit bytes of names), rather than a part of them.
inline constexpr std::size_t kListLimit = 16u << 20;
expected<std::vector<std::string>> agent_files_at(const GitRepo& repo, const std::string& commit, const std::string& rev);
expected<std::vector<std::string>> agent_files_in_work_tree(const GitRepo& repo);

}  // namespace sbx::tools
