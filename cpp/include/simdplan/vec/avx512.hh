// simdplan/vec/avx512.hh: 16 float lanes in one __m512 (AVX-512 F/DQ), masks in __mmask16.
//
// Only included by translation units compiled with -mavx512f -mavx512dq -mavx512vl -mavx512bw.
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "simdplan/config.hh"

namespace simdplan::SIMDPLAN_NS {

struct MaskAvx512 {
  __mmask16 m;
  SIMDPLAN_INLINE bool any() const { return m != 0; }
  SIMDPLAN_INLINE bool all() const { return m == 0xFFFF; }
  SIMDPLAN_INLINE uint32_t bits() const { return m; }
  SIMDPLAN_INLINE MaskAvx512 operator&(MaskAvx512 o) const { return {static_cast<__mmask16>(m & o.m)}; }
  SIMDPLAN_INLINE MaskAvx512 operator|(MaskAvx512 o) const { return {static_cast<__mmask16>(m | o.m)}; }
  SIMDPLAN_INLINE MaskAvx512 operator~() const { return {static_cast<__mmask16>(~m)}; }
  static SIMDPLAN_INLINE MaskAvx512 none() { return {0}; }
  static SIMDPLAN_INLINE MaskAvx512 from_bits(uint32_t b) { return {static_cast<__mmask16>(b)}; }
};

struct VecAvx512 {
  static constexpr int W = 16;
  using Mask = MaskAvx512;
  __m512 v;

  static SIMDPLAN_INLINE VecAvx512 load(const float* p) { return {_mm512_loadu_ps(p)}; }
  static SIMDPLAN_INLINE VecAvx512 fill(float x) { return {_mm512_set1_ps(x)}; }
  static SIMDPLAN_INLINE VecAvx512 zero() { return {_mm512_setzero_ps()}; }
  SIMDPLAN_INLINE void store(float* p) const { _mm512_storeu_ps(p, v); }
  SIMDPLAN_INLINE float hmin() const { return _mm512_reduce_min_ps(v); }
  SIMDPLAN_INLINE float hmax() const { return _mm512_reduce_max_ps(v); }

  SIMDPLAN_INLINE VecAvx512 operator+(VecAvx512 o) const { return {_mm512_add_ps(v, o.v)}; }
  SIMDPLAN_INLINE VecAvx512 operator-(VecAvx512 o) const { return {_mm512_sub_ps(v, o.v)}; }
  SIMDPLAN_INLINE VecAvx512 operator*(VecAvx512 o) const { return {_mm512_mul_ps(v, o.v)}; }
  SIMDPLAN_INLINE VecAvx512 operator/(VecAvx512 o) const { return {_mm512_div_ps(v, o.v)}; }
  SIMDPLAN_INLINE VecAvx512 operator-() const {
    return {_mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MIN)))};
  }
  SIMDPLAN_INLINE Mask operator<(VecAvx512 o) const { return {_mm512_cmp_ps_mask(v, o.v, _CMP_LT_OQ)}; }
  SIMDPLAN_INLINE Mask operator<=(VecAvx512 o) const { return {_mm512_cmp_ps_mask(v, o.v, _CMP_LE_OQ)}; }
  SIMDPLAN_INLINE Mask operator>(VecAvx512 o) const { return {_mm512_cmp_ps_mask(v, o.v, _CMP_GT_OQ)}; }
  SIMDPLAN_INLINE Mask operator>=(VecAvx512 o) const { return {_mm512_cmp_ps_mask(v, o.v, _CMP_GE_OQ)}; }
  SIMDPLAN_INLINE Mask operator==(VecAvx512 o) const { return {_mm512_cmp_ps_mask(v, o.v, _CMP_EQ_OQ)}; }
};

SIMDPLAN_INLINE VecAvx512 fmadd(VecAvx512 a, VecAvx512 b, VecAvx512 c) { return {_mm512_fmadd_ps(a.v, b.v, c.v)}; }
SIMDPLAN_INLINE VecAvx512 vmin(VecAvx512 a, VecAvx512 b) { return {_mm512_min_ps(a.v, b.v)}; }
SIMDPLAN_INLINE VecAvx512 vmax(VecAvx512 a, VecAvx512 b) { return {_mm512_max_ps(a.v, b.v)}; }
SIMDPLAN_INLINE VecAvx512 vabs(VecAvx512 a) { return {_mm512_abs_ps(a.v)}; }
SIMDPLAN_INLINE VecAvx512 vsqrt(VecAvx512 a) { return {_mm512_sqrt_ps(a.v)}; }
SIMDPLAN_INLINE VecAvx512 vfloor(VecAvx512 a) { return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)}; }
SIMDPLAN_INLINE VecAvx512 vround(VecAvx512 a) {
  return {_mm512_roundscale_ps(a.v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)};
}
SIMDPLAN_INLINE VecAvx512 select(MaskAvx512 m, VecAvx512 a, VecAvx512 b) { return {_mm512_mask_blend_ps(m.m, b.v, a.v)}; }
// base[index] per lane as floats (vec/scalar.hh: integer-valued index, 3 readable bytes past the end)
SIMDPLAN_INLINE VecAvx512 vgather_bytes(const uint8_t* base, VecAvx512 index) {
  const __m512i w = _mm512_i32gather_epi32(_mm512_cvttps_epi32(index.v), reinterpret_cast<const int*>(base), 1);
  return {_mm512_cvtepi32_ps(_mm512_and_si512(w, _mm512_set1_epi32(0xFF)))};
}

}  // namespace simdplan::SIMDPLAN_NS
