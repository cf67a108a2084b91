"""``simdplan batch``: every task written once as it finishes, bad scene files recorded, and a run
killed halfway completed by ``--resume`` without duplicates."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import yaml

import simdplan
from simdplan import cli, scenes
from simdplan.planner import task_seed


def lines(path) -> list[dict]:
    with open(path) as f:
        return [json.loads(line) for line in f]


@pytest.fixture()
def folder(tmp_path):
    """Four scene files (two robots) and a copy in a subfolder."""
    d = tmp_path / "scenes"
    (d / "more").mkdir(parents=True)
    for name in ("panda_table", "panda_cage", "ur5_table"):
        shutil.copy(scenes.example(name), d / f"{name}.yaml")
    shutil.copy(scenes.example("panda_table"), d / "more" / "again.yaml")
    return d


def test_batch_writes_each_task_once_with_the_seed_of_its_index(folder, tmp_path, capsys):
    out = tmp_path / "results.jsonl"
    assert cli.main(["batch", str(folder), "--out", str(out), "--seed", "3", "--workers", "2"]) == 0
    got = lines(out)
    files = sorted(str(p) for p in folder.rglob("*.yaml"))
    assert sorted(r["task"] for r in got) == files
    assert sorted(r["index"] for r in got) == list(range(4))
    by_task = {r["task"]: r for r in got}
    loaded = [scenes.load(f) for f in files]
    expected = simdplan.plan_many(loaded, seed=3)  # the same tasks, in the same order: the same seeds
    for f, e in zip(files, expected):
        r = by_task[f]
        assert r["success"] and r["stats"]["seed"] == task_seed(3, r["index"]) == e.stats["seed"]
        assert np.array_equal(np.array(r["path"]), e.path)
    assert "4 solved" in capsys.readouterr().out


def test_batch_refuses_to_append_to_results_without_resume(folder, tmp_path, capsys):
    out = tmp_path / "results.jsonl"
    assert cli.main(["batch", str(folder / "panda_table.yaml"), "--out", str(out)]) == 0
    capsys.readouterr()
    assert cli.main(["batch", str(folder), "--out", str(out)]) == 2
    assert "already holds 1 results; add --resume" in capsys.readouterr().err
    assert cli.main(["batch", str(folder), "--out", str(out), "--resume"]) == 0
    got = lines(out)
    assert len(got) == 4 and len({r["task"] for r in got}) == 4


def test_scene_files_that_do_not_load_are_results_too(folder, tmp_path):
    (folder / "broken.yaml").write_text("robot: [1")
    (folder / "no_start.yaml").write_text("robot: panda\n")
    out = tmp_path / "results.jsonl"
    assert cli.main(["batch", str(folder), "--out", str(out)]) == 0
    got = {os.path.basename(r["task"]): r for r in lines(out)}
    assert len(got) == 6
    assert got["broken.yaml"]["error"] == "SceneError" and "malformed YAML" in got["broken.yaml"]["message"]
    assert got["no_start.yaml"]["error"] == "SceneError" and "start" in got["no_start.yaml"]["message"]
    assert all(got[n]["success"] for n in ("panda_table.yaml", "panda_cage.yaml", "ur5_table.yaml", "again.yaml"))


@pytest.mark.parametrize("argv, words", [
    (["--out", "results.json"], "use a .jsonl file name"),
    (["--out", "results.jsonl", "--workers", "0"], "--workers must be >= 1"),
    (["--out", "results.jsonl", "--time-limit", "-1"], "time_limit"),
])
def test_bad_flags_are_user_errors(folder, tmp_path, capsys, monkeypatch, argv, words):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["batch", str(folder), *argv]) == 2
    assert words in capsys.readouterr().err


def test_an_empty_folder_is_a_user_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    assert cli.main(["batch", str(tmp_path / "empty"), "--out", str(tmp_path / "r.jsonl")]) == 2
    assert "no scene files" in capsys.readouterr().err


@pytest.mark.skipif(os.name != "posix", reason="kills a process with SIGKILL")
def test_a_killed_run_is_completed_by_resume_without_duplicates(tmp_path):
    # each task simplifies until its time limit (0.25 s), so the run takes ~1.5 s on 2 workers
    data = yaml.safe_load(open(scenes.example("panda_table")))
    data["planner"] = {"simplify_iterations": 10**9, "time_limit": 0.25}
    d = tmp_path / "slow"
    d.mkdir()
    for i in range(12):
        (d / f"task{i:02d}.yaml").write_text(yaml.safe_dump(data))
    out = tmp_path / "results.jsonl"
    cmd = [sys.executable, "-m", "simdplan", "batch", str(d), "--out", str(out), "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 3):
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    finally:
        proc.kill()
    written = out.read_text().count("\n")
    assert 3 <= written < 12, written
    with open(out, "a") as f:
        f.write('{"task": "cut sh')  # as if killed in the middle of a line
    done = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = lines(out)
    assert sorted(r["task"] for r in got) == sorted(str(p) for p in d.glob("*.yaml"))
    assert sorted(r["index"] for r in got) == list(range(12))
    assert f"{12 - written} planned now" in done.stdout
