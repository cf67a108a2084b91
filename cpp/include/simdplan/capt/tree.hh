// simdplan/capt/tree.hh: builds and owns a collision-affording point tree (CAPT); ISA-neutral.
//
// Reference: C. W. Ramsey, Z. Kingston, W. Thomason, L. E. Kavraki, "Collision-Affording Point
// Trees: SIMD-Amenable Nearest Neighbors for Fast Collision Checking", RSS 2024, arXiv:2406.02807.
//
// Input: n points, x y z float32 row-major, world frame, metres; the radius range [r_min, r_max]
// the tree will be queried with; one point_radius that every point carries (it is added to the
// query radius; clouds with different radii need one tree per radius). Output: the arrays behind a
// CaptView (layout in capt/view.hh), immutable after construction, so one tree can be shared by
// any number of concurrent queries and held by an environment without per-call copies.
//
// Build (src/capt/build.cc), as in the paper plus what keeps it exact and bounded:
//  1. exact duplicate points are dropped (a hash set; identical points answer identically);
//  2. the distinct points are padded with +inf points to n2 = 2^depth and partitioned into a
//     balanced k-d tree by median splits cycling x, y, z, level by level (a quickselect, select()
//     in src/capt/build.cc); the split values go to an Eytzinger array;
//  3. a depth-first pass carries down, for every cell, the points outside it that lie within
//     R = (r_max + point_radius)(1 + 1e-5) of it (by value, filtered in float with outward
//     rounding, so never too few); a leaf affords its own point plus that list and stores their
//     AABB. Cells are half-open (a query goes right iff coordinate >= split), so the cells that
//     repeated split values make empty are skipped, and cells are clipped to the cloud's AABB grown
//     by R (no query outside it can reach a point);
//  4. r_min shortcut: when one point of a cell is closer than (r_min + point_radius)(1 - 1e-5) to
//     every corner of the clipped cell, every query centred there collides with it, so all the
//     cell's leaves share that one point (tested at internal nodes too, which ends the descent);
//  5. dominance pruning, where a carried list exceeds kCaptPruneAbove points on a cell at most 2R
//     across: a candidate p is dropped when one of its 8 nearest cloud points q is closer than p to
//     every point of the cell by a margin (max over the box of |c-q|^2 - |c-p|^2 <= -2e-6 R^2);
//     then any sphere that reaches p reaches q, in float32 too. A local Voronoi test: it shrinks
//     the lists of dense clouds 2-20x. Neighbours are searched lazily, only for pruned points.
//  6. own-point pruning, on the cells of the last two levels (at most kOwnPruneSubtree = 2 points)
//     whose lists hold at least kOwnPruneFrom = 32 points: each real point q of the cell's subtree
//     drops the candidates it dominates on the cell (the test and margin of step 5 with q as the
//     dominator: no neighbour search). On a surface cloud most of a leaf's list lies along the
//     surface behind its own point; this halves the stored points of the MotionBenchMaker clouds.
//  7. a coarse occupancy grid (cells about (r_max + point_radius) / 2.9 wide, at most 2^23 of them)
//     marks the cells within reach of a point; queries centred in any other cell are free without
//     a descent (most of a robot's spheres, away from the cloud). A second grid does the same for
//     the small radii, up to a quarter of the way from r_min to r_max (at most 2^21 cells).
//     O(n + cells).
// The margins make the float32 queries exact for radii in [r_min, r_max] (proof sketch in
// src/capt/build.cc). A build that would store more than 2^27 points (1.5 GB) stops with std::length_error.
//
// Complexity: time O(n log n + A), memory O(n + S), where S = stored points over all leaves and
// A = the carried-list lengths summed over all cells (about 3 S). S ~ n k, k = points within R of
// a leaf cell: bounded by the density within r_max, so a cloud thinned to a spacing near r_min
// costs O(n log n). Measured (benchmarks/bench_capt.py, Xeon @ 2.5 GHz, AVX-512 build loops,
// r in [0.012, 0.08] m):
//   uniform in a 2 m cube:      1k 0.6-1 ms, 10k 8 ms, 100k 0.13 s; 5.9, 10.5, 27 points per leaf
//   10k points in a cube of side 2, 1, 0.5, 0.25, 0.1, 0.03 m (median of 5, /tmp/capt2/dens.py):
//     7, 10, 48, 94, 260, 310 ms (was 9, 16, 63, 114, 290, 395 before own-point pruning)
//   20 Gaussian blobs (sigma 2 cm): 10k 59 ms; 100k 2.5 s
//   100k identical points: 0.8 ms (one point stored); MotionBenchMaker scenes filtered at 2 cm
//     (7-8k points): 8-9 ms, 29-33 points per leaf.
// So dense clusters (spacing far below r_min, where a leaf next to a blob sees the whole blob)
// still cost O(n k) with k in the hundreds: pruning with one dominator per cell cannot reduce such
// a leaf to its true Voronoi neighbours. Thin dense clouds first
// (simdplan.collision.pointcloud.filter_pointcloud with min_dist near r_min), which also keeps the
// queries fast.
//
// Include only from ISA-neutral translation units (see simdplan/config.hh).
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "simdplan/capt/view.hh"
#include "simdplan/deadline.hh"

namespace simdplan::capt {

// Carried lists longer than this are pruned by dominance (step 5 above). PERF: 128 pruned the
// lists of ordinary filtered scenes too, where the neighbour searches cost more than they saved
// (MotionBenchMaker bookshelf at 2 cm: build 24 ms at 128, 12-17 ms at 256-512); dense clouds have
// lists in the thousands, and 512 left them 2-3x larger than 128 (10k points in a 25 cm cube).
constexpr int64_t kCaptPruneAbove = 256;

struct BuildStats {
  int64_t points = 0;           // given
  int64_t unique_points = 0;    // after dropping exact duplicates
  int64_t afforded = 0;         // stored points over all leaves (without the pad)
  int64_t max_afforded = 0;     // largest leaf
  int64_t nonempty_leaves = 0;  // leaves with at least one afforded point
  int64_t shortcut_leaves = 0;  // leaves reduced to one point by the r_min rule
  int64_t candidates = 0;       // sum of carried-list lengths over all cells (the A above)
  int64_t pruned = 0;           // candidates dropped by dominance
  int64_t knn_points = 0;       // points whose nearest neighbours were searched
  int64_t grid_cells = 0;       // cells of the coarse occupancy grid (0: none)
  int64_t grid_small_cells = 0;  // cells of the small-radius grid (0: none)
  int64_t build_ns = 0;         // wall time of the constructor
};

// A growable float array on malloc/realloc. PERF: the afforded points are appended leaf by leaf
// without knowing the total; std::vector's copy-and-free growth touched 3-4x the final memory,
// while realloc grows large blocks in place (mremap on Linux): 100k uniform points, 60k -> 25k
// page faults, build 302 -> 278 ms. Trivially copyable contents only.
class FloatBuffer {
 public:
  FloatBuffer() = default;
  FloatBuffer(const FloatBuffer&) = delete;
  FloatBuffer& operator=(const FloatBuffer&) = delete;
  FloatBuffer(FloatBuffer&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_) { o.p_ = nullptr, o.n_ = o.cap_ = 0; }
  FloatBuffer& operator=(FloatBuffer&& o) noexcept;
  ~FloatBuffer();

  void append(const float* src, size_t m);
  void reserve(size_t m);
  void push_back(float v) { append(&v, 1); }
  const float* data() const { return p_; }
  size_t size() const { return n_; }

 private:
  float* p_ = nullptr;
  size_t n_ = 0, cap_ = 0;
};

class Tree {
 public:
  // points: n x 3 float32 row-major. Throws std::invalid_argument for non-finite or huge (> 1e12)
  // coordinates, radii with r_min < 0, r_min > r_max, r_max > 1e12, negative point_radius, and
  // std::length_error if the afforded sets would not fit 32-bit offsets. stop (optional) is asked
  // while building; when it has passed the build throws simdplan::Stopped.
  Tree(const float* points, int64_t n, float r_min, float r_max, float point_radius, const Deadline* stop = nullptr);
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;
  // The view points into heap buffers, which a move hands over unchanged.
  Tree(Tree&&) noexcept = default;
  Tree& operator=(Tree&&) noexcept = default;

  const CaptView& view() const { return view_; }
  const BuildStats& stats() const { return stats_; }
  int64_t size() const { return stats_.points; }
  // cells of grid 0 (every radius) or 1 (small radii) whose queries go to the tree; counted on
  // request, since only statistics need it
  int64_t grid_near(int which) const;

 private:
  std::vector<float> splits_;
  std::vector<CaptLeaf> leaves_;
  FloatBuffer px_, py_, pz_;
  std::vector<uint64_t> grid_bits_;
  CaptView view_{};
  BuildStats stats_{};
};

}  // namespace simdplan::capt
