"""Re-checking a path against the robot's real collision geometry (not its planning spheres).

simdplan plans with spheres, and a sphere model and the robot's collision meshes can disagree: the
sphere models shipped with the built-in robots approximate their meshes rather than cover them
(parts of the panda's meshes stick out of its spheres by centimetres), a sphere model may be built
with a tolerance, or a mesh URDF edited after spherizing. A discretely checked path can also graze an
obstacle between its samples. ``verify_path`` takes a planned path and checks it again,
independently of the C++ core, with the robot's collision geometry from its mesh URDF and the coal
collision library (FCL's successor; ``pip install simdplan[verify]``):

- Each edge of the path is sampled in float64 at a joint-space step of ``resolution`` (Euclidean
  norm of the joint difference, radians / metres; default ``DEFAULT_STEP`` = 0.01, about 3x finer
  than the planner's 32 samples per unit). Both ends of every edge are included.
- Links are placed by a float64 forward kinematics of the mesh URDF (its own joint origins and
  axes; the robot's active joints, held values, mimic joints and base pose), cross-checked once
  against ``robot.link_poses``.
- Every collision mesh of a link is replaced by its CONVEX HULL (after the URDF's scale and origin).
  A hull over-approximates a concave link, so a collision reported here can be a false alarm (the
  hull touches, the mesh does not); relative to the hull model it is never a miss. Each reported
  collision says whether the mesh's own triangles confirm it (``mesh_confirmed``), and
  ``geometry="mesh"`` counts only confirmed ones (see ``verify_path``). URDF primitive
  collision shapes (box, cylinder, sphere, and the non-standard capsule) are used as they are.
  Links the mesh URDF does not have but the robot does (attached objects) are checked with the
  robot's own spheres.
- Obstacles of every kind of ``simdplan.Environment`` are checked, from their parameters: sphere,
  capsule (segment of ``length`` swept by ``radius``: coal.Capsule(radius, length)), cylinder,
  box (coal.Box takes full side lengths: 2 * half_extents), plane (the half-space
  {p : normal . p <= offset}: coal.Halfspace(normal, offset)), mesh (a surface, as everywhere in
  simdplan: a link hull wholly inside a closed mesh touches no triangle and is NOT a collision; use
  ``convex`` obstacles for solids), convex (a solid hull) and point clouds (a point of
  ``point_radius`` r collides with a link iff its signed distance to the link's hull is below
  r + padding; bare points (r = 0) therefore collide only when strictly inside a hull).
- Self-collision is checked between exactly the link pairs the robot's sphere model checks
  (``robot.self_collision_pairs``: SRDF ``disable_collisions`` pairs and adjacent links skipped).

Semantics are simdplan's: a collision is a strict penetration, touching is free. Padding (metres)
inflates the robot: a link collides with an obstacle when their signed distance is below
``padding``, and two links when it is below ``2 * padding`` (each link is inflated, as each sphere
is in the sphere model). Penetrations shallower than ``CONTACT_TOLERANCE`` (1 um, the accuracy of
coal's GJK) count as touching. Joint limits are not checked here (``robot.is_valid`` does that).

Each reported collision also carries the sphere model's own verdict at that configuration
(``spheres_collide``): True means the planner's discrete edge check stepped over a collision its
own model sees, False that the two models disagree there.

Cost: the link hulls are built once per mesh URDF and cached (about 0.1 s for the panda, 0.35 s
for the ur5 on first use); obstacles once per call; per sample, a NumPy broad phase (bounding
spheres of the link geometry against obstacle bounding boxes) leaves few pairs for coal: about
0.1 ms per sample for the panda in the shipped example scenes.

This module holds the check and its results; simdplan.planner.verify_geometry loads what it checks
with (link hulls and primitives, the mesh URDF's kinematics, the obstacles as coal shapes).
"""

from __future__ import annotations

import dataclasses
import math
import os
import time

import numpy as np

from simdplan.collision.environment import Environment
from simdplan.planner.verify_geometry import (  # noqa: F401  (also reached through this module)
    BUILTIN_MESH_URDFS, import_coal, cross_check, Geom, has_collision_geometry, Kinematics, mesh_model, coal_obstacles,
    point_distance, coal_transform, mesh_urdf_for)

DEFAULT_STEP = 0.01  # rad (or m): joint-space step between samples of an edge
CONTACT_TOLERANCE = 1e-6  # m: penetrations shallower than this count as touching
MAX_COLLISIONS = 100  # first_only=False: collisions kept at most (the count is still exact)
_CHUNK = 256  # samples evaluated per NumPy batch


# ----------------------------------------------------------------------------- results
@dataclasses.dataclass(frozen=True)
class PathCollision:
    """One collision found on a path.

    sample: index of the configuration among the path's samples (0 = the start). segment: the edge
    (path[segment] -> path[segment + 1]; 0 for a one-waypoint path). t: position along that edge in
    [0, 1]. q: the configuration (dof,) float64. link: the robot link. Against an obstacle:
    obstacle_id, obstacle_name, obstacle_kind; against another link (self-collision): other_link.
    depth: penetration in metres of the (padding-inflated) link geometry, or None if coal gave none.
    mesh_confirmed: whether the link's own mesh triangles (not just their hull) also collide: True
    or False for links modelled by a mesh hull, None where it does not apply (URDF primitives,
    attached objects, point clouds). False marks a likely false alarm of the hull model.
    spheres_collide: the robot's own sphere model's verdict at q (``not robot.is_valid(q, env,
    padding)``, a diagnostic from the C++ core: False means the two models disagree there, True
    that the planner's discrete edge check stepped over it), None if it could not be evaluated.
    """

    sample: int
    segment: int
    t: float
    q: np.ndarray
    link: str
    obstacle_id: int | None = None
    obstacle_name: str | None = None
    obstacle_kind: str | None = None
    other_link: str | None = None
    depth: float | None = None
    mesh_confirmed: bool | None = None
    spheres_collide: bool | None = None

    @property
    def is_self(self) -> bool:
        return self.other_link is not None

    def __str__(self) -> str:
        what = (f"link {self.other_link}" if self.is_self else
                f"{self.obstacle_kind} {self.obstacle_name!r} (id {self.obstacle_id})")
        depth = "" if self.depth is None else f" by {self.depth * 1000:.3g} mm"
        mesh = {True: "the mesh confirms", False: "hull only: the mesh itself does not touch"}
        spheres = {True: "the sphere model collides here too", False: "the sphere model is clear here"}
        notes = [mesh.get(self.mesh_confirmed), spheres.get(self.spheres_collide)]
        notes = "; ".join(n for n in notes if n)
        return (f"link {self.link} hits {what}{depth} on segment {self.segment} at t={self.t:.3f}"
                + (f" ({notes})" if notes else ""))


@dataclasses.dataclass(frozen=True)
class PathVerification:
    """Outcome of ``verify_path``.

    valid: no sample of the path collides. first_collision: the deepest collision at the first
    colliding sample (None if valid). collisions: with ``first_only`` every collision at that
    sample, else every collision on the path (at most MAX_COLLISIONS kept; ``n_collisions`` counts
    them all). checked_samples: configurations evaluated (fewer than total_samples when the check
    stopped at the first collision). resolution: the joint-space step used. geometry: "hull" or
    "mesh" (see verify_path). mesh_urdf: the URDF whose collision geometry was used. seconds: wall
    time of the check.
    """

    valid: bool
    first_collision: PathCollision | None
    checked_samples: int
    total_samples: int
    resolution: float
    padding: float
    self_collision: bool
    mesh_urdf: str
    geometry: str = "hull"
    collisions: tuple = ()
    n_collisions: int = 0
    seconds: float = 0.0

    def __str__(self) -> str:
        where = f"{self.checked_samples} of {self.total_samples} samples at {self.resolution:g} rad steps"
        if self.valid:
            return f"valid: no mesh collision ({where}, {self.seconds * 1000:.0f} ms)"
        more = f", {self.n_collisions} collisions in all" if self.n_collisions > 1 else ""
        return f"COLLISION: {self.first_collision} (sample {self.first_collision.sample}; {where}{more})"


# ----------------------------------------------------------------------------- the check
def _check_inputs(robot, path, resolution, padding):
    from simdplan.planner.result import PlanResult  # noqa: PLC0415

    if isinstance(path, PlanResult):
        path = path.path
    arr = np.asarray(path)
    if arr.dtype == object or arr.dtype.kind not in "fiu":
        raise TypeError(f"path must be real numbers (float or int), got dtype {arr.dtype}")
    if arr.ndim != 2:
        hint = " (a single configuration q is path=[q])" if arr.ndim == 1 else ""
        raise ValueError(f"path must have shape (k, {robot.dof}) with k >= 1, got {arr.shape}{hint}")
    if arr.shape[0] < 1:
        raise ValueError(f"path is empty (shape {arr.shape}); nothing to verify")
    if arr.shape[1] != robot.dof:
        raise ValueError(f"path has {arr.shape[1]} values per waypoint but robot {robot.name!r} has {robot.dof} "
                         f"joints ({', '.join(robot.joint_names)})")
    arr = arr.astype(np.float64)
    bad = ~np.isfinite(arr).all(axis=1)
    if bad.any():
        raise ValueError(f"path has non-finite values (NaN or inf) in {int(bad.sum())} waypoint(s), first at row "
                         f"{int(np.argmax(bad))}")
    step = DEFAULT_STEP if resolution is None else resolution
    try:
        step = float(step)
    except (TypeError, ValueError):
        raise TypeError(f"resolution must be a number (joint-space step, rad), got {resolution!r}") from None
    if not math.isfinite(step) or step <= 0:
        raise ValueError(f"resolution must be a finite joint-space step > 0 (rad), got {resolution!r}")
    try:
        pad = float(padding)
    except (TypeError, ValueError):
        raise TypeError(f"padding must be a number (metres), got {padding!r}") from None
    if not math.isfinite(pad) or pad < 0:
        raise ValueError(f"padding must be finite and >= 0 (metres), got {padding!r}")
    return arr, step, pad


def _samples(path: np.ndarray, step: float):
    """(segment (N,), t (N,)) of every sample: the start, then each edge's samples after its start."""
    if len(path) == 1:
        return np.zeros(1, dtype=np.int64), np.zeros(1)
    lengths = np.linalg.norm(np.diff(path, axis=0), axis=1)
    n = np.maximum(1, np.ceil(lengths / step - 1e-9).astype(np.int64))  # (no extra sample from rounding)
    seg = np.concatenate([[0], np.repeat(np.arange(len(n)), n)])
    t = np.concatenate([[0.0]] + [np.arange(1, k + 1) / k for k in n])
    return seg, t


def verify_path(robot, path, env=None, resolution: float | None = None, *, padding: float = 0.0,
                self_collision: bool = True, mesh_urdf=None, first_only: bool = True,
                geometry: str = "hull") -> PathVerification:
    """Check ``path`` (k, dof) against the robot's real collision geometry (see the module docstring).

    robot: a simdplan Robot. path: (k, dof) waypoints in ``robot.joint_names`` order (or a
    PlanResult). env: a simdplan.Environment (None: no obstacles). resolution: joint-space step
    between samples of an edge (Euclidean norm, rad; default DEFAULT_STEP = 0.01). padding: metres
    by which the robot is inflated (>= 0). self_collision: also check the robot's self-collision
    pairs. mesh_urdf: the URDF with the real collision geometry (default: found for the built-in
    robots, or the robot's own URDF if its collision geometry is not spheres). first_only: stop at
    the first colliding sample (default) or check every sample and collect every collision.
    geometry: "hull" (default: a link mesh is its convex hull; never misses a collision of the hull
    model, may raise false alarms on concave links; each collision says whether the mesh triangles
    confirm it) or "mesh" (a hull collision counts only if the mesh's own triangles collide too,
    coal BVH: no hull false alarms, but an obstacle wholly inside a link's mesh without touching its
    surface is missed; point clouds are still checked against the hulls).

    Returns a PathVerification. Raises TypeError / ValueError for a malformed path (shape, dtype,
    NaN, dof mismatch), resolution <= 0 or negative padding; ValueError if no mesh URDF is known for
    the robot or it does not match the robot's kinematics; ImportError if coal is missing.
    """
    t_start = time.perf_counter()
    path, step, pad = _check_inputs(robot, path, resolution, padding)
    if geometry not in ("hull", "mesh"):
        raise ValueError(f'geometry must be "hull" or "mesh", got {geometry!r}')
    mesh_mode = geometry == "mesh"
    coal = import_coal()
    if mesh_urdf is None:
        mesh_urdf = mesh_urdf_for(robot)
        if mesh_urdf is None:
            raise ValueError(
                f"robot {robot.name!r} has no known collision meshes (its URDF "
                f"{robot.description.urdf_path or '?'} has only spheres): pass mesh_urdf='path/to/robot.urdf' "
                f"(the URDF with the real collision geometry and the same joints), or use a built-in robot "
                f"({', '.join(sorted(BUILTIN_MESH_URDFS))})")
    mesh_urdf = os.path.abspath(os.fspath(mesh_urdf))
    if not os.path.isfile(mesh_urdf):
        raise FileNotFoundError(f"mesh URDF not found: {mesh_urdf}")
    if env is not None and not isinstance(env, Environment):
        raise TypeError(f"env must be a simdplan.Environment or None, got {type(env).__name__}")
    desc, link_geoms = mesh_model(mesh_urdf)
    kin = Kinematics(desc, robot)
    cross_check(kin, robot, mesh_urdf)

    geoms: list[Geom] = []
    for link in [desc.root] + [s[1] for s in kin.steps]:
        if link in link_geoms:
            geoms.extend(link_geoms[link])
        elif link in kin.extra_links:  # attached object: the robot's own spheres
            for c in robot.description.links[link].spheres:
                o = np.eye(4)
                o[:3, 3] = c[:3]
                geoms.append(Geom(link, "sphere", o, {"radius": float(c[3])}, np.zeros(3), float(c[3]),
                                   coal.Sphere(float(c[3]))))
    if not geoms:
        raise ValueError(f"{mesh_urdf}: no link has collision geometry")
    g_link = [g.link for g in geoms]
    g_origin = np.stack([g.origin for g in geoms])
    g_centre = np.stack([g.origin[:3, :3] @ g.centre + g.origin[:3, 3] for g in geoms])  # link frame
    g_radius = np.array([g.radius for g in geoms])

    statics, clouds = coal_obstacles(coal, env)
    bounded = [i for i, s in enumerate(statics) if s.lo is not None]
    planes = [i for i, s in enumerate(statics) if s.lo is None]
    lo = np.array([statics[i].lo for i in bounded]).reshape(-1, 3)
    hi = np.array([statics[i].hi for i in bounded]).reshape(-1, 3)
    pn = np.array([statics[i].obstacle.params["normal"] for i in planes], dtype=float).reshape(-1, 3)
    po = np.array([statics[i].obstacle.params["offset"] for i in planes], dtype=float)
    clo = np.array([c[1].min(axis=0) for c in clouds]).reshape(-1, 3)
    chi = np.array([c[1].max(axis=0) for c in clouds]).reshape(-1, 3)
    cpr = np.array([c[3] for c in clouds])

    pairs = []
    if self_collision:
        by_link: dict[str, list[int]] = {}
        for i, name in enumerate(g_link):
            by_link.setdefault(name, []).append(i)
        for a, b in robot.self_collision_pairs:
            pairs += [(i, j) for i in by_link.get(a, []) for j in by_link.get(b, [])]
    pairs = np.array(pairs, dtype=np.int64).reshape(-1, 2)

    req_env = _request(coal, pad)
    req_self = _request(coal, 2 * pad)
    slack = 1e-6 + CONTACT_TOLERANCE

    seg, tt = _samples(path, step)
    total = len(seg)
    found: list[PathCollision] = []
    n_found, checked = 0, total
    links_needed = sorted(set(g_link))
    g_index = [links_needed.index(n) for n in g_link]
    for start in range(0, total, _CHUNK):
        sl = slice(start, min(total, start + _CHUNK))
        s_seg, s_t = seg[sl], tt[sl]
        nxt = np.minimum(s_seg + 1, len(path) - 1)
        Q = path[s_seg] + s_t[:, None] * (path[nxt] - path[s_seg])
        poses = kin.poses(Q)
        link_T = np.stack([poses[name] for name in links_needed], axis=1)  # (S, L, 4, 4)
        LG = link_T[:, g_index]  # (S, G, 4, 4) pose of each geometry's link
        W = LG @ g_origin  # (S, G, 4, 4) pose of each geometry
        C = np.einsum("sgij,gj->sgi", LG[..., :3, :3], g_centre) + LG[..., :3, 3]  # bounding-sphere centres
        reach = g_radius + pad + slack
        # broad phase: (sample, geometry, obstacle) candidates
        gap = np.maximum(np.maximum(lo[None, None] - C[:, :, None], C[:, :, None] - hi[None, None]), 0.0)
        cand_b = np.linalg.norm(gap, axis=-1) < reach[None, :, None]  # (S, G, B)
        cand_p = (C @ pn.T - po) < reach[None, :, None]  # (S, G, P)
        gapc = np.maximum(np.maximum(clo[None, None] - C[:, :, None], C[:, :, None] - chi[None, None]), 0.0)
        cand_c = np.linalg.norm(gapc, axis=-1) < (reach[None, :, None] + cpr)  # (S, G, clouds)
        if len(pairs):
            dc = np.linalg.norm(C[:, pairs[:, 0]] - C[:, pairs[:, 1]], axis=-1)
            cand_s = dc < (g_radius[pairs[:, 0]] + g_radius[pairs[:, 1]] + 2 * pad + 2 * slack)
        else:
            cand_s = np.zeros((len(Q), 0), dtype=bool)
        busy = cand_b.any(axis=(1, 2)) | cand_p.any(axis=(1, 2)) | cand_c.any(axis=(1, 2)) | cand_s.any(axis=1)
        for s in np.flatnonzero(busy):
            tf_cache: dict[int, object] = {}

            def tf(g):
                if g not in tf_cache:
                    tf_cache[g] = coal_transform(coal, W[s, g])
                return tf_cache[g]

            hits = []  # (geometry, obstacle or None, other geometry or None, depth, mesh_confirmed)
            for cand, index in ((cand_b[s], bounded), (cand_p[s], planes)):
                for g, k in zip(*np.nonzero(cand)):
                    st = statics[index[k]]
                    d = _collide(coal, geoms[g].coal, tf(g), st.coal, st.transform, req_env)
                    if d is None:
                        continue
                    confirmed, dm = None, None
                    if geoms[g].kind == "convex" and (mesh_mode or len(found) + len(hits) < MAX_COLLISIONS):
                        dm = _collide(coal, geoms[g].bvh(coal), tf(g), st.coal, st.transform, req_env)
                        confirmed = dm is not None
                    if mesh_mode and confirmed is False:
                        continue
                    hits.append((g, st.obstacle, None, pad - _deciding(d, dm, mesh_mode), confirmed))
            for g, k in zip(*np.nonzero(cand_c[s])):
                ob, pts, tree, pr = clouds[k]
                need = pr + pad
                idx = tree.query_ball_point(C[s, g], geoms[g].radius + need + slack)
                if not idx:
                    continue
                local = (pts[idx] - W[s, g, :3, 3]) @ W[s, g, :3, :3]
                m = float(point_distance(geoms[g], local, need).min())
                if m < need - CONTACT_TOLERANCE:
                    hits.append((g, ob, None, need - m, None))
            for p in np.flatnonzero(cand_s[s]):
                a, b = pairs[p]
                d = _collide(coal, geoms[a].coal, tf(a), geoms[b].coal, tf(b), req_self)
                if d is None:
                    continue
                confirmed, dm = None, None
                ga, gb = geoms[a], geoms[b]
                if "convex" in (ga.kind, gb.kind) and (mesh_mode or len(found) + len(hits) < MAX_COLLISIONS):
                    dm = _collide(coal, ga.bvh(coal) if ga.kind == "convex" else ga.coal, tf(a),
                                  gb.bvh(coal) if gb.kind == "convex" else gb.coal, tf(b), req_self)
                    confirmed = dm is not None
                if mesh_mode and confirmed is False:
                    continue
                hits.append((a, None, b, 2 * pad - _deciding(d, dm, mesh_mode), confirmed))
            if not hits:
                continue
            i = start + int(s)
            for g, ob, other, depth, confirmed in hits:
                n_found += 1
                if len(found) < MAX_COLLISIONS:
                    found.append(PathCollision(
                        sample=i, segment=int(seg[i]), t=float(tt[i]), q=Q[s].copy(), link=g_link[g],
                        obstacle_id=None if ob is None else ob.id, obstacle_name=None if ob is None else ob.name,
                        obstacle_kind=None if ob is None else ob.kind,
                        other_link=None if other is None else g_link[other],
                        depth=float(depth) if math.isfinite(depth) else None, mesh_confirmed=confirmed))
            if first_only:
                checked = i + 1
                break
        if first_only and found:
            break
    if found:
        found = _with_sphere_verdicts(robot, env, pad, found)
    first = None
    if found:
        at = [c for c in found if c.sample == found[0].sample]
        first = max(at, key=lambda c: -1.0 if c.depth is None else c.depth)
    return PathVerification(valid=not found, first_collision=first, checked_samples=checked, total_samples=total,
                            resolution=step, padding=pad, self_collision=bool(self_collision), mesh_urdf=mesh_urdf,
                            geometry=geometry, collisions=tuple(found), n_collisions=n_found,
                            seconds=time.perf_counter() - t_start)


def _with_sphere_verdicts(robot, env, pad: float, found: list) -> list:
    verdicts: dict[int, bool | None] = {}
    out = []
    for c in found:
        if c.sample not in verdicts:
            try:
                verdicts[c.sample] = not bool(robot.is_valid(c.q, env, padding=pad))
            except Exception:  # noqa: BLE001 - a diagnostic only (e.g. an obstacle kind the core cannot check yet)
                verdicts[c.sample] = None
        out.append(dataclasses.replace(c, spheres_collide=verdicts[c.sample]))
    return out


def _deciding(d_hull: float, d_mesh: float | None, mesh_mode: bool) -> float:
    """Signed distance to report: the hull's, or in mesh mode the mesh's when it is the shallower
    (the mesh lies inside its hull; coal's triangle-triangle depths can be far off, never deeper)."""
    return max(d_hull, d_mesh) if mesh_mode and d_mesh is not None else d_hull


def _request(coal, margin: float):
    """A collision request reporting pairs closer than ``margin`` (>= 0: coal refuses negative margins
    for BVH models) with their contacts; the caller keeps those below margin - CONTACT_TOLERANCE."""
    req = coal.CollisionRequest()
    req.security_margin = margin
    req.enable_contact = True
    req.num_max_contacts = 100_000  # every triangle pair of a BVH, so the deepest one is seen
    return req


def _collide(coal, g1, t1, g2, t2, req) -> float | None:
    """The signed distance (m) of a pair closer than the request's margin minus CONTACT_TOLERANCE
    (the deepest of coal's contacts; negative: penetration), or None if it is not that close."""
    res = coal.CollisionResult()
    if not coal.collide(g1, t1, g2, t2, req, res):
        return None
    contacts = res.getContacts()
    if not contacts:  # pragma: no cover - enable_contact makes coal report at least one
        return None
    d = float(min(c.penetration_depth for c in contacts))
    return d if d < req.security_margin - CONTACT_TOLERANCE else None
