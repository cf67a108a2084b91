"""The planners' nearest-neighbour structure (brute force, then a periodically rebuilt k-d tree
plus a brute-force tail) returns the exact nearest neighbour, as scipy's cKDTree does."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import cKDTree

from simdplan import _core


def check(points, queries, index_from):
    idx, d2, _, _, indexed = _core.nearest_neighbors(points, queries, index_from)
    ref_d, _ = cKDTree(points).query(queries, k=1)
    got = np.sum((points.astype(np.float32)[idx] - queries.astype(np.float32)) ** 2, axis=1)
    np.testing.assert_allclose(np.sqrt(got), ref_d, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(d2, got, rtol=1e-4, atol=1e-6)
    return indexed


@pytest.mark.parametrize("n", [1, 2, 17, 255, 256, 257, 1000, 5000])
@pytest.mark.parametrize("index_from", [1, 64, 256, 2**40])
def test_uniform_clouds(n, index_from):
    rng = np.random.default_rng(n * 7 + index_from % 97)
    pts = rng.uniform(-3, 3, (n, 7))
    indexed = check(pts, rng.uniform(-3.5, 3.5, (300, 7)), index_from)
    if n > 2 * index_from + 64:
        assert indexed > 0, "the k-d tree should be in use at this size"


@pytest.mark.parametrize("cloud", ["duplicates", "identical", "collinear", "planar", "clustered"])
def test_special_clouds(cloud):
    rng = np.random.default_rng(3)
    n = 3000
    if cloud == "duplicates":
        pts = np.repeat(rng.uniform(-1, 1, (300, 7)), 10, axis=0)
    elif cloud == "identical":
        pts = np.tile(rng.uniform(-1, 1, 7), (n, 1))
    elif cloud == "collinear":
        pts = np.outer(rng.uniform(-2, 2, n), rng.normal(size=7))
    elif cloud == "planar":
        pts = np.zeros((n, 7))
        pts[:, :2] = rng.uniform(-2, 2, (n, 2))
    else:
        pts = np.concatenate([rng.normal(c, 0.01, (n // 3, 7)) for c in (-1.0, 0.0, 1.0)])
    queries = np.concatenate([pts[rng.integers(0, len(pts), 200)], rng.uniform(-2, 2, (100, 7))])
    check(pts, queries, 64)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 1500), dof=st.integers(1, 9), seed=st.integers(0, 2**31))
def test_random_sizes_and_dimensions(n, dof, seed):
    rng = np.random.default_rng(seed)
    pts = np.round(rng.uniform(-2, 2, (n, dof)), 2)  # rounding makes ties and equal splits common
    check(pts, np.round(rng.uniform(-2.5, 2.5, (50, dof)), 2), 32)


def float32_d2(points, queries):
    """Squared distances as the kernels sum them: float32, joint by joint in order, a multiply then an add."""
    P, Q = points.astype(np.float32), queries.astype(np.float32)
    d = np.zeros((len(Q), len(P)), np.float32)
    for j in range(P.shape[1]):
        e = P[None, :, j] - Q[:, None, j]
        d = d + e * e
    return d


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 700), dof=st.integers(1, 16), index_from=st.sampled_from([1, 16, 40, 2**40]),
       seed=st.integers(0, 2**31))
def test_bit_exact_against_float32_reference(isa, n, dof, index_from, seed):
    """Every kernel (brute sweep, k-d tree leaves, the tail after a rebuild), on every ISA, returns the
    float32 minimum bit for bit; brute force alone returns its first row too (as a strict < scan would)."""
    rng = np.random.default_rng(seed)
    pts = np.round(rng.uniform(-2, 2, (n, dof)), 1)  # coarse: many exact ties
    queries = np.round(rng.uniform(-2.5, 2.5, (60, dof)), 1)
    idx, d2, _, _, _ = _core.nearest_neighbors(pts, queries, index_from)
    ref = float32_d2(pts, queries)
    np.testing.assert_array_equal(d2, ref.min(axis=1))
    np.testing.assert_array_equal(ref[np.arange(len(queries)), idx], d2)
    if index_from == 2**40:
        np.testing.assert_array_equal(idx, ref.argmin(axis=1))


def test_bad_input():
    with pytest.raises(ValueError, match="same dof"):
        _core.nearest_neighbors(np.zeros((3, 7)), np.zeros((2, 6)), 1)
    with pytest.raises(ValueError, match="index_from"):
        _core.nearest_neighbors(np.zeros((3, 7)), np.zeros((2, 7)), 0)
