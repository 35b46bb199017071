// address.hpp: the IPv4 and IPv6 parsers, canonical text, unmapping, prefixes and the
// address classes the network proxy refuses by.
#include "sbx/net/address.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <string_view>

// Where the C library has them, the parsers are also checked against glibc's own.
#if defined(__has_include)
#if __has_include(<arpa/inet.h>)
#include <arpa/inet.h>
#endif
#endif

namespace {

using sbx::net::Address;
using sbx::net::AddressClass;
using namespace std::literals;

// The text of a parse result, or "refused".
std::string shown(const std::optional<Address>& a) { return a ? sbx::net::to_string(*a) : std::string("refused"); }

Address v4(std::string_view s) {
    const auto a = sbx::net::parse_ipv4_dotted(s);
    REQUIRE_MESSAGE(a.has_value(), std::string(s));
    return *a;
}

Address v6(std::string_view s) {
    const auto a = sbx::net::parse_ipv6(s);
    REQUIRE_MESSAGE(a.has_value(), std::string(s));
    return *a;
}

// A dotted quad or an IPv6 address, as a test table writes it.
Address ip(std::string_view s) { return s.find(':') == std::string_view::npos ? v4(s) : v6(s); }

}  // namespace

// The parsers and classify() are constexpr: the proxy's decisions can be checked at compile time.
static_assert(sbx::net::parse_ipv4_any("2852039166") == Address::v4(169, 254, 169, 254));
static_assert(sbx::net::classify(*sbx::net::parse_ipv4_any("0xa9.0xfe.0xa9.0xfe")) == AddressClass::metadata);
static_assert(sbx::net::classify(*sbx::net::parse_ipv6("::ffff:127.0.0.1")) == AddressClass::loopback);
static_assert(!sbx::net::parse_ipv4_dotted("127.1"));
static_assert(!sbx::net::parse_ipv6("fe80::1%eth0"));

TEST_CASE("address: parse_ipv4_any reads every numeric form inet_aton accepts") {
    struct Row {
        const char* in;
        const char* out;
    };
    const Row rows[] = {
        // Four parts, each one byte.
        {"1.2.3.4", "1.2.3.4"},
        {"0.0.0.0", "0.0.0.0"},
        {"255.255.255.255", "255.255.255.255"},
        {"0xff.0xff.0xff.0xff", "255.255.255.255"},
        {"0377.0377.0377.0377", "255.255.255.255"},
        {"0177.0.0.1", "127.0.0.1"},
        {"0x7f.0.0.1", "127.0.0.1"},
        {"0X7F.0.0.01", "127.0.0.1"},
        {"00.00.00.00", "0.0.0.0"},
        {"0x0.0x00.0.00", "0.0.0.0"},
        {"0x000000007f.0.0.1", "127.0.0.1"},  // leading zeros after 0x, any number of them
        {"0000000000000000000000177.0.0.1", "127.0.0.1"},
        // One part: all 32 bits.
        {"0", "0.0.0.0"},
        {"00", "0.0.0.0"},
        {"0x0", "0.0.0.0"},
        {"1", "0.0.0.1"},
        {"2130706433", "127.0.0.1"},
        {"0x7F000001", "127.0.0.1"},
        {"017700000001", "127.0.0.1"},
        {"4294967295", "255.255.255.255"},
        {"0xffffffff", "255.255.255.255"},
        {"037777777777", "255.255.255.255"},
        // Two parts: a byte, then 24 bits.
        {"127.1", "127.0.0.1"},
        {"10.1", "10.0.0.1"},
        {"1.16777215", "1.255.255.255"},
        {"0x7f.0xffffff", "127.255.255.255"},
        {"0.0", "0.0.0.0"},
        // Three parts: two bytes, then 16 bits.
        {"127.0.1", "127.0.0.1"},
        {"1.2.65535", "1.2.255.255"},
        {"192.168.0x101", "192.168.1.1"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.in);
        CHECK(shown(sbx::net::parse_ipv4_any(r.in)) == r.out);
    }
}

TEST_CASE("address: the metadata address 169.254.169.254 in every spelling a resolver reads") {
    const char* spellings[] = {
        "169.254.169.254",
        "2852039166",             // one decimal part
        "0xa9fea9fe",             // one hex part
        "0xA9FEA9FE",
        "0XA9FEA9FE",
        "0x00a9fea9fe",
        "025177524776",           // one octal part
        "0251.0376.0251.0376",    // octal parts
        "0xa9.0xfe.0xa9.0xfe",    // hex parts
        "0xa9.254.0251.0xfe",     // mixed
        "0251.254.169.254",
        "169.16689662",           // two parts
        "169.0xfea9fe",
        "0251.077524776",
        "169.254.43518",          // three parts
        "169.254.0xa9fe",
        "0251.0xfe.0124776",
    };
    const Address metadata = Address::v4(169, 254, 169, 254);
    for (const char* s : spellings) {
        CAPTURE(s);
        const auto a = sbx::net::parse_ipv4_any(s);
        REQUIRE(a.has_value());
        CHECK(*a == metadata);
        CHECK(sbx::net::classify(*a) == AddressClass::metadata);
    }
}

TEST_CASE("address: parse_ipv4_any refuses what it does not fully understand") {
    const std::string_view refused[] = {
        "", ".", "..", "1..2", "1.2..3", ".1.2.3", "1.2.3.4.",  // empty parts; a trailing dot, as inet_aton
        "1.2.3.4.5", "1.2.3.4.5.6",                           // more than four parts
        " 1.2.3.4", "1.2.3.4 ", "1.2.3.4\n", "1.2.3.4\t", "1.2.3.4 x",  // inet_aton ignores what follows a space; we do not
        "+1", "-1", "1.-2.3.4", "1.+2.3.4", "0x-1", "0x+1", "0x 1",  // signs and spaces
        "0x", "0X", "0x.1.2.3", "1.0x", "1.2.3.0x",             // 0x without a hex digit
        "08", "09", "0169.254.169.254", "1.2.3.08",            // a digit beyond octal
        "4294967296", "0x100000000", "040000000000", "99999999999999999999999999",  // over 32 bits
        "256.1.1.1", "1.256.1.1", "1.2.256.1", "1.2.3.256", "0x100.1.1.1", "0400.1.1.1",  // a byte over 255
        "1.16777216", "256.1", "1.2.65536", "1.2.0x10000",    // a last part over its room
        "a", "0xg", "1e3", "0b101", "1.2.3.4x", "localhost", "1,2,3,4", "1.2.3.4/32", "1.2.3.4:80", "::1",
        "\xef\xbc\x91.2.3.4",                                 // a fullwidth digit
        "1.2.3.4\0"sv, "\0" "1.2.3.4"sv,                      // a NUL inside the text
    };
    for (std::string_view s : refused) {
        CAPTURE(std::string(s));
        CHECK(shown(sbx::net::parse_ipv4_any(s)) == "refused");
    }
}

TEST_CASE("address: parse_ipv4_dotted accepts only canonical dotted quads") {
    const char* accepted[] = {"0.0.0.0", "1.2.3.4", "10.0.0.1", "100.64.0.0", "169.254.169.254",
                              "192.168.100.200", "255.255.255.255", "9.99.199.249"};
    for (const char* s : accepted) {
        CAPTURE(s);
        CHECK(shown(sbx::net::parse_ipv4_dotted(s)) == s);
        // What the strict parser reads, the lenient one reads the same way.
        CHECK(sbx::net::parse_ipv4_any(s) == sbx::net::parse_ipv4_dotted(s));
    }
    const std::string_view refused[] = {
        "01.2.3.4", "1.02.3.4", "1.2.3.00", "00.0.0.0", "1.2.3.0377",  // leading zeros
        "1.2.3", "127.1", "2852039166", "1.2.3.4.5",                  // not four parts
        "0x1.2.3.4", "1.2.3.0xff",                                    // hex
        "256.1.1.1", "1.2.3.256", "1.2.3.1000", "1234.1.1.1", "999.1.1.1",  // out of range
        "", ".", "1..2.3", "1.2.3.4.", ".1.2.3.4", " 1.2.3.4", "1.2.3.4 ", "+1.2.3.4", "1.2.3.-4",
        "1.2.3.4/8", "1.2.3.4\0"sv,
    };
    for (std::string_view s : refused) {
        CAPTURE(std::string(s));
        CHECK(shown(sbx::net::parse_ipv4_dotted(s)) == "refused");
    }
}

TEST_CASE("address: parse_ipv6 reads the text forms of RFC 4291 and prints RFC 5952 text") {
    struct Row {
        const char* in;
        const char* out;
    };
    const Row rows[] = {
        // RFC 4291 2.2 examples.
        {"ABCD:EF01:2345:6789:ABCD:EF01:2345:6789", "abcd:ef01:2345:6789:abcd:ef01:2345:6789"},
        {"2001:DB8:0:0:8:800:200C:417A", "2001:db8::8:800:200c:417a"},
        {"2001:DB8::8:800:200C:417A", "2001:db8::8:800:200c:417a"},
        {"FF01:0:0:0:0:0:0:101", "ff01::101"},
        {"FF01::101", "ff01::101"},
        {"0:0:0:0:0:0:0:1", "::1"},
        {"0:0:0:0:0:0:0:0", "::"},
        {"::", "::"},
        {"::1", "::1"},
        {"1080::8:800:200C:417A", "1080::8:800:200c:417a"},
        {"0:0:0:0:0:0:13.1.68.3", "::d01:4403"},  // IPv4-compatible: printed in hex
        {"::13.1.68.3", "::d01:4403"},
        {"0:0:0:0:0:FFFF:129.144.52.38", "::ffff:129.144.52.38"},
        {"::FFFF:129.144.52.38", "::ffff:129.144.52.38"},
        // RFC 5952 4: leading zeros, case, the longest run, the first of equal runs.
        {"2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"},
        {"2001:db8::0:1", "2001:db8::1"},
        {"2001:db8:0:0:0:0:2:1", "2001:db8::2:1"},
        {"2001:db8::aaaa:0:0:1", "2001:db8::aaaa:0:0:1"},
        {"2001:db8:0:0:aaaa::1", "2001:db8::aaaa:0:0:1"},
        {"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"},  // one zero group is not compressed
        {"2001:0:0:1:0:0:0:1", "2001:0:0:1::1"},           // the longest run
        {"2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},      // the first of two equal runs
        {"1:0:0:2:0:0:3:4", "1::2:0:0:3:4"},
        {"0:1:0:1:0:1:0:1", "0:1:0:1:0:1:0:1"},
        {"2001:DB8:AAAA:BBBB:CCCC:DDDD:EEEE:0001", "2001:db8:aaaa:bbbb:cccc:dddd:eeee:1"},
        {"0000:0000::0001", "::1"},
        {"1::", "1::"},
        {"1:0:0:0:0:0:0:0", "1::"},
        {"fe80::1", "fe80::1"},
        {"1:2:3:4:5:6:7::", "1:2:3:4:5:6:7:0"},  // `::` for a single group is read, never written
        {"::2:3:4:5:6:7:8", "0:2:3:4:5:6:7:8"},
        {"1:2:3:4::5:6:7", "1:2:3:4:0:5:6:7"},
        // A dotted quad in place of the last two groups.
        {"1:2:3:4:5:6:1.2.3.4", "1:2:3:4:5:6:102:304"},
        {"1::1.2.3.4", "1::102:304"},
        {"::ffff:1.2.3.4", "::ffff:1.2.3.4"},
        {"::ffff:102:304", "::ffff:1.2.3.4"},
        {"::ffff:7f00:1", "::ffff:127.0.0.1"},
        {"::ffff:0:0", "::ffff:0.0.0.0"},
        {"0:0:0:0:0:ffff:ffff:ffff", "::ffff:255.255.255.255"},
        {"64:ff9b::1.2.3.4", "64:ff9b::1.2.3.4"},  // NAT64 (RFC 6052 2.4)
        {"64:ff9b::102:304", "64:ff9b::1.2.3.4"},
        {"64:ff9b::", "64:ff9b::0.0.0.0"},
        {"64:ff9b:1::1.2.3.4", "64:ff9b:1::102:304"},  // not the well-known prefix
        {"::ffff:0:1.2.3.4", "::ffff:0:102:304"},     // IPv4-translated (RFC 2765): hex
        {"::fffe:1.2.3.4", "::fffe:102:304"},
        {"2002:a9fe:a9fe::", "2002:a9fe:a9fe::"},
        {"::0.0.0.2", "::2"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.in);
        const auto a = sbx::net::parse_ipv6(r.in);
        CHECK(shown(a) == r.out);
        if (!a) continue;
        CHECK(a->is_v6());
        // Canonical text reads back as the same address, and prints as itself.
        CHECK(sbx::net::parse_ipv6(sbx::net::to_string(*a)) == a);
        CHECK(shown(sbx::net::parse_ipv6(r.out)) == r.out);
    }
}

TEST_CASE("address: parse_ipv6 puts the groups in the right bytes") {
    const auto a = sbx::net::parse_ipv6("2001:db8::ff00:42:8329");
    REQUIRE(a.has_value());
    CHECK(*a == Address::v6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0xff, 0x00, 0x00, 0x42, 0x83, 0x29}));
    const auto m = sbx::net::parse_ipv6("::ffff:169.254.169.254");
    REQUIRE(m.has_value());
    CHECK(*m == Address::v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 169, 254, 169, 254}));
    CHECK(sbx::net::parse_ipv6("::") == Address::v6({}));
}

TEST_CASE("address: parse_ipv6 refuses what it does not fully understand") {
    const std::string_view refused[] = {
        "", ":", ":::", "::::", "1:::2", "::1:::",
        "1::2::3", "1::2::", "::1::", "ffff::ffff::",                // `::` twice
        "12345::", "::12345", "00000::1", "1:23456:3:4:5:6:7:8",     // five hex digits
        "1:2:3:4:5:6:7:8:9", "::1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8::",  // too many groups
        "1:2:3:4:5:6:7", "1:2:3:4", "1",                            // too few
        ":1::2", ":1:2:3:4:5:6:7:8", "1::2:", "1:2:3:4:5:6:7:8:", "::1:",  // a lone colon at an end
        "::ffff:1.2.3", "::ffff:1.2.3.4.5", "::ffff:01.2.3.4", "::ffff:256.1.1.1", "::ffff:1.2.3.4.",
        "::ffff:0x1.2.3.4", "::ffff:1.2.3.4:1", "::ffff:1.2.3.4::", "::127.1", "::2852039166",
        "1.2.3.4", "1.2.3.4::", "1:2:3:4:5:6:7:1.2.3.4", "1:2:3:4:5:6::1.2.3.4", "::1.2.3.4:5:6",
        "fe80::1%eth0", "fe80::1%25eth0", "fe80::1%1", "::ffff:1.2.3.4%eth0",  // zones
        "[::1]", "[::1]:80", "::1/128", "2001:db8::/32",
        "g::1", "::g", "0x1::", "::-1", "::+1", "1:-2::", "1:2:3:4:5:6:7:z",
        " ::1", "::1 ", "::1\n", ":: 1", "\xef\xbc\x91::", "::1\0"sv,
    };
    for (std::string_view s : refused) {
        CAPTURE(std::string(s));
        CHECK(shown(sbx::net::parse_ipv6(s)) == "refused");
    }
}

TEST_CASE("address: to_string prints one canonical form and reads back") {
    struct Row {
        Address a;
        const char* text;
    };
    const Row rows[] = {
        {Address::v4(0, 0, 0, 0), "0.0.0.0"},
        {Address::v4(1, 2, 3, 4), "1.2.3.4"},
        {Address::v4(10, 200, 30, 255), "10.200.30.255"},
        {Address::v4_from_u32(0xa9fea9fe), "169.254.169.254"},
        {Address::v4_from_u32(0xffffffff), "255.255.255.255"},
        {Address::v6({}), "::"},
        {Address::v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}), "::1"},
        {Address::v6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}), "2001:db8::1"},
        {Address::v6({0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}), "2001:db8:0:1:1:1:1:1"},
        {Address::v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 1, 2, 3, 4}), "::ffff:1.2.3.4"},
        {Address::v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}), "::102:304"},
        {Address::v6({0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xa9, 0xfe, 0xa9, 0xfe}), "fe80::a9fe:a9fe"},
        {Address::v6({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}),
         "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
        {Address::v6({0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}), "1::"},
        {Address::v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10, 0}), "::1000"},
        {Address::v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0}), "::100"},
        {Address::v6({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10}), "::10"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.text);
        CHECK(sbx::net::to_string(r.a) == r.text);
        const auto back = r.a.is_v4() ? sbx::net::parse_ipv4_dotted(r.text) : sbx::net::parse_ipv6(r.text);
        CHECK(back == r.a);
    }
    // A mapped address prints as IPv6; unmapped, as the IPv4 address it is.
    const Address mapped = v6("::ffff:1.2.3.4");
    CHECK(sbx::net::to_string(mapped) == "::ffff:1.2.3.4");
    CHECK(sbx::net::to_string(sbx::net::unmap(mapped)) == "1.2.3.4");
    // Every IPv4 spelling prints as one dotted quad, which the strict parser reads.
    const auto odd = sbx::net::parse_ipv4_any("0x7f.1");
    REQUIRE(odd.has_value());
    CHECK(sbx::net::parse_ipv4_dotted(sbx::net::to_string(*odd)) == odd);
}

TEST_CASE("address: unmap turns only IPv4-mapped addresses into IPv4") {
    struct Row {
        const char* in;
        const char* out;
        bool mapped;
    };
    const Row rows[] = {
        {"::ffff:1.2.3.4", "1.2.3.4", true},
        {"::ffff:169.254.169.254", "169.254.169.254", true},
        {"::ffff:0.0.0.0", "0.0.0.0", true},
        {"::ffff:255.255.255.255", "255.255.255.255", true},
        {"::1.2.3.4", "::102:304", false},            // IPv4-compatible: another address
        {"64:ff9b::1.2.3.4", "64:ff9b::1.2.3.4", false},  // NAT64: reached through a translator
        {"::ffff:0:1.2.3.4", "::ffff:0:102:304", false},  // IPv4-translated
        {"::fffe:1.2.3.4", "::fffe:102:304", false},
        {"1::ffff:1.2.3.4", "1::ffff:102:304", false},
        {"2002:a9fe:a9fe::", "2002:a9fe:a9fe::", false},
        {"::", "::", false},
        {"::1", "::1", false},
        {"1.2.3.4", "1.2.3.4", false},
    };
    for (const auto& r : rows) {
        CAPTURE(r.in);
        const Address a = ip(r.in);
        CHECK(sbx::net::is_v4_mapped(a) == r.mapped);
        CHECK(sbx::net::to_string(sbx::net::unmap(a)) == r.out);
        CHECK(sbx::net::unmap(sbx::net::unmap(a)) == sbx::net::unmap(a));
    }
}

// Over 80 lines: a table, one row an address at the edge of a range.
TEST_CASE("address: classify, at both ends of every range and just outside") {
    struct Row {
        const char* address;
        AddressClass expected;
    };
    using C = AddressClass;
    const Row rows[] = {
        // 0.0.0.0/8
        {"0.0.0.0", C::unspecified},
        {"0.255.255.255", C::unspecified},
        {"1.0.0.0", C::public_address},
        // 10.0.0.0/8
        {"9.255.255.255", C::public_address},
        {"10.0.0.0", C::private_network},
        {"10.255.255.255", C::private_network},
        {"11.0.0.0", C::public_address},
        // 100.64.0.0/10, and Alibaba's metadata address inside it
        {"100.63.255.255", C::public_address},
        {"100.64.0.0", C::private_network},
        {"100.100.100.199", C::private_network},
        {"100.100.100.200", C::metadata},
        {"100.100.100.201", C::private_network},
        {"100.127.255.255", C::private_network},
        {"100.128.0.0", C::public_address},
        // 127.0.0.0/8
        {"126.255.255.255", C::public_address},
        {"127.0.0.0", C::loopback},
        {"127.0.0.1", C::loopback},
        {"127.255.255.255", C::loopback},
        {"128.0.0.0", C::public_address},
        // Azure's WireServer
        {"168.63.129.15", C::public_address},
        {"168.63.129.16", C::metadata},
        {"168.63.129.17", C::public_address},
        // 169.254.0.0/16, and the metadata address inside it
        {"169.253.255.255", C::public_address},
        {"169.254.0.0", C::link_local},
        {"169.254.169.253", C::link_local},
        {"169.254.169.254", C::metadata},
        {"169.254.169.255", C::link_local},
        {"169.254.255.255", C::link_local},
        {"169.255.0.0", C::public_address},
        // 172.16.0.0/12
        {"172.15.255.255", C::public_address},
        {"172.16.0.0", C::private_network},
        {"172.31.255.255", C::private_network},
        {"172.32.0.0", C::public_address},
        // 192.168.0.0/16
        {"192.167.255.255", C::public_address},
        {"192.168.0.0", C::private_network},
        {"192.168.255.255", C::private_network},
        {"192.169.0.0", C::public_address},
        // The IANA IPv4 special-purpose registry: the blocks not globally reachable
        {"191.255.255.255", C::public_address},
        {"192.0.0.0", C::reserved},
        {"192.0.0.8", C::reserved},
        {"192.0.0.9", C::public_address},  // PCP anycast, globally reachable
        {"192.0.0.10", C::public_address},  // TURN anycast
        {"192.0.0.170", C::reserved},  // NAT64 discovery
        {"192.0.0.171", C::reserved},
        {"192.0.0.255", C::reserved},
        {"192.0.1.0", C::public_address},
        {"192.0.2.0", C::reserved},
        {"192.0.2.255", C::reserved},
        {"192.0.3.0", C::public_address},
        {"192.88.98.255", C::public_address},
        {"192.88.99.1", C::reserved},
        {"192.88.100.0", C::public_address},
        {"198.17.255.255", C::public_address},
        {"198.18.0.0", C::reserved},
        {"198.19.255.255", C::reserved},
        {"198.20.0.0", C::public_address},
        {"198.51.99.255", C::public_address},
        {"198.51.100.7", C::reserved},
        {"198.51.101.0", C::public_address},
        {"203.0.112.255", C::public_address},
        {"203.0.113.7", C::reserved},
        {"203.0.114.0", C::public_address},
        // 224.0.0.0/4, 240.0.0.0/4 and the broadcast address at its top
        {"223.255.255.255", C::public_address},
        {"224.0.0.0", C::multicast},
        {"239.255.255.255", C::multicast},
        {"240.0.0.0", C::reserved},
        {"255.255.255.254", C::reserved},
        {"255.255.255.255", C::broadcast},
        {"1.1.1.1", C::public_address},
        {"8.8.8.8", C::public_address},
        // IPv4-mapped IPv6: the class of the IPv4 address
        {"::ffff:127.0.0.1", C::loopback},
        {"::ffff:169.254.169.254", C::metadata},
        {"::ffff:a9fe:a9fe", C::metadata},
        {"::ffff:169.254.1.1", C::link_local},
        {"::ffff:10.1.2.3", C::private_network},
        {"::ffff:0.0.0.0", C::unspecified},
        {"::ffff:224.0.0.1", C::multicast},
        {"::ffff:255.255.255.255", C::broadcast},
        {"::ffff:8.8.8.8", C::public_address},
        // ::, ::1 and IPv4-compatible ::/96: the class of the IPv4 address unless that is public
        {"::", C::unspecified},
        {"::1", C::loopback},
        {"::2", C::unspecified},  // 0.0.0.2
        {"::127.0.0.1", C::loopback},
        {"::169.254.169.254", C::metadata},
        {"::8.8.8.8", C::reserved},
        {"::1:0:0", C::reserved},  // ::/3, outside ::/96
        {"::fffe:8.8.8.8", C::reserved},
        // NAT64 64:ff9b::/96: likewise, but public when the IPv4 address is
        {"64:ff9b::8.8.8.8", C::public_address},
        {"64:ff9b::127.0.0.1", C::loopback},
        {"64:ff9b::169.254.169.254", C::metadata},
        {"64:ff9b::10.0.0.1", C::private_network},
        {"64:ff9b::255.255.255.255", C::broadcast},
        {"64:ff9b::1:0:0", C::reserved},  // just outside the /96
        {"64:ff9a:ffff:ffff:ffff:ffff:ffff:ffff", C::reserved},
        // The IANA IPv6 special-purpose registry
        {"64:ff9b:1::1", C::private_network},
        {"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", C::private_network},
        {"64:ff9b:2::", C::reserved},  // ::/3
        {"2001::", C::reserved},       // Teredo
        {"2001:0:4136:e378:8000:63bf:3fff:fdd2", C::reserved},
        {"2001:0:ffff:ffff:ffff:ffff:ffff:ffff", C::reserved},
        {"2001:1::1", C::public_address},
        {"2001:1::2", C::public_address},
        {"2001:1::3", C::public_address},
        {"2001:1::4", C::reserved},
        {"2001:2::1", C::reserved},
        {"2001:3::1", C::public_address},
        {"2001:4:112::1", C::public_address},
        {"2001:4:113::1", C::reserved},
        {"2001:20::1", C::public_address},
        {"2001:2f:ffff::", C::public_address},
        {"2001:30::1", C::public_address},
        {"2001:40::", C::reserved},
        {"2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff", C::reserved},
        {"2001:200::", C::public_address},
        {"2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", C::public_address},
        {"2001:db8::", C::reserved},
        {"2001:db9::", C::public_address},
        {"3fff::1", C::reserved},
        {"3fff:1000::", C::public_address},
        // 6to4 2002::/16: the IPv4 address in bits 16-47
        {"2002:808:808::1", C::public_address},
        {"2002:7f00:1::", C::loopback},
        {"2002:a9fe:a9fe::1", C::metadata},
        {"2002:c0a8:101::", C::private_network},
        // global unicast 2000::/3 and the reserved space around it
        {"1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", C::reserved},
        {"2000::", C::public_address},
        {"2001:4860:4860::8888", C::public_address},
        {"2001:db8::1", C::reserved},
        {"3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", C::reserved},
        {"3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", C::public_address},
        {"4000::1", C::reserved},
        {"3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", C::public_address},
        {"4000::", C::reserved},
        {"fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", C::reserved},
        // fc00::/7 and the cloud metadata addresses inside it
        {"fc00::", C::private_network},
        {"fd00:ec2::253", C::private_network},
        {"fd00:ec2::254", C::metadata},
        {"fd20:ce::254", C::metadata},
        {"fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", C::private_network},
        {"fe00::", C::reserved},
        // fe80::/10, fec0::/10
        {"fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", C::reserved},
        {"fe80::", C::link_local},
        {"fe80::1", C::link_local},
        {"fe80::a9fe:a9fe", C::metadata},
        {"febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", C::link_local},
        {"fec0::", C::private_network},
        {"feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", C::private_network},
        // ff00::/8
        {"ff00::", C::multicast},
        {"ff02::1", C::multicast},
        {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", C::multicast},
    };
    std::set<AddressClass> seen_v4, seen_v6;
    for (const auto& r : rows) {
        CAPTURE(r.address);
        const Address a = ip(r.address);
        CHECK(sbx::net::class_name(sbx::net::classify(a)) == sbx::net::class_name(r.expected));
        (a.is_v4() ? seen_v4 : seen_v6).insert(r.expected);
    }
    // Every class is met in this table, in both families (IPv6 broadcast only as a
    // mapped or NAT64 form of 255.255.255.255).
    CHECK(seen_v4.size() == 9);
    CHECK(seen_v6.size() == 9);
}

TEST_CASE("address: classification names the row that decided and what it matched") {
    struct Row {
        const char* address;
        const char* prefix;  // nullptr: no row
        unsigned bits;
        const char* matched;
    };
    const Row rows[] = {
        {"8.8.8.8", nullptr, 0, "8.8.8.8"},
        {"2606:4700::1111", nullptr, 0, "2606:4700::1111"},
        {"2001:db8::1", "2001:db8::", 32, "2001:db8::1"},
        {"192.0.0.170", "192.0.0.0", 24, "192.0.0.170"},
        {"192.0.0.9", "192.0.0.9", 32, "192.0.0.9"},
        {"169.254.169.254", "169.254.169.254", 32, "169.254.169.254"},
        {"169.254.1.1", "169.254.0.0", 16, "169.254.1.1"},
        {"::ffff:169.254.169.254", "169.254.169.254", 32, "169.254.169.254"},
        {"64:ff9b::127.0.0.1", "127.0.0.0", 8, "127.0.0.1"},
        {"64:ff9b::8.8.8.8", "64:ff9b::", 96, "64:ff9b::8.8.8.8"},
        {"::8.8.8.8", "::", 96, "::808:808"},
        {"2002:a9fe:a9fe::", "169.254.169.254", 32, "169.254.169.254"},
        {"::1", "::1", 128, "::1"},
        {"fe80::a9fe:a9fe", "fe80::a9fe:a9fe", 128, "fe80::a9fe:a9fe"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.address);
        const auto c = sbx::net::classification(ip(r.address));
        CHECK(sbx::net::to_string(c.matched) == r.matched);
        if (r.prefix == nullptr) {
            CHECK(c.range == nullptr);
            CHECK(c.address_class == AddressClass::public_address);
            continue;
        }
        REQUIRE(c.range != nullptr);
        CHECK(c.range->prefix == r.prefix);
        CHECK(c.range->bits == r.bits);
        CHECK(c.range->address_class == c.address_class);
        CHECK_FALSE(c.range->reason.empty());
    }
}

TEST_CASE("address: every row of the class table holds its own first address") {
    for (const auto& row : sbx::net::kClassRanges) {
        CAPTURE(row.prefix);
        const Address first = ip(row.prefix);
        CHECK(sbx::net::in_prefix(first, first, row.bits));
        CHECK_FALSE(row.reason.empty());
        // Each non-public row decides its own first address, but where a longer row
        // starts at the same address or the address carries a non-public IPv4 one.
        const auto c = sbx::net::classification(first);
        REQUIRE(c.range != nullptr);
        CHECK(sbx::net::in_prefix(first, ip(c.range->prefix), c.range->bits) == (c.matched == first));
    }
}

TEST_CASE("address: in_prefix") {
    struct Row {
        const char* address;
        const char* prefix;
        unsigned bits;
        bool in;
    };
    const Row rows[] = {
        {"10.1.2.3", "10.0.0.0", 8, true},
        {"11.0.0.0", "10.0.0.0", 8, false},
        {"9.255.255.255", "10.0.0.0", 8, false},
        {"172.31.255.255", "172.16.0.0", 12, true},
        {"172.32.0.0", "172.16.0.0", 12, false},
        {"172.15.255.255", "172.16.0.0", 12, false},
        {"10.1.2.3", "10.255.255.255", 8, true},  // host bits of the prefix are not looked at
        {"1.2.3.4", "1.2.3.4", 32, true},
        {"1.2.3.5", "1.2.3.4", 32, false},
        {"1.2.3.5", "1.2.3.4", 31, true},
        {"1.2.3.6", "1.2.3.4", 31, false},
        {"1.2.3.4", "1.2.3.4", 33, false},  // longer than the family: holds nothing
        {"255.255.255.255", "0.0.0.0", 0, true},
        {"2001:db8::1", "2001:db8::", 32, true},
        {"2001:db9::", "2001:db8::", 32, false},
        {"fe80::1", "fe80::", 10, true},
        {"febf::", "fe80::", 10, true},
        {"fec0::", "fe80::", 10, false},
        {"::1", "::1", 128, true},
        {"::1", "::", 129, false},
        {"::1", "::", 0, true},
        // An IPv4 address and its mapped form are one address.
        {"::ffff:10.1.2.3", "10.0.0.0", 8, true},
        {"::ffff:11.1.2.3", "10.0.0.0", 8, false},
        {"10.1.2.3", "::ffff:10.0.0.0", 104, true},
        {"11.1.2.3", "::ffff:10.0.0.0", 104, false},
        {"1.2.3.4", "::ffff:1.2.3.4", 128, true},
        {"1.2.3.4", "::ffff:0:0", 96, true},
        {"1.2.3.4", "::", 80, true},
        {"1.2.3.4", "::", 0, true},
        {"::ffff:1.2.3.4", "0.0.0.0", 0, true},
        {"::ffff:1.2.3.4", "::ffff:0:0", 96, true},
        // Other IPv6 forms of an IPv4 address are other addresses.
        {"::1", "0.0.0.0", 0, false},
        {"::1.2.3.4", "1.2.3.0", 24, false},
        {"64:ff9b::1.2.3.4", "1.2.3.0", 24, false},
        {"1.2.3.4", "::1.2.3.4", 128, false},
        {"1.2.3.4", "64:ff9b::", 96, false},
        {"2001:db8::1", "0.0.0.0", 0, false},
    };
    for (const auto& r : rows) {
        CAPTURE(r.address);
        CAPTURE(r.prefix);
        CAPTURE(r.bits);
        CHECK(sbx::net::in_prefix(ip(r.address), ip(r.prefix), r.bits) == r.in);
    }
}

TEST_CASE("address: class names") {
    struct Row {
        AddressClass c;
        const char* name;
    };
    const Row rows[] = {
        {AddressClass::public_address, "public"},   {AddressClass::loopback, "loopback"},
        {AddressClass::link_local, "link-local"},   {AddressClass::metadata, "metadata"},
        {AddressClass::multicast, "multicast"},     {AddressClass::unspecified, "unspecified"},
        {AddressClass::private_network, "private"}, {AddressClass::broadcast, "broadcast"},
        {AddressClass::reserved, "reserved"},
    };
    for (const auto& r : rows) CHECK(sbx::net::class_name(r.c) == r.name);
}

TEST_CASE("address: addresses compare as values, IPv4 before IPv6") {
    CHECK(Address::v4(1, 2, 3, 4) == v4("1.2.3.4"));
    CHECK(Address::v4_from_u32(0x01020304) == Address::v4(1, 2, 3, 4));
    CHECK(Address::v4(1, 2, 3, 4) < Address::v4(1, 2, 3, 5));
    CHECK(Address::v4(1, 2, 3, 255) < Address::v4(1, 2, 4, 0));
    CHECK(Address::v4(255, 255, 255, 255) < Address::v6({}));
    CHECK(v6("::1") < v6("::2"));
    CHECK(v6("::ffff:1.2.3.4") != v4("1.2.3.4"));  // different values; unmap() makes them one
    CHECK(sbx::net::unmap(v6("::ffff:1.2.3.4")) == v4("1.2.3.4"));
    CHECK(v6("::") != v4("0.0.0.0"));
    CHECK(sbx::net::address_bits(Address::Family::v4) == 32);
    CHECK(sbx::net::address_bits(Address::Family::v6) == 128);
}

#if defined(__GLIBC__) && defined(AF_INET6)

namespace {

// glibc's verdict on `s`, as an Address, for the parser named by `which`.
enum class Glibc { aton, pton4, pton6 };

std::optional<Address> glibc_parse(const std::string& s, Glibc which) {
    if (which == Glibc::pton6) {
        std::array<std::uint8_t, 16> b{};
        if (inet_pton(AF_INET6, s.c_str(), b.data()) != 1) return std::nullopt;
        return Address::v6(b);
    }
    in_addr in{};
    const int ok = which == Glibc::aton ? inet_aton(s.c_str(), &in) : inet_pton(AF_INET, s.c_str(), &in);
    if (ok != 1) return std::nullopt;
    const auto* p = reinterpret_cast<const std::uint8_t*>(&in.s_addr);
    return Address::v4(p[0], p[1], p[2], p[3]);
}

// Strings near the edges of what the parsers read, from a fixed seed (the same
// strings on every run): one to `max_parts` parts, each drawn from `parts` (which hold
// empty parts and junk), joined by `sep`, now and then with `sep` once more at the end.
std::uint64_t next(std::uint64_t& state) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return state >> 33;
}

template <std::size_t N>
std::string joined(std::uint64_t& state, const char* const (&parts)[N], std::size_t max_parts, char sep) {
    std::string s;
    const std::size_t count = 1 + next(state) % max_parts;
    for (std::size_t k = 0; k < count; ++k) {
        if (k > 0) s += sep;
        s += parts[next(state) % N];
    }
    if (next(state) % 16 == 0) s += sep;
    return s;
}

}  // namespace

TEST_CASE("address: the parsers agree with glibc's inet_aton and inet_pton") {
    const char* const v4_parts[] = {"0", "1", "9", "08", "00", "012", "10", "169", "192", "255", "256", "0377", "0400",
                                    "0x", "0xff", "0X1f", "0x100", "0xa9fe", "65535", "65536", "16777215", "16777216",
                                    "4294967295", "4294967296", "", "a", "1x", "-1", " 1"};
    const char* const dotted_parts[] = {"0", "1", "9", "10", "99", "100", "169", "199", "200", "249", "250", "255",
                                        "256", "260", "300", "999", "1000", "01", "00", "010", "0x1", ""};
    const char* const v6_parts[] = {"0", "0", "1", "ffff", "FFFF", "abcd", "a9fe", "64", "ff9b", "0000", "12345", "00000",
                                    "", "", "g", "1.2.3.4", "01.2.3.4", "255.255.255.255", "1.2.3", "1%eth0", "[1"};
    std::uint64_t state = 20240601;
    int accepted_v4 = 0, accepted_dotted = 0, accepted_v6 = 0;
    for (int k = 0; k < 20000; ++k) {
        const std::string s4 = joined(state, v4_parts, 5, '.');
        CAPTURE(s4);
        const auto ours = sbx::net::parse_ipv4_any(s4);
        CHECK(ours == glibc_parse(s4, Glibc::aton));
        CHECK(sbx::net::parse_ipv4_dotted(s4) == glibc_parse(s4, Glibc::pton4));
        accepted_v4 += ours.has_value();

        const std::string sd = joined(state, dotted_parts, 5, '.');
        CAPTURE(sd);
        const auto dotted = sbx::net::parse_ipv4_dotted(sd);
        CHECK(dotted == glibc_parse(sd, Glibc::pton4));
        CHECK(sbx::net::parse_ipv4_any(sd) == glibc_parse(sd, Glibc::aton));
        if (dotted) CHECK(sbx::net::parse_ipv4_any(sd) == dotted);
        accepted_dotted += dotted.has_value();

        const std::string s6 = joined(state, v6_parts, 9, ':');
        CAPTURE(s6);
        const auto ours6 = sbx::net::parse_ipv6(s6);
        CHECK(ours6 == glibc_parse(s6, Glibc::pton6));
        if (ours6) {
            ++accepted_v6;
            CHECK(sbx::net::parse_ipv6(sbx::net::to_string(*ours6)) == ours6);
        }
    }
    MESSAGE("accepted of 20000: " << accepted_v4 << " by inet_aton, " << accepted_dotted << " by inet_pton(AF_INET), "
                                  << accepted_v6 << " by inet_pton(AF_INET6)");
    // The pieces make enough valid addresses of each kind for the agreement to mean something.
    CHECK(accepted_v4 > 2000);
    CHECK(accepted_dotted > 200);
    CHECK(accepted_v6 > 200);
}

TEST_CASE("address: to_string writes IPv6 as glibc's inet_ntop does, but for the forms we print otherwise") {
    // inet_ntop writes ::/96 with a dotted tail (::1.2.3.4) and NAT64 in hex; RFC 5952
    // recommends neither, and to_string does the opposite. Everything else is the same.
    const std::uint16_t groups[] = {0, 0, 0, 0, 1, 0xffff, 0x10, 0xabcd, 0x100};
    std::uint64_t state = 5952;
    int compared = 0;
    for (int k = 0; k < 20000; ++k) {
        std::array<std::uint8_t, 16> b{};
        for (std::size_t g = 0; g < 8; ++g) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            const std::uint16_t v = groups[(state >> 33) % std::size(groups)];
            b[2 * g] = static_cast<std::uint8_t>(v >> 8);
            b[2 * g + 1] = static_cast<std::uint8_t>(v);
        }
        const Address a = Address::v6(b);
        CHECK(sbx::net::parse_ipv6(sbx::net::to_string(a)) == a);
        if (sbx::net::in_prefix(a, v6("::"), 96) || sbx::net::in_prefix(a, v6("64:ff9b::"), 96)) continue;
        char text[INET6_ADDRSTRLEN];
        REQUIRE(inet_ntop(AF_INET6, b.data(), text, sizeof text) != nullptr);
        CAPTURE(text);
        CHECK(sbx::net::to_string(a) == text);
        ++compared;
    }
    CHECK(compared > 10000);
}

TEST_CASE("address: every table row agrees with glibc, but where we are stricter on purpose") {
    // inet_aton ignores whatever follows a space; we refuse it.
    const std::string stricter[] = {"1.2.3.4 ", "1.2.3.4\n", "1.2.3.4\t", "1.2.3.4 x"};
    for (const auto& s : stricter) {
        CAPTURE(s);
        CHECK(glibc_parse(s, Glibc::aton).has_value());
        CHECK_FALSE(sbx::net::parse_ipv4_any(s).has_value());
    }
    const std::string same[] = {"", ".", "1..2", "1.2.3.4.", "+1", "-1", "0x", "08", "1.2.3.4.5", "4294967296",
                                "256.1.1.1", "1.2.3.256", "1.16777216", "2852039166", "0xa9.0xfe.0xa9.0xfe",
                                "0251.0376.0251.0376", "169.16689662", "169.254.43518", "0xa9.254.0251.0xfe",
                                " 1.2.3.4", "127.1", "0x", "0x0", "0", "037777777777", "040000000000"};
    for (const auto& s : same) {
        CAPTURE(s);
        CHECK(sbx::net::parse_ipv4_any(s) == glibc_parse(s, Glibc::aton));
    }
    const std::string same6[] = {"::", "::1", ":::", "1::2::3", "12345::", "1:2:3:4:5:6:7:8:9", "::ffff:1.2.3",
                                 "fe80::1%eth0", "[::1]", "g::1", ":1::2", "1::2:", "1:2:3:4:5:6:7::",
                                 "1:2:3:4:5:6:7:8::", "::ffff:01.2.3.4", "1:2:3:4:5:6::1.2.3.4", "64:ff9b::1.2.3.4"};
    for (const auto& s : same6) {
        CAPTURE(s);
        CHECK(sbx::net::parse_ipv6(s) == glibc_parse(s, Glibc::pton6));
    }
}

#endif
