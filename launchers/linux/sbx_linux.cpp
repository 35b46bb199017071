// sbx-linux - carries out a plan with bubblewrap and seccomp.
//
//   sbx-linux [--plan-fd N] [--report-fd N] [--control-fd N] [--again-fd N] [--trace-fd N] [--violations] [--pty | --no-pty]
//                                                run the plan read from fd N (default: standard input);
//                                                --violations: append a <sandbox_violations> block to
//                                                standard error after the command; --pty, --no-pty:
//                                                the command's own terminal always, never (terminal.hpp);
//                                                --bubblewrap-mounts: bubblewrap makes every mount, as where
//                                                the stage cannot (stage/mounts.cpp), to compare and to test;
//                                                --trace-fd: each step's time (trace.hpp)
//   sbx-linux --doctor [--json] [--bwrap PATH]   can the sandbox run here; exit 1 when it cannot
//   sbx-linux --stage ...                        the in-sandbox stage (stage.hpp); not for people
//   sbx-linux --connect HOST PORT                ssh's ProxyCommand inside the sandbox (base/connect_relay.hpp)
//   sbx-linux --serve-session FD                 a session's fork server inside the sandbox (session_server.hpp)
//
// The steps are linux/platform.hpp's, which `sbx run` also runs in its own
// process; the options, the plan, the failures before the command and the
// unconfined fallback are the skeleton both launchers share (launcher_main.hpp).
//
// Exit status: the command's own; 128+N when it died of signal N; 126 when it
// could not be run, 127 when it was not found; 125 when sbx-linux failed before
// the command ran (an invalid or stale plan, an unavailable sandbox), with one
// line on standard error: "sbx-linux: CODE: message".
#include <iostream>

#include "base/connect_relay.hpp"
#include "linux/platform.hpp"
#include "shared/launcher_main.hpp"
#include "stage/session_server.hpp"
#include "stage/stage.hpp"

int main(int argc, char** argv) {
    using namespace sbx::linux_sandbox;
    if (argc >= 2 && argv[1] == sbx::launcher::kConnectFlag)
        return sbx::launcher::run_connect_relay("sbx-linux", argc - 2, argv + 2);
    if (argc >= 2 && argv[1] == kServeSessionFlag) return run_session_server(argc - 2, argv + 2);
    if (argc >= 2 && argv[1] == kStageFlag) {
        StageArgs stage;
        if (!parse_stage_args(argc - 2, argv + 2, stage)) {
            std::cerr << "sbx-linux: USAGE: --stage is sbx-linux's own, inside the sandbox\n";
            return sbx::launcher::kFailedBeforeCommand;
        }
        return run_stage(stage);
    }
    LinuxPlatform linux_platform;
    return sbx::launcher::launcher_main(argc, argv, linux_platform);
}
