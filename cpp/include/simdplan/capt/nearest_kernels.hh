// simdplan/capt/nearest_kernels.hh: the nearest-point entry points one ISA build provides (ISA-neutral).
//
// cpp/src/capt/nearest_isa.cc is compiled once per ISA (like capt_isa.cc) and fills one NearestKernels;
// nearest_kernels_active() (cpp/src/capt/nearest_tree.cc) returns the table of the ISA that
// simdplan::active() names, so simdplan.set_isa() switches these queries too. Only PODs cross here.
#pragma once
#include <cstdint>

#include "simdplan/capt/nearest_view.hh"
#include "simdplan/isa.hh"

namespace simdplan {

struct NearestKernels {
  const char* name;  // "scalar", "avx2", "avx512"
  int32_t lanes;     // floats per vector in this build

  // n query points (centers n x 3 float32 row-major, finite; the caller checks). For each:
  // dist_out[i] = distance (metres, float32) to the nearest cloud point and index_out[i] = its
  // original row, if that distance is strictly below max_distance (float32 compare of the
  // float32 distance; max_distance >= 0, may be +inf); else dist_out[i] = +inf, index_out[i] = -1.
  // One query at a time (nearest_sq in capt/nearest_query.hh), leaf points W at a time.
  void (*nearest)(const NearestView* tree, const float* centers, int64_t n, float max_distance, float* dist_out,
                  int32_t* index_out);
  // The same distances (bit for bit, no indices) with one max_distance per query (n floats), W
  // queries at a time walking the tree together: nearest_sq_lanes, the search the distance kernels
  // run for one robot sphere in W configurations (there for their speed, here for tests).
  void (*nearest_lanes)(const NearestView* tree, const float* centers, int64_t n, const float* max_distance,
                        float* dist_out);
  // floor_out[i] = the distance floor grid's lower bound (metres) of query i's distance to the
  // cloud (nearest_floor_lanes, W queries at a time); the tree must have its floor grid.
  void (*floor_lanes)(const NearestView* tree, const float* centers, int64_t n, float* floor_out);
};

// The tables of the ISA builds compiled in (nullptr where not compiled).
template <>
const NearestKernels* isa_table<NearestKernels, Isa::kScalar>();
template <>
const NearestKernels* isa_table<NearestKernels, Isa::kAvx2>();
template <>
const NearestKernels* isa_table<NearestKernels, Isa::kAvx512>();

// The table matching simdplan::active().name (scalar for a name without a build).
const NearestKernels& nearest_kernels_active();

}  // namespace simdplan
