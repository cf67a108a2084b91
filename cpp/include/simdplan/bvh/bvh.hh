// simdplan/bvh/bvh.hh: builds and owns an AABB tree over elements, and triangle meshes over it; ISA-neutral.
//
// The mid-phase as MuJoCo describes it (E. Todorov, T. Erez, Y. Tassa, "MuJoCo: A physics engine for
// model-based control", IROS 2012, doi:10.1109/IROS.2012.6386109; MuJoCo's documentation of its
// mid-phase), re-derived here from that description:
//   - a node's box is the union of its elements' boxes;
//   - the node is split along the longest axis of that box into two halves of equal element count
//     (ceil(m / 2) left), at the median of the elements' box centres (std::nth_element, ties broken
//     by input index so the tree is a function of the input alone);
//   - every leaf holds one element.
// The tree is balanced by construction: depth ceil(log2 n) whatever the geometry.
//
// Input (Bvh): n element boxes, lo x y z then hi x y z, float32, world frame, metres; finite with
// lo <= hi (a flat or point box is fine). Input (TriMesh): vertices (nv x 3 float32) and faces
// (nf x 3 int32 indices into the vertices); each triangle's box is the exact min / max of its three
// vertices. Output: the arrays behind a BvhView / TriMeshView (layout in bvh/bvh_view.hh).
//
// Complexity: build O(n log n) time (a linear box scan and nth_element per level, log2 n levels);
// memory 32 (2n - 1) + 4n bytes for the tree, plus 128 bytes per triangle record: a 100k-triangle
// mesh is 19 MB. Queries (bvh/bvh_query.hh) are O(log n) for a sphere that meets few triangles.
//
// Both classes are immutable after construction: one tree is shared (std::shared_ptr<const ...>)
// by any number of concurrent queries; moving one keeps its views valid (the arrays are heap
// blocks handed over unchanged).
//
// Include only from ISA-neutral translation units (see simdplan/config.hh).
#pragma once
#include <cstdint>
#include <vector>

#include "simdplan/bvh/bvh_view.hh"

namespace simdplan::bvh {

class Bvh {
 public:
  Bvh() = default;  // the empty tree
  // boxes: n x 6 float32 row-major (may be null when n == 0). Throws std::invalid_argument naming
  // the first box that is not finite or has lo > hi, or for n < 0 or n >= 2^30 (int32 node indices).
  Bvh(const float* boxes, int64_t n);
  Bvh(const Bvh&) = delete;
  Bvh& operator=(const Bvh&) = delete;
  Bvh(Bvh&&) noexcept = default;
  Bvh& operator=(Bvh&&) noexcept = default;

  const BvhView& view() const { return view_; }
  int64_t size() const { return view_.elements; }
  int32_t depth() const { return depth_; }  // levels below the root (0 for one element)
  int64_t build_time_ns() const { return build_ns_; }

 private:
  std::vector<BvhNode> node_;
  std::vector<int32_t> order_;
  BvhView view_{};
  int32_t depth_ = 0;
  int64_t build_ns_ = 0;
};

struct alignas(64) TriRecord {
  float f[kTriStride];
};

// The record of triangle (v0, v1, v2) (each 3 float32), layout in geom/sphere_triangle.hh; computed
// in double and rounded to float32. Returns true if the triangle is degenerate (no interior).
bool make_triangle_record(const float* v0, const float* v1, const float* v2, float* rec);

class TriMesh {
 public:
  // vertices: nv x 3 float32, faces: nf x 3 int32, both row-major (null when the count is 0).
  // Throws std::invalid_argument for a non-finite vertex, a face index outside [0, nv), or counts
  // out of range (nf >= 2^30). Unused vertices are fine; nf = 0 gives a mesh nothing touches.
  TriMesh(const float* vertices, int64_t nv, const int32_t* faces, int64_t nf);
  TriMesh(const TriMesh&) = delete;
  TriMesh& operator=(const TriMesh&) = delete;
  TriMesh(TriMesh&&) noexcept = default;
  TriMesh& operator=(TriMesh&&) noexcept = default;

  const TriMeshView& view() const { return view_; }
  const Bvh& tree() const { return bvh_; }
  int64_t size() const { return bvh_.size(); }  // triangles
  int64_t degenerate() const { return degenerate_; }
  int64_t build_time_ns() const { return build_ns_; }  // boxes, tree and records

 private:
  Bvh bvh_;
  std::vector<TriRecord> rec_;
  TriMeshView view_{};
  int64_t degenerate_ = 0;
  int64_t build_ns_ = 0;
};

}  // namespace simdplan::bvh
