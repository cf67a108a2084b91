// simdplan/collision/distance.hh: clearances of W configurations at once (configurations in the lanes).
//
// Clearance of a robot sphere k (centre c_k, radius r_k) from an obstacle o: sdist_o(c_k) - r_k - padding,
// with sdist the exact signed distance to the solid (negative inside; geom/, and |c - p| - point_radius
// minimised over a point cloud's points). Negative clearance is penetration depth; a sphere collides
// iff its clearance is < 0 (touching is free), the rule of validity.hh. Self clearance of a sphere
// pair: |c_i - c_j| - r_i - r_j - 2 padding. World frame, metres, float32.
//
// distance_lanes writes, per lane,
//   env_out[g]  = min(cap_env[g],  min over group g's spheres and every obstacle of the clearance)
//   pair_out[p] = min(cap_pair[p], min over the sphere pairs of self pair p of the self clearance)
// (p in the sorted order of RobotView.pairs), under the DistanceFlags (kernels.hh). A negative cap
// says the caller does not need that entry: it is not measured and its output is +inf (a certificate's
// later passes skip the groups already proven free on every stretch they split). The caps say how
// far the caller needs to see:
// obstacles and sphere pairs that cannot come below the current minimum are never visited, so a
// small cap makes the query almost as cheap as a collision test, and an infinite cap gives exact
// clearances. With kDistUseLists (and padding <= list_max_padding) only the certified sphere pairs of
// a self pair are measured: the others cannot come within 2 list_max_padding of touching anywhere
// inside the joint limits, so they never decide a certificate (they are not exact distances).
//
// Culling is exact because every clearance is 1-Lipschitz in the centre: a group's spheres lie in
// its bounding sphere (centre c_B, radius R), so sdist(c_B) - R - padding is a lower bound of each
// of their clearances; obstacles are visited only where their AABB meets the bound's box grown by
// the largest minimum so far, and their spheres only where that lower bound beats the minimum in
// some lane. Point clouds and meshes are searched with the W lanes together (a cloud's nearest-point
// tree, a mesh's triangle tree, each lane bounded by its current minimum); convex hulls get every
// lane's bound from their face planes at once, then GJK lane by lane. A mesh is a surface: its
// distance is unsigned (a sphere inside a closed mesh is not inside an obstacle); a hull is a solid
// (negative inside).
#pragma once
#include <cmath>
#include <limits>
#include <type_traits>

#include "simdplan/capt/nearest_query.hh"
#include "simdplan/vec/scalar.hh"
#include "simdplan/collision/validity.hh"
#include "simdplan/collision/kernels.hh"

namespace simdplan::SIMDPLAN_NS {

// Signed distance of (x, y, z) from hull record rec (more than kHullPlaneMax triangles:
// group_hull_min takes the others), negative inside, if it is below `reach`; otherwise any value
// >= reach. The support plane facing the point bounds the distance; that bound is returned as it is
// when it is at least `exact_below` (callers that only need lower bounds at or above some level
// pass it, else +inf), else the exact GJK distance. One point, scalar code.
SIMDPLAN_INLINE float big_hull_sdist(const EnvironmentView& env, int32_t rec, float x, float y, float z, float reach,
                                     float exact_below) {
  const float lower = float(hull_support_gap(env, rec, x, y, z));
  if (lower >= reach) return HUGE_VALF;
  if (lower >= exact_below) return lower;
  return float(hull_sdist(env, rec, x, y, z));
}

// Certificates take a lower bound of a sphere's clearance (from its group's bound sphere, a hull's
// face or support planes) in place of the exact value only when it covers this much of what the
// lane still needs (group_hull_min, group_big_hull_min, group_tree_min).
constexpr float kTakeLowerFraction = 0.5f;

// best = min(best, clearance of group g's spheres from hull obstacle idx with at most kHullPlaneMax
// triangles): its face planes give every lane a lower bound at once (hull_plane_max); only lanes that
// bound cannot settle run GJK, one at a time. With lower_ok the bound is taken as it is where the
// clearance it leaves covers kTakeLowerFraction of what the lane needs (a lower bound >= 0, as
// certificates need, and not so small that it blocks them).
// PERF: taken from that fraction rather than from a clearance >= 0, bench mbm --obstacles hulls
// --link certified --limit 6 --seed 1 (boxes are such hulls; two alternating runs): planning median
// 1,144-1,151 -> 869-887 us, simplification 1,335-1,356 -> 1,269-1,289 us, final cost 5.39 -> 5.24.
// PERF: certified Link plans among five box-shaped hulls (15 panda queries, median plan + simplify,
// AVX-512, busy machine): lane by lane (as group_big_hull_min) 2.4-2.7 ms, 4.9x the boxes as primitives;
// this path 1.1-1.5 ms, 1.3-1.6x. Exact clearance, tabletop of bench_env_shapes: 20.8 -> 13.0 us.
template <class V>
SIMDPLAN_NOINLINE V group_hull_min(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s,
                                   int32_t g, float padding, int32_t idx, V best, bool lower_ok) {
  constexpr int W = V::W;
  const int32_t rec = env.obstacle_record[idx];
  V margin;
  const V R = V::fill(rb.group_bound[4 * g + 3] + padding);
  const V lb_bound = hull_plane_max(env, rec, s.bx[g], s.by[g], s.bz[g], margin) - margin;
  const uint32_t live = (lb_bound - R < best).bits();
  if (!live) return best;
  s.place(rb, g);
  alignas(64) float x[W], y[W], z[W], bs[W];
  for (int32_t k = rb.group_begin[g]; k < rb.group_end[g]; ++k) {
    const float rkf = rb.spheres[4 * k + 3] + padding;
    const V rk = V::fill(rkf);
    const V lb = hull_plane_max(env, rec, s.sx[k], s.sy[k], s.sz[k], margin) - margin;
    uint32_t need = (lb - rk < best).bits() & live;
    if (!need) continue;
    if (lower_ok) {
      const uint32_t settled = (lb - rk >= V::fill(kTakeLowerFraction) * vmax(best, V::zero())).bits() & need;
      best = select(V::Mask::from_bits(settled), vmin(best, lb - rk), best);
      need &= ~settled;
      if (!need) continue;
    }
    s.sx[k].store(x), s.sy[k].store(y), s.sz[k].store(z), best.store(bs);
    for (; need; need &= need - 1) {
      const int l = __builtin_ctz(need);
      bs[l] = std::fmin(bs[l], float(hull_sdist(env, rec, x[l], y[l], z[l])) - rkf);
    }
    best = V::load(bs);
  }
  return best;
}

// best = min(best, clearance of group g's spheres from hull obstacle idx with more than
// kHullPlaneMax triangles), one lane at a time (big_hull_sdist). Each query is bounded by the lane's
// best (nothing farther can lower it), and a sphere is not measured at all when the bounding
// sphere's distance already proves it cannot: d(c_k) >= d(c_B) - |c_k - c_B| (1-Lipschitz).
// lower_ok: sphere clearances may be lower bounds where they are >= 0 (the support plane; the bound
// sphere's distance minus the sphere's offset when that covers kTakeLowerFraction of the lane's
// best): certificates need no more; a negative clearance, a collision, is always exact.
template <class V>
SIMDPLAN_NOINLINE V group_big_hull_min(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s,
                                       int32_t g, float padding, int32_t idx, V best, bool lower_ok) {
  constexpr int W = V::W;
  const int32_t rec = env.obstacle_record[idx];
  alignas(64) float bx[W], by[W], bz[W], bs[W], dB[W];
  s.bx[g].store(bx);
  s.by[g].store(by);
  s.bz[g].store(bz);
  best.store(bs);
  const float R = rb.group_bound[4 * g + 3] + padding;
  bool any = false;
  for (int l = 0; l < W; ++l) {
    dB[l] = HUGE_VALF;
    const float reach = bs[l] + R;  // the bound's points beyond this cannot lower best (a solid: may be <= 0)
    // (a lower bound of the bound's distance keeps the skip test below sound)
    const float d = big_hull_sdist(env, rec, bx[l], by[l], bz[l], reach, lower_ok ? -HUGE_VALF : HUGE_VALF);
    if (d < reach) {
      dB[l] = d;
      any = true;
    }
  }
  if (!any) return best;
  s.place(rb, g);
  alignas(64) float x[W], y[W], z[W];
  for (int32_t k = rb.group_begin[g]; k < rb.group_end[g]; ++k) {
    s.sx[k].store(x);
    s.sy[k].store(y);
    s.sz[k].store(z);
    const float rk = rb.spheres[4 * k + 3] + padding;
    for (int l = 0; l < W; ++l) {
      if (dB[l] == HUGE_VALF) continue;
      const float dx = x[l] - bx[l], dy = y[l] - by[l], dz = z[l] - bz[l];
      const float off = std::sqrt(dx * dx + dy * dy + dz * dz);
      // NOTE: 1e-6 slack so float rounding of this skip test never drops a closer point
      const float lower = dB[l] - off - rk;
      const float safe_lower = lower - 1e-6f * (std::fabs(lower) + 1.0f);
      if (safe_lower >= bs[l]) continue;
      // (past the test above, bs/2 < lower < bs puts bs > 0: a collision already found stays)
      if (lower_ok && lower > kTakeLowerFraction * bs[l]) {
        bs[l] = std::fmax(0.0f, safe_lower);
        continue;
      }
      const float reach = bs[l] + rk;
      // NOTE: the support plane's bound is taken only where it covers kTakeLowerFraction of what
      // the lane needs: a bound barely >= rk (an elongated hull seen from its centre's side) gave
      // the certificate a clearance below its margin, an edge it could never prove (a capsule as a
      // hull 6 mm away: "undecided" at any min_step)
      const float exact_below = lower_ok ? rk + kTakeLowerFraction * std::fmax(bs[l], 0.0f) : HUGE_VALF;
      const float d = big_hull_sdist(env, rec, x[l], y[l], z[l], reach, exact_below);
      if (d < reach) bs[l] = std::fmin(bs[l], d - rk);
    }
  }
  return V::load(bs);
}

// group_tree_min's `floor_of` for shapes without a lower-bound grid (meshes, clouds built without one)
struct NoFloor {};

// best = min(best, clearance of group g's spheres from a point cloud or a mesh, whose distances come
// from a tree searched for all lanes at once: search(x, y, z, bound2, lanes) returns per lane of
// `lanes` min(bound2, squared distance to the nearest point or triangle) (nearest_sq_lanes,
// bvh_nearest_lanes). The W bound centres are searched first, each lane bounded by what could still
// lower its best; a sphere is not searched where the bound sphere's distance already proves it
// cannot lower best (d(c_k) >= d(c_B) - |c_k - c_B|, 1-Lipschitz). maybe_near(x, y, z, reach) may
// drop lanes sooner (the bits of lanes that could have something within reach; a mesh tests its
// AABB). floor_of(x, y, z), unless NoFloor, gives per lane a lower bound of the distance by one
// look-up (a cloud's distance floor grid): it drops the group's lanes it proves out of reach, and
// then each sphere's before any search (settling them with lower_ok as below); the bound centres
// are searched only when some sphere still needs a search. Both shapes are surfaces (d >= 0), so a
// non-positive reach cannot be met. `extra` (a cloud's point radius) counts as sphere radius.
// lower_ok: the bound sphere's distance minus the sphere's offset is taken when it covers
// kTakeLowerFraction of the lane's best (a lower bound >= 0, as certificates need); collisions stay
// exact.
// PERF: certified plans on 105 MotionBenchMaker panda problems as point clouds (bench mbm
// --pointcloud --limit 15 --seed 1, AVX-512, two alternating runs each, same certificates):
//   - searches lanes together instead of one lane at a time (72% of the instructions, about 1,000
//     each): planning median 637-642 -> 399-401 us, simplification 2.84-2.87 -> 1.43-1.50 ms;
//     with nearest_sq_lanes' constant-axis levels and leaf boxes, 644-649 -> 283 us and
//     2.86-2.89 -> 0.78-0.80 ms.
//   - the lower bound taken at half of best: planning 752-777 -> 658-685 us, simplification
//     3.6-3.8 -> 2.85-2.89 ms (one lane at a time); from 0.3 or 0.7 of best it paid less, and
//     with the searches lanes together 0.3, 0.75 and 1.0 still pay less (simplification +0-17%).
//   - meshes: five box-shaped meshes (15 panda queries, median plan + simplify): one lane at a time
//     (bvh_nearest_single) 7.3 ms, lanes together 1.4-2.0 ms; the same boxes as primitives 0.6-0.9 ms.
//     The lower bound at half of best, 42 MotionBenchMaker panda problems with every obstacle a
//     mesh (two alternating runs): planning 330-332 -> 302-312 us, simplification 1.51-1.54 ->
//     1.05-1.11 ms, final cost median +1%. Then bvh_nearest_lanes visiting the nearer child first
//     (instead of the left one): 294-305 -> 284-287 us, 1.05 -> 0.95-0.96 ms, the same certificates
//     (14 of them, callgrind AVX2: 502 M -> 441 M instructions).
//   - a cloud's distance floor grid (1.4 cm cells) before any search: 21 problems (3 per class,
//     certified planning, callgrind AVX2) 132.7 M -> 108.5 M instructions, the same iterations;
//     wall time (35 problems, min of 5 alternating runs, AVX2 host), median per-problem ratio
//     planning 0.90, simplification 0.88; certified / discrete planning 1.74x -> 1.51x (medians of
//     ratios).
template <class V, class Search, class MaybeNear, class Floor>
SIMDPLAN_INLINE V group_tree_min(const RobotView& rb, const LaneScratch<V>& s, int32_t g, float padding, float extra,
                                 V best, bool lower_ok, Search search, MaybeNear maybe_near, Floor floor_of) {
  constexpr bool kFloor = !std::is_same_v<Floor, NoFloor>;
  const V zero = V::zero();
  const V reach = best + V::fill(rb.group_bound[4 * g + 3] + padding + extra);  // farther cannot lower best
  uint32_t live = (reach > zero).bits();
  if constexpr (kFloor) live &= (floor_of(s.bx[g], s.by[g], s.bz[g]) < reach).bits();
  if (live) live &= maybe_near(s.bx[g], s.by[g], s.bz[g], reach);
  if (!live) return best;
  // the bound centres' distances dB (lanes `near`: within reach), searched when first needed
  V dB = zero;
  uint32_t near = 0;
  bool searched = false;
  auto search_bound = [&]() {
    const V reach2 = reach * reach;
    const V dB2 = search(s.bx[g], s.by[g], s.bz[g], reach2, live);
    near = (dB2 < reach2).bits() & live;
    dB = vsqrt(dB2);
    searched = true;
  };
  if constexpr (!kFloor) {
    search_bound();
    if (!near) return best;
  }
  const V tiny = V::fill(1e-6f), one = V::fill(1.0f), take = V::fill(kTakeLowerFraction);
  s.place(rb, g);
  for (int32_t k = rb.group_begin[g]; k < rb.group_end[g]; ++k) {
    const V rk = V::fill(rb.spheres[4 * k + 3] + padding + extra);
    uint32_t need = live;
    V floor_k = zero;  // a lower bound of the sphere's clearance from the grid (kFloor)
    if constexpr (kFloor) {
      floor_k = floor_of(s.sx[k], s.sy[k], s.sz[k]) - rk;
      need &= (floor_k < best).bits();
      if (lower_ok) {  // as below: a lower bound >= 0 that covers kTakeLowerFraction of best
        const uint32_t settled = (floor_k > take * best).bits() & need;
        best = select(V::Mask::from_bits(settled), vmax(zero, floor_k), best);
        need &= ~settled;
      }
      if (!need) continue;
      if (!searched) search_bound();
    }
    need &= near;
    if (!need) continue;
    const V dx = s.sx[k] - s.bx[g], dy = s.sy[k] - s.by[g], dz = s.sz[k] - s.bz[g];
    V lower = dB - vsqrt(fmadd(dx, dx, fmadd(dy, dy, dz * dz))) - rk;
    // NOTE: 1e-6 slack so float rounding of this skip test never drops a closer point or triangle
    V safe_lower = lower - tiny * (vabs(lower) + one);
    if constexpr (kFloor) lower = vmax(lower, floor_k), safe_lower = vmax(safe_lower, floor_k);
    need &= (safe_lower < best).bits();
    if (lower_ok) {  // (bs/2 < lower < bs puts bs > 0: a collision already found stays)
      const uint32_t settled = (lower > take * best).bits() & need;
      best = select(V::Mask::from_bits(settled), vmax(zero, safe_lower), best);
      need &= ~settled;
    }
    const V rk_reach = best + rk;
    need &= (rk_reach > zero).bits();
    if (need) need &= maybe_near(s.sx[k], s.sy[k], s.sz[k], rk_reach);
    if (!need) continue;
    const V r2 = rk_reach * rk_reach;
    const V d2 = search(s.sx[k], s.sy[k], s.sz[k], r2, need);
    const auto hit = (d2 < r2) & V::Mask::from_bits(need);
    best = select(hit, vmin(best, vsqrt(d2) - rk), best);
  }
  return best;
}

// group_tree_min for point-cloud obstacle idx (its nearest-point tree; a point's radius counts as
// sphere radius)
template <class V>
SIMDPLAN_NOINLINE V group_cloud_min(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s,
                                    int32_t g, float padding, int32_t idx, V best, bool lower_ok) {
  const int32_t rec = env.obstacle_record[idx];
  const NearestView& t = env.cloud_nearest[rec];
  auto search = [&](V x, V y, V z, V b2, uint32_t lanes) { return nearest_sq_lanes(t, x, y, z, b2, lanes); };
  auto anywhere = [](V, V, V, V) { return ~0u; };
  if (!t.floor_cells) return group_tree_min(rb, s, g, padding, env.clouds_point_radius[rec], best, lower_ok, search,
                                            anywhere, NoFloor{});
  return group_tree_min(rb, s, g, padding, env.clouds_point_radius[rec], best, lower_ok, search, anywhere,
                        [&](V x, V y, V z) { return nearest_floor_lanes(t, x, y, z); });
}

// group_tree_min for mesh obstacle idx (its triangle tree). The mesh's AABB, as a box record,
// prunes lanes before any tree walk: its distance is a lower bound of the mesh's.
template <class V>
SIMDPLAN_NOINLINE V group_mesh_min(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s,
                                   int32_t g, float padding, int32_t idx, V best, bool lower_ok) {
  const TriMeshView& m = env.meshes[env.obstacle_record[idx]];
  const float* box = obstacle_data(env, idx);
  // NOTE: the box distance, shrunk by 1e-6 (relative and metres) against float rounding, must stay
  // at or below the mesh's distance
  auto box_near = [&](V x, V y, V z, V lim) {
    const V d = sphere_box_sdist(x, y, z, geom::record_as<geom::Box>(box));
    return (d - V::fill(1e-6f) * (vabs(d) + V::fill(1.0f)) < lim).bits();
  };
  return group_tree_min(
      rb, s, g, padding, 0.0f, best, lower_ok,
      [&](V x, V y, V z, V b2, uint32_t lanes) { return bvh_nearest_lanes(m, x, y, z, b2, lanes); }, box_near,
      NoFloor{});
}

// best = min(best, clearance of group g's spheres from obstacle idx), lanes in parallel.
template <class V>
SIMDPLAN_INLINE V group_obstacle_min(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s,
                                     int32_t g, float padding, int32_t idx, V best, bool lower_ok) {
  const int32_t kind = env.obstacle_kind[idx];
  const V bound_r = V::fill(rb.group_bound[4 * g + 3] + padding);
  if (kind == kObsMesh) return group_mesh_min(rb, env, s, g, padding, idx, best, lower_ok);
  if (kind == kObsCloud) return group_cloud_min(rb, env, s, g, padding, idx, best, lower_ok);
  if (kind == kObsConvex) {
    const int32_t rec = env.obstacle_record[idx];
    if (env.hull_plane_begin[rec + 1] - env.hull_plane_begin[rec] <= kHullPlaneMax)
      return group_hull_min(rb, env, s, g, padding, idx, best, lower_ok);
    return group_big_hull_min(rb, env, s, g, padding, idx, best, lower_ok);
  }
  const float* o = obstacle_data(env, idx);
  if (!((obstacle_sdist(kind, o, s.bx[g], s.by[g], s.bz[g]) - bound_r) < best).any()) return best;
  s.place(rb, g);
  for (int32_t k = rb.group_begin[g]; k < rb.group_end[g]; ++k)
    best = vmin(best, obstacle_sdist(kind, o, s.sx[k], s.sy[k], s.sz[k]) - V::fill(rb.spheres[4 * k + 3] + padding));
  return best;
}

// min(best, clearance of group g from every obstacle): candidates from the AABB broad phase with
// the bound's box grown by the largest best over the lanes.
template <class V>
SIMDPLAN_INLINE V group_environment_min(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s,
                                        int32_t g, float padding, V best, bool lower_ok) {
  if (env.n_obstacles == 0) return best;
  s.ensure_bound(rb, g);
  const float grow = rb.group_bound[4 * g + 3] + padding + std::fmax(best.hmax(), 0.0f);
  if (!(grow < 3.0e38f)) {  // infinite cap: every obstacle is a candidate
    for (int32_t idx = 0; idx < env.n_obstacles; ++idx)
      best = group_obstacle_min(rb, env, s, g, padding, idx, best, lower_ok);
    return best;
  }
  const float lo[3] = {s.bx[g].hmin() - grow, s.by[g].hmin() - grow, s.bz[g].hmin() - grow};
  const float hi[3] = {s.bx[g].hmax() + grow, s.by[g].hmax() + grow, s.bz[g].hmax() + grow};
  for_each_candidate<V>(env, lo, hi, [&](int32_t idx) {
    best = group_obstacle_min(rb, env, s, g, padding, idx, best, lower_ok);
    return false;
  });
  return best;
}

// min(best, self clearance of pair p = (a, g)), both groups placed on demand.
template <class V>
SIMDPLAN_INLINE V pair_self_min(const RobotView& rb, const LaneScratch<V>& s, int32_t p, float padding, bool use_lists,
                                V best) {
  const int32_t a = rb.pairs[2 * p], g = rb.pairs[2 * p + 1];
  s.ensure_bound(rb, a);
  s.ensure_bound(rb, g);
  const V two_pad = V::fill(2.0f * padding);
  auto gap = [&](V ax, V ay, V az, V bx, V by, V bz, float radii) {
    const V dx = ax - bx, dy = ay - by, dz = az - bz;
    return vsqrt(fmadd(dx, dx, fmadd(dy, dy, dz * dz))) - V::fill(radii) - two_pad;
  };
  const float ra = rb.group_bound[4 * a + 3], rg = rb.group_bound[4 * g + 3];
  if (!(gap(s.bx[a], s.by[a], s.bz[a], s.bx[g], s.by[g], s.bz[g], ra + rg) < best).any()) return best;
  s.place(rb, a);
  s.place(rb, g);
  const int32_t lb = rb.pair_ranges[2 * p], le = rb.pair_ranges[2 * p + 1];
  if (use_lists && lb >= 0 && padding <= rb.list_max_padding) {
    // The list is sorted by its first sphere i; i's gap to g's bound is a lower bound of its gap to
    // every sphere of g, so where it cannot lower best on any lane, i's pairs are skipped (as
    // pair_vs_self does for collisions). NOTE: that bound's float rounding (a few ulps of the
    // coordinates) is far inside kCertifyMargin.
    // PERF: same certificates (plan hashes of five robots' generated problems); certified
    // simplification median, two alternating runs: panda 147-149 -> 116-119 us, ur5 192-226 ->
    // 150-159, iiwa 142-144 -> 123-138; certified planning median panda 75-79 -> 69-70 us.
    int32_t cur = -1;
    bool near = true;
    for (int32_t k = lb; k < le; ++k) {
      const int32_t i = rb.sphere_pairs[2 * k], j = rb.sphere_pairs[2 * k + 1];
      if (i != cur) {
        cur = i;
        near = (gap(s.sx[i], s.sy[i], s.sz[i], s.bx[g], s.by[g], s.bz[g], rb.spheres[4 * i + 3] + rg) < best).any();
      }
      if (!near) continue;
      best = vmin(best, gap(s.sx[i], s.sy[i], s.sz[i], s.sx[j], s.sy[j], s.sz[j],
                            rb.spheres[4 * i + 3] + rb.spheres[4 * j + 3]));
    }
    return best;
  }
  for (int32_t i = rb.group_begin[a]; i < rb.group_end[a]; ++i) {
    const float ri = rb.spheres[4 * i + 3];
    if (!(gap(s.sx[i], s.sy[i], s.sz[i], s.bx[g], s.by[g], s.bz[g], ri + rg) < best).any()) continue;
    for (int32_t j = rb.group_begin[g]; j < rb.group_end[g]; ++j)
      best = vmin(best, gap(s.sx[i], s.sy[i], s.sz[i], s.sx[j], s.sy[j], s.sz[j], ri + rb.spheres[4 * j + 3]));
  }
  return best;
}

// The contract at the top of this file, for the joint values in s.q. Returns the lanes with a
// negative clearance anywhere. With kDistStopAtCollision the call returns as soon as one lane has
// one (outputs of groups and pairs not reached yet are then unspecified). With kDistRunningMin each
// group (and pair) starts from the smallest value of the groups (pairs) before it, so its output is
// the minimum so far: only the overall minimum is meaningful, and far obstacles are pruned sooner.
template <class V>
typename V::Mask distance_lanes(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s,
                                float padding, const float* cap_env, const float* cap_pair, uint32_t flags,
                                V* env_out, V* pair_out) {
  using M = typename V::Mask;
  const bool stop = flags & kDistStopAtCollision, running = flags & kDistRunningMin;
  const bool lower_ok = flags & kDistLowerBounds;
  // frames and bounds on demand (the group and pair queries ask for theirs): entries with a negative
  // cap need none
  s.reset(rb);
  M hit = M::none();
  const V inf = V::fill(HUGE_VALF);
  V so_far = inf;
  // distal groups first, as in validity.hh: they meet obstacles first
  for (int32_t g = rb.n_groups - 1; g >= 0; --g) {
    if (cap_env[g] < 0.0f) {
      env_out[g] = inf;
      continue;
    }
    const V start = running ? vmin(so_far, V::fill(cap_env[g])) : V::fill(cap_env[g]);
    env_out[g] = so_far = group_environment_min(rb, env, s, g, padding, start, lower_ok);
    hit = hit | (env_out[g] < V::zero());
    if (stop && hit.any()) return hit;
  }
  so_far = inf;
  for (int32_t p = 0; p < rb.n_pairs; ++p) {
    if (cap_pair[p] < 0.0f) {
      pair_out[p] = inf;
      continue;
    }
    const V start = running ? vmin(so_far, V::fill(cap_pair[p])) : V::fill(cap_pair[p]);
    pair_out[p] = so_far = pair_self_min(rb, s, p, padding, flags & kDistUseLists, start);
    hit = hit | (pair_out[p] < V::zero());
    if (stop && hit.any()) return hit;
  }
  return hit;
}

// Rows q (count x dof, count <= W) in the lanes (spare lanes repeat the last row); outputs stored
// lane-major per entry: env_out[g * W + l], pair_out[p * W + l], and where centre_out is given the
// bound centres the environment queries placed, centre_out[(3 g + axis) * W + l] (NaN for groups
// they did not reach). Returns the bits of distance_lanes.
template <class V>
uint32_t distance_rows(const RobotView& rb, const EnvironmentView& env, const float* q, int32_t count, float padding,
                       const float* cap_env, const float* cap_pair, uint32_t flags, float* env_out,
                       float* pair_out, float* centre_out, float* scratch) {
  const LaneScratch<V> s(rb, scratch);
  gather_rows(q, rb.dof, 0, count, s.q);
  // the outputs live after the lane scratch (see distance_scratch_floats)
  V* ev = reinterpret_cast<V*>(scratch) + LaneScratch<V>::vectors(rb);
  V* pv = ev + rb.n_groups;
  const uint32_t bits =
      distance_lanes(rb, env, s, padding, cap_env, cap_pair, flags, ev, pv).bits() & first_lanes<V>(count);
  for (int32_t g = 0; g < rb.n_groups; ++g) ev[g].store(env_out + int64_t(g) * V::W);
  for (int32_t p = 0; p < rb.n_pairs; ++p) pv[p].store(pair_out + int64_t(p) * V::W);
  if (centre_out) {
    // (any bound placed in this call is the group's centre for these lanes: reset() clears the flags)
    const V nan = V::fill(std::numeric_limits<float>::quiet_NaN());
    for (int32_t g = 0; g < rb.n_groups; ++g) {
      const bool ready = s.bound_ready[g] != 0.0f;
      float* out = centre_out + int64_t(3 * g) * V::W;
      (ready ? s.bx[g] : nan).store(out);
      (ready ? s.by[g] : nan).store(out + V::W);
      (ready ? s.bz[g] : nan).store(out + 2 * V::W);
    }
  }
  return bits;
}

template <class V>
int64_t distance_scratch_floats(const RobotView& rb) {
  return (LaneScratch<V>::vectors(rb) + rb.n_groups + rb.n_pairs) * V::W;
}

}  // namespace simdplan::SIMDPLAN_NS
