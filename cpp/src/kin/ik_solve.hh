// kin/ik_solve.hh: inverse kinematics with restarts for one goal pose (ISA-neutral driver).
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "kin/robot_model.hh"
#include "simdplan/deadline.hh"

namespace simdplan {

struct IkRequest {
  int32_t tip_body = 0;
  float tip[12] = {};     // tip link frame in its body's frame, row-major 3 x 4
  int32_t mode = 0;       // IkMode
  int32_t axis = 2;
  double pos_tol = 1e-4;  // metres
  double ori_tol = 1e-3;  // radians
  int32_t n_solutions = 1;
  int64_t max_attempts = 1000;  // restarts at most
  int32_t attempt_iters = 64;   // iterations per restart at most
  double min_distance = 1e-2;   // joint-space distance between two kept solutions at least
  float padding = 0.0f;
  std::vector<float> seeds;     // rows of dof float32: first restarts (in the limits; the caller checks)
  int32_t dof = 0, n_bodies = 0;  // of the robot it was made for
};

struct IkOutput {
  std::vector<double> solutions;  // rows of dof
  std::vector<double> pos_err;    // per solution, metres (double arithmetic; see tip_errors in ik_solve.cc)
  std::vector<double> rot_err;    // per solution, radians of what the mode constrains
  int64_t attempts = 0;           // restarts begun
  int64_t iterations = 0;         // solver iterations over all lanes
  int64_t colliding = 0;          // converged restarts refused because in collision
  int64_t imprecise = 0;          // converged in float32 but outside the tolerances in double
  Deadline::Stop stopped = Deadline::Stop::none;
};

// For every goal of `targets` (world frames, row-major 3 x 4), restarts in the lanes of the active
// ISA until n_solutions distinct collision-free solutions (self and env, with padding) are found,
// max_attempts restarts are spent, or the deadline (one for the batch) passes. The lanes are shared
// among the poses: a lane whose restart failed tries its pose again, one whose pose is solved takes
// up the next pose (then an unsolved one with the fewest lanes), so no lane keeps working on a pose
// another lane has solved. Pose p's restarts are seeded from seed + p and the goal.
std::vector<IkOutput> solve_ik(const RobotModel& robot, const Environment& env, const IkRequest& req, uint64_t seed,
                               const std::vector<std::array<float, 12>>& targets, const Deadline& deadline);

}  // namespace simdplan
