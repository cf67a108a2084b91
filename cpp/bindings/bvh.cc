// bvh.cc: binds the BVH mid-phase: _core.TriangleMesh (bvh::TriMesh, wrapped by
// simdplan.collision.TriangleMesh), _core.BoxTree (bvh::Bvh over arbitrary boxes) and the raw
// point-triangle kernel the tests compare with NumPy.
//
// The Python facade (collision/mesh.py) validates shapes, dtypes and values and passes C-contiguous
// float32 / int32 arrays; the checks that keep the kernels defined (finite centres, radii >= 0,
// max_distance >= 0) are repeated here, and the C++ constructors check vertices, faces and boxes.
// Wrong dtypes or shapes are rejected by nanobind's signature matching (TypeError). The classes have
// no holder of their own: nanobind's std::shared_ptr caster (included below) lets C++ keep
// std::shared_ptr<const bvh::TriMesh> to a Python-owned mesh, as the Environment will.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "arrays.hh"
#include "simdplan/bvh/bvh.hh"
#include "simdplan/bvh/bvh_kernels.hh"

namespace simdplan::bind {

namespace {

using Points32 = nb::ndarray<const float, nb::shape<-1, 3>, nb::c_contig, nb::device::cpu>;
using Faces32 = nb::ndarray<const int32_t, nb::shape<-1, 3>, nb::c_contig, nb::device::cpu>;
using Boxes32 = nb::ndarray<const float, nb::shape<-1, 6>, nb::c_contig, nb::device::cpu>;
using Tris32 = nb::ndarray<const float, nb::shape<-1, 3, 3>, nb::c_contig, nb::device::cpu>;
using Vals32 = nb::ndarray<const float, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// NOTE: as for the other trees, the GIL is released for batches only (one query takes 0.05-5 us).
constexpr int64_t kReleaseGil = 64;

void check_centers(const Points32& c) {
  const float* p = c.data();
  const int64_t n = int64_t(c.shape(0));
  const bool ok = all_finite(p, 3 * n);
  for (int64_t i = 0; i < n && !ok; ++i)
    if (!(std::isfinite(p[3 * i]) && std::isfinite(p[3 * i + 1]) && std::isfinite(p[3 * i + 2])))
      throw std::invalid_argument("centre " + std::to_string(i) + " is not finite");
}

void check_radii(const Vals32& r, int64_t n) {
  if (int64_t(r.shape(0)) != n)
    throw std::invalid_argument("radii must have shape (" + std::to_string(n) + ",), got (" +
                                std::to_string(r.shape(0)) + ",)");
  for (int64_t i = 0; i < n; ++i)
    if (!(r.data()[i] >= 0.0f && r.data()[i] <= std::numeric_limits<float>::max()))
      throw std::invalid_argument("radius " + std::to_string(i) + " must be finite and >= 0");
}

// max_distance (float64) as the float32 the kernel compares with: the smallest float >= it, so
// that for a float32 distance x, x < that float iff x < max_distance.
float max_distance_f32(double md) {
  if (!(md >= 0.0))
    throw std::invalid_argument("max_distance must be >= 0 (or inf), got " + std::to_string(md));
  float f = float(md);
  if (double(f) < md) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

template <class F>
void maybe_nogil(int64_t n, F&& f) {
  if (n >= kReleaseGil) {
    nb::gil_scoped_release nogil;
    f();
  } else {
    f();
  }
}

using CollideFn = void (*)(const TriMeshView*, const float*, const float*, int64_t, bool*);

CollideFn collide_method(const BvhKernels& k, const std::string& method) {
  if (method == "auto") return k.collides;
  if (method == "single") return k.collides_single;
  if (method == "packet") return k.collides_packet;
  if (method == "brute") return k.collides_brute;
  throw std::invalid_argument("method must be 'auto', 'single', 'packet' or 'brute', got '" + method + "'");
}

nb::ndarray<nb::numpy, bool> collides(const bvh::TriMesh& m, const Points32& centers, const Vals32& radii,
                                      const std::string& method) {
  check_centers(centers);
  const int64_t n = int64_t(centers.shape(0));
  check_radii(radii, n);
  const CollideFn fn = collide_method(bvh_kernels_active(), method);
  bool* out = nullptr;
  auto arr = new_array<bool>({size_t(n)}, &out);
  const float* c = centers.data();
  const float* r = radii.data();
  maybe_nogil(n, [&] { fn(&m.view(), c, r, n, out); });
  return arr;
}

nb::tuple distance(const bvh::TriMesh& m, const Points32& centers, double max_distance, bool brute) {
  check_centers(centers);
  const float md = max_distance_f32(max_distance);
  const int64_t n = int64_t(centers.shape(0));
  float *dist = nullptr, *closest = nullptr;
  int64_t* tri = nullptr;
  auto d_arr = new_array<float>({size_t(n)}, &dist);
  auto t_arr = new_array<int64_t>({size_t(n)}, &tri);
  auto c_arr = new_array<float>({size_t(n), size_t(3)}, &closest);
  const BvhKernels& k = bvh_kernels_active();
  const auto fn = brute ? k.distance_brute : k.distance;
  const float* c = centers.data();
  maybe_nogil(n, [&] {
    constexpr int64_t kChunk = 4096;  // int32 indices from the kernel, widened chunk by chunk
    int32_t idx[kChunk];
    for (int64_t s = 0; s < n; s += kChunk) {
      const int64_t len = std::min(kChunk, n - s);
      fn(&m.view(), c + 3 * s, len, md, dist + s, idx, closest + 3 * s);
      for (int64_t j = 0; j < len; ++j) tri[s + j] = idx[j];
    }
  });
  return nb::make_tuple(d_arr, t_arr, c_arr);
}

// (p, 2) int64 pairs sorted by (i, j)
nb::ndarray<nb::numpy, int64_t> pairs(const BvhView& a, const BvhView& b) {
  const BvhKernels& k = bvh_kernels_active();
  std::vector<int32_t> buf;
  {
    nb::gil_scoped_release nogil;
    int64_t cap = 1024;
    for (;;) {
      buf.resize(size_t(2 * cap));
      const int64_t count = k.pairs(&a, &b, buf.data(), cap);
      if (count <= cap) {
        buf.resize(size_t(2 * count));
        break;
      }
      cap = count;
    }
  }
  const size_t p = buf.size() / 2;
  std::vector<int64_t> key(p);
  for (size_t i = 0; i < p; ++i) key[i] = int64_t(buf[2 * i]) << 32 | uint32_t(buf[2 * i + 1]);
  std::sort(key.begin(), key.end());
  int64_t* out = nullptr;
  auto arr = new_array<int64_t>({p, size_t(2)}, &out);
  for (size_t i = 0; i < p; ++i) out[2 * i] = key[i] >> 32, out[2 * i + 1] = key[i] & 0xffffffff;
  return arr;
}

nb::tuple point_triangle(const Points32& points, const Tris32& tris) {
  check_centers(points);
  const int64_t n = int64_t(points.shape(0));
  if (int64_t(tris.shape(0)) != n)
    throw std::invalid_argument("points and triangles must have the same number of rows");
  const float* t = tris.data();
  for (int64_t i = 0; i < 9 * n; ++i)
    if (!std::isfinite(t[i])) throw std::invalid_argument("triangle " + std::to_string(i / 9) + " is not finite");
  std::vector<bvh::TriRecord> rec(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) bvh::make_triangle_record(t + 9 * i, t + 9 * i + 3, t + 9 * i + 6, rec[size_t(i)].f);
  float *d2 = nullptr, *closest = nullptr;
  auto d_arr = new_array<float>({size_t(n)}, &d2);
  auto c_arr = new_array<float>({size_t(n), size_t(3)}, &closest);
  bvh_kernels_active().point_triangle(n ? rec[0].f : nullptr, points.data(), n, d2, closest);
  return nb::make_tuple(d_arr, c_arr);
}

}  // namespace

void bind_bvh(nb::module_& m) {
  nb::class_<bvh::Bvh>(m, "BoxTree")
      .def(
          "__init__",
          [](bvh::Bvh* self, const Boxes32& boxes) {
            const float* b = boxes.data();
            const int64_t n = int64_t(boxes.shape(0));
            nb::gil_scoped_release nogil;
            new (self) bvh::Bvh(b, n);
          },
          nb::arg("boxes"), "boxes: (n, 6) float32 C-contiguous, lo xyz then hi xyz; world frame, metres")
      .def("__len__", &bvh::Bvh::size)
      .def_prop_ro("depth", &bvh::Bvh::depth)
      .def_prop_ro("build_time_ns", &bvh::Bvh::build_time_ns)
      .def(
          "overlapping_pairs", [](const bvh::Bvh& a, const bvh::Bvh& b) { return pairs(a.view(), b.view()); },
          nb::arg("other"), "(p, 2) int64 element pairs (i here, j in other) whose boxes overlap (closed)")
      .def(
          "overlapping_pairs", [](const bvh::Bvh& a, const bvh::TriMesh& b) { return pairs(a.view(), b.view().bvh); },
          nb::arg("other"));

  nb::class_<bvh::TriMesh>(m, "TriangleMesh")
      .def(
          "__init__",
          [](bvh::TriMesh* self, const Points32& vertices, const Faces32& faces) {
            const float* v = vertices.data();
            const int32_t* f = faces.data();
            const int64_t nv = int64_t(vertices.shape(0)), nf = int64_t(faces.shape(0));
            nb::gil_scoped_release nogil;
            new (self) bvh::TriMesh(v, nv, f, nf);
          },
          nb::arg("vertices"), nb::arg("faces"),
          "vertices: (n, 3) float32, faces: (m, 3) int32, C-contiguous; world frame, metres")
      .def("__len__", &bvh::TriMesh::size)
      .def_prop_ro("depth", [](const bvh::TriMesh& t) { return t.tree().depth(); })
      .def_prop_ro("degenerate_triangles", &bvh::TriMesh::degenerate)
      .def_prop_ro("build_time_ns", &bvh::TriMesh::build_time_ns)
      .def("collides", &collides, nb::arg("centers"), nb::arg("radii"), nb::arg("method") = "auto",
           "(k,) bool: sphere k penetrates a triangle (distance < radius); method auto|single|packet|brute")
      .def(
          "collides_brute",
          [](const bvh::TriMesh& t, const Points32& c, const Vals32& r) { return collides(t, c, r, "brute"); },
          nb::arg("centers"), nb::arg("radii"), "collides() over every triangle, without the tree")
      .def(
          "distance", [](const bvh::TriMesh& t, const Points32& c, double md) { return distance(t, c, md, false); },
          nb::arg("centers"), nb::arg("max_distance"),
          "(dist (k,) float32, triangle (k,) int64, closest (k, 3) float32): nearest triangle strictly within "
          "max_distance, else (inf, -1, nan)")
      .def(
          "distance_brute",
          [](const bvh::TriMesh& t, const Points32& c, double md) { return distance(t, c, md, true); },
          nb::arg("centers"), nb::arg("max_distance"), "distance() over every triangle, without the tree")
      .def(
          "overlapping_pairs",
          [](const bvh::TriMesh& a, const bvh::TriMesh& b) { return pairs(a.view().bvh, b.view().bvh); },
          nb::arg("other"), "(p, 2) int64 triangle / element pairs whose boxes overlap (closed)")
      .def(
          "overlapping_pairs", [](const bvh::TriMesh& a, const bvh::Bvh& b) { return pairs(a.view().bvh, b.view()); },
          nb::arg("other"));

  m.def("point_triangle_sqdist", &point_triangle, nb::arg("points"), nb::arg("triangles"),
        "(d2 (n,) float32, closest (n, 3) float32): point i against triangle i ((n, 3, 3) float32)");
}

}  // namespace simdplan::bind
