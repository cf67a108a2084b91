"""simdplan.plan_many: the same answers as planning one by one, whatever the number of workers;
bad tasks reported in their own results; Ctrl-C keeps what finished; results stream as they finish.

Calls that could hang are bounded by per-task time limits (a regression shows as a failed duration
assertion)."""

from __future__ import annotations

import _thread
import threading
import time
import warnings

import numpy as np
import pytest

import simdplan
from simdplan import robots, scenes
from simdplan.planner import PlanManyInterrupted, task_seed
from simdplan.scenes import mbm
from test_time_limits import wall_robot


@pytest.fixture(scope="module")
def problems():
    """MotionBenchMaker panda problems of every class (each with its own environment) and the shipped
    example scenes, a few robots among them."""
    chosen, per_class = [], {}
    for s in mbm.load(mode="reference"):
        if per_class.get(s.problem, 0) < 3:
            per_class[s.problem] = per_class.get(s.problem, 0) + 1
            chosen.append(s)
    for name in ("panda_table", "panda_cage", "ur5_table", "panda_bookshelf_cloud"):
        chosen.append(scenes.load(scenes.example(name)))
    return chosen


def one_by_one(tasks, seed, **settings):
    """What plan_many promises to equal: plan() per task with the task's seed."""
    out = []
    for i, t in enumerate(tasks):
        s = {k: v for k, v in vars(t.settings).items() if k != "planner"}
        s.update(settings, seed=task_seed(seed, i))
        try:
            out.append(simdplan.plan(t.robot, t.env, t.start, t.goals, planner=t.settings.planner, **s))
        except simdplan.planner.InvalidProblemError as exc:
            out.append(exc)
    return out


def same(a, b) -> bool:
    return (a.success == b.success and np.array_equal(a.path, b.path)
            and a.stats["iterations"] == b.stats["iterations"] and a.stats["goal_index"] == b.stats["goal_index"])


def test_plan_many_equals_planning_one_by_one_on_every_isa(isa, problems):
    expected = one_by_one(problems, seed=11)
    for workers in (1, 2, 4):
        got = simdplan.plan_many(problems, workers=workers, seed=11)
        assert len(got) == len(problems)
        for i, (g, e) in enumerate(zip(got, expected)):
            assert g.stats["seed"] == task_seed(11, i)
            if isinstance(e, Exception):
                assert g.error == "InvalidProblemError" and g.message == str(e) and not g.success
            else:
                assert g.error == "" and same(g, e), (workers, i)
    assert sum(r.success for r in got) >= len(problems) - 2


def test_task_seeds_differ_by_index_and_seed_and_stay_in_range():
    seeds = {task_seed(s, i) for s in (0, 1, 2**63 - 1) for i in range(1000)}
    assert len(seeds) == 3000
    assert all(0 <= x < 2**63 for x in seeds)
    assert task_seed(5, 7) == task_seed(np.int64(5), np.int32(7))
    with pytest.raises(ValueError, match="seed"):
        task_seed(-1, 0)


def test_tuple_tasks_share_one_robot_and_environment():
    robot, env, start, goal = wall_robot()
    same_side = [np.array([-0.5, y]) for y in np.linspace(-0.8, 0.8, 12)]
    tasks = [(robot, env, start, g) for g in same_side]
    got = simdplan.plan_many(tasks, workers=2, seed=4)
    for i, (r, g) in enumerate(zip(got, same_side)):
        alone = simdplan.plan(robot, env, start, g, seed=task_seed(4, i))
        assert r.success and same(r, alone)
        assert np.array_equal(r.path[0], start) and np.array_equal(r.path[-1], g)


def test_bad_tasks_get_their_own_errors_and_the_rest_plan():
    panda = robots.load("panda")
    q0 = np.array([0, -0.5, 0, -2.0, 0, 1.5, 0.8])
    goal = q0.copy()
    goal[0] = 1.0
    colliding = np.array([0, 0, 0, -3.0, 0, 0.5, 0])  # the forearm folds onto the hand
    with pytest.raises(simdplan.planner.InvalidProblemError) as raised:
        simdplan.plan(panda, None, colliding, goal)
    tasks = [(panda, None, q0, goal), (panda, None, q0[:6], goal), (panda, None, np.full(7, np.nan), goal),
             "not a task", (panda, None, colliding, goal), (panda, None, q0, np.zeros((0, 7))),
             (panda, [], q0, goal), (panda, None, list(q0), [goal, goal])]
    got = simdplan.plan_many(tasks, workers=2)
    assert [r.error for r in got] == ["", "ValueError", "ValueError", "TypeError", "InvalidProblemError",
                                      "ValueError", "TypeError", ""]
    assert got[0].success and got[-1].success
    assert "start must have shape (7,), got (6,)" in got[1].message
    assert got[2].message == "start and goals must be finite"
    assert got[4].message == str(raised.value)
    assert "env must be a simdplan.Environment" in got[6].message
    for r in got[1:-1]:
        assert not r.success and r.path.shape[0] == 0


def test_values_just_outside_a_limit_are_moved_and_noted_without_a_warning():
    panda = robots.load("panda")
    q0 = np.array([0, -0.5, 0, -2.0, 0, 1.5, 0.8])
    q0[0] = panda.upper[0] + 1e-6
    goal = np.array([1.0, -0.5, 0, -2.0, 0, 1.5, 0.8])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = simdplan.plan_many([(panda, None, q0, goal)], workers=1)[0]
    assert r.success and r.stats["limit_clamped"] == 1 and "onto their limits" in r.message
    assert r.path[0, 0] == panda.upper[0]


@pytest.mark.parametrize("kwargs, error, words", [
    (dict(workers=0), ValueError, "workers"),
    (dict(workers=2.5), ValueError, "workers"),
    (dict(no_such_setting=1), ValueError, "unknown planner settings"),
    (dict(planner="ompl:RRTConnect"), ValueError, "one at a time"),
    (dict(range=-1.0), ValueError, "range"),
])
def test_mistakes_in_the_call_itself_raise(kwargs, error, words):
    robot, env, start, goal = wall_robot()
    with pytest.raises(error, match=words):
        simdplan.plan_many([(robot, env, start, goal)], **kwargs)


def test_tasks_must_be_a_list():
    robot, env, start, goal = wall_robot()
    with pytest.raises(TypeError, match="list of Scene"):
        simdplan.plan_many((robot, env, start, goal))
    assert simdplan.plan_many([]) == []


def test_scene_settings_apply_and_the_call_overrides_them(problems):
    scene = problems[-4]  # panda_table
    scene = scenes.Scene(robot=scene.robot, env=scene.env, start=scene.start, goals=scene.goals,
                         settings=simdplan.planner.PlannerSettings(planner="rrt", simplify=False, seed=9))
    by_scene, by_call = simdplan.plan_many([scene, scene], workers=2)[0], \
        simdplan.plan_many([scene], planner="rrtc", simplify=True)[0]
    assert by_scene.planner == "rrt" and by_scene.stats["final_cost"] == by_scene.stats["initial_cost"]
    assert by_scene.stats["seed"] == task_seed(9, 0)
    assert by_call.planner == "rrtc" and by_call.success


def test_each_task_has_its_own_time_limit():
    robot, env, start, goal = wall_robot()  # unsolvable: every task runs to its limit
    t0 = time.perf_counter()
    got = simdplan.plan_many([(robot, env, start, goal)] * 4, workers=2, time_limit=0.2, max_iterations=10**12)
    dt = time.perf_counter() - t0
    assert all(not r.success and r.stats["stopped"] == "time_limit" for r in got)
    assert 0.4 <= dt < 0.4 + 0.3


def test_ctrl_c_stops_the_batch_and_keeps_what_finished():
    robot, env, start, goal = wall_robot()
    tasks = [(robot, env, start, goal)] * 20  # 0.3 s each on 2 workers: 3 s if nothing stops it
    timer = threading.Timer(0.45, _thread.interrupt_main)
    timer.start()
    t0 = time.perf_counter()
    with pytest.raises(PlanManyInterrupted) as raised:
        simdplan.plan_many(tasks, workers=2, time_limit=0.3, max_iterations=10**12)
    assert time.perf_counter() - t0 < 0.45 + 0.15
    assert isinstance(raised.value, KeyboardInterrupt)
    results = raised.value.results
    assert len(results) == 20
    finished = [r for r in results if r is not None]
    assert len(finished) == 2  # the first two ran to their limit; the next two were stopped and dropped
    assert all(r.stats["stopped"] == "time_limit" for r in finished)
    assert results[0] is not None and results[1] is not None and results[-1] is None
    # nothing is left running: the same objects plan again at once
    assert simdplan.plan_many([(robot, env, start, np.array([-0.5, 0.5]))])[0].success


def test_on_result_streams_every_result_once_and_its_errors_stop_the_batch():
    robot, env, start, goal = wall_robot()
    goals = [np.array([-0.5, y]) for y in np.linspace(-0.8, 0.8, 30)]
    seen = []
    got = simdplan.plan_many([(robot, env, start, g) for g in goals], workers=2,
                             on_result=lambda i, r: seen.append((i, r)))
    assert sorted(i for i, _ in seen) == list(range(30))
    assert all(got[i] is r for i, r in seen)

    def fail(i, r):
        raise RuntimeError("disk full")

    tasks = [(robot, env, start, goal)] * 6
    t0 = time.perf_counter()
    with pytest.raises(RuntimeError, match="disk full"):
        simdplan.plan_many(tasks, workers=2, on_result=fail, time_limit=0.2, max_iterations=10**12)
    assert time.perf_counter() - t0 < 0.2 + 0.3  # the first result stops the rest


def test_progress_bar_appears_for_runs_over_a_second(capsys):
    robot, env, start, goal = wall_robot()
    simdplan.plan_many([(robot, env, start, goal)] * 3, workers=1, progress=True, time_limit=0.45,
                       max_iterations=10**12)
    assert "plan_many" in capsys.readouterr().err
    simdplan.plan_many([(robot, env, start, np.array([-0.5, 0.5]))], progress=True)
    assert capsys.readouterr().err == ""  # a short run shows nothing


def test_calls_from_two_threads_at_once_agree(problems):
    expected = simdplan.plan_many(problems, workers=1, seed=5)
    out = {}

    def run(k):
        out[k] = simdplan.plan_many(problems, workers=2, seed=5)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    for k in range(2):
        assert all(a.error == b.error and (a.error or same(a, b)) for a, b in zip(out[k], expected))
