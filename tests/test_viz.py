"""PyBullet visualisation: off-screen renders show the robot and the obstacles, not a blank frame."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("pybullet")
PIL = pytest.importorskip("PIL.Image")

import simdplan  # noqa: E402
from simdplan.viz import Camera, PyBulletViewer, save_image  # noqa: E402


def background_fraction(img: np.ndarray) -> float:
    """Share of pixels with the background's colour (taken from the top corners, above the scene)."""
    bg = np.median(np.concatenate([img[:8, :8].reshape(-1, 3), img[:8, -8:].reshape(-1, 3)]), axis=0)
    return float(np.mean(np.all(np.abs(img.astype(int) - bg) <= 3, axis=-1)))


def obstacle_fraction(img: np.ndarray) -> float:
    """Share of pixels in the obstacles' blue-grey (any shade): blue clearly above red."""
    r, g, b = (img[..., k].astype(int) for k in range(3))
    return float(np.mean((b - r > 15) & (b > 60)))


@pytest.fixture(scope="module")
def scene():
    return simdplan.scenes.load(simdplan.scenes.example("panda_bookshelf"))


def test_render_shows_robot_and_obstacles(scene):
    with PyBulletViewer(scene.robot, scene.env) as v:
        full = v.render(scene.start)
        cam = v.camera
        sky = v.render(camera=Camera(target=(0, 0, 50), distance=1.0, pitch=89.0))  # nothing in view
    with PyBulletViewer(scene.robot, None) as v:
        v.camera = cam
        robot_only = v.render(scene.start)
    assert full.shape == (480, 640, 3) and full.dtype == np.uint8
    assert background_fraction(sky) > 0.99  # the empty render is blank
    robot_px = 1 - background_fraction(robot_only)
    scene_px = 1 - background_fraction(full)
    assert robot_px > 0.01, robot_px  # the robot is visible on its own
    assert scene_px > robot_px + 0.05, (scene_px, robot_px)  # and the obstacles add to it
    assert obstacle_fraction(full) > 0.05 and obstacle_fraction(robot_only) < 0.005
    # moving the robot changes the picture
    with PyBulletViewer(scene.robot, scene.env) as v:
        other = v.render(scene.goals[0])
    assert np.mean(np.any(other != full, axis=-1)) > 0.01
    # a (k, dof) path gives frames along it, first and last at its ends
    with PyBulletViewer(scene.robot, scene.env) as v:
        frames = v.render(np.stack([scene.start, scene.goals[0]]), frames=5)
    assert len(frames) == 5 and np.array_equal(frames[0], full) and np.array_equal(frames[-1], other)


def test_spheres_overlay_and_point_clouds():
    sc = simdplan.scenes.load(simdplan.scenes.example("panda_bookshelf_cloud"))
    with PyBulletViewer(sc.robot, sc.env) as v:
        plain = v.render(sc.start)
    with PyBulletViewer(sc.robot, sc.env, spheres=True) as v:
        spheres = v.render(sc.start)
    orange = lambda im: np.mean((im[..., 0].astype(int) - im[..., 2] > 80))  # noqa: E731 (the overlay's colour)
    assert orange(spheres) > orange(plain) + 0.005
    assert obstacle_fraction(plain) > 0.01  # the cloud's points


def test_bad_input(scene, tmp_path):
    with PyBulletViewer(scene.robot, scene.env) as v:
        with pytest.raises(ValueError, match="shape"):
            v.show(np.zeros(3))
        img = v.render()
    with pytest.raises(ValueError, match="png or .gif"):
        save_image(img, tmp_path / "x.jpg")
    with pytest.raises(ValueError, match="no frames"):
        save_image([], tmp_path / "x.gif")


def run(*args):
    return subprocess.run([sys.executable, "-m", "simdplan", *args], capture_output=True, text=True, timeout=300)


def test_cli_render_png_and_gif(tmp_path):
    png = tmp_path / "scene.png"
    out = run("view", "panda_bookshelf", "--render", str(png), "--size", "320x240")
    assert out.returncode == 0, out.stderr
    assert "pybullet build time" not in out.stdout + out.stderr  # its banner is silenced
    with PIL.open(png) as im:
        assert im.size == (320, 240)
        assert 1 - background_fraction(np.asarray(im.convert("RGB"))) > 0.05
    result = tmp_path / "plan.json"
    assert run("plan", "panda_table", "--out", str(result)).returncode == 0
    gif = tmp_path / "path.gif"
    out = run("view", "panda_table", "--path", str(result), "--render", str(gif), "--size", "160x120")
    assert out.returncode == 0, out.stderr
    with PIL.open(gif) as im:
        assert im.n_frames > 1
    bad = run("view", "panda_table", "--path", str(tmp_path / "missing.json"), "--render", str(gif))
    assert bad.returncode == 2 and "missing.json" in bad.stderr
    bad = run("view", "panda_table", "--render", str(tmp_path / "x.jpg"))
    assert bad.returncode == 2 and ".png or .gif" in bad.stderr
    assert os.path.getsize(gif) > 0
