// ik_isa.cc: instantiates the inverse-kinematics solver for one ISA and exports its IkKernels.
//
// Built once per ISA with kernels_isa.cc (same flags and SIMDPLAN_NS; see simdplan/config.hh).
#include "simdplan/kin/ik.hh"
#include "simdplan/kin/ik_kernels.hh"
#include "simdplan/vec/vec.hh"

namespace simdplan {
namespace SIMDPLAN_NS {
namespace {

int64_t scratch_floats(const RobotView* rb) { return ik_scratch_vectors(*rb) * Vec::W; }

uint32_t iterate(const RobotView* rb, const IkTask* task, IkLanes* lanes, uint32_t active, int32_t iters,
                 float* scratch) {
  return ik_iterate<Vec>(*rb, *task, *lanes, active, iters, scratch);
}

const IkKernels kTable = {kThisIsaName, Vec::W, &scratch_floats, &iterate};

}  // namespace
}  // namespace SIMDPLAN_NS

template <>
const IkKernels* isa_table<IkKernels, kThisIsa>() {
  return &SIMDPLAN_NS::kTable;
}

}  // namespace simdplan
