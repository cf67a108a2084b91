// grid.cc: the coarse occupancy grids of a CAPT (capt/view.hh, step 7 in capt/tree.hh): built
// once per tree (near_grid) and counted for the build statistics (Tree::grid_near).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "build_parts.hh"
#include "simdplan/capt/tree.hh"

namespace simdplan::capt {

using build_parts::kInfF;

namespace {

// PERF: this file is built without -m flags, where __builtin_popcountll is a libgcc call
inline int popcount64(uint64_t v) {
  v -= (v >> 1) & 0x5555555555555555ull;
  v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
  v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0Full;
  return int((v * 0x0101010101010101ull) >> 56);
}

constexpr int64_t kGridMaxAxis = 4096;
// cells per reach radius: 2.9 gives a reach of 3 cells. PERF: bench_capt --quick, AVX-512 lanes on
// the MotionBenchMaker robot spheres, interleaved runs: 1.9 (reach 2) -> 2.9: bookshelf_small
// 12.0 / 12.7 -> 10.6 / 10.6 ns, cage 17.4 / 14.6 -> 14.6 / 13.8 ns (finer cells mark less space
// near the cloud); 3.9 no better, with 2.3x the bits.
constexpr double kGridCellsPerReach = 2.9;

}  // namespace

namespace build_parts {

NearGrid near_grid(const std::vector<P3>& pts, double R, int64_t max_bits) {
  NearGrid g;
  if (pts.empty() || !(R > 0.0)) return g;
  float blo[3] = {kInfF, kInfF, kInfF}, bhi[3] = {-kInfF, -kInfF, -kInfF};
  for (const P3& p : pts)
    for (int k = 0; k < 3; ++k) blo[k] = std::min(blo[k], p.c[k]), bhi[k] = std::max(bhi[k], p.c[k]);
  double extent = 0.0;
  for (int k = 0; k < 3; ++k) extent = std::max(extent, double(bhi[k]) - double(blo[k]));
  // reach 3 cells, unless that is finer than 2048 cells across the cloud or a nanometre (tiny
  // radii: the grid gets coarser, the reach shorter, the answers stay exact)
  double side = std::max({R / kGridCellsPerReach, extent / 2048.0, 1e-9});
  for (;;) {
    g.inv = float(1.0 / side);
    const int reach = int(std::ceil(double(R) * double(g.inv) + 0.05));
    int64_t total = 64;
    bool fits = true;
    for (int k = 0; k < 3; ++k) {
      g.lo[k] = down(double(blo[k]) - double(reach + 1) / double(g.inv));
      const double span = double((bhi[k] - g.lo[k]) * g.inv);
      const int64_t cells = int64_t(span) + reach + 2;
      fits = fits && cells <= kGridMaxAxis;
      g.n[k] = int32_t(std::min<int64_t>(cells, kGridMaxAxis));
    }
    g.words = (g.n[2] + 63) / 64;
    total *= int64_t(g.n[0]) * g.n[1] * g.words;
    if (fits && total <= max_bits) {
      const int64_t words = int64_t(g.n[0]) * g.n[1] * g.words;
      auto word = [&](int64_t ix, int64_t iy) { return (ix * g.n[1] + iy) * g.words; };
      auto cell = [&](const P3& p, int64_t* c) {
        for (int k = 0; k < 3; ++k) c[k] = int64_t((p.c[k] - g.lo[k]) * g.inv);  // as the queries
      };
      const int64_t span = 2 * int64_t(reach) + 1;
      std::vector<uint64_t> a(size_t(words), 0);
      // PERF: a sparse cloud on a fine grid (the small-radius grid of 1k points in a 2 m cube: 8M
      // cells) marks each point's cube of cells directly, n span^2 runs of span bits; denser ones
      // dilate the occupancy separably, about `span` passes over the words
      if (span < 64 && int64_t(pts.size()) * span <= words) {
        for (const P3& p : pts) {
          int64_t c[3];
          cell(p, c);
          const int64_t z0 = std::max<int64_t>(0, c[2] - reach), z1 = std::min<int64_t>(g.n[2] - 1, c[2] + reach);
          const int64_t w0 = z0 >> 6, off = z0 & 63, len = z1 - z0 + 1;
          const uint64_t run = (uint64_t(1) << len) - 1;
          const uint64_t lo_bits = run << off, hi_bits = off + len > 64 ? run >> (64 - off) : 0;
          for (int64_t ix = std::max<int64_t>(0, c[0] - reach); ix <= std::min<int64_t>(g.n[0] - 1, c[0] + reach); ++ix)
            for (int64_t iy = std::max<int64_t>(0, c[1] - reach); iy <= std::min<int64_t>(g.n[1] - 1, c[1] + reach); ++iy) {
              uint64_t* line = &a[size_t(word(ix, iy) + w0)];
              line[0] |= lo_bits;
              if (hi_bits) line[1] |= hi_bits;
            }
        }
        g.bits.swap(a);
        return g;
      }
      std::vector<uint64_t> occ(size_t(words), 0);
      for (const P3& p : pts) {
        int64_t c[3];
        cell(p, c);
        occ[size_t(word(c[0], c[1]) + (c[2] >> 6))] |= uint64_t(1) << (c[2] & 63);
      }
      // dilate by `reach` cells along z (shifts with carries between a line's words), then y, then
      // x. PERF: lines and planes without a marked cell are skipped as sources (the grid of a
      // sparse cloud is mostly clear), and the x pass ORs whole planes through restrict pointers
      // so it vectorizes (uniform 1k points in a 2 m cube: near_grid was 37% of the build)
      const int64_t lines = int64_t(g.n[0]) * g.n[1];
      const int words_per_line = g.words;
      for (int64_t line = 0; line < lines; ++line) {
        const uint64_t* in = &occ[size_t(line * words_per_line)];
        uint64_t any = 0;
        for (int w = 0; w < words_per_line; ++w) any |= in[w];
        if (!any) continue;
        uint64_t* out = &a[size_t(line * words_per_line)];
        for (int w = 0; w < words_per_line; ++w) {
          const uint64_t x = in[w], below = w > 0 ? in[w - 1] : 0, above = w + 1 < words_per_line ? in[w + 1] : 0;
          uint64_t v = x;
          for (int d = 1; d <= reach; ++d) v |= (x << d) | (x >> d) | (below >> (64 - d)) | (above << (64 - d));
          out[w] = v;
        }
      }
      std::fill(occ.begin(), occ.end(), 0);
      std::vector<uint8_t> plane_used(size_t(g.n[0]), 0);
      for (int64_t ix = 0; ix < g.n[0]; ++ix)
        for (int64_t j = 0; j < g.n[1]; ++j) {
          const uint64_t* src = &a[size_t(word(ix, j))];
          uint64_t any = 0;
          for (int w = 0; w < words_per_line; ++w) any |= src[w];
          if (!any) continue;
          plane_used[size_t(ix)] = 1;
          for (int64_t iy = std::max<int64_t>(0, j - reach); iy <= std::min<int64_t>(g.n[1] - 1, j + reach); ++iy) {
            uint64_t* dst = &occ[size_t(word(ix, iy))];
            for (int w = 0; w < words_per_line; ++w) dst[w] |= src[w];
          }
        }
      std::fill(a.begin(), a.end(), 0);
      const int64_t plane = int64_t(g.n[1]) * words_per_line;
      for (int64_t j = 0; j < g.n[0]; ++j) {
        if (!plane_used[size_t(j)]) continue;
        const uint64_t* __restrict src = &occ[size_t(j * plane)];
        for (int64_t ix = std::max<int64_t>(0, j - reach); ix <= std::min<int64_t>(g.n[0] - 1, j + reach); ++ix) {
          uint64_t* __restrict dst = &a[size_t(ix * plane)];
          for (int64_t w = 0; w < plane; ++w) dst[w] |= src[w];
        }
      }
      g.bits.swap(a);
      return g;
    }
    side *= std::max(1.01, std::cbrt(double(total) / double(max_bits)) * 1.01);
    if (!fits) side *= 1.5;
  }
}

}  // namespace build_parts

int64_t Tree::grid_near(int which) const {
  if (!view_.grid_bits || (which == 1 && view_.grid_small_rr == -kInfF)) return 0;
  const CaptGrid& g = view_.grid[which];
  int64_t near = 0;
  for (int64_t line = 0; line < int64_t(g.n[0]) * g.n[1]; ++line)
    for (int w = 0; w < g.words; ++w) {
      uint64_t v = view_.grid_bits[size_t(g.base + line * g.words + w)];
      const int valid = std::min(64, g.n[2] - 64 * w);  // the z dilation also sets bits past n[2]
      if (valid < 64) v &= (uint64_t(1) << valid) - 1;
      near += popcount64(v);
    }
  return near;
}

}  // namespace simdplan::capt
