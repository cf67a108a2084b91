"""The geometry ``simdplan.verify_path`` checks a path with, loaded for coal.

The robot's links from its mesh URDF (meshes as convex hulls, URDF primitives as they are; cached per
file), a float64 forward kinematics of that URDF driven by the robot's configuration (cross-checked
against ``robot.link_poses``), the obstacles of a simdplan Environment as coal shapes, and signed
distances of points to link geometry (point clouds). The check itself, its semantics and its results
are in simdplan.planner.verify.
"""

from __future__ import annotations

import dataclasses
import math
import os

import numpy as np

_KIN_TOLERANCE = 1e-4  # m / rad: mesh URDF kinematics vs the robot's, cross-check at one configuration

# Built-in robots: the original mesh URDF beside each spherized one (simdplan.robots.BUILTIN).
BUILTIN_MESH_URDFS = {
    "panda": "panda/panda.urdf",
    "ur5": "ur5/ur5.urdf",
}

_INSTALL_HINT = "verify_path needs the coal collision library: pip install simdplan[verify] (or pip install coal)"


def import_coal():
    try:
        import coal  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError(_INSTALL_HINT) from exc
    return coal



# ----------------------------------------------------------------------------- link geometry
@dataclasses.dataclass
class Geom:
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


def _link_geometry(desc) -> dict[str, list[Geom]]:
    """Every link's collision elements, from the URDF as simdplan.robots.description read it: its
    spheres and primitives as they are, its meshes as convex hulls (each file and scale once)."""
    from simdplan.collision.mesh import load_trimesh  # noqa: PLC0415

    out: dict[str, list[Geom]] = {}
    loaded: dict = {}  # (mesh file, scale) -> hull and triangles, shared by links using the same file
    for name, link in desc.links.items():
        geoms = []
        for x, y, z, r in link.spheres:
            origin = np.eye(4)
            origin[:3, 3] = (x, y, z)
            geoms.append(Geom(name, "sphere", origin, {"radius": float(r)}, np.zeros(3), float(r)))
        for p in link.collision_primitives:
            if p.kind == "box":
                bound = float(np.linalg.norm(p.params["half_extents"]))
            else:  # cylinder
                bound = math.hypot(p.params["radius"], p.params["length"] / 2)
            geoms.append(Geom(name, p.kind, np.asarray(p.origin, dtype=float), dict(p.params), np.zeros(3), bound))
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
            geoms.append(Geom(name, "convex", np.asarray(m.origin, dtype=float), params, centre, radius))
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


def mesh_model(urdf_path: str):
    """(RobotDescription, {link: [Geom]}) of a mesh URDF, cached by path, size and mtime."""
    from simdplan.robots.description import read_urdf  # noqa: PLC0415

    st = os.stat(urdf_path)
    key = (urdf_path, st.st_size, st.st_mtime_ns)
    hit = _GEOMETRY_CACHE.get(key)
    if hit is None:
        coal = import_coal()
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


def has_collision_geometry(urdf_path: str) -> bool:
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
        if os.path.isfile(own) and has_collision_geometry(own):
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


class Kinematics:
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


def coal_transform(coal, M: np.ndarray):
    return coal.Transform3s(np.ascontiguousarray(M[:3, :3]), np.ascontiguousarray(M[:3, 3]))


def coal_obstacles(coal, env):
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
def point_distance(g: Geom, local: np.ndarray, need: float) -> np.ndarray:
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


def cross_check(kin: Kinematics, robot, mesh_urdf: str) -> None:
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
