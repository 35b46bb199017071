// The seccomp filter of sbx-linux: its PFC text against golden files, and the
// filter loaded for real in a forked child.
//
// Golden files: tests/golden/seccomp/ARCH[-unix-sockets].pfc. Set
// SBX_UPDATE_GOLDEN=1 to rewrite them, then review the diff. The text is
// libseccomp's (2.5.4 on Debian 12); another version may lay it out differently.
#include <doctest/doctest.h>

#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sched.h>
#include <seccomp.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstdint>
#include <string>
#include <string_view>
#include <array>
#include <vector>

#include "../../launchers/linux/seccomp_filter.hpp"
#include "../unit/golden.hpp"


namespace {

using sbx::linux_sandbox::SeccompOptions;

std::string pfc(const SeccompOptions& options,
                sbx::linux_sandbox::SeccompArch arch = sbx::linux_sandbox::SeccompArch::native) {
    auto filter = sbx::linux_sandbox::build_filter(options, arch);
    REQUIRE_MESSAGE(filter.has_value(), sbx::to_string(filter.error()));
    auto text = sbx::linux_sandbox::export_pfc(*filter);
    REQUIRE_MESSAGE(text.has_value(), sbx::to_string(text.error()));
    return *text;
}

void check_golden(const std::string& name, const std::string& text) {
    sbx_test::check_golden("seccomp/" + name + ".pfc", text, "seccomp PFC");
}

}  // namespace

TEST_CASE("the seccomp filter's text matches the golden file, for x86_64 and aarch64 alike") {
    using sbx::linux_sandbox::SeccompArch;
    check_golden("x86_64", pfc(SeccompOptions{}, SeccompArch::x86_64));
    check_golden("x86_64-unix-sockets", pfc(SeccompOptions{.allow_unix_sockets = true}, SeccompArch::x86_64));
    check_golden("aarch64", pfc(SeccompOptions{}, SeccompArch::aarch64));
    check_golden("aarch64-unix-sockets", pfc(SeccompOptions{.allow_unix_sockets = true}, SeccompArch::aarch64));
    // The filter a launcher loads is the one for the machine it runs on.
#if defined(__x86_64__)
    CHECK(pfc(SeccompOptions{}) == pfc(SeccompOptions{}, SeccompArch::x86_64));
#elif defined(__aarch64__)
    CHECK(pfc(SeccompOptions{}) == pfc(SeccompOptions{}, SeccompArch::aarch64));
#endif
}

TEST_CASE("allow_unix_sockets drops exactly the Unix socket and socketpair rules") {
    using sbx::linux_sandbox::SeccompGroup;
    const auto all = sbx::linux_sandbox::seccomp_rules(SeccompOptions{});
    const auto open = sbx::linux_sandbox::seccomp_rules(SeccompOptions{.allow_unix_sockets = true});
    CHECK(all.size() == open.size() + 3);
    for (const auto& r : open) CHECK((r.group != SeccompGroup::unix_sockets && r.group != SeccompGroup::unix_pairs));
    for (const auto& r : all)
        if (r.group == SeccompGroup::unix_sockets || r.group == SeccompGroup::unix_pairs)
            CHECK((r.syscall == "socket" || r.syscall == "socketpair"));
}

TEST_CASE("with the connect broker, connect() waits for the launcher and only Unix datagram sockets are refused") {
    using sbx::linux_sandbox::SeccompAction;
    using sbx::linux_sandbox::SeccompGroup;
    const auto plain = sbx::linux_sandbox::seccomp_rules(SeccompOptions{});
    const auto brokered = sbx::linux_sandbox::seccomp_rules(SeccompOptions{.connect_broker = true});
    // The blanket socket(AF_UNIX) refusal gives way to datagram and raw ones, and connect is the launcher's.
    CHECK(brokered.size() == plain.size() + 2);
    std::vector<std::string_view> added;
    for (const auto& r : brokered)
        if (r.group == SeccompGroup::unix_brokered || r.group == SeccompGroup::connect) added.push_back(r.syscall);
    CHECK(added == std::vector<std::string_view>{"socket", "socket", "connect"});
    for (const auto& r : brokered) {
        CHECK(r.group != SeccompGroup::unix_sockets);
        if (r.syscall == "connect") CHECK(r.action == SeccompAction::notify);
    }
    // Every socket open: neither the broker's rules nor the refusals.
    for (const auto& r : sbx::linux_sandbox::seccomp_rules(SeccompOptions{.allow_unix_sockets = true, .connect_broker = true}))
        CHECK((r.group != SeccompGroup::unix_brokered && r.group != SeccompGroup::unix_pairs));
    // libseccomp builds it for both architectures, with the notification
    // (SECCOMP_RET_USER_NOTIF, which its text writes as a number) as connect's action.
    using sbx::linux_sandbox::SeccompArch;
    for (auto arch : {SeccompArch::x86_64, SeccompArch::aarch64}) {
        const std::string text = pfc(SeccompOptions{.connect_broker = true}, arch);
        const auto at = text.find("# filter for syscall \"connect\"");
        REQUIRE(at != std::string::npos);
        CHECK(text.find("action 0x7fc00000;", at) < text.find("# filter for syscall", at + 1));
    }
}

TEST_CASE("the two parts of a split filter refuse together what the whole filter refuses") {
    using sbx::linux_sandbox::SeccompGroup;
    using sbx::linux_sandbox::SeccompPart;
    using sbx::linux_sandbox::refusing_index;
    const std::size_t none = sbx::linux_sandbox::kSeccompRules.size();
    for (bool unix_sockets : {false, true}) {
        const SeccompOptions whole{.allow_unix_sockets = unix_sockets};
        const SeccompOptions first{.allow_unix_sockets = unix_sockets, .part = SeccompPart::all_but_mounts};
        const SeccompOptions second{.allow_unix_sockets = unix_sockets, .part = SeccompPart::mounts_only};
        std::vector<std::string_view> mounting;
        for (const auto& r : sbx::linux_sandbox::seccomp_rules(second)) {
            CHECK((r.group == SeccompGroup::mounts || r.group == SeccompGroup::second_only));
            mounting.push_back(r.syscall);
        }
        CHECK(mounting == std::vector<std::string_view>{"unshare", "mount", "umount2", "pivot_root", "open_tree",
                                                        "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
                                                        "mount_setattr"});
        for (const auto& r : sbx::linux_sandbox::seccomp_rules(first)) CHECK(r.group != SeccompGroup::mounts);
        // Each call of the table, with each flag value that matters: refused by
        // the whole filter exactly when one of the parts refuses it.
        for (const auto& r : sbx::linux_sandbox::kSeccompRules)
            for (std::uint64_t a0 : {std::uint64_t{0}, sbx::linux_sandbox::detail::kCLONE_NEWUSER,
                                     sbx::linux_sandbox::detail::kCLONE_NEWNS, std::uint64_t{0x100000000} | sbx::linux_sandbox::detail::kCLONE_NEWUSER,
                                     std::uint64_t{1}, std::uint64_t{16}}) {
                const std::array<std::uint64_t, 6> args{a0, 0, 0, 0, 0, 0};
                const bool by_whole = refusing_index(whole, r.syscall, args) != none;
                const bool by_parts =
                    refusing_index(first, r.syscall, args) != none || refusing_index(second, r.syscall, args) != none;
                CHECK_MESSAGE(by_whole == by_parts, r.syscall, " ", a0);
            }
    }
    // What the stage does before its second filter is allowed by the first one;
    // what would undo its mounts another way is not.
    const SeccompOptions first{.part = SeccompPart::all_but_mounts};
    CHECK(refusing_index(first, "open_tree", {}) == none);
    CHECK(refusing_index(first, "mount_setattr", {}) == none);
    CHECK(refusing_index(first, "unshare", {sbx::linux_sandbox::detail::kCLONE_NEWUSER, 0, 0, 0, 0, 0}) == none);
    CHECK(refusing_index(first, "unshare", {sbx::linux_sandbox::detail::kCLONE_NEWNS, 0, 0, 0, 0, 0}) != none);
    CHECK(refusing_index(first, "unshare",
                         {sbx::linux_sandbox::detail::kCLONE_NEWUSER | sbx::linux_sandbox::detail::kCLONE_NEWNS, 0, 0, 0, 0, 0}) != none);
    CHECK(refusing_index(first, "clone", {sbx::linux_sandbox::detail::kCLONE_NEWUSER, 0, 0, 0, 0, 0}) != none);
    CHECK(refusing_index(first, "chroot", {}) != none);
    CHECK(refusing_index(first, "setns", {}) != none);
}

TEST_CASE("personality: exactly the allowed personas pass the rule table") {
    using sbx::linux_sandbox::persona_allowed;
    using sbx::linux_sandbox::refusing_rule;
    // Every value made of two bits, each bit alone, and their complements: every
    // one of the table's masked comparisons meets values on both sides.
    std::vector<std::uint64_t> values{0, 0xffffffff, 0x1ffffffff, 0xffffffff00000000, 0x100000000};
    for (unsigned i = 0; i < 32; ++i)
        for (unsigned j = i; j < 32; ++j) {
            const std::uint64_t v = (std::uint64_t{1} << i) | (std::uint64_t{1} << j);
            values.push_back(v);
            values.push_back(~v & 0xffffffff);
        }
    std::size_t allowed = 0;
    for (std::uint64_t v : values) {
        const bool refused = refusing_rule(SeccompOptions{}, "personality", {v, 0, 0, 0, 0, 0}) != nullptr;
        CHECK_MESSAGE(refused == !persona_allowed(v), "personality(0x" << std::hex << v << ")");
        allowed += refused ? 0 : 1;
    }
    CHECK(allowed > 5);  // 0, the query, and the allowed flags alone and in pairs
}

namespace {

// Exit codes of the child below: 0 when every check held, else the failed check.
enum ChildResult : int {
    child_ok = 0,
    child_no_new_privs = 10,
    child_load = 11,
    child_unshare = 12,
    child_clone_newuser = 13,
    child_clone3 = 14,
    child_socket_unix = 15,
    child_socket_unix_high_bits = 16,
    child_socketpair_stream = 17,
    child_socketpair_dgram = 18,
    child_tiocsti = 19,
    child_escaped = 20,  // clone with CLONE_NEWUSER made a process
    child_socketpair_seqpacket = 21,
    child_vsock = 22,
    child_keyctl = 23,
    child_personality_refused = 24,
    child_personality_allowed = 25,
    child_netlink = 26,
};

bool refused_with(long rc, int err) { return rc == -1 && errno == err; }

// Runs in the forked child: load the filter, try what it refuses. Only
// async-signal-safe calls, and _exit.
[[noreturn]] void child(const sbx::linux_sandbox::SeccompFilter& filter) {
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(child_no_new_privs);
    if (seccomp_load(filter.get()) != 0) _exit(child_load);

    if (!refused_with(unshare(CLONE_NEWUSER), EPERM)) _exit(child_unshare);

    const long pid = syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0);
    if (pid == 0) _exit(child_escaped);
    if (pid > 0) {
        waitpid(static_cast<pid_t>(pid), nullptr, 0);
        _exit(child_clone_newuser);
    }
    if (errno != EPERM) _exit(child_clone_newuser);

    // Without the filter clone3(NULL, 0) fails with EINVAL.
    if (!refused_with(syscall(SYS_clone3, nullptr, 0), ENOSYS)) _exit(child_clone3);

    if (!refused_with(socket(AF_UNIX, SOCK_STREAM, 0), EPERM)) _exit(child_socket_unix);
    // The kernel reads the family as an int: high bits must not slip past the filter.
    // (Both the AF_UNIX rule and the family rule match that value: either answer refuses.)
    const long high = syscall(SYS_socket, 0x100000000UL | AF_UNIX, SOCK_STREAM, 0);
    if (!refused_with(high, EPERM) && !refused_with(high, EAFNOSUPPORT)) _exit(child_socket_unix_high_bits);
    if (!refused_with(socket(AF_VSOCK, SOCK_STREAM, 0), EAFNOSUPPORT)) _exit(child_vsock);
    const int route = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0);
    if (route < 0 || !refused_with(socket(AF_NETLINK, SOCK_RAW, 9), EPROTONOSUPPORT)) _exit(child_netlink);
    close(route);
    if (!refused_with(syscall(SYS_keyctl, 0, -3L, 0, 0, 0), EPERM)) _exit(child_keyctl);
    if (!refused_with(syscall(SYS_personality, 0x0400000UL), EPERM)) _exit(child_personality_refused);
    if (syscall(SYS_personality, 0xffffffffUL) < 0) _exit(child_personality_allowed);

    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) _exit(child_socketpair_stream);
    close(sv[0]);
    close(sv[1]);
    if (!refused_with(socketpair(AF_UNIX, SOCK_DGRAM, 0, sv), EPERM)) _exit(child_socketpair_dgram);
    if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0) _exit(child_socketpair_seqpacket);
    close(sv[0]);
    close(sv[1]);

    char c = 'x';
    if (!refused_with(ioctl(0, TIOCSTI, &c), EPERM)) _exit(child_tiocsti);
    _exit(child_ok);
}

}  // namespace

TEST_CASE("the loaded filter refuses namespaces, clone3, Unix sockets, other families, keyrings, personas and TIOCSTI") {
    auto filter = sbx::linux_sandbox::build_filter(SeccompOptions{});
    REQUIRE_MESSAGE(filter.has_value(), sbx::to_string(filter.error()));

    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) child(*filter);

    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    REQUIRE_MESSAGE(WIFEXITED(status), "child ended by signal " << WTERMSIG(status));
    CHECK_MESSAGE(WEXITSTATUS(status) == child_ok, "child failed check " << WEXITSTATUS(status)
                                                                         << " (see ChildResult)");
}

TEST_CASE("a system call of another ABI kills the process") {
#if defined(__x86_64__)
    // The x32 ABI is the x86_64 call numbers with bit 30 set. This kernel may not
    // offer x32 at all, but the filter sees the number first: built for the
    // native architecture only, it kills the caller instead of letting a deny
    // list be bypassed through the other numbering.
    auto filter = sbx::linux_sandbox::build_filter(SeccompOptions{});
    REQUIRE_MESSAGE(filter.has_value(), sbx::to_string(filter.error()));
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) _exit(2);
        if (seccomp_load(filter->get()) != 0) _exit(3);
        syscall(0x40000000L | SYS_getpid);
        _exit(0);  // still alive: the filter let an x32 call through
    }
    int status = 0;
    REQUIRE(waitpid(pid, &status, 0) == pid);
    CHECK_MESSAGE(WIFSIGNALED(status), "the x32 call did not kill the child (exit " << WEXITSTATUS(status) << ")");
    if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGSYS);
    // Without the filter the same call is merely refused (ENOSYS without x32
    // support), so the kill above is the filter's doing.
    const pid_t plain = fork();
    REQUIRE(plain >= 0);
    if (plain == 0) {
        syscall(0x40000000L | SYS_getpid);
        _exit(0);
    }
    REQUIRE(waitpid(plain, &status, 0) == plain);
    CHECK(WIFEXITED(status));
#else
    MESSAGE("skipped: the x32 ABI exists only on x86_64");
#endif
}
