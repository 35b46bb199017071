// sbx/net/proxy_env.hpp - the variables that point a command at its proxy.
//
// Which variables, and why each, is a decision of the engine's: the launchers
// only fill in the two ports they listen on (the statically linked stage on
// Linux, sbx-mac on macOS).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sbx::net {

// HTTP_PROXY, HTTPS_PROXY and ALL_PROXY, upper and lower case, at 127.0.0.1 ports,
// and an empty NO_PROXY, so that localhost too goes through the proxy; and what
// tools that read other variables need to read these:
//   NODE_USE_ENV_PROXY=1  Node.js 24 (fetch from 24.0, http and https from 24.5)
//                         and 22.21 read the variables only then; Node 20 never.
//   grpc_proxy            gRPC's C core and grpc-js read it first (then https_proxy,
//                         then http_proxy); lower case only, as gRPC documents it.
// Java is left alone: its proxy properties would go in JAVA_TOOL_OPTIONS, and
// every JVM then prints "Picked up JAVA_TOOL_OPTIONS: ..." before anything else
// on standard error, first line of `java -version` included (README, "Network").
inline std::vector<std::pair<std::string, std::string>> proxy_environment(int http_port, int socks_port) {
    const std::string http = "http://127.0.0.1:" + std::to_string(http_port);
    // socks5h: the proxy resolves names; the command needs no resolver of its own.
    const std::string socks = "socks5h://127.0.0.1:" + std::to_string(socks_port);
    return {{"HTTP_PROXY", http},   {"http_proxy", http}, {"HTTPS_PROXY", http}, {"https_proxy", http},
            {"ALL_PROXY", socks},   {"all_proxy", socks}, {"NO_PROXY", ""},      {"no_proxy", ""},
            {"NODE_USE_ENV_PROXY", "1"}, {"grpc_proxy", http}};
}

}  // namespace sbx::net
