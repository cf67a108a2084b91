#include "environment.hh"

#include <algorithm>
#include <cmath>
#include <limits>
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

// Outward-rounded world AABB of each record; `half` gives the half-size per axis in double.
template <class HalfFn>
std::vector<float> aabbs(const std::vector<float>& recs, int floats, HalfFn half) {
  std::vector<float> out;
  const size_t n = recs.size() / floats;
  out.reserve(n * kAabbFloats);
  for (size_t i = 0; i < n; ++i) {
    const float* o = recs.data() + i * floats;
    double h[3];
    half(o, h);
    double lo3[3], hi3[3];
    for (int k = 0; k < 3; ++k) {
      // NOTE: outward margin so float32 rounding of the box never clips a real contact.
      const double m = 1e-5 * (1.0 + std::fabs(o[k]) + h[k]);
      lo3[k] = double(o[k]) - h[k] - m;
      hi3[k] = double(o[k]) + h[k] + m;
    }
    for (int k = 0; k < 3; ++k) out.push_back(static_cast<float>(lo3[k]));
    for (int k = 0; k < 3; ++k) out.push_back(static_cast<float>(hi3[k]));
  }
  return out;
}

}  // namespace

Environment::Environment(std::vector<float> spheres, std::vector<float> capsules, std::vector<float> cylinders,
                         std::vector<float> boxes, std::vector<float> planes)
    : spheres_(std::move(spheres)),
      capsules_(std::move(capsules)),
      cylinders_(std::move(cylinders)),
      boxes_(std::move(boxes)),
      planes_(std::move(planes)) {
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

  sphere_aabbs_ = aabbs(spheres_, kSphereFloats, [](const float* o, double* h) { h[0] = h[1] = h[2] = o[3]; });
  // capsule: segment half-extent |a_k| hl plus the full radius; cylinder: |a_k| hl + R sqrt(1 - a_k^2)
  capsule_aabbs_ = aabbs(capsules_, kCapsuleFloats, [](const float* o, double* h) {
    for (int k = 0; k < 3; ++k) h[k] = std::fabs(double(o[3 + k])) * o[6] + o[7];
  });
  cylinder_aabbs_ = aabbs(cylinders_, kCylinderFloats, [](const float* o, double* h) {
    for (int k = 0; k < 3; ++k) {
      const double a = o[3 + k];
      h[k] = std::fabs(a) * o[6] + o[7] * std::sqrt(std::max(0.0, 1.0 - a * a));
    }
  });
  box_aabbs_ = aabbs(boxes_, kBoxFloats, [](const float* o, double* h) {
    for (int k = 0; k < 3; ++k)
      h[k] = std::fabs(double(o[3 + k])) * o[12] + std::fabs(double(o[6 + k])) * o[13] + std::fabs(double(o[9 + k])) * o[14];
  });
  // planes: unbounded (the AABB never rejects them)
  plane_aabbs_.clear();
  for (int32_t i = 0; i < view_.n_planes; ++i) {
    for (int k = 0; k < 3; ++k) plane_aabbs_.push_back(-std::numeric_limits<float>::infinity());
    for (int k = 0; k < 3; ++k) plane_aabbs_.push_back(std::numeric_limits<float>::infinity());
  }
  view_.sphere_aabbs = sphere_aabbs_.data();
  view_.capsule_aabbs = capsule_aabbs_.data();
  view_.cylinder_aabbs = cylinder_aabbs_.data();
  view_.box_aabbs = box_aabbs_.data();
  view_.plane_aabbs = plane_aabbs_.data();
}

int64_t Environment::size() const {
  return int64_t(view_.n_spheres) + view_.n_capsules + view_.n_cylinders + view_.n_boxes + view_.n_planes;
}

}  // namespace simdplan
