// sbx/settings/limits.hpp - what a command may use: time, memory, processes,
// CPU time, the size of the files it writes and of its TMPDIR.
//
// sbx's own settings section, `sandbox.limits` (Claude Code reads no such key),
// one unsigned integer per limit, its unit in its name. kLimits is the one
// table: the settings reader, the merge (policy.hpp), `sbx policy`, the plan
// and the launchers' lines all walk it. A limit a layer does not set keeps
// its default (most have none: no limit).
//
// Layering (merge_limit): the layers the project can neither write nor ship
// (user settings, a --settings file, managed settings, the command line) set a
// limit, the lowest of them winning, so that a managed cap holds against a
// user's higher value; the repository's own files and an agent file can only
// lower what those (or the default) give, never raise it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace sbx {

enum class Limit { timeout, memory, processes, cpu, file_size, tmpdir };

struct LimitSpec {
    Limit which;
    std::string_view key;    // sandbox.limits.KEY, and `sbx run --limit KEY=N`
    std::string_view unit;   // how a value is said: "s", "MiB", "" (a count)
    std::uint64_t max;       // the largest value taken; larger is an error
    std::optional<std::uint64_t> fallback;  // the value where no layer sets one; nullopt: no limit
    std::string_view meaning;  // what reaching it does, for people
};

inline constexpr std::array<LimitSpec, 6> kLimits{{
    {Limit::timeout, "timeoutSeconds", "s", 31'536'000, std::nullopt,
     "the command gets SIGTERM once it has run this long, and SIGKILL after the grace period"},
    {Limit::memory, "memoryMiB", "MiB", std::uint64_t{1} << 24, std::nullopt,
     "no process of the command may take more memory than this for its data"},
    // A parallel build runs a few hundred processes and threads, a JVM a few
    // hundred threads; 4,096 leaves ten times that, and most of the machine's
    // 32,768 process ids (Linux's default pid_max) to the rest of it.
    {Limit::processes, "processes", "", 4'194'304, 4096,
     "the command may have at most this many processes and threads running at once"},
    {Limit::cpu, "cpuSeconds", "s", 31'536'000, std::nullopt,
     "a process of the command that has used this much CPU time is ended (SIGXCPU, then SIGKILL)"},
    {Limit::file_size, "fileSizeMiB", "MiB", std::uint64_t{1} << 24, std::nullopt,
     "no file the command writes may grow past this size (the write fails, and the process gets SIGXFSZ)"},
    // The command's TMPDIR is a tmpfs of the sandbox's own, in memory: it costs
    // what its files hold, and only while the command runs. A build's
    // temporary files (objects, archives, a linker's scratch) come to a few
    // hundred MiB; 4 GiB leaves ten times that, and stops a command that would
    // fill the machine's memory through it.
    {Limit::tmpdir, "tmpdirMiB", "MiB", std::uint64_t{1} << 24, 4096,
     "the command's TMPDIR holds at most this much: a write past it fails (ENOSPC)"},
}};

inline constexpr std::size_t kLimitCount = kLimits.size();

// The exit status of a command a limit ended (or that reached one: a line of
// the violations block says which), as timeout(1) exits when its time runs out.
inline constexpr int kLimitStatus = 124;

// What a timeout's line says happened (sbx::limit_line): the command was sent
// SIGTERM, and killed where it was still running when the grace period ran out.
inline constexpr std::string_view kTimedOut = "the command ran that long and was sent SIGTERM";
inline constexpr std::string_view kTimedOutKilled =
    "the command ran that long and was sent SIGTERM, then killed when the grace period ran out";

// The option that sets a limit for one run, and the key its Source gets: "--limit KEY".
inline constexpr std::string_view kLimitOption = "--limit";

constexpr const LimitSpec& limit_spec(Limit l) noexcept { return kLimits[static_cast<std::size_t>(l)]; }

// The limit whose settings key is `key`; nullopt for any other text.
constexpr std::optional<Limit> limit_named(std::string_view key) noexcept {
    for (const auto& s : kLimits)
        if (s.key == key) return s.which;
    return std::nullopt;
}

// The value in the unit the launchers use: bytes for a MiB key, else as given.
constexpr std::uint64_t limit_in_base_unit(Limit l, std::uint64_t v) noexcept {
    return limit_spec(l).unit == "MiB" ? v << 20 : v;
}

constexpr bool limits_in_order() noexcept {
    for (std::size_t i = 0; i < kLimitCount; ++i)
        if (static_cast<std::size_t>(kLimits[i].which) != i) return false;
    return true;
}
static_assert(limits_in_order(), "kLimits is in the order of Limit");

}  // namespace sbx
