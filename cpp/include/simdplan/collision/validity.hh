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
#include "simdplan/collision/obstacles.hh"
#include "simdplan/kin/fk.hh"
#include "simdplan/kin/robot_view.hh"

namespace simdplan::SIMDPLAN_NS {

template <class V>
struct LaneScratch {
  V* frames;
  V* sx;
  V* sy;
  V* sz;
  V* bx;
  V* by;
  V* bz;
  V* q;
  float* placed;  // per group: 0 until its spheres are placed for the current lanes
  float* bound_ready;  // per group: 0 until its bound centre is computed for the current lanes
  float* body_ready;   // per body: 0 until its frame is computed for the current lanes
  int32_t* chain;      // n_bodies entries: bodies waiting for their frame (ensure_body)
  // discrete Link's later chunks (collision/discrete_link.hh, edge_far): per group, then per pair
  // block, 1 where the first chunk proved the test far for the whole edge; `travel`, per body, the
  // joint motion behind them
  float* far;
  float* travel;

  static int64_t vectors(const RobotView& rb) {
    const int64_t far_floats = int64_t(rb.n_groups) + rb.n_pair_blocks + rb.n_bodies;  // far, travel
    return int64_t(rb.n_bodies) * 12 + int64_t(rb.n_spheres) * 3 + int64_t(rb.n_groups) * 3 + rb.dof +
           (2 * int64_t(rb.n_groups) + 2 * int64_t(rb.n_bodies) + far_floats + V::W - 1) / V::W;
  }
  LaneScratch(const RobotView& rb, float* mem) {
    V* p = reinterpret_cast<V*>(mem);
    frames = p;
    p += rb.n_bodies * 12;
    sx = p;
    sy = p + rb.n_spheres;
    sz = p + 2 * rb.n_spheres;
    p += 3 * rb.n_spheres;
    bx = p;
    by = p + rb.n_groups;
    bz = p + 2 * rb.n_groups;
    p += 3 * rb.n_groups;
    q = p;
    p += rb.dof;
    placed = reinterpret_cast<float*>(p);
    bound_ready = placed + rb.n_groups;
    body_ready = bound_ready + rb.n_groups;
    chain = reinterpret_cast<int32_t*>(body_ready + rb.n_bodies);
    far = reinterpret_cast<float*>(chain + rb.n_bodies);
    travel = far + rb.n_groups + rb.n_pair_blocks;
  }

  // Forgets every frame, bound and placed sphere: the lanes hold new joint values.
  SIMDPLAN_INLINE void reset(const RobotView& rb) const {
    for (int32_t g = 0; g < 2 * rb.n_groups + rb.n_bodies; ++g) placed[g] = 0.0f;
  }

  // The frame of body b (and of its ancestors not computed yet) for the joint values in q.
  // PERF: frames on demand, so a chunk that collides early skips the bodies and bounds it never
  // needed (with the collision hint of CheckState, often most of them).
  SIMDPLAN_INLINE void ensure_body(const RobotView& rb, int32_t b) const {
    if (body_ready[b] != 0.0f) return;
    int32_t n = 0;
    for (int32_t x = b; x >= 0 && body_ready[x] == 0.0f; x = rb.body_parent[x]) chain[n++] = x;
    while (n > 0) {
      const int32_t x = chain[--n];
      fk_body(rb, x, q, frames);
      body_ready[x] = 1.0f;
    }
  }

  // The bound centre of group g (bx, by, bz), its body's frame computed first if needed.
  SIMDPLAN_INLINE void ensure_bound(const RobotView& rb, int32_t g) const {
    if (bound_ready[g] != 0.0f) return;
    const int32_t b = rb.group_body[g];
    ensure_body(rb, b);
    const float* gb = rb.group_bound + 4 * g;
    fk_point(frames + 12 * b, gb[0], gb[1], gb[2], bx[g], by[g], bz[g]);
    bound_ready[g] = 1.0f;
  }

  // computes the world centres of group g's spheres (its body frame is already in `frames`)
  SIMDPLAN_INLINE void place(const RobotView& rb, int32_t g) const {
    if (placed[g] != 0.0f) return;
    const V* T = frames + 12 * rb.group_body[g];
    for (int32_t k = rb.group_begin[g]; k < rb.group_end[g]; ++k) {
      const float* l = rb.spheres + 4 * k;
      fk_point(T, l[0], l[1], l[2], sx[k], sy[k], sz[k]);
    }
    placed[g] = 1.0f;
  }
};

// Lanes h collided: marks them done and drops them from cand. True when the caller should stop
// (every lane done, or any collision when stop_at_first).
template <class M>
SIMDPLAN_INLINE bool mark_hits(M h, M& done, M& cand, bool stop_at_first) {
  done = done | h;
  cand = cand & ~h;
  return stop_at_first || done.all();
}

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

// The world centre of body b's bound (rb.body_bound) per lane, its body frame computed first if needed.
template <class V>
SIMDPLAN_INLINE void body_bound_centre(const RobotView& rb, const LaneScratch<V>& s, int32_t b, V& x, V& y, V& z) {
  s.ensure_body(rb, b);
  const float* bb = rb.body_bound + 4 * b;
  fk_point(s.frames + 12 * b, bb[0], bb[1], bb[2], x, y, z);
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
  if (state.hint_kind == 1 && !(far && far[state.hint_group] != 0.0f)) {
    if (group_vs_obstacle(rb, env, s, state.hint_group, state.hint_obstacle, padding, done, stop_at_first))
      return done;
  } else if (state.hint_kind == 2) {
    if (pair_vs_self(rb, s, state.hint_pair, padding, done, stop_at_first)) return done;
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
      return done;
    }
  }
  if (!state.static_env_free && rb.n_static_groups > 0) {
    // NOTE: static spheres sit at the same place in every lane, so a hit would have hit every lane not
    // done, and ended the call; reaching here with a lane left means they are clear of everything.
    const auto before = done;
    for (int32_t g = rb.n_static_groups - 1; g >= 0; --g)
      if (!(far && far[g] != 0.0f) && group_vs_environment(rb, env, s, g, padding, done, stop_at_first)) return done;
    if (done.bits() == before.bits() && !before.all()) state.static_env_free = 1;
  }
  for (int32_t k = 0; k < rb.n_pair_blocks; ++k) {
    const int32_t pb = rb.pair_block_begin[k], pe = rb.pair_block_begin[k + 1];
    if (far && far[rb.n_groups + k] != 0.0f) continue;
    if (pe - pb > 1 && !block_bounds_meet(rb, s, k, padding, done)) continue;
    for (int32_t i = pb; i < pe; ++i) {
      const int32_t p = rb.pair_order[i];
      if (pair_vs_self(rb, s, p, padding, done, stop_at_first)) {
        state.hint_kind = 2, state.hint_pair = p;
        return done;
      }
    }
  }
  return done;
}

// Loads rows base .. base+W-1 of q (n x dof, row-major) into lane vectors; rows past n repeat the
// last row (their lanes are marked done by the caller).
template <class V>
SIMDPLAN_INLINE void gather_rows(const float* q, int32_t dof, int64_t base, int64_t n, V* qv) {
  alignas(64) float buf[V::W];
  for (int32_t j = 0; j < dof; ++j) {
    for (int l = 0; l < V::W; ++l) {
      const int64_t row = (base + l < n) ? base + l : n - 1;
      buf[l] = q[row * dof + j];
    }
    qv[j] = V::load(buf);
  }
}

template <class V>
bool check_batch(const RobotView& rb, const EnvironmentView& env, const float* q, int64_t n, float padding,
                 bool stop_at_first, uint8_t* free_inout, float* scratch, CheckState& state) {
  using M = typename V::Mask;
  constexpr int W = V::W;
  const LaneScratch<V> s(rb, scratch);
  bool all_free = true;
  for (int64_t base = 0; base < n; base += W) {
    const int64_t count = (n - base < W) ? n - base : W;
    uint32_t skip = 0;
    for (int l = 0; l < W; ++l)
      if (l >= count || !free_inout[base + l]) skip |= 1u << l;
    const uint32_t real = (W == 32) ? ~0u : ((1u << W) - 1u);
    const uint32_t invalid_real = skip & ((count >= W) ? real : ((1u << count) - 1u));
    if (invalid_real) {
      all_free = false;
      if (stop_at_first) return false;
    }
    const M initial = M::from_bits(skip);
    if (initial.all()) continue;
    gather_rows(q, rb.dof, base, n, s.q);
    const M done = check_lanes(rb, env, s, padding, initial, stop_at_first, state);
    const uint32_t hit = done.bits() & ~skip;
    for (int64_t l = 0; l < count; ++l)
      if (hit & (1u << l)) free_inout[base + l] = 0;
    if (hit) {
      all_free = false;
      if (stop_at_first) return false;
    }
  }
  return all_free;
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
