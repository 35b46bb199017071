// sbx/net/host_port.hpp - the one splitter of "host:port" text into its host and port.
//
// Settings patterns (`github.com:443`), the proxy's CONNECT authority and
// absolute URLs, and `sbx explain --host` all write a host with an optional
// port, and all split it here, by these rules:
//   - `[v6]` or `[v6]:PORT`: brackets hold an IPv6 address (what is inside is the
//     caller's to judge); only `:PORT` may follow the `]`;
//   - otherwise at most one colon: `host` or `host:PORT`; two or more colons are an
//     IPv6 address without its brackets, refused (BareIpv6::refused);
//   - the host is not empty; a PORT is 1 to 5 decimal digits, from 1 to 65535.
// The host comes back as written, brackets kept, so that the caller canonicalises
// it once (host_pattern.hpp: parse_host_pattern, canonical_target).
// Two callers differ, each by a named rule: what a client sends may pad its port
// with zeros (PortZeros), and a person typing `sbx explain --host ::1` means the
// address (BareIpv6).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"

namespace sbx::net {

// Whether a port may start with 0 ("080").
enum class PortZeros {
    // Settings patterns: one spelling per port, so a pattern reads as it matches.
    refused,
    // What clients send: RFC 3986 writes a URL's port as *DIGIT, and curl sends
    // `http://host:080/` as it was typed; refusing it would refuse what a
    // browser reaches.
    allowed,
};

// What text with two or more colons and no brackets is.
enum class BareIpv6 {
    // Patterns and proxy requests: `::1:80` could be an address or an address and
    // a port, so only the bracketed form is taken.
    refused,
    // `sbx explain --host`: the whole text is the host (an IPv6 address with the
    // default port), as a person typing one address means it.
    whole_host,
};

struct HostPortRules {
    PortZeros zeros = PortZeros::refused;
    BareIpv6 bare_ipv6 = BareIpv6::refused;
};

// The two parts of "host:port" text.
struct HostPort {
    std::string_view host;              // as written: an IPv6 address keeps its brackets
    std::optional<std::uint16_t> port;  // nullopt: the text names no port
    friend bool operator==(const HostPort&, const HostPort&) = default;
};

// Splits `text` by the rules above. Fails (INVALID_ARGUMENT, message only: the
// caller says what the text was) with the rule it breaks.
SBX_INLINE expected<HostPort> split_host_port(std::string_view text, HostPortRules rules = {});

}  // namespace sbx::net

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_NET)

namespace sbx::net {

SBX_INLINE expected<HostPort> split_host_port(std::string_view text, HostPortRules rules) {
    HostPort out;
    std::size_t colon = std::string_view::npos;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find(']');
        if (close == std::string_view::npos) return fail(Errc::invalid_argument, "a '[' without its ']'");
        if (close + 1 < text.size() && text[close + 1] != ':')
            return fail(Errc::invalid_argument, "something after ']' that is not ':PORT'");
        out.host = text.substr(0, close + 1);
        if (close + 1 < text.size()) colon = close + 1;
    } else {
        colon = text.find(':');
        if (colon != std::string_view::npos && text.find(':', colon + 1) != std::string_view::npos) {
            if (rules.bare_ipv6 == BareIpv6::refused)
                return fail(Errc::invalid_argument, "an IPv6 address is written in brackets, [::1]");
            colon = std::string_view::npos;
        }
        out.host = text.substr(0, colon);
    }
    if (out.host.empty()) return fail(Errc::invalid_argument, "the host is empty");
    if (colon == std::string_view::npos) return out;

    const std::string_view digits = text.substr(colon + 1);
    bool number = !digits.empty() && digits.size() <= 5;
    if (rules.zeros == PortZeros::refused && digits.size() > 1 && digits.front() == '0') number = false;
    unsigned value = 0;
    for (std::size_t i = 0; number && i < digits.size(); ++i) {
        if (digits[i] < '0' || digits[i] > '9') number = false;
        else value = value * 10 + static_cast<unsigned>(digits[i] - '0');
    }
    if (!number || value == 0 || value > 65535) return fail(Errc::invalid_argument, "the port is not a number from 1 to 65535");
    out.port = static_cast<std::uint16_t>(value);
    return out;
}

}  // namespace sbx::net
#endif
