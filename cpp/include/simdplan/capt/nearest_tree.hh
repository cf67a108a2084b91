// simdplan/capt/nearest_tree.hh: builds and owns an exact nearest-point k-d tree; ISA-neutral.
//
// For signed-distance and clearance queries on point clouds: the distance from a query point to
// its nearest cloud point (optionally only if closer than a bound). The CAPT (capt/tree.hh) only
// answers "does this sphere touch a point"; this tree answers "how far is the nearest point".
//
// Reference: J. H. Friedman, J. L. Bentley, R. A. Finkel, "An Algorithm for Finding Best Matches in
// Logarithmic Expected Time", ACM TOMS 3(3), 1977, doi:10.1145/355744.355745 (k-d tree with
// bucketed leaves and bounds-overlap pruning); S. Arya, D. M. Mount, "Algorithms for fast vector
// quantization", DCC 1993, doi:10.1109/DCC.1993.253111 (incremental distance to a cell).
//
// Input: n points, x y z float32 row-major, world frame, metres; n may be 0. Output: the arrays
// behind a NearestView (layout in capt/nearest_view.hh), immutable after construction, so one tree
// can be shared (std::shared_ptr<const NearestTree>) by any number of concurrent queries.
//
// Build (nearest_tree.cc): exact duplicates are stored once, under the index of their first
// occurrence (a hash set; the search cannot prune ties, so k copies of the nearest point would cost
// k / B leaves per query). For the u distinct points, L = the smallest power of two with
// L * kNearestBucket >= u leaves; the points are split level by level at the median
// (std::nth_element) cycling x, y, z; a node with m points sends ceil(m / 2) left, so every leaf
// receives floor or ceil of u / L points (between B / 2 and B: no empty leaf unless n = 0) and the
// tree is balanced whatever the values. Repeated coordinates only put equal values on both sides
// of a split, which the query's bounds allow (capt/nearest_view.hh). Each leaf stores its points
// (SoA, +inf padding), their original indices and their AABB.
//
// Complexity: build O(n log n) time (nth_element is linear on average per level, log2(u / B)
// levels) and O(n) memory: 16 bytes per slot (L * B <= max(2u, B) slots) + 24 bytes per leaf;
// e.g. 100k points use 2.3 MB. A query is O(log n) expected for well-spread clouds (Friedman et al.),
// O(n) in the worst case (a query equidistant from many distinct points).
// Measured (benchmarks/bench_nearest_point.py, Xeon @ 2.5 GHz, medians; queries within 0.3 m of the
// cloud, AVX-512, unbounded / max_distance 5 cm; scipy cKDTree workers=1 in brackets):
//   uniform in a 2 m cube   1k: build 0.11 ms (0.25), 131 / 72 ns per query (680 / 375)
//                          10k: build 1.6 ms (2.9),   215 / 150 ns (933 / 587)
//                         100k: build 19 ms (37),     296 / 243 ns (1403 / 1058)
//   MotionBenchMaker bookshelf_small surfaces, 70k: build 13 ms (23), 943 / 422 ns (5113 / 2069);
//     thinned to 2 cm (7.9k): build 1.0 ms (2.0), 250 / 141 ns (1245 / 584)
// 20k identical points store one (0.3 ms build, 37 ns per query; 32 us per query when kept).
//
// Distance floor grid (on request; cpp/src/capt/distance_floor.cc): a byte per cell of a grid over
// the cloud's AABB grown by 16 cells, 128 cells per distinct point (at least 32 Ki, at most 4 Mi
// cells, of side >= 2 mm), holding a lower bound of the distance from anywhere in the cell to the
// nearest point, resolved up to 16 cells (layout and use in capt/nearest_view.hh). It answers "is
// the cloud at least this far" with one look-up, before any tree search; the certified Link's
// clearance queries use it (collision/distance.hh). Build: O(cells x 33) vector operations, exact
// in integers; a 14k-point cloud gets 1.6 M cells of 1.4 cm (1.6 MB) in 6-8 ms (the tree: 2.4 ms).
//
// Include only from ISA-neutral translation units (see simdplan/config.hh).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include "simdplan/capt/nearest_view.hh"

namespace simdplan::capt {

// A fixed-size array on a 64-byte boundary (std::vector only promises 16), freed with std::free.
template <class T>
class AlignedArray {
 public:
  AlignedArray() = default;
  explicit AlignedArray(size_t n);
  T* data() { return p_.get(); }
  const T* data() const { return p_.get(); }
  size_t size() const { return n_; }
  T& operator[](size_t i) { return p_.get()[i]; }

 private:
  struct Free {
    void operator()(T* p) const noexcept { std::free(p); }
  };
  std::unique_ptr<T, Free> p_;
  size_t n_ = 0;
};

class NearestTree {
 public:
  // xyz: n x 3 float32 row-major (may be null when n == 0). Throws std::invalid_argument naming
  // the first point with a non-finite coordinate, or for n < 0 or n >= 2^31 (int32 indices).
  // distance_floor: also build the distance floor grid (below).
  NearestTree(const float* xyz, int64_t n, bool distance_floor = false);
  NearestTree(const NearestTree&) = delete;
  NearestTree& operator=(const NearestTree&) = delete;
  // The view points into heap blocks, which a move hands over unchanged.
  NearestTree(NearestTree&&) noexcept = default;
  NearestTree& operator=(NearestTree&&) noexcept = default;

  const NearestView& view() const { return view_; }
  int64_t size() const { return view_.size; }          // points given
  int64_t unique_size() const { return unique_; }      // distinct points stored
  int64_t build_time_ns() const { return build_ns_; }            // with the floor grid
  double floor_cell() const { return floor_cell_; }              // metres; 0 without a floor grid
  int64_t floor_cells() const { return floor_.size() ? int64_t(floor_.size()) - 3 : 0; }

 private:
  AlignedArray<float> splits_, px_, py_, pz_, box_;
  AlignedArray<int32_t> index_;
  AlignedArray<uint8_t> floor_;
  double floor_cell_ = 0.0;
  NearestView view_{};
  int64_t unique_ = 0;
  int64_t build_ns_ = 0;
};

}  // namespace simdplan::capt
