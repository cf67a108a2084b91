#include "environment.hh"

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
}

int64_t Environment::size() const {
  return int64_t(view_.n_spheres) + view_.n_capsules + view_.n_cylinders + view_.n_boxes + view_.n_planes;
}

}  // namespace simdplan
