// The core layer of the engine, compiled once for sbx's own programs
// (sbx/core/inline.hpp): every header of include/sbx/core/, with the
// definitions at its end read here alone.
#define SBX_DEFINE_CORE

#include "sbx/core/ascii.hpp"
#include "sbx/core/error.hpp"
#include "sbx/core/expected.hpp"
#include "sbx/core/fs_view.hpp"
#include "sbx/core/glob.hpp"
#include "sbx/core/inline.hpp"
#include "sbx/core/json.hpp"
#include "sbx/core/json_write.hpp"
#include "sbx/core/paths.hpp"
#include "sbx/core/provenance.hpp"
