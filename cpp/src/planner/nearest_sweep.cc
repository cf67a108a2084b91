// nearest_sweep.cc: the brute-force sweep of simdplan/planner/nearest.hh, compiled for AVX2 and for
// the baseline ISA and chosen at load time (GCC target_clones), so the ISA-neutral planners get
// 8-wide distances where the CPU has them.
//
// NOTE: no FMA in either build (target "avx2" does not enable it, and the sums are written as a
// multiply then an add), so both give the same squared distances and therefore the same plans.
#include <cstring>
#include <limits>

#include "simdplan/planner/nearest.hh"

namespace simdplan::planner {

__attribute__((target_clones("avx2", "default"))) void nearest_sweep(const float* const* cols, size_t n, int32_t dof,
                                                                     const float* q, size_t from, int32_t& best,
                                                                     float& bd) {
  typedef float F8 __attribute__((vector_size(32)));
  constexpr size_t kBlock = 16;  // NearestNeighbors::kBlock: two F8 per block
  for (size_t i = from - from % kBlock; i < n; i += kBlock) {
    F8 d[2] = {};
    for (int32_t j = 0; j < dof; ++j) {
      const float* x = cols[j] + i;
      const F8 qj = F8{} + q[j];
      for (int v = 0; v < 2; ++v) {
        F8 e;
        std::memcpy(&e, x + 8 * v, sizeof e);
        e -= qj;
        const F8 sq = e * e;
        d[v] += sq;
      }
    }
    // rows before `from` are the tree's, already searched
    if (i < from)
      for (size_t l = 0; l < from - i; ++l) d[l / 8][l % 8] = std::numeric_limits<float>::infinity();
    // PERF: the block's minimum without branches, then its first lane
    F8 m = d[0] < d[1] ? d[0] : d[1];
    float mv = m[0];
    for (int l = 1; l < 8; ++l) mv = m[l] < mv ? m[l] : mv;
    if (!(mv < bd)) continue;
    size_t l = 0;
    while (!(d[l / 8][l % 8] == mv)) ++l;  // the first row at the minimum, as a strict < scan keeps
    bd = mv, best = static_cast<int32_t>(i + l);
  }
}

}  // namespace simdplan::planner
