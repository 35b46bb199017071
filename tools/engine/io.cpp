// The io layer of the engine, compiled once for sbx's own programs
// (sbx/core/inline.hpp): every header of include/sbx/io/, with the
// definitions at its end read here alone.
#define SBX_DEFINE_IO

#include "sbx/io/fs_view_disk.hpp"
#include "sbx/io/placeholder_registry.hpp"
#include "sbx/io/settings_files.hpp"
