// collision.cc: binds the compiled Environment (simdplan.collision builds it).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include <string>
#include <type_traits>

#include "arrays.hh"
#include "collision/environment.hh"

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
             const std::vector<int32_t>& cloud_tree, const FloatIn& cloud_aabbs, const FloatIn& cloud_point_radius,
             const std::vector<std::shared_ptr<capt::NearestTree>>& nearest_trees,
             const std::vector<int32_t>& cloud_nearest, const std::vector<std::shared_ptr<bvh::TriMesh>>& meshes,
             const std::vector<std::shared_ptr<gjk::Hull>>& hulls,
             const nb::ndarray<const double, nb::ndim<2>, nb::shape<-1, 12>, nb::c_contig, nb::device::cpu>& poses) {
            // cloud_tree[c]: index into trees of cloud c's tree, or -1 while it waits for a robot;
            // cloud_nearest[c] likewise into nearest_trees (-1: not built, distance queries refuse it)
            auto pick = [](const auto& pool, const std::vector<int32_t>& which, const char* name) {
              std::vector<std::shared_ptr<const typename std::decay_t<decltype(pool)>::value_type::element_type>> out;
              for (int32_t t : which) {
                if (t >= int32_t(pool.size()) || t < -1) throw std::invalid_argument(std::string(name) + " index out of range");
                out.push_back(t >= 0 ? pool[size_t(t)] : nullptr);
              }
              return out;
            };
            auto clouds = pick(trees, cloud_tree, "cloud_tree");
            auto nearest = pick(nearest_trees, cloud_nearest, "cloud_nearest");
            if (!nearest.empty() && nearest.size() != clouds.size())
              throw std::invalid_argument("cloud_nearest needs one entry per cloud");
            std::vector<std::shared_ptr<const bvh::TriMesh>> mesh_list(meshes.begin(), meshes.end());
            std::vector<std::shared_ptr<const gjk::Hull>> hull_list(hulls.begin(), hulls.end());
            std::vector<double> pose_list(poses.data(), poses.data() + poses.size());
            new (self) Environment({to_vector(spheres), to_vector(capsules), to_vector(cylinders), to_vector(boxes),
                                    to_vector(planes)},
                                   std::move(clouds), to_vector(cloud_aabbs),
                                   to_vector(cloud_point_radius), std::move(nearest), std::move(mesh_list),
                                   std::move(hull_list), std::move(pose_list));
          },
          nb::arg("spheres"), nb::arg("capsules"), nb::arg("cylinders"), nb::arg("boxes"), nb::arg("planes"),
          nb::arg("trees"), nb::arg("cloud_tree"), nb::arg("cloud_aabbs"), nb::arg("cloud_point_radius"),
          nb::arg("nearest_trees"), nb::arg("cloud_nearest"), nb::arg("meshes"), nb::arg("hulls"),
          nb::arg("hull_poses"))
      .def("__len__", &Environment::size);

  m.def(
      "obstacle_record_floats",
      [] {
        nb::dict out;
        for (const auto& [kind, floats] : obstacle_record_floats()) out[kind.c_str()] = floats;
        return out;
      },
      "Floats per flat obstacle record of each kind, {kind name: count}, in the core's kind order.");
}

}  // namespace simdplan::bind
