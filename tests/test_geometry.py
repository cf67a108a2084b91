"""Shape kernels (sphere against sphere/capsule/cylinder/box/plane) against the NumPy reference.

The kernels are reached through tiny robots built from generated URDFs:
- a *fixed* robot: one root link holding spheres at chosen positions, no joints (dof 0);
- a *point* robot: three prismatic joints x, y, z and one sphere at the last link's origin, so
  a configuration q is exactly the sphere centre (the axis rotations are exact, so FK adds only
  zeros) and a batch puts different centres in different SIMD lanes.

Random cases skip examples within 1e-5 m of the contact boundary (float32 ambiguity). The
exact-boundary cases use numbers that are exact in float32 (multiples of 2^-20, Pythagorean
triples scaled by powers of two, axis-permutation rotations), where the strict rule
"collides iff distance < radius" must hold to the last bit: touching is free, 2^-20 closer collides.
"""

from __future__ import annotations

import itertools
import os

import numpy as np
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

import reference as ref
import simdplan

EPS = 2.0 ** -20  # a tiny penetration, exact in float32 next to the values used below
AMBIGUOUS = 1e-5  # float32 ambiguity band around a contact boundary, metres
_counter = itertools.count()


# ----------------------------------------------------------------------------- tiny robots


def _fixed_urdf(spheres) -> str:
    cols = "\n".join(
        f'    <collision><origin xyz="{float(x)!r} {float(y)!r} {float(z)!r}" rpy="0 0 0"/>'
        f'<geometry><sphere radius="{float(r)!r}"/></geometry></collision>'
        for x, y, z, r in spheres)
    return f'<?xml version="1.0"?>\n<robot name="fixed">\n  <link name="body">\n{cols}\n  </link>\n</robot>\n'


def _point_urdf(radius: float) -> str:
    joints = []
    links = ['  <link name="base"/>', '  <link name="px"/>', '  <link name="py"/>',
             f'  <link name="ball"><collision><geometry><sphere radius="{radius!r}"/></geometry></collision></link>']
    for (name, parent, child, axis) in (("x", "base", "px", "1 0 0"), ("y", "px", "py", "0 1 0"),
                                        ("z", "py", "ball", "0 0 1")):
        joints.append(f'  <joint name="{name}" type="prismatic"><parent link="{parent}"/><child link="{child}"/>'
                      f'<origin xyz="0 0 0" rpy="0 0 0"/><axis xyz="{axis}"/>'
                      f'<limit lower="-10" upper="10" effort="1" velocity="1"/></joint>')
    return '<?xml version="1.0"?>\n<robot name="point">\n' + "\n".join(links + joints) + "\n</robot>\n"


@pytest.fixture(scope="module")
def urdf_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("urdf")


def fixed_robot(directory, spheres) -> simdplan.Robot:
    path = os.path.join(directory, f"fixed_{next(_counter)}.urdf")
    with open(path, "w") as f:
        f.write(_fixed_urdf(spheres))
    return simdplan.Robot.from_urdf(path)


_point_cache: dict = {}


def point_robot(directory, radius: float) -> simdplan.Robot:
    key = (str(directory), float(radius))
    if key not in _point_cache:
        path = os.path.join(directory, f"point_{next(_counter)}.urdf")
        with open(path, "w") as f:
            f.write(_point_urdf(float(radius)))
        robot = simdplan.Robot.from_urdf(path)
        assert robot.dof == 3 and robot.n_spheres == 1
        _point_cache[key] = robot
    return _point_cache[key]


def check_rows(robot, env, Q, expected_valid, padding=0.0):
    """is_valid_many, per-row is_valid and why_invalid all agree with the expected verdicts."""
    Q = np.asarray(Q, dtype=np.float64).reshape(-1, robot.dof)
    expected_valid = np.broadcast_to(np.asarray(expected_valid, dtype=bool), (len(Q),))
    many = robot.is_valid_many(Q, env, padding)
    assert many.dtype == bool and many.shape == (len(Q),)
    single = np.array([robot.is_valid(q, env, padding) for q in Q], dtype=bool)
    why = [robot.why_invalid(q, env, padding) for q in Q]
    info = f"isa={simdplan.isa()} padding={padding}\nQ={Q.tolist()}\nexpected={expected_valid.tolist()}"
    assert many.tolist() == expected_valid.tolist(), f"is_valid_many={many.tolist()}\n{info}"
    assert single.tolist() == expected_valid.tolist(), f"is_valid={single.tolist()}\n{info}"
    assert [not w for w in why] == expected_valid.tolist(), f"why_invalid={why}\n{info}"


# ----------------------------------------------------------------------------- strategies

coord = st.floats(-1.0, 1.0, allow_nan=False, allow_infinity=False)
size = st.floats(0.01, 0.6, allow_nan=False, allow_infinity=False)
vec3 = st.tuples(coord, coord, coord)


@st.composite
def rotation_kw(draw) -> dict:
    """Orientation given in one of the accepted ways: none, quat [x, y, z, w], euler, 4x4 pose."""
    style = draw(st.sampled_from(["none", "quat", "euler", "pose"]))
    if style == "none":
        return {}
    if style == "euler":
        ang = st.floats(-np.pi, np.pi, allow_nan=False)
        return {"euler": tuple(draw(st.tuples(ang, ang, ang)))}
    q = np.array(draw(st.tuples(coord, coord, coord, coord)))
    if np.linalg.norm(q) < 0.1:
        q = np.array([0.0, 0.0, 0.0, 1.0])
    q = q / np.linalg.norm(q)
    if style == "quat":
        return {"quat": tuple(q)}
    return {"rot": ref.quat_to_matrix(q)}


@st.composite
def obstacle(draw, kind=None) -> dict:
    kind = kind or draw(st.sampled_from(simdplan.collision.PRIMITIVES))
    if kind == "sphere":
        return {"kind": "sphere", "center": draw(vec3), "radius": draw(size)}
    if kind == "plane":
        n = np.array(draw(vec3))
        if np.linalg.norm(n) < 0.1:
            n = np.array([0.0, 0.0, 1.0])
        scale = draw(st.sampled_from([1.0, 0.5, 3.0]))  # non-unit normals are normalised with the offset
        n = n / np.linalg.norm(n) * scale
        return {"kind": "plane", "normal": tuple(n), "offset": draw(coord) * scale}
    spec = {"kind": kind}
    pos = draw(vec3)
    rot = draw(rotation_kw())
    if "rot" in rot:
        pose = np.eye(4)
        pose[:3, :3] = rot["rot"]
        pose[:3, 3] = pos
        spec["pose"] = pose
    else:
        spec["position"] = pos
        spec.update(rot)
    if kind == "box":
        spec["half_extents"] = draw(st.tuples(size, size, size))
    else:
        spec["radius"] = draw(size)
        spec["length"] = draw(st.floats(0.0, 1.2) if kind == "capsule" else st.floats(0.01, 1.2))
    return spec


def _spec_extent(spec) -> float:
    """Radius of a ball around ``_spec_centre`` holding the obstacle (a slab for planes)."""
    kind = spec["kind"]
    if kind == "sphere":
        return spec["radius"]
    if kind == "capsule":
        return spec["radius"] + 0.5 * spec["length"]
    if kind == "cylinder":
        return float(np.hypot(spec["radius"], 0.5 * spec["length"]))
    if kind == "box":
        return float(np.linalg.norm(spec["half_extents"]))
    return 0.2


def _spec_centre(spec) -> np.ndarray:
    if spec["kind"] == "sphere":
        return np.asarray(spec["center"], dtype=float)
    if spec["kind"] == "plane":
        n = np.asarray(spec["normal"], dtype=float)
        return n * spec["offset"] / (n @ n)
    return ref.spec_pose(spec)[0]


# ----------------------------------------------------------------------------- random cases


def test_dof0_robot_works(urdf_dir, isa):
    robot = fixed_robot(urdf_dir, [(0.25, -0.5, 0.125, 0.25)])
    assert robot.dof == 0 and robot.n_spheres == 1
    np.testing.assert_array_equal(robot.fk(np.zeros(0)), np.array([[0.25, -0.5, 0.125, 0.25]], dtype=np.float32))
    env, _ = ref.make_environment([{"kind": "sphere", "center": (0.25, -0.5, 0.5), "radius": 0.125}])
    assert robot.is_valid(np.zeros(0), env)  # centres 0.375 apart = 0.25 + 0.125: touching
    assert not robot.is_valid(np.zeros(0), env, padding=EPS)
    np.testing.assert_array_equal(robot.is_valid_many(np.zeros((5, 0)), env), np.ones(5, bool))
    np.testing.assert_array_equal(robot.is_valid_many(np.zeros((5, 0)), env, EPS), np.zeros(5, bool))


@settings(max_examples=150)
@given(data=st.data())
def test_fixed_sphere_vs_random_obstacle(urdf_dir, isa, data):
    """One sphere on a dof-0 robot against one obstacle of any kind, pose and size."""
    centre = np.array(data.draw(vec3, "centre"))
    r = data.draw(st.floats(0.005, 0.5), "radius")
    padding = data.draw(st.sampled_from([0.0, 0.0, 0.01, 0.1]), "padding")
    spec = data.draw(obstacle(), "obstacle")
    d = float(ref.distance(centre, spec))
    eff = r + padding
    if abs(d - eff) <= AMBIGUOUS:
        return  # float32 cannot decide
    robot = fixed_robot(urdf_dir, [(*centre, r)])
    env, _ = ref.make_environment([spec])
    expected_valid = not d < eff
    event(f"{spec['kind']} {'free' if expected_valid else 'hit'}")
    assert robot.is_valid(np.zeros(0), env, padding) == expected_valid, (d, eff, spec, isa)
    why = robot.why_invalid(np.zeros(0), env, padding)
    assert (len(why) == 0) == expected_valid
    if why:
        (v,) = why
        assert v.kind == "environment" and v.obstacle_kind == spec["kind"] and v.sphere == 0
        if d >= 0:  # centre outside: the penetration is radius - distance
            assert v.depth == pytest.approx(eff - d, abs=1e-4)
        else:  # centre inside: see test_depth_when_centre_is_inside for the exact value
            assert 0 < v.depth <= eff - d + 1e-4


@settings(max_examples=80)
@given(data=st.data())
def test_point_robot_batch_vs_random_obstacle(urdf_dir, isa, data):
    """Many sphere centres (one per SIMD lane, batch sizes not multiples of the width) against one
    obstacle: is_valid_many, is_valid and why_invalid agree with the reference on every row."""
    r = data.draw(st.sampled_from([0.0625, 0.125, 0.3]), "radius")
    padding = data.draw(st.sampled_from([0.0, 0.05]), "padding")
    spec = data.draw(obstacle(), "obstacle")
    n = data.draw(st.integers(1, 40), "n")
    seed = data.draw(st.integers(0, 2 ** 32 - 1), "seed")
    rng = np.random.default_rng(seed)
    span = _spec_extent(spec) + r + padding + 0.1  # the obstacle, its contact shell and some free space
    Q = _spec_centre(spec) + rng.uniform(-span, span, size=(n, 3))
    Q = Q.astype(np.float32).astype(np.float64)  # the sphere centre is then exact in float32
    d = ref.distance(Q, spec)
    keep = np.abs(d - (r + padding)) > AMBIGUOUS
    robot = point_robot(urdf_dir, r)
    env, _ = ref.make_environment([spec])
    expected = ~(d < r + padding)
    got = robot.is_valid_many(Q, env, padding)
    event(f"hit fraction {np.mean(~expected):.1f}")
    bad = np.flatnonzero(keep & (got != expected))
    assert bad.size == 0, f"rows {bad.tolist()} differ: Q={Q[bad].tolist()} d={d[bad].tolist()} spec={spec} isa={isa}"
    for i in np.flatnonzero(keep)[:8]:
        assert robot.is_valid(Q[i], env, padding) == expected[i]


@settings(max_examples=60)
@given(data=st.data())
def test_multi_sphere_link_vs_environment(urdf_dir, isa, data):
    """A link of many spheres (bounding-sphere culling, then per sphere) against several obstacles:
    the verdict and every reported contact (sphere, obstacle) agree with the reference."""
    k = data.draw(st.integers(1, 24), "spheres")
    seed = data.draw(st.integers(0, 2 ** 32 - 1), "seed")
    rng = np.random.default_rng(seed)
    spheres = np.c_[rng.uniform(-0.6, 0.6, size=(k, 3)), rng.uniform(0.01, 0.15, size=k)]
    specs = data.draw(st.lists(obstacle(), min_size=1, max_size=6), "obstacles")
    padding = data.draw(st.sampled_from([0.0, 0.02]), "padding")
    d = np.stack([ref.distance(spheres[:, :3], s) for s in specs], axis=1) - (spheres[:, 3:] + padding)
    if np.min(np.abs(d)) <= AMBIGUOUS:
        return
    robot = fixed_robot(urdf_dir, spheres.tolist())
    assert robot.sphere_links == ["body"] * k
    np.testing.assert_allclose(robot.fk(np.zeros(0)), spheres, atol=1e-6)
    env, ids = ref.make_environment(specs)
    expected_hits = {(int(s), ids[o]) for s, o in zip(*np.nonzero(d < 0))}
    event(f"contacts {min(len(expected_hits), 3)}")
    assert robot.is_valid(np.zeros(0), env, padding) == (not expected_hits)
    got = {(v.sphere, v.obstacle_id) for v in robot.why_invalid(np.zeros(0), env, padding)}
    assert got == expected_hits


# ----------------------------------------------------------------------------- exact boundaries


def _pose(rot, pos) -> np.ndarray:
    m = np.eye(4)
    m[:3, :3] = rot
    m[:3, 3] = pos
    return m


ROT_Z90 = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # local x -> world y
ROT_Y90 = np.array([[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 0.0]])  # local z -> world x


def _boundary(urdf_dir, radius, spec, free, hit, padding=0.0):
    """Each centre in ``free`` is touching or outside (valid); each in ``hit`` penetrates. The
    reference must agree (these are exact numbers, so it is the same strict comparison)."""
    robot = point_robot(urdf_dir, radius)
    env, _ = ref.make_environment([spec])
    free, hit = np.asarray(free, float).reshape(-1, 3), np.asarray(hit, float).reshape(-1, 3)
    for c in free:
        assert not ref.collides(c, radius + padding, spec), c
    for c in hit:
        assert ref.collides(c, radius + padding, spec), c
    Q = np.r_[free, hit]
    expected = np.r_[np.ones(len(free), bool), np.zeros(len(hit), bool)]
    check_rows(robot, env, Q, expected, padding)
    # interleaved and padded past a SIMD width, so boundary cases sit in every lane position
    order = np.resize(np.arange(len(Q)), 37)
    check_rows(robot, env, Q[order], expected[order], padding)


BOX = {"kind": "box", "position": (0.0, 0.0, 0.0), "half_extents": (1.0, 1.0, 1.0)}


def test_box_faces_touching_free_penetrating_collides(urdf_dir, isa):
    free = [(1.5, 0, 0), (-1.5, 0, 0), (0, 1.5, 0), (0, -1.5, 0), (0, 0, 1.5), (0, 0, -1.5),
            (1.5, 0.75, -0.75), (-0.5, 1.5, 1.0)]
    hit = [(1.5 - EPS, 0, 0), (-1.5 + EPS, 0, 0), (0, 1.5 - EPS, 0), (0, -1.5 + EPS, 0), (0, 0, 1.5 - EPS),
           (0, 0, -1.5 + EPS), (1.5 - EPS, 1.0, -1.0), (0, 0, 0), (0.9, -0.9, 0.9)]
    _boundary(urdf_dir, 0.5, BOX, free, hit)


def test_box_edges(urdf_dir, isa):
    # distance to the edge x = y = 1 is |(0.375, 0.5)| = 0.625 exactly
    free = [(1.375, 1.5, 0), (-1.375, 1.5, 0.5), (1.375, 0.25, 1.5), (0, -1.375, -1.5)]
    hit = [(1.375 - EPS, 1.5, 0), (-1.375, 1.5 - EPS, 0.5), (1.375, 0.25, 1.5 - EPS), (0, -1.375 + EPS, -1.5)]
    _boundary(urdf_dir, 0.625, BOX, free, hit)


def test_box_corners(urdf_dir, isa):
    # distance to the corner (1, 1, 1) is |(0.25, 0.375, 0.75)| = 0.875 exactly (2-3-6-7 / 8)
    signs = list(itertools.product([1, -1], repeat=3))
    free = [tuple(s * v for s, v in zip(sg, (1.25, 1.375, 1.75))) for sg in signs]
    hit = [tuple(s * v for s, v in zip(sg, (1.25 - EPS, 1.375, 1.75))) for sg in signs]
    _boundary(urdf_dir, 0.875, BOX, free, hit)


def test_rotated_translated_box(urdf_dir, isa):
    # local x (half 1) along world y, local y (half 0.5) along world -x, centre (0.25, -0.5, 0.125):
    # world x in [-0.25, 0.75], y in [-1.5, 0.5], z in [-0.125, 0.375]
    spec = {"kind": "box", "pose": _pose(ROT_Z90, (0.25, -0.5, 0.125)), "half_extents": (1.0, 0.5, 0.25)}
    free = [(1.25, -0.5, 0.125), (-0.75, 0, 0), (0.25, 1.0, 0.125), (0.25, -2.0, 0), (0, 0, 0.875),
            (0, 0, -0.625), (1.25, 0.5, 0.375)]
    hit = [(1.25 - EPS, -0.5, 0.125), (-0.75 + EPS, 0, 0), (0.25, 1.0 - EPS, 0.125), (0.25, -2.0 + EPS, 0),
           (0, 0, 0.875 - EPS), (0, 0, -0.625 + EPS)]
    _boundary(urdf_dir, 0.5, spec, free, hit)
    # the same box as a quaternion (half turn about z keeps it exact) and as Euler angles
    for rot in ({"quat": (0.0, 0.0, 1.0, 0.0)}, {"euler": (0.0, 0.0, np.pi)}):
        spec = {"kind": "box", "position": (0.0, 0.0, 0.0), "half_extents": (1.0, 0.5, 0.25), **rot}
        _boundary(urdf_dir, 0.5, spec, [(1.5 + 1e-4, 0, 0), (0, 1.0 + 1e-4, 0)], [(1.5 - 1e-4, 0, 0), (0, 1 - 1e-4, 0)])


CYL = {"kind": "cylinder", "position": (0.0, 0.0, 0.0), "radius": 1.0, "length": 2.0}
CAP = {"kind": "capsule", "position": (0.0, 0.0, 0.0), "radius": 1.0, "length": 2.0}


def test_cylinder_side_and_caps(urdf_dir, isa):
    free = [(1.5, 0, 0), (0, -1.5, 0.5), (-1.5, 0, -0.75), (0, 0, 1.5), (0, 0, -1.5), (0.75, 0, 1.5),
            (-0.5, 0.5, -1.5)]
    hit = [(1.5 - EPS, 0, 0), (0, -1.5 + EPS, 0.5), (0, 0, 1.5 - EPS), (0, 0, -1.5 + EPS), (0.75, 0, 1.5 - EPS),
           (-0.5, 0.5, -1.5 + EPS), (0, 0, 0)]
    _boundary(urdf_dir, 0.5, CYL, free, hit)


def test_cylinder_side_diagonal(urdf_dir, isa):
    # radial distance |(0.75, 1.0)| = 1.25 exactly: 0.25 from the side
    _boundary(urdf_dir, 0.25, CYL, [(0.75, 1.0, 0), (-0.75, -1.0, 0.5)], [(0.75 - EPS, 1.0, 0), (-0.75, -1.0 + EPS, 0.5)])


def test_cylinder_rim(urdf_dir, isa):
    # distance to the rim circle (radial 1, z 1) is |(0.375, 0.5)| = 0.625 exactly
    free = [(1.375, 0, 1.5), (0, -1.375, -1.5), (1.5, 0, 1.375)]
    hit = [(1.375, 0, 1.5 - EPS), (0, -1.375 + EPS, -1.5), (1.5 - EPS, 0, 1.375)]
    _boundary(urdf_dir, 0.625, CYL, free, hit)


def test_cylinder_flat_cap_is_not_a_capsule(urdf_dir, isa):
    """Just beyond the flat cap but inside the round cap of the capsule of the same size."""
    centres = [(0.5, 0, 1.375), (0, -0.75, -1.375), (0.875, 0, 1.25)]
    # cylinder: 0.375, 0.375 and 0.25 (touching) beyond the cap; r = 0.25 -> free
    _boundary(urdf_dir, 0.25, CYL, centres, [])
    # capsule: within radius + r of its segment's end -> collides
    _boundary(urdf_dir, 0.25, CAP, [], centres)


def test_rotated_cylinder(urdf_dir, isa):
    spec = {"kind": "cylinder", "pose": _pose(ROT_Y90, (0.0, 0.0, 0.0)), "radius": 1.0, "length": 2.0}
    free = [(1.5, 0, 0), (-1.5, 0.5, 0), (0, 0, 1.5), (0.5, -1.5, 0)]
    hit = [(1.5 - EPS, 0, 0), (-1.5 + EPS, 0.5, 0), (0, 0, 1.5 - EPS), (0.5, -1.5 + EPS, 0)]
    _boundary(urdf_dir, 0.5, spec, free, hit)


def test_capsule_side_and_round_caps(urdf_dir, isa):
    spec = {"kind": "capsule", "position": (0.0, 0.0, 0.0), "radius": 0.25, "length": 2.0}
    # side: 0.75 from the axis = 0.25 + 0.5
    _boundary(urdf_dir, 0.5, spec, [(0.75, 0, 0.5), (0, -0.75, -1.0), (0, 0, 1.75), (0, 0, -1.75)],
              [(0.75 - EPS, 0, 0.5), (0, -0.75 + EPS, -1.0), (0, 0, 1.75 - EPS), (0, 0, -1.75 + EPS)])
    # round cap: |(0.375, 0.5)| = 0.625 = 0.25 + 0.375 from the segment's end
    _boundary(urdf_dir, 0.375, spec, [(0.375, 0, 1.5), (0, 0.375, -1.5)],
              [(0.375, 0, 1.5 - EPS), (0, 0.375, -1.5 + EPS)])
    # rotated: axis along world x
    rot = {"kind": "capsule", "pose": _pose(ROT_Y90, (0.0, 0.0, 0.0)), "radius": 0.25, "length": 2.0}
    _boundary(urdf_dir, 0.5, rot, [(1.75, 0, 0), (0.5, 0, 0.75)], [(1.75 - EPS, 0, 0), (0.5, 0, 0.75 - EPS)])


def test_zero_length_capsule_is_a_sphere(urdf_dir, isa):
    spec = {"kind": "capsule", "position": (0.0, 0.0, 0.0), "radius": 0.25, "length": 0.0}
    _boundary(urdf_dir, 0.5, spec, [(0.75, 0, 0), (0, -0.75, 0), (0, 0, 0.75)], [(0.75 - EPS, 0, 0), (0, 0, 0.75 - EPS)])


def test_sphere_obstacle_boundary(urdf_dir, isa):
    spec = {"kind": "sphere", "center": (0.0, 0.0, 0.0), "radius": 0.125}
    # |(0.375, 0.5)| = 0.625 = 0.125 + 0.5
    _boundary(urdf_dir, 0.5, spec, [(0.625, 0, 0), (0, -0.625, 0), (0.375, 0.5, 0), (0, -0.375, -0.5)],
              [(0.625 - EPS, 0, 0), (0, -0.625 + EPS, 0), (0.375 - EPS, 0.5, 0), (0, 0, 0)])


def test_plane_boundary(urdf_dir, isa):
    up = {"kind": "plane", "normal": (0.0, 0.0, 1.0), "offset": 0.0}
    _boundary(urdf_dir, 0.5, up, [(0.3, -0.7, 0.5), (5, 5, 2)], [(0.3, -0.7, 0.5 - EPS), (0, 0, -3)])
    # non-unit normal: {2 z <= 1} = {z <= 0.5}
    scaled = {"kind": "plane", "normal": (0.0, 0.0, 2.0), "offset": 1.0}
    _boundary(urdf_dir, 0.5, scaled, [(0, 0, 1.0), (1, -1, 4)], [(0, 0, 1.0 - EPS), (0, 0, 0.5)])
    # normal -x, offset 0.25: obstacle {-x <= 0.25} = {x >= -0.25}, free space x < -0.25
    side = {"kind": "plane", "normal": (-1.0, 0.0, 0.0), "offset": 0.25}
    _boundary(urdf_dir, 0.5, side, [(-0.75, 0, 0), (-3, 1, 1)], [(-0.75 + EPS, 0, 0), (5, 0, 0)])


def test_padding_inflates_radius(urdf_dir, isa):
    sph = {"kind": "sphere", "center": (0.0, 0.0, 0.0), "radius": 0.25}
    # centre 0.875 away = 0.25 + 0.5 + 0.125
    _boundary(urdf_dir, 0.5, sph, [(0.875, 0, 0)], [], padding=0.0)
    _boundary(urdf_dir, 0.5, sph, [(0.875, 0, 0)], [], padding=0.125)
    _boundary(urdf_dir, 0.5, sph, [], [(0.875, 0, 0)], padding=0.125 + EPS)
    for spec, centre in ((BOX, (1.625, 0, 0)), (CYL, (0, 0, 1.625)), (CAP, (0, 0, 2.625)),
                         ({"kind": "plane", "normal": (0.0, 1.0, 0.0), "offset": 0.0}, (0, 0.625, 0))):
        _boundary(urdf_dir, 0.5, spec, [centre], [], padding=0.125)
        _boundary(urdf_dir, 0.5, spec, [], [centre], padding=0.125 + EPS)


def test_padding_why_invalid_depth(urdf_dir, isa):
    robot = point_robot(urdf_dir, 0.5)
    env, ids = ref.make_environment([BOX])
    (v,) = robot.why_invalid(np.array([1.5, 0.0, 0.0]), env, padding=0.125)
    assert v.kind == "environment" and v.obstacle_id == ids[0] and v.obstacle_kind == "box"
    assert v.depth == pytest.approx(0.125, abs=1e-6)


@pytest.mark.parametrize("kind", ["sphere", "capsule", "cylinder", "box", "plane"])
def test_centre_inside_solid_collides(urdf_dir, isa, kind):
    """A sphere of tiny radius (2^-20 m) whose centre is strictly inside an obstacle collides, for
    every shape (its signed distance is negative, below any positive radius). Radius 0 is refused
    at load (tests/test_bad_input.py), so "inside" never depends on a degenerate point."""
    spec = {"sphere": {"kind": "sphere", "center": (0.0, 0.0, 0.0), "radius": 0.5},
            "capsule": {"kind": "capsule", "position": (0.0, 0.0, 0.0), "radius": 0.5, "length": 1.0},
            "cylinder": {"kind": "cylinder", "position": (0.0, 0.0, 0.0), "radius": 0.5, "length": 1.0},
            "box": {"kind": "box", "position": (0.0, 0.0, 0.0), "half_extents": (0.5, 0.5, 0.5)},
            "plane": {"kind": "plane", "normal": (0.0, 0.0, 1.0), "offset": 0.5}}[kind]
    _boundary(urdf_dir, 2.0 ** -20, spec, [(0, 0, 2.0)], [(0, 0, 0), (0.25, -0.125, 0.25)])


@pytest.mark.parametrize("kind", ["sphere", "capsule", "cylinder", "box", "plane"])
def test_depth_when_centre_is_inside(urdf_dir, kind):
    """why_invalid's depth is the penetration: radius minus the *signed* distance, so a centre
    0.25 inside the obstacle's surface with radius 0.125 penetrates by 0.375 for every shape."""
    spec = {"sphere": {"kind": "sphere", "center": (0.0, 0.0, 0.0), "radius": 0.5},
            "capsule": {"kind": "capsule", "position": (0.0, 0.0, 0.0), "radius": 0.5, "length": 1.0},
            "cylinder": {"kind": "cylinder", "position": (0.0, 0.0, 0.0), "radius": 0.5, "length": 4.0},
            "box": {"kind": "box", "position": (0.0, 0.0, 0.0), "half_extents": (0.5, 4.0, 4.0)},
            "plane": {"kind": "plane", "normal": (1.0, 0.0, 0.0), "offset": 0.5}}[kind]
    robot = point_robot(urdf_dir, 0.125)
    env, _ = ref.make_environment([spec])
    q = np.array([0.25, 0.0, 0.0])
    assert float(ref.distance(q, spec)) == -0.25
    (v,) = robot.why_invalid(q, env)
    assert v.depth == pytest.approx(0.375, abs=1e-6), f"{kind}: depth {v.depth}"
