"""VAMP, when it is installed, run on the same problems as simdplan for side-by-side benchmarks.

VAMP: W. Thomason, Z. Kingston, L. E. Kavraki, "Motions in Microseconds via Vectorized
Sampling-Based Planning", ICRA 2024, arXiv:2309.14545 (PyPI ``vamp-planner``). It is not a
dependency of simdplan: ``simdplan bench mbm`` and ``benchmarks/bench_capt.py`` use it only if
``import vamp`` works, so that the figures they print come from one run on one machine. On a machine
without GitHub access, ``benchmarks/vamp_offline/build.sh`` builds it (with the substitutions its
README lists).

What VAMP is given, so that the two planners solve the same problem:
- the obstacles of the simdplan Environment, converted one by one (spheres, capsules, boxes; VAMP has
  no exact cylinder, plane, mesh or convex hull, so scenes with those are refused, never approximated
  silently); rotations as extrinsic x-y-z Euler angles, VAMP's convention;
- point clouds as the same float32 points, with the same point radius and VAMP's own robot radii;
- its own defaults otherwise: RRT-Connect with ``vamp.configure_robot_and_planner_with_kwargs``
  (the settings of its MotionBenchMaker script), its Halton sampler reset before every problem as
  that script does, and its default simplification. ``sampler="uniform"`` gives it its pseudo-random
  generator (xorshift, also reset per problem) instead, the kind of sampler simdplan uses by default:
  the Halton sequence's first points fall near the middle of every joint range, which suits some
  problem sets far more than others, so both are worth measuring.
Times are the planners' own: VAMP's ``nanoseconds`` fields, simdplan's ``planning_time_ns`` and
``simplify_time_ns``, each measured inside C++ around the same work.
"""

from __future__ import annotations

import numpy as np

# obstacle kinds environment() converts as they are (point clouds go through add_pointcloud)
SUPPORTED_KINDS = ("sphere", "capsule", "box")
# VAMP's samplers a baseline can use: its MotionBenchMaker script's Halton sequence (the default), or
# its pseudo-random generator
SAMPLERS = ("halton", "uniform")


class VampBaseline:
    """VAMP's planner for one robot. Build with :func:`load`."""

    def __init__(self, vamp, robot_name: str, sampler: str = "halton") -> None:
        if sampler not in SAMPLERS:
            raise ValueError(f"VAMP sampler must be one of {', '.join(SAMPLERS)}, not {sampler!r}")
        self.vamp = vamp
        self.robot = robot_name
        self.module = getattr(vamp, robot_name)
        _, self.planner, self.plan_settings, self.simplify_settings = (
            vamp.configure_robot_and_planner_with_kwargs(robot_name, "rrtc"))
        self.sampler_name = sampler
        self.sampler = self.module.halton() if sampler == "halton" else self.module.xorshift()
        try:
            from importlib.metadata import version

            self.version = version("vamp-planner")
        except Exception:  # noqa: BLE001 - a source build may carry no metadata
            self.version = "unknown version"
        self.label = f"VAMP {self.version}" + ("" if sampler == "halton" else " (uniform sampler)")
        self.joint_names = [str(n) for n in self.module.joint_names()]

    def _order(self, joint_names) -> np.ndarray | None:
        """Columns taking a configuration in ``joint_names`` order to VAMP's order (None: same order).
        Raises ValueError when the two robots name different joints."""
        if joint_names is None or list(joint_names) == self.joint_names:
            return None
        names = list(joint_names)
        if sorted(names) != sorted(self.joint_names):
            raise ValueError(f"VAMP's {self.robot} has joints {self.joint_names}, not {names}")
        return np.array([names.index(n) for n in self.joint_names])

    def radii(self) -> tuple[float, float]:
        """VAMP's (r_min, r_max) of its robot's spheres, for its point-cloud trees."""
        lo, hi = self.module.min_max_radii()
        return float(lo), float(hi)

    def environment(self, env):
        """A vamp.Environment with the obstacles of a simdplan Environment (see the module docstring).

        Raises ValueError naming the first obstacle VAMP cannot represent. Point clouds need
        :meth:`add_pointcloud` (their build is timed), so they are refused here too.
        """
        from scipy.spatial.transform import Rotation

        v = self.vamp
        out = v.Environment()
        for o in env:
            p = o.params
            if o.kind == "sphere":
                out.add_sphere(v.Sphere([float(c) for c in p["center"]], float(p["radius"])))
            elif o.kind in ("capsule", "box"):
                pos = [float(c) for c in p["position"]]
                euler = [float(a) for a in Rotation.from_matrix(np.asarray(p["rotation"])).as_euler("xyz")]
                if o.kind == "box":
                    out.add_cuboid(v.Cuboid(pos, euler, [float(h) for h in p["half_extents"]]))
                else:
                    out.add_capsule(v.Cylinder(pos, euler, float(p["radius"]), float(p["length"])))
            elif o.kind == "pointcloud":
                raise ValueError(f"obstacle {o.name!r} is a pointcloud: give its points to add_pointcloud, "
                                 f"which times VAMP's tree build")
            else:
                raise ValueError(f"obstacle {o.name!r} is a {o.kind}, which VAMP cannot represent exactly "
                                 f"(it takes {', '.join(SUPPORTED_KINDS)} and point clouds); use the reference mode")
        return out

    def add_pointcloud(self, vamp_env, points, point_radius: float, r_min: float | None = None,
                       r_max: float | None = None) -> int:
        """Builds VAMP's CAPT of ``points`` in ``vamp_env`` for query radii [r_min, r_max] (default
        its robot's, :meth:`radii`); returns the build time in ns, VAMP's own timer (it starts after
        the points are converted from Python)."""
        lo, hi = self.radii() if r_min is None or r_max is None else (r_min, r_max)
        pts = np.ascontiguousarray(points, dtype=np.float32)
        return int(vamp_env.add_pointcloud(pts.tolist(), float(lo), float(hi), float(point_radius)))

    def filter_pointcloud(self, points, min_dist: float) -> tuple[np.ndarray, int]:
        """VAMP's thinning of ``points`` at ``min_dist`` without cropping, as simdplan's
        ``filter_pointcloud(points, min_dist)``; (kept, ns), the time by VAMP's own timer (without
        converting the points to and from Python).

        VAMP sorts the points along space-filling curves over the cube of half side ``max_range``
        around ``origin``, so that cube is set to just hold the cloud (culling off); a far larger one
        would put every point in one curve cell and thin almost nothing. Its thinning drops a point
        closer than ``min_dist`` to its predecessor along six such curves: fewer points kept than
        given, but neither of simdplan's guarantees (kept points ``min_dist`` apart, every dropped
        point within ``min_dist`` of a kept one)."""
        pts = np.ascontiguousarray(points, dtype=np.float32)
        lo, hi = pts.min(axis=0).astype(np.float64), pts.max(axis=0).astype(np.float64)
        origin = (lo + hi) / 2
        half = float((hi - lo).max()) / 2 + 0.01
        kept, ns = self.vamp.filter_pointcloud(pts, float(min_dist), half, origin.tolist(), (lo - 0.01).tolist(),
                                               (hi + 0.01).tolist(), False)
        return np.asarray(kept, dtype=np.float32).reshape(-1, 3), int(ns)

    def plan(self, start, goals, vamp_env, simplify: bool = True, joint_names=None, skip: int = 0) -> dict:
        """RRT-Connect (and simplification) on one problem; the record fields of ``bench mbm``.

        start (dof,), goals (m, dof) and the returned path are in ``joint_names`` order (default:
        VAMP's own); they are reordered for VAMP, whose robots may list joints in another order.
        The sampler restarts for every problem (as VAMP's own scripts run it), then ``skip``
        samples are skipped (benchmarks/vamp_sequence.py: other stretches of the sequence)."""
        order = self._order(joint_names)
        start = np.asarray(start, dtype=np.float64)
        goals = np.atleast_2d(np.asarray(goals, dtype=np.float64))
        if order is not None:
            start, goals = start[order], goals[:, order]
        self.sampler.reset()
        if skip:
            self.sampler.skip(skip)
        result = self.planner(start.tolist(), [g.tolist() for g in goals], vamp_env, self.plan_settings, self.sampler)
        rec = {"solved": bool(result.solved), "planning_time_us": result.nanoseconds / 1e3,
               "iterations": int(result.iterations), "simplify_time_us": 0.0}
        if not result.solved:
            return rec
        rec["initial_cost"] = float(result.path.cost())
        rec["final_cost"] = rec["initial_cost"]
        rec["waypoints"] = len(result.path)
        path = result.path
        if simplify:
            simple = self.module.simplify(result.path, vamp_env, self.simplify_settings, self.sampler)
            rec.update(simplify_time_us=simple.nanoseconds / 1e3, final_cost=float(simple.path.cost()),
                       waypoints=len(simple.path))
            path = simple.path
        rows = np.asarray(path.numpy(), dtype=np.float64).reshape(len(path), -1)
        if order is not None:
            rows = rows[:, np.argsort(order)]
        rec["path"] = rows.tolist()
        rec["total_time_us"] = rec["planning_time_us"] + rec["simplify_time_us"]
        return rec


def load(robot_name: str, sampler: str = "halton") -> tuple[VampBaseline | None, str]:
    """(VampBaseline, "") if VAMP is importable and has ``robot_name``, else (None, why not).
    ``sampler``: one of SAMPLERS (ValueError otherwise)."""
    try:
        import vamp
    except ImportError as exc:
        return None, f"VAMP is not installed ({exc})"
    robots = list(getattr(vamp, "robots", []))
    if robot_name not in robots:
        return None, f"VAMP has no robot {robot_name!r} (it has {', '.join(robots)})"
    return VampBaseline(vamp, robot_name, sampler), ""
