// tree.cc: simdplan::capt::Tree's constructor (checks, distinct points, the builder of build.cc,
// the occupancy grids of grid.cc, the view) and the CAPT query table of the ISA in use.
// ISA-neutral: compiled once, without -m flags.
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "build_parts.hh"
#include "distinct_points.hh"
#include "dispatch.hh"
#include "simdplan/capt/capt_kernels.hh"
#include "simdplan/capt/tree.hh"

namespace simdplan {

const CaptKernels& capt_kernels_active() { return active_table<CaptKernels>(); }

namespace capt {

FloatBuffer& FloatBuffer::operator=(FloatBuffer&& o) noexcept {
  if (this != &o) {
    std::free(p_);
    p_ = o.p_, n_ = o.n_, cap_ = o.cap_;
    o.p_ = nullptr, o.n_ = o.cap_ = 0;
  }
  return *this;
}

FloatBuffer::~FloatBuffer() { std::free(p_); }

void FloatBuffer::reserve(size_t m) {
  if (m <= cap_) return;
  void* q = std::realloc(p_, m * sizeof(float));
  if (!q) throw std::bad_alloc();
  p_ = static_cast<float*>(q);
  cap_ = m;
}

void FloatBuffer::append(const float* src, size_t m) {
  if (n_ + m > cap_) reserve(std::max<size_t>({n_ + m, 2 * cap_, 1024}));
  if (m) std::memcpy(p_ + n_, src, m * sizeof(float));
  n_ += m;
}

namespace {

using namespace build_parts;

constexpr double kMaxAbs = 1e12;  // coordinates and radii: squared distances stay finite in float32
constexpr int64_t kMaxPoints = int64_t(1) << 30;

void check_radius(double v, const char* name) {
  if (!std::isfinite(v) || v < 0.0 || v > kMaxAbs)
    throw std::invalid_argument(std::string("CAPT: ") + name + " must be finite, >= 0 and <= 1e12, got " +
                                std::to_string(v));
}

}  // namespace

Tree::Tree(const float* points, int64_t n, float r_min, float r_max, float point_radius, const Deadline* stop) {
  const auto t0 = std::chrono::steady_clock::now();
  check_radius(r_min, "r_min");
  check_radius(r_max, "r_max");
  check_radius(point_radius, "point_radius");
  if (r_min > r_max)
    throw std::invalid_argument("CAPT: r_min (" + std::to_string(r_min) + ") must not exceed r_max (" +
                                std::to_string(r_max) + ")");
  if (n < 0 || n > kMaxPoints) throw std::length_error("CAPT: at most 2^30 points, got " + std::to_string(n));
  for (int64_t i = 0; i < 3 * n; ++i)
    if (!(std::fabs(points[i]) <= kMaxAbs))
      throw std::invalid_argument("CAPT: point " + std::to_string(i / 3) + " has a non-finite or huge (> 1e12) coordinate");

  const std::vector<int32_t> rows = distinct_points(points, n);
  std::vector<P3> pts(rows.size());
  for (size_t k = 0; k < rows.size(); ++k) canonical_point(points, rows[k], pts[k].c);
  stats_.points = n;
  stats_.unique_points = int64_t(pts.size());
  NearGrid grid = near_grid(pts, (double(r_max) + double(point_radius)) * (1.0 + kRel), kGridMaxBits);
  // The small-radius grid (capt/view.hh "grid") serves rr <= small_rr, a quarter of the way up the
  // radius range. PERF: MotionBenchMaker cage, Panda spheres (mostly 12-28 mm of [12, 80] mm):
  // the spheres that reach the tree drop from 9.3% to about 4.5% (estimated from nearest-point
  // distances before building it; measured figures in the commit). Not built where the range is
  // too narrow for a quarter of it to matter.
  const float small_rr = float(double(r_min) + (double(r_max) - double(r_min)) / 4.0 + double(point_radius));
  const bool two_grids = !grid.bits.empty() && double(r_max) - double(r_min) >= 0.25 * double(r_max) && small_rr > 0.0f;
  NearGrid small = two_grids ? near_grid(pts, double(small_rr) * (1.0 + kRel), kSmallGridMaxBits) : NearGrid();
  view_.depth = build_levels(std::move(pts), r_min, r_max, point_radius, splits_, leaves_, px_, py_, pz_, stats_, stop);
  view_.splits = splits_.data();
  view_.leaves = leaves_.data();
  view_.px = px_.data();
  view_.py = py_.data();
  view_.pz = pz_.data();
  view_.r_min = r_min;
  view_.r_max = r_max;
  view_.point_radius = point_radius;
  auto describe = [](const NearGrid& g, int32_t base) {
    CaptGrid d;
    for (int k = 0; k < 3; ++k) d.lo[k] = g.lo[k], d.n[k] = g.n[k];
    d.inv = g.inv;
    d.words = g.words;
    d.base = base;
    return d;
  };
  view_.grid[0] = describe(grid, 0);
  view_.grid[1] = view_.grid[0];
  view_.grid_small_rr = -kInfF;
  stats_.grid_cells = grid.bits.empty() ? 0 : int64_t(grid.n[0]) * grid.n[1] * grid.n[2];
  if (!small.bits.empty()) {
    view_.grid[1] = describe(small, int32_t(grid.bits.size()));
    view_.grid_small_rr = small_rr;
    stats_.grid_small_cells = int64_t(small.n[0]) * small.n[1] * small.n[2];
    grid.bits.insert(grid.bits.end(), small.bits.begin(), small.bits.end());
  }
  grid_bits_.swap(grid.bits);
  view_.grid_bits = grid_bits_.empty() ? nullptr : grid_bits_.data();
  stats_.build_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace capt
}  // namespace simdplan
