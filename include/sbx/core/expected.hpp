// sbx/core/expected.hpp - sbx::expected<T>, a T or an sbx::Error.
//
// The only header that names tl::expected (Debian's libexpected-dev). std::expected
// is C++23, and sbx is C++20: Meson 1.0, the oldest it supports, knows no later
// standard, and GCC 12 and Clang 14 ship no <expected>.
//
// SBX_TRY(e) is the one way an error travels up: it evaluates e (an expected of
// anything) once, and returns its error from the enclosing function when there is
// one. An error that needs more said about it (a file, a key, a cause) is written
// out in full instead.
#pragma once

#include <tl/expected.hpp>

#include "sbx/core/error.hpp"
#include "sbx/core/inline.hpp"

namespace sbx {

template <class T>
using expected = tl::expected<T, Error>;

// `return sbx::fail(Errc::invalid_settings, "...")` in a function returning expected<T>.
inline tl::unexpected<Error> fail(Error e) { return tl::unexpected<Error>(std::move(e)); }
SBX_INLINE tl::unexpected<Error> fail(Errc code, std::string message);

}  // namespace sbx

// A statement, so that `if (c) SBX_TRY(x); else ...` means what it says.
#define SBX_TRY(...)                                                                     \
    do {                                                                                  \
        if (auto&& sbx_try_result_ = (__VA_ARGS__); !sbx_try_result_)                    \
            return ::sbx::fail(sbx_try_result_.error());                                  \
    } while (false)

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_CORE)

namespace sbx {

SBX_INLINE tl::unexpected<Error> fail(Errc code, std::string message) {
    return tl::unexpected<Error>(Error(code, std::move(message)));
}

}  // namespace sbx
#endif
