// sbx/core/inline.hpp - the engine header-only, or compiled once.
//
// Each header declares its functions where it documents them and defines them
// in a block at its end. Who reads that block decides what the engine is:
//   - a project that includes sbx (the default): every program that includes
//     the header, where SBX_INLINE makes each definition inline, so the engine
//     needs no library and no build step;
//   - a program built with SBX_COMPILED_ENGINE (sbx's own programs: sbx,
//     sbx-linux, sbx-mac and the unit suite, meson.build): only the one source of
//     the header's layer (tools/engine/LAYER.cpp, which defines
//     SBX_DEFINE_LAYER), so each function is compiled once, not again in every
//     unit that includes the header.
// One-line functions, templates, constexpr functions and short members stay
// where they are, inline in both: they cost little and are worth inlining.
// tests/consumer builds the default; tests/unit/link checks that both link.
#pragma once

#if defined(SBX_COMPILED_ENGINE)
#define SBX_INLINE
#else
#define SBX_INLINE inline
#endif
