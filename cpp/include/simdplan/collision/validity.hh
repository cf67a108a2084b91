// simdplan/collision/validity.hh: Clear(q) for W configurations at once, FK fused with collision.
//
// All body frames and group bounds are computed first (FK in kinematic order). Then every group is
// tested against the environment, distal groups first (group bounding sphere first, its spheres
// only for the lanes the bound cannot clear), and only then the self-collision pairs. A lane that
// collides is marked done and ignored from then on; the call ends when every lane is done, or
// at the first collision in any lane when the caller only needs "is everything free".
//
// A group's spheres are placed (world centres computed) only when something needs them: an obstacle
// candidate its bound meets in some lane, or a self-collision partner whose bound meets its bound.
//
// Scratch (caller-owned, 64-byte aligned): frames n_bodies*12, sphere centres n_spheres*3,
// group bound centres n_groups*3, joint values dof, a placed flag per group; in vectors of V.
#pragma once
#include "simdplan/collision/environment_view.hh"
#include "simdplan/collision/check_state.hh"
#include "simdplan/config.hh"
#include "simdplan/collision/lane_loops.hh"
#include "simdplan/collision/lane_scratch.hh"
#include "simdplan/collision/obstacles.hh"
#include "simdplan/collision/self_pairs.hh"
#include "simdplan/kin/fk.hh"
#include "simdplan/kin/robot_view.hh"

namespace simdplan::SIMDPLAN_NS {


// Group g's spheres (placed here if not yet) against one obstacle on lanes `cand`; hit(x, y, z, r,
// lanes) gives the lanes whose sphere collides. Collisions are added to `done`; returns true when
// the caller should stop (all lanes done, or a collision with stop_at_first).
template <class V, class Hit>
SIMDPLAN_INLINE bool group_spheres_vs(const RobotView& rb, const LaneScratch<V>& s, int32_t g, float padding,
                                      typename V::Mask cand, typename V::Mask& done, bool stop_at_first, Hit hit) {
  s.place(rb, g);
  for (int32_t k = rb.group_begin[g]; k < rb.group_end[g]; ++k) {
    const auto h = hit(s.sx[k], s.sy[k], s.sz[k], V::fill(rb.spheres[4 * k + 3] + padding), cand);
    if (h.any()) {
      if (mark_hits(h, done, cand, stop_at_first)) return true;
      if (!cand.any()) break;
    }
  }
  return false;
}

// Group g's lanes `cand` (their bound already meets the obstacle's AABB) against obstacle idx of a
// shape kind (point cloud, mesh, convex hull); same contract as group_vs_environment. The bound is
// tested exactly first (a cloud's only where its tree also answers the bound's radius, i.e. an r_max
// given that large): a cloud's or mesh's AABB spans much empty space, and a sphere that misses the
// shape cannot hold a sphere that meets it.
// PERF: kept out of line, a cold path when a scene has only primitives, so the primitives' loop
// stays small. Inlined, the MotionBenchMaker plans ran 1.1% more instructions (callgrind, AVX2), but
// those runs varied by up to 2% because a few plans hit the 1 s time limit under valgrind.
template <class V>
SIMDPLAN_NOINLINE bool group_vs_shape(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s,
                                      int32_t g, int32_t idx, float padding, typename V::Mask cand,
                                      typename V::Mask& done, bool stop_at_first) {
  using M = typename V::Mask;
  const float rbound = rb.group_bound[4 * g + 3] + padding;
  if (env.obstacle_kind[idx] != kObsCloud || rbound <= env.clouds[env.obstacle_record[idx]].r_max) {
    cand = M::from_bits(shape_hit_bits(env, idx, s.bx[g], s.by[g], s.bz[g], V::fill(rbound), cand.bits()));
    if (!cand.any()) return false;
  }
  return group_spheres_vs(rb, s, g, padding, cand, done, stop_at_first, [&](V x, V y, V z, V r, M c) {
    return M::from_bits(shape_hit_bits(env, idx, x, y, z, r, c.bits()));
  });
}

// Group g's bounds on the lanes not done against obstacle idx: the bound first, then the spheres
// (placed on demand). Returns true when the caller should stop (all lanes done, or a collision
// with stop_at_first).
template <class V>
SIMDPLAN_INLINE bool group_vs_obstacle(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s,
                                       int32_t g, int32_t idx, float padding, typename V::Mask& done,
                                       bool stop_at_first) {
  using M = typename V::Mask;
  const int32_t kind = env.obstacle_kind[idx];
  const float* o = obstacle_data(env, idx);
  const V br = V::fill(rb.group_bound[4 * g + 3] + padding);
  s.ensure_bound(rb, g);
  auto cand = obstacle_hit(record_kind(kind), o, s.bx[g], s.by[g], s.bz[g], br) & ~done;
  if (!cand.any()) return false;
  if (is_shape_kind(kind)) return group_vs_shape(rb, env, s, g, idx, padding, cand, done, stop_at_first);
  return group_spheres_vs(rb, s, g, padding, cand, done, stop_at_first,
                          [&](V x, V y, V z, V r, M c) { return obstacle_hit(kind, o, x, y, z, r) & c; });
}

// group_vs_environment through the obstacle tree one lane at a time, for lanes spread over the
// scene (their joint box would meet most obstacles): each lane's own box finds its candidates, and
// each candidate is tested on that lane only.
// PERF: 10k random panda configurations among 5,000 small boxes, ns per configuration: the joint
// box (scan or tree) AVX-512 12,570 against scalar 3,267; per lane: see benchmarks/bench_env_shapes.py.
template <class V>
SIMDPLAN_NOINLINE bool group_vs_environment_by_lane(const RobotView& rb, const EnvironmentView& env,
                                                    const LaneScratch<V>& s, int32_t g, float padding,
                                                    typename V::Mask& done, bool stop_at_first) {
  using M = typename V::Mask;
  constexpr int W = V::W;
  const float rbound = rb.group_bound[4 * g + 3] + padding;
  alignas(64) float x[W], y[W], z[W];
  s.bx[g].store(x), s.by[g].store(y), s.bz[g].store(z);
  uint32_t todo = ~done.bits() & first_lanes<V>(W);
  bool stop = false;
  while (todo && !stop) {
    const int l = __builtin_ctz(todo);
    todo &= todo - 1;
    // the other lanes count as done here, so only lane l is tested; its outcome goes back to done
    const M others = M::from_bits(first_lanes<V>(W) & ~(1u << l));
    auto visit = [&](int32_t idx) {
      M mine = done | others;
      stop = group_vs_obstacle(rb, env, s, g, idx, padding, mine, stop_at_first);
      done = done | (mine & ~others);
      stop = stop && (stop_at_first || done.all());  // mine.all() only says lane l is done
      return stop || ((done.bits() >> l) & 1u);  // this lane is decided
    };
    bool decided = false;
    for (int32_t u = 0; u < env.n_unbounded && !decided; ++u) decided = visit(env.unbounded[u]);
    if (decided) continue;
    const float lo[3] = {x[l] - rbound, y[l] - rbound, z[l] - rbound};
    const float hi[3] = {x[l] + rbound, y[l] + rbound, z[l] + rbound};
    bvh_box_visit(env.obstacle_tree, lo, hi, [&](int32_t slot) { return visit(env.tree_obstacle[slot]); });
  }
  return stop;
}

// Tests group g (placed in scratch) against the environment: obstacles whose AABB meets the box
// around the group's bound over all lanes, then the bound per lane, then the group's spheres.
// Returns true when the caller should stop (all lanes done, or a collision with stop_at_first).
template <class V>
SIMDPLAN_INLINE bool group_vs_environment(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s,
                                          int32_t g, float padding, typename V::Mask& done, bool stop_at_first,
                                          int32_t* stopped_by = nullptr) {
  if (env.n_obstacles == 0) return false;
  s.ensure_bound(rb, g);
  const float rbound = rb.group_bound[4 * g + 3] + padding;
  const float lo[3] = {s.bx[g].hmin() - rbound, s.by[g].hmin() - rbound, s.bz[g].hmin() - rbound};
  const float hi[3] = {s.bx[g].hmax() + rbound, s.by[g].hmax() + rbound, s.bz[g].hmax() + rbound};
  if (V::W > 1 && tree_serves<V>(env) && !tree_pays(env, lo, hi))
    return group_vs_environment_by_lane(rb, env, s, g, padding, done, stop_at_first);
  return for_each_candidate<V>(env, lo, hi, [&](int32_t idx) {
    const bool stop = group_vs_obstacle(rb, env, s, g, idx, padding, done, stop_at_first);
    if (stop && stopped_by) *stopped_by = idx;
    return stop;
  });
}


// Whether body b's bound (rb.body_bound, radius > 0) meets an obstacle on some lane not done. When
// it meets none, none of the body's groups can collide with the environment on those lanes.
// PERF: a hand of many links (ur5 with a Robotiq hand: 11 groups on one body) then costs one
// candidate scan instead of eleven. Where the bound meets something the groups are tested as
// before, each with its own scan: gathering the body's candidates for its groups instead cost the
// fetch and baxter 5-6% more planning instructions (their hands work near tables).
template <class V>
SIMDPLAN_INLINE bool body_meets_environment(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s,
                                            int32_t b, float padding, typename V::Mask done) {
  V cx, cy, cz;
  body_bound_centre(rb, s, b, cx, cy, cz);
  const float rbound = rb.body_bound[4 * b + 3] + padding;
  const V br = V::fill(rbound);
  const float lo[3] = {cx.hmin() - rbound, cy.hmin() - rbound, cz.hmin() - rbound};
  const float hi[3] = {cx.hmax() + rbound, cy.hmax() + rbound, cz.hmax() + rbound};
  const auto live = ~done;
  return for_each_candidate<V>(env, lo, hi, [&](int32_t idx) {
    return (obstacle_hit(record_kind(env.obstacle_kind[idx]), obstacle_data(env, idx), cx, cy, cz, br) & live).any();
  });
}

// Whether body b's bound test (body_meets_environment) is worth trying for this caller: always for
// its first kBodyTrials tries, then while the group scans it saved (clear tries times the body's
// groups less one) at least match the tries. Depends only on the caller's earlier checks, so plans
// stay reproducible.
// PERF: planning instructions (callgrind, AVX2, VAMP's MotionBenchMaker sets, 10 per class) against
// the pair blocks alone: testing every time ur5 -5.4%, panda -0.4%, fetch +1.3%, baxter +1.5%;
// with this rule ur5 -3.8%, panda +0.3%, fetch +0.2%, baxter +0.6%.
SIMDPLAN_INLINE bool body_test_pays(const RobotView& rb, const CheckState& state, int32_t b) {
  constexpr int32_t kBodyTrials = 32;
  if (b >= CheckState::kBodies) return false;
  const int64_t tries = state.body_tries[b];
  const int64_t saved = int64_t(state.body_clear[b]) * (rb.body_group_end[b] - rb.body_group_begin[b] - 1);
  return tries < kBodyTrials || saved >= tries;
}


// check_lanes' first part: the hint's test, then every group against the environment (distal groups
// first), on lanes whose frames and bounds are computed on demand or were computed ahead (a kernel
// generated per robot computes them and marks them ready). Returns true when the caller should stop.
template <class V>
SIMDPLAN_INLINE bool environment_lanes(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s,
                                       float padding, typename V::Mask& done, bool stop_at_first, CheckState& state,
                                       const float* far) {
if (state.hint_kind == 1 && !(far && far[state.hint_group] != 0.0f)) {
    if (group_vs_obstacle(rb, env, s, state.hint_group, state.hint_obstacle, padding, done, stop_at_first))
      return true;
  } else if (state.hint_kind == 2) {
    if (pair_vs_self(rb, s, state.hint_pair, padding, done, stop_at_first)) return true;
  }
  const int32_t moving = state.static_env_free ? rb.n_static_groups : 0;
  const bool by_body = !tree_serves<V>(env);  // many obstacles: the tree's per-group paths only
  for (int32_t g = rb.n_groups - 1; g >= moving; --g) {
    if (far && far[g] != 0.0f) continue;
    const int32_t b = rb.group_body[g];
    if (by_body && g + 1 == rb.body_group_end[b] && rb.body_bound[4 * b + 3] > 0 && rb.body_group_begin[b] >= moving &&
        env.n_obstacles > 0 && body_test_pays(rb, state, b)) {
      ++state.body_tries[b];
      if (!body_meets_environment(rb, env, s, b, padding, done)) {
        ++state.body_clear[b];
        g = rb.body_group_begin[b];  // every group of the body is clear
        continue;
      }
    }
    int32_t idx = -1;
    if (group_vs_environment(rb, env, s, g, padding, done, stop_at_first, &idx)) {
      if (idx >= 0) state.hint_kind = 1, state.hint_group = g, state.hint_obstacle = idx;
      return true;
    }
  }
  if (!state.static_env_free && rb.n_static_groups > 0) {
    // NOTE: static spheres sit at the same place in every lane, so a hit would have hit every lane not
    // done, and ended the call; reaching here with a lane left means they are clear of everything.
    const auto before = done;
    for (int32_t g = rb.n_static_groups - 1; g >= 0; --g)
      if (!(far && far[g] != 0.0f) && group_vs_environment(rb, env, s, g, padding, done, stop_at_first)) return true;
    if (done.bits() == before.bits() && !before.all()) state.static_env_free = 1;
  }
  return false;
}

// Runs the fused FK + collision program on the lanes not yet done. Returns the done mask.
// PERF: the environment is checked for every group before any self-collision, and from the hand
// back to the base, because distal links sweep the most space and meet obstacles first: a chunk
// that hits an obstacle (most failing edges) stops before most of the work. On the 699 panda
// MotionBenchMaker plans this cut the planner's instructions by 4% (self-collision last; those runs
// varied by up to 2% because a few plans hit the 1 s time limit under valgrind) and then 18%
// (distal first) (callgrind, AVX2).
// The hint's test comes first, and the static groups' environment test only until it has passed
// once (see CheckState); frames and bounds are computed on demand (LaneScratch::ensure_body).
// far (nullptr: none): per group, then per pair block, nonzero where the test cannot hit on these
// lanes (collision/discrete_link.hh, edge_far) and is skipped.
template <class V>
SIMDPLAN_INLINE typename V::Mask check_lanes(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s,
                                             float padding, typename V::Mask done, bool stop_at_first,
                                             CheckState& state, const float* far = nullptr) {
  s.reset(rb);
  if (environment_lanes(rb, env, s, padding, done, stop_at_first, state, far)) return done;
  self_pairs(rb, s, padding, done, stop_at_first, state, far);
  return done;
}

template <class V>
bool check_batch(const RobotView& rb, const EnvironmentView& env, const float* q, int64_t n, float padding,
                 bool stop_at_first, uint8_t* free_inout, float* scratch, CheckState& state) {
  const LaneScratch<V> s(rb, scratch);
  return check_rows(rb, q, n, stop_at_first, free_inout, s, [&](typename V::Mask initial) {
    return check_lanes(rb, env, s, padding, initial, stop_at_first, state);
  });
}

template <class V>
void fk_spheres_batch(const RobotView& rb, const float* q, int64_t n, float* out, float* scratch) {
  constexpr int W = V::W;
  const LaneScratch<V> s(rb, scratch);
  alignas(64) float x[W], y[W], z[W];
  for (int64_t base = 0; base < n; base += W) {
    const int64_t count = (n - base < W) ? n - base : W;
    gather_rows(q, rb.dof, base, n, s.q);
    int32_t g = 0;
    for (int32_t b = 0; b < rb.n_bodies; ++b) {
      fk_body(rb, b, s.q, s.frames);
      const V* T = s.frames + 12 * b;
      for (; g < rb.n_groups && rb.group_body[g] == b; ++g) {
        for (int32_t k = rb.group_begin[g]; k < rb.group_end[g]; ++k) {
          const float* l = rb.spheres + 4 * k;
          V vx, vy, vz;
          fk_point(T, l[0], l[1], l[2], vx, vy, vz);
          vx.store(x);
          vy.store(y);
          vz.store(z);
          for (int64_t i = 0; i < count; ++i) {
            float* o = out + ((base + i) * rb.n_spheres + k) * 4;
            o[0] = x[i];
            o[1] = y[i];
            o[2] = z[i];
            o[3] = l[3];
          }
        }
      }
    }
  }
}

template <class V>
void fk_bodies_batch(const RobotView& rb, const float* q, int64_t n, float* out, float* scratch) {
  constexpr int W = V::W;
  const LaneScratch<V> s(rb, scratch);
  alignas(64) float buf[W];
  for (int64_t base = 0; base < n; base += W) {
    const int64_t count = (n - base < W) ? n - base : W;
    gather_rows(q, rb.dof, base, n, s.q);
    for (int32_t b = 0; b < rb.n_bodies; ++b) {
      fk_body(rb, b, s.q, s.frames);
      for (int k = 0; k < 12; ++k) {
        s.frames[12 * b + k].store(buf);
        for (int64_t i = 0; i < count; ++i) out[((base + i) * rb.n_bodies + b) * 12 + k] = buf[i];
      }
    }
  }
}

}  // namespace simdplan::SIMDPLAN_NS
