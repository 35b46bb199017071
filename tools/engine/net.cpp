// The net layer of the engine, compiled once for sbx's own programs
// (sbx/core/inline.hpp): every header of include/sbx/net/, with the
// definitions at its end read here alone.
#define SBX_DEFINE_NET

#include "sbx/net/address.hpp"
#include "sbx/net/forwards.hpp"
#include "sbx/net/host_pattern.hpp"
#include "sbx/net/host_port.hpp"
#include "sbx/net/hosts.hpp"
#include "sbx/net/hosts_file.hpp"
#include "sbx/net/http1.hpp"
#include "sbx/net/proxy_auth.hpp"
#include "sbx/net/proxy_env.hpp"
#include "sbx/net/socks5.hpp"
#include "sbx/net/ssh_proxy.hpp"
#include "sbx/net/unix_socket.hpp"
