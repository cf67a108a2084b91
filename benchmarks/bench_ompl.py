#!/usr/bin/env python3
"""OMPL RRT-Connect with simdplan's checks against OMPL RRT-Connect with a pybullet checker.

The pybullet side is the baseline script shipped to us (``baseline_ompl_pybullet.py``; found in
``--baseline-dir``, by default ``../shared/baselines`` next to this repository; needs ``pip install
pybullet``): the Panda's mesh collision geometry in pybullet, OMPL's own discrete motion checks at
its longest-valid-segment fraction (``--lvsf``, the baseline's default 0.005), OMPL's default
simplification. Ours: ``simdplan.plan(..., planner="ompl:RRTConnect")``, the Panda's spheres, our
discrete Link at 32 samples per radian as OMPL's motion validator, the same OMPL simplification.
Both on the same MotionBenchMaker problems in one run; for reference, simdplan's own C++ RRT-Connect.

Reported per side: solved, median planning and simplification times, and checks per second
(configurations checked / time spent checking: for pybullet its validity-call time; for ours the
planning time, everything included). Also the raw single-check cost of each checker from Python.

    python3 benchmarks/bench_ompl.py [--classes table_pick,bookshelf_small,cage] [--n 10] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import simdplan
from simdplan.scenes import mbm

ROOT = Path(__file__).resolve().parents[1]


def baseline_module(path: Path):
    sys.path.insert(0, str(path))
    import baseline_ompl_pybullet as base  # noqa: PLC0415 (optional, external)

    return base


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline-dir", default=str(ROOT.parent / "shared" / "baselines"))
    ap.add_argument("--classes", default="table_pick,bookshelf_small,cage")
    ap.add_argument("--n", type=int, default=10, help="problems per class")
    ap.add_argument("--time-limit", type=float, default=10.0)
    ap.add_argument("--lvsf", type=float, default=0.005)
    ap.add_argument("--json", default=str(ROOT / "benchmarks" / "results" / "ompl.json"))
    args = ap.parse_args(argv)
    try:
        base = baseline_module(Path(args.baseline_dir))
    except ImportError as exc:
        print(f"the pybullet baseline is unavailable ({exc}); give --baseline-dir and pip install pybullet")
        return 2
    from ompl import util as ou

    ou.setLogLevel(ou.LOG_ERROR)
    classes = args.classes.split(",")
    robot = simdplan.robots.load("panda")
    checker = base.PandaPyBulletChecker()
    rows = {"pybullet": [], "simdplan_ompl": [], "simdplan_rrtc": []}
    raw = {}
    for cls in classes:
        scenes = mbm.load(mode="exact", classes=cls, indices=list(range(1, args.n + 1)), robot=robot)
        for sc in scenes:
            if sc.valid is False:
                continue
            prob = base.load_problem(cls, sc.index)
            rec = base.plan_one(checker, prob, "contact", args.time_limit, args.lvsf, True, False)
            rows["pybullet"].append({
                "solved": rec["solved"], "plan_s": rec["wall_plan_s"], "simplify_s": rec.get("wall_simplify_s", 0.0),
                "checks": rec["plan_checks"] + rec.get("simplify_checks", 0),
                "check_s": rec["plan_check_time_s"] + rec.get("simplify_check_time_s", 0.0)})
            goals = np.atleast_2d(sc.goals)
            for key, planner in (("simdplan_ompl", "ompl:RRTConnect"), ("simdplan_rrtc", "rrtc")):
                r = simdplan.plan(robot, sc.env, sc.start, goals, planner=planner, time_limit=args.time_limit)
                st = r.stats
                rows[key].append({"solved": r.success, "plan_s": st["planning_time_ns"] / 1e9,
                                  "simplify_s": st["simplify_time_ns"] / 1e9, "checks": st["collision_checks"],
                                  "check_s": (st["planning_time_ns"] + st["simplify_time_ns"]) / 1e9})
            if "pybullet" not in raw:  # single-check cost from Python, first problem
                Q = np.random.default_rng(0).uniform(robot.lower, robot.upper, size=(2000, 7))
                t0 = time.perf_counter()
                for q in Q:
                    checker.valid_contact(q)
                raw["pybullet"] = (time.perf_counter() - t0) / len(Q)
                t0 = time.perf_counter()
                for q in Q:
                    robot.is_valid(q, sc.env)
                raw["simdplan"] = (time.perf_counter() - t0) / len(Q)
    checker.close()

    print(f"MotionBenchMaker panda, classes {', '.join(classes)}, {args.n} problems each; {simdplan.info()['cpu']}")
    print(f"{'planner / checker':<34}{'solved':>8}{'plan ms':>10}{'simplify ms':>13}{'checks/s':>12}")
    for key, label in (("pybullet", "OMPL RRTConnect + pybullet"), ("simdplan_ompl", "OMPL RRTConnect + simdplan"),
                       ("simdplan_rrtc", "simdplan rrtc (C++)")):
        rs = rows[key]
        ok = [r for r in rs if r["solved"]]
        med = lambda k: float(np.median([r[k] for r in ok])) * 1e3 if ok else float("nan")  # noqa: E731
        rate = sum(r["checks"] for r in rs) / max(sum(r["check_s"] for r in rs), 1e-12)
        print(f"{label:<34}{len(ok):>4}/{len(rs):<3}{med('plan_s'):>10.2f}{med('simplify_s'):>13.2f}{rate:>12,.0f}")
    print(f"one validity check from Python: pybullet {raw['pybullet'] * 1e6:.1f} us, simdplan "
          f"{raw['simdplan'] * 1e6:.2f} us ({raw['pybullet'] / raw['simdplan']:.0f}x)")
    print("checks/s: pybullet = validity calls / time inside them; simdplan = configurations checked "
          "(states + motion samples) / whole planning and simplification time")
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps({"args": vars(args), "rows": rows, "single_check_s": raw}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
