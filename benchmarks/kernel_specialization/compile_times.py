"""Wall time to compile the generated kernels (system g++ and the ziglang wheel's clang).

usage: python3 compile_times.py [--robots panda,ur5,mobile_manipulator,dual_arm] [--variants straight,compact]
       [--compilers gcc-O2,gcc-O3,zig-O2,zig-O3] [--repeat 3]
Reports the minimum of --repeat runs (the machine may be busy). Sources are generated first (not timed
here; generation time is printed separately).
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
FLAGS = ["-mavx2", "-mfma", "-ffp-contract=off", "-fPIC", "-shared"]
COMPILERS = {
    "gcc-O2": ["g++", "-O2"], "gcc-O3": ["g++", "-O3"],
    "zig-O2": [sys.executable, "-m", "ziglang", "c++", "-O2"], "zig-O3": [sys.executable, "-m", "ziglang", "c++", "-O3"],
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--robots", default="panda,ur5,mobile_manipulator,dual_arm")
    ap.add_argument("--variants", default="straight,compact")
    ap.add_argument("--compilers", default="gcc-O2,gcc-O3,zig-O2,zig-O3")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "compile_times.json"))
    a = ap.parse_args()
    from common import load_robot
    from gen import generate
    res = json.load(open(a.out)) if os.path.exists(a.out) else {}
    os.makedirs(os.path.join(HERE, "build"), exist_ok=True)
    # zig builds its runtime libraries on first use: warm its cache outside the timing
    if any(c.startswith("zig") for c in a.compilers.split(",")):
        warm = os.path.join(HERE, "build", "warm.cc")
        open(warm, "w").write('extern "C" int f(int x) { return x + 1; }\n')
        subprocess.run(COMPILERS["zig-O2"] + FLAGS + ["-o", warm + ".so", warm], check=True)
    for robot in a.robots.split(","):
        r = load_robot(robot)
        for variant in a.variants.split(","):
            t0 = time.perf_counter()
            src = generate(r, robot, compact=(variant == "compact"))
            tgen = time.perf_counter() - t0
            path = os.path.join(HERE, "build", f"ct_{robot}_{variant}.cc")
            open(path, "w").write(src)
            print(f"{robot} {variant}: {len(src) / 1e3:.0f} kB source, generated in {tgen:.2f} s", flush=True)
            for comp in a.compilers.split(","):
                times = []
                so = path[:-3] + f"_{comp}.so"
                for i in range(a.repeat):
                    # a fresh source each run: zig caches objects by content (a repeat would be a cache hit)
                    open(path, "w").write(src + f"\n// {comp} run {i} {time.time()}\n")
                    t0 = time.perf_counter()
                    subprocess.run(COMPILERS[comp] + FLAGS + ["-o", so, path], check=True)
                    times.append(time.perf_counter() - t0)
                key = f"{robot}/{variant}/{comp}"
                res[key] = {"min_s": min(times), "times": times, "source_bytes": len(src), "gen_s": tgen,
                            "so_bytes": os.path.getsize(so)}
                print(f"  {comp}: min {min(times):.2f} s of {['%.2f' % t for t in times]}, .so {os.path.getsize(so) / 1e3:.0f} kB",
                      flush=True)
                with open(a.out, "w") as f:
                    json.dump(res, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
