// launchers/base/trace.hpp - what each step of a run costs, on request.
//
// `sbx run --trace-fd N` and the launchers' own `--trace-fd N` write one line of
// JSON per step to descriptor N as the step ends:
//   {"trace":"placeholders","at":12345678,"us":412}
// `at` is when the step began and `us` how long it took, in microseconds of
// CLOCK_MONOTONIC, which every process of a run reads alike (the sandbox has no
// time namespace of its own), so the lines of sbx, the launcher and the stage
// line up. The steps are listed in docs/plan.md; bench/startup.sh --breakdown
// adds them up over many runs. Nothing is written, and nothing costs more than
// a test, without the option. The stage closes the descriptor before the
// command runs, as it closes every one the command is not given.
//
// Header-only and free of libraries, for the static stage too.
#pragma once

#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <string_view>

namespace sbx::launcher {

class Trace {
public:
    Trace() = default;
    explicit Trace(int fd) : fd_(fd) {}

    bool on() const { return fd_ >= 0; }
    int fd() const { return fd_; }

    // Microseconds of CLOCK_MONOTONIC.
    static std::uint64_t now() {
        timespec ts{};
        ::clock_gettime(CLOCK_MONOTONIC, &ts);
        return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000u + static_cast<std::uint64_t>(ts.tv_nsec) / 1000u;
    }

    // The line of a step that began at `start` and ends now. `name` is one of
    // ours: letters, digits, '-' and '.', nothing JSON would escape.
    void step(std::string_view name, std::uint64_t start) const { step(name, start, now()); }
    void step(std::string_view name, std::uint64_t start, std::uint64_t end) const {
        if (fd_ < 0) return;
        char line[160];
        const int n = std::snprintf(line, sizeof line, "{\"trace\":\"%.*s\",\"at\":%llu,\"us\":%llu}\n",
                                    static_cast<int>(name.size()), name.data(),
                                    static_cast<unsigned long long>(start),
                                    static_cast<unsigned long long>(end >= start ? end - start : 0));
        if (n <= 0 || static_cast<std::size_t>(n) >= sizeof line) return;
        // One write per line: lines of several processes on one pipe stay whole.
        while (::write(fd_, line, static_cast<std::size_t>(n)) < 0 && errno == EINTR) {
        }
    }

private:
    int fd_ = -1;
};

}  // namespace sbx::launcher
