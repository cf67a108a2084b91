// simdplan/planner/nearest.hh: nearest neighbours in joint space (Euclidean), exact.
//
// Points are stored structure-of-arrays (one float array per joint) so the distance loop is a
// straight sweep the compiler vectorises. Brute force is exact and, for the tree sizes the
// MotionBenchMaker problems produce (tens to a few thousand nodes), cheaper than maintaining a
// tree. NOTE: a spatial index for trees of 10^5 nodes is not built yet (see the planner issue).
#pragma once
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

namespace simdplan::planner {

class NearestNeighbors {
 public:
  explicit NearestNeighbors(int32_t dof) : dof_(dof), coords_(dof) {}

  int32_t size() const { return static_cast<int32_t>(n_); }
  int32_t dof() const { return dof_; }

  int32_t add(const float* q) {
    for (int32_t j = 0; j < dof_; ++j) coords_[j].push_back(q[j]);
    d2_.push_back(0.0f);
    return static_cast<int32_t>(n_++);
  }

  void get(int32_t i, float* q) const {
    for (int32_t j = 0; j < dof_; ++j) q[j] = coords_[j][i];
  }

  // index of the nearest stored point to q (-1 if empty) and its squared distance
  std::pair<int32_t, float> nearest(const float* q) const {
    distances(q);
    int32_t best = -1;
    float bd = std::numeric_limits<float>::infinity();
    for (size_t i = 0; i < n_; ++i)
      if (d2_[i] < bd) bd = d2_[i], best = static_cast<int32_t>(i);
    return {best, bd};
  }

  // the k nearest (ascending distance), excluding `skip`
  void k_nearest(const float* q, int32_t k, int32_t skip, std::vector<std::pair<float, int32_t>>& out) const {
    distances(q);
    out.clear();
    for (size_t i = 0; i < n_; ++i) {
      if (static_cast<int32_t>(i) == skip) continue;
      const float d = d2_[i];
      if (static_cast<int32_t>(out.size()) < k || d < out.back().first) {
        auto it = out.end();
        while (it != out.begin() && (it - 1)->first > d) --it;
        out.insert(it, {d, static_cast<int32_t>(i)});
        if (static_cast<int32_t>(out.size()) > k) out.pop_back();
      }
    }
  }

 private:
  void distances(const float* q) const {
    float* d = d2_.data();
    for (size_t i = 0; i < n_; ++i) d[i] = 0.0f;
    for (int32_t j = 0; j < dof_; ++j) {
      const float* x = coords_[j].data();
      const float qj = q[j];
      for (size_t i = 0; i < n_; ++i) {
        const float e = x[i] - qj;
        d[i] += e * e;
      }
    }
  }

  int32_t dof_;
  size_t n_ = 0;
  std::vector<std::vector<float>> coords_;
  mutable std::vector<float> d2_;
};

}  // namespace simdplan::planner
