// The mac layer of the engine, compiled once for sbx's own programs
// (sbx/core/inline.hpp): every header of include/sbx/mac/, with the
// definitions at its end read here alone.
#define SBX_DEFINE_MAC

#include "sbx/mac/profile.hpp"
#include "sbx/mac/quote.hpp"
#include "sbx/mac/rule_order.hpp"
#include "sbx/mac/sbpl_regex.hpp"
