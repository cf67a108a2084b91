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


def build(name: str, force: bool = False, compact: bool = False, opt: str = "-O3") -> str:
    sys.path.insert(0, HERE)
    from common import load_robot
    from gen import generate
    os.makedirs(BUILD, exist_ok=True)
    tag = name + ("_compact" if compact else "") + ("" if opt == "-O3" else opt)
    src, so = os.path.join(BUILD, f"{tag}.cc"), os.path.join(BUILD, f"{tag}.so")
    if force or not os.path.exists(so):
        with open(src, "w") as f:
            f.write(generate(load_robot(name), name, compact))
        subprocess.run(["g++", opt, *CXXFLAGS[1:], "-o", so, src], check=True)
    return so


SPLIT_FLAGS = ["-mavx2", "-mfma", "-ffp-contract=off", "-fPIC"]


def write_split(name: str, n_files: int, compact: bool, outdir: str) -> list:
    """Generates the split kernel's sources into outdir; returns the .cc paths (biggest first)."""
    sys.path.insert(0, HERE)
    from common import load_robot
    from gen import generate_split
    os.makedirs(outdir, exist_ok=True)
    srcs = generate_split(load_robot(name), name, n_files, compact)
    for fn, text in srcs.items():
        with open(os.path.join(outdir, fn), "w") as f:
            f.write(text)
    return sorted((os.path.join(outdir, fn) for fn in srcs if fn.endswith(".cc")), key=lambda p: -os.path.getsize(p))


def compile_split(ccs: list, so: str, jobs: int = 2, opt: str = "-O2", opt_self: str | None = None,
                  cxx: tuple = ("g++",)) -> float:
    """Compiles each .cc to an object (at most `jobs` compilers at once, biggest first), links them
    into `so`; returns the wall seconds of the whole build. opt_self: optimisation flag for the
    self-collision files (self_*.cc), default opt."""
    import time
    t0 = time.perf_counter()
    pending = list(ccs)
    running = []
    objs = []
    while pending or running:
        while pending and len(running) < jobs:
            cc = pending.pop(0)
            o = opt_self if (opt_self and os.path.basename(cc).startswith("self_")) else opt
            obj = cc[:-3] + ".o"
            objs.append(obj)
            running.append((cc, subprocess.Popen([*cxx, o, *SPLIT_FLAGS, "-c", "-o", obj, cc])))
        done_one = False
        for item in list(running):
            if item[1].poll() is not None:
                if item[1].returncode:
                    raise RuntimeError(f"compiling {item[0]} failed")
                running.remove(item)
                done_one = True
        if not done_one:
            time.sleep(0.01)
    subprocess.run([*cxx, "-shared", "-o", so, *objs], check=True)
    return time.perf_counter() - t0


def split_tag(name: str, n_files: int, compact: bool, opt: str, opt_self: str | None) -> str:
    return f"{name}_split{n_files}{'_compact' if compact else ''}{opt}{'_self' + opt_self if opt_self else ''}"


def build_split(name: str, n_files: int = 2, jobs: int = 2, compact: bool = False, opt: str = "-O2",
                opt_self: str | None = None, force: bool = False) -> str:
    tag = split_tag(name, n_files, compact, opt, opt_self)
    d = os.path.join(BUILD, tag)
    so = os.path.join(BUILD, tag + ".so")
    if force or not os.path.exists(so):
        compile_split(write_split(name, n_files, compact, d), so, jobs, opt, opt_self)
    return so


def build_from_env(name: str) -> str:
    """The kernel the PROTO_* variables ask for: PROTO_SPLIT=N (split into N self-collision files,
    built with PROTO_OPT, default -O2, and PROTO_OPT_SELF for the self-collision files, PROTO_JOBS
    compilers at once, default 2), else the single-file build (PROTO_OPT, default -O3); PROTO_COMPACT=1 for the compact variant."""
    compact = os.environ.get("PROTO_COMPACT") == "1"
    if os.environ.get("PROTO_SPLIT"):
        return build_split(name, int(os.environ["PROTO_SPLIT"]), int(os.environ.get("PROTO_JOBS", "2")), compact,
                           os.environ.get("PROTO_OPT", "-O2"), os.environ.get("PROTO_OPT_SELF") or None)
    return build(name, compact=compact, opt=os.environ.get("PROTO_OPT", "-O3"))


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
