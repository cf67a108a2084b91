"""``simdplan bench mbm`` and ``simdplan bench robots``: the flags, their checks, the progress bar,
the printed report and the --json file. The harnesses are simdplan.bench.mbm and
simdplan.bench.multi_robot."""

from __future__ import annotations

import math
import sys
import time

from simdplan.bench import mbm as bench_mbm
from simdplan.bench.records import VERIFY_FACTOR, machine_info
from simdplan.cli.inputs import apply_overrides
from simdplan.cli.output import UserError, check_output, err, print_report, Progress, write_json


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

    try:
        robot = robots.load(args.robot)
    except ValueError as exc:
        raise UserError(f"--robot: {exc}") from exc
    choose_kernel(robot, args.kernel)
    try:
        problems = bench_mbm.load_problems(robot, args.problems_file, args.mode, classes, args.limit)
    except OSError as exc:
        raise UserError(f"{exc.filename or args.problems_file}: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    return robot, problems


def choose_kernel(robot, kernel: str | None) -> None:
    """--kernel of bench mbm: the robot's specialized kernel built (or found cached) before the first
    problem, so the run never switches kernels half way; generic (or no --kernel with SIMDPLAN_JIT=off):
    the generic kernels throughout."""
    from simdplan.specialize import jit_mode

    if kernel == "generic" or (kernel is None and jit_mode() == "off"):
        robot.core.detach_kernels()
        return
    info = robot.compile(wait=True)
    if kernel == "specialized" and info["kernel"] != "specialized":
        raise UserError(f"--kernel specialized: {info['reason']}")


def _argv(args) -> list[str]:
    return sys.argv if args.command_argv is None else ["simdplan", *args.command_argv]


def _flags(args) -> dict:
    return {k: v for k, v in vars(args).items() if k not in ("func", "help_parser", "command_argv")}


def _cloud_setting(args):
    """The --pointcloud, --filter and --point-radius flags, checked (None without --pointcloud)."""
    if args.pointcloud is not None and args.pointcloud < 1:
        raise UserError(f"--pointcloud must be >= 1 points per obstacle, got {args.pointcloud}")
    if not args.filter >= 0:
        raise UserError(f"--filter must be >= 0 metres, got {args.filter}")
    if not (math.isfinite(args.point_radius) and args.point_radius >= 0):
        raise UserError(f"--point-radius must be a finite number >= 0 metres, got {args.point_radius}")
    return None if not args.pointcloud else bench_mbm.PointCloudSetting(args.pointcloud, args.filter, args.point_radius)


def cmd_bench_mbm(args) -> int:
    from simdplan.planner.settings import LINKS
    from simdplan.scenes import mbm

    if args.limit is not None and args.limit < 1:
        raise UserError(f"--limit must be >= 1, got {args.limit}")
    if args.json:
        check_output("--json", args.json)
    classes = _parse_classes(args.problems, list(mbm.classes()))
    cloud = _cloud_setting(args)
    if cloud and args.obstacles != "primitives":
        raise UserError(f"--pointcloud samples the primitives' surfaces: it cannot be combined with --obstacles "
                        f"{args.obstacles}")
    overrides = {"planner": args.planner, "seed": args.seed, "time_limit": args.time_limit,
                 "max_iterations": args.max_iterations, "simplify": False if args.no_simplify else None}
    apply_overrides(None, overrides)  # a bad flag fails before anything is loaded
    # the problems carry the planner's default settings: without --link, its default Link
    links = list(LINKS) if args.link == "both" else [args.link or LINKS[0]]
    t_start = time.perf_counter()  # the time reported includes loading the problems
    machine = machine_info()
    robot, problems = _load_mbm(args, classes)
    if not problems:
        raise UserError("no problems selected")
    order = list(dict.fromkeys(p.problem for p in problems))
    for scene in problems:
        scene.env = mbm.as_shapes(scene.env, args.obstacles)
    try:
        base, base_why = bench_mbm.vamp_for(args.vamp, robot, args.mode, args.planner, args.obstacles,
                                            args.vamp_sampler)
    except RuntimeError as exc:  # --vamp on, and it cannot run
        raise UserError(str(exc)) from exc

    def settings_for(scene, link):
        return apply_overrides(getattr(scene, "settings", None), {**overrides, "link": link})

    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers must be >= 1, got {args.workers}")
    with Progress(len(problems) * (len(links) if args.workers else 1)) as progress:
        if args.workers:
            done = bench_mbm.run_many(problems, settings_for, links, args.workers, base, not args.no_simplify, cloud,
                                      progress.advance)
        else:
            done = bench_mbm.run(problems, settings_for, links, base, not args.no_simplify, cloud, progress.advance)
    records = done.records
    elapsed = time.perf_counter() - t_start

    by_link = {}
    for link in links:
        by_link[link] = bench_mbm.summaries(records, order, link)
        n_done = sum(r["link"] == link for r in records)
        print_report(bench_mbm.report(machine, robot, {**(done.settings or {}), "link": link}, by_link[link], order,
                                       len(problems), n_done, elapsed, args.mode, cloud, records, args.obstacles))
    if len(links) > 1:
        print(bench_mbm.link_comparison(by_link))
    for link, (n, wall) in done.throughput.items():
        print(f"throughput ({link} Link): {n} problems in {wall:.2f} s on {args.workers} workers "
              f"(simdplan.plan_many) = {n / wall if wall > 0 else 0:,.0f} plans/s; problem i planned with seed "
              "task_seed(seed, i); times in the table are per problem, measured while the workers ran side by side")
    summary = by_link[links[0]] if len(links) == 1 else by_link
    base_summary = None
    if base is not None:
        base_summary = bench_mbm.summaries(records, order, impl="vamp")
        print_report(bench_mbm.baseline_report(base.label, by_link, base_summary, order, records))
    else:
        print(f"VAMP side by side: not run ({base_why})")

    if args.json:
        doc = {
            "schema": "simdplan-bench-mbm/1",
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
            "argv": _argv(args),
            "args": _flags(args),
            "robot": {"name": robot.name, "dof": robot.dof, "resolution": robot.resolution},
            "settings": done.settings,
            "verify_factor": VERIFY_FACTOR,
            "machine": machine,
            "baseline": None if base is None else {"label": base.label, "summary": base_summary},
            "elapsed_s": elapsed,
            "interrupted": done.interrupted,
            "throughput": {link: {"problems": n, "wall_s": w, "workers": args.workers}
                           for link, (n, w) in done.throughput.items()},
            "summary": summary,
            "records": records,
        }
        write_json(args.json, doc)
    if done.interrupted:
        err(f"interrupted after {len(records)} of {len(problems)} problems (summary above covers those)")
        return 130
    return 0


def cmd_bench_robots(args) -> int:
    from simdplan.bench import multi_robot
    from simdplan.bench import robots as bench_robots
    from simdplan.planner.settings import LINKS
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
        check_output("--json", args.json)
    cloud = _cloud_setting(args)
    links = list(LINKS) if args.link == "both" else None  # VAMP is compared with the first: the default
    kernels = list(multi_robot.KERNELS) if args.kernel == "both" else [args.kernel] if args.kernel else None
    overrides = {"time_limit": args.time_limit, "link": None if args.link == "both" else args.link}
    apply_overrides(None, overrides)
    if "iiwa" in names:
        try:
            import pybullet_data  # noqa: F401
        except ImportError:
            err('iiwa skipped: it comes from pybullet_data (pip install ".[viz]")')
            names.remove("iiwa")
    t0 = time.perf_counter()
    total = len(names) * len(families) * args.problems
    runs = []
    interrupted = False
    with Progress(total) as progress:
        try:
            for name in names:
                try:
                    runs.extend(multi_robot.run([name], families, args.problems, args.seed, overrides, args.vamp,
                                                progress.advance, links, args.vamp_sampler, cloud, kernels))
                except RuntimeError as exc:  # --vamp on without VAMP, --kernel specialized without a compiler
                    raise UserError(str(exc)) from exc
        except KeyboardInterrupt:
            interrupted = True
    summaries = [multi_robot.summary(r) for r in runs]
    machine = machine_info()
    print_report(multi_robot.report(summaries, families, args.problems, args.seed, machine, cloud))
    elapsed = time.perf_counter() - t0
    if args.json:
        doc = {"schema": "simdplan-bench-robots/1", "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
               "argv": _argv(args), "args": _flags(args),
               "machine": machine, "elapsed_s": elapsed, "interrupted": interrupted, "summary": summaries,
               "records": {r.name: {"simdplan": r.records, "vamp": r.baseline_records,
                                    **({"by_link": r.by_link} if links else {}),
                                    **({"by_kernel": r.by_kernel} if kernels and len(kernels) > 1 else {})}
                           for r in runs}}
        write_json(args.json, doc)
    if interrupted:
        err(f"interrupted after {len(runs)} of {len(names)} robots (the table covers those)")
        return 130
    return 0
