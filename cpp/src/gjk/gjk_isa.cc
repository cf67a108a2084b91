// gjk_isa.cc: instantiates the support queries and GJK distances for one ISA and exports its
// GjkKernels table.
//
// Built once per ISA by CMake with the flags and SIMDPLAN_NS of that ISA's kernels, plus
// -ffp-contract=off: every support method must compute the same float dot products (see
// gjk/hull_view.hh), which a compiler free to fuse a * b + c in some loops and not others breaks.
#include "simdplan/gjk/gjk.hh"
#include "simdplan/gjk/gjk_kernels.hh"
#include "simdplan/gjk/support.hh"
#include "simdplan/vec/vec.hh"

namespace simdplan {
namespace SIMDPLAN_NS {
namespace {

void support_brute_batch(const HullView* h, const float* d, int64_t m, int64_t* idx, float* val) {
  for (int64_t i = 0; i < m; ++i) {
    const SupportHit r = support_brute<Vec>(*h, d[3 * i], d[3 * i + 1], d[3 * i + 2]);
    idx[i] = r.index, val[i] = r.value;
  }
}

// NOTE: every direction climbs from the axis extremes (no hint from the previous one), so the
// batch measures cold queries; GJK passes hints itself.
void support_plain_batch(const HullView* h, const float* d, int64_t m, int64_t* idx, float* val) {
  for (int64_t i = 0; i < m; ++i) {
    const SupportHit r = support_plain<Vec>(*h, d[3 * i], d[3 * i + 1], d[3 * i + 2]);
    idx[i] = r.index, val[i] = r.value;
  }
}

void support_packed_batch(const HullView* h, const float* d, int64_t m, int64_t* idx, float* val) {
  for (int64_t i = 0; i < m; ++i) {
    const SupportHit r = support_packed<Vec>(*h, d[3 * i], d[3 * i + 1], d[3 * i + 2]);
    idx[i] = r.index, val[i] = r.value;
  }
}

void sphere_distance(const HullView* h, const GjkPose* pose, int32_t method, const double* c, const double* r,
                     int64_t m, double* clearance, double* witness, int32_t* status) {
  gjk_batch<Vec>(*h, *pose, method, c, nullptr, r, m, clearance, witness, status);
}

void capsule_distance(const HullView* h, const GjkPose* pose, int32_t method, const double* a, const double* b,
                      const double* r, int64_t m, double* clearance, double* witness, int32_t* status) {
  gjk_batch<Vec>(*h, *pose, method, a, b, r, m, clearance, witness, status);
}

const GjkKernels kTable = {kThisIsaName, Vec::W, support_brute_max<Vec>(), &support_brute_batch, &support_plain_batch,
                           &support_packed_batch, &sphere_distance, &capsule_distance};

}  // namespace
}  // namespace SIMDPLAN_NS

template <>
const GjkKernels* isa_table<GjkKernels, kThisIsa>() {
  return &SIMDPLAN_NS::kTable;
}

}  // namespace simdplan
