// simdplan/geom/sphere_plane.hh: sphere against a half-space.
//
// Plane record: geom::Plane (unit normal n, offset d). The obstacle is the half-space
// {p : n . p <= d}; the normal points into free space. Signed distance of a centre: n . c - d.
#pragma once
#include "simdplan/config.hh"
#include "simdplan/geom/records.hh"

namespace simdplan::SIMDPLAN_NS {

// per lane: signed distance from (x,y,z) to the plane (negative inside the obstacle)
template <class V>
SIMDPLAN_INLINE V sphere_plane_sdist(V x, V y, V z, const geom::Plane& o) {
  return fmadd(x, V::fill(o.normal[0]), fmadd(y, V::fill(o.normal[1]), fmadd(z, V::fill(o.normal[2]), V::fill(-o.offset))));
}

// per lane: true if sphere (x,y,z,r) penetrates the half-space: n . c - d < r
template <class V>
SIMDPLAN_INLINE typename V::Mask sphere_plane_hit(V x, V y, V z, V r, const geom::Plane& o) {
  return sphere_plane_sdist(x, y, z, o) < r;
}

}  // namespace simdplan::SIMDPLAN_NS
