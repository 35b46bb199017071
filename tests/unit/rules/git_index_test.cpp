// The index reader (sbx/rules/git_index.hpp) over indexes written here, and the nested
// repositories protected_paths() protects through the gitlinks it finds, over a
// MemoryFs and over real git on disk.
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "git_index_writer.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/io/fs_view_disk.hpp"
#include "sbx/rules/git_index.hpp"
#include "sbx/rules/protected_paths.hpp"
#include "temp_dir.hpp"

namespace {

using sbx_test::index_file;
using sbx_test::IndexEntry;

constexpr std::uint32_t kFile = 0100644;
constexpr std::uint32_t kLink = 0160000;
constexpr std::uint32_t kSymlink = 0120000;

const std::vector<IndexEntry> kEntries = {
    {kFile, ".gitmodules"},
    {kFile, "README"},
    {kLink, "lib/one"},
    {kFile, "lib/one-notes.txt"},
    {kSymlink, "lib/two"},
    {kLink, "vendor/deep/three"},
    {kFile, "zz"},
};

const std::vector<std::string> kLinks = {"lib/one", "vendor/deep/three"};

sbx::GitIndexRead read(const std::string& bytes, std::size_t hash = 20) { return sbx::gitlinks(bytes, hash); }

bool has_problem(const sbx::GitIndexRead& r, std::string_view says) {
    return r.problem && r.problem->find(says) != std::string::npos;
}

}  // namespace

TEST_CASE("git index: the gitlinks of versions 2, 3 and 4, SHA-1 and SHA-256") {
    for (std::uint32_t v : {2u, 3u, 4u})
        for (std::size_t hash : {std::size_t{20}, std::size_t{32}}) {
            CAPTURE(v);
            CAPTURE(hash);
            const auto r = read(index_file(v, kEntries, hash), hash);
            CHECK_MESSAGE(!r.problem, r.problem.value_or(""));
            CHECK(r.version == v);
            CHECK(r.gitlinks == kLinks);
        }
}

TEST_CASE("git index: extended flags in version 3 and 4, refused in version 2") {
    std::vector<IndexEntry> entries = kEntries;
    entries[2].extended = true;
    entries[3].extended = true;
    for (std::uint32_t v : {3u, 4u}) {
        const auto r = read(index_file(v, entries));
        CHECK_MESSAGE(!r.problem, r.problem.value_or(""));
        CHECK(r.gitlinks == kLinks);
    }
    const auto r = read(index_file(2, entries));
    CHECK(has_problem(r, "extended flags in a version 2 index"));
    CHECK(r.gitlinks.empty());  // the first gitlink is the entry refused
}

TEST_CASE("git index: version 4 paths told as changes of the one before, long shared prefixes included") {
    const std::string base(300, 'a');  // prefixes longer than one varint byte drops
    std::vector<IndexEntry> entries = {{kFile, base + "/x"}, {kLink, base + "/y/sub"}, {kFile, "b"}, {kLink, "b2/" + base}};
    const auto r = read(index_file(4, entries));
    CHECK_MESSAGE(!r.problem, r.problem.value_or(""));
    CHECK(r.gitlinks == std::vector<std::string>{base + "/y/sub", "b2/" + base});
    CHECK(sbx_test::varint(0) == std::string(1, '\0'));
    CHECK(sbx_test::varint(127) == "\x7f");
    CHECK(sbx_test::varint(128) == std::string("\x80\x00", 2));
    CHECK(sbx_test::varint(300).size() == 2);
}

TEST_CASE("git index: a path of 4095 bytes or more has its length in the flags as 0xfff") {
    const std::string name = "d/" + std::string(5000, 'n');
    for (std::uint32_t v : {2u, 4u}) {
        const auto r = read(index_file(v, {{kLink, name}, {kLink, "e"}}));
        CHECK_MESSAGE(!r.problem, r.problem.value_or(""));
        CHECK(r.gitlinks == std::vector<std::string>{name, "e"});
    }
}

TEST_CASE("git index: an empty index and one without entries hold no gitlinks") {
    CHECK(read("").gitlinks.empty());
    CHECK_FALSE(read("").problem);
    const auto r = read(index_file(2, {}));
    CHECK_FALSE(r.problem);
    CHECK(r.gitlinks.empty());
}

TEST_CASE("git index: anything malformed stops the reading with the byte, keeping what came before") {
    const std::string good = index_file(2, kEntries);
    CHECK(has_problem(read("DIR"), "byte 3: shorter than an index header"));
    CHECK(has_problem(read("XIRC" + good.substr(4)), "byte 0: no DIRC signature"));
    std::string v5 = good;
    v5[7] = 5;
    CHECK(has_problem(read(v5), "byte 4: index version 5"));
    std::string v1 = good;
    v1[7] = 1;
    CHECK(has_problem(read(v1), "index version 1"));
    std::string many = good;
    many[8] = '\x7f';  // 2^31 entries in a few hundred bytes
    CHECK(has_problem(read(many), "byte 8:"));
    CHECK(read(many).gitlinks.empty());
    CHECK(read(good, 32).problem);  // a SHA-1 index read as SHA-256
    CHECK(has_problem(read(good, 7), "object name length"));

    // Every truncation: never a crash, and never a gitlink that is not there.
    for (std::size_t n = 1; n + 20 < good.size(); ++n) {
        CAPTURE(n);
        const auto r = read(good.substr(0, n));
        CHECK(r.problem);
        for (const auto& g : r.gitlinks) CHECK((g == kLinks[0] || g == kLinks[1]));
    }
    // Every changed byte of a v2 and a v4 index: a clean stop or the same gitlinks
    // and perhaps others (a mode byte can make any entry a gitlink), never a crash.
    for (std::uint32_t v : {2u, 4u}) {
        const std::string text = index_file(v, kEntries);
        for (std::size_t at = 0; at < text.size(); ++at)
            for (unsigned char b : {0x00u, 0x2fu, 0x80u, 0xe0u, 0xffu}) {
                std::string t = text;
                t[at] = static_cast<char>(b);
                const auto r = read(t);
                for (const auto& g : r.gitlinks) {
                    CAPTURE(g);
                    CHECK(sbx::index_detail::clean_path(g));
                }
            }
    }
}

TEST_CASE("git index: a gitlink git itself would never write is refused, naming the entry") {
    for (const char* bad : {"/abs", "a//b", "a/./b", "a/../b", "..", ".git", "sub/.GIT", "a/.Git/b", "trail/", "ctl\x01x"}) {
        CAPTURE(bad);
        const auto r = read(index_file(2, {{kLink, "ok"}, {kLink, bad}}));
        CHECK(has_problem(r, "entry 1 has a path git would not write"));
        CHECK(r.gitlinks == std::vector<std::string>{"ok"});
    }
    // A name length that disagrees with the path.
    std::string t = index_file(2, {{kLink, "abc"}});
    t[12 + 40 + 20 + 1] = 2;
    CHECK(has_problem(read(t), "name length"));
    // Padding that is not all NULs.
    t = index_file(2, {{kLink, "abc"}, {kLink, "d"}});
    t[12 + 62 + 4] = 'x';
    CHECK(has_problem(read(t), "padding"));
    // A v4 entry dropping more of the previous path than it has.
    t = index_file(4, {{kLink, "abc"}});
    t[12 + 62] = 5;
    CHECK(has_problem(read(t), "drops more"));
}

TEST_CASE("git index: the number of gitlinks kept is bounded") {
    std::vector<IndexEntry> entries;
    for (std::size_t i = 0; i <= sbx::git_index::kMaxGitlinks; ++i) entries.push_back({kLink, "m" + std::to_string(100000 + i)});
    const auto r = read(index_file(2, entries));
    CHECK(has_problem(r, "more than 1000 gitlinks"));
    CHECK(r.gitlinks.size() == sbx::git_index::kMaxGitlinks);
}

// ---------------------------------------------------------------------------
// protected_paths() and nested repositories

namespace {

sbx::ProtectedPaths compute(const sbx::FsView& fs) {
    auto pp = sbx::protected_paths("/r", "/home/u", fs);
    REQUIRE_MESSAGE(pp.has_value(), (pp ? std::string() : sbx::to_string(pp.error())));
    return std::move(*pp);
}

bool read_only(const sbx::ProtectedPaths& pp, std::string_view path) {
    const auto* p = pp.find(path);
    return p != nullptr && p->guard == sbx::Guard::read_only;
}

bool pinned(const sbx::ProtectedPaths& pp, std::string_view path) {
    const auto* p = pp.find(path);
    return p != nullptr && p->guard == sbx::Guard::pin;
}

void repo(sbx::MemoryFs& fs, const std::string& git_dir) {
    fs.file(git_dir + "/HEAD", "ref: refs/heads/main\n").file(git_dir + "/config", "[core]\n\tbare = false\n");
    fs.dir(git_dir + "/hooks").dir(git_dir + "/objects").dir(git_dir + "/refs");
}

std::string warnings_text(const sbx::ProtectedPaths& pp) {
    std::string out;
    for (const auto& w : pp.warnings) out += sbx::to_string(w) + "\n";
    return out;
}

}  // namespace

TEST_CASE("protected: a nested repository gitlinked in the index gets what a submodule's git directory gets") {
    for (std::uint32_t v : {2u, 4u}) {
        CAPTURE(v);
        sbx::MemoryFs fs;
        repo(fs, "/r/.git");
        fs.dir("/home/u");
        repo(fs, "/r/lib/one/.git");                                               // a .git directory
        fs.file("/r/vendor/deep/three/.git", "gitdir: ../../../.git/modules/three\n");  // a .git file
        repo(fs, "/r/.git/modules/three");
        repo(fs, "/r/plain/.git");  // a nested repository with no gitlink: not known at the start
        fs.file("/r/.git/index", index_file(v, kEntries));
        const auto pp = compute(fs);
        CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
        CHECK(pinned(pp, "/r/lib/one/.git"));
        for (const char* f : {"hooks", "config", "commondir", "config.worktree"}) {
            CAPTURE(f);
            CHECK(read_only(pp, std::string("/r/lib/one/.git/") + f));
            CHECK(read_only(pp, std::string("/r/.git/modules/three/") + f));
        }
        CHECK(pp.find("/r/lib/one/.git/commondir")->placeholder == sbx::Placeholder::commondir);
        CHECK(read_only(pp, "/r/vendor/deep/three/.git"));
        CHECK(pp.find("/r/lib/one/.git/config")->reason.find("nested repository lib/one") != std::string::npos);
        CHECK(pp.find("/r/plain/.git/config") == nullptr);
    }
}

TEST_CASE("protected: a nested repository's config is followed for hooksPath and includes, its own gitlinks too") {
    sbx::MemoryFs fs;
    repo(fs, "/r/.git");
    fs.dir("/home/u");
    repo(fs, "/r/sub/.git");
    fs.file("/r/sub/.git/config", "[core]\n\thooksPath = my-hooks\n[include]\n\tpath = extra.cfg\n");
    fs.file("/r/.git/index", index_file(2, {{kLink, "sub"}}));
    repo(fs, "/r/sub/inner/.git");
    fs.file("/r/sub/.git/index", index_file(3, {{kLink, "inner", true}}));
    const auto pp = compute(fs);
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
    CHECK(read_only(pp, "/r/sub/my-hooks"));
    CHECK(read_only(pp, "/r/sub/.git/extra.cfg"));
    CHECK(read_only(pp, "/r/sub/inner/.git/config"));
    CHECK(read_only(pp, "/r/sub/inner/.git/hooks"));
}

TEST_CASE("protected: a gitlink without a repository, behind a symlink or with a broken .git is no failure") {
    sbx::MemoryFs fs;
    repo(fs, "/r/.git");
    fs.dir("/home/u").dir("/r/empty");            // a gitlink not checked out
    repo(fs, "/elsewhere/x/.git");
    fs.symlink("/r/linked", "/elsewhere/x");      // git does not look beyond a symlink
    fs.file("/r/broken/.git", "not a gitdir line\n");
    fs.file("/r/.git/index", index_file(2, {{kLink, "broken"}, {kLink, "empty"}, {kLink, "linked"}, {kLink, "missing"}}));
    const auto pp = compute(fs);
    CHECK(pp.find("/r/empty/.git") == nullptr);
    CHECK(pp.find("/elsewhere/x/.git/config") == nullptr);
    CHECK(read_only(pp, "/r/broken/.git"));
    bool warned = false;
    for (const auto& w : pp.warnings) warned = warned || w.file == "/r/broken/.git";
    CHECK_MESSAGE(warned, warnings_text(pp));
}

TEST_CASE("protected: a malformed index is a warning naming it and the byte; what came before is protected") {
    sbx::MemoryFs fs;
    repo(fs, "/r/.git");
    fs.dir("/home/u");
    repo(fs, "/r/a/.git");
    std::string idx = index_file(2, {{kLink, "a"}, {kLink, "b"}});
    idx[12 + 64 + 62 + 1] = 'x';  // the second entry's path runs on
    fs.file("/r/.git/index", idx);
    const auto pp = compute(fs);
    CHECK(read_only(pp, "/r/a/.git/config"));
    bool warned = false;
    for (const auto& w : pp.warnings)
        warned = warned || (w.file == "/r/.git/index" && w.message.find("byte ") != std::string::npos);
    CHECK_MESSAGE(warned, warnings_text(pp));
}

TEST_CASE("protected: a SHA-256 repository's index is read with 32-byte object names") {
    sbx::MemoryFs fs;
    repo(fs, "/r/.git");
    fs.file("/r/.git/config", "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectFormat = sha256\n");
    fs.dir("/home/u");
    repo(fs, "/r/sub/.git");
    fs.file("/r/.git/index", index_file(2, {{kFile, "a"}, {kLink, "sub"}}, 32));
    const auto pp = compute(fs);
    CHECK_MESSAGE(pp.warnings.empty(), warnings_text(pp));
    CHECK(read_only(pp, "/r/sub/.git/config"));
}

TEST_CASE("protected: on disk, real git's index (versions 2 and 4) names the nested repository it added") {
    if (std::system("git --version >/dev/null 2>&1") != 0) {
        MESSAGE("skipped: git is not installed");
        return;
    }
    sbx_test::TempDir t;
    const std::string root = t.at("r");
    const std::string git = "GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null git -c user.name=s -c user.email=s@e.invalid";
    const std::string cmd = "mkdir -p '" + t.at("home") + "' && cd '" + t.path + "' && " + git + " init -q r && cd r && " +
                            git + " init -q sub && " + git + " -C sub commit -q --allow-empty -m x && " + git +
                            " add sub 2>/dev/null && mkdir -p d/e && " + git + " init -q d/e/deep && " + git +
                            " -C d/e/deep commit -q --allow-empty -m y && " + git + " add d/e/deep 2>/dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
    for (const char* version : {"2", "4"}) {
        CAPTURE(version);
        REQUIRE(std::system(("cd '" + root + "' && " + git + " update-index --index-version " + version).c_str()) == 0);
        sbx::DiskFs disk;
        auto pp = sbx::protected_paths(root, t.at("home"), disk);
        REQUIRE(pp.has_value());
        CHECK(read_only(*pp, root + "/sub/.git/config"));
        CHECK(read_only(*pp, root + "/sub/.git/hooks"));
        CHECK(read_only(*pp, root + "/d/e/deep/.git/config"));
        CHECK(pinned(*pp, root + "/sub/.git"));
        for (const auto& w : pp->warnings) CHECK_MESSAGE(w.file.find("index") == std::string::npos, sbx::to_string(w));
    }
}

// ---------------------------------------------------------------------------
// The record of the repositories the audit found (sbx/rules/git_record.hpp), and
// protected_paths() protecting those it names.

TEST_CASE("git record: its text reads back; anything malformed is refused whole, naming the byte") {
    using K = sbx::RecordedRepository::Kind;
    const std::vector<sbx::RecordedRepository> repos = {{K::tree, "/r/vendor/x"}, {K::bare, "/r/srv/x.git"},
                                                        {K::tree, "/r/odd\nname"}};
    const std::string text = sbx::git_record_text(repos);
    CHECK(text == std::string("sbx git record 1\nT/r/vendor/x") + '\0' + "B/r/srv/x.git" + '\0' + "T/r/odd\nname" + '\0');
    auto read = sbx::parse_git_record(text);
    CHECK_FALSE(read.problem);
    CHECK(read.repos == repos);
    CHECK(sbx::parse_git_record("sbx git record 1\n").repos.empty());
    CHECK_FALSE(sbx::parse_git_record("sbx git record 1\n").problem);

    const std::string head = "sbx git record 1\n";
    const std::pair<std::string, std::size_t> bad[] = {
        {"", 0},
        {"sbx git record 2\n", 0},
        {head + "T/r/a", head.size()},                                      // no NUL
        {head + "T/r/a" + '\0' + "X/r/b" + '\0', head.size() + 6},          // neither T nor B
        {head + '\0', head.size()},                                         // empty
        {head + "Tr/a" + '\0', head.size() + 1},                            // relative
        {head + "T/r/../a" + '\0', head.size() + 1},                        // not normalised
        {head + "T/r/a/" + '\0', head.size() + 1},
        {head + "T/" + '\0', head.size() + 1},
    };
    for (const auto& c : bad) {
        const std::string& t = c.first;
        CAPTURE(t);
        auto r = sbx::parse_git_record(t);
        REQUIRE(r.problem);
        CHECK(r.repos.empty());
        CHECK(r.problem->ends_with("at byte " + std::to_string(c.second)));
    }
    CHECK(sbx::parse_git_record(std::string(sbx::git_record::kMaxBytes + 1, 'x')).problem);

    // Past the limit the first ones are kept, and the reader says so.
    std::vector<sbx::RecordedRepository> many;
    for (std::size_t i = 0; i <= sbx::git_record::kMaxRepositories; ++i) many.push_back({K::tree, "/r/" + std::to_string(i)});
    CHECK(sbx::parse_git_record(sbx::git_record_text(many)).repos.size() == sbx::git_record::kMaxRepositories);
    std::string over = sbx::git_record_text(many) + "T/r/more" + '\0';
    auto r = sbx::parse_git_record(over);
    CHECK(r.truncated);
    CHECK(r.repos.size() == sbx::git_record::kMaxRepositories);
    CHECK(sbx::git_record_path("/home/u/.cache", "/work/my-app") == "/home/u/.cache/sbx/git/work-my%2Dapp");
}

TEST_CASE("protected: a recorded repository no gitlink names gets what a gitlinked one gets") {
    using K = sbx::RecordedRepository::Kind;
    sbx::MemoryFs fs;
    repo(fs, "/r/.git");
    fs.dir("/home/u");
    repo(fs, "/r/vendor/x/.git");  // an ignored clone, its hooks in its work tree
    fs.file("/r/vendor/x/.git/config", "[core]\n\thooksPath = .githooks\n[include]\n\tpath = ../team.cfg\n");
    fs.dir("/r/vendor/x/.githooks");
    fs.file("/r/third/y/.git", "gitdir: ../../.git/modules/y\n");  // a .git file
    repo(fs, "/r/.git/modules/y");
    repo(fs, "/r/srv/bare.git");  // a bare repository
    repo(fs, "/outside/.git");
    fs.dir("/r/real").symlink("/r/link", "real");
    repo(fs, "/r/real/z/.git");
    const std::vector<sbx::RecordedRepository> recorded = {
        {K::tree, "/r/vendor/x"}, {K::tree, "/r/third/y"},  {K::bare, "/r/srv/bare.git"},
        {K::tree, "/outside"},    {K::tree, "/r"},          {K::tree, "/r/.git/modules/y"},
        {K::tree, "/r/link/z"},   {K::tree, "/r/gone"},     {K::bare, "/r/vendor"},
    };
    auto pp = sbx::protected_paths("/r", "/home/u", fs, recorded);
    REQUIRE_MESSAGE(pp.has_value(), (pp ? std::string() : sbx::to_string(pp.error())));
    CHECK_MESSAGE(pp->warnings.empty(), warnings_text(*pp));
    CHECK(pinned(*pp, "/r/vendor/x/.git"));
    CHECK(read_only(*pp, "/r/vendor/x/.git/config"));
    CHECK(read_only(*pp, "/r/vendor/x/.git/hooks"));
    CHECK(read_only(*pp, "/r/vendor/x/.githooks"));  // its hooks path, in its own work tree
    CHECK(read_only(*pp, "/r/vendor/x/team.cfg"));   // its include, in its work tree too
    CHECK(pp->find("/r/vendor/x/.git/config")->reason.find("vendor/x, in the record of the repositories found in the root") !=
          std::string::npos);
    CHECK(read_only(*pp, "/r/third/y/.git"));
    CHECK(read_only(*pp, "/r/.git/modules/y/config"));
    CHECK(read_only(*pp, "/r/srv/bare.git/config"));
    CHECK(read_only(*pp, "/r/srv/bare.git/hooks"));
    // Outside the root, the root itself, inside its .git, behind a symlink, gone, or
    // no longer a bare repository: passed over.
    CHECK(pp->find("/outside/.git/config") == nullptr);
    CHECK(pp->find("/r/real/z/.git/config") == nullptr);
    CHECK(pp->find("/r/link/z/.git/config") == nullptr);
    CHECK(pp->find("/r/vendor/config") == nullptr);
    CHECK(pp->find("/r/gone/.git") == nullptr);
    // Without the record, the clone is not known before the run.
    CHECK(compute(fs).find("/r/vendor/x/.git/config") == nullptr);
}

TEST_CASE("git record: any bytes are read or refused whole, and what is read writes back to itself") {
    std::uint64_t x = 0x9e3779b97f4a7c15ULL;
    auto next = [&] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    const std::string alphabet = std::string("TB/.a\n", 6) + '\0';
    for (int i = 0; i < 20000; ++i) {
        std::string t(sbx::git_record::kHeader);
        if (next() % 8 == 0) t.erase(next() % t.size(), 1);
        for (std::size_t n = next() % 40; n > 0; --n) t += alphabet[next() % alphabet.size()];
        const auto r = sbx::parse_git_record(t);
        if (r.problem) {
            CHECK(r.repos.empty());
            continue;
        }
        for (const auto& repo : r.repos) {
            CHECK(sbx::paths::is_absolute(repo.path));
            CHECK(sbx::paths::normalize(repo.path) == repo.path);
        }
        CHECK(sbx::git_record_text(r.repos) == t);
    }
}

TEST_CASE("git stamps: their text reads back; anything malformed is refused whole, naming the byte") {
    const std::vector<sbx::DirectoryStamp> dirs = {{".", 1700000000, 5}, {"vendor", 0, 0}, {"vendor/x y", 12, 999999999},
                                                   {"odd\nname", 1, 0}};
    const std::string text = sbx::git_stamps_text(dirs);
    CHECK(text == std::string("sbx git dirs 1\n1700000000.000000005 .") + '\0' + "0.000000000 vendor" + '\0' +
                      "12.999999999 vendor/x y" + '\0' + "1.000000000 odd\nname" + '\0');
    auto read = sbx::parse_git_stamps(text);
    CHECK_FALSE(read.problem);
    CHECK(read.dirs == dirs);
    CHECK(sbx::parse_git_stamps("sbx git dirs 1\n").dirs.empty());

    const std::string head = "sbx git dirs 1\n";
    const std::pair<std::string, std::size_t> bad[] = {
        {"", 0},
        {"sbx git record 1\n", 0},
        {head + "1.000000000 a", head.size()},                                  // no NUL
        {head + "1.000000000 a" + '\0' + "1.00000000 b" + '\0', head.size() + 14},  // eight digits
        {head + "1 a" + '\0', head.size()},                                    // no nanoseconds
        {head + "01.000000000 a" + '\0', head.size()},                         // a leading zero
        {head + "-1.000000000 a" + '\0', head.size()},
        {head + "1.000000000" + '\0', head.size()},                            // no path
        {head + "1.000000000 " + '\0', head.size() + 12},                      // empty
        {head + "1.000000000 /r" + '\0', head.size() + 12},                    // absolute
        {head + "1.000000000 a/../b" + '\0', head.size() + 12},                // not normalised
        {head + "1.000000000 .." + '\0', head.size() + 12},
        {head + "1.000000000 a/" + '\0', head.size() + 12},
        {head + "1.000000000 ./a" + '\0', head.size() + 12},
    };
    for (const auto& c : bad) {
        const std::string& t = c.first;
        CAPTURE(t);
        auto r = sbx::parse_git_stamps(t);
        REQUIRE(r.problem);
        CHECK(r.dirs.empty());
        CHECK(r.problem->ends_with("at byte " + std::to_string(c.second)));
    }
    CHECK(sbx::parse_git_stamps(std::string(sbx::git_stamps::kMaxBytes + 1, 'x')).problem);
    CHECK(sbx::git_stamps_path("/home/u/.cache", "/work/my-app") == "/home/u/.cache/sbx/git-dirs/work-my%2Dapp");

    // Any bytes: read or refused whole, and what is read writes back to itself.
    std::uint64_t x = 0x9e3779b97f4a7c15ULL;
    auto next = [&] {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    };
    const std::string alphabet = std::string("0129. /a\n", 9) + '\0';
    for (int i = 0; i < 20000; ++i) {
        std::string t(sbx::git_stamps::kHeader);
        if (next() % 3 == 0) t += "1.000000000 ";
        for (std::size_t n = next() % 30; n > 0; --n) t += alphabet[next() % alphabet.size()];
        const auto r = sbx::parse_git_stamps(t);
        if (r.problem) {
            CHECK(r.dirs.empty());
            continue;
        }
        CHECK(sbx::git_stamps_text(r.dirs) == t);
    }
}
