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
from simdplan.viz import Camera, PyBulletViewer, fit_camera, save_image  # noqa: E402
from simdplan.viz.pybullet_viewer import MAX_MESH_VERTICES, mesh_pieces  # noqa: E402


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


def visual_kinds(viewer, body: int) -> list[int]:
    """pybullet geometry types of a body's visual shapes."""
    p = viewer._p
    return [d[2] for d in p.getVisualShapeData(body, physicsClientId=viewer.physics_client)]


def test_mesh_and_convex_obstacles_render():
    import pybullet as p

    sc = simdplan.scenes.load(simdplan.scenes.example("panda_mesh_shelf"))
    kinds = {o.id: o.kind for o in sc.env}
    assert sorted(kinds.values()) == ["convex", "mesh", "plane"]
    with PyBulletViewer(sc.robot, sc.env) as v:
        assert set(v.obstacle_bodies) == set(kinds)
        for oid, bodies in v.obstacle_bodies.items():
            assert bodies
            for body in bodies:  # the bodies exist, meshes and hulls as pybullet meshes
                assert p.getBodyInfo(body, physicsClientId=v.physics_client)
                if kinds[oid] in ("mesh", "convex"):
                    assert visual_kinds(v, body) == [p.GEOM_MESH]
        full = v.render(sc.start)
        cam = v.camera
    # each of the two alone adds obstacle pixels to the robot's picture
    with PyBulletViewer(sc.robot, None) as v:
        v.camera = cam
        robot_only = v.render(sc.start)
    assert obstacle_fraction(robot_only) < 0.005
    assert obstacle_fraction(full) > 0.05
    for kind in ("mesh", "convex"):
        env = simdplan.Environment()
        for o in sc.env:
            if o.kind == kind:
                prm = o.params
                shape = (prm["local_vertices"], prm["faces"]) if kind == "mesh" else prm["local_vertices"]
                (env.add_mesh if kind == "mesh" else env.add_convex)(shape, prm["position"], prm["rotation"])
        with PyBulletViewer(sc.robot, env) as v:
            v.camera = cam
            alone = v.render(sc.start)
        assert obstacle_fraction(alone) > 0.002, kind
        assert np.mean(np.any(alone != robot_only, axis=-1)) > 0.002, kind


def test_camera_frames_meshes_by_their_bounds():
    robot = simdplan.robots.load("panda")
    env = simdplan.Environment()
    # a 2 m wide wall whose frame's origin is far from its triangles
    env.add_mesh(([[4, -1, 0], [4, 1, 0], [4, 1, 2], [4, -1, 2]], [[0, 1, 2], [0, 2, 3]]), position=[-2, 0, 0])
    cam = fit_camera(robot, env)
    reach = np.array([0.0, 0.0, 0.4])
    np.testing.assert_allclose(cam.target, 0.5 * (reach + [2.0, 0.0, 1.0]))  # the middle of the bounds
    half = np.linalg.norm([2.0, 0.0, 1.0] - np.asarray(cam.target)) + 0.5 * np.linalg.norm([0, 2, 2])
    assert cam.distance == pytest.approx(2.2 * half)


def test_mesh_pieces_stay_under_pybullets_vertex_limit():
    import trimesh

    sphere = trimesh.creation.icosphere(subdivisions=4)  # 5120 triangles
    m = len(sphere.faces)
    for two_sided in (False, True):
        pieces = mesh_pieces(sphere.vertices, sphere.faces, two_sided)
        total = 2 * m if two_sided else m
        assert len(pieces) == -(-3 * total // MAX_MESH_VERTICES)
        assert sum(len(idx) for _, idx, _ in pieces) == 3 * total
        for verts, idx, normals in pieces:
            assert len(verts) <= MAX_MESH_VERTICES and len(verts) % 3 == 0
            np.testing.assert_array_equal(idx, np.arange(len(verts)))
            np.testing.assert_allclose(np.linalg.norm(normals, axis=1), 1.0, atol=1e-9)
    # one side: triangles as given (outward here: normals point away from the centre)
    (verts, _, normals), *_ = mesh_pieces(sphere.vertices, sphere.faces, False)
    assert np.all(np.einsum("ij,ij->i", normals, verts) > 0)
    # degenerate triangles get no normal rather than NaN
    (verts, _, normals), = mesh_pieces([[0, 0, 0], [1, 0, 0], [2, 0, 0]], [[0, 1, 2]], True)
    assert np.all(np.isfinite(normals)) and len(verts) == 6


def test_big_mesh_is_drawn_in_pieces():
    import trimesh

    robot = simdplan.robots.load("panda")
    ball = trimesh.creation.icosphere(subdivisions=5, radius=0.2)  # 20480 triangles, drawn from both sides
    env = simdplan.Environment()
    oid = env.add_mesh(ball, position=[0.5, 0.0, 0.5])
    with PyBulletViewer(robot, env) as v:
        bodies = v.obstacle_bodies[oid]
        assert len(bodies) == -(-6 * len(ball.faces) // MAX_MESH_VERTICES) > 1
        img = v.render(np.array([0, -0.785, 0, -2.356, 0, 1.571, 0.785]))
    assert obstacle_fraction(img) > 0.01


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
