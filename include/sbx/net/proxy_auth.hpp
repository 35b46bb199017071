// sbx/net/proxy_auth.hpp - whether a client of the proxy presented the command's secret.
//
// Where the proxy listens on the host's loopback (sbx-mac), any local process
// could use it, so the launcher gives it a secret and puts the secret in the
// command's proxy variables (sbx/net/proxy_env.hpp). HTTP clients present it as
// the password of `Proxy-Authorization: Basic base64(USER:PASSWORD)` (RFC 7617),
// SOCKS5 clients as the password of RFC 1929's sub-negotiation (its bytes are
// read in sbx/net/socks5.hpp); the user name may be anything. This header holds
// the rules, as pure functions a table can test and a fuzzer can feed anything:
// a strict base64 decoder (decode_base64), the header's parser (parse_basic),
// the comparison with the secret (secret_matches), the verdict on a request's
// headers (check_request), and the proxy's 407 answer (required_response). The
// sockets are the proxy's (launchers/proxy/http.cpp, proxy/socks.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sbx/core/ascii.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/net/http1.hpp"

namespace sbx::net::proxy_auth {

// ---- base64 -------------------------------------------------------------------------

namespace detail {

// The value of a character of the standard alphabet (RFC 4648 section 4), or -1.
constexpr int base64_value(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
}

}  // namespace detail

// The bytes `text` encodes in base64 with padding (RFC 4648 section 4), read
// strictly: a length that is a multiple of four, only the standard alphabet, '='
// only as the last one or two characters, no white space, and the bits the
// padding leaves over zero (the one encoding of those bytes). nullopt otherwise.
SBX_INLINE std::optional<std::string> decode_base64(std::string_view text);

// `bytes` in base64 with padding, the one encoding decode_base64 reads back.
SBX_INLINE std::string encode_base64(std::string_view bytes);

// `Basic base64(USER:PASSWORD)`, a Proxy-Authorization value parse_basic reads.
SBX_INLINE std::string basic_value(std::string_view user, std::string_view password);

// ---- The Basic credentials -----------------------------------------------------------

struct Credentials {
    std::string user;      // before the first colon
    std::string password;  // after it, colons and all
};

// The credentials in a Proxy-Authorization value (its spaces around already
// trimmed, as http1::parse_request leaves it): the scheme "Basic" in any case,
// one space, and USER:PASSWORD in base64 (decode_base64). INVALID_ARGUMENT with
// what is wrong otherwise.
SBX_INLINE expected<Credentials> parse_basic(std::string_view value);

// Whether `presented` is `secret`, in a time that depends on the lengths of the
// two and not on where they differ.
SBX_INLINE bool secret_matches(std::string_view presented, std::string_view secret);

// ---- An HTTP request ----------------------------------------------------------------

struct Decision {
    enum class Verdict {
        allowed,    // no secret, or the request presents it
        missing,    // no Proxy-Authorization header
        malformed,  // one that is not Basic credentials, or more than one
        wrong,      // Basic credentials whose password is not the secret
    };
    Verdict verdict = Verdict::allowed;
    std::string why;  // not allowed: one line, for the 407's body
};

// Whether `request` presents `secret` (with an empty secret, every request does):
// exactly one Proxy-Authorization header, Basic credentials (parse_basic) whose
// password is the secret, whatever the user.
SBX_INLINE Decision check_request(const http1::Request& request, std::string_view secret);

// The realm the 407 names: the proxy's clients are told whose proxy it is.
inline constexpr std::string_view kRealm = "sbx";

// The proxy's answer to a request check_request did not allow: 407, a Basic
// challenge, `Connection: close`, and `why` as the body.
SBX_INLINE std::string required_response(std::string_view why);

}  // namespace sbx::net::proxy_auth

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_NET)

namespace sbx::net::proxy_auth {

SBX_INLINE std::string encode_base64(std::string_view bytes) {
    constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::uint32_t bits = 0;
    int count = 0;  // bits held in `bits`, not yet written
    for (const char c : bytes) {
        bits = (bits << 8) | static_cast<unsigned char>(c);
        for (count += 8; count >= 6; count -= 6) out += kAlphabet[(bits >> (count - 6)) & 63];
    }
    if (count > 0) out += kAlphabet[(bits << (6 - count)) & 63];
    while (out.size() % 4 != 0) out += '=';
    return out;
}

SBX_INLINE std::string basic_value(std::string_view user, std::string_view password) {
    return "Basic " + encode_base64(std::string(user) + ":" + std::string(password));
}

SBX_INLINE std::optional<std::string> decode_base64(std::string_view text) {
    if (text.size() % 4 != 0) return std::nullopt;
    std::size_t padding = 0;
    if (text.ends_with("==")) padding = 2;
    else if (text.ends_with("=")) padding = 1;
    const std::string_view body = text.substr(0, text.size() - padding);
    std::string out;
    out.reserve(text.size() / 4 * 3);
    std::uint32_t bits = 0;
    int count = 0;  // bits held in `bits`
    for (const char c : body) {
        const int v = detail::base64_value(c);
        if (v < 0) return std::nullopt;  // '=' before the end among them
        bits = (bits << 6) | static_cast<std::uint32_t>(v);
        count += 6;
        if (count >= 8) {
            count -= 8;
            out += static_cast<char>((bits >> count) & 0xff);
        }
    }
    // Left over: 4 bits before "==", 2 before "=", none without padding.
    if ((bits & ((1u << count) - 1)) != 0) return std::nullopt;
    return out;
}

SBX_INLINE expected<Credentials> parse_basic(std::string_view value) {
    auto refuse = [](const char* why) -> expected<Credentials> { return fail(Errc::invalid_argument, why); };
    constexpr std::string_view kScheme = "basic ";
    if (value.size() < kScheme.size() || !ascii_iequals(value.substr(0, kScheme.size()), kScheme))
        return refuse("the scheme is not Basic followed by one space");
    const auto decoded = decode_base64(value.substr(kScheme.size()));
    if (!decoded) return refuse("the credentials are not base64");
    const auto colon = decoded->find(':');
    if (colon == std::string::npos) return refuse("the credentials have no colon between the user and the password");
    return Credentials{decoded->substr(0, colon), decoded->substr(colon + 1)};
}

SBX_INLINE bool secret_matches(std::string_view presented, std::string_view secret) {
    unsigned diff = presented.size() == secret.size() ? 0u : 1u;
    for (std::size_t i = 0; i < secret.size(); ++i) {
        const auto p = static_cast<unsigned char>(i < presented.size() ? presented[i] : 0);
        diff |= static_cast<unsigned>(p ^ static_cast<unsigned char>(secret[i]));
    }
    return diff == 0;
}

SBX_INLINE Decision check_request(const http1::Request& request, std::string_view secret) {
    using V = Decision::Verdict;
    if (secret.empty()) return {};
    const http1::Header* found = nullptr;
    for (const auto& h : request.headers) {
        if (!ascii_iequals(h.name, "proxy-authorization")) continue;
        if (found != nullptr) return {V::malformed, "more than one Proxy-Authorization header"};
        found = &h;
    }
    if (found == nullptr) return {V::missing, "no Proxy-Authorization header"};
    const auto credentials = parse_basic(found->value);
    if (!credentials) return {V::malformed, "Proxy-Authorization: " + credentials.error().message};
    if (!secret_matches(credentials->password, secret)) return {V::wrong, "the password is not this command's"};
    return {};
}

SBX_INLINE std::string required_response(std::string_view why) {
    return http1::error_response(407, "Proxy Authentication Required",
                                 "sbx: the proxy serves only its command, whose proxy variables hold the credentials: " +
                                     std::string(why),
                                 "Proxy-Authenticate: Basic realm=\"" + std::string(kRealm) + "\"\r\n");
}

}  // namespace sbx::net::proxy_auth
#endif
