// simdplan/vec/scalar.hh: a one-lane "vector" of float, the reference build of every kernel.
//
// Same interface as the AVX2 and AVX-512 types, so each kernel is written once as a template over
// the vector type. Masks are plain bools. Compiles on any architecture.
#pragma once
#include <cmath>
#include <cstdint>

#include "simdplan/config.hh"

namespace simdplan::SIMDPLAN_NS {

struct MaskScalar {
  bool m;
  SIMDPLAN_INLINE bool any() const { return m; }
  SIMDPLAN_INLINE bool all() const { return m; }
  SIMDPLAN_INLINE uint32_t bits() const { return m ? 1u : 0u; }
  SIMDPLAN_INLINE MaskScalar operator&(MaskScalar o) const { return {m && o.m}; }
  SIMDPLAN_INLINE MaskScalar operator|(MaskScalar o) const { return {m || o.m}; }
  SIMDPLAN_INLINE MaskScalar operator~() const { return {!m}; }
  static SIMDPLAN_INLINE MaskScalar none() { return {false}; }
  static SIMDPLAN_INLINE MaskScalar from_bits(uint32_t b) { return {(b & 1u) != 0}; }
};

struct VecScalar {
  static constexpr int W = 1;
  using Mask = MaskScalar;
  float v;

  static SIMDPLAN_INLINE VecScalar load(const float* p) { return {*p}; }
  static SIMDPLAN_INLINE VecScalar fill(float x) { return {x}; }
  static SIMDPLAN_INLINE VecScalar zero() { return {0.0f}; }
  SIMDPLAN_INLINE void store(float* p) const { *p = v; }
  SIMDPLAN_INLINE float hmin() const { return v; }
  SIMDPLAN_INLINE float hmax() const { return v; }

  SIMDPLAN_INLINE VecScalar operator+(VecScalar o) const { return {v + o.v}; }
  SIMDPLAN_INLINE VecScalar operator-(VecScalar o) const { return {v - o.v}; }
  SIMDPLAN_INLINE VecScalar operator*(VecScalar o) const { return {v * o.v}; }
  SIMDPLAN_INLINE VecScalar operator/(VecScalar o) const { return {v / o.v}; }
  SIMDPLAN_INLINE VecScalar operator-() const { return {-v}; }
  SIMDPLAN_INLINE Mask operator<(VecScalar o) const { return {v < o.v}; }
  SIMDPLAN_INLINE Mask operator<=(VecScalar o) const { return {v <= o.v}; }
  SIMDPLAN_INLINE Mask operator>(VecScalar o) const { return {v > o.v}; }
  SIMDPLAN_INLINE Mask operator>=(VecScalar o) const { return {v >= o.v}; }
  SIMDPLAN_INLINE Mask operator==(VecScalar o) const { return {v == o.v}; }
};

// a * b + c (fused where the ISA has it; the scalar build stays unfused so it is the plain reference)
SIMDPLAN_INLINE VecScalar fmadd(VecScalar a, VecScalar b, VecScalar c) { return {a.v * b.v + c.v}; }
SIMDPLAN_INLINE VecScalar vmin(VecScalar a, VecScalar b) { return {a.v < b.v ? a.v : b.v}; }
SIMDPLAN_INLINE VecScalar vmax(VecScalar a, VecScalar b) { return {a.v > b.v ? a.v : b.v}; }
SIMDPLAN_INLINE VecScalar vabs(VecScalar a) { return {std::fabs(a.v)}; }
SIMDPLAN_INLINE VecScalar vsqrt(VecScalar a) { return {std::sqrt(a.v)}; }
SIMDPLAN_INLINE VecScalar vfloor(VecScalar a) { return {std::floor(a.v)}; }
// round half to even, like the SIMD round instructions
SIMDPLAN_INLINE VecScalar vround(VecScalar a) { return {std::nearbyint(a.v)}; }
SIMDPLAN_INLINE VecScalar select(MaskScalar m, VecScalar a, VecScalar b) { return m.m ? a : b; }
// base[index] as a float; index holds an integer-valued float in [0, 2^24) (exact as a float). The
// SIMD versions read 4 bytes per lane, so base needs 3 readable bytes after its last indexed one.
SIMDPLAN_INLINE VecScalar vgather_bytes(const uint8_t* base, VecScalar index) {
  return {float(base[static_cast<int32_t>(index.v)])};
}

}  // namespace simdplan::SIMDPLAN_NS
