// nearest_isa.cc: instantiates the nearest-point query for one ISA and exports its NearestKernels.
//
// Built once per ISA by CMake with the same flags and SIMDPLAN_NS as capt_isa.cc (see
// simdplan/config.hh for why every inline function here lives in the per-ISA namespace).
#include <cmath>
#include <limits>

#include "simdplan/capt/nearest_kernels.hh"
#include "simdplan/capt/nearest_query.hh"
#include "simdplan/vec/vec.hh"

namespace simdplan {
namespace SIMDPLAN_NS {
namespace {

// The smallest float >= max_distance^2 (the product is exact in double). Any float distance
// fl(sqrt(d2)) < max_distance has d2 < max_distance^2 <= this bound, so the search with it misses
// no answer; the final float compare then decides strictness exactly.
float bound_sq_for(float max_distance) {
  const double m2 = double(max_distance) * double(max_distance);
  float b = float(m2);
  if (double(b) < m2) b = std::nextafter(b, std::numeric_limits<float>::infinity());
  return b;
}

void nearest(const NearestView* t, const float* c, int64_t n, float max_distance, float* dist, int32_t* index) {
  const float inf = std::numeric_limits<float>::infinity();
  const float bound_sq = bound_sq_for(max_distance);
  for (int64_t i = 0; i < n; ++i) {
    int32_t j = -1;
    const float d = std::sqrt(nearest_sq<Vec>(*t, c[3 * i], c[3 * i + 1], c[3 * i + 2], bound_sq, &j));
    const bool hit = j >= 0 && d < max_distance;
    dist[i] = hit ? d : inf;
    index[i] = hit ? j : -1;
  }
}

const NearestKernels kTable = {kThisIsaName, Vec::W, &nearest};

}  // namespace
}  // namespace SIMDPLAN_NS

template <>
const NearestKernels* isa_table<NearestKernels, kThisIsa>() {
  return &SIMDPLAN_NS::kTable;
}

}  // namespace simdplan
