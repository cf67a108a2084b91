// ik_solve.cc: inverse kinematics with restarts (ISA-neutral): seeds lanes, runs the active ISA's solver
// (kin/ik.hh), keeps the converged restarts that are collision-free and distinct, reseeds the rest.
#include "kin/ik_solve.hh"

#include <cmath>
#include <limits>

#include "dispatch.hh"
#include "simdplan/kin/ik_kernels.hh"
#include "simdplan/planner/sampler.hh"

namespace simdplan {

const IkKernels& ik_kernels_active() { return active_table<IkKernels>(); }

namespace {

// iterations per solver call between the driver's checks of the lanes (and of the deadline)
constexpr int32_t kChunk = 8;
// initial damping (m^2): small against a Jacobian of about a metre per radian
constexpr float kLambda0 = 1e-3f;
// largest joint change per iteration (rad or m): keeps a step from jumping across the workspace
constexpr float kMaxStep = 0.4f;
// the solver converges to this fraction of the tolerances, so float32 rounding (about 1e-6 m and
// rad) keeps every solution inside them when the caller checks it in float64
constexpr double kInternalTol = 0.5;

float* aligned(std::vector<float>& v) {
  auto addr = reinterpret_cast<uintptr_t>(v.data());
  return reinterpret_cast<float*>((addr + 63) & ~uintptr_t(63));
}

}  // namespace

IkOutput solve_ik(const RobotModel& robot, const Environment& env, const IkRequest& req, const Deadline& deadline) {
  IkOutput out;
  const IkKernels& ik = ik_kernels_active();
  const KernelTable& k = active();
  const RobotView& rb = robot.view();
  const int32_t dof = robot.dof();
  const int32_t W = ik.lanes;
  robot.require_clouds(env, req.padding);
  const std::vector<float> lo = robot.float_limits(false), hi = robot.float_limits(true);
  const std::vector<uint8_t>& wrap = robot.wrap();

  IkTask t{};
  t.tip_body = req.tip_body;
  for (int i = 0; i < 12; ++i) t.tip[i] = req.tip[i], t.target[i] = req.target[i];
  t.mode = req.mode;
  t.axis = req.axis;
  t.pos_tol = float(req.pos_tol * kInternalTol);
  t.sin_tol = float(std::sin(req.ori_tol * kInternalTol));
  t.max_step = kMaxStep;
  t.lower = lo.data();
  t.upper = hi.data();
  t.wrap = wrap.data();

  std::vector<float> q(size_t(dof) * W), cand(size_t(dof) * W), lambda(W), error(W), pos(W), rot(W),
      jac(size_t(6) * dof * W), err6(size_t(6) * W);
  IkLanes lanes{q.data(), cand.data(), lambda.data(), error.data(), pos.data(), rot.data(), jac.data(), err6.data()};
  std::vector<float> scratch_buf(size_t(ik.scratch_floats(&rb)) + 16), one_buf(size_t(k.one_scratch_floats(&rb)) + 16);
  float* scratch = aligned(scratch_buf);
  float* one = aligned(one_buf);
  std::vector<int32_t> lane_iters(W, 0);
  std::vector<float> row(dof);
  planner::Rng rng(req.seed);
  const int64_t user_seeds = int64_t(req.seeds.size()) / std::max(dof, 1);

  auto reseed = [&](int l) {
    for (int32_t j = 0; j < dof; ++j) {
      float v;
      if (out.attempts < user_seeds) {
        v = std::min(std::max(req.seeds[size_t(out.attempts) * dof + j], lo[j]), hi[j]);
      } else {
        v = float(lo[j] + rng.uniform() * (double(hi[j]) - lo[j]));
        v = std::min(std::max(v, lo[j]), hi[j]);
      }
      cand[size_t(j) * W + l] = v;
    }
    error[l] = std::numeric_limits<float>::infinity();
    lambda[l] = kLambda0;
    lane_iters[l] = 0;
    ++out.attempts;
  };
  auto distinct = [&](const std::vector<float>& x) {
    const size_t n = out.solutions.size() / size_t(dof);
    for (size_t s = 0; s < n; ++s) {
      double d2 = 0;
      for (int32_t j = 0; j < dof; ++j) {
        const double d = out.solutions[s * dof + j] - x[j];
        d2 += d * d;
      }
      if (d2 < req.min_distance * req.min_distance) return false;
    }
    return true;
  };

  uint32_t active = 0;
  for (int l = 0; l < W && out.attempts < req.max_attempts; ++l) {
    reseed(l);
    active |= 1u << l;
  }
  while (active != 0) {
    if (deadline.passed()) {
      out.stopped = deadline.stopped();
      break;
    }
    const uint32_t done = ik.iterate(&rb, &t, &lanes, active, kChunk, scratch);
    bool enough = false;
    for (int l = 0; l < W; ++l) {
      if (!(active >> l & 1u)) continue;
      lane_iters[l] += kChunk;
      out.iterations += kChunk;
      bool finished = false;
      if (done >> l & 1u) {
        finished = true;
        for (int32_t j = 0; j < dof; ++j) row[j] = q[size_t(j) * W + l];
        if (!k.check_one(&rb, &env.view(), row.data(), req.padding, one)) {
          ++out.colliding;
        } else if (distinct(row)) {
          out.solutions.insert(out.solutions.end(), row.begin(), row.end());
          out.pos_err.push_back(pos[l]);
          out.rot_err.push_back(rot[l]);
          enough = int64_t(out.solutions.size()) >= int64_t(req.n_solutions) * dof;
        }
      } else if (lane_iters[l] >= req.attempt_iters) {
        finished = true;
      }
      if (!finished) continue;
      if (!enough && out.attempts < req.max_attempts) {
        reseed(l);
      } else {
        active &= ~(1u << l);
      }
    }
    if (enough) break;
  }
  return out;
}

}  // namespace simdplan
