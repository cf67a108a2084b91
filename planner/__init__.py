"""simdplan.planner: RRT-Connect, RRT and PRM in C++ over the SIMD Clear/Link checks."""

from simdplan.planner.plan import InvalidProblemError, LimitClampWarning, Roadmap, plan
from simdplan.planner.plan_many import PlanManyInterrupted, default_workers, plan_many, task_seed
from simdplan.planner.result import PlanResult, path_length
from simdplan.planner.settings import PLANNER_ONLY, PLANNERS, SAMPLERS, IgnoredSettingWarning, PlannerSettings
from simdplan.planner.trajectory import Trajectory, time_parameterize

__all__ = ["plan", "plan_many", "task_seed", "default_workers", "PlanManyInterrupted", "Roadmap", "PlanResult",
           "PlannerSettings", "InvalidProblemError", "LimitClampWarning", "IgnoredSettingWarning", "path_length",
           "PLANNERS", "PLANNER_ONLY", "SAMPLERS", "Trajectory", "time_parameterize"]
