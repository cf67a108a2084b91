"""Clear(q) of the built-in robots in random environments against the NumPy reference.

is_valid_many, per-row is_valid and the reference (tests/reference.py: yourdfpy FK, float64
shape distances, limits, self pairs) must agree, under every ISA, on every configuration whose
nearest contact boundary is more than 1e-5 m away (float32 may go either way closer than that).
Joint-limit verdicts are exact (float64 on both sides) and are compared on every row.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import reference as ref
import simdplan

AMBIGUOUS = 1e-5


@functools.lru_cache(maxsize=None)
def load(name: str) -> simdplan.Robot:
    return simdplan.robots.load(name)


# ----------------------------------------------------------------------------- random scenes


def random_obstacle(rng, kind=None) -> dict:
    """An obstacle somewhere in the panda/ur5 workspace (around the base, up to ~1.2 m high)."""
    kind = kind or rng.choice(["sphere", "capsule", "cylinder", "box", "plane"])
    pos = rng.uniform([-0.8, -0.8, 0.0], [0.8, 0.8, 1.2])
    if kind == "sphere":
        return {"kind": "sphere", "center": pos, "radius": rng.uniform(0.03, 0.2)}
    if kind == "plane":
        # a floor or wall, tilted a little, that usually clears the base but catches some reaches
        normal = rng.normal(size=3) * 0.2 + rng.choice([[0, 0, 1], [1, 0, 0], [0, -1, 0], [-1, 0, 0]])
        normal = normal / np.linalg.norm(normal) * rng.choice([1.0, 2.0])
        far = rng.uniform(0.3, 0.9) if normal[2] < 0.5 else rng.uniform(0.0, 0.2)
        return {"kind": "plane", "normal": normal, "offset": -far * np.linalg.norm(normal)}
    spec = {"kind": kind, "position": pos}
    style = rng.integers(3)
    if style == 0:
        q = rng.normal(size=4)
        spec["quat"] = q / np.linalg.norm(q)
    elif style == 1:
        spec["euler"] = rng.uniform(-np.pi, np.pi, size=3)
    if kind == "box":
        spec["half_extents"] = rng.uniform(0.02, 0.2, size=3)
    else:
        spec["radius"] = rng.uniform(0.02, 0.15)
        spec["length"] = rng.uniform(0.0 if kind == "capsule" else 0.02, 0.6)
    return spec


def random_configs(robot, rng, n, p_out=0.2):
    """n configurations within limits, some exactly at a limit, a fraction p_out with one or more
    joints outside by up to 0.5 (rad) or by a hair."""
    lo, hi = robot.lower, robot.upper
    Q = rng.uniform(lo, hi, size=(n, robot.dof))
    for i in range(n):
        u = rng.random()
        if u < p_out:
            j = rng.integers(robot.dof, size=rng.integers(1, 3))
            past = rng.choice([1e-9, 1e-4, rng.uniform(0, 0.5)])
            up = rng.random(size=len(j)) < 0.5
            Q[i, j] = np.where(up, hi[j] + past, lo[j] - past)
        elif u < p_out + 0.05:
            j = rng.integers(robot.dof)
            Q[i, j] = lo[j] if rng.random() < 0.5 else hi[j]
    return Q


def compare(robot, Q, specs, padding, reports=None):
    """The product's verdicts against the reference (``reports`` may be precomputed)."""
    env, ids = ref.make_environment(specs)
    reports = reports if reports is not None else [ref.check(robot, q, specs, padding) for q in Q]
    many = robot.is_valid_many(Q, env, padding)
    single = np.array([robot.is_valid(q, env, padding) for q in Q])
    ctx = f"isa={simdplan.isa()} padding={padding} specs={specs}"
    # the batch and the single check run the same per-lane code: identical on every row
    assert many.tolist() == single.tolist(), ctx
    kind_of = dict(zip(ids, (s["kind"] for s in specs)))
    checked = 0
    for i, (q, rep) in enumerate(zip(Q, reports)):
        clear = rep.margin > AMBIGUOUS
        if not rep.within_limits or clear:
            assert many[i] == rep.valid, f"row {i}: got {many[i]}, reference {rep}\nq={q.tolist()}\n{ctx}"
            checked += 1
        if not clear:
            continue
        why = robot.why_invalid(q, env, padding)
        assert (len(why) == 0) == bool(many[i]), f"row {i}: why_invalid={why} but is_valid={many[i]}"
        lim = [v.joint for v in why if v.kind == "joint_limit"]
        assert sorted(lim) == sorted(rep.limit_violations), (lim, rep.limit_violations)
        envv = [v for v in why if v.kind == "environment"]
        for v in envv:
            assert v.link == robot.sphere_links[v.sphere]
            assert v.obstacle_kind == kind_of[v.obstacle_id]
            assert (v.sphere, ids.index(v.obstacle_id)) in rep.env_hits, f"reference says {v} is free"
            assert v.depth > 0
        assert {(v.sphere, ids.index(v.obstacle_id)) for v in envv} == rep.env_hits
        selfv = {(min(v.sphere, v.other_sphere), max(v.sphere, v.other_sphere)) for v in why if v.kind == "self"}
        assert selfv == rep.self_hits
    return many, checked


# ----------------------------------------------------------------------------- seeded scenes
# The reference is computed once per scene and reused for every ISA.

SCENES = 10
ROWS = 37  # not a multiple of any lane count


@functools.lru_cache(maxsize=None)
def seeded_scene(robot_name: str, seed: int):
    robot = load(robot_name)
    rng = np.random.default_rng(seed)
    specs = [random_obstacle(rng) for _ in range(rng.integers(1, 9))]
    padding = float(rng.choice([0.0, 0.0, 0.01, 0.03]))
    Q = random_configs(robot, rng, ROWS)
    reports = [ref.check(robot, q, specs, padding) for q in Q]
    return specs, padding, Q, reports


@pytest.mark.parametrize("robot_name", ["panda", "ur5"])
def test_seeded_scenes_match_reference(robot_name, isa):
    robot = load(robot_name)
    n_valid = n_invalid = n_checked = 0
    for seed in range(SCENES):
        specs, padding, Q, reports = seeded_scene(robot_name, seed)
        many, checked = compare(robot, Q, specs, padding, reports)
        n_valid += int(many.sum())
        n_invalid += int((~many).sum())
        n_checked += checked
    # the scenes are informative: both verdicts occur, and almost every row was decidable
    assert n_valid > 0.15 * SCENES * ROWS and n_invalid > 0.15 * SCENES * ROWS, (n_valid, n_invalid)
    assert n_checked > 0.9 * SCENES * ROWS


def test_seeded_scenes_every_kind_collides():
    """Each obstacle kind causes at least one environment contact somewhere in the panda scenes."""
    kinds = set()
    for seed in range(SCENES):
        specs, _, _, reports = seeded_scene("panda", seed)
        kinds |= {specs[o]["kind"] for rep in reports for _, o in rep.env_hits}
    assert kinds == {"sphere", "capsule", "cylinder", "box", "plane"}


# ----------------------------------------------------------------------------- hypothesis


@settings(max_examples=30)
@given(seed=st.integers(0, 2 ** 32 - 1), n_obstacles=st.integers(0, 8), n=st.integers(1, 24),
       padding=st.sampled_from([0.0, 0.0, 0.02]), kinds=st.lists(
           st.sampled_from(["sphere", "capsule", "cylinder", "box", "plane"]), min_size=8, max_size=8))
def test_panda_random_environments(isa, seed, n_obstacles, n, padding, kinds):
    robot = load("panda")
    rng = np.random.default_rng(seed)
    specs = [random_obstacle(rng, kinds[i]) for i in range(n_obstacles)]
    Q = random_configs(robot, rng, n)
    many, _ = compare(robot, Q, specs, padding)
    event(f"valid fraction {np.mean(many):.1f}")


# ----------------------------------------------------------------------------- details


def test_no_environment_equals_empty_environment(isa):
    robot = load("panda")
    Q = random_configs(robot, np.random.default_rng(11), 40)
    empty = simdplan.Environment()
    a = robot.is_valid_many(Q)
    np.testing.assert_array_equal(a, robot.is_valid_many(Q, empty))
    np.testing.assert_array_equal(a, [robot.is_valid(q) for q in Q])
    np.testing.assert_array_equal(a, [robot.is_valid(q, empty) for q in Q])


def test_self_collision_only(isa):
    """No obstacles: only limits and self-collision decide; both verdicts occur."""
    robot = load("panda")
    rng = np.random.default_rng(12)
    Q = rng.uniform(robot.lower, robot.upper, size=(120, robot.dof))
    many, checked = compare(robot, Q, [], 0.0)
    assert 0 < many.sum() < len(Q) and checked > 110


def test_limits_inclusive_and_out_of_limit_rows(isa):
    robot = load("panda")
    home = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
    assert ref.is_valid(robot, home, []) and robot.is_valid(home)
    rows = [home]
    expected = [True]
    for j in range(robot.dof):
        for value, ok in ((robot.lower[j], None), (robot.upper[j], None),
                          (np.nextafter(robot.upper[j], np.inf), False), (np.nextafter(robot.lower[j], -np.inf), False),
                          (robot.upper[j] + 1.0, False), (robot.lower[j] - 1.0, False)):
            q = home.copy()
            q[j] = value
            rows.append(q)
            expected.append(ref.is_valid(robot, q, []) if ok is None else ok)
    Q = np.array(rows)
    np.testing.assert_array_equal(robot.is_valid_many(Q), expected)
    np.testing.assert_array_equal([robot.is_valid(q) for q in Q], expected)
    for q, ok in zip(Q, expected):
        why = robot.why_invalid(q)
        assert (not why) == ok
        if not ok and not ref.check(robot, q, []).within_limits:
            assert any(v.kind == "joint_limit" for v in why)


def test_large_batch(isa):
    """Batches past the core's conversion block (256 rows) and GIL-release threshold: every row of
    is_valid_many equals is_valid, and a sample of rows equals the reference."""
    robot = load("panda")
    specs, padding, _, _ = seeded_scene("panda", 3)
    env, _ = ref.make_environment(specs)
    Q = random_configs(robot, np.random.default_rng(13), 601)
    many = robot.is_valid_many(Q, env, padding)
    np.testing.assert_array_equal(many, [robot.is_valid(q, env, padding) for q in Q])
    for i in range(0, 601, 40):
        rep = ref.check(robot, Q[i], specs, padding)
        if rep.margin > AMBIGUOUS or not rep.within_limits:
            assert many[i] == rep.valid, i


def test_is_valid_many_empty_batch(isa):
    robot = load("panda")
    out = robot.is_valid_many(np.zeros((0, robot.dof)), simdplan.Environment())
    assert out.shape == (0,) and out.dtype == bool


def test_self_collision_pairs_respect_srdf():
    """Checked pairs are links that have spheres, never an SRDF-disabled pair, never a link with itself."""
    import xml.etree.ElementTree as ET

    for name in ("panda", "ur5"):
        robot = load(name)
        _, srdf = simdplan.robots.builtin_paths(name)
        disabled = {frozenset((e.get("link1"), e.get("link2"))) for e in ET.parse(srdf).getroot().iter("disable_collisions")}
        with_spheres = set(robot.sphere_links)
        for a, b in robot.self_collision_pairs:
            assert a != b and a in with_spheres and b in with_spheres
            assert frozenset((a, b)) not in disabled, (a, b)
        assert len(set(map(frozenset, robot.self_collision_pairs))) == len(robot.self_collision_pairs)


@settings(max_examples=15)
@given(seed=st.integers(0, 2 ** 32 - 1), resolution=st.sampled_from([4.0, 10.0, 32.0]))
def test_motion_valid_is_all_samples_valid(isa, seed, resolution):
    """Discrete Link(q0, q1): valid iff every sample q0 + i/n (q1 - q0), i = 0..n, is valid, with
    n = max(1, ceil(|q1 - q0| * resolution)) (samples checked with the reference)."""
    robot = load("panda")
    rng = np.random.default_rng(seed)
    specs = [random_obstacle(rng) for _ in range(4)]
    env, _ = ref.make_environment(specs)
    q0, q1 = rng.uniform(robot.lower, robot.upper, size=(2, robot.dof))
    q1 = q0 + (q1 - q0) * rng.uniform(0.02, 0.3)
    n = robot.motion_samples(q0, q1, resolution)
    assert n == max(1, int(np.ceil(np.linalg.norm(q1 - q0) * resolution)))
    S = q0 + np.arange(n + 1)[:, None] / n * (q1 - q0)
    expected, ambiguous = True, False
    for q in S:  # one clearly invalid sample decides; otherwise every sample must be clear
        rep = ref.check(robot, q, specs)
        if rep.margin <= AMBIGUOUS:
            ambiguous = True
        elif not rep.valid:
            expected = False
            break
    if expected and ambiguous:
        return
    event(f"motion valid {expected}")
    assert robot.is_motion_valid(q0, q1, env, resolution=resolution) == expected
    assert bool(np.all(robot.is_valid_many(S, env))) == expected


@pytest.mark.parametrize("n_obstacles", [15, 16, 17, 33, 47])
def test_many_small_obstacles_cross_simd_chunks(isa, n_obstacles):
    """More obstacles than one vector of AABBs holds (the broad phase tests W at a time and pads the
    last vector with empty boxes): every obstacle must still be seen, in both kernels."""
    robot = load("panda")
    rng = np.random.default_rng(1000 + n_obstacles)
    specs = []
    for i in range(n_obstacles):
        centre = rng.uniform([-0.8, -0.8, 0.0], [0.8, 0.8, 1.2])
        if i % 2:
            specs.append({"kind": "sphere", "center": tuple(centre), "radius": float(rng.uniform(0.02, 0.06))})
        else:
            specs.append({"kind": "box", "position": tuple(centre), "half_extents": tuple(rng.uniform(0.02, 0.05, 3))})
    Q = random_configs(robot, rng, 64)
    many, checked = compare(robot, Q, specs, 0.0)
    assert checked > 50 and 0 < many.sum() < len(many)


@pytest.mark.parametrize("count", [300, 2100])
def test_many_obstacles_use_the_obstacle_tree(isa, count):
    """From 128 obstacles per float lane (scalar 128, AVX2 1024, AVX-512 2048) the broad phase walks
    an AABB tree (planes stay outside it): verdicts, clearances and reports must equal the reference
    just as with the linear scan. 300 obstacles: the scalar build walks the tree, the others scan."""
    robot = load("panda")
    rng = np.random.default_rng(21)
    pos = rng.uniform([-1.5, -1.5, 0], [1.5, 1.5, 1.6], size=(6000, 3))
    pos = pos[np.hypot(pos[:, 0], pos[:, 1]) > 0.3][:count]
    specs = [{"kind": "box", "position": p, "euler": rng.uniform(-3, 3, 3), "half_extents": rng.uniform(0.002, 0.006, 3) * (2100 / count) ** 0.5}
             for p in pos]
    specs += [{"kind": "sphere", "center": p, "radius": 0.01} for p in pos[:40] + 0.05]
    specs.append({"kind": "plane", "normal": [0, 0, 1], "offset": -0.2})
    env, ids = ref.make_environment(specs)
    Q = random_configs(robot, rng, 60, p_out=0.0)
    S = robot.fk_many(Q).astype(np.float64)
    gap = np.full(S.shape[:2], np.inf)
    for s in specs:
        gap = np.minimum(gap, ref.distance(S[:, :, :3], s) - S[:, :, 3])
    want_env = (gap >= 0).all(axis=1)
    clear = (np.abs(gap) > AMBIGUOUS).all(axis=1)
    want = want_env & robot.is_valid_many(Q)
    got = robot.is_valid_many(Q, env)
    assert clear.sum() > 40 and 0 < want[clear].sum() < clear.sum()
    np.testing.assert_array_equal(got[clear], want[clear])
    np.testing.assert_array_equal([robot.is_valid(q, env) for q in Q], got)
    np.testing.assert_allclose(robot.clearance_many(Q, env, self_collision=False), gap.min(axis=1), atol=3e-5)
    for i in np.flatnonzero(clear & ~want_env)[:5]:
        hit = {(v.sphere, ids.index(v.obstacle_id)) for v in robot.why_invalid(Q[i], env) if v.kind == "environment"}
        assert {(int(k), o) for k in np.flatnonzero(gap[i] < 0) for o in range(len(specs))
                if ref.distance(S[i, k, :3], specs[o]) - S[i, k, 3] < 0} == hit
