"""simdplan.plan_many: many planning problems at once, on every core, in C++ threads.

Each task is checked and shaped in Python (as ``plan`` does), then all of them go to the core in
one call: worker threads plan them without the GIL, each with its own planner state, sharing the
robots and environments (compiled once per robot, environment and padding, never copied per task).
The calling thread receives results as they finish, shows progress and answers Ctrl-C.

Determinism: task ``i`` plans with seed ``task_seed(seed, i)``, so its result is the one
``plan(robot, env, start, goals, seed=task_seed(seed, i), ...)`` gives, whatever the number of
workers and the order in which tasks finish.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Callable

import numpy as np

from simdplan import _core
from simdplan.planner.plan import (InvalidProblemError, check_settings_range, check_types, core_output, problem_arrays,
                                   to_result, validated_settings, with_clamp_note)
from simdplan.planner.result import PlanResult
from simdplan.planner.settings import PLANNERS, PlannerSettings, to_core, warn_ignored
from simdplan.validation import as_int

# PERF: how often the calling thread collects finished tasks and runs Python's signal handlers
# is set in the core (20 ms); a progress bar starts only for runs longer than this
PROGRESS_AFTER_S = 1.0


class PlanManyInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped plan_many. ``results``: one entry per task, the PlanResult of every task that
    finished and None for the others."""

    def __init__(self, results: list) -> None:
        self.results = results
        done = sum(r is not None for r in results)
        super().__init__(f"plan_many interrupted: {done} of {len(results)} tasks finished (see .results)")


def task_seed(seed: int, index: int) -> int:
    """The seed task ``index`` of ``plan_many(..., seed=seed)`` plans with (an integer in [0, 2**63))."""
    return int(_core.task_seed(as_int(seed, "seed", 0, 2**63 - 1), as_int(index, "index", 0, 2**63 - 1)))


def default_workers() -> int:
    """The cores this process may run on (its CPU affinity where the OS tells it, else all)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def plan_many(tasks, *, workers: int | None = None, planner: str | None = None, progress: bool | None = None,
              on_result: Callable[[int, PlanResult], None] | None = None, indices=None,
              **settings) -> list[PlanResult]:
    """Plan every task; returns one PlanResult per task, in task order.

    tasks: a list of ``simdplan.scenes.Scene`` (planned with the scene's settings, overridden by
    ``planner`` and ``settings`` given here) or of ``(robot, env, start, goals)`` tuples (planned
    with ``planner``, default "rrtc", and ``settings``, as ``simdplan.plan`` takes them). Only the
    C++ planners ("rrtc", "rrt", "prm") run here; OMPL planners plan one at a time with ``plan``.
    workers: threads (None: every core this process may use). Each task's ``time_limit`` and
    ``max_iterations`` bound that task alone.

    A task that cannot be planned (an invalid start or goal, a wrong shape, NaN, an unknown setting)
    does not fail the batch: its result has ``success=False``, ``error`` naming the exception
    (e.g. "InvalidProblemError") and ``message`` saying what is wrong, as ``plan`` would raise it.
    Start and goal values within ``limit_tolerance`` of a limit are moved onto it and the result
    says so (``message``, ``stats["limit_clamped"]``), without a warning per task.

    Every result's ``stats`` has ``seed`` (the seed the task planned with, ``task_seed(seed, i)``
    for task i, or ``task_seed(seed, indices[i])``) and ``call_time_ns`` (its whole core call on its worker: checks, planning, simplification).
    progress: a progress bar on stderr (rich) once the run has taken a second; None: only when
    stderr is a terminal; True: always (terminal control codes even in a log).
    on_result(index, result): called on this thread as each task finishes (bad tasks included), in
    finishing order, e.g. to stream results to a file; if it raises, the batch stops and the
    exception propagates. Ctrl-C stops the batch within a few ms and raises PlanManyInterrupted,
    whose ``results`` keeps what finished.
    indices: each task's number in a larger run (default 0, 1, ...), which sets its seed: to plan a
    part of a run (resuming it, or sending chunks to other machines) with the seeds the whole run
    gives those tasks.
    """
    if isinstance(tasks, tuple) or _is_scene(tasks) or not hasattr(tasks, "__len__"):
        raise TypeError("tasks must be a list of Scene objects or (robot, env, start, goals) tuples")
    n_workers = default_workers() if workers is None else as_int(workers, "workers", 1, 4096)
    if planner is not None and not isinstance(planner, str):
        raise TypeError(f"planner must be a string, got {type(planner).__name__}")
    numbers = _indices(indices, len(tasks))
    prepared = _Prepared(planner, settings)  # bad settings of the call raise here, before any task
    results: list = [None] * len(tasks)
    owners: list = []  # per core task (in the order added): (caller's index, robot, env, start, goals, settings)
    bar = _ProgressBar(len(tasks), progress)

    def take(finished) -> None:
        for k, out in finished:
            i, robot, env, start, goals, s = owners[k]
            owners[k] = None
            results[i] = result = _task_result(out, robot, env, start, goals, s)
            if on_result is not None:
                on_result(i, result)
        bar.advance(len(finished))

    batch = _core.PlanBatch(min(n_workers, max(len(tasks), 1)))
    try:
        # PERF: tasks go to the threads in growing chunks as they are prepared, so planning starts
        # at once and this thread's preparation overlaps it
        chunk, size = [], 8
        for i, task in enumerate(tasks):
            try:
                core_task, owner = prepared.task(task)
            except (TypeError, ValueError) as exc:
                results[i] = _error_result(exc, task)
                if on_result is not None:
                    on_result(i, results[i])
                bar.advance(1)
                continue
            chunk.append((*core_task, numbers[i]))  # the task's number sets its seed
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
        raise PlanManyInterrupted(results) from None
    except BaseException:
        batch.stop()
        raise
    finally:
        bar.close()
    return results


def _indices(indices, n: int) -> list[int] | range:
    if indices is None:
        return range(n)
    out = [as_int(v, "indices[]", 0, 2**63 - 1) for v in indices]
    if len(out) != n:
        raise ValueError(f"indices must give one number per task: {len(out)} for {n} tasks")
    return out


class _Prepared:
    """What the tasks of one call share, worked out once: validated settings per base settings,
    compiled environments per (robot, environment, padding, Link), core settings per robot."""

    def __init__(self, planner: str | None, settings: dict) -> None:
        self.planner, self.settings = planner, settings
        self._validated: dict = {}
        # what every tuple task plans with; a mistake in the call's own settings fails the call
        self._validated[id(None)] = self._validate(None)
        self._models: dict = {}
        self._cores: dict = {}
        self._keep: list = []  # objects whose id() is a cache key stay alive for the call

    def task(self, task) -> tuple:
        """(the core's task without its index, (robot, env, start, goals, settings)); TypeError or
        ValueError saying what is wrong with the task."""
        # PERF: runs once per task before any planning starts, so every lookup here is cached
        robot, env, start, goals, base = _parts(task)
        s = self._settings_for(base)
        key = (id(robot), id(env), s.padding, s.link)
        model = self._models.get(key)
        if model is None:
            check_types(robot, env)
            model = self._models[key] = robot.compiled_env(env, s.padding, distances=s.link == "certified")
            self._keep.append((robot, env))
        if (type(start) is not np.ndarray or start.dtype != np.float64 or start.ndim != 1
                or type(goals) is not np.ndarray or goals.dtype != np.float64 or goals.ndim != 2
                or robot.has_continuous):
            start, goals = problem_arrays(robot, start, goals)
        elif start.shape[0] != robot.dof or goals.shape[1] != robot.dof or len(goals) == 0:
            start, goals = problem_arrays(robot, start, goals)  # raises, naming the shapes
        core_key = (id(s), id(robot))
        core = self._cores.get(core_key)
        if core is None:
            check_settings_range(s, robot)
            core = self._cores[core_key] = to_core(s, robot)
        return (robot.core, model, s.planner, start, goals, core), (robot, env, start, goals, s)

    def _settings_for(self, base: PlannerSettings | None) -> PlannerSettings:
        """The validated settings of a task whose own are ``base`` (a Scene's; None for a tuple)."""
        s = self._validated.get(id(base))
        if s is not None:
            return s
        values = None if base is None else tuple(vars(base).items())
        try:
            s = self._validated.get(values)  # scenes of one file or generator carry equal settings
        except TypeError:  # an unhashable value: validate (and report) below
            values = None
        if s is None:
            s = self._validate(base)
            if values is not None:
                self._validated[values] = s
        self._validated[id(base)] = s
        self._keep.append(base)
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


def _is_scene(task) -> bool:
    # NOTE: by its fields, not its class: simdplan.scenes builds on this package, not the reverse
    return all(hasattr(task, a) for a in ("robot", "env", "start", "goals", "settings"))


def _parts(task) -> tuple:
    """(robot, env, start, goals, base settings or None) of a Scene or a 4-tuple."""
    if isinstance(task, (tuple, list)) and len(task) == 4:
        return (*task, None)
    if _is_scene(task):
        return task.robot, task.env, task.start, task.goals, task.settings
    raise TypeError(f"a task must be a Scene or a (robot, env, start, goals) tuple, got {type(task).__name__}"
                    + (f" of length {len(task)}" if isinstance(task, (tuple, list)) else ""))


def _task_result(out: dict, robot, env, start, goals, s: PlannerSettings) -> PlanResult:
    """A finished core task as the PlanResult ``plan`` would return, or as an error result worded as
    ``plan`` would raise it."""

    def planned() -> dict:  # the core call, already made on a worker
        if "error" in out:
            raise (ValueError if out["error_is_value"] else RuntimeError)(out["error"])
        return out

    try:
        _, start, goals, note = core_output(planned, robot, env, start, goals, s.padding, s.limit_tolerance,
                                                  warn=False)
        result = with_clamp_note(to_result(out, s, robot, start, goals), note)
    except (ValueError, RuntimeError) as exc:  # InvalidProblemError among them
        result = _error_result(exc, None, robot, s.planner)
    result.stats["seed"] = out["seed"]
    result.stats["call_time_ns"] = out["call_ns"]
    return result


def _error_result(exc: Exception, task, robot=None, planner: str = "") -> PlanResult:
    """success=False, error = the exception's class name, message = its text."""
    if robot is None:
        try:
            robot = _parts(task)[0]
        except TypeError:
            robot = None
    dof = getattr(robot, "dof", 0) if isinstance(getattr(robot, "dof", 0), int) else 0
    names = list(getattr(robot, "joint_names", []) or [])
    return PlanResult(False, np.zeros((0, dof)), {}, planner, names, str(exc), error=type(exc).__name__)


class _ProgressBar:
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
