// kernels_isa.cc: instantiates every kernel for one ISA and exports its KernelTable.
//
// Built three times by CMake (scalar, avx2, avx512), each with its own -m flags and
// -DSIMDPLAN_NS=isa_<name>. Nothing here may use code that another build also instantiates
// (see simdplan/config.hh): only our namespaced templates, intrinsics and libm builtins.
#include <algorithm>

#include "simdplan/collision/distance.hh"
#include "simdplan/collision/discrete_link.hh"
#include "simdplan/collision/validity.hh"
#include "simdplan/collision/validity_one.hh"
#include "simdplan/collision/kernels.hh"
#include "simdplan/vec/vec.hh"

#if defined(SIMDPLAN_ISA_AVX512)
#include "simdplan/vec/avx2.hh"
#elif defined(SIMDPLAN_ISA_AVX2)
#include "simdplan/vec/avx2x2.hh"
#endif

namespace simdplan {
namespace SIMDPLAN_NS {
namespace {

// VecOne: the single-configuration kernel; VecK: batches, FK and the wide Link; VecN: the planners'
// Link while trees grow (check_motion) and clearances.
#if defined(SIMDPLAN_ISA_AVX512)
// PERF: the single-configuration kernel puts one link's spheres in the lanes, and the panda's links
// hold at most 18 (most 4-12), so 16-wide vectors run mostly empty: 8-wide AVX2 vectors measured
// 3-20% faster on the MotionBenchMaker scenes (Xeon @ 2.5 GHz, interleaved medians of 7 x 20k calls).
using VecOne = VecAvx2;
using VecK = Vec;
using VecN = Vec;
#elif defined(SIMDPLAN_ISA_AVX2)
// PERF: a kernel call's scalar work (which test next, what is computed yet) is paid once per call, so
// 16 configurations per call (two __m256 halves) cost less per configuration than 8 where most are
// free: AVX2, ur5 planned-path configurations 91-92 -> 74-76 ns each, panda 74 -> 64 ns; discrete
// simplification median -6% to -22% on five robots (two alternating runs, same plans). Growing
// trees, where most edges collide in their first chunk, keep 8 lanes: with 16 their planning means
// rose 10-25% (panda, ur5, iiwa). So do certificates (8 samples per clearance pass): with 16,
// certified planning means rose 13-15% on the panda and the ur5.
using VecOne = Vec;
using VecK = VecAvx2x2;
using VecN = Vec;
#else
using VecOne = Vec;
using VecK = Vec;
using VecN = Vec;
#endif

int64_t scratch_floats(const RobotView* rb) {
  return std::max(LaneScratch<VecK>::vectors(*rb) * VecK::W, LaneScratch<VecN>::vectors(*rb) * VecN::W);
}

bool check(const RobotView* rb, const EnvironmentView* env, const float* q, int64_t n, float padding,
           bool stop_at_first, uint8_t* free_inout, float* scratch, CheckState* state) {
  CheckState local;
  return check_batch<VecK>(*rb, *env, q, n, padding, stop_at_first, free_inout, scratch, state ? *state : local);
}

// check_motion (V = VecN) and check_motion_wide (V = VecK)
template <class V>
bool motion(const RobotView* rb, const EnvironmentView* env, const float* a, const float* b, int64_t n, int64_t first,
            int64_t last, float padding, float* scratch, CheckState* state) {
  CheckState local;
  return check_motion<V>(*rb, *env, a, b, n, first, last, padding, scratch, state ? *state : local);
}

int64_t one_floats(const RobotView* rb) { return one_scratch_floats(*rb); }

bool one(const RobotView* rb, const EnvironmentView* env, const float* q, float padding, float* scratch) {
  return check_one<VecOne>(*rb, *env, q, padding, scratch);
}

int64_t dist_floats(const RobotView* rb) { return distance_scratch_floats<VecN>(*rb); }

uint32_t distances(const RobotView* rb, const EnvironmentView* env, const float* q, int32_t count, float padding,
                   const float* cap_env, const float* cap_pair, uint32_t flags, float* env_out,
                   float* pair_out, float* centre_out, float* scratch) {
  return distance_rows<VecN>(*rb, *env, q, count, padding, cap_env, cap_pair, flags, env_out, pair_out, centre_out,
                             scratch);
}

void fk_spheres(const RobotView* rb, const float* q, int64_t n, float* out, float* scratch) {
  fk_spheres_batch<VecK>(*rb, q, n, out, scratch);
}

void fk_bodies(const RobotView* rb, const float* q, int64_t n, float* out, float* scratch) {
  fk_bodies_batch<VecK>(*rb, q, n, out, scratch);
}

template <class V>
uint32_t environment(const RobotView* rb, const EnvironmentView* env, float* scratch, FramesOf frames, float padding,
                     uint32_t done, bool stop_at_first, CheckState* state, const float* far, int32_t* stop) {
  const LaneScratch<V> s(*rb, scratch, frames);
  auto mask = V::Mask::from_bits(done);
  *stop = environment_lanes(*rb, *env, s, padding, mask, stop_at_first, *state, far) ? 1 : 0;
  return mask.bits();
}

template <class V>
bool far_after_first(const RobotView* rb, const EnvironmentView* env, float* scratch, FramesOf frames, const float* a,
                     const float* b, int64_t n, int64_t P, float padding, uint32_t live) {
  const LaneScratch<V> s(*rb, scratch, frames);
  return edge_far(*rb, *env, s, a, b, n, P, padding, V::Mask::from_bits(live));
}

template <class V>
bool skips_far(const RobotView* rb, const EnvironmentView* env, int64_t first, int64_t last) {
  return link_skips_far<V>(*rb, *env, first, last);
}

const SpecializedSupport kSupport = {&environment<VecK>,     &environment<VecN>, &far_after_first<VecK>,
                                     &far_after_first<VecN>, &skips_far<VecK>,   &skips_far<VecN>};

const KernelTable kTable = {kThisIsaName, VecK::W,       VecN::W,       VecN::W,     &scratch_floats,
                             &check,       &motion<VecN>, &motion<VecK>, &one_floats, &one,
                             &dist_floats, &distances,    &fk_spheres,   &fk_bodies, &kSupport};

}  // namespace
}  // namespace SIMDPLAN_NS

template <>
const KernelTable* isa_table<KernelTable, kThisIsa>() {
  return &SIMDPLAN_NS::kTable;
}

}  // namespace simdplan
