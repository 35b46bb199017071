// Fuzzing the address parsers and to_string() of net/address.hpp.
//
// Round trips: an address that parses prints (to_string) a text that parses to
// the same address, and printing that again gives the same text; a dotted quad
// prints as itself. Agreement with glibc, which the parsers' comments promise:
// parse_ipv6() accepts exactly what inet_pton(AF_INET6) accepts, with the same
// bytes; every address parse_ipv4_any() reads, inet_aton() reads as the same
// value, and inet_aton() reads nothing made of digits, letters of a number and
// dots that parse_ipv4_any() refuses; whatever parse_ipv4_dotted() reads,
// parse_ipv4_any() reads the same. unmap(mapped(a)) == a for IPv4.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "check.hpp"
#include "sbx/net/address.hpp"

namespace {

using sbx::fuzz::check;
namespace net = sbx::net;

bool numeric_v4_spelling(std::string_view s) {
    for (const char c : s) {
        const bool ok = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') || c == 'x' || c == 'X' || c == '.';
        if (!ok) return false;
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    // glibc reads C strings: bytes past a NUL are not what it sees.
    const bool c_string = text.find('\0') == std::string_view::npos;
    const std::string z(text);

    const auto v6 = net::parse_ipv6(text);
    if (v6) {
        check(v6->is_v6(), "parse_ipv6() gives an IPv6 address");
        const std::string printed = net::to_string(*v6);
        const auto back = net::parse_ipv6(printed);
        check(back && *back == *v6, "an IPv6 address prints to a text that parses to it");
        check(net::to_string(*back) == printed, "printing an IPv6 address is stable");
        check(net::classify(net::unmap(*v6)) == net::classify(net::unmap(*back)), "an address keeps its class");
    }
    if (c_string) {
        in6_addr raw{};
        const bool glibc = inet_pton(AF_INET6, z.c_str(), &raw) == 1;
        check(glibc == v6.has_value(), "parse_ipv6() accepts what inet_pton(AF_INET6) accepts");
        if (v6) check(std::memcmp(raw.s6_addr, v6->bytes.data(), 16) == 0, "parse_ipv6() reads the bytes inet_pton reads");
    }

    const auto any = net::parse_ipv4_any(text);
    if (any) {
        check(any->is_v4(), "parse_ipv4_any() gives an IPv4 address");
        const std::string printed = net::to_string(*any);
        const auto dotted = net::parse_ipv4_dotted(printed);
        check(dotted && *dotted == *any, "an IPv4 address prints as a dotted quad that parses to it");
        check(net::to_string(*dotted) == printed, "printing an IPv4 address is stable");
        check(net::unmap(net::detail::mapped(*any)) == *any, "unmap(mapped(a)) is a");
        const auto as_v6 = net::parse_ipv6(net::to_string(net::detail::mapped(*any)));
        check(as_v6 && net::unmap(*as_v6) == *any, "a mapped address prints to a text that parses to it");
    }
    if (c_string) {
        in_addr raw{};
        const bool glibc = inet_aton(z.c_str(), &raw) != 0;
        if (any) {
            check(glibc, "inet_aton() reads what parse_ipv4_any() reads");
            check(std::memcmp(&raw.s_addr, any->bytes.data(), 4) == 0, "parse_ipv4_any() reads the value inet_aton reads");
        } else if (glibc && numeric_v4_spelling(text)) {
            check(false, "parse_ipv4_any() reads every number inet_aton() reads");
        }
    }

    const auto dotted = net::parse_ipv4_dotted(text);
    if (dotted) {
        check(any && *any == *dotted, "parse_ipv4_any() reads a dotted quad as parse_ipv4_dotted() does");
        check(net::to_string(*dotted) == text, "a dotted quad prints as itself");
    }
    return 0;
}
