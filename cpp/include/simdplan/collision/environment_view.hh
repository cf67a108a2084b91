// simdplan/collision/environment_view.hh: the obstacle set as flat float arrays (ISA-neutral POD).
//
// World frame, metres. One array per shape kind, one fixed-size record per obstacle; the layouts
// are the structs of simdplan/geom/records.hh. Filled by the Python
// simdplan.collision.Environment builder, which validates every number before it gets here.
// A conservative pre-filter covers all kinds at once: every obstacle has a world AABB (rounded
// outward; +-inf for planes), stored as six arrays (min x, y, z, max x, y, z) of n_obstacles +
// kAabbPad floats, padded with empty boxes (min +inf, max -inf), so W obstacles are tested per
// vector instruction; obstacle_kind / obstacle_record say which record each AABB belongs to.
//
// Point clouds are obstacles of kind kObsCloud: their AABB (points grown by the point radius) is in
// the same broad phase, obstacle_record is the cloud's index, and obstacle_data gives its AABB as a
// box record (records[kObsCloud]) for the bounding-sphere pre-test. The exact test goes through the
// cloud's CAPT (clouds[i], capt/query.hh), which answers only radii in [r_min, r_max]: every entry
// point checks the robot's radii against that range before any kernel runs. Distances to a cloud
// go through its nearest-point tree instead (capt/nearest_query.hh), which has no radius contract.
//
// Meshes (kObsMesh) and convex hulls (kObsConvex) follow the same pattern: a box record of their
// world AABB (records[kObsMesh], records[kObsConvex]) for the broad phase and the bounding-sphere
// pre-test, and
// the exact test through their own structure:
//   mesh i   meshes[i], an AABB tree over its triangles in the WORLD frame (bvh/bvh_view.hh); a
//            surface: a sphere collides iff its centre is strictly closer to a triangle than r.
//   hull i   hulls[i] in its own frame, placed by hull_poses[i] (world = R local + t); a solid.
//            Its boundary triangles' planes in the world frame, float32, are hull_planes rows
//            hull_plane_begin[i] .. hull_plane_begin[i+1] (nx ny nz h; inside: n . p <= h), and
//            hull_plane_abs[i] is the largest |h|: the planes decide most spheres with a rounding
//            margin (collision/obstacles.hh) and GJK (gjk/gjk.hh, double) decides the rest.
#pragma once
#include <cstdint>

#include "simdplan/bvh/bvh_view.hh"
#include "simdplan/capt/nearest_view.hh"
#include "simdplan/capt/view.hh"
#include "simdplan/geom/records.hh"
#include "simdplan/gjk/gjk_kernels.hh"
#include "simdplan/gjk/hull_view.hh"

namespace simdplan {

constexpr int32_t kAabbPad = 16;  // widest vector

enum ObstacleKind : int32_t {
  kObsSphere = 0,
  kObsCapsule = 1,
  kObsCylinder = 2,
  kObsBox = 3,
  kObsPlane = 4,
  kObsCloud = 5,
  kObsMesh = 6,
  kObsConvex = 7
};
constexpr int32_t kObstacleKinds = 8;
constexpr int32_t kRecordKinds = 5;  // kObsSphere .. kObsPlane: a closed-form test on a flat record

// Floats per record of each kind (geom/records.hh); a cloud's, mesh's or hull's record is its
// world AABB as a geom::Box.
constexpr int32_t kObstacleRecordFloats[kObstacleKinds] = {
    geom::kRecordFloats<geom::Sphere>, geom::kRecordFloats<geom::Capsule>, geom::kRecordFloats<geom::Cylinder>,
    geom::kRecordFloats<geom::Box>,    geom::kRecordFloats<geom::Plane>,   geom::kRecordFloats<geom::Box>,
    geom::kRecordFloats<geom::Box>,    geom::kRecordFloats<geom::Box>};

struct EnvironmentView {
  // records[kind]: the obstacles of that kind, kObstacleRecordFloats[kind] floats each, in record order
  const float* records[kObstacleKinds];
  int32_t n_obstacles;             // all kinds
  const float* aabb_soa;           // 6 x (n_obstacles + kAabbPad)
  const int32_t* obstacle_kind;    // ObstacleKind
  const int32_t* obstacle_record;  // index within its kind's array
  int32_t n_clouds;
  const CaptView* clouds;    // n_clouds; depth < 0: not built yet (the entry checks refuse it)
  // Distance queries (collision/distance.hh): each cloud's nearest-point tree (depth < 0: not built
  // yet; the distance entry points refuse it) and its point radius.
  const NearestView* cloud_nearest;
  const float* clouds_point_radius;
  int32_t n_meshes;
  const TriMeshView* meshes;
  int32_t n_hulls;
  const HullView* hulls;
  const GjkPose* hull_poses;
  const int32_t* hull_plane_begin;  // n_hulls + 1
  const float* hull_planes;         // 4 floats per plane, world frame
  const float* hull_plane_abs;      // per hull: largest |h| of its planes
  // Broad phase for many obstacles (collision/obstacles.hh): from kObstacleTreeBuildMin obstacles on, an
  // AABB tree over the bounded obstacles' AABBs (the same outward-rounded boxes as aabb_soa);
  // leaf slot s is obstacle tree_obstacle[s]. The unbounded ones (planes) are always candidates.
  // obstacle_tree.nodes == 0: no tree, the linear SIMD scan of aabb_soa serves.
  BvhView obstacle_tree;
  const int32_t* tree_obstacle;
  int32_t n_unbounded;
  const int32_t* unbounded;
};

// The kernels walk the tree instead of scanning from kObstacleTreePerLane x (floats per vector)
// obstacles on: the scan tests that many boxes per instruction.
// PERF: planning 20 panda queries among N small random boxes, median planning time, tree / scan:
// N = 64: 41-54 / 34-37 us, 256: 149-194 / 126 us, 1000: 2.1-3.5 / 2.4-2.6 ms, 4000: 1.1-1.2 /
// 2.5-3.8 ms (Xeon 2.5 GHz, AVX-512, a busy machine); random-configuration batches never gained.
// The scalar build scans one box at a time: 10k random configurations among 1,000 boxes took
// 56 us each by the scan (benchmarks/bench_env_shapes.py), against 3 us among 5,000 by the tree.
// (A compile-time knob, -DSIMDPLAN_OBSTACLE_TREE_PER_LANE=N, for such comparisons.)
#ifndef SIMDPLAN_OBSTACLE_TREE_PER_LANE
#define SIMDPLAN_OBSTACLE_TREE_PER_LANE 128
#endif
constexpr int32_t kObstacleTreePerLane = SIMDPLAN_OBSTACLE_TREE_PER_LANE;
constexpr int32_t kObstacleTreeBuildMin = kObstacleTreePerLane;  // the scalar build's threshold

}  // namespace simdplan
