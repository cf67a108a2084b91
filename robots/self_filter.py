"""Removing the robot's own body from a point cloud: a sensor that sees the robot would otherwise
report it as an obstacle. Here, not in simdplan.collision, because it needs the robot (collision
sits below robots)."""

from __future__ import annotations

import numpy as np

from simdplan.collision.pointcloud import as_points
from simdplan.robots.robot import Robot
from simdplan.validation import check_padding


def remove_robot_points(points, robot, q, padding: float = 0.0, return_index: bool = False):
    """The points not inside the robot's collision spheres at ``q``: (m, 3) float64 (and row indices).

    ``points`` (n, 3) in the robot's world frame; ``robot`` a ``simdplan.robots.Robot``; ``q``
    (dof,). A point is removed iff it is strictly inside a sphere inflated by ``padding``:
    ``|p - c| < r + padding`` (the collision rule of the whole package, so a point on a sphere's
    surface stays). Spheres come from ``robot.fk(q)`` (float32 centres and radii, used as float64).
    """
    pts = as_points(points)
    if not isinstance(robot, Robot):
        raise TypeError(f"robot must be a simdplan.robots.Robot, got {type(robot).__name__}")
    pad = check_padding(padding)
    spheres = robot.fk(q).astype(np.float64)
    centers, radii = spheres[:, :3], spheres[:, 3] + pad
    inside = np.zeros(len(pts), dtype=bool)
    if len(pts) and len(spheres):
        # only points in the spheres' bounding box can be inside one
        lo = (centers - radii[:, None]).min(axis=0)
        hi = (centers + radii[:, None]).max(axis=0)
        near = np.flatnonzero(((pts >= lo) & (pts <= hi)).all(axis=1))
        sub = pts[near]
        hit = np.zeros(len(sub), dtype=bool)
        for c, r in zip(centers, radii):
            d = sub - c
            hit |= (d[:, 0] * d[:, 0] + d[:, 1] * d[:, 1]) + d[:, 2] * d[:, 2] < r * r
        inside[near[hit]] = True
    idx = np.flatnonzero(~inside)
    return (pts[idx], idx) if return_index else pts[idx]
