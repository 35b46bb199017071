// Fuzzing parse_host_pattern(), canonical_target() and matches().
//
// Any bytes come back as a pattern or as an error with a message. A pattern that
// parses, written back in its canonical form, parses to the same pattern; it
// matches the target its own host makes (a name that name, *.x a name under x, an
// address that address, * anything), on its port. The same bytes read as a
// connection's host give a target whose canonical host reads back as itself,
// which a pattern read from those bytes matches when both are names or both
// addresses. printable_host() lets no control byte through.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "check.hpp"
#include "sbx/net/host_pattern.hpp"

namespace {

using sbx::fuzz::check;
using sbx::net::HostPattern;
using sbx::net::HostTarget;

// The pattern as settings would write it, from its normalised parts.
std::string spelled(const HostPattern& p) {
    std::string out;
    switch (p.kind) {
        case HostPattern::Kind::any: out = "*"; break;
        case HostPattern::Kind::subdomains: out = "*." + p.host; break;
        case HostPattern::Kind::name: out = p.host; break;
        case HostPattern::Kind::address: out = p.address->is_v6() ? "[" + p.host + "]" : p.host; break;
    }
    if (p.port) out += ":" + std::to_string(*p.port);
    return out;
}

void check_target(const HostTarget& t) {
    auto again = sbx::net::canonical_target(t.host, t.port);
    check(again.has_value(), "a canonical host is a host");
    check(again->host == t.host && again->address == t.address, "a canonical host reads back as itself");
    for (const char c : sbx::net::printable_host(t.host))
        check(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f, "printable_host() prints no control byte");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    for (const char c : sbx::net::printable_host(text))
        check(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f && static_cast<unsigned char>(c) < 0x80,
              "printable_host() prints plain ASCII only");

    auto target = sbx::net::canonical_target(text, 443);
    if (target) check_target(*target);
    else sbx::fuzz::check_error(target.error(), "");

    auto pattern = sbx::net::parse_host_pattern(text);
    if (!pattern) {
        sbx::fuzz::check_error(pattern.error(), "");
        return 0;
    }
    const HostPattern& p = *pattern;
    check((p.kind == HostPattern::Kind::address) == p.address.has_value(), "an address pattern, and only one, holds an address");
    auto back = sbx::net::parse_host_pattern(spelled(p));
    check(back.has_value(), "a pattern's canonical spelling parses");
    check(*back == p, "a pattern's canonical spelling parses to the same pattern");

    const std::uint16_t port = p.port.value_or(443);
    std::optional<std::string> own_host;
    switch (p.kind) {
        case HostPattern::Kind::any: own_host = "example.com"; break;
        case HostPattern::Kind::subdomains: own_host = "a." + p.host; break;
        case HostPattern::Kind::name:
        case HostPattern::Kind::address: own_host = p.host; break;
    }
    auto own = sbx::net::canonical_target(*own_host, port);
    // A name that reads as a numeric address ("0x1") is a pattern no connection meets by name.
    if (own && (own->address.has_value() == (p.kind == HostPattern::Kind::address) || p.kind == HostPattern::Kind::any)) {
        check_target(*own);
        check(sbx::net::matches(p, *own), "a pattern matches the target its own host makes");
        if (p.port) {
            auto other = *own;
            other.port = static_cast<std::uint16_t>(*p.port == 1 ? 2 : 1);
            check(!sbx::net::matches(p, other), "a pattern with a port matches no other port");
        }
    }
    if (p.kind == HostPattern::Kind::subdomains) {
        auto bare = sbx::net::canonical_target(p.host, port);
        if (bare) check(!sbx::net::matches(p, *bare), "*.x does not match x itself");
    }
    if (target && !p.port && p.kind != HostPattern::Kind::subdomains &&
        target->address.has_value() == (p.kind == HostPattern::Kind::address))
        check(sbx::net::matches(p, *target), "a pattern matches the target read from the same bytes");
    return 0;
}
