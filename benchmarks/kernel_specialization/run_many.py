"""Measured workload for callgrind with one dump per kernel call (see measure.py).

usage: python3 run_many.py generic|specialized ROBOT ENV[,ENV...] [SMALL=64] [BIG=4096]
For each ENV: a warm-up call on SMALL rows, then SMALL rows, then BIG rows, each a separate call
(callgrind --dump-after on the entry point writes one profile part per call, in this order).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import environment, free_configs, load_robot  # noqa: E402

which, name, envs = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
small = int(sys.argv[4]) if len(sys.argv) > 4 else 64
big = int(sys.argv[5]) if len(sys.argv) > 5 else 4096
robot = load_robot(name)
if which == "specialized":
    from kernel import Kernel, build_from_env
    kern = Kernel(build_from_env(name))
for ek in envs:
    Qall = free_configs(name, ek, max(big, 4096))
    env, obs = environment(ek, name)
    for n in (small, small, big):
        Q = np.ascontiguousarray(Qall[:n])
        ok = robot.is_valid_many(Q, env) if which == "generic" else kern.is_valid_many(Q, obs)
        assert ok.all(), f"{ek}: {(~ok).sum()} of {n} free configurations reported in collision"
    print(which, name, ek, "done", flush=True)
