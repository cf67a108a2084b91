"""``simdplan view``: a scene (and a path) in pybullet's window, or rendered to PNG/GIF off-screen."""

from __future__ import annotations

import csv
import json
import os
import time

import numpy as np

from simdplan.bench.records import call_plan
from simdplan.cli.inputs import apply_overrides, load_scene, resolve_scene
from simdplan.cli.output import UserError, check_output

# frames of a real-time GIF at most (a longer motion plays at fewer frames per second)
MAX_GIF_FRAMES = 240


def read_path(path: str, robot) -> tuple[np.ndarray, np.ndarray | None]:
    """(k, dof) configurations and their times in seconds (None for a path without times) from a
    'simdplan plan --out' file: .json (a result; its trajectory when it has one) or .csv (waypoints,
    or a trajectory: columns t, q:<joint>..., as Trajectory.save writes); UserError if unreadable."""
    ext = os.path.splitext(path)[1].lower()
    times = None
    try:
        if ext == ".json":
            with open(path) as f:
                doc = json.load(f)
            names, rows = doc.get("joint_names"), doc.get("path")
            if isinstance(doc.get("trajectory"), dict):
                timed = doc["trajectory"]
                names, rows, times = timed.get("joint_names"), timed.get("q"), timed.get("t")
        elif ext == ".csv":
            with open(path, newline="") as f:
                lines = list(csv.reader(f))
            names, rows = lines[0], [[float(x) for x in r] for r in lines[1:]]
            if names and names[0] == "t":  # a trajectory: t, q:<joint>..., qd:..., qdd:...
                cols = [i for i, n in enumerate(names) if n.startswith("q:")]
                times = [r[0] for r in rows]
                names, rows = [names[i][2:] for i in cols], [[r[i] for i in cols] for r in rows]
        else:
            raise UserError(f"--path {path}: expected a .json or .csv result")
    except OSError as exc:
        raise UserError(f"--path {path}: {exc.strerror or exc}") from exc
    except (ValueError, IndexError, AttributeError, TypeError) as exc:
        raise UserError(f"--path {path}: not a simdplan result ({exc})") from exc
    arr = np.asarray(rows, dtype=float) if rows else np.zeros((0, robot.dof))
    if names is not None and list(names) != robot.joint_names:
        raise UserError(f"--path {path}: joints {names} are not the scene robot's {robot.joint_names}")
    if arr.ndim != 2 or arr.shape[1] != robot.dof or len(arr) == 0 or not np.isfinite(arr).all():
        raise UserError(f"--path {path}: expected (k, {robot.dof}) finite waypoints, got shape {arr.shape}")
    if times is not None:
        times = np.asarray(times, dtype=float)
        if times.shape != (len(arr),) or not np.isfinite(times).all() or np.any(np.diff(times) < 0):
            raise UserError(f"--path {path}: its times must be {len(arr)} finite, non-decreasing seconds")
    return arr, times


def cmd_view(args) -> int:
    try:
        from simdplan.viz import PyBulletViewer, save_image
        from simdplan.viz.pybullet_viewer import import_pybullet, quiet

        with quiet():  # pybullet prints a banner on import
            import_pybullet()
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
    path, times = read_path(args.path, scene.robot) if args.path else (None, None)
    out = args.render
    if out is not None:
        check_output("--render", out, (".png", ".gif"))
        if out.lower().endswith(".gif") and path is None:
            result = call_plan(scene, apply_overrides(getattr(scene, "settings", None), {})[0])
            if not result.success:
                raise UserError(f"{path_arg}: no path to animate (planning failed: {result.message})")
            path = result.path
    with PyBulletViewer(scene.robot, scene.env, gui=out is None, spheres=args.spheres) as viewer:
        viewer.camera.width, viewer.camera.height = width, height
        if out is None:
            print("pybullet window open; close it (or Ctrl-C) to quit")
            try:
                while True:
                    if times is not None:
                        viewer.play(times, path)
                        time.sleep(1.0)
                    elif path is not None:
                        viewer.animate(path)
                        time.sleep(1.0)
                    else:
                        viewer.show(scene.start)
                        time.sleep(0.1)
            except KeyboardInterrupt:
                return 0
        fps = 12.0
        if out.lower().endswith(".gif") and times is not None:
            # real time: one frame every 1 / fps seconds of the motion (fewer per second if very long);
            # 10 fps, as GIF frame durations are whole hundredths of a second
            fps = min(10.0, MAX_GIF_FRAMES / max(float(times[-1] - times[0]), 1e-9))
            frames = viewer.render_timed(times, path, fps)
        elif out.lower().endswith(".gif"):
            frames = viewer.render_path(path)
        else:
            frames = viewer.render(path[0] if path is not None else scene.start)
        try:
            save_image(frames, out, fps)
        except OSError as exc:
            raise UserError(f"--render {out}: {exc.strerror or exc}") from exc
    n = len(frames) if isinstance(frames, list) else 1
    print(f"rendered {n} frame{'s' if n > 1 else ''} ({width}x{height}) to {out}")
    return 0
