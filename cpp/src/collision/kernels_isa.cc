// kernels_isa.cc: instantiates every kernel for one ISA and exports its KernelTable.
//
// Built three times by CMake (scalar, avx2, avx512), each with its own -m flags and
// -DSIMDPLAN_NS=isa_<name>. Nothing here may use code that another build also instantiates
// (see simdplan/config.hh): only our namespaced templates, intrinsics and libm builtins.
#include "simdplan/collision/distance.hh"
#include "simdplan/collision/discrete_link.hh"
#include "simdplan/collision/validity.hh"
#include "simdplan/collision/validity_one.hh"
#include "simdplan/collision/kernels.hh"
#include "simdplan/vec/vec.hh"

#if defined(SIMDPLAN_ISA_AVX512)
#include "simdplan/vec/avx2.hh"
#endif

namespace simdplan {
namespace SIMDPLAN_NS {
namespace {

#if defined(SIMDPLAN_ISA_AVX512)
// PERF: the single-configuration kernel puts one link's spheres in the lanes, and the panda's links
// hold at most 18 (most 4-12), so 16-wide vectors run mostly empty: 8-wide AVX2 vectors measured
// 3-20% faster on the MotionBenchMaker scenes (Xeon @ 2.5 GHz, interleaved medians of 7 x 20k calls).
using VecOne = VecAvx2;
#else
using VecOne = Vec;
#endif

int64_t scratch_floats(const RobotView* rb) { return LaneScratch<Vec>::vectors(*rb) * Vec::W; }

bool check(const RobotView* rb, const EnvironmentView* env, const float* q, int64_t n, float padding,
           bool stop_at_first, uint8_t* free_inout, float* scratch, CheckState* state) {
  CheckState local;
  return check_batch<Vec>(*rb, *env, q, n, padding, stop_at_first, free_inout, scratch, state ? *state : local);
}

bool motion(const RobotView* rb, const EnvironmentView* env, const float* a, const float* b, int64_t n, int64_t first,
            int64_t last, float padding, float* scratch, CheckState* state) {
  CheckState local;
  return check_motion<Vec>(*rb, *env, a, b, n, first, last, padding, scratch, state ? *state : local);
}

int64_t one_floats(const RobotView* rb) { return one_scratch_floats(*rb); }

bool one(const RobotView* rb, const EnvironmentView* env, const float* q, float padding, float* scratch) {
  return check_one<VecOne>(*rb, *env, q, padding, scratch);
}

int64_t dist_floats(const RobotView* rb) { return distance_scratch_floats<Vec>(*rb); }

uint32_t distances(const RobotView* rb, const EnvironmentView* env, const float* q, int32_t count, float padding,
                   const float* cap_env, const float* cap_pair, uint32_t flags, float* env_out,
                   float* pair_out, float* scratch) {
  return distance_rows<Vec>(*rb, *env, q, count, padding, cap_env, cap_pair, flags, env_out, pair_out, scratch);
}

void fk_spheres(const RobotView* rb, const float* q, int64_t n, float* out, float* scratch) {
  fk_spheres_batch<Vec>(*rb, q, n, out, scratch);
}

void fk_bodies(const RobotView* rb, const float* q, int64_t n, float* out, float* scratch) {
  fk_bodies_batch<Vec>(*rb, q, n, out, scratch);
}

const KernelTable kTable = {kThisIsaName, Vec::W,     &scratch_floats, &check,      &motion, &one_floats,
                             &one,                &dist_floats, &distances,      &fk_spheres, &fk_bodies};

}  // namespace
}  // namespace SIMDPLAN_NS

template <>
const KernelTable* isa_table<KernelTable, kThisIsa>() {
  return &SIMDPLAN_NS::kTable;
}

}  // namespace simdplan
