// build_parts.hh: what the pieces of the CAPT build (tree.cc, build.cc, build_avx512.cc, grid.cc) share.
// Private to cpp/src/capt/: the public side is simdplan/capt/tree.hh.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "simdplan/capt/tree.hh"
#include "simdplan/deadline.hh"

namespace simdplan::capt::build_parts {

constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr double kRel = 1e-5;  // relative margins of R and r_min, see the preamble of build.cc

struct P3 {
  float c[3];
};

// A cell box rounded outward to float, for the candidate filter.
struct BoxF {
  float lo[3], hi[3];
};

inline float down(double v) {
  float f = float(v);
  return double(f) > v ? std::nextafter(f, -kInfF) : f;
}
inline float up(double v) {
  float f = float(v);
  return double(f) < v ? std::nextafter(f, kInfF) : f;
}

// Builds the tree's levels over the distinct points pts (the Builder of build.cc): fills splits,
// leaves and the stored points, returns the depth.
int32_t build_levels(std::vector<P3> pts, float r_min, float r_max, float point_radius, std::vector<float>& splits,
                     std::vector<CaptLeaf>& leaves, FloatBuffer& px, FloatBuffer& py, FloatBuffer& pz,
                     BuildStats& stats, const Deadline* stop);

// Whether the Builder runs the AVX-512 loops: compiled in, the CPU has AVX-512 and
// SIMDPLAN_CAPT_PORTABLE_BUILD is not 1.
bool build_has_avx512();

// The AVX-512 loops of the Builder (build_avx512.cc), with exactly the results of its portable loops.
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define SIMDPLAN_CAPT_X86_KERNELS 1
#define SIMDPLAN_AVX512_FN __attribute__((target("avx512f,avx512vl,avx512dq")))
SIMDPLAN_AVX512_FN size_t filter_avx512(const float* x, const float* y, const float* z, const int32_t* id, int32_t id0,
                                        size_t m, const float* lo, const float* hi, float r2f, float* ox, float* oy,
                                        float* oz, int32_t* oid, size_t w);
SIMDPLAN_AVX512_FN size_t own_prune_avx512(float* x, float* y, float* z, int32_t* id, size_t n, const double (*b)[3],
                                           int nb, const double* lo, const double* hi, double m);
SIMDPLAN_AVX512_FN void filter2_avx512(const float* x, const float* y, const float* z, const int32_t* id, size_t m,
                                       const BoxF* box, float r2f, float* const* o, int32_t* const* oid, size_t* w);
SIMDPLAN_AVX512_FN size_t leaf_list_avx512(float* x, float* y, float* z, size_t n, const double* b, const double* lo,
                                           const double* hi, double m, float* alo, float* ahi);
#endif


// The coarse occupancy grid of the view (capt/view.hh, step 7 in capt/tree.hh) over points
// pts, for queries reaching up to R (r_max + point_radius, with the builder's slack).
// Why a clear cell proves a query free: cells come from a = fl(fl(x - lo) * inv), x, lo and inv
// floats; each rounding is relative to a value at most n < 2^13 cells, so a is within
// delta = 2n 2^-24 < 0.002 of (x - lo) * inv. If |c - p| < R, then per axis the cell indices
// floor(a_c) and floor(a_p) differ by at most ceil(R inv + 2 delta) <= reach (reach adds 0.05),
// so c's cell lies within reach cells of p's marked cell, which the dilation sets. The grid
struct NearGrid {
  std::vector<uint64_t> bits;
  float lo[3] = {0, 0, 0};
  float inv = 0;
  int32_t n[3] = {0, 0, 0};
  int32_t words = 0;
};

constexpr int64_t kGridMaxBits = int64_t(1) << 23;  // 1 MB
// PERF: the small-radius grid's cells are 3.6x finer, so a cloud's grid would be 46x larger; at
// 1 MB its zeroing and page faults cost a 10k-point uniform cloud in a 2 m cube a fifth of its
// build. A MotionBenchMaker scene (about 1 m across, 1 cm cells) still fits this cap at full size.
constexpr int64_t kSmallGridMaxBits = int64_t(1) << 21;  // 256 kB

NearGrid near_grid(const std::vector<P3>& pts, double R, int64_t max_bits);

}  // namespace simdplan::capt::build_parts
