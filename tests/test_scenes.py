"""Scene files: shipped examples, save/load round trips, the schema, and clear errors for bad files.

Every error must name the file, the key path (``obstacles[3].half_extents``) and what is wrong.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
import math
import os
import shutil

import numpy as np
import pytest
import yaml

import simdplan
import simdplan.scenes as sc
from simdplan.planner.settings import PlannerSettings
from simdplan.scenes import Scene, SceneError

EXAMPLES = ["panda_bookshelf", "panda_bookshelf_cloud", "panda_cage", "panda_mesh_shelf", "panda_table", "ur5_table"]


@functools.lru_cache(maxsize=None)
def example_scene(name: str) -> Scene:
    return sc.load(sc.example(name))


def same_obstacles(a: simdplan.Environment, b: simdplan.Environment) -> None:
    """Same obstacles in the same order: kinds, names and numbers (quaternions up to sign)."""
    da, db = a.to_dicts(), b.to_dicts()
    assert [(d["type"], d["name"]) for d in da] == [(d["type"], d["name"]) for d in db]
    for x, y in zip(da, db):
        assert x.keys() == y.keys()
        for k in x:
            if k in ("type", "name"):
                continue
            if isinstance(x[k], str):  # a mesh's file
                assert x[k] == y[k], f"{x['name']}.{k}"
                continue
            vx, vy = np.asarray(x[k], float), np.asarray(y[k], float)
            if k == "quat" and np.dot(vx, vy) < 0:
                vy = -vy
            np.testing.assert_allclose(vx, vy, atol=1e-12, err_msg=f"{x['name']}.{k}")


def same_scene(a: Scene, b: Scene) -> None:
    same_obstacles(a.env, b.env)
    np.testing.assert_array_equal(a.start, b.start)
    np.testing.assert_array_equal(a.goals, b.goals)
    assert dataclasses.asdict(a.settings) == dataclasses.asdict(b.settings)
    assert (a.name, a.description) == (b.name, b.description)
    assert a.robot.joint_names == b.robot.joint_names


# ----------------------------------------------------------------------------- shipped examples


def test_examples_list_and_paths():
    assert sc.examples() == EXAMPLES
    for name in EXAMPLES:
        path = sc.example(name)
        assert os.path.isfile(path) and os.path.dirname(path) == sc.EXAMPLES_DIR
        assert sc.example(os.path.basename(path)) == path
    with pytest.raises(ValueError, match=r"panda_tabel.*did you mean 'panda_table'.*available: panda_bookshelf"):
        sc.example("panda_tabel")


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_loads_and_is_a_planning_problem(name):
    s = example_scene(name)
    assert isinstance(s.robot, simdplan.Robot) and isinstance(s.env, simdplan.Environment)
    assert s.start.shape == (s.robot.dof,) and s.start.dtype == np.float64
    assert s.goals.ndim == 2 and s.goals.shape[1] == s.robot.dof and s.goals.dtype == np.float64
    assert isinstance(s.settings, PlannerSettings) and s.settings.limit_tolerance is not None  # validated
    assert s.name == name and s.path == sc.example(name) and len(s.env) > 0
    assert s.robot_spec == name.split("_")[0]
    assert s.robot.is_valid(s.start, s.env), s.robot.why_invalid(s.start, s.env)
    for g in s.goals:
        assert s.robot.is_valid(g, s.env), s.robot.why_invalid(g, s.env)
        # the straight line is in collision: the problem needs a planner
        assert not s.robot.is_motion_valid(s.start, g, s.env)


@pytest.mark.parametrize("name, cls", [("panda_bookshelf", "bookshelf_small"), ("panda_cage", "cage")])
def test_mbm_examples_are_problem_1_with_exact_cylinders(name, cls):
    s = example_scene(name)
    (m,) = sc.mbm.load(classes=cls, indices=1, mode="exact", robot=s.robot)
    same_obstacles(s.env, m.env)
    np.testing.assert_array_equal(s.start, m.start)
    np.testing.assert_array_equal(s.goals, m.goals)


def test_top_level_exports():
    for attr in ("load", "save", "dumps", "Scene", "SceneError", "example", "examples", "mbm", "SCHEMA_PATH"):
        assert hasattr(sc, attr), attr
    assert issubclass(SceneError, ValueError)


# ----------------------------------------------------------------------------- the schema


def test_schema_is_draft_2020_12_and_lists_every_type_and_setting():
    with open(sc.SCHEMA_PATH) as f:
        schema = json.load(f)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    kinds = [rule["if"]["properties"]["type"]["const"] for rule in schema["$defs"]["obstacle"]["allOf"]]
    assert tuple(kinds) == sc.OBSTACLE_TYPES
    # the planner section lists exactly the PlannerSettings fields (update schema.json with the dataclass)
    props = schema["$defs"]["planner"]["properties"]
    assert set(props) == {f.name for f in dataclasses.fields(PlannerSettings)}
    # and documents the same defaults
    for f in dataclasses.fields(PlannerSettings):
        if "default" in props[f.name]:
            assert props[f.name]["default"] == f.default, f.name


def test_examples_and_saved_files_validate_against_the_schema(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    with open(sc.SCHEMA_PATH) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    for name in EXAMPLES:
        with open(sc.example(name)) as f:
            validator.validate(yaml.safe_load(f))
        for ext in ("yaml", "json"):
            out = sc.save(example_scene(name), tmp_path / f"{name}.{ext}")
            with open(out) as f:
                validator.validate(yaml.safe_load(f))
    # and it refuses what the loader refuses
    with open(sc.example("panda_table")) as f:
        good = yaml.safe_load(f)
    for mutate in (lambda d: d.pop("start"), lambda d: d.update(goalz=[]),
                   lambda d: d["obstacles"][0].pop("half_extents"),
                   lambda d: d["obstacles"][2].update(radius=-1.0), lambda d: d["planner"].update(seeed=1),
                   lambda d: d["obstacles"][0].update(quat=[0, 0, 0, 1], euler=[0, 0, 0])):
        bad = copy.deepcopy(good)
        mutate(bad)
        assert not validator.is_valid(bad)


POSE_GOAL_SCENE = """robot: panda
start: [0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7]
goal_pose: {position: [0.4, 0.1, 0.5], quat: [1, 0, 0, 0]}
goal_link: panda_hand
"""


@pytest.mark.parametrize("mask", ["pose", "position", "free_x", "free_y", "free_z"])
def test_scene_files_take_the_masks_simdplan_ik_takes(tmp_path, mask):
    from simdplan.cli.ik import MASKS as CLI_MASKS

    assert mask in CLI_MASKS
    with open(sc.SCHEMA_PATH) as f:
        assert json.load(f)["properties"]["goal_mask"]["enum"] == list(CLI_MASKS)
    path = tmp_path / "pose.yaml"
    path.write_text(POSE_GOAL_SCENE + f"goal_mask: {mask}\n")
    scene = sc.load(path)
    assert scene.goal_mask == mask and sc.load(sc.save(scene, tmp_path / "again.yaml")).goal_mask == mask
    jsonschema = pytest.importorskip("jsonschema")
    with open(sc.SCHEMA_PATH) as f:
        jsonschema.Draft202012Validator(json.load(f)).validate(yaml.safe_load(path.read_text()))


def test_goal_of_a_pose_goal_scene_says_where_its_goals_are(tmp_path):
    path = tmp_path / "pose.yaml"
    path.write_text(POSE_GOAL_SCENE)
    scene = sc.load(path)
    with pytest.raises(ValueError, match=r"has goal poses, not goal configurations: see scene.goal_poses"):
        scene.goal
    assert example_scene("panda_table").goal.shape == (7,)


# ----------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("ext", ["yaml", "yml", "json"])
@pytest.mark.parametrize("name", EXAMPLES)
def test_save_then_load_is_the_same_scene(tmp_path, name, ext):
    s = example_scene(name)
    path = sc.save(s, tmp_path / f"copy.{ext}")
    back = sc.load(path)
    same_scene(s, back)
    assert back.path == str(tmp_path / f"copy.{ext}") and back.robot_spec == s.robot_spec
    # checks agree on random configurations
    Q = np.random.default_rng(0).uniform(s.robot.lower, s.robot.upper, (200, s.robot.dof))
    np.testing.assert_array_equal(s.robot.is_valid_many(Q, s.env), back.robot.is_valid_many(Q, back.env))
    if ext == "json":
        with open(path) as f:
            json.load(f)  # plain JSON


def test_round_trip_keeps_non_default_settings_and_every_shape(tmp_path):
    robot = simdplan.robots.load("panda")
    env = simdplan.Environment()
    env.add_sphere([0.5, 0.1, 0.4], 0.05, name="ball")
    env.add_capsule([0.3, -0.4, 0.5], euler=[0.3, -0.2, 1.1], radius=0.03, length=0.0)
    env.add_cylinder([-0.3, 0.4, 0.2], [0, 0, 0.38268343236508984, 0.9238795325112867], 0.05, 0.3)
    env.add_box([0.6, 0.0, 0.1], half_extents=[0.2, 0.3, 0.1], name="table")
    env.add_plane([0, 0, 2.0], -0.1)
    settings = PlannerSettings(planner="prm", sampler="halton", seed=7, interpolate=64.0, balance=False,
                               padding=0.01, time_limit=0.0, max_iterations=5000).validated()
    s = Scene(robot, env, np.zeros(7), [[0.1] * 7, [0.2] * 7], settings, name="mine", robot_spec="panda")
    for ext in ("yaml", "json"):
        back = sc.load(sc.save(s, tmp_path / f"s.{ext}"))
        same_scene(s, back)
        assert back.settings.planner == "prm" and back.settings.interpolate == 64.0 and back.settings.balance is False
    text = sc.dumps(s)
    assert "planner: prm" in text and "range" not in text  # only non-default settings are written


def test_mbm_scene_round_trip(tmp_path):
    (m,) = sc.mbm.load(classes="box", indices=3, mode="reference")
    back = sc.load(sc.save(m, tmp_path / "box3.yaml"))
    same_scene(m, back)


def test_save_needs_a_robot_spec_and_a_known_extension(tmp_path):
    s = example_scene("panda_table")
    anonymous = dataclasses.replace(s, robot_spec=None)
    with pytest.raises(ValueError, match="robot_spec is not set"):
        sc.save(anonymous, tmp_path / "x.yaml")
    with pytest.raises(ValueError, match=r"x\.txt.*use \.yaml, \.yml or \.json"):
        sc.save(s, tmp_path / "x.txt")


def test_goal_and_single_goal_forms(tmp_path):
    d = base_scene()
    d["goal"] = d.pop("goals")[0]
    s = sc.load(write(tmp_path, d))
    assert s.goals.shape == (1, 7) and np.array_equal(s.goal, d["goal"])


def test_yaml_reads_exponents_without_a_dot(tmp_path):
    p = tmp_path / "e.yaml"
    d = base_scene()
    del d["planner"]
    p.write_text(yaml.safe_dump(d, sort_keys=False) + "planner: {padding: 1e-3, dd_alpha: 2E-4}\n")
    s = sc.load(p)
    assert s.settings.padding == 1e-3 and s.settings.dd_alpha == 2e-4


def test_robot_override_is_used_as_given(tmp_path):
    robot = simdplan.robots.load("panda")
    s = sc.load(sc.example("panda_cage"), robot=robot)
    assert s.robot is robot and s.robot_spec == "panda"


def test_scene_constructor_checks_shapes():
    robot = simdplan.robots.load("panda")
    with pytest.raises(ValueError, match=r"start must have shape \(7,\)"):
        Scene(robot, simdplan.Environment(), np.zeros(6), np.zeros((1, 7)))
    with pytest.raises(ValueError, match=r"goals must have shape \(m, 7\)"):
        Scene(robot, simdplan.Environment(), np.zeros(7), np.zeros((0, 7)))


# ----------------------------------------------------------------------------- Euler vs quaternion


def quat_mul(a, b):
    ax, ay, az, aw = a
    bx, by, bz, bw = b
    return [aw * bx + ax * bw + ay * bz - az * by, aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw, aw * bw - ax * bx - ay * by - az * bz]


def euler_to_quat(rx, ry, rz):
    """Extrinsic x-y-z: q = qz * qy * qx (independent of simdplan's own conversion)."""
    qx = [math.sin(rx / 2), 0, 0, math.cos(rx / 2)]
    qy = [0, math.sin(ry / 2), 0, math.cos(ry / 2)]
    qz = [0, 0, math.sin(rz / 2), math.cos(rz / 2)]
    return quat_mul(qz, quat_mul(qy, qx))


def test_euler_and_quat_give_the_same_scene(tmp_path):
    angles = [[0.3, -0.7, 1.2], [1.5, 0.2, -2.8], [0.0, 0.0, 0.4]]
    shapes = [{"type": "box", "position": [0.45, 0.1, 0.45], "half_extents": [0.05, 0.2, 0.1]},
              {"type": "cylinder", "position": [0.3, -0.35, 0.5], "radius": 0.06, "length": 0.5},
              {"type": "capsule", "position": [-0.2, 0.4, 0.6], "radius": 0.05, "length": 0.4}]
    with_euler, with_quat = base_scene(), base_scene()
    with_euler["obstacles"] = [dict(o, euler=e) for o, e in zip(shapes, angles)]
    with_quat["obstacles"] = [dict(o, quat=euler_to_quat(*e)) for o, e in zip(shapes, angles)]
    a = sc.load(write(tmp_path, with_euler, "euler.yaml"))
    b = sc.load(write(tmp_path, with_quat, "quat.json"))
    for x, y in zip(a.env, b.env):
        np.testing.assert_allclose(x.params["rotation"], y.params["rotation"], atol=1e-12)
    Q = np.random.default_rng(1).uniform(a.robot.lower, a.robot.upper, (500, 7))
    va = a.robot.is_valid_many(Q, a.env)
    np.testing.assert_array_equal(va, b.robot.is_valid_many(Q, b.env))
    assert 0 < va.sum() < len(va)


# ----------------------------------------------------------------------------- robots from URDF


@pytest.fixture
def panda_files(tmp_path):
    """A copy of the built-in panda folder (URDF, SRDF, meshes) under tmp_path/robot_files/panda."""
    urdf, srdf = simdplan.robots.builtin_paths("panda")
    dest = tmp_path / "robot_files" / "panda"
    shutil.copytree(os.path.dirname(urdf), dest)
    return dest / os.path.basename(urdf), dest / os.path.basename(srdf)


def test_relative_urdf_paths_resolve_against_the_scene_file(tmp_path, panda_files, monkeypatch):
    d = base_scene()
    d["robot"] = {"urdf": "../robot_files/panda/" + panda_files[0].name,
                  "srdf": "../robot_files/panda/" + panda_files[1].name}
    path = write(tmp_path / "scenes", d)
    monkeypatch.chdir(tmp_path / "robot_files")  # the working folder does not matter
    s = sc.load(path)
    builtin = simdplan.robots.load("panda")
    assert s.robot.joint_names == builtin.joint_names and s.robot.self_collision_pairs == builtin.self_collision_pairs
    q = np.array(d["start"])
    np.testing.assert_array_equal(s.robot.fk(q), builtin.fk(q))
    assert s.robot_spec == d["robot"]
    # saved elsewhere, the paths are rewritten relative to the new file
    os.makedirs(tmp_path / "elsewhere" / "deeper")
    out = sc.save(s, tmp_path / "elsewhere" / "deeper" / "copy.yaml")
    with open(out) as f:
        robot = yaml.safe_load(f)["robot"]
    assert robot["urdf"] == os.path.join("..", "..", "robot_files", "panda", panda_files[0].name)
    back = sc.load(out)
    same_scene(s, back)
    np.testing.assert_array_equal(back.robot.fk(q), builtin.fk(q))


def test_urdf_robot_options(tmp_path, panda_files):
    pose = np.eye(4)
    pose[:3, 3] = [0.1, -0.2, 0.3]
    d = base_scene()
    d["robot"] = {"urdf": str(panda_files[0]), "srdf": str(panda_files[1]),
                  "joints": [f"panda_joint{i}" for i in range(1, 7)], "fixed_joint_values": {"panda_joint7": 0.5},
                  "base_pose": pose.tolist()}
    d["start"] = d["start"][:6]
    d["goals"] = [g[:6] for g in d["goals"]]
    s = sc.load(write(tmp_path, d))
    assert s.robot.dof == 6 and s.start.shape == (6,)
    builtin = simdplan.robots.load("panda")
    np.testing.assert_allclose(s.robot.fk(s.start)[:, :3], builtin.fk(np.r_[s.start, 0.5])[:, :3] + [0.1, -0.2, 0.3],
                               atol=1e-5)
    os.makedirs(tmp_path / "sub")
    back = sc.load(sc.save(s, tmp_path / "sub" / "x.json"))
    same_scene(s, back)
    assert back.robot_spec["base_pose"] == pose.tolist()


# ----------------------------------------------------------------------------- errors


def base_scene() -> dict:
    """A small valid panda scene as plain data: obstacles[0] box, [1] sphere, [2] cylinder, [3] plane."""
    return {
        "name": "t",
        "robot": "panda",
        "obstacles": [
            {"type": "box", "name": "table", "position": [0.6, 0.0, 0.1], "half_extents": [0.2, 0.4, 0.1]},
            {"type": "sphere", "position": [0.0, 0.6, 0.5], "radius": 0.1},
            {"type": "cylinder", "position": [-0.5, 0.0, 0.3], "quat": [0, 0, 0, 1], "radius": 0.05, "length": 0.6},
            {"type": "plane", "normal": [0, 0, 1], "offset": -0.04},
        ],
        "start": [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785],
        "goals": [[0.5, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7], [-0.5, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7]],
        "planner": {"planner": "rrtc", "seed": 3},
    }


def write(folder, data, name="scene.yaml") -> str:
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        if name.endswith(".json"):
            json.dump(data, f)
        else:
            yaml.safe_dump(data, f, sort_keys=False)
    return path


def test_base_scene_loads(tmp_path):
    s = sc.load(write(tmp_path, base_scene()))
    assert len(s.env) == 4 and s.settings.seed == 3 and s.name == "t"


def _set(path, value):
    """A mutation of base_scene: set the value at a key path (a list of keys/indices)."""
    def mutate(d):
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = value
    return mutate


def _drop(path):
    def mutate(d):
        for k in path[:-1]:
            d = d[k]
        del d[path[-1]]
    return mutate


NAN = float("nan")

# (id, mutation of base_scene, expected key path, words the message must contain)
BAD = [
    ("missing robot", _drop(["robot"]), "robot", "missing"),
    ("missing start", _drop(["start"]), "start", "missing"),
    ("missing goals", _drop(["goals"]), "goals", "missing"),
    ("unknown top key", _set(["strat"], []), "strat",
     "unknown key (did you mean 'start'?); allowed: name, description, robot, obstacles, start, goals, goal, planner"),
    ("goal and goals", _set(["goal"], [0.0] * 7), "goal", "not both"),
    ("goals flat", _set(["goals"], [0.0] * 7), "goals", "list of lists"),
    ("goals empty", _set(["goals"], []), "goals", "non-empty"),
    ("start text", _set(["start"], "home"), "start", "must be a list of 7 joint values, got a string 'home'"),
    ("start short", _set(["start"], [0.0] * 6), "start", "has 6 values but robot 'panda' has 7 joints"),
    ("goal long", _set(["goals", 1], [0.0] * 8), "goals[1]", "has 8 values"),
    ("start nan", _set(["start", 2], NAN), "start[2]", "must be finite"),
    ("start bool", _set(["start", 0], True), "start[0]", "must be a number, got a boolean"),
    ("goal text", _set(["goals", 0, 3], "x"), "goals[0][3]", "must be a number"),
    ("unknown robot", _set(["robot"], "pand"), "robot", "unknown robot 'pand' (did you mean 'panda'?)"),
    ("robot number", _set(["robot"], 5), "robot", "built-in robot name"),
    ("robot without urdf", _set(["robot"], {"srdf": "x.srdf"}), "robot.urdf", "missing"),
    ("robot unknown key", _set(["robot"], {"urdf": "x.urdf", "mesh": 1}), "robot.mesh", "unknown key"),
    ("obstacles not list", _set(["obstacles"], {"type": "box"}), "obstacles", "must be a list"),
    ("obstacle not mapping", _set(["obstacles", 1], [1, 2]), "obstacles[1]", "must be a mapping"),
    ("no type", _drop(["obstacles", 1, "type"]), "obstacles[1].type", "missing"),
    ("unknown type", _set(["obstacles", 1, "type"], "torus"), "obstacles[1].type",
     "unknown obstacle type 'torus'; supported: sphere, capsule, cylinder, box, plane, pointcloud, mesh, convex"),
    ("misspelt type", _set(["obstacles", 1, "type"], "convx"), "obstacles[1].type", "(did you mean 'convex'?)"),
    ("unknown obstacle key", _set(["obstacles", 0, "radius"], 0.1), "obstacles[0].radius", "unknown key for a box"),
    ("missing half_extents", _drop(["obstacles", 0, "half_extents"]), "obstacles[0].half_extents", "missing"),
    ("half_extents length", _set(["obstacles", 0, "half_extents"], [0.1, 0.2]), "obstacles[0].half_extents",
     "must have 3 values, got 2"),
    ("negative half_extents", _set(["obstacles", 0, "half_extents", 1], -0.4), "obstacles[0].half_extents", "> 0"),
    ("negative radius", _set(["obstacles", 1, "radius"], -0.1), "obstacles[1].radius", "> 0"),
    ("radius text", _set(["obstacles", 1, "radius"], "big"), "obstacles[1].radius", "must be a number, got a string"),
    ("position nan", _set(["obstacles", 1, "position", 0], NAN), "obstacles[1].position[0]", "must be finite"),
    ("zero cylinder", _set(["obstacles", 2, "length"], 0.0), "obstacles[2].length", "> 0"),
    ("bad quat", _set(["obstacles", 2, "quat"], [0, 0, 0, 2]), "obstacles[2].quat", "unit quaternion"),
    ("quat and euler", _set(["obstacles", 2, "euler"], [0, 0, 0]), "obstacles[2]", "not both"),
    ("zero normal", _set(["obstacles", 3, "normal"], [0, 0, 0]), "obstacles[3].normal", "non-zero"),
    ("name not text", _set(["obstacles", 3, "name"], 3), "obstacles[3].name", "must be a string"),
    ("unknown setting", _set(["planner", "seeed"], 1), "planner.seeed",
     "unknown planner setting (did you mean 'seed'?)"),
    ("bad planner", _set(["planner", "planner"], "astar"), "planner.planner", "must be one of rrtc"),
    ("negative time", _set(["planner", "time_limit"], -1.0), "planner.time_limit", ">= 0"),
    ("bool as text", _set(["planner", "balance"], "yes"), "planner.balance", "must be true/false"),
    ("int not integral", _set(["planner", "max_iterations"], 10.5), "planner.max_iterations", "integer"),
    ("null setting", _set(["planner", "seed"], None), "planner.seed", "must not be null"),
    ("planner not mapping", _set(["planner"], "rrtc"), "planner", "must be a mapping"),
    ("name number", _set(["name"], 3), "name", "must be a string"),
]


def load_error(path, key, words) -> SceneError:
    """The SceneError loading path raises, checked to name the file, the key path and the problem."""
    with pytest.raises(SceneError) as info:
        sc.load(path)
    err = info.value
    assert (err.file, err.key) == (path, key), str(err)
    assert str(err).startswith(f"{path}: {key}: "), str(err)
    assert words in str(err), str(err)
    return err


@pytest.mark.parametrize("case", BAD, ids=[c[0] for c in BAD])
@pytest.mark.parametrize("ext", ["yaml", "json"])
def test_bad_scene_names_file_and_key(tmp_path, case, ext):
    _, mutate, key, words = case
    d = base_scene()
    mutate(d)
    path = write(tmp_path, d, f"bad.{ext}")
    load_error(path, key, words)


@pytest.mark.parametrize("text, ext, words", [
    ("robot: panda\nstart: [0, 0\n", "yaml", "malformed YAML at line 3"),
    ("robot: panda\n  start: 1\n", "yaml", "malformed YAML at line 2"),
    ("robot: panda\nrobot: ur5\nstart: []\n", "yaml", "duplicate key 'robot'"),
    ('{"robot": "panda", "start": [0, 0}', "json", "malformed JSON at line 1"),
    ('{"robot": "panda", "robot": "ur5"}', "json", "duplicate key 'robot'"),
    ("", "yaml", "the file is empty"),
    ("- robot\n- start\n", "yaml", "(top level): must be a mapping"),
])
def test_malformed_files(tmp_path, text, ext, words):
    path = tmp_path / f"bad.{ext}"
    path.write_text(text)
    with pytest.raises(SceneError) as info:
        sc.load(path)
    assert str(info.value).startswith(str(path)) and words in str(info.value), str(info.value)


def test_missing_files(tmp_path):
    missing = tmp_path / "nope.yaml"
    with pytest.raises(FileNotFoundError, match="scene file not found") as info:
        sc.load(missing)
    assert str(missing) in str(info.value)
    d = base_scene()
    d["robot"] = {"urdf": "robots/mine.urdf"}
    path = write(tmp_path, d)
    with pytest.raises(FileNotFoundError) as info:
        sc.load(path)
    msg = str(info.value)
    assert path in msg and "robot.urdf" in msg and str(tmp_path / "robots" / "mine.urdf") in msg
    (tmp_path / "x.txt").write_text("robot: panda\n")
    with pytest.raises(SceneError, match=r"unknown scene file extension '\.txt'"):
        sc.load(tmp_path / "x.txt")


@pytest.mark.parametrize("robot, key, words", [
    ({"joints": ["panda_joint1", "panda_jointX"]}, "robot.joints", "panda_jointX"),
    ({"base_pose": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}, "robot.base_pose", "4x4 matrix"),
    ({"base_pose": (2 * np.eye(4)).tolist()}, "robot.base_pose", "not a proper rotation"),
    ({"joints": [f"panda_joint{i}" for i in range(1, 7)], "fixed_joint_values": {"panda_joint7": 9.0}},
     "robot.fixed_joint_values", "outside its limits"),
    ({"fixed_joint_values": {"panda_joint7": "a"}}, "robot.fixed_joint_values.panda_joint7", "must be a number"),
])
def test_bad_urdf_robot_entries(tmp_path, panda_files, robot, key, words):
    d = base_scene()
    d["robot"] = {"urdf": str(panda_files[0]), **robot}
    path = write(tmp_path, d)
    with pytest.raises(SceneError) as info:
        sc.load(path)
    assert info.value.key == key and words in str(info.value) and path in str(info.value), str(info.value)


def test_malformed_urdf_is_reported_at_robot_urdf(tmp_path):
    (tmp_path / "broken.urdf").write_text("<robot name='x'><link name='a'>")
    d = base_scene()
    d["robot"] = {"urdf": "broken.urdf"}
    with pytest.raises(SceneError) as info:
        sc.load(write(tmp_path, d))
    assert info.value.key == "robot.urdf" and "broken.urdf" in str(info.value)


# ----------------------------------------------------------------------------- meshes and convex hulls

TETRA = [[0.0, 0.0, 0.0], [0.2, 0.0, 0.0], [0.0, 0.2, 0.0], [0.0, 0.0, 0.2]]
TETRA_FACES = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]


def rotation_from_quat(q):
    """(3, 3) from [x, y, z, w] (independent of simdplan's conversion)."""
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


@pytest.fixture
def mesh_files(tmp_path):
    """A 0.2 x 0.4 x 0.6 box as STL, OBJ and PLY under tmp_path/meshes, plus its (vertices, faces)."""
    import trimesh

    box = trimesh.creation.box((0.2, 0.4, 0.6))
    os.makedirs(tmp_path / "meshes")
    for ext in ("stl", "obj", "ply"):
        box.export(tmp_path / "meshes" / f"box.{ext}")
    return tmp_path / "meshes", np.asarray(box.vertices), np.asarray(box.faces)


def mesh_scene(obstacles) -> dict:
    d = base_scene()
    d["obstacles"] = obstacles
    return d


def test_mesh_and_convex_obstacles_from_files_and_inline(tmp_path, mesh_files):
    folder, box_v, box_f = mesh_files
    euler = [0.3, -0.2, 0.9]
    obstacles = [
        {"type": "mesh", "name": "stl", "file": "meshes/box.stl", "position": [0.5, 0.1, 0.3], "euler": euler},
        {"type": "mesh", "name": "obj", "file": "meshes/box.obj", "scale": [1.0, 0.5, 2.0]},
        {"type": "mesh", "name": "ply", "file": str(folder / "box.ply"), "position": [0.0, 0.0, 1.0], "scale": 0.5},
        {"type": "mesh", "name": "tetra", "vertices": TETRA, "faces": TETRA_FACES, "quat": euler_to_quat(*euler)},
        {"type": "convex", "name": "hull_points", "points": TETRA + [[0.05, 0.05, 0.05]], "position": [1, 2, 3]},
        {"type": "convex", "name": "hull_file", "file": "meshes/box.stl", "scale": 2.0, "euler": euler},
        {"type": "convex", "name": "hull_inline", "vertices": TETRA, "faces": TETRA_FACES},
        {"type": "convex", "name": "hull_box", "vertices": box_v.tolist(), "faces": box_f.tolist()},  # 8 and 12
    ]
    s = sc.load(write(tmp_path, mesh_scene(obstacles)))
    obs = {o.name: o for o in s.env}
    assert [o.kind for o in s.env] == ["mesh"] * 4 + ["convex"] * 4
    R = rotation_from_quat(euler_to_quat(*euler))
    # files are read relative to the scene file's folder, and the pose and scale are applied
    stl = obs["stl"].params
    assert stl["source"] == str(folder / "box.stl")
    world = stl["local_vertices"] @ R.T + [0.5, 0.1, 0.3]
    np.testing.assert_allclose(stl["vertices"], world, atol=1e-12)
    assert len(stl["faces"]) == len(box_f)
    obj = obs["obj"].params
    lo, hi = obj["vertices"].min(axis=0), obj["vertices"].max(axis=0)
    np.testing.assert_allclose(hi - lo, [0.2, 0.2, 1.2], atol=1e-9)
    ply = obs["ply"].params
    np.testing.assert_allclose(ply["vertices"].min(axis=0), [-0.05, -0.1, 0.85], atol=1e-9)
    # inline: an orientation without a position turns about the origin
    np.testing.assert_allclose(obs["tetra"].params["vertices"], np.array(TETRA) @ R.T, atol=1e-12)
    np.testing.assert_array_equal(obs["tetra"].params["faces"], TETRA_FACES)
    # hulls: the inner point is dropped, the pose applies
    hp = obs["hull_points"].params
    assert len(hp["local_vertices"]) == 4 and len(hp["faces"]) == 4
    np.testing.assert_allclose(np.sort(hp["vertices"], axis=0), np.sort(np.array(TETRA) + [1, 2, 3], axis=0), atol=1e-6)
    hf = obs["hull_file"].params
    np.testing.assert_allclose(np.abs(hf["local_vertices"]), np.tile([0.2, 0.4, 0.6], (8, 1)), atol=1e-6)
    assert hf["source"] == str(folder / "box.stl")
    assert len(obs["hull_inline"].params["local_vertices"]) == 4
    np.testing.assert_allclose(np.sort(obs["hull_box"].params["vertices"], axis=0), np.sort(box_v, axis=0), atol=1e-7)


def test_mesh_obstacles_round_trip(tmp_path, mesh_files):
    folder, _, _ = mesh_files
    obstacles = [
        {"type": "mesh", "name": "shelf", "file": "../meshes/box.obj", "position": [0.5, 0.1, 0.3],
         "euler": [0.1, 0.2, 0.3], "scale": [1.0, 2.0, 0.5]},
        {"type": "mesh", "name": "tri", "vertices": TETRA, "faces": TETRA_FACES, "scale": 2.0},
        {"type": "convex", "name": "rock", "points": TETRA + [[0.05, 0.05, 0.05]], "position": [0.6, 0, 0.2],
         "quat": euler_to_quat(0.4, 0.0, -0.3)},
        {"type": "convex", "name": "crate", "file": str(folder / "box.stl"), "scale": 0.5},
        {"type": "box", "position": [0.6, 0.0, 0.1], "half_extents": [0.2, 0.3, 0.1]},
    ]
    s = sc.load(write(tmp_path / "a", mesh_scene(obstacles)))
    os.makedirs(tmp_path / "b" / "c")
    for ext in ("yaml", "json"):
        out = sc.save(s, tmp_path / "b" / "c" / f"copy.{ext}")
        with open(out) as f:
            written = yaml.safe_load(f)["obstacles"]
        # file paths relative to the new file, scale and pose kept; inline arrays written as lists
        assert written[0]["file"] == os.path.join("..", "..", "meshes", "box.obj")
        assert written[0]["scale"] == [1.0, 2.0, 0.5] and "position" in written[0] and "quat" in written[0]
        assert written[1]["faces"] == TETRA_FACES and np.allclose(written[1]["vertices"], 2 * np.array(TETRA))
        assert "scale" not in written[1] and "position" not in written[1]  # the scale is in the vertices
        assert len(written[2]["points"]) == 4 and "faces" not in written[2]  # a hull is written as its points
        assert written[3]["file"] == os.path.join("..", "..", "meshes", "box.stl") and written[3]["scale"] == 0.5
        back = sc.load(out)
        same_scene(s, back)
        for x, y in zip(s.env, back.env):
            if x.kind in ("mesh", "convex"):
                np.testing.assert_allclose(x.params["vertices"], y.params["vertices"], rtol=0, atol=1e-12)
                np.testing.assert_array_equal(x.params["faces"], y.params["faces"])
                assert x.params["source"] == y.params["source"]
    # without relative_to the file paths are absolute
    d = s.to_dict()
    assert d["obstacles"][0]["file"] == str(folder / "box.obj")


def test_big_inline_meshes_are_saved_beside_the_scene(tmp_path):
    import trimesh

    robot = simdplan.robots.load("panda")
    env = simdplan.Environment()
    ball = trimesh.creation.icosphere(subdivisions=4, radius=0.1)  # 2562 vertices
    big = env.add_mesh(ball, [0.5, 0.0, 0.5], euler=[0.1, 0.2, 0.3], scale=[1.0, 2.0, 0.5], name="ball scan")
    pts = np.random.default_rng(0).normal(size=(1500, 3))
    rock = env.add_convex(pts / np.linalg.norm(pts, axis=1, keepdims=True), [0.0, 0.6, 0.3], scale=0.1, name="rock")
    small = env.add_convex(TETRA, name="small")
    s = Scene(robot, env, np.zeros(7), [[0.1] * 7], robot_spec="panda")
    out = sc.save(s, tmp_path / "big.yaml")
    assert sorted(os.listdir(tmp_path)) == ["big.ball_scan.obj", "big.rock.obj", "big.yaml"]
    assert s.mesh_files == {big: str(tmp_path / "big.ball_scan.obj"), rock: str(tmp_path / "big.rock.obj")}
    assert os.path.getsize(out) < 2000  # the small hull stays inline
    with open(out) as f:
        written = yaml.safe_load(f)["obstacles"]
    assert written[0]["file"] == "big.ball_scan.obj" and "scale" not in written[0]  # the scale is in the file
    assert written[1]["file"] == "big.rock.obj" and len(written[2]["points"]) == 4
    back = sc.load(out)
    for x, y in zip(s.env, back.env):
        assert (x.kind, x.name) == (y.kind, y.name)
        np.testing.assert_allclose(x.params["vertices"], y.params["vertices"], rtol=0, atol=1e-12)
        np.testing.assert_array_equal(x.params["faces"], y.params["faces"])
    assert back.env[small].params["source"] is None
    # saved again elsewhere, the written files are referred to, not written again
    os.makedirs(tmp_path / "sub")
    again = sc.save(s, tmp_path / "sub" / "again.json")
    assert sorted(os.listdir(tmp_path / "sub")) == ["again.json"]
    with open(again) as f:
        assert json.load(f)["obstacles"][0]["file"] == os.path.join("..", "big.ball_scan.obj")


def test_mesh_file_may_be_absolute_or_in_a_parent_folder(tmp_path, mesh_files):
    folder, _, _ = mesh_files
    a = sc.load(write(tmp_path / "scenes", mesh_scene([{"type": "mesh", "file": "../meshes/box.stl"}])))
    b = sc.load(write(tmp_path, mesh_scene([{"type": "mesh", "file": str(folder / "box.stl")}])))
    (oa,), (ob,) = list(a.env), list(b.env)
    assert oa.params["source"] == ob.params["source"] == str(folder / "box.stl")
    np.testing.assert_array_equal(oa.params["vertices"], ob.params["vertices"])


# (id, obstacles[2], expected key path, words the message must contain); files are under tmp_path/meshes
BAD_MESHES = [
    ("no source", {"type": "mesh"}, "obstacles[2].file", "missing: a mesh needs file"),
    ("convex no source", {"type": "convex", "position": [0, 0, 0]}, "obstacles[2].file", "file (a mesh file), points"),
    ("missing file", {"type": "mesh", "file": "meshes/nope.stl"}, "obstacles[2].file", "mesh file not found"),
    ("folder as file", {"type": "mesh", "file": "meshes"}, "obstacles[2].file", "is a folder"),
    ("empty file name", {"type": "mesh", "file": ""}, "obstacles[2].file", "must not be empty"),
    ("file not text", {"type": "mesh", "file": 3}, "obstacles[2].file", "must be a string"),
    ("garbage stl", {"type": "mesh", "file": "meshes/garbage.stl"}, "obstacles[2].file", "holds no triangles"),
    ("garbage ply", {"type": "convex", "file": "meshes/garbage.ply"}, "obstacles[2].file", "could not read a mesh"),
    ("unknown format", {"type": "mesh", "file": "meshes/notes.txt"}, "obstacles[2].file", "not a mesh file format trimesh reads"),
    ("flat file hull", {"type": "convex", "file": "meshes/flat.obj"}, "obstacles[2].file", "coplanar"),
    ("file and vertices", {"type": "mesh", "file": "meshes/box.stl", "vertices": TETRA, "faces": TETRA_FACES},
     "obstacles[2]", "give one of file or vertices + faces, not file and vertices"),
    ("points and file", {"type": "convex", "file": "meshes/box.stl", "points": TETRA}, "obstacles[2]",
     "not file and points"),
    ("vertices without faces", {"type": "mesh", "vertices": TETRA}, "obstacles[2].faces", "missing"),
    ("convex vertices without faces", {"type": "convex", "vertices": TETRA}, "obstacles[2].faces", "write points"),
    ("faces without vertices", {"type": "mesh", "faces": TETRA_FACES}, "obstacles[2].vertices", "missing"),
    ("face out of range", {"type": "mesh", "vertices": TETRA, "faces": [[0, 1, 2], [1, 2, 4]]},
     "obstacles[2].faces[1][2]", "vertex index 4 is out of range: there are 4 vertices, numbered 0 to 3"),
    ("negative face", {"type": "mesh", "vertices": TETRA, "faces": [[0, -1, 2]]}, "obstacles[2].faces[0][1]",
     "out of range"),
    ("face not integer", {"type": "mesh", "vertices": TETRA, "faces": [[0, 1.0, 2]]}, "obstacles[2].faces[0][1]",
     "must be an integer vertex index"),
    ("face of two", {"type": "mesh", "vertices": TETRA, "faces": [[0, 1]]}, "obstacles[2].faces[0]",
     "must have 3 vertex indices"),
    ("faces flat", {"type": "mesh", "vertices": TETRA, "faces": [0, 1, 2]}, "obstacles[2].faces",
     "list of triangles"),
    ("vertex of two", {"type": "mesh", "vertices": [[0, 0], [1, 0, 0], [0, 1, 0]], "faces": [[0, 1, 2]]},
     "obstacles[2].vertices[0]", "must have 3 values"),
    ("vertex nan", {"type": "mesh", "vertices": [[0, 0, NAN], [1, 0, 0], [0, 1, 0]], "faces": [[0, 1, 2]]},
     "obstacles[2].vertices[0][2]", "must be finite"),
    ("two vertices", {"type": "mesh", "vertices": [[0, 0, 0], [1, 0, 0]], "faces": [[0, 1, 1]]},
     "obstacles[2].vertices", "at least 3 vertices"),
    ("three points", {"type": "convex", "points": TETRA[:3]}, "obstacles[2].points", "at least 4 points, got 3"),
    ("coplanar points", {"type": "convex", "points": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [0.5, 0.2, 0]]},
     "obstacles[2].points", "flat (coplanar)"),
    ("points not rows", {"type": "convex", "points": [0, 0, 0, 1]}, "obstacles[2].points", "list of points"),
    ("negative scale", {"type": "mesh", "file": "meshes/box.stl", "scale": -1.0}, "obstacles[2].scale",
     "must be > 0, got -1.0"),
    ("zero scale axis", {"type": "convex", "points": TETRA, "scale": [1.0, 0.0, 1.0]}, "obstacles[2].scale[1]",
     "must be > 0"),
    ("scale of two", {"type": "mesh", "file": "meshes/box.stl", "scale": [1.0, 2.0]}, "obstacles[2].scale",
     "must have 3 values"),
    ("scale text", {"type": "mesh", "file": "meshes/box.stl", "scale": "big"}, "obstacles[2].scale",
     "must be a number > 0 or a list of 3"),
    ("quat and euler", {"type": "mesh", "file": "meshes/box.stl", "quat": [0, 0, 0, 1], "euler": [0, 0, 0]},
     "obstacles[2]", "not both"),
    ("bad quat", {"type": "convex", "points": TETRA, "position": [0, 0, 0], "quat": [0, 0, 0, 2]},
     "obstacles[2].quat", "unit quaternion"),
    ("position short", {"type": "mesh", "file": "meshes/box.stl", "position": [0, 0]}, "obstacles[2].position",
     "must have 3 values"),
    ("unknown key", {"type": "mesh", "file": "meshes/box.stl", "radius": 0.1}, "obstacles[2].radius",
     "unknown key for a mesh"),
    ("points on a mesh", {"type": "mesh", "points": TETRA}, "obstacles[2].points", "unknown key for a mesh"),
]


@pytest.mark.parametrize("case", BAD_MESHES, ids=[c[0] for c in BAD_MESHES])
@pytest.mark.parametrize("ext", ["yaml", "json"])
def test_bad_mesh_obstacles_name_file_and_key(tmp_path, mesh_files, case, ext):
    folder, _, _ = mesh_files
    (folder / "garbage.stl").write_text("not a mesh\n")
    (folder / "garbage.ply").write_text("not a mesh either\n")
    (folder / "notes.txt").write_text("v 0 0 0\n")
    (folder / "flat.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nf 1 2 3\nf 2 4 3\n")
    _, spec, key, words = case
    d = base_scene()
    d["obstacles"][2] = spec
    path = write(tmp_path, d, f"bad.{ext}")
    err = load_error(path, key, words)
    if "file" in spec and isinstance(spec["file"], str) and spec["file"] and case[0] != "folder as file" \
            and key == "obstacles[2].file":
        assert str(tmp_path / spec["file"]) in str(err)  # the file's full path


def test_schema_takes_mesh_and_convex_forms():
    jsonschema = pytest.importorskip("jsonschema")
    with open(sc.SCHEMA_PATH) as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    good = [
        {"type": "mesh", "file": "meshes/a.stl"},
        {"type": "mesh", "file": "a.obj", "position": [0, 0, 0], "euler": [0, 0, 1], "scale": [1, 2, 3], "name": "x"},
        {"type": "mesh", "vertices": TETRA, "faces": TETRA_FACES, "quat": [0, 0, 0, 1], "scale": 0.5},
        {"type": "convex", "points": TETRA},
        {"type": "convex", "file": "a.ply", "scale": 2},
        {"type": "convex", "vertices": TETRA, "faces": TETRA_FACES, "position": [1, 2, 3]},
    ]
    bad = [
        {"type": "mesh"},
        {"type": "mesh", "file": "a.stl", "vertices": TETRA, "faces": TETRA_FACES},
        {"type": "mesh", "vertices": TETRA},
        {"type": "mesh", "file": "a.stl", "scale": -1},
        {"type": "mesh", "file": "a.stl", "scale": [1, 0, 1]},
        {"type": "mesh", "file": "a.stl", "quat": [0, 0, 0, 1], "euler": [0, 0, 0]},
        {"type": "mesh", "vertices": TETRA, "faces": [[0, 1]]},
        {"type": "mesh", "vertices": TETRA, "faces": [[0, 1, -2]]},
        {"type": "mesh", "points": TETRA},
        {"type": "convex", "points": TETRA[:3]},
        {"type": "convex", "points": TETRA, "file": "a.stl"},
        {"type": "convex", "vertices": TETRA},
        {"type": "convex"},
    ]
    for ob in good:
        assert validator.is_valid(mesh_scene([ob])), ob
    for ob in bad:
        assert not validator.is_valid(mesh_scene([ob])), ob


def test_mesh_example_ships_its_mesh_file():
    assert "panda_mesh_shelf" in sc.examples()
    s = example_scene("panda_mesh_shelf")
    kinds = [o.kind for o in s.env]
    assert "mesh" in kinds and "convex" in kinds
    (shelf,) = [o for o in s.env if o.kind == "mesh"]
    src = shelf.params["source"]
    assert src == os.path.join(sc.EXAMPLES_DIR, "meshes", "shelf.obj") and os.path.isfile(src)
    assert os.path.getsize(src) < 50_000
    assert len(shelf.params["faces"]) == 72  # six boxes
    (block,) = [o for o in s.env if o.kind == "convex"]
    assert len(block.params["local_vertices"]) == 8
    # the scene is loaded the same from any working folder (the mesh path is relative to the file)
    cwd = os.getcwd()
    try:
        os.chdir(os.path.dirname(sc.SCHEMA_PATH) + os.sep + "..")
        again = sc.load(sc.example("panda_mesh_shelf"))
    finally:
        os.chdir(cwd)
    same_scene(s, again)


def test_mesh_example_plans():
    """A plan around the shelf; every edge of the path is collision-free (needs the mesh and convex checks)."""
    s = example_scene("panda_mesh_shelf")
    result = simdplan.plan(s.robot, s.env, s.start, s.goals, seed=0, time_limit=5)
    assert result.success
    path = np.asarray(result.path)
    np.testing.assert_allclose(path[0], s.start, atol=1e-9)
    assert np.min(np.abs(s.goals - path[-1]).max(axis=1)) < 1e-9
    for a, b in zip(path[:-1], path[1:]):
        assert s.robot.is_motion_valid(a, b, s.env)
