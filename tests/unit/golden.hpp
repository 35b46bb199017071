// Golden files: generated text compared with a reviewed file under tests/golden/.
// Set SBX_UPDATE_GOLDEN=1 to rewrite the files instead, then review the diff.
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#ifndef SBX_SOURCE_DIR
#error "SBX_SOURCE_DIR must name the source tree (tests/meson.build sets it)"
#endif

namespace sbx_test {

// `text` against tests/golden/RELATIVE; `what` names it in a failure.
inline void check_golden(const std::string& relative, const std::string& text, const std::string& what) {
    const std::string file = std::string(SBX_SOURCE_DIR) + "/tests/golden/" + relative;
    if (const char* u = std::getenv("SBX_UPDATE_GOLDEN"); u != nullptr && std::string(u) == "1") {
        std::ofstream(file) << text;
        MESSAGE("rewrote " << file);
        return;
    }
    std::ifstream in(file);
    REQUIRE_MESSAGE(in.good(), "missing golden file " << file << " (run with SBX_UPDATE_GOLDEN=1)");
    std::stringstream want;
    want << in.rdbuf();
    CHECK_MESSAGE(text == want.str(), what << " differs from " << file << ":\n" << text);
}

}  // namespace sbx_test
