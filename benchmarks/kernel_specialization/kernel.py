"""Build (g++) and load (ctypes) a generated kernel."""
from __future__ import annotations

import ctypes
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.path.join(HERE, "build")
CXXFLAGS = ["-O3", "-mavx2", "-mfma", "-ffp-contract=off", "-fPIC", "-shared"]


def build(name: str, force: bool = False, compact: bool = False) -> str:
    sys.path.insert(0, HERE)
    from common import load_robot
    from gen import generate
    os.makedirs(BUILD, exist_ok=True)
    tag = name + ("_compact" if compact else "")
    src, so = os.path.join(BUILD, f"{tag}.cc"), os.path.join(BUILD, f"{tag}.so")
    if force or not os.path.exists(so):
        with open(src, "w") as f:
            f.write(generate(load_robot(name), name, compact))
        subprocess.run(["g++", *CXXFLAGS, "-o", so, src], check=True)
    return so


class Kernel:
    def __init__(self, so: str):
        self.lib = ctypes.CDLL(so)
        self.lib.sp_is_valid_many.restype = ctypes.c_int
        self.lib.sp_is_valid_many.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int32,
                                              ctypes.c_void_p]
        self.lib.sp_fk_spheres.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p]

    def is_valid_many(self, Q: np.ndarray, obs: np.ndarray) -> np.ndarray:
        Q = np.ascontiguousarray(Q, dtype=np.float64)
        obs = np.ascontiguousarray(obs, dtype=np.float32).reshape(-1, 4)
        out = np.zeros(len(Q), np.uint8)
        rc = self.lib.sp_is_valid_many(Q.ctypes.data, len(Q), obs.ctypes.data, len(obs), out.ctypes.data)
        if rc:
            raise ValueError("non-finite joint value")
        return out.astype(bool)

    def fk_spheres(self, Qf: np.ndarray, n_spheres: int) -> np.ndarray:
        Qf = np.ascontiguousarray(Qf, dtype=np.float32)
        out = np.zeros((len(Qf), n_spheres, 3), np.float32)
        self.lib.sp_fk_spheres(Qf.ctypes.data, len(Qf), out.ctypes.data)
        return out
