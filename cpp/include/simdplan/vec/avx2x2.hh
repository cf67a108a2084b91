// simdplan/vec/avx2x2.hh: 16 float lanes as two __m256 halves (AVX2 + FMA), for the collision
// kernels of the AVX2 build.
//
// Why: the kernels' scalar work (which test comes next, which groups are ready, loop control) is
// paid once per call, whatever the lane count; 16 configurations per call share it as on AVX-512.
// Every operation is the 8-lane one on each half, so the answers are the same bit for bit.
// Only included by translation units compiled with -mavx2 -mfma.
#pragma once
#include <cstdint>

#include "simdplan/vec/avx2.hh"

namespace simdplan::SIMDPLAN_NS {

struct MaskAvx2x2 {
  MaskAvx2 lo, hi;
  SIMDPLAN_INLINE bool any() const { return _mm256_movemask_ps(_mm256_or_ps(lo.m, hi.m)) != 0; }
  SIMDPLAN_INLINE bool all() const { return _mm256_movemask_ps(_mm256_and_ps(lo.m, hi.m)) == 0xFF; }
  SIMDPLAN_INLINE uint32_t bits() const { return lo.bits() | (hi.bits() << 8); }
  SIMDPLAN_INLINE MaskAvx2x2 operator&(MaskAvx2x2 o) const { return {lo & o.lo, hi & o.hi}; }
  SIMDPLAN_INLINE MaskAvx2x2 operator|(MaskAvx2x2 o) const { return {lo | o.lo, hi | o.hi}; }
  SIMDPLAN_INLINE MaskAvx2x2 operator~() const { return {~lo, ~hi}; }
  static SIMDPLAN_INLINE MaskAvx2x2 none() { return {MaskAvx2::none(), MaskAvx2::none()}; }
  static SIMDPLAN_INLINE MaskAvx2x2 from_bits(uint32_t b) {
    return {MaskAvx2::from_bits(b & 0xFFu), MaskAvx2::from_bits((b >> 8) & 0xFFu)};
  }
};

struct VecAvx2x2 {
  static constexpr int W = 16;
  using Mask = MaskAvx2x2;
  using Half = VecAvx2;  // lane queries with native-width fast paths run per half (collision/obstacles.hh)
  VecAvx2 lo, hi;

  static SIMDPLAN_INLINE VecAvx2x2 load(const float* p) { return {VecAvx2::load(p), VecAvx2::load(p + 8)}; }
  static SIMDPLAN_INLINE VecAvx2x2 fill(float x) {
    const VecAvx2 v = VecAvx2::fill(x);
    return {v, v};
  }
  static SIMDPLAN_INLINE VecAvx2x2 zero() { return {VecAvx2::zero(), VecAvx2::zero()}; }
  SIMDPLAN_INLINE void store(float* p) const { lo.store(p), hi.store(p + 8); }
  SIMDPLAN_INLINE float hmin() const { return vmin(lo, hi).hmin(); }
  SIMDPLAN_INLINE float hmax() const { return vmax(lo, hi).hmax(); }

  SIMDPLAN_INLINE VecAvx2x2 operator+(VecAvx2x2 o) const { return {lo + o.lo, hi + o.hi}; }
  SIMDPLAN_INLINE VecAvx2x2 operator-(VecAvx2x2 o) const { return {lo - o.lo, hi - o.hi}; }
  SIMDPLAN_INLINE VecAvx2x2 operator*(VecAvx2x2 o) const { return {lo * o.lo, hi * o.hi}; }
  SIMDPLAN_INLINE VecAvx2x2 operator/(VecAvx2x2 o) const { return {lo / o.lo, hi / o.hi}; }
  SIMDPLAN_INLINE VecAvx2x2 operator-() const { return {-lo, -hi}; }
  SIMDPLAN_INLINE Mask operator<(VecAvx2x2 o) const { return {lo < o.lo, hi < o.hi}; }
  SIMDPLAN_INLINE Mask operator<=(VecAvx2x2 o) const { return {lo <= o.lo, hi <= o.hi}; }
  SIMDPLAN_INLINE Mask operator>(VecAvx2x2 o) const { return {lo > o.lo, hi > o.hi}; }
  SIMDPLAN_INLINE Mask operator>=(VecAvx2x2 o) const { return {lo >= o.lo, hi >= o.hi}; }
  SIMDPLAN_INLINE Mask operator==(VecAvx2x2 o) const { return {lo == o.lo, hi == o.hi}; }
};

SIMDPLAN_INLINE VecAvx2x2 fmadd(VecAvx2x2 a, VecAvx2x2 b, VecAvx2x2 c) {
  return {fmadd(a.lo, b.lo, c.lo), fmadd(a.hi, b.hi, c.hi)};
}
SIMDPLAN_INLINE VecAvx2x2 vmin(VecAvx2x2 a, VecAvx2x2 b) { return {vmin(a.lo, b.lo), vmin(a.hi, b.hi)}; }
SIMDPLAN_INLINE VecAvx2x2 vmax(VecAvx2x2 a, VecAvx2x2 b) { return {vmax(a.lo, b.lo), vmax(a.hi, b.hi)}; }
SIMDPLAN_INLINE VecAvx2x2 vabs(VecAvx2x2 a) { return {vabs(a.lo), vabs(a.hi)}; }
SIMDPLAN_INLINE VecAvx2x2 vsqrt(VecAvx2x2 a) { return {vsqrt(a.lo), vsqrt(a.hi)}; }
SIMDPLAN_INLINE VecAvx2x2 vfloor(VecAvx2x2 a) { return {vfloor(a.lo), vfloor(a.hi)}; }
SIMDPLAN_INLINE VecAvx2x2 vround(VecAvx2x2 a) { return {vround(a.lo), vround(a.hi)}; }
SIMDPLAN_INLINE VecAvx2x2 select(MaskAvx2x2 m, VecAvx2x2 a, VecAvx2x2 b) {
  return {select(m.lo, a.lo, b.lo), select(m.hi, a.hi, b.hi)};
}
SIMDPLAN_INLINE VecAvx2x2 vgather_bytes(const uint8_t* base, VecAvx2x2 index) {
  return {vgather_bytes(base, index.lo), vgather_bytes(base, index.hi)};
}

}  // namespace simdplan::SIMDPLAN_NS
