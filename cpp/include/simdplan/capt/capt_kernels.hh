// simdplan/capt/capt_kernels.hh: the CAPT query entry points one ISA build provides (ISA-neutral).
//
// cpp/src/capt/capt_isa.cc is compiled once per ISA (like kernels_isa.cc) and fills one CaptKernels;
// capt_kernels_active() (cpp/src/capt/tree.cc) returns the table of the ISA that simdplan::active()
// names, so simdplan.set_isa() switches the standalone CAPT queries too. Only PODs cross this line.
#pragma once
#include <cstdint>

#include "simdplan/capt/view.hh"
#include "simdplan/isa.hh"

namespace simdplan {

struct CaptKernels {
  const char* name;  // "scalar", "avx2", "avx512"
  int32_t lanes;     // floats per vector in this build

  // n spheres (centres n x 3 float32 row-major, radii n float32): out[i] = 1 iff sphere i
  // penetrates a point, |c - p| < r + point_radius; else 0. Returns false, with `out` unspecified,
  // if some radius lies outside [r_min, r_max] (NaN included) or some centre is not finite: the
  // check rides on the query's own loads (PERF: a separate pass over the inputs took more than half
  // of CAPT.collides on spheres the occupancy grid clears), and the caller words the error.
  // One sphere at a time: scalar descent, afforded points tested W at a time.
  bool (*collides_one)(const CaptView* tree, const float* centers, const float* radii, int64_t n, uint8_t* out);
  // Same answers, W spheres per call of the lane-batched capt_hit<V> (the form the batch kernels use).
  bool (*collides_lanes)(const CaptView* tree, const float* centers, const float* radii, int64_t n, uint8_t* out);
};

// The tables of the ISA builds compiled in (nullptr where not compiled).
template <>
const CaptKernels* isa_table<CaptKernels, Isa::kScalar>();
template <>
const CaptKernels* isa_table<CaptKernels, Isa::kAvx2>();
template <>
const CaptKernels* isa_table<CaptKernels, Isa::kAvx512>();

// The table matching simdplan::active().name (scalar for a name without a CAPT build).
const CaptKernels& capt_kernels_active();

}  // namespace simdplan
