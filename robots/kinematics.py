"""Compiles a RobotDescription into the flat kinematic program the C++ core runs.

The program (documented for the C++ side in cpp/include/simdplan/kin/robot_view.hh):
- Bodies: links joined rigidly in the *compiled* model are merged into one body. A body starts at
  every movable joint that is active (or mimics an active joint); fixed joints and joints held at a
  constant value fold into the origin. The body frame is the joint frame rotated so the joint axis
  is local +z, so every revolute joint is a rotation about z and every prismatic joint a
  translation along z (cheapest for SIMD lanes).
- Groups: the spheres of one link, expressed in its body's frame, with a bounding sphere.
- Self-collision pairs of groups, from the SRDF and the adjacency rule below.

Adjacency rule (``skip_adjacent=True``, the default): links joined through fixed joints of the
URDF form one rigid cluster; pairs inside a cluster are never checked, nor pairs of clusters joined
by a single movable joint. This matches how the reference sphere models were validated on the
MotionBenchMaker sets. It is computed on the URDF itself, so holding joints constant does not
change which pairs are checked.
"""

from __future__ import annotations


import numpy as np

from simdplan.robots.description import MOVABLE, RobotDescription
from simdplan.robots.motion_bound import reach_table_f32
from simdplan.robots.program import KIND_FIXED, KIND_PRISMATIC, KIND_REVOLUTE, Program

# NOTE: margin so that float32 rounding never lets a sphere poke out of its group's bound.
BOUND_MARGIN = 1e-5


def z_to_axis(axis: np.ndarray) -> np.ndarray:
    """A rotation (3, 3) taking +z to the unit vector ``axis``."""
    z = np.array([0.0, 0.0, 1.0])
    a = axis / np.linalg.norm(axis)
    c = float(z @ a)
    if c > 1 - 1e-12:
        return np.eye(3)
    if c < -1 + 1e-12:
        return np.diag([1.0, -1.0, -1.0])  # half turn about x
    v = np.cross(z, a)
    vx = np.array([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])
    return np.eye(3) + vx + vx @ vx * (1.0 / (1.0 + c))


def joint_motion(joint_type: str, axis: np.ndarray, value: float) -> np.ndarray:
    """(4, 4) motion of a joint at ``value`` (rotation about / translation along ``axis``)."""
    m = np.eye(4)
    if joint_type in ("revolute", "continuous"):
        a = axis
        k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
        m[:3, :3] = np.eye(3) + np.sin(value) * k + (1 - np.cos(value)) * (k @ k)
    elif joint_type == "prismatic":
        m[:3, 3] = axis * value
    return m


# A rotation whose entries all lie within SNAP of 0, 1 or -1 (a frame turned by multiples of 90
# degrees, as URDFs write them: rpy 1.570796325 leaves cos = 1.8e-9, 1.570796 leaves 3.3e-7) becomes
# that signed permutation exactly, so the core's FK copies columns instead of multiplying
# (kin/robot_view.hh, body_axes). Points move by at most about SNAP x their distance from the frame
# (2 um at 2 m), a few float32 ulps of the coordinates the core computes with. Other rotations are
# left exactly as they are.
SNAP = 1e-6


def snap_rotation(m: np.ndarray) -> np.ndarray:
    """A copy of the (4, 4) transform m, its rotation snapped to a signed permutation if within SNAP of one."""
    out = np.array(m, dtype=np.float64)
    r = out[:3, :3]
    target = np.round(r)
    if np.all(np.abs(r - target) < SNAP) and np.all(np.abs(target).sum(axis=0) == 1) \
            and np.all(np.abs(target).sum(axis=1) == 1):
        out[:3, :3] = target
    return out


def _bounding_sphere(spheres: np.ndarray) -> np.ndarray:
    lo = (spheres[:, :3] - spheres[:, 3:]).min(axis=0)
    hi = (spheres[:, :3] + spheres[:, 3:]).max(axis=0)
    centre = 0.5 * (lo + hi)
    radius = float(np.max(np.linalg.norm(spheres[:, :3] - centre, axis=1) + spheres[:, 3]))
    return np.r_[centre, radius * (1 + BOUND_MARGIN) + BOUND_MARGIN]


def rigid_clusters(desc: RobotDescription) -> dict[str, int]:
    """Cluster id of each link: links joined by fixed joints of the URDF share one."""
    parent = {name: name for name in desc.links}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for j in desc.joints:
        if j.type == "fixed":
            parent[find(j.child)] = find(j.parent)
    roots = {}
    return {name: roots.setdefault(find(name), len(roots)) for name in desc.links}


def compile_program(desc: RobotDescription, active: list[str], held: dict[str, float], base_pose: np.ndarray,
                    disabled: set, skip_adjacent: bool) -> Program:
    by_name = {j.name: j for j in desc.joints}
    dof_of = {name: i for i, name in enumerate(active)}
    children: dict[str, list] = {}
    for j in desc.joints:
        children.setdefault(j.parent, []).append(j)

    def driver(j):
        """(dof index, scale, offset) if joint j moves with the configuration, else None."""
        if j.type not in MOVABLE:
            return None
        if j.name in dof_of:
            return dof_of[j.name], 1.0, 0.0
        if j.mimic is not None and j.mimic.joint in dof_of:
            return dof_of[j.mimic.joint], j.mimic.multiplier, j.mimic.offset
        return None

    def held_value(j):
        if j.mimic is not None and j.mimic.joint not in dof_of:
            return j.mimic.multiplier * held_value(by_name[j.mimic.joint]) + j.mimic.offset
        return held.get(j.name, 0.0)

    body_parent, body_kind, body_dof, body_scale, body_offset, body_origin = [-1], [KIND_FIXED], [-1], [1.0], [0.0], []
    body_origin.append(snap_rotation(base_pose)[:3, :4].reshape(-1))
    link_names, link_body, link_in_body = [desc.root], [0], [np.eye(4)]
    where = {desc.root: 0}
    # breadth-first keeps parents before children and links of one body close together
    queue = [desc.root]
    while queue:
        link = queue.pop(0)
        li = where[link]
        for j in children.get(link, []):
            parent_body = link_body[li]
            joint_frame = link_in_body[li] @ j.origin  # joint frame in the parent body's frame
            drv = driver(j)
            if drv is None:
                body, in_body = parent_body, joint_frame @ joint_motion(j.type, j.axis, held_value(j)
                                                                         if j.type in MOVABLE else 0.0)
            else:
                rot = np.eye(4)
                rot[:3, :3] = z_to_axis(j.axis)
                origin = snap_rotation(joint_frame @ rot)
                body = len(body_parent)
                body_parent.append(parent_body)
                body_kind.append(KIND_PRISMATIC if j.type == "prismatic" else KIND_REVOLUTE)
                body_dof.append(drv[0])
                body_scale.append(drv[1])
                body_offset.append(drv[2])
                body_origin.append(origin[:3, :4].reshape(-1))
                in_body = np.eye(4)
                in_body[:3, :3] = rot[:3, :3].T
            where[j.child] = len(link_names)
            link_names.append(j.child)
            link_body.append(body)
            link_in_body.append(in_body)
            queue.append(j.child)

    # groups ordered by body (stable in link order), spheres grouped likewise
    order = sorted(range(len(link_names)), key=lambda i: (link_body[i], i))
    group_links, group_body, group_begin, group_end, group_bound = [], [], [], [], []
    spheres, sphere_group = [], []
    for i in order:
        local = desc.links[link_names[i]].spheres
        if len(local) == 0:
            continue
        g = len(group_links)
        in_body = link_in_body[i]
        centres = local[:, :3] @ in_body[:3, :3].T + in_body[:3, 3]
        s = np.c_[centres, local[:, 3]]
        group_links.append(link_names[i])
        group_body.append(link_body[i])
        group_begin.append(len(spheres))
        spheres.extend(s)
        group_end.append(len(spheres))
        group_bound.append(_bounding_sphere(s))
        sphere_group.extend([g] * len(s))

    cluster = rigid_clusters(desc)
    parent_cluster = {cluster[j.child]: cluster[j.parent] for j in desc.joints if j.type != "fixed"}
    pairs = []
    for a in range(len(group_links)):
        for b in range(a + 1, len(group_links)):
            la, lb = group_links[a], group_links[b]
            if frozenset((la, lb)) in disabled:
                continue
            if skip_adjacent:
                ca, cb = cluster[la], cluster[lb]
                if ca == cb or parent_cluster.get(ca) == cb or parent_cluster.get(cb) == ca:
                    continue
            pairs.append((a, b))

    lower = np.array([by_name[n].lower if by_name[n].type != "continuous" else -np.pi for n in active])
    upper = np.array([by_name[n].upper if by_name[n].type != "continuous" else np.pi for n in active])
    # Continuous joints are wrapped to [-pi, pi] before the float32 kernels (accuracy for large angles),
    # except where a mimic joint follows them: its value scale * q + offset needs the raw angle.
    followed = {j.mimic.joint for j in desc.joints if j.mimic is not None and j.type in MOVABLE}
    wrap = np.array([by_name[n].type == "continuous" and n not in followed for n in active], dtype=np.uint8)
    prog = Program(
        dof=len(active), joint_names=list(active), lower=lower, upper=upper, wrap=wrap,
        body_parent=np.array(body_parent), body_kind=np.array(body_kind), body_dof=np.array(body_dof),
        body_scale=np.array(body_scale), body_offset=np.array(body_offset), body_origin=np.array(body_origin),
        group_body=np.array(group_body, dtype=np.int64), group_begin=np.array(group_begin, dtype=np.int64),
        group_end=np.array(group_end, dtype=np.int64), group_bound=np.array(group_bound).reshape(-1, 4),
        spheres=np.array(spheres).reshape(-1, 4), pairs=np.array(pairs, dtype=np.int64).reshape(-1, 2),
        group_links=group_links, sphere_group=np.array(sphere_group, dtype=np.int64),
        link_names=link_names,
        link_body=np.array(link_body), link_in_body=np.array(link_in_body))
    prog.sphere_reach = reach_table_f32(prog)
    return prog
