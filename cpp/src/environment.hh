// environment.hh: owning storage behind an EnvironmentView (world frame, metres, float32).
//
// Built once from the arrays the Python Environment builder validated; immutable afterwards, so one
// environment can be shared by any number of concurrent checks.
#pragma once
#include <cstdint>
#include <vector>

#include "simdplan/collision/environment_view.hh"

namespace simdplan {

class Environment {
 public:
  Environment(std::vector<float> spheres, std::vector<float> capsules, std::vector<float> cylinders,
              std::vector<float> boxes, std::vector<float> planes);

  const EnvironmentView& view() const { return view_; }
  int64_t size() const;

 private:
  std::vector<float> spheres_, capsules_, cylinders_, boxes_, planes_;
  std::vector<float> aabb_soa_;
  std::vector<int32_t> obstacle_kind_, obstacle_record_;
  EnvironmentView view_{};
};

}  // namespace simdplan
