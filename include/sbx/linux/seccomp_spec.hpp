// sbx/linux/seccomp_spec.hpp - the seccomp filter of sbx-linux, as data.
//
// Decides which system calls the sandboxed command may not make, and with which
// error it is answered, from a fixed rule table and SeccompOptions. Everything
// not named here is allowed (the filter's default action). The launcher turns
// the rules into a libseccomp filter (launchers/seccomp_filter.hpp); this header
// makes no system calls and includes no kernel or libseccomp header, so the
// constants below are plain numbers with the name they stand for.
//
// The argument conditions are the x86_64 and aarch64 calling conventions: clone's
// flags are argument 0 on both (it is argument 1 on s390).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace sbx::linux_sandbox {

// What the filter does with a call. `allow` is the default action only; no rule
// carries it (a rule exists to refuse something).
enum class SeccompAction {
    allow,
    errno_eperm,   // fail with EPERM: the call is refused
    errno_enosys,  // fail with ENOSYS: the call "does not exist", so libc falls back
};

inline constexpr SeccompAction kSeccompDefaultAction = SeccompAction::allow;

// The errno values the actions stand for.
inline constexpr int kEPERM = 1;
inline constexpr int kENOSYS = 38;

// One comparison: (argument `arg` & mask) == value. libseccomp's SCMP_CMP_MASKED_EQ.
struct SeccompArgCheck {
    unsigned arg = 0;
    std::uint64_t mask = 0;
    std::uint64_t value = 0;
};

// Which switch of SeccompOptions can drop a rule.
enum class SeccompGroup {
    always,        // part of every filter
    unix_sockets,  // dropped when SeccompOptions::allow_unix_sockets
};

// A rule matches when every one of its checks holds (none: every call matches).
struct SeccompRule {
    std::string_view syscall;
    SeccompAction action = SeccompAction::errno_eperm;
    std::array<SeccompArgCheck, 2> checks{};
    std::size_t check_count = 0;
    SeccompGroup group = SeccompGroup::always;
    std::string_view reason;
};

struct SeccompOptions {
    bool allow_unix_sockets = false;  // keep socket(AF_UNIX) and every socketpair(AF_UNIX)
};

namespace detail {

inline constexpr std::uint64_t kLow32 = 0xffffffff;  // int and unsigned int arguments

// Kernel constants (include/uapi/linux/sched.h, socket.h, asm-generic/ioctls.h).
inline constexpr std::uint64_t kCLONE_NEWTIME = 0x00000080;
inline constexpr std::uint64_t kCLONE_NEWNS = 0x00020000;
inline constexpr std::uint64_t kCLONE_NEWCGROUP = 0x02000000;
inline constexpr std::uint64_t kCLONE_NEWUTS = 0x04000000;
inline constexpr std::uint64_t kCLONE_NEWIPC = 0x08000000;
inline constexpr std::uint64_t kCLONE_NEWUSER = 0x10000000;
inline constexpr std::uint64_t kCLONE_NEWPID = 0x20000000;
inline constexpr std::uint64_t kCLONE_NEWNET = 0x40000000;
inline constexpr std::uint64_t kAF_UNIX = 1;
inline constexpr std::uint64_t kSOCK_TYPE_MASK = 0xf;
inline constexpr std::uint64_t kSOCK_DGRAM = 2;
inline constexpr std::uint64_t kSOCK_RAW = 3;
inline constexpr std::uint64_t kSOCK_SEQPACKET = 5;
inline constexpr std::uint64_t kTIOCSTI = 0x5412;
inline constexpr std::uint64_t kTIOCLINUX = 0x541c;

constexpr SeccompRule refuse(std::string_view name, std::string_view reason) {
    return SeccompRule{name, SeccompAction::errno_eperm, {}, 0, SeccompGroup::always, reason};
}

// clone with one namespace flag set: seccomp can only test equality, so "any of
// the namespace flags" is one rule per flag.
constexpr SeccompRule refuse_clone_flag(std::uint64_t flag, std::string_view reason) {
    return SeccompRule{"clone", SeccompAction::errno_eperm, {SeccompArgCheck{0, flag, flag}}, 1,
                       SeccompGroup::always, reason};
}

constexpr SeccompRule refuse_ioctl(std::uint64_t request, std::string_view reason) {
    return SeccompRule{"ioctl", SeccompAction::errno_eperm, {SeccompArgCheck{1, kLow32, request}}, 1,
                       SeccompGroup::always, reason};
}

constexpr SeccompRule refuse_unix_socketpair(std::uint64_t type, std::string_view reason) {
    return SeccompRule{"socketpair",
                       SeccompAction::errno_eperm,
                       {SeccompArgCheck{0, kLow32, kAF_UNIX}, SeccompArgCheck{1, kSOCK_TYPE_MASK, type}},
                       2,
                       SeccompGroup::unix_sockets,
                       reason};
}

}  // namespace detail

// The rules, in the order the filter is built.
inline constexpr std::array kSeccompRules{
    // Namespaces: a new namespace would let the command undo the sandbox's view.
    detail::refuse("unshare", "creating namespaces could undo the sandbox's mounts and network"),
    detail::refuse("setns", "joining another namespace leaves the sandbox"),
    detail::refuse_clone_flag(detail::kCLONE_NEWNS, "clone into a new mount namespace"),
    detail::refuse_clone_flag(detail::kCLONE_NEWCGROUP, "clone into a new cgroup namespace"),
    detail::refuse_clone_flag(detail::kCLONE_NEWUTS, "clone into a new UTS namespace"),
    detail::refuse_clone_flag(detail::kCLONE_NEWIPC, "clone into a new IPC namespace"),
    detail::refuse_clone_flag(detail::kCLONE_NEWUSER, "clone into a new user namespace"),
    detail::refuse_clone_flag(detail::kCLONE_NEWPID, "clone into a new PID namespace"),
    detail::refuse_clone_flag(detail::kCLONE_NEWNET, "clone into a new network namespace"),
    detail::refuse_clone_flag(detail::kCLONE_NEWTIME, "clone into a new time namespace"),
    SeccompRule{"clone3", SeccompAction::errno_enosys, {}, 0, SeccompGroup::always,
                "its flags sit in memory seccomp cannot read; ENOSYS makes libc fall back to clone"},
    // The mount family, old and new API (missing the new one was CVE-2021-41133).
    detail::refuse("mount", "mounting could uncover masked paths"),
    detail::refuse("umount2", "unmounting could remove a mask"),
    detail::refuse("pivot_root", "changes the root the sandbox built"),
    detail::refuse("chroot", "changes the root the sandbox built"),
    detail::refuse("open_tree", "new mount API: clones mounts"),
    detail::refuse("move_mount", "new mount API: attaches mounts"),
    detail::refuse("fsopen", "new mount API: creates a filesystem context"),
    detail::refuse("fsconfig", "new mount API: configures a filesystem context"),
    detail::refuse("fsmount", "new mount API: makes a mount from a context"),
    detail::refuse("fspick", "new mount API: reconfigures an existing mount"),
    detail::refuse("mount_setattr", "new mount API: could make a read-only mount writable"),
    // io_uring performs calls (IORING_OP_SOCKET, openat) that seccomp never sees.
    detail::refuse("io_uring_setup", "io_uring runs operations past the filter"),
    detail::refuse("io_uring_enter", "io_uring runs operations past the filter"),
    detail::refuse("io_uring_register", "io_uring runs operations past the filter"),
    // Unix sockets reach services outside the sandbox (the network goes through the proxy).
    SeccompRule{"socket", SeccompAction::errno_eperm, {SeccompArgCheck{0, detail::kLow32, detail::kAF_UNIX}}, 1,
                SeccompGroup::unix_sockets, "a Unix socket can connect to host services"},
    detail::refuse_unix_socketpair(detail::kSOCK_DGRAM,
                                   "a datagram end can be re-targeted with connect (stream pairs stay for pipes)"),
    detail::refuse_unix_socketpair(detail::kSOCK_SEQPACKET,
                                   "a seqpacket end is not needed by pipes between processes"),
    detail::refuse_unix_socketpair(detail::kSOCK_RAW, "a raw end is not needed by pipes between processes"),
    // Terminal injection.
    detail::refuse_ioctl(detail::kTIOCSTI, "pushes input into the terminal (CVE-2017-5226)"),
    detail::refuse_ioctl(detail::kTIOCLINUX, "pastes the console selection as input (CVE-2023-28100)"),
};

// A system call that a rule names but an architecture does not have: the filter
// skips it there instead of failing. `arch` is the name `uname -m` prints.
struct AbsentSyscall {
    std::string_view arch;
    std::string_view syscall;
    std::string_view reason;
};

// Every rule's system call exists on x86_64 and aarch64, so nothing is listed yet.
inline constexpr std::array<AbsentSyscall, 0> kAbsentSyscalls{};

constexpr bool documented_absent(std::string_view arch, std::string_view syscall) {
    for (const auto& a : kAbsentSyscalls)
        if (a.arch == arch && a.syscall == syscall) return true;
    return false;
}

constexpr bool rule_applies(const SeccompRule& rule, const SeccompOptions& options) {
    switch (rule.group) {
        case SeccompGroup::always: return true;
        case SeccompGroup::unix_sockets: return !options.allow_unix_sockets;
    }
    return true;
}

// The rules a filter for `options` holds, in table order.
inline std::vector<SeccompRule> seccomp_rules(const SeccompOptions& options) {
    std::vector<SeccompRule> out;
    for (const auto& r : kSeccompRules)
        if (rule_applies(r, options)) out.push_back(r);
    return out;
}

namespace detail {

constexpr bool rules_well_formed() {
    for (const auto& r : kSeccompRules) {
        if (r.syscall.empty() || r.reason.empty()) return false;
        if (r.action == SeccompAction::allow) return false;
        if (r.check_count > r.checks.size()) return false;
        for (std::size_t i = 0; i < r.check_count; ++i) {
            const auto& c = r.checks[i];
            if (c.arg > 5 || c.mask == 0 || (c.value & ~c.mask) != 0) return false;  // could never match
        }
    }
    return true;
}

constexpr std::size_t count_rules(std::string_view syscall, SeccompAction action) {
    std::size_t n = 0;
    for (const auto& r : kSeccompRules)
        if (r.syscall == syscall && r.action == action) ++n;
    return n;
}

static_assert(rules_well_formed(), "every rule needs a name, a reason, a refusing action and checks that can match");
static_assert(count_rules("clone", SeccompAction::errno_eperm) == 8, "one clone rule per namespace flag");
static_assert(count_rules("clone3", SeccompAction::errno_enosys) == 1, "clone3 must answer ENOSYS, not EPERM");
static_assert(count_rules("socketpair", SeccompAction::errno_eperm) == 3, "every non-stream Unix pair is refused");

}  // namespace detail

}  // namespace sbx::linux_sandbox
