// launchers/stage/landlock.hpp - the kernel's Landlock LSM, as the stage uses it.
//
// Landlock lets an unprivileged process take rights away from itself and from
// everything it starts: a ruleset names the kinds of access it handles, rules
// give some of them back beneath given directories (or on given files), and
// restrict_self() makes the ruleset a domain of this thread for good. A right a
// ruleset does not handle stays as it was. Rules attach to inodes, not to names:
// a directory's rule covers what lies beneath it through every mount, and a
// directory made after the ruleset lies beneath the rules of its parents.
//
// The ABI grows with the kernel: 1 files (5.13), 2 `refer` (5.19: without it a
// domain refuses every rename or link into another directory), 3 truncate (6.2),
// 4 TCP bind and connect by port (6.7), 5 ioctl on devices (6.10), 6 scopes:
// abstract Unix sockets and signals outside the domain (6.12), 7 logging (6.15).
// The constants are the kernel's (include/uapi/linux/landlock.h), written out
// here so that a build on older kernel headers knows them; a kernel that lacks
// one refuses a ruleset that names it, so what is used follows abi().
//
// A domain is a thread's and its children's: the stage makes one just before it
// execs the command, in a process that runs nothing else.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sbx::launcher::landlock {

// Access to files (LANDLOCK_ACCESS_FS_*).
inline constexpr std::uint64_t kExecute = 1ULL << 0;
inline constexpr std::uint64_t kWriteFile = 1ULL << 1;
inline constexpr std::uint64_t kReadFile = 1ULL << 2;
inline constexpr std::uint64_t kReadDir = 1ULL << 3;
inline constexpr std::uint64_t kRemoveDir = 1ULL << 4;
inline constexpr std::uint64_t kRemoveFile = 1ULL << 5;
inline constexpr std::uint64_t kMakeChar = 1ULL << 6;
inline constexpr std::uint64_t kMakeDir = 1ULL << 7;
inline constexpr std::uint64_t kMakeReg = 1ULL << 8;
inline constexpr std::uint64_t kMakeSock = 1ULL << 9;
inline constexpr std::uint64_t kMakeFifo = 1ULL << 10;
inline constexpr std::uint64_t kMakeBlock = 1ULL << 11;
inline constexpr std::uint64_t kMakeSym = 1ULL << 12;
inline constexpr std::uint64_t kRefer = 1ULL << 13;     // ABI 2
inline constexpr std::uint64_t kTruncate = 1ULL << 14;  // ABI 3
inline constexpr std::uint64_t kIoctlDev = 1ULL << 15;  // ABI 5
// TCP by port (LANDLOCK_ACCESS_NET_*), ABI 4.
inline constexpr std::uint64_t kBindTcp = 1ULL << 0;
inline constexpr std::uint64_t kConnectTcp = 1ULL << 1;
// Scopes (LANDLOCK_SCOPE_*), ABI 6.
inline constexpr std::uint64_t kScopeAbstractUnix = 1ULL << 0;
inline constexpr std::uint64_t kScopeSignal = 1ULL << 1;

// The rights a rule on something that is not a directory may carry; the kernel
// refuses the others there.
inline constexpr std::uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;

// The kernel's Landlock ABI, or 0 where it has none or it is off (errno: ENOSYS,
// EOPNOTSUPP).
int abi();

// Every right that changes the file tree or a file's content, as far as `abi`
// knows them: writing, truncating, making, removing, renaming and linking.
// Reading, listing, executing and device ioctls are not among them.
std::uint64_t write_rights(int abi);

// Reading a file, listing a directory, executing.
inline constexpr std::uint64_t kReadRights = kReadFile | kReadDir | kExecute;

struct PathRule {
    std::string path;       // opened with O_PATH
    std::uint64_t access;   // narrowed to kFileRights where path is not a directory
    bool no_follow = false; // a symbolic link at `path` is refused, not followed
};

struct Ruleset {
    std::uint64_t handled_fs = 0;
    std::uint64_t handled_net = 0;  // ABI 4
    std::uint64_t scoped = 0;       // ABI 6
    std::vector<PathRule> paths;
    std::vector<std::uint16_t> connect_ports;  // TCP ports connect() may reach, where handled_net has it
};

// What restrict_self did.
struct Applied {
    std::vector<std::string> missing;  // paths that were not there: no rule, so no access beneath them
};

// Builds `r`, adds its rules and makes it this thread's domain, with
// PR_SET_NO_NEW_PRIVS set first (the kernel wants it of a process without
// CAP_SYS_ADMIN). A path that does not exist gets no rule and is named in
// `applied.missing`; anything else that fails fails the whole: empty on
// success, else why not (the ruleset is then not in force).
std::string restrict_self(const Ruleset& r, Applied& applied);

}  // namespace sbx::launcher::landlock
