"""simdplan.robots: robots loaded at run time from URDF (+ SRDF), and the built-in models."""

from __future__ import annotations

import os

from simdplan.robots.builder import RobotBuilder
from simdplan.robots.reports import DistanceReport, MotionCertificate, Proximity, Violation
from simdplan.robots.robot import (DEFAULT_LIMIT_TOLERANCE, DEFAULT_MIN_STEP, DEFAULT_RANGE, DEFAULT_RESOLUTION,
                                   MAX_SAMPLE_TRAVEL, Robot)
from simdplan.robots.self_filter import remove_robot_points

DATA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
# Built-in robots: spherized URDF and SRDF, shipped in robots/data (origin and licences in NOTICE.md).
BUILTIN = {
    "panda": ("panda/panda_spherized.urdf", "panda/panda.srdf"),
    "ur5": ("ur5/ur5_spherized.urdf", "ur5/ur5.srdf"),
}


def available() -> list[str]:
    """Names accepted by ``load``."""
    return sorted(BUILTIN)


def builtin_paths(name: str) -> tuple[str, str]:
    """(URDF, SRDF) paths of a built-in robot."""
    if name not in BUILTIN:
        raise ValueError(f"unknown built-in robot {name!r}; available: {', '.join(available())}")
    urdf, srdf = BUILTIN[name]
    return os.path.join(DATA_DIR, urdf), os.path.join(DATA_DIR, srdf)


def load(name: str, **kwargs) -> Robot:
    """A built-in robot by name ("panda", "ur5"); keyword arguments as for ``Robot.from_urdf``."""
    urdf, srdf = builtin_paths(name)
    robot = Robot.from_urdf(urdf, srdf, **kwargs)
    if not kwargs:
        robot.source = name
    return robot


__all__ = ["Robot", "RobotBuilder", "Violation", "MotionCertificate", "Proximity", "DistanceReport", "load", "available",
           "builtin_paths", "DEFAULT_RESOLUTION", "DEFAULT_MIN_STEP", "DEFAULT_LIMIT_TOLERANCE", "DEFAULT_RANGE",
           "MAX_SAMPLE_TRAVEL", "DATA_DIR", "remove_robot_points"]
