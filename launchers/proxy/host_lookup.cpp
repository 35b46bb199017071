// launchers/proxy/host_lookup.cpp - see host_lookup.hpp.
#include "proxy/host_lookup.hpp"

#include <fcntl.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>

#include "base/fd_io.hpp"
#include "sbx/net/hosts_file.hpp"

namespace sbx::launcher {

namespace {

// The address of an AF_INET or AF_INET6 socket address; nothing for another family.
std::optional<sbx::net::Address> address_of(const sockaddr* sa) {
    if (sa->sa_family == AF_INET) {
        sockaddr_in in{};
        std::memcpy(&in, sa, sizeof in);
        std::array<std::uint8_t, 4> b{};
        std::memcpy(b.data(), &in.sin_addr, 4);
        return sbx::net::Address::v4(b[0], b[1], b[2], b[3]);
    }
    if (sa->sa_family == AF_INET6) {
        sockaddr_in6 in6{};
        std::memcpy(&in6, sa, sizeof in6);
        std::array<std::uint8_t, 16> b{};
        std::memcpy(b.data(), &in6.sin6_addr, 16);
        return sbx::net::Address::v6(b);
    }
    return std::nullopt;
}

}  // namespace

std::vector<sbx::net::Address> own_addresses() {
    std::vector<sbx::net::Address> out;
    ifaddrs* list = nullptr;
    if (::getifaddrs(&list) != 0) return out;
    for (const ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
        if (i->ifa_addr == nullptr) continue;
        if (auto a = address_of(i->ifa_addr)) out.push_back(*a);
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
        if (auto addr = address_of(a->ai_addr)) out.push_back(*addr);
    }
    ::freeaddrinfo(found);
    return out;
}

std::vector<sbx::net::Address> local_addresses_of(const sbx::net::HostTarget& target) {
    if (target.address) return {};
    constexpr std::size_t kMaxHostsFile = std::size_t{1} << 20;
    std::string text;
    Fd fd(::open("/etc/hosts", O_RDONLY | O_CLOEXEC));
    char buf[8192];
    ssize_t n = 0;
    while (fd.ok() && text.size() < kMaxHostsFile && (n = ::read(fd.get(), buf, sizeof buf)) > 0)
        text.append(buf, static_cast<std::size_t>(n));
    if (text.size() >= kMaxHostsFile) text.clear();
    return sbx::net::local_addresses(text, target.host);
}

}  // namespace sbx::launcher
