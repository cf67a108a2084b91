"""Load the Panda into a shipped MotionBenchMaker scene and check configurations and motions.

    python3 examples/check_scene.py [--scene bookshelf_small] [--index 1] [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

import simdplan
import simdplan.scenes


def load_problem(scene: str, index: int) -> tuple[simdplan.Environment, np.ndarray, np.ndarray]:
    with open(os.path.join(simdplan.scenes.DATA_DIR, "panda", "problems.json")) as f:
        data = json.load(f)
    problems = data["problems"]
    if scene not in problems:
        raise SystemExit(f"unknown scene {scene!r}; choose from {sorted(problems)}")
    prob = next((p for p in problems[scene] if p["index"] == index), None)
    if prob is None:
        raise SystemExit(f"scene {scene!r} has no problem {index}")
    env = simdplan.Environment()
    for o in prob["sphere"]:
        env.add_sphere(o["position"], o["radius"], name=o["name"])
    for o in prob["box"]:
        env.add_box(o["position"], o["orientation_quat_xyzw"], o["half_extents"], name=o["name"])
    for o in prob["cylinder"]:
        env.add_cylinder(o["position"], o["orientation_quat_xyzw"], o["radius"], o["length"], name=o["name"])
    return env, np.array(prob["start"]), np.array(prob["goals"][0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scene", default="bookshelf_small")
    ap.add_argument("--index", type=int, default=1)
    ap.add_argument("--smoke", action="store_true", help="small sizes, for the tests")
    args = ap.parse_args()

    robot = simdplan.robots.load("panda")
    env, start, goal = load_problem(args.scene, args.index)
    print(f"{robot}\n{env}  (scene {args.scene} #{args.index})\ncore: {simdplan.info()}")
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
    bad = Q[~ok][0]
    for v in robot.why_invalid(bad, env)[:3]:
        print("  e.g.", v)


if __name__ == "__main__":
    main()
