// sbx/net/socks5.hpp - a SOCKS5 client's greeting, username/password (RFC 1929) and CONNECT request (RFC 1928),
// read from bytes, and the replies.
//
// The proxy speaks the part of SOCKS5 a sandboxed command needs: no
// authentication or, where it asks for a secret (sbx/net/proxy_auth.hpp),
// username/password and nothing else; CONNECT; the three address types. A client's messages
// are read here, as pure functions of the bytes received so far: each says
// either how many bytes the message needs in all before it can be judged (the
// proxy reads exactly that many, never into what the client sends next, which
// belongs to the tunnel) or what the message is. The replies are bytes built
// here too. The sockets, the deadlines and the host decision are the proxy's
// (launchers/proxy/socks.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "sbx/core/inline.hpp"
#include "sbx/net/address.hpp"

namespace sbx::net::socks5 {

constexpr std::uint8_t kVersion = 0x05;

// The REP field of a reply (RFC 1928 section 6): the codes the proxy answers with.
enum class Reply : std::uint8_t {
    succeeded = 0x00,
    general_failure = 0x01,             // a host no client may name, and anything else
    not_allowed = 0x02,                 // refused by the rules
    network_unreachable = 0x03,
    host_unreachable = 0x04,            // a name that does not resolve, a server that does not answer
    connection_refused = 0x05,
    command_not_supported = 0x07,       // BIND, UDP ASSOCIATE
    address_type_not_supported = 0x08,
};

// ---- The greeting: VER NMETHODS METHODS... -----------------------------------------

// The authentication methods the proxy may require (METHOD values).
enum class Method : std::uint8_t {
    no_authentication = 0x00,
    username_password = 0x02,  // RFC 1929
};

struct Greeting {
    enum class Verdict {
        more,                  // read until the greeting has `size` bytes, then ask again
        no_authentication,     // offers "no authentication": answer kChooseNoAuthentication
        username_password,     // offers username/password: answer kChooseUsernamePassword, read a PasswordRequest
        no_acceptable_method,  // does not offer the method required: answer kNoAcceptableMethod, close
        not_socks5,            // another protocol (SOCKS4, say): close without a word
    };
    Verdict verdict = Verdict::more;
    std::size_t size = 2;  // more: the bytes needed in all; otherwise the greeting's length
};

// The method-selection answers.
constexpr std::string_view kChooseNoAuthentication{"\x05\x00", 2};
constexpr std::string_view kChooseUsernamePassword{"\x05\x02", 2};
constexpr std::string_view kNoAcceptableMethod{"\x05\xff", 2};

// What the first bytes a client sent make of its greeting, the proxy requiring
// method `required` and no other. Bytes beyond the greeting are not looked at.
constexpr Greeting parse_greeting(std::span<const std::uint8_t> bytes, Method required = Method::no_authentication) {
    using V = Greeting::Verdict;
    if (bytes.size() < 2) return {V::more, 2};
    if (bytes[0] != kVersion) return {V::not_socks5, 2};
    const std::size_t size = 2 + std::size_t{bytes[1]};
    if (bytes.size() < size) return {V::more, size};
    for (std::size_t i = 2; i < size; ++i)
        if (bytes[i] == static_cast<std::uint8_t>(required))
            return {required == Method::no_authentication ? V::no_authentication : V::username_password, size};
    return {V::no_acceptable_method, size};
}

// ---- Username/password (RFC 1929): VER ULEN UNAME PLEN PASSWD ----------------------------

struct PasswordRequest {
    enum class Verdict {
        more,         // read until the request has `size` bytes, then ask again
        credentials,  // judge `password` (proxy_auth::secret_matches): answer kPasswordAccepted, or kPasswordRefused and close
        refused,      // not one RFC 1929 allows: answer kPasswordRefused, close
    };
    Verdict verdict = Verdict::more;
    std::size_t size = 2;      // more: the bytes needed in all; otherwise the request's length
    std::string username;      // credentials: as sent, 1 to 255 bytes
    std::string password;      // credentials: as sent, 1 to 255 bytes
    std::string_view why;      // refused: one line, for tests
};

constexpr std::uint8_t kPasswordVersion = 0x01;
// The sub-negotiation's answers: VER STATUS, 0 for success.
constexpr std::string_view kPasswordAccepted{"\x01\x00", 2};
constexpr std::string_view kPasswordRefused{"\x01\x01", 2};

// What the bytes after the greeting make of the username/password request.
// Bytes beyond it are not looked at.
SBX_INLINE PasswordRequest parse_password_request(std::span<const std::uint8_t> bytes);

// ---- The request: VER CMD RSV ATYP DST.ADDR DST.PORT ----------------------------------

struct Request {
    enum class Verdict {
        more,     // read until the request has `size` bytes, then ask again
        connect,  // CONNECT to host:port
        reply,    // a request the proxy does not serve: answer `reply`, close
        close,    // not a SOCKS5 request: close without a word
    };
    Verdict verdict = Verdict::more;
    std::size_t size = 4;     // more: the bytes needed in all; otherwise the request's length
    std::string host;         // connect: an address as canonical text, or the name's bytes as sent
    std::uint16_t port = 0;   // connect: as sent (0 too: the host decision refuses it)
    Reply reply = Reply::general_failure;  // reply
    std::string_view why;     // reply, close: one line, for tests
};

constexpr std::uint8_t kConnect = 0x01;
constexpr std::uint8_t kIpv4 = 0x01, kDomainName = 0x03, kIpv6 = 0x04;  // ATYP

// What the bytes after the greeting make of the request. Bytes beyond the
// request are not looked at.
SBX_INLINE Request parse_request(std::span<const std::uint8_t> bytes);

// ---- Replies ---------------------------------------------------------------------------

// A reply with `code` and the bound address 0.0.0.0:0, for a failure.
SBX_INLINE std::string reply(Reply code);

// The success reply: the address and port the proxy's socket to the server is bound to.
SBX_INLINE std::string success_reply(const Address& bound, std::uint16_t port);

}  // namespace sbx::net::socks5

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_NET)

namespace sbx::net::socks5 {

SBX_INLINE PasswordRequest parse_password_request(std::span<const std::uint8_t> bytes) {
    using V = PasswordRequest::Verdict;
    PasswordRequest out;
    auto verdict = [&](V v, std::size_t size, std::string_view why = {}) {
        out.verdict = v;
        out.size = size;
        out.why = why;
        return out;
    };
    if (bytes.size() < 2) return verdict(V::more, 2);
    if (bytes[0] != kPasswordVersion) return verdict(V::refused, 2, "the sub-negotiation's version is not 1");
    const std::size_t user_size = bytes[1];
    if (user_size == 0) return verdict(V::refused, 2, "the user name has no bytes");
    if (bytes.size() < 2 + user_size + 1) return verdict(V::more, 2 + user_size + 1);
    const std::size_t password_size = bytes[2 + user_size];
    const std::size_t size = 2 + user_size + 1 + password_size;
    if (password_size == 0) return verdict(V::refused, size, "the password has no bytes");
    if (bytes.size() < size) return verdict(V::more, size);
    out.username.assign(reinterpret_cast<const char*>(bytes.data()) + 2, user_size);
    out.password.assign(reinterpret_cast<const char*>(bytes.data()) + 2 + user_size + 1, password_size);
    return verdict(V::credentials, size);
}

SBX_INLINE Request parse_request(std::span<const std::uint8_t> bytes) {
    using V = Request::Verdict;
    Request out;
    auto verdict = [&](V v, std::size_t size, std::string_view why = {}) {
        out.verdict = v;
        out.size = size;
        out.why = why;
        return out;
    };
    if (bytes.size() < 4) return verdict(V::more, 4);
    if (bytes[0] != kVersion) return verdict(V::close, 4, "the version is not 5");
    if (bytes[2] != 0) return verdict(V::close, 4, "the reserved byte is not 0");
    std::size_t address_size = 0;  // DST.ADDR's bytes, a name's length byte included
    switch (bytes[3]) {
        case kIpv4: address_size = 4; break;
        case kIpv6: address_size = 16; break;
        case kDomainName:
            if (bytes.size() < 5) return verdict(V::more, 5);
            if (bytes[4] == 0) return verdict(V::close, 5, "the host name has no bytes");
            address_size = 1 + std::size_t{bytes[4]};
            break;
        default:
            out.reply = Reply::address_type_not_supported;
            return verdict(V::reply, 4, "the address type is not 1, 3 or 4");
    }
    const std::size_t size = 4 + address_size + 2;
    if (bytes.size() < size) return verdict(V::more, size);
    if (bytes[1] != kConnect) {
        out.reply = Reply::command_not_supported;  // BIND, UDP ASSOCIATE
        return verdict(V::reply, size, "the command is not CONNECT");
    }
    const auto address = bytes.subspan(4, address_size);
    if (bytes[3] == kIpv4) {
        out.host = to_string(Address::v4(address[0], address[1], address[2], address[3]));
    } else if (bytes[3] == kIpv6) {
        std::array<std::uint8_t, 16> a{};
        for (std::size_t i = 0; i < 16; ++i) a[i] = address[i];
        out.host = to_string(Address::v6(a));
    } else {
        out.host.assign(reinterpret_cast<const char*>(address.data()) + 1, address_size - 1);
    }
    out.port = static_cast<std::uint16_t>(bytes[size - 2] << 8 | bytes[size - 1]);
    return verdict(V::connect, size);
}

SBX_INLINE std::string reply(Reply code) {
    std::string out("\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00", 10);
    out[1] = static_cast<char>(code);
    return out;
}

SBX_INLINE std::string success_reply(const Address& bound, std::uint16_t port) {
    std::string out("\x05\x00\x00", 3);
    out += static_cast<char>(bound.is_v6() ? kIpv6 : kIpv4);
    out.append(reinterpret_cast<const char*>(bound.bytes.data()), bound.is_v6() ? 16 : 4);
    out += static_cast<char>(port >> 8);
    out += static_cast<char>(port & 0xff);
    return out;
}

}  // namespace sbx::net::socks5
#endif
