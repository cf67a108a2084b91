// simdplan/planner/nearest.hh: exact nearest neighbours in joint space (Euclidean).
//
// Points are stored structure-of-arrays (one float array per joint, padded to blocks of 16) so a
// brute-force sweep runs in SIMD over 16 points at a time. Small sets are searched by brute force
// only. Past kIndexFrom points, a static k-d tree (median splits on the widest axis, leaves of up
// to 16 points; J. H. Friedman, J. L. Bentley, R. A. Finkel, "An algorithm for finding best matches
// in logarithmic expected time", ACM TOMS 3(3), 1977, doi:10.1145/355744.355745) indexes all points
// up to its last rebuild, and points added since are swept by brute force. The tree is rebuilt when
// the unindexed tail exceeds max(kIndexFrom, n / 16), so rebuilding costs O(log n) amortised per
// insertion. Both parts are exact, so results equal a full brute-force search (ties aside).
// PERF: kIndexFrom comes from benchmarks/bench_nearest.py (see the constant's comment).
#pragma once
#include <algorithm>
#include <cstring>
#include <cstdint>
#include <limits>
#include <numeric>
#include <utility>
#include <vector>

#include "simdplan/planner/neighbor_kernels.hh"

namespace simdplan::planner {

class NearestNeighbors {
 public:
  // PERF: benchmarks/bench_nearest.py, 7 joints, Xeon @ 2.5 GHz: a brute-force query against the
  // tree's query plus its amortised insertion broke even near 256 points (1.55 vs 1.68 us uniform,
  // 1.56 vs 1.55 us on a sheet) and the tree won 2.1x at 1k, 6x at 4k, 15x at 100k points.
  // Since the blocked sweep (brute force about 2x faster at 256 points, each build timed against
  // cKDTree in its own run), one run gave at 256 / 512 / 1024 points:
  // brute 0.90 / 1.59 / 2.96 us, tree query 0.41 / 0.42 / 0.71 us, insertion 1.3 / 2.0 / 2.0 us
  // per point. With one insertion per query the break-even is now near 1k points; but a planner
  // in a cluttered scene inserts far less often than it queries (cage plans: about 0.1 insertions
  // per query), where the tree still wins from 256. Kept at 256; MotionBenchMaker's panda trees
  // stay under 130 nodes, so this does not affect those plans.
  // Since the 16-lane kernels (AMD EPYC Zen 4, AVX-512): brute 43 / 116 / 407 ns at 64 / 256 / 1024
  // points, tree query 88 / 172 ns at 256 / 1024. Planning generated problems of five robots
  // (3 seeds, 40 problems each), against 256: 128 raised the mean 3-8%, 512 was within noise.
  static constexpr int32_t kIndexFrom = 256;

  static constexpr size_t kBlock = kNeighborBlock;  // coordinate arrays are padded to whole blocks

  // The kernels are those of the ISA active at construction, for the structure's whole life.
  explicit NearestNeighbors(int32_t dof, int32_t index_from = kIndexFrom)
      : k_(&neighbor_kernels_active()), dof_(dof), index_from_(index_from), coords_(dof) {}
  // NOTE: columns_ and leaf_columns_ point into this object's own arrays: a copy would read the
  // original's; a move keeps the arrays' storage, and so their pointers.
  NearestNeighbors(const NearestNeighbors&) = delete;
  NearestNeighbors& operator=(const NearestNeighbors&) = delete;
  NearestNeighbors(NearestNeighbors&&) = default;
  NearestNeighbors& operator=(NearestNeighbors&&) = default;

  int32_t size() const { return static_cast<int32_t>(n_); }
  int32_t dof() const { return dof_; }
  int32_t indexed() const { return static_cast<int32_t>(indexed_); }

  int32_t add(const float* q) {
    // open a block; rows past n_ are +inf, whose distance (+inf) never beats one (the sweep's minimum
    // is exact with them, where NaN rows would leak through its selects)
    if (n_ % kBlock == 0) {
      for (auto& c : coords_) c.resize(n_ + kBlock, std::numeric_limits<float>::infinity());
      columns_.clear();
      for (const auto& c : coords_) columns_.push_back(c.data());
    }
    for (int32_t j = 0; j < dof_; ++j) coords_[j][n_] = q[j];
    d2_.push_back(0.0f);
    ++n_;
    const size_t tail = n_ - indexed_;
    if (n_ >= size_t(index_from_) && tail > std::max<size_t>(size_t(index_from_), n_ / 16)) rebuild();
    return static_cast<int32_t>(n_ - 1);
  }

  void get(int32_t i, float* q) const {
    for (int32_t j = 0; j < dof_; ++j) q[j] = coords_[j][i];
  }

  // index of the nearest stored point to q (-1 if empty) and its squared distance
  std::pair<int32_t, float> nearest(const float* q) const {
    int32_t best = -1;
    float bd = std::numeric_limits<float>::infinity();
    if (indexed_ > 0)
      k_->tree_search(nodes_.data(), leaf_columns_.data(), leaf_point_.data(), dof_, q, best, bd);
    sweep(q, indexed_, best, bd);
    return {best, bd};
  }

  // the k nearest (ascending distance), excluding `skip`; brute force (PRM connects in batches)
  void k_nearest(const float* q, int32_t k, int32_t skip, std::vector<std::pair<float, int32_t>>& out) const {
    distances(q);
    out.clear();
    for (size_t i = 0; i < n_; ++i) {
      if (static_cast<int32_t>(i) == skip) continue;
      const float d = d2_[i];
      if (static_cast<int32_t>(out.size()) < k || d < out.back().first) {
        auto it = out.end();
        while (it != out.begin() && (it - 1)->first > d) --it;
        out.insert(it, {d, static_cast<int32_t>(i)});
        if (static_cast<int32_t>(out.size()) > k) out.pop_back();
      }
    }
  }

 private:
  static constexpr int32_t kLeaf = int32_t(kBlock);  // at most one block of points per leaf (unless all equal)

  // every point's squared distance to q, into d2_
  void distances(const float* q) const {
    float* d = d2_.data();
    for (size_t i = 0; i < n_; ++i) d[i] = 0.0f;
    for (int32_t j = 0; j < dof_; ++j) {
      const float* x = coords_[j].data();
      const float qj = q[j];
      for (size_t i = 0; i < n_; ++i) {
        const float e = x[i] - qj;
        d[i] += e * e;
      }
    }
  }

  // PERF: blocks of kBlock points with their distances in registers, and the first-minimum scan
  // only for a block that beats the best so far, instead of writing every distance to d2_ and
  // scanning them all: 12.6M -> 9.5M instructions in the nearest-neighbour code of 20 cage plans
  // (callgrind, AVX2), with the same plans. The sweep is one of the NeighborKernels, per ISA.
  void sweep(const float* q, size_t from, int32_t& best, float& bd) const {
    k_->sweep(columns_.data(), n_, dof_, q, from, best, bd);
  }

  float coord(int32_t i, int32_t j) const { return coords_[j][i]; }

  // indexes every point: the tree over perm_, then each leaf's points copied in leaf order
  void rebuild() {
    indexed_ = n_;
    perm_.resize(n_);
    std::iota(perm_.begin(), perm_.end(), 0);
    nodes_.clear();
    build(0, static_cast<int32_t>(n_));
    size_t rows = 0;
    for (const KdNode& nd : nodes_)
      if (nd.axis < 0) rows += (size_t(nd.count) + kBlock - 1) / kBlock * kBlock;
    leaf_coords_.resize(size_t(dof_));
    leaf_columns_.clear();
    for (auto& c : leaf_coords_) {
      c.assign(rows, std::numeric_limits<float>::infinity());
      leaf_columns_.push_back(c.data());
    }
    leaf_point_.assign(rows, -1);
    size_t row = 0;
    for (KdNode& nd : nodes_) {
      if (nd.axis >= 0) continue;
      for (int32_t k = 0; k < nd.count; ++k) {
        const int32_t i = perm_[size_t(nd.begin + k)];
        for (int32_t j = 0; j < dof_; ++j) leaf_coords_[j][row + k] = coords_[j][i];
        leaf_point_[row + k] = i;
      }
      nd.begin = static_cast<int32_t>(row);  // from here on: the leaf's rows, not its range of perm_
      row += (size_t(nd.count) + kBlock - 1) / kBlock * kBlock;
    }
  }

  // a node over perm_[begin, end), split at the median of its widest coordinate
  int32_t build(int32_t begin, int32_t end) {
    const int32_t id = static_cast<int32_t>(nodes_.size());
    nodes_.push_back({-1, 0.0f, -1, -1, begin, end - begin});
    if (end - begin <= kLeaf) return id;
    int32_t axis = 0;
    float widest = -1.0f;
    for (int32_t j = 0; j < dof_; ++j) {
      float lo = std::numeric_limits<float>::infinity(), hi = -lo;
      for (int32_t k = begin; k < end; ++k) {
        const float v = coord(perm_[k], j);
        lo = std::min(lo, v);
        hi = std::max(hi, v);
      }
      if (hi - lo > widest) widest = hi - lo, axis = j;
    }
    if (!(widest > 0.0f)) return id;  // all points equal: keep one leaf
    const int32_t mid = begin + (end - begin) / 2;
    std::nth_element(perm_.begin() + begin, perm_.begin() + mid, perm_.begin() + end,
                     [&](int32_t a, int32_t b) { return coord(a, axis) < coord(b, axis); });
    const float split = coord(perm_[mid], axis);
    const int32_t left = build(begin, mid);
    const int32_t right = build(mid, end);
    nodes_[id] = {axis, split, left, right, begin, end - begin};
    return id;
  }

  const NeighborKernels* k_;
  int32_t dof_;
  int32_t index_from_;
  size_t n_ = 0, indexed_ = 0;
  std::vector<std::vector<float>> coords_;
  std::vector<const float*> columns_;  // coords_[j].data(), for the sweep
  mutable std::vector<float> d2_;
  std::vector<int32_t> perm_;
  std::vector<KdNode> nodes_;
  std::vector<std::vector<float>> leaf_coords_;  // the indexed points in leaf order (rebuild)
  std::vector<const float*> leaf_columns_;       // leaf_coords_[j].data(), for the tree search
  std::vector<int32_t> leaf_point_;              // the point of each leaf row (-1: padding)
};

}  // namespace simdplan::planner
