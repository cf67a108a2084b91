#!/usr/bin/env python3
"""Convex hulls: support-point queries and GJK sphere / capsule distances, side by side with coal.

Hulls (fixed seed): points on the unit sphere, 100, 1k, 10k and 20k vertices; a skinny ellipsoid
(5k points, axes 1 : 0.1 : 0.02); and the UR5's collision meshes (hulls of their vertices), the
copies shipped in the repository (robots/data/ur5/meshes/ur5/collision, i.e. under
simdplan.robots.DATA_DIR; --ur5-meshes DIR reads another folder, skipped if it does not exist).
Measured, in one run, every ISA interleaved inside each repeat, medians over repeats:
  1. support   ns per cold query (each direction starts at the six axis-extreme vertices), random
               unit directions, for brute force, plain hill climbing (CSR adjacency) and packed hill
               climbing (Greer's cache lines); the ratio packed / plain
  2. sphere    ns per sphere-hull signed distance (GJK), spheres of radius 5 % of the hull's radius
               outside it (centres 1.05-2x the hull's radius from its centre; random hull pose),
               for our methods (batched: one call per batch), ours called once per sphere from
               Python, and coal (pip `coal`, hpp-fcl's successor) on the same hull (coal.Convex of
               the same vertices and triangles) and spheres: per call from Python (a prepared
               coal.ComputeDistance functor) and its own C++ timer (DistanceResult.timings);
               the agreement of the distances is recorded
  3. capsule   the same for capsules (segment length 0.5 of the hull's radius, wholly outside)
  2b, 3b       the same with centres / segment starts inside the hull: the exact depth (coal: EPA)
This is a benchmark, not a test: it never fails on timings.

    python3 benchmarks/bench_gjk.py [--quick] [--json OUT] [--ur5-meshes DIR]
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

import simdplan
from simdplan.collision import ConvexHull

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_bvh import ur5_collision_dir  # noqa: E402  (the repository's UR5 meshes)
from bench_core import Timing, machine_info  # noqa: E402  (same machine record as the core benchmark)

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "gjk.json"
FULL = dict(spheres=[100, 1_000, 10_000, 20_000], directions=100_000, support_repeats=7, queries=20_000,
            gjk_repeats=7, coal_queries=3_000, python_calls=3_000)
QUICK = dict(spheres=[100, 1_000, 10_000], directions=10_000, support_repeats=2, queries=2_000, gjk_repeats=2,
             coal_queries=300, python_calls=300)
METHODS = ("brute", "plain", "packed")


def log(msg: str) -> None:
    print(f"[bench_gjk {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def sphere_points(rng, n):
    p = rng.normal(size=(n, 3))
    return p / np.linalg.norm(p, axis=1)[:, None]


def hulls(args, rng) -> list[tuple[str, ConvexHull]]:
    out = [(f"sphere {n}", ConvexHull.from_points(sphere_points(rng, n))) for n in args.P["spheres"]]
    out.append(("ellipsoid 5k", ConvexHull.from_points(sphere_points(rng, 5_000) * [1.0, 0.1, 0.02])))
    if os.path.isdir(args.ur5_meshes):
        for path in sorted(glob.glob(os.path.join(args.ur5_meshes, "*.stl"))):
            out.append((f"ur5 {Path(path).stem}", ConvexHull.from_mesh(path)))
    else:
        log(f"no UR5 meshes at {args.ur5_meshes}: skipped")
    return out


class Rows:
    def __init__(self):
        self.rows = []

    def add(self, bench, case, n, impl, isa, unit, values, note=""):
        a = np.asarray(values, dtype=np.float64)
        self.rows.append({"bench": bench, "case": case, "n": n, "impl": impl, "isa": isa, "unit": unit,
                          "median": float(np.median(a)), "min": float(a.min()), "max": float(a.max()),
                          "raw": a.tolist(), "note": note})


def time_batches(fns: dict, isas, repeats, count) -> dict:
    """{(name, isa): [ns per item per repeat]}; ISAs and names interleaved inside every repeat."""
    out = {(name, isa): [] for name in fns for isa in isas}
    for isa in isas:  # warm-up
        simdplan.set_isa(isa)
        for f in fns.values():
            f()
    with Timing():
        for _ in range(repeats):
            for isa in isas:
                simdplan.set_isa(isa)
                for name, f in fns.items():
                    t0 = time.perf_counter_ns()
                    f()
                    out[(name, isa)].append((time.perf_counter_ns() - t0) / count)
    return out


def coal_convex(coal, h: ConvexHull):
    pts = coal.StdVec_Vec3s()
    for p in h.vertices.astype(np.float64):
        pts.append(p)
    tris = coal.StdVec_Triangle()
    for f in h.triangles:
        tris.append(coal.Triangle(int(f[0]), int(f[1]), int(f[2])))
    return coal.Convex(pts, tris)


def coal_times(coal, shapes, tfs, convex, hull_tf, repeats):
    """(ns per Python call, ns by coal's own timer, distances) over the prepared shapes and poses."""
    req = coal.DistanceRequest()
    req.enable_signed_distance = True
    req.enable_timings = True
    res = coal.DistanceResult()
    funcs = [coal.ComputeDistance(s, convex) for s in shapes]
    dist = np.empty(len(tfs))
    wall, own = [], []
    with Timing():
        for _ in range(repeats):
            user = 0.0
            t0 = time.perf_counter_ns()
            for i, (f, tf) in enumerate(zip(funcs, tfs)):
                res.clear()
                dist[i] = f(tf, hull_tf, req, res)
                user += res.timings.user
            wall.append((time.perf_counter_ns() - t0) / len(tfs))
            own.append(user * 1e3 / len(tfs))  # timings are in microseconds
    return wall, own, dist


def capsule_transform(coal, a, b):
    d = b - a
    z = d / np.linalg.norm(d)
    x = np.cross(z, [1.0, 0, 0] if abs(z[0]) < 0.9 else [0, 1.0, 0])
    x /= np.linalg.norm(x)
    return coal.Transform3s(np.c_[x, np.cross(z, x), z], (a + b) / 2), float(np.linalg.norm(d))


def print_table(console, rows: Rows, isas) -> None:
    from rich.table import Table

    best = isas[-1]
    # 1. support: one row per hull, columns per ISA and method
    t = Table(title="1. support points, ns per cold query (median)", title_justify="left")
    t.add_column("hull")
    t.add_column("n", justify="right")
    for isa in isas:
        for m in METHODS:
            t.add_column(f"{isa} {m}", justify="right")
    t.add_column(f"packed/plain {best}", justify="right")
    t.add_column(f"auto ({best})", justify="left")
    cases = list(dict.fromkeys(r["case"] for r in rows.rows if r["bench"] == "support"))
    get = {(r["bench"], r["case"], r["impl"], r["isa"]): r for r in rows.rows}
    for case in cases:
        n = get[("support", case, "brute", isas[0])]["n"]
        vals = [get[("support", case, m, isa)]["median"] for isa in isas for m in METHODS]
        ratio = get[("support", case, "packed", best)]["median"] / get[("support", case, "plain", best)]["median"]
        t.add_row(case, f"{n:,}", *[f"{v:,.0f}" for v in vals], f"{ratio:.2f}", get[("support", case, "brute", isas[0])]["note"])
    console.print(t)
    for bench, title in (("sphere", "2. sphere-hull signed distance (GJK), spheres outside the hull, ns per query (median)"),
                         ("capsule", "3. capsule-hull signed distance (GJK), capsules outside the hull, ns per query (median)"),
                         ("sphere inside", "2b. spheres whose centre is inside the hull (exact depth, O(triangles)), ns per query"),
                         ("capsule inside", "3b. capsules whose segment crosses the hull (exact depth, O(triangles + edges)), ns per query")):
        t = Table(title=title, title_justify="left")
        t.add_column("hull")
        t.add_column("n", justify="right")
        for isa in isas:
            t.add_column(f"{isa} auto", justify="right")
        for m in METHODS:
            t.add_column(f"{best} {m}", justify="right")
        for col in ("ours / call", "coal / call", "coal C++", f"coal C++ / ours {best}", "max |ours - coal|"):
            t.add_column(col, justify="right")
        cases = list(dict.fromkeys(r["case"] for r in rows.rows if r["bench"] == bench))
        if not cases:
            continue
        for case in cases:
            n = get[(bench, case, "auto", isas[0])]["n"]
            ours = get[(bench, case, "auto", best)]["median"]
            own = get[(bench, case, "coal C++ timer", "-")]["median"]
            t.add_row(case, f"{n:,}", *[f"{get[(bench, case, 'auto', isa)]['median']:,.0f}" for isa in isas],
                      *[f"{get[(bench, case, m, best)]['median']:,.0f}" for m in METHODS],
                      f"{get[(bench, case, 'ours from Python', best)]['median']:,.0f}",
                      f"{get[(bench, case, 'coal from Python', '-')]['median']:,.0f}", f"{own:,.0f}",
                      f"{own / ours:.1f}", get[(bench, case, "coal C++ timer", "-")]["note"])
        console.print(t)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer queries and repeats (smoke run, about 20 s)")
    ap.add_argument("--json", default=str(DEFAULT_JSON), help=f"where to write raw results (default {DEFAULT_JSON})")
    ap.add_argument("--ur5-meshes", default=None,
                    help="folder of the UR5 collision STLs (default: the repository's robots/data copy; skipped if absent)")
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args(argv)
    args.P = P = QUICK if args.quick else FULL
    if args.ur5_meshes is None:
        args.ur5_meshes = str(ur5_collision_dir())

    import coal
    from rich.console import Console
    from scipy.spatial.transform import Rotation

    console = Console(width=None if sys.stdout.isatty() else 250)
    isas = simdplan.available_isas()
    original = simdplan.isa()
    rows = Rows()
    checks: dict = {}
    t_start = time.perf_counter()
    info = machine_info()
    rng = np.random.default_rng(args.seed)
    try:
        for case, h in hulls(args, rng):
            n = len(h)
            core = h._hull  # the bound core object: times the kernels without the facade's checks
            st = h.stats
            log(f"{case}: {n} vertices, build {st['build_ns'] / 1e6:.1f} ms, {st['artificial_edges']} artificial edges")
            checks[f"{case}/stats"] = st

            # ---- 1. support (fewer directions on big hulls: scalar brute force takes 150 us there)
            d = rng.normal(size=(min(P["directions"], max(1000, int(1e8 / n))), 3)).astype(np.float32)
            d /= np.linalg.norm(d, axis=1)[:, None]
            answers = {}
            for isa in isas:
                simdplan.set_isa(isa)
                for m in METHODS:
                    answers[(m, isa)] = core.support(d[:2000], m)[1]
            checks[f"{case}/support_values_equal"] = bool(all((v == answers[("brute", "scalar")]).all()
                                                              for v in answers.values()))
            q = time_batches({m: (lambda m=m: core.support(d, m)) for m in METHODS}, isas, P["support_repeats"], len(d))
            simdplan.set_isa(isas[-1])
            note = h.auto_methods["support"]
            simdplan.set_isa(original)
            for (m, isa), vals in q.items():
                rows.add("support", case, n, m, isa, "ns/query", vals, note)

            # ---- 2. sphere, 3. capsule
            R = Rotation.random(random_state=rng).as_matrix()
            t = rng.uniform(-1, 1, 3)
            verts = h.vertices.astype(np.float64)
            centre = verts.mean(axis=0)
            radius = float(np.linalg.norm(verts - centre, axis=1).max())
            m_q = min(P["queries"], max(1000, int(4e7 / n)))
            u = rng.normal(size=(m_q, 3))
            u /= np.linalg.norm(u, axis=1)[:, None]
            # outside: the whole sphere / segment outside the hull's circumscribed sphere
            local = centre + u * radius * rng.uniform(1.05, 2.0, (m_q, 1))
            seg = rng.normal(size=(m_q, 3))
            seg *= 0.5 * radius / np.linalg.norm(seg, axis=1)[:, None]
            local_a = centre + u * radius * rng.uniform(1.55, 2.5, (m_q, 1))
            # overlapping: centres and segment starts inside the hull (between the centre and a vertex)
            inner = centre + (verts[rng.integers(0, n, m_q)] - centre) * rng.uniform(0, 0.9, (m_q, 1))
            r = np.full(m_q, 0.05 * radius)
            hull_tf = coal.Transform3s(R, t)
            convex = coal_convex(coal, h)
            for bench, centers in (("sphere", local @ R.T + t), ("capsule", local_a @ R.T + t),
                                   ("sphere inside", inner @ R.T + t), ("capsule inside", inner @ R.T + t)):
                a, b = centers, centers + seg @ R.T
                sphere = bench.startswith("sphere")
                inside = bench.endswith("inside")
                # NOTE: overlapping queries pay the exact depth, O(triangles (+ edges)): fewer of them
                mq = m_q if not inside else max(100, m_q // (20 if n > 3000 else 4))
                if sphere:
                    run = {m: (lambda m=m: core.sphere_distance(centers[:mq], r[:mq], R, t, m))
                           for m in ("auto",) + METHODS}
                else:
                    run = {m: (lambda m=m: core.capsule_distance(a[:mq], b[:mq], r[:mq], R, t, m))
                           for m in ("auto",) + METHODS}
                log(f"{case}: {bench} GJK, {mq} queries x {P['gjk_repeats']} x {len(isas)} ISAs")
                q = time_batches(run, isas, P["gjk_repeats"], mq)
                for (m, isa), vals in q.items():
                    rows.add(bench, case, n, m, isa, "ns/query", vals)
                # one query per Python call, best ISA
                simdplan.set_isa(isas[-1])
                k = min(P["python_calls"], mq)
                per = []
                with Timing():
                    for _ in range(P["gjk_repeats"]):
                        t0 = time.perf_counter_ns()
                        if sphere:
                            for i in range(k):
                                h.sphere_distance(centers[i], r[i], R, t)
                        else:
                            for i in range(k):
                                h.capsule_distance(a[i], b[i], r[i], R, t)
                        per.append((time.perf_counter_ns() - t0) / k)
                rows.add(bench, case, n, "ours from Python", isas[-1], "ns/call", per)
                ours = run["auto"]()[0]
                simdplan.set_isa(original)
                # coal on the same hull and queries
                kc = min(P["coal_queries"], mq)
                if sphere:
                    shapes = [coal.Sphere(float(x)) for x in r[:kc]]
                    tfs = [coal.Transform3s(np.eye(3), c) for c in centers[:kc]]
                else:
                    shapes, tfs = [], []
                    for i in range(kc):
                        tf, length = capsule_transform(coal, a[i], b[i])
                        shapes.append(coal.Capsule(float(r[i]), length))
                        tfs.append(tf)
                wall, own, dist = coal_times(coal, shapes, tfs, convex, hull_tf, max(1, P["gjk_repeats"] // 2))
                diff = float(np.abs(dist - ours[:kc]).max())
                checks[f"{case}/{bench}/max_abs_diff_vs_coal"] = diff
                rows.add(bench, case, n, "coal from Python", "-", "ns/call", wall)
                note = f"{diff:.1e}"
                if inside:  # coal's EPA stops at 128 iterations by default: short of the depth on fine hulls
                    note += f" (ours {float(np.mean(ours[:kc])):.4f}, coal {float(np.mean(dist)):.4f} mean)"
                rows.add(bench, case, n, "coal C++ timer", "-", "ns/query", own, note)
    finally:
        simdplan.set_isa(original)

    print_table(console, rows, isas)
    console.print(f"machine: {info['cpu_model']} ({info['cpu_count']} CPUs), ISAs {', '.join(isas)}; coal "
                  f"{coal.__version__}; {time.perf_counter() - t_start:.0f} s; load average {os.getloadavg()[0]:.2f}")
    out = {"machine": info, "params": {**P, "seed": args.seed, "ur5_meshes": args.ur5_meshes}, "checks": checks,
           "rows": rows.rows, "machine_end": {"loadavg": list(os.getloadavg())}}
    Path(args.json).parent.mkdir(parents=True, exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(out, f, indent=1)
    console.print(f"raw results: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
