// launchers/mac/sandbox_exec.cpp - see sandbox_exec.hpp.
#include "mac/sandbox_exec.hpp"

#if !defined(SBX_MAC_SANDBOX_EXEC)
#define SBX_MAC_SANDBOX_EXEC "/usr/bin/sandbox-exec"
#endif

namespace sbx::mac_sandbox {

const std::string_view kSandboxExec = SBX_MAC_SANDBOX_EXEC;

}  // namespace sbx::mac_sandbox
