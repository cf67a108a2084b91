"""``simdplan batch``: every task written once as it finishes, bad scene files recorded, and a run
killed halfway completed by ``--resume`` without duplicates."""

from __future__ import annotations

import hashlib
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


def test_resume_knows_tasks_by_their_resolved_file(folder, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(folder.parent)
    out = tmp_path / "results.jsonl"
    assert cli.main(["batch", "scenes/more", "--out", str(out)]) == 0
    capsys.readouterr()
    # the same file relative and absolute in one command is one task; a resume by the absolute path plans the rest
    assert cli.main(["batch", str(folder), "scenes/panda_table.yaml", "--out", str(out), "--resume"]) == 0
    assert "4 scene files; 1 already in" in capsys.readouterr().out
    got = lines(out)
    assert len(got) == 4 and len({r["file"] for r in got}) == 4
    assert {r["file"] for r in got} == {str(p.resolve()) for p in folder.rglob("*.yaml")}
    assert cli.main(["batch", "scenes", "--out", str(out), "--resume"]) == 0
    assert "0 planned now" in capsys.readouterr().out and len(lines(out)) == 4


@pytest.mark.parametrize("flags, words", [
    (["--seed", "4"], "--seed 3 there, 4 now"),
    (["--seed", "3", "--planner", "prm"], "--planner not given there, prm now"),
    (["--seed", "3", "--link", "discrete"], "--link not given there, discrete now"),
    (["--seed", "3", "--no-simplify"], "--no-simplify not given there, given now"),
    ([], "--seed 3 there, not given now"),
])
def test_resume_with_other_settings_is_refused(folder, tmp_path, capsys, flags, words):
    out = tmp_path / "results.jsonl"
    assert cli.main(["batch", str(folder / "panda_table.yaml"), "--out", str(out), "--seed", "3"]) == 0
    before = out.read_text()
    capsys.readouterr()
    assert cli.main(["batch", str(folder), "--out", str(out), "--resume", *flags]) == 2
    err = capsys.readouterr().err
    assert words in err and "resume with the same flags" in err and "Traceback" not in err
    assert out.read_text() == before
    # flags that only say where to plan may change
    assert cli.main(["batch", str(folder), "--out", str(out), "--resume", "--seed", "3", "--workers", "1"]) == 0
    assert len(lines(out)) == 4


def test_resume_plans_again_a_file_that_did_not_load_or_changed(folder, tmp_path, capsys):
    good = (folder / "panda_table.yaml").read_text()
    (folder / "broken.yaml").write_text("robot: [1")
    out = tmp_path / "results.jsonl"
    assert cli.main(["batch", str(folder), "--out", str(out)]) == 0
    assert sum(r["error"] == "SceneError" and not r["loaded"] for r in lines(out)) == 1
    capsys.readouterr()
    (folder / "broken.yaml").write_text(good)  # fixed
    (folder / "ur5_table.yaml").write_text(open(scenes.example("ur5_table")).read() + "\n# edited\n")
    assert cli.main(["batch", str(folder), "--out", str(out), "--resume"]) == 0
    assert "2 planned now (2 again" in capsys.readouterr().out
    got = {os.path.basename(r["task"]): r for r in lines(out)}
    assert len(lines(out)) == 5 and len(got) == 5  # the old lines replaced, not kept beside the new ones
    assert got["broken.yaml"]["success"] and got["broken.yaml"]["loaded"]
    assert got["ur5_table.yaml"]["sha256"] == hashlib.sha256((folder / "ur5_table.yaml").read_bytes()).hexdigest()
    assert all(r["success"] for r in got.values())


def test_resume_refuses_lines_without_what_identifies_their_task(folder, tmp_path, capsys):
    out = tmp_path / "results.jsonl"
    out.write_text(json.dumps({"task": str(folder / "panda_table.yaml"), "index": 0, "success": True}) + "\n")
    assert cli.main(["batch", str(folder), "--out", str(out), "--resume"]) == 2
    assert "without file, sha256, loaded, run" in capsys.readouterr().err


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
