// launchers/stage/connect_relay.hpp - ssh's ProxyCommand inside bubblewrap's sandbox.
//
// `sbx-stage --connect HOST PORT` (also `sbx-linux --connect` and `sbx
// --connect`, whichever binary the launcher runs as the stage) is what the
// ssh_config the launcher binds names as every host's ProxyCommand
// (sbx/net/ssh_proxy.hpp). It asks the proxy at HTTPS_PROXY for `CONNECT
// HOST:PORT`, then copies standard input to the connection and the connection
// to standard output until both ends are done. The proxy decides the host and
// reports a refusal in the violations block; the relay says it on standard
// error in one line, which ssh shows.
// Exit status: 0 when the connection ran to its end; 1 when the proxy refused
// or the connection failed; 2 for a malformed command line or HTTPS_PROXY.
// The stage's own binary is statically linked, so this starts in well under a
// millisecond; it runs inside the sandbox, confined like any other program.
#pragma once

#include <string_view>

namespace sbx::linux_sandbox {

inline constexpr std::string_view kConnectFlag = "--connect";

// Runs the relay for `argc` words after kConnectFlag; returns the exit status.
// `self` names the program in messages.
int run_connect_relay(std::string_view self, int argc, char** argv);

}  // namespace sbx::linux_sandbox
