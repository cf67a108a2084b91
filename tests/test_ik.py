"""Inverse kinematics: solutions reach the pose (checked by an independent float64 FK from the URDF
joints), respect limits, are collision-free, masks free what they say, bad input is refused."""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdplan
from simdplan import _core
from simdplan.bench import robots as bench_robots
from simdplan.planner import InvalidProblemError, LimitClampWarning, pose_goals
from simdplan.planner.settings import PlannerSettings, to_core
from simdplan.robots import ik as ik_mod
from simdplan.robots.kinematics import joint_motion

PANDA = simdplan.robots.load("panda")
UR5 = simdplan.robots.load("ur5")


def urdf_link_pose(robot, q, link: str, base=np.eye(4)) -> np.ndarray:
    """World pose of ``link`` by walking the URDF joints in float64 (independent of the compiled
    program): T = T_parent origin motion(axis, value), active joints from q, mimics followed."""
    desc = robot.description
    values = dict(zip(robot.joint_names, np.asarray(q, dtype=float)))
    by_child = {j.child: j for j in desc.joints}

    def value(j):
        if j.mimic is not None:
            return j.mimic.multiplier * value(next(x for x in desc.joints if x.name == j.mimic.joint)) + j.mimic.offset
        return values.get(j.name, 0.0)

    chain = []
    name = link
    while name in by_child:
        chain.append(by_child[name])
        name = by_child[name].parent
    T = base.copy()
    for j in reversed(chain):
        T = T @ j.origin @ joint_motion(j.type, j.axis, value(j) if j.type != "fixed" else 0.0)
    return T


def rot_angle(a: np.ndarray, b: np.ndarray) -> float:
    R = b[:3, :3] @ a[:3, :3].T
    return float(np.arccos(np.clip((np.trace(R) - 1) / 2, -1, 1)))


def valid_configs(robot, n: int, seed: int, env=None) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < n:
        q = rng.uniform(robot.lower, robot.upper)
        if robot.is_valid(q, env):
            out.append(q)
    return np.array(out)


# NOTE: parameters name robots rather than hold them: pytest keeps its collected items (and their
# parameters) in reference cycles that outlive the interpreter's last garbage collection, so a robot
# held there is never freed and nanobind reports its compiled model as leaked at exit
@pytest.mark.parametrize("name, link", [("panda", "panda_grasptarget"), ("panda", None), ("ur5", "tool0"),
                                        ("ur5", None)])
def test_solutions_reach_the_pose_within_limits_and_collision_free(isa, name, link):
    robot = {"panda": PANDA, "ur5": UR5}[name]
    target_link = link or ik_mod.default_link(robot, robot._program)
    for q in valid_configs(robot, 25, 1):
        goal = urdf_link_pose(robot, q, target_link)
        res = robot.ik(goal, link, n_solutions=3, seed=7)
        assert res.success and res.link == target_link
        for s, (pe, ae) in zip(res.solutions, res.errors):
            T = urdf_link_pose(robot, s, target_link)
            assert np.linalg.norm(T[:3, 3] - goal[:3, 3]) <= 1e-4 + 1e-5
            assert rot_angle(T, goal) <= 1e-3 + 1e-5
            assert pe <= 1e-4 and ae <= 1e-3
            assert np.all(s >= robot.lower) and np.all(s <= robot.upper)
            assert robot.is_valid(s)
        # distinct solutions
        sol = res.solutions
        for i in range(len(sol)):
            for k in range(i + 1, len(sol)):
                assert np.linalg.norm(sol[i] - sol[k]) >= ik_mod.DISTINCT * 0.999


@settings(max_examples=40)
@given(st.integers(0, 2**31 - 1))
def test_random_reachable_poses_are_solved_on_every_isa(isa, seed):
    (q,) = valid_configs(PANDA, 1, seed)
    goal = urdf_link_pose(PANDA, q, "panda_link7")
    res = PANDA.ik(goal, "panda_link7", seed=seed)
    assert res.success
    T = urdf_link_pose(PANDA, res.solutions[0], "panda_link7")
    assert np.linalg.norm(T[:3, 3] - goal[:3, 3]) <= 1.1e-4 and rot_angle(T, goal) <= 1.1e-3


def test_the_same_seed_gives_the_same_solutions():
    (q,) = valid_configs(PANDA, 1, 3)
    goal = urdf_link_pose(PANDA, q, "panda_hand")
    a = PANDA.ik(goal, "panda_hand", n_solutions=4, seed=11)
    b = PANDA.ik(goal, "panda_hand", n_solutions=4, seed=11)
    assert np.array_equal(a.solutions, b.solutions)


def test_a_quaternion_pose_is_the_same_goal_as_its_matrix():
    (q,) = valid_configs(UR5, 1, 5)
    goal = urdf_link_pose(UR5, q, "tool0")
    quat = simdplan.transforms.matrix_to_quat(goal[:3, :3])
    a = UR5.ik(goal, "tool0", seed=1)
    b = UR5.ik((goal[:3, 3], quat), "tool0", seed=1)
    assert np.allclose(a.solutions, b.solutions, atol=1e-6)


def test_masks_free_exactly_what_they_say():
    rng = np.random.default_rng(0)
    for q in valid_configs(PANDA, 10, 8):
        goal = urdf_link_pose(PANDA, q, "panda_hand")
        # rotate the goal about its own z: "free_z" must not care, the full pose must
        spin = np.eye(4)
        c, s = np.cos(1.0), np.sin(1.0)
        spin[:2, :2] = [[c, -s], [s, c]]
        spun = goal @ spin
        res = PANDA.ik(spun, "panda_hand", mask="free_z", n_solutions=4, seed=int(rng.integers(1000)))
        assert res.success
        for sol in res.solutions:
            T = urdf_link_pose(PANDA, sol, "panda_hand")
            assert np.linalg.norm(T[:3, 3] - goal[:3, 3]) <= 1.1e-4
            assert np.arccos(np.clip(T[:3, 2] @ goal[:3, 2], -1, 1)) <= 1.1e-3  # z axis placed
        pos = PANDA.ik(spun, "panda_hand", mask="position", n_solutions=4, seed=2)
        assert pos.success
        angles = []
        for sol in pos.solutions:
            T = urdf_link_pose(PANDA, sol, "panda_hand")
            assert np.linalg.norm(T[:3, 3] - goal[:3, 3]) <= 1.1e-4
            angles.append(rot_angle(T, spun))
        # the orientation really is free: solutions do not all hold the goal's orientation
        assert max(angles) > 1e-2


def test_obstacles_are_avoided_and_unreachable_poses_fail_cleanly():
    env = simdplan.Environment()
    env.add_box([0.45, 0.0, 0.3], half_extents=[0.05, 0.3, 0.3])
    for q in valid_configs(PANDA, 10, 9, env):
        goal = urdf_link_pose(PANDA, q, "panda_hand")
        res = PANDA.ik(goal, "panda_hand", env, n_solutions=3, seed=4)
        assert res.success
        assert all(PANDA.is_valid(s, env) for s in res.solutions)
    far = np.eye(4)
    far[:3, 3] = [3.0, 0.0, 0.5]  # 3 m away: out of reach
    res = PANDA.ik(far, "panda_hand")
    assert not res.success and res.solutions.shape == (0, PANDA.dof) and res.attempts == ik_mod.DEFAULT_MAX_ATTEMPTS
    res = PANDA.ik(far, "panda_hand", time_limit=0.002)
    assert not res.success and res.stopped == "time_limit" and res.time_ns < 0.5e9


def test_a_time_limit_lifts_the_restart_cap_and_stopped_says_why():
    far = np.eye(4)
    far[:3, 3] = [3.0, 0.0, 0.5]
    res = PANDA.ik(far, "panda_hand")
    assert res.attempts == ik_mod.DEFAULT_MAX_ATTEMPTS and res.stopped == "attempts"
    res = PANDA.ik(far, "panda_hand", max_attempts=50)
    assert res.attempts == 50 and res.stopped == "attempts"
    # both given: whichever comes first (here the cap, long before 10 s)
    res = PANDA.ik(far, "panda_hand", time_limit=10.0, max_attempts=100)
    assert res.attempts == 100 and res.stopped == "attempts"
    # a time limit alone: restarts go on until it passes, however many the default cap allows
    res = PANDA.ik(far, "panda_hand", time_limit=0.02)
    assert not res.success and res.stopped == "time_limit"
    (q,) = valid_configs(PANDA, 1, 12)
    goal = urdf_link_pose(PANDA, q, "panda_hand")
    res = PANDA.ik(goal, "panda_hand", n_solutions=2, time_limit=10.0, seed=3)
    assert len(res.solutions) == 2 and res.stopped == ""
    # ik_many counts restarts per pose
    both = PANDA.ik_many([goal, far], "panda_hand", max_attempts=30, seed=3)
    assert both[0].success and both[0].stopped == "" and (both[1].attempts, both[1].stopped) == (30, "attempts")
    for bad in (0, -1, 1.5, "10", True, ik_mod.MAX_ATTEMPTS + 1):
        with pytest.raises(ValueError, match="max_attempts"):
            PANDA.ik(goal, "panda_hand", max_attempts=bad)


def test_the_time_limit_counts_from_the_call_start(monkeypatch):
    """Reading the poses is part of the time limit: when it used the limit up, the search does not
    get a fresh one."""
    poses = [urdf_link_pose(UR5, q, "tool0") for q in valid_configs(UR5, 5, 13)]
    assert all(r.success for r in UR5.ik_many(poses, "tool0", time_limit=0.5))
    parse = ik_mod.parse_pose

    def slow_parse(pose):
        time.sleep(0.002)  # 5 poses: twice the limit below
        return parse(pose)

    monkeypatch.setattr(ik_mod, "parse_pose", slow_parse)
    results = UR5.ik_many(poses, "tool0", time_limit=0.005)
    assert all(not r.success and r.stopped == "time_limit" for r in results)


def test_pose_is_the_mask_of_the_whole_pose():
    (q,) = valid_configs(PANDA, 1, 14)
    goal = urdf_link_pose(PANDA, q, "panda_hand")
    a = PANDA.ik(goal, "panda_hand", mask="pose", n_solutions=2, seed=5)
    b = PANDA.ik(goal, "panda_hand", mask=None, n_solutions=2, seed=5)
    assert a.success and np.array_equal(a.solutions, b.solutions)
    assert "pose" in ik_mod.MASK_NAMES


def test_prismatic_joints_trees_and_a_base_pose():
    mobile = bench_robots.load("mobile_manipulator")
    for q in valid_configs(mobile, 5, 2):
        goal = urdf_link_pose(mobile, q, "arm_tool0")
        res = mobile.ik(goal, "arm_tool0", seed=3)
        assert res.success
        assert np.linalg.norm(urdf_link_pose(mobile, res.solutions[0], "arm_tool0")[:3, 3] - goal[:3, 3]) <= 1.1e-4
    dual = bench_robots.load("dual_arm")
    with pytest.raises(ValueError, match="2 ends"):
        dual.ik(np.eye(4))
    for q in valid_configs(dual, 3, 4):
        goal = urdf_link_pose(dual, q, "right_panda_hand")
        res = dual.ik(goal, "right_panda_hand", seed=1)
        assert res.success
    base = np.eye(4)
    base[:3, 3] = [0.5, -0.2, 0.1]
    base[:3, :3] = simdplan.transforms.euler_xyz_to_matrix(np.array([0.0, 0.0, 0.7]))
    urdf, srdf = simdplan.robots.builtin_paths("panda")
    moved = simdplan.Robot.from_urdf(urdf, srdf, base_pose=base)
    for q in valid_configs(moved, 5, 6):
        goal = urdf_link_pose(moved, q, "panda_hand", base)
        res = moved.ik(goal, "panda_hand", seed=2)
        assert res.success
        assert np.linalg.norm(urdf_link_pose(moved, res.solutions[0], "panda_hand", base)[:3, 3] - goal[:3, 3]) <= 1.1e-4


@pytest.mark.parametrize("pose, kwargs, match", [
    (np.full((4, 4), np.nan), {}, "finite"),
    (np.eye(3), {}, "shape"),
    (([0.3, 0, 0.5], [0, 0, 0, 2.0]), {}, "unit quaternion"),
    (([0.3, 0, np.nan], [0, 0, 0, 1.0]), {}, "position must be 3 finite"),
    (np.diag([1.0, 1.0, -1.0, 1.0]), {}, "proper rotation"),
    (np.eye(4), {"link": "no_such_link"}, "unknown link"),
    (np.eye(4), {"mask": "free_w"}, "mask must be one of"),
    (np.eye(4), {"n_solutions": 0}, "n_solutions"),
    (np.eye(4), {"position_tolerance": -1.0}, "position_tolerance"),
    (np.eye(4), {"time_limit": np.nan}, "time_limit"),
    (np.eye(4), {"seed": 1.7}, "seed must be an integer"),
    (np.eye(4), {"seed": -1}, r"seed must be in \[0, 18446744073709551615\]"),
    (np.eye(4), {"seed": 2**64}, "seed must be in"),
    (np.eye(4), {"seed": "3"}, "seed must be an integer"),
])
def test_bad_poses_and_options_raise_clear_errors(pose, kwargs, match):
    with pytest.raises(ValueError, match=match):
        PANDA.ik(pose, **kwargs)


def test_seeds_are_checked_not_wrapped():
    (q,) = valid_configs(UR5, 1, 15)
    goal = urdf_link_pose(UR5, q, "tool0")
    assert UR5.ik(goal, "tool0", seed=2**64 - 1).success and UR5.ik(goal, "tool0", seed=np.uint64(7)).success
    for bad in (1.7, -1, 2**64):
        with pytest.raises(ValueError, match="seed"):
            UR5.ik_many([goal], "tool0", seed=bad)


def test_ik_many_shares_the_lanes_among_poses_and_solves_each(isa):
    qs = valid_configs(UR5, 40, 10)
    poses = [urdf_link_pose(UR5, q, "tool0") for q in qs]
    results = UR5.ik_many(poses, "tool0", seed=5, n_solutions=2)
    assert len(results) == 40 and all(r.success for r in results)
    for pose, r in zip(poses, results):
        assert len(r.solutions) == 2
        for sol in r.solutions:
            T = urdf_link_pose(UR5, sol, "tool0")
            assert np.linalg.norm(T[:3, 3] - pose[:3, 3]) <= 1.1e-4 and rot_angle(T, pose) <= 1.1e-3
            assert UR5.is_valid(sol)
    again = UR5.ik_many(poses, "tool0", seed=5, n_solutions=2)
    assert all(np.array_equal(a.solutions, b.solutions) for a, b in zip(results, again))
    # an unreachable pose among reachable ones fails alone
    far = np.eye(4)
    far[:3, 3] = [3.0, 0.0, 0.5]
    mixed = UR5.ik_many([poses[0], far, poses[1]], "tool0", seed=5)
    assert [r.success for r in mixed] == [True, False, True]


# ----- pose goals in planning -----

def test_plan_to_a_pose_reaches_it_and_says_which():
    scene = simdplan.scenes.load(simdplan.scenes.example("panda_bookshelf"))
    robot, env = scene.robot, scene.env
    goal = urdf_link_pose(robot, scene.goals[0], "panda_grasptarget")
    other = urdf_link_pose(robot, scene.start, "panda_grasptarget")
    for planner in ("rrtc", "rrt", "prm"):
        res = simdplan.plan(robot, env, scene.start, goal_pose=[other, goal], goal_link="panda_grasptarget",
                            planner=planner, seed=2, time_limit=5.0)
        assert res.success, planner
        k = res.stats["goal_pose_index"]
        reached = urdf_link_pose(robot, res.path[-1], "panda_grasptarget")
        target = [other, goal][k]
        assert np.linalg.norm(reached[:3, 3] - target[:3, 3]) <= 1.1e-4 and rot_angle(reached, target) <= 1.1e-3
        assert np.array_equal(res.path[-1], res.stats["goal_configurations"][res.stats["goal_index"]])
        assert res.stats["ik_time_ns"] > 0 and res.stats["ik_solutions"] >= 1
        assert robot.is_valid(res.path[-1], env)


def test_plan_to_an_unreachable_pose_fails_cleanly_and_bad_calls_are_refused():
    far = np.eye(4)
    far[:3, 3] = [3.0, 0.0, 0.5]
    start = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7])
    res = simdplan.plan(PANDA, None, start, goal_pose=far, time_limit=0.2)
    assert not res.success and "no collision-free IK solution" in res.message
    with pytest.raises(ValueError, match="not both"):
        simdplan.plan(PANDA, None, start, [start], goal_pose=far)
    with pytest.raises(ValueError, match="needs goals"):
        simdplan.plan(PANDA, None, start)
    with pytest.raises(ValueError, match="ik_solutions"):
        simdplan.plan(PANDA, None, start, goal_pose=far, ik_solutions=0)


@pytest.mark.parametrize("kwargs, named", [
    ({"goal_mask": "bogus"}, "goal_mask applies"),
    ({"goal_mask": None, "ik_solutions": -3, "goal_link": "nope"}, "goal_link, ik_solutions apply"),
    ({"ik_solutions": 1}, "ik_solutions applies"),
])
def test_pose_goal_options_with_joint_goals_are_refused(kwargs, named):
    start = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7])
    with pytest.raises(ValueError, match=f"{named} to pose goals .goal_pose. only"):
        simdplan.plan(PANDA, None, start, [start], **kwargs)


BOOKSHELF = simdplan.scenes.load(simdplan.scenes.example("panda_bookshelf"))


@settings(max_examples=12, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), planner=st.sampled_from(["rrtc", "rrt", "prm"]),
       iterations=st.sampled_from([30, 400, 20_000]), robot_name=st.sampled_from(["panda", "ur5"]))
def test_the_core_plans_to_poses_as_the_python_reference_does(isa, seed, planner, iterations, robot_name):
    # plan(goal_pose=...) runs IK and planning in one core call (planner/pose_planning.hh); the
    # Python rounds of pose_goals.plan_to_poses are its reference: same seeds, so the same IK
    # solutions, the same goals in every round and the same path. Few iterations make early rounds
    # fail, so later rounds (more solutions) are compared too.
    if robot_name == "panda":
        robot, env, start, link = BOOKSHELF.robot, BOOKSHELF.env, BOOKSHELF.start, "panda_grasptarget"
        q_goals = [BOOKSHELF.goals[0]]
    else:
        robot, env, link = UR5, simdplan.Environment(), "tool0"
        env.add_box([0.45, 0.0, 0.3], half_extents=[0.05, 0.3, 0.3])
        start, *q_goals = valid_configs(UR5, 3, seed % 1000, env)
    poses = [urdf_link_pose(robot, q, link) for q in q_goals]
    opts = dict(seed=seed, time_limit=0, max_iterations=iterations)
    core = simdplan.plan(robot, env, start, goal_pose=poses, goal_link=link, planner=planner, **opts)
    s = PlannerSettings(planner=planner, **opts).validated()
    ref = pose_goals.plan_to_poses(simdplan.plan, robot, env, start, poses, s, link, None, 1, opts)
    assert core.success == ref.success
    assert np.array_equal(core.stats["goal_configurations"], ref.stats["goal_configurations"])
    assert np.array_equal(core.path, ref.path)
    assert core.stats["goal_pose_index"] == ref.stats["goal_pose_index"]
    assert core.stats["ik_solutions"] == ref.stats["ik_solutions"]
    assert core.stats["planning_time_ns"] > 0 and core.stats["ik_time_ns"] > 0


def test_unreached_goals_give_way_to_new_solutions_after_the_round_budget():
    # round r plans with at most round_iterations << 2r iterations (the last round: max_iterations),
    # then asks IK for twice as many new solutions: goals that cannot be reached do not hold the
    # whole time limit. A budget of one iteration cannot find the bookshelf path in round 0.
    robot, env = BOOKSHELF.robot, BOOKSHELF.env
    goal = urdf_link_pose(robot, BOOKSHELF.goals[0], "panda_grasptarget")
    s = PlannerSettings(seed=3, time_limit=0).validated()
    core = to_core(s, robot)
    _, request = robot.ik_request("panda_grasptarget")
    out = _core.plan_poses(robot.core, robot.compiled_env(env), "rrtc", BOOKSHELF.start, request, [goal], 5, 1, core)
    rounds = out["planned_rounds"]
    assert out["success"] and rounds > 1
    assert len(out["goals"]) == sum(1 << r for r in range(rounds))  # 1, 2, 4, ... new solutions per round
    # the default budget leaves this problem to round 0
    res = simdplan.plan(robot, env, BOOKSHELF.start, goal_pose=goal, goal_link="panda_grasptarget", seed=3)
    assert res.success and res.stats["ik_solutions"] == 1


def test_ompl_planners_plan_to_poses_through_the_python_rounds():
    pytest.importorskip("ompl")
    robot, env = BOOKSHELF.robot, BOOKSHELF.env
    goal = urdf_link_pose(robot, BOOKSHELF.goals[0], "panda_grasptarget")
    res = simdplan.plan(robot, env, BOOKSHELF.start, goal_pose=goal, goal_link="panda_grasptarget",
                        planner="ompl:RRTConnect", seed=1, time_limit=5.0)
    assert res.success and res.stats["goal_pose_index"] == 0 and res.stats["ik_solutions"] >= 1
    reached = urdf_link_pose(robot, res.path[-1], "panda_grasptarget")
    assert np.linalg.norm(reached[:3, 3] - goal[:3, 3]) <= 1.1e-4 and rot_angle(reached, goal) <= 1.1e-3
    assert simdplan.check_path(robot, env, res.path).ok


def test_pose_planning_keeps_its_time_limit_and_refuses_a_bad_start():
    far = np.eye(4)
    far[:3, 3] = [3.0, 0.0, 0.5]
    start = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7])
    t0 = time.perf_counter()
    res = simdplan.plan(PANDA, None, start, goal_pose=far, time_limit=0.1)
    assert time.perf_counter() - t0 < 0.6  # the limit, and slack for a loaded machine
    # IK gives up after its restarts (ik.DEFAULT_MAX_ATTEMPTS) in every round, before the limit
    assert not res.success and "no collision-free IK solution" in res.message and res.stats["goal_pose_index"] == -1
    goal = urdf_link_pose(BOOKSHELF.robot, BOOKSHELF.goals[0], "panda_grasptarget")
    crash = BOOKSHELF.start.copy()
    crash[1] = BOOKSHELF.robot.upper[1] + 0.1
    with pytest.raises(InvalidProblemError, match="start is invalid"):
        simdplan.plan(BOOKSHELF.robot, BOOKSHELF.env, crash, goal_pose=goal, goal_link="panda_grasptarget")
    with pytest.raises(ValueError, match="start must have shape"):
        simdplan.plan(PANDA, None, start[:3], goal_pose=goal)
    with pytest.raises(ValueError, match="finite"):
        simdplan.plan(PANDA, None, np.full(7, np.nan), goal_pose=goal)
    # a start just outside a limit is moved onto it, as for joint goals
    near = BOOKSHELF.start.copy()
    near[0] = BOOKSHELF.robot.upper[0] + 1e-6
    with pytest.warns(LimitClampWarning):
        res = simdplan.plan(BOOKSHELF.robot, BOOKSHELF.env, near, goal_pose=goal, goal_link="panda_grasptarget",
                            seed=1)
    assert res.success and res.stats["limit_clamped"] == 1 and res.path[0][0] == BOOKSHELF.robot.upper[0]
    # the core refuses a request made for another robot
    _, request = UR5.ik_request("tool0")
    with pytest.raises(ValueError, match="another robot"):
        PANDA.core.ik(simdplan.Environment().compiled(), request, [goal], 0, 0.0)


@pytest.mark.parametrize("planner", ["rrtc", "prm", "ompl:RRTConnect"])
def test_an_invalid_start_is_refused_whether_or_not_the_pose_is_reachable(planner):
    if planner.startswith("ompl:"):
        pytest.importorskip("ompl")
    robot, env = BOOKSHELF.robot, BOOKSHELF.env
    reachable = urdf_link_pose(robot, BOOKSHELF.goals[0], "panda_grasptarget")
    far = np.eye(4)
    far[:3, 3] = [3.0, 0.0, 0.5]
    crash = BOOKSHELF.start.copy()
    crash[1] = robot.upper[1] + 0.1
    for goal in (reachable, far):
        with pytest.raises(InvalidProblemError, match="start is invalid: joint panda_joint2"):
            simdplan.plan(robot, env, crash, goal_pose=goal, goal_link="panda_grasptarget", planner=planner,
                          time_limit=1.0)
    if planner == "rrtc":  # plan_many's pose tasks as well
        scene = dataclasses.replace(BOOKSHELF, start=crash, goals=np.zeros((0, robot.dof)), goal_poses=[far],
                                    goal_link="panda_grasptarget", goal_mask=None)
        (res,) = simdplan.plan_many([scene], workers=1)
        assert res.error == "InvalidProblemError" and "start is invalid" in res.message
    # a start just outside a limit is still moved onto it, not refused
    near = BOOKSHELF.start.copy()
    near[0] = robot.upper[0] + 1e-6
    res = simdplan.plan(robot, env, near, goal_pose=far, planner=planner, time_limit=0.2)
    assert not res.success and "no collision-free IK solution" in res.message


def test_certified_pose_plans_prove_their_edges():
    goal = urdf_link_pose(BOOKSHELF.robot, BOOKSHELF.goals[0], "panda_grasptarget")
    res = simdplan.plan(BOOKSHELF.robot, BOOKSHELF.env, BOOKSHELF.start, goal_pose=goal,
                        goal_link="panda_grasptarget", link="certified", seed=4, time_limit=5.0)
    assert res.success and res.stats["link"] == "certified" and res.stats["edges_proven"] > 0
    assert simdplan.check_path(BOOKSHELF.robot, BOOKSHELF.env, res.path, certified=True).ok


# ----- scene files and the command line -----

POSE_SCENE = """robot: panda
obstacles:
  - {type: box, position: [0.6, 0.0, 0.2], half_extents: [0.1, 0.3, 0.2]}
start: [0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7]
goal_poses:
  - {position: [0.5, 0.2, 0.6], quat: [1, 0, 0, 0]}
  - {position: [0.4, -0.3, 0.5], euler: [3.14159, 0, 0]}
goal_link: panda_hand
goal_mask: free_z
"""


def test_scene_files_give_goal_poses_and_simdplan_plan_plans_them(tmp_path, capsys):
    from simdplan import cli

    path = tmp_path / "pose.yaml"
    path.write_text(POSE_SCENE)
    scene = simdplan.scenes.load(path)
    assert len(scene.goal_poses) == 2 and scene.goals.shape == (0, 7)
    assert scene.goal_link == "panda_hand" and scene.goal_mask == "free_z"
    back = simdplan.scenes.load(simdplan.scenes.save(scene, tmp_path / "again.json"))
    assert np.allclose(back.goal_poses, scene.goal_poses, atol=1e-6) and back.goal_mask == "free_z"
    out = tmp_path / "r.json"
    assert cli.main(["plan", str(path), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "goal poses" in text and "verified:              yes" in text
    import json

    stats = json.loads(out.read_text())["stats"]
    end = np.array(json.loads(out.read_text())["path"][-1])
    pose = scene.goal_poses[stats["goal_pose_index"]]
    T = urdf_link_pose(PANDA, end, "panda_hand")
    assert np.linalg.norm(T[:3, 3] - pose[:3, 3]) <= 1.1e-4 and T[:3, 2] @ pose[:3, 2] > 1 - 1e-6


@pytest.mark.parametrize("edit, key, match", [
    ("goal_poses:\n  - {quat: [0, 0, 0, 1]}\n", "goal_poses[0].position", "missing"),
    ("goal_poses:\n  - {position: [0.5, 0, 0.5], quat: [0, 0, 0, 3]}\n", "goal_poses[0]", "unit quaternion"),
    ("goal_poses: []\n", "goal_poses", "non-empty list"),
    ("goal_pose: {position: [0.5, 0, 0.5]}\ngoal_link: hand\n", "goal_link", "unknown link"),
    ("goal_pose: {position: [0.5, 0, 0.5]}\ngoal_mask: free_w\n", "goal_mask", "must be one of"),
    ("goal_pose: {position: [0.5, 0, 0.5]}\ngoal: [0, 0, 0, -2, 0, 2, 0]\n", "goal_pose", "not both"),
])
def test_bad_goal_poses_name_their_key(tmp_path, edit, key, match):
    head = POSE_SCENE.split("goal_poses:")[0]
    path = tmp_path / "bad.yaml"
    path.write_text(head + edit)
    with pytest.raises(simdplan.scenes.SceneError, match=match) as exc:
        simdplan.scenes.load(path)
    assert f": {key}:" in str(exc.value)


def test_simdplan_ik_prints_solutions_and_exits_1_when_out_of_reach(capsys):
    from simdplan import cli

    assert cli.main(["ik", "panda", "--pose", "0.4", "0.1", "0.5", "1", "0", "0", "0", "--link", "panda_hand",
                     "--solutions", "2", "--json"]) == 0
    import json

    doc = json.loads(capsys.readouterr().out)
    assert doc["success"] and len(doc["solutions"]) == 2 and doc["link"] == "panda_hand"
    for q in doc["solutions"]:
        T = urdf_link_pose(PANDA, np.array(q), "panda_hand")
        assert np.linalg.norm(T[:3, 3] - [0.4, 0.1, 0.5]) <= 1.1e-4
    assert cli.main(["ik", "panda_bookshelf", "--pose", "3", "0", "0.5", "0", "0", "0", "1"]) == 1
    assert "no solution" in capsys.readouterr().err
    assert cli.main(["ik", "panda", "--pose", "0.4", "0.1", "0.5", "1", "0", "0", "1"]) == 2
    assert "unit quaternion" in capsys.readouterr().err


def test_plan_many_plans_goal_pose_scenes_as_plan_does(tmp_path):
    path = tmp_path / "pose.yaml"
    path.write_text(POSE_SCENE)
    pose_scene = simdplan.scenes.load(path)
    table = simdplan.scenes.load(simdplan.scenes.example("panda_table"))
    results = simdplan.plan_many([pose_scene, table, pose_scene], workers=2, seed=3)
    assert all(r.success for r in results)
    for i in (0, 2):
        seed = simdplan.planner.task_seed(3, i)
        alone = simdplan.plan(pose_scene.robot, pose_scene.env, pose_scene.start, goal_pose=pose_scene.goal_poses,
                              goal_link="panda_hand", goal_mask="free_z", seed=seed)
        assert np.array_equal(alone.path, results[i].path) and results[i].stats["seed"] == seed
        assert results[i].stats["goal_pose_index"] in (0, 1)
    # pose tasks plan on the worker threads; their refusals come back as results, as plan's errors
    crash = dataclasses.replace(pose_scene, start=np.array(pose_scene.start) + np.array([0, 5.0, 0, 0, 0, 0, 0]))
    unknown = dataclasses.replace(pose_scene, goal_link="no_such_link")
    none_goals = dataclasses.replace(pose_scene, goals=None)  # a pose scene's goals: (0, dof) or None
    bad = simdplan.plan_many([crash, unknown, none_goals], workers=2, seed=3)
    assert bad[0].error == "InvalidProblemError" and "start" in bad[0].message
    assert bad[1].error == "ValueError" and "no_such_link" in bad[1].message
    assert bad[2].success and np.array_equal(bad[2].path, results[2].path)


def test_no_ik_solution_says_whether_the_time_limit_cut_it_short():
    """A pose no IK solution reaches: plan and plan_many (a pose-goal Scene, planned on a worker) both
    fail without a plan and report the time limit only when it cut the IK short."""
    far = np.eye(4)
    far[:3, 3] = [3.0, 0.0, 0.5]
    start = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7])
    for limit, stopped in ((1e-4, "time_limit"), (0.5, "")):
        r = simdplan.plan(PANDA, None, start, goal_pose=far, time_limit=limit)
        scene = dataclasses.replace(BOOKSHELF, robot=PANDA, env=simdplan.Environment(), start=start,
                                    goals=np.zeros((0, PANDA.dof)), goal_poses=[far], goal_link=None, goal_mask=None,
                                    settings=dataclasses.replace(BOOKSHELF.settings, time_limit=limit))
        m = simdplan.plan_many([scene], workers=1)[0]
        for res in (r, m):
            assert not res.success and "no collision-free IK solution" in res.message
            assert res.stats["stopped"] == stopped and len(res.path) == 0
