// simdplan/collision/lane_loops.hh: the loops of the batch kernels around one pass over W lanes,
// shared by the generic kernels and the kernels generated per robot (python/simdplan/specialize),
// which differ only in the pass itself.
#pragma once
#include <cstdint>

#include "simdplan/collision/check_state.hh"
#include "simdplan/collision/lane_scratch.hh"
#include "simdplan/config.hh"
#include "simdplan/kin/robot_view.hh"

namespace simdplan::SIMDPLAN_NS {

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

// Clear of n configurations (rows of q), W at a time, KernelTable::check's contract; lanes(initial)
// runs one pass on the rows gathered into s.q (initial: the lanes already decided) and returns the
// done mask.
template <class V, class Lanes>
SIMDPLAN_INLINE bool check_rows(const RobotView& rb, const float* q, int64_t n, bool stop_at_first,
                                uint8_t* free_inout, const LaneScratch<V>& s, Lanes lanes) {
  using M = typename V::Mask;
  constexpr int W = V::W;
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
    const M done = lanes(initial);
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


// Discrete Link's samples a + (i/n)(b - a), i = first .. last, built in the lanes in rake order: chunk
// c holds i = first + c + P*l for lane l, so the first chunk already spans the edge and most colliding
// edges end in it. lanes(initial, far) runs one pass; after the first chunk (when skip_far),
// far_test(live) may prove the later chunks' tests clear (collision/discrete_link.hh, edge_far) and
// return true when every test is, or fill s.far for the later chunks' passes.
template <class V, class Lanes, class FarTest>
SIMDPLAN_INLINE bool link_chunks(const RobotView& rb, const float* a, const float* b, int64_t n, int64_t first,
                                 int64_t last, const LaneScratch<V>& s, CheckState& state, bool skip_far, Lanes lanes,
                                 FarTest far_test) {
  using M = typename V::Mask;
  constexpr int W = V::W;
  state.link_samples = 0;
  if (last < first) return true;
  const int64_t P = (last - first + W) / W;  // chunks
  alignas(64) float t[W];
  const float* far = nullptr;
  for (int64_t c = 0; c < P; ++c) {
    uint32_t skip = 0;
    for (int l = 0; l < W; ++l) {
      const int64_t i = first + c + P * l;
      if (i > last) skip |= 1u << l;
      // NOTE: t in double then rounded, as the planners' other samples (Checker, interpolate)
      t[l] = (i > last) ? 0.0f : float(double(i) / double(n));
    }
    const V tv = V::load(t);
    for (int32_t j = 0; j < rb.dof; ++j) s.q[j] = V::fill(a[j]) + tv * V::fill(b[j] - a[j]);
    const M done = lanes(M::from_bits(skip), far);
    state.link_samples += W - __builtin_popcount(skip);
    if (done.bits() & ~skip) return false;
    if (c == 0 && skip_far && P >= 2) {
      if (far_test(~M::from_bits(skip), P)) {
        state.link_samples = last - first + 1;  // the later chunks are proven free, so checked too
        return true;
      }
      far = s.far;
    }
  }
  return true;
}

}  // namespace simdplan::SIMDPLAN_NS
