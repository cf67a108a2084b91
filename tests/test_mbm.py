"""MotionBenchMaker import: all 700 shipped panda problems, both cylinder modes, filters, joint order.

The file's ``valid`` flags (start valid and some goal valid, under the reference model) must be
reproduced exactly in both modes.
"""

from __future__ import annotations

import copy
import functools
import json

import numpy as np
import pytest

import simdplan
from simdplan.scenes import SceneError, mbm

CLASSES = ["bookshelf_thin", "cage", "box", "bookshelf_tall", "bookshelf_small", "table_under_pick", "table_pick"]


@functools.lru_cache(maxsize=None)
def raw() -> dict:
    with open(mbm.DEFAULT_PATH) as f:
        return json.load(f)


@functools.lru_cache(maxsize=None)
def all_scenes(mode: str):
    """Every problem, loaded once per mode for the module."""
    return mbm.load(mode=mode)


@pytest.mark.parametrize("mode", ["exact", "reference"])
def test_all_700_problems_load(mode):
    scenes = all_scenes(mode)
    assert len(scenes) == 700
    assert [s.problem for s in scenes[::100]] == CLASSES
    assert len({id(s.robot) for s in scenes}) == 1  # one Robot, loaded once
    robot = scenes[0].robot
    assert robot.name == "panda" and robot.dof == 7
    assert len({s.name for s in scenes}) == 700
    for s in scenes:
        prob = raw()["problems"][s.problem][s.index - 1]
        assert prob["index"] == s.index and s.name == f"{s.problem}_{s.index}"
        assert s.valid is prob["valid"] and s.robot_spec == "panda" and s.path == mbm.DEFAULT_PATH
        np.testing.assert_array_equal(s.start, prob["start"])
        np.testing.assert_array_equal(s.goals, prob["goals"])
        assert s.goals.shape == (len(prob["goals"]), 7) and s.start.dtype == np.float64
        assert len(s.env) == len(prob["sphere"]) + len(prob["cylinder"]) + len(prob["box"])


@pytest.mark.parametrize("mode", ["exact", "reference"])
def test_validity_flags_are_reproduced(mode):
    mismatches = []
    for s in all_scenes(mode):
        ok = s.robot.is_valid(s.start, s.env) and bool(s.robot.is_valid_many(s.goals, s.env).any())
        if ok != s.valid:
            mismatches.append(s.name)
    assert mismatches == []
    assert sum(not s.valid for s in all_scenes(mode)) == 1  # the file has one invalid problem


def test_modes_model_cylinders_as_documented():
    exact, ref = all_scenes("exact"), all_scenes("reference")
    n_cyl = 0
    for e, r in zip(exact, ref):
        assert (e.problem, e.index) == (r.problem, r.index)
        cylinders = [o for o in e.env if o.kind == "cylinder"]
        n_cyl += len(cylinders)
        assert all(o.kind != "cylinder" for o in r.env)
        by_name = {o.name: o for o in r.env}
        for c in cylinders:
            o = by_name[c.name]
            np.testing.assert_array_equal(o.params["position"], c.params["position"])
            np.testing.assert_allclose(o.params["rotation"], c.params["rotation"])
            rad, length = c.params["radius"], c.params["length"]
            if e.problem == "box":
                assert o.kind == "box"
                np.testing.assert_array_equal(o.params["half_extents"], [rad, rad, length / 2])
            else:
                assert o.kind == "capsule" and (o.params["radius"], o.params["length"]) == (rad, length)
    assert n_cyl > 500


def test_reference_obstacles_contain_the_exact_ones():
    """A capsule (or the box) contains its cylinder: a configuration clear of the reference
    obstacles is clear of the exact ones (checked on random configurations)."""
    exact, ref = all_scenes("exact"), all_scenes("reference")
    rng = np.random.default_rng(0)
    robot = exact[0].robot
    differ = 0
    for i in range(0, 700, 25):
        # around the goals, which grasp near the cylinders, and uniformly
        Q = np.r_[exact[i].goals[0] + rng.normal(0, 0.15, (200, 7)), rng.uniform(robot.lower, robot.upper, (100, 7))]
        ve, vr = robot.is_valid_many(Q, exact[i].env), robot.is_valid_many(Q, ref[i].env)
        assert not np.any(vr & ~ve), exact[i].name
        differ += int(np.sum(ve & ~vr))
    assert differ > 0  # and the modes are not the same


def test_mode_alias_and_bad_mode():
    (a,) = mbm.load(mode="reference-compatible", classes="table_pick", indices=1)
    assert any(o.kind == "capsule" for o in a.env)
    with pytest.raises(ValueError, match="mode must be one of exact, reference"):
        mbm.load(mode="capsules")


def test_classes_and_indices_filters():
    assert mbm.classes() == CLASSES
    cage = mbm.load(classes="cage")
    assert len(cage) == 100 and {s.problem for s in cage} == {"cage"} and [s.index for s in cage] == list(range(1, 101))
    two = mbm.load(classes=["table_pick", "box"], indices=[7, 3])
    assert [(s.problem, s.index) for s in two] == [("table_pick", 3), ("table_pick", 7), ("box", 3), ("box", 7)]
    assert len({id(s.robot) for s in two}) == 1
    every = mbm.load(indices=50)
    assert [s.problem for s in every] == CLASSES and {s.index for s in every} == {50}
    with pytest.raises(ValueError, match=r"problems\.json: unknown problem class 'cages' \(did you mean 'cage'\?\)"):
        mbm.load(classes=["cage", "cages"])
    with pytest.raises(ValueError, match=r"no problem with index \[0, 101\]"):
        mbm.load(classes="cage", indices=[0, 5, 101])
    with pytest.raises(TypeError, match="indices must be integers"):
        mbm.load(indices=["1"])


def test_given_robot_is_shared_and_checked():
    robot = simdplan.robots.load("panda")
    scenes = mbm.load(classes="cage", indices=[1, 2], robot=robot)
    assert all(s.robot is robot for s in scenes) and scenes[0].robot_spec is None
    by_name = mbm.load(classes="cage", indices=1, robot="panda")[0]
    assert by_name.robot_spec == "panda"
    with pytest.raises(ValueError, match=r"joints.*missing from the file"):
        mbm.load(classes="cage", indices=1, robot="ur5")
    with pytest.raises(TypeError, match="robot must be"):
        mbm.load(robot=3)


# ----------------------------------------------------------------------------- custom files


def small_file(tmp_path, mutate=None, name="p.json") -> str:
    """A file with cage problem 1 and box problem 2 (after ``mutate``)."""
    d = {"robot": "panda", "joints": list(raw()["joints"]),
         "problems": {"cage": [copy.deepcopy(raw()["problems"]["cage"][0])],
                      "box": [copy.deepcopy(raw()["problems"]["box"][1])]}}
    if mutate:
        mutate(d)
    path = tmp_path / name
    path.write_text(json.dumps(d))
    return str(path)


def test_joint_order_is_mapped_to_the_robot(tmp_path):
    perm = [3, 0, 6, 1, 5, 2, 4]

    def shuffle(d):
        d["joints"] = [d["joints"][i] for i in perm]
        for probs in d["problems"].values():
            for p in probs:
                p["start"] = [p["start"][i] for i in perm]
                p["goals"] = [[g[i] for i in perm] for g in p["goals"]]

    shuffled = mbm.load(small_file(tmp_path, shuffle))
    original = mbm.load(classes=["cage", "box"], indices=[1, 2])
    original = [s for s in original if (s.problem, s.index) in (("cage", 1), ("box", 2))]
    assert [s.name for s in shuffled] == [s.name for s in original]
    for a, b in zip(shuffled, original):
        np.testing.assert_array_equal(a.start, b.start)
        np.testing.assert_array_equal(a.goals, b.goals)
        assert a.robot.is_valid(a.start, a.env) == a.valid


@pytest.mark.parametrize("mutate, words", [
    (lambda d: d.update(joints=d["joints"][:6]), "missing from the file: ['panda_joint7']"),
    (lambda d: d.update(joints=d["joints"] + ["gripper"]), "not joints of the robot: ['gripper']"),
    (lambda d: d.update(joints=d["joints"][:6] + ["panda_joint1"]), "lists a joint twice"),
])
def test_joint_name_mismatch_is_refused(tmp_path, mutate, words):
    path = small_file(tmp_path, mutate)
    with pytest.raises(SceneError) as info:
        mbm.load(path)
    assert info.value.key == "joints" and words in str(info.value) and path in str(info.value)


@pytest.mark.parametrize("mutate, key, words", [
    (lambda d: d.pop("problems"), "problems", "missing"),
    (lambda d: d.update(robot="kuka"), "robot", "not a built-in robot"),
    (lambda d: d["problems"].update(cage={}), "problems.cage", "must be a list"),
    (lambda d: d["problems"]["cage"][0].pop("start"), "problems.cage[0].start", "missing"),
    (lambda d: d["problems"]["cage"][0].update(start=[0.0] * 6), "problems.cage[0].start", "must have 7 values"),
    (lambda d: d["problems"]["box"][0]["goals"][0].__setitem__(2, float("nan")), "problems.box[0].goals[0][2]",
     "must be finite"),
    (lambda d: d["problems"]["cage"][0]["box"][1]["half_extents"].__setitem__(0, -1.0),
     "problems.cage[0].box[1].half_extents", "> 0"),
    (lambda d: d["problems"]["box"][0]["cylinder"][0].update(radius=0.0), "problems.box[0].cylinder[0].radius", "> 0"),
    (lambda d: d["problems"]["box"][0]["cylinder"][0].update(orientation_quat_xyzw=[0, 0, 0, 3]),
     "problems.box[0].cylinder[0].orientation_quat_xyzw", "unit quaternion"),
    (lambda d: d["problems"]["box"][0]["cylinder"][0].pop("length"), "problems.box[0].cylinder[0].length", "missing"),
    (lambda d: d["problems"]["cage"][0].update(valid="yes"), "problems.cage[0].valid", "true or false"),
])
def test_bad_mbm_files_name_the_key(tmp_path, mutate, key, words):
    path = small_file(tmp_path, mutate)
    with pytest.raises(SceneError) as info:
        mbm.load(path)
    err = info.value
    assert (err.file, err.key) == (path, key), str(err)
    assert words in str(err), str(err)


def test_bad_paths(tmp_path):
    with pytest.raises(FileNotFoundError, match="MotionBenchMaker file not found") as info:
        mbm.load(tmp_path / "none.json")
    assert "none.json" in str(info.value)
    with pytest.raises(FileNotFoundError):
        mbm.classes(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"robot": "panda", "problems": {')
    with pytest.raises(SceneError, match=r"bad\.json: malformed JSON at line 1"):
        mbm.load(bad)
    assert mbm.classes(small_file(tmp_path)) == ["cage", "box"]


def test_obstacles_as_meshes_and_hulls():
    """as_shapes: every primitive becomes a mesh (a surface) or a hull (a solid) of its triangulation
    under its own name; planes stay; a point cloud or a bad kind is refused by name."""
    from simdplan.collision import Environment

    env = Environment()
    env.add_box([0.5, 0.0, 0.3], half_extents=[0.1, 0.2, 0.05], name="crate")
    env.add_cylinder([0.0, 0.5, 0.3], radius=0.05, length=0.4, name="post")
    env.add_sphere([0.0, -0.5, 0.5], 0.1, name="ball")
    env.add_plane([0, 0, 1], -0.5, name="floor")
    assert mbm.as_shapes(env, "primitives") is env
    robot = simdplan.robots.load("panda")
    rng = np.random.default_rng(2)
    Q = rng.uniform(robot.lower, robot.upper, (300, robot.dof))
    Q = Q[[robot.clearance(q, env, self_collision=False) > 0.003 for q in Q]]
    want = np.array([robot.clearance(q, env, self_collision=False) for q in Q])
    for kind, obstacle_kind in (("meshes", "mesh"), ("hulls", "convex")):
        shaped = mbm.as_shapes(env, kind)
        assert [(o.name, o.kind) for o in shaped] == [("crate", obstacle_kind), ("post", obstacle_kind),
                                                     ("ball", obstacle_kind), ("floor", "plane")]
        got = np.array([robot.clearance(q, shaped, self_collision=False) for q in Q])
        # faces lie inside the curved surfaces by at most 0.5 % of a radius (0.5 mm here), never outside
        assert (got >= want - 1e-5).all() and (got <= want + 6e-4).all(), kind
    cloud = Environment()
    cloud.add_pointcloud(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="pointcloud"):
        mbm.as_shapes(cloud, "meshes")
    with pytest.raises(ValueError, match="primitives, meshes, hulls"):
        mbm.as_shapes(env, "voxels")
