"""Inverse kinematics: joint configurations that put a link at a pose, collision-free.

``Robot.ik(pose, link, env)`` runs damped least squares in C++ with one restart per SIMD lane (16
with AVX-512), each from a random configuration inside the joint limits (deterministic for a seed),
and keeps the restarts that converge, lie inside the limits, are collision-free (self-collision
always, ``env`` when given, with ``padding``) and are distinct. Every solution is checked again
here with float64 forward kinematics: its ``errors`` are that check's.

Poses are world frames: a (4, 4) matrix, or ``(position, quaternion)`` with the quaternion
``[x, y, z, w]`` (unit). Tolerances: metres for position, radians for the angle of the rotation
left. ``mask``: None (the whole pose), "position" (orientation free), or "free_x" / "free_y" /
"free_z" (rotation about that axis of the link frame free, as for a symmetric gripper).

The default ``link`` is the robot's end: the link that starts the last body of its only chain (the
child link of the last moving joint, e.g. panda_link7, ur5's wrist_3_link); robots with several ends
(two arms) must name one. Pass the tool frame (``panda_grasptarget``, ``tool0``) to place a tool.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from simdplan.transforms import check_pose_matrix, quat_to_matrix

MASKS = {None: (0, 2), "position": (1, 2), "free_x": (2, 0), "free_y": (2, 1), "free_z": (2, 2)}
# restarts and iterations per restart at most when no time limit is given: an unreachable pose
# fails after about this many restarts (a few milliseconds)
DEFAULT_MAX_ATTEMPTS = 1000
ATTEMPT_ITERATIONS = 64
# two solutions closer than this (joint-space distance) count as one
DISTINCT = 1e-2


@dataclasses.dataclass
class IKResult:
    """``solutions`` (k, dof) float64, k <= n_solutions, best first is not implied (in the order found);
    ``success``: at least one; ``errors`` (k, 2): position error (m) and angle error (rad, of what
    the mask constrains) of each, by float64 forward kinematics; ``time_ns`` for the whole call;
    ``link``: the link placed; ``attempts``: restarts begun; ``colliding``: converged restarts
    refused as in collision; ``stopped``: "time_limit" if the time limit cut the search, else ""."""

    solutions: np.ndarray
    success: bool
    errors: np.ndarray
    time_ns: int
    link: str
    attempts: int = 0
    colliding: int = 0
    stopped: str = ""


def parse_pose(pose) -> np.ndarray:
    """A (4, 4) float64 world frame from a matrix or (position (3,), quaternion [x, y, z, w])."""
    if isinstance(pose, (tuple, list)) and len(pose) == 2:
        position, quat = pose
        m = np.eye(4)
        m[:3, :3] = quat_to_matrix(quat, "pose quaternion")
        pos = np.asarray(position, dtype=np.float64)
        if pos.shape != (3,) or not np.all(np.isfinite(pos)):
            raise ValueError(f"pose position must be 3 finite numbers, got {np.asarray(position).tolist()}")
        m[:3, 3] = pos
        return m
    arr = np.asarray(pose, dtype=np.float64)
    if arr.shape != (4, 4):
        raise ValueError(f"pose must be a (4, 4) matrix or (position, quaternion [x, y, z, w]), got shape {arr.shape}")
    rot = arr[:3, :3]
    # PERF: the cheap test first (np.allclose in check_pose_matrix was a third of a solve's Python time)
    if (np.isfinite(arr).all() and np.abs(rot @ rot.T - np.eye(3)).max() <= 1e-5 and np.linalg.det(rot) > 0
            and np.abs(arr[3] - [0.0, 0.0, 0.0, 1.0]).max() <= 1e-5):
        return arr
    return check_pose_matrix(arr, "pose")  # raises, naming what is wrong


_DEFAULT_LINKS: dict = {}


def default_link(robot, program) -> str:
    """The child link of the last moving joint of the robot's only chain (see the module docstring)."""
    cached = _DEFAULT_LINKS.get(id(program))
    if cached is not None and cached[0] is program:
        return cached[1]
    p = program
    ends = robot.tip_links()
    if len(ends) != 1:
        raise ValueError(f"robot {robot.name!r} has {len(ends)} ends ({', '.join(e[0] for e in ends)}, ...): "
                         "pass link= to say which to place")
    body = int(p.link_body[p.link_names.index(ends[0][0])])
    first = [i for i, b in enumerate(p.link_body) if b == body]
    # the link whose frame is the body's frame: the moving joint's child (ties: the first in URDF order)
    link = p.link_names[min(first, key=lambda i: np.abs(p.link_in_body[i] - np.eye(4)).max())]
    _DEFAULT_LINKS[id(program)] = (program, link)
    return link


def body_frame64(program, q: np.ndarray, body: int) -> np.ndarray:
    """(4, 4) float64 world frame of ``body`` of the kinematic program at ``q`` (the reference the
    float32 kernels are checked against: T = T_parent origin Jz(scale q + offset), along its chain)."""
    chain = []
    b = int(body)
    while b >= 0:
        chain.append(b)
        b = int(program.body_parent[b])
    T = np.eye(4)
    o = np.eye(4)
    for b in reversed(chain):
        o[:3, :4] = np.asarray(program.body_origin[b], dtype=np.float64).reshape(3, 4)
        T = T @ o
        kind = int(program.body_kind[b])
        if kind != 0:
            v = float(program.body_scale[b]) * q[int(program.body_dof[b])] + float(program.body_offset[b])
            if kind == 1:
                c, s = np.cos(v), np.sin(v)
                T[:, :2] = T[:, :2] @ np.array([[c, -s], [s, c]])
            else:
                T[:, 3] += v * T[:, 2]
    return T


def link_pose64(program, q, link: str) -> np.ndarray:
    """(4, 4) float64 world pose of ``link`` at ``q`` (float64 forward kinematics of the program)."""
    i = program.link_names.index(link)
    return body_frame64(program, np.asarray(q, dtype=np.float64), int(program.link_body[i])) @ program.link_in_body[i]


def pose_errors(current: np.ndarray, goal: np.ndarray, mode: int, axis: int) -> tuple[float, float]:
    """(position error m, angle error rad) of ``current`` against ``goal`` (4 x 4 each) under a mask."""
    pos = float(np.linalg.norm(current[:3, 3] - goal[:3, 3]))
    if mode == 1:
        return pos, 0.0
    if mode == 2:
        a, g = current[:3, axis], goal[:3, axis]
        return pos, float(np.arctan2(np.linalg.norm(np.cross(a, g)), a @ g))
    R = goal[:3, :3] @ current[:3, :3].T
    vee = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return pos, float(np.arctan2(np.linalg.norm(vee), (np.trace(R) - 1.0) / 2.0))


def solve(robot, program, model, env_model, env, pose, link=None, *, n_solutions: int = 1, seed: int = 0,
          position_tolerance: float = 1e-4, orientation_tolerance: float = 1e-3, mask=None,
          time_limit: float | None = None, padding: float = 0.0, seeds=None,
          max_attempts: int = DEFAULT_MAX_ATTEMPTS) -> IKResult:
    """Robot.ik's work: ``program`` and ``model`` are the robot's kinematic program and core model,
    ``env_model`` the compiled environment, ``env`` the Environment (or None)."""
    from simdplan.validation import as_int, as_number  # noqa: PLC0415

    t0 = time.perf_counter_ns()
    goal = parse_pose(pose)
    p = program
    link = default_link(robot, p) if link is None else link
    if link not in p.link_names:
        raise ValueError(f"unknown link {link!r}; links are {list(p.link_names)}")
    if mask not in MASKS:
        raise ValueError(f"mask must be one of {[m for m in MASKS]}, got {mask!r}")
    mode, axis = MASKS[mask]
    n = as_int(n_solutions, "n_solutions", 1, 10_000)
    tol_p = as_number(position_tolerance, "position_tolerance", 0.0, upper=10.0)
    tol_r = as_number(orientation_tolerance, "orientation_tolerance", 0.0, upper=np.pi)
    limit = 0.0 if time_limit is None else as_number(time_limit, "time_limit", 0.0, allow_zero=True)
    attempts = as_int(max_attempts, "max_attempts", 1, 10**9)
    rows = np.zeros((0, robot.dof)) if seeds is None else robot.check_joint_values(np.atleast_2d(seeds), "seeds")
    rows = np.clip(rows, robot.lower, robot.upper)
    i = p.link_names.index(link)
    out = model.ik(env_model, int(p.link_body[i]), p.link_in_body[i][:3, :4].reshape(-1).tolist(),
                          goal[:3, :4].reshape(-1).tolist(), mode, axis, tol_p, tol_r, n, int(seed) & (2**64 - 1),
                          attempts, ATTEMPT_ITERATIONS, DISTINCT, float(padding), rows.reshape(-1).tolist(), limit)
    solutions, _, _, begun, _, colliding, stopped = out
    keep, errors = [], []
    for q in solutions:
        e = pose_errors(link_pose64(p, q, link), goal, mode, axis)
        # NOTE: the kernels converge to half the tolerances in float32; this float64 check is the contract
        if e[0] <= tol_p and e[1] <= tol_r and robot.is_valid(q, env, padding):
            keep.append(q)
            errors.append(e)
    sol = np.array(keep).reshape(-1, robot.dof)
    return IKResult(sol, len(sol) > 0, np.array(errors).reshape(-1, 2), time.perf_counter_ns() - t0, link,
                    int(begun), int(colliding), stopped)
