// sbx/net/ssh_proxy.hpp - ssh through the sandbox's proxy: the system ssh_config
// the command reads, and the CONNECT its ProxyCommand speaks.
//
// ssh looks a host's name up itself and dials the address, and bubblewrap's
// sandbox has no resolver and no route but loopback: `git push` over ssh, `ssh
// host`, scp and rsync reach nothing, even where the policy allows the host.
// The launcher therefore binds its own copy of /etc/ssh/ssh_config over the
// system's: the same text, then a block that gives every host a ProxyCommand,
// the stage's relay (launchers/stage/connect_relay.cpp), which asks the proxy
// for `CONNECT HOST:PORT` at HTTPS_PROXY and copies bytes both ways. The proxy
// decides the host by name as it decides any other (sbx/net/hosts.hpp):
// allowed, asked about or refused and reported. ssh reads the user's
// ~/.ssh/config first and keeps the first value it finds for an option, so a
// ProxyCommand or ProxyJump of the user's (or of the system's file) wins; and
// the loopback names NO_PROXY lists go without it, to the sandbox's own
// loopback and its forwards, as curl's do (sbx/net/proxy_env.hpp).
// Pure: the launcher reads the system's file and binds the result
// (launchers/linux/platform.cpp); the relay sends and reads these texts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"

namespace sbx::net {

// The system-wide client configuration ssh reads after the user's.
inline constexpr std::string_view kSshConfigPath = "/etc/ssh/ssh_config";

// A system file larger than this is left alone (no ProxyCommand is added).
inline constexpr std::size_t kMaxSshConfig = 256 * 1024;

// The first line of sbx's block in the file the command reads.
inline constexpr std::string_view kSshBlockBegin =
    "# sbx: ssh reaches hosts through the sandbox's proxy, which decides each by the policy (README, \"ssh\")";

// The value of a ProxyCommand that runs `program --connect %h %p`: ssh
// expands % tokens in it, then runs `exec VALUE` with the user's shell, so the
// path is in single quotes, each ' as '\'' and each % as %%. nullopt when
// `program` holds a control character, which no line of a file can carry.
SBX_INLINE std::optional<std::string> ssh_proxy_command(std::string_view program);

// The system's file `system` with sbx's block at its end: `Host *` (or, with
// `direct_loopback`, every host but the names of kDirectLoopback) and the
// ProxyCommand of ssh_proxy_command(program). nullopt where that is.
SBX_INLINE std::optional<std::string> ssh_config_with_proxy(std::string_view system, std::string_view program,
                                                            bool direct_loopback);

// Where no ssh_config can be bound (the weaker sandbox has no mount namespace):
// GIT_SSH_COMMAND's value, `ssh -o 'ProxyCommand ...'` quoted for the shell git
// runs it with, so that git over ssh goes through the proxy; nullopt as above.
SBX_INLINE std::optional<std::string> git_ssh_command(std::string_view program);

// Where the relay finds the proxy: HTTPS_PROXY's `http://[USER:PASSWORD@]ADDRESS:PORT`,
// an IPv4 or bracketed IPv6 literal (no name to look up), with at most a `/`
// after it. The user and password (the weaker sandbox's secret,
// sbx/net/proxy_env.hpp) are percent-decoded, strictly.
struct ProxyUrl {
    std::string address;  // without brackets
    std::uint16_t port = 0;
    bool credentials = false;  // USER:PASSWORD@ was there
    std::string user, password;
};
SBX_INLINE expected<ProxyUrl> parse_proxy_url(std::string_view url);

// `host` as ssh's %h gives it (a name, an IPv4 address or a bare IPv6 one),
// checked: 1 to 253 bytes of letters, digits and `.-_:` (no IPv6 zone: the
// proxy dials no link-local address). Fails naming the first byte it refuses.
SBX_INLINE expected<std::string> relay_host(std::string_view host);

// `HOST:PORT`, an IPv6 host in brackets.
SBX_INLINE std::string connect_target(std::string_view host, std::uint16_t port);

// The request: `CONNECT HOST:PORT HTTP/1.1`, its Host header, the proxy's
// credentials where its URL has them, and the blank line.
SBX_INLINE std::string connect_request(std::string_view host, std::uint16_t port, const ProxyUrl& proxy);

// The proxy's answer, once its head (through the blank line) is in: the
// status code and the rest of the status line. Fails on anything but
// `HTTP/1.x NNN ...` as its first line.
struct ConnectReply {
    int status = 0;
    std::string reason;
};
SBX_INLINE expected<ConnectReply> parse_connect_reply(std::string_view head);

}  // namespace sbx::net

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_NET)

#include <charconv>

#include "sbx/core/ascii.hpp"
#include "sbx/net/proxy_auth.hpp"
#include "sbx/net/proxy_env.hpp"

namespace sbx::net::detail {

// `text` with each %XX (two hex digits) as its byte; nullopt for a `%`
// without them, or for a control byte, encoded or not.
SBX_INLINE std::optional<std::string> percent_decoded(std::string_view text) {
    auto hex = [](char c) {
        return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    };
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        char c = text[i];
        if (c == '%') {
            if (i + 2 >= text.size() || hex(text[i + 1]) < 0 || hex(text[i + 2]) < 0) return std::nullopt;
            c = static_cast<char>(hex(text[i + 1]) * 16 + hex(text[i + 2]));
            i += 2;
        }
        if (ascii_control(c)) return std::nullopt;
        out += c;
    }
    return out;
}

}  // namespace sbx::net::detail

namespace sbx::net {

SBX_INLINE std::optional<std::string> ssh_proxy_command(std::string_view program) {
    std::string quoted = "'";
    for (const char c : program) {
        if (ascii_control(c)) return std::nullopt;
        if (c == '\'') quoted += "'\\''";
        else if (c == '%') quoted += "%%";
        else quoted += c;
    }
    return quoted + "' --connect %h %p";
}

SBX_INLINE std::optional<std::string> ssh_config_with_proxy(std::string_view system, std::string_view program,
                                                            bool direct_loopback) {
    const auto command = ssh_proxy_command(program);
    if (!command) return std::nullopt;
    std::string out(system);
    if (!out.empty() && out.back() != '\n') out += '\n';
    out.append(kSshBlockBegin).append("\n");
    out += "Host *";
    if (direct_loopback) {
        std::string_view names = kDirectLoopback;
        while (!names.empty()) {
            const auto comma = names.find(',');
            out.append(" !").append(names.substr(0, comma));
            names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
        }
    }
    out += "\n    ProxyCommand " + *command + "\n";
    return out;
}

SBX_INLINE std::optional<std::string> git_ssh_command(std::string_view program) {
    const auto command = ssh_proxy_command(program);
    if (!command) return std::nullopt;
    std::string out = "ssh -o '";
    for (const char c : "ProxyCommand " + *command) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

SBX_INLINE expected<ProxyUrl> parse_proxy_url(std::string_view url) {
    constexpr std::string_view kScheme = "http://";
    if (!url.starts_with(kScheme)) return fail(Errc::invalid_argument, "the proxy's URL does not start with http://");
    std::string_view rest = url.substr(kScheme.size());
    if (!rest.empty() && rest.back() == '/') rest.remove_suffix(1);
    ProxyUrl out;
    if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
        const std::string_view info = rest.substr(0, at);
        const auto colon = info.find(':');
        auto user = detail::percent_decoded(info.substr(0, colon));
        auto password = detail::percent_decoded(colon == std::string_view::npos ? "" : info.substr(colon + 1));
        if (!user || !password)
            return fail(Errc::invalid_argument, "the proxy's URL has a user or password that is not percent-encoded");
        out.credentials = true;
        out.user = std::move(*user);
        out.password = std::move(*password);
        rest = rest.substr(at + 1);
    }
    std::string_view port;
    if (rest.starts_with("[")) {
        const auto close = rest.find(']');
        if (close == std::string_view::npos || close + 1 >= rest.size() || rest[close + 1] != ':')
            return fail(Errc::invalid_argument, "the proxy's URL has no [ADDRESS]:PORT");
        out.address = std::string(rest.substr(1, close - 1));
        port = rest.substr(close + 2);
    } else {
        const auto colon = rest.rfind(':');
        if (colon == std::string_view::npos) return fail(Errc::invalid_argument, "the proxy's URL has no port");
        out.address = std::string(rest.substr(0, colon));
        port = rest.substr(colon + 1);
    }
    const bool v6 = out.address.find(':') != std::string::npos;
    for (const char c : out.address) {
        const bool ok = (c >= '0' && c <= '9') || c == '.' || (v6 && (c == ':' || (c >= 'a' && c <= 'f') ||
                                                                        (c >= 'A' && c <= 'F')));
        if (!ok) return fail(Errc::invalid_argument, "the proxy's URL names a host, not an address: " + out.address);
    }
    unsigned number = 0;
    const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), number);
    if (out.address.empty() || port.empty() || ec != std::errc() || end != port.data() + port.size() ||
        number == 0 || number > 65535)
        return fail(Errc::invalid_argument, "the proxy's URL has no valid port");
    out.port = static_cast<std::uint16_t>(number);
    return out;
}

SBX_INLINE expected<std::string> relay_host(std::string_view host) {
    if (host.empty() || host.size() > 253) return fail(Errc::invalid_argument, "the host is empty or longer than 253 bytes");
    for (std::size_t i = 0; i < host.size(); ++i) {
        const char c = host[i];
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                        c == '-' || c == '_' || c == ':';
        if (!ok)
            return fail(Errc::invalid_argument, "the host holds byte " + std::to_string(i) + " (0x" +
                                                 "0123456789abcdef"[static_cast<unsigned char>(c) >> 4] +
                                                 "0123456789abcdef"[static_cast<unsigned char>(c) & 0xf] +
                                                 "), which no host name or address has");
    }
    return std::string(host);
}

SBX_INLINE std::string connect_target(std::string_view host, std::uint16_t port) {
    const bool v6 = host.find(':') != std::string_view::npos;
    return (v6 ? "[" + std::string(host) + "]" : std::string(host)) + ":" + std::to_string(port);
}

SBX_INLINE std::string connect_request(std::string_view host, std::uint16_t port, const ProxyUrl& proxy) {
    const std::string target = connect_target(host, port);
    std::string out = "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n";
    if (proxy.credentials) out += "Proxy-Authorization: " + proxy_auth::basic_value(proxy.user, proxy.password) + "\r\n";
    return out + "\r\n";
}

SBX_INLINE expected<ConnectReply> parse_connect_reply(std::string_view head) {
    const auto eol = head.find("\r\n");
    const std::string_view line = head.substr(0, eol);
    if (eol == std::string_view::npos || line.size() < 12 || !line.starts_with("HTTP/1.") ||
        (line[7] != '0' && line[7] != '1') || line[8] != ' ')
        return fail(Errc::invalid_argument, "the proxy's answer is not HTTP/1.x");
    ConnectReply out;
    for (std::size_t i = 9; i < 12; ++i) {
        if (line[i] < '0' || line[i] > '9') return fail(Errc::invalid_argument, "the proxy's answer has no status code");
        out.status = out.status * 10 + (line[i] - '0');
    }
    if (line.size() > 12 && line[12] != ' ') return fail(Errc::invalid_argument, "the proxy's status code is not 3 digits");
    out.reason = replace_controls(line.size() > 13 ? line.substr(13) : std::string_view(), '?');
    return out;
}

}  // namespace sbx::net
#endif
