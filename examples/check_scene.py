"""Load the Panda into a shipped MotionBenchMaker scene and check configurations and motions.

    python3 examples/check_scene.py [--scene bookshelf_small] [--index 1] [--smoke]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import simdplan
import simdplan.scenes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", default="bookshelf_small", help="MotionBenchMaker class")
    ap.add_argument("--index", type=int, default=1)
    ap.add_argument("--smoke", action="store_true", help="small sizes, for the tests")
    args = ap.parse_args()

    (scene,) = simdplan.scenes.mbm.load(classes=[args.scene], indices=[args.index])
    robot, env, start, goal = scene.robot, scene.env, scene.start, scene.goals[0]
    print(f"{robot}\n{env}  (scene {scene.name})\ncore: {simdplan.info()}")
    print(f"start valid: {robot.is_valid(start, env)}   goal valid: {robot.is_valid(goal, env)}")

    n = 2_000 if args.smoke else 200_000
    Q = np.random.default_rng(0).uniform(robot.lower, robot.upper, size=(n, robot.dof))
    t = time.perf_counter()
    ok = robot.is_valid_many(Q, env)
    dt = time.perf_counter() - t
    print(f"{n} random configurations: {ok.mean():.1%} valid, {dt / n * 1e9:.0f} ns per configuration")

    straight = robot.is_motion_valid(start, goal, env)
    print(f"straight line start -> goal ({robot.motion_samples(start, goal) + 1} samples): "
          f"{'free' if straight else 'in collision'}")
    for v in robot.why_invalid(Q[~ok][0], env)[:3]:
        print("  e.g.", v)

    result = simdplan.plan(robot, env, start, scene.goals, seed=0)
    print(result)


if __name__ == "__main__":
    main()
