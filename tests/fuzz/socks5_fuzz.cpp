// Fuzzing the proxy's SOCKS5 reader (sbx/net/socks5.hpp).
//
// Any bytes are read as the proxy reads them: asking for more until the
// greeting, then the request, can be judged. Each ask is for more than it has
// and never for more than the message holds, so the loop ends and no byte of
// the tunnel is read; the verdict is the one the whole input gives. A CONNECT
// request names a host (an address in canonical text, or the name's bytes) and
// written again as SOCKS5 bytes reads back the same; the success reply for an
// address is laid out as a request and reads back as that address. Where the
// proxy requires username/password, the greeting chooses it or nothing, and the
// RFC 1929 request that follows is read the same way: credentials of 1 to 255
// bytes each, exactly the request's length, or a refusal that says why.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "check.hpp"
#include "sbx/net/socks5.hpp"

namespace {

namespace socks5 = sbx::net::socks5;

using sbx::fuzz::check;

std::span<const std::uint8_t> bytes_of(const std::string& s) {
    return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

// As the proxy's loop: from nothing, read what the parser asks for.
template <class Parse>
auto read_as_proxy(std::span<const std::uint8_t> input, Parse parse) {
    std::size_t have = 0;
    for (;;) {
        auto r = parse(input.first(have));
        if (r.verdict != decltype(r.verdict)::more) {
            check(r.size <= have, "a judged message is within the bytes read");
            return r;
        }
        check(r.size > have, "more asks for more than it has");
        if (r.size > input.size()) return r;  // the client stops here: the proxy waits, then gives up
        have = r.size;
    }
}

void check_connect(const socks5::Request& r, std::uint8_t atyp) {
    check(!r.host.empty(), "a CONNECT names a host");
    std::string again("\x05\x01\x00", 3);
    again += static_cast<char>(atyp);
    if (atyp == socks5::kDomainName) {
        again += static_cast<char>(r.host.size());
        again += r.host;
    } else {
        const auto a = atyp == socks5::kIpv4 ? sbx::net::parse_ipv4_dotted(r.host) : sbx::net::parse_ipv6(r.host);
        check(a.has_value(), "an address request's host is an address");
        again.append(reinterpret_cast<const char*>(a->bytes.data()), atyp == socks5::kIpv4 ? 4 : 16);
        // The success reply has a request's layout.
        std::string reply = socks5::success_reply(*a, r.port);
        reply[1] = static_cast<char>(socks5::kConnect);
        const auto back = socks5::parse_request(bytes_of(reply));
        check(back.verdict == socks5::Request::Verdict::connect && back.host == r.host && back.port == r.port,
              "the success reply reads back as its address");
    }
    again += static_cast<char>(r.port >> 8);
    again += static_cast<char>(r.port & 0xff);
    const auto back = socks5::parse_request(bytes_of(again));
    check(back.verdict == socks5::Request::Verdict::connect && back.host == r.host && back.port == r.port,
          "a CONNECT written again reads back the same");
}

void check_password(std::span<const std::uint8_t> input) {
    using V = socks5::Greeting::Verdict;
    const auto greeting = read_as_proxy(input, [](auto b) { return socks5::parse_greeting(b, socks5::Method::username_password); });
    check(greeting.verdict != V::no_authentication, "username/password required: never no authentication");
    if (greeting.verdict != V::username_password) return;
    const auto rest = input.subspan(greeting.size);
    const auto login = read_as_proxy(rest, [](auto b) { return socks5::parse_password_request(b); });
    const auto whole = socks5::parse_password_request(rest);
    check(whole.verdict == login.verdict && whole.size == login.size && whole.password == login.password,
          "the login's verdict is the whole input's");
    using PV = socks5::PasswordRequest::Verdict;
    if (login.verdict == PV::credentials) {
        check(!login.username.empty() && login.username.size() <= 255 && !login.password.empty() &&
                  login.password.size() <= 255,
              "credentials of 1 to 255 bytes each");
        check(login.size == 3 + login.username.size() + login.password.size(), "the login's length");
    }
    if (login.verdict == PV::refused) check(!login.why.empty(), "a refused login says why");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::span<const std::uint8_t> input(data, size);
    const auto greeting = read_as_proxy(input, [](auto b) { return socks5::parse_greeting(b); });
    const auto whole_greeting = socks5::parse_greeting(input);
    check(whole_greeting.verdict == greeting.verdict && whole_greeting.size == greeting.size,
          "the greeting's verdict is the whole input's");

    // The request: after an accepted greeting as the proxy reads it, and the input alone.
    std::span<const std::uint8_t> rest = input;
    if (greeting.verdict == socks5::Greeting::Verdict::no_authentication) rest = input.subspan(greeting.size);
    const auto request = read_as_proxy(rest, [](auto b) { return socks5::parse_request(b); });
    const auto whole = socks5::parse_request(rest);
    check(whole.verdict == request.verdict && whole.size == request.size && whole.host == request.host &&
              whole.port == request.port,
          "the request's verdict is the whole input's");
    switch (request.verdict) {
        case socks5::Request::Verdict::connect: check_connect(request, rest[3]); break;
        case socks5::Request::Verdict::reply:
            check(request.reply != socks5::Reply::succeeded && !request.why.empty(), "a refusal says why");
            check(socks5::reply(request.reply).size() == 10, "a failure reply is ten bytes");
            break;
        case socks5::Request::Verdict::close: check(!request.why.empty(), "a close says why"); break;
        case socks5::Request::Verdict::more: check(request.size > rest.size(), "more: the input ended"); break;
    }
    check_password(input);
    return 0;
}
