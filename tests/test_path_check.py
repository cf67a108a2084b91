"""simdplan.check_path: the one dense re-check of a returned path (sphere model), used by ``simdplan
plan``, ``simdplan bench`` and here; and the benchmark output shows no other planner's figures it did
not measure in the same run."""

from __future__ import annotations

import json

import numpy as np
import pytest

import simdplan
from simdplan import cli, scenes
from simdplan.bench import mbm as bench_mbm
from simdplan.bench import records
from simdplan.path_check import PathCheck


@pytest.fixture(scope="module")
def shelf():
    """A MotionBenchMaker problem (bookshelf_small 1, reference model): the shelf lies between start and goal."""
    return scenes.mbm.load(classes=["bookshelf_small"], indices=[1], mode="reference")[0]


@pytest.fixture(scope="module")
def shelf_file(shelf, tmp_path_factory):
    path = tmp_path_factory.mktemp("scenes") / "bookshelf_small_1.yaml"
    scenes.save(shelf, path)
    return path


def test_public(shelf):
    assert simdplan.check_path is simdplan.path_check.check_path
    assert "check_path" in simdplan.__all__ and "PathCheck" in simdplan.__all__
    # one re-check: no second copy left in the benchmark records or the command
    assert not hasattr(records, "verify_path") and not hasattr(records, "worst_depth")
    assert not hasattr(cli, "verify_path")


def test_catches_bad_paths(shelf):
    robot, env = shelf.robot, shelf.env
    straight = np.array([shelf.start, shelf.goals[0]])
    assert not robot.is_motion_valid(*straight, env)  # the shelf is in the way
    v = simdplan.check_path(robot, env, straight, shelf.start, shelf.goals, resolution=32.0)
    assert isinstance(v, PathCheck) and not v.ok and not v
    assert v.bad_edges == 1 and v.failing_edges == (0,) and v.max_depth_m > 0 and v.resolution == 320.0
    v = simdplan.check_path(robot, env, np.array([shelf.start, shelf.start]), shelf.start, shelf.goals, 32.0)
    assert not v.ok and "goal" in v.reason
    result = simdplan.plan(robot, env, shelf.start, shelf.goals, seed=1, time_limit=5)
    assert result.success
    v = simdplan.check_path(robot, env, result.path, shelf.start, shelf.goals, 32.0, factor=1)
    assert v.bad_edges == 0 and v.bad_waypoints == 0 and v.failing_edges == () and v.resolution == 32.0
    # a waypoint in collision is named as such, apart from the edges that reach it
    rng = np.random.default_rng(0)
    Q = rng.uniform(robot.lower, robot.upper, (400, robot.dof))
    hit = Q[~robot.is_valid_many(Q, env)][0]
    detour = np.array([shelf.start, hit, shelf.goals[0]])
    v = simdplan.check_path(robot, env, detour, shelf.start, shelf.goals, 32.0)
    assert not v.ok and v.bad_waypoints == 1 and v.bad_edges == 2 and "1 of 3 waypoints collide" in v.reason
    assert v.failing_edges == (0, 1) and v.edges == 2
    d = v.as_dict()
    assert d["ok"] is False and d["failing_edges"] == (0, 1)


def test_defaults_and_optional_ends(shelf):
    """Without start and goals only collisions count; the default resolution is 10x the robot's."""
    robot, env = shelf.robot, shelf.env
    result = simdplan.plan(robot, env, shelf.start, shelf.goals, seed=1, time_limit=5, link="certified")
    assert result.success
    v = simdplan.check_path(robot, env, result)  # a PlanResult is accepted as the path
    assert v.ok and v.reason is None and v.resolution == pytest.approx(10 * robot.resolution)
    reversed_path = result.path[::-1]
    assert simdplan.check_path(robot, env, reversed_path).ok  # no ends given: direction does not matter
    assert not simdplan.check_path(robot, env, reversed_path, shelf.start, shelf.goals).ok
    assert simdplan.check_path(robot, env, result.path, certified=True).ok


@pytest.mark.parametrize("gap,ok", [(1e-4, True), (3e-5, True), (-1e-5, False)])
def test_certified_check_retries_finer_before_failing_an_edge(gap, ok):
    """An edge 0.03-0.1 mm from touching itself is too close to call at the default min_step but
    provable with finer steps: check_path certifies it again finer; a real contact still fails."""
    from test_proximity import swinger

    robot, env = swinger(gap), simdplan.Environment()
    path = [[-0.9, 0.0], [1.1, 0.0]]
    if gap > 0:
        assert robot.certify_motion(*path, env).status == "undecided"
    v = simdplan.check_path(robot, env, path, certified=True)
    assert v.ok == ok and v.failing_edges == (() if ok else (0,))


def test_bad_input_names_the_argument(shelf):
    robot, env = shelf.robot, shelf.env
    good = np.array([shelf.start, shelf.start])
    with pytest.raises(ValueError, match="path"):
        simdplan.check_path(robot, env, np.zeros((2, robot.dof + 1)))
    with pytest.raises(ValueError, match="path"):
        simdplan.check_path(robot, env, np.zeros((0, robot.dof)))
    with pytest.raises(ValueError, match="path.*NaN"):
        simdplan.check_path(robot, env, np.full((2, robot.dof), np.nan))
    with pytest.raises(ValueError, match="start"):
        simdplan.check_path(robot, env, good, start=np.zeros(robot.dof - 1))
    with pytest.raises(ValueError, match="goals"):
        simdplan.check_path(robot, env, good, goals=np.zeros((1, 3)))
    with pytest.raises(ValueError, match="resolution"):
        simdplan.check_path(robot, env, good, resolution=0)
    with pytest.raises(ValueError, match="factor"):
        simdplan.check_path(robot, env, good, factor=-1)
    with pytest.raises(ValueError, match="padding"):
        simdplan.check_path(robot, env, good, padding=-0.01)
    with pytest.raises(TypeError, match="path"):
        simdplan.check_path(robot, env, [["a"] * robot.dof])


def _failing(calls):
    """check_path as it is, recording its calls, but with a verdict that fails every path."""
    real = simdplan.check_path

    def check(*args, **kwargs):
        calls.append((args, kwargs))
        real(*args, **kwargs)
        return PathCheck(ok=False, reason="forced failure (test)", edges=1, failing_edges=(0,), bad_edges=1,
                         bad_waypoints=0, max_depth_m=0.001, resolution=1.0)
    return check


def test_plan_reports_check_path(shelf_file, monkeypatch, capsys):
    """``simdplan plan``'s "verified" row is check_path's verdict, at 10x the planning resolution."""
    import simdplan.cli.plan as plan_cmd

    assert plan_cmd.check_path is simdplan.check_path
    calls = []
    monkeypatch.setattr(plan_cmd, "check_path", _failing(calls))
    assert cli.main(["plan", str(shelf_file), "--time-limit", "5"]) == 0
    captured = capsys.readouterr()
    assert len(calls) == 1
    args = calls[0][0]
    assert args[6] == 10  # factor
    assert "verified:" in captured.out and "NO (10x the planning resolution): forced failure (test)" in captured.out
    assert "failed the independent check: forced failure (test)" in captured.err


def test_bench_records_check_path(monkeypatch, tmp_path, capsys):
    """``simdplan bench``'s "verified" column and records are check_path's verdicts."""
    assert records.check_path is simdplan.check_path
    calls = []
    monkeypatch.setattr(records, "check_path", _failing(calls))
    out = tmp_path / "bench.json"
    assert cli.main(["bench", "mbm", "--problems", "table_pick", "--limit", "1", "--time-limit", "5", "--vamp",
                     "off", "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    solved = [r for r in doc["records"] if r["solved"]]
    assert solved and len(calls) == len(solved)
    assert all(r["verified"] is False and r["verify_message"] == "forced failure (test)" for r in solved)
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("table_pick"))
    assert "FAIL" in row


def test_bench_shows_no_unmeasured_competitor_figures(monkeypatch, tmp_path, capsys):
    """Without VAMP in the run, no VAMP figure is printed or written (neither a table row nor a quoted
    reference), with obstacles or point clouds."""
    from simdplan.bench import vamp_baseline

    monkeypatch.setattr(vamp_baseline, "load", lambda name, sampler="halton": (None, "VAMP is not installed (test)"))
    for extra in ([], ["--pointcloud", "300"]):
        out = tmp_path / "bench.json"
        assert cli.main(["bench", "mbm", "--problems", "table_pick", "--limit", "1", "--time-limit", "5",
                         "--json", str(out), *extra]) == 0
        lines = capsys.readouterr().out.splitlines()
        assert [line for line in lines if "VAMP" in line] == ["VAMP side by side: not run (VAMP is not installed (test))"]
        assert not any(line.startswith("reference") or "Reference" in line for line in lines), lines
        doc = json.loads(out.read_text())
        assert doc["baseline"] is None and "anchor" not in doc
        assert "VAMP" not in json.dumps({k: v for k, v in doc.items() if k != "records"}).replace(
            "VAMP is not installed", "")
    assert not hasattr(bench_mbm, "MBM_ANCHOR") and not hasattr(cli, "MBM_ANCHOR")
