"""Scene data (already parsed from a file) into a robot, obstacles and planner settings, with errors
that name the file and the key path (``SceneError``). The file format itself is described in
scene.py; reading and size limits of the files are in files.py."""

from __future__ import annotations

import dataclasses
import difflib
import errno
import math
import os
import re

import numpy as np

from simdplan import robots as _robots
from simdplan.collision.environment import Environment
from simdplan.planner.settings import PlannerSettings
from simdplan.robots import Robot
from simdplan.transforms import resolve_pose

TOP_KEYS = ("name", "description", "robot", "obstacles", "start", "goals", "goal", "planner", "timing", "goal_pose",
            "goal_poses", "goal_link", "goal_mask")
# a goal pose: position (m) and orientation (quat [x, y, z, w] or euler xyz, rad) of the goal link
POSE_KEYS = ("position", "quat", "euler")
# the timing section: simdplan.time_parameterize's limits and options (per joint or one number)
TIMING_LIMITS = ("velocity_limits", "acceleration_limits", "jerk_limits")
TIMING_NUMBERS = ("velocity_scale", "acceleration_scale", "max_deviation")
ROBOT_KEYS = ("urdf", "srdf", "joints", "fixed_joint_values", "base_pose")
# type -> (required keys, optional keys), besides "type" and "name".
OBSTACLE_KEYS = {
    "sphere": (("position", "radius"), ()),
    "capsule": (("position", "radius", "length"), ("quat", "euler")),
    "cylinder": (("position", "radius", "length"), ("quat", "euler")),
    "box": (("position", "half_extents"), ("quat", "euler")),
    "plane": (("normal",), ("offset",)),
    "pointcloud": (("file",), ("point_radius", "r_min", "r_max")),
    # exactly one source (file, or vertices + faces; a convex also takes points): checked in _mesh_source
    "mesh": ((), ("file", "vertices", "faces", "position", "quat", "euler", "scale")),
    "convex": ((), ("file", "points", "vertices", "faces", "position", "quat", "euler", "scale")),
}
OBSTACLE_TYPES = tuple(OBSTACLE_KEYS)


class SceneError(ValueError):
    """A scene (or MotionBenchMaker) file that cannot be used: ``file``, ``key`` (a key path such
    as ``obstacles[3].half_extents``, "" for the whole file) and ``reason``."""

    def __init__(self, file: str, key: str, reason: str) -> None:
        self.file, self.key, self.reason = file, key, reason
        super().__init__(f"{file}: {key}: {reason}" if key else f"{file}: {reason}")


# ----------------------------------------------------------------------------- reading helpers


def _join(parent: str, key) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else str(key)


def describe(value) -> str:
    """A short description of a value for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"a boolean ({value})"
    if isinstance(value, str):
        return f"a string {value!r}" if len(value) < 40 else "a string"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)}"
    if isinstance(value, int) and value.bit_length() > 64:  # whose digits need not even be printable
        return f"an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    return f"a {type(value).__name__}"


def is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def suggest(word: str, choices) -> str:
    close = difflib.get_close_matches(str(word), list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


class Reader:
    """Typed access to parsed YAML/JSON that raises SceneError naming the file and the key path."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, key: str, reason: str):
        raise SceneError(self.file, key, reason)

    def mapping(self, value, key: str) -> dict:
        if not isinstance(value, dict):
            self.fail(key, f"must be a mapping (key: value), got {describe(value)}")
        return value

    def keys(self, d: dict, key: str, required=(), optional=(), what: str = "key") -> None:
        """Every required key is present and no other key than required + optional (which may
        repeat the required keys, to list the allowed keys in that order)."""
        allowed = tuple(dict.fromkeys(tuple(optional) if set(required) <= set(optional) else
                                      tuple(required) + tuple(optional)))
        for k in d:
            if k not in allowed:
                self.fail(_join(key, k), f"unknown {what}{suggest(k, allowed)}; allowed: {', '.join(allowed)}")
        for k in required:
            if k not in d:
                self.fail(_join(key, k), f"missing (required{' in ' + key if key else ''})")

    def string(self, value, key: str) -> str:
        if not isinstance(value, str):
            self.fail(key, f"must be a string, got {describe(value)}")
        return value

    def number(self, value, key: str) -> float:
        if not is_number(value):
            self.fail(key, f"must be a number, got {describe(value)}")
        try:
            v = float(value)
        except OverflowError:  # an integer beyond float range
            self.fail(key, f"must be finite, got {describe(value)}")
        if not math.isfinite(v):
            self.fail(key, f"must be finite, got {v}")
        return v

    def vector(self, value, length: int | None, key: str, what: str = "numbers") -> list[float]:
        """A list of finite numbers, of ``length`` if given."""
        if not isinstance(value, (list, tuple)):
            n = f"{length} " if length is not None else ""
            self.fail(key, f"must be a list of {n}{what}, got {describe(value)}")
        if length is not None and len(value) != length:
            self.fail(key, f"must have {length} values, got {len(value)}")
        return [self.number(v, _join(key, i)) for i, v in enumerate(value)]

    def matrix(self, value, rows: int, cols: int, key: str) -> list[list[float]]:
        if not isinstance(value, (list, tuple)) or len(value) != rows:
            self.fail(key, f"must be a {rows}x{cols} matrix (a list of {rows} rows), got {describe(value)}")
        return [self.vector(row, cols, _join(key, i)) for i, row in enumerate(value)]

    def config(self, value, robot: Robot, key: str) -> np.ndarray:
        """A joint configuration: (dof,) float64 in the robot's joint order."""
        if isinstance(value, (list, tuple)) and len(value) != robot.dof:
            self.fail(key, f"has {len(value)} values but robot {robot.name!r} has {robot.dof} joints "
                           f"({', '.join(robot.joint_names)})")
        q = np.array(self.vector(value, robot.dof, key, "joint values"), dtype=np.float64)
        try:  # e.g. a continuous joint at 1e300 rad, whose wrapped angle would be arbitrary
            robot.check_joint_values(q, "configuration")
        except ValueError as exc:
            self.fail(key, str(exc).removeprefix("configuration: "))
        return q


# Builder messages name the offending parameter; map those words to the file's key.
_BUILDER_WORDS = {"center": "position", "pose": "position", "rotation": "quat"}


def builder_key(message: str, given: dict, aliases: dict = _BUILDER_WORDS) -> str | None:
    """The key of ``given`` that an Environment builder error message is about (None: unknown)."""
    for word in re.findall(r"[a-z_]+", message):
        key = aliases.get(word, word)
        if key in given and key not in ("type", "name"):
            return key
    return None


def add_obstacle(r: Reader, env: Environment, spec, key: str, base_dir: str = ".",
                 sources: dict | None = None) -> int:
    """Add one scene-file obstacle (``spec``, at ``key``) to ``env``; returns its id. Point-cloud
    files are read relative to ``base_dir``; ``sources`` (if given) records id -> absolute file."""
    spec = r.mapping(spec, key)
    if "type" not in spec:
        r.fail(_join(key, "type"), f"missing; every obstacle needs a type: one of {', '.join(OBSTACLE_TYPES)}")
    kind = spec["type"]
    if not isinstance(kind, str):  # a list or mapping here cannot even be looked up
        r.fail(_join(key, "type"), f"must be an obstacle type name ({', '.join(OBSTACLE_TYPES)}), got {describe(kind)}")
    if kind not in OBSTACLE_KEYS:
        r.fail(_join(key, "type"), f"unknown obstacle type {kind!r}{suggest(kind, OBSTACLE_TYPES)}; "
                                   f"supported: {', '.join(OBSTACLE_TYPES)}")
    required, optional = OBSTACLE_KEYS[kind]
    r.keys(spec, key, ("type",) + required, ("type", "name") + required + optional, what=f"key for a {kind}")
    name = r.string(spec["name"], _join(key, "name")) if "name" in spec else None
    k = lambda field: _join(key, field)  # noqa: E731
    if kind in ("mesh", "convex"):
        return _add_mesh_obstacle(r, env, spec, key, kind, name, base_dir)
    try:
        if kind == "sphere":
            return env.add_sphere(r.vector(spec["position"], 3, k("position")), r.number(spec["radius"], k("radius")),
                                  name=name)
        if kind == "plane":
            offset = r.number(spec["offset"], k("offset")) if "offset" in spec else 0.0
            return env.add_plane(r.vector(spec["normal"], 3, k("normal")), offset, name=name)
        if kind == "pointcloud":
            from simdplan.collision.pointcloud import load_pointcloud

            path = os.path.join(base_dir, r.string(spec["file"], k("file")))
            try:
                points = load_pointcloud(path)
            except (OSError, ValueError) as exc:
                raise SceneError(r.file, k("file"), str(exc)) from None
            opt = {f: r.number(spec[f], k(f)) for f in ("point_radius", "r_min", "r_max") if f in spec}
            oid = env.add_pointcloud(points, name=name, **opt)
            if sources is not None:
                sources[oid] = os.path.abspath(path)
            return oid
        quat, euler = _orientation(r, spec, key)
        pos = r.vector(spec["position"], 3, k("position"))
        if kind == "box":
            return env.add_box(pos, quat, r.vector(spec["half_extents"], 3, k("half_extents")), euler=euler, name=name)
        add = env.add_capsule if kind == "capsule" else env.add_cylinder
        return add(pos, quat, r.number(spec["radius"], k("radius")), r.number(spec["length"], k("length")),
                   euler=euler, name=name)
    except SceneError:
        raise
    except ValueError as exc:
        field = builder_key(str(exc), spec)
        raise SceneError(r.file, k(field) if field else key, str(exc)) from None


def _points(r: Reader, value, key: str, min_rows: int, what: str) -> np.ndarray:
    """A list of ``[x, y, z]`` rows (at least ``min_rows``) as (n, 3) float64."""
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, (list, tuple)) for v in value):
        r.fail(key, f"must be a list of {what} [x, y, z], got {describe(value)}")
    if len(value) < min_rows:
        r.fail(key, f"needs at least {min_rows} {what}, got {len(value)}")
    return np.array([r.vector(v, 3, _join(key, i)) for i, v in enumerate(value)], dtype=np.float64)


def _faces(r: Reader, value, key: str, n_vertices: int) -> np.ndarray:
    """A list of ``[i, j, k]`` vertex indices in [0, n_vertices) as (m, 3) int64."""
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, (list, tuple)) for v in value):
        r.fail(key, f"must be a non-empty list of triangles [i, j, k] (vertex indices from 0), got {describe(value)}")
    for i, tri in enumerate(value):
        if len(tri) != 3:
            r.fail(_join(key, i), f"must have 3 vertex indices, got {len(tri)}")
        for j, v in enumerate(tri):
            if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
                r.fail(_join(_join(key, i), j), f"must be an integer vertex index, got {describe(v)}")
            if not 0 <= v < n_vertices:
                r.fail(_join(_join(key, i), j), f"vertex index {v} is out of range: there are {n_vertices} "
                                                f"vertices, numbered 0 to {n_vertices - 1}")
    return np.array(value, dtype=np.int64)


def _scale(r: Reader, value, key: str):
    """A mesh scale: a number > 0 or a list of three."""
    if isinstance(value, (list, tuple)):
        out = r.vector(value, 3, key, "scale factors [sx, sy, sz]")
        for i, v in enumerate(out):
            if v <= 0:
                r.fail(_join(key, i), f"must be > 0, got {v}")
        return out
    if not is_number(value):
        r.fail(key, f"must be a number > 0 or a list of 3 of them, got {describe(value)}")
    v = r.number(value, key)
    if v <= 0:
        r.fail(key, f"must be > 0, got {v}")
    return v


def _mesh_source(r: Reader, spec: dict, key: str, kind: str, base_dir: str):
    """(what to pass to Environment.add_mesh / add_convex, the key it came from, absolute file or None)."""
    k = lambda field: _join(key, field)  # noqa: E731
    forms = ("file", "points", "vertices") if kind == "convex" else ("file", "vertices")
    given = [f for f in forms if f in spec]
    needs = "file (a mesh file), points, or vertices and faces" if kind == "convex" else \
        "file (a mesh file) or vertices and faces (inline triangles)"
    if "faces" in spec and "vertices" not in spec:
        r.fail(k("vertices"), f"missing: faces index into vertices (a {kind} needs {needs})")
    if not given:
        r.fail(k("file"), f"missing: a {kind} needs {needs}")
    if len(given) > 1:
        r.fail(key, f"give one of {', '.join(forms[:-1])} or vertices + faces, not {' and '.join(given)}")
    (form,) = given
    if form == "file":
        rel = r.string(spec["file"], k("file"))
        if not rel.strip():
            r.fail(k("file"), "must not be empty")
        path = os.path.normpath(os.path.join(base_dir, rel))
        if not os.path.isfile(path):
            r.fail(k("file"), f"mesh file not found: {path}" if not os.path.isdir(path) else
                              f"{path} is a folder, not a mesh file")
        return path, "file", path
    if form == "points":
        return _points(r, spec["points"], k("points"), 4, "points"), "points", None
    if "faces" not in spec:
        hint = " (for a hull of points without faces, write points: instead)" if kind == "convex" else ""
        r.fail(k("faces"), f"missing: inline vertices need faces, a list of triangles [i, j, k]{hint}")
    vertices = _points(r, spec["vertices"], k("vertices"), 3 if kind == "mesh" else 4, "vertices")
    faces = _faces(r, spec["faces"], k("faces"), len(vertices))
    # a hull needs only the vertices (its faces are checked above, then recomputed by qhull)
    return ((vertices, faces) if kind == "mesh" else vertices), "vertices", None


def _orientation(r: Reader, spec: dict, key: str) -> tuple:
    """(quat, euler) of an entry that may give one of them (None where not given), each read as
    numbers; an error names the key when both are given."""
    if "quat" in spec and "euler" in spec:
        r.fail(key, "give the orientation as quat or as euler, not both")
    quat = r.vector(spec["quat"], 4, _join(key, "quat"), "numbers [x, y, z, w]") if "quat" in spec else None
    euler = (r.vector(spec["euler"], 3, _join(key, "euler"), "angles [rx, ry, rz] (radians)") if "euler" in spec
             else None)
    return quat, euler


def _add_mesh_obstacle(r: Reader, env: Environment, spec: dict, key: str, kind: str, name: str | None,
                       base_dir: str) -> int:
    k = lambda field: _join(key, field)  # noqa: E731
    quat, euler = _orientation(r, spec, key)
    pos = r.vector(spec["position"], 3, k("position")) if "position" in spec else None
    if pos is None and (quat is not None or euler is not None):
        pos = [0.0, 0.0, 0.0]  # an orientation about the mesh frame's origin
    scale = _scale(r, spec["scale"], k("scale")) if "scale" in spec else 1.0
    source, source_key, path = _mesh_source(r, spec, key, kind, base_dir)
    add = env.add_mesh if kind == "mesh" else env.add_convex
    try:
        return add(source, pos, quat, euler=euler, scale=scale, name=name)
    except FileNotFoundError as exc:  # the file went away since the check above
        raise SceneError(r.file, k("file"), str(exc)) from None
    except ValueError as exc:
        msg = str(exc)
        if path is not None and path in msg:  # could not read it, or no triangles in it
            raise SceneError(r.file, k("file"), msg) from None
        field = builder_key(msg, {f: v for f, v in spec.items() if f in ("position", "quat", "euler", "scale")})
        if field is None and path is not None:
            msg = f"{path}: {msg}"
        raise SceneError(r.file, k(field or source_key), msg) from None


# ----------------------------------------------------------------------------- planner settings

_SETTING_FIELDS = {f.name: f for f in dataclasses.fields(PlannerSettings)}


def _check_setting_type(r: Reader, name: str, value, key: str) -> None:
    """Type check from the dataclass annotation ("int", "float | None", ...); unknown ones pass."""
    kinds = [t.strip() for t in str(_SETTING_FIELDS[name].type).split("|")]
    if value is None:
        if "None" not in kinds:
            r.fail(key, "must not be null")
        return
    checks = {"bool": lambda v: isinstance(v, bool), "str": lambda v: isinstance(v, str),
              "int": is_number, "float": is_number}  # int: validated() refuses non-integral values
    known = [t for t in kinds if t in checks]
    if known and not any(checks[t](value) for t in known):
        want = " or ".join({"bool": "true/false", "str": "a string", "int": "an integer",
                            "float": "a number", "None": "null"}.get(t, t) for t in kinds)
        r.fail(key, f"must be {want}, got {describe(value)}")


def read_settings(r: Reader, value, key: str = "planner") -> PlannerSettings:
    """PlannerSettings from a mapping of its field names; validated."""
    d = r.mapping(value, key)
    r.keys(d, key, (), tuple(_SETTING_FIELDS), what="planner setting")
    for name, v in d.items():
        _check_setting_type(r, name, v, _join(key, name))
    try:
        return PlannerSettings(**d).validated()
    except ValueError as exc:
        word = str(exc).split(" ", 1)[0]
        raise SceneError(r.file, _join(key, word) if word in d else key, str(exc)) from None


def read_goal_pose(r: Reader, value, key: str) -> np.ndarray:
    """A goal pose entry {position, quat | euler} as a (4, 4) world matrix."""
    d = r.mapping(value, key)
    r.keys(d, key, ("position",), POSE_KEYS, what="goal pose key")
    quat, euler = _orientation(r, d, key)
    pos = r.vector(d["position"], 3, _join(key, "position"))
    try:
        p, rot = resolve_pose(pos, quat, euler, "goal pose")
    except ValueError as exc:
        r.fail(key, str(exc))
    m = np.eye(4)
    m[:3, :3], m[:3, 3] = rot, p
    return m


def read_timing(r: Reader, value, dof: int, key: str = "timing") -> dict:
    """The timing section: {limit: one number or dof numbers, scale / max_deviation: a number}, each
    checked as time_parameterize would (limits > 0, scales in (0, 1], max_deviation >= 0)."""
    d = r.mapping(value, key)
    r.keys(d, key, (), TIMING_LIMITS + TIMING_NUMBERS, what="timing option")
    out = {}
    for name, v in d.items():
        k = _join(key, name)
        if name in TIMING_LIMITS:
            vals = [r.number(v, k)] if is_number(v) else r.vector(v, dof, k)
            if any(x <= 0 for x in vals):
                r.fail(k, f"must be > 0 (per second{'s' * (name != 'velocity_limits')}), got {v}")
            out[name] = vals[0] if is_number(v) else vals
        else:
            x = r.number(v, k)
            if name == "max_deviation" and x < 0:
                r.fail(k, f"must be >= 0 (joint-space distance), got {x}")
            if name != "max_deviation" and not 0 < x <= 1:
                r.fail(k, f"must be in (0, 1], got {x}")
            out[name] = x
    return out


def default_settings() -> PlannerSettings:
    return PlannerSettings().validated()


def settings_dict(settings: PlannerSettings) -> dict:
    """The fields of ``settings`` that differ from the (validated) defaults, as plain values."""
    default = default_settings()
    out = {}
    for name in _SETTING_FIELDS:
        v = getattr(settings, name)
        if v != getattr(default, name):
            out[name] = v.item() if isinstance(v, np.generic) else v
    return out


# ----------------------------------------------------------------------------- the robot


def _robot_error(r: Reader, exc: ValueError, given: dict, paths: dict) -> SceneError:
    """Attribute a Robot construction error to the robot entry's key that caused it."""
    msg = str(exc)
    for field in ("srdf", "urdf"):  # file problems name the file
        if field in paths and msg.startswith(paths[field]):
            return SceneError(r.file, f"robot.{field}", msg)
    for field, words in (("base_pose", ("base_pose",)), ("fixed_joint_values", ("fixed", "held")),
                         ("joints", ("joints", "joint"))):
        if field in given and any(w in msg for w in words):
            return SceneError(r.file, f"robot.{field}", msg)
    return SceneError(r.file, "robot.urdf", msg)


def read_robot(r: Reader, spec, base_dir: str, build: bool = True, cache: dict | None = None) -> Robot | None:
    """The robot a scene file names: a built-in name, or {urdf, srdf, joints, fixed_joint_values, base_pose}.
    ``build=False``: only check the entry's form (for a scene loaded with a robot of the caller's).
    ``cache``: a dict kept across calls; entries that name the same robot (files resolved to
    absolute paths) return the Robot built for the first."""
    if isinstance(spec, str) and not build:
        return None
    if isinstance(spec, str):
        if spec not in _robots.available():
            r.fail("robot", f"unknown robot {spec!r}{suggest(spec, _robots.available())}; built-in robots: "
                            f"{', '.join(_robots.available())} (or give {{urdf: path, srdf: path}})")
        return _cached(cache, ("built-in", spec), lambda: _robots.load(spec))
    if not isinstance(spec, dict):
        r.fail("robot", f"must be a built-in robot name ({', '.join(_robots.available())}) or a mapping "
                        f"{{urdf: path, ...}}, got {describe(spec)}")
    r.keys(spec, "robot", ("urdf",), ROBOT_KEYS[1:])
    paths = {}
    for field in ("urdf", "srdf"):
        if field in spec:
            rel = r.string(spec[field], f"robot.{field}")
            path = rel if os.path.isabs(rel) else os.path.normpath(os.path.join(base_dir, rel))
            if build and not os.path.isfile(path):
                raise FileNotFoundError(errno.ENOENT, f"{r.file}: robot.{field}: no such file "
                                                      f"(relative paths are resolved against the scene's folder)", path)
            paths[field] = path
    kwargs = {}
    if "joints" in spec:
        joints = spec["joints"]
        if not isinstance(joints, list):
            r.fail("robot.joints", f"must be a list of joint names, got {describe(joints)}")
        kwargs["joints"] = [r.string(j, f"robot.joints[{i}]") for i, j in enumerate(joints)]
    if "fixed_joint_values" in spec:
        held = r.mapping(spec["fixed_joint_values"], "robot.fixed_joint_values")
        kwargs["fixed_joint_values"] = {str(n): r.number(v, f"robot.fixed_joint_values.{n}") for n, v in held.items()}
    if "base_pose" in spec:
        kwargs["base_pose"] = np.array(r.matrix(spec["base_pose"], 4, 4, "robot.base_pose"))
    if not build:
        return None

    def built() -> Robot:
        try:
            return Robot.from_urdf(paths["urdf"], paths.get("srdf"), **kwargs)
        except ValueError as exc:
            raise _robot_error(r, exc, spec, paths) from None

    key = ("urdf", paths["urdf"], paths.get("srdf"), tuple(kwargs.get("joints", ())),
           tuple(sorted(kwargs.get("fixed_joint_values", {}).items())),
           None if "base_pose" not in kwargs else kwargs["base_pose"].tobytes())
    return _cached(cache, key, built)


def _cached(cache: dict | None, key, build) -> Robot:
    if cache is None:
        return build()
    if key not in cache:
        cache[key] = build()
    return cache[key]
