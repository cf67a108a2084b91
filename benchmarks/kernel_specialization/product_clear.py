"""Clear of 4096 free configurations, `calls` times, with the robot's generic or specialized kernel
(for product_instructions.sh). Usage: product_clear.py ROBOT generic|specialized CALLS"""
import sys

import numpy as np

from simdplan.bench import robots as bench_robots

name, kernel, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
robot = bench_robots.load(name)
info = robot.compile(wait=True)
assert robot.kernel == "specialized", info
if kernel == "generic":
    robot.core.detach_kernels()
rng = np.random.default_rng(0)
Q = rng.uniform(robot.lower, robot.upper, size=(20000, robot.dof))
Q = Q[robot.is_valid_many(Q)][:4096]
assert len(Q) == 4096, len(Q)
for _ in range(calls):
    robot.is_valid_many(Q)
