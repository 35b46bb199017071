// sbx/mac/profile.hpp - the Seatbelt profile (SBPL) that confines one command on macOS.
//
// profile() turns a Plan into the text sbx-mac hands to `sandbox-exec -p`: deny by
// default; reads everywhere but the plan's read denies, with re-opened regions as
// the plan says; writes only in the writable roots, never to a protected or
// write-denied path nor to one hidden from reads; no guarded path, nor a directory
// above one, renamed or removed; network only to the launcher's proxy on loopback,
// local servers with allowLocalBinding, the Unix sockets the settings name; then a
// fixed block of what every command needs to start and run.
//
// The file rules come in the order rule_order.hpp gives them; patterns become
// regexes through sbpl_regex.hpp. Every path and pattern reaches the text through
// quote() (quote.hpp), the one quoting point; comments name rules by their index
// in plan.rules, never by their path. Pure: no system call, no environment, no clock.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/mac/quote.hpp"
#include "sbx/mac/rule_order.hpp"
#include "sbx/mac/sbpl_regex.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/plan/plan.hpp"

namespace sbx::mac {

// What the launcher adds to the plan.
struct ProfileOptions {
    // Ports of the launcher's proxy on 127.0.0.1. Absent (or a plan whose network
    // is `none`): the command reaches no proxy, so no host at all.
    std::optional<std::uint16_t> http_proxy_port, socks_proxy_port;
    // Pseudo-terminals: open new ones (script, expect, ssh -t) and use terminal
    // ioctls on them and on /dev/tty. Off for a command with no terminal.
    bool allow_pty = true;
};

namespace detail {

// One placed rule as profile text: its note as a comment line, then the rule.
SBX_INLINE std::string render(std::string_view verb, std::string_view operations, const Entry& e);

}  // namespace detail

// What every command needs to start and run, whatever the plan says. It comes
// after the plan's file rules, so that its few file allowances hold under a read
// deny (Seatbelt's last match wins), and it ends with the denials no plan lifts.
// Sources: Chromium's sandbox/policy/mac/common.sb, Apple's system.sb, OpenAI
// Codex's seatbelt_base_policy.sbpl and sandbox-runtime's macOS profile; the
// choices (what is left out) are sbx's.
inline constexpr std::string_view kFixedRules = R"SBPL(; ---- What every command needs (fixed) ----
; Start programs and processes; each inherits this profile.
(allow process-exec)
(allow process-fork)
; Signals and process information, but only for processes in this sandbox.
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
; Hardware and kernel facts that libc, runtimes and build tools read (CPU count,
; page size, OS version, the command's own process entries). Not every sysctl:
; kern.procargs2 would show other processes' arguments and environment.
(allow sysctl-read
  (sysctl-name-prefix "hw.")
  (sysctl-name-prefix "machdep.cpu.")
  (sysctl-name-prefix "kern.proc.pid.")
  (sysctl-name-prefix "kern.proc.pgrp.")
  (sysctl-name "kern.argmax")
  (sysctl-name "kern.boottime")
  (sysctl-name "kern.hostname")
  (sysctl-name "kern.maxfiles")
  (sysctl-name "kern.maxfilesperproc")
  (sysctl-name "kern.maxproc")
  (sysctl-name "kern.ngroups")
  (sysctl-name "kern.osproductversion")
  (sysctl-name "kern.osrelease")
  (sysctl-name "kern.ostype")
  (sysctl-name "kern.osvariant_status")
  (sysctl-name "kern.osversion")
  (sysctl-name "kern.secure_kernel")
  (sysctl-name "kern.usrstack64")
  (sysctl-name "kern.version")
  (sysctl-name "machdep.ptrauth_enabled")
  (sysctl-name "security.mac.lockdown_mode_state")
  (sysctl-name "sysctl.proc_cputype")
  (sysctl-name "vm.loadavg"))
; User and group names (getpwuid, getgrgid: whoami, ls -l, git) and group membership.
(allow mach-lookup
  (global-name "com.apple.system.opendirectoryd.libinfo")
  (global-name "com.apple.system.opendirectoryd.membership"))
; Logging that libc and system libraries do on their own (os_log, asl).
(allow mach-lookup
  (global-name "com.apple.logd")
  (global-name "com.apple.system.logger"))
; notify(3), through which libc hears of time zone changes, and its shared page.
(allow mach-lookup (global-name "com.apple.system.notification_center"))
(allow ipc-posix-shm-read* (ipc-posix-name "apple.shm.notification_center"))
; The per-user temporary and cache directories (confstr), which dirhelper makes.
(allow mach-lookup (global-name "com.apple.bsd.dirhelper"))
; POSIX semaphores: the locks of Python's multiprocessing.
(allow ipc-posix-sem)
; The null and zero devices, read and written (> /dev/null).
(allow file-read* file-write-data file-ioctl
  (literal "/dev/null")
  (literal "/dev/zero"))
; Randomness.
(allow file-read*
  (literal "/dev/random")
  (literal "/dev/urandom"))
; The command's terminal, if it has one, and its own open descriptors (2> /dev/stderr).
(allow file-read* file-write-data (literal "/dev/tty"))
(allow file-read* file-write-data (subpath "/dev/fd"))
; DTrace's helper device, which dyld opens for programs with static probes.
(allow file-read* file-write-data file-ioctl (literal "/dev/dtracehelper"))
; Directory metadata for path traversal: realpath() and getcwd() stat every
; directory on a path, hidden ones included. Listing and reading stay denied.
(allow file-read-metadata (vnode-type DIRECTORY))
; Never start a program outside the sandbox: LaunchServices (open(1)) and Apple
; Events (osascript) would run it unconfined. Denied by default already; named
; here so that no later edit allows them by accident.
(deny lsopen)
(deny appleevent-send)
(deny mach-lookup
  (global-name "com.apple.coreservices.launchservicesd")
  (global-name "com.apple.coreservices.appleevents")
  (global-name "com.apple.CoreServices.coreservicesd")
  (global-name "com.apple.lsd.open")
  (global-name "com.apple.lsd.modifydb")
  (global-name "com.apple.lsd.mapdb"))
)SBPL";

// ProfileOptions::allow_pty: pseudo-terminals (after Codex's and sandbox-runtime's
// rules). Terminal ioctls include TIOCSTI, which types into a terminal: the
// launcher gives the command a session of its own so that none is its
// controlling terminal but one it opened itself.
inline constexpr std::string_view kTerminalRules = R"SBPL(; ---- Pseudo-terminals (allow_pty) ----
; Open new pseudo-terminals and use them: line modes, window size.
(allow pseudo-tty)
(allow file-read* file-write-data file-ioctl
  (literal "/dev/ptmx")
  (regex "^/dev/ttys[0-9]+$"))
; Terminal ioctls on the command's own terminal.
(allow file-ioctl (literal "/dev/tty"))
)SBPL";

namespace detail {

// (VERB OPERATIONS FILTER) on a line of its own.
SBX_INLINE void add_rule(std::string& out, std::string_view verb, std::string_view operations, const std::string& filter);

// (NAME "TEXT"), TEXT quoted as Seatbelt reads a string.
SBX_INLINE expected<std::string> filter_of(std::string_view name, std::string_view text);

// The network: nothing for a plan without one; else the launcher's proxy ports
// on loopback, and loopback itself under allowLocalBinding.
SBX_INLINE expected<void> network_rules(const Plan& plan, const ProfileOptions& opt, std::string& out);

// Unix sockets: every path under allowAllUnixSockets, else the plan's paths, at
// or under each (a glob as a regex), in both their /var and /private/var forms.
SBX_INLINE expected<void> unix_socket_rules(const Plan& plan, std::string& out);

// No protected, write-denied or hidden path, nor a directory above one, nor a
// pinned mount, may be renamed or removed: one (deny file-write-unlink ...).
SBX_INLINE expected<void> unlink_guard(const Plan& plan, const std::vector<Rule>& rules, std::string& out);

// The files: everything under filesystem.disabled; else reads (everywhere but
// the denies, the narrower rule winning), then writes (only inside writable
// roots, where reads are allowed), each with the credential stores' blocks, then
// the protected and write-denied paths, then the unlink guard.
SBX_INLINE expected<void> file_rules(const Plan& plan, std::string& out);

}  // namespace detail

// The profile for `plan`. Errors: INVALID_PLAN when the plan confines files but
// holds no file rules (an older plan, or one written by hand without them), or a
// pattern is not absolute; INVALID_ARGUMENT when a path holds NUL, a pattern
// cannot be said as a Seatbelt regex, or a proxy port is 0. The text is the same
// for the same plan and options, byte for byte.
SBX_INLINE expected<std::string> profile(const Plan& plan, const ProfileOptions& opt = {});

}  // namespace sbx::mac

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_MAC)

namespace sbx::mac::detail {

SBX_INLINE std::string render(std::string_view verb, std::string_view operations, const Entry& e) {
    return "; " + e.note + "\n(" + std::string(verb) + " " + std::string(operations) + " " + e.filter + ")\n";
}

SBX_INLINE void add_rule(std::string& out, std::string_view verb, std::string_view operations, const std::string& filter) {
    out += "(" + std::string(verb) + " " + std::string(operations) + " " + filter + ")\n";
}

SBX_INLINE expected<std::string> filter_of(std::string_view name, std::string_view text) {
    auto q = quote(text);
    SBX_TRY(q);
    return "(" + std::string(name) + " " + *q + ")";
}

SBX_INLINE expected<void> network_rules(const Plan& plan, const ProfileOptions& opt, std::string& out) {
    out += "\n; ---- Network ----\n";
    if (plan.network.mode == NetworkMode::none) {
        out += "; The plan's network is none: no host, not even the proxy, is reachable.\n";
        return {};
    }
    bool any_port = false;
    for (const auto& [port, what] :
         {std::pair{opt.http_proxy_port, "HTTP"}, std::pair{opt.socks_proxy_port, "SOCKS5"}}) {
        if (!port) continue;
        if (*port == 0) return fail(Errc::invalid_argument, std::string("the ") + what + " proxy port is 0");
        out += std::string("; The launcher's ") + what +
               " proxy on loopback: every host goes through it, and it decides.\n";
        auto f = filter_of("remote ip", "localhost:" + std::to_string(*port));
        SBX_TRY(f);
        add_rule(out, "allow", "network-outbound", *f);
        any_port = true;
    }
    if (!any_port) out += "; No proxy port was given: no host is reachable.\n";
    if (plan.network.rules.local) {
        out += "; allowLocalBinding: listen on loopback ports, accept there, and reach loopback directly.\n";
        auto f = filter_of("local ip", "localhost:*"), g = filter_of("remote ip", "localhost:*");
        SBX_TRY(f);
        SBX_TRY(g);
        add_rule(out, "allow", "network-bind", *f);
        add_rule(out, "allow", "network-inbound", *f);
        add_rule(out, "allow", "network-outbound", *g);
    }
    return {};
}

SBX_INLINE expected<void> unix_socket_rules(const Plan& plan, std::string& out) {
    if (plan.all_unix_sockets || !plan.unix_socket_paths.empty()) {
        out += "; Unix sockets need a socket of the domain first (socket(2) names no path).\n";
        add_rule(out, "allow", "system-socket", "(socket-domain AF_UNIX)");
    }
    if (plan.all_unix_sockets) {
        out += "; allowAllUnixSockets: bind and connect any Unix socket path.\n";
        auto f = filter_of("path-regex", "^/");
        SBX_TRY(f);
        add_rule(out, "allow", "network-bind", "(local unix-socket " + *f + ")");
        add_rule(out, "allow", "network-outbound", "(remote unix-socket " + *f + ")");
        return {};
    }
    for (std::size_t i = 0; i < plan.unix_socket_paths.size(); ++i) {
        const std::string key = "unixSockets.paths[" + std::to_string(i) + "]";
        const auto& p = plan.unix_socket_paths[i];
        if (!paths::is_absolute(p))
            return fail(Error(Errc::invalid_plan, "'" + p + "' is not an absolute path").at_key(key));
        std::vector<std::string> forms{p};
        for (const auto& a : kPrivateAliases)
            if (paths::at_or_under(p, a.path)) forms.push_back("/private" + p);
        out += "; allowUnixSockets[" + std::to_string(i) + "]: bind and connect the sockets at or under it.\n";
        for (const auto& form : forms) {
            expected<std::string> f = std::string();
            if (glob::has_wildcard(form)) {
                auto re = glob_regex(form);
                if (!re) return fail(Error(re.error()).at_key(key));
                f = filter_of("path-regex", *re);
            } else {
                f = filter_of("subpath", form);
            }
            if (!f) return fail(Error(f.error()).at_key(key));
            add_rule(out, "allow", "network-bind", "(local unix-socket " + *f + ")");
            add_rule(out, "allow", "network-outbound", "(remote unix-socket " + *f + ")");
        }
    }
    return {};
}

SBX_INLINE expected<void> unlink_guard(const Plan& plan, const std::vector<Rule>& rules, std::string& out) {
    std::set<std::string> literals, regexes;
    std::vector<std::string> exact;
    for (const auto& r : rules) {
        if (r.kind != FsRule::Kind::protect && r.kind != FsRule::Kind::deny_write && r.kind != FsRule::Kind::deny_read)
            continue;
        SBX_TRY(add_ancestors(r, literals, regexes));
        if (r.wildcard) {
            if (std::find(exact.begin(), exact.end(), r.exact) == exact.end()) exact.push_back(r.exact);
        } else {
            literals.insert(r.path);
        }
    }
    for (const auto& m : plan.filesystem.mounts)
        if (m.kind == MountKind::pin) literals.insert(m.path);
    literals.erase("/");
    if (literals.empty() && regexes.empty() && exact.empty()) return {};
    out +=
        "\n; No protected, write-denied or hidden path, nor any directory above one, can be\n"
        "; renamed or removed: it would take the path where the rules above do not reach.\n"
        "(deny file-write-unlink";
    for (const auto& l : literals) {
        auto f = filter_of("literal", l);
        SBX_TRY(f);
        out += "\n  " + *f;
    }
    for (const auto& re : regexes) {
        auto f = filter_of("regex", re);
        SBX_TRY(f);
        out += "\n  " + *f;
    }
    for (const auto& f : exact) out += "\n  " + f;
    out += ")\n";
    return {};
}

SBX_INLINE expected<void> file_rules(const Plan& plan, std::string& out) {
    if (!plan.filesystem.isolated) {
        out += "\n; ---- Files: filesystem.disabled, no file restriction ----\n";
        out += "(allow file-read*)\n(allow file-write*)\n";
        return {};
    }
    if (plan.rules.empty())
        return fail(Error(Errc::invalid_plan,
                          "the plan confines files but holds no file rules (filesystem.rules), from which the "
                          "profile is made; make the plan again with this sbx")
                        .at_key("filesystem.rules"));
    auto rules = plan_rules(plan);
    SBX_TRY(rules);
    auto reads = read_entries(*rules);
    SBX_TRY(reads);
    auto blocks = store_blocks(*rules);
    SBX_TRY(blocks);

    out += "\n; ---- Reads: everywhere but the read denies; the narrower rule wins ----\n";
    out += "(allow file-read*)\n";
    for (const auto& e : *reads) out += render(e.allow ? "allow" : "deny", "file-read*", e);
    auto store_head = [](const Rule& d) {
        return Entry{d.key, 1, false, d.region, &d,
                     rule_name(d) + ", a credential store: only allow-read rules at or under it open it"};
    };
    if (!blocks->empty())
        out += "\n; ---- Reads in credential stores: only allowRead entries at or under one count ----\n";
    for (const auto& b : *blocks) {
        out += render("deny", "file-read*", store_head(*b.store));
        for (const auto& e : b.reads) out += render(e.allow ? "allow" : "deny", "file-read*", inside(e, *b.store));
    }

    out += "\n; ---- Writes: only inside writable roots and where reads are allowed ----\n";
    for (const auto& e : write_entries(*reads, *rules))
        out += render(e.allow ? "allow" : "deny", e.allow ? "file-write*" : "file-write* file-link", e);
    if (!blocks->empty()) out += "\n; ---- Writes in credential stores: where reads are allowed there ----\n";
    for (const auto& b : *blocks) {
        out += render("deny", "file-write* file-link", store_head(*b.store));
        for (const auto& e : write_entries(b.reads, *rules))
            out += render(e.allow ? "allow" : "deny", e.allow ? "file-write*" : "file-write* file-link",
                          inside(e, *b.store));
    }
    out += "\n; Protected and write-denied paths, whatever allows them (after every allow).\n";
    for (const auto& r : *rules)
        if (r.kind == FsRule::Kind::protect || r.kind == FsRule::Kind::deny_write)
            out += render("deny", "file-write* file-link", Entry{0, 0, false, r.region, &r, rule_name(r)});
    return unlink_guard(plan, *rules, out);
}

}  // namespace sbx::mac::detail

namespace sbx::mac {

SBX_INLINE expected<std::string> profile(const Plan& plan, const ProfileOptions& opt) {
    std::string out =
        "; sbx: the Seatbelt profile of one command, made from its plan (docs/seatbelt.md).\n"
        "; Seatbelt decides by the last rule that matches, so the order below is the policy.\n"
        "(version 1)\n"
        "(deny default)\n";
    SBX_TRY(detail::network_rules(plan, opt, out));
    SBX_TRY(detail::unix_socket_rules(plan, out));
    SBX_TRY(detail::file_rules(plan, out));
    out += "\n";
    out += kFixedRules;
    if (opt.allow_pty) {
        out += "\n";
        out += kTerminalRules;
    }
    return out;
}

}  // namespace sbx::mac
#endif
