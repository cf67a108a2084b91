"""Joint-limit tolerance: starts and goals a rounding error past a limit are moved onto it.

Configurations from encoders, other software and float32 round trips land a few ulps past limits
written with 5-6 digits (3.14159265 against 3.14159). Within ``limit_tolerance`` the planners move
them onto the limit and say so; further out they refuse the problem with a message that shows the
difference. ``Robot.is_valid`` itself stays strict.
"""

import warnings

import numpy as np
import pytest

import simdplan
from simdplan.planner import InvalidProblemError, LimitClampWarning
from simdplan.robots import DEFAULT_LIMIT_TOLERANCE, RobotBuilder

TOL = DEFAULT_LIMIT_TOLERANCE


@pytest.fixture(scope="module")
def arm():
    """Two revolute joints limited to +-3.14159 (five digits, as many URDFs write pi) and a prismatic one."""
    b = RobotBuilder("limits")
    b.link("base", spheres=[[0, 0, 0.05, 0.05]])
    b.link("l1", spheres=[[0.2, 0, 0, 0.04]])
    b.link("l2", spheres=[[0.2, 0, 0, 0.04]])
    b.link("l3", spheres=[[0, 0, 0.1, 0.03]])
    b.joint("j1", "revolute", "base", "l1", xyz=[0, 0, 0.1], axis=[0, 0, 1], limits=(-3.14159, 3.14159))
    b.joint("j2", "revolute", "l1", "l2", xyz=[0.3, 0, 0], axis=[0, 0, 1], limits=(-3.14159, 3.14159))
    b.joint("j3", "prismatic", "l2", "l3", xyz=[0.3, 0, 0], axis=[0, 0, 1], limits=(0.0, 0.2))
    return b.build()


GOAL = np.array([1.0, 0.5, 0.1])


def test_robot_clamp_at_inside_and_outside_the_tolerance(arm):
    hi = arm.upper
    q = np.array([[hi[0] + 0.5 * TOL, 0.0, 0.1],   # just outside: moved
                  [hi[0] - 0.5 * TOL, 0.0, 0.1],   # just inside: untouched
                  [hi[0] + 2.0 * TOL, 0.0, 0.1],   # beyond the tolerance: untouched
                  [0.0, 0.0, -0.5 * TOL]])          # prismatic, metres: moved onto 0
    out, moved = arm.clamp_to_limits(q, TOL)
    assert moved.tolist() == [[True, False, False], [False, False, False], [False, False, False],
                              [False, False, True]]
    assert out[0, 0] == hi[0] and out[1, 0] == q[1, 0] and out[2, 0] == q[2, 0] and out[3, 2] == 0.0
    assert q[0, 0] > hi[0]  # the input is not modified
    assert arm.is_valid(out[0]) and not arm.is_valid(q[0])  # is_valid stays strict
    with pytest.raises(ValueError, match="tolerance"):
        arm.clamp_to_limits(q, -1.0)
    with pytest.raises(ValueError, match="shape"):
        arm.clamp_to_limits(np.zeros(2), TOL)


def test_plan_moves_a_start_just_past_a_limit_and_says_so(arm):
    start = np.array([3.14159265, 0.0, 0.1])  # 2.65e-6 past 3.14159
    with pytest.warns(LimitClampWarning, match=r"start j1: 3\.14159265 -> 3\.14159"):
        res = simdplan.plan(arm, None, start, GOAL, seed=1)
    assert res.success
    assert res.stats["limit_clamped"] == 1 and "onto their limits" in res.message
    assert res.path[0, 0] == arm.upper[0] and np.array_equal(res.path[-1], GOAL)


def test_plan_at_and_inside_the_limit_is_silent(arm):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = simdplan.plan(arm, None, np.array([3.14159, 0.0, 0.1]), GOAL, seed=1)
    assert res.success and res.stats["limit_clamped"] == 0 and "limits" not in res.message


def test_plan_refuses_beyond_the_tolerance_with_enough_digits(arm):
    start = np.array([3.14159 + 3 * TOL, 0.0, 0.1])
    with pytest.raises(InvalidProblemError, match=r"start is invalid: joint j1 = 3\.14189 is outside its limits "
                                                  r"\[-3\.14159, 3\.14159\] by 0\.0003"):
        simdplan.plan(arm, None, start, GOAL)
    # the same value is accepted with a wider tolerance, refused with none
    with pytest.warns(LimitClampWarning):
        assert simdplan.plan(arm, None, start, GOAL, limit_tolerance=1e-3, seed=1).success
    with pytest.raises(InvalidProblemError, match=r"= 3\.14159265 is outside"):
        simdplan.plan(arm, None, np.array([3.14159265, 0.0, 0.1]), GOAL, limit_tolerance=0.0)


def test_goals_are_moved_too_and_counted(arm):
    goals = np.array([[-3.14159 - 0.5 * TOL, 0.0, 0.1], [1.0, 0.5, 0.2 + 0.5 * TOL]])
    with pytest.warns(LimitClampWarning, match="goal 0 j1.*goal 1 j3"):
        res = simdplan.plan(arm, None, np.zeros(3), goals, seed=2)
    assert res.success and res.stats["limit_clamped"] == 2
    end = res.path[-1]
    assert np.array_equal(end, [-3.14159, 0.0, 0.1]) or np.array_equal(end, [1.0, 0.5, 0.2])


def test_roadmap_queries_and_ompl_use_the_tolerance(arm):
    start = np.array([3.14159265, 0.0, 0.1])
    rm = simdplan.planner.Roadmap(arm, None, seed=0)
    with pytest.warns(LimitClampWarning):
        assert rm.query(start, GOAL).success
    pytest.importorskip("ompl")
    with pytest.warns(LimitClampWarning):
        res = simdplan.plan(arm, None, start, GOAL, planner="ompl:RRTConnect", time_limit=0.5)
    assert res.success and res.stats["limit_clamped"] == 1


def test_limit_tolerance_is_validated(arm):
    with pytest.raises(ValueError, match="limit_tolerance"):
        simdplan.plan(arm, None, np.zeros(3), GOAL, limit_tolerance=-1e-4)
    with pytest.raises(ValueError, match="limit_tolerance"):
        simdplan.plan(arm, None, np.zeros(3), GOAL, limit_tolerance=float("nan"))


def test_scene_files_take_limit_tolerance(tmp_path, arm):
    scene = simdplan.scenes.load(simdplan.scenes.example("panda_table"))
    q = scene.start.copy()
    q[0] = scene.robot.upper[0] + 5e-5
    scene.start = q
    scene.settings = simdplan.planner.PlannerSettings(limit_tolerance=1e-5).validated()
    path = tmp_path / "s.yaml"
    simdplan.scenes.save(scene, path)
    loaded = simdplan.scenes.load(path)
    assert loaded.settings.limit_tolerance == 1e-5
    fields = {k: v for k, v in vars(loaded.settings).items() if k != "planner"}
    with pytest.raises(InvalidProblemError, match="outside its limits"):
        simdplan.plan(loaded.robot, loaded.env, loaded.start, loaded.goals, **fields)


def test_cli_plans_a_scene_with_a_start_just_past_a_limit(tmp_path):
    import subprocess
    import sys

    scene = simdplan.scenes.load(simdplan.scenes.example("panda_table"))
    q = scene.start.copy()
    q[0] = scene.robot.upper[0] + 5e-5
    scene.start = q
    path = simdplan.scenes.save(scene, tmp_path / "clamp.yaml")
    out = subprocess.run([sys.executable, "-m", "simdplan", "plan", path, "--certified"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "joint limits:" in out.stdout and "panda_joint1" in out.stdout
    assert "verified:              yes" in out.stdout  # against the start the planner used, on the limit
    assert "Warning" not in out.stderr
