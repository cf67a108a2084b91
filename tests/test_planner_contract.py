"""The planner contract: planners and settings are listed once, in the C++ core (registry.hh), and
the bindings, the PlannerSettings dataclass, its conversion and scenes/schema.json agree with it
field by field; a setting the chosen planner ignores is warned about; start and goals are checked
inside the core's plan call."""

import dataclasses
import json
import warnings

import numpy as np
import pytest

import simdplan
from simdplan import _core
from simdplan.planner import IgnoredSettingWarning, InvalidProblemError, Roadmap
from simdplan.planner import settings as ps
from simdplan.scenes import scene as sc

Q_OK = np.array([0, -0.785, 0, -2.356, 0, 1.571, 0.785])
DATACLASS = {f.name: f for f in dataclasses.fields(ps.PlannerSettings)}
CORE = {name: (default, planner) for name, default, planner in _core.planner_settings()}


@pytest.fixture(scope="module")
def panda():
    return simdplan.robots.load("panda")


@pytest.fixture(scope="module")
def schema_props():
    with open(sc.SCHEMA_PATH) as f:
        return json.load(f)["$defs"]["planner"]["properties"]


def test_planner_names_come_from_the_core(schema_props):
    names = [name for name, _ in _core.planners()]
    assert ps.PLANNERS == tuple(names) and {"rrtc", "rrt", "prm"} <= set(names)
    assert DATACLASS["planner"].default == names[0]  # the registry's first is the default
    assert schema_props["planner"]["enum"] == names
    assert all(description for _, description in _core.planners())


def test_core_refuses_an_unknown_planner_listing_the_registered_ones(panda):
    env = simdplan.Environment()
    model = panda.compiled_env(env)
    with pytest.raises(ValueError, match="unknown planner 'astar': expected rrtc, rrt or prm"):
        _core.plan(panda.core, model, "astar", Q_OK, Q_OK[None, :], _core.PlannerSettings())


def test_core_fields_dataclass_and_schema_name_the_same_settings(schema_props):
    # the dataclass has the core's fields but for certified (Python's link), plus Python's own
    assert set(CORE) - {"certified"} == set(DATACLASS) - set(ps.PYTHON_ONLY)
    assert "certified" in CORE and "link" in DATACLASS
    # the bindings expose every field of the list as an attribute
    core = _core.PlannerSettings()
    for name in CORE:
        assert hasattr(core, name), name
    # the conversion covers every core field: copied under its name or converted
    assert set(ps._COPIED) | set(ps._TO_CORE) == set(CORE)
    assert set(schema_props) == set(DATACLASS)


def test_defaults_agree_between_core_dataclass_and_schema(panda, schema_props):
    converted = ps.to_core(ps.PlannerSettings().validated(), panda)
    for name, (core_default, _) in CORE.items():
        if name in ("range", "resolution"):
            continue  # None in Python: the robot's default (Robot.default_settings)
        if name in ps._TO_CORE:
            assert getattr(converted, name) == core_default, name
        else:
            assert DATACLASS[name].default == pytest.approx(core_default, rel=1e-7), name
    for name, f in DATACLASS.items():
        assert schema_props[name].get("default") == f.default, name


def test_which_planner_reads_a_setting_is_data_agreed_by_the_schema_and_the_docs(schema_props):
    only = {name: planner for name, (_, planner) in CORE.items() if planner is not None}
    assert only == ps.PLANNER_ONLY
    assert {"goal_bias": "rrt", "balance": "rrtc", "dynamic_domain": "rrtc", "dd_radius": "rrtc", "dd_alpha": "rrtc",
            "dd_min_radius": "rrtc", "prm_neighbors": "prm"}.items() <= only.items()
    label = {"rrt": "RRT", "rrtc": "RRT-Connect", "prm": "PRM"}  # a planner not listed: its name
    doc = ps.PlannerSettings.__doc__
    for name, f in DATACLASS.items():
        assert schema_props[name].get("x-planners") == ([only[name]] if name in only else None), name
        if name in only:
            assert f"    {name}: {label.get(only[name], only[name])}" in doc, name


def test_to_core_copies_every_field_to_its_own_attribute(panda):
    # distinct non-default values: a binding or conversion that mixed two fields up would show
    s = ps.PlannerSettings(seed=11, time_limit=2.5, max_iterations=1234, range=0.75, resolution=40.0,
                           sampler="halton", goal_bias=0.25, balance=False, dynamic_domain=False, dd_radius=3.5,
                           dd_alpha=0.002, dd_min_radius=0.5, prm_neighbors=7, simplify=False,
                           simplify_iterations=9, smooth_passes=3, interpolate=12.0, padding=0.125,
                           link="certified", min_step=0.01).validated()
    c = ps.to_core(s, panda)
    for name in ps._COPIED:
        assert getattr(c, name) == getattr(s, name), name
    assert (c.range, c.resolution, c.sampler, c.interpolate, c.certified) == (0.75, 40.0, _core.Sampler.halton,
                                                                              12.0, True)
    d = ps.to_core(ps.PlannerSettings().validated(), panda)
    assert (d.range, d.resolution, d.interpolate) == (panda.default_range, panda.resolution, 0.0)


@pytest.mark.parametrize("planner,name,value", [("rrtc", "goal_bias", 0.3), ("rrt", "balance", False),
                                                ("prm", "dd_radius", 2.0), ("rrt", "prm_neighbors", 4)])
def test_a_setting_the_planner_ignores_is_warned_about(panda, planner, name, value):
    env = simdplan.Environment()
    with pytest.warns(IgnoredSettingWarning, match=rf"{name}=.* has no effect on planner '{planner}'"):
        res = simdplan.plan(panda, env, Q_OK, Q_OK, planner=planner, **{name: value})
    assert res.success


def test_no_warning_for_settings_the_planner_reads_or_left_at_their_default(panda):
    env = simdplan.Environment()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        simdplan.plan(panda, env, Q_OK, Q_OK, planner="rrt", goal_bias=0.3)
        simdplan.plan(panda, env, Q_OK, Q_OK, planner="rrtc", balance=False, dd_radius=2.0)
        # every field given, as dataclasses.asdict callers do: the defaults are not the caller's choice
        fields = {k: v for k, v in dataclasses.asdict(ps.PlannerSettings()).items() if k != "planner"}
        simdplan.plan(panda, env, Q_OK, Q_OK, planner="prm", **fields)
        Roadmap(panda, env, prm_neighbors=5).query(Q_OK, Q_OK, seed=3)
    with pytest.warns(IgnoredSettingWarning, match="goal_bias"):
        Roadmap(panda, env, goal_bias=0.5)


def test_the_core_plan_call_reports_which_configuration_is_invalid(panda):
    env = simdplan.Environment()
    env.add_box([0.0, 0.0, 0.3], half_extents=[0.3, 0.3, 0.3], name="crate")
    free = simdplan.Environment()
    settings = ps.to_core(ps.PlannerSettings().validated(), panda)
    outside = np.full(7, 5.0)
    for e, start, goals, invalid in [(env, Q_OK, [Q_OK], 0), (free, Q_OK, [Q_OK, outside], 2),
                                     (free, Q_OK, [outside, Q_OK], 1), (free, Q_OK, [Q_OK], -1)]:
        model = panda.compiled_env(e)
        out = _core.plan(panda.core, model, "rrtc", start, np.array(goals), settings)
        assert out["invalid"] == invalid
        assert out["success"] == (invalid < 0)
    # and a roadmap's query
    rm = Roadmap(panda, free, seed=1)
    out = rm._session.query(panda.core, Q_OK, np.array([Q_OK, outside]), settings)
    assert out["invalid"] == 2 and not out["success"]
    with pytest.raises(InvalidProblemError, match="goal 1 is invalid.*outside its limits"):
        rm.query(Q_OK, [Q_OK, outside])


@pytest.mark.parametrize("where", ["start", "goal"])
def test_non_finite_start_or_goal_is_refused_by_the_plan_call(panda, where):
    bad = Q_OK.copy()
    bad[2] = np.nan
    start, goal = (bad, Q_OK) if where == "start" else (Q_OK, bad)
    with pytest.raises(ValueError, match="^start and goals must be finite$"):
        simdplan.plan(panda, simdplan.Environment(), start, goal)
    with pytest.raises(ValueError, match="^start and goals must be finite$"):
        Roadmap(panda, simdplan.Environment()).query(start, goal)


def test_the_core_moves_values_within_the_limit_tolerance_onto_the_limits(panda):
    from simdplan.planner import LimitClampWarning

    env = simdplan.Environment()
    model = panda.compiled_env(env)
    start = Q_OK.copy()
    start[0] = panda.upper[0] + 5e-5
    goal = Q_OK.copy()
    goal[1] = panda.lower[1] - 5e-5
    strict = ps.to_core(ps.PlannerSettings(limit_tolerance=0.0).validated(), panda)
    out = _core.plan(panda.core, model, "rrtc", start, goal[None, :], strict)
    assert (out["invalid"], out["limit_clamped"]) == (0, 0)
    tolerant = ps.to_core(ps.PlannerSettings(limit_tolerance=1e-4).validated(), panda)
    out = _core.plan(panda.core, model, "rrtc", start, goal[None, :], tolerant)
    assert (out["invalid"], out["limit_clamped"]) == (-1, 2) and out["success"]
    # the planner started and ended on the limits (float32, rounded inward)
    assert abs(out["initial_path"][0][0] - panda.upper[0]) < 1e-6
    assert abs(out["initial_path"][-1][1] - panda.lower[1]) < 1e-6
    # and simdplan.plan says so, at the caller's line
    with pytest.warns(LimitClampWarning, match="moved 2 joint value") as record:
        res = simdplan.plan(panda, env, start, goal)
    assert record[0].filename == __file__
    assert res.success and res.stats["limit_clamped"] == 2
    assert res.path[0, 0] == panda.upper[0] and res.path[-1, 1] == panda.lower[1]
    with pytest.warns(IgnoredSettingWarning) as record:
        simdplan.plan(panda, env, Q_OK, Q_OK, goal_bias=0.5)
    assert record[0].filename == __file__
