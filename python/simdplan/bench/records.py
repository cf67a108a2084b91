"""Per-problem records of the benchmarks, shared by ``bench mbm`` and ``bench robots``.

One record is one planner on one problem: what it solved, its own timers (microseconds), its
iterations and costs, and the independent re-check of its path (``verify_path``: every edge with
``robot.is_motion_valid`` at ``VERIFY_FACTOR`` x the planning resolution, every waypoint on its own).
simdplan's and VAMP's paths are re-checked the same way, against the obstacles both planned in.
"""

from __future__ import annotations

import dataclasses
import time
import warnings

import numpy as np

from simdplan.planner import InvalidProblemError

# Independent re-check of returned paths: this many times the planner's edge resolution.
VERIFY_FACTOR = 10
# Path endpoints must equal the start / a goal to this (joint units).
ENDPOINT_TOL = 1e-6



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
        return plan(scene.robot, scene.env, np.asarray(scene.start, dtype=float),
                    np.asarray(scene.goals, dtype=float), planner=planner, **fields)


def planned_ends(robot, start, goals, checked) -> tuple[np.ndarray, np.ndarray]:
    """(start (dof,), goals (m, dof)) as a plan with validated settings ``checked`` used them:
    continuous joints wrapped to [-pi, pi] and values within limit_tolerance of a limit moved onto
    it. A returned path begins and ends there."""
    both = np.vstack([np.asarray(start, dtype=float).reshape(1, -1), np.atleast_2d(np.asarray(goals, dtype=float))])
    wrap = np.asarray(robot._program.wrap, dtype=bool)
    if wrap.any():  # as simdplan.plan does; else a start at 4 rad "does not begin" the path at -2.28
        both[:, wrap] = np.remainder(both[:, wrap] + np.pi, 2 * np.pi) - np.pi
    if checked.limit_tolerance > 0:
        both, _ = robot.clamp_to_limits(both, checked.limit_tolerance)
    return both[0], both[1:]


def verify_path(robot, env, path, start, goals, resolution: float, padding: float = 0.0,
                certified: bool = False, min_step: float = 1e-3) -> dict:
    """Independent check of a returned path.

    path (k, dof): must start at ``start`` (dof,), end at one of ``goals`` (m, dof) (to
    ENDPOINT_TOL), and every edge between consecutive waypoints must pass
    ``robot.is_motion_valid`` at ``resolution`` samples per unit joint distance, and with
    ``certified`` also ``robot.certify_motion`` (a fresh certificate of every edge).
    Every waypoint is also checked on its own (``robot.is_valid_many``): a waypoint in collision
    is a configuration the planner accepted, which no edge sampling explains.
    Returns {"ok": bool, "bad_edges": int, "edges": int, "bad_waypoints": int, "max_depth_m": float,
    "reason": str or None}.
    """
    path = np.asarray(path, dtype=float)
    start = np.asarray(start, dtype=float).reshape(-1)
    goals = np.asarray(goals, dtype=float).reshape(-1, start.size)
    if path.ndim != 2 or len(path) == 0 or path.shape[1] != start.size:
        return {"ok": False, "bad_edges": 0, "edges": 0, "bad_waypoints": 0, "max_depth_m": 0.0,
                "reason": f"path has shape {path.shape}"}
    reasons = []
    if np.max(np.abs(path[0] - start)) > ENDPOINT_TOL:
        reasons.append("path does not begin at the start")
    if np.min(np.max(np.abs(goals - path[-1]), axis=1)) > ENDPOINT_TOL:
        reasons.append("path does not end at a goal")
    bad, depth = 0, 0.0
    bad_waypoints = int((~robot.is_valid_many(path, env, padding=padding)).sum())
    if bad_waypoints:
        reasons.append(f"{bad_waypoints} of {len(path)} waypoints collide")
    if len(path) == 1:
        bad = bad_waypoints
    for a, b in zip(path[:-1], path[1:]):
        if not robot.is_motion_valid(a, b, env, resolution=resolution, padding=padding):
            bad += 1
            depth = max(depth, worst_depth(robot, env, a, b, resolution, padding))
    if bad:
        reasons.append(f"{bad} of {max(1, len(path) - 1)} edges collide at {resolution:g} samples/unit, "
                       f"deepest penetration {depth * 1e3:.3g} mm")
    if certified:
        uncertified = sum(not robot.certify_motion(a, b, env, padding, min_step).free
                          for a, b in zip(path[:-1], path[1:]))
        if uncertified:
            bad += uncertified
            reasons.append(f"{uncertified} of {len(path) - 1} edges could not be certified collision-free")
    return {"ok": not reasons, "bad_edges": bad, "edges": len(path) - 1, "bad_waypoints": bad_waypoints,
            "max_depth_m": depth, "reason": "; ".join(reasons) or None}


def verify_fields(v: dict) -> dict:
    """A ``bench mbm`` record's fields for a verify_path result (simdplan's and VAMP's paths alike)."""
    return {"verified": v["ok"], "verify_bad_edges": v["bad_edges"], "verify_bad_waypoints": v["bad_waypoints"],
            "verify_max_depth_m": v["max_depth_m"], "verify_message": v["reason"]}


def worst_depth(robot, env, a, b, resolution: float, padding: float) -> float:
    """Deepest penetration (metres) over the samples of the motion check of edge a -> b."""
    n = robot.motion_samples(a, b, resolution)
    Q = a + np.linspace(0.0, 1.0, n + 1)[:, None] * (b - a)
    bad = Q[~robot.is_valid_many(Q, env, padding=padding)]
    depths = [v.depth for q in bad for v in robot.why_invalid(q, env, padding=padding)]
    return float(max(depths, default=0.0))


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
    rec = {"problem": scene.problem, "index": int(scene.index), "valid": scene.valid is not False, "solved": False,
           "status": "invalid", "message": None, "link": checked.link}
    if scene.valid is False:  # None: the file has no flag; the planner's own check decides
        rec["message"] = "start or goals not valid (the problem's valid flag)"
        return rec
    t0 = time.perf_counter_ns()
    try:
        result = call_plan(scene, settings)
    except InvalidProblemError as exc:
        rec.update(valid=False, message=one_line(exc))
        return rec
    wall = time.perf_counter_ns() - t0
    st = dict(result.stats)
    plan_ns = float(st.get("planning_time_ns", 0))
    simp_ns = float(st.get("simplify_time_ns", 0))
    rec.update(
        solved=bool(result.success), status="solved" if result.success else "failed",
        message=getattr(result, "message", "") or None,
        planning_time_us=plan_ns / 1e3, simplify_time_us=simp_ns / 1e3, total_time_us=(plan_ns + simp_ns) / 1e3,
        wall_time_us=wall / 1e3, iterations=int(st.get("iterations", 0)),
        collision_checks=int(st.get("collision_checks", 0)),
        initial_cost=st.get("initial_cost"), final_cost=st.get("final_cost"),
        goal_index=st.get("goal_index"), waypoints=int(len(result.path)),
    )
    rec["link"] = checked.link
    if result.success:
        start, goals = planned_ends(scene.robot, scene.start, scene.goals, checked)
        v = verify_path(scene.robot, scene.env, result.path, start, goals,
                        VERIFY_FACTOR * resolution_of(scene.robot, checked), checked.padding,
                        checked.link == "certified", checked.min_step)
        rec.update(verify_fields(v), path=np.asarray(result.path).tolist())
    return rec


def plan_baseline(base, scene, simplify: bool, cloud=None, verify_resolution: float | None = None) -> dict:
    """VAMP on one problem right after simdplan (a ``bench mbm`` record with ``impl`` "vamp"). cloud:
    the point-cloud setting's (sampled points, kept points, min_dist, point radius): VAMP filters the
    same sampled points (only to time it) and builds its tree on the points simdplan kept, so that
    both plan against the same cloud. verify_resolution: VAMP's path is re-verified as simdplan's
    are (verify_path against scene.env, the obstacles both planned against), at this resolution."""
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
    if rec["solved"] and verify_resolution is not None:
        v = verify_path(scene.robot, scene.env, rec["path"], scene.start, scene.goals, verify_resolution)
        rec.update(verify_fields(v))
    return rec
