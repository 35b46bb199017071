// .env files, read strictly for an agent file's env list.
#include "sbx/settings/dotenv.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace {

std::vector<sbx::DotenvEntry> read(std::string_view text) {
    auto r = sbx::parse_dotenv(text, "/p/.env");
    REQUIRE_MESSAGE(r.has_value(), (r ? std::string() : sbx::to_string(r.error())));
    return *r;
}

std::string value_of(const std::vector<sbx::DotenvEntry>& entries, std::string_view name) {
    for (const auto& e : entries)
        if (e.name == name) return e.value;
    FAIL("no " << name);
    return {};
}

}  // namespace

TEST_CASE("dotenv: the forms people write, each value as a shell would give it") {
    const auto e = read(
        "# keys for the dev server\n"
        "\n"
        "PLAIN=abc\n"
        "export EXPORTED=1\n"
        "  SPACED  =  two words  \n"
        "COMMENTED=value # a note\n"
        "HASH=a#b\n"
        "SINGLE='it has $HOME and \\n and # inside'\n"
        "DOUBLE=\"line one\\nline \\\"two\\\"\\t\\\\\"\n"
        "MULTI=\"-----BEGIN KEY-----\n"
        "abc\n"
        "-----END KEY-----\"\n"
        "EMPTY=\n"
        "QUOTED_EMPTY=''\n"
        "CRLF=yes\r\n"
        "AFTER='x' # trailing comment\n"
        "LAST=no newline");
    CHECK(value_of(e, "PLAIN") == "abc");
    CHECK(value_of(e, "EXPORTED") == "1");
    CHECK(value_of(e, "SPACED") == "two words");
    CHECK(value_of(e, "COMMENTED") == "value");
    CHECK(value_of(e, "HASH") == "a#b");
    CHECK(value_of(e, "SINGLE") == "it has $HOME and \\n and # inside");
    CHECK(value_of(e, "DOUBLE") == "line one\nline \"two\"\t\\");
    CHECK(value_of(e, "MULTI") == "-----BEGIN KEY-----\nabc\n-----END KEY-----");
    CHECK(value_of(e, "EMPTY").empty());
    CHECK(value_of(e, "QUOTED_EMPTY").empty());
    CHECK(value_of(e, "CRLF") == "yes");
    CHECK(value_of(e, "AFTER") == "x");
    CHECK(value_of(e, "LAST") == "no newline");
    // Lines are counted across a value of several lines.
    for (const auto& x : e)
        if (x.name == "EMPTY") CHECK(x.line == 13);
}

TEST_CASE("dotenv: a later assignment replaces an earlier one") {
    const auto e = read("A=1\nB=2\nA=3\n");
    REQUIRE(e.size() == 2);
    CHECK(value_of(e, "A") == "3");
}

TEST_CASE("dotenv: anything else is an error naming the file and the line") {
    struct Bad {
        std::string_view text;
        std::string_view line;
    };
    const Bad rows[] = {
        {"A=1\nnot an assignment\n", "line 2"},
        {"A=1\n1BAD=x\n", "line 2"},
        {"A-B=x\n", "line 1"},
        {"A=1\nB='unclosed\nC=2\n", "line 2"},
        {"A=\"never closed\n", "line 1"},
        {"A=\"ok\" trailing\n", "line 1"},
        {"A='ok'x\n", "line 1"},
        {"A=1\n\nB=\"a\nb\\q\"\n", "line 4"},
        {"export\n", "line 1"},
        {std::string_view("A=1\nB=x\0y\n", 10), "line 2"},
    };
    for (const auto& r : rows) {
        auto got = sbx::parse_dotenv(r.text, "/p/.env");
        INFO(r.text);
        REQUIRE_FALSE(got.has_value());
        CHECK(got.error().code == sbx::Errc::invalid_settings);
        CHECK(got.error().file == "/p/.env");
        CHECK(got.error().key == r.line);
    }
    auto not_utf8 = sbx::parse_dotenv("A=\xff\n", "/p/.env");
    REQUIRE_FALSE(not_utf8.has_value());
    CHECK(not_utf8.error().file == "/p/.env");
}
