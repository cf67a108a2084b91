"""The nearest-point tree's distance floor grid: its values are lower bounds of the distance to the
cloud (the certified Link settles clearances with them), and not much lower, under every ISA.

Reference: cKDTree on the float32 points the tree stores, in float64. A floor must never exceed
that distance (the grid's slack covers its own float32 cell arithmetic, so no tolerance is given).
Tightness: a query in cell c is within the box-to-box distance of c's nearest occupied cell plus
two cell diagonals of some point, and values are stored in 16ths of a cell, so a floor is at most
2 sqrt(3) + 1/16 cells under the true distance where the grid reaches: queries within 15 cells of
the cloud (the grid is its AABB grown by 16 cells; beyond, border cells answer, loosely), plus the
grid's slack for its float32 arithmetic, about 1e-6 of the largest |coordinate| (a millimetre 1 km
from the origin).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import cKDTree

from simdplan import _core

from conftest import on_every_isa
from test_point_nearest import KINDS, cloud, queries

NEAR_CELLS = 15.0
SLACK_CELLS = 2 * np.sqrt(3) + 1 / 16 + 1e-3


def true_distance(points32: np.ndarray, q32: np.ndarray) -> np.ndarray:
    return cKDTree(points32.astype(np.float64)).query(q32.astype(np.float64))[0]


def check_floor(points, qs):
    """Asserts floor <= distance everywhere and the tightness bound below the cap; returns the tree."""
    p32 = np.ascontiguousarray(points, np.float32)
    q32 = np.ascontiguousarray(qs, np.float32)
    tree = _core.NearestTree(p32, distance_floor=True)
    assert tree.floor_cell >= 0.002 and 0 < tree.floor_cells <= 2**22
    floor = tree.floor_distance(q32)
    assert floor.dtype == np.float32 and floor.shape == (len(q32),)
    d = true_distance(p32, q32)
    over = floor.astype(np.float64) - d
    assert (over <= 0).all(), f"a floor above the distance by {over.max():.3g} m at {q32[np.argmax(over)]}"
    near = d < NEAR_CELLS * tree.floor_cell
    slack = 3e-6 * (np.abs(p32).max() + 1.0)
    assert (d[near] - floor[near] <= SLACK_CELLS * tree.floor_cell + slack).all(), "floor far below the distance"
    return tree


@pytest.mark.parametrize("n", [1, 2, 17, 1000, 20_000])
@pytest.mark.parametrize("kind", KINDS)
def test_seeded_clouds(isa, kind, n):
    rng = np.random.default_rng(n + 7)
    pts = cloud(kind, n, rng)
    check_floor(pts, queries(pts, 4000, rng))


@settings(max_examples=60, deadline=None)
@given(kind=st.sampled_from(KINDS), n=st.integers(1, 600), seed=st.integers(0, 2**32 - 1),
       scale=st.sampled_from([1e-3, 0.05, 1.0, 20.0]), offset=st.sampled_from([0.0, 3.7, -250.0, 1e4]))
def test_random_clouds(isa, kind, n, seed, scale, offset):
    rng = np.random.default_rng(seed)
    pts = cloud(kind, n, rng) * scale + offset
    qs = queries(pts, 300, rng)
    # cell edges are where the float arithmetic is decided: put queries on and next to them
    check_floor(pts, np.concatenate([qs, np.round(qs / 0.002) * 0.002]))


def test_every_isa_agrees_with_scalar():
    rng = np.random.default_rng(4)
    pts = np.ascontiguousarray(cloud("clustered", 3000, rng), np.float32)
    qs = np.ascontiguousarray(queries(pts, 5000, rng), np.float32)
    tree = _core.NearestTree(pts, distance_floor=True)
    got = on_every_isa(lambda: tree.floor_distance(qs))
    for name, f in got.items():  # the same cells; SIMD builds fuse the final multiply-add (one rounding)
        np.testing.assert_allclose(f, got["scalar"], rtol=0, atol=1e-6, err_msg=name)


def test_queries_outside_the_grid_and_nan_are_safe(isa):
    pts = np.array([[0.0, 0.0, 0.0], [0.1, 0.0, 0.0]], np.float32)
    tree = check_floor(pts, np.array([[1e30, 0, 0], [-1e30, 5, 5], [0.05, 3.0, 0.0], [0.05, 0.0, 0.0]]))
    f = tree.floor_distance(np.array([[np.nan, 0.0, 0.0], [np.inf, -np.inf, 0.0]], np.float32))
    assert f.shape == (2,)  # a value (not a bound), and no out-of-grid read


def test_grid_size_follows_the_cloud():
    rng = np.random.default_rng(1)
    small = _core.NearestTree(np.ascontiguousarray(rng.uniform(0, 0.05, (50, 3)), np.float32), distance_floor=True)
    big = _core.NearestTree(np.ascontiguousarray(rng.uniform(0, 1.5, (20_000, 3)), np.float32), distance_floor=True)
    assert small.floor_cells < big.floor_cells <= 2**22
    assert big.floor_cell < 0.03  # about a centimetre on a room-scale cloud of this density


def test_without_the_grid():
    tree = _core.NearestTree(np.zeros((3, 3), np.float32))
    assert tree.floor_cells == 0 and tree.floor_cell == 0.0
    with pytest.raises(ValueError, match="distance_floor"):
        tree.floor_distance(np.zeros((1, 3), np.float32))
    empty = _core.NearestTree(np.zeros((0, 3), np.float32), distance_floor=True)
    assert empty.floor_cells == 0
