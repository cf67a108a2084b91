// simdplan/gjk/support.hh: support points of a convex hull, support(d) = argmax_v dot(v, d).
//
// Three ways over one HullView (layout in gjk/hull_view.hh; hull frame, float32):
//   support_brute<V>    every vertex, W at a time (SoA loads), two running (max, block) pairs.
//                       Returns the FIRST maximiser in index order (as numpy.argmax). O(n).
//   support_climb<V>    steepest-ascent hill climbing on the plain CSR adjacency (PlainGraph) or on
//                       the packed cache lines (PackedGraph), warm-started at the best of the six
//                       axis-extreme vertices (and an optional hint). O(steps x degree).
// Every method evaluates dot(v, d) as (x * dx + y * dy) + z * dz in float32, unfused (the kernels
// are compiled with -ffp-contract=off), so all of them agree with brute force on the max value
// exactly; with ties they may return different vertices.
//
// Why the climb returns a true maximiser. On the boundary of a convex polytope, triangulated over
// its vertices, a vertex that does not maximise a linear g(v) = v . d has a neighbour with larger g
// (the triangles around it cover a neighbourhood of it on the surface, and a local maximum of a
// linear function on a convex body's boundary is global). Hence every superlevel set
// {v : g(v) >= t} is connected in the graph (each member climbs to the maximiser without leaving
// it), and extra (artificial) edges keep that true. In float, the computed f(v) differs from g(v)
// by at most E = gamma_3 * S, S = sum_k max|v_k| |d_k| (Higham, "Accuracy and Stability of
// Numerical Algorithms", 2nd ed., sec. 3.1), so a climb may stop at a vertex v* that is only a
// computed local maximum. Certification: with delta >= 2E, the computed maximiser u* and v* both
// lie in {g >= f(v*) - E}, a connected set whose members all have f >= f(v*) - delta; so if every
// neighbour of v* has f < f(v*) - delta, v* is the computed maximiser (the usual case, which costs
// nothing beyond the final step), and otherwise a breadth-first search from v* over the vertices
// with f >= f(v*) - delta finds u*. That search stops after kPlateauMax vertices and finishes by
// brute force instead (exact ties on a large face, or the zero direction). delta also carries
// 4 x (the hull's largest reflex defect, measured at build time) x |d|_1: qhull merges nearly
// coplanar facets, leaving a surface convex only to ~1e-15 of its size; the margin covers that.
//
// Greer's packed layout (arXiv:2509.03753) puts a vertex and its neighbour indices in one cache
// line, so a climbing step touches one line per neighbour instead of three SoA lines plus the
// CSR rows; the artificial edges (hull.cc) cut the number of steps.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "simdplan/config.hh"
#include "simdplan/gjk/hull_view.hh"

namespace simdplan::SIMDPLAN_NS {

struct SupportHit {
  int32_t index;
  float value;
};

// Vertices a plateau search may visit before brute force takes over.
constexpr int32_t kPlateauMax = 64;

// Cold support queries (the batch kernels: every direction starts at the axis extremes) are
// answered by brute force up to this many vertices, by climbing above.
// PERF: ns per query, random directions, hulls of points on a sphere, brute / plain / packed; a
// /tmp harness, min of 3 x 15 runs of 20k (Xeon @ 2.5 GHz, 2 vCPUs shared with other jobs: +-15 %):
//   vertices      16           64            256           500           1000          2000
//   scalar   68/70/72     130/94/116    421/140/170   796/192/207  1425/210/241  2757/302/283
//   AVX2     35/74/70      46/94/114    105/142/171   185/168/194   336/209/240  1019/297/282
//   AVX-512  28/80/69      45/106/114    81/157/169   111/258/188   183/222/232   305/314/273
// and benchmarks/bench_gjk.py (medians of 7): 1000 vertices, AVX-512 191/232/231; 10000:
// 1861/724/437; 20000: 4475/1182/655 (packed / plain 0.55).
template <class V>
constexpr int32_t support_brute_max() {
  return V::W >= 16 ? 1024 : V::W >= 8 ? 384 : 32;
}

// dot(v, d) as every support method computes it (see the preamble)
SIMDPLAN_INLINE float support_dot(float x, float y, float z, float dx, float dy, float dz) {
  return (x * dx + y * dy) + z * dz;
}

// argmax over all vertices; first index among equal maxima
template <class V>
SupportHit support_brute(const HullView& h, float dx, float dy, float dz) {
  constexpr int W = V::W;
  const V bx = V::fill(dx), by = V::fill(dy), bz = V::fill(dz);
  const V two = V::fill(2.0f);
  // NOTE: two independent (max, block) chains: the select of one iteration waits for the compare
  // of the previous one, so a single chain runs at the compare + blend latency, not throughput.
  V best0 = V::fill(-std::numeric_limits<float>::infinity()), best1 = best0;
  V blk0 = V::zero(), blk1 = V::zero();
  V b0 = V::zero(), b1 = V::fill(1.0f);
  for (int32_t i = 0; i < h.n_padded; i += 2 * W) {
    const V d0 = (V::load(h.x + i) * bx + V::load(h.y + i) * by) + V::load(h.z + i) * bz;
    const V d1 = (V::load(h.x + i + W) * bx + V::load(h.y + i + W) * by) + V::load(h.z + i + W) * bz;
    const auto m0 = d0 > best0;
    const auto m1 = d1 > best1;
    best0 = select(m0, d0, best0);
    blk0 = select(m0, b0, blk0);
    best1 = select(m1, d1, best1);
    blk1 = select(m1, b1, blk1);
    b0 = b0 + two;
    b1 = b1 + two;
  }
  const V top = vmax(best0, best1);
  alignas(64) float t[W], k0[W], k1[W];
  top.store(t);
  // NOTE: a tree (log W deep), not a loop-carried chain of W maxima; and not V::hmax, whose AVX-512
  // form (_mm512_reduce_max_ps) trips a GCC 12 warning inside its own header
  for (int s = W / 2; s > 0; s /= 2)
    for (int l = 0; l < s; ++l) t[l] = t[l] > t[l + s] ? t[l] : t[l + s];
  const float mx = t[0];
  blk0.store(k0), blk1.store(k1);
  const V vm = V::fill(mx);
  uint32_t bits0 = (best0 == vm).bits(), bits1 = (best1 == vm).bits();
  // padding repeats vertex 0, whose smaller index wins any tie with it
  int32_t idx = std::numeric_limits<int32_t>::max();
  for (; bits0; bits0 &= bits0 - 1) {
    const int l = __builtin_ctz(bits0);
    idx = std::min(idx, int32_t(k0[l]) * W + l);
  }
  for (; bits1; bits1 &= bits1 - 1) {
    const int l = __builtin_ctz(bits1);
    idx = std::min(idx, int32_t(k1[l]) * W + l);
  }
  return {idx, mx};
}

// The best neighbour of a vertex: its index and dot (value -inf: no neighbour).
struct BestNeighbour {
  int32_t index;
  float value;
};

// Keeps the larger of two candidates (branch-free: which neighbour wins is a coin toss).
// NOTE: mask arithmetic, not `up ? w : index`: GCC turned that select into a branch, which
// mispredicts on about every other neighbour (PERF: packed climb, 10k-vertex sphere, 454 -> 418 ns
// per cold query)
SIMDPLAN_INLINE void keep_best(BestNeighbour& b, int32_t w, float f) {
  const int32_t up = -int32_t(f > b.value);
  b.index = (w & up) | (b.index & ~up);
  b.value = f > b.value ? f : b.value;
}

SIMDPLAN_INLINE BestNeighbour merge_best(BestNeighbour a, BestNeighbour b) {
  keep_best(a, b.index, b.value);
  return a;
}

// The plain layout: SoA vertices, CSR neighbours.
struct PlainGraph {
  const HullView& h;
  float dx, dy, dz;
  SIMDPLAN_INLINE float dot(int32_t v) const { return support_dot(h.x[v], h.y[v], h.z[v], dx, dy, dz); }
  SIMDPLAN_INLINE double dot_double(int32_t v, const double* d) const {
    return double(h.x[v]) * d[0] + double(h.y[v]) * d[1] + double(h.z[v]) * d[2];
  }
  template <class F>
  SIMDPLAN_INLINE void for_neighbours(int32_t v, F&& f) const {
    const int32_t e = h.adj_begin[v + 1];
    for (int32_t k = h.adj_begin[v]; k < e; ++k) f(h.adj[k]);
  }
  SIMDPLAN_INLINE BestNeighbour best_neighbour(int32_t v) const {
    const int32_t b = h.adj_begin[v], e = h.adj_begin[v + 1];
    // four running maxima: one would chain every compare on the previous select
    const BestNeighbour none{-1, -std::numeric_limits<float>::infinity()};
    BestNeighbour b0 = none, b1 = none, b2 = none, b3 = none;
    int32_t k = b;
    for (; k + 3 < e; k += 4) {
      keep_best(b0, h.adj[k], dot(h.adj[k]));
      keep_best(b1, h.adj[k + 1], dot(h.adj[k + 1]));
      keep_best(b2, h.adj[k + 2], dot(h.adj[k + 2]));
      keep_best(b3, h.adj[k + 3], dot(h.adj[k + 3]));
    }
    for (; k < e; ++k) keep_best(b0, h.adj[k], dot(h.adj[k]));
    b0 = merge_best(merge_best(b0, b1), merge_best(b2, b3));
    return b0;
  }
};

// The packed layout: one cache line per vertex (hull_view.hh). `all`: real and artificial
// neighbours (jumps); else the real ones only.
struct PackedGraph {
  const HullView& h;
  float dx, dy, dz;
  bool all = true;
  SIMDPLAN_INLINE float dot(int32_t v) const {
    const HullLine& l = h.lines[v];
    return support_dot(l.x, l.y, l.z, dx, dy, dz);
  }
  SIMDPLAN_INLINE double dot_double(int32_t v, const double* d) const {
    const HullLine& l = h.lines[v];
    return double(l.x) * d[0] + double(l.y) * d[1] + double(l.z) * d[2];
  }
  SIMDPLAN_INLINE int count(uint32_t head) const {
    return int(head & 31u) + (all ? int((head >> kHullLineArtShift) & 31u) : 0);
  }
  template <class F>
  SIMDPLAN_INLINE void for_neighbours(int32_t v, F&& f) const {
    const HullLine* l = &h.lines[v];
    for (;;) {
      const uint32_t head = l->slot[0];
      const int m = count(head);
      for (int s = 1; s <= m; ++s) f(int32_t(l->slot[s]));
      if (!(head & kHullLineLinked)) return;
      l = &h.lines[l->slot[kHullLineSlots - 1]];
    }
  }
  SIMDPLAN_INLINE BestNeighbour best_neighbour(int32_t v) const {
    // four running maxima: one would chain every compare on the previous select
    const BestNeighbour none{-1, -std::numeric_limits<float>::infinity()};
    BestNeighbour b0 = none, b1 = none, b2 = none, b3 = none;
    const HullLine* l = &h.lines[v];
    for (;;) {
      const uint32_t head = l->slot[0];
      const int m = count(head);
      int s = 1;
      for (; s + 3 <= m; s += 4) {
        const int32_t w0 = l->slot[s], w1 = l->slot[s + 1], w2 = l->slot[s + 2], w3 = l->slot[s + 3];
        keep_best(b0, w0, dot(w0));
        keep_best(b1, w1, dot(w1));
        keep_best(b2, w2, dot(w2));
        keep_best(b3, w3, dot(w3));
      }
      for (; s <= m; ++s) keep_best(b0, l->slot[s], dot(l->slot[s]));
      if (!(head & kHullLineLinked)) break;
      l = &h.lines[l->slot[kHullLineSlots - 1]];
    }
    return merge_best(merge_best(b0, b1), merge_best(b2, b3));
  }
};

// delta of the preamble: twice the rounding bound of a computed dot, with margin, plus the
// reflex-defect term and an underflow allowance
SIMDPLAN_INLINE double support_margin(const HullView& h, float dx, float dy, float dz) {
  const double s = double(h.abs_max[0]) * std::fabs(dx) + double(h.abs_max[1]) * std::fabs(dy) +
                   double(h.abs_max[2]) * std::fabs(dz);
  const double l1 = double(std::fabs(dx)) + std::fabs(dy) + std::fabs(dz);
  constexpr double u = 1.0 / 16777216.0;  // 2^-24
  return 8.0 * u * s + 4.0 * h.reflex_defect * l1 + 16.0 * double(std::numeric_limits<float>::denorm_min());
}

// best of the six axis-extreme vertices and the hint (hint < 0: none)
template <class G>
SIMDPLAN_INLINE int32_t support_warm_start(const HullView& h, const G& g, int32_t hint, float* value) {
  BestNeighbour b{h.extreme[0], g.dot(h.extreme[0])};
  for (int k = 1; k < 6; ++k) keep_best(b, h.extreme[k], g.dot(h.extreme[k]));
  if (hint >= 0) keep_best(b, hint, g.dot(hint));
  *value = b.value;
  return b.index;
}

// Where steepest ascent stopped: a vertex no neighbour beats (in float) and its best neighbour.
struct ClimbEnd {
  int32_t index;
  float value;
  float neighbour;  // largest neighbour value of `index` (-inf: none)
};

template <class G>
SIMDPLAN_INLINE ClimbEnd support_ascend(const G& g, int32_t start, float fstart) {
  ClimbEnd e{start, fstart, -std::numeric_limits<float>::infinity()};
  for (;;) {
    const BestNeighbour b = g.best_neighbour(e.index);
    e.neighbour = b.value;
    if (!(b.value > e.value)) return e;
    e.index = b.index;
    e.value = b.value;
  }
}

// True when the preamble's test certifies e.index as the maximiser: no neighbour within delta.
SIMDPLAN_INLINE bool support_certified(const HullView& h, const ClimbEnd& e, float dx, float dy, float dz) {
  return double(e.neighbour) < double(e.value) - support_margin(h, dx, dy, dz);
}

// Steepest ascent from `start`, then the certification of the preamble.
template <class V, class G>
SupportHit support_climb(const HullView& h, const G& g, int32_t start, float fstart) {
  const ClimbEnd e = support_ascend(g, start, fstart);
  if (support_certified(h, e, g.dx, g.dy, g.dz)) return {e.index, e.value};
  // plateau or rounding near the top: search the near-maximal set around the end vertex
  const double t = double(e.value) - support_margin(h, g.dx, g.dy, g.dz);
  int32_t seen[kPlateauMax];
  int32_t ns = 0, head = 0;
  seen[ns++] = e.index;
  SupportHit out{e.index, e.value};
  bool overflow = false;
  while (head < ns && !overflow) {
    const int32_t v = seen[head++];
    g.for_neighbours(v, [&](int32_t w) {
      if (overflow) return;
      const float f = g.dot(w);
      if (!(double(f) >= t)) return;
      if (f > out.value) out = {w, f};
      for (int32_t i = 0; i < ns; ++i)
        if (seen[i] == w) return;
      if (ns == kPlateauMax) {
        overflow = true;
        return;
      }
      seen[ns++] = w;
    });
  }
  if (overflow) return support_brute<V>(h, g.dx, g.dy, g.dz);
  return out;
}

template <class V>
SIMDPLAN_INLINE SupportHit support_plain(const HullView& h, float dx, float dy, float dz, int32_t hint = -1) {
  const PlainGraph g{h, dx, dy, dz};
  float f0;
  const int32_t s = support_warm_start(h, g, hint, &f0);
  return support_climb<V>(h, g, s, f0);
}

template <class V>
SIMDPLAN_INLINE SupportHit support_packed(const HullView& h, float dx, float dy, float dz, int32_t hint = -1) {
  const PackedGraph g{h, dx, dy, dz};
  float f0;
  const int32_t s = support_warm_start(h, g, hint, &f0);
  return support_climb<V>(h, g, s, f0);
}

}  // namespace simdplan::SIMDPLAN_NS
