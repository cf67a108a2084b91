// simdplan/collision/certified_link.hh: certified Link(a, b), an edge proven free from clearances.
//
// Reference: F. Schwarzer, M. Saha, J.-C. Latombe, "Adaptive Dynamic Collision Checking for Single
// and Multiple Articulated Robots in Complex Environments", IEEE Trans. Robotics 21(3), 2005
// (the two-sided certificate below); S. Quinlan, "Real-time modification of collision-free paths",
// PhD thesis, Stanford 1994 (bounding sphere motion along joint-space segments).
//
// The edge q(t) = a + t (b - a), t in [0, 1], joint space, straight. For a robot sphere i, the path
// its centre traces while t runs over [t0, t1] is no longer than (t1 - t0) L_i, with
// L_i = sum over moving bodies k of |scale_k (b - a)_dof(k)| reach(i, k) (RobotView.sphere_reach: a
// point's speed about a revolute axis is the joint speed times its distance from the axis).
// Clearance (collision/distance.hh) is 1-Lipschitz in the centre, so if d(t0) + d(t1) >
// (t1 - t0) L_i, then at any t in between d(t) >= (d(t0) + d(t1) - (t1 - t0) L_i) / 2 > 0: the
// sphere stays free on the whole stretch. Self pairs use the same test with the relative bound
// (RobotView.pair_reach), environment checks a group bound L_g (the largest L_i of its spheres).
// Per sample we keep tau_g = min over group g's entries of (d - margin) / L, so one sum per group
// decides a stretch: tau_g(t0) + tau_g(t1) > t1 - t0 for every g. Entries that cannot move (L = 0)
// are decided by the samples alone.
//
// Chord test, for a group whose tau sum fails: (t1 - t0) L_g bounds the path of any joint motion of
// that size anywhere; the centres measured at the two samples give the real displacement. With B the
// group's bound centre (RobotView.group_bound) and dt = t1 - t0:
//   - a centre c of the group moved |c(t1) - c(t0)| <= |B(t1) - B(t0)| + theta s_g, where s_g is the
//     largest distance of the group's centres from B and theta <= dt T_g the body's turn (T_g: the
//     summed revolute motion of its chain; turns compose, and |(R1 - R0) v| <= theta |v|);
//   - c(t) stays within dt^2 K / 8 of the chord between c(t0) and c(t1) (linear interpolation error
//     of a C2 curve), K a bound on |c''|: each term of the second derivative, joints j and k on c's
//     chain, is at most |dq_j| |dq_k| times c's distance from the farther joint's axis (1 for a
//     prismatic one), so K <= 2 M_g L_g with M_g the summed motion of the chain;
//   - so |c(t) - c(t0)| + |c(t) - c(t1)| <= C_g = |B(t1) - B(t0)| + dt T_g s_g + dt^2 M_g L_g / 2,
//     and with d 1-Lipschitz, d(t) >= (d(t0) + d(t1) - C_g) / 2: the group is free on the stretch
//     when d_g(t0) + d_g(t1) - 2 margin > C_g (+ kChordSlack for the centres' rounding).
// Near contact, where stretches get short, C_g is 2-3x below dt L_g on the panda and the ur5
// (tests/test_proximity.py, test_chord_bound_is_conservative): fewer splits. Its self pairs keep
// their tau test (pair_reach is already relative).
//
// Divide and conquer, W samples per kernel call: the first call spreads W samples over the edge
// (rake order, so most colliding edges end there); each later call splits the stretches not yet
// certified, sharing the W lanes among them; a group already proven on every stretch a call splits is
// not measured at its new samples (its proof holds on the pieces). A sample with a negative
// clearance is a collision. A stretch shorter than min_step (joint-space distance) that is still not
// certified ends the check as "undecided": too close to call, never reported free.
//
// Float32: clearances are computed in float from float joint values; margin (kCertifyMargin) covers
// their rounding (about 1e-6 m for a robot within a few metres of the origin) and the rounding of
// the samples themselves onto the segment.
//
// ISA-neutral: the lanes come from KernelTable::distances; this file is included only by neutral
// translation units (it holds std::vector state).
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

#include "simdplan/collision/kernels.hh"
#include "simdplan/scratch.hh"

namespace simdplan {

constexpr float kCertifyMargin = 2e-5f;  // metres

enum CertifyStatus : int32_t { kCertFree = 0, kCertCollision = 1, kCertUndecided = 2 };

struct CertifyResult {
  CertifyStatus status;
  int64_t samples;      // configurations evaluated (each a clearance query of the whole robot)
  double t;             // collision: a colliding sample; undecided: start of the stretch; free: 1
};

class CertifiedLink {
 public:
  CertifiedLink(const RobotView& rb, const KernelTable& k);

  // a, b: dof float32 joint values inside the limits (continuous joints already wrapped consistently:
  // the edge is the straight segment between the two vectors as given). min_step > 0 (joint-space
  // distance, radians / metres). max_passes > 0: an edge not decided within that many kernel calls
  // is "undecided" too (for callers to whom an unproven edge is only a missed improvement).
  CertifyResult check(const EnvironmentView& env, const float* a, const float* b, float padding, double min_step,
                      int32_t max_passes = 0);

  // Per-sphere path-length bounds L_i of the edge a -> b (n_spheres doubles), the values the
  // certificate uses (exposed for tests of their conservativeness).
  void sphere_bounds(const float* a, const float* b, double* out);
  // Per group, the chord test's bound on the stretch t0 .. t1 (0 <= t0 < t1 <= 1) of the edge a -> b:
  // for every sphere centre c of the group and every t in the stretch, |c(t) - c(t0)| + |c(t) -
  // c(t1)| is at most out[g] (n_groups doubles; exposed for tests of its conservativeness).
  void chord_bounds(const float* a, const float* b, double t0, double t1, double* out);

 private:
  double body_motion(int32_t k, const float* a, const float* b) const;
  void edge_bounds(const float* a, const float* b, float padding);
  void set_caps(double span);
  void skip_proven(int32_t split);
  // the configuration at t of the edge a -> b (float, as the kernels evaluate it)
  void sample_row(const float* a, const float* b, double t, float* out) const;
  // C_g of the header for group g: the bound centre's chord plus the turn and curvature terms of a
  // stretch dt long (the same expression for the certificate and chord_bounds)
  double chord_limit(int32_t g, double chord, double dt) const;
  // the chord test (see check()) on stretch (i, j) for the groups whose tau sum fails: true when it
  // proves them all; with need, marks every group it cannot prove instead of stopping at the first
  bool chord_proves(int32_t i, int32_t j, double dt, uint8_t* need) const;
  // evaluates count (<= lanes) samples at ts; appends their tau rows. Returns false on a collision
  // (collide_t set to the first colliding sample).
  bool evaluate(const EnvironmentView& env, const float* a, const float* b, const double* ts, int32_t count,
                float padding, double& collide_t);

  const RobotView& rb_;
  const KernelTable& k_;
  int32_t W_;
  std::vector<float> cap_env_, cap_pair_;       // per group / pair: L + 2 margin
  std::vector<double> len_env_, len_pair_;      // L per group / pair
  std::vector<float> inv_env_, inv_pair_;       // 1 / L (0 where L = 0)
  std::vector<double> ts_;                      // sample positions of one kernel call
  std::vector<int32_t> made_;                   // new samples per split stretch
  std::vector<std::pair<int32_t, int32_t>> pending_, open_, next_;  // stretches (sample indices)
  int64_t n_samples_ = 0;                       // rows of sample_t_ / tau_ in use
  std::vector<float> lane_tau_;                 // tau of one kernel call, n_groups x lanes
  std::vector<float> rows_, pair_out_, scratch_;
  GrowBuffer<double> sample_t_;
  int32_t stride_ = 0;                          // floats per tau row: n_groups rounded up (kBig after)
  GrowBuffer<float> tau_;                       // n_samples x stride_
  std::vector<int32_t> pair_group_;             // later group of each pair
  std::vector<uint8_t> need_;                   // per group: measured at this pass's samples
  std::vector<float> group_reach_t_, pair_reach_t_, pair_list_reach_t_;  // RobotView's, body-major
  int64_t evaluated_ = 0;
  // chord test: per group, the largest distance of a sphere centre from the bound centre (body
  // frame); per edge, per body the summed joint motion and revolute turn of its chain, per group
  // the chord bound's terms linear and quadratic in the stretch's length (see check())
  std::vector<float> spread_;
  std::vector<double> chain_move_, chain_turn_, chord_lin_, chord_quad_;
  // chord test data, one block of block_floats_ per kernel call, lanes innermost: the groups'
  // clearances (environment), then their pairs' least tau, then their bound centres (x, y, z per
  // group; NaN where not placed); sample_slot_[s] = block * lanes + lane of sample s
  int64_t block_floats_ = 0;
  int32_t n_blocks_ = 0;
  GrowBuffer<float> aux_;
  GrowBuffer<int32_t> sample_slot_;
  std::vector<uint8_t> open_need_;  // per open stretch (the first lanes of them): groups left unproven
};

}  // namespace simdplan
