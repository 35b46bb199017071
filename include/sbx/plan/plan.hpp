// sbx/plan/plan.hpp - the plan a launcher carries out: its types, as docs/plan.md describes them.
//
// A Plan is everything decided for one command: its argv, environment and
// descriptors, the root and temporary directory, the network namespace and the
// host rules the proxy decides with, the mounts and placeholders, the file rules
// and the warnings. make_plan.hpp makes one; plan_json.hpp writes it as the
// versioned document a launcher reads, read_plan.hpp reads it back strictly, and
// verify_plan.hpp checks that the disk still looks as it did. A launcher decides
// nothing beyond it.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/inline.hpp"
#include "sbx/core/provenance.hpp"
#include "sbx/net/forwards.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/plan/report.hpp"
#include "sbx/rules/env.hpp"
#include "sbx/rules/fs_rules.hpp"
#include "sbx/settings/limits.hpp"

namespace sbx {

inline constexpr int kPlanVersion = 1;

// The lowest descriptor a plan can pass: 0, 1 and 2 always reach the command.
inline constexpr int kFirstPassFd = 3;

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

// A limit the command runs under (sbx/settings/limits.hpp), with what the
// launcher's line says when it is reached: where it was set, and how to raise it.
struct PlanLimit {
    std::uint64_t value = 0;  // in the key's unit (seconds, MiB, a count)
    std::string set_by;       // "sandbox.limits.processes in /home/ana/.claude/settings.json", "sbx's default"
    std::string raise;        // what raises it, for people
    bool operator==(const PlanLimit&) const = default;
};

// How to say `l` raised, where `by` set its value (nullopt: sbx's default).
SBX_INLINE std::string limit_raise_advice(Limit l, const std::optional<Source>& by);

// The violations block's line for the limit `l` of `pl` reached, `what` saying
// what happened: "limit timeoutSeconds 600s: WHAT (set by SET_BY; RAISE)".
SBX_INLINE std::string limit_line(Limit l, const PlanLimit& pl, std::string_view what);

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
    // The caller asked for the weaker sandbox (Landlock and seccomp, no
    // namespaces): a launcher that cannot build its usual sandbox runs that one
    // instead of refusing. The policy's weaker_sandbox (policy.hpp).
    bool weaker_sandbox = false;
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
    // "limits", by Limit; nullopt: none. The launchers hold the command to them.
    std::array<std::optional<PlanLimit>, kLimitCount> limits{};
};

// The line of the limit of `plan` a command that died of `signal` reached:
// cpuSeconds for SIGXCPU, fileSizeMiB for SIGXFSZ; empty for any other signal,
// or where the plan has no such limit.
SBX_INLINE std::string limit_signal_line(const Plan& plan, int signal);

// The line of the processes or memory limit of `plan` where the command said
// a fork or an allocation failed (`said`, the line sbx::limit_sign read);
// empty for another limit, where the plan has none, or where nothing was said.
SBX_INLINE std::string limit_said_line(const Plan& plan, Limit l, std::string_view said);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_PLAN)

namespace sbx {

SBX_INLINE std::string limit_line(Limit l, const PlanLimit& pl, std::string_view what) {
    const LimitSpec& spec = limit_spec(l);
    return "limit " + std::string(spec.key) + " " + std::to_string(pl.value) + std::string(spec.unit) + ": " +
           std::string(what) + " (set by " + pl.set_by + "; to raise it, " + pl.raise + ")";
}

SBX_INLINE std::string limit_said_line(const Plan& plan, Limit l, std::string_view said) {
    const auto& pl = plan.limits[static_cast<std::size_t>(l)];
    if (!pl || said.empty() || (l != Limit::processes && l != Limit::memory)) return {};
    return limit_line(l, *pl,
                      (l == Limit::processes ? "a process of the command could not start another, as at this limit (it said: "
                                             : "a process of the command could not get more memory (it said: ") +
                          std::string(said) + ")");
}

SBX_INLINE std::string limit_signal_line(const Plan& plan, int signal) {
    constexpr int kSigXcpu = 24, kSigXfsz = 25;  // Linux's numbers (signal.h is no engine header)
    const Limit l = signal == kSigXcpu ? Limit::cpu : Limit::file_size;
    const auto& pl = plan.limits[static_cast<std::size_t>(l)];
    if ((signal != kSigXcpu && signal != kSigXfsz) || !pl) return {};
    return limit_line(l, *pl, signal == kSigXcpu ? "the command used that much CPU time and was ended (SIGXCPU)"
                                                 : "the command wrote a file up to that size and was ended (SIGXFSZ)");
}

SBX_INLINE std::string limit_raise_advice(Limit l, const std::optional<Source>& by) {
    const std::string key(limit_spec(l).key);
    const std::string setting = "sandbox.limits." + key;
    const std::string option = std::string(kLimitOption) + " " + key + "=N";
    if (!by) return "set " + setting + " in your user settings (~/.claude/settings.json), or give " + option;
    switch (by->layer) {
        case LayerKind::managed: return "managed settings cap it (" + by->key + " in " + by->file + "): only they can raise it";
        case LayerKind::project:
        case LayerKind::local: return "the project's " + by->file + " lowers it (" + by->key + "): raise it there";
        case LayerKind::flag:
            if (by->file == kCommandLineFile) return "give a higher " + option;
            return "raise " + by->key + " in " + by->file;
        case LayerKind::user:
        case LayerKind::builtin: break;
    }
    // --limit counts with the user's settings, the lowest winning: only the file raises it.
    return "raise " + by->key + " in " + by->file;
}

}  // namespace sbx
#endif
