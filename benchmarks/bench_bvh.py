#!/usr/bin/env python3
"""Sphere-vs-mesh benchmark: simdplan's TriangleMesh with and without its BVH (every ISA), side by side
with coal's BVH (OBBRSS) and trimesh, in one run.

Meshes (fixed seed; world frame, metres):
  ico-1k / ico-20k / ico-81k   trimesh icospheres of radius 1 m, subdivisions 3, 5, 6
                               (1,280, 20,480 and 81,920 triangles)
  ur5-forearm, ur5-all         the UR5 collision meshes shipped in the repository
                               (robots/data/ur5/meshes/ur5/collision, i.e. simdplan.robots.DATA_DIR):
                               the forearm (1,050 triangles) and all seven links concatenated in their
                               own frames (5,328 triangles); --quick uses the forearm only
Queries: robot-like spheres near the surface: a random surface point plus an offset uniform in a
ball of 0.15 x the mesh size, radius uniform in [0.02, 0.08] x the mesh size (about half collide).
Two orders: "grouped" (runs of 16 spheres within a 0.05 x size ball, as a robot link's spheres
come) and "random" (the same spheres shuffled). Points for distance queries are the centres.
Measured, ns per sphere / point (medians over repeats, ISAs interleaved inside every repeat), on the
core binding (float32 arrays already prepared):
  any-hit   collides: tree "single" (one sphere at a time, nearer child first), tree "packet" (the
            SIMD width of consecutive spheres descend together), and "brute" (every triangle, W
            spheres per vector, no tree)
  nearest   distance unbounded and with max_distance = 0.05 x size: tree and brute force
  coal      pip `coal` 3 (hpp-fcl's successor) on the same triangles as a coal.BVHModelOBBRSS, on a
            subset of the "random" spheres, one query per Python call through prepared functors:
            any-hit = coal.ComputeCollision(Sphere(r), mesh) (num_max_contacts = 1: it stops at the
            first contact; enable_contact off: no contact point, a yes / no answer as ours);
            distance = coal.ComputeDistance(Sphere(0), mesh) at the centre (the unsigned
            point-to-surface distance, as our "nearest tree"). Each is timed per Python call
            (timings off) and by coal's own C++ timer (CollisionResult / DistanceResult.timings,
            on, in a second pass right after); the Python + binding overhead is that second pass's
            wall time minus coal's timer (per repeat, then the median). Checked against ours: verdict
            disagreements (spheres within 1e-5 x size of touching left out as ties) and the
            largest |distance difference|
  trimesh   trimesh.proximity.closest_point on a subset (it is pure NumPy; ns per point)
This is a benchmark, not a test: it never fails on timings (answers are cross-checked, though).

    python3 benchmarks/bench_bvh.py [--quick] [--json OUT]
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
import trimesh

import simdplan
from simdplan.collision import TriangleMesh

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_core import Timing, machine_info  # noqa: E402

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "bvh.json"
UR5_COLLISION = Path("ur5", "meshes", "ur5", "collision")  # under robots/data (simdplan.robots.DATA_DIR)
FULL = dict(subdivisions=[3, 5, 6], queries=20_000, brute_queries=2_000, repeats=5, trimesh_points=300,
            ur5="all", coal_queries=3_000, coal_repeats=3)
QUICK = dict(subdivisions=[3, 5], queries=4_000, brute_queries=500, repeats=3, trimesh_points=100,
             ur5="forearm", coal_queries=300, coal_repeats=2)
TOUCH_TOL = 1e-5  # x mesh size: spheres this close to touching are ties, left out of the verdict comparison


def log(msg: str) -> None:
    print(f"[bench_bvh {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def ur5_collision_dir() -> Path:
    """The UR5 collision STLs shipped with simdplan: the repository's robots/data copy (this file's
    checkout), else the imported package's simdplan.robots.DATA_DIR."""
    here = Path(__file__).resolve().parents[1] / "robots" / "data" / UR5_COLLISION
    if here.is_dir():
        return here
    from simdplan.robots import DATA_DIR

    there = Path(DATA_DIR) / UR5_COLLISION
    if not there.is_dir():
        raise FileNotFoundError(f"UR5 collision meshes not found in {here} nor {there}")
    return there


def load_meshes(cfg) -> dict:
    out = {}
    for s in cfg["subdivisions"]:
        m = trimesh.creation.icosphere(subdivisions=s, radius=1.0)
        out[f"ico-{len(m.faces) // 1000}k"] = m
    if cfg["ur5"]:
        files = sorted(glob.glob(str(ur5_collision_dir() / "*.stl")))
        parts = [trimesh.load(f, force="mesh") for f in files]
        out["ur5-forearm"] = next(p for f, p in zip(files, parts) if f.endswith("forearm.stl"))
        if cfg["ur5"] == "all":
            out["ur5-all"] = trimesh.util.concatenate(parts)
    return out


def coal_mesh(coal, tm: trimesh.Trimesh):
    """The same triangles as a coal.BVHModelOBBRSS (built in the mesh's frame = the world)."""
    bvh = coal.BVHModelOBBRSS()
    bvh.beginModel(len(tm.faces), len(tm.vertices))
    bvh.addVertices(np.ascontiguousarray(tm.vertices, dtype=np.float64))
    bvh.addTriangles(np.ascontiguousarray(tm.faces, dtype=np.int64))
    bvh.endModel()
    return bvh


def coal_queries(coal, bvh, centres, radii, repeats: int) -> dict:
    """coal on one sphere per Python call: any-hit (ComputeCollision, sphere vs mesh) and distance
    (ComputeDistance, the centre as a zero-radius sphere). Per repeat, ns per call from Python
    (timings off) and by coal's own C++ timer (timings on, a separate pass); and the answers."""
    ident = coal.Transform3s()
    tfs = [coal.Transform3s(np.eye(3), c) for c in centres.astype(np.float64)]
    # NOTE: a functor keeps a pointer to its shapes, not a Python reference: keep the spheres alive
    spheres_ = [coal.Sphere(float(r)) for r in radii]
    point = coal.Sphere(0.0)
    hit_funcs = [coal.ComputeCollision(s, bvh) for s in spheres_]
    dist_func = coal.ComputeDistance(point, bvh)
    k = len(tfs)
    out = {f"{q}_{m}": [] for q in ("hit", "dist") for m in ("wall", "own", "wall_timed")}
    hits, dists = np.zeros(k, dtype=bool), np.zeros(k)

    def hit_pass(timings: bool) -> float:
        req, res = coal.CollisionRequest(), coal.CollisionResult()
        req.enable_contact = False  # a yes/no answer, as ours (with contacts: EPA on every hit, ~2x slower)
        req.enable_timings = timings
        own = 0.0
        for i, (f, tf) in enumerate(zip(hit_funcs, tfs)):
            res.clear()
            hits[i] = f(tf, ident, req, res) > 0
            own += res.timings.user if timings else 0.0
        return own

    def dist_pass(timings: bool) -> float:
        req, res = coal.DistanceRequest(), coal.DistanceResult()
        req.enable_timings = timings
        own = 0.0
        for i, tf in enumerate(tfs):
            res.clear()
            dists[i] = dist_func(tf, ident, req, res)
            own += res.timings.user if timings else 0.0
        return own

    hit_pass(False)  # warm-up (and the answers)
    dist_pass(False)
    with Timing():
        for _ in range(repeats):
            for name, fn in (("hit", hit_pass), ("dist", dist_pass)):
                t0 = time.perf_counter_ns()
                fn(False)
                t1 = time.perf_counter_ns()
                own = fn(True) * 1e3  # coal's timings are in microseconds
                t2 = time.perf_counter_ns()
                out[f"{name}_wall"].append((t1 - t0) / k)
                out[f"{name}_own"].append(own / k)
                out[f"{name}_wall_timed"].append((t2 - t1) / k)  # the pass with timings on: wall - own >= 0
    out["hits"], out["dists"] = hits, dists
    return out


def spheres(rng, mesh: trimesh.Trimesh, k: int):
    """(grouped centres, radii, random-order centres, radii): robot-like spheres near the surface."""
    size = float(np.linalg.norm(mesh.extents))
    groups = (k + 15) // 16
    anchors, _ = trimesh.sample.sample_surface(mesh, groups, seed=int(rng.integers(1 << 31)))
    u = rng.normal(size=(groups, 3))
    u *= (0.15 * size * rng.uniform(0, 1, groups) ** (1 / 3) / np.linalg.norm(u, axis=1))[:, None]
    centres = np.repeat(anchors + u, 16, axis=0)[:k]
    j = rng.normal(size=(k, 3))
    centres = centres + j * (0.05 * size * rng.uniform(0, 1, k) ** (1 / 3) / np.linalg.norm(j, axis=1))[:, None]
    radii = rng.uniform(0.02, 0.08, k) * size
    perm = rng.permutation(k)
    f32 = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731
    return f32(centres), f32(radii), f32(centres[perm]), f32(radii[perm]), size


def time_ns(fn, n: int) -> float:
    with Timing():
        t0 = time.perf_counter_ns()
        fn()
        return (time.perf_counter_ns() - t0) / n


def median(v) -> float:
    return float(np.median(v))


def run(cfg) -> dict:
    import coal

    isas = simdplan.available_isas()
    rng = np.random.default_rng(2024)
    results = {"isas": isas, "config": cfg, "coal_version": coal.__version__, "meshes": {}}
    if cfg["ur5"]:
        results["ur5_meshes"] = str(ur5_collision_dir())
    for name, tm in load_meshes(cfg).items():
        mesh = TriangleMesh.from_trimesh(tm)
        core = mesh._mesh
        cg, rg, cr, rr, size = spheres(rng, tm, cfg["queries"])
        nb = cfg["brute_queries"]
        bound = 0.05 * size
        log(f"{name}: {len(mesh)} triangles, depth {mesh.depth}, build {mesh.build_time_ns / 1e6:.2f} ms")
        # answers agree (a benchmark of wrong answers is worthless)
        for isa in isas:
            simdplan.set_isa(isa)
            ref = core.collides(cg[:nb], rg[:nb], "brute")
            for m in ("single", "packet"):
                assert np.array_equal(core.collides(cg[:nb], rg[:nb], m), ref), (name, isa, m)
            assert np.array_equal(core.distance(cg[:nb], np.inf)[0], core.distance_brute(cg[:nb], np.inf)[0])
        cases = {
            "hit single grouped": (lambda: core.collides(cg, rg, "single"), len(cg)),
            "hit packet grouped": (lambda: core.collides(cg, rg, "packet"), len(cg)),
            "hit single random": (lambda: core.collides(cr, rr, "single"), len(cr)),
            "hit packet random": (lambda: core.collides(cr, rr, "packet"), len(cr)),
            "hit brute": (lambda: core.collides(cr[:nb], rr[:nb], "brute"), nb),
            "nearest tree": (lambda: core.distance(cr, np.inf), len(cr)),
            "nearest tree bounded": (lambda: core.distance(cr, bound), len(cr)),
            "nearest brute": (lambda: core.distance_brute(cr[:nb], np.inf), nb),
        }
        samples = {(c, isa): [] for c in cases for isa in isas}
        for _ in range(cfg["repeats"]):
            for isa in isas:
                simdplan.set_isa(isa)
                for c, (fn, n) in cases.items():
                    samples[(c, isa)].append(time_ns(fn, n))
        entry = {
            "triangles": len(mesh), "depth": mesh.depth, "build_ms": mesh.build_time_ns / 1e6,
            "hit_fraction": float(core.collides(cr, rr).mean()),
            "ns": {c: {isa: median(samples[(c, isa)]) for isa in isas} for c in cases},
        }
        # trimesh.proximity.closest_point (rtree candidates, NumPy exact distances)
        k = cfg["trimesh_points"]
        pts = cr[:k].astype(np.float64)
        tm.nearest  # builds trimesh's caches outside the timing
        trimesh.proximity.closest_point(tm, pts[:5])
        t0 = time.perf_counter_ns()
        _, tdist, _ = trimesh.proximity.closest_point(tm, pts)
        entry["trimesh_closest_point_ns"] = (time.perf_counter_ns() - t0) / k
        ours = mesh.distance(pts)[0]
        entry["max_abs_diff_vs_trimesh_m"] = float(np.abs(ours - tdist).max())
        # coal: the same triangles as an OBBRSS BVH, a subset of the random-order spheres
        kc = min(cfg["coal_queries"], len(cr))
        t0 = time.perf_counter_ns()
        bvh = coal_mesh(coal, tm)
        entry["coal_build_ms"] = (time.perf_counter_ns() - t0) / 1e6
        log(f"{name}: coal, {kc} spheres x {cfg['coal_repeats']} repeats (build {entry['coal_build_ms']:.2f} ms)")
        cq = coal_queries(coal, bvh, cr[:kc], rr[:kc], cfg["coal_repeats"])
        keys = [f"{q}_{m}" for q in ("hit", "dist") for m in ("wall", "own", "wall_timed")]
        entry["coal_ns"] = {key: median(cq[key]) for key in keys}
        entry["coal_raw_ns"] = {key: cq[key] for key in keys}
        # Python's share: per repeat, wall - C++ time of the timed pass (the same calls)
        for q in ("hit", "dist"):
            entry["coal_ns"][f"{q}_python"] = median(np.subtract(cq[f"{q}_wall_timed"], cq[f"{q}_own"]))
        simdplan.set_isa(isas[-1])
        our_hit = core.collides(cr[:kc], rr[:kc])
        our_d = core.distance(cr[:kc], np.inf)[0].astype(np.float64)
        tie = np.abs(our_d - rr[:kc]) <= TOUCH_TOL * size
        entry["coal_check"] = {
            "queries": kc, "ties_excluded": int(tie.sum()),
            "verdict_disagreements": int((cq["hits"] != our_hit)[~tie].sum()),
            "verdict_disagreements_in_ties": int((cq["hits"] != our_hit)[tie].sum()),
            "max_abs_distance_diff_m": float(np.abs(cq["dists"] - our_d).max()),
        }
        results["meshes"][name] = entry
    return results


def print_table(res: dict) -> None:
    isas = res["isas"]
    print("\nns per sphere / point, medians (lower is better); ratio = brute / best tree; coal (one Python call per"
          "\nquery) per call and by its C++ timer, ratio = coal C++ / ours at the best ISA (any-hit: best of single and"
          "\npacket, random order; distance: nearest tree, unbounded, point)")
    head = f"{'mesh':<12} {'tris':>7} {'case':<22}" + "".join(f"{i:>10}" for i in isas)
    print(head)
    print("-" * len(head))
    for name, e in res["meshes"].items():
        for c, per in e["ns"].items():
            print(f"{name:<12} {e['triangles']:>7} {c:<22}" + "".join(f"{per[i]:>10.0f}" for i in isas))
        best = isas[-1]
        hit_tree = min(e["ns"]["hit single random"][best], e["ns"]["hit packet random"][best])
        print(f"{'':<12} {'':>7} {'any-hit brute/tree':<22}{e['ns']['hit brute'][best] / hit_tree:>10.0f}x ({best})")
        print(f"{'':<12} {'':>7} {'nearest brute/tree':<22}"
              f"{e['ns']['nearest brute'][best] / e['ns']['nearest tree'][best]:>10.0f}x ({best})")
        print(f"{'':<12} {'':>7} {'trimesh closest_point':<22}{e['trimesh_closest_point_ns']:>10.0f}"
              f"  ({e['trimesh_closest_point_ns'] / e['ns']['nearest tree'][best]:.0f}x ours; "
              f"max |diff| {e['max_abs_diff_vs_trimesh_m']:.1e} m; build {e['build_ms']:.2f} ms; "
              f"{100 * e['hit_fraction']:.0f}% hit)")
        c, ck = e["coal_ns"], e["coal_check"]
        nearest = e["ns"]["nearest tree"][best]
        for label, q, ours in (("coal any-hit", "hit", hit_tree), ("coal distance (point)", "dist", nearest)):
            own = c[f"{q}_own"]
            print(f"{'':<12} {'':>7} {label:<22}{c[f'{q}_wall']:>10.0f} per call, {own:,.0f} C++ timer "
                  f"(Python + binding {c[f'{q}_python']:,.0f}); C++ {own / ours:.1f}x ours")
        print(f"{'':<12} {'':>7} {'coal vs ours':<22}{ck['verdict_disagreements']:>10} verdict disagreements of "
              f"{ck['queries']} ({ck['ties_excluded']} ties excluded); max |distance diff| "
              f"{ck['max_abs_distance_diff_m']:.1e} m; coal build {e['coal_build_ms']:.2f} ms")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="small meshes, fewer queries (smoke run)")
    ap.add_argument("--json", nargs="?", const=str(DEFAULT_JSON), default=None, help="write results as JSON")
    args = ap.parse_args(argv)
    cfg = QUICK if args.quick else FULL
    before = simdplan.isa()
    try:
        res = run(cfg)
    finally:
        simdplan.set_isa(before)
    res["machine"] = machine_info()
    print_table(res)
    print(f"\ncoal {res['coal_version']}; UR5 meshes {res.get('ur5_meshes', '-')}; "
          f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs (shared machine: expect noise)")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(res, indent=1))
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
