// robot_shortcuts.cc: the structure RobotModel derives at load for the kernels' fast paths
// (kin/robot_view.hh): signed-permutation origins, body bounds, pair blocks. With fast paths off
// (RobotArrays::fast_paths) each is built in its plain form, which the tests compare with.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "kin/robot_model.hh"

namespace simdplan {
namespace {

// Whether the rotation of a row-major 3 x 4 origin is a signed permutation (RobotView::body_axes);
// if so perm and sign (4 each) receive its rows and column signs and the translation bits as
// RobotView::body_perm and body_sign hold them.
bool origin_axes(const float* o, int32_t* perm, float* sign) {
  bool used[3] = {false, false, false};
  for (int j = 0; j < 3; ++j) {
    int row = -1;
    for (int k = 0; k < 3; ++k) {
      const float v = o[4 * k + j];
      if (v == 0.0f) continue;
      if ((v != 1.0f && v != -1.0f) || row >= 0) return false;
      row = k;
      sign[j] = v < 0 ? -1.0f : 1.0f;
    }
    // no entry, or a row taken twice: not a permutation (a singular origin; the general product handles it)
    if (row < 0 || used[row]) return false;
    used[row] = true;
    perm[j] = row;
  }
  perm[3] = 0;
  for (int r = 0; r < 3; ++r)
    if (o[4 * r + 3] != 0.0f) perm[3] |= 1 << r;
  sign[3] = 1.0f;
  return true;
}

// The margin kinematics.py gives group bounds, so float32 rounding never lets a group poke out.
constexpr double kBoundMargin = 1e-5;

}  // namespace

// RobotView::body_axes, body_perm and body_sign for fk_body.
void RobotModel::origin_tables(size_t nb) {
  body_axes_.assign(nb, kAxesGeneral);
  body_perm_.assign(4 * nb, 0);
  body_sign_.assign(4 * nb, 1.0f);
  for (size_t b = 0; b < nb && a_.fast_paths; ++b) {
    int32_t perm[4];
    float sign[4];
    if (!origin_axes(a_.body_origin.data() + 12 * b, perm, sign)) continue;
    body_axes_[b] = kAxesPermutation;
    std::copy(perm, perm + 4, body_perm_.begin() + 4 * b);
    std::copy(sign, sign + 4, body_sign_.begin() + 4 * b);
  }
  view_.body_axes = body_axes_.data();
  view_.body_perm = body_perm_.data();
  view_.body_sign = body_sign_.data();
}

// Body bounds (RobotView::body_bound): the sphere around the AABB centre of the body's group bounds.
// With fast paths off every radius is 0, so the kernels test each group against the environment.
void RobotModel::body_bounds(size_t nb) {
  body_bound_.assign(4 * nb, 0.0f);
  body_group_begin_.assign(nb, 0);
  body_group_end_.assign(nb, 0);
  const size_t ng = a_.group_body.size();
  for (size_t g = ng; g-- > 0;) body_group_begin_[a_.group_body[g]] = int32_t(g);
  for (size_t g = 0; g < ng; ++g) body_group_end_[a_.group_body[g]] = int32_t(g + 1);
  for (size_t b = 0; b < nb && a_.fast_paths; ++b) {
    const int32_t gb = body_group_begin_[b], ge = body_group_end_[b];
    if (ge - gb < 2) continue;
    double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    for (int32_t g = gb; g < ge; ++g)
      for (int k = 0; k < 3; ++k) {
        lo[k] = std::min(lo[k], double(a_.group_bound[4 * g + k]) - a_.group_bound[4 * g + 3]);
        hi[k] = std::max(hi[k], double(a_.group_bound[4 * g + k]) + a_.group_bound[4 * g + 3]);
      }
    float c[3];
    for (int k = 0; k < 3; ++k) c[k] = float(0.5 * (lo[k] + hi[k]));
    double r = 0;
    for (int32_t g = gb; g < ge; ++g) {
      const float* x = a_.group_bound.data() + 4 * g;
      r = std::max(r, std::hypot(double(x[0]) - c[0], double(x[1]) - c[1], double(x[2]) - c[2]) + x[3]);
    }
    for (int k = 0; k < 3; ++k) body_bound_[4 * b + k] = c[k];
    body_bound_[4 * b + 3] = float(r * (1 + kBoundMargin) + kBoundMargin);
  }
  view_.body_bound = body_bound_.data();
  view_.body_group_begin = body_group_begin_.data();
  view_.body_group_end = body_group_end_.data();
}

// Pair blocks (RobotView::pair_block_begin): pairs grouped by their two bodies, blocks in the order
// of their first pair. A side whose pairs all share one group is bounded by that group's bound, else
// by its body's. With fast paths off every pair is a block of its own (no block test).
void RobotModel::pair_blocks() {
  const int32_t np = int32_t(a_.pairs.size() / 2);
  const bool fast = a_.fast_paths;
  std::vector<std::vector<int32_t>> members;
  std::vector<std::array<int32_t, 2>> bodies;
  for (int32_t p = 0; p < np; ++p) {
    const std::array<int32_t, 2> key = {a_.group_body[a_.pairs[2 * p]], a_.group_body[a_.pairs[2 * p + 1]]};
    size_t k = 0;
    while (fast && k < bodies.size() && bodies[k] != key) ++k;
    if (!fast || k == bodies.size()) bodies.push_back(key), members.emplace_back();
    members[fast ? k : members.size() - 1].push_back(p);
  }
  pair_block_begin_.assign(1, 0);
  pair_order_.clear();
  pair_block_side_.clear();
  for (size_t k = 0; k < members.size(); ++k) {
    for (int side = 0; side < 2; ++side) {
      const int32_t g0 = a_.pairs[2 * members[k][0] + side];
      bool one_group = true;
      for (int32_t p : members[k]) one_group = one_group && a_.pairs[2 * p + side] == g0;
      pair_block_side_.push_back(one_group ? g0 : -1 - bodies[k][side]);
    }
    pair_order_.insert(pair_order_.end(), members[k].begin(), members[k].end());
    pair_block_begin_.push_back(int32_t(pair_order_.size()));
  }
  view_.n_pair_blocks = int32_t(members.size());
  view_.pair_block_begin = pair_block_begin_.data();
  view_.pair_order = pair_order_.data();
  view_.pair_block_side = pair_block_side_.data();
}

}  // namespace simdplan
