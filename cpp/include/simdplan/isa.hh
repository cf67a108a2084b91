// simdplan/isa.hh: the ISA builds, and the one declaration every per-ISA kernel family shares.
//
// A kernel family (KernelTable, CaptKernels, NearestKernels, BvhKernels, GjkKernels, IkKernels,
// NeighborKernels) is a table of entry points filled by a source compiled once per ISA. Each family
// header declares the three isa_table<> specializations; the family's *_isa.cc defines the one of the
// build it is compiled for (kThisIsa). Only the builds CMake compiled exist, so only dispatch
// (src/dispatch.hh) names the others, behind SIMDPLAN_HAVE_*.
#pragma once

namespace simdplan {

enum class Isa { kScalar, kAvx2, kAvx512 };

template <class Table, Isa isa>
const Table* isa_table();

#if defined(SIMDPLAN_ISA_AVX512)
inline constexpr Isa kThisIsa = Isa::kAvx512;
inline constexpr const char* kThisIsaName = "avx512";
#elif defined(SIMDPLAN_ISA_AVX2)
inline constexpr Isa kThisIsa = Isa::kAvx2;
inline constexpr const char* kThisIsaName = "avx2";
#else
inline constexpr Isa kThisIsa = Isa::kScalar;
inline constexpr const char* kThisIsaName = "scalar";
#endif

}  // namespace simdplan
