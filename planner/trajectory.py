"""From a path to a timed motion: time parameterization within joint limits, checked as executed.

``time_parameterize(robot, path, env)`` (and ``PlanResult.trajectory``) returns a ``Trajectory``:

- Without jerk limits (method "toppra"): corners are blended by circular arcs within
  ``max_deviation`` (planner.blend), then TOPP-RA (the ``toppra`` package; H. Pham and Q.-C. Pham,
  "A new approach to time-optimal path parameterization based on reachability analysis", IEEE T-RO
  2018) gives the fastest speed along that curve under the velocity and acceleration limits, at rest
  at the start, the end and every corner that is not blended. Between TOPP-RA's gridpoints the path
  acceleration is constant, and positions are evaluated on the blended curve itself, so the motion
  never leaves the curve that was checked.
- With jerk limits (method "ruckig"): Ruckig (the ``ruckig`` package, community version; L. Berscheid
  and T. Kroeger, "Jerk-limited real-time trajectory generation with arbitrary target states", RSS
  2021) moves rest to rest along every edge with phase synchronization, which keeps each move on its
  straight edge. NOTE: corners are not blended in this mode (the community version has no waypoints);
  every waypoint is a stop.

In both, interior waypoints on a straight edge (within trajectory_path.COLLINEAR_TOLERANCE of the
segment between the waypoints around them, e.g. from ``interpolate``, or near-duplicates) are passed
through at speed, not made corners; waypoints outside the joint limits are refused. The motion
starts exactly at the first waypoint and ends exactly at the last, at rest.

The executed curve is the checked curve: every edge of the path (without those waypoints) is checked
again (certified Link proves it, or discrete samples at the planning resolution), and every arc as
planner.blend says. Where an arc is not free its corner's deviation is cut to a quarter, up to three
times, then the motion stops at that corner; ``Trajectory.stats`` counts how often.

Limits are checked analytically inside every TOPP-RA grid interval and by finite differences at
1 kHz (for slow motions, at most FD_CHECKS_PER_INTERVAL samples per interval); if any is exceeded
(between TOPP-RA's gridpoints, on arcs) the grid intervals where it happens are split and the
stretch is parameterized again (limits 2% tighter where splitting cannot help).

The work grows with the path, not with the duration: a trajectory longer than MAX_DURATION (an
hour) is refused with a ValueError, up front where a lower bound on its duration shows it, and
``Trajectory.t`` has at most MAX_SAMPLES rows.

Units: seconds; joint values in rad or m; velocities per second, accelerations per second squared.
"""

from __future__ import annotations

import csv
import json
import logging
import os
import time

import numpy as np

from simdplan._format import json_value
from simdplan.planner.blend import BlendedPath, arc_is_free, sphere_speed
from simdplan.planner.settings import LINKS
from simdplan.planner.trajectory_path import (check_limits, checked_waypoints, joint_bounds, least_duration,
                                              passing_through)
from simdplan.validation import as_number, check_padding, reject_text

# default acceleration limit = this times the velocity limit (1/s): a joint reaches its top speed
# from rest in half a second. URDFs give no acceleration limits; pass your robot's where you know them.
DEFAULT_ACCELERATION_RATE = 2.0
# joint-space distance (rad / m) a blended corner may pass from its waypoint, by default
DEFAULT_MAX_DEVIATION = 0.05
# a corner whose arc collides is retried at a quarter of its deviation this many times, then stops
BLEND_RETRIES = 3
# seconds between the rows of Trajectory.t / q / qd / qdd (sample() gives any time)
DEFAULT_SAMPLE_PERIOD = 0.01
# rate (Hz) of the finite-difference limit check and its relative slack for rounding
CHECK_RATE = 1000.0
LIMIT_SLACK = 1e-6
# TOPP-RA holds the limits at its gridpoints only; on arcs the velocity and acceleration of a joint
# vary between them (by about 1% at ARC_GRID_ANGLE), so it is given limits this much tighter
# (where the check still fails, the grid is refined there)
LIMIT_MARGIN = 0.015
# TOPP-RA gridpoints: at most this joint-space distance apart on lines, this angle apart on arcs
GRID_STEP = 0.05
ARC_GRID_ANGLE = np.pi / 32
# gridpoints per stretch at most when intervals are split where limits are exceeded
MAX_GRIDPOINTS = 4000
# grid intervals per stretch between stops at least
MIN_STRETCH_INTERVALS = 4
# a stretch between two stops shorter than this (joint-space length, rad or m) is not moved along:
# far below any encoder's resolution, and TOPP-RA can neither grid nor control it (1e-10 and 2e-16
# failed; 1e-8 is timed)
MIN_STRETCH_LENGTH = 1e-9
# analytic velocity and acceleration are checked at this many instants inside every grid interval
CHECKS_PER_INTERVAL = 8
# the finite-difference check runs at CHECK_RATE, but at most this many samples per grid interval on
# average: its work then grows with the path, not with the duration. Finite differences of a motion
# whose velocity is continuous are averages of its velocity and acceleration, which the analytic
# check samples in every interval; a slow motion loses nothing by fewer of them.
FD_CHECKS_PER_INTERVAL = 64
# seconds: a longer trajectory is refused (before it is timed where a lower bound shows it, else as
# soon as TOPP-RA or Ruckig gives its duration). An hour for one planned motion is a mistake in the
# limits or scales (units, a scale of 1e-7); a slower robot can be given several paths.
MAX_DURATION = 3600.0
# rows of Trajectory.t at most: where the sample period would give more, it grows to fit (an hour at
# the default period fits). sample() evaluates any times; its memory per call is bounded by
# SAMPLE_BLOCK times evaluated at once.
MAX_SAMPLES = int(MAX_DURATION / DEFAULT_SAMPLE_PERIOD) + 2
SAMPLE_BLOCK = 1 << 15
METHODS = ("toppra", "ruckig")


class Trajectory:
    """A timed motion. ``t`` (n,) seconds from 0 to ``duration``; ``q``, ``qd``, ``qdd`` (n, dof)
    positions, velocities, accelerations at those times (every ``sample_period`` and the end; the
    period grows where it would give more than MAX_SAMPLES rows, and ``stats["sample_period"]`` says
    which was used). ``sample(times)`` evaluates the exact motion at any times. ``ends``: the
    positions (start, end) the motion is at exactly at times 0 and ``duration`` (the path's first and
    last waypoints), at rest. ``stats``: method, duration, corners, blended, reduced (blends cut to
    stay collision-free), stopped (corners where the motion rests), deviations (per corner, the
    deviation used), collinear (interior waypoints passed through as lying on a straight edge, see
    trajectory_path.COLLINEAR_TOLERANCE), limit_retries, parameterize_time_ns, check_time_ns, sample_period."""

    def __init__(self, joint_names, sections, stats: dict, sample_period: float = DEFAULT_SAMPLE_PERIOD,
                 ends=None):
        self.joint_names = list(joint_names)
        self._sections = sections  # list of (t0, duration, evaluate(tau) -> (q, qd, qdd))
        self._starts = np.array([t0 for t0, _, _ in sections])
        self._ends = None if ends is None else tuple(np.array(e, dtype=np.float64) for e in ends)
        self.duration = float(sum(d for _, d, _ in sections))
        self.stats = stats
        self.stats["duration"] = self.duration
        period = max(float(sample_period), self.duration / (MAX_SAMPLES - 2))
        self.stats["sample_period"] = period
        n = int(np.floor(self.duration / period + 1e-9)) + 1
        t = np.arange(n) * period
        if t[-1] < self.duration:
            t = np.r_[t, self.duration]
        self.t = t
        self.q, self.qd, self.qdd = self.sample(t)

    def sample(self, times) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q, qd, qdd), each (len(times), dof), at ``times`` (seconds; a number or a 1-d sequence).
        Times before 0 give the start, times after ``duration`` the end (the motion is at rest
        there); a time that is not finite raises a ValueError."""
        reject_text(times, "times")
        tt = np.atleast_1d(np.asarray(times, dtype=np.float64))
        if tt.ndim != 1:
            raise ValueError(f"times must be a number or a 1-d sequence of seconds, got shape {tt.shape}")
        bad = np.flatnonzero(~np.isfinite(tt))
        if len(bad):
            raise ValueError(f"times must be finite (seconds in [0, {self.duration:g}]): times[{bad[0]}] = "
                             f"{float(tt[bad[0]])!r}")
        tt = np.clip(tt, 0.0, self.duration)
        dof = len(self.joint_names)
        q, qd, qdd = np.empty((len(tt), dof)), np.empty((len(tt), dof)), np.empty((len(tt), dof))
        # in blocks: the evaluation's temporaries are several times the output
        for b0 in range(0, len(tt), SAMPLE_BLOCK):
            part = slice(b0, b0 + SAMPLE_BLOCK)
            tb = tt[part]
            which = np.clip(np.searchsorted(self._starts, tb, side="right") - 1, 0, len(self._sections) - 1)
            for k in np.unique(which):
                m = np.flatnonzero(which == k) + b0
                t0, d, evaluate = self._sections[k]
                q[m], qd[m], qdd[m] = evaluate(np.clip(tt[m] - t0, 0.0, d))
        if self._ends is not None:
            # exactly on the path's first and last waypoints (the curve's own arithmetic ends within
            # rounding of them), at rest; the start wins when a path too short to time takes no time
            end = tt >= self.duration
            q[end], qd[end] = self._ends[1], 0.0
            start = tt <= 0.0
            q[start], qd[start] = self._ends[0], 0.0
        return q, qd, qdd

    def limit_violations(self, velocity_limits, acceleration_limits, jerk_limits=None,
                         rate: float = CHECK_RATE) -> dict:
        """Largest ratio |value| / limit per kind, from finite differences of positions sampled at
        ``rate`` Hz (velocity: first differences; acceleration: second; jerk: third). A ratio above
        1 + LIMIT_SLACK is a violation. The samples are taken in blocks: memory stays bounded for any
        duration and rate."""
        rate = as_number(rate, "rate", 0.0)
        n = max(4, int(np.ceil(self.duration * rate)) + 1)
        t = np.linspace(0.0, self.duration, n)
        worst: dict = {}
        # blocks overlap by 3 samples, so every difference up to the third lies within one of them
        for b0 in range(0, n - 3, SAMPLE_BLOCK):
            tb = t[b0:b0 + SAMPLE_BLOCK + 3]
            part = fd_ratios(self.sample(tb)[0], tb, velocity_limits, acceleration_limits, jerk_limits)
            worst = {k: max(v, worst.get(k, 0.0)) for k, v in part.items()}
        return worst

    def to_dict(self) -> dict:
        return {"joint_names": self.joint_names, "duration": self.duration, "t": self.t.tolist(),
                "q": self.q.tolist(), "qd": self.qd.tolist(), "qdd": self.qdd.tolist(),
                "stats": {k: json_value(v) for k, v in self.stats.items()}}

    def save(self, path: str | os.PathLike) -> None:
        """``.json``: everything (to_dict). ``.csv``: one row per sample time; columns ``t`` (s), then
        ``q:<joint>``, ``qd:<joint>``, ``qdd:<joint>`` for every joint (rad or m, per s, per s^2)."""
        path = os.fspath(path)
        ext = os.path.splitext(path)[1].lower()
        if ext == ".json":
            with open(path, "w") as f:
                json.dump(self.to_dict(), f)
        elif ext == ".csv":
            with open(path, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(["t"] + [f"{p}:{n}" for p in ("q", "qd", "qdd") for n in self.joint_names])
                for row in np.column_stack([self.t, self.q, self.qd, self.qdd]):
                    w.writerow([repr(float(x)) for x in row])
        else:
            raise ValueError(f"cannot save a trajectory as {ext or 'a file without extension'!r}: use .json or .csv")

    def __repr__(self) -> str:
        return (f"Trajectory(duration={self.duration:.3f} s, samples={len(self.t)}, "
                f"method={self.stats.get('method')!r}, "
                f"stopped={self.stats.get('stopped')}, reduced={self.stats.get('reduced')})")


def _differences(q: np.ndarray, t: np.ndarray, orders: int) -> list[np.ndarray]:
    """Finite differences of positions ``q`` (n, dof) at evenly spaced times ``t``: velocity,
    acceleration and, with orders 3, jerk (each one row shorter than the last)."""
    dt = t[1] - t[0] if len(t) > 1 and t[-1] > t[0] else 1.0
    out = [np.diff(q, axis=0) / dt]
    for _ in range(orders - 1):
        out.append(np.diff(out[-1], axis=0) / dt)
    return out


def _over_limits(q: np.ndarray, t: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Per sample time: whether a finite difference touching it exceeds a limit (beyond LIMIT_SLACK)."""
    vel, acc = _differences(q, t, 2)
    bad_v = (np.abs(vel) > v * (1 + LIMIT_SLACK)).any(axis=1)
    bad_a = (np.abs(acc) > a * (1 + LIMIT_SLACK)).any(axis=1)
    over = np.zeros(len(t), dtype=bool)
    over[:-1] |= bad_v
    over[1:] |= bad_v
    over[1:-1] |= bad_a
    return over


def _split_where(grid: np.ndarray, s: np.ndarray) -> np.ndarray:
    """``grid`` with the midpoint added to every interval holding one of ``s`` and longer than 1e-6."""
    k = np.unique(np.clip(np.searchsorted(grid, s, side="right") - 1, 0, len(grid) - 2))
    k = k[np.diff(grid)[k] > 1e-6]
    return np.union1d(grid, 0.5 * (grid[k] + grid[k + 1]))


def fd_ratios(q: np.ndarray, t: np.ndarray, velocity_limits, acceleration_limits, jerk_limits=None) -> dict:
    """Largest |finite difference| / limit per kind ("velocity", "acceleration", "jerk" when given)
    of positions ``q`` (n, dof) at the evenly spaced times ``t`` (n,)."""
    limits = {"velocity": velocity_limits, "acceleration": acceleration_limits}
    if jerk_limits is not None:
        limits["jerk"] = jerk_limits
    diffs = _differences(q, t, len(limits))
    return {kind: float((np.abs(d) / lim).max()) if len(d) else 0.0 for (kind, lim), d in zip(limits.items(), diffs)}


def _limits(value, default, dof: int, names, what: str, scale: float) -> np.ndarray:
    if value is None:
        value = default
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim == 0:
        arr = np.full(dof, float(arr))
    if arr.shape != (dof,):
        raise ValueError(f"{what} must be a number or {dof} numbers (one per joint), got shape {arr.shape}")
    bad = [names[j] for j in range(dof) if not (np.isfinite(arr[j]) and arr[j] > 0)]
    if bad:
        src = "" if value is not default else " (the robot's, from its URDF)"
        raise ValueError(f"{what}{src} must be finite and > 0 for every joint; not so for {', '.join(bad)}"
                         + ("; pass them explicitly" if value is default else ""))
    return arr * scale


def _scale(v, what: str) -> float:
    f = float(v)
    if not (np.isfinite(f) and 0 < f <= 1):
        raise ValueError(f"{what} must be in (0, 1], got {v!r}")
    return f


def time_parameterize(robot, path, env=None, *, velocity_limits=None, acceleration_limits=None, jerk_limits=None,
                      velocity_scale: float = 1.0, acceleration_scale: float = 1.0, method: str | None = None,
                      max_deviation: float = DEFAULT_MAX_DEVIATION, link: str = "certified", padding: float = 0.0,
                      resolution: float | None = None, sample_period: float = DEFAULT_SAMPLE_PERIOD) -> Trajectory:
    """A timed trajectory through ``path`` ((k, dof) waypoints, as PlanResult.path) for ``robot``,
    collision-free in ``env`` as executed (see the module docstring).

    velocity_limits: (dof,) or one number, rad/s or m/s (default: robot.velocity_limits, from the
    URDF). acceleration_limits: per s^2 (default: DEFAULT_ACCELERATION_RATE times the robot's velocity
    limits). jerk_limits: per s^3; when given, method "ruckig" (no blending). The scales (0, 1] multiply
    the limits. max_deviation: joint-space distance a blended corner may pass from its waypoint (0:
    stop at every corner). link: "certified" (proven) or "discrete" (samples at ``resolution``, default
    robot.resolution) for the check of the executed curve; padding (m) as in planning.
    Interior waypoints on a straight edge (within COLLINEAR_TOLERANCE) are passed through, counted in
    stats["collinear"]. A ValueError names a waypoint outside the joint limits, an edge that is not
    collision-free, or limits so low that the motion would last over MAX_DURATION.
    """
    if jerk_limits is None and method in (None, "toppra"):
        _toppra()  # before the clock starts: the first import is not the parameterization's time
    t_start = time.perf_counter_ns()
    names = robot.joint_names
    dof = robot.dof
    q = robot.check_joint_values(np.atleast_2d(np.asarray(path, dtype=np.float64)), "path")
    if q.shape[1] != dof or len(q) < 1:
        raise ValueError(f"path must be (k, {dof}) waypoints with k >= 1, got shape {q.shape}")
    check_limits(robot, q)
    if link not in LINKS:
        raise ValueError(f'link must be "certified" or "discrete", got {link!r}')
    if method is None:
        method = "ruckig" if jerk_limits is not None else "toppra"
    if method not in METHODS:
        raise ValueError(f"method must be one of {', '.join(METHODS)}, got {method!r}")
    dev = as_number(max_deviation, "max_deviation", 0.0, allow_zero=True)
    period = as_number(sample_period, "sample_period", 0.0)
    padding = check_padding(padding)
    robot_v = robot.velocity_limits
    v = _limits(velocity_limits, robot_v, dof, names, "velocity_limits", _scale(velocity_scale, "velocity_scale"))
    a_default = DEFAULT_ACCELERATION_RATE * robot_v if acceleration_limits is None else None
    a = _limits(acceleration_limits, a_default, dof, names, "acceleration_limits",
                _scale(acceleration_scale, "acceleration_scale"))
    j = None
    if jerk_limits is not None:
        j = _limits(jerk_limits, None, dof, names, "jerk_limits", 1.0)
    if method == "ruckig" and j is None:
        raise ValueError("method 'ruckig' needs jerk_limits (per s^3)")
    if method == "toppra" and j is not None:
        raise ValueError("TOPP-RA does not bound jerk: with jerk_limits use method 'ruckig' (or leave method unset)")

    keep = passing_through(q)
    least = least_duration(q[keep], v, a)
    if least > MAX_DURATION:  # refused before any check or timing: the work would be for nothing
        raise ValueError(_too_long(least, v, a, "at least "))
    keep = checked_waypoints(robot, env, q, keep, link, padding, resolution)
    qk = q[keep]
    t_check = time.perf_counter_ns() - t_start
    stats = {"method": method, "link": link, "max_deviation": dev, "velocity_limits": v, "acceleration_limits": a,
             "collinear": len(q) - len(keep)}
    ends = (q[0], q[-1])
    if method == "ruckig":
        from simdplan.planner.trajectory_ruckig import rest_to_rest_sections  # noqa: PLC0415 (optional dependency)

        t0 = time.perf_counter_ns()
        sections = rest_to_rest_sections(qk, v, a, j)
        total = sum(d for _, d, _ in sections)
        if total > MAX_DURATION:
            raise ValueError(_too_long(total, v, a))
        corners = max(len(qk) - 2, 0)
        stats.update(jerk_limits=j, corners=corners, blended=0, reduced=0, stopped=corners,
                     deviations=np.zeros(corners), limit_retries=0, check_time_ns=t_check,
                     parameterize_time_ns=time.perf_counter_ns() - t0)
        return Trajectory(names, sections, stats, period, ends)

    t0 = time.perf_counter_ns()
    blended, reduced = _blend_free(robot, env, qk, dev, link, padding, resolution)
    t_check += time.perf_counter_ns() - t0
    t0 = time.perf_counter_ns()
    sections, retries = _toppra_sections(blended, v, a)
    used = blended.used_deviations()
    stats.update(corners=len(used), blended=int((used > 0).sum()), reduced=reduced,
                 stopped=int(sum(c["kind"] == "stop" for c in blended.corners)), deviations=used,
                 limit_retries=retries, check_time_ns=t_check, parameterize_time_ns=time.perf_counter_ns() - t0)
    return Trajectory(names, sections, stats, period, ends)


def _too_long(seconds: float, v: np.ndarray, a: np.ndarray, bound: str = "") -> str:
    """The refusal of a trajectory over MAX_DURATION, with the limits that make it so slow."""
    return (f"the trajectory would last {bound}{seconds:.4g} s, more than MAX_DURATION ({MAX_DURATION:g} s): the "
            f"velocity limits (down to {v.min():.3g}) or acceleration limits (down to {a.min():.3g}), after "
            f"velocity_scale and acceleration_scale, are far too low for this path")


def _blend_free(robot, env, q: np.ndarray, dev: float, link: str, padding: float, resolution):
    """The blended path with every arc collision-free: colliding arcs' deviations are quartered up to
    BLEND_RETRIES times, then those corners stop. Returns (BlendedPath, corners reduced)."""
    devs = np.full(max(len(q) - 2, 0), dev)
    tries = np.zeros(len(devs), dtype=int)
    speed = sphere_speed(robot) if link == "certified" else 0.0
    lower, upper = joint_bounds(robot)
    checked: dict[tuple[int, float], bool] = {}
    while True:
        path = BlendedPath(q, devs, lower, upper)
        bad = []
        for c in path.arcs():
            key = (c["index"], round(c["deviation"], 15))
            if key not in checked:
                checked[key] = arc_is_free(robot, env, c, link, padding, resolution, speed, lower, upper)
            if not checked[key]:
                bad.append(c["index"])
        if not bad:
            return path, int((tries > 0).sum())
        for i in path.source_index[bad] - 1:  # corner i of q is its waypoint i + 1
            tries[i] += 1
            devs[i] = 0.0 if tries[i] > BLEND_RETRIES else devs[i] / 4.0


class PathSection:
    """The stretch [s0, s1] of a BlendedPath as a TOPP-RA geometric path."""

    def __init__(self, path: BlendedPath, s0: float, s1: float):
        self.path, self.s0, self.s1 = path, s0, s1

    def __call__(self, ss, order: int = 0):
        return self.path(np.asarray(ss, dtype=np.float64), order)

    @property
    def dof(self) -> int:
        return self.path.dof

    @property
    def path_interval(self) -> np.ndarray:
        return np.array([self.s0, self.s1])

    @property
    def waypoints(self):
        return None


def _gridpoints(path: BlendedPath, s0: float, s1: float) -> np.ndarray:
    """Piece boundaries inside [s0, s1], lines cut every GRID_STEP, arcs every ARC_GRID_ANGLE."""
    pts = [s0, s1]
    for kind, a, length, what in path.pieces:
        b = a + length
        if b <= s0 or a >= s1:
            continue
        n = int(np.ceil(length / GRID_STEP)) if kind == "line" else int(np.ceil(what["alpha"] / ARC_GRID_ANGLE))
        pts.extend(np.linspace(max(a, s0), min(b, s1), max(n, 1) + 1))
    # a stretch from rest to rest needs two intervals at least (speed up, slow down); a few more
    # let a short stretch reach its top speed
    pts.extend(np.linspace(s0, s1, MIN_STRETCH_INTERVALS + 1))
    g = np.unique(np.clip(pts, s0, s1))
    # gridpoints closer than MIN_STRETCH_LENGTH (a piece boundary beside a tiny edge) are merged:
    # TOPP-RA's intervals that short fail its limits; the stretch keeps both of its ends
    keep = g[np.r_[True, np.diff(g) >= MIN_STRETCH_LENGTH]]
    keep[-1] = s1  # if s1 itself was merged, it replaces the point it was merged into
    return keep


def _toppra():
    """The toppra package (imported on first use: it loads matplotlib, about 0.3 s)."""
    try:
        import toppra  # noqa: PLC0415 (optional dependency)
        import toppra.algorithm  # noqa: PLC0415
        import toppra.constraint  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError('time parameterization needs toppra: pip install "simdplan[timing]"') from exc
    logging.getLogger("toppra").setLevel(logging.ERROR)  # its INFO/WARNING lines would flood a batch
    return toppra


def _toppra_sections(path: BlendedPath, v: np.ndarray, a: np.ndarray):
    """Rest-to-rest TOPP-RA between consecutive stops, under the limits less LIMIT_MARGIN; where the
    1 kHz finite-difference check still finds them exceeded, the grid is split there (or, failing
    that, the limits tightened 2%) and the stretch solved again. Returns (sections, retries)."""
    toppra = _toppra()
    sections, t0, retries = [], 0.0, 0
    for s0, s1 in zip(path.stops[:-1], path.stops[1:]):
        if s1 - s0 < MIN_STRETCH_LENGTH:
            continue
        grid = _gridpoints(path, s0, s1)
        shrink = 1.0 - LIMIT_MARGIN
        for _ in range(24):
            algo = toppra.algorithm.TOPPRA(_constraints(v, a, shrink), PathSection(path, s0, s1), gridpoints=grid,
                                           solver_wrapper="seidel")
            algo.compute_parameterization(0.0, 0.0)
            data = algo.problem_data
            if data.sd_vec is None or np.any(~np.isfinite(data.sd_vec)):
                raise RuntimeError(f"TOPP-RA could not parameterize the stretch s = [{s0:.4g}, {s1:.4g}] "
                                   f"(return code {data.return_code})")
            section = _ConstAccel(path, grid, np.maximum(data.sd_vec, 0.0))
            if t0 + section.duration > MAX_DURATION:  # before its samples are checked
                raise ValueError(_too_long(t0 + section.duration, v, a, "at least "))
            bad_s = section.exceeding(v, a)
            if not len(bad_s):
                break
            retries += 1
            # first split the grid intervals where the limits are exceeded (on arcs, between gridpoints);
            # where that cannot help (intervals already short), tighten the limits instead
            finer = _split_where(grid, bad_s)
            if len(finer) > len(grid) and len(finer) <= MAX_GRIDPOINTS:
                grid = finer
            else:
                shrink *= 0.98
        else:
            raise RuntimeError("limits still exceeded after refining the grid and tightening them; please report "
                               "this path")
        sections.append((t0, section.duration, section))
        t0 += section.duration
    if not sections:  # a path that does not move
        sections.append((0.0, 0.0, _ConstAccel(path, np.array([0.0, 0.0]), np.zeros(2))))
    return sections, retries


_CONSTRAINTS: dict = {}


def _constraints(v: np.ndarray, a: np.ndarray, shrink: float) -> list:
    """TOPP-RA's joint velocity and acceleration constraints, kept between calls: building them
    formats the limit arrays for an assertion message, a third of a short path's parameterization."""
    import toppra.constraint  # noqa: PLC0415 (optional dependency)

    key = (v.tobytes(), a.tobytes(), shrink)
    cons = _CONSTRAINTS.get(key)
    if cons is None:
        if len(_CONSTRAINTS) > 64:
            _CONSTRAINTS.clear()
        cons = _CONSTRAINTS[key] = [toppra.constraint.JointVelocityConstraint(v * shrink),
                                    toppra.constraint.JointAccelerationConstraint(a * shrink)]
    return cons


class _ConstAccel:
    """s(t) with constant path acceleration between TOPP-RA's gridpoints (sd given at each); positions
    on the path itself."""

    def __init__(self, path: BlendedPath, grid: np.ndarray, sd: np.ndarray):
        self.path = path
        self.s = grid
        self.sd = sd
        ds = np.diff(grid)
        speed_sum = sd[:-1] + sd[1:]
        with np.errstate(divide="ignore", invalid="ignore"):
            dt = np.where(speed_sum > 0, 2.0 * ds / np.where(speed_sum > 0, speed_sum, 1.0), 0.0)
            self.sdd = np.where(ds > 0, (sd[1:] ** 2 - sd[:-1] ** 2) / (2.0 * np.where(ds > 0, ds, 1.0)), 0.0)
        self.t = np.r_[0.0, np.cumsum(dt)]
        self.duration = float(self.t[-1])
        # intervals of path with no speed at either end cannot be crossed at constant path acceleration
        self.stalled = (ds > 0) & ~(speed_sum > 0)

    def exceeding(self, v: np.ndarray, a: np.ndarray) -> np.ndarray:
        """Path positions s where the motion breaks a limit: inside stalled intervals; where
        velocity or acceleration exceed v or a (beyond LIMIT_SLACK) at CHECKS_PER_INTERVAL instants
        inside every interval and its ends; or where finite differences at 1 kHz (at most
        FD_CHECKS_PER_INTERVAL samples per interval on average) do."""
        bad = [0.5 * (self.s[:-1] + self.s[1:])[self.stalled]]
        frac = np.linspace(0.0, 1.0, CHECKS_PER_INTERVAL + 1)
        at = (self.t[:-1, None] + np.diff(self.t)[:, None] * frac[None, :]).ravel()
        # and the left-side values at each interval's end: evaluated just inside it
        tau = np.concatenate([at, self.t[1:] * (1 - 1e-12)])
        s, sd, sdd = self._s(tau)
        qd, qdd = self._rates(*self.path.derivatives(s, (1, 2)), sd, sdd)
        over = ((np.abs(qd) > v * (1 + LIMIT_SLACK)) | (np.abs(qdd) > a * (1 + LIMIT_SLACK))).any(axis=1)
        bad.append(s[over])
        fd_samples = min(int(np.ceil(self.duration * CHECK_RATE)), FD_CHECKS_PER_INTERVAL * (len(self.s) - 1))
        tt = np.linspace(0.0, self.duration, max(4, fd_samples + 1))
        s_tt = self._s(tt)[0]
        bad.append(s_tt[_over_limits(self.path(s_tt, 0), tt, v, a)])
        return np.concatenate(bad)

    def _s(self, tau: np.ndarray):
        k = np.clip(np.searchsorted(self.t, tau, side="right") - 1, 0, max(len(self.t) - 2, 0))
        u = tau - self.t[k]
        sdd = self.sdd[k] if len(self.sdd) else np.zeros_like(u)
        s = self.s[k] + self.sd[k] * u + 0.5 * sdd * u * u
        s = np.minimum(s, self.s[np.minimum(k + 1, len(self.s) - 1)])
        return s, np.maximum(self.sd[k] + sdd * u, 0.0), sdd

    @staticmethod
    def _rates(p1: np.ndarray, p2: np.ndarray, sd: np.ndarray, sdd: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Joint velocities and accelerations from the curve's tangent p1 and curvature p2 at path
        speed sd and acceleration sdd."""
        return p1 * sd[:, None], p2 * (sd * sd)[:, None] + p1 * sdd[:, None]

    def __call__(self, tau: np.ndarray):
        """Positions, velocities and accelerations at times tau (the curve looked up once)."""
        s, sd, sdd = self._s(tau)
        p0, p1, p2 = self.path.derivatives(s)
        return (p0, *self._rates(p1, p2, sd, sdd))
