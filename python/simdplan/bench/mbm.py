"""``simdplan bench mbm``: every MotionBenchMaker problem planned, its path re-checked, figures per class.

The harness behind the command: load the problems (simdplan.scenes.mbm), optionally replace their
obstacles by point clouds sampled on their surfaces, plan each with one or both Link modes and,
where VAMP is installed, with VAMP's RRT-Connect right after (simdplan.bench.vamp_baseline), in the
same run on the same machine. Every returned path is re-checked with simdplan.check_path. The
report is a list of tables (records.Table) and lines of text; the command prints them.

Figures of other planners appear only when they are measured in the same run: nothing here quotes
figures measured elsewhere.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from simdplan._format import fmt_num as _fmt_num
from simdplan._format import fmt_us as _fmt_us
from simdplan._format import seconds as _seconds
from simdplan.bench.records import (VERIFY_FACTOR, Table, invalid_record, links_in_turn, median, plan_baseline,
                                    plan_problem, resolution_of, result_record, summarize)

# (header, justify); a newline splits a header over lines in the rich table. Times in us.
BENCH_COLUMNS = [
    ("class", "left"), ("solved/\nvalid/\ntotal", "right"), ("verified", "right"),
    ("plan\nmedian", "right"), ("plan\nmean", "right"), ("plan\np95", "right"),
    ("simplify\nmedian", "right"), ("total\nmedian", "right"), ("total\nmean", "right"),
    ("iters\nmedian", "right"), ("cost\ninitial", "right"), ("cost\nfinal", "right"),
]


# ----------------------------------------------------------------------------- problems
def load_problems(robot, problems_file: str | None, mode: str, classes: list[str] | None,
                  limit: int | None, valid_only: bool = False) -> list:
    """The MotionBenchMaker problems of ``classes`` (None: all) for ``robot`` in ``mode``
    ("reference" or "exact"); with ``limit``, the first that many of each class in file order (a
    class with fewer keeps them all); ``valid_only``: problems the file flags invalid are dropped
    first. Raises OSError / ValueError from simdplan.scenes.mbm.load."""
    from simdplan.scenes import mbm

    loaded = mbm.load(json_path=problems_file, robot=robot, mode=mode, classes=classes)
    if valid_only:
        loaded = [sc for sc in loaded if sc.valid is not False]
    if limit:
        taken: dict = {}
        kept = []
        for sc in loaded:
            if taken.get(sc.problem, 0) < limit:
                taken[sc.problem] = taken.get(sc.problem, 0) + 1
                kept.append(sc)
        loaded = kept
    return list(loaded)


def as_pointcloud(scene, per_obstacle: int, min_dist: float, point_radius: float) -> tuple[dict, np.ndarray, np.ndarray]:
    """Replaces scene.env by a point cloud sampled on its obstacles' surfaces (the MotionBenchMaker
    point-cloud setting), filtered at ``min_dist``, its CAPT built for the robot; returns the timings
    (record fields), the sampled points and the kept ones."""
    from simdplan.collision import Environment
    from simdplan.collision.pointcloud import filter_pointcloud
    from simdplan.scenes import mbm

    raw = mbm.surface_points(scene.env, per_obstacle, seed=scene.index)
    t0 = time.perf_counter_ns()
    pts = filter_pointcloud(raw, min_dist)
    filter_ns = time.perf_counter_ns() - t0
    env = Environment()
    cid = env.add_pointcloud(pts, point_radius=point_radius)
    scene.robot.compiled_env(env)  # builds the tree for the robot's radii (timed by the core)
    tree = env.compiled_snapshot().point_tree(cid)
    scene.env = env
    return ({"cloud_points": int(len(raw)), "cloud_kept": int(len(pts)), "filter_us": filter_ns / 1e3,
             "build_us": tree.stats["build_ns"] / 1e3}, raw, pts)


def vamp_for(vamp: str, robot, mode: str, planner: str | None, obstacles: str = "primitives",
             sampler: str = "halton"):
    """(VAMP baseline or None, why it does not run) for ``--vamp`` ``vamp`` ("auto", "on", "off"),
    with VAMP's ``sampler`` (vamp_baseline.SAMPLERS). Raises RuntimeError for "on" when it cannot run."""
    if vamp == "off":
        return None, "--vamp off"
    from simdplan.bench import vamp_baseline

    why = ""
    if mode != "reference":
        why = "VAMP has no exact cylinders: it runs with --mode reference only"
    elif obstacles != "primitives":
        why = f"VAMP has no {obstacles}: it runs with --obstacles primitives only"
    elif planner not in (None, "rrtc"):
        why = f"VAMP's RRT-Connect is compared with rrtc only, not {planner}"
    if not why:
        base, why = vamp_baseline.load(robot.name, sampler)
        if base is not None:
            return base, ""
    if vamp == "on":
        raise RuntimeError(f"--vamp on: {why}")
    return None, why


# ----------------------------------------------------------------------------- the run
@dataclasses.dataclass
class PointCloudSetting:
    per_obstacle: int
    min_dist: float
    point_radius: float


@dataclasses.dataclass
class MbmRun:
    """What one run measured: every record (simdplan's per Link mode, VAMP's with impl "vamp"), the
    settings of the first problem planned, and whether Ctrl-C cut it short."""

    records: list
    settings: dict | None
    interrupted: bool
    elapsed_s: float = 0.0
    # run_many only: Link mode -> (problems planned, wall seconds of its plan_many call)
    throughput: dict = dataclasses.field(default_factory=dict)


def run(problems: list, settings_for, links: list[str], base=None, simplify: bool = True,
        cloud: PointCloudSetting | None = None, progress=None) -> MbmRun:
    """Plans every problem with each Link mode in ``links`` (one after the other on the same scene,
    which goes first alternating problem by problem: records.links_in_turn) and then with ``base``
    (VAMP) if given. settings_for(scene, link) -> (PlannerSettings, its validated copy).
    progress(text) is called after every problem. Ctrl-C ends the run early with the records so far
    (``interrupted``)."""
    t_start = time.perf_counter()
    records: list[dict] = []
    used = None
    interrupted = False
    try:
        for i, scene in enumerate(problems):
            cloud_points = None
            if cloud is not None:
                fields, raw, kept = as_pointcloud(scene, cloud.per_obstacle, cloud.min_dist, cloud.point_radius)
                cloud_points = (raw, kept, cloud.min_dist, cloud.point_radius)
            for link in links_in_turn(links, i):
                settings, checked = settings_for(scene, link)
                used = used or dataclasses.asdict(checked)
                records.append(plan_problem(scene, settings, checked))
                if cloud_points:
                    records[-1].update(fields)
            if base is not None:  # the same problem at once, in the same phase of the machine
                records.append(plan_baseline(base, scene, simplify, cloud_points, resolution_of(scene.robot, checked)))
            if progress:
                progress(f"{scene.problem} {scene.index}")
    except KeyboardInterrupt:
        interrupted = True
    return MbmRun(records, used, interrupted, time.perf_counter() - t_start)


def run_many(problems: list, settings_for, links: list[str], workers: int, base=None, simplify: bool = True,
             cloud: PointCloudSetting | None = None, progress=None) -> MbmRun:
    """As ``run``, with each Link mode's problems planned at once by ``simdplan.plan_many`` on
    ``workers`` threads: problem i plans with seed task_seed(seed, i), and its record has no wall
    time (there is no plan call from Python to time). VAMP (``base``) then plans them one by one.
    Paths are re-checked after planning. Ctrl-C keeps the records of what finished (``interrupted``)."""
    from simdplan.planner import PlanManyInterrupted, plan_many

    t_start = time.perf_counter()
    records: list[dict] = []
    used, interrupted, clouds, throughput = None, False, {}, {}
    try:
        for k, scene in enumerate(problems):
            if cloud is not None:
                fields, raw, kept = as_pointcloud(scene, cloud.per_obstacle, cloud.min_dist, cloud.point_radius)
                clouds[k] = (fields, (raw, kept, cloud.min_dist, cloud.point_radius))
        for link in links:
            chosen = [settings_for(scene, link) for scene in problems]
            used = used or dataclasses.asdict(chosen[0][1])
            todo = [k for k, scene in enumerate(problems) if scene.valid is not False]
            tasks = [dataclasses.replace(problems[k], settings=chosen[k][0]) for k in todo]
            t0 = time.perf_counter()
            try:
                results = plan_many(tasks, workers=workers, indices=todo, progress=False,
                                    on_result=lambda i, r: progress and progress(f"{link} {problems[todo[i]].problem}"))
            except PlanManyInterrupted as exc:
                results, interrupted = exc.results, True
            throughput[link] = (sum(r is not None for r in results), time.perf_counter() - t0)
            done = dict(zip(todo, results))
            for k, scene in enumerate(problems):
                if scene.valid is False:
                    records.append(invalid_record(scene, chosen[k][1]))
                elif done[k] is not None:
                    # no wall time of a plan call from Python: plan_many makes none
                    records.append(result_record(scene, done[k], chosen[k][1], None))
                    if k in clouds:
                        records[-1].update(clouds[k][0])
            if interrupted:
                break
        if base is not None and not interrupted:
            for k, scene in enumerate(problems):
                records.append(plan_baseline(base, scene, simplify, clouds.get(k, (None, None))[1],
                                             resolution_of(scene.robot, settings_for(scene, links[0])[1])))
    except KeyboardInterrupt:
        interrupted = True
    return MbmRun(records, used, interrupted, time.perf_counter() - t_start, throughput)


def summaries(records: list[dict], order: list[str], link: str | None = None, impl: str | None = None) -> dict:
    """{class: summarize(...), "all": ...} over simdplan's records of ``link`` or, with impl="vamp",
    VAMP's."""
    if impl == "vamp":
        mine = [r for r in records if r.get("impl") == "vamp"]
    else:
        mine = [r for r in records if r["link"] == link and r.get("impl") != "vamp"]
    out = {c: summarize([r for r in mine if r["problem"] == c]) for c in order}
    out["all"] = summarize(mine)
    return out


def cloud_records(records: list[dict]) -> list[dict]:
    """simdplan's records of a point-cloud run (not the VAMP baseline's)."""
    return [r for r in records if "filter_us" in r and r.get("impl") != "vamp"]


# ----------------------------------------------------------------------------- the report
def waypoint_note(s: dict) -> str:
    """How many failing paths hold a waypoint in collision: a configuration the planner accepted, as
    opposed to an edge grazing an obstacle between its samples."""
    n = s["verify_waypoint_failures"]
    return (f"{n} of them with a waypoint in collision" if n else
            "every waypoint collision-free: obstacles grazed between the samples of an edge")


def bench_row(name: str, s: dict) -> list[str]:
    ver = f"{s['verified']}/{s['solved']}"
    if s["verify_failures"]:
        ver += f" ({s['verify_failures']} FAIL)"
    return [name, f"{s['solved']}/{s['valid']}/{s['total']}", ver,
            _fmt_us(s["planning_us_median"]), _fmt_us(s["planning_us_mean"]), _fmt_us(s["planning_us_p95"]),
            _fmt_us(s["simplify_us_median"]), _fmt_us(s["total_us_median"]), _fmt_us(s["total_us_mean"]),
            _fmt_num(s["iterations_median"]), _fmt_num(s["initial_cost_median"], 2),
            _fmt_num(s["final_cost_median"], 2)]


def _class_table(title: str, summary: dict, order: list[str]) -> Table:
    rows = [bench_row(c, summary[c]) for c in order]
    sections = set()
    if len(order) > 1:
        sections.add(len(rows))
        rows.append(bench_row("all", summary["all"]))
    return Table(title, BENCH_COLUMNS, rows, sections)


def report(machine: dict, robot, settings: dict, summary: dict, order: list[str], n_selected: int, n_done: int,
           elapsed: float, mode: str, pointcloud: PointCloudSetting | None, records: list[dict],
           obstacles: str = "primitives") -> list:
    """simdplan's report for one Link mode: the machine and settings, the per-class table, notes."""
    si = machine["simdplan"]
    s = settings or {}
    tl = s.get("time_limit")
    out: list = [
        f"machine: {machine['cpu_model']} ({machine['cpu_count']} CPUs), {machine['platform']}, "
        f"Python {machine['python']}; load average {', '.join(f'{x:.2f}' for x in machine['loadavg'] or [])}",
        f"simdplan.info(): {si}",
        "kernel: " + (f"specialized ({robot.kernel_info['isa']}, key {robot.kernel_info['key'][:12]})"
                      if robot.kernel == "specialized" else f"generic ({robot.kernel_info['reason'] or 'chosen'})"),
    ]
    what = (f"point clouds sampled on the {mode} obstacles" if pointcloud else f"mode {mode}" if
            obstacles == "primitives" else f"the {mode} obstacles as {obstacles}")
    out.append(f"MotionBenchMaker {robot.name}, {what}: {n_done} of {n_selected} problems planned in "
               f"{elapsed:.1f} s; planner {s.get('planner')}, seed {s.get('seed')}, time limit "
               f"{_seconds(tl) if tl else 'none'}, max {s.get('max_iterations', 0):,} iterations, "
               f"simplify {'on' if s.get('simplify') else 'off'}, "
               + (f"certified Link (min step {s.get('min_step'):g})" if s.get("link") == "certified" else
                  f"discrete Link, resolution {s.get('resolution') or robot.resolution:g} samples/unit"))
    out.append(_class_table("MotionBenchMaker: times in microseconds over the solved problems (planning, "
                            "simplification, total = their sum); iterations and path costs (joint-space length): "
                            "medians", summary, order))
    al = summary["all"]
    out.append(f"solved/valid/total: problems whose start and goals are not valid (file flag or the planner's check) "
               f"count as invalid, not as failures. verified: solved paths whose every edge passes "
               f"robot.is_motion_valid at {VERIFY_FACTOR}x the planning resolution, start and goal matching"
               + (f"; {al['verify_failures']} failed, deepest penetration found {al['verify_max_depth_m'] * 1e3:.3g} "
                  f"mm ({waypoint_note(al)})." if al["verify_failures"] else "."))
    clouds = cloud_records(records)
    if clouds and pointcloud:
        med = lambda k: float(np.median([r[k] for r in clouds]))  # noqa: E731
        out.append(f"point clouds: {pointcloud.per_obstacle:,} surface points per obstacle (median "
                   f"{med('cloud_points'):,.0f} per problem), filtered at {pointcloud.min_dist:g} m to a median "
                   f"{med('cloud_kept'):,.0f}; median filter {med('filter_us') / 1e3:.2f} ms, CAPT build "
                   f"{med('build_us') / 1e3:.2f} ms.")
    if al["wall_us_median"] is not None:
        out.append(f"wall time of one simdplan.plan call from Python (includes its input checks): median "
                   f"{_fmt_us(al['wall_us_median'])} us over the solved problems.")
    return out


def link_comparison(by_link: dict) -> str:
    d, c = by_link["discrete"]["all"], by_link["certified"]["all"]

    def ratio(key):
        return f"{c[key] / d[key]:.2f}x" if c.get(key) and d.get(key) else "-"

    return (f"certified vs discrete Link, each problem with both (in turn, alternating which first): planning median "
            f"{_fmt_us(c['planning_us_median'])} vs {_fmt_us(d['planning_us_median'])} us "
            f"({ratio('planning_us_median')}), mean {ratio('planning_us_mean')}, simplification median "
            f"{ratio('simplify_us_median')}; solved {c['solved']} vs {d['solved']}; paths failing the "
            f"{VERIFY_FACTOR}x re-check: {c['verify_failures']} vs {d['verify_failures']} (deepest "
            f"{c['verify_max_depth_m'] * 1e3:.3g} vs {d['verify_max_depth_m'] * 1e3:.3g} mm)")


def baseline_report(label: str, ours_by_link: dict, theirs: dict, order: list[str], records: list[dict]) -> list:
    """VAMP's table for the same problems, measured in the same run, and the side-by-side ratios, one
    line per Link planned (simdplan with that Link / VAMP). ours_by_link: Link -> summaries(...);
    records: every record of the run."""
    out: list = [_class_table(f"{label}, the same problems in the same run, each right after simdplan's (its own "
                              f"timers; its paths re-verified as simdplan's are)", theirs, order)]
    t = theirs["all"]
    if t["verify_failures"]:
        out.append(f"{label} paths re-verified: {t['verify_failures']} of {t['solved']} failed, deepest penetration "
                   f"found {t['verify_max_depth_m'] * 1e3:.3g} mm ({waypoint_note(t)}).")

    for link, ours in ours_by_link.items():
        o = ours["all"]

        def ratio(key, unit="us", o=o):
            if o.get(key) is None or not t.get(key):
                return f"{key}: -"
            return f"{o[key]:.4g} vs {t[key]:.4g} {unit} ({o[key] / t[key]:.2f}x)"

        out.append(f"simdplan ({link} Link) vs {label} (ratio simdplan / VAMP; below 1: simdplan faster or shorter): "
                   f"solved {o['solved']}/{o['valid']} vs {t['solved']}/{t['valid']} valid (each planner's own start "
                   f"and goal checks); median planning {ratio('planning_us_median')}, "
                   f"mean {ratio('planning_us_mean')}; median planning+simplification {ratio('total_us_median')}; "
                   f"median final cost {ratio('final_cost_median', 'rad')}")
    theirs_clouds = [r for r in records if "filter_us" in r and r.get("impl") == "vamp"]
    if theirs_clouds:
        mine = cloud_records(records)
        f = [median([r["filter_us"] / 1e3 for r in rs]) for rs in (mine, theirs_clouds)]
        k = [median([r["cloud_kept"] for r in rs]) for rs in (mine, theirs_clouds)]
        b = [median([r["build_us"] / 1e3 for r in rs]) for rs in (mine, theirs_clouds)]
        out.append(f"point clouds, same sampled points: median filter {f[0]:.2f} vs {f[1]:.2f} ms ({f[0] / f[1]:.2f}x; "
                   f"kept {k[0]:,.0f} vs {k[1]:,.0f} points); median CAPT build on the points simdplan kept "
                   f"{b[0]:.2f} vs {b[1]:.2f} ms ({b[0] / b[1]:.2f}x)")
    return out
