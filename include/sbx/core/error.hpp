// sbx/core/error.hpp - what went wrong, as a value.
//
// Every engine function that can fail returns sbx::expected<T> (see expected.hpp)
// whose error is an sbx::Error: a code, one sentence, and where it happened (the
// file, the key path inside it, the line and the column in bytes), with an
// optional cause. Only a program's main turns one into text and an exit status.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "sbx/core/inline.hpp"

namespace sbx {

// The codes a caller can branch on. Names follow the contract in the docs.
enum class Errc {
    invalid_settings,     // a settings file is malformed or has a wrong type
    invalid_plan,         // a plan document is malformed or inconsistent
    stale_plan,           // the disk changed since the plan was made
    invalid_argument,     // a caller handed the engine a value it cannot use
    io_error,             // a file could not be read (edges only)
    unavailable,          // the sandbox cannot run; cause says why
    sandbox_unavailable,  // the precise reason the sandbox cannot run
    internal,             // a broken invariant inside sbx itself
};

// The spelling used in messages and JSON: INVALID_SETTINGS, UNAVAILABLE, ...
constexpr std::string_view errc_name(Errc code) noexcept {
    switch (code) {
        case Errc::invalid_settings: return "INVALID_SETTINGS";
        case Errc::invalid_plan: return "INVALID_PLAN";
        case Errc::stale_plan: return "STALE_PLAN";
        case Errc::invalid_argument: return "INVALID_ARGUMENT";
        case Errc::io_error: return "IO_ERROR";
        case Errc::unavailable: return "UNAVAILABLE";
        case Errc::sandbox_unavailable: return "SANDBOX_UNAVAILABLE";
        case Errc::internal: return "INTERNAL";
    }
    return "INTERNAL";
}

struct Error {
    Errc code = Errc::internal;
    std::string message;  // one sentence, no trailing period, no location
    std::string file;     // the file it is about, if any
    std::string key;      // the key path inside the file, e.g. sandbox.network.allowedDomains[2]
    std::size_t line = 0;    // 1-based; 0 when unknown
    std::size_t column = 0;  // 1-based, in bytes; 0 when unknown
    std::shared_ptr<const Error> cause;

    Error() = default;
    Error(Errc c, std::string msg) : code(c), message(std::move(msg)) {}

    Error&& in_file(std::string f) && {
        file = std::move(f);
        return std::move(*this);
    }
    Error&& at_key(std::string k) && {
        key = std::move(k);
        return std::move(*this);
    }
    Error&& at(std::size_t l, std::size_t c) &&;
    Error&& caused_by(Error inner) && {
        cause = std::make_shared<const Error>(std::move(inner));
        return std::move(*this);
    }
};

// "FILE:LINE:COLUMN: KEY: MESSAGE", leaving out the parts that are unknown,
// then ": caused by ..." for each cause.
SBX_INLINE std::string to_string(const Error& e);

}  // namespace sbx

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_CORE)

namespace sbx {

SBX_INLINE Error&& Error::at(std::size_t l, std::size_t c) && {
    line = l;
    column = c;
    return std::move(*this);
}

SBX_INLINE std::string to_string(const Error& e) {
    std::string out;
    if (!e.file.empty()) {
        out += e.file;
        if (e.line != 0) {
            out += ':' + std::to_string(e.line);
            if (e.column != 0) out += ':' + std::to_string(e.column);
        }
        out += ": ";
    }
    if (!e.key.empty()) out += e.key + ": ";
    out += e.message;
    for (const Error* c = e.cause.get(); c != nullptr; c = c->cause.get()) {
        out += " (caused by ";
        out += errc_name(c->code);
        out += ": ";
        if (!c->file.empty()) out += c->file + ": ";
        out += c->message;
        out += ')';
    }
    return out;
}

}  // namespace sbx
#endif
