// nearest.cc: binds the nearest-point tree (simdplan.collision.NearestPointTree builds it).
//
// The Python facade (collision/nearest.py) validates shapes, dtypes and finiteness and passes
// C-contiguous float32 arrays; centres and max_distance are checked here as well, so no caller of
// _core gets an answer for a query the kernels do not define. Wrong dtypes or shapes are rejected
// by nanobind's signature matching (TypeError). The class has no holder of its own: nanobind's
// std::shared_ptr caster (included below) lets C++ keep std::shared_ptr<const capt::NearestTree>
// to a Python-owned tree, as the Environment does with CaptTree.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "arrays.hh"
#include "simdplan/capt/nearest_kernels.hh"
#include "simdplan/capt/nearest_tree.hh"

namespace simdplan::bind {

namespace {

using Points32 = nb::ndarray<const float, nb::shape<-1, 3>, nb::c_contig, nb::device::cpu>;

// NOTE: as for the CAPT, the GIL is released for batches only (one query takes 50-500 ns).
constexpr int64_t kReleaseGilQueries = 256;
// Indices come back int32 from the kernel; widened to int64 chunk by chunk.
constexpr int64_t kChunk = 4096;

// max_distance (float64) as the float32 the kernel compares with: the smallest float >= it. For a
// float32 distance x, x < that float iff x < max_distance, so strictness survives the narrowing.
float max_distance_f32(double md) {
  if (!(md >= 0.0))  // NaN too
    throw std::invalid_argument("max_distance must be >= 0 (or inf), got " + std::to_string(md));
  float f = float(md);  // overflows to +inf above FLT_MAX, which is the right answer
  if (double(f) < md) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

nb::tuple query(const capt::NearestTree& t, const Points32& centers, double max_distance) {
  const float md = max_distance_f32(max_distance);
  const int64_t n = int64_t(centers.shape(0));
  const float* c = centers.data();
  // the wording loop runs only when the branch-free pass fails
  const bool ok = all_finite(c, 3 * n);
  for (int64_t i = 0; i < n && !ok; ++i)
    if (!(std::isfinite(c[3 * i]) && std::isfinite(c[3 * i + 1]) && std::isfinite(c[3 * i + 2])))
      throw std::invalid_argument("query point " + std::to_string(i) + " is not finite");
  float* dist = nullptr;
  int64_t* index = nullptr;
  auto d_arr = new_array<float>({size_t(n)}, &dist);
  auto i_arr = new_array<int64_t>({size_t(n)}, &index);
  const NearestKernels& k = nearest_kernels_active();
  const NearestView* v = &t.view();
  auto run = [&]() {
    int32_t idx[kChunk];
    for (int64_t s = 0; s < n; s += kChunk) {
      const int64_t m = n - s < kChunk ? n - s : kChunk;
      k.nearest(v, c + 3 * s, m, md, dist + s, idx);
      for (int64_t j = 0; j < m; ++j) index[s + j] = idx[j];
    }
  };
  if (n >= kReleaseGilQueries) {
    nb::gil_scoped_release nogil;
    run();
  } else {
    run();
  }
  return nb::make_tuple(d_arr, i_arr);
}

// nearest_lanes of the active ISA, one max_distance per query (tests compare it with query)
nb::ndarray<nb::numpy, float> query_lanes(const capt::NearestTree& t, const Points32& centers,
                                          const nb::ndarray<const float, nb::ndim<1>, nb::c_contig>& max_distance) {
  const int64_t n = int64_t(centers.shape(0));
  const float* c = centers.data();
  if (int64_t(max_distance.shape(0)) != n) throw std::invalid_argument("max_distance needs one value per query");
  if (!all_finite(c, 3 * n)) throw std::invalid_argument("query points must be finite");
  const float* md = max_distance.data();
  for (int64_t i = 0; i < n; ++i)
    if (!(md[i] >= 0)) throw std::invalid_argument("max_distance must be >= 0 (inf allowed)");
  float* dist = nullptr;
  auto d_arr = new_array<float>({size_t(n)}, &dist);
  nearest_kernels_active().nearest_lanes(&t.view(), c, n, md, dist);
  return d_arr;
}

// nearest_floor_lanes of the active ISA (tests compare it with exact distances)
nb::ndarray<nb::numpy, float> floor_distance(const capt::NearestTree& t, const Points32& centers) {
  if (!t.view().floor_cells) throw std::invalid_argument("this tree was built without distance_floor=True");
  const int64_t n = int64_t(centers.shape(0));
  float* out = nullptr;
  auto arr = new_array<float>({size_t(n)}, &out);
  nearest_kernels_active().floor_lanes(&t.view(), centers.data(), n, out);
  return arr;
}

}  // namespace

void bind_nearest(nb::module_& m) {
  nb::class_<capt::NearestTree>(m, "NearestTree")
      .def(
          "__init__",
          [](capt::NearestTree* self, const Points32& points, bool distance_floor) {
            const float* p = points.data();
            const int64_t n = int64_t(points.shape(0));
            nb::gil_scoped_release nogil;
            new (self) capt::NearestTree(p, n, distance_floor);
          },
          nb::arg("points"), nb::arg("distance_floor") = false,
          "points: (n, 3) float32 C-contiguous, finite; world frame, metres. distance_floor: also build the "
          "distance floor grid (lower bounds of the distance by one look-up; the certified Link's clearances)")
      .def("__len__", &capt::NearestTree::size)
      .def_prop_ro("build_time_ns", &capt::NearestTree::build_time_ns)
      .def_prop_ro("unique_points", &capt::NearestTree::unique_size)
      .def_prop_ro("depth", [](const capt::NearestTree& t) { return t.view().depth; })
      .def_prop_ro("floor_cell", &capt::NearestTree::floor_cell, "floor grid cell side, metres (0: none)")
      .def_prop_ro("floor_cells", &capt::NearestTree::floor_cells, "floor grid cells (0: none)")
      .def("floor_distance", &floor_distance, nb::arg("centers"),
           "(m,) float32: the floor grid's lower bound of each centre's distance to the nearest point, metres "
           "(any centre, NaN included, gets a value; only finite ones are bounds)")
      .def("query", &query, nb::arg("centers"), nb::arg("max_distance"),
           "(dist (m,) float32, index (m,) int64): nearest point strictly within max_distance, else (inf, -1)")
      .def("query_lanes", &query_lanes, nb::arg("centers"), nb::arg("max_distance"),
           "dist (m,) float32 as query's with max_distance (m,) float32 per query, the queries walking the tree "
           "W at a time (the distance kernels' search)");
}

}  // namespace simdplan::bind
