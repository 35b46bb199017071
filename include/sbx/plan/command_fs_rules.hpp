// sbx/plan/command_fs_rules.hpp - the filesystem rules one command runs with, tool cache home included.
//
// command_fs_rules() adds to the policy's rules the root's protected paths, sbx's
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
#include "sbx/core/paths.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/rules/fs_rules.hpp"
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

inline expected<ToolCacheChoice> choose_tool_cache(const Policy& policy, const std::optional<std::string>& base,
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
    if (const auto d = decide(rules, dir, Access::read); !d.allowed) return leave_out(dir + " is " + why(d));
    if (const auto d = decide(rules, dir, Access::write); !d.allowed && d.because != FsDecision::Because::no_writable_root)
        return leave_out(dir + ": " + why(d));
    out.path = dir;
    return out;
}

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
};

inline expected<CommandFsRules> command_fs_rules(const Policy& policy, const FsContext& ctx,
                                                 const std::optional<std::string>& tool_cache_base, const CachedFs& cached,
                                                 std::span<const std::string> own_programs = {}) {
    auto prot = protected_paths(ctx.root, ctx.home, cached);
    SBX_TRY(prot);
    auto rules = compile_fs_rules(policy, ctx, prot->paths, cached);
    SBX_TRY(rules);
    CommandFsRules out{std::move(*rules), std::nullopt, std::move(prot->warnings), {}, {}, {}, prot->git_exclude};
    if (out.rules.disabled) return out;
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
