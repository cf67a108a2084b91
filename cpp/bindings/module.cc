// module.cc: the simdplan._core extension: ISA control plus the robots and collision bindings.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "dispatch.hh"
#include "simdplan/bvh/bvh_kernels.hh"
#include "simdplan/capt/capt_kernels.hh"
#include "simdplan/capt/nearest_kernels.hh"
#include "simdplan/gjk/gjk_kernels.hh"
#include "simdplan/planner/neighbor_kernels.hh"

namespace nb = nanobind;

namespace simdplan::bind {
void bind_collision(nb::module_& m);
void bind_robots(nb::module_& m);
void bind_planner(nb::module_& m);
void bind_pointcloud(nb::module_& m);
void bind_nearest(nb::module_& m);
void bind_gjk(nb::module_& m);
void bind_bvh(nb::module_& m);
}  // namespace simdplan::bind

NB_MODULE(_core, m) {
  m.doc() = "simdplan C++ core (SIMD kernels); use the simdplan package, not this module directly";
  m.def("compiled_isas", &simdplan::compiled_isas, "ISA builds compiled into this module");
  m.def("available_isas", &simdplan::available_isas, "ISA builds this CPU can run, worst to best");
  m.def("set_isa", &simdplan::set_isa, nb::arg("name"), "Use the named ISA build for every later call");
  m.def("isa", []() { return std::string(simdplan::active().name); }, "Name of the ISA build in use");
  m.def("lanes", []() { return simdplan::active().lanes; }, "Configurations per kernel call in use");
  m.def("motion_lanes", []() { return simdplan::active().motion_lanes; },
        "Samples per chunk of the planners' discrete Link while trees grow");
  m.def(
      "active_tables",
      [] {
        nb::dict out;
        out["kernels"] = simdplan::active().name;
        out["capt"] = simdplan::capt_kernels_active().name;
        out["nearest"] = simdplan::nearest_kernels_active().name;
        out["bvh"] = simdplan::bvh_kernels_active().name;
        out["gjk"] = simdplan::gjk_kernels_active().name;
        out["neighbors"] = simdplan::neighbor_kernels_active().name;
        return out;
      },
      "The ISA build each kernel family runs now, {family: ISA name} (set_isa switches them all)");
  simdplan::bind::bind_collision(m);
  simdplan::bind::bind_robots(m);
  simdplan::bind::bind_planner(m);
  simdplan::bind::bind_pointcloud(m);
  simdplan::bind::bind_nearest(m);
  simdplan::bind::bind_gjk(m);
  simdplan::bind::bind_bvh(m);
}
