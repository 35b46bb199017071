// sbx/core/json.hpp - reading JSON with simdjson (and writing it: json_write.hpp).
//
// json::parse() returns a Document (simdjson's DOM) or an Error that names the
// line and column of the first byte that is wrong. simdjson validates, but does
// not say where; on failure a small scanner here walks the text again to find the
// place.
//
// This is the only header that includes simdjson, a compiled library of 31,000
// lines of header: link `simdjson` (sbx_dep does) when you include it, and
// include json_write.hpp alone where JSON is only written.
#pragma once

#include <simdjson.h>

#include <charconv>
#include <cstddef>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "sbx/core/error.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/json_write.hpp"

namespace sbx::json {

// Line and column (1-based, column counted in bytes) of a byte offset in text.
struct Location {
    std::size_t line = 1;
    std::size_t column = 1;
};

SBX_INLINE Location locate(std::string_view text, std::size_t offset);

namespace detail {

// A strict RFC 8259 scanner whose only job is to find where a document goes wrong.
// It accepts exactly what simdjson accepts for the documents sbx reads (one value,
// UTF-8, depth bounded); the first error wins.
class Scanner {
public:
    explicit Scanner(std::string_view text) : s_(text) {}

    struct Fault {
        std::size_t offset;
        std::string message;
    };

    std::optional<Fault> run();

private:
    static constexpr int kMaxDepth = 1024;  // simdjson's default

    std::string_view s_;
    std::size_t i_ = 0;
    std::optional<Fault> fault_;

    bool at_end() const { return i_ >= s_.size(); }
    char peek() const { return s_[i_]; }

    std::optional<Fault> fault(std::string msg) {
        fault_ = Fault{i_, std::move(msg)};
        return fault_;
    }
    bool fail(std::string msg) {
        fault_ = Fault{i_, std::move(msg)};
        return false;
    }

    void skip_ws() {
        while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++i_;
    }

    bool value(int depth);

    static std::string printable(char c);

    bool literal(std::string_view word);

    bool digits();

    bool number();

    bool number_syntax();

    bool hex4();

    bool string();

    bool array(int depth);

    bool object(int depth);
};

}  // namespace detail

// A parsed document. It owns simdjson's parser, whose tape the elements point into,
// so it is neither copied nor moved: hold it in place or behind a unique_ptr.
class Document {
public:
    Document() = default;
    Document(const Document&) = delete;
    Document& operator=(const Document&) = delete;

    simdjson::dom::element root() const { return root_; }

private:
    friend expected<std::unique_ptr<Document>> parse(std::string_view text);
    simdjson::dom::parser parser_;
    simdjson::dom::element root_;
};

// Upper bound on the size of any JSON document sbx reads (settings, plans).
inline constexpr std::size_t kMaxDocumentBytes = 16u << 20;

// Parses one JSON document. On failure the Error (INVALID_SETTINGS by default;
// callers re-code it) carries the line and column of the first wrong byte.
SBX_INLINE expected<std::unique_ptr<Document>> parse(std::string_view text);

// The same for the text of a file, `file` in its messages: what every strict
// reader of a JSON file (settings, check files, calls) starts with.
SBX_INLINE expected<std::unique_ptr<Document>> parse(std::string_view text, const std::string& file);

namespace detail {

// Reads a JSON string at text[i] (the opening quote), decoding its escapes, and
// returns the index past the closing quote. For locate_key(): `text` is valid JSON.
SBX_INLINE std::size_t read_string(std::string_view text, std::size_t i, std::string& out);

SBX_INLINE std::size_t skip_space(std::string_view text, std::size_t i);

// The index past the value that starts at text[i] (valid JSON).
SBX_INLINE std::size_t skip_value(std::string_view text, std::size_t i);

}  // namespace detail

// Where the value named by `key` starts in `text`, a valid JSON document, for
// messages: `key` is spelt as sbx's errors spell it (`expect[2].allowed`,
// `sandbox.network.allowedDomains[0]`). A member whose own name holds a `.` or
// `[` is found as long as it is a member there. When only a leading part of the
// key is there, the place of the deepest part found; nullopt when not even the
// first part is, or the key is empty.
SBX_INLINE std::optional<Location> locate_key(std::string_view text, std::string_view key);

// The name of a JSON value's type, as used in "expected a string, got a number".
SBX_INLINE std::string_view type_name(simdjson::dom::element_type t);

// An error (INVALID_SETTINGS) about the value `key` names in the JSON `text`,
// read from `file`: at its line and column when locate_key() finds it. What
// the strict readers of a file's values (check files, calls) give.
SBX_INLINE Error error_at_key(std::string_view text, std::string file, std::string key, std::string message);

// Why a string value is refused, or empty when it is not: it is empty, or it
// holds a control character (a command `line` may hold newlines and tabs).
SBX_INLINE std::string_view string_problem(std::string_view s, bool line = false);

}  // namespace sbx::json

// The definitions: inline in every program that includes this header, or
// compiled once in the program that asks for that (sbx/core/inline.hpp).
#if !defined(SBX_COMPILED_ENGINE) || defined(SBX_DEFINE_CORE)

namespace sbx::json {

SBX_INLINE Location locate(std::string_view text, std::size_t offset) {
    Location loc;
    if (offset > text.size()) offset = text.size();
    for (std::size_t i = 0; i < offset; ++i) {
        if (text[i] == '\n') {
            ++loc.line;
            loc.column = 1;
        } else {
            ++loc.column;
        }
    }
    return loc;
}

}  // namespace sbx::json

namespace sbx::json::detail {

SBX_INLINE std::optional<Scanner::Fault> Scanner::run() {
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") return fault("the text starts with a UTF-8 byte order mark, which JSON does not allow");
    skip_ws();
    if (at_end()) return fault("the document is empty; expected a JSON value");
    if (!value(0)) return fault_;
    skip_ws();
    if (!at_end()) return fault("unexpected text after the JSON value");
    return std::nullopt;
}

SBX_INLINE bool Scanner::value(int depth) {
    if (depth >= kMaxDepth) return fail("nesting is deeper than 1024 levels");
    if (at_end()) return fail("unexpected end of input; expected a JSON value");
    switch (peek()) {
        case '{': return object(depth + 1);
        case '[': return array(depth + 1);
        case '"': return string();
        case 't': return literal("true");
        case 'f': return literal("false");
        case 'n': return literal("null");
        default:
            if (peek() == '-' || (peek() >= '0' && peek() <= '9')) return number();
            if (peek() == '/') return fail("comments are not allowed in JSON");
            if (peek() == '\'') return fail("strings must use double quotes");
            return fail(std::string("unexpected character '") + printable(peek()) + "'; expected a JSON value");
    }
}

SBX_INLINE std::string Scanner::printable(char c) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f) return std::string(1, c);
    static constexpr char hex[] = "0123456789abcdef";
    return std::string("\\x") + hex[u >> 4] + hex[u & 15];
}

SBX_INLINE bool Scanner::literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return fail("invalid literal; expected " + std::string(word));
    i_ += word.size();
    return true;
}

SBX_INLINE bool Scanner::digits() {
    if (at_end() || peek() < '0' || peek() > '9') return fail("invalid number; expected a digit");
    while (!at_end() && peek() >= '0' && peek() <= '9') ++i_;
    return true;
}

SBX_INLINE bool Scanner::number() {
    const std::size_t start = i_;
    if (!number_syntax()) return false;
    // simdjson refuses what does not fit a 64-bit integer or a finite double.
    const std::string n(s_.substr(start, i_ - start));
    const bool integral = n.find_first_of(".eE") == std::string::npos;
    errno = 0;
    if (integral) {
        if (n[0] == '-') (void)std::strtoll(n.c_str(), nullptr, 10);
        else (void)std::strtoull(n.c_str(), nullptr, 10);
    } else {
        const double d = std::strtod(n.c_str(), nullptr);
        if (std::isinf(d)) errno = ERANGE;
        else errno = 0;  // underflow to zero is accepted
    }
    if (errno == ERANGE) {
        i_ = start;
        return fail("number out of range");
    }
    return true;
}

SBX_INLINE bool Scanner::number_syntax() {
    if (peek() == '-') ++i_;
    if (at_end()) return fail("invalid number; expected a digit");
    if (peek() == '0') {
        ++i_;
        if (!at_end() && peek() >= '0' && peek() <= '9') return fail("invalid number; leading zeros are not allowed");
    } else if (!digits()) {
        return false;
    }
    if (!at_end() && peek() == '.') {
        ++i_;
        if (!digits()) return false;
    }
    if (!at_end() && (peek() == 'e' || peek() == 'E')) {
        ++i_;
        if (!at_end() && (peek() == '+' || peek() == '-')) ++i_;
        if (!digits()) return false;
    }
    return true;
}

SBX_INLINE bool Scanner::hex4() {
    for (int k = 0; k < 4; ++k, ++i_) {
        if (at_end() || !std::isxdigit(static_cast<unsigned char>(peek())))
            return fail("invalid \\u escape; expected four hexadecimal digits");
    }
    return true;
}

SBX_INLINE bool Scanner::string() {
    ++i_;  // opening quote
    for (;;) {
        if (at_end()) return fail("unterminated string");
        auto c = static_cast<unsigned char>(peek());
        if (c == '"') {
            ++i_;
            return true;
        }
        if (c < 0x20) return fail("control character in a string; escape it");
        if (c == '\\') {
            ++i_;
            if (at_end()) return fail("unterminated string");
            char e = peek();
            if (e == 'u') {
                ++i_;
                std::size_t start = i_;
                if (!hex4()) return false;
                unsigned v = static_cast<unsigned>(std::stoul(std::string(s_.substr(start, 4)), nullptr, 16));
                if (v >= 0xD800 && v <= 0xDBFF) {
                    if (s_.substr(i_, 2) != "\\u") return fail("unpaired UTF-16 surrogate in a \\u escape");
                    i_ += 2;
                    std::size_t low = i_;
                    if (!hex4()) return false;
                    unsigned w = static_cast<unsigned>(std::stoul(std::string(s_.substr(low, 4)), nullptr, 16));
                    if (w < 0xDC00 || w > 0xDFFF) {
                        i_ = low;
                        return fail("unpaired UTF-16 surrogate in a \\u escape");
                    }
                } else if (v >= 0xDC00 && v <= 0xDFFF) {
                    i_ = start;
                    return fail("unpaired UTF-16 surrogate in a \\u escape");
                }
                continue;
            }
            if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos)
                return fail(std::string("invalid escape '\\") + printable(e) + "'");
            ++i_;
            continue;
        }
        std::size_t n = utf8_length(s_, i_);
        if (n == 0) return fail("invalid UTF-8 in a string");
        i_ += n;
    }
}

SBX_INLINE bool Scanner::array(int depth) {
    ++i_;
    skip_ws();
    if (!at_end() && peek() == ']') {
        ++i_;
        return true;
    }
    for (;;) {
        skip_ws();
        if (!at_end() && peek() == ']') return fail("trailing comma before ']'");
        if (!value(depth)) return false;
        skip_ws();
        if (at_end()) return fail("unexpected end of input; expected ',' or ']'");
        if (peek() == ',') {
            ++i_;
            continue;
        }
        if (peek() == ']') {
            ++i_;
            return true;
        }
        return fail("expected ',' or ']' after an array element");
    }
}

SBX_INLINE bool Scanner::object(int depth) {
    ++i_;
    skip_ws();
    if (!at_end() && peek() == '}') {
        ++i_;
        return true;
    }
    for (;;) {
        skip_ws();
        if (at_end()) return fail("unexpected end of input; expected a key");
        if (peek() == '}') return fail("trailing comma before '}'");
        if (peek() != '"') return fail("expected a double-quoted key");
        if (!string()) return false;
        skip_ws();
        if (at_end() || peek() != ':') return fail("expected ':' after a key");
        ++i_;
        skip_ws();
        if (!value(depth)) return false;
        skip_ws();
        if (at_end()) return fail("unexpected end of input; expected ',' or '}'");
        if (peek() == ',') {
            ++i_;
            continue;
        }
        if (peek() == '}') {
            ++i_;
            return true;
        }
        return fail("expected ',' or '}' after an object member");
    }
}

}  // namespace sbx::json::detail

namespace sbx::json {

SBX_INLINE expected<std::unique_ptr<Document>> parse(std::string_view text) {
    if (text.size() > kMaxDocumentBytes) {
        return fail(Errc::invalid_settings,
                    "the document is " + std::to_string(text.size()) + " bytes; the limit is " +
                        std::to_string(kMaxDocumentBytes));
    }
    auto doc = std::make_unique<Document>();
    simdjson::padded_string padded(text);
    auto err = doc->parser_.parse(padded).get(doc->root_);
    // simdjson's DOM keeps strings on its own tape, so `padded` may go now.
    if (!err) {
        return doc;
    }
    auto fault = detail::Scanner(text).run();
    if (!fault) {
        // The scanner found nothing: a limit of simdjson's (depth, number range).
        return fail(Errc::invalid_settings, std::string("invalid JSON: ") + simdjson::error_message(err));
    }
    Location loc = locate(text, fault->offset);
    return fail(Error(Errc::invalid_settings, "invalid JSON: " + fault->message).at(loc.line, loc.column));
}

SBX_INLINE expected<std::unique_ptr<Document>> parse(std::string_view text, const std::string& file) {
    auto doc = parse(text);
    if (!doc) return fail(std::move(doc.error()).in_file(file));
    return doc;
}

}  // namespace sbx::json

namespace sbx::json::detail {

SBX_INLINE std::size_t read_string(std::string_view text, std::size_t i, std::string& out) {
    out.clear();
    ++i;
    auto put = [&](unsigned cp) {
        if (cp < 0x80) {
            out += static_cast<char>(cp);
        } else if (cp < 0x800) {
            out += static_cast<char>(0xC0 | (cp >> 6));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            out += static_cast<char>(0xE0 | (cp >> 12));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            out += static_cast<char>(0xF0 | (cp >> 18));
            out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            out += static_cast<char>(0x80 | (cp & 0x3F));
        }
    };
    auto hex4 = [&](std::size_t at) {
        unsigned v = 0;
        for (std::size_t k = at; k < at + 4 && k < text.size(); ++k) {
            const char c = text[k];
            v = v * 16 + static_cast<unsigned>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
        }
        return v;
    };
    while (i < text.size() && text[i] != '"') {
        if (text[i] != '\\') {
            out += text[i++];
            continue;
        }
        const char e = i + 1 < text.size() ? text[i + 1] : '"';
        i += 2;
        switch (e) {
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                unsigned cp = hex4(i);
                i += 4;
                if (cp >= 0xD800 && cp <= 0xDBFF && text.substr(i, 2) == "\\u") {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (hex4(i + 2) - 0xDC00);
                    i += 6;
                }
                put(cp);
                break;
            }
            default: out += e;
        }
    }
    return i + 1;
}

SBX_INLINE std::size_t skip_space(std::string_view text, std::size_t i) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r')) ++i;
    return i;
}

SBX_INLINE std::size_t skip_value(std::string_view text, std::size_t i) {
    if (i >= text.size()) return i;
    if (text[i] == '"') {
        for (++i; i < text.size() && text[i] != '"'; ++i)
            if (text[i] == '\\') ++i;
        return i + 1;
    }
    if (text[i] != '{' && text[i] != '[') {
        while (i < text.size() && std::string_view(",]} \t\n\r").find(text[i]) == std::string_view::npos) ++i;
        return i;
    }
    std::size_t depth = 0;
    for (; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '"') {
            i = skip_value(text, i) - 1;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            if (--depth == 0) return i + 1;
        }
    }
    return i;
}

}  // namespace sbx::json::detail

namespace sbx::json {

SBX_INLINE std::optional<Location> locate_key(std::string_view text, std::string_view key) {
    std::optional<Location> found;
    std::size_t at = detail::skip_space(text, 0);
    std::string name;
    while (!key.empty() && at < text.size()) {
        std::size_t next = std::string_view::npos;
        std::size_t used = 0;
        if (text[at] == '{') {
            if (key.front() == '.') key.remove_prefix(1);
            // The member whose name is the longest whole leading part of the key.
            std::size_t i = detail::skip_space(text, at + 1);
            while (i < text.size() && text[i] == '"') {
                i = detail::skip_space(text, detail::read_string(text, i, name));
                const std::size_t value = detail::skip_space(text, i + 1);  // past ':'
                const bool whole = key.substr(0, name.size()) == name &&
                                   (key.size() == name.size() || key[name.size()] == '.' || key[name.size()] == '[');
                if (whole && (next == std::string_view::npos || name.size() > used)) {
                    next = value;
                    used = name.size();
                }
                i = detail::skip_space(text, detail::skip_value(text, value));
                if (i < text.size() && text[i] == ',') i = detail::skip_space(text, i + 1);
            }
        } else if (text[at] == '[' && key.front() == '[') {
            const std::size_t close = key.find(']');
            std::size_t index = 0;
            const auto digits = key.substr(1, close == std::string_view::npos ? 0 : close - 1);
            const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
            if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size()) break;
            std::size_t i = detail::skip_space(text, at + 1);
            for (std::size_t n = 0; i < text.size() && text[i] != ']'; ++n) {
                if (n == index) {
                    next = i;
                    break;
                }
                i = detail::skip_space(text, detail::skip_value(text, i));
                if (i < text.size() && text[i] == ',') i = detail::skip_space(text, i + 1);
            }
            used = close + 1;
        }
        if (next == std::string_view::npos) break;
        at = next;
        key.remove_prefix(used);
        found = locate(text, at);
    }
    return found;
}

SBX_INLINE Error error_at_key(std::string_view text, std::string file, std::string key, std::string message) {
    Error e = Error(Errc::invalid_settings, std::move(message)).in_file(std::move(file));
    if (auto where = locate_key(text, key)) {
        e.line = where->line;
        e.column = where->column;
    }
    return std::move(e).at_key(std::move(key));
}

SBX_INLINE std::string_view string_problem(std::string_view s, bool line) {
    if (s.empty()) return "an empty string";
    for (unsigned char c : s)
        if ((c < 0x20 || c == 0x7f) && !(line && (c == '\n' || c == '\t'))) return "a control character in the string";
    return {};
}

SBX_INLINE std::string_view type_name(simdjson::dom::element_type t) {
    using T = simdjson::dom::element_type;
    switch (t) {
        case T::ARRAY: return "an array";
        case T::OBJECT: return "an object";
        case T::INT64:
        case T::UINT64:
        case T::DOUBLE: return "a number";
        case T::STRING: return "a string";
        case T::BOOL: return "a boolean";
        case T::NULL_VALUE: return "null";
    }
    return "an unknown value";
}

}  // namespace sbx::json
#endif
