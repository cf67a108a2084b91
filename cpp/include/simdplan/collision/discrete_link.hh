// simdplan/collision/discrete_link.hh: discrete Link(a, b) for W samples at a time, and the tests its
// first chunk of samples proves needless for the later chunks.
//
// The samples go into the lanes in rake order (the first chunk spans the edge, so most colliding
// edges end there) and each chunk runs the fused FK + collision program of validity.hh. After a free
// first chunk, edge_far marks the tests that no later sample can fail, by the robot's motion bounds
// (RobotView: sphere, group, pair and pair block reach, as certified Link uses them), and the later
// chunks skip them: the answer is the same, bit for bit, as without the skip.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "simdplan/collision/validity.hh"

namespace simdplan::SIMDPLAN_NS {

// Margin of edge_far's tests (metres): covers the float32 rounding of frames, samples and bounds
// (about 1e-6 m for a robot within a few metres of the origin) many times over.
constexpr float kFarMargin = 1e-4f;
// Chunks of samples from which an edge takes edge_far's skip.
// PERF: side by side, plans identical (generated problems, five robots): from two chunks (AVX-512's
// 32-sample planner edges) planning medians and means within noise; from three, AVX2 (four chunks
// per planner edge) planning medians -7% (iiwa) to -20% (dual arm), means 0 to -15%, and AVX-512
// discrete simplification (long shortcuts) -9% (panda) to -23% (dual arm).
constexpr int64_t kFarChunks = 3;

// edge_far's test of a sphere (a group's or body's bound, radius r already grown) against the
// obstacles whose AABB its lanes' box meets, on lanes `live`; refine(o, kind) decides an obstacle the
// bound meets (true: near).
template <class V, class Refine>
SIMDPLAN_INLINE bool bound_far(const EnvironmentView& env, V cx, V cy, V cz, float r, typename V::Mask live,
                               Refine refine) {
  const V rv = V::fill(r);
  const float lo[3] = {cx.hmin() - r, cy.hmin() - r, cz.hmin() - r};
  const float hi[3] = {cx.hmax() + r, cy.hmax() + r, cz.hmax() + r};
  return !for_each_candidate<V>(env, lo, hi, [&](int32_t idx) {
    const int32_t kind = record_kind(env.obstacle_kind[idx]);
    const float* o = obstacle_data(env, idx);
    return (obstacle_hit(kind, o, cx, cy, cz, rv) & live).any() && refine(o, kind);
  });
}

// edge_far's test of group g against the environment on lanes `live`: true when no obstacle comes
// within `grow` of the group's bound, or else of any of its spheres.
template <class V>
SIMDPLAN_INLINE bool group_far(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s, int32_t g,
                               float grow, float padding, typename V::Mask live) {
  s.ensure_bound(rb, g);
  return bound_far(env, s.bx[g], s.by[g], s.bz[g], rb.group_bound[4 * g + 3] + padding + grow, live,
                   [&](const float* o, int32_t kind) {
                     s.place(rb, g);
                     for (int32_t k = rb.group_begin[g]; k < rb.group_end[g]; ++k) {
                       const V r = V::fill(rb.spheres[4 * k + 3] + padding + grow);
                       if ((obstacle_hit(kind, o, s.sx[k], s.sy[k], s.sz[k], r) & live).any()) return true;
                     }
                     return false;
                   });
}

// edge_far's test of self-collision pair p on lanes `live`: with the certified sphere pairs (when
// the kernel uses them), each of those apart by more than `grow`; without, the group bounds, or
// else every sphere of one group against the other's bound and then its spheres.
template <class V>
SIMDPLAN_INLINE bool pair_far(const RobotView& rb, const LaneScratch<V>& s, int32_t p, float grow, float padding,
                              typename V::Mask live) {
  const int32_t ga = rb.pairs[2 * p], gb = rb.pairs[2 * p + 1];
  const int32_t lb = rb.pair_ranges[2 * p], le = rb.pair_ranges[2 * p + 1];
  const V gv = V::fill(grow);
  auto sphere = [&](int32_t k) { return V::fill(rb.spheres[4 * k + 3] + padding); };
  s.ensure_bound(rb, ga);  // and the frames place() reads
  s.ensure_bound(rb, gb);
  if (lb >= 0 && padding <= rb.list_max_padding) {
    s.place(rb, ga);
    s.place(rb, gb);
    for (int32_t e = lb; e < le; ++e) {
      const int32_t i = rb.sphere_pairs[2 * e], j = rb.sphere_pairs[2 * e + 1];
      if ((sphere_sphere_hit2(s.sx[i], s.sy[i], s.sz[i], sphere(i), s.sx[j], s.sy[j], s.sz[j], sphere(j) + gv) & live)
              .any())
        return false;
    }
    return true;
  }
  // spheres are placed only where the group bounds leave the pair in doubt
  const V rb_g = V::fill(rb.group_bound[4 * gb + 3] + padding) + gv;
  if (!(sphere_sphere_hit2(s.bx[ga], s.by[ga], s.bz[ga], V::fill(rb.group_bound[4 * ga + 3] + padding), s.bx[gb],
                           s.by[gb], s.bz[gb], rb_g) &
        live)
           .any())
    return true;
  s.place(rb, ga);
  s.place(rb, gb);
  for (int32_t i = rb.group_begin[ga]; i < rb.group_end[ga]; ++i) {
    if (!(sphere_sphere_hit2(s.sx[i], s.sy[i], s.sz[i], sphere(i), s.bx[gb], s.by[gb], s.bz[gb], rb_g) & live).any())
      continue;
    for (int32_t j = rb.group_begin[gb]; j < rb.group_end[gb]; ++j)
      if ((sphere_sphere_hit2(s.sx[i], s.sy[i], s.sz[i], sphere(i), s.sx[j], s.sy[j], s.sz[j], sphere(j) + gv) & live)
              .any())
        return false;
  }
  return true;
}

// edge_far's test of pair block q (two or more pairs) on lanes `live`: its two side bounds apart by
// more than `grow`, or else a group side's spheres clear of the other side's bound (a forearm next to
// a hand of many links).
template <class V>
SIMDPLAN_INLINE bool block_far(const RobotView& rb, const LaneScratch<V>& s, int32_t q, float grow, float padding,
                               typename V::Mask live) {
  const int32_t side0 = rb.pair_block_side[2 * q], side1 = rb.pair_block_side[2 * q + 1];
  V ax, ay, az, ar, bx, by, bz, br;
  block_side(rb, s, side0, padding, ax, ay, az, ar);
  block_side(rb, s, side1, padding, bx, by, bz, br);
  const V gv = V::fill(grow);
  if (!(sphere_sphere_hit2(ax, ay, az, ar, bx, by, bz, br + gv) & live).any()) return true;
  if (side0 < 0 && side1 < 0) return false;
  const int32_t g = side0 >= 0 ? side0 : side1;
  const V ox = side0 >= 0 ? bx : ax, oy = side0 >= 0 ? by : ay, oz = side0 >= 0 ? bz : az;
  const V orad = (side0 >= 0 ? br : ar) + gv;
  s.place(rb, g);
  for (int32_t k = rb.group_begin[g]; k < rb.group_end[g]; ++k)
    if ((sphere_sphere_hit2(s.sx[k], s.sy[k], s.sz[k], V::fill(rb.spheres[4 * k + 3] + padding), ox, oy, oz, orad) &
         live)
            .any())
      return false;
  return true;
}

// After the first chunk of a discrete Link passed (lanes `live`, holding samples i0 = first + P l),
// marks in s.far the tests that cannot hit on any later chunk, whose samples i0 + c (c < P) lie
// within (P - 1) / n of the edge from one of them; returns true when every test is far.
// Why it holds: a sphere's centre moves along the edge by at most (t1 - t0) L, L = sum over bodies
// of |scale dq| reach (RobotView motion bounds, as in collision/certified_link.hh); two spheres'
// distance changes by at most their pair's relative bound; every sphere of a group (of a pair block
// side) lies inside its bound. A test is far when, grown by that motion over (P - 1) / n (times
// 1 + 1e-6, plus kFarMargin), its bounds or else its spheres meet nothing on a live lane: it would
// have found no hit at any later sample, so answers are the same as without the skip.
// PERF: on the planners' free edges most of the work is self-collision and the frames behind it
// (ur5 on planned paths: 44 of 66 ns per configuration); a 32-sample edge is two 16-lane chunks, and
// far tests leave the second one little or nothing to do.
template <class V>
SIMDPLAN_INLINE bool edge_far(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s, const float* a,
                              const float* b, int64_t n, int64_t P, float padding, typename V::Mask live) {
  const int32_t nb = rb.n_bodies, ng = rb.n_groups, nk = rb.n_pair_blocks;
  const float span = float(double(P - 1) / double(n));
  float* travel = s.travel;  // per body: |scale dq| span, the joint motion over (P - 1) / n
  for (int32_t k = 0; k < nb; ++k) {
    const int32_t j = rb.body_dof[k];
    travel[k] = (rb.body_kind[k] == kBodyFixed || j < 0) ? 0.0f : std::fabs(rb.body_scale[k] * (b[j] - a[j])) * span;
  }
  auto grow = [&](const float* reach) {
    float sum = 0.0f;
    for (int32_t k = 0; k < nb; ++k) sum += travel[k] * reach[k];
    return sum * (1 + 1e-6f) + kFarMargin;
  };
  bool all = true;
  // static groups sit at the same place in every lane and chunk, and the first chunk passed
  for (int32_t g = 0; g < ng; ++g) s.far[g] = (env.n_obstacles == 0 || g < rb.n_static_groups) ? 1.0f : 0.0f;
  for (int32_t g = ng - 1; g >= rb.n_static_groups && env.n_obstacles > 0; --g) {
    // a body of several groups (a hand) first, all of them at once by its bound
    const int32_t body = rb.group_body[g], first = rb.body_group_begin[body];
    if (g + 1 == rb.body_group_end[body] && rb.body_bound[4 * body + 3] > 0) {
      float most = 0.0f;
      for (int32_t h = first; h <= g; ++h) most = std::max(most, grow(rb.group_reach + int64_t(h) * nb));
      V cx, cy, cz;
      body_bound_centre(rb, s, body, cx, cy, cz);
      if (bound_far(env, cx, cy, cz, rb.body_bound[4 * body + 3] + padding + most, live,
                    [](const float*, int32_t) { return true; })) {
        for (int32_t h = first; h <= g; ++h) s.far[h] = 1.0f;
        g = first;
        continue;
      }
    }
    const bool clear = group_far(rb, env, s, g, grow(rb.group_reach + int64_t(g) * nb), padding, live);
    s.far[g] = clear ? 1.0f : 0.0f;
    all = all && clear;
  }
  const bool lists = padding <= rb.list_max_padding;
  for (int32_t q = 0; q < nk; ++q) {
    const int32_t pb = rb.pair_block_begin[q], pe = rb.pair_block_begin[q + 1];
    // a block of one pair is that pair (pair_far runs the same tests), as check_lanes has it
    bool clear = pe - pb > 1 &&
                 block_far(rb, s, q, grow((lists ? rb.block_list_reach : rb.block_reach) + int64_t(q) * nb), padding,
                           live);
    // links next to each other (the ur5's base and upper arm) keep their bounds close in every
    // configuration, while their spheres may stay apart: the block is far when each of its pairs is
    for (int32_t i = pb; !clear && i < pe; ++i) {
      const int32_t p = rb.pair_order[i];
      const bool listed = lists && rb.pair_ranges[2 * p] >= 0;
      if (!pair_far(rb, s, p, grow((listed ? rb.pair_list_reach : rb.pair_reach) + int64_t(p) * nb), padding, live))
        break;
      clear = i + 1 == pe;
    }
    s.far[ng + q] = clear ? 1.0f : 0.0f;
    all = all && clear;
  }
  return all;
}

// Whether discrete Link's later chunks may skip the tests its first chunk proves far (edge_far).
// edge_far costs about what a chunk's tests cost without its frames, so it pays from three chunks on
// (kFarChunks); among the obstacle tree's many obstacles its scans would cost more still.
template <class V>
SIMDPLAN_INLINE bool link_skips_far(const RobotView& rb, const EnvironmentView& env, int64_t first, int64_t last) {
  const int64_t P = (last - first + V::W) / V::W;
  return V::W > 1 && last >= first && P >= kFarChunks && rb.far_skip != 0 && !tree_serves<V>(env);
}

// Discrete Link(a, b): samples s_i = a + (i/n)(b - a) for i = first .. last (0 <= first, last <= n),
// built in the lanes (no row-major staging) in rake order: chunk c holds i = first + c + P*l for
// lane l, so the first chunk already spans the edge and most colliding edges end in it.
// Returns true iff every sample is collision-free (joint limits are the caller's business).
// PERF: building the samples here instead of as rows the batch kernel transposes, and letting
// planners skip ends they know are valid, cut the planner's instructions by 13% (callgrind, AVX2,
// 699 MotionBenchMaker plans).
template <class V>
bool check_motion(const RobotView& rb, const EnvironmentView& env, const float* a, const float* b, int64_t n,
                  int64_t first, int64_t last, float padding, float* scratch, CheckState& state) {
  const LaneScratch<V> s(rb, scratch);
  return link_chunks(
      rb, a, b, n, first, last, s, state, link_skips_far<V>(rb, env, first, last),
      [&](typename V::Mask initial, const float* far) {
        return check_lanes(rb, env, s, padding, initial, true, state, far);
      },
      [&](typename V::Mask live, int64_t P) { return edge_far(rb, env, s, a, b, n, P, padding, live); });
}

}  // namespace simdplan::SIMDPLAN_NS
