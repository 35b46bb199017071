// sbx/net/host_pattern.hpp - host patterns, and a connection's host in the same form.
//
// A pattern is what settings (network.allowedDomains, deniedDomains, WebFetch
// rules) and calls write: `github.com` (that host only), `*.example.com` (its
// subdomains, never the bare domain nor an address), `*` (every host), an IPv4
// dotted quad or a bracketed IPv6 address, each with an optional `:port`. Names
// compare in lower case. Anything else is refused with the reason, when the
// settings load. A connection's host goes through canonical_target() first, so
// that every spelling of an address (2852039166, 0xa9.0xfe.0xa9.0xfe,
// ::ffff:169.254.169.254) meets the rules as the one address it is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <string_view>

#include "sbx/core/ascii.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/net/address.hpp"
#include "sbx/net/host_port.hpp"

namespace sbx::net {

// One host pattern, normalised: names in lower case without a trailing dot,
// addresses in canonical text.
struct HostPattern {
    enum class Kind {
        name,        // "github.com": that host only
        subdomains,  // "*.example.com": its subdomains, not example.com itself, never an address
        any,         // "*": every host (what it lets through: hosts.hpp, Reach)
        address,     // "127.0.0.1", "[::1]": that address
    };
    Kind kind = Kind::name;
    std::string host;                   // name, suffix (without "*."), or address text; empty for any
    std::optional<Address> address;     // for Kind::address
    std::optional<std::uint16_t> port;  // nullopt: every port
    friend bool operator==(const HostPattern&, const HostPattern&) = default;
};

// What one connection asks for, normalised like a pattern.
struct HostTarget {
    std::string host;                // lower-case name, or canonical address text
    std::optional<Address> address;  // when the host is an address literal
    std::uint16_t port = 0;
    // Where a name leads without asking the network (sbx/net/hosts_file.hpp:
    // localhost, the hosts file), for an address pattern that names one of
    // them (decide_host's named_address step); the caller fills it, empty: none.
    std::vector<Address> local_addresses{};
};

namespace detail {

// A DNS name as hosts are written: labels of letters, digits, '-' and '_', 1 to
// 63 bytes, 253 in all, no label starting or ending with '-', and a last label
// that is not all digits (that would be an address in disguise). Lower-cased,
// trailing dot dropped. nullopt with the reason in `why` otherwise.
SBX_INLINE std::optional<std::string> normal_name(std::string_view s, std::string& why);

}  // namespace detail

// Parses one pattern as settings write it. Fails (INVALID_SETTINGS, message
// only: callers add the file and key) for anything else: a URL, a path, a CIDR
// range, a wildcard anywhere but a whole first label, an unbracketed IPv6
// address, a numeric form of IPv4 other than the dotted quad, control or
// non-ASCII characters.
SBX_INLINE expected<HostPattern> parse_host_pattern(std::string_view text);

// The canonical form of what a client asked for: brackets stripped, names
// lower-cased without a trailing dot, every numeric IPv4 form (2852039166,
// 0xa9.0xfe.0xa9.0xfe) and IPv4-mapped IPv6 as the dotted quad they mean.
// Fails (INVALID_ARGUMENT) for a host no resolver should see.
SBX_INLINE expected<HostTarget> canonical_target(std::string_view host, std::uint16_t port);

// A target as people and logs write it: "host:port", an IPv6 address in brackets.
SBX_INLINE std::string to_string(const HostTarget& t);

// The port of a host named without one (`sbx explain --host github.com`, a
// check file's "host"): HTTPS's.
inline constexpr std::uint16_t kNamedHostPort = 443;

// A host as a person names it to sbx: HOST, HOST:PORT, [V6], [V6]:PORT or a bare
// IPv6 address, the port padded with zeros or not (as a client may send it), and
// kNamedHostPort when there is none; canonical as canonical_target() makes it.
// Fails (INVALID_ARGUMENT, message only: the caller names where the text was)
// for a URL and for any other text that names no host.
SBX_INLINE expected<HostTarget> named_target(std::string_view text);

// `host` for a terminal: the characters canonical host text has (a-z, 0-9, '.',
// '-', '_', ':') as they are, every other byte as \xNN, so that no host, however
// it got here, carries a control sequence to the person reading it.
SBX_INLINE std::string printable_host(std::string_view host);

// Whether `t` is `localhost` or a name under it, which reach loopback.
SBX_INLINE bool is_localhost(const HostTarget& t);

// Whether `p` names `t`, as text: `*` every host (names and addresses of every
// kind), `*.example.com` the names under it, a name that name, an address that
// address; on the pattern's port if it has one. What a matching allow pattern
// lets a connection reach is hosts.hpp's to say (Reach); a matching deny pattern
// refuses the target whatever it is.
SBX_INLINE bool matches(const HostPattern& p, const HostTarget& t);

}  // namespace sbx::net

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_NET)

namespace sbx::net::detail {

SBX_INLINE std::optional<std::string> normal_name(std::string_view s, std::string& why) {
    if (!s.empty() && s.back() == '.') s.remove_suffix(1);
    if (s.empty()) {
        why = "the host name is empty";
        return std::nullopt;
    }
    if (s.size() > 253) {
        why = "the host name is longer than 253 bytes";
        return std::nullopt;
    }
    std::string out;
    out.reserve(s.size());
    std::size_t label_start = 0;
    bool label_all_digits = true;
    for (std::size_t i = 0; i <= s.size(); ++i) {
        if (i == s.size() || s[i] == '.') {
            const std::size_t len = i - label_start;
            if (len == 0) {
                why = "the host name has an empty label";
                return std::nullopt;
            }
            if (len > 63) {
                why = "a label of the host name is longer than 63 bytes";
                return std::nullopt;
            }
            if (s[label_start] == '-' || s[i - 1] == '-') {
                why = "a label of the host name starts or ends with '-'";
                return std::nullopt;
            }
            if (i == s.size() && label_all_digits) {
                why = "the host name ends in a number: write an address as a dotted quad";
                return std::nullopt;
            }
            if (i < s.size()) out += '.';
            label_start = i + 1;
            label_all_digits = true;
            continue;
        }
        const char c = ascii_lower(s[i]);
        const bool digit = c >= '0' && c <= '9';
        if (!digit && !(c >= 'a' && c <= 'z') && c != '-' && c != '_') {
            const auto u = static_cast<unsigned char>(s[i]);
            if (u < 0x20 || u == 0x7f) why = "the host has a control character";
            else if (u >= 0x80) why = "the host has a non-ASCII character; write an international name in its xn-- form";
            else why = std::string("the host has the character '") + s[i] + "'";
            return std::nullopt;
        }
        if (!digit) label_all_digits = false;
        out += c;
    }
    return out;
}

}  // namespace sbx::net::detail

namespace sbx::net {

SBX_INLINE expected<HostPattern> parse_host_pattern(std::string_view text) {
    auto refuse = [&](const std::string& why) -> expected<HostPattern> {
        // Appended piece by piece: GCC 12 at -O3 warns falsely (-Wrestrict) on "'" + std::string.
        std::string message(1, '\'');
        message.append(text).append("' is not a host pattern: ").append(why);
        return fail(Errc::invalid_settings, std::move(message));
    };
    if (text.find("://") != std::string_view::npos) return refuse("write the host alone, not a URL");
    if (text.find('/') != std::string_view::npos) return refuse("a host has no '/' (a path, or a CIDR range, which sbx does not take)");
    for (char c : text)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f || c == ' ') return refuse("it has a space or a control character");
    auto split = split_host_port(text);
    if (!split) return refuse(split.error().message);
    const std::string_view host = split->host;
    HostPattern p;
    p.port = split->port;
    std::string why;
    if (host == "*") {
        p.kind = HostPattern::Kind::any;
        return p;
    }
    if (!host.empty() && host.front() == '[') {
        auto a = parse_ipv6(host.substr(1, host.size() - 2));
        if (!a) return refuse("the part in brackets is not an IPv6 address");
        p.address = unmap(*a);
        p.kind = HostPattern::Kind::address;
        p.host = to_string(*p.address);
        return p;
    }
    if (auto a = parse_ipv4_dotted(host)) {
        p.kind = HostPattern::Kind::address;
        p.address = *a;
        p.host = to_string(*a);
        return p;
    }
    if (host.starts_with("*.")) {
        auto name = detail::normal_name(host.substr(2), why);
        if (!name) return refuse(why);
        p.kind = HostPattern::Kind::subdomains;
        p.host = std::move(*name);
        return p;
    }
    if (host.find('*') != std::string_view::npos) return refuse("a wildcard stands only as the whole first label, *.example.com");
    auto name = detail::normal_name(host, why);
    if (!name) return refuse(why);
    p.kind = HostPattern::Kind::name;
    p.host = std::move(*name);
    return p;
}

SBX_INLINE expected<HostTarget> canonical_target(std::string_view host, std::uint16_t port) {
    HostTarget t;
    t.port = port;
    if (port == 0) return fail(Errc::invalid_argument, "port 0 is not a port");
    if (!host.empty() && host.front() == '[') {
        if (host.size() < 2 || host.back() != ']') return fail(Errc::invalid_argument, "a '[' without its ']'");
        host = host.substr(1, host.size() - 2);
    }
    if (host.find(':') != std::string_view::npos) {
        auto a = parse_ipv6(host);
        if (!a) return fail(Errc::invalid_argument, "'" + std::string(host) + "' is not an IPv6 address");
        t.address = unmap(*a);
        t.host = to_string(*t.address);
        return t;
    }
    if (auto a = parse_ipv4_any(host)) {
        t.address = *a;
        t.host = to_string(*a);
        return t;
    }
    std::string why;
    auto name = detail::normal_name(host, why);
    if (!name) return fail(Errc::invalid_argument, why);
    // Without its trailing dot a name can be a number ("0xa9fea9fe." is
    // 169.254.169.254 once the dot is gone), which a resolver reads as an address.
    if (auto a = parse_ipv4_any(*name)) {
        t.address = *a;
        t.host = to_string(*a);
        return t;
    }
    t.host = std::move(*name);
    return t;
}

SBX_INLINE std::string to_string(const HostTarget& t) {
    const bool v6 = t.address && t.address->is_v6();
    return (v6 ? "[" + t.host + "]" : t.host) + ":" + std::to_string(t.port);
}

SBX_INLINE expected<HostTarget> named_target(std::string_view text) {
    if (text.find("://") != std::string_view::npos) return fail(Errc::invalid_argument, "write the host alone, not a URL");
    auto split = split_host_port(text, {.zeros = PortZeros::allowed, .bare_ipv6 = BareIpv6::whole_host});
    if (!split) return fail(split.error());
    return canonical_target(split->host, split->port.value_or(kNamedHostPort));
}

SBX_INLINE std::string printable_host(std::string_view host) {
    constexpr std::string_view kHex = "0123456789abcdef";
    std::string out;
    for (const char c : host) {
        const bool plain = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_' || c == ':';
        if (plain) {
            out += c;
            continue;
        }
        const auto u = static_cast<unsigned char>(c);
        out += "\\x";
        out += kHex[u >> 4];
        out += kHex[u & 0xf];
    }
    return out;
}

SBX_INLINE bool is_localhost(const HostTarget& t) {
    return !t.address && (t.host == "localhost" || t.host.ends_with(".localhost"));
}

SBX_INLINE bool matches(const HostPattern& p, const HostTarget& t) {
    if (p.port && *p.port != t.port) return false;
    switch (p.kind) {
        case HostPattern::Kind::any: return true;
        case HostPattern::Kind::address: return t.address && *t.address == *p.address;
        case HostPattern::Kind::name: return !t.address && t.host == p.host;
        case HostPattern::Kind::subdomains:
            return !t.address && t.host.size() > p.host.size() + 1 && t.host.ends_with(p.host) &&
                   t.host[t.host.size() - p.host.size() - 1] == '.';
    }
    return false;
}

}  // namespace sbx::net
#endif
