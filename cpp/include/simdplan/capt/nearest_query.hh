// simdplan/capt/nearest_query.hh: nearest cloud point to one query point, one source for every ISA.
//
// Reference: J. H. Friedman, J. L. Bentley, R. A. Finkel, ACM TOMS 3(3), 1977,
// doi:10.1145/355744.355745 (bucketed k-d tree search); S. Arya, D. M. Mount, DCC 1993,
// doi:10.1109/DCC.1993.253111 (per-axis offsets give the distance to a cell incrementally).
//
// Depth-first search of the tree in capt/nearest_view.hh. The query's per-axis offsets start at
// its distance to the cloud's AABB; at every split the query goes to the child on its side first
// and pushes the other one with the lower bound of its cell (the offsets, the one on this axis
// replaced by the offset to this split: Arya and Mount's incremental distance); a popped entry
// whose bound is no longer below the best is dropped. At a leaf the kNearestBucket points are
// scanned W at a time (the scalar build first skips a leaf whose AABB is no nearer than the best).
// World frame, metres, squared distances; no allocation, a fixed stack of kNearestMaxDepth
// entries (the depth is at most 27 for n < 2^31).
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
// bound), as a brute force with the same formula would (for d2 in float32's normal range, above
// 1.2e-38 m^2; below it the relative bounds fail by a few subnormal steps, 1e-45 m^2). A lower bound is built from the same kind
// of float differences (fl(c - s) <= fl(c - p) in magnitude for a point p beyond the split s, by
// monotone rounding) and summed with at most 3u error, so it is <= (1 + 7u) times the computed d2
// of every point it covers; it prunes only after being shrunk by kNearestShrink = 1 - 2^-20 = 1 -
// 16u, i.e. strictly below every covered d2, so no point that could beat the best is ever skipped.
#pragma once
#include <cmath>  // callers take std::sqrt of the result
#include <cstdint>
#include <type_traits>

#include "simdplan/capt/nearest_view.hh"
#include "simdplan/config.hh"

namespace simdplan::SIMDPLAN_NS {

// see the preamble: lower bounds are multiplied by this before they prune
constexpr float kNearestShrink = 1.0f - 1.0f / 1048576.0f;
constexpr int32_t kNearestMaxDepth = 32;

struct NearestFrame {
  uint32_t node;   // Eytzinger index
  uint32_t axis;   // the axis its split cuts (its level % 3)
  float lb;        // squared lower bound of its cell
  float off[3];    // per-axis offsets of the query from the cell (0 inside on that axis)
};

// squared distance from per-axis offsets (the leaf scan and the bounds share the form)
template <class V>
SIMDPLAN_INLINE V nearest_sqdist(V dx, V dy, V dz) {
  return fmadd(dx, dx, fmadd(dy, dy, dz * dz));
}

// |c - [lo, hi]| along one axis: fl(lo - c) below, fl(c - hi) above, else 0; +inf for an empty
// interval (lo = +inf, hi = -inf). NOTE: max(a, b, 0) written with fabs, exact (a + |a| is 2a or 0)
// and branch-free: GCC turned the max form into two unpredictable branches per axis.
SIMDPLAN_INLINE float nearest_gap(float lo, float hi, float c) {
  const float a = lo - c, b = c - hi;
  return 0.5f * ((a + std::fabs(a)) + (b + std::fabs(b)));
}

// squared distance from (x, y, z) to the AABB box[0..2] (lo) .. box[3..5] (hi)
SIMDPLAN_INLINE float nearest_box_sq(const float* box, float x, float y, float z) {
  const float gx = nearest_gap(box[0], box[3], x), gy = nearest_gap(box[1], box[4], y);
  const float gz = nearest_gap(box[2], box[5], z);
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
// depth < 0 (not built) returns bound_sq and -1. Squared distances that overflow float32 (beyond
// 1.8e19 m) count as +inf, i.e. never below the bound.
// PERF (C++ harness, 100k queries within 0.3 m of the cloud, interleaved medians, Xeon @ 2.5 GHz
// with the sibling vCPU busy; ns per query, unbounded / bound 5 cm):
//   - the leaf AABB test before a scan: AVX-512 uniform 10k 236 -> 343 / 171 -> 237, surface
//     100k 1427 -> 1985 / 472 -> 652 (a 16-point scan is three vector loads; the test is ~20
//     scalar ops and a mispredicted branch), AVX2 likewise 10-25 % slower; scalar surface 100k
//     3035 -> 2015 / 640 -> 643 but uniform 5-10 % slower. So only the scalar build tests it.
//   - the far child pushed without a branch (always written, sp advanced by the compare): AVX-512
//     surface 100k 1427 -> 1354 / 472 -> 382, uniform 100k 401 -> 401 / 371 -> 334.
//   - offsets starting at the cloud's AABB (tighter bounds outside it, and an immediate answer for
//     queries farther than the bound from the whole cloud): uniform 100k 413 -> 391 / 431 -> 398.
//   - per-node AABBs instead of splits (a BVH order, nearer box first): half the leaves on surface
//     clouds but 2-3x slower per level; 2x slower overall on uniform clouds. Dropped.
template <class V>
inline float nearest_sq(const NearestView& t, float x, float y, float z, float bound_sq, int32_t* index) {
  float best = bound_sq;
  int32_t best_i = -1;
  *index = -1;
  if (t.depth < 0) return bound_sq;
  // offsets from the cloud's AABB: every point is inside it
  float o0 = nearest_gap(t.lo[0], t.hi[0], x), o1 = nearest_gap(t.lo[1], t.hi[1], y);
  float o2 = nearest_gap(t.lo[2], t.hi[2], z);
  if (!((o0 * o0 + o1 * o1 + o2 * o2) * kNearestShrink < best)) return bound_sq;
  const uint32_t first_leaf = (1u << t.depth) - 1u;
  const float* splits = t.splits;
  NearestFrame stack[kNearestMaxDepth];
  int sp = 0;
  uint32_t node = 0, axis = 0;
  // one level on the constant axis A: the near child is next; the far one is pushed (written
  // always, kept iff its cell's bound is below the best)
  auto step = [&](auto A) {
    constexpr int a = decltype(A)::value;
    const float d = (a == 0 ? x : a == 1 ? y : z) - splits[node];
    const uint32_t right = d >= 0.0f;  // the query goes right iff coordinate >= split
    const float f0 = a == 0 ? d : o0, f1 = a == 1 ? d : o1, f2 = a == 2 ? d : o2;
    const float lb = f0 * f0 + f1 * f1 + f2 * f2;
    stack[sp] = {2 * node + 2 - right, a == 2 ? 0u : a + 1u, lb, {f0, f1, f2}};
    sp += lb * kNearestShrink < best;
    node = 2 * node + 1 + right;
  };
  using X = std::integral_constant<int, 0>;
  using Y = std::integral_constant<int, 1>;
  using Z = std::integral_constant<int, 2>;
  for (;;) {
    // down to the leaf on the query's side, three levels per turn so the axes are constants
    for (;;) {
      if (axis == 0) {
        if (node >= first_leaf) break;
        step(X{});
      }
      if (axis <= 1) {
        if (node >= first_leaf) break;
        step(Y{});
      }
      if (node >= first_leaf) break;
      step(Z{});
      axis = 0;
    }
    const uint32_t leaf = node - first_leaf;
    if (V::W > 1 || nearest_box_sq(t.box + 6 * leaf, x, y, z) * kNearestShrink < best)
      nearest_scan<V>(t, leaf * uint32_t(kNearestBucket), x, y, z, &best, &best_i);
    // the deepest pending cell still nearer than the best
    const NearestFrame* f = nullptr;
    while (sp > 0) {
      f = &stack[--sp];
      if (f->lb * kNearestShrink < best) break;
      f = nullptr;
    }
    if (!f) break;
    node = f->node, axis = f->axis, o0 = f->off[0], o1 = f->off[1], o2 = f->off[2];
  }
  *index = best_i;
  return best;
}

// Per lane of `lanes`: min(bound2, squared distance from (x, y, z) to the nearest cloud point),
// the very float32 value nearest_sq returns for that lane alone (same d2 formula, and both searches
// are exact); the other lanes return bound2. bound2 >= 0 per lane (+inf: no bound); coordinates
// finite in `lanes`.
// The W queries walk the tree together, for many nearby queries at once (one robot sphere in W
// configurations of an edge): a cell is entered with the lanes whose lower bound (per-lane offsets,
// as in nearest_sq) is below their best, the child that is near for most of them first, and a leaf
// is scanned once for all of them (unless its points' AABB is no nearer than the best of every
// lane still in it), one point broadcast against the W queries. Lowering any lane's best by a real
// point's distance is always sound, so the scan needs no per-lane mask.
// PERF: certified plans on MotionBenchMaker panda problems as point clouds spent 72% of their
// instructions in per-lane nearest_sq calls (about 1,000 instructions each); see group_cloud_min.
// Certified plan + simplify of 14 of them, all solved (callgrind, AVX2, total instructions): one
// lane at a time 557 M; lanes together with the axis as a variable 352 M; levels on constant axes
// (three per turn, as nearest_sq), the leaf box test and the majority's near child first 267 M.
// With a one-second time limit under callgrind (one problem timing out), each of the last three
// changes measured 2-13% alone; the majority rather than the first lane's child only 1%.
template <class V>
inline V nearest_sq_lanes(const NearestView& t, V x, V y, V z, V bound2, uint32_t lanes) {
  if (t.depth < 0 || lanes == 0) return bound2;
  if constexpr (V::W == 1) {  // one lane: the single search keeps its leaf box test (see nearest_sq)
    int32_t index;
    return V::fill(nearest_sq<V>(t, x.hmin(), y.hmin(), z.hmin(), bound2.hmin(), &index));
  }
  const V zero = V::zero(), half = V::fill(0.5f), shrink = V::fill(kNearestShrink);
  auto gap = [&](float lo, float hi, V c) {  // nearest_gap per lane
    const V a = V::fill(lo) - c, b = c - V::fill(hi);
    return half * ((a + vabs(a)) + (b + vabs(b)));
  };
  auto below = [&](V o0, V o1, V o2, V best) { return (nearest_sqdist(o0, o1, o2) * shrink < best).bits(); };
  V best = bound2;
  uint32_t mask;
  // whether the leaf's box (its points' AABB) is nearer than the best for some lane that needs it
  auto leaf_near = [&](const float* box) {
    return (mask & below(gap(box[0], box[3], x), gap(box[1], box[4], y), gap(box[2], box[5], z), best)) != 0;
  };
  V o0 = gap(t.lo[0], t.hi[0], x), o1 = gap(t.lo[1], t.hi[1], y), o2 = gap(t.lo[2], t.hi[2], z);
  mask = lanes & below(o0, o1, o2, best);
  if (!mask) return bound2;
  struct Frame {
    V off[3];
    uint32_t node, axis, mask;
  };
  Frame stack[kNearestMaxDepth];
  int sp = 0;
  const uint32_t first_leaf = (1u << t.depth) - 1u;
  uint32_t node = 0, axis = 0;
  // one level on the constant axis A (as nearest_sq's step): each lane keeps its offsets in its
  // near child and takes d on A in the far one; the child that is near for the first lane still
  // needing a cell goes next, the other is pushed if some lane needs it. False: neither is needed.
  auto step = [&](auto A) {
    constexpr int a = decltype(A)::value;
    V* o[3] = {&o0, &o1, &o2};
    const V c = a == 0 ? x : a == 1 ? y : z;
    const V d = c - V::fill(t.splits[node]);
    const auto right = d >= zero;  // as nearest_sq: right iff coordinate >= split
    const V oa = *o[a], ob = *o[(a + 1) % 3], oc = *o[(a + 2) % 3];
    const V la = select(right, d, oa), ra = select(right, oa, d);
    const V rest = fmadd(ob, ob, oc * oc);
    const uint32_t ml = mask & (fmadd(la, la, rest) * shrink < best).bits();
    const uint32_t mr = mask & (fmadd(ra, ra, rest) * shrink < best).bits();
    if (!(ml | mr)) return false;
    const bool go_right = mr && (!ml || 2 * __builtin_popcount(mask & right.bits()) > __builtin_popcount(mask));
    if (go_right ? ml : mr) {
      Frame& f = stack[sp++];
      f.off[0] = o0, f.off[1] = o1, f.off[2] = o2;
      f.off[a] = go_right ? la : ra;
      f.node = 2 * node + (go_right ? 1u : 2u), f.axis = a == 2 ? 0u : a + 1u, f.mask = go_right ? ml : mr;
    }
    *o[a] = go_right ? ra : la;
    mask = go_right ? mr : ml;
    node = 2 * node + (go_right ? 2u : 1u);
    return true;
  };
  using X = std::integral_constant<int, 0>;
  using Y = std::integral_constant<int, 1>;
  using Z = std::integral_constant<int, 2>;
  for (;;) {
    // down to a leaf, three levels per turn so the axes are constants
    bool alive = true;
    for (;;) {
      if (axis == 0) {
        if (node >= first_leaf || !(alive = step(X{}))) break;
      }
      if (axis <= 1) {
        if (node >= first_leaf || !(alive = step(Y{}))) break;
      }
      if (node >= first_leaf || !(alive = step(Z{}))) break;
      axis = 0;
    }
    const uint32_t leaf = node - first_leaf;
    if (alive && node >= first_leaf && leaf_near(t.box + 6 * leaf)) {
      const uint32_t slot = leaf * uint32_t(kNearestBucket);
      for (int k = 0; k < kNearestBucket; ++k) {
        const V dx = V::fill(t.px[slot + k]) - x, dy = V::fill(t.py[slot + k]) - y;
        const V dz = V::fill(t.pz[slot + k]) - z;
        best = vmin(best, nearest_sqdist(dx, dy, dz));
      }
    }
    mask = 0;
    while (sp > 0 && !mask) {
      const Frame& f = stack[--sp];
      mask = f.mask & below(f.off[0], f.off[1], f.off[2], best);
      node = f.node, axis = f.axis, o0 = f.off[0], o1 = f.off[1], o2 = f.off[2];
    }
    if (!mask) break;
  }
  return select(V::Mask::from_bits(lanes), best, bound2);
}

// Per lane: a lower bound (metres) of the distance from (x, y, z) to the nearest cloud point, from
// the distance floor grid (capt/nearest_view.hh; t.floor_cells must be set): one look-up, no search.
// Queries outside the grid take the nearest border cell's value (still a lower bound: see
// cpp/src/capt/distance_floor.cc); a NaN coordinate reads cell 0 on that axis. Cell indices are
// whole floats below 2^24, so the index arithmetic is exact.
template <class V>
SIMDPLAN_INLINE V nearest_floor_lanes(const NearestView& t, V x, V y, V z) {
  const V zero = V::zero(), inv = V::fill(t.floor_inv);
  // (vmax(NaN, 0) is 0 on every ISA)
  auto cell = [&](V c, int a) {
    return vmin(vmax(vfloor((c - V::fill(t.floor_lo[a])) * inv), zero), V::fill(float(t.floor_n[a] - 1)));
  };
  const V line = fmadd(cell(x, 0), V::fill(float(t.floor_n[1])), cell(y, 1));
  const V index = fmadd(line, V::fill(float(t.floor_n[2])), cell(z, 2));
  return fmadd(vgather_bytes(t.floor_cells, index), V::fill(t.floor_step), V::fill(-t.floor_slack));
}

// nearest_sq as an out-of-line call, for per-lane callers (one query per lane) that should not
// inline the search into every kernel instantiation. PERF: the call costs nothing measurable: a
// loop over 100k queries, forced inline vs this call, ns per query within 3 % either way on every
// ISA (uniform 1k-100k, unbounded and 5 cm bound; /tmp/nn_h/inl.cc). nearest_sq itself is plain
// `inline`: GCC keeps it out of line in the batch kernel too.
template <class V>
SIMDPLAN_NOINLINE float nearest_sq_call(const NearestView& t, float x, float y, float z, float bound_sq,
                                        int32_t* index) {
  return nearest_sq<V>(t, x, y, z, bound_sq, index);
}

}  // namespace simdplan::SIMDPLAN_NS
