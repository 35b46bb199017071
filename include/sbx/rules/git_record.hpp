// sbx/rules/git_record.hpp - the repositories the audit found in a root, kept for the next plan.
//
// The plan protects the repositories git itself leads to from the root (its own,
// the linked worktrees, the submodules and gitlinks). A repository no gitlink
// names (an ignored clone in vendor/, a bare repository in a subdirectory) is
// found only by walking the root, which the audit after a run does anyway
// (launchers/linux/git_audit.cpp). So the launcher writes what its walk found to a
// record of the root's, outside the command's reach (BASE/sbx/git/NAME, beside
// the tool cache homes: the plan's filesystem.gitRecord), and the next plan
// protects each recorded repository as it protects a gitlinked one: its config,
// hooks and the places its config names are read-only while that command runs.
// A repository made or cloned since the last look is not in the record: `sbx run`
// looks again before each run at the directories that changed since (below); a
// plan piped to a launcher reads the record as it is. The audit after every run
// checks every repository anyway.
//
// The record is text: a first line naming the format, then one entry per
// repository, each a kind letter (T: a working tree holding a `.git` directory
// or file; B: a bare git directory) and an absolute, normalised path, ended by
// a NUL byte (a path may hold a newline). parse_git_record() reads it strictly:
// a malformed record is not used, and the planner warns naming the byte.
//
// Beside it, in BASE/sbx/git-dirs/NAME, sbx keeps the directories of the root it
// looked at and the ctime of each (the directory stamps): a directory gains or
// loses an entry only with a new ctime, which no program can set back, so before
// a run only the directories whose ctime changed need listing for new
// repositories, and the rest of the record stands. The stamps are text too: a
// first line naming the format, then per directory its ctime as SEC.NSEC, a
// space, and its path relative to the root ("." for the root), ended by a NUL.
// A malformed or missing file is a walk of the whole root, as before a first run.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/rules/tool_cache.hpp"

namespace sbx {

struct RecordedRepository {
    enum class Kind { tree, bare };
    Kind kind = Kind::tree;
    std::string path;
    friend bool operator==(const RecordedRepository&, const RecordedRepository&) = default;
};

namespace git_record {

inline constexpr std::string_view kHeader = "sbx git record 1\n";
// The most repositories a record keeps, and its largest size: a command can make
// any number of repositories, and each recorded one adds mounts to the next plan.
// Past them the rest is left out of the record (the audit still checks them), and
// the planner says so.
inline constexpr std::size_t kMaxRepositories = 2000;
inline constexpr std::size_t kMaxBytes = std::size_t{1} << 22;

}  // namespace git_record

namespace git_stamps {

inline constexpr std::string_view kHeader = "sbx git dirs 1\n";
// Its largest size (about a million directories): a root with more is walked whole
// before each run, which costs about a microsecond a file.
inline constexpr std::size_t kMaxBytes = std::size_t{1} << 26;

}  // namespace git_stamps

// A directory of the root and its ctime, when sbx last looked at it.
struct DirectoryStamp {
    std::string path;  // relative to the root, normalised; "." for the root
    long long sec = 0;
    long nsec = 0;
    friend bool operator==(const DirectoryStamp&, const DirectoryStamp&) = default;
};

// BASE/sbx/git/NAME for a root, NAME as tool_cache_name() makes it.
SBX_INLINE std::string git_record_path(std::string_view base, std::string_view root);

// BASE/sbx/git-dirs/NAME: the directory stamps of a root.
SBX_INLINE std::string git_stamps_path(std::string_view base, std::string_view root);

// The record's text for `repos` (each path absolute and normalised, without NUL),
// at most git_record::kMaxRepositories of them.
SBX_INLINE std::string git_record_text(const std::vector<RecordedRepository>& repos);

struct GitRecordRead {
    std::vector<RecordedRepository> repos;
    std::optional<std::string> problem;  // what is wrong, at which byte: then `repos` is empty
    bool truncated = false;              // more than kMaxRepositories entries; the first ones are kept
};

SBX_INLINE GitRecordRead parse_git_record(std::string_view text);

// The stamps' text for `dirs` (each path relative and normalised, without NUL).
SBX_INLINE std::string git_stamps_text(const std::vector<DirectoryStamp>& dirs);

struct GitStampsRead {
    std::vector<DirectoryStamp> dirs;
    std::optional<std::string> problem;  // what is wrong, at which byte: then `dirs` is empty
};

SBX_INLINE GitStampsRead parse_git_stamps(std::string_view text);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_RULES)

namespace sbx {

SBX_INLINE std::string git_record_path(std::string_view base, std::string_view root) {
    return paths::join(paths::join(std::string(base), "sbx/git"), tool_cache_name(root));
}

SBX_INLINE std::string git_stamps_path(std::string_view base, std::string_view root) {
    return paths::join(paths::join(std::string(base), "sbx/git-dirs"), tool_cache_name(root));
}

SBX_INLINE std::string git_record_text(const std::vector<RecordedRepository>& repos) {
    std::string out(git_record::kHeader);
    std::size_t n = 0;
    for (const auto& r : repos) {
        if (n++ == git_record::kMaxRepositories) break;
        out += r.kind == RecordedRepository::Kind::bare ? 'B' : 'T';
        out += r.path;
        out += '\0';
    }
    return out;
}

SBX_INLINE GitRecordRead parse_git_record(std::string_view text) {
    GitRecordRead out;
    auto bad = [&](std::size_t at, const std::string& what) {
        out.repos.clear();
        out.problem = what + " at byte " + std::to_string(at);
        return out;
    };
    if (text.size() > git_record::kMaxBytes) return bad(git_record::kMaxBytes, "larger than 4 MiB");
    if (!text.starts_with(git_record::kHeader)) return bad(0, "not an sbx git record (its first line is not '" +
                                                              std::string(git_record::kHeader.substr(0, git_record::kHeader.size() - 1)) + "')");
    std::size_t at = git_record::kHeader.size();
    while (at < text.size()) {
        const std::size_t end = text.find('\0', at);
        if (end == std::string_view::npos) return bad(at, "an entry without its NUL byte");
        const std::string_view entry = text.substr(at, end - at);
        if (entry.empty() || (entry[0] != 'T' && entry[0] != 'B')) return bad(at, "an entry that is neither T nor B");
        const std::string_view path = entry.substr(1);
        if (!paths::is_absolute(path) || paths::normalize(path) != path || path == "/")
            return bad(at + 1, "a path that is not absolute and normalised");
        if (out.repos.size() == git_record::kMaxRepositories) {
            out.truncated = true;
            return out;
        }
        out.repos.push_back({entry[0] == 'B' ? RecordedRepository::Kind::bare : RecordedRepository::Kind::tree,
                             std::string(path)});
        at = end + 1;
    }
    return out;
}

SBX_INLINE std::string git_stamps_text(const std::vector<DirectoryStamp>& dirs) {
    std::string out(git_stamps::kHeader);
    for (const auto& d : dirs) {
        out += std::to_string(d.sec);
        out += '.';
        const std::string ns = std::to_string(d.nsec);
        out.append(9 - ns.size(), '0');
        out += ns;
        out += ' ';
        out += d.path;
        out += '\0';
    }
    return out;
}

SBX_INLINE GitStampsRead parse_git_stamps(std::string_view text) {
    GitStampsRead out;
    auto bad = [&](std::size_t at, const std::string& what) {
        out.dirs.clear();
        out.problem = what + " at byte " + std::to_string(at);
        return out;
    };
    if (text.size() > git_stamps::kMaxBytes) return bad(git_stamps::kMaxBytes, "larger than 64 MiB");
    if (!text.starts_with(git_stamps::kHeader)) return bad(0, "not sbx directory stamps (its first line is not '" +
                                                             std::string(git_stamps::kHeader.substr(0, git_stamps::kHeader.size() - 1)) + "')");
    auto digits = [](std::string_view s) {
        return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    std::size_t at = git_stamps::kHeader.size();
    while (at < text.size()) {
        const std::size_t end = text.find('\0', at);
        if (end == std::string_view::npos) return bad(at, "an entry without its NUL byte");
        const std::string_view entry = text.substr(at, end - at);
        const std::size_t dot = entry.find('.'), space = entry.find(' ');
        if (dot == std::string_view::npos || space == std::string_view::npos || dot > space)
            return bad(at, "an entry that is not SEC.NSEC PATH");
        const std::string_view sec = entry.substr(0, dot), nsec = entry.substr(dot + 1, space - dot - 1);
        if (!digits(sec) || sec.size() > 18 || (sec.size() > 1 && sec[0] == '0') || !digits(nsec) || nsec.size() != 9)
            return bad(at, "a time that is not SEC.NSEC");
        const std::string_view path = entry.substr(space + 1);
        if (path != "." && (path.empty() || paths::is_absolute(path) ||
                            paths::normalize("/" + std::string(path)) != "/" + std::string(path)))
            return bad(at + space + 1, "a path that is not relative and normalised");
        out.dirs.push_back({std::string(path), std::stoll(std::string(sec)), std::stol(std::string(nsec))});
        at = end + 1;
    }
    return out;
}

}  // namespace sbx
#endif
