// simdplan/planner/rrtc.hh: RRT-Connect.
//
// J. J. Kuffner and S. M. LaValle, "RRT-Connect: An efficient approach to single-query path
// planning", IEEE ICRA 2000, doi:10.1109/ROBOT.2000.844730. Two trees, one rooted at the start and
// one at every goal (a forest), each iteration extends one toward a sample by at most `range` and
// then greedily connects the other toward the new node. Balanced variant: the smaller tree is
// extended. Optional dynamic-domain sampling: A. Yershova, L. Jaillet, T. Simeon, S. M. LaValle,
// "Dynamic-Domain RRTs", IEEE ICRA 2005, doi:10.1109/ROBOT.2005.1570709 (a sample is rejected
// when it is outside the domain radius of its nearest node; radii grow on success, shrink on
// failure). As in the paper, a node's domain is unbounded until an extension from it first fails; it
// is then set to dd_radius. Domains start after kDomainsAfter failed extensions. NOTE: in many
// dimensions nearly every sample lies farther than any fixed radius from every node (a 14-dof
// robot's MotionBenchMaker plans rejected 99-100% of their samples and mostly timed out), so after
// kDomainGiveUp rejections in a row the plan goes on without domains, as plain RRT-Connect.
//
// Contract: common.hh. Deterministic for a seed unless the deadline cuts it.
#pragma once
#include <cmath>
#include <vector>

#include "simdplan/planner/common.hh"

namespace simdplan::planner {

struct RrtcSettings {
  bool balance = true;  // grow the smaller tree
  bool dynamic_domain = true;
  double dd_radius = 4.0, dd_alpha = 1e-4, dd_min_radius = 1.0;

  template <class Visit>
  static void fields(Visit&& v) {
    v("balance", &RrtcSettings::balance);
    v("dynamic_domain", &RrtcSettings::dynamic_domain);
    v("dd_radius", &RrtcSettings::dd_radius);
    v("dd_alpha", &RrtcSettings::dd_alpha);
    v("dd_min_radius", &RrtcSettings::dd_min_radius);
  }
};

// consecutive dynamic-domain rejections after which a plan drops the domains (see the header)
inline constexpr int64_t kDomainGiveUp = 500;
// failed extensions before the domains start: an easy plan ends before and pays nothing for them.
// PERF: MotionBenchMaker panda problems (210, four interleaved runs): median planning 46-55 us with
// domains from the first iteration, 41-49 us from the 16th failure; ur5 and fetch within noise.
inline constexpr int64_t kDomainsAfter = 16;

inline std::vector<float> rrt_connect(const Problem& p, const RrtcSettings& own) {
  Checker& check = p.check;
  const SharedSettings& s = p.settings;
  PlannerStats& stats = p.stats;
  const Deadline& deadline = p.deadline;
  const float* start = p.start;
  const std::vector<float>& goals = p.goals;
  const int32_t dof = p.dof();
  const int32_t n_goals = p.n_goals();
  std::vector<float> path;
  // a free straight line needs no tree
  for (int32_t g = 0; g < n_goals; ++g) {
    if (check.motion(start, goals.data() + g * dof, Checker::Known::both)) {
      path.assign(start, start + dof);
      path.insert(path.end(), goals.begin() + g * dof, goals.begin() + (g + 1) * dof);
      stats.goal_index = g;
      return path;
    }
  }
  Tree ta(dof), tb(dof);
  ta.add(start, -1);
  for (int32_t g = 0; g < n_goals; ++g) tb.add(goals.data() + g * dof, -1);
  Tree* a = &ta;
  Tree* b = &tb;
  ConfigSampler sampler(s.sampler, s.seed, p.lower, p.upper);
  std::vector<float> q_rand(dof), q_near(dof), q_new(dof), q_step(dof);
  bool domains = false;                      // dynamic domains in force
  bool domains_wanted = own.dynamic_domain;  // not yet started, or not dropped
  int64_t failed_extensions = 0;
  int64_t rejected_in_a_row = 0;

  for (int64_t it = 0; it < s.max_iterations; ++it) {
    stats.iterations = it + 1;
    if ((it & 15) == 0 && deadline.passed()) break;
    sampler.sample(q_rand.data());
    auto [near, d2] = a->nn.nearest(q_rand.data());
    if (domains && std::sqrt(double(d2)) > a->radius[near]) {
      ++stats.dd_rejected;
      if (++rejected_in_a_row == kDomainGiveUp) domains = domains_wanted = false;
      continue;
    }
    rejected_in_a_row = 0;
    a->nn.get(near, q_near.data());
    steer(check, q_near.data(), q_rand.data(), s.range, q_new.data());
    if (!check.motion(q_near.data(), q_new.data(), Checker::Known::start)) {
      if (domains_wanted && !domains && ++failed_extensions >= kDomainsAfter) domains = true;
      if (domains) {
        float& r = a->radius[near];
        r = (r == kUnbounded) ? float(own.dd_radius) : std::max(float(own.dd_min_radius), r * float(1 - own.dd_alpha));
      }
      continue;
    }
    if (domains && a->radius[near] != kUnbounded) a->radius[near] *= float(1 + own.dd_alpha);
    const int32_t new_a = a->add(q_new.data(), near);

    // connect b toward q_new in steps of at most `range`
    auto [bn, bd2] = b->nn.nearest(q_new.data());
    int32_t cur = bn;
    bool reached = false;
    for (int64_t step = 1;; ++step) {
      // a connect runs many steps when range is short against the gap: it must see the deadline too
      if ((step & 15) == 0 && deadline.passed()) break;
      b->nn.get(cur, q_near.data());
      const double moved = steer(check, q_near.data(), q_new.data(), s.range, q_step.data());
      if (!check.motion(q_near.data(), q_step.data(), Checker::Known::start)) break;
      const bool last = moved < s.range || Checker::distance(q_step.data(), q_new.data(), dof) <= 0.0;
      if (last) {
        reached = true;
        break;
      }
      cur = b->add(q_step.data(), cur);
    }
    if (reached) {
      // start .. (new_a and cur, which meet) .. goal: the start tree from its root, then the goal tree to its root
      const bool a_is_start = (a == &ta);
      const Tree& start_tree = a_is_start ? *a : *b;
      const Tree& goal_tree = a_is_start ? *b : *a;
      const int32_t start_node = a_is_start ? new_a : cur, goal_node = a_is_start ? cur : new_a;
      start_tree.path_from_root(start_node, path);
      goal_tree.path_to_root(goal_node, path);
      const int32_t goal_root = goal_tree.root[goal_node];
      stats.goal_index = goal_root;  // goal roots were added first, so root index == goal index
      stats.tree_nodes = ta.size() + tb.size();
      return path;
    }
    if (!own.balance || b->size() < a->size()) std::swap(a, b);
  }
  stats.tree_nodes = ta.size() + tb.size();
  return path;
}

}  // namespace simdplan::planner
