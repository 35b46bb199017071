// find_home_env_files(): the `.env` files under a home directory, through an FsView.
// (With the denies an agent file's layer makes of them: agent_file_test.cpp.)
#include <doctest/doctest.h>

#include <cstddef>
#include <string>

#include "sbx/core/fs_view.hpp"
#include "sbx/settings/home_env_files.hpp"

TEST_CASE("home .env files: the walk stops at its budget, and says so") {
    sbx::MemoryFs fs;
    fs.dir("/home/u/many");
    for (std::size_t i = 0; i <= sbx::kEnvWalkEntries; ++i) fs.file("/home/u/many/f" + std::to_string(i));
    const auto found = sbx::find_home_env_files("/home/u", fs);
    REQUIRE(found.warnings.size() == 1);
    CHECK(found.warnings[0].message.find("stopped after") != std::string::npos);
}
