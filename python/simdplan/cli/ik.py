"""``simdplan ik``: joint configurations that put a robot's link at a pose (Robot.ik), printed.

SCENE_OR_ROBOT is a scene file or shipped example (its robot, and its obstacles: solutions avoid
them), a benchmark robot name (panda, ur5, iiwa, mobile_manipulator, dual_arm) or a URDF file.
"""

from __future__ import annotations

import json
import os

import numpy as np

from simdplan.cli.inputs import load_scene, resolve_scene, robot_from_arg
from simdplan.cli.output import UserError, err, print_summary
from simdplan.robots.ik import MASK_NAMES, MAX_ATTEMPTS
from simdplan.validation import as_int, as_number

# --mask's words: Robot.ik's masks by name ("pose": the whole pose, the default)
MASKS = MASK_NAMES


def _robot_and_env(arg: str, srdf: str | None):
    """(robot, env or None, what it is) for SCENE_OR_ROBOT."""
    from simdplan.bench import robots as bench_robots

    if arg in bench_robots.NAMES or arg.lower().endswith(".urdf"):
        robot, _ = robot_from_arg(arg, srdf, "SCENE_OR_ROBOT")  # checks --srdf too
        return robot, None, f"robot {robot.name}"
    if srdf is not None:
        if not os.path.isfile(srdf):
            raise UserError(f"--srdf {srdf}: no such file")
        raise UserError(f"--srdf goes with a URDF file; a scene names its robot's own ({arg})")
    try:
        path = resolve_scene(arg)
    except UserError as exc:
        # a mistyped robot name is as likely as a mistyped scene: list both
        raise UserError(f"{exc.message}; robots: {', '.join(bench_robots.NAMES)}, or a URDF file") from None
    scene = load_scene(path)
    return scene.robot, scene.env, f"scene {path} ({scene.env!r})"


def _checked_flags(args) -> dict:
    """Robot.ik's options from the flags, each checked under its flag's name (Robot.ik would name its
    keyword)."""
    return {"n_solutions": as_int(args.solutions, "--solutions", 1, 10_000),
            "seed": as_int(args.seed, "--seed", 0, 2**64 - 1),
            "time_limit": None if args.time_limit is None else as_number(args.time_limit, "--time-limit", 0.0,
                                                                         allow_zero=True),
            "max_attempts": None if args.max_attempts is None else as_int(args.max_attempts, "--max-attempts", 1,
                                                                           MAX_ATTEMPTS),
            "position_tolerance": as_number(args.position_tolerance, "--position-tolerance", 0.0, upper=10.0),
            "orientation_tolerance": as_number(args.orientation_tolerance, "--orientation-tolerance", 0.0,
                                               upper=np.pi)}


def cmd_ik(args) -> int:
    try:
        opts = _checked_flags(args)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    robot, env, what = _robot_and_env(args.scene, args.srdf)
    if args.link is None and len(robot.tip_links()) != 1:
        ends = robot.tip_links()
        raise UserError(f"robot {robot.name!r} has {len(ends)} ends ({', '.join(e[0] for e in ends)}, ...): "
                        "pass --link to say which to place")
    x, y, z, qx, qy, qz, qw = args.pose
    mask = None if args.mask == "pose" else args.mask
    try:
        res = robot.ik(([x, y, z], [qx, qy, qz, qw]), args.link, env, mask=mask, **opts)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    if args.json:
        print(json.dumps({"joint_names": robot.joint_names, "link": res.link, "success": bool(res.success),
                          "solutions": res.solutions.tolist(), "errors": res.errors.tolist(),
                          "time_ns": int(res.time_ns), "attempts": res.attempts, "colliding": res.colliding,
                          "stopped": res.stopped}))
    else:
        rows = [("robot", f"{robot.name}, {robot.dof} dof ({what})"), ("link", res.link),
                ("pose", f"position {[x, y, z]} m, quaternion [x, y, z, w] {[qx, qy, qz, qw]}"
                         + ("" if mask is None else f", mask {mask}")),
                ("solutions", f"{len(res.solutions)} of {args.solutions} asked, in {res.time_ns / 1e3:.1f} us "
                              f"({res.attempts} restarts, {res.colliding} converged in collision)")]
        for k, (q, (pe, ae)) in enumerate(zip(res.solutions, res.errors)):
            rows.append((f"solution {k}", f"[{', '.join(f'{v:.6f}' for v in q)}]  error {pe * 1e3:.3g} mm, "
                                          f"{np.degrees(ae):.3g} deg"))
        rows.append(("joints", ", ".join(robot.joint_names)))
        print_summary("simdplan ik", rows)
    if not res.success:
        why = {"time_limit": " (the time limit passed)", "attempts": f" in {res.attempts} restarts"}
        err(f"no solution for this pose{why.get(res.stopped, '')}: out of reach, or every solution found collides")
        return 1
    return 0
