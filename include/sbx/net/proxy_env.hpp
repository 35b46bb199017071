// sbx/net/proxy_env.hpp - the variables that point a command at its proxy.
//
// Which variables, and why each, is a decision of the engine's: the launchers
// only fill in the two ports they listen on (the statically linked stage on
// Linux, sbx-mac on macOS) and, where the proxy asks for one, the secret.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sbx/core/inline.hpp"

namespace sbx::net {

// The user name the proxy URLs carry with a secret. The proxy checks only the
// password (sbx/net/proxy_auth.hpp); a client sends whatever user the URL names.
inline constexpr std::string_view kProxyUser = "sbx";

// `text` as it may stand in a URL's user information: every byte but RFC 3986's
// unreserved ones (letters, digits, - . _ ~) as %XX. Clients decode it again
// before they send it (curl, Python's urllib, Go's net/url, Node's URL).
SBX_INLINE std::string percent_encoded(std::string_view text);

// HTTP_PROXY, HTTPS_PROXY and ALL_PROXY, upper and lower case, at 127.0.0.1 ports;
// NO_PROXY and no_proxy: kDirectLoopback where the command's loopback is its own
// and every host loopback target allowed has a forward there (`direct_loopback`:
// a server the command starts is then reached by every client, and the forwards
// serve the host's), else empty, so that localhost too goes through the proxy,
// to the host's loopback; and what
// tools that read other variables need to read these:
//   NODE_USE_ENV_PROXY=1  Node.js 24 (fetch from 24.0, http and https from 24.5)
//                         and 22.21 read the variables only then; Node 20 never.
//   grpc_proxy            gRPC's C core and grpc-js read it first (then https_proxy,
//                         then http_proxy); lower case only, as gRPC documents it.
// With a `secret`, every URL carries it as its password, for the user kProxyUser
// (`http://sbx:SECRET@127.0.0.1:PORT`, percent-encoded where it must be); with
// none, the URLs carry no user information.
// Java is left alone: its proxy properties would go in JAVA_TOOL_OPTIONS, and
// every JVM then prints "Picked up JAVA_TOOL_OPTIONS: ..." before anything else
// on standard error, first line of `java -version` included (README, "Network").
// The loopback names and addresses clients connect to without the proxy: curl,
// Python, Go, Node's and npm's readers of NO_PROXY all match these three.
inline constexpr std::string_view kDirectLoopback = "localhost,127.0.0.1,::1";

SBX_INLINE std::vector<std::pair<std::string, std::string>> proxy_environment(int http_port, int socks_port,
                                                                           std::string_view secret = {},
                                                                           bool direct_loopback = false);

}  // namespace sbx::net

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_NET)

namespace sbx::net {

SBX_INLINE std::string percent_encoded(std::string_view text) {
    constexpr std::string_view kHex = "0123456789ABCDEF";
    std::string out;
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        const bool unreserved = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                                c == '-' || c == '.' || c == '_' || c == '~';
        if (unreserved) {
            out += c;
        } else {
            out += '%';
            out += kHex[u >> 4];
            out += kHex[u & 0xf];
        }
    }
    return out;
}

SBX_INLINE std::vector<std::pair<std::string, std::string>> proxy_environment(int http_port, int socks_port,
                                                                           std::string_view secret,
                                                                           bool direct_loopback) {
    const std::string no_proxy(direct_loopback ? kDirectLoopback : std::string_view());
    const std::string user_info =
        secret.empty() ? std::string() : std::string(kProxyUser) + ":" + percent_encoded(secret) + "@";
    const std::string http = "http://" + user_info + "127.0.0.1:" + std::to_string(http_port);
    // socks5h: the proxy resolves names; the command needs no resolver of its own.
    const std::string socks = "socks5h://" + user_info + "127.0.0.1:" + std::to_string(socks_port);
    return {{"HTTP_PROXY", http},   {"http_proxy", http}, {"HTTPS_PROXY", http}, {"https_proxy", http},
            {"ALL_PROXY", socks},   {"all_proxy", socks}, {"NO_PROXY", no_proxy}, {"no_proxy", no_proxy},
            {"NODE_USE_ENV_PROXY", "1"}, {"grpc_proxy", http}};
}

}  // namespace sbx::net
#endif
