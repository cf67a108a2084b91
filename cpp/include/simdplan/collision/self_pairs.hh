// simdplan/collision/self_pairs.hh: the robot's self-collision pairs on W configurations at once,
// read from the RobotView's tables (pair blocks, group bounds, certified sphere-pair lists). Kernels
// generated per robot run the same tests with the tables folded in, and this code where they do not.
#pragma once
#include <cstdint>

#include "simdplan/collision/check_state.hh"
#include "simdplan/collision/lane_scratch.hh"
#include "simdplan/config.hh"
#include "simdplan/geom/sphere_sphere.hh"
#include "simdplan/kin/robot_view.hh"

namespace simdplan::SIMDPLAN_NS {

// The sphere around one side of a pair block (RobotView::pair_block_side), radius with padding.
template <class V>
SIMDPLAN_INLINE void block_side(const RobotView& rb, const LaneScratch<V>& s, int32_t side, float padding, V& x, V& y,
                                V& z, V& r) {
  if (side >= 0) {
    s.ensure_bound(rb, side);
    x = s.bx[side], y = s.by[side], z = s.bz[side];
    r = V::fill(rb.group_bound[4 * side + 3] + padding);
    return;
  }
  const int32_t b = -1 - side;
  body_bound_centre(rb, s, b, x, y, z);
  r = V::fill(rb.body_bound[4 * b + 3] + padding);
}

// Whether the two spheres around pair block k's sides meet on some lane not done; when they do not,
// none of the block's pairs can collide there.
// PERF: the ur5's hand has 11 groups on one body, each paired with the same 4 links: 44 pair bound
// tests become 4 block tests while the hand is away from the arm: planning instructions -4.9% on
// the ur5, within +-0.7% on the panda, fetch and baxter (callgrind, AVX2).
template <class V>
SIMDPLAN_INLINE bool block_bounds_meet(const RobotView& rb, const LaneScratch<V>& s, int32_t k, float padding,
                                       typename V::Mask done) {
  V ax, ay, az, ar, bx, by, bz, br;
  block_side(rb, s, rb.pair_block_side[2 * k], padding, ax, ay, az, ar);
  block_side(rb, s, rb.pair_block_side[2 * k + 1], padding, bx, by, bz, br);
  return (sphere_sphere_hit2(ax, ay, az, ar, bx, by, bz, br) & ~done).any();
}

// Self-collision pair p (groups a < g of rb.pairs), bounds and spheres computed on demand. Returns
// true when the caller should stop.
template <class V>
SIMDPLAN_INLINE bool pair_vs_self(const RobotView& rb, const LaneScratch<V>& s, int32_t p, float padding,
                                  typename V::Mask& done, bool stop_at_first) {
  using M = typename V::Mask;
  const int32_t a = rb.pairs[2 * p], g = rb.pairs[2 * p + 1];
  const V brg = V::fill(rb.group_bound[4 * g + 3] + padding);
  const V bra = V::fill(rb.group_bound[4 * a + 3] + padding);
  s.ensure_bound(rb, a);
  s.ensure_bound(rb, g);
  auto cand = sphere_sphere_hit2(s.bx[a], s.by[a], s.bz[a], bra, s.bx[g], s.by[g], s.bz[g], brg) & ~done;
  if (!cand.any()) return false;
  s.place(rb, a);
  s.place(rb, g);
  const int32_t lb = rb.pair_ranges[2 * p], le = rb.pair_ranges[2 * p + 1];
  if (lb >= 0 && padding <= rb.list_max_padding) {
    // PERF: only the sphere pairs that can touch at all (certified per robot; for the panda's
    // wrist against its hand 54 of 216), and of those only the ones whose first sphere (the list
    // is sorted by it) reaches g's bound: the lists alone cut random configurations' kernel
    // instructions by 31% but cost planning 75% more self-collision work than the bound test
    // alone (47M vs 27M). Both together: random configurations -7.5% against lists alone;
    // planning -3.8%, within the 2% spread of those runs (callgrind, AVX2).
    int32_t cur = -1;
    M near = M::none();
    for (int32_t k = lb; k < le; ++k) {
      const int32_t i = rb.sphere_pairs[2 * k], j = rb.sphere_pairs[2 * k + 1];
      const V ri = V::fill(rb.spheres[4 * i + 3] + padding);
      if (i != cur) {
        cur = i;
        near = sphere_sphere_hit2(s.sx[i], s.sy[i], s.sz[i], ri, s.bx[g], s.by[g], s.bz[g], brg) & cand;
      }
      if (!near.any()) continue;
      const M h = sphere_sphere_hit2(s.sx[i], s.sy[i], s.sz[i], ri, s.sx[j], s.sy[j], s.sz[j],
                                     V::fill(rb.spheres[4 * j + 3] + padding)) &
                  near;
      if (h.any()) {
        if (mark_hits(h, done, cand, stop_at_first)) return true;
        near = near & ~h;
        if (!cand.any()) break;
      }
    }
    return false;
  }
  // PERF: neighbouring groups (wrist vs hand) overlap in nearly every configuration; testing each
  // sphere of the larger group against the other group's bound first cut the self-collision
  // work of random panda configurations about fourfold (callgrind, instructions per config).
  const bool a_outer = (rb.group_end[a] - rb.group_begin[a]) >= (rb.group_end[g] - rb.group_begin[g]);
  const int32_t outer = a_outer ? a : g, inner = a_outer ? g : a;
  const V bix = s.bx[inner], biy = s.by[inner], biz = s.bz[inner];
  const V bir = a_outer ? brg : bra;
  for (int32_t i = rb.group_begin[outer]; i < rb.group_end[outer] && cand.any(); ++i) {
    const V ri = V::fill(rb.spheres[4 * i + 3] + padding);
    const M near = sphere_sphere_hit2(s.sx[i], s.sy[i], s.sz[i], ri, bix, biy, biz, bir) & cand;
    if (!near.any()) continue;
    for (int32_t j = rb.group_begin[inner]; j < rb.group_end[inner]; ++j) {
      const V rj = V::fill(rb.spheres[4 * j + 3] + padding);
      const M h = sphere_sphere_hit2(s.sx[i], s.sy[i], s.sz[i], ri, s.sx[j], s.sy[j], s.sz[j], rj) & near;
      if (h.any()) {
        if (mark_hits(h, done, cand, stop_at_first)) return true;
        if (!cand.any()) break;
      }
    }
  }
  return false;
}

// Every self-collision pair on the lanes not done, pair blocks in order (a block's two bounding
// spheres first), skipping the blocks `far` proves clear; records the colliding pair in state's hint.
// Returns true when the caller should stop.
template <class V>
SIMDPLAN_INLINE bool self_pairs(const RobotView& rb, const LaneScratch<V>& s, float padding, typename V::Mask& done,
                                bool stop_at_first, CheckState& state, const float* far) {
  for (int32_t k = 0; k < rb.n_pair_blocks; ++k) {
    const int32_t pb = rb.pair_block_begin[k], pe = rb.pair_block_begin[k + 1];
    if (far && far[rb.n_groups + k] != 0.0f) continue;
    if (pe - pb > 1 && !block_bounds_meet(rb, s, k, padding, done)) continue;
    for (int32_t i = pb; i < pe; ++i) {
      const int32_t p = rb.pair_order[i];
      if (pair_vs_self(rb, s, p, padding, done, stop_at_first)) {
        state.hint_kind = 2, state.hint_pair = p;
        return true;
      }
    }
  }
  return false;
}

}  // namespace simdplan::SIMDPLAN_NS
