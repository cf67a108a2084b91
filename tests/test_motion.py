"""Link(q0, q1), discrete: robot.is_motion_valid and robot.motion_samples.

Contract: samples q0 + (i/n)(q1 - q0), i = 0..n, with n = max(1, ceil(|q1 - q0|_2 * resolution));
the edge is valid iff every sample is valid. The reference here is is_valid_many over exactly those
samples, run under every ISA the machine has.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdplan
from simdplan import Environment, Robot
from simdplan import robots as sp_robots


@pytest.fixture(scope="module")
def panda():
    return sp_robots.load("panda")


def panda_scene() -> Environment:
    env = Environment()
    env.add_box([0.55, 0.0, 0.35], [0, 0, 0, 1], [0.12, 0.3, 0.02], name="shelf")
    env.add_box([0.0, 0.55, 0.45], None, [0.15, 0.05, 0.25], euler=[0.0, 0.0, 0.4], name="wall")
    env.add_cylinder([-0.45, -0.3, 0.5], [0, 0, 0, 1], 0.08, 0.8, name="post")
    s = math.sqrt(0.5)
    env.add_cylinder([0.35, -0.45, 0.6], [s, 0, 0, s], 0.05, 0.5, name="bar")
    env.add_box([0.3, 0.3, 0.9], [0.0, 0.0, math.sin(0.3), math.cos(0.3)], [0.1, 0.1, 0.1], name="cube")
    env.add_sphere([-0.3, 0.35, 0.8], 0.1)
    env.add_capsule([0.5, 0.4, 0.2], None, 0.04, 0.3, euler=[0.5, 0.0, 0.0])
    return env


def samples(q0, q1, n: int) -> np.ndarray:
    """The n + 1 samples of the discrete check, ends exact."""
    q0, q1 = np.asarray(q0, float), np.asarray(q1, float)
    t = np.arange(n + 1, dtype=float) / n
    out = q0 + t[:, None] * (q1 - q0)
    out[0], out[-1] = q0, q1
    return out


def expected_n(q0, q1, res: float) -> int:
    return max(1, math.ceil(float(np.linalg.norm(np.asarray(q1, float) - np.asarray(q0, float))) * res))


def random_edges(robot: Robot, env: Environment, rng, count: int):
    """Edges of mixed length between mostly valid configurations (some endpoints invalid too)."""
    lo, hi = robot.lower, robot.upper
    margin = 1e-3
    pool = rng.uniform(lo + margin, hi - margin, size=(8 * count, robot.dof))
    ok = robot.is_valid_many(pool, env)
    good, bad = pool[ok], pool[~ok]
    edges = []
    for k in range(count):
        q0 = good[k % len(good)] if (k % 10) or not len(bad) else bad[k % len(bad)]
        kind = k % 3
        if kind == 0:  # long: to another random configuration
            q1 = good[(k * 7 + 3) % len(good)]
        else:  # short / medium steps in a random direction
            d = rng.normal(size=robot.dof)
            d *= rng.uniform(0.02, 1.5 if kind == 1 else 0.3) / np.linalg.norm(d)
            q1 = np.clip(q0 + d, lo + margin, hi - margin)
        edges.append((q0, q1))
    return edges


# ----------------------------------------------------------------------------- the sample count


def test_motion_samples_formula(panda):
    rng = np.random.default_rng(10)
    for _ in range(200):
        q0 = rng.uniform(panda.lower, panda.upper)
        q1 = q0 + rng.normal(size=7) * rng.choice([1e-4, 0.01, 0.3, 2.0])
        res = float(rng.choice([0.5, 1.0, 7.3, 32.0, 100.0]))
        assert panda.motion_samples(q0, q1, res) == expected_n(q0, q1, res)
    q = np.zeros(7)
    assert panda.motion_samples(q, q, 32.0) == 1
    # default resolution is the robot's
    q1 = q + 0.1
    assert panda.motion_samples(q, q1) == expected_n(q, q1, panda.resolution)
    assert panda.resolution == pytest.approx(panda.speed_bound / sp_robots.MAX_SAMPLE_TRAVEL)


def test_motion_samples_exact_multiples():
    # |q1 - q0| = 1 exactly: n = ceil(res), and n = 1 for tiny edges
    robot = slider_robot()
    for res in [1.0, 2.0, 3.0, 10.0, 16.0, 17.0, 31.0, 32.0, 33.0]:
        assert robot.motion_samples([0.0], [1.0], res) == int(res)
    assert robot.motion_samples([0.0], [1.0], 2.5) == 3
    assert robot.motion_samples([0.0], [1e-9], 32.0) == 1
    assert robot.motion_samples([0.5], [0.0], 4.0) == 2


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-3, 3), min_size=3, max_size=3), st.lists(st.floats(-3, 3), min_size=3, max_size=3),
       st.floats(0.01, 200.0))
def test_motion_samples_property(q0, q1, res):
    robot = three_dof_robot()
    assert robot.motion_samples(q0, q1, res) == expected_n(q0, q1, res)


def test_robot_resolution_is_the_default():
    robot = slider_robot(resolution=5.0)
    assert robot.resolution == 5.0
    assert robot.motion_samples([0.0], [1.0]) == 5
    assert robot.motion_samples([0.0], [1.0], 9.0) == 9


# ----------------------------------------------------------------------------- agreement with is_valid_many


def test_discrete_link_agrees_with_every_sample(isa, panda):
    env = panda_scene()
    rng = np.random.default_rng(20)
    edges = random_edges(panda, env, rng, 400)
    outcomes = []
    for k, (q0, q1) in enumerate(edges):
        res = [32.0, 8.0, 50.0, 3.0][k % 4]
        padding = 0.0 if k % 5 else 0.01
        n = panda.motion_samples(q0, q1, res)
        assert n == expected_n(q0, q1, res)
        ref = bool(panda.is_valid_many(samples(q0, q1, n), env, padding=padding).all())
        got = panda.is_motion_valid(q0, q1, env, resolution=res, padding=padding)
        assert got == ref, (isa, k, q0.tolist(), q1.tolist(), res, padding)
        outcomes.append(got)
    # the scene makes both outcomes common
    assert 0.15 < np.mean(outcomes) < 0.9


def test_discrete_link_default_resolution_agrees(isa, panda):
    env = panda_scene()
    rng = np.random.default_rng(21)
    for q0, q1 in random_edges(panda, env, rng, 60):
        n = expected_n(q0, q1, panda.resolution)
        ref = bool(panda.is_valid_many(samples(q0, q1, n), env).all())
        assert panda.is_motion_valid(q0, q1, env) == ref
        assert panda.is_motion_valid(q0, q1, env, resolution=None) == ref


def test_discrete_link_is_symmetric(isa, panda):
    env = panda_scene()
    rng = np.random.default_rng(22)
    for q0, q1 in random_edges(panda, env, rng, 60):
        # reversed samples are the same points (up to rounding of t), so the answer matches
        n = panda.motion_samples(q0, q1, 16.0)
        fwd = samples(q0, q1, n)
        rev = samples(q1, q0, n)[::-1]
        if np.array_equal(panda.is_valid_many(fwd, env), panda.is_valid_many(rev, env)):
            assert panda.is_motion_valid(q0, q1, env, 16.0) == panda.is_motion_valid(q1, q0, env, 16.0)


# ----------------------------------------------------------------------------- a single colliding sample


def slider_robot(radius: float = 0.01, resolution=None) -> Robot:
    """1-dof robot: one sphere of ``radius`` at (q, 0, 0), q in [-1, 2] (prismatic along x)."""
    from simdplan.robots.description import JointDesc, LinkDesc, RobotDescription

    desc = RobotDescription(
        "slider",
        {"base": LinkDesc("base", np.zeros((0, 4)), []),
         "carriage": LinkDesc("carriage", np.array([[0.0, 0.0, 0.0, radius]]), [])},
        [JointDesc("x", "prismatic", "base", "carriage", np.eye(4), np.array([1.0, 0, 0]), -1.0, 2.0, None)],
        "base",
    )
    return Robot(desc, resolution=resolution)


def three_dof_robot() -> Robot:
    from simdplan.robots.description import JointDesc, LinkDesc, RobotDescription

    links = {n: LinkDesc(n, np.array([[0.1, 0, 0, 0.01]]), []) for n in ("a", "b", "c", "d")}
    joints = [JointDesc(f"j{i}", "revolute", p, c, np.eye(4), np.array([0, 0, 1.0]), -10.0, 10.0, None)
              for i, (p, c) in enumerate([("a", "b"), ("b", "c"), ("c", "d")])]
    return Robot(RobotDescription("three", links, joints, "a"))


def test_only_colliding_sample_anywhere_on_the_edge(isa):
    # For every sample count n and every position k, an obstacle that only sample k touches makes the
    # edge invalid; this walks every lane / chunk slot of the check's sample order.
    robot = slider_robot(radius=0.01)
    for n in list(range(1, 41)) + [63, 64, 65, 127, 128, 129]:
        assert robot.motion_samples([0.0], [1.0], float(n)) == n
        r = 0.2 / n  # samples are 1/n apart; robot + obstacle radii stay well below that
        robot_n = slider_robot(radius=r)
        free = Environment()
        assert robot_n.is_motion_valid([0.0], [1.0], free, resolution=float(n))
        positions = range(n + 1) if n <= 40 else [0, 1, n // 2, n - 1, n]
        for k in positions:
            env = Environment()
            env.add_sphere([k / n, 0.0, 0.0], r)
            S = samples([0.0], [1.0], n)
            hit = ~robot_n.is_valid_many(S, env)
            assert hit.tolist() == [i == k for i in range(n + 1)], (n, k)
            assert not robot_n.is_motion_valid([0.0], [1.0], env, resolution=float(n)), (isa, n, k)
            assert not robot_n.is_motion_valid([1.0], [0.0], env, resolution=float(n)), (isa, n, k)
            # an obstacle exactly between two samples is missed: that is what discrete means
            if k < n:
                gap = Environment()
                gap.add_sphere([(k + 0.5) / n, 0.0, 0.0], r)
                assert robot_n.is_motion_valid([0.0], [1.0], gap, resolution=float(n)), (isa, n, k)


def _single_hit_scene(robot: Robot, q0, q1, n: int, k: int):
    """An environment in which sample k, and no other, of the n-interval edge collides (or None)."""
    S = samples(q0, q1, n)
    fk = robot.fk_many(S).astype(float)  # (n + 1, n_spheres, 4)
    # the sphere that moves most around sample k
    others = [i for i in range(n + 1) if i != k]
    gaps = np.min(np.linalg.norm(fk[others, :, :3] - fk[k, None, :, :3], axis=2), axis=0)
    for s in np.argsort(-gaps)[:5]:
        env = Environment()
        env.add_sphere(fk[k, s, :3], 0.002)
        hit = ~robot.is_valid_many(S, env)
        if hit.tolist() == [i == k for i in range(n + 1)]:
            return env
    return None


@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_panda_edge_with_a_single_colliding_sample(isa, panda, where):
    rng = np.random.default_rng(30)
    found = 0
    for _ in range(50):
        q0 = rng.uniform(panda.lower + 0.01, panda.upper - 0.01)
        q1 = np.clip(q0 + rng.normal(size=7) * 0.6, panda.lower + 0.01, panda.upper - 0.01)
        if not (panda.is_valid(q0) and panda.is_valid(q1)):
            continue
        res = 6.0 / np.linalg.norm(q1 - q0)  # about 6 intervals
        n = panda.motion_samples(q0, q1, res)
        k = {"start": 0, "middle": n // 2, "end": n}[where]
        env = _single_hit_scene(panda, q0, q1, n, k)
        if env is None:
            continue
        assert not panda.is_motion_valid(q0, q1, env, resolution=res)
        assert panda.is_valid(q0, env) == (k != 0)
        assert panda.is_valid(q1, env) == (k != n)
        found += 1
        if found >= 3:
            break
    assert found >= 3


# ----------------------------------------------------------------------------- limits and degenerate edges


def test_edge_with_an_endpoint_out_of_limits_is_invalid(isa, panda):
    q_in = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7])
    assert panda.is_valid(q_in)
    for j in range(7):
        for bound, step in ((panda.upper, 0.01), (panda.lower, -0.01)):
            q_out = q_in.copy()
            q_out[j] = bound[j] + step
            assert not panda.is_valid(q_out)
            assert panda.is_motion_valid(q_in, q_in) is True
            assert panda.is_motion_valid(q_in, q_out) is False
            assert panda.is_motion_valid(q_out, q_in) is False
            assert panda.is_motion_valid(q_out, q_out) is False


def test_edge_ending_exactly_on_a_limit_is_valid(isa):
    robot = slider_robot()
    assert robot.is_motion_valid([-1.0], [2.0])
    assert robot.is_motion_valid([2.0], [-1.0], resolution=100.0)
    assert not robot.is_motion_valid([-1.0], [2.0 + 1e-6])
    assert not robot.is_motion_valid([-1.0 - 1e-6], [0.0])


def test_zero_length_edge_equals_is_valid(isa, panda):
    env = panda_scene()
    rng = np.random.default_rng(40)
    Q = rng.uniform(panda.lower - 0.2, panda.upper + 0.2, size=(300, 7))  # some out of limits
    for q in Q:
        assert panda.motion_samples(q, q) == 1
        for pad in (0.0, 0.02):
            assert panda.is_motion_valid(q, q, env, padding=pad) == panda.is_valid(q, env, padding=pad)
    vals = panda.is_valid_many(Q, env)
    assert 0 < vals.mean() < 1


def test_continuous_joint_edges_interpolate_the_raw_values(isa):
    # A 1-dof arm on a continuous joint: sphere at radius 1; obstacle at angle 0.
    from simdplan.robots.description import JointDesc, LinkDesc, RobotDescription

    desc = RobotDescription(
        "spinner",
        {"base": LinkDesc("base", np.zeros((0, 4)), []),
         "arm": LinkDesc("arm", np.array([[1.0, 0.0, 0.0, 0.05]]), [])},
        [JointDesc("c", "continuous", "base", "arm", np.eye(4), np.array([0, 0, 1.0]), -np.inf, np.inf, None)],
        "base",
    )
    robot = Robot(desc)
    env = Environment()
    env.add_sphere([1.0, 0.0, 0.0], 0.05)
    assert not robot.is_valid([0.0], env)
    assert not robot.is_valid([2 * math.pi], env)
    # -3 -> 3 passes through 0 (the long way round in angle, but the straight line in joint space)
    assert not robot.is_motion_valid([-3.0], [3.0], env)
    # 3 -> 2 pi - 3 (= 3.28) wraps past pi but never reaches 0 (mod 2 pi): valid
    assert robot.is_motion_valid([3.0], [2 * math.pi - 3.0], env)
    # beyond +-pi is allowed: 4 -> 10 passes 2 pi (an obstacle hit); 0.5 -> 5.5 does not
    assert not robot.is_motion_valid([4.0], [10.0], env)
    assert robot.is_motion_valid([0.5], [5.5], env)
    assert robot.is_motion_valid([100.5], [105.5], env) == bool(
        robot.is_valid_many(samples([100.5], [105.5], robot.motion_samples([100.5], [105.5])), env).all())


def test_motion_padding(isa):
    robot = slider_robot(radius=0.05)
    env = Environment()
    env.add_sphere([0.5, 0.3, 0.0], 0.2)  # 0.05 clearance from the line the sphere slides along
    assert robot.is_motion_valid([0.0], [1.0], env)
    assert robot.is_motion_valid([0.0], [1.0], env, padding=0.04)
    assert not robot.is_motion_valid([0.0], [1.0], env, padding=0.06)
