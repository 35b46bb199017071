// The linux layer of the engine, compiled once for sbx's own programs
// (sbx/core/inline.hpp): every header of include/sbx/linux/, with the
// definitions at its end read here alone.
#define SBX_DEFINE_LINUX

#include "sbx/linux/bwrap.hpp"
#include "sbx/linux/filter_fallback.hpp"
#include "sbx/linux/mount_flags.hpp"
#include "sbx/linux/seccomp_spec.hpp"
#include "sbx/linux/weaker_broker.hpp"
#include "sbx/linux/weaker_rules.hpp"
#include "sbx/linux/write_wall.hpp"
