"""simdplan.plan: one call from Python into a C++ planner, and the reusable PRM roadmap.

Problem checks happen once, with messages that say what is wrong: the start and every goal must be
(dof,) finite values inside the joint limits and collision-free (``InvalidProblemError`` names the
configuration and what it hits). Shapes and the wrapping of continuous joints to [-pi, pi] are
handled here; then one call into C++ (without the GIL, with the SIMD level active at the call)
moves values within the limit tolerance onto their limits, checks the start and goals and plans.
Only when it moved a value or refused a configuration does Python work out which and why
(Robot.clamp_to_limits, Robot.why_invalid) for the warning or the error.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
import warnings

import numpy as np

from simdplan import _core
from simdplan.collision.environment import Environment
from simdplan.planner.pose_goals import (DEFAULT_IK_SOLUTIONS, IK_ROUNDS, ROUND_ITERATIONS, no_ik_solution,
                                         plan_to_poses, pose_list)
from simdplan.planner.result import PlanContext, PlanResult
from simdplan.planner.settings import PlannerSettings, check_range, to_core, warn_ignored
from simdplan.robots.ik import parse_pose
from simdplan.robots.robot import Robot
from simdplan.validation import as_int, as_number


class InvalidProblemError(ValueError):
    """The start or a goal cannot be planned from/to (outside limits or in collision)."""


class LimitClampWarning(UserWarning):
    """A start or goal value just outside its joint limit was moved onto the limit (limit_tolerance)."""


_FIELDS = frozenset(f.name for f in dataclasses.fields(PlannerSettings))


def validated_settings(planner: str, settings: dict) -> PlannerSettings:
    """Validated settings. The result is shared between calls with equal arguments (callers here
    only read it): validation was 13 of the ~145 us Python spends per plan() call."""
    # NOTE: value types are part of the key, since True == 1 == 1.0 but only some are valid
    key = tuple(sorted((k, type(v), v) for k, v in settings.items()))
    try:
        return _validated_cached(planner, key)
    except TypeError:  # an unhashable value: validate (and report) without the cache
        return _validated(planner, settings)


def _validated(planner: str, settings: dict) -> PlannerSettings:
    unknown = sorted(set(settings) - _FIELDS)
    if unknown:
        raise ValueError(f"unknown planner settings {unknown}; known: {sorted(_FIELDS - {'planner'})}")
    return PlannerSettings(planner=planner, **settings).validated()


@functools.lru_cache(maxsize=256)
def _validated_cached(planner: str, key: tuple) -> PlannerSettings:
    return _validated(planner, {k: v for k, _, v in key})


def problem_arrays(robot, start, goals) -> tuple[np.ndarray, np.ndarray]:
    """(dof,) start and (m, dof) goals of the right shapes, continuous joints wrapped into [-pi, pi].
    Finiteness, the limit tolerance and validity are handled by the call that plans (core_output)."""
    dof = robot.dof
    try:
        start = np.array(start, dtype=np.float64)
        goals = np.array(goals, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("start and goals must be numeric joint values") from None
    if start.shape != (dof,):
        raise ValueError(f"start must have shape ({dof},), got {start.shape}")
    if goals.ndim == 1:
        goals = goals[None, :]
    if goals.ndim != 2 or goals.shape[1] != dof or len(goals) == 0:
        raise ValueError(f"goals must have shape ({dof},) or (m, {dof}) with m >= 1, got {goals.shape}")
    if robot.has_continuous:
        # a continuous joint far beyond +-pi wraps to an arbitrary angle: refused, naming the joint
        robot.check_joint_values(start, "start")
        robot.check_joint_values(goals, "goals")
        both = robot.wrap_continuous(np.concatenate([start[None, :], goals]))
        start, goals = both[0].copy(), both[1:].copy()
    return start, goals


def _clamped(robot, start, goals, limit_tolerance: float, stacklevel: int | None
             ) -> tuple[np.ndarray, np.ndarray, tuple[int, str]]:
    """Start and goals with values within ``limit_tolerance`` of a limit moved onto it, and (how many
    were moved, a note saying which, "" if none); a LimitClampWarning if any, ``stacklevel`` as the
    caller would pass it to warnings.warn (None: no warning)."""
    if limit_tolerance <= 0:
        return start, goals, (0, "")
    both = np.concatenate([start[None, :], goals])
    clamped, moved = robot.clamp_to_limits(both, limit_tolerance)
    if not moved.any():
        return start, goals, (0, "")
    note = (int(moved.sum()), _clamp_note(robot, both, clamped, moved))
    if stacklevel is not None:
        warnings.warn(note[1], LimitClampWarning, stacklevel=stacklevel + 1)
    return clamped[0].copy(), clamped[1:].copy(), note


def core_output(call, robot, env, start, goals, padding: float, limit_tolerance: float, warn: bool = True):
    """``call()``, a core plan or query, which moves start and goal values within the limit tolerance
    onto their limits and checks start and goals before planning; returns its output, the start and
    goals it planned between, and the clamp note (as _clamped). Its refusals are worded here:
    non-finite values (ValueError) and an invalid start or goal (InvalidProblemError naming it and
    what it hits). A LimitClampWarning goes to the caller's caller (unless ``warn`` is False).
    ``goals`` None: the call finds them (pose goals) and returns them as out["goals"]."""
    # PERF: the core refuses non-finite values itself, so finiteness is only tested to word the error
    try:
        out = call()
    except ValueError:
        if not (np.isfinite(start).all() and (goals is None or np.isfinite(goals).all())):
            raise ValueError("start and goals must be finite") from None
        raise
    if goals is None:  # the call found its goals (pose goals)
        goals = out["goals"]
    note = (0, "")
    if out["limit_clamped"]:
        # PERF: Robot.clamp_to_limits (~20 us, most of the Python time of a plan call) runs only to
        # say which values the core moved; it moves the same ones
        start, goals, note = _clamped(robot, start, goals, limit_tolerance, stacklevel=3 if warn else None)
    if out["invalid"] >= 0:
        _raise_invalid(robot, env, int(out["invalid"]), start, goals, padding)
    return out, start, goals, note


def _check_valid(robot, env, start, goals, padding: float, model) -> None:
    """For planners outside the core (OMPL): the core's check of start and goals, worded as above.
    ``model``: the compiled environment snapshot the plan will use (checked against that one, so a
    concurrent change to ``env`` cannot make them disagree)."""
    both = np.concatenate([start[None, :], goals])
    try:
        ok = robot.core.is_valid_many(model, both, padding)
    except ValueError:
        if not np.isfinite(both).all():
            raise ValueError("start and goals must be finite") from None
        raise
    if not ok.all():
        _raise_invalid(robot, env, int(np.flatnonzero(~ok)[0]), start, goals, padding)


def _raise_invalid(robot, env, k: int, start, goals, padding: float):
    """InvalidProblemError for row ``k`` of [start, goal 0, ...], saying what is wrong with it."""
    what = "start" if k == 0 else (f"goal {k - 1}" if len(goals) > 1 else "goal")
    q = start if k == 0 else goals[k - 1]
    # PERF: the full contact report is ~100x a check; it runs only to explain a failure
    problems = robot.why_invalid(q, env, padding)
    shown = "; ".join(str(p) for p in problems[:3]) or "in collision"
    more = f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
    raise InvalidProblemError(f"{what} is invalid: {shown}{more}")


def _clamp_note(robot, before: np.ndarray, after: np.ndarray, moved: np.ndarray) -> str:
    """What clamp_to_limits moved in rows [start, goal 0, ...], e.g. 'start joint j: 3.14159265 -> 3.14159'."""
    names = robot.joint_names
    items = []
    for r, j in zip(*np.nonzero(moved)):
        what = "start" if r == 0 else (f"goal {r - 1}" if len(before) > 2 else "goal")
        items.append(f"{what} {names[j]}: {float(before[r, j])!r} -> {float(after[r, j])!r}")
    shown = "; ".join(items[:4]) + (f" (and {len(items) - 4} more)" if len(items) > 4 else "")
    return f"moved {len(items)} joint value(s) onto their limits (within limit_tolerance): {shown}"


def plan(robot, env, start, goals=None, planner: str = "rrtc", *, goal_pose=None, goal_link: str | None = None,
         goal_mask=None, ik_solutions: int | None = None, **settings) -> PlanResult:
    """Plan a collision-free path from ``start`` to any of ``goals``, or to a pose.

    Pose goals: ``goal_pose`` (one pose, a 4x4 world matrix or (position, quaternion [x, y, z, w]),
    or a list of them) instead of ``goals``: the plan goes to IK solutions of ``goal_link`` (default:
    Robot.ik's) at any of the poses, ``goal_mask`` as Robot.ik's mask, up to ``ik_solutions`` per pose
    (default 1; simdplan.planner.pose_goals: stats["goal_pose_index"], ["goal_configurations"],
    ["ik_time_ns"]). These three apply to pose goals only: given with ``goals`` they are refused
    (ValueError), as a scene file refuses goal_link and goal_mask beside joint goals.

    robot: simdplan.Robot. env: simdplan.Environment or None. start: (dof,). goals: (dof,) or
    (m, dof); the path ends at whichever goal is reached (``stats["goal_index"]``). planner:
    "rrtc" (RRT-Connect), "rrt" or "prm", or "ompl:<Name>" (an OMPL geometric planner with simdplan's
    checks, see simdplan.planner.ompl). settings: fields of PlannerSettings (seed, time_limit,
    max_iterations, range, resolution, sampler, simplify, interpolate, padding, ...).

    Returns a PlanResult; ``success`` is False (with an empty path) when no path was found within
    the budget. Raises InvalidProblemError for an invalid start or goal, ValueError for bad input.
    The path's first and last rows are the given start and goal (continuous joints wrapped); the
    planner works in float32, and every edge was proven collision-free between its ends (certified
    Link, the default: Robot.certify_motion, giving up on stretches shorter than ``min_step``),
    alone or as a piece of a longer edge proven while simplifying (a certificate of that piece alone
    may need a finer ``min_step``; simdplan.check_path retries finer), or with ``link="discrete"``
    passed the discrete Link check at ``resolution`` (an obstacle thinner than its sample gap can be
    stepped over). ``result.stats["link"]`` says which.
    """
    if goal_pose is not None and goals is not None:
        raise ValueError("give goals (configurations) or goal_pose (poses), not both")
    if goal_pose is None and goals is None:
        raise ValueError("plan needs goals (configurations) or goal_pose (a pose or a list of poses)")
    if goal_pose is None:
        given = [k for k, v in (("goal_link", goal_link), ("goal_mask", goal_mask), ("ik_solutions", ik_solutions))
                 if v is not None]
        if given:
            raise ValueError(f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to pose goals "
                             "(goal_pose) only; this plan has joint goals")
    check_types(robot, env)
    s = validated_settings(planner, settings)
    warn_ignored(s, settings)
    check_settings_range(s, robot)
    if goal_pose is not None:
        n = as_int(DEFAULT_IK_SOLUTIONS if ik_solutions is None else ik_solutions, "ik_solutions", 1, 10_000)
        if s.planner.startswith("ompl:"):  # planners outside the core: IK and planning called in turn
            check_pose_start(robot, env, problem_arrays(robot, start, np.zeros((1, robot.dof)))[0], s)
            return plan_to_poses(plan, robot, env, start, pose_list(goal_pose), s, goal_link, goal_mask, n, settings)
    # one snapshot of env for the whole call: point-cloud trees fitted to this robot's radii (built
    # once), nearest-point trees for certified Link
    model = robot.compiled_env(env, s.padding, distances=s.link == "certified")
    if goal_pose is not None:
        return _plan_poses_in_core(robot, env, start, pose_list(goal_pose), s, model, goal_link, goal_mask, n)
    start, goals = problem_arrays(robot, start, goals)
    if s.planner.startswith("ompl:"):
        from simdplan.planner.ompl import plan_ompl, refusal as ompl_refusal

        start, goals, note = _clamped(robot, start, goals, s.limit_tolerance, stacklevel=2)
        _check_valid(robot, env, start, goals, s.padding, model)
        # the core's refusal of ends certified Link cannot prove an edge from or to (planning.cc)
        if s.link == "certified":
            which, step = _core.unprovable_ends(robot.core, model, start, goals, s.padding, s.min_step)
            if which:
                refused = ompl_refusal(robot, s, unprovable_note(which, robot, env, start, goals, s))
                refused.stats["unprovable"] = which
                return with_clamp_note(refused, note)
            if step < s.min_step:  # an end near contact: its edges need shorter stretches (unprovable_ends)
                s = dataclasses.replace(s, min_step=step)
        result = plan_ompl(robot, env, start, goals, s)
        if s.link == "certified":
            result.stats["min_step"] = s.min_step
        return with_clamp_note(result, note)
    core = to_core(s, robot)
    out, start, goals, note = core_output(lambda: _core.plan(robot.core, model, s.planner, start, goals, core),
                                          robot, env, start, goals, s.padding, s.limit_tolerance)
    return with_clamp_note(to_result(out, s, robot, start, goals, env), note)


def _plan_poses_in_core(robot, env, start, poses: list, s: PlannerSettings, model, link, mask,
                        ik_solutions: int) -> PlanResult:
    """plan(goal_pose=...) for the core's planners, with plan's validated settings and compiled
    environment: IK and planning in one core call, the rounds of simdplan.planner.pose_goals (whose
    plan_to_poses is the reference it is tested against)."""
    t0 = time.perf_counter_ns()
    start, request, targets = pose_parts(robot, start, poses, s, link, mask, ik_solutions)
    core = to_core(s, robot)
    result = pose_result(lambda: _core.plan_poses(robot.core, model, s.planner, start, request, targets, IK_ROUNDS,
                                                  ROUND_ITERATIONS, core), s, robot, env, start, len(targets))
    result.stats["total_time_ns"] = time.perf_counter_ns() - t0
    return result


def pose_parts(robot, start, poses: list, s: PlannerSettings, link, mask, ik_solutions: int) -> tuple:
    """(start (dof,), the core's IK request, the target poses) of a pose-goal plan with validated
    settings ``s``."""
    start = problem_arrays(robot, start, np.zeros((1, robot.dof)))[0]
    _, request = robot.ik_request(link, n_solutions=ik_solutions, mask=mask, padding=s.padding)
    return start, request, [parse_pose(p) for p in poses]


def pose_result(call, s: PlannerSettings, robot, env, start, n_poses: int, warn: bool = True) -> PlanResult:
    """The PlanResult of ``call()``, a core pose-goal plan (_core.plan_poses, or a batch's pose task)
    with validated settings ``s``; refusals worded as core_output words them."""
    out, start, goals, note = core_output(call, robot, env, start, None, s.padding, s.limit_tolerance, warn)
    if out["planned_rounds"] == 0:
        # the core checks the start when it plans, and it did not (no IK solution): an invalid start
        # is refused all the same, as it is when a solution was found
        check_pose_start(robot, env, start, s)
        result = no_ik_solution(robot, s.planner, n_poses, out["stopped"])
    else:
        result = with_clamp_note(to_result(out, s, robot, start, goals, env), note)
    st = result.stats
    st["planning_time_ns"] = int(out["planning_time_ns"])  # every round's
    st["goal_configurations"] = goals
    st["goal_pose_index"] = int(out["goal_pose"][st["goal_index"]]) if result.success else -1
    st["ik_time_ns"] = int(out["ik_time_ns"])
    st["ik_solutions"] = len(goals)
    return result


def check_pose_start(robot, env, start, s: PlannerSettings) -> None:
    """InvalidProblemError for an invalid ``start`` (shaped and wrapped by problem_arrays) of a
    pose-goal plan with validated settings ``s``, after moving values within the limit tolerance
    onto their limits as the core does."""
    no_goals = np.zeros((0, robot.dof))
    start, _, _ = _clamped(robot, start, no_goals, s.limit_tolerance, None)
    if not np.isfinite(start).all():
        raise ValueError("start and goals must be finite")
    if not robot.is_valid(start, env, s.padding):
        _raise_invalid(robot, env, 0, start, no_goals, s.padding)


def check_types(robot, env) -> None:
    """TypeError unless ``robot`` is a Robot and ``env`` an Environment or None; ValueError for a
    robot without an active joint."""
    if not isinstance(robot, Robot):
        raise TypeError(f"robot must be a simdplan.Robot, got {type(robot).__name__}")
    if robot.dof == 0:
        raise ValueError(f"robot {robot.name!r} has no active joint: there is nothing to plan")
    if env is not None and not isinstance(env, Environment):
        raise TypeError(f"env must be a simdplan.Environment or None, got {type(env).__name__}")


def check_settings_range(s: PlannerSettings, robot) -> None:
    """The range / resolution pair actually used (robot defaults filled in) must advance a tree."""
    if s.range is None and s.resolution is None:
        return  # the robot's defaults are derived to satisfy it
    check_range(robot.default_range if s.range is None else s.range,
                robot.resolution if s.resolution is None else s.resolution)


def with_clamp_note(result: PlanResult, clamp: tuple[int, str]) -> PlanResult:
    """The result with the limit-clamp note (if any) in its message and stats["limit_clamped"]."""
    result.stats["limit_clamped"], note = clamp
    if note:
        result.message = f"{note}; {result.message}" if result.message else note
    return result


def to_result(out: dict, s: PlannerSettings, robot, start, goals, env) -> PlanResult:
    """The PlanResult of a core plan's output ``out`` with validated settings ``s``: the path begins
    and ends exactly at ``start`` and the goal reached; failure and partial work said in ``message``."""
    path = np.asarray(out["path"])
    stats = dict(out["stats"])
    stats["isa"] = _core.isa()
    stats["link"] = s.link  # "discrete" or "certified" (edges_proven, ... count the certificates)
    stats["stopped"] = out["stopped"]  # "" or "time_limit": the call's deadline cut it short
    notes = []
    if out["success"]:
        # NOTE: the planner checked the float32 roundings of start and goal (<= 1 ulp away); the
        # caller gets back exactly the configurations it gave.
        path[0] = start
        path[-1] = goals[stats["goal_index"]]
        if out["stopped"] and s.simplify:
            notes.append(f"simplification stopped at the time limit ({s.time_limit:g} s): the path is "
                         "simplified only in part")
        if s.interpolate is not None and out["interpolation"] != "done":
            notes.append(INTERPOLATION_NOTES[out["interpolation"]])
    elif out.get("unprovable"):
        path = np.zeros((0, robot.dof))
        stats["unprovable"] = out["unprovable"]
        notes.append(unprovable_note(out["unprovable"], robot, env, start, goals, s))
    else:
        path = np.zeros((0, robot.dof))
        notes.append(f"no path found within {stats['iterations']} iterations"
                     + (f" / {s.time_limit:g} s" if s.time_limit > 0 else "") + undecided_note(stats, s))
    if s.link != "certified":
        stats.pop("min_step", None)  # discrete Link has no give-up length
    message = "; ".join(notes)
    stats["waypoints"] = len(path)
    return PlanResult(bool(out["success"]), path, stats, s.planner, robot.joint_names, message,
                      context=PlanContext(robot, env, s.link, s.padding, s.resolution))


def unprovable_note(which: str, robot, env, start, goals, s: PlannerSettings) -> str:
    """Why a certified plan was refused at once: the start, or every goal, is so near contact that
    edges out of it would need stretches shorter than certified Link ever tries
    (_core.unprovable_ends: within margin + min(min_step, floor) x the robot's speed of an obstacle)."""
    floor = min(s.min_step, _core.min_step_floor)
    reach_mm = (_core.certify_margin + floor * _core.certify_end_speed(robot.core)) * 1e3
    if which == "start":
        what, gap = "out of the start: its clearance", robot.clearance(start, env, s.padding)
    else:
        what, gap = "into any goal: their largest clearance", max(robot.clearance_many(goals, env, s.padding))
    return (f"certified Link cannot prove any motion {what} ({gap * 1e3:.4f} mm) is within {reach_mm:.4f} mm of "
            f"contact (the certificate's margin, {_core.certify_margin * 1e3:g} mm, plus how far this robot's "
            f"spheres can move in its shortest stretch, {floor:g} rad; twice that from another link); plan with "
            'link="discrete", or from and to configurations farther from obstacles')


def undecided_note(stats: dict, s: PlannerSettings) -> str:
    """What a failed certified plan adds to its message when edges were refused as undecided."""
    n = stats.get("edges_undecided", 0)
    if s.link != "certified" or not n:
        return ""
    return (f"; {n} edge(s) could not be proven free (undecided: stretches shorter than min_step "
            f"{stats.get('min_step', s.min_step):g} near contact); a smaller min_step or link=\"discrete\" may find "
            "a path")


# what a PlanResult message says when interpolation was asked for and not done (the CLI shows it)
INTERPOLATION_NOTES = {
    "collision": "interpolation refused: a finer edge check found a collision; path left at its waypoints",
    "too_many": "interpolation refused: it would make more than 1,000,000 waypoints; path left at its "
                "waypoints (lower interpolate)",
    "time_limit": "interpolation stopped at the time limit; path left at its waypoints",
}


class Roadmap:
    """A PRM roadmap for one robot and environment, reused across queries.

    >>> rm = Roadmap(robot, env, prm_neighbors=10, seed=1)
    >>> rm.grow(2000)                  # optional: precompute; queries grow it further as needed
    >>> result = rm.query(start, goal)

    The roadmap's edges are checked with the padding and resolution given here; the environment
    must not change while the roadmap is in use (build a new one after editing it). Calls from
    several threads are safe: they take turns on the roadmap.
    """

    def __init__(self, robot, env, **settings) -> None:
        check_types(robot, env)
        self.robot = robot
        self.env = env
        self.settings = dataclasses.replace(validated_settings("prm", settings))  # the user's own copy
        warn_ignored(self.settings, settings)
        check_settings_range(self.settings, robot)
        self._env_model = robot.compiled_env(env, self.settings.padding, distances=self.settings.link == "certified")
        self._session = _core.PrmSession(robot.core, self._env_model, to_core(self.settings, robot))
        # the roadmap grows during grow() and query(): calls from several threads take turns
        self._lock = threading.Lock()

    def grow(self, n_samples: int, time_limit: float = 0.0) -> int:
        """Draw up to ``n_samples`` samples (valid ones become vertices) within ``time_limit`` seconds
        (0: none); returns how many were drawn. Ctrl-C stops it (KeyboardInterrupt) and keeps the
        vertices added so far."""
        n = as_int(n_samples, "n_samples", 0, 10**12)
        limit = as_number(time_limit, "time_limit", 0.0, allow_zero=True)
        with self._lock:
            return self._session.grow(n, limit)

    @property
    def vertices(self) -> int:
        return self._session.vertices

    @property
    def edges(self) -> int:
        return self._session.edges

    def query(self, start, goals, **settings) -> PlanResult:
        """Shortest roadmap path (grown as needed within max_iterations / time_limit), simplified."""
        if self.env is not None and self.env.compiled() is not self._env_model:
            raise RuntimeError("the environment changed after this roadmap was built; build a new Roadmap")
        base = {k: v for k, v in dataclasses.asdict(self.settings).items() if k != "planner"}
        s = validated_settings("prm", {**base, **settings})
        warn_ignored(s, settings)
        start, goals = problem_arrays(self.robot, start, goals)
        core = to_core(s, self.robot)

        def query() -> dict:
            with self._lock:
                return self._session.query(self.robot.core, start, goals, core)

        out, start, goals, note = core_output(query, self.robot, self.env, start, goals, self.settings.padding,
                                              s.limit_tolerance)
        return with_clamp_note(to_result(out, s, self.robot, start, goals, self.env), note)
