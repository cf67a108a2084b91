"""simdplan.collision: obstacles (primitives, point clouds, meshes, convex hulls), the CAPT, point-cloud
tools, and mesh queries.

TriangleMesh (BVH, exact sphere-triangle tests) and ConvexHull (GJK with cache-packed support points)
answer sphere queries on their own, and back Environment.add_mesh / add_convex.
"""

from simdplan.collision.environment import KINDS, PRIMITIVES, Environment, Obstacle
from simdplan.collision import pointcloud
from simdplan.collision.capt import CAPT
from simdplan.collision.convex import ConvexHull
from simdplan.collision.mesh import TriangleMesh
from simdplan.collision.nearest import NearestPointTree
from simdplan.collision.pointcloud import close_pairs, filter_pointcloud, load_pointcloud

__all__ = ["Environment", "Obstacle", "KINDS", "PRIMITIVES", "CAPT", "ConvexHull", "NearestPointTree", "TriangleMesh",
           "pointcloud", "close_pairs", "filter_pointcloud", "load_pointcloud"]
