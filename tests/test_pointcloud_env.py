"""Point clouds as obstacles: Environment.add_pointcloud with is_valid, motions, reports and planners."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference
import simdplan
from simdplan.collision import Environment

PANDA = simdplan.robots.load("panda")


def _wall(rng, n=3000, x=0.45):
    """Points on a noisy wall x ~ 0.45 in front of the panda."""
    return np.c_[x + rng.normal(0, 0.01, n), rng.uniform(-0.6, 0.6, n), rng.uniform(0.0, 1.1, n)]


def _expected(robot, Q, points, point_radius, padding, tol=2e-5):
    """Reference verdict per row (True: free of the cloud) and a mask of rows far from the boundary."""
    S = robot.fk_many(Q).astype(np.float64)
    d = reference.pointcloud_distance(S[:, :, :3], points, point_radius)  # (n, spheres)
    gap = d - (S[:, :, 3] + padding)
    return (gap >= 0).all(axis=1), (np.abs(gap) > tol).all(axis=1)


@settings(max_examples=5)
@given(seed=st.integers(0, 2**31), point_radius=st.sampled_from([0.0, 0.01]), padding=st.sampled_from([0.0, 0.003]))
def test_is_valid_many_matches_reference(isa, seed, point_radius, padding):
    rng = np.random.default_rng(seed)
    pts = _wall(rng, 800)
    env = Environment()
    env.add_pointcloud(pts, point_radius)
    Q = rng.uniform(PANDA.lower, PANDA.upper, (150, PANDA.dof))
    free_self = PANDA.is_valid_many(Q, None, padding)
    got = PANDA.is_valid_many(Q, env, padding)
    want, clear = _expected(PANDA, Q, pts.astype(np.float32), point_radius, padding)
    want &= free_self
    np.testing.assert_array_equal(got[clear], want[clear])
    assert 0 < want.sum() < len(want)
    single = np.array([PANDA.is_valid(q, env, padding) for q in Q[:60]])
    np.testing.assert_array_equal(single, got[:60])


def test_touching_a_point_is_free(isa):
    """A sphere exactly reaching a point (distance == radius) does not collide; a hair closer does."""
    q = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])  # valid ("ready" pose)
    assert PANDA.is_valid(q)
    s = PANDA.fk(q)
    k = int(np.argmax(s[:, 0] + s[:, 3]))  # the sphere reaching farthest along +x: no other reaches the point
    c, r = s[k, :3].astype(np.float64), float(s[k, 3])
    for dist, free in [(r * (1 + 1e-5), True), (r * (1 - 1e-4), False)]:
        env = Environment()
        env.add_pointcloud([c + [dist, 0.0, 0.0]])
        assert PANDA.is_valid(q, env) == free, (dist, r)


def test_motion_and_planning_with_a_cloud(isa):
    rng = np.random.default_rng(5)
    pts = _wall(rng, 1500, x=0.5)
    env = Environment()
    cid = env.add_pointcloud(pts)
    start = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    goal = np.array([0.0, 0.9, 0.0, -1.2, 0.0, 2.1, 0.785])  # reaching into the wall region
    if not PANDA.is_valid(goal, env):
        goal = np.array([1.2, 0.3, 0.0, -1.8, 0.0, 2.0, 0.785])
    assert PANDA.is_valid(start, env) and PANDA.is_valid(goal, env)
    res = simdplan.plan(PANDA, env, start, goal, seed=1)
    assert res.success, res.message
    tree = env._trees[cid]
    # every edge re-checked independently at 10x resolution: robot spheres against the points in NumPy
    path = res.path
    for a, b in zip(path[:-1], path[1:]):
        n = int(np.ceil(np.linalg.norm(b - a) * PANDA.resolution * 10)) + 1  # 10x the planner's resolution
        Q = a + np.linspace(0, 1, n)[:, None] * (b - a)
        want, clear = _expected(PANDA, Q, pts.astype(np.float32), 0.0, 0.0)
        assert want[clear].all(), "a path sample penetrates the cloud"
    res2 = simdplan.plan(PANDA, env, start, goal, seed=2)
    assert res2.success
    assert env._trees[cid] is tree  # built once, reused by later plans (never copied per call)


def test_range_follows_robot_and_padding():
    env = Environment()
    cid = env.add_pointcloud(np.array([[2.0, 0.0, 0.5]]))
    q = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    assert PANDA.is_valid(q, env)
    t = env._trees[cid]
    r = PANDA.fk(q)[:, 3]
    assert t.r_min <= r.min() and t.r_max >= r.max()
    assert PANDA.is_valid(q, env, padding=0.004)  # needs a wider range: rebuilt once, widened
    t2 = env._trees[cid]
    assert t2 is not t and t2.r_min <= t.r_min and t2.r_max >= r.max() + 0.004
    assert PANDA.is_valid(q, env) and env._trees[cid] is t2  # the wider tree still answers the narrower need


def test_explicit_range_must_cover_the_robot():
    env = Environment()
    env.add_pointcloud(np.zeros((4, 3)) + [1.0, 0, 0], r_min=0.05, r_max=0.06, name="scan")
    q = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    with pytest.raises(ValueError, match="scan.*r_min=0.05"):
        PANDA.is_valid(q, env)
    ok = Environment()
    ok.add_pointcloud(np.zeros((4, 3)) + [1.0, 0, 0], r_min=0.001, r_max=0.5)
    assert PANDA.is_valid(q, ok)


def test_why_invalid_names_the_cloud_and_agrees():
    rng = np.random.default_rng(9)
    pts = _wall(rng, 2000)
    env = Environment()
    cid = env.add_pointcloud(pts, name="kinect")
    Q = rng.uniform(PANDA.lower, PANDA.upper, (200, PANDA.dof))
    ok = PANDA.is_valid_many(Q, env)
    for q, v in zip(Q[:80], ok[:80]):
        report = PANDA.why_invalid(q, env)
        assert (len(report) == 0) == bool(v)
        for viol in report:
            if viol.obstacle_kind == "pointcloud":
                assert viol.obstacle_id == cid and viol.obstacle_name == "kinect" and viol.depth > 0


@pytest.mark.parametrize("points, match", [
    (np.zeros((0, 3)), "n >= 1"),
    (np.zeros((5, 2)), r"shape \(n, 3\)"),
    (np.array([[0.0, 0.0, np.nan]]), "non-finite"),
    (np.array([["a", "b", "c"]]), "numeric"),
])
def test_bad_points_are_refused(points, match):
    with pytest.raises((ValueError, TypeError), match=match):
        Environment().add_pointcloud(points)


def test_bad_radii_are_refused():
    env = Environment()
    with pytest.raises(ValueError, match="point_radius"):
        env.add_pointcloud(np.zeros((1, 3)), point_radius=-0.1)
    with pytest.raises(ValueError, match="r_min .* must not exceed r_max"):
        env.add_pointcloud(np.zeros((1, 3)), r_min=0.2, r_max=0.1)
    with pytest.raises(ValueError, match="r_max"):
        env.add_pointcloud(np.zeros((1, 3)), r_max=float("nan"))


def test_remove_and_repr():
    env = Environment()
    cid = env.add_pointcloud(np.array([[0.3, 0.0, 0.3]]))
    env.add_box([2, 2, 2], half_extents=[0.1, 0.1, 0.1])
    assert "1 point cloud" in repr(env) and len(env) == 2
    q = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    PANDA.is_valid(q, env)
    env.remove(cid)
    assert cid not in env._trees and len(env) == 1
    assert PANDA.is_valid(q, env)


# ----------------------------------------------------------------------------- scene files

SCENE = """\
robot: panda
obstacles:
  - {type: pointcloud, name: wall, file: wall.npy, point_radius: 0.005}
  - {type: box, position: [0.5, 0, -0.15], half_extents: [0.5, 0.5, 0.05]}
start: [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]
goal: [1.2, 0.3, 0.0, -1.8, 0.0, 2.0, 0.785]
"""


def test_scene_with_a_cloud_loads_plans_and_round_trips(tmp_path):
    rng = np.random.default_rng(2)
    pts = np.c_[np.full(500, -0.6), rng.uniform(-0.5, 0.5, 500), rng.uniform(0.0, 1.0, 500)]
    np.save(tmp_path / "wall.npy", pts)
    (tmp_path / "s.yaml").write_text(SCENE)
    scene = simdplan.scenes.load(tmp_path / "s.yaml")
    cloud = [o for o in scene.env if o.kind == "pointcloud"][0]
    assert cloud.name == "wall" and cloud.params["point_radius"] == 0.005
    np.testing.assert_array_equal(cloud.params["points"], pts.astype(np.float32))
    res = simdplan.plan(scene.robot, scene.env, scene.start, scene.goals, seed=0)
    assert res.success
    (tmp_path / "sub").mkdir()
    out = simdplan.scenes.save(scene, tmp_path / "sub" / "copy.json")
    again = simdplan.scenes.load(out)
    c2 = [o for o in again.env if o.kind == "pointcloud"][0]
    np.testing.assert_array_equal(c2.params["points"], cloud.params["points"])
    assert "../wall.npy" in (tmp_path / "sub" / "copy.json").read_text()


def test_scene_saves_a_cloud_without_a_file(tmp_path):
    scene = simdplan.scenes.Scene(robot=PANDA, env=Environment(), start=np.zeros(7) + [0, 0, 0, -1.5, 0, 1.5, 0],
                                  goals=np.zeros((1, 7)) + [0.5, 0, 0, -1.5, 0, 1.5, 0], robot_spec="panda")
    scene.env.add_pointcloud(np.array([[1.0, 1.0, 1.0], [1.0, 1.1, 1.0]]), name="two points")
    path = simdplan.scenes.save(scene, tmp_path / "x.yaml")
    assert (tmp_path / "x.two_points.npy").exists()
    again = simdplan.scenes.load(path)
    assert len(again.env) == 1 and next(iter(again.env)).kind == "pointcloud"


def test_scene_cloud_errors_name_the_key(tmp_path):
    (tmp_path / "s.yaml").write_text(SCENE)  # wall.npy missing
    with pytest.raises(simdplan.scenes.SceneError, match=r"obstacles\[0\]\.file"):
        simdplan.scenes.load(tmp_path / "s.yaml")
    np.save(tmp_path / "wall.npy", np.array([[0.0, 0.0, np.nan]]))
    with pytest.raises(simdplan.scenes.SceneError, match=r"obstacles\[0\]"):
        simdplan.scenes.load(tmp_path / "s.yaml")
