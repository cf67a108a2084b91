"""Certified Link is the default Link of every planning entry point (issue: safe by default).

What the certified tests check at the Link level (test_proximity.py), checked here on the path a
user takes without choosing a Link: plan, plan_many, the PRM Roadmap, the OMPL adapter and scene
files; a thin plate that discrete Link steps over is never crossed; every obstacle kind and
self-collision; the environment edited, or an object attached, between plans.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import simdplan
import simdplan.scenes
from simdplan import Environment
from simdplan.robots import RobotBuilder
from simdplan.planner import PlannerSettings, Roadmap
from simdplan.scenes import mbm

from test_proximity import _dense_free


@pytest.fixture(scope="module")
def panda():
    return simdplan.robots.load("panda")


def dense_free(robot, env, path, n=2000) -> bool:
    """Every edge of ``path`` free at n + 1 samples (far denser than any Link's)."""
    return all(_dense_free(robot, env, a, b, n) for a, b in zip(path[:-1], path[1:]))


def sweeper():
    """One revolute joint swinging a 5 mm sphere on a 0.5 m arm; limits keep it from going round."""
    b = RobotBuilder("sweeper")
    b.link("base", spheres=[[0, 0, 0, 0.05]])
    b.link("arm", spheres=[[0.5, 0, 0, 0.005]])
    b.joint("j", "revolute", "base", "arm", limits=(-3, 3))
    return b.build()


def thin_plate(angle=0.5) -> Environment:
    """A 1 mm plate across the sweeper's arc at ``angle``: only an edge's samples either side of it."""
    env = Environment()
    env.add_box([0.5 * np.cos(angle), 0.5 * np.sin(angle), 0.0], half_extents=[0.05, 0.0005, 0.05],
                euler=[0.0, 0.0, angle], name="plate")
    return env


@pytest.fixture(scope="module")
def plate():
    robot, env = sweeper(), thin_plate()
    # the straight edge 0 -> 1 rad: its discrete samples miss the plate, a dense check does not
    n = robot.motion_samples([0.0], [1.0])
    samples = np.linspace(0.0, 1.0, n + 1)[:, None]
    assert robot.is_valid_many(samples, env).all() and not dense_free(robot, env, [np.zeros(1), np.ones(1)])
    return robot, env


def test_every_default_names_certified_link(panda):
    assert PlannerSettings().link == "certified"
    assert panda.default_settings().link == "certified"
    assert simdplan.scenes.reading.default_settings().link == "certified"
    core = simdplan._core.PlannerSettings()
    assert core.certified  # the core's own default agrees (test_planner_contract compares every field)


def test_plan_never_crosses_a_thin_plate_by_default(plate):
    robot, env = plate
    stepped_over = simdplan.plan(robot, env, [0.0], [[1.0]], link="discrete", time_limit=0, max_iterations=2000)
    assert stepped_over.success and not dense_free(robot, env, stepped_over.path)  # what discrete means
    res = simdplan.plan(robot, env, [0.0], [[1.0]], time_limit=0, max_iterations=2000)
    assert res.stats["link"] == "certified" and not res.success  # the only way to the goal is through it
    for planner in ("rrt", "prm"):
        res = simdplan.plan(robot, env, [0.0], [[1.0]], planner=planner, time_limit=0, max_iterations=2000)
        assert res.stats["link"] == "certified" and not res.success, planner
    many = simdplan.plan_many([(robot, env, [0.0], [[1.0]])] * 2, time_limit=0, max_iterations=2000)
    assert all(r.stats["link"] == "certified" and not r.success for r in many)
    roadmap = Roadmap(robot, env, seed=1)
    assert roadmap.settings.link == "certified"
    assert not roadmap.query([0.0], [[1.0]], time_limit=0, max_iterations=2000).success
    # a goal short of the plate is reached, and the path is free everywhere
    res = simdplan.plan(robot, env, [0.0], [[0.45]], time_limit=0)
    assert res.success and dense_free(robot, env, res.path)


def test_ompl_adapter_is_certified_by_default(plate):
    pytest.importorskip("ompl")
    robot, env = plate
    stepped_over = simdplan.plan(robot, env, [0.0], [[1.0]], planner="ompl:RRTConnect", link="discrete",
                                 time_limit=0.5)
    assert stepped_over.success and not dense_free(robot, env, stepped_over.path)
    res = simdplan.plan(robot, env, [0.0], [[1.0]], planner="ompl:RRTConnect", time_limit=0.3)
    assert res.stats["link"] == "certified" and not res.success


def test_a_scene_file_without_a_link_plans_certified(tmp_path):
    # a MotionBenchMaker problem names no Link: its settings are the planner's defaults
    problem = mbm.load(classes="table_pick", indices=1, mode="reference")[0]
    assert problem.settings.link == "certified"
    text = "\n".join(line for line in simdplan.scenes.dumps(problem).splitlines() if "link:" not in line)
    path = tmp_path / "scene.yaml"
    path.write_text(text)
    loaded = simdplan.scenes.load(path)
    assert loaded.settings.link == "certified"
    res = simdplan.plan_many([loaded], time_limit=0)[0]
    assert res.success and res.stats["link"] == "certified" and dense_free(loaded.robot, loaded.env, res.path)


@pytest.mark.parametrize("kind", ["primitives", "meshes", "hulls"])
def test_every_obstacle_kind_plans_proven_paths_by_default(kind):
    scene = simdplan.scenes.load(simdplan.scenes.example("panda_bookshelf"))
    env = mbm.as_shapes(scene.env, kind)
    res = simdplan.plan(scene.robot, env, scene.start, scene.goals, seed=2, time_limit=0)
    assert res.success and res.stats["link"] == "certified" and res.stats["edges_proven"] > 0
    assert dense_free(scene.robot, env, res.path)


def test_point_clouds_plan_proven_paths_by_default():
    scene = simdplan.scenes.load(simdplan.scenes.example("panda_bookshelf_cloud"))
    res = simdplan.plan(scene.robot, scene.env, scene.start, scene.goals, seed=2, time_limit=0)
    assert res.success and res.stats["link"] == "certified"
    assert dense_free(scene.robot, scene.env, res.path)


def test_self_collision_on_the_default_path():
    from simdplan.bench import robots as bench_robots

    robot = bench_robots.load("dual_arm")
    for scene in simdplan.scenes.generate(robot, "box", 2, seed=5):
        res = simdplan.plan(robot, scene.env, scene.start, scene.goals, seed=1, time_limit=0)
        assert res.success and res.stats["link"] == "certified"
        assert dense_free(robot, scene.env, res.path)  # is_valid_many includes self-collision


def _blocker_on(robot, env, path, ends, radius=0.03) -> int:
    """A sphere added where the robot's hand passes along ``path``, clear of ``ends``; its id."""
    for a, b in zip(path[:-1], path[1:]):
        for t in (0.5, 0.3, 0.7):
            centre = robot.link_positions_many((a + t * (b - a))[None, :], ["panda_hand"])[0, 0]
            obstacle = env.add_sphere(centre, radius, name="blocker")
            if robot.is_valid_many(ends, env).all():
                return obstacle
            env.remove(obstacle)
    raise AssertionError("no place on the path for a blocker clear of the start and goals")


def test_edits_between_plans_are_seen_and_a_rebuilt_environment_gives_the_same_plans():
    scene = simdplan.scenes.load(simdplan.scenes.example("panda_table"))
    robot, env = scene.robot, scene.env

    def plan(r=robot, e=env):
        return simdplan.plan(r, e, scene.start, scene.goals, seed=3, time_limit=0)

    first = plan()
    assert first.success and first.stats["link"] == "certified"
    # the same problem in an environment built afresh (nothing compiled or cached): the same plan
    again = plan(e=simdplan.scenes.load(simdplan.scenes.example("panda_table")).env)
    assert np.array_equal(again.path, first.path) and again.stats["iterations"] == first.stats["iterations"]
    # an obstacle added on the path: the next plan avoids it (or finds none), never reuses what it knew
    blocker = _blocker_on(robot, env, first.path, np.vstack([scene.start, scene.goals]))
    assert not dense_free(robot, env, first.path)
    blocked = plan()
    assert not blocked.success or dense_free(robot, env, blocked.path)
    assert blocked.success and not np.array_equal(blocked.path, first.path)
    # removed again: the first plan exactly
    env.remove(blocker)
    assert np.array_equal(plan().path, first.path)
    # an object attached to the hand: a new robot, planned with the object
    held = robot.attach("panda_hand", spheres=[[0.0, 0.0, 0.12, 0.04]], name="held")
    carried = plan(r=held)
    assert not carried.success or dense_free(held, env, carried.path)
    assert carried.success and carried.stats["link"] == "certified"


def test_settings_can_still_choose_discrete(panda):
    s = dataclasses.replace(panda.default_settings(), link="discrete").validated()
    assert s.link == "discrete"
    scene = simdplan.scenes.load(simdplan.scenes.example("panda_table"))
    res = simdplan.plan(scene.robot, scene.env, scene.start, scene.goals, link="discrete", seed=3, time_limit=0)
    assert res.success and res.stats["link"] == "discrete" and res.stats["edges_proven"] == 0
