// launchers/proxy_env.hpp - the variables that point a command at its proxy.
// Inline: the statically linked stage (Linux) and sbx-mac both use it.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace sbx::linux_sandbox {

// HTTP_PROXY, HTTPS_PROXY and ALL_PROXY, upper and lower case, at 127.0.0.1 ports,
// and an empty NO_PROXY, so that localhost too goes through the proxy.
inline std::vector<std::pair<std::string, std::string>> proxy_environment(int http_port, int socks_port) {
    const std::string http = "http://127.0.0.1:" + std::to_string(http_port);
    // socks5h: the proxy resolves names; the command needs no resolver of its own.
    const std::string socks = "socks5h://127.0.0.1:" + std::to_string(socks_port);
    return {{"HTTP_PROXY", http},   {"http_proxy", http}, {"HTTPS_PROXY", http}, {"https_proxy", http},
            {"ALL_PROXY", socks},   {"all_proxy", socks}, {"NO_PROXY", ""},      {"no_proxy", ""}};
}

}  // namespace sbx::linux_sandbox
