// simdplan/planner/checker.hh: Clear(q) and discrete Link(a, b) for planners, in float32.
//
// Planners hold configurations as float (the kernels' precision) inside the joint limits, so no
// conversion or limit test is needed per call. Link checks the samples a + (i/n)(b - a),
// i = 0..n, n = max(1, ceil(|b - a| * resolution)) — the same samples as Robot.is_motion_valid,
// up to float rounding — in rake order (the first W lanes span the edge) and stops at the first
// collision. Ends the planner already knows to be valid (tree nodes, path vertices) are not
// checked again.
// The kernel table is the one active when the plan starts, used for the whole plan. With a
// certified Checker, Link is the certified one (collision/certified_link.hh): an edge is accepted
// only when proven free between its ends, not just at samples.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "simdplan/collision/certified_link.hh"
#include "simdplan/collision/kernels.hh"
#include "simdplan/deadline.hh"
#include "simdplan/planner/planner_settings.hh"
#include "simdplan/scratch.hh"

namespace simdplan::planner {

class Checker {
 public:
  // lower/upper: joint limits as float, already rounded inward (see RobotModel::float_limits)
  // certified: Link proves edges free from clearances (collision/certified_link.hh) instead of
  // checking samples at `resolution`; min_step is where it gives up (joint-space distance).
  Checker(const RobotView& rb, const EnvironmentView& env, const KernelTable& k, float padding, double resolution,
          std::vector<float> lower, std::vector<float> upper, PlannerStats& stats, bool certified = false,
          double min_step = 1e-3)
      : rb_(rb), env_(env), k_(k), padding_(padding), resolution_(resolution), lower_(std::move(lower)),
        upper_(std::move(upper)), stats_(stats), min_step_(min_step) {
    one_.resize(size_t(k.one_scratch_floats(&rb)) + 16);
    lanes_.resize(size_t(k.scratch_floats(&rb)) + 16);
    if (certified) certified_ = std::make_unique<CertifiedLink>(rb, k);
  }

  int32_t dof() const { return rb_.dof; }
  double resolution() const { return resolution_; }
  // intervals n of the Link check of a -> b
  int64_t intervals(const float* a, const float* b) const {
    return std::max<int64_t>(1, int64_t(std::ceil(distance(a, b, rb_.dof) * resolution_)));
  }
  const std::vector<float>& lower() const { return lower_; }
  const std::vector<float>& upper() const { return upper_; }

  // NOTE: convex combinations of in-limit float configurations can round one ulp past a limit;
  // planners pass every new configuration through here so none ever leaves the box.
  void clamp(float* q) const {
    for (int32_t j = 0; j < rb_.dof; ++j) q[j] = std::min(std::max(q[j], lower_[j]), upper_[j]);
  }

  bool valid(const float* q) {
    stats_.collision_checks += 1;
    return k_.check_one(&rb_, &env_, q, padding_, aligned_scratch(one_));
  }

  static double distance(const float* a, const float* b, int32_t dof) {
    double d2 = 0;
    for (int32_t j = 0; j < dof; ++j) {
      const double d = double(b[j]) - a[j];
      d2 += d * d;
    }
    return std::sqrt(d2);
  }

  // Certified Link only: run the discrete samples first (see motion()).
  void set_discrete_prefilter(bool on) { prefilter_ = on; }
  // Discrete samples `lanes` at a time (KernelTable::check_motion_wide) rather than motion_lanes:
  // for callers whose edges are mostly free (simplification). Same answers.
  void set_wide(bool on) { wide_ = on; }
  // Certified Link only: give up on an edge (not free) after this many kernel passes (0: never).
  void set_certificate_passes(int32_t n) { max_passes_ = n; }

  // Which ends of an edge the caller already knows to be valid (their samples are skipped).
  enum class Known { none, start, both };

  bool motion(const float* a, const float* b, Known known) {
    if (certified_) {
      // NOTE: the ends are evaluated again even when known valid: the certificate needs their clearances
      // PERF: while trees grow most edges collide, and discrete samples find that for less than a
      // clearance pass; a colliding sample is a collision for the certificate too, so the answer is
      // the same. On 56 MotionBenchMaker plans this cut certified planning 1.45x (mean). One kernel
      // pass of samples (coarse_discrete) catches most collisions and costs free edges far less than
      // the resolution's full count: certified planning instructions -18% (panda) and -9% (ur5),
      // 70 MotionBenchMaker problems each, identical plans. Simplification keeps it for its
      // farthest-first and shortcut tries and turns it off where edges are mostly free (planning.cc).
      stats_.edge_checks += 1;  // every Link call, as discrete Link counts them
      if (prefilter_ && !coarse_discrete(a, b, known)) return false;
      const CertifyResult r = certified_->check(env_, a, b, padding_, min_step_, max_passes_);
      stats_.collision_checks += r.samples;
      stats_.certificate_samples += r.samples;
      stats_.edges_proven += r.status == kCertFree;
      stats_.edges_undecided += r.status == kCertUndecided;
      return r.status == kCertFree;
    }
    return discrete(a, b, known);
  }

  // A straight piece a -> b of an edge this checker has passed (a and b on it, up to float rounding
  // of their interpolation and clamping). A certificate proves its whole edge free with a clearance
  // of at least kCertifyMargin minus the kernels' rounding (about 1e-6 m), far more than a piece
  // rounded off the edge by an ulp moves any sphere, so certified Link has nothing left to prove.
  // Discrete Link checks the piece (known: as for motion()): its samples are not the edge's.
  bool piece(const float* a, const float* b, Known known) {
    if (certified_) return true;
    return discrete(a, b, known);
  }

  bool discrete(const float* a, const float* b, Known known) {
    const int64_t n = intervals(a, b);
    const int64_t first = known == Known::none ? 0 : 1;
    const int64_t last = known == Known::both ? n - 1 : n;
    stats_.edge_checks += 1;
    const auto link = link_kernel();
    if (deadline_ == nullptr || last - first < kDeadlineChunk) {
      const bool free = link(&rb_, &env_, a, b, n, first, last, padding_, aligned_scratch(lanes_), &state_);
      stats_.collision_checks += state_.link_samples;
      return free;
    }
    // A long edge (a fine resolution, a long shortcut) is checked in chunks with the deadline asked
    // between them, so one edge cannot hold a call past its time limit. An edge cut short counts
    // as not free: callers then see the deadline passed and stop.
    for (int64_t lo = first; lo <= last; lo += kDeadlineChunk) {
      if (deadline_->passed()) return false;
      const int64_t hi = std::min(last, lo + kDeadlineChunk - 1);
      const bool free = link(&rb_, &env_, a, b, n, lo, hi, padding_, aligned_scratch(lanes_), &state_);
      stats_.collision_checks += state_.link_samples;
      if (!free) return false;
    }
    return true;
  }

  // One kernel pass of discrete samples spread over the edge (at most one per lane, fewer than the
  // resolution asks on long edges): the certified Link's early out for colliding edges.
  bool coarse_discrete(const float* a, const float* b, Known known) {
    const int64_t n = std::min<int64_t>(intervals(a, b), (wide_ ? k_.lanes : k_.motion_lanes) - 1);
    const int64_t first = known == Known::none ? 0 : 1;
    const int64_t last = known == Known::both ? n - 1 : n;
    const bool free = link_kernel()(&rb_, &env_, a, b, n, first, last, padding_, aligned_scratch(lanes_), &state_);
    stats_.collision_checks += state_.link_samples;
    return free;
  }

  // Long Link checks ask this deadline between chunks of samples (nullptr: never cut short).
  void set_deadline(const Deadline* deadline) { deadline_ = deadline; }
  const Deadline* deadline() const { return deadline_; }

 private:
  // the discrete Link kernel of the current mode (set_wide)
  decltype(KernelTable::check_motion) link_kernel() const { return k_.motion_kernel(wide_); }

  const RobotView& rb_;
  const EnvironmentView& env_;
  const KernelTable& k_;
  float padding_;
  double resolution_;
  std::vector<float> lower_, upper_;
  PlannerStats& stats_;
  std::vector<float> one_, lanes_;
  double min_step_;
  std::unique_ptr<CertifiedLink> certified_;
  bool prefilter_ = true;
  bool wide_ = false;
  int32_t max_passes_ = 0;
  CheckState state_;  // what this planner's edge checks learned (collision/check_state.hh)
  const Deadline* deadline_ = nullptr;
  // samples per chunk of a long Link check: at most a few ms for the largest robots we measured,
  // and far above a planner edge's samples (range x resolution, about 32), which stay one call
  static constexpr int64_t kDeadlineChunk = 4096;
};

}  // namespace simdplan::planner
