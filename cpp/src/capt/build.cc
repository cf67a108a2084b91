// build.cc: the Builder of simdplan::capt::Tree's levels (algorithm and complexity in
// capt/tree.hh). ISA-neutral: compiled once, without -m flags. Its AVX-512 loops are in
// build_avx512.cc; tree.cc checks the input and calls it, grid.cc builds the occupancy grids.
//
// Why the float32 queries of capt/query.hh are exact for radii in [r_min, r_max] (u = 2^-24):
// a computed squared distance d2 = fl(dx^2 + dy^2 + dz^2) is within 5u of the true value (each
// subtraction, product and sum rounds once, fused or not), and fl((r + pr)^2) within 3u. So a
// point the query reports (d2 < fl((r+pr)^2)) is truly closer than (r + pr)(1 + 5u) < R, the
// affordance radius: it is afforded by the query's cell (clipped to the cloud's AABB grown by R,
// where every such query lies). The r_min shortcut keeps one point q only if q is truly closer
// than (r_min + pr)(1 - 1e-5) to all of the cell, so every query there reports q. A point p
// dropped as dominated has some q with |c-q|^2 <= |c-p|^2 - m on the whole cell; if the query
// reports p then |c-p|^2 < (r+pr)^2 (1 + 8u), hence |c-q|^2 < (r+pr)^2 (1 - 8u) as m = 2e-6 R^2
// >= 16u (r+pr)^2, so it reports q as well. Dominance composes (the margin only grows along a
// chain) and strictly lowers the distance to every point of the cell, so following it from any
// dropped point ends at a point the leaf keeps (the invariant: every cloud point within R of a
// cell is kept by that cell or dominated on it by a point the cell keeps). Own-point pruning
// (step 6 in capt/tree.hh) uses the same test and margin with a dominator q from the cell's own
// subtree: for a leaf below, q is its own point, or q is within R of it (so it is carried there,
// and kept or dominated by a kept point), or q is farther than R from all of the leaf, and then
// so is every p that q dominates, which the leaf would not afford anyway. The AVX-512 build loops
// (filter_avx512, filter2_avx512, own_prune_avx512, leaf_list_avx512) compute
// the same float and double expressions, unfused and in the same order, as the portable ones, so
// both build the same tree (tests/test_capt.py checks it).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "build_parts.hh"
#include "simdplan/capt/tree.hh"
#include "simdplan/deadline.hh"

namespace simdplan::capt {

namespace {

using namespace build_parts;

constexpr double kDomMargin = 2e-6;  // dominance margin, in units of R^2 (the proof needs 16u = 9.5e-7)
constexpr int64_t kMaxAfforded = int64_t(1) << 27;  // 1.5 GB of stored points: refuse beyond
constexpr int kKnn = 8;             // neighbours tried as dominators
// own_prune runs on leaf lists of at least this many points: shorter ones fit the two vectors a
// query tests at once anyway. PERF: on every list it cost uniform clouds more than it saved (10k
// uniform points: build 8.4 -> 9.5 ms for 8 % fewer stored points).
constexpr int64_t kOwnPruneFrom = 32;
// own_prune runs on the cells of the lowest levels, whose subtrees hold at most this many points
// (each point one pass over the list).
constexpr int64_t kOwnPruneSubtree = 2;
constexpr int64_t kSearchBucket = 8;  // neighbour search scans subtrees this small
// Dominance rarely holds on a cell much wider than R (the bisector of a point and its neighbour
// must clear the whole cell), so the search for dominators is spent only on cells up to 2R across.
constexpr double kPruneCellDiam2 = 4.0;
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Cell {
  double lo[3], hi[3];  // half-open: lo <= c < hi
};

// Candidate points carried by value (structure of arrays) with their index in the partitioned
// order; the arrays only grow, `n` is the current length.
struct Soa {
  std::vector<float> x, y, z;
  std::vector<int32_t> id;
  size_t n = 0;
  // kSoaSlack spare elements past m: the AVX-512 loops store whole vectors at the write position
  static constexpr size_t kSoaSlack = 16;
  void ensure(size_t m) {
    m += kSoaSlack;
    if (x.size() < m) x.resize(m), y.resize(m), z.resize(m), id.resize(m);
  }
};

class Builder {
 public:
  Builder(std::vector<P3> pts, float r_min, float r_max, float point_radius, std::vector<float>& splits,
          std::vector<CaptLeaf>& leaves, FloatBuffer& px, FloatBuffer& py, FloatBuffer& pz, BuildStats& st,
          const Deadline* stop = nullptr)
      : p_(std::move(pts)), splits_(splits), leaves_(leaves), px_(px), py_(py), pz_(pz), st_(st), stop_(stop) {
    const int64_t n_real = int64_t(p_.size());
    depth_ = 0;
    while ((int64_t(1) << depth_) < std::max<int64_t>(n_real, 1)) ++depth_;
    n2_ = int64_t(1) << depth_;
    p_.resize(size_t(n2_), P3{{kInfF, kInfF, kInfF}});
    R_ = (double(r_max) + double(point_radius)) * (1.0 + kRel);
    R2_ = R_ * R_;
    // the float filter may only err towards keeping a point: see filter()
    r2f_ = up(R2_ * (1.0 + 1e-6));
    const double cover = (double(r_min) + double(point_radius)) * (1.0 - kRel);
    cover2_ = cover * cover;
    margin_ = kDomMargin * R2_;
    for (int k = 0; k < 3; ++k) blo_[k] = kInf, bhi_[k] = -kInf;
    for (int64_t i = 0; i < n_real; ++i)
      for (int k = 0; k < 3; ++k) {
        blo_[k] = std::min(blo_[k], double(p_[size_t(i)].c[k]));
        bhi_[k] = std::max(bhi_[k], double(p_[size_t(i)].c[k]));
      }
    for (int k = 0; k < 3; ++k) blo_[k] -= R_, bhi_[k] += R_;
    lists_[0].resize(size_t(depth_) + 1);
    lists_[1].resize(size_t(depth_) + 1);
  }

  void build() {
    partition();
    fx_.resize(size_t(n2_)), fy_.resize(size_t(n2_)), fz_.resize(size_t(n2_));
    for (size_t q = 0; q < size_t(n2_); ++q) fx_[q] = p_[q].c[0], fy_[q] = p_[q].c[1], fz_[q] = p_[q].c[2];
    p_ = std::vector<P3>();
    leaves_.resize(size_t(n2_));
    // PERF: room for 64 points per leaf up front, at most 64 MB per array (pages are only touched
    // when written): growing from empty re-faulted and copied the buffers (a filtered 8k-point
    // scene: 13.2 -> 11.8 ms)
    const size_t room = std::min(size_t(n2_) * 64, size_t(1) << 24) + kCaptPad;
    for (FloatBuffer* b : {&px_, &py_, &pz_}) b->reserve(room);
    Cell root;
    for (int k = 0; k < 3; ++k) root.lo[k] = -kInf, root.hi[k] = kInf;
    double lo[3], hi[3];
    int64_t rep = 0;
    const Kind kind = classify(root, 0, 0, lo, hi, &rep);
    if (kind == kListed)
      node(0, 0, 0, root, Soa());
    else
      settle(kind, 0, rep);
    st_.afforded = int64_t(px_.size());
    for (int k = 0; k < kCaptPad; ++k) px_.push_back(kInfF), py_.push_back(kInfF), pz_.push_back(kInfF);
  }

  int32_t depth() const { return depth_; }

 private:
  // Median splits level by level, cycling x, y, z; equal values may fall on either side.
  // PERF: select() instead of std::nth_element, whose compare-and-branch partition loop on
  // 12-byte points was the hottest code (17 % of a 10k uniform build, perf, after the fused
  // AVX-512 loops): side by side, min of 15 builds, uniform 10k 7.0 -> 6.5 ms, bookshelf 6.0 ->
  // 5.5, cage 6.8 -> 6.4, uniform 100k 138 -> 120 ms, a 30^3 grid (ties everywhere) 179 -> 138 ms.
  void partition() {
    splits_.assign(size_t(n2_ - 1), kInfF);
    for (int l = 0; l < depth_; ++l) {
      const int a = l % 3;
      const int64_t size = n2_ >> l;
      const int64_t first = (int64_t(1) << l) - 1;
      for (int64_t k = 0; k < (int64_t(1) << l); ++k) {
        P3* b = p_.data() + k * size;
        P3* mid = b + size / 2;
        select(b, mid, b + size, a);
        splits_[size_t(first + k)] = mid->c[a];
      }
    }
  }

  // std::nth_element(first, nth, last) by coordinate a, as a quickselect with branch-free
  // partitions: PERF (see partition()). Each round splits [first, last) by a pivot (median of
  // three) into < pivot, == pivot (a second pass, only when nth lies at or right of the first
  // part) and > pivot; many rounds (bad pivots) hand over to std::nth_element.
  static void select(P3* first, P3* nth, P3* last, int a) {
    auto less = [a](const P3& u, const P3& v) { return u.c[a] < v.c[a]; };
    for (int round = 0; last - first > 16; ++round) {
      if (round > 40) return std::nth_element(first, nth, last, less);
      const float x0 = first->c[a], x1 = first[(last - first) / 2].c[a], x2 = last[-1].c[a];
      const float pv = std::max(std::min(x0, x1), std::min(std::max(x0, x1), x2));
      P3* j = first;
      for (P3* p = first; p < last; ++p) {
        const P3 t = *p;
        const bool lt = t.c[a] < pv;
        *p = *j;
        *j = t;
        j += lt;
      }
      if (nth < j) {
        last = j;
        continue;
      }
      P3* e = j;
      for (P3* p = j; p < last; ++p) {
        const P3 t = *p;
        const bool eq = !(pv < t.c[a]);
        *p = *e;
        *e = t;
        e += eq;
      }
      if (nth < e) return;  // [j, e) all equal the pivot
      first = e;
    }
    std::sort(first, last, less);
  }

  bool real(int64_t q) const { return fx_[size_t(q)] != kInfF; }
  double coord(int64_t q, int k) const { return k == 0 ? fx_[size_t(q)] : k == 1 ? fy_[size_t(q)] : fz_[size_t(q)]; }

  bool empty(const Cell& c) const {
    for (int k = 0; k < 3; ++k)
      if (!(c.lo[k] < c.hi[k]) || c.lo[k] > bhi_[k] || c.hi[k] <= blo_[k]) return true;
    return false;
  }

  void clip(const Cell& c, double* lo, double* hi) const {
    for (int k = 0; k < 3; ++k) lo[k] = std::max(c.lo[k], blo_[k]), hi[k] = std::min(c.hi[k], bhi_[k]);
  }

  double corner_dist2(int64_t q, const double* lo, const double* hi) const {
    double s = 0.0;
    for (int k = 0; k < 3; ++k) {
      const double x = coord(q, k);
      const double g = std::max(x - lo[k], hi[k] - x);
      s += g * g;
    }
    return s;
  }

  static double diameter2(const double* lo, const double* hi) {
    double s = 0.0;
    for (int k = 0; k < 3; ++k) s += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    return s;
  }

  // What a cell needs before any list is built: nothing (it is empty), one point for all its
  // leaves (the r_min shortcut), or its afforded list.
  enum Kind { kEmpty, kCovered, kListed };

  // Node i at level l covers points [b, b + (n2 >> l)) and the leaves in the same order.
  Kind classify(const Cell& cell, int64_t b, int l, double* lo, double* hi, int64_t* rep) const {
    if (empty(cell)) return kEmpty;
    clip(cell, lo, hi);
    const int64_t size = n2_ >> l;
    int64_t r = b;
    while (r < b + size && !real(r)) ++r;
    *rep = r;
    return r < b + size && corner_dist2(r, lo, hi) < cover2_ ? kCovered : kListed;
  }

  // Leaves of a subtree that needs no list: none afforded, or all sharing the covering point.
  void settle(Kind kind, int l, int64_t rep) {
    const int64_t size = n2_ >> l;
    if (kind == kEmpty) return fill(size, 0, 0, -1);
    const int32_t begin = int32_t(px_.size());
    push(rep);
    st_.shortcut_leaves += size;
    fill(size, begin, begin + 1, rep);
  }

  // Appends to `out` (from position w) the candidates [0, m) that may lie within R of the box:
  // x, y, z (and id, or id0 + t where id is null). Returns the new length.
  // The box is rounded outward and r2f_ upward, and float rounding of the few operations below
  // stays far inside the 1e-6 slack, so every point truly within R passes (a few beyond may too).
  // PERF: a vectorizable mask pass over blocks, then a branch-free compaction. As fast as filtering
  // indices through double coordinates (100k uniform points: 274 vs 278 ms), and the leaves then
  // copy their lists with memcpy.
  size_t filter(const float* x, const float* y, const float* z, const int32_t* id, int32_t id0, size_t m,
                const BoxF& b, Soa& out, size_t w) const {
#if defined(SIMDPLAN_CAPT_X86_KERNELS)
    if (avx512_)
      return filter_avx512(x, y, z, id, id0, m, b.lo, b.hi, r2f_, out.x.data(), out.y.data(), out.z.data(),
                           out.id.data(), w);
#endif
    constexpr size_t kBlock = 256;
    alignas(32) int32_t keep[kBlock];
    const float lx = b.lo[0], ly = b.lo[1], lz = b.lo[2], hx = b.hi[0], hy = b.hi[1], hz = b.hi[2], r2 = r2f_;
    for (size_t s = 0; s < m; s += kBlock) {
      const size_t e = std::min(m, s + kBlock);
      const float* __restrict xs = x + s;
      const float* __restrict ys = y + s;
      const float* __restrict zs = z + s;
      for (size_t t = 0; t < e - s; ++t) {
        const float gx = gapf(xs[t], lx, hx), gy = gapf(ys[t], ly, hy), gz = gapf(zs[t], lz, hz);
        keep[t] = gx * gx + gy * gy + gz * gz < r2 ? 1 : 0;
      }
      for (size_t t = s; t < e; ++t) {
        out.x[w] = x[t];
        out.y[w] = y[t];
        out.z[w] = z[t];
        out.id[w] = id ? id[t] : id0 + int32_t(t);
        w += size_t(keep[t - s]);
      }
    }
    return w;
  }

  // distance from x to [lo, hi]; padding points (+inf) get +inf
  static float gapf(float x, float lo, float hi) {
    const float a = lo - x, b = x - hi;
    const float d = a > b ? a : b;
    // max(d, 0) in a form GCC neither turns into a branch nor refuses to vectorize
    return 0.5f * (d + std::fabs(d));
  }

  // `list`: the points outside this node's range within R of its clipped cell (pruned). Each
  // child's list is filtered from it plus the child's sibling's points.
  void node(uint32_t i, int l, int64_t b, const Cell& cell, const Soa& list) {
    if (l == depth_) return leaf(b, list);
    // a dense cloud of millions of points builds for minutes: Ctrl-C must reach it. Near the root a
    // node filters most of the cloud, so it always asks; deeper, every 64th node (a clock read is
    // ~40 ns, and a node near the leaves does little more)
    if (stop_ != nullptr && (l < 12 || (++visits_ & 63) == 0) && stop_->passed()) throw Stopped();
    const int a = l % 3;
    const double s = splits_[i];
    const int64_t size = n2_ >> l, mid = b + size / 2;
    Cell cells[2] = {cell, cell};
    cells[0].hi[a] = std::min(cells[0].hi[a], s);
    cells[1].lo[a] = std::max(cells[1].lo[a], s);
    const int64_t first[2] = {b, mid}, sib_begin[2] = {mid, b}, sib_end[2] = {b + size, mid};
    double clo[2][3], chi[2][3];
    int64_t rep[2] = {0, 0};
    Kind kinds[2];
    BoxF bfs[2];
    for (int c = 0; c < 2; ++c) {
      kinds[c] = classify(cells[c], first[c], l + 1, clo[c], chi[c], &rep[c]);
      if (kinds[c] == kListed)
        for (int k = 0; k < 3; ++k) bfs[c].lo[k] = down(clo[c][k]), bfs[c].hi[k] = up(chi[c][k]);
    }
    // the parent list's part of each child's list (child c's list is in lists_[c][l + 1])
    size_t wl[2] = {0, 0};
    bool done = false;
#if defined(SIMDPLAN_CAPT_X86_KERNELS)
    // PERF: both children filter the parent list in one pass, which loads it once and shares the
    // gaps of the two axes that the split does not cut (with the fused leaf loops below, side by
    // side: bookshelf 6.7 -> 6.0 ms, cage 7.5 -> 6.8 ms; uniform 10k within noise)
    if (avx512_ && kinds[0] == kListed && kinds[1] == kListed) {
      float* o[6];
      int32_t* oid[2];
      for (int c = 0; c < 2; ++c) {
        Soa& out = lists_[c][size_t(l + 1)];
        out.ensure(list.n + size_t(size / 2));
        o[3 * c] = out.x.data(), o[3 * c + 1] = out.y.data(), o[3 * c + 2] = out.z.data(), oid[c] = out.id.data();
      }
      filter2_avx512(list.x.data(), list.y.data(), list.z.data(), list.id.data(), list.n, bfs, r2f_, o, oid, wl);
      done = true;
    }
#endif
    for (int c = 0; c < 2; ++c) {
      const Kind kind = kinds[c];
      if (kind != kListed) {
        settle(kind, l + 1, rep[c]);
        continue;
      }
      const double* lo = clo[c];
      const double* hi = chi[c];
      const BoxF& bf = bfs[c];
      Soa& out = lists_[c][size_t(l + 1)];
      const size_t sib = size_t(sib_end[c] - sib_begin[c]);
      size_t w = wl[c];
      if (!done) {
        out.ensure(list.n + sib);
        w = filter(list.x.data(), list.y.data(), list.z.data(), list.id.data(), 0, list.n, bf, out, 0);
      }
      w = filter(fx_.data() + sib_begin[c], fy_.data() + sib_begin[c], fz_.data() + sib_begin[c], nullptr,
                 int32_t(sib_begin[c]), sib, bf, out, w);
      out.n = w;
      st_.candidates += int64_t(w);
      if (int64_t(w) > kCaptPruneAbove && diameter2(lo, hi) <= kPruneCellDiam2 * R2_) prune(out, lo, hi);
      const int64_t csize = size / 2;
      const bool own = csize <= kOwnPruneSubtree && int64_t(out.n) >= kOwnPruneFrom;
#if defined(SIMDPLAN_CAPT_X86_KERNELS)
      // PERF: the same lists as the portable path below, with fewer passes over them: a leaf
      // prunes, measures and stores its list in one pass, a cell of two prunes by both at once
      // (side by side, min of 15 builds: bookshelf 6.7 -> 6.2 ms, cage 7.5 -> 6.9 ms, uniform 10k
      // 7.1 -> 7.0 ms)
      if (avx512_ && l + 1 == depth_) {
        leaf_avx512(first[c], lo, hi, out, own && real(first[c]));
        continue;
      }
      if (avx512_ && own && csize == 2 && real(first[c]) && real(first[c] + 1)) {
        const double b[2][3] = {{coord(first[c], 0), coord(first[c], 1), coord(first[c], 2)},
                                {coord(first[c] + 1, 0), coord(first[c] + 1, 1), coord(first[c] + 1, 2)}};
        const size_t w2 =
            own_prune_avx512(out.x.data(), out.y.data(), out.z.data(), out.id.data(), out.n, b, 2, lo, hi, -margin_);
        st_.pruned += int64_t(out.n - w2);
        out.n = w2;
        node(2 * i + 1 + uint32_t(c), l + 1, first[c], cells[c], out);
        continue;
      }
#endif
      if (own)
        for (int64_t q = first[c]; q < first[c] + csize; ++q)
          if (real(q)) own_prune(q, lo, hi, out);
      node(2 * i + 1 + uint32_t(c), l + 1, first[c], cells[c], out);
    }
  }

  // Step 6 of the build: a point q of a cell's own subtree dominates the candidates that lie beyond
  // the bisector of q and themselves for the whole clipped cell [lo, hi] (the test and margin of
  // prune(), with q as the only dominator, so no neighbour search), in place. q is kept by the
  // leaf it belongs to; every other leaf below either affords q (and keeps it or a point that
  // dominates it) or lies farther than R from q, and then also from every point q dominates. So
  // the invariant of the file preamble holds.
  void own_prune(int64_t q, const double* lo, const double* hi, Soa& list) {
    const double p0 = coord(q, 0), p1 = coord(q, 1), p2 = coord(q, 2);
    const double m = -margin_;
    size_t w = 0;
#if defined(SIMDPLAN_CAPT_X86_KERNELS)
    if (avx512_) {
      const double bp[1][3] = {{p0, p1, p2}};
      w = own_prune_avx512(list.x.data(), list.y.data(), list.z.data(), list.id.data(), list.n, bp, 1, lo, hi, m);
      st_.pruned += int64_t(list.n - w);
      list.n = w;
      return;
    }
#endif
    // around the candidate p: v = |d|^2 + sum_k max(-2 (lo_k - p_k) d_k, -2 (hi_k - p_k) d_k), d = q - p
    for (size_t t = 0; t < list.n; ++t) {
      const double x = list.x[t], y = list.y[t], z = list.z[t];
      const double dx = p0 - x, dy = p1 - y, dz = p2 - z;
      const double v = (dx * dx + std::max(-2.0 * (lo[0] - x) * dx, -2.0 * (hi[0] - x) * dx)) +
                       (dy * dy + std::max(-2.0 * (lo[1] - y) * dy, -2.0 * (hi[1] - y) * dy)) +
                       (dz * dz + std::max(-2.0 * (lo[2] - z) * dz, -2.0 * (hi[2] - z) * dz));
      list.x[w] = list.x[t];
      list.y[w] = list.y[t];
      list.z[w] = list.z[t];
      list.id[w] = list.id[t];  // prune() further down reads them
      w += !(v <= m);
    }
    st_.pruned += int64_t(list.n - w);
    list.n = w;
  }

#if defined(SIMDPLAN_CAPT_X86_KERNELS)
  // leaf(b, list) after own_prune(b) when `own`, in one pass over the list for both
  void leaf_avx512(int64_t b, const double* lo, const double* hi, Soa& list, bool own) {
    float alo[3] = {kInfF, kInfF, kInfF}, ahi[3] = {-kInfF, -kInfF, -kInfF};
    if (real(b))
      for (int k = 0; k < 3; ++k) alo[k] = ahi[k] = float(coord(b, k));
    const double bp[3] = {coord(b, 0), coord(b, 1), coord(b, 2)};
    const size_t w = leaf_list_avx512(list.x.data(), list.y.data(), list.z.data(), list.n, own ? bp : nullptr, lo, hi,
                                      -margin_, alo, ahi);
    st_.pruned += int64_t(list.n - w);
    list.n = w;
    leaf(b, list, alo, ahi);
  }
#endif

  // alo / ahi: the AABB of b (if real) and the list, when the caller has it
  void leaf(int64_t b, const Soa& list, const float* alo = nullptr, const float* ahi = nullptr) {
    if (int64_t(px_.size() + list.n) >= kMaxAfforded)
      throw std::length_error(
          "CAPT: the leaves would store more than 2^27 points (1.5 GB): the cloud is too dense for r_max + "
          "point_radius = " + std::to_string(R_ / (1.0 + kRel)) + " m (" + std::to_string(px_.size()) + " stored after " +
          std::to_string(next_leaf_) + " of " + std::to_string(n2_) + " leaves); thin it first, e.g. "
          "simdplan.collision.pointcloud.filter_pointcloud(points, min_dist=r_min)");
    const int32_t begin = int32_t(px_.size());
    if (real(b)) push(b);
    px_.append(list.x.data(), list.n);
    py_.append(list.y.data(), list.n);
    pz_.append(list.z.data(), list.n);
    const int32_t end = int32_t(px_.size());
    CaptLeaf& lf = leaves_[size_t(next_leaf_++)];
    lf.begin = begin;
    lf.end = end;
    float lo[3] = {kInfF, kInfF, kInfF}, hi[3] = {-kInfF, -kInfF, -kInfF};
    if (alo) {
      for (int k = 0; k < 3; ++k) lo[k] = alo[k], hi[k] = ahi[k];
    } else {
      const float* xyz[3] = {px_.data(), py_.data(), pz_.data()};
      // PERF: value ternaries compile to minss/maxss (std::min/max became branches here), and four
      // running bounds break the dependency chain (100k uniform points: 420 -> 250 -> 210 ms)
      for (int k = 0; k < 3; ++k) {
        float l4[4] = {kInfF, kInfF, kInfF, kInfF}, h4[4] = {-kInfF, -kInfF, -kInfF, -kInfF};
        size_t j = size_t(begin);
        for (; j + 4 <= size_t(end); j += 4)
          for (int u = 0; u < 4; ++u) {
            const float v = xyz[k][j + size_t(u)];
            l4[u] = v < l4[u] ? v : l4[u];
            h4[u] = v > h4[u] ? v : h4[u];
          }
        for (; j < size_t(end); ++j) {
          const float v = xyz[k][j];
          l4[0] = v < l4[0] ? v : l4[0];
          h4[0] = v > h4[0] ? v : h4[0];
        }
        for (int u = 0; u < 4; ++u) {
          lo[k] = l4[u] < lo[k] ? l4[u] : lo[k];
          hi[k] = h4[u] > hi[k] ? h4[u] : hi[k];
        }
      }
    }
    for (int k = 0; k < 3; ++k) lf.lo[k] = lo[k], lf.hi[k] = hi[k];
    if (end > begin) ++st_.nonempty_leaves;
    st_.max_afforded = std::max<int64_t>(st_.max_afforded, end - begin);
  }

  // `count` consecutive leaves sharing the range [begin, end) (empty, or the one point q)
  void fill(int64_t count, int32_t begin, int32_t end, int64_t q) {
    CaptLeaf lf;
    lf.begin = begin;
    lf.end = end;
    for (int k = 0; k < 3; ++k) {
      lf.lo[k] = q >= 0 ? float(coord(q, k)) : kInfF;
      lf.hi[k] = q >= 0 ? float(coord(q, k)) : -kInfF;
    }
    for (int64_t j = 0; j < count; ++j) leaves_[size_t(next_leaf_++)] = lf;
    if (q >= 0) st_.nonempty_leaves += count, st_.max_afforded = std::max<int64_t>(st_.max_afforded, 1);
  }

  void push(int64_t q) {
    px_.push_back(fx_[size_t(q)]);
    py_.push_back(fy_[size_t(q)]);
    pz_.push_back(fz_[size_t(q)]);
  }

  // Drops candidates that one of their nearest cloud points dominates on the box [lo, hi].
  void prune(Soa& list, const double* lo, const double* hi) {
    size_t w = 0;
    for (size_t t = 0; t < list.n; ++t) {
      list.x[w] = list.x[t];
      list.y[w] = list.y[t];
      list.z[w] = list.z[t];
      list.id[w] = list.id[t];
      w += !dominated(list.id[t], lo, hi);
    }
    st_.pruned += int64_t(list.n - w);
    list.n = w;
  }

  // max over c in the box of |c - z|^2 - |c - p|^2 = |d|^2 + sum_k max(-2 (lo_k - p_k) d_k, -2 (hi_k - p_k) d_k),
  // d = z - p (written around p, so large coordinates cancel before squaring)
  bool dominated(int32_t q, const double* lo, const double* hi) {
    const int32_t* nb = neighbours(q);
    const double p[3] = {coord(q, 0), coord(q, 1), coord(q, 2)};
    for (int j = 0; j < kKnn && nb[j] >= 0; ++j) {
      double v = 0.0;
      for (int k = 0; k < 3; ++k) {
        const double d = coord(nb[j], k) - p[k];
        v += d * d + std::max(-2.0 * (lo[k] - p[k]) * d, -2.0 * (hi[k] - p[k]) * d);
      }
      if (v <= -margin_) return true;
    }
    return false;
  }

  const int32_t* neighbours(int32_t q) {
    if (knn_.empty()) knn_.assign(size_t(n2_) * kKnn, -2);
    int32_t* nb = &knn_[size_t(q) * kKnn];
    if (nb[0] == -2) {
      ++st_.knn_points;
      search_count_ = 0;
      search(q, 0, 0, 0);
      for (int j = 0; j < kKnn; ++j) nb[j] = j < search_count_ ? search_idx_[j] : -1;
    }
    return nb;
  }

  // k nearest real points to point q (excluding q) in the partitioned tree, nearest first
  void search(int32_t q, uint32_t i, int l, int64_t b) {
    const int64_t size = n2_ >> l;
    if (size <= kSearchBucket) {
      // subtrees of up to 8 points are scanned rather than recursed into
      const double px = fx_[size_t(q)], py = fy_[size_t(q)], pz = fz_[size_t(q)];
      for (int64_t t = b; t < b + size; ++t) {
        if (t == q) continue;
        const double dx = fx_[size_t(t)] - px, dy = fy_[size_t(t)] - py, dz = fz_[size_t(t)] - pz;
        const double d2 = dx * dx + dy * dy + dz * dz;  // +inf for padding
        if (!(d2 < kInf) || (search_count_ == kKnn && d2 >= search_d2_[kKnn - 1])) continue;
        int j = search_count_ < kKnn ? search_count_++ : kKnn - 1;
        for (; j > 0 && search_d2_[j - 1] > d2; --j) search_d2_[j] = search_d2_[j - 1], search_idx_[j] = search_idx_[j - 1];
        search_d2_[j] = d2;
        search_idx_[j] = int32_t(t);
      }
      return;
    }
    const int a = l % 3;
    const double diff = coord(q, a) - double(splits_[i]);
    const int64_t mid = b + size / 2;
    const bool right = diff >= 0.0;
    search(q, 2 * i + (right ? 2 : 1), l + 1, right ? mid : b);
    if (search_count_ < kKnn || diff * diff < search_d2_[kKnn - 1])
      search(q, 2 * i + (right ? 1 : 2), l + 1, right ? b : mid);
  }

  std::vector<P3> p_;                   // during the partition only
  std::vector<float> fx_, fy_, fz_;     // the partitioned points, structure of arrays
  int64_t n2_ = 1;
  int32_t depth_ = 0;
  double R_ = 0, R2_ = 0, cover2_ = 0, margin_ = 0;
  float r2f_ = 0;
  double blo_[3], bhi_[3];
  std::vector<float>& splits_;
  std::vector<CaptLeaf>& leaves_;
  FloatBuffer& px_;
  FloatBuffer& py_;
  FloatBuffer& pz_;
  BuildStats& st_;
  std::vector<Soa> lists_[2];  // per child side, one per level, reused depth-first
  const bool avx512_ = build_has_avx512();
  const Deadline* stop_ = nullptr;  // asked while building (Tree's constructor)
  uint64_t visits_ = 0;
  int64_t next_leaf_ = 0;
  std::vector<int32_t> knn_;  // kKnn per point: -2 not searched yet, -1 none
  int search_count_ = 0;
  double search_d2_[kKnn];
  int32_t search_idx_[kKnn];
};
}  // namespace

namespace build_parts {

int32_t build_levels(std::vector<P3> pts, float r_min, float r_max, float point_radius, std::vector<float>& splits,
                     std::vector<CaptLeaf>& leaves, FloatBuffer& px, FloatBuffer& py, FloatBuffer& pz,
                     BuildStats& stats, const Deadline* stop) {
  Builder b(std::move(pts), r_min, r_max, point_radius, splits, leaves, px, py, pz, stats, stop);
  b.build();
  return b.depth();
}

}  // namespace build_parts
}  // namespace simdplan::capt
