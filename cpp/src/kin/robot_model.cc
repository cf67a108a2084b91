#include "kin/robot_model.hh"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

#include "dispatch.hh"
#include "simdplan/bvh/bvh_kernels.hh"
#include "simdplan/capt/nearest_kernels.hh"
#include "simdplan/collision/obstacles.hh"
#include "simdplan/scratch.hh"
#include "simdplan/vec/scalar.hh"

namespace simdplan {
namespace {

using isa_scalar::VecScalar;
constexpr double kPi = 3.14159265358979323846;

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("robot model: " + what);
}

// Per-thread scratch, 64-byte aligned, grown on demand (kernels must not allocate).
float* scratch(int64_t floats) {
  thread_local std::vector<float> buf;
  const size_t need = static_cast<size_t>(floats) + 16;
  if (buf.size() < need) buf.resize(need);
  return aligned_scratch(buf);
}

std::vector<float>& row_buffer() {
  thread_local std::vector<float> buf;
  return buf;
}

}  // namespace

RobotModel::RobotModel(RobotArrays a) : a_(std::move(a)) {
  const size_t nb = a_.body_parent.size();
  require(a_.dof >= 0, "negative dof");
  require(nb >= 1, "at least the root body is needed");
  require(a_.body_kind.size() == nb && a_.body_dof.size() == nb && a_.body_scale.size() == nb &&
              a_.body_offset.size() == nb && a_.body_origin.size() == 12 * nb,
          "body arrays disagree in length");
  require(a_.body_parent[0] == -1, "body 0 must be the root (parent -1)");
  for (size_t b = 0; b < nb; ++b) {
    const int32_t p = a_.body_parent[b];
    require(b == 0 || (p >= 0 && size_t(p) < b), "body " + std::to_string(b) + " must come after its parent");
    const int32_t k = a_.body_kind[b];
    require(k == kBodyFixed || k == kBodyRevolute || k == kBodyPrismatic, "bad body kind");
    require(k == kBodyFixed || (a_.body_dof[b] >= 0 && a_.body_dof[b] < a_.dof),
            "body " + std::to_string(b) + " has a joint index outside [0, dof)");
  }
  const size_t ng = a_.group_body.size();
  const size_t ns = a_.spheres.size() / 4;
  require(a_.spheres.size() % 4 == 0, "spheres need 4 floats each");
  require(a_.group_begin.size() == ng && a_.group_end.size() == ng && a_.group_bound.size() == 4 * ng,
          "group arrays disagree in length");
  int32_t next = 0;
  for (size_t g = 0; g < ng; ++g) {
    require(a_.group_body[g] >= 0 && size_t(a_.group_body[g]) < nb, "group body out of range");
    require(g == 0 || a_.group_body[g] >= a_.group_body[g - 1], "groups must be sorted by body");
    require(a_.group_begin[g] == next && a_.group_end[g] >= a_.group_begin[g], "group sphere ranges must tile");
    next = a_.group_end[g];
  }
  require(size_t(next) == ns, "group sphere ranges must cover every sphere");
  for (size_t s = 0; s < ns; ++s) require(a_.spheres[4 * s + 3] > 0, "sphere radii must be > 0");
  if (ns > 0) {
    radius_min_ = radius_max_ = a_.spheres[3];
    for (size_t s = 0; s < ns; ++s) {
      radius_min_ = std::min(radius_min_, a_.spheres[4 * s + 3]);
      radius_max_ = std::max(radius_max_, a_.spheres[4 * s + 3]);
    }
  }
  require(a_.pairs.size() % 2 == 0, "pairs need 2 entries each");
  require(a_.lower.size() == size_t(a_.dof) && a_.upper.size() == size_t(a_.dof) && a_.wrap.size() == size_t(a_.dof),
          "limit arrays must have dof entries");

  // sort pairs by their later group so each group's pairs are contiguous
  const size_t np = a_.pairs.size() / 2;
  if (a_.pair_ranges.empty()) a_.pair_ranges.assign(2 * np, -1);
  require(a_.pair_ranges.size() == 2 * np, "pair_ranges needs 2 entries per pair");
  require(a_.sphere_pairs.size() % 2 == 0, "sphere_pairs needs 2 entries each");
  require(a_.list_max_padding >= 0 && std::isfinite(a_.list_max_padding), "list_max_padding must be >= 0");
  const int64_t n_listed = int64_t(a_.sphere_pairs.size() / 2);
  auto in_group = [&](int32_t s, int32_t g) { return s >= a_.group_begin[g] && s < a_.group_end[g]; };
  std::vector<std::array<int32_t, 3>> pairs(np);  // later group, earlier group, input index
  for (size_t p = 0; p < np; ++p) {
    int32_t x = a_.pairs[2 * p], y = a_.pairs[2 * p + 1];
    require(x >= 0 && y >= 0 && size_t(x) < ng && size_t(y) < ng && x != y, "self-collision pair out of range");
    const int32_t b = a_.pair_ranges[2 * p], e = a_.pair_ranges[2 * p + 1];
    require((b == -1 && e == -1) || (b >= 0 && b <= e && e <= n_listed), "pair_ranges entry out of range");
    for (int32_t k = std::max(b, 0); k < e; ++k)  // each listed sphere pair must belong to this group pair
      require(in_group(a_.sphere_pairs[2 * k], x) && in_group(a_.sphere_pairs[2 * k + 1], y),
              "sphere_pairs entry " + std::to_string(k) + " is not a sphere pair of its group pair");
    pairs[p] = {std::max(x, y), std::min(x, y), int32_t(p)};
  }
  std::sort(pairs.begin(), pairs.end());
  pair_begin_.assign(ng + 1, 0);
  std::vector<int32_t> ranges(2 * np);
  for (size_t p = 0; p < np; ++p) {
    a_.pairs[2 * p] = pairs[p][1];
    a_.pairs[2 * p + 1] = pairs[p][0];
    ranges[2 * p] = a_.pair_ranges[2 * pairs[p][2]];
    ranges[2 * p + 1] = a_.pair_ranges[2 * pairs[p][2] + 1];
    pair_begin_[pairs[p][0] + 1]++;
  }
  a_.pair_ranges.swap(ranges);
  for (size_t g = 0; g < ng; ++g) pair_begin_[g + 1] += pair_begin_[g];

  view_.dof = a_.dof;
  view_.n_bodies = int32_t(nb);
  view_.body_parent = a_.body_parent.data();
  view_.body_kind = a_.body_kind.data();
  view_.body_dof = a_.body_dof.data();
  view_.body_scale = a_.body_scale.data();
  view_.body_offset = a_.body_offset.data();
  view_.body_origin = a_.body_origin.data();
  origin_tables(nb);
  view_.n_groups = int32_t(ng);
  view_.n_static_groups = 0;
  while (a_.fast_paths && size_t(view_.n_static_groups) < ng && a_.group_body[view_.n_static_groups] == 0)
    ++view_.n_static_groups;
  view_.group_body = a_.group_body.data();
  view_.group_begin = a_.group_begin.data();
  view_.group_end = a_.group_end.data();
  view_.group_bound = a_.group_bound.data();
  body_bounds(nb);
  view_.n_spheres = int32_t(ns);
  view_.spheres = a_.spheres.data();
  const size_t stride = ns + kSoaPad;
  sphere_soa_.assign(4 * stride, 0.0f);
  for (size_t s = 0; s < ns; ++s)
    for (size_t c = 0; c < 4; ++c) sphere_soa_[c * stride + s] = a_.spheres[4 * s + c];
  view_.sphere_soa = sphere_soa_.data();
  view_.n_pairs = int32_t(np);
  view_.pairs = a_.pairs.data();
  view_.pair_begin = pair_begin_.data();
  view_.pair_ranges = a_.pair_ranges.data();
  view_.sphere_pairs = a_.sphere_pairs.data();
  view_.list_max_padding = a_.list_max_padding;
  pair_blocks();

  // motion bounds: group reach = max over its spheres; pair reach = both groups' reach over the
  // bodies below their common ancestor (the bodies above move both rigidly: no relative motion)
  require(a_.sphere_reach.size() == ns * nb, "sphere_reach needs n_spheres x n_bodies entries");
  for (float r : a_.sphere_reach) require(r >= 0 && std::isfinite(r), "sphere_reach entries must be finite and >= 0");
  group_reach_.assign(ng * nb, 0.0f);
  for (size_t g = 0; g < ng; ++g)
    for (int32_t i = a_.group_begin[g]; i < a_.group_end[g]; ++i)
      for (size_t k = 0; k < nb; ++k)
        group_reach_[g * nb + k] = std::max(group_reach_[g * nb + k], a_.sphere_reach[size_t(i) * nb + k]);
  pair_reach_.assign(np * nb, 0.0f);
  pair_list_reach_.assign(np * nb, 0.0f);
  auto sum_up = [](float x, float y) {  // x + y in float32, never below the true sum
    const double sum = double(x) + double(y);
    float f = static_cast<float>(sum);
    return double(f) < sum ? std::nextafter(f, HUGE_VALF) : f;
  };
  std::vector<int32_t> sphere_body(ns);
  for (size_t g = 0; g < ng; ++g)
    for (int32_t i = a_.group_begin[g]; i < a_.group_end[g]; ++i) sphere_body[i] = a_.group_body[g];
  std::vector<uint8_t> above(nb);
  for (size_t p = 0; p < np; ++p) {
    const int32_t ga = a_.pairs[2 * p], gb = a_.pairs[2 * p + 1];
    std::fill(above.begin(), above.end(), uint8_t(0));
    for (int32_t b = a_.group_body[ga]; b >= 0; b = a_.body_parent[b]) above[b] = 1;
    int32_t top = a_.group_body[gb];
    while (!above[top]) top = a_.body_parent[top];
    std::fill(above.begin(), above.end(), uint8_t(0));
    for (int32_t b = top; b >= 0; b = a_.body_parent[b]) above[b] = 1;
    const int32_t lb = a_.pair_ranges[2 * p], le = a_.pair_ranges[2 * p + 1];
    for (size_t k = 0; k < nb; ++k) {
      if (above[k]) continue;
      pair_reach_[p * nb + k] = sum_up(group_reach_[ga * nb + k], group_reach_[gb * nb + k]);
      if (lb < 0) {
        pair_list_reach_[p * nb + k] = pair_reach_[p * nb + k];
        continue;
      }
      // NOTE: certified sphere pairs near the joints between their links (the ur5's base against
      // its upper arm, 2.5 mm apart in every configuration) barely move relative to each other,
      // while the groups' farthest spheres do: their own bound keeps such pairs from forcing
      // dense certificates
      float most = 0.0f;
      for (int32_t e = lb; e < le; ++e) {
        const size_t i = size_t(a_.sphere_pairs[2 * e]), j = size_t(a_.sphere_pairs[2 * e + 1]);
        most = std::max(most, sum_up(listed_reach(i, j, sphere_body[j], k, top),
                                     listed_reach(j, i, sphere_body[i], k, top)));
      }
      pair_list_reach_[p * nb + k] = most;
    }
  }
  view_.sphere_reach = a_.sphere_reach.data();
  view_.group_reach = group_reach_.data();
  view_.pair_reach = pair_reach_.data();
  view_.pair_list_reach = pair_list_reach_.data();
  const size_t nk = size_t(view_.n_pair_blocks);
  block_reach_.assign(nk * nb, 0.0f);
  block_list_reach_.assign(nk * nb, 0.0f);
  for (size_t k = 0; k < nk; ++k)
    for (int32_t i = pair_block_begin_[k]; i < pair_block_begin_[k + 1]; ++i) {
      const size_t p = size_t(pair_order_[i]);
      for (size_t b = 0; b < nb; ++b) {
        block_reach_[k * nb + b] = std::max(block_reach_[k * nb + b], pair_reach_[p * nb + b]);
        block_list_reach_[k * nb + b] = std::max(block_list_reach_[k * nb + b], pair_list_reach_[p * nb + b]);
      }
    }
  view_.block_reach = block_reach_.data();
  view_.block_list_reach = block_list_reach_.data();
  view_.far_skip = a_.fast_paths ? 1 : 0;
}

// How fast joint k (a body below the common ancestor `top` of spheres i and j) can change the
// distance |c_i - c_j| through its motion of sphere i, per unit of |scale dq_k|. Rotating c_i about
// k's axis moves it by z x (c_i - o) = z x (c_i - c_j) + z x (c_j - o); the first term is
// perpendicular to c_i - c_j, so the rate is at most the distance of EITHER centre from the axis:
// sphere_reach of i, or, when j is fixed in the frame that holds k's axis (j on top's body, k
// just below top), j's constant distance from it. The ur5's base spheres sit on its pan axis.
float RobotModel::listed_reach(size_t i, size_t j, int32_t body_j, size_t k, int32_t top) const {
  const size_t nb = a_.body_parent.size();
  const float reach = a_.sphere_reach[i * nb + k];
  if (reach == 0.0f || a_.body_kind[k] != kBodyRevolute || a_.body_parent[k] != top || body_j != top) return reach;
  const float* o = a_.body_origin.data() + 12 * k;  // k's axis in top's frame: through o[3, 7, 11] along column 2
  const double v[3] = {double(a_.spheres[4 * j]) - o[3], double(a_.spheres[4 * j + 1]) - o[7],
                       double(a_.spheres[4 * j + 2]) - o[11]};
  const double z[3] = {o[2], o[6], o[10]};
  const double zn = std::sqrt(z[0] * z[0] + z[1] * z[1] + z[2] * z[2]);
  const double c[3] = {v[1] * z[2] - v[2] * z[1], v[2] * z[0] - v[0] * z[2], v[0] * z[1] - v[1] * z[0]};
  // rounded up far past double rounding and the float conversion: the bound may never undercut
  const double rho = std::sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]) / zn * (1 + 1e-6) + 2e-6;
  float f = static_cast<float>(rho);
  if (double(f) < rho) f = std::nextafter(f, HUGE_VALF);
  return std::min(reach, f);
}

bool RobotModel::convert_row(const Strided& q, int64_t r, float* out, const char* name) const {
  bool in_limits = true;
  for (int32_t j = 0; j < a_.dof; ++j) {
    double v = q.data[r * q.row_stride + j * q.col_stride];
    if (!std::isfinite(v)) {
      std::string where = std::string(name) + (q.rows > 1 ? "[" + std::to_string(r) + ", " : "[") + std::to_string(j) + "]";
      throw std::domain_error(where + " is " + std::to_string(v) + ": joint values must be finite");
    }
    if (a_.wrap[j]) {
      v = std::remainder(v, 2 * kPi);
    } else if (v < a_.lower[j] || v > a_.upper[j]) {
      in_limits = false;
    }
    out[j] = static_cast<float>(v);
  }
  return in_limits;
}

bool RobotModel::is_valid(const Environment& env, const Strided& q, float padding) const {
  require_clouds(env, padding);
  const KernelTable& k = kernels();
  alignas(64) float row[64];
  std::vector<float>& big = row_buffer();
  float* qf = row;
  if (a_.dof > 64) {
    big.resize(a_.dof);
    qf = big.data();
  }
  if (!convert_row(q, 0, qf, "q")) return false;
  return k.check_one(&view_, &env.view(), qf, padding, scratch(k.one_scratch_floats(&view_)));
}

void RobotModel::is_valid_many(const Environment& env, const Strided& q, float padding, uint8_t* out) const {
  require_clouds(env, padding);
  const KernelTable& k = kernels();
  // PERF: convert in blocks so the float copy stays in L1 while the kernel reads it.
  constexpr int64_t kBlock = 256;
  std::vector<float>& buf = row_buffer();
  buf.resize(size_t(kBlock) * std::max(a_.dof, 1));
  float* s = scratch(k.scratch_floats(&view_));
  CheckState state;  // for this call's robot, environment and padding
  for (int64_t base = 0; base < q.rows; base += kBlock) {
    const int64_t n = std::min(kBlock, q.rows - base);
    for (int64_t r = 0; r < n; ++r) out[base + r] = convert_row(q, base + r, buf.data() + r * a_.dof, "Q") ? 1 : 0;
    k.check(&view_, &env.view(), buf.data(), n, padding, false, out + base, s, &state);
  }
}

std::vector<float> RobotModel::float_limits(bool upper) const {
  std::vector<float> out(size_t(a_.dof));
  for (int32_t j = 0; j < a_.dof; ++j) {
    const double v = upper ? a_.upper[j] : a_.lower[j];
    float f = static_cast<float>(v);
    if (!upper && double(f) < v) f = std::nextafter(f, HUGE_VALF);
    if (upper && double(f) > v) f = std::nextafter(f, -HUGE_VALF);
    out[j] = f;
  }
  return out;
}

int64_t RobotModel::edge_intervals(const Strided& q0, const Strided& q1, double resolution, bool& in_limits) const {
  if (!(resolution > 0) || !std::isfinite(resolution))
    throw std::invalid_argument("resolution must be a positive finite number of samples per unit of joint distance");
  std::vector<float> ends(2 * size_t(std::max(a_.dof, 1)));
  const bool ok0 = convert_row(q0, 0, ends.data(), "q0");  // refuses non-finite values with their index
  const bool ok1 = convert_row(q1, 0, ends.data() + a_.dof, "q1");
  in_limits = ok0 && ok1;
  double d2 = 0;
  for (int32_t j = 0; j < a_.dof; ++j) {
    const double d = q1.data[j * q1.col_stride] - q0.data[j * q0.col_stride];
    d2 += d * d;
  }
  const double n = std::ceil(std::sqrt(d2) * resolution);
  if (!(n < 1e9)) throw std::invalid_argument("motion needs more than 1e9 samples at this resolution");
  return std::max<int64_t>(1, static_cast<int64_t>(n));
}

int64_t RobotModel::motion_samples(const Strided& q0, const Strided& q1, double resolution) const {
  bool in_limits;
  return edge_intervals(q0, q1, resolution, in_limits);
}

bool RobotModel::is_motion_valid(const Environment& env, const Strided& q0, const Strided& q1, double resolution,
                                 float padding) const {
  require_clouds(env, padding);
  const KernelTable& k = kernels();
  bool in_limits;
  const int64_t n = edge_intervals(q0, q1, resolution, in_limits);
  if (!in_limits) return false;  // limits form a box, so the segment is in limits iff both ends are
  // Rake order: chunk c holds samples c, c + P, c + 2P, ... (P chunks of W lanes), so the first
  // chunk already spans the whole edge and a collision anywhere is found early. Chunks are built
  // and checked one at a time, so an edge that fails early costs only what it checked.
  const int64_t W = k.lanes;
  const int64_t P = (n + 1 + W - 1) / W;
  std::vector<float>& buf = row_buffer();
  buf.resize(size_t(W) * std::max(a_.dof, 1));
  float* s = scratch(k.scratch_floats(&view_));
  CheckState state;
  for (int64_t c = 0; c < P; ++c) {
    for (int64_t l = 0; l < W; ++l) {
      int64_t i = c + P * l;
      if (i > n) i = c;  // short chunk: repeat its first sample
      const double t = double(i) / double(n);
      float* row = buf.data() + l * a_.dof;
      for (int32_t j = 0; j < a_.dof; ++j) {
        const double v0 = q0.data[j * q0.col_stride], v1 = q1.data[j * q1.col_stride];
        double v = v0 + t * (v1 - v0);
        if (a_.wrap[j]) v = std::remainder(v, 2 * kPi);
        row[j] = static_cast<float>(v);
      }
    }
    uint8_t free[64];
    std::fill(free, free + W, uint8_t(1));
    if (!k.check(&view_, &env.view(), buf.data(), W, padding, true, free, s, &state)) return false;
  }
  return true;
}

bool RobotModel::planner_link(const Environment& env, const Strided& q0, const Strided& q1, double resolution,
                              float padding, bool wide, int64_t* samples) const {
  require_clouds(env, padding);
  const KernelTable& k = kernels();
  bool in_limits;
  const int64_t n = edge_intervals(q0, q1, resolution, in_limits);
  if (samples != nullptr) *samples = 0;
  if (!in_limits) return false;
  std::vector<float> ends(2 * size_t(std::max(a_.dof, 1)));
  convert_row(q0, 0, ends.data(), "q0");
  convert_row(q1, 0, ends.data() + a_.dof, "q1");
  CheckState state;
  const bool free = k.motion_kernel(wide)(&view_, &env.view(), ends.data(), ends.data() + a_.dof, n, 0, n, padding,
                                          scratch(k.scratch_floats(&view_)), &state);
  if (samples != nullptr) *samples = state.link_samples;
  return free;
}

void RobotModel::fk_spheres(const Strided& q, float* out) const {
  const KernelTable& k = kernels();
  std::vector<float> qf(size_t(q.rows) * std::max(a_.dof, 1));
  for (int64_t r = 0; r < q.rows; ++r) convert_row(q, r, qf.data() + r * a_.dof, "Q");
  k.fk_spheres(&view_, qf.data(), q.rows, out, scratch(k.scratch_floats(&view_)));
}

void RobotModel::fk_bodies(const Strided& q, float* out) const {
  const KernelTable& k = kernels();
  std::vector<float> qf(size_t(q.rows) * std::max(a_.dof, 1));
  for (int64_t r = 0; r < q.rows; ++r) convert_row(q, r, qf.data() + r * a_.dof, "Q");
  k.fk_bodies(&view_, qf.data(), q.rows, out, scratch(k.scratch_floats(&view_)));
}

std::vector<float> RobotModel::world_spheres(const Strided& q) const {
  const KernelTable& k = *isa_table<KernelTable, Isa::kScalar>();
  std::vector<float> qf(std::max(a_.dof, 1));
  convert_row(q, 0, qf.data(), "q");
  std::vector<float> w(size_t(view_.n_spheres) * 4);
  k.fk_spheres(&view_, qf.data(), 1, w.data(), scratch(k.scratch_floats(&view_)));
  return w;
}

// Distance of (x, y, z) from the surface of mesh or hull obstacle idx (a mesh's is unsigned; a
// hull's negative inside) and the nearest surface point (world), in the precision of the checks:
// the float32 triangle tree, or GJK in double.
static double shape_surface_distance(const EnvironmentView& e, int32_t idx, float x, float y, float z,
                                     double* witness) {
  const int32_t rec = e.obstacle_record[idx];
  if (e.obstacle_kind[idx] == kObsConvex) return isa_scalar::hull_sdist(e, rec, x, y, z, witness);
  const float c[3] = {x, y, z};
  float d, q[3];
  int32_t tri;
  bvh_kernels_active().distance(&e.meshes[rec], c, 1, HUGE_VALF, &d, &tri, q);
  for (int k = 0; k < 3; ++k) witness[k] = q[k];
  return d;
}

std::vector<Contact> RobotModel::contacts(const Environment& env, const Strided& q, float padding) const {
  // NOTE: the scalar kernels and the same shape tests as the SIMD path, so the report agrees with
  // is_valid; every pair is tested (no early exit, no bounding-sphere culling).
  const std::vector<float> w = world_spheres(q);
  const int32_t ns = view_.n_spheres;
  using V = VecScalar;
  std::vector<Contact> out;
  const EnvironmentView& e = env.view();
  for (int32_t s = 0; s < ns; ++s) {
    const V x{w[4 * s]}, y{w[4 * s + 1]}, z{w[4 * s + 2]};
    const float r = w[4 * s + 3] + padding;
    const V R{r};
    for (int32_t idx = 0; idx < e.n_obstacles; ++idx) {
      const int32_t kind = e.obstacle_kind[idx];
      if (kind == kObsCloud) continue;  // NOTE: cloud contacts are found exactly by simdplan.robots (NumPy)
      if (kind == kObsMesh || kind == kObsConvex) {
        double wit[3];
        const double sd = shape_surface_distance(e, idx, w[4 * s], w[4 * s + 1], w[4 * s + 2], wit);
        if (sd < r) out.push_back({false, s, e.obstacle_record[idx], kind, float(r - sd)});
        continue;
      }
      const float* o = isa_scalar::obstacle_data(e, idx);
      if (isa_scalar::obstacle_hit(kind, o, x, y, z, R).m)
        out.push_back({false, s, e.obstacle_record[idx], kind, r - isa_scalar::obstacle_sdist(kind, o, x, y, z).v});
    }
  }
  for (int32_t p = 0; p < view_.n_pairs; ++p) {
    const int32_t ga = view_.pairs[2 * p], gb = view_.pairs[2 * p + 1];
    for (int32_t i = view_.group_begin[ga]; i < view_.group_end[ga]; ++i) {
      for (int32_t j = view_.group_begin[gb]; j < view_.group_end[gb]; ++j) {
        const float ri = w[4 * i + 3] + padding, rj = w[4 * j + 3] + padding;
        const V ax{w[4 * i]}, ay{w[4 * i + 1]}, az{w[4 * i + 2]};
        const V bx{w[4 * j]}, by{w[4 * j + 1]}, bz{w[4 * j + 2]};
        if (isa_scalar::sphere_sphere_hit2(ax, ay, az, V{ri}, bx, by, bz, V{rj}).m) {
          const float dx = w[4 * i] - w[4 * j], dy = w[4 * i + 1] - w[4 * j + 1], dz = w[4 * i + 2] - w[4 * j + 2];
          out.push_back({true, i, j, -1, ri + rj - std::sqrt(dx * dx + dy * dy + dz * dz)});
        }
      }
    }
  }
  return out;
}


void RobotModel::clearance_many(const Environment& env, const Strided& q, float padding, float* env_out,
                                float* self_out, float cap) const {
  require_distances(env);
  const KernelTable& k = kernels();
  const int32_t W = k.distance_lanes, ng = view_.n_groups, np = view_.n_pairs;
  std::vector<float> rows(size_t(W) * std::max(a_.dof, 1));
  std::vector<float> cap_env(size_t(std::max(ng, 1)), cap), cap_pair(size_t(std::max(np, 1)), cap);
  std::vector<float> eo(size_t(W) * std::max(ng, 1)), po(size_t(W) * std::max(np, 1));
  float* s = scratch(k.distance_scratch_floats(&view_));
  for (int64_t base = 0; base < q.rows; base += W) {
    const int32_t count = int32_t(std::min<int64_t>(W, q.rows - base));
    for (int32_t r = 0; r < count; ++r) convert_row(q, base + r, rows.data() + size_t(r) * a_.dof, "Q");
    k.distances(&view_, &env.view(), rows.data(), count, padding, cap_env.data(), cap_pair.data(), kDistRunningMin,
                eo.data(), po.data(), nullptr, s);
    for (int32_t r = 0; r < count; ++r) {
      float e = HUGE_VALF, c = HUGE_VALF;
      for (int32_t g = 0; g < ng; ++g) e = std::min(e, eo[size_t(g) * W + r]);
      for (int32_t p = 0; p < np; ++p) c = std::min(c, po[size_t(p) * W + r]);
      env_out[base + r] = e;
      self_out[base + r] = c;
    }
  }
}

CertifyResult RobotModel::certify_motion(const Environment& env, const Strided& q0, const Strided& q1, float padding,
                                         double min_step) const {
  require_distances(env);
  if (!(min_step > 0) || !std::isfinite(min_step))
    throw std::invalid_argument("min_step must be a positive finite joint-space distance");
  bool ok0, ok1;
  const std::vector<float> ends = raw_ends(q0, q1, ok0, ok1);
  if (!ok0 || !ok1) return {kCertCollision, 0, ok0 ? 1.0 : 0.0};
  // NOTE: a fresh workspace per call (about a microsecond); planners keep theirs for a whole plan.
  CertifiedLink link(view_, kernels());
  return link.check(env.view(), ends.data(), ends.data() + a_.dof, padding, min_step);
}

std::vector<float> RobotModel::raw_ends(const Strided& q0, const Strided& q1, bool& in_limits0,
                                        bool& in_limits1) const {
  std::vector<float> ends(2 * size_t(std::max(a_.dof, 1)));
  in_limits0 = convert_row(q0, 0, ends.data(), "q0");  // refuses non-finite values with their index
  in_limits1 = convert_row(q1, 0, ends.data() + a_.dof, "q1");
  // NOTE: the segment runs between the raw values; a continuous joint is wrapped per sample by
  // the kernels' sin/cos, so ends given in different turns are the edge the caller described.
  for (int32_t j = 0; j < a_.dof; ++j) {
    ends[j] = static_cast<float>(q0.data[j * q0.col_stride]);
    ends[a_.dof + j] = static_cast<float>(q1.data[j * q1.col_stride]);
  }
  return ends;
}

void RobotModel::motion_bounds(const Strided& q0, const Strided& q1, double* out) const {
  bool ok0, ok1;
  const std::vector<float> ends = raw_ends(q0, q1, ok0, ok1);
  CertifiedLink(view_, *isa_table<KernelTable, Isa::kScalar>()).sphere_bounds(ends.data(), ends.data() + a_.dof, out);
}

void RobotModel::chord_bounds(const Strided& q0, const Strided& q1, double t0, double t1, double* out) const {
  if (!(0.0 <= t0 && t0 < t1 && t1 <= 1.0)) throw std::invalid_argument("need 0 <= t0 < t1 <= 1");
  bool ok0, ok1;
  const std::vector<float> ends = raw_ends(q0, q1, ok0, ok1);
  CertifiedLink(view_, *isa_table<KernelTable, Isa::kScalar>()).chord_bounds(ends.data(), ends.data() + a_.dof, t0, t1,
                                                                             out);
}

namespace {

using isa_scalar::at;
using isa_scalar::D3;
using isa_scalar::dot;
using isa_scalar::norm;
using isa_scalar::unit_or;

// Nearest point w of the obstacle's surface to c and the signed distance of c (negative inside).
double closest_on_primitive(int32_t kind, const float* o, D3 c, D3& w) {
  return isa_scalar::with_record_kind(kind, o, [&](auto row, const auto& rec) { return decltype(row)::closest(rec, c, w); });
}

}  // namespace

std::vector<Proximity> RobotModel::distance_report(const Environment& env, const Strided& q, float padding) const {
  require_distances(env);
  const std::vector<float> wsp = world_spheres(q);
  const int32_t ns = view_.n_spheres;
  const EnvironmentView& e = env.view();
  const NearestKernels& nk = nearest_kernels_active();
  std::vector<Proximity> out;
  auto record = [&](int32_t sphere, int32_t kind, int32_t other, double clearance, D3 c, double r, D3 w, bool inside) {
    const D3 n = inside ? unit_or(c - w, {0, 0, -1}) : unit_or(w - c, {0, 0, -1});
    const D3 on = c + r * n;
    out.push_back({sphere, kind, other, float(clearance), {float(on.x), float(on.y), float(on.z)},
                   {float(w.x), float(w.y), float(w.z)}});
  };
  if (e.n_obstacles > 0) {
    for (int32_t s = 0; s < ns; ++s) {
      const D3 c = at(wsp.data() + 4 * s);
      const double r = double(wsp[4 * s + 3]) + padding;
      double best = HUGE_VAL, best_sd = 0;
      int32_t best_idx = -1;
      D3 best_w{0, 0, 0};
      for (int32_t idx = 0; idx < e.n_obstacles; ++idx) {
        const int32_t kind = e.obstacle_kind[idx], rec = e.obstacle_record[idx];
        D3 w;
        double sd;
        if (kind == kObsCloud) {
          const float cf[3] = {float(c.x), float(c.y), float(c.z)};
          float d;
          int32_t pi;
          nk.nearest(&e.cloud_nearest[rec], cf, 1, HUGE_VALF, &d, &pi);
          if (pi < 0) continue;  // an empty cloud
          const NearestView& t = e.cloud_nearest[rec];
          // the nearest point's coordinates: find its slot (rare path, a report)
          D3 p{0, 0, 0};
          const int64_t slots = (int64_t(1) << t.depth) * kNearestBucket;
          for (int64_t i = 0; i < slots; ++i)
            if (t.index[i] == pi) {
              p = {t.px[i], t.py[i], t.pz[i]};
              break;
            }
          const double pr = e.clouds_point_radius[rec];
          w = p + pr * unit_or(c - p, {0, 0, 1});
          sd = norm(c - p) - pr;
        } else if (kind == kObsMesh || kind == kObsConvex) {
          double wit[3];
          sd = shape_surface_distance(e, idx, float(c.x), float(c.y), float(c.z), wit);
          w = {wit[0], wit[1], wit[2]};
        } else {
          sd = closest_on_primitive(kind, isa_scalar::obstacle_data(e, idx), c, w);
        }
        if (sd - r < best) best = sd - r, best_sd = sd, best_idx = idx, best_w = w;
      }
      if (best_idx >= 0)
        record(s, e.obstacle_kind[best_idx], e.obstacle_record[best_idx], best, c, r, best_w, best_sd < 0);
    }
  }
  for (int32_t p = 0; p < view_.n_pairs; ++p) {
    const int32_t ga = view_.pairs[2 * p], gb = view_.pairs[2 * p + 1];
    double best = HUGE_VAL;
    int32_t bi = -1, bj = -1;
    for (int32_t i = view_.group_begin[ga]; i < view_.group_end[ga]; ++i)
      for (int32_t j = view_.group_begin[gb]; j < view_.group_end[gb]; ++j) {
        const double d = norm(at(wsp.data() + 4 * i) - at(wsp.data() + 4 * j)) - wsp[4 * i + 3] - wsp[4 * j + 3] -
                         2.0 * padding;
        if (d < best) best = d, bi = i, bj = j;
      }
    if (bi < 0) continue;
    const D3 ci = at(wsp.data() + 4 * bi), cj = at(wsp.data() + 4 * bj);
    const D3 u = unit_or(cj - ci, {0, 0, 1});
    const D3 oi = ci + (double(wsp[4 * bi + 3]) + padding) * u, oj = cj - (double(wsp[4 * bj + 3]) + padding) * u;
    out.push_back({bi, -1, bj, float(best), {float(oi.x), float(oi.y), float(oi.z)},
                   {float(oj.x), float(oj.y), float(oj.z)}});
  }
  return out;
}

}  // namespace simdplan
