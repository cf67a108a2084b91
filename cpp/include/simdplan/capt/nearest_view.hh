// simdplan/capt/nearest_view.hh: a built nearest-point k-d tree as flat arrays (ISA-neutral POD).
//
// Built once by simdplan::capt::NearestTree (capt/nearest_tree.hh), read by the per-ISA query
// templates (capt/nearest_query.hh) through this view; never copied per query. World frame,
// metres, float32.
//
// Layout (L = 1 << depth leaves, depth >= 0; B = kNearestBucket):
//   splits  L - 1 floats in Eytzinger (binary-heap) order: node i has children 2i+1 and 2i+2; the
//           nodes of level l split axis l % 3 (x, y, z, x, ...). A query goes right iff its
//           coordinate >= the split. Every point below the left child has coordinate <= split and
//           every point below the right child >= split (ties may sit on both sides), which is all
//           the lower bounds of the search rely on. A split with nothing on its right is +inf.
//   px/py/pz  L * B floats each plus kNearestPad, structure of arrays, leaf-major: leaf j holds
//           slots [j * B, (j + 1) * B). Unused slots and the kNearestPad tail are +inf, so their
//           squared distance is +inf and never wins; a vector load that runs past a leaf (W > B)
//           only meets real points or +inf.
//   index   int32, parallel to px: the original row of the point in the input, -1 for padding.
//   box     6 floats per leaf, lo x y z then hi x y z: the AABB of the leaf's real points (an
//           empty leaf has lo = +inf, hi = -inf, so its distance is +inf). Only the scalar query
//           reads it (see the PERF note of nearest_sq).
//   lo, hi  the AABB of the whole cloud (lo = +inf, hi = -inf for n = 0).
// Arrays start on 64-byte boundaries, so with B = 16 a leaf's coordinates are one cache line each.
// depth < 0 (or a null view pointer) means "not built"; n = 0 builds depth 0 with one empty leaf.
#pragma once
#include <cstdint>

namespace simdplan {

// PERF: 16 points per leaf, not 8. One constant serves every ISA (the tree is built once and shared),
// and AVX-512 wants 16: a leaf is then one vector per axis and one cache line per axis, while
// 8-point leaves add a level and double the leaves visited for a scan SIMD makes almost free.
// C++ harness (/tmp/nn_h, nearest_sq over 100k queries within 0.3 m of the cloud; Xeon @ 2.5 GHz,
// min of 3 interleaved runs, the sibling vCPU busy), ns per query, B = 8 / 16:
//                              AVX-512        AVX2           scalar
//   uniform 10k, unbounded     265 / 208      219 / 238      325 / 311
//   uniform 100k, 5 cm bound   325 / 256      250 / 279      387 / 353
//   surface 100k, unbounded   1684 / 1075    1291 / 1179    1889 / 1490
//   surface 100k, 5 cm bound   515 / 364      427 / 405      554 / 488
// (the surface cloud: faces of 10 random boxes). AVX2 is within 15 % either way; 32 was within
// 10 % of 16 on AVX-512 and 5-15 % faster on AVX2.
constexpr int32_t kNearestBucket = 16;
// +inf floats after the last leaf: one of the widest vectors, so a load at any slot stays in bounds
constexpr int32_t kNearestPad = 16;

struct NearestView {
  int32_t depth;          // levels of splits; 1 << depth leaves; < 0: not built
  int32_t reserved;       // keeps the pointers 8-byte aligned; 0
  int64_t size;           // real points
  const float* splits;    // (1 << depth) - 1
  const float* px;        // (1 << depth) * kNearestBucket + kNearestPad
  const float* py;
  const float* pz;
  const int32_t* index;   // parallel to px; -1 for padding
  const float* box;       // (1 << depth) * 6: lo xyz, hi xyz of each leaf's points
  float lo[3], hi[3];     // AABB of all points
  // The distance floor grid (capt/nearest_tree.hh; built on request, else floor_cells == nullptr): one
  // byte per cell, cell (i, j, k) at (i * floor_n[1] + j) * floor_n[2] + k, plus 3 readable bytes
  // after the last. A point (x, y, z) lies in cell i = floor((x - floor_lo[0]) * floor_inv) on x
  // (float32 arithmetic, clamped into the grid; likewise y, z), and its distance to the nearest
  // cloud point is at least cell value * floor_step - floor_slack (metres).
  const uint8_t* floor_cells;
  int32_t floor_n[3];
  float floor_lo[3];
  float floor_inv;        // cells per metre
  float floor_step;       // metres per unit of a cell's value
  float floor_slack;      // metres: the rounding of the cell arithmetic
};

}  // namespace simdplan
