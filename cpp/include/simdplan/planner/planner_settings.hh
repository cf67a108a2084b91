// simdplan/planner/planner_settings.hh: settings shared by RRT, RRT-Connect and PRM, and the stats
// every planner fills. Mirrors planner/settings.py (which validates every field before it gets here).
// Units: joint-space Euclidean distances in joint units (rad, m); times in seconds / nanoseconds.
#pragma once
#include <cstdint>

namespace simdplan::planner {

enum class Sampler : int32_t { kUniform = 0, kHalton = 1 };

struct PlannerSettings {
  uint64_t seed = 0;
  double time_limit = 1.0;  // seconds, 0: none
  int64_t max_iterations = 1000000;
  double range = 1.0;       // longest tree edge
  double resolution = 32.0;  // Link samples per unit joint distance
  Sampler sampler = Sampler::kUniform;
  double goal_bias = 0.05;  // RRT
  bool balance = true;      // RRT-Connect: grow the smaller tree
  bool dynamic_domain = true;
  double dd_radius = 4.0, dd_alpha = 1e-4, dd_min_radius = 1.0;
  int32_t prm_neighbors = 10;
  bool simplify = true;
  int32_t simplify_iterations = 30;
  int32_t smooth_passes = 1;
  double interpolate = 0.0;  // > 0: resample the output to this many waypoints per unit distance
  float padding = 0.0f;
  // Link: discrete samples at `resolution` (false), or certified from clearances (true; see
  // collision/certified_link.hh), giving up on stretches shorter than min_step.
  bool certified = false;
  double min_step = 1e-3;
};

struct PlannerStats {
  int64_t iterations = 0;
  int64_t collision_checks = 0;  // configurations checked (a Link counts the samples of the chunks it reached)
  int64_t edge_checks = 0;       // Link calls
  int64_t tree_nodes = 0;
  int64_t dd_rejected = 0;  // RRT-Connect: samples outside the dynamic domain of their nearest node
  int64_t planning_time_ns = 0;
  int64_t simplify_time_ns = 0;
  double initial_cost = 0, final_cost = 0;
  int32_t goal_index = -1;
};

}  // namespace simdplan::planner
