// sbx/plan/plan.hpp - a policy and a command compiled into the plan a launcher carries out.
//
// make_plan() gathers the protected paths of the root, compiles the filesystem
// rules, plans the mounts and picks the command's environment; to_json() writes
// the versioned document a launcher reads (docs/plan.md) and parse_plan() reads
// it back, strictly. Everything is decided here: the launcher only re-checks the
// identities the plan recorded and carries it out.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "sbx/core/json.hpp"
#include "sbx/net/forwards.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/plan/report.hpp"
#include "sbx/rules/env.hpp"
#include "sbx/rules/network.hpp"
#include "sbx/rules/protected_paths.hpp"
#include "sbx/rules/tool_cache.hpp"
#include "sbx/settings/policy.hpp"

namespace sbx {

inline constexpr int kPlanVersion = 1;

// The lowest descriptor a plan can pass: 0, 1 and 2 always reach the command.
inline constexpr int kFirstPassFd = 3;

// What a caller asks for: which command, where.
struct PlanRequest {
    std::vector<std::string> argv;  // the command; argv[0] is looked up on PATH by the launcher
    std::string root;               // absolute, normalised, symlink-free; not `/` (see also root_exposes_home)
    std::string cwd;                // absolute; the root when empty
    std::string home;               // absolute, normalised
    std::string tmpdir;             // the command's temporary directory: absolute, not yet existing
    std::span<const std::string> environ;   // the caller's environment, "NAME=VALUE"
    std::span<const std::string> pass_env;  // names passed on purpose (`--env NAME`)
    std::optional<net::UnknownHost> on_unknown_host;  // the sandbox's decider for hosts no list decides
    std::optional<std::vector<std::string>> call_hosts;  // hosts the call lists for itself (patterns)
    bool scan_stderr = false;  // read file refusals from the command's standard error
    // Whose words the refusal lines use for the setting that would allow them:
    // the settings' keys, or the agent file's (the policy came from one).
    SettingsWords words = SettingsWords::settings;
    // Descriptors the command inherits beyond 0, 1 and 2 (`--pass-fd N`), each at
    // least kFirstPassFd; make_plan sorts them and merges repeats. Whether they are
    // open is the caller's to check: the engine makes no syscalls. (Initialised, so
    // a request written positionally may leave it out.)
    std::vector<int> pass_fds = {};
    // Where tool caches go (tool_cache_base: $XDG_CACHE_HOME or HOME/.cache, as
    // the caller read it); nullopt: no tool cache home (`--no-tool-cache`).
    std::optional<std::string> tool_cache_base = std::nullopt;
};

// The first of `homes` that `root` is or holds, or nullopt. A root that holds a
// home directory makes every dotfile in it writable (shell start-up files,
// ~/.local/bin, ~/.config/autostart, systemd user units, Python .pth files), and
// they run unconfined later; a caller refuses such a root unless asked for it in
// so many words (`sbx --allow-home-root`). make_plan does not decide it: it is not
// handed the account's home. All paths absolute and normalised; pass each home as
// its real path (and as written too, when a symlink leads there), as the root is.
inline std::optional<std::string> root_exposes_home(std::string_view root, std::span<const std::string> homes) {
    for (const auto& h : homes)
        if (paths::at_or_under(h, root)) return h;
    return std::nullopt;
}

// What the network namespace holds: `none`, nothing but its own loopback; or
// `proxy`, the same with a proxy of the launcher's listening on that loopback
// (the command gets HTTP_PROXY, HTTPS_PROXY and ALL_PROXY), which decides every
// host with the rules below.
enum class NetworkMode { none, proxy };

struct NetworkPlan {
    NetworkMode mode = NetworkMode::proxy;
    net::HostRules rules;  // allowed, denied, strict, the sandbox's onUnknownHost
    net::HostCall call;    // the hosts the call lists, its onUnknownHost
    std::string strict_why;  // what made the list strict, for people
    std::string local_why;   // the settings entry behind rules.local, for people
    // Listeners on the sandbox's loopback that lead to allowed loopback targets
    // (sbx/net/forwards.hpp): each connection decided as a CONNECT to the target.
    std::vector<net::Forward> forwards;
};

// One filesystem rule as the engine compiled it (fs_rules.hpp), for launchers
// that confine by rules rather than mounts (sbx-mac's Seatbelt profile). The
// pattern is absolute and normalised, and always a pattern: a rule on a path
// (the root, a protected path) has its `*`, `?`, `[` and `\` escaped.
// A deny-read rule may be a credential store's (`deny`): it yields only to an
// allow-read rule at or under it, and to no other allow (fs_rules.hpp).
struct PlanRule {
    FsRule::Kind kind = FsRule::Kind::deny_read;
    std::string pattern;
    std::string why;
    FsRule::Deny deny = FsRule::Deny::ordinary;
};

constexpr std::string_view plan_rule_kind_name(FsRule::Kind k) noexcept {
    switch (k) {
        case FsRule::Kind::deny_read: return "deny-read";
        case FsRule::Kind::allow_read: return "allow-read";
        case FsRule::Kind::writable: return "writable";
        case FsRule::Kind::deny_write: return "deny-write";
        case FsRule::Kind::protect: return "protect";
    }
    return "?";
}

// filesystem.toolCache: the project's cache home, bound writable, which the
// launcher makes (with its missing parents) and leaves in place after the run.
struct ToolCachePlan {
    std::string path;              // absolute, normalised, symlink-free
    std::vector<std::string> set;  // the variables of kToolCacheVars pointed into it
    std::vector<KeptEnvVar> kept;  // those the caller had set, kept as they were
};

struct Plan {
    int version = kPlanVersion;
    std::vector<std::string> argv;
    std::string root, cwd, tmpdir;
    std::string root_why;             // why `root` is the root, for people (sbx::root_why); empty: not said
    std::vector<EnvVar> env;          // the command's environment, TMPDIR included
    std::vector<EnvVar> loader_env;   // LD_*, GCONV_PATH: set inside the sandbox only
    std::vector<RemovedEnvVar> env_removed;
    std::vector<int> pass_fds;        // command.passFds: inherited beyond 0-2; ascending, each >= 3
    std::string bwrap_path;           // absolute; empty: `bwrap` on PATH
    bool enabled = true;              // the policy's `enabled`; launchers confine either way
    bool fail_if_unavailable = true;
    bool allow_unix_sockets = false;  // seccomp keeps socket(AF_UNIX) and every socketpair
    // The Unix sockets the settings open, for launchers that can tell paths apart
    // (sbx-mac): every one, or these paths.
    bool all_unix_sockets = false;
    std::vector<std::string> unix_socket_paths;
    NetworkPlan network;
    std::vector<std::string> ignore_violations;  // a violation line holding one of these is not reported
    bool scan_stderr = false;  // the launcher reads file refusals from the command's standard error
    AllowHints hints = allow_hints(SettingsWords::settings);  // "hints": named in the refusal lines
    FsPlan filesystem;
    std::optional<ToolCachePlan> tool_cache;  // filesystem.toolCache; nullopt: none
    std::vector<PlanRule> rules;    // filesystem.rules: what the mounts were made from
    std::vector<Warning> warnings;  // the policy's, the rules', the plan's
};

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
inline ExcludeText split_exclude(std::string_view text) {
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

// `rest` with sbx's block of `lines` at its end; `rest` alone when none.
inline std::string join_exclude(std::string rest, const std::vector<std::string>& lines) {
    if (lines.empty()) return rest;
    if (!rest.empty() && rest.back() != '\n') rest += '\n';
    rest.append(kExcludeBlockBegin).append("\n");
    for (const auto& l : lines) rest.append(l).append("\n");
    rest.append(kExcludeBlockEnd).append("\n");
    return rest;
}

namespace detail {

// A root-relative path as one gitignore pattern that matches it alone.
inline std::string gitignore_literal(std::string_view rel) {
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

// The repository's info/exclude with the placeholders in the root added, when
// the root is a repository's work tree with that file (one name, UTF-8, at most
// 64 KiB, in a real info directory); otherwise nothing, and git inside lists
// the placeholders as untracked.
inline std::optional<GitExclude> git_exclude_for(const std::string& root, const std::vector<PlaceholderOp>& placeholders,
                                                 const FsView& fs) {
    const std::string git = paths::join(root, ".git");
    std::vector<std::string> names;
    for (const auto& ph : placeholders)
        if (ph.path != root && paths::at_or_under(ph.path, root) && !paths::at_or_under(ph.path, git))
            names.push_back(gitignore_literal(std::string_view(ph.path).substr(root.size())));
    if (names.empty()) return std::nullopt;
    auto git_st = fs.lstat(git);
    if (!git_st || !*git_st || (*git_st)->type != FileType::directory) return std::nullopt;
    // A command can swap info for a symlink (it is no protected path): then the
    // file is not the repository's to cover, nor the launcher's to edit.
    auto info_st = fs.lstat(git + "/info");
    if (!info_st || !*info_st || (*info_st)->type != FileType::directory) return std::nullopt;
    GitExclude ex;
    ex.path = git + "/info/exclude";
    auto st = fs.lstat(ex.path);
    if (!st || !*st || (*st)->type != FileType::regular || (*st)->nlink != 1) return std::nullopt;
    auto text = fs.read_text(ex.path, std::size_t{64} << 10);
    if (!text || !*text || !json::detail::valid_utf8(**text)) return std::nullopt;
    ex.expect = identity_of(*st);
    // The file's own block, there while other sandboxes of the root run, is theirs.
    ex.content = join_exclude(split_exclude(**text).rest, names);
    return ex;
}

}  // namespace detail

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
    if (!real_base) return fail(real_base.error());
    const std::string folder = paths::parent(*real_base);
    auto folder_st = fs.lstat(folder);
    if (!folder_st) return fail(folder_st.error());
    if (!*folder_st || (*folder_st)->type != FileType::directory) return leave_out(folder + " is not a directory");
    const std::string dir = tool_cache_dir(*real_base, rules.root);
    for (std::string at = dir; paths::at_or_under(at, *real_base) && at != *real_base; at = paths::parent(at)) {
        auto st = fs.lstat(at);
        if (!st) return fail(st.error());
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
// paths and, where the rules leave it writable, the tool cache home under `base`
// (nullopt: none), added to them as writable. make_plan plans with these, and
// `sbx explain` and `sbx policy` decide with the same.
struct CommandFsRules {
    FsRules rules;
    std::optional<std::string> tool_cache;  // the home, when there is one
    std::vector<Warning> protected_warnings;   // what protected_paths could not look at
    std::vector<Warning> tool_cache_warnings;  // why the home was left out
};

inline expected<CommandFsRules> command_fs_rules(const Policy& policy, const FsContext& ctx,
                                                 const std::optional<std::string>& tool_cache_base, const CachedFs& cached) {
    auto prot = protected_paths(ctx.root, ctx.home, cached);
    if (!prot) return fail(prot.error());
    auto rules = compile_fs_rules(policy, ctx, std::move(prot->paths), cached);
    if (!rules) return fail(rules.error());
    CommandFsRules out{std::move(*rules), std::nullopt, std::move(prot->warnings), {}};
    if (out.rules.disabled) return out;
    auto cache = choose_tool_cache(policy, tool_cache_base, out.rules, cached);
    if (!cache) return fail(cache.error());
    out.tool_cache_warnings = std::move(cache->warnings);
    if (cache->path) {
        add_tool_cache(out.rules, *cache->path);
        out.tool_cache = std::move(cache->path);
    }
    return out;
}

inline expected<Plan> make_plan(const Policy& policy, const PlanRequest& req, const FsView& fs) {
    if (req.argv.empty() || req.argv.front().empty()) return fail(Errc::invalid_argument, "no command to run");
    for (const auto& a : req.argv)
        if (a.find('\0') != std::string::npos)
            return fail(Errc::invalid_argument, "an argument of the command holds a NUL character");
    if (!req.cwd.empty() && (!paths::is_absolute(req.cwd) || paths::normalize(req.cwd) != req.cwd))
        return fail(Errc::invalid_argument, "the working directory '" + req.cwd + "' is not an absolute, normalised path");
    for (const auto* p : {&req.root, &req.home, &req.tmpdir})
        if (!paths::is_absolute(*p) || paths::normalize(*p) != *p)
            return fail(Errc::invalid_argument, "'" + *p + "' is not an absolute, normalised path");
    if (req.root == "/") return fail(Errc::invalid_argument, "the root may not be /: everything would be writable");
    if (paths::at_or_under(req.root, req.tmpdir) || paths::at_or_under(req.tmpdir, req.root))
        return fail(Errc::invalid_argument, "the temporary directory and the root may not hold each other");

    for (const int fd : req.pass_fds)
        if (fd < kFirstPassFd)
            return fail(Errc::invalid_argument,
                        "descriptor " + std::to_string(fd) + " cannot be passed: 0, 1 and 2 always reach the command");

    Plan plan;
    plan.argv = req.argv;
    plan.pass_fds = req.pass_fds;
    std::sort(plan.pass_fds.begin(), plan.pass_fds.end());
    plan.pass_fds.erase(std::unique(plan.pass_fds.begin(), plan.pass_fds.end()), plan.pass_fds.end());
    plan.root = req.root;
    plan.cwd = req.cwd.empty() ? req.root : req.cwd;
    plan.tmpdir = req.tmpdir;
    plan.enabled = policy.enabled.value;
    plan.fail_if_unavailable = policy.fail_if_unavailable.value;
    plan.warnings = policy.warnings;
    if (policy.bwrap_path) {
        const auto& b = *policy.bwrap_path;
        if (!paths::is_absolute(b.value) || paths::normalize(b.value) != b.value)
            return fail(Error(Errc::invalid_settings, "bwrapPath must be an absolute, normalised path")
                            .in_file(b.source.file.str())
                            .at_key(b.source.key));
        plan.bwrap_path = b.value;
    }
    plan.all_unix_sockets = policy.network.allow_all_unix_sockets.value;
    for (const auto& s : policy.network.allow_unix_sockets) plan.unix_socket_paths.push_back(s.value);
    if (policy.network.allow_all_unix_sockets.value || !policy.network.allow_unix_sockets.empty()) {
        plan.allow_unix_sockets = true;
        const auto& src = policy.network.allow_all_unix_sockets.value ? policy.network.allow_all_unix_sockets.source
                                                                       : std::optional<Source>(
                                                                             policy.network.allow_unix_sockets.front().source);
        plan.warnings.push_back(Warning{src ? src->file.str() : "", src ? src->key : "",
                                        "Linux cannot tell Unix socket paths apart: the command may create and "
                                        "connect every Unix socket it can reach",
                                        WarningScope::linux_only});
    }
    // ignoreViolations: the rules whose command part is `*` or appears in the
    // command line (its arguments joined by spaces) lend their substrings.
    std::string command_line;
    for (const auto& a : req.argv) command_line += (command_line.empty() ? "" : " ") + a;
    for (const auto& rule : policy.ignore_violations)
        if (rule.command == "*" || command_line.find(rule.command) != std::string::npos)
            for (const auto& v : rule.violations)
                if (!v.empty()) plan.ignore_violations.push_back(v);
    plan.scan_stderr = req.scan_stderr;
    plan.hints = allow_hints(req.words);
    auto host_rules = net::compile_host_rules(policy);
    if (!host_rules) return fail(host_rules.error());
    plan.network.rules = std::move(*host_rules);
    plan.network.rules.on_unknown = req.on_unknown_host;
    if (plan.network.rules.strict_source)
        plan.network.strict_why = plan.network.rules.strict_source->file.str() + " " + plan.network.rules.strict_source->key;
    if (plan.network.rules.local_source)
        plan.network.local_why = plan.network.rules.local_source->file.str() + " " + plan.network.rules.local_source->key;
    if (req.call_hosts) {
        plan.network.call.hosts.emplace();
        for (std::size_t i = 0; i < req.call_hosts->size(); ++i) {
            const auto& text = (*req.call_hosts)[i];
            auto p = net::parse_host_pattern(text);
            if (!p) return fail(Error(Errc::invalid_argument, p.error().message));
            plan.network.call.hosts->push_back(net::HostRule{std::move(*p), text, "the call's hosts", std::nullopt});
        }
    }
    auto forwards = net::loopback_forwards(plan.network.rules, plan.network.call);
    for (const auto* r : forwards.privileged)
        plan.warnings.push_back(Warning{r->source ? r->source->file.str() : "", r->source ? r->source->key : "",
                                        r->text + " gets no loopback forward: the sandbox cannot listen on a port below " +
                                            std::to_string(net::kFirstForwardPort) +
                                            "; only clients that use the proxy variables reach it"});
    plan.network.forwards = std::move(forwards.forwards);
    if (plan.network.forwards.size() > net::kMaxForwards)
        return fail(Errc::invalid_settings, "the allowed loopback entries with a port ask for " +
                                                std::to_string(plan.network.forwards.size()) + " forwards; at most " +
                                                std::to_string(net::kMaxForwards) + " can be made");
    CachedFs cached(fs);
    auto command_rules = command_fs_rules(policy, FsContext{req.root, req.tmpdir, req.home}, req.tool_cache_base, cached);
    if (!command_rules) return fail(command_rules.error());
    for (const auto* list : {&command_rules->protected_warnings, &command_rules->tool_cache_warnings})
        plan.warnings.insert(plan.warnings.end(), list->begin(), list->end());
    const FsRules* const rules = &command_rules->rules;
    // The environment's cache variables point into the tool cache home.
    const std::optional<std::string>& cache_dir = command_rules->tool_cache;
    auto env = command_environment(policy, EnvRequest{req.environ, req.pass_env, req.tmpdir, cache_dir,
                                                      req.words == SettingsWords::agent_file
                                                          ? "list it under the agent file's env:"
                                                          : ""});
    if (!env) return fail(env.error());
    plan.env = std::move(env->env);
    plan.loader_env = std::move(env->loader);
    plan.env_removed = std::move(env->removed);
    if (cache_dir) {
        for (const auto& k : env->cache_kept) {
            // A kept value the command cannot write to fails the tool as before.
            const auto it = std::find_if(plan.env.begin(), plan.env.end(), [&](const EnvVar& e) { return e.name == k.name; });
            if (it == plan.env.end()) continue;
            const bool absolute = paths::is_absolute(it->value);
            const auto d = absolute ? decide(*rules, paths::normalize(it->value), Access::write) : FsDecision{};
            if (!absolute || !d.allowed)
                plan.warnings.push_back(Warning{"", k.name, "kept as you set it (" + it->value + "), outside the tool cache " +
                                                                "home; the command cannot write there" +
                                                                (absolute ? ": " + why(d) : std::string(" (not an absolute path)"))});
        }
        plan.tool_cache = ToolCachePlan{*cache_dir, std::move(env->cache_set), std::move(env->cache_kept)};
    }
    if (!rules->disabled)
        // Always a pattern in the plan: a path rule's special characters escaped.
        for (const auto& r : rules->rules)
            plan.rules.push_back(PlanRule{r.kind, r.wildcard ? r.pattern : glob::escape(r.pattern), describe(r), r.deny});
    plan.warnings.insert(plan.warnings.end(), rules->warnings.begin(), rules->warnings.end());
    // A hidden working directory would be an empty one inside: say so rather
    // than start the command somewhere it cannot see.
    if (plan.cwd != plan.root) {
        if (const auto d = decide(*rules, plan.cwd, Access::read); !d.allowed)
            return fail(Error(Errc::invalid_argument, "the working directory is hidden from the command: " + why(d))
                            .in_file(plan.cwd));
    }
    auto fsplan = make_fs_plan(*rules, cached);
    if (!fsplan) return fail(fsplan.error());
    plan.warnings.insert(plan.warnings.end(), fsplan->warnings.begin(), fsplan->warnings.end());
    fsplan->warnings.clear();
    plan.filesystem = std::move(*fsplan);
    plan.filesystem.git_exclude = detail::git_exclude_for(plan.root, plan.filesystem.placeholders, cached);
    // A repository the command makes or changes in the root is live for git outside
    // once the command is over: the launcher audits the root then.
    if (plan.filesystem.isolated) plan.filesystem.git_audit.push_back(plan.root);
    return plan;
}

namespace detail {

inline void write_identity(json::Writer& w, const Identity& id) {
    w.begin_object().key("exists").value(id.exists);
    if (id.exists) {
        std::string_view type = id.type == FileType::directory ? "directory"
                                : id.type == FileType::regular ? "file"
                                : id.type == FileType::symlink ? "symlink"
                                                               : "other";
        w.key("type").value(type).key("dev").value(id.dev).key("ino").value(id.ino).key("nlink").value(id.nlink);
    }
    w.end_object();
}

}  // namespace detail

namespace detail {

inline std::string_view unknown_host_name(net::UnknownHost u) {
    return u == net::UnknownHost::allow ? "allow" : u == net::UnknownHost::ask ? "ask" : "deny";
}

inline void write_host_rules(json::Writer& w, const std::vector<net::HostRule>& rules) {
    w.begin_array();
    for (const auto& r : rules) {
        w.begin_object().key("pattern").value(r.text).key("source");
        if (r.source)
            w.begin_object()
                .key("layer")
                .value(layer_name(r.source->layer))
                .key("file")
                .value(r.source->file.str())
                .key("key")
                .value(r.source->key)
                .end_object();
        else
            w.null();
        w.end_object();
    }
    w.end_array();
}

inline void write_network(json::Writer& w, const NetworkPlan& n) {
    w.key("network").begin_object().key("mode").value(n.mode == NetworkMode::proxy ? "proxy" : "none");
    if (n.mode == NetworkMode::proxy) {
        w.key("allowed");
        write_host_rules(w, n.rules.allowed);
        w.key("denied");
        write_host_rules(w, n.rules.denied);
        w.key("strict").value(n.rules.strict);
        if (!n.strict_why.empty()) w.key("strictWhy").value(n.strict_why);
        if (n.rules.local) {
            w.key("local").value(true);
            if (!n.local_why.empty()) w.key("localWhy").value(n.local_why);
        }
        if (n.rules.on_unknown) w.key("onUnknownHost").value(unknown_host_name(*n.rules.on_unknown));
        if (n.call.hosts) {
            w.key("callHosts");
            write_host_rules(w, *n.call.hosts);
        }
        if (n.call.on_unknown) w.key("callOnUnknownHost").value(unknown_host_name(*n.call.on_unknown));
        if (!n.forwards.empty()) {
            w.key("forwards").begin_array();
            for (const auto& f : n.forwards)
                w.begin_object()
                    .key("listen")
                    .value(net::to_string(f.listen))
                    .key("port")
                    .value(static_cast<int>(f.port))
                    .key("target")
                    .value(f.target)
                    .key("targetPort")
                    .value(static_cast<int>(f.target_port))
                    .key("why")
                    .value(f.why)
                    .end_object();
            w.end_array();
        }
    }
    w.end_object();
}

}  // namespace detail

// The plan as the versioned JSON document of docs/plan.md.
inline std::string to_json(const Plan& p) {
    json::Writer w;
    auto env_object = [&](const std::vector<EnvVar>& vars) {
        w.begin_object();
        for (const auto& v : vars) w.key(v.name).value(v.value);
        w.end_object();
    };
    w.begin_object().key("version").value(p.version);
    w.key("command").begin_object().key("argv").begin_array();
    for (const auto& a : p.argv) w.value(a);
    w.end_array().key("cwd").value(p.cwd).key("env");
    env_object(p.env);
    w.key("loaderEnv");
    env_object(p.loader_env);
    w.key("envRemoved").begin_array();
    for (const auto& r : p.env_removed) w.begin_object().key("name").value(r.name).key("why").value(r.why).end_object();
    w.end_array();
    if (!p.pass_fds.empty()) {
        w.key("passFds").begin_array();
        for (const int fd : p.pass_fds) w.value(fd);
        w.end_array();
    }
    w.end_object();
    w.key("root").value(p.root).key("tmpdir").value(p.tmpdir);
    if (!p.root_why.empty()) w.key("rootWhy").value(p.root_why);
    if (!p.bwrap_path.empty()) w.key("bwrapPath").value(p.bwrap_path);
    w.key("enabled").value(p.enabled).key("failIfUnavailable").value(p.fail_if_unavailable);
    w.key("seccomp").begin_object().key("allowUnixSockets").value(p.allow_unix_sockets).end_object();
    if (p.all_unix_sockets || !p.unix_socket_paths.empty()) {
        w.key("unixSockets").begin_object().key("all").value(p.all_unix_sockets).key("paths").begin_array();
        for (const auto& u : p.unix_socket_paths) w.value(u);
        w.end_array().end_object();
    }
    detail::write_network(w, p.network);
    if (!p.ignore_violations.empty()) {
        w.key("ignoreViolations").begin_array();
        for (const auto& v : p.ignore_violations) w.value(v);
        w.end_array();
    }
    if (p.scan_stderr) w.key("scanStderr").value(true);
    w.key("hints").begin_object().key("hosts").value(p.hints.hosts).key("local").value(p.hints.local);
    w.key("call").value(p.hints.call).key("write").value(p.hints.write).key("read").value(p.hints.read).end_object();
    w.key("filesystem").begin_object().key("isolated").value(p.filesystem.isolated).key("mounts").begin_array();
    for (const auto& m : p.filesystem.mounts) {
        w.begin_object().key("kind").value(mount_kind_name(m.kind)).key("path").value(m.path);
        if (m.kind == MountKind::bind || m.kind == MountKind::ro_bind) w.key("source").value(m.source);
        w.key("expect");
        detail::write_identity(w, m.expect);
        w.key("why").value(m.why).end_object();
    }
    w.end_array().key("placeholders").begin_array();
    for (const auto& ph : p.filesystem.placeholders) {
        w.begin_object().key("path").value(ph.path).key("kind").value(placeholder_name(ph.kind)).key("parent");
        detail::write_identity(w, ph.parent);
        w.key("why").value(ph.why).end_object();
    }
    w.end_array();
    if (const auto& ex = p.filesystem.git_exclude) {
        w.key("gitExclude").begin_object().key("path").value(ex->path).key("expect");
        detail::write_identity(w, ex->expect);
        w.key("content").value(ex->content).end_object();
    }
    w.key("toolCache");
    if (const auto& tc = p.tool_cache) {
        w.begin_object().key("path").value(tc->path).key("set").begin_array();
        for (const auto& n : tc->set) w.value(n);
        w.end_array().key("kept").begin_array();
        for (const auto& k : tc->kept) w.begin_object().key("name").value(k.name).key("why").value(k.why).end_object();
        w.end_array().end_object();
    } else {
        w.null();
    }
    if (!p.filesystem.git_audit.empty()) {
        w.key("gitAudit").begin_array();
        for (const auto& d : p.filesystem.git_audit) w.value(d);
        w.end_array();
    }
    if (!p.rules.empty()) {
        w.key("rules").begin_array();
        for (const auto& r : p.rules) {
            w.begin_object().key("kind").value(plan_rule_kind_name(r.kind)).key("pattern").value(r.pattern).key("why").value(r.why);
            if (r.deny == FsRule::Deny::credential_store) w.key("credentialStore").value(true);
            w.end_object();
        }
        w.end_array();
    }
    w.end_object();
    w.key("warnings").begin_array();
    for (const auto& wn : p.warnings) {
        w.begin_object().key("file").value(wn.file).key("key").value(wn.key).key("message").value(wn.message);
        // Written only when set: a warning for every launcher reads as before.
        if (wn.scope == WarningScope::linux_only) w.key("platform").value("linux");
        w.end_object();
    }
    w.end_array().end_object();
    return w.take();
}

namespace detail {

// Reads a plan document strictly: every key known, every required key present,
// every value of its type, every path absolute and normalised. Errors are
// INVALID_PLAN naming the key path (`filesystem.mounts[3].expect.ino`).
class PlanReader {
public:
    using element = simdjson::dom::element;
    using element_type = simdjson::dom::element_type;

    expected<Plan> read(element root) {
        Plan p;
        // The version first: a document of another version is refused as such, not
        // for the keys it has or lacks.
        if (root.type() == element_type::OBJECT) {
            element v;
            if (simdjson::dom::object(root).at_key("version").get(v) == simdjson::SUCCESS) {
                auto version = integer(v, "version");
                if (!version) return fail(version.error());
                if (*version != static_cast<std::uint64_t>(kPlanVersion))
                    return error("version", "unknown plan version " + std::to_string(*version) +
                                                "; this launcher reads " + std::to_string(kPlanVersion));
            }
        }
        auto top = members(root, "", {"version", "command", "root", "rootWhy", "tmpdir", "bwrapPath", "enabled", "failIfUnavailable",
                                      "seccomp", "unixSockets", "network", "ignoreViolations", "scanStderr", "hints", "filesystem", "warnings"},
                           {"version", "command", "root", "tmpdir", "enabled", "failIfUnavailable", "seccomp",
                            "network", "filesystem"});
        if (!top) return fail(top.error());
        if (auto r = read_command(top->at("command"), p); !r) return fail(r.error());
        for (auto [key, out] : {std::pair{"root", &p.root}, std::pair{"tmpdir", &p.tmpdir}}) {
            auto v = path(top->at(key), key);
            if (!v) return fail(v.error());
            *out = std::move(*v);
        }
        if (p.root == "/") return error("root", "the root may not be /: everything would be writable");
        if (paths::at_or_under(p.root, p.tmpdir) || paths::at_or_under(p.tmpdir, p.root))
            return error("tmpdir", "the temporary directory and the root may not hold each other");
        if (top->has("rootWhy")) {
            auto why = string(top->at("rootWhy"), "rootWhy");
            if (!why) return fail(why.error());
            p.root_why = std::move(*why);
        }
        if (top->has("bwrapPath")) {
            auto v = path(top->at("bwrapPath"), "bwrapPath");
            if (!v) return fail(v.error());
            p.bwrap_path = std::move(*v);
        }
        for (auto [key, out] : {std::pair{"enabled", &p.enabled}, std::pair{"failIfUnavailable", &p.fail_if_unavailable}}) {
            auto v = boolean(top->at(key), key);
            if (!v) return fail(v.error());
            *out = *v;
        }
        auto sec = members(top->at("seccomp"), "seccomp", {"allowUnixSockets"}, {"allowUnixSockets"});
        if (!sec) return fail(sec.error());
        auto unix_sockets = boolean(sec->at("allowUnixSockets"), "seccomp.allowUnixSockets");
        if (!unix_sockets) return fail(unix_sockets.error());
        p.allow_unix_sockets = *unix_sockets;
        if (top->has("unixSockets")) {
            auto us = members(top->at("unixSockets"), "unixSockets", {"all", "paths"}, {"all", "paths"});
            if (!us) return fail(us.error());
            auto all = boolean(us->at("all"), "unixSockets.all");
            if (!all) return fail(all.error());
            p.all_unix_sockets = *all;
            auto list = array(us->at("paths"), "unixSockets.paths");
            if (!list) return fail(list.error());
            std::size_t i = 0;
            for (auto e : *list) {
                auto u = path(e, index("unixSockets.paths", i++));
                if (!u) return fail(u.error());
                p.unix_socket_paths.push_back(std::move(*u));
            }
            // Linux's filter cannot tell them apart: any of them opens every one.
            if ((p.all_unix_sockets || !p.unix_socket_paths.empty()) && !p.allow_unix_sockets)
                return error("seccomp.allowUnixSockets", "false, though unixSockets opens some");
        }
        if (auto r = read_network(top->at("network"), p); !r) return fail(r.error());
        if (top->has("ignoreViolations")) {
            auto list = array(top->at("ignoreViolations"), "ignoreViolations");
            if (!list) return fail(list.error());
            std::size_t i = 0;
            for (auto e : *list) {
                auto v = string(e, index("ignoreViolations", i++));
                if (!v) return fail(v.error());
                if (v->empty()) return error(index("ignoreViolations", i - 1), "an empty substring would ignore everything");
                p.ignore_violations.push_back(std::move(*v));
            }
        }
        if (top->has("scanStderr")) {
            auto scan = boolean(top->at("scanStderr"), "scanStderr");
            if (!scan) return fail(scan.error());
            p.scan_stderr = *scan;
        }
        if (top->has("hints")) {
            auto h = members(top->at("hints"), "hints", {"hosts", "local", "call", "write", "read"},
                             {"hosts", "local", "call", "write", "read"});
            if (!h) return fail(h.error());
            for (auto [name, out] : {std::pair{"hosts", &p.hints.hosts}, std::pair{"local", &p.hints.local},
                                     std::pair{"call", &p.hints.call}, std::pair{"write", &p.hints.write},
                                     std::pair{"read", &p.hints.read}}) {
                auto v = string(h->at(name), std::string("hints.") + name);
                if (!v) return fail(v.error());
                // One line each: the launcher puts it in a line of the block.
                if (v->find_first_of("\n\r") != std::string::npos)
                    return error(std::string("hints.") + name, "a line break is not allowed");
                *out = std::move(*v);
            }
        }
        if (auto r = read_filesystem(top->at("filesystem"), p); !r) return fail(r.error());
        if (top->has("warnings")) {
            if (auto r = read_warnings(top->at("warnings"), p); !r) return fail(r.error());
        }
        return p;
    }

private:
    // An object's members by key, each checked against `known` and `required`.
    struct Members {
        std::vector<std::pair<std::string_view, element>> list;
        bool has(std::string_view k) const {
            return std::any_of(list.begin(), list.end(), [&](const auto& m) { return m.first == k; });
        }
        element at(std::string_view k) const {
            for (const auto& m : list)
                if (m.first == k) return m.second;
            return {};
        }
    };

    static tl::unexpected<Error> error(std::string key, std::string message) {
        return fail(Error(Errc::invalid_plan, std::move(message)).at_key(std::move(key)));
    }
    static std::string join(std::string_view parent, std::string_view key) {
        return parent.empty() ? std::string(key) : std::string(parent) + "." + std::string(key);
    }
    static std::string index(std::string_view parent, std::size_t i) {
        return std::string(parent) + "[" + std::to_string(i) + "]";
    }
    static tl::unexpected<Error> type_error(const std::string& key, std::string_view want, element got) {
        return error(key, "expected " + std::string(want) + ", got " + std::string(json::type_name(got.type())));
    }

    static expected<Members> members(element v, std::string_view key, std::initializer_list<std::string_view> known,
                                     std::initializer_list<std::string_view> required) {
        if (v.type() != element_type::OBJECT) return type_error(std::string(key), "an object", v);
        Members m;
        for (auto field : simdjson::dom::object(v)) {
            const std::string k = join(key, field.key);
            if (m.has(field.key)) return error(k, "the key appears twice");
            if (std::find(known.begin(), known.end(), field.key) == known.end()) return error(k, "unknown key");
            m.list.emplace_back(field.key, field.value);
        }
        for (auto r : required)
            if (!m.has(r)) return error(join(key, r), "missing");
        return m;
    }
    static expected<std::string> string(element v, const std::string& key) {
        std::string_view s;
        if (v.get(s) != simdjson::SUCCESS) return type_error(key, "a string", v);
        if (s.find('\0') != std::string_view::npos) return error(key, "a NUL character is not allowed");
        return std::string(s);
    }
    static expected<std::string> path(element v, const std::string& key) {
        auto s = string(v, key);
        if (!s) return s;
        if (!paths::is_absolute(*s) || paths::normalize(*s) != *s)
            return error(key, "'" + *s + "' is not an absolute, normalised path");
        return s;
    }
    static expected<bool> boolean(element v, const std::string& key) {
        bool b = false;
        if (v.get(b) != simdjson::SUCCESS) return type_error(key, "true or false", v);
        return b;
    }
    static expected<std::uint64_t> integer(element v, const std::string& key) {
        std::uint64_t n = 0;
        if (v.type() != element_type::UINT64 && v.type() != element_type::INT64) return type_error(key, "an integer", v);
        if (v.get(n) != simdjson::SUCCESS) return error(key, "expected an integer from 0 to 2^64-1");
        return n;
    }
    static expected<simdjson::dom::array> array(element v, const std::string& key) {
        if (v.type() != element_type::ARRAY) return type_error(key, "an array", v);
        return simdjson::dom::array(v);
    }

    static expected<net::UnknownHost> unknown_host(element v, const std::string& key) {
        auto s = string(v, key);
        if (!s) return fail(s.error());
        if (*s == "deny") return net::UnknownHost::deny;
        if (*s == "allow") return net::UnknownHost::allow;
        if (*s == "ask") return net::UnknownHost::ask;
        return error(key, "unknown value '" + *s + "'; expected deny, allow or ask");
    }

    static expected<std::vector<net::HostRule>> host_rules(element v, const std::string& key, std::string_view list) {
        auto arr = array(v, key);
        if (!arr) return fail(arr.error());
        std::vector<net::HostRule> out;
        std::size_t i = 0;
        for (auto e : *arr) {
            const std::string k = index(key, i++);
            auto m = members(e, k, {"pattern", "source"}, {"pattern"});
            if (!m) return fail(m.error());
            auto text = string(m->at("pattern"), k + ".pattern");
            if (!text) return fail(text.error());
            auto pattern = net::parse_host_pattern(*text);
            if (!pattern) return error(k + ".pattern", pattern.error().message);
            net::HostRule r{std::move(*pattern), std::move(*text), std::string(list), std::nullopt};
            if (m->has("source") && m->at("source").type() != element_type::NULL_VALUE) {
                auto sm = members(m->at("source"), k + ".source", {"layer", "file", "key"}, {"layer", "file", "key"});
                if (!sm) return fail(sm.error());
                auto layer = string(sm->at("layer"), k + ".source.layer");
                if (!layer) return fail(layer.error());
                std::optional<LayerKind> kind;
                for (auto lk : {LayerKind::builtin, LayerKind::user, LayerKind::project, LayerKind::local, LayerKind::flag,
                                LayerKind::managed})
                    if (layer_name(lk) == *layer) kind = lk;
                if (!kind) return error(k + ".source.layer", "unknown layer '" + *layer + "'");
                auto file = string(sm->at("file"), k + ".source.file");
                if (!file) return fail(file.error());
                auto skey = string(sm->at("key"), k + ".source.key");
                if (!skey) return fail(skey.error());
                r.source = Source{*kind, FileName(std::move(*file)), std::move(*skey)};
            }
            out.push_back(std::move(r));
        }
        return out;
    }

    static expected<void> read_network(element v, Plan& p) {
        auto first = members(v, "network",
                             {"mode", "allowed", "denied", "strict", "strictWhy", "local", "localWhy", "onUnknownHost",
                              "callHosts", "callOnUnknownHost", "forwards"},
                             {"mode"});
        if (!first) return fail(first.error());
        auto mode = string(first->at("mode"), "network.mode");
        if (!mode) return fail(mode.error());
        if (*mode == "none") {
            if (first->list.size() != 1) return error("network", "mode none takes no other key");
            p.network = NetworkPlan{};
            p.network.mode = NetworkMode::none;
            return {};
        }
        if (*mode != "proxy") return error("network.mode", "unknown network mode '" + *mode + "'; expected none or proxy");
        auto m = members(v, "network",
                         {"mode", "allowed", "denied", "strict", "strictWhy", "local", "localWhy", "onUnknownHost",
                          "callHosts", "callOnUnknownHost", "forwards"},
                         {"mode", "allowed", "denied", "strict"});
        if (!m) return fail(m.error());
        NetworkPlan n;
        n.mode = NetworkMode::proxy;
        auto allowed = host_rules(m->at("allowed"), "network.allowed", "network.allowedDomains");
        if (!allowed) return fail(allowed.error());
        n.rules.allowed = std::move(*allowed);
        auto denied = host_rules(m->at("denied"), "network.denied", "network.deniedDomains");
        if (!denied) return fail(denied.error());
        n.rules.denied = std::move(*denied);
        auto strict = boolean(m->at("strict"), "network.strict");
        if (!strict) return fail(strict.error());
        n.rules.strict = *strict;
        if (m->has("strictWhy")) {
            auto why = string(m->at("strictWhy"), "network.strictWhy");
            if (!why) return fail(why.error());
            n.strict_why = std::move(*why);
        }
        if (m->has("local")) {
            auto local = boolean(m->at("local"), "network.local");
            if (!local) return fail(local.error());
            n.rules.local = *local;
        }
        if (m->has("localWhy")) {
            auto why = string(m->at("localWhy"), "network.localWhy");
            if (!why) return fail(why.error());
            n.local_why = std::move(*why);
        }
        if (m->has("onUnknownHost")) {
            auto u = unknown_host(m->at("onUnknownHost"), "network.onUnknownHost");
            if (!u) return fail(u.error());
            n.rules.on_unknown = *u;
        }
        if (m->has("callHosts")) {
            auto hosts = host_rules(m->at("callHosts"), "network.callHosts", "the call's hosts");
            if (!hosts) return fail(hosts.error());
            n.call.hosts = std::move(*hosts);
        }
        if (m->has("callOnUnknownHost")) {
            auto u = unknown_host(m->at("callOnUnknownHost"), "network.callOnUnknownHost");
            if (!u) return fail(u.error());
            n.call.on_unknown = *u;
        }
        if (m->has("forwards")) {
            auto forwards = read_forwards(m->at("forwards"));
            if (!forwards) return fail(forwards.error());
            n.forwards = std::move(*forwards);
        }
        p.network = std::move(n);
        return {};
    }

    static expected<std::uint16_t> port_number(element v, const std::string& key) {
        auto n = integer(v, key);
        if (!n) return fail(n.error());
        if (*n == 0 || *n > 65535) return error(key, "a port is from 1 to 65535");
        return static_cast<std::uint16_t>(*n);
    }

    // network.forwards: each listens on a loopback address in canonical text
    // (127.0.0.1, ::1; no brackets), once per address and port, and leads to a
    // loopback address or `localhost`, which the proxy decides per connection.
    static expected<std::vector<net::Forward>> read_forwards(element v) {
        auto list = array(v, "network.forwards");
        if (!list) return fail(list.error());
        std::vector<net::Forward> out;
        std::size_t i = 0;
        for (auto e : *list) {
            const std::string k = index("network.forwards", i++);
            auto fm = members(e, k, {"listen", "port", "target", "targetPort", "why"}, {"listen", "port", "target", "targetPort"});
            if (!fm) return fail(fm.error());
            net::Forward f;
            auto listen = string(fm->at("listen"), k + ".listen");
            if (!listen) return fail(listen.error());
            auto address = net::parse_ipv4_dotted(*listen);
            if (!address && listen->find(':') != std::string::npos) address = net::parse_ipv6(*listen);
            if (!address || net::to_string(*address) != *listen)
                return error(k + ".listen", "'" + *listen + "' is not an address in canonical text (127.0.0.1, ::1)");
            if (!net::forward_address(*address) || net::is_v4_mapped(*address))
                return error(k + ".listen", "'" + *listen + "' is not a loopback address: a forward listens on the sandbox's loopback");
            f.listen = *address;
            auto port = port_number(fm->at("port"), k + ".port");
            if (!port) return fail(port.error());
            f.port = *port;
            auto target = string(fm->at("target"), k + ".target");
            if (!target) return fail(target.error());
            auto target_port = port_number(fm->at("targetPort"), k + ".targetPort");
            if (!target_port) return fail(target_port.error());
            f.target_port = *target_port;
            auto t = net::canonical_target(*target, f.target_port);
            const bool loopback = t && (t->address ? net::forward_address(*t->address) : t->host == "localhost");
            if (!t || t->host != *target || !loopback)
                return error(k + ".target", "'" + *target + "' is not a loopback address in canonical text nor localhost");
            f.target = std::move(*target);
            if (fm->has("why")) {
                auto w = string(fm->at("why"), k + ".why");
                if (!w) return fail(w.error());
                f.why = std::move(*w);
            }
            const bool twice = std::any_of(out.begin(), out.end(),
                                           [&](const net::Forward& o) { return o.listen == f.listen && o.port == f.port; });
            if (twice) return error(k, "a second forward listens on " + net::address_port_text(f.listen, f.port));
            out.push_back(std::move(f));
        }
        if (out.size() > net::kMaxForwards)
            return error("network.forwards", "more than " + std::to_string(net::kMaxForwards) + " forwards");
        return out;
    }

    static expected<void> read_env(element v, const std::string& key, std::vector<EnvVar>& out, bool loader) {
        if (v.type() != element_type::OBJECT) return type_error(key, "an object", v);
        std::set<std::string_view> seen;
        for (auto field : simdjson::dom::object(v)) {
            const std::string k = key + "." + std::string(field.key);
            if (!valid_env_name(field.key)) return error(k, "not a variable name");
            if (!seen.insert(field.key).second) return error(k, "the key appears twice");
            if (is_loader_variable(field.key) != loader)
                return error(k, loader ? "only LD_* and GCONV_PATH belong in loaderEnv"
                                       : "a loader variable belongs in loaderEnv, which bubblewrap never sees");
            auto value = string(field.value, k);
            if (!value) return fail(value.error());
            out.push_back({std::string(field.key), std::move(*value)});
        }
        return {};
    }

    static expected<void> read_command(element v, Plan& p) {
        auto m = members(v, "command", {"argv", "cwd", "env", "loaderEnv", "envRemoved", "passFds"},
                         {"argv", "cwd", "env", "loaderEnv"});
        if (!m) return fail(m.error());
        auto argv = array(m->at("argv"), "command.argv");
        if (!argv) return fail(argv.error());
        std::size_t i = 0;
        for (auto a : *argv) {
            auto s = string(a, index("command.argv", i++));
            if (!s) return fail(s.error());
            p.argv.push_back(std::move(*s));
        }
        if (p.argv.empty()) return error("command.argv", "no command: the array is empty");
        if (p.argv.front().empty()) return error("command.argv[0]", "the command's name is empty");
        auto cwd = path(m->at("cwd"), "command.cwd");
        if (!cwd) return fail(cwd.error());
        p.cwd = std::move(*cwd);
        if (auto r = read_env(m->at("env"), "command.env", p.env, false); !r) return r;
        if (auto r = read_env(m->at("loaderEnv"), "command.loaderEnv", p.loader_env, true); !r) return r;
        if (m->has("envRemoved")) {
            auto removed = array(m->at("envRemoved"), "command.envRemoved");
            if (!removed) return fail(removed.error());
            i = 0;
            for (auto r : *removed) {
                const std::string k = index("command.envRemoved", i++);
                auto rm = members(r, k, {"name", "why"}, {"name"});
                if (!rm) return fail(rm.error());
                RemovedEnvVar out;
                auto name = string(rm->at("name"), k + ".name");
                if (!name) return fail(name.error());
                out.name = std::move(*name);
                if (rm->has("why")) {
                    auto why = string(rm->at("why"), k + ".why");
                    if (!why) return fail(why.error());
                    out.why = std::move(*why);
                }
                p.env_removed.push_back(std::move(out));
            }
        }
        if (m->has("passFds")) {
            if (auto r = read_pass_fds(m->at("passFds"), p); !r) return r;
        }
        return {};
    }

    // command.passFds: ascending descriptors from kFirstPassFd to INT_MAX, no repeats.
    static expected<void> read_pass_fds(element v, Plan& p) {
        auto list = array(v, "command.passFds");
        if (!list) return fail(list.error());
        std::size_t i = 0;
        for (auto e : *list) {
            const std::string k = index("command.passFds", i++);
            const auto too_large = [&] {
                return error(k, "not a descriptor: above " + std::to_string(std::numeric_limits<int>::max()));
            };
            if (e.type() == element_type::UINT64) return too_large();  // above 2^63-1
            std::int64_t fd = 0;
            if (e.type() != element_type::INT64 || e.get(fd) != simdjson::SUCCESS) return type_error(k, "an integer", e);
            if (fd < kFirstPassFd)
                return error(k, "descriptor " + std::to_string(fd) + ": 0, 1 and 2 always reach the command; list only 3 and above");
            if (fd > std::numeric_limits<int>::max()) return too_large();
            if (!p.pass_fds.empty() && fd <= p.pass_fds.back())
                return error(k, "descriptor " + std::to_string(fd) + " after " + std::to_string(p.pass_fds.back()) +
                                    ": the list is ascending, without repeats");
            p.pass_fds.push_back(static_cast<int>(fd));
        }
        return {};
    }

    static expected<Identity> identity(element v, const std::string& key) {
        auto first = members(v, key, {"exists", "type", "dev", "ino", "nlink"}, {"exists"});
        if (!first) return fail(first.error());
        auto exists = boolean(first->at("exists"), key + ".exists");
        if (!exists) return fail(exists.error());
        Identity id;
        if (!*exists) {
            if (first->list.size() != 1) return error(key, "an identity that does not exist has no other keys");
            return id;
        }
        auto m = members(v, key, {"exists", "type", "dev", "ino", "nlink"}, {"exists", "type", "dev", "ino", "nlink"});
        if (!m) return fail(m.error());
        id.exists = true;
        auto type = string(m->at("type"), key + ".type");
        if (!type) return fail(type.error());
        if (*type == "directory") id.type = FileType::directory;
        else if (*type == "file") id.type = FileType::regular;
        else if (*type == "symlink") id.type = FileType::symlink;
        else if (*type == "other") id.type = FileType::other;
        else return error(key + ".type", "unknown type '" + *type + "'; expected directory, file, symlink or other");
        for (auto [name, out] : {std::pair{"dev", &id.dev}, std::pair{"ino", &id.ino}, std::pair{"nlink", &id.nlink}}) {
            auto n = integer(m->at(name), key + "." + name);
            if (!n) return fail(n.error());
            *out = *n;
        }
        return id;
    }

    static expected<std::string> why(const Members& m, const std::string& key) {
        if (!m.has("why")) return std::string();
        return string(m.at("why"), key + ".why");
    }

    static expected<void> read_filesystem(element v, Plan& p) {
        auto m = members(v, "filesystem",
                         {"isolated", "mounts", "placeholders", "gitExclude", "gitAudit", "toolCache", "rules"},
                         {"isolated", "mounts", "placeholders"});
        if (!m) return fail(m.error());
        auto isolated = boolean(m->at("isolated"), "filesystem.isolated");
        if (!isolated) return fail(isolated.error());
        p.filesystem.isolated = *isolated;

        auto mounts = array(m->at("mounts"), "filesystem.mounts");
        if (!mounts) return fail(mounts.error());
        std::size_t i = 0;
        for (auto e : *mounts) {
            const std::string k = index("filesystem.mounts", i++);
            auto mm = members(e, k, {"kind", "path", "source", "expect", "why"}, {"kind", "path", "expect"});
            if (!mm) return fail(mm.error());
            Mount mount;
            auto kind = string(mm->at("kind"), k + ".kind");
            if (!kind) return fail(kind.error());
            static constexpr MountKind kinds[] = {MountKind::bind, MountKind::ro_bind, MountKind::pin, MountKind::mask_dir,
                                                  MountKind::mask_file};
            auto found = std::find_if(std::begin(kinds), std::end(kinds), [&](MountKind mk) { return mount_kind_name(mk) == *kind; });
            if (found == std::end(kinds))
                return error(k + ".kind", "unknown kind '" + *kind + "'; expected bind, ro-bind, pin, mask-dir or mask-file");
            mount.kind = *found;
            auto where = path(mm->at("path"), k + ".path");
            if (!where) return fail(where.error());
            mount.path = std::move(*where);
            const bool binds = mount.kind == MountKind::bind || mount.kind == MountKind::ro_bind;
            if (binds != mm->has("source"))
                return error(k + ".source", binds ? "missing" : "only bind and ro-bind have a source");
            if (binds) {
                auto src = path(mm->at("source"), k + ".source");
                if (!src) return fail(src.error());
                mount.source = std::move(*src);
            }
            if (mount.path == "/") return error(k + ".path", "a mount over / would replace the read-only view of it");
            if (mount.kind != MountKind::mask_dir && mount.kind != MountKind::mask_file) {
                const bool writable = mount.kind != MountKind::ro_bind;
                const auto* ki = kernel_interface(mount.path, writable);
                if (ki == nullptr && binds) ki = kernel_interface(mount.source, writable);
                if (ki != nullptr)
                    return error(k + ".path", "binds a kernel interface from the host: " + std::string(ki->reason));
            }
            auto expect = identity(mm->at("expect"), k + ".expect");
            if (!expect) return fail(expect.error());
            mount.expect = *expect;
            if ((mount.kind == MountKind::pin || mount.kind == MountKind::mask_dir) &&
                (!mount.expect.exists || mount.expect.type != FileType::directory))
                return error(k + ".expect", "a " + *kind + " is of an existing directory");
            if (mount.kind == MountKind::mask_file && (!mount.expect.exists || mount.expect.type == FileType::directory))
                return error(k + ".expect", "a mask-file is of an existing path that is not a directory");
            auto w = why(*mm, k);
            if (!w) return fail(w.error());
            mount.why = std::move(*w);
            p.filesystem.mounts.push_back(std::move(mount));
        }

        auto placeholders = array(m->at("placeholders"), "filesystem.placeholders");
        if (!placeholders) return fail(placeholders.error());
        i = 0;
        for (auto e : *placeholders) {
            const std::string k = index("filesystem.placeholders", i++);
            auto pm = members(e, k, {"path", "kind", "parent", "why"}, {"path", "kind", "parent"});
            if (!pm) return fail(pm.error());
            PlaceholderOp ph;
            auto where = path(pm->at("path"), k + ".path");
            if (!where) return fail(where.error());
            ph.path = std::move(*where);
            if (ph.path == "/") return error(k + ".path", "/ cannot be a placeholder");
            auto kind = string(pm->at("kind"), k + ".kind");
            if (!kind) return fail(kind.error());
            if (*kind == "file") ph.kind = Placeholder::file;
            else if (*kind == "directory") ph.kind = Placeholder::directory;
            else if (*kind == "commondir") ph.kind = Placeholder::commondir;
            else return error(k + ".kind", "unknown kind '" + *kind + "'; expected file, directory or commondir");
            // Its content is its directory's path, which git reads up to a line end.
            if (ph.kind == Placeholder::commondir &&
                (!ph.path.ends_with("/commondir") || paths::parent(ph.path).find_first_of("\r\n") != std::string::npos))
                return error(k + ".path", "a commondir placeholder is a file named commondir, in a directory whose path has no line end");
            auto parent = identity(pm->at("parent"), k + ".parent");
            if (!parent) return fail(parent.error());
            if (!parent->exists || parent->type != FileType::directory)
                return error(k + ".parent", "a placeholder goes in an existing directory");
            ph.parent = *parent;
            auto w = why(*pm, k);
            if (!w) return fail(w.error());
            ph.why = std::move(*w);
            // The launcher creates it and removes it after: it must not be inside
            // the temporary directory it removes, nor be the root itself.
            if (paths::at_or_under(ph.path, p.tmpdir) || ph.path == p.root)
                return error(k + ".path", "a placeholder may not be the root or inside the temporary directory");
            p.filesystem.placeholders.push_back(std::move(ph));
        }

        if (m->has("gitExclude")) {
            auto em = members(m->at("gitExclude"), "filesystem.gitExclude", {"path", "expect", "content"},
                              {"path", "expect", "content"});
            if (!em) return fail(em.error());
            GitExclude ex;
            auto where = path(em->at("path"), "filesystem.gitExclude.path");
            if (!where) return fail(where.error());
            ex.path = std::move(*where);
            if (!paths::at_or_under(ex.path, p.root) || ex.path == p.root)
                return error("filesystem.gitExclude.path", "'" + ex.path + "' is not inside the root");
            auto expect = identity(em->at("expect"), "filesystem.gitExclude.expect");
            if (!expect) return fail(expect.error());
            if (!expect->exists || expect->type != FileType::regular)
                return error("filesystem.gitExclude.expect", "the exclude file is an existing regular file");
            ex.expect = *expect;
            auto content = string(em->at("content"), "filesystem.gitExclude.content");
            if (!content) return fail(content.error());
            if (content->size() > (std::size_t{1} << 20))
                return error("filesystem.gitExclude.content", "more than 1 MiB");
            ex.content = std::move(*content);
            p.filesystem.git_exclude = std::move(ex);
        }

        if (m->has("gitAudit")) {
            auto dirs = array(m->at("gitAudit"), "filesystem.gitAudit");
            if (!dirs) return fail(dirs.error());
            i = 0;
            for (auto e : *dirs) {
                const std::string k = index("filesystem.gitAudit", i++);
                auto where = path(e, k);
                if (!where) return fail(where.error());
                // The launcher renames files in it after the command: only where the
                // command could write, a writable bind of this plan or inside one.
                const bool writable = std::any_of(p.filesystem.mounts.begin(), p.filesystem.mounts.end(), [&](const Mount& mt) {
                    return mt.kind == MountKind::bind && paths::at_or_under(*where, mt.path);
                });
                if (!writable) return error(k, "'" + *where + "' is not a writable bind of this plan, nor inside one");
                if (*where == "/") return error(k, "/ cannot be audited");
                if (std::find(p.filesystem.git_audit.begin(), p.filesystem.git_audit.end(), *where) !=
                    p.filesystem.git_audit.end())
                    return error(k, "'" + *where + "' is listed twice");
                p.filesystem.git_audit.push_back(std::move(*where));
            }
        }

        if (m->has("rules")) {
            auto rules = array(m->at("rules"), "filesystem.rules");
            if (!rules) return fail(rules.error());
            i = 0;
            for (auto e : *rules) {
                const std::string k = index("filesystem.rules", i++);
                auto rm = members(e, k, {"kind", "pattern", "why", "credentialStore"}, {"kind", "pattern"});
                if (!rm) return fail(rm.error());
                PlanRule r;
                auto kind = string(rm->at("kind"), k + ".kind");
                if (!kind) return fail(kind.error());
                static constexpr FsRule::Kind kinds[] = {FsRule::Kind::deny_read, FsRule::Kind::allow_read,
                                                         FsRule::Kind::writable, FsRule::Kind::deny_write,
                                                         FsRule::Kind::protect};
                auto found = std::find_if(std::begin(kinds), std::end(kinds),
                                          [&](FsRule::Kind fk) { return plan_rule_kind_name(fk) == *kind; });
                if (found == std::end(kinds))
                    return error(k + ".kind", "unknown kind '" + *kind +
                                                  "'; expected deny-read, allow-read, writable, deny-write or protect");
                r.kind = *found;
                auto pattern = path(rm->at("pattern"), k + ".pattern");
                if (!pattern) return fail(pattern.error());
                r.pattern = std::move(*pattern);
                auto w = why(*rm, k);
                if (!w) return fail(w.error());
                r.why = std::move(*w);
                if (rm->has("credentialStore")) {
                    auto store = boolean(rm->at("credentialStore"), k + ".credentialStore");
                    if (!store) return fail(store.error());
                    if (r.kind != FsRule::Kind::deny_read)
                        return error(k + ".credentialStore", "only a deny-read rule can be a credential store");
                    if (*store) r.deny = FsRule::Deny::credential_store;
                }
                p.rules.push_back(std::move(r));
            }
        }

        if (m->has("toolCache") && m->at("toolCache").type() != element_type::NULL_VALUE) {
            if (auto r = read_tool_cache(m->at("toolCache"), p); !r) return r;
        }

        // Only the launcher's own creations may be missing when the plan is made:
        // anything else would have bubblewrap make a mount point on the host.
        std::set<std::string_view> placeholder_paths, read_only;
        for (std::size_t j = 0; j < p.filesystem.placeholders.size(); ++j)
            if (!placeholder_paths.insert(p.filesystem.placeholders[j].path).second)
                return error(index("filesystem.placeholders", j) + ".path", "a second placeholder at this path");
        // Shallow before deep: a mount after one inside it would undo it, since
        // bubblewrap binds from the host's tree (see "The order of the mounts").
        std::set<std::string_view> earlier;
        for (std::size_t j = 0; j < p.filesystem.mounts.size(); ++j) {
            const auto& mt = p.filesystem.mounts[j];
            const std::string under = mt.path + "/";
            if (auto it = earlier.lower_bound(under); it != earlier.end() && it->starts_with(under))
                return error(index("filesystem.mounts", j) + ".path",
                             "comes after a mount inside it (" + std::string(*it) + "), which it would undo");
            earlier.insert(mt.path);
            if (mt.kind == MountKind::ro_bind && mt.source == mt.path) read_only.insert(mt.path);
            if (mt.expect.exists) continue;
            const bool made = mt.path == p.tmpdir || placeholder_paths.count(mt.path) != 0 ||
                              (p.tool_cache && mt.kind == MountKind::bind && mt.path == p.tool_cache->path);
            if (!made || mt.source != mt.path)
                return error(index("filesystem.mounts", j) + ".expect",
                             "only the temporary directory, the tool cache and placeholders may be missing when the "
                             "plan is made");
        }
        for (std::size_t j = 0; j < p.filesystem.placeholders.size(); ++j)
            if (read_only.count(p.filesystem.placeholders[j].path) == 0)
                return error(index("filesystem.placeholders", j) + ".path",
                             "no ro-bind of this path: the command could write the placeholder");
        return {};
    }

    // filesystem.toolCache: where the launcher makes a directory and leaves it,
    // so it must be a writable bind of the plan, outside the root and the
    // temporary directory; every variable it names points into it.
    static expected<void> read_tool_cache(element v, Plan& p) {
        auto tm = members(v, "filesystem.toolCache", {"path", "set", "kept"}, {"path", "set", "kept"});
        if (!tm) return fail(tm.error());
        ToolCachePlan tc;
        auto where = path(tm->at("path"), "filesystem.toolCache.path");
        if (!where) return fail(where.error());
        tc.path = std::move(*where);
        if (paths::at_or_under(tc.path, p.root) || paths::at_or_under(p.root, tc.path))
            return error("filesystem.toolCache.path", "the tool cache and the root may not hold each other");
        if (paths::at_or_under(tc.path, p.tmpdir) || paths::at_or_under(p.tmpdir, tc.path))
            return error("filesystem.toolCache.path", "the tool cache and the temporary directory may not hold each other");
        const bool bound = std::any_of(p.filesystem.mounts.begin(), p.filesystem.mounts.end(), [&](const Mount& mt) {
            return mt.kind == MountKind::bind && mt.path == tc.path && mt.source == tc.path;
        });
        if (!bound) return error("filesystem.toolCache.path", "'" + tc.path + "' is not a writable bind of this plan");
        auto set = array(tm->at("set"), "filesystem.toolCache.set");
        if (!set) return fail(set.error());
        std::size_t i = 0;
        for (auto e : *set) {
            const std::string k = index("filesystem.toolCache.set", i++);
            auto name = string(e, k);
            if (!name) return fail(name.error());
            const auto it = std::find_if(p.env.begin(), p.env.end(), [&](const EnvVar& ev) { return ev.name == *name; });
            if (it == p.env.end() || !paths::is_absolute(it->value) || !paths::at_or_under(paths::normalize(it->value), tc.path))
                return error(k, "command.env has no " + *name + " inside the tool cache");
            tc.set.push_back(std::move(*name));
        }
        auto kept = array(tm->at("kept"), "filesystem.toolCache.kept");
        if (!kept) return fail(kept.error());
        i = 0;
        for (auto e : *kept) {
            const std::string k = index("filesystem.toolCache.kept", i++);
            auto km = members(e, k, {"name", "why"}, {"name"});
            if (!km) return fail(km.error());
            KeptEnvVar kv;
            auto name = string(km->at("name"), k + ".name");
            if (!name) return fail(name.error());
            kv.name = std::move(*name);
            auto w = why(*km, k);
            if (!w) return fail(w.error());
            kv.why = std::move(*w);
            tc.kept.push_back(std::move(kv));
        }
        p.tool_cache = std::move(tc);
        return {};
    }

    static expected<void> read_warnings(element v, Plan& p) {
        auto list = array(v, "warnings");
        if (!list) return fail(list.error());
        std::size_t i = 0;
        for (auto e : *list) {
            const std::string k = index("warnings", i++);
            auto wm = members(e, k, {"file", "key", "message", "platform"}, {"message"});
            if (!wm) return fail(wm.error());
            Warning w;
            for (auto [name, out] : {std::pair{"file", &w.file}, std::pair{"key", &w.key}, std::pair{"message", &w.message}}) {
                if (!wm->has(name)) continue;
                auto s = string(wm->at(name), k + "." + name);
                if (!s) return fail(s.error());
                *out = std::move(*s);
            }
            // Absent in plans made before it, and in warnings for every launcher.
            if (wm->has("platform")) {
                auto s = string(wm->at("platform"), k + ".platform");
                if (!s) return fail(s.error());
                if (*s != "linux") return error(k + ".platform", "expected \"linux\" (or no platform key)");
                w.scope = WarningScope::linux_only;
            }
            p.warnings.push_back(std::move(w));
        }
        return {};
    }
};

}  // namespace detail

namespace detail {

inline std::string describe_identity(const Identity& id) {
    if (!id.exists) return "nothing";
    std::string_view type = id.type == FileType::directory ? "a directory"
                            : id.type == FileType::regular ? "a file"
                            : id.type == FileType::symlink ? "a symlink"
                                                           : "a special file";
    return std::string(type) + " (device " + std::to_string(id.dev) + ", inode " + std::to_string(id.ino) + ", " +
           std::to_string(id.nlink) + " links)";
}

// Whether the disk shows what the plan expects. A directory's link count is no
// part of its identity: it changes whenever a folder is made or removed in it
// (another sandbox of the root making its placeholders, a build making a
// folder). A file's is: a new hard link is a new name to read it through.
inline bool same_identity(const Identity& got, const Identity& want) {
    if (got.exists != want.exists) return false;
    if (!got.exists) return true;
    return got.type == want.type && got.dev == want.dev && got.ino == want.ino &&
           (got.type == FileType::directory || got.nlink == want.nlink);
}

}  // namespace detail

// Whether the disk still looks as it did when the plan was made: every mount's
// source (binds) or path (pins, masks), every placeholder's parent, and nothing
// at the placeholders and the temporary directory.
// Fails with STALE_PLAN naming the first path that differs.
inline expected<void> verify_plan(const Plan& p, const FsView& fs) {
    auto check = [&](const std::string& path, const Identity& want, std::string_view what) -> expected<void> {
        auto st = fs.lstat(path);
        if (!st)
            return fail(Error(Errc::stale_plan, "cannot look at " + std::string(what)).in_file(path).caused_by(st.error()));
        const Identity got = detail::identity_of(*st);
        if (detail::same_identity(got, want)) return {};
        return fail(Error(Errc::stale_plan, std::string(what) + " changed since the plan was made: it was " +
                                                detail::describe_identity(want) + ", it is " +
                                                detail::describe_identity(got) + "; make the plan again")
                        .in_file(path));
    };
    if (auto r = check(p.tmpdir, Identity{}, "the temporary directory"); !r) return r;
    for (const auto& m : p.filesystem.mounts) {
        const bool binds = m.kind == MountKind::bind || m.kind == MountKind::ro_bind;
        // The temporary directory and the placeholders are made by the launcher.
        if (binds && !m.expect.exists) continue;
        if (auto r = check(binds ? m.source : m.path, m.expect, "a mounted path"); !r) return r;
    }
    for (const auto& ph : p.filesystem.placeholders) {
        if (auto r = check(paths::parent(ph.path), ph.parent, "a placeholder's directory"); !r) return r;
        if (auto r = check(ph.path, Identity{}, "a placeholder's path"); !r) return r;
    }
    if (const auto& ex = p.filesystem.git_exclude)
        if (auto c = check(ex->path, ex->expect, "the repository's exclude file"); !c) return c;
    return {};
}

// Reads a plan document (docs/plan.md) strictly. `origin` names where it came
// from in errors ("standard input", "fd 3"). Errors are INVALID_PLAN with the
// key path, or with the line and column of malformed JSON.
inline expected<Plan> parse_plan(std::string_view text, std::string origin) {
    auto doc = json::parse(text);
    if (!doc) {
        Error e = doc.error();
        e.code = Errc::invalid_plan;
        return fail(std::move(e).in_file(std::move(origin)));
    }
    auto plan = detail::PlanReader{}.read((*doc)->root());
    if (!plan) return fail(Error(plan.error()).in_file(std::move(origin)));
    return plan;
}

}  // namespace sbx
