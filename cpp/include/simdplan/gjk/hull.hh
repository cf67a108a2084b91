// simdplan/gjk/hull.hh: builds and owns a convex hull for support-point and GJK queries; ISA-neutral.
//
// Input (hull's local frame, metres): n vertices (n x 3 float32, row-major), their adjacency as CSR
// (adj_begin n + 1, adj), and the boundary triangles (t x 3 vertex indices). The hull itself is
// computed outside (simdplan.collision.ConvexHull uses scipy.spatial.ConvexHull / qhull); this
// class checks that the triangles close a convex surface over exactly these vertices and builds
// the arrays behind a HullView (layout in gjk/hull_view.hh), immutable after construction.
//
// Checks (std::invalid_argument): 4 <= n <= 2^24; finite coordinates with |c| <= 1e12; CSR
// offsets monotone from 0, indices in range, no self edges; triangles with three distinct
// vertices in range; every vertex on a triangle; every triangle edge shared by exactly two
// triangles and present in the adjacency in both directions; Euler characteristic 2 (a closed
// surface of sphere topology); no reflex edge (a vertex of one triangle more than 1e-6 of the
// hull's extent outside the plane of its neighbour across an edge); volume above 1e-9 of the
// bounding box's. A closed, locally convex surface is the boundary of a convex body, so hill
// climbing on this graph finds a global maximiser (see gjk/support.hh).
//
// Build, O(n + t) except step 4:
//  1. vertices padded into SoA; the 6 axis-extreme vertices; per-axis max |coordinate|; centroid;
//  2. triangle planes, oriented away from the centroid; the edge -> triangles map (sorting);
//  3. the plain CSR adjacency, copied;
//  4. the packed layout when it fits in 65535 lines: per vertex a header, its real neighbours
//     (continuation lines beyond 25), then up to `artificial` artificial edges (-1: the default,
//     8 from 2000 vertices on, none below, where they do not pay) to the support vertices of directions tilted from the vertex
//     normal (area-weighted mean of its triangles' normals) by 48, 24, 12, 6 degrees (only the
//     rings coarser than twice the typical edge angle, sqrt(4 pi / n)), at spread azimuths, found by
//     hill climbing from the vertex; duplicates of real neighbours are skipped. Cost O(n k s), k
//     artificial edges per vertex and s climbing steps: 1k vertices 3 ms, 10k 60 ms, 20k 150 ms
//     (points on a sphere; qhull takes about as long).
// Hull sizes: n <= 2^24 (brute force numbers blocks in float); the packed layout needs
// n + continuation lines <= 65535, bigger hulls keep the plain layout only (stats().packed).
#pragma once
#include <cstdint>
#include <vector>

#include "simdplan/gjk/hull_view.hh"

namespace simdplan::gjk {

struct HullStats {
  int32_t vertices = 0;
  int32_t faces = 0;
  int32_t edges = 0;
  int32_t max_degree = 0;
  int32_t continuation_lines = 0;  // packed lines beyond one per vertex
  int64_t artificial_edges = 0;    // over all vertices
  bool packed = false;             // false: more than 65535 lines would be needed
  int64_t build_ns = 0;
};

class Hull {
 public:
  // artificial: most artificial edges per vertex in the packed layout, 0..25; -1: the default.
  Hull(const float* xyz, int32_t n, const int32_t* adj_begin, const int32_t* adj, int64_t n_adj, const int32_t* tris,
       int64_t n_tris, int32_t artificial = -1);
  Hull(const Hull&) = delete;
  Hull& operator=(const Hull&) = delete;

  const HullView& view() const { return view_; }
  const HullStats& stats() const { return stats_; }

 private:
  std::vector<float> x_, y_, z_;
  std::vector<int32_t> adj_begin_, adj_;
  std::vector<HullLine> lines_;  // 64-byte aligned (C++17 aligned new)
  std::vector<double> planes_;
  std::vector<float> plane_soa_;
  std::vector<int32_t> edges_;
  HullView view_{};
  HullStats stats_{};
};

}  // namespace simdplan::gjk
