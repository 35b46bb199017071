// The review layer of the engine, compiled once for sbx's own programs
// (sbx/core/inline.hpp): every header of include/sbx/review/, with the
// definitions at its end read here alone.
#define SBX_DEFINE_REVIEW

#include "sbx/review/check.hpp"
#include "sbx/review/check_file.hpp"
#include "sbx/review/decision_diff.hpp"
#include "sbx/review/decision_json.hpp"
#include "sbx/review/value_diff.hpp"
