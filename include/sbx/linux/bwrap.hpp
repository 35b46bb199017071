// sbx/linux/bwrap.hpp - the bubblewrap argument list for a plan's filesystem part.
//
// The arguments that build the sandbox's view of the filesystem, in the plan's
// order, on top of a read-only `/`, a fresh /dev and /proc. Masks are made
// read-only only at the end: bubblewrap creates the mount points of re-opened
// paths inside a mask, which it cannot do once the mask is read-only.
// The namespace flags and the command are the launcher's (see launchers/).
#pragma once

#include <string>
#include <vector>

#include "sbx/fs_plan.hpp"

namespace sbx::linux_sandbox {

inline std::vector<std::string> bwrap_fs_args(const FsPlan& plan) {
    // Without isolation (filesystem.disabled) the command sees the filesystem as you do.
    std::vector<std::string> a{plan.isolated ? "--ro-bind" : "--bind", "/", "/", "--dev", "/dev", "--proc", "/proc"};
    std::vector<std::string> make_read_only;
    for (const auto& m : plan.mounts) {
        switch (m.kind) {
            case MountKind::bind: a.insert(a.end(), {"--bind", m.source, m.path}); break;
            case MountKind::ro_bind: a.insert(a.end(), {"--ro-bind", m.source, m.path}); break;
            case MountKind::pin: a.insert(a.end(), {"--bind", m.path, m.path}); break;
            case MountKind::mask_dir:
                a.insert(a.end(), {"--tmpfs", m.path});
                make_read_only.push_back(m.path);
                break;
            case MountKind::mask_file: a.insert(a.end(), {"--ro-bind", "/dev/null", m.path}); break;
        }
    }
    for (const auto& p : make_read_only) a.insert(a.end(), {"--remount-ro", p});
    return a;
}

}  // namespace sbx::linux_sandbox
