// A fresh directory under /tmp for tests that need the real disk, removed with
// everything in it when the guard goes, whether the test passed, failed or threw.
// `path` has no symlinks in it.
#pragma once

#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace sbx_test {

class TempDir {
public:
    explicit TempDir(const std::string& name = "sbx-test") {
        std::string templ = "/tmp/" + name + "-XXXXXX";
        const char* made = ::mkdtemp(templ.data());
        REQUIRE_MESSAGE(made != nullptr, "mkdtemp failed");  // nothing made, nothing to remove
        created_ = made;
        char real[PATH_MAX];
        REQUIRE(::realpath(made, real) != nullptr);
        path = real;
    }
    ~TempDir() {
        std::error_code ec;
        if (!created_.empty()) std::filesystem::remove_all(created_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;

    std::string at(const std::string& rel) const { return path + "/" + rel; }
    // The directory and any missing parents.
    void mkdir(const std::string& rel) const {
        std::error_code ec;
        std::filesystem::create_directories(at(rel), ec);
        REQUIRE_MESSAGE(!ec, "mkdir " << rel << ": " << ec.message());
    }
    // An empty file that must not exist yet.
    void touch(const std::string& rel) const {
        const int fd = ::open(at(rel).c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
        REQUIRE(fd >= 0);
        ::close(fd);
    }
    // A file with `text`, its parents made as needed.
    void write(const std::string& rel, const std::string& text) const {
        std::filesystem::create_directories(std::filesystem::path(at(rel)).parent_path());
        std::ofstream out(at(rel), std::ios::binary);
        out << text;
        REQUIRE_MESSAGE(out.good(), "write " << rel);
    }
    void symlink(const std::string& rel, const std::string& target) const {
        REQUIRE(::symlink(target.c_str(), at(rel).c_str()) == 0);
    }
    void link(const std::string& rel, const std::string& existing) const {
        REQUIRE(::link(at(existing).c_str(), at(rel).c_str()) == 0);
    }

    std::string path;

private:
    std::string created_;
};

}  // namespace sbx_test
