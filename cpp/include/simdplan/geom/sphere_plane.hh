// simdplan/geom/sphere_plane.hh: sphere against a half-space.
//
// Plane layout, 4 floats: unit normal nx, ny, nz and offset d. The obstacle is the half-space
// {p : n . p <= d}; the normal points into free space. Signed distance of a centre: n . c - d.
#pragma once
#include "simdplan/config.hh"

namespace simdplan::SIMDPLAN_NS {

// per lane: signed distance from (x,y,z) to the plane (negative inside the obstacle)
template <class V>
SIMDPLAN_INLINE V sphere_plane_sdist(V x, V y, V z, const float* o) {
  return fmadd(x, V::fill(o[0]), fmadd(y, V::fill(o[1]), fmadd(z, V::fill(o[2]), V::fill(-o[3]))));
}

// per lane: true if sphere (x,y,z,r) penetrates the half-space: n . c - d < r
template <class V>
SIMDPLAN_INLINE typename V::Mask sphere_plane_hit(V x, V y, V z, V r, const float* o) {
  return sphere_plane_sdist(x, y, z, o) < r;
}

}  // namespace simdplan::SIMDPLAN_NS
