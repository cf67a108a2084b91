#!/usr/bin/env python3
"""Core benchmark: validity checks, FK and motion checks of the Franka Panda, every ISA side by side.

Scenes: MotionBenchMaker problems bookshelf_small, bookshelf_tall, bookshelf_thin and cage (problem
index 1 of each, from simdplan.scenes.DATA_DIR/panda/problems.json; cylinders are exact cylinders).
For every ISA in simdplan.available_isas() (switched with simdplan.set_isa, restored afterwards) it
measures, in one run and interleaving the ISAs inside every repeat:

  1. single  robot.is_valid(q, env) called from a Python loop, ns/call (valid configs; random mix)
  2. batch   robot.is_valid_many(Q, env), ns per configuration (random mix; valid-only)
  3. fk      robot.fk_many(Q), ns per configuration (includes allocating and writing the output)
  4. motion  robot.is_motion_valid(q0, q1, env) on edges between valid configurations, ns per edge
  5. floor   robot.is_valid on an empty Environment (plus out-of-limits q and a bare loop)

Every figure is a median: over repeats for 1-3 and 5, over edges (each edge's own median over
repeats) for 4. This is a benchmark, not a test: it never fails on timings.

    python3 benchmarks/bench_core.py [--quick] [--json OUT]
"""

from __future__ import annotations

import argparse
import datetime as _dt
import gc
import hashlib
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import simdplan
from simdplan import Environment, robots, scenes
from simdplan._runtime import cpu_model

SCENES = ("bookshelf_small", "bookshelf_tall", "bookshelf_thin", "cage")
PROBLEM_INDEX = 1
DEFAULT_JSON = Path(__file__).resolve().parent / "results" / "core.json"

FULL = dict(single_calls=20_000, single_repeats=7, batch_n=100_000, batch_repeats=7,
            fk_n=100_000, fk_repeats=7, edges=1_000, edge_repeats=5)
QUICK = dict(single_calls=2_000, single_repeats=3, batch_n=10_000, batch_repeats=3,
             fk_n=10_000, fk_repeats=3, edges=100, edge_repeats=3)

# Our own targets (a competitor's figures appear only when measured in the same run).
TARGETS = {
    "target_single_check_ns": 1000.0,
    "target_batch_random_mix_ns_avx512": 60.0,
}
# (bench, metric) -> (target text, target in ns); shown on the best ISA's rows.
ROW_ANCHORS = {
    ("single", "valid"): ("target 1,000", TARGETS["target_single_check_ns"]),
    ("single", "random_mix"): ("target 1,000", TARGETS["target_single_check_ns"]),
    ("batch", "random_mix"): ("target 60 (AVX-512)", TARGETS["target_batch_random_mix_ns_avx512"]),
}


# ----------------------------------------------------------------------------- helpers
def log(msg: str) -> None:
    print(f"[bench_core {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def cpu_flags() -> list[str]:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return sorted(x for x in line.split(":", 1)[1].split() if x.startswith(("avx", "fma", "bmi")))
    except OSError:
        pass
    return []


def core_library() -> dict:
    """Which compiled core this run measures (the installed one, not necessarily the working tree)."""
    from simdplan import _core

    path = getattr(_core, "__file__", None)
    out = {"simdplan_package": os.path.dirname(simdplan.__file__), "core_path": path}
    try:
        st = os.stat(path)
        with open(path, "rb") as f:
            out.update(sha256=hashlib.sha256(f.read()).hexdigest(), size=st.st_size,
                       mtime=_dt.datetime.fromtimestamp(st.st_mtime, _dt.timezone.utc).isoformat(timespec="seconds"))
    except (OSError, TypeError):
        pass
    return out


def git_state() -> dict:
    repo = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True,
                               timeout=10).stdout.splitlines()
        return {"repo": str(repo), "head": head or None, "changed_paths": len(dirty)}
    except (OSError, subprocess.SubprocessError):
        return {"repo": str(repo), "head": None}


def machine_info() -> dict:
    return {
        "cpu_model": cpu_model(),
        "cpu_simd_flags": cpu_flags(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "simdplan": simdplan.info(),
        "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "core_library": core_library(),
        "git": git_state(),
    }


def load_problems() -> dict:
    with open(os.path.join(scenes.DATA_DIR, "panda", "problems.json")) as f:
        return json.load(f)


def build_env(problem: dict) -> Environment:
    """The problem's obstacles; cylinders exact (not capsules)."""
    env = Environment()
    for b in problem.get("box", []):
        env.add_box(b["position"], b["orientation_quat_xyzw"], b["half_extents"], name=b["name"])
    for c in problem.get("cylinder", []):
        env.add_cylinder(c["position"], c["orientation_quat_xyzw"], c["radius"], c["length"], name=c["name"])
    for s in problem.get("sphere", []):
        env.add_sphere(s["position"], s["radius"], name=s["name"])
    return env


def sample_valid(robot, env, rng, n: int, chunk: int = 50_000, max_draws: int = 50_000_000) -> tuple[np.ndarray, float]:
    """n configurations valid in env (uniform in the limits, rejection sampled); and the valid fraction seen."""
    lo, hi = robot.lower, robot.upper
    kept, drawn, n_ok = [], 0, 0
    while n_ok < n:
        if drawn >= max_draws:
            raise RuntimeError(f"only {n_ok} valid configurations in {drawn} draws")
        Q = rng.uniform(lo, hi, size=(chunk, robot.dof))
        ok = robot.is_valid_many(Q, env)
        kept.append(Q[ok])
        n_ok += int(ok.sum())
        drawn += chunk
    return np.ascontiguousarray(np.concatenate(kept)[:n]), n_ok / drawn


def time_loop_ns(fn, items, env) -> float:
    """ns per call of fn(q, env) over items, timed around the whole loop."""
    t0 = time.perf_counter_ns()
    for q in items:
        fn(q, env)
    return (time.perf_counter_ns() - t0) / len(items)


class Timing:
    """Context: GC off while timing (as timeit does)."""

    def __enter__(self):
        self.was = gc.isenabled()
        gc.collect()
        gc.disable()

    def __exit__(self, *exc):
        if self.was:
            gc.enable()


def stats(values) -> dict:
    a = np.asarray(values, dtype=np.float64)
    return {"median": float(np.median(a)), "min": float(a.min()), "max": float(a.max()), "mean": float(a.mean())}


# ----------------------------------------------------------------------------- measurements
def bench_single(robot, env, lists: dict, isas, repeats: int) -> dict:
    """{(set, isa): [ns/call per repeat]}; ISAs interleaved inside each repeat."""
    f = robot.is_valid
    out = {(name, isa): [] for name in lists for isa in isas}
    for isa in isas:  # warm-up (and compiles the environment)
        simdplan.set_isa(isa)
        for items in lists.values():
            time_loop_ns(f, items[:200], env)
    with Timing():
        for _ in range(repeats):
            for isa in isas:
                simdplan.set_isa(isa)
                for name, items in lists.items():
                    out[(name, isa)].append(time_loop_ns(f, items, env))
    return out


def bench_batch(robot, env, sets: dict, isas, repeats: int) -> tuple[dict, dict]:
    """{(set, isa): [ns/config per repeat]} and {(set, isa): validity array of the last run}."""
    out = {(name, isa): [] for name in sets for isa in isas}
    results = {}
    for isa in isas:
        simdplan.set_isa(isa)
        for name, Q in sets.items():
            results[(name, isa)] = robot.is_valid_many(Q, env)
    with Timing():
        for _ in range(repeats):
            for isa in isas:
                simdplan.set_isa(isa)
                for name, Q in sets.items():
                    t0 = time.perf_counter_ns()
                    robot.is_valid_many(Q, env)
                    out[(name, isa)].append((time.perf_counter_ns() - t0) / len(Q))
    return out, results


def bench_fk(robot, Q, isas, repeats: int) -> dict:
    out = {isa: [] for isa in isas}
    for isa in isas:
        simdplan.set_isa(isa)
        robot.fk_many(Q)  # full size: the first large output allocation is slower than later ones
    with Timing():
        for _ in range(repeats):
            for isa in isas:
                simdplan.set_isa(isa)
                t0 = time.perf_counter_ns()
                F = robot.fk_many(Q)
                out[isa].append((time.perf_counter_ns() - t0) / len(Q))
                del F
    return out


def bench_edges(robot, env, A, B, isas, repeats: int) -> tuple[dict, dict]:
    """Per-edge times {isa: (repeats, n) ns} and results {isa: (n,) bool}."""
    f = robot.is_motion_valid
    n = len(A)
    pairs = list(zip(list(A), list(B)))
    times = {isa: np.zeros((repeats, n)) for isa in isas}
    results = {}
    for isa in isas:
        simdplan.set_isa(isa)
        results[isa] = np.array([f(a, b, env) for a, b in pairs], dtype=bool)
    clock = time.perf_counter_ns
    with Timing():
        for r in range(repeats):
            for isa in isas:
                simdplan.set_isa(isa)
                row = times[isa][r]
                for i, (a, b) in enumerate(pairs):
                    t0 = clock()
                    f(a, b, env)
                    row[i] = clock() - t0
    return times, results


def bench_floor(robot, lists: dict, isas, repeats: int) -> dict:
    """Call overhead: is_valid on an empty Environment; out-of-limits q; the bare binding; a bare loop."""
    empty = Environment()
    f = robot.is_valid
    fns = {"empty_env": (f, lists["empty_valid"]), "out_of_limits": (f, lists["out_of_limits"])}
    try:  # the bare C++ binding, skipping the Python wrapper (private API: reference only)
        model, em = robot._model, empty._model()
        fns["binding_empty_env"] = ((lambda q, _e: model.is_valid(em, q, 0.0)), lists["empty_valid"])
        fns["binding_out_of_limits"] = ((lambda q, _e: model.is_valid(em, q, 0.0)), lists["out_of_limits"])
    except AttributeError:
        pass
    out = {(name, isa): [] for name in fns for isa in isas}
    out.update({("python_loop", isa): [] for isa in isas})
    items = lists["empty_valid"]
    for isa in isas:
        simdplan.set_isa(isa)
        for fn, its in fns.values():
            time_loop_ns(fn, its[:200], empty)
    with Timing():
        for _ in range(repeats):
            for isa in isas:
                simdplan.set_isa(isa)
                for name, (fn, its) in fns.items():
                    out[(name, isa)].append(time_loop_ns(fn, its, empty))
                t0 = time.perf_counter_ns()
                for q in items:
                    pass
                out[("python_loop", isa)].append((time.perf_counter_ns() - t0) / len(items))
    return out


# ----------------------------------------------------------------------------- report
class Report:
    def __init__(self, isas):
        self.isas = list(isas)
        self.rows: list[dict] = []

    def add(self, bench, scene, isa, metric, unit, values, label, **extra) -> dict:
        """values: one number per repeat ("raw"), or per edge for bench "motion" (see "raw_is")."""
        s = stats(values)
        raw_is = "per_edge_median_over_repeats" if (bench == "motion" and unit != "samples") else "per_repeat"
        row = {"bench": bench, "scene": scene, "isa": isa, "metric": metric, "label": label, "unit": unit,
               **s, "raw_is": raw_is, "raw": [float(v) for v in values], **extra}
        self.rows.append(row)
        return row

    def finish(self) -> None:
        """Fill ratio_to_scalar (value / scalar value of the same bench, scene and metric)."""
        ref = {(r["bench"], r["scene"], r["metric"]): r["median"] for r in self.rows if r["isa"] == "scalar"}
        for r in self.rows:
            base = ref.get((r["bench"], r["scene"], r["metric"]))
            r["ratio_to_scalar"] = (r["median"] / base) if (base and r["unit"].startswith("ns")) else None


def fmt_value(v: float, unit: str) -> str:
    if unit == "fraction":
        return f"{100 * v:.1f} %"
    if unit.startswith("ns"):
        return f"{v:,.0f} {unit}" if v >= 100 else f"{v:,.1f} {unit}"
    return f"{v:,.1f} {unit}"


def print_tables(console, report: Report, titles: dict) -> None:
    from rich.markup import escape
    from rich.table import Table

    best = report.isas[-1]
    for bench, title in titles.items():
        rows = [r for r in report.rows if r["bench"] == bench]
        if not rows:
            continue
        t = Table(title=title, title_justify="left", show_lines=False)
        t.add_column("scene")
        t.add_column("ISA")
        t.add_column("metric")
        t.add_column("median", justify="right")
        t.add_column("ratio to scalar", justify="right")
        t.add_column("spread", justify="right", style="dim")
        t.add_column("target, ns", style="dim")
        last_scene = None
        for r in rows:
            if last_scene is not None and r["scene"] != last_scene:
                t.add_section()
            last_scene = r["scene"]
            ratio = "" if r["ratio_to_scalar"] is None else f"{r['ratio_to_scalar']:.2f}x"
            anchor = ""
            if r["isa"] == best and (bench, r["metric"]) in ROW_ANCHORS:
                text, target = ROW_ANCHORS[(bench, r["metric"])]
                mark = "" if target is None else (": meets" if r["median"] <= target else ": misses")
                anchor = text + mark
            spread = ""
            reps = r.get("repeat_means", r["raw"] if r["raw_is"] == "per_repeat" else [])
            if r["unit"].startswith("ns") and len(reps) > 1 and np.median(reps) > 0:
                spread = f"{100 * (max(reps) - min(reps)) / np.median(reps):.0f}%"
            t.add_row(*(escape(x) for x in (r["scene"], r["isa"], r["label"], fmt_value(r["median"], r["unit"]),
                                             ratio, spread, anchor)))
        console.print(t)


# ----------------------------------------------------------------------------- main
def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="few configurations and repeats (CI smoke run, < 20 s)")
    ap.add_argument("--json", default=str(DEFAULT_JSON), help=f"where to write raw results (default {DEFAULT_JSON})")
    ap.add_argument("--seed", type=int, default=12345, help="random seed for every configuration set")
    args = ap.parse_args(argv)
    P = QUICK if args.quick else FULL

    from rich.console import Console
    console = Console(width=None if sys.stdout.isatty() else 160)

    t_start = time.perf_counter()
    isas = simdplan.available_isas()
    original_isa = simdplan.isa()
    info_start = machine_info()
    robot = robots.load("panda")
    data = load_problems()
    report = Report(isas)
    checks: dict = {"scenes": {}}
    best = isas[-1]

    try:
        # ---- 3. FK (independent of the scene) and 5. call overhead floor
        rng = np.random.default_rng([args.seed, 0])
        Qfk = rng.uniform(robot.lower, robot.upper, size=(P["fk_n"], robot.dof))
        log(f"fk_many: {P['fk_n']} configs x {P['fk_repeats']} repeats x {len(isas)} ISAs")
        fk = bench_fk(robot, Qfk, isas, P["fk_repeats"])
        for isa in isas:
            report.add("fk", "-", isa, "fk_many", "ns/config", fk[isa], "fk_many, ns/config (incl. output array)")
        del Qfk

        simdplan.set_isa(best)
        empty_valid, _ = sample_valid(robot, Environment(), rng, P["single_calls"], chunk=max(P["single_calls"], 10_000))
        oob = rng.uniform(robot.lower, robot.upper, size=(P["single_calls"], robot.dof))
        oob[:, 0] = robot.upper[0] + 0.5  # outside joint 1's limits: the core returns before any kernel runs
        floor_lists = {"empty_valid": [q.copy() for q in empty_valid], "out_of_limits": [q.copy() for q in oob]}
        log(f"call floor: {P['single_calls']} calls x {P['single_repeats']} repeats")
        fl = bench_floor(robot, floor_lists, isas, P["single_repeats"])
        labels = {"empty_env": "is_valid, empty Environment (valid q)",
                  "out_of_limits": "is_valid, q out of limits (no kernel)",
                  "binding_empty_env": "bare _core binding, empty env (ref.)",
                  "binding_out_of_limits": "bare _core binding, out of limits (ref.)",
                  "python_loop": "bare Python loop, no call"}
        for name in labels:
            for isa in isas:
                if (name, isa) in fl:
                    report.add("floor", "empty", isa, name, "ns/call", fl[(name, isa)], labels[name])

        # ---- per scene: 1. single, 2. batch, 4. motion
        for si, scene in enumerate(SCENES, start=1):
            problem = next(p for p in data["problems"][scene] if p["index"] == PROBLEM_INDEX)
            env = build_env(problem)
            sc: dict = {"problem_index": PROBLEM_INDEX, "obstacles": repr(env), "reference_valid_flag": problem["valid"]}
            simdplan.set_isa(best)
            sc["start_valid_exact"] = bool(robot.is_valid(np.asarray(problem["start"]), env))
            sc["goals_valid_exact"] = [bool(robot.is_valid(np.asarray(g), env)) for g in problem["goals"]]

            rng = np.random.default_rng([args.seed, si])
            Qmix = rng.uniform(robot.lower, robot.upper, size=(P["batch_n"], robot.dof))
            Qvalid, frac = sample_valid(robot, env, rng, P["batch_n"])
            sc["valid_fraction_while_sampling"] = frac

            # 1. single calls from Python
            lists = {"valid": [q.copy() for q in Qvalid[:P["single_calls"]]],
                     "random_mix": [q.copy() for q in Qmix[:P["single_calls"]]]}
            log(f"{scene}: single is_valid, {P['single_calls']} calls x {P['single_repeats']} repeats")
            single = bench_single(robot, env, lists, isas, P["single_repeats"])
            for name, label in (("valid", "is_valid, valid configs, ns/call"),
                                ("random_mix", "is_valid, random mix, ns/call")):
                for isa in isas:
                    report.add("single", scene, isa, name, "ns/call", single[(name, isa)], label)
            # single-call answers agree with the batch kernel?
            simdplan.set_isa(best)
            one = np.array([robot.is_valid(q, env) for q in lists["random_mix"]])
            sc["single_vs_batch_mismatches"] = int((one != robot.is_valid_many(Qmix[:P["single_calls"]], env)).sum())

            # 2. batch
            log(f"{scene}: is_valid_many, {P['batch_n']} configs x 2 sets x {P['batch_repeats']} repeats")
            batch, res = bench_batch(robot, env, {"random_mix": Qmix, "valid_only": Qvalid}, isas, P["batch_repeats"])
            fractions = {isa: float(res[("random_mix", isa)].mean()) for isa in isas}
            sc["random_mix_valid_fraction"] = fractions
            sc["random_mix_mismatches_vs_scalar"] = {
                isa: int((res[("random_mix", isa)] != res[("random_mix", "scalar")]).sum()) for isa in isas}
            sc["valid_only_reported_invalid"] = {isa: int((~res[("valid_only", isa)]).sum()) for isa in isas}
            for name, label in (("random_mix", "is_valid_many, random mix, ns/config"),
                                ("valid_only", "is_valid_many, valid only, ns/config")):
                for isa in isas:
                    report.add("batch", scene, isa, name, "ns/config", batch[(name, isa)], label)
            for isa in isas:
                report.add("batch", scene, isa, "fraction_valid", "fraction", [fractions[isa]],
                           "fraction valid (random mix)")
            del Qmix

            # 4. motion checks between valid configurations
            n_e = P["edges"]
            A, B = Qvalid[:n_e], Qvalid[n_e:2 * n_e]
            samples = np.array([robot.motion_samples(a, b) for a, b in zip(A, B)], dtype=np.float64)
            log(f"{scene}: is_motion_valid, {n_e} edges x {P['edge_repeats']} repeats")
            times, eres = bench_edges(robot, env, A, B, isas, P["edge_repeats"])
            ok = eres["scalar"]  # classified once, by the scalar reference
            sc["edges"] = {
                "n": n_e, "fraction_valid": float(ok.mean()),
                "mean_samples_per_edge": float(samples.mean()),
                "mean_samples_valid_edges": float(samples[ok].mean()) if ok.any() else None,
                "mean_samples_invalid_edges": float(samples[~ok].mean()) if (~ok).any() else None,
                "mismatches_vs_scalar": {isa: int((eres[isa] != ok).sum()) for isa in isas},
                "samples_per_edge": samples.astype(int).tolist(),
                "edge_valid": ok.tolist(),
            }
            for isa in isas:
                T = times[isa]
                per_edge = np.median(T, axis=0)  # each edge's median over repeats

                def rmeans(x):  # mean over edges, one per repeat: the run-to-run noise
                    return x.mean(axis=1).tolist()

                report.add("motion", scene, isa, "edge_all", "ns/edge", per_edge, "is_motion_valid, all edges, ns/edge",
                           repeat_means=rmeans(T), raw_repeats=T.tolist())
                if ok.any():
                    report.add("motion", scene, isa, "edge_valid", "ns/edge", per_edge[ok],
                               "is_motion_valid, valid edges, ns/edge", repeat_means=rmeans(T[:, ok]))
                    # motion_samples gives intervals n; a valid edge checks n + 1 configurations
                    report.add("motion", scene, isa, "valid_edge_per_sample", "ns/config",
                               per_edge[ok] / (samples[ok] + 1), "valid edges, ns per checked config",
                               repeat_means=rmeans(T[:, ok] / (samples[ok] + 1)))
                if (~ok).any():
                    report.add("motion", scene, isa, "edge_invalid", "ns/edge", per_edge[~ok],
                               "is_motion_valid, invalid edges, ns/edge", repeat_means=rmeans(T[:, ~ok]))
                report.add("motion", scene, isa, "samples_per_edge", "samples", [samples.mean()],
                           f"mean motion_samples/edge ({100 * ok.mean():.0f}% edges valid)")
            checks["scenes"][scene] = sc
    finally:
        simdplan.set_isa(original_isa)

    report.finish()
    elapsed = time.perf_counter() - t_start
    info_end = machine_info()

    # ---- print
    m = info_start
    console.rule("simdplan core benchmark" + (" (--quick)" if args.quick else ""))
    console.print(f"CPU: {m['cpu_model']}  ({m['cpu_count']} CPUs; SIMD flags: {' '.join(m['cpu_simd_flags'])})")
    console.print(f"platform: {m['platform']}; Python {m['python']}; numpy {m['numpy']}")
    console.print(f"simdplan.info(): {m['simdplan']}")
    lib = m["core_library"]
    console.print(f"core: {lib.get('core_path')} (sha256 {str(lib.get('sha256'))[:12]}, mtime {lib.get('mtime')}); "
                  f"repo HEAD {str(m['git'].get('head'))[:12]}, {m['git'].get('changed_paths')} changed paths")
    console.print(f"load average at start {m['loadavg']}, at end {info_end['loadavg']}; run took {elapsed:.1f} s")
    console.print(f"robot: {robot!r}; resolution {robot.resolution} samples per unit joint distance; params {P}")
    console.print("targets: single check <= 1.0 us; batch <= 60 ns/config on the random mix with AVX-512.")
    console.print("ratio to scalar = median / scalar median of the same scene and metric (< 1 is faster); "
                  "spread = (max - min) / median over repeats "
                  f"(for motion, of the per-repeat mean edge time). Anchors are shown on the {best} rows.")
    if info_end["core_library"].get("sha256") != lib.get("sha256"):
        console.print("WARNING: the compiled core changed on disk during this run; the numbers may mix two builds.")
    if m["loadavg"] and m["cpu_count"] and max(m["loadavg"][0], info_end["loadavg"][0]) > 0.75 * m["cpu_count"]:
        console.print(f"NOTE: the machine was busy (load average up to "
                      f"{max(m['loadavg'][0], info_end['loadavg'][0]):.1f} on {m['cpu_count']} CPUs): expect noise.")
    print_tables(console, report, {
        "single": "1. robot.is_valid(q, env) from a Python loop (median over repeats of loop time / calls)",
        "batch": "2. robot.is_valid_many(Q, env) (median over repeats of call time / rows)",
        "fk": "3. robot.fk_many(Q), FK only (includes allocating and writing the (n, 59, 4) float32 output)",
        "motion": "4. robot.is_motion_valid(q0, q1, env), edges between valid configs (median over edges of "
                  "each edge's median over repeats; classified by the scalar ISA)",
        "floor": "5. Python call overhead floor (empty Environment)",
    })
    notes = []
    for scene, sc in checks["scenes"].items():
        bad = {k: v for k, v in sc["random_mix_mismatches_vs_scalar"].items() if v}
        if bad:
            notes.append(f"{scene}: is_valid_many disagrees with scalar on {bad} of the random mix")
        bad = {k: v for k, v in sc["edges"]["mismatches_vs_scalar"].items() if v}
        if bad:
            notes.append(f"{scene}: is_motion_valid disagrees with scalar on {bad} edges")
        if sc["single_vs_batch_mismatches"]:
            notes.append(f"{scene}: is_valid and is_valid_many disagree on {sc['single_vs_batch_mismatches']} configs")
        if not (sc["start_valid_exact"] and any(sc["goals_valid_exact"])) and sc["reference_valid_flag"]:
            notes.append(f"{scene}: start/goal not valid with exact cylinders (reference flag says valid)")
    console.print("consistency: " + ("; ".join(notes) if notes else "all ISAs agree on every configuration and edge"))

    # ---- JSON
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {
        "schema": "simdplan-bench-core/1",
        "created": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "argv": sys.argv,
        "mode": "quick" if args.quick else "full",
        "seed": args.seed,
        "params": P,
        "elapsed_s": elapsed,
        "robot": {"name": robot.name, "dof": robot.dof, "n_spheres": robot.n_spheres, "resolution": robot.resolution},
        "scenes": list(SCENES),
        "isas": isas,
        "machine": info_start,
        "loadavg_end": info_end["loadavg"],
        "targets": TARGETS,
        "checks": checks,
        "results": report.rows,
    }
    out.write_text(json.dumps(doc, indent=1))
    console.print(f"raw results: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
