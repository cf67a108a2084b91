"""simdplan.collision: obstacles (primitives now; point clouds and meshes in later releases)."""

from simdplan.collision.environment import KINDS, Environment, Obstacle

__all__ = ["Environment", "Obstacle", "KINDS"]
