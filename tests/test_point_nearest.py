"""NearestPointTree (simdplan.collision) against scipy's cKDTree in float64, under every ISA.

Tolerance. The tree stores the cloud and the queries as float32 and computes distances in float32
(u = 2^-24): rounding the inputs moves each coordinate difference by at most 2u M (M = the largest
|coordinate|), so the distance by at most 2 sqrt(3) u M = 2.1e-7 M; the float32 arithmetic adds at
most 3u d = 1.8e-7 d (five roundings in d^2, one in the square root). So against float64 a distance
must be within TOL (d + max(M, 1 m)) with TOL = 1e-6, four times the bound (the 1 m floor keeps the
absolute part meaningful for tiny clouds). Against the float32-rounded inputs (cKDTree on them) the
search itself must be exact: within REL32 = 3e-7 d, i.e. no nearer point was missed.
Index: the reported row must realise a float64 distance within the same tolerance of the true
minimum (any of several near-equal points is fine). max_distance is strict: a point exactly at
max_distance is not reported; cases within the tolerance of the boundary are not judged, except
the exact ones (Pythagorean triples scaled by powers of two, exact in float32).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import cKDTree

from simdplan import _core
from simdplan.collision import NearestPointTree
from conftest import on_every_isa

TOL = 1e-6
REL32 = 3e-7


# ----------------------------------------------------------------------------- reference and checks
def check(points, queries, max_distance=np.inf, tree=None):
    """Asserts tree.query(queries, max_distance) against cKDTree; returns (distances, indices)."""
    points = np.asarray(points, np.float64).reshape(-1, 3)
    queries = np.asarray(queries, np.float64).reshape(-1, 3)
    tree = tree or NearestPointTree(points)
    d, i = tree.query(queries, max_distance)
    assert d.dtype == np.float64 and i.dtype == np.int64
    assert d.shape == (len(queries),) and i.shape == (len(queries),)
    found = i >= 0
    assert np.array_equal(found, np.isfinite(d))
    assert (d[~found] == np.inf).all() and (i[~found] == -1).all()
    assert (d[found] < max_distance).all(), "reported distances must be strictly below max_distance"
    if len(points) == 0:
        assert not found.any()
        return d, i
    true_d, _ = cKDTree(points).query(queries)
    m = max(np.abs(points).max(), np.abs(queries).max() if len(queries) else 0.0, 1.0)
    tol = TOL * (true_d + m)
    # found iff the true distance is below max_distance, outside the tolerance band
    assert not (~found & (true_d < max_distance - tol)).any(), "missed a point within max_distance"
    assert not (found & (true_d >= max_distance + tol)).any(), "reported a point beyond max_distance"
    k = np.flatnonzero(found)
    err = np.abs(d[k] - true_d[k])
    assert (err <= tol[k]).all(), f"distance off by {err.max():.3g} at query {k[np.argmax(err - tol[k])]}"
    realised = np.linalg.norm(points[i[k]] - queries[k], axis=1)
    assert (np.abs(realised - true_d[k]) <= tol[k]).all(), "index does not realise the nearest distance"
    # exact search on the float32 values: no nearer point missed
    p32, q32 = points.astype(np.float32).astype(np.float64), queries.astype(np.float32).astype(np.float64)
    d32, _ = cKDTree(p32).query(q32[k])
    assert (np.abs(d[k] - d32) <= REL32 * d32).all(), "not the float32 nearest distance"
    return d, i


# ----------------------------------------------------------------------------- clouds and queries
def cloud(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "uniform":
        return rng.uniform(-1.0, 1.0, (n, 3))
    if kind == "clustered":
        centres = rng.uniform(-1.0, 1.0, (4, 3))
        return centres[rng.integers(0, 4, n)] + rng.normal(0.0, 0.01, (n, 3))
    if kind == "duplicates":
        base = rng.uniform(-0.5, 0.5, (max(1, n // 5), 3))
        return base[rng.integers(0, len(base), n)]
    if kind == "identical":
        return np.tile(rng.uniform(-1, 1, 3), (n, 1))
    if kind == "planar":
        return np.c_[rng.uniform(-1, 1, (n, 2)), np.full(n, 0.25)]
    if kind == "collinear":
        return np.outer(rng.uniform(-1, 1, n), [0.3, -0.2, 0.9]) + [0.1, 0.2, 0.3]
    if kind == "grid":  # many equal coordinates: exact ties at split values and equidistant points
        return rng.integers(-4, 5, (n, 3)) * 0.0625
    raise AssertionError(kind)


KINDS = ["uniform", "clustered", "duplicates", "identical", "planar", "collinear", "grid"]


def queries(points: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """Near the cloud (within 0.3 m of a point), anywhere around it, exactly on points, far away."""
    if len(points) == 0:
        return rng.uniform(-1, 1, (m, 3))
    k = m // 4
    ball = rng.normal(size=(k, 3))
    ball *= (0.3 * rng.uniform(0, 1, k) ** (1 / 3) / np.linalg.norm(ball, axis=1))[:, None]
    lo, hi = points.min(0) - 0.5, points.max(0) + 0.5
    return np.concatenate([
        points[rng.integers(0, len(points), k)] + ball,
        rng.uniform(lo, hi, (k, 3)),
        points[rng.integers(0, len(points), m // 8)],
        rng.normal(0, 50, (m - 2 * k - m // 8, 3)),
    ])


# ----------------------------------------------------------------------------- random clouds
@pytest.mark.parametrize("n", [0, 1, 2, 17, 1000, 20_000])
@pytest.mark.parametrize("kind", KINDS)
def test_seeded_clouds_match_ckdtree(isa, kind, n):
    rng = np.random.default_rng([n, KINDS.index(kind)])
    pts = cloud(kind, n, rng)
    q = queries(pts, 2000, rng)
    tree = NearestPointTree(pts)
    assert len(tree) == n
    for md in (np.inf, 0.05, 0.3, 0.0):
        check(pts, q, md, tree)


@settings(max_examples=60)
@given(kind=st.sampled_from(KINDS), n=st.integers(0, 400), seed=st.integers(0, 2**32 - 1),
       md=st.one_of(st.just(np.inf), st.just(0.0), st.floats(1e-4, 2.0)), scale=st.sampled_from([1e-3, 1.0, 100.0]))
def test_random_clouds_match_ckdtree(isa, kind, n, seed, md, scale):
    rng = np.random.default_rng(seed)
    pts = cloud(kind, n, rng) * scale
    check(pts, queries(pts, 300, rng), md * scale)


def test_large_coordinates_and_far_queries(isa):
    rng = np.random.default_rng(4)
    pts = np.concatenate([rng.uniform(0, 2, (3000, 3)) + [4096.0, -8192.0, 1024.0], [[1e6, 0, 0], [0, -1e6, 5]]])
    q = np.concatenate([pts[rng.integers(0, len(pts), 1000)] + rng.normal(0, 0.05, (1000, 3)),
                        [[1e6 + 0.05, 0, 0], [-1e7, 0, 0], [0, -1e6, 5.07], [1e11, -1e11, 1e11]]])
    for md in (np.inf, 0.1):
        check(pts, q, md)


def test_every_isa_agrees_with_scalar():
    rng = np.random.default_rng(8)
    pts = cloud("clustered", 5000, rng)
    q = queries(pts, 4000, rng)
    tree = NearestPointTree(pts)
    out = on_every_isa(lambda: tree.query(q, 0.1))
    d0, i0 = out["scalar"]
    for name, (d, i) in out.items():
        assert np.array_equal(np.isfinite(d), np.isfinite(d0)), name  # no query near the boundary here
        f = np.isfinite(d0)
        np.testing.assert_allclose(d[f], d0[f], rtol=1e-6, atol=0, err_msg=name)  # FMA or not: a few ulps


# ----------------------------------------------------------------------------- lanes together
def walks(points: np.ndarray, m: int, rng: np.random.Generator) -> np.ndarray:
    """Queries as the distance kernels make them: runs of nearby points (one sphere along an edge)."""
    start = points[rng.integers(0, len(points), m // 16 + 1)] if len(points) else rng.uniform(-1, 1, (m // 16 + 1, 3))
    steps = rng.normal(0.0, rng.choice([1e-3, 0.02, 0.2]), (m // 16 + 1, 16, 3)).cumsum(axis=1)
    return (start[:, None, :] + steps).reshape(-1, 3)[:m]


@settings(max_examples=60)
@given(kind=st.sampled_from(KINDS), n=st.integers(0, 3000), seed=st.integers(0, 2**32 - 1),
       scale=st.sampled_from([1e-3, 1.0, 100.0]))
def test_lanes_together_return_the_single_search_bits(isa, kind, n, seed, scale):
    """nearest_sq_lanes, the search the distance kernels run (W queries down the tree together, a
    bound per lane), returns bit for bit what the single search returns for each query alone."""
    rng = np.random.default_rng(seed)
    pts = cloud(kind, n, rng) * scale
    q = np.concatenate([queries(pts, 150, rng), walks(pts, 93, rng)]).astype(np.float32)  # 243: a partial vector
    rng.shuffle(q[:150])
    bounds = np.array([np.inf, 0.0, 0.01, 0.05, 0.3, 2.0], np.float32) * np.float32(scale)
    md = bounds[rng.integers(0, len(bounds), len(q))]
    tree = _core.NearestTree(cloud(kind, 0, rng).astype(np.float32) if n == 0 else pts.astype(np.float32))
    got = tree.query_lanes(q, md)
    for b in np.unique(md):
        rows = md == b
        want, _ = tree.query(q[rows], float(b))
        np.testing.assert_array_equal(got[rows], want, err_msg=f"max_distance {b}")


def test_lanes_together_reject_bad_bounds():
    tree = _core.NearestTree(np.zeros((4, 3), np.float32))
    with pytest.raises(ValueError, match="one value per query"):
        tree.query_lanes(np.zeros((3, 3), np.float32), np.zeros(2, np.float32))
    with pytest.raises(ValueError, match=">= 0"):
        tree.query_lanes(np.zeros((1, 3), np.float32), np.array([np.nan], np.float32))


# ----------------------------------------------------------------------------- max_distance semantics
@pytest.mark.parametrize("scale", [2.0 ** -6, 2.0 ** -2, 1.0, 8.0])
@pytest.mark.parametrize("triple", [(3, 4, 0), (0, 0, 5), (2, 3, 6)])  # |.| = 5, 5, 7
def test_max_distance_is_strict_at_exact_distances(isa, scale, triple):
    dist = scale * float(np.linalg.norm(triple))
    rng = np.random.default_rng(5)
    pts = np.concatenate([[np.multiply(triple, scale)], rng.uniform(3, 4, (100, 3)) * dist])
    tree = NearestPointTree(pts)
    origin = np.zeros((1, 3))
    d, i = tree.query(origin)
    assert d[0] == dist and i[0] == 0  # exact in float32
    assert tree.query(origin, dist)[1][0] == -1  # touching is not within
    assert tree.query(origin, dist * (1 - 2.0 ** -30))[1][0] == -1
    # above the distance by less than a float32 step: still strictly within, in float64 terms
    for md in (dist * (1 + 2.0 ** -30), dist * (1 + 2.0 ** -20), np.nextafter(dist, np.inf)):
        d, i = tree.query(origin, md)
        assert i[0] == 0 and d[0] == dist, md
    assert tree.query([0.0, 0.0, 0.0], dist) == (np.inf, -1)
    assert tree.query([0.0, 0.0, 0.0], 2 * dist) == (dist, 0)


@pytest.mark.parametrize("a", [0.5614602565765381, 1.3154374361038208, 1.9026086330413818])
def test_max_distance_is_strict_when_the_square_rounds_down(isa, a):
    # float32 a with fl(a * a) < a^2 and fl(sqrt(fl(a * a))) == a: the squared distance is below
    # max_distance^2, yet the distance equals max_distance, so nothing may be reported
    a32 = np.float32(a)
    assert float(a32) == a and float(np.float32(a32 * a32)) < a * a and np.sqrt(np.float32(a32 * a32)) == a32
    tree = NearestPointTree([[a, 0.0, 0.0], [5.0, 5.0, 5.0]])
    assert tree.query([0.0, 0.0, 0.0], a) == (np.inf, -1)
    assert tree.query([0.0, 0.0, 0.0], np.nextafter(a, np.inf)) == (a, 0)
    assert tree.query([0.0, 0.0, 0.0]) == (a, 0)


def test_zero_max_distance_reports_nothing_even_on_a_point(isa):
    pts = np.array([[0.5, 0.25, -1.0], [0.0, 0.0, 0.0]])
    tree = NearestPointTree(pts)
    assert tree.query(pts, 0.0)[1].tolist() == [-1, -1]
    d, i = tree.query(pts)
    assert d.tolist() == [0.0, 0.0] and i.tolist() == [0, 1]


def test_duplicates_are_stored_once_under_their_first_index(isa):
    p = np.array([[0.25, -0.5, 1.0]])
    pts = np.concatenate([[[1.0, 1.0, 1.0]], np.repeat(p, 500, axis=0), [[2.0, 2.0, 2.0], [-0.0, 0.0, -0.0]],
                          np.repeat(p, 500, axis=0), [[0.0, -0.0, 0.0]]])
    tree = NearestPointTree(pts)
    assert len(tree) == len(pts) and tree.unique_points == 4  # -0 and +0 are the same point
    d, i = tree.query(p + [[0.0, 0.0, 0.125]])
    assert d[0] == 0.125 and i[0] == 1
    d, i = tree.query([[2.0, 2.0, 2.5], [0.0, 0.0, 0.0]])
    assert d.tolist() == [0.5, 0.0] and i.tolist() == [501, 502]
    # a cloud of identical points is one point (and as fast)
    same = NearestPointTree(np.repeat(p, 20_000, axis=0))
    assert same.unique_points == 1
    d, i = same.query(np.zeros((10, 3)))
    assert (i == 0).all() and np.allclose(d, np.linalg.norm(p))


def test_empty_cloud_and_empty_queries(isa):
    tree = NearestPointTree(np.zeros((0, 3)))
    assert len(tree) == 0
    d, i = tree.query(np.ones((5, 3)))
    assert (d == np.inf).all() and (i == -1).all()
    d, i = NearestPointTree(np.ones((3, 3))).query(np.zeros((0, 3)))
    assert d.shape == (0,) and i.shape == (0,)


def test_concurrent_queries_agree():
    rng = np.random.default_rng(9)
    pts = rng.uniform(-1, 1, (20_000, 3))
    tree = NearestPointTree(pts)
    q = rng.uniform(-1.2, 1.2, (20_000, 3))
    want = tree.query(q, 0.05)
    got = [None] * 4

    def run(k):
        got[k] = tree.query(q, 0.05)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for d, i in got:
        assert np.array_equal(d, want[0]) and np.array_equal(i, want[1])


# ----------------------------------------------------------------------------- API and bad input
def test_properties():
    tree = NearestPointTree(np.random.default_rng(0).uniform(0, 1, (1000, 3)))
    assert len(tree) == 1000
    assert isinstance(tree.build_time_ns, int) and tree.build_time_ns > 0
    assert "1000 points" in repr(tree)
    d, i = tree.query([0.5, 0.5, 0.5])
    assert isinstance(d, float) and isinstance(i, int)


def test_bad_points_are_rejected():
    with pytest.raises(ValueError, match="row 1"):
        NearestPointTree([[0, 0, 0], [np.nan, 0, 0]])
    with pytest.raises(ValueError, match=r"\(n, 3\)"):
        NearestPointTree(np.zeros((4, 2)))
    with pytest.raises(ValueError, match="1e\\+12|magnitude"):
        NearestPointTree([[0, 0, 2e12]])
    with pytest.raises(ValueError, match="point 2 is not finite"):
        _core.NearestTree(np.array([[0, 0, 0], [1, 1, 1], [0, np.inf, 0]], np.float32))
    with pytest.raises(TypeError):
        _core.NearestTree(np.zeros((3, 2), np.float32))  # the core's signature wants (n, 3)


def test_bad_queries_are_rejected():
    tree = NearestPointTree(np.zeros((10, 3)))
    with pytest.raises(ValueError, match="finite|non-finite"):
        tree.query([[0, 0, 0], [0, np.nan, 0]])
    with pytest.raises(ValueError, match=r"\(n, 3\)"):
        tree.query(np.zeros((3, 4)))
    for md in (-1.0, np.nan, -np.inf, "far", None):
        with pytest.raises(ValueError, match="max_distance"):
            tree.query(np.zeros((1, 3)), md)
    core = tree._tree
    with pytest.raises(ValueError, match="query point 1 is not finite"):
        core.query(np.array([[0, 0, 0], [np.nan, 0, 0]], np.float32), 1.0)
    for md in (-0.5, float("nan")):
        with pytest.raises(ValueError, match="max_distance"):
            core.query(np.zeros((1, 3), np.float32), md)
    with pytest.raises(TypeError):
        core.query(np.zeros((1, 4), np.float32), 1.0)
