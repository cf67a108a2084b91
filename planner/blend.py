"""Blended paths: a polyline of joint configurations with its corners rounded by circular arcs.

A planner's path has corners; a robot moving through a corner without stopping leaves the polyline.
``BlendedPath`` says exactly where it goes instead: each corner q_i is replaced by the arc of a
circle (in joint space, in the plane of the two edges) tangent to both edges, whose closest point
to q_i lies ``deviation[i]`` from it (the geometric blend of Kunz and Stilman, "Time-optimal
trajectory generation for path following with bounded acceleration and velocity", RSS 2012). The
arc takes at most half of each edge, so neighbouring blends never overlap. A corner with deviation
below MIN_DEVIATION, or one that turns back on itself, stays sharp: the motion must come to rest
there (a stop).

The path is parameterized by arc length s (joint-space distance); ``__call__(s, order)`` gives the
configuration (order 0), the unit tangent (1) or the curvature vector (2), the interface TOPP-RA's
geometric paths have. Between stops the tangent is continuous; the curvature jumps where a line
meets an arc, and the arc's side is reported there (the larger acceleration need).

``check_curve`` proves (certified) or samples (discrete) the whole curve collision-free, arcs by
chords: every arc point is within the chord's sagitta of a chord point, and a sphere centre moves at
most ``sphere_speed`` times that joint-space distance, so chords checked with spheres inflated by
CURVE_PADDING (sagitta at most CURVE_PADDING / sphere_speed) prove the arc.
"""

from __future__ import annotations

import numpy as np

# metres: robot spheres are inflated by this when an arc is proven through its chords (see above)
CURVE_PADDING = 2e-4
# corners turning by more than pi minus this (radians) are stops: the arc would need a radius near 0
_REVERSAL = 1e-3
# corners turning by less than this are straight: no arc needed, no stop
_STRAIGHT = 1e-9
# joint-space distance: a corner blended less than this stops instead. So tight an arc nearly stops
# the motion anyway, and a time grid fine enough to hold the limits on it would cost far more.
MIN_DEVIATION = 1e-4


class BlendedPath:
    """A polyline ``waypoints`` (k, dof) with corner i (1 <= i <= k-2) blended within
    ``deviations[i - 1]`` (joint-space distance; 0: a stop), positions kept in [lower, upper] (the
    joint limits, optional). Duplicate consecutive waypoints are dropped first (``source_index``
    maps the kept ones back; a corner's ``index`` counts kept waypoints). ``stops``: arc lengths
    where the motion must be at rest (start, sharp corners, end)."""

    def __init__(self, waypoints, deviations, lower=None, upper=None):
        q = np.asarray(waypoints, dtype=np.float64)
        # an arc lies in the convex hull of its corner's edges, so inside any box holding the
        # waypoints; positions are clipped into [lower, upper] only against rounding
        self.lower = None if lower is None else np.asarray(lower, dtype=np.float64)
        self.upper = None if upper is None else np.asarray(upper, dtype=np.float64)
        keep = np.r_[True, np.linalg.norm(np.diff(q, axis=0), axis=1) > 0]
        dev_in = np.asarray(deviations, dtype=np.float64)
        if len(dev_in) != max(len(q) - 2, 0):
            raise ValueError(f"{len(q)} waypoints have {max(len(q) - 2, 0)} corners, got {len(dev_in)} deviations")
        # a dropped duplicate takes its corner's deviation with it (one waypoint: no corner, one end)
        dev_full = np.r_[0.0, dev_in, 0.0][:len(q)][keep]
        self.waypoints = q[keep]
        self.source_index = np.flatnonzero(keep)  # row of ``waypoints`` each kept waypoint came from
        self.dof = q.shape[1]
        self.requested = dev_full[1:-1]
        self._build()

    # ----- construction -----
    def _build(self) -> None:
        q = self.waypoints
        n = len(q)
        seg = np.diff(q, axis=0)
        length = np.linalg.norm(seg, axis=1)
        unit = seg / np.maximum(length, 1e-300)[:, None]
        # per corner: blend length along each edge (0: sharp), radius, centre, start axis, angle
        self.corners = []
        for i in range(1, n - 1):
            y0, y1 = unit[i - 1], unit[i]
            cos_a = float(np.clip(y0 @ y1, -1.0, 1.0))
            alpha = float(np.arccos(cos_a))
            dev = float(self.requested[i - 1])
            if alpha < _STRAIGHT:
                self.corners.append({"kind": "straight", "index": i})
                continue
            if dev < MIN_DEVIATION or alpha > np.pi - _REVERSAL:
                self.corners.append({"kind": "stop", "index": i})
                continue
            half = 0.5 * alpha
            # 1 - cos(half) written as 2 sin(half / 2)^2: the difference rounds to 0 below half ~ 1e-8
            # (a division by zero) and loses all its digits well before
            sin_q = np.sin(0.5 * half)
            ell = min(0.5 * length[i - 1], 0.5 * length[i], dev / np.tan(0.5 * half))
            r = ell / np.tan(half)
            deviation = r * 2.0 * sin_q * sin_q / np.cos(half)
            if deviation < MIN_DEVIATION:  # a short edge left the arc less than the least blend
                self.corners.append({"kind": "stop", "index": i})
                continue
            bis = y1 - y0
            centre = q[i] + bis / np.linalg.norm(bis) * (r / np.cos(half))
            start = q[i] - ell * y0
            x = (start - centre) / r
            self.corners.append({"kind": "arc", "index": i, "ell": ell, "r": r, "centre": centre, "x": x, "y": y0,
                                 "alpha": alpha, "deviation": deviation})
        # pieces in order, (kind, arc length where it starts, its length, what it is): ("line", s0, len,
        # (start point, unit direction)) and ("arc", s0, len, corner dict)
        pieces, stops = [], [0.0]
        s = 0.0
        cut_in = np.zeros(n - 1)   # length taken off the start of edge e by the blend before it
        cut_out = np.zeros(n - 1)  # ... off its end by the blend after it
        for c in self.corners:
            if c["kind"] == "arc":
                cut_out[c["index"] - 1] = c["ell"]
                cut_in[c["index"]] = c["ell"]
        for e in range(n - 1):
            a = q[e] + cut_in[e] * unit[e]
            ln = length[e] - cut_in[e] - cut_out[e]
            if ln > 0:
                pieces.append(("line", s, ln, (a, unit[e])))
                s += ln
            if e < n - 2:
                c = self.corners[e]
                if c["kind"] == "arc":
                    arc_len = c["r"] * c["alpha"]
                    pieces.append(("arc", s, arc_len, c))
                    c["s0"], c["s1"] = s, s + arc_len
                    s += arc_len
                elif c["kind"] == "stop":
                    stops.append(s)
        stops.append(s)
        self.pieces = pieces
        self.length = s
        self.stops = np.array(sorted(set(stops)))
        self._starts = np.array([p[1] for p in pieces]) if pieces else np.zeros(1)
        self._is_arc = np.array([p[0] == "arc" for p in pieces], dtype=bool)
        # per piece, for evaluation without a loop: a line is base + u dir; an arc is
        # base + r (x cos(u / r) + dir sin(u / r)) (base its centre, dir its tangent at the start)
        dof = self.dof
        line = [p[0] == "line" for p in pieces]
        self._base = np.array([p[3][0] if ln else p[3]["centre"] for p, ln in zip(pieces, line)]).reshape(-1, dof)
        self._dir = np.array([p[3][1] if ln else p[3]["y"] for p, ln in zip(pieces, line)]).reshape(-1, dof)
        self._x = np.array([np.zeros(dof) if ln else p[3]["x"] for p, ln in zip(pieces, line)]).reshape(-1, dof)
        self._r = np.array([1.0 if ln else p[3]["r"] for p, ln in zip(pieces, line)])

    # ----- evaluation -----
    def piece_index(self, s: np.ndarray) -> np.ndarray:
        """Index of the piece each s lies on; at a line-arc boundary, the arc."""
        idx = np.clip(np.searchsorted(self._starts, s, side="right") - 1, 0, len(self.pieces) - 1)
        prev = np.maximum(idx - 1, 0)
        at_start = (s == self._starts[idx]) & (idx > 0)
        # s at an arc's start already lands on the arc; at an arc's end it lands on the next line
        return np.where(at_start & ~self._is_arc[idx] & self._is_arc[prev], prev, idx)

    def __call__(self, s, order: int = 0) -> np.ndarray:
        out = self.derivatives(np.atleast_1d(np.asarray(s, dtype=np.float64)), (order,))[0]
        return out if np.ndim(s) else out[0]

    def derivatives(self, s: np.ndarray, orders=(0, 1, 2)) -> list[np.ndarray]:
        """The curve's derivatives of the given orders (0: position, 1: unit tangent, 2: curvature
        vector) at the arc lengths s (n,), each (n, dof); the pieces are looked up once for all."""
        ss = np.clip(s, 0.0, self.length)
        if not self.pieces:
            return [np.broadcast_to(self.waypoints[0] if k == 0 else 0.0, (len(ss), self.dof)).copy() for k in orders]
        idx = self.piece_index(ss)
        arc = self._is_arc[idx][:, None]
        u = (ss - self._starts[idx])[:, None]
        base, d, x, r = self._base[idx], self._dir[idx], self._x[idx], self._r[idx][:, None]
        th = np.where(arc, u / r, 0.0)
        cs, sn = np.cos(th), np.sin(th)
        out = []
        for order in orders:
            if order == 0:
                q = np.where(arc, base + r * (x * cs + d * sn), base + u * d)
                if self.lower is not None:
                    np.clip(q, self.lower, self.upper, out=q)
                out.append(q)
            elif order == 1:
                out.append(np.where(arc, d * cs - x * sn, d))
            else:
                out.append(np.where(arc, -(x * cs + d * sn) / r, 0.0))
        return out

    def arcs(self) -> list[dict]:
        """The blended corners: index (waypoint), r, alpha, deviation, s0, s1, ..."""
        return [c for c in self.corners if c["kind"] == "arc"]

    def used_deviations(self) -> np.ndarray:
        """Per corner of the (deduplicated) waypoints: the deviation of its arc, 0 where it stops
        or is straight."""
        return np.array([c["deviation"] if c["kind"] == "arc" else 0.0 for c in self.corners])


def sphere_speed(robot) -> float:
    """Metres a robot sphere centre can move per unit of joint-space distance at most, over every
    configuration: max over spheres of the 2-norm over joints of the sphere's reach about each joint
    (robot.motion_bound of unit joint moves; Cauchy-Schwarz turns the 1-norm bound into a 2-norm one)."""
    dof = robot.dof
    zero = np.zeros(dof)
    reach = np.stack([robot.motion_bound(zero, np.eye(dof)[j]) for j in range(dof)], axis=1)
    return float(np.sqrt((reach ** 2).sum(axis=1)).max()) if reach.size else 0.0


def arc_chords(corner: dict, max_sagitta: float, lower=None, upper=None) -> np.ndarray:
    """(m + 1, dof) points on the arc of ``corner``, from its start to its end, such that each chord's
    sagitta (largest distance between the chord and its stretch of arc) is at most max_sagitta."""
    r, alpha = corner["r"], corner["alpha"]
    if max_sagitta >= r:
        m = max(1, int(np.ceil(alpha / np.pi)) + 1)
    else:
        step = 2.0 * np.arccos(1.0 - max_sagitta / r)
        m = max(1, int(np.ceil(alpha / step)))
    return arc_points(corner, np.linspace(0.0, alpha, m + 1), lower, upper)


def arc_points(corner: dict, angles: np.ndarray, lower=None, upper=None) -> np.ndarray:
    """Points of the arc of ``corner`` at ``angles`` (radians from its start), clipped into
    [lower, upper] when given (against rounding: the arc lies inside the joint limits)."""
    th = np.asarray(angles, dtype=np.float64)[:, None]
    pts = corner["centre"] + corner["r"] * (corner["x"] * np.cos(th) + corner["y"] * np.sin(th))
    return pts if lower is None else np.clip(pts, lower, upper)


def arc_is_free(robot, env, corner: dict, link: str, padding: float, resolution: float | None,
                speed: float, lower=None, upper=None) -> bool:
    """Whether the executed arc of ``corner`` is collision-free. certified: every chord proven free
    with spheres inflated by CURVE_PADDING, chords fine enough that the arc stays within that of them.
    discrete: configurations on the arc at most 1 / resolution apart (joint-space) are valid.
    Points are clipped into [lower, upper] (the joint limits) against rounding."""
    lo, hi = lower, upper
    if link == "certified":
        pts = arc_chords(corner, CURVE_PADDING / speed if speed > 0 else np.inf, lo, hi)
        pad = padding + CURVE_PADDING
        return all(robot.certify_motion(pts[k], pts[k + 1], env, pad).free for k in range(len(pts) - 1))
    res = robot.resolution if resolution is None else resolution
    m = max(2, int(np.ceil(corner["r"] * corner["alpha"] * res)) + 1)
    pts = arc_points(corner, np.linspace(0.0, corner["alpha"], m), lo, hi)
    return bool(robot.is_valid_many(pts, env, padding).all())
