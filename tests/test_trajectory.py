"""Timed trajectories: blended geometry, limits held at 1 kHz, the executed curve checked, clear errors."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdplan
from simdplan import cli
from simdplan.planner.blend import MIN_DEVIATION, BlendedPath, arc_chords, sphere_speed
from simdplan.planner.trajectory import DEFAULT_ACCELERATION_RATE, LIMIT_SLACK, MAX_SAMPLES, time_parameterize
from simdplan.robots import RobotBuilder

pytest.importorskip("toppra")
pytest.importorskip("ruckig")

PANDA = simdplan.robots.load("panda")


def free_arm(dof: int):
    """A chain of ``dof`` revolute joints (velocity limit 2) with one small sphere per link and no
    self-collision pairs: every configuration and motion is free, so only the timing is tested."""
    b = RobotBuilder(f"free{dof}").link("l0")
    for i in range(dof):
        b.link(f"l{i + 1}", spheres=[[0.0, 0.0, 0.05, 0.01]])
        b.joint(f"j{i}", "revolute", f"l{i}", f"l{i + 1}", xyz=[0, 0, 0.1], axis=[0, i % 2, 1 - i % 2],
                limits=(-2.5, 2.5), velocity=2.0)
    for i in range(dof + 1):
        for k in range(i + 1, dof + 1):
            b.disable_collisions(f"l{i}", f"l{k}")
    return b.build()


def polyline(draw, dof: int, lo, hi):
    k = draw(st.integers(2, 6))
    rows = draw(st.lists(st.lists(st.floats(0.0, 1.0), min_size=dof, max_size=dof), min_size=k, max_size=k))
    return lo + np.array(rows) * (hi - lo)


def test_a_corner_whose_short_edge_leaves_less_than_the_least_blend_stays_sharp():
    # found by the property test below: an edge of 2e-16 caps the arc far below MIN_DEVIATION
    path = BlendedPath(np.array([[0.0, 0.0], [2.220446049250313e-16, 0.0], [0.0, 1.0]]), np.array([0.25]))
    assert [c["kind"] for c in path.corners] == ["stop"] and list(path.used_deviations()) == [0.0]
    assert np.allclose(path(path.length), [0.0, 1.0], atol=1e-12)


def test_stretches_below_the_least_length_are_not_timed_and_the_motion_ends_there():
    # found by the property test below: TOPP-RA could not grid a stretch of 2e-16 nor control 1e-10
    robot = free_arm(1)
    for q in ([[0.0], [2.220446049250313e-16]], [[0.0], [1e-10]], [[0.0], [1e-10], [0.5]]):
        tr = time_parameterize(robot, np.array(q), None)
        assert np.allclose(tr.q[0], q[0], atol=1e-12) and np.allclose(tr.q[-1], q[-1], atol=1e-9)
        assert np.allclose(tr.qd[-1], 0, atol=1e-6)


def test_a_path_of_one_waypoint_is_a_motion_of_no_duration_there():
    q = np.array([[0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7]])
    for path in (q, np.vstack([q, q])):
        tr = time_parameterize(PANDA, path, None)
        assert tr.duration == 0.0 and np.array_equal(tr.q, q) and not tr.qd.any()


def distance_to_curve(path: BlendedPath, q: np.ndarray) -> np.ndarray:
    """Distance from each row of q to the curve, up to 1e-4 (the curve sampled 2e-4 apart)."""
    s = np.linspace(0.0, path.length, max(2, int(path.length / 2e-4) + 1))
    pts = path(s)
    return np.array([np.linalg.norm(pts - x, axis=1).min() for x in q])


# ----- geometry -----

@settings(max_examples=60)
@given(st.data())
def test_blend_passes_each_corner_at_its_deviation_with_unit_tangents(data):
    dof = data.draw(st.integers(2, 7))
    q = polyline(data.draw, dof, -np.ones(dof), np.ones(dof))
    dev = data.draw(st.floats(0.0, 0.3))
    path = BlendedPath(q, np.full(len(q) - 2, dev))
    assert np.allclose(path(0.0), path.waypoints[0], atol=1e-12)
    assert np.allclose(path(path.length), path.waypoints[-1], atol=1e-12)
    s = np.linspace(0.0, path.length, 4001)
    assert np.allclose(np.linalg.norm(path(s, 1), axis=1), 1.0, atol=1e-9) or path.length == 0
    used = path.used_deviations()
    for c, d in zip(path.corners, used):
        if c["kind"] == "arc":
            # the arc's middle is its closest point to the corner, at the deviation used
            assert MIN_DEVIATION <= d <= dev + 1e-9
            inside = path(np.linspace(c["s0"], c["s1"], 2001))
            closest = np.linalg.norm(inside - path.waypoints[c["index"]], axis=1)
            assert closest.min() == pytest.approx(d, rel=1e-6, abs=1e-12)
            assert np.linalg.norm(path(0.5 * (c["s0"] + c["s1"])) - path.waypoints[c["index"]]) == pytest.approx(d)
        else:
            assert d == 0.0
    # the curvature (order 2) is the derivative of the tangent away from the piece boundaries
    mid = s[1:-1]
    h = 1e-6
    fd = (path(np.minimum(mid + h, path.length), 1) - path(np.maximum(mid - h, 0.0), 1)) / (2 * h)
    bounds = np.array([p[1] for p in path.pieces] + [path.length])
    away = np.abs(mid[:, None] - bounds[None, :]).min(axis=1) > 1e-4
    assert np.allclose(fd[away], path(mid[away], 2), atol=1e-4)


def test_arc_chords_stay_within_their_sagitta():
    q = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]])
    (corner,) = BlendedPath(q, [0.2]).arcs()
    for tol in (1e-2, 1e-4):
        pts = arc_chords(corner, tol)
        th = np.linspace(0, corner["alpha"], 5001)[:, None]
        arc = corner["centre"] + corner["r"] * (corner["x"] * np.cos(th) + corner["y"] * np.sin(th))
        # every arc point within tol of the polyline through the chord points
        seg_a, seg_b = pts[:-1], pts[1:]
        d = seg_b - seg_a
        u = np.clip(((arc[:, None, :] - seg_a[None]) * d[None]).sum(-1) / (d * d).sum(-1)[None], 0, 1)
        dist = np.linalg.norm(arc[:, None, :] - (seg_a[None] + u[..., None] * d[None]), axis=-1).min(axis=1)
        assert dist.max() <= tol * (1 + 1e-9)


def test_sphere_speed_bounds_every_sphere_move():
    rng = np.random.default_rng(3)
    k = sphere_speed(PANDA)
    for _ in range(200):
        a = rng.uniform(PANDA.lower, PANDA.upper)
        b = a + rng.normal(0, 1e-3, PANDA.dof)
        moved = np.linalg.norm(PANDA.fk(a)[:, :3] - PANDA.fk(b)[:, :3], axis=1).max()
        assert moved <= k * np.linalg.norm(b - a) * (1 + 1e-4) + 1e-6


# ----- time parameterization -----

@settings(max_examples=25)
@given(st.data(), st.floats(0.2, 1.0), st.floats(0.2, 1.0), st.floats(0.0, 0.2))
def test_limits_hold_at_1khz_and_the_motion_starts_and_ends_at_rest_on_the_path(data, vs, as_, dev):
    robot = free_arm(data.draw(st.integers(1, 7)))
    q = polyline(data.draw, robot.dof, robot.lower, robot.upper)
    v = robot.velocity_limits * vs
    a = 3.0 * robot.velocity_limits * as_
    tr = time_parameterize(robot, q, None, velocity_limits=v, acceleration_limits=a, max_deviation=dev)
    worst = tr.limit_violations(v, a)
    assert worst["velocity"] <= 1 + LIMIT_SLACK and worst["acceleration"] <= 1 + LIMIT_SLACK
    assert np.allclose(tr.q[0], q[0], atol=1e-12) and np.allclose(tr.q[-1], q[-1], atol=1e-9)
    assert np.allclose(tr.qd[0], 0, atol=1e-9) and np.allclose(tr.qd[-1], 0, atol=1e-6)
    # positions lie on the blended curve, never off it
    path = BlendedPath(q, np.full(len(q) - 2, dev))
    assert distance_to_curve(path, tr.q[:: max(1, len(tr.q) // 40)]).max() < 1e-3


def test_a_path_that_does_not_move_takes_no_time():
    q = np.zeros((3, 3))
    tr = time_parameterize(free_arm(3), q)
    assert tr.duration == 0.0 and np.array_equal(tr.q[0], q[0])


def test_jerk_limits_move_rest_to_rest_along_each_edge():
    rng = np.random.default_rng(0)
    q = rng.uniform(PANDA.lower, PANDA.upper, (4, PANDA.dof)) * 0.5
    v, a, j = PANDA.velocity_limits, 2 * PANDA.velocity_limits, np.full(PANDA.dof, 40.0)
    tr = time_parameterize(PANDA, q, jerk_limits=j)
    assert tr.stats["method"] == "ruckig" and tr.stats["stopped"] == 2
    worst = tr.limit_violations(v, a, j)
    assert max(worst.values()) <= 1 + 1e-3
    # every sample on one of the straight edges
    t = np.linspace(0, tr.duration, 3000)
    pts = tr.sample(t)[0]
    d = q[1:] - q[:-1]
    u = np.clip(((pts[:, None] - q[None, :-1]) * d[None]).sum(-1) / (d * d).sum(-1)[None], 0, 1)
    off = np.linalg.norm(pts[:, None] - (q[None, :-1] + u[..., None] * d[None]), axis=-1).min(axis=1)
    assert off.max() < 1e-9


def _corner_beside_an_obstacle(robot, seed: int = 0):
    """(path of 3 waypoints, env): both edges free (certified), the arc of a 0.4 blend in collision."""
    rng = np.random.default_rng(seed)
    for _ in range(4000):
        q = rng.uniform(robot.lower, robot.upper, (3, robot.dof))
        if not robot.is_valid_many(q).all():
            continue
        (corner,) = BlendedPath(q, [0.4]).arcs() or [None]
        if corner is None:
            continue
        mid = corner["centre"] + corner["r"] * (corner["x"] * np.cos(corner["alpha"] / 2)
                                                + corner["y"] * np.sin(corner["alpha"] / 2))
        sph = robot.fk(mid)
        k = int(rng.integers(len(sph)))
        env = simdplan.Environment()
        env.add_sphere(sph[k, :3], 0.02)
        if not robot.is_valid_many(q, env).all() or robot.is_valid(mid, env):
            continue
        if all(robot.certify_motion(q[i], q[i + 1], env).free for i in range(2)):
            return q, env
    raise AssertionError("no such corner found")


def test_a_corner_beside_an_obstacle_is_blended_less_or_stopped_never_cut():
    q, env = _corner_beside_an_obstacle(PANDA)
    for link in ("certified", "discrete"):
        tr = time_parameterize(PANDA, q, env, max_deviation=0.4, link=link)
        st_ = tr.stats
        assert st_["reduced"] == 1 and st_["deviations"][0] < 0.4
        # the executed motion, densely: every configuration valid
        t = np.linspace(0, tr.duration, 4000)
        assert PANDA.is_valid_many(tr.sample(t)[0], env).all()


def test_a_path_in_collision_is_refused_with_the_edge_named():
    q, env = _corner_beside_an_obstacle(PANDA)
    mid = BlendedPath(q, [0.4]).arcs()[0]
    through = mid["centre"] + mid["r"] * (mid["x"] * np.cos(mid["alpha"] / 2) + mid["y"] * np.sin(mid["alpha"] / 2))
    bad = np.array([q[0], through, q[2]])
    with pytest.raises(ValueError, match="edge 0 of the path"):
        time_parameterize(PANDA, bad, env)


@pytest.mark.parametrize("kwargs, match", [
    ({"velocity_limits": 0.0}, "velocity_limits must be finite and > 0"),
    ({"velocity_limits": -1.0}, "velocity_limits must be finite and > 0"),
    ({"velocity_limits": [1.0] * 3}, "one per joint"),
    ({"acceleration_limits": np.nan}, "acceleration_limits must be finite and > 0"),
    ({"jerk_limits": [np.inf] * 7}, "jerk_limits must be finite"),
    ({"velocity_scale": 0.0}, r"velocity_scale must be in \(0, 1\]"),
    ({"acceleration_scale": 1.5}, r"acceleration_scale must be in \(0, 1\]"),
    ({"max_deviation": -0.1}, "max_deviation must be finite and >= 0"),
    ({"method": "ruckig"}, "needs jerk_limits"),
    ({"method": "toppra", "jerk_limits": 10.0}, "does not bound jerk"),
    ({"method": "spline"}, "method must be one of"),
    ({"link": "sampled"}, "link must be"),
    ({"sample_period": 0}, "sample_period"),
])
def test_bad_limits_and_options_raise_clear_errors(kwargs, match):
    q = np.zeros((2, PANDA.dof))
    q[1, 0] = 0.5
    with pytest.raises(ValueError, match=match):
        time_parameterize(PANDA, q, **kwargs)


def test_bad_paths_raise_clear_errors():
    with pytest.raises(ValueError, match="not finite"):
        time_parameterize(PANDA, np.full((2, PANDA.dof), np.nan))
    with pytest.raises(ValueError, match="shape"):
        time_parameterize(PANDA, np.zeros((2, 3)))


def test_a_robot_without_velocity_limits_must_be_given_them():
    b = RobotBuilder("arm").link("base").link("upper", spheres=[[0, 0, 0.2, 0.05]])
    b.joint("j", "revolute", "base", "upper", limits=(-1, 1))
    robot = b.build()
    assert np.isnan(robot.velocity_limits).all()
    q = np.array([[0.0], [0.5]])
    with pytest.raises(ValueError, match="robot's, from its URDF.*not so for j"):
        time_parameterize(robot, q)
    tr = time_parameterize(robot, q, velocity_limits=1.0, acceleration_limits=2.0)
    # rest to rest on a line at 2 rad/s^2: accelerate 0.25 rad to 0.707 rad/s, decelerate (bang-bang)
    assert tr.duration == pytest.approx(1.0, rel=0.03)


def test_velocity_limits_come_from_the_urdf_and_the_builder():
    assert np.allclose(PANDA.velocity_limits, [2.3925] * 4 + [2.871] * 3)
    b = RobotBuilder("arm").link("base").link("upper", spheres=[[0, 0, 0.2, 0.05]])
    b.joint("j", "revolute", "base", "upper", limits=(-1, 1), velocity=1.5)
    assert b.build().velocity_limits.tolist() == [1.5]
    with pytest.raises(ValueError, match="velocity must be finite and > 0"):
        RobotBuilder("x").joint("j", "revolute", "a", "b", limits=(-1, 1), velocity=0)


# ----- from a plan -----

def test_plan_result_trajectory_is_checked_like_the_plan_and_saved(tmp_path):
    scene = simdplan.scenes.load(simdplan.scenes.example("panda_bookshelf"))
    res = simdplan.plan(scene.robot, scene.env, scene.start, scene.goals, link="certified", seed=1)
    assert res.success
    tr = res.trajectory(velocity_scale=0.5)
    assert res.timed is tr and tr.stats["link"] == "certified"
    assert tr.limit_violations(0.5 * PANDA.velocity_limits, PANDA.velocity_limits)["velocity"] <= 1 + LIMIT_SLACK
    t = np.linspace(0, tr.duration, 3000)
    assert scene.robot.is_valid_many(tr.sample(t)[0], scene.env).all()
    res.save(tmp_path / "r.json")
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["trajectory"]["duration"] == pytest.approx(tr.duration)
    tr.save(tmp_path / "t.csv")
    header = (tmp_path / "t.csv").read_text().splitlines()[0].split(",")
    assert header[0] == "t" and header[1] == f"q:{PANDA.joint_names[0]}" and len(header) == 1 + 3 * PANDA.dof
    with pytest.raises(ValueError, match="use .json or .csv"):
        tr.save(tmp_path / "t.txt")


def test_a_result_without_its_plan_context_says_what_to_call():
    res = simdplan.PlanResult(True, np.zeros((2, 7)), {}, "rrtc", PANDA.joint_names)
    with pytest.raises(ValueError, match="time_parameterize"):
        res.trajectory()


def test_cli_plan_timed_writes_the_trajectory_csv(tmp_path, capsys):
    out = tmp_path / "traj.csv"
    assert cli.main(["plan", "panda_bookshelf", "--timed", "--velocity-scale", "0.5", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "trajectory:" in text and "TOPP-RA" in text
    rows = out.read_text().splitlines()
    assert rows[0].startswith("t,q:") and float(rows[-1].split(",")[0]) > 0
    assert cli.main(["plan", "panda_bookshelf", "--timed", "--velocity-scale", "2"]) == 2
    assert "velocity_scale must be in (0, 1]" in capsys.readouterr().err


def test_view_plays_a_trajectory_file_in_real_time(tmp_path, capsys):
    pytest.importorskip("pybullet")
    from PIL import Image

    traj_csv, gif = tmp_path / "traj.csv", tmp_path / "traj.gif"
    assert cli.main(["plan", "panda_bookshelf", "--timed", "--out", str(traj_csv)]) == 0
    duration = float(traj_csv.read_text().splitlines()[-1].split(",")[0])
    assert cli.main(["view", "panda_bookshelf", "--path", str(traj_csv), "--render", str(gif), "--size", "64x48"]) == 0
    with Image.open(gif) as im:
        total, frames = 0, 0
        while True:
            total += im.info["duration"]
            frames += 1
            try:
                im.seek(im.tell() + 1)
            except EOFError:
                break
    # 10 frames per second of motion (and the end pose), each shown 0.1 s: the GIF lasts as long as
    # the motion, up to the end pose's frame
    assert frames == int(np.ceil(duration * 10 - 1e-9)) + 1
    assert duration <= total / 1000 <= duration + 0.2


def test_scene_files_give_timing_options_and_the_cli_uses_them(tmp_path, capsys):
    scene = simdplan.scenes.load(simdplan.scenes.example("panda_bookshelf"))
    scene.timing = {"velocity_limits": [1.0] * 7, "acceleration_limits": 2.0, "velocity_scale": 0.5,
                    "max_deviation": 0.02}
    path = simdplan.scenes.save(scene, tmp_path / "timed.yaml")
    back = simdplan.scenes.load(path)
    assert back.timing == scene.timing
    try:
        import jsonschema
    except ImportError:
        jsonschema = None
    if jsonschema is not None:
        import yaml

        with open(simdplan.scenes.SCHEMA_PATH) as f:
            jsonschema.Draft202012Validator(json.load(f)).validate(yaml.safe_load(open(path)))
    out = tmp_path / "t.json"
    assert cli.main(["plan", str(path), "--timed", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["trajectory"]["stats"]["velocity_limits"] == [0.5] * 7
    assert doc["trajectory"]["stats"]["max_deviation"] == 0.02
    # a flag overrides the file
    assert cli.main(["plan", str(path), "--timed", "--max-deviation", "0.1", "--out", str(out)]) == 0
    assert json.loads(out.read_text())["trajectory"]["stats"]["max_deviation"] == 0.1


@pytest.mark.parametrize("timing, key, match", [
    ({"velocity_limits": 0}, "timing.velocity_limits", "must be > 0"),
    ({"velocity_limits": [1.0, 2.0]}, "timing.velocity_limits", "must have 7 values"),
    ({"velocity_scale": 2}, "timing.velocity_scale", r"must be in \(0, 1\]"),
    ({"max_deviation": -1}, "timing.max_deviation", "must be >= 0"),
    ({"jerk": 5}, "timing.jerk", "unknown timing option"),
    ({"acceleration_limits": "fast"}, "timing.acceleration_limits", "must be a list"),
])
def test_bad_timing_sections_name_their_key(tmp_path, timing, key, match):
    import yaml

    with open(simdplan.scenes.example("panda_table")) as f:
        doc = yaml.safe_load(f)
    doc["timing"] = timing
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(simdplan.scenes.SceneError, match=match) as exc:
        simdplan.scenes.load(path)
    assert key in str(exc.value)


def test_a_short_edge_between_two_stops_takes_time_and_holds_the_limits():
    # an edge shorter than one grid step between two corners the motion stops at: it once had two
    # gridpoints, both at rest, and was crossed in no time (a jump)
    robot = free_arm(2)
    q = np.array([[0.0, 0.0], [1.0, 0.0], [1.0, 0.03], [0.0, 0.03]])
    tr = time_parameterize(robot, q, max_deviation=0.0)
    assert tr.stats["stopped"] == 2
    v, a = robot.velocity_limits, DEFAULT_ACCELERATION_RATE * robot.velocity_limits
    for rate in (1000.0, 1037.0, 4000.0):
        worst = tr.limit_violations(v, a, rate=rate)
        assert max(worst.values()) <= 1 + LIMIT_SLACK
    # rest to rest over 0.03 rad at 4 rad/s^2 (less the margin) takes 2 sqrt(0.03 / 4) s at least
    t = np.linspace(0, tr.duration, 20001)
    on_short = np.abs(tr.sample(t)[0][:, 0] - 1.0) < 1e-12
    assert np.ptp(t[on_short]) >= 2 * np.sqrt(0.03 / 4.0) * 0.99


# ----- issue 43: waypoints on straight edges, non-finite times, long motions, exact ends -----

def bookshelf_plan(**kwargs):
    scene = simdplan.scenes.load(simdplan.scenes.example("panda_bookshelf"))
    res = simdplan.plan(scene.robot, scene.env, scene.start, scene.goals, seed=1, **kwargs)
    assert res.success
    return res


def speeds_at_waypoints(tr, q: np.ndarray) -> np.ndarray:
    """Joint-space speed of the motion where it comes closest to each waypoint of ``q``."""
    t = np.linspace(0.0, tr.duration, 40001)
    pos, vel, _ = tr.sample(t)
    near = np.array([np.argmin(np.linalg.norm(pos - w, axis=1)) for w in q])
    return np.linalg.norm(vel[near], axis=1)


def test_waypoints_on_a_straight_edge_in_float32_are_passed_through_at_speed():
    # corners of a path made in float64, its edges cut into 40 pieces in float32 (as a float32 core
    # interpolates): each point is off its edge by float32 rounding, a corner too slight to blend
    robot = free_arm(3)
    corners = np.array([[0.0, -2.0, 1.0], [2.1, 0.3, -1.7], [-0.4, 2.2, 0.9]])
    cut = [corners[:1]]
    for a, b in zip(corners[:-1], corners[1:]):
        f = np.linspace(0.0, 1.0, 41, dtype=np.float32)[1:, None]
        cut.append((a.astype(np.float32) + f * (b - a).astype(np.float32)).astype(np.float64))
    fine = np.vstack(cut)
    assert np.abs(fine - corners[[0] * 1 + [1] * 40 + [2] * 40]).max() > 0  # not exact copies
    coarse_tr, fine_tr = time_parameterize(robot, corners), time_parameterize(robot, fine)
    assert fine_tr.stats["collinear"] == 78 and fine_tr.stats["corners"] == 1 and fine_tr.stats["stopped"] == 0
    assert fine_tr.duration == pytest.approx(coarse_tr.duration, rel=1e-6)
    interior = np.r_[1:40, 41:80]
    assert speeds_at_waypoints(fine_tr, fine[interior]).min() > 0.2


def test_a_waypoint_off_the_line_or_turning_back_is_still_a_corner():
    robot = free_arm(2)
    # 1e-3 off the straight line: a real (small) corner, not passed through as collinear
    tr = time_parameterize(robot, np.array([[0.0, 0.0], [0.5, 1e-3], [1.0, 0.0]]))
    assert tr.stats["collinear"] == 0 and tr.stats["corners"] == 1
    # back along its own line: the turns stay, and the motion rests at them
    tr = time_parameterize(robot, np.array([[0.0, 0.0], [1.0, 0.0], [0.5, 0.0], [0.8, 0.0]]))
    assert tr.stats["collinear"] == 0 and tr.stats["stopped"] == 2
    assert tr.sample(np.linspace(0, tr.duration, 2001))[0][:, 0].max() == pytest.approx(1.0)


def test_an_interpolated_plan_is_timed_as_the_plan_without_warnings():
    # issue 43: interpolate=50 rested at 221 of 223 corners (23.3 s against 1.75 s); 2000 warned of a
    # division by zero in blend.py and took 36 s
    plain = bookshelf_plan().trajectory()
    for n in (50, 2000):
        res = bookshelf_plan(interpolate=n)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            tr = res.trajectory()
        assert tr.stats["stopped"] == 0 and tr.stats["collinear"] >= len(res.path) - 3
        assert tr.duration == pytest.approx(plain.duration, rel=1e-3)
    assert speeds_at_waypoints(tr, res.path[1:-1:100]).min() > 0.05


def test_a_corner_turning_by_almost_nothing_is_built_without_a_division_by_zero():
    # a turn of 1.5e-8 rad: 1 - cos of its half rounded to 0 in the blend's arithmetic
    q = np.array([[0.0, 0.0, 0.0], [1.0, 0.7, 0.3], [2.0, 1.4, 0.6 + 1.6e-8]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        path = BlendedPath(q, [0.05])
    assert [c["kind"] for c in path.corners] == ["stop"] and np.allclose(path(path.length), q[-1], atol=1e-12)


def test_near_duplicate_waypoints_are_dropped():
    # issue 43: toppra refused "Invalid manually supplied gridpoints" for a waypoint 1e-9 from another
    q = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7])
    for path in ([q, q + 1e-9, q + 0.2], [q, q + 0.2, q + 0.2 + 1e-9, q + 0.4 * np.eye(7)[0]]):
        tr = time_parameterize(PANDA, np.array(path))
        assert tr.stats["collinear"] == 1 and np.array_equal(tr.q[-1], path[-1])


@pytest.mark.parametrize("kwargs", [{}, {"jerk_limits": 20.0}])
def test_sampling_at_a_time_that_is_not_finite_is_refused(kwargs):
    # issue 43: Ruckig crashed the interpreter on NaN; TOPP-RA gave a row of NaN
    res = bookshelf_plan()
    tr = res.trajectory(**kwargs)
    for bad in (float("nan"), [0.1, float("inf")], [-np.inf]):
        with pytest.raises(ValueError, match=r"times must be finite.*times\[\d\] = (nan|inf|-inf)"):
            tr.sample(bad)
    with pytest.raises(ValueError, match="1-d"):
        tr.sample(np.zeros((2, 2)))
    # outside [0, duration]: at rest at the ends
    q, qd, _ = tr.sample([-1.0, tr.duration + 1.0])
    assert np.array_equal(q, res.path[[0, -1]]) and not qd.any()


def test_trajectories_start_and_end_exactly_on_the_path():
    # issue 43: TOPP-RA ended up to 8.9e-16 from path[-1]
    res = bookshelf_plan()
    for kwargs in ({}, {"velocity_scale": 0.3}, {"max_deviation": 0.0}, {"jerk_limits": 20.0}):
        tr = res.trajectory(**kwargs)
        assert np.array_equal(tr.q[0], res.path[0]) and np.array_equal(tr.q[-1], res.path[-1])
        assert np.array_equal(tr.sample(tr.duration)[0][0], res.path[-1]) and not tr.qd[[0, -1]].any()


def test_a_waypoint_outside_the_joint_limits_is_named():
    q = np.zeros((3, PANDA.dof))
    q[:, 3] = -1.0
    q[1, 3] = -3.5
    with pytest.raises(ValueError, match=r"waypoint 1 of the path is outside the joint limits: joint "
                                         r"panda_joint4 = -3\.5 is outside its limits"):
        time_parameterize(PANDA, q)


@pytest.mark.parametrize("kwargs", [{"velocity_limits": 1e-6}, {"velocity_scale": 1e-12},
                                    {"acceleration_scale": 1e-12}, {"velocity_scale": 1e-7, "jerk_limits": 20.0}])
def test_motions_too_slow_to_time_are_refused_up_front(kwargs):
    # issue 43: velocity_limits=1e-6 ran out of memory at 24 GB, velocity_scale=1e-12 asked for 8.88 PiB
    q = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7])
    with pytest.raises(ValueError, match=r"would last at least .* s, more than MAX_DURATION \(3600 s\)"):
        time_parameterize(PANDA, np.array([q, q + 0.1]), **kwargs)


@pytest.mark.parametrize("kwargs", [{"max_deviation": 0.0}, {"jerk_limits": 1.0}])
def test_a_motion_found_too_long_once_timed_is_refused(kwargs):
    # 40 reversals at 1e-4 rad/s^2: the lower bound (one speed-up, one slow-down) is 283 s, the motion
    # rests at every reversal and takes over 4000 s
    q = np.array([[0.0], [1.0]] * 20 + [[0.0]])
    with pytest.raises(ValueError, match=r"would last (at least )?\d.* s, more than MAX_DURATION"):
        time_parameterize(free_arm(1), q, acceleration_limits=1e-4, **kwargs)


def test_slow_motions_check_and_sample_in_memory_that_grows_with_the_path():
    # issue 43: velocity_scale=1e-3 (1250 s) peaked at 636 MB, the 1 kHz check over the whole duration
    import tracemalloc

    res = bookshelf_plan()
    res.trajectory()  # imports and caches outside the measurement
    tracemalloc.start()
    try:
        tr = res.trajectory(velocity_scale=1e-3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert tr.duration > 1000 and peak < 100e6
    # rows at most MAX_SAMPLES: the period grows to fit
    fine = time_parameterize(free_arm(1), np.array([[0.0], [1.0]]), sample_period=1e-6)
    assert len(fine.t) <= MAX_SAMPLES
    assert fine.stats["sample_period"] == pytest.approx(fine.duration / (MAX_SAMPLES - 2))
    assert fine.t[-1] == fine.duration and np.array_equal(fine.q[-1], [1.0])


def test_cli_plan_too_slow_exits_2_with_the_reason(capsys):
    assert cli.main(["plan", "panda_bookshelf", "--timed", "--velocity-scale", "1e-7"]) == 2
    err = capsys.readouterr().err
    assert "--timed: the trajectory would last at least" in err and "Traceback" not in err


@pytest.mark.parametrize("flag, value", [("--velocity-scale", "0.5"), ("--acceleration-scale", "0.5"),
                                         ("--max-deviation", "0.1"), ("--jerk-limit", "20")])
def test_cli_timing_flags_without_timed_are_refused(flag, value, capsys, tmp_path):
    out = tmp_path / "r.json"
    assert cli.main(["plan", "panda_bookshelf", flag, value, "--out", str(out)]) == 2
    assert f"{flag}: read only with --timed" in capsys.readouterr().err and not out.exists()
