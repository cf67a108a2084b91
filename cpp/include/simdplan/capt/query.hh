// simdplan/capt/query.hh: sphere against point cloud through a CAPT, one source for every ISA.
//
// Reference: C. W. Ramsey, Z. Kingston, W. Thomason, L. E. Kavraki, "Collision-Affording Point
// Trees: SIMD-Amenable Nearest Neighbors for Fast Collision Checking", RSS 2024, arXiv:2406.02807.
//
// A query descends the tree in `depth` branch-free steps (one comparison per level, no data-
// dependent branches), rejects by the distance to the leaf's AABB, and otherwise tests the
// leaf's afforded points W at a time. Layout of the tree: capt/view.hh. World frame, metres.
// Rule: sphere (c, r) collides iff some point p has |c - p| < r + point_radius (strict: touching
// is free). Exact only for r_min <= r <= r_max: the caller enforces that contract (the tree
// answers wrongly outside it, by design of the data structure).
//
// Exactness in float32: every stored point is a real cloud point, so testing points beyond a
// leaf's range (the last vector load may read the next leaf's points or the +inf pad) can only
// find real collisions. The AABB test is computed like the point test, and rounding is monotone,
// so its squared distance never exceeds a contained point's; it rejects only above a relative
// slack of 2^-18 anyway, so a compiler that fuses one multiply-add and not the other cannot flip
// a boundary case. The builder (capt/tree.hh) adds the matching margins to what it affords.
#pragma once
#include <cstdint>
#if defined(SIMDPLAN_ISA_AVX2) || defined(SIMDPLAN_ISA_AVX512)
#include <immintrin.h>  // permutes in capt_descend_top
#endif

#include "simdplan/capt/view.hh"
#include "simdplan/config.hh"


namespace simdplan::SIMDPLAN_NS {

// 1 + 2^-18: see the preamble
constexpr float kCaptBoxSlack = 1.0f + 1.0f / 262144.0f;

// the leaf whose cell holds (x, y, z): depth comparisons, right child iff coordinate >= split
SIMDPLAN_INLINE uint32_t capt_leaf(const CaptView& t, float x, float y, float z) {
  const float* s = t.splits;
  uint32_t i = 0;
  int32_t l = 0;
  // levels in groups of three so the axis is a constant in each step
  for (; l + 3 <= t.depth; l += 3) {
    i = 2 * i + 1 + uint32_t(x >= s[i]);
    i = 2 * i + 1 + uint32_t(y >= s[i]);
    i = 2 * i + 1 + uint32_t(z >= s[i]);
  }
  if (l < t.depth) i = 2 * i + 1 + uint32_t(x >= s[i]), ++l;
  if (l < t.depth) i = 2 * i + 1 + uint32_t(y >= s[i]);
  return i - ((1u << t.depth) - 1u);
}

// squared distance from per-axis offsets; the point and AABB tests share it (see preamble)
template <class V>
SIMDPLAN_INLINE V capt_sqdist(V dx, V dy, V dz) {
  return fmadd(dx, dx, fmadd(dy, dy, dz * dz));
}

// true if the squared distance from (x,y,z) to the leaf's AABB is below rr2 (with the slack)
SIMDPLAN_INLINE bool capt_box_near(const CaptLeaf& leaf, float x, float y, float z, float rr2) {
  auto gap = [](float lo, float hi, float c) {
    const float a = lo - c, b = c - hi;
    const float g = a > b ? a : b;
    return g > 0.0f ? g : 0.0f;
  };
  const float dx = gap(leaf.lo[0], leaf.hi[0], x);
  const float dy = gap(leaf.lo[1], leaf.hi[1], y);
  const float dz = gap(leaf.lo[2], leaf.hi[2], z);
  return dx * dx + (dy * dy + dz * dz) < rr2 * kCaptBoxSlack;
}

// true if a point of [begin, end) is strictly closer than sqrt(rr2): two vectors per exit check
// (reading past `end` only meets real points or the +inf pad)
template <class V>
SIMDPLAN_INLINE bool capt_scan(const CaptView& t, int32_t j, int32_t end, float x, float y, float z, float rr2) {
  const V cx = V::fill(x), cy = V::fill(y), cz = V::fill(z), r2 = V::fill(rr2);
  auto chunk = [&](int32_t i) {
    const V dx = V::load(t.px + i) - cx;
    const V dy = V::load(t.py + i) - cy;
    const V dz = V::load(t.pz + i) - cz;
    return capt_sqdist(dx, dy, dz) < r2;
  };
  for (; j + 2 * V::W < end; j += 2 * V::W)
    if ((chunk(j) | chunk(j + V::W)).any()) return true;
  return (chunk(j) | chunk(j + V::W)).any();
}

// true if some afforded point of `leaf` is strictly closer than sqrt(rr2) to (x, y, z)
// PERF: the AABB test and the early exits are branches on random data; on short lists they cost
// more in mispredictions than they save. Lists of up to two vectors are tested whole, without the
// AABB; longer ones are rejected by the AABB first and then tested two vectors per exit check
// (AVX2, random queries, best of 25 runs: 1k points 63 -> 43 ns; 10k points unchanged at 135 ns,
// where cache misses on the leaf and its points dominate).
template <class V>
SIMDPLAN_INLINE bool capt_leaf_hit(const CaptView& t, const CaptLeaf& leaf, float x, float y, float z, float rr2) {
  if (leaf.end - leaf.begin > 2 * V::W && !capt_box_near(leaf, x, y, z, rr2)) return false;
  return capt_scan<V>(t, leaf.begin, leaf.end, x, y, z, rr2);
}

// false if no sphere of radius rr - point_radius centred at (x, y, z) reaches a point: its cell
// in the grid serving rr is clear or outside the grid (capt/view.hh "grid"; the proof is at
// near_grid in src/capt/grid.cc)
SIMDPLAN_INLINE bool capt_grid_near(const CaptView& t, float x, float y, float z, float rr) {
  if (!t.grid_bits) return true;
  const CaptGrid& g = t.grid[rr <= t.grid_small_rr ? 1 : 0];
  const float a = (x - g.lo[0]) * g.inv;
  const float b = (y - g.lo[1]) * g.inv;
  const float c = (z - g.lo[2]) * g.inv;
  if (!(a >= 0.0f && b >= 0.0f && c >= 0.0f && a < float(g.n[0]) && b < float(g.n[1]) && c < float(g.n[2])))
    return false;  // NaN too: like the tree, which reports no point for a NaN centre
  const int64_t ix = int64_t(a), iy = int64_t(b), iz = int64_t(c);
  return (t.grid_bits[g.base + (ix * g.n[1] + iy) * g.words + (iz >> 6)] >> (iz & 63)) & 1u;
}

#if defined(SIMDPLAN_ISA_AVX2) || defined(SIMDPLAN_ISA_AVX512)
// capt_grid_near's bit for cell indices ix, iy, iz (int32 lanes of cells inside their grid), with
// the grid's n[1], 2 words and 2 base per lane, read from the 64-bit words as pairs of 32-bit
// words (little endian), gathered on the lanes `in`
#if defined(SIMDPLAN_ISA_AVX512)
SIMDPLAN_INLINE uint32_t capt_grid_gather(const CaptView& t, __m512i ix, __m512i iy, __m512i iz, __m512i ny,
                                          __m512i words2, __m512i base2, uint32_t in) {
  const __m512i line = _mm512_add_epi32(_mm512_mullo_epi32(ix, ny), iy);
  const __m512i idx = _mm512_add_epi32(_mm512_add_epi32(_mm512_mullo_epi32(line, words2), _mm512_srli_epi32(iz, 5)), base2);
  const __m512i w = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), __mmask16(in), idx,
                                                reinterpret_cast<const int*>(t.grid_bits), 4);
  const __m512i bit = _mm512_srlv_epi32(w, _mm512_and_si512(iz, _mm512_set1_epi32(31)));
  return _mm512_mask_test_epi32_mask(__mmask16(in), bit, _mm512_set1_epi32(1));
}
#endif
SIMDPLAN_INLINE uint32_t capt_grid_gather(const CaptView& t, __m256i ix, __m256i iy, __m256i iz, __m256i ny,
                                          __m256i words2, __m256i base2, uint32_t in) {
  const __m256i line = _mm256_add_epi32(_mm256_mullo_epi32(ix, ny), iy);
  const __m256i idx = _mm256_add_epi32(_mm256_add_epi32(_mm256_mullo_epi32(line, words2), _mm256_srli_epi32(iz, 5)), base2);
  const __m256i bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
  const __m256i mask = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(int(in)), bits), bits);
  const __m256i w =
      _mm256_mask_i32gather_epi32(_mm256_setzero_si256(), reinterpret_cast<const int*>(t.grid_bits), idx, mask, 4);
  const __m256i bit = _mm256_and_si256(_mm256_srlv_epi32(w, _mm256_and_si256(iz, _mm256_set1_epi32(31))),
                                       _mm256_set1_epi32(1));
  return uint32_t(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(bit, _mm256_set1_epi32(1))))) & in;
}
#endif

// the bits of `lanes` whose centre capt_grid_near cannot clear (xs.., rs: the lanes of x, y, z, rr)
// PERF: the small-radius grid clears the many small spheres of a robot that pass near the cloud
// without reaching it; the lanes pick their grid by blends, so it costs no second gather.
template <class V>
SIMDPLAN_INLINE uint32_t capt_grid_lanes(const CaptView& t, V x, V y, V z, V rr, const float* xs, const float* ys,
                                         const float* zs, const float* rs, uint32_t lanes) {
  if (!t.grid_bits) return lanes;
#if defined(SIMDPLAN_ISA_AVX2) || defined(SIMDPLAN_ISA_AVX512)
  if constexpr (V::W == 8 || V::W == 16) {
    // the cells of capt_grid_near, all lanes at once, each in the grid its radius reads
    const CaptGrid& g0 = t.grid[0];
    const CaptGrid& g1 = t.grid[1];
    const auto small = rr <= V::fill(t.grid_small_rr);
    auto pick = [&](float v0, float v1) { return select(small, V::fill(v1), V::fill(v0)); };
    const V inv = pick(g0.inv, g1.inv), zero = V::zero();
    const V a = (x - pick(g0.lo[0], g1.lo[0])) * inv, b = (y - pick(g0.lo[1], g1.lo[1])) * inv,
            c = (z - pick(g0.lo[2], g1.lo[2])) * inv;
    const V ny = pick(float(g0.n[1]), float(g1.n[1]));
    const auto inside = (a >= zero) & (b >= zero) & (c >= zero) & (a < pick(float(g0.n[0]), float(g1.n[0]))) &
                        (b < ny) & (c < pick(float(g0.n[2]), float(g1.n[2])));
    const uint32_t in = inside.bits() & lanes;
    if (!in) return 0;
    // cell counts and word offsets are below 2^24, so they pass through float exactly
    const V words2 = pick(float(2 * g0.words), float(2 * g1.words)), base2 = pick(float(2 * g0.base), float(2 * g1.base));
#if defined(SIMDPLAN_ISA_AVX512)
    if constexpr (V::W == 16)
      return capt_grid_gather(t, _mm512_cvttps_epi32(a.v), _mm512_cvttps_epi32(b.v), _mm512_cvttps_epi32(c.v),
                              _mm512_cvttps_epi32(ny.v), _mm512_cvttps_epi32(words2.v), _mm512_cvttps_epi32(base2.v), in);
#endif
    if constexpr (V::W == 8)
      return capt_grid_gather(t, _mm256_cvttps_epi32(a.v), _mm256_cvttps_epi32(b.v), _mm256_cvttps_epi32(c.v),
                              _mm256_cvttps_epi32(ny.v), _mm256_cvttps_epi32(words2.v), _mm256_cvttps_epi32(base2.v), in);
  }
#endif
  (void)x, (void)y, (void)z, (void)rr;
  uint32_t near = 0;
  for (uint32_t bl = lanes; bl; bl &= bl - 1) {
    const int k = __builtin_ctz(bl);
    near |= uint32_t(capt_grid_near(t, xs[k], ys[k], zs[k], rs[k])) << k;
  }
  return near;
}

// one sphere: true if sphere (x,y,z,r) penetrates a point (|c - p| < r + point_radius); r in [r_min, r_max]
template <class V>
SIMDPLAN_INLINE bool capt_hit_one(const CaptView& t, float x, float y, float z, float r) {
  const float rr = r + t.point_radius;
  if (!capt_grid_near(t, x, y, z, rr)) return false;
  return capt_leaf_hit<V>(t, t.leaves[capt_leaf(t, x, y, z)], x, y, z, rr * rr);
}

#if defined(SIMDPLAN_ISA_AVX512)
// Levels descended by permutes when the tree is that deep. PERF (harness below): 8 / 9 / 10 levels
// -> MotionBenchMaker cage 14.6-15.0 / 13.9-14.2 / 13.1-13.5 ns, 1k uniform 19.6 / 18.9 / 17.7 ns;
// an 11th level would take 32 permutes and 31 blends for what 16 scalar loads do.
constexpr int32_t kCaptPermuteLevels = 10;
// Levels [0, levels) of the descent for 16 lanes (8 <= levels <= min(depth, 10)), with the split
// values looked up by permutes from vectors instead of one scalar load per lane and level (the
// 2^l nodes of level l are 2^l / 16 vectors). Node indices and comparisons as in capt_leaf.
SIMDPLAN_INLINE __m512i capt_descend_top(const float* s, int levels, __m512 x, __m512 y, __m512 z) {
  const __m512i one = _mm512_set1_epi32(1);
  __m512i idx = _mm512_setzero_si512();
  auto go = [&](__m512 q, __m512 split) {
    const __mmask16 ge = _mm512_cmp_ps_mask(q, split, _CMP_GE_OQ);  // false for NaN, like x >= s
    idx = _mm512_add_epi32(_mm512_add_epi32(idx, idx), one);
    idx = _mm512_mask_add_epi32(idx, ge, idx, one);
  };
  const __m512 t0 = _mm512_loadu_ps(s), t1 = _mm512_loadu_ps(s + 16);
  go(x, _mm512_permutexvar_ps(idx, t0));  // levels 0-3: nodes 0..14
  go(y, _mm512_permutexvar_ps(idx, t0));
  go(z, _mm512_permutexvar_ps(idx, t0));
  go(x, _mm512_permutexvar_ps(idx, t0));
  go(y, _mm512_permutex2var_ps(t0, idx, t1));  // level 4: nodes 15..30
  // level l (5..kCaptPermuteLevels-1): nodes 2^l - 1 + j, j < 2^l, from 2^(l-5) permutes of
  // vector pairs, merged by j's bits 5 and up (a blend tree)
  auto level = [&](int l) {
    const float* base = s + (1 << l) - 1;
    const __m512i j = _mm512_sub_epi32(idx, _mm512_set1_epi32((1 << l) - 1));
    __m512 v[32];
    int n = 1 << (l - 5);
    for (int p = 0; p < n; ++p)
      v[p] = _mm512_permutex2var_ps(_mm512_loadu_ps(base + 32 * p), j, _mm512_loadu_ps(base + 32 * p + 16));
    for (int bit = 32; n > 1; bit <<= 1, n >>= 1) {
      const __mmask16 hi = _mm512_test_epi32_mask(j, _mm512_set1_epi32(bit));
      for (int p = 0; p < n / 2; ++p) v[p] = _mm512_mask_blend_ps(hi, v[2 * p], v[2 * p + 1]);
    }
    return v[0];
  };
  go(z, level(5));
  go(x, level(6));
  go(y, level(7));
  if (levels > 8) go(z, level(8));
  if (levels > 9) go(x, level(9));
  return idx;
}
#endif

// The leaf of each lane (index into t.leaves) and the bits of the lanes whose leaf AABB lies
// closer than sqrt(rr * rr) (capt_box_near, lane by lane, without branches). rr = r + point_radius.
// PERF: AVX-512, C++ harness over the benchmark's clouds and queries (/tmp/capt2/mbq.cc: capt_hit
// over 20k spheres, min of 40 runs; Xeon @ 2.5 GHz, the sibling vCPU busy), ns per sphere:
//   was (W scalar descents that GCC half-vectorized with inserts and extracts, then per lane a
//   branch on the list length, the AABB and the scan): u1k 25.0, u10k 50.7, walk10k 34.1,
//   MotionBenchMaker bookshelf_small 28.1, cage 30.7;
//   gathers for the descent and the AABB: slower (vgatherdps takes 27 cycles per 16 lanes on this
//   Xeon, measured): u1k 27, u10k 53; dropped;
//   now (10 levels by permutes, the rest scalar, AABB for all lanes, then only the near lanes scan,
//   their points prefetched first; with the build's smaller lists): u1k 17.7, u10k 42.2, walk10k
//   29.8, bookshelf_small 11.5-12.0, cage 13.1-13.5;
//   without the AABB (scan every lane): u1k 16.5 but bookshelf_small 26.5, cage 24.5; kept the AABB.
template <class V>
SIMDPLAN_INLINE uint32_t capt_descend(const CaptView& t, V x, V y, V z, V rr, uint32_t* li) {
  constexpr int W = V::W;
  alignas(64) float xs[W], ys[W], zs[W], rs[W];
  x.store(xs), y.store(ys), z.store(zs), rr.store(rs);
  const float* s = t.splits;
  alignas(64) uint32_t idx[W];
  int32_t l = 0;
#if defined(SIMDPLAN_ISA_AVX512)
  if constexpr (W == 16) {
    if (t.depth >= 8) {
      l = t.depth < kCaptPermuteLevels ? t.depth : kCaptPermuteLevels;
      _mm512_store_si512(idx, capt_descend_top(s, l, x.v, y.v, z.v));
    }
  }
#endif
  if (l == 0)
    for (int k = 0; k < W; ++k) idx[k] = 0;
  // the remaining levels lane by lane, lanes interleaved so their independent loads overlap
  const float* q[3] = {xs, ys, zs};
  for (int32_t axis = l % 3; l < t.depth; ++l, axis = axis == 2 ? 0 : axis + 1) {
    const float* qa = q[axis];
    for (int k = 0; k < W; ++k) idx[k] = 2 * idx[k] + 1 + uint32_t(qa[k] >= s[idx[k]]);
  }
  const uint32_t first_leaf = (1u << t.depth) - 1u;
  uint32_t near = 0;
  for (int k = 0; k < W; ++k) {
    li[k] = idx[k] - first_leaf;
    near |= uint32_t(capt_box_near(t.leaves[li[k]], xs[k], ys[k], zs[k], rs[k] * rs[k])) << k;
  }
  return near;
}


// capt_hit_bits for the lanes `lanes` one at a time (xs.. stored lanes): they descend level by
// level together, their leaves' points are prefetched, then capt_leaf_hit tests each (AABB only
// for lists longer than two vectors).
template <class V>
SIMDPLAN_INLINE uint32_t capt_hit_lanes(const CaptView& t, const float* xs, const float* ys, const float* zs,
                                        const float* rs, uint32_t lanes) {
  constexpr int W = V::W;
  int lane[W], m = 0;
  for (; lanes; lanes &= lanes - 1) lane[m++] = __builtin_ctz(lanes);
  uint32_t idx[W];
  for (int i = 0; i < m; ++i) idx[i] = 0;
  const float* q[3] = {xs, ys, zs};
  for (int32_t l = 0, axis = 0; l < t.depth; ++l, axis = axis == 2 ? 0 : axis + 1) {
    const float* qa = q[axis];
    for (int i = 0; i < m; ++i) idx[i] = 2 * idx[i] + 1 + uint32_t(qa[lane[i]] >= t.splits[idx[i]]);
  }
  const uint32_t first_leaf = (1u << t.depth) - 1u;
  const CaptLeaf* leaf[W];
  for (int i = 0; i < m; ++i) {
    leaf[i] = &t.leaves[idx[i] - first_leaf];
#if defined(__GNUC__)
    __builtin_prefetch(t.px + leaf[i]->begin), __builtin_prefetch(t.py + leaf[i]->begin);
    __builtin_prefetch(t.pz + leaf[i]->begin);
#endif
  }
  uint32_t hit = 0;
  for (int i = 0; i < m; ++i) {
    const int k = lane[i];
    if (capt_leaf_hit<V>(t, *leaf[i], xs[k], ys[k], zs[k], rs[k] * rs[k])) hit |= 1u << k;
  }
  return hit;
}

// Lanes whose centre the coarse grid clears go no further (capt_grid_near); when fewer than this
// many are left they take capt_hit_lanes, else (AVX-512) one vector descent and AABB test for all.
// PERF: bench_capt --quick, AVX-512 lane queries, ns per sphere, side by side: before the grid ->
// with it at thresholds 1 / 4 / 8 / 17 (never the vector descent); noisy runs, a helper building:
//   MotionBenchMaker robot spheres, bookshelf_small 18.1 -> 9.6 / 9.1 / 10.0 / 10.0,
//                                  cage            20.5 -> 12.2 / 19.5 / 12.3 / 14.3
//   clustered 10k, random 46.2 -> 31.1 / 34.4 / 26.7 / 27.0; walk 31.0 -> 13.4 / 21.3 / 13.5 / 15.2
//   uniform 1k random 25.4 -> 33.5 / 34.4 / 26.1 / 36.1 (the grid clears little of a uniform cloud)
constexpr int kCaptVectorDescentFrom = 8;

// Bits of `lanes` whose sphere (centre lane, radius rr - point_radius) penetrates a point;
// rr = r + point_radius per lane, r in [r_min, r_max]. The lanes share one vector descent and AABB
// test; the near lanes' points are prefetched before any is scanned, so their cache misses overlap.
template <class V>
SIMDPLAN_INLINE uint32_t capt_hit_bits(const CaptView& t, V x, V y, V z, V rr, uint32_t lanes) {
  constexpr int W = V::W;
  alignas(64) float xs[W], ys[W], zs[W], rs[W];
  x.store(xs), y.store(ys), z.store(zs), rr.store(rs);
  lanes = capt_grid_lanes<V>(t, x, y, z, rr, xs, ys, zs, rs, lanes);
  if (!lanes) return 0;
  // PERF: the AVX-512 path below made AVX2 slower (harness as in capt_descend, AVX2 build:
  // u1k 23.9 -> 38.8 ns, u10k 57.6 -> 64.4), so narrower vectors keep the per-lane form (with
  // the build's smaller lists: u1k 24.5 -> 21.7, u10k 58.7 -> 52.1, cage 32.3 -> 25.5)
  if (W != 16 || __builtin_popcount(lanes) < kCaptVectorDescentFrom) return capt_hit_lanes<V>(t, xs, ys, zs, rs, lanes);
  alignas(64) uint32_t li[W];
  uint32_t near = capt_descend(t, x, y, z, rr, li) & lanes;
  if (!near) return 0;
#if defined(__GNUC__)
  for (uint32_t b = near; b; b &= b - 1) {
    const int32_t j = t.leaves[li[__builtin_ctz(b)]].begin;
    __builtin_prefetch(t.px + j), __builtin_prefetch(t.py + j), __builtin_prefetch(t.pz + j);
  }
#endif
  uint32_t hit = 0;
  for (uint32_t b = near; b; b &= b - 1) {
    const int k = __builtin_ctz(b);
    const CaptLeaf& leaf = t.leaves[li[k]];
    if (capt_scan<V>(t, leaf.begin, leaf.end, xs[k], ys[k], zs[k], rs[k] * rs[k])) hit |= 1u << k;
  }
  return hit;
}

// per lane: true if sphere (x,y,z,r) penetrates a point (|c - p| < r + point_radius); r in [r_min, r_max]
// Lanes are independent spheres (e.g. one robot sphere of W configurations).
// PERF: vector descent + AABB (capt_descend) instead of W scalar descents and per-lane AABB
// branches; see the table in capt_descend's note.
template <class V>
typename V::Mask capt_hit(const CaptView& t, V x, V y, V z, V r) {
  return V::Mask::from_bits(capt_hit_bits(t, x, y, z, r + V::fill(t.point_radius), V::W == 32 ? ~0u : (1u << V::W) - 1u));
}

}  // namespace simdplan::SIMDPLAN_NS
