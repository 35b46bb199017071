// sbx/core/json_write.hpp - writing JSON with correct escaping.
//
// json::Writer builds compact JSON text; every string goes through json::quote(),
// which escapes what JSON requires and replaces bytes that are not UTF-8 with
// U+FFFD (so its output is always valid JSON). No simdjson here: what only
// writes JSON includes this header alone (reading is json.hpp's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "sbx/core/inline.hpp"

namespace sbx::json {

namespace detail {

// Length of the well-formed UTF-8 sequence starting at s[i], or 0 when the bytes
// there are not UTF-8 (overlong forms, surrogates and values past U+10FFFF included).
SBX_INLINE std::size_t utf8_length(std::string_view s, std::size_t i);

// Whether every byte of s belongs to a well-formed UTF-8 sequence.
SBX_INLINE bool valid_utf8(std::string_view s);

}  // namespace detail

// `s` as a JSON string literal, quotes included. Bytes that are not UTF-8 become
// U+FFFD, so the result is always valid JSON.
SBX_INLINE std::string quote(std::string_view s);

// Builds compact JSON text. The caller keeps the nesting right; commas are placed
// by the writer. Usage: w.begin_object().key("a").value(true).end_object().
class Writer {
public:
    Writer& begin_object() { return open('{'); }
    Writer& end_object() { return close('}'); }
    Writer& begin_array() { return open('['); }
    Writer& end_array() { return close(']'); }

    Writer& key(std::string_view k);
    Writer& value(std::string_view v) { return raw(quote(v)); }
    Writer& value(const char* v) { return raw(quote(v)); }
    Writer& value(const std::string& v) { return raw(quote(v)); }
    Writer& value(bool v) { return raw(v ? "true" : "false"); }
    Writer& value(std::int64_t v) { return raw(std::to_string(v)); }
    Writer& value(std::uint64_t v) { return raw(std::to_string(v)); }
    Writer& value(int v) { return raw(std::to_string(v)); }
    Writer& null() { return raw("null"); }

    const std::string& str() const { return out_; }
    std::string take() { return std::move(out_); }

private:
    std::string out_;
    bool need_comma_ = false;
    bool after_key_ = false;

    void comma();
    Writer& raw(std::string_view text);
    Writer& open(char c);
    Writer& close(char c);
};

}  // namespace sbx::json

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_CORE)

namespace sbx::json::detail {

SBX_INLINE std::size_t utf8_length(std::string_view s, std::size_t i) {
    const std::size_t left = s.size() - i;
    auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
    auto cont = [&](std::size_t k) { return k < left && (b(k) & 0xC0) == 0x80; };
    const unsigned char c = b(0);
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        if (!cont(1) || !cont(2)) return 0;
        if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
        if (c == 0xED && b(1) >= 0xA0) return 0;  // UTF-16 surrogate
        return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        if (!cont(1) || !cont(2) || !cont(3)) return 0;
        if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
        if (c == 0xF4 && b(1) >= 0x90) return 0;  // past U+10FFFF
        return 4;
    }
    return 0;
}

SBX_INLINE bool valid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const std::size_t n = utf8_length(s, i);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

}  // namespace sbx::json::detail

namespace sbx::json {

SBX_INLINE std::string quote(std::string_view s) {
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size() + 2);
    out += '"';
    for (std::size_t i = 0; i < s.size();) {
        auto c = static_cast<unsigned char>(s[i]);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += static_cast<char>(c);
            ++i;
        } else if (c == '\n') {
            out += "\\n";
            ++i;
        } else if (c == '\t') {
            out += "\\t";
            ++i;
        } else if (c == '\r') {
            out += "\\r";
            ++i;
        } else if (c < 0x20 || c == 0x7f) {
            out += "\\u00";
            out += hex[c >> 4];
            out += hex[c & 15];
            ++i;
        } else if (c < 0x80) {
            out += static_cast<char>(c);
            ++i;
        } else {
            const std::size_t n = detail::utf8_length(s, i);
            if (n == 0) {
                out += "\xEF\xBF\xBD";
                ++i;
            } else {
                out.append(s.substr(i, n));
                i += n;
            }
        }
    }
    out += '"';
    return out;
}

SBX_INLINE Writer& Writer::key(std::string_view k) {
    comma();
    out_ += quote(k);
    out_ += ':';
    after_key_ = true;
    return *this;
}

SBX_INLINE void Writer::comma() {
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (need_comma_) out_ += ',';
}

SBX_INLINE Writer& Writer::raw(std::string_view text) {
    comma();
    out_ += text;
    need_comma_ = true;
    return *this;
}

SBX_INLINE Writer& Writer::open(char c) {
    comma();
    out_ += c;
    need_comma_ = false;
    return *this;
}

SBX_INLINE Writer& Writer::close(char c) {
    out_ += c;
    need_comma_ = true;
    after_key_ = false;
    return *this;
}

}  // namespace sbx::json
#endif
