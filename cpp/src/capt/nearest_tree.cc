// nearest_tree.cc: builds simdplan::capt::NearestTree (algorithm and complexity in
// capt/nearest_tree.hh) and picks the nearest-point query table of the ISA in use. ISA-neutral:
// compiled once, without -m flags.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "dispatch.hh"
#include "distance_floor.hh"
#include "distinct_points.hh"
#include "simdplan/capt/nearest_kernels.hh"
#include "simdplan/capt/nearest_tree.hh"

namespace simdplan {

const NearestKernels& nearest_kernels_active() { return active_table<NearestKernels>(); }

namespace capt {

template <class T>
AlignedArray<T>::AlignedArray(size_t n) : n_(n) {
  // aligned_alloc wants a multiple of the alignment; never 0 bytes, so data() is never null
  const size_t bytes = std::max<size_t>(64, (n * sizeof(T) + 63) / 64 * 64);
  p_.reset(static_cast<T*>(std::aligned_alloc(64, bytes)));
  if (!p_) throw std::bad_alloc();
}

template class AlignedArray<float>;
template class AlignedArray<int32_t>;
template class AlignedArray<uint8_t>;

namespace {

// Cells of the distance floor grid: per distinct point, within [min, max]; so its resolution follows
// the cloud's density (a 14k-point MotionBenchMaker cloud thinned to 2 cm: 1.4 cm cells) and its
// build cost the tree's.
// PERF: certified planning on MotionBenchMaker panda problems as clouds (AVX2 host). Instructions:
// callgrind over 21 problems (3 per class); wall time: 35 problems (5 per class), grid off and on
// alternating per problem, the minimum of 5 runs each, median of the per-problem ratio on / off;
// build: tree and grid of a 14k-point cloud (the tree alone 2.4 ms).
//   per point  cell    build     instructions  planning, simplification time
//       64     2 cm    7-8 ms    -12%          (not timed)
//      128     1.4 cm  15-17 ms  -18%          0.90, 0.88
//      300     1 cm    35-48 ms  -23%          0.88, 0.81
// (builds with distances resolved up to 32 cells; up to 16, as now, 128 per point builds in 8-10 ms
// for the same 108.5 M instructions.) 128 takes most of the gain for a build a seventh of the
// CAPT's (60-70 ms for such a cloud).
constexpr int64_t kFloorCellsPerPoint = 128;
constexpr int64_t kFloorMinCells = int64_t(1) << 15, kFloorMaxCells = int64_t(1) << 22;

struct Item {
  float c[3];
  int32_t i;  // row in the input
};

struct Builder {
  int32_t depth;
  uint32_t first_leaf;
  std::vector<Item>& items;
  float *splits, *px, *py, *pz, *box;
  int32_t* index;

  // node at `level` owns items [begin, end): median split, ceil(m / 2) to the left
  void build(uint32_t node, int32_t level, size_t begin, size_t end) {
    if (level == depth) {
      leaf(node - first_leaf, begin, end);
      return;
    }
    const int axis = level % 3;
    const size_t mid = begin + (end - begin + 1) / 2;
    float split = std::numeric_limits<float>::infinity();  // nothing on the right: never visited
    if (mid < end) {
      std::nth_element(items.begin() + begin, items.begin() + mid, items.begin() + end,
                       [axis](const Item& a, const Item& b) { return a.c[axis] < b.c[axis]; });
      split = items[mid].c[axis];  // left <= split <= right
    }
    splits[node] = split;
    build(2 * node + 1, level + 1, begin, mid);
    build(2 * node + 2, level + 1, mid, end);
  }

  void leaf(uint32_t j, size_t begin, size_t end) {
    const float inf = std::numeric_limits<float>::infinity();
    float lo[3] = {inf, inf, inf}, hi[3] = {-inf, -inf, -inf};
    size_t s = size_t(j) * kNearestBucket;
    for (size_t k = begin; k < end; ++k, ++s) {
      const Item& it = items[k];
      px[s] = it.c[0], py[s] = it.c[1], pz[s] = it.c[2], index[s] = it.i;
      for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], it.c[a]), hi[a] = std::max(hi[a], it.c[a]);
    }
    float* b = box + 6 * size_t(j);
    for (int a = 0; a < 3; ++a) b[a] = lo[a], b[3 + a] = hi[a];
  }
};

std::string point_text(const float* p) {
  char buf[96];
  std::snprintf(buf, sizeof buf, "(%g, %g, %g)", double(p[0]), double(p[1]), double(p[2]));
  return buf;
}

}  // namespace

NearestTree::NearestTree(const float* xyz, int64_t n, bool distance_floor) {
  const auto t0 = std::chrono::steady_clock::now();
  if (n < 0) throw std::invalid_argument("NearestTree: negative number of points");
  if (n >= int64_t(std::numeric_limits<int32_t>::max()))
    throw std::invalid_argument("NearestTree: at most 2^31 - 2 points are supported (int32 indices), got " +
                                std::to_string(n));
  for (int64_t i = 0; i < n; ++i) {
    const float* p = xyz + 3 * i;
    if (!(std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2])))
      throw std::invalid_argument("NearestTree: point " + std::to_string(i) + " is not finite: " + point_text(p));
  }
  // NOTE: exact duplicates are stored once because the search cannot prune ties (a cell as near as
  // the best is visited), so k copies of the nearest point cost k / kNearestBucket leaves per query:
  // 20k identical points took 32 us per query, 100k points made of 1k distinct ones 1.7 us (1k
  // alone: 0.18 us).
  const std::vector<int32_t> rows = distinct_points(xyz, n);
  std::vector<Item> items(rows.size());
  for (size_t k = 0; k < rows.size(); ++k) {
    canonical_point(xyz, rows[k], items[k].c);
    items[k].i = rows[k];
  }
  const int64_t m = int64_t(items.size());
  int32_t depth = 0;
  while ((int64_t(1) << depth) * kNearestBucket < m) ++depth;
  const size_t leaves = size_t(1) << depth;
  const size_t slots = leaves * kNearestBucket + kNearestPad;

  splits_ = AlignedArray<float>(leaves - 1);
  px_ = AlignedArray<float>(slots), py_ = AlignedArray<float>(slots), pz_ = AlignedArray<float>(slots);
  index_ = AlignedArray<int32_t>(slots);
  box_ = AlignedArray<float>(6 * leaves);
  const float inf = std::numeric_limits<float>::infinity();
  std::fill_n(px_.data(), slots, inf), std::fill_n(py_.data(), slots, inf), std::fill_n(pz_.data(), slots, inf);
  std::fill_n(index_.data(), slots, int32_t(-1));

  Builder b{depth, uint32_t(leaves - 1), items, splits_.data(), px_.data(), py_.data(), pz_.data(), box_.data(),
            index_.data()};
  b.build(0, 0, 0, items.size());

  view_.depth = depth;
  view_.reserved = 0;
  view_.size = n;
  unique_ = m;
  view_.splits = splits_.data();
  view_.px = px_.data(), view_.py = py_.data(), view_.pz = pz_.data();
  view_.index = index_.data();
  view_.box = box_.data();
  for (int a = 0; a < 3; ++a) view_.lo[a] = inf, view_.hi[a] = -inf;
  for (size_t j = 0; j < leaves; ++j)
    for (int a = 0; a < 3; ++a)
      view_.lo[a] = std::min(view_.lo[a], box_[6 * j + a]), view_.hi[a] = std::max(view_.hi[a], box_[6 * j + 3 + a]);
  view_.floor_cells = nullptr;
  if (distance_floor && m > 0) {
    std::vector<float> pts(size_t(3 * m));
    for (int64_t k = 0; k < m; ++k)
      for (int a = 0; a < 3; ++a) pts[size_t(3 * k + a)] = items[size_t(k)].c[a];
    const int64_t budget = std::clamp<int64_t>(kFloorCellsPerPoint * m, kFloorMinCells, kFloorMaxCells);
    DistanceFloor g = build_distance_floor(pts.data(), m, view_.lo, view_.hi, budget);
    if (g.cells.size()) {
      floor_ = std::move(g.cells);
      floor_cell_ = g.cell;
      view_.floor_cells = floor_.data();
      for (int a = 0; a < 3; ++a) view_.floor_n[a] = g.n[a], view_.floor_lo[a] = g.lo[a];
      view_.floor_inv = g.inv, view_.floor_step = g.step, view_.floor_slack = g.slack;
    }
  }
  build_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace capt
}  // namespace simdplan
