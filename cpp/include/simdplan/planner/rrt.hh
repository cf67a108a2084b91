// simdplan/planner/rrt.hh: goal-biased RRT.
//
// S. M. LaValle, "Rapidly-exploring random trees: A new tool for path planning", TR 98-11, Iowa
// State University, 1998. One tree from the start; with probability goal_bias the sample is a goal.
// After each extension, a goal within `range` of the new node is tried directly.
// Contract: common.hh.
#pragma once
#include <vector>

#include "simdplan/planner/common.hh"

namespace simdplan::planner {

struct RrtSettings {
  double goal_bias = 0.05;  // probability of sampling a goal

  template <class Visit>
  static void fields(Visit&& v) {
    v("goal_bias", &RrtSettings::goal_bias);
  }
};

inline std::vector<float> rrt(const Problem& p, const RrtSettings& own) {
  Checker& check = p.check;
  const SharedSettings& s = p.settings;
  PlannerStats& stats = p.stats;
  const Deadline& deadline = p.deadline;
  const float* start = p.start;
  const std::vector<float>& goals = p.goals;
  const int32_t dof = p.dof();
  const int32_t n_goals = p.n_goals();
  Tree t(dof);
  t.add(start, -1);
  ConfigSampler sampler(s.sampler, s.seed, p.lower, p.upper);
  std::vector<float> q_rand(dof), q_near(dof), q_new(dof), path;
  for (int64_t it = 0; it < s.max_iterations; ++it) {
    stats.iterations = it + 1;
    if ((it & 15) == 0 && deadline.passed()) break;
    if (n_goals > 0 && sampler.rng().uniform() < own.goal_bias) {
      const int64_t g = sampler.rng().below(n_goals);
      std::copy(goals.begin() + g * dof, goals.begin() + (g + 1) * dof, q_rand.begin());
    } else {
      sampler.sample(q_rand.data());
    }
    const int32_t near = t.nn.nearest(q_rand.data()).first;
    t.nn.get(near, q_near.data());
    steer(check, q_near.data(), q_rand.data(), s.range, q_new.data());
    if (!check.motion(q_near.data(), q_new.data(), Checker::Known::start)) continue;
    const int32_t node = t.add(q_new.data(), near);
    for (int32_t g = 0; g < n_goals; ++g) {
      const float* goal = goals.data() + g * dof;
      if (Checker::distance(q_new.data(), goal, dof) <= s.range && check.motion(q_new.data(), goal, Checker::Known::both)) {
        t.path_from_root(node, path);
        path.insert(path.end(), goal, goal + dof);
        stats.goal_index = g;
        stats.tree_nodes = t.size();
        return path;
      }
    }
  }
  stats.tree_nodes = t.size();
  return path;
}

}  // namespace simdplan::planner
