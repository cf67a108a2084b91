// certified_link.cc: the divide and conquer of collision/certified_link.hh (ISA-neutral driver).
#include "simdplan/collision/certified_link.hh"

#include <algorithm>
#include <cmath>
#include <utility>

#include "simdplan/scratch.hh"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace simdplan {
namespace {

constexpr float kBig = 1e30f;  // tau of an entry that cannot move and is free: never blocks a stretch
// added to the chord test's bound: float rounding of the bound centres (FK of float joint values,
// about 1e-6 m within a few metres of the origin) and of the samples onto the segment
constexpr double kChordSlack = 1e-5;  // metres

// Rows of tau_ (one per sample) hold a multiple of kRowAlign floats, the groups' tau then kBig, so the
// loops over a row run in whole SSE vectors (SSE2 is part of x86-64; other targets take the scalar
// loops).
// PERF: these loops (a stretch's least tau sum, the groups whose sum fails, the lanes-to-rows
// transpose) were 7% of certified planning instructions on the MotionBenchMaker cage class (panda);
// in vectors, the class's first 25 problems ran 2.8% fewer (callgrind, AVX2), the same plans.
constexpr int32_t kRowAlign = 4;

int32_t row_floats(int32_t n_groups) { return (n_groups + kRowAlign - 1) / kRowAlign * kRowAlign; }

// min over g < n (a multiple of kRowAlign) of ti[g] + tj[g]
float least_sum(const float* ti, const float* tj, int32_t n) {
#if defined(__SSE2__)
  __m128 m = _mm_set1_ps(kBig);
  for (int32_t g = 0; g < n; g += 4) m = _mm_min_ps(_mm_add_ps(_mm_loadu_ps(ti + g), _mm_loadu_ps(tj + g)), m);
  m = _mm_min_ps(m, _mm_movehl_ps(m, m));
  m = _mm_min_ss(m, _mm_shuffle_ps(m, m, 1));
  return _mm_cvtss_f32(m);
#else
  float least = kBig;
  for (int32_t g = 0; g < n; ++g) least = std::min(least, ti[g] + tj[g]);
  return least;
#endif
}

// The largest float <= x: for a float y, y > float_below(x) exactly when double(y) > x.
float float_below(double x) {
  const float f = static_cast<float>(x);
  return double(f) > x ? std::nextafter(f, -HUGE_VALF) : f;
}

// out[l] = (d[l] - margin) / L given 1 / L (> 0), or min(out[l], that); the entry's clearances
// are all >= 0 (a call with a negative one stops before this), so an entry that cannot move
// (L = 0) never blocks a stretch and is not passed here
void tau_row(const float* d, float inv, float* out, int32_t count) {
  for (int32_t l = 0; l < count; ++l) out[l] = (d[l] - kCertifyMargin) * inv;
}
void tau_min(const float* d, float inv, float* out, int32_t count) {
  for (int32_t l = 0; l < count; ++l) out[l] = std::min(out[l], (d[l] - kCertifyMargin) * inv);
}

double sq(double x) { return x * x; }

// 1 / L in float32 (0 where L = 0: the entry cannot move), kept finite for the tiniest L
float inverse(double len) { return len > 0 ? static_cast<float>(std::min(1.0 / len, 1e30)) : 0.0f; }

}  // namespace

CertifiedLink::CertifiedLink(const RobotView& rb, const KernelTable& k) : rb_(rb), k_(k), W_(k.distance_lanes) {
  cap_env_.resize(size_t(rb.n_groups));
  len_env_.resize(size_t(rb.n_groups));
  cap_pair_.resize(size_t(rb.n_pairs));
  len_pair_.resize(size_t(rb.n_pairs));
  inv_env_.resize(size_t(rb.n_groups));
  inv_pair_.resize(size_t(rb.n_pairs));
  ts_.resize(size_t(std::max(W_, 2)));
  made_.resize(size_t(W_));
  stride_ = row_floats(rb.n_groups);
  // rows past n_groups stay kBig: the padding of every tau row
  lane_tau_.assign(size_t(W_) * std::max(stride_, 1), kBig);
  rows_.resize(size_t(W_) * std::max(rb.dof, 1));
  pair_out_.resize(size_t(W_) * std::max(rb.n_pairs, 1));
  scratch_.resize(size_t(k.distance_scratch_floats(&rb)) + 16);
  pair_group_.resize(size_t(rb.n_pairs));
  need_.resize(size_t(stride_));
  // body-major copies of the reach tables (edge_bounds)
  const int32_t nb = rb.n_bodies, ng = rb.n_groups, np = rb.n_pairs;
  group_reach_t_.resize(size_t(nb) * ng);
  pair_reach_t_.resize(size_t(nb) * np);
  pair_list_reach_t_.resize(size_t(nb) * np);
  for (int32_t k = 0; k < nb; ++k) {
    for (int32_t g = 0; g < ng; ++g) group_reach_t_[size_t(k) * ng + g] = rb.group_reach[int64_t(g) * nb + k];
    for (int32_t p = 0; p < np; ++p) {
      pair_reach_t_[size_t(k) * np + p] = rb.pair_reach[int64_t(p) * nb + k];
      pair_list_reach_t_[size_t(k) * np + p] = rb.pair_list_reach[int64_t(p) * nb + k];
    }
  }
  for (int32_t p = 0; p < rb.n_pairs; ++p) pair_group_[p] = rb.pairs[2 * p + 1];
  spread_.assign(size_t(ng), 0.0f);
  for (int32_t g = 0; g < ng; ++g) {
    const float* c = rb.group_bound + 4 * g;
    double far = 0;
    for (int32_t i = rb.group_begin[g]; i < rb.group_end[g]; ++i) {
      const float* p = rb.spheres + 4 * i;
      far = std::max(far, std::sqrt(sq(double(p[0]) - c[0]) + sq(double(p[1]) - c[1]) + sq(double(p[2]) - c[2])));
    }
    spread_[g] = std::nextafter(static_cast<float>(far), HUGE_VALF);
  }
  chain_move_.resize(size_t(nb));
  chain_turn_.resize(size_t(nb));
  chord_lin_.resize(size_t(ng));
  chord_quad_.resize(size_t(ng));
  block_floats_ = int64_t(5) * ng * W_;
  open_need_.resize(size_t(W_) * stride_);
}

// |scale_k (b - a)_dof(k)|: how far body k's joint moves along the edge (0 for fixed bodies)
double CertifiedLink::body_motion(int32_t k, const float* a, const float* b) const {
  const int32_t j = rb_.body_dof[k];
  if (rb_.body_kind[k] == kBodyFixed || j < 0) return 0.0;
  return std::fabs(double(rb_.body_scale[k])) * std::fabs(double(b[j]) - double(a[j]));
}

// PERF: the reach tables transposed (body-major), so each moving body adds its column to every
// entry's bound in one contiguous (vectorized) loop; the sums run over the bodies in the same order
// as a per-entry dot product, and a body that does not move adds exactly 0, so the bounds are the
// same bit for bit.
void CertifiedLink::edge_bounds(const float* a, const float* b, float padding) {
  const int32_t nb = rb_.n_bodies, ng = rb_.n_groups, np = rb_.n_pairs;
  std::fill(len_env_.begin(), len_env_.end(), 0.0);
  std::fill(len_pair_.begin(), len_pair_.end(), 0.0);
  // the kernel measures only the certified sphere pairs up to list_max_padding (kDistUseLists)
  const std::vector<float>& pair_reach = padding <= rb_.list_max_padding ? pair_list_reach_t_ : pair_reach_t_;
  for (int32_t k = 0; k < nb; ++k) {
    const double motion = body_motion(k, a, b);
    if (motion == 0.0) continue;
    const float* ge = group_reach_t_.data() + size_t(k) * ng;
    for (int32_t g = 0; g < ng; ++g) len_env_[g] += motion * ge[g];
    const float* pe = pair_reach.data() + size_t(k) * np;
    for (int32_t p = 0; p < np; ++p) len_pair_[p] += motion * pe[p];
  }
  for (int32_t g = 0; g < ng; ++g) inv_env_[g] = inverse(len_env_[g]);
  for (int32_t p = 0; p < np; ++p) inv_pair_[p] = inverse(len_pair_[p]);
  // bodies come parent first
  for (int32_t k = 0; k < nb; ++k) {
    const int32_t up = rb_.body_parent[k];
    const double motion = body_motion(k, a, b);
    chain_move_[k] = (up >= 0 ? chain_move_[up] : 0.0) + motion;
    chain_turn_[k] = (up >= 0 ? chain_turn_[up] : 0.0) + (rb_.body_kind[k] == kBodyRevolute ? motion : 0.0);
  }
  for (int32_t g = 0; g < ng; ++g) {
    const int32_t k = rb_.group_body[g];
    chord_lin_[g] = chain_turn_[k] * double(spread_[g]);
    chord_quad_[g] = 0.5 * chain_move_[k] * len_env_[g];
  }
}

// A sample only ever bounds stretches no longer than `span` (the gap to its neighbours when it is
// made; stretches only shrink later), and there tau >= span + margin / L already decides, so a self
// pair's clearance beyond L span + 2 margin need not be measured: the caps keep far entries unvisited.
// The environment's cap is half that: a capped value is still a lower bound, two samples at the cap
// pass the tau test of any stretch between them, and next to a nearer sample the chord test (which
// needs no more than about L span / 2 there) takes over.
// PERF: environment caps at L span / 2 against L span, callgrind AVX2 instructions, same iteration
// counts: MotionBenchMaker clouds (21 problems, planning) 79.4 M -> 72.9 M; panda 12 generated
// problems as clouds, planning + simplification 69.2 M -> 63.3 M, primitives 45.9 M -> 44.2 M; dual
// arm -1.5%, iiwa -1.1%. A third (0.4) was worse than a half on the clouds (75.7 M), 0.6 gave 74.2 M.
// NOTE: the 1e-6 relative slack is 16 times the rounding of the conversion to float.
void CertifiedLink::set_caps(double span) {
  const double f = span * (1 + 1e-6), m = 2.0 * kCertifyMargin * (1 + 1e-6);
  for (int32_t g = 0; g < rb_.n_groups; ++g) cap_env_[g] = static_cast<float>(0.5 * len_env_[g] * f + m);
  for (int32_t p = 0; p < rb_.n_pairs; ++p) cap_pair_[p] = static_cast<float>(len_pair_[p] * f + m);
}

// A group whose certificate already holds on every stretch this pass splits (by its tau sum or the
// chord test) holds on every piece of them too, so its clearances (environment and the self pairs
// it closes) are not measured at the new samples: their caps go negative (distance.hh) and their
// tau is kBig. Sound: the group stays proven free between the stretch's old ends, whatever the new
// samples.
// PERF: same plans and certificates (hashes of five robots' generated problems, every ISA);
// certified plan + simplify instructions on 12 generated problems each (callgrind, AVX2):
// panda -3.3%, ur5 -8.6%, mobile manipulator -11.1%.
void CertifiedLink::skip_proven(int32_t split) {
  const int32_t ng = rb_.n_groups;
  std::fill(need_.begin(), need_.end(), 0);
  for (int32_t s = 0; s < split; ++s) {
    // what check()'s tests left unproven on this stretch (chord_proves kept it)
    const uint8_t* row = open_need_.data() + size_t(s) * stride_;
    for (int32_t g = 0; g < ng; ++g) need_[g] |= row[g];
  }
  for (int32_t g = 0; g < ng; ++g)
    if (!need_[g]) cap_env_[g] = -1.0f;
  for (int32_t p = 0; p < rb_.n_pairs; ++p)
    if (!need_[pair_group_[p]]) cap_pair_[p] = -1.0f;
}

void CertifiedLink::sample_row(const float* a, const float* b, double t, float* out) const {
  const float tf = static_cast<float>(t);
  for (int32_t j = 0; j < rb_.dof; ++j) out[j] = a[j] + tf * (b[j] - a[j]);
}

double CertifiedLink::chord_limit(int32_t g, double chord, double dt) const {
  return chord + dt * chord_lin_[g] + dt * dt * chord_quad_[g];
}

// PERF: the chord test (certified_link.hh) against the tau test alone, certified planning +
// simplification, callgrind AVX2 instructions: panda 12 generated problems 53.5 M -> 46.0 M, as
// point clouds 83.8 M -> 69.3 M; dual arm 157.2 M -> 144.8 M; iiwa 156.0 M -> 155.7 M (its
// bound is tight already); MotionBenchMaker panda clouds, 21 problems, planning 106.5 M -> 79.5 M.
// Certificate samples on 70 MotionBenchMaker problems 79 k -> 44 k, half as many undecided edges.
bool CertifiedLink::chord_proves(int32_t i, int32_t j, double dt, uint8_t* need) const {
  const int32_t ng = rb_.n_groups, W = W_;
  const float dtf = float_below(dt);
  const float* ti = tau_.data() + size_t(i) * stride_;
  const float* tj = tau_.data() + size_t(j) * stride_;
  // sample s's value of entry e (a row of its block): ai[e * W]
  const int32_t si = sample_slot_[i], sj = sample_slot_[j];
  const float* ai = aux_.data() + size_t(si / W) * block_floats_ + si % W;
  const float* aj = aux_.data() + size_t(sj / W) * block_floats_ + sj % W;
  // the self pairs closed by g on their own tau, the environment on its tau or its chord bound
  auto proven = [&](int32_t g) {
    if (!(ai[size_t(ng + g) * W] + aj[size_t(ng + g) * W] > dtf)) return false;
    if (inv_env_[g] == 0) return true;
    const double room = double(ai[size_t(g) * W]) + double(aj[size_t(g) * W]) - 2.0 * kCertifyMargin;
    if (room > dt * len_env_[g]) return true;
    const size_t c = size_t(2 * ng + 3 * g) * W;
    const double chord = std::sqrt(sq(double(aj[c]) - ai[c]) + sq(double(aj[c + W]) - ai[c + W]) +
                                   sq(double(aj[c + 2 * W]) - ai[c + 2 * W]));
    // (a NaN centre fails the test)
    return room > chord_limit(g, chord, dt) + kChordSlack;
  };
  bool all = true;
  // only the groups whose tau sum fails, kRowAlign at a time
  for (int32_t g0 = 0; g0 < stride_; g0 += kRowAlign) {
#if defined(__SSE2__)
    int bits = _mm_movemask_ps(
        _mm_cmpngt_ps(_mm_add_ps(_mm_loadu_ps(ti + g0), _mm_loadu_ps(tj + g0)), _mm_set1_ps(dtf)));
#else
    int bits = 0;
    for (int k = 0; k < kRowAlign; ++k) bits |= int(!(ti[g0 + k] + tj[g0 + k] > dtf)) << k;
#endif
    for (; bits; bits &= bits - 1) {
      const int32_t g = g0 + __builtin_ctz(unsigned(bits));
      if (proven(g)) continue;
      all = false;
      if (!need) return false;
      need[g] = 1;
    }
  }
  return all;
}

void CertifiedLink::sphere_bounds(const float* a, const float* b, double* out) {
  const int32_t nb = rb_.n_bodies;
  std::vector<double> motion(static_cast<size_t>(nb));
  for (int32_t k = 0; k < nb; ++k) motion[k] = body_motion(k, a, b);
  for (int32_t i = 0; i < rb_.n_spheres; ++i) {
    double s = 0;
    for (int32_t k = 0; k < nb; ++k) s += motion[k] * rb_.sphere_reach[int64_t(i) * nb + k];
    out[i] = s;
  }
}

void CertifiedLink::chord_bounds(const float* a, const float* b, double t0, double t1, double* out) {
  const int32_t dof = rb_.dof, nb = rb_.n_bodies;
  edge_bounds(a, b, 0.0f);
  std::vector<float> q(size_t(2) * dof), frames(size_t(2) * nb * 12);
  const double ts[2] = {t0, t1};
  for (int32_t r = 0; r < 2; ++r) sample_row(a, b, ts[r], q.data() + size_t(r) * dof);
  std::vector<float> scratch(size_t(k_.scratch_floats(&rb_)) + 16);
  k_.fk_bodies(&rb_, q.data(), 2, frames.data(), aligned_scratch(scratch));
  const double dt = t1 - t0;
  for (int32_t g = 0; g < rb_.n_groups; ++g) {
    const float* p = rb_.group_bound + 4 * g;
    double c[2][3];
    for (int32_t r = 0; r < 2; ++r) {
      const float* T = frames.data() + (size_t(r) * nb + rb_.group_body[g]) * 12;
      for (int32_t x = 0; x < 3; ++x)
        c[r][x] = double(T[4 * x]) * p[0] + double(T[4 * x + 1]) * p[1] + double(T[4 * x + 2]) * p[2] + T[4 * x + 3];
    }
    const double chord = std::sqrt(sq(c[1][0] - c[0][0]) + sq(c[1][1] - c[0][1]) + sq(c[1][2] - c[0][2]));
    out[g] = chord_limit(g, chord, dt);
  }
}

bool CertifiedLink::evaluate(const EnvironmentView& env, const float* a, const float* b, const double* ts,
                             int32_t count, float padding, double& collide_t) {
  const int32_t dof = rb_.dof, ng = rb_.n_groups;
  for (int32_t l = 0; l < count; ++l) sample_row(a, b, ts[l], rows_.data() + size_t(l) * dof);
  evaluated_ += count;
  // the call's clearances, pair tau and bound centres stay in a block of aux_ (the chord test)
  const size_t need = size_t(n_blocks_ + 1) * block_floats_;
  if (aux_.size() < need) aux_.resize(2 * need);
  float* block = aux_.data() + size_t(n_blocks_) * block_floats_;
  float* env_out = block;
  // NOTE: lower bounds suffice for the certificate, and the collisions it reports stay exact
  constexpr uint32_t flags = kDistUseLists | kDistStopAtCollision | kDistLowerBounds;
  const uint32_t hit =
      k_.distances(&rb_, &env, rows_.data(), count, padding, cap_env_.data(), cap_pair_.data(), flags, env_out,
                   pair_out_.data(), block + size_t(2 * ng) * W_, aligned_scratch(scratch_));
  if (hit) {
    collide_t = ts[__builtin_ctz(hit)];
    return false;
  }
  // (the transpose below writes whole blocks of kRowAlign rows)
  const size_t rows_needed = size_t(n_samples_ + count + kRowAlign) * stride_;
  if (tau_.size() < rows_needed) tau_.resize(2 * rows_needed);
  if (sample_t_.size() < size_t(n_samples_ + count)) sample_t_.resize(2 * size_t(n_samples_ + count));
  // PERF: lanes innermost (contiguous, vectorized), then one transpose into sample rows: the
  // per-sample loop over pairs with lane-strided reads was a fifth of the certified plans' core time.
  // NOTE: float rounding of tau shifts the certificate by < 1e-7 m, inside kCertifyMargin.
  float* lanes = lane_tau_.data();
  for (int32_t g = 0; g < ng; ++g) {
    float* out = lanes + size_t(g) * W_;
    if (inv_env_[g] > 0 && cap_env_[g] >= 0)
      tau_row(env_out + size_t(g) * W_, inv_env_[g], out, count);
    else
      std::fill(out, out + count, kBig);
  }
  // the pairs' tau apart (the chord test needs it alone), then folded into the groups'
  float* pair_lanes = block + size_t(ng) * W_;
  std::fill(pair_lanes, pair_lanes + size_t(ng) * W_, kBig);
  for (int32_t p = 0; p < rb_.n_pairs; ++p)
    if (inv_pair_[p] > 0 && cap_pair_[p] >= 0)
      tau_min(pair_out_.data() + size_t(p) * W_, inv_pair_[p], pair_lanes + size_t(pair_group_[p]) * W_, count);
  for (size_t e = 0; e < size_t(ng) * W_; ++e) lanes[e] = std::min(lanes[e], pair_lanes[e]);
  if (sample_slot_.size() < size_t(n_samples_ + count)) sample_slot_.resize(2 * size_t(n_samples_ + count));
  for (int32_t l = 0; l < count; ++l) sample_slot_[n_samples_ + l] = n_blocks_ * W_ + l;
  ++n_blocks_;
  float* rows = tau_.data() + size_t(n_samples_) * stride_;
#if defined(__SSE2__)
  if (W_ % 4 == 0) {
    // 4 x 4 blocks; rows past count are scratch, overwritten by the next pass's samples
    for (int32_t l = 0; l < count; l += 4)
      for (int32_t g = 0; g < stride_; g += 4) {
        const float* in = lanes + size_t(g) * W_ + l;
        __m128 r0 = _mm_loadu_ps(in), r1 = _mm_loadu_ps(in + W_), r2 = _mm_loadu_ps(in + 2 * W_),
               r3 = _mm_loadu_ps(in + 3 * W_);
        _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
        float* out = rows + size_t(l) * stride_ + g;
        _mm_storeu_ps(out, r0);
        _mm_storeu_ps(out + stride_, r1);
        _mm_storeu_ps(out + 2 * stride_, r2);
        _mm_storeu_ps(out + 3 * stride_, r3);
      }
  } else
#endif
  {
    for (int32_t l = 0; l < count; ++l)
      for (int32_t g = 0; g < stride_; ++g) rows[size_t(l) * stride_ + g] = lanes[size_t(g) * W_ + l];
  }
  for (int32_t l = 0; l < count; ++l) sample_t_[n_samples_++] = ts[l];
  return true;
}

CertifyResult CertifiedLink::check(const EnvironmentView& env, const float* a, const float* b, float padding,
                                   double min_step, int32_t max_passes) {
  edge_bounds(a, b, padding);
  double len2 = 0;
  for (int32_t j = 0; j < rb_.dof; ++j) {
    const double d = double(b[j]) - double(a[j]);
    len2 += d * d;
  }
  const double len = std::sqrt(len2);
  n_samples_ = 0;
  n_blocks_ = 0;
  evaluated_ = 0;
  double collide_t = 0;
  std::vector<double>& ts = ts_;

  // first pass: samples spread over the whole edge, ends included
  const int32_t n0 = len > 0 ? std::max(W_, 2) : 1;
  for (int32_t k = 0; k < n0; ++k) ts[k] = n0 > 1 ? double(k) / double(n0 - 1) : 0.0;
  set_caps(n0 > 1 ? 1.0 / double(n0 - 1) : 1.0);
  for (int32_t base = 0; base < n0; base += W_) {
    const int32_t count = std::min(W_, n0 - base);
    if (!evaluate(env, a, b, ts.data() + base, count, padding, collide_t))
      return {kCertCollision, evaluated_, collide_t};
  }
  if (n0 == 1) return {kCertFree, evaluated_, 1.0};

  // stretches as pairs of sample indices (left, right); certified ones are dropped
  auto& pending = pending_;
  auto& open = open_;
  auto& next = next_;
  pending.clear();
  for (int32_t k = 0; k + 1 < n0; ++k) pending.emplace_back(k, k + 1);
  int32_t passes = (n0 + W_ - 1) / W_;
  while (!pending.empty()) {
    open.clear();
    for (const auto& [i, j] : pending) {
      const double dt = sample_t_[j] - sample_t_[i];
      const float* ti = tau_.data() + size_t(i) * stride_;
      const float* tj = tau_.data() + size_t(j) * stride_;
      // PERF: one branch-free pass over the groups in float, not a double sum per group with an early
      // exit: with the leaner tau rows above, certified plan + simplify instructions -2.7% (panda,
      // 21 MotionBenchMaker problems, callgrind AVX2). NOTE: the float sum's rounding is 6e-8 of tau,
      // i.e. of (d - margin) / L: 6e-8 of the clearance, far inside kCertifyMargin.
      if (double(least_sum(ti, tj, stride_)) > dt) continue;
      // the groups the chord test cannot prove either are kept for skip_proven, for the stretches
      // this pass may split (the first W open ones)
      uint8_t* row = open.size() < size_t(W_) ? open_need_.data() + open.size() * size_t(stride_) : nullptr;
      if (row) std::fill(row, row + stride_, 0);
      if (chord_proves(i, j, dt, row)) continue;
      if (dt * len < min_step) return {kCertUndecided, evaluated_, sample_t_[i]};
      open.emplace_back(i, j);
    }
    if (open.empty()) break;
    if (max_passes > 0 && passes++ >= max_passes)
      return {kCertUndecided, evaluated_, sample_t_[open.front().first]};
    // share the W lanes among the open stretches: each gets at least one new interior sample
    next.clear();
    const int32_t m = int32_t(open.size());
    const int32_t split = std::min(m, W_);
    const int32_t per = W_ / split, extra = W_ % split;
    int32_t count = 0;
    double span = 0;
    std::vector<int32_t>& made = made_;
    for (int32_t s = 0; s < split; ++s) {
      const auto [i, j] = open[s];
      const int32_t c = per + (s < extra ? 1 : 0);
      made[s] = c;
      span = std::max(span, (sample_t_[j] - sample_t_[i]) / double(c + 1));
      for (int32_t k = 1; k <= c; ++k)
        ts[count++] = sample_t_[i] + (sample_t_[j] - sample_t_[i]) * double(k) / double(c + 1);
    }
    set_caps(span);
    skip_proven(split);
    const int32_t first_new = int32_t(n_samples_);
    if (!evaluate(env, a, b, ts.data(), count, padding, collide_t))
      return {kCertCollision, evaluated_, collide_t};
    int32_t idx = first_new;
    for (int32_t s = 0; s < split; ++s) {
      int32_t left = open[s].first;
      for (int32_t k = 0; k < made[s]; ++k, ++idx) {
        next.emplace_back(left, idx);
        left = idx;
      }
      next.emplace_back(left, open[s].second);
    }
    for (int32_t s = split; s < m; ++s) next.push_back(open[s]);
    pending.swap(next);
  }
  return {kCertFree, evaluated_, 1.0};
}

}  // namespace simdplan
