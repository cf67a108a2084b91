// simdplan/vec/avx2.hh: 8 float lanes in one __m256 (AVX2 + FMA).
//
// Masks are __m256 compare results (all-ones lanes); bits() packs them with movemask.
// Only included by translation units compiled with -mavx2 -mfma.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "simdplan/config.hh"

namespace simdplan::SIMDPLAN_NS {

struct MaskAvx2 {
  __m256 m;
  SIMDPLAN_INLINE bool any() const { return _mm256_movemask_ps(m) != 0; }
  SIMDPLAN_INLINE bool all() const { return _mm256_movemask_ps(m) == 0xFF; }
  SIMDPLAN_INLINE uint32_t bits() const { return static_cast<uint32_t>(_mm256_movemask_ps(m)); }
  SIMDPLAN_INLINE MaskAvx2 operator&(MaskAvx2 o) const { return {_mm256_and_ps(m, o.m)}; }
  SIMDPLAN_INLINE MaskAvx2 operator|(MaskAvx2 o) const { return {_mm256_or_ps(m, o.m)}; }
  SIMDPLAN_INLINE MaskAvx2 operator~() const {
    return {_mm256_xor_ps(m, _mm256_castsi256_ps(_mm256_set1_epi32(-1)))};
  }
  static SIMDPLAN_INLINE MaskAvx2 none() { return {_mm256_setzero_ps()}; }
  static SIMDPLAN_INLINE MaskAvx2 from_bits(uint32_t b) {
    const __m256i bit = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    const __m256i sel = _mm256_and_si256(_mm256_set1_epi32(static_cast<int>(b)), bit);
    return {_mm256_castsi256_ps(_mm256_cmpeq_epi32(sel, bit))};
  }
};

struct VecAvx2 {
  static constexpr int W = 8;
  using Mask = MaskAvx2;
  __m256 v;

  static SIMDPLAN_INLINE VecAvx2 load(const float* p) { return {_mm256_loadu_ps(p)}; }
  static SIMDPLAN_INLINE VecAvx2 fill(float x) { return {_mm256_set1_ps(x)}; }
  static SIMDPLAN_INLINE VecAvx2 zero() { return {_mm256_setzero_ps()}; }
  SIMDPLAN_INLINE void store(float* p) const { _mm256_storeu_ps(p, v); }
  SIMDPLAN_INLINE float hmin() const {
    __m128 x = _mm_min_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_min_ps(x, _mm_movehl_ps(x, x));
    x = _mm_min_ss(x, _mm_shuffle_ps(x, x, 1));
    return _mm_cvtss_f32(x);
  }
  SIMDPLAN_INLINE float hmax() const {
    __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    x = _mm_max_ps(x, _mm_movehl_ps(x, x));
    x = _mm_max_ss(x, _mm_shuffle_ps(x, x, 1));
    return _mm_cvtss_f32(x);
  }

  SIMDPLAN_INLINE VecAvx2 operator+(VecAvx2 o) const { return {_mm256_add_ps(v, o.v)}; }
  SIMDPLAN_INLINE VecAvx2 operator-(VecAvx2 o) const { return {_mm256_sub_ps(v, o.v)}; }
  SIMDPLAN_INLINE VecAvx2 operator*(VecAvx2 o) const { return {_mm256_mul_ps(v, o.v)}; }
  SIMDPLAN_INLINE VecAvx2 operator/(VecAvx2 o) const { return {_mm256_div_ps(v, o.v)}; }
  SIMDPLAN_INLINE VecAvx2 operator-() const { return {_mm256_xor_ps(v, _mm256_set1_ps(-0.0f))}; }
  SIMDPLAN_INLINE Mask operator<(VecAvx2 o) const { return {_mm256_cmp_ps(v, o.v, _CMP_LT_OQ)}; }
  SIMDPLAN_INLINE Mask operator<=(VecAvx2 o) const { return {_mm256_cmp_ps(v, o.v, _CMP_LE_OQ)}; }
  SIMDPLAN_INLINE Mask operator>(VecAvx2 o) const { return {_mm256_cmp_ps(v, o.v, _CMP_GT_OQ)}; }
  SIMDPLAN_INLINE Mask operator>=(VecAvx2 o) const { return {_mm256_cmp_ps(v, o.v, _CMP_GE_OQ)}; }
  SIMDPLAN_INLINE Mask operator==(VecAvx2 o) const { return {_mm256_cmp_ps(v, o.v, _CMP_EQ_OQ)}; }
};

SIMDPLAN_INLINE VecAvx2 fmadd(VecAvx2 a, VecAvx2 b, VecAvx2 c) { return {_mm256_fmadd_ps(a.v, b.v, c.v)}; }
SIMDPLAN_INLINE VecAvx2 vmin(VecAvx2 a, VecAvx2 b) { return {_mm256_min_ps(a.v, b.v)}; }
SIMDPLAN_INLINE VecAvx2 vmax(VecAvx2 a, VecAvx2 b) { return {_mm256_max_ps(a.v, b.v)}; }
SIMDPLAN_INLINE VecAvx2 vabs(VecAvx2 a) { return {_mm256_andnot_ps(_mm256_set1_ps(-0.0f), a.v)}; }
SIMDPLAN_INLINE VecAvx2 vsqrt(VecAvx2 a) { return {_mm256_sqrt_ps(a.v)}; }
SIMDPLAN_INLINE VecAvx2 vfloor(VecAvx2 a) { return {_mm256_floor_ps(a.v)}; }
SIMDPLAN_INLINE VecAvx2 vround(VecAvx2 a) {
  return {_mm256_round_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
}
SIMDPLAN_INLINE VecAvx2 select(MaskAvx2 m, VecAvx2 a, VecAvx2 b) { return {_mm256_blendv_ps(b.v, a.v, m.m)}; }
// base[index] per lane as floats (vec/scalar.hh: integer-valued index, 3 readable bytes past the end)
SIMDPLAN_INLINE VecAvx2 vgather_bytes(const uint8_t* base, VecAvx2 index) {
  const __m256i w = _mm256_i32gather_epi32(reinterpret_cast<const int*>(base), _mm256_cvttps_epi32(index.v), 1);
  return {_mm256_cvtepi32_ps(_mm256_and_si256(w, _mm256_set1_epi32(0xFF)))};
}

}  // namespace simdplan::SIMDPLAN_NS
