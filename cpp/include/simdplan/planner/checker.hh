// simdplan/planner/checker.hh: Clear(q) and discrete Link(a, b) for planners, in float32.
//
// Planners hold configurations as float (the kernels' precision) inside the joint limits, so no
// conversion or limit test is needed per call. Link checks the samples a + (i/n)(b - a),
// i = 0..n, n = max(1, ceil(|b - a| * resolution)) — the same samples as Robot.is_motion_valid —
// in rake order (the first W lanes span the edge) and stops at the first collision.
// The kernel table is the one active when the plan starts, used for the whole plan.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "simdplan/kernels.hh"
#include "simdplan/planner/planner_settings.hh"

namespace simdplan::planner {

class Checker {
 public:
  // lower/upper: joint limits as float, already rounded inward (see RobotModel::float_limits)
  Checker(const RobotView& rb, const EnvironmentView& env, const KernelTable& k, float padding, double resolution,
          std::vector<float> lower, std::vector<float> upper, PlannerStats& stats)
      : rb_(rb), env_(env), k_(k), padding_(padding), resolution_(resolution), lower_(std::move(lower)),
        upper_(std::move(upper)), stats_(stats) {
    one_.resize(size_t(k.one_scratch_floats(&rb)) + 16);
    lanes_.resize(size_t(k.scratch_floats(&rb)) + 16);
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
    return k_.check_one(&rb_, &env_, q, padding_, aligned(one_));
  }

  static double distance(const float* a, const float* b, int32_t dof) {
    double d2 = 0;
    for (int32_t j = 0; j < dof; ++j) {
      const double d = double(b[j]) - a[j];
      d2 += d * d;
    }
    return std::sqrt(d2);
  }

  bool motion(const float* a, const float* b) {
    const int32_t dof = rb_.dof;
    const int64_t n = intervals(a, b);
    const int64_t W = k_.lanes, P = (n + 1 + W - 1) / W;
    buf_.resize(size_t(W * dof));
    stats_.edge_checks += 1;
    // PERF: one chunk of W samples is built and checked at a time; most failing edges fail in the
    // first chunk, and building every sample up front was as costly as the kernel in a profile.
    for (int64_t c = 0; c < P; ++c) {
      int64_t distinct = 0;
      for (int64_t l = 0; l < W; ++l) {
        int64_t i = c + P * l;
        if (i > n) i = c;  // short chunk: repeat its first sample
        else ++distinct;
        const float t = float(double(i) / double(n));
        float* row = buf_.data() + l * dof;
        for (int32_t j = 0; j < dof; ++j) row[j] = a[j] + t * (b[j] - a[j]);
      }
      free_.assign(size_t(W), 1);
      stats_.collision_checks += distinct;
      if (!k_.check(&rb_, &env_, buf_.data(), W, padding_, true, free_.data(), aligned(lanes_))) return false;
    }
    return true;
  }

 private:
  static float* aligned(std::vector<float>& v) {
    auto addr = reinterpret_cast<uintptr_t>(v.data());
    return reinterpret_cast<float*>((addr + 63) & ~uintptr_t(63));
  }

  const RobotView& rb_;
  const EnvironmentView& env_;
  const KernelTable& k_;
  float padding_;
  double resolution_;
  std::vector<float> lower_, upper_;
  PlannerStats& stats_;
  std::vector<float> one_, lanes_, buf_;
  std::vector<uint8_t> free_;
};

}  // namespace simdplan::planner
