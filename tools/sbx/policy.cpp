// policy.cpp - `sbx policy`: the effective policy, each value with the layer that
// set it, and what a run of the root adds (the tool cache home, sbx's own
// programs, the git directories outside the root it may write).
#include <ftw.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "cli_common.hpp"
#include "commands.hpp"
#include "compose.hpp"
#include "print_policy.hpp"

namespace sbx::cli {

namespace {

// Regular files and their bytes below a directory, walked without following
// symlinks or crossing into other filesystems (nftw keeps no caller data).
struct TreeSize {
    std::uint64_t bytes = 0, files = 0;
};
TreeSize g_tree_size;

int count_entry(const char*, const struct stat* st, int type, FTW*) {
    if (type == FTW_F && S_ISREG(st->st_mode)) {
        g_tree_size.bytes += static_cast<std::uint64_t>(st->st_size);
        ++g_tree_size.files;
    }
    return 0;
}

// The tool cache home of the rules `run`, or why there is none, and its size.
sbx::expected<ToolCacheHome> tool_cache_home(const Composed& c, const RunInputs& in, const sbx::CommandFsRules& run) {
    ToolCacheHome out;
    if (run.rules.disabled) {
        out.why = "filesystem isolation is disabled, so the command writes the caches you do";
        return out;
    }
    if (!c.policy.tool_cache.value) {
        out.why = "toolCache is false";
        return out;
    }
    if (!run.tool_cache) {
        // Why this user cannot make it comes before why the engine left it out.
        std::vector<sbx::Warning> unusable = in.tool_cache_warnings;
        unusable.insert(unusable.end(), run.tool_cache_warnings.begin(), run.tool_cache_warnings.end());
        out.why = unusable.empty() ? "none" : unusable.front().message;
        return out;
    }
    out.path = run.tool_cache;
    struct stat st {};
    if (::lstat(out.path->c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return out;
    out.exists = true;
    g_tree_size = {};
    if (::nftw(out.path->c_str(), count_entry, 32, FTW_PHYS | FTW_MOUNT) != 0)
        return sbx::fail(sbx::Error(sbx::Errc::io_error, std::string("cannot walk the tool cache home: ") + std::strerror(errno))
                             .in_file(*out.path));
    out.bytes = g_tree_size.bytes;
    out.files = g_tree_size.files;
    return out;
}

}  // namespace

int run_policy(const SettingsArgs& a) {
    auto composed = compose(a, HomeRoot::allowed);
    if (!composed) return report(composed.error());
    sbx::CachedFs cached(*composed->view);
    const RunInputs in = run_inputs(*composed);
    auto rules = fs_rules(*composed, in, cached);
    if (!rules) return report(rules.error());
    auto cache = tool_cache_home(*composed, in, *rules);
    if (!cache) return report(cache.error());
    const PolicyReport r{*composed, in, *rules, *cache};
    if (a.json) print_policy_json(r);
    else print_policy_text(r);
    return kOk;
}

}  // namespace sbx::cli
