// build_avx512.cc: the hot loops of the CAPT build (build.cc) for CPUs with AVX-512.
//
// The two hot loops of the build, for CPUs with AVX-512 (picked at run time: this file is compiled
// without -m flags and must run anywhere). They compute exactly what the portable loops in Builder
// compute, operation for operation in the same order and without fused multiply-adds, so a tree
// is the same on every machine. PERF: the portable loops compact their survivors with one scalar
// store per array and element, the larger half of the build's time; compress-stores do 16 at once.
// Build time side by side (C++ harness /tmp/capt2/mbb.cc, min of 9 builds, Xeon @ 2.5 GHz with a
// busy sibling vCPU; MotionBenchMaker clouds at 2 cm, uniform in a 2 m cube), before -> own-point
// pruning of leaves (portable loops) -> with these AVX-512 loops -> also the level above (now):
//   cage 7k:      16.3 -> 16.4 -> 9.2 -> 9.0 ms (73 -> 37 -> 33 stored points per leaf)
//   bookshelf 8k: 12.1 ->  -   -> 7.8 -> 7.6 ms
//   uniform 10k / 30k / 100k: 8.4 / 32.2 / 199 -> 9.5 / 38.7 / - (portable loops, every list)
//     -> 7.0 / 25.2 / 128 -> 7.0 / 22.4 / 130 ms
#include <cstdlib>
#include <string>
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#include <immintrin.h>
#endif

#include "build_parts.hh"
#include "dispatch.hh"

namespace simdplan::capt::build_parts {

#if defined(SIMDPLAN_CAPT_X86_KERNELS)

// gapf: d = max(lo - x, x - hi) (a > b ? a : b, as vmaxps), then 0.5 (d + |d|)
static SIMDPLAN_AVX512_FN inline __m512 gap16(__m512 v, __m512 l, __m512 h, __m512 half) {
  const __m512 d = _mm512_max_ps(_mm512_sub_ps(l, v), _mm512_sub_ps(v, h));
  return _mm512_mul_ps(half, _mm512_add_ps(d, _mm512_abs_ps(d)));
}

// dk*dk + max(-2 (lo_k - p_k) d_k, -2 (hi_k - p_k) d_k), d = b - p, for 8 candidates p (own_prune)
static SIMDPLAN_AVX512_FN inline __m512d dom8(__m256 f, double b, double lo, double hi) {
  const __m512d m2 = _mm512_set1_pd(-2.0);
  const __m512d p = _mm512_cvtps_pd(f);
  const __m512d d = _mm512_sub_pd(_mm512_set1_pd(b), p);
  const __m512d a = _mm512_mul_pd(_mm512_mul_pd(m2, _mm512_sub_pd(_mm512_set1_pd(lo), p)), d);
  const __m512d c = _mm512_mul_pd(_mm512_mul_pd(m2, _mm512_sub_pd(_mm512_set1_pd(hi), p)), d);
  // std::max(a, c) returns a unless a < c
  const __m512d mx = _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, c, _CMP_LT_OQ), a, c);
  return _mm512_add_pd(_mm512_mul_pd(d, d), mx);
}

// Builder::filter: appends the candidates within the (rounded) distance to the box.
SIMDPLAN_AVX512_FN size_t filter_avx512(const float* x, const float* y, const float* z, const int32_t* id, int32_t id0,
                                        size_t m, const float* lo, const float* hi, float r2f, float* ox, float* oy,
                                        float* oz, int32_t* oid, size_t w) {
  const __m512 lx = _mm512_set1_ps(lo[0]), ly = _mm512_set1_ps(lo[1]), lz = _mm512_set1_ps(lo[2]);
  const __m512 hx = _mm512_set1_ps(hi[0]), hy = _mm512_set1_ps(hi[1]), hz = _mm512_set1_ps(hi[2]);
  const __m512 r2 = _mm512_set1_ps(r2f), half = _mm512_set1_ps(0.5f);
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  for (size_t t = 0; t < m; t += 16) {
    const __mmask16 in = m - t >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (m - t)) - 1u);
    const __m512 vx = _mm512_maskz_loadu_ps(in, x + t), vy = _mm512_maskz_loadu_ps(in, y + t),
                 vz = _mm512_maskz_loadu_ps(in, z + t);
    const __m512 gx = gap16(vx, lx, hx, half), gy = gap16(vy, ly, hy, half), gz = gap16(vz, lz, hz, half);
    // (gx*gx + gy*gy) + gz*gz, as the scalar expression associates
    const __m512 d2 = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(gx, gx), _mm512_mul_ps(gy, gy)), _mm512_mul_ps(gz, gz));
    const __mmask16 k = _mm512_mask_cmp_ps_mask(in, d2, r2, _CMP_LT_OQ);
    const __m512i vid = id ? _mm512_maskz_loadu_epi32(in, id + t)
                           : _mm512_add_epi32(_mm512_set1_epi32(id0 + int32_t(t)), iota);
    // compress in registers, then store all 16 lanes (the outputs have kSoaSlack spare elements).
    // PERF: compress-stores to memory were the hottest instructions of the build (perf annotate);
    // with this and the same change in own_prune_avx512, side by side (bench_capt clouds, min of 15,
    // quiet runs): uniform 10k / 30k / 100k 6.99 / 26.0 / 129 -> 6.95 / 22.4 / 128 ms, MotionBenchMaker
    // bookshelf / cage 6.54 / 7.46 -> 6.50 / 7.31 ms (30k gains, the rest within noise)
    _mm512_storeu_ps(ox + w, _mm512_maskz_compress_ps(k, vx));
    _mm512_storeu_ps(oy + w, _mm512_maskz_compress_ps(k, vy));
    _mm512_storeu_ps(oz + w, _mm512_maskz_compress_ps(k, vz));
    _mm512_storeu_si512(oid + w, _mm512_maskz_compress_epi32(k, vid));
    w += size_t(__builtin_popcount(k));
  }
  return w;
}

// Builder::own_prune, in place: keeps the candidates that none of the nb (1 or 2) points b[0..nb)
// dominates on the box by margin m; with two, the survivors of pruning by b[0] and then by b[1],
// in the same order, in one pass (a cell of two points).
SIMDPLAN_AVX512_FN size_t own_prune_avx512(float* x, float* y, float* z, int32_t* id, size_t n, const double (*b)[3],
                                           int nb, const double* lo, const double* hi, double m) {
  const __m512d mm = _mm512_set1_pd(m);
  size_t w = 0;
  for (size_t t = 0; t < n; t += 8) {
    const __mmask8 in = n - t >= 8 ? __mmask8(0xFF) : __mmask8((1u << (n - t)) - 1u);
    const __m256 fx = _mm256_maskz_loadu_ps(in, x + t), fy = _mm256_maskz_loadu_ps(in, y + t),
                 fz = _mm256_maskz_loadu_ps(in, z + t);
    __mmask8 keep = in;
    for (int j = 0; j < nb; ++j) {
      const __m512d v = _mm512_add_pd(_mm512_add_pd(dom8(fx, b[j][0], lo[0], hi[0]), dom8(fy, b[j][1], lo[1], hi[1])),
                                      dom8(fz, b[j][2], lo[2], hi[2]));
      keep = _mm512_mask_cmp_pd_mask(keep, v, mm, _CMP_NLE_UQ);  // !(v <= m)
    }
    // in place (w <= t): a full 8-lane store at w overwrites only elements up to t + 7, already
    // loaded (the arrays have kSoaSlack spare elements past n); the ids stay with their points for
    // prune() further down
    const __m256i vid = _mm256_maskz_loadu_epi32(in, id + t);
    _mm256_storeu_ps(x + w, _mm256_maskz_compress_ps(keep, fx));
    _mm256_storeu_ps(y + w, _mm256_maskz_compress_ps(keep, fy));
    _mm256_storeu_ps(z + w, _mm256_maskz_compress_ps(keep, fz));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(id + w), _mm256_maskz_compress_epi32(keep, vid));
    w += size_t(__builtin_popcount(keep));
  }
  return w;
}

// Builder::filter of one list for both children of a cell at once (boxes 0 and 1), into two
// outputs; the gaps on axes where the boxes agree are computed once, with the same expressions.
SIMDPLAN_AVX512_FN void filter2_avx512(const float* x, const float* y, const float* z, const int32_t* id, size_t m,
                                       const BoxF* box, float r2f, float* const* o, int32_t* const* oid, size_t* w) {
  __m512 l[2][3], h[2][3];
  bool same[3];
  for (int c = 0; c < 2; ++c)
    for (int k = 0; k < 3; ++k) l[c][k] = _mm512_set1_ps(box[c].lo[k]), h[c][k] = _mm512_set1_ps(box[c].hi[k]);
  for (int k = 0; k < 3; ++k) same[k] = box[0].lo[k] == box[1].lo[k] && box[0].hi[k] == box[1].hi[k];
  const __m512 r2 = _mm512_set1_ps(r2f), half = _mm512_set1_ps(0.5f);
  size_t w0 = w[0], w1 = w[1];
  for (size_t t = 0; t < m; t += 16) {
    const __mmask16 in = m - t >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << (m - t)) - 1u);
    const __m512 v[3] = {_mm512_maskz_loadu_ps(in, x + t), _mm512_maskz_loadu_ps(in, y + t),
                         _mm512_maskz_loadu_ps(in, z + t)};
    __m512 g0[3], g1[3];
    for (int k = 0; k < 3; ++k) {
      g0[k] = gap16(v[k], l[0][k], h[0][k], half);
      g1[k] = same[k] ? g0[k] : gap16(v[k], l[1][k], h[1][k], half);
    }
    const __m512 d0 = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(g0[0], g0[0]), _mm512_mul_ps(g0[1], g0[1])), _mm512_mul_ps(g0[2], g0[2]));
    const __m512 d1 = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(g1[0], g1[0]), _mm512_mul_ps(g1[1], g1[1])), _mm512_mul_ps(g1[2], g1[2]));
    const __mmask16 k0 = _mm512_mask_cmp_ps_mask(in, d0, r2, _CMP_LT_OQ), k1 = _mm512_mask_cmp_ps_mask(in, d1, r2, _CMP_LT_OQ);
    const __m512i vid = _mm512_maskz_loadu_epi32(in, id + t);
    for (int k = 0; k < 3; ++k) {
      _mm512_storeu_ps(o[k] + w0, _mm512_maskz_compress_ps(k0, v[k]));
      _mm512_storeu_ps(o[3 + k] + w1, _mm512_maskz_compress_ps(k1, v[k]));
    }
    _mm512_storeu_si512(oid[0] + w0, _mm512_maskz_compress_epi32(k0, vid));
    _mm512_storeu_si512(oid[1] + w1, _mm512_maskz_compress_epi32(k1, vid));
    w0 += size_t(__builtin_popcount(k0));
    w1 += size_t(__builtin_popcount(k1));
  }
  w[0] = w0, w[1] = w1;
}

// A leaf's list: own_prune by its point b (when b is given) in place, and the AABB of what is kept
// folded into alo / ahi (min and max are exact, so the order of folding does not matter).
SIMDPLAN_AVX512_FN size_t leaf_list_avx512(float* x, float* y, float* z, size_t n, const double* b, const double* lo,
                                           const double* hi, double m, float* alo, float* ahi) {
  __m256 l[3], h[3];
  for (int k = 0; k < 3; ++k) l[k] = _mm256_set1_ps(alo[k]), h[k] = _mm256_set1_ps(ahi[k]);
  size_t w = 0;
  const __m512d mm = _mm512_set1_pd(m);
  for (size_t t = 0; t < n; t += 8) {
    const __mmask8 in = n - t >= 8 ? __mmask8(0xFF) : __mmask8((1u << (n - t)) - 1u);
    const __m256 fx = _mm256_maskz_loadu_ps(in, x + t), fy = _mm256_maskz_loadu_ps(in, y + t),
                 fz = _mm256_maskz_loadu_ps(in, z + t);
    __mmask8 keep = in;
    if (b) {
      const __m512d v = _mm512_add_pd(_mm512_add_pd(dom8(fx, b[0], lo[0], hi[0]), dom8(fy, b[1], lo[1], hi[1])), dom8(fz, b[2], lo[2], hi[2]));
      keep = _mm512_mask_cmp_pd_mask(in, v, mm, _CMP_NLE_UQ);
      _mm256_storeu_ps(x + w, _mm256_maskz_compress_ps(keep, fx));
      _mm256_storeu_ps(y + w, _mm256_maskz_compress_ps(keep, fy));
      _mm256_storeu_ps(z + w, _mm256_maskz_compress_ps(keep, fz));
    }
    l[0] = _mm256_mask_min_ps(l[0], keep, l[0], fx), h[0] = _mm256_mask_max_ps(h[0], keep, h[0], fx);
    l[1] = _mm256_mask_min_ps(l[1], keep, l[1], fy), h[1] = _mm256_mask_max_ps(h[1], keep, h[1], fy);
    l[2] = _mm256_mask_min_ps(l[2], keep, l[2], fz), h[2] = _mm256_mask_max_ps(h[2], keep, h[2], fz);
    w += size_t(__builtin_popcount(keep));
  }
  for (int k = 0; k < 3; ++k) {
    alignas(32) float a[8], c[8];
    _mm256_store_ps(a, l[k]);
    _mm256_store_ps(c, h[k]);
    for (int u = 0; u < 8; ++u) alo[k] = a[u] < alo[k] ? a[u] : alo[k], ahi[k] = c[u] > ahi[k] ? c[u] : ahi[k];
  }
  return w;
}

bool build_has_avx512() {
  static const bool yes = [] {
    // SIMDPLAN_CAPT_PORTABLE_BUILD=1 forces the portable loops (to test them on an AVX-512 machine)
    const char* env = std::getenv("SIMDPLAN_CAPT_PORTABLE_BUILD");
    if (env && env[0] == '1') return false;
    for (const std::string& isa : available_isas())
      if (isa == "avx512") return true;
    return false;
  }();
  return yes;
}
#else
bool build_has_avx512() { return false; }
#endif

}  // namespace simdplan::capt::build_parts
