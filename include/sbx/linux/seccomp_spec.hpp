// sbx/linux/seccomp_spec.hpp - the seccomp filter of sbx-linux, as data.
//
// Decides which system calls the sandboxed command may not make, and with which
// error it is answered, from a fixed rule table and SeccompOptions. Everything
// not named here is allowed (the filter's default action). The launcher turns
// the rules into a libseccomp filter (launchers/linux/seccomp_filter.hpp); this header
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

#include "sbx/core/inline.hpp"

namespace sbx::linux_sandbox {

// What the filter does with a call. `allow` is the default action only; no rule
// carries it (a rule exists to refuse something).
enum class SeccompAction {
    allow,
    errno_eperm,            // fail with EPERM: the call is refused
    errno_enosys,           // fail with ENOSYS: the call "does not exist", so libc falls back
    errno_eafnosupport,     // fail with EAFNOSUPPORT: the socket family "does not exist"
    errno_eprotonosupport,  // fail with EPROTONOSUPPORT: the protocol "does not exist"
    notify,                 // wait for the launcher's answer (seccomp user notification): not a refusal
};

inline constexpr SeccompAction kSeccompDefaultAction = SeccompAction::allow;

// The errno values the actions stand for.
inline constexpr int kEPERM = 1;
inline constexpr int kENOSYS = 38;
inline constexpr int kEAFNOSUPPORT = 97;
inline constexpr int kEPROTONOSUPPORT = 93;

constexpr int seccomp_errno(SeccompAction a) noexcept {
    switch (a) {
        case SeccompAction::allow: return 0;
        case SeccompAction::errno_eperm: return kEPERM;
        case SeccompAction::errno_enosys: return kENOSYS;
        case SeccompAction::errno_eafnosupport: return kEAFNOSUPPORT;
        case SeccompAction::errno_eprotonosupport: return kEPROTONOSUPPORT;
        case SeccompAction::notify: return 0;
    }
    return kEPERM;
}

// How an argument is compared, on all 64 bits of the register (libseccomp's
// SCMP_CMP_*). A rule compares each argument at most once: libseccomp refuses two
// comparisons of one argument in one rule, so a set of values is several rules.
enum class SeccompCmp {
    masked_eq,  // (argument & mask) == value
    ne,         // argument != value
    gt,         // argument > value, unsigned
};

// One comparison of argument `arg` (0-5); `mask` is read by masked_eq only.
struct SeccompArgCheck {
    unsigned arg = 0;
    SeccompCmp cmp = SeccompCmp::masked_eq;
    std::uint64_t mask = 0;
    std::uint64_t value = 0;
};

// Whether a check holds for the argument's 64-bit value, as the filter decides.
constexpr bool check_holds(const SeccompArgCheck& c, std::uint64_t v) noexcept {
    switch (c.cmp) {
        case SeccompCmp::masked_eq: return (v & c.mask) == c.value;
        case SeccompCmp::ne: return v != c.value;
        case SeccompCmp::gt: return v > c.value;
    }
    return false;
}

// Which switch of SeccompOptions can drop a rule.
enum class SeccompGroup {
    always,        // part of every filter
    unix_sockets,  // dropped when SeccompOptions::allow_unix_sockets or ::connect_broker
    unix_pairs,    // dropped when SeccompOptions::allow_unix_sockets
    unix_brokered, // with SeccompOptions::connect_broker, unless ::allow_unix_sockets
    connect,       // with SeccompOptions::connect_broker: the launcher answers connect()
    mounts,        // the mount family: in the whole filter, and in the second part alone (SeccompPart)
    whole_only,    // in the whole filter only: what the two parts refuse between them, as one rule
    first_only,    // in the first part only
    second_only,   // in the second part only
    host_network,  // only with SeccompOptions::host_network (the weaker sandbox)
};

// Which part of the filter is built. Where the stage makes the sandbox's mounts
// (launchers/stage/mounts.cpp), bubblewrap loads the first part into its init
// and the stage: every rule but the mount family's, and of unshare only the
// calls with flags other than exactly CLONE_NEWUSER (the stage makes the user
// namespace --disable-userns would have made). The stage loads the second part
// once its mounts are made and its capabilities dropped: the mount family and
// unshare(CLONE_NEWUSER). The command runs under both, which refuse what the
// whole filter does.
enum class SeccompPart {
    whole,
    all_but_mounts,
    mounts_only,
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
    SeccompPart part = SeccompPart::whole;
    // The command shares the host's network (the weaker sandbox, where there is
    // no network namespace): IPv4 and IPv6 sockets are TCP streams only, whose
    // connections Landlock keeps to the proxy's ports; a datagram, raw or other
    // kind would reach the network (DNS included) past the proxy.
    bool host_network = false;
    // The launcher answers every connect() (launchers/linux/connect_broker.hpp):
    // a Unix stream or seqpacket socket may be made, and connects where the
    // launcher decides. The stage loads the filter whose listener the launcher
    // serves, last; this one also sends connect() to a listener where bubblewrap
    // loads it, so that bubblewrap's init (pid 1), which runs without the
    // stage's, gets ENOSYS. The weaker sandbox has no such init, and the stage
    // loads this filter before the connect broker's there: the rule is left
    // out (the newest filter's listener is the one notified).
    bool connect_broker = false;
};

namespace detail {

inline constexpr std::uint64_t kLow32 = 0xffffffff;  // int and unsigned int arguments

// Kernel constants (include/uapi/linux/sched.h, socket.h, netlink.h, personality.h,
// asm-generic/ioctls.h).
inline constexpr std::uint64_t kCLONE_NEWTIME = 0x00000080;
inline constexpr std::uint64_t kCLONE_NEWNS = 0x00020000;
inline constexpr std::uint64_t kCLONE_NEWCGROUP = 0x02000000;
inline constexpr std::uint64_t kCLONE_NEWUTS = 0x04000000;
inline constexpr std::uint64_t kCLONE_NEWIPC = 0x08000000;
inline constexpr std::uint64_t kCLONE_NEWUSER = 0x10000000;
inline constexpr std::uint64_t kCLONE_NEWPID = 0x20000000;
inline constexpr std::uint64_t kCLONE_NEWNET = 0x40000000;
inline constexpr std::uint64_t kAF_UNIX = 1;
inline constexpr std::uint64_t kAF_INET = 2;
inline constexpr std::uint64_t kAF_INET6 = 10;
inline constexpr std::uint64_t kAF_NETLINK = 16;
inline constexpr std::uint64_t kNETLINK_ROUTE = 0;
inline constexpr std::uint64_t kSOCK_TYPE_MASK = 0xf;
inline constexpr std::uint64_t kSOCK_DGRAM = 2;
inline constexpr std::uint64_t kSOCK_RAW = 3;
inline constexpr std::uint64_t kSOCK_RDM = 4;
inline constexpr std::uint64_t kSOCK_SEQPACKET = 5;
inline constexpr std::uint64_t kSOCK_DCCP = 6;
inline constexpr std::uint64_t kSOCK_PACKET = 10;
inline constexpr std::uint64_t kTIOCSTI = 0x5412;
inline constexpr std::uint64_t kTIOCLINUX = 0x541c;
inline constexpr std::uint64_t kTIOCSETD = 0x5423;
inline constexpr std::uint64_t kPER_LINUX32 = 0x0008;
inline constexpr std::uint64_t kUNAME26 = 0x0020000;
inline constexpr std::uint64_t kADDR_NO_RANDOMIZE = 0x0040000;
inline constexpr std::uint64_t kPERSONALITY_QUERY = 0xffffffff;  // reads the persona, sets nothing

constexpr SeccompArgCheck low32_eq(unsigned arg, std::uint64_t value) {
    return SeccompArgCheck{arg, SeccompCmp::masked_eq, kLow32, value};
}

constexpr SeccompRule refuse(std::string_view name, std::string_view reason) {
    return SeccompRule{name, SeccompAction::errno_eperm, {}, 0, SeccompGroup::always, reason};
}

// clone with one namespace flag set: "any of the namespace flags" is one rule per
// flag, each a masked comparison.
constexpr SeccompRule refuse_mounting(std::string_view name, std::string_view reason) {
    return SeccompRule{name, SeccompAction::errno_eperm, {}, 0, SeccompGroup::mounts, reason};
}

constexpr SeccompRule refuse_clone_flag(std::uint64_t flag, std::string_view reason) {
    return SeccompRule{"clone", SeccompAction::errno_eperm, {SeccompArgCheck{0, SeccompCmp::masked_eq, flag, flag}},
                       1, SeccompGroup::always, reason};
}

constexpr SeccompRule refuse_ioctl(std::uint64_t request, std::string_view reason) {
    return SeccompRule{"ioctl", SeccompAction::errno_eperm, {low32_eq(1, request)}, 1, SeccompGroup::always, reason};
}

constexpr SeccompRule refuse_inet_type(std::uint64_t family, std::uint64_t type, std::string_view reason) {
    return SeccompRule{"socket",
                       SeccompAction::errno_eperm,
                       {low32_eq(0, family), SeccompArgCheck{1, SeccompCmp::masked_eq, kSOCK_TYPE_MASK, type}},
                       2,
                       SeccompGroup::host_network,
                       reason};
}

// socket() or socketpair() of AF_UNIX with `type` (SOCK_DGRAM, SOCK_RAW), in `group`.
constexpr SeccompRule refuse_unix_type(std::string_view syscall, std::uint64_t type, SeccompGroup group,
                                       std::string_view reason) {
    return SeccompRule{syscall,
                       SeccompAction::errno_eperm,
                       {low32_eq(0, kAF_UNIX), SeccompArgCheck{1, SeccompCmp::masked_eq, kSOCK_TYPE_MASK, type}},
                       2,
                       group,
                       reason};
}

// The rules every filter starts with, in the order the filter is built.
inline constexpr std::array kFixedRules{
    // Namespaces: a new namespace would let the command undo the sandbox's view.
    SeccompRule{"unshare", SeccompAction::errno_eperm, {}, 0, SeccompGroup::whole_only,
                "creating namespaces could undo the sandbox's mounts and network"},
    SeccompRule{"unshare", SeccompAction::errno_eperm, {SeccompArgCheck{0, SeccompCmp::ne, 0, kCLONE_NEWUSER}}, 1,
                SeccompGroup::first_only,
                "creating namespaces could undo the sandbox's mounts and network (but the stage's user namespace)"},
    SeccompRule{"unshare", SeccompAction::errno_eperm, {low32_eq(0, kCLONE_NEWUSER)}, 1, SeccompGroup::second_only,
                "a user namespace, once the stage has made the sandbox's"},
    refuse("setns", "joining another namespace leaves the sandbox"),
    refuse_clone_flag(kCLONE_NEWNS, "clone into a new mount namespace"),
    refuse_clone_flag(kCLONE_NEWCGROUP, "clone into a new cgroup namespace"),
    refuse_clone_flag(kCLONE_NEWUTS, "clone into a new UTS namespace"),
    refuse_clone_flag(kCLONE_NEWIPC, "clone into a new IPC namespace"),
    refuse_clone_flag(kCLONE_NEWUSER, "clone into a new user namespace"),
    refuse_clone_flag(kCLONE_NEWPID, "clone into a new PID namespace"),
    refuse_clone_flag(kCLONE_NEWNET, "clone into a new network namespace"),
    refuse_clone_flag(kCLONE_NEWTIME, "clone into a new time namespace"),
    SeccompRule{"clone3", SeccompAction::errno_enosys, {}, 0, SeccompGroup::always,
                "its flags sit in memory seccomp cannot read; ENOSYS makes libc fall back to clone"},
    // The mount family, old and new API (missing the new one was CVE-2021-41133).
    refuse_mounting("mount", "mounting could uncover masked paths"),
    refuse_mounting("umount2", "unmounting could remove a mask"),
    refuse_mounting("pivot_root", "changes the root the sandbox built"),
    refuse("chroot", "changes the root the sandbox built"),
    refuse_mounting("open_tree", "new mount API: clones mounts"),
    refuse_mounting("move_mount", "new mount API: attaches mounts"),
    refuse_mounting("fsopen", "new mount API: creates a filesystem context"),
    refuse_mounting("fsconfig", "new mount API: configures a filesystem context"),
    refuse_mounting("fsmount", "new mount API: makes a mount from a context"),
    refuse_mounting("fspick", "new mount API: reconfigures an existing mount"),
    refuse_mounting("mount_setattr", "new mount API: could make a read-only mount writable"),
    // io_uring performs calls (IORING_OP_SOCKET, openat) that seccomp never sees.
    refuse("io_uring_setup", "io_uring runs operations past the filter"),
    refuse("io_uring_enter", "io_uring runs operations past the filter"),
    refuse("io_uring_register", "io_uring runs operations past the filter"),
    // Kernel keyrings belong to the user, not to a namespace: inside, the caller's
    // session and user keys would be readable and writable (Flatpak refuses them too).
    refuse("add_key", "the kernel keyrings are the caller's: a key added inside is there outside"),
    refuse("request_key", "the kernel keyrings are the caller's: their keys would be readable inside"),
    refuse("keyctl", "the kernel keyrings are the caller's: keyctl reads, links and changes their keys"),
    // Kernel surfaces with no use inside and a record of exploits.
    refuse("perf_event_open", "performance counters observe the kernel and other processes, and the subsystem is a "
                              "frequent source of kernel exploits"),
    refuse("userfaultfd", "lets a process stall the kernel at a page fault mid-copy, the usual way to win a race "
                          "in a kernel exploit"),
    // Unix sockets reach services outside the sandbox (the network goes through the proxy).
    SeccompRule{"socket", SeccompAction::errno_eperm, {low32_eq(0, kAF_UNIX)}, 1, SeccompGroup::unix_sockets,
                "a Unix socket can connect to host services"},
    // With the launcher deciding connect(), a stream or seqpacket socket stays:
    // it reaches a path only through connect. A datagram one would reach any
    // path with sendto or sendmsg, which name it themselves (SOCK_RAW is a
    // datagram socket for AF_UNIX).
    refuse_unix_type("socket", kSOCK_DGRAM, SeccompGroup::unix_brokered,
                     "a datagram socket sends to any path with sendto, past the launcher's decision"),
    refuse_unix_type("socket", kSOCK_RAW, SeccompGroup::unix_brokered,
                     "a raw Unix socket is a datagram one, which sends to any path with sendto"),
    SeccompRule{"connect", SeccompAction::notify, {}, 0, SeccompGroup::connect,
                "the launcher decides each connection: a Unix socket by its path, any other as the sandbox's own "
                "network namespace would"},
    // A datagram or raw end can be re-targeted with connect(AF_UNSPEC) and then
    // sent to any socket outside; a stream or seqpacket pair stays connected to
    // its other end for ever. Pipes between processes use stream pairs, and Rust's
    // standard library spawns processes through a seqpacket pair (cargo, rustc).
    refuse_unix_type("socketpair", kSOCK_DGRAM, SeccompGroup::unix_pairs, "a datagram end can be re-targeted with connect"),
    refuse_unix_type("socketpair", kSOCK_RAW, SeccompGroup::unix_pairs, "a raw end can be re-targeted with connect"),
    // A Netlink socket other than NETLINK_ROUTE talks to kernel subsystems
    // (audit, uevents, netfilter, crypto, generic families).
    SeccompRule{"socket",
                SeccompAction::errno_eprotonosupport,
                {low32_eq(0, kAF_NETLINK), SeccompArgCheck{2, SeccompCmp::ne, 0, kNETLINK_ROUTE}},
                2,
                SeccompGroup::always,
                "Netlink serves NETLINK_ROUTE only: the sandbox's own interfaces and addresses"},
    // Terminal injection.
    refuse_ioctl(kTIOCSTI, "pushes input into the terminal (CVE-2017-5226)"),
    refuse_ioctl(kTIOCLINUX, "pastes the console selection as input (CVE-2023-28100)"),
    refuse_ioctl(kTIOCSETD, "sets a terminal's line discipline: N_NULL on a terminal it was handed (the caller's, "
                            "with --no-pty) leaves it dead after the run"),
    // On the host's network (SeccompOptions::host_network): TCP streams only.
    refuse_inet_type(kAF_INET, kSOCK_DGRAM, "UDP on the host's network reaches any server, DNS included, past the proxy"),
    refuse_inet_type(kAF_INET6, kSOCK_DGRAM, "UDP on the host's network reaches any server, DNS included, past the proxy"),
    refuse_inet_type(kAF_INET, kSOCK_RAW, "raw IP on the host's network reaches any server past the proxy"),
    refuse_inet_type(kAF_INET6, kSOCK_RAW, "raw IP on the host's network reaches any server past the proxy"),
    refuse_inet_type(kAF_INET, kSOCK_RDM, "reliable datagrams on the host's network bypass the proxy"),
    refuse_inet_type(kAF_INET6, kSOCK_RDM, "reliable datagrams on the host's network bypass the proxy"),
    refuse_inet_type(kAF_INET, kSOCK_SEQPACKET, "SCTP on the host's network bypasses the proxy and Landlock's TCP rules"),
    refuse_inet_type(kAF_INET6, kSOCK_SEQPACKET, "SCTP on the host's network bypasses the proxy and Landlock's TCP rules"),
    refuse_inet_type(kAF_INET, kSOCK_DCCP, "DCCP on the host's network bypasses the proxy and Landlock's TCP rules"),
    refuse_inet_type(kAF_INET6, kSOCK_DCCP, "DCCP on the host's network bypasses the proxy and Landlock's TCP rules"),
    refuse_inet_type(kAF_INET, kSOCK_PACKET, "packet sockets on the host's network bypass the proxy"),
    refuse_inet_type(kAF_INET6, kSOCK_PACKET, "packet sockets on the host's network bypass the proxy"),
};

}  // namespace detail

// The socket families the command may open; socket() of any other answers
// EAFNOSUPPORT, as on a kernel without it. AF_VSOCK in particular is not
// isolated by a network namespace and would reach the hypervisor past the proxy.
struct SocketFamily {
    std::uint64_t family = 0;
    std::string_view name;
    std::string_view reason;
};

inline constexpr std::array kSocketFamilies{
    SocketFamily{detail::kAF_UNIX, "AF_UNIX",
                 "pipes between processes (socketpair); sockets by path where the settings allow them"},
    SocketFamily{detail::kAF_INET, "AF_INET", "the proxy and the sandbox's own loopback"},
    SocketFamily{detail::kAF_INET6, "AF_INET6", "the sandbox's own loopback; clients that try IPv6 first"},
    SocketFamily{detail::kAF_NETLINK, "AF_NETLINK",
                 "NETLINK_ROUTE only: glibc's getaddrinfo and ip(8) read the sandbox's own interfaces"},
};

// The persona flags personality() may set: PER_LINUX (none) and any mix of
// these; reading the persona (0xffffffff) is allowed too. Refused, among
// others: READ_IMPLIES_EXEC (every readable mapping executable) and
// MMAP_PAGE_ZERO (a page at address 0, the old way into NULL-pointer bugs).
inline constexpr std::uint64_t kPersonaFlagsAllowed =
    detail::kPER_LINUX32 | detail::kUNAME26 | detail::kADDR_NO_RANDOMIZE;

// Whether personality(value) is one the filter lets through.
constexpr bool persona_allowed(std::uint64_t value) noexcept {
    return value == detail::kPERSONALITY_QUERY || (value & ~kPersonaFlagsAllowed) == 0;
}

namespace detail {

constexpr bool family_allowed(std::uint64_t family) noexcept {
    for (const auto& f : kSocketFamilies)
        if (f.family == family) return true;
    return false;
}

constexpr std::uint64_t max_family() noexcept {
    std::uint64_t m = 0;
    for (const auto& f : kSocketFamilies) m = f.family > m ? f.family : m;
    return m;
}

constexpr std::size_t refused_families_below_max() noexcept {
    std::size_t n = 0;
    for (std::uint64_t f = 0; f < max_family(); ++f) n += family_allowed(f) ? 0 : 1;
    return n;
}

inline constexpr std::string_view kFamilyReason = "a socket family outside the allowed list (kSocketFamilies)";

// socket() of a family outside kSocketFamilies: every family above the largest
// allowed one (a high bit in the register included), and each one below it that
// is not allowed. socketpair() exists for AF_UNIX only.
constexpr auto family_rules() {
    std::array<SeccompRule, refused_families_below_max() + 2> out{};
    std::size_t i = 0;
    out[i++] = SeccompRule{"socket", SeccompAction::errno_eafnosupport,
                           {SeccompArgCheck{0, SeccompCmp::gt, 0, max_family()}}, 1, SeccompGroup::always,
                           kFamilyReason};
    for (std::uint64_t f = 0; f < max_family(); ++f)
        if (!family_allowed(f))
            out[i++] = SeccompRule{"socket", SeccompAction::errno_eafnosupport, {low32_eq(0, f)}, 1,
                                   SeccompGroup::always, kFamilyReason};
    out[i++] = SeccompRule{"socketpair", SeccompAction::errno_eafnosupport,
                           {SeccompArgCheck{0, SeccompCmp::ne, 0, kAF_UNIX}}, 1, SeccompGroup::always,
                           "a socket pair of another family than AF_UNIX"};
    return out;
}

inline constexpr std::string_view kPersonaReason =
    "a persona outside PER_LINUX, PER_LINUX32, UNAME26 and ADDR_NO_RANDOMIZE (kPersonaFlagsAllowed)";

constexpr std::size_t count_bits(std::uint64_t v) noexcept {
    std::size_t n = 0;
    for (; v != 0; v &= v - 1) ++n;
    return n;
}

// personality(value) with !persona_allowed(value). A rule compares an argument
// once, so the set is a union of masked comparisons:
//   - any bit above the low 32 (the kernel would read the low 32 only);
//   - bit 0 set (a flag that is not allowed) with a lowest zero bit z, one rule
//     per z in 1..31: that value has a refused bit and is not 0xffffffff;
//   - bit 0 clear with another refused bit i set, one rule per i.
// Every refused value has one of these shapes, and no allowed value has any.
constexpr auto personality_rules() {
    static_assert((kPersonaFlagsAllowed & 1) == 0, "the rules below rely on bit 0 being refused");
    constexpr std::size_t refused_bits = 32 - count_bits(kPersonaFlagsAllowed);
    std::array<SeccompRule, 1 + 31 + (refused_bits - 1)> out{};
    std::size_t i = 0;
    out[i++] = SeccompRule{"personality", SeccompAction::errno_eperm,
                           {SeccompArgCheck{0, SeccompCmp::gt, 0, kLow32}}, 1, SeccompGroup::always, kPersonaReason};
    for (unsigned z = 1; z < 32; ++z) {
        const std::uint64_t below = (std::uint64_t{1} << z) - 1;
        out[i++] = SeccompRule{"personality", SeccompAction::errno_eperm,
                               {SeccompArgCheck{0, SeccompCmp::masked_eq, below | (std::uint64_t{1} << z), below}}, 1,
                               SeccompGroup::always, kPersonaReason};
    }
    for (unsigned b = 1; b < 32; ++b) {
        const std::uint64_t bit = std::uint64_t{1} << b;
        if ((kPersonaFlagsAllowed & bit) != 0) continue;
        out[i++] = SeccompRule{"personality", SeccompAction::errno_eperm,
                               {SeccompArgCheck{0, SeccompCmp::masked_eq, bit | 1, bit}}, 1, SeccompGroup::always,
                               kPersonaReason};
    }
    return out;
}

template <std::size_t A, std::size_t B, std::size_t C>
constexpr std::array<SeccompRule, A + B + C> join(const std::array<SeccompRule, A>& a,
                                                  const std::array<SeccompRule, B>& b,
                                                  const std::array<SeccompRule, C>& c) {
    std::array<SeccompRule, A + B + C> out{};
    std::size_t i = 0;
    for (const auto& r : a) out[i++] = r;
    for (const auto& r : b) out[i++] = r;
    for (const auto& r : c) out[i++] = r;
    return out;
}

}  // namespace detail

// The rules, in the order the filter is built: the fixed ones, the socket
// families, the personas.
inline constexpr auto kSeccompRules = detail::join(detail::kFixedRules, detail::family_rules(),
                                                   detail::personality_rules());

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
    const SeccompPart part = options.part;
    switch (rule.group) {
        case SeccompGroup::always: return part != SeccompPart::mounts_only;
        case SeccompGroup::unix_sockets:
            return part != SeccompPart::mounts_only && !options.allow_unix_sockets && !options.connect_broker;
        case SeccompGroup::unix_pairs: return part != SeccompPart::mounts_only && !options.allow_unix_sockets;
        case SeccompGroup::unix_brokered:
            return part != SeccompPart::mounts_only && !options.allow_unix_sockets && options.connect_broker;
        case SeccompGroup::connect:
            return part != SeccompPart::mounts_only && options.connect_broker && !options.host_network;
        case SeccompGroup::mounts: return part != SeccompPart::all_but_mounts;
        case SeccompGroup::whole_only: return part == SeccompPart::whole;
        case SeccompGroup::first_only: return part == SeccompPart::all_but_mounts;
        case SeccompGroup::second_only: return part == SeccompPart::mounts_only;
        case SeccompGroup::host_network: return part != SeccompPart::mounts_only && options.host_network;
    }
    return true;
}

// The rules a filter for `options` holds, in table order.
SBX_INLINE std::vector<SeccompRule> seccomp_rules(const SeccompOptions& options);

// The index in kSeccompRules of the first rule for `options` that refuses
// syscall(args), or kSeccompRules.size() when the filter allows the call. This is
// the table's meaning; the filter libseccomp builds from it may pick another of
// several matching rules, but refuses then too.
constexpr std::size_t refusing_index(const SeccompOptions& options, std::string_view syscall,
                                     const std::array<std::uint64_t, 6>& args) {
    for (std::size_t i = 0; i < kSeccompRules.size(); ++i) {
        const SeccompRule& r = kSeccompRules[i];
        if (r.syscall != syscall || r.action == SeccompAction::notify || !rule_applies(r, options)) continue;
        bool all = true;
        for (std::size_t c = 0; c < r.check_count; ++c) all = all && check_holds(r.checks[c], args[r.checks[c].arg]);
        if (all) return i;
    }
    return kSeccompRules.size();
}

// The same rule, or nullptr when the filter allows the call.
SBX_INLINE const SeccompRule* refusing_rule(const SeccompOptions& options, std::string_view syscall,
                                        const std::array<std::uint64_t, 6>& args);

namespace detail {

constexpr bool rules_well_formed() {
    for (const auto& r : kSeccompRules) {
        if (r.syscall.empty() || r.reason.empty()) return false;
        if (r.action == SeccompAction::allow) return false;
        if (r.action == SeccompAction::notify && r.group != SeccompGroup::connect) return false;
        if (r.check_count > r.checks.size()) return false;
        for (std::size_t i = 0; i < r.check_count; ++i) {
            const auto& c = r.checks[i];
            if (c.arg > 5) return false;
            if (c.cmp == SeccompCmp::masked_eq && (c.mask == 0 || (c.value & ~c.mask) != 0)) return false;
            for (std::size_t j = 0; j < i; ++j)
                if (r.checks[j].arg == c.arg) return false;  // libseccomp takes one comparison per argument
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

constexpr bool refuses(std::string_view syscall, std::array<std::uint64_t, 6> args) {
    return refusing_index(SeccompOptions{}, syscall, args) < kSeccompRules.size();
}

static_assert(rules_well_formed(), "every rule needs a name, a reason, a refusing action and checks that can match");
static_assert(count_rules("clone", SeccompAction::errno_eperm) == 8, "one clone rule per namespace flag");
static_assert(count_rules("clone3", SeccompAction::errno_enosys) == 1, "clone3 must answer ENOSYS, not EPERM");
static_assert(count_rules("socketpair", SeccompAction::errno_eperm) == 2, "datagram and raw Unix pairs are refused");
static_assert(!refuses("socketpair", {kAF_UNIX, 5, 0, 0, 0, 0}), "seqpacket pairs stay (Rust spawns through them)");
static_assert(!refuses("socketpair", {kAF_UNIX, 1, 0, 0, 0, 0}), "stream pairs stay (pipes)");
static_assert(refuses("socket", {40, 1, 0, 0, 0, 0}), "AF_VSOCK is refused");
static_assert(refuses("socket", {0x100000002, 1, 0, 0, 0, 0}), "a high bit does not pass a refused family off");
static_assert(!refuses("socket", {kAF_INET6, 1, 0, 0, 0, 0}) && !refuses("socket", {kAF_NETLINK, 3, 0, 0, 0, 0}));
static_assert(refuses("socket", {kAF_NETLINK, 3, 9, 0, 0, 0}), "Netlink other than NETLINK_ROUTE is refused");
constexpr bool refuses_on_host_network(std::string_view syscall, std::array<std::uint64_t, 6> args) {
    return refusing_index(SeccompOptions{false, SeccompPart::whole, true}, syscall, args) < kSeccompRules.size();
}
constexpr bool refuses_brokered(std::string_view syscall, std::array<std::uint64_t, 6> args) {
    SeccompOptions o;
    o.connect_broker = true;
    return refusing_index(o, syscall, args) < kSeccompRules.size();
}
static_assert(refuses("socket", {kAF_UNIX, 1, 0, 0, 0, 0}), "without the broker every Unix socket is refused");
static_assert(!refuses_brokered("socket", {kAF_UNIX, 1 | 0x80000, 0, 0, 0, 0}) &&
                  !refuses_brokered("socket", {kAF_UNIX, kSOCK_SEQPACKET, 0, 0, 0, 0}),
              "with the broker, Unix stream and seqpacket sockets may be made: connect() is decided");
static_assert(refuses_brokered("socket", {kAF_UNIX, kSOCK_DGRAM | 0x800, 0, 0, 0, 0}) &&
                  refuses_brokered("socket", {kAF_UNIX, kSOCK_RAW, 0, 0, 0, 0}),
              "with the broker, a Unix datagram socket is still refused: sendto names its own path");
static_assert(!refuses_brokered("connect", {3, 0, 0, 0, 0, 0}), "connect waits for the launcher; it is no refusal");
static_assert(refuses_brokered("socketpair", {kAF_UNIX, kSOCK_DGRAM, 0, 0, 0, 0}) &&
                  refuses_brokered("socketpair", {kAF_UNIX, kSOCK_RAW, 0, 0, 0, 0}),
              "with the broker, datagram and raw pairs are still refused");
static_assert(!refuses("socket", {kAF_INET, kSOCK_DGRAM, 0, 0, 0, 0}), "UDP stays inside a network namespace");
static_assert(refuses_on_host_network("socket", {kAF_INET, kSOCK_DGRAM | 0x80000, 0, 0, 0, 0}) &&
                  refuses_on_host_network("socket", {kAF_INET6, kSOCK_DGRAM | 0x800, 0, 0, 0, 0}),
              "on the host's network UDP is refused, whatever flags the type carries");
static_assert(!refuses_on_host_network("socket", {kAF_INET, 1 | 0x80000, 0, 0, 0, 0}) &&
                  !refuses_on_host_network("socket", {kAF_INET6, 1, 0, 0, 0, 0}),
              "TCP streams stay on the host's network");
static_assert(!refuses("personality", {kPERSONALITY_QUERY, 0, 0, 0, 0, 0}) &&
              !refuses("personality", {kADDR_NO_RANDOMIZE | kPER_LINUX32, 0, 0, 0, 0, 0}));
static_assert(refuses("personality", {0x0400000, 0, 0, 0, 0, 0}) && refuses("personality", {0xfffffffe, 0, 0, 0, 0, 0}) &&
              refuses("personality", {0x7fffffff, 0, 0, 0, 0, 0}) && refuses("personality", {1, 0, 0, 0, 0, 0}));

}  // namespace detail

}  // namespace sbx::linux_sandbox

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_LINUX)

namespace sbx::linux_sandbox {

SBX_INLINE std::vector<SeccompRule> seccomp_rules(const SeccompOptions& options) {
    std::vector<SeccompRule> out;
    for (const auto& r : kSeccompRules)
        if (rule_applies(r, options)) out.push_back(r);
    return out;
}

SBX_INLINE const SeccompRule* refusing_rule(const SeccompOptions& options, std::string_view syscall,
                                        const std::array<std::uint64_t, 6>& args) {
    const std::size_t i = refusing_index(options, syscall, args);
    return i < kSeccompRules.size() ? &kSeccompRules[i] : nullptr;
}

}  // namespace sbx::linux_sandbox
#endif
