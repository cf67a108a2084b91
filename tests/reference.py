"""Plain NumPy (float64) reference for simdplan's geometry, kinematics and validity.

Nothing here calls simdplan's compiled core. The tests compare the C++ kernels (float32, every
ISA) with these functions. Conventions are those of DESIGN.md section 3:

- metres, radians; quaternions ``[x, y, z, w]``; Euler "xyz" is extrinsic (``R = Rz @ Ry @ Rx``).
- a shape's pose is its centre. capsule: segment of total ``length`` along local z swept by
  ``radius``; cylinder: solid, flat caps, total height ``length`` along local z; box:
  ``half_extents`` along its local axes; plane: the obstacle is the half-space
  ``{p : normal . p <= offset}`` (``normal`` need not be unit; it is normalised with the offset).
- a robot sphere of radius r (plus padding) collides with an obstacle iff the *signed* distance
  from its centre to the obstacle is strictly less than r (touching is free). Signed: negative
  inside a solid, so a point (r = 0) strictly inside any solid collides.

Obstacles are plain dicts ("specs") that both the reference and ``make_environment`` read:
  {"kind": "sphere", "center": (3,), "radius": r}
  {"kind": "capsule" | "cylinder", "position": (3,), "quat": (4,) or "euler": (3,), "radius", "length"}
  {"kind": "box", "position": (3,), "quat"/"euler", "half_extents": (3,)}
  {"kind": "plane", "normal": (3,), "offset": d}
  {"kind": "pointcloud", "points": (n, 3), "point_radius": pr}   (each point a sphere of pr >= 0)
  {"kind": "mesh", "vertices": (n, 3), "faces": (m, 3), "scale": s, pose}   a surface (unsigned distance)
  {"kind": "convex", "points": (n, 3), "scale": s, pose}   the solid convex hull of the points
(``quat``/``euler`` may be omitted: axis-aligned; ``pose`` (4, 4) may replace position + rotation.)

Robot spheres (``reference_fk``): link poses come from yourdfpy (its own URDF parser and scene
graph); each link's collision spheres (centre in the link frame, radius) come from
``robot.description.links[name].spheres``, which is the URDF's ``<collision>`` order (checked
against yourdfpy in test_kinematics). The rows of ``robot.fk`` are ordered by
``robot.sphere_links``: ``sphere_order`` asserts the assumption that every link's spheres form ONE
contiguous run of exactly that link's URDF spheres, in URDF order (links ordered by the compiled
kinematic program, spheres within a link never reordered); the FK tests then confirm it
numerically.
"""

from __future__ import annotations

import dataclasses
import functools
import logging

import numpy as np

# ----------------------------------------------------------------------------- rotations


def quat_to_matrix(quat) -> np.ndarray:
    """(3, 3) rotation of a quaternion [x, y, z, w] (normalised first)."""
    x, y, z, w = np.asarray(quat, dtype=np.float64) / np.linalg.norm(quat)
    return np.array([
        [w * w + x * x - y * y - z * z, 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), w * w - x * x + y * y - z * z, 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), w * w - x * x - y * y + z * z],
    ])


def axis_angle_matrix(axis, angle) -> np.ndarray:
    """(3, 3) rotation by ``angle`` about the unit vector ``axis`` (Rodrigues)."""
    a = np.asarray(axis, dtype=np.float64)
    a = a / np.linalg.norm(a)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * (k @ k)


def euler_xyz_to_matrix(euler) -> np.ndarray:
    """Extrinsic x, then y, then z (URDF rpy): Rz(rz) @ Ry(ry) @ Rx(rx)."""
    rx, ry, rz = np.asarray(euler, dtype=np.float64)
    return (axis_angle_matrix([0, 0, 1], rz) @ axis_angle_matrix([0, 1, 0], ry)
            @ axis_angle_matrix([1, 0, 0], rx))


def spec_pose(spec: dict) -> tuple[np.ndarray, np.ndarray]:
    """(position (3,), rotation (3, 3)) of an obstacle spec."""
    if "pose" in spec:
        m = np.asarray(spec["pose"], dtype=np.float64)
        return m[:3, 3].copy(), m[:3, :3].copy()
    pos = np.asarray(spec["position"], dtype=np.float64)
    if spec.get("quat") is not None:
        return pos, quat_to_matrix(spec["quat"])
    if spec.get("euler") is not None:
        return pos, euler_xyz_to_matrix(spec["euler"])
    return pos, np.eye(3)


# ----------------------------------------------------------------------------- distances
# Each takes points p (..., 3) and returns the signed distance (...,) to the solid obstacle:
# > 0 outside, 0 on the surface, < 0 inside.


def _pts(p) -> np.ndarray:
    return np.asarray(p, dtype=np.float64)


def sphere_distance(p, center, radius) -> np.ndarray:
    return np.linalg.norm(_pts(p) - np.asarray(center, dtype=np.float64), axis=-1) - radius


def segment_distance(p, a, b) -> np.ndarray:
    """Unsigned distance from points to the segment [a, b]."""
    p, a, b = _pts(p), np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    ab = b - a
    denom = float(ab @ ab)
    t = np.zeros(p.shape[:-1]) if denom == 0 else np.clip(((p - a) @ ab) / denom, 0.0, 1.0)
    return np.linalg.norm(p - (a + t[..., None] * ab), axis=-1)


def capsule_distance(p, position, rotation, radius, length) -> np.ndarray:
    axis = np.asarray(rotation)[:, 2]
    pos = np.asarray(position, dtype=np.float64)
    return segment_distance(p, pos - 0.5 * length * axis, pos + 0.5 * length * axis) - radius


def cylinder_distance(p, position, rotation, radius, length) -> np.ndarray:
    """Exact signed distance to a solid cylinder with flat caps (not a capsule)."""
    local = (_pts(p) - np.asarray(position, dtype=np.float64)) @ np.asarray(rotation)  # into the cylinder frame
    radial = np.linalg.norm(local[..., :2], axis=-1)
    dr = radial - radius
    dh = np.abs(local[..., 2]) - 0.5 * length
    outside = np.hypot(np.maximum(dr, 0.0), np.maximum(dh, 0.0))
    inside = np.minimum(np.maximum(dr, dh), 0.0)
    return outside + inside


def box_distance(p, position, rotation, half_extents) -> np.ndarray:
    """Exact signed distance to a solid oriented box."""
    local = (_pts(p) - np.asarray(position, dtype=np.float64)) @ np.asarray(rotation)
    q = np.abs(local) - np.asarray(half_extents, dtype=np.float64)
    outside = np.linalg.norm(np.maximum(q, 0.0), axis=-1)
    inside = np.minimum(np.max(q, axis=-1), 0.0)
    return outside + inside


def plane_distance(p, normal, offset) -> np.ndarray:
    """Signed distance to the half-space {x : normal . x <= offset} (normal need not be unit)."""
    n = np.asarray(normal, dtype=np.float64)
    norm = np.linalg.norm(n)
    return _pts(p) @ (n / norm) - offset / norm


def pointcloud_distance(p, points, point_radius=0.0) -> np.ndarray:
    """Distance from points p (..., 3) to the nearest cloud point, minus the point radius (brute force)."""
    p = _pts(p)
    flat = p.reshape(-1, 3)
    pts = np.asarray(points, dtype=np.float64)
    out = np.empty(len(flat))
    for i in range(0, len(flat), 256):  # chunks keep the (chunk, n) distance matrix small
        d2 = ((flat[i:i + 256, None, :] - pts[None, :, :]) ** 2).sum(axis=-1)
        out[i:i + 256] = np.sqrt(d2.min(axis=1))
    return out.reshape(p.shape[:-1]) - point_radius


def triangle_distance(p, a, b, c) -> np.ndarray:
    """Distance from each point p (k, 3) to the nearest of the triangles (a, b, c) (m, 3 each):
    (k,). Closest point by barycentric clamping: inside the face's prism it is the plane foot,
    otherwise the nearest point of one of the three edges. Degenerate triangles act as edges."""
    p = np.asarray(p, dtype=np.float64).reshape(-1, 3)
    a, b, c = (np.asarray(x, dtype=np.float64) for x in (a, b, c))
    best = np.full(len(p), np.inf)
    step = max(1, 200_000 // max(len(a), 1))  # chunks keep the (chunk, m, 3) arrays small
    for i in range(0, len(p), step):
        q = p[i:i + step, None, :]  # (k, 1, 3) against (m, 3)
        n = np.cross(b - a, c - a)
        nn = (n * n).sum(-1)
        ok = nn > 1e-30
        # the foot of q on each plane, and whether it lies inside the triangle (same side of all edges)
        t = ((q - a) * n).sum(-1) / np.where(ok, nn, 1.0)
        foot = q - t[..., None] * n
        inside = ok
        for u, v in ((a, b), (b, c), (c, a)):
            inside = inside & ((np.cross(v - u, foot - u) * n).sum(-1) >= 0)
        d = np.where(inside, np.abs(t) * np.sqrt(nn), np.inf)
        for u, v in ((a, b), (b, c), (c, a)):
            d = np.minimum(d, _segments(q, u, v))
        best[i:i + step] = d.min(axis=1)
    return best


def _segments(q, u, v) -> np.ndarray:
    """Distance from q (k, 1, 3) to each segment u -> v (m, 3): (k, m)."""
    e = v - u
    ee = (e * e).sum(-1)
    t = np.clip(((q - u) * e).sum(-1) / np.where(ee > 0, ee, 1.0), 0.0, 1.0)
    return np.linalg.norm(q - (u + t[..., None] * e), axis=-1)


def _placed(spec: dict, pts) -> np.ndarray:
    """A mesh or hull spec's points (n, 3), scaled and placed in the world."""
    pts = np.asarray(pts, dtype=np.float64) * spec.get("scale", 1.0)
    if "position" not in spec and "pose" not in spec:
        return pts
    pos, rot = spec_pose(spec)
    return pts @ rot.T + pos


def mesh_distance(p, spec: dict) -> np.ndarray:
    """Unsigned distance from p (..., 3) to a mesh spec's triangles (a surface)."""
    p = _pts(p)
    v = _placed(spec, spec["vertices"])
    f = np.asarray(spec["faces"])
    return triangle_distance(p.reshape(-1, 3), v[f[:, 0]], v[f[:, 1]], v[f[:, 2]]).reshape(p.shape[:-1])


def convex_distance(p, spec: dict) -> np.ndarray:
    """Signed distance from p (..., 3) to the convex hull of a convex spec's points (negative inside:
    minus the distance to the nearest facet plane; outside: distance to the nearest boundary triangle)."""
    from scipy.spatial import ConvexHull as QHull

    p = _pts(p)
    flat = p.reshape(-1, 3)
    # the hull of the scaled points rounded to float32, as simdplan stores them, then placed
    local = (np.asarray(spec["points"], dtype=np.float64) * spec.get("scale", 1.0)).astype(np.float32)
    v = _placed({**spec, "scale": 1.0}, local.astype(np.float64))
    hull = QHull(v)
    planes = hull.equations  # n . x + d <= 0 inside, n unit
    s = flat @ planes[:, :3].T + planes[:, 3]
    inside = (s <= 0).all(axis=1)
    f = hull.simplices
    out = triangle_distance(flat, v[f[:, 0]], v[f[:, 1]], v[f[:, 2]])
    out[inside] = s[inside].max(axis=1)
    return out.reshape(p.shape[:-1])


def distance(p, spec: dict) -> np.ndarray:
    """Signed distance from points p (..., 3) to the obstacle described by ``spec``."""
    kind = spec["kind"]
    if kind == "pointcloud":
        return pointcloud_distance(p, spec["points"], spec.get("point_radius", 0.0))
    if kind == "mesh":
        return mesh_distance(p, spec)
    if kind == "convex":
        return convex_distance(p, spec)
    if kind == "sphere":
        return sphere_distance(p, spec["center"], spec["radius"])
    if kind == "plane":
        return plane_distance(p, spec["normal"], spec.get("offset", 0.0))
    pos, rot = spec_pose(spec)
    if kind == "capsule":
        return capsule_distance(p, pos, rot, spec["radius"], spec["length"])
    if kind == "cylinder":
        return cylinder_distance(p, pos, rot, spec["radius"], spec["length"])
    if kind == "box":
        return box_distance(p, pos, rot, spec["half_extents"])
    raise ValueError(f"unknown obstacle kind {kind!r}")


def collides(center, r, spec: dict) -> bool | np.ndarray:
    """True iff a sphere (centre, radius r >= 0) penetrates the obstacle: signed distance < r."""
    return distance(center, spec) < r


def margin(center, r, spec: dict) -> float | np.ndarray:
    """How far the case is from the contact boundary: |distance - r| (float32 ambiguity below ~1e-5)."""
    return np.abs(distance(center, spec) - r)


# ----------------------------------------------------------------------------- environments


def make_environment(specs, env=None):
    """A simdplan.Environment holding ``specs``, in order; returns (env, ids) with ids[i] for specs[i].
    With ``env``, the specs are added to that environment instead of a new one."""
    import simdplan

    env = simdplan.Environment() if env is None else env
    ids = []
    for s in specs:
        kind = s["kind"]
        if kind == "sphere":
            ids.append(env.add_sphere(s["center"], s["radius"]))
            continue
        if kind == "plane":
            ids.append(env.add_plane(s["normal"], s.get("offset", 0.0)))
            continue
        if kind == "pointcloud":
            ids.append(env.add_pointcloud(s["points"], s.get("point_radius", 0.0), s.get("r_min"), s.get("r_max")))
            continue
        if kind in ("mesh", "convex") and "position" not in s and "pose" not in s:
            if kind == "mesh":
                ids.append(env.add_mesh((s["vertices"], s["faces"]), scale=s.get("scale", 1.0)))
            else:
                ids.append(env.add_convex(s["points"], scale=s.get("scale", 1.0)))
            continue
        if "pose" in s:
            pose_kw = {"position": np.asarray(s["pose"], dtype=np.float64)}
        else:
            pose_kw = {"position": s["position"]}
            if s.get("quat") is not None:
                pose_kw["quat"] = s["quat"]
            elif s.get("euler") is not None:
                pose_kw["euler"] = s["euler"]
        if kind == "capsule":
            ids.append(env.add_capsule(radius=s["radius"], length=s["length"], **pose_kw))
        elif kind == "cylinder":
            ids.append(env.add_cylinder(radius=s["radius"], length=s["length"], **pose_kw))
        elif kind == "box":
            ids.append(env.add_box(half_extents=s["half_extents"], **pose_kw))
        elif kind == "mesh":
            ids.append(env.add_mesh((s["vertices"], s["faces"]), scale=s.get("scale", 1.0), **pose_kw))
        elif kind == "convex":
            ids.append(env.add_convex(s["points"], scale=s.get("scale", 1.0), **pose_kw))
        else:
            raise ValueError(f"unknown obstacle kind {kind!r}")
    return env, ids


# ----------------------------------------------------------------------------- robots


@functools.lru_cache(maxsize=None)
def load_urdf(path: str):
    """yourdfpy's own model of a URDF (no meshes), cached per path."""
    import yourdfpy

    # yourdfpy logs a warning per update_cfg for mimic joints of fixed type (panda fingers)
    logging.getLogger("yourdfpy").setLevel(logging.ERROR)
    return yourdfpy.URDF.load(path, load_meshes=False, build_collision_scene_graph=False,
                              load_collision_meshes=False)


def urdf_of(robot):
    return load_urdf(str(robot.description.urdf_path))


def urdf_limits(robot) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) of robot.joint_names read by yourdfpy; +-inf for continuous joints."""
    u = urdf_of(robot)
    lo, hi = [], []
    for name in robot.joint_names:
        j = u.joint_map[name]
        if j.type == "continuous" or j.limit is None:
            lo.append(-np.inf)
            hi.append(np.inf)
        else:
            lo.append(float(j.limit.lower))
            hi.append(float(j.limit.upper))
    return np.array(lo), np.array(hi)


def reference_link_poses(robot, q, held: dict | None = None, base=None) -> dict[str, np.ndarray]:
    """World pose (4, 4) of every URDF link at q, by yourdfpy. ``held``: values of joints that are
    not in robot.joint_names (default 0, as simdplan holds them); ``base``: the robot's base pose."""
    u = urdf_of(robot)
    cfg = {name: 0.0 for name in u.actuated_joint_names}
    cfg.update({name: float(v) for name, v in (held or {}).items()})
    cfg.update({name: float(v) for name, v in zip(robot.joint_names, np.asarray(q, dtype=np.float64))})
    u.update_cfg(cfg)
    B = np.eye(4) if base is None else np.asarray(base, dtype=np.float64)
    return {name: B @ np.asarray(u.get_transform(name), dtype=np.float64) for name in u.link_map}


def sphere_order(robot) -> list[tuple[str, int, int]]:
    """(link, begin, end) runs of ``robot.sphere_links``; asserts each link is one contiguous run
    holding exactly that link's URDF spheres (so sphere k of the run is URDF sphere k)."""
    links = robot.sphere_links
    runs: list[tuple[str, int, int]] = []
    for k, name in enumerate(links):
        if runs and runs[-1][0] == name:
            runs[-1] = (name, runs[-1][1], k + 1)
        else:
            runs.append((name, k, k + 1))
    names = [r[0] for r in runs]
    assert len(set(names)) == len(names), f"a link's spheres are split into several runs: {names}"
    for name, b, e in runs:
        n_urdf = len(robot.description.links[name].spheres)
        assert e - b == n_urdf, f"link {name}: {e - b} fk rows but {n_urdf} URDF spheres"
    with_spheres = {n for n, l in robot.description.links.items() if len(l.spheres)}
    assert set(names) == with_spheres, "fk rows must cover exactly the links that have spheres"
    return runs


def reference_fk(robot, q, held: dict | None = None, base=None) -> np.ndarray:
    """(n_spheres, 4) float64 world [x, y, z, r] in the order of robot.sphere_links
    (``held``, ``base`` as for reference_link_poses)."""
    poses = reference_link_poses(robot, q, held, base)
    out = np.zeros((len(robot.sphere_links), 4))
    for name, b, e in sphere_order(robot):
        local = np.asarray(robot.description.links[name].spheres, dtype=np.float64)
        T = poses[name]
        out[b:e, :3] = local[:, :3] @ T[:3, :3].T + T[:3, 3]
        out[b:e, 3] = local[:, 3]
    return out


@dataclasses.dataclass
class Report:
    """Reference verdict on one configuration."""

    within_limits: bool
    limit_violations: list  # joint names out of limits
    env_hits: set  # {(sphere index, obstacle index in specs)}
    self_hits: set  # {(sphere i, sphere j)} with i < j
    margin: float  # smallest |distance - radius| over every sphere/obstacle and checked sphere pair

    @property
    def valid(self) -> bool:
        return self.within_limits and not self.env_hits and not self.self_hits


def check(robot, q, specs, padding: float = 0.0) -> Report:
    """Reference Clear(q): limits, environment collisions, self collisions over
    ``robot.self_collision_pairs``, all in float64 with reference FK. Reports every contact
    (not only the first) and the margin to the nearest contact boundary."""
    q = np.asarray(q, dtype=np.float64)
    lo, hi = urdf_limits(robot)
    bad = [n for n, v, a, b in zip(robot.joint_names, q, lo, hi) if not a <= v <= b]
    spheres = reference_fk(robot, q)
    c, r = spheres[:, :3], spheres[:, 3] + padding
    env_hits: set = set()
    m = np.inf
    for oi, spec in enumerate(specs):
        d = distance(c, spec) - r
        m = min(m, float(np.min(np.abs(d)))) if len(d) else m
        env_hits.update((int(s), oi) for s in np.flatnonzero(d < 0))
    runs = {name: (b, e) for name, b, e in sphere_order(robot)}
    self_hits: set = set()
    for la, lb in robot.self_collision_pairs:
        (ba, ea), (bb, eb) = runs[la], runs[lb]
        ia, ib = np.arange(ba, ea), np.arange(bb, eb)
        d = np.linalg.norm(c[ia][:, None, :] - c[ib][None, :, :], axis=-1) - (r[ia][:, None] + r[ib][None, :])
        m = min(m, float(np.min(np.abs(d))))
        for x, y in zip(*np.nonzero(d < 0)):
            i, j = int(ia[x]), int(ib[y])
            self_hits.add((min(i, j), max(i, j)))
    return Report(not bad, bad, env_hits, self_hits, m)


def is_valid(robot, q, specs, padding: float = 0.0) -> bool:
    """Reference Clear(q) (see ``check``)."""
    return check(robot, q, specs, padding).valid
