// simdplan/planner/planner_settings.hh: the settings every planner shares, and the stats every
// planner fills. A planner's own settings live next to it (RrtSettings in rrt.hh, ...); registry.hh
// joins them into PlannerSettings. planner/settings.py validates every field before it gets here.
// Units: joint-space Euclidean distances in joint units (rad, m); times in seconds / nanoseconds.
#pragma once
#include <cstdint>

namespace simdplan::planner {

enum class Sampler : int32_t { kUniform = 0, kHalton = 1 };

struct SharedSettings {
  uint64_t seed = 0;
  double time_limit = 1.0;  // seconds, 0: none
  int64_t max_iterations = 1000000;
  double range = 1.0;       // longest tree edge
  double resolution = 32.0;  // Link samples per unit joint distance
  Sampler sampler = Sampler::kUniform;
  bool simplify = true;
  int32_t simplify_iterations = 30;
  // a random shortcut is checked only if it shortens the stretch it replaces by this fraction
  double shortcut_min_gain = 0.01;
  int32_t smooth_passes = 1;
  double interpolate = 0.0;  // > 0: resample the output to this many waypoints per unit distance
  float padding = 0.0f;
  // Link: certified from clearances (true, the default; see collision/certified_link.hh), giving up
  // on stretches shorter than min_step, or discrete samples at `resolution` (false).
  bool certified = true;
  double min_step = 1e-3;
  // a start or goal value outside its joint limit by at most this much is moved onto the limit
  double limit_tolerance = 1e-4;

  // Every field by name, for the bindings and Python (registry.hh's for_each_setting). A field
  // missing here is invisible to Python; tests/test_planner_contract.py compares both sides.
  template <class Visit>
  static void fields(Visit&& v) {
    v("seed", &SharedSettings::seed);
    v("time_limit", &SharedSettings::time_limit);
    v("max_iterations", &SharedSettings::max_iterations);
    v("range", &SharedSettings::range);
    v("resolution", &SharedSettings::resolution);
    v("sampler", &SharedSettings::sampler);
    v("simplify", &SharedSettings::simplify);
    v("simplify_iterations", &SharedSettings::simplify_iterations);
    v("shortcut_min_gain", &SharedSettings::shortcut_min_gain);
    v("smooth_passes", &SharedSettings::smooth_passes);
    v("interpolate", &SharedSettings::interpolate);
    v("padding", &SharedSettings::padding);
    v("certified", &SharedSettings::certified);
    v("min_step", &SharedSettings::min_step);
    v("limit_tolerance", &SharedSettings::limit_tolerance);
  }
};

struct PlannerStats {
  int64_t iterations = 0;
  // configurations checked: a discrete Link counts the samples of the chunks it reached (to its first
  // collision; all of them when free), certified Link also its clearance samples
  int64_t collision_checks = 0;
  int64_t edge_checks = 0;       // Link calls
  int64_t tree_nodes = 0;
  int64_t dd_rejected = 0;  // RRT-Connect: samples outside the dynamic domain of their nearest node
  // certified Link only, over planning and simplification: edges proven collision-free, the
  // clearance samples the certificates evaluated, and edges refused as undecided (a stretch
  // shorter than min_step could not be proven free)
  int64_t edges_proven = 0;
  int64_t certificate_samples = 0;
  int64_t edges_undecided = 0;
  int64_t planning_time_ns = 0;
  int64_t simplify_time_ns = 0;
  double initial_cost = 0, final_cost = 0;
  int32_t goal_index = -1;
};

}  // namespace simdplan::planner
