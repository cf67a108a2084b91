// simdplan/collision/obstacles.hh: broad phase over all obstacles, and per-kind dispatch.
//
// for_each_candidate tests a query box against the obstacle AABBs W at a time (SoA, see
// environment_view.hh) and visits only the overlapping obstacles, in index order. obstacle_hit
// runs the exact sphere test of one obstacle of any kind. Both are templates over the vector type,
// so the batch kernel (configurations in lanes) and the single kernel (spheres in lanes) share them.
// shape_hit_bits is the exact test of the obstacles with a structure of their own (point clouds,
// meshes, convex hulls); their flat record is only their AABB, good for culling.
#pragma once
#include <cmath>
#include <type_traits>

#include "simdplan/bvh/bvh_query.hh"
#include "simdplan/capt/query.hh"
#include "simdplan/collision/environment_view.hh"
#include "simdplan/collision/obstacle_kinds.hh"
#include "simdplan/config.hh"

namespace simdplan::SIMDPLAN_NS {

// bit mask of lanes [0, count), count >= 1 (integer domain: cheaper than building a mask vector)
template <class V>
SIMDPLAN_INLINE uint32_t first_lanes(int64_t count) {
  return count >= V::W ? ((V::W >= 32) ? ~0u : ((1u << V::W) - 1u)) : ((1u << count) - 1u);
}

// Whether vectors of V should use the obstacle tree at all: the scan tests W boxes per instruction,
// so the tree serves from kObstacleTreePerLane x W obstacles on.
template <class V>
SIMDPLAN_INLINE bool tree_serves(const EnvironmentView& env) {
  return env.obstacle_tree.nodes > 0 && env.n_obstacles >= kObstacleTreePerLane * V::W;
}

// Whether the obstacle tree (tree_serves) beats the scan for query box [lo, hi]: only when the query
// covers a small part of the obstacles' extent (then most subtrees are skipped). PERF: random
// configurations in the lanes make boxes spanning the workspace, where the tree alone ran 1.8x slower
// than the scan (1000 boxes).
SIMDPLAN_INLINE bool tree_pays(const EnvironmentView& env, const float lo[3], const float hi[3]) {
  const BvhNode& root = env.obstacle_tree.node[0];
  float frac = 1.0f;
  for (int k = 0; k < 3; ++k) {
    const float ext = root.hi[k] - root.lo[k];
    const float q = std::fmin(hi[k], root.hi[k]) - std::fmax(lo[k], root.lo[k]);
    frac *= ext > 0 ? std::fmax(q, 0.0f) / ext : 1.0f;
  }
  return frac < 0.125f;
}

// Calls fn(obstacle index) for every obstacle whose AABB overlaps [lo, hi] (touching counts as
// overlap, which is conservative); stops and returns true as soon as fn returns true. Few obstacles:
// a SIMD scan of every AABB, in index order; many: the obstacle tree, unbounded ones first.
template <class V, class Fn>
SIMDPLAN_INLINE bool for_each_candidate(const EnvironmentView& env, const float lo[3], const float hi[3], Fn fn) {
  if (tree_serves<V>(env) && tree_pays(env, lo, hi)) {
    for (int32_t u = 0; u < env.n_unbounded; ++u)
      if (fn(env.unbounded[u])) return true;
    return bvh_box_visit(env.obstacle_tree, lo, hi, [&](int32_t slot) { return fn(env.tree_obstacle[slot]); });
  }
  const int64_t n = env.n_obstacles, stride = n + kAabbPad;
  const float* a = env.aabb_soa;
  const V lx = V::fill(lo[0]), ly = V::fill(lo[1]), lz = V::fill(lo[2]);
  const V hx = V::fill(hi[0]), hy = V::fill(hi[1]), hz = V::fill(hi[2]);
  for (int64_t i = 0; i < n; i += V::W) {
    const auto apart = (hx < V::load(a + i)) | (hy < V::load(a + stride + i)) | (hz < V::load(a + 2 * stride + i)) |
                       (lx > V::load(a + 3 * stride + i)) | (ly > V::load(a + 4 * stride + i)) |
                       (lz > V::load(a + 5 * stride + i));
    uint32_t bits = ~apart.bits() & first_lanes<V>(n - i);
    while (bits) {
      const int k = __builtin_ctz(bits);
      bits &= bits - 1;
      if (fn(static_cast<int32_t>(i + k))) return true;
    }
  }
  return false;
}

// The record of obstacle idx (its AABB as a box for clouds, meshes and hulls).
SIMDPLAN_INLINE const float* obstacle_data(const EnvironmentView& env, int32_t idx) {
  const int32_t kind = env.obstacle_kind[idx];
  return env.records[kind] + int64_t(env.obstacle_record[idx]) * kObstacleRecordFloats[kind];
}

// Kinds with a structure of their own (shape_hit_bits), whose record is only their AABB.
SIMDPLAN_INLINE bool is_shape_kind(int32_t kind) { return kind >= kObsCloud; }

// The kind whose exact test obstacle_hit runs on obstacle_data: a cloud's, mesh's or hull's
// record is its AABB box, good for culling only.
SIMDPLAN_INLINE int32_t record_kind(int32_t kind) { return is_shape_kind(kind) ? int32_t(kObsBox) : kind; }

// Bits of `lanes` whose sphere (x,y,z,r) penetrates a point of cloud t (|c - p| < r + point_radius).
// Radii must lie in [t.r_min, t.r_max]: the entry points check the robot's radii first. The query
// itself is capt_hit_bits (capt/query.hh), which takes the radii with the point radius added.
template <class V>
SIMDPLAN_INLINE uint32_t cloud_hit_bits(const CaptView& t, V x, V y, V z, V r, uint32_t lanes) {
  return capt_hit_bits(t, x, y, z, r + V::fill(t.point_radius), lanes);
}

// Signed distance of (x, y, z) (world) from hull i, -inf..inf, by GJK in double (the scalar build's
// table: the same answer under every ISA). Out of line: a rare, costly path.
SIMDPLAN_NOINLINE inline double hull_sdist(const EnvironmentView& env, int32_t i, float x, float y, float z,
                                           double* witness = nullptr) {
  const double c[3] = {x, y, z}, zero = 0.0;
  double clearance, w[3];
  int32_t status;
  isa_table<GjkKernels, Isa::kScalar>()->sphere_distance(&env.hulls[i], &env.hull_poses[i], kSupportAuto, c, &zero, 1, &clearance, w,
                                        &status);
  if (witness) witness[0] = w[0], witness[1] = w[1], witness[2] = w[2];
  return clearance;
}

// per lane: max over hull i's face planes of n . c - h, and the rounding margin of that float32
// value (a lane whose value is >= r + margin is outside one plane by r: free; < -margin: inside)
template <class V>
SIMDPLAN_INLINE V hull_plane_max(const EnvironmentView& env, int32_t i, V x, V y, V z, V& margin) {
  const float* p = env.hull_planes + int64_t(env.hull_plane_begin[i]) * 4;
  const int32_t n = env.hull_plane_begin[i + 1] - env.hull_plane_begin[i];
  V s = V::fill(-HUGE_VALF);
  for (int32_t f = 0; f < n; ++f, p += 4)
    s = vmax(s, fmadd(V::fill(p[0]), x, fmadd(V::fill(p[1]), y, fmadd(V::fill(p[2]), z, V::fill(-p[3])))));
  // NOTE: a few ulps of |n| |c| + |h| in float32 (and the planes' own rounding), with 10x room
  margin = (vabs(x) + vabs(y) + vabs(z) + V::fill(env.hull_plane_abs[i] + 1.0f)) * V::fill(1e-6f);
  return s;
}

// Hulls with more boundary triangles than this skip the plane test (O(triangles) per vector) for a
// support-plane test per lane (hill climbing, about log-many steps).
// PERF: an icosphere hull of 5,120 triangles cost 9.3 us per random panda configuration through
// the planes (AVX-512; 52x the analytic sphere, benchmarks/bench_env_shapes.py).
constexpr int32_t kHullPlaneMax = 128;

// How far (x, y, z) lies beyond hull i's supporting plane facing it from the hull's centroid: a lower
// bound of its distance from the hull (minus a rounding margin), or -inf at the centroid.
SIMDPLAN_NOINLINE inline double hull_support_gap(const EnvironmentView& env, int32_t i, float x, float y, float z) {
  const HullView& h = env.hulls[i];
  const GjkPose& p = env.hull_poses[i];
  const double d[3] = {x - p.t[0], y - p.t[1], z - p.t[2]};
  double lc[3], u[3];
  for (int k = 0; k < 3; ++k) lc[k] = p.r[k] * d[0] + p.r[3 + k] * d[1] + p.r[6 + k] * d[2];  // R^T d
  for (int k = 0; k < 3; ++k) u[k] = lc[k] - h.centroid[k];
  const double norm = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  if (!(norm > 1e-9 * (1.0 + h.scale))) return -HUGE_VAL;
  const float uf[3] = {float(u[0]), float(u[1]), float(u[2])};
  int64_t idx;
  float val;
  isa_table<GjkKernels, Isa::kScalar>()->support_plain(&h, uf, 1, &idx, &val);
  // the supporting plane {v : uf . v = max}: exact for the vertex found, in double
  const double ud[3] = {uf[0], uf[1], uf[2]};
  const double un = std::sqrt(ud[0] * ud[0] + ud[1] * ud[1] + ud[2] * ud[2]);
  const double top = ud[0] * h.x[idx] + ud[1] * h.y[idx] + ud[2] * h.z[idx];
  const double gap = (ud[0] * lc[0] + ud[1] * lc[1] + ud[2] * lc[2] - top) / un;
  // NOTE: the climb maximises float32 dot products; a true maximiser may beat it by a few ulps
  return gap - 1e-6 * (1.0 + h.scale + norm);
}

// Bits of `lanes` whose sphere (x,y,z,r) penetrates hull i (signed distance < r). The face planes
// (or, on big hulls, each lane's support plane) decide every lane whose centre is clearly outside
// by r, or clearly inside; GJK the rest.
template <class V>
SIMDPLAN_INLINE uint32_t hull_hit_bits(const EnvironmentView& env, int32_t i, V x, V y, V z, V r, uint32_t lanes) {
  if (env.hull_plane_begin[i + 1] - env.hull_plane_begin[i] > kHullPlaneMax) {
    alignas(64) float bx[V::W], by[V::W], bz[V::W], br[V::W];
    x.store(bx), y.store(by), z.store(bz), r.store(br);
    uint32_t hit = 0;
    for (uint32_t todo = lanes; todo; todo &= todo - 1) {
      const int l = __builtin_ctz(todo);
      if (hull_support_gap(env, i, bx[l], by[l], bz[l]) >= double(br[l])) continue;
      if (hull_sdist(env, i, bx[l], by[l], bz[l]) < double(br[l])) hit |= 1u << l;
    }
    return hit;
  }
  V margin;
  const V s = hull_plane_max(env, i, x, y, z, margin);
  const uint32_t inside = (s < V::zero() - margin).bits() & lanes;
  uint32_t unsure = ~(s >= r + margin).bits() & lanes & ~inside;
  if (!unsure) return inside;
  alignas(64) float bx[V::W], by[V::W], bz[V::W], br[V::W];
  x.store(bx), y.store(by), z.store(bz), r.store(br);
  uint32_t hit = inside;
  while (unsure) {
    const int l = __builtin_ctz(unsure);
    unsure &= unsure - 1;
    if (hull_sdist(env, i, bx[l], by[l], bz[l]) < double(br[l])) hit |= 1u << l;
  }
  return hit;
}

// Whether V is two native vectors (V::Half; vec/avx2x2.hh).
template <class V, class = void>
struct HasHalves : std::false_type {};
template <class V>
struct HasHalves<V, std::void_t<typename V::Half>> : std::true_type {};

// Bits of `lanes` whose sphere (x,y,z,r) penetrates obstacle idx of a shape kind (is_shape_kind).
// Cloud radii must lie in the cloud's [r_min, r_max] (the entry points check the robot's radii).
template <class V>
SIMDPLAN_INLINE uint32_t shape_hit_bits(const EnvironmentView& env, int32_t idx, V x, V y, V z, V r, uint32_t lanes) {
  if constexpr (HasHalves<V>::value) {
    // PERF: the shape queries' vector paths (a cloud's grid gather, its descent) exist at native
    // widths; a two-half vector asks them half by half. Run whole, AVX2 simplification among point
    // clouds took 45-50% longer (the grid fell back to one lane at a time).
    using H = typename V::Half;
    constexpr uint32_t kHalf = (1u << H::W) - 1u;
    uint32_t out = 0;
    if (lanes & kHalf) out |= shape_hit_bits<H>(env, idx, x.lo, y.lo, z.lo, r.lo, lanes & kHalf);
    if (lanes >> H::W) out |= shape_hit_bits<H>(env, idx, x.hi, y.hi, z.hi, r.hi, lanes >> H::W) << H::W;
    return out;
  }
  const int32_t rec = env.obstacle_record[idx];
  switch (env.obstacle_kind[idx]) {
    case kObsCloud: return cloud_hit_bits(env.clouds[rec], x, y, z, r, lanes);
    case kObsMesh: return bvh_sphere_hit_lanes(env.meshes[rec], x, y, z, r, lanes);
    default: return hull_hit_bits(env, rec, x, y, z, r, lanes);  // kObsConvex
  }
}

// per lane: true if sphere (x,y,z,r) penetrates the obstacle of record kind `kind` with record o
template <class V>
SIMDPLAN_INLINE typename V::Mask obstacle_hit(int32_t kind, const float* o, V x, V y, V z, V r) {
  return with_record_kind(kind, o, [&](auto row, const auto& rec) SIMDPLAN_LAMBDA_INLINE {
    return decltype(row)::hit(rec, x, y, z, r);
  });
}

// per lane: signed distance from (x,y,z) to the surface of the obstacle of record kind `kind`
// (negative inside); a sphere of radius r penetrates it by r - this
template <class V>
SIMDPLAN_INLINE V obstacle_sdist(int32_t kind, const float* o, V x, V y, V z) {
  return with_record_kind(kind, o, [&](auto row, const auto& rec) SIMDPLAN_LAMBDA_INLINE {
    return decltype(row)::sdist(rec, x, y, z);
  });
}

}  // namespace simdplan::SIMDPLAN_NS
