"""Flat obstacle records: the core states each kind's record size, and the Python builder's
records (Obstacle.record) must match it, since the kernels read them through fixed layouts."""
from __future__ import annotations

import numpy as np
import pytest

import simdplan
from simdplan import _core
from simdplan.collision.environment import PRIMITIVES


def _one_of_each() -> simdplan.Environment:
    env = simdplan.Environment()
    env.add_sphere([0.5, 0.0, 0.4], 0.1)
    env.add_capsule([0.0, 0.5, 0.4], radius=0.05, length=0.2)
    env.add_cylinder([0.0, -0.5, 0.4], radius=0.05, length=0.2)
    env.add_box([-0.5, 0.0, 0.4], half_extents=[0.1, 0.2, 0.3])
    env.add_plane([0.0, 0.0, 1.0], -0.5)
    return env


def test_core_states_the_record_size_of_every_primitive():
    sizes = _core.obstacle_record_floats()
    assert list(sizes) == list(PRIMITIVES)
    assert all(isinstance(n, int) and n > 0 for n in sizes.values())


def test_python_records_match_the_core_sizes():
    sizes = _core.obstacle_record_floats()
    env = _one_of_each()
    assert sorted(o.kind for o in env) == sorted(PRIMITIVES)
    for o in env:
        assert np.asarray(o.record()).shape == (sizes[o.kind],), o.kind


def test_a_record_of_the_wrong_size_is_refused_by_name():
    sizes = _core.obstacle_record_floats()
    empty = np.zeros((0, 1), dtype=np.float32)
    arrays = [np.zeros((1, sizes[k]), dtype=np.float32) for k in PRIMITIVES]
    arrays[3] = np.zeros((1, sizes["box"] - 1), dtype=np.float32)
    with pytest.raises(ValueError, match="box array must have 16 floats per obstacle"):
        _core.EnvironmentModel(*arrays, [], [], empty.reshape(0, 6), np.zeros(0, np.float32), [], [], [], [],
                               np.zeros((0, 12)))

