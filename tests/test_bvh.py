"""TriangleMesh (simdplan.collision): exact point/sphere-triangle tests, the BVH against brute force, tree-vs-tree.

References. The point-triangle distance is checked against a float64 NumPy implementation of the
Voronoi-region method (Ericson, Real-Time Collision Detection, 5.1.5; degenerate triangles as the
minimum over their three segments). The kernels work in float32, so they must agree within
TOL (d + D) metres, D the size of the triangle (the float32 rounding of inputs and differences).
The tree is checked against the C++ brute force over every triangle with the same float32 leaf
test: there the answers must be identical (the tree's box tests are conservative), and against the
NumPy reference outside the tolerance band. Touching is free: exact cases use dyadic coordinates
and Pythagorean distances, exact in float32.
"""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from simdplan import _core
from simdplan.collision import TriangleMesh

TOL = 2e-6


# ----------------------------------------------------------------------------- NumPy reference
def _dot(a, b):
    return np.einsum("...i,...i->...", a, b)


def _segment_closest(p, a, b):
    e = b - a
    ee = _dot(e, e)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(ee > 0, _dot(p - a, e) / np.where(ee > 0, ee, 1.0), 0.0)
    t = np.clip(t, 0.0, 1.0)
    return a + t[..., None] * e


def ref_closest(p, a, b, c):
    """Closest point of triangle (a, b, c) to p, float64, all arrays broadcast to (..., 3)."""
    p, a, b, c = np.broadcast_arrays(*(np.asarray(x, np.float64) for x in (p, a, b, c)))
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = _dot(ab, ap), _dot(ac, ap)
    bp = p - b
    d3, d4 = _dot(ab, bp), _dot(ac, bp)
    cp = p - c
    d5, d6 = _dot(ab, cp), _dot(ac, cp)
    vc = d1 * d4 - d3 * d2
    vb = d5 * d2 - d1 * d6
    va = d3 * d6 - d5 * d4
    with np.errstate(divide="ignore", invalid="ignore"):
        v_ab = d1 / (d1 - d3)
        w_ac = d2 / (d2 - d6)
        w_bc = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        den = 1.0 / (va + vb + vc)
        face = a + ab * (vb * den)[..., None] + ac * (vc * den)[..., None]
    conds = [(d1 <= 0) & (d2 <= 0), (d3 >= 0) & (d4 <= d3), (vc <= 0) & (d1 >= 0) & (d3 <= 0),
             (d6 >= 0) & (d5 <= d6), (vb <= 0) & (d2 >= 0) & (d6 <= 0),
             (va <= 0) & ((d4 - d3) >= 0) & ((d5 - d6) >= 0)]
    choices = [a, b, a + ab * v_ab[..., None], c, a + ac * w_ac[..., None], b + (c - b) * w_bc[..., None]]
    q = face
    for cond, ch in reversed(list(zip(conds, choices))):
        q = np.where(cond[..., None], ch, q)
    # degenerate triangles: the nearest of the three segments
    degen = np.linalg.norm(np.cross(ab, ac), axis=-1) == 0
    if degen.any():
        segs = [_segment_closest(p, a, b), _segment_closest(p, b, c), _segment_closest(p, c, a)]
        dd = np.stack([np.linalg.norm(p - s, axis=-1) for s in segs])
        best = np.take_along_axis(np.stack(segs), dd.argmin(axis=0)[None, ..., None], axis=0)[0]
        q = np.where(degen[..., None], best, q)
    return q


def segment_min(p, a, b, c):
    """Distance from p to the nearest of the triangle's three edges (an upper bound of its distance)."""
    return np.min([np.linalg.norm(p - _segment_closest(p, u, w), axis=-1) for u, w in ((a, b), (b, c), (c, a))], axis=0)


def min_altitude(a, b, c):
    """The triangle's smallest altitude, 2 area / longest edge (0 for a degenerate one)."""
    area2 = np.linalg.norm(np.cross(b - a, c - a), axis=-1)
    longest = np.max([np.linalg.norm(b - a, axis=-1), np.linalg.norm(c - b, axis=-1), np.linalg.norm(a - c, axis=-1)], axis=0)
    return np.where(longest > 0, area2 / np.where(longest > 0, longest, 1.0), 0.0)


def ref_mesh_distance(points, tris):
    """(k,) float64 distance from each point to the nearest of tris (m, 3, 3). NOTE: Ericson's region
    formulas lose the region of slivers even in float64, so each triangle's value is capped by its
    edges' distance (always an upper bound); the tests' meshes have no slivers beyond that."""
    out = np.empty(len(points))
    a, b, c = tris[:, 0], tris[:, 1], tris[:, 2]
    for i, p in enumerate(points):
        q = ref_closest(p, a, b, c)
        out[i] = np.minimum(np.linalg.norm(q - p, axis=1), segment_min(p, a, b, c)).min()
    return out


def tri_size(tris):
    return np.linalg.norm(tris.max(axis=1) - tris.min(axis=1), axis=-1)


# ----------------------------------------------------------------------------- point-triangle kernel
def region_points(rng, tri, k):
    """k points in each Voronoi region of tri (3 vertices, 3 edges, face), at heights off the plane."""
    a, b, c = tri
    n = np.cross(b - a, c - a)
    nn = np.linalg.norm(n)
    n = n / nn if nn > 0 else np.array([0.0, 0.0, 1.0])
    g = tri.mean(axis=0)
    pts = []
    for _ in range(k):
        h = rng.normal() * 0.3
        for v in tri:  # vertex regions: beyond the vertex, away from the centroid
            pts.append(v + (v - g) * rng.uniform(0.05, 1.0) + h * n)
        for u, w in ((a, b), (b, c), (c, a)):  # edge regions: outward in-plane normal at an edge point
            out = np.cross(w - u, n)
            if np.dot(out, g - u) > 0:
                out = -out
            pts.append(u + (w - u) * rng.uniform(0.1, 0.9) + out * rng.uniform(0.01, 1.0) + h * n)
        bary = rng.dirichlet([1, 1, 1])
        pts.append(bary @ tri + h * n)  # face region
    return np.array(pts)


def random_triangles(rng, m):
    tris = rng.normal(size=(m, 3, 3))
    kinds = rng.integers(0, 6, m)
    tris[kinds == 1, 2] = tris[kinds == 1, 0]  # repeated vertex
    tris[kinds == 2, 1] = tris[kinds == 2, 0]
    tris[kinds == 2, 2] = tris[kinds == 2, 0]  # a point
    t = rng.uniform(-0.5, 1.5, (m, 1))
    sel = kinds == 3  # collinear, third vertex beyond the segment or inside it
    tris[sel, 2] = tris[sel, 0] + t[sel] * (tris[sel, 1] - tris[sel, 0])
    sel = kinds == 4  # sliver
    tris[sel, 2] = tris[sel, 0] + 0.5 * (tris[sel, 1] - tris[sel, 0]) + 1e-4 * rng.normal(size=(sel.sum(), 3))
    return tris.astype(np.float32).astype(np.float64)


def test_point_triangle_every_region(isa):
    rng = np.random.default_rng(1)
    tris = random_triangles(rng, 300)
    pts, owners = [], []
    for i, tri in enumerate(tris):
        p = region_points(rng, tri, 2)
        pts.append(p)
        owners += [i] * len(p)
    p = np.concatenate(pts).astype(np.float32).astype(np.float64)
    t = tris[owners]
    d2, q = _core.point_triangle_sqdist(np.ascontiguousarray(p, np.float32), np.ascontiguousarray(t, np.float32))
    a, b, c = t[:, 0], t[:, 1], t[:, 2]
    d = np.sqrt(d2.astype(np.float64))
    seg = segment_min(p, a, b, c)
    h = min_altitude(a, b, c)
    scale = tri_size(t) + seg + 1.0
    # always: the edges bound the distance above, and the in-plane gap to them is at most the inradius
    assert (d <= seg + TOL * scale).all() and (d >= seg - h - TOL * scale).all()
    # well-shaped triangles: Ericson's regions in float64, and the closest point lies on the triangle
    ok = h > 1e-3 * tri_size(t)
    assert ok.sum() > 1000
    dr = np.linalg.norm(p - ref_closest(p, a, b, c), axis=1)
    assert (np.abs(d - dr)[ok] <= TOL * scale[ok]).all(), np.abs(d - dr)[ok].max()
    q = q.astype(np.float64)
    assert (np.abs(np.linalg.norm(p - q, axis=1) - d) <= TOL * scale).all()
    qq = ref_closest(q, a, b, c)
    assert (np.linalg.norm(qq - q, axis=1)[ok] <= TOL * scale[ok]).all()
    # degenerate triangles (exactly collinear or repeated vertices in float32) are their edges
    degen = np.linalg.norm(np.cross(b - a, c - a), axis=1) == 0
    assert degen.sum() > 100
    assert (np.abs(d - seg)[degen] <= TOL * scale[degen]).all()


def test_point_triangle_exact_cases(isa):
    tri = np.array([[0, 0, 0], [4, 0, 0], [0, 4, 0]], np.float32)
    pts = np.array([[1, 1, 0.5], [7, -4, 0], [2, -3, 4], [-3, -4, 0], [1, 1, 0], [2, 2, 0], [0, 0, 0],
                    [4, 4, 0], [1, 1, -3]], np.float32)
    want = np.array([0.25, 25, 25, 25, 0, 0, 0, 8, 9], np.float32)
    d2, q = _core.point_triangle_sqdist(pts, np.ascontiguousarray(np.broadcast_to(tri, (len(pts), 3, 3))))
    assert np.array_equal(d2, want)
    assert np.array_equal(q[1], [4, 0, 0]) and np.array_equal(q[2], [2, 0, 0]) and np.array_equal(q[7], [2, 2, 0])
    # degenerate: a point triangle and a segment
    seg = np.array([[[0, 0, 0], [0, 0, 0], [0, 0, 0]], [[0, 0, 0], [2, 0, 0], [4, 0, 0]]], np.float32)
    d2, q = _core.point_triangle_sqdist(np.array([[3, 4, 0], [6, 3, 4]], np.float32), seg)
    assert np.array_equal(d2, [25, 29]) and np.array_equal(q, [[0, 0, 0], [4, 0, 0]])


# ----------------------------------------------------------------------------- meshes and queries
def transformed(mesh, rng):
    m = mesh.copy()
    m.apply_transform(trimesh.transformations.random_rotation_matrix(rng.uniform(size=3)))
    m.apply_translation(rng.uniform(-0.5, 0.5, 3))
    return m


def meshes(rng):
    out = {
        "icosphere": transformed(trimesh.creation.icosphere(3, radius=0.7), rng),
        "box": transformed(trimesh.creation.box(extents=[0.4, 1.0, 0.2]), rng),
        "cylinder": transformed(trimesh.creation.cylinder(radius=0.3, height=1.2, sections=24), rng),
        "soup": None,
        "one": None,
        "two": None,
    }
    v = rng.uniform(-1, 1, (300, 3, 3)) * 0.3 + rng.uniform(-1, 1, (300, 1, 3))
    out["soup"] = (v.reshape(-1, 3), np.arange(900).reshape(-1, 3))
    out["one"] = (rng.normal(size=(3, 3)), np.array([[0, 1, 2]]))
    out["two"] = (rng.normal(size=(4, 3)), np.array([[0, 1, 2], [2, 1, 3]]))
    return {k: (TriangleMesh.from_trimesh(m) if isinstance(m, trimesh.Trimesh) else TriangleMesh(*m))
            for k, m in out.items()}


def queries(rng, mesh, k):
    """Centres near the surface (vertices plus noise) and random ones in the mesh's box, with radii."""
    v = mesh.vertices.astype(np.float64)
    lo, hi = v.min(axis=0) - 0.3, v.max(axis=0) + 0.3
    near = v[rng.integers(0, len(v), k // 2)] + rng.normal(scale=0.1, size=(k // 2, 3))
    far = rng.uniform(lo, hi, (k - k // 2, 3))
    c = np.concatenate([near, far])
    return c, rng.uniform(0.0, 0.25, k)


def mesh_tris(mesh):
    return mesh.vertices.astype(np.float64)[mesh.faces]


def check_mesh(mesh, c, r, ref=True):
    hits = {m: mesh.collides(c, r, method=m) for m in ("auto", "single", "packet", "brute")}
    for m, h in hits.items():
        assert h.dtype == bool and h.shape == (len(c),)
        assert np.array_equal(h, hits["brute"]), f"{m} differs from brute force"
    d, t, q = mesh.distance(c)
    db, tb, qb = mesh.distance(c, brute=True)
    assert d.dtype == np.float32 and t.dtype == np.int64 and q.shape == (len(c), 3)
    assert np.array_equal(d, db), "tree and brute-force distances differ"
    tris = mesh_tris(mesh)
    c32 = c.astype(np.float32).astype(np.float64)
    # the reported triangle realises the distance (ties may pick another triangle)
    realised = np.linalg.norm(ref_closest(c32, *np.moveaxis(tris[t], 1, 0)) - c32, axis=1)
    size = tri_size(tris).max() + 1.0
    assert (np.abs(realised - d) <= TOL * (d + size)).all()
    assert (np.abs(np.linalg.norm(q - c32, axis=1) - d) <= TOL * (d + size)).all()
    r32 = r.astype(np.float32)
    if ref:
        dr = ref_mesh_distance(c32, tris)
        band = TOL * (dr + size)
        assert (np.abs(d - dr) <= band).all(), np.abs(d - dr).max()
        sure = np.abs(dr - r32) > band
        assert np.array_equal(hits["auto"][sure], (dr < r32)[sure])
    return hits["auto"], d


def test_bvh_matches_brute_force(isa):
    rng = np.random.default_rng(7)
    for name, mesh in meshes(rng).items():
        c, r = queries(rng, mesh, 400)
        hit, _ = check_mesh(mesh, c, r)
        assert 0 < hit.sum() < len(hit), name


def test_bvh_max_distance(isa):
    rng = np.random.default_rng(3)
    mesh = TriangleMesh.from_trimesh(transformed(trimesh.creation.icosphere(3), rng))
    c, _ = queries(rng, mesh, 500)
    d, t, q = mesh.distance(c)
    for md in (0.0, 0.05, 0.2):
        dm, tm, qm = mesh.distance(c, md)
        found = tm >= 0
        assert np.array_equal(found, d < md)
        assert np.array_equal(dm[found], d[found]) and (dm[~found] == np.inf).all()
        assert np.isnan(qm[~found]).all()
        assert np.array_equal(dm, mesh.distance(c, md, brute=True)[0])
    # strict at the bound: a point exactly at distance 2 from a face is not within max_distance=2
    sq = TriangleMesh([[0, 0, 0], [4, 0, 0], [0, 4, 0]], [[0, 1, 2]])
    assert sq.distance([[1, 1, 2]], 2.0)[1][0] == -1
    assert sq.distance([[1, 1, 2]], np.nextafter(2.0, 3))[1][0] == 0


def test_bvh_large_mesh(isa):
    rng = np.random.default_rng(11)
    m = 50_000
    v = rng.uniform(-0.02, 0.02, (m, 3, 3)) + rng.uniform(-1, 1, (m, 1, 3))
    mesh = TriangleMesh(v.reshape(-1, 3), np.arange(3 * m).reshape(-1, 3))
    assert len(mesh) == m and mesh.depth == 16
    c, r = rng.uniform(-1.1, 1.1, (500, 3)), rng.uniform(0.0, 0.03, 500)
    check_mesh(mesh, c, r, ref=False)
    # a NumPy check on a few queries
    check_mesh(mesh, c[:25], r[:25], ref=True)
    ico = TriangleMesh.from_trimesh(trimesh.creation.icosphere(6))  # 81920 triangles
    c, r = queries(rng, ico, 300)
    check_mesh(ico, c, r, ref=False)


def test_exact_touching_is_free(isa):
    # an axis-aligned box [-1, 1] x [-2, 2] x [-0.5, 0.5] (12 triangles), spheres at Pythagorean distances
    box = trimesh.creation.box(extents=[2, 4, 1])
    mesh = TriangleMesh.from_trimesh(box)
    c = np.array([[0, 0, 1.0], [1.75, 0, 0], [0, 2.25, 0.25], [1 + 3, 2 + 4, 0], [1 + 0.75, 0, 0.5 + 1.0],
                  [0.25, 0.5, 0.5 + 5.0], [1 + 1, 2 + 2, 0.5 + 2]])
    r = np.array([0.5, 0.75, 0.25, 5.0, 1.25, 5.0, 3.0])  # each exactly the distance
    for method in ("auto", "single", "packet", "brute"):
        assert not mesh.collides(c, r, method=method).any(), method
        above = np.nextafter(r.astype(np.float32), np.float32(np.inf))  # the next float32 radius
        assert mesh.collides(c, above, method=method).all(), method
    d, _, _ = mesh.distance(c)
    assert np.array_equal(d, r.astype(np.float32))
    # a sphere wholly inside the closed box does not touch the surface
    assert not mesh.collides([0, 0, 0], 0.4)
    assert mesh.collides([0, 0, 0], 0.6)


def test_overlapping_pairs(isa):
    rng = np.random.default_rng(5)

    def soup(m, scale):
        v = rng.uniform(-1, 1, (m, 3, 3)) * scale + rng.uniform(-1, 1, (m, 1, 3))
        return TriangleMesh(v.reshape(-1, 3), np.arange(3 * m).reshape(-1, 3))

    def boxes_of(mesh):
        t = mesh.vertices[mesh.faces]
        return np.c_[t.min(axis=1), t.max(axis=1)]

    def brute(ba, bb):
        ov = ((ba[:, None, :3] <= bb[None, :, 3:]) & (bb[None, :, :3] <= ba[:, None, 3:])).all(axis=2)
        return np.argwhere(ov)

    a, b = soup(600, 0.15), soup(400, 0.1)
    got = a.overlapping_pairs(b)
    assert got.dtype == np.int64 and got.shape[1] == 2
    want = brute(boxes_of(a), boxes_of(b))
    assert len(want) > 50 and np.array_equal(got, want)
    assert np.array_equal(a.overlapping_pairs(a), brute(boxes_of(a), boxes_of(a)))
    # against plain boxes (e.g. robot link boxes), including ones that only touch
    lo = rng.uniform(-1, 1, (30, 3))
    boxes = np.c_[lo, lo + rng.uniform(0.0, 0.4, (30, 3))].astype(np.float32)
    bt = boxes_of(a)
    boxes[0] = [bt[0, 3], bt[0, 4], bt[0, 5], bt[0, 3] + 1, bt[0, 4] + 1, bt[0, 5] + 1]  # corner contact
    got = a.overlapping_pairs(boxes)
    want = brute(bt, boxes)
    assert np.array_equal(got, want) and (got[:, 1] == 0).any()
    one = TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 1, 2]])
    assert np.array_equal(one.overlapping_pairs([[2, 2, 2, 3, 3, 3]]), np.zeros((0, 2)))
    assert np.array_equal(one.overlapping_pairs(one), [[0, 0]])


# ----------------------------------------------------------------------------- files and bad input
@pytest.mark.parametrize("ext", ["stl", "obj", "ply"])
def test_load_files(tmp_path, ext):
    box = trimesh.creation.box(extents=[1, 2, 3])
    path = tmp_path / f"box.{ext}"
    box.export(path)
    mesh = TriangleMesh.load(path)
    assert len(mesh) == 12
    c = np.array([[0, 0, 0], [0.5, 0, 0], [0.75, 0, 0], [0.4, 0, 0]])
    assert mesh.collides(c, 0.2).tolist() == [False, True, False, True]


def test_bad_input(tmp_path):
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0]], float)
    with pytest.raises(FileNotFoundError):
        TriangleMesh.load(tmp_path / "missing.stl")
    bad = tmp_path / "bad.stl"
    bad.write_bytes(b"this is not an stl file at all")
    with pytest.raises(ValueError):
        TriangleMesh.load(bad)
    empty = tmp_path / "empty.obj"
    empty.write_text("# nothing\n")
    with pytest.raises(ValueError):
        TriangleMesh.load(empty)
    with pytest.raises(ValueError, match="finite"):
        TriangleMesh([[0, 0, 0], [1, np.nan, 0], [0, 1, 0]], [[0, 1, 2]])
    with pytest.raises(ValueError, match="outside"):
        TriangleMesh(v, [[0, 1, 3]])
    with pytest.raises(ValueError, match="outside"):
        TriangleMesh(v, [[0, -1, 2]])
    with pytest.raises(ValueError, match="empty"):
        TriangleMesh(v, np.zeros((0, 3), int))
    with pytest.raises(ValueError, match="shape"):
        TriangleMesh(v[:, :2], [[0, 1, 2]])
    with pytest.raises(ValueError):
        TriangleMesh(v, [[0, 1.5, 2]])
    mesh = TriangleMesh(v, [[0, 1, 2]])
    with pytest.raises(ValueError, match="radii"):
        mesh.collides([[0, 0, 0]], -1.0)
    with pytest.raises(ValueError, match="radii"):
        mesh.collides([[0, 0, 0]], [np.nan])
    with pytest.raises(ValueError, match="centers"):
        mesh.collides([[0, np.inf, 0]], 0.1)
    with pytest.raises(ValueError, match="max_distance"):
        mesh.distance([[0, 0, 0]], -1)
    with pytest.raises(ValueError, match="method"):
        mesh.collides([[0, 0, 0]], 0.1, method="fast")
    with pytest.raises(ValueError, match="boxes"):
        mesh.overlapping_pairs([[1, 1, 1, 0, 0, 0]])
    # the core checks too
    with pytest.raises(ValueError):
        _core.TriangleMesh(np.array([[0, 0, np.nan]] * 3, np.float32), np.array([[0, 1, 2]], np.int32))
    with pytest.raises(ValueError):
        _core.TriangleMesh(v.astype(np.float32), np.array([[0, 1, 5]], np.int32))
    with pytest.raises(ValueError):
        mesh._mesh.collides(np.zeros((1, 3), np.float32), np.array([-1], np.float32))
    with pytest.raises(ValueError):
        _core.BoxTree(np.array([[1, 0, 0, 0, 0, 0]], np.float32))


def test_single_query_shapes_and_props():
    mesh = TriangleMesh([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 0]], [[0, 1, 2], [0, 1, 3]])
    assert mesh.collides([0.2, 0.2, 0.1], 0.2) is True
    assert mesh.degenerate_triangles == 1 and len(mesh) == 2 and mesh.depth == 1
    assert not mesh.vertices.flags.writeable and mesh.faces.dtype == np.int32
    assert "2 triangles" in repr(mesh)
