#include "environment.hh"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace simdplan {
namespace {

int32_t records(const std::vector<float>& v, int floats, const char* kind) {
  if (v.size() % floats != 0)
    throw std::invalid_argument(std::string("environment ") + kind + " array must have " + std::to_string(floats) +
                                " floats per obstacle");
  for (float x : v)
    if (!std::isfinite(x)) throw std::invalid_argument(std::string("environment ") + kind + " array has a non-finite value");
  return static_cast<int32_t>(v.size() / floats);
}

// Outward-rounded world AABBs (min x y z, max x y z) of each record; `half` gives the half-size per
// axis in double.
template <class HalfFn>
void add_aabbs(const std::vector<float>& recs, int floats, ObstacleKind kind, HalfFn half, std::vector<float>& boxes,
               std::vector<int32_t>& kinds, std::vector<int32_t>& index) {
  const size_t n = recs.size() / floats;
  for (size_t i = 0; i < n; ++i) {
    const float* o = recs.data() + i * floats;
    double h[3];
    half(o, h);
    double lo[3], hi[3];
    for (int k = 0; k < 3; ++k) {
      // NOTE: outward margin so float32 rounding of the box never clips a real contact.
      const double m = 1e-5 * (1.0 + std::fabs(o[k]) + h[k]);
      lo[k] = double(o[k]) - h[k] - m;
      hi[k] = double(o[k]) + h[k] + m;
    }
    if (kind == kObsPlane)
      for (int k = 0; k < 3; ++k) lo[k] = -HUGE_VAL, hi[k] = HUGE_VAL;
    for (int k = 0; k < 3; ++k) boxes.push_back(static_cast<float>(lo[k]));
    for (int k = 0; k < 3; ++k) boxes.push_back(static_cast<float>(hi[k]));
    kinds.push_back(kind);
    index.push_back(static_cast<int32_t>(i));
  }
}

}  // namespace

Environment::Environment(std::vector<float> spheres, std::vector<float> capsules, std::vector<float> cylinders,
                         std::vector<float> boxes, std::vector<float> planes,
                         std::vector<std::shared_ptr<const capt::Tree>> clouds, std::vector<float> cloud_aabbs,
                         std::vector<float> cloud_point_radius,
                         std::vector<std::shared_ptr<const capt::NearestTree>> cloud_nearest)
    : spheres_(std::move(spheres)),
      capsules_(std::move(capsules)),
      cylinders_(std::move(cylinders)),
      boxes_(std::move(boxes)),
      planes_(std::move(planes)),
      trees_(std::move(clouds)),
      nearest_trees_(std::move(cloud_nearest)) {
  view_.n_spheres = records(spheres_, kSphereFloats, "sphere");
  view_.spheres = spheres_.data();
  view_.n_capsules = records(capsules_, kCapsuleFloats, "capsule");
  view_.capsules = capsules_.data();
  view_.n_cylinders = records(cylinders_, kCylinderFloats, "cylinder");
  view_.cylinders = cylinders_.data();
  view_.n_boxes = records(boxes_, kBoxFloats, "box");
  view_.boxes = boxes_.data();
  view_.n_planes = records(planes_, kPlaneFloats, "plane");
  view_.planes = planes_.data();

  std::vector<float> aabbs;  // AoS while collecting
  add_aabbs(spheres_, kSphereFloats, kObsSphere, [](const float* o, double* h) { h[0] = h[1] = h[2] = o[3]; }, aabbs,
            obstacle_kind_, obstacle_record_);
  // capsule: segment half-extent |a_k| hl plus the full radius; cylinder: |a_k| hl + R sqrt(1 - a_k^2)
  add_aabbs(capsules_, kCapsuleFloats, kObsCapsule, [](const float* o, double* h) {
    for (int k = 0; k < 3; ++k) h[k] = std::fabs(double(o[3 + k])) * o[6] + o[7];
  }, aabbs, obstacle_kind_, obstacle_record_);
  add_aabbs(cylinders_, kCylinderFloats, kObsCylinder, [](const float* o, double* h) {
    for (int k = 0; k < 3; ++k) {
      const double a = o[3 + k];
      h[k] = std::fabs(a) * o[6] + o[7] * std::sqrt(std::max(0.0, 1.0 - a * a));
    }
  }, aabbs, obstacle_kind_, obstacle_record_);
  add_aabbs(boxes_, kBoxFloats, kObsBox, [](const float* o, double* h) {
    for (int k = 0; k < 3; ++k)
      h[k] = std::fabs(double(o[3 + k])) * o[12] + std::fabs(double(o[6 + k])) * o[13] + std::fabs(double(o[9 + k])) * o[14];
  }, aabbs, obstacle_kind_, obstacle_record_);
  add_aabbs(planes_, kPlaneFloats, kObsPlane, [](const float*, double* h) { h[0] = h[1] = h[2] = 0; }, aabbs,
            obstacle_kind_, obstacle_record_);

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
    float box[kBoxFloats] = {0};
    for (int k = 0; k < 3; ++k) {
      if (!std::isfinite(bb[k]) || !std::isfinite(bb[3 + k]) || bb[k] > bb[3 + k])
        throw std::invalid_argument("environment: cloud " + std::to_string(c) + " has an invalid AABB");
      box[k] = 0.5f * (bb[k] + bb[3 + k]);
      box[12 + k] = 0.5f * (bb[3 + k] - bb[k]) + pr;
    }
    box[3] = box[7] = box[11] = 1.0f;  // axes: identity
    cloud_boxes_.insert(cloud_boxes_.end(), box, box + kBoxFloats);
  }
  add_aabbs(cloud_boxes_, kBoxFloats, kObsCloud, [](const float* o, double* h) {
    for (int k = 0; k < 3; ++k) h[k] = o[12 + k];
  }, aabbs, obstacle_kind_, obstacle_record_);
  const size_t n = obstacle_kind_.size(), stride = n + kAabbPad;
  aabb_soa_.assign(6 * stride, 0.0f);
  for (size_t c = 0; c < 6; ++c)
    for (size_t i = 0; i < stride; ++i)
      aabb_soa_[c * stride + i] = i < n ? aabbs[6 * i + c] : (c < 3 ? HUGE_VALF : -HUGE_VALF);  // empty pad boxes
  view_.n_obstacles = static_cast<int32_t>(n);
  view_.aabb_soa = aabb_soa_.data();
  view_.obstacle_kind = obstacle_kind_.data();
  view_.obstacle_record = obstacle_record_.data();
  view_.n_clouds = static_cast<int32_t>(nc);
  view_.clouds = clouds_.data();
  view_.cloud_boxes = cloud_boxes_.data();
  view_.cloud_nearest = nearest_.data();
  view_.clouds_point_radius = point_radius_.data();
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
  return int64_t(view_.n_spheres) + view_.n_capsules + view_.n_cylinders + view_.n_boxes + view_.n_planes +
         view_.n_clouds;
}

}  // namespace simdplan
