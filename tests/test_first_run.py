"""What a new user meets first: the shipped examples and the README snippet work as shown, and
mistakes (a huge point cloud, a string for a number, a wrong file, absurd joint values or limits,
a bad SIMDPLAN_ISA) get a clear message where they are made, not a failure much later.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import simdplan
from simdplan import Environment, Robot, cli, scenes
from simdplan.collision import pointcloud as pc
from simdplan.robots import RobotBuilder

REPO = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- Environment input
def test_remove_takes_an_int_id():
    env = Environment()
    first = env.add_sphere([0, 0, 0], 0.1)
    second = env.add_sphere([1, 0, 0], 0.1)
    assert (first, second) == (0, 1)
    with pytest.raises(TypeError, match="must be an int.*str '0'"):
        env.remove("0")
    with pytest.raises(TypeError, match="must be an int.*bool True"):
        env.remove(True)
    assert len(env) == 2  # neither call removed anything
    env.remove(np.int64(first))  # a NumPy integer is an int
    assert [o.id for o in env] == [second]


@pytest.mark.parametrize("add", [
    lambda env: env.add_sphere([0, 0, 0], radius="0.1"),
    lambda env: env.add_sphere(["0", "0", "0"], 0.1),
    lambda env: env.add_capsule([0, 0, 0], radius="0.1", length=0.2),
    lambda env: env.add_capsule([0, 0, 0], radius=0.1, length="0.2"),
    lambda env: env.add_cylinder([0, 0, 0], radius=0.1, length="0.2"),
    lambda env: env.add_cylinder([0, 0, "0"], radius=0.1, length=0.2),
    lambda env: env.add_box([0, 0, 0], half_extents=["0.1", 0.1, 0.1]),
    lambda env: env.add_box([0, 0, 0], quat=["0", "0", "0", "1"], half_extents=[0.1, 0.1, 0.1]),
    lambda env: env.add_plane([0, 0, 1], "0.5"),
    lambda env: env.add_pointcloud([[0, 0, 0]], point_radius="0.01"),
    lambda env: env.add_pointcloud([[0, 0, 0]], r_max="0.1"),
    lambda env: env.add_mesh((np.eye(3), np.array([[0, 1, 2]])), scale="2"),
], ids=["sphere radius", "sphere center", "capsule radius", "capsule length", "cylinder length",
        "cylinder position", "box half_extents", "box quat", "plane offset", "point_radius", "r_max", "mesh scale"])
def test_numbers_given_as_text_are_refused(add):
    env = Environment()
    with pytest.raises(TypeError, match="not text"):
        add(env)
    assert len(env) == 0
