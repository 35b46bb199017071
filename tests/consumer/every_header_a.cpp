// With every_header_b.cpp, a program of two units that each include every
// header of the engine, as a project that includes sbx does (header-only: no
// SBX_COMPILED_ENGINE, sbx/core/inline.hpp). A definition in a header that is
// neither inline nor constexpr would be in both units, and the program would
// not link. build_test.sh copies every_header.hpp here from tests/unit/.
#include "every_header.hpp"

int main() { return sbx::ascii_lower(std::string_view("SBX")) == "sbx" ? 0 : 1; }
