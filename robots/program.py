"""The flat kinematic program a Robot compiles to (robots/kinematics.py builds it; the C++ side is
documented in cpp/include/simdplan/kin/robot_view.hh): bodies, joint kinds, sphere groups, pairs
and the motion-bound table, as arrays for simdplan._core.RobotModel."""

from __future__ import annotations

import dataclasses

import numpy as np

KIND_FIXED, KIND_REVOLUTE, KIND_PRISMATIC = 0, 1, 2


@dataclasses.dataclass
class Program:
    """Arrays for simdplan._core.RobotModel plus the names to read its results."""

    dof: int
    joint_names: list[str]
    lower: np.ndarray  # (dof,) float64
    upper: np.ndarray
    wrap: np.ndarray  # (dof,) uint8: continuous joints
    body_parent: np.ndarray
    body_kind: np.ndarray
    body_dof: np.ndarray
    body_scale: np.ndarray
    body_offset: np.ndarray
    body_origin: np.ndarray  # (n_bodies, 12) float32
    group_body: np.ndarray
    group_begin: np.ndarray
    group_end: np.ndarray
    group_bound: np.ndarray  # (n_groups, 4)
    spheres: np.ndarray  # (n_spheres, 4) in body frames
    pairs: np.ndarray  # (n_pairs, 2) group indices
    group_links: list[str]
    sphere_group: np.ndarray  # (n_spheres,) group of each sphere
    link_names: list[str]  # every URDF link, topological order
    link_body: np.ndarray  # (n_links,) body of each link
    link_in_body: np.ndarray  # (n_links, 4, 4) link frame in its body frame
    # certified sphere pairs per group pair (robots/self_collision.py); None: test every sphere pair
    pair_ranges: np.ndarray | None = None  # (n_pairs, 2) [begin, end) into sphere_pairs, or -1, -1
    sphere_pairs: np.ndarray | None = None  # (m, 2) global sphere indices
    list_max_padding: float = 0.0
    # (n_spheres, n_bodies) float32 motion-bound table (robots/motion_bound.py)
    sphere_reach: np.ndarray | None = None

    def core_args(self) -> list:
        i32 = lambda a: np.ascontiguousarray(a, dtype=np.int32)  # noqa: E731
        f32 = lambda a: np.ascontiguousarray(a, dtype=np.float32)  # noqa: E731
        return [self.dof, i32(self.body_parent), i32(self.body_kind), i32(self.body_dof), f32(self.body_scale),
                f32(self.body_offset), f32(self.body_origin), i32(self.group_body), i32(self.group_begin),
                i32(self.group_end), f32(self.group_bound), f32(self.spheres), i32(self.pairs.reshape(-1)),
                np.ascontiguousarray(self.lower, dtype=np.float64), np.ascontiguousarray(self.upper, dtype=np.float64),
                np.ascontiguousarray(self.wrap, dtype=np.uint8),
                i32(self.pair_ranges.reshape(-1) if self.pair_ranges is not None else np.zeros(0)),
                i32(self.sphere_pairs.reshape(-1) if self.sphere_pairs is not None else np.zeros(0)),
                float(self.list_max_padding), f32(self.reach_table())]

    def reach_table(self) -> np.ndarray:
        """The motion-bound table (simdplan.robots.motion_bound), filled in by compile_program."""
        if self.sphere_reach is None:
            raise ValueError("this Program has no motion-bound table: build it with compile_program")
        return self.sphere_reach
