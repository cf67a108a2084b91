"""Shared helpers: robots, environments and free configurations for the prototype's measurements."""
from __future__ import annotations

import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")


def load_robot(name: str):
    import simdplan
    if name in ("panda", "ur5"):
        return simdplan.robots.load(name)
    from simdplan.bench import robots as br
    return br.load(name)


def sphere_obstacles(name: str, n: int = 16, seed: int = 1) -> np.ndarray:
    """n obstacle spheres (x, y, z, r) in the arm's workspace: a MotionBenchMaker-like clutter of
    spheres 4-12 cm around the base at 0.35-0.85 m, heights 0-1 m (float32 values)."""
    rng = np.random.default_rng(seed)
    ang = rng.uniform(-np.pi, np.pi, n)
    rad = rng.uniform(0.35, 0.85, n)
    z = rng.uniform(0.0, 1.0, n)
    r = rng.uniform(0.04, 0.12, n)
    return np.stack([rad * np.cos(ang), rad * np.sin(ang), z, r], axis=1).astype(np.float32)


def environment(kind: str, robot_name: str):
    """(simdplan Environment or None, obstacles (k, 4) float32 for the specialized kernel or None)."""
    import simdplan
    if kind == "empty":
        return simdplan.Environment(), np.zeros((0, 4), np.float32)
    if kind.startswith("spheres"):
        k = int(kind[len("spheres"):] or 16)
        obs = sphere_obstacles(robot_name, k)
        env = simdplan.Environment()
        for x, y, z, r in obs:
            env.add_sphere([float(x), float(y), float(z)], float(r))
        return env, obs
    # a shipped example scene (boxes, cylinders, ...): generic kernel only
    scene = simdplan.scenes.load(simdplan.scenes.example(kind))
    return scene.env, None


def random_configs(robot, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    lo, hi = np.asarray(robot.lower), np.asarray(robot.upper)
    return rng.uniform(lo, hi, size=(n, robot.dof))


def free_configs(robot_name: str, env_kind: str, n: int = 4096, seed: int = 0) -> np.ndarray:
    """n collision-free configurations (generic kernel's answer), cached in data/."""
    os.makedirs(DATA, exist_ok=True)
    path = os.path.join(DATA, f"free_{robot_name}_{env_kind}_{n}_{seed}.npy")
    if os.path.exists(path):
        return np.load(path)
    robot = load_robot(robot_name)
    env, _ = environment(env_kind, robot_name)
    out, s = [], seed
    while sum(len(x) for x in out) < n:
        Q = random_configs(robot, 4 * n, s)
        out.append(Q[robot.is_valid_many(Q, env)])
        s += 1000
    Q = np.ascontiguousarray(np.concatenate(out)[:n])
    np.save(path, Q)
    return Q
