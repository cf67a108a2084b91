"""simdplan.robots.spherize: the cover holds the whole mesh, the reports tell the truth, and a
spherized URDF loads with the same kinematics.

Checks here are independent of the implementation: coverage uses a surface sample with another
seed than the algorithm's, protrusion is re-measured with trimesh's own signed distance, and
forward kinematics is compared with the original URDF's description.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

trimesh = pytest.importorskip("trimesh")

from simdplan import cli  # noqa: E402
from simdplan.robots import DATA_DIR, Robot  # noqa: E402
from simdplan.robots.description import read_urdf  # noqa: E402
from simdplan.robots.spherize import spherize_mesh  # noqa: E402
from simdplan.robots.spherize_urdf import cached_spherized_urdf, spherize_urdf  # noqa: E402

PANDA_URDF = os.path.join(DATA_DIR, "panda", "panda.urdf")
PANDA_SRDF = os.path.join(DATA_DIR, "panda", "panda.srdf")
PANDA_MESHES = os.path.join(DATA_DIR, "panda", "meshes", "collision")


def panda_mesh(name: str):
    m = trimesh.load(os.path.join(PANDA_MESHES, name), force="mesh")
    m.merge_vertices(merge_tex=True, merge_norm=True)  # the OBJ splits vertices by normal
    return m


def l_shape():
    from shapely.geometry import Polygon

    return trimesh.creation.extrude_polygon(Polygon([(0, 0), (0.12, 0), (0.12, 0.04), (0.04, 0.04), (0.04, 0.1),
                                                     (0, 0.1)]), 0.03)


MESHES = {
    "cube": lambda: trimesh.creation.box([0.1, 0.1, 0.1]),
    "cylinder": lambda: trimesh.creation.cylinder(radius=0.04, height=0.2),
    "panda_link1": lambda: panda_mesh("link1.obj"),
    "panda_hand": lambda: panda_mesh("hand.obj"),
    "l_shape": l_shape,
    "torus": lambda: trimesh.creation.torus(0.08, 0.025),
}


def inside_union(points: np.ndarray, spheres: np.ndarray) -> np.ndarray:
    d = np.linalg.norm(points[:, None, :] - spheres[None, :, :3], axis=2)
    return (d <= spheres[None, :, 3]).any(axis=1)


def measured_protrusion(mesh, spheres: np.ndarray, per_sphere: int = 300) -> float:
    """Largest distance outside ``mesh`` of random points on the sphere surfaces (trimesh's signed
    distance: positive inside)."""
    rng = np.random.default_rng(7)
    dirs = rng.normal(size=(per_sphere, 3))
    dirs /= np.linalg.norm(dirs, axis=1, keepdims=True)
    pts = (spheres[:, None, :3] + spheres[:, None, 3:] * dirs[None]).reshape(-1, 3)
    return float(max(0.0, -trimesh.proximity.signed_distance(mesh, pts).min()))


# ----------------------------------------------------------------------------- spherize_mesh
@pytest.mark.parametrize("name", list(MESHES))
def test_cover_holds_vertices_and_independent_samples(name):
    mesh = MESHES[name]()
    assert mesh.is_volume
    res = spherize_mesh(mesh, max_spheres=24, tolerance=0.01)
    assert 1 <= res.n_spheres <= 24 and res.spheres.shape == (res.n_spheres, 4)
    assert res.coverage == 1.0 and res.proxy == "mesh"
    assert inside_union(np.asarray(mesh.vertices), res.spheres).all()
    sample = trimesh.sample.sample_surface(mesh, 20_000, seed=12345)[0]  # not the algorithm's seed
    assert inside_union(sample, res.spheres).all()
    # The reported protrusion agrees with an independent measurement: never above the certified
    # bound, and within the sampling error of the reported measurement.
    independent = measured_protrusion(mesh, res.spheres)
    assert independent <= res.protrusion_bound + 1e-6
    assert res.max_protrusion <= res.protrusion_bound + 1e-6
    assert abs(independent - res.max_protrusion) <= 0.003 + 0.1 * res.max_protrusion
    if not res.budget_exceeded:
        assert res.protrusion_bound <= res.tolerance_used + 2e-6
    assert res.volume_overhead > 1.0


def test_protrusion_within_tolerance_when_the_budget_allows():
    mesh = trimesh.creation.cylinder(radius=0.04, height=0.1)
    res = spherize_mesh(mesh, max_spheres=200, tolerance=0.02)
    assert not res.budget_exceeded and res.tolerance_used == 0.02
    assert res.protrusion_bound <= 0.02 + 2e-6
    assert measured_protrusion(mesh, res.spheres) <= 0.02 + 2e-6


def test_too_few_spheres_still_cover():
    mesh = l_shape()
    res = spherize_mesh(mesh, max_spheres=1, tolerance=0.005)
    assert res.n_spheres == 1 and res.budget_exceeded and res.coverage == 1.0
    assert inside_union(trimesh.sample.sample_surface(mesh, 5000, seed=99)[0], res.spheres).all()
    assert res.protrusion_bound > 0.005


def test_deterministic():
    a = spherize_mesh(panda_mesh("finger.obj"))
    b = spherize_mesh(panda_mesh("finger.obj"))
    np.testing.assert_array_equal(a.spheres, b.spheres)
    assert a.report()["n_spheres"] == a.n_spheres


def test_open_mesh_uses_the_convex_hull():
    box = trimesh.creation.box([0.08, 0.05, 0.05])
    open_box = trimesh.Trimesh(box.vertices, box.faces[2:], process=False)  # one side missing
    assert not open_box.is_watertight
    res = spherize_mesh(open_box, max_spheres=16, tolerance=0.01)
    assert res.proxy == "convex_hull" and res.coverage == 1.0
    assert inside_union(trimesh.sample.sample_surface(open_box, 5000, seed=3)[0], res.spheres).all()


def test_flat_and_tiny_meshes():
    square = trimesh.Trimesh([[0, 0, 0], [0.1, 0, 0], [0.1, 0.1, 0], [0, 0.1, 0]], [[0, 1, 2], [0, 2, 3]])
    res = spherize_mesh(square, max_spheres=64, tolerance=0.03)
    assert res.proxy == "surface" and res.volume_overhead is None and res.coverage == 1.0
    assert inside_union(trimesh.sample.sample_surface(square, 5000, seed=4)[0], res.spheres).all()
    assert not res.budget_exceeded and res.protrusion_bound <= res.tolerance_used + 2e-6
    tiny = trimesh.creation.box([0.001, 0.002, 0.001])
    res = spherize_mesh(tiny, tolerance=0.005)
    assert res.n_spheres == 1 and res.coverage == 1.0
    assert inside_union(np.asarray(tiny.vertices), res.spheres).all()


@pytest.mark.parametrize("kwargs", [dict(max_spheres=0), dict(max_spheres=2.5), dict(tolerance=0.0),
                                    dict(tolerance=float("nan")), dict(samples=-1)])
def test_bad_parameters(kwargs):
    with pytest.raises(ValueError):
        spherize_mesh(trimesh.creation.box([0.1, 0.1, 0.1]), **kwargs)


def test_bad_meshes():
    with pytest.raises(ValueError, match="no vertices"):
        spherize_mesh(trimesh.Trimesh())
    with pytest.raises(ValueError, match="non-finite"):
        spherize_mesh(trimesh.Trimesh([[0, 0, 0], [1, 0, 0], [np.nan, 1, 0]], [[0, 1, 2]], process=False))


# ----------------------------------------------------------------------------- URDF
@pytest.fixture(scope="module")
def panda_spherized(tmp_path_factory):
    out = tmp_path_factory.mktemp("panda") / "panda_spherized.urdf"
    reports = spherize_urdf(PANDA_URDF, out, max_spheres_per_link=16, tolerance=0.02)
    return out, reports


def _strip_collisions(path):
    desc = read_urdf(path)
    for link in desc.links.values():
        link.other_geometry = []
    return desc


def test_panda_spherized_loads_with_the_same_kinematics(panda_spherized):
    out, reports = panda_spherized
    robot = Robot.from_urdf(out, PANDA_SRDF)
    original = Robot(_strip_collisions(PANDA_URDF))  # the mesh URDF's kinematics, no geometry
    assert robot.joint_names == original.joint_names
    np.testing.assert_array_equal(robot.lower, original.lower)
    np.testing.assert_array_equal(robot.upper, original.upper)
    new, old = read_urdf(out), read_urdf(PANDA_URDF)
    assert [(j.name, j.type, j.parent, j.child, j.mimic) for j in new.joints] == \
        [(j.name, j.type, j.parent, j.child, j.mimic) for j in old.joints]
    rng = np.random.default_rng(1)
    for q in rng.uniform(robot.lower, robot.upper, size=(5, robot.dof)):
        a, b = robot.link_poses(q), original.link_poses(q)
        assert set(a) == set(b)
        for name in a:
            np.testing.assert_allclose(a[name], b[name], atol=1e-5)
    assert robot.is_valid(np.clip(np.zeros(robot.dof), robot.lower, robot.upper)) in (True, False)
    # Every link with a collision mesh got spheres, and its mesh lies inside them.
    for name, link in old.links.items():
        assert (name in reports) == bool(link.collision_meshes)
        for ref in link.collision_meshes:
            m = trimesh.load(ref.path, force="mesh")
            m.apply_scale(ref.scale)
            m.apply_transform(ref.origin)  # the right finger's mesh is turned about z
            pts = np.concatenate([m.vertices, trimesh.sample.sample_surface(m, 3000, seed=11)[0]])
            assert inside_union(pts, new.links[name].spheres).all(), name
            assert reports[name]["coverage"] == 1.0
            assert len(new.links[name].spheres) == reports[name]["n_spheres"] <= 16


def test_panda_spherized_keeps_everything_else(panda_spherized):
    out, _ = panda_spherized
    src, dst = ET.parse(PANDA_URDF).getroot(), ET.parse(out).getroot()
    for tag in ("link", "joint", "inertial", "limit", "mimic", "visual", "axis", "dynamics"):
        assert len(src.findall(f".//{tag}")) == len(dst.findall(f".//{tag}")), tag
    assert not dst.findall(".//collision/geometry/mesh")
    for link in read_urdf(out).links.values():  # visual meshes still resolve from the new folder
        for ref in link.visual_meshes:
            assert os.path.isfile(ref.path), ref.path


def test_primitives_and_origins(tmp_path):
    """Box (rotated origin), cylinder, scaled mesh and a kept sphere, all in the link frame."""
    mesh_file = tmp_path / "part.stl"
    trimesh.creation.box([0.02, 0.02, 0.02]).export(mesh_file)
    text = f"""<?xml version="1.0"?>
<robot name="prims">
  <link name="base">
    <collision><origin xyz="0.1 0 0.05" rpy="0.3 -0.2 0.9"/>
      <geometry><box size="0.1 0.04 0.06"/></geometry></collision>
    <collision><origin xyz="0 0.2 0" rpy="1.5708 0 0"/><geometry><cylinder radius="0.03" length="0.12"/></geometry></collision>
  </link>
  <link name="arm">
    <visual><geometry><mesh filename="part.stl"/></geometry></visual>
    <collision><origin xyz="0 0 0.3"/><geometry><mesh filename="part.stl" scale="2 1 3"/></geometry></collision>
    <collision><origin xyz="0.05 0 0"/><geometry><sphere radius="0.025"/></geometry></collision>
  </link>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>"""
    urdf = tmp_path / "prims.urdf"
    urdf.write_text(text)
    (tmp_path / "out").mkdir()
    out = tmp_path / "out" / "prims_spherized.urdf"
    reports = spherize_urdf(urdf, out, max_spheres_per_link=20, tolerance=0.01)
    assert set(reports) == {"base", "arm"}
    new = read_urdf(out)
    import yourdfpy

    ref = yourdfpy.URDF.load(str(urdf), build_scene_graph=False, load_meshes=False, load_collision_meshes=False)
    for link in ref.robot.links:
        spheres = new.links[link.name].spheres
        for col in link.collisions:
            T = np.eye(4) if col.origin is None else np.asarray(col.origin)  # yourdfpy's rpy, not ours
            g = col.geometry
            if g.sphere is not None:  # kept exactly
                assert any(np.allclose(s, [*T[:3, 3], g.sphere.radius]) for s in spheres)
                continue
            if g.box is not None:
                m = trimesh.creation.box(g.box.size)
            elif g.cylinder is not None:
                m = trimesh.creation.cylinder(g.cylinder.radius, g.cylinder.length, sections=256)
            else:
                m = trimesh.load(mesh_file, force="mesh")
                m.apply_scale(g.mesh.scale)
            m.apply_transform(T)
            pts = np.concatenate([m.vertices, trimesh.sample.sample_surface(m, 4000, seed=5)[0]])
            # A finer cylinder than the algorithm's bulges between its facets by < 0.1 mm.
            d = np.linalg.norm(pts[:, None] - spheres[None, :, :3], axis=2) - spheres[None, :, 3]
            assert d.min(axis=1).max() <= (1e-4 if g.cylinder is not None else 0.0)
    assert os.path.isfile(new.links["arm"].visual_meshes[0].path)
    robot = Robot.from_urdf(out)
    assert robot.joint_names == ["j"] and robot.n_spheres == sum(r["n_spheres"] for r in reports.values())


def test_urdf_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        spherize_urdf(tmp_path / "missing.urdf", tmp_path / "o.urdf")
    bad = tmp_path / "bad.urdf"
    bad.write_text("<robot name='x'><link name='a'>")
    with pytest.raises(ValueError, match="well-formed"):
        spherize_urdf(bad, tmp_path / "o.urdf")
    empty = tmp_path / "empty.urdf"
    empty.write_text("<robot name='x'><link name='a'/></robot>")
    with pytest.raises(ValueError, match="no link has collision geometry"):
        spherize_urdf(empty, tmp_path / "o.urdf")
    nomesh = tmp_path / "nomesh.urdf"
    nomesh.write_text("<robot name='x'><link name='a'><collision><geometry><mesh filename='gone.stl'/></geometry>"
                      "</collision></link></robot>")
    with pytest.raises(FileNotFoundError, match="gone.stl"):
        spherize_urdf(nomesh, tmp_path / "o.urdf")
    assert not (tmp_path / "o.urdf").exists()


def _small_urdf(tmp_path) -> str:
    path = tmp_path / "small.urdf"
    path.write_text("""<?xml version="1.0"?><robot name="small">
  <link name="base"><collision><geometry><box size="0.1 0.1 0.05"/></geometry></collision></link>
  <link name="arm"><collision><origin xyz="0 0 0.1"/><geometry><cylinder radius="0.02" length="0.2"/></geometry>
  </collision></link>
  <joint name="j" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
</robot>""")
    return str(path)


def test_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("SIMDPLAN_CACHE_DIR", str(tmp_path / "cache"))
    urdf = _small_urdf(tmp_path)
    a = cached_spherized_urdf(urdf, tolerance=0.02)
    assert os.path.dirname(a) == str(tmp_path / "cache") and os.path.isfile(a[:-5] + ".json")
    stamp = os.stat(a).st_mtime_ns
    assert cached_spherized_urdf(urdf, tolerance=0.02) == a and os.stat(a).st_mtime_ns == stamp
    b = cached_spherized_urdf(urdf, tolerance=0.03)
    assert b != a
    Robot.from_urdf(b)


# ----------------------------------------------------------------------------- CLI
def test_cli_subprocess(tmp_path):
    urdf = _small_urdf(tmp_path)
    out = tmp_path / "small_spherized.urdf"
    proc = subprocess.run([sys.executable, "-m", "simdplan", "spherize", urdf, "-o", str(out),
                           "--max-spheres-per-link", "12", "--tolerance", "0.015"],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))
    assert proc.returncode == 0, proc.stderr
    for word in ("base", "arm", "protrusion", "overhead", "coverage", "1.000"):
        assert word in proc.stdout
    robot = Robot.from_urdf(out)
    assert robot.joint_names == ["j"] and robot.n_spheres <= 24


@pytest.mark.parametrize("case", ["missing", "malformed", "no_collision", "no_out_dir", "out_is_dir",
                                  "same_file", "bad_tolerance", "bad_count"])
def test_cli_errors(tmp_path, capsys, case):
    urdf = _small_urdf(tmp_path)
    out = str(tmp_path / "o.urdf")
    extra = []
    if case == "missing":
        urdf = str(tmp_path / "nope.urdf")
    elif case == "malformed":
        (tmp_path / "m.urdf").write_text("<robot")
        urdf = str(tmp_path / "m.urdf")
    elif case == "no_collision":
        (tmp_path / "e.urdf").write_text("<robot name='e'><link name='a'/></robot>")
        urdf = str(tmp_path / "e.urdf")
    elif case == "no_out_dir":
        out = str(tmp_path / "nodir" / "o.urdf")
    elif case == "out_is_dir":
        out = str(tmp_path)
    elif case == "same_file":
        out = urdf
    elif case == "bad_tolerance":
        extra = ["--tolerance", "-1"]
    elif case == "bad_count":
        extra = ["--max-spheres-per-link", "0"]
    assert cli.main(["spherize", urdf, "-o", out, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err and "\n" not in err and "Traceback" not in err
    assert not os.path.exists(str(tmp_path / "o.urdf"))
