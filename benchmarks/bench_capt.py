#!/usr/bin/env python3
"""Point-cloud benchmark: CAPT build and queries, close pairs, filtering; side by side with scipy.

Radii: the Franka Panda's sphere radii, r in [0.012, 0.08] m. Clouds (fixed seed):
  uniform    n points uniform in a 2 m cube
  clustered  n points in 20 Gaussian blobs (sigma 2 cm) spread over the same cube
  density    10k points in cubes of side 2 m down to 1 cm (the build-cost sweep)
  mbm        MotionBenchMaker panda problems (bookshelf_small, cage; problem 1): 10k points sampled
             uniformly on every obstacle's surface, filtered at 2 cm, as in VAMP's pointcloud mode
Measured, in one run (ISAs interleaved inside every repeat; medians over repeats):
  1. build   CAPT(points, 0.012, 0.08) build time (C++ only), stored points per leaf; scipy cKDTree build
             (1k, 10k, 30k, 100k points; the queries below skip 30k)
  2. query   ns per sphere: CAPT one sphere at a time and W spheres per lane-batched query (every
             ISA), on random spheres (uniform over the cloud's box + 10 cm), on a random walk (5 mm
             steps, what a motion check asks) and, for mbm, on the robot's own spheres at random
             configurations; scipy cKDTree.query (nearest distance < r) and NumPy brute force as
             baselines; plus CAPT.collides called from Python one sphere per call
  3. pairs   close_pairs(points, tol) vs cKDTree(points).query_pairs(tol) (build included)
  4. filter  filter_pointcloud(points, 0.02) on 10k .. 1M points (surface-like and uniform)
Where VAMP is installed (simdplan.bench.vamp_baseline), its CAPT build and its filter run on the same
points in the same run (rows "vamp"; VAMP's own timers, which exclude converting the points from
Python, while our filter rows include our Python call). Where VAMP's headers are installed too
(benchmarks/vamp_offline/build.sh) and a C++ compiler is present, VAMP's CAPT also answers the
same query spheres from C++ (vamp_offline/capt_query.cc: one sphere per call, and its SIMD query,
which answers whether any of 8 spheres collides), and the rows "collisions missed" count, for both
trees, the spheres that truly penetrate a point (exact distances on the float32 inputs, leaving out
those within 1e-5 of touching) but were answered free.
This is a benchmark, not a test: it never fails on timings.

    python3 benchmarks/bench_capt.py [--quick] [--big] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import simdplan
from simdplan import robots, scenes
from simdplan.bench import vamp_baseline
from simdplan.collision import CAPT, close_pairs, filter_pointcloud

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_core import Timing, machine_info  # noqa: E402  (same machine record as the core benchmark)

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "capt.json"
R_MIN, R_MAX = 0.012, 0.08
FULL = dict(sizes=[1_000, 10_000, 30_000, 100_000], query_sizes=[1_000, 10_000, 100_000], build_repeats=5, queries=200_000, query_repeats=7, walk=100_000,
            python_calls=20_000, brute_max=10_000, density=[2.0, 1.0, 0.5, 0.25, 0.1, 0.03, 0.01],
            pairs=[100_000, 1_000_000], filter=[10_000, 100_000, 300_000, 1_000_000], mbm_configs=2_000)
QUICK = dict(sizes=[1_000, 10_000], query_sizes=[1_000, 10_000], build_repeats=2, queries=20_000, query_repeats=2, walk=10_000,
             python_calls=2_000, brute_max=1_000, density=[2.0, 0.25, 0.03], pairs=[100_000],
             filter=[10_000, 100_000], mbm_configs=200)
# Our own targets, noted on their rows (VAMP's figures appear only when it runs in the same process).
ANCHORS = {
    ("pairs", "uniform", 1_000_000): "target < 1 s, ahead of cKDTree", ("query", "target", 0): "target < 10 ns",
}


def log(msg: str) -> None:
    print(f"[bench_capt {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def median_ms(fn, repeats: int) -> tuple[float, list, object]:
    times, out = [], None
    with Timing():
        for _ in range(repeats):
            t0 = time.perf_counter_ns()
            out = fn()
            times.append((time.perf_counter_ns() - t0) / 1e6)
    return float(np.median(times)), times, out


def rebuilt(pts, reps: int) -> tuple[list, CAPT]:
    """Build times (ms) of `reps` trees on pts, each dropped before the next is built (as a new
    sensor cloud replaces the last one, and as VAMP's rows build theirs); the last tree."""
    times, tree = [], None
    for _ in range(reps):
        tree = None
        tree = CAPT(pts, R_MIN, R_MAX)
        times.append(tree.build_time_ns / 1e6)
    return times, tree


# ----------------------------------------------------------------------------- clouds
def uniform_cloud(rng, n):
    return rng.uniform(-1.0, 1.0, (n, 3))


def clustered_cloud(rng, n):
    centres = rng.uniform(-0.9, 0.9, (20, 3))
    return centres[rng.integers(0, 20, n)] + rng.normal(0.0, 0.02, (n, 3))


def surface_cloud(rng, n):
    """A wavy 2 m x 2 m sheet: what a depth camera sees of a table top, before filtering."""
    xy = rng.uniform(-1, 1, (n, 2))
    return np.c_[xy, 0.05 * np.sin(3 * xy[:, 0]) * np.cos(2 * xy[:, 1]) + rng.normal(0, 0.001, n)]


def random_walk(rng, lo, hi, n, step=0.005):
    """n sphere centres, each 5 mm (per axis, normal) from the previous one, kept in [lo, hi]."""
    steps = rng.normal(0.0, step, (n, 3))
    steps[0] = rng.uniform(lo, hi)
    walk = np.cumsum(steps, axis=0)
    span = hi - lo
    walk = lo + np.abs(np.mod(walk - lo, 2 * span) - span)  # reflect into the box
    return walk


def sample_obstacle_surfaces(problem, rng, per_object):
    """per_object points uniform on each box / cylinder surface of a MotionBenchMaker problem (metres)."""
    from scipy.spatial.transform import Rotation

    clouds = []
    for b in problem.get("box", []):
        h = np.asarray(b["half_extents"])
        areas = np.array([h[1] * h[2], h[0] * h[2], h[0] * h[1]]).repeat(2)
        face = rng.choice(6, per_object, p=areas / areas.sum())
        local = rng.uniform(-h, h, (per_object, 3))
        axis, sign = face // 2, np.where(face % 2 == 0, -1.0, 1.0)
        local[np.arange(per_object), axis] = sign * h[axis]
        clouds.append(Rotation.from_quat(b["orientation_quat_xyzw"]).apply(local) + b["position"])
    for c in problem.get("cylinder", []):
        r, half = c["radius"], c["length"] / 2
        side, cap = 2 * np.pi * r * c["length"], np.pi * r * r
        kind = rng.choice(3, per_object, p=np.array([side, cap, cap]) / (side + 2 * cap))
        phi = rng.uniform(0, 2 * np.pi, per_object)
        rad = np.where(kind == 0, r, r * np.sqrt(rng.uniform(0, 1, per_object)))
        z = np.where(kind == 0, rng.uniform(-half, half, per_object), np.where(kind == 1, -half, half))
        local = np.c_[rad * np.cos(phi), rad * np.sin(phi), z]
        clouds.append(Rotation.from_quat(c["orientation_quat_xyzw"]).apply(local) + c["position"])
    return np.concatenate(clouds)


# ----------------------------------------------------------------------------- measurements
def query_ns(tree: CAPT, centers, radii, isas, repeats) -> dict:
    """{(impl, isa): [ns/sphere per repeat]} for one-at-a-time (mode 0) and lane-batched (mode 1)."""
    core = tree._tree  # the bound core object: times the kernels without the facade's checks
    c32, r32 = np.ascontiguousarray(centers, np.float32), np.ascontiguousarray(radii, np.float32)
    out = {(m, isa): [] for m in ("capt_one", "capt_lanes") for isa in isas}
    answers = {}
    for isa in isas:
        simdplan.set_isa(isa)
        for mode, name in ((0, "capt_one"), (1, "capt_lanes")):
            answers[(name, isa)] = core.collides(c32[:1000], r32[:1000], mode)
    with Timing():
        for _ in range(repeats):
            for isa in isas:
                simdplan.set_isa(isa)
                for mode, name in ((0, "capt_one"), (1, "capt_lanes")):
                    t0 = time.perf_counter_ns()
                    core.collides(c32, r32, mode)
                    out[(name, isa)].append((time.perf_counter_ns() - t0) / len(c32))
    return out, answers


def baseline_ns(points, centers, radii, repeats, brute_max) -> dict:
    from scipy.spatial import cKDTree

    kd = cKDTree(points)
    out = {"ckdtree_query": []}
    with Timing():
        for _ in range(repeats):
            t0 = time.perf_counter_ns()
            d, _ = kd.query(centers)
            _ = d < radii
            out["ckdtree_query"].append((time.perf_counter_ns() - t0) / len(centers))
    if len(points) <= brute_max:
        m = min(len(centers), max(200, 2_000_000 // max(1, len(points))))
        c, r = centers[:m], radii[:m]
        out["numpy_brute"] = []
        for _ in range(max(1, repeats // 2)):
            t0 = time.perf_counter_ns()
            for s in range(0, m, 256):
                d = c[s:s + 256, None, :] - points[None, :, :]
                _ = ((d * d).sum(axis=2) < r[s:s + 256, None] ** 2).any(axis=1)
            out["numpy_brute"].append((time.perf_counter_ns() - t0) / m)
    return out


# VAMP's release flags for GCC on x86-64 (its cmake/CompilerSettings.cmake), with the fixed ISA level
# that vamp_offline/build.sh gives VAMP itself (AVX2 + FMA: its 8-wide vectors), not tuned to the building CPU
VAMP_CXX_FLAGS = ["-std=c++17", "-O3", "-march=x86-64-v3", "-fno-math-errno", "-fno-signed-zeros", "-fno-trapping-math",
                  "-fno-rounding-math", "-ffp-contract=fast", "-fassociative-math", "-Wno-ignored-attributes"]


class VampCaptQuery:
    """VAMP's own CAPT, built and queried from C++ on the same points and spheres
    (benchmarks/vamp_offline/capt_query.cc, compiled for this run with VAMP_CXX_FLAGS against the
    headers that benchmarks/vamp_offline/build.sh installs); `why` says why not, when not."""

    def __init__(self, vamp):
        self.exe, self.why = None, ""
        here = Path(__file__).resolve().parent / "vamp_offline"
        include = Path(vamp.vamp.__file__).resolve().parent.parent / "include"
        cxx = shutil.which("g++") or shutil.which("c++")
        if not (include / "vamp" / "collision" / "capt.hh").exists():
            self.why = f"no VAMP headers in {include}"
            return
        if cxx is None:
            self.why = "no C++ compiler"
            return
        self.dir = Path(tempfile.mkdtemp(prefix="simdplan_vamp_capt_"))
        exe = self.dir / "capt_query"
        cmd = [cxx, *VAMP_CXX_FLAGS, f"-I{include}", f"-I{here / 'shims' / 'pdqsort'}", str(here / "capt_query.cc"),
               "-o", str(exe)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            self.why = f"compiling capt_query.cc failed: {done.stderr.strip().splitlines()[-1:]}"
            return
        self.exe = exe

    def run(self, points, centers, radii, repeats: int) -> dict:
        """VAMP's build time, ns per sphere per repeat ("one_ns", "simd_ns") and its one-at-a-time
        answers ("answers", bool per sphere)."""
        pts, qs = self.dir / "points.f32", self.dir / "queries.f32"
        np.ascontiguousarray(points, np.float32).tofile(pts)
        np.ascontiguousarray(np.c_[centers, radii], np.float32).tofile(qs)
        out = self.dir / "answers.u8"
        done = subprocess.run([str(self.exe), str(pts), str(qs), repr(R_MIN), repr(R_MAX), "0", str(repeats), str(out)],
                              capture_output=True, text=True, check=True)
        res = json.loads(done.stdout)
        res["answers"] = np.fromfile(out, np.uint8).astype(bool)
        return res


def exact_hits(points, centers, radii) -> tuple[np.ndarray, np.ndarray]:
    """(hit, clear) per sphere from exact distances on the float32 inputs: whether it penetrates a
    point, and whether it lies farther than 1e-5 (relative) from touching, where any answer is exact."""
    from scipy.spatial import cKDTree

    p = np.asarray(points, np.float32).astype(np.float64)
    c = np.asarray(centers, np.float32).astype(np.float64)
    r = np.asarray(radii, np.float32).astype(np.float64)
    d, _ = cKDTree(p).query(c)
    return d < r, np.abs(d - r) > 1e-5 * r


class Rows:
    def __init__(self):
        self.rows = []

    def add(self, bench, case, n, impl, metric, unit, values, note=""):
        a = np.asarray(values, dtype=np.float64)
        row = {"bench": bench, "case": case, "n": n, "impl": impl, "metric": metric, "unit": unit,
               "median": float(np.median(a)), "min": float(a.min()), "max": float(a.max()), "raw": a.tolist(),
               "note": note}
        self.rows.append(row)
        return row


def print_table(console, rows: Rows) -> None:
    from rich.table import Table

    titles = {"build": "1. CAPT build (C++), r in [0.012, 0.08]", "density": "1b. build cost vs density (10k points)",
              "query": "2. sphere queries, ns per sphere", "mbm": "2b. MotionBenchMaker clouds (10k pts/object, filtered 2 cm)",
              "pairs": "3. close_pairs vs cKDTree.query_pairs", "filter": "4. filter_pointcloud(points, 0.02)"}
    for bench, title in titles.items():
        sel = [r for r in rows.rows if r["bench"] == bench]
        if not sel:
            continue
        t = Table(title=title, title_justify="left")
        for col in ("case", "n", "impl", "metric", "median", "unit", "note"):
            t.add_column(col, justify="right" if col in ("n", "median") else "left")
        for r in sel:
            v = r["median"]
            t.add_row(r["case"], f"{r['n']:,}" if isinstance(r["n"], int) else str(r["n"]), r["impl"], r["metric"],
                      f"{v:,.3g}" if v < 100 else f"{v:,.0f}", r["unit"], r["note"])
        console.print(t)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small sizes and few repeats (smoke run, < 30 s)")
    ap.add_argument("--big", action="store_true", help="also build and query 1M uniform points (several GB, slow)")
    ap.add_argument("--json", default=str(DEFAULT_JSON), help=f"where to write raw results (default {DEFAULT_JSON})")
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args(argv)
    P = QUICK if args.quick else FULL
    sizes = P["sizes"] + ([1_000_000] if args.big else [])
    query_sizes = P["query_sizes"] + ([1_000_000] if args.big else [])

    from rich.console import Console
    console = Console(width=None if sys.stdout.isatty() else 170)
    isas = simdplan.available_isas()
    original = simdplan.isa()
    rows = Rows()
    checks: dict = {}
    t_start = time.perf_counter()
    info = machine_info()
    vamp, vamp_why = vamp_baseline.load("panda")
    log(f"VAMP side by side: {vamp.label if vamp else 'no, ' + vamp_why}")

    vamp_query = VampCaptQuery(vamp) if vamp else None
    if vamp_query and not vamp_query.exe:
        log(f"VAMP CAPT queries: not measured, {vamp_query.why}")
        vamp_query = None

    def vamp_query_rows(bench, case, n, tree, pts, centers, radii, metric):
        """VAMP's CAPT on the same spheres (rows), and both trees' answers against exact distances."""
        res = vamp_query.run(pts, centers, radii, P["query_repeats"])
        rows.add(bench, case, n, f"{vamp.label} one", metric, "ns/sphere", res["one_ns"])
        rows.add(bench, case, n, f"{vamp.label} simd, any of {res['lanes']}", metric, "ns/sphere", res["simd_ns"])
        ours = tree._tree.collides(np.ascontiguousarray(centers, np.float32), np.ascontiguousarray(radii, np.float32), 1)
        hit, clear = exact_hits(pts, centers, radii)
        for impl, got in ((f"capt_lanes {simdplan.isa()}", ours), (f"{vamp.label} one", res["answers"])):
            missed, extra = int((hit & ~got & clear).sum()), int((~hit & got & clear).sum())
            rows.add(bench, case, n, impl, "collisions missed", "spheres", [missed],
                     f"{extra} reported where none is" if extra else "")

    def vamp_build_ms(pts, reps):
        return [vamp.add_pointcloud(vamp.vamp.Environment(), pts, 0.0, R_MIN, R_MAX) / 1e6 for _ in range(reps)]

    def vamp_filter_ms(pts, reps):
        runs = [vamp.filter_pointcloud(pts, 0.02) for _ in range(reps)]
        return [ns / 1e6 for _, ns in runs], len(runs[-1][0])

    try:
        from scipy.spatial import cKDTree

        # ---- 1. build, 2. queries on uniform and clustered clouds
        for kind, make in (("uniform", uniform_cloud), ("clustered", clustered_cloud)):
            for n in sizes:
                rng = np.random.default_rng([args.seed, n, len(kind)])
                pts = make(rng, n)
                log(f"build {kind} n={n}")
                reps = P["build_repeats"] if n < 100_000 else (3 if n < 1_000_000 else 1)
                build_ms, tree = rebuilt(pts, reps)
                st = tree.stats
                leaves = 2 ** st["depth"]
                note = ANCHORS.get(("build", kind, n), "")
                rows.add("build", kind, n, "capt", "build", "ms", build_ms, note)
                rows.add("build", kind, n, "capt", "stored points per leaf", "points", [st["afforded"] / leaves])
                rows.add("build", kind, n, "capt", "memory", "MB", [(st["afforded"] * 12 + leaves * 36) / 1e6])
                kd_ms, kd_raw, _ = median_ms(lambda: cKDTree(pts), reps)
                rows.add("build", kind, n, "scipy cKDTree", "build", "ms", kd_raw)
                if vamp:
                    rows.add("build", kind, n, vamp.label, "build", "ms", vamp_build_ms(pts, reps))
                if n not in query_sizes:
                    continue  # a build-only size

                lo, hi = pts.min(0) - 0.1, pts.max(0) + 0.1
                m = P["queries"]
                for qname, centers in (("random", rng.uniform(lo, hi, (m, 3))),
                                       ("walk", random_walk(rng, lo, hi, P["walk"]))):
                    radii = rng.uniform(R_MIN, R_MAX, len(centers))
                    log(f"queries {kind} n={n} {qname}: {len(centers)} spheres x {P['query_repeats']} x {len(isas)} ISAs")
                    q, answers = query_ns(tree, centers, radii, isas, P["query_repeats"])
                    ref = answers[("capt_one", "scalar")]
                    checks[f"{kind}/{n}/{qname}/mismatches_vs_scalar_one"] = {
                        f"{impl}/{isa}": int((a != ref).sum()) for (impl, isa), a in answers.items()}
                    d, _ = cKDTree(pts.astype(np.float32).astype(np.float64)).query(centers[:1000].astype(np.float32))
                    checks[f"{kind}/{n}/{qname}/hit_fraction"] = float((d < radii[:1000].astype(np.float32)).mean())
                    case = f"{kind} {qname}"
                    for (impl, isa), vals in q.items():
                        rows.add("query", case, n, f"{impl} {isa}", "query", "ns/sphere", vals,
                                 ANCHORS[("query", "target", 0)] if (impl, isa) == ("capt_lanes", isas[-1]) else "")
                    for impl, vals in baseline_ns(pts, centers, radii, P["query_repeats"], P["brute_max"]).items():
                        rows.add("query", case, n, impl, "query", "ns/sphere", vals)
                    if vamp_query:
                        simdplan.set_isa(isas[-1])
                        vamp_query_rows("query", case, n, tree, pts, centers, radii, "query")
                if kind == "uniform":
                    simdplan.set_isa(isas[-1])
                    one = [(centers[i], float(radii[i])) for i in range(P["python_calls"])]
                    times = []
                    with Timing():
                        for _ in range(P["query_repeats"]):
                            t0 = time.perf_counter_ns()
                            for c, r in one:
                                tree.collides(c, r)
                            times.append((time.perf_counter_ns() - t0) / len(one))
                    rows.add("query", "uniform walk", n, f"CAPT.collides from Python {isas[-1]}", "one call", "ns/call", times)
                del tree

        # ---- 1b. density sweep
        for side in P["density"]:
            rng = np.random.default_rng([args.seed, 99])
            pts = rng.uniform(0, side, (10_000, 3))
            log(f"density: 10k points in a {side} m cube")
            build_ms, tree = rebuilt(pts, max(1, P["build_repeats"] // 2))
            st = tree.stats
            case = f"cube {side} m"
            rows.add("density", case, 10_000, "capt", "build", "ms", build_ms)
            rows.add("density", case, 10_000, "capt", "stored points per leaf", "points", [st["afforded"] / 2 ** st["depth"]])
            rows.add("density", case, 10_000, "capt", "pruned by dominance", "points", [st["pruned"]])
            rows.add("density", case, 10_000, "capt", "leaves kept by r_min rule", "leaves", [st["shortcut_leaves"]])
            del tree

        # ---- 2b. MotionBenchMaker scenes as point clouds
        with open(os.path.join(scenes.DATA_DIR, "panda", "problems.json")) as f:
            problems = json.load(f)["problems"]
        robot = robots.load("panda")
        for scene in ("bookshelf_small", "cage"):
            problem = next(p for p in problems[scene] if p["index"] == 1)
            rng = np.random.default_rng([args.seed, 7])
            raw = sample_obstacle_surfaces(problem, rng, 10_000)
            f_ms, f_raw, pts = median_ms(lambda: filter_pointcloud(raw, 0.02), P["build_repeats"])
            log(f"mbm {scene}: {len(raw)} -> {len(pts)} points")
            build_ms, tree = rebuilt(pts, P["build_repeats"])
            rows.add("mbm", scene, len(raw), "filter_pointcloud 2 cm", "filter", "ms", f_raw, ANCHORS.get(("mbm", "filter", 0), ""))
            rows.add("mbm", scene, len(pts), "capt", "build", "ms", build_ms,
                     ANCHORS.get(("mbm", "build", 0), ""))
            if vamp:
                times, kept = vamp_filter_ms(raw, P["build_repeats"])
                rows.add("mbm", scene, len(raw), f"{vamp.label} filter 2 cm", "filter", "ms", times, f"kept {kept:,}")
                rows.add("mbm", scene, len(pts), vamp.label, "build", "ms", vamp_build_ms(pts, P["build_repeats"]))
            Q = rng.uniform(robot.lower, robot.upper, (P["mbm_configs"], robot.dof))
            spheres = robot.fk_many(Q).reshape(-1, 4).astype(np.float64)
            radii = np.clip(spheres[:, 3], R_MIN, R_MAX)
            q, answers = query_ns(tree, spheres[:, :3], radii, isas, P["query_repeats"])
            for (impl, isa), vals in q.items():
                rows.add("mbm", scene, len(spheres), f"{impl} {isa}", "robot spheres", "ns/sphere", vals)
            for impl, vals in baseline_ns(pts, spheres[:, :3], radii, P["query_repeats"], 0).items():
                rows.add("mbm", scene, len(spheres), impl, "robot spheres", "ns/sphere", vals)
            if vamp_query:
                simdplan.set_isa(isas[-1])
                vamp_query_rows("mbm", scene, len(spheres), tree, pts, spheres[:, :3], radii, "robot spheres")
            checks[f"mbm/{scene}/sphere_hit_fraction"] = float(answers[("capt_lanes", isas[-1])].mean())
            del tree

        # ---- 3. close pairs
        for n in P["pairs"]:
            rng = np.random.default_rng([args.seed, 3, n])
            pts = rng.uniform(0, 1, (n, 3))
            tol = 0.1 / n ** (1 / 3)  # a tenth of the mean spacing: a few pairs per thousand points
            log(f"close_pairs n={n} tol={tol:.2g}")
            reps = max(1, P["build_repeats"] // 2)
            ms, raw_ms, ours = median_ms(lambda: close_pairs(pts, tol), reps)
            ms2, raw2, theirs = median_ms(lambda: cKDTree(pts).query_pairs(tol, output_type="ndarray"), reps)
            checks[f"pairs/{n}/count"] = int(len(ours))
            checks[f"pairs/{n}/equal_to_ckdtree"] = bool(len(ours) == len(theirs))
            rows.add("pairs", f"uniform tol {tol:.2g}", n, "close_pairs", "time", "ms", raw_ms,
                     ANCHORS.get(("pairs", "uniform", n), ""))
            rows.add("pairs", f"uniform tol {tol:.2g}", n, "cKDTree + query_pairs", "time", "ms", raw2)

        # ---- 4. filtering
        for n in P["filter"]:
            for kind, make in (("surface", surface_cloud), ("uniform", uniform_cloud)):
                rng = np.random.default_rng([args.seed, 4, n])
                pts = make(rng, n)
                log(f"filter {kind} n={n}")
                ms, raw_ms, kept = median_ms(lambda: filter_pointcloud(pts, 0.02), P["build_repeats"])
                anchor = ANCHORS.get(("filter", kind, n))
                rows.add("filter", kind, n, "filter_pointcloud", "time", "ms", raw_ms,
                         f"kept {len(kept):,}" + (f"; {anchor}" if anchor else ""))
                if vamp:
                    times, vkept = vamp_filter_ms(pts, P["build_repeats"])
                    rows.add("filter", kind, n, vamp.label, "time", "ms", times, f"kept {vkept:,}")
    finally:
        simdplan.set_isa(original)
        if vamp_query:
            shutil.rmtree(vamp_query.dir, ignore_errors=True)

    print_table(console, rows)
    console.print(f"machine: {info['cpu_model']} ({info['cpu_count']} CPUs), ISAs {', '.join(isas)}; "
                  f"{time.perf_counter() - t_start:.0f} s")
    out = {"machine": info, "vamp": vamp.label if vamp else None, "params": {**P, "big": args.big, "seed": args.seed, "r_min": R_MIN, "r_max": R_MAX},
           "checks": checks, "rows": rows.rows, "machine_end": {"loadavg": list(os.getloadavg())}}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)
    console.print(f"raw results: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
