// pointcloud_tools.cc: close pairs and crop + thinning of point clouds (see capt/pointcloud.hh).
//
// Both run on a uniform grid. Completeness near cell borders: cells are at least
// h = tol (1 + 1e-6) wide and at most 2^20 per axis (larger clouds get wider cells), so two points
// whose cell indices differ by 2 or more on an axis are truly more than tol apart there even
// after the rounding of (x - min) / h, and the float64 difference then rounds to >= tol as well.
// Compiled with -ffp-contract=off (CMakeLists.txt): d2 below must not be fused on any target.
#include "simdplan/capt/pointcloud.hh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>

namespace simdplan::pointcloud {
namespace {

constexpr int64_t kMaxCellsPerAxis = int64_t(1) << 20;
constexpr int kKeyBits = 21;

inline double d2(const double* a, const double* b) {
  const double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return (dx * dx + dy * dy) + dz * dz;
}

// Cell indices shifted by one so that every neighbour index stays >= 0.
struct Grid {
  double lo[3];
  double h, inv_h;
  int64_t dims[3];  // including the one-cell border on each side

  // over m points with bounds [lo_, hi], cells at least min_cell wide
  Grid(const double* lo_, const double* hi, int64_t m, double min_cell) { init(lo_, hi, m, min_cell); }

  static void bounds(const double* xyz, const int64_t* idx, int64_t m, double* lo, double* hi) {
    for (int k = 0; k < 3; ++k) lo[k] = std::numeric_limits<double>::infinity(), hi[k] = -lo[k];
    for (int64_t t = 0; t < m; ++t) {
      const double* p = xyz + 3 * (idx ? idx[t] : t);
      for (int k = 0; k < 3; ++k) lo[k] = std::min(lo[k], p[k]), hi[k] = std::max(hi[k], p[k]);
    }
  }

  void init(const double* lo_, const double* hi, int64_t m, double min_cell) {
    for (int k = 0; k < 3; ++k) lo[k] = lo_[k];
    double extent = 0.0;
    for (int k = 0; k < 3; ++k) extent = std::max(extent, m ? hi[k] - lo[k] : 0.0);
    h = std::max(min_cell, extent / double(kMaxCellsPerAxis - 4));
    inv_h = 1.0 / h;
    for (int k = 0; k < 3; ++k) dims[k] = (m ? int64_t((hi[k] - lo[k]) * inv_h) : 0) + 3;
  }

  void cell(const double* p, int64_t* c) const {
    // (x - lo) * (1 / h) rounds twice; the 1e-6 slack in h covers it (see the preamble)
    for (int k = 0; k < 3; ++k) c[k] = std::min<int64_t>(int64_t((p[k] - lo[k]) * inv_h), dims[k] - 3) + 1;
  }

  static uint64_t key(int64_t x, int64_t y, int64_t z) {
    return (uint64_t(x) << (2 * kKeyBits)) | (uint64_t(y) << kKeyBits) | uint64_t(z);
  }
};

void append_pairs(std::vector<uint64_t>& out, const double* sxyz, const int64_t* sidx, int64_t a0, int64_t a1,
                  int64_t b0, int64_t b1, double t2) {
  for (int64_t a = a0; a < a1; ++a)
    for (int64_t b = (b0 == a0 ? a + 1 : b0); b < b1; ++b)
      if (d2(sxyz + 3 * a, sxyz + 3 * b) < t2) {
        const int64_t i = std::min(sidx[a], sidx[b]), j = std::max(sidx[a], sidx[b]);
        out.push_back((uint64_t(i) << 32) | uint64_t(j));
      }
}

std::vector<int64_t> unpack_sorted(std::vector<uint64_t>& packed) {
  std::sort(packed.begin(), packed.end());
  std::vector<int64_t> out(2 * packed.size());
  for (size_t t = 0; t < packed.size(); ++t) out[2 * t] = int64_t(packed[t] >> 32), out[2 * t + 1] = int64_t(packed[t] & 0xFFFFFFFFu);
  return out;
}

}  // namespace

// PERF: the sort-one-axis-at-a-time method (sort by x, split where gaps reach tol, refine the
// groups by y and z, verify what no axis splits) matched this grid only on sparse clouds (20k
// uniform points, tol 0.5 mm: 6 vs 3 ms) and fell to brute force as soon as tol exceeds the typical
// gap along an axis (20k points, tol 5 mm: 654 vs 5 ms; 100k, tol 2 mm: 26 s vs 18 ms), so the grid
// stayed. 1M uniform points, tol 1 mm: 250 ms here, 1.3 s for scipy's cKDTree + query_pairs.
std::vector<int64_t> close_pairs(const double* xyz, int64_t n, double tol) {
  if (n < 2) return {};
  double lo[3], hi[3];
  Grid::bounds(xyz, nullptr, n, lo, hi);
  const Grid g(lo, hi, n, tol * (1.0 + 1e-6));
  std::vector<std::pair<uint64_t, int64_t>> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t c[3];
    g.cell(xyz + 3 * i, c);
    order[size_t(i)] = {Grid::key(c[0], c[1], c[2]), i};
  }
  std::sort(order.begin(), order.end());
  // points in cell order (coordinates copied for locality), cells as [start, next start)
  std::vector<double> sxyz(size_t(3 * n));
  std::vector<int64_t> sidx(static_cast<size_t>(n));
  std::vector<uint64_t> ckey;
  std::vector<int64_t> cstart;
  for (int64_t t = 0; t < n; ++t) {
    const int64_t i = order[size_t(t)].second;
    std::memcpy(&sxyz[size_t(3 * t)], xyz + 3 * i, 3 * sizeof(double));
    sidx[size_t(t)] = i;
    if (t == 0 || order[size_t(t)].first != order[size_t(t - 1)].first) {
      ckey.push_back(order[size_t(t)].first);
      cstart.push_back(t);
    }
  }
  const int64_t cells = int64_t(ckey.size());
  cstart.push_back(n);
  order.clear();
  order.shrink_to_fit();

  // The 13 neighbours after a cell in key order: z+1 in its own row, and z-1..z+1 in the rows
  // (x, y+1), (x+1, y-1), (x+1, y), (x+1, y+1). For each such row the first candidate key grows
  // with the cell's key, so one pointer per row sweeps all cells once.
  const int64_t row_dx[4] = {0, 1, 1, 1}, row_dy[4] = {1, -1, 0, 1};
  int64_t ptr[4] = {0, 0, 0, 0};
  const double t2 = tol * tol;
  std::vector<uint64_t> pairs;
  const uint64_t zmask = (uint64_t(1) << kKeyBits) - 1;
  for (int64_t c = 0; c < cells; ++c) {
    const uint64_t k = ckey[size_t(c)];
    const int64_t cx = int64_t(k >> (2 * kKeyBits)), cy = int64_t((k >> kKeyBits) & zmask), cz = int64_t(k & zmask);
    append_pairs(pairs, sxyz.data(), sidx.data(), cstart[size_t(c)], cstart[size_t(c + 1)], cstart[size_t(c)],
                 cstart[size_t(c + 1)], t2);
    if (c + 1 < cells && ckey[size_t(c + 1)] == k + 1)
      append_pairs(pairs, sxyz.data(), sidx.data(), cstart[size_t(c)], cstart[size_t(c + 1)], cstart[size_t(c + 1)],
                   cstart[size_t(c + 2)], t2);
    for (int r = 0; r < 4; ++r) {
      const uint64_t first = Grid::key(cx + row_dx[r], cy + row_dy[r], cz - 1);
      const uint64_t last = first + 2;
      int64_t& p = ptr[r];
      while (p < cells && ckey[size_t(p)] < first) ++p;
      for (int64_t q = p; q < cells && ckey[size_t(q)] <= last; ++q)
        append_pairs(pairs, sxyz.data(), sidx.data(), cstart[size_t(c)], cstart[size_t(c + 1)], cstart[size_t(q)],
                     cstart[size_t(q + 1)], t2);
    }
  }
  return unpack_sorted(pairs);
}

namespace {

// Kept points' coordinates with the next kept point of their cell, one record each (one cache line
// holds all a test needs).
struct Kept {
  double p[3];
  int64_t next;
};

// Whether thin's grid is small enough for an array of cells (else a hash table of them), with
// cell indices in int32_t and 2 / h finite (thin_dense).
bool dense_grid(const Grid& g, int64_t m) {
  const double cells = double(g.dims[0]) * double(g.dims[1]) * double(g.dims[2]);
  return cells <= std::max(double(int64_t(1) << 22), 4.0 * double(m)) && cells < double(int64_t(1) << 31) &&
         g.inv_h <= 0.5 * std::numeric_limits<double>::max();
}

// Sparse grids: the newest kept point per cell (-1: none) in a hash table.
class CellHeads {
 public:
  CellHeads() : keys_(1024, kEmpty), heads_(1024, -1) {}

  int32_t get(int64_t x, int64_t y, int64_t z) const {
    const uint64_t k = Grid::key(x, y, z);
    for (size_t s = slot(k);; s = (s + 1) & (keys_.size() - 1)) {
      if (keys_[s] == k) return heads_[s];
      if (keys_[s] == kEmpty) return -1;
    }
  }

  // sets the head of cell (x, y, z), returning the previous one
  int32_t push(int64_t x, int64_t y, int64_t z, int32_t head) {
    if (2 * (used_ + 1) > keys_.size()) grow();
    const uint64_t k = Grid::key(x, y, z);
    size_t s = slot(k);
    while (keys_[s] != k && keys_[s] != kEmpty) s = (s + 1) & (keys_.size() - 1);
    if (keys_[s] == kEmpty) keys_[s] = k, ++used_;
    return std::exchange(heads_[s], head);
  }

 private:
  static constexpr uint64_t kEmpty = ~uint64_t(0);
  size_t slot(uint64_t k) const { return size_t((k * 0x9E3779B97F4A7C15ull) >> 17) & (keys_.size() - 1); }
  void grow() {
    std::vector<uint64_t> keys(keys_.size() * 2, kEmpty);
    std::vector<int32_t> heads(keys_.size() * 2, -1);
    keys.swap(keys_);
    heads.swap(heads_);
    for (size_t s = 0; s < keys.size(); ++s)
      if (keys[s] != kEmpty) {
        size_t t = slot(keys[s]);
        while (keys_[t] != kEmpty) t = (t + 1) & (keys_.size() - 1);
        keys_[t] = keys[s];
        heads_[t] = heads[s];
      }
  }

  std::vector<uint64_t> keys_;
  std::vector<int32_t> heads_;
  size_t used_ = 0;
};

void thin_hashed(const double* xyz, const int64_t* idx, int64_t m, const Grid& g, double t2, std::vector<int64_t>& out) {
  CellHeads heads;
  std::vector<Kept> kept;
  for (int64_t t = 0; t < m; ++t) {
    const int64_t i = idx ? idx[t] : t;
    const double* p = xyz + 3 * i;
    int64_t c[3];
    g.cell(p, c);
    // own cell first: in a dense cloud that is where the conflict usually is
    bool conflict = false;
    for (int64_t k = heads.get(c[0], c[1], c[2]); k >= 0 && !conflict; k = kept[size_t(k)].next)
      conflict = d2(p, kept[size_t(k)].p) < t2;
    for (int dx = -1; dx <= 1 && !conflict; ++dx)
      for (int dy = -1; dy <= 1 && !conflict; ++dy)
        for (int dz = -1; dz <= 1 && !conflict; ++dz) {
          if (dx == 0 && dy == 0 && dz == 0) continue;
          for (int64_t k = heads.get(c[0] + dx, c[1] + dy, c[2] + dz); k >= 0 && !conflict; k = kept[size_t(k)].next)
            conflict = d2(p, kept[size_t(k)].p) < t2;
        }
    if (conflict) continue;
    const int32_t k = int32_t(out.size());
    kept.push_back(Kept{{p[0], p[1], p[2]}, heads.push(c[0], c[1], c[2], k)});
    out.push_back(i);
  }
}

// Whether every coordinate has |v| <= lim (false for NaN and inf), and the bounds of the points.
bool check_and_bound(const double* xyz, int64_t n, double lim, double* lo, double* hi) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  double l[3] = {inf, inf, inf}, h[3] = {-inf, -inf, -inf};
  bool ok = true;
  int64_t i = 0;
#if defined(__GNUC__)
  // PERF: 2 points (6 doubles: 3 vectors of 2) a step, as GCC does not vectorize the loop below
  // (37 -> 24 instructions a point; C++ part, surface cloud, 300k points: 9.3 -> 8.8 ms)
  typedef double V2 __attribute__((vector_size(16)));
  typedef int64_t M2 __attribute__((vector_size(16)));
  const V2 vlim = {lim, lim};
  const M2 abs_bits = {INT64_MAX, INT64_MAX};
  V2 vl[3], vh[3];
  M2 vok = {-1, -1};
  for (int k = 0; k < 3; ++k) vl[k] = V2{inf, inf}, vh[k] = V2{-inf, -inf};
  for (; i + 2 <= n; i += 2)
    for (int k = 0; k < 3; ++k) {
      V2 v;
      std::memcpy(&v, xyz + 3 * i + 2 * k, sizeof v);
      vok &= (V2)((M2)v & abs_bits) <= vlim;
      vl[k] = v < vl[k] ? v : vl[k];
      vh[k] = v > vh[k] ? v : vh[k];
    }
  // the lanes of vl[0], vl[1], vl[2] are x y, z x, y z
  for (int j = 0; j < 6; ++j) {
    const double a = vl[j / 2][j % 2], b = vh[j / 2][j % 2];
    l[j % 3] = a < l[j % 3] ? a : l[j % 3];
    h[j % 3] = b > h[j % 3] ? b : h[j % 3];
  }
  ok = vok[0] && vok[1];
#endif
  for (; i < n; ++i)
    for (int k = 0; k < 3; ++k) {
      const double v = xyz[3 * i + k];
      ok &= std::fabs(v) <= lim;  // false for NaN and inf
      l[k] = v < l[k] ? v : l[k];
      h[k] = v > h[k] ? v : h[k];
    }
  for (int k = 0; k < 3; ++k) lo[k] = l[k], hi[k] = h[k];
  return ok;
}

// Whether d2(p, q) < t2 for one of q = a, b, c, e, without branches.
inline bool any_within(const double* p, const double* a, const double* b, const double* c, const double* e, double t2) {
#if defined(__GNUC__)
  // two at a time; each lane computes d2 as d2() does, so the answer is the same
  typedef double V2 __attribute__((vector_size(16)));
  typedef int64_t M2 __attribute__((vector_size(16)));
  const V2 x1 = {a[0], b[0]}, y1 = {a[1], b[1]}, z1 = {a[2], b[2]};
  const V2 x2 = {c[0], e[0]}, y2 = {c[1], e[1]}, z2 = {c[2], e[2]};
  const V2 px = {p[0], p[0]}, py = {p[1], p[1]}, pz = {p[2], p[2]}, tt = {t2, t2};
  const V2 dx1 = px - x1, dy1 = py - y1, dz1 = pz - z1, dx2 = px - x2, dy2 = py - y2, dz2 = pz - z2;
  const M2 m = (((dx1 * dx1 + dy1 * dy1) + dz1 * dz1) < tt) | (((dx2 * dx2 + dy2 * dy2) + dz2 * dz2) < tt);
  return (m[0] | m[1]) != 0;
#else
  return (d2(p, a) < t2) | (d2(p, b) < t2) | (d2(p, c) < t2) | (d2(p, e) < t2);
#endif
}

// Thinning on a dense grid: an array of cells, each 0 (no kept point) or the index in K of its
// newest kept point, whose record links to the cell's previous one (0: none). K[0] is a dummy at
// NaN, which no point is ever closer than, so that an empty cell's head can be tested without a
// branch. Each point is tested in up to three steps, stopping at the first conflict:
//  1. quick: the newest kept point of its own cell and of the 3 face neighbours on its side (the
//     octant of the cell it is in), branch-free;
//  2. the same for the 3 edge neighbours and the corner neighbour on its side;
//  3. every kept point of the 27 cells, visiting only the rows of 3 cells that hold one.
// In a dense cloud most points are thinned away, by step 1 (surface cloud, 300k points: 91 %)
// or 2 (6 %), at the cost of one well-predicted branch. Where most points are kept, steps 1 and 2
// are wasted work and are skipped: per block of points, after a block that kept half or more.
template <bool kIdx, bool kPrefetch>
void thin_dense(const double* xyz, const int64_t* idx, int64_t m, const Grid& g, double t2, std::vector<int64_t>& out) {
  const int64_t ny = g.dims[1], nz = g.dims[2], sx = ny * nz;  // < 2^31 cells (dense_grid)
  std::vector<int32_t> heads(size_t(g.dims[0] * sx), 0);
  int32_t* const H = heads.data();
  // Kept points: room for 4096, then for every point. PERF: growing by doublings cost the uniform
  // cloud (100k points, 83k kept) 12.5 -> 8.7 ms (copies and page faults of each larger array);
  // room for every point at once cost 10k-point clouds 0.44 -> 0.56 ms from Python (the large
  // array's pages are mapped afresh on each call).
  size_t room = size_t(std::min<int64_t>(m + 1, 4096));
  std::unique_ptr<Kept[]> kept(new Kept[room]);
  Kept* K = kept.get();
  K[0] = Kept{{std::nan(""), std::nan(""), std::nan("")}, 0};
  int32_t n_kept = 1;
  out.reserve(room);
  // the first cell of each of the 9 rows (dx, dy, -1 .. 1) of 3 cells around a cell
  int64_t rows[9];
  for (int r = 0, dx = -1; dx <= 1; ++dx)
    for (int dy = -1; dy <= 1; ++dy) rows[r++] = (dx * ny + dy) * nz - 1;
  // per octant of a cell (bits 2, 1, 0: the point is in the upper half in x, y, z), the steps to
  // the face neighbours on the point's side
  int64_t faces[8][3];
  for (int oct = 0; oct < 8; ++oct) {
    faces[oct][0] = oct & 4 ? sx : -sx;
    faces[oct][1] = oct & 2 ? nz : -nz;
    faces[oct][2] = oct & 1 ? 1 : -1;
  }
  // (x - lo) * (2 (1 / h)) is exactly 2 ((x - lo) * (1 / h)) (finite: dense_grid), under 2^21
  // (Grid), so its integer part halved is Grid::cell's index and its last bit tells the half of
  // the cell the point is in
  const double lo0 = g.lo[0], lo1 = g.lo[1], lo2 = g.lo[2], inv_h2 = 2.0 * g.inv_h;
  const int32_t max0 = int32_t(g.dims[0] - 3), max1 = int32_t(ny - 3), max2 = int32_t(nz - 3);
  const int32_t sx32 = int32_t(sx), nz32 = int32_t(nz);
  // Points are located a block at a time, in a loop that GCC vectorizes (when not cropping). That
  // also takes the cell computation out of each point's dependency chain, and gives the cells
  // kAhead points ahead, whose rows of heads are prefetched when the array is large.
  constexpr int64_t kBlock = 256, kAhead = 8;
  int32_t at_of[kBlock], oct_of[kBlock];
  bool quick = true;
  for (int64_t t0 = 0; t0 < m; t0 += kBlock) {
    const int64_t nb = std::min(kBlock, m - t0);
    for (int64_t j = 0; j < nb; ++j) {
      const double* p = xyz + 3 * (kIdx ? idx[t0 + j] : t0 + j);
      const int32_t u = int32_t((p[0] - lo0) * inv_h2), v = int32_t((p[1] - lo1) * inv_h2),
                    w = int32_t((p[2] - lo2) * inv_h2);
      const int32_t x = std::min(u >> 1, max0), y = std::min(v >> 1, max1), z = std::min(w >> 1, max2);
      at_of[j] = (x + 1) * sx32 + (y + 1) * nz32 + (z + 1);
      oct_of[j] = ((u & 1) << 2) | ((v & 1) << 1) | (w & 1);
    }
    const int32_t kept_before = n_kept;
    for (int64_t j = 0; j < nb; ++j) {
#if defined(__GNUC__)
      if (kPrefetch && j + kAhead < nb)
        for (int r = 0; r < 9; ++r) __builtin_prefetch(H + at_of[j + kAhead] + rows[r]);
#endif
      const int64_t i = kIdx ? idx[t0 + j] : t0 + j;
      const double* p = xyz + 3 * i;
      const int32_t* h = H + at_of[j];
      const int64_t* f = faces[oct_of[j]];
      bool conflict = quick && any_within(p, K[h[0]].p, K[h[f[0]]].p, K[h[f[1]]].p, K[h[f[2]]].p, t2);
      if (quick && !conflict)
        conflict = any_within(p, K[h[f[0] + f[1]]].p, K[h[f[0] + f[2]]].p, K[h[f[1] + f[2]]].p,
                              K[h[f[0] + f[1] + f[2]]].p, t2);
      if (!conflict) {
        uint32_t busy = 0;  // bit r: row r holds a kept point
        for (int r = 0; r < 9; ++r) {
          const int32_t* row = h + rows[r];
          busy |= uint32_t((row[0] | row[1] | row[2]) != 0) << r;
        }
        for (; busy && !conflict; busy &= busy - 1) {
          const int32_t* row = h + rows[__builtin_ctz(busy)];
          for (int dz = 0; dz < 3 && !conflict; ++dz)
            for (int64_t k = row[dz]; k > 0 && !conflict; k = K[k].next)
              conflict = d2(p, K[k].p) < t2;
        }
      }
      if (conflict) continue;
      if (size_t(n_kept) == room) {
        room = size_t(m + 1);
        std::unique_ptr<Kept[]> more(new Kept[room]);
        std::copy(K, K + n_kept, more.get());
        kept.swap(more);
        K = kept.get();
        out.reserve(room);
      }
      K[n_kept] = Kept{{p[0], p[1], p[2]}, std::exchange(H[at_of[j]], n_kept)};
      ++n_kept;
      out.push_back(i);
    }
    quick = 2 * (n_kept - kept_before) < nb;
  }
}

}  // namespace

// PERF: side by side (surface cloud of benchmarks/bench_capt.py, min_dist 2 cm, /tmp/capt2/f.py,
// best of 15, Xeon @ 2.5 GHz with a busy sibling vCPU), the C++ part, before -> after:
// 10k 0.68 -> 0.67 ms, 100k 5.9 -> 5.3-5.4 ms, 300k 16.3 -> 14.5 ms, from three changes: kept points
// in one record with their cell's next (one cache line per test instead of two arrays), the 26
// neighbours nearest first (own, faces, edges, corners) and the head rows prefetched 8 points
// ahead. The rest is L2 latency: a head load, then the kept record it names (perf annotate: 40 %
// of the time on those two loads). filter_pointcloud as a whole also lost as_points' NumPy
// checks (bindings points_check): 10k 1.05 -> 0.78 ms, 100k 8.7 -> 6.0 ms, 300k 24.5 -> 16.4 ms.
// PERF: then thin_dense's three steps (instead of the 27 cells nearest first, one branch each),
// points located a block at a time, and the input check 2 doubles at a time. Side by side
// (_core.thin_pointcloud, min_dist 2 cm, best of 15 in 3 alternating runs, same Xeon), before ->
// after: surface 10k / 100k / 300k / 1M 0.65 / 5.2 / 14.5 / 44.7 -> 0.43 / 2.8 / 7.8 / 24.5 ms;
// uniform in a 2 m cube 10k / 100k 0.87 / 11.1 -> 0.54 / 8.1 ms; 100k in a 5 cm cube 3.2 -> 1.5 ms.
// Cachegrind, surface 10k: 369 -> 226 instructions and 2.3 -> 1.0 mispredicted branches a point
// (300k: 239 -> 151 and 1.6 -> 0.24). Tried and dropped (surface 300k, C++ part): a bitmap of
// occupied cells read 9 rows of 3 bits at a time, to visit only occupied cells (14.5 -> 18 ms:
// building the mask cost more than the skipped heads); cells 2 min_dist wide and only the 8 on
// the point's side (16.8 ms: longer lists to walk; no gain on the uniform cloud either);
// prefetching the kept records of step 1 four points ahead, or all heads (no gain); the file built
// with -mavx2 (no clear gain, so no run-time ISA dispatch).
std::vector<int64_t> thin(const double* xyz, int64_t n, double min_dist, const Crop& crop, double* max_abs) {
  std::vector<int64_t> in;
  const bool cropping = crop.use_box || crop.use_range;
  // PERF: the input check (finite, |x| <= max_abs) in the same branch-free pass as the bounds,
  // instead of a separate points_check call from Python before thin (filter_pointcloud, surface
  // cloud, best of 15, side by side: 100k 5.98 -> 5.58 ms, 300k 16.2 -> 14.7 ms)
  double blo[3], bhi[3];
  bool have_bounds = false;
  if (max_abs) {
    const bool ok = check_and_bound(xyz, n, *max_abs, blo, bhi);
    if (!ok) {
      *max_abs = -1.0;
      return {};
    }
    have_bounds = !cropping;
  }
  if (cropping) {
    const double r2 = crop.max_range * crop.max_range;
    for (int64_t i = 0; i < n; ++i) {
      const double* p = xyz + 3 * i;
      if (crop.use_box && !(p[0] >= crop.lo[0] && p[0] <= crop.hi[0] && p[1] >= crop.lo[1] && p[1] <= crop.hi[1] &&
                            p[2] >= crop.lo[2] && p[2] <= crop.hi[2]))
        continue;
      if (crop.use_range && !(d2(p, crop.origin) <= r2)) continue;
      in.push_back(i);
    }
  }
  const int64_t m = cropping ? int64_t(in.size()) : n;
  if (min_dist <= 0.0 || m < 2) {
    if (!cropping) {
      in.resize(size_t(n));
      for (int64_t i = 0; i < n; ++i) in[size_t(i)] = i;
    }
    return in;
  }
  const int64_t* idx = cropping ? in.data() : nullptr;
  double lo[3], hi[3];
  if (have_bounds)
    for (int k = 0; k < 3; ++k) lo[k] = blo[k], hi[k] = bhi[k];
  else
    Grid::bounds(xyz, idx, m, lo, hi);
  const Grid g(lo, hi, m, min_dist * (1.0 + 1e-6));
  // Cells under 1 / DBL_MAX wide (points all within ~1e-303 and min_dist under ~1e-308) have no
  // finite index
  if (!(g.inv_h <= std::numeric_limits<double>::max())) {
    char msg[200];
    std::snprintf(msg, sizeof msg,
                  "min_dist %g is too small to thin these points with (their spread and min_dist are below "
                  "1e-300); use min_dist = 0 to only crop",
                  min_dist);
    throw std::invalid_argument(msg);
  }
  const double t2 = min_dist * min_dist;
  std::vector<int64_t> out;
  if (!dense_grid(g, m))
    thin_hashed(xyz, idx, m, g, t2, out);
  else if (g.dims[0] * g.dims[1] * g.dims[2] > (int64_t(1) << 18))  // heads over 1 MB
    idx ? thin_dense<true, true>(xyz, idx, m, g, t2, out) : thin_dense<false, true>(xyz, idx, m, g, t2, out);
  else
    idx ? thin_dense<true, false>(xyz, idx, m, g, t2, out) : thin_dense<false, false>(xyz, idx, m, g, t2, out);
  return out;
}

}  // namespace simdplan::pointcloud
