// survey_git and refresh_git_record (launchers/linux/git_audit.cpp): the walk `sbx run`
// makes before a run to find the root's repositories, on the real disk. With the
// stamps of an earlier survey, a directory whose ctime did not change is not
// listed (what was recorded at it stands), and one that changed is listed again,
// so a clone made since in an old directory is found.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../unit/temp_dir.hpp"
#include "linux/git_audit.hpp"

namespace {

using K = sbx::RecordedRepository::Kind;
using sbx::launcher::GitSurvey;
using sbx::launcher::survey_git;

// A git directory as git init leaves one, as far as the walk asks.
void git_dir(const sbx_test::TempDir& t, const std::string& rel) {
    t.mkdir(rel + "/objects");
    t.mkdir(rel + "/refs/heads");
    t.mkdir(rel + "/hooks");
    std::ofstream(t.at(rel + "/HEAD")) << "ref: refs/heads/main\n";
}

bool has(const std::vector<sbx::RecordedRepository>& repos, K kind, const std::string& path) {
    return std::find(repos.begin(), repos.end(), sbx::RecordedRepository{kind, path}) != repos.end();
}

const sbx::DirectoryStamp* stamp_of(const GitSurvey& s, const std::string& rel) {
    for (const auto& d : s.directories)
        if (d.path == rel) return &d;
    return nullptr;
}

// The stamps of `s` as a survey more than two seconds later would take them: the
// directories' real ctimes (these were made just now, too recently to be trusted).
GitSurvey aged(GitSurvey s, const std::string& root) {
    for (auto& d : s.directories) {
        struct stat st {};
        REQUIRE(::lstat((d.path == "." ? root : root + "/" + d.path).c_str(), &st) == 0);
        d.sec = st.st_ctim.tv_sec;
        d.nsec = st.st_ctim.tv_nsec;
    }
    return s;
}

}  // namespace

TEST_CASE("survey_git: finds clones and bare repositories, and stamps every directory but a .git's inside") {
    sbx_test::TempDir t("sbx-survey");
    const std::string& r = t.path;
    git_dir(t, ".git");
    git_dir(t, "vendor/x/.git");
    git_dir(t, "srv/b.git");
    t.mkdir("src/deep/er");
    const auto s = survey_git(r);
    CHECK(has(s.repositories, K::tree, r + "/vendor/x"));
    CHECK(has(s.repositories, K::bare, r + "/srv/b.git"));
    CHECK(s.repositories.size() == 2);  // not the root itself
    for (const char* d : {".", "vendor", "vendor/x", "srv", "srv/b.git", "srv/b.git/objects", "src/deep/er"}) {
        CAPTURE(d);
        REQUIRE(stamp_of(s, d) != nullptr);
        CHECK(stamp_of(s, d)->sec == 0);  // made just now: too recent to trust
    }
    CHECK(stamp_of(s, ".git") == nullptr);
    CHECK(stamp_of(s, "vendor/x/.git") == nullptr);
    CHECK(stamp_of(s, "vendor/x/.git/objects") == nullptr);
}

TEST_CASE("survey_git: with stamps, unchanged directories are not listed and changed ones are") {
    sbx_test::TempDir t("sbx-survey");
    const std::string& r = t.path;
    git_dir(t, ".git");
    git_dir(t, "vendor/x/.git");
    t.mkdir("third/party");
    t.mkdir("gone/below");
    t.mkdir("swapped/below");
    auto known = aged(survey_git(r), r);
    // A repository the record names in a directory that has not changed stands
    // (the directory is not listed: it holds no .git); one in a directory that
    // changed is looked for again.
    known.repositories.push_back({K::tree, r + "/third/party"});
    known.repositories.push_back({K::tree, r + "/vendor/x"});

    SUBCASE("nothing changed: no listing, the record stands") {
        const auto s = survey_git(r, &known);
        CHECK(has(s.repositories, K::tree, r + "/third/party"));
        CHECK(has(s.repositories, K::tree, r + "/vendor/x"));
        auto by_path = [](const auto& a, const auto& b) { return a.path < b.path; };
        auto mine = s.directories, theirs = known.directories;
        std::sort(mine.begin(), mine.end(), by_path);
        std::sort(theirs.begin(), theirs.end(), by_path);
        CHECK(mine == theirs);
    }
    SUBCASE("a clone made since in an old directory, however deep, is found") {
        git_dir(t, "third/party/y/.git");
        git_dir(t, "third/party/z/a/b/.git");
        const auto s = survey_git(r, &known);
        CHECK(has(s.repositories, K::tree, r + "/third/party/y"));
        CHECK(has(s.repositories, K::tree, r + "/third/party/z/a/b"));
        // Its directory changed, so it was listed: it holds no .git, and the
        // record's entry goes.
        CHECK_FALSE(has(s.repositories, K::tree, r + "/third/party"));
        git_dir(t, "vendor/n/.git");
        const auto s2 = survey_git(r, &known);
        CHECK(has(s2.repositories, K::tree, r + "/vendor/n"));
        CHECK(has(s2.repositories, K::tree, r + "/vendor/x"));  // vendor/x itself did not change
    }
    SUBCASE("git init in an old directory, and a bare repository made in one, are found") {
        git_dir(t, "gone/below/.git");
        git_dir(t, "third/party/srv.git");
        const auto s = survey_git(r, &known);
        CHECK(has(s.repositories, K::tree, r + "/gone/below"));
        CHECK(has(s.repositories, K::bare, r + "/third/party/srv.git"));
    }
    SUBCASE("a repository removed since is dropped") {
        std::filesystem::remove_all(t.at("vendor/x"));
        const auto s = survey_git(r, &known);
        CHECK_FALSE(has(s.repositories, K::tree, r + "/vendor/x"));
        CHECK(stamp_of(s, "vendor/x") == nullptr);
    }
    SUBCASE("a directory gone, or swapped for a link to one with a clone: nothing below it is trusted") {
        std::filesystem::remove_all(t.at("gone"));
        std::filesystem::remove_all(t.at("swapped"));
        t.mkdir("elsewhere/below");
        git_dir(t, "elsewhere/below/.git");
        std::filesystem::create_directory_symlink(t.at("elsewhere"), t.at("swapped"));
        const auto s = survey_git(r, &known);
        CHECK(stamp_of(s, "gone") == nullptr);
        CHECK(stamp_of(s, "gone/below") == nullptr);
        CHECK(stamp_of(s, "swapped") == nullptr);
        CHECK(stamp_of(s, "swapped/below") == nullptr);
        CHECK(has(s.repositories, K::tree, r + "/elsewhere/below"));  // found where it is
        CHECK_FALSE(has(s.repositories, K::tree, r + "/swapped/below"));
    }
}

TEST_CASE("refresh_git_record: keeps the record and the stamps, and rewrites neither when nothing changed") {
    sbx_test::TempDir t("sbx-survey");
    const std::string root = t.at("root");
    git_dir(t, "root/.git");
    git_dir(t, "root/vendor/x/.git");
    const std::string record = t.at("cache/sbx/git/root"), stamps = t.at("cache/sbx/git-dirs/root");
    REQUIRE(sbx::launcher::refresh_git_record(record, stamps, root).has_value());
    auto read = [](const std::string& p) {
        std::ifstream in(p, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    CHECK(read(record) == std::string("sbx git record 1\nT") + root + "/vendor/x" + '\0');
    const auto first = sbx::parse_git_stamps(read(stamps));
    REQUIRE_FALSE(first.problem);
    CHECK(first.dirs.size() == 3);  // ., vendor, vendor/x
    struct stat before {};
    REQUIRE(::stat(stamps.c_str(), &before) == 0);
    REQUIRE(sbx::launcher::refresh_git_record(record, stamps, root).has_value());
    struct stat after {};
    REQUIRE(::stat(stamps.c_str(), &after) == 0);
    CHECK(after.st_ino == before.st_ino);  // not written again

    // A clone made since is recorded by the next refresh.
    git_dir(t, "root/vendor/y/.git");
    REQUIRE(sbx::launcher::refresh_git_record(record, stamps, root).has_value());
    CHECK(read(record) == std::string("sbx git record 1\nT") + root + "/vendor/x" + '\0' + "T" + root + "/vendor/y" + '\0');

    // Malformed stamps are a walk of the whole root, and are written anew.
    std::ofstream(stamps, std::ios::trunc) << "not stamps";
    git_dir(t, "root/vendor/z/.git");
    REQUIRE(sbx::launcher::refresh_git_record(record, stamps, root).has_value());
    CHECK(read(record).find(root + "/vendor/z") != std::string::npos);
    CHECK_FALSE(sbx::parse_git_stamps(read(stamps)).problem);
}
