"""simdplan.robots.Robot: a sphere-approximated robot loaded at run time, and its checks.

Units and frames: joint values in radians (revolute, continuous) or metres (prismatic), in the
order of ``robot.joint_names``; positions in metres in the world frame (the robot's base frame
unless ``base_pose`` was given). Geometry is evaluated in float32 by the C++ core; results within
about 1e-6 m of a contact boundary may go either way.

Validity ("Clear(q)"): a configuration is valid iff every joint value is within its limits
(continuous joints accept any angle), no robot sphere (radius + padding) penetrates an obstacle,
and no two spheres of a checked link pair penetrate each other. Penetration is strict: touching
is free. Non-finite joint values raise ValueError; out-of-limit values make q invalid.
"""

from __future__ import annotations

import os

import numpy as np

from simdplan import _core
from simdplan.collision.environment import Environment
from simdplan.robots.ik import (DEFAULT_MAX_ATTEMPTS, ORIENTATION_TOLERANCE, POSITION_TOLERANCE, request as ik_request,
                                solve as solve_ik)
from simdplan.robots.description import (MOVABLE, JointDesc, LinkDesc, RobotDescription, read_srdf, read_urdf,
                                         require_spheres)
from simdplan.robots.kinematics import compile_program
from simdplan.robots.program import Program
from simdplan.robots.reports import CERT_STATUS, DistanceReport, MotionCertificate, Proximity, Violation
from simdplan.robots.self_collision import certify_self_collision
from simdplan import specialize
from simdplan.transforms import check_pose_matrix
from simdplan.validation import check_padding, sphere_array

# A robot's default resolution (discrete Link samples per unit of joint-space distance) puts the
# samples of an edge close enough that no sphere centre travels more than this between two of them
# by the motion bound (``Robot.speed_bound``; typical travel is 3-5x less). The panda then gets 32.2
# samples per radian, about the 32 of the MotionBenchMaker reference figures; a robot with longer
# links or metres of prismatic travel gets more, a small one fewer.
MAX_SAMPLE_TRAVEL = 0.06
# Resolution when no sphere moves at all (nothing to bound).
DEFAULT_RESOLUTION = 32.0
# Longest tree edge in joint-space distance (rad / m) when the joint space is large; smaller joint
# spaces get a quarter of their diagonal; either is then rounded so that a full-length edge holds a
# multiple of RANGE_SAMPLES samples at the robot's resolution (the widest SIMD vector: no pass of the
# motion check runs part empty). See Robot.default_settings.
DEFAULT_RANGE = 1.0
RANGE_SAMPLES = 16
# Starts and goals at most this far outside a joint limit (radians or metres) are moved onto the limit
# by the planners (``limit_tolerance``): float32 round trips, encoders and other software put joint
# values a few ulps past limits written with 5-6 digits (3.14159265 against 3.14159 is 2.7e-6 rad).
DEFAULT_LIMIT_TOLERANCE = 1e-4
# Certified Link: stretches shorter than this (joint-space distance, rad / m) that are still not
# proven free end the check as "undecided". About 1 mm of travel for the panda's hand.
DEFAULT_MIN_STEP = 1e-3

# Continuous joints take any angle and are wrapped to [-pi, pi]; a value beyond this magnitude
# (radians) is refused by ``Robot.check_joint_values`` as a mistake: float64 spacing there is over
# 1e-10 rad and grows with the value, so at 1e17 and beyond the wrapped angle is arbitrary.
MAX_CONTINUOUS_VALUE = 1e6
_EMPTY_ENV = None
# numpy hands out this one descriptor object for native float64, so an identity test is exact and
# is the cheapest check on the single-call hot path (byte-swapped float64 goes through _as_f64).
_F64 = np.dtype(np.float64)


def _empty_env():
    global _EMPTY_ENV
    if _EMPTY_ENV is None:
        _EMPTY_ENV = Environment()
    return _EMPTY_ENV


def _environment(env) -> Environment:
    """``env``, or the shared empty Environment for None; TypeError for anything else."""
    if env is None:
        return _empty_env()
    if not isinstance(env, Environment):
        raise TypeError(f"env must be a simdplan.Environment or None, got {type(env).__name__}")
    return env


def _as_f64(value, name: str) -> np.ndarray:
    """Joint values as float64 (shape is checked by the core). Refuses bool, complex, text."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be real numbers (float or int), got dtype {arr.dtype}")
    return arr.astype(np.float64, copy=False)




def _speed_bound(prog: Program) -> float:
    """Metres a sphere centre can travel at most per unit of joint-space (Euclidean) distance: the
    largest over spheres of the 2-norm of its per-joint reaches (motion bound, Cauchy-Schwarz)."""
    reach = np.asarray(prog.reach_table(), dtype=np.float64)  # (n_spheres, n_bodies)
    if reach.size == 0 or prog.dof == 0:
        return 0.0
    per_joint = np.zeros((reach.shape[0], prog.dof))
    for b, d in enumerate(prog.body_dof):
        if d >= 0:
            per_joint[:, int(d)] += abs(float(prog.body_scale[b])) * reach[:, b]
    return float(np.sqrt((per_joint ** 2).sum(axis=1)).max())


class Robot:
    """A robot as spheres on a kinematic tree, compiled for the SIMD core.

    Build with ``Robot.from_urdf`` or ``simdplan.robots.load(name)``. Arrays returned by the
    geometry queries are float32 (the precision they are computed in).
    """

    def __init__(self, description: RobotDescription, disabled_pairs: set | None = None, *,
                 joints: list[str] | None = None, fixed_joint_values: dict | None = None,
                 base_pose=None, skip_adjacent: bool = True, resolution: float | None = None) -> None:
        require_spheres(description)
        self.description = description
        movable = [j.name for j in description.joints if j.type in MOVABLE and j.mimic is None]
        if joints is None:
            joints = movable
        joints = list(joints)
        unknown = [n for n in joints if n not in movable]
        if unknown:
            raise ValueError(f"unknown or non-actuated joints {unknown}; actuated joints are {movable}")
        if len(set(joints)) != len(joints):
            raise ValueError(f"joints listed twice in {joints}")
        held = dict(fixed_joint_values or {})
        by_name = {j.name: j for j in description.joints}
        for name, value in held.items():
            if name not in movable or name in joints:
                raise ValueError(f"fixed_joint_values names {name!r}, which is not an actuated joint left out of "
                                 f"`joints`; those are {[n for n in movable if n not in joints]}")
            v = float(value)
            j = by_name[name]
            if not np.isfinite(v) or (j.type != "continuous" and not j.lower <= v <= j.upper):
                raise ValueError(f"fixed value {v} for joint {name!r} is outside its limits [{j.lower}, {j.upper}]")
            held[name] = v
        for name in movable:
            j = by_name[name]
            if name not in joints and name not in held and j.type != "continuous" and not j.lower <= 0.0 <= j.upper:
                raise ValueError(f"joint {name!r} is held but 0 is outside its limits: give it in fixed_joint_values")
        pose = np.eye(4) if base_pose is None else check_pose_matrix(base_pose, "base_pose")
        if resolution is not None and not (np.isfinite(float(resolution)) and float(resolution) > 0):
            raise ValueError(f"resolution must be > 0 samples per unit of joint distance, got {resolution!r}")
        self._disabled = set(disabled_pairs or ())
        self.base_pose = pose  # (4, 4) world pose of the root link
        self.fixed_joint_values = dict(held)  # actuated joints left out of `joints`, at these values
        self._kwargs = dict(joints=joints, fixed_joint_values=held, base_pose=pose, skip_adjacent=skip_adjacent,
                            resolution=resolution)
        self.attachments: dict[str, str] = {}  # attached object name -> the link it hangs from
        # How a scene file names this robot (simdplan.scenes): a built-in name or {urdf, srdf, ...};
        # None for robots built in Python or changed after loading (attachments).
        self.source: str | dict | None = None
        self._program: Program = compile_program(description, joints, held, pose, self._disabled, skip_adjacent)
        certify_self_collision(self._program)
        self._model = _core.RobotModel(*self._program.core_args())
        self.speed_bound = _speed_bound(self._program)
        self.resolution = (float(resolution) if resolution is not None else
                           self.speed_bound / MAX_SAMPLE_TRAVEL if self.speed_bound > 0 else DEFAULT_RESOLUTION)
        span = np.where(self._program.wrap.astype(bool), 2 * np.pi, self._program.upper - self._program.lower)
        wanted = float(min(DEFAULT_RANGE, 0.25 * np.linalg.norm(span))) if self.dof else DEFAULT_RANGE
        # NOTE: a full-length edge then holds a whole number of RANGE_SAMPLES-sample vectors: at 32.2
        # samples per radian a 1.0 rad edge needs 33 samples, three 16-lane passes instead of two
        # (MotionBenchMaker panda problems: median planning 10% slower than at 32.0)
        fill = round(wanted * self.resolution / RANGE_SAMPLES) * RANGE_SAMPLES
        self.default_range = fill / self.resolution if fill >= RANGE_SAMPLES else wanted
        self._core_is_valid = self._model.is_valid  # bound once: the single check is the hottest call
        radii = self._program.spheres[:, 3].astype(np.float32)
        self._radius_range = (float(radii.min()), float(radii.max())) if len(radii) else (0.0, 0.0)
        self._wrap_mask = self._program.wrap.astype(bool)
        self._wrap_mask.flags.writeable = False
        self._wraps = bool(self._wrap_mask.any())  # any continuous joint wrapped (checked per plan call)
        # the kernel specialized for this robot: attached now if cached, else built in the background
        self._kernel_status = specialize.on_load(self)

    def __reduce__(self):
        # pickling (e.g. Ray's object store) carries the description, which holds every sphere, so
        # the copy needs none of the robot's files; it is compiled again where it is unpickled
        return _rebuilt_robot, (self.description, self._disabled, self._kwargs, self.source, self.attachments)

    @classmethod
    def from_urdf(cls, urdf: str | os.PathLike, srdf: str | os.PathLike | None = None, *,
                  spherize: bool | dict = True, **kwargs) -> "Robot":
        """Load a robot from a URDF, with an optional SRDF.

        Collision geometry should be spheres. If it is not (meshes, boxes, cylinders) and
        ``spherize`` is true, the links are covered by spheres on the fly
        (simdplan.robots.spherize_urdf.cached_spherized_urdf: conservative, every collision-mesh point
        inside the spheres; the first load of a robot takes seconds, later loads reuse the cached
        file) and a UserWarning says so with the largest protrusion; a dict gives its parameters
        (max_spheres_per_link, tolerance). ``spherize=False`` refuses such a URDF instead.

        SRDF ``disable_collisions`` pairs are never checked. Keyword arguments: ``joints`` (the
        active joints, in configuration order; default every actuated joint in URDF order),
        ``fixed_joint_values`` (values of the other joints, default 0), ``base_pose`` (4x4 pose
        of the root link in the world), ``skip_adjacent`` (see simdplan.robots.kinematics;
        default True), ``resolution`` (default samples per unit joint distance for motion checks).
        """
        desc = read_urdf(urdf)
        if spherize and any(link.other_geometry for link in desc.links.values()):
            import json  # noqa: PLC0415
            import warnings  # noqa: PLC0415

            from simdplan.robots.spherize_urdf import cached_spherized_urdf  # noqa: PLC0415 (trimesh-heavy)

            params = dict(spherize) if isinstance(spherize, dict) else {}
            path = cached_spherized_urdf(urdf, **params)
            worst = ""
            report = os.path.splitext(path)[0] + ".json"  # {link: report}, written beside the cached URDF
            if os.path.exists(report):
                with open(report) as f:
                    prot = [r["max_protrusion"] for r in json.load(f).values()]
                if prot:
                    worst = f"; spheres reach up to {max(prot) * 1000:.1f} mm beyond the meshes"
            warnings.warn(f"{os.fspath(urdf)}: collision geometry covered by spheres on the fly ({path}){worst}",
                          UserWarning, stacklevel=2)
            desc = read_urdf(path)
        pairs = read_srdf(srdf, set(desc.links)) if srdf is not None else set()
        robot = cls(desc, pairs, **kwargs)
        source = {"urdf": os.path.abspath(os.fspath(urdf))}
        if srdf is not None:
            source["srdf"] = os.path.abspath(os.fspath(srdf))
        for key in ("joints", "fixed_joint_values"):
            if kwargs.get(key) is not None:
                source[key] = kwargs[key]
        if kwargs.get("base_pose") is not None:
            source["base_pose"] = np.asarray(kwargs["base_pose"], dtype=np.float64).tolist()
        robot.source = source if set(kwargs) <= {"joints", "fixed_joint_values", "base_pose"} else None
        return robot

    # ----- attachments -----
    def attach(self, link: str, spheres=None, *, mesh=None, pose=None, name: str = "attached",
               allowed_contacts=(), max_spheres: int = 32, tolerance: float = 0.005) -> "Robot":
        """A new Robot carrying an object rigidly attached to ``link`` (this robot is unchanged).

        The object is ``spheres`` (k, 4) [x, y, z, r] in its own frame, or a ``mesh`` (a
        trimesh.Trimesh or a mesh file) covered by spheres on the fly (simdplan.robots.spherize,
        conservative: every mesh point inside the spheres, protruding at most about ``tolerance``).
        ``pose`` (4, 4) places the object's frame in the link's frame (default: identity). Every check
        and planner of the new robot includes the object: against obstacles, and against the robot's
        other links except the link it hangs from, the links rigidly joined to it and those one
        movable joint away (the adjacency rule of simdplan.robots.kinematics), and
        ``allowed_contacts`` (link names it may touch, e.g. fingers holding it).
        """
        desc = self.description
        if link not in desc.links:
            raise ValueError(f"cannot attach to unknown link {link!r}; links are {sorted(desc.links)}")
        if not isinstance(name, str) or not name or name in desc.links:
            raise ValueError(f"the attachment needs a new link name, got {name!r}")
        if (spheres is None) == (mesh is None):
            raise ValueError("give exactly one of spheres or mesh")
        if mesh is not None:
            from simdplan.collision.mesh import check_mesh_path  # noqa: PLC0415
            from simdplan.robots.spherize import spherize_mesh  # noqa: PLC0415 (trimesh-heavy, optional)
            import trimesh  # noqa: PLC0415

            if isinstance(mesh, (str, os.PathLike)):
                # named errors (not found, a directory, unsupported format ...) instead of trimesh's own
                path = check_mesh_path(mesh)
                try:
                    m = trimesh.load(path, force="mesh")
                except Exception as e:  # trimesh raises many types for malformed files
                    raise ValueError(f"could not read a mesh from {path}: {type(e).__name__}: {e}") from None
            else:
                m = mesh
            spheres = spherize_mesh(m, max_spheres=max_spheres, tolerance=tolerance).spheres

        sph = sphere_array(spheres, name)
        if len(sph) == 0:
            raise ValueError("an attachment needs at least one sphere")
        origin = np.eye(4) if pose is None else check_pose_matrix(pose, "pose")
        unknown = [n for n in allowed_contacts if n not in desc.links]
        if unknown:
            raise ValueError(f"allowed_contacts names unknown links {unknown}")
        links = dict(desc.links)
        links[name] = LinkDesc(name, sph, [])
        joint = JointDesc(f"{name}_attachment", "fixed", link, name, origin, np.array([0.0, 0.0, 1.0]), 0.0, 0.0, None)
        new_desc = RobotDescription(desc.name, links, list(desc.joints) + [joint], desc.root, desc.urdf_path)
        disabled = set(self._disabled) | {frozenset((name, other)) for other in allowed_contacts}
        robot = Robot(new_desc, disabled, **self._kwargs)
        robot.attachments = {**self.attachments, name: link}
        return robot

    def detach(self, name: str) -> "Robot":
        """A new Robot without the attached object ``name``."""
        if name not in self.attachments:
            raise ValueError(f"no attachment named {name!r}; attached: {sorted(self.attachments)}")
        desc = self.description
        links = {k: v for k, v in desc.links.items() if k != name}
        joints = [j for j in desc.joints if j.child != name]
        new_desc = RobotDescription(desc.name, links, joints, desc.root, desc.urdf_path)
        disabled = {p for p in self._disabled if name not in p}
        robot = Robot(new_desc, disabled, **self._kwargs)
        robot.attachments = {k: v for k, v in self.attachments.items() if k != name}
        return robot

    # ----- description -----
    @property
    def name(self) -> str:
        return self.description.name

    @property
    def dof(self) -> int:
        return self._program.dof

    @property
    def joint_names(self) -> list[str]:
        return list(self._program.joint_names)

    @property
    def lower(self) -> np.ndarray:
        """(dof,) float64 lower limits; continuous joints report -pi (any angle is valid)."""
        return self._program.lower.copy()

    @property
    def upper(self) -> np.ndarray:
        """(dof,) float64 upper limits; continuous joints report +pi (any angle is valid)."""
        return self._program.upper.copy()

    @property
    def velocity_limits(self) -> np.ndarray:
        """(dof,) float64 joint speed limits (rad/s or m/s) from the URDF's ``<limit velocity=...>``
        (or RobotBuilder's ``velocity=``); NaN for a joint that gives none."""
        by_name = {j.name: j.velocity for j in self.description.joints}
        return np.array([np.nan if by_name.get(n) is None else by_name[n] for n in self.joint_names])

    @property
    def link_names(self) -> list[str]:
        return list(self._program.link_names)

    @property
    def n_spheres(self) -> int:
        return len(self._program.spheres)

    @property
    def sphere_links(self) -> list[str]:
        """Link of each sphere, in the order of ``fk`` rows."""
        return [self._program.group_links[g] for g in self._program.sphere_group]

    @property
    def self_collision_pairs(self) -> list[tuple[str, str]]:
        """Link pairs checked for self-collision."""
        g = self._program.group_links
        return [(g[a], g[b]) for a, b in self._program.pairs]

    def __repr__(self) -> str:
        return (f"Robot({self.name!r}, dof={self.dof}, links={len(self._program.link_names)}, "
                f"spheres={self.n_spheres}, self_pairs={len(self._program.pairs)})")

    # ----- kinematics -----
    def fk(self, q) -> np.ndarray:
        """World sphere centres and radii at ``q`` (dof,): (n_spheres, 4) float32 [x, y, z, r]."""
        return self._model.fk_spheres(self._one_row(q))[0]

    def _one_row(self, q) -> np.ndarray:
        """q (dof,) as a (1, dof) float64 batch for the batched kernels (the core checks the length)."""
        q = _as_f64(q, "q")
        if q.ndim != 1:
            raise ValueError(f"q must have shape ({self.dof},), got {q.shape}")
        return q.reshape(1, -1)

    def fk_many(self, Q) -> np.ndarray:
        """World spheres for every row of ``Q`` (n, dof): (n, n_spheres, 4) float32."""
        return self._model.fk_spheres(_as_f64(Q, "Q"))

    def link_poses(self, q) -> dict[str, np.ndarray]:
        """World pose (4, 4) float64 of every link at ``q`` (dof,)."""
        bodies = self._model.fk_bodies(self._one_row(q))[0].astype(np.float64)
        frames = np.zeros((len(bodies), 4, 4))
        frames[:, :3, :] = bodies.reshape(-1, 3, 4)
        frames[:, 3, 3] = 1.0
        p = self._program
        return {name: frames[p.link_body[i]] @ p.link_in_body[i] for i, name in enumerate(p.link_names)}

    def link_positions_many(self, Q, links) -> np.ndarray:
        """World positions of the frames of ``links`` (link names) for every row of ``Q`` (n, dof):
        (n, len(links), 3) float64 (computed from float32 body frames)."""
        names = [links] if isinstance(links, str) else list(links)
        index = {name: i for i, name in enumerate(self._program.link_names)}
        unknown = [n for n in names if n not in index]
        if unknown:
            raise ValueError(f"unknown links {unknown}; links are {self._program.link_names}")
        bodies = self._model.fk_bodies(_as_f64(Q, "Q")).astype(np.float64)  # (n, n_bodies, 12)
        frames = bodies.reshape(len(bodies), -1, 3, 4)
        p = self._program
        out = np.empty((len(bodies), len(names), 3))
        for k, name in enumerate(names):
            i = index[name]
            T = frames[:, p.link_body[i]]
            local = p.link_in_body[i][:3, 3]
            out[:, k] = T[:, :, :3] @ local + T[:, :, 3]
        return out

    def ik(self, pose, link: str | None = None, env: Environment | None = None, *, n_solutions: int = 1,
           seed: int = 0, position_tolerance: float = POSITION_TOLERANCE,
           orientation_tolerance: float = ORIENTATION_TOLERANCE, mask=None,
           time_limit: float | None = None, padding: float = 0.0, seeds=None, max_attempts: int | None = None):
        """Joint configurations putting ``link`` at ``pose`` (world; a 4x4 matrix or (position,
        quaternion [x, y, z, w])): an IKResult (.solutions (k, dof), .success, .errors, .time_ns,
        .stopped). Solutions are inside the limits, free of self-collision and of ``env`` (with
        ``padding``), and within the tolerances (m, rad) by float64 forward kinematics. ``mask``:
        None or "pose", "position", "free_x", "free_y" or "free_z". ``seeds``: (m, dof) first guesses.
        ``seed``: an integer in [0, 2**64). The search stops at ``n_solutions`` solutions, or else:
        with ``time_limit`` (s, from the call's start) when it passes, restarting until then; without
        one after ``max_attempts`` restarts (default ik.DEFAULT_MAX_ATTEMPTS, so an unreachable pose
        fails in milliseconds); ``max_attempts`` given with ``time_limit``: whichever comes first.
        ``.stopped`` says which ("time_limit", "attempts"). Details and the default link: simdplan.robots.ik."""
        if padding != 0.0:
            padding = check_padding(padding)
        return solve_ik(self, self._program, self._model, self._env_model(env, padding), [pose], link,
                        n_solutions=n_solutions, seed=seed, position_tolerance=position_tolerance,
                        orientation_tolerance=orientation_tolerance, mask=mask, time_limit=time_limit,
                        padding=padding, seeds=seeds, max_attempts=max_attempts)[0]

    def ik_many(self, poses, link: str | None = None, env: Environment | None = None, *, seed: int = 0,
                padding: float = 0.0, **kwargs) -> list:
        """``ik`` for every pose of ``poses`` (a sequence of poses, or (n, 4, 4)) in one core call, the
        same options (``ik``'s keywords; ``time_limit`` bounds the whole batch's search, from the
        call's start, and ``max_attempts`` counts per pose). The SIMD lanes are shared among the
        poses: a lane whose restart failed tries its pose again, one whose pose is solved takes up the
        next pose, so none keeps working on a solved pose. Pose i draws its restarts from seed + i and
        the pose itself; results are deterministic but not those of ``ik`` one pose at a time. Making
        the results comes after the time limit: a few microseconds per pose."""
        if padding != 0.0:
            padding = check_padding(padding)
        return solve_ik(self, self._program, self._model, self._env_model(env, padding), poses, link,
                        seed=seed, padding=padding, **kwargs)

    def ik_request(self, link: str | None = None, *, n_solutions: int = 1, mask=None, padding: float = 0.0,
                   position_tolerance: float = POSITION_TOLERANCE,
                   orientation_tolerance: float = ORIENTATION_TOLERANCE):
        """(link, the core's IK request) for ``ik``'s options: what simdplan.plan(goal_pose=...) hands
        the core, which solves and plans in one call. Checked as ``ik`` checks them."""
        if padding != 0.0:
            padding = check_padding(padding)
        return ik_request(self, self._program, self._model, link, n_solutions, position_tolerance,
                          orientation_tolerance, mask, padding, None, DEFAULT_MAX_ATTEMPTS)

    def static_links(self) -> list[str]:
        """Links no active joint moves (fixed joints, held joints and the links beyond them): the
        same in every configuration. The kernels test their spheres against an environment once."""
        p = self._program
        return [name for name, body in zip(p.link_names, p.link_body) if body == 0]

    def tip_links(self) -> list[list[str]]:
        """The links at the ends of the kinematic tree that joints move, one list per end (per arm):
        for every body with no moving child body, its links without child links (fingers, tool
        frames), or its first link if all have children. The default end effectors of problem
        generators (simdplan.scenes.generate), which use the mean of each list's link origins."""
        p = self._program
        parents = {int(b) for b in p.body_parent if b >= 0}
        leaf_bodies = [b for b in range(1, len(p.body_parent)) if b not in parents]
        has_child = {j.parent for j in self.description.joints}
        out = []
        for b in leaf_bodies:
            links = [n for n, lb in zip(p.link_names, p.link_body) if lb == b]
            leaves = [n for n in links if n not in has_child]
            out.append(leaves or links[:1])
        return out

    # ----- validity -----
    def clamp_to_limits(self, Q, tolerance: float = DEFAULT_LIMIT_TOLERANCE) -> tuple[np.ndarray, np.ndarray]:
        """Moves joint values that lie outside a limit by at most ``tolerance`` onto that limit.

        Q: (dof,) or (n, dof) joint values. tolerance: radians for revolute joints, metres for
        prismatic ones (the same number for both; >= 0). Returns (clamped copy of Q as float64, bool
        mask of the values moved, same shape). Values further outside, non-finite values and
        continuous joints are left as they are, so ``is_valid`` still reports them. The planners do
        this to every start and goal (``PlannerSettings.limit_tolerance``); ``is_valid`` itself is
        strict.
        """
        tol = float(tolerance)
        if not (np.isfinite(tol) and tol >= 0):
            raise ValueError(f"tolerance must be finite and >= 0 (radians or metres), got {tolerance!r}")
        out = np.array(_as_f64(Q, "Q"), dtype=np.float64)  # a copy
        if out.shape[-1:] != (self.dof,) or out.ndim > 2:
            raise ValueError(f"Q must have shape ({self.dof},) or (n, {self.dof}), got {out.shape}")
        lo, hi = self._program.lower, self._program.upper
        bounded = ~self._wrap_mask
        below = bounded & (out < lo) & (out >= lo - tol)
        above = bounded & (out > hi) & (out <= hi + tol)
        out = np.where(below, lo, np.where(above, hi, out))
        return out, below | above

    def check_joint_values(self, Q, what: str = "q") -> np.ndarray:
        """``Q`` (dof,) or (n, dof) as float64, or a ValueError naming the configuration, the joint
        and why: a non-finite value, or a continuous joint's value beyond +-MAX_CONTINUOUS_VALUE rad
        (a start or goal that wraps to an arbitrary angle). Limits are not checked (``is_valid``)."""
        arr = np.array(_as_f64(Q, what), dtype=np.float64)
        if arr.shape[-1:] != (self.dof,) or arr.ndim > 2:
            raise ValueError(f"{what} must have shape ({self.dof},) or (n, {self.dof}), got {arr.shape}")
        rows = arr.reshape(-1, self.dof)
        bad = ~np.isfinite(rows) | (self._wrap_mask & ~(np.abs(rows) <= MAX_CONTINUOUS_VALUE))
        if bad.any():
            r, j = (int(k[0]) for k in np.nonzero(bad))
            value = float(rows[r, j])
            where = what if arr.ndim == 1 else f"{what} row {r}"
            kind = next(d.type for d in self.description.joints if d.name == self.joint_names[j])
            why = ("is not finite" if not np.isfinite(value) else
                   f"is beyond +-{MAX_CONTINUOUS_VALUE:g} rad, where its angle after wrapping to [-pi, pi] "
                   "is lost to rounding; give it within [-pi, pi]")
            raise ValueError(f"{where}: joint {self.joint_names[j]!r} ({kind}) = {value!r} {why}")
        return arr

    def is_valid(self, q, env: Environment | None = None, padding: float = 0.0) -> bool:
        """Clear(q): True iff ``q`` (dof,) is within limits and collision-free in ``env``.

        Strict at the limits: a value 1e-9 past one is invalid. ``clamp_to_limits`` moves values
        within a tolerance onto the limit first, as ``simdplan.plan`` does for starts and goals."""
        if type(q) is not np.ndarray or q.dtype is not _F64:
            q = _as_f64(q, "q")
        if padding != 0.0:
            padding = check_padding(padding)
        return self._core_is_valid(self._env_model(env, padding), q, padding)

    def _env_model(self, env, padding: float, distances: bool = False):
        """The compiled snapshot of ``env`` that this robot's checks use (``compiled_env``), by the
        lock-free path when the current snapshot already answers this robot's radii."""
        if env is None:
            return _empty_env().compiled()
        try:
            s = env.snapshot
        except AttributeError:  # not an Environment: compiled_env says so
            s = None
        # PERF: the single check is the hottest call: the test of Environment.compiled_snapshot is
        # written out here (calling into env.compiled() was ~30% of a check when nothing needs building)
        if (s is not None and s.r_lo <= self._radius_range[0] + padding and self._radius_range[1] + padding <= s.r_hi
                and (s.distances or not distances)):
            return s.model
        return self.compiled_env(env, padding, distances)

    def compiled_env(self, env, padding: float = 0.0, distances: bool = False):
        """The C++ model of ``env`` (None: no obstacles) as this robot's checks use it: one immutable
        snapshot whose point-cloud trees answer this robot's sphere radii plus ``padding`` (built
        or widened now if needed) and, with ``distances``, with every cloud's nearest-point tree.
        For adapters that drive ``robot.core`` themselves (e.g. simdplan.planner.ompl)."""
        return self._snapshot_for(env, padding, distances).model

    def _snapshot_for(self, env, padding: float, distances: bool = False):
        """``compiled_env``'s snapshot, with the obstacles behind its contact reports."""
        lo, hi = self._radius_range
        return _environment(env).compiled_snapshot((lo + padding, hi + padding), distances)

    @property
    def continuous(self) -> np.ndarray:
        """(dof,) bool, read-only: which joints are continuous (their values wrap to [-pi, pi] in planning)."""
        return self._wrap_mask

    def wrap_continuous(self, Q) -> np.ndarray:
        """A float64 copy of ``Q`` (dof,) or (n, dof) with continuous joints wrapped to [-pi, pi], as
        planning does with starts and goals (NaN and inf stay non-finite)."""
        out = np.array(Q, dtype=np.float64)
        if self._wraps:
            out[..., self._wrap_mask] = np.remainder(out[..., self._wrap_mask] + np.pi, 2 * np.pi) - np.pi
        return out

    @property
    def has_continuous(self) -> bool:
        """Whether any joint is continuous."""
        return self._wraps

    @property
    def kernel(self) -> str:
        """Which kernels this robot's checks run now: ``"specialized"`` (generated and compiled for
        this robot, simdplan.specialize) or ``"generic"``. See ``kernel_info`` for why."""
        return self._model.kernel_kind

    @property
    def kernel_info(self) -> dict:
        """The specialized kernel's state (generic, building, specialized, failed), the reason when
        generic or failed, its cache key, ISA and file, and the seconds its build and load took."""
        return dict(self._kernel_status.as_dict(), kernel=self.kernel)

    def compile(self, wait: bool = True) -> dict:
        """Builds this robot's specialized kernel now (or loads it from the cache) and attaches it;
        with wait=False the build runs in the background. Returns kernel_info. Planning works the same
        either way (same answers); the specialized kernel is faster. SIMDPLAN_JIT=off is not consulted:
        calling this is asking for it."""
        status = self._kernel_status
        if status.state == "building":
            status.done.wait()
        if self.kernel != "specialized":
            self._kernel_status = specialize.compile_robot(self, wait=wait)
            if wait:
                self._kernel_status.done.wait()
        return self.kernel_info

    @property
    def core(self):
        """The C++ robot model (``simdplan._core.RobotModel``) behind every check: for adapters that
        call the core directly with ``compiled_env``. Immutable, like the Robot."""
        return self._model

    def is_valid_many(self, Q, env: Environment | None = None, padding: float = 0.0) -> np.ndarray:
        """Clear(q) for every row of ``Q`` (n, dof) in one call: (n,) bool."""
        if type(Q) is not np.ndarray or Q.dtype is not _F64:
            Q = _as_f64(Q, "Q")
        if padding != 0.0:
            padding = check_padding(padding)
        return self._model.is_valid_many(self._env_model(env, padding), Q, padding)

    def motion_samples(self, q0, q1, resolution: float | None = None) -> int:
        """Intervals n of the discrete motion check: n = max(1, ceil(|q1 - q0| * resolution))."""
        res = self.resolution if resolution is None else resolution
        return self._model.motion_samples(_as_f64(q0, "q0"), _as_f64(q1, "q1"), float(res))

    def is_motion_valid(self, q0, q1, env: Environment | None = None, resolution: float | None = None,
                        padding: float = 0.0, mode: str = "discrete", min_step: float = None) -> bool:
        """Link(q0, q1). ``mode="discrete"`` (this check's default, the cheap one: the planners' default
        is certified Link, PlannerSettings.link): True iff every sample q0 + (i/n)(q1 - q0),
        i = 0..n, is valid. ``mode="certified"``: True iff both ends are within the joint limits and
        the whole segment is proven collision-free (``certify_motion``, with ``min_step``, default
        DEFAULT_MIN_STEP; ``resolution`` is not used).

        n = max(1, ceil(|q1 - q0|_2 * resolution)) with ``resolution`` in samples per unit of
        joint-space distance (default ``robot.resolution``). Samples are checked W at a time,
        spread along the whole edge from the first pass, and the check stops at the first collision.
        Obstacles thinner than the gap between samples can be missed; that is what discrete means.
        """
        if mode == "certified":
            step = DEFAULT_MIN_STEP if min_step is None else min_step
            return self.certify_motion(q0, q1, env, padding, step).free
        if mode != "discrete":
            raise ValueError(f'mode must be "discrete" or "certified", got {mode!r}')
        if min_step is not None:
            raise ValueError('min_step applies to mode="certified" only')
        res = self.resolution if resolution is None else resolution
        if padding != 0.0:
            padding = check_padding(padding)
        q0, q1 = _as_f64(q0, "q0"), _as_f64(q1, "q1")
        return self._model.is_motion_valid(self._env_model(env, padding), q0, q1, float(res), padding)

    def certify_motion(self, q0, q1, env: Environment | None = None, padding: float = 0.0,
                       min_step: float = DEFAULT_MIN_STEP) -> MotionCertificate:
        """Certified Link(q0, q1): proves the whole straight segment collision-free, or says why not.

        Divide and conquer on clearance and a bound on how far each sphere can move (see
        ``motion_bound``): a stretch between two evaluated configurations is free when, for every
        sphere, the clearances at both ends add up to more than the length its centre can travel
        in between. Stretches that cannot be certified are split; a stretch shorter than
        ``min_step`` (joint-space distance, radians/metres) still not certified ends the check as
        ``"undecided"`` (in collision or too close to call; never reported free). A sample with
        negative clearance gives ``"collision"``. Out-of-limit ends give ``"collision"`` with 0
        samples. Float32 rounding is covered by a 20 um margin on every clearance.
        """
        if padding != 0.0:
            padding = check_padding(padding)
        step = float(min_step)
        if not np.isfinite(step) or step <= 0:
            raise ValueError(f"min_step must be a positive joint-space distance, got {min_step!r}")
        q0, q1 = _as_f64(q0, "q0"), _as_f64(q1, "q1")
        model = self._distance_env(env)
        status, samples, t = self._model.certify_motion(model, q0, q1, padding, step)
        return MotionCertificate(CERT_STATUS[status], int(samples), float(t))

    def default_settings(self):
        """The planner settings ``simdplan.plan`` uses for this robot when a field is not given
        (a validated simdplan.planner.PlannerSettings). Derived from the robot:

        - ``resolution`` = speed_bound / MAX_SAMPLE_TRAVEL (unless the robot was built with one):
          ``speed_bound`` (metres per unit of joint distance) bounds how far any sphere centre moves
          per unit of joint-space distance, so consecutive samples of an edge are at most
          MAX_SAMPLE_TRAVEL (6 cm) apart for every sphere. panda 32.2, ur5 35.3.
        - ``range`` = min(DEFAULT_RANGE (1.0), a quarter of the joint-space diagonal), rounded to the
          nearest length whose samples at ``resolution`` fill whole 16-lane vectors (RANGE_SAMPLES):
          panda 0.994 (32 samples), ur5 0.907, fetch 0.93; a small joint space (short prismatic axes
          in metres) gets proportionally shorter edges. Ranges scaled with the speed bound or with
          the diagonal alone were measured on four robots and helped none of them consistently.
        Everything else is the PlannerSettings default.
        """
        from simdplan.planner.settings import PlannerSettings  # noqa: PLC0415 (the planner imports robots)

        return PlannerSettings(range=self.default_range, resolution=self.resolution).validated()

    def motion_bound(self, q0, q1) -> np.ndarray:
        """(n_spheres,) float64: for each sphere, a bound (metres) on the length of the path its
        centre traces while the joints move in a straight line from ``q0`` to ``q1`` (dof,).

        sum over joints of |dq_j| times the largest distance from joint j's axis to the centre
        over every configuration (prismatic: |dq_j|), from the kinematic chain alone; certified
        Link rests on it (simdplan.robots.motion_bound)."""
        return self._model.motion_bounds(_as_f64(q0, "q0"), _as_f64(q1, "q1"))

    def clearance(self, q, env: Environment | None = None, padding: float = 0.0, self_collision: bool = True) -> float:
        """Signed clearance (metres) of ``q`` (dof,): the smallest distance between a robot sphere
        (radius + padding) and an obstacle, or between two spheres of a checked link pair (when
        ``self_collision``). Negative: the deepest penetration. +inf with nothing to measure.
        Joint limits are not considered (see ``is_valid``)."""
        return float(self.clearance_many(self._one_row(q), env, padding, self_collision)[0])

    def clearance_many(self, Q, env: Environment | None = None, padding: float = 0.0,
                       self_collision: bool = True) -> np.ndarray:
        """``clearance`` of every row of ``Q`` (n, dof), SIMD-batched: (n,) float64."""
        Q = _as_f64(Q, "Q")
        if padding != 0.0:
            padding = check_padding(padding)
        env_d, self_d = self._model.clearance_many(self._distance_env(env), Q, padding)
        out = np.minimum(env_d, self_d) if self_collision else env_d
        return out.astype(np.float64)

    def distance_report(self, q, env: Environment | None = None, padding: float = 0.0) -> DistanceReport:
        """Per link, the closest obstacle and the closest other link of a checked pair at ``q``,
        with witness points (world frame, metres); see DistanceReport."""
        if padding != 0.0:
            padding = check_padding(padding)
        qa = _as_f64(q, "q")
        snap = self._distance_snapshot(env)
        links = self.sphere_links
        per_link: dict[str, Proximity] = {}
        per_link_self: dict[str, Proximity] = {}
        for sphere, kind, other, clearance, on_robot, on_other in self._model.distance_report(snap.model, qa, padding):
            if kind < 0:
                prox = Proximity(link=links[sphere], sphere=int(sphere), clearance=float(clearance),
                                 on_robot=np.array(on_robot), on_other=np.array(on_other),
                                 other_link=links[other], other_sphere=int(other))
                for name, mine in ((links[sphere], prox), (links[other], prox.swapped())):
                    if name not in per_link_self or mine.clearance < per_link_self[name].clearance:
                        per_link_self[name] = mine
                continue
            ob = snap.obstacle(kind, other)
            prox = Proximity(link=links[sphere], sphere=int(sphere), clearance=float(clearance),
                             on_robot=np.array(on_robot), on_other=np.array(on_other),
                             obstacle_id=ob.id, obstacle_name=ob.name, obstacle_kind=ob.kind)
            if prox.link not in per_link or prox.clearance < per_link[prox.link].clearance:
                per_link[prox.link] = prox
        everything = list(per_link.values()) + list(per_link_self.values())
        closest = min(everything, key=lambda p: p.clearance) if everything else None
        return DistanceReport(closest=closest, environment=per_link, self_collision=per_link_self)

    def _distance_env(self, env):
        """The compiled environment for distance queries (``_distance_snapshot``'s model)."""
        return self._distance_snapshot(env).model

    def _distance_snapshot(self, env):
        """A snapshot of ``env`` with every point cloud's nearest-point tree built (distance queries
        need no point-cloud collision trees)."""
        return _environment(env).compiled_snapshot(distances=True)

    def why_invalid(self, q, env: Environment | None = None, padding: float = 0.0) -> list[Violation]:
        """Every reason ``q`` is invalid (empty list iff ``is_valid`` is True)."""
        padding = check_padding(padding)
        snap = self._snapshot_for(env, padding)  # one snapshot for the contacts and the names of what they hit
        qa = _as_f64(q, "q")
        out: list[Violation] = []
        p = self._program
        if qa.shape == (self.dof,):
            for name, v, lo, hi, w in zip(p.joint_names, qa, p.lower, p.upper, p.wrap):
                if np.isfinite(v) and not w and not lo <= v <= hi:
                    out.append(Violation("joint_limit", joint=name, value=float(v), limits=(float(lo), float(hi))))
        links = self.sphere_links
        for is_self, s, other, kind, depth in self._model.contacts(snap.model, qa, padding):
            if is_self:
                out.append(Violation("self", link=links[s], sphere=s, other_link=links[other], other_sphere=other,
                                     depth=float(depth)))
            else:
                ob = snap.obstacle(kind, other)
                out.append(Violation("environment", link=links[s], sphere=s, obstacle_id=ob.id, obstacle_name=ob.name,
                                     obstacle_kind=ob.kind, depth=float(depth)))
        out.extend(self._cloud_violations(qa, snap, padding))
        return out

    def _cloud_violations(self, q: np.ndarray, snap, padding: float) -> list[Violation]:
        """Robot spheres touching the point clouds of ``snap`` (an Environment snapshot fitted to
        this robot's radii): decided by each cloud's CAPT (the kernels' own test, so this agrees
        with is_valid), depth from the exact nearest point (NumPy, float64)."""
        clouds = snap.obstacles("pointcloud")
        if not clouds:
            return []
        world = self.fk(q)
        centres = np.ascontiguousarray(world[:, :3], dtype=np.float32)
        radii = (world[:, 3] + np.float32(padding)).astype(np.float32)
        links, out = self.sphere_links, []
        for ob in clouds:
            hits = snap.point_tree(ob.id).collides(centres, radii)
            pts = ob.params["points"].astype(np.float64)
            for s in np.flatnonzero(hits):
                d = float(np.sqrt(((pts - centres[s].astype(np.float64)) ** 2).sum(axis=1).min()))
                depth = float(radii[s]) + ob.params["point_radius"] - d
                out.append(Violation("environment", link=links[s], sphere=int(s), obstacle_id=ob.id,
                                     obstacle_name=ob.name, obstacle_kind=ob.kind, depth=depth))
        return out


def _rebuilt_robot(description, disabled, kwargs: dict, source, attachments: dict) -> Robot:
    """The Robot that Robot.__reduce__ describes."""
    robot = Robot(description, disabled, **kwargs)
    robot.source, robot.attachments = source, dict(attachments)
    return robot
