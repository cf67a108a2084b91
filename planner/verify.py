"""Re-checking a path against the robot's real collision geometry (not its planning spheres).

simdplan plans with spheres, and a sphere model and the robot's collision meshes can disagree: the
sphere models shipped with the built-in robots approximate their meshes rather than cover them
(parts of the panda's meshes stick out of its spheres by centimetres), a sphere model may be built
with a tolerance, or a mesh URDF edited after spherizing. A discretely checked path can also graze an
obstacle between its samples. ``verify_path`` takes a planned path and checks it again,
independently of the C++ core, with the robot's collision geometry from its mesh URDF and the coal
collision library (FCL's successor; ``pip install simdplan[verify]``):

- Each edge of the path is sampled in float64 at a joint-space step of ``resolution`` (Euclidean
  norm of the joint difference, radians / metres; default ``DEFAULT_STEP`` = 0.01, about 3x finer
  than the planner's 32 samples per unit). Both ends of every edge are included.
- Links are placed by a float64 forward kinematics of the mesh URDF (its own joint origins and
  axes; the robot's active joints, held values, mimic joints and base pose), cross-checked once
  against ``robot.link_poses``.
- Every collision mesh of a link is replaced by its CONVEX HULL (after the URDF's scale and origin).
  A hull over-approximates a concave link, so a collision reported here can be a false alarm (the
  hull touches, the mesh does not); relative to the hull model it is never a miss. Each reported
  collision says whether the mesh's own triangles confirm it (``mesh_confirmed``), and
  ``geometry="mesh"`` counts only confirmed ones (see ``verify_path``). URDF primitive
  collision shapes (box, cylinder, sphere, and the non-standard capsule) are used as they are.
  Links the mesh URDF does not have but the robot does (attached objects) are checked with the
  robot's own spheres.
- Obstacles of every kind of ``simdplan.Environment`` are checked, from their parameters: sphere,
  capsule (segment of ``length`` swept by ``radius``: coal.Capsule(radius, length)), cylinder,
  box (coal.Box takes full side lengths: 2 * half_extents), plane (the half-space
  {p : normal . p <= offset}: coal.Halfspace(normal, offset)), mesh (a surface, as everywhere in
  simdplan: a link hull wholly inside a closed mesh touches no triangle and is NOT a collision; use
  ``convex`` obstacles for solids), convex (a solid hull) and point clouds (a point of
  ``point_radius`` r collides with a link iff its signed distance to the link's hull is below
  r + padding; bare points (r = 0) therefore collide only when strictly inside a hull).
- Self-collision is checked between exactly the link pairs the robot's sphere model checks
  (``robot.self_collision_pairs``: SRDF ``disable_collisions`` pairs and adjacent links skipped).

Semantics are simdplan's: a collision is a strict penetration, touching is free. Padding (metres)
inflates the robot: a link collides with an obstacle when their signed distance is below
``padding``, and two links when it is below ``2 * padding`` (each link is inflated, as each sphere
is in the sphere model). Penetrations shallower than ``CONTACT_TOLERANCE`` (1 um, the accuracy of
coal's GJK) count as touching. Joint limits are not checked here (``robot.is_valid`` does that).

Each reported collision also carries the sphere model's own verdict at that configuration
(``spheres_collide``): True means the planner's discrete edge check stepped over a collision its
own model sees, False that the two models disagree there.

Cost: the link hulls are built once per mesh URDF and cached (about 0.1 s for the panda, 0.35 s
for the ur5 on first use); obstacles once per call; per sample, a NumPy broad phase (bounding
spheres of the link geometry against obstacle bounding boxes) leaves few pairs for coal: about
0.1 ms per sample for the panda in the shipped example scenes.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time

import numpy as np

DEFAULT_STEP = 0.01  # rad (or m): joint-space step between samples of an edge
CONTACT_TOLERANCE = 1e-6  # m: penetrations shallower than this count as touching
MAX_COLLISIONS = 100  # first_only=False: collisions kept at most (the count is still exact)
_CHUNK = 256  # samples evaluated per NumPy batch
_KIN_TOLERANCE = 1e-4  # m / rad: mesh URDF kinematics vs the robot's, cross-check at one configuration

# Built-in robots: the original mesh URDF beside each spherized one (simdplan.robots.BUILTIN).
BUILTIN_MESH_URDFS = {
    "panda": "panda/panda.urdf",
    "ur5": "ur5/ur5.urdf",
}

_INSTALL_HINT = "verify_path needs the coal collision library: pip install simdplan[verify] (or pip install coal)"


def _coal():
    try:
        import coal  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return coal


# ----------------------------------------------------------------------------- results
@dataclasses.dataclass(frozen=True)
class PathCollision:
    """One collision found on a path.

    sample: index of the configuration among the path's samples (0 = the start). segment: the edge
    (path[segment] -> path[segment + 1]; 0 for a one-waypoint path). t: position along that edge in
    [0, 1]. q: the configuration (dof,) float64. link: the robot link. Against an obstacle:
    obstacle_id, obstacle_name, obstacle_kind; against another link (self-collision): other_link.
    depth: penetration in metres of the (padding-inflated) link geometry, or None if coal gave none.
    mesh_confirmed: whether the link's own mesh triangles (not just their hull) also collide: True
    or False for links modelled by a mesh hull, None where it does not apply (URDF primitives,
    attached objects, point clouds). False marks a likely false alarm of the hull model.
    spheres_collide: the robot's own sphere model's verdict at q (``not robot.is_valid(q, env,
    padding)``, a diagnostic from the C++ core: False means the two models disagree there, True
    that the planner's discrete edge check stepped over it), None if it could not be evaluated.
    """

    sample: int
    segment: int
    t: float
    q: np.ndarray
    link: str
    obstacle_id: int | None = None
    obstacle_name: str | None = None
    obstacle_kind: str | None = None
    other_link: str | None = None
    depth: float | None = None
    mesh_confirmed: bool | None = None
    spheres_collide: bool | None = None

    @property
    def is_self(self) -> bool:
        return self.other_link is not None

    def __str__(self) -> str:
        what = (f"link {self.other_link}" if self.is_self else
                f"{self.obstacle_kind} {self.obstacle_name!r} (id {self.obstacle_id})")
        depth = "" if self.depth is None else f" by {self.depth * 1000:.3g} mm"
        mesh = {True: "the mesh confirms", False: "hull only: the mesh itself does not touch"}
        spheres = {True: "the sphere model collides here too", False: "the sphere model is clear here"}
        notes = [mesh.get(self.mesh_confirmed), spheres.get(self.spheres_collide)]
        notes = "; ".join(n for n in notes if n)
        return (f"link {self.link} hits {what}{depth} on segment {self.segment} at t={self.t:.3f}"
                + (f" ({notes})" if notes else ""))


@dataclasses.dataclass(frozen=True)
class PathVerification:
    """Outcome of ``verify_path``.

    valid: no sample of the path collides. first_collision: the deepest collision at the first
    colliding sample (None if valid). collisions: with ``first_only`` every collision at that
    sample, else every collision on the path (at most MAX_COLLISIONS kept; ``n_collisions`` counts
    them all). checked_samples: configurations evaluated (fewer than total_samples when the check
    stopped at the first collision). resolution: the joint-space step used. geometry: "hull" or
    "mesh" (see verify_path). mesh_urdf: the URDF whose collision geometry was used. seconds: wall
    time of the check.
    """

    valid: bool
    first_collision: PathCollision | None
    checked_samples: int
    total_samples: int
    resolution: float
    padding: float
    self_collision: bool
    mesh_urdf: str
    geometry: str = "hull"
    collisions: tuple = ()
    n_collisions: int = 0
    seconds: float = 0.0

    def __str__(self) -> str:
        where = f"{self.checked_samples} of {self.total_samples} samples at {self.resolution:g} rad steps"
        if self.valid:
            return f"valid: no mesh collision ({where}, {self.seconds * 1000:.0f} ms)"
        more = f", {self.n_collisions} collisions in all" if self.n_collisions > 1 else ""
        return f"COLLISION: {self.first_collision} (sample {self.first_collision.sample}; {where}{more})"


# ----------------------------------------------------------------------------- link geometry
@dataclasses.dataclass
class _Geom:
    """One collision element of a link, in the link frame."""

    link: str
    kind: str  # convex, box, cylinder, sphere, capsule
    origin: np.ndarray  # (4, 4) element frame in the link frame
    params: dict  # convex: vertices, triangles, planes (F, 4) [n, d] with n.p <= d inside; else sizes
    centre: np.ndarray  # (3,) bounding sphere centre, element frame
    radius: float  # bounding sphere radius
    coal: object = None  # the coal shape (hull or primitive)
    _mesh_bvh: object = None

    def bvh(self, coal):
        """Mesh elements: the mesh's own triangles as a coal BVH (built on first use); else None."""
        if self._mesh_bvh is None and len(self.params.get("mesh_faces", ())):
            self._mesh_bvh = _bvh(coal, self.params["mesh_vertices"], self.params["mesh_faces"])
        return self._mesh_bvh


def _hull(points: np.ndarray, what: str) -> dict:
    """Convex hull of points: vertices (n, 3), outward triangles (m, 3), planes (m, 4)."""
    from scipy.spatial import QhullError  # noqa: PLC0415

    from simdplan.collision.convex import qhull  # noqa: PLC0415

    pts = np.asarray(points, dtype=np.float64)
    try:
        verts, tris, planes = qhull(pts)
    except QhullError:
        try:  # flat or nearly flat: joggle into a thin solid
            verts, tris, planes = qhull(pts, "QJ")
        except QhullError as exc:
            raise ValueError(f"{what}: no convex hull ({str(exc).splitlines()[0]})") from None
    return {"vertices": verts, "triangles": tris, "planes": planes}


def _bounding_sphere(points: np.ndarray) -> tuple[np.ndarray, float]:
    centre = 0.5 * (points.min(axis=0) + points.max(axis=0))
    return centre, float(np.linalg.norm(points - centre, axis=1).max())


def _link_geometry(desc) -> dict[str, list[_Geom]]:
    """Every link's collision elements, from the URDF as simdplan.robots.description read it: its
    spheres and primitives as they are, its meshes as convex hulls (each file and scale once)."""
    from simdplan.collision.mesh import load_trimesh  # noqa: PLC0415

    out: dict[str, list[_Geom]] = {}
    loaded: dict = {}  # (mesh file, scale) -> hull and triangles, shared by links using the same file
    for name, link in desc.links.items():
        geoms = []
        for x, y, z, r in link.spheres:
            origin = np.eye(4)
            origin[:3, 3] = (x, y, z)
            geoms.append(_Geom(name, "sphere", origin, {"radius": float(r)}, np.zeros(3), float(r)))
        for p in link.collision_primitives:
            if p.kind == "box":
                bound = float(np.linalg.norm(p.params["half_extents"]))
            else:  # cylinder
                bound = math.hypot(p.params["radius"], p.params["length"] / 2)
            geoms.append(_Geom(name, p.kind, np.asarray(p.origin, dtype=float), dict(p.params), np.zeros(3), bound))
        for i, m in enumerate(link.collision_meshes):
            what = f"{desc.urdf_path}: link {name!r} collision mesh {i}"
            if not os.path.isfile(m.path):
                raise FileNotFoundError(f"{what}: mesh file not found: {m.path}")
            key = (m.path, tuple(np.asarray(m.scale, dtype=float)))
            if key not in loaded:
                mesh = load_trimesh(m.path)
                verts = np.asarray(mesh.vertices, dtype=np.float64) * np.asarray(m.scale, dtype=float)
                if len(verts) < 4:
                    raise ValueError(f"{what}: mesh {m.path} has fewer than 4 vertices")
                params = _hull(verts, f"{what} ({m.path})")
                params.update(source=m.path, mesh_vertices=verts, mesh_faces=np.asarray(mesh.faces, dtype=np.int64))
                loaded[key] = params
            params = loaded[key]
            centre, radius = _bounding_sphere(params["vertices"])
            geoms.append(_Geom(name, "convex", np.asarray(m.origin, dtype=float), params, centre, radius))
        if geoms:
            out[name] = geoms
    return out


def _coal_shape(coal, kind: str, params: dict):
    if kind == "convex" or kind == "hull":
        verts = coal.StdVec_Vec3s()
        for v in params["vertices"]:
            verts.append(np.asarray(v, dtype=np.float64))
        tris = coal.StdVec_Triangle()
        for t in params["triangles"]:
            tris.append(coal.Triangle(int(t[0]), int(t[1]), int(t[2])))
        return coal.Convex(verts, tris)
    if kind == "box":
        return coal.Box(*(2.0 * np.asarray(params["half_extents"], dtype=float)))
    if kind == "cylinder":
        return coal.Cylinder(float(params["radius"]), float(params["length"]))
    if kind == "capsule":
        return coal.Capsule(float(params["radius"]), float(params["length"]))
    if kind == "sphere":
        return coal.Sphere(float(params["radius"]))
    raise ValueError(f"no coal shape for {kind!r}")


def _bvh(coal, vertices: np.ndarray, faces: np.ndarray):
    bvh = coal.BVHModelOBBRSS()
    bvh.beginModel(len(faces), len(vertices))
    bvh.addVertices(np.ascontiguousarray(vertices, dtype=np.float64))
    bvh.addTriangles(np.ascontiguousarray(faces, dtype=np.int64))
    bvh.endModel()
    return bvh


_GEOMETRY_CACHE: dict = {}


def _mesh_model(urdf_path: str):
    """(RobotDescription, {link: [_Geom]}) of a mesh URDF, cached by path, size and mtime."""
    from simdplan.robots.description import read_urdf  # noqa: PLC0415

    st = os.stat(urdf_path)
    key = (urdf_path, st.st_size, st.st_mtime_ns)
    hit = _GEOMETRY_CACHE.get(key)
    if hit is None:
        coal = _coal()
        desc = read_urdf(urdf_path)
        geoms = _link_geometry(desc)
        shapes: dict[int, object] = {}
        for lst in geoms.values():
            for g in lst:
                if id(g.params) not in shapes:
                    shapes[id(g.params)] = _coal_shape(coal, g.kind, g.params)
                g.coal = shapes[id(g.params)]
        if len(_GEOMETRY_CACHE) > 8:
            _GEOMETRY_CACHE.clear()
        hit = _GEOMETRY_CACHE[key] = (desc, geoms)
    return hit


def _has_collision_geometry(urdf_path: str) -> bool:
    """True if the URDF has collision geometry other than spheres (meshes or primitives)."""
    from simdplan.robots.description import read_urdf  # noqa: PLC0415

    try:
        desc = read_urdf(urdf_path)
    except (ValueError, OSError):
        return False
    return any(link.other_geometry for link in desc.links.values())


def mesh_urdf_for(robot) -> str | None:
    """The URDF with the real collision geometry of ``robot``, or None if it is not known.

    A built-in robot (loaded from its spherized URDF in simdplan.robots.DATA_DIR) maps to the
    mesh URDF beside it (BUILTIN_MESH_URDFS); a robot whose own URDF has non-sphere collision
    geometry maps to that URDF. Robots spherized on the fly (``Robot.from_urdf(mesh.urdf)``) only
    know their cached sphere URDF: pass the original as ``mesh_urdf``.
    """
    from simdplan import robots as _robots  # noqa: PLC0415

    own = getattr(robot.description, "urdf_path", None)
    if own:
        own = os.path.abspath(own)
        for name, mesh in BUILTIN_MESH_URDFS.items():
            spherized, _srdf = _robots.builtin_paths(name)
            if os.path.exists(own) and os.path.exists(spherized) and os.path.samefile(own, spherized):
                return os.path.join(_robots.DATA_DIR, mesh)
        if os.path.isfile(own) and _has_collision_geometry(own):
            return own
    return None


# ----------------------------------------------------------------------------- kinematics (float64)
def _rotations(axis: np.ndarray, angles: np.ndarray) -> np.ndarray:
    """(S, 4, 4) rotations about the unit ``axis`` by ``angles`` (S,)."""
    k = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]], dtype=float)
    out = np.zeros((len(angles), 4, 4))
    out[:, :3, :3] = (np.eye(3) + np.sin(angles)[:, None, None] * k
                      + (1 - np.cos(angles))[:, None, None] * (k @ k))
    out[:, 3, 3] = 1.0
    return out


class _Kinematics:
    """Float64 forward kinematics of the mesh URDF's joints, driven by the robot's configuration."""

    def __init__(self, desc, robot) -> None:
        from simdplan.robots.description import MOVABLE  # noqa: PLC0415

        own_links = set(desc.links)
        joints = list(desc.joints)
        # links the robot has and the mesh URDF does not (attached objects), hanging from links it
        # has: the robot's own joints
        known, extra, pending = set(own_links), [], [j for j in robot.description.joints if j.child not in own_links]
        while True:
            grow = [j for j in pending if j.parent in known and j.child not in known]
            if not grow:
                break
            extra += grow
            known |= {j.child for j in grow}
            pending = [j for j in pending if j.child not in known]
        joints += extra
        self.extra_links = {j.child for j in extra}
        by_name = {j.name: j for j in joints}
        active = {n: i for i, n in enumerate(robot.joint_names)}
        missing = [n for n in active if n not in by_name]
        if missing:
            raise ValueError(f"the mesh URDF {desc.urdf_path} has no joints {missing} of robot {robot.name!r}: "
                             f"pass the mesh URDF of this robot as mesh_urdf")
        held = dict(robot.fixed_joint_values)

        def drive(j, depth=0):
            """('q', column, scale, offset) or ('c', value)."""
            if j.type not in MOVABLE or depth > 32:
                return ("c", 0.0)
            if j.name in active:
                return ("q", active[j.name], 1.0, 0.0)
            if j.mimic is not None and j.mimic.joint in by_name:
                d = drive(by_name[j.mimic.joint], depth + 1)
                if d[0] == "q":
                    return ("q", d[1], d[2] * j.mimic.multiplier, d[3] * j.mimic.multiplier + j.mimic.offset)
                return ("c", d[1] * j.mimic.multiplier + j.mimic.offset)
            return ("c", float(held.get(j.name, 0.0)))

        children: dict[str, list] = {}
        for j in joints:
            children.setdefault(j.parent, []).append(j)
        self.root = desc.root
        self.base = np.asarray(robot.base_pose, dtype=np.float64)
        self.steps = []  # (parent, child, type, origin, axis, drive) in topological order
        queue = [desc.root]
        while queue:
            link = queue.pop(0)
            for j in children.get(link, []):
                d = drive(j)
                origin = np.asarray(j.origin, dtype=np.float64)
                if d[0] == "c" and j.type in MOVABLE:
                    from simdplan.robots.kinematics import joint_motion  # noqa: PLC0415
                    origin = origin @ joint_motion(j.type, np.asarray(j.axis, float), d[1])
                    d = ("c", 0.0)
                kind = j.type if d[0] == "q" else "fixed"
                self.steps.append((link, j.child, kind, origin, np.asarray(j.axis, dtype=np.float64), d))
                queue.append(j.child)

    def poses(self, Q: np.ndarray) -> dict[str, np.ndarray]:
        """World pose (S, 4, 4) of every link for configurations Q (S, dof)."""
        S = len(Q)
        out = {self.root: np.broadcast_to(self.base, (S, 4, 4))}
        for parent, child, kind, origin, axis, d in self.steps:
            T = out[parent] @ origin
            if kind != "fixed":
                v = Q[:, d[1]] * d[2] + d[3]
                if kind == "prismatic":
                    M = np.broadcast_to(np.eye(4), (S, 4, 4)).copy()
                    M[:, :3, 3] = v[:, None] * axis
                else:
                    M = _rotations(axis, v)
                T = T @ M
            out[child] = T
        return out


# ----------------------------------------------------------------------------- obstacles
@dataclasses.dataclass
class _Static:
    obstacle: object
    coal: object
    transform: object
    lo: np.ndarray | None  # world AABB (None: a plane)
    hi: np.ndarray | None


def _transform(coal, M: np.ndarray):
    return coal.Transform3s(np.ascontiguousarray(M[:3, :3]), np.ascontiguousarray(M[:3, 3]))


def _obstacles(coal, env):
    """(coal obstacles, point clouds) built from the environment's parameters."""
    statics, clouds = [], []
    if env is None:
        return statics, clouds
    for ob in env:
        p = ob.params
        ident = coal.Transform3s()
        if ob.kind == "pointcloud":
            from scipy.spatial import cKDTree  # noqa: PLC0415

            pts = np.asarray(p["points"], dtype=np.float64)
            clouds.append((ob, pts, cKDTree(pts), float(p["point_radius"])))
            continue
        if ob.kind == "sphere":
            c, r = np.asarray(p["center"], float), float(p["radius"])
            statics.append(_Static(ob, coal.Sphere(r), coal.Transform3s(np.eye(3), c), c - r, c + r))
        elif ob.kind in ("capsule", "cylinder", "box"):
            R, pos = np.asarray(p["rotation"], float), np.asarray(p["position"], float)
            if ob.kind == "box":
                shape = _coal_shape(coal, "box", p)
                ext = np.abs(R) @ np.asarray(p["half_extents"], float)
            else:
                shape = _coal_shape(coal, ob.kind, p)
                r, h = float(p["radius"]), 0.5 * float(p["length"])
                ext = np.abs(R) @ np.array([r, r, h + (r if ob.kind == "capsule" else 0.0)])
            statics.append(_Static(ob, shape, coal.Transform3s(np.ascontiguousarray(R), pos), pos - ext, pos + ext))
        elif ob.kind == "plane":
            n = np.asarray(p["normal"], float)
            statics.append(_Static(ob, coal.Halfspace(n, float(p["offset"])), ident, None, None))
        elif ob.kind == "mesh":
            v = np.asarray(p["vertices"], dtype=np.float64)
            statics.append(_Static(ob, _bvh(coal, v, p["faces"]), ident, v.min(axis=0), v.max(axis=0)))
        elif ob.kind == "convex":
            v = np.asarray(p["vertices"], dtype=np.float64)
            hull = _hull(v, f"convex obstacle {ob.name!r}")
            statics.append(_Static(ob, _coal_shape(coal, "convex", hull), ident, v.min(axis=0), v.max(axis=0)))
        else:
            raise ValueError(f"verify_path does not know obstacle kind {ob.kind!r} ({ob.name!r})")
    return statics, clouds


# ----------------------------------------------------------------------------- point clouds
def _point_distance(g: _Geom, local: np.ndarray, need: float) -> np.ndarray:
    """Signed distance (m,) of points given in the element frame to the element; values are exact
    where they are below ``need`` (elsewhere only known to be >= need)."""
    if g.kind == "sphere":
        return np.linalg.norm(local, axis=1) - g.params["radius"]
    if g.kind == "box":
        q = np.abs(local) - g.params["half_extents"]
        return np.linalg.norm(np.maximum(q, 0.0), axis=1) + np.minimum(q.max(axis=1), 0.0)
    if g.kind in ("cylinder", "capsule"):
        r, h = g.params["radius"], 0.5 * g.params["length"]
        if g.kind == "capsule":
            z = np.clip(local[:, 2], -h, h)
            return np.linalg.norm(local - np.c_[np.zeros((len(local), 2)), z], axis=1) - r
        q = np.c_[np.linalg.norm(local[:, :2], axis=1) - r, np.abs(local[:, 2]) - h]
        return np.linalg.norm(np.maximum(q, 0.0), axis=1) + np.minimum(q.max(axis=1), 0.0)
    planes = g.params["planes"]
    sd = (local @ planes[:, :3].T - planes[:, 3]).max(axis=1)  # exact inside, a lower bound outside
    out = np.flatnonzero((sd > 0) & (sd < need))
    if len(out):
        import trimesh.triangles  # noqa: PLC0415

        tri = g.params["vertices"][g.params["triangles"]]  # (F, 3, 3)
        pts = local[out]
        P = np.repeat(pts, len(tri), axis=0)
        T = np.tile(tri, (len(pts), 1, 1))
        closest = trimesh.triangles.closest_point(T, P)
        sd[out] = np.linalg.norm(closest - P, axis=1).reshape(len(pts), len(tri)).min(axis=1)
    return sd


# ----------------------------------------------------------------------------- the check
def _check_inputs(robot, path, resolution, padding):
    from simdplan.planner.result import PlanResult  # noqa: PLC0415

    if isinstance(path, PlanResult):
        path = path.path
    arr = np.asarray(path)
    if arr.dtype == object or arr.dtype.kind not in "fiu":
        raise TypeError(f"path must be real numbers (float or int), got dtype {arr.dtype}")
    if arr.ndim != 2:
        hint = " (a single configuration q is path=[q])" if arr.ndim == 1 else ""
        raise ValueError(f"path must have shape (k, {robot.dof}) with k >= 1, got {arr.shape}{hint}")
    if arr.shape[0] < 1:
        raise ValueError(f"path is empty (shape {arr.shape}); nothing to verify")
    if arr.shape[1] != robot.dof:
        raise ValueError(f"path has {arr.shape[1]} values per waypoint but robot {robot.name!r} has {robot.dof} "
                         f"joints ({', '.join(robot.joint_names)})")
    arr = arr.astype(np.float64)
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        raise ValueError(f"path has non-finite values (NaN or inf) in {int(bad.sum())} waypoint(s), first at row "
                         f"{int(np.argmax(bad))}")
    step = DEFAULT_STEP if resolution is None else resolution
    try:
        step = float(step)
    except (TypeError, ValueError):
        raise TypeError(f"resolution must be a number (joint-space step, rad), got {resolution!r}") from None
    if not math.isfinite(step) or step <= 0:
        raise ValueError(f"resolution must be a finite joint-space step > 0 (rad), got {resolution!r}")
    try:
        pad = float(padding)
    except (TypeError, ValueError):
        raise TypeError(f"padding must be a number (metres), got {padding!r}") from None
    if not math.isfinite(pad) or pad < 0:
        raise ValueError(f"padding must be finite and >= 0 (metres), got {padding!r}")
    return arr, step, pad


def _samples(path: np.ndarray, step: float):
    """(segment (N,), t (N,)) of every sample: the start, then each edge's samples after its start."""
    if len(path) == 1:
        return np.zeros(1, dtype=np.int64), np.zeros(1)
    lengths = np.linalg.norm(np.diff(path, axis=0), axis=1)
    n = np.maximum(1, np.ceil(lengths / step - 1e-9).astype(np.int64))  # (no extra sample from rounding)
    seg = np.concatenate([[0], np.repeat(np.arange(len(n)), n)])
    t = np.concatenate([[0.0]] + [np.arange(1, k + 1) / k for k in n])
    return seg, t


def verify_path(robot, path, env=None, resolution: float | None = None, *, padding: float = 0.0,
                self_collision: bool = True, mesh_urdf=None, first_only: bool = True,
                geometry: str = "hull") -> PathVerification:
    """Check ``path`` (k, dof) against the robot's real collision geometry (see the module docstring).

    robot: a simdplan Robot. path: (k, dof) waypoints in ``robot.joint_names`` order (or a
    PlanResult). env: a simdplan.Environment (None: no obstacles). resolution: joint-space step
    between samples of an edge (Euclidean norm, rad; default DEFAULT_STEP = 0.01). padding: metres
    by which the robot is inflated (>= 0). self_collision: also check the robot's self-collision
    pairs. mesh_urdf: the URDF with the real collision geometry (default: found for the built-in
    robots, or the robot's own URDF if its collision geometry is not spheres). first_only: stop at
    the first colliding sample (default) or check every sample and collect every collision.
    geometry: "hull" (default: a link mesh is its convex hull; never misses a collision of the hull
    model, may raise false alarms on concave links; each collision says whether the mesh triangles
    confirm it) or "mesh" (a hull collision counts only if the mesh's own triangles collide too,
    coal BVH: no hull false alarms, but an obstacle wholly inside a link's mesh without touching its
    surface is missed; point clouds are still checked against the hulls).

    Returns a PathVerification. Raises TypeError / ValueError for a malformed path (shape, dtype,
    NaN, dof mismatch), resolution <= 0 or negative padding; ValueError if no mesh URDF is known for
    the robot or it does not match the robot's kinematics; ImportError if coal is missing.
    """
    t_start = time.perf_counter()
    path, step, pad = _check_inputs(robot, path, resolution, padding)
    if geometry not in ("hull", "mesh"):
        raise ValueError(f'geometry must be "hull" or "mesh", got {geometry!r}')
    mesh_mode = geometry == "mesh"
    coal = _coal()
    if mesh_urdf is None:
        mesh_urdf = mesh_urdf_for(robot)
        if mesh_urdf is None:
            raise ValueError(
                f"robot {robot.name!r} has no known collision meshes (its URDF "
                f"{robot.description.urdf_path or '?'} has only spheres): pass mesh_urdf='path/to/robot.urdf' "
                f"(the URDF with the real collision geometry and the same joints), or use a built-in robot "
                f"({', '.join(sorted(BUILTIN_MESH_URDFS))})")
    mesh_urdf = os.path.abspath(os.fspath(mesh_urdf))
    if not os.path.isfile(mesh_urdf):
        raise FileNotFoundError(f"mesh URDF not found: {mesh_urdf}")
    if env is not None and not hasattr(env, "_obstacles"):
        raise TypeError(f"env must be a simdplan.Environment or None, got {type(env).__name__}")
    desc, link_geoms = _mesh_model(mesh_urdf)
    kin = _Kinematics(desc, robot)
    _cross_check(kin, robot, mesh_urdf)

    geoms: list[_Geom] = []
    for link in [desc.root] + [s[1] for s in kin.steps]:
        if link in link_geoms:
            geoms.extend(link_geoms[link])
        elif link in kin.extra_links:  # attached object: the robot's own spheres
            for c in robot.description.links[link].spheres:
                o = np.eye(4)
                o[:3, 3] = c[:3]
                geoms.append(_Geom(link, "sphere", o, {"radius": float(c[3])}, np.zeros(3), float(c[3]),
                                   coal.Sphere(float(c[3]))))
    if not geoms:
        raise ValueError(f"{mesh_urdf}: no link has collision geometry")
    g_link = [g.link for g in geoms]
    g_origin = np.stack([g.origin for g in geoms])
    g_centre = np.stack([g.origin[:3, :3] @ g.centre + g.origin[:3, 3] for g in geoms])  # link frame
    g_radius = np.array([g.radius for g in geoms])

    statics, clouds = _obstacles(coal, env)
    bounded = [i for i, s in enumerate(statics) if s.lo is not None]
    planes = [i for i, s in enumerate(statics) if s.lo is None]
    lo = np.array([statics[i].lo for i in bounded]).reshape(-1, 3)
    hi = np.array([statics[i].hi for i in bounded]).reshape(-1, 3)
    pn = np.array([statics[i].obstacle.params["normal"] for i in planes], dtype=float).reshape(-1, 3)
    po = np.array([statics[i].obstacle.params["offset"] for i in planes], dtype=float)
    clo = np.array([c[1].min(axis=0) for c in clouds]).reshape(-1, 3)
    chi = np.array([c[1].max(axis=0) for c in clouds]).reshape(-1, 3)
    cpr = np.array([c[3] for c in clouds])

    pairs = []
    if self_collision:
        by_link: dict[str, list[int]] = {}
        for i, name in enumerate(g_link):
            by_link.setdefault(name, []).append(i)
        for a, b in robot.self_collision_pairs:
            pairs += [(i, j) for i in by_link.get(a, []) for j in by_link.get(b, [])]
    pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)

    req_env = _request(coal, pad)
    req_self = _request(coal, 2 * pad)
    slack = 1e-6 + CONTACT_TOLERANCE

    seg, tt = _samples(path, step)
    total = len(seg)
    found: list[PathCollision] = []
    n_found, checked = 0, total
    links_needed = sorted(set(g_link))
    g_index = [links_needed.index(n) for n in g_link]
    for start in range(0, total, _CHUNK):
        sl = slice(start, min(total, start + _CHUNK))
        s_seg, s_t = seg[sl], tt[sl]
        nxt = np.minimum(s_seg + 1, len(path) - 1)
        Q = path[s_seg] + s_t[:, None] * (path[nxt] - path[s_seg])
        poses = kin.poses(Q)
        link_T = np.stack([poses[name] for name in links_needed], axis=1)  # (S, L, 4, 4)
        LG = link_T[:, g_index]  # (S, G, 4, 4) pose of each geometry's link
        W = LG @ g_origin  # (S, G, 4, 4) pose of each geometry
        C = np.einsum("sgij,gj->sgi", LG[..., :3, :3], g_centre) + LG[..., :3, 3]  # bounding-sphere centres
        reach = g_radius + pad + slack
        # broad phase: (sample, geometry, obstacle) candidates
        gap = np.maximum(np.maximum(lo[None, None] - C[:, :, None], C[:, :, None] - hi[None, None]), 0.0)
        cand_b = np.linalg.norm(gap, axis=-1) < reach[None, :, None]  # (S, G, B)
        cand_p = (C @ pn.T - po) < reach[None, :, None]  # (S, G, P)
        gapc = np.maximum(np.maximum(clo[None, None] - C[:, :, None], C[:, :, None] - chi[None, None]), 0.0)
        cand_c = np.linalg.norm(gapc, axis=-1) < (reach[None, :, None] + cpr)  # (S, G, clouds)
        if len(pairs):
            dc = np.linalg.norm(C[:, pairs[:, 0]] - C[:, pairs[:, 1]], axis=-1)
            cand_s = dc < (g_radius[pairs[:, 0]] + g_radius[pairs[:, 1]] + 2 * pad + 2 * slack)
        else:
            cand_s = np.zeros((len(Q), 0), dtype=bool)
        busy = cand_b.any(axis=(1, 2)) | cand_p.any(axis=(1, 2)) | cand_c.any(axis=(1, 2)) | cand_s.any(axis=1)
        for s in np.flatnonzero(busy):
            tf_cache: dict[int, object] = {}

            def tf(g):
                if g not in tf_cache:
                    tf_cache[g] = _transform(coal, W[s, g])
                return tf_cache[g]

            hits = []  # (geometry, obstacle or None, other geometry or None, depth, mesh_confirmed)
            for cand, index in ((cand_b[s], bounded), (cand_p[s], planes)):
                for g, k in zip(*np.nonzero(cand)):
                    st = statics[index[k]]
                    d = _collide(coal, geoms[g].coal, tf(g), st.coal, st.transform, req_env)
                    if d is None:
                        continue
                    confirmed, dm = None, None
                    if geoms[g].kind == "convex" and (mesh_mode or len(found) + len(hits) < MAX_COLLISIONS):
                        dm = _collide(coal, geoms[g].bvh(coal), tf(g), st.coal, st.transform, req_env)
                        confirmed = dm is not None
                    if mesh_mode and confirmed is False:
                        continue
                    hits.append((g, st.obstacle, None, pad - _deciding(d, dm, mesh_mode), confirmed))
            for g, k in zip(*np.nonzero(cand_c[s])):
                ob, pts, tree, pr = clouds[k]
                need = pr + pad
                idx = tree.query_ball_point(C[s, g], geoms[g].radius + need + slack)
                if not idx:
                    continue
                local = (pts[idx] - W[s, g, :3, 3]) @ W[s, g, :3, :3]
                m = float(_point_distance(geoms[g], local, need).min())
                if m < need - CONTACT_TOLERANCE:
                    hits.append((g, ob, None, need - m, None))
            for p in np.flatnonzero(cand_s[s]):
                a, b = pairs[p]
                d = _collide(coal, geoms[a].coal, tf(a), geoms[b].coal, tf(b), req_self)
                if d is None:
                    continue
                confirmed, dm = None, None
                ga, gb = geoms[a], geoms[b]
                if "convex" in (ga.kind, gb.kind) and (mesh_mode or len(found) + len(hits) < MAX_COLLISIONS):
                    dm = _collide(coal, ga.bvh(coal) if ga.kind == "convex" else ga.coal, tf(a),
                                  gb.bvh(coal) if gb.kind == "convex" else gb.coal, tf(b), req_self)
                    confirmed = dm is not None
                if mesh_mode and confirmed is False:
                    continue
                hits.append((a, None, b, 2 * pad - _deciding(d, dm, mesh_mode), confirmed))
            if not hits:
                continue
            i = start + int(s)
            for g, ob, other, depth, confirmed in hits:
                n_found += 1
                if len(found) < MAX_COLLISIONS:
                    found.append(PathCollision(
                        sample=i, segment=int(seg[i]), t=float(tt[i]), q=Q[s].copy(), link=g_link[g],
                        obstacle_id=None if ob is None else ob.id, obstacle_name=None if ob is None else ob.name,
                        obstacle_kind=None if ob is None else ob.kind,
                        other_link=None if other is None else g_link[other],
                        depth=float(depth) if math.isfinite(depth) else None, mesh_confirmed=confirmed))
            if first_only:
                checked = i + 1
                break
        if first_only and found:
            break
    if found:
        found = _with_sphere_verdicts(robot, env, pad, found)
    first = None
    if found:
        at = [c for c in found if c.sample == found[0].sample]
        first = max(at, key=lambda c: -1.0 if c.depth is None else c.depth)
    return PathVerification(valid=not found, first_collision=first, checked_samples=checked, total_samples=total,
                            resolution=step, padding=pad, self_collision=bool(self_collision), mesh_urdf=mesh_urdf,
                            geometry=geometry, collisions=tuple(found), n_collisions=n_found,
                            seconds=time.perf_counter() - t_start)


def _with_sphere_verdicts(robot, env, pad: float, found: list) -> list:
    verdicts: dict[int, bool | None] = {}
    out = []
    for c in found:
        if c.sample not in verdicts:
            try:
                verdicts[c.sample] = not bool(robot.is_valid(c.q, env, padding=pad))
            except Exception:  # noqa: BLE001 - a diagnostic only (e.g. an obstacle kind the core cannot check yet)
                verdicts[c.sample] = None
        out.append(dataclasses.replace(c, spheres_collide=verdicts[c.sample]))
    return out


def _deciding(d_hull: float, d_mesh: float | None, mesh_mode: bool) -> float:
    """Signed distance to report: the hull's, or in mesh mode the mesh's when it is the shallower
    (the mesh lies inside its hull; coal's triangle-triangle depths can be far off, never deeper)."""
    return max(d_hull, d_mesh) if mesh_mode and d_mesh is not None else d_hull


def _request(coal, margin: float):
    """A collision request reporting pairs closer than ``margin`` (>= 0: coal refuses negative margins
    for BVH models) with their contacts; the caller keeps those below margin - CONTACT_TOLERANCE."""
    req = coal.CollisionRequest()
    req.security_margin = margin
    req.enable_contact = True
    req.num_max_contacts = 100_000  # every triangle pair of a BVH, so the deepest one is seen
    return req


def _collide(coal, g1, t1, g2, t2, req) -> float | None:
    """The signed distance (m) of a pair closer than the request's margin minus CONTACT_TOLERANCE
    (the deepest of coal's contacts; negative: penetration), or None if it is not that close."""
    res = coal.CollisionResult()
    if not coal.collide(g1, t1, g2, t2, req, res):
        return None
    contacts = res.getContacts()
    if not contacts:  # pragma: no cover - enable_contact makes coal report at least one
        return None
    d = float(min(c.penetration_depth for c in contacts))
    return d if d < req.security_margin - CONTACT_TOLERANCE else None


def _cross_check(kin: _Kinematics, robot, mesh_urdf: str) -> None:
    """The mesh URDF's kinematics must place the robot's links where the robot does."""
    lo, hi = robot.lower, robot.upper
    q = np.where(np.isfinite(lo) & np.isfinite(hi), 0.37 * lo + 0.63 * hi, 0.3)
    mine = kin.poses(q[None])
    theirs = robot.link_poses(q)
    worst, where = 0.0, None
    for name, T in theirs.items():
        if name in mine:
            err = float(np.abs(mine[name][0] - T).max())
            if err > worst:
                worst, where = err, name
    if worst > _KIN_TOLERANCE:
        raise ValueError(f"the mesh URDF {mesh_urdf} does not match robot {robot.name!r}: link {where} is placed "
                         f"{worst:.3g} apart (pose matrix entries) at q = {np.round(q, 3).tolist()}; pass the mesh "
                         f"URDF this robot was made from as mesh_urdf")
