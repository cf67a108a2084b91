// simdplan/capt/view.hh: a built collision-affording point tree (CAPT) as flat arrays (ISA-neutral POD).
//
// The tree is built once by simdplan::capt::Tree (capt/tree.hh) and read by the per-ISA query
// templates (capt/query.hh) through this view; it is never copied per query or per planning call.
// World frame, metres, float32.
//
// Layout (n2 = 1 << depth leaves, n2 >= the number of distinct points):
//   splits  n2 - 1 floats in Eytzinger (binary-heap) order: node i has children 2i+1 and 2i+2; the
//           nodes of level l split axis l % 3 (x, y, z, x, ...). A query goes to the right child
//           iff its coordinate >= the split, so a leaf cell is the half-open box lo <= c < hi.
//   leaves  n2 records of 32 bytes: the AABB of the leaf's afforded points (empty leaves have
//           lo = +inf, hi = -inf) and the range [begin, end) of those points in px/py/pz.
//   px/py/pz  afforded points of every leaf, concatenated in leaf order (structure of arrays),
//           followed by kCaptPad points at +inf so that two vector loads starting at any point
//           inside the arrays stay in bounds. Every stored point is a real cloud point.
//   grid    coarse occupancy, two bit grids in one array (grid_bits, nullptr: none): grid[0] for
//           every radius, grid[1] for small ones (a query with rr = r + point_radius <=
//           grid_small_rr reads grid[1], the others grid[0]; where the radius range is narrow the
//           two are the same grid). A grid has cells of side 1 / inv from lo, n cells per axis;
//           cell (ix, iy, iz) is bit iz % 64 of word base + (ix * n[1] + iy) * words + iz / 64. A
//           clear bit (or a centre outside the grid) proves that no sphere the grid serves, centred
//           in that cell, reaches a point (capt_grid_near in capt/query.hh, the margins in
//           src/capt/grid.cc), so such queries skip the tree.
// Collision rule: a sphere (c, r) collides iff some point p has |c - p| < r + point_radius
// (strict; touching is free), valid only for r_min <= r <= r_max (the caller enforces it).
#pragma once
#include <cstdint>

namespace simdplan {

constexpr int32_t kCaptPad = 32;  // two of the widest vectors, in floats

struct CaptLeaf {
  float lo[3];
  float hi[3];
  int32_t begin;
  int32_t end;
};
static_assert(sizeof(CaptLeaf) == 32, "CaptLeaf is read with 32-byte strides and gathers");

struct CaptGrid {
  float lo[3];
  float inv;
  int32_t n[3];
  int32_t words;  // words per (ix, iy) line: ceil(n[2] / 64)
  int32_t base;   // first word of this grid in CaptView::grid_bits
};

struct CaptView {
  int32_t depth;             // levels of splits; 1 << depth leaves
  const float* splits;       // (1 << depth) - 1
  const CaptLeaf* leaves;    // 1 << depth
  const float* px;           // afforded points + kCaptPad
  const float* py;
  const float* pz;
  float r_min, r_max;        // query radii the tree answers exactly
  float point_radius;        // added to every query radius
  const uint64_t* grid_bits;  // see "grid" above; nullptr: none
  CaptGrid grid[2];
  float grid_small_rr;
};

}  // namespace simdplan
