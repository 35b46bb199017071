// The proxy's secret, from the kernel's random source.
#include "shared/proxy_secret.hpp"

#include <sys/types.h>  // before sys/random.h, which on macOS may not define size_t itself
#include <sys/random.h>  // getrandom (Linux), getentropy (macOS)
#include <unistd.h>      // getentropy (glibc, the BSDs)

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sbx::launcher {

namespace {

constexpr std::size_t kSecretBytes = 16;  // 128 bits
using SecretBytes = std::array<std::uint8_t, kSecretBytes>;

// Fills `bytes` from the kernel; false, with errno set, when it cannot.
#if defined(__linux__)
constexpr const char* kRandomCall = "getrandom";
bool random_bytes(SecretBytes& bytes) {
    std::size_t have = 0;
    while (have < bytes.size()) {
        const ssize_t got = ::getrandom(bytes.data() + have, bytes.size() - have, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return false;
        have += static_cast<std::size_t>(got);
    }
    return true;
}
#else
constexpr const char* kRandomCall = "getentropy";
bool random_bytes(SecretBytes& bytes) { return ::getentropy(bytes.data(), bytes.size()) == 0; }
#endif

}  // namespace

sbx::expected<std::string> make_proxy_secret() {
    SecretBytes bytes{};
    if (!random_bytes(bytes))
        return sbx::fail(sbx::Errc::io_error,
                         std::string("cannot make the proxy's secret: ") + kRandomCall + ": " + std::strerror(errno));
    constexpr char kHex[] = "0123456789abcdef";
    std::string out;
    out.reserve(2 * kSecretBytes);
    for (const std::uint8_t b : bytes) {
        out += kHex[b >> 4];
        out += kHex[b & 0xf];
    }
    return out;
}

}  // namespace sbx::launcher
