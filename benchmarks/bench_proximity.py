#!/usr/bin/env python3
"""Proximity benchmark: clearance queries, certified vs discrete Link, thin obstacles, every ISA.

Robot: the Franka Panda. Scenes: MotionBenchMaker problem 1 of bookshelf_small, bookshelf_tall,
bookshelf_thin and cage (reference mode, as the planner benchmark), and the same scenes as point
clouds (10k surface points per obstacle, filtered at 2 cm). Measured in one run:

  1. clearance  robot.clearance_many(Q, env) on random configurations, ns per configuration
                (exact: every obstacle and checked sphere pair, no cap), per ISA
  2. edges      Link on "planner-like" edges (from a valid configuration towards a random one,
                at most 1 rad, as RRT-Connect extends): time per edge, discrete (default
                resolution) vs certified (default min_step), each edge timed alone; edges where
                discrete says free but a 20x denser check finds a collision ("missed"), and
                edges certified free that the dense check contradicts (must be 0)
  3. thin       the thin-obstacle set: a 0.5 mm plate across the path of one sphere between two
                discrete samples, touching none (tests/test_proximity.py builds the same set):
                missed collisions, discrete vs certified
  4. planning   simdplan.plan on the four scenes' first N problems, link discrete vs certified:
                planning and simplification time medians (the full 700 problems:
                ``simdplan bench mbm --link both``)

Medians throughout; ratios are certified / discrete measured in the same run. Not a test: it never
fails on timings (but it does report a certified miss loudly, which would be a bug).

    python3 benchmarks/bench_proximity.py [--quick] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import simdplan
from simdplan import Environment
from simdplan.collision.pointcloud import filter_pointcloud
from simdplan.scenes import mbm

SCENES = ("bookshelf_small", "bookshelf_tall", "bookshelf_thin", "cage")
DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "proximity.json"
FULL = dict(clear_n=20_000, repeats=5, edges=600, thin=200, plan_problems=25)
QUICK = dict(clear_n=2_000, repeats=2, edges=60, thin=20, plan_problems=3)


def median_ns(fn, repeats: int, per: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter_ns()
        fn()
        times.append((time.perf_counter_ns() - t0) / per)
    return float(np.median(times))


def cloud_env(env: Environment, seed: int) -> Environment:
    pts = filter_pointcloud(mbm.surface_points(env, 10_000, seed=seed), 0.02)
    out = Environment()
    out.add_pointcloud(pts)
    return out


def planner_edges(robot, env, rng, n: int):
    lo, hi = robot.lower, robot.upper
    Q = rng.uniform(lo, hi, size=(20 * n, robot.dof))
    Q = Q[robot.is_valid_many(Q, env)]
    T = rng.uniform(lo, hi, size=(len(Q), robot.dof))
    d = T - Q
    step = np.minimum(1.0, 1.0 / np.maximum(np.linalg.norm(d, axis=1), 1e-12))
    return list(zip(Q[:n], (Q + step[:, None] * d)[:n]))


def dense_free(robot, env, a, b, factor=20) -> bool:
    n = robot.motion_samples(a, b) * factor
    t = np.linspace(0.0, 1.0, n + 1)[:, None]
    return bool(robot.is_valid_many(a + t * (b - a), env).all())


def time_edges(robot, env, edges, repeats):
    """Per edge: median ns of discrete and certified, verdicts."""
    rows = []
    for a, b in edges:
        d = robot.is_motion_valid(a, b, env)
        c = robot.certify_motion(a, b, env)
        td = median_ns(lambda: robot.is_motion_valid(a, b, env), repeats, 1)
        tc = median_ns(lambda: robot.certify_motion(a, b, env), repeats, 1)
        rows.append({"discrete": d, "certified": c.status, "samples": c.samples, "t_discrete_ns": td,
                     "t_certified_ns": tc, "dense_free": dense_free(robot, env, a, b)})
    return rows


def thin_cases(robot, rng, count, thickness=0.0005):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
    from test_proximity import thin_plate_cases  # the same construction as the tests

    return thin_plate_cases(robot, rng, count, thickness)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    ap.add_argument("--json", default=str(DEFAULT_JSON), help=f"raw results (default {DEFAULT_JSON})")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    p = QUICK if args.quick else FULL
    rng = np.random.default_rng(args.seed)
    robot = simdplan.robots.load("panda")
    problems = {s.problem: s for s in mbm.load(mode="reference", classes=list(SCENES), indices=1)}
    isa0 = simdplan.isa()
    doc = {"machine": simdplan.info(), "params": p, "clearance": [], "edges": [], "thin": {}, "planning": {}}

    print(f"simdplan {simdplan.info()}")
    print("\n1. clearance_many, ns per configuration (median of repeats), exact")
    print(f"{'scene':<22}{'obstacles':<12}" + "".join(f"{i:>10}" for i in simdplan.available_isas()))
    for name, sc in problems.items():
        for kind, env in (("primitives", sc.env), ("cloud", cloud_env(sc.env, 1))):
            Q = rng.uniform(robot.lower, robot.upper, size=(p["clear_n"], robot.dof))
            robot.clearance_many(Q[:10], env)  # builds the cloud's nearest-point tree once
            cells = []
            for isa in simdplan.available_isas():
                simdplan.set_isa(isa)
                ns = median_ns(lambda: robot.clearance_many(Q, env), p["repeats"], len(Q))
                cells.append(ns)
                doc["clearance"].append({"scene": name, "obstacles": kind, "isa": isa, "ns_per_config": ns})
            simdplan.set_isa(isa0)
            print(f"{name:<22}{kind:<12}" + "".join(f"{c:>10.0f}" for c in cells))

    print(f"\n2. Link per edge ({simdplan.isa()}), planner-like edges (<= 1 rad), medians in us")
    print(f"{'scene':<22}{'obstacles':<12}{'edges':>6}{'free':>6}{'disc':>8}{'cert':>8}{'ratio':>7}"
          f"{'ratio free':>11}{'missed d/c':>12}{'undecided':>10}")
    all_rows = []
    for name, sc in problems.items():
        for kind, env in (("primitives", sc.env), ("cloud", cloud_env(sc.env, 2))):
            rows = time_edges(robot, env, planner_edges(robot, env, rng, p["edges"] // 4), p["repeats"])
            all_rows += rows
            td = np.array([r["t_discrete_ns"] for r in rows]) / 1e3
            tc = np.array([r["t_certified_ns"] for r in rows]) / 1e3
            free = np.array([r["discrete"] for r in rows])
            missed_d = sum(r["discrete"] and not r["dense_free"] for r in rows)
            missed_c = sum(r["certified"] == "free" and not r["dense_free"] for r in rows)
            und = sum(r["certified"] == "undecided" for r in rows)
            ratio_free = np.median(tc[free]) / np.median(td[free]) if free.any() else float("nan")
            print(f"{name:<22}{kind:<12}{len(rows):>6}{int(free.sum()):>6}{np.median(td):>8.1f}{np.median(tc):>8.1f}"
                  f"{np.median(tc) / np.median(td):>7.2f}{ratio_free:>11.2f}{missed_d:>6}/{missed_c:<5}{und:>10}")
            doc["edges"].append({"scene": name, "obstacles": kind, "rows": rows})
            if missed_c:
                print(f"   BUG: {missed_c} edges certified free collide under dense sampling")
    td = np.array([r["t_discrete_ns"] for r in all_rows])
    tc = np.array([r["t_certified_ns"] for r in all_rows])
    print(f"all edges: certified / discrete time per edge, median of ratios {np.median(tc / td):.2f}, "
          f"ratio of medians {np.median(tc) / np.median(td):.2f}, ratio of means {tc.mean() / td.mean():.2f}")

    cases = thin_cases(robot, rng, p["thin"])
    d_missed = sum(robot.is_motion_valid(a, b, env) for a, b, env in cases)
    c_missed = sum(robot.certify_motion(a, b, env).free for a, b, env in cases)
    td = np.median([median_ns(lambda: robot.is_motion_valid(a, b, env), p["repeats"], 1) for a, b, env in cases])
    tc = np.median([median_ns(lambda: robot.certify_motion(a, b, env), p["repeats"], 1) for a, b, env in cases])
    doc["thin"] = {"cases": len(cases), "discrete_missed": int(d_missed), "certified_missed": int(c_missed),
                   "discrete_us": td / 1e3, "certified_us": tc / 1e3}
    print(f"\n3. thin obstacles: {len(cases)} edges each crossing a 0.5 mm plate between two discrete samples: "
          f"missed by discrete {d_missed}, by certified {c_missed}; median per edge {td / 1e3:.1f} vs "
          f"{tc / 1e3:.1f} us")

    print(f"\n4. planning (rrtc, {simdplan.isa()}), first {p['plan_problems']} problems of each scene, medians in us")
    scenes_all = mbm.load(mode="reference", classes=list(SCENES), indices=list(range(1, p["plan_problems"] + 1)))
    out = {"discrete": {"plan": [], "simplify": []}, "certified": {"plan": [], "simplify": []}}
    for sc in scenes_all:
        if sc.valid is False:
            continue
        for link in out:  # one after the other on the same problem
            r = simdplan.plan(sc.robot, sc.env, sc.start, sc.goals, link=link)
            if r.success:
                out[link]["plan"].append(r.stats["planning_time_ns"] / 1e3)
                out[link]["simplify"].append(r.stats["simplify_time_ns"] / 1e3)
    for link, v in out.items():
        print(f"  {link:<10} solved {len(v['plan'])}, planning median {np.median(v['plan']):.0f} mean "
              f"{np.mean(v['plan']):.0f}, simplification median {np.median(v['simplify']):.0f}")
    d, c = out["discrete"], out["certified"]
    print(f"  certified / discrete: planning median {np.median(c['plan']) / np.median(d['plan']):.2f}x, "
          f"mean {np.mean(c['plan']) / np.mean(d['plan']):.2f}x, simplification median "
          f"{np.median(c['simplify']) / np.median(d['simplify']):.2f}x")
    doc["planning"] = out
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    Path(args.json).write_text(json.dumps(doc, indent=1, default=float))
    print(f"raw results: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
