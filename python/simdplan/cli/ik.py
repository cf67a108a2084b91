"""``simdplan ik``: joint configurations that put a robot's link at a pose (Robot.ik), printed.

SCENE_OR_ROBOT is a scene file or shipped example (its robot, and its obstacles: solutions avoid
them), a benchmark robot name (panda, ur5, iiwa, mobile_manipulator, dual_arm) or a URDF file.
"""

from __future__ import annotations

import json

import numpy as np

from simdplan.cli.inputs import load_scene, resolve_scene, robot_from_arg
from simdplan.cli.output import UserError, err, print_summary
from simdplan.robots.ik import MASK_NAMES

# --mask's words: "pose" for Robot.ik's mask None, then its masks by name
MASKS = ("pose",) + MASK_NAMES


def _robot_and_env(arg: str, srdf: str | None):
    """(robot, env or None, what it is) for SCENE_OR_ROBOT."""
    from simdplan.bench import robots as bench_robots

    if arg in bench_robots.NAMES or arg.lower().endswith(".urdf"):
        robot, _ = robot_from_arg(arg, srdf, "SCENE_OR_ROBOT")
        return robot, None, f"robot {robot.name}"
    path = resolve_scene(arg)
    scene = load_scene(path)
    return scene.robot, scene.env, f"scene {path} ({scene.env!r})"


def cmd_ik(args) -> int:
    robot, env, what = _robot_and_env(args.scene, args.srdf)
    x, y, z, qx, qy, qz, qw = args.pose
    mask = None if args.mask == "pose" else args.mask
    try:
        res = robot.ik(([x, y, z], [qx, qy, qz, qw]), args.link, env, n_solutions=args.solutions, seed=args.seed,
                       mask=mask, time_limit=args.time_limit, position_tolerance=args.position_tolerance,
                       orientation_tolerance=args.orientation_tolerance)
    except ValueError as exc:
        raise UserError(str(exc)) from exc
    if args.json:
        print(json.dumps({"joint_names": robot.joint_names, "link": res.link, "success": bool(res.success),
                          "solutions": res.solutions.tolist(), "errors": res.errors.tolist(),
                          "time_ns": int(res.time_ns), "attempts": res.attempts, "colliding": res.colliding}))
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
        err(f"no solution for this pose{' (the time limit passed)' if res.stopped else ''}: out of reach, or every "
            "solution found collides")
        return 1
    return 0
