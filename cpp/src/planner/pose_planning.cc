#include "planner/pose_planning.hh"

#include <algorithm>
#include <chrono>

namespace simdplan {

namespace {
using Clock = std::chrono::steady_clock;
// a round's IK seed: planning.settings.seed + kRoundSeedStep * round, so later rounds try other restarts
constexpr uint64_t kRoundSeedStep = 7919;
// the shortest IK and planning time limits a round is given (s): a round always gets to try
constexpr double kMinIkSeconds = 1e-4, kMinPlanSeconds = 1e-3;
}  // namespace

PosePlanOutput plan_to_poses(const RobotModel& robot, const Environment& env, const std::string& planner,
                             const double* start, IkRequest request,
                             const std::vector<std::array<float, 12>>& targets, int32_t rounds,
                             int64_t round_iterations, const planner::PlannerSettings& settings,
                             Interrupt* interrupt) {
  PosePlanOutput out;
  const auto t0 = Clock::now();
  const bool limited = settings.time_limit > 0;
  const int32_t first = request.n_solutions;
  auto left = [&] { return settings.time_limit - std::chrono::duration<double>(Clock::now() - t0).count(); };
  for (int32_t round = 0; round < rounds; ++round) {
    if (limited && left() <= 0 && out.planned_rounds > 0) break;
    const auto t_ik = Clock::now();
    request.n_solutions = first << round;
    const Deadline ik_deadline(limited ? std::max(left() / 2, kMinIkSeconds) : 0.0, interrupt);
    const std::vector<IkOutput> found =
        solve_ik(robot, env, request, settings.seed + kRoundSeedStep * uint64_t(round), targets, ik_deadline);
    for (size_t p = 0; p < found.size(); ++p) {
      out.goals.insert(out.goals.end(), found[p].solutions.begin(), found[p].solutions.end());
      out.goal_pose.insert(out.goal_pose.end(), found[p].pos_err.size(), int32_t(p));
    }
    out.ik_ns += std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t_ik).count();
    out.stopped = ik_deadline.stopped();
    if (out.stopped == Deadline::Stop::interrupted) break;
    if (out.goal_pose.empty()) continue;
    planner::PlannerSettings s = settings;
    s.time_limit = limited ? std::max(left(), kMinPlanSeconds) : 0.0;
    if (round + 1 < rounds && 2 * round < 62)
      s.max_iterations = std::min(settings.max_iterations, round_iterations << (2 * round));
    out.plan = plan(robot, env, planner, start, out.goals.data(), int32_t(out.goal_pose.size()), s, interrupt);
    ++out.planned_rounds;
    out.planning_ns += out.plan.stats.planning_time_ns;
    out.stopped = out.plan.stopped;
    // a refused start stays refused in every round (goals that certified Link cannot prove may
    // not: new solutions may lie farther from contact)
    if (out.plan.success || out.plan.invalid >= 0 || out.plan.unprovable == kUnprovableStart ||
        out.stopped == Deadline::Stop::interrupted)
      break;
  }
  if (out.planned_rounds == 0) out.plan.stopped = out.stopped;  // no plan: it reports why IK stopped
  return out;
}

}  // namespace simdplan
