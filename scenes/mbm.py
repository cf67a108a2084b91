"""MotionBenchMaker problems as Scenes.

    scenes = simdplan.scenes.mbm.load()                                   # all 700 panda problems
    scenes = simdplan.scenes.mbm.load(classes=["cage"], indices=[1, 2], mode="reference")

The file format (``mbm_data/NOTICE.md``): ``{"robot": name, "joints": [...], "problems": {class:
[problem, ...]}}`` with each problem's ``start``, ``goals``, ``valid`` and its ``sphere``,
``cylinder`` and ``box`` obstacles (centres in the robot base frame, quaternions [x, y, z, w]).

Modes (how cylinders are modelled; spheres and boxes are always exact):
- "exact": cylinders are exact flat-capped cylinders.
- "reference" (alias "reference-compatible"): what the reference planner checked, which is what the
  file's ``valid`` flags were computed with: a cylinder becomes the capsule of the same radius and
  length (its round caps reach ``radius`` beyond the flat ends), except in the ``box`` class, where
  it becomes a box of half extents [r, r, length / 2] with the cylinder's pose.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from simdplan import robots as _robots
from simdplan.collision.environment import Environment
from simdplan.robots import Robot
from simdplan.scenes.files import read_data
from simdplan.scenes.reading import Reader, SceneError, builder_key, default_settings, describe, suggest
from simdplan.scenes.scene import Scene

DEFAULT_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mbm_data", "panda", "problems.json")
MODES = ("exact", "reference")
# Environment builder words -> MotionBenchMaker keys, to name the key behind a builder error.
_MBM_WORDS = {"center": "position", "quat": "orientation_quat_xyzw", "rotation": "orientation_quat_xyzw",
              "euler": "orientation_euler_xyz"}
_MODE_ALIASES = {"exact": "exact", "reference": "reference", "reference-compatible": "reference"}


def _read(json_path) -> tuple[str, Reader, dict]:
    path = os.path.abspath(os.fspath(json_path if json_path is not None else DEFAULT_PATH))
    data = read_data(path, "MotionBenchMaker file")
    r = Reader(path)
    data = r.mapping(data, "(top level)")
    if "problems" not in data:
        r.fail("problems", "missing (a MotionBenchMaker file maps class names to problem lists under 'problems')")
    problems = r.mapping(data["problems"], "problems")
    for cls, lst in problems.items():
        if not isinstance(lst, list):
            r.fail(f"problems.{cls}", f"must be a list of problems, got {describe(lst)}")
    return path, r, data


def classes(json_path: str | os.PathLike | None = None) -> list[str]:
    """Problem class names in the file (default: the shipped panda problems), in file order."""
    return list(_read(json_path)[2]["problems"])


def _robot_for(r: Reader, data: dict, robot) -> tuple[Robot, str | None]:
    if robot is None:
        name = data.get("robot")
        if not isinstance(name, str) or name not in _robots.available():
            r.fail("robot", f"the file names robot {name!r}, which is not a built-in robot "
                            f"({', '.join(_robots.available())}); pass robot=simdplan.Robot.from_urdf(...)")
        return _robots.load(name), name
    if isinstance(robot, str):
        return _robots.load(robot), robot
    if not isinstance(robot, Robot):
        raise TypeError(f"robot must be a simdplan Robot, a built-in robot name or None, got {type(robot).__name__}")
    return robot, None


def _joint_order(r: Reader, data: dict, robot: Robot) -> np.ndarray | None:
    """Column permutation from the file's joint order to the robot's (None: already the same)."""
    if "joints" not in data:
        return None
    names = data["joints"]
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        r.fail("joints", f"must be a list of joint names, got {describe(names)}")
    if len(set(names)) != len(names):
        r.fail("joints", f"lists a joint twice: {names}")
    missing = [n for n in robot.joint_names if n not in names]
    extra = [n for n in names if n not in robot.joint_names]
    if missing or extra:
        r.fail("joints", f"the file's joints {names} do not match robot {robot.name!r}'s joints {robot.joint_names}"
                         + (f"; missing from the file: {missing}" if missing else "")
                         + (f"; not joints of the robot: {extra}" if extra else ""))
    perm = np.array([names.index(n) for n in robot.joint_names])
    return None if np.array_equal(perm, np.arange(len(perm))) else perm


def _pose(r: Reader, o: dict, key: str):
    """(position, quat or None, euler or None) of an MBM obstacle."""
    pos = r.vector(o.get("position"), 3, f"{key}.position")
    if "orientation_quat_xyzw" in o:
        return pos, r.vector(o["orientation_quat_xyzw"], 4, f"{key}.orientation_quat_xyzw"), None
    if "orientation_euler_xyz" in o:
        return pos, None, r.vector(o["orientation_euler_xyz"], 3, f"{key}.orientation_euler_xyz")
    return pos, None, None


def _environment(r: Reader, prob: dict, cls: str, mode: str, key: str) -> Environment:
    env = Environment()
    for kind in ("sphere", "cylinder", "box"):
        obs = prob.get(kind, [])
        if not isinstance(obs, list):
            r.fail(f"{key}.{kind}", f"must be a list of obstacles, got {describe(obs)}")
        for i, o in enumerate(obs):
            k = f"{key}.{kind}[{i}]"
            o = r.mapping(o, k)
            for field in {"sphere": ("position", "radius"), "cylinder": ("position", "radius", "length"),
                          "box": ("position", "half_extents")}[kind]:
                if field not in o:
                    r.fail(f"{k}.{field}", "missing")
            name = o.get("name")
            name = r.string(name, f"{k}.name") if name is not None else None
            try:
                if kind == "sphere":
                    env.add_sphere(r.vector(o["position"], 3, f"{k}.position"), r.number(o["radius"], f"{k}.radius"),
                                   name=name)
                    continue
                pos, quat, euler = _pose(r, o, k)
                if kind == "box":
                    env.add_box(pos, quat, r.vector(o["half_extents"], 3, f"{k}.half_extents"), euler=euler, name=name)
                    continue
                radius, length = r.number(o["radius"], f"{k}.radius"), r.number(o["length"], f"{k}.length")
                if mode == "exact":
                    env.add_cylinder(pos, quat, radius, length, euler=euler, name=name)
                elif cls == "box":
                    env.add_box(pos, quat, [radius, radius, 0.5 * length], euler=euler, name=name)
                else:
                    env.add_capsule(pos, quat, radius, length, euler=euler, name=name)
            except SceneError:
                raise
            except ValueError as exc:
                field = builder_key(str(exc), o, _MBM_WORDS)
                raise SceneError(r.file, f"{k}.{field}" if field else k, str(exc)) from None
    return env


def load(json_path: str | os.PathLike | None = None, robot: Robot | str | None = None, mode: str = "exact",
         classes: str | list[str] | None = None, indices: int | list[int] | None = None) -> list[Scene]:
    """MotionBenchMaker problems as a list of Scenes (all sharing one Robot).

    json_path: the problems file (default: the shipped 700 panda problems). robot: the Robot (or a
    built-in name) to use; default the one the file names, loaded once. The file's ``joints`` must
    be the robot's joint names (configurations are reordered into the robot's order if the file
    lists them in another). mode: "exact" or "reference" (see the module docstring). classes: class
    name(s) to keep, in the order given (default every class, in file order). indices: problem
    index(es) to keep (the file's 1-based ``index``).

    Each Scene has ``start`` (dof,), ``goals`` (m, dof) float64 in the robot's joint order, default
    planner settings, ``name`` "<class>_<index>", ``problem`` (class), ``index`` and ``valid``.
    """
    if mode not in _MODE_ALIASES:
        raise ValueError(f"mode must be one of {', '.join(MODES)} (or 'reference-compatible'), got {mode!r}")
    mode = _MODE_ALIASES[mode]
    path, r, data = _read(json_path)
    problems = data["problems"]
    available = list(problems)
    if classes is None:
        wanted = available
    else:
        wanted = [classes] if isinstance(classes, str) else list(classes)
        for c in wanted:
            if c not in problems:
                raise ValueError(f"{path}: unknown problem class {c!r}{suggest(c, available)}; "
                                 f"classes in this file: {', '.join(available)}")
        wanted = list(dict.fromkeys(wanted))
    index_set = None
    if indices is not None:
        index_set = {indices} if isinstance(indices, (int, np.integer)) else set(indices)
        bad = [i for i in index_set if isinstance(i, bool) or not isinstance(i, (int, np.integer))]
        if bad:
            raise TypeError(f"indices must be integers, got {bad}")

    robot, spec = _robot_for(r, data, robot)
    perm = _joint_order(r, data, robot)
    width = len(data["joints"]) if "joints" in data else robot.dof
    settings = default_settings()
    out, found = [], set()
    for cls in wanted:
        for pos, prob in enumerate(problems[cls]):
            key = f"problems.{cls}[{pos}]"
            prob = r.mapping(prob, key)
            index = prob.get("index", pos + 1)
            if isinstance(index, bool) or not isinstance(index, int):
                r.fail(f"{key}.index", f"must be an integer, got {describe(index)}")
            if index_set is not None and index not in index_set:
                continue
            found.add(index)
            for field in ("start", "goals"):
                if field not in prob:
                    r.fail(f"{key}.{field}", "missing")
            start = np.array(r.vector(prob["start"], width, f"{key}.start", "joint values"))
            goals_raw = prob["goals"]
            if not isinstance(goals_raw, list) or not goals_raw:
                r.fail(f"{key}.goals", f"must be a non-empty list of configurations, got {describe(goals_raw)}")
            goals = np.array([r.vector(g, width, f"{key}.goals[{i}]", "joint values") for i, g in enumerate(goals_raw)])
            if perm is not None:
                start, goals = start[perm], goals[:, perm]
            valid = prob.get("valid")
            if valid is not None and not isinstance(valid, bool):
                r.fail(f"{key}.valid", f"must be true or false, got {describe(valid)}")
            env = _environment(r, prob, cls, mode, key)
            what = "exact cylinders" if mode == "exact" else (
                "cylinders as boxes, reference model" if cls == "box" else "cylinders as capsules, reference model")
            out.append(Scene(robot=robot, env=env, start=start, goals=goals, settings=dataclasses.replace(settings),
                             name=f"{cls}_{index}", description=f"MotionBenchMaker {cls} problem {index} ({what})",
                             path=path, robot_spec=spec, problem=cls, index=index, valid=valid))
    if index_set is not None:
        missing = sorted(index_set - found)
        if missing:
            raise ValueError(f"{path}: no problem with index {missing} in classes {', '.join(wanted)}")
    return out


def primitive_meshes(env: Environment, sections: int = 64, subdivisions: int = 5):
    """(obstacle, trimesh.Trimesh) for every sphere, capsule, cylinder and box of ``env`` (planes are
    unbounded and skipped), each in its pose: cylinders and capsules with ``sections`` sides (a
    capsule's caps with as many rings), spheres as icospheres of ``subdivisions``. Vertices lie on
    the true surface and faces inside it (within 0.2 % of the radius at 64 sections and 5
    subdivisions, 0.5 % at 32 and 3), never outside the shape's bounding box."""
    import trimesh  # a dependency of yourdfpy; imported here because only the benchmarks need it

    for o in env:
        p = o.params
        if o.kind == "sphere":
            mesh = trimesh.creation.icosphere(subdivisions=subdivisions, radius=p["radius"])
            mesh.apply_translation(p["center"])
        elif o.kind in ("capsule", "cylinder", "box"):
            pose = np.eye(4)
            pose[:3, :3], pose[:3, 3] = p["rotation"], p["position"]
            if o.kind == "box":
                mesh = trimesh.creation.box(extents=2 * np.asarray(p["half_extents"]), transform=pose)
            elif o.kind == "cylinder":
                mesh = trimesh.creation.cylinder(radius=p["radius"], height=p["length"], sections=sections,
                                                 transform=pose)
            else:
                mesh = trimesh.creation.capsule(height=p["length"], radius=p["radius"], count=[sections, sections],
                                                transform=pose)
        else:
            continue
        yield o, mesh


OBSTACLE_KINDS = ("primitives", "meshes", "hulls")


def as_shapes(env: Environment, kind: str) -> Environment:
    """A copy of ``env`` with every primitive as a triangle mesh (``kind`` "meshes": a surface, see
    Environment.add_mesh) or a convex hull ("hulls", a solid) of primitive_meshes' triangles at 32
    sections and 3 subdivisions (a capsule about 2,000 triangles, a cylinder 128), under the
    obstacle's name; planes stay planes. "primitives" returns ``env`` itself."""
    if kind not in OBSTACLE_KINDS:
        raise ValueError(f"obstacle kind must be one of {', '.join(OBSTACLE_KINDS)}, got {kind!r}")
    if kind == "primitives":
        return env
    out = Environment()
    meshed = {o.id: mesh for o, mesh in primitive_meshes(env, sections=32, subdivisions=3)}
    for o in env:
        mesh = meshed.get(o.id)
        if o.kind == "plane":
            out.add_plane(**o.params, name=o.name)
        elif mesh is None:
            raise ValueError(f"as_shapes converts primitives and planes, not {o.kind} obstacle {o.name!r}")
        elif kind == "meshes":
            out.add_mesh(mesh, name=o.name)
        else:
            out.add_convex(mesh, name=o.name)
    return out


def surface_points(env: Environment, per_obstacle: int = 10_000, seed: int = 0) -> np.ndarray:
    """Points sampled uniformly (by area) on the surface of every primitive of ``env``: (n, 3) float64.

    The MotionBenchMaker point-cloud setting: ``per_obstacle`` points on each sphere, capsule,
    cylinder and box (planes are unbounded and skipped), as a depth sensor would see them from
    every side, on primitive_meshes' triangles, so points lie within 0.2 % of the radius of the true
    surface, never outside the shape's bounding box. Deterministic for a seed.
    """
    import trimesh

    rng = np.random.default_rng(seed)
    out = []
    for _, mesh in primitive_meshes(env):
        pts, _ = trimesh.sample.sample_surface(mesh, per_obstacle, seed=rng)
        out.append(pts)
    return np.concatenate(out) if out else np.zeros((0, 3))
