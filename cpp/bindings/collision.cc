// collision.cc: binds the compiled Environment (simdplan.collision builds it).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "arrays.hh"
#include "environment.hh"

namespace simdplan::bind {

void bind_collision(nb::module_& m) {
  nb::class_<Environment>(m, "EnvironmentModel")
      .def(
          "__init__",
          [](Environment* self, const FloatIn& spheres, const FloatIn& capsules, const FloatIn& cylinders,
             const FloatIn& boxes, const FloatIn& planes) {
            new (self) Environment(to_vector(spheres), to_vector(capsules), to_vector(cylinders), to_vector(boxes),
                                   to_vector(planes));
          },
          nb::arg("spheres"), nb::arg("capsules"), nb::arg("cylinders"), nb::arg("boxes"), nb::arg("planes"))
      .def("__len__", &Environment::size);
}

}  // namespace simdplan::bind
