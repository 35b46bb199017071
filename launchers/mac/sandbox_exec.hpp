// launchers/mac/sandbox_exec.hpp - where sbx-mac finds Seatbelt's runner.
#pragma once

#include <string_view>

namespace sbx::mac_sandbox {

// /usr/bin/sandbox-exec. Only the tests' build changes it (tests/launcher/meson.build:
// sbx-mac-fake-seatbelt, never installed), to a script that checks the profile
// and runs the command, so that sbx-mac's own work is tested where there is no
// Seatbelt. Defined in sandbox_exec.cpp, the one file that build compiles again:
// the rest of sbx-mac (sbx_mac.cpp) is compiled once for both programs.
extern const std::string_view kSandboxExec;

}  // namespace sbx::mac_sandbox
