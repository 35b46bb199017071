// sbx/rules/tool_cache.hpp - where a project's tool caches live, and which variables point there.
//
// Every command of one project root gets one writable cache home that persists
// between its runs: BASE/sbx/projects/NAME, where BASE is $XDG_CACHE_HOME when it
// is set and absolute, else $HOME/.cache, and NAME encodes the root's path so that
// two roots never share one (tool_cache_name). The user's own caches (~/.cache,
// ~/.npm, ~/go) stay read-only: only that one directory is bound writable.
// XDG_CACHE_HOME points there, and so does each tool's own variable where the
// tool ignores XDG_CACHE_HOME or keeps a cache elsewhere (kToolCacheVars).
//
// Pure: the caller reads the environment and hands the values in; the planner
// (plan/command_fs_rules.hpp) checks the result against the filesystem rules,
// and the launchers make the directory (launchers/shared/tool_cache.cpp).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "sbx/core/inline.hpp"
#include "sbx/core/paths.hpp"

namespace sbx {

// The longest file name the filesystems sbx runs on take (NAME_MAX).
inline constexpr std::size_t kNameMax = 255;

// How much of the root's last component names a cache whose full encoding is
// too long (the rest of the name is a hash of the whole path).
inline constexpr std::size_t kLongNameKeep = 64;

// One variable that points a tool at the cache home.
struct ToolCacheVar {
    std::string_view name;
    std::string_view subdir;  // under the cache home; empty: the cache home itself
    std::string_view reason;  // why the variable is set, checked against the tool's documentation
};

// Each tool's own variable, and why XDG_CACHE_HOME alone is not enough for it.
// XDG_CACHE_HOME comes first and is always set: the caller's value is what the
// cache home was made from. A variable the caller set (other than
// XDG_CACHE_HOME) is kept as the caller set it, and the plan says so.
inline constexpr std::array kToolCacheVars{
    ToolCacheVar{"XDG_CACHE_HOME", "",
                 "the cache home itself; pip, Go's build cache, ccache 4, pnpm's metadata and yarn 1 honour it"},
    ToolCacheVar{"npm_config_cache", "npm", "npm ignores XDG_CACHE_HOME and keeps its cache in ~/.npm"},
    ToolCacheVar{"GOCACHE", "go-build", "Go's build cache; named so that a GOCACHE in go env's file does not win"},
    ToolCacheVar{"GOMODCACHE", "go-mod", "Go keeps downloaded modules in GOPATH/pkg/mod (~/go/pkg/mod), not in a cache"},
    ToolCacheVar{"PIP_CACHE_DIR", "pip", "pip honours XDG_CACHE_HOME, but a cache-dir in pip.conf would win"},
    ToolCacheVar{"CCACHE_DIR", "ccache", "ccache prefers a legacy ~/.ccache over XDG_CACHE_HOME when it exists"},
    ToolCacheVar{"YARN_CACHE_FOLDER", "yarn", "yarn 1's cache folder; yarn 2 and later keep theirs in the project"},
    // Not npm_config_store_dir, which pnpm 10 read too: npm 11 warns of it on every call.
    ToolCacheVar{"pnpm_config_store_dir", "pnpm-store",
                 "pnpm's content store, which lives under XDG_DATA_HOME (~/.local/share/pnpm/store), not the cache; "
                 "pnpm 11 reads its settings from pnpm_config_ variables, which npm does not read"},
    ToolCacheVar{"CARGO_HOME", "cargo",
                 "cargo's registry and git caches live in CARGO_HOME (~/.cargo), which has no cache variable of its own"},
};

namespace detail {

// SHA-256 (FIPS 180-4) of `data`, as 64 lower-case hex digits.
SBX_INLINE std::string sha256_hex(std::string_view data);

// A byte kept as it is in a cache name: letters, digits, '.' and '_'.
constexpr bool cache_name_plain(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_';
}

// `text` with '/' as '-' and every other byte that is not plain as %XX (upper
// case), a leading '.' included, so the name is never hidden, `.` or `..`.
SBX_INLINE std::string cache_name_escape(std::string_view text);

}  // namespace detail

// The folder every project's cache home lies in: $XDG_CACHE_HOME when set and
// absolute (normalised), else HOME/.cache. `home` absolute and normalised.
SBX_INLINE std::string tool_cache_base(std::optional<std::string_view> xdg_cache_home, std::string_view home);

// The name of a root's cache home: the root's path without its leading '/',
// each '/' written '-', each byte but letters, digits, '.' and '_' written %XX
// (so `-` is %2D and no two paths give one name: the encoding can be read back).
// "/work/my-app" is "work-my%2Dapp". Where that would pass NAME_MAX, the name is
// the escaped start of the root's last component, '+' (never in an encoded
// name, so the two kinds cannot meet), and the SHA-256 of the whole path in hex:
// two roots share it only if SHA-256 collides. `root` absolute, normalised, not /.
SBX_INLINE std::string tool_cache_name(std::string_view root);

// BASE/sbx/projects/NAME for a root.
SBX_INLINE std::string tool_cache_dir(std::string_view base, std::string_view root);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_RULES)

namespace sbx::detail {

SBX_INLINE std::string sha256_hex(std::string_view data) {
    static constexpr std::uint32_t k[64] = {
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
    std::uint32_t h[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    auto rotr = [](std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); };
    std::string msg(data);
    const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
    msg += static_cast<char>(0x80);
    while (msg.size() % 64 != 56) msg += '\0';
    for (int i = 7; i >= 0; --i) msg += static_cast<char>((bits >> (i * 8)) & 0xff);
    for (std::size_t block = 0; block < msg.size(); block += 64) {
        std::uint32_t w[64];
        for (int i = 0; i < 16; ++i) {
            const auto* p = reinterpret_cast<const unsigned char*>(msg.data() + block + static_cast<std::size_t>(i) * 4);
            w[i] = (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
        }
        for (int i = 16; i < 64; ++i) {
            const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
            const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16] + s0 + w[i - 7] + s1;
        }
        std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
        for (int i = 0; i < 64; ++i) {
            const std::uint32_t t1 = hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + k[i] + w[i];
            const std::uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
            hh = g;
            g = f;
            f = e;
            e = d + t1;
            d = c;
            c = b;
            b = a;
            a = t1 + t2;
        }
        const std::uint32_t add[8] = {a, b, c, d, e, f, g, hh};
        for (int i = 0; i < 8; ++i) h[i] += add[i];
    }
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (std::uint32_t v : h)
        for (int i = 28; i >= 0; i -= 4) out += hex[(v >> i) & 0xf];
    return out;
}

SBX_INLINE std::string cache_name_escape(std::string_view text) {
    static constexpr char hex[] = "0123456789ABCDEF";
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '/') out += '-';
        else if (cache_name_plain(c) && !(i == 0 && c == '.')) out += c;
        else {
            const auto u = static_cast<unsigned char>(c);
            out += '%';
            out += hex[u >> 4];
            out += hex[u & 0xf];
        }
    }
    return out;
}

}  // namespace sbx::detail

namespace sbx {

SBX_INLINE std::string tool_cache_base(std::optional<std::string_view> xdg_cache_home, std::string_view home) {
    if (xdg_cache_home && paths::is_absolute(*xdg_cache_home)) return paths::normalize(*xdg_cache_home);
    return paths::join(std::string(home), ".cache");
}

SBX_INLINE std::string tool_cache_name(std::string_view root) {
    const std::string full = detail::cache_name_escape(root.substr(1));
    if (full.size() <= kNameMax) return full;
    std::string start = detail::cache_name_escape(root.substr(root.rfind('/') + 1));
    if (start.size() > kLongNameKeep) {
        start.resize(kLongNameKeep);
        // Not half an escape: cut before a '%' in the last two bytes.
        if (auto pct = start.find('%', kLongNameKeep - 2); pct != std::string::npos) start.resize(pct);
    }
    return start + "+" + detail::sha256_hex(root);
}

SBX_INLINE std::string tool_cache_dir(std::string_view base, std::string_view root) {
    return paths::join(paths::join(std::string(base), "sbx/projects"), tool_cache_name(root));
}

}  // namespace sbx
#endif
