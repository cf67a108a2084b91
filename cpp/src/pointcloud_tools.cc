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
#include <cstdlib>
#include <cstring>
#include <limits>
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

// Kept-point lists per grid cell: a dense head array when the grid is small, else a hash table.
class CellHeads {
 public:
  CellHeads(const Grid& g, int64_t m) : g_(g) {
    const double cells = double(g.dims[0]) * double(g.dims[1]) * double(g.dims[2]);
    dense_ = cells <= std::max(double(int64_t(1) << 22), 4.0 * double(m));
    if (dense_) {
      heads_.assign(size_t(cells), -1);
    } else {
      keys_.assign(1024, kEmpty);
      heads_.assign(1024, -1);
    }
  }

  bool dense() const { return dense_; }
  const int32_t* dense_at(int64_t x, int64_t y, int64_t z) const {
    return &heads_[size_t((x * g_.dims[1] + y) * g_.dims[2] + z)];
  }

  int32_t get(int64_t x, int64_t y, int64_t z) const {
    if (dense_) return heads_[size_t((x * g_.dims[1] + y) * g_.dims[2] + z)];
    const uint64_t k = Grid::key(x, y, z);
    for (size_t s = slot(k);; s = (s + 1) & (keys_.size() - 1)) {
      if (keys_[s] == k) return heads_[s];
      if (keys_[s] == kEmpty) return -1;
    }
  }

  // sets the head of cell (x, y, z), returning the previous one
  int32_t push(int64_t x, int64_t y, int64_t z, int32_t head) {
    if (dense_) {
      int32_t& h = heads_[size_t((x * g_.dims[1] + y) * g_.dims[2] + z)];
      return std::exchange(h, head);
    }
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

  const Grid& g_;
  bool dense_ = true;
  std::vector<int32_t> heads_;
  std::vector<uint64_t> keys_;
  size_t used_ = 0;
};

}  // namespace

// PERF: side by side (surface cloud of benchmarks/bench_capt.py, min_dist 2 cm, /tmp/capt2/f.py,
// best of 15, Xeon @ 2.5 GHz with a busy sibling vCPU), the C++ part, before -> after:
// 10k 0.68 -> 0.67 ms, 100k 5.9 -> 5.3-5.4 ms, 300k 16.3 -> 14.5 ms, from three changes: kept points
// in one record with their cell's next (one cache line per test instead of two arrays), the 26
// neighbours nearest first (own, faces, edges, corners) and the head rows prefetched 8 points
// ahead. The rest is L2 latency: a head load, then the kept record it names (perf annotate: 40 %
// of the time on those two loads). filter_pointcloud as a whole also lost as_points' NumPy
// checks (bindings points_check): 10k 1.05 -> 0.78 ms, 100k 8.7 -> 6.0 ms, 300k 24.5 -> 16.4 ms.
std::vector<int64_t> thin(const double* xyz, int64_t n, double min_dist, const Crop& crop, double* max_abs) {
  std::vector<int64_t> in;
  const bool cropping = crop.use_box || crop.use_range;
  // PERF: the input check (finite, |x| <= max_abs) in the same branch-free pass as the bounds,
  // instead of a separate points_check call from Python before thin (filter_pointcloud, surface
  // cloud, best of 15, side by side: 100k 5.98 -> 5.58 ms, 300k 16.2 -> 14.7 ms)
  double blo[3], bhi[3];
  bool have_bounds = false;
  if (max_abs) {
    const double lim = *max_abs;
    double l[3] = {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity(),
                   std::numeric_limits<double>::infinity()};
    double h[3] = {-l[0], -l[0], -l[0]};
    int ok = 1;
    for (int64_t i = 0; i < n; ++i)
      for (int k = 0; k < 3; ++k) {
        const double v = xyz[3 * i + k];
        ok &= std::fabs(v) <= lim;  // false for NaN and inf
        l[k] = v < l[k] ? v : l[k];
        h[k] = v > h[k] ? v : h[k];
      }
    if (!ok) {
      *max_abs = -1.0;
      return {};
    }
    for (int k = 0; k < 3; ++k) blo[k] = l[k], bhi[k] = h[k];
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
  CellHeads heads(g, m);

  const double t2 = min_dist * min_dist;
  // own cell first, then the 6 face, 12 edge and 8 corner neighbours: nearer cells first, so a
  // point that is thinned away (most of them, in a dense cloud) finds its conflict sooner
  int64_t offsets[27];
  for (int j = 0, ring = 0; ring <= 3; ++ring)
    for (int dx = -1; dx <= 1; ++dx)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dz = -1; dz <= 1; ++dz)
          if (std::abs(dx) + std::abs(dy) + std::abs(dz) == ring) offsets[j++] = (dx * g.dims[1] + dy) * g.dims[2] + dz;
  // kept points' coordinates with the next kept point of their cell, one record each (one cache
  // line holds all a test needs)
  struct Kept {
    double p[3];
    int64_t next;
  };
  std::vector<Kept> kept;
  std::vector<int64_t> out;
  constexpr int64_t kPrefetchAhead = 8;
  int64_t rows[9];  // the cells (dx, dy, -1) of the 27, each row's first
  for (int r = 0, dx = -1; dx <= 1; ++dx)
    for (int dy = -1; dy <= 1; ++dy) rows[r++] = (dx * g.dims[1] + dy) * g.dims[2] - 1;
  for (int64_t t = 0; t < m; ++t) {
    const int64_t i = idx ? idx[t] : t;
    const double* p = xyz + 3 * i;
    int64_t c[3];
    g.cell(p, c);
#if defined(__GNUC__)
    // the head loads are random reads from an array larger than L1 and wait for each other;
    // fetching the 9 rows of the 27 cells of the point kPrefetchAhead places on overlaps them
    if (heads.dense() && t + kPrefetchAhead < m) {
      const int64_t j = idx ? idx[t + kPrefetchAhead] : t + kPrefetchAhead;
      int64_t c2[3];
      g.cell(xyz + 3 * j, c2);
      const int32_t* h2 = heads.dense_at(c2[0], c2[1], c2[2]);
      for (int r = 0; r < 9; ++r) __builtin_prefetch(h2 + rows[r]);
    }
#endif
    // own cell first: in a dense cloud that is where the conflict usually is
    bool conflict = false;
    if (heads.dense()) {
      // PERF: 27 precomputed offsets into the head array instead of 27 index computations
      // (1M points: 140 -> 117 ms uniform, 46 -> 41 ms on a surface)
      const int32_t* h = heads.dense_at(c[0], c[1], c[2]);
      for (int j = 0; j < 27 && !conflict; ++j)
        for (int64_t k = h[offsets[j]]; k >= 0 && !conflict; k = kept[size_t(k)].next)
          conflict = d2(p, kept[size_t(k)].p) < t2;
    } else {
      for (int64_t k = heads.get(c[0], c[1], c[2]); k >= 0 && !conflict; k = kept[size_t(k)].next)
        conflict = d2(p, kept[size_t(k)].p) < t2;
      for (int dx = -1; dx <= 1 && !conflict; ++dx)
        for (int dy = -1; dy <= 1 && !conflict; ++dy)
          for (int dz = -1; dz <= 1 && !conflict; ++dz) {
            if (dx == 0 && dy == 0 && dz == 0) continue;
            for (int64_t k = heads.get(c[0] + dx, c[1] + dy, c[2] + dz); k >= 0 && !conflict; k = kept[size_t(k)].next)
              conflict = d2(p, kept[size_t(k)].p) < t2;
          }
    }
    if (conflict) continue;
    const int32_t k = int32_t(out.size());
    kept.push_back(Kept{{p[0], p[1], p[2]}, heads.push(c[0], c[1], c[2], k)});
    out.push_back(i);
  }
  return out;
}

}  // namespace simdplan::pointcloud
