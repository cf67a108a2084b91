// simdplan/capt/nearest_query.hh: nearest cloud point to one query point, one source for every ISA.
//
// Reference: J. H. Friedman, J. L. Bentley, R. A. Finkel, ACM TOMS 3(3), 1977,
// doi:10.1145/355744.355745 (bucketed k-d tree search); S. Arya, D. M. Mount, DCC 1993,
// doi:10.1109/DCC.1993.253111 (per-axis offsets give the distance to a cell incrementally).
//
// Depth-first search of the tree in capt/nearest_view.hh: at every split the query goes to the
// child on its side first and pushes the other one with the lower bound of its cell (the query's
// per-axis offsets to the splits that bound the cell, the one on this axis replaced by the offset to
// this split); a popped entry whose bound is no longer below the best distance is dropped. A leaf
// is skipped when its AABB is no nearer than the best, else its kNearestBucket points are scanned
// W at a time. World frame, metres, squared distances; no allocation, a fixed stack of
// kNearestMaxDepth entries (the tree's depth is at most 27 for n < 2^31).
//
// Float32 geometry. Distances are computed in float32 from the float32 points and query:
// d2 = fl(dx^2 + dy^2 + dz^2), dx = fl(p_x - c_x) (fused or not per ISA). Each operation rounds
// once (u = 2^-24), so d2 is within 5u (relative) of the exact squared distance between the
// float32 values and its square root within 3u = 1.8e-7. Against float64 inputs rounded to float32,
// add the input rounding: at most u |coordinate| per coordinate, so the distance moves by at most
// 2 sqrt(3) u M = 2.1e-7 M where M is the largest |coordinate| of the query and the points. In all:
// |returned - exact float64 distance| <= 1.8e-7 d + 2.1e-7 M (tests allow 1e-6 (d + max(M, 1 m))).
//
// The search itself loses nothing: it returns exactly the minimum of d2 over all points (and the
// bound), as a brute force with the same formula would. A lower bound is built from the same kind
// of float differences (fl(c - s) <= fl(c - p) in magnitude for a point p beyond the split s, by
// monotone rounding) and summed with at most 3u error, so it is <= (1 + 7u) times the computed d2
// of every point it covers; it prunes only after being shrunk by kNearestShrink = 1 - 2^-20 = 1 -
// 16u, i.e. strictly below every covered d2, so no point that could beat the best is ever skipped.
#pragma once
#include <cmath>  // callers take std::sqrt of the result
#include <cstdint>

#include "simdplan/capt/nearest_view.hh"
#include "simdplan/config.hh"

namespace simdplan::SIMDPLAN_NS {

// see the preamble: lower bounds are multiplied by this before they prune
constexpr float kNearestShrink = 1.0f - 1.0f / 1048576.0f;
constexpr int32_t kNearestMaxDepth = 32;

struct NearestFrame {
  uint32_t node;   // Eytzinger index
  int32_t level;   // its depth
  float lb;        // squared lower bound of its cell
  float off[3];    // per-axis offsets of the query from the cell (0 inside on that axis)
};

// squared distance from per-axis offsets (the leaf scan and the bounds share the form)
template <class V>
SIMDPLAN_INLINE V nearest_sqdist(V dx, V dy, V dz) {
  return fmadd(dx, dx, fmadd(dy, dy, dz * dz));
}

// squared distance from (x, y, z) to the AABB lo..hi (+inf for an empty box lo = +inf, hi = -inf)
SIMDPLAN_INLINE float nearest_box_sq(const float* box, float x, float y, float z) {
  auto gap = [](float lo, float hi, float c) {
    const float a = lo - c, b = c - hi;
    const float g = a > b ? a : b;
    return g > 0.0f ? g : 0.0f;
  };
  const float gx = gap(box[0], box[3], x), gy = gap(box[1], box[4], y), gz = gap(box[2], box[5], z);
  return gx * gx + gy * gy + gz * gz;
}

// Scans the kNearestBucket slots from `slot`: if a point's d2 is below *best, *best becomes the
// smallest d2 and *best_i that point's original index (first lane among equal minima).
template <class V>
SIMDPLAN_INLINE void nearest_scan(const NearestView& t, uint32_t slot, float x, float y, float z, float* best,
                                  int32_t* best_i) {
  constexpr int W = V::W, B = kNearestBucket;
  const float* px = t.px + slot;
  const float* py = t.py + slot;
  const float* pz = t.pz + slot;
  if constexpr (W == 1) {
    float b = *best;
    int32_t j = -1;
    for (int k = 0; k < B; ++k) {
      const float dx = px[k] - x, dy = py[k] - y, dz = pz[k] - z;
      const float d2 = nearest_sqdist(V{dx}, V{dy}, V{dz}).v;
      if (d2 < b) b = d2, j = k;
    }
    if (j >= 0) *best = b, *best_i = t.index[slot + uint32_t(j)];
  } else if constexpr (W >= B) {
    // one vector; with W > B it also covers the next leaf's slots (real points or +inf: harmless)
    const V d2 = nearest_sqdist(V::load(px) - V::fill(x), V::load(py) - V::fill(y), V::load(pz) - V::fill(z));
    if ((d2 < V::fill(*best)).any()) {
      const float m = d2.hmin();
      *best = m;
      *best_i = t.index[slot + uint32_t(__builtin_ctz((d2 == V::fill(m)).bits()))];
    }
  } else {
    const V cx = V::fill(x), cy = V::fill(y), cz = V::fill(z);
    alignas(64) float d[B];
    V lo = V::fill(*best);
    for (int k = 0; k < B; k += W) {
      const V d2 = nearest_sqdist(V::load(px + k) - cx, V::load(py + k) - cy, V::load(pz + k) - cz);
      d2.store(d + k);
      lo = vmin(lo, d2);
    }
    const float m = lo.hmin();
    if (m < *best) {
      int k = 0;
      while (d[k] != m) ++k;
      *best = m;
      *best_i = t.index[slot + uint32_t(k)];
    }
  }
}

// One query point: returns min(bound_sq, min over points of |c - p|^2) (float32, see preamble) and
// sets *index to the original index of the nearest point if that squared distance is strictly
// below bound_sq, else -1. bound_sq >= 0 (+inf for no bound); (x, y, z) finite. A view with
// depth < 0 (not built) returns bound_sq and -1.
template <class V>
inline float nearest_sq(const NearestView& t, float x, float y, float z, float bound_sq, int32_t* index) {
  float best = bound_sq;
  int32_t best_i = -1;
  const int32_t depth = t.depth;
  if (depth < 0) {
    *index = -1;
    return bound_sq;
  }
  const float q[3] = {x, y, z};
  const uint32_t first_leaf = (1u << depth) - 1u;
  NearestFrame stack[kNearestMaxDepth];
  int sp = 0;
  uint32_t node = 0;
  int32_t level = 0, axis = 0;
  float off[3] = {0.0f, 0.0f, 0.0f};
  for (;;) {
    // down to the leaf on the query's side, pushing every far child still worth a visit
    for (; level < depth; ++level, axis = axis == 2 ? 0 : axis + 1) {
      const float d = q[axis] - t.splits[node];
      const uint32_t right = d >= 0.0f;  // the query goes right iff coordinate >= split
      float o[3] = {off[0], off[1], off[2]};
      o[axis] = d;
      const float lb = o[0] * o[0] + o[1] * o[1] + o[2] * o[2];
      if (lb * kNearestShrink < best) stack[sp++] = {2 * node + 2 - right, level + 1, lb, {o[0], o[1], o[2]}};
      node = 2 * node + 1 + right;
    }
    const uint32_t leaf = node - first_leaf;
    if (nearest_box_sq(t.box + 6 * leaf, x, y, z) * kNearestShrink < best)
      nearest_scan<V>(t, leaf * uint32_t(kNearestBucket), x, y, z, &best, &best_i);
    // the deepest pending cell still nearer than the best
    const NearestFrame* f = nullptr;
    while (sp > 0) {
      f = &stack[--sp];
      if (f->lb * kNearestShrink < best) break;
      f = nullptr;
    }
    if (!f) break;
    node = f->node, level = f->level, axis = level % 3;
    off[0] = f->off[0], off[1] = f->off[1], off[2] = f->off[2];
  }
  *index = best_i;
  return best;
}

// nearest_sq as an out-of-line call, for per-lane callers that should not inline the search
template <class V>
SIMDPLAN_NOINLINE float nearest_sq_call(const NearestView& t, float x, float y, float z, float bound_sq,
                                        int32_t* index) {
  return nearest_sq<V>(t, x, y, z, bound_sq, index);
}

}  // namespace simdplan::SIMDPLAN_NS
