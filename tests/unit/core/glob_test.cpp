// glob.hpp: the wildcard matcher, and the questions asked of a pattern.
#include "sbx/core/glob.hpp"

#include <doctest/doctest.h>

#include <string>
#include <string_view>

namespace {

struct MatchRow {
    const char* pattern;
    const char* path;
    bool match;
};

// The table every matching rule is checked against. Paths are normalised.
const MatchRow kMatches[] = {
    // literals
    {"/", "/", true},
    {"/a", "/a", true},
    {"/a/b", "/a/b", true},
    {"/a", "/b", false},
    {"/a", "/a/b", false},
    {"/a/b", "/a", false},
    {"/a", "/", false},
    {"/", "/a", false},
    {"/ab", "/a", false},
    {"/a", "/ab", false},
    {"/A", "/a", false},  // case matters

    // *: any run within one component, never `/`
    {"/*", "/a", true},
    {"/*", "/", false},
    {"/*", "/a/b", false},
    {"/a/*", "/a", false},
    {"/a/*", "/a/b", true},
    {"/a/*", "/a/b/c", false},
    {"/a*", "/a", true},
    {"/a*", "/abc", true},
    {"/a*", "/ba", false},
    {"/*a", "/a", true},
    {"/*a", "/bca", true},
    {"/*a", "/ab", false},
    {"/a*b", "/ab", true},
    {"/a*b", "/aXYZb", true},
    {"/a*b", "/a/b", false},
    {"/a*b", "/abc", false},
    {"/a*b*c", "/abbbcbc", true},
    {"/a*b*c", "/acb", false},
    {"/*.txt", "/notes.txt", true},
    {"/*.txt", "/notes.txt.bak", false},
    {"/*.txt", "/dir/notes.txt", false},
    {"/a/*/c", "/a/b/c", true},
    {"/a/*/c", "/a/b/x/c", false},
    {"/*/*", "/a/b", true},
    {"/*/*", "/a", false},
    {"/a**b", "/aXb", true},  // `**` inside a component is just two stars
    {"/a**b", "/a/x/b", false},
    {"/a/**b", "/a/xb", true},
    {"/a/**b", "/a/x/b", false},
    {"/a/b**", "/a/b/c", false},
    {"/x***", "/x", true},

    // dot files are matched like any other name
    {"/*", "/.hidden", true},
    {"/home/*/token", "/home/.config/token", true},
    {"/home/u/*", "/home/u/.ssh", true},
    {"/home/u/.*", "/home/u/.ssh", true},
    {"/home/u/.*", "/home/u/ssh", false},
    {"/?env", "/.env", true},
    {"/[.]env", "/.env", true},
    {"/home/u/**", "/home/u/.ssh/id_rsa", true},

    // ?: exactly one character
    {"/?", "/a", true},
    {"/?", "/ab", false},
    {"/?", "/", false},
    {"/a?c", "/abc", true},
    {"/a?c", "/ac", false},
    {"/a?c", "/a/c", false},
    {"/??", "/ab", true},
    {"/??", "/a", false},
    {"/?*", "/a", true},
    {"/*?", "/", false},

    // [...] sets
    {"/[abc]", "/a", true},
    {"/[abc]", "/c", true},
    {"/[abc]", "/d", false},
    {"/[abc]", "/ab", false},
    {"/[a-c]", "/b", true},
    {"/[a-c]", "/d", false},
    {"/[a-c]", "/-", false},
    {"/[a-cx-z]", "/y", true},
    {"/[a-cx-z]", "/m", false},
    {"/[0-9][0-9]", "/42", true},
    {"/[0-9][0-9]", "/4x", false},
    {"/file[0-9].txt", "/file7.txt", true},
    {"/file[0-9].txt", "/file10.txt", false},
    {"/[!a-c]", "/d", true},
    {"/[!a-c]", "/b", false},
    {"/[^a-c]", "/d", true},
    {"/[^a-c]", "/a", false},
    {"/[!.]*", "/.env", false},
    {"/[!.]*", "/env", true},
    {"/[]]", "/]", true},       // `]` first is literal
    {"/[]]", "/a", false},
    {"/[]a]", "/a", true},
    {"/[]a]", "/]", true},
    {"/[]a]", "/b", false},
    {"/[!]]", "/]", false},     // `]` first after the negation too
    {"/[!]]", "/x", true},
    {"/[^]]", "/]", false},
    {"/[a-]", "/-", true},      // a trailing `-` is literal
    {"/[a-]", "/a", true},
    {"/[a-]", "/b", false},
    {"/[-a]", "/-", true},
    {"/[!a]", "/!", true},
    {"/[a!]", "/!", true},      // `!` after the first place is literal
    {"/[*]", "/*", true},
    {"/[*]", "/a", false},
    {"/[?]", "/?", true},
    {"/[?]", "/a", false},
    {"/[\\]]", "/]", true},     // an escaped `]` inside a set
    {"/[\\]]", "/\\", false},
    {"/[\\-]", "/-", true},
    {"/[a\\-c]", "/b", false},  // an escaped `-` makes no range
    {"/[a\\-c]", "/-", true},
    {"/*[0-9]", "/abc7", true},
    {"/*[0-9]", "/abc", false},
    {"/[a-c]*", "/banana", true},

    // an unclosed `[` is a literal `[`
    {"/[", "/[", true},
    {"/[", "/a", false},
    {"/a[b", "/a[b", true},
    {"/a[b", "/ab", false},
    {"/[abc", "/[abc", true},
    {"/[abc", "/a", false},
    {"/[]", "/[]", true},
    {"/[!]", "/[!]", true},
    {"/*[", "/xyz[", true},
    {"/[*", "/[anything", true},
    {"/[?", "/[x", true},
    {"/x[/y]", "/x[/y]", true},  // a set cannot span a `/`

    // `**` as a whole component: zero or more components
    {"/**", "/", true},
    {"/**", "/a", true},
    {"/**", "/a/b/c", true},
    {"/a/**", "/a", true},
    {"/a/**", "/a/b", true},
    {"/a/**", "/a/b/c/d", true},
    {"/a/**", "/ab", false},
    {"/a/**", "/b/a", false},
    {"/a/**", "/", false},
    {"/a/**/b", "/a/b", true},
    {"/a/**/b", "/a/x/b", true},
    {"/a/**/b", "/a/x/y/b", true},
    {"/a/**/b", "/a/x/y/c", false},
    {"/a/**/b", "/a/b/c", false},
    {"/a/**/b", "/a/xb", false},
    {"/a/**/b", "/a/b/b", true},
    {"/a/**/b", "/b", false},
    {"/**/b", "/b", true},
    {"/**/b", "/x/y/b", true},
    {"/**/b", "/x/y/bb", false},
    {"/**/.env", "/home/u/project/.env", true},
    {"/**/.env", "/home/u/project/.env/x", false},
    {"/a/**/**/b", "/a/b", true},
    {"/a/**/**/b", "/a/x/y/z/b", true},
    {"/a/**/b/**/c", "/a/b/c", true},
    {"/a/**/b/**/c", "/a/x/b/y/z/c", true},
    {"/a/**/b/**/c", "/a/x/c", false},
    {"/a/**/*.key", "/a/k/id.key", true},
    {"/a/**/*.key", "/a/id.key", true},
    {"/a/**/*.key", "/a/k/id.pem", false},
    {"/a/**/x", "/a/x/x/x", true},
    {"/a/*/**", "/a", false},
    {"/a/*/**", "/a/b", true},
    {"/a/*/**", "/a/b/c/d", true},

    // backslash escapes: the next character is literal
    {"/a\\*b", "/a*b", true},
    {"/a\\*b", "/aXb", false},
    {"/a\\?", "/a?", true},
    {"/a\\?", "/ab", false},
    {"/\\[x]", "/[x]", true},
    {"/\\[x]", "/x", false},
    {"/\\a", "/a", true},
    {"/\\\\", "/\\", true},
    {"/\\*\\*", "/**", true},
    {"/\\*\\*", "/a", false},  // an escaped `**` is no globstar
    {"/\\*\\*", "/a/b", false},
    {"/*\\*", "/x*", true},
    {"/*\\*", "/x", false},
    {"/a\\", "/a\\", true},  // a trailing backslash is itself
};

}  // namespace

TEST_CASE("glob: match, table") {
    for (const auto& row : kMatches) {
        CAPTURE(row.pattern);
        CAPTURE(row.path);
        CHECK(sbx::glob::match(row.pattern, row.path) == row.match);
    }
}

TEST_CASE("glob: a path with no wildcard matches exactly itself") {
    for (std::string_view p : {"/", "/a", "/a/b", "/home/u/.ssh/id_rsa", "/x y/z"}) {
        CAPTURE(p);
        CHECK_FALSE(sbx::glob::has_wildcard(p));
        CHECK(sbx::glob::match(p, p));
        CHECK(sbx::glob::match(p, sbx::paths::normalize(std::string(p) + "/")));
        CHECK_FALSE(sbx::glob::match(p, sbx::paths::join(p, "child")));
    }
}

TEST_CASE("glob: a long run of stars ends in time and right") {
    // Backtracking that were exponential would not finish this.
    const std::string pattern = "/" + std::string(30, '*') + "b";
    CHECK_FALSE(sbx::glob::match("/" + std::string(30, 'a') + "*" + std::string(30, 'a') + "b",
                                 "/" + std::string(200, 'a')));
    CHECK_FALSE(sbx::glob::match(pattern, "/" + std::string(200, 'a')));
    CHECK(sbx::glob::match(pattern, "/" + std::string(200, 'a') + "b"));

    std::string globstars;
    for (int k = 0; k < 20; ++k) globstars += "/**";
    std::string deep;
    for (int k = 0; k < 50; ++k) deep += "/d";
    CHECK(sbx::glob::match(globstars + "/x", deep + "/x"));
    CHECK_FALSE(sbx::glob::match(globstars + "/x", deep + "/y"));
}

TEST_CASE("glob: has_wildcard") {
    using sbx::glob::has_wildcard;
    CHECK(has_wildcard("/a/*"));
    CHECK(has_wildcard("/a/?"));
    CHECK(has_wildcard("/a/[bc]"));
    CHECK(has_wildcard("/a/["));
    CHECK(has_wildcard("/a/**"));
    CHECK(has_wildcard("/a\\b"));  // an escape makes it a pattern too
    CHECK_FALSE(has_wildcard(""));
    CHECK_FALSE(has_wildcard("/"));
    CHECK_FALSE(has_wildcard("/a/b.c/d-e_f"));
    CHECK_FALSE(has_wildcard("/a/]"));  // `]` alone opens nothing
    CHECK_FALSE(has_wildcard("/~/!^{x,y}"));
}

TEST_CASE("glob: literal_prefix is the wildcard-free leading components") {
    using sbx::glob::literal_prefix;
    CHECK(literal_prefix("/home/u/**/.env") == "/home/u");
    CHECK(literal_prefix("/a/b") == "/a/b");
    CHECK(literal_prefix("/*") == "/");
    CHECK(literal_prefix("/") == "/");
    CHECK(literal_prefix("/**") == "/");
    CHECK(literal_prefix("/a/b*/c") == "/a");
    CHECK(literal_prefix("/a/x?/c") == "/a");
    CHECK(literal_prefix("/a/[x]/c") == "/a");
    CHECK(literal_prefix("/a/\\x/c") == "/a");  // escapes stop it too
    CHECK(literal_prefix("/a/b/c/*.txt") == "/a/b/c");

    // Whatever the pattern matches lies at or under its literal prefix.
    for (const auto& row : kMatches) {
        if (!row.match) continue;
        CAPTURE(row.pattern);
        CAPTURE(row.path);
        CHECK(sbx::paths::at_or_under(row.path, literal_prefix(row.pattern)));
    }
}

TEST_CASE("glob: may_match_at_or_under asks whether a pattern reaches into a directory") {
    using sbx::glob::may_match_at_or_under;
    // The path itself matches.
    CHECK(may_match_at_or_under("/home/u/.env", "/home/u/.env"));
    CHECK(may_match_at_or_under("/a/*", "/a/b"));
    // The path is an ancestor of a possible match.
    CHECK(may_match_at_or_under("/home/*/.env", "/"));
    CHECK(may_match_at_or_under("/home/*/.env", "/home"));
    CHECK(may_match_at_or_under("/home/*/.env", "/home/u"));
    CHECK(may_match_at_or_under("/a/**/b", "/a"));
    CHECK(may_match_at_or_under("/a/**/b", "/a/x/y/z"));
    CHECK(may_match_at_or_under("/a/**", "/a/x/y"));
    CHECK(may_match_at_or_under("/**", "/anything/at/all"));
    CHECK(may_match_at_or_under("/a/b", "/a"));
    CHECK(may_match_at_or_under("/[ab]/c", "/b"));
    // Nothing at or below the path can match.
    CHECK_FALSE(may_match_at_or_under("/home/*/.env", "/etc"));
    CHECK_FALSE(may_match_at_or_under("/home/*/.env", "/home/u/other"));
    CHECK_FALSE(may_match_at_or_under("/home/*/.env", "/home/u/.env/x"));
    CHECK_FALSE(may_match_at_or_under("/a/b", "/a/b/c"));
    CHECK_FALSE(may_match_at_or_under("/a/b", "/ab"));
    CHECK_FALSE(may_match_at_or_under("/a/b", "/a/c"));
    CHECK_FALSE(may_match_at_or_under("/a/**/b", "/b"));
    CHECK_FALSE(may_match_at_or_under("/[ab]/c", "/d"));

    // Consistency with match: a path that matches may match.
    for (const auto& row : kMatches) {
        if (!row.match) continue;
        CAPTURE(row.pattern);
        CAPTURE(row.path);
        CHECK(may_match_at_or_under(row.pattern, row.path));
        // And so may each of its ancestors.
        std::string p = row.path;
        while (p != "/") {
            p = sbx::paths::parent(p);
            CHECK(may_match_at_or_under(row.pattern, p));
        }
    }
}

TEST_CASE("glob: matches_at_or_above asks whether the path lies in something the pattern names") {
    using sbx::glob::matches_at_or_above;
    CHECK(matches_at_or_above("/home/*", "/home/u"));
    CHECK(matches_at_or_above("/home/*", "/home/u/x/y"));
    CHECK_FALSE(matches_at_or_above("/home/*", "/home"));
    CHECK_FALSE(matches_at_or_above("/home/*", "/"));
    CHECK_FALSE(matches_at_or_above("/home/*", "/homes/u"));
    CHECK(matches_at_or_above("/a/**", "/a"));
    CHECK(matches_at_or_above("/a/**", "/a/b/c"));
    CHECK_FALSE(matches_at_or_above("/a/**", "/ab/c"));
    CHECK(matches_at_or_above("/a/**/b", "/a/x/b/c"));
    CHECK(matches_at_or_above("/a/**/b", "/a/b"));
    CHECK_FALSE(matches_at_or_above("/a/**/b", "/a/x/c"));
    CHECK_FALSE(matches_at_or_above("/a/**/b", "/a"));
    CHECK(matches_at_or_above("/", "/"));
    CHECK(matches_at_or_above("/", "/any/thing"));
    CHECK(matches_at_or_above("/**", "/"));
    CHECK(matches_at_or_above("/a/b", "/a/b/c"));
    CHECK_FALSE(matches_at_or_above("/a/b", "/a/bc"));
    CHECK_FALSE(matches_at_or_above("/a/b/c", "/a/b"));
    CHECK(matches_at_or_above("/**/.git", "/src/repo/.git/config"));
    CHECK_FALSE(matches_at_or_above("/**/.git", "/src/repo/.gitignore"));

    // Consistency with match: a match holds at and under the matched path.
    for (const auto& row : kMatches) {
        if (!row.match) continue;
        CAPTURE(row.pattern);
        CAPTURE(row.path);
        CHECK(matches_at_or_above(row.pattern, row.path));
        CHECK(matches_at_or_above(row.pattern, sbx::paths::join(row.path, "below/deeper")));
    }
    // And for a literal pattern it is exactly at_or_under.
    for (std::string_view base : {"/", "/a", "/a/b"}) {
        for (std::string_view p : {"/", "/a", "/ab", "/a/b", "/a/b/c", "/a/bc", "/b"}) {
            CAPTURE(base);
            CAPTURE(p);
            CHECK(matches_at_or_above(base, p) == sbx::paths::at_or_under(p, base));
        }
    }
}

TEST_CASE("glob: overlaps_at_or_under asks whether a path one names can lie at or under one the other names") {
    struct Row {
        const char* a;
        const char* b;
        bool expected;
    };
    const Row rows[] = {
        {"/a/b/c", "/a/b", true},          // plain paths: at or under
        {"/a/b", "/a/b", true},
        {"/a", "/a/b", false},             // above is not under
        {"/ab", "/a", false},              // component boundaries
        {"/home/u/*/id_rsa", "/home/u/.ssh", true},
        {"/home/u/*.txt", "/home/u/.ssh", false},
        {"/home/u/proj/.env", "/home/u/**/.env", true},
        {"/home/u/proj/.env/x", "/home/u/**/.env", true},
        {"/home/u/proj", "/home/u/**/.env", false},
        {"/r/**", "/r/src/secret", true},  // ** can name anything below
        {"/r/src/**", "/r/src", true},
        {"/r/**/b", "/r/x/y", true},
        {"/r/*/b", "/r/x/y", false},
        {"/**", "/anything/at/all", true},
        {"/a/[bc]/d", "/a/c", true},
        {"/a/[bc]/d", "/a/e", false},
        {"/a/*/x", "/a/*/y", false},       // both wildcards meet, then x against y
        {"/a/*/x", "/a/*", true},
    };
    for (const auto& r : rows) {
        CAPTURE(r.a);
        CAPTURE(r.b);
        CHECK(sbx::glob::overlaps_at_or_under(r.a, r.b) == r.expected);
    }
}
