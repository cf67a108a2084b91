// simdplan/geom/sphere_capsule.hh: sphere against capsule (segment swept by a radius).
//
// Capsule record: geom::Capsule (half_length is half the segment, so the round caps reach radius
// beyond it). Collision is strict.
#pragma once
#include "simdplan/config.hh"
#include "simdplan/geom/records.hh"

namespace simdplan::SIMDPLAN_NS {

// per lane: squared distance from (x,y,z) to the capsule's segment
template <class V>
SIMDPLAN_INLINE V sphere_capsule_sqdist(V x, V y, V z, const geom::Capsule& o) {
  const V dx = x - V::fill(o.center[0]), dy = y - V::fill(o.center[1]), dz = z - V::fill(o.center[2]);
  const V ax = V::fill(o.axis[0]), ay = V::fill(o.axis[1]), az = V::fill(o.axis[2]);
  const V hl = V::fill(o.half_length);
  V t = fmadd(dx, ax, fmadd(dy, ay, dz * az));
  t = vmax(-hl, vmin(hl, t));
  const V px = fmadd(-t, ax, dx), py = fmadd(-t, ay, dy), pz = fmadd(-t, az, dz);
  return fmadd(px, px, fmadd(py, py, pz * pz));
}

// per lane: true if sphere (x,y,z,r) penetrates the capsule: dist(c, segment) < r + radius
template <class V>
SIMDPLAN_INLINE typename V::Mask sphere_capsule_hit(V x, V y, V z, V r, const geom::Capsule& o) {
  const V rr = r + V::fill(o.radius);
  return sphere_capsule_sqdist(x, y, z, o) < rr * rr;
}

}  // namespace simdplan::SIMDPLAN_NS
