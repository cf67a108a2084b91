"""``simdplan batch``: plan many scene files on every core, streaming each result to a JSON Lines
file as it finishes, so that a run killed halfway loses nothing and ``--resume`` completes it.

Each line of OUT.jsonl is one task: ``task`` (the scene file's path as given, or under a folder
given), ``index`` (its place in the sorted list of every task of the command, which sets its seed:
``simdplan.planner.task_seed(seed, index)``), ``file`` (the scene file's resolved absolute path),
``sha256`` (of its bytes when planned; files it refers to, meshes or clouds, are not hashed),
``loaded`` (false: the file did not load, ``error`` says why), ``run`` (the flags that set the
results: planner, seed, time_limit, max_iterations, simplify, link; null where the scenes' own
apply), then ``PlanResult.to_dict()``: success, planner, message, error (the exception's name when
the task could not be planned, e.g. a scene file that does not load), joint_names, path, stats
(seed, iterations, times in ns, ...).

``--resume`` knows a task by its resolved file and content: a folder given relative then absolute
plans nothing twice, while a file that did not load, or that changed since it was planned, is
planned again and its old line removed, so OUT keeps one line per task. A resume with other
``run`` flags is refused: it would mix two runs in one file.
"""

from __future__ import annotations

import hashlib
import json
import os
import time

import numpy as np
import yaml

from simdplan.cli.inputs import apply_overrides, plan_many_for, resolve_scene
from simdplan.cli.output import UserError, check_output, print_summary
from simdplan._format import fmt_num

SCENE_EXTENSIONS = (".yaml", ".yml", ".json")
# the settings flags whose values a line's "run" records: the flags that change a task's result
RUN_FLAGS = {"planner": "--planner", "seed": "--seed", "time_limit": "--time-limit",
             "max_iterations": "--max-iterations", "simplify": "--no-simplify", "link": "--link"}
# the keys --resume reads from every line
RESUME_KEYS = ("task", "file", "sha256", "loaded", "run")


def scene_files(args: list[str]) -> list[str]:
    """The tasks' scene files: each file (or shipped example name) as given, and every scene file
    under each folder (recursively, sorted); a file reached twice (e.g. by a relative and an
    absolute path) once, as first given."""
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
    first: dict = {}
    for p in out:
        first.setdefault(os.path.realpath(p), os.path.normpath(p))
    return list(first.values())


def file_key(path: str) -> tuple[str, str | None]:
    """(resolved path, sha256 of the bytes or None if unreadable): what identifies a task."""
    real = os.path.realpath(path)
    try:
        with open(real, "rb") as f:
            return real, hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return real, None


def read_results(path: str) -> list[dict]:
    """What --resume needs of each line OUT holds (RESUME_KEYS, and ``end``: the byte offset after
    the line). A last line cut short (the run was killed while writing it) is removed, so appending
    starts on a fresh line."""
    if not os.path.exists(path):
        return []
    records, keep = [], 0
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            if not raw.endswith(b"\n"):
                break  # cut short: dropped below
            try:
                line = json.loads(raw)
            except ValueError as exc:
                raise UserError(f"{path}:{n}: not a line of simdplan batch results ({exc})") from None
            if not isinstance(line, dict) or "task" not in line:
                raise UserError(f"{path}:{n}: not a line of simdplan batch results (no task)")
            missing = [k for k in RESUME_KEYS if k not in line]
            if missing:
                raise UserError(f"{path}:{n}: a line without {', '.join(missing)} (written by an earlier simdplan "
                                "batch): its tasks cannot be matched nor its settings checked; plan into a new file")
            keep += len(raw)
            records.append({**{k: line[k] for k in RESUME_KEYS}, "end": keep})
    if keep != os.path.getsize(path):
        with open(path, "r+b") as f:
            f.truncate(keep)
    return records


def check_same_run(path: str, records: list[dict], run: dict) -> None:
    """UserError unless every line of OUT was planned with the flags ``run`` (the RUN_FLAGS given)."""
    for r in records:
        if r["run"] != run:
            old = r["run"] if isinstance(r["run"], dict) else {}
            differ = [f"{RUN_FLAGS[k]} {_flag_value(k, old.get(k))} there, {_flag_value(k, v)} now"
                      for k, v in run.items() if old.get(k) != v]
            raise UserError(f"--out {path}: holds results planned with other settings ({'; '.join(differ)}); "
                            "resume with the same flags, or plan into another file")


def _flag_value(key: str, value) -> str:
    if value is None:
        return "not given"
    return "given" if key == "simplify" else str(value)


def drop_lines(path: str, records: list[dict], drop: set[int]) -> None:
    """Rewrites OUT without its lines numbered ``drop`` (0-based), atomically: a run killed meanwhile
    leaves OUT as it was or as rewritten."""
    tmp = path + ".tmp"
    with open(path, "rb") as src, open(tmp, "wb") as dst:
        start = 0
        for n, r in enumerate(records):
            raw = src.read(r["end"] - start)
            start = r["end"]
            if n not in drop:
                dst.write(raw)
    os.replace(tmp, path)


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
    # the flags as JSON reads them back, so that a line's "run" compares equal
    run = json.loads(json.dumps({k: overrides[k] for k in RUN_FLAGS}))
    records = read_results(args.out)
    if records and not args.resume:
        raise UserError(f"--out {args.out}: already holds {len(records)} results; add --resume to plan only the "
                        "tasks it lacks, or choose another file")
    check_same_run(args.out, records, run)
    keys = [file_key(f) for f in files]
    done = {(r["file"], r["sha256"]) for r in records if r["loaded"]}
    pending = [(i, f) for i, f in enumerate(files) if keys[i] not in done]
    # a task planned again (its file did not load, or changed) replaces its old line
    again = {keys[i][0] for i, _ in pending}
    stale = {n for n, r in enumerate(records) if r["file"] in again}
    retried = len({records[n]["file"] for n in stale})
    if stale:
        drop_lines(args.out, records, stale)
    t0 = time.perf_counter()
    counts = {"solved": 0, "failed": 0, "error": 0}
    with open(args.out, "a", encoding="utf-8") as out:

        def write(task: str, index: int, result, loaded: bool = True) -> None:
            counts["error" if result.error else "solved" if result.success else "failed"] += 1
            real, sha256 = keys[index]
            line = json.dumps({"task": task, "index": index, "file": real, "sha256": sha256, "loaded": loaded,
                               "run": run, **result.to_dict()}, separators=(",", ":"))
            out.write(line + "\n")
            out.flush()  # on disk (the OS's) as soon as it finished: a killed run keeps it

        tasks, numbers, names = [], [], []
        robots: dict = {}  # scenes naming the same robot share it (built once, compiled once)
        for i, f in pending:
            try:
                tasks.append(scenes.load(f, robots=robots))
            except (OSError, ValueError, KeyError, TypeError, yaml.YAMLError) as exc:
                write(f, i, _load_error(exc, f), loaded=False)
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
                  f"{len(pending)} planned now" + (f" ({retried} again: their file did not load or changed)"
                                                   if stale else "")),
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
