// simdplan/geom/sphere_box.hh: sphere against an oriented box.
//
// Box layout, 16 floats: centre x, y, z; the box's local x, y and z axes as unit world vectors
// (3 x 3, the columns of its rotation); half extents hx, hy, hz; one pad float.
// The centre is taken into the box frame, clamped to the extents, and the squared distance to the
// clamped point is compared with r^2 (strict).
#pragma once
#include "simdplan/config.hh"

namespace simdplan::SIMDPLAN_NS {

// per lane: squared distance from (x,y,z) to the solid box (0 inside)
template <class V>
SIMDPLAN_INLINE V sphere_box_sqdist(V x, V y, V z, const float* o) {
  const V dx = x - V::fill(o[0]), dy = y - V::fill(o[1]), dz = z - V::fill(o[2]);
  V acc = V::zero();
  for (int k = 0; k < 3; ++k) {
    const float* u = o + 3 + 3 * k;
    const V local = fmadd(dx, V::fill(u[0]), fmadd(dy, V::fill(u[1]), dz * V::fill(u[2])));
    const V out = vmax(vabs(local) - V::fill(o[12 + k]), V::zero());
    acc = fmadd(out, out, acc);
  }
  return acc;
}

// per lane: signed distance from (x,y,z) to the box surface (negative inside)
template <class V>
SIMDPLAN_INLINE V sphere_box_sdist(V x, V y, V z, const float* o) {
  const V dx = x - V::fill(o[0]), dy = y - V::fill(o[1]), dz = z - V::fill(o[2]);
  V acc = V::zero(), inside = V::fill(-3.0e38f);
  for (int k = 0; k < 3; ++k) {
    const float* u = o + 3 + 3 * k;
    const V local = fmadd(dx, V::fill(u[0]), fmadd(dy, V::fill(u[1]), dz * V::fill(u[2])));
    const V excess = vabs(local) - V::fill(o[12 + k]);
    const V out = vmax(excess, V::zero());
    acc = fmadd(out, out, acc);
    inside = vmax(inside, excess);
  }
  return select(inside < V::zero(), inside, vsqrt(acc));
}

// per lane: true if sphere (x,y,z,r), r > 0, penetrates the box: dist(c, box) < r, i.e. its
// signed distance is below r (a centre inside has distance 0 < r). Radii are > 0 by contract.
template <class V>
SIMDPLAN_INLINE typename V::Mask sphere_box_hit(V x, V y, V z, V r, const float* o) {
  return sphere_box_sqdist(x, y, z, o) < r * r;
}

}  // namespace simdplan::SIMDPLAN_NS
