// The unit suite's two parts each include every engine header first
// (every_header.hpp): that sbx-unit links at all is the check that no header
// defines a function or variable that is neither inline nor constexpr. What
// runs here only shows the program is the one so linked.
#include <doctest/doctest.h>

#include "sbx/core/paths.hpp"

TEST_CASE("every header, included by both parts of the suite, links") {
    CHECK(sbx::paths::normalize("/a/../b") == "/b");
}
