// neighbors_isa.cc: the SIMD parts of simdplan/planner/nearest.hh (the brute-force sweep and the
// k-d tree's search) for one ISA, exported as its NeighborKernels table.
//
// Built once per ISA by CMake with that ISA's flags and SIMDPLAN_NS, plus -ffp-contract=off: the sums
// must stay a multiply then an add in every build (simdplan/planner/neighbor_kernels.hh).
// A block of 16 rows is held as 16 / N GCC vectors of the ISA's native width N (16 floats with
// AVX-512, 8 with AVX2, 4 with the baseline's SSE2).
// PERF: one vector of 16 floats in every build (as before) left GCC to lower the AVX2 and baseline
// builds' compares and selects of that too-wide type lane by lane. 16k points in 7-D, per query
// (benchmarks/bench_nearest.py --quick): AVX2 brute force 128 -> 6.9 us and tree search 7.0 -> 0.65 us,
// baseline 73 -> 14 us and 4.1 -> 1.0 us; AVX-512 unchanged (6.5 and 0.68 us).
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "simdplan/config.hh"
#include "simdplan/planner/neighbor_kernels.hh"

namespace simdplan {
namespace SIMDPLAN_NS {
namespace {

constexpr size_t kBlock = kNeighborBlock;
#if defined(__AVX512F__)
constexpr int kWidth = 16;
#elif defined(__AVX2__)
constexpr int kWidth = 8;
#else
constexpr int kWidth = 4;
#endif
constexpr int kParts = int(kBlock) / kWidth;  // native vectors per block
static_assert(kParts * kWidth == int(kBlock), "a block is whole native vectors");
typedef float FN __attribute__((vector_size(kWidth * sizeof(float))));
typedef int32_t IN __attribute__((vector_size(kWidth * sizeof(int32_t))));
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int32_t kNoRow = std::numeric_limits<int32_t>::max();

struct Block {
  FN part[kParts];
};
struct Rows {
  IN part[kParts];
};

// lanes 0 .. 15 of a block: part p holds lanes p N .. p N + N - 1
[[gnu::always_inline]] inline Rows block_lanes() {
  Rows r;
  for (int p = 0; p < kParts; ++p)
    for (int l = 0; l < kWidth; ++l) r.part[p][l] = p * kWidth + l;
  return r;
}

// squared distances of rows i .. i+15 of the columns to q
[[gnu::always_inline]] inline Block block_d2(const float* const* cols, size_t i, int32_t dof, const float* q) {
  Block d;
  for (int p = 0; p < kParts; ++p) d.part[p] = FN{};
  for (int32_t j = 0; j < dof; ++j) {
    const FN qj = FN{} + q[j];
    for (int p = 0; p < kParts; ++p) {
      FN e;
      std::memcpy(&e, cols[j] + i + size_t(p) * kWidth, sizeof e);
      e -= qj;
      const FN sq = e * e;
      d.part[p] += sq;
    }
  }
  return d;
}

// the least of W values in order
template <class T, int W>
[[gnu::always_inline]] inline T least_of(const T* v) {
  T x = v[0];
  for (int l = 1; l < W; ++l) x = v[l] < x ? v[l] : x;
  return x;
}
// lanes[0 .. N/2) = the lane-wise least of lanes[0 .. N/2) and lanes[N/2 .. N)
template <class T, int N>
[[gnu::always_inline]] inline void fold_half(T* lanes) {
  typedef T H __attribute__((vector_size(N / 2 * sizeof(T))));
  H a, b;
  std::memcpy(&a, lanes, sizeof a);
  std::memcpy(&b, lanes + N / 2, sizeof b);
  const H m = a < b ? a : b;
  std::memcpy(lanes, &m, sizeof m);
}

// the least lane of one native vector (floats or ints), by halving down to 4 lanes
template <class V>
[[gnu::always_inline]] inline auto least_lane(V v) {
  using T = std::remove_reference_t<decltype(v[0])>;
  alignas(64) T lanes[kWidth];
  std::memcpy(lanes, &v, sizeof v);
  if constexpr (kWidth == 16) fold_half<T, 16>(lanes);
  if constexpr (kWidth >= 8) fold_half<T, 8>(lanes);
  return least_of<T, 4>(lanes);
}

[[gnu::always_inline]] inline float block_min(const Block& d) {
  FN m = d.part[0];
  for (int p = 1; p < kParts; ++p) m = d.part[p] < m ? d.part[p] : m;
  return least_lane(m);
}

// the least of the rows whose lane of d equals m
[[gnu::always_inline]] inline int32_t first_row_at(const Block& d, const Rows& row, float m) {
  IN r = IN{} + kNoRow;
  for (int p = 0; p < kParts; ++p) {
    const IN here = (d.part[p] == FN{} + m) ? row.part[p] : IN{} + kNoRow;
    r = here < r ? here : r;
  }
  return least_lane(r);
}

// PERF: a running minimum per lane, reduced across lanes once at the end, instead of a horizontal
// minimum after every block (a chain of dependent compares that cost more than the block's
// distances on trees of tens of nodes).
void sweep(const float* const* cols, size_t n, int32_t dof, const float* q, size_t from, int32_t& best, float& bd) {
  const size_t begin = from - from % kBlock;
  if (begin >= n) return;
  Block low;  // per lane: the least distance so far and its row (the first such row)
  Rows row;
  for (int p = 0; p < kParts; ++p) low.part[p] = FN{} + kInf, row.part[p] = IN{} - 1;
  const Rows lane = block_lanes();
  for (size_t i = begin; i < n; i += kBlock) {
    Block d = block_d2(cols, i, dof, q);
    for (int p = 0; p < kParts; ++p) {
      // rows before `from` are the tree's, already searched
      if (i < from) d.part[p] = (lane.part[p] < IN{} + int32_t(from - i)) ? FN{} + kInf : d.part[p];
      const IN closer = d.part[p] < low.part[p];
      low.part[p] = closer ? d.part[p] : low.part[p];
      row.part[p] = closer ? lane.part[p] + int32_t(i) : row.part[p];
    }
  }
  const float m = block_min(low);
  if (!(m < bd)) return;
  bd = m, best = first_row_at(low, row, m);  // as a strict < scan over the rows keeps
}

// PERF: each leaf is one block of its own copy of the points (NearestNeighbors::rebuild), scanned as
// the sweep scans, where a scalar loop over the leaf's points read them through the permutation.
void tree_search(const KdNode* nodes, const float* const* leaf_cols, const int32_t* leaf_point, int32_t dof,
                 const float* q, int32_t& best, float& bd) {
  // depth first, the near child first; a far child is visited if its splitting plane is closer than
  // the best when its turn comes (the recursive search's order, kept on an explicit stack)
  struct Far {
    int32_t node;
    float plane_d2;
  };
  Far stack[64];  // deeper than any tree of 2^31 points split at medians
  int32_t top = 0;
  int32_t id = 0;
  for (;;) {
    const KdNode& nd = nodes[id];
    if (nd.axis >= 0) {
      const float diff = q[nd.axis] - nd.split;
      stack[top++] = {diff < 0 ? nd.right : nd.left, diff * diff};
      id = diff < 0 ? nd.left : nd.right;
      continue;
    }
    // a leaf: whole blocks of leaf_cols from nd.begin, padded with +inf (more than one block only
    // when its points are all equal and could not be split)
    for (int32_t k = 0; k < nd.count; k += kBlock) {
      const size_t i = size_t(nd.begin + k);
      const Block d = block_d2(leaf_cols, i, dof, q);
      const float m = block_min(d);
      if (m < bd) bd = m, best = leaf_point[i + size_t(first_row_at(d, block_lanes(), m))];
    }
    do {
      if (top == 0) return;
      --top;
    } while (!(stack[top].plane_d2 < bd));
    id = stack[top].node;
  }
}

const NeighborKernels kTable = {kThisIsaName, &sweep, &tree_search};

}  // namespace
}  // namespace SIMDPLAN_NS

template <>
const NeighborKernels* isa_table<NeighborKernels, kThisIsa>() {
  return &SIMDPLAN_NS::kTable;
}

}  // namespace simdplan
