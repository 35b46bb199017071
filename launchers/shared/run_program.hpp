// run_program.hpp - finding a helper program on PATH, running it and taking what it prints.
//
// The doctor runs bubblewrap through it, and `sbx diff` runs git: a program
// with standard input from /dev/null, its standard output and error captured
// up to a limit, an environment of the caller's choosing (none by default) and
// a time limit, after which it is killed.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/fd_io.hpp"

namespace sbx::launcher {

// Where a program is looked for when PATH is unset.
inline constexpr std::string_view kDefaultPath = "/usr/local/bin:/usr/bin:/bin";

// A program file as the current user sees it.
struct ProgramFile {
    std::string path;         // absolute; empty when nothing was found
    bool regular = false;     // a regular file (after symlinks)
    bool executable = false;  // access(X_OK) for the effective user
    bool setuid = false;
    bool setgid = false;
};

// `path` as a program file. `path` is used as given (callers make sure it is absolute).
ProgramFile inspect_program(const std::string& path);

// The first regular executable file `name` in the absolute entries of `path_env`
// (empty and relative entries are skipped: they name the working directory, which a
// sandboxed command may write); failing that, the first regular file `name` (so the
// caller can say it is not executable); failing that, an empty path. An unset PATH
// searches "/usr/local/bin:/usr/bin:/bin".
ProgramFile find_in_path(std::string_view name, const std::optional<std::string>& path_env);

// What running a program gave.
struct RunOutcome {
    std::string spawn_error;  // non-empty: it never ran (posix_spawn failed, no pipe, ...)
    bool timed_out = false;   // killed after the time limit
    int exit_code = -1;       // when it exited
    int signal = 0;           // when a signal ended it
    std::string out;          // stdout, at most RunLimits::cap bytes
    std::string err;          // stderr, at most RunLimits::cap bytes
    bool out_cut = false;     // stdout went past the cap: `out` is its beginning only

    bool succeeded() const { return spawn_error.empty() && !timed_out && signal == 0 && exit_code == 0; }
};

struct RunLimits {
    std::size_t cap = 64 * 1024;                 // bytes kept of each stream
    std::chrono::milliseconds timeout{10'000};  // then SIGKILL
    std::vector<std::string> environment;        // "NAME=VALUE"; empty: none
};

// `fd` moved to a descriptor at 10 or above (closing `fd`), close-on-exec, so
// that dup2 onto 0 to 3 in a child never meets itself (which would leave its
// close-on-exec flag set); `fd` itself when it is there already; none (with
// errno) on failure.
Fd high_fd(Fd fd);

// Runs argv (argv[0] an absolute path) with standard input from /dev/null, and
// pass[i] as descriptor 3 + i.
RunOutcome run_program(const std::vector<std::string>& argv, std::span<const int> pass = {}, const RunLimits& limits = {});

}  // namespace sbx::launcher
