// simdplan/collision/check_state.hh: what one caller's lane checks remember between calls (ISA-neutral POD).
//
// A caller (a planner's Checker, one is_valid_many call) keeps one CheckState for one robot,
// environment and padding, and hands it to every call of the lane kernels (collision/validity.hh):
// - the collision hint: where the last batch of configurations collided, tested first on the next
//   batch. Consecutive checks of a planner (the samples of one edge, edges from nearby tree nodes)
//   mostly collide where the last one did, so a colliding batch often ends after one test and the
//   frames of the bodies that test needs. It orders the tests only, never changes an answer.
// - static_env_free: the robot's static groups (those of body 0, which no joint moves) were found
//   clear of the environment, so later batches skip them: they are the same in every
//   configuration. Valid while the robot, environment and padding stay those of the first call.
// - body_tries, body_clear: how often each body's bound was tested against the environment before
//   its groups, and how often it was clear of everything (so its groups were skipped). The test
//   stays on while it pays (collision/validity.hh, body_test_pays); it never changes an answer.
// - link_samples: set by every discrete Link call (collision/discrete_link.hh, check_motion) to the
//   samples of the chunks it reached: up to and including the chunk of its first collision, or all
//   of them when the edge is free. What PlannerStats::collision_checks counts.
#pragma once
#include <cstdint>

namespace simdplan {

struct CheckState {
  int32_t hint_kind = 0;       // 0: none yet; 1: group hint_group against obstacle hint_obstacle; 2: self pair
  int32_t hint_group = -1;     // group index (RobotView)
  int32_t hint_obstacle = -1;  // obstacle index (EnvironmentView)
  int32_t hint_pair = -1;      // self-collision pair index, sorted order (RobotView::pairs)
  int32_t static_env_free = 0;
  int64_t link_samples = 0;
  static constexpr int32_t kBodies = 32;  // bodies past this many never take the body bound test
  int32_t body_tries[kBodies] = {};
  int32_t body_clear[kBodies] = {};
};

}  // namespace simdplan
