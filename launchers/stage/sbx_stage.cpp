// sbx-stage - the in-sandbox stage of sbx-linux as a program of its own.
//
// The same code as `sbx-linux --stage` (stage.hpp), linked statically where the
// build allows: it starts in a fraction of the time a program with shared
// libraries takes, and it runs once per sandboxed command. sbx-linux uses it when
// it lies beside sbx-linux, and its own --stage mode otherwise. With --connect
// it is ssh's ProxyCommand inside the sandbox (base/connect_relay.hpp); with
// --serve-session, a session's fork server (stage/session_server.hpp).
#include <cstdio>
#include <string_view>

#include "base/connect_relay.hpp"
#include "stage/session_server.hpp"
#include "stage/stage.hpp"

int main(int argc, char** argv) {
    using namespace sbx::linux_sandbox;
    if (argc >= 2 && argv[1] == sbx::launcher::kConnectFlag)
        return sbx::launcher::run_connect_relay("sbx-stage", argc - 2, argv + 2);
    if (argc >= 2 && argv[1] == kServeSessionFlag) return run_session_server(argc - 2, argv + 2);
    sbx::linux_sandbox::StageArgs stage;
    if (argc < 2 || argv[1] != kStageFlag || !parse_stage_args(argc - 2, argv + 2, stage)) {
        std::fputs("sbx-stage: USAGE: sbx-stage is sbx-linux's own, inside the sandbox\n", stderr);
        return 125;
    }
    return run_stage(stage);
}
