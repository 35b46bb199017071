// outside.hpp - `sbx run --unsandboxed` for a command the settings take out of
// the sandbox (an excludedCommands pattern matches it): the command runs as it
// would without sbx, unconfined, and sbx says so on standard error before it
// starts and after it ends.
#pragma once

#include <string>
#include <vector>

namespace sbx::cli {

// Runs `command` in the current directory with this process's environment and
// descriptors, and returns its status as sbx run's (the command's; 128+N when
// it died of signal N; 127 not found, 126 not runnable). `line` is the command
// as one line and `why` the rule that sent it outside, both for the two lines
// said. While it runs, SIGTERM and SIGHUP sent to sbx go on to the command; the
// terminal's SIGINT and SIGQUIT reach it directly, and sbx waits for it.
int run_outside(const std::vector<std::string>& command, const std::string& line, const std::string& why);

}  // namespace sbx::cli
