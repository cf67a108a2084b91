// simdplan/bvh/bvh_query.hh: sphere and point queries against a triangle mesh's BVH, and BVH-vs-BVH
// overlap; one source for every ISA.
//
// Trees and records are laid out as in bvh/bvh_view.hh; world frame, metres, float32, squared
// distances. Every traversal is depth-first with an explicit fixed stack (no allocation, no
// recursion): the depth of a median-split tree is ceil(log2 n) <= 30, and a path pushes at most one
// entry per level (two per level for pairs), so kBvhStack = 64 (128 for pairs) never overflows.
//
//   bvh_sphere_hit_single   one sphere (bvh_walk_single): at an inner node both children's boxes are
//                           tested and the nearer is visited first (its box distance is smaller), so
//                           a hit is usually found on the first path; leaves run the exact triangle test.
//   bvh_sphere_hit_lanes    W spheres in SIMD lanes (those of a lane mask; bvh_sphere_hit_packet: the
//                           first count) descend together (bvh_walk_lanes): a node is visited with the
//                           mask of lanes whose (inflated) sphere meets its box and that have not hit
//                           yet; leaves test the triangle against all those lanes at once. Ends when
//                           every lane has hit or the stack is empty.
//   bvh_nearest_single      one point (bvh_walk_single): nearest triangle strictly within a bound;
//                           a pending node is dropped when its box is no nearer than the best so far.
//   bvh_nearest_lanes       W points in SIMD lanes, each with its own bound: as bvh_nearest_single,
//                           the nearer child (for most lanes) first, a node entered with the lanes
//                           whose box is nearer than their best; leaves test all those lanes at once.
//   bvh_pairs               two trees: every pair of elements whose boxes overlap (closed boxes:
//                           touching boxes count, since this is a candidate filter in front of an
//                           exact test that decides strictness). At a pair of nodes the one with the
//                           larger surface area is split (a leaf never is), as in MuJoCo's mid-phase.
// Brute force (no tree) lives in bvh_isa.cc with the same leaf test, so both answer identically.
//
// Conservative box tests. A box test must never cut a triangle that the float32 triangle test
// (geom/sphere_triangle.hh) would call a hit or nearer than the best. That test's result is within
// c u (d + D) of the true distance d (u = 2^-24, c about 10, D the triangle's box diagonal), while a
// box's float32 distance is within 3u d of the true distance to the box, which never exceeds the
// triangle's. So a box is visited when its distance is below r (1 + 2^-16) + slack with
// slack = 2^-17 max D (TriMeshView::slack): 256 u r + 128 u D covers both errors with room to spare,
// and the tree's answers equal brute force's exactly (same leaf test, same float values), at the
// cost of visiting boxes up to a few ppm farther than needed.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>

#include "simdplan/bvh/bvh_view.hh"
#include "simdplan/config.hh"
#include "simdplan/geom/sphere_triangle.hh"

namespace simdplan::SIMDPLAN_NS {

constexpr float kBvhRadiusSlack = 1.0f + 1.0f / 65536.0f;
constexpr int kBvhStack = 64;
constexpr int kBvhPairStack = 128;

// per lane: squared distance from (x,y,z) to the node's box (0 inside)
template <class V>
SIMDPLAN_INLINE V bvh_box_sq(const BvhNode& b, V x, V y, V z) {
  const V zero = V::zero();
  const V gx = vmax(vmax(V::fill(b.lo[0]) - x, x - V::fill(b.hi[0])), zero);
  const V gy = vmax(vmax(V::fill(b.lo[1]) - y, y - V::fill(b.hi[1])), zero);
  const V gz = vmax(vmax(V::fill(b.lo[2]) - z, z - V::fill(b.hi[2])), zero);
  return fmadd(gx, gx, fmadd(gy, gy, gz * gz));
}

// |c - [lo, hi]| along one axis: fl(lo - c) below, fl(c - hi) above, else 0. NOTE: max(a, b, 0)
// written with fabs (exact: a + |a| is 2a or 0) so that it stays branch-free; GCC compiles the
// scalar max form into compares and branches that mispredict on every other node.
SIMDPLAN_INLINE float bvh_gap(float lo, float hi, float c) {
  const float a = lo - c, b = c - hi;
  return 0.5f * ((a + std::fabs(a)) + (b + std::fabs(b)));
}

// squared distance from (x,y,z) to the node's box, one point
SIMDPLAN_INLINE float bvh_box_sq1(const BvhNode& b, float x, float y, float z) {
  const float gx = bvh_gap(b.lo[0], b.hi[0], x), gy = bvh_gap(b.lo[1], b.hi[1], y), gz = bvh_gap(b.lo[2], b.hi[2], z);
  return gx * gx + gy * gy + gz * gz;
}

// the squared radius a box must be nearer than to be visited, for a sphere of radius r (preamble)
SIMDPLAN_INLINE float bvh_visit_sq(float r, float slack) {
  const float v = r * kBvhRadiusSlack + slack;
  return v * v;
}

// true if the point broadcast in (x,y,z) is strictly nearer than r2 (squared) to triangle `rec`.
// NOTE: one point in every lane of V, not a scalar float: the leaf test is then the very
// computation the packet and brute-force kernels run per lane (same operations, same fused
// multiply-adds), so every traversal answers bit for bit as brute force does. Scalar floats would
// be contracted into FMAs at the compiler's discretion in the AVX builds.
template <class V>
SIMDPLAN_INLINE bool bvh_triangle_hit(const float* rec, V x, V y, V z, V r2) {
  V f[kTriFields];
  triangle_broadcast(rec, f);
  return (point_triangle_sqdist<V, false>(x, y, z, f, nullptr, nullptr, nullptr) < r2).bits() & 1u;
}

// Depth-first walk of one point (x, y, z), nearer child first (the child whose box is nearer is
// entered first, the other pushed with its box distance). A node is entered while its squared box
// distance is below `lim`, read by reference so that the leaf step may lower it (nearest queries);
// a popped node is tested again. leaf(slot) returns true to stop the walk; returns whether one did.
template <class Leaf>
SIMDPLAN_INLINE bool bvh_walk_single(const BvhNode* N, float x, float y, float z, const float& lim, Leaf leaf) {
  struct Entry {
    int32_t node;
    float d2;
  };
  Entry stack[kBvhStack];
  int sp = 0;
  int32_t i = 0;
  if (!(bvh_box_sq1(N[0], x, y, z) < lim)) return false;
  for (;;) {
    const BvhNode& nd = N[i];
    if (nd.left < 0) {
      if (leaf(nd.right)) return true;
    } else {
      int32_t a = nd.left, b = nd.right;
      float da = bvh_box_sq1(N[a], x, y, z), db = bvh_box_sq1(N[b], x, y, z);
      if (db < da) {
        const int32_t t = a;
        a = b, b = t;
        const float u = da;
        da = db, db = u;
      }
      if (da < lim) {
        if (db < lim) stack[sp++] = {b, db};
        i = a;
        continue;
      }
    }
    for (;;) {
      if (sp == 0) return false;
      const Entry e = stack[--sp];
      if (e.d2 < lim) {
        i = e.node;
        break;
      }
    }
  }
}

// true if sphere (x,y,z,r) penetrates some triangle of the mesh (dist < r, strict); r >= 0
template <class V>
inline bool bvh_sphere_hit_single(const TriMeshView& m, float x, float y, float z, float r) {
  if (m.bvh.nodes == 0) return false;
  const float rr = bvh_visit_sq(r, m.slack);
  const V vx = V::fill(x), vy = V::fill(y), vz = V::fill(z), vr2 = V::fill(r * r);
  return bvh_walk_single(m.bvh.node, x, y, z, rr, [&](int32_t slot) {
    return bvh_triangle_hit(m.tri + size_t(slot) * kTriStride, vx, vy, vz, vr2);
  });
}

// Depth-first walk of W points (SIMD lanes) through the tree. A node is entered with the lanes of
// its parent that near(node) keeps (a bit mask); at a leaf, leaf(slot, lanes) returns the lanes that
// are finished, which never enter another node. The walk ends when no lane is left anywhere, or
// every lane of `lanes` is finished. (bvh_nearest_lanes walks on its own: nearer child first.)
template <class Near, class Leaf>
SIMDPLAN_INLINE void bvh_walk_lanes(const BvhNode* N, uint32_t lanes, Near near, Leaf leaf) {
  struct Entry {
    int32_t node;
    uint32_t mask;
  };
  Entry stack[kBvhStack];
  int sp = 0;
  uint32_t done = 0;
  uint32_t mask = near(N[0]) & lanes;
  int32_t i = 0;
  while (mask) {
    const BvhNode& nd = N[i];
    if (nd.left < 0) {
      done |= leaf(nd.right, mask);
      if ((done & lanes) == lanes) return;
    } else {
      const int32_t a = nd.left, b = nd.right;
      const uint32_t ma = near(N[a]) & mask, mb = near(N[b]) & mask;
      if (ma) {
        if (mb) stack[sp++] = {b, mb};
        i = a, mask = ma;
        continue;
      }
      if (mb) {
        i = b, mask = mb;
        continue;
      }
    }
    // the deepest pending node that still has lanes to walk
    mask = 0;
    while (sp > 0 && !mask) {
      --sp;
      i = stack[sp].node;
      mask = stack[sp].mask & ~done;
    }
  }
}

// The lanes in `valid` of (x,y,z,r) are spheres (r >= 0); returns the bit mask of those that
// penetrate some triangle of the mesh. Other lanes are ignored (any values).
template <class V>
inline uint32_t bvh_sphere_hit_lanes(const TriMeshView& m, V x, V y, V z, V r, uint32_t valid) {
  if (m.bvh.nodes == 0 || valid == 0) return 0;
  const V vs = r * V::fill(kBvhRadiusSlack) + V::fill(m.slack);
  const V rr = vs * vs, r2 = r * r;
  uint32_t hit = 0;
  bvh_walk_lanes(
      m.bvh.node, valid, [&](const BvhNode& b) { return (bvh_box_sq(b, x, y, z) < rr).bits(); },
      [&](int32_t slot, uint32_t lanes) {
        V f[kTriFields];
        triangle_broadcast(m.tri + size_t(slot) * kTriStride, f);
        const uint32_t h = (point_triangle_sqdist<V, false>(x, y, z, f, nullptr, nullptr, nullptr) < r2).bits() & lanes;
        hit |= h;
        return h;
      });
  return hit;
}

// Lanes [0, count) of (x,y,z,r) are spheres (count <= V::W, r >= 0); returns the bit mask of those
// that penetrate some triangle of the mesh.
template <class V>
inline uint32_t bvh_sphere_hit_packet(const TriMeshView& m, V x, V y, V z, V r, int count) {
  if (count <= 0) return 0;
  return bvh_sphere_hit_lanes(m, x, y, z, r, count >= 32 ? ~0u : (1u << count) - 1u);
}

// Nearest triangle to (x,y,z) strictly nearer than bound_sq (squared, >= 0, may be +inf): returns
// min(bound_sq, least squared distance) and, when below bound_sq, the slot of a triangle realising
// it (*slot, else -1) and its closest point q[0..2] (else untouched). The leaf test runs in V with
// the point in every lane (see bvh_triangle_hit).
template <class V>
inline float bvh_nearest_single(const TriMeshView& m, float x, float y, float z, float bound_sq, int32_t* slot,
                                float* q) {
  *slot = -1;
  if (m.bvh.nodes == 0) return bound_sq;
  float best = bound_sq;
  const float inf = std::numeric_limits<float>::infinity();
  // visit a box iff its squared distance is below lim (the best, inflated as in the preamble)
  auto limit = [&](float b2) { return b2 == inf ? inf : bvh_visit_sq(std::sqrt(b2), m.slack); };
  float lim = limit(best);
  const V vx = V::fill(x), vy = V::fill(y), vz = V::fill(z);
  bvh_walk_single(m.bvh.node, x, y, z, lim, [&](int32_t s) {
    V f[kTriFields], qx, qy, qz;
    triangle_broadcast(m.tri + size_t(s) * kTriStride, f);
    const V d2 = point_triangle_sqdist<V, true>(vx, vy, vz, f, &qx, &qy, &qz);
    if ((d2 < V::fill(best)).bits() & 1u) {
      alignas(64) float t[4][V::W];
      d2.store(t[0]), qx.store(t[1]), qy.store(t[2]), qz.store(t[3]);
      best = t[0][0], *slot = s, q[0] = t[1][0], q[1] = t[2][0], q[2] = t[3][0];
      lim = limit(best);
    }
    return false;
  });
  return best;
}

// Calls visit(slot) for every leaf whose box overlaps [lo, hi] (closed: touching counts), depth
// first, left before right; stops and returns true as soon as visit returns true.
template <class Visit>
SIMDPLAN_INLINE bool bvh_box_visit(const BvhView& t, const float lo[3], const float hi[3], Visit visit) {
  const BvhNode* N = t.node;
  if (t.nodes == 0) return false;
  auto meets = [&](const BvhNode& b) {
    return b.lo[0] <= hi[0] && lo[0] <= b.hi[0] && b.lo[1] <= hi[1] && lo[1] <= b.hi[1] && b.lo[2] <= hi[2] &&
           lo[2] <= b.hi[2];
  };
  if (!meets(N[0])) return false;
  int32_t stack[kBvhStack];
  int sp = 0;
  int32_t i = 0;
  for (;;) {
    const BvhNode& nd = N[i];
    if (nd.left < 0) {
      if (visit(nd.right)) return true;
    } else {
      const bool a = meets(N[nd.left]), b = meets(N[nd.right]);
      if (a) {
        if (b) stack[sp++] = nd.right;
        i = nd.left;
        continue;
      }
      if (b) {
        i = nd.right;
        continue;
      }
    }
    if (sp == 0) return false;
    i = stack[--sp];
  }
}

// Per lane of `lanes`: min(best2, squared distance from (x,y,z) to the nearest triangle); the other
// lanes keep best2. W points descend together: a node is entered with the lanes whose box is nearer
// than their best so far (inflated as in the preamble), the child nearer for most of the lanes that
// need both first, and a leaf tests its triangle against all of them in one vector computation; a
// pending node is tested again when popped. best2 may be +inf. For many nearby points at once (a
// robot sphere in W configurations) this replaces W separate bvh_nearest_single walks. The result
// does not depend on the order of the walk (a minimum over the triangles within the bound).
// PERF: the nearer child first rather than always the left one: certified plans among meshes 4-9%
// faster, the same answers (the note of group_tree_min in collision/distance.hh).
template <class V>
inline V bvh_nearest_lanes(const TriMeshView& m, V x, V y, V z, V best2, uint32_t lanes) {
  if (m.bvh.nodes == 0 || lanes == 0) return best2;
  const V slack = V::fill(kBvhRadiusSlack), add = V::fill(m.slack);
  auto limit = [&](V b2) {  // +inf stays +inf
    const V s = fmadd(vsqrt(b2), slack, add);
    return s * s;
  };
  V lim = limit(best2);
  const BvhNode* N = m.bvh.node;
  struct Entry {
    int32_t node;
    uint32_t mask;
  };
  Entry stack[kBvhStack];
  int sp = 0;
  uint32_t mask = (bvh_box_sq(N[0], x, y, z) < lim).bits() & lanes;
  int32_t i = 0;
  while (mask) {
    const BvhNode& nd = N[i];
    if (nd.left < 0) {
      V f[kTriFields];
      triangle_broadcast(m.tri + size_t(nd.right) * kTriStride, f);
      const V d2 = point_triangle_sqdist<V, false>(x, y, z, f, nullptr, nullptr, nullptr);
      const auto better = (d2 < best2) & V::Mask::from_bits(mask);
      if (better.any()) {
        best2 = select(better, d2, best2);
        lim = limit(best2);
      }
    } else {
      const int32_t a = nd.left, b = nd.right;
      const V da = bvh_box_sq(N[a], x, y, z), db = bvh_box_sq(N[b], x, y, z);
      const uint32_t ma = (da < lim).bits() & mask, mb = (db < lim).bits() & mask;
      if (ma | mb) {
        const uint32_t both = ma & mb;
        const bool a_first = !mb || (ma && 2 * __builtin_popcount((da <= db).bits() & both) >= __builtin_popcount(both));
        if (ma && mb) stack[sp++] = a_first ? Entry{b, mb} : Entry{a, ma};
        i = a_first ? a : b, mask = a_first ? ma : mb;
        continue;
      }
    }
    // the deepest pending node that still has lanes nearer than their best
    mask = 0;
    while (sp > 0 && !mask) {
      --sp;
      i = stack[sp].node;
      mask = stack[sp].mask & (bvh_box_sq(N[i], x, y, z) < lim).bits();
    }
  }
  return best2;
}

// closed-box overlap (touching counts)
SIMDPLAN_INLINE bool bvh_overlap(const BvhNode& a, const BvhNode& b) {
  return a.lo[0] <= b.hi[0] && b.lo[0] <= a.hi[0] && a.lo[1] <= b.hi[1] && b.lo[1] <= a.hi[1] &&
         a.lo[2] <= b.hi[2] && b.lo[2] <= a.hi[2];
}

// half the surface area of a box (the comparison is all that matters)
SIMDPLAN_INLINE float bvh_half_area(const BvhNode& b) {
  const float dx = b.hi[0] - b.lo[0], dy = b.hi[1] - b.lo[1], dz = b.hi[2] - b.lo[2];
  return dx * dy + dy * dz + dz * dx;
}

// Calls sink(element of a, element of b) for every pair whose boxes overlap (closed), each pair once.
template <class Sink>
inline void bvh_pairs(const BvhView& a, const BvhView& b, Sink&& sink) {
  if (a.nodes == 0 || b.nodes == 0) return;
  const BvhNode* A = a.node;
  const BvhNode* B = b.node;
  if (!bvh_overlap(A[0], B[0])) return;
  struct Entry {
    int32_t i, j;
  };
  Entry stack[kBvhPairStack];
  int sp = 0;
  stack[sp++] = {0, 0};
  while (sp > 0) {
    const Entry e = stack[--sp];
    const BvhNode& na = A[e.i];
    const BvhNode& nb = B[e.j];
    const bool la = na.left < 0, lb = nb.left < 0;
    if (la && lb) {
      sink(a.order[na.right], b.order[nb.right]);
      continue;
    }
    if (lb || (!la && bvh_half_area(na) >= bvh_half_area(nb))) {
      // right pushed first so the left subtree is walked first (pairs come out in slot order of a)
      if (bvh_overlap(A[na.right], nb)) stack[sp++] = {na.right, e.j};
      if (bvh_overlap(A[na.left], nb)) stack[sp++] = {na.left, e.j};
    } else {
      if (bvh_overlap(na, B[nb.right])) stack[sp++] = {e.i, nb.right};
      if (bvh_overlap(na, B[nb.left])) stack[sp++] = {e.i, nb.left};
    }
  }
}

}  // namespace simdplan::SIMDPLAN_NS
