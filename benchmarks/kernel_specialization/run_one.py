"""One measured workload (run under callgrind): Clear(q) on the first N cached free configurations.

usage: python3 run_one.py generic|specialized ROBOT ENV N
ENV: empty | spheresK | an example scene name (generic only). ISA: set SIMDPLAN_ISA.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import environment, free_configs, load_robot  # noqa: E402

which, name, env_kind, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
Q = np.ascontiguousarray(free_configs(name, env_kind)[:n])
robot = load_robot(name)
env, obs = environment(env_kind, name)
if which == "generic":
    ok = robot.is_valid_many(Q, env)
else:
    from kernel import Kernel, build
    ok = Kernel(build(name)).is_valid_many(Q, obs)
assert ok.all(), f"{(~ok).sum()} of {n} cached free configurations reported in collision"
print(which, name, env_kind, n, "all free")
