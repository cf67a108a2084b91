// simdplan/collision/validity_one.hh: Clear(q) for ONE configuration, robot spheres in the lanes.
//
// The batch kernel (validity.hh) puts W configurations in the lanes; for a single configuration
// that wastes W - 1 lanes. Here forward kinematics runs in scalar float (one frame per body), and
// the lanes hold up to W spheres of one link group: placing them, testing them against an obstacle,
// or testing one sphere of another group against them is one vector operation per W spheres.
// Culling is as in the batch kernel: obstacle AABB, then group bounding sphere, then spheres.
//
// Scratch (caller-owned): body frames n_bodies * 12 floats, joint values dof, group bound centres
// n_groups * 3, then world sphere centres and padded radii as four arrays of n_spheres + kSoaPad
// floats (x..., y..., z..., r...).
#pragma once
#include "simdplan/collision/environment_view.hh"
#include "simdplan/config.hh"
#include "simdplan/collision/obstacles.hh"
#include "simdplan/kin/fk.hh"
#include "simdplan/kin/robot_view.hh"
#include "simdplan/vec/scalar.hh"

namespace simdplan::SIMDPLAN_NS {

inline int64_t one_scratch_floats(const RobotView& rb) {
  return int64_t(rb.n_bodies) * 12 + rb.dof + 3 * int64_t(rb.n_groups) + 4 * (int64_t(rb.n_spheres) + kSoaPad);
}

// true if any sphere of group g (world centres in wx/wy/wz, padded radii r_pad) penetrates obstacle
// idx (record o, or its own structure for a shape kind)
template <class V>
SIMDPLAN_INLINE bool group_spheres_hit(const RobotView& rb, const EnvironmentView& env, const float* wx,
                                       const float* wy, const float* wz, const float* r_pad, int32_t g, int32_t idx,
                                       int32_t kind, const float* o) {
  const int32_t begin = rb.group_begin[g], end = rb.group_end[g];
  for (int32_t k = begin; k < end; k += V::W) {
    const V x = V::load(wx + k), y = V::load(wy + k), z = V::load(wz + k), r = V::load(r_pad + k);
    if (is_shape_kind(kind)) {
      if (shape_hit_bits(env, idx, x, y, z, r, first_lanes<V>(end - k))) return true;
    } else if (obstacle_hit(kind, o, x, y, z, r).bits() & first_lanes<V>(end - k)) {
      return true;
    }
  }
  return false;
}

// Collision-free test of one configuration q (dof floats, limits already checked).
template <class V>
bool check_one(const RobotView& rb, const EnvironmentView& env, const float* q, float padding, float* scratch) {
  using S = VecScalar;
  float* frames = scratch;
  S* qs = reinterpret_cast<S*>(scratch + int64_t(rb.n_bodies) * 12);
  const int64_t stride = int64_t(rb.n_spheres) + kSoaPad;
  float* bcs = scratch + int64_t(rb.n_bodies) * 12 + rb.dof;  // group bound centres, 3 per group
  float* wx = bcs + 3 * int64_t(rb.n_groups);
  float* wy = wx + stride;
  float* wz = wy + stride;
  float* r_pad = wz + stride;
  const float* lx = rb.sphere_soa;
  const float* ly = lx + stride;
  const float* lz = ly + stride;
  const float* lr = lz + stride;
  for (int64_t k = 0; k < rb.n_spheres; k += V::W) (V::load(lr + k) + V::fill(padding)).store(r_pad + k);
  for (int32_t j = 0; j < rb.dof; ++j) qs[j] = S{q[j]};

  int32_t g = 0;
  for (int32_t b = 0; b < rb.n_bodies; ++b) {
    fk_body(rb, b, qs, reinterpret_cast<S*>(frames));
    const float* T = frames + 12 * b;
    const V t00 = V::fill(T[0]), t01 = V::fill(T[1]), t02 = V::fill(T[2]), t03 = V::fill(T[3]);
    const V t10 = V::fill(T[4]), t11 = V::fill(T[5]), t12 = V::fill(T[6]), t13 = V::fill(T[7]);
    const V t20 = V::fill(T[8]), t21 = V::fill(T[9]), t22 = V::fill(T[10]), t23 = V::fill(T[11]);
    for (; g < rb.n_groups && rb.group_body[g] == b; ++g) {
      for (int32_t k = rb.group_begin[g]; k < rb.group_end[g]; k += V::W) {
        const V x = V::load(lx + k), y = V::load(ly + k), z = V::load(lz + k);
        fmadd(t00, x, fmadd(t01, y, fmadd(t02, z, t03))).store(wx + k);
        fmadd(t10, x, fmadd(t11, y, fmadd(t12, z, t13))).store(wy + k);
        fmadd(t20, x, fmadd(t21, y, fmadd(t22, z, t23))).store(wz + k);
      }
      const float* gb = rb.group_bound + 4 * g;
      float* bc = bcs + 3 * g;
      for (int i = 0; i < 3; ++i) bc[i] = T[4 * i] * gb[0] + T[4 * i + 1] * gb[1] + T[4 * i + 2] * gb[2] + T[4 * i + 3];
      const float brad = gb[3] + padding;
      const float lo[3] = {bc[0] - brad, bc[1] - brad, bc[2] - brad};
      const float hi[3] = {bc[0] + brad, bc[1] + brad, bc[2] + brad};
      const bool hit = for_each_candidate<V>(env, lo, hi, [&](int32_t idx) {
        const int32_t kind = env.obstacle_kind[idx];
        const float* o = obstacle_data(env, idx);
        if (!obstacle_hit(record_kind(kind), o, S{bc[0]}, S{bc[1]}, S{bc[2]}, S{brad}).m) return false;
        if (kind == kObsCloud && brad <= env.clouds[env.obstacle_record[idx]].r_max &&
            !capt_hit_one<V>(env.clouds[env.obstacle_record[idx]], bc[0], bc[1], bc[2], brad))
          return false;
        if ((kind == kObsMesh || kind == kObsConvex) &&
            !shape_hit_bits(env, idx, V::fill(bc[0]), V::fill(bc[1]), V::fill(bc[2]), V::fill(brad), 1u))
          return false;
        return group_spheres_hit<V>(rb, env, wx, wy, wz, r_pad, g, idx, kind, o);
      });
      if (hit) return false;

      // self-collision with earlier groups: a's spheres (lanes) against g's bound, then each sphere
      // of a that can reach g against g's spheres (lanes)
      const V gbx = V::fill(bc[0]), gby = V::fill(bc[1]), gbz = V::fill(bc[2]), gbr = V::fill(brad);
      const int32_t gbegin = rb.group_begin[g], gend = rb.group_end[g];
      for (int32_t p = rb.pair_begin[g]; p < rb.pair_begin[g + 1]; ++p) {
        const int32_t a = rb.pairs[2 * p];
        const float* ac = bcs + 3 * a;
        const float dx = ac[0] - bc[0], dy = ac[1] - bc[1], dz = ac[2] - bc[2];
        const float rr = rb.group_bound[4 * a + 3] + padding + brad;
        if (!(dx * dx + dy * dy + dz * dz < rr * rr)) continue;
        const int32_t abegin = rb.group_begin[a], aend = rb.group_end[a];
        for (int32_t c = abegin; c < aend; c += V::W) {
          uint32_t near = sphere_sphere_hit2(V::load(wx + c), V::load(wy + c), V::load(wz + c), V::load(r_pad + c), gbx,
                                             gby, gbz, gbr).bits() &
                          first_lanes<V>(aend - c);
          while (near) {
            const int32_t i = c + __builtin_ctz(near);
            near &= near - 1;
            const V ix = V::fill(wx[i]), iy = V::fill(wy[i]), iz = V::fill(wz[i]), ir = V::fill(r_pad[i]);
            for (int32_t k = gbegin; k < gend; k += V::W) {
              const auto m = sphere_sphere_hit2(ix, iy, iz, ir, V::load(wx + k), V::load(wy + k), V::load(wz + k),
                                                V::load(r_pad + k));
              if (m.bits() & first_lanes<V>(gend - k)) return false;
            }
          }
        }
      }
    }
  }
  return true;
}

}  // namespace simdplan::SIMDPLAN_NS
