"""Planning to a pose: goal configurations from inverse kinematics, then the planner's goal forest.

``simdplan.plan(robot, env, start, goal_pose=...)`` (one pose or a list) asks ``robot.ik`` for up to
``ik_solutions`` distinct collision-free solutions of every pose (with the plan's padding) and plans
to all of them at once: RRT-Connect grows its goal tree from every solution (a goal forest), RRT
and PRM take any of them. If no path is found and time is left, it asks for twice as many new
solutions (other restarts), adds them to the forest and plans again, IK_ROUNDS times at most. Round
r plans with at most ROUND_ITERATIONS * 4^r iterations (the last round: max_iterations), so a
solution the start cannot reach (another arm posture behind an obstacle, say) does not hold the
whole time limit. Without that budget, 5 of 40 generated problems each of the ur5 and the mobile
manipulator failed after 1 s on their first solution while their joint goals took 0.07-7 ms; with
4000 every generated problem of five robots is solved. 1000 restarts hard problems that the first
solution would have solved (panda mean planning + IK 5.1 ms against 3.0), 16000 waits too long on
unreachable ones (ur5 mean 17.6 ms against 4.6).
PERF: ik_solutions defaults to 1: on the 699 MotionBenchMaker panda problems (hand poses of the
goals) every plan succeeds from the first solutions alike, and more solutions cost more IK than
they save in planning: median planning + IK 1.49-1.54x the joint-goal planning with 1 solution per
pose, 1.75x with 2, 2.39x with 4 (benchmarks/bench_ik.py). The result says which pose and which
solution were reached (``stats["goal_pose_index"]``, ``stats["goal_index"]`` into
``stats["goal_configurations"]``); the IK time is part of the call's time and reported apart
(``stats["ik_time_ns"]``: timed in the core as ``planning_time_ns`` is; for OMPL's planners, around
Robot.ik_many); ``stats["planning_time_ns"]`` sums the planning of every round.

For the core's planners (rrtc, rrt, prm) the core runs these rounds itself, IK and planning in one
call (planner/pose_planning.hh, from simdplan.plan); ``plan_to_poses`` below runs them from Python,
for OMPL's planners, and is the reference the core's rounds are tested against (same seeds, same
solutions, same path).
PERF: in one call, the median MotionBenchMaker hand pose's IK takes 13.5-14.4 us instead of
29.6-30.3 us: the Python between the two calls, and the caches it cooled, cost as much as the solve.
"""

from __future__ import annotations

import time

import numpy as np

from simdplan.planner.result import PlanResult
from simdplan.robots.ik import DEFAULT_MAX_ATTEMPTS

# IK rounds at most: a plan that finds no path to the first solutions asks for new ones this often
IK_ROUNDS = 5
# planner iterations of the first round; each later round may take 4x more, the last one all of
# max_iterations (see the module docstring)
ROUND_ITERATIONS = 4000
# solutions asked of IK per pose in the first round, by default (see the module docstring)
DEFAULT_IK_SOLUTIONS = 1
# round r's IK seed: the plan's seed + ROUND_SEED_STEP * r, so later rounds try other restarts (the
# core's rounds use the same step: planner/pose_planning.cc, kRoundSeedStep)
ROUND_SEED_STEP = 7919


def pose_list(goal_pose) -> list:
    """One pose or a list of poses (each a 4x4 matrix or (position, quaternion)) as a list."""
    if isinstance(goal_pose, np.ndarray) and goal_pose.ndim == 3:
        return list(goal_pose)
    if isinstance(goal_pose, np.ndarray) or (isinstance(goal_pose, (tuple, list)) and len(goal_pose) == 2
                                             and np.ndim(goal_pose[1]) == 1 and len(goal_pose[1]) == 4):
        return [goal_pose]
    if isinstance(goal_pose, (tuple, list)) and len(goal_pose) > 0:
        return list(goal_pose)
    raise ValueError("goal_pose must be a pose (4x4, or (position, quaternion [x, y, z, w])) or a non-empty "
                     "list of them")


def plan_to_poses(plan, robot, env, start, poses: list, s, link, mask, ik_solutions: int, settings: dict):
    """``plan`` (simdplan.plan) to IK solutions of ``poses`` with the caller's ``settings`` (a dict,
    as plan takes them) and their validated PlannerSettings ``s``; see the module docstring."""
    t0 = time.perf_counter()
    limit, seed, padding, planner = s.time_limit, s.seed, s.padding, s.planner
    ik_ns, asked, plan_ns = 0, 0, 0
    result = None
    goals, owner = [], []
    for round_ in range(IK_ROUNDS):
        left = None if limit <= 0 else limit - (time.perf_counter() - t0)
        if left is not None and left <= 0 and result is not None:
            break
        t_ik = time.perf_counter_ns()
        # every pose in one core call (ik_many shares the lanes among them), half the time left for IK;
        # restarts capped as the core's rounds cap them (Robot.ik_request), time limit or not
        opts = dict(n_solutions=ik_solutions << round_, seed=seed + ROUND_SEED_STEP * round_, mask=mask,
                    padding=padding, time_limit=None if left is None else max(left / 2, 1e-4),
                    max_attempts=DEFAULT_MAX_ATTEMPTS)
        found = robot.ik_many(poses, link, env, **opts)
        for k, res in enumerate(found):
            goals.extend(res.solutions)
            owner.extend([k] * len(res.solutions))
        ik_ns += time.perf_counter_ns() - t_ik
        asked = len(goals)
        if not goals:
            continue
        left = None if limit <= 0 else max(limit - (time.perf_counter() - t0), 1e-3)
        opts = dict(settings, time_limit=0.0 if left is None else left)
        if round_ + 1 < IK_ROUNDS:
            opts["max_iterations"] = min(s.max_iterations, ROUND_ITERATIONS << (2 * round_))
        goal_rows = np.array(goals)
        result = plan(robot, env, start, goal_rows, planner, **opts)
        plan_ns += int(result.stats.get("planning_time_ns", 0))
        result.stats["planning_time_ns"] = plan_ns  # every round's
        result.stats["goal_configurations"] = goal_rows
        result.stats["goal_pose_index"] = owner[result.stats["goal_index"]] if result.success else -1
        if result.success or result.stats.get("unprovable") == "start":  # a refused start stays refused
            break
    if result is None:
        result = no_ik_solution(robot, planner, len(poses), "time_limit" if limit > 0 and
                                time.perf_counter() - t0 >= limit else "")
    result.stats["ik_time_ns"] = ik_ns
    result.stats["ik_solutions"] = asked
    result.stats["total_time_ns"] = int((time.perf_counter() - t0) * 1e9)
    return result


def no_ik_solution(robot, planner: str, n_poses: int, stopped: str):
    """The failed PlanResult of a pose goal without any collision-free IK solution."""
    return PlanResult(False, np.zeros((0, robot.dof)), {"goal_pose_index": -1, "goal_configurations":
                      np.zeros((0, robot.dof)), "stopped": stopped, "goal_index": -1}, planner, robot.joint_names,
                      f"no collision-free IK solution for any of the {n_poses} goal pose(s)")
