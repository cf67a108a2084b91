"""Bad input gets a clear Python exception naming the problem; odd but legal input is read right.

Covers the Robot queries (shape, dtype, non-finite values, strides), padding and resolution,
Environment.add_* / remove, and URDF / SRDF files that are missing, malformed or unsupported.
"""

from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest

import simdplan
from simdplan import Environment, Robot
from simdplan import robots as sp_robots

NAN, INF = float("nan"), float("inf")


@pytest.fixture(scope="module")
def panda():
    return sp_robots.load("panda")


@pytest.fixture(scope="module")
def scene():
    env = Environment()
    env.add_box([0.5, 0.0, 0.4], [0, 0, 0, 1], [0.1, 0.3, 0.02])
    env.add_cylinder([-0.4, -0.3, 0.5], [0, 0, 0, 1], 0.08, 0.8)
    env.add_sphere([0.0, 0.5, 0.6], 0.15)
    return env


Q_GOOD = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7])


def random_q(robot, n, seed=0):
    return np.random.default_rng(seed).uniform(robot.lower, robot.upper, size=(n, robot.dof))


# ----------------------------------------------------------------------------- the queries, one by one

# Each query as a function of (robot, env, a joint vector or batch); "vec" takes (dof,), "batch" (n, dof).
VEC_QUERIES = {
    "is_valid": lambda r, e, q: r.is_valid(q, e),
    "is_motion_valid_q0": lambda r, e, q: r.is_motion_valid(q, Q_GOOD, e),
    "is_motion_valid_q1": lambda r, e, q: r.is_motion_valid(Q_GOOD, q, e),
    "motion_samples_q0": lambda r, e, q: r.motion_samples(q, Q_GOOD, 10.0),
    "motion_samples_q1": lambda r, e, q: r.motion_samples(Q_GOOD, q, 10.0),
    "fk": lambda r, e, q: r.fk(q),
    "link_poses": lambda r, e, q: r.link_poses(q),
    "why_invalid": lambda r, e, q: r.why_invalid(q, e),
}
BATCH_QUERIES = {
    "is_valid_many": lambda r, e, Q: r.is_valid_many(Q, e),
    "fk_many": lambda r, e, Q: r.fk_many(Q),
}


@pytest.mark.parametrize("query", sorted(VEC_QUERIES))
@pytest.mark.parametrize("length", [0, 6, 8])
def test_wrong_number_of_joints(panda, scene, query, length):
    with pytest.raises(ValueError, match=r"7") as info:
        VEC_QUERIES[query](panda, scene, np.zeros(length))
    assert "shape" in str(info.value)


@pytest.mark.parametrize("query", sorted(BATCH_QUERIES))
@pytest.mark.parametrize("cols", [0, 6, 8])
def test_wrong_number_of_joints_batch(panda, scene, query, cols):
    with pytest.raises(ValueError, match=r"shape.*7"):
        BATCH_QUERIES[query](panda, scene, np.zeros((3, cols)))


# motion_samples has its own test below (test_motion_samples_non_finite_names_the_problem)
@pytest.mark.parametrize("query", sorted(q for q in VEC_QUERIES if not q.startswith("motion_samples")))
@pytest.mark.parametrize("bad", [NAN, INF, -INF])
@pytest.mark.parametrize("where", [0, 6])
def test_non_finite_joint_values(panda, scene, query, bad, where):
    q = Q_GOOD.copy()
    q[where] = bad
    with pytest.raises(ValueError, match="finite"):
        VEC_QUERIES[query](panda, scene, q)


@pytest.mark.parametrize("query", sorted(BATCH_QUERIES))
@pytest.mark.parametrize("bad", [NAN, INF, -INF])
def test_non_finite_joint_values_batch(panda, scene, query, bad):
    Q = np.tile(Q_GOOD, (300, 1))
    Q[257, 3] = bad  # beyond the first block of rows
    with pytest.raises(ValueError, match="finite") as info:
        BATCH_QUERIES[query](panda, scene, Q)
    assert "257" in str(info.value)


def test_non_finite_values_raise_even_out_of_limits(panda, scene):
    q = Q_GOOD.copy()
    q[0], q[1] = 10.0, NAN  # the out-of-limits joint comes first
    with pytest.raises(ValueError, match="finite"):
        panda.is_valid(q, scene)
    with pytest.raises(ValueError, match="finite"):
        panda.is_motion_valid(Q_GOOD, q, scene)
    with pytest.raises(ValueError, match="finite"):
        panda.is_motion_valid(q, Q_GOOD, scene)
    Q = np.tile(q, (2, 1))
    with pytest.raises(ValueError, match="finite"):
        panda.is_valid_many(Q, scene)


BAD_DTYPES = {
    "str": np.array(["0"] * 7),
    "bool": np.ones(7, dtype=bool),
    "complex": np.zeros(7, dtype=complex),
    "object": np.array([0.0] * 7, dtype=object),
    "list_of_str": ["a", "b", "c", "d", "e", "f", "g"],
    "bytes": np.array([b"0"] * 7),
}


@pytest.mark.parametrize("query", sorted(VEC_QUERIES))
@pytest.mark.parametrize("kind", sorted(BAD_DTYPES))
def test_wrong_dtype(panda, scene, query, kind):
    with pytest.raises(TypeError, match="dtype"):
        VEC_QUERIES[query](panda, scene, BAD_DTYPES[kind])


@pytest.mark.parametrize("query", sorted(BATCH_QUERIES))
@pytest.mark.parametrize("kind", ["str", "bool", "complex", "object"])
def test_wrong_dtype_batch(panda, scene, query, kind):
    Q = np.tile(BAD_DTYPES[kind], (4, 1))
    with pytest.raises(TypeError, match="dtype"):
        BATCH_QUERIES[query](panda, scene, Q)


@pytest.mark.parametrize("query", sorted(VEC_QUERIES))
def test_none_is_refused(panda, scene, query):
    with pytest.raises((TypeError, ValueError)):
        VEC_QUERIES[query](panda, scene, None)


@pytest.mark.parametrize("query", sorted(VEC_QUERIES))
@pytest.mark.parametrize("shape", [(1, 7), (7, 1), (2, 7), ()])
def test_vector_queries_refuse_other_shapes(panda, scene, query, shape):
    with pytest.raises(ValueError, match="shape|dimensions"):
        VEC_QUERIES[query](panda, scene, np.zeros(shape))


@pytest.mark.parametrize("query", sorted(BATCH_QUERIES))
@pytest.mark.parametrize("shape", [(7,), (2, 7, 1), (1, 2, 7), ()])
def test_batch_queries_refuse_other_shapes(panda, scene, query, shape):
    with pytest.raises(ValueError, match="shape"):
        BATCH_QUERIES[query](panda, scene, np.zeros(shape))


def test_other_real_dtypes_are_converted(panda, scene):
    Q = random_q(panda, 64, seed=1)
    expected = panda.is_valid_many(Q, scene)
    q32 = Q.astype(np.float32)
    # float32 input is read as its float32 values
    np.testing.assert_array_equal(panda.is_valid_many(q32, scene), panda.is_valid_many(q32.astype(float), scene))
    assert [panda.is_valid(q, scene) for q in q32] == panda.is_valid_many(q32.astype(float), scene).tolist()
    # integers and lists
    Qi = np.zeros((3, 7), dtype=np.int32)
    Qi[:, 3], Qi[:, 5] = -2, 1
    np.testing.assert_array_equal(panda.is_valid_many(Qi, scene), panda.is_valid_many(Qi.astype(float), scene))
    assert panda.is_valid(Qi[0].tolist(), scene) == panda.is_valid(Qi[0].astype(float), scene)
    assert panda.is_valid(tuple(Q[0]), scene) == expected[0]
    assert panda.is_valid(list(Q[1]), scene) == expected[1]
    np.testing.assert_array_equal(panda.is_valid_many(Q.tolist(), scene), expected)


def test_empty_batch(panda, scene):
    out = panda.is_valid_many(np.zeros((0, 7)), scene)
    assert out.shape == (0,) and out.dtype == bool
    assert panda.fk_many(np.zeros((0, 7))).shape == (0, panda.n_spheres, 4)


# ----------------------------------------------------------------------------- strides


def strided_views(Q: np.ndarray) -> dict[str, np.ndarray]:
    """Non-contiguous arrays holding the same (n, dof) values as Q."""
    n, d = Q.shape
    wide = np.zeros((n, 2 * d))
    wide[:, ::2] = Q
    tall = np.zeros((2 * n, d))
    tall[::2] = Q
    fortran = np.asfortranarray(Q)
    transposed = np.ascontiguousarray(Q.T).T
    reversed_rows = np.ascontiguousarray(Q[::-1])[::-1]
    reversed_cols = np.ascontiguousarray(Q[:, ::-1])[:, ::-1]
    both = np.zeros((3 * n, 3 * d))
    both[1::3, 2::3] = Q
    views = {
        "cols_step2": wide[:, ::2],
        "rows_step2": tall[::2],
        "fortran": fortran,
        "transposed": transposed,
        "reversed_rows": reversed_rows,
        "reversed_cols": reversed_cols,
        "both_step3_offset": both[1::3, 2::3],
    }
    for v in views.values():
        np.testing.assert_array_equal(v, Q)
    assert not views["cols_step2"].flags.c_contiguous and not views["rows_step2"].flags.c_contiguous
    assert views["fortran"].flags.f_contiguous and not views["fortran"].flags.c_contiguous
    return views


def test_non_contiguous_batches(isa, panda, scene):
    Q = random_q(panda, 300, seed=2)
    ref_valid = panda.is_valid_many(np.ascontiguousarray(Q), scene)
    ref_pad = panda.is_valid_many(np.ascontiguousarray(Q), scene, padding=0.02)
    ref_fk = panda.fk_many(np.ascontiguousarray(Q))
    assert 0 < ref_valid.mean() < 1
    for name, V in strided_views(Q).items():
        np.testing.assert_array_equal(panda.is_valid_many(V, scene), ref_valid, err_msg=name)
        np.testing.assert_array_equal(panda.is_valid_many(V, scene, padding=0.02), ref_pad, err_msg=name)
        np.testing.assert_array_equal(panda.fk_many(V), ref_fk, err_msg=name)


def strided_vectors(q: np.ndarray) -> dict[str, np.ndarray]:
    d = len(q)
    wide = np.zeros(2 * d)
    wide[::2] = q
    wider = np.zeros(3 * d + 1)
    wider[1::3] = q
    col = np.zeros((d, 4))
    col[:, 2] = q
    views = {
        "step2": wide[::2],
        "step3_offset": wider[1::3],
        "reversed": np.ascontiguousarray(q[::-1])[::-1],
        "column_of_matrix": col[:, 2],
        "row_of_fortran": np.asfortranarray(np.tile(q, (3, 1)))[1],
    }
    for v in views.values():
        np.testing.assert_array_equal(v, q)
    return views


def test_non_contiguous_vectors(isa, panda, scene):
    Q = random_q(panda, 40, seed=3)
    for i in range(len(Q) - 1):
        q, q1 = Q[i], Q[i + 1]
        ref = (panda.is_valid(q.copy(), scene), panda.fk(q.copy()), panda.why_invalid(q.copy(), scene),
               panda.is_motion_valid(q.copy(), q1.copy(), scene, resolution=8.0),
               panda.motion_samples(q.copy(), q1.copy(), 8.0), panda.link_poses(q.copy()))
        for name, v in strided_vectors(q).items():
            assert panda.is_valid(v, scene) == ref[0], name
            np.testing.assert_array_equal(panda.fk(v), ref[1], err_msg=name)
            assert panda.why_invalid(v, scene) == ref[2], name
            for name1, v1 in strided_vectors(q1).items():
                if name1 in ("step2", "reversed"):
                    assert panda.is_motion_valid(v, v1, scene, resolution=8.0) == ref[3], (name, name1)
                    assert panda.motion_samples(v, v1, 8.0) == ref[4], (name, name1)
            poses = panda.link_poses(v)
            for link, pose in ref[5].items():
                np.testing.assert_array_equal(poses[link], pose, err_msg=name)


def test_input_arrays_are_not_modified(panda, scene):
    Q = random_q(panda, 20, seed=4)
    Q[:, 0] += 5.0  # out of limits
    before = Q.copy()
    panda.is_valid_many(Q, scene)
    panda.is_valid(Q[0], scene)
    panda.is_motion_valid(Q[1], Q[2], scene)
    panda.fk_many(Q)
    np.testing.assert_array_equal(Q, before)


# ----------------------------------------------------------------------------- padding and resolution


PADDING_QUERIES = {
    "is_valid": lambda r, e, p: r.is_valid(Q_GOOD, e, padding=p),
    "is_valid_many": lambda r, e, p: r.is_valid_many(np.tile(Q_GOOD, (3, 1)), e, padding=p),
    "is_motion_valid": lambda r, e, p: r.is_motion_valid(Q_GOOD, Q_GOOD + 0.01, e, padding=p),
    "why_invalid": lambda r, e, p: r.why_invalid(Q_GOOD, e, padding=p),
}


@pytest.mark.parametrize("query", sorted(PADDING_QUERIES))
@pytest.mark.parametrize("padding", [-0.01, -1e-9, NAN, INF])
def test_bad_padding(panda, scene, query, padding):
    with pytest.raises(ValueError, match="padding"):
        PADDING_QUERIES[query](panda, scene, padding)


@pytest.mark.parametrize("resolution", [0.0, -1.0, -INF, NAN, INF])
def test_bad_resolution(panda, scene, resolution):
    with pytest.raises(ValueError, match="resolution"):
        panda.is_motion_valid(Q_GOOD, Q_GOOD + 0.1, scene, resolution=resolution)
    with pytest.raises(ValueError, match="resolution"):
        panda.motion_samples(Q_GOOD, Q_GOOD + 0.1, resolution)
    with pytest.raises(ValueError, match="resolution"):
        sp_robots.load("ur5", resolution=resolution)


@pytest.mark.parametrize("resolution", [0.0, -1.0, NAN])
def test_bad_resolution_with_an_endpoint_out_of_limits(panda, scene, resolution):
    # A bad argument is an error whatever the configurations are.
    q_out = Q_GOOD.copy()
    q_out[0] = 10.0
    with pytest.raises(ValueError, match="resolution"):
        panda.is_motion_valid(Q_GOOD, q_out, scene, resolution=resolution)


def test_huge_sample_count_is_refused(panda):
    with pytest.raises(ValueError, match="samples"):
        panda.is_motion_valid(Q_GOOD, Q_GOOD + 0.5, resolution=1e12)


@pytest.mark.parametrize("bad", [NAN, INF])
def test_motion_samples_non_finite_names_the_problem(panda, bad):
    q = Q_GOOD.copy()
    q[2] = bad
    with pytest.raises(ValueError, match="finite"):
        panda.motion_samples(Q_GOOD, q, 10.0)


# ----------------------------------------------------------------------------- Environment


def _add_sphere(env, position=(0, 0, 0), quat=None, radius=0.1, **_):
    return env.add_sphere(position, radius)


def _add_capsule(env, position=(0, 0, 0), quat=(0, 0, 0, 1), radius=0.1, length=0.5, **_):
    return env.add_capsule(position, quat, radius, length)


def _add_cylinder(env, position=(0, 0, 0), quat=(0, 0, 0, 1), radius=0.1, length=0.5, **_):
    return env.add_cylinder(position, quat, radius, length)


def _add_box(env, position=(0, 0, 0), quat=(0, 0, 0, 1), half_extents=(0.1, 0.2, 0.3), **_):
    return env.add_box(position, quat, half_extents)


ADDERS = {"sphere": _add_sphere, "capsule": _add_capsule, "cylinder": _add_cylinder, "box": _add_box}
ORIENTED = ["capsule", "cylinder", "box"]
ROUND = ["sphere", "capsule", "cylinder"]


@functools.lru_cache(maxsize=1)
def _ur5():
    return sp_robots.load("ur5")


def _expect_refused(kind, match, error=ValueError, **kwargs):
    env = Environment()
    with pytest.raises(error, match=match):
        ADDERS[kind](env, **kwargs)
    assert len(env) == 0  # nothing half-added
    # the environment is still usable
    assert _ur5().is_valid(np.zeros(6), env) in (True, False)


def test_good_obstacles_are_accepted():
    env = Environment()
    ids = [add(env) for add in ADDERS.values()] + [env.add_plane([0, 0, 1], -1.0)]
    assert len(set(ids)) == len(ids) == len(env) == 5


@pytest.mark.parametrize("kind", ROUND)
@pytest.mark.parametrize("radius", [-0.1, 0.0, NAN, INF, -INF, None])
def test_bad_radius(kind, radius):
    _expect_refused(kind, "radius", radius=radius)


@pytest.mark.parametrize("kind", ROUND)
def test_text_radius_is_a_type_error(kind):
    _expect_refused(kind, "radius.*not text", radius="big", error=TypeError)


@pytest.mark.parametrize("kind", ["capsule", "cylinder"])
@pytest.mark.parametrize("length", [-0.5, NAN, INF, None])
def test_bad_length(kind, length):
    _expect_refused(kind, "length", length=length)


def test_zero_length_cylinder_refused_capsule_accepted():
    _expect_refused("cylinder", "length", length=0.0)
    env = Environment()
    env.add_capsule([0, 0, 0], [0, 0, 0, 1], 0.1, 0.0)
    assert len(env) == 1


@pytest.mark.parametrize("half_extents", [(0.1, 0.1, 0.0), (0.1, -0.1, 0.1), (-1, -1, -1), (0, 0, 0),
                                          (0.1, NAN, 0.1), (INF, 0.1, 0.1), (0.1, 0.1), (0.1, 0.1, 0.1, 0.1)])
def test_bad_half_extents(half_extents):
    _expect_refused("box", "half_extents", half_extents=half_extents)


def test_box_needs_half_extents():
    env = Environment()
    with pytest.raises(ValueError, match="half_extents"):
        env.add_box([0, 0, 0], [0, 0, 0, 1])


@pytest.mark.parametrize("kind", ORIENTED)
@pytest.mark.parametrize("quat", [(0, 0, 0, 2), (0, 0, 0, 0), (0.5, 0.5, 0.5, 0.6), (1, 1, 0, 0),
                                  (0, 0, NAN, 1), (0, 0, 1), (0, 0, 0, 1, 0)])
def test_bad_quaternion(kind, quat):
    _expect_refused(kind, "quat", quat=quat)


@pytest.mark.parametrize("kind", sorted(ADDERS))
@pytest.mark.parametrize("position", [(NAN, 0, 0), (0, INF, 0), (0, 0, -INF), (0, 0), (0, 0, 0, 0)])
def test_bad_position(kind, position):
    _expect_refused(kind, "position|center", position=position)


@pytest.mark.parametrize("kind", ORIENTED)
def test_bad_euler(kind):
    env = Environment()
    adder = {"capsule": env.add_capsule, "cylinder": env.add_cylinder}.get(kind)
    with pytest.raises(ValueError, match="euler"):
        if adder is None:
            env.add_box([0, 0, 0], None, [0.1, 0.1, 0.1], euler=[0, NAN, 0])
        else:
            adder([0, 0, 0], None, 0.1, 0.5, euler=[0, NAN, 0])
    with pytest.raises(ValueError, match="quat or euler|not both"):
        env.add_box([0, 0, 0], [0, 0, 0, 1], [0.1, 0.1, 0.1], euler=[0, 0, 0])
    assert len(env) == 0


def test_bad_pose_matrix():
    env = Environment()
    with pytest.raises(ValueError, match="rotation"):
        env.add_box(np.diag([2.0, 1, 1, 1]), half_extents=[0.1, 0.1, 0.1])
    assert len(env) == 0


@pytest.mark.parametrize("normal", [(0, 0, 0), (0.0, 0.0, 1e-12), (NAN, 0, 1), (0, INF, 0), (0, 1)])
def test_bad_plane_normal(normal):
    env = Environment()
    with pytest.raises(ValueError, match="normal"):
        env.add_plane(normal, 0.0)
    assert len(env) == 0


def test_plane_normal_of_huge_components_is_normalised_not_zeroed():
    """Components whose squares overflow float64 still give a unit normal (and no RuntimeWarning)."""
    env = Environment()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        i = env.add_plane([1e200, 0, 0], 1e200)
    params = env._obstacles[i].params
    assert np.allclose(params["normal"], [1, 0, 0]) and params["offset"] == pytest.approx(1.0)


def test_quaternion_of_huge_components_is_refused_without_a_warning():
    env = Environment()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="quat"):
            env.add_box([0, 0, 0], [0, 0, 1e200, 1e200], [0.1, 0.1, 0.1])


@pytest.mark.parametrize("offset", [NAN, INF, "x"])
def test_bad_plane_offset(offset):
    env = Environment()
    with pytest.raises(TypeError if isinstance(offset, str) else ValueError, match="offset"):
        env.add_plane([0, 0, 1], offset)
    assert len(env) == 0


def test_remove_unknown_id():
    env = Environment()
    oid = env.add_sphere([0, 0, 0], 0.1)
    with pytest.raises(KeyError):
        env.remove(oid + 1)
    with pytest.raises(KeyError):
        env.remove(-1)
    env.remove(oid)
    with pytest.raises(KeyError):
        env.remove(oid)  # removed twice
    assert len(env) == 0
    # ids are not reused
    assert env.add_sphere([0, 0, 0], 0.1) != oid


def test_removed_obstacle_no_longer_collides(panda):
    env = Environment()
    oid = env.add_sphere([0, 0, 0.3], 0.2)
    assert not panda.is_valid(Q_GOOD, env)
    env.remove(oid)
    assert panda.is_valid(Q_GOOD, env)


# ----------------------------------------------------------------------------- URDF / SRDF files


def link(name, spheres=(), extra=""):
    cols = "".join(f'<collision><origin xyz="{x} {y} {z}"/><geometry><sphere radius="{r}"/></geometry></collision>'
                   for x, y, z, r in spheres)
    return f'<link name="{name}">{cols}{extra}</link>'


def joint(name, jtype, parent, child, xyz="0 0 0", axis="0 0 1", limit=(-1.0, 1.0), extra=""):
    lim = f'<limit lower="{limit[0]}" upper="{limit[1]}" effort="1" velocity="1"/>' if limit is not None else ""
    return (f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="{axis}"/>{lim}{extra}</joint>')


def urdf(*parts, name="bad"):
    return f'<?xml version="1.0"?><robot name="{name}">' + "".join(parts) + "</robot>"


def write(tmp_path, text, fname="robot.urdf"):
    path = tmp_path / fname
    path.write_text(text)
    return str(path)


BASE = link("base", [(0, 0, 0, 0.1)])
ARM = link("arm", [(1, 0, 0, 0.1)])


def good_urdf():
    return urdf(BASE, ARM, joint("j", "revolute", "base", "arm"))


def test_good_urdf_loads(tmp_path):
    robot = Robot.from_urdf(write(tmp_path, good_urdf()))
    assert robot.dof == 1
    # pathlib paths are fine too
    assert Robot.from_urdf(tmp_path / "robot.urdf").dof == 1


def test_missing_urdf(tmp_path):
    missing = tmp_path / "nope" / "missing.urdf"
    with pytest.raises(FileNotFoundError, match="missing.urdf"):
        Robot.from_urdf(missing)
    with pytest.raises(FileNotFoundError, match="URDF"):
        Robot.from_urdf(str(missing))
    # a directory is not a URDF file
    with pytest.raises(FileNotFoundError):
        Robot.from_urdf(tmp_path)


def test_missing_srdf(tmp_path):
    upath = write(tmp_path, good_urdf())
    with pytest.raises(FileNotFoundError, match="SRDF.*missing.srdf"):
        Robot.from_urdf(upath, tmp_path / "missing.srdf")


@pytest.mark.parametrize("text", [
    "",
    "not xml at all",
    '<robot name="x"><link name="a"></robot>',
    '<?xml version="1.0"?><robot name="x"><link name="a"/>',
    '<robot name="x"><link name="a"/></robot><robot/>',
])
def test_malformed_urdf_xml(tmp_path, text):
    with pytest.raises(ValueError, match="XML") as info:
        Robot.from_urdf(write(tmp_path, text))
    assert "robot.urdf" in str(info.value)


@pytest.mark.parametrize("text, match", [
    ("<robot", "XML"),
    ('<?xml version="1.0"?><notrobot/>', "robot"),
    ('<robot name="bad"><disable_collisions link1="base"/></robot>', "link2"),
])
def test_malformed_srdf(tmp_path, text, match):
    upath = write(tmp_path, good_urdf())
    spath = write(tmp_path, text, "robot.srdf")
    with pytest.raises(ValueError, match=match) as info:
        Robot.from_urdf(upath, spath)
    assert "robot.srdf" in str(info.value)


def test_urdf_without_links(tmp_path):
    with pytest.raises(ValueError, match="no links"):
        Robot.from_urdf(write(tmp_path, urdf()))


@pytest.mark.parametrize("parent, child, missing", [("base", "ghost", "ghost"), ("ghost", "arm", "ghost")])
def test_joint_to_unknown_link(tmp_path, parent, child, missing):
    text = urdf(BASE, ARM, joint("j", "revolute", parent, child))
    with pytest.raises(ValueError, match=missing):
        Robot.from_urdf(write(tmp_path, text))


def test_cycle(tmp_path):
    text = urdf(BASE, ARM, joint("j", "revolute", "base", "arm"), joint("k", "revolute", "arm", "base"))
    with pytest.raises(ValueError, match="cycle"):
        Robot.from_urdf(write(tmp_path, text))


def test_cycle_below_the_root(tmp_path):
    text = urdf(BASE, ARM, link("c", [(0, 0, 0, 0.1)]), joint("j", "revolute", "base", "arm"),
                joint("k", "revolute", "arm", "c"), joint("l", "revolute", "c", "arm"))
    with pytest.raises(ValueError, match="arm"):
        Robot.from_urdf(write(tmp_path, text))


def test_two_roots(tmp_path):
    text = urdf(BASE, ARM, link("loose", [(0, 0, 0, 0.1)]), joint("j", "revolute", "base", "arm"))
    with pytest.raises(ValueError, match="loose") as info:
        Robot.from_urdf(write(tmp_path, text))
    assert "root" in str(info.value) or "tree" in str(info.value)


def test_disconnected_cycle(tmp_path):
    text = urdf(BASE, link("a", [(0, 0, 0, 0.1)]), link("b", [(0, 0, 0, 0.1)]),
                joint("j", "revolute", "a", "b"), joint("k", "revolute", "b", "a"))
    with pytest.raises(ValueError, match="cycle|connected"):
        Robot.from_urdf(write(tmp_path, text))


@pytest.mark.parametrize("jtype", ["revolute", "prismatic"])
def test_joint_without_limits(tmp_path, jtype):
    text = urdf(BASE, ARM, joint("jj", jtype, "base", "arm", limit=None))
    with pytest.raises(ValueError, match="jj.*limit"):
        Robot.from_urdf(write(tmp_path, text))


def test_joint_with_reversed_limits(tmp_path):
    text = urdf(BASE, ARM, joint("jj", "revolute", "base", "arm", limit=(1.0, -1.0)))
    with pytest.raises(ValueError, match="jj.*limits"):
        Robot.from_urdf(write(tmp_path, text))


@pytest.mark.parametrize("jtype", ["floating", "planar"])
def test_unsupported_joint_type(tmp_path, jtype):
    text = urdf(BASE, ARM, joint("jj", jtype, "base", "arm", limit=None))
    with pytest.raises(ValueError, match=jtype) as info:
        Robot.from_urdf(write(tmp_path, text))
    assert "jj" in str(info.value) and "supported" in str(info.value)


def test_zero_axis(tmp_path):
    text = urdf(BASE, ARM, joint("jj", "revolute", "base", "arm", axis="0 0 0"))
    with pytest.raises(ValueError, match="axis"):
        Robot.from_urdf(write(tmp_path, text))


def test_axis_of_huge_components_is_normalised_not_zeroed(tmp_path):
    """An axis whose squared length overflows float64 is still a direction, in a URDF and in RobotBuilder."""
    text = urdf(BASE, ARM, joint("jj", "revolute", "base", "arm", axis="0 0 1e200"))
    b = sp_robots.RobotBuilder("huge_axis")
    b.link("base", spheres=[[0, 0, 0, 0.05]])
    b.link("arm", spheres=[[0.3, 0, 0, 0.05]])
    b.joint("jj", "revolute", "base", "arm", axis=[0, 0, 1e200], limits=(-3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        robots = [Robot.from_urdf(write(tmp_path, text)), b.build()]
    for robot in robots:  # turning the joint turns the arm's sphere about z
        x0, y0, z0 = robot.fk(np.array([0.0]))[-1, :3]
        assert np.allclose(robot.fk(np.array([0.5]))[-1, :3],
                           [x0 * np.cos(0.5) - y0 * np.sin(0.5), x0 * np.sin(0.5) + y0 * np.cos(0.5), z0], atol=1e-5)


def test_child_of_two_joints(tmp_path):
    text = urdf(BASE, ARM, link("c"), joint("j", "revolute", "base", "arm"), joint("k", "revolute", "c", "arm"))
    with pytest.raises(ValueError, match="arm"):
        Robot.from_urdf(write(tmp_path, text))


def test_mimic_of_unknown_joint(tmp_path):
    text = urdf(BASE, ARM, joint("j", "revolute", "base", "arm", extra='<mimic joint="ghost"/>'))
    with pytest.raises(ValueError, match="ghost"):
        Robot.from_urdf(write(tmp_path, text))


MESH = '<collision><geometry><mesh filename="package://foo/arm.stl"/></geometry></collision>'
BOX = '<collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision>'
CYL = '<collision><geometry><cylinder radius="0.1" length="0.2"/></geometry></collision>'


@pytest.mark.parametrize("extra, kind", [(MESH, "mesh"), (BOX, "box"), (CYL, "cylinder")])
def test_non_sphere_collision_geometry(tmp_path, extra, kind):
    text = urdf(link("base", extra=extra), link("arm", extra=extra), joint("j", "revolute", "base", "arm"))
    with pytest.raises(ValueError) as info:
        Robot.from_urdf(write(tmp_path, text), spherize=False)
    msg = str(info.value)
    assert "must be spheres" in msg
    assert kind in msg and "arm" in msg
    assert "spheriz" in msg  # says how to get spheres


def test_mesh_beside_spheres_is_refused(tmp_path):
    text = urdf(BASE, link("arm", [(1, 0, 0, 0.1)], extra=MESH), joint("j", "revolute", "base", "arm"))
    with pytest.raises(ValueError, match="must be spheres"):
        Robot.from_urdf(write(tmp_path, text), spherize=False)


def test_missing_mesh_cannot_be_spherized(tmp_path):
    text = urdf(link("base", extra=MESH), link("arm", extra=MESH), joint("j", "revolute", "base", "arm"))
    with pytest.raises(FileNotFoundError, match="arm.stl"):
        Robot.from_urdf(write(tmp_path, text))


def test_builtin_mesh_urdf_is_refused_with_advice():
    mesh_urdf = sp_robots.builtin_paths("panda")[0].replace("panda_spherized.urdf", "panda.urdf")
    with pytest.raises(ValueError, match="must be spheres") as info:
        Robot.from_urdf(mesh_urdf, spherize=False)
    assert "spheriz" in str(info.value)


@pytest.mark.parametrize("radius", ["-0.1", "0", "nan", "inf"])
def test_bad_sphere_radius_in_urdf(tmp_path, radius):
    text = urdf(BASE, link("arm", extra=f'<collision><geometry><sphere radius="{radius}"/></geometry></collision>'),
                joint("j", "revolute", "base", "arm"))
    with pytest.raises(ValueError, match="radi") as info:
        Robot.from_urdf(write(tmp_path, text))
    assert "arm" in str(info.value)


@pytest.mark.parametrize("resolution", [0.0, -2.0, NAN, INF])
def test_bad_robot_resolution(tmp_path, resolution):
    with pytest.raises(ValueError, match="resolution"):
        Robot.from_urdf(write(tmp_path, good_urdf()), resolution=resolution)


# ----------------------------------------------------------------------------- big robots do not overflow anything


def test_robot_with_more_than_64_joints(isa, tmp_path):
    n = 70
    parts = [link(f"l{i}", [(0.05, 0, 0, 0.01)]) for i in range(n + 1)]
    parts += [joint(f"j{i}", "revolute", f"l{i}", f"l{i + 1}", xyz="0.05 0 0", limit=(-0.1, 0.1)) for i in range(n)]
    robot = Robot.from_urdf(write(tmp_path, urdf(*parts)))
    assert robot.dof == n
    env = Environment()
    env.add_sphere([2.6, 1.2, 0.0], 0.4)
    rng = np.random.default_rng(5)
    Q = rng.uniform(-0.1, 0.1, size=(200, n))
    Q[::7, 3] = 0.2  # some out of limits
    many = robot.is_valid_many(Q, env)
    assert [robot.is_valid(q, env) for q in Q] == many.tolist()
    assert 0 < many.mean() < 1
    for i in range(0, 40, 2):
        k = robot.motion_samples(Q[i], Q[i + 1], 4.0)
        t = np.arange(k + 1)[:, None] / k
        ref = robot.is_valid_many(Q[i] + t * (Q[i + 1] - Q[i]), env).all()
        assert robot.is_motion_valid(Q[i], Q[i + 1], env, resolution=4.0) == ref
    with pytest.raises(ValueError, match="finite"):
        q = Q[1].copy()
        q[65] = NAN
        robot.is_valid(q, env)
