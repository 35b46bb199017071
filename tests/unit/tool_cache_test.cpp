// tool_cache.hpp: where a root's cache home lies, its name, and the variables that point there.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "sbx/rules/tool_cache.hpp"

TEST_CASE("tool cache: SHA-256 gives the published digests") {
    CHECK(sbx::detail::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sbx::detail::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(sbx::detail::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(sbx::detail::sha256_hex(std::string(1000, 'a')) ==
          "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3");
}

TEST_CASE("tool cache: the base is an absolute XDG_CACHE_HOME, else HOME/.cache") {
    CHECK(sbx::tool_cache_base(std::nullopt, "/home/u") == "/home/u/.cache");
    CHECK(sbx::tool_cache_base("/x//y/", "/home/u") == "/x/y");
    CHECK(sbx::tool_cache_base("relative/c", "/home/u") == "/home/u/.cache");  // the XDG spec ignores a relative one
    CHECK(sbx::tool_cache_base("", "/home/u") == "/home/u/.cache");
    CHECK(sbx::tool_cache_dir("/home/u/.cache", "/work/app") == "/home/u/.cache/sbx/projects/work-app");
}

TEST_CASE("tool cache: the name is a readable encoding of the root that no other root shares") {
    CHECK(sbx::tool_cache_name("/work/my-app") == "work-my%2Dapp");
    CHECK(sbx::tool_cache_name("/a/.b") == "a-.b");
    CHECK(sbx::tool_cache_name("/.hidden") == "%2Ehidden");  // never a hidden name, `.` or `..`
    CHECK(sbx::tool_cache_name("/a b/c%d+e") == "a%20b-c%25d%2Be");
    CHECK(sbx::tool_cache_name("/caf\xc3\xa9") == "caf%C3%A9");
    // Roots that a naive encoding would confuse.
    const std::string roots[] = {"/a-b",  "/a/b",  "/a%2Db", "/a_b", "/a.b", "/a/-b", "/a-/b",
                                 "/.a",   "/%2Ea", "/a+b",   "/A/b", "/a/b/c"};
    std::set<std::string> names;
    for (const auto& r : roots) names.insert(sbx::tool_cache_name(r));
    CHECK(names.size() == std::size(roots));
}

TEST_CASE("tool cache: a root whose encoding passes NAME_MAX is named by its last component and a SHA-256") {
    const std::string deep = "/" + std::string(200, 'x') + "/" + std::string(100, 'y') + "-z";
    const std::string name = sbx::tool_cache_name(deep);
    CHECK(name.size() <= sbx::kNameMax);
    const auto plus = name.find('+');
    REQUIRE(plus != std::string::npos);
    CHECK(name.substr(0, plus) == std::string(64, 'y'));
    CHECK(name.substr(plus + 1) == sbx::detail::sha256_hex(deep));
    // A different root with the same last component gets another name.
    CHECK(sbx::tool_cache_name("/" + std::string(201, 'x') + "/" + std::string(100, 'y') + "-z") != name);
    // An escape is never cut in half.
    const std::string dashes = "/" + std::string(300, '-');
    const std::string cut = sbx::tool_cache_name(dashes);
    CHECK(cut.substr(0, cut.find('+')).size() % 3 == 0);
    // Exactly NAME_MAX still reads as the path; one more is hashed.
    CHECK(sbx::tool_cache_name("/" + std::string(255, 'a')) == std::string(255, 'a'));
    CHECK(sbx::tool_cache_name("/" + std::string(256, 'a')).find('+') != std::string::npos);
}

TEST_CASE("tool cache: XDG_CACHE_HOME comes first and every variable has its own place and reason") {
    CHECK(sbx::kToolCacheVars.front().name == "XDG_CACHE_HOME");
    CHECK(sbx::kToolCacheVars.front().subdir.empty());
    std::set<std::string_view> names, dirs;
    for (const auto& v : sbx::kToolCacheVars) {
        CAPTURE(v.name);
        CHECK_FALSE(v.reason.empty());
        CHECK(names.insert(v.name).second);
        if (!v.subdir.empty()) CHECK(dirs.insert(v.subdir).second);
    }
}
