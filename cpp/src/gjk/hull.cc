// hull.cc: builds simdplan::gjk::Hull (checks and steps in gjk/hull.hh) and picks the GJK kernel
// table of the ISA in use. ISA-neutral: compiled once, without -m flags.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dispatch.hh"
#include "simdplan/gjk/gjk_kernels.hh"
#include "simdplan/gjk/hull.hh"

namespace simdplan {

const GjkKernels& gjk_kernels_active() { return active_table<GjkKernels>(); }

namespace gjk {

namespace {

constexpr int32_t kMaxVertices = int32_t(1) << 24;  // brute force keeps block numbers exact in float
constexpr double kMaxAbs = 1e12;
constexpr double kReflexTol = 1e-6;   // of the bounding-box diagonal, see hull.hh
constexpr double kMinVolume = 1e-9;   // of the bounding box's volume
// Artificial edges: the tilt of the coarsest ring of target directions from the vertex normal,
// degrees (the best of the six axis extremes is at most 54.7 degrees from any direction), and the
// most rings; each ring gets an equal share of the edges (see the packed step below).
// PERF: how many (kHullDefaultArtificial = 8): packed cold support queries, ns, AVX-512 build, hulls
// of points on a sphere (plain climbing for reference; /tmp harness, busy machine, +-10 %):
//   vertices    plain   packed with 0 / 4 / 8 / 12 / 16 artificial edges   climbing steps, plain / 8
//   1000          205       206 / 210 / 237 / 246 / 275                       5.4 / 3.9
//   2000          293       287 / 294 / 274 / 299 / 311
//   5000          457       445 / 429 / 335 / 369 / 410
//   10000         661       624 / 566 / 416 / 453 / 503                      15.2 / 5.6
//   20000        1031       944 / 804 / 523 / 602 / 645
//   ellipsoid 5k  265       248 / 223 / 236 / 284 / 273
// Each artificial edge costs a dot product on every step; below ~2k vertices the climbs are too
// short for the jumps to pay (hence kHullArtificialFrom).
constexpr double kPi = 3.14159265358979323846;
constexpr double kRingMaxDeg = 48.0;
constexpr int kRingsMax = 4;

std::string str(int64_t v) { return std::to_string(v); }

struct V3 {
  double x, y, z;
};
V3 sub(V3 a, V3 b) { return {a.x - b.x, a.y - b.y, a.z - b.z}; }
V3 cross(V3 a, V3 b) { return {a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x}; }
double dot(V3 a, V3 b) { return a.x * b.x + a.y * b.y + a.z * b.z; }

}  // namespace

Hull::Hull(const float* xyz, int32_t n, const int32_t* adj_begin, const int32_t* adj, int64_t n_adj,
           const int32_t* tris, int64_t n_tris, int32_t artificial) {
  const auto t0 = std::chrono::steady_clock::now();
  if (n < 4 || n > kMaxVertices)
    throw std::invalid_argument("a convex hull needs 4 to 2^24 vertices, got " + str(n));
  for (int64_t i = 0; i < 3 * int64_t(n); ++i)
    if (!(std::fabs(xyz[i]) <= kMaxAbs))
      throw std::invalid_argument("vertex " + str(i / 3) + " is not finite or has a coordinate beyond 1e12");
  if (adj_begin[0] != 0 || int64_t(adj_begin[n]) != n_adj)
    throw std::invalid_argument("adjacency offsets must start at 0 and end at len(indices) = " + str(n_adj));
  for (int32_t v = 0; v < n; ++v) {
    if (adj_begin[v + 1] < adj_begin[v]) throw std::invalid_argument("adjacency offsets must not decrease");
    for (int32_t k = adj_begin[v]; k < adj_begin[v + 1]; ++k)
      if (adj[k] < 0 || adj[k] >= n || adj[k] == v)
        throw std::invalid_argument("adjacency of vertex " + str(v) + " holds " + str(adj[k]) +
                                    ": indices must be other vertices in [0, n)");
  }
  if (n_tris < 4) throw std::invalid_argument("a closed convex surface needs at least 4 triangles");
  if (n_tris > 4 * int64_t(kMaxVertices)) throw std::invalid_argument("too many triangles");
  for (int64_t f = 0; f < n_tris; ++f) {
    const int32_t a = tris[3 * f], b = tris[3 * f + 1], c = tris[3 * f + 2];
    if (a < 0 || b < 0 || c < 0 || a >= n || b >= n || c >= n || a == b || b == c || a == c)
      throw std::invalid_argument("triangle " + str(f) + " must name three distinct vertices in [0, n)");
  }

  // 1. vertices, extremes, bounds
  const int32_t np = (n + kHullPad - 1) / kHullPad * kHullPad;
  x_.assign(size_t(np), xyz[0]), y_.assign(size_t(np), xyz[1]), z_.assign(size_t(np), xyz[2]);
  double lo[3], hi[3], cen[3] = {0, 0, 0};
  float amax[3] = {0, 0, 0};
  int32_t ext[6] = {0, 0, 0, 0, 0, 0};
  for (int k = 0; k < 3; ++k) lo[k] = hi[k] = xyz[k];
  for (int32_t i = 0; i < n; ++i) {
    x_[size_t(i)] = xyz[3 * i], y_[size_t(i)] = xyz[3 * i + 1], z_[size_t(i)] = xyz[3 * i + 2];
    for (int k = 0; k < 3; ++k) {
      const float c = xyz[3 * i + k];
      if (c < lo[k]) lo[k] = c, ext[2 * k] = i;
      if (c > hi[k]) hi[k] = c, ext[2 * k + 1] = i;
      amax[k] = std::max(amax[k], std::fabs(c));
      cen[k] += c;
    }
  }
  for (double& c : cen) c /= n;
  const double diag = std::sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                                (hi[2] - lo[2]) * (hi[2] - lo[2]));
  auto P = [&](int32_t i) { return V3{xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]}; };
  const V3 C{cen[0], cen[1], cen[2]};

  // 2. planes (outward from the centroid) and the signed volume they enclose
  planes_.resize(size_t(4 * n_tris));
  std::vector<V3> normal_area(size_t(n), V3{0, 0, 0});  // per vertex: sum of incident (area-weighted) normals
  double volume = 0.0;
  for (int64_t f = 0; f < n_tris; ++f) {
    const int32_t ia = tris[3 * f], ib = tris[3 * f + 1], ic = tris[3 * f + 2];
    const V3 a = P(ia), b = P(ib), c = P(ic);
    V3 nrm = cross(sub(b, a), sub(c, a));
    if (dot(nrm, sub(a, C)) < 0) nrm = {-nrm.x, -nrm.y, -nrm.z};
    volume += dot(nrm, sub(a, C)) / 6.0;
    for (int32_t iv : {ia, ib, ic}) {
      V3& s = normal_area[size_t(iv)];
      s = {s.x + nrm.x, s.y + nrm.y, s.z + nrm.z};
    }
    const double len = std::sqrt(dot(nrm, nrm));
    double* pl = &planes_[size_t(4 * f)];
    if (len > 0) {
      const V3 u{nrm.x / len, nrm.y / len, nrm.z / len};
      pl[0] = u.x, pl[1] = u.y, pl[2] = u.z;
      // NOTE: the largest of the three offsets, so no corner of the triangle is outside its plane
      pl[3] = std::max({dot(u, a), dot(u, b), dot(u, c)});
    } else {
      // a zero-area triangle bounds nothing: a plane that never wins a depth or inside test
      pl[0] = pl[1] = pl[2] = 0.0;
      pl[3] = std::numeric_limits<double>::infinity();
    }
  }
  const double box = (hi[0] - lo[0]) * (hi[1] - lo[1]) * (hi[2] - lo[2]);
  if (!(volume > kMinVolume * box) || !(box > 0))
    throw std::invalid_argument("the hull is flat (volume " + std::to_string(volume) +
                                "): a convex hull needs points spanning three dimensions");

  // edges: (min, max, face) sorted; every undirected edge must appear exactly twice
  {
    std::vector<std::pair<int64_t, int32_t>> e;
    e.reserve(size_t(3 * n_tris));
    for (int64_t f = 0; f < n_tris; ++f)
      for (int k = 0; k < 3; ++k) {
        const int64_t a = tris[3 * f + k], b = tris[3 * f + (k + 1) % 3];
        e.push_back({std::min(a, b) * n + std::max(a, b), int32_t(f)});
      }
    std::sort(e.begin(), e.end());
    edges_.reserve(e.size() * 2);
    for (size_t i = 0; i < e.size();) {
      size_t j = i;
      while (j < e.size() && e[j].first == e[i].first) ++j;
      const int32_t a = int32_t(e[i].first / n), b = int32_t(e[i].first % n);
      if (j - i != 2)
        throw std::invalid_argument("edge (" + str(a) + ", " + str(b) + ") belongs to " + str(int64_t(j - i)) +
                                    " triangles: the triangles must close a surface (each edge in exactly two)");
      edges_.insert(edges_.end(), {a, b, e[i].second, e[i + 1].second});
      i = j;
    }
  }
  const int64_t n_edges = int64_t(edges_.size() / 4);
  {
    std::vector<char> used(size_t(n), 0);
    for (int64_t k = 0; k < 3 * n_tris; ++k) used[size_t(tris[k])] = 1;
    for (int32_t v = 0; v < n; ++v)
      if (!used[size_t(v)])
        throw std::invalid_argument("vertex " + str(v) + " is on no triangle: pass the hull's vertices only");
    if (int64_t(n) - n_edges + n_tris != 2)
      throw std::invalid_argument("the triangles do not form a closed surface of sphere topology (V - E + F = " +
                                  str(int64_t(n) - n_edges + n_tris) + ", want 2)");
  }
  // every triangle edge must be in the adjacency, both ways (binary search in sorted copies)
  adj_begin_.assign(adj_begin, adj_begin + n + 1);
  adj_.assign(adj, adj + n_adj);
  {
    std::vector<int32_t> sorted(adj_);
    for (int32_t v = 0; v < n; ++v) std::sort(sorted.begin() + adj_begin[v], sorted.begin() + adj_begin[v + 1]);
    auto has = [&](int32_t a, int32_t b) {
      return std::binary_search(sorted.begin() + adj_begin[a], sorted.begin() + adj_begin[a + 1], b);
    };
    for (int64_t k = 0; k < n_edges; ++k) {
      const int32_t a = edges_[size_t(4 * k)], b = edges_[size_t(4 * k + 1)];
      if (!has(a, b) || !has(b, a))
        throw std::invalid_argument("triangle edge (" + str(a) + ", " + str(b) + ") is missing from the adjacency");
    }
  }
  // no reflex edge: the far corner of each triangle lies inside the plane of its neighbour
  double reflex = 0.0;
  {
    const double tol = kReflexTol * diag;
    for (int64_t k = 0; k < n_edges; ++k) {
      const int32_t a = edges_[size_t(4 * k)], b = edges_[size_t(4 * k + 1)];
      for (int s = 0; s < 2; ++s) {
        const int64_t f = edges_[size_t(4 * k + 2 + s)], g = edges_[size_t(4 * k + 3 - s)];
        int32_t opp = tris[3 * g];
        for (int q = 0; q < 3; ++q)
          if (tris[3 * g + q] != a && tris[3 * g + q] != b) opp = tris[3 * g + q];
        const double* pl = &planes_[size_t(4 * f)];
        const V3 o = P(opp);
        const double out = pl[0] * o.x + pl[1] * o.y + pl[2] * o.z - pl[3];
        reflex = std::max(reflex, out);
        if (out > tol)
          throw std::invalid_argument("the surface is not convex at edge (" + str(a) + ", " + str(b) +
                                      "): pass the convex hull's vertices and triangles");
      }
    }
  }

  int32_t max_degree = 0;
  for (int32_t v = 0; v < n; ++v) max_degree = std::max(max_degree, adj_begin[v + 1] - adj_begin[v]);

  // 4. the packed layout: lines per vertex, then header + slots (gjk/hull_view.hh)
  constexpr int kSlots = kHullLineSlots - 1;  // after the header
  int64_t n_lines = n;
  for (int32_t v = 0; v < n; ++v) {
    const int32_t d = adj_begin[v + 1] - adj_begin[v];
    // a line that links on keeps kSlots - 1 neighbours; the last one up to kSlots
    if (d > kSlots) n_lines += (d - kSlots + (kSlots - 2)) / (kSlots - 1);
  }
  int64_t n_artificial = 0;
  const int cap = artificial >= 0 ? std::min(artificial, kSlots) : n >= kHullArtificialFrom ? kHullDefaultArtificial : 0;
  if (n_lines <= kHullMaxLines) {
    // one spare line after the last: whole-vector loads of a line's slots may read past its end
    lines_.assign(size_t(n_lines) + 1, HullLine{0, 0, 0, {0}});
    // steepest-ascent climb on the plain graph, double dots: the support vertex near a direction
    auto climb = [&](int32_t v, V3 d) {
      double fv = dot(P(v), d);
      for (;;) {
        int32_t best = v;
        for (int32_t k = adj_begin[v]; k < adj_begin[v + 1]; ++k) {
          const double f = dot(P(adj[k]), d);
          if (f > fv) fv = f, best = adj[k];
        }
        if (best == v) return v;
        v = best;
      }
    };
    // ring tilts, degrees: halving from kRingMaxDeg while above twice the typical edge angle
    // (sqrt(4 pi / n) radians for evenly spread vertices): finer rings would name real neighbours
    std::vector<double> rings;
    const double edge_deg = std::sqrt(4.0 * kPi / n) * 180.0 / kPi;
    for (double th = kRingMaxDeg; th >= 2.0 * edge_deg && int(rings.size()) < kRingsMax; th *= 0.5) rings.push_back(th);
    if (rings.empty()) rings.push_back(kRingMaxDeg);
    int32_t next_line = n;
    for (int32_t v = 0; v < n; ++v) {
      HullLine* line = &lines_[size_t(v)];
      const V3 pv = P(v);
      auto start_line = [&](HullLine* l) { l->x = float(pv.x), l->y = float(pv.y), l->z = float(pv.z); };
      start_line(line);
      const int32_t b = adj_begin[v], e = adj_begin[v + 1];
      int used = 0;  // slots used in `line`
      for (int32_t k = b; k < e; ++k) {
        if (used == kSlots - 1 && e - k > 1) {  // more than one left: link on
          line->slot[0] = uint16_t(used | kHullLineLinked);
          line->slot[kHullLineSlots - 1] = uint16_t(next_line);
          line = &lines_[size_t(next_line++)];
          start_line(line);
          used = 0;
        }
        line->slot[1 + used++] = uint16_t(adj[k]);
      }
      const int real = used;
      int spare = std::min(kSlots - used, cap);
      V3 nv = normal_area[size_t(v)];
      const double ln = std::sqrt(dot(nv, nv));
      if (spare > 0 && ln > 0) {
        nv = {nv.x / ln, nv.y / ln, nv.z / ln};
        // an orthonormal basis (e1, e2) of the plane perpendicular to nv
        const V3 helper = std::fabs(nv.x) < 0.6 ? V3{1, 0, 0} : V3{0, 1, 0};
        V3 e1 = cross(nv, helper);
        const double l1 = std::sqrt(dot(e1, e1));
        e1 = {e1.x / l1, e1.y / l1, e1.z / l1};
        const V3 e2 = cross(nv, e1);
        std::vector<int32_t> present(adj + b, adj + e);
        present.push_back(v);
        const int nr = int(rings.size());
        for (int r = 0; r < nr && spare > 0; ++r) {
          const int in_ring = (spare + (nr - r) - 1) / (nr - r);  // an even share of what is left
          const double th = rings[size_t(r)] * kPi / 180.0;
          int filled = 0;
          for (int q = 0; q < in_ring; ++q) {
            // azimuths spread evenly, staggered from ring to ring
            const double phi = 2.0 * kPi * (q + 0.5 * (r & 1)) / in_ring + 0.37 * r;
            const double c = std::cos(th), sn = std::sin(th);
            const V3 d{c * nv.x + sn * (std::cos(phi) * e1.x + std::sin(phi) * e2.x),
                       c * nv.y + sn * (std::cos(phi) * e1.y + std::sin(phi) * e2.y),
                       c * nv.z + sn * (std::cos(phi) * e1.z + std::sin(phi) * e2.z)};
            const int32_t w = climb(v, d);
            if (std::find(present.begin(), present.end(), w) != present.end()) continue;
            present.push_back(w);
            line->slot[1 + used++] = uint16_t(w);
            ++filled;
          }
          spare -= filled;
          n_artificial += filled;
        }
      }
      line->slot[0] = uint16_t(real | ((used - real) << kHullLineArtShift));
    }
  }

  view_.n = n;
  view_.n_padded = np;
  view_.x = x_.data(), view_.y = y_.data(), view_.z = z_.data();
  view_.adj_begin = adj_begin_.data();
  view_.adj = adj_.data();
  view_.lines = lines_.empty() ? nullptr : lines_.data();
  view_.n_lines = lines_.empty() ? 0 : int32_t(lines_.size() - 1);
  for (int k = 0; k < 6; ++k) view_.extreme[k] = ext[k];
  for (int k = 0; k < 3; ++k) view_.abs_max[k] = amax[k], view_.centroid[k] = cen[k];
  view_.reflex_defect = reflex;
  view_.scale = std::max({double(amax[0]), double(amax[1]), double(amax[2])});
  view_.n_faces = int32_t(n_tris);
  view_.face_plane = planes_.data();
  const int64_t fp = (n_tris + kHullPad - 1) / kHullPad * kHullPad + kHullPad;  // a spare block: whole-vector loads
  plane_soa_.assign(size_t(4 * fp), 0.0f);
  for (int64_t f = 0; f < fp; ++f) {
    for (int k = 0; k < 3; ++k) plane_soa_[size_t(k * fp + f)] = f < n_tris ? float(planes_[size_t(4 * f + k)]) : 0.0f;
    plane_soa_[size_t(3 * fp + f)] = f < n_tris ? float(planes_[size_t(4 * f + 3)]) : HUGE_VALF;
  }
  view_.plane_soa = plane_soa_.data();
  view_.n_faces_padded = int32_t(fp);
  view_.n_edges = int32_t(n_edges);
  view_.edge = edges_.data();

  stats_.vertices = n;
  stats_.faces = int32_t(n_tris);
  stats_.edges = int32_t(n_edges);
  stats_.max_degree = max_degree;
  stats_.continuation_lines = view_.n_lines ? int32_t(n_lines - n) : 0;
  stats_.artificial_edges = n_artificial;
  stats_.packed = !lines_.empty();
  stats_.build_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace gjk
}  // namespace simdplan
