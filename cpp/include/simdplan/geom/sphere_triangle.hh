// simdplan/geom/sphere_triangle.hh: sphere against a triangle (the surface, not a solid), per lane.
//
// Triangle record, kTriStride = 32 floats (bvh/bvh_view.hh), built once in double precision from
// the float32 vertices by bvh::make_triangle_record (src/bvh/bvh.cc), world frame, metres:
//    0..8   v0, v1, v2 (x y z each), the vertices exactly as given
//    9..11  n: unit normal of (v1 - v0) x (v2 - v0); 0 for a degenerate triangle
//   12..20  m0, m1, m2: m_k = n x (v_{k+1} - v_k), the in-plane normal of edge k pointing inwards
//   21..23  inv_k = 1 / |v_{k+1} - v_k|^2, 0 for an edge of zero length (or shorter than 1e-19 m,
//           whose inverse would overflow float32: such an edge is treated as its first vertex)
//   24      face: 0, or +inf when the triangle is degenerate (collinear or repeated vertices):
//           it then has no interior region and is the union of its edges
//   25..27  g = e_L / |e_L|^2 for the longest edge L (the "slab" direction)
//   28, 29  slab lo, hi: dot(v_L - v0, g) and lo + 1, the extent of edge L along g
//   30, 31  0 (pads the record to two cache lines)
//
// Distance (C. Ericson, "Real-Time Collision Detection", Morgan Kaufmann 2005, 5.1.5, partitions
// the point's position into the 7 Voronoi regions of the triangle; here the regions are not
// branched on, which SIMD lanes could not share): the closest point lies in the interior when the
// point projects inside the triangle (dot(p - v_k, m_k) >= 0 for k = 0, 1, 2), at distance
// |dot(p - v0, n)|; otherwise it lies on the boundary, whose distance is the least of the three
// segment distances (a vertex region is the clamped end of two segments). Every candidate is the
// distance to a subset of the triangle, so the minimum over {face if inside, three edges} is the
// exact distance, in every region and for degenerate triangles (face = +inf leaves the edges;
// three equal vertices leave the vertex).
// NOTE: the slab test. For a sliver (two edges nearly parallel), the edge tests cannot tell
// whether a point lies beyond the sharp end: moving along the sliver changes dot(p - v_k, m_k) by
// the sine of a tiny angle, below float32 rounding, so a point far beyond a vertex could pass as
// "inside" and get its plane distance. The interior's projection always lies within the extent of
// the longest edge (the two angles at its ends are acute), and that test is well conditioned, so
// "inside" also requires lo <= dot(p - v0, g) <= hi. What rounding can still misjudge is then a
// band of width a few u |p - v_k| along the edges, which moves the distance by no more than that.
// All differences are taken between the point and a vertex
// (never absolute coordinates), so the float32 result is within a few u (2^-24) of
// |p - v_k| + |e_k| in absolute terms; the BVH slack (bvh/bvh_query.hh) is sized from that.
//
// Collision rule as everywhere in simdplan: a sphere penetrates iff its centre is strictly closer
// than its radius, d^2 < r^2 in float32; touching is free. A mesh is its triangles' surface: a
// sphere wholly inside a closed mesh does not collide with it.
#pragma once
#include <limits>

#include "simdplan/config.hh"

namespace simdplan::SIMDPLAN_NS {

// record fields the distance reads (0..29)
constexpr int kTriFields = 30;

// loads one record into every lane
template <class V>
SIMDPLAN_INLINE void triangle_broadcast(const float* rec, V* f) {
  for (int k = 0; k < kTriFields; ++k) f[k] = V::fill(rec[k]);
}

// per lane: squared distance from (x,y,z) to the triangle with fields f[0..29] (a record per lane);
// with kClosest also the closest point of the triangle (qx, qy, qz)
template <class V, bool kClosest>
SIMDPLAN_INLINE V point_triangle_sqdist(V x, V y, V z, const V* f, V* qx, V* qy, V* qz) {
  const V zero = V::zero(), one = V::fill(1.0f);
  V best = V::fill(std::numeric_limits<float>::infinity());
  V rx = zero, ry = zero, rz = zero;  // p - closest, for kClosest
  V d0x = zero, d0y = zero, d0z = zero;
  typename V::Mask inside = V::Mask::none();
  for (int k = 0; k < 3; ++k) {
    const V* a = f + 3 * k;
    const V* b = f + 3 * ((k + 1) % 3);
    const V* m = f + 12 + 3 * k;
    const V dx = x - a[0], dy = y - a[1], dz = z - a[2];
    const V ex = b[0] - a[0], ey = b[1] - a[1], ez = b[2] - a[2];
    const V t = vmax(zero, vmin(one, fmadd(dx, ex, fmadd(dy, ey, dz * ez)) * f[21 + k]));
    const V ux = fmadd(-t, ex, dx), uy = fmadd(-t, ey, dy), uz = fmadd(-t, ez, dz);
    const V d2 = fmadd(ux, ux, fmadd(uy, uy, uz * uz));
    const auto in = fmadd(dx, m[0], fmadd(dy, m[1], dz * m[2])) >= zero;
    if constexpr (kClosest) {
      const auto closer = d2 < best;
      rx = select(closer, ux, rx), ry = select(closer, uy, ry), rz = select(closer, uz, rz);
    }
    best = vmin(best, d2);
    if (k == 0) {
      inside = in;
      d0x = dx, d0y = dy, d0z = dz;
    } else {
      inside = inside & in;
    }
  }
  const V sl = fmadd(d0x, f[25], fmadd(d0y, f[26], d0z * f[27]));
  inside = inside & (sl >= f[28]) & (sl <= f[29]);
  const V fd = fmadd(d0x, f[9], fmadd(d0y, f[10], d0z * f[11]));
  const V face = select(inside, fmadd(fd, fd, f[24]), V::fill(std::numeric_limits<float>::infinity()));
  if constexpr (kClosest) {
    const auto closer = face < best;
    rx = select(closer, fd * f[9], rx), ry = select(closer, fd * f[10], ry), rz = select(closer, fd * f[11], rz);
    *qx = x - rx, *qy = y - ry, *qz = z - rz;
  }
  return vmin(best, face);
}

// per lane: true if sphere (x,y,z,r) penetrates the triangle of record `rec`: dist < r (strict)
template <class V>
SIMDPLAN_INLINE typename V::Mask sphere_triangle_hit(V x, V y, V z, V r, const float* rec) {
  V f[kTriFields];
  triangle_broadcast(rec, f);
  return point_triangle_sqdist<V, false>(x, y, z, f, nullptr, nullptr, nullptr) < r * r;
}

}  // namespace simdplan::SIMDPLAN_NS
