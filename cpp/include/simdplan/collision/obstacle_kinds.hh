// simdplan/collision/obstacle_kinds.hh: the table of obstacle kinds with a flat record.
//
// One row (RecordKind<kind>) per kind with a closed-form test: its record type (geom/records.hh),
// the half-extents of its world AABB (environment storage, broad phase), its exact sphere test and
// its signed distance (the validity and distance kernels, geom/sphere_*.hh). with_record_kind turns
// a run-time kind into its row; it is the only switch over these kinds in the kernels. Clouds,
// meshes and hulls have a structure of their own (collision/obstacles.hh, shape_hit_bits): their
// record is their world AABB as a geom::Box, which runs the box row (culling only).
#pragma once
#include <algorithm>
#include <cmath>

#include "simdplan/collision/environment_view.hh"
#include "simdplan/config.hh"
#include "simdplan/geom/records.hh"
#include "simdplan/geom/sphere_box.hh"
#include "simdplan/geom/sphere_capsule.hh"
#include "simdplan/geom/sphere_cylinder.hh"
#include "simdplan/geom/sphere_plane.hh"
#include "simdplan/geom/sphere_sphere.hh"

namespace simdplan::SIMDPLAN_NS {

// Double-precision points for the closest-point rows (distance reports, not the hot kernels).
struct D3 {
  double x, y, z;
};
inline D3 operator-(D3 a, D3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
inline D3 operator+(D3 a, D3 b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
inline D3 operator*(double s, D3 a) { return {s * a.x, s * a.y, s * a.z}; }
inline double dot(D3 a, D3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }
inline double norm(D3 a) { return std::sqrt(dot(a, a)); }
inline D3 unit_or(D3 a, D3 fallback) {
  const double n = norm(a);
  return n > 0 ? (1.0 / n) * a : fallback;
}
inline D3 at(const float* o) { return {o[0], o[1], o[2]}; }

// Each row: Record, kKind, kName, kBounded, aabb_half (double), hit and sdist (per lane, V), and
// closest(record, c, w): the nearest point w of the surface to c and the signed distance of c
// (negative inside), in double from the float32 record.
template <int32_t Kind>
struct RecordKind;

template <>
struct RecordKind<kObsSphere> {
  static constexpr int32_t kKind = kObsSphere;
  static constexpr const char* kName = "sphere";  // as simdplan.collision names the kind
  using Record = geom::Sphere;
  static constexpr bool kBounded = true;
  static void aabb_half(const Record& o, double h[3]) { h[0] = h[1] = h[2] = o.radius; }
  template <class V>
  static SIMDPLAN_INLINE typename V::Mask hit(const Record& o, V x, V y, V z, V r) {
    return sphere_sphere_hit(x, y, z, r, o);
  }
  template <class V>
  static SIMDPLAN_INLINE V sdist(const Record& o, V x, V y, V z) {
    return vsqrt(sphere_sphere_sqdist(x, y, z, o)) - V::fill(o.radius);
  }
  static double closest(const Record& o, D3 c, D3& w) {
    const D3 u = unit_or(c - at(o.center), {0, 0, 1});
    w = at(o.center) + double(o.radius) * u;
    return norm(c - at(o.center)) - o.radius;
  }
};

template <>
struct RecordKind<kObsCapsule> {
  static constexpr int32_t kKind = kObsCapsule;
  static constexpr const char* kName = "capsule";  // as simdplan.collision names the kind
  using Record = geom::Capsule;
  static constexpr bool kBounded = true;
  // the segment's half-extent |a_k| hl plus the full radius
  static void aabb_half(const Record& o, double h[3]) {
    for (int k = 0; k < 3; ++k) h[k] = std::fabs(double(o.axis[k])) * o.half_length + o.radius;
  }
  template <class V>
  static SIMDPLAN_INLINE typename V::Mask hit(const Record& o, V x, V y, V z, V r) {
    return sphere_capsule_hit(x, y, z, r, o);
  }
  template <class V>
  static SIMDPLAN_INLINE V sdist(const Record& o, V x, V y, V z) {
    return vsqrt(sphere_capsule_sqdist(x, y, z, o)) - V::fill(o.radius);
  }
  static double closest(const Record& o, D3 c, D3& w) {
    const D3 ax = at(o.axis);
    const double t = std::clamp(dot(c - at(o.center), ax), -double(o.half_length), double(o.half_length));
    const D3 p = at(o.center) + t * ax;
    w = p + double(o.radius) * unit_or(c - p, {0, 0, 1});
    return norm(c - p) - o.radius;
  }
};

template <>
struct RecordKind<kObsCylinder> {
  static constexpr int32_t kKind = kObsCylinder;
  static constexpr const char* kName = "cylinder";  // as simdplan.collision names the kind
  using Record = geom::Cylinder;
  static constexpr bool kBounded = true;
  // |a_k| hl + R sqrt(1 - a_k^2)
  static void aabb_half(const Record& o, double h[3]) {
    for (int k = 0; k < 3; ++k) {
      const double a = o.axis[k];
      h[k] = std::fabs(a) * o.half_length + o.radius * std::sqrt(std::max(0.0, 1.0 - a * a));
    }
  }
  template <class V>
  static SIMDPLAN_INLINE typename V::Mask hit(const Record& o, V x, V y, V z, V r) {
    return sphere_cylinder_hit(x, y, z, r, o);
  }
  template <class V>
  static SIMDPLAN_INLINE V sdist(const Record& o, V x, V y, V z) {
    return sphere_cylinder_sdist(x, y, z, o);
  }
  static double closest(const Record& o, D3 c, D3& w) {
    const D3 ax = at(o.axis), d = c - at(o.center);
    const double h = dot(d, ax);
    const D3 radial = d - h * ax;
    const double rho = norm(radial);
    D3 ur = unit_or(radial, std::fabs(ax.x) < 0.9 ? D3{1, 0, 0} : D3{0, 1, 0});
    if (rho == 0) ur = unit_or(ur - dot(ur, ax) * ax, {0, 0, 1});
    const double hl = o.half_length, R = o.radius;
    const double er = rho - R, eh = std::fabs(h) - hl;
    if (er < 0 && eh < 0) {  // inside: the nearer of the side and the cap
      if (eh > er) {
        w = at(o.center) + (h >= 0 ? hl : -hl) * ax + rho * ur;
      } else {
        w = at(o.center) + h * ax + R * ur;
      }
      return std::max(er, eh);
    }
    w = at(o.center) + std::clamp(h, -hl, hl) * ax + std::min(rho, R) * ur;
    return std::hypot(std::max(er, 0.0), std::max(eh, 0.0));
  }
};

template <>
struct RecordKind<kObsBox> {
  static constexpr int32_t kKind = kObsBox;
  static constexpr const char* kName = "box";  // as simdplan.collision names the kind
  using Record = geom::Box;
  static constexpr bool kBounded = true;
  static void aabb_half(const Record& o, double h[3]) {
    for (int k = 0; k < 3; ++k)
      h[k] = std::fabs(double(o.axes[0][k])) * o.half[0] + std::fabs(double(o.axes[1][k])) * o.half[1] +
             std::fabs(double(o.axes[2][k])) * o.half[2];
  }
  template <class V>
  static SIMDPLAN_INLINE typename V::Mask hit(const Record& o, V x, V y, V z, V r) {
    return sphere_box_hit(x, y, z, r, o);
  }
  template <class V>
  static SIMDPLAN_INLINE V sdist(const Record& o, V x, V y, V z) {
    return sphere_box_sdist(x, y, z, o);
  }
  static double closest(const Record& o, D3 c, D3& w) {
    const D3 d = c - at(o.center);
    double local[3], clamped[3];
    double worst = -HUGE_VAL;
    int worst_axis = 0;
    for (int k = 0; k < 3; ++k) {
      local[k] = dot(d, at(o.axes[k]));
      clamped[k] = std::clamp(local[k], -double(o.half[k]), double(o.half[k]));
      const double ex = std::fabs(local[k]) - o.half[k];
      if (ex > worst) worst = ex, worst_axis = k;
    }
    const bool inside = worst < 0;
    if (inside) clamped[worst_axis] = local[worst_axis] >= 0 ? o.half[worst_axis] : -o.half[worst_axis];
    w = at(o.center);
    for (int k = 0; k < 3; ++k) w = w + clamped[k] * at(o.axes[k]);
    return inside ? worst : norm(c - w);
  }
};

template <>
struct RecordKind<kObsPlane> {
  static constexpr int32_t kKind = kObsPlane;
  static constexpr const char* kName = "plane";  // as simdplan.collision names the kind
  using Record = geom::Plane;
  static constexpr bool kBounded = false;  // its AABB is all of space
  static void aabb_half(const Record&, double h[3]) { h[0] = h[1] = h[2] = HUGE_VAL; }
  template <class V>
  static SIMDPLAN_INLINE typename V::Mask hit(const Record& o, V x, V y, V z, V r) {
    return sphere_plane_hit(x, y, z, r, o);
  }
  template <class V>
  static SIMDPLAN_INLINE V sdist(const Record& o, V x, V y, V z) {
    return sphere_plane_sdist(x, y, z, o);
  }
  static double closest(const Record& o, D3 c, D3& w) {
    const D3 n = at(o.normal);
    const double sd = dot(n, c) - o.offset;
    w = c - sd * n;
    return sd;
  }
};

// fn(RecordKind<kind>{}, record at o). `kind` is a record kind: callers map clouds, meshes and
// hulls to kObsBox first (record_kind in collision/obstacles.hh), whose record is their AABB.
template <class Fn>
SIMDPLAN_INLINE decltype(auto) with_record_kind(int32_t kind, const float* o, Fn&& fn) {
  switch (kind) {
    case kObsSphere: return fn(RecordKind<kObsSphere>{}, geom::record_as<geom::Sphere>(o));
    case kObsCapsule: return fn(RecordKind<kObsCapsule>{}, geom::record_as<geom::Capsule>(o));
    case kObsCylinder: return fn(RecordKind<kObsCylinder>{}, geom::record_as<geom::Cylinder>(o));
    case kObsBox: return fn(RecordKind<kObsBox>{}, geom::record_as<geom::Box>(o));
    default: return fn(RecordKind<kObsPlane>{}, geom::record_as<geom::Plane>(o));  // kObsPlane
  }
}

// Calls fn(RecordKind<k>{}) for every record kind k, in ObstacleKind order (environment storage).
template <class Fn>
void for_each_record_kind(Fn&& fn) {
  fn(RecordKind<kObsSphere>{});
  fn(RecordKind<kObsCapsule>{});
  fn(RecordKind<kObsCylinder>{});
  fn(RecordKind<kObsBox>{});
  fn(RecordKind<kObsPlane>{});
}

}  // namespace simdplan::SIMDPLAN_NS
