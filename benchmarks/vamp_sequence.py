"""How much VAMP's figures depend on its sampler restarting the same Halton sequence for every problem.

    python3 benchmarks/vamp_sequence.py                 # MotionBenchMaker panda (30 per class) and generated ur5
    python3 benchmarks/vamp_sequence.py --skips 0,1000  # other stretches of the sequence

VAMP's RRT-Connect, as simdplan's benchmarks run it (vamp_baseline: VAMP's own settings; its
Halton sampler reset before each problem, as VAMP's scripts do), always draws the same samples:
the unshifted Halton sequence from its start. This plans every problem again with the sequence
reset and then advanced by K samples (K = 0 is what ``simdplan bench`` compares against), so the
spread between K values shows how much one fixed sequence helps or hurts a whole problem set.
Printed per set and K: median and mean planning time (VAMP's timer), median and mean iterations.
Needs VAMP (benchmarks/vamp_offline).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

from simdplan.bench import robots as bench_robots
from simdplan.bench.records import write_raw
from simdplan.bench import vamp_baseline
from simdplan.bench.mbm import load_problems
from simdplan.scenes import generate


def problem_sets() -> dict:
    scenes = load_problems(None, None, "reference", None, 30, valid_only=True)
    panda = [(s.robot, s.env, s.start, s.goals) for s in scenes]
    ur5 = bench_robots.load("ur5")
    generated = [(ur5, p.env, p.start, p.goals) for f in ("table", "shelf", "cage", "box") for p in generate(ur5, f, 10, seed=0)]
    return {"mbm_panda": ("panda", panda), "generated_ur5": ("ur5", generated)}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--skips", default="0,1000,5000,20000", help="samples to advance the sequence by, comma separated")
    ap.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "results", "vamp_sequence.json"))
    args = ap.parse_args()
    skips = [int(k) for k in args.skips.split(",")]
    out = {}
    print(f"{'set':14s} {'skip':>6s} {'solved':>7s} {'plan median us':>15s} {'plan mean us':>13s} {'iters median':>13s} {'iters mean':>11s}")
    for name, (robot_name, problems) in problem_sets().items():
        base, why = vamp_baseline.load(robot_name)
        if base is None:
            print(f"{name}: {why}", file=sys.stderr)
            continue
        robot = problems[0][0]
        envs = [base.environment(env) for _, env, _, _ in problems]
        for k in skips:
            times, iters = [], []
            for (_, _, start, goals), venv in zip(problems, envs):
                r = base.plan(start, goals, venv, simplify=False, joint_names=robot.joint_names, skip=k)
                if r["solved"]:
                    times.append(r["planning_time_us"])
                    iters.append(r["iterations"])
            row = {"solved": len(times), "problems": len(problems), "median_us": statistics.median(times),
                   "mean_us": statistics.mean(times), "iters_median": statistics.median(iters),
                   "iters_mean": statistics.mean(iters)}
            out[f"{name}/{k}"] = row
            print(f"{name:14s} {k:6d} {row['solved']:4d}/{len(problems):<3d} {row['median_us']:15.1f} {row['mean_us']:13.1f} "
                  f"{row['iters_median']:13.0f} {row['iters_mean']:11.0f}")
    write_raw(args.json, out)
    print(f"skip 0 is the sequence VAMP plans every problem with in simdplan's side-by-side runs; raw numbers: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
