"""Nothing of ours outlives the interpreter: nanobind reports any instance of the core still alive at
exit ("nanobind: leaked ..."). The IK tests once held robots in pytest parameters, which pytest keeps
in reference cycles past the interpreter's last garbage collection, and every run ended with that
report; this runs them (and a plain script using every kind of core object) in a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

HERE = os.path.dirname(os.path.abspath(__file__))


def run(args: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=600, cwd=HERE)


def test_the_ik_tests_leave_no_core_object_alive_at_exit():
    proc = run(["-m", "pytest", "test_ik.py", "-q", "-p", "no:cacheprovider", "-k",
                "random_reachable or core_plans_to_poses or reach_the_pose"])
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "nanobind: leaked" not in proc.stdout + proc.stderr, proc.stderr[-3000:]


def test_a_script_using_the_core_leaves_nothing_alive_at_exit():
    script = textwrap.dedent("""
        import numpy as np, simdplan
        scene = simdplan.scenes.load(simdplan.scenes.example("panda_bookshelf"))
        robot, env = scene.robot, scene.env
        res = simdplan.plan(robot, env, scene.start, scene.goals, seed=1)
        pose = robot.link_poses(scene.goals[0])["panda_hand"]
        robot.ik(pose, "panda_hand", env, n_solutions=2)
        simdplan.plan(robot, env, scene.start, goal_pose=pose, goal_link="panda_hand", seed=1)
        simdplan.plan_many([(robot, env, scene.start, scene.goals)] * 2, seed=1)
        cloud = np.random.default_rng(0).uniform([0.7, -0.5, 0.0], [0.8, 0.5, 1.0], (2000, 3))
        env.add_pointcloud(cloud)
        robot.clearance(scene.start, env)
        rm = simdplan.planner.Roadmap(robot, env, seed=1)
        rm.query(scene.start, scene.goals[0])
        print("ok")
    """)
    proc = run(["-c", script])
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr[-3000:]
    assert "nanobind: leaked" not in proc.stderr, proc.stderr[-3000:]
