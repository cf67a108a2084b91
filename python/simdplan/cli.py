"""The ``simdplan`` command: plan a scene, benchmark MotionBenchMaker problems, show the build.

    simdplan plan SCENE [--planner rrtc|rrt|prm] [--seed N] [--time-limit S] [--max-iterations N]
                        [--no-simplify] [--out PATH.json|PATH.csv] [--verify-meshes]
    simdplan bench mbm [--robot panda] [--problems CLASS,...] [--planner rrtc]
                       [--mode reference|exact] [--time-limit S] [--seed N] [--limit N] [--json OUT]
                       [--pointcloud [N]] [--link discrete|certified|both] [--vamp auto|on|off]
    simdplan info [--json]

SCENE is a scene file (YAML/JSON, see simdplan.scenes) or the name of a shipped example scene
(``simdplan plan panda_bookshelf``). Flags override the scene's planner settings.

Output: rich tables when stdout is a terminal, plain text otherwise (logs, pipes); the progress
bar of ``bench`` shows only when stderr is a terminal.

Exit codes: 0 done (``plan``: a path was found); 1 ``plan`` found no path within its limits;
2 a user error (bad flag, missing or invalid scene file, invalid start or goal), reported as one
line on stderr without a traceback (``--debug`` shows it); 3 ``plan --verify-meshes``: a path was
found but it collides with the robot's real collision geometry; 130 interrupted. Anything else that
escapes is a bug and keeps its traceback.

Every path a plan returns is re-checked independently with ``robot.is_motion_valid`` at 10x the
planning resolution between consecutive waypoints ("verified"). With ``--verify-meshes`` it is
also checked against the robot's collision meshes (convex hulls, coal; simdplan.verify_path) at
its default step, with the scene's padding ("mesh check").
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import math
import os
import platform
import sys
import time
import warnings

import numpy as np

from simdplan.bench.records import (ENDPOINT_TOL, VERIFY_FACTOR, call_plan as _call_plan,  # noqa: F401
                                    mean as _mean, median as _median, percentile as _percentile, plan_baseline,
                                    plan_problem, planned_ends, summarize, verify_fields as _verify_fields,
                                    verify_path)


def cpu_model() -> str:
    from simdplan._runtime import cpu_model as model  # lazy: argument errors stay fast

    return model()


# Figures to compare `bench mbm` with: scenes/mbm_data/NOTICE.md (VAMP 0.6.4, RRT-Connect, default
# settings, all 700 panda problems, measured on another machine type).
MBM_ANCHOR = {
    "source": "scenes/mbm_data/NOTICE.md; the 4.90 rad cost median: the planner issue",
    "planner": "VAMP 0.6.4 RRT-Connect, default settings",
    "machine": "AMD EPYC Zen 5, 2 vCPUs (another machine type)",
    "robot": "panda",
    "solved": 699, "valid": 699, "total": 700,
    "planning_us_median": [47, 49], "planning_us_mean": 110,
    "total_us_median": 159, "final_cost_median": 4.90,
}
# The same source's point-cloud setting: 10k surface points per obstacle, filtered at 2 cm.
MBM_CLOUD_ANCHOR = {"planning_us_median": 169, "filter_ms_median": 2.9, "build_ms_median": 3.2,
                    "points_per_obstacle": 10_000, "filter_m": 0.02}


class UserError(Exception):
    """A problem with the user's input: one line on stderr, exit code ``code``, no traceback."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = _one_line(message)
        self.code = code


# ----------------------------------------------------------------------------- small helpers
def _one_line(text) -> str:
    parts = [p.strip() for p in str(text).splitlines() if p.strip()]
    return "; ".join(parts) if parts else str(text)


def _err(message: str) -> None:
    print(f"simdplan: {message}", file=sys.stderr, flush=True)


def _stdout_is_tty() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def _have_rich() -> bool:
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def _use_rich() -> bool:
    return _stdout_is_tty() and _have_rich()


def _fmt_time_ns(ns) -> str:
    if ns is None:
        return "-"
    ns = float(ns)
    if ns < 1e6:
        return f"{ns / 1e3:,.1f} us"
    if ns < 1e9:
        return f"{ns / 1e6:,.2f} ms"
    return f"{ns / 1e9:,.3f} s"


def _fmt_num(v, digits: int = 0) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:,.{digits}f}"


def _fmt_us(v) -> str:
    """Microseconds for tables: no decimals from 100 us on."""
    if v is None:
        return "-"
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


def _seconds(s: float) -> str:
    return f"{s:g} s"


def _jsonable(v):
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if isinstance(v, np.ndarray):
        return _jsonable(v.tolist())
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def machine_info() -> dict:
    import simdplan

    return {
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "loadavg": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "simdplan": simdplan.info(),
    }


# ----------------------------------------------------------------------------- the library's contracts
def _settings_fields(settings) -> dict:
    if settings is None:
        from simdplan.planner.settings import PlannerSettings

        settings = PlannerSettings()
    if dataclasses.is_dataclass(settings):
        return dataclasses.asdict(settings)
    return dict(settings)


def _apply_overrides(settings, overrides: dict):
    """The scene's settings with the flags given (None = not given); validated, or UserError."""
    from simdplan.planner.settings import PlannerSettings

    fields = _settings_fields(settings)
    fields.update({k: v for k, v in overrides.items() if v is not None})
    known = {f.name for f in dataclasses.fields(PlannerSettings)}
    try:
        s = PlannerSettings(**{k: v for k, v in fields.items() if k in known})
        checked = s.validated()
    except ValueError as exc:
        raise UserError(f"invalid planner settings: {exc}") from exc
    return s, checked


# ----------------------------------------------------------------------------- plan
def resolve_scene(arg: str) -> str:
    """The scene file SCENE names: an existing file, else a shipped example (by name or file name)."""
    from simdplan import scenes

    if os.path.isfile(arg):
        return arg
    if os.path.isdir(arg):
        raise UserError(f"{arg}: is a directory, not a scene file")
    looks_like_path = os.path.sep in arg or (os.path.altsep and os.path.altsep in arg)
    if not looks_like_path:
        try:
            return scenes.example(arg)
        except ValueError:
            pass
    if looks_like_path or os.path.splitext(arg)[1]:
        raise UserError(f"{arg}: no such file")
    names = ", ".join(scenes.examples()) or "none"
    raise UserError(f"{arg}: no such file or shipped example scene (examples: {names})")


def load_scene(path: str):
    """simdplan.scenes.load(path), with user errors as UserError."""
    from simdplan import scenes

    try:
        return scenes.load(path)
    except OSError as exc:
        what = exc.strerror or str(exc)
        raise UserError(f"{exc.filename or path}: {what}") from exc
    except (ValueError, KeyError, TypeError) as exc:
        # ValueError: the loader's validation (names the file and key); KeyError/TypeError: a
        # malformed document the loader did not catch itself.
        msg = str(exc) if not isinstance(exc, KeyError) else f"missing key {exc}"
        if isinstance(exc, TypeError):
            msg = f"malformed scene ({exc})"
        raise UserError(msg if path in msg or os.path.basename(path) in msg else f"{path}: {msg}") from exc
    except Exception as exc:  # a parser's own error class (e.g. yaml.YAMLError) is a user error too
        if type(exc).__module__.split(".")[0] in ("yaml", "json"):
            raise UserError(f"{path}: cannot parse: {exc}") from exc
        raise


def _check_output(flag: str, out: str, extensions: tuple[str, ...] = ()) -> None:
    """A file a command will write, checked before any work: one of ``extensions`` (if given), in a
    folder that exists, and not a folder itself."""
    if extensions and os.path.splitext(out)[1].lower() not in extensions:
        raise UserError(f"{flag} {out}: use a {' or '.join(extensions)} file name")
    parent = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(parent):
        raise UserError(f"{flag} {out}: directory {parent} does not exist")
    if os.path.isdir(out):
        raise UserError(f"{flag} {out}: is a directory")


def _check_out(out: str | None) -> None:
    if out is not None:
        _check_output("--out", out, (".json", ".csv"))


def _resolution(robot, checked) -> float:
    return float(checked.resolution if checked.resolution is not None else robot.resolution)


def cmd_plan(args) -> int:
    import simdplan

    path = resolve_scene(args.scene)
    _check_out(args.out)
    scene = load_scene(path)
    mesh_urdf = _mesh_check_setup(scene) if getattr(args, "verify_meshes", False) else None
    settings, checked = _apply_overrides(getattr(scene, "settings", None), {
        "planner": args.planner, "seed": args.seed, "time_limit": args.time_limit,
        "max_iterations": args.max_iterations, "simplify": False if args.no_simplify else None,
        "link": "certified" if args.certified else None})

    from simdplan.planner import InvalidProblemError as invalid  # noqa: PLC0415
    t0 = time.perf_counter()
    try:
        result = _call_plan(scene, settings)
    except invalid as exc:
        raise UserError(f"{path}: {exc}") from exc
    except ValueError as exc:  # the planner's own input validation
        raise UserError(f"{path}: {exc}") from exc
    wall = time.perf_counter() - t0

    res = _resolution(scene.robot, checked)
    stats = dict(result.stats)
    verified = None
    if result.success:
        start, goals = planned_ends(scene.robot, scene.start, scene.goals, checked)
        verified = verify_path(scene.robot, scene.env, result.path, start, goals,
                               VERIFY_FACTOR * res, checked.padding, checked.link == "certified", checked.min_step)
    meshes = None
    if mesh_urdf is not None and result.success:
        meshes = _mesh_check(scene, result.path, checked.padding, mesh_urdf)
    info = simdplan.info()
    name = getattr(scene, "name", None) or os.path.splitext(os.path.basename(path))[0]
    # OMPL planners stop on time only and count no iterations; they report OMPL's status instead
    ompl = checked.planner.startswith("ompl:")
    budget = (f"time limit {_seconds(checked.time_limit) if checked.time_limit else 'none'}"
              + ("" if ompl else f", max {checked.max_iterations:,} iterations"))
    rows = [
        ("scene", f"{name} ({path})"),
        ("robot", f"{scene.robot.name}, {scene.robot.dof} dof; start + {len(np.atleast_2d(scene.goals))} goal(s)"),
        ("planner", f"{checked.planner}, seed {checked.seed}, {budget}, "
                    f"simplify {'on' if checked.simplify else 'off'}, {checked.link} Link"),
        ("success", "yes" if result.success else "no"),
        ("planning time", f"{_fmt_time_ns(stats.get('planning_time_ns'))} "
                          + (f"(OMPL status: {stats.get('ompl_status', '-')})" if ompl else
                             f"({_fmt_num(stats.get('iterations'))} iterations)")),
        ("simplification time", "off" if not checked.simplify else
         _fmt_time_ns(stats.get("simplify_time_ns")) if result.success else "-"),
        ("wall time of the call", _fmt_time_ns(wall * 1e9)),
        ("collision checks", _fmt_num(stats.get("collision_checks"))),
    ]
    if ompl:
        rows.append(("OMPL checks", f"{_fmt_num(stats.get('state_checks'))} states, "
                                    f"{_fmt_num(stats.get('motion_checks'))} motions"))
    if stats.get("limit_clamped"):
        rows.append(("joint limits", result.message))
    if result.success and stats.get("stopped") == "time_limit":
        rows.append(("time limit", "reached after planning: the path is simplified only in part"))
    from simdplan.planner.plan import INTERPOLATION_NOTES

    refused = [text for text in INTERPOLATION_NOTES.values() if text in result.message]
    if refused:
        rows.append(("interpolation", refused[0]))
    if result.success:
        rows += [
            ("path length", f"{_fmt_num(stats.get('initial_cost'), 3)} before simplification, "
                            f"{_fmt_num(stats.get('final_cost', result.cost), 3)} after (joint-space)"),
            ("waypoints", str(len(result.path))),
            ("verified", (f"yes (every edge at {VERIFY_FACTOR * res:g} samples/unit, {VERIFY_FACTOR}x the planning "
                          f"resolution{', and certified again' if checked.link == 'certified' else ''})"
                          if verified["ok"] else
                          f"NO ({VERIFY_FACTOR}x the planning resolution): {verified['reason']}")),
        ]
        if meshes is not None:
            rows.append(("mesh check", _mesh_row(meshes)))
    rows.append(("ISA", f"{info['isa']} ({info['lanes']} float lanes)"))

    if result.success and args.out:
        try:
            result.save(args.out)
        except (OSError, ValueError) as exc:
            raise UserError(f"--out {args.out}: {getattr(exc, 'strerror', None) or exc}") from exc
        rows.append(("written", args.out))
    _print_summary("simdplan plan", rows)

    if verified is not None and not verified["ok"]:
        _err(f"warning: the returned path failed the independent check: {verified['reason']}")
    if meshes is not None and not meshes.valid:
        _err(f"the returned path collides with the robot's collision meshes: {meshes.first_collision}")
        return 3
    if not result.success and ompl:
        _err(f"no path found within {_seconds(checked.time_limit)} ({checked.planner}, seed {checked.seed}: "
             f"OMPL status {stats.get('ompl_status', '-')})" + ("; nothing written" if args.out else ""))
        return 1
    if not result.success:
        limit = []
        if checked.time_limit:
            limit.append(_seconds(checked.time_limit))
        limit.append(f"{checked.max_iterations:,} iterations")
        iters = int(stats.get("iterations", 0))
        hit = ("the iteration limit" if iters >= checked.max_iterations else
               "the time limit" if checked.time_limit else "the planner's end")
        message = getattr(result, "message", "") or ""
        detail = f"; {message}" if message and not message.startswith("no path found") else ""
        _err(f"no path found within {' / '.join(limit)} ({checked.planner}, seed {checked.seed}: stopped at {hit} "
             f"after {iters:,} iterations{detail})" + ("; nothing written" if args.out else ""))
        return 1
    return 0


def _mesh_check_setup(scene) -> str:
    """plan --verify-meshes, before planning: coal is importable and the robot's mesh URDF is known
    (a built-in robot, or a scene robot given by a URDF with mesh or primitive collision geometry)."""
    from simdplan.planner import verify  # noqa: PLC0415

    try:
        verify._coal()
    except ImportError as exc:
        raise UserError(f"--verify-meshes: {exc}") from exc
    spec = getattr(scene, "robot_spec", None)
    candidates = []
    if isinstance(spec, dict) and isinstance(spec.get("urdf"), str):
        urdf = spec["urdf"]
        base = os.path.dirname(scene.path) if getattr(scene, "path", None) else os.getcwd()
        candidates.append(urdf if os.path.isabs(urdf) else os.path.normpath(os.path.join(base, urdf)))
    for urdf in candidates:
        if os.path.isfile(urdf) and verify._has_collision_geometry(urdf):
            return urdf
    found = verify.mesh_urdf_for(scene.robot)
    if found is None:
        raise UserError(f"--verify-meshes: robot {scene.robot.name!r} has no known collision meshes (its URDF has "
                        f"only spheres); give the scene's robot as {{urdf: the mesh URDF}} or call "
                        f"simdplan.verify_path(robot, path, env, mesh_urdf=...)")
    return found


def _mesh_check(scene, path, padding: float, mesh_urdf: str):
    """simdplan.verify_path on the returned path (the flag --verify-meshes)."""
    from simdplan.planner.verify import verify_path as verify_meshes  # noqa: PLC0415

    try:
        return verify_meshes(scene.robot, path, scene.env, padding=padding, mesh_urdf=mesh_urdf)
    except (ValueError, FileNotFoundError) as exc:
        raise UserError(f"--verify-meshes: {exc}") from exc


def _mesh_row(v) -> str:
    where = (f"{v.checked_samples if not v.valid else v.total_samples} of {v.total_samples} samples at "
             f"{v.resolution:g} rad steps, {os.path.basename(v.mesh_urdf)} convex hulls"
             f"{f', padding {v.padding:g} m' if v.padding else ''}, {v.seconds * 1e3:.0f} ms")
    if v.valid:
        return f"yes, collision-free ({where})"
    return f"NO: {v.first_collision} ({where})"


def _print_summary(title: str, rows: list[tuple[str, str]]) -> None:
    if _use_rich():
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        t = Table(title=title, title_justify="left", show_header=False, box=None, padding=(0, 2))
        t.add_column(style="bold")
        t.add_column()
        for k, v in rows:
            style = ""
            if k == "success":
                style = "green" if v == "yes" else "red"
            elif k == "verified" and not v.startswith("yes"):
                style = "red"
            t.add_row(escape(k), f"[{style}]{escape(v)}[/{style}]" if style else escape(v))
        Console(file=sys.stdout).print(t)
    else:
        width = max(len(k) for k, _ in rows)
        for k, v in rows:
            print(f"{k + ':':<{width + 1}} {v}")
        sys.stdout.flush()


# ----------------------------------------------------------------------------- bench mbm
# (header, justify); a newline splits a header over lines in the rich table. Times in us.
BENCH_COLUMNS = [
    ("class", "left"), ("solved/\nvalid/\ntotal", "right"), ("verified", "right"),
    ("plan\nmedian", "right"), ("plan\nmean", "right"), ("plan\np95", "right"),
    ("simplify\nmedian", "right"), ("total\nmedian", "right"), ("total\nmean", "right"),
    ("iters\nmedian", "right"), ("cost\ninitial", "right"), ("cost\nfinal", "right"),
]


def _waypoint_note(s: dict) -> str:
    """How many failing paths hold a waypoint in collision: a configuration the planner accepted, as
    opposed to an edge grazing an obstacle between its samples."""
    n = s["verify_waypoint_failures"]
    return (f"{n} of them with a waypoint in collision" if n else
            "every waypoint collision-free: obstacles grazed between the samples of an edge")


def _bench_row(name: str, s: dict) -> list[str]:
    ver = f"{s['verified']}/{s['solved']}"
    if s["verify_failures"]:
        ver += f" ({s['verify_failures']} FAIL)"
    return [name, f"{s['solved']}/{s['valid']}/{s['total']}", ver,
            _fmt_us(s["planning_us_median"]), _fmt_us(s["planning_us_mean"]), _fmt_us(s["planning_us_p95"]),
            _fmt_us(s["simplify_us_median"]), _fmt_us(s["total_us_median"]), _fmt_us(s["total_us_mean"]),
            _fmt_num(s["iterations_median"]), _fmt_num(s["initial_cost_median"], 2),
            _fmt_num(s["final_cost_median"], 2)]


ANCHOR_LABEL = "VAMP 0.6.4 (ref.)"


def _anchor_row() -> list[str]:
    a = MBM_ANCHOR
    lo, hi = a["planning_us_median"]
    return [ANCHOR_LABEL, f"{a['solved']}/{a['valid']}/{a['total']}", "-", f"{lo}-{hi}",
            str(a["planning_us_mean"]), "-", "-", str(a["total_us_median"]), "-", "-", "-",
            f"{a['final_cost_median']:.2f}"]


def _print_table(title: str, header: list[tuple[str, str]], rows: list[list[str]], sections: set[int]) -> None:
    """rows[i] for i in sections start a new section (a rule above them)."""
    if _use_rich():
        from rich.console import Console
        from rich.markup import escape
        from rich.table import Table

        from rich import box

        t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        for k, (name, justify) in enumerate(header):
            t.add_column(escape(name), justify=justify, no_wrap=k < 2)
        for i, row in enumerate(rows):
            if i in sections:
                t.add_section()
            style = "dim" if row[0] == ANCHOR_LABEL else ("red" if "FAIL" in row[2] else None)
            t.add_row(*(escape(c) for c in row), style=style)
        Console(file=sys.stdout).print(t)
        return
    header = [(" ".join(h.split()).replace("/ ", "/"), j) for h, j in header]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, (h, _) in enumerate(header)]

    def line(cells):
        return "  ".join(c.ljust(w) if j == "left" else c.rjust(w) for c, w, (_, j) in zip(cells, widths, header))

    print(title)
    print(line([h for h, _ in header]))
    rule = "  ".join("-" * w for w in widths)
    print(rule)
    for i, row in enumerate(rows):
        if i in sections:
            print(rule)
        print(line(row))
    sys.stdout.flush()


class _Progress:
    """A rich progress bar on stderr when it is a terminal; nothing otherwise."""

    def __init__(self, total: int):
        self.bar = None
        if _stderr_is_tty() and _have_rich():
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)

            self.bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                TimeElapsedColumn(), TimeRemainingColumn(), console=Console(file=sys.stderr),
                                transient=True)
            self.task = self.bar.add_task("planning", total=total)

    def __enter__(self):
        if self.bar:
            self.bar.start()
        return self

    def advance(self, description: str) -> None:
        if self.bar:
            self.bar.update(self.task, advance=1, description=description)

    def __exit__(self, *exc):
        if self.bar:
            self.bar.stop()


def _parse_classes(text: str | None, available: list[str]) -> list[str] | None:
    if text is None:
        return None
    wanted = [c.strip() for c in text.split(",") if c.strip()]
    if not wanted:
        raise UserError("--problems: give one or more classes separated by commas")
    unknown = [c for c in wanted if c not in available]
    if unknown:
        raise UserError(f"--problems: unknown class {', '.join(unknown)}; classes: {', '.join(available)}")
    return list(dict.fromkeys(wanted))


def _load_mbm(args, classes):
    from simdplan import robots
    from simdplan.scenes import mbm

    try:
        robot = robots.load(args.robot)
    except ValueError as exc:
        raise UserError(f"--robot: {exc}") from exc
    try:
        loaded = mbm.load(json_path=args.problems_file, robot=robot, mode=args.mode, classes=classes)
    except OSError as exc:
        raise UserError(f"{exc.filename or args.problems_file}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    if args.limit:  # the first N of each class, in file order (a class with fewer keeps them all)
        taken: dict = {}
        kept = []
        for sc in loaded:
            if taken.get(sc.problem, 0) < args.limit:
                taken[sc.problem] = taken.get(sc.problem, 0) + 1
                kept.append(sc)
        loaded = kept
    return robot, list(loaded)


def _as_pointcloud(scene, per_obstacle: int, min_dist: float, point_radius: float) -> tuple[dict, np.ndarray, np.ndarray]:
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


def _baseline_for(args, robot, planner: str | None):
    """The VAMP baseline of ``--vamp`` (simdplan.vamp_baseline), or None and why it does not run."""
    if args.vamp == "off":
        return None, "--vamp off"
    from simdplan import vamp_baseline

    why = ""
    if args.mode != "reference":
        why = "VAMP has no exact cylinders: it runs with --mode reference only"
    elif planner not in (None, "rrtc"):
        why = f"VAMP's RRT-Connect is compared with rrtc only, not {planner}"
    if not why:
        base, why = vamp_baseline.load(robot.name)
        if base is not None:
            return base, ""
    if args.vamp == "on":
        raise UserError(f"--vamp on: {why}")
    return None, why


def cmd_bench_mbm(args) -> int:
    from simdplan.scenes import mbm

    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be >= 1, got {args.limit}")
    if args.json:
        _check_output("--json", args.json)
    classes = _parse_classes(args.problems, list(mbm.classes()))
    if args.pointcloud is not None and args.pointcloud < 1:
        raise UserError(f"--pointcloud must be >= 1 points per obstacle, got {args.pointcloud}")
    if not args.filter >= 0:
        raise UserError(f"--filter must be >= 0 metres, got {args.filter}")
    if not (math.isfinite(args.point_radius) and args.point_radius >= 0):
        raise UserError(f"--point-radius must be a finite number >= 0 metres, got {args.point_radius}")
    overrides = {"planner": args.planner, "seed": args.seed, "time_limit": args.time_limit,
                 "max_iterations": args.max_iterations, "simplify": False if args.no_simplify else None}
    _apply_overrides(None, overrides)  # a bad flag fails before anything is loaded
    links = ["discrete", "certified"] if args.link == "both" else [args.link]
    t_start = time.perf_counter()
    machine = machine_info()
    robot, problems = _load_mbm(args, classes)
    if not problems:
        raise UserError("no problems selected")
    order = list(dict.fromkeys(p.problem for p in problems))

    base, base_why = _baseline_for(args, robot, args.planner)

    records: list[dict] = []
    used_settings = None
    interrupted = False
    with _Progress(len(problems)) as progress:
        try:
            for scene in problems:
                cloud = None
                if args.pointcloud:
                    fields, raw, kept = _as_pointcloud(scene, args.pointcloud, args.filter, args.point_radius)
                    cloud = (raw, kept, args.filter, args.point_radius)
                for link in links:  # both modes on the same scene, one after the other
                    settings, checked = _apply_overrides(getattr(scene, "settings", None), {**overrides, "link": link})
                    used_settings = used_settings or dataclasses.asdict(checked)
                    records.append(plan_problem(scene, settings, checked))
                    if cloud:
                        records[-1].update(fields)
                if base is not None:  # the same problem at once, in the same phase of the machine
                    records.append(plan_baseline(base, scene, not args.no_simplify, cloud,
                                                 VERIFY_FACTOR * _resolution(scene.robot, checked)))
                progress.advance(f"{scene.problem} {scene.index}")
        except KeyboardInterrupt:
            interrupted = True
    elapsed = time.perf_counter() - t_start

    args._records = records
    by_link = {}
    for link in links:
        mine = [r for r in records if r["link"] == link]
        summary = {c: summarize([r for r in mine if r["problem"] == c]) for c in order}
        summary["all"] = summarize(mine)
        by_link[link] = summary
        _print_bench_report(args, machine, robot, {**(used_settings or {}), "link": link}, summary, order,
                            len(problems), len(mine), elapsed)
    if len(links) > 1:
        _print_link_comparison(by_link)
    summary = by_link[links[0]] if len(links) == 1 else by_link
    base_summary = None
    if base is not None:
        theirs = [r for r in records if r.get("impl") == "vamp"]
        base_summary = {c: summarize([r for r in theirs if r["problem"] == c]) for c in order}
        base_summary["all"] = summarize(theirs)
        _print_baseline_report(args, base.label, links[0], by_link[links[0]], base_summary, order, theirs)
    else:
        print(f"VAMP side by side: not run ({base_why})")

    if args.json:
        doc = {
            "schema": "simdplan-bench-mbm/1",
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "argv": sys.argv if args._argv is None else ["simdplan", *args._argv],
            "args": {k: v for k, v in vars(args).items() if not k.startswith("_") and k != "func"},
            "robot": {"name": robot.name, "dof": robot.dof, "resolution": robot.resolution},
            "settings": used_settings,
            "verify_factor": VERIFY_FACTOR,
            "machine": machine,
            "anchor": MBM_ANCHOR,
            "baseline": None if base is None else {"label": base.label, "summary": base_summary},
            "elapsed_s": elapsed,
            "interrupted": interrupted,
            "summary": summary,
            "records": records,
        }
        _write_json(args.json, doc)
    if interrupted:
        _err(f"interrupted after {len(records)} of {len(problems)} problems (summary above covers those)")
        return 130
    return 0


def _write_json(path: str, doc: dict) -> None:
    """A benchmark's --json file (records and summary), or a UserError naming the path."""
    try:
        with open(path, "w") as f:
            json.dump(_jsonable(doc), f, indent=1)
    except OSError as exc:
        raise UserError(f"--json {path}: {exc.strerror or exc}") from exc
    print(f"records: {path}")


def _isa_name(info) -> str:
    return info.get("isa", "?") if isinstance(info, dict) else str(info)


def cmd_bench_robots(args) -> int:
    from simdplan.bench import multi_robot
    from simdplan.bench import robots as bench_robots
    from simdplan.scenes import FAMILIES

    names = [n.strip() for n in args.robots.split(",") if n.strip()]
    unknown = [n for n in names if n not in bench_robots.NAMES]
    if unknown or not names:
        raise UserError(f"--robots: unknown robot {', '.join(unknown) or '(none given)'}; robots: "
                        f"{', '.join(bench_robots.NAMES)}")
    families = [f.strip() for f in args.families.split(",") if f.strip()]
    bad = [f for f in families if f not in FAMILIES]
    if bad or not families:
        raise UserError(f"--families: unknown family {', '.join(bad) or '(none given)'}; families: {', '.join(FAMILIES)}")
    if args.problems < 1:
        raise UserError(f"--problems must be >= 1, got {args.problems}")
    if args.json:
        _check_output("--json", args.json)
    overrides = {"time_limit": args.time_limit, "link": args.link}
    _apply_overrides(None, overrides)
    if "iiwa" in names:
        try:
            import pybullet_data  # noqa: F401
        except ImportError:
            _err('iiwa skipped: it comes from pybullet_data (pip install ".[viz]")')
            names.remove("iiwa")
    t0 = time.perf_counter()
    total = len(names) * len(families) * args.problems
    runs = []
    interrupted = False
    with _Progress(total) as progress:
        try:
            for name in names:
                try:
                    runs.extend(multi_robot.run([name], families, args.problems, args.seed, overrides, args.vamp,
                                                progress.advance))
                except RuntimeError as exc:  # --vamp on without VAMP
                    raise UserError(str(exc)) from exc
        except KeyboardInterrupt:
            interrupted = True
    summaries = [multi_robot.summary(r) for r in runs]
    machine = machine_info()
    rows = []
    for s in summaries:
        b = s["baseline"]
        ratio = (f"{s['ratio_planning_us_median']:.2f} / {s['ratio_planning_us_mean']:.2f}"
                 if b and s.get("ratio_planning_us_median") else "-")
        rows.append([s["robot"], f"{s['dof']}", f"{s['moving_spheres']}/{s['spheres']}",
                     f"{s['solved']}/{s['total']}", _fmt_us(s["planning_us_median"]), _fmt_us(s["planning_us_mean"]),
                     _fmt_us(s["total_us_median"]), _fmt_num(s["iterations_median"]),
                     f"{s['check_ns_per_config']:.0f}", f"{s['check_ns_per_moving_sphere']:.2f}",
                     f"{s['verify_failures']}", _fmt_us(b["planning_us_median"]) if b else "-",
                     _fmt_us(b["planning_us_mean"]) if b else "-", ratio])
    header = [("robot", "left"), ("dof", "right"), ("moving/\nspheres", "right"), ("solved", "right"),
              ("plan\nmedian", "right"), ("plan\nmean", "right"), ("plan+simp\nmedian", "right"),
              ("iters\nmedian", "right"), ("ns per\nconfig", "right"), ("ns per\nsphere", "right"),
              (f"{VERIFY_FACTOR}x\nfails", "right"), ("VAMP plan\nmedian", "right"), ("VAMP plan\nmean", "right"),
              ("ours/VAMP\nmed / mean", "right")]
    title = (f"simdplan bench robots: {args.problems} generated problems per family ({', '.join(families)}), seed "
             f"{args.seed}; each robot's default settings; times in us; {machine['cpu_model']}, "
             f"{machine['cpu_count']} CPUs, ISA {_isa_name(machine['simdplan'])}")
    _print_table(title, header, rows, set())
    print("ns per config: is_valid_many on random configurations in each problem's scene (median over problems); "
          "ns per sphere: that over the spheres some joint moves. "
          f"{VERIFY_FACTOR}x fails: solved paths with an edge in collision at {VERIFY_FACTOR}x the planning resolution.")
    for s in summaries:
        if s["baseline"] is None:
            continue
        b = s["baseline"]
        print(f"{s['robot']}: {b['label']} solved {b['solved']}/{b['total']}, plan+simp median "
              f"{_fmt_us(b['total_us_median'])} us (ours/VAMP {s.get('ratio_total_us_median', float('nan')):.2f}), "
              f"{VERIFY_FACTOR}x fails {b['verify_failures']}")
    not_run = sorted({f"{s['robot']} ({s['baseline_why']})" for s in summaries if s["baseline"] is None})
    if not_run:
        print("VAMP not run for: " + "; ".join(not_run))
    elapsed = time.perf_counter() - t0
    if args.json:
        doc = {"schema": "simdplan-bench-robots/1", "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
               "argv": sys.argv if args._argv is None else ["simdplan", *args._argv],
               "args": {k: v for k, v in vars(args).items() if not k.startswith("_") and k != "func"},
               "machine": machine, "elapsed_s": elapsed, "interrupted": interrupted, "summary": summaries,
               "records": {r.name: {"simdplan": r.records, "vamp": r.baseline_records} for r in runs}}
        _write_json(args.json, doc)
    if interrupted:
        _err(f"interrupted after {len(runs)} of {len(names)} robots (the table covers those)")
        return 130
    return 0


def _cloud_records(args) -> list[dict]:
    """simdplan's records of a --pointcloud run (not the VAMP baseline's)."""
    return [r for r in getattr(args, "_records", []) if "filter_us" in r and r.get("impl") != "vamp"]


def _print_baseline_report(args, label: str, link: str, ours: dict, theirs: dict, order: list[str],
                           records: list[dict]) -> None:
    """VAMP's table for the same problems and the side-by-side ratios (simdplan with ``link`` / VAMP)."""
    rows = [_bench_row(c, theirs[c]) for c in order]
    sections = set()
    if len(order) > 1:
        sections.add(len(rows))
        rows.append(_bench_row("all", theirs["all"]))
    _print_table(f"{label}, the same problems in the same run, each right after simdplan's (its own timers; "
                 f"its paths re-verified as simdplan's are)", BENCH_COLUMNS, rows, sections)
    o, t = ours["all"], theirs["all"]
    if t["verify_failures"]:
        print(f"{label} paths re-verified: {t['verify_failures']} of {t['solved']} failed, deepest penetration found "
              f"{t['verify_max_depth_m'] * 1e3:.3g} mm ({_waypoint_note(t)}).")

    def ratio(key, unit="us"):
        if o.get(key) is None or not t.get(key):
            return f"{key}: -"
        return f"{o[key]:.4g} vs {t[key]:.4g} {unit} ({o[key] / t[key]:.2f}x)"

    print(f"simdplan ({link} Link) vs {label} (ratio simdplan / VAMP; below 1: simdplan faster or shorter): solved "
          f"{o['solved']}/{o['valid']} vs {t['solved']}/{t['valid']} valid (each planner's own start and goal "
          f"checks); median planning {ratio('planning_us_median')}, "
          f"mean {ratio('planning_us_mean')}; median planning+simplification {ratio('total_us_median')}; "
          f"median final cost {ratio('final_cost_median', 'rad')}")
    clouds = [r for r in records if "filter_us" in r]
    if clouds:
        mine = _cloud_records(args)
        f = [_median([r["filter_us"] / 1e3 for r in rs]) for rs in (mine, clouds)]
        k = [_median([r["cloud_kept"] for r in rs]) for rs in (mine, clouds)]
        b = [_median([r["build_us"] / 1e3 for r in rs]) for rs in (mine, clouds)]
        print(f"point clouds, same sampled points: median filter {f[0]:.2f} vs {f[1]:.2f} ms ({f[0] / f[1]:.2f}x; "
              f"kept {k[0]:,.0f} vs {k[1]:,.0f} points); median CAPT build on the points simdplan kept "
              f"{b[0]:.2f} vs {b[1]:.2f} ms ({b[0] / b[1]:.2f}x)")
    sys.stdout.flush()


def _print_link_comparison(by_link: dict) -> None:
    d, c = by_link["discrete"]["all"], by_link["certified"]["all"]

    def ratio(key):
        return f"{c[key] / d[key]:.2f}x" if c.get(key) and d.get(key) else "-"

    print(f"certified vs discrete Link, same problems one after the other: planning median "
          f"{_fmt_us(c['planning_us_median'])} vs {_fmt_us(d['planning_us_median'])} us ({ratio('planning_us_median')}), "
          f"mean {ratio('planning_us_mean')}, simplification median {ratio('simplify_us_median')}; solved "
          f"{c['solved']} vs {d['solved']}; paths failing the {VERIFY_FACTOR}x re-check: {c['verify_failures']} vs "
          f"{d['verify_failures']} (deepest {c['verify_max_depth_m'] * 1e3:.3g} vs {d['verify_max_depth_m'] * 1e3:.3g} mm)")


def _print_bench_report(args, machine, robot, settings, summary, order, n_selected, n_done, elapsed) -> None:
    si = machine["simdplan"]
    s = settings or {}
    tl = s.get("time_limit")
    print(f"machine: {machine['cpu_model']} ({machine['cpu_count']} CPUs), {machine['platform']}, "
          f"Python {machine['python']}; load average {', '.join(f'{x:.2f}' for x in machine['loadavg'] or [])}")
    print(f"simdplan.info(): {si}")
    mode = f"point clouds sampled on the {args.mode} obstacles" if args.pointcloud else f"mode {args.mode}"
    print(f"MotionBenchMaker {robot.name}, {mode}: {n_done} of {n_selected} problems planned in "
          f"{elapsed:.1f} s; planner {s.get('planner')}, seed {s.get('seed')}, time limit "
          f"{_seconds(tl) if tl else 'none'}, max {s.get('max_iterations', 0):,} iterations, "
          f"simplify {'on' if s.get('simplify') else 'off'}, "
          + (f"certified Link (min step {s.get('min_step'):g})" if s.get("link") == "certified" else
             f"discrete Link, resolution {s.get('resolution') or robot.resolution:g} samples/unit"))
    rows = [_bench_row(c, summary[c]) for c in order]
    sections = set()
    if len(order) > 1:
        sections.add(len(rows))
        rows.append(_bench_row("all", summary["all"]))
    if robot.name == MBM_ANCHOR["robot"] and not args.pointcloud:
        sections.add(len(rows))
        rows.append(_anchor_row())
    _print_table("MotionBenchMaker: times in microseconds over the solved problems (planning, "
                 "simplification, total = their sum); iterations and path costs (joint-space length): medians",
                 BENCH_COLUMNS, rows, sections)
    a = MBM_ANCHOR
    al = summary["all"]
    print(f"solved/valid/total: problems whose start and goals are not valid (file flag or the planner's check) "
          f"count as invalid, not as failures. verified: solved paths whose every edge passes "
          f"robot.is_motion_valid at {VERIFY_FACTOR}x the planning resolution, start and goal matching"
          + (f"; {al['verify_failures']} failed, deepest penetration found {al['verify_max_depth_m'] * 1e3:.3g} mm"
             f" ({_waypoint_note(al)})." if al["verify_failures"] else "."))
    clouds = _cloud_records(args)
    if clouds:
        ca = MBM_CLOUD_ANCHOR
        med = lambda k: float(np.median([r[k] for r in clouds]))  # noqa: E731
        print(f"point clouds: {args.pointcloud:,} surface points per obstacle (median {med('cloud_points'):,.0f} "
              f"per problem), filtered at {args.filter:g} m to a median {med('cloud_kept'):,.0f}; median filter "
              f"{med('filter_us') / 1e3:.2f} ms, CAPT build {med('build_us') / 1e3:.2f} ms. Reference (same source, "
              f"{ca['points_per_obstacle']:,} points per obstacle, {ca['filter_m']:g} m): median planning "
              f"{ca['planning_us_median']} us, filter {ca['filter_ms_median']} ms, build {ca['build_ms_median']} ms.")
    if al["wall_us_median"] is not None:
        print(f"wall time of one simdplan.plan call from Python (includes its input checks): median "
              f"{_fmt_us(al['wall_us_median'])} us over the solved problems.")
    if args.pointcloud:
        sys.stdout.flush()
        return
    print(f"reference: {a['planner']} on {a['machine']}, all {a['total']} problems: "
          f"{a['solved']}/{a['valid']}/{a['total']} solved, median planning {a['planning_us_median'][0]}-"
          f"{a['planning_us_median'][1]} us, mean {a['planning_us_mean']} us, median planning+simplification "
          f"{a['total_us_median']} us, median simplified cost {a['final_cost_median']:.2f} rad "
          f"(source: {a['source']})")
    sys.stdout.flush()


# ----------------------------------------------------------------------------- view
def read_path(path: str, robot) -> np.ndarray:
    """(k, dof) waypoints from a 'simdplan plan --out' file (.json or .csv); UserError if unreadable."""
    ext = os.path.splitext(path)[1].lower()
    try:
        if ext == ".json":
            with open(path) as f:
                doc = json.load(f)
            names, rows = doc.get("joint_names"), doc.get("path")
        elif ext == ".csv":
            with open(path, newline="") as f:
                lines = list(csv.reader(f))
            names, rows = lines[0], [[float(x) for x in r] for r in lines[1:]]
        else:
            raise UserError(f"--path {path}: expected a .json or .csv result")
    except OSError as exc:
        raise UserError(f"--path {path}: {exc.strerror or exc}") from exc
    except (ValueError, IndexError, AttributeError) as exc:
        raise UserError(f"--path {path}: not a simdplan result ({exc})") from exc
    arr = np.asarray(rows, dtype=float) if rows else np.zeros((0, robot.dof))
    if names is not None and list(names) != robot.joint_names:
        raise UserError(f"--path {path}: joints {names} are not the scene robot's {robot.joint_names}")
    if arr.ndim != 2 or arr.shape[1] != robot.dof or len(arr) == 0 or not np.isfinite(arr).all():
        raise UserError(f"--path {path}: expected (k, {robot.dof}) finite waypoints, got shape {arr.shape}")
    return arr


def cmd_view(args) -> int:
    try:
        from simdplan.viz import PyBulletViewer, save_image
        from simdplan.viz.pybullet_viewer import _pybullet, _quiet

        with _quiet():  # pybullet prints a banner on import
            _pybullet()
    except ImportError as exc:
        raise UserError(str(exc)) from exc
    path_arg = resolve_scene(args.scene)
    scene = load_scene(path_arg)
    try:
        width, height = (int(x) for x in args.size.lower().split("x"))
        if not (16 <= width <= 4096 and 16 <= height <= 4096):
            raise ValueError
    except ValueError:
        raise UserError(f"--size must be WxH with 16..4096 pixels each, got {args.size!r}") from None
    path = read_path(args.path, scene.robot) if args.path else None
    out = args.render
    if out is not None:
        _check_output("--render", out, (".png", ".gif"))
        if out.lower().endswith(".gif") and path is None:
            result = _call_plan(scene, _apply_overrides(getattr(scene, "settings", None), {})[0])
            if not result.success:
                raise UserError(f"{path_arg}: no path to animate (planning failed: {result.message})")
            path = result.path
    with PyBulletViewer(scene.robot, scene.env, gui=out is None, spheres=args.spheres) as viewer:
        viewer.camera.width, viewer.camera.height = width, height
        if out is None:
            print("pybullet window open; close it (or Ctrl-C) to quit")
            try:
                while True:
                    if path is not None:
                        viewer.animate(path)
                        time.sleep(1.0)
                    else:
                        viewer.show(scene.start)
                        time.sleep(0.1)
            except KeyboardInterrupt:
                return 0
        if out.lower().endswith(".gif"):
            frames = viewer.render_path(path)
        else:
            frames = viewer.render(path[0] if path is not None else scene.start)
        try:
            save_image(frames, out)
        except OSError as exc:
            raise UserError(f"--render {out}: {exc.strerror or exc}") from exc
    n = len(frames) if isinstance(frames, list) else 1
    print(f"rendered {n} frame{'s' if n > 1 else ''} ({width}x{height}) to {out}")
    return 0


# ----------------------------------------------------------------------------- spherize
def cmd_spherize(args) -> int:
    """Replace a URDF's collision geometry by spheres (simdplan.robots.spherize); a per-link table."""
    src, out = args.urdf, args.out
    if not os.path.exists(src):
        raise UserError(f"{src}: no such file")
    if os.path.isdir(src):
        raise UserError(f"{src}: is a directory, not a URDF file")
    if args.max_spheres_per_link < 1:
        raise UserError(f"--max-spheres-per-link must be >= 1, got {args.max_spheres_per_link}")
    if not (math.isfinite(args.tolerance) and args.tolerance > 0):
        raise UserError(f"--tolerance must be > 0 (metres), got {args.tolerance}")
    _check_output("-o", out)
    if os.path.exists(out) and os.path.samefile(src, out):
        raise UserError(f"-o {out}: is the input URDF; write the spherized copy elsewhere")
    from simdplan.robots.spherize import spherize_urdf  # lazy: trimesh is slow to import

    try:
        reports = spherize_urdf(src, out, max_spheres_per_link=args.max_spheres_per_link, tolerance=args.tolerance)
    except (FileNotFoundError, ValueError) as exc:
        raise UserError(str(exc)) from exc
    except OSError as exc:
        raise UserError(f"-o {out}: {exc.strerror or exc}") from exc
    header = [("link", "left"), ("spheres", "right"), ("max protrusion mm", "right"), ("bound mm", "right"),
              ("volume overhead", "right"), ("coverage", "right"), ("inside of", "left"), ("time s", "right")]
    rows = [[name, str(r["n_spheres"]), f"{r['max_protrusion'] * 1000:.1f}", f"{r['protrusion_bound'] * 1000:.1f}",
             "-" if r["volume_overhead"] is None else f"{r['volume_overhead']:.2f}x", f"{r['coverage']:.3f}",
             r["proxy"].replace("convex_hull", "hull (open mesh)"), f"{r['seconds']:.2f}"]
            for name, r in reports.items()]
    _print_table(f"{out}: collision spheres for {len(rows)} links (tolerance {args.tolerance * 1000:g} mm, "
                 f"at most {args.max_spheres_per_link} spheres per link)", header, rows, set())
    total = sum(r["n_spheres"] for r in reports.values())
    print(f"{total} spheres. Protrusion: measured on the sphere surfaces, and its certified bound; volume "
          f"overhead: union of the spheres / link volume, a Monte Carlo estimate; coverage: mesh vertices and "
          f"surface samples inside the spheres; inside of: what protrusion and volume are measured against.")
    return 0


# ----------------------------------------------------------------------------- info
def cmd_info(args) -> int:
    import simdplan

    info = simdplan.info()
    if args.json:
        print(json.dumps({**info, "cpu_model": cpu_model()}, indent=1))
        return 0
    rows = [(k, ", ".join(map(str, v)) if isinstance(v, list) else str(v)) for k, v in info.items()]
    _print_summary("simdplan.info()", rows)
    return 0


# ----------------------------------------------------------------------------- parser
def _planner_name(text: str) -> str:
    from simdplan.planner.settings import PLANNERS

    if text in PLANNERS or (text.startswith("ompl:") and len(text) > 5):
        return text
    raise argparse.ArgumentTypeError(f"invalid choice {text!r} (choose from {', '.join(PLANNERS)}, or ompl:NAME)")


def build_parser() -> argparse.ArgumentParser:
    from simdplan.planner.settings import PLANNERS

    debug = argparse.ArgumentParser(add_help=False)
    debug.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show Python tracebacks for every error")
    ap = argparse.ArgumentParser(prog="simdplan", parents=[debug],
                                 description="Sampling-based motion planning with a SIMD collision core.",
                                 epilog="Exit codes: 0 ok, 1 no path found (plan), 2 user error, 3 mesh check failed "
                                        "(plan --verify-meshes), 130 interrupted.")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser("plan", parents=[debug], help="plan a path in a scene file or a shipped example scene",
                       description="Load a scene, plan from its start to one of its goals, print a summary.")
    p.add_argument("scene", metavar="SCENE", help="scene file (YAML/JSON) or the name of a shipped example")
    p.add_argument("--planner", type=_planner_name, metavar="{rrtc,rrt,prm,ompl:NAME}",
                   help="override the scene's planner (ompl:NAME: an OMPL geometric planner, e.g. ompl:RRTstar)")
    p.add_argument("--seed", type=int, help="random seed")
    p.add_argument("--time-limit", type=float, metavar="S", help="planning time budget in seconds (0: none)")
    p.add_argument("--max-iterations", type=int, metavar="N", help="planner iterations at most")
    p.add_argument("--no-simplify", action="store_true", help="return the planner's path as found")
    p.add_argument("--out", metavar="PATH", help="write the result: .json (everything) or .csv (waypoints)")
    p.add_argument("--certified", action="store_true",
                   help="certified Link: every edge proven collision-free between its ends, not just at samples")
    p.add_argument("--verify-meshes", action="store_true",
                   help="re-check the path against the robot's collision meshes (convex hulls, needs coal: "
                        "pip install simdplan[verify]); exit code 3 if it collides")
    p.set_defaults(func=cmd_plan)

    b = sub.add_parser("bench", parents=[debug], help="benchmarks (bench mbm: MotionBenchMaker problems)")
    bsub = b.add_subparsers(dest="bench", metavar="SUITE")
    m = bsub.add_parser("mbm", parents=[debug], help="plan every MotionBenchMaker problem and print a table",
                        description="Plan MotionBenchMaker problems, re-verify every path, print per-class figures.")
    m.add_argument("--robot", default="panda", help="robot (default panda)")
    m.add_argument("--problems", metavar="CLASS,...", help="problem classes, comma separated (default all)")
    m.add_argument("--planner", type=_planner_name, metavar="{rrtc,rrt,prm,ompl:NAME}",
                   help="planner (default: the problems' settings, rrtc)")
    m.add_argument("--mode", choices=("reference", "exact"), default="reference",
                   help="reference: cylinders as the reference planner models them (default); exact: exact cylinders")
    m.add_argument("--time-limit", type=float, metavar="S", help="per-problem planning time budget in seconds")
    m.add_argument("--max-iterations", type=int, metavar="N", help="per-problem planner iterations at most")
    m.add_argument("--seed", type=int, help="random seed (the same for every problem)")
    m.add_argument("--no-simplify", action="store_true", help="no path simplification")
    m.add_argument("--limit", type=int, metavar="N", help="the first N problems of each class")
    m.add_argument("--pointcloud", type=int, metavar="N", nargs="?", const=10_000,
                   help="replace each problem's obstacles by N points sampled on their surfaces (default 10000 "
                        "per obstacle), filtered (--filter), checked through a CAPT")
    m.add_argument("--filter", type=float, default=0.02, metavar="M",
                   help="with --pointcloud: thin the cloud so no two points are closer than M metres (default 0.02)")
    m.add_argument("--point-radius", type=float, default=0.0025, metavar="M",
                   help="with --pointcloud: radius of every point (default 0.0025, the reference setting's)")
    m.add_argument("--vamp", choices=("auto", "on", "off"), default="auto",
                   help="also plan every problem with VAMP's RRT-Connect, side by side in the same run: auto "
                        "(default: when VAMP is installed and the run is comparable), on (an error if it "
                        "cannot), off")
    m.add_argument("--link", choices=("discrete", "certified", "both"), default="discrete",
                   help="edge checks: discrete samples (default), certified from clearances, or both modes on "
                        "every problem, side by side")
    m.add_argument("--json", metavar="OUT", help="write every per-problem record and the summary")
    m.add_argument("--problems-file", metavar="JSON", default=None, help=argparse.SUPPRESS)
    m.set_defaults(func=cmd_bench_mbm)
    r = bsub.add_parser("robots", parents=[debug], help="generated problems on robots of different shape",
                        description="Generate problems (table, shelf, cage, box) for robots of different shape, plan "
                                    "them with each robot's default settings, VAMP side by side where it has the "
                                    "robot, and print one row per robot.")
    r.add_argument("--robots", metavar="NAME,...", default=",".join(("panda", "ur5", "iiwa", "mobile_manipulator",
                                                                       "dual_arm")),
                   help="robots, comma separated (default: panda, ur5, iiwa, mobile_manipulator, dual_arm)")
    r.add_argument("--families", metavar="NAME,...", default="table,shelf,cage,box",
                   help="problem families, comma separated (default all four)")
    r.add_argument("--problems", type=int, default=10, metavar="N", help="problems per family and robot (default 10)")
    r.add_argument("--seed", type=int, default=0, help="problem generator seed (default 0)")
    r.add_argument("--time-limit", type=float, metavar="S", help="per-problem planning time budget in seconds")
    r.add_argument("--link", choices=("discrete", "certified"), default=None, help="edge checks (default discrete)")
    r.add_argument("--vamp", choices=("auto", "on", "off"), default="auto",
                   help="VAMP side by side where it is installed and has the robot (panda, ur5): auto (default), "
                        "on (an error if it cannot), off")
    r.add_argument("--json", metavar="OUT", help="write every per-problem record and the summary")
    r.set_defaults(func=cmd_bench_robots)
    b.set_defaults(func=None, _parser=b)

    v = sub.add_parser("view", parents=[debug], help="show a scene (and a path) in pybullet, or render it to PNG/GIF",
                       description="Show a scene in pybullet's window, or render it off-screen (--render) with "
                                   "pybullet's software renderer (works without a display).")
    v.add_argument("scene", metavar="SCENE", help="scene file (YAML/JSON) or the name of a shipped example")
    v.add_argument("--path", metavar="PATH", help="a path to show: a result written by 'simdplan plan --out' "
                                                  "(.json or .csv)")
    v.add_argument("--spheres", action="store_true", help="overlay the robot's collision spheres")
    v.add_argument("--render", metavar="OUT", help="render instead of opening a window: OUT.png (one frame: the "
                                                   "path's start, or the scene's start) or OUT.gif (the path; planned "
                                                   "here if --path is not given)")
    v.add_argument("--size", default="640x480", metavar="WxH", help="image size for --render (default 640x480)")
    v.set_defaults(func=cmd_view)

    z = sub.add_parser("spherize", parents=[debug], help="replace a URDF's collision meshes by spheres",
                       description="Cover each link's collision geometry (meshes, boxes, cylinders) with spheres, "
                                   "conservatively (every mesh vertex and surface sample inside), and write a URDF "
                                   "whose collisions are spheres (loadable by simdplan.Robot.from_urdf).")
    z.add_argument("urdf", metavar="ROBOT.urdf", help="URDF with mesh or primitive collision geometry")
    z.add_argument("-o", "--out", required=True, metavar="OUT.urdf", help="where to write the spherized URDF")
    z.add_argument("--max-spheres-per-link", type=int, default=32, metavar="N",
                   help="spheres per link at most (default 32); too few relax the tolerance")
    z.add_argument("--tolerance", type=float, default=0.01, metavar="M",
                   help="target protrusion beyond the mesh in metres (default 0.01)")
    z.set_defaults(func=cmd_spherize)

    i = sub.add_parser("info", parents=[debug], help="the SIMD level in use and the build (simdplan.info())")
    i.add_argument("--json", action="store_true", help="print as JSON")
    i.set_defaults(func=cmd_info)
    ap.set_defaults(func=None, _parser=ap)
    return ap


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``simdplan`` command (and ``python -m simdplan``); returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error argparse already reported
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    args._argv = None if argv is None else list(argv)
    if args.func is None:
        args._parser.print_help(sys.stderr)
        return 2
    debug = getattr(args, "debug", False)
    # only within the command: library callers keep Python's own warning format
    with warnings.catch_warnings():
        if not debug:
            warnings.showwarning = _show_warning
        return _run(args, debug)


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one line on stderr, like the command's other messages (no source line)."""
    kind = "" if category is UserWarning else f" ({category.__name__})"
    _err(f"warning{kind}: {_one_line(message)}")


def _run(args, debug: bool) -> int:
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        if debug:
            raise
        _err(exc.message)
        return exc.code
    except KeyboardInterrupt:
        if debug:
            raise
        _err("interrupted")
        return 130
    except BrokenPipeError:  # e.g. `simdplan bench mbm | head`
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1


if __name__ == "__main__":
    sys.exit(main())
