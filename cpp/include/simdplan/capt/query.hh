// simdplan/capt/query.hh: sphere against point cloud through a CAPT, one source for every ISA.
//
// Reference: C. W. Ramsey, Z. Kingston, W. Thomason, L. E. Kavraki, "Collision-Affording Point
// Trees: SIMD-Amenable Nearest Neighbors for Fast Collision Checking", RSS 2024, arXiv:2406.02807.
//
// A query descends the tree in `depth` branch-free steps (one comparison per level, no data-
// dependent branches), rejects by the distance to the leaf's AABB, and otherwise tests the
// leaf's afforded points W at a time. Layout of the tree: capt/view.hh. World frame, metres.
// Rule: sphere (c, r) collides iff some point p has |c - p| < r + point_radius (strict: touching
// is free). Exact only for r_min <= r <= r_max: the caller enforces that contract (the tree
// answers wrongly outside it, by design of the data structure).
//
// Exactness in float32: every stored point is a real cloud point, so testing points beyond a
// leaf's range (the last vector load may read the next leaf's points or the +inf pad) can only
// find real collisions. The AABB test is computed like the point test, and rounding is monotone,
// so its squared distance never exceeds a contained point's; it rejects only above a relative
// slack of 2^-18 anyway, so a compiler that fuses one multiply-add and not the other cannot flip
// a boundary case. The builder (capt/tree.hh) adds the matching margins to what it affords.
#pragma once
#include <cstdint>

#include "simdplan/capt/view.hh"
#include "simdplan/config.hh"

namespace simdplan::SIMDPLAN_NS {

// 1 + 2^-18: see the preamble
constexpr float kCaptBoxSlack = 1.0f + 1.0f / 262144.0f;

// the leaf whose cell holds (x, y, z): depth comparisons, right child iff coordinate >= split
SIMDPLAN_INLINE uint32_t capt_leaf(const CaptView& t, float x, float y, float z) {
  const float* s = t.splits;
  uint32_t i = 0;
  int32_t l = 0;
  // levels in groups of three so the axis is a constant in each step
  for (; l + 3 <= t.depth; l += 3) {
    i = 2 * i + 1 + uint32_t(x >= s[i]);
    i = 2 * i + 1 + uint32_t(y >= s[i]);
    i = 2 * i + 1 + uint32_t(z >= s[i]);
  }
  if (l < t.depth) i = 2 * i + 1 + uint32_t(x >= s[i]), ++l;
  if (l < t.depth) i = 2 * i + 1 + uint32_t(y >= s[i]);
  return i - ((1u << t.depth) - 1u);
}

// squared distance from per-axis offsets; the point and AABB tests share it (see preamble)
template <class V>
SIMDPLAN_INLINE V capt_sqdist(V dx, V dy, V dz) {
  return fmadd(dx, dx, fmadd(dy, dy, dz * dz));
}

// true if the squared distance from (x,y,z) to the leaf's AABB is below rr2 (with the slack)
SIMDPLAN_INLINE bool capt_box_near(const CaptLeaf& leaf, float x, float y, float z, float rr2) {
  auto gap = [](float lo, float hi, float c) {
    const float a = lo - c, b = c - hi;
    const float g = a > b ? a : b;
    return g > 0.0f ? g : 0.0f;
  };
  const float dx = gap(leaf.lo[0], leaf.hi[0], x);
  const float dy = gap(leaf.lo[1], leaf.hi[1], y);
  const float dz = gap(leaf.lo[2], leaf.hi[2], z);
  return dx * dx + (dy * dy + dz * dz) < rr2 * kCaptBoxSlack;
}

// true if some afforded point of `leaf` is strictly closer than sqrt(rr2) to (x, y, z)
// PERF: the AABB test and the early exits are branches on random data; on short lists they cost
// more in mispredictions than they save. Lists of up to two vectors are tested whole, without the
// AABB; longer ones are rejected by the AABB first and then tested two vectors per exit check
// (AVX2, random queries, best of 25 runs: 1k points 63 -> 43 ns; 10k points unchanged at 135 ns,
// where cache misses on the leaf and its points dominate).
template <class V>
SIMDPLAN_INLINE bool capt_leaf_hit(const CaptView& t, const CaptLeaf& leaf, float x, float y, float z, float rr2) {
  const V cx = V::fill(x), cy = V::fill(y), cz = V::fill(z), r2 = V::fill(rr2);
  auto chunk = [&](int32_t j) {
    const V dx = V::load(t.px + j) - cx;
    const V dy = V::load(t.py + j) - cy;
    const V dz = V::load(t.pz + j) - cz;
    return capt_sqdist(dx, dy, dz) < r2;
  };
  int32_t j = leaf.begin;
  if (leaf.end - j > 2 * V::W) {
    if (!capt_box_near(leaf, x, y, z, rr2)) return false;
    for (; j + 2 * V::W < leaf.end; j += 2 * V::W)
      if ((chunk(j) | chunk(j + V::W)).any()) return true;
  }
  // at most two vectors left (reading past the end only meets real points or the +inf pad)
  return (chunk(j) | chunk(j + V::W)).any();
}

// one sphere: true if sphere (x,y,z,r) penetrates a point (|c - p| < r + point_radius); r in [r_min, r_max]
template <class V>
SIMDPLAN_INLINE bool capt_hit_one(const CaptView& t, float x, float y, float z, float r) {
  const float rr = r + t.point_radius;
  return capt_leaf_hit<V>(t, t.leaves[capt_leaf(t, x, y, z)], x, y, z, rr * rr);
}

// per lane: true if sphere (x,y,z,r) penetrates a point (|c - p| < r + point_radius); r in [r_min, r_max]
// Lanes are independent spheres (e.g. one robot sphere of W configurations).
template <class V>
typename V::Mask capt_hit(const CaptView& t, V x, V y, V z, V r) {
  constexpr int W = V::W;
  alignas(64) float xs[W], ys[W], zs[W], rs[W];
  x.store(xs);
  y.store(ys);
  z.store(zs);
  (r + V::fill(t.point_radius)).store(rs);
  // descend all lanes level by level so their independent loads overlap
  uint32_t idx[W];
  for (int k = 0; k < W; ++k) idx[k] = 0;
  const float* s = t.splits;
  const float* q[3] = {xs, ys, zs};
  for (int32_t l = 0, axis = 0; l < t.depth; ++l, axis = axis == 2 ? 0 : axis + 1) {
    const float* qa = q[axis];
    for (int k = 0; k < W; ++k) idx[k] = 2 * idx[k] + 1 + uint32_t(qa[k] >= s[idx[k]]);
  }
  const uint32_t first_leaf = (1u << t.depth) - 1u;
  // PERF: start every lane's loads of its afforded points before testing any lane, so the cache
  // misses of the W lanes overlap (AVX-512, random queries over 10k points, best of 25: 126-150 -> 103-110 ns per sphere)
  const CaptLeaf* leaf[W];
  for (int k = 0; k < W; ++k) leaf[k] = &t.leaves[idx[k] - first_leaf];
#if defined(__GNUC__)
  for (int k = 0; k < W; ++k) {
    __builtin_prefetch(t.px + leaf[k]->begin);
    __builtin_prefetch(t.py + leaf[k]->begin);
    __builtin_prefetch(t.pz + leaf[k]->begin);
  }
#endif
  uint32_t bits = 0;
  for (int k = 0; k < W; ++k)
    if (capt_leaf_hit<V>(t, *leaf[k], xs[k], ys[k], zs[k], rs[k] * rs[k])) bits |= 1u << k;
  return V::Mask::from_bits(bits);
}

}  // namespace simdplan::SIMDPLAN_NS
