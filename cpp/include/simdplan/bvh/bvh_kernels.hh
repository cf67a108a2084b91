// simdplan/bvh/bvh_kernels.hh: the BVH and sphere-triangle entry points one ISA build provides (ISA-neutral).
//
// cpp/src/bvh/bvh_isa.cc is compiled once per ISA (like nearest_isa.cc) and fills one BvhKernels;
// bvh_kernels_active() (cpp/src/bvh/bvh.cc) returns the table of the ISA that simdplan::active() names,
// so simdplan.set_isa() switches these queries too. Only PODs cross here. All inputs are finite
// (the bindings check): centres n x 3 float32 row-major, world frame, metres; radii >= 0.
#pragma once
#include <cstdint>

#include "simdplan/bvh/bvh_view.hh"
#include "simdplan/isa.hh"

namespace simdplan {

struct BvhKernels {
  const char* name;  // "scalar", "avx2", "avx512"
  int32_t lanes;     // floats per vector in this build

  // out[i] = sphere (centers[i], radii[i]) penetrates some triangle (distance < radius, strict).
  // `collides` is the measured best of the two traversals below (see bvh_isa.cc).
  void (*collides)(const TriMeshView* mesh, const float* centers, const float* radii, int64_t n, bool* out);
  void (*collides_single)(const TriMeshView* mesh, const float* centers, const float* radii, int64_t n, bool* out);
  void (*collides_packet)(const TriMeshView* mesh, const float* centers, const float* radii, int64_t n, bool* out);
  // every triangle, W spheres per vector, no tree
  void (*collides_brute)(const TriMeshView* mesh, const float* centers, const float* radii, int64_t n, bool* out);

  // Nearest triangle of each point, if strictly nearer than max_distance (>= 0, may be +inf; the
  // float32 distance compared in float32): dist[i] (metres), tri[i] (input face index) and
  // closest[3i..3i+2] (the closest point on that triangle); otherwise +inf, -1 and NaN.
  void (*distance)(const TriMeshView* mesh, const float* centers, int64_t n, float max_distance, float* dist,
                   int32_t* tri, float* closest);
  void (*distance_brute)(const TriMeshView* mesh, const float* centers, int64_t n, float max_distance, float* dist,
                         int32_t* tri, float* closest);

  // Element pairs (i of a, j of b) whose boxes overlap (closed). Writes the first `cap` pairs to
  // pairs[2k], pairs[2k+1] (in traversal order) and returns how many there are in all.
  int64_t (*pairs)(const BvhView* a, const BvhView* b, int32_t* pairs, int64_t cap);

  // Point i against its own triangle record (records + i * kTriStride): squared distance d2[i]
  // and closest point closest[3i..]; W points per vector (the tests' window on the leaf kernel).
  void (*point_triangle)(const float* records, const float* points, int64_t n, float* d2, float* closest);
};

// The tables of the ISA builds compiled in (nullptr where not compiled).
template <>
const BvhKernels* isa_table<BvhKernels, Isa::kScalar>();
template <>
const BvhKernels* isa_table<BvhKernels, Isa::kAvx2>();
template <>
const BvhKernels* isa_table<BvhKernels, Isa::kAvx512>();

// The table matching simdplan::active().name (scalar for a name without a build).
const BvhKernels& bvh_kernels_active();

}  // namespace simdplan
