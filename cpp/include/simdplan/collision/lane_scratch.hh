// simdplan/collision/lane_scratch.hh: the per-call memory of the batch kernels, W configurations in
// the lanes: joint values, body frames, group bound centres and sphere centres, computed on demand or
// ahead (a kernel generated per robot, python/simdplan/specialize, computes them ahead and marks them
// ready). Light on purpose: generated kernels include it without the environment's code.
//
// Scratch (caller-owned, 64-byte aligned): frames n_bodies*12, sphere centres n_spheres*3,
// group bound centres n_groups*3, joint values dof, flags; in vectors of V.
#pragma once
#include <cstdint>

#include "simdplan/config.hh"
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
  // A kernel generated per robot (python/simdplan/specialize) passes its own: computes the frame of
  // body b and of its ancestors not ready, the robot's constants folded in (the same bits as fk_body).
  // nullptr: ensure_body's loop over the RobotView's tables.
  FramesOf frames_of = nullptr;

  static int64_t vectors(const RobotView& rb) {
    const int64_t far_floats = int64_t(rb.n_groups) + rb.n_pair_blocks + rb.n_bodies;  // far, travel
    return int64_t(rb.n_bodies) * 12 + int64_t(rb.n_spheres) * 3 + int64_t(rb.n_groups) * 3 + rb.dof +
           (2 * int64_t(rb.n_groups) + 2 * int64_t(rb.n_bodies) + far_floats + V::W - 1) / V::W;
  }
  LaneScratch(const RobotView& rb, float* mem, FramesOf frames_fn = nullptr) : frames_of(frames_fn) {
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
    if (frames_of != nullptr) {
      frames_of(this, b);
      return;
    }
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

// The world centre of body b's bound (rb.body_bound) per lane, its body frame computed first if needed.
template <class V>
SIMDPLAN_INLINE void body_bound_centre(const RobotView& rb, const LaneScratch<V>& s, int32_t b, V& x, V& y, V& z) {
  s.ensure_body(rb, b);
  const float* bb = rb.body_bound + 4 * b;
  fk_point(s.frames + 12 * b, bb[0], bb[1], bb[2], x, y, z);
}

}  // namespace simdplan::SIMDPLAN_NS
