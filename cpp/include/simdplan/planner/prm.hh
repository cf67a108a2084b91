// simdplan/planner/prm.hh: probabilistic roadmap, kept and reused across queries.
//
// L. E. Kavraki, P. Svestka, J.-C. Latombe, M. H. Overmars, "Probabilistic roadmaps for path
// planning in high-dimensional configuration spaces", IEEE T-RA 12(4), 1996, doi:10.1109/70.508439.
// Valid samples become vertices connected to their k nearest neighbours by free edges (discrete
// Link). A query adds the start and goals as vertices (connected the same way), grows the roadmap
// until a start-goal component is shared (union-find) or the budget ends, then returns the
// shortest roadmap path (Dijkstra). Query vertices stay in the roadmap for later queries.
#pragma once
#include <cmath>
#include <functional>
#include <queue>
#include <vector>

#include "simdplan/planner/common.hh"
#include "simdplan/planner/nearest.hh"

namespace simdplan::planner {

struct PrmSettings {
  int32_t prm_neighbors = 10;  // k nearest neighbours connected per vertex

  template <class Visit>
  static void fields(Visit&& v) {
    v("prm_neighbors", &PrmSettings::prm_neighbors);
  }
};

class Roadmap {
 public:
  explicit Roadmap(int32_t dof) : nn_(dof) {}

  int32_t size() const { return nn_.size(); }
  int64_t edges() const { return n_edges_; }

  // adds a valid configuration as a vertex and connects it to its k nearest neighbours
  int32_t add_vertex(Checker& check, const float* q, int32_t k) {
    const int32_t v = nn_.add(q);
    adj_.emplace_back();
    uf_.push_back(v);
    nn_.k_nearest(q, k, v, near_);
    std::vector<float> other(nn_.dof());
    for (const auto& [d2, u] : near_) {
      nn_.get(u, other.data());
      if (!check.motion(other.data(), q, Checker::Known::both)) continue;
      const float w = std::sqrt(d2);
      adj_[v].push_back({u, w});
      adj_[u].push_back({v, w});
      ++n_edges_;
      unite(u, v);
    }
    return v;
  }

  // samples until `n_samples` were drawn or the deadline passes; returns samples drawn
  int64_t grow(Checker& check, ConfigSampler& sampler, int64_t n_samples, int32_t k, const Deadline& deadline) {
    std::vector<float> q(nn_.dof());
    int64_t i = 0;
    for (; i < n_samples; ++i) {
      if ((i & 7) == 0 && deadline.passed()) break;
      sampler.sample(q.data());
      if (check.valid(q.data())) add_vertex(check, q.data(), k);
    }
    return i;
  }

  bool connected(int32_t a, int32_t b) { return find(a) == find(b); }

  // shortest path between vertices a and b as flat rows (empty if not connected)
  std::vector<float> shortest_path(int32_t a, int32_t b) const {
    std::vector<double> dist(size(), 1e300);
    std::vector<int32_t> prev(size(), -1);
    using Item = std::pair<double, int32_t>;
    std::priority_queue<Item, std::vector<Item>, std::greater<Item>> open;
    dist[a] = 0;
    open.push({0.0, a});
    while (!open.empty()) {
      auto [d, v] = open.top();
      open.pop();
      if (d > dist[v]) continue;
      if (v == b) break;
      for (const auto& [u, w] : adj_[v])
        if (d + w < dist[u]) dist[u] = d + w, prev[u] = v, open.push({dist[u], u});
    }
    std::vector<float> path;
    if (dist[b] >= 1e300) return path;
    std::vector<int32_t> chain;
    for (int32_t v = b; v >= 0; v = prev[v]) chain.push_back(v);
    std::vector<float> q(nn_.dof());
    for (size_t i = chain.size(); i-- > 0;) {
      nn_.get(chain[i], q.data());
      path.insert(path.end(), q.begin(), q.end());
    }
    return path;
  }

 private:
  struct Edge {
    int32_t to;
    float w;
  };
  int32_t find(int32_t x) {
    while (uf_[x] != x) x = uf_[x] = uf_[uf_[x]];
    return x;
  }
  void unite(int32_t a, int32_t b) { uf_[find(a)] = find(b); }

  NearestNeighbors nn_;
  std::vector<std::vector<Edge>> adj_;
  std::vector<int32_t> uf_;
  std::vector<std::pair<float, int32_t>> near_;
  int64_t n_edges_ = 0;
};

// One PRM query on `roadmap` (grown as needed, within max_iterations samples and the deadline).
inline std::vector<float> prm_query(Roadmap& roadmap, ConfigSampler& sampler, const Problem& p, const PrmSettings& own) {
  Checker& check = p.check;
  PlannerStats& stats = p.stats;
  const int64_t max_iterations = p.settings.max_iterations;
  const int32_t n_goals = p.n_goals();
  const int32_t k = own.prm_neighbors;
  const int32_t vs = roadmap.add_vertex(check, p.start, k);
  std::vector<int32_t> vg;
  for (int32_t g = 0; g < n_goals; ++g) vg.push_back(roadmap.add_vertex(check, p.goal(g), k));
  int64_t drawn = 0;
  for (;;) {
    for (int32_t g = 0; g < n_goals; ++g) {
      if (roadmap.connected(vs, vg[g])) {
        stats.goal_index = g;
        stats.iterations = drawn;
        stats.tree_nodes = roadmap.size();
        return roadmap.shortest_path(vs, vg[g]);
      }
    }
    if (drawn >= max_iterations || p.deadline.passed()) break;
    // connectivity is re-tested every 64 samples
    drawn += roadmap.grow(check, sampler, std::min<int64_t>(64, max_iterations - drawn), k, p.deadline);
  }
  stats.iterations = drawn;
  stats.tree_nodes = roadmap.size();
  return {};
}

// A one-off query on a fresh roadmap (simdplan.Roadmap keeps one across queries).
inline std::vector<float> prm(const Problem& p, const PrmSettings& own) {
  Roadmap roadmap(p.dof());
  ConfigSampler sampler(p.settings.sampler, p.settings.seed, p.lower, p.upper);
  return prm_query(roadmap, sampler, p, own);
}

}  // namespace simdplan::planner
