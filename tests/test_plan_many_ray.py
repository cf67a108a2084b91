"""plan_many(backend="ray") on a local Ray instance: the same results as threads, every result
exactly once when a worker process is killed mid-run, and a clear error without Ray."""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
import threading
import time

import numpy as np
import pytest

import simdplan
from simdplan import robots, scenes
from simdplan.scenes import mbm
from test_ik import POSE_SCENE
from test_time_limits import wall_robot

ray = pytest.importorskip("ray", reason="the Ray backend is an optional extra (pip install '.[ray]')")


@pytest.fixture(scope="module")
def local_ray():
    ray.init(address="local", num_cpus=2, log_to_driver=False, include_dashboard=False)  # its own, not a running one
    yield
    ray.shutdown()


def mixed_tasks():
    """MotionBenchMaker problems, scenes with meshes, hulls and a point cloud, another robot, and bad tasks."""
    chosen, per_class = [], {}
    for s in mbm.load(mode="reference"):
        if per_class.get(s.problem, 0) < 2:
            per_class[s.problem] = per_class.get(s.problem, 0) + 1
            chosen.append(s)
    for name in ("panda_mesh_shelf", "panda_bookshelf_cloud", "ur5_table"):
        chosen.append(scenes.load(scenes.example(name)))
    panda = robots.load("panda")
    q0 = np.array([0, -0.5, 0, -2.0, 0, 1.5, 0.8])
    chosen += [(panda, None, q0, q0 + 0.3), (panda, None, q0[:6], q0), (panda, None, q0, np.full(7, np.nan)), "junk"]
    return chosen


def every_task_kind(tmp_path) -> list:
    """Joint goals (a scene and tuples), goal poses (two scenes, one with goals None), and bad tasks of each kind."""
    path = tmp_path / "pose.yaml"
    path.write_text(POSE_SCENE)
    pose = scenes.load(path)
    one_pose = dataclasses.replace(pose, goal_poses=pose.goal_poses[1:], goals=None, goal_mask=None)
    crash = dataclasses.replace(pose, start=np.array(pose.start) + [0, 5.0, 0, 0, 0, 0, 0])
    unknown_link = dataclasses.replace(pose, goal_link="no_such_link")
    panda = pose.robot
    q0 = np.array([0, -0.5, 0, -2.0, 0, 1.5, 0.8])
    return [pose, scenes.load(scenes.example("panda_table")), one_pose, (panda, None, q0, q0 + 0.3), crash,
            unknown_link, (panda, None, q0[:6], q0), (panda, None, q0, np.full(7, np.nan)), "junk"]


def same_results(a: list, b: list) -> bool:
    return all(x.error == y.error and x.message == y.message and x.success == y.success
               and np.array_equal(x.path, y.path) and x.stats.get("seed") == y.stats.get("seed")
               and x.joint_names == y.joint_names for x, y in zip(a, b)) and len(a) == len(b)


def test_ray_gives_the_results_of_threads(local_ray):
    tasks = mixed_tasks()
    threads = simdplan.plan_many(tasks, workers=2, seed=7)
    for chunk_size in (None, 1, 5):
        on_ray = simdplan.plan_many(tasks, backend="ray", seed=7, chunk_size=chunk_size)
        assert same_results(on_ray, threads), chunk_size
    assert sum(r.success for r in threads) >= len(tasks) - 4
    assert [r.error for r in threads[-3:]] == ["ValueError", "ValueError", "TypeError"]


def test_ray_plans_every_task_kind_as_threads_do(local_ray, tmp_path):
    tasks = every_task_kind(tmp_path)
    threads = simdplan.plan_many(tasks, workers=2, seed=5)
    on_ray = simdplan.plan_many(tasks, backend="ray", seed=5, chunk_size=4)  # pose tasks in chunks of their own
    assert same_results(on_ray, threads)
    assert [r.success for r in on_ray[:4]] == [True] * 4
    assert on_ray[0].stats["goal_pose_index"] in (0, 1) and on_ray[2].stats["goal_pose_index"] == 0
    assert np.array_equal(on_ray[0].stats["goal_configurations"], threads[0].stats["goal_configurations"])
    assert [r.error for r in on_ray[4:]] == ["InvalidProblemError", "ValueError", "ValueError", "ValueError",
                                             "TypeError"]
    assert "no_such_link" in on_ray[5].message


def test_ray_streams_results_and_keeps_task_numbers(local_ray):
    tasks = mixed_tasks()[:10]
    seen = []
    got = simdplan.plan_many(tasks, backend="ray", seed=3, indices=range(100, 110), workers=1,
                             on_result=lambda i, r: seen.append(i))
    assert sorted(seen) == list(range(10))
    assert [r.stats["seed"] for r in got] == [simdplan.planner.task_seed(3, 100 + i) for i in range(10)]


def _chunk_workers() -> list[int]:
    pids = []
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if f.read().startswith(b"ray::_plan_chunk"):
                    pids.append(int(pid))
        except (OSError, ValueError):
            continue
    return pids


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds Ray's worker processes in /proc")
def test_a_killed_worker_loses_no_result_and_duplicates_none(local_ray):
    robot, env, start, goal = wall_robot()  # unsolvable: each task runs to its 0.3 s limit
    tasks = [(robot, env, start, goal)] * 12
    killed = []

    def kill_one():
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not killed:
            pids = _chunk_workers()
            if pids:
                os.kill(pids[0], signal.SIGKILL)
                killed.append(pids[0])
            time.sleep(0.05)

    killer = threading.Thread(target=kill_one)
    seen = []
    killer.start()
    got = simdplan.plan_many(tasks, backend="ray", chunk_size=2, workers=1, time_limit=0.3, max_iterations=10**12,
                             on_result=lambda i, r: seen.append(i))
    killer.join()
    assert killed, "no Ray worker was found to kill"
    assert sorted(seen) == list(range(12))  # each result once
    assert all(r is not None and r.error == "" and r.stats["stopped"] == "time_limit" for r in got)


def test_without_ray_the_error_says_how_to_get_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)
    robot, env, start, goal = wall_robot()
    with pytest.raises(ImportError, match=r"simdplan\[ray\]"):
        simdplan.plan_many([(robot, env, start, np.array([-0.5, 0.5]))], backend="ray")


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(backend="dask"), ValueError, "backend must be"),
    (dict(address="auto"), ValueError, "settings of backend='ray'"),
    (dict(chunk_size=10), ValueError, "settings of backend='ray'"),
    (dict(backend="ray", address=6379), TypeError, "address must be a string"),
])
def test_backend_arguments_are_checked(kwargs, error, words):
    robot, env, start, goal = wall_robot()
    with pytest.raises(error, match=words):
        simdplan.plan_many([(robot, env, start, goal)], **kwargs)


def test_batch_on_ray_writes_the_results_threads_write(local_ray, tmp_path):
    from simdplan import cli

    for name in ("panda_table", "ur5_table", "panda_cage"):
        (tmp_path / f"{name}.yaml").write_text(open(scenes.example(name)).read())
    (tmp_path / "pose.yaml").write_text(POSE_SCENE)
    on_threads, on_ray = tmp_path / "threads.jsonl", tmp_path / "ray.jsonl"
    assert cli.main(["batch", str(tmp_path), "--out", str(on_threads), "--seed", "2"]) == 0
    assert cli.main(["batch", str(tmp_path), "--out", str(on_ray), "--seed", "2", "--ray", "auto"]) == 0

    def rows(path):
        import json

        return sorted((r["task"], r["index"], r["success"], r["path"]) for r in map(json.loads, open(path)))

    assert rows(on_ray) == rows(on_threads) and len(rows(on_ray)) == 4
    assert all(success for _, _, success, _ in rows(on_ray))


def test_an_address_other_than_the_running_ray_is_refused(local_ray):
    robot, env, start, _ = wall_robot()
    tasks = [(robot, env, start, np.array([-0.5, 0.5]))]
    gcs = ray.get_runtime_context().gcs_address
    host, _, port = gcs.rpartition(":")
    for same in (None, "auto", gcs):  # the Ray this process runs
        assert simdplan.plan_many(tasks, backend="ray", address=same)[0].success, same
    for other in ("ray://203.0.113.9:10001", "203.0.113.9:6379", f"{host}:{int(port) + 1}", "local"):
        with pytest.raises(ValueError, match=r"already runs Ray \(GCS at .*ray.shutdown\(\)"):
            simdplan.plan_many(tasks, backend="ray", address=other)


def test_more_threads_per_task_than_any_node_has_is_refused(local_ray):
    robot, env, start, goal = wall_robot()
    with pytest.raises(ValueError, match="largest node of the cluster has 2 CPUs"):
        simdplan.plan_many([(robot, env, start, np.array([-0.5, 0.5]))], backend="ray", workers=3)
