"""The path a trajectory is made along (see trajectory.py): its waypoints within the joint limits,
those on a straight edge passed through instead of turned at, its edges checked collision-free, and
a lower bound on how long any motion along it takes.

Units: joint values in rad or m, seconds, limits per second and per second squared.
"""

from __future__ import annotations

import numpy as np

from simdplan.path_check import DEFAULT_MIN_STEP, certified_edge
from simdplan.robots.reports import Violation

# joint-space distance (rad or m): an interior waypoint this close to the straight segment between
# the waypoints kept before and after it is passed through at speed, not made a corner (near-duplicate
# waypoints are such points too). float32 holds a joint value to 2^-24 of its size, 3.7e-7 rad at
# 2 pi, so waypoints a float32 core puts on one straight edge (``interpolate``) can lie that far off
# it per joint, with a few roundings more, times sqrt(dof) (3.2e-7 on the example scenes); their
# corners are too slight to blend (below MIN_DEVIATION) and each would be a stop. 1e-5 covers that
# for dozens of joints yet is 10 um at a 1 m lever arm, below any arm's repeatability. The path timed
# and checked is the one without those waypoints, so the checked curve is still the executed one.
COLLINEAR_TOLERANCE = 1e-5


def check_limits(robot, q: np.ndarray) -> None:
    """Every waypoint within the joint limits (as strictly as the planners' checks), or a ValueError
    naming the first waypoint and joint that are not."""
    lower, upper = joint_bounds(robot)
    out = (q < lower) | (q > upper)
    if out.any():
        i, jj = (int(k[0]) for k in np.nonzero(out))
        why = Violation("joint_limit", joint=robot.joint_names[jj], value=float(q[i, jj]),
                        limits=(float(lower[jj]), float(upper[jj])))
        raise ValueError(f"waypoint {i} of the path is outside the joint limits: {why}")


def least_duration(q: np.ndarray, v: np.ndarray, a: np.ndarray) -> float:
    """A lower bound on the duration of any motion from rest at q[0] to rest at q[-1] through the
    midpoints of the edges of ``q`` in order, within velocity limits ``v`` and acceleration limits
    ``a``. Every motion made here passes those midpoints: an arc takes at most half of each edge."""
    pts = np.vstack([q[:1], 0.5 * (q[:-1] + q[1:]), q[-1:]])
    by_velocity = float((np.abs(np.diff(pts, axis=0)) / v).max(axis=1).sum())
    # from rest, a joint moves at most a t^2 / 2 in t: as far to each point from the start, and on to the end
    by_acceleration = float((np.sqrt(2.0 * np.abs(pts - q[0]) / a) + np.sqrt(2.0 * np.abs(q[-1] - pts) / a)).max())
    return max(by_velocity, by_acceleration)


def segment_distances(a: np.ndarray, b: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Distance from each row of ``p`` (m, dof) to the segment from ``a`` to ``b`` (rows of, or
    single, configurations)."""
    d = b - a
    dd = (d * d).sum(axis=-1)
    u = np.clip(((p - a) * d).sum(axis=-1) / np.where(dd > 0, dd, 1.0), 0.0, 1.0)
    return np.linalg.norm(a + u[..., None] * d - p, axis=-1)


def passing_through(q: np.ndarray, tol: float = COLLINEAR_TOLERANCE) -> np.ndarray:
    """Indices of the waypoints of ``q`` (k, dof) the motion is made through: both ends, and every
    interior waypoint but those within ``tol`` of the segment between the waypoints kept around
    them. Only waypoints within ``tol`` of the segment between their own neighbours can be dropped,
    so a path that turns back along its own line keeps its turns."""
    n = len(q)
    if n <= 2:
        return np.arange(n)
    droppable = np.r_[False, segment_distances(q[:-2], q[2:], q[1:-1]) <= tol, False]
    fixed = np.flatnonzero(~droppable)  # holds 0 and n - 1

    def fits(i: int, j: int) -> bool:
        return j == i + 1 or bool((segment_distances(q[i], q[j], q[i + 1:j]) <= tol).all())

    keep, i = [0], 0
    while i < n - 1:
        last = int(fixed[np.searchsorted(fixed, i, side="right")])  # the next waypoint that is kept anyway
        # the farthest waypoint reachable in one straight edge: doubling steps, then bisection (the
        # work grows as n log n; each edge taken is tested against every waypoint it drops)
        good, bad, step = i + 1, None, 1
        while good < last:
            j = min(i + 1 + step, last)
            if not fits(i, j):
                bad = j
                break
            good, step = j, 2 * step
        while bad is not None and bad - good > 1:
            mid = (good + bad) // 2
            good, bad = (mid, bad) if fits(i, mid) else (good, mid)
        keep.append(good)
        i = good
    return np.array(keep)


def edge_free(robot, env, a: np.ndarray, b: np.ndarray, link: str, padding: float, resolution) -> tuple[bool, str]:
    """Whether the straight motion from ``a`` to ``b`` is collision-free under ``link``, and what a
    failure means."""
    if link == "certified":
        # as simdplan.check_path does: an edge a planner proved as a piece of a longer edge may
        # need finer steps when certified on its own
        return certified_edge(robot, env, a, b, padding, DEFAULT_MIN_STEP), "it cannot be certified"
    return robot.is_motion_valid(a, b, env, resolution, padding), "a discrete sample collides"


def checked_waypoints(robot, env, q: np.ndarray, keep: np.ndarray, link: str, padding: float,
                      resolution) -> np.ndarray:
    """``keep`` (indices of waypoints of ``q``) with every edge between kept waypoints collision-free
    under ``link``. Where an edge past dropped waypoints is not, the edges of ``q`` it replaced are
    checked instead and their waypoints kept; a ValueError names the first edge of ``q`` not free."""
    out = [int(keep[0])]
    for i, k in zip(keep[:-1], keep[1:]):
        if k > i + 1 and edge_free(robot, env, q[i], q[k], link, padding, resolution)[0]:
            out.append(int(k))
            continue
        for e in range(i, k):
            ok, why = edge_free(robot, env, q[e], q[e + 1], link, padding, resolution)
            if not ok:
                raise ValueError(f"edge {e} of the path (waypoint {e} to {e + 1}) is not collision-free: {why}")
        out.extend(range(i + 1, k + 1))
    return np.array(out)


def joint_bounds(robot) -> tuple[np.ndarray, np.ndarray]:
    """The joint limits, unbounded for continuous joints (a path may run past +-pi on them)."""
    free = robot.continuous
    return np.where(free, -np.inf, robot.lower), np.where(free, np.inf, robot.upper)
