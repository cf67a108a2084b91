"""Kernels specialized per robot (simdplan.specialize): same answers as the generic kernels, safe cache.

Each robot's kernel is generated, compiled with the system C++ compiler and attached; then every
answer (Clear, both discrete Links, plans with a seed) is compared with the generic kernel's on the
same robot, switching between the two with RobotModel.detach_kernels / attach_kernels. On every
benchmark robot and on random robots (trees, prismatic, continuous and fixed joints, held joints,
links without spheres), on every ISA this machine has. The rest: what happens without a compiler,
with SIMDPLAN_JIT=off, with a damaged or unsafe cache, with two processes building at once, and on
Ctrl-C during a build.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import simdplan
from simdplan import specialize
from simdplan.bench import robots as bench_robots
from simdplan.specialize import build, cache

import reference as ref
from test_random_robots import random_configs, random_specs, robots

pytestmark = pytest.mark.skipif(build.find_compiler() is None, reason="no C++ compiler on this machine")


@pytest.fixture
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMDPLAN_CACHE_DIR", str(tmp_path))
    return tmp_path / "kernels"


def specialized(robot) -> dict:
    info = robot.compile(wait=True)
    assert robot.kernel == "specialized", info
    return info


def both(robot, fn):
    """fn() with the generic kernels, then with the specialized one."""
    robot.core.detach_kernels()
    assert robot.kernel == "generic"
    generic = fn()
    assert robot.core.reattach_kernels()
    assert robot.kernel == "specialized"
    return generic, fn()


def mixed_environment(robot, rng):
    """Boxes, spheres, capsules and cylinders where the robot reaches (its sphere centres)."""
    centres = robot.fk_many(random_configs(robot, rng, 50))[:, :, :3].reshape(-1, 3)
    specs = random_specs(rng, 8)
    for spec, c in zip(specs, centres[rng.choice(len(centres), len(specs))]):
        spec["center" if spec["kind"] == "sphere" else "position"] = (c + rng.uniform(-0.1, 0.1, 3)).tolist()
    return ref.make_environment(specs)[0]


def assert_same_answers(robot, rng, plans: int = 2):
    env = mixed_environment(robot, rng)
    lo, hi = robot.lower, robot.upper
    Q = np.concatenate([random_configs(robot, rng, 3000), rng.uniform(lo + 0.35 * (hi - lo), hi - 0.35 * (hi - lo),
                                                                      (1000, robot.dof))])
    for padding in (0.0, 0.02):
        for e in (None, env):
            g, s = both(robot, lambda: robot.is_valid_many(Q, e, padding))  # noqa: B023
            assert np.array_equal(g, s), (padding, e is None)
    edges = Q[rng.permutation(len(Q))[:121]]
    for wide in (False, True):
        def links():
            return [robot.core.planner_link(robot.compiled_env(env), a, b, robot.resolution, 0.0, wide)  # noqa: B023
                    for a, b in zip(edges[:-1], edges[1:])]
        g, s = both(robot, links)
        assert g == s, wide
    valid = Q[robot.is_valid_many(Q, env)]
    for k in range(min(plans, len(valid) // 2)):
        kw = dict(seed=k, time_limit=0, max_iterations=2000)
        g, s = both(robot, lambda: simdplan.plan(robot, env, valid[2 * k], valid[2 * k + 1], **kw))  # noqa: B023
        assert g.success == s.success and np.array_equal(g.path, s.path)
        assert g.stats["iterations"] == s.stats["iterations"]


@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_same_answers_as_generic_on_every_isa(private_cache, isa, name):
    robot = bench_robots.load(name)
    info = specialized(robot)
    assert info["isa"] == isa
    assert_same_answers(robot, np.random.default_rng(1))


@pytest.mark.parametrize("name", ["iiwa", "mobile_manipulator", "dual_arm"])
def test_same_answers_as_generic_on_the_other_benchmark_robots(private_cache, name):
    robot = bench_robots.load(name)
    specialized(robot)
    assert_same_answers(robot, np.random.default_rng(2), plans=1)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(robots())
def test_same_answers_on_random_robots(private_cache, isa, case):
    robot, rng = case
    specialized(robot)
    assert_same_answers(robot, rng, plans=1)


def test_cached_kernel_loads_without_building(private_cache):
    first = bench_robots.load("ur5")
    info = specialized(first)
    assert info["compile_seconds"] > 0
    again = simdplan.robots.load("ur5")  # SIMDPLAN_JIT is off in the tests: nothing attached on load
    assert again.kernel == "generic" and again.kernel_info["reason"] == "SIMDPLAN_JIT=off"
    info2 = again.compile(wait=True)
    assert again.kernel == "specialized" and info2["compile_seconds"] is None and info2["file"] == info["file"]
    assert [e["key"] for e in cache.entries()] == [info["key"]]


def test_loads_in_the_background_when_jit_is_on(private_cache, monkeypatch):
    monkeypatch.setenv("SIMDPLAN_JIT", "auto")
    robot = simdplan.robots.load("panda")
    assert robot.kernel_info["state"] in ("building", "specialized")
    env = simdplan.Environment()
    Q = random_configs(robot, np.random.default_rng(0), 100)
    q0, q1 = Q[robot.is_valid_many(Q)][:2]
    first = simdplan.plan(robot, env, q0, q1, seed=1)  # runs at once, on whichever kernel is in place
    robot._kernel_status.done.wait(120)
    assert robot.kernel == "specialized", robot.kernel_info
    again = simdplan.plan(robot, env, q0, q1, seed=1)
    assert first.success and again.success and np.array_equal(first.path, again.path)
    # a robot of the same content, loaded later, takes the cached kernel at once
    twin = simdplan.robots.load("panda")
    assert twin.kernel == "specialized" and twin.kernel_info["compile_seconds"] is None


def test_compile_right_after_load_reports_the_build_it_waited_for(private_cache, monkeypatch):
    """robot.compile(wait=True) just after a load with SIMDPLAN_JIT=auto waits for the background build
    the load started (or runs it first and lets that one wait): either way it is this robot's first
    build, and its time is reported."""
    monkeypatch.setenv("SIMDPLAN_JIT", "auto")
    robot = simdplan.robots.load("panda")
    info = robot.compile(wait=True)
    assert robot.kernel == "specialized", info
    assert info["compile_seconds"] is not None and info["compile_seconds"] > 0, info


def test_jit_off_and_bad_settings(private_cache, monkeypatch):
    monkeypatch.setenv("SIMDPLAN_JIT", "off")
    assert simdplan.robots.load("ur5").kernel == "generic"
    monkeypatch.setenv("SIMDPLAN_JIT", "sometimes")
    with pytest.raises(ValueError, match="SIMDPLAN_JIT"):
        simdplan.robots.load("ur5")
    assert not private_cache.exists() or not any(private_cache.iterdir())


def test_no_compiler_keeps_the_generic_kernel_with_one_line(private_cache, monkeypatch, caplog):
    monkeypatch.setenv("SIMDPLAN_CXX", str(private_cache / "no-such-compiler"))
    monkeypatch.setenv("SIMDPLAN_JIT", "auto")
    specialize._said.clear()
    robots = [simdplan.robots.load("ur5") for _ in range(3)]  # each load would build: one line in all
    assert all(r.kernel == "generic" and "no C++ compiler" in r.kernel_info["reason"] for r in robots)
    assert sum("no C++ compiler" in r.getMessage() for r in caplog.records) == 1
    info = robots[0].compile(wait=True)  # asked for: the reason comes back, no second line
    assert robots[0].kernel == "generic" and "no C++ compiler" in info["reason"]
    assert sum("no C++ compiler" in r.getMessage() for r in caplog.records) == 1
    Q = random_configs(robots[0], np.random.default_rng(0), 100)
    q0, q1 = Q[robots[0].is_valid_many(Q)][:2]
    assert simdplan.plan(robots[0], simdplan.Environment(), q0, q1, seed=0).success


def test_failing_compiler_keeps_the_generic_kernel(private_cache, monkeypatch, tmp_path):
    fake = tmp_path / "fakecxx"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo fake 1.0; exit 0; fi\necho boom >&2; exit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("SIMDPLAN_CXX", str(fake))
    robot = simdplan.robots.load("ur5")
    info = robot.compile(wait=True)
    assert robot.kernel == "generic" and info["state"] == "failed" and "boom" in info["reason"]
    assert [p.name for p in private_cache.iterdir()] == []  # no leftovers of the failed build


@pytest.mark.parametrize("damage", ["truncated", "foreign", "garbage"])
def test_damaged_cache_file_is_rebuilt_never_trusted(private_cache, damage):
    robot = bench_robots.load("ur5")
    info = specialized(robot)
    path = info["file"]
    if damage == "truncated":
        data = open(path, "rb").read()
        open(path, "wb").write(data[: len(data) // 3])
    elif damage == "garbage":
        open(path, "wb").write(b"\x7fELF" + os.urandom(4000))
    else:  # another robot's kernel under this key
        other = specialized(bench_robots.load("panda"))
        with pytest.raises(RuntimeError, match="another robot"):  # the core's own check, past the cache's
            robot.core.attach_kernels(other["file"], info["key"])
        os.replace(other["file"], path)
    again = bench_robots.load("ur5")
    info2 = again.compile(wait=True)
    assert again.kernel == "specialized", info2
    assert info2["compile_seconds"] is not None  # rebuilt
    assert_same_answers(again, np.random.default_rng(5), plans=0)


def test_unsafe_cache_folder_is_refused(private_cache):
    private_cache.mkdir(mode=0o700)
    os.chmod(private_cache, 0o777)
    robot = simdplan.robots.load("ur5")
    info = robot.compile(wait=True)
    assert robot.kernel == "generic" and "other users" in info["reason"]
    os.chmod(private_cache, 0o700)
    entry = private_cache / "x.so"
    entry.write_bytes(b"")
    os.chmod(entry, 0o666)
    with pytest.raises(cache.UnsafeCacheError, match="other users"):
        cache.lookup("x")


SCRIPT = """
import sys, simdplan
robot = simdplan.robots.load("panda")
info = robot.compile(wait=True)
print(robot.kernel, info["key"])
"""


def test_two_processes_building_the_same_robot(private_cache):
    env = dict(os.environ, SIMDPLAN_CACHE_DIR=str(private_cache.parent))
    procs = [subprocess.Popen([sys.executable, "-c", SCRIPT], env=env, stdout=subprocess.PIPE, text=True)
             for _ in range(2)]
    outs = [p.communicate(timeout=300)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert outs[0] == outs[1] and outs[0][0] == "specialized"
    assert sorted(p.name for p in private_cache.iterdir()) == [outs[0][1] + ".json", outs[0][1] + ".so"]


def test_ctrl_c_during_a_build_leaves_nothing_behind(private_cache):
    env = dict(os.environ, SIMDPLAN_CACHE_DIR=str(private_cache.parent))
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT.replace('"panda"', '"ur5"')], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while time.time() < deadline and not any(p.name.startswith(".tmp-") for p in private_cache.glob("*")):
        time.sleep(0.05)
    time.sleep(0.5)  # the compiler is running
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    assert [p.name for p in private_cache.iterdir()] == []
    assert "part1.o" not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout


def test_a_build_cut_short_at_exit_is_not_reported(private_cache, monkeypatch, caplog):
    """Once the exit handler ran (build.stop_all), a background build that fails for it (no compiler
    may start, its folder is gone) ends quietly on the generic kernels: no "generic kernels in use"
    line for what is only the process ending."""
    stopped = threading.Event()
    stopped.set()
    monkeypatch.setattr(build, "_stopping", stopped)
    robot = simdplan.robots.load("ur5")
    with caplog.at_level(logging.WARNING, logger="simdplan"):
        status = specialize.compile_robot(robot, wait=False)
        assert status.done.wait(60)
    assert robot.kernel == "generic" and status.state == "generic" and "exited" in status.reason
    assert not [r for r in caplog.records if "generic kernels" in r.getMessage()]
    assert not list(private_cache.glob(".tmp-*"))


def test_ray_worker_attaches_the_cached_kernel(private_cache):
    """A robot sent to a Ray worker is rebuilt there and, with the kernel cached, runs it at once."""
    ray = pytest.importorskip("ray")
    robot = bench_robots.load("ur5")
    info = specialized(robot)
    env_vars = {"SIMDPLAN_JIT": "auto", "SIMDPLAN_CACHE_DIR": str(private_cache.parent),
                "SIMDPLAN_ISA": simdplan.info()["isa"]}
    ray.init(address="local", num_cpus=1, log_to_driver=False, include_dashboard=False,
             runtime_env={"env_vars": env_vars})
    try:
        @ray.remote
        def kernel_of(r):
            return r.kernel, r.kernel_info["key"], r.kernel_info["compile_seconds"]

        assert ray.get(kernel_of.remote(robot), timeout=120) == ("specialized", info["key"], None)
    finally:
        ray.shutdown()


def test_a_command_ending_during_a_background_build_leaves_nothing_behind(private_cache):
    """simdplan plan with SIMDPLAN_JIT=auto starts a build it does not wait for: at exit the compiler
    and everything it started are killed, and the build's folder is removed, without a word (a build
    cut short at exit is not a failure to report)."""
    env = dict(os.environ, SIMDPLAN_CACHE_DIR=str(private_cache.parent), SIMDPLAN_JIT="auto")
    proc = subprocess.run([sys.executable, "-m", "simdplan", "plan", "panda_table"], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "generic kernels" not in proc.stderr, proc.stderr
    assert not [p.name for p in private_cache.glob(".tmp-*")]
    time.sleep(0.5)
    assert "part1.o" not in subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
