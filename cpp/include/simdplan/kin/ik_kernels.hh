// simdplan/kin/ik_kernels.hh: the inverse-kinematics entry points one ISA build provides (ISA-neutral).
//
// cpp/src/kin/ik_isa.cc is compiled once per ISA (with kernels_isa.cc) and fills one IkKernels;
// ik_kernels_active() (cpp/src/kin/ik_solve.cc) returns the table of the ISA simdplan::active() names.
// Only PODs cross here. The solver (kin/ik.hh) runs W independent restarts in the lanes.
#pragma once
#include <cstdint>

#include "simdplan/isa.hh"
#include "simdplan/kin/robot_view.hh"

namespace simdplan {

enum IkMode : int32_t {
  kIkPose = 0,      // position and orientation of the tip frame
  kIkPosition = 1,  // position only
  kIkFreeAxis = 2,  // position, and the direction of one tip axis (rotation about it is free)
};

// One IK goal. Frames are row-major 3 x 4 [R | t], metres.
struct IkTask {
  int32_t tip_body;   // body the tip link belongs to
  float tip[12];      // the tip link's frame in that body's frame
  int32_t mode;       // IkMode
  int32_t axis;       // kIkFreeAxis: the tip axis (0 x, 1 y, 2 z) whose direction must match
  float pos_tol;      // metres: converged when the tip origin is this close
  float sin_tol;      // sin of the angle tolerance: converged when the rotation left has a smaller sine (and cos > 0)
  float max_step;     // largest change of one joint per iteration (rad or m)
  // the goal frames in the world, 12 x W floats: lane l seeks the frame whose value k (row-major
  // 3 x 4) is lane_target[k * W + l], so the lanes of one vector may solve different poses
  const float* lane_target;
  const float* lower;  // dof limits (continuous joints: -pi, pi)
  const float* upper;
  const uint8_t* wrap;  // dof: continuous joints wrap to [-pi, pi] instead of stopping at a limit
};

// The state of W restarts, structure of arrays (W floats per row), kept by the caller between calls.
struct IkLanes {
  float* q;        // dof x W: the accepted configuration of each lane
  float* cand;     // dof x W: the configuration tried next
  float* lambda;   // W: damping (m^2)
  float* error;    // W: squared error of q (inf before the first evaluation)
  float* pos_err;  // W: |position error| of q (m)
  float* sin_err;  // W: sine of the rotation left (0 in position mode)
  float* jac;      // 6 x dof x W: the Jacobian at q
  float* err6;     // 6 x W: the error vector at q
};

struct IkKernels {
  const char* name;  // "scalar", "avx2", "avx512"
  int32_t lanes;     // restarts solved together
  int64_t (*scratch_floats)(const RobotView* robot);
  // Runs `iters` damped least-squares iterations on the lanes set in `active` (bit l: lane l).
  // A lane whose accepted configuration meets the tolerances gets its bit in the return value and
  // is not changed further by this call. Lanes whose error is +inf are evaluated first.
  uint32_t (*iterate)(const RobotView* robot, const IkTask* task, IkLanes* lanes, uint32_t active, int32_t iters,
                      float* scratch);
};

template <>
const IkKernels* isa_table<IkKernels, Isa::kScalar>();
template <>
const IkKernels* isa_table<IkKernels, Isa::kAvx2>();
template <>
const IkKernels* isa_table<IkKernels, Isa::kAvx512>();

const IkKernels& ik_kernels_active();

}  // namespace simdplan
