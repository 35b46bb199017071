// sbx/core/expected.hpp - sbx::expected<T>, a T or an sbx::Error.
//
// The only header that names tl::expected (Debian's libexpected-dev). std::expected
// is not usable with the toolchains sbx supports (see docs/STYLE notes).
#pragma once

#include <tl/expected.hpp>

#include "sbx/core/error.hpp"

namespace sbx {

template <class T>
using expected = tl::expected<T, Error>;

// `return sbx::fail(Errc::invalid_settings, "...")` in a function returning expected<T>.
inline tl::unexpected<Error> fail(Error e) { return tl::unexpected<Error>(std::move(e)); }
inline tl::unexpected<Error> fail(Errc code, std::string message) {
    return tl::unexpected<Error>(Error(code, std::move(message)));
}

}  // namespace sbx
