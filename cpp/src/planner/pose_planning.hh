// pose_planning.hh: planning to goal poses: IK solutions of the poses (kin/ik_solve.hh) are the
// planner's goals; while no path is found and time is left, more solutions join them.
#pragma once
#include <array>
#include <string>
#include <vector>

#include "kin/ik_solve.hh"
#include "planner/planning.hh"

namespace simdplan {

struct PosePlanOutput {
  PlanOutput plan;                 // the last round's plan (nothing planned, planned_rounds == 0: only
                                   // `stopped`, the IK's)
  int32_t planned_rounds = 0;      // rounds that had goals and planned
  std::vector<double> goals;       // every IK solution found (rows of dof), the goals of the last plan
  std::vector<int32_t> goal_pose;  // the target each goal solves
  int64_t ik_ns = 0;               // IK time of every round
  int64_t planning_ns = 0;         // planning time of every round (PlannerStats::planning_time_ns)
  Deadline::Stop stopped = Deadline::Stop::none;  // why the last IK or plan ended early
};

// Up to `rounds` rounds; round r asks IK for request.n_solutions << r new solutions of every target
// (seed settings.seed + 7919 r, a time limit of half the time left), adds them to the goals and
// plans to all of them, with the time left and at most round_iterations << 2r iterations (the last
// round: settings.max_iterations), so goals that cannot be reached do not hold the whole budget.
// Stops at the first path, when the time limit has passed after a plan, or on an interrupt.
// settings.time_limit bounds the whole call (0: none). The request's padding must be the settings'
// (the caller builds both).
PosePlanOutput plan_to_poses(const RobotModel& robot, const Environment& env, const std::string& planner,
                             const double* start, IkRequest request,
                             const std::vector<std::array<float, 12>>& targets, int32_t rounds,
                             int64_t round_iterations, const planner::PlannerSettings& settings,
                             Interrupt* interrupt = nullptr);

}  // namespace simdplan
