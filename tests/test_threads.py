"""The thread-safety contract (collision/environment.py's docstring): checks and plans from many
threads on a shared robot and environment are safe, including the very first calls (lazily built
point-cloud trees), and changing the environment while others use it is safe: each call uses the
obstacles as they were when it started.

Races are probabilistic; these tests repeat the racy moment enough that the unlocked code failed
them every time it was tried (8-17 errors per run of the first-use test)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import simdplan

Q0 = np.array([0, -0.785, 0, -2.356, 0, 1.571, 0.785])
GOAL = np.array([1.0, -0.5, 0, -2.0, 0, 1.5, 0.785])


@pytest.fixture(scope="module")
def panda():
    return simdplan.robots.load("panda")


@pytest.fixture(scope="module")
def cloud():
    return np.random.default_rng(0).uniform([0.5, -0.5, 0.0], [0.6, 0.5, 1.0], (3000, 3))


def run_threads(targets) -> list[BaseException]:
    errors: list[BaseException] = []

    def guarded(fn):
        def run():
            try:
                fn()
            except BaseException as e:  # noqa: BLE001 - every failure is the test's business
                errors.append(e)
        return run

    threads = [threading.Thread(target=guarded(t)) for t in targets]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    return errors


def test_first_calls_from_many_threads_on_a_fresh_cloud_environment(panda, cloud):
    answers = []

    def first_calls(env, k):
        def calls():
            for i in range(4):
                kind = (k + i) % 4
                if kind == 0:
                    answers.append(("valid", panda.is_valid(Q0, env)))
                elif kind == 1:
                    answers.append(("clearance", round(panda.clearance(Q0, env), 6)))
                elif kind == 2:
                    answers.append(("certified", panda.certify_motion(Q0, Q0 + 0.1, env).status))
                else:
                    answers.append(("many", bool(panda.is_valid_many(np.tile(Q0, (4, 1)), env).all())))
        return calls

    for _ in range(30):
        env = simdplan.Environment()
        env.add_pointcloud(cloud)
        assert run_threads([first_calls(env, k) for k in range(4)]) == []
    # and every thread got the single-threaded answer
    env = simdplan.Environment()
    env.add_pointcloud(cloud)
    expected = {"valid": panda.is_valid(Q0, env), "clearance": round(panda.clearance(Q0, env), 6),
                "certified": panda.certify_motion(Q0, Q0 + 0.1, env).status,
                "many": bool(panda.is_valid_many(np.tile(Q0, (4, 1)), env).all())}
    assert all(v == expected[k] for k, v in answers)


def test_changing_the_environment_while_other_threads_plan(panda, cloud):
    env = simdplan.Environment()
    env.add_pointcloud(cloud)
    env.add_box([0.5, 0.4, 0.3], half_extents=[0.05] * 3)
    stop = threading.Event()
    results = []

    def mutate():
        rng = np.random.default_rng(1)
        while not stop.is_set():
            i = env.add_sphere(rng.uniform(-1, 1, 3) + [0, 0, 2.5], 0.05)  # far above the robot
            if rng.random() < 0.3:
                env.add_pointcloud(rng.uniform(2, 3, (200, 3)))
            env.remove(i)
            list(env)
            repr(env)
            env.to_dicts()

    def plan(k):
        def run():
            for i in range(12):
                r = simdplan.plan(panda, env, Q0, GOAL, seed=i, time_limit=1.0,
                                  link="certified" if (i + k) % 3 == 0 else "discrete")
                results.append(r.success)
                panda.is_valid(Q0, env)
                panda.clearance(Q0, env)
        return run

    mutator = threading.Thread(target=mutate)
    mutator.start()
    try:
        errors = run_threads([plan(k) for k in range(3)])
    finally:
        stop.set()
        mutator.join(30)
    assert errors == []
    # the far-away obstacles never block this problem
    assert len(results) == 36 and all(results)


def test_a_plan_keeps_the_obstacles_it_started_with(panda):
    # a snapshot is taken at the start: removing the only obstacle mid-call changes nothing for it,
    # and the next call sees the change
    env = simdplan.Environment()
    box = env.add_box([0.45, 0.0, 0.4], half_extents=[0.1, 0.1, 0.1])
    snapshot = env._model()
    env.remove(box)
    assert env._model() is not snapshot
    assert len(env) == 0


def test_roadmap_queries_from_several_threads_take_turns(panda):
    env = simdplan.Environment()
    env.add_box([0.5, 0.4, 0.3], half_extents=[0.05] * 3)
    rm = simdplan.planner.Roadmap(panda, env, seed=3)
    rm.grow(300)
    out = []

    def query():
        out.append(rm.query(Q0, GOAL, time_limit=2.0).success)

    assert run_threads([query for _ in range(4)]) == []
    assert out == [True] * 4
