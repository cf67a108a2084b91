// bvh_isa.cc: instantiates the BVH and sphere-triangle queries for one ISA and exports its BvhKernels.
//
// Built once per ISA by CMake with the same flags and SIMDPLAN_NS as nearest_isa.cc (see
// simdplan/config.hh for why every inline function here lives in the per-ISA namespace). Every
// kernel runs the same per-lane triangle test (geom/sphere_triangle.hh), so brute force and the
// tree agree bit for bit within one ISA.
#include <cmath>
#include <cstring>
#include <limits>

#include "simdplan/bvh/bvh_kernels.hh"
#include "simdplan/bvh/bvh_query.hh"
#include "simdplan/vec/vec.hh"

namespace simdplan {
namespace SIMDPLAN_NS {
namespace {

constexpr int W = Vec::W;

// W spheres from row `base` (fewer at the tail; missing lanes are 0) into lanes
struct Lanes {
  Vec x, y, z, r;
  int count;
};

Lanes load_lanes(const float* c, const float* r, int64_t base, int64_t n) {
  alignas(64) float t[4][W] = {};
  const int count = int(n - base < W ? n - base : W);
  for (int k = 0; k < count; ++k) {
    const float* p = c + 3 * (base + k);
    t[0][k] = p[0], t[1][k] = p[1], t[2][k] = p[2];
    t[3][k] = r ? r[base + k] : 0.0f;
  }
  return {Vec::load(t[0]), Vec::load(t[1]), Vec::load(t[2]), Vec::load(t[3]), count};
}

void collides_single(const TriMeshView* m, const float* c, const float* r, int64_t n, bool* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = bvh_sphere_hit_single<Vec>(*m, c[3 * i], c[3 * i + 1], c[3 * i + 2], r[i]);
}

void collides_packet(const TriMeshView* m, const float* c, const float* r, int64_t n, bool* out) {
  for (int64_t base = 0; base < n; base += W) {
    const Lanes l = load_lanes(c, r, base, n);
    const uint32_t hit = bvh_sphere_hit_packet(*m, l.x, l.y, l.z, l.r, l.count);
    for (int k = 0; k < l.count; ++k) out[base + k] = (hit >> k) & 1u;
  }
}

void collides_brute(const TriMeshView* m, const float* c, const float* r, int64_t n, bool* out) {
  const int64_t nt = m->bvh.elements;
  for (int64_t base = 0; base < n; base += W) {
    const Lanes l = load_lanes(c, r, base, n);
    const uint32_t valid = l.count >= 32 ? ~0u : (1u << l.count) - 1u;
    const Vec r2 = l.r * l.r;
    uint32_t hit = 0;
    for (int64_t s = 0; s < nt && hit != valid; ++s) {
      Vec f[kTriFields];
      triangle_broadcast(m->tri + s * kTriStride, f);
      hit |= (point_triangle_sqdist<Vec, false>(l.x, l.y, l.z, f, nullptr, nullptr, nullptr) < r2).bits();
    }
    hit &= valid;
    for (int k = 0; k < l.count; ++k) out[base + k] = (hit >> k) & 1u;
  }
}

// The smallest float >= max_distance^2 (the product is exact in double). Any float distance
// fl(sqrt(d2)) < max_distance has d2 < max_distance^2 <= this bound, so the search with it misses
// no answer; the final float compare then decides strictness exactly.
float bound_sq_for(float max_distance) {
  const double m2 = double(max_distance) * double(max_distance);
  float b = float(m2);
  if (double(b) < m2) b = std::nextafter(b, std::numeric_limits<float>::infinity());
  return b;
}

void finish(const TriMeshView* m, float best, int32_t slot, const float* q, float max_distance, float* dist,
            int32_t* tri, float* closest) {
  const float d = std::sqrt(best);
  if (slot >= 0 && d < max_distance) {
    *dist = d, *tri = m->bvh.order[slot];
    closest[0] = q[0], closest[1] = q[1], closest[2] = q[2];
  } else {
    *dist = std::numeric_limits<float>::infinity(), *tri = -1;
    closest[0] = closest[1] = closest[2] = std::numeric_limits<float>::quiet_NaN();
  }
}

void distance(const TriMeshView* m, const float* c, int64_t n, float max_distance, float* dist, int32_t* tri,
              float* closest) {
  const float bound_sq = bound_sq_for(max_distance);
  for (int64_t i = 0; i < n; ++i) {
    int32_t slot = -1;
    float q[3] = {0.0f, 0.0f, 0.0f};
    const float best = bvh_nearest_single<Vec>(*m, c[3 * i], c[3 * i + 1], c[3 * i + 2], bound_sq, &slot, q);
    finish(m, best, slot, q, max_distance, dist + i, tri + i, closest + 3 * i);
  }
}

void distance_brute(const TriMeshView* m, const float* c, int64_t n, float max_distance, float* dist, int32_t* tri,
                    float* closest) {
  const int64_t nt = m->bvh.elements;
  const float bound_sq = bound_sq_for(max_distance);
  for (int64_t base = 0; base < n; base += W) {
    const Lanes l = load_lanes(c, nullptr, base, n);
    Vec best = Vec::fill(bound_sq), bx = Vec::zero(), by = Vec::zero(), bz = Vec::zero();
    int32_t slot[W];
    for (int k = 0; k < W; ++k) slot[k] = -1;
    for (int64_t s = 0; s < nt; ++s) {
      Vec f[kTriFields], qx, qy, qz;
      triangle_broadcast(m->tri + s * kTriStride, f);
      const Vec d2 = point_triangle_sqdist<Vec, true>(l.x, l.y, l.z, f, &qx, &qy, &qz);
      const auto closer = d2 < best;
      uint32_t bits = closer.bits();
      if (!bits) continue;
      best = select(closer, d2, best);
      bx = select(closer, qx, bx), by = select(closer, qy, by), bz = select(closer, qz, bz);
      for (; bits; bits &= bits - 1) slot[__builtin_ctz(bits)] = int32_t(s);
    }
    alignas(64) float t[4][W];
    best.store(t[0]), bx.store(t[1]), by.store(t[2]), bz.store(t[3]);
    for (int k = 0; k < l.count; ++k) {
      const float q[3] = {t[1][k], t[2][k], t[3][k]};
      finish(m, t[0][k], slot[k], q, max_distance, dist + base + k, tri + base + k, closest + 3 * (base + k));
    }
  }
}

int64_t pairs(const BvhView* a, const BvhView* b, int32_t* out, int64_t cap) {
  int64_t count = 0;
  bvh_pairs(*a, *b, [&](int32_t i, int32_t j) {
    if (count < cap) out[2 * count] = i, out[2 * count + 1] = j;
    ++count;
  });
  return count;
}

void point_triangle(const float* rec, const float* p, int64_t n, float* d2_out, float* closest) {
  for (int64_t base = 0; base < n; base += W) {
    const int count = int(n - base < W ? n - base : W);
    alignas(64) float t[kTriFields][W];
    for (int k = 0; k < W; ++k) {
      const float* r = rec + (base + (k < count ? k : count - 1)) * kTriStride;
      for (int j = 0; j < kTriFields; ++j) t[j][k] = r[j];
    }
    Vec f[kTriFields];
    for (int j = 0; j < kTriFields; ++j) f[j] = Vec::load(t[j]);
    const Lanes l = load_lanes(p, nullptr, base, n);
    Vec qx, qy, qz;
    const Vec d2 = point_triangle_sqdist<Vec, true>(l.x, l.y, l.z, f, &qx, &qy, &qz);
    alignas(64) float o[4][W];
    d2.store(o[0]), qx.store(o[1]), qy.store(o[2]), qz.store(o[3]);
    for (int k = 0; k < count; ++k) {
      d2_out[base + k] = o[0][k];
      for (int a = 0; a < 3; ++a) closest[3 * (base + k) + a] = o[1 + a][k];
    }
  }
}

// PERF: `collides` is the packet traversal on the SIMD builds and the single one on scalar.
// benchmarks/bench_bvh.py full run (Xeon @ 2.5 GHz, 2 vCPUs shared with other builds, ns per
// sphere, medians of 5; spheres near an icosphere, about half colliding), single / packet:
//                                     AVX-512          AVX2             scalar
//   1.3k triangles, grouped (16s)     613 / 189        665 / 297        606 / 888
//   1.3k triangles, random order      679 / 490        704 / 552        656 / 1080
//   20k triangles, grouped            898 / 470        712 / 572        658 / 833
//   20k triangles, random order       1008 / 873       873 / 885        891 / 1283
//   82k triangles, grouped            1374 / 673       1500 / 1160      1378 / 1328
// A box test for W spheres costs what one costs and robot spheres come in coherent groups, so
// packets win when grouped and tie when shuffled; the scalar build has no lanes to share (its
// "packet" is the single traversal without the nearer-child order).
const BvhKernels kTable = {kThisIsaName,
                           W,
                           W > 1 ? &collides_packet : &collides_single,
                           &collides_single,
                           &collides_packet,
                           &collides_brute,
                           &distance,
                           &distance_brute,
                           &pairs,
                           &point_triangle};

}  // namespace
}  // namespace SIMDPLAN_NS

template <>
const BvhKernels* isa_table<BvhKernels, kThisIsa>() {
  return &SIMDPLAN_NS::kTable;
}

}  // namespace simdplan
