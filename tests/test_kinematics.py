"""Forward kinematics of the built-in robots against yourdfpy + NumPy (tests/reference.py).

The C++ FK runs in float32 (joint values are converted to float32 first); the reference in
float64 from yourdfpy's own URDF model. Tolerance 1e-5 m on sphere centres and link origins,
1e-5 on rotation entries.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
import simdplan
from conftest import on_every_isa

ROBOTS = ["panda", "ur5"]
TOL = 1e-5


@pytest.fixture(scope="module", params=ROBOTS)
def robot(request):
    return simdplan.robots.load(request.param)


def _configs(robot, n, seed, widen=0.0):
    rng = np.random.default_rng(seed)
    lo, hi = robot.lower - widen, robot.upper + widen
    return rng.uniform(lo, hi, size=(n, robot.dof))


def _config_strategy(robot):
    return st.tuples(*[st.floats(float(lo), float(hi), allow_nan=False) for lo, hi in zip(robot.lower, robot.upper)])


# ----------------------------------------------------------------------------- the model itself


def test_joint_names_and_limits_match_urdf(robot):
    u = ref.urdf_of(robot)
    assert robot.joint_names == list(u.actuated_joint_names)
    lo, hi = ref.urdf_limits(robot)
    np.testing.assert_array_equal(robot.lower, lo)
    np.testing.assert_array_equal(robot.upper, hi)


def test_description_spheres_are_urdf_collisions_in_order(robot):
    """robot.description spheres = the URDF's <collision><sphere> elements, in document order
    (read here with ElementTree, independently of simdplan and yourdfpy)."""
    root = ET.parse(robot.description.urdf_path).getroot()
    seen = 0
    for link in root.iter("link"):
        rows = []
        for col in link.findall("collision"):
            sph = col.find("geometry/sphere")
            assert sph is not None, f"non-sphere collision in {link.get('name')}"
            org = col.find("origin")
            xyz = [float(v) for v in org.get("xyz", "0 0 0").split()] if org is not None else [0.0, 0.0, 0.0]
            rows.append([*xyz, float(sph.get("radius"))])
        got = robot.description.links[link.get("name")].spheres
        np.testing.assert_array_equal(np.asarray(got).reshape(-1, 4), np.asarray(rows).reshape(-1, 4))
        seen += len(rows)
    assert seen == robot.n_spheres


def test_sphere_order_assumption(robot):
    """fk rows: one contiguous run per link with spheres, the run holding that link's URDF spheres
    in URDF order (asserted structurally by reference.sphere_order, numerically by the FK tests;
    radii make the order visible too)."""
    runs = ref.sphere_order(robot)
    fk = robot.fk(np.zeros(robot.dof))
    for name, b, e in runs:
        np.testing.assert_array_equal(fk[b:e, 3], robot.description.links[name].spheres[:, 3].astype(np.float32))


# ----------------------------------------------------------------------------- FK vs reference


def test_fk_matches_reference_random(robot, isa):
    Q = _configs(robot, 60, seed=1)
    Q[0] = 0.0
    Q[1] = robot.lower
    Q[2] = robot.upper
    got = robot.fk_many(Q)
    assert got.dtype == np.float32 and got.shape == (len(Q), robot.n_spheres, 4)
    for q, g in zip(Q, got):
        want = ref.reference_fk(robot, q)
        np.testing.assert_allclose(g[:, :3], want[:, :3], rtol=0, atol=TOL, err_msg=f"q={q.tolist()} isa={isa}")
        np.testing.assert_array_equal(g[:, 3], want[:, 3].astype(np.float32))


def test_fk_outside_limits_matches_reference(robot, isa):
    """FK is geometry only: it does not care about limits (within +-1 rad past them here)."""
    Q = _configs(robot, 20, seed=2, widen=1.0)
    got = robot.fk_many(Q)
    for q, g in zip(Q, got):
        np.testing.assert_allclose(g[:, :3], ref.reference_fk(robot, q)[:, :3], rtol=0, atol=TOL)


@settings(max_examples=25)
@given(data=st.data())
def test_fk_property(robot, isa, data):
    q = np.array(data.draw(_config_strategy(robot), "q"))
    got = robot.fk(q)
    assert got.dtype == np.float32 and got.shape == (robot.n_spheres, 4)
    np.testing.assert_allclose(got[:, :3], ref.reference_fk(robot, q)[:, :3], rtol=0, atol=TOL)


def test_link_poses_match_yourdfpy(robot, isa):
    for q in _configs(robot, 15, seed=3):
        got = robot.link_poses(q)
        want = ref.reference_link_poses(robot, q)
        assert set(got) == set(want)
        for name, T in got.items():
            assert T.shape == (4, 4)
            np.testing.assert_allclose(T[:3, 3], want[name][:3, 3], rtol=0, atol=TOL, err_msg=name)
            np.testing.assert_allclose(T[:3, :3], want[name][:3, :3], rtol=0, atol=TOL, err_msg=name)
            np.testing.assert_array_equal(T[3], [0, 0, 0, 1])


def test_fk_spheres_are_link_poses_times_local_spheres(robot, isa):
    """Self-consistency of simdplan's two FK outputs (link frames and spheres)."""
    q = _configs(robot, 1, seed=4)[0]
    poses = robot.link_poses(q)
    fk = robot.fk(q)
    for name, b, e in ref.sphere_order(robot):
        local = robot.description.links[name].spheres
        T = poses[name]
        np.testing.assert_allclose(fk[b:e, :3], local[:, :3] @ T[:3, :3].T + T[:3, 3], rtol=0, atol=TOL)


# ----------------------------------------------------------------------------- batches


@pytest.mark.parametrize("n", [1, 7, 15, 17, 33])
def test_fk_many_equals_stacked_fk(robot, isa, n):
    """Batch sizes that are not multiples of the lane count (1, 8, 16): the tail lanes are right
    and every row equals the single-configuration FK."""
    Q = _configs(robot, n, seed=100 + n)
    many = robot.fk_many(Q)
    assert many.shape == (n, robot.n_spheres, 4) and many.dtype == np.float32
    stacked = np.stack([robot.fk(q) for q in Q])
    np.testing.assert_array_equal(many, stacked)
    for q, g in zip(Q[:4], many[:4]):
        np.testing.assert_allclose(g[:, :3], ref.reference_fk(robot, q)[:, :3], rtol=0, atol=TOL)


def test_fk_many_empty_batch(robot, isa):
    out = robot.fk_many(np.zeros((0, robot.dof)))
    assert out.shape == (0, robot.n_spheres, 4)


def test_fk_many_strided_input(robot, isa):
    """Non-contiguous (transposed, sliced) input arrays are read through their strides."""
    Q = _configs(robot, 34, seed=6)
    view = np.asfortranarray(Q)[::2]
    np.testing.assert_array_equal(robot.fk_many(view), robot.fk_many(np.ascontiguousarray(Q[::2])))
    col = np.asfortranarray(Q)[5]
    np.testing.assert_array_equal(robot.fk(col), robot.fk(Q[5].copy()))


def test_fk_same_across_isas(robot):
    """Every ISA gives the same spheres within float32 noise (scalar is the reference build)."""
    Q = _configs(robot, 21, seed=7)
    out = on_every_isa(lambda: robot.fk_many(Q))
    for name, v in out.items():
        np.testing.assert_allclose(v, out["scalar"], rtol=0, atol=2e-6, err_msg=name)


# ----------------------------------------------------------------------------- other joint kinds

ZOO_URDF = """<?xml version="1.0"?>
<robot name="zoo">
  <link name="root"><collision><origin xyz="0 0 0.05"/><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="a"><collision><origin xyz="0.1 0 0"/><geometry><sphere radius="0.04"/></geometry></collision>
                 <collision><origin xyz="0 0.1 0.02"/><geometry><sphere radius="0.03"/></geometry></collision></link>
  <link name="b"><collision><origin xyz="0 0 0.2" rpy="0.3 0 1"/><geometry><sphere radius="0.04"/></geometry></collision></link>
  <link name="c"><collision><origin xyz="0.05 -0.05 0.1"/><geometry><sphere radius="0.02"/></geometry></collision></link>
  <link name="d"/>
  <link name="e"><collision><origin xyz="0.02 0.03 0.04"/><geometry><sphere radius="0.01"/></geometry></collision>
                 <collision><origin xyz="-0.1 0 0"/><geometry><sphere radius="0.02"/></geometry></collision>
                 <collision><origin xyz="0 0 -0.1"/><geometry><sphere radius="0.03"/></geometry></collision></link>
  <link name="f"><collision><origin xyz="0 0.2 0"/><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="g"><collision><origin xyz="0.1 0.1 0.1"/><geometry><sphere radius="0.02"/></geometry></collision></link>
  <joint name="j_negz" type="revolute"><parent link="root"/><child link="a"/>
    <origin xyz="0 0 0.1" rpy="0 0 0"/><axis xyz="0 0 -1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
  <joint name="j_oblique" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0.2 0.05 -0.03" rpy="0.4 -0.2 0.9"/><axis xyz="0.3 -0.5 0.8"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="j_slide" type="prismatic"><parent link="b"/><child link="c"/>
    <origin xyz="0 0 0.25" rpy="1.2 0 0"/><axis xyz="0 1 0"/><limit lower="-0.3" upper="0.4" effort="1" velocity="1"/></joint>
  <joint name="j_fixed" type="fixed"><parent link="c"/><child link="d"/><origin xyz="0.1 0 0" rpy="0 1.5707963 0"/></joint>
  <joint name="j_spin" type="continuous"><parent link="d"/><child link="e"/>
    <origin xyz="0 0 0.1" rpy="0 0 0.3"/><axis xyz="1 1 0"/></joint>
  <joint name="j_mimic" type="revolute"><parent link="d"/><child link="f"/>
    <origin xyz="0 0.1 0" rpy="0 0 0"/><axis xyz="-1 0 0"/><limit lower="-5" upper="5" effort="1" velocity="1"/>
    <mimic joint="j_oblique" multiplier="-1.5" offset="0.2"/></joint>
  <joint name="j_side" type="revolute"><parent link="a"/><child link="g"/>
    <origin xyz="-0.1 0 0.1" rpy="0 0.5 0"/><axis xyz="0 -1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
"""


@pytest.fixture(scope="module")
def zoo(tmp_path_factory):
    path = tmp_path_factory.mktemp("zoo") / "zoo.urdf"
    path.write_text(ZOO_URDF)
    return simdplan.Robot.from_urdf(path)


def test_zoo_joint_kinds_match_yourdfpy(zoo, isa):
    """-z, oblique and sideways axes, a prismatic joint, a continuous joint at any angle, a mimic
    joint, a fixed joint with rpy, a branching tree: FK and link poses match yourdfpy."""
    assert zoo.joint_names == list(ref.urdf_of(zoo).actuated_joint_names)
    assert zoo.joint_names == ["j_negz", "j_oblique", "j_slide", "j_spin", "j_side"]
    rng = np.random.default_rng(8)
    Q = rng.uniform(zoo.lower, zoo.upper, size=(40, zoo.dof))
    Q[:, 3] = rng.uniform(-20, 20, size=40)  # continuous: any angle
    many = zoo.fk_many(Q)
    for q, g in zip(Q, many):
        np.testing.assert_allclose(g[:, :3], ref.reference_fk(zoo, q)[:, :3], rtol=0, atol=TOL, err_msg=str(q))
    for q in Q[:8]:
        want = ref.reference_link_poses(zoo, q)
        for name, T in zoo.link_poses(q).items():
            np.testing.assert_allclose(T, want[name], rtol=0, atol=TOL, err_msg=name)


def test_zoo_continuous_joint_has_no_limits(zoo, isa):
    q = np.array([0.1, 0.2, 0.05, 0.0, 0.1])
    base = zoo.fk(q)
    for turns in (-3, -1, 1, 2, 7):
        q2 = q.copy()
        q2[3] = 0.4 + 2 * np.pi * turns
        q3 = q.copy()
        q3[3] = 0.4
        np.testing.assert_allclose(zoo.fk(q2), zoo.fk(q3), rtol=0, atol=TOL)
        assert zoo.is_valid(q2) == zoo.is_valid(q3) == ref.is_valid(zoo, q3, [])
    assert base.shape == (zoo.n_spheres, 4)


def test_base_pose_moves_everything(isa):
    T = np.eye(4)
    T[:3, :3] = ref.euler_xyz_to_matrix([0.1, -0.3, 2.0])
    T[:3, 3] = [0.5, -1.0, 0.25]
    moved = simdplan.robots.load("panda", base_pose=T)
    plain = simdplan.robots.load("panda")
    for q in _configs(plain, 10, seed=9):
        np.testing.assert_allclose(moved.fk(q), ref.reference_fk(moved, q, base=T), rtol=0, atol=TOL)
        poses = ref.reference_link_poses(plain, q)
        for name, P in moved.link_poses(q).items():
            np.testing.assert_allclose(P, T @ poses[name], rtol=0, atol=TOL, err_msg=name)


def test_held_joints_use_their_fixed_values(isa):
    """joints= picks the configuration; the others are held at fixed_joint_values (default 0)."""
    full = simdplan.robots.load("panda")
    part = simdplan.robots.load("panda", joints=["panda_joint2", "panda_joint4", "panda_joint1"],
                                fixed_joint_values={"panda_joint6": 1.2, "panda_joint7": -0.4})
    assert part.dof == 3 and part.joint_names == ["panda_joint2", "panda_joint4", "panda_joint1"]
    held = {"panda_joint6": 1.2, "panda_joint7": -0.4}
    rng = np.random.default_rng(10)
    for _ in range(10):
        q = rng.uniform(part.lower, part.upper)
        np.testing.assert_allclose(part.fk(q), ref.reference_fk(part, q, held=held), rtol=0, atol=TOL)
        # the same world spheres as the full robot at the matching configuration (perhaps reordered)
        q_full = np.array([q[2], q[0], 0.0, q[1], 0.0, 1.2, -0.4])
        a, b = part.fk(q), full.fk(q_full)
        for link in set(full.sphere_links):
            ia = [k for k, n in enumerate(part.sphere_links) if n == link]
            ib = [k for k, n in enumerate(full.sphere_links) if n == link]
            np.testing.assert_allclose(a[ia], b[ib], rtol=0, atol=TOL, err_msg=link)


MIMIC_CONTINUOUS_URDF = """<?xml version="1.0"?>
<robot name="mimic_continuous">
  <link name="root"/>
  <link name="wheel"><collision><origin xyz="0.1 0 0"/><geometry><sphere radius="0.02"/></geometry></collision></link>
  <link name="follower"><collision><origin xyz="0 0.15 0.05"/><geometry><sphere radius="0.02"/></geometry></collision></link>
  <joint name="spin" type="continuous"><parent link="root"/><child link="wheel"/>
    <origin xyz="0 0 0.1"/><axis xyz="0 0 1"/></joint>
  <joint name="follow" type="continuous"><parent link="wheel"/><child link="follower"/>
    <origin xyz="0.1 0 0"/><axis xyz="0 0 1"/>
    <mimic joint="spin" multiplier="1.5" offset="-0.3"/></joint>
</robot>
"""


def test_mimic_of_continuous_joint_beyond_pi(tmp_path, isa):
    """A mimic joint follows the raw angle of a continuous joint: follow = 1.5 * spin - 0.3, for
    any spin. Wrapping spin to [-pi, pi] first changes follow by 1.5 * 2 pi k (not a full turn)."""
    path = tmp_path / "mimic_continuous.urdf"
    path.write_text(MIMIC_CONTINUOUS_URDF)
    robot = simdplan.Robot.from_urdf(path)
    assert robot.joint_names == ["spin"]
    for spin in (0.5, 3.0, 3.5, -4.0, 7.0, -20.0):
        q = np.array([spin])
        np.testing.assert_allclose(robot.fk(q)[:, :3], ref.reference_fk(robot, q)[:, :3], rtol=0, atol=TOL,
                                   err_msg=f"spin={spin} isa={isa}")
