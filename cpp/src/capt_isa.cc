// capt_isa.cc: instantiates the CAPT queries for one ISA and exports its CaptKernels table.
//
// Built once per ISA by CMake with the same flags and SIMDPLAN_NS as kernels_isa.cc (see
// simdplan/config.hh for why every inline function here lives in the per-ISA namespace).
#include "simdplan/capt/capt_kernels.hh"
#include "simdplan/capt/query.hh"
#include "simdplan/vec/vec.hh"

#if defined(SIMDPLAN_ISA_AVX512)
#define SIMDPLAN_CAPT_TABLE_NAME "avx512"
#define SIMDPLAN_CAPT_TABLE_FN capt_kernels_avx512
#elif defined(SIMDPLAN_ISA_AVX2)
#define SIMDPLAN_CAPT_TABLE_NAME "avx2"
#define SIMDPLAN_CAPT_TABLE_FN capt_kernels_avx2
#else
#define SIMDPLAN_CAPT_TABLE_NAME "scalar"
#define SIMDPLAN_CAPT_TABLE_FN capt_kernels_scalar
#endif

namespace simdplan {
namespace SIMDPLAN_NS {
namespace {

void collides_one(const CaptView* t, const float* c, const float* r, int64_t n, uint8_t* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = capt_hit_one<Vec>(*t, c[3 * i], c[3 * i + 1], c[3 * i + 2], r[i]);
}

void collides_lanes(const CaptView* t, const float* c, const float* r, int64_t n, uint8_t* out) {
  constexpr int W = Vec::W;
  alignas(64) float xs[W], ys[W], zs[W], rs[W];
  for (int64_t i = 0; i < n; i += W) {
    const int64_t m = n - i < W ? n - i : W;
    for (int k = 0; k < W; ++k) {
      const int64_t j = i + (k < m ? k : 0);  // spare lanes repeat the first sphere
      xs[k] = c[3 * j];
      ys[k] = c[3 * j + 1];
      zs[k] = c[3 * j + 2];
      rs[k] = r[j];
    }
    const uint32_t bits = capt_hit<Vec>(*t, Vec::load(xs), Vec::load(ys), Vec::load(zs), Vec::load(rs)).bits();
    for (int64_t k = 0; k < m; ++k) out[i + k] = (bits >> k) & 1u;
  }
}

const CaptKernels kTable = {SIMDPLAN_CAPT_TABLE_NAME, Vec::W, &collides_one, &collides_lanes};

}  // namespace
}  // namespace SIMDPLAN_NS

const CaptKernels* SIMDPLAN_CAPT_TABLE_FN() { return &SIMDPLAN_NS::kTable; }

}  // namespace simdplan
