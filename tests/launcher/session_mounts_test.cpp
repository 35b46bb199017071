// settle_placeholder (launchers/linux/session_mounts.cpp): a placeholder a
// session made and mounted is put back as made, whatever a command did to it
// before its mount, on the real disk.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>

#include "../unit/temp_dir.hpp"
#include "linux/session_mounts.hpp"

namespace {

// A folder a test left 0555 is opened again before sbx_test::TempDir removes
// the tree, so that a user other than root can remove it.
void reopen(const std::string& dir) { ::chmod(dir.c_str(), 0755); }

sbx::RegisteredPlaceholder registered(sbx::Placeholder kind, const std::string& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return {kind, st.st_dev, st.st_ino, path};
}

std::string text_of(const std::string& path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
}

mode_t mode_of(const std::string& path) {
    struct stat st {};
    REQUIRE(::lstat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

}  // namespace

TEST_CASE("settle_placeholder: a placeholder as made is left alone and nothing is said") {
    sbx_test::TempDir d("sbx-settle");
    const std::string f = d.path + "/commondir";
    std::ofstream(f) << ".\n";
    ::chmod(f.c_str(), 0444);
    CHECK(sbx::linux_sandbox::settle_placeholder(registered(sbx::Placeholder::commondir, f)).empty());
    CHECK(text_of(f) == ".\n");
}

TEST_CASE("settle_placeholder: a file chmod-ed and written is put back, content and mode, and said") {
    sbx_test::TempDir d("sbx-settle");
    const std::string f = d.path + "/commondir";
    std::ofstream(f) << ".\n";
    const auto p = registered(sbx::Placeholder::commondir, f);
    ::chmod(f.c_str(), 0644);
    std::ofstream(f) << "../../elsewhere/.git\n";
    const std::string said = sbx::linux_sandbox::settle_placeholder(p);
    CHECK(said.find("put back as made") != std::string::npos);
    CHECK(text_of(f) == ".\n");
    CHECK(mode_of(f) == 0444);
}

TEST_CASE("settle_placeholder: a folder filled is emptied and made 0555 again, through no link") {
    sbx_test::TempDir d("sbx-settle");
    const std::string dir = d.path + "/hooks";
    REQUIRE(::mkdir(dir.c_str(), 0555) == 0);
    const auto p = registered(sbx::Placeholder::directory, dir);
    ::chmod(dir.c_str(), 0755);
    std::ofstream(dir + "/pre-commit") << "#!/bin/sh\n";
    const std::string victim = d.path + "/victim";
    std::ofstream(victim) << "keep\n";
    REQUIRE(::symlink(victim.c_str(), (dir + "/link").c_str()) == 0);
    ::chmod(dir.c_str(), 0555);  // filled, then closed again
    const std::string said = sbx::linux_sandbox::settle_placeholder(p);
    CHECK(said.find("emptied") != std::string::npos);
    CHECK(::access((dir + "/pre-commit").c_str(), F_OK) != 0);
    CHECK(::access((dir + "/link").c_str(), F_OK) != 0);
    CHECK(text_of(victim) == "keep\n");  // the link went, not what it named
    CHECK(mode_of(dir) == 0555);
    reopen(dir);
}

TEST_CASE("settle_placeholder: a placeholder replaced by another file is said, and the other file is left alone") {
    sbx_test::TempDir d("sbx-settle");
    const std::string f = d.path + "/config.worktree";
    std::ofstream(f) << "";
    const auto p = registered(sbx::Placeholder::file, f);
    REQUIRE(::rename(f.c_str(), (f + ".moved").c_str()) == 0);  // kept: its inode is not free to be used again
    std::ofstream(f) << "[core]\n";
    CHECK(sbx::linux_sandbox::settle_placeholder(p).find("replaced") != std::string::npos);
    CHECK(text_of(f) == "[core]\n");
}
