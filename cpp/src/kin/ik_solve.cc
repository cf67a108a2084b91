// ik_solve.cc: inverse kinematics with restarts (ISA-neutral): seeds lanes, runs the active ISA's solver
// (kin/ik.hh), keeps the converged restarts that are collision-free and distinct, reseeds the rest.
#include "kin/ik_solve.hh"

#include <array>
#include <cstring>
#include <cmath>
#include <limits>

#include "dispatch.hh"
#include "simdplan/kin/ik_kernels.hh"
#include "simdplan/planner/sampler.hh"
#include "simdplan/scratch.hh"

namespace simdplan {

const IkKernels& ik_kernels_active() { return active_table<IkKernels>(); }

namespace {

// iterations per solver call between the driver's checks of the lanes (and of the deadline).
// PERF: 4 rather than 8: a lane that converges mid-call idles less; 10-15% less time per solve
// (panda, ur5, iiwa, 300 reachable poses each, and 140 MotionBenchMaker hand poses in their scenes).
constexpr int32_t kChunk = 4;
// initial damping (m^2), and the largest joint change per iteration (rad or m), which keeps a
// step from jumping across the workspace.
// PERF: solver iterations (exact counts) over 200 reachable poses each of panda, ur5 and iiwa and
// the hand poses of 140 MotionBenchMaker goals in their scenes, two seed sets: 1e-3 and 0.4 took
// 490k and 456k, 1e-2 and 1.0 360k and 358k (-22..26%, every set fewer); steps of 1.5-3.0 and
// damping of 1e-4 or 3e-2, and other growth and shrink factors of lambda, did no better.
constexpr float kLambda0 = 1e-2f;
constexpr float kMaxStep = 1.0f;
// the solver converges to this fraction of the tolerances, so float32 rounding (about 1e-6 m and
// rad) keeps every solution inside them when the caller checks it in float64
constexpr double kInternalTol = 0.5;

// The tip frame of q in double arithmetic (the program's float32 origins, exact to about 1e-7 m),
// and its errors against the goal under the mode: position (m) and angle (rad) of what the mode
// constrains. The solver's float32 convergence is checked with this before a solution is kept.
void tip_errors(const RobotView& rb, const IkRequest& req, const float* G, const float* q, double& pos, double& angle) {
  double frames[64][12];
  std::vector<std::array<double, 12>> heap;
  double(*F)[12] = frames;
  if (rb.n_bodies > 64) {
    heap.resize(size_t(rb.n_bodies));
    F = reinterpret_cast<double(*)[12]>(heap.data());
  }
  for (int32_t b = 0; b <= req.tip_body; ++b) {
    const float* o = rb.body_origin + 12 * b;
    double T[12];
    const int32_t p = rb.body_parent[b];
    if (p < 0) {
      for (int k = 0; k < 12; ++k) T[k] = o[k];
    } else {
      const double* P = F[p];
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j)
          T[4 * i + j] = P[4 * i] * o[j] + P[4 * i + 1] * o[4 + j] + P[4 * i + 2] * o[8 + j] +
                         (j == 3 ? P[4 * i + 3] : 0.0);
    }
    if (rb.body_kind[b] != kBodyFixed) {
      const double v = double(rb.body_scale[b]) * q[rb.body_dof[b]] + double(rb.body_offset[b]);
      if (rb.body_kind[b] == kBodyRevolute) {
        const double c = std::cos(v), s = std::sin(v);
        for (int i = 0; i < 3; ++i) {
          const double c0 = T[4 * i], c1 = T[4 * i + 1];
          T[4 * i] = c * c0 + s * c1;
          T[4 * i + 1] = c * c1 - s * c0;
        }
      } else {
        for (int i = 0; i < 3; ++i) T[4 * i + 3] += v * T[4 * i + 2];
      }
    }
    for (int k = 0; k < 12; ++k) F[b][k] = T[k];
  }
  const double* B = F[req.tip_body];
  double T[12];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      T[4 * i + j] = B[4 * i] * req.tip[j] + B[4 * i + 1] * req.tip[4 + j] + B[4 * i + 2] * req.tip[8 + j] +
                     (j == 3 ? B[4 * i + 3] : 0.0);
  pos = std::sqrt((T[3] - G[3]) * (T[3] - G[3]) + (T[7] - G[7]) * (T[7] - G[7]) + (T[11] - G[11]) * (T[11] - G[11]));
  angle = 0.0;
  if (req.mode == kIkPosition) return;
  double w[3] = {0, 0, 0}, dot = 0;
  const int k0 = req.mode == kIkFreeAxis ? req.axis : 0, k1 = req.mode == kIkFreeAxis ? req.axis + 1 : 3;
  for (int k = k0; k < k1; ++k) {
    const double rx = T[k], ry = T[4 + k], rz = T[8 + k], gx = G[k], gy = G[4 + k], gz = G[8 + k];
    w[0] += ry * gz - rz * gy, w[1] += rz * gx - rx * gz, w[2] += rx * gy - ry * gx;
    dot += rx * gx + ry * gy + rz * gz;
  }
  const double sine = std::sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  angle = req.mode == kIkPose ? std::atan2(0.5 * sine, 0.5 * (dot - 1.0)) : std::atan2(sine, dot);
}

// FNV-1a over the goal's float bits
uint64_t goal_hash(const std::array<float, 12>& g) {
  uint64_t h = 1469598103934665603ULL;
  for (float f : g) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    for (int k = 0; k < 4; ++k) h = (h ^ ((bits >> (8 * k)) & 0xFFu)) * 1099511628211ULL;
  }
  return h;
}

}  // namespace

std::vector<IkOutput> solve_ik(const RobotModel& robot, const Environment& env, const IkRequest& req, uint64_t seed,
                               const std::vector<std::array<float, 12>>& targets, const Deadline& deadline) {
  const int64_t n_poses = int64_t(targets.size());
  std::vector<IkOutput> out(static_cast<size_t>(n_poses));
  if (n_poses == 0) return out;
  const IkKernels& ik = ik_kernels_active();
  const KernelTable& k = robot.kernels();
  const RobotView& rb = robot.view();
  const int32_t dof = robot.dof();
  const int32_t W = ik.lanes;
  robot.require_clouds(env, req.padding);
  const std::vector<float> lo = robot.float_limits(false), hi = robot.float_limits(true);
  const std::vector<uint8_t>& wrap = robot.wrap();

  // every lane seeks its own pose: lane_target holds the 12 goal values of each lane's pose
  std::vector<float> lane_target(size_t(12) * W, 0.0f);
  IkTask t{};
  t.tip_body = req.tip_body;
  for (int i = 0; i < 12; ++i) t.tip[i] = req.tip[i];
  t.mode = req.mode;
  t.axis = req.axis;
  t.pos_tol = float(req.pos_tol * kInternalTol);
  t.sin_tol = float(std::sin(req.ori_tol * kInternalTol));
  t.max_step = kMaxStep;
  t.lane_target = lane_target.data();
  t.lower = lo.data();
  t.upper = hi.data();
  t.wrap = wrap.data();

  std::vector<float> q(size_t(dof) * W), cand(size_t(dof) * W), lambda(W), error(W), pos(W), rot(W),
      jac(size_t(6) * dof * W), err6(size_t(6) * W);
  IkLanes lanes{q.data(), cand.data(), lambda.data(), error.data(), pos.data(), rot.data(), jac.data(), err6.data()};
  std::vector<float> scratch_buf(size_t(ik.scratch_floats(&rb)) + 16), one_buf(size_t(k.one_scratch_floats(&rb)) + 16);
  float* scratch = aligned_scratch(scratch_buf);
  float* one = aligned_scratch(one_buf);
  std::vector<int32_t> lane_iters(W, 0), lane_pose(W, -1), pose_lanes(size_t(n_poses), 0);
  std::vector<uint8_t> finished(size_t(n_poses), 0);
  std::vector<planner::Rng> rngs;
  // pose p's restarts: from seed + p and the goal itself, so poses planned with one seed (every
  // problem of a benchmark, say) do not all start from the same configurations
  for (int64_t p = 0; p < n_poses; ++p) rngs.emplace_back((seed + uint64_t(p)) ^ goal_hash(targets[p]));
  std::vector<float> row(dof);
  const int64_t user_seeds = int64_t(req.seeds.size()) / std::max(dof, 1);

  // A restart for lane l, or idle: on its pose `prev` again while that pose is unsolved and may begin
  // restarts; else on the next pose not begun; else on the open (begun, unsolved) pose with the
  // fewest lanes. Open poses are at most about W, so a batch of n poses costs O(n W) here, not O(n^2).
  int64_t next_new = 0;
  std::vector<int64_t> open;
  auto can_restart = [&](int64_t p) { return !finished[p] && out[size_t(p)].attempts < req.max_attempts; };
  auto assign = [&](int l, int64_t prev) -> bool {
    int64_t best = -1;
    if (prev >= 0 && can_restart(prev)) {
      best = prev;
    } else if (next_new < n_poses) {
      best = next_new++;
      open.push_back(best);
    } else {
      size_t keep = 0;
      for (size_t i = 0; i < open.size(); ++i) {
        const int64_t p = open[i];
        if (!can_restart(p)) continue;  // solved or out of restarts: no longer open
        open[keep++] = p;
        if (best < 0 || pose_lanes[p] < pose_lanes[best]) best = p;
      }
      open.resize(keep);
    }
    lane_pose[l] = int32_t(best);
    if (best < 0) return false;
    IkOutput& o = out[size_t(best)];
    for (int32_t j = 0; j < dof; ++j) {
      float v;
      if (o.attempts < user_seeds) {
        v = std::min(std::max(req.seeds[size_t(o.attempts) * dof + j], lo[j]), hi[j]);
      } else {
        v = float(lo[j] + rngs[best].uniform() * (double(hi[j]) - lo[j]));
        v = std::min(std::max(v, lo[j]), hi[j]);
      }
      cand[size_t(j) * W + l] = v;
    }
    for (int i = 0; i < 12; ++i) lane_target[size_t(i) * W + l] = targets[best][i];
    error[l] = std::numeric_limits<float>::infinity();
    lambda[l] = kLambda0;
    lane_iters[l] = 0;
    ++o.attempts;
    ++pose_lanes[best];
    return true;
  };
  auto distinct = [&](const IkOutput& o, const std::vector<float>& x) {
    const size_t n = o.solutions.size() / size_t(dof);
    for (size_t s = 0; s < n; ++s) {
      double d2 = 0;
      for (int32_t j = 0; j < dof; ++j) {
        const double d = o.solutions[s * dof + j] - x[j];
        d2 += d * d;
      }
      if (d2 < req.min_distance * req.min_distance) return false;
    }
    return true;
  };

  uint32_t active = 0;
  for (int l = 0; l < W; ++l)
    if (assign(l, -1)) active |= 1u << l;
  Deadline::Stop stopped = Deadline::Stop::none;
  while (active != 0) {
    if (deadline.passed()) {
      stopped = deadline.stopped();
      break;
    }
    const uint32_t done = ik.iterate(&rb, &t, &lanes, active, kChunk, scratch);
    for (int l = 0; l < W; ++l) {
      if (!(active >> l & 1u)) continue;
      const int32_t p = lane_pose[l];
      IkOutput& o = out[size_t(p)];
      lane_iters[l] += kChunk;
      o.iterations += kChunk;
      bool release = finished[p] != 0;  // its pose was solved by another lane meanwhile
      if (!release && (done >> l & 1u)) {
        release = true;
        for (int32_t j = 0; j < dof; ++j) row[j] = q[size_t(j) * W + l];
        double pe, ae;
        tip_errors(rb, req, targets[p].data(), row.data(), pe, ae);
        if (!(pe <= req.pos_tol && ae <= req.ori_tol)) {
          ++o.imprecise;  // float32 said converged, double does not agree: a restart lost, not a wrong answer
        } else if (!k.check_one(&rb, &env.view(), row.data(), req.padding, one)) {
          ++o.colliding;
        } else if (distinct(o, row)) {
          o.solutions.insert(o.solutions.end(), row.begin(), row.end());
          o.pos_err.push_back(pe);
          o.rot_err.push_back(ae);
          if (int64_t(o.pos_err.size()) >= int64_t(req.n_solutions)) finished[p] = 1;
        }
      } else if (!release && lane_iters[l] >= req.attempt_iters) {
        release = true;
      }
      if (!release) continue;
      --pose_lanes[p];
      if (!assign(l, p)) active &= ~(1u << l);
    }
  }
  for (int64_t p = 0; p < n_poses; ++p)
    if (!finished[p]) out[size_t(p)].stopped = stopped;
  return out;
}

}  // namespace simdplan
