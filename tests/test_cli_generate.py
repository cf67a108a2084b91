"""``simdplan generate``: a dataset of plans whose records replay, written in whole parts, finished by
``--resume`` with the same content."""

from __future__ import annotations

import json

import numpy as np
import yaml

import simdplan
from simdplan import cli, scenes
from simdplan.planner import task_seed

# no time limit: every plan ends on its iteration budget, so the dataset repeats exactly
ARGS = ["generate", "--robot", "panda", "--families", "table,box", "--problems", "2", "--planners", "rrtc,rrt",
        "--part-size", "3", "--seed", "5", "--time-limit", "0", "--max-iterations", "20000"]


def records(folder) -> list[dict]:
    manifest = json.loads((folder / "dataset.json").read_text())
    out = []
    for part in manifest["parts"]:
        out += [json.loads(line) for line in (folder / part).read_text().splitlines()]
    return out


def test_a_dataset_holds_every_task_once_and_its_records_replay(tmp_path, capsys):
    out = tmp_path / "ds"
    assert cli.main([*ARGS, "--out", str(out)]) == 0
    manifest = json.loads((out / "dataset.json").read_text())
    assert manifest["format"] == "simdplan-dataset/1" and manifest["command"] == [*ARGS, "--out", str(out)]
    assert manifest["tasks"] == 8 and manifest["parts"] == ["part-00000.jsonl", "part-00001.jsonl", "part-00002.jsonl"]
    got = records(out)
    assert [r["task"] for r in got] == list(range(8))
    assert [r["planner"] for r in got] == ["rrtc", "rrt"] * 4
    assert [r["problem"] for r in got[::2]] == ["table_1", "table_2", "box_1", "box_2"]
    assert sum(r["success"] for r in got) >= 6
    for r in got:
        assert r["seed"] == task_seed(5, r["task"])
        path = tmp_path / "scene.yaml"
        path.write_text(yaml.safe_dump(r["scene"]))
        scene = scenes.load(path)
        again = simdplan.plan(scene.robot, scene.env, scene.start, scene.goals, planner=r["planner"], seed=r["seed"],
                              time_limit=0, max_iterations=20000)
        assert again.success == r["success"]
        assert np.array_equal(again.path, np.array(r["path"]).reshape(again.path.shape))
    assert "8 planned now" in capsys.readouterr().out


def untimed(path) -> list[dict]:
    """A part's records without the times (ns), which no two runs share."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows:
        r["stats"] = {k: v for k, v in r["stats"].items() if not k.endswith("_ns")}
    return rows


def test_resume_rewrites_a_missing_part_the_same_and_refuses_another_command(tmp_path, capsys):
    out = tmp_path / "ds"
    assert cli.main([*ARGS, "--out", str(out)]) == 0
    before = untimed(out / "part-00001.jsonl")
    (out / "part-00001.jsonl").unlink()
    capsys.readouterr()
    assert cli.main([*ARGS, "--out", str(out)]) == 2
    assert "add --resume" in capsys.readouterr().err
    assert cli.main([*ARGS, "--out", str(out), "--resume", "--workers", "1"]) == 0
    assert "3 planned now (5 already written)" in capsys.readouterr().out
    assert untimed(out / "part-00001.jsonl") == before and len(before) == 3
    other = [a if a != "5" else "6" for a in ARGS]
    assert cli.main([*other, "--out", str(out), "--resume"]) == 2
    assert "--seed 5 there, 6 now" in capsys.readouterr().err
    assert json.loads((out / "dataset.json").read_text())["command"] == [*ARGS, "--out", str(out)]


def test_resume_compares_the_settings_not_their_spelling(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first = [*ARGS, "--out", "G2"]
    assert cli.main(first) == 0
    (tmp_path / "G2" / "part-00002.jsonl").unlink()
    capsys.readouterr()
    # the same dataset spelled otherwise: another --out path, --flag=value, spaces in lists, the order of flags
    spelled = ["generate", "--robot=panda", "--families", "table, box", "--problems", "2", "--planners=rrtc,rrt",
               "--seed=5", "--part-size", "3", "--max-iterations", "20000", "--time-limit", "0.0", "--out", "./G2",
               "--resume"]
    assert cli.main(spelled) == 0, capsys.readouterr().err
    assert "2 planned now (6 already written)" in capsys.readouterr().out
    manifest = json.loads((tmp_path / "G2" / "dataset.json").read_text())
    assert manifest["command"] == first  # the command that made the dataset, not the resume's
    assert [r["command"] for r in manifest["resumed"]] == [spelled]
    assert len(manifest["parts"]) == 3 and [r["task"] for r in records(tmp_path / "G2")] == list(range(8))
    for changed, words in (("--part-size=4", "--part-size 3 there, 4 now"),
                           ("--planners=rrtc", "--planners rrtc,rrt there, rrtc now"),
                           ("--families=table", "--families table,box there, table now")):
        assert cli.main([*spelled, changed]) == 2
        err = capsys.readouterr().err
        assert words in err and "only --workers and --ray may change" in err


def test_a_bad_robot_leaves_no_folder(tmp_path, capsys):
    for robot in ("r2d2", str(tmp_path / "missing.urdf")):
        assert cli.main(["generate", "--robot", robot, "--out", str(tmp_path / "ds")]) == 2
        assert "not a robot name" in capsys.readouterr().err
        assert not (tmp_path / "ds").exists()


def test_srdf_is_checked_not_ignored(tmp_path, capsys):
    # a robot name brings its own SRDF, and a missing file is named: --srdf was silently ignored
    srdf = tmp_path / "robot.srdf"
    srdf.write_text("<robot name='panda'/>")
    for robot, srdf_arg, words in (("panda", str(srdf), "brings its own"),
                                   ("panda", str(tmp_path / "nope.srdf"), "no such file")):
        assert cli.main(["generate", "--robot", robot, "--srdf", srdf_arg, "--out", str(tmp_path / "ds")]) == 2
        assert words in capsys.readouterr().err
        assert not (tmp_path / "ds").exists()


def test_bad_generate_flags_are_user_errors(tmp_path, capsys):
    for argv, words in ((["--families", "moon"], "unknown family moon"), (["--problems", "0"], ">= 1"),
                        (["--planners", "ompl:RRT"], "C++ planners"), (["--robot", "r2d2"], "not a robot name")):
        args = ["generate", "--robot", "panda", "--out", str(tmp_path / "x"), *argv]
        assert cli.main(args) == 2
        assert words in capsys.readouterr().err
