// tool_cache.hpp: where a root's cache home lies, its name, and the variables that point there.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "sbx/plan/said_once.hpp"
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

TEST_CASE("said once: a once warning is said the first time only, the others every time") {
    const sbx::Warning once{"/home/u", "", "looked through 5000 entries and stopped", sbx::WarningScope::any, true};
    const sbx::Warning every{"/r/.claude/settings.json", "sandbox.x", "unknown key"};
    CHECK(sbx::said_path("/home/u/.cache", "/work/my-app") == "/home/u/.cache/sbx/said/work-my%2Dapp");
    auto first = sbx::say_once({every, once}, {});
    CHECK(first.changed);
    REQUIRE(first.say.size() == 2);
    CHECK(first.said == std::vector<std::string>{"/home/u: looked through 5000 entries and stopped"});
    const std::string text = sbx::said_text(first.said);
    CHECK(text == "sbx said 1\n/home/u: looked through 5000 entries and stopped\n");
    auto second = sbx::say_once({every, once}, sbx::parse_said(text));
    CHECK_FALSE(second.changed);
    REQUIRE(second.say.size() == 1);
    CHECK(second.say[0].message == "unknown key");
    // Another text is another warning: a changed limit or folder is said again.
    sbx::Warning other = once;
    other.file = "/home/v";
    CHECK(sbx::say_once({other}, sbx::parse_said(text)).say.size() == 1);
}

TEST_CASE("said once: a file that is not sbx's is read as empty, and a full one starts again") {
    for (const char* bad : {"", "sbx said 2\nx\n", "sbx said 1\nx", "sbx said 1\n\nx\n", "x\nsbx said 1\n"})
        CHECK_MESSAGE(sbx::parse_said(bad).empty(), bad);
    CHECK(sbx::parse_said("sbx said 1\n").empty());
    CHECK(sbx::parse_said("sbx said 1\na\nb\n") == std::vector<std::string>{"a", "b"});
    CHECK(sbx::parse_said(std::string("sbx said 1\n") + std::string(sbx::said_once::kMaxBytes, 'a') + "\n").empty());
    std::vector<std::string> full(sbx::said_once::kMaxBytes / 100, std::string(99, 'x'));
    const sbx::Warning once{"", "", std::string(99, 'y'), sbx::WarningScope::any, true};
    auto now = sbx::say_once({once}, full);
    CHECK(now.changed);
    CHECK(now.said == std::vector<std::string>{std::string(99, 'y')});
    // A warning of more than one line cannot be a line of the file: said every time.
    const sbx::Warning two_lines{"", "", "a\nb", sbx::WarningScope::any, true};
    auto said = sbx::say_once({two_lines}, {});
    CHECK(said.say.size() == 1);
    CHECK_FALSE(said.changed);
}
