"""The ``simdplan`` command: plan a scene, benchmark MotionBenchMaker problems, show the build.

    simdplan plan SCENE [--planner rrtc|rrt|prm] [--seed N] [--time-limit S] [--max-iterations N]
                        [--no-simplify] [--link certified|discrete] [--out PATH.json|PATH.csv] [--verify-meshes]
                        [--timed [--velocity-scale F] [--acceleration-scale F] [--max-deviation D] [--jerk-limit J]]
    simdplan batch SCENES_OR_DIR... --out OUT.jsonl [--resume] [--workers N] [--ray ADDRESS] [settings flags as plan]
    simdplan generate --robot NAME|URDF --out DIR [--families ...] [--problems N] [--planners rrtc,rrt] [--seed N]
    simdplan bench mbm [--robot panda] [--problems CLASS,...] [--planner rrtc]
                       [--mode reference|exact] [--time-limit S] [--seed N] [--limit N] [--json OUT]
                       [--pointcloud [N]] [--link certified|discrete|both] [--vamp auto|on|off]
                       [--vamp-sampler halton|uniform]
    simdplan bench robots [--robots NAME,...] [--families NAME,...] [--problems N] [--seed N] [--time-limit S]
                          [--pointcloud [N]] [--link certified|discrete|both] [--vamp auto|on|off] [--json OUT]
    simdplan ik SCENE_OR_ROBOT --pose X Y Z QX QY QZ QW [--link L] [--mask pose|position|free_x|free_y|free_z]
                [--solutions N] [--seed N] [--time-limit S] [--max-attempts K] [--position-tolerance M]
                [--orientation-tolerance RAD] [--srdf SRDF] [--json]
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

Every path a plan returns is re-checked independently (simdplan.check_path: ``robot.is_motion_valid``
at 10x the planning resolution between consecutive waypoints, every waypoint on its own): "verified". With ``--verify-meshes`` it is
also checked against the robot's collision meshes (convex hulls, coal; simdplan.verify_path) at
its default step, with the scene's padding ("mesh check").

One module per command: plan, ik, batch, generate, bench (the flags and report of simdplan.bench's harnesses), view,
spherize, info; inputs (SCENE and settings flags) and output (UserError, tables) are shared. This
module builds the parser and runs the command.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

from simdplan.bench.vamp_baseline import SAMPLERS
from simdplan.cli.batch import cmd_batch
from simdplan.cli.bench import cmd_bench_mbm, cmd_bench_robots
from simdplan.cli.generate import cmd_generate
from simdplan.cli.ik import MASKS, cmd_ik
from simdplan.cli.info import cmd_info
from simdplan.cli.kernels import cmd_cache, cmd_compile
from simdplan.cli.output import UserError, err, one_line
from simdplan.cli.plan import cmd_plan
from simdplan.cli.spherize import cmd_spherize
from simdplan.cli.view import cmd_view
from simdplan.robots.ik import DEFAULT_MAX_ATTEMPTS, ORIENTATION_TOLERANCE, POSITION_TOLERANCE

# both bench commands offer VAMP's samplers (vamp_baseline.SAMPLERS; the first is the default)
VAMP_SAMPLER_HELP = ("VAMP's sampler: halton (default; its MotionBenchMaker script's, restarted for every problem) or "
                     "uniform (its pseudo-random generator, the kind simdplan samples with)")

__all__ = ["main", "build_parser", "UserError"]


# ----------------------------------------------------------------------------- parser
def _planner_name(text: str) -> str:
    from simdplan.planner.settings import PLANNERS

    if text in PLANNERS or (text.startswith("ompl:") and len(text) > 5):
        return text
    raise argparse.ArgumentTypeError(f"invalid choice {text!r} (choose from {', '.join(PLANNERS)}, or ompl:NAME)")


def _add_cloud_flags(parser) -> None:
    """--pointcloud, --filter and --point-radius, as ``bench mbm`` and ``bench robots`` take them
    (checked by cli.bench._cloud_setting)."""
    parser.add_argument("--pointcloud", type=int, metavar="N", nargs="?", const=10_000,
                        help="replace each problem's obstacles by N points sampled on their surfaces (default 10000 "
                             "per obstacle), filtered (--filter), checked through a CAPT; VAMP, where it runs, plans "
                             "against the same points")
    parser.add_argument("--filter", type=float, default=0.02, metavar="M",
                        help="with --pointcloud: thin the cloud so no two points are closer than M metres "
                             "(default 0.02)")
    parser.add_argument("--point-radius", type=float, default=0.0025, metavar="M",
                        help="with --pointcloud: radius of every point (default 0.0025, MotionBenchMaker's "
                             "reference setting's)")


def _add_link_flag(parser) -> None:
    """--link for the commands that plan scenes (plan, batch); --certified, its old spelling, kept hidden."""
    from simdplan.planner.settings import LINKS

    parser.add_argument("--link", choices=LINKS, help="edge checks: certified (the default: every edge proven "
                        "collision-free between its ends) or discrete (faster, checked only at samples: a thin "
                        "obstacle can be stepped over); default the scene's")
    parser.add_argument("--certified", action="store_const", const="certified", dest="link", help=argparse.SUPPRESS)


def build_parser() -> argparse.ArgumentParser:
    from simdplan.planner.settings import LINKS, PLANNERS

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
    _add_link_flag(p)
    p.add_argument("--verify-meshes", action="store_true",
                   help="re-check the path against the robot's collision meshes (convex hulls, needs coal: "
                        "pip install simdplan[verify]); exit code 3 if it collides")
    p.add_argument("--timed", action="store_true",
                   help="also time the path within the robot's joint limits (TOPP-RA, corners blended; needs "
                        "pip install simdplan[timing]); with --out, .csv writes the trajectory (t, q, qd, qdd)")
    p.add_argument("--velocity-scale", type=float, metavar="F", help="with --timed: fraction (0, 1] of the "
                   "velocity limits (default 1)")
    p.add_argument("--acceleration-scale", type=float, metavar="F", help="with --timed: fraction (0, 1] of the "
                   "acceleration limits (default 1)")
    p.add_argument("--max-deviation", type=float, metavar="D", help="with --timed: joint-space distance (rad, m) a "
                   "blended corner may pass from its waypoint (0: stop at every corner; default 0.05)")
    p.add_argument("--jerk-limit", type=float, metavar="J", help="with --timed: every joint's jerk limit (per s^3); "
                   "moves rest to rest along each edge with Ruckig (no blending)")
    p.set_defaults(func=cmd_plan)

    k = sub.add_parser("ik", parents=[debug],
                       help="joint configurations that put a link at a pose (inverse kinematics)",
                       description="Solve inverse kinematics for a pose of a robot's link (Robot.ik), collision-free "
                                   "in the scene's obstacles when a scene is given, and print the solutions.")
    k.add_argument("scene", metavar="SCENE_OR_ROBOT",
                   help="scene file or shipped example (its robot and obstacles), robot name or URDF file")
    k.add_argument("--pose", nargs=7, type=float, required=True, metavar=("X", "Y", "Z", "QX", "QY", "QZ", "QW"),
                   help="world position (m) and unit quaternion [x, y, z, w]")
    k.add_argument("--link", help="link to place (default: the child of the robot's last moving joint)")
    k.add_argument("--mask", choices=MASKS, default="pose",
                   help="pose (default), position (orientation free), free_x|free_y|free_z (rotation about that "
                        "axis free)")
    k.add_argument("--solutions", type=int, default=1, metavar="N", help="distinct solutions wanted (default 1)")
    k.add_argument("--seed", type=int, default=0, help="random seed of the restarts (default 0)")
    k.add_argument("--time-limit", type=float, metavar="S",
                   help="restart until N solutions are found or S seconds have passed (default or 0: no time "
                        "limit, --max-attempts restarts at most)")
    k.add_argument("--max-attempts", type=int, metavar="K",
                   help=f"restarts at most (default {DEFAULT_MAX_ATTEMPTS} without --time-limit, none with it)")
    k.add_argument("--position-tolerance", type=float, default=POSITION_TOLERANCE, metavar="M",
                   help=f"metres (default {POSITION_TOLERANCE:g})")
    k.add_argument("--orientation-tolerance", type=float, default=ORIENTATION_TOLERANCE, metavar="RAD",
                   help=f"radians (default {ORIENTATION_TOLERANCE:g})")
    k.add_argument("--srdf", metavar="SRDF", help="with a URDF: its SRDF (disabled self-collision pairs)")
    k.add_argument("--json", action="store_true", help="print the result as one JSON object")
    k.set_defaults(func=cmd_ik)

    t = sub.add_parser("batch", parents=[debug], help="plan many scene files on every core, results to a JSONL file",
                       description="Plan every scene file given (folders: every scene file under them) on every "
                                   "core; each result is appended to OUT.jsonl as it finishes. Flags override each "
                                   "scene's planner settings.")
    t.add_argument("scenes", nargs="+", metavar="SCENES_OR_DIR", help="scene files, shipped example names or folders")
    t.add_argument("--out", required=True, metavar="OUT.jsonl", help="results, one JSON line per task (appended)")
    t.add_argument("--resume", action="store_true", help="plan only the tasks OUT does not hold yet")
    t.add_argument("--workers", type=int, metavar="N",
                   help="threads (default: every core; with --ray: threads per Ray task, default a node's CPUs)")
    t.add_argument("--ray", metavar="ADDRESS",
                   help="plan on a Ray cluster (pip install \".[ray]\"): auto (a running cluster), ray://HOST:PORT, "
                        "or local (start one here)")
    t.add_argument("--planner", choices=PLANNERS, help="override the scenes' planner")
    t.add_argument("--seed", type=int, help="random seed of the run (task i plans with task_seed(seed, i))")
    t.add_argument("--time-limit", type=float, metavar="S", help="per-task time budget in seconds (0: none)")
    t.add_argument("--max-iterations", type=int, metavar="N", help="per-task planner iterations at most")
    t.add_argument("--no-simplify", action="store_true", help="return the planners' paths as found")
    _add_link_flag(t)
    t.set_defaults(func=cmd_batch)

    g = sub.add_parser("generate", parents=[debug], help="a dataset of plans on generated problems (JSONL parts)",
                       description="Generate problems for a robot (simdplan.scenes.generate), plan each with every "
                                   "planner given on every core, and write the plans with their scenes and seeds "
                                   "to OUT/part-*.jsonl, described by OUT/dataset.json.")
    g.add_argument("--robot", required=True, metavar="NAME|URDF",
                   help="panda, ur5, iiwa, mobile_manipulator, dual_arm, or a URDF file (with --srdf)")
    g.add_argument("--srdf", metavar="SRDF", help="the URDF's SRDF (disabled self-collision pairs)")
    g.add_argument("--families", default="table,shelf,cage,box", metavar="NAME,...",
                   help="problem families (default table,shelf,cage,box)")
    g.add_argument("--problems", type=int, default=10, metavar="N", help="problems per family (default 10)")
    g.add_argument("--planners", default="rrtc", metavar="NAME,...", help="planners, each plans every problem")
    g.add_argument("--seed", type=int, default=0, help="seed of the problems and of the plans (default 0)")
    g.add_argument("--time-limit", type=float, metavar="S", help="per-plan time budget in seconds (0: none)")
    g.add_argument("--max-iterations", type=int, metavar="N", help="per-plan planner iterations at most")
    g.add_argument("--out", required=True, metavar="DIR", help="the dataset folder (created)")
    g.add_argument("--part-size", type=int, default=1000, metavar="N", help="tasks per part file (default 1000)")
    g.add_argument("--resume", action="store_true", help="finish a dataset a killed run left (same command)")
    g.add_argument("--workers", type=int, metavar="N", help="threads (default: every core)")
    g.add_argument("--ray", metavar="ADDRESS", help="plan on a Ray cluster: auto, ray://HOST:PORT or local")
    g.set_defaults(func=cmd_generate)

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
    m.add_argument("--obstacles", choices=("primitives", "meshes", "hulls"), default="primitives",
                   help="each problem's obstacles as given (default), as triangle meshes or as convex hulls of "
                        "their triangulations (cylinders as 32-sided prisms; simdplan.scenes.mbm.as_shapes)")
    _add_cloud_flags(m)
    m.add_argument("--vamp", choices=("auto", "on", "off"), default="auto",
                   help="also plan every problem with VAMP's RRT-Connect, side by side in the same run: auto "
                        "(default: when VAMP is installed and the run is comparable), on (an error if it "
                        "cannot), off")
    m.add_argument("--vamp-sampler", choices=SAMPLERS, default=SAMPLERS[0], help=VAMP_SAMPLER_HELP)
    m.add_argument("--link", choices=(*LINKS, "both"), default=None,
                   help="edge checks: certified from clearances (the default), discrete samples, or both on "
                        "every problem, side by side")
    m.add_argument("--workers", type=int, metavar="N",
                   help="plan the problems at once on N threads (simdplan.plan_many; default: one by one, each with "
                        "the same seed); VAMP then runs one by one")
    m.add_argument("--kernel", choices=("generic", "specialized"), default=None,
                   help="the robot's kernels: specialized (built before the first problem, or taken from the "
                        "cache), generic; default: specialized where it can be built (and SIMDPLAN_JIT is not off), "
                        "else generic")
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
    r.add_argument("--link", choices=(*LINKS, "both"), default=None,
                   help="edge checks (default: each robot's default); both: every problem with each, compared")
    r.add_argument("--kernel", choices=("generic", "specialized", "both"), default=None,
                   help="the robots' kernels: specialized (built per robot before its first problem, or taken from "
                        "the cache), generic, or both (every problem with each, compared); default: specialized "
                        "where it can be built (and SIMDPLAN_JIT is not off), else generic")
    _add_cloud_flags(r)
    r.add_argument("--vamp", choices=("auto", "on", "off"), default="auto",
                   help="VAMP side by side where it is installed and has the robot (panda, ur5): auto (default), "
                        "on (an error if it cannot), off")
    r.add_argument("--vamp-sampler", choices=SAMPLERS, default=SAMPLERS[0], help=VAMP_SAMPLER_HELP)
    r.add_argument("--json", metavar="OUT", help="write every per-problem record and the summary")
    r.set_defaults(func=cmd_bench_robots)
    b.set_defaults(func=None, help_parser=b)

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

    c = sub.add_parser("compile", parents=[debug], help="build a robot's specialized kernel ahead (for containers, "
                                                       "clusters, benchmarks)",
                       description="Generate, compile and cache the kernel specialized for ROBOT on this machine's ISA "
                                   "(simdplan.specialize), or find it cached. Exit 0 when the robot runs it, 1 when it "
                                   "stays on the generic kernels (the reason is printed).")
    c.add_argument("robot", metavar="ROBOT", help="a benchmark robot name (panda, ur5, iiwa, mobile_manipulator, "
                                                  "dual_arm) or a URDF file")
    c.add_argument("--srdf", metavar="FILE", help="SRDF of a URDF robot (disabled collision pairs)")
    c.add_argument("--json", action="store_true", help="print kernel_info as JSON")
    c.set_defaults(func=cmd_compile)

    ca = sub.add_parser("cache", parents=[debug], help="list or clear the specialized kernels cached for this user")
    ca.add_argument("action", choices=["list", "clear"])
    ca.add_argument("--json", action="store_true", help="list as JSON")
    ca.set_defaults(func=cmd_cache)

    i = sub.add_parser("info", parents=[debug], help="the SIMD level in use and the build (simdplan.info())")
    i.add_argument("--json", action="store_true", help="print as JSON")
    i.set_defaults(func=cmd_info)
    ap.set_defaults(func=None, help_parser=ap)
    return ap


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``simdplan`` command (and ``python -m simdplan``); returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error argparse already reported
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 2)
    args.command_argv = None if argv is None else list(argv)
    if args.func is None:
        args.help_parser.print_help(sys.stderr)
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
    err(f"warning{kind}: {one_line(message)}")


def _run(args, debug: bool) -> int:
    try:
        return int(args.func(args) or 0)
    except UserError as exc:
        if debug:
            raise
        err(exc.message)
        return exc.code
    except KeyboardInterrupt:
        if debug:
            raise
        err("interrupted")
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
