// launchers/own_addresses.cpp - see host_lookup.hpp.
#include "host_lookup.hpp"

#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>

namespace sbx::launcher {

std::vector<sbx::net::Address> own_addresses() {
    std::vector<sbx::net::Address> out;
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return out;
    for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
        if (i->ifa_addr == nullptr) continue;
        if (i->ifa_addr->sa_family == AF_INET) {
            sockaddr_in in{};
            std::memcpy(&in, i->ifa_addr, sizeof in);
            std::array<std::uint8_t, 4> b{};
            std::memcpy(b.data(), &in.sin_addr, 4);
            out.push_back(sbx::net::Address::v4(b[0], b[1], b[2], b[3]));
        } else if (i->ifa_addr->sa_family == AF_INET6) {
            sockaddr_in6 in6{};
            std::memcpy(&in6, i->ifa_addr, sizeof in6);
            std::array<std::uint8_t, 16> b{};
            std::memcpy(b.data(), &in6.sin6_addr, 16);
            out.push_back(sbx::net::Address::v6(b));
        }
    }
    ::freeifaddrs(list);
    return out;
}

sbx::expected<std::vector<sbx::net::Address>> resolve_host(const std::string& host) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    addrinfo* found = nullptr;
    const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &found);
    if (rc != 0) {
        const std::string why = rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc);
        return sbx::fail(sbx::Errc::io_error, host + " does not resolve: " + why);
    }
    std::vector<sbx::net::Address> out;
    for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
        if (a->ai_family == AF_INET) {
            sockaddr_in in{};
            std::memcpy(&in, a->ai_addr, sizeof in);
            std::array<std::uint8_t, 4> b{};
            std::memcpy(b.data(), &in.sin_addr, 4);
            out.push_back(sbx::net::Address::v4(b[0], b[1], b[2], b[3]));
        } else if (a->ai_family == AF_INET6) {
            sockaddr_in6 in6{};
            std::memcpy(&in6, a->ai_addr, sizeof in6);
            std::array<std::uint8_t, 16> b{};
            std::memcpy(b.data(), &in6.sin6_addr, 16);
            out.push_back(sbx::net::Address::v6(b));
        }
    }
    ::freeaddrinfo(found);
    return out;
}

}  // namespace sbx::launcher
