// The second unit of sbx-every-header (every_header_a.cpp says why).
#include "every_header.hpp"

bool sbx_consumer_normalizes() { return sbx::paths::normalize("/a/../b") == "/b"; }
