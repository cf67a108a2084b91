"""simdplan.bench.vamp_baseline: simdplan environments handed to VAMP unchanged (or refused), for benchmarks.

VAMP is not a dependency: the conversion is checked against a recording stand-in everywhere, and
against VAMP's own MotionBenchMaker importer where VAMP is installed.
"""

from __future__ import annotations

import json
import types

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from simdplan.bench import vamp_baseline
from simdplan.collision import Environment
from simdplan.scenes import mbm


def recording_vamp():
    """A stand-in with VAMP's Environment and shape constructors that records what it is given."""
    added = []

    class Env:
        def add_sphere(self, s):
            added.append(("sphere", s))

        def add_cuboid(self, s):
            added.append(("cuboid", s))

        def add_capsule(self, s):
            added.append(("capsule", s))

    fake = types.SimpleNamespace(
        Environment=Env, Sphere=lambda c, r: (c, r), Cuboid=lambda p, e, h: (p, e, h),
        Cylinder=lambda p, e, r, length: (p, e, r, length))
    base = vamp_baseline.VampBaseline.__new__(vamp_baseline.VampBaseline)
    base.vamp = fake
    return base, added


def test_environment_keeps_every_shape_and_its_rotation():
    base, added = recording_vamp()
    rng = np.random.default_rng(3)
    quats = [Rotation.random(random_state=rng).as_quat() for _ in range(2)]
    env = Environment()
    env.add_sphere([0.1, 0.2, 0.3], 0.05)
    env.add_box([0.4, 0.0, 0.2], quats[0], [0.1, 0.2, 0.3])
    env.add_capsule([0.0, -0.4, 0.5], quats[1], 0.04, 0.3)
    base.environment(env)
    assert [k for k, _ in added] == ["sphere", "cuboid", "capsule"]
    assert added[0][1] == ([0.1, 0.2, 0.3], 0.05)
    pos, euler, half = added[1][1]
    assert pos == [0.4, 0.0, 0.2] and half == pytest.approx([0.1, 0.2, 0.3])
    # VAMP's Euler angles are extrinsic x-y-z (R = Rz Ry Rx), as MotionBenchMaker's orientation_euler_xyz
    np.testing.assert_allclose(Rotation.from_euler("xyz", euler).as_matrix(),
                               Rotation.from_quat(quats[0]).as_matrix(), atol=1e-12)
    pos, euler, radius, length = added[2][1]
    assert pos == [0.0, -0.4, 0.5] and (radius, length) == pytest.approx((0.04, 0.3))
    np.testing.assert_allclose(Rotation.from_euler("xyz", euler).as_matrix(),
                               Rotation.from_quat(quats[1]).as_matrix(), atol=1e-12)


@pytest.mark.parametrize("kind", ["cylinder", "plane", "pointcloud"])
def test_environment_refuses_what_vamp_cannot_represent(kind):
    base, _ = recording_vamp()
    env = Environment()
    if kind == "cylinder":
        env.add_cylinder([0, 0, 0], None, 0.1, 0.2, name="post")
    elif kind == "plane":
        env.add_plane([0, 0, 1], 0.0, name="post")
    else:
        env.add_pointcloud(np.zeros((3, 3)), name="post")
    with pytest.raises(ValueError, match=f"'post' is a {kind}"):
        base.environment(env)


def test_load_says_why_not(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_vamp(name, *args, **kwargs):
        if name == "vamp":
            raise ImportError("No module named 'vamp'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_vamp)
    base, why = vamp_baseline.load("panda")
    assert base is None and "not installed" in why


def test_same_validity_as_vamps_own_importer():
    """Where VAMP is installed: our reference-mode scenes, converted, are VAMP's own MotionBenchMaker
    environments: every sampled configuration is valid in both or in neither."""
    vamp = pytest.importorskip("vamp")
    base, why = vamp_baseline.load("panda")
    assert base is not None, why
    with open(mbm.DEFAULT_PATH) as f:
        raw = json.load(f)["problems"]
    rng = np.random.default_rng(0)
    robot = None
    for cls in ("box", "cage", "bookshelf_thin"):
        scene = mbm.load(mode="reference", classes=[cls], indices=[1])[0]
        robot = scene.robot
        ours = base.environment(scene.env)
        theirs = vamp.problem_dict_to_vamp(raw[cls][0])
        Q = rng.uniform(robot.lower, robot.upper, size=(300, robot.dof))
        a = [base.module.validate(q.tolist(), ours) for q in Q]
        b = [base.module.validate(q.tolist(), theirs) for q in Q]
        assert a == b and 0 < sum(a) < len(a), cls


def test_unknown_sampler_is_refused_by_name():
    with pytest.raises(ValueError, match="halton, uniform.*'sobol'"):
        vamp_baseline.VampBaseline(types.SimpleNamespace(), "panda", sampler="sobol")


def test_uniform_sampler_plans_with_a_sequence_of_its_own():
    """Where VAMP is installed: both samplers solve a cage problem, from different sample sequences
    (the two runs' iteration counts differ), each the same on a second run (restarted per problem),
    and the label says which sampler ran."""
    pytest.importorskip("vamp")
    scene = mbm.load(mode="reference", classes=["cage"], indices=[1])[0]
    runs = {}
    for sampler in vamp_baseline.SAMPLERS:
        base, why = vamp_baseline.load("panda", sampler)
        assert base is not None, why
        env = base.environment(scene.env)
        first, again = (base.plan(scene.start, scene.goals, env, simplify=False) for _ in range(2))
        assert first["solved"] and again["iterations"] == first["iterations"], sampler
        runs[sampler] = (first["iterations"], base.label)
    assert runs["halton"][0] != runs["uniform"][0]
    assert "uniform sampler" in runs["uniform"][1] and "sampler" not in runs["halton"][1]
