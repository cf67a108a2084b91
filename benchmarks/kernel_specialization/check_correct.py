"""Specialized vs generic: bit-exact sphere centres and identical Clear(q) answers on random configurations.

usage: python3 check_correct.py ROBOT [N=100000] [ENVS=empty,spheres16,spheres64]
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from common import environment, load_robot, random_configs  # noqa: E402
from kernel import Kernel, build_from_env  # noqa: E402

name = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 100000
envs = (sys.argv[3] if len(sys.argv) > 3 else "empty,spheres16,spheres64").split(",")
robot = load_robot(name)
k = Kernel(os.environ["PROTO_SO"] if os.environ.get("PROTO_SO") else build_from_env(name))
Q = random_configs(robot, n, seed=123)
# FK: bit-exact?
m = min(n, 20000)
gen_fk = robot.fk_many(Q[:m])[:, :, :3]
spec_fk = k.fk_spheres(Q[:m].astype(np.float32), robot.n_spheres)
diff = gen_fk.view(np.uint32) != spec_fk.view(np.uint32)
print(f"{name}: FK sphere centres on {m} configs: {int(diff.sum())} of {diff.size} coordinates differ in bits;"
      f" max abs diff {float(np.abs(gen_fk - spec_fk).max()):.3g}")
# a few rows outside the limits too
Qx = Q.copy()
Qx[:50, 0] = robot.upper[0] + 0.01
for ek in envs:
    env, obs = environment(ek, name)
    a = robot.is_valid_many(Qx, env)
    b = k.is_valid_many(Qx, obs)
    mism = np.nonzero(a != b)[0]
    print(f"{name} {ek}: {n} configs, generic free {int(a.sum())}, specialized free {int(b.sum())},"
          f" mismatches {len(mism)}" + (f" rows {mism[:10].tolist()}" if len(mism) else ""))
