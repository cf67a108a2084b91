"""The ``simdplan`` command: plan, bench mbm, info; exit codes and messages for user errors.

Most tests call ``cli.main(argv)`` in-process; a few run ``python -m simdplan`` in a subprocess
(the installed console script calls the same ``main``) to see exit codes and stderr as a user does.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import simdplan
from simdplan import cli, scenes

EXAMPLES = scenes.examples()


def run(*args, cwd=None, timeout=120):
    """``python -m simdplan ARGS`` with this interpreter and environment."""
    return subprocess.run([sys.executable, "-m", "simdplan", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=timeout, env=dict(os.environ))


def assert_user_error(proc, code=2, contains=()):
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("simdplan: ")
    for text in contains:
        assert text in lines[0], lines[0]


@pytest.fixture(scope="module")
def mbm_scene_file(tmp_path_factory):
    """A MotionBenchMaker problem written as a scene file (bookshelf_small 1, reference model)."""
    scene = scenes.mbm.load(classes=["bookshelf_small"], indices=[1], mode="reference")[0]
    path = tmp_path_factory.mktemp("scenes") / "bookshelf_small_1.yaml"
    scenes.save(scene, path)
    return path


def write_scene(path, start, goal, obstacles=""):
    path.write_text(f"robot: panda\nstart: {list(start)}\ngoal: {list(goal)}\n{obstacles}")
    return path


# ----------------------------------------------------------------------------- plan
def test_there_are_shipped_examples():
    assert EXAMPLES, "simdplan.scenes.examples() lists no shipped example scene"


@pytest.mark.parametrize("name", EXAMPLES)
def test_plan_each_example(name, tmp_path, capsys):
    out = tmp_path / "plan.json"
    code = cli.main(["plan", name, "--time-limit", "5", "--out", str(out)])
    text = capsys.readouterr()
    assert code == 0, text.err
    assert "success:" in text.out and "yes" in text.out.split("success:")[1].splitlines()[0]
    assert "verified:" in text.out
    assert "ISA:" in text.out and simdplan.isa() in text.out
    doc = json.loads(out.read_text())
    scene = scenes.load(scenes.example(name))
    path = np.array(doc["path"])
    assert doc["success"] is True
    assert path.ndim == 2 and path.shape[1] == scene.robot.dof and len(path) >= 2
    np.testing.assert_allclose(path[0], scene.start, atol=1e-9)
    assert np.min(np.abs(scene.goals - path[-1]).max(axis=1)) < 1e-9
    for key in ("iterations", "collision_checks", "planning_time_ns", "simplify_time_ns"):
        assert key in doc["stats"]


def test_plan_csv_and_flag_overrides(mbm_scene_file, tmp_path, capsys):
    out = tmp_path / "path.csv"
    code = cli.main(["plan", str(mbm_scene_file), "--planner", "rrt", "--seed", "7", "--no-simplify",
                     "--time-limit", "5", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    assert "rrt, seed 7" in text and "simplify off" in text and "certified Link" in text  # the default Link
    with open(out, newline="") as f:
        rows = list(csv.reader(f))
    scene = scenes.load(mbm_scene_file)
    assert rows[0] == scene.robot.joint_names
    path = np.array(rows[1:], dtype=float)
    assert path.shape[1] == scene.robot.dof and len(path) >= 2
    np.testing.assert_allclose(path[0], scene.start, atol=1e-9)
    assert "waypoints:" in text and str(len(path)) in text.split("waypoints:")[1].splitlines()[0]


@pytest.mark.parametrize("planner", ["rrtc", "ompl:RRTConnect"])
def test_plan_refused_as_unprovable_says_why(planner, tmp_path):
    """A floor 5 um under the panda's base (inside certified Link's margin of contact): a certified
    plan is refused at once, and the CLI prints the reason, for our planners and OMPL's alike."""
    if planner.startswith("ompl:"):
        pytest.importorskip("ompl")
    robot = simdplan.robots.load("panda")
    start, goal = [0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8], [0.5, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8]
    probe = simdplan.Environment()
    probe.add_plane([0.0, 0.0, 1.0], -1.0)
    lowest = robot.clearance(start, probe, self_collision=False) - 1.0  # the lowest sphere bottom, z
    scene = write_scene(tmp_path / "floor.yaml", start, goal,
                        f"obstacles:\n  - {{type: plane, normal: [0.0, 0.0, 1.0], offset: {lowest - 5e-6!r}}}\n")
    out = tmp_path / "never.json"
    proc = run("plan", scene, "--planner", planner, "--time-limit", "1", "--out", out)  # certified by default
    assert_user_error(proc, code=1, contains=("no path planned", "certified Link cannot prove", "out of the start",
                                              "nothing written"))
    assert not out.exists()
    # the discrete Link needs no proof: planned, and the summary says which Link checked the edges
    proc = run("plan", scene, "--planner", planner, "--link", "discrete", "--time-limit", "1")
    assert proc.returncode == 0 and "discrete Link" in proc.stdout, proc.stderr
    bad = run("plan", scene, "--link", "exact")  # argparse's own error: usage, then the reason
    assert bad.returncode == 2 and "--link: invalid choice: 'exact'" in bad.stderr


def test_plan_no_path_exit_1(mbm_scene_file, tmp_path):
    """One iteration and a microsecond: no path; exit 1, one line on stderr, nothing written."""
    out = tmp_path / "never.json"
    proc = run("plan", mbm_scene_file, "--time-limit", "1e-6", "--max-iterations", "1", "--out", out)
    assert_user_error(proc, code=1, contains=("no path found within", "1 iterations"))
    assert "success:" in proc.stdout
    assert not out.exists()


def test_plan_errors_exit_2(mbm_scene_file, tmp_path):
    # missing file, unknown example name, a directory
    assert_user_error(run("plan", tmp_path / "missing.yaml"), contains=("missing.yaml", "no such file"))
    assert_user_error(run("plan", "no_such_example"), contains=("no_such_example", "example"))
    assert_user_error(run("plan", tmp_path), contains=("directory",))
    # bad --out and bad settings fail before planning
    assert_user_error(run("plan", mbm_scene_file, "--out", tmp_path / "p.txt"), contains=(".json or .csv",))
    assert_user_error(run("plan", mbm_scene_file, "--time-limit", "-1"), contains=("time_limit",))


def test_plan_invalid_scene_files_exit_2(tmp_path):
    robot = simdplan.robots.load("panda")
    q = np.zeros(robot.dof)
    q[3], q[5] = -1.5, 1.5
    # malformed YAML, a bad key, a start outside the joint limits: the message names file and key
    bad_yaml = tmp_path / "malformed.yaml"
    bad_yaml.write_text("robot: panda\nstart: [0, 0,\n")
    assert_user_error(run("plan", bad_yaml), contains=("malformed.yaml",))
    bad_box = write_scene(tmp_path / "bad_box.yaml", q, q + 0.1,
                          "obstacles: [{type: box, position: [1, 2], half_extents: [0.1, 0.1, 0.1]}]\n")
    assert_user_error(run("plan", bad_box), contains=("bad_box.yaml", "obstacles[0].position"))
    # a start in collision: the planner's InvalidProblemError names the configuration
    hand = robot.fk(q)[-1, :3]
    colliding = write_scene(tmp_path / "colliding.yaml", q, q + 0.1,
                            f"obstacles: [{{type: sphere, position: {hand.tolist()}, radius: 0.1}}]\n")
    proc = run("plan", colliding)
    assert_user_error(proc, contains=("colliding.yaml", "start"))


def test_debug_keeps_the_traceback(tmp_path):
    proc = run("plan", tmp_path / "missing.yaml", "--debug")
    assert proc.returncode != 0 and "Traceback" in proc.stderr


def test_rich_output_when_stdout_is_a_terminal(mbm_scene_file, monkeypatch, capsys):
    pytest.importorskip("rich")
    monkeypatch.setattr(cli.output, "_stdout_is_tty", lambda: True)
    assert cli.main(["plan", str(mbm_scene_file), "--time-limit", "5"]) == 0
    out = capsys.readouterr().out
    assert "simdplan plan" in out and "success" in out and "verified" in out
    assert cli.main(["info"]) == 0
    assert simdplan.isa() in capsys.readouterr().out


# ----------------------------------------------------------------------------- bench mbm
def test_bench_mbm_cage(tmp_path):
    out = tmp_path / "bench.json"
    proc = run("bench", "mbm", "--problems", "cage", "--limit", "3", "--time-limit", "5", "--json", out,
               "--vamp", "off")
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert "cage" in proc.stdout and "verified" in proc.stdout
    # no other planner's figures unless measured in this run (--vamp off: none at all)
    lines = proc.stdout.splitlines()
    assert [line for line in lines if "VAMP" in line] == ["VAMP side by side: not run (--vamp off)"]
    assert not any(line.startswith("reference") for line in lines)
    assert simdplan.info()["isa"] in proc.stdout  # machine info printed
    doc = json.loads(out.read_text())
    recs = doc["records"]
    assert [(r["problem"], r["index"]) for r in recs] == [("cage", 1), ("cage", 2), ("cage", 3)]
    for r in recs:
        assert r["status"] in ("solved", "failed", "invalid")
        if r["solved"]:
            assert r["planning_time_us"] > 0 and isinstance(r["verified"], bool)
            assert len(r["path"]) == r["waypoints"]
    s = doc["summary"]["cage"]
    assert s["total"] == 3 and s["solved"] == sum(r["solved"] for r in recs)
    assert s["valid"] == sum(r["valid"] for r in recs)
    assert doc["summary"]["all"]["total"] == 3
    assert doc["machine"]["simdplan"]["isa"] == simdplan.info()["isa"]
    assert "anchor" not in doc and doc["baseline"] is None


def flag_invalid(monkeypatch, k: int):
    """MotionBenchMaker problem ``k`` of every load flagged invalid, as a file may flag it; returns
    the real loader."""
    real = scenes.mbm.load

    def load(**kw):
        out = real(**kw)
        out[k].valid = False
        return out

    monkeypatch.setattr(scenes.mbm, "load", load)
    return real


def test_bench_mbm_with_workers_plans_with_plan_many(tmp_path, monkeypatch, capsys):
    """--workers: the same records as plan_many gives (seed task_seed(seed, i)), a throughput line,
    and a problem flagged invalid still counted as invalid."""
    real = flag_invalid(monkeypatch, 1)
    out = tmp_path / "bench.json"
    assert cli.main(["bench", "mbm", "--problems", "box,cage", "--limit", "3", "--workers", "2", "--seed", "4",
                     "--link", "both", "--vamp", "off", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "throughput (discrete Link): 5 problems" in text and "throughput (certified Link): 5 problems" in text
    doc = json.loads(out.read_text())
    recs = [r for r in doc["records"] if r["link"] == "discrete"]
    assert [(r["problem"], r["index"], r["valid"]) for r in recs] == [
        ("box", 1, True), ("box", 2, False), ("box", 3, True), ("cage", 1, True), ("cage", 2, True),
        ("cage", 3, True)]
    problems = [p for p in real(classes=["box", "cage"], mode="reference") if p.index <= 3]
    for link in ("discrete", "certified"):
        expected = simdplan.plan_many([problems[k] for k in (0, 2, 3, 4, 5)], indices=[0, 2, 3, 4, 5], seed=4,
                                      link=link)
        for r, e in zip([r for r in doc["records"] if r["link"] == link and r["valid"]], expected, strict=True):
            assert r["solved"] == e.success and r["iterations"] == e.stats["iterations"]
            assert np.array_equal(np.array(r["path"]), e.path)
    assert doc["throughput"]["discrete"]["problems"] == 5 and doc["throughput"]["discrete"]["workers"] == 2
    assert_user_error(run("bench", "mbm", "--workers", "0"), contains=("--workers",))


def test_bench_mbm_invalid_problems_are_not_failures(monkeypatch, capsys):
    """A problem flagged invalid is counted as invalid and not planned."""
    flag_invalid(monkeypatch, 0)
    assert cli.main(["bench", "mbm", "--problems", "table_pick", "--limit", "2", "--time-limit", "5"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("table_pick"))
    assert "/1/2" in row.split()[1]


def test_bench_mbm_user_errors():
    assert_user_error(run("bench", "mbm", "--problems", "nope"), contains=("nope", "cage"))
    assert_user_error(run("bench", "mbm", "--limit", "0"), contains=("--limit",))
    assert_user_error(run("bench", "mbm", "--robot", "r2d2"), contains=("r2d2",))
    assert_user_error(run("bench", "mbm", "--pointcloud", "--point-radius", "-1"), contains=("--point-radius",))
    # VAMP has no exact cylinders: asking for it in exact mode is an error, not a silent skip
    assert_user_error(run("bench", "mbm", "--mode", "exact", "--vamp", "on", "--limit", "1"),
                      contains=("--vamp on", "reference"))
    assert_user_error(run("bench", "mbm", "--pointcloud", "--obstacles", "hulls", "--limit", "1"),
                      contains=("--pointcloud", "--obstacles hulls"))
    assert_user_error(run("bench", "mbm", "--obstacles", "meshes", "--vamp", "on", "--limit", "1"),
                      contains=("--vamp on", "meshes"))


@pytest.mark.parametrize("kind", ["meshes", "hulls"])
def test_bench_mbm_obstacles_as_meshes_or_hulls(kind, capsys):
    """--obstacles plans the same problems among meshes or hulls of the primitives, both Links side by
    side, VAMP (which has neither) skipped with the reason."""
    assert cli.main(["bench", "mbm", "--problems", "table_pick", "--limit", "1", "--obstacles", kind,
                     "--link", "both", "--time-limit", "5"]) == 0
    out = capsys.readouterr().out
    assert f"the reference obstacles as {kind}" in out
    assert "certified vs discrete Link" in out and "solved 1 vs 1" in out
    assert f"VAMP side by side: not run (VAMP has no {kind}" in out


def test_bench_link_both_alternates_which_link_plans_first(tmp_path):
    """With --link both, neither Link always plans a problem first (the first plan meets cold caches)."""
    out = tmp_path / "bench.json"
    assert cli.main(["bench", "mbm", "--problems", "table_pick", "--limit", "3", "--link", "both", "--vamp", "off",
                     "--json", str(out)]) == 0
    records = json.loads(out.read_text())["records"]
    assert [(r["index"], r["link"]) for r in records] == [(1, "certified"), (1, "discrete"), (2, "discrete"),
                                                         (2, "certified"), (3, "certified"), (3, "discrete")]


def test_bench_mbm_without_vamp_says_why(monkeypatch, capsys):
    from simdplan.bench import vamp_baseline

    monkeypatch.setattr(vamp_baseline, "load", lambda name, sampler="halton": (None, "VAMP is not installed (test)"))
    assert cli.main(["bench", "mbm", "--problems", "table_pick", "--limit", "1"]) == 0
    assert "VAMP side by side: not run (VAMP is not installed (test))" in capsys.readouterr().out
    assert cli.main(["bench", "mbm", "--problems", "table_pick", "--limit", "1", "--vamp", "on"]) == 2
    assert "VAMP is not installed (test)" in capsys.readouterr().err


def test_bench_mbm_side_by_side_with_vamp(tmp_path):
    """Only where VAMP is installed: both planners on the same problems, VAMP's rows and the ratios."""
    pytest.importorskip("vamp")
    out = tmp_path / "bench.json"
    proc = run("bench", "mbm", "--problems", "table_pick,cage", "--limit", "2", "--vamp", "on", "--json", out)
    assert proc.returncode == 0, proc.stderr
    assert "simdplan (certified Link) vs VAMP" in proc.stdout and "x)" in proc.stdout
    doc = json.loads(out.read_text())
    theirs = [r for r in doc["records"] if r.get("impl") == "vamp"]
    ours = [r for r in doc["records"] if r.get("impl") != "vamp"]
    assert [(r["problem"], r["index"]) for r in theirs] == [(r["problem"], r["index"]) for r in ours]
    assert all(r["solved"] and r["planning_time_us"] > 0 for r in theirs if r["valid"])
    assert doc["baseline"]["summary"]["all"]["solved"] == sum(r["solved"] for r in theirs)
    # VAMP's paths are re-verified as ours are, against the same obstacles
    assert all(isinstance(r["verified"], bool) and len(r["path"]) >= 2 for r in theirs if r["solved"])
    assert "its paths re-verified" in proc.stdout


# ----------------------------------------------------------------------------- info, usage
def test_info(capsys):
    proc = run("info")
    assert proc.returncode == 0 and simdplan.isa() in proc.stdout and "lanes" in proc.stdout
    assert cli.main(["info", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["isa"] == simdplan.isa() and info["lanes"] == simdplan.info()["lanes"]


def test_console_script_and_module_entry_points():
    """pyproject's ``simdplan = "simdplan.cli:main"`` and ``python -m simdplan`` reach the same main."""
    import re
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "pyproject.toml").read_text()
    module, name = re.search(r'^simdplan = "([\w.]+):(\w+)"', text, re.M).groups()
    assert getattr(__import__(module, fromlist=[name]), name) is cli.main
    proc = run("info", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["isa"] == simdplan.isa()


def test_usage_errors_exit_2(capsys):
    assert cli.main([]) == 2
    assert cli.main(["plan"]) == 2
    assert cli.main(["plan", "x.yaml", "--planner", "astar"]) == 2
    assert cli.main(["bench"]) == 2
    assert cli.main(["--help"]) == 0
    capsys.readouterr()


def test_bench_robots_small_run(tmp_path):
    """Two robots of different shape, one generated problem of one family each: a row per robot, records
    in the JSON, VAMP only where it has the robot."""
    out = tmp_path / "robots.json"
    proc = run("bench", "robots", "--robots", "panda,dual_arm", "--families", "box", "--problems", "1",
               "--json", out, timeout=300)
    assert proc.returncode == 0, proc.stderr
    robot_table, _, family_table = proc.stdout.partition("by problem family")
    rows = [line.split() for line in robot_table.splitlines() if line.split()[:1] in (["panda"], ["dual_arm"])]
    assert [r[0] for r in rows] == ["panda", "dual_arm"]
    assert rows[1][1] == "14"  # dof
    if "panda: VAMP" in proc.stdout:  # VAMP ran for the panda: its family row, and none for the dual arm
        assert [line.split()[:2] for line in family_table.splitlines() if line.split()[:1] in (["panda"], ["dual_arm"])
                ] == [["panda", "box"]]
    doc = json.loads(out.read_text())
    assert [s["robot"] for s in doc["summary"]] == ["panda", "dual_arm"]
    for s in doc["summary"]:
        assert s["total"] == 1 and s["check_ns_per_config"] > 0 and s["moving_spheres"] <= s["spheres"]
    assert doc["summary"][1]["baseline"] is None and "no model of dual_arm" in doc["summary"][1]["baseline_why"]
    rec = doc["records"]["dual_arm"]["simdplan"][0]
    assert rec["problem"] == "box" and rec["solved"] and rec["verified"] in (True, False)


def test_bench_robots_compares_certified_with_discrete(tmp_path):
    """--link both: every problem planned with each Link, a table of the two side by side, records per Link."""
    out = tmp_path / "robots.json"
    proc = run("bench", "robots", "--robots", "panda", "--families", "box", "--problems", "1", "--link", "both",
               "--vamp", "off", "--json", out, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "certified Link against discrete Link" in proc.stdout
    doc = json.loads(out.read_text())
    by_link = doc["records"]["panda"]["by_link"]
    assert [r["link"] for r in by_link["discrete"]] == ["discrete"] and [r["link"] for r in by_link["certified"]] == [
        "certified"]
    assert doc["records"]["panda"]["simdplan"] == by_link["certified"]  # the default Link first: VAMP beside it
    assert doc["summary"][0]["links"]["certified"]["total"] == 1
    d, c = by_link["discrete"][0], by_link["certified"][0]
    if d["solved"] and c["solved"]:
        per = doc["summary"][0]["links_per_problem"]
        assert per["n"] == 1 and per["planning_median_ratio"] == c["planning_time_us"] / d["planning_time_us"]


def test_bench_robots_on_point_clouds(tmp_path):
    """--pointcloud: every generated problem's obstacles become sampled surface points, for both Links
    (and VAMP where it runs, on the same points); the report says so and gives the cloud sizes."""
    out = tmp_path / "robots.json"
    proc = run("bench", "robots", "--robots", "ur5", "--families", "table", "--problems", "1", "--pointcloud", "3000",
               "--filter", "0.01", "--link", "both", "--json", out, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "as point clouds" in proc.stdout and "3,000 surface points per obstacle, filtered at 0.01 m" in proc.stdout
    doc = json.loads(out.read_text())
    by_link = doc["records"]["ur5"]["by_link"]
    kept = [r["cloud_kept"] for link in ("discrete", "certified") for r in by_link[link]]
    assert len(kept) == 2 and kept[0] == kept[1] > 0  # both Links planned against the same cloud
    assert doc["summary"][0]["cloud_points_median"] == kept[0]
    for r in doc["records"]["ur5"]["vamp"]:
        assert r["cloud_kept"] > 0


def test_bench_robots_user_errors():
    assert_user_error(run("bench", "robots", "--robots", "r2d2"), contains=("r2d2", "mobile_manipulator"))
    assert_user_error(run("bench", "robots", "--families", "kitchen"), contains=("kitchen", "shelf"))
    assert_user_error(run("bench", "robots", "--problems", "0"), contains=("--problems",))
    assert_user_error(run("bench", "robots", "--pointcloud", "0"), contains=("--pointcloud",))
    assert_user_error(run("bench", "robots", "--pointcloud", "--filter", "-1"), contains=("--filter",))
    assert_user_error(run("bench", "robots", "--pointcloud", "--point-radius", "nan"), contains=("--point-radius",))


def test_bench_robots_both_solved_pairs_problems():
    """Figures over the problems both planners solved: a problem only one solves (a long one here) is left
    out of both sides, where each planner's own mean would count it for that planner alone."""
    from simdplan.bench.multi_robot import both_solved

    def rec(t, ok=True):
        return {"planning_time_us": t, "solved": ok}

    ours = [rec(10.0), rec(30.0), rec(5000.0), rec(1.0, ok=False)]
    theirs = [rec(20.0), rec(40.0), rec(9e9, ok=False), rec(2.0)]
    b = both_solved(ours, theirs)
    assert b["n"] == 2
    assert b["ours_mean"] == 20.0 and b["theirs_mean"] == 30.0 and b["ratio_mean"] == 20.0 / 30.0
    assert b["ours_median"] == 20.0 and b["theirs_median"] == 30.0
    assert both_solved([rec(1.0, ok=False)], [rec(1.0)]) == {"n": 0}
    with pytest.raises(ValueError):
        both_solved([rec(1.0)], [])


def test_bench_robots_link_ratios_pair_problems():
    """Certified over discrete Link problem by problem: the median of the per-problem ratios, over the
    problems both solved. Here the ratio of the medians (30 / 20) is none of the problems' ratios."""
    from simdplan.bench.multi_robot import per_problem_ratios

    def rec(plan, total, ok=True):
        return {"planning_time_us": plan, "total_time_us": total, "solved": ok}

    discrete = [rec(10.0, 20.0), rec(20.0, 40.0), rec(100.0, 200.0), rec(5.0, 5.0, ok=False)]
    certified = [rec(30.0, 30.0), rec(12.0, 60.0), rec(400.0, 300.0), rec(1.0, 1.0)]
    r = per_problem_ratios(discrete, certified)
    assert r == {"n": 3, "planning_median_ratio": 3.0, "total_median_ratio": 1.5}
    assert per_problem_ratios([rec(1.0, 1.0, ok=False)], [rec(1.0, 1.0)]) == {
        "n": 0, "planning_median_ratio": None, "total_median_ratio": None}
    with pytest.raises(ValueError):
        per_problem_ratios([rec(1.0, 1.0)], [])


def test_bench_robots_by_family_pairs_problems_per_family():
    """The per-family comparison counts only problems both solved, family by family, with medians of
    planning time, iterations and time per iteration (an iteration count of 0 counts as 1)."""
    from simdplan.bench.multi_robot import by_family

    def rec(fam, t, its, ok=True):
        return {"problem": fam, "planning_time_us": t, "iterations": its, "solved": ok}

    ours = [rec("box", 10.0, 2), rec("box", 30.0, 6), rec("cage", 100.0, 50), rec("cage", 1.0, 0, ok=False)]
    theirs = [rec("box", 20.0, 10), rec("box", 40.0, 20), rec("cage", 50.0, 0), rec("cage", 2.0, 1)]
    f = by_family(ours, theirs)
    assert set(f) == {"box", "cage"}
    assert f["box"]["n"] == 2 and f["box"]["ours_median"] == 20.0 and f["box"]["theirs_median"] == 30.0
    assert f["box"]["ours_iterations"] == 4.0 and f["box"]["theirs_us_per_iteration"] == 2.0
    assert f["cage"]["n"] == 1 and f["cage"]["ratio_median"] == 2.0 and f["cage"]["theirs_us_per_iteration"] == 50.0
    assert by_family([rec("box", 1.0, 1, ok=False)], [rec("box", 1.0, 1)]) == {}


# ----------------------------------------------------------------------------- ik

IK_POSE = ["--pose", "0.4", "0.1", "0.5", "1", "0", "0", "0"]
IK_FAR = ["--pose", "3", "0", "0.5", "0", "0", "0", "1"]


@pytest.mark.parametrize("args, words", [
    (["ur5", "--srdf", "/nonexistent.srdf"], ["--srdf /nonexistent.srdf: no such file"]),
    (["ur5", "--srdf", __file__], ["--srdf goes with a URDF file"]),
    (["panda_table", "--srdf", __file__], ["--srdf goes with a URDF file"]),
    (["pandaa"], ["examples: panda_bookshelf", "robots: panda, ur5, iiwa, mobile_manipulator, dual_arm"]),
    (["dual_arm"], ["has 2 ends", "pass --link"]),
    (["panda", "--solutions", "0"], ["--solutions must be in [1, 10000], got 0"]),
    (["panda", "--seed", "-1"], ["--seed must be in [0, "]),
    (["panda", "--max-attempts", "0"], ["--max-attempts must be in [1, "]),
    (["panda", "--time-limit", "nan"], ["--time-limit must be finite"]),
    (["panda", "--position-tolerance", "-1"], ["--position-tolerance must be"]),
])
def test_ik_user_errors_name_the_flag(args, words, capsys):
    assert cli.main(["ik", *args, *IK_POSE]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("simdplan: ") and "\n" not in err and "link=" not in err, err
    for w in words:
        assert w in err, err


def test_ik_restarts_time_limit_and_mask_flags(capsys):
    assert cli.main(["ik", "panda", *IK_FAR, "--max-attempts", "40", "--json"]) == 1
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert (doc["attempts"], doc["stopped"]) == (40, "attempts") and "in 40 restarts" in out.err
    # a time limit alone is not cut short by the default restart cap
    assert cli.main(["ik", "panda", *IK_FAR, "--time-limit", "0.02", "--json"]) == 1
    out = capsys.readouterr()
    assert json.loads(out.out)["stopped"] == "time_limit" and "time limit passed" in out.err
    assert cli.main(["ik", "panda", *IK_POSE, "--mask", "pose", "--seed", str(2**64 - 1), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["success"] and doc["stopped"] == ""


def test_readme_and_module_synopses_of_ik_match_its_parser():
    from simdplan.cli.ik import MASKS

    parser = cli.build_parser()
    ik = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["ik"]
    flags = {o for a in ik._actions for o in a.option_strings if o.startswith("--")} - {"--help", "--debug"}
    readme = os.path.join(os.path.dirname(__file__), "..", "README.md")
    with open(readme) as f:
        readme_text = f.read()
    for text in (readme_text, cli.__doc__):
        lines = text.splitlines()
        start = next(i for i, line in enumerate(lines) if line.strip().startswith("simdplan ik "))
        synopsis = [lines[start]] + [line for line in lines[start + 1:start + 4] if line.strip().startswith("[")]
        synopsis = " ".join(synopsis)
        assert set(re.findall(r"--[a-z-]+", synopsis)) == flags, synopsis
        assert f"--mask {'|'.join(MASKS)}" in synopsis


def test_bench_robots_compares_the_specialized_kernel_with_the_generic_one(tmp_path):
    """--kernel both: every problem planned with each kernel, a table of the two side by side; the same
    plans (the kernels give the same answers), so the same iterations and paths."""
    out = tmp_path / "robots.json"
    proc = run("bench", "robots", "--robots", "ur5", "--families", "box", "--problems", "2", "--kernel", "both",
               "--vamp", "off", "--json", out, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "specialized against generic kernels" in proc.stdout and "kernels: ur5 specialized" in proc.stdout
    doc = json.loads(out.read_text())
    by_kernel = doc["records"]["ur5"]["by_kernel"]
    assert doc["records"]["ur5"]["simdplan"] == by_kernel["specialized"]
    for g, s in zip(by_kernel["generic"], by_kernel["specialized"], strict=True):
        assert (g["kernel"], s["kernel"]) == ("generic", "specialized")
        assert g["solved"] == s["solved"] and g["iterations"] == s["iterations"] and g["final_cost"] == s["final_cost"]
    assert doc["summary"][0]["kernels"]["specialized"]["total"] == 2


def test_bench_kernel_defaults_and_errors(tmp_path, monkeypatch):
    """SIMDPLAN_JIT=off (as here) and no --kernel: the generic kernels, said in the report; --kernel
    specialized without a compiler: a clear error."""
    proc = run("bench", "robots", "--robots", "panda", "--families", "box", "--problems", "1", "--vamp", "off")
    assert proc.returncode == 0, proc.stderr
    assert "kernels: panda generic (SIMDPLAN_JIT=off)" in proc.stdout
    monkeypatch.setenv("SIMDPLAN_CXX", str(tmp_path / "no-compiler"))
    assert_user_error(run("bench", "robots", "--robots", "panda", "--families", "box", "--problems", "1",
                          "--vamp", "off", "--kernel", "specialized"), contains=("--kernel specialized", "compiler"))
