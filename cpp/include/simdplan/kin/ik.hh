// simdplan/kin/ik.hh: inverse kinematics, W restarts in the lanes of V (damped least squares).
//
// Each lane is one restart: a configuration q, its tip error e (position, then rotation) and its
// Jacobian J (6 x dof, world frame, from the kinematic program: a revolute body turns about its
// frame's z axis, a prismatic one slides along it). A step solves (J J^T + lambda I) y = e and moves
// q by J^T y (Levenberg-Marquardt damping; C. W. Wampler, "Manipulator inverse kinematic solutions
// based on vector formulations and damped least-squares methods", IEEE SMC 1986), at most max_step
// per joint, clamped into the joint limits (continuous joints wrap). A candidate is accepted when
// its squared error is smaller; lambda then halves, else it grows 4x and the lane tries again.
//
// Rotation error (B. Siciliano et al., "Robotics: Modelling, Planning and Control", 3.7.3): for the
// tip rotation R and the goal G, 0.5 sum_i R_i x G_i (columns) is the axis of the rotation left
// scaled by its sine; with one free axis k, R_k x G_k, and the rotation rows of J lose their
// component about R_k (turning about it changes nothing that matters). Converged: position error
// <= pos_tol and rotation left with sine <= sin_tol and cosine > 0.
#pragma once
#include <cmath>

#include "simdplan/config.hh"
#include "simdplan/kin/fk.hh"
#include "simdplan/kin/ik_kernels.hh"
#include "simdplan/kin/robot_view.hh"

namespace simdplan::SIMDPLAN_NS {

// vectors of scratch the solver needs (the caller aligns scratch to 64 bytes)
inline int64_t ik_scratch_vectors(const RobotView& rb) {
  return 12 * int64_t(rb.n_bodies) + 7 * int64_t(rb.dof) + 8;
}

// The tip error e (6 vectors) and Jacobian jac (6 x dof vectors) of the configurations in frames;
// returns the squared error, and sets pos (|position error|) and rot (sin of the rotation left, or
// 2 - sin when its cosine is <= 0, so it grows with the angle over [0, pi]).
template <class V>
SIMDPLAN_INLINE V ik_error(const RobotView& rb, const IkTask& t, const V* frames, V* e, V* jac, V& pos, V& rot) {
  const int dof = rb.dof;
  const V* B = frames + 12 * t.tip_body;
  V T[12];  // tip frame: B * tip
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) {
      V acc = (j == 3) ? B[4 * i + 3] : V::zero();
      for (int k = 0; k < 3; ++k) acc = fmadd(B[4 * i + k], V::fill(t.tip[4 * k + j]), acc);
      T[4 * i + j] = acc;
    }
  auto goal = [&](int k) { return V::load(t.lane_target + k * V::W); };
  e[0] = goal(3) - T[3], e[1] = goal(7) - T[7], e[2] = goal(11) - T[11];
  V cosv = V::fill(1.0f);
  if (t.mode == kIkPosition) {
    e[3] = e[4] = e[5] = V::zero();
  } else {
    V w[3] = {V::zero(), V::zero(), V::zero()};
    V dot = V::zero();
    const int k0 = t.mode == kIkFreeAxis ? t.axis : 0, k1 = t.mode == kIkFreeAxis ? t.axis + 1 : 3;
    for (int k = k0; k < k1; ++k) {  // R_k x G_k
      const V rx = T[k], ry = T[4 + k], rz = T[8 + k];
      const V gx = goal(k), gy = goal(4 + k), gz = goal(8 + k);
      w[0] = w[0] + (ry * gz - rz * gy);
      w[1] = w[1] + (rz * gx - rx * gz);
      w[2] = w[2] + (rx * gy - ry * gx);
      dot = fmadd(rx, gx, fmadd(ry, gy, fmadd(rz, gz, dot)));
    }
    if (t.mode == kIkPose) {
      for (int i = 0; i < 3; ++i) w[i] = w[i] * V::fill(0.5f);
      cosv = (dot - V::fill(1.0f)) * V::fill(0.5f);
    } else {
      cosv = dot;
    }
    e[3] = w[0], e[4] = w[1], e[5] = w[2];
  }
  for (int i = 0; i < 6 * dof; ++i) jac[i] = V::zero();
  for (int32_t b = t.tip_body; b > 0; b = rb.body_parent[b]) {
    const int32_t kind = rb.body_kind[b];
    if (kind == kBodyFixed) continue;
    const int32_t j = rb.body_dof[b];
    const V s = V::fill(rb.body_scale[b]);
    const V* F = frames + 12 * b;
    const V zx = F[2] * s, zy = F[6] * s, zz = F[10] * s;
    if (kind == kBodyPrismatic) {
      jac[0 * dof + j] = jac[0 * dof + j] + zx;
      jac[1 * dof + j] = jac[1 * dof + j] + zy;
      jac[2 * dof + j] = jac[2 * dof + j] + zz;
      continue;
    }
    const V dx = T[3] - F[3], dy = T[7] - F[7], dz = T[11] - F[11];
    jac[0 * dof + j] = jac[0 * dof + j] + (zy * dz - zz * dy);
    jac[1 * dof + j] = jac[1 * dof + j] + (zz * dx - zx * dz);
    jac[2 * dof + j] = jac[2 * dof + j] + (zx * dy - zy * dx);
    if (t.mode == kIkPosition) continue;
    jac[3 * dof + j] = jac[3 * dof + j] + zx;
    jac[4 * dof + j] = jac[4 * dof + j] + zy;
    jac[5 * dof + j] = jac[5 * dof + j] + zz;
  }
  if (t.mode == kIkFreeAxis) {  // drop the rotation about the tip's free axis a: Jw - a (a . Jw)
    const V ax = T[t.axis], ay = T[4 + t.axis], az = T[8 + t.axis];
    for (int j = 0; j < dof; ++j) {
      const V d = fmadd(ax, jac[3 * dof + j], fmadd(ay, jac[4 * dof + j], az * jac[5 * dof + j]));
      jac[3 * dof + j] = jac[3 * dof + j] - ax * d;
      jac[4 * dof + j] = jac[4 * dof + j] - ay * d;
      jac[5 * dof + j] = jac[5 * dof + j] - az * d;
    }
  }
  pos = vsqrt(fmadd(e[0], e[0], fmadd(e[1], e[1], e[2] * e[2])));
  const V sinv = vsqrt(fmadd(e[3], e[3], fmadd(e[4], e[4], e[5] * e[5])));
  rot = select(cosv > V::zero(), sinv, V::fill(2.0f) - sinv);
  V err = V::zero();
  for (int i = 0; i < 6; ++i) err = fmadd(e[i], e[i], err);
  return err;
}

template <class V>
uint32_t ik_iterate(const RobotView& rb, const IkTask& t, IkLanes& L, uint32_t active, int32_t iters, float* scratch) {
  using M = typename V::Mask;
  constexpr int W = V::W;
  const int dof = rb.dof;
  V* frames = reinterpret_cast<V*>(scratch);
  V* qv = frames + 12 * rb.n_bodies;
  V* jc = qv + dof;  // 6 x dof: the candidate's Jacobian
  V* ec = jc + 6 * dof;
  const uint32_t all = W >= 32 ? ~0u : (1u << W) - 1u;
  uint32_t done = 0;
  for (int32_t it = 0; it < iters; ++it) {
    const M live = M::from_bits(active & ~done & all);
    // evaluate the candidates
    for (int j = 0; j < dof; ++j) qv[j] = V::load(L.cand + j * W);
    for (int32_t b = 0; b <= t.tip_body; ++b) fk_body(rb, b, qv, frames);
    V pos, rot;
    const V err = ik_error(rb, t, frames, ec, jc, pos, rot);
    const V cur = V::load(L.error);
    const M take = live & (err < cur);
    const V lam = V::load(L.lambda);
    select(take, err, cur).store(L.error);
    select(take, vmax(lam * V::fill(0.5f), V::fill(1e-6f)), select(live, vmin(lam * V::fill(4.0f), V::fill(1e6f)), lam))
        .store(L.lambda);
    select(take, pos, V::load(L.pos_err)).store(L.pos_err);
    select(take, rot, V::load(L.sin_err)).store(L.sin_err);
    for (int j = 0; j < dof; ++j) select(take, qv[j], V::load(L.q + j * W)).store(L.q + j * W);
    for (int i = 0; i < 6; ++i) select(take, ec[i], V::load(L.err6 + i * W)).store(L.err6 + i * W);
    for (int i = 0; i < 6 * dof; ++i) select(take, jc[i], V::load(L.jac + i * W)).store(L.jac + i * W);
    // converged lanes are done
    const V p = V::load(L.pos_err), r = V::load(L.sin_err);
    M ok = p <= V::fill(t.pos_tol);
    if (t.mode != kIkPosition) ok = ok & (r <= V::fill(t.sin_tol));
    done |= (ok & M::from_bits(active)).bits() & active;
    if ((active & ~done & all) == 0) break;
    // the next candidates: q + J^T (J J^T + lambda I)^-1 e, from the accepted state
    const M go = M::from_bits(active & ~done & all);
    V A[21], Lc[21], e[6], y[6];
    const V lnow = V::load(L.lambda);
    // PERF: joint by joint into 21 accumulators, not one sum at a time: each sum was a chain of
    // dependent multiply-adds (the kernel's hottest loop in a profile). Same sums in the same order;
    // robot.ik on 300 reachable poses: panda 17.2 -> 16.2 us median, ur5 (6 dof) within noise.
    for (int i = 0, n = 0; i < 6; ++i) {
      e[i] = V::load(L.err6 + i * W);
      for (int k = 0; k <= i; ++k, ++n) A[n] = (i == k) ? lnow : V::zero();
    }
    for (int j = 0; j < dof; ++j) {
      V c[6];
      for (int i = 0; i < 6; ++i) c[i] = V::load(L.jac + (i * dof + j) * W);
      for (int i = 0, n = 0; i < 6; ++i)
        for (int k = 0; k <= i; ++k, ++n) A[n] = fmadd(c[i], c[k], A[n]);
    }
    // Cholesky: A = Lc Lc^T (packed lower triangle, row i at i (i + 1) / 2)
    for (int i = 0; i < 6; ++i) {
      for (int k = 0; k <= i; ++k) {
        V s = A[i * (i + 1) / 2 + k];
        for (int m = 0; m < k; ++m) s = s - Lc[i * (i + 1) / 2 + m] * Lc[k * (k + 1) / 2 + m];
        Lc[i * (i + 1) / 2 + k] = (i == k) ? vsqrt(vmax(s, V::fill(1e-12f))) : s / Lc[k * (k + 1) / 2 + k];
      }
    }
    for (int i = 0; i < 6; ++i) {  // Lc z = e
      V s = e[i];
      for (int m = 0; m < i; ++m) s = s - Lc[i * (i + 1) / 2 + m] * y[m];
      y[i] = s / Lc[i * (i + 1) / 2 + i];
    }
    for (int i = 5; i >= 0; --i) {  // Lc^T y = z
      V s = y[i];
      for (int m = i + 1; m < 6; ++m) s = s - Lc[m * (m + 1) / 2 + i] * y[m];
      y[i] = s / Lc[i * (i + 1) / 2 + i];
    }
    V biggest = V::zero();
    for (int j = 0; j < dof; ++j) {
      V d = V::zero();
      for (int i = 0; i < 6; ++i) d = fmadd(V::load(L.jac + (i * dof + j) * W), y[i], d);
      qv[j] = d;
      biggest = vmax(biggest, vabs(d));
    }
    const V cap = V::fill(t.max_step);
    const V scale = select(biggest > cap, cap / vmax(biggest, V::fill(1e-30f)), V::fill(1.0f));
    const V two_pi = V::fill(6.283185307179586f), inv = V::fill(0.15915494309189535f);
    for (int j = 0; j < dof; ++j) {
      V x = fmadd(qv[j], scale, V::load(L.q + j * W));
      if (t.wrap[j]) {
        x = x - two_pi * vround(x * inv);
      } else {
        x = vmin(vmax(x, V::fill(t.lower[j])), V::fill(t.upper[j]));
      }
      select(go, x, V::load(L.cand + j * W)).store(L.cand + j * W);
    }
  }
  return done;
}

}  // namespace simdplan::SIMDPLAN_NS
