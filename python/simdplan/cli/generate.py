"""``simdplan generate``: a dataset of plans for learning or benchmarking: generated problems
(simdplan.scenes.generate) x planners, planned on every core (or a Ray cluster), written in parts.

The dataset is a folder:

- ``dataset.json``: ``format`` ("simdplan-dataset/1"), ``command`` (the argument list that made
  it: the same command makes the same dataset, except plans cut short by a time limit), the
  simdplan version and SIMD level, the robot, families, problems per family, planners, seed, the
  number of tasks, ``part_size``, ``parts`` (the part files, in task order; updated as parts land)
  and, once resumed, ``resumed`` (each resume's command, time and simdplan).
- ``part-00000.jsonl``, ...: one JSON line per task (problem x planner), ``part_size`` tasks per
  part in task order: ``task`` (its number; task = problem * len(planners) + planner),
  ``problem`` (e.g. "shelf_3"), ``family``, ``planner``, ``seed`` (the seed the plan used:
  task_seed(seed, task)), ``success``, ``message``, ``error``, ``path`` (waypoints, radians or
  metres per joint), ``stats`` (iterations, times in ns, costs, ...) and ``scene`` (the problem in
  the scene file format: obstacles, start, goals; its ``robot`` is the dataset's robot entry).

A part is written whole (to a temporary name, then renamed), so a run killed halfway leaves only
complete parts; ``--resume`` plans the tasks of the missing parts, with the same seeds. It needs
the settings the manifest records (robot, families, problems, planners, seed, time limit,
iterations, part size: compared as parsed, however the flags were spelled); only --workers and
--ray may change.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time

from simdplan.cli.inputs import apply_overrides, plan_many_for, robot_from_arg
from simdplan.cli.output import UserError, print_summary

FORMAT = "simdplan-dataset/1"
MANIFEST = "dataset.json"


def _defining(manifest: dict) -> dict:
    """The flags that define a dataset, by the values its manifest records (JSON's, so that a
    manifest read back and one about to be written compare alike)."""
    settings = manifest.get("settings") or {}
    return json.loads(json.dumps({
        "--robot": manifest.get("robot"), "--families": ",".join(manifest.get("families") or []),
        "--problems": manifest.get("problems_per_family"), "--planners": ",".join(manifest.get("planners") or []),
        "--seed": manifest.get("seed"), "--time-limit": settings.get("time_limit"),
        "--max-iterations": settings.get("max_iterations"), "--part-size": manifest.get("part_size")}))


def _shown(value) -> str:
    if value is None:
        return "not given"
    if isinstance(value, dict):  # a URDF robot's entry
        return " --srdf ".join(value[k] for k in ("urdf", "srdf") if k in value)
    return str(value)


def cmd_generate(args) -> int:
    import simdplan
    from simdplan.scenes import FAMILIES, generate

    families = [f.strip() for f in args.families.split(",") if f.strip()]
    bad = [f for f in families if f not in FAMILIES]
    if bad or not families:
        raise UserError(f"--families: unknown family {', '.join(bad) or '(none given)'}; "
                        f"families: {', '.join(FAMILIES)}")
    planners = [p.strip() for p in args.planners.split(",") if p.strip()]
    for p in planners:
        apply_overrides(None, {"planner": p})
        if p.startswith("ompl:"):
            raise UserError("--planners: generate runs the C++ planners (rrtc, rrt, prm)")
    if args.problems < 1 or args.part_size < 1:
        raise UserError("--problems and --part-size must be >= 1")
    if args.workers is not None and args.workers < 1:
        raise UserError(f"--workers must be >= 1, got {args.workers}")
    overrides = {"time_limit": args.time_limit, "max_iterations": args.max_iterations}
    apply_overrides(None, overrides)
    given = {k: v for k, v in overrides.items() if v is not None}
    argv = list(args.command_argv) if args.command_argv is not None else sys.argv[1:]
    manifest_path = os.path.join(args.out, MANIFEST)
    old = None
    if os.path.exists(manifest_path):
        if not args.resume:
            raise UserError(f"--out {args.out}: already holds a dataset; add --resume to finish it, or choose "
                            "another folder")
        try:
            with open(manifest_path) as f:
                old = json.load(f)
        except (OSError, ValueError) as exc:
            raise UserError(f"--out {args.out}: cannot read its {MANIFEST} ({exc})") from exc
        if not isinstance(old, dict) or old.get("format") != FORMAT:
            raise UserError(f"--out {args.out}: its {MANIFEST} is not a {FORMAT} manifest")
    elif os.path.exists(args.out) and not os.path.isdir(args.out):
        raise UserError(f"--out {args.out}: is a file, not a folder")

    t0 = time.perf_counter()
    robot, robot_entry = robot_from_arg(args.robot, args.srdf)  # before the folder is made: a bad one leaves none
    manifest = {"format": FORMAT, "command": argv, "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "simdplan": simdplan.info(), "robot": robot_entry, "dof": robot.dof, "joint_names": robot.joint_names,
                "families": families, "problems_per_family": args.problems, "planners": planners, "seed": args.seed,
                "settings": given, "tasks": None, "part_size": args.part_size, "parts": []}
    if old is not None:
        before, now = _defining(old), _defining(manifest)
        differ = [f"{k} {_shown(before[k])} there, {_shown(v)} now" for k, v in now.items() if before[k] != v]
        if differ:
            raise UserError(f"--out {args.out}: its dataset was made with other settings ({'; '.join(differ)}); "
                            "--resume needs the same ones (only --workers and --ray may change)")
    problems = []
    for k, family in enumerate(families):
        try:
            made = generate(robot, family, args.problems, seed=args.seed + k, workers=args.workers)
        except ValueError as exc:
            raise UserError(f"--robot {args.robot}, family {family}: {exc}") from exc
        for scene in made:
            scene.robot_spec = robot_entry
            problems.append(scene)
    generated = time.perf_counter() - t0
    n_tasks = len(problems) * len(planners)
    parts = [f"part-{p:05d}.jsonl" for p in range((n_tasks + args.part_size - 1) // args.part_size)]
    if old is not None:  # the manifest keeps the command that made the dataset; a resume adds itself
        manifest = old
        manifest.setdefault("resumed", []).append({"command": argv, "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                                                   "simdplan": simdplan.info()})
    else:
        manifest["tasks"] = n_tasks
    os.makedirs(args.out, exist_ok=True)
    done_parts = [p for p in parts if os.path.exists(os.path.join(args.out, p))]
    _write_manifest(manifest_path, manifest, done_parts)

    todo = [t for p, name in enumerate(parts) if name not in done_parts
            for t in range(p * args.part_size, min((p + 1) * args.part_size, n_tasks))]
    tasks = []
    for t in todo:
        scene = problems[t // len(planners)]
        tasks.append(dataclasses.replace(scene, settings=dataclasses.replace(scene.settings,
                                                                             planner=planners[t % len(planners)])))
    waiting: dict = {}  # part -> {task: record}
    counts = {"solved": 0, "failed": 0, "error": 0}

    def landed(k: int, result) -> None:
        t = todo[k]
        scene = problems[t // len(planners)]
        counts["error" if result.error else "solved" if result.success else "failed"] += 1
        record = {"task": t, "problem": scene.name, "family": scene.problem, "planner": planners[t % len(planners)],
                  "seed": result.stats.get("seed"), **{k2: v for k2, v in result.to_dict().items()
                                                       if k2 not in ("planner", "joint_names")},
                  "scene": scene.to_dict()}
        p = t // args.part_size
        waiting.setdefault(p, {})[t] = record
        if len(waiting[p]) == min((p + 1) * args.part_size, n_tasks) - p * args.part_size:
            records = waiting.pop(p)
            _write_part(os.path.join(args.out, parts[p]), [records[i] for i in sorted(records)])
            done_parts.append(parts[p])
            _write_manifest(manifest_path, manifest, done_parts)

    plan_many_for(args, tasks, lambda: f"interrupted: {len(done_parts)} of {len(parts)} parts written to {args.out}; "
                                        "run the same command with --resume to finish",
                  indices=todo, on_result=landed, seed=args.seed, **given)
    wall = time.perf_counter() - t0
    print_summary("simdplan generate", [
        ("dataset", f"{args.out} ({len(parts)} parts of up to {args.part_size} tasks, {MANIFEST})"),
        ("problems", f"{len(problems)} ({', '.join(families)}; {args.problems} each) for {robot.name}, "
                     f"generated in {generated:.1f} s"),
        ("plans", f"{len(todo)} planned now ({n_tasks - len(todo)} already written): {counts['solved']} solved, "
                  f"{counts['failed']} not solved, {counts['error']} could not be planned"),
        ("wall time", f"{wall:.1f} s"),
    ])
    return 0


def _write_part(path: str, records: list[dict]) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r, separators=(",", ":")) + "\n")
    os.replace(tmp, path)


def _write_manifest(path: str, manifest: dict, done_parts: list[str]) -> None:
    manifest["parts"] = sorted(done_parts)
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(manifest, f, indent=1)
    os.replace(tmp, path)
