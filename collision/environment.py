"""The obstacle set a robot is checked against.

Frames and units: every obstacle is given in the world frame (the robot's base frame unless the
robot was given a base pose), metres and radians. A shape's pose is its centre. Semantics shared
by every check: a robot sphere collides with an obstacle iff its centre is *strictly* closer to the
obstacle than its radius (plus any padding); touching is free.

Shapes:
- sphere: centre and radius.
- capsule: the segment of total length ``length`` along the local z axis, swept by ``radius``
  (its round caps reach ``radius`` beyond the segment's ends).
- cylinder: solid, flat caps, axis along local z, total height ``length``. Exact, not a capsule.
- box: oriented, ``half_extents`` along its local x, y, z.
- plane: the half-space ``{p : normal . p <= offset}``; ``normal`` points into free space.
- mesh: a triangle mesh (STL/OBJ/PLY file, trimesh object, or vertices + faces) placed by a pose
  and an optional scale. A mesh is its *surface*: a robot sphere collides iff its centre is strictly
  closer to some triangle than its radius (+ padding). A sphere wholly inside a closed mesh touches
  no triangle and is NOT reported; model solids with ``convex`` (or convex pieces) instead.
  Tested exactly (sphere-triangle) through an AABB tree over the triangles (simdplan.collision.mesh).
- convex: the convex hull of points or of a mesh's vertices, placed by a pose: a solid. A robot sphere
  collides iff its signed distance to the hull is below its radius (+ padding); a centre inside the
  hull always collides. Face planes decide most spheres; the rest get an exact GJK distance.
- pointcloud: points, each a sphere of ``point_radius`` (>= 0, default 0: bare points). A robot
  sphere collides iff some point is strictly closer than its radius + padding + point_radius.
  Tested exactly through a Collision-Affording Point Tree (CAPT, Ramsey et al., RSS 2024), which
  answers query radii in a range [r_min, r_max] fixed when it is built. By default that range comes
  from the first robot checked against the environment (its smallest and largest sphere radius,
  plus padding) and is widened (the tree rebuilt once) when a later robot or padding needs more;
  given explicitly, a check that needs radii outside it raises ValueError. An explicit r_max that
  also covers the robot's link bounding spheres lets the checks cull whole links through the tree
  (faster checks, slower and larger build).

The builder validates every number on entry and compiles to the C++ core lazily: the compiled form
is built on first use after a change and then reused by every check.

Threads: an Environment may be shared. Checks and plans from any number of threads are safe,
including the very first ones (lazy builds take the environment's lock). Adding or removing
obstacles while other threads check or plan is safe too: each call uses the obstacles as they were
when it took its compiled snapshot, at its start; the change applies to calls that start after it.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import threading
from typing import Iterator

import numpy as np

from simdplan import _core
from simdplan.collision.pointcloud import check_tree_cloud
from simdplan.transforms import matrix_to_quat, resolve_pose
from simdplan.validation import as_finite, reject_text

KINDS = ("sphere", "capsule", "cylinder", "box", "plane", "pointcloud", "mesh", "convex")
# Order of the C++ core's obstacle kinds (ObstacleKind in environment_view.hh) in contact reports.
_CORE_KIND_INDEX = {k: i for i, k in enumerate(KINDS)}
PRIMITIVES = KINDS[:5]  # the shapes with a closed-form test and a flat record (not clouds, meshes, hulls)
# Floats per flat record of each primitive, from the core that reads them (geom/records.hh there).
_RECORD_FLOATS = _core.obstacle_record_floats()
# NOTE: a tree built for a robot covers its radii with this relative slack, so float32 rounding of
# "radius + padding" in the core never lands just outside the range.
_RANGE_SLACK = 1e-5


def _locked(method):
    """Runs an Environment method under the environment's lock (re-entrant: methods call each other)."""
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return locked


class Snapshot:
    """A compiled environment (``model``, the C++ EnvironmentModel) with what it answers as it is:
    robot sphere radii in [r_lo, r_hi] metres against its point clouds (all radii when it has
    none; none while a cloud has no tree), and clearance queries (``distances``: every cloud's
    nearest-point tree is in it). Replaced as a whole, never changed, so readers need no lock;
    contact reports from ``model`` name their obstacles through ``obstacle``, from the same
    snapshot, whatever changed since."""

    __slots__ = ("model", "r_lo", "r_hi", "distances", "_by_kind", "_trees")

    def __init__(self, model, r_lo: float, r_hi: float, distances: bool, by_kind: dict, trees: dict) -> None:
        self.model, self.r_lo, self.r_hi, self.distances = model, r_lo, r_hi, distances
        self._by_kind, self._trees = by_kind, trees

    def obstacle(self, core_kind: int, record: int) -> "Obstacle":
        """The obstacle behind a C++ contact report (the core's kind index, its record index)."""
        return self._by_kind[KINDS[core_kind]][record]

    def obstacles(self, kind: str) -> list["Obstacle"]:
        """The obstacles of one kind (one of KINDS) in this snapshot, in record order."""
        return self._by_kind[kind]

    def point_tree(self, obstacle_id: int):
        """The point tree (``simdplan._core.CaptTree``) of point cloud ``obstacle_id`` in this snapshot."""
        return self._trees[obstacle_id]


@dataclasses.dataclass(frozen=True)
class Obstacle:
    """One obstacle as given: ``kind`` is one of KINDS; ``params`` holds its validated numbers."""

    id: int
    kind: str
    name: str
    params: dict

    def record(self) -> np.ndarray:
        """The flat float record the C++ core reads (layouts in cpp/include/simdplan/geom/records.hh)."""
        # PERF: plain lists, not np.r_: compiling a 21-obstacle MotionBenchMaker scene 272 -> 140 us
        p = self.params
        if self.kind == "sphere":
            return np.array([*p["center"], p["radius"]])
        if self.kind in ("capsule", "cylinder"):
            axis = p["rotation"][:, 2]
            return np.array([*p["position"], *axis, 0.5 * p["length"], p["radius"]])
        if self.kind == "box":
            rot = p["rotation"]
            return np.array([*p["position"], *rot[:, 0], *rot[:, 1], *rot[:, 2], *p["half_extents"], 0.0])
        if self.kind == "plane":
            return np.array([*p["normal"], p["offset"]])
        raise ValueError(f"a {self.kind} obstacle has no flat record (the core reads its tree or hull)")


def _positive(value, name: str, allow_zero: bool = False) -> float:
    reject_text(value, name)
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite, got {value!r}")
    return v


def _mesh_arrays(mesh, what: str) -> tuple[np.ndarray, np.ndarray, str | None]:
    """(vertices (n, 3) float64, faces (m, 3) int64, source file or None) of any mesh input."""
    import os

    from simdplan.collision.mesh import TriangleMesh, as_trimesh, read_mesh_file

    if isinstance(mesh, (str, os.PathLike)):
        path = os.path.abspath(os.fspath(mesh))
        v, f = read_mesh_file(path)
        return v, f, path
    if isinstance(mesh, TriangleMesh):
        return np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64), None
    if isinstance(mesh, tuple) and len(mesh) == 2:
        v = as_finite(mesh[0], (-1, 3), f"{what} vertices")
        f = np.asarray(mesh[1])
        if f.ndim != 2 or f.shape[1] != 3 or len(f) == 0 or not np.issubdtype(f.dtype, np.integer):
            raise ValueError(f"{what} faces must be a non-empty (m, 3) integer array, got shape {f.shape}, dtype {f.dtype}")
        if f.min() < 0 or f.max() >= len(v):
            raise ValueError(f"{what} faces index vertices outside [0, {len(v)})")
        return v, f.astype(np.int64), None
    try:
        import trimesh
    except ImportError:  # pragma: no cover - trimesh is a dependency
        trimesh = None
    if trimesh is not None and isinstance(mesh, (trimesh.Trimesh, trimesh.Scene)):
        mesh = as_trimesh(mesh)
        if len(mesh.faces) == 0:
            raise ValueError(f"{what}: the trimesh object holds no triangles")
        return (as_finite(mesh.vertices, (-1, 3), f"{what} vertices"), np.asarray(mesh.faces, dtype=np.int64), None)
    raise TypeError(f"{what} must be a mesh file path, a trimesh object, a TriangleMesh or a (vertices, faces) "
                    f"pair, got {type(mesh).__name__}")


def _mesh_pose(position, quat, euler, scale, what: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(position (3,), rotation (3, 3), scale (3,)) of a mesh or hull; no pose means identity."""
    if position is None:
        if quat is not None or euler is not None:
            raise ValueError(f"{what}: an orientation needs a position")
        pos, rot = np.zeros(3), np.eye(3)
    else:
        pos, rot = resolve_pose(position, quat, euler, what)
    reject_text(scale, f"{what} scale")
    sc = np.asarray(scale, dtype=np.float64)
    if sc.ndim == 0:
        sc = np.full(3, float(sc))
    if sc.shape != (3,) or not np.all(np.isfinite(sc)) or np.any(sc <= 0):
        raise ValueError(f"{what} scale must be a positive finite number or three of them, got {scale!r}")
    return pos, rot, sc


class Environment:
    """A set of obstacles in the world frame; see the module docstring for shapes and semantics.

    Every ``add_*`` returns an integer id, unique within this environment, for ``remove``.
    Orientation may be given as a quaternion ``quat=[x, y, z, w]``, a (3, 3) rotation as ``quat``,
    Euler angles ``euler=[rx, ry, rz]`` (extrinsic xyz, as URDF rpy), or by passing a (4, 4) pose
    as ``position``. With none of these, the shape is axis-aligned.
    """

    def __init__(self) -> None:
        # NOTE: every change and every lazy build holds it; readers take `snapshot` (an immutable
        # snapshot) with one attribute read and need no lock
        self._lock = threading.RLock()
        self._obstacles: dict[int, Obstacle] = {}
        self._next_id = 0
        # the compiled model and what its point-cloud trees answer, replaced as one object (see Snapshot)
        self.snapshot: Snapshot | None = None
        self._trees: dict[int, object] = {}  # point cloud id -> its built _core.CaptTree (kept across compiles)
        self._nearest: dict[int, object] = {}  # point cloud id -> its _core.NearestTree (distance queries)
        self._shapes: dict[int, object] = {}  # mesh id -> TriangleMesh (world frame); convex id -> ConvexHull (local)
        self._cloud_ids: list[int] = []  # point clouds, in insertion order (every check asks for them)

    def __getstate__(self) -> dict:
        """Pickling (e.g. Ray's object store, processes) carries the obstacles as given and their
        meshes and hulls; point-cloud trees are rebuilt on first use, as after any change."""
        with self._lock:
            return {"obstacles": [(o.id, o.kind, o.name, o.params) for o in self._obstacles.values()],
                    "next_id": self._next_id, "shapes": dict(self._shapes)}

    def __setstate__(self, state: dict) -> None:
        self.__init__()
        for oid, kind, name, params in state["obstacles"]:
            self._obstacles[oid] = Obstacle(oid, kind, name, params)
            if kind == "pointcloud":
                self._cloud_ids.append(oid)
        self._shapes.update(state["shapes"])
        self._next_id = state["next_id"]

    # ----- building -----
    @_locked
    def _add(self, kind: str, name: str | None, params: dict) -> int:
        oid = self._next_id
        self._next_id += 1
        self._obstacles[oid] = Obstacle(oid, kind, name if name is not None else f"{kind}{oid}", params)
        if kind == "pointcloud":
            self._cloud_ids.append(oid)
        self._invalidate()
        return oid

    @_locked
    def add_sphere(self, center, radius, *, name: str | None = None) -> int:
        """Sphere with ``center`` (3,) and ``radius`` > 0, metres."""
        c = as_finite(center, (3,), "sphere center")
        return self._add("sphere", name, {"center": c, "radius": _positive(radius, "sphere radius")})

    @_locked
    def add_capsule(self, position, quat=None, radius=None, length=None, *, euler=None, name: str | None = None) -> int:
        """Capsule: segment of ``length`` (>= 0) along local z through ``position``, swept by ``radius``."""
        pos, rot = resolve_pose(position, quat, euler, "capsule")
        return self._add("capsule", name, {"position": pos, "rotation": rot,
                                           "radius": _positive(radius, "capsule radius"),
                                           "length": _positive(length, "capsule length", allow_zero=True)})

    @_locked
    def add_cylinder(self, position, quat=None, radius=None, length=None, *, euler=None, name: str | None = None) -> int:
        """Solid flat-capped cylinder, axis local z, total height ``length``, centred at ``position``."""
        pos, rot = resolve_pose(position, quat, euler, "cylinder")
        return self._add("cylinder", name, {"position": pos, "rotation": rot,
                                            "radius": _positive(radius, "cylinder radius"),
                                            "length": _positive(length, "cylinder length")})

    @_locked
    def add_box(self, position, quat=None, half_extents=None, *, euler=None, name: str | None = None) -> int:
        """Oriented box centred at ``position`` with ``half_extents`` (3,) along its local axes."""
        pos, rot = resolve_pose(position, quat, euler, "box")
        if half_extents is None:
            raise ValueError("box half_extents is required")
        he = as_finite(half_extents, (3,), "box half_extents")
        if np.any(he <= 0):
            raise ValueError(f"box half_extents must all be > 0, got {he.tolist()}")
        return self._add("box", name, {"position": pos, "rotation": rot, "half_extents": he})

    @_locked
    def add_plane(self, normal, offset=0.0, *, name: str | None = None) -> int:
        """Half-space ``{p : normal . p <= offset}`` (normal normalised; it points into free space)."""
        n = as_finite(normal, (3,), "plane normal")
        # math.hypot scales before squaring: np.linalg.norm of [1e200, 0, 0] overflows to inf and
        # would leave a zero normal, a plane that holds every point
        norm = math.hypot(*n)
        if norm < 1e-9:
            raise ValueError("plane normal must be non-zero")
        off = float(as_finite(offset, (), "plane offset"))
        return self._add("plane", name, {"normal": n / norm, "offset": off / norm})

    @_locked
    def add_pointcloud(self, points, point_radius: float = 0.0, r_min: float | None = None,
                       r_max: float | None = None, *, name: str | None = None) -> int:
        """Point cloud: ``points`` (n, 3), world frame, metres, n >= 1, all finite and within 1e12 m.

        At most 2^27 points (what a point tree can hold; above 1M a UserWarning advises thinning
        with ``simdplan.collision.filter_pointcloud``).

        ``point_radius`` (>= 0) inflates every point. ``r_min`` / ``r_max``: the robot sphere radii
        (padding included) the cloud's CAPT must answer; None takes them from the robot at the first
        check (see the module docstring). The points are copied as float32, the precision of the
        checks; a tree is built once per range and never copied per check or per plan. Distance
        queries (certified Link, clearances) also build, on first use, a nearest-point tree and a
        distance floor grid of about 128 bytes per distinct point (at most 4 MiB; 6-8 ms for 14k
        points), which gives lower bounds of the distance by one look-up before any search.
        """
        pts = np.asarray(points)
        if pts.dtype == object or not (np.issubdtype(pts.dtype, np.floating) or np.issubdtype(pts.dtype, np.integer)):
            raise TypeError(f"point cloud points must be a numeric (n, 3) array, got dtype {pts.dtype}")
        if pts.ndim != 2 or pts.shape[1] != 3 or pts.shape[0] < 1:
            raise ValueError(f"point cloud points must have shape (n, 3) with n >= 1, got {pts.shape}")
        # the checks the tree build would fail on at the first check, possibly minutes later
        pts = check_tree_cloud(pts, "point cloud points")
        pr = _positive(point_radius, "point_radius", allow_zero=True)
        rmin = None if r_min is None else _positive(r_min, "r_min", allow_zero=True)
        rmax = None if r_max is None else _positive(r_max, "r_max")
        if rmin is not None and rmax is not None and rmin > rmax:
            raise ValueError(f"r_min ({rmin}) must not exceed r_max ({rmax})")
        pts.flags.writeable = False
        return self._add("pointcloud", name, {"points": pts, "point_radius": pr, "r_min": rmin, "r_max": rmax})

    @_locked
    def add_mesh(self, mesh, position=None, quat=None, *, euler=None, scale=1.0, name: str | None = None) -> int:
        """Triangle mesh obstacle (a surface; see the module docstring).

        ``mesh``: a path to a file trimesh reads (STL, OBJ, PLY, ...; units taken as metres), a
        ``trimesh.Trimesh`` / ``trimesh.Scene``, a :class:`simdplan.collision.TriangleMesh`, or a
        ``(vertices (n, 3), faces (m, 3))`` pair. The pose places the mesh's own frame in the world
        (default: identity, i.e. the vertices are world coordinates); ``scale`` (> 0, scalar or (3,))
        multiplies the vertices in the mesh frame before the pose. The world-frame triangles are
        compiled once into an AABB tree (float32). Returns the obstacle id.
        """
        from simdplan.collision.mesh import TriangleMesh

        local, faces, source = _mesh_arrays(mesh, "mesh")
        pos, rot, sc = _mesh_pose(position, quat, euler, scale, "mesh")
        world = (local * sc) @ rot.T + pos
        shape = TriangleMesh(world, faces)
        oid = self._add("mesh", name, {"position": pos, "rotation": rot, "scale": sc, "source": source,
                                       "local_vertices": local, "faces": np.asarray(shape.faces),
                                       "vertices": world})
        self._shapes[oid] = shape
        return oid

    @_locked
    def add_convex(self, points_or_mesh, position=None, quat=None, *, euler=None, scale=1.0,
                   name: str | None = None) -> int:
        """Convex obstacle: the convex hull (a solid) of ``points_or_mesh``, placed by a pose.

        ``points_or_mesh``: points (n, 3) (n >= 4, spanning three dimensions), a mesh file path, a
        ``trimesh`` object, a :class:`TriangleMesh`, a ``(vertices, faces)`` pair (its vertices are
        used) or a :class:`simdplan.collision.ConvexHull`. Pose and ``scale`` as in :meth:`add_mesh`.
        The hull is computed by qhull (scipy) in the obstacle's frame; params hold its vertices and
        outward triangles, in that frame (``local_vertices``) and in the world (``vertices``).
        """
        from simdplan.collision.convex import ConvexHull

        if isinstance(points_or_mesh, ConvexHull):
            local, source = np.asarray(points_or_mesh.vertices, dtype=np.float64), None
        elif isinstance(points_or_mesh, np.ndarray) or (isinstance(points_or_mesh, list) or (
                isinstance(points_or_mesh, tuple) and len(points_or_mesh) != 2)):
            local, source = as_finite(points_or_mesh, (-1, 3), "convex points"), None
        else:
            local, _faces, source = _mesh_arrays(points_or_mesh, "convex")
        pos, rot, sc = _mesh_pose(position, quat, euler, scale, "convex")
        hull = ConvexHull.from_points(local * sc)
        verts = np.asarray(hull.vertices, dtype=np.float64)
        tris = np.asarray(hull.triangles)  # outward (qhull's orientation)
        oid = self._add("convex", name, {"position": pos, "rotation": rot, "scale": sc, "source": source,
                                         "local_vertices": verts, "faces": tris, "vertices": verts @ rot.T + pos})
        self._shapes[oid] = hull
        return oid

    @_locked
    def remove(self, obstacle_id: int) -> None:
        """Remove the obstacle with this id (KeyError if there is none, TypeError if it is not an int)."""
        # bool is an int subclass (True == 1) and a string never matches: both would remove the
        # wrong obstacle or report a present one as missing
        if isinstance(obstacle_id, bool) or not isinstance(obstacle_id, (int, np.integer)):
            raise TypeError(f"obstacle_id must be an int, the id an add_* call returned, got "
                            f"{type(obstacle_id).__name__} {obstacle_id!r}")
        obstacle_id = int(obstacle_id)
        if obstacle_id not in self._obstacles:
            raise KeyError(f"no obstacle with id {obstacle_id} in this environment")
        if self._obstacles.pop(obstacle_id).kind == "pointcloud":
            self._cloud_ids.remove(obstacle_id)
        self._trees.pop(obstacle_id, None)
        self._nearest.pop(obstacle_id, None)
        self._shapes.pop(obstacle_id, None)
        self._invalidate()

    @_locked
    def clear(self) -> None:
        """Remove every obstacle."""
        self._obstacles.clear()
        self._cloud_ids.clear()
        self._trees.clear()
        self._nearest.clear()
        self._shapes.clear()
        self._invalidate()

    # ----- reading -----
    def __len__(self) -> int:
        return len(self._obstacles)

    @_locked
    def __iter__(self) -> Iterator[Obstacle]:
        return iter(list(self._obstacles.values()))

    def __getitem__(self, obstacle_id: int) -> Obstacle:
        return self._obstacles[obstacle_id]

    @_locked
    def __repr__(self) -> str:
        counts = {k: 0 for k in KINDS}
        for o in self._obstacles.values():
            counts[o.kind] += 1
        plural = {"sphere": "spheres", "capsule": "capsules", "cylinder": "cylinders", "box": "boxes", "plane": "planes",
                  "pointcloud": "point clouds", "mesh": "meshes", "convex": "convex hulls"}
        singular = {"pointcloud": "point cloud", "convex": "convex hull"}
        parts = ", ".join(f"{v} {singular.get(k, k) if v == 1 else plural[k]}" for k, v in counts.items() if v)
        return f"Environment({parts or 'empty'})"

    @_locked
    def to_dicts(self) -> list[dict]:
        """Obstacles as plain dicts (position + quaternion [x, y, z, w]), e.g. for scene files.

        A point cloud's dict holds its ``points`` as a read-only (n, 3) float32 array. A mesh or
        convex hull gives its ``file`` (absolute path) when it was loaded from one, else its
        ``vertices`` (n, 3) and ``faces`` (m, 3) arrays in its own frame, with ``position``,
        ``quat`` and ``scale`` (a float, or a list of 3)."""
        out = []
        for o in self._obstacles.values():
            p = o.params
            d = {"type": o.kind, "name": o.name}
            if o.kind == "pointcloud":
                d.update(points=p["points"], point_radius=p["point_radius"])
                d.update({k: p[k] for k in ("r_min", "r_max") if p[k] is not None})
            elif o.kind == "sphere":
                d.update(position=p["center"].tolist(), radius=p["radius"])
            elif o.kind == "plane":
                d.update(normal=p["normal"].tolist(), offset=p["offset"])
            elif o.kind in ("mesh", "convex"):
                if p["source"] is not None:
                    d["file"] = p["source"]
                    sc = p["scale"]
                    d["scale"] = float(sc[0]) if np.all(sc == sc[0]) else sc.tolist()
                else:  # the vertices as given (a convex hull's are already scaled)
                    d.update(vertices=p["local_vertices"] * (p["scale"] if o.kind == "mesh" else 1.0),
                             faces=p["faces"])
                d.update(position=p["position"].tolist(), quat=matrix_to_quat(p["rotation"]).tolist())
            else:
                d.update(position=p["position"].tolist(), quat=matrix_to_quat(p["rotation"]).tolist())
                if o.kind == "box":
                    d["half_extents"] = p["half_extents"].tolist()
                else:
                    d.update(radius=p["radius"], length=p["length"])
            out.append(d)
        return out

    # ----- compiled form -----
    @_locked
    def _model(self):
        """The C++ EnvironmentModel for the current obstacles (built once per change, as ``snapshot``)."""
        if self.snapshot is None:
            groups: dict[str, list] = {k: [] for k in PRIMITIVES}
            index: dict[str, list[int]] = {k: [] for k in KINDS}
            trees, cloud_tree, aabbs, radii, nearest, cloud_nearest = [], [], [], [], [], []
            meshes, hulls, poses = [], [], []
            for o in self._obstacles.values():
                index[o.kind].append(o.id)
                if o.kind in PRIMITIVES:
                    groups[o.kind].append(o.record())
                    continue
                if o.kind == "mesh":
                    meshes.append(self._shapes[o.id].core)
                    continue
                if o.kind == "convex":
                    hulls.append(self._shapes[o.id].core)
                    poses.append(np.r_[o.params["rotation"].ravel(), o.params["position"]])
                    continue
                p = o.params
                tree = self._trees.get(o.id)
                if tree is None and p["r_min"] is not None and p["r_max"] is not None:
                    tree = self._build_tree(o, p["r_min"], p["r_max"])
                cloud_tree.append(len(trees) if tree is not None else -1)
                if tree is not None:
                    trees.append(tree)
                near = self._nearest.get(o.id)
                cloud_nearest.append(len(nearest) if near is not None else -1)
                if near is not None:
                    nearest.append(near)
                # PERF: column by column; numpy's axis-0 reduction of an (n, 3) array took 0.25 ms
                # per call for 8k points, 10x longer (0.7 ms of the first plan call on a cloud)
                pts = p["points"]
                aabbs.append([pts[:, k].min() for k in range(3)] + [pts[:, k].max() for k in range(3)])
                radii.append(p["point_radius"])
            arrays = [np.asarray(groups[k], dtype=np.float32).reshape(-1, _RECORD_FLOATS[k]) for k in PRIMITIVES]
            model = _core.EnvironmentModel(*arrays, trees, cloud_tree,
                                           np.asarray(aabbs, dtype=np.float32).reshape(-1, 6),
                                           np.asarray(radii, dtype=np.float32), nearest, cloud_nearest,
                                           meshes, hulls, np.asarray(poses, dtype=np.float64).reshape(-1, 12))
            self.snapshot = self._describe(model, index)
        return self.snapshot.model

    def _invalidate(self) -> None:
        """The obstacles or their trees changed: the next use compiles a new snapshot."""
        self.snapshot = None

    def _describe(self, model, index: dict[str, list[int]]) -> Snapshot:
        """What ``model`` (just compiled from the current obstacles and trees) answers without a rebuild."""
        lo, hi = -math.inf, math.inf
        for i in self._cloud_ids:
            tree = self._trees.get(i)
            if tree is None:
                lo, hi = math.inf, -math.inf  # nothing yet
                break
            lo, hi = max(lo, tree.r_min), min(hi, tree.r_max)
        by_kind = {kind: [self._obstacles[i] for i in ids] for kind, ids in index.items()}
        return Snapshot(model, lo, hi, all(i in self._nearest for i in self._cloud_ids), by_kind, dict(self._trees))

    def compiled(self, radii: tuple[float, float] | None = None, distances: bool = False):
        """The C++ model of the obstacles as they are now, for simdplan's checks (an immutable
        snapshot: later changes make a new one). ``radii`` (lo, hi), metres: every point cloud's
        tree must answer robot spheres of these radii (built or widened now if not). ``distances``:
        every point cloud's nearest-point tree is built too (clearance queries, certified Link).
        Thread-safe; without a needed build it takes no lock."""
        return self.compiled_snapshot(radii, distances).model

    def compiled_snapshot(self, radii: tuple[float, float] | None = None, distances: bool = False) -> Snapshot:
        """As ``compiled``, with what the model answers and how its contact reports name obstacles."""
        s = self.snapshot
        if (s is not None and (radii is None or (s.r_lo <= radii[0] and radii[1] <= s.r_hi))
                and (s.distances or not distances)):
            return s
        r_lo, r_hi = (None, None) if radii is None else radii
        return self._snapshot(r_lo, r_hi, distances)

    def _build_tree(self, o: Obstacle, r_min: float, r_max: float):
        p = o.params
        try:
            tree = _core.CaptTree(p["points"], float(r_min), float(r_max), float(p["point_radius"]))
        except ValueError as e:
            raise ValueError(f"point cloud {o.name!r} (id {o.id}): {e}") from None
        self._trees[o.id] = tree
        return tree

    @_locked
    def _fit_clouds(self, r_lo: float, r_hi: float) -> None:
        """Makes every point cloud answer robot sphere radii [r_lo, r_hi]: clouds with a range from
        the robot get a tree covering it (widened if one exists); an explicit range that does not
        cover it is an error naming the cloud."""
        # PERF: plan() and every check entry call this; scenes without clouds return at once
        if not self._cloud_ids:
            return
        changed = False
        for o in (self._obstacles[i] for i in self._cloud_ids):
            p = o.params
            tree = self._trees.get(o.id)
            have = (tree.r_min, tree.r_max) if tree is not None else None
            if have is not None and have[0] <= r_lo and r_hi <= have[1]:
                continue
            explicit_lo, explicit_hi = p["r_min"], p["r_max"]
            lo = r_lo * (1 - _RANGE_SLACK) if explicit_lo is None else explicit_lo
            hi = r_hi * (1 + _RANGE_SLACK) if explicit_hi is None else explicit_hi
            if have is not None:  # widen: the tree keeps answering what it answered before
                lo, hi = min(lo, have[0]) if explicit_lo is None else lo, max(hi, have[1]) if explicit_hi is None else hi
            if not (lo <= r_lo and r_hi <= hi):
                raise ValueError(f"point cloud {o.name!r} (id {o.id}) was given r_min={explicit_lo}, r_max={explicit_hi}, "
                                 f"but the robot's spheres with padding have radii in [{r_lo:.6g}, {r_hi:.6g}] m; "
                                 "give a range that covers them, or leave r_min / r_max as None")
            self._build_tree(o, lo, hi)
            changed = True
        if changed:
            self._invalidate()

    @_locked
    def _ensure_nearest(self) -> None:
        """Builds the nearest-point tree of every point cloud that lacks one (distance queries
        need them; collision checks do not, so they are built on first use)."""
        missing = [self._obstacles[i] for i in self._cloud_ids if i not in self._nearest]
        for o in missing:
            # the floor grid gives certified Link's clearance queries lower bounds without a search
            self._nearest[o.id] = _core.NearestTree(o.params["points"], distance_floor=True)
        if missing:
            self._invalidate()

    @_locked
    def _snapshot(self, r_lo: float | None = None, r_hi: float | None = None, nearest: bool = False):
        """The compiled model after fitting the point-cloud trees to radii [r_lo, r_hi] (if given) and
        building every nearest-point tree (if ``nearest``), as one consistent snapshot."""
        if r_lo is not None:
            self._fit_clouds(r_lo, r_hi)
        if nearest:
            self._ensure_nearest()
        self._model()
        return self.snapshot
