"""simdplan.plan_many: many planning problems at once, on every core (C++ threads,
plan_threads.py) or on a Ray cluster (plan_ray.py). This module checks the call and chooses the
engine.

Determinism: task ``i`` plans with seed ``task_seed(seed, i)``, so its result is the one
``plan(robot, env, start, goals, seed=task_seed(seed, i), ...)`` gives, whatever the number of
workers and the order in which tasks finish.
"""

from __future__ import annotations

import os
from typing import Callable

from simdplan import _core
from simdplan.planner.plan_ray import plan_on_ray
from simdplan.planner.plan_threads import Prepared, is_scene, plan_on_threads
from simdplan.planner.result import PlanResult
from simdplan.validation import as_int


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
              on_result: Callable[[int, PlanResult], None] | None = None, indices=None, backend: str = "threads",
              address: str | None = None, chunk_size: int | None = None, **settings) -> list[PlanResult]:
    """Plan every task; returns one PlanResult per task, in task order.

    tasks: a list of ``simdplan.scenes.Scene`` (planned with the scene's settings, overridden by
    ``planner`` and ``settings`` given here) or of ``(robot, env, start, goals)`` tuples (planned
    with ``planner``, default "rrtc", and ``settings``, as ``simdplan.plan`` takes them). Only the
    C++ planners ("rrtc", "rrt", "prm") run here; OMPL planners plan one at a time with ``plan``.
    workers: threads (None: every core this process may use). Each task's ``time_limit`` and
    ``max_iterations`` bound that task alone.

    A Scene with goal poses (``goal_poses``) is planned on the workers as ``simdplan.plan(...,
    goal_pose=...)`` plans it (IK and planning in one core call, the same result for the same seed).
    A task that cannot be planned (an invalid start or goal, a wrong shape, NaN, an unknown setting)
    does not fail the batch: its result has ``success=False``, ``error`` naming the exception
    (e.g. "InvalidProblemError") and ``message`` saying what is wrong, as ``plan`` would raise it.
    Start and goal values within ``limit_tolerance`` of a limit are moved onto it and the result
    says so (``message``, ``stats["limit_clamped"]``), without a warning per task.

    Every result's ``stats`` has ``seed`` (the seed the task planned with, ``task_seed(seed, i)``
    for task i, or ``task_seed(seed, indices[i])``) and ``call_time_ns`` (its whole core call on
    its worker: checks, planning, simplification).
    progress: a progress bar on stderr (rich) once the run has taken a second; None: only when
    stderr is a terminal; True: always (terminal control codes even in a log).
    on_result(index, result): called on this thread as each task finishes (bad tasks included), in
    finishing order, e.g. to stream results to a file; if it raises, the batch stops and the
    exception propagates. Ctrl-C stops the batch within a few ms and raises PlanManyInterrupted,
    whose ``results`` keeps what finished.
    indices: each task's number in a larger run (default 0, 1, ...), which sets its seed: to plan a
    part of a run (resuming it, or sending chunks to other machines) with the seeds the whole run
    gives those tasks.

    backend="ray": the tasks go out in chunks (``chunk_size`` tasks; by default shrinking, from
    half of each slot's share) to a Ray cluster (simdplan.planner.plan_ray): ``address`` None joins the Ray
    instance this process runs (or starts a local one), "auto" a running cluster, "ray://host:port"
    a remote one (once Ray runs in this process, every call plans there: another ``address`` than
    None, "auto" or the running one's raises ValueError); each chunk is planned on ``workers``
    threads (default: the CPUs of the smallest node) reserving as many of the node's CPUs. Same
    results as threads; a chunk whose worker or node dies is planned again elsewhere. Ray is an
    optional extra (``pip install "simdplan[ray]"``).
    """
    if isinstance(tasks, tuple) or is_scene(tasks) or not hasattr(tasks, "__len__"):
        raise TypeError("tasks must be a list of Scene objects or (robot, env, start, goals) tuples")
    n_workers = default_workers() if workers is None else as_int(workers, "workers", 1, 4096)
    if planner is not None and not isinstance(planner, str):
        raise TypeError(f"planner must be a string, got {type(planner).__name__}")
    numbers = _indices(indices, len(tasks))
    prepared = Prepared(planner, settings)  # bad settings of the call raise here, before any task
    if backend not in ("threads", "ray"):
        raise ValueError(f"backend must be 'threads' or 'ray', got {backend!r}")
    if address is not None and not isinstance(address, str):
        raise TypeError(f"address must be a string ('auto', 'ray://host:port', ...) or None, got "
                        f"{type(address).__name__}")
    if backend == "threads" and (address is not None or chunk_size is not None):
        raise ValueError("address and chunk_size are settings of backend='ray'")
    results: list = [None] * len(tasks)
    try:
        if backend == "ray":
            plan_on_ray(tasks, numbers, results, workers=workers, planner=planner, progress=progress,
                        on_result=on_result, address=address, chunk_size=chunk_size, settings=settings)
        else:
            plan_on_threads(tasks, numbers, results, prepared, n_workers, progress, on_result)
    except KeyboardInterrupt:
        raise PlanManyInterrupted(results) from None
    return results


def _indices(indices, n: int) -> list[int] | range:
    if indices is None:
        return range(n)
    out = [as_int(v, "indices[]", 0, 2**63 - 1) for v in indices]
    if len(out) != n:
        raise ValueError(f"indices must give one number per task: {len(out)} for {n} tasks")
    return out
