// launchers/shared/leftovers.hpp - what a launcher makes on the host, and its removal.
//
// A launcher makes the command's temporary directory and the placeholders, and
// must remove them however it ends, through whatever permissions the command
// left on the directories they lie in (they are the caller's own). A Leftovers list records each thing right after it is made.
// A reaper process, forked before anything is made, keeps a copy of the list
// through a pipe: if the launcher dies without saying it cleaned up (SIGKILL
// included), the reaper waits for the sandbox to go and removes them itself.
#pragma once

#include <sys/types.h>
#include <termios.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/fd_io.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/rules/protected_paths.hpp"

namespace sbx::launcher {

enum class LeftoverKind : char {
    tmpdir = 'T',            // a directory and all in it
    placeholder_file = 'F',       // an empty file: unlinked
    placeholder_dir = 'D',        // an empty directory: rmdir'd
    placeholder_commondir = 'C',  // a commondir naming its own directory: unlinked
    cgroup = 'R',                 // a sandbox's own cgroup: rmdir'd (cgroupfs takes its control files with it)
};

// The leftover kind of a placeholder, and back (nullopt: not a placeholder).
constexpr LeftoverKind leftover_kind(sbx::Placeholder p) noexcept {
    return p == sbx::Placeholder::directory   ? LeftoverKind::placeholder_dir
           : p == sbx::Placeholder::commondir ? LeftoverKind::placeholder_commondir
                                              : LeftoverKind::placeholder_file;
}
constexpr std::optional<sbx::Placeholder> placeholder_kind(LeftoverKind k) noexcept {
    switch (k) {
        case LeftoverKind::placeholder_file: return sbx::Placeholder::file;
        case LeftoverKind::placeholder_dir: return sbx::Placeholder::directory;
        case LeftoverKind::placeholder_commondir: return sbx::Placeholder::commondir;
        case LeftoverKind::tmpdir:
        case LeftoverKind::cgroup: break;
    }
    return std::nullopt;
}

struct Leftover {
    LeftoverKind kind;
    std::string path;
    // For placeholders: what was made. Only that is removed; a file someone put
    // there since (an editor saving by rename, say) is left alone.
    std::uint64_t dev = 0, ino = 0;
};

// Removes each leftover, last made first. Returns one line per thing that could
// not be removed (empty: all gone). Never follows a symlink.
std::vector<std::string> remove_leftovers(const std::vector<Leftover>& list);

// Removes `path` and, for a directory, everything in it, without following
// symlinks; nothing there is success.
sbx::expected<void> remove_tree(const std::string& path);

// The reaper: a child process in its own session, deaf to the terminal's signals.
// When the launcher's standard input is a terminal it keeps a descriptor of it,
// to give the terminal its modes back should the launcher die with it in raw
// mode (terminal.hpp); it keeps nothing else of the caller's.
class Reaper {
public:
    // Forks it. Call before making anything.
    static sbx::expected<Reaper> start();

    Reaper(Reaper&& other) noexcept;
    Reaper& operator=(Reaper&&) = delete;
    ~Reaper();

    // Tells it about one more thing made (or the sandbox's process, whose end it
    // waits for before removing anything).
    void made(const Leftover& l);
    void sandbox_pid(pid_t pid);
    // The process group it kills first, should the launcher die (sbx-mac, where
    // nothing like --die-with-parent ends the command).
    void kill_group(pid_t pgid);
    // The files of the root's group (root_group.hpp), which it leaves for us.
    void group(const std::string& lock_path, const std::string& live_path);

    // The caller's terminal modes and line discipline (-1: leave it), to
    // restore first should the launcher die, dropping the input not yet read;
    // null: none any more (the launcher restored them).
    void terminal_modes(const termios* modes, int ldisc = -1);

    // The launcher cleaned up itself: the reaper exits without touching anything
    // (and is waited for when this is destroyed).
    void dismiss();
    // Waits for a dismissed reaper to be gone: before this process execs
    // another program (plan_again_if_stale), which would not wait for it.
    void wait();
    // Its process id, which the launcher's own children include.
    pid_t pid() const { return pid_; }

private:
    Reaper(pid_t pid, Fd fd) : pid_(pid), fd_(std::move(fd)) {}
    void send(char kind, const std::string& payload);
    pid_t pid_ = -1;
    Fd fd_;
};

}  // namespace sbx::launcher
