"""RobotBuilder: a sphere robot described in Python, without a URDF file.

    b = RobotBuilder("arm")
    b.link("base", spheres=[[0, 0, 0.05, 0.06]])
    b.joint("j1", "revolute", parent="base", child="upper", xyz=[0, 0, 0.1], axis=[0, 0, 1], limits=(-3, 3))
    b.link("upper", spheres=[[0.1, 0, 0, 0.04], [0.2, 0, 0, 0.04]])
    robot = b.build()

Conventions as in URDF: a joint's frame is placed in its parent link's frame by ``xyz`` (metres) and
``rpy`` (radians, fixed-axis roll-pitch-yaw, R = Rz(yaw) Ry(pitch) Rx(roll)) or a 4x4 ``origin``; the
child link's frame is the joint frame moved by the joint value along/about ``axis`` (in the joint
frame). Spheres are ``[x, y, z, r]`` in their link's frame. Joint types: revolute (``limits``
required, radians), continuous (no limits), prismatic (``limits`` required, metres), fixed.
Everything is validated when it is added or, for the tree's shape, at ``build``.
"""

from __future__ import annotations

import math

import numpy as np

from simdplan.robots.description import (MOVABLE, JointDesc, LinkDesc, Mimic, RobotDescription, limits_error,
                                         velocity_error)
from simdplan.transforms import check_pose_matrix, euler_xyz_to_matrix
from simdplan.validation import sphere_array

JOINT_TYPES = MOVABLE + ("fixed",)


def _vec3(value, what: str) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (3,) or not np.isfinite(arr).all():
        raise ValueError(f"{what} must be 3 finite numbers, got {value!r}")
    return arr


class RobotBuilder:
    """Collects links and joints, then ``build()`` compiles a simdplan Robot (see the module docstring)."""

    def __init__(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError("a robot needs a non-empty name")
        self.name = name
        self._links: dict[str, LinkDesc] = {}
        self._joints: list[JointDesc] = []
        self._disabled: set[frozenset] = set()

    def link(self, name: str, spheres=None) -> "RobotBuilder":
        """Adds link ``name`` with collision ``spheres`` (k, 4) in its frame (none: a link that never collides)."""
        if not isinstance(name, str) or not name:
            raise ValueError("link names must be non-empty strings")
        if name in self._links:
            raise ValueError(f"link {name!r} is defined twice")
        self._links[name] = LinkDesc(name, sphere_array(spheres, name), [])
        return self

    def joint(self, name: str, type: str, parent: str, child: str, *, xyz=(0.0, 0.0, 0.0), rpy=(0.0, 0.0, 0.0),
              origin=None, axis=(0.0, 0.0, 1.0), limits=None, mimic: tuple | None = None,
              velocity: float | None = None) -> "RobotBuilder":
        """Adds a joint from ``parent`` to ``child`` (links may be added before or after).
        mimic: (joint, multiplier, offset) to follow another joint. velocity: the joint's speed limit
        (rad/s or m/s), as a URDF's <limit velocity=...>; time parameterization uses it."""
        if not isinstance(name, str) or not name:
            raise ValueError("joint names must be non-empty strings")
        if any(j.name == name for j in self._joints):
            raise ValueError(f"joint {name!r} is defined twice")
        if type not in JOINT_TYPES:
            raise ValueError(f"joint {name!r}: type must be one of {', '.join(JOINT_TYPES)}, got {type!r}")
        if origin is not None:
            pose = check_pose_matrix(origin, f"joint {name!r} origin")
        else:
            pose = np.eye(4)
            pose[:3, :3] = euler_xyz_to_matrix(_vec3(rpy, f"joint {name!r} rpy"))
            pose[:3, 3] = _vec3(xyz, f"joint {name!r} xyz")
        ax = _vec3(axis, f"joint {name!r} axis")
        if type != "fixed":
            n = math.hypot(*ax)  # np.linalg.norm overflows to inf for huge entries, zeroing the axis
            if n < 1e-9:
                raise ValueError(f"joint {name!r}: axis must not be zero")
            ax = ax / n
        lo, hi = -np.pi, np.pi
        if type in ("revolute", "prismatic"):
            if limits is None:
                raise ValueError(f"joint {name!r}: a {type} joint needs limits=(lower, upper)")
            lo, hi = (float(v) for v in limits)
            problem = limits_error(name, type, lo, hi)
            if problem:
                raise ValueError(problem)
        elif limits is not None and type == "fixed":
            raise ValueError(f"joint {name!r}: a fixed joint has no limits")
        mim = None
        if mimic is not None:
            target, mult, off = mimic
            mim = Mimic(str(target), float(mult), float(off))
        vel = None
        if velocity is not None:
            if type == "fixed":
                raise ValueError(f"joint {name!r}: a fixed joint has no velocity limit")
            vel = float(velocity)
            problem = velocity_error(name, vel)
            if problem:
                raise ValueError(problem)
        self._joints.append(JointDesc(name, type, parent, child, pose, ax, lo, hi, mim, vel))
        return self

    def disable_collisions(self, link_a: str, link_b: str) -> "RobotBuilder":
        """Never check this link pair for self-collision (as an SRDF's disable_collisions)."""
        self._disabled.add(frozenset((link_a, link_b)))
        return self

    def description(self) -> RobotDescription:
        """The validated description: one tree, every joint between defined links."""
        if not self._links:
            raise ValueError(f"robot {self.name!r} has no links")
        children = {}
        for j in self._joints:
            for end in (j.parent, j.child):
                if end not in self._links:
                    raise ValueError(f"joint {j.name!r} names link {end!r}, which was never added")
            if j.child in children:
                raise ValueError(f"link {j.child!r} is the child of two joints ({children[j.child]}, {j.name})")
            if j.parent == j.child:
                raise ValueError(f"joint {j.name!r} joins link {j.parent!r} to itself")
            children[j.child] = j.name
        roots = [n for n in self._links if n not in children]
        if len(roots) != 1:
            raise ValueError(f"robot {self.name!r} must form one tree: links without a parent joint: {roots}")
        # every link reachable from the root (else there is a cycle)
        below: dict[str, list[str]] = {}
        for j in self._joints:
            below.setdefault(j.parent, []).append(j.child)
        seen, stack = set(), [roots[0]]
        while stack:
            n = stack.pop()
            seen.add(n)
            stack.extend(below.get(n, []))
        if len(seen) != len(self._links):
            raise ValueError(f"robot {self.name!r}: links {sorted(set(self._links) - seen)} form a cycle")
        names = {j.name for j in self._joints}
        for j in self._joints:
            if j.mimic is not None and j.mimic.joint not in names:
                raise ValueError(f"joint {j.name!r} mimics {j.mimic.joint!r}, which is not a joint")
        for pair in self._disabled:
            unknown = [n for n in pair if n not in self._links]
            if unknown:
                raise ValueError(f"disable_collisions names unknown links {unknown}")
        return RobotDescription(self.name, dict(self._links), list(self._joints), roots[0])

    def build(self, **robot_kwargs):
        """The simdplan Robot (keyword arguments as for ``Robot``: joints, fixed_joint_values,
        base_pose, skip_adjacent, resolution)."""
        from simdplan.robots.robot import Robot  # noqa: PLC0415 (robot imports this module's package)

        robot = Robot(self.description(), set(self._disabled), **robot_kwargs)
        if robot.dof == 0:
            # every planner samples and steers in joint space: with no active joint there is nothing
            # to plan, and the planners' own errors would not say why
            movable = [j.name for j in self._joints if j.type in MOVABLE and j.mimic is None]
            raise ValueError(f"robot {self.name!r} has no active joint (a planner needs at least one): "
                             + (f"`joints` must name at least one of {movable}" if movable else
                                "add a revolute, continuous or prismatic joint"))
        return robot
