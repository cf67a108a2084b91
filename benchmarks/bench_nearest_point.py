#!/usr/bin/env python3
"""Nearest-point benchmark: simdplan's NearestPointTree (every ISA) against scipy's cKDTree.

Clouds (fixed seed):
  uniform   n points uniform in a 2 m cube, n = 1k, 10k, 100k
  mbm       MotionBenchMaker bookshelf_small problem 1: 10k points sampled on the surface of each of
            its 7 obstacles (simdplan.scenes.mbm.surface_points, 70k points), raw and thinned to 2 cm
            (filter_pointcloud, as in VAMP's point-cloud mode)
Queries: robot-like points near the cloud, each a random cloud point plus an offset uniform in a
ball of 0.3 m; unbounded (the exact nearest distance) and bounded (max_distance = 0.05 m, what a
clearance check within a safety margin asks).
Measured, in one run (ISAs interleaved inside every repeat; medians over repeats):
  build   C++ build time of the tree (ours) vs cKDTree(points) (scipy, float64)
  query   ns per query point: the core binding on float32 queries, per ISA (what C++ callers get,
          plus one call's array handling); the Python facade NearestPointTree.query on float64
          queries (best ISA); cKDTree.query(q, workers=1) and, bounded,
          cKDTree.query(q, distance_upper_bound=0.05, workers=1)
Consistency checks (in the JSON): largest distance difference to cKDTree and the number of
queries found within 0.05 by one and not the other outside a 1e-6 band. This is a benchmark, not
a test: it never fails on timings.

    python3 benchmarks/bench_nearest_point.py [--quick] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

import simdplan
from simdplan.collision import NearestPointTree, filter_pointcloud

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_core import Timing, machine_info  # noqa: E402  (same machine record as the core benchmark)

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "nearest_point.json"
BOUND = 0.05
FULL = dict(sizes=[1_000, 10_000, 100_000], build_repeats=7, queries=100_000, query_repeats=7, mbm=True)
QUICK = dict(sizes=[1_000, 10_000], build_repeats=3, queries=10_000, query_repeats=3, mbm=False)


def log(msg: str) -> None:
    print(f"[bench_nearest_point {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def near_queries(rng, points, m, radius=0.3):
    """m points, each a random cloud point plus an offset uniform in a ball of `radius`."""
    u = rng.normal(size=(m, 3))
    u *= (radius * rng.uniform(0, 1, m) ** (1 / 3) / np.linalg.norm(u, axis=1))[:, None]
    return points[rng.integers(0, len(points), m)] + u


def mbm_clouds():
    from simdplan.scenes import mbm

    scene = mbm.load(classes="bookshelf_small", indices=1)[0]
    raw = mbm.surface_points(scene.env, 10_000, seed=0)
    return [("mbm bookshelf_small raw", raw), ("mbm bookshelf_small 2 cm", filter_pointcloud(raw, 0.02))]


class Rows:
    def __init__(self):
        self.rows = []

    def add(self, case, n, impl, metric, unit, values, note=""):
        a = np.asarray(values, dtype=np.float64)
        row = {"case": case, "n": int(n), "impl": impl, "metric": metric, "unit": unit, "median": float(np.median(a)),
               "min": float(a.min()), "max": float(a.max()), "raw": a.tolist(), "note": note}
        self.rows.append(row)
        return row


def measure(case, pts, rng, isas, P, rows: Rows, checks: dict) -> None:
    from scipy.spatial import cKDTree

    n = len(pts)
    log(f"{case}: build, {n} points")
    builds = [NearestPointTree(pts) for _ in range(P["build_repeats"])]
    tree = builds[-1]
    ours_build = rows.add(case, n, "ours", "build", "ms", [b.build_time_ns / 1e6 for b in builds])
    del builds
    kd_times = []
    with Timing():
        for _ in range(P["build_repeats"]):
            t0 = time.perf_counter_ns()
            kd = cKDTree(pts)
            kd_times.append((time.perf_counter_ns() - t0) / 1e6)
    kd_build = rows.add(case, n, "scipy cKDTree", "build", "ms", kd_times)
    ours_build["note"] = f"{kd_build['median'] / ours_build['median']:.1f}x faster than cKDTree"

    q = near_queries(rng, pts, P["queries"])
    q32 = np.ascontiguousarray(q, np.float32)
    true_d, _ = kd.query(q)
    core = tree._tree
    log(f"{case}: {len(q)} queries x {P['query_repeats']} repeats x {len(isas)} ISAs + scipy")
    for label, md in (("unbounded", np.inf), (f"within {BOUND} m", BOUND)):
        times = {isa: [] for isa in isas}
        facade, scipy_t = [], []
        with Timing():
            for _ in range(P["query_repeats"]):
                for isa in isas:
                    simdplan.set_isa(isa)
                    t0 = time.perf_counter_ns()
                    core.query(q32, md)
                    times[isa].append((time.perf_counter_ns() - t0) / len(q))
                simdplan.set_isa(isas[-1])
                t0 = time.perf_counter_ns()
                tree.query(q, md)
                facade.append((time.perf_counter_ns() - t0) / len(q))
                t0 = time.perf_counter_ns()
                if np.isinf(md):
                    kd.query(q, workers=1)
                else:
                    kd.query(q, distance_upper_bound=md, workers=1)
                scipy_t.append((time.perf_counter_ns() - t0) / len(q))
        ref = float(np.median(scipy_t))
        for isa in isas:
            med = float(np.median(times[isa]))
            rows.add(case, n, f"ours {isa}", label, "ns/query", times[isa], f"{ref / med:.1f}x vs cKDTree")
        med = float(np.median(facade))
        rows.add(case, n, f"NearestPointTree.query {isas[-1]}", label, "ns/query", facade, f"{ref / med:.1f}x vs cKDTree")
        rows.add(case, n, "scipy cKDTree workers=1", label, "ns/query", scipy_t)

        # consistency: ours (every ISA) against cKDTree's exact distances on the same float64 queries;
        # found / not found is judged only outside the float32 band around max_distance
        band = 1e-6 * (true_d + max(1.0, float(np.abs(pts).max())))
        judged = np.abs(true_d - md) > band if np.isfinite(md) else np.ones(len(q), bool)
        for isa in isas:
            simdplan.set_isa(isa)
            d, i = tree.query(q, md)
            fin = np.isfinite(d)
            checks[f"{case}/{label}/{isa}/max_abs_diff_m"] = float(np.abs(d[fin] - true_d[fin]).max()) if fin.any() else 0.0
            checks[f"{case}/{label}/{isa}/found_mismatch"] = int((judged & (fin != (true_d < md))).sum())
        if not np.isinf(md):
            checks[f"{case}/{label}/fraction_found"] = float((true_d < md).mean())


def print_table(console, rows: Rows) -> None:
    from rich.table import Table

    t = Table(title="NearestPointTree vs scipy cKDTree (queries within 0.3 m of the cloud; medians)",
              title_justify="left")
    for col in ("case", "n", "impl", "metric", "median", "unit", "note"):
        t.add_column(col, justify="right" if col in ("n", "median") else "left")
    last = None
    for r in rows.rows:
        if last is not None and r["case"] != last:
            t.add_section()
        last = r["case"]
        v = r["median"]
        t.add_row(r["case"], f"{r['n']:,}", r["impl"], r["metric"], f"{v:,.3g}" if v < 100 else f"{v:,.0f}", r["unit"],
                  r["note"])
    console.print(t)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes and few repeats (smoke run, a few seconds)")
    ap.add_argument("--json", default=str(DEFAULT_JSON), help=f"where to write raw results (default {DEFAULT_JSON})")
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args(argv)
    P = QUICK if args.quick else FULL

    from rich.console import Console
    console = Console(width=None if sys.stdout.isatty() else 160)
    isas = simdplan.available_isas()
    original = simdplan.isa()
    rows, checks = Rows(), {}
    info = machine_info()
    t_start = time.perf_counter()
    try:
        for n in P["sizes"]:
            rng = np.random.default_rng([args.seed, n])
            measure("uniform 2 m cube", rng.uniform(-1.0, 1.0, (n, 3)), rng, isas, P, rows, checks)
        if P["mbm"]:
            for case, pts in mbm_clouds():
                measure(case, pts, np.random.default_rng([args.seed, 7, len(pts)]), isas, P, rows, checks)
    finally:
        simdplan.set_isa(original)

    print_table(console, rows)
    console.print(f"machine: {info['cpu_model']} ({info['cpu_count']} CPUs), ISAs {', '.join(isas)}; "
                  f"{time.perf_counter() - t_start:.0f} s")
    worst = max((v for k, v in checks.items() if k.endswith("max_abs_diff_m")), default=0.0)
    mism = sum(v for k, v in checks.items() if k.endswith("found_mismatch"))
    console.print(f"checks: largest |ours - cKDTree| = {worst:.2g} m; found/not-found disagreements outside "
                  f"the float32 band: {mism}")
    out = {"machine": info, "params": {**P, "seed": args.seed, "bound": BOUND, "query_ball_m": 0.3},
           "checks": checks, "rows": rows.rows, "machine_end": {"loadavg": list(os.getloadavg())}}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)
    console.print(f"raw results: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
