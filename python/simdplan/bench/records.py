"""Per-problem records of the benchmarks, shared by ``bench mbm`` and ``bench robots``.

One record is one planner on one problem: what it solved, its own timers (microseconds), its
iterations and costs, and the independent re-check of its path (``simdplan.check_path``: every edge
at ``VERIFY_FACTOR`` x the planning resolution, every waypoint on its own).
simdplan's and VAMP's paths are re-checked the same way, against the obstacles both planned in.
"""

from __future__ import annotations

import dataclasses
import json
import os
import platform
import time
import warnings

import numpy as np

from simdplan.path_check import DEFAULT_FACTOR as VERIFY_FACTOR
from simdplan.path_check import ENDPOINT_TOL, check_path  # noqa: F401  (ENDPOINT_TOL: the benchmarks' tolerance)
from simdplan.planner import InvalidProblemError


@dataclasses.dataclass
class Table:
    """One table of a benchmark report: header (name, justify: "left" or "right"; a newline may split
    a name over lines), rows of cells, and the row indices that start a new section."""

    title: str
    header: list
    rows: list
    sections: set = dataclasses.field(default_factory=set)


def machine_info() -> dict:
    """The machine a benchmark ran on (recorded with its figures)."""
    import simdplan
    from simdplan._runtime import cpu_model

    return {
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "simdplan": simdplan.info(),
    }


def write_raw(path: str, doc: dict) -> None:
    """A benchmark script's raw numbers as JSON at ``path`` (its folder made; NumPy numbers as floats)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, default=float)


def one_line(text) -> str:
    parts = [p.strip() for p in str(text).splitlines() if p.strip()]
    return "; ".join(parts) if parts else str(text)


def resolution_of(robot, checked) -> float:
    """The resolution a plan with validated settings ``checked`` used (the robot's default if unset)."""
    return float(checked.resolution if checked.resolution is not None else robot.resolution)


def call_plan(scene, settings):
    """simdplan.plan on the scene with these settings (a PlannerSettings). A start or goal moved onto a
    joint limit (limit_tolerance) is reported by the result (message, stats), not as a warning."""
    from simdplan.planner import LimitClampWarning, plan  # noqa: PLC0415

    fields = dataclasses.asdict(settings)
    planner = fields.pop("planner")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LimitClampWarning)
        if getattr(scene, "goal_poses", None):  # poses of a link: the plan goes to their IK solutions
            return plan(scene.robot, scene.env, np.asarray(scene.start, dtype=float), planner=planner,
                        goal_pose=list(scene.goal_poses), goal_link=scene.goal_link, goal_mask=scene.goal_mask,
                        **fields)
        return plan(scene.robot, scene.env, np.asarray(scene.start, dtype=float),
                    np.asarray(scene.goals, dtype=float), planner=planner, **fields)


def planned_ends(robot, start, goals, checked) -> tuple[np.ndarray, np.ndarray]:
    """(start (dof,), goals (m, dof)) as a plan with validated settings ``checked`` used them:
    continuous joints wrapped to [-pi, pi] and values within limit_tolerance of a limit moved onto
    it. A returned path begins and ends there."""
    both = np.vstack([np.asarray(start, dtype=float).reshape(1, -1), np.atleast_2d(np.asarray(goals, dtype=float))])
    # as simdplan.plan does; else a start at 4 rad "does not begin" the path at -2.28
    both = robot.wrap_continuous(both)
    if checked.limit_tolerance > 0:
        both, _ = robot.clamp_to_limits(both, checked.limit_tolerance)
    return both[0], both[1:]


def verify_fields(v) -> dict:
    """A benchmark record's fields for a simdplan.check_path result (simdplan's and VAMP's paths alike)."""
    return {"verified": v.ok, "verify_bad_edges": v.bad_edges, "verify_bad_waypoints": v.bad_waypoints,
            "verify_max_depth_m": v.max_depth_m, "verify_message": v.reason}


def percentile(xs, q):
    return float(np.percentile(xs, q)) if len(xs) else None


def median(xs):
    return float(np.median(xs)) if len(xs) else None


def mean(xs):
    return float(np.mean(xs)) if len(xs) else None


def summarize(records: list[dict]) -> dict:
    """Per-group figures; times in microseconds over the solved problems."""
    solved = [r for r in records if r["solved"]]

    def vals(key):  # a baseline's records lack what it does not measure (verification, wall time)
        return [r[key] for r in solved if r.get(key) is not None]

    plan, simp, total = vals("planning_time_us"), vals("simplify_time_us"), vals("total_time_us")
    return {
        "total": len(records),
        "valid": sum(r["valid"] for r in records),
        "solved": len(solved),
        "failed": sum(r["valid"] and not r["solved"] for r in records),
        "verified": sum(bool(r.get("verified")) for r in solved),
        "verify_failures": sum(r.get("verified") is False for r in solved),
        "verify_max_depth_m": max((r.get("verify_max_depth_m") or 0.0 for r in solved), default=0.0),
        "verify_waypoint_failures": sum(bool(r.get("verify_bad_waypoints")) for r in solved),
        "planning_us_median": median(plan), "planning_us_mean": mean(plan), "planning_us_p95": percentile(plan, 95),
        "simplify_us_median": median(simp), "simplify_us_mean": mean(simp),
        "total_us_median": median(total), "total_us_mean": mean(total), "total_us_p95": percentile(total, 95),
        "iterations_median": median(vals("iterations")),
        "collision_checks_median": median(vals("collision_checks")),
        "initial_cost_median": median(vals("initial_cost")),
        "final_cost_median": median(vals("final_cost")),
        "waypoints_median": median(vals("waypoints")),
        "wall_us_median": median(vals("wall_time_us")),
    }


def plan_problem(scene, settings, checked) -> dict:
    """Plan one MotionBenchMaker problem; the per-problem record of ``bench mbm``."""
    if scene.valid is False:  # None: the file has no flag; the planner's own check decides
        return invalid_record(scene, checked)
    t0 = time.perf_counter_ns()
    try:
        result = call_plan(scene, settings)
    except InvalidProblemError as exc:
        return {**_record_head(scene, checked), "valid": False, "message": one_line(exc)}
    return result_record(scene, result, checked, time.perf_counter_ns() - t0)


def invalid_record(scene, checked) -> dict:
    """The record of a problem whose file says its start or goals are not valid (not planned)."""
    return {**_record_head(scene, checked), "message": "start or goals not valid (the problem's valid flag)"}


def _record_head(scene, checked) -> dict:
    return {"problem": scene.problem, "index": int(scene.index), "valid": scene.valid is not False, "solved": False,
            "status": "invalid", "message": None, "link": checked.link}


def result_record(scene, result, checked, wall_ns: float | None) -> dict:
    """The record of ``result``, a plan of ``scene`` with validated settings ``checked`` (from plan or
    plan_many: a result whose ``error`` is InvalidProblemError records an invalid problem, any other
    error is raised); its path re-checked. wall_ns: the call's wall time (None: not timed alone)."""
    rec = _record_head(scene, checked)
    if result.error == "InvalidProblemError":
        return {**rec, "valid": False, "message": one_line(result.message)}
    if result.error:
        raise ValueError(result.message)
    st = dict(result.stats)
    plan_ns = float(st.get("planning_time_ns", 0))
    simp_ns = float(st.get("simplify_time_ns", 0))
    rec.update(
        solved=bool(result.success), status="solved" if result.success else "failed",
        message=getattr(result, "message", "") or None,
        planning_time_us=plan_ns / 1e3, simplify_time_us=simp_ns / 1e3, total_time_us=(plan_ns + simp_ns) / 1e3,
        wall_time_us=None if wall_ns is None else wall_ns / 1e3, iterations=int(st.get("iterations", 0)),
        collision_checks=int(st.get("collision_checks", 0)),
        initial_cost=st.get("initial_cost"), final_cost=st.get("final_cost"),
        goal_index=st.get("goal_index"), waypoints=int(len(result.path)),
    )
    if result.success:
        start, goals = planned_ends(scene.robot, scene.start, scene.goals, checked)
        v = check_path(scene.robot, scene.env, result.path, start, goals, resolution_of(scene.robot, checked),
                       VERIFY_FACTOR, checked.padding, checked.link == "certified", checked.min_step)
        rec.update(verify_fields(v), path=np.asarray(result.path).tolist())
    return rec


def plan_baseline(base, scene, simplify: bool, cloud=None, resolution: float | None = None) -> dict:
    """VAMP on one problem right after simdplan (a ``bench mbm`` record with ``impl`` "vamp"). cloud:
    the point-cloud setting's (sampled points, kept points, min_dist, point radius): VAMP filters the
    same sampled points (only to time it) and builds its tree on the points simdplan kept, so that
    both plan against the same cloud. resolution: simdplan's planning resolution on this problem; if
    given, VAMP's path is re-checked as simdplan's are (simdplan.check_path against scene.env, the
    obstacles both planned against, at VERIFY_FACTOR x this resolution)."""
    rec = {"impl": "vamp", "problem": scene.problem, "index": int(scene.index), "valid": scene.valid is not False,
           "solved": False, "link": None}
    if scene.valid is False:
        return rec
    if cloud is None:
        venv = base.environment(scene.env)
    else:
        raw, kept, min_dist, point_radius = cloud
        vkept, filter_ns = base.filter_pointcloud(raw, min_dist)
        venv = base.vamp.Environment()
        build_ns = base.add_pointcloud(venv, kept, point_radius)
        rec.update(cloud_kept=int(len(vkept)), filter_us=filter_ns / 1e3, build_us=build_ns / 1e3)
    rec.update(base.plan(scene.start, scene.goals, venv, simplify=simplify, joint_names=scene.robot.joint_names))
    if rec["solved"] and resolution is not None:
        try:
            v = check_path(scene.robot, scene.env, rec["path"], scene.start, scene.goals, resolution, VERIFY_FACTOR)
        except ValueError as exc:  # a path of the wrong shape fails the check; it is not a user error
            rec.update(verified=False, verify_message=one_line(exc))
        else:
            rec.update(verify_fields(v))
    return rec


def links_in_turn(links: list[str], i: int) -> list[str]:
    """The Link modes in the order problem ``i`` plans them: reversed on every other problem. The
    first plan of a problem meets caches its predecessor (and VAMP) left cold and can cost more than
    the second; a fixed order would charge that to one mode."""
    return links if i % 2 == 0 else links[::-1]
