#include "stage/landlock.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/fd_io.hpp"  // Fd

namespace sbx::launcher::landlock {

namespace {

// The system call numbers are the same on every architecture that has them
// (they came after the tables were unified).
#ifndef SYS_landlock_create_ruleset
constexpr long SYS_landlock_create_ruleset = 444;
constexpr long SYS_landlock_add_rule = 445;
constexpr long SYS_landlock_restrict_self = 446;
#endif

// The kernel's structures, as include/uapi/linux/landlock.h lays them out. A
// kernel that knows fewer fields of the first accepts it whole while the ones
// it does not know are zero.
struct RulesetAttr {
    std::uint64_t handled_access_fs;
    std::uint64_t handled_access_net;
    std::uint64_t scoped;
};
struct __attribute__((packed)) PathBeneathAttr {
    std::uint64_t allowed_access;
    std::int32_t parent_fd;
};
struct NetPortAttr {
    std::uint64_t allowed_access;
    std::uint64_t port;
};
constexpr unsigned kCreateRulesetVersion = 1U << 0;
constexpr int kRulePathBeneath = 1;
constexpr int kRuleNetPort = 2;

std::string failed(const char* what, int err) { return std::string(what) + ": " + std::strerror(err); }

}  // namespace

int abi() {
    const long v = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
    return v < 0 ? 0 : static_cast<int>(v);
}

std::uint64_t write_rights(int abi) {
    std::uint64_t r = kWriteFile | kRemoveDir | kRemoveFile | kMakeChar | kMakeDir | kMakeReg | kMakeSock |
                      kMakeFifo | kMakeBlock | kMakeSym;
    if (abi >= 2) r |= kRefer;
    if (abi >= 3) r |= kTruncate;
    return r;
}

std::string restrict_self(const Ruleset& r, Applied& applied) {
    RulesetAttr attr{r.handled_fs, r.handled_net, r.scoped};
    const Fd ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0)));
    if (ruleset.get() < 0) return failed("cannot make a Landlock ruleset", errno);
    for (const auto& p : r.paths) {
        const Fd at(::open(p.path.c_str(), O_PATH | O_CLOEXEC | (p.no_follow ? O_NOFOLLOW : 0)));
        if (at.get() < 0) {
            if (errno == ENOENT) {
                applied.missing.push_back(p.path);
                continue;
            }
            return failed(("cannot open " + p.path + " for a Landlock rule").c_str(), errno);
        }
        struct stat st {};
        if (::fstat(at.get(), &st) != 0) return failed(("cannot stat " + p.path).c_str(), errno);
        // O_PATH | O_NOFOLLOW opens the link itself: a rule there would mean nothing.
        if (S_ISLNK(st.st_mode)) return "a symbolic link took the place of " + p.path + " before its Landlock rule";
        PathBeneathAttr rule{p.access & r.handled_fs, at.get()};
        if (!S_ISDIR(st.st_mode)) rule.allowed_access &= kFileRights;
        if (rule.allowed_access == 0) continue;
        if (::syscall(SYS_landlock_add_rule, ruleset.get(), kRulePathBeneath, &rule, 0) != 0)
            return failed(("cannot add the Landlock rule for " + p.path).c_str(), errno);
    }
    for (const std::uint16_t port : r.connect_ports) {
        NetPortAttr rule{kConnectTcp & r.handled_net, port};
        if (rule.allowed_access == 0) continue;
        if (::syscall(SYS_landlock_add_rule, ruleset.get(), kRuleNetPort, &rule, 0) != 0)
            return failed(("cannot add the Landlock rule for TCP port " + std::to_string(port)).c_str(), errno);
    }
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return failed("cannot set no_new_privs", errno);
    if (::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0)
        return failed("cannot enforce the Landlock ruleset", errno);
    return {};
}

}  // namespace sbx::launcher::landlock
