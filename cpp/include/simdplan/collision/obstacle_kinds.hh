// simdplan/collision/obstacle_kinds.hh: the table of obstacle kinds with a flat record.
//
// One row (RecordKind<kind>) per kind with a closed-form test: its record type (geom/records.hh),
// the half-extents of its world AABB (environment storage, broad phase), its exact sphere test and
// its signed distance (the validity and distance kernels, geom/sphere_*.hh). with_record_kind turns
// a run-time kind into its row; it is the only switch over these kinds in the kernels. Clouds,
// meshes and hulls have a structure of their own (collision/obstacles.hh, shape_hit_bits): their
// record is their world AABB as a geom::Box, which runs the box row (culling only).
#pragma once
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
