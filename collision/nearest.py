"""Exact nearest cloud point of query points: the distance behind clearance and signed-distance queries.

The CAPT (``simdplan.collision.CAPT``) answers "does this sphere touch a point?"; this tree answers
"how far is the nearest point, and which one is it?", optionally only within ``max_distance``
(cheaper: the search prunes everything farther). It is a balanced k-d tree with 16-point leaves
scanned with SIMD; the C++ build and the search are described in
``cpp/include/simdplan/capt/nearest_tree.hh`` and ``nearest_query.hh``.

Precision: points and queries are stored as float32 and distances computed in float32. The search
is exact for those values (it returns the minimum a brute force in float32 would); against the
float64 inputs the distance is within ``1.8e-7 d + 2.1e-7 M`` metres, where ``d`` is the distance
and ``M`` the largest absolute coordinate involved (e.g. 0.2 um for a cloud within 1 m of the origin).
"""

from __future__ import annotations

import numpy as np

from simdplan import _core
from simdplan.collision.pointcloud import as_points, check_max_distance


class NearestPointTree:
    """A point cloud compiled for exact nearest-point queries.

    ``points`` (n, 3), world frame, metres (any real dtype; stored as float32). Must be finite, with
    coordinates within 1e12 m; ``n`` may be 0 (every query then finds nothing). Exact duplicates are
    stored once and reported by the index of their first occurrence; among distinct points at the
    same distance any one may be reported. The tree is immutable and queries may run concurrently
    (they release the GIL for large batches).

    Build: O(n log n) time, 16-35 bytes per point.
    """

    def __init__(self, points) -> None:
        pts = as_points(points)
        self._tree = _core.NearestTree(np.ascontiguousarray(pts, dtype=np.float32))

    def query(self, points, max_distance=np.inf):
        """Nearest cloud point of each query point.

        ``points`` (m, 3), world frame, metres, finite. Returns ``(distances, indices)``:
        ``distances`` (m,) float64, metres (float32 values, see the module docstring) and
        ``indices`` (m,) int64, the row of the nearest point in the cloud given to the constructor.
        A point is reported only if it is strictly closer than ``max_distance`` (>= 0, default inf:
        always, unless the cloud is empty); otherwise the distance is ``inf`` and the index ``-1``.
        A smaller ``max_distance`` makes the query faster. ``points`` of shape (3,) gives
        ``(distance, index)`` as a float and an int.
        """
        md = check_max_distance(max_distance)
        single = np.shape(points) == (3,)
        q = as_points(np.reshape(points, (1, 3)) if single else points, "points")
        dist, index = self._tree.query(np.ascontiguousarray(q, dtype=np.float32), md)
        if single:
            return float(dist[0]), int(index[0])
        return dist.astype(np.float64), index

    def __len__(self) -> int:
        """Number of points given (duplicates included)."""
        return len(self._tree)

    @property
    def unique_points(self) -> int:
        """Number of distinct points stored."""
        return int(self._tree.unique_points)

    @property
    def build_time_ns(self) -> int:
        """Wall time of the C++ build, nanoseconds (validation and float32 conversion not included)."""
        return int(self._tree.build_time_ns)

    def __repr__(self) -> str:
        return f"NearestPointTree({len(self)} points, build {self.build_time_ns / 1e6:.2f} ms)"
