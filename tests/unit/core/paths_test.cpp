// paths.hpp: lexical normalisation, component-boundary containment, and resolve().
#include "sbx/core/paths.hpp"

#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

namespace {

using sbx::paths::Base;

std::vector<std::string> comps(std::string_view p) {
    std::vector<std::string> out;
    for (auto c : sbx::paths::components(p)) out.emplace_back(c);
    return out;
}

const Base kBase{"/home/u", "/work/project"};

}  // namespace

TEST_CASE("paths: is_absolute") {
    CHECK(sbx::paths::is_absolute("/"));
    CHECK(sbx::paths::is_absolute("/a"));
    CHECK(sbx::paths::is_absolute("//a"));
    CHECK_FALSE(sbx::paths::is_absolute(""));
    CHECK_FALSE(sbx::paths::is_absolute("a/b"));
    CHECK_FALSE(sbx::paths::is_absolute("~/a"));
    CHECK_FALSE(sbx::paths::is_absolute("./a"));
}

TEST_CASE("paths: components drops empty components and keeps the rest as written") {
    using V = std::vector<std::string>;
    CHECK(comps("") == V{});
    CHECK(comps("/") == V{});
    CHECK(comps("///") == V{});
    CHECK(comps("/a") == V{"a"});
    CHECK(comps("/a//b/") == V{"a", "b"});
    CHECK(comps("a/b") == V{"a", "b"});
    CHECK(comps("/./a/../b") == V{".", "a", "..", "b"});
    CHECK(comps("/.hidden/ spaced /x") == V{".hidden", " spaced ", "x"});
    CHECK(comps("/a*/[b]/\\c") == V{"a*", "[b]", "\\c"});
}

TEST_CASE("paths: normalize folds ., .. and repeated slashes") {
    struct Row {
        const char* in;
        const char* out;
    };
    const Row rows[] = {
        {"/", "/"},
        {"", "/"},
        {"//", "/"},
        {"/a", "/a"},
        {"/a/", "/a"},
        {"//a//b//", "/a/b"},
        {"/./a/./b/.", "/a/b"},
        {"//a/./b/../c/", "/a/c"},
        {"/a/b/..", "/a"},
        {"/a/b/../..", "/"},
        {"/..", "/"},
        {"/../../a", "/a"},
        {"/a/../../b", "/b"},
        {"/a/b/../../../c/d", "/c/d"},
        {"/a/.../b", "/a/.../b"},  // `...` is a name
        {"/a/..b/c", "/a/..b/c"},  // so is `..b`
        {"/a/b./.c", "/a/b./.c"},
        {"/a/*/../b", "/a/b"},     // wildcards are folded like any other name
        {"/a b/c", "/a b/c"},
        {"/\xc3\xa9/x", "/\xc3\xa9/x"},
    };
    for (const auto& r : rows) {
        CAPTURE(r.in);
        CHECK(sbx::paths::normalize(r.in) == r.out);
        // Normalising is idempotent.
        CHECK(sbx::paths::normalize(sbx::paths::normalize(r.in)) == r.out);
    }
}

TEST_CASE("paths: join puts a relative path under a base and normalises") {
    CHECK(sbx::paths::join("/a", "b") == "/a/b");
    CHECK(sbx::paths::join("/a", "b/c/") == "/a/b/c");
    CHECK(sbx::paths::join("/a/", "/b") == "/a/b");  // a leading slash in rel stays under base
    CHECK(sbx::paths::join("/a", "") == "/a");
    CHECK(sbx::paths::join("/a", ".") == "/a");
    CHECK(sbx::paths::join("/a/b", "..") == "/a");
    CHECK(sbx::paths::join("/a/b", "../c") == "/a/c");
    CHECK(sbx::paths::join("/a", "../../..") == "/");
    CHECK(sbx::paths::join("/", "x") == "/x");
    CHECK(sbx::paths::join("/", "") == "/");
}

TEST_CASE("paths: at_or_under matches at component boundaries only") {
    using sbx::paths::at_or_under;
    CHECK(at_or_under("/a", "/a"));
    CHECK(at_or_under("/a/b", "/a"));
    CHECK(at_or_under("/a/b/c", "/a"));
    CHECK(at_or_under("/a/b/c", "/a/b"));
    CHECK_FALSE(at_or_under("/ab", "/a"));
    CHECK_FALSE(at_or_under("/ab/c", "/a"));
    CHECK_FALSE(at_or_under("/a.b", "/a"));
    CHECK_FALSE(at_or_under("/a", "/a/b"));
    CHECK_FALSE(at_or_under("/", "/a"));
    CHECK_FALSE(at_or_under("/b", "/a"));
    CHECK_FALSE(at_or_under("/a/bc", "/a/b"));
    CHECK_FALSE(at_or_under("/x/a", "/a"));  // a match must start at the root
    CHECK(at_or_under("/home/u/.ssh/id", "/home/u"));
    CHECK_FALSE(at_or_under("/home/user2/x", "/home/u"));
    CHECK_FALSE(at_or_under("/home/u-other", "/home/u"));
}

TEST_CASE("paths: every absolute path is at or under /") {
    using sbx::paths::at_or_under;
    CHECK(at_or_under("/", "/"));
    CHECK(at_or_under("/a", "/"));
    CHECK(at_or_under("/a/b/c", "/"));
    CHECK_FALSE(at_or_under("a", "/"));
    CHECK_FALSE(at_or_under("", "/"));
}

TEST_CASE("paths: parent") {
    using sbx::paths::parent;
    CHECK(parent("/a/b/c") == "/a/b");
    CHECK(parent("/a/b") == "/a");
    CHECK(parent("/a") == "/");
    CHECK(parent("/") == "/");
    CHECK(parent("/.hidden") == "/");
    // Climbing always ends at the root.
    std::string p = "/x/y/z";
    int steps = 0;
    while (p != "/" && steps < 10) {
        p = parent(p);
        ++steps;
    }
    CHECK(p == "/");
    CHECK(steps == 3);
}

TEST_CASE("paths: resolve keeps absolute paths, normalised") {
    using sbx::paths::resolve;
    CHECK(resolve("/etc/passwd", kBase).value() == "/etc/passwd");
    CHECK(resolve("/", kBase).value() == "/");
    CHECK(resolve("//etc//./ssh/", kBase).value() == "/etc/ssh");
    CHECK(resolve("/a/b/../../../etc", kBase).value() == "/etc");
    CHECK(resolve("/home/u/../v", kBase).value() == "/home/v");
    CHECK(resolve("/a/~/b", kBase).value() == "/a/~/b");  // `~` is only special at the front
    CHECK(resolve("/a/**/*.env", kBase).value() == "/a/**/*.env");  // wildcards pass through
}

TEST_CASE("paths: resolve puts ~ and ~/ under the home directory") {
    using sbx::paths::resolve;
    CHECK(resolve("~", kBase).value() == "/home/u");
    CHECK(resolve("~/", kBase).value() == "/home/u");
    CHECK(resolve("~/.ssh", kBase).value() == "/home/u/.ssh");
    CHECK(resolve("~//a///b/", kBase).value() == "/home/u/a/b");
    CHECK(resolve("~/./x/../y", kBase).value() == "/home/u/y");
    CHECK(resolve("~/..", kBase).value() == "/home");  // folded lexically, even above home
    CHECK(resolve("~/../../../etc", kBase).value() == "/etc");
    CHECK(resolve("~/*/token", kBase).value() == "/home/u/*/token");

    const Base root_home{"/", "/p"};
    CHECK(resolve("~", root_home).value() == "/");
    CHECK(resolve("~/x", root_home).value() == "/x");
}

TEST_CASE("paths: resolve puts relative paths under base.dir") {
    using sbx::paths::resolve;
    CHECK(resolve("src", kBase).value() == "/work/project/src");
    CHECK(resolve("./src/", kBase).value() == "/work/project/src");
    CHECK(resolve(".", kBase).value() == "/work/project");
    CHECK(resolve("..", kBase).value() == "/work");
    CHECK(resolve("../other/x", kBase).value() == "/work/other/x");
    CHECK(resolve("../../../../x", kBase).value() == "/x");
    CHECK(resolve("a/../../b", kBase).value() == "/work/b");
    CHECK(resolve("build/**", kBase).value() == "/work/project/build/**");
    CHECK(resolve(".env", kBase).value() == "/work/project/.env");
    CHECK(resolve("a~", kBase).value() == "/work/project/a~");
}

TEST_CASE("paths: resolve refuses ~user") {
    using sbx::paths::resolve;
    for (std::string_view p : {"~root", "~root/.ssh", "~u/x", "~.", "~~", "~\\/x"}) {
        CAPTURE(p);
        auto r = resolve(p, kBase);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == sbx::Errc::invalid_settings);
        CHECK(r.error().message.find(std::string(p)) != std::string::npos);  // names the path
        CHECK(r.error().message.find("~user") != std::string::npos);
    }
}

TEST_CASE("paths: resolve refuses an empty path") {
    auto r = sbx::paths::resolve("", kBase);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == sbx::Errc::invalid_settings);
    CHECK(r.error().message.find("empty") != std::string::npos);
}

TEST_CASE("paths: resolve refuses control characters anywhere") {
    using sbx::paths::resolve;
    const std::string bad[] = {
        std::string("/a\0b", 4),
        std::string("\0", 1),
        "/a\nb",
        "/a\tb",
        "/a\rb",
        "/a\x1b[31m",
        "/a\x1f",
        "/a\x7f",
        "~/x\ny",
        "rel\x01",
        "~\x01",
        "\n",
    };
    for (const auto& p : bad) {
        CAPTURE(p);
        auto r = resolve(p, kBase);
        REQUIRE_FALSE(r.has_value());
        CHECK(r.error().code == sbx::Errc::invalid_settings);
        CHECK(r.error().message.find("control character") != std::string::npos);
        CHECK_FALSE(sbx::paths::check_text(p).has_value());
    }
    // Bytes from 0x20 to 0x7e and non-ASCII bytes are allowed.
    CHECK(resolve("/ !~\x7e", kBase).has_value());
    CHECK(resolve("/caf\xc3\xa9", kBase).value() == "/caf\xc3\xa9");
    CHECK(resolve("/\x80\xff", kBase).has_value());
    CHECK(sbx::paths::check_text("/ordinary/path").has_value());
    CHECK(sbx::paths::check_text("").has_value());
}

TEST_CASE("paths: resolve output is clean") {
    // Whatever goes in, what comes out is absolute, normalised and stable.
    using sbx::paths::resolve;
    for (std::string_view p : {"/", "~", "~/", ".", "..", "a//b/./c/..", "~/a/../..", "/x/", "../../.."}) {
        CAPTURE(p);
        auto r = resolve(p, kBase);
        REQUIRE(r.has_value());
        CHECK(sbx::paths::is_absolute(*r));
        CHECK(sbx::paths::normalize(*r) == *r);
        CHECK(resolve(*r, kBase).value() == *r);
        CHECK(r->find("//") == std::string::npos);
        CHECK((*r == "/" || r->back() != '/'));
    }
}
