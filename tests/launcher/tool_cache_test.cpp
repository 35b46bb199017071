// make_tool_cache (launchers/shared/tool_cache.cpp): the tool cache home and its missing
// parents are made 0700, and every way a path could lead elsewhere, or be
// changed by someone else under it, is refused before anything is made below it.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "../unit/temp_dir.hpp"
#include "shared/tool_cache.hpp"

namespace {

using sbx::launcher::make_tool_cache;

mode_t mode_of(const std::string& p) {
    struct stat st {};
    REQUIRE(::lstat(p.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

void check_refused(const std::string& path, const std::string& at, const std::string& why) {
    auto r = make_tool_cache(path, ::getuid());
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().code == sbx::Errc::invalid_argument);
    CHECK(r.error().file == at);
    CHECK_MESSAGE(r.error().message.find(why) != std::string::npos, r.error().message);
}

}  // namespace

TEST_CASE("make_tool_cache: makes the home and its missing parents 0700, and accepts it made") {
    sbx_test::TempDir tmp("sbx-tool-cache");
    ::umask(022);
    const std::string home = tmp.at("c/sbx/projects/p");
    REQUIRE(make_tool_cache(home, ::getuid()).has_value());
    for (const auto& p : {tmp.at("c"), tmp.at("c/sbx"), tmp.at("c/sbx/projects"), home}) {
        CAPTURE(p);
        CHECK(mode_of(p) == 0700);
    }
    CHECK(make_tool_cache(home, ::getuid()).has_value());  // a second run, or a parallel one
}

TEST_CASE("make_tool_cache: a symlink or a file on the way is refused, and nothing is made through it") {
    sbx_test::TempDir tmp("sbx-tool-cache");
    tmp.mkdir("elsewhere");
    tmp.mkdir("c");
    REQUIRE(::symlink(tmp.at("elsewhere").c_str(), tmp.at("c/sbx").c_str()) == 0);
    check_refused(tmp.at("c/sbx/projects/p"), tmp.at("c/sbx"), "a symlink");
    CHECK_FALSE(std::filesystem::exists(tmp.at("elsewhere/projects")));
    REQUIRE(::symlink(tmp.at("elsewhere").c_str(), tmp.at("c/home").c_str()) == 0);
    check_refused(tmp.at("c/home"), tmp.at("c/home"), "a symlink");  // the home itself
    tmp.write("c/file", "x");
    check_refused(tmp.at("c/file/p"), tmp.at("c/file"), "not a directory");
}

TEST_CASE("make_tool_cache: a folder others may write to needs a sticky bit; the home itself is yours alone") {
    sbx_test::TempDir tmp("sbx-tool-cache");
    tmp.mkdir("open");
    REQUIRE(::chmod(tmp.at("open").c_str(), 0777) == 0);
    check_refused(tmp.at("open/c/p"), tmp.at("open"), "no sticky bit");
    CHECK_FALSE(std::filesystem::exists(tmp.at("open/c")));
    REQUIRE(::chmod(tmp.at("open").c_str(), 01777) == 0);  // as /tmp
    CHECK(make_tool_cache(tmp.at("open/c/p"), ::getuid()).has_value());
    REQUIRE(::chmod(tmp.at("open/c/p").c_str(), 0777) == 0);
    check_refused(tmp.at("open/c/p"), tmp.at("open/c/p"), "others may write to it");
}

TEST_CASE("make_tool_cache: a folder of another user's is refused (as root, who can make one)") {
    if (::geteuid() != 0) return;  // only root can give a folder away
    sbx_test::TempDir tmp("sbx-tool-cache");
    tmp.mkdir("theirs");
    REQUIRE(::chown(tmp.at("theirs").c_str(), 4242, 4242) == 0);
    check_refused(tmp.at("theirs/c/p"), tmp.at("theirs"), "owned by uid 4242");
    // A home root made is not another caller's, though root's folders above it may be.
    tmp.mkdir("root-made/p");
    auto r = make_tool_cache(tmp.at("root-made/p"), 4242);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error().file == tmp.at("root-made/p"));
    CHECK(r.error().message.find("owned by uid 0, not by you (uid 4242)") != std::string::npos);
}
