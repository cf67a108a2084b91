"""Planning problems for any robot: MotionBenchMaker-style scene families scaled to its reach.

    problems = simdplan.scenes.generate(robot, "shelf", 20, seed=0)
    for p in problems:
        simdplan.plan(p.robot, p.env, p.start, p.goals)

How a problem is made (every step drawn from ``numpy.random.default_rng([seed, family, i])``, so
problem i is the same whatever ``n`` is, and the same on every machine):

1. The robot's workspace, measured once per robot: the end-effector points (``Robot.tip_links``:
   the mean origin of each end's tip links) of ``WORKSPACE_SAMPLES`` random self-collision-free
   configurations. Its *reach* R is the 95th percentile of their distance from the *shoulder* (the
   origin of the first body a joint moves); *forward* is the base frame's +x.
2. The family's obstacles, placed in front of the shoulder with sizes and positions in units of R,
   jittered per problem: ``table`` (a table with objects on it; start and goal above or under it),
   ``shelf`` (a bookshelf with shelves and a back; start and goal in two of its cells), ```cage`` (an
   open cage of bars; start above it, goal inside) and ``box`` (an open bin on a table; start above,
   goal inside). Obstacles are boxes, spheres and capsules, which every checker here models exactly.
3. Start and goals: random configurations, kept when they are valid in the scene, at least
   ``END_CLEARANCE`` (1 mm) from contact, and an end effector lies in the start (goal) region. A
   problem is drawn again (up to ``MAX_TRIES`` times) when its straight line from start to goal is
   already free (every problem needs a planner), or when RRT-Connect does not solve it within
   ``solvable_iterations`` iterations: random configurations often lie in different components of
   the free space (an arm on either side of its torso), and a problem no planner can solve measures
   nothing. The budget is in iterations,
   not seconds, so the problems are the same on every machine. The checks of all problems still
   open run at once (simdplan.plan_many, every core); each check's seed comes from its problem's
   stream, so the number of cores changes nothing.

The robot's base pose is respected: obstacles are placed in the base frame and moved with it. A
problem the generator cannot fill (the regions out of reach of this robot) raises ValueError.
"""

from __future__ import annotations

import dataclasses
import zlib

import numpy as np

from simdplan.collision.environment import Environment
from simdplan.scenes.reading import default_settings
from simdplan.scenes.scene import Scene
from simdplan.transforms import euler_xyz_to_matrix, matrix_to_quat

FAMILIES = ("table", "shelf", "cage", "box")
WORKSPACE_SAMPLES = 4000
CANDIDATES = 4000  # random configurations drawn per round when looking for a start or goal
PICK_ROUNDS = 25  # rounds per scene draw (small regions, such as inside a bin, need many)
MAX_TRIES = 40  # scene draws per problem before giving up
# Starts and goals keep at least this clearance (metres) from obstacles and from the robot itself:
# an end nearer contact is valid, but no certified Link can prove a motion out of it (its margin is
# 0.02 mm) and a task rarely means it; one such goal made a generated dual-arm problem unsolvable
# with certified Link (0.0027 mm of clearance).
END_CLEARANCE = 1e-3


@dataclasses.dataclass(frozen=True)
class Workspace:
    """Where a robot's end effectors go, in its base frame: shoulder (3,) and reach R (metres), the
    front of its static parts (x), and the end effectors (lists of link names)."""

    shoulder: np.ndarray
    reach: float
    front: float
    tips: list


def workspace(robot, tips: list | None = None, seed: int = 0) -> Workspace:
    """The robot's shoulder and reach (module docstring, step 1), in its base frame.

    Each end effector's shoulder is the origin of the first revolute joint's child link on its
    chain (a prismatic torso lifts the arm; the arm turns about its shoulder); the shoulder used for
    layouts is their mean and R the mean of their reaches. ``front`` is how far the static parts
    (links no joint moves, such as a mobile base) reach forward, so obstacles start beyond it."""
    tips = robot.tip_links() if tips is None else [[t] if isinstance(t, str) else list(t) for t in tips]
    rng = np.random.default_rng(seed)
    Q = rng.uniform(robot.lower, robot.upper, (WORKSPACE_SAMPLES, robot.dof))
    Q = Q[robot.is_valid_many(Q)]
    if len(Q) < 10:
        raise ValueError(f"robot {robot.name!r}: fewer than 10 of {WORKSPACE_SAMPLES} random configurations are "
                         "free of self-collision; cannot measure its workspace")
    inv = np.linalg.inv(robot.base_pose)
    pts = _to_base(inv, _tip_points(robot, Q, tips))  # (n, tips, 3)
    parent_joint = {j.child: j for j in robot.description.joints}
    shoulders, reaches = [], []
    for k, group in enumerate(tips):
        chain, link = [], group[0]
        while link in parent_joint:  # tip to root
            j = parent_joint[link]
            if j.name in robot.joint_names and j.type in ("revolute", "continuous"):
                chain.append(j.child)
            link = j.parent
        first = chain[-1] if chain else group[0]
        # NOTE: a torso lift moves the shoulder itself: its mean over the samples
        sh = _to_base(inv, robot.link_positions_many(Q, [first]))[:, 0].mean(axis=0)
        shoulders.append(sh)
        reaches.append(float(np.percentile(np.linalg.norm(pts[:, k] - sh, axis=1), 95)))
    static = set(robot.static_links())
    spheres = robot.fk(np.clip(np.zeros(robot.dof), robot.lower, robot.upper))
    fixed = np.array([link in static for link in robot.sphere_links], dtype=bool)
    front = float((_to_base(inv, spheres[fixed, :3])[:, 0] + spheres[fixed, 3]).max()) if fixed.any() else -np.inf
    return Workspace(shoulder=np.mean(shoulders, axis=0), reach=float(np.mean(reaches)), front=front, tips=tips)


def _to_base(inv: np.ndarray, p: np.ndarray) -> np.ndarray:
    return p @ inv[:3, :3].T + inv[:3, 3]


def _tip_points(robot, Q: np.ndarray, tips: list) -> np.ndarray:
    """(n, n_tips, 3) world end-effector points: the mean origin of each tip's links."""
    flat = [name for group in tips for name in group]
    pos = robot.link_positions_many(Q, flat)
    out, k = [], 0
    for group in tips:
        out.append(pos[:, k:k + len(group)].mean(axis=1))
        k += len(group)
    return np.stack(out, axis=1)


@dataclasses.dataclass
class _Layout:
    """One drawn scene in the base frame: obstacles and two regions (axis-aligned boxes)."""

    boxes: list  # (centre (3,), half extents (3,), yaw)
    spheres: list  # (centre, radius)
    capsules: list  # (centre, axis rotation euler (3,), radius, length)
    start_region: tuple  # (lo (3,), hi (3,))
    goal_region: tuple


def _table(rng, ws: Workspace) -> _Layout:
    s, R = ws.shoulder, ws.reach
    x0 = max(s[0] + R * rng.uniform(0.35, 0.55), ws.front + 0.05 * R)
    depth, width = R * rng.uniform(0.4, 0.6), R * rng.uniform(0.9, 1.3)
    top = s[2] - R * rng.uniform(0.15, 0.45)
    cy = s[1] + R * rng.uniform(-0.15, 0.15)
    t = 0.02 * R + 0.01
    boxes = [(np.array([x0 + depth / 2, cy, top - t]), np.array([depth / 2, width / 2, t]), 0.0)]
    spheres, capsules = [], []
    for _ in range(int(rng.integers(1, 4))):  # objects on the table
        c = np.array([x0 + depth * rng.uniform(0.2, 0.8), cy + width * rng.uniform(-0.4, 0.4), top])
        size = R * rng.uniform(0.03, 0.07)
        kind = rng.integers(0, 3)
        if kind == 0:
            boxes.append((c + [0, 0, size], np.full(3, size), float(rng.uniform(-np.pi, np.pi))))
        elif kind == 1:
            spheres.append((c + [0, 0, size], size))
        else:
            length = 2.5 * size
            capsules.append((c + [0, 0, size + length / 2], np.zeros(3), 0.6 * size, length))
    above = (np.array([x0, cy - width / 2, top + 0.05 * R]), np.array([x0 + depth, cy + width / 2, top + 0.35 * R]))
    under = (np.array([x0 + 0.1 * depth, cy - width / 2, top - 0.45 * R]), np.array([x0 + depth, cy + width / 2, top - 0.1 * R]))
    return _Layout(boxes, spheres, capsules, above, under if rng.random() < 0.3 else above)


def _shelf(rng, ws: Workspace) -> _Layout:
    s, R = ws.shoulder, ws.reach
    x0 = max(s[0] + R * rng.uniform(0.45, 0.6), ws.front + 0.25 * R)
    depth, width = R * rng.uniform(0.3, 0.45), R * rng.uniform(0.9, 1.3)
    bottom, height = s[2] - R * rng.uniform(0.5, 0.7), R * rng.uniform(1.0, 1.3)
    cy = s[1] + R * rng.uniform(-0.15, 0.15)
    t = 0.015 * R + 0.005
    levels = int(rng.integers(3, 5))
    zs = bottom + height * np.linspace(0.0, 1.0, levels + 1)
    boxes = [(np.array([x0 + depth / 2, cy, z]), np.array([depth / 2, width / 2, t]), 0.0) for z in zs]
    for side in (-1, 1):
        boxes.append((np.array([x0 + depth / 2, cy + side * width / 2, bottom + height / 2]),
                      np.array([depth / 2, t, height / 2]), 0.0))
    boxes.append((np.array([x0 + depth + t, cy, bottom + height / 2]), np.array([t, width / 2, height / 2]), 0.0))
    cells = [(np.array([x0 + 0.15 * depth, cy - 0.45 * width, zs[k] + 2 * t]),
              np.array([x0 + 0.85 * depth, cy + 0.45 * width, zs[k + 1] - 2 * t])) for k in range(levels)]
    a, b = rng.choice(levels, 2, replace=False)
    front = (np.array([s[0] + 0.2 * R, cy - 0.5 * width, zs[a]]), np.array([x0 - 0.05 * R, cy + 0.5 * width, zs[a + 1]]))
    return _Layout(boxes, [], [], cells[a] if rng.random() < 0.6 else front, cells[b])


def _cage(rng, ws: Workspace) -> _Layout:
    s, R = ws.shoulder, ws.reach
    c = s + R * np.array([rng.uniform(0.5, 0.65), rng.uniform(-0.15, 0.15), rng.uniform(-0.2, 0.05)])
    h = R * rng.uniform(0.28, 0.36, 3)
    c[0] = max(c[0], ws.front + 1.1 * h[0])
    r = 0.012 * R + 0.005
    boxes = []
    # the twelve edges, and one bar across each side face but the front
    for axis in range(3):
        for u in (-1, 1):
            for v in (-1, 1):
                centre = c.copy()
                others = [k for k in range(3) if k != axis]
                centre[others[0]] += u * h[others[0]]
                centre[others[1]] += v * h[others[1]]
                half = np.full(3, r)
                half[axis] = h[axis]
                boxes.append((centre, half, 0.0))
    for axis, sign in ((0, 1), (1, -1), (1, 1), (2, 1)):
        centre = c.copy()
        centre[axis] += sign * h[axis]
        along = 2 if axis != 2 else 1
        half = np.full(3, r)
        half[along] = h[along]
        boxes.append((centre, half, 0.0))
    inside = (c - 0.6 * h, c + 0.6 * h)
    above = (c + [-h[0], -h[1], 1.15 * h[2]], c + [h[0], h[1], 1.15 * h[2] + 0.3 * R])
    return _Layout(boxes, [], [], above, inside)


def _box(rng, ws: Workspace) -> _Layout:
    R = ws.reach
    lay = _table(rng, ws)
    (tc, th, _) = lay.boxes[0]
    top = tc[2] + th[2]
    c = np.array([tc[0], tc[1] + R * rng.uniform(-0.2, 0.2), top])
    h = R * np.array([rng.uniform(0.15, 0.22), rng.uniform(0.18, 0.26), rng.uniform(0.08, 0.14)])
    t = 0.01 * R + 0.004
    boxes = [lay.boxes[0], (c + [0, 0, t], np.array([h[0], h[1], t]), 0.0)]
    for axis in (0, 1):
        for sign in (-1, 1):
            centre = c + [0, 0, h[2]]
            centre[axis] += sign * h[axis]
            half = np.array([h[0], h[1], h[2]])
            half[axis] = t
            boxes.append((centre, half, 0.0))
    inside = (c + [-0.6 * h[0], -0.6 * h[1], 3 * t], c + [0.6 * h[0], 0.6 * h[1], 1.6 * h[2]])
    above = (c + [-h[0], -h[1], 2.2 * h[2]], c + [h[0], h[1], 2.2 * h[2] + 0.3 * R])
    return _Layout(boxes, [], [], above, inside)


_FAMILY = {"table": _table, "shelf": _shelf, "cage": _cage, "box": _box}


def _environment(lay: _Layout, base: np.ndarray) -> Environment:
    env = Environment()
    R0, t0 = base[:3, :3], base[:3, 3]
    for k, (c, half, yaw) in enumerate(lay.boxes):
        quat = matrix_to_quat(R0 @ euler_xyz_to_matrix(np.array([0.0, 0.0, yaw])))
        env.add_box(R0 @ c + t0, quat, half_extents=half, name=f"box{k}")
    for k, (c, r) in enumerate(lay.spheres):
        env.add_sphere(R0 @ c + t0, r, name=f"sphere{k}")
    for k, (c, euler, r, length) in enumerate(lay.capsules):
        env.add_capsule(R0 @ c + t0, matrix_to_quat(R0 @ euler_xyz_to_matrix(euler)), radius=r, length=length,
                        name=f"capsule{k}")
    return env


def _pick(robot, env, rng, tips, inv, region, count: int) -> np.ndarray:
    """Up to ``count`` valid configurations, END_CLEARANCE from contact, with an end effector inside
    ``region`` (base frame)."""
    lo, hi = region
    out = []
    for _ in range(PICK_ROUNDS):
        Q = rng.uniform(robot.lower, robot.upper, (CANDIDATES, robot.dof))
        p = _to_base(inv, _tip_points(robot, Q, tips))  # (n, tips, 3)
        inside = ((p >= lo) & (p <= hi)).all(axis=2).any(axis=1)
        Q = Q[inside]
        if len(Q):
            Q = Q[robot.is_valid_many(Q, env)]
        # the first valid ones clear of contact, in order; clearances (costlier than validity) only
        # for as many as may be needed
        while len(Q) and len(out) < count:
            take = count - len(out) + 8  # and a few more, in case some are too close
            head, Q = Q[:take], Q[take:]
            out.extend(head[robot.clearance_many(head, env) >= END_CLEARANCE][: count - len(out)])
        if len(out) >= count:
            break
    return np.array(out).reshape(-1, robot.dof)


def generate(robot, family: str, n: int, seed: int = 0, *, goals: int = 1, tips: list | None = None,
             robot_spec=None, solvable_iterations: int = 200_000, workers: int | None = None) -> list[Scene]:
    """``n`` problems of ``family`` (one of FAMILIES) for ``robot``; see the module docstring.

    goals: valid goal configurations per problem (all with an end effector in the goal region).
    tips: end effectors as lists of link names (default ``robot.tip_links()``). robot_spec: how a
    saved scene names the robot (a built-in name or {urdf, srdf, ...}; default the robot's own
    ``source`` if it was loaded from a file, else None: such scenes plan but cannot be saved).
    solvable_iterations: the RRT-Connect budget a problem must be solved within (0: no check).
    workers: threads for those checks (simdplan.plan_many; None: every core). The problems do not
    depend on it.
    Each Scene has ``name`` "<family>_<i>", ``problem`` (the family), ``index`` i (1-based) and the
    default planner settings. Raises ValueError for an unknown family, bad counts, or when a problem
    cannot be filled after MAX_TRIES draws (the regions are out of this robot's reach).
    """
    if family not in _FAMILY:
        raise ValueError(f"unknown problem family {family!r}; families: {', '.join(FAMILIES)}")
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
        raise ValueError(f"n must be an integer >= 0, got {n!r}")
    from simdplan.planner import plan_many  # noqa: PLC0415 (the planner package imports this one's package)

    if isinstance(goals, bool) or not isinstance(goals, (int, np.integer)) or goals < 1:
        raise ValueError(f"goals must be an integer >= 1, got {goals!r}")
    ws = workspace(robot, tips, seed)
    base = np.asarray(robot.base_pose, dtype=np.float64)
    inv = np.linalg.inv(base)
    spec = robot_spec if robot_spec is not None else getattr(robot, "source", None)
    family_key = zlib.crc32(family.encode())
    rngs = [np.random.default_rng([int(seed), family_key, i]) for i in range(int(n))]
    tries = [0] * int(n)
    found: list = [None] * int(n)

    def draw(i: int) -> tuple:
        """Problem i's next scene that needs a planner: (env, start, goal, seed of its check)."""
        rng = rngs[i]
        while tries[i] < MAX_TRIES:
            tries[i] += 1
            lay = _FAMILY[family](rng, ws)
            env = _environment(lay, base)
            start = _pick(robot, env, rng, ws.tips, inv, lay.start_region, 1)
            goal = _pick(robot, env, rng, ws.tips, inv, lay.goal_region, goals)
            if len(start) and len(goal) == goals and not robot.is_motion_valid(start[0], goal[0], env):
                return env, start[0], goal, int(rng.integers(2**31))
        raise ValueError(f"robot {robot.name!r}, family {family!r}, problem {i + 1}: no valid start and goal with "
                         f"an end effector in the task regions after {MAX_TRIES} scenes (reach {ws.reach:.2f} m)")

    # PERF: the solvability checks (98% of the time: a scene RRT-Connect cannot solve runs the whole
    # budget) of every problem still open run at once on every core. Each problem draws from its
    # own random stream, so the problems are the same whatever the order of the checks.
    pending = list(range(int(n)))
    while pending:
        drawn = {i: draw(i) for i in pending}
        if not solvable_iterations:
            for i, d in drawn.items():
                found[i] = d
            break
        checks = [Scene(robot=robot, env=env, start=q0, goals=qg, settings=_check_settings(check_seed))
                  for env, q0, qg, check_seed in drawn.values()]
        solved = plan_many(checks, workers=workers, indices=[0] * len(checks), progress=False,
                           max_iterations=int(solvable_iterations))
        for i, r in zip(drawn, solved):
            if r.success:
                found[i] = drawn[i]
        pending = [i for i in pending if found[i] is None]
    return [Scene(robot=robot, env=env, start=start, goals=goal, settings=default_settings(), name=f"{family}_{i + 1}",
                  description=f"generated {family} problem {i + 1} (seed {seed})", robot_spec=spec, problem=family,
                  index=i + 1, valid=True) for i, (env, start, goal, _) in enumerate(found)]


def _check_settings(seed: int):
    """The solvability check's planner settings: RRT-Connect from this seed (task_seed(seed, 0) in
    plan_many), no simplification, no time limit (the budget is in iterations, so the problems are
    the same on every machine)."""
    return dataclasses.replace(default_settings(), planner="rrtc", seed=seed, simplify=False, time_limit=0)
