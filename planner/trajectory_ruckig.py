"""Jerk-limited rest-to-rest moves along every edge of a path, with Ruckig (community version).

Phase synchronization makes every joint follow the same normalized profile, so a move from rest to
rest stays on its straight edge: the executed motion is the checked polyline. Ruckig's community
version has no intermediate waypoints, so the motion stops at every waypoint (see trajectory.py).
"""

from __future__ import annotations

import numpy as np


def rest_to_rest_sections(q: np.ndarray, v: np.ndarray, a: np.ndarray, j: np.ndarray) -> list:
    """Sections (t0, duration, evaluate) of Trajectory: one Ruckig move per edge of ``q`` (k, dof)."""
    try:
        import ruckig  # noqa: PLC0415 (optional dependency)
    except ImportError as exc:
        raise ImportError('jerk-limited trajectories need ruckig: pip install "simdplan[timing]"') from exc
    dof = q.shape[1]
    # the limits, rest at both ends and phase synchronization are every edge's; only the ends change
    solver, inp = ruckig.Ruckig(dof), ruckig.InputParameter(dof)
    inp.current_velocity = inp.current_acceleration = [0.0] * dof
    inp.target_velocity = inp.target_acceleration = [0.0] * dof
    inp.max_velocity, inp.max_acceleration, inp.max_jerk = v.tolist(), a.tolist(), j.tolist()
    inp.synchronization = ruckig.Synchronization.Phase
    sections, t0 = [], 0.0
    for e in range(len(q) - 1):
        if np.array_equal(q[e], q[e + 1]):
            continue
        inp.current_position, inp.target_position = q[e].tolist(), q[e + 1].tolist()
        traj = ruckig.Trajectory(dof)
        result = solver.calculate(inp, traj)
        if result not in (ruckig.Result.Working, ruckig.Result.Finished):
            raise RuntimeError(f"Ruckig could not time edge {e}: {result}")
        sections.append((t0, float(traj.duration), _RuckigMove(traj, q[e], q[e + 1])))
        t0 += float(traj.duration)
    if not sections:
        sections.append((0.0, 0.0, _RuckigMove(None, q[0], q[0])))
    return sections


class _RuckigMove:
    def __init__(self, traj, a: np.ndarray, b: np.ndarray):
        self.traj, self.a, self.b = traj, a, b

    def __call__(self, tau: np.ndarray):
        n, dof = len(tau), len(self.a)
        q, qd, qdd = np.empty((n, dof)), np.zeros((n, dof)), np.zeros((n, dof))
        if self.traj is None:
            q[:] = self.a
            return q, qd, qdd
        for i, t in enumerate(tau):
            p, v, acc = self.traj.at_time(float(t))
            q[i], qd[i], qdd[i] = p, v, acc
        # the ends exactly: a move starts and ends on its waypoints
        q[tau <= 0] = self.a
        q[tau >= self.traj.duration] = self.b
        return q, qd, qdd
