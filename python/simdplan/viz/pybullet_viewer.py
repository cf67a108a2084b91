"""PyBulletViewer: a robot, its environment and paths shown in pybullet, or rendered off-screen.

pybullet is only the display here: nothing is checked with it. The robot is loaded from its own
URDF (visual meshes as the URDF gives them; held joints at their values, the base at its pose);
primitives become visual shapes with the same pose and size as in simdplan; a point cloud is drawn
as small spheres (at most ``max_cloud_points``, evenly thinned); ``spheres=True`` overlays the
robot's collision spheres, translucent. Planes are drawn as a large thin slab (2 m wide) whose top
face is the plane. Meshes and convex hulls are drawn from their world-frame triangles, flat-shaded
(one normal per triangle); a mesh, a surface that may be open or wound either way, is drawn from
both sides, a hull (wound outwards) from the outside. pybullet caps the inline vertices of one
visual shape (B3_MAX_NUM_VERTICES, as low as 8192 on some builds) and drops the rest, so bigger
meshes are drawn as several bodies of at most ``MAX_MESH_VERTICES`` vertices each: every triangle
is drawn, nothing is decimated or written to disk.

``render`` (camera: ``viewer.camera``, fitted to the scene, or any Camera) works without a display: in pybullet's DIRECT mode with its built-in software renderer
(TinyRenderer), so it runs on servers and in CI. Frames are (height, width, 3) uint8 RGB arrays.

World frame, metres; the camera looks at ``target`` from ``distance`` along ``yaw``/``pitch`` (degrees).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import sys
import time

import numpy as np

from simdplan.transforms import matrix_to_quat


@contextlib.contextmanager
def quiet():
    """Silences pybullet's C++ console output (mesh importer warnings about missing textures, the
    build banner) by pointing file descriptors 1 and 2 at /dev/null for the duration."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(null, 1)
        os.dup2(null, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, null):
            os.close(fd)


def import_pybullet():
    try:
        import pybullet  # noqa: PLC0415 (optional dependency)
    except ImportError as exc:
        raise ImportError("the viewer needs pybullet: pip install pybullet (or simdplan[viz])") from exc
    return pybullet


@dataclasses.dataclass
class Camera:
    """Where the camera looks from: orbit around ``target`` at ``distance`` m; yaw, pitch in degrees."""

    target: tuple = (0.3, 0.0, 0.4)
    distance: float = 2.0
    yaw: float = 50.0
    pitch: float = -30.0
    width: int = 640
    height: int = 480
    fov: float = 50.0


def fit_camera(robot, env, width: int = 640, height: int = 480) -> Camera:
    """A camera that frames the robot and the obstacles around it: it looks at their middle from
    behind the robot's shoulder, the obstacles beyond the robot (yaw from the robot's base towards
    the obstacles' centre). Meshes and convex hulls count with the middle of their triangles' bounds
    and reach out by half the bounds' diagonal."""
    base = np.asarray(robot.base_pose, dtype=float)[:3, 3]
    centres, sizes = [], []  # sizes: how far an obstacle reaches from its centre (meshes and hulls)
    for o in env or []:
        prm = o.params
        if o.kind == "pointcloud":
            centres.append(np.asarray(prm["points"], float).mean(axis=0))
        elif o.kind in ("mesh", "convex"):  # the middle of the world-frame bounds, not the frame's origin
            v = np.asarray(prm["vertices"], float)[np.asarray(prm["faces"]).ravel()]  # vertices in use
            lo, hi = v.min(axis=0), v.max(axis=0)
            centres.append(0.5 * (lo + hi))
            sizes.append((len(centres) - 1, 0.5 * float(np.linalg.norm(hi - lo))))
        elif o.kind != "plane":
            centres.append(np.asarray(prm["center" if o.kind == "sphere" else "position"], float))
    reach = base + [0.0, 0.0, 0.4]
    if not centres:
        return Camera(target=tuple(reach), width=width, height=height)
    c = np.mean(centres, axis=0)
    target = 0.5 * (reach + c)
    d = c - base
    yaw = float(np.degrees(np.arctan2(d[1], d[0]))) - 80.0
    reach_out = np.linalg.norm(np.asarray(centres) - target, axis=1)
    for i, size in sizes:
        reach_out[i] += size
    extent = float(np.max(reach_out))
    return Camera(target=tuple(target), distance=max(2.0, 2.2 * extent), yaw=yaw, pitch=-28.0, width=width,
                  height=height)


OBSTACLE_RGBA = (0.55, 0.6, 0.7, 1.0)
CLOUD_RGBA = (0.2, 0.5, 0.9, 1.0)
SPHERE_RGBA = (1.0, 0.45, 0.1, 0.45)
# Inline vertices per pybullet visual shape, under the smallest B3_MAX_NUM_VERTICES of pybullet's
# builds (8192; its index cap is at least 4x that). Beyond it pybullet drops vertices, so bigger
# meshes are split into several shapes (a multiple of 3: whole triangles).
MAX_MESH_VERTICES = 8190


def mesh_pieces(vertices, faces, two_sided: bool, max_vertices: int = MAX_MESH_VERTICES):
    """Flat-shaded triangle soups for pybullet, at most ``max_vertices`` vertices each: a list of
    ``(vertices (3k, 3), indices (3k,), normals (3k, 3))``, triangle t being vertices 3t..3t+2 with
    its face normal. ``two_sided`` adds every triangle again, wound the other way (pybullet's
    renderers cull back faces)."""
    tri = np.asarray(vertices, dtype=float)[np.asarray(faces, dtype=np.int64)]  # (m, 3, 3)
    n = np.cross(tri[:, 1] - tri[:, 0], tri[:, 2] - tri[:, 0])
    length = np.linalg.norm(n, axis=1, keepdims=True)
    n = np.divide(n, length, out=np.zeros_like(n), where=length > 0)  # degenerate triangles: no normal
    if two_sided:
        tri = np.concatenate([tri, tri[:, ::-1]])
        n = np.concatenate([n, -n])
    per = max(1, int(max_vertices) // 3)
    out = []
    for start in range(0, len(tri), per):
        t = tri[start:start + per]
        out.append((t.reshape(-1, 3), np.arange(3 * len(t)), np.repeat(n[start:start + per], 3, axis=0)))
    return out


class PyBulletViewer:
    """Shows ``robot`` (simdplan.Robot) in ``env`` (simdplan.Environment or None).

    gui: open pybullet's window (needs a display); False renders off-screen only.
    spheres: overlay the collision spheres. max_cloud_points: point-cloud points drawn at most.
    ``obstacle_bodies``: obstacle id -> the pybullet body ids drawing it (``physics_client``).
    """

    def __init__(self, robot, env=None, gui: bool = False, spheres: bool = False, max_cloud_points: int = 3000) -> None:
        with quiet():
            p = import_pybullet()
        self._p = p
        self.robot, self.env = robot, env
        self.gui = bool(gui)
        self._cid = None
        with quiet():
            self._cid = p.connect(p.GUI if self.gui else p.DIRECT)
        if self._cid < 0:
            raise RuntimeError("pybullet could not connect (a GUI needs a display; use gui=False to render)")
        if self.gui:
            p.configureDebugVisualizer(p.COV_ENABLE_GUI, 0, physicsClientId=self._cid)
        urdf = robot.description.urdf_path
        if urdf is None or not os.path.exists(urdf):
            raise ValueError("the viewer loads the robot's URDF file; this robot was not loaded from one")
        pose = np.asarray(robot.base_pose, dtype=float)
        with quiet():
            self._body = p.loadURDF(urdf, basePosition=pose[:3, 3].tolist(), baseOrientation=matrix_to_quat(pose[:3, :3]).tolist(),
                                    useFixedBase=True, flags=p.URDF_USE_MATERIAL_COLORS_FROM_MTL,
                                    physicsClientId=self._cid)
        self._joint_index = {}
        for j in range(p.getNumJoints(self._body, physicsClientId=self._cid)):
            info = p.getJointInfo(self._body, j, physicsClientId=self._cid)
            self._joint_index[info[1].decode()] = j
        missing = [n for n in robot.joint_names if n not in self._joint_index]
        if missing:
            raise ValueError(f"pybullet's model of {urdf} lacks joints {missing}")
        for name, value in robot.fixed_joint_values.items():
            p.resetJointState(self._body, self._joint_index[name], float(value), physicsClientId=self._cid)
        self.obstacle_bodies = {o.id: self._add_obstacle(o, max_cloud_points) for o in (env or [])}
        self.camera = fit_camera(robot, env)  # render's default; replace it to look elsewhere
        self._sphere_bodies = self._add_spheres() if spheres else []

    @property
    def physics_client(self) -> int | None:
        """The pybullet client id (None once closed)."""
        return self._cid

    # ----- scene -----
    def _visual(self, **kw):
        return self._p.createVisualShape(physicsClientId=self._cid, **kw)

    def _body_at(self, shape, position, quat=(0, 0, 0, 1)):
        return self._p.createMultiBody(baseMass=0, baseVisualShapeIndex=shape, basePosition=list(map(float, position)),
                                       baseOrientation=list(map(float, quat)), physicsClientId=self._cid)

    def _add_obstacle(self, o, max_points: int):
        p, prm = self._p, o.params
        if o.kind == "sphere":
            return [self._body_at(self._visual(shapeType=p.GEOM_SPHERE, radius=prm["radius"], rgbaColor=OBSTACLE_RGBA),
                                  prm["center"])]
        if o.kind == "plane":
            n = np.asarray(prm["normal"], float)
            centre = n * prm["offset"] - n * 0.005
            z = n / np.linalg.norm(n)
            x = np.cross(z, [1.0, 0, 0] if abs(z[0]) < 0.9 else [0, 1.0, 0])
            x /= np.linalg.norm(x)
            R = np.stack([x, np.cross(z, x), z], axis=1)
            shape = self._visual(shapeType=p.GEOM_BOX, halfExtents=[1.0, 1.0, 0.005], rgbaColor=(0.8, 0.8, 0.8, 1))
            return [self._body_at(shape, centre, matrix_to_quat(R))]
        if o.kind == "pointcloud":
            pts = np.asarray(prm["points"], float)
            if len(pts) > max_points:
                pts = pts[np.linspace(0, len(pts) - 1, max_points).astype(int)]
            r = max(float(prm["point_radius"]), 0.004)
            shape = self._visual(shapeType=p.GEOM_SPHERE, radius=r, rgbaColor=CLOUD_RGBA)
            return [self._body_at(shape, q) for q in pts]
        if o.kind in ("mesh", "convex"):  # world-frame triangles, the body at the origin
            bodies = []
            for verts, idx, normals in mesh_pieces(prm["vertices"], prm["faces"], two_sided=o.kind == "mesh"):
                shape = self._visual(shapeType=p.GEOM_MESH, vertices=verts.tolist(), indices=idx.tolist(),
                                     normals=normals.tolist(), rgbaColor=OBSTACLE_RGBA)
                bodies.append(self._body_at(shape, (0.0, 0.0, 0.0)))
            return bodies
        quat = matrix_to_quat(prm["rotation"])
        if o.kind == "box":
            shape = self._visual(shapeType=p.GEOM_BOX, halfExtents=list(map(float, prm["half_extents"])),
                                 rgbaColor=OBSTACLE_RGBA)
        elif o.kind == "cylinder":
            shape = self._visual(shapeType=p.GEOM_CYLINDER, radius=prm["radius"], length=prm["length"],
                                 rgbaColor=OBSTACLE_RGBA)
        else:  # capsule: pybullet's capsule is ours (segment length + radius)
            shape = self._visual(shapeType=p.GEOM_CAPSULE, radius=prm["radius"], length=prm["length"],
                                 rgbaColor=OBSTACLE_RGBA)
        return [self._body_at(shape, prm["position"], quat)]

    def _add_spheres(self):
        out = []
        for x, y, z, r in self.robot.fk(np.zeros(self.robot.dof)):
            shape = self._visual(shapeType=self._p.GEOM_SPHERE, radius=float(r), rgbaColor=SPHERE_RGBA)
            out.append(self._body_at(shape, (x, y, z)))
        return out

    # ----- showing -----
    def show(self, q) -> None:
        """Put the robot at ``q`` (dof,) in the robot's joint order."""
        q = np.asarray(q, dtype=float)
        if q.shape != (self.robot.dof,):
            raise ValueError(f"q must have shape ({self.robot.dof},), got {q.shape}")
        for name, v in zip(self.robot.joint_names, q):
            self._p.resetJointState(self._body, self._joint_index[name], float(v), physicsClientId=self._cid)
        if self._sphere_bodies:
            for body, (x, y, z, _r) in zip(self._sphere_bodies, self.robot.fk(q)):
                self._p.resetBasePositionAndOrientation(body, [float(x), float(y), float(z)], [0, 0, 0, 1],
                                                        physicsClientId=self._cid)

    @staticmethod
    def _frames(path, per_unit: float, max_frames: int) -> np.ndarray:
        """Configurations along a (k, dof) path, about ``per_unit`` per unit of joint distance."""
        path = np.asarray(path, dtype=float)
        if path.ndim != 2 or len(path) == 0:
            raise ValueError(f"path must have shape (k, dof) with k >= 1, got {path.shape}")
        out = [path[0]]
        for a, b in zip(path[:-1], path[1:]):
            n = max(1, int(np.ceil(np.linalg.norm(b - a) * per_unit)))
            out.extend(a + (b - a) * (i / n) for i in range(1, n + 1))
        out = np.array(out)
        if len(out) > max_frames:
            out = out[np.linspace(0, len(out) - 1, max_frames).astype(int)]
        return out

    def animate(self, path, speed: float = 1.0, per_unit: float = 20.0) -> None:
        """Play a (k, dof) path in the window: ``speed`` units of joint distance per second."""
        frames = self._frames(path, per_unit, 10_000)
        dt = 1.0 / (per_unit * max(speed, 1e-6))
        for q in frames:
            self.show(q)
            if self.gui:
                time.sleep(dt)

    def play(self, times, path) -> None:
        """Play timed configurations ``path`` (k, dof) at ``times`` (k,) seconds, in real time."""
        times = np.asarray(times, dtype=float)
        start = time.perf_counter()
        for t, q in zip(times, np.asarray(path, dtype=float)):
            if self.gui:
                wait = start + (t - times[0]) - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
            self.show(q)

    @staticmethod
    def timed_frames(times, path, fps: float) -> np.ndarray:
        """Configurations every 1 / fps seconds of a timed motion (linear between its samples)."""
        times, path = np.asarray(times, dtype=float), np.asarray(path, dtype=float)
        at = np.arange(0.0, times[-1] - times[0] + 1e-9, 1.0 / fps) + times[0]
        if at[-1] < times[-1]:
            at = np.r_[at, times[-1]]
        return np.stack([np.interp(at, times, path[:, j]) for j in range(path.shape[1])], axis=1)

    def render_timed(self, times, path, fps: float, camera: Camera | None = None) -> list[np.ndarray]:
        """Frames of a timed motion every 1 / fps seconds (a GIF at fps plays it in real time)."""
        return self._render_configs(self.timed_frames(times, path, fps), camera)

    def render(self, path=None, camera: Camera | None = None, frames: int = 40):
        """Off-screen rendering. ``path`` None: one frame of the robot where it is; (dof,): one frame
        at that configuration; (k, dof): a list of at most ``frames`` frames along the path. A frame
        is a (height, width, 3) uint8 RGB array."""
        if path is not None:
            arr = np.asarray(path, dtype=float)
            if arr.ndim == 2:
                return self.render_path(arr, camera, frames)
            self.show(arr)
        return self._frame(camera)

    def _frame(self, camera: Camera | None) -> np.ndarray:
        cam = camera or self.camera
        p = self._p
        view = p.computeViewMatrixFromYawPitchRoll(list(cam.target), cam.distance, cam.yaw, cam.pitch, 0, 2,
                                                   physicsClientId=self._cid)
        proj = p.computeProjectionMatrixFOV(cam.fov, cam.width / cam.height, 0.05, 20.0, physicsClientId=self._cid)
        _, _, rgba, _, _ = p.getCameraImage(cam.width, cam.height, view, proj, renderer=p.ER_TINY_RENDERER,
                                            physicsClientId=self._cid)
        return np.asarray(rgba, dtype=np.uint8).reshape(cam.height, cam.width, 4)[:, :, :3].copy()

    def render_path(self, path, camera: Camera | None = None, frames: int = 40) -> list[np.ndarray]:
        """Frames along a (k, dof) path, at most ``frames`` of them, evenly spread."""
        return self._render_configs(self._frames(path, 50.0, frames), camera)

    def _render_configs(self, configs, camera: Camera | None) -> list[np.ndarray]:
        """One rendered frame per configuration of ``configs``."""
        out = []
        for q in configs:
            self.show(q)
            out.append(self._frame(camera))
        return out

    def close(self) -> None:
        if self._cid is not None and self._p.isConnected(self._cid):
            self._p.disconnect(self._cid)
        self._cid = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def save_image(frames, path: str | os.PathLike, fps: float = 12.0) -> None:
    """Write one frame as .png, or a list of frames as an animated .gif (Pillow)."""
    try:
        from PIL import Image  # noqa: PLC0415 (optional dependency)
    except ImportError as exc:
        raise ImportError("saving images needs Pillow: pip install pillow (or simdplan[viz])") from exc
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if isinstance(frames, np.ndarray):
        frames = [frames]
    if not frames:
        raise ValueError("no frames to save")
    images = [Image.fromarray(np.asarray(f, dtype=np.uint8)) for f in frames]
    if ext == ".png":
        images[-1 if len(images) > 1 else 0].save(path)
    elif ext == ".gif":
        images[0].save(path, save_all=True, append_images=images[1:], duration=int(1000 / fps), loop=0)
    else:
        raise ValueError(f"cannot save {ext or 'a file without extension'!r}: use .png or .gif")
