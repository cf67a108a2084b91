#include "planner/planning.hh"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "dispatch.hh"
#include "simdplan/planner/neighbor_kernels.hh"

namespace simdplan {

const NeighborKernels& neighbor_kernels_active() { return active_table<NeighborKernels>(); }

namespace {

using Clock = std::chrono::steady_clock;
using planner::Checker;
using planner::PlannerSettings;
using planner::PlannerStats;

int64_t ns_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
}

std::vector<float> to_float(const double* v, size_t n) { return std::vector<float>(v, v + n); }
std::vector<double> to_double(const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); }

// shared tail of every planner: simplification, interpolation, costs, output
void finish(Checker& check, std::vector<float> path, const PlannerSettings& s, planner::Rng& rng, PlanOutput& out) {
  // NOTE: simplification and interpolation run on the plan's deadline (set on the checker): cut
  // short, the path keeps every edge it had checked so far
  const int32_t dof = check.dof();
  out.success = !path.empty();
  if (!out.success) return;
  out.initial_path = to_double(path);
  out.stats.initial_cost = planner::path_cost(path, dof);
  const auto t0 = Clock::now();
  planner::Simplifier simp(check, rng);
  check.set_wide(true);  // simplification's edges are mostly free
  if (s.simplify) {
    // PERF: certified Link's discrete prefilter (Checker::motion) where tries often collide: the
    // farthest-first connections and the random shortcuts. Smoothing's small moves and the last
    // vertex drops are mostly free, where the prefilter costs more than it saves. Against no
    // prefilter in simplification (same paths): certified simplification mean -2% to -20% on five
    // robots' generated problems and 140 MotionBenchMaker panda problems (20 per class), medians
    // within noise (panda) to -18% (mobile manipulator); among point clouds median -14%.
    // PERF: farthest-first on the planner's path, then shortcuts; side by side on the 699 panda
    // MotionBenchMaker plans (seed 0, interleaved runs) against neighbour-only reduction first:
    // simplification median 226 -> 205 us, mean 235 -> 207 us; final cost median 4.85 both, mean
    // 5.297 -> 5.260 rad (cage: 284 -> 244 us, cost 7.44 -> 7.24; table_pick: 196 -> 210 us)
    check.set_discrete_prefilter(true);
    simp.reduce_farthest(path);
    simp.shortcut(path, s.simplify_iterations, s.shortcut_min_gain);
    check.set_discrete_prefilter(false);
    simp.smooth(path, s.smooth_passes);
    simp.reduce_vertices(path);
  }
  if (s.interpolate > 0) out.interpolation = simp.interpolate(path, s.interpolate);
  check.set_wide(false);
  out.stats.simplify_time_ns = ns_since(t0);
  out.stats.final_cost = planner::path_cost(path, dof);
  out.path = to_double(path);
}

void check_problem(const PlannerSettings& s, int32_t n_goals) {
  if (n_goals < 1) throw std::invalid_argument("at least one goal is needed");
  if (!(s.range > 0) || !(s.resolution > 0) || !std::isfinite(s.range) || !std::isfinite(s.resolution))
    throw std::invalid_argument("range and resolution must be positive and finite");
  if (s.max_iterations < 1) throw std::invalid_argument("max_iterations must be >= 1");
  if (!(s.min_step > 0) || !std::isfinite(s.min_step)) throw std::invalid_argument("min_step must be positive and finite");
  if (!(s.limit_tolerance >= 0) || !std::isfinite(s.limit_tolerance))
    throw std::invalid_argument("limit_tolerance must be finite and >= 0");
}

// Start and goals as rows [start, goal 0, ...], each value outside its limit by at most `tolerance`
// moved onto the limit, as Robot.clamp_to_limits does; *moved counts them. Continuous joints
// arrive wrapped into [-pi, pi], their limits, so they are never moved; NaN is left for the
// validity check to refuse.
std::vector<double> ends_within_limits(const RobotModel& robot, const double* start, const double* goals,
                                       int32_t n_goals, double tolerance, int32_t* moved) {
  const int32_t dof = robot.dof();
  std::vector<double> rows(start, start + dof);
  rows.insert(rows.end(), goals, goals + size_t(n_goals) * dof);
  *moved = 0;
  if (tolerance <= 0) return rows;
  for (size_t i = 0; i < rows.size(); ++i) {
    const double lo = robot.lower()[i % dof], hi = robot.upper()[i % dof];
    double& v = rows[i];
    if (v < lo && v >= lo - tolerance) v = lo, ++*moved;
    if (v > hi && v <= hi + tolerance) v = hi, ++*moved;
  }
  return rows;
}

// The first row that is not valid (outside the limits or in collision), or -1; Robot.is_valid_many's
// check, so Python's explanation of it (Robot.why_invalid) agrees.
int32_t first_invalid(const RobotModel& robot, const Environment& env, const std::vector<double>& rows, float padding) {
  const int32_t dof = robot.dof();
  const Strided q{rows.data(), int64_t(rows.size() / (dof ? dof : 1)), dof, dof, 1};
  std::vector<uint8_t> ok(size_t(q.rows));
  robot.is_valid_many(env, q, padding, ok.data());
  for (int64_t r = 0; r < q.rows; ++r)
    if (!ok[r]) return int32_t(r);
  return -1;
}

// Start and goals as plan() and PrmSession::query() plan between (ends_within_limits, into ends);
// false, with `out` saying why, when nothing is to be planned: an end is invalid, or (certified) the
// ends cannot begin or end a proven edge (unprovable_ends). Certified: out.min_step is the give-up
// length the plan's edges use, `min_step` or less where an end is so near contact that edges out of
// it need shorter stretches (unprovable_ends).
bool checked_ends(const RobotModel& robot, const Environment& env, const double* start, const double* goals,
                  int32_t n_goals, double limit_tolerance, float padding, bool certified, double min_step,
                  PlanOutput& out, std::vector<double>& ends) {
  ends = ends_within_limits(robot, start, goals, n_goals, limit_tolerance, &out.limit_clamped);
  out.min_step = min_step;
  out.invalid = first_invalid(robot, env, ends, padding);
  if (out.invalid >= 0) return false;
  if (!certified) return true;
  robot.require_distances(env);
  out.unprovable = unprovable_ends(robot, env, ends.data(), n_goals, padding, min_step, &out.min_step);
  return out.unprovable == 0;
}

}  // namespace

double end_speed(const RobotModel& robot) {
  if (!robot.has_motion_bounds()) return 0.0;  // no reach table: nothing to bound the motion with
  const RobotView& rb = robot.view();
  double fastest = 0;
  for (int32_t i = 0; i < rb.n_spheres; ++i) {
    double v = 0;
    for (int32_t b = 0; b < rb.n_bodies; ++b)
      v += std::fabs(double(rb.body_scale[b])) * double(rb.sphere_reach[int64_t(i) * rb.n_bodies + b]);
    fastest = std::max(fastest, v);
  }
  return fastest;
}

// Certified Link proves a stretch from its two ends' clearances: d_a + d_b - 2 margin > C, C the
// stretch's motion bound, at most end_speed() h for a stretch h long (joint-space distance; twice
// that for a self pair, both of whose spheres move). Out of an end with clearance d, a stretch that
// does not move straight towards contact (d_b >= d_a - that bound) passes once h <= (d - margin) /
// speed, so edges at that end need min_step no longer than that: with a longer one, every edge out
// of it is undecided and the planner would spin until its time limit. Below kMinStepFloor (float32
// joint values are ~5e-7 apart at |q| ~ 6, so shorter stretches are not stretches) the end is
// refused instead. (Self-pair clearances as the certificate measures them, with the certified
// sphere-pair lists, are never below the exact ones used here.)
int32_t unprovable_ends(const RobotModel& robot, const Environment& env, const double* ends, int32_t n_goals,
                        float padding, double min_step, double* step_out) {
  const int32_t dof = robot.dof();
  const int64_t rows = 1 + int64_t(n_goals);
  const double speed = end_speed(robot);
  const double floor = std::min(min_step, kMinStepFloor);
  std::vector<float> env_d(static_cast<size_t>(rows)), self_d(static_cast<size_t>(rows));
  // Clearances only matter below the one at which min_step itself suffices, so they are capped just
  // past it: below the cap they are exact.
  // PERF: exact clearances (nearest-point searches without a bound) were a fixed cost of every
  // certified plan; capped ones end their searches early (callgrind AVX2, panda, capped at 2 margins
  // then: 21 MotionBenchMaker problems as clouds 108.5 M -> 106.1 M instructions).
  const float cap = float(kCertifyMargin + 2.0 * speed * min_step) * 1.01f;
  robot.clearance_many(env, Strided{ends, rows, dof, dof, 1}, padding, env_d.data(), self_d.data(), cap);
  auto step = [&](int64_t r) {  // the longest give-up length with which edges at end r can be proven
    const double e = double(env_d[r]) - kCertifyMargin, p = double(self_d[r]) - kCertifyMargin;
    if (!(speed > 0)) return std::min(e, p) > 0 ? min_step : -1.0;  // no sphere moves
    return std::min(e / speed, p / (2 * speed));
  };
  double need = step(0);
  if (!(need >= floor)) return kUnprovableStart;
  bool any_goal = false;
  for (int64_t r = 1; r < rows; ++r) {
    const double g = step(r);
    if (g >= floor) need = std::min(need, g), any_goal = true;  // a goal too near contact is never reached
  }
  if (!any_goal) return kUnprovableGoals;
  if (step_out != nullptr) *step_out = std::min(min_step, need);
  return 0;
}

const char* unprovable_name(int32_t code) {
  return code == kUnprovableStart ? "start" : code == kUnprovableGoals ? "goals" : "";
}

PlanOutput plan(const RobotModel& robot, const Environment& env, const std::string& name, const double* start,
                const double* goals, int32_t n_goals, const PlannerSettings& s, Interrupt* interrupt) {
  check_problem(s, n_goals);
  const planner::PlannerEntry* entry = planner::find_planner(name);
  if (entry == nullptr)
    throw std::invalid_argument("unknown planner '" + name + "': expected " + planner::planner_names());
  const Deadline deadline(s.time_limit, interrupt);
  PlanOutput out;
  const int32_t dof = robot.dof();
  std::vector<double> ends;
  if (!checked_ends(robot, env, start, goals, n_goals, s.limit_tolerance, s.padding, s.certified, s.min_step, out,
                    ends))
    return out;
  const std::vector<float> lo = robot.float_limits(false), hi = robot.float_limits(true);
  Checker check(robot.view(), env.view(), robot.kernels(), s.padding, s.resolution, lo, hi, out.stats, s.certified,
                out.min_step);
  check.set_deadline(&deadline);
  std::vector<float> q0 = to_float(ends.data(), dof), qg = to_float(ends.data() + dof, size_t(n_goals) * dof);
  check.clamp(q0.data());
  for (int32_t g = 0; g < n_goals; ++g) check.clamp(qg.data() + g * dof);
  const auto t0 = Clock::now();
  const planner::Problem problem{check, lo, hi, q0.data(), qg, s, out.stats, deadline};
  std::vector<float> path = entry->run(problem, s);
  out.stats.planning_time_ns = ns_since(t0);
  planner::Rng rng(s.seed ^ 0xA5A5A5A5ULL);
  finish(check, std::move(path), s, rng, out);
  out.stopped = deadline.stopped();
  return out;
}

PrmSession::PrmSession(const RobotModel& robot, const Environment& env, const PlannerSettings& settings)
    : robot_(robot),
      env_(env),
      settings_(settings),
      lower_(robot.float_limits(false)),
      upper_(robot.float_limits(true)),
      roadmap_(robot.dof()),
      sampler_(settings.sampler, settings.seed, lower_, upper_) {}

int64_t PrmSession::grow(int64_t n_samples, double time_limit, Interrupt* interrupt,
                         Deadline::Stop* stopped) {
  const Deadline deadline(time_limit, interrupt);
  robot_.require_clouds(env_, settings_.padding);
  if (settings_.certified) robot_.require_distances(env_);
  PlannerStats stats;
  Checker check(robot_.view(), env_.view(), robot_.kernels(), settings_.padding, settings_.resolution, lower_, upper_, stats,
                settings_.certified, settings_.min_step);
  check.set_deadline(&deadline);
  const int64_t drawn = roadmap_.grow(check, sampler_, n_samples, settings_.prm_neighbors, deadline);
  if (stopped != nullptr) *stopped = deadline.stopped();
  return drawn;
}

PlanOutput PrmSession::query(const double* start, const double* goals, int32_t n_goals, const PlannerSettings& s,
                             Interrupt* interrupt) {
  check_problem(s, n_goals);
  const Deadline deadline(s.time_limit, interrupt);
  PlanOutput out;
  std::vector<double> ends;
  if (!checked_ends(robot_, env_, start, goals, n_goals, s.limit_tolerance, settings_.padding, settings_.certified,
                    settings_.min_step, out, ends))
    return out;
  // NOTE: the roadmap's edges were checked with the session's padding and resolution; a query
  // uses those too, so every roadmap edge has one meaning.
  Checker check(robot_.view(), env_.view(), robot_.kernels(), settings_.padding, settings_.resolution, lower_, upper_,
                out.stats, settings_.certified, out.min_step);
  check.set_deadline(&deadline);
  const int32_t dof = robot_.dof();
  std::vector<float> q0 = to_float(ends.data(), dof), qg = to_float(ends.data() + dof, size_t(n_goals) * dof);
  check.clamp(q0.data());
  for (int32_t g = 0; g < n_goals; ++g) check.clamp(qg.data() + g * dof);
  PlannerSettings qs = s;
  qs.padding = settings_.padding;
  qs.resolution = settings_.resolution;
  qs.prm_neighbors = settings_.prm_neighbors;
  qs.certified = settings_.certified;
  qs.min_step = out.min_step;
  const auto t0 = Clock::now();
  const planner::Problem problem{check, lower_, upper_, q0.data(), qg, qs, out.stats, deadline};
  std::vector<float> path = planner::prm_query(roadmap_, sampler_, problem, qs);
  out.stats.planning_time_ns = ns_since(t0);
  planner::Rng rng(s.seed ^ 0xA5A5A5A5ULL);
  finish(check, std::move(path), qs, rng, out);
  out.stopped = deadline.stopped();
  return out;
}

}  // namespace simdplan
