// sbx/linux/bwrap.hpp - the bubblewrap argument list that runs a plan.
//
// bwrap_args() is the whole command line sbx-linux executes: bubblewrap, the
// namespace and privilege flags (kSandboxFlags), the seccomp program, the
// filesystem part, the root group's covers, the git exclude file, ssh's
// configuration, the working directory and the stage that runs the command. It is pure: what only the
// launcher knows when it runs (the bubblewrap it found, the descriptors it made,
// the root group it joined) comes in a BwrapLaunch. `sbx doctor` runs the list it
// makes of a small plan of its own, so a doctor that passes means `sbx run` starts.
//
// The filesystem part (bwrap_fs_args) is the plan's mounts, in the plan's order,
// on top of a read-only `/`, a fresh /dev and /proc, and then the kernel's
// interfaces that act on the whole machine made read-only (kKernelCovers). Masks
// are made read-only only at the end: bubblewrap creates the mount points of
// re-opened paths inside a mask, which it cannot do once the mask is read-only.
// A protected symbolic link (MountKind::ro_link) is the stage's alone to bind
// over itself (kLinkFlag): bubblewrap follows a link it binds to, so where it
// makes every mount the link is left out and bubblewrap_unmade() says so.
#pragma once

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/linux/mount_flags.hpp"
#include "sbx/net/ssh_proxy.hpp"
#include "sbx/plan/fs_plan.hpp"
#include "sbx/plan/plan.hpp"

namespace sbx::linux_sandbox {

// When a kernel interface is covered.
enum class CoverWhen {
    always,          // the sandbox's own /proc still shows it
    root_writable,   // only where `/` is bound writable (filesystem.disabled); else the read-only `/` covers it
};

// Files of /proc and /sys that act on the host, not on the sandbox's namespaces.
// The command may be uid 0 of the host (a root caller's), and procfs and sysfs
// check the file's owner, not a capability, for most of them: so each is bound
// read-only over itself (from the host's tree; --ro-bind-try, as some kernels
// lack some). bubblewrap covers a few of these for a root caller itself, but
// never /proc/sys: it tests the directory, whose mode 0555 always refuses a write.
struct KernelCover {
    std::string_view path;
    CoverWhen when;
    std::string_view reason;
};

inline constexpr std::array kKernelCovers{
    KernelCover{"/proc/sys", CoverWhen::always,
                "sysctls: kernel.core_pattern and kernel.modprobe run programs as host root, vm.drop_caches and "
                "the rest change the host"},
    KernelCover{"/proc/sysrq-trigger", CoverWhen::always, "one write reboots, syncs or kills on the host"},
    KernelCover{"/proc/irq", CoverWhen::always, "the interrupt affinity of the host's devices"},
    KernelCover{"/proc/bus", CoverWhen::always, "the PCI configuration of the host's devices"},
    KernelCover{"/proc/mtrr", CoverWhen::always, "the host's memory type ranges"},
    KernelCover{"/proc/pressure", CoverWhen::always, "pressure-stall triggers, which anyone may add, cost the host's kernel work"},
    KernelCover{"/proc/acpi", CoverWhen::always, "the host's ACPI wake-up devices"},
    KernelCover{"/proc/fs", CoverWhen::always, "settings of filesystem drivers (nfsd)"},
    KernelCover{"/proc/scsi", CoverWhen::always, "adds and removes the host's SCSI devices"},
    KernelCover{"/proc/timer_stats", CoverWhen::always, "starts and stops the host's timer statistics (older kernels)"},
    KernelCover{"/proc/latency_stats", CoverWhen::always, "clears the host's latency statistics"},
    KernelCover{"/sys", CoverWhen::root_writable,
                "device, power, memory and cgroup settings of the host, with every filesystem mounted below"},
};

// The stage's flag for a MountKind::ro_link (sbx/linux/mount_flags.hpp).
inline constexpr std::string_view kLinkFlag = "--ro-bind-link";

// The stage's flag for a writable tmpfs of a given size (mount_flags.hpp):
// the command's TMPDIR where the plan caps it.
inline constexpr std::string_view kSizedTmpfsFlag = "--sized-tmpfs";

namespace detail {

SBX_INLINE bool under_kind(const FsPlan& plan, const std::string& path, MountKind kind);

SBX_INLINE void add_mount(std::vector<std::string>& a, std::vector<std::string>& make_read_only, const Mount& m);

}  // namespace detail

// The kernel interfaces a plan's sandbox covers, in kKernelCovers order: none
// inside a hidden directory (nothing is there to cover).
SBX_INLINE std::vector<KernelCover> kernel_covers(const FsPlan& plan);

// The base every sandbox starts from: `/`, a fresh /dev and /proc. Without
// isolation (filesystem.disabled) the command sees the filesystem as you do.
SBX_INLINE std::vector<std::string> bwrap_base_args(const FsPlan& plan);

SBX_INLINE std::vector<std::string> bwrap_fs_args(const FsPlan& plan);

// One bubblewrap flag every sandbox gets, with its argument (empty: none) and why.
struct BwrapFlag {
    std::string_view flag;
    std::string_view value;
    std::string_view reason;
};

// The namespace and privilege flags, in the order they are given. Every
// namespace is made inside the new user namespace, so a root caller's too holds
// no capability over the host's.
inline constexpr std::array kSandboxFlags{
    BwrapFlag{"--unshare-user", "", "a user namespace of its own, which the other namespaces belong to"},
    BwrapFlag{"--unshare-ipc", "", "System V IPC and POSIX message queues apart from the host's processes"},
    BwrapFlag{"--unshare-pid", "", "the command sees and signals the sandbox's processes only, which end with its init"},
    BwrapFlag{"--unshare-net", "", "nothing but a loopback of its own: the only way out is the launcher's proxy, if any"},
    BwrapFlag{"--unshare-uts", "", "a host name of its own, which the command may change"},
    BwrapFlag{"--unshare-cgroup-try", "", "a cgroup namespace where the kernel has them: the host's cgroup paths unseen"},
    BwrapFlag{"--disable-userns", "",
              "no user namespace can be made inside, where the command would hold every capability over new "
              "mounts and namespaces (bubblewrap 0.8.0)"},
    BwrapFlag{"--die-with-parent", "", "the sandbox ends when sbx-linux dies, so no command outlives its clean-up"},
    BwrapFlag{"--new-session", "", "a session of its own: no TIOCSTI into the caller's terminal"},
    BwrapFlag{"--cap-drop", "ALL", "no capability inside the sandbox, for a root caller's command too"},
};

// What only the launcher knows when it runs a plan.
struct BwrapLaunch {
    std::string bwrap;  // the bwrap to execute (the probe's find), argv[0]
    // The BPF program (launchers/linux/seccomp_filter.hpp), which bubblewrap loads into
    // its init (pid 1) as well as into the stage, so that no process of the
    // sandbox's PID namespace runs without it. nullopt: no filter, as
    // filter_fallback (filter_fallback.hpp) allowed.
    std::optional<int> seccomp_fd;
    // The root group's directory (launchers/shared/root_group.hpp), covered by an empty
    // read-only directory; nullopt: the run joined no group.
    std::optional<std::string> group_dir;
    // The paths of the group's placeholders, every sandbox's of this root.
    std::vector<std::string> group_placeholders;
    // A descriptor holding plan.filesystem.git_exclude's content, bound over its
    // path; nullopt: none (given whenever the plan has a git exclude).
    std::optional<int> exclude_fd;
    // A descriptor holding ssh's system configuration with the proxy's way out
    // (sbx/net/ssh_proxy.hpp), bound over net::kSshConfigPath; nullopt: none.
    std::optional<int> ssh_config_fd;
    // The program bubblewrap runs, with its arguments: the stage (launchers/stage/stage.hpp).
    std::vector<std::string> stage_argv;
    // Whether the stage makes the mounts (stage_mount_ops) and bubblewrap only
    // the base (and bubblewrap_makes' few); see kStageMountFlags.
    bool stage_mounts = false;
};

// Where the stage makes the mounts, the flags that replace --disable-userns:
// the stage starts as uid 0 of the sandbox's user namespace, which owns its
// mount namespace, with these capabilities there; it makes the mounts, then
// what --disable-userns would have (user.max_user_namespaces 1 and a second
// user namespace, where it is the caller's uid and gid again), drops every
// capability from every set and loads the filter's second part before anything
// else of the sandbox runs (launchers/stage/mounts.cpp). --disable-userns
// itself cannot stay, nor the caller's uid here: either has bubblewrap make
// that second namespace before the stage, which then owns no mount.
inline constexpr std::array kStageMountFlags{
    BwrapFlag{"--uid", "0", "the stage maps the caller's uid in the second user namespace it makes"},
    BwrapFlag{"--gid", "0", "and the caller's gid"},
    BwrapFlag{"--cap-add", "CAP_SYS_ADMIN", "the stage's mounts"},
    BwrapFlag{"--cap-add", "CAP_SETPCAP", "the stage empties its bounding set"},
    BwrapFlag{"--cap-add", "CAP_SYS_RESOURCE", "the stage sets user.max_user_namespaces to 1"},
    BwrapFlag{"--cap-add", "CAP_SETFCAP", "the kernel maps uid 0 of a namespace into the next only for one that had it"},
};

namespace detail {

// Whether bubblewrap makes this mount where the stage makes the others: a
// writable bind whose source lies in /dev or /proc. The stage copies its
// sources from the sandbox as bubblewrap left it, whose /dev and /proc are the
// sandbox's own; bubblewrap binds the host's, as the plan means.
SBX_INLINE bool bubblewrap_makes(std::string_view flag, std::string_view source);

// The source of the mount at ops[i] ("" for a flag without one).
SBX_INLINE std::string_view mount_source(const std::vector<std::string>& ops, std::size_t i);

}  // namespace detail

// The mounts after bwrap_base_args, in bubblewrap's flags and in order: the
// plan's, the kernel's covers, the group's covers, the git exclude. Where the
// plan caps TMPDIR (limits.tmpdirMiB), its writable bind is a tmpfs of the
// sandbox's own of that size instead (kSizedTmpfsFlag): nothing the command
// does there reaches the host's disk, and it is gone with the sandbox.
SBX_INLINE std::vector<std::string> mount_ops(const Plan& plan, const BwrapLaunch& launch);

// Of mount_ops, what bubblewrap makes when the stage makes the rest.
SBX_INLINE std::vector<std::string> bubblewrap_made(const std::vector<std::string>& ops);

// Of mount_ops, what bubblewrap makes where it makes every mount: all but the
// protected symbolic links (kLinkFlag), which it cannot bind without following;
// a sized tmpfs in bubblewrap's own flags (--perms 0700 --size BYTES --tmpfs DEST).
SBX_INLINE std::vector<std::string> bubblewrap_ops(const std::vector<std::string>& ops);

// What a sandbox whose mounts bubblewrap makes leaves unprotected, one warning
// naming each path, for the launcher to say before the command runs: the
// names of protected symbolic links, which the command can then remove,
// rename or replace (their targets stay read-only).
SBX_INLINE std::vector<Warning> bubblewrap_unmade(const FsPlan& plan);

// The stage's list: every one of mount_ops in order, what bubblewrap made as
// "--again DEST", which puts the mount bubblewrap made there on top once more
// (a later mount of the list may lie above it).
SBX_INLINE std::vector<std::string> stage_mount_ops(const std::vector<std::string>& ops);

namespace detail {

// launch.bwrap, kSandboxFlags (with kStageMountFlags for --disable-userns where
// the stage mounts), --seccomp.
SBX_INLINE std::vector<std::string> bwrap_flags(const BwrapLaunch& launch);

}  // namespace detail

// The whole bubblewrap command line for `plan`: detail::bwrap_flags,
// bwrap_base_args and mount_ops (bubblewrap_made of them, or bubblewrap_ops), --chdir to the
// plan's working directory, "--" and launch.stage_argv.
SBX_INLINE std::vector<std::string> bwrap_args(const Plan& plan, const BwrapLaunch& launch);

// bubblewrap's command line for a sandbox started before its plan is made, whose
// stage takes the rest later (launchers/stage/stage.hpp, its orders): the flags (the
// stage makes the mounts), the seccomp descriptor, `/` (isolated or not) and
// /proc, "--" and launch.stage_argv. The stage makes /dev itself, first
// (stage_waiting_mount_ops), for less than bubblewrap's --dev costs. Serves any
// plan of which bubblewrap_made() is nothing; the stage enters the plan's
// directory itself.
SBX_INLINE std::vector<std::string> bwrap_waiting_args(const BwrapLaunch& launch, bool isolated);

// The stage's list where bubblewrap started before the plan (bwrap_waiting_args):
// /dev first, as bubblewrap's base has it, then stage_mount_ops.
SBX_INLINE std::vector<std::string> stage_waiting_mount_ops(const std::vector<std::string>& ops);

}  // namespace sbx::linux_sandbox

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_LINUX)

namespace sbx::linux_sandbox::detail {

SBX_INLINE bool under_kind(const FsPlan& plan, const std::string& path, MountKind kind) {
    return std::any_of(plan.mounts.begin(), plan.mounts.end(),
                       [&](const Mount& m) { return m.kind == kind && paths::at_or_under(path, m.path); });
}

SBX_INLINE void add_mount(std::vector<std::string>& a, std::vector<std::string>& make_read_only, const Mount& m) {
    switch (m.kind) {
        case MountKind::bind: a.insert(a.end(), {"--bind", m.source, m.path}); break;
        case MountKind::ro_bind: a.insert(a.end(), {"--ro-bind", m.source, m.path}); break;
        case MountKind::pin: a.insert(a.end(), {"--bind", m.path, m.path}); break;
        case MountKind::mask_dir:
            a.insert(a.end(), {"--tmpfs", m.path});
            if (std::find(make_read_only.begin(), make_read_only.end(), m.path) == make_read_only.end())
                make_read_only.push_back(m.path);
            break;
        case MountKind::mask_file: a.insert(a.end(), {"--ro-bind", "/dev/null", m.path}); break;
        case MountKind::ro_link: a.insert(a.end(), {std::string(kLinkFlag), m.path}); break;
    }
}

}  // namespace sbx::linux_sandbox::detail

namespace sbx::linux_sandbox {

SBX_INLINE std::vector<KernelCover> kernel_covers(const FsPlan& plan) {
    std::vector<KernelCover> out;
    for (const auto& c : kKernelCovers) {
        if (c.when == CoverWhen::root_writable && plan.isolated) continue;
        if (detail::under_kind(plan, std::string(c.path), MountKind::mask_dir)) continue;
        out.push_back(c);
    }
    return out;
}

SBX_INLINE std::vector<std::string> bwrap_base_args(const FsPlan& plan) {
    return {plan.isolated ? "--ro-bind" : "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc"};
}

SBX_INLINE std::vector<std::string> bwrap_fs_args(const FsPlan& plan) {
    std::vector<std::string> a = bwrap_base_args(plan);
    std::vector<std::string> make_read_only;
    for (const auto& m : plan.mounts) detail::add_mount(a, make_read_only, m);
    const auto covers = kernel_covers(plan);
    for (const auto& c : covers) a.insert(a.end(), {"--ro-bind-try", std::string(c.path), std::string(c.path)});
    // A cover is bound from the host's tree, which has none of the plan's mounts:
    // the hiding and read-only ones inside it go on top again.
    for (const auto& m : plan.mounts) {
        if (m.kind != MountKind::mask_dir && m.kind != MountKind::mask_file && m.kind != MountKind::ro_bind &&
            m.kind != MountKind::ro_link)
            continue;
        const bool inside = std::any_of(covers.begin(), covers.end(), [&](const KernelCover& c) {
            return paths::at_or_under(m.path, std::string(c.path));
        });
        if (inside) detail::add_mount(a, make_read_only, m);
    }
    for (const auto& p : make_read_only) a.insert(a.end(), {"--remount-ro", p});
    return a;
}

}  // namespace sbx::linux_sandbox

namespace sbx::linux_sandbox::detail {

SBX_INLINE bool bubblewrap_makes(std::string_view flag, std::string_view source) {
    return flag == "--bind" && (paths::at_or_under(std::string(source), "/dev") ||
                                paths::at_or_under(std::string(source), "/proc"));
}

SBX_INLINE std::string_view mount_source(const std::vector<std::string>& ops, std::size_t i) {
    return mount_flag_arity(ops[i]) == 2 ? std::string_view(ops[i + 1]) : std::string_view();
}

}  // namespace sbx::linux_sandbox::detail

namespace sbx::linux_sandbox {

SBX_INLINE std::vector<std::string> mount_ops(const Plan& plan, const BwrapLaunch& launch) {
    auto a = bwrap_fs_args(plan.filesystem);
    a.erase(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(bwrap_base_args(plan.filesystem).size()));
    if (const auto& cap = plan.limits[static_cast<std::size_t>(Limit::tmpdir)])
        for (std::size_t i = 0; i + 2 < a.size(); i += 1 + mount_flag_arity(a[i]))
            if (a[i] == "--bind" && a[i + 1] == plan.tmpdir && a[i + 2] == plan.tmpdir) {
                a[i] = std::string(kSizedTmpfsFlag);
                a[i + 1] = std::to_string(limit_in_base_unit(Limit::tmpdir, cap->value));
                break;
            }
    // The group's files are sbx's alone: a command that could flock one would
    // stall every sandbox starting in its root, and could read what the others
    // made. An empty read-only directory covers them (unless a hidden directory
    // already does).
    if (launch.group_dir && !detail::under_kind(plan.filesystem, *launch.group_dir, MountKind::mask_dir))
        a.insert(a.end(), {"--tmpfs", *launch.group_dir, "--remount-ro", *launch.group_dir});
    // The group's placeholders this plan has none of (another sandbox's policy
    // protects more): read-only here too, or this command could remove one from
    // the writable root and lift that sandbox's mount.
    for (const auto& path : launch.group_placeholders) {
        const bool planned = std::any_of(plan.filesystem.placeholders.begin(), plan.filesystem.placeholders.end(),
                                         [&](const PlaceholderOp& ph) { return ph.path == path; });
        if (!planned && !detail::under_kind(plan.filesystem, path, MountKind::mask_dir))
            a.insert(a.end(), {"--ro-bind", path, path});
    }
    // git inside reads the repository's exclude file with the placeholders added.
    if (const auto& ex = plan.filesystem.git_exclude; ex && launch.exclude_fd)
        a.insert(a.end(), {"--ro-bind-data", std::to_string(*launch.exclude_fd), ex->path});
    // ssh inside reaches hosts through the proxy.
    if (launch.ssh_config_fd)
        a.insert(a.end(), {"--ro-bind-data", std::to_string(*launch.ssh_config_fd), std::string(net::kSshConfigPath)});
    return a;
}

SBX_INLINE std::vector<std::string> bubblewrap_made(const std::vector<std::string>& ops) {
    std::vector<std::string> out;
    for (std::size_t i = 0, n = 0; i < ops.size(); i += 1 + n) {
        n = mount_flag_arity(ops[i]);
        if (detail::bubblewrap_makes(ops[i], detail::mount_source(ops, i)))
            out.insert(out.end(), ops.begin() + static_cast<std::ptrdiff_t>(i),
                       ops.begin() + static_cast<std::ptrdiff_t>(i + 1 + n));
    }
    return out;
}

SBX_INLINE std::vector<std::string> bubblewrap_ops(const std::vector<std::string>& ops) {
    std::vector<std::string> out;
    for (std::size_t i = 0, n = 0; i < ops.size(); i += 1 + n) {
        n = mount_flag_arity(ops[i]);
        if (ops[i] == kSizedTmpfsFlag) out.insert(out.end(), {"--perms", "0700", "--size", ops[i + 1], "--tmpfs", ops[i + 2]});
        else if (ops[i] != kLinkFlag)
            out.insert(out.end(), ops.begin() + static_cast<std::ptrdiff_t>(i),
                       ops.begin() + static_cast<std::ptrdiff_t>(i + 1 + n));
    }
    return out;
}

SBX_INLINE std::vector<Warning> bubblewrap_unmade(const FsPlan& plan) {
    std::vector<Warning> out;
    for (const auto& m : plan.mounts)
        if (m.kind == MountKind::ro_link)
            out.push_back(Warning{m.path, "",
                                  "this protected symbolic link can be removed, renamed or replaced by the command "
                                  "(its target stays read-only): bubblewrap makes the mounts here and follows a "
                                  "link it binds to; the sandbox's stage binds the name itself where the kernel "
                                  "has the new mount API (Linux 5.12) and sbx-linux runs without "
                                  "--bubblewrap-mounts",
                                  WarningScope::linux_only});
    return out;
}

SBX_INLINE std::vector<std::string> stage_mount_ops(const std::vector<std::string>& ops) {
    std::vector<std::string> out;
    for (std::size_t i = 0, n = 0; i < ops.size(); i += 1 + n) {
        n = mount_flag_arity(ops[i]);
        if (detail::bubblewrap_makes(ops[i], detail::mount_source(ops, i))) out.insert(out.end(), {"--again", ops[i + n]});
        else out.insert(out.end(), ops.begin() + static_cast<std::ptrdiff_t>(i),
                        ops.begin() + static_cast<std::ptrdiff_t>(i + 1 + n));
    }
    return out;
}

}  // namespace sbx::linux_sandbox

namespace sbx::linux_sandbox::detail {

SBX_INLINE std::vector<std::string> bwrap_flags(const BwrapLaunch& launch) {
    std::vector<std::string> args{launch.bwrap};
    for (const auto& f : kSandboxFlags) {
        if (launch.stage_mounts && f.flag == "--disable-userns") continue;
        args.emplace_back(f.flag);
        if (!f.value.empty()) args.emplace_back(f.value);
    }
    if (launch.stage_mounts)
        for (const auto& f : kStageMountFlags) args.insert(args.end(), {std::string(f.flag), std::string(f.value)});
    if (launch.seccomp_fd) args.insert(args.end(), {"--seccomp", std::to_string(*launch.seccomp_fd)});
    return args;
}

}  // namespace sbx::linux_sandbox::detail

namespace sbx::linux_sandbox {

SBX_INLINE std::vector<std::string> bwrap_args(const Plan& plan, const BwrapLaunch& launch) {
    std::vector<std::string> args = detail::bwrap_flags(launch);
    const auto base = bwrap_base_args(plan.filesystem);
    args.insert(args.end(), base.begin(), base.end());
    const auto ops = mount_ops(plan, launch);
    const auto made = launch.stage_mounts ? bubblewrap_made(ops) : bubblewrap_ops(ops);
    args.insert(args.end(), made.begin(), made.end());
    args.insert(args.end(), {"--chdir", plan.cwd, "--"});
    args.insert(args.end(), launch.stage_argv.begin(), launch.stage_argv.end());
    return args;
}

SBX_INLINE std::vector<std::string> bwrap_waiting_args(const BwrapLaunch& launch, bool isolated) {
    std::vector<std::string> args = detail::bwrap_flags(launch);
    args.insert(args.end(), {isolated ? "--ro-bind" : "--bind", "/", "/", "--proc", "/proc", "--"});
    args.insert(args.end(), launch.stage_argv.begin(), launch.stage_argv.end());
    return args;
}

SBX_INLINE std::vector<std::string> stage_waiting_mount_ops(const std::vector<std::string>& ops) {
    std::vector<std::string> out{"--dev", "/dev"};
    const auto rest = stage_mount_ops(ops);
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
}

}  // namespace sbx::linux_sandbox
#endif
