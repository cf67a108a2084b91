// simdplan/geom/sphere_capsule.hh: sphere against capsule (segment swept by a radius).
//
// Capsule layout, 8 floats: centre x, y, z; unit axis ax, ay, az (world frame); half_length (half the
// segment, so the round caps reach radius beyond it); radius. Collision is strict.
#pragma once
#include "simdplan/config.hh"

namespace simdplan::SIMDPLAN_NS {

// per lane: squared distance from (x,y,z) to the capsule's segment
template <class V>
SIMDPLAN_INLINE V sphere_capsule_sqdist(V x, V y, V z, const float* o) {
  const V dx = x - V::fill(o[0]), dy = y - V::fill(o[1]), dz = z - V::fill(o[2]);
  const V ax = V::fill(o[3]), ay = V::fill(o[4]), az = V::fill(o[5]);
  const V hl = V::fill(o[6]);
  V t = fmadd(dx, ax, fmadd(dy, ay, dz * az));
  t = vmax(-hl, vmin(hl, t));
  const V px = fmadd(-t, ax, dx), py = fmadd(-t, ay, dy), pz = fmadd(-t, az, dz);
  return fmadd(px, px, fmadd(py, py, pz * pz));
}

// per lane: true if sphere (x,y,z,r) penetrates the capsule: dist(c, segment) < r + radius
template <class V>
SIMDPLAN_INLINE typename V::Mask sphere_capsule_hit(V x, V y, V z, V r, const float* o) {
  const V rr = r + V::fill(o[7]);
  return sphere_capsule_sqdist(x, y, z, o) < rr * rr;
}

}  // namespace simdplan::SIMDPLAN_NS
