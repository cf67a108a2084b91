"""Point-cloud tools: loading, cropping and thinning, close pairs, removing the robot from its own cloud.

Points are ``(n, 3)`` arrays in the world frame, metres. Every function validates its input once
(numeric, shape ``(n, 3)``, finite, coordinates within 1e12 m) and raises ``ValueError`` naming the
problem. Distances are compared squared, evaluated in float64 exactly as ``(dx*dx + dy*dy) + dz*dz``
(the C++ core is built without fused multiply-adds), so results equal a NumPy brute force written the
same way, bit for bit.

- ``load_pointcloud(path)``: ``.npy``, ``.ply`` (via trimesh), ``.pcd`` (ASCII and binary; our parser),
  ``.xyz`` (text, first three columns).
- ``filter_pointcloud(points, min_dist, box=None, max_range=None, origin=None)``: crop, then thin.
- ``close_pairs(points, tol)``: every index pair closer than ``tol``.

For collision checking against a cloud see ``simdplan.collision.CAPT``.
"""

from __future__ import annotations

import os

import numpy as np

from simdplan import _core

MAX_COORDINATE = 1e12  # metres; squared distances must stay finite in float32 (see capt/tree.hh)
MIN_DISTANCE = 1e-150  # metres: tolerances, ranges and paddings below it would square to subnormals or 0
_MAX_POINTS = 2**31 - 1  # index pairs are packed into 64-bit keys in the core
# What a CAPT can hold (kMaxAfforded in cpp/src/capt/build.cc): its leaves store at most 2^27 points in
# all, and every distinct point is stored in at least one leaf, usually with some 5-35 neighbours.
CAPT_MAX_STORED = 2**27
# Clouds above this many points take seconds to minutes to build a tree for, and at camera density
# (spacing well below the robot's sphere radii) run into CAPT_MAX_STORED; add_pointcloud warns.
CAPT_LARGE_CLOUD = 1_000_000
_THIN_ADVICE = ("thin it first, e.g. simdplan.collision.filter_pointcloud(points, min_dist=0.01) "
                "(no two points closer than 1 cm; a spacing near the robot's smallest sphere radius keeps the checks exact "
                "enough and the tree small)")


def check_tree_cloud(points, name: str = "point cloud points") -> np.ndarray:
    """``points`` (n, 3), numeric, as the float32 array a CAPT is built from, after the O(n) checks that
    the build would otherwise fail on much later: every coordinate finite and within MAX_COORDINATE
    (checked in float64, before rounding to float32 could turn a huge value into inf), and n at most
    CAPT_MAX_STORED. Above CAPT_LARGE_CLOUD points a UserWarning advises thinning."""
    n = len(points)
    if n > CAPT_MAX_STORED:
        raise ValueError(f"{name}: {n:,} points are more than a point tree can hold (at most {CAPT_MAX_STORED:,} "
                         f"= 2^27 stored points, each point at least once); {_THIN_ADVICE}")
    arr = np.ascontiguousarray(points, dtype=np.float64)
    _check_values(arr, name)
    if n > CAPT_LARGE_CLOUD:
        import warnings  # noqa: PLC0415

        warnings.warn(f"{name}: {n:,} points; building its point tree at the first check may take minutes and "
                      f"fail beyond {CAPT_MAX_STORED:,} stored points if the cloud is dense; {_THIN_ADVICE}",
                      UserWarning, stacklevel=3)
    return arr.astype(np.float32)


def as_points(points, name: str = "points") -> np.ndarray:
    """``points`` as a C-contiguous (n, 3) float64 array, or a ValueError naming the problem."""
    arr = _as_array(points, name)
    _check_values(arr, name)
    return arr


def _as_array(points, name: str) -> np.ndarray:
    """as_points without the finiteness and magnitude checks (for callers whose C++ pass does them)."""
    if isinstance(points, np.ndarray) and points.dtype.names is not None:
        raise ValueError(f"{name} is a structured array; pass an (n, 3) numeric array (e.g. np.c_[p['x'], p['y'], p['z']])")
    try:
        arr = np.ascontiguousarray(points, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array of shape (n, 3)") from None
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{name} must have shape (n, 3), got {arr.shape}")
    if len(arr) > _MAX_POINTS:
        raise ValueError(f"{name} has {len(arr)} points; at most {_MAX_POINTS} are supported")
    return arr


def _check_values(arr: np.ndarray, name: str) -> None:
    # one C++ pass for both checks (PERF note in cpp/bindings/pointcloud.cc); NumPy only to word an error
    ok, big = _core.points_check(arr)
    if not ok:
        finite = np.isfinite(arr).all(axis=1)
        bad = np.flatnonzero(~finite)
        raise ValueError(f"{name} has {len(bad)} non-finite (NaN or inf) points, the first at row {bad[0]}: "
                         f"{arr[bad[0]].tolist()}")
    if big > MAX_COORDINATE:
        row = int(np.argmax(np.abs(arr).max(axis=1)))
        raise ValueError(f"{name} row {row} has a coordinate of magnitude {big:.3g}; at most {MAX_COORDINATE:g} m is supported")


def check_max_distance(value) -> float:
    """A distance query's ``max_distance`` (metres, >= 0, may be inf), or a ValueError."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"max_distance must be a number (metres, or inf), got {value!r}") from None
    if not v >= 0:  # NaN too
        raise ValueError(f"max_distance must be >= 0 (or inf), got {value!r}")
    return v


def _scalar(value, name: str, allow_zero: bool) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None
    if not np.isfinite(v) or v < 0 or (v == 0 and not allow_zero) or v > MAX_COORDINATE:
        raise ValueError(f"{name} must be finite and {'>= 0' if allow_zero else '> 0'} (at most 1e12), got {value!r}")
    if 0 < v < MIN_DISTANCE:
        raise ValueError(f"{name} must be {'0 or ' if allow_zero else ''}at least {MIN_DISTANCE:g}: the tools compare "
                         f"squared distances, which underflow below that, got {value!r}")
    return v


def _vector3(value, name: str) -> np.ndarray:
    try:
        v = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be 3 numbers, got {value!r}") from None
    if v.shape != (3,) or not np.isfinite(v).all():
        raise ValueError(f"{name} must be 3 finite numbers, got {value!r}")
    return np.ascontiguousarray(v)


# ----------------------------------------------------------------------------- close pairs and filtering
def close_pairs(points, tol: float) -> np.ndarray:
    """Every index pair closer than ``tol``: (m, 2) int64, rows ``(i, j)`` with ``i < j``, sorted.

    ``points`` (n, 3). A pair is close iff ``(dx*dx + dy*dy) + dz*dz < tol*tol`` in float64 (strict,
    like every collision test here), so exactly the pairs a brute force computes. ``tol > 0``.
    Uniform grid of cells ``tol`` wide, each cell compared with its 13 following neighbours:
    O(n log n + candidate pairs).
    """
    pts = as_points(points)
    return _core.close_pairs(pts, _scalar(tol, "tol", allow_zero=False))


def filter_pointcloud(points, min_dist: float, box=None, max_range: float | None = None, origin=None,
                      return_index: bool = False):
    """Crop, then thin a cloud: (m, 3) float64 kept points (and their row indices with ``return_index``).

    ``points`` (n, 3). Crop (both optional; a point must pass both):
    - ``box``: ``(lo, hi)``, each 3 numbers with ``lo <= hi``; keeps ``lo <= p <= hi`` on every axis
      (closed box, world frame, axis-aligned).
    - ``max_range``: keeps ``|p - origin| <= max_range`` (closed ball); ``origin`` defaults to the
      world origin and may only be given with ``max_range``.
    Thinning, greedy in input order: a point is kept iff no point kept before it lies closer than
    ``min_dist``. Guarantees (distances as in ``close_pairs``):
    1. no two kept points are closer than ``min_dist``;
    2. every cropped-in point that was thinned away lies closer than ``min_dist`` to a kept point.
    ``min_dist = 0`` only crops. Kept points keep their input order. Uniform grid, O(n).
    """
    # PERF: the finiteness and magnitude checks run in thin_pointcloud's first pass (PERF note in
    # pointcloud_tools.cc); _check_values only words the error
    pts = _as_array(points, "points")
    d = _scalar(min_dist, "min_dist", allow_zero=True)
    box_arr = None
    if box is not None:
        try:
            box_arr = np.ascontiguousarray(np.asarray(box, dtype=np.float64))
        except (TypeError, ValueError):
            raise ValueError(f"box must be (lo, hi) with 3 numbers each, got {box!r}") from None
        if box_arr.shape != (2, 3) or not np.isfinite(box_arr).all():
            raise ValueError(f"box must be (lo, hi) with 3 finite numbers each, got {box!r}")
        if (box_arr[0] > box_arr[1]).any():
            raise ValueError(f"box lo {box_arr[0].tolist()} must not exceed hi {box_arr[1].tolist()} on any axis")
    if origin is not None and max_range is None:
        raise ValueError("origin is only used with max_range; give max_range too (or drop origin)")
    rng = None
    org = np.zeros(3)
    if max_range is not None:
        rng = _scalar(max_range, "max_range", allow_zero=True)
        if origin is not None:
            org = _vector3(origin, "origin")
    found = _core.thin_pointcloud(pts, d, box_arr, org, rng, MAX_COORDINATE)  # (rows, their points)
    if found is None:
        _check_values(pts, "points")  # raises
        raise AssertionError("thin_pointcloud rejected points that pass _check_values")
    idx, kept = found
    return (kept, idx) if return_index else kept


# ----------------------------------------------------------------------------- loading
_FORMATS = (".npy", ".ply", ".pcd", ".xyz")


def load_pointcloud(path, drop_nan: bool = False) -> np.ndarray:
    """Points of a cloud file: (n, 3) float64, world frame as stored.

    Formats by extension: ``.npy`` (an (n, 3) numeric array, or a structured array with fields x, y,
    z), ``.ply`` (vertices, read with trimesh), ``.pcd`` (fields x, y, z; DATA ascii or binary;
    binary_compressed is not supported), ``.xyz`` (whitespace-separated text, the first three
    columns, ``#`` comments). Points with NaN or inf coordinates (organized depth clouds mark
    missing returns with NaN) raise ValueError unless ``drop_nan=True`` drops them.
    Bad files raise ValueError naming the file and the problem.
    """
    path = os.fspath(path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in _FORMATS:
        raise ValueError(f"{path}: unsupported point-cloud format {ext or '(no extension)'!r}; "
                         f"expected one of {', '.join(_FORMATS)}")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such file")
    if ext == ".npy":
        pts = _load_npy(path)
    elif ext == ".ply":
        pts = _load_ply(path)
    elif ext == ".pcd":
        pts = _load_pcd(path)
    else:
        pts = _load_xyz(path)
    pts = np.asarray(pts, dtype=np.float64).reshape(-1, 3)
    finite = np.isfinite(pts).all(axis=1)
    if not finite.all():
        if not drop_nan:
            raise ValueError(f"{path}: {int((~finite).sum())} of {len(pts)} points have NaN or inf coordinates "
                             f"(first at row {int(np.argmin(finite))}); pass drop_nan=True to drop them")
        pts = pts[finite]
    return as_points(pts, f"{path}: points")


def _load_npy(path: str) -> np.ndarray:
    try:
        arr = np.load(path, allow_pickle=False)
    except (ValueError, OSError, EOFError) as exc:
        raise ValueError(f"{path}: not a readable .npy array ({exc})") from None
    if arr.dtype.names is not None:
        missing = [f for f in ("x", "y", "z") if f not in arr.dtype.names]
        if missing:
            raise ValueError(f"{path}: structured array without field(s) {missing}; fields are {list(arr.dtype.names)}")
        return np.stack([arr["x"].ravel(), arr["y"].ravel(), arr["z"].ravel()], axis=1)
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise ValueError(f"{path}: expected an (n, 3) array, got shape {arr.shape}")
    if not np.issubdtype(arr.dtype, np.number) or np.issubdtype(arr.dtype, np.complexfloating):
        raise ValueError(f"{path}: expected a real numeric array, got dtype {arr.dtype}")
    return arr


def _load_ply(path: str) -> np.ndarray:
    try:
        import trimesh
    except ImportError:
        raise ImportError(f"{path}: reading .ply needs trimesh (pip install trimesh)") from None
    try:
        geom = trimesh.load(path, process=False)
    except Exception as exc:  # trimesh raises many types for malformed files
        raise ValueError(f"{path}: not a readable PLY file ({type(exc).__name__}: {exc})") from None
    if isinstance(geom, trimesh.Scene):
        parts = [g.vertices for g in geom.geometry.values() if hasattr(g, "vertices")]
        if not parts:
            raise ValueError(f"{path}: the PLY file has no vertices")
        return np.concatenate(parts)
    if not hasattr(geom, "vertices"):
        raise ValueError(f"{path}: the PLY file has no vertices")
    return np.asarray(geom.vertices)


_PCD_TYPES = {("F", 4): "<f4", ("F", 8): "<f8", ("I", 1): "<i1", ("I", 2): "<i2", ("I", 4): "<i4", ("I", 8): "<i8",
              ("U", 1): "<u1", ("U", 2): "<u2", ("U", 4): "<u4", ("U", 8): "<u8"}


def _load_pcd(path: str) -> np.ndarray:
    """PCD v0.7 (Point Cloud Library): a text header, then DATA ascii or binary (little endian)."""
    with open(path, "rb") as f:
        raw = f.read()
    header: dict[str, list[str]] = {}
    pos = 0
    while True:
        end = raw.find(b"\n", pos)
        if end < 0:
            raise ValueError(f"{path}: PCD header ends before its DATA line")
        try:
            line = raw[pos:end].decode("ascii").strip()
        except UnicodeDecodeError:
            raise ValueError(f"{path}: not a PCD file (binary bytes in the header)") from None
        pos = end + 1
        if not line or line.startswith("#"):
            continue
        key, *vals = line.split()
        header[key.upper()] = vals
        if key.upper() == "DATA":
            break
    for key in ("FIELDS", "SIZE", "TYPE", "DATA"):
        if key not in header:
            raise ValueError(f"{path}: PCD header has no {key} line")
    fields = header["FIELDS"]
    n_fields = len(fields)
    counts = header.get("COUNT", ["1"] * n_fields)
    sizes, types = header["SIZE"], header["TYPE"]
    if not (len(sizes) == len(types) == len(counts) == n_fields):
        raise ValueError(f"{path}: PCD header FIELDS, SIZE, TYPE and COUNT have different lengths")
    for name in ("x", "y", "z"):
        if name not in fields:
            raise ValueError(f"{path}: PCD has no field {name!r}; fields are {fields}")
    try:
        counts_i = [int(c) for c in counts]
        if "POINTS" in header:
            n = int(header["POINTS"][0])
        else:
            n = int(header["WIDTH"][0]) * int(header["HEIGHT"][0])
    except (ValueError, KeyError, IndexError):
        raise ValueError(f"{path}: PCD header has a bad COUNT, POINTS, WIDTH or HEIGHT") from None
    mode = header["DATA"][0].lower() if header["DATA"] else ""
    if mode == "ascii":
        text = raw[pos:].decode("ascii", errors="replace").split()
        width = sum(counts_i)
        if len(text) < n * width:
            raise ValueError(f"{path}: PCD ascii data has {len(text)} values, expected {n} points x {width}")
        try:
            table = np.array(text[: n * width], dtype=np.float64).reshape(n, width)
        except ValueError:
            raise ValueError(f"{path}: PCD ascii data holds a value that is not a number") from None
        offsets = np.cumsum([0] + counts_i)
        return np.stack([table[:, offsets[fields.index(k)]] for k in ("x", "y", "z")], axis=1)
    if mode == "binary":
        dtype = []
        for name, size, typ, count in zip(fields, sizes, types, counts_i):
            key = (typ.upper(), int(size)) if size.isdigit() else None
            if key not in _PCD_TYPES:
                raise ValueError(f"{path}: PCD field {name!r} has an unsupported TYPE {typ} / SIZE {size}")
            # unnamed padding fields ("_") may repeat; give every field a unique name
            dtype.append((f"f{len(dtype)}_{name}", _PCD_TYPES[key], (count,) if count > 1 else ()))
        dt = np.dtype(dtype)
        if len(raw) - pos < n * dt.itemsize:
            raise ValueError(f"{path}: PCD binary data holds {len(raw) - pos} bytes, expected {n} points x {dt.itemsize}")
        table = np.frombuffer(raw, dtype=dt, count=n, offset=pos)
        cols = {name: dt.names[i] for i, name in enumerate(fields)}
        return np.stack([table[cols[k]].astype(np.float64) for k in ("x", "y", "z")], axis=1)
    if mode == "binary_compressed":
        raise ValueError(f"{path}: PCD DATA binary_compressed is not supported; save the cloud as ascii or binary")
    raise ValueError(f"{path}: unknown PCD DATA mode {header['DATA']}")


def _load_xyz(path: str) -> np.ndarray:
    try:
        table = np.loadtxt(path, comments="#", ndmin=2)
    except ValueError as exc:
        raise ValueError(f"{path}: not a numeric .xyz table ({exc})") from None
    if table.size == 0:
        return np.zeros((0, 3))
    if table.shape[1] < 3:
        raise ValueError(f"{path}: .xyz rows need at least 3 columns (x y z), got {table.shape[1]}")
    return table[:, :3]
