"""What a new user meets first: the shipped examples and the README snippet work as shown, and
mistakes (a huge point cloud, a string for a number, a wrong file, absurd joint values or limits,
a bad SIMDPLAN_ISA) get a clear message where they are made, not a failure much later.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import simdplan
from simdplan import Environment, Robot, cli, scenes
from simdplan.collision import pointcloud as pc
from simdplan.robots import RobotBuilder

REPO = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------- point clouds at add time
def test_far_point_is_refused_when_the_cloud_is_added():
    env = Environment()
    with pytest.raises(ValueError, match=r"row 1 .*magnitude 1e\+30.*1e\+12"):
        env.add_pointcloud([[0.5, 0.0, 0.5], [0.0, 0.0, 1e30]])
    # beyond float32's range: still named as too large, not as a NaN/inf the user never wrote
    with pytest.raises(ValueError, match="magnitude 1e\\+39"):
        env.add_pointcloud(np.array([[0.0, 0.0, 1e39]]))
    assert len(env) == 0


def test_cloud_larger_than_the_tree_can_hold_is_refused_at_once():
    # a broadcast view: the size check comes before any copy of the 2^27 + 1 rows
    huge = np.broadcast_to(np.zeros(3), (pc.CAPT_MAX_STORED + 1, 3))
    env = Environment()
    with pytest.raises(ValueError, match=r"134,217,729 points.*thin it first.*filter_pointcloud"):
        env.add_pointcloud(huge)
    assert len(env) == 0


def test_large_cloud_warns_with_the_thinning_advice():
    points = np.random.default_rng(0).uniform(-1.0, 1.0, (pc.CAPT_LARGE_CLOUD + 1, 3))
    env = Environment()
    with pytest.warns(UserWarning, match="filter_pointcloud"):
        env.add_pointcloud(points)
    assert len(env) == 1


def test_cloud_limits_are_the_core_limits():
    source = "".join(f.read_text() for f in sorted((REPO / "cpp" / "src" / "capt").glob("*.cc")))
    stored = re.search(r"kMaxAfforded = int64_t\(1\) << (\d+);", source)
    coord = re.search(r"kMaxAbs = ([0-9.e+]+);", source)
    assert stored and coord
    assert pc.CAPT_MAX_STORED == 2 ** int(stored.group(1))
    assert pc.MAX_COORDINATE == float(coord.group(1))


# ----------------------------------------------------------------------------- shipped examples, README
@pytest.mark.parametrize("name", scenes.examples())
def test_every_example_verifies_at_its_default_settings(name, capsys):
    code = cli.main(["plan", name])
    text = capsys.readouterr()
    assert code == 0, text.err
    verified = text.out.split("verified:")[1].splitlines()[0].strip()
    assert verified.startswith("yes"), verified
    assert "warning" not in text.err, text.err


def _readme_python() -> str:
    blocks = re.findall(r"```python\n(.*?)```", (REPO / "README.md").read_text(), flags=re.S)
    assert len(blocks) == 1
    return blocks[0]


def _available(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def test_readme_snippet_runs_and_its_q_is_valid(tmp_path, monkeypatch):
    lines = _readme_python().splitlines()
    # the optional extras the snippet marks with `pip install`: dropped where they are missing
    if not _available("ompl"):
        lines = [ln for ln in lines if "ompl:" not in ln]
    if not _available("coal"):
        lines = [ln for ln in lines if "verify_path" not in ln and not ln.lstrip().startswith("# hulls")]
    monkeypatch.chdir(tmp_path)  # the snippet saves path.json
    namespace: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile("\n".join(lines), "README.md", "exec"), namespace)
    robot, q, env = namespace["robot"], namespace["q"], namespace["env"]
    assert robot.is_valid(q) is True  # no self-collision
    assert robot.is_valid(q, env) is True
    assert robot.why_invalid(q, env) == []
    assert printed.getvalue() == ""  # the why_invalid loop had nothing to say
    assert (tmp_path / "path.json").exists()


# ----------------------------------------------------------------------------- Environment input
def test_remove_takes_an_int_id():
    env = Environment()
    first = env.add_sphere([0, 0, 0], 0.1)
    second = env.add_sphere([1, 0, 0], 0.1)
    assert (first, second) == (0, 1)
    with pytest.raises(TypeError, match="must be an int.*str '0'"):
        env.remove("0")
    with pytest.raises(TypeError, match="must be an int.*bool True"):
        env.remove(True)
    assert len(env) == 2  # neither call removed anything
    env.remove(np.int64(first))  # a NumPy integer is an int
    assert [o.id for o in env] == [second]


@pytest.mark.parametrize("add", [
    lambda env: env.add_sphere([0, 0, 0], radius="0.1"),
    lambda env: env.add_sphere(["0", "0", "0"], 0.1),
    lambda env: env.add_capsule([0, 0, 0], radius="0.1", length=0.2),
    lambda env: env.add_capsule([0, 0, 0], radius=0.1, length="0.2"),
    lambda env: env.add_cylinder([0, 0, 0], radius=0.1, length="0.2"),
    lambda env: env.add_cylinder([0, 0, "0"], radius=0.1, length=0.2),
    lambda env: env.add_box([0, 0, 0], half_extents=["0.1", 0.1, 0.1]),
    lambda env: env.add_box([0, 0, 0], quat=["0", "0", "0", "1"], half_extents=[0.1, 0.1, 0.1]),
    lambda env: env.add_plane([0, 0, 1], "0.5"),
    lambda env: env.add_pointcloud([[0, 0, 0]], point_radius="0.01"),
    lambda env: env.add_pointcloud([[0, 0, 0]], r_max="0.1"),
    lambda env: env.add_mesh((np.eye(3), np.array([[0, 1, 2]])), scale="2"),
], ids=["sphere radius", "sphere center", "capsule radius", "capsule length", "cylinder length",
        "cylinder position", "box half_extents", "box quat", "plane offset", "point_radius", "r_max", "mesh scale"])
def test_numbers_given_as_text_are_refused(add):
    env = Environment()
    with pytest.raises(TypeError, match="not text"):
        add(env)
    assert len(env) == 0


def test_mesh_path_that_is_not_a_mesh_file_says_what_it_is(tmp_path):
    env = Environment()
    with pytest.raises(IsADirectoryError, match="is a directory"):
        env.add_mesh(str(tmp_path))
    if os.path.exists("/dev/null"):
        with pytest.raises(ValueError, match="not a regular file"):
            env.add_mesh("/dev/null")
    empty = tmp_path / "empty.stl"
    empty.write_bytes(b"")
    with pytest.raises(ValueError, match="is empty"):
        env.add_mesh(empty)
    with pytest.raises(FileNotFoundError, match="not found"):
        env.add_mesh(tmp_path / "missing.stl")
    assert len(env) == 0


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads any file")
def test_unreadable_mesh_file(tmp_path):
    path = tmp_path / "locked.stl"
    path.write_text("solid x\nendsolid x\n")
    path.chmod(0)
    with pytest.raises(PermissionError, match="cannot be read"):
        Environment().add_mesh(path)


def test_attach_a_file_that_is_not_a_mesh(tmp_path):
    robot = simdplan.robots.load("panda")
    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n")
    for path in [text] + ([Path("/etc/passwd")] if os.path.exists("/etc/passwd") else []):
        with pytest.raises(ValueError, match=re.escape(str(path)) + ".*supported: .*stl"):
            robot.attach("panda_hand", mesh=str(path))


# ----------------------------------------------------------------------------- robots
def _arm() -> RobotBuilder:
    b = RobotBuilder("arm")
    b.link("base", spheres=[[0, 0, 0.05, 0.06]])
    b.link("upper", spheres=[[0.2, 0, 0, 0.04]])
    b.joint("j1", "revolute", "base", "upper", xyz=[0, 0, 0.1], axis=[0, 0, 1], limits=(-3, 3))
    return b


def test_builder_refuses_a_robot_without_an_active_joint():
    assert _arm().build().dof == 1
    with pytest.raises(ValueError, match="no active joint.*at least one.*'j1'"):
        _arm().build(joints=[], fixed_joint_values={"j1": 0.5})
    static = RobotBuilder("post")
    static.link("base", spheres=[[0, 0, 0.5, 0.1]])
    with pytest.raises(ValueError, match="no active joint.*add a revolute"):
        static.build()


def _limits_urdf(tmp_path, lower: str, upper: str, jtype: str = "revolute") -> Path:
    path = tmp_path / "limits.urdf"
    path.write_text(f"""<robot name="limits">
  <link name="base"><collision><geometry><sphere radius="0.1"/></geometry></collision></link>
  <link name="a"><collision><origin xyz="0.5 0 0"/><geometry><sphere radius="0.1"/></geometry></collision></link>
  <joint name="j" type="{jtype}"><parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="{lower}" upper="{upper}"/></joint>
</robot>""")
    return path


@pytest.mark.parametrize("jtype", ["revolute", "prismatic"])
@pytest.mark.parametrize("bound", ["1e20", "1e300"])
def test_absurd_urdf_limits_are_refused_without_numpy_warnings(tmp_path, jtype, bound):
    path = _limits_urdf(tmp_path, "-" + bound, bound, jtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow RuntimeWarning would fail here
        with pytest.raises(ValueError, match=r"joint 'j' has limits .* beyond \+-10000"):
            Robot.from_urdf(path)
    with pytest.raises(ValueError, match="beyond"):
        RobotBuilder("b").link("base").link("a", [[0, 0, 0, 0.1]]).joint(
            "j", jtype, "base", "a", limits=(-float(bound), float(bound)))
    assert Robot.from_urdf(_limits_urdf(tmp_path, "-1e4", "1e4", jtype)).dof == 1  # the bound itself is fine


def _continuous_arm() -> Robot:
    b = RobotBuilder("turntable")
    b.link("base", spheres=[[0, 0, 0, 0.05]])
    b.link("arm", spheres=[[0.5, 0, 0, 0.1]])
    b.link("tip", spheres=[[0.3, 0, 0, 0.05]])
    b.joint("spin", "continuous", "base", "arm", axis=[0, 0, 1])
    b.joint("elbow", "revolute", "arm", "tip", xyz=[0.5, 0, 0], axis=[0, 0, 1], limits=(-2, 2))
    return b.build()


def test_absurd_continuous_joint_value_names_the_joint():
    robot = _continuous_arm()
    robot.check_joint_values([4.0, 0.5])  # beyond pi is fine: it wraps
    with pytest.raises(ValueError, match=r"start: joint 'spin' \(continuous\) = 1e\+300 is beyond"):
        robot.check_joint_values([1e300, 0.5], "start")
    with pytest.raises(ValueError, match=r"goals row 1: joint 'elbow' \(revolute\) = inf is not finite"):
        robot.check_joint_values([[0.0, 0.0], [0.0, np.inf]], "goals")


def _continuous_scene(tmp_path, start_spin: str) -> Path:
    urdf = tmp_path / "turntable.urdf"
    urdf.write_text("""<robot name="turntable">
  <link name="base"><collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <link name="arm"><collision><origin xyz="0.5 0 0"/><geometry><sphere radius="0.1"/></geometry></collision></link>
  <link name="tip"><collision><origin xyz="0.3 0 0"/><geometry><sphere radius="0.05"/></geometry></collision></link>
  <joint name="spin" type="continuous"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/></joint>
  <joint name="elbow" type="revolute"><parent link="arm"/><child link="tip"/><origin xyz="0.5 0 0"/>
    <axis xyz="0 0 1"/><limit lower="-2" upper="2"/></joint>
</robot>""")
    scene = tmp_path / "turntable.yaml"
    scene.write_text(f"robot: {{urdf: {urdf}}}\nobstacles:\n  - {{type: sphere, position: [0, 0.8, 0], radius: 0.2}}\n"
                     f"start: [{start_spin}, 0.0]\ngoal: [0.0, 1.0]\n")
    return scene


def test_cli_names_the_continuous_joint_of_an_absurd_start(tmp_path, capsys):
    code = cli.main(["plan", str(_continuous_scene(tmp_path, "1.0e+300"))])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "start" in err and "'spin' (continuous)" in err and "beyond" in err


def test_cli_verifies_a_path_from_a_continuous_joint_beyond_pi(tmp_path, capsys):
    code = cli.main(["plan", str(_continuous_scene(tmp_path, "4.0"))])
    text = capsys.readouterr()
    assert code == 0, text.err
    assert text.out.split("verified:")[1].split()[0] == "yes", text.out
    assert "warning" not in text.err


# ----------------------------------------------------------------------------- the command's messages
def test_cli_prints_each_warning_as_one_line(tmp_path, capsys):
    scene = _continuous_scene(tmp_path, "0.5")
    srdf = tmp_path / "turntable.srdf"  # names a link the URDF lacks: a UserWarning while loading
    srdf.write_text('<robot name="turntable"><disable_collisions link1="base" link2="gripper"/></robot>')
    text = scene.read_text().replace("robot: {urdf: ", f"robot: {{srdf: {srdf}, urdf: ")
    scene.write_text(text)
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        code = cli.main(["plan", str(scene)])
    err = capsys.readouterr().err
    assert code == 0, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("simdplan: warning: ") and "disable_collisions names links not in the URDF" in lines[0]
    assert "gripper" in lines[0] and "UserWarning" not in err and "warnings.warn" not in err
    # outside the command the library warns the Python way again
    assert warnings.showwarning is warnings._showwarning_orig


def test_info_prints_the_cpu_once(capsys):
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert len([ln for ln in out.splitlines() if ln.startswith("cpu")]) == 1, out


def _with_isa(value: str, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, SIMDPLAN_ISA=value)
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env, timeout=120)


def test_bad_isa_is_a_one_line_user_error_of_the_command():
    proc = _with_isa("bogus", "-m", "simdplan", "info")
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("simdplan: SIMDPLAN_ISA='bogus'"), proc.stderr
    for name in simdplan.available_isas():
        assert name in lines[0]
    # importing the library still fails loudly: a forced level is never silently replaced
    lib = _with_isa("bogus", "-c", "import simdplan")
    last = lib.stderr.strip().splitlines()[-1]
    assert lib.returncode != 0 and last.startswith("ImportError") and "valid values" in last
