"""Robots of different shape for the multi-robot benchmark, all loaded or assembled at run time.

- ``panda``, ``ur5``: the built-in models (7 and 6 dof; VAMP has both, for side-by-side runs).
- ``iiwa``: the KUKA LBR iiwa 14 of pybullet_data (mesh URDF) covered by simdplan's spherizer on
  the fly (cached); 7 dof. Needs pybullet (``pip install ".[viz]"``).
- ``mobile_manipulator``: assembled with RobotBuilder: a wheeled base (static, big spheres up to
  0.24 m), a fixed torso column, a prismatic torso lift, a head on pan/tilt joints held still,
  and the ur5 arm with its gripper on the lift; 7 dof (lift + arm), over 100 spheres.
- ``dual_arm``: a pedestal and torso with a head and two panda arms; 14 dof.

The assembled robots reuse the built-in arms' links, spheres and SRDF pairs, so every part is a
real model; only the base, torso and head are spheres placed here.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from simdplan.robots import Robot, RobotBuilder, builtin_paths
from simdplan.robots import load as load_builtin
from simdplan.robots.description import read_srdf
from simdplan.transforms import euler_xyz_to_matrix

NAMES = ("panda", "ur5", "iiwa", "mobile_manipulator", "dual_arm")


def _pose(xyz, rpy=(0.0, 0.0, 0.0)) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = euler_xyz_to_matrix(np.asarray(rpy, dtype=np.float64))
    m[:3, 3] = xyz
    return m


def _graft(b: RobotBuilder, name: str, parent: str, origin: np.ndarray, prefix: str, root: str | None = None
           ) -> list[str]:
    """Copies built-in robot ``name`` from link ``root`` down (default its root: links, joints, spheres,
    SRDF pairs) into ``b`` with every name prefixed, ``root`` fixed to ``parent`` at ``origin``;
    returns its actuated joints."""
    urdf, srdf = builtin_paths(name)
    desc = load_builtin(name).description
    root = desc.root if root is None else root
    below, grow = {root}, True
    while grow:
        grow = False
        for j in desc.joints:
            if j.parent in below and j.child not in below:
                below.add(j.child)
                grow = True
    for link in desc.links.values():
        if link.name in below:
            b.link(prefix + link.name, spheres=link.spheres if len(link.spheres) else None)
    b.joint(prefix + "mount", "fixed", parent, prefix + root, origin=origin)
    actuated = []
    for j in (j for j in desc.joints if j.parent in below):
        limits = (j.lower, j.upper) if j.type in ("revolute", "prismatic") else None
        mimic = (prefix + j.mimic.joint, j.mimic.multiplier, j.mimic.offset) if j.mimic else None
        b.joint(prefix + j.name, j.type, prefix + j.parent, prefix + j.child, origin=j.origin, axis=j.axis,
                limits=limits, mimic=mimic, velocity=j.velocity)
        if j.type != "fixed" and j.mimic is None:
            actuated.append(prefix + j.name)
    for pair in read_srdf(srdf, set(desc.links)):
        a, c = sorted(pair)
        if a in below and c in below:
            b.disable_collisions(prefix + a, prefix + c)
    return actuated


def _grid(lo, hi, counts, r) -> np.ndarray:
    """Spheres of radius r on a grid filling the box [lo, hi] (counts per axis)."""
    axes = [np.linspace(lo[k], hi[k], counts[k]) if counts[k] > 1 else [0.5 * (lo[k] + hi[k])] for k in range(3)]
    c = np.array(np.meshgrid(*axes, indexing="ij")).reshape(3, -1).T
    return np.c_[c, np.full(len(c), r)]


@functools.lru_cache(maxsize=None)
def mobile_manipulator() -> Robot:
    """See the module docstring. Joint order: torso_lift, then the ur5's six joints."""
    b = RobotBuilder("mobile_manipulator")
    base = np.vstack([_grid([-0.25, -0.2, 0.2], [0.25, 0.2, 0.2], [2, 2, 1], 0.24),  # the big ones
                      _grid([-0.3, -0.25, 0.08], [0.3, 0.25, 0.08], [4, 3, 1], 0.08),
                      _grid([-0.3, -0.25, 0.34], [0.3, 0.25, 0.34], [4, 3, 1], 0.06)])
    b.link("base_link", spheres=base)
    b.link("torso_fixed_link", spheres=_grid([-0.05, -0.08, 0.0], [0.05, 0.08, 0.5], [2, 2, 5], 0.08))
    b.link("torso_lift_link", spheres=_grid([-0.06, -0.1, 0.0], [0.06, 0.1, 0.6], [2, 2, 6], 0.07))
    b.link("head_pan_link", spheres=[[0.0, 0.0, 0.04, 0.06]])
    b.link("head_tilt_link", spheres=_grid([0.0, -0.1, -0.05], [0.12, 0.1, 0.05], [3, 3, 2], 0.05))
    b.joint("torso_fixed_joint", "fixed", "base_link", "torso_fixed_link", xyz=[-0.12, 0.0, 0.38])
    b.joint("torso_lift_joint", "prismatic", "torso_fixed_link", "torso_lift_link", xyz=[0.0, 0.0, 0.2],
            axis=[0, 0, 1], limits=(0.0, 0.4), velocity=0.1)
    b.joint("head_pan_joint", "revolute", "torso_lift_link", "head_pan_link", xyz=[0.05, 0.0, 0.7],
            axis=[0, 0, 1], limits=(-1.57, 1.57), velocity=1.0)
    b.joint("head_tilt_joint", "revolute", "head_pan_link", "head_tilt_link", xyz=[0.06, 0.0, 0.1],
            axis=[0, 1, 0], limits=(-0.76, 1.45), velocity=1.0)
    # the head sits on the lift: an SRDF would switch these pairs off (they are rigid while the head is held)
    b.disable_collisions("head_tilt_link", "torso_lift_link")
    b.disable_collisions("torso_fixed_link", "base_link")
    # the ur5 from its base_link: its URDF stands it on a 0.91 m pedestal (offset_link) we leave out
    arm = _graft(b, "ur5", "torso_lift_link", _pose([0.15, 0.0, 0.45]), "arm_", root="base_link")
    b.disable_collisions("arm_base_link", "torso_lift_link")
    return b.build(joints=["torso_lift_joint"] + arm, fixed_joint_values={"head_pan_joint": 0.0,
                                                                         "head_tilt_joint": 0.3})


@functools.lru_cache(maxsize=None)
def dual_arm() -> Robot:
    """See the module docstring. Joint order: the left panda's seven joints, then the right one's."""
    b = RobotBuilder("dual_arm")
    b.link("pedestal", spheres=_grid([-0.15, -0.15, 0.1], [0.15, 0.15, 0.7], [2, 2, 4], 0.14))
    b.link("torso", spheres=_grid([-0.1, -0.18, 0.0], [0.05, 0.18, 0.35], [2, 3, 3], 0.1))
    b.link("head", spheres=_grid([-0.05, -0.08, 0.0], [0.08, 0.08, 0.12], [2, 2, 2], 0.06))
    b.joint("torso_joint", "fixed", "pedestal", "torso", xyz=[0.0, 0.0, 0.8])
    b.joint("head_joint", "fixed", "torso", "head", xyz=[0.0, 0.0, 0.5])
    # arms leave the shoulders sideways and tilted forward, as on two-armed torsos
    left = _graft(b, "panda", "torso", _pose([0.05, 0.26, 0.25], [-np.pi / 2, 0.0, 0.3]), "left_")
    right = _graft(b, "panda", "torso", _pose([0.05, -0.26, 0.25], [np.pi / 2, 0.0, -0.3]), "right_")
    for side in ("left_", "right_"):
        b.disable_collisions(side + "panda_link0", "torso")
        b.disable_collisions(side + "panda_link1", "torso")
    return b.build(joints=left + right)


@functools.lru_cache(maxsize=None)
def iiwa(samples: int = 300, seed: int = 0) -> Robot:
    """The KUKA LBR iiwa 14 of pybullet_data, spherized on the fly. Its URDF comes without an SRDF, so
    link pairs in collision in more than half of ``samples`` random configurations are switched off,
    as MoveIt's setup assistant does: spheres reaching past the meshes make links two joints apart
    touch almost everywhere. ImportError without pybullet."""
    import warnings

    import pybullet_data  # noqa: PLC0415 (optional: pip install ".[viz]")

    urdf = os.path.join(pybullet_data.getDataPath(), "kuka_iiwa", "model.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "covered by spheres on the fly": expected here
        robot = Robot.from_urdf(urdf, spherize={"max_spheres_per_link": 12})
    rng = np.random.default_rng(seed)
    counts: dict = {}
    for q in rng.uniform(robot.lower, robot.upper, (samples, robot.dof)):
        for pair in {frozenset((v.link, v.other_link)) for v in robot.why_invalid(q) if v.kind == "self"}:
            counts[pair] = counts.get(pair, 0) + 1
    always = {p for p, c in counts.items() if c > 0.5 * samples}
    return Robot(robot.description, always) if always else robot


def load(name: str) -> Robot:
    """A benchmark robot by name (``NAMES``)."""
    if name in ("panda", "ur5"):
        return load_builtin(name)
    if name == "iiwa":
        return iiwa()
    if name == "mobile_manipulator":
        return mobile_manipulator()
    if name == "dual_arm":
        return dual_arm()
    raise ValueError(f"unknown benchmark robot {name!r}; robots: {', '.join(NAMES)}")
