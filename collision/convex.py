"""Convex hulls: support points and GJK signed distances to spheres and capsules.

A :class:`ConvexHull` is built once from points or a mesh (the hull itself is computed by qhull
through ``scipy.spatial.ConvexHull``, so building one needs scipy) and compiled into the C++ layouts of
``cpp/include/simdplan/gjk/``: the vertices as float32 structure of arrays with a CSR adjacency,
and Greer's packed layout (one 64-byte cache line per vertex with its neighbours and extra
long-range edges; "Memory Optimization for Convex Hull Support Point Queries", arXiv:2509.03753).

Frames and units: the hull's vertices live in the hull's own frame, metres. Distance queries take
the hull's pose ``(rotation (3, 3), translation (3,))``, ``world = rotation @ local + translation``,
and sphere / capsule geometry in the world frame; support queries work in the hull frame.

Distances are computed by GJK (Gilbert, Johnson, Keerthi, IEEE J. Robotics and Automation 4(2),
1988) in double precision on the float32 vertices; the signed clearance is exact for that hull up
to about 1e-9 relative (see ``cpp/include/simdplan/gjk/gjk.hh``).
"""

from __future__ import annotations

import os

import numpy as np

from simdplan import _core
from simdplan.collision.pointcloud import MAX_COORDINATE

METHODS = ("auto", "brute", "plain", "packed")


_EYE = np.eye(3)
_ZERO = np.zeros(3)
_IDENTITY_POSE = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
_SCALARS = (float, int, np.floating, np.integer)  # isinstance is 10x cheaper than np.ndim here


def _pose12(rotation, translation):
    """The pose as 12 floats (rotation row-major, translation) for the single-query calls; the core
    checks the values (finite, a rotation)."""
    if rotation is None and translation is None:
        return _IDENTITY_POSE
    if (type(rotation) is np.ndarray and type(translation) is np.ndarray and rotation.shape == (3, 3)
            and translation.shape == (3,)):
        # PERF: the usual call, arrays of the right shapes: 1.5-2.7 us through _pose below, 0.4 here
        return rotation.ravel().tolist() + translation.tolist()
    R, t = _pose(rotation, translation)
    return tuple(R.ravel().tolist()) + tuple(t.tolist())


def _rows(value, name: str, n: int | None = None) -> np.ndarray:
    """(m, 3) float64 C-contiguous (a (3,) row becomes (1, 3)); the core checks the values."""
    a = np.asarray(value, dtype=np.float64)
    if a.shape == (3,):
        a = a.reshape(1, 3)
    elif a.ndim != 2 or a.shape[1] != 3:
        raise ValueError(f"{name} must have shape (m, 3) or (3,), got {np.shape(value)}")
    if n is not None and len(a) != n:
        raise ValueError(f"{name} must have {n} rows, got {len(a)}")
    return a if a.flags.c_contiguous else np.ascontiguousarray(a)


def _radii(value, m: int) -> np.ndarray:
    if isinstance(value, (float, int, np.floating, np.integer)):
        return np.full(m, float(value))
    r = np.asarray(value, dtype=np.float64)
    if r.ndim == 0:
        return np.full(m, float(r))
    if r.shape != (m,):
        raise ValueError(f"radii must be a scalar or have shape ({m},), got {np.shape(value)}")
    return r if r.flags.c_contiguous else np.ascontiguousarray(r)


def _pose(rotation, translation) -> tuple[np.ndarray, np.ndarray]:
    """Shapes only: the core checks finiteness and that the rotation is one (to 1e-6, det +1)."""
    R = _EYE if rotation is None else np.asarray(rotation, dtype=np.float64)
    t = _ZERO if translation is None else np.asarray(translation, dtype=np.float64)
    if R.shape != (3, 3):
        raise ValueError(f"rotation must have shape (3, 3), got {np.shape(rotation)}")
    if t.shape != (3,):
        raise ValueError(f"translation must have shape (3,), got {np.shape(translation)}")
    return (R if R.flags.c_contiguous else np.ascontiguousarray(R)), (t if t.flags.c_contiguous else np.ascontiguousarray(t))


def _method(method: str) -> str:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return method


def qhull(points: np.ndarray, options: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """scipy's qhull on (n, 3) float64 points: (vertices (k, 3), the hull's extreme points in input
    order; triangles (t, 3) int64 into them, wound counter-clockwise seen from outside; planes (t, 4),
    outward unit normal and offset d with n . p <= d inside). Raises scipy's QhullError."""
    from scipy.spatial import ConvexHull as _QHull

    qh = _QHull(points, qhull_options=options)
    verts = np.asarray(qh.vertices, dtype=np.int64)
    remap = np.full(len(points), -1, dtype=np.int64)
    remap[verts] = np.arange(len(verts))
    tris = remap[np.asarray(qh.simplices, dtype=np.int64)]
    v = points[verts]
    normals = qh.equations[:, :3]
    a, b, c = v[tris[:, 0]], v[tris[:, 1]], v[tris[:, 2]]
    flip = np.einsum("ij,ij->i", np.cross(b - a, c - a), normals) < 0
    tris[flip] = tris[flip][:, [0, 2, 1]]
    return v, tris, np.c_[normals, -qh.equations[:, 3]]


def _hull_arrays(points) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(vertices (n, 3) float32, offsets (n + 1,) int32, indices int32, triangles (t, 3) int32)."""
    p = np.asarray(points, dtype=np.float64)
    if p.ndim != 2 or p.shape[1] != 3:
        raise ValueError(f"points must have shape (n, 3), got {np.shape(points)}")
    if len(p) < 4:
        raise ValueError(f"a convex hull needs at least 4 points, got {len(p)}")
    bad = ~(np.abs(p) <= MAX_COORDINATE).all(axis=1)
    if bad.any():
        raise ValueError(f"points must be finite with |coordinate| <= 1e12; point {int(np.argmax(bad))} is not")
    # NOTE: the hull of the float32 values, which the kernels use, not of the float64 input
    p = p.astype(np.float32).astype(np.float64)
    centred = p - p.mean(axis=0)
    sv = np.linalg.svd(centred, compute_uv=False)
    if not sv[0] > 0:
        raise ValueError("all points are identical: a convex hull needs points spanning three dimensions")
    if sv[2] <= 1e-7 * sv[0]:
        kind = "collinear" if sv[1] <= 1e-7 * sv[0] else "flat (coplanar)"
        raise ValueError(f"the points are {kind}: a convex hull needs points spanning three dimensions")
    try:
        from scipy.spatial import QhullError
    except ImportError as e:  # pragma: no cover - scipy is in the test extra
        raise ImportError("simdplan.collision.ConvexHull needs scipy (pip install scipy) to compute hulls") from e
    try:
        verts, tris, _ = qhull(p)
    except QhullError as e:
        raise ValueError(f"qhull could not build a convex hull of these points: {str(e).splitlines()[0]}") from None
    # undirected edges of the triangles, both directions, sorted into CSR rows
    e = np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]])
    e = np.unique(np.sort(e, axis=1), axis=0)
    both = np.concatenate([e, e[:, ::-1]])
    both = both[np.lexsort((both[:, 1], both[:, 0]))]
    n = len(verts)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.bincount(both[:, 0], minlength=n), out=offsets[1:])
    return (np.ascontiguousarray(verts, dtype=np.float32), offsets,
            np.ascontiguousarray(both[:, 1], dtype=np.int32), np.ascontiguousarray(tris, dtype=np.int32))


class ConvexHull:
    """A convex hull for support-point queries and sphere / capsule signed distances (GJK).

    Build it with :meth:`from_points` or :meth:`from_mesh`. The hull is immutable; queries may
    run concurrently (they release the GIL for batches of 64 or more).

    ``vertices`` (n, 3) float32, hull frame, metres: the hull's extreme points (input points inside
    the hull or in the middle of a face are dropped by qhull). ``triangles`` (t, 3) int32: the
    boundary, triangulated. Hulls of more than about 65k vertices have no packed layout (its 16-bit
    slots cannot address them): ``method="packed"`` then raises ValueError and "auto" uses "plain".
    """

    def __init__(self, vertices, offsets, indices, triangles, *, artificial: int = -1) -> None:
        """From hull arrays (prefer :meth:`from_points`): ``vertices`` (n, 3) float32 hull frame,
        CSR adjacency ``offsets`` (n + 1,) and ``indices`` int32, ``triangles`` (t, 3) int32 closing
        the convex surface; ``artificial`` caps the artificial edges per vertex in the packed layout,
        0..25 (-1: the measured default, 8 on hulls of 2000 vertices or more and none below). The C++
        side checks the surface (closed, convex, adjacency complete) and raises ValueError otherwise."""
        v = np.ascontiguousarray(vertices, dtype=np.float32)
        t = np.ascontiguousarray(triangles, dtype=np.int32)
        if v.ndim != 2 or v.shape[1] != 3:
            raise ValueError(f"vertices must have shape (n, 3), got {np.shape(vertices)}")
        if t.ndim != 2 or t.shape[1] != 3:
            raise ValueError(f"triangles must have shape (t, 3), got {np.shape(triangles)}")
        self._offsets = np.ascontiguousarray(offsets, dtype=np.int32)
        self._indices = np.ascontiguousarray(indices, dtype=np.int32)
        self._triangles = t
        self._hull = _core.ConvexHull(v, self._offsets, self._indices, t, int(artificial))
        self._vertices = self._hull.vertices()
        self._given = (v, int(artificial))  # what __reduce__ rebuilds it from

    def __reduce__(self):
        # pickling (e.g. Ray's object store) rebuilds the hull from the arrays it was built from
        v, artificial = self._given
        return _rebuilt_hull, (v, self._offsets, self._indices, self._triangles, artificial)

    @classmethod
    def from_points(cls, points, *, artificial: int = -1) -> "ConvexHull":
        """The convex hull of ``points`` (n, 3), n >= 4, hull frame, metres (rounded to float32 first).

        Raises ValueError for non-finite or huge (> 1e12) coordinates, fewer than 4 points, and
        points that are identical, collinear or coplanar (to 1e-7 of their spread)."""
        return cls(*_hull_arrays(points), artificial=artificial)

    @classmethod
    def from_mesh(cls, mesh, *, artificial: int = -1) -> "ConvexHull":
        """The convex hull of a mesh's vertices: ``mesh`` is a ``trimesh.Trimesh``, a ``trimesh.Scene``
        (all geometry, in the scene's base frame) or a path to a file trimesh loads (STL, OBJ, PLY, ...).
        Units are the file's (URDF meshes are metres); apply any mesh scale before."""
        import trimesh

        from simdplan.collision.mesh import as_trimesh, load_trimesh

        if isinstance(mesh, (str, os.PathLike)):
            try:
                mesh = load_trimesh(mesh, triangles=False)
            except FileNotFoundError as e:  # this constructor's contract: ValueError for a bad path too
                raise ValueError(str(e)) from None
        mesh = as_trimesh(mesh)
        if not isinstance(mesh, trimesh.Trimesh):
            raise ValueError(f"mesh must be a trimesh.Trimesh, a trimesh.Scene or a path, got {type(mesh).__name__}")
        return cls.from_points(np.asarray(mesh.vertices, dtype=np.float64), artificial=artificial)

    # ----- data
    @property
    def core(self):
        """The C++ hull (``simdplan._core.ConvexHull``) an Environment compiles in."""
        return self._hull

    def __len__(self) -> int:
        """Number of hull vertices."""
        return len(self._vertices)

    @property
    def vertices(self) -> np.ndarray:
        """(n, 3) float32 hull vertices, hull frame, metres (a copy)."""
        return self._vertices.copy()

    @property
    def triangles(self) -> np.ndarray:
        """(t, 3) int32 boundary triangles (indices into ``vertices``), wound counter-clockwise seen from
        outside when the hull came from :meth:`from_points` / :meth:`from_mesh`."""
        return self._triangles.copy()

    @property
    def neighbours(self) -> tuple[np.ndarray, np.ndarray]:
        """The vertex adjacency as CSR: (offsets (n + 1,) int32, indices int32); the neighbours of
        vertex v are ``indices[offsets[v]:offsets[v + 1]]``."""
        return self._offsets.copy(), self._indices.copy()

    @property
    def auto_methods(self) -> dict:
        """What ``method="auto"`` uses for this hull under the ISA in use (``simdplan.isa()``):
        ``{"support": ..., "distance": ...}``. Support queries: "brute" up to a vertex count measured per
        ISA (32 scalar, 384 AVX2, 1024 AVX-512), else "packed" ("plain" without a packed layout).
        Distances: "plain" below 3000 vertices, else "packed" (GJK's warm-started supports make
        brute force lose at every size)."""
        sup, dist = self._hull.auto_methods()
        return {"support": sup, "distance": dist}

    @property
    def stats(self) -> dict:
        """Build facts: vertices, faces, edges, max_degree, continuation_lines, artificial_edges,
        packed (bool: False for hulls too big for 16-bit slots), build_ns, reflex_defect (metres: how far
        the triangulated surface is from convex, ~0 for qhull's output)."""
        return dict(self._hull.stats)

    # ----- queries
    def support(self, directions, method: str = "auto"):
        """Support points: for each direction d, a vertex v maximising dot(v, d) in float32.

        ``directions`` (m, 3) (or (3,)), hull frame, finite, |component| <= 1e18; any length (the
        zero direction is allowed: every vertex is then a maximiser). ``method``: "brute" (SIMD over
        all vertices; returns the first maximiser in index order, as numpy.argmax), "plain" (hill
        climbing on the CSR adjacency), "packed" (hill climbing on the cache-line layout) or "auto".
        Returns ``(index (m,) int64, value (m,) float32)``, value = dot(vertices[index], d) computed
        as ``(x*dx + y*dy) + z*dz`` in float32; every method returns the same (maximal) value,
        while with ties the index may differ. For (3,) input, returns ``(int, float)``.
        """
        d = np.asarray(directions, dtype=np.float64)
        single = d.shape == (3,)
        if single:
            d = d.reshape(1, 3)
        if d.ndim != 2 or d.shape[1] != 3:
            raise ValueError(f"directions must have shape (m, 3) or (3,), got {np.shape(directions)}")
        bad = ~(np.abs(d) <= 1e18).all(axis=1)
        if bad.any():
            raise ValueError(f"directions must be finite with |component| <= 1e18; row {int(np.argmax(bad))} is not")
        idx, val = self._hull.support(np.ascontiguousarray(d, dtype=np.float32), _method(method))
        return (int(idx[0]), float(val[0])) if single else (idx, val)

    def sphere_distance(self, centers, radii, rotation=None, translation=None, method: str = "auto"):
        """Signed clearance between spheres and the hull placed at ``(rotation, translation)``.

        ``centers`` (m, 3) and ``radii`` (m,) or a scalar, world frame, metres; ``rotation`` (3, 3)
        (default identity; orthonormal to 1e-6 with determinant +1), ``translation`` (3,) (default 0):
        world = rotation @ local + translation. Returns ``(clearance (m,) float64, witness_on_hull (m, 3)
        float64 world)``: clearance = distance(centre, hull) - radius when the centre is outside the hull,
        and -(depth of the centre below the hull's surface) - radius when it is inside, so it is the exact
        signed distance between sphere and hull (< 0: overlap; 0: touching). The witness is the point of
        the hull's surface nearest the centre. One sphere, ``centers`` (3,) with a scalar radius: returns
        ``(float, (3,) array)``. ``method`` picks the support method (the results agree). Raises
        ValueError for non-finite or huge (> 1e12) values, negative radii, or a rotation that is not one.
        Cost: about a microsecond outside the hull; a centre inside costs O(triangles) (the exact depth).
        """
        c = np.asarray(centers, dtype=np.float64)
        if c.shape == (3,) and isinstance(radii, _SCALARS):
            # one sphere: no array round trip (PERF: 17 -> 8-12 us per call from Python, busy 2-core machine)
            x, y, z = c.tolist()
            return self._hull.sphere_distance_one(x, y, z, float(radii), _pose12(rotation, translation), _method(method))
        single = c.shape == (3,) and np.ndim(radii) == 0
        c = _rows(c, "centers")
        clr, wit = self._hull.sphere_distance(c, _radii(radii, len(c)), *_pose(rotation, translation), _method(method))
        return (float(clr[0]), wit[0]) if single else (clr, wit)

    def capsule_distance(self, a, b, radii, rotation=None, translation=None, method: str = "auto"):
        """Signed clearance between capsules (segment ``a -> b`` swept by a radius) and the hull.

        ``a``, ``b`` (m, 3) segment ends and ``radii`` (m,) or a scalar, world frame, metres; pose as in
        :meth:`sphere_distance`. Returns ``(clearance (m,) float64, witness_on_hull (m, 3) float64
        world)``: clearance = distance(segment, hull) - radius when they are disjoint, and -(the shortest
        translation separating the segment from the hull) - radius when the segment crosses it: the exact
        signed distance between capsule and hull. The witness is the hull point nearest the segment (when
        crossing: a point of the hull's surface at the separating contact, within 1e-6 of the hull's
        size). One capsule ((3,) ends, scalar radius): returns ``(float, (3,) array)``. A segment that
        crosses the hull costs O(triangles + edges).
        """
        pa = np.asarray(a, dtype=np.float64)
        pb = np.asarray(b, dtype=np.float64)
        if pa.shape == (3,) and pb.shape == (3,) and isinstance(radii, _SCALARS):
            return self._hull.capsule_distance_one(pa.tolist(), pb.tolist(), float(radii),
                                                   _pose12(rotation, translation), _method(method))
        single = pa.shape == (3,) and pb.shape == (3,) and np.ndim(radii) == 0
        pa = _rows(pa, "a")
        pb = _rows(b, "b", len(pa))
        clr, wit = self._hull.capsule_distance(pa, pb, _radii(radii, len(pa)), *_pose(rotation, translation),
                                               _method(method))
        return (float(clr[0]), wit[0]) if single else (clr, wit)

    def __repr__(self) -> str:
        s = self.stats
        return (f"ConvexHull({s['vertices']} vertices, {s['faces']} triangles, "
                f"{'packed' if s['packed'] else 'plain layout only'})")


def _rebuilt_hull(vertices, offsets, indices, triangles, artificial: int) -> ConvexHull:
    return ConvexHull(vertices, offsets, indices, triangles, artificial=artificial)
