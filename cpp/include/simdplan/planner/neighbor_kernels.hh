// simdplan/planner/neighbor_kernels.hh: the joint-space nearest-neighbour entry points one ISA build
// provides (ISA-neutral), for planner/nearest.hh.
//
// cpp/src/planner/neighbors_isa.cc is compiled once per ISA with that ISA's flags and
// -ffp-contract=off, and fills one NeighborKernels; neighbor_kernels_active() returns the table of
// the ISA simdplan::active() names, so simdplan.set_isa() switches these too.
// NOTE: every build computes the same squared distances, bit for bit, as the scalar sum over the
// joints in order (a multiply, then an add), and so the same neighbours and the same plans.
#pragma once
#include <cstddef>
#include <cstdint>

#include "simdplan/isa.hh"

namespace simdplan {

// Rows per block: the kernels work on 16 points at a time, so coordinate columns and k-d tree
// leaves are padded with +inf to whole blocks.
inline constexpr size_t kNeighborBlock = 16;

// A node of NearestNeighbors' k-d tree.
struct KdNode {
  int32_t axis;  // -1: leaf
  float split;   // points with coordinate < split are left
  int32_t left, right;
  int32_t begin, count;  // leaf: its rows of the leaf columns (begin a whole block), and how many
};

struct NeighborKernels {
  const char* name;  // "scalar", "avx2", "avx512"

  // The brute-force part of NearestNeighbors::nearest: points from..n-1 of coordinate columns
  // cols[0..dof-1] (each padded to whole blocks), updating (best, bd) when one is
  // strictly closer (squared distance) than bd; the first such row on ties.
  void (*sweep)(const float* const* cols, size_t n, int32_t dof, const float* q, size_t from, int32_t& best,
                float& bd);
  // The k-d tree part: updates (best, bd) when a point of the tree rooted at nodes[0] is strictly
  // closer than bd, as a depth-first search (near child first) that scans each leaf's rows in order
  // would. leaf_cols[j]: coordinate j of the points in leaf order, each leaf padded to whole blocks;
  // leaf_point: their indices.
  void (*tree_search)(const KdNode* nodes, const float* const* leaf_cols, const int32_t* leaf_point, int32_t dof,
                      const float* q, int32_t& best, float& bd);
};

// The tables of the ISA builds compiled in (nullptr where not compiled).
template <>
const NeighborKernels* isa_table<NeighborKernels, Isa::kScalar>();
template <>
const NeighborKernels* isa_table<NeighborKernels, Isa::kAvx2>();
template <>
const NeighborKernels* isa_table<NeighborKernels, Isa::kAvx512>();

// The table matching simdplan::active().name (scalar for a name without a build).
const NeighborKernels& neighbor_kernels_active();

}  // namespace simdplan
