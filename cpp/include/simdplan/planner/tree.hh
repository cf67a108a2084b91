// simdplan/planner/tree.hh: a search tree (or forest) of configurations with parent links.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "simdplan/planner/nearest.hh"

namespace simdplan::planner {

// dynamic-domain radius of a node whose extensions have not failed yet
inline constexpr float kUnbounded = std::numeric_limits<float>::infinity();

struct Tree {
  explicit Tree(int32_t dof) : nn(dof) {}
  NearestNeighbors nn;
  std::vector<int32_t> parent;  // -1 for a root
  std::vector<int32_t> root;    // index of the root each node descends from
  std::vector<float> radius;    // dynamic-domain radius per node (unused otherwise), kUnbounded at first

  int32_t add(const float* q, int32_t par) {
    const int32_t i = nn.add(q);
    parent.push_back(par);
    root.push_back(par < 0 ? i : root[par]);
    radius.push_back(kUnbounded);
    return i;
  }
  int32_t size() const { return nn.size(); }

  // configurations from node i up to its root, appended to out (flat, dof each)
  void path_to_root(int32_t i, std::vector<float>& out) const {
    std::vector<float> q(nn.dof());
    for (; i >= 0; i = parent[i]) {
      nn.get(i, q.data());
      out.insert(out.end(), q.begin(), q.end());
    }
  }

  // configurations from node i's root down to node i, appended to out (flat, dof each)
  void path_from_root(int32_t i, std::vector<float>& out) const {
    const size_t first = out.size();
    path_to_root(i, out);
    const size_t dof = size_t(nn.dof()), rows = (out.size() - first) / dof;
    for (size_t r = 0; r < rows / 2; ++r)
      std::swap_ranges(out.begin() + first + r * dof, out.begin() + first + (r + 1) * dof,
                       out.begin() + first + (rows - 1 - r) * dof);
  }
};

}  // namespace simdplan::planner
