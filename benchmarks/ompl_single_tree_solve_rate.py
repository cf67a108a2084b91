#!/usr/bin/env python3
"""How often OMPL's single-tree planners solve the shipped table scenes within a time limit.

Each (scene, planner, seed) runs in its own process: OMPL's random seed is process-global and is taken
on a process's first OMPL plan only (simdplan.planner.ompl). Prints one line per (scene, planner):
solved / runs and the median planning time of the solved runs. ``--range robot`` plans with the
robot's default_range (simdplan's own planners' default) instead of OMPL's default range, to tell
the adapter's range default apart from its goal test.

    python3 benchmarks/ompl_single_tree_solve_rate.py [--seeds 5] [--time-limit 1] [--range robot]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

SCENES = ("panda_table", "ur5_table")
PLANNERS = ("ompl:RRT", "ompl:RRTstar", "ompl:InformedRRTstar", "ompl:SORRTstar")

_ONE_RUN = """
import json, sys
import simdplan
scene = simdplan.scenes.load(simdplan.scenes.example(sys.argv[1]))
extra = {"range": scene.robot.default_range} if sys.argv[5] == "robot" else {}
res = simdplan.plan(scene.robot, scene.env, scene.start, scene.goals, planner=sys.argv[2], seed=int(sys.argv[3]),
                    time_limit=float(sys.argv[4]), simplify=False, **extra)
print(json.dumps({"success": res.success, "seconds": res.stats["planning_time_ns"] / 1e9}))
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--time-limit", type=float, default=1.0)
    ap.add_argument("--range", choices=("ompl", "robot"), default="ompl")
    args = ap.parse_args()
    for scene in SCENES:
        for planner in PLANNERS:
            times = []
            for seed in range(args.seeds):
                out = subprocess.run([sys.executable, "-c", _ONE_RUN, scene, planner, str(seed), str(args.time_limit),
                                      args.range], capture_output=True, text=True, timeout=60 + 2 * args.time_limit)
                if out.returncode != 0:
                    print(out.stderr, file=sys.stderr)
                    return 1
                row = json.loads(out.stdout.splitlines()[-1])
                if row["success"]:
                    times.append(row["seconds"])
            median = f"{statistics.median(times) * 1e3:.1f} ms" if times else "-"
            print(f"{scene:12s} {planner:22s} solved {len(times)}/{args.seeds}  median {median}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
