"""``simdplan batch``: plan many scene files on every core, streaming each result to a JSON Lines
file as it finishes, so that a run killed halfway loses nothing and ``--resume`` completes it.

Each line of OUT.jsonl is one task: ``task`` (the scene file's path as given, or under a folder
given), ``index`` (its place in the sorted list of every task of the command, which sets its seed:
``simdplan.planner.task_seed(seed, index)``), then ``PlanResult.to_dict()``: success, planner,
message, error (the exception's name when the task could not be planned, e.g. a scene file that
does not load), joint_names, path, stats (seed, iterations, times in ns, ...).
"""

from __future__ import annotations

import json
import os
import time

import numpy as np
import yaml

from simdplan.cli.inputs import apply_overrides, plan_many_for, resolve_scene
from simdplan.cli.output import UserError, check_output, print_summary
from simdplan._format import fmt_num

SCENE_EXTENSIONS = (".yaml", ".yml", ".json")


def scene_files(args: list[str]) -> list[str]:
    """The tasks' scene files: each file (or shipped example name) as given, and every scene file
    under each folder (recursively, sorted); duplicates once."""
    out = []
    for arg in args:
        if os.path.isdir(arg):
            found = sorted(os.path.join(root, f) for root, _, files in os.walk(arg) for f in files
                           if os.path.splitext(f)[1].lower() in SCENE_EXTENSIONS)
            if not found:
                raise UserError(f"{arg}: no scene files ({', '.join(SCENE_EXTENSIONS)}) in this folder")
            out += found
        else:
            out.append(resolve_scene(arg))
    return list(dict.fromkeys(os.path.normpath(p) for p in out))


def done_tasks(path: str) -> set[str]:
    """The tasks OUT already holds. A last line cut short (the run was killed while writing it) is
    removed, so appending starts on a fresh line."""
    if not os.path.exists(path):
        return set()
    done, keep = set(), 0
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                break  # cut short: dropped below
            try:
                done.add(json.loads(raw)["task"])
            except (ValueError, KeyError, TypeError) as exc:
                raise UserError(f"{path}:{n}: not a line of simdplan batch results ({exc})") from None
            keep += len(raw)
    if keep != os.path.getsize(path):
        with open(path, "r+b") as f:
            f.truncate(keep)
    return done


def cmd_batch(args) -> int:
    import simdplan
    from simdplan import scenes

    check_output("--out", args.out, (".jsonl",))
    overrides = {"planner": args.planner, "seed": args.seed, "time_limit": args.time_limit,
                 "max_iterations": args.max_iterations, "simplify": False if args.no_simplify else None,
                 "link": args.link}
    apply_overrides(None, overrides)  # a bad flag fails before anything is loaded
    given = {k: v for k, v in overrides.items() if v is not None}
    if given.get("planner", "").startswith("ompl:"):
        raise UserError("--planner: batch runs the C++ planners (rrtc, rrt, prm); plan OMPL ones with simdplan plan")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers must be >= 1, got {args.workers}")
    files = scene_files(args.scenes)
    done = done_tasks(args.out)
    if done and not args.resume:
        raise UserError(f"--out {args.out}: already holds {len(done)} results; add --resume to plan only the "
                        "tasks it lacks, or choose another file")
    pending = [(i, f) for i, f in enumerate(files) if f not in done]
    t0 = time.perf_counter()
    counts = {"solved": 0, "failed": 0, "error": 0}
    with open(args.out, "a", encoding="utf-8") as out:

        def write(task: str, index: int, result) -> None:
            counts["error" if result.error else "solved" if result.success else "failed"] += 1
            line = json.dumps({"task": task, "index": index, **result.to_dict()}, separators=(",", ":"))
            out.write(line + "\n")
            out.flush()  # on disk (the OS's) as soon as it finished: a killed run keeps it

        tasks, numbers, names = [], [], []
        robots: dict = {}  # scenes naming the same robot share it (built once, compiled once)
        for i, f in pending:
            try:
                tasks.append(scenes.load(f, robots=robots))
            except (OSError, ValueError, KeyError, TypeError, yaml.YAMLError) as exc:
                write(f, i, _load_error(exc, f))
                continue
            numbers.append(i)
            names.append(f)
        planner = given.pop("planner", None)
        plan_many_for(args, tasks, lambda: f"interrupted: {sum(counts.values())} results written to {args.out}; "
                                            "run the same command with --resume to plan the rest",
                      planner=planner, indices=numbers, on_result=lambda k, r: write(names[k], numbers[k], r), **given)
    wall = time.perf_counter() - t0
    planned = sum(counts.values())
    print_summary("simdplan batch", [
        ("tasks", f"{len(files)} scene files; {len(files) - len(pending)} already in {args.out}, "
                  f"{len(pending)} planned now"),
        ("results", f"{counts['solved']} solved, {counts['failed']} not solved, {counts['error']} could not be planned "
                    "(see their message)"),
        ("wall time", f"{wall:.2f} s, loading the scenes included ({fmt_num(planned / wall if wall > 0 else 0.0)} "
                      f"tasks/s, " + (f"Ray at {args.ray})" if args.ray else
                                      f"{args.workers or simdplan.planner.default_workers()} workers)")),
        ("written to", args.out),
    ])
    return 0


def _load_error(exc: Exception, path: str):
    """The result line of a scene file that does not load."""
    from simdplan.planner import PlanResult

    msg = str(exc) if not isinstance(exc, KeyError) else f"missing key {exc}"
    if isinstance(exc, OSError):
        msg = f"{exc.filename or path}: {exc.strerror or exc}"
    return PlanResult(False, np.zeros((0, 0)), {}, "", [], msg, error=type(exc).__name__)
