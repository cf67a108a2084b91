"""Robot.from_urdf / simdplan.robots.load: joint types, trees, limits, active joints, mimic joints,
base pose, links without spheres, self-collision pair selection (SRDF, fixed joints, adjacency),
and the built-in robots with their package data.

Small robots are written as URDF strings into tmp_path; expected sphere positions are worked out
by hand (float32 core, so comparisons use a 1e-5 m tolerance).
"""

from __future__ import annotations

import math
import os
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

import simdplan
from simdplan import Environment, Robot
from simdplan import robots as sp_robots

ATOL = 2e-5

# ----------------------------------------------------------------------------- URDF helpers


def link(name: str, spheres=(), extra: str = "") -> str:
    """A <link> whose collision geometry is the given spheres (x, y, z, r) in the link frame."""
    cols = "".join(
        f'<collision><origin xyz="{x} {y} {z}" rpy="0 0 0"/><geometry><sphere radius="{r}"/></geometry></collision>'
        for x, y, z, r in spheres
    )
    return f'<link name="{name}">{cols}{extra}</link>'


def joint(name: str, jtype: str, parent: str, child: str, xyz="0 0 0", rpy="0 0 0", axis="0 0 1",
          limit=(-1.0, 1.0), extra: str = "") -> str:
    lim = f'<limit lower="{limit[0]}" upper="{limit[1]}" effort="1" velocity="1"/>' if limit is not None else ""
    ax = f'<axis xyz="{axis}"/>' if axis is not None else ""
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/>{ax}{lim}{extra}</joint>')


def urdf(*parts: str, name: str = "testbot") -> str:
    return f'<?xml version="1.0"?><robot name="{name}">' + "".join(parts) + "</robot>"


def srdf(pairs, name: str = "testbot") -> str:
    body = "".join(f'<disable_collisions link1="{a}" link2="{b}" reason="test"/>' for a, b in pairs)
    return f'<?xml version="1.0"?><robot name="{name}">{body}</robot>'


def write(tmp_path, text: str, fname: str = "robot.urdf") -> str:
    path = tmp_path / fname
    path.write_text(text)
    return str(path)


def planar_2link(limit1=(-3.0, 3.0), limit2=(-2.0, 2.0), types=("revolute", "revolute")) -> str:
    """base (sphere at origin) -j1 (z)- a (sphere at x=1) -j2 (z, at x=1)- b (sphere at x=1)."""
    return urdf(
        link("base", [(0, 0, 0, 0.05)]),
        link("a", [(1, 0, 0, 0.1)]),
        link("b", [(1, 0, 0, 0.1)]),
        joint("j1", types[0], "base", "a", limit=limit1 if types[0] != "continuous" else None),
        joint("j2", types[1], "a", "b", xyz="1 0 0", limit=limit2 if types[1] != "continuous" else None),
    )


def planar_expected(q1: float, q2: float) -> np.ndarray:
    return np.array([
        [0, 0, 0, 0.05],
        [math.cos(q1), math.sin(q1), 0, 0.1],
        [math.cos(q1) + math.cos(q1 + q2), math.sin(q1) + math.sin(q1 + q2), 0, 0.1],
    ])


def spheres_by_link(robot: Robot, q) -> dict[str, np.ndarray]:
    out: dict[str, list] = {}
    for name, s in zip(robot.sphere_links, robot.fk(np.asarray(q, dtype=float))):
        out.setdefault(name, []).append(s)
    return {k: np.array(v) for k, v in out.items()}


# ----------------------------------------------------------------------------- joint types and FK


def test_revolute_chain_fk_matches_hand_computation(tmp_path):
    robot = Robot.from_urdf(write(tmp_path, planar_2link()))
    assert robot.dof == 2
    assert robot.joint_names == ["j1", "j2"]
    assert robot.n_spheres == 3
    assert sorted(robot.sphere_links) == ["a", "b", "base"]
    rng = np.random.default_rng(1)
    for q in rng.uniform([-3, -2], [3, 2], size=(20, 2)):
        got = spheres_by_link(robot, q)
        exp = planar_expected(*q)
        np.testing.assert_allclose(got["base"][0], exp[0], atol=ATOL)
        np.testing.assert_allclose(got["a"][0], exp[1], atol=ATOL)
        np.testing.assert_allclose(got["b"][0], exp[2], atol=ATOL)
    fk = robot.fk(np.array([0.3, -0.4]))
    assert fk.shape == (3, 4)
    assert fk.dtype == np.float32


def test_non_z_axis_and_origin_rpy(tmp_path):
    # j1 rotates about +y; j2 is placed with a 90 degree yaw and rotates about the (unnormalised) x axis.
    text = urdf(
        link("base"),
        link("a", [(1, 0, 0, 0.1)]),
        link("b", [(0, 0, 1, 0.1)]),
        joint("j1", "revolute", "base", "a", axis="0 2 0", limit=(-3, 3)),
        joint("j2", "revolute", "a", "b", xyz="1 0 0", rpy=f"0 0 {math.pi / 2}", axis="3 0 0", limit=(-3, 3)),
    )
    robot = Robot.from_urdf(write(tmp_path, text))

    def rot_y(t):
        c, s = math.cos(t), math.sin(t)
        return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])

    def rot_x(t):
        c, s = math.cos(t), math.sin(t)
        return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])

    rz90 = np.array([[0, -1, 0], [1, 0, 0], [0, 0, 1.0]])
    for q1, q2 in [(0.0, 0.0), (0.5, 0.0), (0.0, 0.7), (-1.1, 2.3), (2.9, -2.9)]:
        r_a = rot_y(q1)
        p_a = r_a @ [1, 0, 0]
        r_b = r_a @ rz90 @ rot_x(q2)
        p_b = p_a + r_b @ [0, 0, 1]
        got = spheres_by_link(robot, [q1, q2])
        np.testing.assert_allclose(got["a"][0, :3], p_a, atol=ATOL)
        np.testing.assert_allclose(got["b"][0, :3], p_b, atol=ATOL)


def test_prismatic_joint_and_its_limits(tmp_path):
    text = urdf(
        link("base", [(0, 0, 0, 0.05)]),
        link("slider", [(0, 0.5, 0, 0.1)]),
        joint("p", "prismatic", "base", "slider", xyz="0 0 1", axis="1 0 0", limit=(-0.25, 0.75)),
    )
    robot = Robot.from_urdf(write(tmp_path, text))
    assert robot.dof == 1
    np.testing.assert_array_equal(robot.lower, [-0.25])
    np.testing.assert_array_equal(robot.upper, [0.75])
    for x in [-0.25, 0.0, 0.3, 0.75]:
        np.testing.assert_allclose(spheres_by_link(robot, [x])["slider"][0], [x, 0.5, 1.0, 0.1], atol=ATOL)
    assert robot.is_valid([-0.25]) and robot.is_valid([0.75])
    assert not robot.is_valid([0.76]) and not robot.is_valid([-0.26])


def test_revolute_limits_from_urdf_are_inclusive(tmp_path):
    robot = Robot.from_urdf(write(tmp_path, planar_2link(limit1=(-0.5, 1.25), limit2=(-2.0, 0.1))))
    np.testing.assert_array_equal(robot.lower, [-0.5, -2.0])
    np.testing.assert_array_equal(robot.upper, [1.25, 0.1])
    assert robot.is_valid([-0.5, -2.0])
    assert robot.is_valid([1.25, 0.1])
    assert not robot.is_valid([1.2501, 0.0])
    assert not robot.is_valid([0.0, -2.0001])
    assert not robot.is_valid([0.0, 0.5])
    # why_invalid names the joint
    reasons = robot.why_invalid([0.0, 0.5])
    assert [v.kind for v in reasons] == ["joint_limit"]
    assert reasons[0].joint == "j2"
    # is_valid_many agrees, and out-of-limit rows are False rather than an exception
    Q = np.array([[0, 0], [2, 0], [0, -3], [1.25, 0.1], [-0.6, 0]], dtype=float)
    np.testing.assert_array_equal(robot.is_valid_many(Q), [True, False, False, True, False])


def test_continuous_joint_accepts_any_angle(tmp_path):
    robot = Robot.from_urdf(write(tmp_path, planar_2link(types=("continuous", "revolute"))))
    assert robot.dof == 2
    for q1 in [0.0, math.pi, -math.pi, 3.5, -7.0, 100.0, 1e4]:
        assert robot.is_valid([q1, 0.0]), q1
        np.testing.assert_allclose(robot.fk([q1, 0.3]), planar_expected(q1, 0.3), atol=2e-4)
    Q = np.array([[100.0, 0.0], [-50.0, 0.5], [7.0, 2.5]])
    np.testing.assert_array_equal(robot.is_valid_many(Q), [True, True, False])
    # fk at q and q + 2 pi agree
    np.testing.assert_allclose(robot.fk([0.4, 0.2]), robot.fk([0.4 + 2 * math.pi, 0.2]), atol=1e-5)


def test_fixed_joints_fold_into_the_parent(tmp_path):
    text = urdf(
        link("base", [(0, 0, 0, 0.05)]),
        link("mount", [(0, 0, 0.1, 0.05)]),
        link("a", [(1, 0, 0, 0.1)]),
        link("tool", [(0.5, 0, 0, 0.02)]),
        joint("fix0", "fixed", "base", "mount", xyz="0 0 0.5", rpy=f"0 0 {math.pi / 2}", axis=None, limit=None),
        joint("j", "revolute", "mount", "a", limit=(-3, 3)),
        joint("fix1", "fixed", "a", "tool", xyz="1 0 0", axis=None, limit=None),
    )
    robot = Robot.from_urdf(write(tmp_path, text))
    assert robot.dof == 1 and robot.joint_names == ["j"]
    for q in [0.0, 0.6, -2.0]:
        got = spheres_by_link(robot, [q])
        np.testing.assert_allclose(got["mount"][0, :3], [0, 0, 0.6], atol=ATOL)
        yaw = math.pi / 2 + q
        np.testing.assert_allclose(got["a"][0, :3], [math.cos(yaw), math.sin(yaw), 0.5], atol=ATOL)
        np.testing.assert_allclose(got["tool"][0, :3], [1.5 * math.cos(yaw), 1.5 * math.sin(yaw), 0.5], atol=ATOL)
    poses = robot.link_poses([0.6])
    assert set(poses) == {"base", "mount", "a", "tool"}
    np.testing.assert_allclose(poses["mount"][:3, 3], [0, 0, 0.5], atol=ATOL)


def test_tree_shaped_robot(tmp_path):
    text = urdf(
        link("torso", [(0, 0, 0, 0.1)]),
        link("left", [(1, 0, 0, 0.1)]),
        link("right", [(0, 0, 0, 0.1)]),
        link("left_hand", [(0.5, 0, 0, 0.05)]),
        joint("jl", "revolute", "torso", "left", xyz="0 0.5 0", limit=(-3, 3)),
        joint("jr", "prismatic", "torso", "right", xyz="0 -0.5 0", axis="0 0 1", limit=(0, 1)),
        joint("jh", "revolute", "left", "left_hand", xyz="1 0 0", limit=(-3, 3)),
    )
    robot = Robot.from_urdf(write(tmp_path, text))
    assert robot.dof == 3
    assert robot.joint_names == ["jl", "jr", "jh"]
    for ql, qr, qh in [(0, 0, 0), (0.5, 0.3, -0.7), (-2, 1, 2)]:
        got = spheres_by_link(robot, [ql, qr, qh])
        np.testing.assert_allclose(got["left"][0, :3], [math.cos(ql), 0.5 + math.sin(ql), 0], atol=ATOL)
        np.testing.assert_allclose(got["right"][0, :3], [0, -0.5, qr], atol=ATOL)
        np.testing.assert_allclose(
            got["left_hand"][0, :3],
            [math.cos(ql) + 0.5 * math.cos(ql + qh), 0.5 + math.sin(ql) + 0.5 * math.sin(ql + qh), 0], atol=ATOL)
    # the two branches are checked against each other (not adjacent)
    pairs = {frozenset(p) for p in robot.self_collision_pairs}
    assert frozenset(("right", "left")) in pairs
    assert frozenset(("right", "left_hand")) in pairs
    assert frozenset(("torso", "left_hand")) in pairs
    assert frozenset(("torso", "left")) not in pairs  # adjacent across jl
    assert frozenset(("torso", "right")) not in pairs
    assert frozenset(("left", "left_hand")) not in pairs


def test_links_without_spheres(tmp_path):
    text = urdf(
        link("base", [(0, 0, 0, 0.05)]),
        link("empty1"),
        link("a", [(1, 0, 0, 0.1), (0.5, 0, 0, 0.1)]),
        link("empty2"),
        joint("j1", "revolute", "base", "empty1", limit=(-3, 3)),
        joint("fix", "fixed", "empty1", "a", axis=None, limit=None),
        joint("j2", "revolute", "a", "empty2", xyz="1 0 0", limit=(-3, 3)),
    )
    robot = Robot.from_urdf(write(tmp_path, text))
    assert robot.dof == 2
    assert robot.n_spheres == 3
    assert "empty1" not in robot.sphere_links and "empty2" not in robot.sphere_links
    assert all("empty" not in a and "empty" not in b for a, b in robot.self_collision_pairs)
    assert robot.is_valid([0.3, 0.2])
    assert set(robot.link_poses([0.3, 0.2])) == {"base", "empty1", "a", "empty2"}


def test_robot_without_any_sphere(tmp_path):
    robot = Robot.from_urdf(write(tmp_path, urdf(link("base"), link("a"), joint("j", "revolute", "base", "a"))))
    assert robot.n_spheres == 0 and robot.dof == 1
    env = Environment()
    env.add_sphere([0, 0, 0], 1.0)
    assert robot.is_valid([0.5], env)
    assert not robot.is_valid([1.5], env)  # still limited by the joint limits
    assert robot.fk([0.2]).shape == (0, 4)
    np.testing.assert_array_equal(robot.is_valid_many([[0.0], [2.0]], env), [True, False])
    assert robot.is_motion_valid([0.0], [0.9], env)


def test_single_link_robot_has_zero_dof(tmp_path):
    robot = Robot.from_urdf(write(tmp_path, urdf(link("only", [(0, 0, 0, 0.1)]))))
    assert robot.dof == 0 and robot.joint_names == []
    env = Environment()
    assert robot.is_valid(np.zeros(0), env)
    env.add_sphere([0.15, 0, 0], 0.1)
    assert not robot.is_valid(np.zeros(0), env)


# ----------------------------------------------------------------------------- active joints, held values, mimic


def three_joint_arm() -> str:
    return urdf(
        link("base", [(0, 0, 0, 0.05)]),
        link("a", [(1, 0, 0, 0.1)]),
        link("b", [(1, 0, 0, 0.1)]),
        link("c", [(0, 0, 0.5, 0.1)]),
        joint("j1", "revolute", "base", "a", limit=(-3, 3)),
        joint("j2", "revolute", "a", "b", xyz="1 0 0", limit=(-2, 2)),
        joint("j3", "prismatic", "b", "c", xyz="1 0 0", axis="0 0 1", limit=(0.2, 0.9)),
    )


def test_subset_of_active_joints_with_fixed_values(tmp_path):
    path = write(tmp_path, three_joint_arm())
    full = Robot.from_urdf(path, fixed_joint_values=None, joints=["j1", "j2", "j3"])
    sub = Robot.from_urdf(path, joints=["j3", "j1"], fixed_joint_values={"j2": 0.7})
    assert sub.dof == 2
    assert sub.joint_names == ["j3", "j1"]
    np.testing.assert_array_equal(sub.lower, [0.2, -3])
    np.testing.assert_array_equal(sub.upper, [0.9, 3])
    rng = np.random.default_rng(2)
    for q3, q1 in rng.uniform([0.2, -3], [0.9, 3], size=(10, 2)):
        np.testing.assert_allclose(sub.fk([q3, q1]), full.fk([q1, 0.7, q3]), atol=ATOL)
    # the held joint's value is a constant: no limit check through the configuration
    assert sub.is_valid([0.5, 0.0])
    assert not sub.is_valid([1.0, 0.0])  # j3 out of its limits


def test_held_joints_default_to_zero(tmp_path):
    path = write(tmp_path, three_joint_arm())
    full = Robot.from_urdf(path)
    sub = Robot.from_urdf(path, joints=["j1"], fixed_joint_values={"j3": 0.4})
    np.testing.assert_allclose(sub.fk([0.3]), full.fk([0.3, 0.0, 0.4]), atol=ATOL)


def test_held_joint_needs_a_value_when_zero_is_out_of_limits(tmp_path):
    path = write(tmp_path, three_joint_arm())
    with pytest.raises(ValueError, match="j3"):
        Robot.from_urdf(path, joints=["j1", "j2"])


@pytest.mark.parametrize("kwargs, match", [
    ({"joints": ["j1", "nope"]}, "nope"),
    ({"joints": ["j1", "j1"]}, "twice"),
    ({"joints": ["j1", "j3"], "fixed_joint_values": {"j2": 5.0}}, "limits"),
    ({"joints": ["j1", "j2", "j3"], "fixed_joint_values": {"j2": 0.1}}, "j2"),
    ({"joints": ["j1", "j3"], "fixed_joint_values": {"zz": 0.1}}, "zz"),
    ({"joints": ["j1", "j3"], "fixed_joint_values": {"j2": float("nan")}}, "j2"),
])
def test_bad_joint_selection(tmp_path, kwargs, match):
    path = write(tmp_path, three_joint_arm())
    with pytest.raises(ValueError, match=match):
        Robot.from_urdf(path, **kwargs)


@pytest.mark.parametrize("name", ["f0", "f2"])
def test_fixed_joint_values_for_a_fixed_joint_is_refused(tmp_path, name):
    # A value for a joint that cannot be held (a URDF fixed joint) would be silently ignored.
    with pytest.raises(ValueError, match=name):
        Robot.from_urdf(write(tmp_path, pair_robot_urdf()), fixed_joint_values={name: 0.5})


def mimic_arm(multiplier=-2.0, offset=0.3) -> str:
    return urdf(
        link("base"),
        link("a", [(1, 0, 0, 0.1)]),
        link("b", [(1, 0, 0, 0.1)]),
        joint("j1", "revolute", "base", "a", limit=(-3, 3)),
        joint("m", "revolute", "a", "b", xyz="1 0 0", limit=(-3, 3),
              extra=f'<mimic joint="j1" multiplier="{multiplier}" offset="{offset}"/>'),
    )


def test_mimic_joint_follows_its_leader(tmp_path):
    robot = Robot.from_urdf(write(tmp_path, mimic_arm()))
    assert robot.dof == 1
    assert robot.joint_names == ["j1"]
    for q1 in [-2.0, -0.3, 0.0, 0.4, 1.7]:
        qm = -2.0 * q1 + 0.3
        got = spheres_by_link(robot, [q1])
        np.testing.assert_allclose(got["b"][0, :3], [math.cos(q1) + math.cos(q1 + qm),
                                                     math.sin(q1) + math.sin(q1 + qm), 0], atol=ATOL)


def test_mimic_defaults_and_held_leader(tmp_path):
    text = urdf(
        link("base"),
        link("a", [(1, 0, 0, 0.1)]),
        link("b", [(1, 0, 0, 0.1)]),
        joint("j1", "revolute", "base", "a", limit=(-3, 3)),
        joint("m", "revolute", "a", "b", xyz="1 0 0", limit=(-3, 3), extra='<mimic joint="j1"/>'),
    )
    path = write(tmp_path, text)
    robot = Robot.from_urdf(path)
    q1 = 0.6  # multiplier 1, offset 0 by default
    np.testing.assert_allclose(spheres_by_link(robot, [q1])["b"][0, :3],
                               [math.cos(q1) + math.cos(2 * q1), math.sin(q1) + math.sin(2 * q1), 0], atol=ATOL)
    held = Robot.from_urdf(path, joints=[], fixed_joint_values={"j1": q1})
    assert held.dof == 0
    np.testing.assert_allclose(held.fk(np.zeros(0)), robot.fk([q1]), atol=ATOL)


def test_mimic_of_a_continuous_joint_uses_the_unwrapped_angle(tmp_path):
    # The mimic value is multiplier * q + offset of the joint value as given; for a continuous
    # leader beyond +-pi, wrapping q first changes a mimic with a non-integer multiplier.
    text = urdf(
        link("base"),
        link("a", [(1, 0, 0, 0.1)]),
        link("b", [(1, 0, 0, 0.1)]),
        link("c", [(0, 0, 0, 0.1)]),
        joint("j1", "continuous", "base", "a", limit=None),
        joint("m", "revolute", "a", "b", xyz="1 0 0", limit=(-30, 30),
              extra='<mimic joint="j1" multiplier="0.5" offset="0"/>'),
        joint("p", "prismatic", "base", "c", xyz="0 0 1", axis="1 0 0", limit=(-30, 30),
              extra='<mimic joint="j1" multiplier="0.1" offset="0"/>'),
    )
    robot = Robot.from_urdf(write(tmp_path, text))
    assert robot.dof == 1
    for q1 in [1.0, 3.0, 4.0, -4.0, 7.0]:
        qm = 0.5 * q1
        got = spheres_by_link(robot, [q1])
        np.testing.assert_allclose(got["b"][0, :3], [math.cos(q1) + math.cos(q1 + qm),
                                                     math.sin(q1) + math.sin(q1 + qm), 0], atol=1e-4,
                                   err_msg=f"revolute mimic, q1 = {q1}")
        np.testing.assert_allclose(got["c"][0, :3], [0.1 * q1, 0, 1], atol=1e-4, err_msg=f"prismatic mimic, q1 = {q1}")


def test_mimic_joint_is_not_an_active_joint(tmp_path):
    with pytest.raises(ValueError, match="m"):
        Robot.from_urdf(write(tmp_path, mimic_arm()), joints=["j1", "m"])


def test_fixed_joint_values_for_a_mimic_joint_is_refused(tmp_path):
    # m follows j1; a value given for it would be silently ignored.
    with pytest.raises(ValueError, match="'m'"):
        Robot.from_urdf(write(tmp_path, mimic_arm()), fixed_joint_values={"m": 0.5})


# ----------------------------------------------------------------------------- base pose


def test_base_pose_moves_every_sphere(tmp_path):
    path = write(tmp_path, planar_2link())
    c, s = math.cos(0.8), math.sin(0.8)
    pose = np.array([[c, 0, s, 0.3], [0, 1, 0, -1.0], [-s, 0, c, 2.0], [0, 0, 0, 1]])
    plain = Robot.from_urdf(path)
    moved = Robot.from_urdf(path, base_pose=pose)
    for q in [(0, 0), (0.4, -1.2), (2.5, 1.9)]:
        a, b = plain.fk(q).astype(float), moved.fk(q).astype(float)
        np.testing.assert_allclose(b[:, :3], a[:, :3] @ pose[:3, :3].T + pose[:3, 3], atol=ATOL)
        np.testing.assert_allclose(b[:, 3], a[:, 3])
    np.testing.assert_allclose(moved.link_poses([0.1, 0.2])["base"], pose, atol=ATOL)
    # collision uses the moved robot: an obstacle at the moved base collides, the unmoved spot does not
    env = Environment()
    env.add_sphere(pose[:3, 3], 0.02)
    assert not moved.is_valid([1.0, 1.0], env)
    assert plain.is_valid([1.0, 1.0], env)


@pytest.mark.parametrize("pose", [
    np.diag([2.0, 1, 1, 1]),  # not a rotation
    np.diag([-1.0, 1, 1, 1]),  # reflection
    np.eye(3),  # wrong shape
    np.full((4, 4), np.nan),
])
def test_bad_base_pose(tmp_path, pose):
    with pytest.raises(ValueError, match="base_pose"):
        Robot.from_urdf(write(tmp_path, planar_2link()), base_pose=pose)


# ----------------------------------------------------------------------------- self-collision pairs


def pair_robot_urdf() -> str:
    """Clusters: {base, b1} -j1- {l1} -j2- {l2, l2b} -j3- {l3} -j4- {l4}; 'nosph' has no spheres."""
    return urdf(
        link("base", [(0, 0, 0, 0.05)]),
        link("b1", [(0, 0, 0.1, 0.05)]),
        link("l1", [(0, 0, 0.2, 0.05)]),
        link("l2", [(0, 0, 0.3, 0.05)]),
        link("l2b", [(0, 0, 0.4, 0.05)]),
        link("l3", [(0, 0, 0.5, 0.05)]),
        link("l4", [(0, 0, 0.6, 0.05)]),
        link("nosph"),
        joint("f0", "fixed", "base", "b1", axis=None, limit=None),
        joint("j1", "revolute", "b1", "l1", limit=(-3, 3)),
        joint("j2", "revolute", "l1", "l2", limit=(-3, 3)),
        joint("f2", "fixed", "l2", "l2b", axis=None, limit=None),
        joint("j3", "revolute", "l2b", "l3", limit=(-3, 3)),
        joint("j4", "prismatic", "l3", "l4", limit=(-1, 1)),
        joint("j5", "revolute", "l4", "nosph", limit=(-1, 1)),
    )


def pair_set(robot: Robot) -> set:
    return {frozenset(p) for p in robot.self_collision_pairs}


def fs(*pairs) -> set:
    return {frozenset(p) for p in pairs}


def test_default_pairs_skip_rigid_and_adjacent_clusters(tmp_path):
    robot = Robot.from_urdf(write(tmp_path, pair_robot_urdf()))
    expected = fs(
        # cluster {base, b1} against clusters two or more joints away
        ("base", "l2"), ("base", "l2b"), ("base", "l3"), ("base", "l4"),
        ("b1", "l2"), ("b1", "l2b"), ("b1", "l3"), ("b1", "l4"),
        ("l1", "l3"), ("l1", "l4"),
        ("l2", "l4"), ("l2b", "l4"),
    )
    assert pair_set(robot) == expected
    assert len(robot.self_collision_pairs) == len(expected)
    # adjacency is across the merged cluster: l2 (not l2b) is adjacent to l3 too
    assert frozenset(("l2", "l3")) not in pair_set(robot)


def test_skip_adjacent_false_checks_every_pair(tmp_path):
    robot = Robot.from_urdf(write(tmp_path, pair_robot_urdf()), skip_adjacent=False)
    names = ["base", "b1", "l1", "l2", "l2b", "l3", "l4"]
    expected = {frozenset((a, b)) for i, a in enumerate(names) for b in names[i + 1:]}
    assert pair_set(robot) == expected


def test_srdf_pairs_are_never_checked(tmp_path):
    upath = write(tmp_path, pair_robot_urdf())
    disabled = [("base", "l4"), ("l3", "l1"), ("l2", "l3"), ("l2", "l2b")]
    spath = write(tmp_path, srdf(disabled), "robot.srdf")
    for skip in (True, False):
        robot = Robot.from_urdf(upath, spath, skip_adjacent=skip)
        got = pair_set(robot)
        for pair in disabled:
            assert frozenset(pair) not in got, (pair, skip)
        no_srdf = pair_set(Robot.from_urdf(upath, skip_adjacent=skip))
        assert got == no_srdf - fs(*disabled)


def test_srdf_unknown_link_warns(tmp_path):
    upath = write(tmp_path, pair_robot_urdf())
    spath = write(tmp_path, srdf([("base", "ghost")]), "robot.srdf")
    with pytest.warns(UserWarning, match="ghost"):
        robot = Robot.from_urdf(upath, spath)
    assert pair_set(robot) == pair_set(Robot.from_urdf(upath))


def overlap_robot_urdf() -> str:
    """Three links whose spheres all overlap at q = 0: a -j1- b -j2- c (c is two joints from a)."""
    return urdf(
        link("a", [(0, 0, 0, 0.2)]),
        link("b", [(0, 0, 0, 0.2)]),
        link("c", [(0, 0, 0, 0.2)]),
        joint("j1", "revolute", "a", "b", limit=(-1, 1)),
        joint("j2", "revolute", "b", "c", limit=(-1, 1)),
    )


def test_self_collision_behaviour_follows_the_pairs(tmp_path):
    upath = write(tmp_path, overlap_robot_urdf())
    default = Robot.from_urdf(upath)
    assert pair_set(default) == fs(("a", "c"))
    assert not default.is_valid([0.0, 0.0])
    kinds = {v.kind for v in default.why_invalid([0.0, 0.0])}
    assert kinds == {"self"}
    spath = write(tmp_path, srdf([("c", "a")]), "robot.srdf")
    assert Robot.from_urdf(upath, spath).is_valid([0.0, 0.0])
    # skip_adjacent=False: the a-b overlap is checked, so q is invalid even with a-c disabled
    strict = Robot.from_urdf(upath, spath, skip_adjacent=False)
    assert pair_set(strict) == fs(("a", "b"), ("b", "c"))
    assert not strict.is_valid([0.0, 0.0])
    spath2 = write(tmp_path, srdf([("a", "c"), ("a", "b"), ("b", "c")]), "all.srdf")
    assert Robot.from_urdf(upath, spath2, skip_adjacent=False).is_valid([0.0, 0.0])


def test_holding_a_joint_does_not_change_the_pairs(tmp_path):
    upath = write(tmp_path, pair_robot_urdf())
    full = Robot.from_urdf(upath)
    held = Robot.from_urdf(upath, joints=["j1", "j4"], fixed_joint_values={"j3": 0.5})
    assert pair_set(held) == pair_set(full)


# ----------------------------------------------------------------------------- built-in robots


def urdf_limits(path: str) -> dict[str, tuple[str, float, float]]:
    out = {}
    for j in ET.parse(path).getroot().iter("joint"):
        lim = j.find("limit")
        if j.get("type") in ("revolute", "prismatic") and j.find("mimic") is None:
            out[j.get("name")] = (j.get("type"), float(lim.get("lower")), float(lim.get("upper")))
        elif j.get("type") == "continuous" and j.find("mimic") is None:
            out[j.get("name")] = ("continuous", -math.pi, math.pi)
    return out


def test_builtin_list_and_package_data():
    assert set(sp_robots.available()) >= {"panda", "ur5"}
    data_dir = sp_robots.DATA_DIR
    # the data shipped in the installed package, next to the robots module
    assert os.path.dirname(os.path.abspath(sp_robots.__file__)) == os.path.dirname(data_dir)
    notice = os.path.join(data_dir, "NOTICE.md")
    assert os.path.isfile(notice)
    text = open(notice, encoding="utf-8").read().lower()
    assert "licen" in text and "panda" in text and "ur5" in text
    for name in ("panda", "ur5"):
        u, s = sp_robots.builtin_paths(name)
        assert os.path.isfile(u) and os.path.isfile(s)


@pytest.mark.parametrize("name, dof", [("panda", 7), ("ur5", 6)])
def test_builtin_robots_load(name, dof):
    robot = sp_robots.load(name)
    assert isinstance(robot, Robot)
    assert robot.dof == dof
    assert robot.n_spheres > 10
    fk = robot.fk(np.zeros(dof))
    assert fk.shape == (robot.n_spheres, 4)
    assert np.all(np.isfinite(fk)) and np.all(fk[:, 3] > 0)
    # limits come from the URDF
    u, s = sp_robots.builtin_paths(name)
    lim = urdf_limits(u)
    for j, lo, hi in zip(robot.joint_names, robot.lower, robot.upper):
        assert lim[j][1] == pytest.approx(lo) and lim[j][2] == pytest.approx(hi)
    # SRDF pairs are never checked, and the SRDF removes pairs
    disabled = sp_robots.builtin_paths(name)[1]
    pairs = {frozenset((e.get("link1"), e.get("link2"))) for e in ET.parse(disabled).getroot().iter("disable_collisions")}
    checked = pair_set(robot)
    assert checked and not (checked & pairs)
    assert len(pair_set(Robot.from_urdf(u))) >= len(checked)
    # a good fraction of random configurations is self-collision free
    rng = np.random.default_rng(3)
    valid = robot.is_valid_many(rng.uniform(robot.lower, robot.upper, size=(500, dof)))
    assert 0.2 < valid.mean() <= 1.0


def test_panda_joint_names_and_kwargs():
    robot = sp_robots.load("panda")
    assert robot.joint_names == [f"panda_joint{i}" for i in range(1, 8)]
    pose = np.eye(4)
    pose[:3, 3] = [1.0, 2.0, 3.0]
    moved = sp_robots.load("panda", base_pose=pose, resolution=10.0)
    assert moved.resolution == 10.0
    q = np.array([0, -0.5, 0, -2.0, 0, 1.5, 0.7])
    np.testing.assert_allclose(moved.fk(q)[:, :3], robot.fk(q)[:, :3] + [1, 2, 3], atol=1e-5)
    sub = sp_robots.load("panda", joints=["panda_joint1", "panda_joint2"],
                         fixed_joint_values={"panda_joint4": -2.0, "panda_joint6": 1.5})
    assert sub.dof == 2
    np.testing.assert_allclose(sub.fk([0.3, -0.2]), robot.fk([0.3, -0.2, 0, -2.0, 0, 1.5, 0]), atol=1e-5)


def test_unknown_builtin_robot():
    with pytest.raises(ValueError, match="panda"):
        sp_robots.load("no_such_robot")


def test_top_level_exports():
    assert simdplan.Robot is Robot
    assert simdplan.Environment is Environment
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sp_robots.load("ur5")  # the shipped SRDF names only links of the URDF


@pytest.mark.parametrize("name", ["panda", "ur5"])
def test_builtin_mesh_paths_resolve_to_shipped_files(name):
    """Mesh filenames (some with package://) resolve relative to the URDF to files in the package."""
    robot = sp_robots.load(name)
    refs = [m for link in robot.description.links.values() for m in link.visual_meshes + link.collision_meshes]
    assert refs, "the built-in robots name visual meshes"
    for m in refs:
        assert os.path.isfile(m.path), m.path
        assert m.path.startswith(sp_robots.DATA_DIR)
        assert m.origin.shape == (4, 4) and m.scale.shape == (3,)


def test_mesh_path_prefixes_are_stripped(tmp_path):
    from simdplan.robots.description import resolve_mesh_path

    base = str(tmp_path)
    assert resolve_mesh_path("package://meshes/a.stl", base) == os.path.join(base, "meshes", "a.stl")
    assert resolve_mesh_path("meshes/a.stl", base) == os.path.join(base, "meshes", "a.stl")
    assert resolve_mesh_path("file:///abs/a.stl", base) == "/abs/a.stl"


PRIMITIVE_URDF = """<?xml version="1.0"?>
<robot name="prims">
  <link name="base">
    <collision><origin xyz="0.1 0 0" rpy="0 0 1.5707963267948966"/><geometry><box size="0.2 0.4 0.6"/></geometry></collision>
    <collision><origin xyz="0 0 0.5"/><geometry><cylinder radius="0.05" length="0.3"/></geometry></collision>
    <collision><geometry><sphere radius="0.1"/></geometry></collision>
  </link>
</robot>
"""


def test_collision_primitives_are_recorded(tmp_path):
    """Boxes and cylinders are kept with their sizes and poses (simdplan.verify_path places them),
    and are what other_geometry names; bad sizes are refused with the link named."""
    from simdplan.robots.description import read_urdf

    path = tmp_path / "prims.urdf"
    path.write_text(PRIMITIVE_URDF)
    link = read_urdf(path).links["base"]
    assert link.other_geometry == ["box", "cylinder"]
    box, cyl = link.collision_primitives
    assert box.kind == "box" and np.allclose(box.params["half_extents"], [0.1, 0.2, 0.3])
    np.testing.assert_allclose(box.origin[:3, 3], [0.1, 0, 0])
    np.testing.assert_allclose(box.origin[:3, 0], [0, 1, 0], atol=1e-12)  # rotated a quarter turn about z
    assert cyl.kind == "cylinder" and cyl.params == {"radius": 0.05, "length": 0.3}
    np.testing.assert_allclose(link.spheres, [[0, 0, 0, 0.1]])
    path.write_text(PRIMITIVE_URDF.replace('size="0.2 0.4 0.6"', 'size="0.2 0 0.6"'))
    with pytest.raises(ValueError, match="'base'.*box"):
        read_urdf(path)
