#!/usr/bin/env python3
"""A robot simdplan does not ship: the KUKA LBR iiwa from pybullet_data, end to end.

1. Robot.from_urdf on its mesh URDF covers every link with spheres on the fly (cached after the
   first run; simdplan.robots.spherize: every collision-mesh point inside the spheres).
2. A table and a pillar; start and goal drawn at random among valid configurations far apart.
3. RRT-Connect with certified Link: every edge proven collision-free, not just sampled.
4. An off-screen render of the path (pybullet's software renderer): a GIF, or a PNG with --smoke.

    python3 examples/custom_robot.py [--out DIR] [--smoke]

Needs pybullet (for pybullet_data's robot and the render): pip install ".[viz]".
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings

import numpy as np

import simdplan


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None, help="folder for the render (default: a temporary folder)")
    ap.add_argument("--smoke", action="store_true", help="coarse spheres and a single PNG frame (fast, for tests)")
    args = ap.parse_args(argv)
    try:
        import pybullet_data
    except ImportError:
        print("this example needs pybullet: pip install pybullet")
        return 1
    urdf = os.path.join(pybullet_data.getDataPath(), "kuka_iiwa", "model.urdf")

    t0 = time.perf_counter()
    params = {"max_spheres_per_link": 6, "tolerance": 0.02} if args.smoke else {"max_spheres_per_link": 16}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = simdplan.Robot.from_urdf(urdf, spherize=params)
    for w in caught:
        print(f"note: {w.message}")
    print(f"loaded {robot} in {time.perf_counter() - t0:.1f} s")

    # No SRDF comes with this URDF. Like MoveIt's setup assistant, skip the link pairs that collide in
    # most random configurations: with spheres reaching centimetres beyond the meshes, links two
    # joints apart touch almost everywhere, and such a pair says nothing about the world.
    rng = np.random.default_rng(0)
    counts: dict = {}
    samples = rng.uniform(robot.lower, robot.upper, size=(300, robot.dof))
    for q in samples:
        for pair in {frozenset((v.link, v.other_link)) for v in robot.why_invalid(q) if v.kind == "self"}:
            counts[pair] = counts.get(pair, 0) + 1
    always = {p for p, c in counts.items() if c > 0.5 * len(samples)}
    if always:
        print("skipping link pairs in collision in most configurations: "
              + ", ".join(" / ".join(sorted(p)) for p in sorted(always, key=sorted)))
        robot = simdplan.Robot(robot.description, always)

    env = simdplan.Environment()
    env.add_box([0.75, 0.0, 0.2], half_extents=[0.25, 0.4, 0.2], name="table")
    env.add_cylinder([0.0, 0.7, 0.5], radius=0.06, length=1.0, name="pillar")
    # NOTE: the floor sits below the base's spheres, which reach a few cm beyond the base mesh
    env.add_plane([0, 0, 1], -0.1, name="floor")

    rng = np.random.default_rng(3)
    Q = rng.uniform(robot.lower, robot.upper, size=(4000, robot.dof))
    Q = Q[robot.is_valid_many(Q, env)]
    if len(Q) < 2:
        print("no valid configurations found for this scene")
        return 1
    start = Q[0]
    goal = Q[np.argmax(np.linalg.norm(Q - start, axis=1))]
    result = simdplan.plan(robot, env, start, goal, seed=1, time_limit=5.0)  # certified Link: edges proven free
    if not result.success:
        print(f"no path: {result.message}")
        return 1
    st = result.stats
    print(f"planned {len(result.path)} waypoints, length {result.cost:.2f} rad, in "
          f"{st['planning_time_ns'] / 1e6:.2f} ms (+{st['simplify_time_ns'] / 1e6:.2f} ms simplification); "
          f"every edge certified collision-free")
    assert all(robot.certify_motion(a, b, env).free for a, b in zip(result.path[:-1], result.path[1:]))

    from simdplan.viz import PyBulletViewer, save_image

    out = args.out or tempfile.mkdtemp(prefix="simdplan_")
    with PyBulletViewer(robot, env, spheres=args.smoke) as viewer:
        viewer.camera.width, viewer.camera.height = (320, 240) if args.smoke else (640, 480)
        if args.smoke:
            frames = viewer.render(result.path[len(result.path) // 2])
            target = os.path.join(out, "kuka_path.png")
        else:
            frames = viewer.render_path(result.path)
            target = os.path.join(out, "kuka_path.gif")
    save_image(frames, target)
    print(f"render: {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
