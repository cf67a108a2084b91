"""Robots without a URDF file (RobotBuilder) and attached objects (Robot.attach / detach)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import simdplan
from simdplan import Environment
from simdplan.robots import RobotBuilder


def two_link_arm():
    b = RobotBuilder("arm")
    b.link("base", spheres=[[0, 0, 0.05, 0.05]])
    b.joint("shoulder", "revolute", parent="base", child="upper", xyz=[0, 0, 0.1], axis=[0, 0, 1], limits=(-3, 3))
    b.link("upper", spheres=[[0.15, 0, 0, 0.03], [0.3, 0, 0, 0.03]])
    b.joint("elbow", "revolute", parent="upper", child="fore", xyz=[0.3, 0, 0], rpy=[0, 0, 0], axis=[0, 0, 1],
            limits=(-2.5, 2.5))
    b.link("fore", spheres=[[0.1, 0, 0, 0.02], [0.2, 0, 0, 0.02]])
    b.joint("slide", "prismatic", parent="fore", child="tip", xyz=[0.2, 0, 0], axis=[1, 0, 0], limits=(0, 0.1))
    b.link("tip", spheres=[[0.0, 0, 0, 0.01]])
    return b


def test_builder_robot_kinematics():
    robot = two_link_arm().build()
    assert robot.joint_names == ["shoulder", "elbow", "slide"] and robot.dof == 3
    q = np.array([0.4, -0.7, 0.05])
    tip = robot.fk(q)[-1, :3].astype(float)
    a, b = q[0], q[0] + q[1]
    want = np.array([0.3 * math.cos(a) + (0.2 + 0.05) * math.cos(b), 0.3 * math.sin(a) + 0.25 * math.sin(b), 0.1])
    np.testing.assert_allclose(tip, want, atol=1e-6)
    env = Environment()
    env.add_sphere(want, 0.005)
    assert not robot.is_valid(q, env)
    assert robot.is_valid(q + [0.3, 0, 0], env)


@pytest.mark.parametrize("mutate,match", [
    (lambda b: b.link("base"), "defined twice"),
    (lambda b: b.joint("j", "revolute", "base", "nowhere", limits=(0, 1)), "never added"),
    (lambda b: b.joint("j", "revolute", "base", "x", axis=[0, 0, 0], limits=(0, 1)), "axis"),
    (lambda b: b.joint("j", "revolute", "base", "x"), "needs limits"),
    (lambda b: b.joint("j", "revolute", "base", "x", limits=(1, 0)), "lower <= upper"),
    (lambda b: b.joint("j", "hinge", "base", "x"), "type must be"),
    (lambda b: b.link("x", spheres=[[0, 0, 0, -0.1]]), "radii"),
    (lambda b: b.link("x", spheres=[[0, 0, 0]]), "shape"),
    (lambda b: b.link("floating"), "one tree"),
    (lambda b: b.joint("j", "fixed", "tip", "upper"), "child of two joints"),
    (lambda b: b.disable_collisions("base", "ghost"), "unknown links"),
])
def test_builder_refuses_bad_robots(mutate, match):
    b = two_link_arm()
    with pytest.raises(ValueError, match=match):
        mutate(b)
        b.build()


@pytest.fixture(scope="module")
def panda():
    return simdplan.robots.load("panda")


def box_spheres(half: float = 0.04, r: float = 0.02) -> np.ndarray:
    g = np.linspace(-half, half, 3)
    return np.array([[x, y, z, r] for x in g for y in g for z in g])


def test_attach_changes_validity_and_detach_restores(panda):
    pose = np.eye(4)
    pose[2, 3] = 0.15  # 15 cm beyond the hand's frame, between the fingers and further out
    held = panda.attach("panda_hand", box_spheres(), pose=pose, name="box",
                        allowed_contacts=["panda_leftfinger", "panda_rightfinger"])
    assert held.attachments == {"box": "panda_hand"} and panda.attachments == {}
    assert held.n_spheres == panda.n_spheres + 27
    rng = np.random.default_rng(0)
    Q = rng.uniform(panda.lower, panda.upper, size=(3000, 7))
    # an obstacle where the object is at q0: only the carrying robot hits it
    q0 = next(q for q in Q if panda.is_valid(q) and held.is_valid(q))
    where = held.fk(q0)[-27:, :3].mean(axis=0)
    env = Environment()
    env.add_sphere(where, 0.01)
    assert panda.is_valid(q0, env) and not held.is_valid(q0, env)
    reasons = held.why_invalid(q0, env)
    assert reasons and all(v.link == "box" for v in reasons)
    # the object's spheres follow the hand exactly (reference FK of the carried link)
    hand = panda.link_poses(q0)["panda_hand"]
    want = (hand @ pose)[:3, :3] @ box_spheres()[:, :3].T + (hand @ pose)[:3, 3:4]
    np.testing.assert_allclose(held.fk(q0)[-27:, :3], want.T, atol=1e-5)
    back = held.detach("box")
    assert back.n_spheres == panda.n_spheres and back.attachments == {}
    np.testing.assert_array_equal(back.is_valid_many(Q, env), panda.is_valid_many(Q, env))


def test_attached_object_self_collision(panda):
    # hanging from the hand, a big object reaches back to the forearm: that is a self-collision,
    # while touching the hand and fingers (its own cluster and neighbours) is not
    pose = np.eye(4)
    pose[2, 3] = 0.05
    big = panda.attach("panda_hand", [[0, 0, 0, 0.2]], pose=pose, name="ball")
    q = np.array([0.0, 0.0, 0.0, -2.9, 0.0, 0.5, 0.8])  # elbow folded: the hand near the upper arm
    hits = {v.other_link for v in big.why_invalid(q) if v.kind == "self"} | \
        {v.link for v in big.why_invalid(q) if v.kind == "self"}
    assert "ball" in hits
    # its own cluster (hand, fingers) and link7 one joint away are never checked against it
    pairs = {frozenset(p) for p in big.self_collision_pairs if "ball" in p}
    assert pairs and not pairs & {frozenset(("ball", n)) for n in ("panda_hand", "panda_leftfinger",
                                                                      "panda_rightfinger", "panda_link7")}
    small = panda.attach("panda_hand", [[0, 0, 0, 0.01]], pose=pose, name="pebble")
    assert small.is_valid(np.array([0.0, -0.3, 0.0, -2.0, 0.0, 1.7, 0.8]))


def test_planning_with_an_attachment(panda):
    scene = simdplan.scenes.load(simdplan.scenes.example("panda_table"))
    pose = np.eye(4)
    pose[2, 3] = 0.12
    held = panda.attach("panda_hand", [[0, 0, 0, 0.015]], pose=pose, name="pen")
    assert held.is_valid(scene.start, scene.env) and held.is_valid_many(scene.goals, scene.env).all()
    res = simdplan.plan(held, scene.env, scene.start, scene.goals, seed=1)
    assert res.success
    for a, b in zip(res.path[:-1], res.path[1:]):
        assert held.is_motion_valid(a, b, scene.env)


def test_attach_bad_input(panda):
    with pytest.raises(ValueError, match="unknown link"):
        panda.attach("gripper", [[0, 0, 0, 0.01]])
    with pytest.raises(ValueError, match="new link name"):
        panda.attach("panda_hand", [[0, 0, 0, 0.01]], name="panda_link1")
    with pytest.raises(ValueError, match="exactly one"):
        panda.attach("panda_hand")
    with pytest.raises(ValueError, match="radii"):
        panda.attach("panda_hand", [[0, 0, 0, 0.0]])
    with pytest.raises(ValueError, match="unknown links"):
        panda.attach("panda_hand", [[0, 0, 0, 0.01]], allowed_contacts=["claw"])
    with pytest.raises(ValueError, match="pose"):
        panda.attach("panda_hand", [[0, 0, 0, 0.01]], pose=np.zeros((4, 4)))
    with pytest.raises(ValueError, match="no attachment"):
        panda.detach("box")


BOX_ARM = """<robot name="boxarm">
  <link name="base"><collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link>
  <link name="arm"><collision><origin xyz="0.2 0 0"/><geometry><cylinder radius="0.03" length="0.3"/></geometry>
  </collision></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.2"/>
    <axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
</robot>"""


def test_from_urdf_spherizes_on_the_fly(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMDPLAN_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "boxarm.urdf"
    path.write_text(BOX_ARM)
    with pytest.warns(UserWarning, match="covered by spheres on the fly"):
        robot = simdplan.Robot.from_urdf(path, spherize={"max_spheres_per_link": 12, "tolerance": 0.01})
    assert robot.n_spheres > 2 and robot.joint_names == ["j"]
    # conservative: the box's corners are inside the base's spheres, so a tiny obstacle there collides
    for corner in ([0.1, 0.1, 0.05], [-0.1, 0.1, -0.05], [0.1, -0.1, 0.05]):
        env = Environment()
        env.add_sphere(corner, 1e-4)
        assert not robot.is_valid([0.0], env), corner
    # the cylinder (along the arm's z, 0.2 m out) has its top cap rim covered wherever the joint turns it
    q = 1.1
    rim = np.array([0.2 + 0.03, 0.0, 0.15])  # arm frame
    tip = np.array([rim[0] * math.cos(q), rim[0] * math.sin(q), 0.2 + rim[2]])
    env = Environment()
    env.add_sphere(tip, 1e-4)
    assert not robot.is_valid([q], env)
    # a second load reuses the cached file (same path in the warning, no new spherization)
    with pytest.warns(UserWarning) as rec:
        simdplan.Robot.from_urdf(path, spherize={"max_spheres_per_link": 12, "tolerance": 0.01})
    assert len(list((tmp_path / "cache").glob("*.urdf"))) == 1 and rec


def test_attach_a_mesh_spherized_on_the_fly(panda):
    import trimesh

    box = trimesh.creation.box(extents=[0.06, 0.04, 0.1])
    pose = np.eye(4)
    pose[2, 3] = 0.16
    held = panda.attach("panda_hand", mesh=box, pose=pose, name="carton", max_spheres=16, tolerance=0.01)
    k = held.n_spheres - panda.n_spheres
    assert 1 <= k <= 16
    # conservative: every corner of the carton is inside its spheres, wherever the hand is
    q = np.array([0.3, -0.4, 0.1, -2.2, 0.0, 1.9, 0.5])
    T = held.link_poses(q)["panda_hand"] @ pose
    for corner in box.vertices:
        env = Environment()
        env.add_sphere(T[:3, :3] @ corner + T[:3, 3], 1e-4)
        assert not held.is_valid(q, env) and panda.is_valid(q, env)
