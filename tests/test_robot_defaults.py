"""Planner defaults derived from the robot (Robot.default_settings), not from the panda."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdplan
from simdplan.bench import robots as bench_robots
from simdplan.robots import DEFAULT_RANGE, MAX_SAMPLE_TRAVEL, RobotBuilder


def gantry(span: float):
    """Three prismatic axes of ``span`` metres carrying a small tool."""
    b = RobotBuilder("gantry")
    b.link("frame", spheres=[[0, 0, -0.2, 0.05]])
    for i, axis in enumerate(([1, 0, 0], [0, 1, 0], [0, 0, 1])):
        b.link(f"a{i}", spheres=[[0, 0, 0, 0.02]] if i == 2 else None)
        b.joint(f"j{i}", "prismatic", "frame" if i == 0 else f"a{i - 1}", f"a{i}", axis=axis, limits=(0.0, span))
    return b.build()


@pytest.mark.parametrize("name", ["panda", "ur5", "mobile_manipulator", "dual_arm"])
def test_default_settings_follow_the_robot(name):
    robot = bench_robots.load(name)
    d = robot.default_settings()
    assert d.resolution == pytest.approx(robot.speed_bound / MAX_SAMPLE_TRAVEL) == robot.resolution
    assert d.range == robot.default_range
    # arms: joint spaces far larger than 4 units, so 1.0 rounded to whole 16-sample vectors
    samples = robot.default_range * robot.resolution
    assert samples == pytest.approx(round(samples)) and round(samples) % 16 == 0
    assert abs(robot.default_range - DEFAULT_RANGE) <= 8 / robot.resolution + 1e-9
    assert d.dynamic_domain and d.max_iterations == 1_000_000


def test_small_and_metric_joint_spaces_get_their_own_defaults():
    small = gantry(0.3)
    # every axis moves the tool 1 m per metre (the bound's float32 table rounds up by ~1e-6)
    assert small.speed_bound == pytest.approx(np.sqrt(3), rel=1e-5) and small.speed_bound >= np.sqrt(3)
    assert small.resolution == pytest.approx(np.sqrt(3) / MAX_SAMPLE_TRAVEL, rel=1e-5)
    wanted = 0.25 * np.linalg.norm([0.3] * 3)
    assert wanted * small.resolution < 8  # fewer samples than half a vector: the quarter diagonal as it is
    assert small.default_range == pytest.approx(wanted)
    assert gantry(10.0).default_range == pytest.approx(round(small.resolution / 16) * 16 / small.resolution)
    # an explicit resolution wins
    b = RobotBuilder("r")
    b.link("a", spheres=[[0, 0, 0, 0.1]]).link("b", spheres=[[0.5, 0, 0, 0.1]])
    b.joint("j", "revolute", "a", "b", limits=(-1, 1))
    assert b.build(resolution=50.0).default_settings().resolution == 50.0


def test_plan_uses_the_robot_defaults():
    robot = gantry(0.3)
    env = simdplan.Environment()
    env.add_box([0.15, 0.15, 0.15], half_extents=[0.05, 0.05, 0.05])  # in the way of the straight line
    res = simdplan.plan(robot, env, [0.0, 0.0, 0.0], [0.3, 0.3, 0.3], simplify=False)
    assert res.success and len(res.path) >= 2
    # edges no longer than the robot's range
    assert np.linalg.norm(np.diff(res.path, axis=0), axis=1).max() <= robot.default_range + 1e-6


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_speed_bound_bounds_every_sphere(seed):
    """No sphere centre moves farther than speed_bound x the joint-space distance of a small step."""
    robot = bench_robots.load(["panda", "ur5", "mobile_manipulator", "dual_arm"][seed % 4])
    rng = np.random.default_rng(seed)
    q0 = rng.uniform(robot.lower, robot.upper)
    step = rng.normal(size=robot.dof)
    step *= 1e-3 / np.linalg.norm(step)
    q1 = np.clip(q0 + step, robot.lower, robot.upper)
    moved = np.linalg.norm(robot.fk(q1)[:, :3].astype(np.float64) - robot.fk(q0)[:, :3], axis=1).max()
    assert moved <= robot.speed_bound * np.linalg.norm(q1 - q0) * (1 + 1e-3) + 2e-6  # float32 FK


def test_dynamic_domains_give_up_where_every_sample_is_rejected():
    """Domains that reject every sample (in many dimensions every sample is far from every node; here
    forced by a tiny radius) are dropped after 500 rejections in a row, and the plan still solves."""
    problem = simdplan.scenes.generate(bench_robots.dual_arm(), "shelf", 1, seed=1)[0]
    kw = dict(seed=2, time_limit=0, max_iterations=500_000, simplify=False)
    res = simdplan.plan(problem.robot, problem.env, problem.start, problem.goals, dd_radius=1e-6,
                        dd_min_radius=1e-6, **kw)
    assert res.success and res.stats["dd_rejected"] >= 500
    assert simdplan.plan(problem.robot, problem.env, problem.start, problem.goals, dynamic_domain=False,
                         **kw).stats["dd_rejected"] == 0
