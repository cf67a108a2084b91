// environment.hh: owning storage behind an EnvironmentView (world frame, metres, float32).
//
// Built once from the arrays the Python Environment builder validated; immutable afterwards, so one
// environment can be shared by any number of concurrent checks.
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simdplan/bvh/bvh.hh"
#include "simdplan/capt/nearest_tree.hh"
#include "simdplan/capt/tree.hh"
#include "simdplan/collision/environment_view.hh"
#include "simdplan/gjk/hull.hh"

namespace simdplan {

// A point cloud cannot answer a robot's sphere radii (its tree was built for another range, or not
// yet); Python catches it to build the tree for the robot, or reports it.
struct CloudRadiusError : std::invalid_argument {
  CloudRadiusError(const std::string& what, int32_t cloud, float need_lo, float need_hi)
      : std::invalid_argument(what), cloud(cloud), need_lo(need_lo), need_hi(need_hi) {}
  int32_t cloud;
  float need_lo, need_hi;
};

// (kind name, floats per record) of each kind with a flat record, in ObstacleKind order: what the
// Python builder writes (simdplan.collision.environment).
std::vector<std::pair<std::string, int>> obstacle_record_floats();

class Environment {
 public:
  // clouds: built trees shared with Python (never copied); nullptr for a cloud whose tree waits for
  // the robot's radii. cloud_nearest: each cloud's nearest-point tree for distance queries (empty,
  // or nullptr entries, where not built yet). cloud_aabbs: 6 floats per cloud (min x y z, max x y z of its points, before
  // the point radius, which comes from the tree or cloud_point_radius when the tree is missing).
  // meshes: world-frame triangle trees, shared (never copied). hulls: convex hulls in their own
  // frames, shared, placed by hull_poses (12 doubles each: rotation row-major, translation).
  // records[kind]: the flat records (geom/records.hh) of each kind with one, in ObstacleKind order.
  explicit Environment(std::array<std::vector<float>, kRecordKinds> records,
                       std::vector<std::shared_ptr<const capt::Tree>> clouds = {}, std::vector<float> cloud_aabbs = {},
                       std::vector<float> cloud_point_radius = {},
                       std::vector<std::shared_ptr<const capt::NearestTree>> cloud_nearest = {},
                       std::vector<std::shared_ptr<const bvh::TriMesh>> meshes = {},
                       std::vector<std::shared_ptr<const gjk::Hull>> hulls = {}, std::vector<double> hull_poses = {});

  const EnvironmentView& view() const { return view_; }
  int64_t size() const;
  // Throws CloudRadiusError unless every cloud has a tree that answers radii [r_lo, r_hi].
  void require_cloud_radii(float r_lo, float r_hi) const;
  // Throws CloudRadiusError (cloud index set, radii 0) unless every cloud has its nearest-point tree.
  void require_cloud_nearest() const;

 private:
  std::vector<float> records_[kObstacleKinds];  // view_.records
  std::vector<std::shared_ptr<const capt::Tree>> trees_;
  std::vector<CaptView> clouds_;
  std::vector<std::shared_ptr<const capt::NearestTree>> nearest_trees_;
  std::vector<NearestView> nearest_;
  std::vector<float> point_radius_;
  std::vector<std::shared_ptr<const bvh::TriMesh>> mesh_owners_;
  std::vector<TriMeshView> meshes_;
  std::vector<std::shared_ptr<const gjk::Hull>> hull_owners_;
  std::vector<HullView> hulls_;
  std::vector<GjkPose> hull_poses_;
  std::vector<float> hull_planes_, hull_plane_abs_;
  std::vector<int32_t> hull_plane_begin_;
  bvh::Bvh obstacle_tree_;
  std::vector<int32_t> tree_obstacle_, unbounded_;
  std::vector<float> aabb_soa_;
  std::vector<int32_t> obstacle_kind_, obstacle_record_;
  EnvironmentView view_{};
};

}  // namespace simdplan
