// simdplan/geom/sphere_sphere.hh: sphere against sphere (obstacle spheres and robot self-collision).
//
// Lanes hold robot spheres (centre x, y, z and radius r, metres, world frame). Obstacle record:
// geom::Sphere. Collision is strict: touching spheres are free.
#pragma once
#include "simdplan/config.hh"
#include "simdplan/geom/records.hh"

namespace simdplan::SIMDPLAN_NS {

// per lane: squared distance from (x,y,z) to the obstacle sphere's centre
template <class V>
SIMDPLAN_INLINE V sphere_sphere_sqdist(V x, V y, V z, const geom::Sphere& o) {
  const V dx = x - V::fill(o.center[0]), dy = y - V::fill(o.center[1]), dz = z - V::fill(o.center[2]);
  return fmadd(dx, dx, fmadd(dy, dy, dz * dz));
}

// per lane: true if sphere (x,y,z,r) penetrates obstacle sphere o: |c - o| < r + o.r
template <class V>
SIMDPLAN_INLINE typename V::Mask sphere_sphere_hit(V x, V y, V z, V r, const geom::Sphere& o) {
  const V rr = r + V::fill(o.radius);
  return sphere_sphere_sqdist(x, y, z, o) < rr * rr;
}

// per lane: true if two lane spheres penetrate each other: |a - b| < ra + rb
template <class V>
SIMDPLAN_INLINE typename V::Mask sphere_sphere_hit2(V ax, V ay, V az, V ar, V bx, V by, V bz, V br) {
  const V dx = ax - bx, dy = ay - by, dz = az - bz;
  const V rr = ar + br;
  return fmadd(dx, dx, fmadd(dy, dy, dz * dz)) < rr * rr;
}

}  // namespace simdplan::SIMDPLAN_NS
