"""Nearest neighbours of the planners: brute force vs the k-d tree, by tree size (switch point).

    python3 benchmarks/bench_nearest.py [--quick] [--isa all|scalar|avx2|avx512] [--json OUT]

Points are inserted one at a time (as a planning tree grows), then 2,000 queries are answered;
reports ns per query, median of 5 repeats, for uniform random points in a 7-D box (panda-like)
and in a 7-D box with points on a 2-D sheet (a tree squeezed through a passage). scipy's cKDTree
(built once, static) is shown for reference. Every ISA this machine runs by default (--isa all):
each build has kernels of its own, and a slow one hides behind a fast default. Prints a table;
writes JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
from rich.console import Console
from rich.table import Table

import simdplan
from simdplan import _core


def clouds(n: int, rng) -> dict:
    uniform = rng.uniform(-2.9, 2.9, (n, 7))
    sheet = np.zeros((n, 7))
    sheet[:, :2] = rng.uniform(-2.9, 2.9, (n, 2))
    sheet[:, 2:] = rng.normal(0, 0.01, (n, 5))
    return {"uniform 7-D": uniform, "2-D sheet in 7-D": sheet}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--isa", default="all", help="all (default) or one of simdplan.available_isas()")
    ap.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "results", "nearest.json"))
    args = ap.parse_args()
    sizes = [64, 256, 1024, 4096, 16384] if args.quick else [64, 256, 512, 1024, 2048, 4096, 16384, 65536, 100000]
    reps = 3 if args.quick else 5
    rng = np.random.default_rng(0)
    try:
        from scipy.spatial import cKDTree
    except ImportError:
        cKDTree = None
    isas = simdplan.available_isas() if args.isa == "all" else [args.isa]
    before = simdplan.isa()
    rows = []
    try:
        for isa in isas:
            simdplan.set_isa(isa)
            rows += measure(sizes, reps, np.random.default_rng(0), isa, cKDTree)
    finally:
        simdplan.set_isa(before)
    table = Table(title="nearest neighbour query, ns per query (median)")
    for c in ("ISA", "n", "cloud", "brute force", "k-d tree", "tree / brute", "tree insert ns/pt", "cKDTree (batch)"):
        table.add_column(c, justify="right")
    for r in rows:
        table.add_row(r["isa"], str(r["n"]), r["cloud"], f"{r['brute_ns']:.0f}", f"{r['tree_ns']:.0f}",
                      f"{r['tree_ns'] / r['brute_ns']:.2f}x", f"{r['tree_insert_ns']:.0f}",
                      "-" if r["ckdtree_batch_ns"] is None else f"{r['ckdtree_batch_ns']:.0f}")
    Console().print(table)
    os.makedirs(os.path.dirname(args.json), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump({"rows": rows, "switch_point_in_code": "NearestNeighbors::kIndexFrom"}, f, indent=1)
    print(f"raw results: {args.json}")


def measure(sizes, reps, rng, isa: str, cKDTree) -> list[dict]:
    """Rows of the table for the active ISA."""
    rows = []
    for n in sizes:
        for name, pts in clouds(n, rng).items():
            queries = pts[rng.integers(0, n, 2000)] + rng.normal(0, 0.05, (2000, 7))
            res = {}
            for label, index_from in (("brute", 2**62), ("tree", 1)):
                qs = []
                for _ in range(reps):
                    idx, d2, build_ns, query_ns, indexed = _core.nearest_neighbors(pts, queries, index_from)
                    qs.append(query_ns / len(queries))
                res[label] = (float(np.median(qs)), idx, build_ns / n)
            assert np.allclose(np.sum((pts[res["brute"][1]] - queries) ** 2, 1),
                               np.sum((pts[res["tree"][1]] - queries) ** 2, 1), rtol=1e-4, atol=1e-6)
            ck = None
            if cKDTree is not None:
                tree = cKDTree(pts)
                t = time.perf_counter_ns()
                tree.query(queries, k=1)
                ck = (time.perf_counter_ns() - t) / len(queries)
            rows.append({"isa": isa, "n": n, "cloud": name, "brute_ns": res["brute"][0], "tree_ns": res["tree"][0],
                         "tree_insert_ns": res["tree"][2], "ckdtree_batch_ns": ck})
    return rows


if __name__ == "__main__":
    main()
