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

void nearest_lanes(const NearestView* t, const float* c, int64_t n, const float* max_distance, float* dist) {
  constexpr int W = Vec::W;
  const float inf = std::numeric_limits<float>::infinity();
  alignas(64) float x[W], y[W], z[W], b2[W], d2[W];
  for (int64_t s = 0; s < n; s += W) {
    const int m = n - s < W ? int(n - s) : W;
    for (int l = 0; l < W; ++l) {  // lanes past the end repeat the first query of this vector
      const int64_t i = s + (l < m ? l : 0);
      x[l] = c[3 * i], y[l] = c[3 * i + 1], z[l] = c[3 * i + 2], b2[l] = bound_sq_for(max_distance[i]);
    }
    const uint32_t lanes = m >= 32 ? ~0u : (1u << m) - 1u;
    nearest_sq_lanes(*t, Vec::load(x), Vec::load(y), Vec::load(z), Vec::load(b2), lanes).store(d2);
    for (int l = 0; l < m; ++l) {  // as nearest: found below the bound, and strictly within max_distance
      const float d = std::sqrt(d2[l]);
      dist[s + l] = d2[l] < b2[l] && d < max_distance[s + l] ? d : inf;
    }
  }
}

void floor_lanes(const NearestView* t, const float* c, int64_t n, float* out) {
  constexpr int W = Vec::W;
  alignas(64) float x[W], y[W], z[W], f[W];
  for (int64_t s = 0; s < n; s += W) {
    const int m = n - s < W ? int(n - s) : W;
    for (int l = 0; l < W; ++l) {  // lanes past the end repeat the first query of this vector
      const int64_t i = s + (l < m ? l : 0);
      x[l] = c[3 * i], y[l] = c[3 * i + 1], z[l] = c[3 * i + 2];
    }
    nearest_floor_lanes(*t, Vec::load(x), Vec::load(y), Vec::load(z)).store(f);
    for (int l = 0; l < m; ++l) out[s + l] = f[l];
  }
}

const NearestKernels kTable = {kThisIsaName, Vec::W, &nearest, &nearest_lanes, &floor_lanes};

}  // namespace
}  // namespace SIMDPLAN_NS

template <>
const NearestKernels* isa_table<NearestKernels, kThisIsa>() {
  return &SIMDPLAN_NS::kTable;
}

}  // namespace simdplan
