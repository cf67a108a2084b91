// distance_floor.cc: builds the distance floor grid of a point cloud (capt/distance_floor.hh).
//
// A cell's value is a lower bound of the distance from any point of the cell to any cloud point:
// the distance between the cell's box and the nearest box holding a cloud point. In cells, that is
// sqrt(sum over axes of box_gap2(di)) for the index offsets di, box_gap2(d) = max(|d| - 1, 0)^2: a
// sum of one term per axis, so it is computed axis by axis as a squared distance transform is
// (min-plus with a per-axis kernel: z within rows, then y, then x), exactly, in integers. Only
// distances up to kCapCells cells are resolved (farther is "at least that"), so each axis is a
// window of 2 kCapCells + 1 offsets: along z each occupied cell lowers its row directly, along y and
// x whole lines are combined with vector min-plus operations. Values are stored as
// floor(kPerCell * sqrt(.)) (rounded down: still a lower bound), capped at 255.
// A query point outside the grid takes the nearest border cell's value: projecting onto the grid's
// box (which holds every cloud point) never lengthens a distance to a point inside it.
//
// Rounding: points and queries find their cells with the same float32 formula, which places a
// coordinate within 2^-23 |x - lo| of the cell edges it is sorted between; floor_slack covers
// that for both ends and the float products of the query. Size: the caller's cell budget, cells
// of side >= kMinCell, the cloud's AABB grown by kMarginCells cells on every side.
// PERF: box-to-box, not the distance from the cell's centre minus half its diagonal: one table
// look-up with no offset to compute per query. Estimated on the per-sphere queries of certified
// plans (21 MotionBenchMaker panda problems as clouds), lane queries settled by the bound: 1 cm
// cells 77%, 1.5 cm 69%, 2 cm 60% (the centre bound: 83% at 1 cm, 73% at 2 cm, and it needs exact
// distances at the cell centres).
// PERF: build of 3.7 M cells (a 14k-point MotionBenchMaker cloud at 1 cm; AVX2 host): parabola
// envelopes (Felzenszwalb and Huttenlocher) over the grown occupancy 110-170 ms; capped windows with
// the occupancy splatted along z 35-48 ms. The cap: 32 -> 16 cells halves the windows (1.6 M cells:
// 12-14 -> 6-8 ms) for the same certified planning instructions (21 problems: 108.5 M either way);
// the distances certificates ask the grid for are under 15 cm for 99% of the queries.
#include "distance_floor.hh"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace simdplan::capt {

namespace {

constexpr double kMinCell = 0.002;  // metres
constexpr int32_t kMarginCells = 16;
constexpr int32_t kCapCells = 16;  // distances are resolved up to this many cells; farther is "at least this"
constexpr int32_t kCap2 = kCapCells * kCapCells;
constexpr int kPerCell = 16;  // values per cell side: the bound is floor(16 d) / 16 cells, at most 255
static_assert(2 * kCap2 < 32768, "sums of two capped values fit int16");
static_assert(kPerCell * kCapCells >= 255, "a capped distance must map to the largest value");

// The squared box-to-box distance, in cells, between two cells d apart on one axis: max(|d| - 1, 0)^2
constexpr int32_t box_gap2(int32_t d) {
  const int32_t a = (d < 0 ? -d : d) - 1;
  return a > 0 ? a * a : 0;
}

// out[t] = min(kCap2, min over |d| <= kCapCells of in[t + d] + box_gap2(d)) for t in [t0, t1):
// one pass of the transform across `lines` lines of `len` values laid side by side (squared cells,
// kCap2 meaning "none nearer than the cap"), element by element. Offsets beyond the cap cannot
// give a value below it, so the window is exact for capped values. Each offset is a min-plus of two
// whole lines (contiguous int16, which the compiler vectorizes), skipped where the source line's
// smallest value (low) is already too far.
// PERF: cloned for AVX2 (16 values per operation instead of SSE2's 8), picked when the library loads.
__attribute__((target_clones("avx2", "default"))) void window_lines(const int16_t* in, const int16_t* low,
                                                                     int64_t lines, int64_t len, int64_t t0,
                                                                     int64_t t1, int16_t* out) {
  for (int64_t t = t0; t < t1; ++t) {
    int16_t* o = out + (t - t0) * len;
    std::memcpy(o, in + t * len, size_t(len) * sizeof(int16_t));
    for (int32_t d = 1; d <= kCapCells; ++d) {
      const int16_t add = int16_t(box_gap2(d));
      for (const int64_t u : {t - d, t + d}) {
        if (u < 0 || u >= lines || low[u] + add >= kCap2) continue;
        const int16_t* src = in + u * len;
        for (int64_t k = 0; k < len; ++k) o[k] = std::min(o[k], int16_t(src[k] + add));
      }
    }
  }
}

// the smallest value of each of `lines` lines of `len` values
std::vector<int16_t> line_lows(const int16_t* in, int64_t lines, int64_t len) {
  std::vector<int16_t> low(static_cast<size_t>(lines));
  for (int64_t t = 0; t < lines; ++t) {
    int16_t m = int16_t(kCap2);
    for (int64_t k = 0; k < len; ++k) m = std::min(m, in[t * len + k]);
    low[size_t(t)] = m;
  }
  return low;
}

// the largest float <= x
float float_below(double x) {
  float f = float(x);
  if (double(f) > x) f = std::nextafter(f, -std::numeric_limits<float>::infinity());
  return f;
}

float float_above(double x) {
  float f = float(x);
  if (double(f) < x) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

}  // namespace

DistanceFloor build_distance_floor(const float* xyz, int64_t m, const float lo[3], const float hi[3],
                                   int64_t max_cells) {
  DistanceFloor g;
  if (m <= 0) return g;
  double e[3];
  for (int a = 0; a < 3; ++a) e[a] = double(hi[a]) - double(lo[a]);
  auto cells_for = [&](double h) {
    double c = 1.0;
    for (int a = 0; a < 3; ++a) c *= std::floor(e[a] / h) + 3.0 + 2.0 * kMarginCells;
    return c;
  };
  double h = std::max(kMinCell, std::cbrt(e[0] * e[1] * e[2] / double(max_cells)));
  // (the margins alone take (3 + 2 kMarginCells)^3 cells, whatever the cell)
  const double fewest = std::pow(3.0 + 2.0 * kMarginCells, 3);
  while (cells_for(h) > std::max(double(max_cells), fewest)) h *= 1.05;
  g.inv = float(1.0 / h);
  if (!(g.inv > 0.0f) || !std::isfinite(g.inv)) return g;  // no grid for clouds spanning ~1e38 m
  g.cell = 1.0 / double(g.inv);
  auto index = [&](float c, int a) { return int64_t(std::floor((c - g.lo[a]) * g.inv)); };  // as the queries
  int64_t total = 1;
  for (int a = 0; a < 3; ++a) {
    g.lo[a] = float_below(double(lo[a]) - (kMarginCells + 0.5) * g.cell);
    if (!std::isfinite(g.lo[a])) return g;
    g.n[a] = int32_t(index(hi[a], a) + 1 + kMarginCells);
    total *= g.n[a];
  }
  const int64_t n0 = g.n[0], n1 = g.n[1], n2 = g.n[2], plane = n1 * n2;
  // Along z: each occupied cell lowers its row to box_gap2 of the offset, within the cap (a few
  // vector operations per occupied cell, not a pass over the grid). Then rows within each plane
  // (along y), then planes (along x).
  std::vector<int64_t> occupied(static_cast<size_t>(m));
  for (int64_t i = 0; i < m; ++i) {
    const float* p = xyz + 3 * i;
    occupied[size_t(i)] = (index(p[0], 0) * n1 + index(p[1], 1)) * n2 + index(p[2], 2);
  }
  std::sort(occupied.begin(), occupied.end());
  occupied.erase(std::unique(occupied.begin(), occupied.end()), occupied.end());
  int16_t ramp[2 * kCapCells + 1];
  for (int32_t d = -kCapCells; d <= kCapCells; ++d) ramp[d + kCapCells] = int16_t(box_gap2(d));
  std::vector<int16_t> d2(static_cast<size_t>(total), int16_t(kCap2));
  for (const int64_t c : occupied) {
    const int64_t k = c % n2;
    int16_t* row = d2.data() + (c - k);
    const int64_t from = std::max<int64_t>(0, k - kCapCells), to = std::min<int64_t>(n2 - 1, k + kCapCells);
    const int16_t* r = ramp + (kCapCells - k);
    for (int64_t j = from; j <= to; ++j) row[j] = std::min(row[j], r[j]);
  }
  // rows within each plane, through a copy of the plane
  std::vector<int16_t> buf(static_cast<size_t>(plane));
  for (int64_t i = 0; i < n0; ++i) {
    int16_t* pl = d2.data() + i * plane;
    std::memcpy(buf.data(), pl, size_t(plane) * sizeof(int16_t));
    window_lines(buf.data(), line_lows(buf.data(), n1, n2).data(), n1, n2, 0, n1, pl);
  }
  // floor(kPerCell sqrt(d2)), capped at 255, by table
  uint8_t value[kCap2 + 1];
  for (int32_t q = 0; q <= kCap2; ++q) {
    int32_t r = int32_t(std::sqrt(double(kPerCell * kPerCell * q)));
    while (r * r > kPerCell * kPerCell * q) --r;
    while ((r + 1) * (r + 1) <= kPerCell * kPerCell * q) ++r;
    value[q] = uint8_t(std::min(255, r));
  }
  // planes, each plane's result turned into its cell values at once
  g.cells = AlignedArray<uint8_t>(size_t(total) + 3);
  const std::vector<int16_t> low = line_lows(d2.data(), n0, plane);
  for (int64_t i = 0; i < n0; ++i) {
    window_lines(d2.data(), low.data(), n0, plane, i, i + 1, buf.data());
    uint8_t* c = g.cells.data() + i * plane;
    for (int64_t k = 0; k < plane; ++k) c[k] = value[buf[size_t(k)]];
  }
  std::memset(g.cells.data() + total, 0, 3);
  const double step = g.cell / kPerCell;
  g.step = float_below(step);
  double reach = 0.0;
  for (int a = 0; a < 3; ++a)
    reach = std::max({reach, std::fabs(double(g.lo[a])), std::fabs(double(g.lo[a]) + g.n[a] * g.cell)});
  const double span = std::max({double(n0), double(n1), double(n2)}) * g.cell;
  g.slack = float_above(1e-6 * (reach + span + 255.0 * step));
  return g;
}

}  // namespace simdplan::capt
