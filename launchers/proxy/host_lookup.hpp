// launchers/proxy/host_lookup.hpp - what the host decision needs from this machine:
// its own addresses (sbx::net::decide_host takes them) and the addresses a name
// resolves to (sbx::net::choose_address judges them). Shared by the launchers'
// proxy and by `sbx explain --host`, so both look up alike.
#pragma once

#include <string>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/net/address.hpp"
#include "sbx/net/host_pattern.hpp"

namespace sbx::launcher {

// Every IPv4 and IPv6 address of this machine's interfaces (getifaddrs), as they
// are now, loopback included; empty when the list cannot be read.
std::vector<sbx::net::Address> own_addresses();

// The addresses `host` resolves to, in the resolver's order (getaddrinfo,
// AF_UNSPEC, SOCK_STREAM, AI_ADDRCONFIG). IO_ERROR "HOST does not resolve: WHY"
// when it does not.
sbx::expected<std::vector<sbx::net::Address>> resolve_host(const std::string& host);

// Where the name `host` leads without asking the network: localhost's
// loopback and this machine's /etc/hosts (sbx::net::local_addresses), read
// now, for sbx::net::HostTarget::local_addresses. Empty for an address, or
// where the file cannot be read (more than 1 MiB of it is not read).
std::vector<sbx::net::Address> local_addresses_of(const sbx::net::HostTarget& target);

}  // namespace sbx::launcher
