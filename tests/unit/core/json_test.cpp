// json.hpp: parsing with located errors, quoting, and the compact writer.
#include "sbx/core/json.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace {

using sbx::json::parse;
using sbx::json::quote;

// A byte string from a literal that may hold NUL bytes.
template <std::size_t N>
std::string bytes(const char (&s)[N]) {
    return std::string(s, N - 1);
}

// The string value of a document that must parse to a JSON string.
std::string parsed_string(std::string_view text) {
    auto doc = parse(text);
    REQUIRE_MESSAGE(doc.has_value(), "does not parse: " << text);
    std::string_view out;
    REQUIRE(!(*doc)->root().get(out));
    return std::string(out);
}

// True when `s` is well-formed UTF-8 (checked with simdjson's own validator).
bool valid_utf8(std::string_view s) { return simdjson::validate_utf8(s.data(), s.size()); }

// A small deterministic generator, so failures reproduce.
struct Lcg {
    std::uint64_t state;
    std::uint32_t next() {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        return static_cast<std::uint32_t>(state >> 33);
    }
};

struct BadCase {
    const char* name;
    std::string text;
    std::size_t line;
    std::size_t column;
    const char* message_part;  // a fragment the message must hold ("": location only)
};

}  // namespace

TEST_CASE("json: locate counts lines and byte columns from 1") {
    using sbx::json::locate;
    const std::string text = "ab\ncd\n\xc3\xa9x";
    auto at = [&](std::size_t off) {
        auto l = locate(text, off);
        return std::pair<std::size_t, std::size_t>(l.line, l.column);
    };
    CHECK(at(0) == std::pair<std::size_t, std::size_t>(1, 1));
    CHECK(at(2) == std::pair<std::size_t, std::size_t>(1, 3));  // the '\n' itself is on line 1
    CHECK(at(3) == std::pair<std::size_t, std::size_t>(2, 1));
    CHECK(at(6) == std::pair<std::size_t, std::size_t>(3, 1));
    CHECK(at(8) == std::pair<std::size_t, std::size_t>(3, 3));  // 'x', after a two-byte character
    CHECK(at(999) == at(text.size()));                          // clamped to the end
}

TEST_CASE("json: parse accepts valid documents and the values read back") {
    const std::string text = R"({
        "s": "x\u00e9\ud83d\ude00\n\"\\\/",
        "i": -42,
        "u": 18446744073709551615,
        "d": 2.5e-3,
        "t": true,
        "f": false,
        "n": null,
        "a": [1, [], {}, "two"],
        "o": {"k": {"": 0}}
    })";
    auto doc = parse(text);
    REQUIRE(doc.has_value());
    auto root = (*doc)->root();
    REQUIRE(root.type() == simdjson::dom::element_type::OBJECT);

    std::string_view s;
    REQUIRE(!root["s"].get(s));
    CHECK(s == "x\xc3\xa9\xf0\x9f\x98\x80\n\"\\/");
    std::int64_t i = 0;
    REQUIRE(!root["i"].get(i));
    CHECK(i == -42);
    std::uint64_t u = 0;
    REQUIRE(!root["u"].get(u));
    CHECK(u == std::numeric_limits<std::uint64_t>::max());
    double d = 0;
    REQUIRE(!root["d"].get(d));
    CHECK(d == doctest::Approx(0.0025));
    bool t = false, f = true;
    REQUIRE(!root["t"].get(t));
    REQUIRE(!root["f"].get(f));
    CHECK(t);
    CHECK_FALSE(f);
    CHECK(root["n"].is_null());
    simdjson::dom::array a;
    REQUIRE(!root["a"].get(a));
    CHECK(a.size() == 4);
    std::int64_t zero = 1;
    REQUIRE(!root.at_pointer("/o/k/").get(zero));
    CHECK(zero == 0);
}

TEST_CASE("json: parse accepts every kind of value at the top") {
    for (std::string_view text : {"0", "-0", "1.5E+2", "\"x\"", "true", "false", "null", "[]", "{}",
                                  " \t\r\n{} \t\r\n", "\"\x7f\"", "[\"\\u0000\"]"}) {
        CAPTURE(text);
        CHECK(parse(text).has_value());
    }
}

TEST_CASE("json: the parsed document owns its strings") {
    std::unique_ptr<sbx::json::Document> doc;
    {
        std::string text = R"(["a long enough string that no small-string buffer holds it"])";
        auto parsed = parse(text);
        REQUIRE(parsed.has_value());
        doc = std::move(*parsed);
        text.assign(text.size(), 'X');  // the source text is gone
    }
    std::string_view s;
    REQUIRE(!doc->root().at(0).get(s));
    CHECK(s == "a long enough string that no small-string buffer holds it");
}

// Over 80 lines: a table, one row a malformed document.
TEST_CASE("json: malformed documents name the line and byte column of the first wrong byte") {
    const std::vector<BadCase> cases = {
        // truncation
        {"truncated object after a value", R"({"a": 1)", 1, 8, "unexpected end of input"},
        {"truncated object after a colon", R"({"a":)", 1, 6, "unexpected end of input"},
        {"truncated object after a key", R"({"a")", 1, 5, "expected ':'"},
        {"truncated object after '{'", "{", 1, 2, "expected a key"},
        {"truncated array", "[1,\n 2", 2, 3, "unexpected end of input"},
        {"unterminated string", "{\"a\": \"xy", 1, 10, "unterminated string"},
        {"unterminated string after a backslash", "[\"x\\", 1, 5, "unterminated string"},
        // trailing commas
        {"trailing comma in an object", "{\n  \"a\": 1,\n}", 3, 1, "trailing comma"},
        {"trailing comma in an array", "[1, 2,]", 1, 7, "trailing comma"},
        {"trailing comma with CRLF", "{\r\n\"a\":1,\r\n}", 3, 1, "trailing comma"},
        // comments
        {"comment as an array element", "[1, /* x */ 2]", 1, 5, "comments are not allowed"},
        {"comment before the document", "// x\n{}", 1, 1, "comments are not allowed"},
        {"comment in place of a key", "{\n  // note\n  \"a\": 1\n}", 2, 3, ""},  // either message will do
        {"comment after the document", "{} // x", 1, 4, "unexpected text after"},
        // single quotes
        {"single-quoted value", R"(["a", 'b'])", 1, 7, "double quotes"},
        {"single-quoted key", "{'a': 1}", 1, 2, ""},  // either message will do
        // escapes
        {"unknown escape", R"(["a\x"])", 1, 5, "invalid escape '\\x'"},
        {"upper-case \\U", R"(["\U0041"])", 1, 4, "invalid escape"},
        {"escaped single quote", R"(["\'"])", 1, 4, "invalid escape"},
        {"short \\u escape", R"(["\u12"])", 1, 7, "four hexadecimal digits"},
        {"non-hex \\u escape", R"(["\u00g0"])", 1, 7, "four hexadecimal digits"},
        // control characters in strings
        {"tab in a string", "[\"a\tb\"]", 1, 4, "control character"},
        {"newline in a string", "[\"a\nb\"]", 1, 4, "control character"},
        {"NUL in a string", bytes("[\"a\0\"]"), 1, 4, "control character"},
        {"0x1f in a string", "{\"k\":\n \"\x1f\"}", 2, 3, "control character"},
        // invalid UTF-8
        {"0xff in a string", "[\"ab\xff\"]", 1, 5, "invalid UTF-8"},
        {"lone continuation byte", "[\"\x80\"]", 1, 3, "invalid UTF-8"},
        {"overlong '/'", "[\"\xc0\xaf\"]", 1, 3, "invalid UTF-8"},
        {"overlong three-byte form", "[\"\xe0\x80\xaf\"]", 1, 3, "invalid UTF-8"},
        {"UTF-8 encoded surrogate", "[\"\xed\xa0\x80\"]", 1, 3, "invalid UTF-8"},
        {"past U+10FFFF", "[\"\xf4\x90\x80\x80\"]", 1, 3, "invalid UTF-8"},
        {"truncated sequence", "[\"\xe2\x82\"]", 1, 3, "invalid UTF-8"},
        {"column counts bytes, not characters", "{\n\"\xc3\xa9\": \"\xff\"}", 2, 8, "invalid UTF-8"},
        {"0xff outside a string", "\xff", 1, 1, "unexpected character '\\xff'"},
        {"byte-order mark", "\xef\xbb\xbf{}", 1, 1, "byte order mark"},
        // surrogates in \u escapes
        {"lone high surrogate", R"(["\ud800"])", 1, 9, "unpaired UTF-16 surrogate"},
        {"lone low surrogate", R"(["\udc00"])", 1, 5, "unpaired UTF-16 surrogate"},
        {"high surrogate then a letter", R"(["\ud800x"])", 1, 9, "unpaired UTF-16 surrogate"},
        {"high surrogate then a non-surrogate", R"(["\ud800\u0041"])", 1, 11, "unpaired UTF-16 surrogate"},
        {"two high surrogates", R"(["\uD800\uDBFF"])", 1, 11, "unpaired UTF-16 surrogate"},
        // numbers
        {"leading zero", "[01]", 1, 3, "leading zeros"},
        {"negative leading zero", "[-01]", 1, 4, "leading zeros"},
        {"leading zeros later on", "[1, 007]", 1, 6, "leading zeros"},
        {"top-level leading zero", "00", 1, 2, "leading zeros"},
        {"fraction without digits", "[1.]", 1, 4, "expected a digit"},
        {"exponent without digits", "[1e+]", 1, 5, "expected a digit"},
        {"bare minus", "[-]", 1, 3, "expected a digit"},
        {"leading dot", "[.5]", 1, 2, "unexpected character '.'"},
        {"leading plus", "[+1]", 1, 2, "unexpected character '+'"},
        {"NaN", "[NaN]", 1, 2, "unexpected character 'N'"},
        // literals and structure
        {"misspelt true", "[tru]", 1, 2, "expected true"},
        {"capitalised null", "{\"a\": Null}", 1, 7, "unexpected character 'N'"},
        {"missing colon", R"({"a" 1})", 1, 6, "expected ':'"},
        {"missing comma in an array", "[1 2]", 1, 4, "expected ',' or ']'"},
        {"missing comma in an object", R"({"a":1 "b":2})", 1, 8, "expected ',' or '}'"},
        {"unquoted key", "{a: 1}", 1, 2, "expected a double-quoted key"},
        {"mismatched bracket", "[1}", 1, 3, "expected ',' or ']'"},
        {"vertical tab is not whitespace", "[1,\v2]", 1, 4, "unexpected character '\\x0b'"},
        // text after the value
        {"text after an object", "{} x", 1, 4, "unexpected text after"},
        {"a second value", "1 2", 1, 3, "unexpected text after"},
        {"letters glued to a literal", "truex", 1, 5, "unexpected text after"},
        {"extra bracket on the next line", "{}\n}", 2, 1, "unexpected text after"},
        {"NUL after the value", bytes("{}\0"), 1, 3, "unexpected text after"},
        // empty documents
        {"empty", "", 1, 1, "empty"},
        {"spaces only", "   ", 1, 4, "empty"},
        {"newlines only", " \n\n\t", 3, 2, "empty"},
        // nesting
        {"1025 nested arrays", std::string(1025, '[') + std::string(1025, ']'), 1, 1025, "deeper than 1024"},
        {"deep nesting on line 2", "\n" + std::string(2000, '['), 2, 1025, "deeper than 1024"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.name);
        auto r = parse(c.text);
        REQUIRE_FALSE(r.has_value());
        const auto& e = r.error();
        CHECK(e.code == sbx::Errc::invalid_settings);
        CHECK(e.line == c.line);
        CHECK(e.column == c.column);
        CHECK_MESSAGE(e.message.find(c.message_part) != std::string::npos, e.message);
        CHECK(e.message.rfind("invalid JSON: ", 0) == 0);
    }
}

TEST_CASE("json: nesting up to simdjson's limit parses, one level more does not") {
    auto arrays = [](std::size_t n, std::string_view inner) {
        return std::string(n, '[') + std::string(inner) + std::string(n, ']');
    };
    CHECK(parse(arrays(1024, "")).has_value());
    CHECK(parse(arrays(1023, "1")).has_value());
    auto one_more = parse(arrays(1024, "1"));  // the scalar is the 1025th level
    REQUIRE_FALSE(one_more.has_value());
    CHECK(one_more.error().line == 1);
    CHECK(one_more.error().column == 1025);

    std::string objects;
    for (int k = 0; k < 1025; ++k) objects += "{\"a\":";
    objects += "1";
    objects += std::string(1025, '}');
    auto deep = parse(objects);
    REQUIRE_FALSE(deep.has_value());
    CHECK(deep.error().line == 1);
    CHECK(deep.error().column == 5 * 1024 + 1);  // the 1025th '{'
}

TEST_CASE("json: numbers at the edge of simdjson's range") {
    // simdjson refuses integers that fit neither int64 nor uint64, and doubles that
    // overflow; the error still points at the number.
    for (std::string_view text : {"[-9223372036854775808]", "[18446744073709551615]", "[1.7976931348623157e308]",
                                  "[1e-400]", "[-0.0e-999]", "[123456789012345678901234567890.5]"}) {
        CAPTURE(text);
        CHECK(parse(text).has_value());
    }
    for (std::string_view text : {"[18446744073709551616]", "[-9223372036854775809]",
                                  "[-123456789012345678901234567890]", "[1e400]", "[-1.8e308]"}) {
        CAPTURE(text);
        auto r = parse(text);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == sbx::Errc::invalid_settings);
        CHECK(r.error().line == 1);
        CHECK(r.error().column == 2);
        CHECK(r.error().message.find("out of range") != std::string::npos);
    }
    auto later = parse("{\n  \"a\": [1,\n    99999999999999999999]}");
    REQUIRE_FALSE(later.has_value());
    CHECK(later.error().line == 3);
    CHECK(later.error().column == 5);
}

TEST_CASE("json: documents over the size limit are refused before parsing") {
    std::string big(sbx::json::kMaxDocumentBytes + 1, ' ');
    big.front() = '[';
    big.back() = ']';
    auto r = parse(big);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == sbx::Errc::invalid_settings);
    CHECK(r.error().message.find(std::to_string(sbx::json::kMaxDocumentBytes)) != std::string::npos);
}

TEST_CASE("json: type_name names each simdjson type") {
    using T = simdjson::dom::element_type;
    using sbx::json::type_name;
    CHECK(type_name(T::ARRAY) == "an array");
    CHECK(type_name(T::OBJECT) == "an object");
    CHECK(type_name(T::INT64) == "a number");
    CHECK(type_name(T::UINT64) == "a number");
    CHECK(type_name(T::DOUBLE) == "a number");
    CHECK(type_name(T::STRING) == "a string");
    CHECK(type_name(T::BOOL) == "a boolean");
    CHECK(type_name(T::NULL_VALUE) == "null");
}

TEST_CASE("json: quote escapes what JSON requires") {
    CHECK(quote("") == R"("")");
    CHECK(quote("plain /path/ ok") == R"("plain /path/ ok")");
    CHECK(quote("a\"b") == R"("a\"b")");
    CHECK(quote("a\\b") == R"("a\\b")");
    CHECK(quote("\"\\\"") == R"("\"\\\"")");
    CHECK(quote("\n\t\r") == R"("\n\t\r")");
    CHECK(quote("\b") == R"("\u0008")");
    CHECK(quote("\f") == R"("\u000c")");
    CHECK(quote("\x01") == R"("\u0001")");
    CHECK(quote("\x1b[0m") == R"("\u001b[0m")");
    CHECK(quote("\x1f") == R"("\u001f")");
    CHECK(quote(bytes("a\0b")) == R"("a\u0000b")");
    CHECK(quote("\x7f") == R"("\u007f")");
    CHECK(quote(" ~") == R"(" ~")");  // the printable ASCII edges stay
}

TEST_CASE("json: quote keeps valid UTF-8 and replaces each invalid byte with U+FFFD") {
    const std::string fffd = "\xef\xbf\xbd";
    // valid, kept byte for byte
    CHECK(quote("\xc2\x80") == "\"\xc2\x80\"");                  // U+0080, the first two-byte
    CHECK(quote("\xc3\xa9\xe2\x82\xac") == "\"\xc3\xa9\xe2\x82\xac\"");  // é€
    CHECK(quote("\xef\xbf\xbf") == "\"\xef\xbf\xbf\"");          // U+FFFF
    CHECK(quote("\xf0\x9f\x98\x80") == "\"\xf0\x9f\x98\x80\"");  // an emoji
    CHECK(quote("\xf4\x8f\xbf\xbf") == "\"\xf4\x8f\xbf\xbf\"");  // U+10FFFF
    CHECK(quote("\xed\x9f\xbf") == "\"\xed\x9f\xbf\"");          // U+D7FF, just below the surrogates
    // invalid
    CHECK(quote("\xff") == "\"" + fffd + "\"");
    CHECK(quote("\xfe\xff") == "\"" + fffd + fffd + "\"");
    CHECK(quote("\x80") == "\"" + fffd + "\"");
    CHECK(quote("a\xc3") == "\"a" + fffd + "\"");              // truncated at the end
    CHECK(quote("\xc3(") == "\"" + fffd + "(\"");              // lead byte without continuation
    CHECK(quote("\xc0\xaf") == "\"" + fffd + fffd + "\"");     // overlong
    CHECK(quote("\xc1\xbf") == "\"" + fffd + fffd + "\"");     // overlong
    CHECK(quote("\xe0\x9f\xbf") == "\"" + fffd + fffd + fffd + "\"");  // overlong three-byte
    CHECK(quote("\xed\xa0\x80") == "\"" + fffd + fffd + fffd + "\"");  // surrogate
    CHECK(quote("\xf0\x8f\xbf\xbf") == "\"" + fffd + fffd + fffd + fffd + "\"");  // overlong four-byte
    CHECK(quote("\xf4\x90\x80\x80") == "\"" + fffd + fffd + fffd + fffd + "\"");  // past U+10FFFF
    CHECK(quote("\xf5\x80\x80\x80") == "\"" + fffd + fffd + fffd + fffd + "\"");
    CHECK(quote("\xf0\x9f\x98") == "\"" + fffd + fffd + fffd + "\"");  // truncated four-byte
    CHECK(quote("\xf0\x9f\x98\"") == "\"" + fffd + fffd + fffd + "\\\"\"");
    CHECK(quote("x\xe2\x82y\xe2\x82\xac") == "\"x" + fffd + fffd + "y\xe2\x82\xac\"");
}

TEST_CASE("json: quote output always parses back, and to the input when it was UTF-8") {
    auto check_round_trip = [](const std::string& s) {
        CAPTURE(s);
        const std::string q = quote(s);
        auto doc = parse(q);
        REQUIRE_MESSAGE(doc.has_value(), "quote output does not parse: " << q);
        std::string_view back;
        REQUIRE(!(*doc)->root().get(back));
        CHECK(valid_utf8(back));
        if (valid_utf8(s)) CHECK(back == s);
        // What comes back is what quote meant: quoting it again gives the same text.
        CHECK(quote(back) == q);
    };
    SUBCASE("every single byte") {
        for (int b = 0; b < 256; ++b) check_round_trip(std::string(1, static_cast<char>(b)));
    }
    SUBCASE("every pair of bytes") {
        for (int a = 0; a < 256; ++a)
            for (int b = 0; b < 256; ++b) {
                std::string s;
                s += static_cast<char>(a);
                s += static_cast<char>(b);
                const std::string q = quote(s);
                auto doc = parse(q);
                REQUIRE_MESSAGE(doc.has_value(), "quote output does not parse for bytes " << a << ", " << b);
                std::string_view back;
                REQUIRE(!(*doc)->root().get(back));
                if (valid_utf8(s)) REQUIRE(back == s);
                REQUIRE(quote(back) == q);
            }
    }
    SUBCASE("random byte strings biased towards UTF-8 edges") {
        const unsigned char pool[] = {0x00, 0x01, 0x08, 0x0a, 0x1f, 0x20, '"',  '\\', '/',  'a',  0x7f, 0x80,
                                      0xbf, 0xc0, 0xc2, 0xdf, 0xe0, 0xa0, 0xed, 0x9f, 0xef, 0xf0, 0x90, 0xf4,
                                      0x8f, 0xf5, 0xff, 0xc3, 0xa9, 0xe2, 0x82, 0xac, 0x9f, 0x98};
        Lcg rng{12345};
        for (int n = 0; n < 20000; ++n) {
            std::string s;
            const std::size_t len = rng.next() % 12;
            for (std::size_t k = 0; k < len; ++k) s += static_cast<char>(pool[rng.next() % sizeof pool]);
            check_round_trip(s);
        }
    }
    SUBCASE("strings from parsed documents") {
        check_round_trip(parsed_string(R"("\u0000\u001f\u007f\u0080\uffff\ud83d\ude00")"));
        check_round_trip(parsed_string(R"("\b\f\n\r\t\"\\\/")"));
    }
}

TEST_CASE("json: Writer places commas for flat values") {
    CHECK(sbx::json::Writer().begin_object().end_object().str() == "{}");
    CHECK(sbx::json::Writer().begin_array().end_array().str() == "[]");
    CHECK(sbx::json::Writer().value(7).str() == "7");
    CHECK(sbx::json::Writer().null().str() == "null");

    sbx::json::Writer w;
    w.begin_object()
        .key("a").value(1)
        .key("b").value(true)
        .key("c").null()
        .key("d").value("x")
        .end_object();
    CHECK(w.str() == R"({"a":1,"b":true,"c":null,"d":"x"})");

    sbx::json::Writer arr;
    arr.begin_array().value(1).value(false).null().value(std::string("s")).end_array();
    CHECK(arr.str() == R"([1,false,null,"s"])");
}

TEST_CASE("json: Writer places commas in nested objects and arrays") {
    sbx::json::Writer w;
    w.begin_object()
        .key("empty_object").begin_object().end_object()
        .key("empty_array").begin_array().end_array()
        .key("list").begin_array()
            .begin_object().key("x").value(1).end_object()
            .begin_object().key("x").value(2).key("y").begin_array().end_array().end_object()
            .begin_array().begin_array().end_array().begin_object().end_object().end_array()
            .value("tail")
        .end_array()
        .key("obj").begin_object()
            .key("inner").begin_object().key("deep").begin_array().value(3).value(4).end_array().end_object()
            .key("after").value(false)
        .end_object()
        .key("last").null()
        .end_object();
    CHECK(w.str() ==
          R"({"empty_object":{},"empty_array":[],"list":[{"x":1},{"x":2,"y":[]},[[],{}],"tail"],)"
          R"("obj":{"inner":{"deep":[3,4]},"after":false},"last":null})");

    auto doc = parse(w.str());
    REQUIRE(doc.has_value());
    auto root = (*doc)->root();
    simdjson::dom::object eo;
    REQUIRE(!root["empty_object"].get(eo));
    CHECK(eo.size() == 0);
    simdjson::dom::array list;
    REQUIRE(!root["list"].get(list));
    CHECK(list.size() == 4);
    std::int64_t v = 0;
    REQUIRE(!root.at_pointer("/list/1/x").get(v));
    CHECK(v == 2);
    REQUIRE(!root.at_pointer("/obj/inner/deep/1").get(v));
    CHECK(v == 4);
    std::string_view tail;
    REQUIRE(!root.at_pointer("/list/3").get(tail));
    CHECK(tail == "tail");
    bool after = true;
    REQUIRE(!root.at_pointer("/obj/after").get(after));
    CHECK_FALSE(after);
    CHECK(root["last"].is_null());
}

TEST_CASE("json: Writer output re-parses with the values it was given") {
    const std::string weird_key = "we\"ird\\key\n\x01\xff";
    const std::string weird_value = "line1\nline2\t\"q\" \xc3\xa9 \x7f";
    sbx::json::Writer w;
    w.begin_object()
        .key(weird_key).value(std::string_view(weird_value))
        .key("min").value(std::numeric_limits<std::int64_t>::min())
        .key("max").value(std::numeric_limits<std::int64_t>::max())
        .key("umax").value(std::numeric_limits<std::uint64_t>::max())
        .key("int").value(-17)
        .key("cstr").value("c")
        .key("nested").begin_array();
    for (int k = 0; k < 50; ++k) {
        w.begin_object().key("k").value(k).key("list").begin_array();
        for (int m = 0; m < k % 4; ++m) w.value(m);
        w.end_array().end_object();
    }
    w.end_array().end_object();

    auto doc = parse(w.str());
    REQUIRE_MESSAGE(doc.has_value(), w.str());
    auto root = (*doc)->root();

    simdjson::dom::object obj;
    REQUIRE(!root.get(obj));
    CHECK(obj.size() == 7);
    // The key with the invalid byte comes back with U+FFFD in its place.
    std::string_view v;
    REQUIRE(!root["we\"ird\\key\n\x01\xef\xbf\xbd"].get(v));
    CHECK(v == weird_value);
    std::int64_t i = 0;
    REQUIRE(!root["min"].get(i));
    CHECK(i == std::numeric_limits<std::int64_t>::min());
    REQUIRE(!root["max"].get(i));
    CHECK(i == std::numeric_limits<std::int64_t>::max());
    std::uint64_t u = 0;
    REQUIRE(!root["umax"].get(u));
    CHECK(u == std::numeric_limits<std::uint64_t>::max());
    REQUIRE(!root["int"].get(i));
    CHECK(i == -17);
    REQUIRE(!root["cstr"].get(v));
    CHECK(v == "c");

    simdjson::dom::array nested;
    REQUIRE(!root["nested"].get(nested));
    REQUIRE(nested.size() == 50);
    std::int64_t expect = 0;
    for (auto el : nested) {
        std::int64_t k = -1;
        REQUIRE(!el["k"].get(k));
        CHECK(k == expect);
        simdjson::dom::array list;
        REQUIRE(!el["list"].get(list));
        CHECK(list.size() == static_cast<std::size_t>(expect % 4));
        ++expect;
    }
}

TEST_CASE("json: Writer::take hands over the text") {
    sbx::json::Writer w;
    w.begin_array().value("a").end_array();
    std::string text = w.take();
    CHECK(text == R"(["a"])");
    CHECK(parse(text).has_value());
}

namespace {

TEST_CASE("json: error_at_key names the file, the key and where its value stands; string_problem says why a string is refused") {
    const std::string_view text = "{\"a\": [1,\n  {\"b\": \"x\"}]}";
    const auto e = sbx::json::error_at_key(text, "f.json", "a[1].b", "wrong");
    CHECK(e.code == sbx::Errc::invalid_settings);
    CHECK(e.file == "f.json");
    CHECK(e.key == "a[1].b");
    CHECK(e.line == 2);
    CHECK(e.column == 9);
    const auto missing = sbx::json::error_at_key(text, "f.json", "zz", "wrong");
    CHECK(missing.line == 0);
    CHECK(sbx::json::string_problem("ok").empty());
    CHECK(sbx::json::string_problem("") == "an empty string");
    CHECK(sbx::json::string_problem("a\nb") == "a control character in the string");
    CHECK(sbx::json::string_problem("a\nb\tc", true).empty());
    CHECK(sbx::json::string_problem("a\rb", true) == "a control character in the string");
    CHECK(sbx::json::string_problem(std::string_view("a\0b", 3), true) == "a control character in the string");
}

}  // namespace
