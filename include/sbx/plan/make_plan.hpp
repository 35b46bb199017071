// sbx/plan/make_plan.hpp - a policy and a command compiled into the plan a launcher carries out.
//
// make_plan() checks the request, compiles the host rules and the loopback
// forwards, gathers the filesystem rules (command_fs_rules.hpp), picks the
// command's environment, plans the mounts and the repository's exclude file.
// Everything is decided here: the launcher only re-checks the identities the
// plan recorded (verify_plan.hpp) and carries it out.
#pragma once

#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/net/forwards.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/plan/command_fs_rules.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/plan/git_exclude.hpp"
#include "sbx/plan/plan.hpp"
#include "sbx/plan/report.hpp"
#include "sbx/rules/env.hpp"
#include "sbx/rules/fs_rules.hpp"
#include "sbx/rules/network.hpp"
#include "sbx/settings/policy.hpp"

namespace sbx {

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
    // Hosts the call lists for itself, each parsed by the caller once
    // (net::call_host_rule; sbx: --allow-host, in tools/sbx/compose.cpp);
    // nullopt: none, the settings' lists decide.
    std::optional<std::vector<net::HostRule>> call_hosts;
    std::vector<net::HostAnswer> answers{};  // held for the session (network.answers)
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
    // sbx's own programs, as the caller found them (absolute, normalised): the
    // program that makes the plan, the launcher and the stage that carry it out,
    // each under the name used and, when a symlink leads elsewhere, where it leads.
    // Those a command could write, and their folders, become protected paths
    // (own_programs.hpp); empty: none are known.
    std::vector<std::string> own_programs = {};
    // The folder the record of the repositories the audit finds in the root lies
    // under (git_record.hpp: BASE/sbx/git/NAME, BASE as for tool_cache_base, which
    // `--no-tool-cache` does not change); nullopt: none is read or kept.
    std::optional<std::string> git_record_base = std::nullopt;
};

// The first of `homes` that `root` is or holds, or nullopt. A root that holds a
// home directory makes every dotfile in it writable (shell start-up files,
// ~/.local/bin, ~/.config/autostart, systemd user units, Python .pth files), and
// they run unconfined later; a caller refuses such a root unless asked for it in
// so many words (`sbx --allow-home-root`). make_plan does not decide it: it is not
// handed the account's home. All paths absolute and normalised; pass each home as
// its real path (and as written too, when a symlink leads there), as the root is.
SBX_INLINE std::optional<std::string> root_exposes_home(std::string_view root, std::span<const std::string> homes);

namespace detail {

// A request that is whole: a command, absolute and normalised paths, a root that
// is not / and does not hold the temporary directory (nor it the root), and no
// descriptor below 3 to pass.
SBX_INLINE expected<void> check_request(const PlanRequest& req);

// The network part: Unix sockets, the host rules, and the loopback forwards.
SBX_INLINE expected<void> plan_network(const Policy& policy, const PlanRequest& req, Plan& plan);

// The command's environment, and the tool cache home its cache variables point
// into (`cache_dir`, none without one): a kept value outside it that the
// command cannot write gets a warning.
SBX_INLINE expected<void> plan_environment(const Policy& policy, const PlanRequest& req,
                                       const std::optional<std::string>& cache_dir, const FsRules& rules, Plan& plan);

// A repository the command makes or changes in the root is live for git outside
// once the command is over: the launcher audits the root then, and the git
// directories outside it that a linked worktree's git writes (Guard::git_writable),
// where the main repository's own git runs outside.
SBX_INLINE void plan_git_audit(const FsRules& rules, const std::optional<std::string>& git_record, Plan& plan);

}  // namespace detail

// The plan for running `req` under `policy`, the disk seen through `fs`.
// Errors: INVALID_ARGUMENT for a request that is not whole (no command, a path
// not absolute and normalised, the root /, a hidden working directory, a
// descriptor below 3), INVALID_SETTINGS for settings it cannot carry out (a
// relative bwrapPath, too many forwards), and what looking at the disk through
// `fs` fails with. Every warning goes into the plan.
SBX_INLINE expected<Plan> make_plan(const Policy& policy, const PlanRequest& req, const FsView& fs);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_PLAN)

namespace sbx {

SBX_INLINE std::optional<std::string> root_exposes_home(std::string_view root, std::span<const std::string> homes) {
    for (const auto& h : homes)
        if (paths::at_or_under(h, root)) return h;
    return std::nullopt;
}

}  // namespace sbx

namespace sbx::detail {

SBX_INLINE expected<void> check_request(const PlanRequest& req) {
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
    return {};
}

SBX_INLINE expected<void> plan_network(const Policy& policy, const PlanRequest& req, Plan& plan) {
    plan.all_unix_sockets = policy.network.allow_all_unix_sockets.value;
    for (const auto& s : policy.network.allow_unix_sockets) plan.unix_socket_paths.push_back(s.value);
    // Listed paths are decided one connection at a time (sbx/net/unix_socket.hpp);
    // every socket drops the filter's rules.
    plan.allow_unix_sockets = plan.all_unix_sockets;
    auto host_rules = net::compile_host_rules(policy);
    SBX_TRY(host_rules);
    plan.network.rules = std::move(*host_rules);
    plan.network.rules.on_unknown = req.on_unknown_host;
    if (plan.network.rules.strict_source)
        plan.network.strict_why = plan.network.rules.strict_source->file.str() + " " + plan.network.rules.strict_source->key;
    if (plan.network.rules.local_source)
        plan.network.local_why = plan.network.rules.local_source->file.str() + " " + plan.network.rules.local_source->key;
    plan.network.call.hosts = req.call_hosts;
    plan.network.call.answers = req.answers;
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
    return {};
}

SBX_INLINE expected<void> plan_environment(const Policy& policy, const PlanRequest& req,
                                       const std::optional<std::string>& cache_dir, const FsRules& rules, Plan& plan) {
    auto env = command_environment(policy, EnvRequest{req.environ, req.pass_env, req.tmpdir, cache_dir,
                                                      req.words == SettingsWords::agent_file
                                                          ? "list it under the agent file's env:"
                                                          : ""});
    SBX_TRY(env);
    plan.env = std::move(env->env);
    plan.loader_env = std::move(env->loader);
    plan.env_removed = std::move(env->removed);
    if (cache_dir) {
        for (const auto& k : env->cache_kept) {
            // A kept value the command cannot write to fails the tool as before.
            const auto it = std::find_if(plan.env.begin(), plan.env.end(), [&](const EnvVar& e) { return e.name == k.name; });
            if (it == plan.env.end()) continue;
            const bool absolute = paths::is_absolute(it->value);
            const auto d = absolute ? decide(rules, paths::normalize(it->value), Access::write) : FsDecision{};
            if (!absolute || !d.allowed)
                plan.warnings.push_back(Warning{"", k.name, "kept as you set it (" + it->value + "), outside the tool cache " +
                                                                "home; the command cannot write there" +
                                                                (absolute ? ": " + why(d) : std::string(" (not an absolute path)"))});
        }
        plan.tool_cache = ToolCachePlan{*cache_dir, std::move(env->cache_set), std::move(env->cache_kept)};
    }
    return {};
}

SBX_INLINE void plan_git_audit(const FsRules& rules, const std::optional<std::string>& git_record, Plan& plan) {
    if (plan.filesystem.isolated) {
        plan.filesystem.git_audit.push_back(plan.root);
        for (const auto& p : rules.protected_paths)
            if (p.guard == Guard::git_writable && !paths::at_or_under(p.path, plan.root) &&
                std::any_of(plan.filesystem.mounts.begin(), plan.filesystem.mounts.end(),
                            [&](const Mount& m) { return m.kind == MountKind::bind && m.path == p.path; }))
                plan.filesystem.git_audit.push_back(p.path);
        plan.filesystem.git_record = git_record;
    }
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE expected<Plan> make_plan(const Policy& policy, const PlanRequest& req, const FsView& fs) {
    SBX_TRY(detail::check_request(req));
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
    plan.weaker_sandbox = policy.weaker_sandbox.value;
    for (std::size_t i = 0; i < kLimitCount; ++i) {
        const auto& v = policy.limits[i];
        if (!v.value) continue;
        std::string set_by = "sbx's default";
        if (v.source)
            set_by = v.source->key + (v.source->file == kCommandLineFile ? std::string(" on the command line")
                                                                         : " in " + v.source->file);
        plan.limits[i] = PlanLimit{*v.value, std::move(set_by), limit_raise_advice(kLimits[i].which, v.source)};
    }
    plan.warnings = policy.warnings;
    if (policy.bwrap_path) {
        const auto& b = *policy.bwrap_path;
        if (!paths::is_absolute(b.value) || paths::normalize(b.value) != b.value)
            return fail(Error(Errc::invalid_settings, "bwrapPath must be an absolute, normalised path")
                            .in_file(b.source.file.str())
                            .at_key(b.source.key));
        plan.bwrap_path = b.value;
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
    SBX_TRY(detail::plan_network(policy, req, plan));
    CachedFs cached(fs);
    auto command_rules =
        command_fs_rules(policy, FsContext{req.root, req.tmpdir, req.home}, req.tool_cache_base, cached, req.own_programs,
                         req.git_record_base);
    SBX_TRY(command_rules);
    for (const auto* list : {&command_rules->protected_warnings, &command_rules->own_program_warnings,
                             &command_rules->tool_cache_warnings, &command_rules->git_record_warnings})
        plan.warnings.insert(plan.warnings.end(), list->begin(), list->end());
    const FsRules* const rules = &command_rules->rules;
    // The environment's cache variables point into the tool cache home.
    const std::optional<std::string>& cache_dir = command_rules->tool_cache;
    SBX_TRY(detail::plan_environment(policy, req, cache_dir, *rules, plan));
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
    SBX_TRY(fsplan);
    plan.warnings.insert(plan.warnings.end(), fsplan->warnings.begin(), fsplan->warnings.end());
    fsplan->warnings.clear();
    plan.filesystem = std::move(*fsplan);
    if (command_rules->git_exclude)
        plan.filesystem.git_exclude =
            detail::git_exclude_for(plan.root, *command_rules->git_exclude, plan.filesystem.placeholders, cached);
    detail::plan_git_audit(*rules, command_rules->git_record, plan);
    return plan;
}

}  // namespace sbx
#endif
