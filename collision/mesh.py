"""Triangle meshes as obstacles: exact sphere-vs-triangle queries through an AABB tree (BVH mid-phase).

A :class:`TriangleMesh` is built once from vertices and faces (or a trimesh object, or a file) and
compiled into the C++ layout of ``cpp/include/simdplan/bvh/``: a binary AABB tree over the
triangles' boxes, built as MuJoCo's mid-phase (split along the longest axis into two halves of equal
triangle count, one triangle per leaf), and one precomputed record per triangle for the exact
point-triangle distance.

A mesh is its triangles, a surface: a sphere collides with it when its centre is strictly closer
to some triangle than its radius (touching is free, as everywhere in simdplan). A sphere wholly
inside a closed mesh does not touch the surface and does not collide; there is no "solid" mode.

Frames and units: vertices, centres and closest points are world-frame coordinates in metres.
Precision: vertices and queries are stored as float32 and distances computed in float32; the tree
prunes conservatively, so its answers equal those of a brute force over every triangle with the
same float32 arithmetic (``collides(..., method="brute")``). Against exact float64 geometry a
distance is within about 1e-6 (d + size of the triangle) metres.
"""

from __future__ import annotations

import os

import numpy as np

from simdplan import _core
from simdplan.collision.pointcloud import MAX_COORDINATE, check_max_distance

COLLIDE_METHODS = ("auto", "single", "packet", "brute")


def _rows(value, name: str) -> np.ndarray:
    """(k, 3) float32, finite, |x| <= 1e12 (a (3,) row becomes (1, 3))."""
    a = np.asarray(value, dtype=np.float64)
    if a.shape == (3,):
        a = a.reshape(1, 3)
    if a.ndim != 2 or a.shape[1] != 3:
        raise ValueError(f"{name} must have shape (k, 3) or (3,), got {np.shape(value)}")
    bad = ~(np.abs(a) <= MAX_COORDINATE).all(axis=1)
    if bad.any():
        raise ValueError(f"{name} must be finite with |coordinate| <= 1e12; row {int(np.argmax(bad))} is not")
    return np.ascontiguousarray(a, dtype=np.float32)


def _radii(value, k: int) -> np.ndarray:
    r = np.asarray(value, dtype=np.float64)
    if r.ndim == 0:
        r = np.full(k, float(r))
    if r.shape != (k,):
        raise ValueError(f"radii must be a scalar or have shape ({k},), got {np.shape(value)}")
    bad = ~((r >= 0) & (r <= MAX_COORDINATE))
    if bad.any():
        i = int(np.argmax(bad))
        raise ValueError(f"radii must be finite and >= 0; radius {i} is {float(r[i])!r}")
    return np.ascontiguousarray(r, dtype=np.float32)


def _boxes(value) -> np.ndarray:
    b = np.asarray(value, dtype=np.float64)
    if b.ndim != 2 or b.shape[1] != 6:
        raise ValueError(f"boxes must have shape (m, 6) (lo xyz, hi xyz), got {np.shape(value)}")
    bad = ~(np.abs(b) <= MAX_COORDINATE).all(axis=1) | (b[:, :3] > b[:, 3:]).any(axis=1)
    if bad.any():
        raise ValueError(f"boxes must be finite with lo <= hi; box {int(np.argmax(bad))} is not")
    lo = b[:, :3].astype(np.float32)
    hi = b[:, 3:].astype(np.float32)
    # NOTE: rounded outwards, so the float32 box still contains the float64 one
    lo = np.where(lo.astype(np.float64) > b[:, :3], np.nextafter(lo, np.float32(-np.inf)), lo)
    hi = np.where(hi.astype(np.float64) < b[:, 3:], np.nextafter(hi, np.float32(np.inf)), hi)
    return np.ascontiguousarray(np.c_[lo, hi], dtype=np.float32)


def as_trimesh(mesh):
    """``mesh`` itself, or for a ``trimesh.Scene`` all its geometry concatenated in the scene's base
    frame (any other object is returned as it is, for the caller to refuse)."""
    import trimesh

    if isinstance(mesh, trimesh.Scene):
        return mesh.to_mesh() if hasattr(mesh, "to_mesh") else mesh.dump(concatenate=True)
    return mesh


def check_mesh_path(path) -> str:
    """``path`` as a string if it names a non-empty, readable regular file in a format trimesh reads;
    else an error saying what it is instead (FileNotFoundError, IsADirectoryError, PermissionError,
    or ValueError for a device, an empty file or an unsupported format)."""
    import trimesh

    p = os.fspath(path)
    if not os.path.exists(p):
        raise FileNotFoundError(f"mesh file not found: {p}")
    if os.path.isdir(p):
        raise IsADirectoryError(f"{p} is a directory, not a mesh file")
    if not os.path.isfile(p):
        raise ValueError(f"{p} is not a regular file (a device, pipe or socket); give a mesh file")
    formats = sorted(trimesh.available_formats())
    if not any(p.lower().endswith("." + fmt) for fmt in formats):
        raise ValueError(f"{p}: not a mesh file format trimesh reads (by its extension); "
                         f"supported: {', '.join(formats)} (e.g. .stl, .obj, .ply)")
    try:
        with open(p, "rb") as f:
            empty = not f.read(1)
    except OSError as e:
        raise PermissionError(f"{p} cannot be read: {e.strerror or e}") from None
    if empty:
        raise ValueError(f"{p} is empty (0 bytes)")
    return p


def load_trimesh(path, *, triangles: bool = True):
    """The ``trimesh.Trimesh`` in a mesh file trimesh reads (STL, OBJ, PLY, ...), as stored (no merging
    or repair; a multi-part file is concatenated in its base frame). Raises FileNotFoundError for a
    missing file, the errors of ``check_mesh_path`` for a path that is not a readable mesh file, and
    ValueError for one trimesh cannot read or, unless ``triangles`` is False (a convex hull needs only
    vertices), holds no triangles."""
    import trimesh

    p = check_mesh_path(path)
    try:
        mesh = trimesh.load(p, force="mesh", process=False)
    except Exception as e:  # trimesh raises many types for malformed files
        raise ValueError(f"could not read a mesh from {p}: {type(e).__name__}: {e}") from None
    mesh = as_trimesh(mesh)
    if not isinstance(mesh, trimesh.Trimesh) or (triangles and len(mesh.faces) == 0):
        raise ValueError(f"{p} holds no triangles")
    return mesh


def read_mesh_file(path) -> tuple[np.ndarray, np.ndarray]:
    """(vertices (n, 3) float64, faces (m, 3) int64) of a mesh file (see load_trimesh)."""
    mesh = load_trimesh(path)
    return np.asarray(mesh.vertices, dtype=np.float64), np.asarray(mesh.faces, dtype=np.int64)


class TriangleMesh:
    """A triangle mesh compiled for exact sphere collision and distance queries.

    ``vertices`` (n, 3), world frame, metres (any real dtype; stored as float32): finite, within
    1e12 m. ``faces`` (m, 3) integer indices into ``vertices``, m >= 1. Degenerate triangles
    (repeated or collinear vertices) are allowed and act as their edges; unused vertices are
    ignored. The mesh is immutable; queries may run concurrently (they release the GIL for batches
    of 64 or more).

    Build: O(m log m) time, about 190 bytes per triangle (the tree and a 128-byte record each).
    """

    def __init__(self, vertices, faces) -> None:
        v = np.asarray(vertices)
        if v.ndim != 2 or v.shape[1] != 3:
            raise ValueError(f"vertices must have shape (n, 3), got {v.shape}")
        if not np.issubdtype(v.dtype, np.number) or np.issubdtype(v.dtype, np.complexfloating):
            raise ValueError(f"vertices must be real numbers, got dtype {v.dtype}")
        v64 = v.astype(np.float64)
        bad = ~(np.abs(v64) <= MAX_COORDINATE).all(axis=1)
        if bad.any():
            i = int(np.argmax(bad))
            raise ValueError(f"vertices must be finite with |coordinate| <= 1e12; vertex {i} is {v64[i].tolist()}")
        f = np.asarray(faces)
        if f.ndim != 2 or f.shape[1] != 3:
            raise ValueError(f"faces must have shape (m, 3), got {f.shape}")
        if len(f) == 0:
            raise ValueError("the mesh is empty: faces has no rows")
        if not np.issubdtype(f.dtype, np.integer):
            if not (np.issubdtype(f.dtype, np.floating) and np.array_equal(f, np.round(f))):
                raise ValueError(f"faces must be integer vertex indices, got dtype {f.dtype}")
        f = f.astype(np.int64)
        out = (f < 0) | (f >= len(v64))
        if out.any():
            row = int(np.argmax(out.any(axis=1)))
            raise ValueError(f"face {row} refers to vertex {f[row].tolist()}, outside [0, {len(v64)}) "
                             f"(the mesh has {len(v64)} vertices)")
        self._vertices = np.ascontiguousarray(v64, dtype=np.float32)
        self._faces = np.ascontiguousarray(f, dtype=np.int32)
        self._vertices.setflags(write=False)
        self._faces.setflags(write=False)
        self._mesh = _core.TriangleMesh(self._vertices, self._faces)

    def __reduce__(self):
        # pickling rebuilds the tree from the float32 vertices and faces: the same mesh
        return TriangleMesh, (self._vertices, self._faces)

    @classmethod
    def from_trimesh(cls, mesh) -> "TriangleMesh":
        """From a ``trimesh.Trimesh`` (its vertices and faces as they are) or a ``trimesh.Scene``
        (all geometry concatenated in the scene's base frame)."""
        import trimesh

        mesh = as_trimesh(mesh)
        if not isinstance(mesh, trimesh.Trimesh):
            raise ValueError(f"mesh must be a trimesh.Trimesh or trimesh.Scene, got {type(mesh).__name__}")
        return cls(np.asarray(mesh.vertices), np.asarray(mesh.faces))

    @classmethod
    def load(cls, path) -> "TriangleMesh":
        """From a mesh file trimesh reads (STL, OBJ, PLY, ...), in the file's units and frame
        (taken as metres, world frame). Raises FileNotFoundError for a missing file and ValueError
        for one that does not hold triangles."""
        return cls(*read_mesh_file(path))

    def collides(self, centers, radii, method: str = "auto"):
        """Which spheres penetrate the mesh surface.

        ``centers`` (k, 3) world frame, metres, finite; ``radii`` (k,) or a scalar, metres, >= 0.
        Returns (k,) bool: True where some triangle is strictly closer to the centre than the
        radius (touching is free). ``method``: "auto" (the traversal measured fastest), "single"
        (one sphere at a time, nearer child first), "packet" (SIMD-width groups of consecutive
        spheres descend together) or "brute" (every triangle, no tree); all give the same answer.
        ``centers`` of shape (3,) gives a bool.
        """
        if method not in COLLIDE_METHODS:
            raise ValueError(f"method must be one of {COLLIDE_METHODS}, got {method!r}")
        single = np.shape(centers) == (3,)
        c = _rows(centers, "centers")
        out = self._mesh.collides(c, _radii(radii, len(c)), method)
        return bool(out[0]) if single else out

    def collides_brute(self, centers, radii):
        """:meth:`collides` over every triangle, without the tree (the benchmark's baseline)."""
        return self.collides(centers, radii, method="brute")

    def distance(self, centers, max_distance=np.inf, *, brute: bool = False):
        """Nearest triangle of each point.

        ``centers`` (k, 3) world frame, metres, finite. Returns ``(dist, triangle, closest)``:
        ``dist`` (k,) float32 metres, ``triangle`` (k,) int64 (row of ``faces``) and ``closest``
        (k, 3) float32, the closest point on that triangle (world frame). A triangle is reported
        only if strictly closer than ``max_distance`` (>= 0, default inf); otherwise ``inf``, ``-1``
        and NaN. A smaller ``max_distance`` makes the query faster. Among triangles at the same
        distance (a shared edge or vertex) any one may be reported. ``brute=True`` scans every
        triangle instead of the tree (same answer).
        """
        md = check_max_distance(max_distance)
        c = _rows(centers, "centers")
        fn = self._mesh.distance_brute if brute else self._mesh.distance
        return fn(c, md)

    def overlapping_pairs(self, other):
        """Pairs of elements whose axis-aligned boxes overlap (closed: touching boxes count), found
        by descending both trees (at each step the node with the larger surface area is split).

        ``other``: a :class:`TriangleMesh` (its triangles' boxes) or boxes (m, 6) ``lo xyz, hi xyz``
        world frame, metres (e.g. a robot's link boxes). Returns (p, 2) int64 rows ``(i, j)``,
        ``i`` a triangle of this mesh and ``j`` an element of ``other``, sorted. This is a
        candidate filter (mid-phase), not an exact triangle-triangle test.
        """
        if isinstance(other, TriangleMesh):
            return self._mesh.overlapping_pairs(other.core)
        return self._mesh.overlapping_pairs(_core.BoxTree(_boxes(other)))

    @property
    def vertices(self) -> np.ndarray:
        """(n, 3) float32, read-only: the vertices as stored."""
        return self._vertices

    @property
    def faces(self) -> np.ndarray:
        """(m, 3) int32, read-only."""
        return self._faces

    @property
    def depth(self) -> int:
        """Levels of the tree below its root (ceil(log2 m))."""
        return int(self._mesh.depth)

    @property
    def degenerate_triangles(self) -> int:
        """Triangles without an interior (repeated or collinear vertices)."""
        return int(self._mesh.degenerate_triangles)

    @property
    def build_time_ns(self) -> int:
        """Wall time of the C++ build (boxes, tree, records), nanoseconds."""
        return int(self._mesh.build_time_ns)

    @property
    def core(self):
        """The C++ mesh (``simdplan._core.TriangleMesh``, with its AABB tree) an Environment compiles in."""
        return self._mesh

    def __len__(self) -> int:
        """Number of triangles."""
        return len(self._mesh)

    def __repr__(self) -> str:
        return f"TriangleMesh({len(self)} triangles, {len(self._vertices)} vertices, depth {self.depth})"
