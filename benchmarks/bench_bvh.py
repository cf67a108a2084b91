#!/usr/bin/env python3
"""Sphere-vs-mesh benchmark: simdplan's TriangleMesh with and without its BVH (every ISA), against trimesh.

Meshes (fixed seed; world frame, metres):
  ico-1k / ico-20k / ico-81k   trimesh icospheres of radius 1 m, subdivisions 3, 5, 6
                               (1,280, 20,480 and 81,920 triangles)
  ur5-forearm, ur5-all         the UR5 collision meshes in ../shared/robots/ur5 (if present; read by
                               this benchmark only): the forearm (1,050 triangles) and all seven links
                               concatenated in their own frames (5,328 triangles)
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
UR5 = Path(__file__).resolve().parents[2] / "shared" / "robots" / "ur5" / "meshes" / "ur5" / "collision"
FULL = dict(subdivisions=[3, 5, 6], queries=20_000, brute_queries=2_000, repeats=5, trimesh_points=300, ur5=True)
QUICK = dict(subdivisions=[3, 5], queries=4_000, brute_queries=500, repeats=3, trimesh_points=100, ur5=False)


def log(msg: str) -> None:
    print(f"[bench_bvh {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def load_meshes(cfg) -> dict:
    out = {}
    for s in cfg["subdivisions"]:
        m = trimesh.creation.icosphere(subdivisions=s, radius=1.0)
        out[f"ico-{len(m.faces) // 1000}k"] = m
    files = sorted(glob.glob(str(UR5 / "*.stl"))) if cfg["ur5"] else []
    if files:
        parts = [trimesh.load(f, force="mesh") for f in files]
        out["ur5-forearm"] = next(p for f, p in zip(files, parts) if f.endswith("forearm.stl"))
        out["ur5-all"] = trimesh.util.concatenate(parts)
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
    isas = simdplan.available_isas()
    rng = np.random.default_rng(2024)
    results = {"isas": isas, "config": cfg, "meshes": {}}
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
        results["meshes"][name] = entry
    return results


def print_table(res: dict) -> None:
    isas = res["isas"]
    print("\nns per sphere / point, medians (lower is better); ratio = brute / best tree")
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
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps(res, indent=1))
        log(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
