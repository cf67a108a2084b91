// gjk.cc: binds simdplan::gjk::Hull as _core.ConvexHull (simdplan.collision.ConvexHull wraps it):
// support-point queries and sphere / capsule signed distances by GJK.
//
// The Python facade (collision/convex.py) computes the hull, validates and converts the arrays;
// the checks here repeat the ones that keep the kernels defined (finite, in-range values), so no
// caller of _core reaches a kernel with input it does not handle.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "arrays.hh"
#include "simdplan/gjk/gjk_kernels.hh"
#include "simdplan/gjk/hull.hh"

namespace simdplan::bind {

namespace {

using Rows32 = nb::ndarray<const float, nb::shape<-1, 3>, nb::c_contig, nb::device::cpu>;
using Rows64 = nb::ndarray<const double, nb::shape<-1, 3>, nb::c_contig, nb::device::cpu>;
using Tris32 = nb::ndarray<const int32_t, nb::shape<-1, 3>, nb::c_contig, nb::device::cpu>;
using Ints32 = nb::ndarray<const int32_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Vals64 = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Mat33 = nb::ndarray<const double, nb::shape<3, 3>, nb::c_contig, nb::device::cpu>;
using Vec3 = nb::ndarray<const double, nb::shape<3>, nb::c_contig, nb::device::cpu>;

// NOTE: as in pointcloud.cc, the GIL is released for batches only (one query takes 20-500 ns).
constexpr int64_t kReleaseGil = 64;
constexpr double kMaxDirection = 1e18;  // |d| * |v| <= 1e30 stays finite in float32
constexpr double kMaxCoordinate = 1e12;
constexpr double kRotationTol = 1e-6;

int32_t parse_method(const std::string& s, const HullView& v, bool allow_auto) {
  if (s == "brute") return kSupportBrute;
  if (s == "plain") return kSupportPlain;
  if (s == "packed") {
    if (!v.lines)
      throw std::invalid_argument("this hull has no packed layout (it would need more than 65535 cache lines); "
                                  "use method='plain'");
    return kSupportPacked;
  }
  if (allow_auto && s == "auto") return kSupportAuto;
  throw std::invalid_argument("method must be " + std::string(allow_auto ? "'auto', " : "") +
                              "'brute', 'plain' or 'packed', got '" + s + "'");
}

const char* method_name(int32_t m) {
  return m == kSupportBrute ? "brute" : m == kSupportPacked ? "packed" : "plain";
}

void check_rows(const double* p, int64_t n, const char* name) {
  for (int64_t i = 0; i < 3 * n; ++i)
    if (!(std::fabs(p[i]) <= kMaxCoordinate))
      throw std::invalid_argument(std::string(name) + " row " + std::to_string(i / 3) +
                                  " is not finite or beyond 1e12");
}

void check_radii(const Vals64& r, int64_t n) {
  if (int64_t(r.shape(0)) != n)
    throw std::invalid_argument("radii must have shape (" + std::to_string(n) + ",), got (" +
                                std::to_string(r.shape(0)) + ",)");
  for (int64_t i = 0; i < n; ++i)
    if (!(r.data()[i] >= 0 && r.data()[i] <= kMaxCoordinate))
      throw std::invalid_argument("radii[" + std::to_string(i) + "] must be finite and in [0, 1e12]");
}

// rot: 3 x 3 row-major, t: 3 (C-contiguous arrays or plain floats)
GjkPose make_pose(const double* rot, const double* t) {
  GjkPose p;
  for (int k = 0; k < 9; ++k) {
    p.r[k] = rot[k];
    if (!std::isfinite(p.r[k])) throw std::invalid_argument("rotation must be finite");
  }
  // a rotation: R^T R = I to 1e-6 and det R > 0 (the kernels map points in by R^T)
  double err = 0.0;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const double d = p.r[i] * p.r[j] + p.r[3 + i] * p.r[3 + j] + p.r[6 + i] * p.r[6 + j];
      err = std::max(err, std::fabs(d - (i == j ? 1.0 : 0.0)));
    }
  const double* r = p.r;
  const double det = r[0] * (r[4] * r[8] - r[5] * r[7]) - r[1] * (r[3] * r[8] - r[5] * r[6]) +
                     r[2] * (r[3] * r[7] - r[4] * r[6]);
  if (!(err <= kRotationTol) || !(det > 0))
    throw std::invalid_argument("rotation must be a rotation matrix (orthonormal to 1e-6, determinant +1)");
  for (int k = 0; k < 3; ++k) {
    p.t[k] = t[k];
    if (!(std::fabs(p.t[k]) <= kMaxCoordinate)) throw std::invalid_argument("translation must be finite, within 1e12");
  }
  return p;
}

// One query without array conversions (PERF: from Python, 17 -> 8-12 us per call on a busy
// 2-core machine; the query itself takes about 1 us): pose as 12 floats, R row-major then t.
GjkPose pose_from(const std::array<double, 12>& p) { return make_pose(p.data(), p.data() + 9); }

nb::object one_result(double clearance, const double* w) {
  double* out = nullptr;
  auto arr = new_array<double>({size_t(3)}, &out);
  out[0] = w[0], out[1] = w[1], out[2] = w[2];
  return nb::make_tuple(clearance, arr);
}

// Allocates the outputs of n distance queries (clearance (n,), witness (n, 3), status (n,)), runs
// fn(clearance, witness, status) (the GIL released for large batches) and returns the Python result.
template <class Fn>
nb::object distance_result(int64_t n, bool with_status, Fn fn) {
  double *clr = nullptr, *wit = nullptr;
  int32_t* st = nullptr;
  auto ca = new_array<double>({size_t(n)}, &clr);
  auto wa = new_array<double>({size_t(n), size_t(3)}, &wit);
  auto sa = new_array<int32_t>({size_t(n)}, &st);
  if (n >= kReleaseGil) {
    nb::gil_scoped_release nogil;
    fn(clr, wit, st);
  } else {
    fn(clr, wit, st);
  }
  if (with_status) return nb::make_tuple(ca, wa, sa);
  return nb::make_tuple(ca, wa);
}

}  // namespace

void bind_gjk(nb::module_& m) {
  nb::class_<gjk::Hull>(m, "ConvexHull")
      .def(
          "__init__",
          [](gjk::Hull* self, const Rows32& vertices, const Ints32& offsets, const Ints32& indices,
             const Tris32& triangles, int32_t artificial) {
            const int64_t n = int64_t(vertices.shape(0));
            if (n > (int64_t(1) << 24)) throw std::invalid_argument("a convex hull takes at most 2^24 vertices");
            if (int64_t(offsets.shape(0)) != n + 1)
              throw std::invalid_argument("offsets must have shape (n + 1,) = (" + std::to_string(n + 1) + ",), got (" +
                                          std::to_string(offsets.shape(0)) + ",)");
            if (artificial < -1 || artificial > kHullLineSlots - 1)
              throw std::invalid_argument("artificial must be -1 (the default) or 0..25");
            const float* v = vertices.data();
            const int32_t* o = offsets.data();
            const int32_t* ix = indices.data();
            const int32_t* tr = triangles.data();
            const int64_t na = int64_t(indices.shape(0)), nt = int64_t(triangles.shape(0));
            nb::gil_scoped_release nogil;
            new (self) gjk::Hull(v, int32_t(n), o, ix, na, tr, nt, artificial);
          },
          nb::arg("vertices"), nb::arg("offsets"), nb::arg("indices"), nb::arg("triangles"),
          nb::arg("artificial") = -1,
          "vertices (n, 3) float32 (hull frame, metres), adjacency CSR offsets (n + 1,) and indices int32, "
          "boundary triangles (t, 3) int32; artificial: most artificial edges per vertex in the packed layout (-1: the default)")
      .def("__len__", [](const gjk::Hull& h) { return h.view().n; })
      .def(
          "auto_methods",
          [](const gjk::Hull& h) {
            const HullView& v = h.view();
            const int32_t sup = v.n <= gjk_kernels_active().support_brute_max ? kSupportBrute
                                : v.lines                                       ? kSupportPacked
                                                                                : kSupportPlain;
            const int32_t dist = v.n >= kGjkPackedMinVertices && v.lines ? kSupportPacked : kSupportPlain;
            return nb::make_tuple(std::string(method_name(sup)), std::string(method_name(dist)));
          },
          "(support method, distance method) that method='auto' uses for this hull under the ISA in use")
      .def_prop_ro("stats",
                   [](const gjk::Hull& h) {
                     const gjk::HullStats& s = h.stats();
                     nb::dict d;
                     d["vertices"] = s.vertices;
                     d["faces"] = s.faces;
                     d["edges"] = s.edges;
                     d["max_degree"] = s.max_degree;
                     d["continuation_lines"] = s.continuation_lines;
                     d["artificial_edges"] = s.artificial_edges;
                     d["packed"] = s.packed;
                     d["build_ns"] = s.build_ns;
                     d["reflex_defect"] = h.view().reflex_defect;
                     return d;
                   })
      .def(
          "vertices",
          [](const gjk::Hull& h) {
            const HullView& v = h.view();
            float* out = nullptr;
            auto arr = new_array<float>({size_t(v.n), size_t(3)}, &out);
            for (int32_t i = 0; i < v.n; ++i) out[3 * i] = v.x[i], out[3 * i + 1] = v.y[i], out[3 * i + 2] = v.z[i];
            return arr;
          },
          "(n, 3) float32, hull frame")
      .def(
          "packed_lines",
          [](const gjk::Hull& h) -> nb::object {
            const HullView& v = h.view();
            if (!v.lines) return nb::none();
            float* xyz = nullptr;
            uint16_t* slots = nullptr;
            auto a = new_array<float>({size_t(v.n_lines), size_t(3)}, &xyz);
            auto b = new_array<uint16_t>({size_t(v.n_lines), size_t(kHullLineSlots)}, &slots);
            for (int32_t i = 0; i < v.n_lines; ++i) {
              xyz[3 * i] = v.lines[i].x, xyz[3 * i + 1] = v.lines[i].y, xyz[3 * i + 2] = v.lines[i].z;
              for (int s = 0; s < kHullLineSlots; ++s) slots[size_t(i) * kHullLineSlots + s] = v.lines[i].slot[s];
            }
            return nb::make_tuple(a, b);
          },
          "(xyz (lines, 3) float32, slots (lines, 26) uint16) of the packed layout, or None (for tests)")
      .def(
          "support",
          [](const gjk::Hull& h, const Rows32& dirs, const std::string& method) {
            const HullView& v = h.view();
            int32_t meth = parse_method(method, v, true);
            if (meth == kSupportAuto)
              meth = v.n <= gjk_kernels_active().support_brute_max ? kSupportBrute
                     : v.lines                                      ? kSupportPacked
                                                                    : kSupportPlain;
            const int64_t n = int64_t(dirs.shape(0));
            const float* d = dirs.data();
            for (int64_t i = 0; i < 3 * n; ++i)
              if (!(std::fabs(d[i]) <= kMaxDirection))
                throw std::invalid_argument("direction " + std::to_string(i / 3) + " is not finite or beyond 1e18");
            int64_t* idx = nullptr;
            float* val = nullptr;
            auto ia = new_array<int64_t>({size_t(n)}, &idx);
            auto va = new_array<float>({size_t(n)}, &val);
            const GjkKernels& k = gjk_kernels_active();
            auto fn = meth == kSupportBrute ? k.support_brute : meth == kSupportPacked ? k.support_packed : k.support_plain;
            if (n >= kReleaseGil) {
              nb::gil_scoped_release nogil;
              fn(&v, d, n, idx, val);
            } else {
              fn(&v, d, n, idx, val);
            }
            return nb::make_tuple(ia, va);
          },
          nb::arg("dirs"), nb::arg("method") = "auto",
          "dirs (m, 3) float32 (hull frame) -> (index (m,) int64, value (m,) float32)")
      .def(
          "sphere_distance",
          [](const gjk::Hull& h, const Rows64& centers, const Vals64& radii, const Mat33& rotation,
             const Vec3& translation, const std::string& method, bool with_status) {
            const HullView& v = h.view();
            const int32_t meth = parse_method(method, v, true);
            const int64_t n = int64_t(centers.shape(0));
            check_rows(centers.data(), n, "centers");
            check_radii(radii, n);
            const GjkPose pose = make_pose(rotation.data(), translation.data());
            const GjkKernels& k = gjk_kernels_active();
            const double* c = centers.data();
            const double* r = radii.data();
            return distance_result(n, with_status, [&](double* clr, double* wit, int32_t* st) {
              k.sphere_distance(&v, &pose, meth, c, r, n, clr, wit, st);
            });
          },
          nb::arg("centers"), nb::arg("radii"), nb::arg("rotation"), nb::arg("translation"),
          nb::arg("method") = "auto", nb::arg("with_status") = false,
          "centers (m, 3), radii (m,) float64 world; hull pose rotation (3, 3), translation (3,) -> "
          "(clearance (m,) float64, witness_on_hull (m, 3) float64 world[, status (m,) int32])")
      .def(
          "sphere_distance_one",
          [](const gjk::Hull& h, double x, double y, double z, double r, const std::array<double, 12>& pose,
             const std::string& method) {
            const HullView& v = h.view();
            const int32_t meth = parse_method(method, v, true);
            const double c[3] = {x, y, z};
            check_rows(c, 1, "centers");
            if (!(r >= 0 && r <= kMaxCoordinate)) throw std::invalid_argument("radii[0] must be finite and in [0, 1e12]");
            const GjkPose p = pose_from(pose);
            double clr, wit[3];
            int32_t st;
            gjk_kernels_active().sphere_distance(&v, &p, meth, c, &r, 1, &clr, wit, &st);
            return one_result(clr, wit);
          },
          nb::arg("x"), nb::arg("y"), nb::arg("z"), nb::arg("r"), nb::arg("pose"), nb::arg("method") = "auto",
          "one sphere, pose = 12 floats (rotation row-major, translation) -> (clearance, witness (3,))")
      .def(
          "capsule_distance_one",
          [](const gjk::Hull& h, const std::array<double, 3>& a, const std::array<double, 3>& b, double r,
             const std::array<double, 12>& pose, const std::string& method) {
            const HullView& v = h.view();
            const int32_t meth = parse_method(method, v, true);
            check_rows(a.data(), 1, "a");
            check_rows(b.data(), 1, "b");
            if (!(r >= 0 && r <= kMaxCoordinate)) throw std::invalid_argument("radii[0] must be finite and in [0, 1e12]");
            const GjkPose p = pose_from(pose);
            double clr, wit[3];
            int32_t st;
            gjk_kernels_active().capsule_distance(&v, &p, meth, a.data(), b.data(), &r, 1, &clr, wit, &st);
            return one_result(clr, wit);
          },
          nb::arg("a"), nb::arg("b"), nb::arg("r"), nb::arg("pose"), nb::arg("method") = "auto",
          "one capsule (ends as 3 floats each), pose as in sphere_distance_one -> (clearance, witness (3,))")
      .def(
          "capsule_distance",
          [](const gjk::Hull& h, const Rows64& a, const Rows64& b, const Vals64& radii, const Mat33& rotation,
             const Vec3& translation, const std::string& method, bool with_status) {
            const HullView& v = h.view();
            const int32_t meth = parse_method(method, v, true);
            const int64_t n = int64_t(a.shape(0));
            if (int64_t(b.shape(0)) != n)
              throw std::invalid_argument("b must have shape (" + std::to_string(n) + ", 3), got (" +
                                          std::to_string(b.shape(0)) + ", 3)");
            check_rows(a.data(), n, "a");
            check_rows(b.data(), n, "b");
            check_radii(radii, n);
            const GjkPose pose = make_pose(rotation.data(), translation.data());
            const GjkKernels& k = gjk_kernels_active();
            const double* pa = a.data();
            const double* pb = b.data();
            const double* r = radii.data();
            return distance_result(n, with_status, [&](double* clr, double* wit, int32_t* st) {
              k.capsule_distance(&v, &pose, meth, pa, pb, r, n, clr, wit, st);
            });
          },
          nb::arg("a"), nb::arg("b"), nb::arg("radii"), nb::arg("rotation"), nb::arg("translation"),
          nb::arg("method") = "auto", nb::arg("with_status") = false,
          "segments a -> b (m, 3 each), radii (m,) float64 world; hull pose -> "
          "(clearance (m,) float64, witness_on_hull (m, 3) float64 world[, status (m,) int32])");
}

}  // namespace simdplan::bind
