"""Inverse kinematics against TRAC-IK, pinocchio's CLIK and ikpy, side by side on the same poses.

    python3 benchmarks/bench_ik.py                      # 10,000 poses per robot (anchors: see --anchor-poses)
    python3 benchmarks/bench_ik.py --poses 500 --quick  # a smoke run
    pip install pytracik pin ikpy                       # the anchors (each is skipped when missing)

Poses: the world pose of each robot's end link (panda_link7, ur5 tool0, iiwa lbr_iiwa_link_7) at
random collision-free configurations (uniform in the limits, seed 0): every pose is reachable. Every
solver gets the same poses; a solve succeeds when its configuration is inside the joint limits and
its float64 forward kinematics (link_pose64 below) reaches the pose within 1e-4 m and
1e-3 rad. Ours must also be free of self-collision (the anchors are not asked to be).

- simdplan: ``robot.ik(pose, link)``, one call per pose (single), and ``robot.ik_many`` (batch, per pose);
- TRAC-IK (``pytracik``, Speed mode, 5 ms timeout, epsilon 1e-5, the URDF's limits), seeded at a
  random configuration in the limits;
- pinocchio CLIK (``pin``): damped least squares on log6 of the pose error, as pinocchio's example
  and RoboPlan use it, up to 1000 iterations from a random seed, restarted up to 10 times;
- ikpy (``ikpy``, its default optimizer), from a random seed.
Times are wall-clock per solve from Python (median, p95). The slower anchors run on the first
``--anchor-poses`` poses only (default 1000) and say so.

Pose goals (the MotionBenchMaker panda problems, each goal's hand pose as the goal; then problems
generated for each robot of --generated-robots, each goal's end-link pose as the goal): planning + IK
is stats["planning_time_ns"] + stats["ik_time_ns"], both timed in the core, against the joint-goal
plan's stats["planning_time_ns"]; the wall time of each whole plan call is printed beside them. The
dual-arm robot's pose goal places one arm's end and leaves the other arm free.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

import simdplan
from simdplan.bench import robots as bench_robots
from simdplan.bench.records import write_raw
from simdplan.robots import builtin_paths
from simdplan.planner.pose_goals import DEFAULT_IK_SOLUTIONS
from simdplan.robots import ik as ik_mod
from simdplan.robots.program import KIND_FIXED, KIND_REVOLUTE

ROBOTS = {"panda": ("panda_link0", "panda_link7"), "ur5": ("base_link", "tool0"), "iiwa": ("lbr_iiwa_link_0", "lbr_iiwa_link_7")}
POS_TOL, ROT_TOL = 1e-4, 1e-3


def body_frame64(program, q: np.ndarray, body: int) -> np.ndarray:
    """(4, 4) float64 world frame of ``body`` of the kinematic program at ``q`` (independent of the
    float32 kernels and of the core's own float64 check: T = T_parent origin Jz(scale q + offset))."""
    chain = []
    b = int(body)
    while b >= 0:
        chain.append(b)
        b = int(program.body_parent[b])
    T = np.eye(4)
    o = np.eye(4)
    for b in reversed(chain):
        o[:3, :4] = np.asarray(program.body_origin[b], dtype=np.float64).reshape(3, 4)
        T = T @ o
        kind = int(program.body_kind[b])
        if kind != KIND_FIXED:
            v = float(program.body_scale[b]) * q[int(program.body_dof[b])] + float(program.body_offset[b])
            if kind == KIND_REVOLUTE:
                c, s = np.cos(v), np.sin(v)
                T[:, :2] = T[:, :2] @ np.array([[c, -s], [s, c]])
            else:
                T[:, 3] += v * T[:, 2]
    return T


def link_pose64(program, q, link: str) -> np.ndarray:
    """(4, 4) float64 world pose of ``link`` at ``q`` (float64 forward kinematics of the program)."""
    i = program.link_names.index(link)
    return body_frame64(program, np.asarray(q, dtype=np.float64), int(program.link_body[i])) @ program.link_in_body[i]


def pose_errors(current: np.ndarray, goal: np.ndarray, mode: int, axis: int) -> tuple[float, float]:
    """(position error m, angle error rad) of ``current`` against ``goal`` (4 x 4 each) under a mask."""
    pos = float(np.linalg.norm(current[:3, 3] - goal[:3, 3]))
    if mode == 1:
        return pos, 0.0
    if mode == 2:
        a, g = current[:3, axis], goal[:3, axis]
        return pos, float(np.arctan2(np.linalg.norm(np.cross(a, g)), a @ g))
    R = goal[:3, :3] @ current[:3, :3].T
    vee = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    return pos, float(np.arctan2(np.linalg.norm(vee), (np.trace(R) - 1.0) / 2.0))


def urdf_of(name: str) -> str:
    if name == "iiwa":
        import pybullet_data

        return os.path.join(pybullet_data.getDataPath(), "kuka_iiwa", "model.urdf")
    return builtin_paths(name)[0]


def poses_for(robot, link: str, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    qs = []
    while len(qs) < n:
        q = rng.uniform(robot.lower, robot.upper, (max(64, n), robot.dof))
        qs.extend(q[robot.is_valid_many(q)])
    qs = np.array(qs[:n])
    return qs, [link_pose64(robot._program, q, link) for q in qs]


def in_base(robot, name: str, goals):
    """The goals in the frame of the anchors' chain base link (our goals are world frames)."""
    base = link_pose64(robot._program, 0.5 * (robot.lower + robot.upper), ROBOTS[name][0])
    inv = np.linalg.inv(base)
    return [inv @ g for g in goals]


def chain_elements(robot, base: str, tip: str) -> list[str]:
    """Link and joint names from ``base`` to ``tip`` (ikpy's base_elements: the chain to follow)."""
    by_child = {j.child: j for j in robot.description.joints}
    out, link = [tip], tip
    while link != base:
        j = by_child[link]
        out += [j.name, j.parent]
        link = j.parent
    return out[::-1]


def reached(robot, link: str, q, goal) -> bool:
    if q is None or not np.all(np.isfinite(q)) or np.any(q < robot.lower - 1e-9) or np.any(q > robot.upper + 1e-9):
        return False
    pe, ae = pose_errors(link_pose64(robot._program, q, link), goal, 0, 2)
    return pe <= POS_TOL and ae <= ROT_TOL


def run_ours(robot, link, goals):
    times, ok = [], 0
    for i, g in enumerate(goals):
        t0 = time.perf_counter()
        res = robot.ik(g, link, seed=i)
        times.append(time.perf_counter() - t0)
        ok += res.success and reached(robot, link, res.solutions[0], g) and robot.is_valid(res.solutions[0])
    t0 = time.perf_counter()
    batch = robot.ik_many(goals, link)
    per = (time.perf_counter() - t0) / len(goals)
    ok_b = sum(r.success and reached(robot, link, r.solutions[0], g) for r, g in zip(batch, goals))
    return {"solver": "simdplan", "n": len(goals), "success": ok / len(goals), "median_us": 1e6 * statistics.median(times),
            "p95_us": 1e6 * float(np.percentile(times, 95)), "mean_us": 1e6 * statistics.mean(times),
            "batch_per_pose_us": 1e6 * per, "batch_success": ok_b / len(goals)}


def run_tracik(robot, name, link, goals):
    import pytracik
    from scipy.spatial.transform import Rotation

    base, tip = ROBOTS[name]
    with open(urdf_of(name)) as f:
        solver = pytracik.TRAC_IK(base, tip, f.read(), 0.005, 1e-5, pytracik.Speed)
    pytracik.set_joint_limits(solver, robot.lower.tolist(), robot.upper.tolist())
    rng = np.random.default_rng(1)
    times, ok = [], 0
    for g, gb in zip(goals, in_base(robot, name, goals)):
        seed = rng.uniform(robot.lower, robot.upper)
        quat = Rotation.from_matrix(gb[:3, :3]).as_quat()  # x, y, z, w
        t0 = time.perf_counter()
        out = pytracik.ik(solver, seed, gb[0, 3], gb[1, 3], gb[2, 3], *quat)
        times.append(time.perf_counter() - t0)
        ok += out[0] >= 0 and reached(robot, link, np.asarray(out[1:]), g)
    return {"solver": "TRAC-IK (pytracik)", "n": len(goals), "success": ok / len(goals),
            "median_us": 1e6 * statistics.median(times), "p95_us": 1e6 * float(np.percentile(times, 95))}


def run_pin(robot, name, link, goals):
    import pinocchio as pin

    model = pin.buildModelFromUrdf(urdf_of(name))
    data = model.createData()
    frame = model.getFrameId(link)
    order = [model.getJointId(j) - 1 for j in robot.joint_names]  # pinocchio's q index per our joint (1-dof joints)
    rng = np.random.default_rng(2)
    times, ok = [], 0
    for g in goals:
        target = pin.SE3(g[:3, :3], g[:3, 3])
        t0 = time.perf_counter()
        found = None
        for _ in range(10):
            q = pin.neutral(model)
            q[order] = rng.uniform(robot.lower, robot.upper)
            for _ in range(1000):
                pin.framesForwardKinematics(model, data, q)
                err = pin.log6(data.oMf[frame].actInv(target)).vector
                if np.linalg.norm(err[:3]) < POS_TOL * 0.5 and np.linalg.norm(err[3:]) < ROT_TOL * 0.5:
                    found = q
                    break
                J = pin.computeFrameJacobian(model, data, q, frame)
                v = J.T @ np.linalg.solve(J @ J.T + 1e-6 * np.eye(6), err)
                q = np.clip(pin.integrate(model, q, v), model.lowerPositionLimit, model.upperPositionLimit)
            if found is not None:
                break
        times.append(time.perf_counter() - t0)
        ok += found is not None and reached(robot, link, np.asarray(found)[order], g)
    return {"solver": "pinocchio CLIK", "n": len(goals), "success": ok / len(goals),
            "median_us": 1e6 * statistics.median(times), "p95_us": 1e6 * float(np.percentile(times, 95))}


def run_ikpy(robot, name, link, goals):
    import warnings

    import ikpy.chain

    base, tip = ROBOTS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        elements = chain_elements(robot, base, tip)
        full = ikpy.chain.Chain.from_urdf_file(urdf_of(name), base_elements=elements)
        # ikpy follows the URDF past the tip (to a finger): end its chain at the joint into the tip
        names = [link.name for link in full.links]
        links = full.links[: names.index(elements[-2]) + 1]
        active = [i for i, link in enumerate(links) if link.name in robot.joint_names]
        chain = ikpy.chain.Chain(links, active_links_mask=[i in active for i in range(len(links))])
    rng = np.random.default_rng(3)
    times, ok = [], 0
    for g0, g in zip(goals, in_base(robot, name, goals)):
        seed = np.zeros(len(chain.links))
        seed[active] = rng.uniform(robot.lower, robot.upper)
        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = chain.inverse_kinematics(g[:3, 3], g[:3, :3], orientation_mode="all", initial_position=seed)
        times.append(time.perf_counter() - t0)
        ok += reached(robot, link, np.asarray(out)[active], g0)
    return {"solver": "ikpy", "n": len(goals), "success": ok / len(goals),
            "median_us": 1e6 * statistics.median(times), "p95_us": 1e6 * float(np.percentile(times, 95))}


def compare_pose_goals(robot, link: str, problems, ik_solutions: int) -> dict:
    """Each problem (env, start, goals) planned to its goal configurations and, again, to the pose
    of ``link`` at each of them (plan(goal_pose=...)), IK with the environment counted apart."""
    ik_ok = ik_total = 0
    joint, pose = [], []
    for env, start, q_goals in problems:
        goals = [link_pose64(robot._program, g, link) for g in np.atleast_2d(q_goals)]
        for g in goals:
            ik_total += 1
            ik_ok += robot.ik(g, link, env).success
        t0 = time.perf_counter()
        rj = simdplan.plan(robot, env, start, q_goals, seed=0)
        wj = time.perf_counter() - t0
        t0 = time.perf_counter()
        rp = simdplan.plan(robot, env, start, goal_pose=goals, goal_link=link, seed=0, ik_solutions=ik_solutions)
        wp = time.perf_counter() - t0
        joint.append((rj.success, rj.stats["planning_time_ns"] / 1e3, wj * 1e6))
        pose.append((rp.success, (rp.stats.get("planning_time_ns", 0) + rp.stats["ik_time_ns"]) / 1e3, wp * 1e6,
                     rp.stats["ik_time_ns"] / 1e3))
    med = lambda rows, k: statistics.median(r[k] for r in rows if r[0])  # noqa: E731
    return {"problems": len(joint), "link": link, "ik_success": ik_ok / max(ik_total, 1), "ik_goals": ik_total,
            "joint_solved": sum(r[0] for r in joint), "pose_solved": sum(r[0] for r in pose),
            "joint_plan_median_us": med(joint, 1), "pose_plan_ik_median_us": med(pose, 1),
            "pose_ik_median_us": med(pose, 3), "joint_wall_median_us": med(joint, 2), "pose_wall_median_us": med(pose, 2),
            "ik_solutions": ik_solutions}


def mbm_problems(limit: int | None):
    """The valid MotionBenchMaker panda problems (the first ``limit`` of each class), as (robot, problems)."""
    from simdplan.bench.mbm import load_problems

    scenes = load_problems(None, None, "reference", None, limit, valid_only=True)
    return scenes[0].robot, [(s.env, s.start, s.goals) for s in scenes]


def generated_problems(robot, n: int):
    """``n`` generated problems of every family (simdplan.scenes.generate, seed 0)."""
    return [(p.env, p.start, p.goals) for family in simdplan.scenes.FAMILIES
            for p in simdplan.scenes.generate(robot, family, n, seed=0)]


def pose_goal_line(what: str, mb: dict) -> str:
    return (f"{what}, {mb['problems']} problems, each goal's {mb['link']} pose as the goal: IK with the environment "
            f"solved {mb['ik_success']:.4f} of {mb['ik_goals']} poses; solved {mb['pose_solved']} to poses vs "
            f"{mb['joint_solved']} to joint goals; median planning + IK {mb['pose_plan_ik_median_us']:.1f} us (IK "
            f"{mb['pose_ik_median_us']:.1f}) vs planning {mb['joint_plan_median_us']:.1f} us "
            f"({mb['pose_plan_ik_median_us'] / mb['joint_plan_median_us']:.2f}x); wall time of the plan call "
            f"{mb['pose_wall_median_us']:.0f} vs {mb['joint_wall_median_us']:.0f} us; ik_solutions {mb['ik_solutions']}.")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--poses", type=int, default=10_000)
    ap.add_argument("--anchor-poses", type=int, default=1000, help="poses for pinocchio CLIK and ikpy (slower)")
    ap.add_argument("--robots", default="panda,ur5,iiwa")
    ap.add_argument("--json", default=os.path.join(os.path.dirname(__file__), "results", "ik.json"))
    ap.add_argument("--mbm-limit", type=int, default=0, help="pose goals: the first N problems of each class (0: all)")
    ap.add_argument("--generated", type=int, default=10, help="pose goals: generated problems per family and robot")
    ap.add_argument("--generated-robots", default="panda,ur5,iiwa,mobile_manipulator,dual_arm",
                    help="pose goals on generated problems for these robots (empty: none)")
    ap.add_argument("--ik-solutions", type=int, default=DEFAULT_IK_SOLUTIONS,
                    help="pose goals: IK solutions per pose in the first round (plan's ik_solutions)")
    args = ap.parse_args()
    out = {"machine": {"platform": platform.platform(), **simdplan.info()}, "rows": []}
    head = (f"{'robot':6s} {'solver':22s} {'poses':>6s} {'success':>8s} {'median us':>10s} {'p95 us':>9s} "
            f"{'mean us':>9s} {'batch us/pose':>13s} {'ours / it':>9s}")
    print(head)
    print("-" * len(head))
    for name in args.robots.split(","):
        robot = bench_robots.load(name)
        link = ROBOTS[name][1]
        _, goals = poses_for(robot, link, args.poses)
        ours = run_ours(robot, link, goals)
        rows = [ours]
        for run, n in ((run_tracik, args.poses), (run_pin, args.anchor_poses), (run_ikpy, args.anchor_poses)):
            try:
                rows.append(run(robot, name, link, goals[:n]))
            except ImportError as exc:
                print(f"{name}: skipping {run.__name__[4:]}: {exc}", file=sys.stderr)
        for r in rows:
            ratio = ours["median_us"] / r["median_us"]
            batch = f"{r['batch_per_pose_us']:13.1f}" if "batch_per_pose_us" in r else f"{'':13s}"
            mean = f"{r['mean_us']:9.1f}" if "mean_us" in r else f"{'':9s}"
            print(f"{name:6s} {r['solver']:22s} {r['n']:6d} {r['success']:8.4f} {r['median_us']:10.1f} {r['p95_us']:9.1f} "
                  f"{mean} {batch} {ratio:9.3f}")
            out["rows"].append({"robot": name, **r})
    robot, problems = mbm_problems(args.mbm_limit or None)
    mb = compare_pose_goals(robot, "panda_hand", problems, args.ik_solutions)
    out["mbm_pose_goals"] = mb
    print()
    print(pose_goal_line("MotionBenchMaker panda", mb))
    out["generated_pose_goals"] = {}
    for name in filter(None, args.generated_robots.split(",")):
        robot = bench_robots.load(name)
        # one arm's end for a robot with several: the pose goal then leaves the other arm free
        link = ik_mod.default_link(robot, robot._program) if len(robot.tip_links()) == 1 else robot.tip_links()[0][0]
        gen = compare_pose_goals(robot, link, generated_problems(robot, args.generated), args.ik_solutions)
        out["generated_pose_goals"][name] = gen
        print(pose_goal_line(f"generated {name}", gen))
    print(f"success: inside the limits and within {POS_TOL} m / {ROT_TOL} rad by float64 FK (ours also free of "
          f"self-collision); batch us/pose: ik_many's wall time / poses (compare with the mean); ours / it: our "
          f"median single-solve time over the solver's; {simdplan.info()['isa']}.")
    write_raw(args.json, out)
    print(f"raw numbers: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
