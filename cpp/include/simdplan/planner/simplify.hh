// simdplan/planner/simplify.hh: path shortening and smoothing that keeps every edge checked.
//
// Paths are flat rows of dof floats. Every operation that creates an edge checks it with the
// planner's Link before accepting it, so the output's edges have all passed Link. Pieces of earlier
// edges are checked again with discrete Link (their samples differ from the edge they came from);
// certified Link already proved them (Checker::piece).
// Steps, as in common practice (e.g. OMPL's PathSimplifier): vertex reduction (first connect each
// vertex to the farthest later vertex it reaches; at the end, drop a vertex when its neighbours
// connect directly), random shortcuts between points on the path (Geraerts and Overmars, "Creating
// high-quality paths for motion planning", IJRR 2007, doi:10.1177/0278364907079280), and Laplacian
// smoothing (move a vertex halfway toward its neighbours' midpoint when both new edges are free and
// the path gets shorter).
// Every step stops when the checker's deadline passes (Checker::set_deadline): the path is then as
// far as it got, and every edge of it still passed Link.
#pragma once
#include <cmath>
#include <vector>

#include "simdplan/planner/checker.hh"
#include "simdplan/planner/sampler.hh"

namespace simdplan::planner {

inline double path_cost(const std::vector<float>& p, int32_t dof) {
  double c = 0;
  for (size_t r = 1; r < p.size() / dof; ++r) c += Checker::distance(&p[(r - 1) * dof], &p[r * dof], dof);
  return c;
}

class Simplifier {
 public:
  Simplifier(Checker& check, Rng& rng) : check_(check), rng_(rng), dof_(check.dof()) {}

  // drops vertices whose neighbours connect directly; returns whether anything changed
  // PERF: run last, on a path smoothing has pulled tight against obstacles, its certified tries that
  // fail are mostly edges too close to call, which subdivide for many kernel passes (6.5 each on 21
  // MotionBenchMaker panda problems, where this step made 22% of simplification's passes). A vertex
  // whose shortcut is not proven within kVertexPasses passes is kept: on the 700 panda problems,
  // certified simplification median 196-236 -> 173-176 us, final cost median 4.84 rad both (three
  // alternating runs); on 16-21 problems per robot the summed final cost changed by +0.7% (panda),
  // +0.1% (ur5, iiwa, mobile manipulator), 0.0% (dual arm). A budget in the earlier steps cost more
  // length than it saved time. Discrete Link ignores it.
  bool reduce_vertices(std::vector<float>& p) {
    check_.set_certificate_passes(kVertexPasses);
    const bool changed = drop_vertices(p);
    check_.set_certificate_passes(0);
    return changed;
  }
  static constexpr int32_t kVertexPasses = 3;

  // From each kept vertex, connects straight to the farthest later vertex it reaches (trying the
  // farthest first) and drops the ones between; returns whether anything changed. Failing tries are
  // cheap (a colliding edge usually ends in its first chunk of samples), and one success can drop
  // many vertices, where reduce_vertices drops one per check.
  bool reduce_farthest(std::vector<float>& p) {
    bool changed = false;
    for (size_t i = 0; i + 2 < rows(p); ++i) {
      for (size_t j = rows(p) - 1; j >= i + 2; --j) {
        if (out_of_time()) return changed;
        if (!check_.motion(row(p, i), row(p, j), Known::both)) continue;
        p.erase(p.begin() + (i + 1) * dof_, p.begin() + j * dof_);
        changed = true;
        break;
      }
    }
    return changed;
  }

  // random shortcuts between points on two different edges; a shortcut is checked only when it is
  // shorter than the stretch it replaces by at least the fraction min_gain of that stretch
  // PERF: a draw of two points near one vertex cuts its corner by a hair, yet its check costs as much
  // as any other edge of its length. A 1% floor, side by side with none (seeds 0-1, generated
  // problems): simplification median -23% to -43% on each of five robots, discrete and certified,
  // mean final cost between -0.3% and +0.8%; 140 MotionBenchMaker panda problems (20 per class):
  // certified 163 -> 112 us, discrete 119 -> 87 us, mean final cost +0.2% / +0.3%.
  void shortcut(std::vector<float>& p, int32_t attempts, double min_gain) {
    std::vector<float> a(dof_), b(dof_);
    for (int32_t it = 0; it < attempts && rows(p) >= 3; ++it) {
      if (out_of_time()) return;
      const int64_t edges = int64_t(rows(p)) - 1;
      int64_t e1 = rng_.below(edges), e2 = rng_.below(edges);
      if (e1 == e2) continue;
      if (e1 > e2) std::swap(e1, e2);
      const float t1 = float(rng_.uniform()), t2 = float(rng_.uniform());
      lerp(row(p, e1), row(p, e1 + 1), t1, a.data());
      lerp(row(p, e2), row(p, e2 + 1), t2, b.data());
      check_.clamp(a.data());
      check_.clamp(b.data());
      // cost of the replaced stretch a .. p[e1+1] .. p[e2] .. b against a -> b
      double old_cost = Checker::distance(a.data(), row(p, e1 + 1), dof_) +
                        Checker::distance(row(p, e2), b.data(), dof_);
      for (int64_t r = e1 + 1; r < e2; ++r) old_cost += Checker::distance(row(p, r), row(p, r + 1), dof_);
      if (Checker::distance(a.data(), b.data(), dof_) >= old_cost * (1.0 - min_gain) - 1e-9) continue;
      // a and b lie on checked edges but between samples, so they are checked here, once
      if (!check_.motion(a.data(), b.data(), Known::none) || !check_.piece(row(p, e1), a.data(), Known::both) ||
          !check_.piece(b.data(), row(p, e2 + 1), Known::both))
        continue;
      std::vector<float> q(p.begin(), p.begin() + (e1 + 1) * dof_);
      q.insert(q.end(), a.begin(), a.end());
      q.insert(q.end(), b.begin(), b.end());
      q.insert(q.end(), p.begin() + (e2 + 1) * dof_, p.end());
      p.swap(q);
    }
  }

  // Laplacian smoothing passes; a move is kept only if both new edges pass and the path shortens
  void smooth(std::vector<float>& p, int32_t passes) {
    std::vector<float> c(dof_);
    for (int32_t pass = 0; pass < passes; ++pass) {
      for (size_t i = 1; i + 1 < rows(p); ++i) {
        if (out_of_time()) return;
        const float* prev = row(p, i - 1);
        const float* cur = row(p, i);
        const float* next = row(p, i + 1);
        for (int32_t j = 0; j < dof_; ++j) c[j] = 0.5f * cur[j] + 0.25f * (prev[j] + next[j]);
        check_.clamp(c.data());
        const double before = Checker::distance(prev, cur, dof_) + Checker::distance(cur, next, dof_);
        const double after = Checker::distance(prev, c.data(), dof_) + Checker::distance(c.data(), next, dof_);
        if (after >= before - 1e-9) continue;
        if (check_.motion(prev, c.data(), Known::start) && check_.motion(c.data(), next, Known::both))
          std::copy(c.begin(), c.end(), p.begin() + i * dof_);
      }
    }
  }

  // Outcome of interpolate(); the path is unchanged unless `done`.
  enum class Interpolation : int32_t { done = 0, collision = 1, too_many = 2, stopped = 3 };
  // waypoints an interpolated path may have at most (memory: rows x dof floats, twice on the way out)
  static constexpr int64_t kMaxWaypoints = 1000000;

  // Inserts waypoints so no edge is longer than 1 / per_unit. When per_unit is no finer than the
  // check resolution, the waypoints are placed at parameters t_i = i/n the edge's Link check already
  // tested (positions equal to float rounding: the SIMD kernels may fuse the multiply-add), so each
  // new edge is covered by checked samples at the same spacing and needs no new check. Finer than
  // that, new edges are checked (discrete Link; pieces of certified edges need none); if one fails
  // (a graze the coarser check stepped over), the path is
  // left unchanged: `collision`. A result over kMaxWaypoints is not built: `too_many`. The deadline
  // passing leaves the path unchanged: `stopped`.
  Interpolation interpolate(std::vector<float>& p, double per_unit) {
    // pieces per edge, counted first so an absurd request costs no memory
    std::vector<int64_t> steps(rows(p), 0), pieces(rows(p), 0);
    int64_t total = 1;
    for (size_t r = 1; r < rows(p); ++r) {
      const float* a = row(p, r - 1);
      const float* b = row(p, r);
      const double len = Checker::distance(a, b, dof_);
      const int64_t n = check_.intervals(a, b);
      // samples per piece so that pieces are at most 1 / per_unit long
      steps[r] = (per_unit <= check_.resolution() && len > 0)
                     ? std::max<int64_t>(1, int64_t(std::floor(double(n) / (len * per_unit))))
                     : 0;
      const double m = steps[r] > 0 ? std::ceil(double(n) / double(steps[r])) : std::max(1.0, std::ceil(len * per_unit));
      if (m > double(kMaxWaypoints)) return Interpolation::too_many;
      pieces[r] = int64_t(m);
      total += pieces[r];
      if (total > kMaxWaypoints) return Interpolation::too_many;
    }
    std::vector<float> out(p.begin(), p.begin() + dof_), q(dof_);
    out.reserve(size_t(total) * dof_);
    for (size_t r = 1; r < rows(p); ++r) {
      if (out_of_time()) return Interpolation::stopped;
      const float* a = row(p, r - 1);
      const float* b = row(p, r);
      if (steps[r] > 0) {
        const int64_t n = check_.intervals(a, b);
        for (int64_t i = steps[r]; i < n; i += steps[r]) {
          const float t = float(double(i) / double(n));
          for (int32_t j = 0; j < dof_; ++j) q[j] = a[j] + t * (b[j] - a[j]);
          out.insert(out.end(), q.begin(), q.end());
        }
        out.insert(out.end(), b, b + dof_);
        continue;
      }
      const int64_t m = pieces[r];
      for (int64_t i = 1; i <= m; ++i) {
        if ((i & 255) == 0 && out_of_time()) return Interpolation::stopped;
        lerp(a, b, float(double(i) / double(m)), q.data());
        check_.clamp(q.data());
        if (i == m) std::copy(b, b + dof_, q.begin());
        if (m > 1 && !check_.piece(&out[out.size() - dof_], q.data(), Known::start))
          return deadline_passed() ? Interpolation::stopped : Interpolation::collision;
        out.insert(out.end(), q.begin(), q.end());
      }
    }
    p.swap(out);
    return Interpolation::done;
  }

 private:
  using Known = Checker::Known;
  // reduce_vertices' work, under whatever certificate budget the checker has
  bool drop_vertices(std::vector<float>& p) {
    bool changed = false;
    size_t i = 0;
    while (rows(p) >= 3 && i + 2 < rows(p)) {
      if (out_of_time()) break;
      if (check_.motion(row(p, i), row(p, i + 2), Known::both)) {
        p.erase(p.begin() + (i + 1) * dof_, p.begin() + (i + 2) * dof_);
        changed = true;
      } else {
        ++i;
      }
    }
    return changed;
  }

  // PERF: a clock read (~25-50 ns here) per step was ~2% of a panda path's simplification; every
  // 4th step reads it, and a step is a few Link checks, each cut short by the deadline when long
  bool deadline_passed() const { return check_.deadline() != nullptr && check_.deadline()->passed(); }
  bool out_of_time() {
    const Deadline* d = check_.deadline();
    if (d == nullptr) return false;
    if (d->stopped() != Deadline::Stop::none) return true;
    return (++steps_ & 3) == 0 && d->passed();
  }
  size_t rows(const std::vector<float>& p) const { return p.size() / dof_; }
  float* row(std::vector<float>& p, size_t r) const { return p.data() + r * dof_; }
  void lerp(const float* a, const float* b, float t, float* out) const {
    for (int32_t j = 0; j < dof_; ++j) out[j] = a[j] + t * (b[j] - a[j]);
  }

  Checker& check_;
  Rng& rng_;
  int32_t dof_;
  uint32_t steps_ = 0;  // out_of_time() calls
};

}  // namespace simdplan::planner
