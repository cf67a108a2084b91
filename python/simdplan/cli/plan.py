"""``simdplan plan``: plan one scene, re-check the path (simdplan.check_path; with --verify-meshes
also simdplan.verify_path), print a summary, write the result."""

from __future__ import annotations

import os
import time

import numpy as np

from simdplan.bench.records import VERIFY_FACTOR, call_plan, planned_ends, resolution_of
from simdplan.cli.inputs import apply_overrides, load_scene, resolve_scene
from simdplan._format import fmt_num, fmt_time_ns, seconds
from simdplan.cli.output import UserError, check_output, err, print_summary
from simdplan.path_check import check_path


def _check_out(out: str | None) -> None:
    if out is not None:
        check_output("--out", out, (".json", ".csv"))


# the flags that only --timed reads, by their destination on args
TIMING_FLAGS = {"velocity_scale": "--velocity-scale", "acceleration_scale": "--acceleration-scale",
                "max_deviation": "--max-deviation", "jerk_limit": "--jerk-limit"}


def _check_timing_flags(args) -> None:
    """A timing flag without --timed would be ignored: a UserError says so (before planning)."""
    given = [flag for dest, flag in TIMING_FLAGS.items() if getattr(args, dest, None) is not None]
    if given and not getattr(args, "timed", False):
        raise UserError(f"{', '.join(given)}: read only with --timed (add --timed to time the path, or leave "
                        f"{'it' if len(given) == 1 else 'them'} out)")


def _timed(args, result, scene):
    """The trajectory --timed asks for (PlanResult.trajectory with the scene's timing section, the
    flags overriding it), or a UserError saying why not."""
    flags = {"velocity_scale": args.velocity_scale, "acceleration_scale": args.acceleration_scale,
             "max_deviation": args.max_deviation, "jerk_limits": args.jerk_limit}
    opts = {**getattr(scene, "timing", {}), **{k: v for k, v in flags.items() if v is not None}}
    try:
        return result.trajectory(**opts)
    except (ImportError, ValueError) as exc:
        raise UserError(f"--timed: {exc}") from exc


def _trajectory_row(timed) -> str:
    st = timed.stats
    if st["method"] == "ruckig":
        how = f"Ruckig, jerk-limited, at rest at all {st['corners']} corners"
    else:
        how = (f"TOPP-RA, {st['blended']} of {st['corners']} corners blended within {st['max_deviation']:g}"
               + (f", {st['reduced']} blends cut to stay collision-free" if st["reduced"] else "")
               + (f", at rest at {st['stopped']}" if st["stopped"] else ""))
    return (f"{timed.duration:.3f} s ({how}); the executed curve checked with {st['link']} Link; "
            f"timed in {fmt_time_ns(st['parameterize_time_ns'])}, checked in {fmt_time_ns(st['check_time_ns'])}")


def cmd_plan(args) -> int:
    import simdplan

    _check_timing_flags(args)
    path = resolve_scene(args.scene)
    _check_out(args.out)
    scene = load_scene(path)
    mesh_urdf = _mesh_check_setup(scene) if getattr(args, "verify_meshes", False) else None
    settings, checked = apply_overrides(getattr(scene, "settings", None), {
        "planner": args.planner, "seed": args.seed, "time_limit": args.time_limit,
        "max_iterations": args.max_iterations, "simplify": False if args.no_simplify else None,
        "link": args.link})

    from simdplan.planner import InvalidProblemError as invalid  # noqa: PLC0415
    t0 = time.perf_counter()
    try:
        result = call_plan(scene, settings)
    except invalid as exc:
        raise UserError(f"{path}: {exc}") from exc
    except ValueError as exc:  # the planner's own input validation
        raise UserError(f"{path}: {exc}") from exc
    wall = time.perf_counter() - t0

    res = resolution_of(scene.robot, checked)
    stats = dict(result.stats)
    verified = None
    if result.success:
        # a pose scene's goals are the IK solutions the plan went to
        targets = result.stats["goal_configurations"] if getattr(scene, "goal_poses", None) else scene.goals
        start, goals = planned_ends(scene.robot, scene.start, targets, checked)
        verified = check_path(scene.robot, scene.env, result.path, start, goals, res, VERIFY_FACTOR,
                              checked.padding, checked.link == "certified", checked.min_step)
    meshes = None
    if mesh_urdf is not None and result.success:
        meshes = _mesh_check(scene, result.path, checked.padding, mesh_urdf)
    info = simdplan.info()
    name = getattr(scene, "name", None) or os.path.splitext(os.path.basename(path))[0]
    # OMPL planners stop on time only and count no iterations; they report OMPL's status instead
    ompl = checked.planner.startswith("ompl:")
    budget = (f"time limit {seconds(checked.time_limit) if checked.time_limit else 'none'}"
              + ("" if ompl else f", max {checked.max_iterations:,} iterations"))
    rows = [
        ("scene", f"{name} ({path})"),
        ("robot", f"{scene.robot.name}, {scene.robot.dof} dof; start + " + (
            f"{len(scene.goals)} goal(s)" if not getattr(scene, "goal_poses", None) else
            f"{len(scene.goal_poses)} goal pose(s) of {scene.goal_link or 'the default link'}")),
        ("planner", f"{checked.planner}, seed {checked.seed}, {budget}, "
                    f"simplify {'on' if checked.simplify else 'off'}, {checked.link} Link"),
        ("success", "yes" if result.success else "no"),
        ("planning time", f"{fmt_time_ns(stats.get('planning_time_ns'))} "
                          + (f"(OMPL status: {stats.get('ompl_status', '-')})" if ompl else
                             f"({fmt_num(stats.get('iterations'))} iterations)")),
        ("simplification time", "off" if not checked.simplify else
         fmt_time_ns(stats.get("simplify_time_ns")) if result.success else "-"),
        ("wall time of the call", fmt_time_ns(wall * 1e9)),
        ("collision checks", fmt_num(stats.get("collision_checks"))),
    ]
    if checked.link == "certified":
        rows.append(("certificates", f"{fmt_num(stats.get('edges_proven'))} edges proven collision-free "
                                     f"({fmt_num(stats.get('certificate_samples'))} clearance samples); "
                                     f"{fmt_num(stats.get('edges_undecided'))} refused as undecided"))
    if ompl:
        rows.append(("OMPL checks", f"{fmt_num(stats.get('state_checks'))} states, "
                                    f"{fmt_num(stats.get('motion_checks'))} motions"))
    if stats.get("limit_clamped"):
        rows.append(("joint limits", result.message))
    if result.success and stats.get("stopped") == "time_limit":
        rows.append(("time limit", "reached after planning: the path is simplified only in part"))
    from simdplan.planner.plan import INTERPOLATION_NOTES

    refused = [text for text in INTERPOLATION_NOTES.values() if text in result.message]
    if refused:
        rows.append(("interpolation", refused[0]))
    if "ik_time_ns" in stats:
        n = stats.get("ik_solutions", 0)
        rows.append(("goal poses", f"{n} IK solution{'' if n == 1 else 's'} in {fmt_time_ns(stats['ik_time_ns'])}"
                                   + (f"; reached pose {stats['goal_pose_index']}" if result.success else "")))
    if result.success:
        rows += [
            ("path length", f"{fmt_num(stats.get('initial_cost'), 3)} before simplification, "
                            f"{fmt_num(stats.get('final_cost', result.cost), 3)} after (joint-space)"),
            ("waypoints", str(len(result.path))),
            ("verified", (f"yes (every edge at {VERIFY_FACTOR * res:g} samples/unit, {VERIFY_FACTOR}x the planning "
                          f"resolution{', and certified again' if checked.link == 'certified' else ''})"
                          if verified.ok else
                          f"NO ({VERIFY_FACTOR}x the planning resolution): {verified.reason}")),
        ]
        if meshes is not None:
            rows.append(("mesh check", _mesh_row(meshes)))
    timed = _timed(args, result, scene) if result.success and getattr(args, "timed", False) else None
    if timed is not None:
        rows.append(("trajectory", _trajectory_row(timed)))
    rows.append(("ISA", f"{info['isa']} ({info['lanes']} float lanes)"))

    if result.success and args.out:
        try:
            if timed is not None and args.out.lower().endswith(".csv"):
                timed.save(args.out)
            else:
                result.save(args.out)
        except (OSError, ValueError) as exc:
            raise UserError(f"--out {args.out}: {getattr(exc, 'strerror', None) or exc}") from exc
        rows.append(("written", args.out))
    print_summary("simdplan plan", rows)

    if verified is not None and not verified.ok:
        err(f"warning: the returned path failed the independent check: {verified.reason}")
    if meshes is not None and not meshes.valid:
        err(f"the returned path collides with the robot's collision meshes: {meshes.first_collision}")
        return 3
    if not result.success and stats.get("unprovable"):  # refused before planning, with the reason
        err(f"no path planned: {result.message}" + ("; nothing written" if args.out else ""))
        return 1
    if not result.success and ompl:
        err(f"no path found within {seconds(checked.time_limit)} ({checked.planner}, seed {checked.seed}: "
             f"OMPL status {stats.get('ompl_status', '-')})" + ("; nothing written" if args.out else ""))
        return 1
    if not result.success:
        limit = []
        if checked.time_limit:
            limit.append(seconds(checked.time_limit))
        limit.append(f"{checked.max_iterations:,} iterations")
        iters = int(stats.get("iterations", 0))
        hit = ("the iteration limit" if iters >= checked.max_iterations else
               "the time limit" if checked.time_limit else "the planner's end")
        message = getattr(result, "message", "") or ""
        detail = f"; {message}" if message and not message.startswith("no path found") else ""
        err(f"no path found within {' / '.join(limit)} ({checked.planner}, seed {checked.seed}: stopped at {hit} "
             f"after {iters:,} iterations{detail})" + ("; nothing written" if args.out else ""))
        return 1
    return 0


def _mesh_check_setup(scene) -> str:
    """plan --verify-meshes, before planning: coal is importable and the robot's mesh URDF is known
    (a built-in robot, or a scene robot given by a URDF with mesh or primitive collision geometry)."""
    from simdplan.planner import verify  # noqa: PLC0415

    try:
        verify.import_coal()
    except ImportError as exc:
        raise UserError(f"--verify-meshes: {exc}") from exc
    spec = getattr(scene, "robot_spec", None)
    candidates = []
    if isinstance(spec, dict) and isinstance(spec.get("urdf"), str):
        urdf = spec["urdf"]
        base = os.path.dirname(scene.path) if getattr(scene, "path", None) else os.getcwd()
        candidates.append(urdf if os.path.isabs(urdf) else os.path.normpath(os.path.join(base, urdf)))
    for urdf in candidates:
        if os.path.isfile(urdf) and verify.has_collision_geometry(urdf):
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
