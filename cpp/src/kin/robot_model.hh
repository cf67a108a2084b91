// robot_model.hh: owning storage behind a RobotView, plus the checks that take float64 joint
// values from Python: finiteness, joint limits, conversion to float32, then the active kernels.
//
// Joint values arrive as (pointer, stride in elements) so strided NumPy views are read correctly
// without a copy. Non-finite values throw std::domain_error naming the entry; values outside the
// limits are not errors: the configuration is simply invalid.
#pragma once
#include <atomic>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "collision/environment.hh"
#include "kin/strided.hh"
#include "simdplan/collision/certified_link.hh"
#include "simdplan/kin/robot_view.hh"

namespace simdplan {

struct RobotArrays {
  int32_t dof = 0;
  std::vector<int32_t> body_parent, body_kind, body_dof;
  std::vector<float> body_scale, body_offset, body_origin;
  std::vector<int32_t> group_body, group_begin, group_end;
  std::vector<float> group_bound, spheres;
  std::vector<int32_t> pairs;
  // Per pair (input order): [begin, end) into sphere_pairs of its certified sphere pairs, or -1, -1
  // (not certified: every sphere pair is tested). Valid while padding <= list_max_padding.
  std::vector<int32_t> pair_ranges;
  std::vector<int32_t> sphere_pairs;  // 2 per entry: global sphere indices (first of group a, second of b)
  float list_max_padding = 0.0f;
  // n_spheres x n_bodies: bound on the distance of each sphere centre from each body's joint axis
  // (robots/motion_bound.py; RobotView.sphere_reach). Empty: certified Link is unavailable.
  std::vector<float> sphere_reach;
  std::vector<double> lower, upper;
  std::vector<uint8_t> wrap;  // continuous joints: any angle is valid, wrapped to [-pi, pi] for the kernels
  // false: the kernels take no structural shortcut (every origin through the general product, the
  // static groups tested against the environment in every batch): the plain reference the tests
  // compare the shortcuts with. Answers are the same either way.
  bool fast_paths = true;
};

struct Contact {
  bool self;            // true: robot group pair; false: robot sphere vs obstacle
  int32_t sphere;       // robot sphere index
  int32_t other;        // obstacle record index (env) or the other robot sphere (self)
  int32_t kind;         // ObstacleKind (collision/environment_view.hh); -1 for self
  float depth;          // radius (+ padding) minus the signed distance of the centre, metres
};

// Closest obstacle of one robot sphere (distance_report): clearance (signed, metres), obstacle (kind,
// record), witness points: on the obstacle's surface nearest the centre (a cloud: its nearest point
// moved point_radius towards the centre) and on the sphere (its point deepest towards the obstacle).
struct Proximity {
  int32_t sphere;
  int32_t kind;    // ObstacleKind; -1: self (other = the other robot sphere)
  int32_t other;   // obstacle record index, or robot sphere
  float clearance;
  float on_robot[3];
  float on_other[3];
};

class RobotModel {
 public:
  explicit RobotModel(RobotArrays a);

  int32_t dof() const { return a_.dof; }
  const std::vector<double>& lower() const { return a_.lower; }
  const std::vector<double>& upper() const { return a_.upper; }
  const std::vector<uint8_t>& wrap() const { return a_.wrap; }
  // Joint limits as float, rounded inward so every float inside them is inside the double limits.
  std::vector<float> float_limits(bool upper) const;
  const RobotView& view() const { return view_; }

  // The kernels every check of this robot runs: its specialized table when one is attached for the
  // active ISA, else the active ISA's generic table. Read once per call into the core, so a kernel
  // attached meanwhile takes effect from the next call.
  const KernelTable& kernels() const;
  // Loads a kernel library generated for this robot (python/simdplan/specialize), checks its ABI, ISA
  // and key, compares its answers with the generic kernel's on a sample of configurations and edges,
  // and only then attaches it. Throws std::runtime_error naming what was wrong; the robot then keeps
  // its current kernels.
  void attach_kernels(const std::string& path, const std::string& key);
  // Back to the generic kernels; reattach_kernels() returns to the last attached one (false if none).
  // For side-by-side runs: switching costs nothing and loads nothing.
  void detach_kernels() { special_.store(nullptr, std::memory_order_release); }
  bool reattach_kernels() {
    const KernelTable* t = loaded_.load(std::memory_order_acquire);
    special_.store(t, std::memory_order_release);
    return t != nullptr;
  }
  // "specialized" when kernels() returns an attached table, else "generic"
  const char* kernel_kind() const;

  bool is_valid(const Environment& env, const Strided& q, float padding) const;
  void is_valid_many(const Environment& env, const Strided& q, float padding, uint8_t* out) const;
  bool is_motion_valid(const Environment& env, const Strided& q0, const Strided& q1, double resolution,
                       float padding) const;
  // The planners' discrete Link kernel (KernelTable::check_motion, as planner/checker.hh calls it):
  // samples a + (i/n)(b - a), i = 0 .. n, built in float32 from the float32 ends, with the kernel's
  // shortcuts between chunks. False outside the limits. For tests against is_motion_valid's path.
  // wide: the simplifier's kernel (KernelTable::check_motion_wide) instead of the growing trees'.
  // samples (optional): the samples of the chunks the kernel reached (CheckState::link_samples).
  bool planner_link(const Environment& env, const Strided& q0, const Strided& q1, double resolution,
                    float padding, bool wide = false, int64_t* samples = nullptr) const;
  // Samples the discrete Link check visits, in its order (rows of q(t_i), t_i = i / n).
  int64_t motion_samples(const Strided& q0, const Strided& q1, double resolution) const;
  void fk_spheres(const Strided& q, float* out) const;
  void fk_bodies(const Strided& q, float* out) const;
  std::vector<Contact> contacts(const Environment& env, const Strided& q, float padding) const;
  // Clearances of every row of q (collision/distance.hh), each min(cap, exact clearance) (cap > 0;
  // the default +inf: exact): env_out[r] the smallest over robot spheres and obstacles, self_out[r]
  // over the checked sphere pairs (+inf if none). A small cap answers "is the clearance above it?"
  // for about the cost of a collision test. Rows out of the joint limits are measured all the same.
  void clearance_many(const Environment& env, const Strided& q, float padding, float* env_out, float* self_out,
                      float cap = HUGE_VALF) const;
  // Per sphere its closest obstacle (none where the environment is empty) and per checked link
  // pair its closest sphere pair, exact (scalar float64 witness points from float32 geometry).
  std::vector<Proximity> distance_report(const Environment& env, const Strided& q, float padding) const;
  // Certified Link(q0, q1) (collision/certified_link.hh); out of limits ends give kCertCollision
  // with no samples.
  CertifyResult certify_motion(const Environment& env, const Strided& q0, const Strided& q1, float padding,
                               double min_step) const;
  // L_i of the edge for every sphere (n_spheres doubles): bound on the length of the path its
  // centre traces.
  void motion_bounds(const Strided& q0, const Strided& q1, double* out) const;
  // CertifiedLink::chord_bounds of the stretch t0 .. t1 of q0 -> q1: n_groups doubles
  void chord_bounds(const Strided& q0, const Strided& q1, double t0, double t1, double* out) const;
  bool has_motion_bounds() const { return !a_.sphere_reach.empty(); }
  // Throws unless every cloud of env can answer distance queries.
  void require_distances(const Environment& env) const {
    if (env.view().n_clouds > 0) env.require_cloud_nearest();
  }
  // Throws CloudRadiusError unless every point cloud of env answers this robot's sphere radii plus
  // padding (the CAPT contract). Every check entry point calls it before the kernels run. (Group
  // bounding spheres are queried too, but only where a cloud's range happens to cover them.)
  void require_clouds(const Environment& env, float padding) const {
    if (env.view().n_clouds > 0) env.require_cloud_radii(radius_min_ + padding, radius_max_ + padding);
  }

 private:
  // Validates resolution and both ends (non-finite values throw); returns the Link intervals n and
  // sets in_limits to whether both ends are inside the joint limits.
  int64_t edge_intervals(const Strided& q0, const Strided& q1, double resolution, bool& in_limits) const;
  // Converts row r of q to float32 (wrapping continuous joints); returns false if out of limits.
  bool convert_row(const Strided& q, int64_t r, float* out, const char* name) const;
  // Both edge ends as float32, unwrapped (dof values each, q0 first), after convert_row's checks;
  // in_limits0/1 tell whether each end is inside the joint limits.
  std::vector<float> raw_ends(const Strided& q0, const Strided& q1, bool& in_limits0, bool& in_limits1) const;
  // Load-time tables of the kernels' fast paths (robot_shortcuts.cc), each pointing view_ at them:
  // body_axes_, body_perm_ and body_sign_;
  void origin_tables(size_t nb);
  // body_bound_ and the body group ranges;
  void body_bounds(size_t nb);
  // the pair blocks (after body_bounds and the pair sort).
  void pair_blocks();
  // A listed sphere pair's speed term for body k (robot_model.cc), before summing both sides.
  float listed_reach(size_t i, size_t j, int32_t body_j, size_t k, int32_t top) const;
  // World sphere centres and radii (n_spheres x 4) of one configuration, scalar kernels.
  std::vector<float> world_spheres(const Strided& q) const;

  RobotArrays a_;
  float radius_min_ = 0.0f, radius_max_ = 0.0f;  // over all spheres
  std::vector<int32_t> pair_begin_;
  std::vector<int32_t> body_axes_, body_perm_;  // RobotView::body_axes, body_perm
  std::vector<float> body_sign_;                // RobotView::body_sign
  std::vector<float> sphere_soa_;
  std::vector<float> group_reach_, pair_reach_, pair_list_reach_, block_reach_, block_list_reach_;
  std::vector<float> body_bound_;  // RobotView::body_bound
  std::vector<int32_t> body_group_begin_, body_group_end_;
  std::vector<int32_t> pair_block_begin_, pair_order_, pair_block_side_;  // RobotView's pair blocks
  RobotView view_{};
  // NOTE: attached tables (and their libraries) are never freed: a call in another thread may still
  // run them. One per attach, so a robot compiled once costs a few hundred bytes and one mapping.
  std::atomic<const KernelTable*> special_{nullptr};
  std::atomic<const KernelTable*> loaded_{nullptr};  // the last attached, kept by detach_kernels
};

}  // namespace simdplan
