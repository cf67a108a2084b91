"""PlanResult: what a planning call returns, and how it is saved."""

from __future__ import annotations

import csv
import dataclasses
import json
import os

import numpy as np

from simdplan._format import json_value
from simdplan.planner.trajectory import time_parameterize


def path_length(path: np.ndarray) -> float:
    """Joint-space (Euclidean) length of a (k, dof) path."""
    path = np.asarray(path, dtype=float)
    return float(np.linalg.norm(np.diff(path, axis=0), axis=1).sum()) if len(path) > 1 else 0.0


@dataclasses.dataclass(frozen=True)
class PlanContext:
    """What a plan was checked against, kept on its result so ``PlanResult.trajectory`` can check the
    timed motion the same way: the robot, the environment, which Link, padding (m) and resolution."""

    robot: object
    env: object
    link: str
    padding: float
    resolution: float


@dataclasses.dataclass
class PlanResult:
    """Outcome of ``simdplan.plan``.

    success: a collision-free path from start to one of the goals was found.
    path: (k, dof) float64 waypoints, start first, a goal last; (0, dof) on failure. Every edge
      between consecutive waypoints passed the planner's Link check.
    stats: iterations, collision_checks (configurations checked: a discrete Link counts its samples up
      to the chunk of samples where it found a collision, all of them when the edge is free; certified
      Link also its clearance samples), planning_time_ns,
      simplify_time_ns, initial_cost and final_cost (joint-space length before and after
      simplification), goal_index, link ("discrete" or "certified": which Link accepted the
      edges), with certified Link edges_proven, certificate_samples (clearance evaluations) and
      edges_undecided (edges refused because a stretch shorter than min_step could not be proven
      free, or, in simplification's last vertex reduction, not within 3 kernel passes), counted over
      planning and simplification; unprovable ("start" or "goals") only when certified Link refused
      the problem at once, its start or every goal being within the certificate's margin of contact;
      plus planner-specific counts.
    error: "" when the problem was planned; else (plan_many only, which reports a bad task in its
      result instead of raising) the name of the exception ``plan`` would raise, e.g.
      "InvalidProblemError", with its text in ``message``.
    """

    success: bool
    path: np.ndarray
    stats: dict
    planner: str
    joint_names: list
    message: str = ""
    error: str = ""
    # set by simdplan.plan; None on results rebuilt elsewhere (from Ray workers, from files)
    context: PlanContext | None = dataclasses.field(default=None, repr=False, compare=False)
    # the last trajectory() made from this result; save() writes it too
    timed: object = dataclasses.field(default=None, repr=False, compare=False)

    def trajectory(self, velocity_limits=None, acceleration_limits=None, jerk_limits=None, **kwargs):
        """A timed motion through ``path`` (simdplan.time_parameterize, whose arguments it takes),
        checked as executed against the robot and environment of the plan with the plan's Link,
        padding and resolution. Kept in ``timed`` (and written by ``save``)."""
        if not self.success:
            raise ValueError(f"no path to time: the plan failed ({self.message or 'no solution'})")
        if self.context is None:
            raise ValueError("this result does not carry its robot and environment (it was not made by "
                             "simdplan.plan in this process): call simdplan.time_parameterize(robot, result.path, env)")
        c = self.context
        opts = {"link": c.link, "padding": c.padding, "resolution": c.resolution, **kwargs}
        self.timed = time_parameterize(c.robot, self.path, c.env, velocity_limits=velocity_limits,
                                       acceleration_limits=acceleration_limits, jerk_limits=jerk_limits, **opts)
        return self.timed

    @property
    def cost(self) -> float:
        return path_length(self.path)

    def to_dict(self) -> dict:
        out = {"success": bool(self.success), "planner": self.planner, "message": self.message, "error": self.error,
               "joint_names": list(self.joint_names), "path": np.asarray(self.path).tolist(),
               "stats": {k: json_value(v) for k, v in self.stats.items()}}
        if self.timed is not None:
            out["trajectory"] = self.timed.to_dict()
        return out

    def save(self, path: str | os.PathLike) -> None:
        """Write the result: ``.json`` (everything, with ``trajectory`` when one was made) or ``.csv``
        (one waypoint per row, joint names as header; a trajectory is saved with Trajectory.save)."""
        path = os.fspath(path)
        ext = os.path.splitext(path)[1].lower()
        if ext == ".json":
            with open(path, "w") as f:
                json.dump(self.to_dict(), f, indent=1)
        elif ext == ".csv":
            with open(path, "w", newline="") as f:
                w = csv.writer(f)
                w.writerow(self.joint_names)
                for row in np.asarray(self.path):
                    w.writerow([repr(float(x)) for x in row])
        else:
            raise ValueError(f"cannot save a plan as {ext or 'a file without extension'!r}: use .json or .csv")

    def __repr__(self) -> str:
        return (f"PlanResult(success={self.success}, planner={self.planner!r}, waypoints={len(self.path)}, "
                f"cost={self.cost:.3f}, time={self.stats.get('planning_time_ns', 0) / 1e3:.1f} us)")
