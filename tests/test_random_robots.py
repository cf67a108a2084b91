"""Random robots: the kernels' shortcuts change no answer, on every ISA.

Hypothesis builds random trees of links (fixed, revolute, continuous and prismatic joints, frames
turned by multiples of 90 degrees or by anything, held joints, links without spheres, a base pose)
and random obstacles. For each robot the same program is compiled twice: with the kernels' fast
paths (origins that are signed permutations copy columns, static groups leave the environment
test once they have passed, frames on demand, the collision hint, a body's bound before its
groups' and self-collision pairs in blocks between two bodies) and without them
(``fast_paths=False``: every origin through the general product, every group tested every time).
Forward kinematics must agree bit for bit, validity and motion checks exactly, plans exactly (same
seed, same path); and both must agree with a float64 NumPy reference away from contact boundaries.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simdplan
from simdplan import _core
from simdplan.robots import RobotBuilder
from simdplan.robots.kinematics import joint_motion

import reference as ref

QUARTER_TURNS = [0.0, np.pi / 2, np.pi, -np.pi / 2, 1.570796325]  # the last one as URDFs often write it
AXES = [(0, 0, 1), (0, 1, 0), (1, 0, 0), (0, 0, -1), (0, -1, 0), (-1, 0, 0)]


@st.composite
def robots(draw):
    """A random RobotBuilder robot with its joint list and held values."""
    n = draw(st.integers(2, 9))
    b = RobotBuilder("random")
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    for i in range(n):
        k = int(rng.integers(0, 5)) if i else int(rng.integers(1, 4))  # the root has spheres
        spheres = np.c_[rng.uniform(-0.15, 0.15, (k, 3)), rng.uniform(0.02, 0.08, k)]
        b.link(f"l{i}", spheres=spheres if k else None)
    movable, held = [], {}
    for i in range(1, n):
        parent = f"l{int(rng.integers(0, i))}"
        kind = "revolute" if i == 1 else draw(st.sampled_from(["fixed", "revolute", "revolute", "continuous", "prismatic"]))
        if draw(st.booleans()):  # axis-aligned frame
            rpy = [float(rng.choice(QUARTER_TURNS)) for _ in range(3)]
        else:
            rpy = rng.uniform(-np.pi, np.pi, 3).tolist()
        axis = AXES[int(rng.integers(0, 6))] if draw(st.booleans()) else rng.normal(size=3) + 1e-3
        xyz = np.where(rng.random(3) < 0.4, 0.0, rng.uniform(-0.3, 0.3, 3))
        limits = None
        if kind == "revolute":
            lo = float(rng.uniform(-3, 0))
            limits = (lo, lo + float(rng.uniform(0.5, 3)))
        elif kind == "prismatic":
            limits = (0.0, float(rng.uniform(0.05, 0.4)))
        b.joint(f"j{i}", kind, parent, f"l{i}", xyz=xyz, rpy=rpy, axis=axis, limits=limits)
        if kind != "fixed":
            movable.append((f"j{i}", kind, limits))
    joints = []
    for name, kind, limits in movable:  # j1 always moves, so dof >= 1
        if name == "j1" or draw(st.booleans()):
            joints.append(name)
        else:
            held[name] = 0.0 if limits is None else 0.5 * (limits[0] + limits[1])
    base = np.eye(4)
    if draw(st.booleans()):
        base[:3, :3] = ref.euler_xyz_to_matrix(rng.uniform(-np.pi, np.pi, 3))
        base[:3, 3] = rng.uniform(-0.5, 0.5, 3)
    robot = b.build(joints=joints, fixed_joint_values=held, base_pose=base, skip_adjacent=draw(st.booleans()))
    return robot, rng


def plain_twin(robot):
    """The same robot compiled without the kernels' fast paths."""
    twin = copy.copy(robot)
    twin._model = _core.RobotModel(*robot._program.core_args(), fast_paths=False)
    twin._core_is_valid = twin._model.is_valid
    return twin


def reference_fk(robot, q) -> np.ndarray:
    """(n_spheres, 4) float64 world spheres at q in fk order, walking the description in NumPy."""
    desc = robot.description
    values = dict(robot.fixed_joint_values)
    values.update(zip(robot.joint_names, np.asarray(q, dtype=np.float64)))
    poses = {desc.root: np.asarray(robot.base_pose, dtype=np.float64)}
    pending = list(desc.joints)
    while pending:
        j = pending.pop(0)
        if j.parent not in poses:
            pending.append(j)
            continue
        v = values.get(j.name, 0.0) if j.type != "fixed" else 0.0
        poses[j.child] = poses[j.parent] @ j.origin @ joint_motion(j.type, j.axis, v)
    out, seen = [], {}
    for link in robot.sphere_links:
        k = seen.get(link, 0)
        seen[link] = k + 1
        c = desc.links[link].spheres[k]
        T = poses[link]
        out.append(np.r_[T[:3, :3] @ c[:3] + T[:3, 3], c[3]])
    return np.array(out).reshape(-1, 4)


def random_specs(rng, n=6):
    specs = []
    for _ in range(n):
        kind = rng.choice(["sphere", "box", "capsule", "cylinder"])
        pos = rng.uniform(-0.6, 0.6, 3).tolist()
        if kind == "sphere":
            specs.append({"kind": "sphere", "center": pos, "radius": float(rng.uniform(0.03, 0.2))})
        elif kind == "box":
            specs.append({"kind": "box", "position": pos, "euler": rng.uniform(-3, 3, 3).tolist(),
                          "half_extents": rng.uniform(0.02, 0.2, 3).tolist()})
        else:
            specs.append({"kind": str(kind), "position": pos, "euler": rng.uniform(-3, 3, 3).tolist(),
                          "radius": float(rng.uniform(0.02, 0.1)), "length": float(rng.uniform(0.05, 0.4))})
    return specs


def random_configs(robot, rng, n):
    lo, hi = robot.lower, robot.upper
    return rng.uniform(lo, hi, (n, robot.dof))


SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(robots())
def test_fk_fast_paths_are_bit_identical_and_match_numpy(isa, case):
    robot, rng = case
    twin = plain_twin(robot)
    Q = random_configs(robot, rng, 37)
    fast, plain = robot.fk_many(Q), twin.fk_many(Q)
    assert np.array_equal(fast, plain)
    for q, got in zip(Q[:5], fast[:5]):
        np.testing.assert_allclose(got, reference_fk(robot, q), atol=2e-5)


@SETTINGS
@given(robots())
def test_validity_fast_paths_change_no_answer(isa, case):
    robot, rng = case
    twin = plain_twin(robot)
    specs = random_specs(rng)
    env, _ = ref.make_environment(specs)
    Q = random_configs(robot, rng, 300)
    fast, plain = robot.is_valid_many(Q, env), twin.is_valid_many(Q, env)
    assert np.array_equal(fast, plain)
    assert np.array_equal(fast, [robot.is_valid(q, env) for q in Q])
    # the float64 reference, away from contact boundaries (the core computes in float32)
    for q, got in zip(Q[:40], fast[:40]):
        spheres = reference_fk(robot, q)
        c, r = spheres[:, :3], spheres[:, 3]
        d_env = np.array([ref.distance(c, s) - r for s in specs]) if specs else np.zeros((0, len(r)))
        hits_env = (d_env < 0).any()
        runs = {}
        for k, link in enumerate(robot.sphere_links):
            runs.setdefault(link, []).append(k)
        d_self = [np.linalg.norm(c[i] - c[j]) - r[i] - r[j] for la, lb in robot.self_collision_pairs
                  for i in runs[la] for j in runs[lb]]
        hits_self = any(d < 0 for d in d_self)
        margin = min([np.abs(d_env).min() if d_env.size else np.inf] + [abs(d) for d in d_self])
        if margin > 1e-4:
            assert got == (not hits_env and not hits_self), q


@SETTINGS
@given(robots())
def test_motion_checks_and_plans_are_the_same_with_and_without_fast_paths(isa, case):
    robot, rng = case
    twin = plain_twin(robot)
    env, _ = ref.make_environment(random_specs(rng, 4))
    Q = random_configs(robot, rng, 40)
    for a, b in zip(Q[:-1], Q[1:]):  # a sequence of edges, so the collision hint carries over
        assert robot.is_motion_valid(a, b, env) == twin.is_motion_valid(a, b, env)
    valid = Q[robot.is_valid_many(Q, env)]
    if len(valid) >= 2:
        kw = dict(seed=3, time_limit=0, max_iterations=3000)
        r1 = simdplan.plan(robot, env, valid[0], valid[1], **kw)
        r2 = simdplan.plan(twin, env, valid[0], valid[1], **kw)
        assert r1.success == r2.success and np.array_equal(r1.path, r2.path)
        assert r1.stats["iterations"] == r2.stats["iterations"]


def mobile_base():
    """A base with spheres (static), a prismatic torso and a one-joint arm."""
    b = RobotBuilder("base")
    b.link("base", spheres=[[0, 0, 0.1, 0.2], [0.2, 0, 0.1, 0.1]])
    b.link("torso", spheres=[[0, 0, 0.3, 0.1]])
    b.link("arm", spheres=[[0.3, 0, 0, 0.05], [0.5, 0, 0, 0.05]])
    b.joint("lift", "prismatic", "base", "torso", xyz=[0, 0, 0.2], limits=(0, 0.3))
    b.joint("shoulder", "revolute", "torso", "arm", xyz=[0, 0, 0.4], limits=(-3, 3))
    return b.build()


def test_static_groups_colliding_make_every_configuration_invalid(isa):
    robot = mobile_base()
    env = simdplan.Environment()
    env.add_box([0.25, 0, 0.05], half_extents=[0.05, 0.05, 0.05], name="under the base")
    Q = np.array([[0.0, 0.0], [0.3, 2.0], [0.1, -2.0]])
    assert not robot.is_valid_many(Q, env).any()
    assert not robot.is_motion_valid(Q[0], Q[1], env)
    assert not plain_twin(robot).is_valid_many(Q, env).any()
    with pytest.raises(simdplan.planner.InvalidProblemError, match="under the base"):
        simdplan.plan(robot, env, Q[0], Q[1])


def test_static_groups_are_skipped_only_after_they_pass(isa):
    robot = mobile_base()
    env = simdplan.Environment()
    env.add_box([0.7, 0, 0.6], half_extents=[0.05, 0.3, 0.05], name="shelf")  # reachable by the arm only
    Q = np.array([[0.0, 0.0], [0.0, 3.0], [0.0, -3.0], [0.05, 0.1]])
    twin = plain_twin(robot)
    assert np.array_equal(robot.is_valid_many(Q, env), twin.is_valid_many(Q, env))
    res = simdplan.plan(robot, env, Q[1], Q[2], seed=0)
    assert res.success
    for a, b in zip(res.path[:-1], res.path[1:]):
        assert twin.is_motion_valid(a, b, env)


def arm_with_a_hand_of_many_links():
    """Three revolute joints and a hand of six small links fixed to the last one (one body, six
    sphere groups): what the body bound and the pair blocks serve (a Robotiq hand on a ur5)."""
    b = RobotBuilder("hand")
    b.link("base", spheres=[[0, 0, 0.05, 0.08]])
    b.link("upper", spheres=[[0, 0, 0.1, 0.05], [0, 0, 0.25, 0.05]])
    b.link("fore", spheres=[[0.1, 0, 0, 0.04], [0.25, 0, 0, 0.04]])
    b.link("palm", spheres=[[0.05, 0, 0, 0.03]])
    b.joint("j1", "revolute", "base", "upper", xyz=[0, 0, 0.1], limits=(-3, 3))
    b.joint("j2", "revolute", "upper", "fore", xyz=[0, 0, 0.35], axis=[0, 1, 0], limits=(-3, 3))
    b.joint("j3", "revolute", "fore", "palm", xyz=[0.35, 0, 0], axis=[0, 1, 0], limits=(-3, 3))
    for i in range(6):
        b.link(f"finger{i}", spheres=[[0.02 * (i % 3), 0.03 * (i // 3) - 0.015, 0.0, 0.015]])
        b.joint(f"f{i}", "fixed", "palm", f"finger{i}", xyz=[0.08, 0, 0.01 * i])
    return b.build(skip_adjacent=True)


@pytest.mark.parametrize("seed", range(3))
def test_body_bounds_and_pair_blocks_change_no_answer(isa, seed):
    robot = arm_with_a_hand_of_many_links()
    twin = plain_twin(robot)
    rng = np.random.default_rng(seed)
    env = simdplan.Environment()
    for k, c in enumerate(rng.uniform(-0.6, 0.6, (12, 3))):
        env.add_sphere(c, float(rng.uniform(0.02, 0.08)), name=f"ball{k}")
    Q = random_configs(robot, rng, 4000)
    fast = robot.is_valid_many(Q, env)
    assert np.array_equal(fast, twin.is_valid_many(Q, env))
    assert 0.2 < fast.mean() < 0.9  # both outcomes are well represented
    # self-collision alone (the hand folding back onto the arm), where only the pair blocks act
    empty = simdplan.Environment()
    alone = robot.is_valid_many(Q, empty)
    assert np.array_equal(alone, twin.is_valid_many(Q, empty)) and not alone.all()
    for a, b in zip(Q[:200:2], Q[1:200:2]):
        assert robot.is_motion_valid(a, b, env) == twin.is_motion_valid(a, b, env)


def planner_link(robot, a, b, env, resolution, wide=False):
    """The planners' discrete Link kernel (the one with the shortcuts between chunks of samples);
    wide: the simplifier's, which takes `lanes` samples at a time instead of `motion_lanes`."""
    return robot._model.planner_link(robot._env_model(env, 0.0), np.asarray(a, float), np.asarray(b, float),
                                     float(resolution), 0.0, wide)


def chunk_starts(n: int, lanes: int, first: int = 0) -> np.ndarray:
    """The samples (indices i of a + (i/n)(b - a)) in the first chunk of a discrete Link from `first`
    to n: the rake order's lanes i = first + P l, P chunks of `lanes` samples."""
    chunks = (n - first + lanes) // lanes
    return np.arange(first, n + 1, chunks)


def compare_later_chunks(robot, rng, pebbles=0) -> int:
    """Edges from valid configurations, short and long, near random obstacles (and `pebbles` balls
    of 3-10 mm, which a first chunk's samples easily straddle), at resolutions giving 3 to 12 chunks:
    the planners' Link must answer as the plain twin's, which never skips a test. Returns how many
    edges had a free first chunk and collided in a later one."""
    twin = plain_twin(robot)
    env, _ = ref.make_environment(random_specs(rng, 8))
    for k in range(pebbles):
        env.add_sphere(rng.uniform(-0.6, 0.6, 3), float(rng.uniform(0.003, 0.01)), name=f"pebble{k}")
    lanes = simdplan.info()["motion_lanes"]
    Q = random_configs(robot, rng, 400)
    later_only = 0
    for a in Q[robot.is_valid_many(Q, env)][:30]:
        for scale in (0.05, 0.3, 1.0, 2.0):
            b = np.clip(a + rng.normal(0.0, scale, robot.dof), robot.lower, robot.upper)
            res = robot.resolution * float(rng.integers(3 * lanes, 12 * lanes + 1)) / robot.motion_samples(a, b)
            n = robot.motion_samples(a, b, res)
            fast, plain = planner_link(robot, a, b, env, res), planner_link(twin, a, b, env, res)
            assert fast == plain, (a, b, res)
            assert planner_link(robot, a, b, env, res, wide=True) == plain, (a, b, res)
            first_chunk = a + np.outer(chunk_starts(n, lanes) / n, b - a)
            later_only += bool(not plain and twin.is_valid_many(first_chunk, env).all())
    return later_only


def chunk_sizes(n: int, lanes: int, first: int = 0) -> list[int]:
    """Samples per chunk of a discrete Link from `first` to n, in order (rake order: chunk c holds
    i = first + c + P l for the lanes l with i <= n)."""
    chunks = (n - first + lanes) // lanes
    return [len(range(first + c, n + 1, chunks)) for c in range(chunks)]


@SETTINGS
@given(robots(), st.integers(0, 2**32 - 1))
def test_link_counts_the_samples_of_the_chunks_it_reached(isa, case, seed):
    """What a plan's collision_checks adds per discrete Link: every sample of a free edge (edge_far's
    proof covers the chunks it skips), else the samples of the chunks up to the colliding one."""
    robot, rng = case
    rng = np.random.default_rng([seed, int(rng.integers(0, 2**32 - 1))])
    env, _ = ref.make_environment(random_specs(rng, 8))
    model, env_model = robot._model, robot._env_model(env, 0.0)
    info = simdplan.info()
    lanes = {False: info["motion_lanes"], True: info["lanes"]}  # samples per chunk, narrow and wide
    Q = random_configs(robot, rng, 200)
    for a in Q[robot.is_valid_many(Q, env)][:10]:
        for scale in (0.05, 0.5, 2.0):
            b = np.clip(a + rng.normal(0.0, scale, robot.dof), robot.lower, robot.upper)
            n = robot.motion_samples(a, b)
            for wide in (False, True):
                free, samples = model.planner_link_samples(env_model, a, b, float(robot.resolution), 0.0, wide)
                assert free == planner_link(robot, a, b, env, robot.resolution, wide)
                if free:
                    assert samples == n + 1
                else:
                    sizes = chunk_sizes(n, lanes[wide])
                    assert samples in np.cumsum(sizes), (samples, sizes)


def test_a_link_counts_up_to_the_chunk_of_its_first_collision(isa):
    """An obstacle across the middle of a long edge stops the Link in its first chunk (its samples
    span the edge); a small ball between first-chunk samples in a later one. The count is the samples
    of the chunks up to the first that holds a colliding sample (by the reference check of every
    sample). A plan's free straight edge counts all its samples but the two ends it knows."""
    b = RobotBuilder("sweeper")
    b.link("base", spheres=[[0, 0, 0, 0.05]])
    b.link("arm", spheres=[[0.5, 0, 0, 0.005]])
    b.joint("j", "revolute", "base", "arm", limits=(-3, 3))
    robot = b.build()
    lanes = simdplan.info()["motion_lanes"]
    n = 8 * lanes - 1
    a, q1 = np.array([0.0]), np.array([1.0])
    chunks, sizes = (n + lanes) // lanes, chunk_sizes(n, lanes)
    wall, ball = simdplan.Environment(), simdplan.Environment()
    wall.add_box([0.5 * np.cos(0.5), 0.5 * np.sin(0.5), 0.0], half_extents=[0.1, 0.1, 0.1], name="wall")
    ball.add_sphere([0.5 * np.cos(4 / n), 0.5 * np.sin(4 / n), 0.0], 0.002, name="ball")
    for env, first_chunk in ((wall, True), (ball, False)):
        hit = ~robot.is_valid_many(a + np.outer(np.arange(n + 1) / n, q1 - a), env)
        stop = int((np.nonzero(hit)[0] % chunks).min())  # sample i is in chunk i % chunks
        assert lanes == 1 or (stop == 0) == first_chunk
        free, samples = robot._model.planner_link_samples(robot._env_model(env, 0.0), a, q1, float(n), 0.0)
        assert not free and samples == int(np.cumsum(sizes)[stop]), (samples, stop)
    res = simdplan.plan(robot, simdplan.Environment(), a, q1, resolution=float(n), simplify=False, link="discrete")
    assert res.success and res.stats["iterations"] == 0 and res.stats["collision_checks"] == n - 1


@SETTINGS
@given(robots(), st.integers(0, 2**32 - 1))
def test_later_chunks_skip_only_tests_that_cannot_hit(isa, case, seed):
    """Discrete Link skips, after an edge's first chunk of samples, the tests that chunk proved far
    by the motion bounds (collision/validity.hh, edge_far); answers must not change."""
    robot, rng = case
    compare_later_chunks(robot, np.random.default_rng([seed, int(rng.integers(0, 2**32 - 1))]))


def test_later_chunks_are_checked_where_the_first_passed(isa):
    """The comparison above meets edges whose collision only a later chunk finds (else it would
    prove little): on a hand of many links among obstacles, and on a mobile base."""
    later_only = sum(compare_later_chunks(robot, np.random.default_rng(seed), pebbles=400)
                     for robot in (arm_with_a_hand_of_many_links(), mobile_base()) for seed in range(4))
    assert later_only >= 2


def test_a_graze_after_the_first_chunk_is_still_found(isa):
    """An obstacle that only samples of later chunks touch: the first chunk is free, edge_far must
    not mark the arm far, and the edge collides."""
    b = RobotBuilder("sweeper")
    b.link("base", spheres=[[0, 0, 0, 0.05]])
    b.link("arm", spheres=[[0.5, 0, 0, 0.005]])
    b.joint("j", "revolute", "base", "arm", limits=(-3, 3))
    robot = b.build()
    twin = plain_twin(robot)
    lanes = simdplan.info()["motion_lanes"]
    n = 8 * lanes - 1  # eight chunks: the first holds samples 0, 8, 16, ...
    a, q1 = np.array([0.0]), np.array([1.0])
    res = float(n)
    assert robot.motion_samples(a, q1, res) == n
    firsts = chunk_starts(n, lanes)
    assert len(firsts) == lanes and (lanes == 1 or firsts[1] == 8)
    for i in (4, n - 4):  # midway between first-chunk samples
        t = i / n
        ball = simdplan.Environment()
        ball.add_sphere([0.5 * np.cos(t), 0.5 * np.sin(t), 0.0], 0.002, name="ball")
        assert robot.is_valid_many(a + np.outer(firsts / n, q1 - a), ball).all()
        assert not twin.is_motion_valid(a, q1, ball, res) and not planner_link(twin, a, q1, ball, res)
        assert not planner_link(robot, a, q1, ball, res), i
        assert not planner_link(robot, a, q1, ball, res, wide=True), i
    clear = simdplan.Environment()
    clear.add_sphere([0.0, 0.0, 0.3], 0.05, name="above")
    assert planner_link(robot, a, q1, clear, res) and planner_link(twin, a, q1, clear, res)
