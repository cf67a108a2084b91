// bvh.cc: builds simdplan::bvh::Bvh and TriMesh (algorithm and complexity in bvh/bvh.hh) and picks
// the BVH query table of the ISA in use. ISA-neutral: compiled once, without -m flags.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "dispatch.hh"
#include "simdplan/bvh/bvh.hh"
#include "simdplan/bvh/bvh_kernels.hh"

namespace simdplan {

const BvhKernels& bvh_kernels_active() { return active_table<BvhKernels>(); }

namespace bvh {

namespace {

// NOTE: 2^30 elements keep 2n - 1 node indices, and the int32 pair output, in range.
constexpr int64_t kMaxElements = int64_t(1) << 30;

struct Item {
  float c[3];     // box centre: the split key
  int32_t index;  // element in the input
};

struct Builder {
  const float* boxes;  // input, n x 6
  std::vector<Item>& items;
  BvhNode* node;
  int32_t* order;
  int32_t next = 0;
  int32_t depth = 0;

  // the subtree over items [begin, end) at `level`, preorder from node `next`; returns its root
  int32_t build(size_t begin, size_t end, int32_t level) {
    const int32_t id = next++;
    depth = std::max(depth, level);
    const float inf = std::numeric_limits<float>::infinity();
    float lo[3] = {inf, inf, inf}, hi[3] = {-inf, -inf, -inf};
    for (size_t k = begin; k < end; ++k) {
      const float* b = boxes + 6 * size_t(items[k].index);
      for (int a = 0; a < 3; ++a) lo[a] = std::min(lo[a], b[a]), hi[a] = std::max(hi[a], b[3 + a]);
    }
    BvhNode& nd = node[id];
    for (int a = 0; a < 3; ++a) nd.lo[a] = lo[a], nd.hi[a] = hi[a];
    if (end - begin == 1) {
      nd.left = -1;
      nd.right = int32_t(begin);  // the slot
      order[begin] = items[begin].index;
      return id;
    }
    // longest axis of the node's box (first of equals)
    int axis = 0;
    for (int a = 1; a < 3; ++a)
      if (hi[a] - lo[a] > hi[axis] - lo[axis]) axis = a;
    const size_t mid = begin + (end - begin + 1) / 2;
    std::nth_element(items.begin() + begin, items.begin() + mid, items.begin() + end,
                     [axis](const Item& a, const Item& b) {
                       return a.c[axis] < b.c[axis] || (a.c[axis] == b.c[axis] && a.index < b.index);
                     });
    const int32_t left = build(begin, mid, level + 1);
    const int32_t right = build(mid, end, level + 1);
    node[id].left = left;  // == id + 1 (preorder)
    node[id].right = right;
    return id;
  }
};

std::string box_text(const float* b) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "lo (%g, %g, %g), hi (%g, %g, %g)", double(b[0]), double(b[1]), double(b[2]),
                double(b[3]), double(b[4]), double(b[5]));
  return buf;
}

int64_t since_ns(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Bvh::Bvh(const float* boxes, int64_t n) {
  const auto t0 = std::chrono::steady_clock::now();
  if (n < 0) throw std::invalid_argument("Bvh: negative number of boxes");
  if (n >= kMaxElements)
    throw std::invalid_argument("Bvh: at most 2^30 - 1 elements are supported, got " + std::to_string(n));
  for (int64_t i = 0; i < n; ++i) {
    const float* b = boxes + 6 * i;
    bool ok = true;
    for (int a = 0; a < 3; ++a) ok = ok && std::isfinite(b[a]) && std::isfinite(b[3 + a]) && b[a] <= b[3 + a];
    if (!ok)
      throw std::invalid_argument("Bvh: box " + std::to_string(i) + " is not finite with lo <= hi: " + box_text(b));
  }
  std::vector<Item> items(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    const float* b = boxes + 6 * i;
    for (int a = 0; a < 3; ++a) items[size_t(i)].c[a] = 0.5f * b[a] + 0.5f * b[3 + a];  // no overflow
    items[size_t(i)].index = int32_t(i);
  }
  node_.resize(n > 0 ? size_t(2 * n - 1) : 0);
  order_.resize(size_t(n));
  if (n > 0) {
    Builder b{boxes, items, node_.data(), order_.data()};
    b.build(0, size_t(n), 0);
    depth_ = b.depth;
  }
  view_.nodes = int32_t(node_.size());
  view_.elements = int32_t(n);
  view_.node = node_.data();
  view_.order = order_.data();
  build_ns_ = since_ns(t0);
}

bool make_triangle_record(const float* v0, const float* v1, const float* v2, float* rec) {
  const float* v[3] = {v0, v1, v2};
  std::fill_n(rec, kTriStride, 0.0f);
  double e[3][3];
  for (int k = 0; k < 3; ++k) {
    for (int a = 0; a < 3; ++a) {
      rec[3 * k + a] = v[k][a];
      e[k][a] = double(v[(k + 1) % 3][a]) - double(v[k][a]);
    }
    const double ee = e[k][0] * e[k][0] + e[k][1] * e[k][1] + e[k][2] * e[k][2];
    const double inv = ee > 0.0 ? 1.0 / ee : 0.0;
    // NOTE: an edge shorter than ~1e-19 m would need an inverse beyond float32; it counts as its
    // first vertex (an error below 1e-19 m)
    rec[21 + k] = inv <= double(std::numeric_limits<float>::max()) ? float(inv) : 0.0f;
  }
  // (v1 - v0) x (v2 - v0) = e0 x (-e2)
  const double nx = -(e[0][1] * e[2][2] - e[0][2] * e[2][1]);
  const double ny = -(e[0][2] * e[2][0] - e[0][0] * e[2][2]);
  const double nz = -(e[0][0] * e[2][1] - e[0][1] * e[2][0]);
  const double len = std::sqrt(nx * nx + ny * ny + nz * nz);
  if (!(len > 0.0) || !std::isfinite(len)) {
    rec[24] = std::numeric_limits<float>::infinity();
    return true;
  }
  // the slab of the longest edge (see the NOTE in geom/sphere_triangle.hh)
  int L = 0;
  double eL = 0.0;
  for (int k = 0; k < 3; ++k) {
    const double ee = e[k][0] * e[k][0] + e[k][1] * e[k][1] + e[k][2] * e[k][2];
    if (ee > eL) L = k, eL = ee;
  }
  double slab_lo = 0.0;
  for (int a = 0; a < 3; ++a) {
    const double g = e[L][a] / eL;
    rec[25 + a] = float(g);
    slab_lo += (double(v[L][a]) - double(v[0][a])) * g;
  }
  rec[28] = float(slab_lo);
  rec[29] = float(slab_lo + 1.0);
  const double n[3] = {nx / len, ny / len, nz / len};
  for (int a = 0; a < 3; ++a) rec[9 + a] = float(n[a]);
  for (int k = 0; k < 3; ++k) {
    // m_k = n x e_k: in the plane, perpendicular to edge k, towards the opposite vertex
    rec[12 + 3 * k + 0] = float(n[1] * e[k][2] - n[2] * e[k][1]);
    rec[12 + 3 * k + 1] = float(n[2] * e[k][0] - n[0] * e[k][2]);
    rec[12 + 3 * k + 2] = float(n[0] * e[k][1] - n[1] * e[k][0]);
  }
  return false;
}

TriMesh::TriMesh(const float* vertices, int64_t nv, const int32_t* faces, int64_t nf) {
  const auto t0 = std::chrono::steady_clock::now();
  if (nv < 0 || nf < 0) throw std::invalid_argument("TriMesh: negative number of vertices or faces");
  if (nv > int64_t(std::numeric_limits<int32_t>::max()))
    throw std::invalid_argument("TriMesh: at most 2^31 - 1 vertices are supported (int32 faces)");
  if (nf >= kMaxElements)
    throw std::invalid_argument("TriMesh: at most 2^30 - 1 triangles are supported, got " + std::to_string(nf));
  for (int64_t i = 0; i < nv; ++i) {
    const float* p = vertices + 3 * i;
    if (!(std::isfinite(p[0]) && std::isfinite(p[1]) && std::isfinite(p[2]))) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "(%g, %g, %g)", double(p[0]), double(p[1]), double(p[2]));
      throw std::invalid_argument("TriMesh: vertex " + std::to_string(i) + " is not finite: " + buf);
    }
  }
  for (int64_t i = 0; i < 3 * nf; ++i)
    if (faces[i] < 0 || int64_t(faces[i]) >= nv)
      throw std::invalid_argument("TriMesh: face " + std::to_string(i / 3) + " refers to vertex " +
                                  std::to_string(faces[i]) + ", outside [0, " + std::to_string(nv) + ")");
  // each triangle's box: exact float min / max of its vertices
  std::vector<float> boxes(size_t(6 * nf));
  double diag = 0.0;
  for (int64_t t = 0; t < nf; ++t) {
    float* b = boxes.data() + 6 * t;
    for (int a = 0; a < 3; ++a) {
      float lo = vertices[3 * size_t(faces[3 * t]) + a], hi = lo;
      for (int k = 1; k < 3; ++k) {
        const float c = vertices[3 * size_t(faces[3 * t + k]) + a];
        lo = std::min(lo, c), hi = std::max(hi, c);
      }
      b[a] = lo, b[3 + a] = hi;
    }
    double d2 = 0.0;
    for (int a = 0; a < 3; ++a) d2 += (double(b[3 + a]) - b[a]) * (double(b[3 + a]) - b[a]);
    diag = std::max(diag, std::sqrt(d2));
  }
  bvh_ = Bvh(boxes.data(), nf);
  rec_.resize(size_t(nf));
  const int32_t* order = bvh_.view().order;
  for (int64_t s = 0; s < nf; ++s) {
    const int32_t* f = faces + 3 * size_t(order[s]);
    degenerate_ += make_triangle_record(vertices + 3 * size_t(f[0]), vertices + 3 * size_t(f[1]),
                                        vertices + 3 * size_t(f[2]), rec_[size_t(s)].f);
  }
  view_.bvh = bvh_.view();
  view_.tri = nf > 0 ? rec_[0].f : nullptr;
  // 2^-17 of the largest triangle (bvh_query.hh: the box tests' absolute slack), rounded up
  view_.slack = float(std::ldexp(diag, -17) * (1.0 + 1e-6));
  view_.reserved = 0;
  build_ns_ = since_ns(t0);
}

}  // namespace bvh
}  // namespace simdplan
