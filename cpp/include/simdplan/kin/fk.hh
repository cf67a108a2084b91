// simdplan/kin/fk.hh: batched forward kinematics, W configurations in the lanes of V.
//
// Data layout (structure of arrays): a body frame is 12 vectors (row-major 3 x 4 [R | t]), lane l
// of each vector belonging to configuration l. Frames are written to caller scratch in body order
// so a later body reads its parent's frame. See kin/robot_view.hh for the program's meaning.
#pragma once
#include "simdplan/config.hh"
#include "simdplan/kin/robot_view.hh"
#include "simdplan/vec/math.hh"

namespace simdplan::SIMDPLAN_NS {

// frames[12 b .. 12 b + 11] = T_body(b) for every lane; needs the parent frame already computed.
// PERF: origins whose rotation is a signed permutation (RobotView::body_axes) take parent columns
// as they are and fold their signs into sin and cos; the general product runs the same terms in the
// same order (zero terms add exact zeros), so both paths give the same bits.
// the joint value of body b (scale q[dof] + offset) per lane
template <class V>
SIMDPLAN_INLINE V body_value(const RobotView& rb, int32_t b, const V* qv) {
  return fmadd(qv[rb.body_dof[b]], V::fill(rb.body_scale[b]), V::fill(rb.body_offset[b]));
}

template <class V>
SIMDPLAN_INLINE void fk_body(const RobotView& rb, int32_t b, const V* qv, V* frames) {
  const float* o = rb.body_origin + 12 * b;
  V* T = frames + 12 * b;
  const int32_t p = rb.body_parent[b];
  const int32_t kind = rb.body_kind[b];
  const int32_t axes = rb.body_axes[b];
  if (p >= 0 && axes == kAxesPermutation) {
    const V* P = frames + 12 * p;
    // PERF: rows and signs read from tables made at load (RobotView::body_perm, body_sign), not
    // decoded here per batch: planning instructions -1.1% ur5, -1.2% panda, -1.9% fetch, -1.6%
    // baxter (callgrind, AVX2).
    const int32_t* perm = rb.body_perm + 4 * b;
    const float* sign = rb.body_sign + 4 * b;
    const int k0 = perm[0], k1 = perm[1], k2 = perm[2], moved = perm[3];
    const float g0 = sign[0], g1 = sign[1], g2 = sign[2];
    for (int i = 0; i < 3; ++i) {  // translation: P t + P[:, 3], terms z, y, x as in the general product
      V acc = P[4 * i + 3];
      if (moved & 4) acc = fmadd(P[4 * i + 2], V::fill(o[11]), acc);
      if (moved & 2) acc = fmadd(P[4 * i + 1], V::fill(o[7]), acc);
      if (moved & 1) acc = fmadd(P[4 * i], V::fill(o[3]), acc);
      T[4 * i + 3] = acc;
    }
    if (kind == kBodyRevolute) {
      V s, c;
      vsincos(body_value(rb, b, qv), s, c);
      // columns 0, 1 of (P R) Rz: c (g0 P_k0) + s (g1 P_k1) and c (g1 P_k1) - s (g0 P_k0)
      const V c0 = c * V::fill(g0), s0 = s * V::fill(g0), c1 = c * V::fill(g1), s1 = s * V::fill(g1);
      for (int i = 0; i < 3; ++i) {
        const V a = P[4 * i + k0], bb = P[4 * i + k1];
        T[4 * i] = fmadd(c0, a, s1 * bb);
        T[4 * i + 1] = fmadd(c1, bb, -(s0 * a));
        T[4 * i + 2] = P[4 * i + k2] * V::fill(g2);
      }
      return;
    }
    for (int i = 0; i < 3; ++i) {
      T[4 * i] = P[4 * i + k0] * V::fill(g0);
      T[4 * i + 1] = P[4 * i + k1] * V::fill(g1);
      T[4 * i + 2] = P[4 * i + k2] * V::fill(g2);
    }
    if (kind == kBodyPrismatic) {
      const V value = body_value(rb, b, qv);
      for (int i = 0; i < 3; ++i) T[4 * i + 3] = fmadd(value, T[4 * i + 2], T[4 * i + 3]);
    }
    return;
  }
  if (p < 0) {
    for (int k = 0; k < 12; ++k) T[k] = V::fill(o[k]);
  } else {
    const V* P = frames + 12 * p;
    for (int i = 0; i < 3; ++i) {
      const V a = P[4 * i], bb = P[4 * i + 1], c = P[4 * i + 2];
      for (int j = 0; j < 4; ++j) {
        V acc = fmadd(c, V::fill(o[8 + j]), (j == 3) ? P[4 * i + 3] : V::zero());
        acc = fmadd(bb, V::fill(o[4 + j]), acc);
        T[4 * i + j] = fmadd(a, V::fill(o[j]), acc);
      }
    }
  }
  if (kind == kBodyFixed) return;
  const V value = body_value(rb, b, qv);
  if (kind == kBodyRevolute) {
    V s, c;
    vsincos(value, s, c);
    // T * Rz(value): column 0 <- c col0 + s col1, column 1 <- c col1 - s col0
    for (int i = 0; i < 3; ++i) {
      const V c0 = T[4 * i], c1 = T[4 * i + 1];
      T[4 * i] = fmadd(c, c0, s * c1);
      T[4 * i + 1] = fmadd(c, c1, -(s * c0));
    }
  } else {  // prismatic along local z
    for (int i = 0; i < 3; ++i) T[4 * i + 3] = fmadd(value, T[4 * i + 2], T[4 * i + 3]);
  }
}

// world point of a body-frame point (lx, ly, lz) under frame T, per lane
template <class V>
SIMDPLAN_INLINE void fk_point(const V* T, float lx, float ly, float lz, V& x, V& y, V& z) {
  const V X = V::fill(lx), Y = V::fill(ly), Z = V::fill(lz);
  x = fmadd(T[0], X, fmadd(T[1], Y, fmadd(T[2], Z, T[3])));
  y = fmadd(T[4], X, fmadd(T[5], Y, fmadd(T[6], Z, T[7])));
  z = fmadd(T[8], X, fmadd(T[9], Y, fmadd(T[10], Z, T[11])));
}

}  // namespace simdplan::SIMDPLAN_NS
