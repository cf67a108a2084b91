// planning.hh: one call per plan: float conversion of the problem, the planner, simplification,
// timing, and a persistent PRM roadmap for repeated queries.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "collision/environment.hh"
#include "kin/robot_model.hh"
#include "simdplan/deadline.hh"
#include "simdplan/planner/registry.hh"
#include "simdplan/planner/simplify.hh"

namespace simdplan {

constexpr int32_t kUnprovableStart = 1, kUnprovableGoals = 2;

struct PlanOutput {
  bool success = false;
  // >= 0: row `invalid` of [start, goal 0, goal 1, ...] is outside the limits or in collision, and
  // nothing was planned (the caller explains it, e.g. Robot.why_invalid)
  int32_t invalid = -1;
  int32_t limit_clamped = 0;  // start and goal values moved onto a limit (settings.limit_tolerance)
  // Certified Link: unprovable_ends' code when the start, or every goal, is so near contact that no
  // edge out of it (into them) can be proven; nothing was planned. 0 otherwise.
  int32_t unprovable = 0;
  // Certified Link: the give-up length its edges used (settings.min_step, or less where an end is
  // near contact: unprovable_ends)
  double min_step = 0;
  std::vector<double> path;          // rows of dof, start .. goal (after simplification)
  std::vector<double> initial_path;  // as the planner found it
  // interpolation's outcome when asked for (Simplifier::interpolate); `done` also when not asked
  planner::Simplifier::Interpolation interpolation = planner::Simplifier::Interpolation::done;
  // why the call ended early (time limit: the path, if any, is as simplified as time allowed)
  Deadline::Stop stopped = Deadline::Stop::none;
  planner::PlannerStats stats;
};

// start: dof values; goals: n_goals x dof, finite (else std::domain_error), continuous joints
// wrapped into [-pi, pi]. Values within settings.limit_tolerance outside a limit are moved onto it
// (PlanOutput::limit_clamped counts them), then an invalid start or goal is reported in
// PlanOutput::invalid. planner: a name in planner::kPlanners.
// settings.time_limit bounds the whole call (planning, simplification, interpolation); interrupt
// (optional) is polled as well, e.g. for Ctrl-C.
PlanOutput plan(const RobotModel& robot, const Environment& env, const std::string& planner, const double* start,
                const double* goals, int32_t n_goals, const planner::PlannerSettings& settings,
                Interrupt* interrupt = nullptr);

// Certified Link never gives up on stretches longer than this (joint-space distance) for an end near
// contact; an end that would need shorter ones is refused (unprovable_ends).
constexpr double kMinStepFloor = 1e-6;
// Metres a sphere centre moves at most per unit of the largest joint motion (the certificate's
// per-sphere bound sum_b |scale_b dq_b| reach_b with every |dq| = 1): the speed unprovable_ends uses.
// 0 for a model built without reach tables.
double end_speed(const RobotModel& robot);
// Certified Link: kUnprovableStart when the start (row 0 of ends, n_goals + 1 rows of dof values),
// kUnprovableGoals when every goal, is so near contact that edges out of it would need stretches
// shorter than min(min_step, kMinStepFloor) (within kCertifyMargin + that x end_speed of an
// obstacle, twice that of another link); 0 otherwise, with *step_out (if given) the give-up length
// edges at these ends need: min_step, or less for an end nearer contact. plan() and
// PrmSession::query() refuse unprovable problems at once and plan with *step_out.
int32_t unprovable_ends(const RobotModel& robot, const Environment& env, const double* ends, int32_t n_goals,
                        float padding, double min_step, double* step_out = nullptr);
// "start", "goals" or "" for the codes above
const char* unprovable_name(int32_t code);

// A PRM roadmap bound to one robot and environment, grown across queries.
class PrmSession {
 public:
  PrmSession(const RobotModel& robot, const Environment& env, const planner::PlannerSettings& settings);
  PlanOutput query(const double* start, const double* goals, int32_t n_goals, const planner::PlannerSettings& s,
                   Interrupt* interrupt = nullptr);
  // returns samples drawn; *stopped says whether the deadline or the interrupt cut it short
  int64_t grow(int64_t n_samples, double time_limit, Interrupt* interrupt = nullptr,
               Deadline::Stop* stopped = nullptr);
  int32_t vertices() const { return roadmap_.size(); }
  int64_t edges() const { return roadmap_.edges(); }

 private:
  const RobotModel& robot_;
  const Environment& env_;
  planner::PlannerSettings settings_;
  std::vector<float> lower_, upper_;  // float limits, rounded inward
  planner::Roadmap roadmap_;
  planner::ConfigSampler sampler_;
};

}  // namespace simdplan
