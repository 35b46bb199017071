// launchers/base/connect_filter.hpp - the filter whose listener the launcher's connect broker serves.
//
// Six instructions: connect() of the native architecture waits for the
// listener (SECCOMP_RET_USER_NOTIF); every other call, and every call of
// another architecture, passes (the whole filter, loaded before it, refuses
// or kills those). The stage loads it last, so that its listener, the newest
// filter's, is the one the kernel notifies (of filters that all answer
// USER_NOTIF, the newest wins); bubblewrap's init, which runs without it,
// gets ENOSYS from the whole filter's own USER_NOTIF, having no listener.
// Written by hand: the stage is linked statically, without libseccomp.
#pragma once

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/syscall.h>

#include <array>
#include <cstddef>

namespace sbx::launcher {

#if defined(__x86_64__)
inline constexpr unsigned kNativeAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
inline constexpr unsigned kNativeAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "sbx-linux knows the seccomp architecture of x86_64 and aarch64 only"
#endif

inline std::array<sock_filter, 6> connect_filter() {
    return {{
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, arch))),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kNativeAuditArch, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, static_cast<unsigned>(offsetof(seccomp_data, nr))),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, static_cast<unsigned>(SYS_connect), 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    }};
}

}  // namespace sbx::launcher
