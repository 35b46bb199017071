// The unit suite's two parts each include every engine header first
// (every_header.hpp), and the suite links the engine compiled once: that
// sbx-unit links at all is the check that each header's definitions are
// compiled in its layer's source alone (sbx/core/inline.hpp). What runs here only
// shows the program is the one so linked. The header-only engine has the same
// check in tests/consumer (sbx-every-header).
#include <doctest/doctest.h>

#include "sbx/core/paths.hpp"

TEST_CASE("every header, included by both parts of the suite, links") {
    CHECK(sbx::paths::normalize("/a/../b") == "/b");
}
