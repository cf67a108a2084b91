"""Scene files: a robot, its obstacles, a start and goals, and planner settings in one YAML/JSON file.

A scene file (schema: ``scenes/schema.json``, JSON Schema draft 2020-12)::

    name: panda_table                       # optional
    description: ...                        # optional
    robot: panda                            # a built-in robot, or
    # robot: {urdf: my.urdf, srdf: my.srdf, joints: [...], fixed_joint_values: {...}, base_pose: 4x4}
    obstacles:                              # optional, default none
      - {type: sphere, position: [x, y, z], radius: r}
      - {type: capsule, position: [...], quat: [x, y, z, w], radius: r, length: l}
      - {type: cylinder, position: [...], euler: [rx, ry, rz], radius: r, length: l}
      - {type: box, position: [...], quat: [...], half_extents: [hx, hy, hz]}
      - {type: plane, normal: [nx, ny, nz], offset: d}
      - {type: pointcloud, file: scan.npy, point_radius: 0.0}   # .npy .ply .pcd .xyz; r_min, r_max optional
      - {type: mesh, file: meshes/shelf.obj, position: [...], euler: [...], scale: 1.0}  # STL, OBJ, PLY
      - {type: mesh, vertices: [[x, y, z], ...], faces: [[i, j, k], ...]}                # inline triangles
      - {type: convex, points: [[x, y, z], ...], position: [...], quat: [...]}          # or file, or vertices + faces
    start: [q1, ..., qn]
    goals: [[q1, ..., qn], ...]             # or goal: [q1, ..., qn]
    planner: {planner: rrtc, seed: 0, ...}  # optional: PlannerSettings fields

Units and conventions are simdplan's: metres and radians, quaternions ``[x, y, z, w]``, Euler
angles extrinsic x-y-z (URDF rpy), a shape's pose is its centre, cylinders and capsules run along
their local z with total length ``length``, a plane is the half-space ``normal . p <= offset``.
Orientation is optional (axis-aligned). URDF/SRDF, point-cloud and mesh paths are relative to the
scene file's folder.

Meshes and convex hulls: a ``mesh`` is a triangle *surface* (a robot sphere wholly inside a closed
mesh does not collide with it), read from a ``file`` (anything trimesh reads: STL, OBJ, PLY, ...;
units taken as metres) or given inline as ``vertices`` (n x 3) and ``faces`` (m x 3 vertex indices,
from 0); exactly one of the two. A ``convex`` obstacle is the solid convex hull of ``points``
(at least 4, not all in one plane), of a mesh ``file``'s vertices, or of inline ``vertices`` (with
``faces``). For both, ``position`` and ``quat``/``euler`` place the mesh's own frame in the world
(all optional: by default the coordinates are world coordinates) and ``scale`` (a number or
[sx, sy, sz], > 0, default 1) multiplies the coordinates in that frame before the pose.

Every problem found while loading raises an error that names the file, the key path (for example
``obstacles[3].half_extents``) and what is wrong: ``SceneError`` (a ValueError) for content
(including a missing or unreadable point-cloud or mesh file, reported at ``obstacles[i].file``),
FileNotFoundError for a missing scene, URDF or SRDF file.

Limits: a file nests at most ``MAX_NESTING`` (32) levels deep, aliases included, and is at most
``MAX_YAML_BYTES`` (4 MB) of YAML or ``MAX_JSON_BYTES`` (64 MB) of JSON, UTF-8; beyond that it is a
SceneError (the nesting is checked on the parser's events, without recursing). Point clouds and
large meshes belong in files referenced by ``file``. YAML is read with libyaml where PyYAML has it
(``yaml.CSafeLoader``), else with ``yaml.SafeLoader``; both read a file the same and report its
errors in the same words (a few texts libyaml takes, such as a tab inside a plain scalar, PyYAML
refuses).
"""

from __future__ import annotations

import dataclasses
import difflib
import errno
import json
import math
import os
import re

import numpy as np
import yaml

from simdplan import robots as _robots
from simdplan.collision.environment import Environment
from simdplan.planner.settings import PlannerSettings
from simdplan.robots import Robot

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_PATH = os.path.join(HERE, "schema.json")
EXAMPLES_DIR = os.path.join(HERE, "examples")
EXTENSIONS = (".yaml", ".yml", ".json")
# ``save`` writes a mesh or hull without a file inline up to this many vertices, else beside the scene
# as an OBJ file (a YAML file of thousands of vertex rows takes seconds to parse).
INLINE_MESH_VERTICES = 1000

TOP_KEYS = ("name", "description", "robot", "obstacles", "start", "goals", "goal", "planner")
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


def _what(value) -> str:
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


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def _suggest(word: str, choices) -> str:
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
            self.fail(key, f"must be a mapping (key: value), got {_what(value)}")
        return value

    def keys(self, d: dict, key: str, required=(), optional=(), what: str = "key") -> None:
        """Every required key is present and no other key than required + optional (which may
        repeat the required keys, to list the allowed keys in that order)."""
        allowed = tuple(dict.fromkeys(tuple(optional) if set(required) <= set(optional) else
                                      tuple(required) + tuple(optional)))
        for k in d:
            if k not in allowed:
                self.fail(_join(key, k), f"unknown {what}{_suggest(k, allowed)}; allowed: {', '.join(allowed)}")
        for k in required:
            if k not in d:
                self.fail(_join(key, k), f"missing (required{' in ' + key if key else ''})")

    def string(self, value, key: str) -> str:
        if not isinstance(value, str):
            self.fail(key, f"must be a string, got {_what(value)}")
        return value

    def number(self, value, key: str) -> float:
        if not _is_number(value):
            self.fail(key, f"must be a number, got {_what(value)}")
        try:
            v = float(value)
        except OverflowError:  # an integer beyond float range
            self.fail(key, f"must be finite, got {_what(value)}")
        if not math.isfinite(v):
            self.fail(key, f"must be finite, got {v}")
        return v

    def vector(self, value, length: int | None, key: str, what: str = "numbers") -> list[float]:
        """A list of finite numbers, of ``length`` if given."""
        if not isinstance(value, (list, tuple)):
            n = f"{length} " if length is not None else ""
            self.fail(key, f"must be a list of {n}{what}, got {_what(value)}")
        if length is not None and len(value) != length:
            self.fail(key, f"must have {length} values, got {len(value)}")
        return [self.number(v, _join(key, i)) for i, v in enumerate(value)]

    def matrix(self, value, rows: int, cols: int, key: str) -> list[list[float]]:
        if not isinstance(value, (list, tuple)) or len(value) != rows:
            self.fail(key, f"must be a {rows}x{cols} matrix (a list of {rows} rows), got {_what(value)}")
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
        r.fail(_join(key, "type"), f"must be an obstacle type name ({', '.join(OBSTACLE_TYPES)}), got {_what(kind)}")
    if kind not in OBSTACLE_KEYS:
        r.fail(_join(key, "type"), f"unknown obstacle type {kind!r}{_suggest(kind, OBSTACLE_TYPES)}; "
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
        if "quat" in spec and "euler" in spec:
            r.fail(key, "give the orientation as quat or as euler, not both")
        pos = r.vector(spec["position"], 3, k("position"))
        quat = r.vector(spec["quat"], 4, k("quat"), "numbers [x, y, z, w]") if "quat" in spec else None
        euler = r.vector(spec["euler"], 3, k("euler"), "angles [rx, ry, rz] (radians)") if "euler" in spec else None
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
        r.fail(key, f"must be a list of {what} [x, y, z], got {_what(value)}")
    if len(value) < min_rows:
        r.fail(key, f"needs at least {min_rows} {what}, got {len(value)}")
    return np.array([r.vector(v, 3, _join(key, i)) for i, v in enumerate(value)], dtype=np.float64)


def _faces(r: Reader, value, key: str, n_vertices: int) -> np.ndarray:
    """A list of ``[i, j, k]`` vertex indices in [0, n_vertices) as (m, 3) int64."""
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, (list, tuple)) for v in value):
        r.fail(key, f"must be a non-empty list of triangles [i, j, k] (vertex indices from 0), got {_what(value)}")
    for i, tri in enumerate(value):
        if len(tri) != 3:
            r.fail(_join(key, i), f"must have 3 vertex indices, got {len(tri)}")
        for j, v in enumerate(tri):
            if not isinstance(v, (int, np.integer)) or isinstance(v, (bool, np.bool_)):
                r.fail(_join(_join(key, i), j), f"must be an integer vertex index, got {_what(v)}")
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
    if not _is_number(value):
        r.fail(key, f"must be a number > 0 or a list of 3 of them, got {_what(value)}")
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


def _add_mesh_obstacle(r: Reader, env: Environment, spec: dict, key: str, kind: str, name: str | None,
                       base_dir: str) -> int:
    k = lambda field: _join(key, field)  # noqa: E731
    if "quat" in spec and "euler" in spec:
        r.fail(key, "give the orientation as quat or as euler, not both")
    pos = r.vector(spec["position"], 3, k("position")) if "position" in spec else None
    quat = r.vector(spec["quat"], 4, k("quat"), "numbers [x, y, z, w]") if "quat" in spec else None
    euler = r.vector(spec["euler"], 3, k("euler"), "angles [rx, ry, rz] (radians)") if "euler" in spec else None
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


def _rel(path: str, relative_to: str | None) -> str:
    """``path`` relative to the folder ``relative_to`` (None: as given; another drive: absolute)."""
    if relative_to is None:
        return path
    try:
        return os.path.relpath(path, relative_to)
    except ValueError:  # another drive (Windows)
        return path


def _mesh_entry(d: dict, relative_to: str | None) -> dict:
    """A mesh or convex obstacle's ``Environment.to_dicts`` entry in the file format: file (relative)
    and scale, or inline vertices + faces (a convex hull: its vertices as points); the pose only when
    it is not the identity."""
    out = {"type": d["type"], "name": d["name"]}
    if "file" in d:
        out["file"] = _rel(d["file"], relative_to)
        if d.get("scale", 1.0) != 1.0:
            out["scale"] = d["scale"]
    elif d["type"] == "convex":
        out["points"] = np.asarray(d["vertices"], dtype=np.float64).tolist()
    else:
        out["vertices"] = np.asarray(d["vertices"], dtype=np.float64).tolist()
        out["faces"] = np.asarray(d["faces"], dtype=np.int64).tolist()
    position, quat = list(d["position"]), list(d["quat"])
    if any(position) or quat[:3] != [0.0, 0.0, 0.0]:
        out["position"] = position
        out["quat"] = quat
    return out


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
              "int": _is_number, "float": _is_number}  # int: validated() refuses non-integral values
    known = [t for t in kinds if t in checks]
    if known and not any(checks[t](value) for t in known):
        want = " or ".join({"bool": "true/false", "str": "a string", "int": "an integer",
                            "float": "a number", "None": "null"}.get(t, t) for t in kinds)
        r.fail(key, f"must be {want}, got {_what(value)}")


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


def _default_settings() -> PlannerSettings:
    return PlannerSettings().validated()


def settings_dict(settings: PlannerSettings) -> dict:
    """The fields of ``settings`` that differ from the (validated) defaults, as plain values."""
    default = _default_settings()
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


def read_robot(r: Reader, spec, base_dir: str, build: bool = True) -> Robot | None:
    """The robot a scene file names: a built-in name, or {urdf, srdf, joints, fixed_joint_values, base_pose}.
    ``build=False``: only check the entry's form (for a scene loaded with a robot of the caller's)."""
    if isinstance(spec, str) and not build:
        return None
    if isinstance(spec, str):
        if spec not in _robots.available():
            r.fail("robot", f"unknown robot {spec!r}{_suggest(spec, _robots.available())}; built-in robots: "
                            f"{', '.join(_robots.available())} (or give {{urdf: path, srdf: path}})")
        return _robots.load(spec)
    if not isinstance(spec, dict):
        r.fail("robot", f"must be a built-in robot name ({', '.join(_robots.available())}) or a mapping "
                        f"{{urdf: path, ...}}, got {_what(spec)}")
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
            r.fail("robot.joints", f"must be a list of joint names, got {_what(joints)}")
        kwargs["joints"] = [r.string(j, f"robot.joints[{i}]") for i, j in enumerate(joints)]
    if "fixed_joint_values" in spec:
        held = r.mapping(spec["fixed_joint_values"], "robot.fixed_joint_values")
        kwargs["fixed_joint_values"] = {str(n): r.number(v, f"robot.fixed_joint_values.{n}") for n, v in held.items()}
    if "base_pose" in spec:
        kwargs["base_pose"] = np.array(r.matrix(spec["base_pose"], 4, 4, "robot.base_pose"))
    if not build:
        return None
    try:
        return Robot.from_urdf(paths["urdf"], paths.get("srdf"), **kwargs)
    except ValueError as exc:
        raise _robot_error(r, exc, spec, paths) from None


# ----------------------------------------------------------------------------- parsing files

# Nesting and size limits: the size is checked before parsing, the nesting on the parser's event
# stream, before anything recurses over it. Python's parsers recurse once per
# level of nesting (a file thousands of levels deep ends in RecursionError, and libyaml's composer
# overruns the C stack), while real scenes are at most 5 levels deep (top level, obstacles, an
# obstacle, its vertices, a vertex) and the MotionBenchMaker file 7. YAML builds Python objects at
# about 2 s and 50 MB per MB of file even with libyaml; JSON parses in C at a small fraction of
# that. The shipped scenes are a few kB and the MotionBenchMaker file 2.4 MB of JSON: bulk data
# belongs in point-cloud and mesh files, which are read by numpy and trimesh.
MAX_NESTING = 32
MAX_YAML_BYTES = 4_000_000
MAX_JSON_BYTES = 64_000_000
_BULK_HINT = ("bulk data such as point clouds and large meshes belongs in .npy/.ply/.obj files that the scene "
              "references with file: (simdplan.scenes.save writes them so)")


def _make_yaml_loader(base, namespace=None):
    """A ``base`` (SafeLoader or libyaml's CSafeLoader) that reads ``1e-3`` as a float (YAML 1.1 wants
    ``1.0e-3``) and refuses duplicate and unhashable keys with a YAML error."""
    loader = type(f"Scene{base.__name__}", (base,), {"watches_events": False, **(namespace or {})})
    loader.add_implicit_resolver(
        "tag:yaml.org,2002:float",
        re.compile(r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?
                        |[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)
                        |\.[0-9_]+(?:[eE][-+]?[0-9]+)?
                        |[-+]?\.(?:inf|Inf|INF)
                        |\.(?:nan|NaN|NAN))$""", re.X),
        list("-+0123456789."))
    loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
    loader.construct_object = _construct_object
    return loader


def _construct_object(loader, node, deep=False):
    """SafeConstructor.construct_object, with a value its tag cannot take (``!!int x``, a 5000-digit
    integer, ``2001-02-30``, ``!!timestamp x``) as a YAML error at the value instead of a bare
    ValueError (or AttributeError) from deep inside PyYAML."""
    try:
        return yaml.SafeLoader.construct_object(loader, node, deep)
    except yaml.YAMLError:
        raise
    except (ValueError, TypeError, AttributeError, ArithmeticError) as exc:
        value = node.value if isinstance(node, yaml.ScalarNode) else None
        shown = f" {value!r}" if isinstance(value, str) and len(value) <= 40 else \
            f" of {len(value)} characters" if isinstance(value, str) else ""
        tag = node.tag.rsplit(":", 1)[-1] if node.tag.startswith("tag:yaml.org,2002:") else node.tag
        why = f" ({exc})" if isinstance(exc, (ValueError, ArithmeticError)) else ""  # not PyYAML's internals
        raise yaml.constructor.ConstructorError(None, None, f"cannot read the value{shown} as {tag}{why}",
                                                node.start_mark) from None


def _construct_mapping(loader, node, deep=False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        try:
            duplicate = key in seen
        except TypeError:  # a list or mapping as a key
            raise yaml.constructor.ConstructorError(None, None, "a key must be a plain value, not a list or "
                                                    "mapping", key_node.start_mark) from None
        if duplicate:
            raise yaml.constructor.ConstructorError(None, None, f"duplicate key {key!r}", key_node.start_mark)
        seen.add(key)
    return yaml.SafeLoader.construct_mapping(loader, node, deep)


def _get_watched_event(loader):
    event = yaml.SafeLoader.get_event(loader)
    if loader.nesting is not None:
        loader.nesting.see(event)
    return event


PyYamlLoader = _make_yaml_loader(yaml.SafeLoader, {"watches_events": True, "nesting": None,
                                                   "get_event": _get_watched_event})
# libyaml (C) reads a large scene about three times as fast as PyYAML's pure-Python parser; the
# objects are built by the same Python constructor either way, so both read a file the same.
LibYamlLoader = _make_yaml_loader(yaml.CSafeLoader) if getattr(yaml, "CSafeLoader", None) else None
YamlLoader = LibYamlLoader or PyYamlLoader


def _json_pairs(pairs):
    d = {}
    for k, v in pairs:
        if k in d:
            raise ValueError(f"duplicate key {k!r}")
        d[k] = v
    return d


def _line_column(text: str, index: int) -> str:
    line = text.count("\n", 0, index) + 1
    line_start = text.rfind("\n", 0, index) + 1
    return f"line {line}, column {index - line_start + 1}"


def _too_deep(path: str, where: str, what: str) -> SceneError:
    scene = what == "scene file"
    needs = "5 levels (a mesh's vertex rows)" if scene else "7 levels (a problem's obstacle positions)"
    hint = f"; {_BULK_HINT}" if scene else ""
    return SceneError(path, "", f"nested more than {MAX_NESTING} levels deep at {where}; a {what} needs at most "
                                f"{needs}, so this one is damaged or not a {what}{hint}")


# A JSON string (skipped whole, so brackets inside it do not count) or a bracket.
_JSON_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.S)


def _check_json_nesting(path: str, text: str, what: str) -> None:
    """SceneError if ``text`` nests arrays/objects more than MAX_NESTING deep (json.loads recurses)."""
    depth = 0
    for m in _JSON_BRACKETS.finditer(text):
        c = text[m.start()]
        if c == "[" or c == "{":
            depth += 1
            if depth > MAX_NESTING:
                raise _too_deep(path, _line_column(text, m.start()), what)
        elif c == "]" or c == "}":
            depth -= 1


class _YamlNesting:
    """Watches a YAML event stream, in order: SceneError where collections nest more than
    MAX_NESTING deep, counting what aliases bring in, or where an alias refers to a collection that
    contains it (an endless nesting); and the composer's own errors (an undefined alias, a duplicate
    anchor, a second document) in PyYAML's words, so that whether the stream is watched ahead of
    composing (libyaml) or while composing (PyYAML), the first problem in the file is reported.
    Nothing recurses."""

    def __init__(self, path: str, what: str) -> None:
        self.path, self.what = path, what
        self.open_collections = []  # [anchor, height of its tallest child] per collection being read
        self.heights = {}  # anchor -> nesting height of the node it names (a scalar: 0)
        self.anchor_marks = {}
        self.documents = 0
        self.first_node_mark = None

    def see(self, event) -> None:
        if isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise yaml.composer.ComposerError("expected a single document in the stream", self.first_node_mark,
                                                  "but found another document", event.start_mark)
            return
        if isinstance(event, yaml.NodeEvent) and self.first_node_mark is None:
            self.first_node_mark = event.start_mark
        if isinstance(event, yaml.AliasEvent):
            self._alias(event)
            return
        anchor = getattr(event, "anchor", None)
        if anchor is not None and not isinstance(event, yaml.CollectionEndEvent):
            if anchor in self.anchor_marks:
                raise yaml.composer.ComposerError(f"found duplicate anchor {anchor!r}; first occurrence",
                                                  self.anchor_marks[anchor], "second occurrence", event.start_mark)
            self.anchor_marks[anchor] = event.start_mark
        if isinstance(event, yaml.CollectionStartEvent):
            if len(self.open_collections) >= MAX_NESTING:
                raise _too_deep(self.path, self._where(event), self.what)
            self.open_collections.append([event.anchor, 0])
        elif isinstance(event, yaml.CollectionEndEvent):
            anchor, tallest_child = self.open_collections.pop()
            if anchor is not None:
                self.heights[anchor] = tallest_child + 1
            self._child(tallest_child + 1)
        elif isinstance(event, yaml.ScalarEvent) and event.anchor is not None:
            self.heights[event.anchor] = 0

    def _alias(self, event) -> None:
        if event.anchor not in self.anchor_marks:
            raise yaml.composer.ComposerError(None, None, f"found undefined alias {event.anchor!r}", event.start_mark)
        if event.anchor not in self.heights:  # defined, but its collection is still open: it contains the alias
            raise SceneError(self.path, "", f"malformed YAML at {self._where(event)}: alias *{event.anchor} refers "
                                            f"to a collection that contains it, which would nest without end")
        if len(self.open_collections) + self.heights[event.anchor] > MAX_NESTING:
            raise _too_deep(self.path, self._where(event), self.what)
        self._child(self.heights[event.anchor])

    def _child(self, height: int) -> None:
        if self.open_collections:
            self.open_collections[-1][1] = max(self.open_collections[-1][1], height)

    @staticmethod
    def _where(event) -> str:
        return f"line {event.start_mark.line + 1}, column {event.start_mark.column + 1}"


def _yaml_error(path: str, exc: yaml.YAMLError, text: str) -> SceneError:
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow, by its index
        return SceneError(path, "", f"malformed YAML at {_line_column(text, exc.position)}: character "
                                    f"U+{exc.character if isinstance(exc.character, int) else ord(exc.character):04X} "
                                    f"is not allowed in YAML text ({exc.reason})")
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    context_mark = getattr(exc, "context_mark", None)
    if context and context_mark is not None and context_mark is not mark:  # e.g. a duplicate's first occurrence
        context += f" at line {context_mark.line + 1}, column {context_mark.column + 1}"
    return SceneError(path, "", f"malformed YAML{where}: {problem}" + (f" ({context})" if context else ""))


def _parse_yaml(text: str, path: str, what: str, loader_class):
    nesting = _YamlNesting(path, what)
    if loader_class.watches_events:  # PyYAML's composer reads events one by one: watch them as it does
        loader = loader_class(text)
        loader.nesting = nesting
    else:  # libyaml composes in C (recursively): watch the events in a pass of their own first
        checker = loader_class(text)
        try:
            while checker.check_event():
                nesting.see(checker.get_event())
        finally:
            checker.dispose()
        loader = loader_class(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def read_data(path: str, what: str = "scene file"):
    """Parse a YAML (.yaml/.yml) or JSON (.json) file; clear errors for missing, malformed, too big
    (MAX_YAML_BYTES, MAX_JSON_BYTES) or too deeply nested (MAX_NESTING) files."""
    if not os.path.isfile(path):
        raise FileNotFoundError(errno.ENOENT, f"{what} not found" + (
            " (shipped examples: simdplan.scenes.example(name))" if what == "scene file" else ""), path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in EXTENSIONS:
        raise SceneError(path, "", f"unknown {what} extension {ext or '(none)'!r}; use .yaml, .yml or .json")
    is_json = ext == ".json"
    limit = MAX_JSON_BYTES if is_json else MAX_YAML_BYTES
    with open(path, "rb") as f:
        raw = f.read(limit + 1)  # the size may change between a stat and the read: count what is read
    if len(raw) > limit:
        size = max(len(raw), os.path.getsize(path))
        kind = "JSON" if is_json else "YAML"
        other = "" if is_json else f", or write the scene as JSON (up to {MAX_JSON_BYTES // 10**6} MB)"
        raise SceneError(path, "", f"the file has {size:,} bytes, more than the {limit // 10**6} MB ({limit:,} bytes) "
                                   f"a {kind} {what} may have; {_BULK_HINT}{other}")
    try:
        text = raw.decode("utf-8-sig")  # a byte-order mark, as some editors write, is not content
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise SceneError(path, "", f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at line {line} "
                                   f"(offset {exc.start}) is not valid UTF-8; save the file as UTF-8") from None
    del raw
    if is_json:
        _check_json_nesting(path, text, what)
        try:
            return json.loads(text, object_pairs_hook=_json_pairs)
        except json.JSONDecodeError as exc:
            raise SceneError(path, "", f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
        except ValueError as exc:
            raise SceneError(path, "", f"malformed JSON: {exc}") from None
    try:
        return _parse_yaml(text, path, what, YamlLoader)
    except yaml.YAMLError as exc:
        error = exc
    if YamlLoader is not PyYamlLoader and not isinstance(error, yaml.constructor.ConstructorError):
        # libyaml words syntax errors its own way (and places some a column apart): report PyYAML's,
        # so that a file gets one message whichever parser is installed. Errors are rare and PyYAML
        # stops at the first one.
        try:
            _parse_yaml(text, path, what, PyYamlLoader)
        except yaml.YAMLError as exc:
            error = exc
    raise _yaml_error(path, error, text) from None


# ----------------------------------------------------------------------------- the Scene


@dataclasses.dataclass(eq=False)
class Scene:
    """A planning problem: a robot, obstacles, a start and goals, and planner settings.

    robot: simdplan Robot. env: Environment. start: (dof,) float64. goals: (m, dof) float64, m >= 1
    (any goal will do). settings: validated PlannerSettings. robot_spec: the robot as the file gave
    it (a built-in name, or a dict with urdf/srdf paths relative to ``path``'s folder), kept so
    ``save`` can write it back; None if unknown. path: the file the scene was read from (absolute)
    or None. MotionBenchMaker scenes also carry ``problem`` (class name), ``index`` and ``valid``
    (the file's flag: start and some goal collision-free under the reference model).
    cloud_files: point-cloud obstacle id -> the absolute path of the file it was read from (or
    written to by ``save``); ``save`` writes clouds without one as .npy files beside the scene.
    mesh_files: mesh / convex obstacle id -> the OBJ file ``save`` wrote it to (meshes read from a
    file keep theirs in ``params["source"]``).
    """

    robot: Robot
    env: Environment
    start: np.ndarray
    goals: np.ndarray
    settings: PlannerSettings = dataclasses.field(default_factory=_default_settings)
    name: str = ""
    description: str = ""
    path: str | None = None
    robot_spec: str | dict | None = None
    problem: str | None = None
    index: int | None = None
    valid: bool | None = None
    cloud_files: dict = dataclasses.field(default_factory=dict)
    mesh_files: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self.start = np.array(self.start, dtype=np.float64)
        goals = np.array(self.goals, dtype=np.float64)
        self.goals = goals.reshape(1, -1) if goals.ndim == 1 else goals
        dof = self.robot.dof
        if self.start.shape != (dof,):
            raise ValueError(f"start must have shape ({dof},), got {self.start.shape}")
        if self.goals.ndim != 2 or self.goals.shape[1] != dof or len(self.goals) == 0:
            raise ValueError(f"goals must have shape (m, {dof}) with m >= 1, got {self.goals.shape}")

    @property
    def goal(self) -> np.ndarray:
        """The first goal, (dof,) float64."""
        return self.goals[0]

    def __repr__(self) -> str:
        label = self.name or (os.path.basename(self.path) if self.path else "unnamed")
        return (f"Scene({label!r}, robot={self.robot.name!r}, dof={self.robot.dof}, {self.env!r}, "
                f"goals={len(self.goals)}, planner={self.settings.planner!r})")

    def to_dict(self, relative_to: str | None = None) -> dict:
        """The scene as plain data in the file format. URDF/SRDF, point-cloud and mesh file paths are
        written relative to the folder ``relative_to`` (default: absolute). Meshes and convex hulls
        not read from a file are written inline (a mesh as vertices + faces with its scale applied,
        a hull as its vertices, ``points``), or as the file ``mesh_files`` gives for them."""
        if self.robot_spec is None:
            raise ValueError("scene.robot_spec is not set, so the robot cannot be written: set it to a built-in "
                             "robot name (e.g. 'panda') or {'urdf': path, 'srdf': path, ...}")
        out: dict = {}
        if self.name:
            out["name"] = str(self.name)
        if self.description:
            out["description"] = str(self.description)
        out["robot"] = _robot_spec_for(self.robot_spec, self.path, relative_to)
        obstacles = []
        for ob, d in zip(self.env, self.env.to_dicts()):
            if ob.kind == "pointcloud":
                if ob.id not in self.cloud_files:
                    raise ValueError(f"point cloud {ob.name!r} has no file: use simdplan.scenes.save(scene, path), "
                                     "which writes it beside the scene, or set scene.cloud_files[id]")
                src = self.cloud_files[ob.id]
                d.pop("points")
                d = {"type": d.pop("type"), "name": d.pop("name"), "file": _rel(src, relative_to), **d}
            elif ob.kind in ("mesh", "convex"):
                if ob.id in self.mesh_files:  # written by save: the file holds the scaled vertices
                    d = {"type": d["type"], "name": d["name"], "file": self.mesh_files[ob.id],
                         "position": d["position"], "quat": d["quat"]}
                d = _mesh_entry(d, relative_to)
            obstacles.append(_plain(d))
        out["obstacles"] = obstacles
        out["start"] = self.start.tolist()
        out["goals"] = self.goals.tolist()
        planner = settings_dict(self.settings)
        if planner:
            out["planner"] = planner
        return out


def _plain(value):
    """numpy values and tuples as plain Python (lists, floats, ints) for YAML/JSON."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def _robot_spec_for(spec, scene_path: str | None, relative_to: str | None):
    if isinstance(spec, str):
        return spec
    spec = _plain(spec)
    base = os.path.dirname(os.path.abspath(scene_path)) if scene_path else os.getcwd()
    for field in ("urdf", "srdf"):
        if field in spec:
            path = spec[field] if os.path.isabs(spec[field]) else os.path.normpath(os.path.join(base, spec[field]))
            if relative_to is not None:
                try:
                    path = os.path.relpath(path, relative_to)
                except ValueError:  # another drive (Windows): keep it absolute
                    pass
            spec[field] = path
    return spec


def load(path: str | os.PathLike, *, robot: Robot | None = None) -> Scene:
    """Read a scene file (``.yaml``, ``.yml`` or ``.json``): see the module docstring for the format.

    ``robot``: use this Robot instead of building the one the file names (the file's ``robot`` entry
    is still kept in ``scene.robot_spec``); useful when loading many scenes for one robot.
    Raises FileNotFoundError (missing scene/URDF/SRDF file) or SceneError (a ValueError naming the
    file, the key path and the problem).
    """
    path = os.path.abspath(os.fspath(path))
    data = read_data(path)
    r = Reader(path)
    if data is None:
        r.fail("", "the file is empty; a scene needs robot, start and goals")
    data = r.mapping(data, "(top level)")
    r.keys(data, "", ("robot", "start"), TOP_KEYS)
    name = r.string(data["name"], "name") if "name" in data else os.path.splitext(os.path.basename(path))[0]
    description = r.string(data["description"], "description") if "description" in data else ""

    spec = data["robot"]
    if robot is None:
        robot = read_robot(r, spec, os.path.dirname(path))
    elif not isinstance(robot, Robot):
        raise TypeError(f"robot must be a simdplan Robot or None, got {type(robot).__name__}")
    else:  # the entry is kept in robot_spec (and copied): check its form, which also bounds the copy
        read_robot(r, spec, os.path.dirname(path), build=False)

    env = Environment()
    obstacles = data.get("obstacles")
    obstacles = [] if obstacles is None else obstacles
    if not isinstance(obstacles, list):
        r.fail("obstacles", f"must be a list of obstacles, got {_what(obstacles)}")
    cloud_files: dict[int, str] = {}
    for i, ob in enumerate(obstacles):
        add_obstacle(r, env, ob, f"obstacles[{i}]", os.path.dirname(path), cloud_files)

    start = r.config(data["start"], robot, "start")
    if "goals" in data and "goal" in data:
        r.fail("goal", "give goal (one configuration) or goals (a list of them), not both")
    if "goal" in data:
        goals = [r.config(data["goal"], robot, "goal")]
    elif "goals" in data:
        raw = data["goals"]
        if not isinstance(raw, list) or not raw:
            r.fail("goals", f"must be a non-empty list of configurations, got {_what(raw)}")
        if all(_is_number(v) for v in raw):
            r.fail("goals", "must be a list of configurations (a list of lists); for one goal write "
                            "goals: [[...]] or goal: [...]")
        goals = [r.config(g, robot, f"goals[{i}]") for i, g in enumerate(raw)]
    else:
        r.fail("goals", "missing (required: goals, a list of configurations, or goal, one configuration)")

    settings = read_settings(r, data["planner"]) if "planner" in data and data["planner"] is not None \
        else _default_settings()
    return Scene(robot=robot, env=env, start=start, goals=np.array(goals), settings=settings, name=name,
                 description=description, path=path, robot_spec=_plain(spec), cloud_files=cloud_files)


# ----------------------------------------------------------------------------- writing files


class _Dumper(yaml.SafeDumper):
    """Lists of scalars in flow style ([1.0, 2.0, 3.0]); everything else in block style."""


def _represent_list(dumper, data):
    flow = all(isinstance(v, (int, float, str, bool)) or v is None for v in data)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(list, _represent_list)


def _json_text(value, indent: int = 0) -> str:
    """JSON with lists of scalars on one line."""
    pad, inner = " " * indent, " " * (indent + 2)
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {_json_text(v, indent + 2)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(value, list):
        if all(not isinstance(v, (dict, list)) for v in value):
            return "[" + ", ".join(json.dumps(v, allow_nan=False) for v in value) + "]"
        return "[\n" + ",\n".join(inner + _json_text(v, indent + 2) for v in value) + "\n" + pad + "]"
    return json.dumps(value, allow_nan=False)


def dumps(scene: Scene, fmt: str = "yaml", relative_to: str | None = None) -> str:
    """The scene file text, ``fmt`` "yaml" or "json" (see ``Scene.to_dict`` for ``relative_to``)."""
    data = scene.to_dict(relative_to)
    if fmt == "json":
        return _json_text(data) + "\n"
    if fmt != "yaml":
        raise ValueError(f"fmt must be 'yaml' or 'json', got {fmt!r}")
    head = "# simdplan scene (format: simdplan/scenes/schema.json)\n"
    return head + yaml.dump(data, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=120)


def _write_obj(path: str, vertices, faces, what: str) -> None:
    """A Wavefront OBJ of ``v`` and ``f`` lines; coordinates as shortest round-trip decimals (exact)."""
    lines = [f"# {what}: {len(vertices)} vertices, {len(faces)} triangles; written by simdplan.scenes.save"]
    lines += ["v %r %r %r" % tuple(v) for v in np.asarray(vertices, dtype=np.float64).tolist()]
    lines += ["f %d %d %d" % tuple(f) for f in (np.asarray(faces, dtype=np.int64) + 1).tolist()]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def save(scene: Scene, path: str | os.PathLike) -> str:
    """Write ``scene`` to ``path``: YAML for .yaml/.yml, JSON for .json. URDF/SRDF, point-cloud and mesh
    paths are rewritten relative to the new file's folder; a point cloud without a file is written beside
    it as ``<stem>.<cloud name>.npy``; a mesh or convex hull without a file is written inline, or, with
    more than ``INLINE_MESH_VERTICES`` vertices, beside it as ``<stem>.<name>.obj`` (exact coordinates;
    vertices no triangle uses are dropped when it is read back). Returns the absolute path written.
    ``load`` of the result gives the same obstacles, start, goals and settings."""
    path = os.path.abspath(os.fspath(path))
    ext = os.path.splitext(path)[1].lower()
    if ext not in EXTENSIONS:
        raise ValueError(f"{path}: unknown scene file extension {ext or '(none)'!r}; use .yaml, .yml or .json")
    stem = os.path.splitext(path)[0]
    for ob in scene.env:
        if ob.kind == "pointcloud" and ob.id not in scene.cloud_files:
            cloud = f"{stem}.{re.sub(r'[^A-Za-z0-9_.-]+', '_', ob.name)}.npy"
            np.save(cloud, np.asarray(ob.params["points"]))
            scene.cloud_files[ob.id] = cloud
        elif (ob.kind in ("mesh", "convex") and ob.params["source"] is None and ob.id not in scene.mesh_files
              and len(ob.params["local_vertices"]) > INLINE_MESH_VERTICES):
            mesh = f"{stem}.{re.sub(r'[^A-Za-z0-9_.-]+', '_', ob.name)}.obj"
            p = ob.params
            _write_obj(mesh, p["local_vertices"] * (p["scale"] if ob.kind == "mesh" else 1.0), p["faces"],
                       f"{ob.kind} {ob.name!r} of scene {os.path.basename(path)}")
            scene.mesh_files[ob.id] = mesh
    text = dumps(scene, "json" if ext == ".json" else "yaml", relative_to=os.path.dirname(path))
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


# ----------------------------------------------------------------------------- shipped examples


def examples() -> list[str]:
    """Names of the shipped example scenes (for ``example(name)``)."""
    if not os.path.isdir(EXAMPLES_DIR):
        return []
    return sorted(os.path.splitext(f)[0] for f in os.listdir(EXAMPLES_DIR) if f.endswith(EXTENSIONS))


def example(name: str) -> str:
    """Path of a shipped example scene, by name ("panda_table") or file name ("panda_table.yaml")."""
    stem = os.path.splitext(name)[0] if name.endswith(EXTENSIONS) else name
    for ext in EXTENSIONS:
        path = os.path.join(EXAMPLES_DIR, stem + ext)
        if os.path.isfile(path):
            return path
    raise ValueError(f"no shipped example scene {name!r}{_suggest(stem, examples())}; "
                     f"available: {', '.join(examples())}")
