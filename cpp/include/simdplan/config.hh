// simdplan/config.hh: the per-ISA namespace that every kernel header lives in.
//
// Kernel headers are compiled once per instruction set (cpp/src/collision/kernels_isa.cc is built three
// times with different -m flags). Their inline functions must not share symbol names across those
// builds, or the linker could hand an AVX-512 copy to a CPU without AVX-512 (an ODR violation that
// crashes only on other machines). So every kernel header opens `namespace simdplan::SIMDPLAN_NS`,
// which expands to `isa_scalar`, `isa_avx2` or `isa_avx512`. ISA-neutral headers (the *_view.hh
// PODs and kernels.hh) hold only plain structs and declarations, never inline code.
#pragma once

#ifndef SIMDPLAN_NS
#define SIMDPLAN_NS isa_scalar
#define SIMDPLAN_ISA_SCALAR 1
#endif

#if defined(__GNUC__) || defined(__clang__)
#define SIMDPLAN_INLINE inline __attribute__((always_inline))
#define SIMDPLAN_NOINLINE __attribute__((noinline))
#define SIMDPLAN_LAMBDA_INLINE __attribute__((always_inline))
#else
#define SIMDPLAN_INLINE inline
#define SIMDPLAN_NOINLINE
#define SIMDPLAN_LAMBDA_INLINE
#endif
