// The route layer of the engine, compiled once for sbx's own programs
// (sbx/core/inline.hpp): every header of include/sbx/route/, with the
// definitions at its end read here alone.
#define SBX_DEFINE_ROUTE

#include "sbx/route/bash_rule.hpp"
#include "sbx/route/hidden_code.hpp"
#include "sbx/route/removals.hpp"
#include "sbx/route/request.hpp"
#include "sbx/route/route.hpp"
#include "sbx/route/shell_line.hpp"
