#include "collision/environment.hh"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "simdplan/collision/obstacle_kinds.hh"

namespace simdplan {
namespace {

// Checks one kind's flat records (Python's builder has validated every number; this guards the
// layout) and returns how many there are.
int32_t count_records(const std::vector<float>& v, int floats, const char* kind) {
  if (v.size() % floats != 0)
    throw std::invalid_argument(std::string("environment ") + kind + " array must have " + std::to_string(floats) +
                                " floats per obstacle");
  for (float x : v)
    if (!std::isfinite(x)) throw std::invalid_argument(std::string("environment ") + kind + " array has a non-finite value");
  return static_cast<int32_t>(v.size() / floats);
}

// Outward-rounded world AABBs (min x y z, max x y z) of each record of one kind, from the first
// three floats of its record (the centre) and the row's half-extents; all of space if unbounded.
template <class Row>
void add_aabbs(Row, const std::vector<float>& recs, std::vector<float>& boxes, std::vector<int32_t>& kinds,
               std::vector<int32_t>& index) {
  using Record = typename Row::Record;
  constexpr int floats = geom::kRecordFloats<Record>;
  const size_t n = recs.size() / floats;
  for (size_t i = 0; i < n; ++i) {
    const float* o = recs.data() + i * floats;
    double h[3];
    Row::aabb_half(geom::record_as<Record>(o), h);
    double lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
      // NOTE: outward margin so float32 rounding of the box never clips a real contact.
      const double m = 1e-5 * (1.0 + std::fabs(o[k]) + h[k]);
      lo[k] = double(o[k]) - h[k] - m;
      hi[k] = double(o[k]) + h[k] + m;
    }
    if (!Row::kBounded)
      for (int k = 0; k < 3; ++k) lo[k] = -HUGE_VAL, hi[k] = HUGE_VAL;
    for (int k = 0; k < 3; ++k) boxes.push_back(static_cast<float>(lo[k]));
    for (int k = 0; k < 3; ++k) boxes.push_back(static_cast<float>(hi[k]));
    kinds.push_back(Row::kKind);
    index.push_back(static_cast<int32_t>(i));
  }
}

// Appends an axis-aligned box record around [lo, hi], rounded outward to float32.
void push_box_record(const double* lo, const double* hi, std::vector<float>& out) {
  geom::Box box{};
  for (int k = 0; k < 3; ++k) {
    const double c = 0.5 * (lo[k] + hi[k]), h = 0.5 * (hi[k] - lo[k]);
    box.center[k] = float(c);
    box.half[k] = float(h + std::fabs(c - double(box.center[k]))) * (1.0f + 1e-6f);
    box.axes[k][k] = 1.0f;
  }
  const float* f = &box.center[0];
  out.insert(out.end(), f, f + geom::kRecordFloats<geom::Box>);
}

}  // namespace

std::vector<std::pair<std::string, int>> obstacle_record_floats() {
  std::vector<std::pair<std::string, int>> out;
  isa_scalar::for_each_record_kind([&](auto row) {
    out.emplace_back(row.kName, geom::kRecordFloats<typename decltype(row)::Record>);
  });
  return out;
}

Environment::Environment(std::array<std::vector<float>, kRecordKinds> records,
                         std::vector<std::shared_ptr<const capt::Tree>> clouds, std::vector<float> cloud_aabbs,
                         std::vector<float> cloud_point_radius,
                         std::vector<std::shared_ptr<const capt::NearestTree>> cloud_nearest,
                         std::vector<std::shared_ptr<const bvh::TriMesh>> meshes,
                         std::vector<std::shared_ptr<const gjk::Hull>> hulls, std::vector<double> hull_poses)
    : trees_(std::move(clouds)),
      nearest_trees_(std::move(cloud_nearest)),
      mesh_owners_(std::move(meshes)),
      hull_owners_(std::move(hulls)) {
  std::vector<float> aabbs;  // AoS while collecting
  isa_scalar::for_each_record_kind([&](auto row) {
    using Row = decltype(row);
    std::vector<float>& recs = records_[Row::kKind];
    recs = std::move(records[Row::kKind]);
    count_records(recs, geom::kRecordFloats<typename Row::Record>, Row::kName);
    add_aabbs(row, recs, aabbs, obstacle_kind_, obstacle_record_);
  });

  // point clouds: the box record of each cloud's AABB doubles as its broad-phase record
  const size_t nc = trees_.size();
  if (cloud_aabbs.size() != 6 * nc || cloud_point_radius.size() != nc)
    throw std::invalid_argument("environment: cloud_aabbs needs 6 floats and cloud_point_radius 1 per cloud");
  if (nearest_trees_.empty()) nearest_trees_.resize(nc);
  if (nearest_trees_.size() != nc) throw std::invalid_argument("environment: cloud_nearest needs one entry per cloud");
  clouds_.resize(nc);
  nearest_.resize(nc);
  point_radius_.resize(nc);
  for (size_t c = 0; c < nc; ++c) {
    const float* bb = cloud_aabbs.data() + 6 * c;
    float pr = cloud_point_radius[c];
    if (trees_[c]) {
      clouds_[c] = trees_[c]->view();
      pr = clouds_[c].point_radius;
    } else {
      clouds_[c] = CaptView{};
      clouds_[c].depth = -1;  // not built: require_cloud_radii refuses every check
    }
    if (!(pr >= 0) || !std::isfinite(pr)) throw std::invalid_argument("environment: cloud point radius must be >= 0");
    point_radius_[c] = pr;
    if (nearest_trees_[c]) {
      nearest_[c] = nearest_trees_[c]->view();
    } else {
      nearest_[c] = NearestView{};
      nearest_[c].depth = -1;
    }
    geom::Box box{};
    for (int k = 0; k < 3; ++k) {
      if (!std::isfinite(bb[k]) || !std::isfinite(bb[3 + k]) || bb[k] > bb[3 + k])
        throw std::invalid_argument("environment: cloud " + std::to_string(c) + " has an invalid AABB");
      box.center[k] = 0.5f * (bb[k] + bb[3 + k]);
      box.half[k] = 0.5f * (bb[3 + k] - bb[k]) + pr;
      box.axes[k][k] = 1.0f;
    }
    const float* f = &box.center[0];
    records_[kObsCloud].insert(records_[kObsCloud].end(), f, f + geom::kRecordFloats<geom::Box>);
  }
  // clouds, meshes and hulls: their box record is their broad-phase record
  const auto add_box_aabbs = [&](ObstacleKind kind) {
    const size_t first = obstacle_kind_.size();
    add_aabbs(isa_scalar::RecordKind<kObsBox>{}, records_[kind], aabbs, obstacle_kind_, obstacle_record_);
    std::fill(obstacle_kind_.begin() + first, obstacle_kind_.end(), kind);
  };
  add_box_aabbs(kObsCloud);

  // meshes: the root box of each triangle tree (the exact union of its triangles' boxes)
  for (size_t i = 0; i < mesh_owners_.size(); ++i) {
    if (!mesh_owners_[i]) throw std::invalid_argument("environment: mesh " + std::to_string(i) + " is null");
    const TriMeshView& m = mesh_owners_[i]->view();
    if (m.bvh.nodes == 0) throw std::invalid_argument("environment: mesh " + std::to_string(i) + " has no triangles");
    meshes_.push_back(m);
    const BvhNode& root = m.bvh.node[0];
    double lo[3], hi[3];
    for (int k = 0; k < 3; ++k) lo[k] = root.lo[k], hi[k] = root.hi[k];
    push_box_record(lo, hi, records_[kObsMesh]);
  }
  add_box_aabbs(kObsMesh);

  // convex hulls: pose, world AABB of the placed vertices, world face planes
  const size_t nh = hull_owners_.size();
  if (hull_poses.size() != 12 * nh) throw std::invalid_argument("environment: hull_poses needs 12 doubles per hull");
  hull_plane_begin_.push_back(0);
  for (size_t i = 0; i < nh; ++i) {
    if (!hull_owners_[i]) throw std::invalid_argument("environment: hull " + std::to_string(i) + " is null");
    const HullView& h = hull_owners_[i]->view();
    GjkPose pose;
    for (int k = 0; k < 9; ++k) pose.r[k] = hull_poses[12 * i + k];
    for (int k = 0; k < 3; ++k) pose.t[k] = hull_poses[12 * i + 9 + k];
    for (int k = 0; k < 12; ++k)
      if (!std::isfinite(hull_poses[12 * i + k]))
        throw std::invalid_argument("environment: hull " + std::to_string(i) + " has a non-finite pose");
    hulls_.push_back(h);
    hull_poses_.push_back(pose);
    double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    for (int32_t v = 0; v < h.n; ++v) {
      const double p[3] = {h.x[v], h.y[v], h.z[v]};
      for (int k = 0; k < 3; ++k) {
        const double w = pose.r[3 * k] * p[0] + pose.r[3 * k + 1] * p[1] + pose.r[3 * k + 2] * p[2] + pose.t[k];
        lo[k] = std::min(lo[k], w), hi[k] = std::max(hi[k], w);
      }
    }
    push_box_record(lo, hi, records_[kObsConvex]);
    float habs = 0.0f;
    for (int32_t f = 0; f < h.n_faces; ++f) {
      const double* pl = h.face_plane + 4 * f;
      double n[3];
      for (int k = 0; k < 3; ++k) n[k] = pose.r[3 * k] * pl[0] + pose.r[3 * k + 1] * pl[1] + pose.r[3 * k + 2] * pl[2];
      const double off = pl[3] + n[0] * pose.t[0] + n[1] * pose.t[1] + n[2] * pose.t[2];
      for (int k = 0; k < 3; ++k) hull_planes_.push_back(float(n[k]));
      hull_planes_.push_back(float(off));
      habs = std::max(habs, float(std::fabs(off)));
    }
    hull_plane_abs_.push_back(habs);
    hull_plane_begin_.push_back(int32_t(hull_planes_.size() / 4));
  }
  add_box_aabbs(kObsConvex);
  const size_t n = obstacle_kind_.size(), stride = n + kAabbPad;
  aabb_soa_.assign(6 * stride, 0.0f);
  for (size_t c = 0; c < 6; ++c)
    for (size_t i = 0; i < stride; ++i)
      aabb_soa_[c * stride + i] = i < n ? aabbs[6 * i + c] : (c < 3 ? HUGE_VALF : -HUGE_VALF);  // empty pad boxes
  // many obstacles: an AABB tree over the bounded ones
  if (n >= size_t(kObstacleTreeBuildMin)) {
    std::vector<float> bounded_boxes;
    std::vector<int32_t> bounded;
    for (size_t i = 0; i < n; ++i) {
      const float* b = aabbs.data() + 6 * i;
      bool finite = true;
      for (int k = 0; k < 6; ++k) finite &= std::isfinite(b[k]);
      if (!finite) {
        unbounded_.push_back(int32_t(i));
        continue;
      }
      bounded.push_back(int32_t(i));
      bounded_boxes.insert(bounded_boxes.end(), b, b + 6);
    }
    obstacle_tree_ = bvh::Bvh(bounded_boxes.data(), int64_t(bounded.size()));
    const BvhView& t = obstacle_tree_.view();
    tree_obstacle_.resize(bounded.size());
    for (size_t slot = 0; slot < bounded.size(); ++slot) tree_obstacle_[slot] = bounded[size_t(t.order[slot])];
    view_.obstacle_tree = t;
    view_.tree_obstacle = tree_obstacle_.data();
    view_.n_unbounded = int32_t(unbounded_.size());
    view_.unbounded = unbounded_.data();
  }
  for (int32_t k = 0; k < kObstacleKinds; ++k) view_.records[k] = records_[k].data();
  view_.n_obstacles = static_cast<int32_t>(n);
  view_.aabb_soa = aabb_soa_.data();
  view_.obstacle_kind = obstacle_kind_.data();
  view_.obstacle_record = obstacle_record_.data();
  view_.n_clouds = static_cast<int32_t>(nc);
  view_.clouds = clouds_.data();
  view_.cloud_nearest = nearest_.data();
  view_.clouds_point_radius = point_radius_.data();
  view_.n_meshes = static_cast<int32_t>(meshes_.size());
  view_.meshes = meshes_.data();
  view_.n_hulls = static_cast<int32_t>(nh);
  view_.hulls = hulls_.data();
  view_.hull_poses = hull_poses_.data();
  view_.hull_plane_begin = hull_plane_begin_.data();
  view_.hull_planes = hull_planes_.data();
  view_.hull_plane_abs = hull_plane_abs_.data();
}

void Environment::require_cloud_nearest() const {
  for (size_t c = 0; c < nearest_.size(); ++c)
    if (nearest_[c].depth < 0)
      throw CloudRadiusError("point cloud " + std::to_string(c) + " has no nearest-point tree yet", int32_t(c), 0.0f,
                             0.0f);
}

void Environment::require_cloud_radii(float r_lo, float r_hi) const {
  for (size_t c = 0; c < clouds_.size(); ++c) {
    const CaptView& t = clouds_[c];
    if (t.depth < 0)
      throw CloudRadiusError("point cloud " + std::to_string(c) + " has no tree yet", int32_t(c), r_lo, r_hi);
    if (r_lo < t.r_min || r_hi > t.r_max)
      throw CloudRadiusError("point cloud " + std::to_string(c) + " answers sphere radii in [" +
                                 std::to_string(t.r_min) + ", " + std::to_string(t.r_max) + "] m, but the robot's " +
                                 "spheres (with padding) span [" + std::to_string(r_lo) + ", " + std::to_string(r_hi) +
                                 "] m",
                             int32_t(c), r_lo, r_hi);
  }
}

int64_t Environment::size() const {
  return int64_t(view_.n_obstacles);
}

}  // namespace simdplan
