"""Robots, environments, meshes and hulls survive pickling (Ray's object store and processes use it)
with every answer unchanged."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import simdplan
from simdplan import robots, scenes
from simdplan.bench import robots as bench_robots
from simdplan.collision import ConvexHull, Environment, TriangleMesh


def every_kind() -> Environment:
    env = Environment()
    env.add_box([0.5, 0.0, 0.3], half_extents=[0.1, 0.2, 0.05], euler=[0.1, 0.2, 0.3], name="tilted")
    env.add_sphere([0.3, 0.3, 0.5], 0.08)
    env.add_capsule([0.0, 0.5, 0.4], radius=0.05, length=0.3, euler=[0.5, 0, 0])
    env.add_cylinder([-0.4, 0.2, 0.5], radius=0.06, length=0.4)
    env.add_plane([0, 0, 1], -0.05)
    env.add_pointcloud(np.random.default_rng(1).uniform([0.4, -0.1, 0.5], [0.6, 0.1, 0.7], (400, 3)),
                       point_radius=0.01)
    cube = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], dtype=float) * 0.15
    env.add_convex(cube, position=[0.2, -0.5, 0.6])
    faces = np.array([[0, 1, 2], [0, 2, 3]])
    env.add_mesh((np.array([[0.4, -0.4, 0.8], [0.7, -0.4, 0.8], [0.7, -0.1, 0.8], [0.4, -0.1, 0.8]]), faces))
    removed = env.add_sphere([9, 9, 9], 0.1)
    env.remove(removed)  # ids keep their gap
    return env


@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_a_pickled_robot_and_environment_answer_alike(name):
    robot = robots.load(name)
    robot = robot.attach(robot.link_names[-1], spheres=[[0, 0, 0.05, 0.03]], name="held")
    env = every_kind()
    r2, e2 = pickle.loads(pickle.dumps((robot, env)))
    assert [(o.id, o.kind, o.name) for o in e2] == [(o.id, o.kind, o.name) for o in env]
    assert r2.attachments == robot.attachments and r2.joint_names == robot.joint_names
    Q = np.random.default_rng(0).uniform(robot.lower, robot.upper, (3000, robot.dof))
    ok = robot.is_valid_many(Q, env)
    assert 0.05 < ok.mean() < 0.95
    assert np.array_equal(r2.is_valid_many(Q, e2), ok)
    assert np.array_equal(r2.clearance_many(Q[:200], e2), robot.clearance_many(Q[:200], env))
    assert e2.add_sphere([0, 0, 2], 0.1) == env.add_sphere([0, 0, 2], 0.1)  # the next id continues


@pytest.mark.parametrize("name", ["mobile_manipulator", "dual_arm"])
def test_pickled_assembled_robots_check_self_collision_alike(name):
    robot = bench_robots.load(name)
    copy = pickle.loads(pickle.dumps(robot))
    Q = np.random.default_rng(1).uniform(robot.lower, robot.upper, (3000, robot.dof))
    ok = robot.is_valid_many(Q)
    assert 0.02 < ok.mean() < 0.98
    assert np.array_equal(copy.is_valid_many(Q), ok)
    assert np.array_equal(copy.fk_many(Q[:50]), robot.fk_many(Q[:50]))


def test_a_pickled_scene_plans_the_same_path():
    scene = scenes.load(scenes.example("panda_mesh_shelf"))
    robot, env = pickle.loads(pickle.dumps((scene.robot, scene.env)))
    a = simdplan.plan(scene.robot, scene.env, scene.start, scene.goals, seed=2)
    b = simdplan.plan(robot, env, scene.start, scene.goals, seed=2)
    assert a.success and np.array_equal(a.path, b.path)


def test_pickled_hulls_and_meshes_keep_their_geometry():
    pts = np.random.default_rng(3).normal(size=(200, 3))
    hull = ConvexHull.from_points(pts)
    mesh = TriangleMesh(pts[:30], np.random.default_rng(4).integers(0, 30, (40, 3)))
    h2, m2 = pickle.loads(pickle.dumps((hull, mesh)))
    assert np.array_equal(h2.vertices, hull.vertices)
    centres = np.random.default_rng(5).normal(size=(100, 3)) * 2
    radii = np.full(len(centres), 0.1)
    for a, b in zip(h2.sphere_distance(centres, radii), hull.sphere_distance(centres, radii)):
        assert np.array_equal(a, b)
    for a, b in zip(m2.distance(centres), mesh.distance(centres)):
        assert np.array_equal(a, b)
