// simdplan/vec/math.hh: sin and cos of a vector of angles (radians), one source for every ISA.
//
// Method: Cody-Waite reduction by pi/2 (three-part constant) to r in [-pi/4, pi/4], then minimax
// polynomials for sin and cos on that interval (coefficients as in Cephes sinf/cosf, S. Moshier),
// and the quadrant picks which polynomial and sign go where. Max error about 2 ulp for |x| < 1e4;
// callers reduce larger angles first (continuous joints are wrapped in double before conversion).
#pragma once
#include "simdplan/config.hh"

namespace simdplan::SIMDPLAN_NS {

template <class V>
SIMDPLAN_INLINE void vsincos(V x, V& s_out, V& c_out) {
  const V two_over_pi = V::fill(0.636619772367581343f);
  // pi/2 split so that j * part is exact for |j| < 2^11
  const V p1 = V::fill(1.5703125f);
  const V p2 = V::fill(4.837512969970703125e-4f);
  const V p3 = V::fill(7.54978995489188216e-8f);
  const V j = vround(x * two_over_pi);
  V r = fmadd(-j, p1, x);
  r = fmadd(-j, p2, r);
  r = fmadd(-j, p3, r);
  const V r2 = r * r;
  // sin(r) ~ r + r^3 * P(r^2),  cos(r) ~ 1 - r^2/2 + r^4 * Q(r^2)
  V sp = fmadd(V::fill(-1.9515295891e-4f), r2, V::fill(8.3321608736e-3f));
  sp = fmadd(sp, r2, V::fill(-1.6666654611e-1f));
  const V sin_r = fmadd(sp * r2, r, r);
  V cp = fmadd(V::fill(2.443315711809948e-5f), r2, V::fill(-1.388731625493765e-3f));
  cp = fmadd(cp, r2, V::fill(4.166664568298827e-2f));
  const V cos_r = fmadd(cp * r2, r2, fmadd(V::fill(-0.5f), r2, V::fill(1.0f)));
  // quadrant k = j mod 4 in {0,1,2,3}, computed in float (exact for the reduced range)
  const V k = j - V::fill(4.0f) * vfloor(j * V::fill(0.25f));
  const auto odd = (k == V::fill(1.0f)) | (k == V::fill(3.0f));
  const V s = select(odd, cos_r, sin_r);
  const V c = select(odd, sin_r, cos_r);
  const auto sin_neg = k >= V::fill(2.0f);
  const auto cos_neg = (k == V::fill(1.0f)) | (k == V::fill(2.0f));
  s_out = select(sin_neg, -s, s);
  c_out = select(cos_neg, -c, c);
}

}  // namespace simdplan::SIMDPLAN_NS
