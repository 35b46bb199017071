// launchers/base/own_executable.hpp - the path of the running program.
#pragma once

#if defined(__APPLE__)
#include <mach-o/dyld.h>
#endif
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace sbx::launcher {

// This program's own path, symbolic links resolved; empty where it cannot be
// had: the relay ssh runs where the launcher is it, the launcher `sbx` finds
// beside itself.
inline std::string own_executable() {
    char self[PATH_MAX];
#if defined(__APPLE__)
    std::uint32_t size = sizeof self;
    if (_NSGetExecutablePath(self, &size) != 0) return {};
#else
    const ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return {};
    self[n] = '\0';
#endif
    char real[PATH_MAX];
    return ::realpath(self, real) != nullptr ? std::string(real) : std::string(self);
}

}  // namespace sbx::launcher
