"""Inverse kinematics: joint configurations that put a link at a pose, collision-free.

``Robot.ik(pose, link, env)`` runs damped least squares in C++ with one restart per SIMD lane (16
with AVX-512), each from a random configuration inside the joint limits (deterministic for a seed),
and keeps the restarts that converge, lie inside the limits, are collision-free (self-collision
always, ``env`` when given, with ``padding``) and are distinct. Every solution is checked again
with forward kinematics in double arithmetic (the program's float32 frames, within about 1e-7 m of
the URDF's) before it is kept: its ``errors`` are that check's.

Poses are world frames: a (4, 4) matrix, or ``(position, quaternion)`` with the quaternion
``[x, y, z, w]`` (unit). Tolerances: metres for position, radians for the angle of the rotation
left. ``mask``: None or "pose" (the whole pose), "position" (orientation free), or "free_x" /
"free_y" / "free_z" (rotation about that axis of the link frame free, as for a symmetric gripper).

When to stop: after ``n_solutions`` solutions, or else, with a ``time_limit``, when it passes (the
restarts go on until then), or, without one, after ``max_attempts`` restarts per pose (default
DEFAULT_MAX_ATTEMPTS: an unreachable pose fails within milliseconds). A ``max_attempts`` given with a
``time_limit`` applies too: whichever comes first. ``IKResult.stopped`` says which cut the search.

The default ``link`` is the robot's end: the link that starts the last body of its only chain (the
child link of the last moving joint, e.g. panda_link7, ur5's wrist_3_link); robots with several ends
(two arms) must name one. Pass the tool frame (``panda_grasptarget``, ``tool0``) to place a tool.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from simdplan.transforms import quat_to_matrix
from simdplan.validation import as_int, as_number

# "pose" is None's name where a mask is written (scene files, simdplan ik --mask)
MASKS = {None: (0, 2), "pose": (0, 2), "position": (1, 2), "free_x": (2, 0), "free_y": (2, 1), "free_z": (2, 2)}
MASK_NAMES = tuple(m for m in MASKS if m is not None)  # the masks a file or command line names
# default tolerances: metres, and radians of the rotation left
POSITION_TOLERANCE, ORIENTATION_TOLERANCE = 1e-4, 1e-3
# iterations per restart at most, and restarts per pose at most when neither a time limit nor
# max_attempts is given: an unreachable pose fails after this many (a few milliseconds, 64,000 lane
# iterations).
# PERF: a restart that has not converged in 16 iterations seldom does later; cutting it then and
# starting another took 38% fewer solver iterations than 64 (exact counts: reachable poses of panda,
# ur5, iiwa, 200 each, and 140 MotionBenchMaker hand poses in their scenes, two seed sets; every pose
# solved; 8 left some unsolved). Mobile manipulator: median 107 -> 60 us, 300 poses.
ATTEMPT_ITERATIONS = 16
DEFAULT_MAX_ATTEMPTS = 4000
# max_attempts's largest value, and the cap the core is given when only a time limit stops the search
# (the core counts restarts in 64 bits; none reaches this)
MAX_ATTEMPTS = 10**12
# two solutions closer than this (joint-space distance) count as one
DISTINCT = 1e-2


@dataclasses.dataclass
class IKResult:
    """``solutions`` (k, dof) float64, k <= n_solutions, best first is not implied (in the order found);
    ``success``: at least one; ``errors`` (k, 2): position error (m) and angle error (rad, of what
    the mask constrains) of each, by forward kinematics in double arithmetic; ``time_ns`` for the whole call;
    ``link``: the link placed; ``attempts``: restarts begun; ``colliding``: converged restarts
    refused as in collision; ``stopped``: why fewer than n_solutions were found, "time_limit" (the
    time limit passed) or "attempts" (max_attempts restarts were spent); "" when all were found."""

    solutions: np.ndarray
    success: bool
    errors: np.ndarray
    time_ns: int
    link: str
    attempts: int = 0
    colliding: int = 0
    stopped: str = ""


def parse_pose(pose) -> np.ndarray:
    """A (4, 4) float64 world frame from a matrix or (position (3,), quaternion [x, y, z, w]). A
    matrix's values (finite, a rotation, last row [0, 0, 0, 1]) are checked by the core's ik call."""
    if type(pose) is np.ndarray and pose.shape == (4, 4) and pose.dtype == np.float64:
        return pose  # the common case, as is
    if isinstance(pose, (tuple, list)) and len(pose) == 2:
        position, quat = pose
        m = np.eye(4)
        m[:3, :3] = quat_to_matrix(quat, "pose quaternion")
        pos = np.asarray(position, dtype=np.float64)
        if pos.shape != (3,) or not np.all(np.isfinite(pos)):
            raise ValueError(f"pose position must be 3 finite numbers, got {np.asarray(position).tolist()}")
        m[:3, 3] = pos
        return m
    try:
        arr = np.asarray(pose, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"pose must be a (4, 4) matrix or (position, quaternion [x, y, z, w]), got {pose!r}") from None
    if arr.shape != (4, 4):
        raise ValueError(f"pose must be a (4, 4) matrix or (position, quaternion [x, y, z, w]), got shape {arr.shape}")
    return arr


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
    members = {n for n, b in zip(p.link_names, p.link_body) if b == body}
    # the body starts at its moving joint: that joint's child link
    starts = [j.child for j in robot.description.joints if j.child in members and j.type != "fixed"]
    link = starts[0] if starts else min(members, key=p.link_names.index)
    if len(_DEFAULT_LINKS) > 256:  # bounded, as the other caches here: it keeps its programs alive
        _DEFAULT_LINKS.clear()
    _DEFAULT_LINKS[id(program)] = (program, link)
    return link


_LINK_FRAMES: dict = {}


def _link_frame(program, link: str) -> tuple[int, list]:
    """(body, the link's frame in that body as 12 floats) for the core, cached per program and link."""
    key = (id(program), link)
    hit = _LINK_FRAMES.get(key)
    if hit is not None and hit[0] is program:
        return hit[1]
    if link not in program.link_names:
        raise ValueError(f"unknown link {link!r}; links are {list(program.link_names)}")
    i = program.link_names.index(link)
    value = (int(program.link_body[i]), program.link_in_body[i][:3, :4].reshape(-1).tolist())
    if len(_LINK_FRAMES) > 256:
        _LINK_FRAMES.clear()
    _LINK_FRAMES[key] = (program, value)
    return value


_REQUESTS: dict = {}


def request(robot, program, model, link, n_solutions, position_tolerance, orientation_tolerance, mask, padding,
             seeds, max_attempts):
    """(link, the core's IkRequest: what Robot.ik solves for, without the poses), every option checked.
    PERF: requests without seeds are kept per robot and options: checking and converting options
    took a sixth of a solve's time from Python."""
    key = None
    if seeds is None:
        try:
            key = (id(program), link, n_solutions, position_tolerance, orientation_tolerance, mask, padding,
                   max_attempts, type(n_solutions), type(max_attempts))
            hit = _REQUESTS.get(key)
        except TypeError:  # an unhashable option: check it below (and say what is wrong)
            key, hit = None, None
        if hit is not None and hit[0] is program:
            return hit[1], hit[2]
    link, opts = _checked_options(robot, program, link, n_solutions, position_tolerance, orientation_tolerance,
                                  mask, padding, seeds, max_attempts)
    request = model.ik_request(**opts)
    if key is not None:
        if len(_REQUESTS) > 256:
            _REQUESTS.clear()
        _REQUESTS[key] = (program, link, request)
    return link, request


def _checked_options(robot, program, link, n_solutions, position_tolerance, orientation_tolerance, mask, padding,
                     seeds, max_attempts) -> tuple[str, dict]:
    link = default_link(robot, program) if link is None else link
    body, tip = _link_frame(program, link)
    if mask not in MASKS:
        raise ValueError(f"mask must be one of {[m for m in MASKS]}, got {mask!r}")
    mode, axis = MASKS[mask]
    rows = [] if seeds is None else np.clip(robot.check_joint_values(np.atleast_2d(seeds), "seeds"),
                                            robot.lower, robot.upper).reshape(-1).tolist()
    return link, {
        "tip_body": body, "tip": tip, "mode": mode, "axis": axis,
        "pos_tol": as_number(position_tolerance, "position_tolerance", 0.0, upper=10.0),
        "ori_tol": as_number(orientation_tolerance, "orientation_tolerance", 0.0, upper=np.pi),
        "n_solutions": as_int(n_solutions, "n_solutions", 1, 10_000),
        "max_attempts": as_int(max_attempts, "max_attempts", 1, MAX_ATTEMPTS), "attempt_iters": ATTEMPT_ITERATIONS,
        "min_distance": DISTINCT, "padding": float(padding), "seeds": rows}


def solve(robot, program, model, env_model, poses, link=None, *, n_solutions: int = 1, seed: int = 0,
          position_tolerance: float = POSITION_TOLERANCE, orientation_tolerance: float = ORIENTATION_TOLERANCE,
          mask=None, time_limit: float | None = None, padding: float = 0.0, seeds=None,
          max_attempts: int | None = None) -> list[IKResult]:
    """Robot.ik's and Robot.ik_many's work, one core call for every pose of ``poses`` (the lanes
    shared among them; pose i seeded from seed + i and the pose): ``program`` and ``model`` are the
    robot's kinematic program and core model, ``env_model`` the compiled environment. ``time_limit``
    (s; None or 0: none) counts from this call's start; ``max_attempts`` None: DEFAULT_MAX_ATTEMPTS
    without a time limit, no cap with one (see the module docstring)."""
    t0 = time.perf_counter_ns()
    limit = 0.0 if time_limit is None else as_number(time_limit, "time_limit", 0.0, allow_zero=True)
    seed = as_int(seed, "seed", 0, 2**64 - 1)
    if max_attempts is None:
        max_attempts = DEFAULT_MAX_ATTEMPTS if limit == 0.0 else MAX_ATTEMPTS
    targets = [parse_pose(p) for p in poses]
    link, req = request(robot, program, model, link, n_solutions, position_tolerance, orientation_tolerance, mask,
                        padding, seeds, max_attempts)
    if limit > 0.0:
        # the core's clock starts when it is called: what reading the poses took comes off its share
        # (at least 1 ns: 0 would mean no limit)
        limit = max(limit - (time.perf_counter_ns() - t0) * 1e-9, 1e-9)
    # the core kept only solutions its double-arithmetic forward kinematics places within the
    # tolerances (and free of collision by the kernels is_valid uses)
    outs = model.ik(env_model, req, targets, seed, limit)
    wanted = int(n_solutions)  # checked by request
    # the call's time shared evenly: the poses were solved in one go
    per = (time.perf_counter_ns() - t0) // max(len(targets), 1)
    # the core says "time_limit" when the deadline cut a pose short; a pose left short without it ran
    # out of restarts
    return [IKResult(solutions, len(solutions) > 0, errors, per, link, begun, colliding,
                     stopped or ("attempts" if len(solutions) < wanted else ""))
            for solutions, errors, begun, _, colliding, stopped in outs]
