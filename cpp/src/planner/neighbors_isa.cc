// neighbors_isa.cc: the SIMD parts of simdplan/planner/nearest.hh (the brute-force sweep and the
// k-d tree's search) for one ISA, exported as its NeighborKernels table.
//
// Built once per ISA by CMake with that ISA's flags and SIMDPLAN_NS, plus -ffp-contract=off: the sums
// must stay a multiply then an add in every build (simdplan/planner/neighbor_kernels.hh).
// The blocks are GCC vectors of 16 floats, which each build splits into the registers it has.
#include <cstdint>
#include <cstring>
#include <limits>

#include "simdplan/config.hh"
#include "simdplan/planner/neighbor_kernels.hh"

namespace simdplan {
namespace SIMDPLAN_NS {
namespace {

// One block of rows: 16 lanes, split into two or four registers where the ISA is narrower.
constexpr size_t kBlock = kNeighborBlock;
typedef float F16 __attribute__((vector_size(64)));
typedef int32_t I16 __attribute__((vector_size(64)));
typedef float F8 __attribute__((vector_size(32)));
typedef float F4 __attribute__((vector_size(16)));
typedef int32_t I8 __attribute__((vector_size(32)));
typedef int32_t I4 __attribute__((vector_size(16)));
constexpr float kInf = std::numeric_limits<float>::infinity();
static_assert(sizeof(F16) == kBlock * sizeof(float), "a block is one F16");
constexpr I16 kLane = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

// squared distances of rows i .. i+15 of the columns to q
[[gnu::always_inline]] inline F16 block_d2(const float* const* cols, size_t i, int32_t dof, const float* q) {
  F16 d = {};
  for (int32_t j = 0; j < dof; ++j) {
    F16 e;
    std::memcpy(&e, cols[j] + i, sizeof e);
    e -= F16{} + q[j];
    const F16 sq = e * e;
    d += sq;
  }
  return d;
}

// the least of a vector's 16 lanes (floats or ints), by halving: 16 -> 8 -> 4 -> 1
template <class V8, class V4, class V16>
[[gnu::always_inline]] inline auto least_lane(V16 v) {
  V8 a, b;
  std::memcpy(&a, &v, sizeof a);
  std::memcpy(&b, reinterpret_cast<const char*>(&v) + sizeof a, sizeof b);
  const V8 m8 = a < b ? a : b;
  V4 c, e;
  std::memcpy(&c, &m8, sizeof c);
  std::memcpy(&e, reinterpret_cast<const char*>(&m8) + sizeof c, sizeof e);
  const V4 m4 = c < e ? c : e;
  const auto x = m4[0] < m4[1] ? m4[0] : m4[1], y = m4[2] < m4[3] ? m4[2] : m4[3];
  return x < y ? x : y;
}

[[gnu::always_inline]] inline float lane_min(F16 d) { return least_lane<F8, F4>(d); }

// the least of the rows whose lane of d equals m
[[gnu::always_inline]] inline int32_t first_row_at(F16 d, I16 row, float m) {
  return least_lane<I8, I4>((d == F16{} + m) ? row : I16{} + std::numeric_limits<int32_t>::max());
}

// PERF: a running minimum per lane, reduced across lanes once at the end, instead of a horizontal
// minimum after every block (a chain of dependent compares that cost more than the block's
// distances on trees of tens of nodes).
void sweep(const float* const* cols, size_t n, int32_t dof, const float* q, size_t from, int32_t& best, float& bd) {
  const size_t begin = from - from % kBlock;
  if (begin >= n) return;
  F16 low = F16{} + kInf;  // per lane: the least distance so far and its row (the first such row)
  I16 row = I16{} - 1;
  for (size_t i = begin; i < n; i += kBlock) {
    F16 d = block_d2(cols, i, dof, q);
    // rows before `from` are the tree's, already searched
    if (i < from) d = (kLane < I16{} + int32_t(from - i)) ? F16{} + kInf : d;
    const I16 closer = d < low;
    low = closer ? d : low;
    row = closer ? kLane + int32_t(i) : row;
  }
  const float m = lane_min(low);
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
      const F16 d = block_d2(leaf_cols, i, dof, q);
      const float m = lane_min(d);
      if (m < bd) bd = m, best = leaf_point[i + size_t(first_row_at(d, kLane, m))];
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
