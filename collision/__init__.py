"""simdplan.collision: obstacles (primitives and point clouds), the CAPT, point-cloud tools; meshes in a later release."""

from simdplan.collision.environment import KINDS, PRIMITIVES, Environment, Obstacle
from simdplan.collision import pointcloud
from simdplan.collision.capt import CAPT
from simdplan.collision.nearest import NearestPointTree
from simdplan.collision.pointcloud import close_pairs, filter_pointcloud, load_pointcloud, remove_robot_points

__all__ = ["Environment", "Obstacle", "KINDS", "PRIMITIVES", "CAPT", "NearestPointTree", "pointcloud", "close_pairs",
           "filter_pointcloud", "load_pointcloud", "remove_robot_points"]
