// collision.cc: binds the compiled Environment (simdplan.collision builds it).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include "arrays.hh"
#include "environment.hh"

namespace simdplan::bind {

void bind_collision(nb::module_& m) {
  // NOTE: a ValueError subclass, so callers that do not know it still see a ValueError; the robot
  // facade catches it to build a cloud's tree for the robot's radii.
  nb::exception<CloudRadiusError>(m, "CloudRadiusError", PyExc_ValueError);

  nb::class_<Environment>(m, "EnvironmentModel")
      .def(
          "__init__",
          [](Environment* self, const FloatIn& spheres, const FloatIn& capsules, const FloatIn& cylinders,
             const FloatIn& boxes, const FloatIn& planes, const std::vector<std::shared_ptr<capt::Tree>>& trees,
             const std::vector<int32_t>& cloud_tree, const FloatIn& cloud_aabbs, const FloatIn& cloud_point_radius) {
            // cloud_tree[c]: index into trees of cloud c's tree, or -1 while it waits for a robot
            std::vector<std::shared_ptr<const capt::Tree>> clouds;
            for (int32_t t : cloud_tree) {
              if (t >= int32_t(trees.size()) || t < -1) throw std::invalid_argument("cloud_tree index out of range");
              clouds.push_back(t >= 0 ? trees[size_t(t)] : nullptr);
            }
            new (self) Environment(to_vector(spheres), to_vector(capsules), to_vector(cylinders), to_vector(boxes),
                                   to_vector(planes), std::move(clouds), to_vector(cloud_aabbs),
                                   to_vector(cloud_point_radius));
          },
          nb::arg("spheres"), nb::arg("capsules"), nb::arg("cylinders"), nb::arg("boxes"), nb::arg("planes"),
          nb::arg("trees"), nb::arg("cloud_tree"), nb::arg("cloud_aabbs"), nb::arg("cloud_point_radius"))
      .def("__len__", &Environment::size);
}

}  // namespace simdplan::bind
