"""Certified self-collision sphere pairs (robots/self_collision.py) and the kernels that use them."""

from __future__ import annotations

import numpy as np
import pytest

import simdplan
from simdplan import _core
from simdplan.collision import Environment
from simdplan.robots import self_collision as sc

ROBOTS = ["panda", "ur5"]


def _limit_heavy_samples(robot, n, rng):
    """Uniform samples, with a third of the joints pushed to a limit (self-contact lives at extremes)."""
    lo, hi = robot.lower, robot.upper
    Q = rng.uniform(lo, hi, size=(n, robot.dof))
    at_limit = rng.random((n, robot.dof)) < 0.33
    Q[at_limit] = np.where(rng.random(at_limit.sum()) < 0.5, np.broadcast_to(lo, Q.shape)[at_limit],
                           np.broadcast_to(hi, Q.shape)[at_limit])
    return Q


@pytest.mark.parametrize("name", ROBOTS)
def test_dropped_pairs_never_come_close(name):
    """Every sphere pair left out of a certified list stays farther apart than r_i + r_j + MARGIN
    over many configurations, near the limits included."""
    robot = simdplan.robots.load(name)
    prog = robot._program
    assert (prog.pair_ranges[:, 0] >= 0).any(), "expected some certified pairs"
    Q = _limit_heavy_samples(robot, 40_000, np.random.default_rng(1))
    S = robot.fk_many(Q).astype(np.float64)  # (n, n_spheres, 4)
    checked = 0
    for p, (ga, gb) in enumerate(prog.pairs):
        b, e = prog.pair_ranges[p]
        if b < 0:
            continue
        kept = {tuple(x) for x in prog.sphere_pairs[b:e]}
        for i in range(prog.group_begin[ga], prog.group_end[ga]):
            for j in range(prog.group_begin[gb], prog.group_end[gb]):
                if (i, j) in kept:
                    continue
                d = np.linalg.norm(S[:, i, :3] - S[:, j, :3], axis=1)
                closest = float((d - S[:, i, 3] - S[:, j, 3]).min())
                assert closest > sc.MARGIN - 1e-4, (prog.group_links[ga], prog.group_links[gb], i, j, closest)
                checked += 1
    assert checked > 0


@pytest.mark.parametrize("name", ROBOTS)
def test_reach_bounds_sphere_motion(name):
    """The per-joint reach L bounds how far a sphere centre moves: |p(v) - p(c)| <= sum_m L_m |v_m - c_m|."""
    robot = simdplan.robots.load(name)
    prog = robot._program
    rng = np.random.default_rng(2)
    tested = 0
    for ga, gb in prog.pairs:
        ba, bb = int(prog.group_body[ga]), int(prog.group_body[gb])
        top = sc._common_ancestor(prog, ba, bb)
        chain = sc._chain(prog, bb, top)
        if not chain or len(chain) > 3:
            continue
        local = np.asarray(prog.spheres[prog.group_begin[gb]:prog.group_end[gb], :3], dtype=np.float64)
        L = sc._reach(prog, chain, local)  # (k, n)
        k = len(chain)
        c = rng.uniform(-np.pi, np.pi, size=(500, k))
        v = c + rng.uniform(-0.3, 0.3, size=(500, k))
        for s in range(len(local)):
            pts = np.repeat(local[s:s + 1], 500, axis=0)
            moved = np.linalg.norm(sc._place(prog, chain, v, pts) - sc._place(prog, chain, c, pts), axis=1)
            bound = np.abs(v - c) @ L[:, s]
            assert np.all(moved <= bound + 1e-12), (prog.group_links[gb], s, float((moved - bound).max()))
        tested += 1
    assert tested > 0


@pytest.mark.parametrize("name", ROBOTS)
@pytest.mark.parametrize("padding", [0.0, sc.MAX_PADDING, 0.007])
def test_lists_do_not_change_answers(isa, name, padding):
    """The kernels give the same answers with the certified lists as testing every sphere pair
    (is_valid_many and motion checks), below and above list_max_padding."""
    robot = simdplan.robots.load(name)
    prog = robot._program
    args = prog.core_args()
    full = _core.RobotModel(*args[:-4], np.zeros(0, np.int32), np.zeros(0, np.int32), 0.0, args[-1])
    env = Environment()
    env.add_box([0.45, 0.0, 0.3], half_extents=[0.05, 0.3, 0.3])
    rng = np.random.default_rng(3)
    Q = np.vstack([_limit_heavy_samples(robot, 3_000, rng), rng.uniform(robot.lower, robot.upper, (3_000, robot.dof))])
    compiled = env._model()
    a = robot._model.is_valid_many(compiled, Q, padding)
    b = full.is_valid_many(compiled, Q, padding)
    np.testing.assert_array_equal(a, b)
    if padding == 0.0 or name == "panda":  # (the ur5 model has spheres 2.5 mm apart whatever q is)
        assert 0 < np.count_nonzero(a) < len(a)  # a mix, so the comparison means something
    for q0, q1 in zip(Q[:300:2], Q[1:300:2]):
        assert robot._model.is_motion_valid(compiled, q0, q1, 32.0, padding) == \
            full.is_motion_valid(compiled, q0, q1, 32.0, padding)


def test_bad_lists_are_refused():
    robot = simdplan.robots.load("panda")
    args = robot._program.core_args()
    n_pairs = len(robot._program.pairs)
    ranges = np.full(2 * n_pairs, -1, np.int32)
    ranges[0], ranges[1] = 0, 1
    with pytest.raises(ValueError, match="not a sphere pair of its group pair"):
        _core.RobotModel(*args[:-4], ranges, np.array([0, 0], np.int32), 0.0, args[-1])
    ranges[1] = 5
    with pytest.raises(ValueError, match="pair_ranges entry out of range"):
        _core.RobotModel(*args[:-4], ranges, np.array([0, 0], np.int32), 0.0, args[-1])
    with pytest.raises(ValueError, match="list_max_padding"):
        _core.RobotModel(*args[:-4], np.zeros(0, np.int32), np.zeros(0, np.int32), -1.0, args[-1])


def test_certification_is_cached():
    robot = simdplan.robots.load("panda")
    again = simdplan.robots.load("panda")
    assert again._program.sphere_pairs is robot._program.sphere_pairs
