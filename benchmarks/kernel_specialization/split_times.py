"""Wall time to build the split kernel (gen.generate_split): N self-collision files + fk.cc + driver.cc,
compiled by g++ with at most JOBS compilers at once, then linked into one .so (kernel.compile_split).

usage: python3 split_times.py [--robots ur5,panda,mobile_manipulator,dual_arm] [--variants straight,compact]
       [--files 2] [--jobs 1,2] [--opt -O2] [--opt-self -O2,-O1] [--repeat 2]
Reports the minimum of --repeat builds (the machine may be busy); generation time printed separately.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--robots", default="ur5,panda,mobile_manipulator,dual_arm")
    ap.add_argument("--variants", default="straight,compact")
    ap.add_argument("--files", default="2", help="numbers of self-collision files, comma-separated")
    ap.add_argument("--jobs", default="1,2")
    ap.add_argument("--opt", default="-O2")
    ap.add_argument("--opt-self", default="-O2,-O1")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(HERE, "results", "split_times.json"))
    a = ap.parse_args()
    from common import load_robot
    from gen import generate_split
    from kernel import BUILD, compile_split
    res = json.load(open(a.out)) if os.path.exists(a.out) else {}
    for robot in a.robots.split(","):
        r = load_robot(robot)
        for variant in a.variants.split(","):
            for nf in (int(x) for x in a.files.split(",")):
                t0 = time.perf_counter()
                srcs = generate_split(r, robot, nf, compact=(variant == "compact"))
                tgen = time.perf_counter() - t0
                d = os.path.join(BUILD, f"st_{robot}_{variant}_{nf}")
                os.makedirs(d, exist_ok=True)
                for fn, text in srcs.items():
                    open(os.path.join(d, fn), "w").write(text)
                ccs = sorted((os.path.join(d, fn) for fn in srcs if fn.endswith(".cc")), key=lambda p: -os.path.getsize(p))
                sizes = {fn: len(t) for fn, t in srcs.items()}
                print(f"{robot} {variant} files={nf}: {sum(sizes.values()) / 1e3:.0f} kB "
                      f"({', '.join(f'{k} {v / 1e3:.0f}' for k, v in sizes.items())}), generated in {tgen:.2f} s", flush=True)
                for os_ in a.opt_self.split(","):
                    for jobs in (int(x) for x in a.jobs.split(",")):
                        so = os.path.join(d, "k.so")
                        times = [compile_split(ccs, so, jobs, a.opt, os_) for _ in range(a.repeat)]
                        key = f"{robot}/{variant}/files{nf}/{a.opt}/self{os_}/jobs{jobs}"
                        res[key] = {"min_s": min(times), "times": times, "source_bytes": sizes, "gen_s": tgen,
                                    "so_bytes": os.path.getsize(so)}
                        print(f"  self {os_} jobs {jobs}: min {min(times):.2f} s of {['%.2f' % t for t in times]},"
                              f" .so {os.path.getsize(so) / 1e3:.0f} kB", flush=True)
                        with open(a.out, "w") as f:
                            json.dump(res, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
