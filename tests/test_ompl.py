"""OMPL planners with simdplan's checks (simdplan.planner.ompl): paths verified like our own planners'.

Every returned path is re-checked edge by edge with simdplan's discrete Link and, on one problem per
planner, sample by sample with the float64 NumPy reference (tests/reference.py); certified runs are
certified again edge by edge.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("ompl")

import reference as ref  # noqa: E402
import simdplan  # noqa: E402
from simdplan.planner import ompl as sp_ompl  # noqa: E402
from test_planner import PROBLEMS, specs_of, verify  # noqa: E402


@pytest.fixture(scope="module")
def panda():
    return simdplan.robots.load("panda")


@pytest.fixture(scope="module")
def problem():
    with open(PROBLEMS) as f:
        return next(p for p in json.load(f)["problems"]["table_pick"] if p["valid"])


def test_planner_list():
    names = sp_ompl.planners()
    for n in ("ompl:RRTConnect", "ompl:RRTstar", "ompl:BITstar", "ompl:PRMstar"):
        assert n in names
    assert sp_ompl.available()


@pytest.mark.parametrize("name", ["ompl:RRTConnect", "ompl:BITstar", "ompl:KPIECE1"])
def test_ompl_paths_pass_the_reference(panda, problem, name):
    specs = specs_of(problem)
    env, _ = ref.make_environment(specs)
    # NOTE: OMPL's random seed is process-global (see simdplan.planner.ompl), so budgets are generous
    res = simdplan.plan(panda, env, problem["start"], problem["goals"], planner=name, time_limit=1.0)
    assert res.success, res.message
    assert res.planner == name
    verify(panda, env, res, problem["start"], problem["goals"], panda.resolution,
           specs=specs if name == "ompl:RRTConnect" else None)
    st = res.stats
    assert st["collision_checks"] > 0 and st["state_checks"] + st["motion_checks"] > 0
    assert st["final_cost"] == pytest.approx(res.cost)
    assert st["goal_index"] >= 0


def test_ompl_with_certified_link(panda, problem):
    env, _ = ref.make_environment(specs_of(problem))
    res = simdplan.plan(panda, env, problem["start"], problem["goals"], planner="ompl:RRTConnect", time_limit=0.5,
                        link="certified")
    assert res.success
    for a, b in zip(res.path[:-1], res.path[1:]):
        assert panda.certify_motion(a, b, env).free


def test_ompl_bad_input(panda, problem):
    env, _ = ref.make_environment(specs_of(problem))
    with pytest.raises(ValueError, match="unknown OMPL planner"):
        simdplan.plan(panda, env, problem["start"], problem["goals"], planner="ompl:NoSuchPlanner")
    with pytest.raises(ValueError, match="time_limit"):
        simdplan.plan(panda, env, problem["start"], problem["goals"], planner="ompl:RRTConnect", time_limit=0)
    with pytest.raises(ValueError, match="planner must be"):
        simdplan.plan(panda, env, problem["start"], problem["goals"], planner="ompl:")


def test_ompl_failure_is_reported(panda):
    # a budget far too small for any planner to connect the bookshelf problem: reported, not raised
    scene = simdplan.scenes.load(simdplan.scenes.example("panda_bookshelf"))
    res = simdplan.plan(scene.robot, scene.env, scene.start, scene.goals, planner="ompl:RRTConnect", time_limit=1e-6)
    assert not res.success and res.path.shape == (0, 7) and "OMPL" in res.message


def test_cli_runs_an_ompl_planner():
    # certified Link: every edge is proven free, so the CLI's 10x re-check must pass (a discrete path
    # may graze an obstacle between its samples, and whether one does depends on the path found)
    out = subprocess.run([sys.executable, "-m", "simdplan", "plan", "panda_table", "--planner", "ompl:RRTConnect",
                          "--certified"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "ompl:RRTConnect" in out.stdout and "verified:              yes" in out.stdout
    assert "leaked" not in out.stderr  # OMPL's objects are freed (no reference cycle through C++)
