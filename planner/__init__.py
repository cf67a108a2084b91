"""simdplan.planner: RRT-Connect, RRT and PRM in C++ over the SIMD Clear/Link checks."""

from simdplan.planner.plan import InvalidProblemError, LimitClampWarning, Roadmap, plan
from simdplan.planner.result import PlanResult, path_length
from simdplan.planner.settings import PLANNERS, SAMPLERS, PlannerSettings

__all__ = ["plan", "Roadmap", "PlanResult", "PlannerSettings", "InvalidProblemError", "LimitClampWarning", "path_length", "PLANNERS",
           "SAMPLERS"]
