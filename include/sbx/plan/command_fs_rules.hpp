// sbx/plan/command_fs_rules.hpp - the filesystem rules one command runs with, tool cache home included.
//
// command_fs_rules() adds to the policy's rules the root's protected paths (with the
// repositories the record of the audit after an earlier run names: read_git_record), sbx's
// own programs where a command could write them (own_programs.hpp) and, where
// those rules leave it writable, the tool cache home (choose_tool_cache).
// make_plan plans the mounts from the result, and `sbx explain` and `sbx policy`
// decide with the same rules, so the three never disagree. Reads the disk only
// through the FsView it is handed.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/rules/fs_rules.hpp"
#include "sbx/rules/git_record.hpp"
#include "sbx/rules/own_programs.hpp"
#include "sbx/rules/protected_paths.hpp"
#include "sbx/rules/tool_cache.hpp"
#include "sbx/settings/policy.hpp"

namespace sbx {

// Where a command's tool cache home lies: nullopt, with a warning when it is
// left out for where it would lie. The base's symlinks are resolved; from
// BASE/sbx down nothing may be a symlink or other than a directory (an error:
// sbx follows no link there). Left out, with a warning: a base whose folder does
// not exist, a home inside or holding the root or the temporary directory, and
// one the rules keep from the command (hidden, protected, denyWrite).
struct ToolCacheChoice {
    std::optional<std::string> path;
    std::vector<Warning> warnings;
};

SBX_INLINE expected<ToolCacheChoice> choose_tool_cache(const Policy& policy, const std::optional<std::string>& base,
                                                   const FsRules& rules, const FsView& fs);

// The record of the repositories the audit after an earlier run found in `root`
// (git_record.hpp): BASE/sbx/git/NAME, with the base's symlinks resolved, read
// for protected_paths() and named in the plan (filesystem.gitRecord) for the
// launcher to write after this run. Missing: no repositories yet, and the path
// still named. Left out, with a warning, where there is no base, where a symlink
// or other than a directory lies on the way from BASE/sbx (sbx follows no link
// there), or where it cannot be read or understood (then the next audit writes
// it again); command_fs_rules() also leaves it out where the command could write.
struct GitRecordChoice {
    std::optional<std::string> path;
    std::vector<RecordedRepository> repos;
    std::vector<Warning> warnings;
};

namespace detail {
inline constexpr std::string_view kNoRecordCost =
    "; a repository in the root that no gitlink names (an ignored clone, a bare repository) is then checked by the "
    "audit after the run, not protected while it runs";
}  // namespace detail

SBX_INLINE GitRecordChoice read_git_record(const std::optional<std::string>& base, const std::string& root, const FsView& fs);

// The filesystem rules a command is run with: the policy's, the root's protected
// paths, where the rules leave it writable the tool cache home under `base`
// (nullopt: none) added to them as writable, and the paths of sbx's own programs
// (`own_programs`: absolute, normalised, as the caller found them; empty: none)
// and their folders that a command could write then, as protected paths.
// make_plan plans with these, and `sbx explain` and `sbx policy` decide with the same.
struct CommandFsRules {
    FsRules rules;
    std::optional<std::string> tool_cache;  // the home, when there is one
    std::vector<Warning> protected_warnings;   // what protected_paths could not look at
    std::vector<Warning> tool_cache_warnings;  // why the home was left out
    std::vector<ProtectedPath> own_programs;   // what of sbx's own programs was protected
    std::vector<Warning> own_program_warnings;  // what of them could not be
    std::optional<std::string> git_exclude;     // the info/exclude git reads in the root (ProtectedPaths)
    std::optional<std::string> git_record;      // where the launcher records the repositories it finds (read_git_record)
    std::vector<Warning> git_record_warnings;   // why there is none, or what of it was left out
};

// `git_record_base`: the folder the record of the repositories found in the root
// lies under (read_git_record; the tool cache's, $XDG_CACHE_HOME or HOME/.cache);
// nullopt: none is read or kept.
SBX_INLINE expected<CommandFsRules> command_fs_rules(const Policy& policy, const FsContext& ctx,
                                                 const std::optional<std::string>& tool_cache_base, const CachedFs& cached,
                                                 std::span<const std::string> own_programs = {},
                                                 const std::optional<std::string>& git_record_base = std::nullopt);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_PLAN)

namespace sbx {

SBX_INLINE expected<ToolCacheChoice> choose_tool_cache(const Policy& policy, const std::optional<std::string>& base,
                                                   const FsRules& rules, const FsView& fs) {
    ToolCacheChoice out;
    if (!base || !policy.tool_cache.value) return out;
    if (!paths::is_absolute(*base) || paths::normalize(*base) != *base)
        return fail(Errc::invalid_argument, "the tool cache's folder '" + *base + "' is not an absolute, normalised path");
    const std::string key = policy.tool_cache.source ? policy.tool_cache.source->key : "sandbox.toolCache";
    const std::string file = policy.tool_cache.source ? policy.tool_cache.source->file.str() : "";
    auto leave_out = [&](const std::string& why) {
        out.warnings.push_back(Warning{file, key, "no tool cache home: " + why + "; tools keep their own (read-only) caches"});
        return out;
    };
    auto real_base = resolve(fs, *base);
    SBX_TRY(real_base);
    const std::string folder = paths::parent(*real_base);
    auto folder_st = fs.lstat(folder);
    SBX_TRY(folder_st);
    if (!*folder_st || (*folder_st)->type != FileType::directory) return leave_out(folder + " is not a directory");
    const std::string dir = tool_cache_dir(*real_base, rules.root);
    for (std::string at = dir; paths::at_or_under(at, *real_base) && at != *real_base; at = paths::parent(at)) {
        auto st = fs.lstat(at);
        SBX_TRY(st);
        if (*st && (*st)->type != FileType::directory)
            return fail(Error(Errc::invalid_argument, std::string((*st)->type == FileType::symlink ? "a symlink" : "not a directory") +
                                                          " on the way to the tool cache home " + dir +
                                                          "; sbx follows no link there: remove it, or run with --no-tool-cache")
                            .in_file(at));
    }
    if (paths::at_or_under(dir, rules.root)) return leave_out(dir + " would lie inside the root");
    if (paths::at_or_under(rules.root, dir)) return leave_out(dir + " would hold the root");
    if (paths::at_or_under(dir, rules.tmpdir) || paths::at_or_under(rules.tmpdir, dir))
        return leave_out(dir + " and the temporary directory would hold each other");
    // Read as the plan will have it: the home is a writable place, which re-opens
    // reads under a broader denyRead (an agent file's scoped reads hide the whole
    // home directory), as the root and the write folders do. A deny of the home
    // itself, or narrower, or a credential store's, still hides it.
    auto reopened = [&](const FsDecision& d) {
        using B = FsDecision::Because;
        const FsRule* r = d.rule;
        return (d.because == B::hidden || d.because == B::hidden_from_reads) && r != nullptr &&
               r->kind == FsRule::Kind::deny_read && r->deny == FsRule::Deny::ordinary && !r->wildcard &&
               r->pattern != dir && paths::at_or_under(dir, r->pattern);
    };
    if (const auto d = decide(rules, dir, Access::read); !d.allowed && !reopened(d)) return leave_out(dir + " is " + why(d));
    if (const auto d = decide(rules, dir, Access::write);
        !d.allowed && d.because != FsDecision::Because::no_writable_root && !reopened(d))
        return leave_out(dir + ": " + why(d));
    out.path = dir;
    return out;
}

SBX_INLINE GitRecordChoice read_git_record(const std::optional<std::string>& base, const std::string& root, const FsView& fs) {
    GitRecordChoice out;
    if (!base) return out;
    auto leave_out = [&](const std::string& file, const std::string& why) {
        out.path.reset();
        out.repos.clear();
        out.warnings.push_back(
            Warning{file, "", "no record of the repositories in the root: " + why + std::string(detail::kNoRecordCost)});
        return out;
    };
    if (!paths::is_absolute(*base) || paths::normalize(*base) != *base)
        return leave_out(*base, "the cache folder is not an absolute, normalised path");
    auto real_base = resolve(fs, *base);
    if (!real_base) return leave_out(*base, "cannot look at the cache folder: " + to_string(real_base.error()));
    const std::string path = git_record_path(*real_base, root);
    for (std::string at = path; at != *real_base && paths::at_or_under(at, *real_base); at = paths::parent(at)) {
        auto st = fs.lstat(at);
        if (!st) return leave_out(at, "cannot look at it: " + to_string(st.error()));
        if (*st && (*st)->type != (at == path ? FileType::regular : FileType::directory))
            return leave_out(at, std::string((*st)->type == FileType::symlink ? "a symlink" : "of another kind") +
                                     " on the way to it, and sbx follows no link there");
    }
    out.path = path;
    auto text = fs.read_text(path, git_record::kMaxBytes);
    if (!text) return leave_out(path, "cannot read it (" + to_string(text.error()) + "); remove it");
    if (!*text) return out;
    auto read = parse_git_record(**text);
    if (read.problem) return leave_out(path, "cannot understand it: " + *read.problem + "; remove it");
    if (read.truncated)
        out.warnings.push_back(Warning{path, "",
                                       "lists more than " + std::to_string(git_record::kMaxRepositories) +
                                           " repositories; those after them are checked by the audit after the run, "
                                           "not protected while it runs"});
    out.repos = std::move(read.repos);
    return out;
}

SBX_INLINE expected<CommandFsRules> command_fs_rules(const Policy& policy, const FsContext& ctx,
                                                 const std::optional<std::string>& tool_cache_base, const CachedFs& cached,
                                                 std::span<const std::string> own_programs,
                                                 const std::optional<std::string>& git_record_base) {
    auto record = read_git_record(git_record_base, ctx.root, cached);
    auto prot = protected_paths(ctx.root, ctx.home, cached, record.repos);
    SBX_TRY(prot);
    auto rules = compile_fs_rules(policy, ctx, prot->paths, cached);
    SBX_TRY(rules);
    CommandFsRules out{std::move(*rules), std::nullopt, std::move(prot->warnings), {}, {}, {}, prot->git_exclude, {}, {}};
    if (out.rules.disabled) return out;
    // The record tells the next plan what to protect: a command that could write it
    // could hide a repository from that plan (the audit would still check it).
    if (record.path) {
        if (const auto d = decide(out.rules, *record.path, Access::write); d.allowed)
            record.warnings.push_back(Warning{*record.path, "",
                                              "no record of the repositories in the root: the command could write it" +
                                                  std::string(detail::kNoRecordCost)});
        else
            out.git_record = std::move(record.path);
    }
    out.git_record_warnings = std::move(record.warnings);
    auto cache = choose_tool_cache(policy, tool_cache_base, out.rules, cached);
    SBX_TRY(cache);
    out.tool_cache_warnings = std::move(cache->warnings);
    if (cache->path) {
        add_tool_cache(out.rules, *cache->path);
        out.tool_cache = std::move(cache->path);
    }
    // Where a command could write sbx's programs is known from the rules (the tool
    // cache home among them, where `cargo install` puts programs): compiled again
    // with them among the protected paths when any of them is writable.
    auto own = own_program_paths(own_programs, out.rules, cached);
    SBX_TRY(own);
    out.own_program_warnings = std::move(own->warnings);
    if (!own->paths.empty()) {
        out.own_programs = own->paths;
        auto again = compile_fs_rules(policy, ctx, with_own_programs(std::move(prot->paths), std::move(own->paths)), cached);
        SBX_TRY(again);
        out.rules = std::move(*again);
        if (out.tool_cache) add_tool_cache(out.rules, *out.tool_cache);
    }
    return out;
}

}  // namespace sbx
#endif
