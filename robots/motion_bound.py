"""How far a robot sphere can move along a joint-space segment: the reach table behind certified Link.

A point fixed to body k moves, when the joint of an ancestor body b turns by dθ, along a circle about
b's axis: its speed is |dθ/dt| times its distance from that axis. A prismatic joint moves it by
exactly the joint's displacement. So along the straight segment q(t) = q0 + t (q1 - q0), the path
traced by a sphere centre is no longer than

    L_i = sum over moving ancestor bodies b of |scale_b (q1 - q0)_dof(b)| * reach[i, b]

where ``reach[i, b]`` bounds the distance of the centre from b's axis over *every* configuration
(1 for a prismatic body). The bound comes from the kinematic chain alone (triangle inequality): in
b's frame the next body's origin sits at a fixed distance from the axis (its origin's xy), and
from there the centre is at most the lengths of the origins further down plus the prismatic
travel plus the centre's own offset away. For the body that carries the sphere the distance is
exact. This is the "reach" of robots/self_collision.py, per sphere and body.

The C++ core turns the table into per-group and per-pair bounds (cpp/src/kin/robot_model.cc) for the
certificate of cpp/include/simdplan/collision/certified_link.hh.
"""

from __future__ import annotations

import numpy as np

from simdplan.robots.program import KIND_PRISMATIC, KIND_REVOLUTE, Program

# float32 table rounded up, with relative and absolute slack for the float64 sums above
_REL_SLACK = 1e-6
_ABS_SLACK = 1e-7


def _travel(prog: Program, body: int) -> float:
    """Largest |joint value| a prismatic body can take (0 for others): how far its frame slides."""
    if int(prog.body_kind[body]) != KIND_PRISMATIC:
        return 0.0
    d = int(prog.body_dof[body])
    s, o = float(prog.body_scale[body]), float(prog.body_offset[body])
    return max(abs(s * float(prog.lower[d]) + o), abs(s * float(prog.upper[d]) + o))


def sphere_reach(prog: Program) -> np.ndarray:
    """(n_spheres, n_bodies) float64: the bound on each sphere centre's distance from each body's
    joint axis described in the module docstring (0 where the body does not move the sphere)."""
    nb, ns = len(prog.body_parent), len(prog.spheres)
    origin_t = np.asarray(prog.body_origin, dtype=np.float64).reshape(nb, 3, 4)[:, :, 3]
    out = np.zeros((ns, nb))
    sphere_body = np.asarray(prog.group_body)[np.asarray(prog.sphere_group)]
    for i in range(ns):
        local = np.asarray(prog.spheres[i, :3], dtype=np.float64)
        chain = []  # sphere's body up to the root
        b = int(sphere_body[i])
        while b >= 0:
            chain.append(b)
            b = int(prog.body_parent[b])
        # beyond: bound on the distance from the origin of chain[m]'s frame (before its own joint
        # moves it, for prismatic bodies) to the centre, built from the sphere's body upwards
        beyond = float(np.linalg.norm(local)) + _travel(prog, chain[0])
        for m, b in enumerate(chain):
            kind = int(prog.body_kind[b])
            if kind == KIND_PRISMATIC:
                out[i, b] = 1.0
            elif kind == KIND_REVOLUTE:
                if m == 0:
                    out[i, b] = float(np.hypot(local[0], local[1]))
                else:
                    child = chain[m - 1]
                    t = origin_t[child]
                    out[i, b] = float(np.hypot(t[0], t[1])) + beyond_child
            if m + 1 < len(chain):
                beyond_child = beyond  # from chain[m]'s (pre-joint) origin
                beyond = float(np.linalg.norm(origin_t[b])) + beyond + _travel(prog, chain[m + 1])
    return out


def reach_table_f32(prog: Program) -> np.ndarray:
    """sphere_reach as the float32 table the core reads, never below the float64 values."""
    exact = sphere_reach(prog)
    r = exact * (1 + _REL_SLACK) + np.where(exact > 0, _ABS_SLACK, 0.0)
    f = r.astype(np.float32)
    low = f.astype(np.float64) < r
    f[low] = np.nextafter(f[low], np.float32(np.inf))
    return f
