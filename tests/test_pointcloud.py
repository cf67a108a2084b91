"""Point-cloud tools (simdplan.collision.pointcloud) against brute force, scipy and hand-made files.

close_pairs must equal the brute force bit for bit (same float64 formula) and agree with
scipy.spatial.cKDTree.query_pairs; filter_pointcloud's two guarantees are checked directly;
remove_robot_points against the robot's spheres; the loaders on files written here.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import cKDTree

import simdplan
from simdplan.collision import close_pairs, filter_pointcloud, load_pointcloud, pointcloud
from simdplan.robots import remove_robot_points


def d2(a, b):
    d = a - b
    return (d[..., 0] * d[..., 0] + d[..., 1] * d[..., 1]) + d[..., 2] * d[..., 2]


def brute_pairs(p, tol):
    i, j = np.triu_indices(len(p), 1)
    keep = d2(p[i], p[j]) < tol * tol
    return np.c_[i[keep], j[keep]].astype(np.int64)


points_strategy = st.sampled_from(["uniform", "integer", "duplicates", "line"])


def _points(kind, n, rng):
    if kind == "uniform":
        return rng.uniform(-1, 1, (n, 3))
    if kind == "integer":  # exact ties at the tolerance
        return rng.integers(-3, 4, (n, 3)).astype(float)
    if kind == "duplicates":
        base = rng.uniform(-1, 1, (max(1, n // 3), 3))
        return base[rng.integers(0, len(base), n)]
    return np.outer(rng.uniform(-1, 1, n), [1.0, 0.5, -0.25])


# ----------------------------------------------------------------------------- close_pairs
@settings(max_examples=60)
@given(kind=points_strategy, n=st.integers(0, 250), seed=st.integers(0, 2**32 - 1),
       tol=st.sampled_from([1e-3, 0.05, 0.3, 1.0, 1.5, 2.0, 5.0]))
def test_close_pairs_equals_brute_force(kind, n, seed, tol):
    p = _points(kind, n, np.random.default_rng(seed))
    got = close_pairs(p, tol)
    assert got.dtype == np.int64 and got.shape[1] == 2
    np.testing.assert_array_equal(got, brute_pairs(p, tol) if n > 1 else np.zeros((0, 2), np.int64))


def test_close_pairs_agrees_with_ckdtree():
    rng = np.random.default_rng(0)
    p = rng.uniform(0, 1, (20000, 3))
    tol = 0.01
    got = close_pairs(p, tol)
    ref = cKDTree(p).query_pairs(tol, output_type="ndarray")  # scipy counts distance <= tol
    ref = ref[d2(p[ref[:, 0]], p[ref[:, 1]]) < tol * tol]
    ref = ref[np.lexsort((ref[:, 1], ref[:, 0]))]
    np.testing.assert_array_equal(got, ref)
    assert len(got) > 100


def test_close_pairs_strict_and_bad_input():
    p = np.array([[0.0, 0, 0], [3, 4, 0], [0, 0, 4.999999]])
    np.testing.assert_array_equal(close_pairs(p, 5.0), [[0, 2]])  # exactly 5 apart is not closer than 5
    for tol in (0, -1, np.nan, np.inf, "x"):
        with pytest.raises(ValueError, match="tol"):
            close_pairs(p, tol)
    with pytest.raises(ValueError, match="non-finite"):
        close_pairs([[0, 0, np.nan]], 1.0)


# ----------------------------------------------------------------------------- filter_pointcloud
def _check_thinning(cropped, kept, min_dist):
    """The two guarantees of filter_pointcloud, by brute force."""
    if len(kept) > 1:
        assert len(brute_pairs(kept, min_dist)) == 0, "two kept points closer than min_dist"
    if len(cropped):
        # kept points are at distance 0 from themselves, so this says: every removed point has a
        # kept point closer than min_dist
        nearest = np.min(d2(cropped[:, None, :], kept[None, :, :]), axis=1)
        assert (nearest < min_dist * min_dist).all(), "a removed point has no kept point within min_dist"


@settings(max_examples=50)
@given(kind=points_strategy, n=st.integers(0, 300), seed=st.integers(0, 2**32 - 1),
       min_dist=st.sampled_from([0.0, 1e-3, 0.1, 0.5, 1.0, 2.0]))
def test_thinning_guarantees(kind, n, seed, min_dist):
    p = _points(kind, n, np.random.default_rng(seed))
    kept, idx = filter_pointcloud(p, min_dist, return_index=True)
    np.testing.assert_array_equal(kept, p[idx])
    assert (np.diff(idx) > 0).all()  # input order
    if min_dist == 0:
        np.testing.assert_array_equal(idx, np.arange(n))
    else:
        _check_thinning(p, kept, min_dist)


def test_thinning_is_greedy_in_input_order():
    p = np.array([[0.0, 0, 0], [0.5, 0, 0], [1.0, 0, 0], [1.4, 0, 0], [3, 0, 0]])
    np.testing.assert_array_equal(filter_pointcloud(p, 1.0, return_index=True)[1], [0, 2, 4])
    np.testing.assert_array_equal(filter_pointcloud(p[::-1], 1.0, return_index=True)[1], [0, 1, 4])


def test_crop_box_and_range_are_closed():
    p = np.array([[0.0, 0, 0], [1, 1, 1], [1.0000001, 0, 0], [-1, 0, 0], [0, 2, 0], [0.5, 0.5, 0]])
    kept, idx = filter_pointcloud(p, 0.0, box=([-1, 0, 0], [1, 1, 1]), return_index=True)
    np.testing.assert_array_equal(idx, [0, 1, 3, 5])
    _, idx = filter_pointcloud(p, 0.0, max_range=1.0, return_index=True)  # |p| <= 1, origin 0
    np.testing.assert_array_equal(idx, [0, 3, 5])  # |(-1, 0, 0)| = 1 is kept
    _, idx = filter_pointcloud(p, 0.0, max_range=1.0, origin=[0, 2, 0], return_index=True)
    np.testing.assert_array_equal(idx, [4])
    # both crops, then thinning among the cropped-in points only
    rng = np.random.default_rng(2)
    q = rng.uniform(-2, 2, (2000, 3))
    kept = filter_pointcloud(q, 0.2, box=([-1, -1, -1], [1, 1, 1]), max_range=1.2, origin=[0.1, 0, 0])
    cropped = q[(np.abs(q) <= 1).all(axis=1) & (d2(q, np.array([0.1, 0, 0])) <= 1.44)]
    assert np.isin(kept, cropped).all()
    _check_thinning(cropped, kept, 0.2)


def test_filter_large_cloud_against_ckdtree():
    rng = np.random.default_rng(3)
    p = np.c_[rng.uniform(0, 1, (60000, 2)), 0.01 * rng.normal(size=60000)]
    kept = filter_pointcloud(p, 0.02)
    assert not cKDTree(kept).query_pairs(0.02 * (1 - 1e-12))
    dist, _ = cKDTree(kept).query(p)
    assert (dist < 0.02).all()


@pytest.mark.parametrize("kwargs, match", [
    (dict(min_dist=-0.1), "min_dist"),
    (dict(min_dist=np.nan), "min_dist"),
    (dict(min_dist=0.1, box=[[1, 0, 0], [0, 1, 1]]), "must not exceed"),
    (dict(min_dist=0.1, box=[0, 0, 0]), "box must be"),
    (dict(min_dist=0.1, origin=[0, 0, 0]), "only used with max_range"),
    (dict(min_dist=0.1, max_range=-1.0), "max_range"),
    (dict(min_dist=0.1, max_range=1.0, origin=[0, 0]), "origin must be"),
])
def test_filter_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        filter_pointcloud(np.zeros((5, 3)), **kwargs)


# ----------------------------------------------------------------------------- remove_robot_points
def test_remove_robot_points_matches_spheres():
    robot = simdplan.robots.load("panda")
    q = (robot.lower + robot.upper) / 2
    spheres = robot.fk(q).astype(np.float64)
    rng = np.random.default_rng(4)
    lo, hi = spheres[:, :3].min(0) - 0.1, spheres[:, :3].max(0) + 0.1
    p = np.concatenate([rng.uniform(lo, hi, (20000, 3)), rng.uniform(-2, 2, (1000, 3))])
    # a point exactly on a sphere's surface (and in no other sphere) stays: the rule is strict.
    # c + r along an axis is exact in float64 for these float32 values.
    def inside_any(x):
        return (d2(x[None, :], spheres[:, :3]) < spheres[:, 3] ** 2).any()
    on_surface = next(c + r * e for c, r in zip(spheres[:, :3], spheres[:, 3]) for e in np.eye(3)
                      if not inside_any(c + r * e))
    p = np.concatenate([p, [on_surface]])
    for padding in (0.0, 0.02):
        kept, idx = remove_robot_points(p, robot, q, padding=padding, return_index=True)
        inside = (d2(p[:, None, :], spheres[None, :, :3]) < (spheres[None, :, 3] + padding) ** 2).any(axis=1)
        np.testing.assert_array_equal(idx, np.flatnonzero(~inside))
        assert 0 < inside.sum() < len(p)
    assert (len(p) - 1) in remove_robot_points(p, robot, q, return_index=True)[1]
    with pytest.raises(TypeError, match="Robot"):
        remove_robot_points(p, "panda", q)
    with pytest.raises(ValueError, match="padding"):
        remove_robot_points(p, robot, q, padding=-1)


# ----------------------------------------------------------------------------- loading
CLOUD = np.array([[0.0, 1.5, -2.25], [1e-3, 2e3, 3.0], [-4.0, 0.5, 0.125]])


def _pcd_header(fields, sizes, types, n, data):
    return (f"# .PCD v0.7 - Point Cloud Data file format\nVERSION 0.7\nFIELDS {' '.join(fields)}\n"
            f"SIZE {' '.join(map(str, sizes))}\nTYPE {' '.join(types)}\nCOUNT {' '.join('1' for _ in fields)}\n"
            f"WIDTH {n}\nHEIGHT 1\nVIEWPOINT 0 0 0 1 0 0 0\nPOINTS {n}\nDATA {data}\n")


def test_load_all_formats(tmp_path):
    np.save(tmp_path / "a.npy", CLOUD)
    structured = np.zeros(3, dtype=[("x", "f4"), ("y", "f4"), ("z", "f4"), ("intensity", "f4")])
    for k, name in enumerate("xyz"):
        structured[name] = CLOUD[:, k]
    np.save(tmp_path / "s.npy", structured)
    (tmp_path / "a.xyz").write_text("# x y z r g b\n" + "\n".join(" ".join(repr(float(v)) for v in row) + " 255 0 0" for row in CLOUD))
    (tmp_path / "a.pcd").write_text(_pcd_header(["x", "y", "z", "rgb"], [4, 4, 4, 4], ["F", "F", "F", "U"], 3, "ascii")
                                    + "\n".join(" ".join(repr(float(v)) for v in row) + " 7" for row in CLOUD) + "\n")
    rec = np.zeros(3, dtype=[("rgb", "<u4"), ("x", "<f8"), ("y", "<f8"), ("z", "<f8"), ("pad", "<u2")])
    for k, name in enumerate("xyz"):
        rec[name] = CLOUD[:, k]
    (tmp_path / "b.pcd").write_bytes(_pcd_header(["rgb", "x", "y", "z", "_"], [4, 8, 8, 8, 2], ["U", "F", "F", "F", "U"], 3,
                                                 "binary").encode() + rec.tobytes())
    trimesh = pytest.importorskip("trimesh")
    trimesh.PointCloud(CLOUD).export(tmp_path / "a.ply")
    for name, tol in [("a.npy", 0), ("s.npy", 1e-6), ("a.xyz", 0), ("a.pcd", 0), ("b.pcd", 0), ("a.ply", 1e-6)]:
        got = load_pointcloud(tmp_path / name)
        assert got.shape == (3, 3) and got.dtype == np.float64, name
        np.testing.assert_allclose(got, CLOUD, rtol=tol, atol=tol, err_msg=name)


def test_load_nan_points(tmp_path):
    cloud = np.concatenate([CLOUD, [[np.nan, np.nan, np.nan]]])
    np.save(tmp_path / "n.npy", cloud)
    with pytest.raises(ValueError, match="NaN or inf.*drop_nan"):
        load_pointcloud(tmp_path / "n.npy")
    np.testing.assert_array_equal(load_pointcloud(tmp_path / "n.npy", drop_nan=True), CLOUD)
    (tmp_path / "n.pcd").write_text(_pcd_header(["x", "y", "z"], [4, 4, 4], ["F", "F", "F"], 2, "ascii")
                                    + "1 2 3\nnan nan nan\n")
    np.testing.assert_array_equal(load_pointcloud(tmp_path / "n.pcd", drop_nan=True), [[1, 2, 3]])


@pytest.mark.parametrize("name, content, match", [
    ("a.txt", b"1 2 3", "unsupported point-cloud format"),
    ("bad.npy", b"not numpy", "not a readable .npy"),
    ("bad.xyz", b"1 2\n3 4\n", "at least 3 columns"),
    ("bad2.xyz", b"1 2 a\n", "not a numeric"),
    ("c.pcd", _pcd_header(["x", "y", "z"], [4, 4, 4], ["F", "F", "F"], 1, "binary_compressed").encode() + b"\0" * 16,
     "binary_compressed is not supported"),
    ("t.pcd", _pcd_header(["x", "y", "z"], [4, 4, 4], ["F", "F", "F"], 10, "binary").encode() + b"\0" * 16,
     "expected 10 points"),
    ("f.pcd", _pcd_header(["x", "y", "rgb"], [4, 4, 4], ["F", "F", "U"], 1, "ascii").encode() + b"1 2 3\n", "no field 'z'"),
    ("h.pcd", b"VERSION 0.7\nFIELDS x y z\n", "header"),
    ("bad.ply", b"ply\nformat nonsense\n", "PLY"),
])
def test_load_bad_files(tmp_path, name, content, match):
    if name.endswith(".ply"):
        pytest.importorskip("trimesh")
    (tmp_path / name).write_bytes(content)
    with pytest.raises(ValueError, match=match):
        load_pointcloud(tmp_path / name)


def test_load_wrong_shapes_and_missing_file(tmp_path):
    np.save(tmp_path / "w.npy", np.zeros((4, 2)))
    with pytest.raises(ValueError, match=r"expected an \(n, 3\) array"):
        load_pointcloud(tmp_path / "w.npy")
    np.save(tmp_path / "s.npy", np.zeros(2, dtype=[("x", "f4"), ("y", "f4")]))
    with pytest.raises(ValueError, match="without field"):
        load_pointcloud(tmp_path / "s.npy")
    with pytest.raises(FileNotFoundError):
        load_pointcloud(tmp_path / "missing.npy")
    assert pointcloud.as_points(np.zeros((0, 3))).shape == (0, 3)


def test_filter_rejects_bad_points_in_its_own_pass():
    # filter_pointcloud checks finiteness and magnitude inside thin_pointcloud's first pass
    pts = np.random.default_rng(0).uniform(-1, 1, (1000, 3))
    for bad, msg in ((np.nan, "non-finite"), (np.inf, "non-finite"), (2e12, "magnitude")):
        p = pts.copy()
        p[517, 1] = bad
        with pytest.raises(ValueError, match=msg):
            pointcloud.filter_pointcloud(p, 0.02)
        with pytest.raises(ValueError, match=msg):
            pointcloud.filter_pointcloud(p, 0.02, box=([-1, -1, -1], [1, 1, 1]))
    assert len(pointcloud.filter_pointcloud(np.zeros((0, 3)), 0.02)) == 0


def test_tiny_distances_are_refused_not_underflowed():
    """Squared distances underflow below 1e-150 (1e-304 apart would compare as 0 < 0 and keep
    every point): such tolerances are refused; 0 still only crops, and 1e-150 works."""
    p = np.array([[0.0, 0.0, 0.0], [1e-152, 0.0, 0.0], [0.0, 2e-152, 0.0]])
    for bad in (1e-309, 1e-300, 1e-151):
        with pytest.raises(ValueError, match="min_dist must be 0 or at least 1e-150"):
            pointcloud.filter_pointcloud(p, bad)
        with pytest.raises(ValueError, match="tol must be at least 1e-150"):
            pointcloud.close_pairs(p, bad)
    assert len(pointcloud.filter_pointcloud(p, 0.0)) == 3
    assert len(pointcloud.filter_pointcloud(p, 1e-150)) == 1
    assert len(pointcloud.close_pairs(p, 1e-150)) == 3
