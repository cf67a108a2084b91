"""``simdplan bench robots``: generated problems on robots of different shape, VAMP side by side.

For every robot (simdplan.bench.robots) the problem generator (simdplan.scenes.generate) makes
``per_family`` problems of every family, and simdplan plans each with the robot's default settings
(``robot.default_settings()``), then VAMP where it has the robot (the built-in panda and ur5 are
VAMP's own models), right after ours in the same process. Every returned path, ours and VAMP's, is
re-checked at 10x the planning resolution (simdplan.check_path). With a point-cloud setting, every
problem's obstacles are first replaced by points sampled on their surfaces (bench.mbm.as_pointcloud),
and VAMP plans against the same points.

Per robot it reports: solved, median
and mean planning time, planning + simplification, iterations, the cost of one configuration check
(``is_valid_many`` on random configurations in each problem's scene: nanoseconds per configuration,
and per moving sphere) and paths failing the re-check. Where VAMP ran, a second table splits the
comparison by problem family: planning time, iterations and time per iteration, each planner's.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from simdplan.bench import robots as bench_robots
from simdplan._format import fmt_num, fmt_us
from simdplan.bench.records import (VERIFY_FACTOR, Table, links_in_turn, plan_baseline, plan_problem, resolution_of,
                                    summarize)
from simdplan.scenes import FAMILIES, generate

# VAMP's robots that are the same models as simdplan's (robots/data/NOTICE.md: taken from VAMP 0.6.4).
VAMP_ROBOTS = ("panda", "ur5")
CHECK_SAMPLES = 2000  # random configurations per scene for the ns-per-configuration figure


def check_cost_ns(robot, env, seed: int) -> float:
    """Nanoseconds per configuration of ``robot.is_valid_many`` on CHECK_SAMPLES random configurations
    in ``env`` (median of three timed calls after a warm-up)."""
    Q = np.random.default_rng(seed).uniform(robot.lower, robot.upper, (CHECK_SAMPLES, robot.dof))
    robot.is_valid_many(Q, env)
    times = []
    for _ in range(3):
        t0 = time.perf_counter_ns()
        robot.is_valid_many(Q, env)
        times.append(time.perf_counter_ns() - t0)
    return float(np.median(times)) / len(Q)


def moving_spheres(robot) -> int:
    """Spheres some joint moves (those of static links are tested against obstacles once per call)."""
    static = set(robot.static_links())
    return sum(link not in static for link in robot.sphere_links)


@dataclasses.dataclass
class RobotRun:
    name: str
    robot: object
    problems: list
    records: list
    baseline_records: list
    baseline_label: str | None
    baseline_why: str
    check_ns: list
    generate_s: float
    # Link mode -> its records, every mode planned (``records`` are the first mode's)
    by_link: dict = dataclasses.field(default_factory=dict)
    # kernel (generic, specialized) -> the first Link mode's records with it, every kernel planned
    # (``records`` are the first kernel's); kernel_info: the robot's specialized kernel (compile time...)
    by_kernel: dict = dataclasses.field(default_factory=dict)
    kernel_info: dict = dataclasses.field(default_factory=dict)


KERNELS = ("specialized", "generic")  # --kernel both: the table's rows are the first's


def default_kernel_info(robot, kernels: list[str] | None) -> dict:
    """The robot's specialized kernel built (or found cached) unless only the generic ones are wanted,
    or none was asked for and SIMDPLAN_JIT is off; then kernel_info of the generic kernels."""
    from simdplan.specialize import jit_mode

    if kernels == ["generic"]:
        return {"kernel": "generic", "reason": "--kernel generic"}
    if kernels is None and jit_mode() == "off":
        return {"kernel": "generic", "reason": "SIMDPLAN_JIT=off"}
    return robot.compile(wait=True)


def use_kernel(robot, kernel: str) -> None:
    """Switches the robot to its generic kernels or back to its specialized one (attached before)."""
    if kernel == "generic":
        robot.core.detach_kernels()
    elif not robot.core.reattach_kernels():
        raise RuntimeError(f"{robot.name}: no specialized kernel attached")


def run(names, families=FAMILIES, per_family: int = 10, seed: int = 0, overrides: dict | None = None,
        vamp: str = "auto", progress=None, links: list[str] | None = None,
        vamp_sampler: str = "halton", cloud=None, kernels: list[str] | None = None) -> list[RobotRun]:
    """Plans the generated problems of every robot in ``names``; ``overrides``: planner settings that
    replace the robot's defaults (time_limit, seed, ...). vamp: "auto" (side by side where VAMP is
    installed and has the robot), "on" (refuse when it cannot run), "off". ``progress(text)`` is
    called after every problem. links: Link modes to plan each problem with, one after the other
    (records.links_in_turn; default: the overrides' link, else the robot's default); VAMP runs
    after them, compared with the first, with its ``vamp_sampler`` (vamp_baseline.SAMPLERS). cloud
    (bench.mbm.PointCloudSetting): each problem's obstacles are replaced by points sampled on their
    surfaces, as ``bench mbm --pointcloud`` does, and VAMP gets the same sampled points. kernels: the
    robot's kernels to plan each problem with, in turn (KERNELS; default: the specialized one, built
    before the first problem, or the generic ones where it cannot be built: kernel_info says why)."""
    from simdplan.bench import vamp_baseline
    from simdplan.bench.mbm import as_pointcloud
    from simdplan.planner.settings import PlannerSettings

    out = []
    for name in names:
        robot = bench_robots.load(name)
        t0 = time.perf_counter()
        problems = [p for fam in families for p in generate(robot, fam, per_family, seed=seed)]
        gen_s = time.perf_counter() - t0
        base, why = None, "--vamp off"
        if vamp != "off":
            if name in VAMP_ROBOTS:
                base, why = vamp_baseline.load(name, vamp_sampler)
            else:
                why = f"VAMP has no model of {name}"
            if base is None and vamp == "on":
                raise RuntimeError(f"--vamp on: {why}")
        info = default_kernel_info(robot, kernels)
        wanted = kernels or ["specialized"]
        if info["kernel"] != "specialized":
            if "generic" not in wanted and kernels:
                raise RuntimeError(f"--kernel specialized: {name}: {info['reason']}")
            wanted = ["generic"]
        defaults = dataclasses.asdict(robot.default_settings())
        defaults.update({k: v for k, v in (overrides or {}).items() if v is not None})
        modes = links or [defaults["link"]]
        chosen = {}
        for link in modes:
            settings = PlannerSettings(**{**defaults, "link": link})
            chosen[link] = (settings, settings.validated())
        by_link: dict = {link: [] for link in modes}
        by_kernel: dict = {k: [] for k in wanted}
        theirs, cost = [], []
        for i, p in enumerate(problems):
            fields, cloud_points = {}, None
            if cloud is not None:
                fields, raw, kept = as_pointcloud(p, cloud.per_obstacle, cloud.min_dist, cloud.point_radius)
                cloud_points = (raw, kept, cloud.min_dist, cloud.point_radius)
            for kernel in links_in_turn(wanted, i):
                use_kernel(robot, kernel)
                for link in links_in_turn(modes, i):
                    rec = {**plan_problem(p, *chosen[link]), **fields, "kernel": kernel}
                    if kernel == wanted[0]:
                        by_link[link].append(rec)
                    if link == modes[0]:
                        by_kernel[kernel].append(rec)
            use_kernel(robot, wanted[0])
            cost.append(check_cost_ns(robot, p.env, seed + p.index))
            if base is not None:
                checked = chosen[modes[0]][1]
                theirs.append(plan_baseline(base, p, checked.simplify, cloud_points, resolution_of(robot, checked)))
            if progress:
                progress(f"{name} {p.name}")
        out.append(RobotRun(name, robot, problems, by_link[modes[0]], theirs, base.label if base else None, why, cost,
                            gen_s, by_link, by_kernel, info))
    return out


def solved_pairs(ours: list[dict], theirs: list[dict]) -> list[tuple[dict, dict]]:
    """(our record, theirs) for every problem both solved; the records pair up by problem, in order
    (ValueError if the lists differ in length)."""
    return [(a, b) for a, b in zip(ours, theirs, strict=True) if a["solved"] and b["solved"]]


def both_solved(ours: list[dict], theirs: list[dict]) -> dict:
    """Planning times over the problems both planners solved (solved_pairs).
    Where one planner solves a problem the other cannot, each one's own mean covers different
    problems (a hard problem only one solves weighs on that one's mean alone); these do not."""
    pairs = [(a["planning_time_us"], b["planning_time_us"]) for a, b in solved_pairs(ours, theirs)]
    out = {"n": len(pairs)}
    if pairs:
        a, b = np.array(pairs).T
        out.update(ours_median=float(np.median(a)), ours_mean=float(a.mean()), theirs_median=float(np.median(b)),
                   theirs_mean=float(b.mean()), ratio_median=float(np.median(a) / np.median(b)),
                   ratio_mean=float(a.mean() / b.mean()))
    return out


def per_problem_ratios(discrete: list[dict], certified: list[dict]) -> dict:
    """Certified over discrete Link problem by problem, over those both solved (solved_pairs): the
    median of the ratios of planning time and of planning + simplification. A ratio of medians
    compares two different problems whenever the two Links' times sort differently."""
    pairs = solved_pairs(discrete, certified)
    out: dict = {"n": len(pairs)}
    for key, name in (("planning_time_us", "planning"), ("total_time_us", "total")):
        ratios = [b[key] / a[key] for a, b in pairs if a.get(key) and b.get(key) is not None]
        out[f"{name}_median_ratio"] = float(np.median(ratios)) if ratios else None
    return out


def _per_iteration(r: dict) -> float:
    return r["planning_time_us"] / max(int(r["iterations"] or 0), 1)


def by_family(ours: list[dict], theirs: list[dict]) -> dict:
    """Per problem family (the records' ``problem``), over the problems both planners solved: medians
    of planning time, iterations and planning time per iteration, ours and theirs. A robot's overall
    ratio can hide families that pull in opposite directions (fewer iterations that each cost more);
    this shows which. Records pair up as in solved_pairs."""
    fams: dict = {}
    for a, b in solved_pairs(ours, theirs):
        fams.setdefault(a["problem"], []).append((a, b))
    out = {}
    for fam, pairs in fams.items():
        row: dict = {"n": len(pairs)}
        for side, who in ((0, "ours"), (1, "theirs")):
            recs = [p[side] for p in pairs]
            row[f"{who}_median"] = float(np.median([r["planning_time_us"] for r in recs]))
            row[f"{who}_iterations"] = float(np.median([r["iterations"] or 0 for r in recs]))
            row[f"{who}_us_per_iteration"] = float(np.median([_per_iteration(r) for r in recs]))
        row["ratio_median"] = row["ours_median"] / row["theirs_median"] if row["theirs_median"] else float("nan")
        out[fam] = row
    return out


def summary(run_: RobotRun) -> dict:
    """The per-robot figures of the table (times in microseconds, nanoseconds per configuration)."""
    s = summarize(run_.records)
    n_moving = moving_spheres(run_.robot)
    ns = float(np.median(run_.check_ns))
    s.update(robot=run_.name, dof=run_.robot.dof, spheres=run_.robot.n_spheres, moving_spheres=n_moving,
             check_ns_per_config=ns, check_ns_per_moving_sphere=ns / max(n_moving, 1), generate_s=run_.generate_s)
    if run_.baseline_records:
        b = summarize(run_.baseline_records)
        s["baseline"] = {"label": run_.baseline_label, **b}
        for key in ("planning_us_median", "planning_us_mean", "total_us_median"):
            if s[key] and b[key]:
                s[f"ratio_{key}"] = s[key] / b[key]
        s["both_solved"] = both_solved(run_.records, run_.baseline_records)
        s["by_family"] = by_family(run_.records, run_.baseline_records)
    else:
        s["baseline"] = None
        s["baseline_why"] = run_.baseline_why
    info = run_.kernel_info
    s["kernel"] = next(iter(run_.by_kernel), info.get("kernel", "generic"))
    s["kernel_compile_s"] = info.get("compile_seconds")
    s["kernel_load_s"] = info.get("load_seconds")
    s["kernel_reason"] = info.get("reason", "")
    if len(run_.by_kernel) > 1:
        s["kernels"] = {k: summarize(recs) for k, recs in run_.by_kernel.items()}
        s["kernels_per_problem"] = per_problem_ratios(run_.by_kernel["generic"], run_.by_kernel["specialized"])
    if len(run_.by_link) > 1:
        s["links"] = {link: summarize(recs) for link, recs in run_.by_link.items()}
        s["links_per_problem"] = per_problem_ratios(run_.by_link["discrete"], run_.by_link["certified"])
    kept = [r["cloud_kept"] for r in run_.records if "cloud_kept" in r]
    if kept:
        s["cloud_points_min"], s["cloud_points_median"], s["cloud_points_max"] = (
            int(min(kept)), float(np.median(kept)), int(max(kept)))
    return s


def report(summaries: list[dict], families: list[str], per_family: int, seed: int, machine: dict,
           cloud=None) -> list:
    """The table (one row per robot) and its notes; VAMP's figures only where it ran in this run.
    cloud: the run's bench.mbm.PointCloudSetting, if its obstacles were point clouds."""
    rows = []
    for s in summaries:
        b = s["baseline"]
        ratio = (f"{s['ratio_planning_us_median']:.2f} / {s['ratio_planning_us_mean']:.2f}"
                 if b and s.get("ratio_planning_us_median") else "-")
        rows.append([s["robot"], f"{s['dof']}", f"{s['moving_spheres']}/{s['spheres']}",
                     f"{s['solved']}/{s['total']}", fmt_us(s["planning_us_median"]), fmt_us(s["planning_us_mean"]),
                     fmt_us(s["total_us_median"]), fmt_num(s["iterations_median"]),
                     f"{s['check_ns_per_config']:.0f}", f"{s['check_ns_per_moving_sphere']:.2f}",
                     f"{s['verify_failures']}", fmt_us(b["planning_us_median"]) if b else "-",
                     fmt_us(b["planning_us_mean"]) if b else "-", ratio])
    header = [("robot", "left"), ("dof", "right"), ("moving/\nspheres", "right"), ("solved", "right"),
              ("plan\nmedian", "right"), ("plan\nmean", "right"), ("plan+simp\nmedian", "right"),
              ("iters\nmedian", "right"), ("ns per\nconfig", "right"), ("ns per\nsphere", "right"),
              (f"{VERIFY_FACTOR}x\nfails", "right"), ("VAMP plan\nmedian", "right"), ("VAMP plan\nmean", "right"),
              ("ours/VAMP\nmed / mean", "right")]
    si = machine["simdplan"]
    isa = si.get("isa", "?") if isinstance(si, dict) else str(si)
    obstacles = "" if cloud is None else " as point clouds"
    title = (f"simdplan bench robots: {per_family} generated problems per family ({', '.join(families)})"
             f"{obstacles}, seed {seed}; each robot's default settings; times in us; {machine['cpu_model']}, "
             f"{machine['cpu_count']} CPUs, ISA {isa}")
    out: list = [Table(title, header, rows, set()),
                 "ns per config: is_valid_many on random configurations in each problem's scene (median over "
                 "problems); ns per sphere: that over the spheres some joint moves. "
                 f"{VERIFY_FACTOR}x fails: solved paths with an edge in collision at {VERIFY_FACTOR}x the planning "
                 "resolution."]
    if cloud is not None:
        sizes = "; ".join(f"{s['robot']} {s['cloud_points_min']:,}-{s['cloud_points_max']:,} (median "
                          f"{s['cloud_points_median']:,.0f})" for s in summaries if "cloud_points_median" in s)
        out.append(f"point clouds: {cloud.per_obstacle:,} surface points per obstacle, filtered at "
                   f"{cloud.min_dist:g} m, point radius {cloud.point_radius:g} m; points kept per problem: {sizes}")
    for s in summaries:
        if s["baseline"] is None:
            continue
        b = s["baseline"]
        both = s["both_solved"]
        common = (f"; on the {both['n']} problems both solved, ours/VAMP planning median "
                  f"{both['ratio_median']:.2f}, mean {both['ratio_mean']:.2f}" if both["n"] else "")
        out.append(f"{s['robot']}: {b['label']} solved {b['solved']}/{b['total']}, plan+simp median "
                   f"{fmt_us(b['total_us_median'])} us (ours/VAMP {s.get('ratio_total_us_median', float('nan')):.2f}), "
                   f"{VERIFY_FACTOR}x fails {b['verify_failures']}{common}")
    not_run = sorted({f"{s['robot']} ({s['baseline_why']})" for s in summaries if s["baseline"] is None})
    if not_run:
        out.append("VAMP not run for: " + "; ".join(not_run))
    if any(s.get("by_family") for s in summaries):
        out.append(_family_table(summaries))
    if any("links" in s for s in summaries):
        out.append(_link_table(summaries))
    out.append(_kernel_lines(summaries))
    if any("kernels" in s for s in summaries):
        out.append(_kernel_table(summaries))
    return out


def _kernel_lines(summaries: list[dict]) -> str:
    """Which kernel each robot's table row ran, and what its specialized kernel cost to get."""
    parts = []
    for s in summaries:
        if s["kernel"] == "specialized" or "kernels" in s:
            how = (f"built in {s['kernel_compile_s']:.1f} s" if s["kernel_compile_s"] is not None else "from the cache")
            load = f", loaded in {1e3 * s['kernel_load_s']:.0f} ms" if s["kernel_load_s"] is not None else ""
            parts.append(f"{s['robot']} {s['kernel']} (specialized {how}{load})")
        else:
            parts.append(f"{s['robot']} generic ({s['kernel_reason'] or 'chosen'})")
    return "kernels: " + "; ".join(parts)


def _kernel_table(summaries: list[dict]) -> Table:
    """Specialized against generic kernels, robot by robot, planned one after the other on each problem."""
    rows = []
    for s in summaries:
        if "kernels" not in s:
            continue
        g, k = s["kernels"]["generic"], s["kernels"]["specialized"]
        rows.append(_pair_cells(s, g, k, s["kernels_per_problem"]) +
                    [f"{s['kernel_compile_s']:.1f}" if s["kernel_compile_s"] is not None else "cached"])
    header = [("robot", "left"), ("solved\ngen / spec", "right"), ("plan median\ngeneric", "right"),
              ("plan median\nspecialized", "right"), ("spec/gen\nmedian", "right"), ("spec/gen\nmean", "right"),
              ("spec/gen\nper problem", "right"), ("plan+simp\ngeneric", "right"), ("plan+simp\nspecialized", "right"),
              ("spec/gen\nplan+simp", "right"), ("per problem\nplan+simp", "right"), ("build\ns", "right")]
    return Table("specialized against generic kernels, each problem planned with both in turn (times in us)", header,
                 rows, set())


def _family_table(summaries: list[dict]) -> Table:
    """Ours against VAMP per robot and problem family, over the problems both solved (medians)."""
    rows = []
    for s in summaries:
        for fam, f in (s.get("by_family") or {}).items():
            rows.append([s["robot"], fam, f"{f['n']}", fmt_us(f["ours_median"]), fmt_us(f["theirs_median"]),
                         f"{f['ratio_median']:.2f}", fmt_num(f["ours_iterations"]), fmt_num(f["theirs_iterations"]),
                         f"{f['ours_us_per_iteration']:.2f}", f"{f['theirs_us_per_iteration']:.2f}"])
    header = [("robot", "left"), ("family", "left"), ("both\nsolved", "right"), ("plan median\nours", "right"),
              ("plan median\nVAMP", "right"), ("ours/VAMP\nmedian", "right"), ("iters median\nours", "right"),
              ("iters median\nVAMP", "right"), ("us per iter\nours", "right"), ("us per iter\nVAMP", "right")]
    return Table("ours against VAMP by problem family, on the problems both solved (medians, times in us)", header,
                 rows, set())


def _pair_cells(s: dict, a: dict, b: dict, per: dict) -> list[str]:
    """A robot's row of a side-by-side table (b against a, planned one after the other on each
    problem): solved, planning medians, their ratios, per-problem ratio, the same for plan + simplify."""
    def ratio(key: str) -> str:
        return f"{b[key] / a[key]:.2f}" if b[key] and a[key] else "-"

    def per_problem(name: str) -> str:
        r = per[f"{name}_median_ratio"]
        return f"{r:.2f}" if r is not None else "-"

    return [s["robot"], f"{a['solved']} / {b['solved']}", fmt_us(a["planning_us_median"]),
            fmt_us(b["planning_us_median"]), ratio("planning_us_median"), ratio("planning_us_mean"),
            per_problem("planning"), fmt_us(a["total_us_median"]), fmt_us(b["total_us_median"]),
            ratio("total_us_median"), per_problem("total")]


def _link_table(summaries: list[dict]) -> Table:
    """Certified against discrete Link, robot by robot, planned one after the other on each problem."""
    rows = []
    for s in summaries:
        d, c = s["links"]["discrete"], s["links"]["certified"]
        rows.append(_pair_cells(s, d, c, s["links_per_problem"]) +
                    [f"{d['verify_failures']} / {c['verify_failures']}"])
    header = [("robot", "left"), ("solved\ndisc / cert", "right"), ("plan median\ndiscrete", "right"),
              ("plan median\ncertified", "right"), ("cert/disc\nmedian", "right"), ("cert/disc\nmean", "right"),
              ("cert/disc\nper problem", "right"), ("plan+simp\ndiscrete", "right"),
              ("plan+simp\ncertified", "right"), ("cert/disc\nplan+simp", "right"),
              ("plan+simp\nper problem", "right"), (f"{VERIFY_FACTOR}x fails\ndisc / cert", "right")]
    return Table("certified Link against discrete Link, each problem planned with both, alternating which first "
                 "(times in us; per problem: the median of the per-problem ratios, over the problems both solved)",
                 header, rows, set())
