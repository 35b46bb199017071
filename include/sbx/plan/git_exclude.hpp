// sbx/plan/git_exclude.hpp - sbx's block of placeholder names in a repository's info/exclude.
//
// Placeholders cover protected names in the root while a command runs; without
// a line in info/exclude git would list them as untracked, inside the sandbox
// and out. The file is the one git reads for the root: its own `.git`
// directory's, or, for a root that is a linked worktree, the main repository's
// (git reads info/ from the common directory), whose lines then apply in every
// work tree of that repository. make_plan writes the file's new content into the
// plan (gitExclude); the launchers keep the block in the file itself while
// sandboxes run in the root (launchers/shared/root_group.cpp). Only the plan's own
// FsView is read.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/fs_view.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/json_write.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/plan/fs_plan.hpp"

namespace sbx {

// The lines sbx adds to a repository's info/exclude: inside the sandbox (the
// plan's gitExclude) and, while sandboxes run in the root, in the file itself,
// so that git outside does not list the placeholders either. The block runs from
// its first line to its last; a first line without a last runs to the end.
inline constexpr std::string_view kExcludeBlockBegin =
    "# sbx: placeholders that cover protected names while a sandboxed command runs";
inline constexpr std::string_view kExcludeBlockEnd = "# sbx: end of placeholders";

struct ExcludeText {
    std::string rest;                // the file without sbx's block
    std::vector<std::string> lines;  // the block's patterns
};

// Splits an exclude file into what is not sbx's and sbx's block's patterns.
SBX_INLINE ExcludeText split_exclude(std::string_view text);

// `rest` with sbx's block of `lines` at its end; `rest` alone when none.
SBX_INLINE std::string join_exclude(std::string rest, const std::vector<std::string>& lines);

namespace detail {

// A root-relative path as one gitignore pattern that matches it alone.
SBX_INLINE std::string gitignore_literal(std::string_view rel);

// The exclude file `file` (ProtectedPaths::git_exclude: GIT_DIR/info/exclude of the
// root's own git directory, or of a linked worktree's main repository) with the
// placeholders in the root added, when it is there to edit (one name, UTF-8, at
// most 64 KiB, in a real info directory of a real git directory); otherwise
// nothing, and git inside lists the placeholders as untracked.
SBX_INLINE std::optional<GitExclude> git_exclude_for(const std::string& root, const std::string& file,
                                                 const std::vector<PlaceholderOp>& placeholders, const FsView& fs);

}  // namespace detail

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_PLAN)

namespace sbx {

SBX_INLINE ExcludeText split_exclude(std::string_view text) {
    ExcludeText out;
    bool inside = false;
    std::size_t at = 0;
    while (at < text.size()) {
        auto end = text.find('\n', at);
        const std::size_t next = end == std::string_view::npos ? text.size() : end + 1;
        const std::string_view line = text.substr(at, (end == std::string_view::npos ? text.size() : end) - at);
        if (!inside && line == kExcludeBlockBegin) inside = true;
        else if (inside && line == kExcludeBlockEnd) inside = false;
        else if (inside) out.lines.emplace_back(line);
        else out.rest.append(text.substr(at, next - at));
        at = next;
    }
    return out;
}

SBX_INLINE std::string join_exclude(std::string rest, const std::vector<std::string>& lines) {
    if (lines.empty()) return rest;
    if (!rest.empty() && rest.back() != '\n') rest += '\n';
    rest.append(kExcludeBlockBegin).append("\n");
    for (const auto& l : lines) rest.append(l).append("\n");
    rest.append(kExcludeBlockEnd).append("\n");
    return rest;
}

}  // namespace sbx

namespace sbx::detail {

SBX_INLINE std::string gitignore_literal(std::string_view rel) {
    std::string out;
    for (std::size_t i = 0; i < rel.size(); ++i) {
        const char c = rel[i];
        const bool first = i == 1;  // rel starts with '/'
        if (c == '*' || c == '?' || c == '[' || c == '\\' || (first && (c == '#' || c == '!'))) out += '\\';
        out += c;
    }
    if (!out.empty() && out.back() == ' ') out.insert(out.size() - 1, 1, '\\');
    return out;
}

SBX_INLINE std::optional<GitExclude> git_exclude_for(const std::string& root, const std::string& file,
                                                 const std::vector<PlaceholderOp>& placeholders, const FsView& fs) {
    const std::string info = paths::parent(file);
    const std::string git = paths::parent(info);
    std::vector<std::string> names;
    for (const auto& ph : placeholders)
        if (ph.path != root && paths::at_or_under(ph.path, root) && !paths::at_or_under(ph.path, git))
            names.push_back(gitignore_literal(std::string_view(ph.path).substr(root.size())));
    if (names.empty()) return std::nullopt;
    auto git_st = fs.lstat(git);
    if (!git_st || !*git_st || (*git_st)->type != FileType::directory) return std::nullopt;
    // A command can swap info for a symlink (it is no protected path): then the
    // file is not the repository's to cover, nor the launcher's to edit.
    auto info_st = fs.lstat(info);
    if (!info_st || !*info_st || (*info_st)->type != FileType::directory) return std::nullopt;
    GitExclude ex;
    ex.path = file;
    auto st = fs.lstat(ex.path);
    if (!st || !*st || (*st)->type != FileType::regular || (*st)->nlink != 1) return std::nullopt;
    auto text = fs.read_text(ex.path, std::size_t{64} << 10);
    if (!text || !*text || !json::detail::valid_utf8(**text)) return std::nullopt;
    ex.expect = identity_of(*st);
    // The file's own block, there while other sandboxes of the root run, is theirs.
    ex.content = join_exclude(split_exclude(**text).rest, names);
    return ex;
}

}  // namespace sbx::detail
#endif
