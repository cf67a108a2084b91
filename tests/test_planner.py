"""Planners (RRT-Connect, RRT, PRM) end to end, with every returned path verified independently.

Verification: every edge is re-checked at the planner's own resolution (C++ Link, and the NumPy
reference on one problem per class), and at 10x that resolution. Discrete Link can step over a
shallow graze between two samples (certified Link is a separate issue), so at 10x we assert that
any collision found is shallow: an edge the planner never checked would show deep penetration.
"""

import json
import os

import numpy as np
import pytest

import simdplan
import simdplan.scenes
from simdplan.planner import InvalidProblemError, Roadmap

import reference as ref

PROBLEMS = os.path.join(simdplan.scenes.DATA_DIR, "panda", "problems.json")
SHALLOW = 0.01  # metres: deepest graze tolerated between samples at 10x (5.35 mm seen over all 700 MBM paths)


@pytest.fixture(scope="module")
def panda():
    return simdplan.robots.load("panda")


@pytest.fixture(scope="module")
def mbm():
    with open(PROBLEMS) as f:
        return json.load(f)["problems"]


def specs_of(problem) -> list:
    specs = [{"kind": "sphere", "center": o["position"], "radius": o["radius"]} for o in problem["sphere"]]
    specs += [{"kind": "box", "position": o["position"], "quat": o["orientation_quat_xyzw"],
               "half_extents": o["half_extents"]} for o in problem["box"]]
    specs += [{"kind": "cylinder", "position": o["position"], "quat": o["orientation_quat_xyzw"],
               "radius": o["radius"], "length": o["length"]} for o in problem["cylinder"]]
    return specs


def edge_samples(robot, a, b, resolution):
    n = robot.motion_samples(a, b, resolution)
    return a + np.linspace(0.0, 1.0, n + 1)[:, None] * (b - a)


def verify(robot, env, result, start, goals, resolution, specs=None):
    path = result.path
    assert result.success and path.ndim == 2 and path.shape[1] == robot.dof and len(path) >= 2
    assert np.array_equal(path[0], np.asarray(start, float))
    assert any(np.array_equal(path[-1], np.asarray(g, float)) for g in np.atleast_2d(goals))
    assert np.all(path >= robot.lower - 1e-12) and np.all(path <= robot.upper + 1e-12)
    for a, b in zip(path[:-1], path[1:]):
        assert robot.is_motion_valid(a, b, env, resolution=resolution)
        if specs is not None:  # the independent float64 reference, sample by sample
            for q in edge_samples(robot, a, b, resolution):
                rep = ref.check(robot, q, specs)
                assert rep.valid or rep.margin < 1e-5, f"reference finds a collision at {q.tolist()}"
    fine = simdplan.check_path(robot, env, path, resolution=resolution, factor=10)
    assert fine.bad_waypoints == 0
    assert fine.max_depth_m < SHALLOW, f"{fine.max_depth_m * 1000:.1f} mm penetration between checked samples"


CLASSES = ["table_pick", "table_under_pick", "box", "bookshelf_small", "bookshelf_tall", "bookshelf_thin", "cage"]


@pytest.mark.parametrize("cls", CLASSES)
def test_rrtc_solves_mbm_samples(panda, mbm, cls):
    for i, problem in enumerate(p for p in mbm[cls] if p["valid"]):
        if i == 3:
            break
        specs = specs_of(problem)
        env, _ = ref.make_environment(specs)
        res = simdplan.plan(panda, env, problem["start"], problem["goals"], seed=7, time_limit=10)
        assert res.success, f"{cls} {problem['index']}: {res.message}"
        verify(panda, env, res, problem["start"], problem["goals"], panda.resolution,
               specs=specs if i == 0 else None)
        st = res.stats
        for key in ("iterations", "collision_checks", "planning_time_ns", "simplify_time_ns", "initial_cost",
                    "final_cost", "goal_index", "edge_checks", "tree_nodes", "waypoints", "isa"):
            assert key in st
        assert st["final_cost"] <= st["initial_cost"] + 1e-6
        assert st["final_cost"] == pytest.approx(res.cost, rel=1e-5)


@pytest.mark.parametrize("planner,classes", [("rrt", ["table_pick", "table_under_pick"]), ("prm", ["table_pick", "box"])])
def test_other_planners_solve_easy_problems(panda, mbm, planner, classes):
    # plain RRT is the weakest of the three in 7-D; it gets the problems it can solve in seconds
    for cls in classes:
        problem = next(p for p in mbm[cls][1:] if p["valid"])
        env, _ = ref.make_environment(specs_of(problem))
        res = simdplan.plan(panda, env, problem["start"], problem["goals"], planner=planner, seed=3, time_limit=10)
        assert res.success, f"{planner} on {cls}: {res.message}"
        verify(panda, env, res, problem["start"], problem["goals"], panda.resolution)


def test_every_isa_plans_valid_paths(panda, mbm):
    problem = mbm["bookshelf_tall"][1]
    env, _ = ref.make_environment(specs_of(problem))
    old = simdplan.isa()
    try:
        for isa in simdplan.available_isas():
            simdplan.set_isa(isa)
            res = simdplan.plan(panda, env, problem["start"], problem["goals"], seed=2, time_limit=10)
            assert res.success and res.stats["isa"] == isa
            verify(panda, env, res, problem["start"], problem["goals"], panda.resolution)
    finally:
        simdplan.set_isa(old)


def test_deterministic_for_a_seed(panda, mbm):
    problem = mbm["cage"][2]
    env, _ = ref.make_environment(specs_of(problem))
    a = simdplan.plan(panda, env, problem["start"], problem["goals"], seed=11, time_limit=0, max_iterations=50_000)
    b = simdplan.plan(panda, env, problem["start"], problem["goals"], seed=11, time_limit=0, max_iterations=50_000)
    c = simdplan.plan(panda, env, problem["start"], problem["goals"], seed=12, time_limit=0, max_iterations=50_000)
    assert a.success and np.array_equal(a.path, b.path) and a.stats["iterations"] == b.stats["iterations"]
    assert c.success and (len(c.path) != len(a.path) or not np.array_equal(c.path, a.path))


@pytest.mark.parametrize("sampler,dd", [("halton", False), ("uniform", True), ("halton", True)])
def test_sampler_and_dynamic_domain_variants(panda, mbm, sampler, dd):
    problem = mbm["bookshelf_thin"][0]
    env, _ = ref.make_environment(specs_of(problem))
    res = simdplan.plan(panda, env, problem["start"], problem["goals"], sampler=sampler, dynamic_domain=dd, seed=5,
                        time_limit=10)
    assert res.success
    verify(panda, env, res, problem["start"], problem["goals"], panda.resolution)


def test_dynamic_domain_bounds_a_node_only_after_it_fails(panda, mbm):
    # a node's domain is unbounded until an extension from it fails (Yershova et al.), so even with
    # a tiny dd_radius the first iteration extends from the start; bounded from the outset, the
    # sample would be rejected and only the direct start-goal edge would be checked
    problem = mbm["bookshelf_thin"][0]
    env, _ = ref.make_environment(specs_of(problem))
    res = simdplan.plan(panda, env, problem["start"], problem["goals"], dynamic_domain=True, dd_radius=1e-3,
                        dd_min_radius=1e-3, seed=5, max_iterations=1, simplify=False)
    assert not res.success and res.stats["iterations"] == 1
    assert res.stats["edge_checks"] >= 2


def test_several_goals_reach_one_of_them(panda, mbm):
    problem = mbm["bookshelf_small"][0]
    env, _ = ref.make_environment(specs_of(problem))
    goal = np.asarray(problem["goals"][0])
    invalid_far = np.asarray(problem["start"])  # a second goal: the start itself is valid too
    goals = np.stack([goal, invalid_far + 0.0])
    res = simdplan.plan(panda, env, problem["start"], goals, seed=1)
    assert res.success and res.stats["goal_index"] in (0, 1)
    assert np.array_equal(res.path[-1], goals[res.stats["goal_index"]])


def test_simplify_off_keeps_the_raw_path_and_interpolation_bounds_steps(panda, mbm):
    problem = mbm["cage"][0]
    env, _ = ref.make_environment(specs_of(problem))
    raw = simdplan.plan(panda, env, problem["start"], problem["goals"], seed=4, simplify=False)
    assert raw.success and raw.stats["final_cost"] == pytest.approx(raw.stats["initial_cost"])
    fine = simdplan.plan(panda, env, problem["start"], problem["goals"], seed=4, interpolate=10.0)
    assert fine.success and not fine.message
    steps = np.linalg.norm(np.diff(fine.path, axis=0), axis=1)
    assert steps.max() <= 0.1 + 1e-5
    verify(panda, env, fine, problem["start"], problem["goals"], panda.resolution)


def test_shortcut_min_gain_is_the_least_shortening_a_shortcut_may_bring(panda, mbm):
    problem = mbm["cage"][0]
    env, _ = ref.make_environment(specs_of(problem))

    def plan(**kw):
        return simdplan.plan(panda, env, problem["start"], problem["goals"], seed=4, **kw)

    # no shortcut shortens its stretch by all of it: a floor of 1 takes none, as no attempts at all
    assert np.array_equal(plan(shortcut_min_gain=1.0).path, plan(simplify_iterations=0).path)
    # draws below the floor are not checked (planning is the same for a seed: only simplification differs)
    checks = [sum(simdplan.plan(panda, env, problem["start"], problem["goals"], seed=s, shortcut_min_gain=g)
                  .stats["collision_checks"] for s in range(5)) for g in (0.0, 0.2)]
    assert checks[0] > checks[1]
    for g in (0.0, 0.01):
        res = plan(shortcut_min_gain=g)
        assert res.success
        verify(panda, env, res, problem["start"], problem["goals"], panda.resolution)


def test_failure_is_reported_not_raised(panda, mbm):
    problem = mbm["cage"][0]
    env, _ = ref.make_environment(specs_of(problem))
    res = simdplan.plan(panda, env, problem["start"], problem["goals"], max_iterations=1, time_limit=0)
    assert not res.success and res.path.shape == (0, panda.dof) and "no path found" in res.message


def test_invalid_start_and_goal_are_named(panda, mbm):
    env = simdplan.Environment()
    env.add_box([0.0, 0.0, 0.3], half_extents=[0.3, 0.3, 0.3], name="crate")
    q_ok = np.array([0, -0.785, 0, -2.356, 0, 1.571, 0.785])
    env_free = simdplan.Environment()
    with pytest.raises(InvalidProblemError, match=r"start is invalid.*crate"):
        simdplan.plan(panda, env, q_ok, q_ok)
    with pytest.raises(InvalidProblemError, match=r"goal is invalid.*outside its limits"):
        simdplan.plan(panda, env_free, q_ok, np.full(7, 5.0))
    with pytest.raises(InvalidProblemError, match=r"goal 1 is invalid"):
        simdplan.plan(panda, env_free, q_ok, [q_ok, np.full(7, 5.0)])


@pytest.mark.parametrize("kwargs,match", [
    ({"planner": "astar"}, "planner must be one of"),
    ({"bogus": 1}, "unknown planner settings"),
    ({"range": -1.0}, "range"),
    ({"time_limit": float("nan")}, "time_limit"),
    ({"sampler": "sobol"}, "sampler"),
    ({"seed": 1.5}, "seed"),
    ({"shortcut_min_gain": 1.5}, "shortcut_min_gain"),
    ({"shortcut_min_gain": -0.1}, "shortcut_min_gain"),
])
def test_bad_settings(panda, kwargs, match):
    q = np.array([0, -0.785, 0, -2.356, 0, 1.571, 0.785])
    with pytest.raises(ValueError, match=match):
        simdplan.plan(panda, None, q, q, **kwargs)


def test_bad_shapes(panda):
    q = np.array([0, -0.785, 0, -2.356, 0, 1.571, 0.785])
    with pytest.raises(ValueError, match="start must have shape"):
        simdplan.plan(panda, None, q[:6], q)
    with pytest.raises(ValueError, match="goals must have shape"):
        simdplan.plan(panda, None, q, np.zeros((2, 6)))
    with pytest.raises(ValueError, match="finite"):
        simdplan.plan(panda, None, q, np.full(7, np.nan))


def test_plan_result_save(tmp_path, panda, mbm):
    problem = mbm["box"][0]
    env, _ = ref.make_environment(specs_of(problem))
    res = simdplan.plan(panda, env, problem["start"], problem["goals"], seed=1)
    res.save(tmp_path / "p.json")
    data = json.loads((tmp_path / "p.json").read_text())
    assert data["success"] and np.allclose(data["path"], res.path) and data["joint_names"] == panda.joint_names
    res.save(tmp_path / "p.csv")
    rows = (tmp_path / "p.csv").read_text().strip().splitlines()
    assert rows[0].split(",") == panda.joint_names and len(rows) == len(res.path) + 1
    assert np.allclose(np.array([r.split(",") for r in rows[1:]], float), res.path)
    with pytest.raises(ValueError, match="json or .csv"):
        res.save(tmp_path / "p.txt")


def test_roadmap_is_reused_across_queries(panda, mbm):
    problem = mbm["table_pick"][0]
    env, _ = ref.make_environment(specs_of(problem))
    rm = Roadmap(panda, env, seed=2, prm_neighbors=8)
    assert rm.grow(300) == 300 and rm.vertices > 0
    first = rm.query(problem["start"], problem["goals"])
    assert first.success
    verify(panda, env, first, problem["start"], problem["goals"], panda.resolution)
    n = rm.vertices
    second = rm.query(first.path[-1], problem["start"])
    assert second.success and rm.vertices <= n + 2 + 64 * 4
    with pytest.raises(ValueError, match="unknown planner settings"):
        rm.query(problem["start"], problem["goals"], bogus=1)
    env.add_sphere([5, 5, 5], 0.1)
    with pytest.raises(RuntimeError, match="environment changed"):
        rm.query(problem["start"], problem["goals"])


def test_continuous_joints_are_wrapped_before_planning(tmp_path):
    urdf = tmp_path / "spinner.urdf"
    urdf.write_text("""<robot name="spinner">
      <link name="base"/>
      <link name="arm"><collision><origin xyz="0.5 0 0"/><geometry><sphere radius="0.05"/></geometry></collision></link>
      <joint name="spin" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
      <link name="tip"><collision><origin xyz="0.3 0 0"/><geometry><sphere radius="0.05"/></geometry></collision></link>
      <joint name="bend" type="revolute"><parent link="arm"/><child link="tip"/><origin xyz="0.5 0 0"/>
        <axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
    </robot>""")
    robot = simdplan.Robot.from_urdf(urdf)
    env = simdplan.Environment()
    env.add_sphere([0.0, 0.9, 0.0], 0.1)  # an obstacle at +90 deg, off the short way round
    start, goal = np.array([4.0, 0.5]), np.array([0.0, -0.5])
    res = simdplan.plan(robot, env, start, goal, seed=0)
    assert res.success
    assert res.path[0][0] == pytest.approx(4.0 - 2 * np.pi) and res.path[0][1] == 0.5
    assert np.all(np.abs(res.path[:, 0]) <= np.pi)
    verify(robot, env, res, res.path[0], goal, robot.resolution)
