"""simdplan: sampling-based motion planning with a SIMD C++ collision core.

Robots are loaded at run time (``simdplan.robots.load("panda")`` or ``Robot.from_urdf``),
obstacles go in an ``Environment``, and checks run in C++ SIMD lanes. Units: metres, radians;
quaternions [x, y, z, w].
"""

__version__ = "0.1.0"

from simdplan._runtime import available_isas, info, isa, set_isa  # noqa: E402
from simdplan.collision import Environment  # noqa: E402
from simdplan.planner import PlanResult, Trajectory, plan, plan_many, time_parameterize  # noqa: E402
from simdplan.path_check import PathCheck, check_path  # noqa: E402
from simdplan.planner.verify import PathVerification, verify_path  # noqa: E402  (needs coal when called)
from simdplan.robots import Robot  # noqa: E402
from simdplan import collision, planner, robots, scenes  # noqa: E402  (subpackages as attributes)

__all__ = ["Environment", "Robot", "plan", "plan_many", "PlanResult", "Trajectory", "time_parameterize", "check_path", "PathCheck", "verify_path", "PathVerification",
           "info", "isa", "set_isa", "available_isas", "__version__"]
