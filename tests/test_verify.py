"""simdplan.verify_path: a path re-checked against the robot's collision meshes (convex hulls, coal).

Expected verdicts come from computations independent of both the module and the C++ core: link
poses from yourdfpy, link hulls from trimesh, obstacles placed at a known signed distance from a
hull's extreme vertex (so the exact distance is known by hand), and a linear program (scipy HiGHS)
deciding whether two convex polytopes' interiors overlap.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

coal = pytest.importorskip("coal")
trimesh = pytest.importorskip("trimesh")
yourdfpy = pytest.importorskip("yourdfpy")
from scipy.optimize import linprog  # noqa: E402

import simdplan  # noqa: E402
from simdplan import cli, robots  # noqa: E402
from simdplan.collision import Environment  # noqa: E402
from simdplan.planner import verify  # noqa: E402
from simdplan.planner.verify import PathVerification, verify_path  # noqa: E402

READY = np.array([0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785])
UP = np.array([0.0, 0.0, 0.0, -0.1, 0.0, 3.0, 0.785])  # arm up, fingers at the top, 4 cm above the rest
FINGERS = ("panda_leftfinger", "panda_rightfinger")
PANDA_MESH_URDF = os.path.join(robots.DATA_DIR, "panda", "panda.urdf")


# ----------------------------------------------------------------------------- independent references
@pytest.fixture(scope="module")
def panda():
    return robots.load("panda")


class Reference:
    """The panda's collision meshes placed by yourdfpy's forward kinematics, hulled by trimesh."""

    def __init__(self, urdf_path: str):
        import logging
        import warnings

        logging.getLogger("yourdfpy").setLevel(logging.ERROR)  # the fixed fingers' mimic tag, every update
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.urdf = yourdfpy.URDF.load(urdf_path, build_scene_graph=True, load_meshes=False,
                                           load_collision_meshes=False)
        folder = os.path.dirname(urdf_path)
        self.meshes = {}  # link -> (vertices in the link frame,)
        for name, link in self.urdf.link_map.items():
            for col in link.collisions:
                mesh = col.geometry.mesh
                if mesh is None:
                    continue
                path = os.path.join(folder, mesh.filename.replace("package://", ""))
                m = trimesh.load(path, force="mesh")
                origin = np.eye(4) if col.origin is None else np.asarray(col.origin)
                self.meshes[name] = m.copy().apply_transform(origin)
        self.hulls = {name: m.convex_hull for name, m in self.meshes.items()}  # link frames

    def pose(self, q, link: str) -> np.ndarray:
        self.urdf.update_cfg(dict(zip(self.urdf.actuated_joint_names, np.asarray(q, dtype=float))))
        return self.urdf.get_transform(link)

    def mesh(self, q, link: str):
        return self.meshes[link].copy().apply_transform(self.pose(q, link))

    def hull(self, q, link: str):
        return self.hulls[link].copy().apply_transform(self.pose(q, link))


@pytest.fixture(scope="module")
def ref():
    return Reference(PANDA_MESH_URDF)


def _halfspaces(hull):
    """(A, b) with unit rows, {x : A x <= b} = the hull."""
    n = hull.face_normals
    return n, np.einsum("ij,ij->i", n, hull.triangles[:, 0])


def overlap_inset(hull_a, A2, b2) -> float:
    """max s such that some x lies at least s inside every face of both polytopes: > 0 iff the
    interiors overlap (penetration), < 0 iff they are disjoint."""
    A1, b1 = _halfspaces(hull_a)
    A = np.vstack([A1, A2])
    b = np.concatenate([b1, b2])
    res = linprog(np.r_[0.0, 0.0, 0.0, -1.0], A_ub=np.c_[A, np.ones(len(A))], b_ub=b,
                  bounds=[(None, None)] * 3 + [(None, 1.0)], method="highs")
    assert res.status == 0, res.message
    return -res.fun


def box_halfspaces(position, rotation, half_extents):
    R = np.asarray(rotation, dtype=float)
    p = np.asarray(position, dtype=float)
    he = np.asarray(half_extents, dtype=float)
    return np.vstack([R.T, -R.T]), np.r_[R.T @ p + he, -(R.T @ p) + he]


def highest_point(ref, q):
    """(link, vertex) of the highest collision-hull vertex of the whole robot at q."""
    best = None
    for link in ref.meshes:
        v = ref.hull(q, link).vertices
        i = int(np.argmax(v[:, 2]))
        if best is None or v[i, 2] > best[1][2]:
            best = (link, v[i].copy())
    return best


# ----------------------------------------------------------------------------- basics
def test_exported():
    assert simdplan.verify_path is verify_path
    assert "verify_path" in simdplan.__all__


def test_check_and_geometry_loading_are_separate_modules():
    """verify.py checks, verify_geometry.py loads what it checks with; the names callers reach through
    simdplan.planner.verify stay there."""
    from simdplan.planner import verify_geometry

    for name in ("BUILTIN_MESH_URDFS", "mesh_urdf_for", "import_coal", "has_collision_geometry", "mesh_model",
                 "point_distance"):
        assert getattr(verify, name) is getattr(verify_geometry, name), name
    for name in ("verify_path", "PathVerification", "PathCollision", "DEFAULT_STEP", "CONTACT_TOLERANCE",
                 "MAX_COLLISIONS"):
        assert hasattr(verify, name) and not hasattr(verify_geometry, name), name


def test_clear_path_is_valid_and_counts_samples(panda):
    env = Environment()
    env.add_box([2.0, 2.0, 0.5], half_extents=[0.1, 0.1, 0.1], name="far")
    q1 = READY.copy()
    q1[0] = -0.5
    q2 = q1.copy()
    q2[0] = 0.5
    v = verify_path(panda, [READY, q1, q2], env, resolution=0.01)
    assert isinstance(v, PathVerification)
    assert v.valid and v.first_collision is None and v.collisions == ()
    assert v.total_samples == v.checked_samples == 1 + 50 + 100
    assert v.resolution == 0.01 and v.geometry == "hull"
    assert os.path.samefile(v.mesh_urdf, PANDA_MESH_URDF)
    assert str(v).startswith("valid")
    # the default step is DEFAULT_STEP; a PlanResult is accepted as the path
    res = simdplan.planner.PlanResult(True, np.array([READY, q1]), {}, "rrtc", panda.joint_names)
    v2 = verify_path(panda, res, env)
    assert v2.valid and v2.resolution == verify.DEFAULT_STEP and v2.total_samples == 1 + 50


def test_box_in_the_path_of_the_hand(panda, ref):
    """Segment 0 turns the arm away, segment 1 sweeps the hand through a 1 cm cube placed at the
    hand's hull centroid for joint1 = 1: reported on segment 1 by the hand, at the first sample
    where the (trimesh) hull of the hand overlaps the cube."""
    qa, qb = READY.copy(), READY.copy()
    qa[0], qb[0] = -0.5, 1.5
    qc = READY.copy()
    qc[0] = 1.0
    centre = ref.hull(qc, "panda_hand").vertices.mean(axis=0)
    he = np.full(3, 0.005)
    env = Environment()
    bid = env.add_box(centre, half_extents=he, name="cube")
    v = verify_path(panda, [READY, qa, qb], env)
    assert not v.valid
    c = v.first_collision
    assert (c.segment, c.link, c.obstacle_id, c.obstacle_name, c.obstacle_kind) == (1, "panda_hand", bid, "cube", "box")
    assert c.other_link is None and not c.is_self
    assert 0.0 < c.t < 0.75
    np.testing.assert_allclose(c.q, qa + c.t * (qb - qa), atol=1e-12)
    assert v.checked_samples == c.sample + 1 < v.total_samples
    assert "panda_hand" in str(v) and "cube" in str(v) and str(v).startswith("COLLISION")
    A2, b2 = box_halfspaces(centre, np.eye(3), he)
    assert overlap_inset(ref.hull(c.q, "panda_hand"), A2, b2) > 0
    prev = qa + (c.t - 1 / 200) * (qb - qa)  # the sample before: segment 1 has 200 intervals
    assert overlap_inset(ref.hull(prev, "panda_hand"), A2, b2) < 0
    # first_only=False: every colliding sample, all on segment 1, in path order
    allv = verify_path(panda, [READY, qa, qb], env, first_only=False)
    assert allv.checked_samples == allv.total_samples and allv.n_collisions >= len(allv.collisions) > 1
    assert {x.segment for x in allv.collisions} == {1}
    samples = [x.sample for x in allv.collisions]
    assert samples == sorted(samples) and samples[0] == c.sample


# ----------------------------------------------------------------------------- every obstacle kind
GAP = 0.002
KINDS = ("sphere", "capsule", "cylinder", "box", "plane", "convex", "mesh", "pointcloud")


def _add_above(env, kind, p, gap):
    """An obstacle whose nearest point to the hull vertex p (the robot's highest) lies ``gap`` above it,
    and entirely above the plane z = p.z + gap, with the robot below the plane z = p.z: the exact
    hull-to-obstacle signed distance is gap (and a penetration depth of -gap needs a move of -gap)."""
    x, y, bottom = p[0], p[1], p[2] + gap
    if kind == "sphere":
        return env.add_sphere([x, y, bottom + 0.02], 0.02)
    if kind == "capsule":  # axis along world x
        return env.add_capsule([x, y, bottom + 0.015], euler=[0.0, np.pi / 2, 0.0], radius=0.015, length=0.06)
    if kind == "cylinder":
        return env.add_cylinder([x, y, bottom + 0.015], euler=[0.0, np.pi / 2, 0.0], radius=0.015, length=0.06)
    if kind == "box":
        return env.add_box([x, y, bottom + 0.05], half_extents=[0.03, 0.03, 0.05])
    if kind == "plane":  # obstacle {z >= bottom}: normal -z points into free space
        return env.add_plane([0.0, 0.0, -1.0], -bottom)
    cube = trimesh.creation.box([0.06, 0.06, 0.1])
    cube.apply_translation([x, y, bottom + 0.05])
    if kind == "convex":
        return env.add_convex(np.asarray(cube.vertices))
    if kind == "mesh":
        return env.add_mesh((np.asarray(cube.vertices), np.asarray(cube.faces)))
    if kind == "pointcloud":  # one point of radius 1 cm
        return env.add_pointcloud([[x, y, bottom + 0.01]], point_radius=0.01)
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", KINDS)
def test_each_obstacle_kind_touching_vs_penetrating(panda, ref, kind):
    link, p = highest_point(ref, UP)
    assert link in FINGERS
    for gap in (GAP, -GAP):
        env = Environment()
        oid = _add_above(env, kind, p, gap)
        v = verify_path(panda, [UP], env, self_collision=False)
        if gap > 0:
            assert v.valid, (kind, str(v))
            continue
        assert not v.valid, kind
        c = v.first_collision
        assert c.link in FINGERS and c.obstacle_kind == kind and c.obstacle_id == oid, str(c)
        assert c.depth == pytest.approx(GAP, abs=2e-5), (kind, c.depth)
        assert c.mesh_confirmed is (None if kind == "pointcloud" else True)


@pytest.mark.parametrize("kind", ("sphere", "plane", "box"))
def test_padding_inflates_the_links(panda, ref, kind):
    _, p = highest_point(ref, UP)
    env = Environment()
    _add_above(env, kind, p, GAP)
    assert verify_path(panda, [UP], env, padding=0.001).valid
    v = verify_path(panda, [UP], env, padding=0.003)
    assert not v.valid and v.first_collision.depth == pytest.approx(0.001, abs=2e-5)
    assert v.padding == 0.003


def test_mesh_is_a_surface_convex_is_a_solid(panda):
    """A closed mesh enclosing the whole arm is touched by no link: not a collision (surface
    semantics); the same shape as a convex obstacle is a solid: every link collides."""
    cube = trimesh.creation.box([3.0, 3.0, 3.0])
    env = Environment()
    env.add_mesh((np.asarray(cube.vertices), np.asarray(cube.faces)), name="room")
    assert verify_path(panda, [READY], env).valid
    env = Environment()
    env.add_convex(np.asarray(cube.vertices), name="block")
    v = verify_path(panda, [READY], env, first_only=False)
    assert not v.valid
    assert {c.link for c in v.collisions} == set(verify.mesh_model(PANDA_MESH_URDF)[1])


def test_pointcloud_bare_points(panda, ref):
    """A bare point (radius 0) collides only strictly inside a link hull."""
    hull = ref.hull(READY, "panda_hand")
    inside = hull.vertices.mean(axis=0)
    assert hull.contains([inside])[0]
    env = Environment()
    cid = env.add_pointcloud([inside, [3.0, 0.0, 0.0]])
    v = verify_path(panda, [READY], env, first_only=False)
    assert not v.valid
    hits = [c for c in v.collisions if c.obstacle_id == cid]
    assert "panda_hand" in {c.link for c in hits}
    depth = min(np.abs(np.einsum("ij,ij->i", hull.face_normals, hull.triangles[:, 0] - inside)))
    assert max(c.depth for c in hits if c.link == "panda_hand") == pytest.approx(depth, abs=1e-6)
    # just outside the highest vertex: clear
    _, p = highest_point(ref, UP)
    env = Environment()
    env.add_pointcloud([p + [0.0, 0.0, 0.001]])
    assert verify_path(panda, [UP], env).valid


def test_point_distance_matches_coal(panda):
    """The NumPy point-to-hull signed distance against coal (sphere of radius 1e-9 vs the hull)."""
    geom = verify.mesh_model(PANDA_MESH_URDF)[1]["panda_link5"][0]
    rng = np.random.default_rng(3)
    pts = geom.centre + rng.normal(size=(300, 3)) * geom.radius * 0.7
    sd = verify.point_distance(geom, pts, np.inf)
    tiny = coal.Sphere(1e-9)
    for p, d in zip(pts, sd):
        ref_d = coal.distance(geom.coal, coal.Transform3s(), tiny, coal.Transform3s(np.eye(3), p),
                              coal.DistanceRequest(), coal.DistanceResult())
        assert d == pytest.approx(ref_d, abs=1e-6)


# ----------------------------------------------------------------------------- self-collision
def test_self_collision_of_a_folded_arm(panda, ref):
    q = np.array([0.0, 0.5, 0.0, -3.0, 0.0, 0.0, 0.785])  # the wrist folded back onto the base
    v = verify_path(panda, [q], None, first_only=False)
    assert not v.valid
    pairs = {frozenset(p) for p in panda.self_collision_pairs}
    for c in v.collisions:
        assert c.is_self and c.obstacle_id is None
        assert frozenset((c.link, c.other_link)) in pairs
    c = v.first_collision
    A2, b2 = _halfspaces(ref.hull(q, c.other_link))
    assert overlap_inset(ref.hull(q, c.link), A2, b2) > 0
    assert "link " + c.other_link in str(c)
    assert verify_path(panda, [q], None, self_collision=False).valid


def test_unchecked_pairs_are_not_reported(panda, ref):
    """Adjacent links overlap as hulls (link3/link4 at the elbow) but are not a checked pair."""
    A2, b2 = _halfspaces(ref.hull(READY, "panda_link4"))
    assert overlap_inset(ref.hull(READY, "panda_link3"), A2, b2) > 0
    assert ("panda_link3", "panda_link4") not in panda.self_collision_pairs
    assert verify_path(panda, [READY], None).valid


def test_hull_false_alarm_is_marked_and_mesh_mode_accepts_it(panda, ref):
    """A small sphere inside link5's hull, touching none of its triangles (and no other link's hull):
    the hull model reports it with mesh_confirmed False; geometry="mesh" does not."""
    hull = ref.hull(READY, "panda_link5")
    mesh = ref.mesh(READY, "panda_link5")
    rng = np.random.default_rng(0)
    lo, hi = hull.bounds
    pts = rng.uniform(lo, hi, size=(6000, 3))
    pts = pts[hull.contains(pts)]
    others = [ref.hull(READY, name) for name in ref.meshes if name != "panda_link5"]
    free = ~np.any([h.contains(pts) for h in others], axis=0)
    pts = pts[free]
    _, dist, _ = trimesh.proximity.closest_point(mesh, pts)
    assert dist.max() > 0.01
    p = pts[int(np.argmax(dist))]
    env = Environment()
    env.add_sphere(p, 0.003, name="pea")
    v = verify_path(panda, [READY], env)
    assert not v.valid and v.first_collision.link == "panda_link5"
    assert v.first_collision.mesh_confirmed is False and "hull only" in str(v.first_collision)
    assert v.first_collision.spheres_collide is not None
    vm = verify_path(panda, [READY], env, geometry="mesh")
    assert vm.valid and vm.geometry == "mesh"


def test_attached_object_and_base_pose(panda, ref):
    """Links the mesh URDF lacks (an attached object) are checked with the robot's own spheres; a
    base pose moves every link."""
    tool = panda.attach("panda_hand", spheres=[[0.0, 0.0, 0.2, 0.03]], name="tool")
    T = ref.pose(UP, "panda_hand")
    centre = T[:3, :3] @ [0.0, 0.0, 0.2] + T[:3, 3]
    for gap in (0.001, -0.001):
        env = Environment()
        env.add_sphere(centre + [0.0, 0.0, 0.04 + gap], 0.01)
        v = verify_path(tool, [UP], env)
        assert v.valid == (gap > 0)
        if gap < 0:
            c = v.first_collision
            assert c.link == "tool" and c.mesh_confirmed is None and c.depth == pytest.approx(0.001, abs=1e-6)
        assert verify_path(panda, [UP], env).valid  # the same arm without the tool
    base = np.eye(4)
    base[:3, 3] = [1.0, 2.0, 0.5]
    moved = robots.load("panda", base_pose=base)
    centre = ref.hull(UP, "panda_hand").vertices.mean(axis=0)
    env = Environment()
    env.add_box(centre + base[:3, 3], half_extents=[0.005] * 3)
    v = verify_path(moved, [UP], env)
    assert not v.valid and v.first_collision.link == "panda_hand"
    env = Environment()
    env.add_box(centre, half_extents=[0.005] * 3)
    assert verify_path(moved, [UP], env).valid


# ----------------------------------------------------------------------------- property test
def test_link_hull_vs_box_matches_linear_program(panda, ref):
    """Random configurations and oriented boxes near a random link: the set of links verify_path
    finds colliding equals the set whose trimesh hull overlaps the box by the LP (cases within
    1e-5 of touching are skipped)."""
    rng = np.random.default_rng(12345)
    links = sorted(ref.meshes)
    agree = {True: 0, False: 0}
    for _ in range(36):
        q = rng.uniform(panda.lower, panda.upper)
        target = links[rng.integers(len(links))]
        centre = ref.hull(q, target).vertices.mean(axis=0) + rng.normal(size=3) * 0.05
        he = rng.uniform(0.005, 0.04, size=3)
        rot = trimesh.transformations.random_rotation_matrix(rng.random(3))[:3, :3]
        env = Environment()
        env.add_box(centre, rot, half_extents=he)
        v = verify_path(panda, [q], env, self_collision=False, first_only=False)
        found = {c.link for c in v.collisions}
        A2, b2 = box_halfspaces(centre, rot, he)
        for link in links:
            s = overlap_inset(ref.hull(q, link), A2, b2)
            if abs(s) < 1e-5:
                continue
            assert (link in found) == (s > 0), (q.tolist(), link, s)
            agree[s > 0] += 1
    assert agree[True] >= 10 and agree[False] >= 100, agree


# ----------------------------------------------------------------------------- errors
def test_bad_inputs(panda):
    with pytest.raises(ValueError, match="single configuration"):
        verify_path(panda, READY)
    with pytest.raises(ValueError, match="7 joints"):
        verify_path(panda, np.zeros((2, 6)))
    with pytest.raises(ValueError, match="empty"):
        verify_path(panda, np.zeros((0, 7)))
    bad = np.array([READY, READY])
    bad[1, 3] = np.nan
    with pytest.raises(ValueError, match="non-finite.*row 1"):
        verify_path(panda, bad)
    with pytest.raises(TypeError, match="real numbers"):
        verify_path(panda, np.zeros((2, 7), dtype=bool))
    with pytest.raises(TypeError, match="real numbers"):
        verify_path(panda, [["a"] * 7])
    for res in (0, -0.1, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="resolution"):
            verify_path(panda, [READY], resolution=res)
    with pytest.raises(ValueError, match="padding"):
        verify_path(panda, [READY], padding=-0.01)
    with pytest.raises(ValueError, match="geometry"):
        verify_path(panda, [READY], geometry="spheres")
    with pytest.raises(TypeError, match="Environment"):
        verify_path(panda, [READY], env=[1, 2])
    with pytest.raises(FileNotFoundError):
        verify_path(panda, [READY], mesh_urdf="/nonexistent/robot.urdf")
    ur5_mesh = os.path.join(robots.DATA_DIR, "ur5", "ur5.urdf")
    with pytest.raises(ValueError, match="no joints"):
        verify_path(panda, [READY], mesh_urdf=ur5_mesh)


SPHERE_URDF = """<?xml version="1.0"?>
<robot name="stick">
  <link name="base"><collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="arm"><collision><origin xyz="0 0 0.3"/><geometry><sphere radius="0.05"/></geometry></collision></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
</robot>
"""

BOX_URDF = SPHERE_URDF.replace('<origin xyz="0 0 0.3"/><geometry><sphere radius="0.05"/></geometry>',
                               '<origin xyz="0 0 0.3"/><geometry><box size="0.04 0.04 0.2"/></geometry>')


def test_robot_without_meshes(tmp_path):
    urdf = tmp_path / "stick.urdf"
    urdf.write_text(SPHERE_URDF)
    robot = simdplan.Robot.from_urdf(urdf)
    assert verify.mesh_urdf_for(robot) is None
    with pytest.raises(ValueError, match="mesh_urdf="):
        verify_path(robot, [[0.0]])
    # the sphere URDF itself as the "real" geometry: spheres as coal primitives
    env = Environment()
    env.add_sphere([0.3, 0.0, 0.0], 0.05)
    v = verify_path(robot, [[0.0], [1.5]], env, mesh_urdf=urdf)
    assert not v.valid and v.first_collision.link == "arm" and v.first_collision.mesh_confirmed is None
    # a box primitive in the "mesh" URDF: the arm's box (0.2 long, centred 0.3 up) swings to +x
    boxed = tmp_path / "boxed.urdf"
    boxed.write_text(BOX_URDF)
    env = Environment()
    env.add_sphere([0.3, 0.0, 0.04], 0.019)  # 2 cm above the box's top face (0.04 thick) at j = pi/2
    assert verify_path(robot, [[np.pi / 2]], env, mesh_urdf=boxed).valid
    env = Environment()
    env.add_sphere([0.3, 0.0, 0.04], 0.021)
    v = verify_path(robot, [[np.pi / 2]], env, mesh_urdf=boxed)
    assert not v.valid and v.first_collision.depth == pytest.approx(0.001, abs=1e-6)


def test_missing_coal_says_how_to_install(panda, monkeypatch):
    monkeypatch.setitem(sys.modules, "coal", None)
    with pytest.raises(ImportError, match=r"pip install simdplan\[verify\]"):
        verify_path(panda, [READY])


# ----------------------------------------------------------------------------- CLI
@pytest.mark.parametrize("seed", [1, 2])
def test_cli_verify_meshes(seed, tmp_path, capsys):
    out = tmp_path / "plan.json"
    code = cli.main(["plan", "panda_table", "--seed", str(seed), "--verify-meshes", "--out", str(out)])
    text = capsys.readouterr()
    assert code in (0, 3), text.err
    line = [ln for ln in text.out.splitlines() if ln.startswith("mesh check:")]
    assert len(line) == 1
    import json

    from simdplan import scenes

    scene = scenes.load(scenes.example("panda_table"))
    path = np.array(json.loads(out.read_text())["path"])
    v = verify_path(scene.robot, path, scene.env, padding=scene.settings.padding)
    assert code == (0 if v.valid else 3)
    if v.valid:
        assert "yes" in line[0]
    else:
        assert "NO" in line[0] and v.first_collision.link in line[0]
        assert "collides with the robot's collision meshes" in text.err


def test_cli_verify_meshes_without_coal(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "coal", None)
    code = cli.main(["plan", "panda_table", "--verify-meshes"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and "simdplan[verify]" in err[0]


def test_cli_without_the_flag_prints_no_mesh_check(capsys):
    assert cli.main(["plan", "panda_table", "--seed", "2"]) == 0
    assert "mesh check" not in capsys.readouterr().out
