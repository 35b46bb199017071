// sbx/net/address.hpp - IP addresses, as the network proxy decides about them.
//
// The proxy meets addresses as text (a settings pattern, the host of a CONNECT, SOCKS
// or absolute-form HTTP request) and as the answers of its one resolution. This header
// turns text into an Address with parsers that refuse whatever they do not fully
// understand, prints an Address in one canonical form, and says what kind of place an
// address is (classify(): loopback, link-local, cloud metadata, ...) from the
// constexpr table kClassRanges, one reason per row.
//
// Clients dodge rules with spellings a resolver reads as numbers (`2852039166` and
// `0xa9.0xfe.0xa9.0xfe` are 169.254.169.254: parse_ipv4_any() reads them all) and with
// IPv6 addresses that carry an IPv4 one (`::ffff:169.254.169.254`: unmap(), in_prefix()
// and classify() see through it). Everything here is a pure function of its
// arguments: no system call, no locale, no allocation but to_string()'s string.
#pragma once

#include <array>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sbx/core/inline.hpp"

namespace sbx::net {

// An IPv4 or IPv6 address: a value, compared byte by byte (every IPv4 address sorts
// before every IPv6 one). `bytes` are in network order; an IPv4 address uses the first
// four and keeps the other twelve zero, which the named constructors and the parsers
// promise and == relies on.
struct Address {
    enum class Family : std::uint8_t { v4, v6 };

    Family family = Family::v4;
    std::array<std::uint8_t, 16> bytes{};

    static constexpr Address v4(std::uint8_t a, std::uint8_t b, std::uint8_t c, std::uint8_t d) noexcept {
        Address out;
        out.bytes[0] = a;
        out.bytes[1] = b;
        out.bytes[2] = c;
        out.bytes[3] = d;
        return out;
    }
    // The IPv4 address whose 32-bit value (most significant byte first) is `value`.
    static constexpr Address v4_from_u32(std::uint32_t value) noexcept {
        return v4(static_cast<std::uint8_t>(value >> 24), static_cast<std::uint8_t>(value >> 16),
                  static_cast<std::uint8_t>(value >> 8), static_cast<std::uint8_t>(value));
    }
    static constexpr Address v6(const std::array<std::uint8_t, 16>& b) noexcept {
        Address out;
        out.family = Family::v6;
        out.bytes = b;
        return out;
    }

    constexpr bool is_v4() const noexcept { return family == Family::v4; }
    constexpr bool is_v6() const noexcept { return family == Family::v6; }

    friend constexpr bool operator==(const Address&, const Address&) = default;
    friend constexpr auto operator<=>(const Address&, const Address&) = default;
};

// How many bits an address of the family has: 32 or 128.
constexpr unsigned address_bits(Address::Family f) noexcept { return f == Address::Family::v4 ? 32 : 128; }

namespace detail {

constexpr bool is_decimal(char c) noexcept { return c >= '0' && c <= '9'; }

// The value of digit `c` in `base` (8, 10 or 16; hex in either case), or -1.
constexpr int digit_value(char c, unsigned base) noexcept {
    int v = -1;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    return v >= 0 && static_cast<unsigned>(v) < base ? v : -1;
}

// One part of a numeric IPv4 form starting at s[i], read as inet_aton reads it: `0x`
// or `0X` then hex digits, `0` then octal digits, or decimal digits; it ends at a `.`
// or at the end of `s`. Leaves `i` there. nullopt: no digit at s[i] (a sign, a space,
// an empty part), a character that is not a digit of the base (`08`, `1a`), `0x` with
// no hex digit, or a value above 2^32-1.
constexpr std::optional<std::uint32_t> ipv4_part(std::string_view s, std::size_t& i) noexcept {
    if (i >= s.size() || !is_decimal(s[i])) return std::nullopt;
    unsigned base = 10;
    if (s[i] == '0') {
        base = 8;  // the 0 itself is read as an octal digit
        if (i + 1 < s.size() && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
            base = 16;
            i += 2;
        }
    }
    const std::size_t start = i;
    std::uint64_t value = 0;
    for (; i < s.size() && s[i] != '.'; ++i) {
        const int d = digit_value(s[i], base);
        if (d < 0) return std::nullopt;
        value = value * base + static_cast<unsigned>(d);
        if (value > 0xffffffffu) return std::nullopt;
    }
    if (i == start) return std::nullopt;
    return static_cast<std::uint32_t>(value);
}

}  // namespace detail

// A dotted quad exactly as a settings pattern must write one: four decimal parts of
// 0-255 joined by `.`, no leading zero (but `0` itself), nothing before or after.
// Refuses every other spelling, including ones parse_ipv4_any() reads ("01.2.3.4",
// "1.2.3", "0x1.2.3.4"), so a rule says what it means in one way only.
constexpr std::optional<Address> parse_ipv4_dotted(std::string_view s) noexcept {
    std::array<std::uint8_t, 4> out{};
    std::size_t i = 0;
    for (std::size_t part = 0; part < 4; ++part) {
        if (part > 0) {
            if (i >= s.size() || s[i] != '.') return std::nullopt;
            ++i;
        }
        const std::size_t start = i;
        unsigned value = 0;
        for (; i < s.size() && i - start < 3 && detail::is_decimal(s[i]); ++i)
            value = value * 10 + static_cast<unsigned>(s[i] - '0');
        const std::size_t length = i - start;
        if (length == 0 || value > 255 || (length > 1 && s[start] == '0')) return std::nullopt;
        out[part] = static_cast<std::uint8_t>(value);
    }
    if (i != s.size()) return std::nullopt;
    return Address::v4(out[0], out[1], out[2], out[3]);
}

// Every numeric IPv4 form glibc's inet_aton() accepts, the forms a resolver (and so a
// client) turns into an address: one to four parts joined by `.`, each decimal, octal
// (leading `0`) or hex (`0x`/`0X`), every part but the last one byte, the last filling
// the bytes left: "2852039166", "0xA9FEA9FE", "169.16689662", "169.254.43518",
// "0251.0376.0251.0376", "127.1". Refuses, as inet_aton does: an empty string or part
// ("", ".", "1..2", a trailing dot as in "1.2.3.4."), five parts, a sign, a part over
// its range ("256.1.1.1", "1.16777216", "4294967296"), `0x` with no digit, a digit
// beyond its base ("08"). Refuses too what inet_aton lets through: anything after the
// address, even the whitespace and text inet_aton ignores there ("1.2.3.4 x").
//
// A host that is refused here is no IPv4 address: the caller treats it as a name, and
// the address that name resolves to is classified before it is dialled.
constexpr std::optional<Address> parse_ipv4_any(std::string_view s) noexcept {
    // The largest value of the last part, by the number of parts.
    constexpr std::uint32_t kLastPartMax[4] = {0xffffffffu, 0xffffffu, 0xffffu, 0xffu};
    std::array<std::uint32_t, 4> parts{};
    std::size_t n = 0;
    std::size_t i = 0;
    for (;;) {
        const auto part = detail::ipv4_part(s, i);
        if (!part) return std::nullopt;
        parts[n++] = *part;
        if (i == s.size()) break;
        if (n == 4) return std::nullopt;  // a fifth part, or a dot after the fourth
        ++i;                              // past the '.' that ended the part
    }
    std::uint32_t value = 0;
    for (std::size_t k = 0; k + 1 < n; ++k) {
        if (parts[k] > 0xffu) return std::nullopt;
        value |= parts[k] << (24 - 8 * k);
    }
    if (parts[n - 1] > kLastPartMax[n - 1]) return std::nullopt;
    return Address::v4_from_u32(value | parts[n - 1]);
}

// An IPv6 address in the text forms of RFC 4291 §2.2: eight groups of one to four hex
// digits (either case) joined by `:`; `::` once, for one or more zero groups; a dotted
// quad (as parse_ipv4_dotted() reads it) in place of the last two groups
// ("::ffff:1.2.3.4", "64:ff9b::1.2.3.4"). Refuses a zone ("fe80::1%eth0"), brackets
// ("[::1]": the caller strips them), a prefix length, a single leading or trailing `:`,
// a second `::`, five hex digits, nine groups, and a `::` standing for no group at all
// ("1:2:3:4:5:6:7:8::"). Accepts exactly what glibc's inet_pton(AF_INET6) accepts.
constexpr std::optional<Address> parse_ipv6(std::string_view s) noexcept {
    if (s == "::") return Address::v6({});
    constexpr std::size_t kNoGap = static_cast<std::size_t>(-1);
    std::array<std::uint16_t, 8> g{};
    std::size_t n = 0;         // groups read
    std::size_t gap = kNoGap;  // how many groups came before the `::`
    std::size_t i = 0;
    if (s.size() >= 2 && s[0] == ':' && s[1] == ':') {
        gap = 0;
        i = 2;
    }
    for (;;) {
        const std::size_t start = i;
        while (i < s.size() && detail::digit_value(s[i], 16) >= 0) ++i;
        if (i < s.size() && s[i] == '.') {  // a dotted quad: the last two groups
            const auto quad = parse_ipv4_dotted(s.substr(start));
            if (!quad || n > 6) return std::nullopt;
            g[n++] = static_cast<std::uint16_t>(quad->bytes[0] << 8 | quad->bytes[1]);
            g[n++] = static_cast<std::uint16_t>(quad->bytes[2] << 8 | quad->bytes[3]);
            break;  // the quad ran to the end of `s`
        }
        const std::size_t digits = i - start;
        if (digits == 0 || digits > 4 || n == 8) return std::nullopt;
        unsigned value = 0;
        for (std::size_t k = start; k < i; ++k) value = value * 16 + static_cast<unsigned>(detail::digit_value(s[k], 16));
        g[n++] = static_cast<std::uint16_t>(value);
        if (i == s.size()) break;
        if (s[i] != ':') return std::nullopt;
        ++i;
        if (i < s.size() && s[i] == ':') {
            if (gap != kNoGap) return std::nullopt;
            gap = n;
            ++i;
            if (i == s.size()) break;
        } else if (i == s.size()) {
            return std::nullopt;  // a single trailing ':'
        }
    }
    if (gap == kNoGap) {
        if (n != 8) return std::nullopt;
    } else {
        if (n == 8) return std::nullopt;  // `::` must stand for at least one group
        const std::size_t tail = n - gap;
        for (std::size_t k = 0; k < tail; ++k) g[7 - k] = g[n - 1 - k];
        for (std::size_t k = gap; k < 8 - tail; ++k) g[k] = 0;
    }
    std::array<std::uint8_t, 16> b{};
    for (std::size_t k = 0; k < 8; ++k) {
        b[2 * k] = static_cast<std::uint8_t>(g[k] >> 8);
        b[2 * k + 1] = static_cast<std::uint8_t>(g[k]);
    }
    return Address::v6(b);
}

namespace detail {

// Whether the first `bits` bits of `a` and `b` agree. Both hold at least `bits` bits.
constexpr bool same_leading_bits(const Address& a, const Address& b, unsigned bits) noexcept {
    const unsigned whole = bits / 8;
    for (unsigned k = 0; k < whole; ++k)
        if (a.bytes[k] != b.bytes[k]) return false;
    if (bits % 8 == 0) return true;
    const auto mask = static_cast<std::uint8_t>(0xff00u >> (bits % 8));
    return ((a.bytes[whole] ^ b.bytes[whole]) & mask) == 0;
}

// The IPv4 address held in bytes at..at+3 of `a`.
constexpr Address v4_at(const Address& a, std::size_t at) noexcept {
    return Address::v4(a.bytes[at], a.bytes[at + 1], a.bytes[at + 2], a.bytes[at + 3]);
}

// ::ffff:0:0/96, IPv4-mapped (RFC 4291 §2.5.5.2), and 64:ff9b::/96, the NAT64
// well-known prefix (RFC 6052): the prefixes whose addresses print with a dotted tail.
inline constexpr Address kV4MappedPrefix = Address::v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0});
inline constexpr Address kNat64Prefix = Address::v6({0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0});

}  // namespace detail

// Whether `a` is an IPv4-mapped IPv6 address, ::ffff:a.b.c.d: the form a dual-stack
// socket gives an IPv4 peer, and the same host as a.b.c.d.
constexpr bool is_v4_mapped(const Address& a) noexcept {
    return a.is_v6() && detail::same_leading_bits(a, detail::kV4MappedPrefix, 96);
}

// ::ffff:a.b.c.d becomes a.b.c.d; every other address is returned as it is. That
// includes ::a.b.c.d (IPv4-compatible, deprecated), 64:ff9b::a.b.c.d (NAT64) and
// 2002:aabb:ccdd:: (6to4): each is another host, a tunnel or translator on the way to
// the IPv4 one, so it keeps its own address; classify() still judges such an address
// by the IPv4 address it carries (see kClassRanges).
constexpr Address unmap(const Address& a) noexcept { return is_v4_mapped(a) ? detail::v4_at(a, 12) : a; }

namespace detail {

// ::ffff:a.b.c.d for the IPv4 address a.b.c.d.
constexpr Address mapped(const Address& v4) noexcept {
    Address out = kV4MappedPrefix;
    for (std::size_t k = 0; k < 4; ++k) out.bytes[12 + k] = v4.bytes[k];
    return out;
}

}  // namespace detail

// Whether `a` lies in `prefix`/`bits`: its first `bits` bits are the prefix's (the
// prefix's host bits are not looked at). An IPv4 address and its IPv4-mapped form are
// one address here, each in exactly the prefixes the other is in: ::ffff:10.1.2.3 lies
// in 10.0.0.0/8, 10.1.2.3 in ::ffff:10.0.0.0/104 and in ::/0. No other IPv6 form of an
// IPv4 address (::a.b.c.d, NAT64, 6to4) lies in an IPv4 prefix. False when `bits` is
// longer than the prefix's family: a malformed prefix holds nothing.
constexpr bool in_prefix(const Address& a, const Address& prefix, unsigned bits) noexcept {
    if (bits > address_bits(prefix.family)) return false;
    if (prefix.is_v4()) {
        const Address x = unmap(a);
        return x.is_v4() && detail::same_leading_bits(x, prefix, bits);
    }
    return detail::same_leading_bits(a.is_v4() ? detail::mapped(a) : a, prefix, bits);
}

// What kind of place an address is, for the proxy to refuse or allow.
enum class AddressClass {
    public_address,   // reachable across the internet: no other class applies
    loopback,         // this machine
    link_local,       // the local link only
    metadata,         // a cloud's instance metadata or platform service: credentials
    multicast,
    unspecified,      // "no address"; connecting to it reaches this machine
    private_network,  // private, unique-local and carrier-grade NAT space
    broadcast,
    reserved,         // set aside, never a legitimate destination
};

constexpr std::string_view class_name(AddressClass c) noexcept {
    switch (c) {
        case AddressClass::public_address: return "public";
        case AddressClass::loopback: return "loopback";
        case AddressClass::link_local: return "link-local";
        case AddressClass::metadata: return "metadata";
        case AddressClass::multicast: return "multicast";
        case AddressClass::unspecified: return "unspecified";
        case AddressClass::private_network: return "private";
        case AddressClass::broadcast: return "broadcast";
        case AddressClass::reserved: return "reserved";
    }
    return "?";
}

// One row of the classification table.
struct ClassRange {
    std::string_view prefix;  // first address of the range, as parse_ipv4_dotted() or parse_ipv6() reads it
    unsigned bits;            // prefix length
    AddressClass address_class;
    std::string_view reason;  // one line, with its source
    // Byte offset of an IPv4 address the range's addresses carry, which a tunnel or
    // translator delivers to; 0 for none. Such an address takes the class of the IPv4
    // address it carries when that class is not public.
    unsigned embedded_v4_at = 0;
};

// The address classes. The longest prefix that holds an address decides (so
// 169.254.169.254/32 wins over 169.254.0.0/16 and order carries no meaning); an
// address no row holds is public. The public rows (NAT64, 6to4) are there for the IPv4
// address their addresses carry; see classification(). IPv4-mapped IPv6 addresses are unmapped before the
// table is consulted, so they need no row. Rows are sorted (IPv4 first), each once.
inline constexpr ClassRange kClassRanges[] = {
    // IPv4
    {"0.0.0.0", 8, AddressClass::unspecified, "\"this network\" (RFC 1122 3.2.1.3), never a destination; Linux delivers a connect to 0.0.0.0 to this machine"},
    {"10.0.0.0", 8, AddressClass::private_network, "private network (RFC 1918)"},
    {"100.64.0.0", 10, AddressClass::private_network, "shared address space of carrier-grade NAT (RFC 6598)"},
    {"100.100.100.200", 32, AddressClass::metadata, "Alibaba Cloud instance metadata service"},
    {"127.0.0.0", 8, AddressClass::loopback, "loopback (RFC 1122 3.2.1.3)"},
    {"168.63.129.16", 32, AddressClass::metadata, "Azure WireServer, the platform endpoint every Azure VM reaches (VM agent, DHCP, DNS)"},
    {"169.254.0.0", 16, AddressClass::link_local, "link-local (RFC 3927)"},
    {"169.254.169.254", 32, AddressClass::metadata, "instance metadata service of AWS, Google Cloud, Azure, OpenStack and others: cloud credentials"},
    {"172.16.0.0", 12, AddressClass::private_network, "private network (RFC 1918)"},
    {"192.0.0.0", 24, AddressClass::reserved, "IETF protocol assignments (RFC 6890), not globally reachable: 192.0.0.170 and .171 discover a NAT64 prefix (RFC 7050), 192.0.0.0/29 is DS-Lite's (RFC 7335)"},
    {"192.0.0.9", 32, AddressClass::public_address, "Port Control Protocol anycast (RFC 7723), globally reachable"},
    {"192.0.0.10", 32, AddressClass::public_address, "Traversal Using Relays around NAT anycast (RFC 8155), globally reachable"},
    {"192.0.2.0", 24, AddressClass::reserved, "documentation, TEST-NET-1 (RFC 5737)"},
    {"192.88.99.0", 24, AddressClass::reserved, "6to4 relay anycast, deprecated (RFC 7526)"},
    {"192.168.0.0", 16, AddressClass::private_network, "private network (RFC 1918)"},
    {"198.18.0.0", 15, AddressClass::reserved, "benchmarking (RFC 2544), not globally reachable; also the fake-IP range local proxy tools answer names with"},
    {"198.51.100.0", 24, AddressClass::reserved, "documentation, TEST-NET-2 (RFC 5737)"},
    {"203.0.113.0", 24, AddressClass::reserved, "documentation, TEST-NET-3 (RFC 5737)"},
    {"224.0.0.0", 4, AddressClass::multicast, "multicast (RFC 5771)"},
    {"240.0.0.0", 4, AddressClass::reserved, "reserved for future use (RFC 1112 4), never routed"},
    {"255.255.255.255", 32, AddressClass::broadcast, "limited broadcast (RFC 919 7)"},
    // IPv6
    {"::", 3, AddressClass::reserved, "reserved by the IETF: outside 2000::/3, the only space allocated for global unicast (RFC 4291 2.4)"},
    {"::", 96, AddressClass::reserved, "IPv4-compatible, deprecated (RFC 4291 2.5.5.1); an automatic tunnel delivers to the IPv4 address", 12},
    {"::", 128, AddressClass::unspecified, "unspecified address (RFC 4291 2.5.2); Linux delivers a connect to :: to this machine"},
    {"::1", 128, AddressClass::loopback, "loopback (RFC 4291 2.5.3)"},
    {"64:ff9b::", 96, AddressClass::public_address, "NAT64 well-known prefix (RFC 6052): a translator delivers to the IPv4 address", 12},
    {"64:ff9b:1::", 48, AddressClass::private_network, "local-use IPv4/IPv6 translation (RFC 8215), not globally reachable"},
    {"2001::", 23, AddressClass::reserved, "IETF protocol assignments (RFC 2928), not globally reachable but for the blocks named below"},
    {"2001::", 32, AddressClass::reserved, "Teredo (RFC 4380): a relay delivers to the IPv4 address the address carries, inverted"},
    {"2001:1::1", 128, AddressClass::public_address, "Port Control Protocol anycast (RFC 7723), globally reachable"},
    {"2001:1::2", 128, AddressClass::public_address, "Traversal Using Relays around NAT anycast (RFC 8155), globally reachable"},
    {"2001:1::3", 128, AddressClass::public_address, "DNS-SD service registration anycast (RFC 9665), globally reachable"},
    {"2001:2::", 48, AddressClass::reserved, "benchmarking (RFC 5180), not globally reachable"},
    {"2001:3::", 32, AddressClass::public_address, "Automatic Multicast Tunneling (RFC 7450), globally reachable"},
    {"2001:4:112::", 48, AddressClass::public_address, "AS112-v6 (RFC 7535), globally reachable"},
    {"2001:20::", 28, AddressClass::public_address, "ORCHIDv2 (RFC 7343), globally reachable"},
    {"2001:30::", 28, AddressClass::public_address, "Drone Remote ID (RFC 9374), globally reachable"},
    {"2001:db8::", 32, AddressClass::reserved, "documentation (RFC 3849)"},
    {"2002::", 16, AddressClass::public_address, "6to4 (RFC 3056): a relay delivers to the IPv4 address in bits 16-47", 2},
    {"3fff::", 20, AddressClass::reserved, "documentation (RFC 9637)"},
    {"4000::", 2, AddressClass::reserved, "reserved by the IETF: outside 2000::/3, the only space allocated for global unicast (RFC 4291 2.4)"},
    {"8000::", 1, AddressClass::reserved, "reserved by the IETF: outside 2000::/3, the only space allocated for global unicast (RFC 4291 2.4)"},
    {"fc00::", 7, AddressClass::private_network, "unique local addresses (RFC 4193)"},
    {"fd00:ec2::254", 128, AddressClass::metadata, "AWS instance metadata service over IPv6"},
    {"fd20:ce::254", 128, AddressClass::metadata, "Google Cloud metadata server over IPv6"},
    {"fe80::", 10, AddressClass::link_local, "link-local unicast (RFC 4291 2.5.6)"},
    {"fe80::a9fe:a9fe", 128, AddressClass::metadata, "OpenStack metadata service over IPv6, 169.254.169.254's twin"},
    {"fec0::", 10, AddressClass::private_network, "site-local, deprecated (RFC 3879) but still routed as a private network"},
    {"ff00::", 8, AddressClass::multicast, "multicast (RFC 4291 2.7)"},
};

namespace detail {

inline constexpr std::size_t kClassRangeCount = sizeof(kClassRanges) / sizeof(kClassRanges[0]);

constexpr std::optional<Address> parse_range_prefix(std::string_view text) noexcept {
    return text.find(':') == std::string_view::npos ? parse_ipv4_dotted(text) : parse_ipv6(text);
}

// kClassRanges' prefixes, parsed once at compile time; a row that does not parse is
// left as 0.0.0.0 here and fails class_ranges_well_formed().
constexpr std::array<Address, kClassRangeCount> parse_class_ranges() noexcept {
    std::array<Address, kClassRangeCount> out{};
    for (std::size_t i = 0; i < kClassRangeCount; ++i) out[i] = parse_range_prefix(kClassRanges[i].prefix).value_or(Address{});
    return out;
}

inline constexpr std::array<Address, kClassRangeCount> kClassRangePrefixes = parse_class_ranges();

// Each row parses, fits its family, has no host bits set and a reason, carries an
// IPv4 address only where there are 32 bits after the prefix for it, and comes after
// the row before it in (address, length) order, so no row is listed twice.
constexpr bool class_ranges_well_formed() noexcept {
    for (std::size_t i = 0; i < kClassRangeCount; ++i) {
        const ClassRange& r = kClassRanges[i];
        const auto p = parse_range_prefix(r.prefix);
        if (!p || r.bits > address_bits(p->family) || r.reason.empty()) return false;
        for (unsigned bit = r.bits; bit < address_bits(p->family); ++bit)
            if (p->bytes[bit / 8] & (0x80u >> (bit % 8))) return false;
        if (r.embedded_v4_at != 0 && (p->is_v4() || r.embedded_v4_at * 8 < r.bits || r.embedded_v4_at + 4 > 16))
            return false;
        if (i > 0) {
            const Address& q = kClassRangePrefixes[i - 1];
            if (!(q < *p || (q == *p && kClassRanges[i - 1].bits < r.bits))) return false;
        }
    }
    return true;
}

// The row with the longest prefix that holds `a` (families compared as they are), or
// kClassRangeCount when none does.
constexpr std::size_t longest_class_range(const Address& a) noexcept {
    std::size_t best = kClassRangeCount;
    for (std::size_t i = 0; i < kClassRangeCount; ++i) {
        const Address& p = kClassRangePrefixes[i];
        if (p.family != a.family || !same_leading_bits(a, p, kClassRanges[i].bits)) continue;
        if (best == kClassRangeCount || kClassRanges[i].bits > kClassRanges[best].bits) best = i;
    }
    return best;
}

}  // namespace detail

static_assert(detail::class_ranges_well_formed(),
              "each class range parses, has no host bits, a reason, a sound IPv4 offset, and is listed once in order");

// The class of an address with the rule behind it.
struct Classification {
    AddressClass address_class = AddressClass::public_address;
    const ClassRange* range = nullptr;  // the row that decided; nullptr when no row holds the address
    Address matched;                    // what that row was matched against: the address, its unmapped
                                        // IPv4 address, or the IPv4 address it carries
};

// Unmaps `a`, finds the longest row of kClassRanges that holds it, and when that row
// carries an IPv4 address whose own class is not public, takes that address's row:
// ::ffff:127.0.0.1 and 64:ff9b::127.0.0.1 are loopback, ::169.254.169.254 and
// 2002:a9fe:a9fe:: are metadata, 64:ff9b::8.8.8.8 is public, ::8.8.8.8 is reserved.
constexpr Classification classification(const Address& a) noexcept {
    const Address x = unmap(a);
    const std::size_t i = detail::longest_class_range(x);
    if (i == detail::kClassRangeCount) return {AddressClass::public_address, nullptr, x};
    const ClassRange& row = kClassRanges[i];
    if (row.embedded_v4_at != 0) {
        const Address inner = detail::v4_at(x, row.embedded_v4_at);
        const std::size_t j = detail::longest_class_range(inner);
        if (j != detail::kClassRangeCount && kClassRanges[j].address_class != AddressClass::public_address)
            return {kClassRanges[j].address_class, &kClassRanges[j], inner};
    }
    return {row.address_class, &row, x};
}

constexpr AddressClass classify(const Address& a) noexcept { return classification(a).address_class; }

namespace detail {

SBX_INLINE void append_decimal(std::string& out, unsigned v);

SBX_INLINE void append_dotted(std::string& out, const Address& a, std::size_t at);

// Groups 0..n-1 of `a` in RFC 5952 form: lowercase hex without leading zeros, the
// longest run of two or more zero groups (the first of equal runs) written `::`.
SBX_INLINE void append_groups(std::string& out, const Address& a, std::size_t n);

}  // namespace detail

// The canonical text of an address, without brackets: IPv4 as a dotted quad; IPv6 as
// RFC 5952 writes it (lowercase, no leading zeros, the longest run of two or more zero
// groups compressed to `::`, the first on a tie). Per RFC 5952 5, an address under one
// of the well-known prefixes that carry an IPv4 address, ::ffff:0:0/96 (mapped) and
// 64:ff9b::/96 (NAT64), ends in a dotted quad: "::ffff:1.2.3.4", "64:ff9b::1.2.3.4".
// Other addresses print in hex ("::102:304", not "::1.2.3.4"). parse_ipv6(to_string(a))
// == a for every IPv6 address; unmap() first to print a mapped address as IPv4.
SBX_INLINE std::string to_string(const Address& a);

}  // namespace sbx::net

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_NET)

namespace sbx::net::detail {

SBX_INLINE void append_decimal(std::string& out, unsigned v) {
    char digits[3];
    std::size_t n = 0;
    do {
        digits[n++] = static_cast<char>('0' + v % 10);
        v /= 10;
    } while (v != 0);
    while (n > 0) out += digits[--n];
}

SBX_INLINE void append_dotted(std::string& out, const Address& a, std::size_t at) {
    for (std::size_t k = 0; k < 4; ++k) {
        if (k > 0) out += '.';
        append_decimal(out, a.bytes[at + k]);
    }
}

SBX_INLINE void append_groups(std::string& out, const Address& a, std::size_t n) {
    std::size_t best_start = n, best_length = 0;
    for (std::size_t k = 0; k < n;) {
        if (a.bytes[2 * k] != 0 || a.bytes[2 * k + 1] != 0) {
            ++k;
            continue;
        }
        std::size_t end = k;
        while (end < n && a.bytes[2 * end] == 0 && a.bytes[2 * end + 1] == 0) ++end;
        if (end - k >= 2 && end - k > best_length) {
            best_start = k;
            best_length = end - k;
        }
        k = end;
    }
    constexpr std::string_view kHex = "0123456789abcdef";
    for (std::size_t k = 0; k < n; ++k) {
        if (k == best_start) {
            out += "::";
            k += best_length - 1;
            continue;
        }
        if (k > 0 && k != best_start + best_length) out += ':';
        const unsigned v = static_cast<unsigned>(a.bytes[2 * k] << 8 | a.bytes[2 * k + 1]);
        bool started = false;
        for (int shift = 12; shift >= 0; shift -= 4) {
            const unsigned d = (v >> shift) & 0xfu;
            if (d == 0 && !started && shift > 0) continue;
            started = true;
            out += kHex[d];
        }
    }
}

}  // namespace sbx::net::detail

namespace sbx::net {

SBX_INLINE std::string to_string(const Address& a) {
    std::string out;
    out.reserve(a.is_v4() ? 15 : 45);
    if (a.is_v4()) {
        detail::append_dotted(out, a, 0);
        return out;
    }
    if (is_v4_mapped(a) || detail::same_leading_bits(a, detail::kNat64Prefix, 96)) {
        detail::append_groups(out, a, 6);
        if (out.back() != ':') out += ':';
        detail::append_dotted(out, a, 12);
        return out;
    }
    detail::append_groups(out, a, 8);
    return out;
}

}  // namespace sbx::net
#endif
