"""Instructions per configuration of Clear(q) (callgrind), generic vs specialized kernel.

usage: python3 measure.py [--robots ur5,panda] [--isas avx2,avx512] [--envs empty,spheres16,...]
       [--kernels generic,specialized] [--scene-envs] [--out results.json]
Runs one valgrind process per (kernel, robot, ISA); each kernel call is dumped separately
(--toggle-collect and --dump-after on the entry point: RobotModel::is_valid_many for the generic
kernel, sp_is_valid_many for the generated one), so a figure covers the call's C++ work only
(conversion of the float64 rows, limits, FK, environment, self-collision), not Python, nanobind or
ctypes. Per configuration = (I(BIG) - I(SMALL)) / (BIG - SMALL), which removes per-call fixed costs.
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ENTRY = {"generic": "*RobotModel::is_valid_many*", "specialized": "is_valid_many_impl*"}
# --dump-after wants the exact (demangled) name
EXACT = {"generic": "simdplan::RobotModel::is_valid_many(simdplan::Environment const&, simdplan::Strided const&, "
                    "float, unsigned char*) const",
         "specialized": "is_valid_many_impl(double const*, long, float const*, int, unsigned char*)"}
SCENE = {"panda": "panda_bookshelf", "ur5": "ur5_table"}


def variant_suffix():
    """How the specialized kernel was built (PROTO_* variables, see kernel.build_from_env):
    "" = single file -O3 straight (the original key), else e.g. "-compact", "-split2-O2", "-split2-O2-selfO1"."""
    s = "-compact" if os.environ.get("PROTO_COMPACT") == "1" else ""
    if os.environ.get("PROTO_SPLIT"):
        s += f"-split{os.environ['PROTO_SPLIT']}{os.environ.get('PROTO_OPT', '-O2')}"
        if os.environ.get("PROTO_OPT_SELF"):
            s += "-self" + os.environ["PROTO_OPT_SELF"].lstrip("-")
    elif os.environ.get("PROTO_OPT", "-O3") != "-O3":
        s += os.environ["PROTO_OPT"]
    return s


def totals(path):
    with open(path) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise RuntimeError(f"no totals in {path}")


def run(kernel, robot, isa, envs, small, big, outdir):
    prefix = os.path.join(outdir, f"cg_{kernel}{variant_suffix() if kernel == 'specialized' else ''}_{robot}_{isa}")
    for f in glob.glob(prefix + ".*"):
        os.remove(f)
    cmd = ["valgrind", "--tool=callgrind", f"--toggle-collect={ENTRY[kernel]}", f"--dump-after={EXACT[kernel]}",
           f"--callgrind-out-file={prefix}.out", sys.executable, os.path.join(HERE, "run_many.py"), kernel, robot,
           ",".join(envs), str(small), str(big)]
    env = dict(os.environ, SIMDPLAN_ISA=isa, PYTHONHASHSEED="0")
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    parts = sorted(glob.glob(prefix + ".out.*"), key=lambda p: int(p.rsplit(".", 1)[1]))
    counts = [totals(p) for p in parts]
    assert len(counts) == 3 * len(envs), (prefix, len(counts))
    res = {}
    for i, e in enumerate(envs):
        warm, s, b = counts[3 * i: 3 * i + 3]
        res[e] = {"small": s, "big": b, "per_config": (b - s) / (big - small), "big_part": parts[3 * i + 2]}
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--robots", default="ur5,panda")
    ap.add_argument("--isas", default="avx2,avx512")
    ap.add_argument("--envs", default="empty,spheres16,spheres64")
    ap.add_argument("--kernels", default="generic,specialized")
    ap.add_argument("--scene-envs", action="store_true", help="generic also on the robot's example scene")
    ap.add_argument("--small", type=int, default=64)
    ap.add_argument("--big", type=int, default=4096)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "instructions.json"))
    a = ap.parse_args()
    outdir = os.path.join(HERE, "results", "callgrind")
    os.makedirs(outdir, exist_ok=True)
    results = json.load(open(a.out)) if os.path.exists(a.out) else {}
    for kernel in a.kernels.split(","):
        for robot in a.robots.split(","):
            envs = a.envs.split(",")
            if kernel == "generic" and a.scene_envs:
                envs = envs + [SCENE[robot]]
            isas = a.isas.split(",") if kernel == "generic" else ["avx2"]  # the generated code is AVX2 only
            for isa in isas:
                r = run(kernel, robot, isa, envs, a.small, a.big, outdir)
                for e, v in r.items():
                    kname = kernel + (variant_suffix() if kernel == "specialized" else "")
                    key = f"{kname}/{robot}/{isa}/{e}"
                    results[key] = v
                    print(f"{key}: {v['per_config']:.1f} instructions per configuration", flush=True)
                with open(a.out, "w") as f:
                    json.dump(results, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
