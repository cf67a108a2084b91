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
    path = read_path(args.path, scene.robot) if args.path else None
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
