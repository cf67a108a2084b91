// simdplan/collision/kernels.hh: the table of compiled entry points one ISA build provides.
//
// cpp/src/collision/kernels_isa.cc is compiled once per ISA; each build fills one KernelTable. Dispatch
// (cpp/src/dispatch.cc) picks a table once, at import or when the user forces an ISA, so the
// choice is made per call into the core, never per primitive. Only POD types cross this line.
#pragma once
#include <cstdint>

#include "simdplan/collision/environment_view.hh"
#include "simdplan/collision/check_state.hh"
#include "simdplan/kin/robot_view.hh"
#include "simdplan/isa.hh"

namespace simdplan {

// Options of KernelTable::distances (collision/distance.hh).
enum DistanceFlags : uint32_t {
  kDistUseLists = 1,         // self pairs: only the certified sphere pairs (not exact distances)
  kDistStopAtCollision = 2,  // return at the first negative clearance
  kDistRunningMin = 4,       // each output is the minimum so far (for callers of the overall minimum)
  kDistLowerBounds = 8,      // environment outputs may be lower bounds where >= 0 (convex hulls: face
                             // planes without GJK); negative values stay exact. For certificates.
};

// What the core lends a kernel generated per robot (python/simdplan/specialize): the parts of a pass
// that do not depend on the robot's shape, run on a LaneScratch (collision/lane_scratch.hh) in
// `scratch` whose frames and bounds the generated code computed. Suffix k: the lanes of `check` and
// `check_motion_wide`; n: those of `check_motion` (the same type where the ISA has one width).
struct SpecializedSupport {
  // collision/validity.hh environment_lanes on the lanes not in `done`; returns the new done bits,
  // *stop = 1 when the caller should stop. frames: the generated kernel's LaneScratch::frames_of.
  uint32_t (*environment_k)(const RobotView* robot, const EnvironmentView* env, float* scratch, FramesOf frames,
                            float padding, uint32_t done, bool stop_at_first, CheckState* state, const float* far,
                            int32_t* stop);
  uint32_t (*environment_n)(const RobotView* robot, const EnvironmentView* env, float* scratch, FramesOf frames,
                            float padding, uint32_t done, bool stop_at_first, CheckState* state, const float* far,
                            int32_t* stop);
  // collision/discrete_link.hh edge_far after the first of P chunks (fills the scratch's far flags)
  bool (*edge_far_k)(const RobotView* robot, const EnvironmentView* env, float* scratch, FramesOf frames,
                     const float* a, const float* b, int64_t n, int64_t P, float padding, uint32_t live);
  bool (*edge_far_n)(const RobotView* robot, const EnvironmentView* env, float* scratch, FramesOf frames,
                     const float* a, const float* b, int64_t n, int64_t P, float padding, uint32_t live);
  // collision/discrete_link.hh link_skips_far
  bool (*skips_far_k)(const RobotView* robot, const EnvironmentView* env, int64_t first, int64_t last);
  bool (*skips_far_n)(const RobotView* robot, const EnvironmentView* env, int64_t first, int64_t last);
};

struct KernelTable {
  const char* name;  // "scalar", "avx2", "avx512"
  // configurations evaluated together by check, check_motion_wide and the FK kernels
  int32_t lanes;
  // samples per chunk of check_motion, the planners' Link while trees grow (at most lanes)
  int32_t motion_lanes;
  // configurations per call of distances (certified Link's samples per kernel pass)
  int32_t distance_lanes;

  // Floats of scratch memory the kernels below need for this robot.
  int64_t (*scratch_floats)(const RobotView* robot);

  // Collision check of n configurations (rows of q, n x dof float32, row-major).
  // free_inout[i] == 0 on entry marks a row already known invalid (it is skipped); on return
  // free_inout[i] == 1 iff row i is collision-free. With stop_at_first, the rows are checked in
  // order W at a time and the call returns false at the first chunk with a collision (the
  // remaining free_inout entries are then unspecified); otherwise it returns whether all are free.
  // hint (in/out, collision/hint.hh): where the caller's last check collided; orders the tests only.
  bool (*check)(const RobotView* robot, const EnvironmentView* env, const float* q, int64_t n, float padding,
                bool stop_at_first, uint8_t* free_inout, float* scratch, CheckState* state);

  // Discrete Link(a, b) (dof float32 each): true iff the samples a + (i/n)(b - a), i = first .. last,
  // are all collision-free; they are built in the lanes in rake order (collision/discrete_link.hh),
  // motion_lanes at a time.
  bool (*check_motion)(const RobotView* robot, const EnvironmentView* env, const float* a, const float* b, int64_t n,
                       int64_t first, int64_t last, float padding, float* scratch, CheckState* state);
  // The same answer, `lanes` samples at a time: for edges that are mostly free (simplification),
  // where wider calls share the kernel's per-call work among more samples.
  bool (*check_motion_wide)(const RobotView* robot, const EnvironmentView* env, const float* a, const float* b,
                            int64_t n, int64_t first, int64_t last, float padding, float* scratch, CheckState* state);
  // check_motion_wide if wide, else check_motion
  decltype(check_motion) motion_kernel(bool wide) const { return wide ? check_motion_wide : check_motion; }

  // Collision-free test of ONE configuration (dof float32, limits already checked), robot spheres in
  // the lanes (see collision/validity_one.hh). Scratch: one_scratch_floats.
  int64_t (*one_scratch_floats)(const RobotView* robot);
  bool (*check_one)(const RobotView* robot, const EnvironmentView* env, const float* q, float padding, float* scratch);

  // Clearances of count <= distance_lanes configurations (rows of q, count x dof float32), the
  // contract of collision/distance.hh: env_out[g * distance_lanes + l] (per group, capped at
  // cap_env[g]) and pair_out[p * distance_lanes + l] (per self pair, sorted order, capped at
  // cap_pair[p]), under DistanceFlags. Returns the bits of the rows with a negative clearance.
  // centre_out (nullptr: not wanted): the world bound centre of every group the call measured
  // against the environment, centre_out[(3 g + axis) * distance_lanes + l]; NaN for the others.
  // Point clouds need their nearest-point trees (Environment::require_cloud_nearest).
  int64_t (*distance_scratch_floats)(const RobotView* robot);
  uint32_t (*distances)(const RobotView* robot, const EnvironmentView* env, const float* q, int32_t count,
                        float padding, const float* cap_env, const float* cap_pair, uint32_t flags,
                        float* env_out, float* pair_out, float* centre_out, float* scratch);

  // Forward kinematics of n configurations: world sphere centres and radii (n x n_spheres x 4),
  // radii unchanged.
  void (*fk_spheres)(const RobotView* robot, const float* q, int64_t n, float* out, float* scratch);

  // Forward kinematics of n configurations: body frames (n x n_bodies x 12, row-major [R | t]).
  void (*fk_bodies)(const RobotView* robot, const float* q, int64_t n, float* out, float* scratch);

  // lent to the kernels generated per robot for this ISA
  const SpecializedSupport* support;
};

// What a kernel library generated for one robot exports (python/simdplan/specialize): the entries of
// its ISA's KernelTable it replaces, each giving the same answers as the one it replaces. The library
// exports `extern "C" const SpecializedKernels* simdplan_specialized_kernels(const SpecializedSupport*)`
// (given its ISA's support table, which it keeps); RobotModel::attach_kernels refuses it unless abi,
// isa and key match what the caller expects.
constexpr uint32_t kSpecializedAbi = 2;  // bump whenever this struct or a replaced signature changes
struct SpecializedKernels {
  uint32_t abi;     // kSpecializedAbi of the headers it was built from
  const char* isa;  // KernelTable::name of the ISA build it replaces entries of
  const char* key;  // the key it was generated for (robot content, ISA, compiler, simdplan version)
  decltype(KernelTable::check) check;
  decltype(KernelTable::check_motion) check_motion;
  decltype(KernelTable::check_motion_wide) check_motion_wide;
};

// The tables of the ISA builds that were compiled in (nullptr where not compiled).
template <>
const KernelTable* isa_table<KernelTable, Isa::kScalar>();
template <>
const KernelTable* isa_table<KernelTable, Isa::kAvx2>();
template <>
const KernelTable* isa_table<KernelTable, Isa::kAvx512>();

}  // namespace simdplan
