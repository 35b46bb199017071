// launchers/shared/proxy_secret.hpp - the secret a proxy on the host's loopback asks its command for.
//
// A launcher whose proxy listens where other local processes reach it (sbx-mac)
// makes one for each command, hands it to the proxy (ProxyOptions::secret) and
// puts it in the command's proxy variables (sbx::net::proxy_environment).
#pragma once

#include <string>

#include "sbx/core/expected.hpp"

namespace sbx::launcher {

// 128 bits from the kernel's random source (getrandom(2) on Linux, getentropy(2)
// elsewhere) as 32 lower-case hexadecimal characters: safe in a URL as it is.
// IO_ERROR naming the call when the kernel gives none.
sbx::expected<std::string> make_proxy_secret();

}  // namespace sbx::launcher
