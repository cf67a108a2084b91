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
    goals: [[q1, ..., qn], ...]             # or goal: [q1, ..., qn], or poses of a link:
    # goal_poses: [{position: [x, y, z], quat: [x, y, z, w]}, ...]   # (or goal_pose: {...}; euler instead of quat)
    # goal_link: panda_hand                 # optional (default Robot.ik's), goal_mask: free_z (optional)
    planner: {planner: rrtc, seed: 0, ...}  # optional: PlannerSettings fields
    timing: {velocity_limits: [...], acceleration_limits: 4.0, velocity_scale: 0.5, max_deviation: 0.05}
                                            # optional: limits (one number or one per joint, per s,
                                            # s^2, s^3: velocity, acceleration, jerk), scales in
                                            # (0, 1] and max_deviation for PlanResult.trajectory

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
import json
import os
import re

import numpy as np
import yaml

from simdplan.collision.environment import Environment
from simdplan.planner.settings import PlannerSettings
from simdplan.robots import Robot
from simdplan.robots.ik import MASK_NAMES
from simdplan.scenes.files import EXTENSIONS, read_data
from simdplan.scenes.reading import (OBSTACLE_TYPES, TOP_KEYS, Reader, SceneError, add_obstacle,  # noqa: F401
                                     default_settings, describe, is_number, read_goal_pose, read_robot,
                                     read_settings, read_timing, settings_dict, suggest)

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_PATH = os.path.join(HERE, "schema.json")
EXAMPLES_DIR = os.path.join(HERE, "examples")
# ``save`` writes a mesh or hull without a file inline up to this many vertices, else beside the scene
# as an OBJ file (a YAML file of thousands of vertex rows takes seconds to parse).
INLINE_MESH_VERTICES = 1000


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
    file keep theirs in ``params["source"]``). timing: the file's ``timing`` section, keyword
    arguments of ``PlanResult.trajectory`` / ``simdplan.time_parameterize`` (``simdplan plan --timed``
    uses them; its flags override them). goal_poses: (4, 4) world poses of ``goal_link`` (default
    Robot.ik's) instead of goals (then (0, dof), or None), ``goal_mask`` as Robot.ik's mask: plans go to IK
    solutions of any of them (simdplan.plan's goal_pose).
    """

    robot: Robot
    env: Environment
    start: np.ndarray
    goals: np.ndarray
    settings: PlannerSettings = dataclasses.field(default_factory=default_settings)
    name: str = ""
    description: str = ""
    path: str | None = None
    robot_spec: str | dict | None = None
    problem: str | None = None
    index: int | None = None
    valid: bool | None = None
    cloud_files: dict = dataclasses.field(default_factory=dict)
    mesh_files: dict = dataclasses.field(default_factory=dict)
    timing: dict = dataclasses.field(default_factory=dict)
    goal_poses: list = dataclasses.field(default_factory=list)
    goal_link: str | None = None
    goal_mask: str | None = None

    def __post_init__(self) -> None:
        self.start = np.array(self.start, dtype=np.float64)
        dof = self.robot.dof
        no_goals = self.goals is None or np.size(self.goals) == 0
        goals = np.zeros((0, dof)) if self.goal_poses and no_goals else np.array(self.goals, dtype=np.float64)
        self.goals = goals.reshape(1, -1) if goals.ndim == 1 else goals
        if self.start.shape != (dof,):
            raise ValueError(f"start must have shape ({dof},), got {self.start.shape}")
        if self.goals.ndim != 2 or self.goals.shape[1] != dof or (len(self.goals) == 0 and not self.goal_poses):
            raise ValueError(f"goals must have shape (m, {dof}) with m >= 1, got {self.goals.shape}")
        if self.goal_poses and len(self.goals):
            raise ValueError("a scene has goal configurations or goal poses, not both")

    @property
    def goal(self) -> np.ndarray:
        """The first goal, (dof,) float64. ValueError for a scene with goal poses (it has none)."""
        if len(self.goals) == 0:
            raise ValueError(f"scene {self.name or self.path or 'unnamed'!r} has goal poses, not goal configurations: "
                             f"see scene.goal_poses ({len(self.goal_poses)} world poses of goal_link), and "
                             "result.stats['goal_configurations'] of a plan to them")
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
        if self.goal_poses:
            from simdplan.transforms import matrix_to_quat  # noqa: PLC0415

            out["goal_poses"] = [{"position": np.asarray(m)[:3, 3].tolist(),
                                  "quat": matrix_to_quat(np.asarray(m)[:3, :3]).tolist()} for m in self.goal_poses]
            if self.goal_link is not None:
                out["goal_link"] = self.goal_link
            if self.goal_mask is not None:
                out["goal_mask"] = self.goal_mask
        else:
            out["goals"] = self.goals.tolist()
        planner = settings_dict(self.settings)
        if planner:
            out["planner"] = planner
        if self.timing:
            out["timing"] = _plain(self.timing)
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


def load(path: str | os.PathLike, *, robot: Robot | None = None, robots: dict | None = None) -> Scene:
    """Read a scene file (``.yaml``, ``.yml`` or ``.json``): see the module docstring for the format.

    ``robot``: use this Robot instead of building the one the file names (the file's ``robot`` entry
    is still kept in ``scene.robot_spec``); useful when loading many scenes for one robot.
    ``robots``: a dict to pass to every call when loading many scenes: files naming the same robot
    (a built-in name, or the same URDF, SRDF and options) share one Robot, built once (a Robot
    takes ~0.3 s to build; planning many scenes of one Robot also compiles it only once).
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
        robot = read_robot(r, spec, os.path.dirname(path), cache=robots)
    elif not isinstance(robot, Robot):
        raise TypeError(f"robot must be a simdplan Robot or None, got {type(robot).__name__}")
    else:  # the entry is kept in robot_spec (and copied): check its form, which also bounds the copy
        read_robot(r, spec, os.path.dirname(path), build=False)

    env = Environment()
    obstacles = data.get("obstacles")
    obstacles = [] if obstacles is None else obstacles
    if not isinstance(obstacles, list):
        r.fail("obstacles", f"must be a list of obstacles, got {describe(obstacles)}")
    cloud_files: dict[int, str] = {}
    for i, ob in enumerate(obstacles):
        add_obstacle(r, env, ob, f"obstacles[{i}]", os.path.dirname(path), cloud_files)

    start = r.config(data["start"], robot, "start")
    given = [k for k in ("goal", "goals", "goal_pose", "goal_poses") if k in data]
    if given[:2] == ["goal", "goals"]:
        r.fail("goal", "give goal (one configuration) or goals (a list of them), not both")
    if len(given) > 1:
        r.fail(given[-1], f"give one of goal, goals (configurations), goal_pose or goal_poses (poses), not both "
                          f"{given[0]} and {given[-1]}")
    poses, goal_link, goal_mask = [], None, None
    for k in ("goal_link", "goal_mask"):
        if k in data and given and given[0] in ("goal", "goals"):
            r.fail(k, "applies to goal_pose / goal_poses only")
    if "goal_link" in data:
        goal_link = r.string(data["goal_link"], "goal_link")
        if goal_link not in robot.link_names:
            r.fail("goal_link", f"unknown link {goal_link!r}{suggest(goal_link, robot.link_names)}")
    if "goal_mask" in data:
        goal_mask = r.string(data["goal_mask"], "goal_mask")
        if goal_mask not in MASK_NAMES:
            r.fail("goal_mask", f"must be one of {', '.join(MASK_NAMES)}, got {goal_mask!r}")
    if "goal_pose" in data:
        poses = [read_goal_pose(r, data["goal_pose"], "goal_pose")]
        goals = []
    elif "goal_poses" in data:
        raw = data["goal_poses"]
        if not isinstance(raw, list) or not raw:
            r.fail("goal_poses", f"must be a non-empty list of poses, got {describe(raw)}")
        poses = [read_goal_pose(r, p, f"goal_poses[{i}]") for i, p in enumerate(raw)]
        goals = []
    elif "goal" in data:
        goals = [r.config(data["goal"], robot, "goal")]
    elif "goals" in data:
        raw = data["goals"]
        if not isinstance(raw, list) or not raw:
            r.fail("goals", f"must be a non-empty list of configurations, got {describe(raw)}")
        if all(is_number(v) for v in raw):
            r.fail("goals", "must be a list of configurations (a list of lists); for one goal write "
                            "goals: [[...]] or goal: [...]")
        goals = [r.config(g, robot, f"goals[{i}]") for i, g in enumerate(raw)]
    else:
        r.fail("goals", "missing (required: goals, a list of configurations, goal, one configuration, or "
                        "goal_pose / goal_poses)")

    settings = read_settings(r, data["planner"]) if "planner" in data and data["planner"] is not None \
        else default_settings()
    timing = read_timing(r, data["timing"], robot.dof) if data.get("timing") is not None else {}
    return Scene(robot=robot, env=env, start=start, goals=np.array(goals), settings=settings, name=name,
                 description=description, path=path, robot_spec=_plain(spec), cloud_files=cloud_files,
                 timing=timing, goal_poses=poses, goal_link=goal_link, goal_mask=goal_mask)


# ----------------------------------------------------------------------------- writing files


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
    raise ValueError(f"no shipped example scene {name!r}{suggest(stem, examples())}; "
                     f"available: {', '.join(examples())}")
