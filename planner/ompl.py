"""simdplan.planner.ompl: OMPL's geometric planners driven by simdplan's collision checks.

``simdplan.plan(robot, env, start, goals, planner="ompl:RRTstar")`` (or any planner class of
``ompl.geometric``: "ompl:BITstar", "ompl:PRMstar", ...) builds an OMPL setup for the robot's joint
space (a RealVectorStateSpace bounded by the joint limits; continuous joints are treated as
intervals [-pi, pi], not as circles), installs simdplan's Clear(q) as the state validity checker
and simdplan's Link as the motion validator (certified by default, or discrete at ``resolution``
with ``link="discrete"``), solves, optionally simplifies with OMPL's PathSimplifier, and returns a
simdplan PlanResult.

Requires the ``ompl`` wheel from PyPI (``pip install ompl``). Settings used: time_limit (seconds,
must be > 0: OMPL planners stop on time), range and goal_bias (where the planner has them; range
None means OMPL's own default, a fifth of the joint space's diagonal, not the robot's
default_range), simplify, padding, resolution, link, min_step, seed. OMPL's random seed is
process-global and OMPL accepts it only before its first random generator is made, so ``seed``
takes effect on the first OMPL plan of a process only; later plans are not reproducible. Other
settings are simdplan's own planners'.

Goals: RRT and RRTstar are given a goal region that, like simdplan's RRT, is reached from any tree
node with a goal within ``range`` and a free motion to it (OMPL's path ends at that node and the
goal is appended; OMPL's cost of the path omits that last edge). Other planners get the goals as
OMPL GoalStates; InformedRRTstar and SORRTstar cannot take that region (their informed sampling
needs the path's cost to end at a goal) and still often miss the table scenes within 1 s. AORRTC is refused with more than one goal: OMPL's
AORRTC can then loop forever in C++, ignoring the time limit.

Stopping: the solve runs under a C++ timed termination condition (OMPL may evaluate it on helper
threads, which must never wait for Python's GIL) and returns within the time limit plus one
planner iteration. PRM and PRMstar add every goal to their roadmap before their helper thread
starts (that thread would otherwise deadlock against the GIL). On the main thread, with Python's
default SIGINT handler in place, Ctrl-C ends the solve at the next collision check and raises
KeyboardInterrupt once OMPL has returned (a Ctrl-C during OMPL's path simplification, which
cannot be stopped, takes effect when it ends).

Every call into simdplan crosses from OMPL's C++ into Python and back (about 12 us per motion
check, most of it the crossing), so these planners check far fewer configurations per second than
simdplan's C++ planners; they are here for OMPL's algorithms (asymptotically optimal planners, lazy
variants), not for speed.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time

import numpy as np

from simdplan.planner.result import PlanContext, PlanResult, path_length

PREFIX = "ompl:"
_SEEDED = False


def _modules():
    try:
        from ompl import base as ob
        from ompl import geometric as og
        from ompl import util as ou
    except ImportError as exc:  # pragma: no cover - exercised only without the wheel
        raise ImportError("OMPL planners need the ompl package: pip install ompl") from exc
    return ob, og, ou


def available() -> bool:
    """True if the ompl package imports."""
    try:
        _modules()
    except ImportError:
        return False
    return True


def planners() -> list[str]:
    """The OMPL geometric planners this adapter can run, as "ompl:<Name>"."""
    ob, og, _ = _modules()
    out = []
    for name in dir(og):
        cls = getattr(og, name)
        if isinstance(cls, type) and issubclass(cls, ob.Planner) and cls is not ob.Planner:
            out.append(PREFIX + name)
    return sorted(out)


# Planners that OMPL cannot run safely for some problems, with the reason given to the caller.
_SINGLE_GOAL_ONLY = {
    # AOXRRTConnect::findNeighbour walks its neighbour list past the end when the goal tree has several
    # roots: it spins in C++ without checking the time limit (seen with 3 goals on panda_table)
    "AORRTC": "OMPL's AORRTC can loop forever, ignoring the time limit, when the goal tree has several roots",
}


# Single-tree planners: they reach a goal only by growing a node onto it, i.e. by sampling the goal
# (goal_bias) while the tree's nearest node to it has a free straight line to it; once that line is
# blocked, every goal sample retries it. simdplan's RRT also tries, from each new node, every goal
# within `range`. These planners get that test as their goal region (_reachable_goals).
# Not InformedRRTstar and SORRTstar: their informed sampling takes the path's cost as ending at a
# goal, but with this region OMPL's cost omits the last edge and can fall below the start-goal
# distance; SORRTstar's ordered sampler then spun in C++ for over a minute (ur5_table, seed 0).
_CONNECT_GOALS_IN_RANGE = frozenset({"RRT", "RRTstar"})


def _reachable_goals(ob, si, goals: np.ndarray, motion_free):
    """A goal region for OMPL satisfied by a state from which one of ``goals`` (m, dof) within
    ``reach`` (joint-space distance; set it before solving, normally to the planner's range) is
    connected by a free motion; it samples the goals in turn.

    OMPL then ends its path at that state: the caller appends the goal (connecting_goal). OMPL's
    cost of such a path omits that last edge (at most ``reach`` long); the path's cost that
    simdplan reports includes it."""

    class ReachableGoals(ob.GoalSampleableRegion):
        def __init__(self):
            super().__init__(si)
            self.next_sample = 0
            self.reach = 0.0
            self.known: dict[bytes, int] = {}  # OMPL asks again for the same state (costs, pruning)

        def maxSampleCount(self) -> int:
            return len(goals)

        def sampleGoal(self, state) -> None:
            q = goals[self.next_sample]
            self.next_sample = (self.next_sample + 1) % len(goals)
            for j, v in enumerate(q):
                state[j] = float(v)

        def distanceGoal(self, state) -> float:
            # called for every new tree node: the common case (no goal within reach) stays cheap
            q = _values(state, goals.shape[1])
            gaps = np.sqrt(((goals - q) ** 2).sum(axis=1))
            nearest = float(gaps.min())
            if nearest > self.reach:
                return nearest
            return 0.0 if self.connecting_goal(q, gaps) >= 0 else nearest

        def connecting_goal(self, q: np.ndarray, gaps: np.ndarray | None = None) -> int:
            """Index of the nearest goal within reach that a free motion from q reaches, or -1."""
            key = q.tobytes()
            if key not in self.known:
                if gaps is None:
                    gaps = np.sqrt(((goals - q) ** 2).sum(axis=1))
                self.known[key] = next((int(k) for k in np.argsort(gaps, kind="stable")
                                        if gaps[k] <= self.reach and motion_free(q, goals[k])), -1)
            return self.known[key]

    return ReachableGoals()


def _planner_class(name: str):
    ob, og, _ = _modules()
    short = name[len(PREFIX):]
    cls = getattr(og, short, None)
    if not (isinstance(cls, type) and issubclass(cls, ob.Planner)):
        raise ValueError(f"unknown OMPL planner {short!r}; available: {', '.join(planners())}")
    return cls


class _Counters:
    def __init__(self) -> None:
        self.states = 0
        self.motions = 0
        self.motion_samples = 0
        self.proven = self.undecided = self.certificate_samples = 0  # certified Link's, as the core counts them
        self.motion_free = None  # (a, b) float64 arrays -> bool, counted like OMPL's own motion checks


def _values(state, dof: int) -> np.ndarray:
    return np.fromiter((state[i] for i in range(dof)), dtype=np.float64, count=dof)


def make_setup(robot, env, padding: float = 0.0, link: str = "certified", resolution: float | None = None,
               min_step: float = 1e-3):
    """An ``ompl.geometric.SimpleSetup`` for ``robot`` in ``env`` with simdplan's validity checker
    and motion validator installed (see the module docstring). Returns (setup, counters): the
    counters' ``states``, ``motions`` and ``motion_samples`` count the checks made through it."""
    ob, og, _ = _modules()
    dof = robot.dof
    space = ob.RealVectorStateSpace(dof)
    bounds = ob.RealVectorBounds(dof)
    for j, (lo, hi) in enumerate(zip(robot.lower, robot.upper)):
        bounds.setLow(j, float(lo))
        bounds.setHigh(j, float(hi))
    space.setBounds(bounds)
    si = ob.SpaceInformation(space)
    model = robot.compiled_env(env, padding, distances=link == "certified")
    core = robot.core
    res = float(robot.resolution if resolution is None else resolution)
    counters = _Counters()

    def valid(state) -> bool:
        counters.states += 1
        return bool(core.is_valid(model, _values(state, dof), padding))

    def motion_free(a: np.ndarray, b: np.ndarray) -> bool:
        counters.motions += 1
        if link == "certified":
            status, samples, _t = core.certify_motion(model, a, b, padding, min_step)
            counters.motion_samples += samples
            counters.certificate_samples += samples
            counters.proven += status == 0
            counters.undecided += status == 2
            return status == 0
        counters.motion_samples += core.motion_samples(a, b, res) + 1
        return bool(core.is_motion_valid(model, a, b, res, padding))

    counters.motion_free = motion_free

    class Motion(ob.MotionValidator):
        # NOTE: OMPL asks for the two-state form in nearly every planner; the three-state form (last
        # valid state) gets the same verdict and, on failure, the start as its last valid state.
        def checkMotion(self, s1, s2, *last):
            ok = motion_free(_values(s1, dof), _values(s2, dof))
            if not ok and last:
                # NOTE: copied by value: a reference to `si` here would make a cycle through C++ that
                # Python's collector cannot see (OMPL's objects would never be freed)
                pair = last[0]
                for j in range(dof):
                    pair.first[j] = s1[j]
                pair.second = 0.0
            return ok

    si.setStateValidityChecker(valid)
    motion = Motion(si)
    si.setMotionValidator(motion)
    si.setup()
    setup = og.SimpleSetup(si)
    setup._simdplan_keep = (valid, motion, model)  # the callbacks must outlive the setup
    return setup, counters


def plan_ompl(robot, env, start: np.ndarray, goals: np.ndarray, settings) -> PlanResult:
    """Solve with the OMPL planner ``settings.planner`` ("ompl:<Name>"); start (dof,) and goals
    (m, dof) already validated by simdplan.plan."""
    global _SEEDED
    _, _, ou = _modules()
    cls = _planner_class(settings.planner)
    if not settings.time_limit > 0:
        raise ValueError("OMPL planners stop on time: give time_limit > 0 seconds")
    short = settings.planner[len(PREFIX):]
    if short in _SINGLE_GOAL_ONLY and len(goals) > 1:
        raise ValueError(f"{settings.planner} takes one goal, got {len(goals)}: {_SINGLE_GOAL_ONLY[short]}; "
                         f"plan to each goal separately or use another planner (e.g. ompl:RRTConnect)")
    level = ou.getLogLevel()
    if not _SEEDED:
        ou.setLogLevel(ou.LOG_NONE)  # OMPL logs an error when its generators already started
        ou.RNG.setSeed(int(settings.seed) % (2**31 - 1) + 1)
        _SEEDED = True
    ou.setLogLevel(ou.LOG_WARN)  # OMPL's progress messages, for this call only
    try:
        return _solve(robot, env, start, goals, settings, cls)
    finally:
        ou.setLogLevel(level)


def _solve(robot, env, start, goals, settings, cls) -> PlanResult:
    ob, og, _ = _modules()
    setup, counters = make_setup(robot, env, settings.padding, settings.link, settings.resolution, settings.min_step)
    si = setup.getSpaceInformation()
    planner = cls(si)
    # range None: OMPL's own default, a fifth of the joint space's diagonal (OMPL's SelfConfig).
    # simdplan's default_range is sized for its C++ planners' vectorized edge checks; here each
    # motion check is a Python call of ~12 us whatever its length, and longer edges pay off: on
    # panda_table ompl:RRT solves in ms with range 2 and often not in 1 s with the robot's 0.99.
    if hasattr(planner, "setRange") and settings.range is not None:
        planner.setRange(float(settings.range))
    if hasattr(planner, "setGoalBias"):
        planner.setGoalBias(float(settings.goal_bias))
    setup.setPlanner(planner)
    dof = robot.dof

    def state(q):
        s = si.allocState()
        for j in range(dof):
            s[j] = float(q[j])
        return s

    setup.setStartState(state(start))
    if settings.planner[len(PREFIX):] in _CONNECT_GOALS_IN_RANGE:
        goal = _reachable_goals(ob, si, np.asarray(goals, dtype=np.float64), counters.motion_free)
    else:
        goal = ob.GoalStates(si)
        for g in goals:
            goal.addState(state(g))
    setup.setGoal(goal)
    setup.setup()
    if not isinstance(goal, ob.GoalStates):
        goal.reach = float(planner.getRange())  # as configured by setup when settings.range is None
    # A C++ condition: OMPL evaluates it from its helper threads too, which must never wait for the GIL.
    stop = ob.timedPlannerTerminationCondition(float(settings.time_limit))
    with _stop_on_sigint(stop) as interrupted:
        t0 = time.perf_counter_ns()
        if isinstance(planner, og.PRM):
            _add_goals_before_solve(planner, setup, len(goals), ob)
        status = setup.solve(stop)
        plan_ns = time.perf_counter_ns() - t0
        exact = status.getStatus() == ob.PlannerStatus.EXACT_SOLUTION
        if exact and not isinstance(goal, ob.GoalStates):
            _append_reached_goal(setup, goal, goals, state, dof)
        if exact and settings.simplify and not interrupted:
            t1 = time.perf_counter_ns()
            initial = _path_array(setup, dof)
            setup.simplifySolution()
            simplify_ns = time.perf_counter_ns() - t1
    if interrupted:
        raise KeyboardInterrupt(f"OMPL {settings.planner[len(PREFIX):]} stopped by SIGINT")
    stats = _stats(settings, counters, plan_ns, status.asString())
    if not exact:
        stats["waypoints"] = 0
        return PlanResult(False, np.zeros((0, dof)), stats, settings.planner, robot.joint_names,
                          f"OMPL {settings.planner[len(PREFIX):]}: {status.asString()}")

    path = _path_array(setup, dof)
    if settings.simplify:
        stats["simplify_time_ns"] = simplify_ns
        stats["initial_cost"] = path_length(initial)
    else:
        stats["initial_cost"] = path_length(path)
    # the path ends at the goal OMPL reached; report which, and return the caller's exact values
    k = int(np.argmin(np.abs(goals - path[-1]).max(axis=1)))
    path[0], path[-1] = start, goals[k]
    stats.update(final_cost=path_length(path), goal_index=k, waypoints=len(path))
    return PlanResult(True, path, stats, settings.planner, robot.joint_names,
                      context=PlanContext(robot, env, settings.link, settings.padding, settings.resolution))


def _stats(settings, counters: _Counters, plan_ns: int, status: str) -> dict:
    """A result's stats before the path's own (costs, goal_index, waypoints) are filled in."""
    return {"iterations": 0, "collision_checks": counters.states + counters.motion_samples,
            "planning_time_ns": plan_ns, "simplify_time_ns": 0, "initial_cost": 0.0, "final_cost": 0.0,
            "goal_index": -1, "ompl_status": status, "time_limit": float(settings.time_limit), "link": settings.link,
            "edges_proven": counters.proven, "certificate_samples": counters.certificate_samples,
            "edges_undecided": counters.undecided, "state_checks": counters.states,
            "motion_checks": counters.motions}


def refusal(robot, settings, message: str) -> PlanResult:
    """The failed result of a problem refused before OMPL ran (``message`` says why)."""
    stats = _stats(settings, _Counters(), 0, "not planned")
    stats["waypoints"] = 0
    return PlanResult(False, np.zeros((0, robot.dof)), stats, settings.planner, robot.joint_names, message)


def _append_reached_goal(setup, goal, goals: np.ndarray, state, dof: int) -> None:
    """The path OMPL found ends at a state that a checked motion connects to a goal: add that goal."""
    path = setup.getSolutionPath()
    end = _values(path.getState(path.getStateCount() - 1), dof)
    k = goal.connecting_goal(end)
    if k < 0:  # not expected: OMPL ended where the goal region said it was satisfied
        raise RuntimeError("OMPL's path does not end next to a goal")
    if np.any(end != goals[k]):
        path.append(state(goals[k]))


def _path_array(setup, dof: int) -> np.ndarray:
    return np.array([_values(s, dof) for s in setup.getSolutionPath().getStates()])


def _add_goals_before_solve(planner, setup, goal_count: int, ob) -> None:
    """PRM and PRMstar solve with a second thread that adds every goal after the first to the roadmap
    while holding the roadmap's lock; adding one checks motions, i.e. calls into Python, which needs
    the GIL, and the thread that called solve holds the GIL while it waits for that lock: a deadlock.
    Each solve adds one more goal on the calling thread before the second thread starts, so solves
    that stop at once put all goals but the last in the roadmap, and the real solve adds the last."""
    already_stopped = ob.plannerAlwaysTerminatingCondition()
    for _ in range(goal_count - 1):
        planner.solve(already_stopped)
    # those solves may have recorded an approximate path (start to its nearest roadmap vertex)
    setup.getProblemDefinition().clearSolutionPaths()


@contextlib.contextmanager
def _stop_on_sigint(stop):
    """While OMPL solves, SIGINT ends the solve through ``stop`` instead of raising inside one of
    the Python callbacks (an exception there would unwind through OMPL's C++ and its threads).
    Yields a list that is non-empty once SIGINT came; the caller raises KeyboardInterrupt after
    OMPL returned. Python runs the handler on the main thread between bytecodes, i.e. in the next
    validity or motion check, microseconds to milliseconds after the signal. Elsewhere than on the
    main thread, or when the program installed its own SIGINT handler, nothing is changed."""
    interrupted: list[int] = []
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield interrupted
        return

    def on_sigint(signum, frame):
        interrupted.append(signum)
        stop.terminate()

    signal.signal(signal.SIGINT, on_sigint)
    try:
        yield interrupted
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
