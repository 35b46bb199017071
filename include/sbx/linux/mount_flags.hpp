// sbx/linux/mount_flags.hpp - the mount flags of bubblewrap's command line that
// sbx uses, and how many arguments each takes: one table for the engine, which
// writes them (bwrap.hpp), and the stage, which reads its share of them
// (launchers/stage/mounts.cpp), so that the two cannot count differently.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace sbx::linux_sandbox {

struct MountFlag {
    std::string_view flag;
    std::size_t arity;  // the arguments after the flag
};

inline constexpr std::array kMountFlags{
    MountFlag{"--bind", 2},          // SOURCE DEST, writable
    MountFlag{"--ro-bind", 2},       // SOURCE DEST, read-only
    MountFlag{"--ro-bind-try", 2},   // the same, nothing when SOURCE is missing
    MountFlag{"--ro-bind-data", 2},  // FD DEST: the descriptor's content as a read-only file
    MountFlag{"--tmpfs", 1},         // DEST: an empty tmpfs
    MountFlag{"--remount-ro", 1},    // DEST: the mount there made read-only
    MountFlag{"--again", 1},         // DEST: the stage's own, the mount bubblewrap made there on top once more
    MountFlag{"--dev", 1},           // DEST: the stage's own, a /dev as bubblewrap's --dev makes it
    MountFlag{"--ro-bind-link", 1},  // DEST: the stage's own, the symbolic link at DEST bound read-only
                                     // over itself, not followed (bubblewrap has no such flag)
    MountFlag{"--sized-tmpfs", 2},   // BYTES DEST: a writable tmpfs of that size, mode 0700 (bubblewrap
                                     // is given it as --perms 0700 --size BYTES --tmpfs DEST)
};

// The arguments `flag` takes; 0 for a flag that is none of these.
constexpr std::size_t mount_flag_arity(std::string_view flag) noexcept {
    for (const auto& f : kMountFlags)
        if (f.flag == flag) return f.arity;
    return 0;
}

}  // namespace sbx::linux_sandbox
