#!/usr/bin/env python3
"""Obstacle kinds at the robot level: the same geometry as primitives, triangle meshes and convex hulls.

Robot: the Franka Panda (simdplan.robots.load("panda")), base at the origin. Scenes (world frame,
metres; fixed seeds), each built once per obstacle kind:
  (a) tabletop   6 boxes: a table top, three blocks on it (two turned about z), a side wall and an
                 overhead shelf; as primitive boxes (env.add_box), as meshes (trimesh.creation.box
                 through env.add_mesh, same pose) and as convex hulls (env.add_convex of the same
                 trimesh box, same pose)
  (b) forearm    the UR5 forearm collision STL shipped in the repository (robots/data/ur5/...,
                 1,050 triangles; centred, lying along y in front of the robot) as a mesh and as a
                 convex hull (not the same geometry: the hull fills the mesh's concavities)
      icosphere  a trimesh icosphere, subdivision 4 (5,120 triangles, radius 0.15 m), as a mesh and
                 as a convex hull; and the primitive sphere of the same radius for reference
                 (its surface bulges up to 0.4 mm beyond the facets: timing only, not checked)
  (c) many-N     N = 10, 100, 1000, 5000 small random boxes (half extents 5-25 mm, random
                 orientation) with centres uniform in the 2 m cube centred at (0, 0, 0.5), none
                 within 0.3 m of (0, 0, 0.2) (the robot's base); primitives, and for N <= 1000
                 (--quick: N <= 10) also as meshes and convex hulls of the same boxes
Measured, every ISA in simdplan.available_isas() (set_isa, restored at the end), the ISAs and the
obstacle kinds of a scene interleaved inside every repeat, medians over repeats:
  1. batch      robot.is_valid_many(Q, env), 10k configurations uniform in the joint limits (the
                same Q for every scene and kind), ns per configuration
  2. single     robot.is_valid(q, env) from a Python loop over 2k of them, ns per call
  3. clearance  robot.clearance_many(Q, env) on 1k of them, (a) and (b), ns per configuration
  4. planning   simdplan.plan(robot, env, start, goal, seed=i) (RRT-Connect, default settings,
                best ISA) in (a), 5 random start / goal pairs valid in the scene and not joined by a
                straight valid motion, each kind with the same seeds, with discrete and with
                certified Link: stats["planning_time_ns"]
Also: the time to build each environment (the add_* calls: trees, hulls) and its first check
(compiling it for the core). Cross-checks, reported, never fatal: every ISA against scalar, single
calls against the batch, and the verdicts of each kind against the primitive version of the same
geometry (icosphere: mesh against convex). A disagreement is explained as "near contact" when the
reference's clearance is within 1e-5 m of 0, or for a mesh as "inside" when a robot sphere lies
wholly inside one of the solids (a mesh is a surface: such a sphere touches no triangle); the
others are counted as unexplained. This is a benchmark, not a test: it never fails on timings.

    python3 benchmarks/bench_env_shapes.py [--quick] [--json OUT] [--seed S]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import trimesh
from scipy.spatial import ConvexHull as QHull
from scipy.spatial.transform import Rotation

import simdplan
from simdplan import Environment

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_bvh import ur5_collision_dir  # noqa: E402  (the repository's UR5 meshes)
from bench_core import Timing, machine_info  # noqa: E402  (same machine record as the core benchmark)

DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "env_shapes.json"
FULL = dict(configs=10_000, repeats=5, single_calls=2_000, clear_configs=1_000, clear_repeats=3,
            many=[10, 100, 1000, 5000], kinds_max=1000, plan_pairs=5, plan_repeats=3)
QUICK = dict(configs=2_000, repeats=2, single_calls=300, clear_configs=200, clear_repeats=2,
             many=[10, 100, 1000, 5000], kinds_max=10, plan_pairs=2, plan_repeats=1)
TOUCH_TOL = 1e-5  # metres: verdicts may differ this close to contact (float32 checks of different shapes)
PLAN_TIME_LIMIT = 10.0  # seconds per plan (generous: a loaded machine must not cut a plan short)

# (a) position, yaw about z (degrees), half extents
TABLETOP = [
    ((0.60, 0.00, 0.30), 0.0, (0.30, 0.60, 0.02)),    # table top
    ((0.55, 0.25, 0.40), 0.0, (0.04, 0.04, 0.08)),    # block
    ((0.62, -0.20, 0.38), 30.0, (0.05, 0.05, 0.06)),  # block, turned
    ((0.45, 0.05, 0.42), -20.0, (0.03, 0.10, 0.10)),  # block, turned
    ((0.00, -0.55, 0.50), 0.0, (0.50, 0.02, 0.50)),   # side wall
    ((0.60, 0.00, 0.95), 0.0, (0.30, 0.60, 0.02)),    # overhead shelf
]
FOREARM_POSE = ((0.45, 0.0, 0.45), Rotation.from_euler("x", 90, degrees=True).as_quat())
ICO = dict(subdivisions=4, radius=0.15, center=(0.50, 0.0, 0.40))


def log(msg: str) -> None:
    print(f"[bench_env_shapes {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- scenes
class Scene:
    """One geometry in several obstacle kinds: envs {kind: Environment}, the reference kind for the
    verdict cross-check, the solids (qhull equations, world frame) for the "inside" test."""

    def __init__(self, name: str, group: str):
        self.name, self.group = name, group
        self.envs: dict[str, Environment] = {}
        self.build_ms: dict[str, float] = {}
        self.reference: str | None = None
        self.checked: list[str] = []  # kinds compared against the reference
        self.solids: list[np.ndarray] = []

    def build(self, kind: str, fill) -> None:
        env = Environment()
        t0 = time.perf_counter_ns()
        fill(env)
        self.build_ms[kind] = (time.perf_counter_ns() - t0) / 1e6
        self.envs[kind] = env


def box_solid(pos, quat, he) -> np.ndarray:
    corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]) * he
    return QHull(corners @ Rotation.from_quat(quat).as_matrix().T + pos).equations


def box_scene(name: str, group: str, boxes, kinds) -> Scene:
    """boxes: [(position, quat xyzw, half extents)]."""
    sc = Scene(name, group)
    meshes = [trimesh.creation.box(extents=2 * np.asarray(he)) for _, _, he in boxes]
    fills = {
        "box": lambda env: [env.add_box(p, q, he) for p, q, he in boxes],
        "mesh": lambda env: [env.add_mesh(m, position=p, quat=q) for (p, q, _), m in zip(boxes, meshes)],
        "convex": lambda env: [env.add_convex(m, position=p, quat=q) for (p, q, _), m in zip(boxes, meshes)],
    }
    for kind in kinds:
        sc.build(kind, fills[kind])
    sc.reference, sc.checked = "box", [k for k in kinds if k != "box"]
    sc.solids = [box_solid(p, q, he) for p, q, he in boxes]
    return sc


def tabletop_scene() -> Scene:
    boxes = [(np.array(p), Rotation.from_euler("z", yaw, degrees=True).as_quat(), np.array(he))
             for p, yaw, he in TABLETOP]
    return box_scene("(a) tabletop, 6 boxes", "a", boxes, ("box", "mesh", "convex"))


def many_boxes(n: int, seed: int):
    rng = np.random.default_rng([seed, n])
    out = []
    while len(out) < n:
        c = rng.uniform(-1.0, 1.0, 3) + [0.0, 0.0, 0.5]
        if np.linalg.norm(c - [0.0, 0.0, 0.2]) < 0.3:
            continue
        out.append((c, Rotation.random(random_state=rng).as_quat(), rng.uniform(0.005, 0.025, 3)))
    return out


def forearm_scene() -> Scene:
    tm = trimesh.load(str(ur5_collision_dir() / "forearm.stl"), force="mesh")
    tm.apply_translation(-tm.bounds.mean(axis=0))
    pos, quat = FOREARM_POSE
    sc = Scene(f"(b) UR5 forearm ({len(tm.faces):,} tris)", "b")
    sc.build("mesh", lambda env: env.add_mesh(tm, position=pos, quat=quat))
    sc.build("convex", lambda env: env.add_convex(tm, position=pos, quat=quat))
    return sc  # mesh and hull differ (concavities): no verdict cross-check


def icosphere_scene() -> Scene:
    tm = trimesh.creation.icosphere(subdivisions=ICO["subdivisions"], radius=ICO["radius"])
    c = np.array(ICO["center"])
    sc = Scene(f"(b) icosphere ({len(tm.faces):,} tris)", "b")
    sc.build("mesh", lambda env: env.add_mesh(tm, position=c))
    sc.build("convex", lambda env: env.add_convex(tm, position=c))
    sc.build("sphere (ref.)", lambda env: env.add_sphere(c, ICO["radius"]))
    sc.reference, sc.checked = "convex", ["mesh"]
    sc.solids = [QHull(tm.vertices + c).equations]
    return sc


# ----------------------------------------------------------------------------- timing
def interleaved(fns: dict, isas, repeats: int, per: int) -> dict:
    """{(name, isa): [ns per item, one per repeat]}; ISAs and names interleaved inside every repeat."""
    out = {(name, isa): [] for name in fns for isa in isas}
    with Timing():
        for _ in range(repeats):
            for isa in isas:
                simdplan.set_isa(isa)
                for name, fn in fns.items():
                    t0 = time.perf_counter_ns()
                    fn()
                    out[(name, isa)].append((time.perf_counter_ns() - t0) / per)
    return out


def single_loop(robot, env, items):
    """A function calling robot.is_valid(q, env) once per item (a bare loop, as bench_core times it)."""
    f = robot.is_valid

    def loop():
        for q in items:
            f(q, env)
    return loop


# ----------------------------------------------------------------------------- cross-checks
def inside_any(robot, Q, solids) -> np.ndarray:
    """(n,) bool: some robot sphere lies wholly inside one of the convex solids (strictly, by TOUCH_TOL)."""
    S = robot.fk_many(Q).astype(np.float64)  # (n, spheres, 4): centre, radius
    out = np.zeros(len(Q), dtype=bool)
    for eq in solids:
        depth = (S[..., :3] @ eq[:, :3].T + eq[:, 3]).max(axis=-1)  # signed distance of the centre (inside)
        out |= (depth < -(S[..., 3] + TOUCH_TOL)).any(axis=1)
    return out


def cross_check(robot, sc: Scene, Q, verdicts: dict, isas) -> dict:
    """Each checked kind against the reference, every ISA; disagreements classified once (union)."""
    out = {}
    for kind in sc.checked:
        per_isa = {isa: int((verdicts[(kind, isa)] != verdicts[(sc.reference, isa)]).sum()) for isa in isas}
        bad = np.zeros(len(Q), dtype=bool)
        for isa in isas:
            bad |= verdicts[(kind, isa)] != verdicts[(sc.reference, isa)]
        rec = {"reference": sc.reference, "configs": len(Q), "per_isa": per_isa, "union": int(bad.sum()),
               "near_contact": 0, "inside": 0, "unexplained": 0}
        if bad.any():
            Qb = Q[bad]
            inside = inside_any(robot, Qb, sc.solids) if kind == "mesh" else np.zeros(len(Qb), dtype=bool)
            clear = robot.clearance_many(Qb, sc.envs[sc.reference], self_collision=False)
            near = ~inside & (np.abs(clear) <= TOUCH_TOL)
            rec.update(inside=int(inside.sum()), near_contact=int(near.sum()),
                       unexplained=int((~inside & ~near).sum()))
            if rec["unexplained"]:
                rec["unexplained_examples"] = Qb[~inside & ~near][:5].tolist()
                rec["unexplained_reference_clearance"] = clear[~inside & ~near][:5].tolist()
        out[kind] = rec
    return out


# ----------------------------------------------------------------------------- planning
def plan_pairs(robot, env, rng, n: int):
    """n (start, goal) pairs valid in env whose straight motion is not valid (planning needed)."""
    pairs, tries = [], 0
    while len(pairs) < n and tries < 1000:
        tries += 1
        Q = rng.uniform(robot.lower, robot.upper, size=(200, robot.dof))
        Q = Q[robot.is_valid_many(Q, env)]
        for a, b in zip(Q[0::2], Q[1::2]):
            if len(pairs) < n and not robot.is_motion_valid(a, b, env):
                pairs.append((a, b))
    return pairs


def bench_planning(robot, sc: Scene, pairs, repeats: int, link: str = "discrete") -> dict:
    """{kind: time_ns (per pair, median over repeats), solved, iterations, collision_checks, paths}."""
    kinds = list(sc.envs)
    res = {k: {"time_ns": [], "solved": 0, "iterations": [], "collision_checks": [], "paths": []} for k in kinds}
    for i, (a, b) in enumerate(pairs):
        times = {k: [] for k in kinds}
        last = {}
        for _ in range(repeats):
            for k in kinds:  # interleaved: noise hits the kinds alike; same seed, so the same samples
                last[k] = r = simdplan.plan(robot, sc.envs[k], a, b, seed=i, time_limit=PLAN_TIME_LIMIT, link=link)
                times[k].append(float(r.stats["planning_time_ns"]))
        for k, r in last.items():
            res[k]["time_ns"].append(float(np.median(times[k])))
            res[k]["solved"] += int(r.success)
            res[k]["iterations"].append(int(r.stats.get("iterations", 0)))
            res[k]["collision_checks"].append(int(r.stats.get("collision_checks", 0)))
            res[k]["paths"].append(np.asarray(r.path))
    return res


# ----------------------------------------------------------------------------- report
class Rows:
    def __init__(self):
        self.rows: list[dict] = []
        self.get: dict = {}

    def add(self, bench, scene, kind, isa, unit, values, **extra):
        a = np.asarray(values, dtype=np.float64)
        row = {"bench": bench, "scene": scene, "kind": kind, "isa": isa, "unit": unit, "median": float(np.median(a)),
               "min": float(a.min()), "max": float(a.max()), "raw": a.tolist(), **extra}
        self.rows.append(row)
        self.get[(bench, scene, kind, isa)] = row


# the "ratio" column: per scene group, the kind the others are divided by (the primitive version)
RATIO_BASE = {"0": None, "a": "box", "b": "sphere (ref.)", "c": "box"}


def fmt_ns(v: float) -> str:
    return f"{v:,.0f}" if v >= 100 else f"{v:,.1f}"


def print_tables(console, rows: Rows, scenes: list, isas, checks: dict, plans: list | None) -> None:
    from rich.markup import escape
    from rich.table import Table

    best = isas[-1]

    def ratio(bench, sc, kind):
        base = RATIO_BASE.get(sc.group)
        if base is None or base not in sc.envs or kind == base:
            return ""
        b = rows.get.get((bench, sc.name, base, best))
        r = rows.get.get((bench, sc.name, kind, best))
        return f"{r['median'] / b['median']:.2f}x {base}" if (b and r) else ""

    for bench, title in (
            ("batch", "1. robot.is_valid_many(Q, env), random configurations, ns per configuration (median)"),
            ("single", "2. robot.is_valid(q, env) from a Python loop, ns per call (median)"),
            ("clearance", "3. robot.clearance_many(Q, env), exact, ns per configuration (median)")):
        t = Table(title=title, title_justify="left")
        for col, just in (("scene", "left"), ("kind", "left"), ("obstacles", "right")):
            t.add_column(col, justify=just)
        if bench == "batch":
            t.add_column("build ms", justify="right")
            t.add_column("1st check ms", justify="right")
            t.add_column("valid", justify="right")
        for isa in isas:
            t.add_column(isa, justify="right")
        t.add_column(f"ratio ({best})", justify="right")
        last = None
        for sc in scenes:
            kinds = [k for k in sc.envs if (bench, sc.name, k, isas[0]) in rows.get]
            if not kinds:
                continue
            if last is not None and sc.group != last:
                t.add_section()
            last = sc.group
            for kind in kinds:
                r0 = rows.get[(bench, sc.name, kind, isas[0])]
                cells = [sc.name, kind, f"{len(sc.envs[kind]):,}"]
                if bench == "batch":
                    cells += [f"{sc.build_ms[kind]:,.1f}", f"{r0['first_check_ms']:,.1f}",
                              f"{100 * r0['valid_fraction']:.1f}%"]
                cells += [fmt_ns(rows.get[(bench, sc.name, kind, isa)]["median"]) for isa in isas]
                cells.append(ratio(bench, sc, kind))
                t.add_row(*(escape(c) for c in cells))
        console.print(t)

    for plan in plans or []:
        t = Table(title=f"4. simdplan.plan (rrtc, {plan['link']} Link, {best}) in {plan['scene']}: {plan['pairs']} "
                        f"start / goal pairs, median over {plan['repeats']} repeat(s) per pair, then over pairs",
                  title_justify="left")
        for col in ("kind", "solved", "planning ms (median)", "min", "max", "ratio to box", "iterations (median)",
                    "checked configs (median)", "same path as box"):
            t.add_column(col, justify="left" if col == "kind" else "right")
        base = np.median(plan["kinds"]["box"]["time_ns"])
        for kind, r in plan["kinds"].items():
            ms = np.asarray(r["time_ns"]) / 1e6
            t.add_row(kind, f"{r['solved']}/{plan['pairs']}", f"{np.median(ms):,.2f}", f"{ms.min():,.2f}",
                      f"{ms.max():,.2f}", f"{np.median(r['time_ns']) / base:.2f}x",
                      f"{np.median(r['iterations']):,.0f}", f"{np.median(r['collision_checks']):,.0f}",
                      f"{r['same_path_as_box']}/{plan['pairs']}")
        console.print(t)

    t = Table(title="5. verdict cross-checks (random configurations of table 1)", title_justify="left")
    for col in ("scene", "kind vs reference", "configs", "disagreements " + "/".join(isas), "near contact", "inside (mesh)",
                "unexplained", "ISAs vs scalar", "single vs batch"):
        t.add_column(col, justify="left" if col in ("scene", "kind vs reference") else "right")
    for sc in scenes:
        c = checks[sc.name]
        for kind in sc.envs:
            x = c["kinds"].get(kind)
            isa_bad = sum(c["isa_mismatches"][kind].values())
            cells = [sc.name, kind if x is None else f"{kind} vs {x['reference']}", f"{c['configs']:,}"]
            if x is None:
                cells += ["-", "-", "-", "-"]
            else:
                cells += ["/".join(str(x["per_isa"][i]) for i in isas), str(x["near_contact"]), str(x["inside"]),
                          str(x["unexplained"])]
            cells += [str(isa_bad), str(c["single_vs_batch"][kind])]
            t.add_row(*(escape(v) for v in cells))
    console.print(t)


# ----------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer configurations and repeats (smoke run)")
    ap.add_argument("--json", default=str(DEFAULT_JSON), help=f"where to write raw results (default {DEFAULT_JSON})")
    ap.add_argument("--seed", type=int, default=2024)
    args = ap.parse_args(argv)
    P = QUICK if args.quick else FULL

    from rich.console import Console

    console = Console(width=None if sys.stdout.isatty() else 200)
    t_start = time.perf_counter()
    info = machine_info()
    isas = simdplan.available_isas()
    original = simdplan.isa()
    best = isas[-1]
    robot = simdplan.robots.load("panda")
    rng = np.random.default_rng(args.seed)
    Q = rng.uniform(robot.lower, robot.upper, size=(P["configs"], robot.dof))
    items = [q.copy() for q in Q[:P["single_calls"]]]
    Qc = np.ascontiguousarray(Q[:P["clear_configs"]])

    empty = Scene("no obstacles", "0")
    empty.build("none", lambda env: None)
    scenes = [empty, tabletop_scene(), forearm_scene(), icosphere_scene()]
    for n in P["many"]:
        kinds = ("box", "mesh", "convex") if n <= P["kinds_max"] else ("box",)
        scenes.append(box_scene(f"(c) many-{n}", "c", many_boxes(n, args.seed), kinds))
    rows = Rows()
    checks: dict = {}
    plans = []
    try:
        for sc in scenes:
            kinds = list(sc.envs)
            log(f"{sc.name}: {', '.join(f'{k} {len(sc.envs[k])} obstacles, built in {sc.build_ms[k]:.1f} ms' for k in kinds)}")
            simdplan.set_isa(best)
            first = {}
            for k in kinds:  # the first check compiles the environment for the core
                t0 = time.perf_counter_ns()
                robot.is_valid(Q[0], sc.envs[k])
                first[k] = (time.perf_counter_ns() - t0) / 1e6
            verdicts = {}
            for isa in isas:  # answers (and warm-up)
                simdplan.set_isa(isa)
                for k in kinds:
                    verdicts[(k, isa)] = robot.is_valid_many(Q, sc.envs[k])
            log(f"{sc.name}: is_valid_many, {len(Q)} configs x {P['repeats']} repeats x {len(isas)} ISAs x {len(kinds)} kinds")
            q = interleaved({k: (lambda env=sc.envs[k]: robot.is_valid_many(Q, env)) for k in kinds}, isas,
                            P["repeats"], len(Q))
            for (k, isa), v in q.items():
                rows.add("batch", sc.name, k, isa, "ns/config", v, obstacles=len(sc.envs[k]),
                         build_ms=sc.build_ms[k], first_check_ms=first[k],
                         valid_fraction=float(verdicts[(k, isa)].mean()))
            log(f"{sc.name}: is_valid, {len(items)} calls x {P['repeats']} repeats")
            q = interleaved({k: single_loop(robot, sc.envs[k], items) for k in kinds}, isas, P["repeats"], len(items))
            for (k, isa), v in q.items():
                rows.add("single", sc.name, k, isa, "ns/call", v)
            simdplan.set_isa(best)
            single = {k: np.array([robot.is_valid(q, sc.envs[k]) for q in items]) for k in kinds}
            if sc.group in ("a", "b"):
                log(f"{sc.name}: clearance_many, {len(Qc)} configs x {P['clear_repeats']} repeats")
                for isa in isas:
                    simdplan.set_isa(isa)
                    for k in kinds:
                        robot.clearance_many(Qc[:10], sc.envs[k])
                q = interleaved({k: (lambda env=sc.envs[k]: robot.clearance_many(Qc, env)) for k in kinds}, isas,
                                P["clear_repeats"], len(Qc))
                for (k, isa), v in q.items():
                    rows.add("clearance", sc.name, k, isa, "ns/config", v)
            simdplan.set_isa(best)
            checks[sc.name] = {
                "configs": len(Q),
                "valid_fraction": {k: float(verdicts[(k, "scalar")].mean()) for k in kinds},
                "isa_mismatches": {k: {isa: int((verdicts[(k, isa)] != verdicts[(k, "scalar")]).sum()) for isa in isas}
                                   for k in kinds},
                "single_vs_batch": {k: int((single[k] != verdicts[(k, best)][:len(items)]).sum()) for k in kinds},
                "kinds": cross_check(robot, sc, Q, verdicts, isas),
            }

        # ---- 4. planning in the tabletop scene, every kind, the same pairs and seeds
        sc = scenes[1]
        simdplan.set_isa(best)
        pairs = plan_pairs(robot, sc.envs["box"], np.random.default_rng([args.seed, 1]), P["plan_pairs"])
        for link in ("discrete", "certified"):
            log(f"{sc.name}: planning ({link} Link), {len(pairs)} pairs x {P['plan_repeats']} repeats x "
                f"{len(sc.envs)} kinds")
            res = bench_planning(robot, sc, pairs, P["plan_repeats"], link)
            for k, r in res.items():
                r["same_path_as_box"] = int(sum(np.array_equal(p, b) for p, b in zip(r["paths"], res["box"]["paths"])))
            plans.append({"scene": sc.name, "link": link, "pairs": len(pairs), "repeats": P["plan_repeats"],
                          "isa": best, "kinds": res})
            for k, r in res.items():
                rows.add("planning", sc.name, k, best, "ns/plan", r["time_ns"], link=link, solved=r["solved"],
                         iterations=r["iterations"], collision_checks=r["collision_checks"],
                         same_path_as_box=r["same_path_as_box"])
    finally:
        simdplan.set_isa(original)

    elapsed = time.perf_counter() - t_start
    console.rule("simdplan obstacle kinds benchmark" + (" (--quick)" if args.quick else ""))
    console.print(f"CPU: {info['cpu_model']} ({info['cpu_count']} CPUs); ISAs {', '.join(isas)}; robot {robot!r}; "
                  f"{len(Q):,} random configurations (seed {args.seed}); params {P}")
    print_tables(console, rows, scenes, isas, checks, plans)
    unexplained = sum(x["unexplained"] for c in checks.values() for x in c["kinds"].values())
    isa_bad = sum(v for c in checks.values() for per in c["isa_mismatches"].values() for v in per.values())
    sb_bad = sum(v for c in checks.values() for v in c["single_vs_batch"].values())
    console.print(f"consistency: {unexplained} unexplained verdict disagreements between kinds, {isa_bad} ISA vs scalar "
                  f"mismatches, {sb_bad} single vs batch mismatches"
                  + ("" if unexplained + isa_bad + sb_bad == 0 else "  <-- look at the JSON's checks"))
    console.print("ratio = median / median of the scene's primitive version at the best ISA (< 1 is faster); "
                  "valid = fraction of the random configurations valid (scalar); build = the add_* calls; "
                  "1st check = the first is_valid (compiles the environment).")
    load_end = os.getloadavg()
    console.print(f"{elapsed:.0f} s; load average at start {info['loadavg'][0]:.2f}, at end {load_end[0]:.2f} on "
                  f"{info['cpu_count']} CPUs" + ("  (a busy machine: expect noise)"
                                                 if max(info["loadavg"][0], load_end[0]) > 0.75 * info["cpu_count"] else ""))

    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    for plan in plans:
        for r in plan["kinds"].values():
            r.pop("paths", None)
    doc = {"schema": "simdplan-bench-env-shapes/1", "argv": sys.argv, "mode": "quick" if args.quick else "full",
           "seed": args.seed, "params": P, "elapsed_s": elapsed, "isas": isas, "machine": info,
           "loadavg_end": list(load_end), "touch_tolerance_m": TOUCH_TOL,
           "scenes": [{"name": sc.name, "group": sc.group, "kinds": {k: {"obstacles": len(e), "build_ms": sc.build_ms[k]}
                                                                    for k, e in sc.envs.items()},
                       "reference": sc.reference} for sc in scenes],
           "checks": checks, "planning": plans, "rows": rows.rows}
    out.write_text(json.dumps(doc, indent=1))
    console.print(f"raw results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
