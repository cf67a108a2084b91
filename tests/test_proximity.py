"""Proximity: clearances, distance reports, motion bounds and certified Link.

References: tests/reference.py (float64 FK from yourdfpy, exact signed distances, brute force over
every obstacle and sphere pair). The kernels work in float32, so clearances agree to CLEAR_TOL.
Certified Link is checked for the one thing it promises: an edge it calls free has no colliding
configuration, which dense sampling (far finer than any planner's) must confirm; and on the
"thin obstacles" set, plates thinner than the discrete step placed across edges, discrete Link
misses collisions that certified Link never does.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import reference as ref
import simdplan
from simdplan import Environment
from simdplan import robots as sp_robots
from test_motion import panda_scene, slider_robot

CLEAR_TOL = 3e-5  # m: float32 FK and distances against float64 (the certificate's margin is 2e-5 per end)


@pytest.fixture(scope="module")
def panda():
    return sp_robots.load("panda")


def scene_specs(rng) -> list[dict]:
    """Every obstacle kind, placed around the panda's workspace, plus a small point cloud."""
    s = math.sqrt(0.5)
    specs = [
        {"kind": "box", "position": [0.55, 0.0, 0.35], "quat": [0, 0, 0, 1], "half_extents": [0.12, 0.3, 0.02]},
        {"kind": "box", "position": [0.0, 0.55, 0.45], "euler": [0.0, 0.0, 0.4], "half_extents": [0.15, 0.05, 0.25]},
        {"kind": "cylinder", "position": [-0.45, -0.3, 0.5], "quat": [0, 0, 0, 1], "radius": 0.08, "length": 0.8},
        {"kind": "cylinder", "position": [0.35, -0.45, 0.6], "quat": [s, 0, 0, s], "radius": 0.05, "length": 0.5},
        {"kind": "capsule", "position": [0.5, 0.4, 0.2], "euler": [0.5, 0.0, 0.0], "radius": 0.04, "length": 0.3},
        {"kind": "sphere", "center": [-0.3, 0.35, 0.8], "radius": 0.1},
        {"kind": "plane", "normal": [0.0, 0.0, 1.0], "offset": -0.05},
        {"kind": "pointcloud", "points": rng.uniform([-0.6, -0.6, 0.9], [0.6, 0.6, 1.0], size=(300, 3)),
         "point_radius": 0.005},
    ]
    return specs


def reference_clearance(robot, q, specs, padding=0.0) -> tuple[float, float]:
    """(environment clearance, self clearance), float64 reference."""
    sph = ref.reference_fk(robot, q)
    c, r = sph[:, :3], sph[:, 3] + padding
    env = min((float(np.min(ref.distance(c, spec) - r)) for spec in specs), default=math.inf)
    runs = {name: (b, e) for name, b, e in ref.sphere_order(robot)}
    self_d = math.inf
    for la, lb in robot.self_collision_pairs:
        (ba, ea), (bb, eb) = runs[la], runs[lb]
        d = np.linalg.norm(c[ba:ea][:, None] - c[bb:eb][None], axis=-1) - (r[ba:ea][:, None] + r[bb:eb][None])
        self_d = min(self_d, float(d.min()))
    return env, self_d


def random_configs(robot, rng, n):
    return rng.uniform(robot.lower, robot.upper, size=(n, robot.dof))


# ----------------------------------------------------------------------------- clearance


@pytest.mark.parametrize("padding", [0.0, 0.004])
def test_clearance_matches_reference(isa, panda, padding):
    rng = np.random.default_rng(1)
    specs = scene_specs(rng)
    env, _ = ref.make_environment(specs)
    Q = random_configs(panda, rng, 25)
    env_many = panda.clearance_many(Q, env, padding, self_collision=False)
    both_many = panda.clearance_many(Q, env, padding)
    for q, e_many, b_many in zip(Q, env_many, both_many):
        e_ref, s_ref = reference_clearance(panda, q, specs, padding)
        assert abs(e_many - e_ref) < CLEAR_TOL, (isa, e_many, e_ref)
        assert abs(b_many - min(e_ref, s_ref)) < CLEAR_TOL, (isa, b_many, e_ref, s_ref)
        assert panda.clearance(q, env, padding) == pytest.approx(b_many, abs=1e-7)
        # the sign agrees with the validity check wherever the case is not a float32 toss-up
        if abs(b_many) > CLEAR_TOL and np.all((q >= panda.lower) & (q <= panda.upper)):
            assert (b_many > 0) == panda.is_valid(q, env, padding)


@settings(max_examples=60)
@given(kind=st.sampled_from(["sphere", "capsule", "cylinder", "box", "plane", "pointcloud"]),
       seed=st.integers(0, 2**31 - 1))
def test_clearance_single_obstacle_property(isa, panda, kind, seed):
    rng = np.random.default_rng(seed)
    q = random_configs(panda, rng, 1)[0]
    # an obstacle near a random sphere of the robot, so clearances straddle zero
    centre = panda.fk(q)[rng.integers(panda.n_spheres), :3].astype(float) + rng.normal(scale=0.08, size=3)
    quat = rng.normal(size=4)
    quat /= np.linalg.norm(quat)
    spec = {"sphere": {"kind": "sphere", "center": centre, "radius": rng.uniform(0.01, 0.2)},
            "capsule": {"kind": "capsule", "position": centre, "quat": quat, "radius": rng.uniform(0.01, 0.1),
                        "length": rng.uniform(0.0, 0.4)},
            "cylinder": {"kind": "cylinder", "position": centre, "quat": quat, "radius": rng.uniform(0.01, 0.1),
                         "length": rng.uniform(0.01, 0.4)},
            "box": {"kind": "box", "position": centre, "quat": quat, "half_extents": rng.uniform(0.005, 0.15, 3)},
            "plane": {"kind": "plane", "normal": quat[:3], "offset": float(quat[:3] @ centre)},
            "pointcloud": {"kind": "pointcloud", "points": centre + rng.normal(scale=0.1, size=(50, 3)),
                           "point_radius": rng.uniform(0.0, 0.01)}}[kind]
    env, _ = ref.make_environment([spec])
    got = panda.clearance(q, env, self_collision=False)
    want, _ = reference_clearance(panda, q, [spec])
    assert abs(got - want) < CLEAR_TOL, (kind, got, want)


def test_clearance_without_obstacles_is_self_or_inf(panda):
    q = np.zeros(7)
    assert panda.clearance(q, None, self_collision=False) == math.inf
    _, s_ref = reference_clearance(panda, q, [])
    assert panda.clearance(q) == pytest.approx(s_ref, abs=CLEAR_TOL)


def test_distance_report_witnesses(isa, panda):
    rng = np.random.default_rng(7)
    specs = scene_specs(rng)
    env, ids = ref.make_environment(specs)
    by_id = dict(zip(ids, specs))
    for q in random_configs(panda, rng, 8):
        rep = panda.distance_report(q, env)
        assert rep.clearance == pytest.approx(panda.clearance(q, env), abs=CLEAR_TOL)
        world = ref.reference_fk(panda, q)
        for link, p in rep.environment.items():
            assert p.link == link and p.other_link is None
            spec = by_id[p.obstacle_id]
            c, r = world[p.sphere, :3], world[p.sphere, 3]
            # reference: this link's smallest clearance over every obstacle
            mask = np.array([lk == link for lk in panda.sphere_links])
            want = min(float(np.min(ref.distance(world[mask, :3], s) - world[mask, 3])) for s in specs)
            assert p.clearance == pytest.approx(want, abs=CLEAR_TOL)
            assert np.linalg.norm(p.on_robot - c) == pytest.approx(r, abs=1e-5)
            if spec["kind"] != "pointcloud":  # the witness lies on the obstacle's surface
                assert abs(float(ref.distance(p.on_other, spec))) < 1e-5
            else:  # on the surface of the nearest point's ball
                assert abs(float(ref.distance(p.on_other, spec))) < 1e-5
            if p.clearance > 1e-4:  # apart: the witnesses are the clearance apart
                assert np.linalg.norm(p.on_other - p.on_robot) == pytest.approx(p.clearance, abs=CLEAR_TOL)
        for link, p in rep.self_collision.items():
            assert p.link == link and p.other_link is not None
            assert np.linalg.norm(p.on_other - p.on_robot) == pytest.approx(abs(p.clearance), abs=CLEAR_TOL)


# ----------------------------------------------------------------------------- motion bound


def _path_lengths(robot, q0, q1, n=600):
    """Length of the polyline through n + 1 FK samples of each sphere centre: a lower bound of the
    length of the path the centre really traces."""
    t = np.linspace(0.0, 1.0, n + 1)[:, None]
    centres = np.stack([ref.reference_fk(robot, q)[:, :3] for q in q0 + t * (q1 - q0)]) if n <= 60 else \
        robot.fk_many(q0 + t * (q1 - q0))[:, :, :3].astype(np.float64)
    return np.linalg.norm(np.diff(centres, axis=0), axis=-1).sum(axis=0)


@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_motion_bound_is_conservative(name):
    robot = sp_robots.load(name)
    rng = np.random.default_rng(3)
    for k in range(30):
        q0, q1 = random_configs(robot, rng, 2)
        q1 = q0 + (q1 - q0) * rng.uniform(0.05, 1.0)
        bound = robot.motion_bound(q0, q1)
        assert bound.shape == (robot.n_spheres,) and np.all(bound >= 0)
        travelled = _path_lengths(robot, q0, q1)
        assert np.all(travelled <= bound + 1e-5), (travelled - bound).max()
        if k % 3 == 0:  # float64 reference FK on a coarser polyline too (independent of the kernels)
            assert np.all(_path_lengths(robot, q0, q1, n=40) <= bound + 1e-9)


def test_motion_bound_prismatic_and_still_joints():
    robot = slider_robot(radius=0.01)
    assert robot.motion_bound([0.0], [0.7]) == pytest.approx([0.7], rel=1e-5)  # float32 table, rounded up
    panda = sp_robots.load("panda")
    q = np.zeros(7)
    assert np.all(panda.motion_bound(q, q) == 0)
    q1 = q.copy()
    q1[6] = 0.5  # the last joint moves only the hand and fingers
    moved = panda.motion_bound(q, q1) > 0
    links = np.array(panda.sphere_links)
    assert set(links[moved]) <= {"panda_link7", "panda_hand", "panda_leftfinger", "panda_rightfinger"}


@pytest.mark.parametrize("name", ["panda", "ur5", "mobile_manipulator", "dual_arm"])
def test_chord_bound_is_conservative(name):
    """The certificate's second test rests on this: on a stretch t0 .. t1 of an edge, every sphere
    centre c of a group stays within out[g] of the sum |c(t) - c(t0)| + |c(t) - c(t1)| (so a
    clearance d, 1-Lipschitz in c, cannot dip below (d(t0) + d(t1) - out[g]) / 2). Dense FK along
    the stretch must never exceed it, on arms, a prismatic mobile base and a two-arm torso."""
    from simdplan.bench import robots as bench_robots
    robot = bench_robots.load(name)
    group = np.asarray(robot._program.sphere_group)
    rng = np.random.default_rng(11)
    tighter = []
    for k in range(24):
        q0, q1 = random_configs(robot, rng, 2)
        q1 = q0 + (q1 - q0) * rng.uniform(0.05, 1.0)
        dt = [1.0, 0.3, 0.05, 0.004][k % 4]
        t0 = rng.uniform(0.0, 1.0 - dt)
        t1 = t0 + dt
        bound = robot.core.chord_bounds(q0, q1, t0, t1)
        assert bound.shape == (int(group.max()) + 1,) and np.all(bound >= 0)
        t = np.linspace(t0, t1, 201)[:, None]
        c = robot.fk_many(q0 + t * (q1 - q0))[:, :, :3].astype(np.float64)
        spread = (np.linalg.norm(c - c[0], axis=-1) + np.linalg.norm(c - c[-1], axis=-1)).max(axis=0)
        assert np.all(spread <= bound[group] + 1e-5), (spread - bound[group]).max()
        # and it pays: on short stretches it is below the constant bound the first test uses
        constant = dt * robot.motion_bound(q0, q1)
        moving = constant > 1e-6
        if dt <= 0.05:
            tighter.extend(bound[group][moving] < 0.8 * constant[moving])
    # (a sphere carried straight by a prismatic joint alone gets no tighter: its chord is its path)
    assert np.mean(tighter) > 0.25, np.mean(tighter)


# ----------------------------------------------------------------------------- certified Link


def _dense_free(robot, env, q0, q1, n=3000, padding=0.0):
    t = np.linspace(0.0, 1.0, n + 1)[:, None]
    return bool(robot.is_valid_many(q0 + t * (q1 - q0), env, padding).all())


def test_certified_never_calls_a_colliding_edge_free(isa, panda):
    from test_motion import random_edges

    rng = np.random.default_rng(11)
    env, _ = ref.make_environment(scene_specs(rng))
    seen = {"free": 0, "collision": 0, "undecided": 0}
    for q0, q1 in random_edges(panda, env, rng, 120):
        cert = panda.certify_motion(q0, q1, env)
        seen[cert.status] += 1
        assert cert.samples >= 0
        if cert.free:
            assert _dense_free(panda, env, q0, q1), (isa, q0, q1)
            assert panda.is_motion_valid(q0, q1, env)  # certified free implies every discrete sample free
        elif cert.status == "collision" and cert.samples:
            qt = q0 + cert.t * (q1 - q0)
            assert not panda.is_valid(qt, env)
    assert seen["free"] > 20 and seen["collision"] > 20, seen


def test_certified_exact_boundary():
    # slider sphere r = 0.01 moving along x through y = 0; an obstacle sphere touching the path
    # exactly at x = 0.5 (touching is free, but no finite clearance can certify it) is never
    # certified free; 1 mm away it is certified.
    robot = slider_robot(radius=0.01)
    touching = Environment()
    touching.add_sphere([0.5, 0.03, 0.0], 0.02)
    cert = robot.certify_motion([0.0], [1.0], touching)
    assert cert.status == "undecided" and 0.4 < cert.t < 0.6
    assert robot.is_motion_valid([0.0], [1.0], touching)  # discrete: touching samples are free
    near = Environment()
    near.add_sphere([0.5, 0.031, 0.0], 0.02)
    assert robot.certify_motion([0.0], [1.0], near).free
    inside = Environment()
    inside.add_sphere([0.5, 0.029, 0.0], 0.02)
    assert robot.certify_motion([0.0], [1.0], inside).status in ("collision", "undecided")
    assert not robot.is_motion_valid([0.0], [1.0], inside, mode="certified")


def thin_plate_cases(robot, rng, count, thickness=0.0005):
    """(q0, q1, env) edges where a plate `thickness` thick sits across the path of one sphere between
    two discrete samples, touching no sample: discrete Link at the robot's resolution misses it."""
    cases = []
    lo, hi = robot.lower, robot.upper
    while len(cases) < count:
        q0, q1 = rng.uniform(lo, hi, size=(2, robot.dof))
        n = robot.motion_samples(q0, q1)
        k = int(rng.integers(n))
        ta, tm, tb = k / n, (k + 0.5) / n, (k + 1) / n
        fa, fm, fb = (robot.fk(q0 + t * (q1 - q0)).astype(float) for t in (ta, tm, tb))
        step = np.linalg.norm(fb[:, :3] - fa[:, :3], axis=1)
        s = int(np.argmax(step / 2 - fm[:, 3]))
        if step[s] / 2 - fm[s, 3] < 4 * thickness:
            continue
        normal = (fb[s, :3] - fa[s, :3]) / step[s]
        # a small square plate through the sphere centre at mid-step, facing its motion
        z = normal
        x = np.cross(z, [1.0, 0, 0] if abs(z[0]) < 0.9 else [0, 1.0, 0])
        x /= np.linalg.norm(x)
        rot = np.stack([x, np.cross(z, x), z], axis=1)
        env = Environment()
        env.add_box(fm[s, :3], _quat(rot), [0.4 * fm[s, 3], 0.4 * fm[s, 3], thickness / 2], name="plate")
        S = q0 + (np.arange(n + 1) / n)[:, None] * (q1 - q0)
        if not robot.is_valid_many(S, env).all():
            continue  # another sphere touches it at a sample: not a thin-obstacle case
        cases.append((q0, q1, env))
    return cases


def _quat(R):
    from scipy.spatial.transform import Rotation

    return Rotation.from_matrix(R).as_quat()


def test_thin_obstacles_discrete_misses_certified_does_not(isa, panda):
    rng = np.random.default_rng(5)
    cases = thin_plate_cases(panda, rng, 25)
    for q0, q1, env in cases:
        assert panda.is_motion_valid(q0, q1, env)  # discrete steps over the plate
        assert not _dense_free(panda, env, q0, q1, n=20000)  # yet the edge collides
        assert not panda.is_motion_valid(q0, q1, env, mode="certified")


def test_certified_with_point_clouds(isa, panda):
    rng = np.random.default_rng(9)
    env = Environment()
    env.add_pointcloud(rng.uniform([0.2, -0.4, 0.2], [0.6, 0.4, 0.25], size=(400, 3)), point_radius=0.002)
    starts = random_configs(panda, rng, 60)
    free = 0
    for q0, q1 in zip(starts[::2], starts[1::2]):
        cert = panda.certify_motion(q0, q0 + 0.5 * (q1 - q0), env)
        if cert.free:
            free += 1
            assert _dense_free(panda, env, q0, q0 + 0.5 * (q1 - q0))
    assert free > 5


def thin_self_contacts(robot, rng, count, depth=2e-6, tries=20000):
    """(q0, q1, padding) edges whose only collision is a self-contact `depth` deep between samples:
    the padding is set just past half the edge's smallest self clearance (dense, exact), so both
    ends stay free while the tightest configuration between them collides. Paddings stay below
    list_max_padding where the robot's clearances allow, so certified sphere-pair lists are in use."""
    cases = []
    t = np.linspace(0.0, 1.0, 1001)[:, None]
    for _ in range(tries):
        q0, q1 = random_configs(robot, rng, 2)
        q1 = q0 + (q1 - q0) * rng.uniform(0.05, 0.5)
        Q = q0 + t * (q1 - q0)
        gap = robot.clearance_many(Q, Environment())
        k = int(np.argmin(gap))
        padding = gap[k] / 2 + depth / 2
        if k in (0, len(t) - 1) or not 0 < padding < 0.02 or min(gap[0], gap[-1]) - 2 * padding < 1e-4:
            continue  # touching at an end, already touching, too far apart, or an end as close
        cases.append((q0, q1, float(padding)))
        if len(cases) == count:
            break
    return cases


@pytest.mark.parametrize("name", ["ur5", "panda", "dual_arm"])
def test_certified_never_calls_a_self_contact_free(isa, name):
    # Self pairs are certified with the relative motion of their certified sphere pairs only
    # (RobotView::pair_list_reach); an edge that grazes itself between samples must still fail.
    from simdplan.bench import robots as bench_robots

    robot = bench_robots.load(name)
    rng = np.random.default_rng(17)
    cases = thin_self_contacts(robot, rng, 12)
    assert len(cases) == 12
    for q0, q1, padding in cases:
        cert = robot.certify_motion(q0, q1, padding=padding)
        assert not cert.free, (name, isa, q0, q1, padding)
    if name == "ur5":  # its closest pairs are a few millimetres apart: paddings where the lists count
        assert all(padding < 0.0049 for _, _, padding in cases)


def swinger(gap: float, base_x: float = 0.5, arm_x: float = 0.5):
    """2 dof: an arm sphere arm_x from the swing axis passes a base sphere at (base_x, 0, 0) at
    swing = 0 with surface gap `gap` (negative: overlap), the pair two joints apart (a certified
    sphere-pair list). With base_x small the base sphere is near the swing axis, where the swing
    barely changes the pair's distance (RobotModel::listed_reach)."""
    from simdplan.robots.builder import RobotBuilder

    radius = 0.05
    height = math.sqrt((2 * radius + gap) ** 2 - (arm_x - base_x) ** 2)
    b = RobotBuilder("swinger")
    b.link("base", [[base_x, 0.0, 0.0, radius]]).link("hub").link("arm", [[arm_x, 0.0, 0.0, radius]])
    b.joint("swing", "revolute", "base", "hub", limits=(-2.0, 2.0))
    b.joint("tilt", "revolute", "hub", "arm", xyz=(0, 0, height), axis=(1, 0, 0), limits=(-0.5, 0.5))
    return b.build()


@pytest.mark.parametrize("gap", [-1e-5, -1e-6, 1e-3])
@pytest.mark.parametrize("base_x,arm_x", [(0.5, 0.5), (0.02, 0.1)])
def test_certified_self_contact_between_samples(isa, gap, base_x, arm_x):
    robot = swinger(gap, base_x, arm_x)
    assert robot.self_collision_pairs == [("base", "arm")]
    q0, q1 = [-0.9, 0.0], [1.1, 0.0]  # the spheres meet at t = 0.45, between every sample grid
    if base_x == arm_x:
        assert robot.is_motion_valid(q0, q1)  # discrete Link steps over the contact
    cert = robot.certify_motion(q0, q1)
    assert cert.free == (gap > 0), cert


@pytest.mark.parametrize("kind", ["pointcloud", "sphere"])
def test_certified_keeps_a_collision_behind_a_lower_bound(isa, kind):
    # A link of three spheres: the first (at x = 0.3) passes through an obstacle at y = 0, the second
    # sits at the bound sphere's centre, where the bound alone puts it 0.29 m clear. The collision the
    # first finds must survive the second's lower bound (distance.hh, kTakeLowerFraction).
    from simdplan.robots.builder import RobotBuilder

    b = RobotBuilder("bar")
    b.link("base").link("bar", [[0.3, 0.0, 0.0, 0.05], [0.0, 0.0, 0.0, 0.01], [-0.3, 0.0, 0.0, 0.05]])
    b.joint("y", "prismatic", "base", "bar", axis=(0, 1, 0), limits=(-1.0, 1.0))
    robot = b.build()
    env = Environment()
    if kind == "pointcloud":
        env.add_pointcloud([[0.3, 0.0, 0.04]], point_radius=0.0)
    else:
        env.add_sphere([0.3, 0.0, 0.04], 0.001)
    assert not robot.is_valid([0.0], env) and robot.is_valid([-0.5], env) and robot.is_valid([0.5], env)
    assert robot.certify_motion([-0.5], [0.5], env).status == "collision"
    assert robot.certify_motion([0.0], [0.5], env).status == "collision"


def test_certified_never_calls_a_colliding_edge_free_in_a_cloud(isa, panda):
    # Certificates may take a sphere's clearance from its group's bound sphere (a lower bound) instead
    # of a tree search; a collision another sphere of the group found must never be lost to that.
    rng = np.random.default_rng(23)
    env = Environment()
    g = np.linspace(-0.25, 0.25, 40)
    x, y = np.meshgrid(g, g)  # a dense square patch in front of the robot
    env.add_pointcloud(np.column_stack([0.5 + x.ravel(), y.ravel(), np.full(x.size, 0.4)]), point_radius=0.004)
    seen = {"free": 0, "collision": 0, "undecided": 0}
    while seen["free"] + seen["collision"] < 120:
        q0, q1 = random_configs(panda, rng, 2)
        if not (panda.is_valid(q0, env) and panda.is_valid(q1, env)):
            continue
        cert = panda.certify_motion(q0, q1, env)
        seen[cert.status] += 1
        if cert.free:
            assert _dense_free(panda, env, q0, q1, n=1500), (isa, q0, q1)
        elif cert.status == "collision":
            assert not panda.is_valid(q0 + cert.t * (q1 - q0), env)
    assert seen["free"] > 10 and seen["collision"] > 20, seen


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), spacing=st.sampled_from([0.004, 0.012, 0.03]),
       point_radius=st.sampled_from([0.0, 0.003, 0.02]))
def test_certified_is_sound_where_the_distance_floor_settles_clearances(isa, panda, seed, spacing, point_radius):
    # A cloud's distance floor grid lets certificates take a sphere's clearance from one look-up
    # (a lower bound) instead of a search. Random patches, dense to sparse, thin points to fat ones:
    # an edge proven free must be free under a dense check, and a collision found must be real.
    rng = np.random.default_rng(seed)
    side = rng.uniform(0.1, 0.5)
    g = np.arange(-side / 2, side / 2, spacing)
    x, y = np.meshgrid(g, g)
    patch = np.column_stack([x.ravel(), y.ravel(), np.zeros(x.size)])
    from scipy.spatial.transform import Rotation

    tilt = Rotation.from_rotvec(rng.normal(scale=0.7, size=3)).as_matrix()
    env = Environment()
    env.add_pointcloud(patch @ tilt.T + rng.uniform([0.3, -0.4, 0.1], [0.7, 0.4, 0.8]), point_radius=point_radius)
    decided = valid = 0
    for _ in range(40):
        q0, q1 = random_configs(panda, rng, 2)
        if not (panda.is_valid(q0, env) and panda.is_valid(q1, env)):
            continue
        valid += 1
        q1 = q0 + 0.4 * (q1 - q0)  # mostly short edges, as planners check
        cert = panda.certify_motion(q0, q1, env)
        if cert.free:
            assert _dense_free(panda, env, q0, q1, n=1500), (isa, seed, q0, q1)
        elif cert.status == "collision":
            assert not panda.is_valid(q0 + cert.t * (q1 - q0), env)
        decided += cert.status != "undecided"
    # a patch through the robot's fixed base leaves no valid configuration: nothing to check there
    assume(valid > 0)
    assert decided > 0


# ----------------------------------------------------------------------------- planners


@pytest.mark.parametrize("planner,example", [("rrtc", "panda_bookshelf"), ("prm", "panda_bookshelf"),
                                             ("rrt", "panda_table")])
def test_planners_with_certified_link(planner, example):
    scene = simdplan.scenes.load(simdplan.scenes.example(example))
    res = simdplan.plan(scene.robot, scene.env, scene.start, scene.goals, planner=planner, link="certified",
                        seed=2, time_limit=0)
    assert res.success
    proven = 0
    for a, b in zip(res.path[:-1], res.path[1:]):
        # a shortcut's ends are pieces of edges proven earlier (Checker::piece): proven with them, though
        # a certificate of the piece alone, on its own sample grid, may find it too close to call
        status = scene.robot.certify_motion(a, b, scene.env).status
        assert status in ("free", "undecided")
        proven += status == "free"
        assert _dense_free(scene.robot, scene.env, a, b, n=400)
    assert proven >= (len(res.path) - 1) / 2


@pytest.mark.parametrize("name", ["panda", "ur5", "dual_arm"])
def test_certified_simplified_paths_are_free_everywhere(name):
    # simplification keeps shortcuts whose ends are pieces of proven edges without a new certificate
    # (Checker::piece); the paths must still be free at any resolution
    from simdplan.bench import robots as bench_robots

    robot = bench_robots.load(name)
    for family in ("shelf", "box"):
        for scene in simdplan.scenes.generate(robot, family, 2, seed=3):
            res = simdplan.plan(robot, scene.env, scene.start, scene.goals, link="certified", seed=4, time_limit=0)
            assert res.success
            for a, b in zip(res.path[:-1], res.path[1:]):
                assert _dense_free(robot, scene.env, a, b, n=2000)


def end_threshold(robot) -> float:
    """Clearance (m) below which certified Link refuses an end: edges out of it would need stretches
    shorter than the floor (planning.cc, unprovable_ends)."""
    return simdplan._core.certify_margin + simdplan._core.min_step_floor * simdplan._core.certify_end_speed(robot.core)


def test_certified_plan_refuses_ends_within_the_margin_at_once():
    # No stretch out of a configuration within kCertifyMargin of contact can be proven, so a certified
    # plan from such a start, or to goals that are all such, is refused at once and says why.
    robot = slider_robot(radius=0.01)
    env = Environment()
    env.add_sphere([0.5, 0.03 + 5e-6, 0.0], 0.02)  # the slider at x = 0.5 is 5 um from it
    assert 0 < robot.clearance([0.5], env) < simdplan._core.certify_margin
    assert simdplan.plan(robot, env, [0.0], [[0.5]], link="discrete", time_limit=0).success  # discrete: fine
    default = simdplan.plan(robot, env, [0.0], [[0.5]], time_limit=0)  # the default Link is certified
    assert not default.success and default.stats["link"] == "certified" and default.stats["unprovable"] == "goals"
    for start, goals, what, which in (([0.0], [[0.5]], "into any goal", "goals"),
                                      ([0.5], [[-0.5]], "out of the start", "start")):
        res = simdplan.plan(robot, env, start, goals, link="certified", time_limit=0)
        assert not res.success and what in res.message and "0.0050 mm" in res.message, res.message
        assert res.stats["iterations"] == 0 and res.stats["unprovable"] == which
        many = simdplan.plan_many([(robot, env, start, goals)], link="certified", time_limit=0)[0]
        assert not many.success and many.message == res.message
    # just past the threshold (the margin plus how far the robot moves in the shortest stretch
    # certified Link tries), an end is not refused, and its edges are proven with shorter stretches
    threshold = end_threshold(robot)
    assert simdplan._core.certify_margin < threshold < 1.2 * simdplan._core.certify_margin
    for gap in (1.1, 1.5, 1.95, 2.5):
        near = Environment()
        near.add_sphere([0.5, 0.03 + gap * threshold, 0.0], 0.02)
        assert robot.clearance([0.5], near) > threshold
        for start, goals in (([0.0], [[0.5]]), ([0.5], [[-0.5]])):
            res = simdplan.plan(robot, near, start, goals, link="certified", time_limit=0, max_iterations=50)
            assert "unprovable" not in res.stats, (gap, start, res.message)
            assert res.success and res.stats["min_step"] < 1e-3 and res.stats["edges_undecided"] == 0, res.message
    # another goal with room: planned to that one
    res = simdplan.plan(robot, env, [0.0], [[0.5], [-0.5]], link="certified", time_limit=0)
    assert res.success and res.stats["goal_index"] == 1 and "unprovable" not in res.stats
    pytest.importorskip("ompl")
    res = simdplan.plan(robot, env, [0.0], [[0.5]], planner="ompl:RRTConnect", link="certified", time_limit=0.5)
    assert not res.success and "into any goal" in res.message and res.stats["iterations"] == 0
    assert res.stats["unprovable"] == "goals"


def xy_robot():
    """Two prismatic joints (x, y) carrying one 5 cm sphere."""
    b = sp_robots.RobotBuilder("xy")
    b.link("base")
    b.link("mid")
    b.link("tool", spheres=[[0, 0, 0, 0.05]])
    b.joint("x", "prismatic", "base", "mid", axis=(1, 0, 0), limits=(-1, 1))
    b.joint("y", "prismatic", "mid", "tool", axis=(0, 1, 0), limits=(-1, 1))
    return b.build()


@pytest.mark.parametrize("off", [1.5e-5, 2.5e-5, 3e-5, 4e-5, 1e-4])
def test_certified_ends_near_contact_are_planned_or_refused_at_once(off):
    # Between the margin and about 0.05 mm of contact, every edge out of the start was undecided at the
    # default min_step, and the planner spun until its time limit. Now such an end is planned with
    # stretches short enough to prove edges that do not head into the obstacle, or refused at once
    # (closer than end_threshold), naming the fix.
    robot = xy_robot()
    env = Environment()
    env.add_box([0.5, 0.0, 0.0], half_extents=[0.1, 0.1, 0.1])  # face at x = 0.4; the sphere touches at x = 0.35
    start, goal = np.array([0.35 - off, 0.0]), np.array([-0.5, 0.3])
    res = simdplan.plan(robot, env, start, goal, seed=1, time_limit=5.0)
    assert res.stats["stopped"] == "" and res.stats["iterations"] < 1000, res.message
    if robot.clearance(start, env) <= end_threshold(robot):
        assert not res.success and res.stats["unprovable"] == "start"
        assert 'link="discrete"' in res.message and "shortest stretch" in res.message, res.message
        return
    assert res.success and res.stats["min_step"] <= (off - simdplan._core.certify_margin) * 1.01, res.stats
    assert simdplan.check_path(robot, env, res.path, start, [goal]).ok
    # the same for the goal end, and for the reverse problem through plan_many
    back = simdplan.plan_many([(robot, env, goal, start)], seed=1, time_limit=5.0)[0]
    assert back.success and back.stats["stopped"] == "" and simdplan.check_path(robot, env, back.path, goal, [start]).ok


def test_a_pose_goal_plan_from_a_start_near_contact_does_not_spin():
    # the pose-goal rounds plan through the same checks: a start 0.03 mm from the table was planned
    # for 1,000,000 iterations and said "no path found"
    scene = simdplan.scenes.load(simdplan.scenes.example("panda_table"))
    robot, env = scene.robot, scene.env
    rng = np.random.default_rng(5)
    while True:
        a, b = rng.uniform(robot.lower, robot.upper, (2, robot.dof))
        if robot.is_valid(a, env) and not robot.is_valid(b, env):
            break
    lo, hi = 0.0, 1.0  # bisect along a -> b to 0.03 mm of contact
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if robot.clearance(a + mid * (b - a), env) > 3e-5 else (lo, mid)
    start = a + lo * (b - a)
    assert 2.5e-5 < robot.clearance(start, env) < 3.1e-5
    pose = robot.link_poses(scene.goals[0])["panda_hand"]
    res = simdplan.plan(robot, env, start, goal_pose=pose, goal_link="panda_hand", seed=1, time_limit=5.0)
    assert res.success and res.stats["iterations"] < 10_000, res.message
    assert simdplan.check_path(robot, env, res.path, start, res.path[-1:]).ok


def test_a_certified_plan_that_fails_on_undecided_edges_says_so():
    # a give-up length far too long for this gap: the edges through it are undecided, and the message
    # says what to change
    robot = xy_robot()
    env = Environment()
    for y in (0.57, -0.57):  # a wall across the workspace with an 8 cm slot, closed to a 10 cm sphere
        env.add_box([0.0, y, 0.0], half_extents=[0.02, 0.53, 0.1])
    res = simdplan.plan(robot, env, [-0.5, 0.0], [0.5, 0.0], seed=1, max_iterations=200, min_step=0.5)
    assert not res.success and res.stats["edges_undecided"] > 0
    # (the give-up length used: 0.5, or less where an end is nearer the wall than 0.5 rad of motion)
    assert res.stats["min_step"] <= 0.5 and f"min_step {res.stats['min_step']:g}" in res.message
    assert "could not be proven free" in res.message and 'link="discrete"' in res.message, res.message
    discrete = simdplan.plan(robot, env, [-0.5, 0.0], [0.5, 0.0], seed=1, max_iterations=200, link="discrete")
    assert "min_step" not in discrete.stats and "proven" not in discrete.message


def test_results_say_which_link_and_count_the_certificates():
    scene = simdplan.scenes.load(simdplan.scenes.example("panda_cage"))

    def plan(**kw):
        return simdplan.plan(scene.robot, scene.env, scene.start, scene.goals, seed=3, time_limit=0, **kw)

    discrete = plan(link="discrete")
    assert discrete.stats["link"] == "discrete"
    assert discrete.stats["edges_proven"] == discrete.stats["certificate_samples"] == 0
    certified = plan(link="certified", simplify=False)
    st = certified.stats
    assert certified.success and st["link"] == "certified"
    assert st["edges_proven"] >= len(certified.path) - 1  # every edge of the path was proven
    # a certificate evaluates both ends of its edge at least; the discrete pre-filter adds samples
    assert 2 * st["edges_proven"] <= st["certificate_samples"] <= st["collision_checks"]
    coarse = plan(link="certified", min_step=0.2, max_iterations=3000)
    assert coarse.stats["edges_undecided"] > 0  # stretches of 0.2 rad that cannot be proven are refused
    with_simplify = plan(link="certified")
    assert with_simplify.stats["edges_proven"] > st["edges_proven"]  # the shortcuts' certificates count too


def test_bad_input(panda):
    env = panda_scene()
    q = np.zeros(7)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="min_step"):
            panda.certify_motion(q, q + 0.1, env, min_step=bad)
    with pytest.raises(ValueError, match="mode"):
        panda.is_motion_valid(q, q, env, mode="dense")
    with pytest.raises(ValueError, match="min_step"):
        panda.is_motion_valid(q, q, env, min_step=1e-3)
    with pytest.raises(ValueError, match="finite"):
        panda.clearance(np.full(7, np.nan), env)
    with pytest.raises(ValueError):
        panda.clearance_many(np.zeros((3, 6)), env)
    with pytest.raises(ValueError, match="padding"):
        panda.clearance(q, env, padding=-0.1)
    with pytest.raises(ValueError, match="link"):
        simdplan.plan(panda, env, q, q, link="exact")
    with pytest.raises(ValueError, match="min_step"):
        simdplan.plan(panda, env, q, q, link="certified", min_step=0)
    # out-of-limit ends: a collision with no samples, never free
    far = q.copy()
    far[0] = 10.0
    assert panda.certify_motion(q, far, env).status == "collision"


@settings(max_examples=40)
@given(seed=st.integers(0, 2**31 - 1))
def test_certified_property_three_link_arm(isa, seed):
    # a planar 3-link arm among random spheres: every edge certified free is free at 4000 samples
    # (far denser than any gap the robot's spheres could slip through), and free ends never
    # make an edge through an obstacle free
    from test_motion import three_dof_robot

    robot = three_dof_robot()
    rng = np.random.default_rng(seed)
    env = Environment()
    for _ in range(int(rng.integers(1, 6))):
        env.add_sphere(rng.uniform(-0.3, 0.3, 3) * [1, 1, 0.1], rng.uniform(0.002, 0.05))
    q0, q1 = rng.uniform(-3, 3, size=(2, 3))
    cert = robot.certify_motion(q0, q1, env, min_step=float(rng.choice([1e-4, 1e-3, 1e-2])))
    if cert.free:
        assert _dense_free(robot, env, q0, q1, n=4000)
    if not _dense_free(robot, env, q0, q1, n=4000):
        assert not cert.free
