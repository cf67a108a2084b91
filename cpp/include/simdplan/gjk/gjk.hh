// simdplan/gjk/gjk.hh: signed distance between a point or segment (sphere and capsule cores) and a
// convex hull in a pose, by GJK. Per-ISA templates (brute-force supports run in the ISA's vectors).
//
// Reference: E. G. Gilbert, D. W. Johnson, S. S. Keerthi, "A fast procedure for computing the
// distance between complex objects in three-dimensional space", IEEE Journal of Robotics and
// Automation 4(2):193-203, 1988, doi:10.1109/56.2083. Support points: gjk/support.hh (brute force,
// or hill climbing on Greer's packed cache-line layout, arXiv:2509.03753).
//
// Frames: the query arrives in the world frame (metres); the hull is given in its own frame with
// a pose world = R local + t. Everything below runs in the hull frame, in double: the query is
// mapped in by R^T (q - t) and the witness out by R w + t. R is trusted to be a rotation (the
// binding checks it to 1e-6).
//
// What it computes. For the segment S = [a, b] (a == b: a point) and the hull H:
//   S and H disjoint:  d = dist(S, H) > 0, witness = the point of H nearest S (status Separated);
//   S meets H:         d = -depth, depth = the shortest translation that separates S from H,
//                      witness = a point of H's boundary at that contact (status Penetrating);
// and the sphere / capsule clearance is d - radius: the exact signed distance between the swept
// shape and H (negative = overlap). Touching is clearance 0.
//
// Method. GJK on the Minkowski difference D = H - S, whose support in direction u is
// support_H(u) - (a or b, whichever has the smaller u . x): keep a simplex of at most 4 points of
// D and its point v nearest the origin (Johnson's sub-problem, solved by Voronoi regions of the
// segment / triangle / tetrahedron in double); ask for w = support_D(-v); stop when
// |v|^2 - v . w <= eps |v|, eps = 1e-9 |v| + 1e-10 L (L = hull scale + |query|): then the true
// distance lies in [|v| - eps, |v|] and |v| is returned. It also stops when w is already in the
// simplex (a polytope's GJK ends this way, in finitely many steps), when |v| stops decreasing
// (rounding), and after kGjkMaxIterations (status Iterations, |v| an upper bound; not seen in the
// tests). Supports are found in double (gjk_support below: GJK needs the true maximiser, not the
// float one of support.hh). The first support of a query climbs from the best of the six axis
// extremes and the previous query's last support vertex (batches of nearby queries start close);
// later ones from the previous support vertex, a step or two from their goal.
// When the simplex encloses the origin or |v| <= 1e-12 L, S touches or crosses H and the depth
// is computed exactly from the hull's facets: depth = min over unit normals n of
// h_D(n) = h_H(n) - min(n . a, n . b), where the minimum is attained at a facet normal of D:
// every triangle normal of H (h_H = its plane offset) and, for a segment, every silhouette edge of
// H seen along s = b - a (its two triangles' normals n1, n2 with n1 . s and n2 . s of opposite
// signs), whose normal perpendicular to s and to the edge is |n2 . s| n1 + |n1 . s| n2. Cost O(F)
// for a point, O(F + E) for a segment, paid only by overlapping queries. The witness of a point
// inside is its projection onto the nearest facet plane (on H: the ball of radius depth around
// the point lies in H); of a segment, the point of H nearest the segment moved out by depth +
// 1e-6 L along the separating normal (a GJK of its own, within ~1e-6 L of the contact).
//
// Accuracy: the vertices are float32 and are used exactly; the distance is within 1e-9 d +
// 1e-10 L of the exact distance of the float32 hull (plus double rounding); depths are exact up to
// double rounding of the facet planes. Tests compare with coal (tests/test_gjk.py).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "simdplan/config.hh"
#include "simdplan/gjk/gjk_kernels.hh"
#include "simdplan/gjk/hull_view.hh"
#include "simdplan/gjk/support.hh"

namespace simdplan::SIMDPLAN_NS {

constexpr int kGjkMaxIterations = 128;
constexpr double kGjkRelTol = 1e-9;
constexpr double kGjkAbsTol = 1e-10;   // of L
constexpr double kGjkTouchTol = 1e-12; // of L
constexpr double kGjkWitnessShift = 1e-6;  // of L

struct GjkPoint {
  double w[3];   // hp - the segment end used
  double hp[3];  // the hull vertex
  int32_t hid;   // hull vertex index
  int32_t sid;   // segment end: 0 = a, 1 = b
};

struct GjkSimplex {
  GjkPoint p[4];
  double lam[4];
  int k;
};

struct GjkResult {
  double distance;   // signed, see the preamble
  double hull[3];    // witness on the hull, hull frame
  int32_t status;    // GjkStatus
  int32_t iterations;
};

SIMDPLAN_INLINE double gdot(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
SIMDPLAN_INLINE void gcross(const double* a, const double* b, double* o) {
  o[0] = a[1] * b[2] - a[2] * b[1];
  o[1] = a[2] * b[0] - a[0] * b[2];
  o[2] = a[0] * b[1] - a[1] * b[0];
}

// The nearest point of a sub-simplex to the origin: which vertices (indices into the simplex)
// carry it, with their barycentric weights.
struct GjkSub {
  int k;
  int idx[3];
  double lam[3];
};

// segment [A, B]
inline GjkSub gjk_closest_segment(const double* A, const double* B, int ia, int ib) {
  const double ab[3] = {B[0] - A[0], B[1] - A[1], B[2] - A[2]};
  const double den = gdot(ab, ab);
  const double t = den > 0 ? -gdot(A, ab) / den : 0.0;
  if (t <= 0) return {1, {ia, 0, 0}, {1, 0, 0}};
  if (t >= 1) return {1, {ib, 0, 0}, {1, 0, 0}};
  return {2, {ia, ib, 0}, {1 - t, t, 0}};
}

inline double gjk_sub_norm2(const GjkSimplex& s, const GjkSub& r) {
  double v[3] = {0, 0, 0};
  for (int i = 0; i < r.k; ++i)
    for (int c = 0; c < 3; ++c) v[c] += r.lam[i] * s.p[r.idx[i]].w[c];
  return gdot(v, v);
}

// triangle (A, B, C): the Voronoi-region walk of the closest-point-on-triangle test, with the
// query at the origin
inline GjkSub gjk_closest_triangle(const GjkSimplex& s, int ia, int ib, int ic) {
  const double* A = s.p[ia].w;
  const double* B = s.p[ib].w;
  const double* C = s.p[ic].w;
  const double ab[3] = {B[0] - A[0], B[1] - A[1], B[2] - A[2]};
  const double ac[3] = {C[0] - A[0], C[1] - A[1], C[2] - A[2]};
  const double d1 = -gdot(ab, A), d2 = -gdot(ac, A);
  if (d1 <= 0 && d2 <= 0) return {1, {ia, 0, 0}, {1, 0, 0}};
  const double d3 = -gdot(ab, B), d4 = -gdot(ac, B);
  if (d3 >= 0 && d4 <= d3) return {1, {ib, 0, 0}, {1, 0, 0}};
  const double vc = d1 * d4 - d3 * d2;
  if (vc <= 0 && d1 >= 0 && d3 <= 0) {
    const double den = d1 - d3;
    const double t = den > 0 ? d1 / den : 0.0;
    return {2, {ia, ib, 0}, {1 - t, t, 0}};
  }
  const double d5 = -gdot(ab, C), d6 = -gdot(ac, C);
  if (d6 >= 0 && d5 <= d6) return {1, {ic, 0, 0}, {1, 0, 0}};
  const double vb = d5 * d2 - d1 * d6;
  if (vb <= 0 && d2 >= 0 && d6 <= 0) {
    const double den = d2 - d6;
    const double t = den > 0 ? d2 / den : 0.0;
    return {2, {ia, ic, 0}, {1 - t, t, 0}};
  }
  const double va = d3 * d6 - d5 * d4;
  if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
    const double den = (d4 - d3) + (d5 - d6);
    const double t = den > 0 ? (d4 - d3) / den : 0.0;
    return {2, {ib, ic, 0}, {1 - t, t, 0}};
  }
  const double sum = va + vb + vc;
  if (!(sum > 0)) {
    // NOTE: a degenerate (collinear) triangle can fall through every region test; its nearest
    // point is on one of its edges
    GjkSub best = gjk_closest_segment(A, B, ia, ib);
    double bn = gjk_sub_norm2(s, best);
    for (const GjkSub& r : {gjk_closest_segment(A, C, ia, ic), gjk_closest_segment(B, C, ib, ic)}) {
      const double n2 = gjk_sub_norm2(s, r);
      if (n2 < bn) bn = n2, best = r;
    }
    return best;
  }
  const double v = vb / sum, w = vc / sum;
  return {3, {ia, ib, ic}, {1 - v - w, v, w}};
}

// Reduces the simplex to the vertices carrying its point nearest the origin; returns true when a
// (non-degenerate) tetrahedron encloses the origin.
inline bool gjk_reduce(GjkSimplex& s) {
  GjkSub r;
  if (s.k == 1) {
    s.lam[0] = 1;
    return false;
  }
  if (s.k == 2) {
    r = gjk_closest_segment(s.p[0].w, s.p[1].w, 0, 1);
  } else if (s.k == 3) {
    r = gjk_closest_triangle(s, 0, 1, 2);
  } else {
    static constexpr int kFace[4][4] = {{0, 1, 2, 3}, {0, 1, 3, 2}, {0, 2, 3, 1}, {1, 2, 3, 0}};
    const double* P0 = s.p[0].w;
    double e[3][3], len2 = 0;
    for (int i = 0; i < 3; ++i) {
      for (int c = 0; c < 3; ++c) e[i][c] = s.p[i + 1].w[c] - P0[c];
      len2 = std::max(len2, gdot(e[i], e[i]));
    }
    double n0[3];
    gcross(e[0], e[1], n0);
    const double vol = gdot(n0, e[2]);
    // NOTE: a flat tetrahedron cannot tell inside from outside: take the best face
    const bool flat = !(std::fabs(vol) > 1e-12 * len2 * std::sqrt(len2));
    bool any = false;
    double bn = std::numeric_limits<double>::infinity();
    for (const auto& f : kFace) {
      const double* A = s.p[f[0]].w;
      const double* B = s.p[f[1]].w;
      const double* C = s.p[f[2]].w;
      const double* O = s.p[f[3]].w;
      const double ab[3] = {B[0] - A[0], B[1] - A[1], B[2] - A[2]};
      const double ac[3] = {C[0] - A[0], C[1] - A[1], C[2] - A[2]};
      const double ao[3] = {O[0] - A[0], O[1] - A[1], O[2] - A[2]};
      double n[3];
      gcross(ab, ac, n);
      const double side_origin = -gdot(n, A), side_other = gdot(n, ao);
      if (!flat && !(side_origin * side_other < 0)) continue;
      any = true;
      const GjkSub t = gjk_closest_triangle(s, f[0], f[1], f[2]);
      const double n2 = gjk_sub_norm2(s, t);
      if (n2 < bn) bn = n2, r = t;
    }
    if (!any) return true;
  }
  GjkPoint keep[3];
  for (int i = 0; i < r.k; ++i) keep[i] = s.p[r.idx[i]];
  for (int i = 0; i < r.k; ++i) s.p[i] = keep[i], s.lam[i] = r.lam[i];
  s.k = r.k;
  return false;
}

// Depth of the segment [a, b] in the hull (> 0 iff it crosses the interior), with the normal
// of the separating direction: min over the candidate normals of the preamble.
// (value, index) of a running minimum, branch-free (see keep_best in support.hh)
struct GjkMinAt {
  double value;
  int32_t index;
};
SIMDPLAN_INLINE void gjk_keep_min(GjkMinAt& m, double v, int32_t i) {
  const int32_t lt = -int32_t(v < m.value);
  m.index = (i & lt) | (m.index & ~lt);
  m.value = v < m.value ? v : m.value;
}

// Depth of a point a inside the hull: min over triangles of h - n . a, and its plane's normal. A
// float32 pass over plane_soa finds the least value W triangles at a time; only the triangles
// within its rounding bound of that value are evaluated again in double, so the result is the
// double scan's. PERF: a point inside a 5,000-vertex hull (about 10k triangles) took 33 us with
// the double scan alone (bench_gjk 2b, AVX-512).
template <class V>
inline double gjk_point_depth(const HullView& h, const double* a, double* n_out) {
  const int32_t fp = h.n_faces_padded;
  const float* nx = h.plane_soa;
  const float* ny = nx + fp;
  const float* nz = ny + fp;
  const float* hh = nz + fp;
  const V ax = V::fill(float(a[0])), ay = V::fill(float(a[1])), az = V::fill(float(a[2]));
  V m = V::fill(HUGE_VALF);
  for (int32_t f = 0; f < h.n_faces; f += V::W)
    m = vmin(m, V::load(hh + f) - (V::load(nx + f) * ax + V::load(ny + f) * ay + V::load(nz + f) * az));
  // Each float value is within d of its double value, d < 1e-6 (scale + |a|_inf) (the planes' and
  // the products' rounding, |h| <= sqrt(3) scale): the double minimum's triangle is within 2d of the
  // float minimum. 4e-6 leaves room.
  const double amax = std::max({std::fabs(a[0]), std::fabs(a[1]), std::fabs(a[2])});
  const float tol = float(4e-6 * (1.0 + h.scale + amax));
  const V lim = V::fill(m.hmin() + tol);
  double best = std::numeric_limits<double>::infinity();
  int32_t best_face = 0;
  for (int32_t f = 0; f < h.n_faces; f += V::W) {
    const V val = V::load(hh + f) - (V::load(nx + f) * ax + V::load(ny + f) * ay + V::load(nz + f) * az);
    for (uint32_t bits = (val <= lim).bits(); bits; bits &= bits - 1) {
      const int32_t g = f + __builtin_ctz(bits);
      if (g >= h.n_faces) break;
      const double* pl = h.face_plane + 4 * g;
      const double v = pl[3] - gdot(pl, a);
      if (v < best) best = v, best_face = g;
    }
  }
  const double* bp = h.face_plane + 4 * best_face;
  n_out[0] = bp[0], n_out[1] = bp[1], n_out[2] = bp[2];
  return best;
}

inline double gjk_depth(const HullView& h, const double* a, const double* b, double* n_out) {
  // NOTE: four running minima over the triangles: one chains every compare on the previous select
  // (PERF: a point in a 20k-triangle hull, 67 -> 36 us)
  const GjkMinAt none{std::numeric_limits<double>::infinity(), 0};
  GjkMinAt m[4] = {none, none, none, none};
  const double s[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
  const bool segment = gdot(s, s) > 0;
  std::vector<double> ns(segment ? size_t(h.n_faces) : 0);  // n . s per triangle, for the edges
  const int32_t nf = h.n_faces;
  int32_t f = 0;
  if (!segment) {
    for (; f + 3 < nf; f += 4)
      for (int k = 0; k < 4; ++k) {
        const double* pl = h.face_plane + 4 * (f + k);
        gjk_keep_min(m[k], pl[3] - gdot(pl, a), f + k);
      }
    for (; f < nf; ++f) gjk_keep_min(m[0], h.face_plane[4 * f + 3] - gdot(h.face_plane + 4 * f, a), f);
  } else {
    auto one = [&](GjkMinAt& mk, int32_t g) {
      const double* pl = h.face_plane + 4 * g;
      const double fa = gdot(pl, a), fb = gdot(pl, b);
      ns[size_t(g)] = fb - fa;
      gjk_keep_min(mk, pl[3] - (fa < fb ? fa : fb), g);
    };
    for (; f + 3 < nf; f += 4)
      for (int k = 0; k < 4; ++k) one(m[k], f + k);
    for (; f < nf; ++f) one(m[0], f);
  }
  for (int k = 1; k < 4; ++k) gjk_keep_min(m[0], m[k].value, m[k].index);
  double best = m[0].value;
  const int32_t best_face = m[0].index;
  const double* bp = h.face_plane + 4 * best_face;
  n_out[0] = bp[0], n_out[1] = bp[1], n_out[2] = bp[2];
  if (!segment) return best;
  for (int32_t e = 0; e < h.n_edges; ++e) {
    const int32_t* ed = h.edge + 4 * e;
    const double p1 = ns[size_t(ed[2])], p2 = ns[size_t(ed[3])];
    if (!((p1 > 0 && p2 < 0) || (p1 < 0 && p2 > 0))) continue;
    const double* n1 = h.face_plane + 4 * ed[2];
    const double* n2 = h.face_plane + 4 * ed[3];
    double mn[3] = {std::fabs(p2) * n1[0] + std::fabs(p1) * n2[0], std::fabs(p2) * n1[1] + std::fabs(p1) * n2[1],
                   std::fabs(p2) * n1[2] + std::fabs(p1) * n2[2]};
    const double len = std::sqrt(gdot(mn, mn));
    if (!(len > 0)) continue;
    for (double& c : mn) c /= len;
    const double v0[3] = {h.x[ed[0]], h.y[ed[0]], h.z[ed[0]]};
    const double val = gdot(mn, v0) - std::min(gdot(mn, a), gdot(mn, b));
    if (val < best) best = val, n_out[0] = mn[0], n_out[1] = mn[1], n_out[2] = mn[2];
  }
  return best;
}

// Steepest ascent in double from v over either layout: on a convex hull it ends at the true
// maximiser of dot(v, d), up to double rounding (~1e-16 of the scale); see gjk/support.hh for why
// a local maximum of the vertex graph is global.
template <class G>
SIMDPLAN_INLINE int32_t gjk_climb_double(const G& g, int32_t v, const double* d) {
  double fv = g.dot_double(v, d);
  for (;;) {
    int32_t best = v;
    double fb = fv;
    g.for_neighbours(v, [&](int32_t w) {
      const double f = g.dot_double(w, d);
      // NOTE: branch-free (mask arithmetic; see keep_best in support.hh)
      const int32_t up = -int32_t(f > fb);
      best = (w & up) | (best & ~up);
      fb = f > fb ? f : fb;
    });
    if (best == v) return v;
    v = best;
    fv = fb;
  }
}

// GJK's support: a vertex maximising dot(v, d) for the double direction d, found in double.
// NOTE: not the float queries of support.hh: GJK needs the true maximiser, not the float one,
// and at its last iterations -v is a face normal, so the face's vertices tie in float every time
// (their float certification fails and the plateau search ran on almost every call). Climbs
// start at the best of the six axis extremes and the previous support vertex (`hint`), which
// later iterations make one or two steps away. Brute force finds the float maximiser with SIMD,
// then a double climb on the plain adjacency settles any near-tie.
template <class V>
SIMDPLAN_INLINE int32_t gjk_support(const HullView& h, int32_t method, const double* d, int32_t hint, bool cold) {
  if (method == kSupportBrute) {
    const double big = std::max({std::fabs(d[0]), std::fabs(d[1]), std::fabs(d[2])});
    const double k = big > 0 ? 1.0 / big : 1.0;  // |components| <= 1: no overflow, no needless underflow
    const int32_t s = support_brute<V>(h, float(d[0] * k), float(d[1] * k), float(d[2] * k)).index;
    return gjk_climb_double(PlainGraph{h, 0, 0, 0}, s, d);
  }
  auto start = [&](const auto& g) {
    int32_t best = hint >= 0 ? hint : h.extreme[0];
    if (!cold) return best;
    double fb = g.dot_double(best, d);
    for (int k = 0; k < 6; ++k) {
      const double f = g.dot_double(h.extreme[k], d);
      const int32_t up = -int32_t(f > fb);
      best = (h.extreme[k] & up) | (best & ~up);
      fb = f > fb ? f : fb;
    }
    return best;
  };
  if (method == kSupportPacked) {
    // NOTE: artificial edges for the first support of a query only; later ones start a step or two
    // from their goal, where the long edges are 19 extra dot products per step that never win
    const PackedGraph g{h, 0, 0, 0, cold};
    return gjk_climb_double(g, start(g), d);
  }
  const PlainGraph g{h, 0, 0, 0};
  return gjk_climb_double(g, start(g), d);
}

// GJK between the segment [a, b] (hull frame) and the hull; *hint carries the last support
// vertex between calls (-1: none). `witness_gjk`: a crossing segment's witness may take a second
// GJK (never more: that one passes false).
template <class V>
GjkResult gjk_segment_hull(const HullView& h, int32_t method, const double* a, const double* b, int32_t* hint,
                           bool witness_gjk = true) {
  const double L = h.scale + std::max({std::fabs(a[0]), std::fabs(a[1]), std::fabs(a[2]), std::fabs(b[0]),
                                       std::fabs(b[1]), std::fabs(b[2])});
  bool cold = true;  // the first support of this query: warm start at the axis extremes too
  auto support = [&](const double* d, GjkPoint& out) {
    const int32_t idx = gjk_support<V>(h, method, d, *hint, cold);
    *hint = idx;
    cold = false;
    out.hid = idx;
    out.hp[0] = h.x[idx], out.hp[1] = h.y[idx], out.hp[2] = h.z[idx];
    out.sid = gdot(d, b) < gdot(d, a) ? 1 : 0;
    const double* q = out.sid ? b : a;
    for (int c = 0; c < 3; ++c) out.w[c] = out.hp[c] - q[c];
  };
  GjkResult res{};
  GjkSimplex s;
  double d0[3] = {0.5 * (a[0] + b[0]) - h.centroid[0], 0.5 * (a[1] + b[1]) - h.centroid[1],
                  0.5 * (a[2] + b[2]) - h.centroid[2]};
  if (!(gdot(d0, d0) > 0)) d0[0] = 1.0;
  support(d0, s.p[0]);
  s.lam[0] = 1.0;
  s.k = 1;
  double v[3] = {s.p[0].w[0], s.p[0].w[1], s.p[0].w[2]};
  bool touching = false, contained = false;
  res.status = kGjkIterations;
  int it = 0;
  const double touch2 = (kGjkTouchTol * L) * (kGjkTouchTol * L);
  for (; it < kGjkMaxIterations; ++it) {
    const double vv = gdot(v, v);
    if (vv <= touch2) {
      touching = true;
      break;
    }
    GjkPoint w;
    const double nd[3] = {-v[0], -v[1], -v[2]};
    support(nd, w);
    const double nv = std::sqrt(vv);
    if (vv - gdot(v, w.w) <= (kGjkRelTol * nv + kGjkAbsTol * L) * nv) {
      res.status = kGjkSeparated;
      break;
    }
    bool dup = false;
    for (int i = 0; i < s.k; ++i) dup |= s.p[i].hid == w.hid && s.p[i].sid == w.sid;
    if (dup) {
      res.status = kGjkSeparated;
      break;
    }
    GjkSimplex before = s;
    s.p[s.k++] = w;
    if (gjk_reduce(s)) {
      touching = contained = true;
      s = before;  // the witness below then comes from the last simplex that did not enclose it
      break;
    }
    double vn[3] = {0, 0, 0};
    for (int i = 0; i < s.k; ++i)
      for (int c = 0; c < 3; ++c) vn[c] += s.lam[i] * s.p[i].w[c];
    if (!(gdot(vn, vn) < vv)) {  // rounding: no more progress
      s = before;
      res.status = kGjkSeparated;
      break;
    }
    v[0] = vn[0], v[1] = vn[1], v[2] = vn[2];
  }
  res.iterations = it;
  for (int c = 0; c < 3; ++c) {
    res.hull[c] = 0;
    for (int i = 0; i < s.k; ++i) res.hull[c] += s.lam[i] * s.p[i].hp[c];
  }
  if (!touching) {
    res.distance = std::sqrt(gdot(v, v));
    return res;
  }
  double n[3] = {0, 0, 1};
  const bool point = a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
  const double depth = point ? gjk_point_depth<V>(h, a, n) : gjk_depth(h, a, b, n);
  // the segment end deepest along n
  const double* q = gdot(n, b) < gdot(n, a) ? b : a;
  if (!(depth > 0)) {
    // touching, not crossing: -depth is a lower bound of the (tiny) distance; the simplex's
    // witness stands unless the simplex enclosed the origin
    res.status = kGjkSeparated;
    res.distance = std::max(-depth, 0.0);
    if (contained)
      for (int c = 0; c < 3; ++c) res.hull[c] = q[c];
    return res;
  }
  res.status = kGjkPenetrating;
  res.distance = -depth;
  if (point) {
    for (int c = 0; c < 3; ++c) res.hull[c] = a[c] + depth * n[c];
    return res;
  }
  // the deepest end moved out to the supporting plane: the contact unless S runs parallel to it
  for (int c = 0; c < 3; ++c) res.hull[c] = q[c] + depth * n[c];
  if (!witness_gjk) return res;
  const double shift = depth + kGjkWitnessShift * L;
  const double a2[3] = {a[0] + shift * n[0], a[1] + shift * n[1], a[2] + shift * n[2]};
  const double b2[3] = {b[0] + shift * n[0], b[1] + shift * n[1], b[2] + shift * n[2]};
  int32_t hint2 = *hint;
  const GjkResult out = gjk_segment_hull<V>(h, method, a2, b2, &hint2, false);
  if (out.status != kGjkPenetrating)
    for (int c = 0; c < 3; ++c) res.hull[c] = out.hull[c];
  return res;
}

// world -> hull frame: R^T (q - t)
SIMDPLAN_INLINE void gjk_to_local(const GjkPose& p, const double* q, double* out) {
  const double d[3] = {q[0] - p.t[0], q[1] - p.t[1], q[2] - p.t[2]};
  for (int c = 0; c < 3; ++c) out[c] = p.r[c] * d[0] + p.r[3 + c] * d[1] + p.r[6 + c] * d[2];
}

// hull frame -> world: R w + t
SIMDPLAN_INLINE void gjk_to_world(const GjkPose& p, const double* w, double* out) {
  for (int c = 0; c < 3; ++c) out[c] = p.r[3 * c] * w[0] + p.r[3 * c + 1] * w[1] + p.r[3 * c + 2] * w[2] + p.t[c];
}

// m spheres or capsules (a == b for spheres): clearance = signed distance - radius
template <class V>
void gjk_batch(const HullView& h, const GjkPose& pose, int32_t method, const double* a, const double* b,
               const double* radii, int64_t m, double* clearance, double* witness, int32_t* status) {
  if (method == kSupportAuto) method = h.n >= kGjkPackedMinVertices && h.lines ? kSupportPacked : kSupportPlain;
  if (method == kSupportPacked && !h.lines) method = kSupportPlain;
  int32_t hint = -1;  // NOTE: carried across the batch: neighbouring queries start near each other
  for (int64_t i = 0; i < m; ++i) {
    double la[3], lb[3];
    gjk_to_local(pose, a + 3 * i, la);
    if (b) {
      gjk_to_local(pose, b + 3 * i, lb);
    } else {
      lb[0] = la[0], lb[1] = la[1], lb[2] = la[2];
    }
    const GjkResult r = gjk_segment_hull<V>(h, method, la, lb, &hint);
    clearance[i] = r.distance - radii[i];
    gjk_to_world(pose, r.hull, witness + 3 * i);
    if (status) status[i] = r.status;
  }
}

}  // namespace simdplan::SIMDPLAN_NS
