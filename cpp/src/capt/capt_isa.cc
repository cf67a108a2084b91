// capt_isa.cc: instantiates the CAPT queries for one ISA and exports its CaptKernels table.
//
// Built once per ISA by CMake with the same flags and SIMDPLAN_NS as kernels_isa.cc (see
// simdplan/config.hh for why every inline function here lives in the per-ISA namespace).
#include "simdplan/capt/capt_kernels.hh"
#include "simdplan/capt/query.hh"
#include "simdplan/vec/vec.hh"

namespace simdplan {
namespace SIMDPLAN_NS {
namespace {

// lanes whose radius lies in [r_min, r_max] and whose centre is finite (x - x is 0 only for finite x)
SIMDPLAN_INLINE uint32_t valid_bits(const CaptView& t, Vec x, Vec y, Vec z, Vec r) {
  const Vec zero = Vec::zero();
  return ((r >= Vec::fill(t.r_min)) & (r <= Vec::fill(t.r_max)) & (((x - x) + (y - y) + (z - z)) == zero)).bits();
}

bool collides_one(const CaptView* t, const float* c, const float* r, int64_t n, uint8_t* out) {
  bool ok = true;
  for (int64_t i = 0; i < n; ++i) {
    const float x = c[3 * i], y = c[3 * i + 1], z = c[3 * i + 2];
    ok &= (r[i] >= t->r_min) & (r[i] <= t->r_max) & ((x - x) + (y - y) + (z - z) == 0.0f);
    out[i] = capt_hit_one<Vec>(*t, x, y, z, r[i]);
  }
  return ok;
}

bool collides_lanes(const CaptView* t, const float* c, const float* r, int64_t n, uint8_t* out) {
  constexpr int W = Vec::W;
  constexpr uint32_t kAll = W == 32 ? ~0u : (1u << W) - 1u;
  alignas(64) float xs[W], ys[W], zs[W], rs[W];
  uint32_t valid = kAll;
  // every path below queries its groups through this, so none skips the input check
  auto group = [&](Vec x, Vec y, Vec z, Vec rv) {
    valid &= valid_bits(*t, x, y, z, rv);
    return capt_hit<Vec>(*t, x, y, z, rv).bits();
  };
  int64_t i = 0;
#if defined(SIMDPLAN_ISA_AVX512)
  // PERF: whole groups of 16 rows transposed by permutes and the hits written as 16 bytes at once;
  // the scalar copy at the end (64 loads and stores per group) cost a third as much as the queries
  // on MotionBenchMaker robot spheres (perf, Python CAPT.collides).
  // Coordinate j of lane l is float 3l + j of the group's 48: taken from the first two loads by
  // `lo`, then kept or replaced from the third by `hi` (two-source permutes: 0-15 first, 16-31 second).
  __m512i lo[3], hi[3];
  for (int j = 0; j < 3; ++j) {
    alignas(64) int32_t l_idx[16], h_idx[16];
    for (int l = 0; l < 16; ++l) {
      const int p = 3 * l + j;
      l_idx[l] = p < 32 ? p : 0;
      h_idx[l] = p < 32 ? l : 16 + (p - 32);
    }
    lo[j] = _mm512_load_si512(l_idx);
    hi[j] = _mm512_load_si512(h_idx);
  }
  for (; i + W <= n; i += W) {
    const float* g = c + 3 * i;
    const __m512 a = _mm512_loadu_ps(g), b = _mm512_loadu_ps(g + 16), d = _mm512_loadu_ps(g + 32);
    Vec xyz[3];
    for (int j = 0; j < 3; ++j) xyz[j].v = _mm512_permutex2var_ps(_mm512_permutex2var_ps(a, lo[j], b), hi[j], d);
    const uint32_t bits = group(xyz[0], xyz[1], xyz[2], Vec::load(r + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm_maskz_set1_epi8(__mmask16(bits), 1));
  }
#elif defined(SIMDPLAN_ISA_AVX2)
  // PERF: as above for 8 rows: float 3l + j sits in load (3l + j) / 8; each load is permuted into
  // place and the three are blended.
  __m256i idx[3][3];
  __m256 from1[3], from2[3];
  for (int j = 0; j < 3; ++j) {
    alignas(32) int32_t e[3][8];
    alignas(32) int32_t m1[8], m2[8];
    for (int l = 0; l < 8; ++l) {
      const int p = 3 * l + j;
      for (int src = 0; src < 3; ++src) e[src][l] = p / 8 == src ? p % 8 : 0;
      m1[l] = p / 8 == 1 ? -1 : 0;
      m2[l] = p / 8 == 2 ? -1 : 0;
    }
    for (int src = 0; src < 3; ++src) idx[j][src] = _mm256_load_si256(reinterpret_cast<const __m256i*>(e[src]));
    from1[j] = _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(m1)));
    from2[j] = _mm256_castsi256_ps(_mm256_load_si256(reinterpret_cast<const __m256i*>(m2)));
  }
  for (; i + W <= n; i += W) {
    const float* g = c + 3 * i;
    const __m256 a = _mm256_loadu_ps(g), b = _mm256_loadu_ps(g + 8), d = _mm256_loadu_ps(g + 16);
    Vec xyz[3];
    for (int j = 0; j < 3; ++j) {
      const __m256 ab = _mm256_blendv_ps(_mm256_permutevar8x32_ps(a, idx[j][0]), _mm256_permutevar8x32_ps(b, idx[j][1]),
                                         from1[j]);
      xyz[j].v = _mm256_blendv_ps(ab, _mm256_permutevar8x32_ps(d, idx[j][2]), from2[j]);
    }
    const uint32_t bits = group(xyz[0], xyz[1], xyz[2], Vec::load(r + i));
    for (int k = 0; k < W; ++k) out[i + k] = (bits >> k) & 1u;
  }
#endif
  for (; i < n; i += W) {
    const int64_t m = n - i < W ? n - i : W;
    for (int k = 0; k < W; ++k) {
      const int64_t j = i + (k < m ? k : 0);  // spare lanes repeat the first sphere
      xs[k] = c[3 * j];
      ys[k] = c[3 * j + 1];
      zs[k] = c[3 * j + 2];
      rs[k] = r[j];
    }
    const uint32_t bits = group(Vec::load(xs), Vec::load(ys), Vec::load(zs), Vec::load(rs));
    for (int64_t k = 0; k < m; ++k) out[i + k] = (bits >> k) & 1u;
  }
  return valid == kAll;
}

const CaptKernels kTable = {kThisIsaName, Vec::W, &collides_one, &collides_lanes};

}  // namespace
}  // namespace SIMDPLAN_NS

template <>
const CaptKernels* isa_table<CaptKernels, kThisIsa>() {
  return &SIMDPLAN_NS::kTable;
}

}  // namespace simdplan
