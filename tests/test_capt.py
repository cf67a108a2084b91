"""CAPT (simdplan.collision.CAPT) against a brute-force reference, under every ISA.

Reference: the float32 cloud, centres and radii, distances in float64; a sphere collides iff some
point is strictly closer than r + point_radius. Random cases skip spheres whose nearest point is
within a relative 1e-5 of the boundary (float32 ambiguity); the exact-boundary cases use numbers
that are exact in float32 (Pythagorean triples scaled by powers of two), where touching must be
free and 2^-20 closer must collide. Both query forms of the core (one sphere at a time and W
spheres per lane-batched query) are compared.
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import cKDTree

from simdplan.collision import CAPT

EPS = 2.0 ** -20
R_MIN, R_MAX = 0.012, 0.08  # the Franka Panda's sphere radii


def reference(points, centers, radii, point_radius=0.0):
    """(hit, ambiguous): brute force on the float32 values, float64 arithmetic."""
    p = np.asarray(points, np.float32).astype(np.float64)
    c = np.asarray(centers, np.float32).astype(np.float64)
    r = np.asarray(radii, np.float32).astype(np.float64) + np.float64(np.float32(point_radius))
    if len(p) == 0:
        return np.zeros(len(c), bool), np.zeros(len(c), bool)
    d, _ = cKDTree(p).query(c)
    return d < r, np.abs(d - r) <= 1e-5 * np.maximum(r, 1e-3)


def check(points, centers, radii, r_min, r_max, point_radius=0.0):
    """Asserts both query forms agree with the reference; returns the tree."""
    tree = CAPT(points, r_min, r_max, point_radius)
    want, ambiguous = reference(points, centers, radii, point_radius)
    c32 = np.ascontiguousarray(centers, np.float32)
    r32 = np.ascontiguousarray(radii, np.float32)
    for mode in (0, 1):
        got = tree._tree.collides(c32, r32, mode)
        bad = np.flatnonzero((got != want) & ~ambiguous)
        assert len(bad) == 0, (f"mode {mode}: {len(bad)} wrong, first sphere {bad[0]} centre {c32[bad[0]]} "
                               f"r {r32[bad[0]]} want {want[bad[0]]}")
    np.testing.assert_array_equal(tree.collides(centers, radii)[~ambiguous], want[~ambiguous])
    return tree


# ----------------------------------------------------------------------------- random clouds
def _cloud(kind: str, n: int, rng: np.random.Generator) -> np.ndarray:
    if kind == "uniform":
        return rng.uniform(-0.5, 0.5, (n, 3))
    if kind == "clustered":
        centres = rng.uniform(-0.5, 0.5, (3, 3))
        return centres[rng.integers(0, 3, n)] + rng.normal(0, 0.005, (n, 3))
    if kind == "duplicates":
        base = rng.uniform(-0.3, 0.3, (max(1, n // 4), 3))
        return base[rng.integers(0, len(base), n)]
    if kind == "identical":
        return np.tile(rng.uniform(-1, 1, 3), (n, 1))
    if kind == "planar":
        return np.c_[rng.uniform(-0.5, 0.5, (n, 2)), np.full(n, 0.1)]
    if kind == "collinear":
        return np.outer(rng.uniform(-0.5, 0.5, n), [0.3, -0.2, 0.9])
    if kind == "grid":  # many equal coordinates, exact ties at split values
        return rng.integers(-4, 5, (n, 3)) * 0.03125
    raise AssertionError(kind)


KINDS = ["uniform", "clustered", "duplicates", "identical", "planar", "collinear", "grid"]


@settings(max_examples=40)
@given(kind=st.sampled_from(KINDS), n=st.integers(1, 300), seed=st.integers(0, 2**32 - 1),
       r_lo=st.floats(0.0, 0.1), r_span=st.floats(0.0, 0.15), point_radius=st.sampled_from([0.0, 0.0, 0.01, 0.05]))
def test_random_clouds_match_brute_force(isa, kind, n, seed, r_lo, r_span, point_radius):
    rng = np.random.default_rng(seed)
    pts = _cloud(kind, n, rng)
    r_min, r_max = r_lo, r_lo + r_span
    m = 256
    centers = np.concatenate([
        pts[rng.integers(0, len(pts), m // 2)] + rng.normal(0, r_max + 0.01, (m // 2, 3)),  # near points
        rng.uniform(pts.min(0) - 0.3, pts.max(0) + 0.3, (m - m // 2, 3)),  # anywhere around
    ])
    radii = rng.uniform(r_min, r_max, m)
    radii[:4] = [r_min, r_max, r_min, r_max]
    check(pts, centers, radii, r_min, r_max, point_radius)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 7, 8, 9, 31, 33, 100, 1000])
def test_sizes_including_non_powers_of_two(isa, n):
    rng = np.random.default_rng(n)
    pts = rng.uniform(0, 0.3, (n, 3))
    centers = rng.uniform(-0.1, 0.4, (500, 3))
    check(pts, centers, rng.uniform(R_MIN, R_MAX, 500), R_MIN, R_MAX)


# ----------------------------------------------------------------------------- dense clouds (pruning, shortcut)
@pytest.mark.parametrize("name", ["dense cube", "dense plane", "tiny blob", "sphere surface"])
def test_dense_clouds_prune_and_stay_exact(isa, name):
    rng = np.random.default_rng(7)
    if name == "dense cube":
        pts = rng.uniform(0, 0.05, (3000, 3))
    elif name == "dense plane":
        pts = np.c_[rng.uniform(0, 0.3, (4000, 2)), np.zeros(4000)]
    elif name == "tiny blob":
        pts = rng.normal(0, 0.001, (2000, 3))
    else:
        u = rng.normal(size=(4000, 3))
        pts = 0.15 * u / np.linalg.norm(u, axis=1)[:, None]
    centers = np.concatenate([pts[rng.integers(0, len(pts), 3000)] + rng.normal(0, 0.05, (3000, 3)),
                              rng.uniform(pts.min(0) - 0.1, pts.max(0) + 0.1, (3000, 3))])
    tree = check(pts, centers, rng.uniform(R_MIN, R_MAX, 6000), R_MIN, R_MAX)
    stats = tree.stats
    assert stats["pruned"] > 0 or stats["shortcut_leaves"] > 0, stats
    # every stored point is a cloud point (what lets the queries read past a leaf's range)
    stored = tree._tree.afforded_points()
    cloud = {tuple(p) for p in np.asarray(pts, np.float32).tolist()}
    assert all(tuple(p) in cloud for p in stored.tolist())


def test_all_identical_and_duplicates_are_stored_once(isa):
    p = np.array([[0.25, -0.5, 1.0]])
    tree = CAPT(np.repeat(p, 5000, axis=0), R_MIN, R_MAX)
    assert len(tree) == 5000 and tree.unique_points == 1
    assert tree.stats["max_afforded"] == 1
    assert tree.collides(p[0] + [0.05, 0, 0], 0.0500001) and not tree.collides(p[0] + [0.05, 0, 0], 0.05)
    pts = np.random.default_rng(0).uniform(0, 1, (300, 3))
    tree = CAPT(np.concatenate([pts, pts[::-1], pts]), R_MIN, R_MAX)
    assert tree.unique_points == 300


def test_empty_cloud_never_collides(isa):
    tree = CAPT(np.zeros((0, 3)), R_MIN, R_MAX)
    assert len(tree) == 0
    assert not tree.collides(np.zeros((10, 3)), R_MAX).any()


def test_far_points_and_far_spheres(isa):
    rng = np.random.default_rng(3)
    pts = np.concatenate([rng.uniform(0, 1, (200, 3)), [[1e6, 0, 0], [0, -1e6, 5], [3e5, 3e5, 3e5]]])
    centers = np.concatenate([rng.uniform(-0.2, 1.2, (500, 3)), [[1e6 + 0.05, 0, 0], [-1e7, 0, 0], [0, -1e6, 5.07]]])
    check(pts, centers, np.full(len(centers), R_MAX), R_MIN, R_MAX)


def test_large_coordinates(isa):
    rng = np.random.default_rng(4)
    pts = rng.uniform(0, 2, (500, 3)) + [4096.0, -8192.0, 1024.0]
    centers = pts[rng.integers(0, 500, 1000)] + rng.normal(0, 0.06, (1000, 3))
    check(pts, centers, rng.uniform(R_MIN, R_MAX, 1000), R_MIN, R_MAX)


@pytest.mark.parametrize("r_max", [5e-324, 1e-30, 1e-9, 0.05, 3.0, 1e6])
@pytest.mark.parametrize("spread", [0.0, 1e-9, 1.0, 1e12])
def test_coarse_grid_extremes(isa, r_max, spread):
    """The occupancy grid (cells near r_max wide, coarser for tiny radii or huge clouds) only ever
    clears spheres that reach no point: radii and extents from subnormal to 1e12."""
    rng = np.random.default_rng(11)
    pts = rng.uniform(-1, 1, (60, 3)) * spread + [3.0, -1e3, 0.5]
    step = min(r_max, 1.0)
    centers = np.concatenate([pts + rng.normal(0, 1, pts.shape) * step, pts + rng.normal(0, 1, pts.shape),
                              rng.uniform(-2 * spread - 2, 2 * spread + 2, (40, 3))])
    tree = check(pts, centers, np.full(len(centers), r_max), 0.0, r_max)
    assert tree.stats["grid_near"] <= tree.stats["grid_cells"]


@pytest.mark.parametrize("point_radius", [0.0, 0.004])
def test_small_radius_grid_at_its_threshold(isa, point_radius):
    """Radii at, just below and just above the small-radius grid's threshold, and r_max, with
    centres just inside and just outside reach of a point: each query reads the grid its radius
    picks, and every answer matches brute force."""
    rng = np.random.default_rng(21)
    pts = np.r_[rng.uniform(-0.3, 0.3, (400, 3)), rng.uniform(-0.3, 0.3, (200, 2)) @ [[1, 0, 0], [0, 1, 0]]]
    tree = CAPT(pts, R_MIN, R_MAX, point_radius)
    s = tree.stats
    small = np.float32(s["grid_small_radius"])
    assert R_MIN < small < R_MAX and 0 < s["grid_small_near"] < s["grid_small_cells"]
    radii = np.array([small, np.nextafter(small, np.float32(0)), np.nextafter(small, np.float32(1)), R_MAX,
                      R_MIN], np.float32)
    centers, rs = [], []
    for r in radii:
        d = rng.normal(size=(300, 3))
        d /= np.linalg.norm(d, axis=1, keepdims=True)
        reach = float(r) + point_radius
        for f in (0.99, 0.999, 1.001, 1.01, 1.5, 3.0):
            centers.append(pts[rng.integers(0, len(pts), 300)] + d * reach * f)
            rs.append(np.full(300, r))
    check(pts, np.concatenate(centers), np.concatenate(rs), R_MIN, R_MAX, point_radius)


def test_small_radius_grid_only_where_the_range_is_wide():
    pts = np.random.default_rng(3).uniform(0, 1, (100, 3))
    narrow = CAPT(pts, 0.05, 0.06).stats
    assert narrow["grid_small_cells"] == narrow["grid_small_near"] == narrow["grid_small_radius"] == 0
    s = CAPT(pts, 0.01, 0.06).stats
    assert s["grid_small_cells"] > s["grid_cells"] and np.isclose(s["grid_small_radius"], 0.0225)


def test_coarse_grid_clears_far_cells_only():
    """A wall of points: its grid marks the cells within reach, and cells well away stay clear."""
    g = np.linspace(-0.5, 0.5, 26)
    pts = np.array([[x, y, 0.0] for x in g for y in g])
    tree = CAPT(pts, R_MIN, R_MAX)
    s = tree.stats
    assert 0 < s["grid_near"] < s["grid_cells"]
    # every sphere near the wall is answered as brute force does, every far one is free
    rng = np.random.default_rng(2)
    c = np.c_[rng.uniform(-0.6, 0.6, (2000, 2)), rng.uniform(-0.4, 0.4, 2000)]
    r = rng.uniform(R_MIN, R_MAX, 2000)
    want, amb = reference(pts, c, r)
    np.testing.assert_array_equal(tree.collides(c, r)[~amb], want[~amb])


# ----------------------------------------------------------------------------- exact boundaries
@pytest.mark.parametrize("scale", [2.0 ** -6, 2.0 ** -4, 1.0])
@pytest.mark.parametrize("triple", [(3, 4, 0), (0, 0, 5), (2, 3, 6)])  # |.| = 5, 5, 7
def test_touching_is_free_and_slightly_closer_collides(isa, scale, triple):
    d = scale * np.linalg.norm(triple)
    rng = np.random.default_rng(5)
    others = rng.uniform(3, 4, (50, 3)) * d  # beyond every query sphere, to make a real tree
    pts = np.concatenate([[np.multiply(triple, scale)], others])
    for r_min, r_max in [(d, d), (d / 2, d), (d, 2 * d)]:  # the radius at r_max, at r_min, inside
        tree = CAPT(pts, r_min, r_max)
        origin = np.zeros(3)
        assert not tree.collides(origin, d), (r_min, r_max)
        for mode in (0, 1):
            assert not tree._tree.collides(np.zeros((1, 3), np.float32), np.array([d], np.float32), mode)[0]
        if d + EPS * scale <= r_max:
            assert tree.collides(origin, d + EPS * scale)
        # or the sphere moved 2^-20 (relative) towards the point along an axis it has
        axis = int(np.argmax(triple))
        closer = np.zeros(3)
        closer[axis] = EPS * scale
        assert tree.collides(closer, d)


def test_point_radius_is_added(isa):
    pts = np.array([[3.0, 4.0, 0.0]]) * 0.25
    tree = CAPT(pts, 0.5, 1.0, point_radius=0.25)  # 0.25 + 1.0 = 1.25 = |p|
    assert tree.point_radius == 0.25
    assert tree.collides([0, 0, 0], 1.0) is False
    tree2 = CAPT(pts, 0.5, 1.0, point_radius=0.25 + EPS)
    assert tree2.collides([0, 0, 0], 1.0)


def test_r_min_shortcut_is_exact_at_r_min(isa):
    # A dense cube: its interior cells keep one point (r_min covers them); radius exactly r_min.
    rng = np.random.default_rng(6)
    pts = rng.uniform(0, 0.05, (4000, 3))
    tree = CAPT(pts, 0.01, 0.02)
    assert tree.stats["shortcut_leaves"] > 0
    centers = rng.uniform(-0.03, 0.08, (5000, 3))
    check(pts, centers, np.full(5000, 0.01), 0.01, 0.02)


# ----------------------------------------------------------------------------- API and bad input
def test_properties_and_batch_shapes():
    pts = np.random.default_rng(0).uniform(0, 1, (100, 3))
    tree = CAPT(pts, 0.01, 0.1, 0.002)
    assert (tree.r_min, tree.r_max, len(tree)) == (0.01, 0.1, 100)
    assert tree.build_time_ns > 0 and "CAPT(100 points" in repr(tree)
    assert isinstance(tree.collides([0.5, 0.5, 0.5], 0.05), bool)
    out = tree.collides(np.zeros((4, 3)), [0.01, 0.02, 0.05, 0.1])
    assert out.dtype == bool and out.shape == (4,)
    assert tree.collides(np.zeros((0, 3)), 0.05).shape == (0,)
    np.testing.assert_array_equal(tree.collides(pts[:5].astype(np.float32), 0.05), True)


@pytest.mark.parametrize("kwargs, match", [
    (dict(r_min=0.1, r_max=0.05), "must not exceed"),
    (dict(r_min=-0.01, r_max=0.05), "r_min must be"),
    (dict(r_min=0.0, r_max=float("inf")), "r_max must be"),
    (dict(r_min=0.0, r_max=float("nan")), "r_max must be"),
    (dict(r_min=0.0, r_max=0.1, point_radius=-1e-3), "point_radius must be"),
    (dict(r_min="a", r_max=0.1), "r_min must be a number"),
])
def test_bad_radii(kwargs, match):
    with pytest.raises(ValueError, match=match):
        CAPT(np.zeros((3, 3)), **kwargs)


@pytest.mark.parametrize("points, match", [
    (np.zeros((3, 2)), r"shape \(n, 3\)"),
    (np.zeros(3), r"shape \(n, 3\)"),
    ([[0, 0, np.nan]], "non-finite"),
    ([[0, np.inf, 0], [1, 2, 3]], "non-finite"),
    ([[1e13, 0, 0]], "magnitude"),
    ("points", "numeric"),
])
def test_bad_points(points, match):
    with pytest.raises(ValueError, match=match):
        CAPT(points, 0.01, 0.1)


def test_radius_contract_is_enforced():
    tree = CAPT(np.random.default_rng(0).uniform(0, 1, (50, 3)), 0.02, 0.05)
    for bad in (0.019, 0.0500001, float("nan"), -1.0):
        with pytest.raises(ValueError, match="outside the range"):
            tree.collides(np.zeros((2, 3)), [0.03, bad])
    with pytest.raises(ValueError, match="outside the range"):
        tree._tree.collides(np.zeros((1, 3), np.float32), np.array([0.06], np.float32))  # the binding checks too
    with pytest.raises(ValueError, match="radii must be"):
        tree.collides(np.zeros((2, 3)), [0.03, 0.03, 0.03])
    with pytest.raises(ValueError, match="centers must have shape"):
        tree.collides(np.zeros((2, 2)), 0.03)
    with pytest.raises(ValueError, match="finite"):
        tree.collides([[0, np.nan, 0]], 0.03)


@pytest.mark.parametrize("mode", [0, 1])
def test_binding_names_the_first_bad_sphere(isa, mode):
    # the kernels check radii and centres as they load them, in whole vector groups and in the
    # tail; the error must name the first bad sphere wherever it sits
    tree = CAPT(np.random.default_rng(0).uniform(0, 1, (50, 3)), 0.02, 0.05)
    n = 37  # two full groups of 16 (one of 32 lanes is never full) and a tail
    for at in (0, 5, 15, 16, 31, 32, 36):
        for bad_r in (0.0199, 0.0501, np.nan, -np.inf):
            r = np.full(n, 0.03, np.float32)
            r[at] = bad_r
            with pytest.raises(ValueError, match=rf"radius .*\(sphere {at}\) is outside the range"):
                tree._tree.collides(np.zeros((n, 3), np.float32), r, mode)
        for axis in range(3):
            for bad_c in (np.nan, np.inf, -np.inf):
                c = np.zeros((n, 3), np.float32)
                c[at, axis] = bad_c
                c[-1, axis] = bad_c  # a later bad sphere must not be the one named
                with pytest.raises(ValueError, match=rf"centre of sphere {at} is not finite"):
                    tree._tree.collides(c, np.full(n, 0.03, np.float32), mode)
    # the range is inclusive at both ends, and huge finite centres are valid
    r = np.array([0.02, 0.05, 0.03], np.float32)
    c = np.array([[3e38, 0, 0], [0, -3e38, 0], [0, 0, 0.5]], np.float32)
    assert tree._tree.collides(c, r, mode).shape == (3,)


def test_concurrent_queries_agree():
    rng = np.random.default_rng(1)
    tree = CAPT(rng.uniform(0, 1, (5000, 3)), R_MIN, R_MAX)
    centers = rng.uniform(0, 1, (20000, 3))
    radii = rng.uniform(R_MIN, R_MAX, 20000)
    want = tree.collides(centers, radii)
    results = [None] * 4

    def work(i):
        results[i] = tree.collides(centers, radii)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, want)


@pytest.mark.parametrize("n", [5000, 20000])
def test_deep_trees_surface_clouds(isa, n):
    """Depth 13-15: AVX-512 descends 10 levels by permutes and the rest lane by lane; surface
    clouds exercise own-point pruning (step 6 in capt/tree.hh)."""
    rng = np.random.default_rng(n)
    xy = rng.uniform(-1, 1, (n, 2))
    pts = np.c_[xy, 0.05 * np.sin(3 * xy[:, 0]) + rng.normal(0, 0.002, n)]
    centers = np.concatenate([pts[rng.integers(0, n, 4000)] + rng.normal(0, 0.06, (4000, 3)),
                              rng.uniform(-1.1, 1.1, (2000, 3))])
    tree = check(pts, centers, rng.uniform(R_MIN, R_MAX, 6000), R_MIN, R_MAX)
    assert tree.stats["pruned"] > 0


def test_portable_and_avx512_builds_store_the_same_tree():
    """The build's AVX-512 loops compute what the portable ones do (capt.cc): same stored points.
    SIMDPLAN_CAPT_PORTABLE_BUILD=1 (read once per process) forces the portable loops."""
    import os
    import subprocess
    import sys

    code = ("import numpy as np, sys; from simdplan.collision import CAPT\n"
            "rng = np.random.default_rng(5)\n"
            "xy = rng.uniform(-1, 1, (6000, 2))\n"
            "clouds = [rng.uniform(-1, 1, (3000, 3)), np.c_[xy, 0.01 * rng.normal(size=6000)],"
            " rng.normal(0, 0.01, (2000, 3))]\n"
            "out = [CAPT(p, 0.012, 0.08, pr)._tree.afforded_points() for p in clouds for pr in (0.0, 0.01)]\n"
            "sys.stdout.buffer.write(np.concatenate(out).astype(np.float32).tobytes())\n")
    runs = []
    for portable in ("0", "1"):
        env = dict(os.environ, SIMDPLAN_CAPT_PORTABLE_BUILD=portable)
        runs.append(subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, check=True).stdout)
    assert len(runs[0]) > 0 and runs[0] == runs[1]
