// sbx/core/paths.hpp - absolute, normalised paths, made once when a rule is made.
//
// A rule's path is written absolute, as `~/...` (the home directory), or relative
// to a base directory (the project of the settings file it came from). resolve()
// turns it into a clean absolute path: one `/` between components, no `.`, `..`
// folded lexically, no trailing `/`. After that, code compares clean values with
// at_or_under(), which matches at component boundaries only (`/a/b` is under `/a`,
// `/ab` is not). Wildcards pass through untouched; see glob.hpp.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"

namespace sbx::paths {

inline bool is_absolute(std::string_view p) { return !p.empty() && p.front() == '/'; }

// The components of a path, without empty ones: "/a//b/" -> {"a", "b"}.
SBX_INLINE std::vector<std::string_view> components(std::string_view p);

namespace detail {

// Appends the components of `p` to `out`, a clean absolute path or "" (for
// `/`), folding `.` and `..` as it goes. One pass, no allocation but `out`'s.
SBX_INLINE void append_clean(std::string& out, std::string_view p);

}  // namespace detail

// Folds an absolute path: "//a/./b/../c/" -> "/a/c". `..` above `/` stays at `/`.
SBX_INLINE std::string normalize(std::string_view abs);

// `base` joined with a relative path `rel`, normalised.
SBX_INLINE std::string join(std::string_view base, std::string_view rel);

// True when `path` is `base` or lies below it. Both must be normalised.
SBX_INLINE bool at_or_under(std::string_view path, std::string_view base);

// The directory that holds `p` ("/a/b" -> "/a", "/a" -> "/", "/" -> "/").
SBX_INLINE std::string parent(std::string_view p);

// Where relative paths and `~/` lead, for one source of rules.
struct Base {
    std::string home;  // absolute, normalised
    std::string dir;   // absolute, normalised: the project (or directory) of the source
};

// Rejects bytes that never belong in a rule: NUL and other control characters.
SBX_INLINE expected<void> check_text(std::string_view p);

// The clean absolute path a rule's path names: absolute as written, `~` or `~/...`
// under base.home, anything else under base.dir. `~user` is refused (it would
// depend on the password database), as is an empty path.
SBX_INLINE expected<std::string> resolve(std::string_view p, const Base& base);

}  // namespace sbx::paths

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_CORE)

namespace sbx::paths {

SBX_INLINE std::vector<std::string_view> components(std::string_view p) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < p.size()) {
        while (i < p.size() && p[i] == '/') ++i;
        std::size_t j = i;
        while (j < p.size() && p[j] != '/') ++j;
        if (j > i) out.push_back(p.substr(i, j - i));
        i = j;
    }
    return out;
}

}  // namespace sbx::paths

namespace sbx::paths::detail {

SBX_INLINE void append_clean(std::string& out, std::string_view p) {
    std::size_t i = 0;
    while (i < p.size()) {
        while (i < p.size() && p[i] == '/') ++i;
        std::size_t j = i;
        while (j < p.size() && p[j] != '/') ++j;
        const std::string_view c = p.substr(i, j - i);
        i = j;
        if (c.empty() || c == ".") continue;
        if (c == "..") {
            const auto pos = out.rfind('/');
            out.resize(pos == std::string::npos ? 0 : pos);
            continue;
        }
        out += '/';
        out += c;
    }
}

}  // namespace sbx::paths::detail

namespace sbx::paths {

SBX_INLINE std::string normalize(std::string_view abs) {
    std::string out;
    out.reserve(abs.size());
    detail::append_clean(out, abs);
    if (out.empty()) out.push_back('/');
    return out;
}

SBX_INLINE std::string join(std::string_view base, std::string_view rel) {
    std::string out;
    out.reserve(base.size() + rel.size() + 1);
    detail::append_clean(out, base);
    detail::append_clean(out, rel);
    if (out.empty()) out.push_back('/');
    return out;
}

SBX_INLINE bool at_or_under(std::string_view path, std::string_view base) {
    if (base == "/") return is_absolute(path);
    if (path.size() < base.size() || path.substr(0, base.size()) != base) return false;
    return path.size() == base.size() || path[base.size()] == '/';
}

SBX_INLINE std::string parent(std::string_view p) {
    auto pos = p.rfind('/');
    if (pos == std::string_view::npos || pos == 0) return "/";
    return std::string(p.substr(0, pos));
}

SBX_INLINE expected<void> check_text(std::string_view p) {
    for (unsigned char c : p) {
        if (c < 0x20 || c == 0x7f)
            return fail(Errc::invalid_settings, "a path holds a control character; paths in rules may not");
    }
    return {};
}

SBX_INLINE expected<std::string> resolve(std::string_view p, const Base& base) {
    if (p.empty()) return fail(Errc::invalid_settings, "an empty path");
    SBX_TRY(check_text(p));
    if (p == "~") return normalize(base.home);
    if (p.substr(0, 2) == "~/") return join(base.home, p.substr(2));
    if (p.front() == '~')
        return fail(Errc::invalid_settings, "'" + std::string(p) + "': only ~/ (your home directory) is understood, not ~user");
    if (is_absolute(p)) return normalize(p);
    return join(base.dir, p);
}

}  // namespace sbx::paths
#endif
