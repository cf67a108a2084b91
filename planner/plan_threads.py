"""plan_many on C++ threads: the engine behind simdplan.plan_many, and behind each chunk of its Ray
backend.

Each task is checked and shaped in Python (as ``plan`` does) and handed to the core's PlanBatch in
growing chunks, so planning starts at once and this thread's preparation overlaps it: worker threads
plan without the GIL, each with its own planner state, sharing the robots and environments
(compiled once per robot, environment and padding, never copied per task). This thread collects
results as they finish, shows progress and answers Ctrl-C.
"""

from __future__ import annotations

import sys
import time
from typing import Callable

import numpy as np

from simdplan import _core
from simdplan.planner.plan import (check_settings_range, check_types, core_output, pose_parts, pose_result,
                                   problem_arrays, to_result, validated_settings, with_clamp_note)
from simdplan.planner.pose_goals import DEFAULT_IK_SOLUTIONS, IK_ROUNDS, ROUND_ITERATIONS
from simdplan.planner.result import PlanResult
from simdplan.planner.settings import PLANNERS, PlannerSettings, to_core, warn_ignored

# a progress bar starts only for runs longer than this
PROGRESS_AFTER_S = 1.0


def plan_on_threads(tasks, numbers, results: list, prepared: "Prepared", workers: int, progress: bool | None,
                    on_result: Callable[[int, PlanResult], None] | None) -> None:
    """Plans ``tasks`` on ``workers`` threads into ``results`` (one slot per task); task i plans
    with seed task_seed(seed, numbers[i]). A KeyboardInterrupt (Ctrl-C) or an exception of
    on_result stops the threads within a few ms, keeps what finished in ``results`` and propagates."""
    # per core task (in the order added): (caller's index, robot, env, start, goals, settings, poses);
    # poses: how many goal poses a pose task has (None for joint goals)
    owners: list = []
    finished = Finished(results, on_result, progress)

    def take(batch_results) -> None:
        for k, out in batch_results:
            i, robot, env, start, goals, s, poses = owners[k]
            owners[k] = None
            finished.put(i, task_result(out, robot, env, start, goals, s, poses))
        finished.bar.advance(0)  # the bar starts on time even while nothing finishes

    batch = _core.PlanBatch(min(workers, max(len(tasks), 1)))
    try:
        # PERF: tasks go to the threads in growing chunks as they are prepared, so planning starts
        # at once and this thread's preparation overlaps it
        chunk, size = [], 8
        for i, task in enumerate(tasks):
            try:
                core_task, owner = prepared.task(task)
            except (TypeError, ValueError) as exc:
                finished.put(i, error_result(exc, task))
                continue
            chunk.append((*core_task[:6], numbers[i], *core_task[6:]))  # the task's number sets its seed
            owners.append((i, *owner))
            if len(chunk) == size:
                batch.add(chunk)
                chunk, size = [], min(2 * size, 1024)
                take(batch.collect(0.0))
        batch.add(chunk)
        batch.close()
        while not batch.done:
            take(batch.collect(0.02))  # a wait without the GIL; Ctrl-C is raised between waits
    except KeyboardInterrupt:
        batch.stop()
        take(batch.collect(0.0))  # tasks that finished since the last collection
        raise
    finally:
        batch.stop()  # joins the threads here, not when the garbage collector gets to the batch
        finished.bar.close()


class Prepared:
    """What the tasks of one call share, worked out once: validated settings per base settings,
    compiled environments per (robot, environment, padding, Link), core settings per robot."""

    def __init__(self, planner: str | None, settings: dict) -> None:
        self.planner, self.settings = planner, settings
        self._validated: dict = {}  # id(base settings) -> validated
        self._bases: dict = {}  # one_of's memory
        # what every tuple task plans with; a mistake in the call's own settings fails the call
        self._validated[id(None)] = self._validate(None)
        self._models: dict = {}
        self._cores: dict = {}
        self._keep: list = []  # objects whose id() is a cache key stay alive for the call

    def task(self, task) -> tuple:
        """(the core's task without its index, (robot, env, start, goals, settings, poses)); a Scene
        with goal poses (``goal_poses``) becomes a pose task (goals None, poses their number), planned
        as plan(..., goal_pose=...) plans it. TypeError or ValueError saying what is wrong with the task."""
        # PERF: runs once per task before any planning starts, so every lookup here is cached
        robot, env, start, goals, base = task_parts(task)
        s = self._settings_for(base)
        key = (id(robot), id(env), s.padding, s.link)
        model = self._models.get(key)
        if model is None:
            check_types(robot, env)
            model = self._models[key] = robot.compiled_env(env, s.padding, distances=s.link == "certified")
            self._keep.append((robot, env))
        pose = pose_goal(task)
        if pose is not None:
            poses, link, mask = pose
            start, request, targets = pose_parts(robot, start, list(poses), s, link, mask, DEFAULT_IK_SOLUTIONS)
            core = self._core_settings(s, robot)
            return ((robot.core, model, s.planner, start, np.zeros((0, robot.dof)), core, request, targets, IK_ROUNDS,
                     ROUND_ITERATIONS), (robot, env, start, None, s, len(targets)))
        if (type(start) is not np.ndarray or start.dtype != np.float64 or start.ndim != 1
                or type(goals) is not np.ndarray or goals.dtype != np.float64 or goals.ndim != 2
                or robot.has_continuous):
            start, goals = problem_arrays(robot, start, goals)
        elif start.shape[0] != robot.dof or goals.shape[1] != robot.dof or len(goals) == 0:
            start, goals = problem_arrays(robot, start, goals)  # raises, naming the shapes
        core = self._core_settings(s, robot)
        return (robot.core, model, s.planner, start, goals, core), (robot, env, start, goals, s, None)

    def _core_settings(self, s: PlannerSettings, robot):
        core_key = (id(s), id(robot))
        core = self._cores.get(core_key)
        if core is None:
            check_settings_range(s, robot)
            core = self._cores[core_key] = to_core(s, robot)
        return core

    def _settings_for(self, base: PlannerSettings | None) -> PlannerSettings:
        """The validated settings of a task whose own are ``base`` (a Scene's; None for a tuple)."""
        base = one_of(self._bases, base)  # scenes of one file or generator carry equal settings
        s = self._validated.get(id(base))
        if s is None:
            s = self._validated[id(base)] = self._validate(base)
        return s

    def _validate(self, base: PlannerSettings | None) -> PlannerSettings:
        fields = {} if base is None else {k: v for k, v in vars(base).items() if k != "planner"}
        fields.update(self.settings)
        s = validated_settings(self.planner or (base.planner if base is not None else "rrtc"), fields)
        if s.planner not in PLANNERS:
            raise ValueError(f"plan_many runs the C++ planners {sorted(PLANNERS)}; plan {s.planner!r} "
                             "problems one at a time with simdplan.plan")
        warn_ignored(s, self.settings, stacklevel=6)
        return s


def one_of(seen: dict, base):
    """``base`` (settings or None), or an equal one met before in ``seen`` (a dict kept by the
    caller), so that tasks whose settings are equal share one object: validated once, pickled
    once. The caller holds every base while it uses ``seen``, so their ids stay unique."""
    if base is None:
        return None
    same = seen.get(id(base))
    if same is None:
        try:
            same = seen.setdefault(tuple(vars(base).items()), base)
        except TypeError:  # an unhashable value: kept as it is
            same = base
        seen[id(base)] = same
    return same


def is_scene(task) -> bool:
    """Whether ``task`` looks like a Scene (robot, env, start, goals and settings attributes)."""
    # NOTE: by its fields, not its class: simdplan.scenes builds on this package, not the reverse
    return all(hasattr(task, a) for a in ("robot", "env", "start", "goals", "settings"))


def task_parts(task) -> tuple:
    """(robot, env, start, goals, base settings or None) of a Scene or a 4-tuple."""
    if isinstance(task, (tuple, list)) and len(task) == 4:
        return (*task, None)
    try:  # PERF: attribute reads, not hasattr tests: this runs once per task before planning
        return task.robot, task.env, task.start, task.goals, task.settings
    except AttributeError:
        pass
    raise TypeError(f"a task must be a Scene or a (robot, env, start, goals) tuple, got {type(task).__name__}"
                    + (f" of length {len(task)}" if isinstance(task, (tuple, list)) else ""))


def pose_goal(task) -> tuple | None:
    """(goal poses, goal_link, goal_mask) of a Scene with goal poses, else None (joint goals). The
    Ray backend carries this to its workers beside task_parts, so both engines read a pose task alike."""
    poses = getattr(task, "goal_poses", None)
    if poses is None or len(poses) == 0:
        return None
    return poses, getattr(task, "goal_link", None), getattr(task, "goal_mask", None)


def task_result(out: dict, robot, env, start, goals, s: PlannerSettings, poses: int | None = None) -> PlanResult:
    """A finished core task as the PlanResult ``plan`` would return, or as an error result worded as
    ``plan`` would raise it. ``poses``: the number of goal poses of a pose task (None: joint goals)."""

    def planned() -> dict:  # the core call, already made on a worker
        if "error" in out:
            raise (ValueError if out["error_is_value"] else RuntimeError)(out["error"])
        return out

    try:
        if poses is not None:
            result = pose_result(planned, s, robot, env, start, poses, warn=False)
        else:
            _, start, goals, note = core_output(planned, robot, env, start, goals, s.padding, s.limit_tolerance,
                                                warn=False)
            result = with_clamp_note(to_result(out, s, robot, start, goals, env), note)
    except (ValueError, RuntimeError) as exc:  # InvalidProblemError among them
        result = error_result(exc, None, robot, s.planner)
    result.stats["seed"] = out["seed"]
    result.stats["call_time_ns"] = out["call_ns"]
    return result


def error_result(exc: Exception, task, robot=None, planner: str = "") -> PlanResult:
    """success=False, error = the exception's class name, message = its text."""
    if robot is None:
        try:
            robot = task_parts(task)[0]
        except TypeError:
            robot = None
    dof = getattr(robot, "dof", 0) if isinstance(getattr(robot, "dof", 0), int) else 0
    names = list(getattr(robot, "joint_names", []) or [])
    return PlanResult(False, np.zeros((0, dof)), {}, planner, names, str(exc), error=type(exc).__name__)


class Finished:
    """Where each finished task goes: its slot in ``results``, the caller's ``on_result``, the
    progress bar (both engines deliver through it)."""

    def __init__(self, results: list, on_result: Callable[[int, PlanResult], None] | None,
                 progress: bool | None) -> None:
        self.results, self.on_result = results, on_result
        self.bar = ProgressBar(len(results), progress)

    def put(self, i: int, result: PlanResult) -> None:
        self.results[i] = result
        if self.on_result is not None:
            self.on_result(i, result)
        self.bar.advance(1)


class ProgressBar:
    """rich's progress bar on stderr, started once a run has taken PROGRESS_AFTER_S."""

    def __init__(self, total: int, wanted: bool | None) -> None:
        self.total, self.done, self.bar = total, 0, None
        self.on = bool(wanted) if wanted is not None else sys.stderr.isatty()
        self.forced = bool(wanted)  # asked for: drawn even where stderr is not a terminal
        self.t0 = time.monotonic()

    def advance(self, n: int) -> None:
        self.done += n
        if not self.on:
            return
        if self.bar is None:
            if time.monotonic() - self.t0 < PROGRESS_AFTER_S or self.done >= self.total:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

            console = Console(file=sys.stderr, force_terminal=self.forced or None)
            self.bar = Progress("plan_many", BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                TimeRemainingColumn(), console=console, transient=True)
            self.task = self.bar.add_task("", total=self.total)
            self.bar.start()
        self.bar.update(self.task, completed=self.done)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
