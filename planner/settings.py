"""Planner settings: one validated dataclass for every planner, and its conversion to the core's.

The planners and the settings fields come from the C++ core (cpp/include/simdplan/planner/registry.hh):
``PLANNERS`` lists the C++ planners and ``PLANNER_ONLY`` says which settings only one planner reads;
``to_core`` copies every core field from the dataclass, converting the few listed in ``_TO_CORE``.
tests/test_planner_contract.py checks that the core, this dataclass and scenes/schema.json agree.

Units: joint-space distances in the robot's joint units (radians / metres), times in seconds.
"""

from __future__ import annotations

import dataclasses
import warnings

from simdplan import _core
from simdplan.validation import as_int, as_number

# the C++ planners by name, the default first
PLANNERS = tuple(name for name, _ in _core.planners())
PLANNER_DESCRIPTIONS = dict(_core.planners())
# setting -> the one C++ planner that reads it; the other settings apply to every planner
PLANNER_ONLY = {name: planner for name, _, planner in _core.planner_settings() if planner is not None}
SAMPLERS = ("uniform", "halton")
# edge checks, the default first
LINKS = ("certified", "discrete")
# samples per unit joint distance at most (resolution, interpolate): a 1 um / 1 urad step
MAX_RESOLUTION = 1e6
# certified Link's min_step at least: below it, one edge could split into ~1e6+ stretches
MIN_STEP_FLOOR = 1e-6


@dataclasses.dataclass
class PlannerSettings:
    """Settings for ``simdplan.plan``. Every field is validated by ``validated()``.

    planner: "rrtc" (RRT-Connect), "rrt" or "prm" (simdplan's C++ planners, ``PLANNERS``), or
      "ompl:<Name>" for any planner of ompl.geometric run with simdplan's checks
      (simdplan.planner.ompl; needs the ompl package; uses time_limit, range, simplify, padding,
      resolution, link, min_step, seed).
    Settings marked "RRT:", "RRT-Connect:" or "PRM:" are read by that C++ planner only
      (``PLANNER_ONLY``); given with a value other than the default to another C++ planner, they
      have no effect and simdplan.plan issues an IgnoredSettingWarning.
    seed: random seed (any integer type, NumPy's too); a plan is deterministic for a given seed (and
      time limit not reached).
    time_limit: wall-clock budget in seconds for the whole call: planning, then simplification and
      interpolation in what is left (0 = none; then max_iterations bounds planning). The call returns
      within it plus the step in progress (a few ms). A path found in time but simplified only in
      part is returned (``stats["stopped"] == "time_limit"``, and the message says so); every edge
      of it passed Link.
    Ctrl-C (SIGINT) stops a plan within about 10 ms and raises KeyboardInterrupt (main thread).
    max_iterations: planner iterations (samples drawn, including those dynamic domains reject) at most.
    range: longest tree edge in joint-space (Euclidean) distance; None: the robot's default_range
      (Robot.default_settings says how robot defaults are derived); for "ompl:" planners, OMPL's own
      default (simdplan.planner.ompl says why). At least one Link step (1 / resolution): shorter
      edges cannot advance a tree.
    resolution: samples per unit joint distance for edge checks; None: the robot's default
      (derived from its motion bound, Robot.default_settings). At most 1e6 (a micrometre-scale step).
    sampler: "uniform" (pseudo-random) or "halton" (low-discrepancy, scrambled by the seed).
    goal_bias: RRT (and "ompl:" planners that have one): probability of sampling a goal.
    balance: RRT-Connect: grow the smaller tree (balanced variant).
    dynamic_domain: RRT-Connect: dynamic-domain sampling (Yershova et al. 2005): a node's domain
      is unbounded until an extension from it fails, then dd_radius; it grows by (1 + dd_alpha) on
      success and shrinks by (1 - dd_alpha) on failure, never below dd_min_radius. Domains start
      after 16 failed extensions (an easy problem is solved before and pays nothing for them) and
      are dropped after 500 rejected samples in a row (in many dimensions every sample is far from
      every node). On by default (the measurements behind it: benchmarks/README.md, "How the
      planner defaults were chosen"). A rejected sample counts as an iteration: hence
      max_iterations 1,000,000.
    dd_radius: RRT-Connect: a node's domain radius after its first failed extension (see dynamic_domain).
    dd_alpha: RRT-Connect: rate at which a domain radius grows and shrinks (see dynamic_domain).
    dd_min_radius: RRT-Connect: smallest domain radius (see dynamic_domain).
    prm_neighbors: PRM: k nearest neighbours connected per roadmap vertex.
    simplify: shortcut, reduce vertices and smooth the path (every new edge is checked).
    simplify_iterations: random shortcut attempts (default 30; see benchmarks/README.md).
    shortcut_min_gain: a random shortcut is checked (and taken) only when it is shorter than the
      stretch of path it replaces by at least this fraction of that stretch (default 0.01; 0 takes
      any shortening). Draws below it still count as attempts: two points near one vertex cut its
      corner by a hair at the cost of a full edge check (see benchmarks/README.md).
    smooth_passes: Laplacian smoothing passes after shortcutting (default 1; each pass shortens the
      path a little and costs time; see benchmarks/README.md).
    interpolate: if set, the returned path is resampled so consecutive waypoints are at most
      1 / interpolate apart (samples per unit joint distance, at most 1e6); None keeps the waypoints.
      A result of more than 1,000,000 waypoints is not built: the path keeps its waypoints and
      the message says so.
    padding: inflates robot spheres (metres) for every check of this plan.
    link: "certified" (the default: every edge proven collision-free between its ends from
      clearances and motion bounds, Robot.certify_motion; a start or goal within the certificate's
      margin, 0.02 mm, of contact is refused at once, since no edge out of it can be proven) or
      "discrete" (edges checked only at samples ``resolution`` apart: faster, about 0.8x the time,
      but an obstacle thinner than the gap can be stepped over; README, "Certified Link").
    min_step: certified Link only: stretches shorter than this joint-space distance that are still
      not proven free make the edge invalid ("too close to call"). At least 1e-6.
    limit_tolerance: a start or goal value outside its joint limit by at most this much (radians or
      metres) is moved onto the limit (Robot.clamp_to_limits); the result's message and
      ``stats["limit_clamped"]`` say how many values were moved, and a LimitClampWarning is issued.
      Further outside, the problem is refused (InvalidProblemError). 0 makes the limits strict.
    """

    planner: str = "rrtc"
    seed: int = 0
    time_limit: float = 1.0
    max_iterations: int = 1_000_000
    range: float | None = None
    resolution: float | None = None
    sampler: str = "uniform"
    goal_bias: float = 0.05
    balance: bool = True
    dynamic_domain: bool = True
    dd_radius: float = 4.0
    dd_alpha: float = 0.0001
    dd_min_radius: float = 1.0
    prm_neighbors: int = 10
    simplify: bool = True
    simplify_iterations: int = 30
    shortcut_min_gain: float = 0.01
    smooth_passes: int = 1
    interpolate: float | None = None
    padding: float = 0.0
    link: str = "certified"
    min_step: float = 1e-3
    limit_tolerance: float = 1e-4

    def validated(self) -> "PlannerSettings":
        """A copy with defaults resolved; ValueError naming the first bad field."""
        s = dataclasses.replace(self)
        if s.planner not in PLANNERS and not (isinstance(s.planner, str) and s.planner.startswith("ompl:")
                                              and len(s.planner) > 5):
            raise ValueError(f"planner must be one of {', '.join(PLANNERS)} or 'ompl:<Name>' (an OMPL geometric "
                             f"planner), got {s.planner!r}")
        if s.link not in LINKS:
            raise ValueError(f"link must be one of {', '.join(LINKS)}, got {s.link!r}")
        if s.sampler not in SAMPLERS:
            raise ValueError(f"sampler must be one of {', '.join(SAMPLERS)}, got {s.sampler!r}")
        s.seed = as_int(s.seed, "seed", 0, 2**63 - 1)
        s.max_iterations = as_int(s.max_iterations, "max_iterations", 1, 10**12)
        s.simplify_iterations = as_int(s.simplify_iterations, "simplify_iterations", 0, 10**9)
        s.smooth_passes = as_int(s.smooth_passes, "smooth_passes", 0, 1000)
        s.shortcut_min_gain = as_number(s.shortcut_min_gain, "shortcut_min_gain", 0.0, allow_zero=True, upper=1.0)
        s.prm_neighbors = as_int(s.prm_neighbors, "prm_neighbors", 1, 10**6)
        s.time_limit = as_number(s.time_limit, "time_limit", 0.0, allow_zero=True)
        if s.range is not None:
            s.range = as_number(s.range, "range", 0.0)
        if s.resolution is not None:
            s.resolution = as_number(s.resolution, "resolution", 0.0, upper=MAX_RESOLUTION)
        if s.interpolate is not None:
            s.interpolate = as_number(s.interpolate, "interpolate", 0.0, upper=MAX_RESOLUTION)
        s.goal_bias = as_number(s.goal_bias, "goal_bias", 0.0, allow_zero=True, upper=1.0)
        s.dd_radius = as_number(s.dd_radius, "dd_radius", 0.0)
        s.dd_alpha = as_number(s.dd_alpha, "dd_alpha", 0.0, allow_zero=True)
        s.dd_min_radius = as_number(s.dd_min_radius, "dd_min_radius", 0.0)
        s.padding = as_number(s.padding, "padding", 0.0, allow_zero=True)
        s.min_step = as_number(s.min_step, "min_step", MIN_STEP_FLOOR, allow_zero=True)
        s.limit_tolerance = as_number(s.limit_tolerance, "limit_tolerance", 0.0, allow_zero=True)
        s.balance, s.dynamic_domain, s.simplify = bool(s.balance), bool(s.dynamic_domain), bool(s.simplify)
        if s.range is not None and s.resolution is not None:
            check_range(s.range, s.resolution)
        return s


class IgnoredSettingWarning(UserWarning):
    """A setting that only another planner reads was given (with a value other than its default)."""


def warn_ignored(s: PlannerSettings, given, stacklevel: int = 3) -> None:
    """IgnoredSettingWarning for each setting named in ``given`` that the C++ planner of validated
    settings ``s`` does not read, unless it holds its default value (callers passing every field,
    e.g. from ``dataclasses.asdict``, are not warned about fields they left alone)."""
    if s.planner not in PLANNERS:
        return  # "ompl:" planners document the settings they read
    for name in given:
        owner = PLANNER_ONLY.get(name)
        if owner is not None and owner != s.planner and getattr(s, name) != _DEFAULTS[name]:
            warnings.warn(f"{name}={getattr(s, name)!r} has no effect on planner {s.planner!r}: only "
                          f"{owner!r} reads it", IgnoredSettingWarning, stacklevel=stacklevel)


_DEFAULTS = {f.name: f.default for f in dataclasses.fields(PlannerSettings)}

# how a validated field becomes the core's where the two differ (the rest are copied as they are):
# None picks the robot's default, and the enumerations are named differently
_TO_CORE = {
    "range": lambda s, robot: robot.default_range if s.range is None else s.range,
    "resolution": lambda s, robot: robot.resolution if s.resolution is None else s.resolution,
    "sampler": lambda s, robot: getattr(_core.Sampler, s.sampler),
    "interpolate": lambda s, robot: 0.0 if s.interpolate is None else s.interpolate,
    "certified": lambda s, robot: s.link == "certified",
}
_COPIED = tuple(name for name, _, _ in _core.planner_settings() if name not in _TO_CORE)
# dataclass fields the core does not have: the planner is an argument of its own, link becomes certified
PYTHON_ONLY = ("planner", "link")


def _compile_to_core():
    # PERF: straight-line assignments written from the core's field list; a setattr/getattr loop
    # over the names took 4.2 us a call against 0.8 us for the assignments (timeit, default settings)
    lines = ["def to_core(s, robot):", "    c = _core.PlannerSettings()"]
    lines += [f"    c.{name} = s.{name}" for name in _COPIED]
    lines += [f"    c.{name} = _TO_CORE[{name!r}](s, robot)" for name in _TO_CORE]
    lines += ["    return c"]
    namespace = {"_core": _core, "_TO_CORE": _TO_CORE}
    exec(compile("\n".join(lines), "<simdplan.planner.settings.to_core>", "exec"), namespace)  # noqa: S102
    return namespace["to_core"]


_to_core = _compile_to_core()


def to_core(s: PlannerSettings, robot) -> "_core.PlannerSettings":
    """The core's settings for validated settings ``s`` and ``robot`` (which fills range and resolution
    left as None)."""
    return _to_core(s, robot)


def check_range(range_: float, resolution: float) -> None:
    """ValueError unless an edge of length ``range_`` spans at least one Link step at ``resolution``."""
    if range_ * resolution < 1.0:
        raise ValueError(f"range {range_:g} is shorter than one Link step (1 / resolution = {1 / resolution:g}): "
                         f"trees could not advance; use range >= {1 / resolution:g} or a finer resolution")
