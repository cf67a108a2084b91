// simdplan/collision/obstacles.hh: broad phase over all obstacles, and per-kind dispatch.
//
// for_each_candidate tests a query box against the obstacle AABBs W at a time (SoA, see
// environment_view.hh) and visits only the overlapping obstacles, in index order. obstacle_hit
// runs the exact sphere test of one obstacle of any kind. Both are templates over the vector type,
// so the batch kernel (configurations in lanes) and the single kernel (spheres in lanes) share them.
#pragma once
#include "simdplan/capt/query.hh"
#include "simdplan/collision/environment_view.hh"
#include "simdplan/config.hh"
#include "simdplan/geom/sphere_box.hh"
#include "simdplan/geom/sphere_capsule.hh"
#include "simdplan/geom/sphere_cylinder.hh"
#include "simdplan/geom/sphere_plane.hh"
#include "simdplan/geom/sphere_sphere.hh"

namespace simdplan::SIMDPLAN_NS {

// bit mask of lanes [0, count), count >= 1 (integer domain: cheaper than building a mask vector)
template <class V>
SIMDPLAN_INLINE uint32_t first_lanes(int64_t count) {
  return count >= V::W ? ((V::W >= 32) ? ~0u : ((1u << V::W) - 1u)) : ((1u << count) - 1u);
}

// Calls fn(obstacle index) for every obstacle whose AABB overlaps [lo, hi] (touching counts as
// overlap, which is conservative); stops and returns true as soon as fn returns true.
template <class V, class Fn>
SIMDPLAN_INLINE bool for_each_candidate(const EnvironmentView& env, const float lo[3], const float hi[3], Fn fn) {
  const int64_t n = env.n_obstacles, stride = n + kAabbPad;
  const float* a = env.aabb_soa;
  const V lx = V::fill(lo[0]), ly = V::fill(lo[1]), lz = V::fill(lo[2]);
  const V hx = V::fill(hi[0]), hy = V::fill(hi[1]), hz = V::fill(hi[2]);
  for (int64_t i = 0; i < n; i += V::W) {
    const auto apart = (hx < V::load(a + i)) | (hy < V::load(a + stride + i)) | (hz < V::load(a + 2 * stride + i)) |
                       (lx > V::load(a + 3 * stride + i)) | (ly > V::load(a + 4 * stride + i)) |
                       (lz > V::load(a + 5 * stride + i));
    uint32_t bits = ~apart.bits() & first_lanes<V>(n - i);
    while (bits) {
      const int k = __builtin_ctz(bits);
      bits &= bits - 1;
      if (fn(static_cast<int32_t>(i + k))) return true;
    }
  }
  return false;
}

SIMDPLAN_INLINE const float* obstacle_data(const EnvironmentView& env, int32_t idx) {
  const int32_t r = env.obstacle_record[idx];
  switch (env.obstacle_kind[idx]) {
    case kObsSphere: return env.spheres + int64_t(r) * kSphereFloats;
    case kObsCapsule: return env.capsules + int64_t(r) * kCapsuleFloats;
    case kObsCylinder: return env.cylinders + int64_t(r) * kCylinderFloats;
    case kObsBox: return env.boxes + int64_t(r) * kBoxFloats;
    case kObsPlane: return env.planes + int64_t(r) * kPlaneFloats;
    default: return env.cloud_boxes + int64_t(r) * kBoxFloats;  // kObsCloud: its AABB as a box
  }
}

// The kind whose exact test obstacle_hit runs on obstacle_data: a cloud's record is its AABB box,
// good for culling only; the exact cloud test is cloud_hit_bits.
SIMDPLAN_INLINE int32_t record_kind(int32_t kind) { return kind == kObsCloud ? int32_t(kObsBox) : kind; }

// Bits of `lanes` whose sphere (x,y,z,r) penetrates a point of cloud t (|c - p| < r + point_radius).
// Radii must lie in [t.r_min, t.r_max]: the entry points check the robot's radii first. The query
// itself is capt_hit_bits (capt/query.hh), which takes the radii with the point radius added.
template <class V>
SIMDPLAN_INLINE uint32_t cloud_hit_bits(const CaptView& t, V x, V y, V z, V r, uint32_t lanes) {
  return capt_hit_bits(t, x, y, z, r + V::fill(t.point_radius), lanes);
}

// per lane: true if sphere (x,y,z,r) penetrates the obstacle of `kind` with record o
template <class V>
SIMDPLAN_INLINE typename V::Mask obstacle_hit(int32_t kind, const float* o, V x, V y, V z, V r) {
  switch (kind) {
    case kObsSphere: return sphere_sphere_hit(x, y, z, r, o);
    case kObsCapsule: return sphere_capsule_hit(x, y, z, r, o);
    case kObsCylinder: return sphere_cylinder_hit(x, y, z, r, o);
    case kObsBox: return sphere_box_hit(x, y, z, r, o);
    default: return sphere_plane_hit(x, y, z, r, o);  // kObsPlane (clouds never come here: record_kind)
  }
}

// per lane: signed distance from (x,y,z) to the surface of the obstacle of `kind` (negative inside);
// a sphere of radius r penetrates it by r - this
template <class V>
SIMDPLAN_INLINE V obstacle_sdist(int32_t kind, const float* o, V x, V y, V z) {
  switch (kind) {
    case kObsSphere: return vsqrt(sphere_sphere_sqdist(x, y, z, o)) - V::fill(o[3]);
    case kObsCapsule: return vsqrt(sphere_capsule_sqdist(x, y, z, o)) - V::fill(o[7]);
    case kObsCylinder: return sphere_cylinder_sdist(x, y, z, o);
    case kObsBox: return sphere_box_sdist(x, y, z, o);
    default: return sphere_plane_sdist(x, y, z, o);
  }
}

}  // namespace simdplan::SIMDPLAN_NS
