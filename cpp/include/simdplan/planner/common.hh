// simdplan/planner/common.hh: what every planner includes: the checker, samplers, trees, the
// deadline, the shared settings, one planning problem (Problem) and steering.
//
// A planner is a function  std::vector<float> name(const Problem&, const OwnSettings&)  returning
// the path start .. goal as flat dof-float rows, empty if none was found within max_iterations /
// the deadline, and filling p.stats (iterations, tree_nodes, goal_index). It is listed in
// registry.hh. Start and goals are valid configurations inside the limits (plan() checks them).
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "simdplan/deadline.hh"
#include "simdplan/planner/checker.hh"
#include "simdplan/planner/planner_settings.hh"
#include "simdplan/planner/sampler.hh"
#include "simdplan/planner/tree.hh"

namespace simdplan::planner {

// One planning call's inputs and counters; planners read it and write stats.
struct Problem {
  Checker& check;
  const std::vector<float>& lower;  // float joint limits, rounded inward
  const std::vector<float>& upper;
  const float* start;               // dof values
  const std::vector<float>& goals;  // n_goals rows of dof values
  const SharedSettings& settings;
  PlannerStats& stats;
  const Deadline& deadline;

  int32_t dof() const { return check.dof(); }
  int32_t n_goals() const { return int32_t(goals.size() / (dof() ? dof() : 1)); }
  const float* goal(int32_t g) const { return goals.data() + size_t(g) * dof(); }
};

// q_new = a + (b - a) * min(1, range / |b - a|); returns the distance |q_new - a|
inline double steer(const Checker& check, const float* a, const float* b, double range, float* out) {
  const int32_t dof = check.dof();
  const double d = Checker::distance(a, b, dof);
  const double s = d > range ? range / d : 1.0;
  if (s == 1.0) {
    std::copy(b, b + dof, out);
    return d;
  }
  for (int32_t j = 0; j < dof; ++j) out[j] = float(a[j] + s * (double(b[j]) - a[j]));
  check.clamp(out);
  return range;
}

}  // namespace simdplan::planner
