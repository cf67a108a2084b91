"""Convex hulls (simdplan.collision.ConvexHull): support points and GJK distances, under every ISA.

Support points are compared with NumPy brute force on the float32 vertices, with the dot product
computed exactly as the kernels promise, ``(x*dx + y*dy) + z*dz`` in float32: every method must
return that maximum bit for bit (ties may pick a different vertex; brute force picks the first).
Sphere distances are compared with an exact NumPy reference (point-triangle distances over the
whole surface; inside, the nearest facet plane) and, like capsule distances, with coal (pip
``coal``, the successor of hpp-fcl) where it is installed.
"""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import ConvexHull as QHull
from scipy.spatial.transform import Rotation

from simdplan import _core
from simdplan.collision import ConvexHull

METHODS = ("brute", "plain", "packed")


# ----------------------------------------------------------------------------- hulls
def _sphere_points(n, rng):
    p = rng.normal(size=(n, 3))
    return p / np.linalg.norm(p, axis=1)[:, None]


def _prism(k, rng):
    """A regular k-gon prism: two caps of k exactly coplanar vertices (z = +-0.5, exact in float32)."""
    a = 2 * np.pi * np.arange(k) / k
    ring = np.c_[np.cos(a), np.sin(a)]
    return np.r_[np.c_[ring, np.full(k, -0.5)], np.c_[ring, np.full(k, 0.5)]]


def _cone(k, rng):
    """An apex over a k-gon: the apex has k neighbours (continuation lines in the packed layout)."""
    a = 2 * np.pi * np.arange(k) / k
    return np.r_[np.c_[np.cos(a), np.sin(a), np.zeros(k)], [[0.0, 0.0, 1.0]], [[0.0, 0.0, -0.1]]]


KINDS = {
    "tetrahedron": lambda rng: np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float),
    "cube8": lambda rng: np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], float),
    "sphere40": lambda rng: _sphere_points(40, rng),
    "sphere300": lambda rng: 0.3 * _sphere_points(300, rng) + [0.2, -1.0, 0.5],
    "sphere3000": lambda rng: _sphere_points(3000, rng),
    "sphere20000": lambda rng: _sphere_points(20000, rng),
    "cube_cloud": lambda rng: rng.uniform(-1, 1, (5000, 3)),
    "skinny": lambda rng: _sphere_points(2000, rng) * [1.0, 0.03, 0.002],
    "needle": lambda rng: np.c_[rng.uniform(-5, 5, 400), 1e-3 * rng.normal(size=(400, 2))],
    "grid_ball": lambda rng: (lambda g: g[np.linalg.norm(g, axis=1) <= 6])(
        np.stack(np.meshgrid(*[np.arange(-6, 7)] * 3), -1).reshape(-1, 3) * 0.125),
    "prism64": lambda rng: _prism(64, rng),
    "cone100": lambda rng: _cone(100, rng),
}
_CACHE: dict = {}


def hull(kind: str) -> ConvexHull:
    if kind not in _CACHE:
        _CACHE[kind] = ConvexHull.from_points(KINDS[kind](np.random.default_rng(zlib.crc32(kind.encode()))))
    return _CACHE[kind]


def ref_values(vertices: np.ndarray, dirs: np.ndarray) -> np.ndarray:
    """(m, n) float32 dots, associated and rounded as the kernels do."""
    v = vertices.astype(np.float32)
    d = dirs.astype(np.float32)
    return (v[None, :, 0] * d[:, None, 0] + v[None, :, 1] * d[:, None, 1]) + v[None, :, 2] * d[:, None, 2]


def check_support(h: ConvexHull, dirs: np.ndarray, methods=METHODS):
    dirs = np.asarray(dirs, np.float32)
    vals = ref_values(h.vertices, dirs)
    want = vals.max(axis=1)
    for m in methods:
        idx, val = h.support(dirs, method=m)
        assert idx.dtype == np.int64 and val.dtype == np.float32
        bad = np.flatnonzero(val != want)
        assert len(bad) == 0, f"{m}: value {val[bad[0]]!r} != max {want[bad[0]]!r} for direction {dirs[bad[0]]!r}"
        got = vals[np.arange(len(dirs)), idx]
        bad = np.flatnonzero(got != want)
        assert len(bad) == 0, f"{m}: vertex {idx[bad[0]]} is not a maximiser of {dirs[bad[0]]!r}"
        if m == "brute":
            np.testing.assert_array_equal(idx, vals.argmax(axis=1))  # the first maximiser, as numpy


def special_directions(rng, k=200):
    axes = np.r_[np.eye(3), -np.eye(3)]
    diag = np.array([[x, y, z] for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1)], float)
    scales = 10.0 ** rng.uniform(-30, 15, (k, 1))
    return np.r_[axes, diag, 1e-30 * axes, 1e17 * axes, rng.normal(size=(k, 3)) * scales]


# ----------------------------------------------------------------------------- support points
@pytest.mark.parametrize("kind", list(KINDS))
def test_support_matches_numpy(isa, kind):
    h = hull(kind)
    rng = np.random.default_rng(1)
    n_random = 300 if len(h) >= 10000 else 1500
    dirs = np.r_[special_directions(rng), rng.normal(size=(n_random, 3))]
    check_support(h, dirs)
    if len(h) > 10:
        # directions that are the hull's own vertices and triangle normals: near-ties and exact ties
        v = h.vertices.astype(np.float64)
        t = h.triangles
        normals = np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])
        pick = rng.choice(len(t), min(300, len(t)), replace=False)
        check_support(h, np.r_[v[rng.choice(len(v), min(200, len(v)), replace=False)], normals[pick], -normals[pick]])


def test_exact_ties_on_a_face(isa):
    h = hull("prism64")  # 64 vertices tie for +z and -z (the caps), two for +-x
    dirs = np.array([[0, 0, 1], [0, 0, -1], [1, 0, 0], [-1, 0, 0], [0, 0, 2.5], [0, 0, 0]], np.float32)
    check_support(h, dirs)
    vals = ref_values(h.vertices, dirs)
    assert (vals[0] == vals[0].max()).sum() == 64


@settings(max_examples=60)
@given(kind=st.sampled_from(["sphere40", "sphere3000", "skinny", "needle", "grid_ball", "prism64", "cone100"]),
       d=st.one_of(
           st.tuples(*[st.floats(-1e3, 1e3, width=32)] * 3),
           st.tuples(*[st.sampled_from([0.0, 1.0, -1.0, 0.5, -2.0, 1e-20, 3e12])] * 3)))
def test_support_property(isa, kind, d):
    check_support(hull(kind), np.array([d], np.float32))


def test_support_single_direction_and_auto():
    h = hull("sphere300")
    i, v = h.support([0.0, 0.0, 1.0])
    assert isinstance(i, int) and isinstance(v, float)
    assert v == float(ref_values(h.vertices, np.array([[0, 0, 1.0]]))[0].max())
    assert set(h.auto_methods) == {"support", "distance"}
    idx, val = h.support(np.eye(3))
    np.testing.assert_array_equal(val, ref_values(h.vertices, np.eye(3)).max(axis=1))


def test_packed_layout_structure():
    for kind in ("sphere300", "cone100", "prism64", "sphere3000"):
        # small hulls get no artificial edges by default: ask for some
        h = hull(kind) if len(hull(kind)) >= 2000 else ConvexHull.from_points(hull(kind).vertices, artificial=20)
        assert h.stats["artificial_edges"] > 0
        xyz, slots = h._hull.packed_lines()
        n = len(h)
        offsets, indices = h.neighbours
        np.testing.assert_array_equal(xyz[:n], h.vertices)
        for v in range(n):
            real, art, line = [], [], v
            while True:
                head = int(slots[line, 0])
                r, a = head & 31, (head >> 5) & 31
                real += slots[line, 1:1 + r].tolist()
                art += slots[line, 1 + r:1 + r + a].tolist()
                if not head & 0x8000:
                    break
                assert a == 0, "artificial edges belong to a vertex's last line"
                line = int(slots[line, 25])
                assert line >= n
                np.testing.assert_array_equal(xyz[line], h.vertices[v])
            assert sorted(real) == sorted(indices[offsets[v]:offsets[v + 1]].tolist())
            assert len(set(art)) == len(art) and not set(art) & set(real) and v not in art
            assert all(0 <= w < n for w in art)
        check_support(h, np.random.default_rng(2).normal(size=(300, 3)))
    assert hull("cone100").stats["continuation_lines"] >= 3  # the apex: 100 neighbours
    bare = ConvexHull.from_points(KINDS["sphere300"](np.random.default_rng(3)), artificial=0)
    assert bare.stats["artificial_edges"] == 0
    check_support(bare, np.random.default_rng(4).normal(size=(500, 3)))


def test_packed_layout_absent_beyond_16_bits():
    """Hulls that need more than 65535 packed lines keep the plain layout only."""
    h = ConvexHull.from_points(_sphere_points(70000, np.random.default_rng(5)), artificial=0)
    assert len(h) > 65535 and not h.stats["packed"] and h._hull.packed_lines() is None
    assert h.auto_methods["distance"] == "plain"
    with pytest.raises(ValueError, match="packed layout"):
        h.support([1.0, 0, 0], method="packed")
    check_support(h, np.random.default_rng(6).normal(size=(100, 3)), methods=("brute", "plain"))
    clr, _ = h.sphere_distance([[2.0, 0, 0]], 0.5)
    assert abs(clr[0] - 0.5) < 1e-3


# ----------------------------------------------------------------------------- distances
def point_hull_signed(h: ConvexHull, points: np.ndarray) -> np.ndarray:
    """Exact signed distance of points to the hull (hull frame), NumPy: outside, the smallest
    point-triangle distance; inside, minus the distance to the nearest facet plane."""
    v = h.vertices.astype(np.float64)
    t = h.triangles
    a, b, c = v[t[:, 0]], v[t[:, 1]], v[t[:, 2]]
    out = np.empty(len(points))
    eq = QHull(v).equations
    for k, p in enumerate(points):
        out[k] = _point_triangles(p, a, b, c).min()
        inside = (eq[:, :3] @ p + eq[:, 3]).max()
        if inside < 0:
            out[k] = inside
    return out


def _point_triangles(p, a, b, c):
    """Distance from p to each triangle (a, b, c): the nearest of the face interior (when p
    projects inside) and the three edges."""
    ab, ac = b - a, c - a
    n = np.cross(ab, ac)
    nn = np.einsum("ij,ij->i", n, n)
    ap = p - a
    # barycentric coordinates of the projection
    d00, d01, d11 = (ab * ab).sum(1), (ab * ac).sum(1), (ac * ac).sum(1)
    d20, d21 = (ap * ab).sum(1), (ap * ac).sum(1)
    den = d00 * d11 - d01 * d01
    with np.errstate(divide="ignore", invalid="ignore"):
        w1 = (d11 * d20 - d01 * d21) / den
        w2 = (d00 * d21 - d01 * d20) / den
        plane = np.abs((ap * n).sum(1)) / np.sqrt(nn)
    face = np.where((w1 >= 0) & (w2 >= 0) & (w1 + w2 <= 1) & (nn > 0), plane, np.inf)

    def seg(s, e):
        se = e - s
        den = np.maximum((se * se).sum(1), 1e-300)
        u = np.clip(((p - s) * se).sum(1) / den, 0, 1)
        q = s + u[:, None] * se
        return np.linalg.norm(p - q, axis=1)

    return np.minimum.reduce([face, seg(a, b), seg(b, c), seg(c, a)])


def random_pose(rng):
    return Rotation.random(random_state=rng).as_matrix(), rng.uniform(-2, 2, 3)


@pytest.mark.parametrize("kind", ["tetrahedron", "cube8", "sphere300", "sphere3000", "skinny", "prism64", "cone100"])
def test_sphere_distance_matches_numpy(isa, kind):
    h = hull(kind)
    rng = np.random.default_rng(7)
    R, t = random_pose(rng)
    scale = float(np.abs(h.vertices).max())
    local = h.vertices.mean(axis=0) + rng.normal(size=(120, 3)) * scale * rng.uniform(0.1, 1.5, (120, 1))
    radii = rng.uniform(0, 0.3 * scale, 120)
    centers = local @ R.T + t
    want = point_hull_signed(h, local) - radii
    results = {m: h.sphere_distance(centers, radii, R, t, method=m) for m in ("auto",) + METHODS}
    for m, (clr, wit) in results.items():
        np.testing.assert_allclose(clr, want, atol=1e-9 * max(scale, 1), rtol=1e-9, err_msg=m)
        # the witness is on the hull's surface and realises the distance
        wl = (wit - t) @ R
        eq = QHull(h.vertices.astype(np.float64)).equations
        # GJK stops within 1e-9 |d| + 1e-10 L of the distance, so the witness may sit that far inside
        tol = 1e-9 * max(scale, 1) + 2e-9 * np.abs(want + radii)
        assert (np.abs((wl @ eq[:, :3].T + eq[:, 3]).max(axis=1)) <= tol).all()
        np.testing.assert_allclose(np.linalg.norm(wl - local, axis=1), np.abs(want + radii), atol=1e-9 * max(scale, 1))
    assert (want < 0).any() and (want > 0).any()


def test_touching_and_penetrating_exact_cases(isa):
    box = hull("cube8")  # [-1, 1]^3, exact in float
    R, t = np.eye(3), np.array([0.5, 0.0, 0.0])
    # the box spans x in [-0.5, 1.5], y and z in [-1, 1]
    centers = np.array([[1.75, 0.0, 0.0],   # touching the +x face from outside
                        [1.5, 0.25, 0.25],  # centre on the +x face
                        [0.5, 0.0, 0.0],    # centre in the middle: 1 from every face
                        [1.0, 0.5, 0.0],    # 0.5 from +x and +y
                        [0.75, 0.0, 0.0],   # 0.75 from +x
                        [2.5, 1.0, 1.0],    # 1 from the edge-corner region (1.5, 1, 1)
                        [0.5, 0.0, 0.25]])  # 0.75 from +z
    radii = np.array([0.25, 0.125, 0.5, 0.0, 0.0, 0.0, 0.25])
    want = np.array([0.0, -0.125, -1.5, -0.5, -0.75, 1.0, -1.0])
    for m in ("auto",) + METHODS:
        clr, wit = box.sphere_distance(centers, radii, R, t, method=m)
        np.testing.assert_allclose(clr, want, atol=1e-12, err_msg=m)
        np.testing.assert_allclose(wit[0], [1.5, 0, 0], atol=1e-12)
        np.testing.assert_allclose(wit[4], [1.5, 0, 0], atol=1e-12)
        np.testing.assert_allclose(wit[5], [1.5, 1, 1], atol=1e-12)
        np.testing.assert_allclose(np.linalg.norm(wit[2] - centers[2]), 1.0, atol=1e-12)
        _, _, status = box._hull.sphere_distance(centers, radii, R, t, m, True)
        np.testing.assert_array_equal(status, [0, 0, 1, 1, 1, 0, 1])


def test_single_query_forms():
    box = hull("cube8")
    clr, wit = box.sphere_distance([3.0, 0.0, 0.0], 0.5)
    assert isinstance(clr, float) and clr == 1.5 and wit.shape == (3,)
    clr, wit = box.capsule_distance([3.0, -1.0, 0.0], [3.0, 1.0, 0.0], 0.5)
    assert isinstance(clr, float) and clr == 1.5 and wit.shape == (3,)
    clr, wit = box.sphere_distance([[3.0, 0.0, 0.0]], 0.5)
    assert clr.shape == (1,) and wit.shape == (1, 3)


def test_capsule_point_segment_equals_sphere(isa):
    h = hull("sphere300")
    rng = np.random.default_rng(9)
    R, t = random_pose(rng)
    c = t + rng.normal(size=(200, 3))
    r = rng.uniform(0, 0.2, 200)
    for m in METHODS:
        a, wa = h.sphere_distance(c, r, R, t, method=m)
        b, wb = h.capsule_distance(c, c, r, R, t, method=m)
        np.testing.assert_allclose(a, b, atol=1e-12)
        np.testing.assert_allclose(wa, wb, atol=1e-12)


def test_capsule_against_box_exact(isa):
    box = hull("cube8")
    a = np.array([[2.0, -3.0, 0.0], [0.0, 0.0, -3.0], [-0.5, 0.0, 0.0], [1.5, 1.5, 0.0]])
    b = np.array([[2.0, 3.0, 0.0], [0.0, 0.0, 3.0], [0.5, 0.0, 0.0], [3.0, 3.0, 0.0]])
    r = np.array([0.25, 0.1, 0.0, 0.0])
    # parallel to the +x face at 1; through the box along z (depth 1: slide out along x or y);
    # a short segment in the middle (depth 1, along y or z; along x it would be 1.5);
    # off the edge x = y = 1: nearest (1, 1, 0), distance sqrt(0.5)
    want = np.array([0.75, -1.1, -1.0, np.sqrt(0.5)])
    for m in ("auto",) + METHODS:
        clr, wit = box.capsule_distance(a, b, r, method=m)
        np.testing.assert_allclose(clr, want, atol=1e-12, err_msg=m)
        np.testing.assert_allclose(wit[3], [1, 1, 0], atol=1e-12)
        assert np.abs(np.abs(wit).max(axis=1) - 1).max() < 1e-5  # on the box surface


def test_pose_invariance(isa):
    h = hull("skinny")
    rng = np.random.default_rng(11)
    local = rng.normal(size=(100, 3)) * 0.5
    r = rng.uniform(0, 0.1, 100)
    base, _ = h.sphere_distance(local, r)
    R, t = random_pose(rng)
    moved, _ = h.sphere_distance(local @ R.T + t, r, R, t)
    np.testing.assert_allclose(moved, base, atol=1e-12)


def test_methods_and_isas_agree_on_distances():
    import simdplan

    rng = np.random.default_rng(12)
    before = simdplan.isa()
    try:
        for kind in ("sphere3000", "cube_cloud", "needle", "grid_ball"):
            h = hull(kind)
            R, t = random_pose(rng)
            c = t + rng.normal(size=(300, 3))
            a, b = c, c + rng.normal(size=(300, 3)) * 0.3
            r = rng.uniform(0, 0.3, 300)
            outs = []
            for isa in simdplan.available_isas():
                simdplan.set_isa(isa)
                for m in METHODS:
                    outs.append((isa, m, h.sphere_distance(c, r, R, t, method=m)[0],
                                 h.capsule_distance(a, b, r, R, t, method=m)[0]))
            for isa, m, s, cap in outs:
                np.testing.assert_allclose(s, outs[0][2], atol=1e-10, err_msg=f"{kind} {isa} {m}")
                np.testing.assert_allclose(cap, outs[0][3], atol=1e-10, err_msg=f"{kind} {isa} {m}")
    finally:
        simdplan.set_isa(before)


# ----------------------------------------------------------------------------- against coal
def _coal():
    return pytest.importorskip("coal")


def coal_convex(coal, h: ConvexHull):
    pts = coal.StdVec_Vec3s()
    for p in h.vertices.astype(np.float64):
        pts.append(p)
    tris = coal.StdVec_Triangle()
    for f in h.triangles:
        tris.append(coal.Triangle(int(f[0]), int(f[1]), int(f[2])))
    return coal.Convex(pts, tris)


def _capsule_transform(coal, a, b):
    d = b - a
    z = d / np.linalg.norm(d)
    x = np.cross(z, [1.0, 0, 0] if abs(z[0]) < 0.9 else [0, 1.0, 0])
    x /= np.linalg.norm(x)
    return coal.Transform3s(np.c_[x, np.cross(z, x), z], (a + b) / 2), float(np.linalg.norm(d))


@pytest.mark.parametrize("kind", ["sphere40", "sphere3000", "cube_cloud", "skinny", "cone100"])
def test_against_coal(kind):
    coal = _coal()
    h = hull(kind)
    cc = coal_convex(coal, h)
    rng = np.random.default_rng(13)
    R, t = random_pose(rng)
    tf = coal.Transform3s(R, t)
    req = coal.DistanceRequest()
    req.enable_signed_distance = True
    # NOTE: coal's EPA (penetration) stops at 128 iterations by default, 2 % short of the depth on
    # a 3000-vertex hull; with more it agrees with our facet-plane depths to 1e-15
    req.epa_max_iterations = 2000
    req.epa_tolerance = 1e-10
    req.gjk_tolerance = 1e-10  # default 1e-6: stops up to 1e-6 (relative) above the distance
    res = coal.DistanceResult()
    scale = float(np.abs(h.vertices).max())
    m = 60
    c = t + rng.normal(size=(m, 3)) * scale
    c[:10] = t + (h.vertices.mean(axis=0) + rng.normal(size=(10, 3)) * 0.01 * scale) @ R.T  # some inside
    a, b = c, c + rng.normal(size=(m, 3)) * 0.5 * scale
    r = rng.uniform(0.0, 0.2 * scale, m)
    sph, _ = h.sphere_distance(c, r, R, t)
    cap, _, status = h._hull.capsule_distance(a, b, r, R, t, "auto", True)
    want_s, want_c = np.empty(m), np.empty(m)
    for i in range(m):
        res.clear()
        want_s[i] = coal.distance(coal.Sphere(r[i]), coal.Transform3s(np.eye(3), c[i]), cc, tf, req, res)
        ctf, length = _capsule_transform(coal, a[i], b[i])
        res.clear()
        want_c[i] = coal.distance(coal.Capsule(r[i], length), ctf, cc, tf, req, res)
    np.testing.assert_allclose(sph, want_s, atol=1e-8 * scale)
    np.testing.assert_allclose(cap, want_c, atol=1e-8 * scale)
    assert (status == 0).any()


# ----------------------------------------------------------------------------- building and bad input
def test_from_mesh(tmp_path):
    import trimesh

    box = trimesh.creation.box(extents=[1.0, 2.0, 3.0])
    h = ConvexHull.from_mesh(box)
    assert len(h) == 8
    np.testing.assert_allclose(np.abs(h.vertices), [[0.5, 1.0, 1.5]] * 8)
    path = tmp_path / "ico.stl"
    trimesh.creation.icosphere(subdivisions=2).export(path)
    h2 = ConvexHull.from_mesh(str(path))
    assert len(h2) == 162
    assert len(ConvexHull.from_mesh(trimesh.Scene([box]))) == 8
    with pytest.raises(ValueError, match="not found"):
        ConvexHull.from_mesh(tmp_path / "missing.stl")
    with pytest.raises(ValueError, match="trimesh"):
        ConvexHull.from_mesh(42)


def test_hull_drops_interior_points():
    rng = np.random.default_rng(14)
    pts = np.r_[KINDS["cube8"](rng), rng.uniform(-0.9, 0.9, (500, 3))]
    h = ConvexHull.from_points(pts)
    assert len(h) == 8 and h.stats["faces"] == 12 and h.stats["edges"] == 18


@pytest.mark.parametrize("points, match", [
    (np.zeros((3, 3)), "at least 4"),
    (np.ones((10, 3)), "identical"),
    (np.outer(np.arange(10.0), [1, 2, 3]), "collinear"),
    (np.c_[np.random.default_rng(0).uniform(size=(20, 2)), np.zeros(20)], "coplanar"),
    (np.c_[np.random.default_rng(0).uniform(size=(20, 2)), 1e-9 * np.random.default_rng(1).uniform(size=20)], "coplanar"),
    (np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, np.nan]]), "finite"),
    (np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, np.inf]]), "finite"),
    (np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1e13]]), "finite"),
    (np.zeros((5, 2)), "shape"),
    (np.zeros(12), "shape"),
])
def test_from_points_rejects(points, match):
    with pytest.raises(ValueError, match=match):
        ConvexHull.from_points(points)


def test_core_hull_rejects_bad_surfaces():
    h = hull("cube8")
    v = h.vertices
    off, idx = h.neighbours
    tri = h.triangles
    _core.ConvexHull(v, off, idx, tri)  # the valid one
    with pytest.raises(ValueError, match="exactly two"):
        _core.ConvexHull(v, off, idx, tri[:-1].copy())
    with pytest.raises(ValueError, match="missing from the adjacency"):
        bad = idx.copy()
        bad[0] = idx[1] if idx[1] != idx[0] else idx[2]
        _core.ConvexHull(v, off, bad, tri)
    with pytest.raises(ValueError, match="not convex"):
        dent = v.copy()
        dent[0] *= 0.2  # pull a corner inward: its three faces fold in
        _core.ConvexHull(dent, off, idx, tri)
    with pytest.raises(ValueError, match="offsets"):
        _core.ConvexHull(v, off[:-1].copy(), idx, tri)
    with pytest.raises(ValueError, match=r"\[0, n\)"):
        bad = idx.copy()
        bad[0] = 99
        _core.ConvexHull(v, off, bad, tri)
    with pytest.raises(ValueError, match="distinct"):
        bad = tri.copy()
        bad[0, 1] = bad[0, 0]
        _core.ConvexHull(v, off, idx, bad)
    with pytest.raises(ValueError, match="artificial"):
        _core.ConvexHull(v, off, idx, tri, 30)


def test_query_rejects_bad_input():
    h = hull("sphere40")
    with pytest.raises(ValueError, match="method"):
        h.support([1.0, 0, 0], method="fast")
    with pytest.raises(ValueError, match="finite"):
        h.support([[np.nan, 0, 0]])
    with pytest.raises(ValueError, match="finite"):
        h.support([[1e19, 0, 0]])
    with pytest.raises(ValueError, match="shape"):
        h.support(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="radii"):
        h.sphere_distance(np.zeros((3, 3)), [0.1, 0.2])
    with pytest.raises(ValueError, match="radii"):
        h.sphere_distance(np.zeros((1, 3)), -0.1)
    with pytest.raises(ValueError, match="radii"):
        h.sphere_distance(np.zeros((1, 3)), np.nan)
    with pytest.raises(ValueError, match="centers"):
        h.sphere_distance([[0, np.inf, 0]], 0.1)
    with pytest.raises(ValueError, match="rotation"):
        h.sphere_distance([[0, 0, 0]], 0.1, rotation=2 * np.eye(3))
    with pytest.raises(ValueError, match="rotation"):
        h.sphere_distance([[0, 0, 0]], 0.1, rotation=np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="translation"):
        h.sphere_distance([[0, 0, 0]], 0.1, translation=[0, 0])
    with pytest.raises(ValueError, match="rows"):
        h.capsule_distance(np.zeros((2, 3)), np.zeros((3, 3)), 0.1)
    with pytest.raises(ValueError, match="method"):
        h.capsule_distance(np.zeros((1, 3)), np.ones((1, 3)), 0.1, method="x")
    # the single-query path checks the same
    with pytest.raises(ValueError, match="centers"):
        h.sphere_distance([0, np.nan, 0], 0.1)
    with pytest.raises(ValueError, match="radii"):
        h.sphere_distance([0, 0, 0], -1.0)
    with pytest.raises(ValueError, match="rotation"):
        h.sphere_distance([0, 0, 0], 0.1, rotation=np.diag([1.0, 1.0, -1.0]))
    with pytest.raises(ValueError, match="a "):
        h.capsule_distance([0, np.inf, 0], [0, 0, 0], 0.1)
    # the core checks too (callers that skip the facade)
    with pytest.raises(ValueError):
        h._hull.sphere_distance(np.array([[np.nan, 0, 0]]), np.array([0.1]), np.eye(3), np.zeros(3))
    with pytest.raises(ValueError):
        h._hull.support(np.array([[np.inf, 0, 0]], np.float32))
    # empty batches are fine
    idx, val = h.support(np.zeros((0, 3)))
    assert idx.shape == (0,) and val.shape == (0,)
    clr, wit = h.sphere_distance(np.zeros((0, 3)), np.zeros(0))
    assert clr.shape == (0,) and wit.shape == (0, 3)


def test_triangles_are_wound_outward():
    rng = np.random.default_rng(4)
    h = ConvexHull.from_points(rng.normal(size=(200, 3)) * [1.0, 0.3, 2.0])
    v, t = h.vertices.astype(np.float64), h.triangles
    n = np.cross(v[t[:, 1]] - v[t[:, 0]], v[t[:, 2]] - v[t[:, 0]])
    assert (np.einsum("ij,ij->i", n, v[t[:, 0]] - v.mean(axis=0)) > 0).all()
