// front_matter::parse(): a Markdown file's YAML front matter, read strictly into a tree that knows no schema.
#include <doctest/doctest.h>

#include <string>
#include <string_view>

#include "sbx/settings/front_matter.hpp"

namespace {

using sbx::front_matter::Node;

const std::string kFile = "/p/NOTE.md";
constexpr std::string_view kRead[] = {"a", "b"};

std::string refuse_z(std::string_view key) { return key == "z" ? "z is not wanted here" : ""; }

const sbx::front_matter::Keys kKeys{kRead, refuse_z};

Node parse_ok(std::string_view text) {
    auto n = sbx::front_matter::parse(text, kFile, kKeys);
    REQUIRE_MESSAGE(n.has_value(), (n ? std::string() : sbx::to_string(n.error())));
    return std::move(*n);
}

sbx::Error parse_err(std::string_view text) {
    auto n = sbx::front_matter::parse(text, kFile, kKeys);
    REQUIRE_FALSE(n.has_value());
    CHECK(n.error().code == sbx::Errc::invalid_settings);
    CHECK(n.error().file == kFile);
    return n.error();
}

}  // namespace

TEST_CASE("front matter: a tree of the read entries only") {
    const Node root = parse_ok(
        "---\n"
        "title: skipped, & even * this | is not read\n"
        "a:\n"
        "  x: plain text  # a comment\n"
        "  y: 'it''s'\n"
        "  z: \"q\\\"\\n\"\n"
        "  flow: [one, \"two\"]\n"
        "  block:\n"
        "  - three\n"
        "  empty:\n"
        "b: true\n"
        "---\n"
        "body: not read\n");
    CHECK(root.kind == Node::Kind::map);
    REQUIRE(root.children.size() == 2);
    const Node& a = root.children[0];
    CHECK(a.key == "a");
    CHECK(a.line == 3);
    CHECK(a.kind == Node::Kind::map);
    REQUIRE(a.children.size() == 6);

    const Node& x = a.children[0];
    CHECK(x.key == "x");
    CHECK(x.kind == Node::Kind::scalar);
    CHECK(x.plain);
    CHECK(x.text == "plain text");
    CHECK(x.line == 4);
    CHECK(x.key_column == 3);
    CHECK(x.column == 6);

    CHECK(a.children[1].text == "it's");
    CHECK_FALSE(a.children[1].plain);
    CHECK(a.children[2].text == "q\"\n");

    const Node& flow = a.children[3];
    CHECK(flow.kind == Node::Kind::list);
    REQUIRE(flow.children.size() == 2);
    CHECK(flow.children[0].text == "one");
    CHECK(flow.children[0].plain);
    CHECK(flow.children[1].text == "two");
    CHECK_FALSE(flow.children[1].plain);

    const Node& block = a.children[4];
    CHECK(block.kind == Node::Kind::list);  // indentless, under its key
    REQUIRE(block.children.size() == 1);
    CHECK(block.children[0].text == "three");
    CHECK(block.children[0].line == 9);

    CHECK(a.children[5].kind == Node::Kind::null);
    CHECK(a.children[5].key == "empty");

    // `true` is text to the reader; whether it is a boolean is the schema's to say.
    const Node& b = root.children[1];
    CHECK(b.key == "b");
    CHECK(b.kind == Node::Kind::scalar);
    CHECK(b.plain);
    CHECK(b.text == "true");
}

TEST_CASE("front matter: an empty one is an empty mapping at line 1") {
    const Node root = parse_ok("---\n---\n");
    CHECK(root.kind == Node::Kind::map);
    CHECK(root.children.empty());
    CHECK(root.line == 1);
    CHECK(root.column == 1);
    CHECK(parse_ok("---\nunread: x\n---\n").children.empty());
}

TEST_CASE("front matter: the caller refuses a top-level key where the scan meets it") {
    auto e = parse_err("---\nz: 1\na: [\n---\n");
    CHECK(e.line == 2);
    CHECK(e.column == 1);
    CHECK(e.key == "z");
    CHECK(e.message == "z is not wanted here");
    // Without a refusal, the key is skipped like any other unread one.
    const sbx::front_matter::Keys open{kRead};
    CHECK(sbx::front_matter::parse("---\nz: 1\n---\n", kFile, open).has_value());
}

TEST_CASE("front matter: refusals name the file, the line, the column and the key path") {
    struct Case {
        const char* text;
        std::size_t line, column;
        const char* key;
        const char* message;  // a part of it
    };
    const Case cases[] = {
        {"# no front matter\n", 1, 1, "", "starts with a line `---`"},
        {"---\na: x\n", 1, 1, "", "no closing line `---` (the file ends at line 2)"},
        {"---\na:\n\tx: 1\n---\n", 3, 1, "", "a tab in the indentation"},
        {"---\na:\n  x: &y 1\n---\n", 3, 6, "a.x", "anchor"},
        {"---\na:\n  x: 1\n  x: 2\n---\n", 4, 3, "a.x", "appears twice (first on line 3)"},
        {"---\na: 1\na: 2\n---\n", 3, 1, "a", "appears twice (first on line 2)"},
        {"---\nb: [c,]\n---\n", 2, 7, "b[1]", "an empty entry"},
        {"---\n...\n---\n", 2, 1, "", "a document end"},
        {"---\n- item\n---\n", 2, 1, "", "belongs to no `key:`"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.text);
        auto e = parse_err(c.text);
        CHECK(e.line == c.line);
        CHECK(e.column == c.column);
        CHECK(e.key == c.key);
        CHECK_MESSAGE(e.message.find(c.message) != std::string::npos, e.message);
    }
}

TEST_CASE("front matter: a list item of one `key: value`, and one-line { mappings of values and lists") {
    const Node root = parse_ok(
        "---\n"
        "a:\n"
        "  - plain\n"
        "  - shell: {blocked_commands: [nc, 'rm'], note: \"x, y\"}  # a comment\n"
        "  - empty:\n"
        "  - named: value\n"
        "  - none: {}\n"
        "b: {k: v}\n"
        "---\n");
    const Node& a = root.children[0];
    REQUIRE(a.kind == Node::Kind::list);
    REQUIRE(a.children.size() == 5);
    CHECK(a.children[0].kind == Node::Kind::scalar);
    const Node& item = a.children[1];
    REQUIRE(item.kind == Node::Kind::map);
    REQUIRE(item.children.size() == 1);
    const Node& shell = item.children[0];
    CHECK(shell.key == "shell");
    CHECK(shell.line == 4);
    REQUIRE(shell.kind == Node::Kind::map);
    REQUIRE(shell.children.size() == 2);
    const Node& blocked = shell.children[0];
    CHECK(blocked.key == "blocked_commands");
    REQUIRE(blocked.kind == Node::Kind::list);
    REQUIRE(blocked.children.size() == 2);
    CHECK(blocked.children[1].text == "rm");
    CHECK(blocked.key_column == 13);
    CHECK(shell.children[1].text == "x, y");
    CHECK(a.children[2].children[0].kind == Node::Kind::null);
    CHECK(a.children[3].children[0].text == "value");
    CHECK(a.children[4].children[0].kind == Node::Kind::map);
    CHECK(a.children[4].children[0].children.empty());
    CHECK(root.children[1].kind == Node::Kind::map);
    CHECK(root.children[1].children[0].text == "v");
}

TEST_CASE("front matter: a { mapping is read on one line, of values and lists only") {
    struct Case {
        const char* text;
        std::size_t column;
        const char* key;
        const char* message;
    };
    const Case cases[] = {
        {"---\na: {k: v\n---\n", 4, "a", "must close on its own line"},
        {"---\na: {k: {x: 1}}\n---\n", 8, "a.k", "a mapping inside a { mapping"},
        {"---\na: {k: v, k: w}\n---\n", 11, "a.k", "appears twice"},
        {"---\na: {k:v}\n---\n", 5, "a", "expected `key: value`"},
        {"---\na: {k: , j: 1}\n---\n", 8, "a.k", "an empty value"},
        {"---\na: {k: [x, y] z}\n---\n", 15, "a.k", "expected , or }"},
        {"---\na: {k: v} tail\n---\n", 11, "a", "unexpected text after the value"},
        {"---\na: {k: *x}\n---\n", 8, "a.k", "alias"},
        {"---\na:\n  - k: v\n    more: 1\n---\n", 5, "a[0]", "unexpected indentation"},
        {"---\na: [{k: v}]\n---\n", 5, "a[0]", "a bracket inside a [ list entry"},
    };
    for (const auto& c : cases) {
        CAPTURE(c.text);
        auto e = parse_err(c.text);
        CHECK(e.column == c.column);
        CHECK(e.key == c.key);
        CHECK_MESSAGE(e.message.find(c.message) != std::string::npos, e.message);
    }
}
