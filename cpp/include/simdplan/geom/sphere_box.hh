// simdplan/geom/sphere_box.hh: sphere against an oriented box.
//
// Box record: geom::Box (geom/records.hh).
// The centre is taken into the box frame, clamped to the extents, and the squared distance to the
// clamped point is compared with r^2 (strict).
#pragma once
#include "simdplan/config.hh"
#include "simdplan/geom/records.hh"

namespace simdplan::SIMDPLAN_NS {

// per lane: squared distance from (x,y,z) to the solid box (0 inside)
template <class V>
SIMDPLAN_INLINE V sphere_box_sqdist(V x, V y, V z, const geom::Box& o) {
  const V dx = x - V::fill(o.center[0]), dy = y - V::fill(o.center[1]), dz = z - V::fill(o.center[2]);
  V acc = V::zero();
  for (int k = 0; k < 3; ++k) {
    const float* u = o.axes[k];
    const V local = fmadd(dx, V::fill(u[0]), fmadd(dy, V::fill(u[1]), dz * V::fill(u[2])));
    const V out = vmax(vabs(local) - V::fill(o.half[k]), V::zero());
    acc = fmadd(out, out, acc);
  }
  return acc;
}

// per lane: signed distance from (x,y,z) to the box surface (negative inside)
template <class V>
SIMDPLAN_INLINE V sphere_box_sdist(V x, V y, V z, const geom::Box& o) {
  const V dx = x - V::fill(o.center[0]), dy = y - V::fill(o.center[1]), dz = z - V::fill(o.center[2]);
  V acc = V::zero(), inside = V::fill(-3.0e38f);
  for (int k = 0; k < 3; ++k) {
    const float* u = o.axes[k];
    const V local = fmadd(dx, V::fill(u[0]), fmadd(dy, V::fill(u[1]), dz * V::fill(u[2])));
    const V excess = vabs(local) - V::fill(o.half[k]);
    const V out = vmax(excess, V::zero());
    acc = fmadd(out, out, acc);
    inside = vmax(inside, excess);
  }
  return select(inside < V::zero(), inside, vsqrt(acc));
}

// per lane: true if sphere (x,y,z,r), r > 0, penetrates the box: dist(c, box) < r, i.e. its
// signed distance is below r (a centre inside has distance 0 < r). Radii are > 0 by contract.
template <class V>
SIMDPLAN_INLINE typename V::Mask sphere_box_hit(V x, V y, V z, V r, const geom::Box& o) {
  return sphere_box_sqdist(x, y, z, o) < r * r;
}

}  // namespace simdplan::SIMDPLAN_NS
