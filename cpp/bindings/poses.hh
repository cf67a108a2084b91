// poses.hh: goal poses and IK requests as the IK and pose-planning bindings take them.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/vector.h>

#include <array>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "kin/ik_solve.hh"
#include "kin/robot_model.hh"

namespace simdplan::bind {

namespace nb = nanobind;
// a goal pose: row-major 4 x 4 float64
using Pose = nb::ndarray<const double, nb::shape<4, 4>, nb::c_contig, nb::device::cpu>;

// A goal pose (row-major 4 x 4) as a rigid transform, or the error check_pose_matrix would raise:
// finite, last row [0, 0, 0, 1] and an orthonormal rotation with det +1, to 1e-5. PERF: here, not
// in NumPy, where the same tests took a third of a single solve's time.
inline void check_pose(const double* m) {
  for (int i = 0; i < 16; ++i)
    if (!std::isfinite(m[i])) throw std::invalid_argument("pose must be a finite (4, 4) matrix");
  const double tol = 1e-5;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double d = m[4 * i] * m[4 * j] + m[4 * i + 1] * m[4 * j + 1] + m[4 * i + 2] * m[4 * j + 2];
      if (std::abs(d - (i == j ? 1.0 : 0.0)) > tol)
        throw std::invalid_argument("pose rotation block is not a proper rotation (orthonormal, det +1)");
    }
  const double det = m[0] * (m[5] * m[10] - m[6] * m[9]) - m[1] * (m[4] * m[10] - m[6] * m[8]) +
                     m[2] * (m[4] * m[9] - m[5] * m[8]);
  if (det <= 0) throw std::invalid_argument("pose rotation block is not a proper rotation (orthonormal, det +1)");
  if (std::abs(m[12]) > tol || std::abs(m[13]) > tol || std::abs(m[14]) > tol || std::abs(m[15] - 1.0) > tol)
    throw std::invalid_argument("pose last row must be [0, 0, 0, 1]");
}

// the goals' top three rows in float32, each checked (check_pose)
inline std::vector<std::array<float, 12>> goal_frames(const std::vector<Pose>& targets) {
  std::vector<std::array<float, 12>> goals;
  goals.reserve(targets.size());
  for (const Pose& g : targets) {
    check_pose(g.data());
    std::array<float, 12> f;
    for (int i = 0; i < 12; ++i) f[i] = float(g.data()[i]);
    goals.push_back(f);
  }
  return goals;
}

inline void check_request(const RobotModel& r, const IkRequest& q) {
  if (q.dof != r.dof() || q.n_bodies != r.view().n_bodies) throw std::invalid_argument("IkRequest made for another robot");
}

// A pose-goal plan's request, targets and round budget (planner/pose_planning.hh) checked: the
// targets as goal frames.
inline std::vector<std::array<float, 12>> pose_plan_goals(const RobotModel& r, const IkRequest& q,
                                                          const std::vector<Pose>& targets, int32_t rounds,
                                                          int64_t round_iterations) {
  check_request(r, q);
  if (targets.empty()) throw std::invalid_argument("at least one goal pose is needed");
  if (rounds < 1) throw std::invalid_argument("rounds must be >= 1");
  if (round_iterations < 1) throw std::invalid_argument("round_iterations must be >= 1");
  return goal_frames(targets);
}

}  // namespace simdplan::bind
