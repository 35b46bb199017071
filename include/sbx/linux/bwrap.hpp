// sbx/linux/bwrap.hpp - the bubblewrap argument list for a plan's filesystem part.
//
// The arguments that build the sandbox's view of the filesystem, in the plan's
// order, on top of a read-only `/`, a fresh /dev and /proc, and then the kernel's
// interfaces that act on the whole machine made read-only (kKernelCovers). Masks
// are made read-only only at the end: bubblewrap creates the mount points of
// re-opened paths inside a mask, which it cannot do once the mask is read-only.
// The namespace flags and the command are the launcher's (see launchers/).
#pragma once

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/paths.hpp"
#include "sbx/plan/fs_plan.hpp"

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

namespace detail {

inline bool under_kind(const FsPlan& plan, const std::string& path, MountKind kind) {
    return std::any_of(plan.mounts.begin(), plan.mounts.end(),
                       [&](const Mount& m) { return m.kind == kind && paths::at_or_under(path, m.path); });
}

inline void add_mount(std::vector<std::string>& a, std::vector<std::string>& make_read_only, const Mount& m) {
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
    }
}

}  // namespace detail

// The kernel interfaces a plan's sandbox covers, in kKernelCovers order: none
// inside a hidden directory (nothing is there to cover).
inline std::vector<KernelCover> kernel_covers(const FsPlan& plan) {
    std::vector<KernelCover> out;
    for (const auto& c : kKernelCovers) {
        if (c.when == CoverWhen::root_writable && plan.isolated) continue;
        if (detail::under_kind(plan, std::string(c.path), MountKind::mask_dir)) continue;
        out.push_back(c);
    }
    return out;
}

inline std::vector<std::string> bwrap_fs_args(const FsPlan& plan) {
    // Without isolation (filesystem.disabled) the command sees the filesystem as you do.
    std::vector<std::string> a{plan.isolated ? "--ro-bind" : "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc"};
    std::vector<std::string> make_read_only;
    for (const auto& m : plan.mounts) detail::add_mount(a, make_read_only, m);
    const auto covers = kernel_covers(plan);
    for (const auto& c : covers) a.insert(a.end(), {"--ro-bind-try", std::string(c.path), std::string(c.path)});
    // A cover is bound from the host's tree, which has none of the plan's mounts:
    // the hiding and read-only ones inside it go on top again.
    for (const auto& m : plan.mounts) {
        if (m.kind != MountKind::mask_dir && m.kind != MountKind::mask_file && m.kind != MountKind::ro_bind) continue;
        const bool inside = std::any_of(covers.begin(), covers.end(), [&](const KernelCover& c) {
            return paths::at_or_under(m.path, std::string(c.path));
        });
        if (inside) detail::add_mount(a, make_read_only, m);
    }
    for (const auto& p : make_read_only) a.insert(a.end(), {"--remount-ro", p});
    return a;
}

}  // namespace sbx::linux_sandbox
