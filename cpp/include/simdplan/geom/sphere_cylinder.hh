// simdplan/geom/sphere_cylinder.hh: sphere against a solid cylinder with flat caps (exact).
//
// Cylinder record: geom::Cylinder (half_length is half the total height). Distance from a point to the solid is sqrt(dr^2 + dh^2) with
// dr = max(radial - radius, 0) and dh = max(|axial| - half_length, 0): exact for rims and caps.
#pragma once
#include "simdplan/config.hh"
#include "simdplan/geom/records.hh"

namespace simdplan::SIMDPLAN_NS {

// per lane: axial coordinate h of (x,y,z) along the cylinder's axis (0 at its centre) and the
// radial distance from the axis
template <class V>
SIMDPLAN_INLINE void cylinder_coords(V x, V y, V z, const geom::Cylinder& o, V& h, V& radial) {
  const V dx = x - V::fill(o.center[0]), dy = y - V::fill(o.center[1]), dz = z - V::fill(o.center[2]);
  const V ax = V::fill(o.axis[0]), ay = V::fill(o.axis[1]), az = V::fill(o.axis[2]);
  h = fmadd(dx, ax, fmadd(dy, ay, dz * az));
  const V px = fmadd(-h, ax, dx), py = fmadd(-h, ay, dy), pz = fmadd(-h, az, dz);
  radial = vsqrt(fmadd(px, px, fmadd(py, py, pz * pz)));
}

// per lane: squared distance from (x,y,z) to the solid cylinder (0 inside)
template <class V>
SIMDPLAN_INLINE V sphere_cylinder_sqdist(V x, V y, V z, const geom::Cylinder& o) {
  V h, radial;
  cylinder_coords(x, y, z, o, h, radial);
  const V dr = vmax(radial - V::fill(o.radius), V::zero());
  const V dh = vmax(vabs(h) - V::fill(o.half_length), V::zero());
  return fmadd(dr, dr, dh * dh);
}

// per lane: signed distance from (x,y,z) to the cylinder surface (negative inside)
template <class V>
SIMDPLAN_INLINE V sphere_cylinder_sdist(V x, V y, V z, const geom::Cylinder& o) {
  V h, radial;
  cylinder_coords(x, y, z, o, h, radial);
  const V er = radial - V::fill(o.radius);
  const V eh = vabs(h) - V::fill(o.half_length);
  const V dr = vmax(er, V::zero()), dh = vmax(eh, V::zero());
  return select(vmax(er, eh) < V::zero(), vmax(er, eh), vsqrt(fmadd(dr, dr, dh * dh)));
}

// per lane: true if sphere (x,y,z,r), r > 0, penetrates the cylinder: dist(c, cylinder) < r, i.e. its
// signed distance is below r (a centre inside has distance 0 < r). Radii are > 0 by contract.
template <class V>
SIMDPLAN_INLINE typename V::Mask sphere_cylinder_hit(V x, V y, V z, V r, const geom::Cylinder& o) {
  return sphere_cylinder_sqdist(x, y, z, o) < r * r;
}

}  // namespace simdplan::SIMDPLAN_NS
