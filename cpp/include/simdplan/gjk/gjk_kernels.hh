// simdplan/gjk/gjk_kernels.hh: the support and GJK entry points one ISA build provides (ISA-neutral).
//
// cpp/src/gjk/gjk_isa.cc is compiled once per ISA (like capt_isa.cc) and fills one GjkKernels;
// gjk_kernels_active() (cpp/src/gjk/hull.cc) returns the table of the ISA that simdplan::active()
// names, so simdplan.set_isa() switches these queries too. Only PODs cross this line.
#pragma once
#include <cstdint>

#include "simdplan/gjk/hull_view.hh"
#include "simdplan/isa.hh"

namespace simdplan {

// A hull's pose: world = r * local + t (r row-major 3 x 3, a rotation; t metres).
struct GjkPose {
  double r[9];
  double t[3];
};

// Per-query outcome of the distance kernels.
enum GjkStatus : int32_t {
  kGjkSeparated = 0,   // converged, the shapes' cores do not overlap; clearance = distance - radius
  kGjkPenetrating = 1, // the core (centre or segment) is inside the hull; clearance = -depth - radius
  kGjkIterations = 2,  // iteration limit: clearance is an upper bound (rare; see gjk/gjk.hh)
};

// GJK's kSupportAuto: climbing on the plain layout below this many vertices, on the packed one
// from here (brute force loses at every size: GJK's later supports start a step from their goal,
// and its brute force still needs a double-precision climb to settle near-ties).
// PERF: sphere-hull GJK, spheres outside hulls of points on a sphere, ns per query, brute / plain /
// packed (scalar, AVX2 and AVX-512 alike within noise: the climbs are scalar double code):
//   vertices   8: 580/451/475   72: 475/385/421   220: 783/563/615   1000: 2032/773/864   (AVX2,
//   2000: 3146/876/898   5000: 8670/1108/1001   (a /tmp harness, min of 2 runs)
//   10000: 8304/1495/1312   20000: 19343/2300/2105   (benchmarks/bench_gjk.py, AVX-512, medians)
constexpr int32_t kGjkPackedMinVertices = 3000;

struct GjkKernels {
  const char* name;  // "scalar", "avx2", "avx512"
  int32_t lanes;     // floats per vector in this build
  // support's kSupportAuto: brute force up to this many vertices, else climbing (packed when the
  // hull has the layout, else plain); measured per ISA (gjk/support.hh)
  int32_t support_brute_max;

  // m directions (m x 3 float32, hull frame, finite): idx[i] = a vertex v maximising
  // dot(v, d_i) (computed as in gjk/hull_view.hh), val[i] = that dot. Brute force returns the first
  // maximiser in index order; the climbs return some maximiser. support_packed needs h->lines.
  void (*support_brute)(const HullView* h, const float* dirs, int64_t m, int64_t* idx, float* val);
  void (*support_plain)(const HullView* h, const float* dirs, int64_t m, int64_t* idx, float* val);
  void (*support_packed)(const HullView* h, const float* dirs, int64_t m, int64_t* idx, float* val);

  // m spheres (centres m x 3, radii m, world frame, metres) against the hull in `pose`, support
  // by `method` (SupportMethod; kSupportAuto: see kGjkPackedMinVertices): clearance[i] (signed, see
  // gjk/gjk.hh), witness[3i..3i+2] (world, on the hull), status[i] (GjkStatus).
  void (*sphere_distance)(const HullView* h, const GjkPose* pose, int32_t method, const double* centers,
                          const double* radii, int64_t m, double* clearance, double* witness, int32_t* status);
  // m capsules: segments a_i -> b_i (m x 3 each, world) swept by radii[i]; outputs as above.
  void (*capsule_distance)(const HullView* h, const GjkPose* pose, int32_t method, const double* a, const double* b,
                           const double* radii, int64_t m, double* clearance, double* witness, int32_t* status);
};

// The tables of the ISA builds compiled in (nullptr where not compiled).
template <>
const GjkKernels* isa_table<GjkKernels, Isa::kScalar>();
template <>
const GjkKernels* isa_table<GjkKernels, Isa::kAvx2>();
template <>
const GjkKernels* isa_table<GjkKernels, Isa::kAvx512>();

// The table matching simdplan::active().name (scalar for a name without a GJK build).
const GjkKernels& gjk_kernels_active();

}  // namespace simdplan
