"""``simdplan.check_path``: a returned path re-checked densely with the robot's own sphere model.

A planner checks each edge at its planning resolution; a path that passes there may still graze an
obstacle between two samples. ``check_path`` checks it again, independently of the planner's run:
every waypoint on its own (``robot.is_valid_many``) and every edge between consecutive waypoints
with ``robot.is_motion_valid`` at ``factor`` times the planning resolution (and, with
``certified``, with a fresh ``robot.certify_motion`` certificate). ``simdplan plan`` and
``simdplan bench`` report its verdict as "verified".

Units and frames: configurations are joint values (radians for revolute joints, metres for
prismatic ones) in ``robot.joint_names`` order; obstacles are in the world frame of ``env``, the
robot at its own ``base_pose``; resolutions are samples per unit of joint-space distance; padding,
penetration depths and ``min_step`` are in metres (``min_step``: the certificate's smallest
subdivision, joint units). For the robot's real collision meshes instead of its spheres see
``simdplan.verify_path``.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

# The default re-check: this many times the planning resolution.
DEFAULT_FACTOR = 10
# A path must begin at ``start`` and end at one of ``goals`` to this (joint units).
ENDPOINT_TOL = 1e-6
# The certificate's smallest subdivision when none is given, as simdplan.plan's default.
DEFAULT_MIN_STEP = 1e-3
# An edge too close to call at min_step is certified again with steps this many times finer
# (_certified), but never finer than MIN_STEP_FLOOR (joint units).
RETRY_STEP_FACTOR = 1000
MIN_STEP_FLOOR = 1e-6


@dataclasses.dataclass(frozen=True)
class PathCheck:
    """Outcome of :func:`check_path`.

    ok: every check passed. reason: what failed, one line (None if ok). edges: edges checked
    (waypoints - 1). failing_edges: indices i of the edges path[i] -> path[i + 1] that collide (or
    could not be certified). bad_edges: their count (for a one-waypoint path, the colliding
    waypoint counts as its edge). bad_waypoints: waypoints in collision on their own: configurations
    a planner accepted, which no edge sampling explains. max_depth_m: deepest penetration in metres
    found over the samples of the colliding edges (0.0 if none). resolution: samples per unit joint
    distance the edges were checked at.
    """

    ok: bool
    reason: str | None
    edges: int
    failing_edges: tuple[int, ...]
    bad_edges: int
    bad_waypoints: int
    max_depth_m: float
    resolution: float

    def as_dict(self) -> dict:
        return dataclasses.asdict(self)

    def __bool__(self) -> bool:
        return self.ok


def _positive(name: str, value, unit: str) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number ({unit}), got {value!r}") from None
    if not (math.isfinite(x) and x > 0):
        raise ValueError(f"{name} must be a finite number > 0 ({unit}), got {value!r}")
    return x


def _configurations(name: str, value, dof: int, rows: bool) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be numbers, got {type(value).__name__}") from None
    arr = np.atleast_2d(arr) if rows else arr.reshape(-1) if arr.ndim <= 1 else arr
    bad_shape = (arr.ndim != 2 or arr.shape[1] != dof or len(arr) == 0) if rows else arr.shape != (dof,)
    if bad_shape:
        want = f"(m, {dof})" if rows else f"({dof},)"
        raise ValueError(f"{name} must have shape {want} for this {dof}-dof robot, got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} has NaN or infinite values")
    return arr


def check_path(robot, env, path, start=None, goals=None, resolution: float | None = None,
               factor: float = DEFAULT_FACTOR, padding: float = 0.0, certified: bool = False,
               min_step: float = DEFAULT_MIN_STEP) -> PathCheck:
    """Re-check ``path`` (k, dof) densely against ``env`` with the robot's sphere model.

    robot: a simdplan Robot. env: a simdplan.Environment (world frame). path: (k, dof) waypoints,
    or a PlanResult. start (dof,) / goals (m, dof) or (dof,): if given, the path must begin at start
    and end at one of the goals (to ENDPOINT_TOL); pass the ends as the planner used them (wrapped
    continuous joints, limits clamped). resolution: the planning resolution the check is relative to
    (samples per unit joint distance; default ``robot.resolution``); edges are checked at
    ``factor * resolution``. padding: metres the robot is inflated by, as in planning. certified:
    also certify every edge (``robot.certify_motion`` with ``min_step``).

    Returns a PathCheck. Raises TypeError / ValueError naming the argument for a malformed path,
    start or goals (shape, dof, NaN), a non-positive resolution or factor, or negative padding.
    """
    dof = int(robot.dof)
    path = _configurations("path", getattr(path, "path", path), dof, rows=True)
    if start is not None:
        start = _configurations("start", start, dof, rows=False)
    if goals is not None:
        goals = _configurations("goals", goals, dof, rows=True)
    base = robot.resolution if resolution is None else resolution
    check_res = _positive("resolution", base, "samples per unit joint distance") * _positive("factor", factor, "x")
    try:
        padding = float(padding)
    except (TypeError, ValueError):
        raise TypeError(f"padding must be a number (metres), got {padding!r}") from None
    if not (math.isfinite(padding) and padding >= 0):
        raise ValueError(f"padding must be finite and >= 0 (metres), got {padding!r}")

    reasons = []
    if start is not None and np.max(np.abs(path[0] - start)) > ENDPOINT_TOL:
        reasons.append("path does not begin at the start")
    if goals is not None and np.min(np.max(np.abs(goals - path[-1]), axis=1)) > ENDPOINT_TOL:
        reasons.append("path does not end at a goal")
    bad_waypoints = int((~robot.is_valid_many(path, env, padding=padding)).sum())
    if bad_waypoints:
        reasons.append(f"{bad_waypoints} of {len(path)} waypoints collide")
    failing, depth = [], 0.0
    for i, (a, b) in enumerate(zip(path[:-1], path[1:])):
        if not robot.is_motion_valid(a, b, env, resolution=check_res, padding=padding):
            failing.append(i)
            depth = max(depth, deepest_penetration(robot, env, a, b, check_res, padding))
    bad = len(failing) if len(path) > 1 else bad_waypoints
    if failing:
        reasons.append(f"{len(failing)} of {len(path) - 1} edges collide at {check_res:g} samples/unit, "
                       f"deepest penetration {depth * 1e3:.3g} mm")
    if certified:
        uncertified = [i for i, (a, b) in enumerate(zip(path[:-1], path[1:]))
                       if not certified_edge(robot, env, a, b, padding, min_step)]
        if uncertified:
            bad += len(uncertified)
            failing = sorted(set(failing) | set(uncertified))
            reasons.append(f"{len(uncertified)} of {len(path) - 1} edges could not be certified collision-free")
    return PathCheck(ok=not reasons, reason="; ".join(reasons) or None, edges=len(path) - 1,
                     failing_edges=tuple(failing), bad_edges=bad, bad_waypoints=bad_waypoints,
                     max_depth_m=float(depth), resolution=float(check_res))


def certified_edge(robot, env, a, b, padding: float, min_step: float) -> bool:
    """Whether a fresh certificate proves edge a -> b free. A planner's proof of an edge may come
    from a longer edge it lies on (a shortcut's ends, simdplan's Checker::piece), whose samples fall
    elsewhere: a certificate of the edge alone, on its own grid, can then stop at ``min_step`` as
    too close to call. Such an edge gets a second certificate with steps RETRY_STEP_FACTOR times
    finer (never below MIN_STEP_FLOOR) before it counts as uncertified."""
    cert = robot.certify_motion(a, b, env, padding, min_step)
    if cert.status != "undecided":
        return cert.free
    finer = max(min_step / RETRY_STEP_FACTOR, MIN_STEP_FLOOR)
    return finer < min_step and robot.certify_motion(a, b, env, padding, finer).free


def deepest_penetration(robot, env, a, b, resolution: float, padding: float = 0.0) -> float:
    """Deepest penetration (metres) over the samples the motion check of edge a -> b takes at
    ``resolution`` samples per unit joint distance (0.0 if none collides)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = robot.motion_samples(a, b, resolution)
    Q = a + np.linspace(0.0, 1.0, n + 1)[:, None] * (b - a)
    bad = Q[~robot.is_valid_many(Q, env, padding=padding)]
    depths = [v.depth for q in bad for v in robot.why_invalid(q, env, padding=padding)]
    return float(max(depths, default=0.0))
