"""Scene files at the edges: nesting and size limits, the two YAML parsers, and fuzzing.

Whatever a scene file holds, ``simdplan.scenes.load`` either returns a Scene or raises what it
documents (SceneError naming the file; FileNotFoundError for a missing URDF/SRDF), quickly.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import simdplan
import simdplan.scenes as sc
from simdplan import cli
from simdplan.scenes import SceneError
from simdplan.scenes import scene as scene_module

VALID = {
    "robot": "panda",
    "obstacles": [{"type": "box", "position": [0.6, 0.0, 0.1], "half_extents": [0.2, 0.4, 0.1]}],
    "start": [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785],
    "goal": [0.5, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7],
}
YAML_HEAD = "robot: panda\nstart: [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]\ngoal: [0.5, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7]\n"
LOADERS = ["libyaml", "python"] if scene_module.LibYamlLoader is not None else ["python"]


@pytest.fixture(params=LOADERS)
def yaml_loader(request, monkeypatch):
    """Runs a test with libyaml's parser (where PyYAML has it) and with PyYAML's pure-Python one."""
    chosen = scene_module.LibYamlLoader if request.param == "libyaml" else scene_module.PyYamlLoader
    monkeypatch.setattr(scene_module, "YamlLoader", chosen)
    return request.param


def scene_error(path, *words) -> SceneError:
    """The SceneError loading ``path`` raises; it names the file and contains ``words``."""
    with pytest.raises(SceneError) as info:
        sc.load(path)
    message = str(info.value)
    assert message.startswith(f"{path}: "), message
    for word in words:
        assert word in message, message
    return info.value


def deep_json(levels: int) -> str:
    return '{"robot": "panda", "start": ' + "[" * levels + "]" * levels + "}"


# ----------------------------------------------------------------------------- nesting


def test_shipped_scenes_and_mbm_file_are_well_inside_the_nesting_limit():
    """The limit leaves room: real files nest at most 7 deep (the MotionBenchMaker file)."""
    def height(value):
        tallest, stack = 0, [(value, 1)]
        while stack:
            v, depth = stack.pop()
            if isinstance(v, (dict, list)):
                tallest = max(tallest, depth)
                stack.extend((c, depth + 1) for c in (v.values() if isinstance(v, dict) else v))
        return tallest

    files = [sc.example(n) for n in sc.examples()] + [sc.mbm.DEFAULT_PATH]
    heights = {os.path.basename(f): height(scene_module.read_data(f)) for f in files}
    assert max(heights.values()) <= 7 < scene_module.MAX_NESTING, heights


def test_json_100000_levels_deep_is_a_scene_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text(deep_json(100_000))
    scene_error(path, f"nested more than {scene_module.MAX_NESTING} levels deep at line 1, column 60",
                "point clouds", "file:")


def test_yaml_5000_levels_deep_is_a_scene_error(tmp_path, yaml_loader):
    flow = tmp_path / "flow.yaml"
    flow.write_text("robot: panda\nstart: " + "[" * 5000 + "]" * 5000 + "\n")
    scene_error(flow, "nested more than 32 levels deep at line 2, column 39", "point clouds")
    block = tmp_path / "block.yaml"
    block.write_text("".join(" " * i + "k:\n" for i in range(1000)) + " " * 1000 + "v\n")
    scene_error(block, "nested more than 32 levels deep at line 33, column 33")


def test_yaml_a_million_levels_deep_neither_crashes_nor_hangs(tmp_path):
    """libyaml's composer recurses in C: a million levels overran the stack (a segfault) before the
    nesting was checked first. In a subprocess, so a crash cannot take pytest with it."""
    path = tmp_path / "deeper.yaml"
    path.write_text("robot: panda\nstart: " + "[" * 1_000_000 + "]" * 1_000_000 + "\n")
    proc = subprocess.run([sys.executable, "-m", "simdplan", "plan", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2 and "nested more than 32 levels deep" in proc.stderr, (proc.returncode, proc.stderr)


@pytest.mark.parametrize("ext", ["json", "yaml"])
def test_nesting_up_to_the_limit_parses_and_one_more_level_does_not(tmp_path, ext, yaml_loader):
    limit = scene_module.MAX_NESTING
    for levels, ok in ((limit, True), (limit + 1, False)):
        path = str(tmp_path / f"n{levels}.{ext}")
        with open(path, "w") as f:  # a mapping, then lists: `levels` collections in all
            f.write('{"a": ' + "[" * (levels - 1) + "]" * (levels - 1) + "}")
        if ok:
            assert isinstance(scene_module.read_data(path), dict)
        else:
            with pytest.raises(SceneError, match=f"nested more than {limit} levels deep"):
                scene_module.read_data(path)


def test_json_brackets_inside_strings_do_not_count(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**VALID, "description": "[" * 1000 + '\\"{' * 100}))
    assert sc.load(path).description.startswith("[[[")


def test_yaml_nesting_brought_in_by_aliases_counts(tmp_path, yaml_loader):
    """Each anchor wraps the one before, so the data nests 40 deep though no line does."""
    lines = ["a0: &a0 [1]"] + [f"a{i}: &a{i} [*a{i - 1}]" for i in range(1, 40)]
    path = tmp_path / "alias.yaml"
    path.write_text(YAML_HEAD + "\n".join(lines) + "\n")
    scene_error(path, "nested more than 32 levels deep at line 35, column 12")
    shallow = tmp_path / "shallow.yaml"  # an alias that stays shallow is fine
    shallow.write_text(YAML_HEAD.replace("goal:", "goals: [*s]\nx:").replace("start: [", "start: &s ["))
    with pytest.raises(SceneError, match="unknown key"):  # x: is reported, nothing about nesting
        sc.load(shallow)


def test_yaml_alias_inside_its_own_anchor_is_a_scene_error(tmp_path, yaml_loader):
    """PyYAML builds a list that contains itself, which nests without end."""
    path = tmp_path / "loop.yaml"
    path.write_text(YAML_HEAD + "obstacles: &o [*o]\n")
    scene_error(path, "line 4, column 16: alias *o refers to a collection that contains it")


def test_cli_reports_deep_files_as_bad_input(tmp_path, capsys):
    """Exit 2 (bad input) with the message, not 1 (no path found) with a RecursionError."""
    for name, text in (("deep.json", deep_json(100_000)),
                       ("deep.yaml", "robot: panda\nstart: " + "[" * 5000 + "]" * 5000 + "\n")):
        path = tmp_path / name
        path.write_text(text)
        assert cli.main(["plan", str(path)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"simdplan: {path}: nested more than 32 levels deep") and "Traceback" not in err, err


# ----------------------------------------------------------------------------- size


def test_yaml_over_the_size_limit_is_refused_before_parsing(tmp_path):
    """A YAML file just over the limit: refused at once (it took 15 s and 280 MB to parse 4 MB before)."""
    limit = scene_module.MAX_YAML_BYTES
    row = "  - [0.12345678901234, -0.2345678901234, 0.345678901234]\n"
    path = tmp_path / "big.yaml"
    text = YAML_HEAD + "obstacles:\n- type: convex\n  points:\n"
    path.write_text(text + row * ((limit - len(text)) // len(row) + 1))
    t0 = time.perf_counter()
    scene_error(path, f"more than the 4 MB ({limit:,} bytes) a YAML scene file may have",
                ".npy/.ply/.obj files", "write the scene as JSON (up to 64 MB)")
    assert time.perf_counter() - t0 < 5  # generous: the refusal reads the file, no parsing


def test_json_over_the_size_limit_is_refused(tmp_path):
    path = tmp_path / "big.json"
    with open(path, "wb") as f:
        f.truncate(scene_module.MAX_JSON_BYTES + 1)  # sparse: nothing written
    scene_error(path, f"the file has {scene_module.MAX_JSON_BYTES + 1:,} bytes", "64 MB", "a JSON scene file")


def test_cli_reports_a_too_big_file_as_bad_input(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text(YAML_HEAD + "#" * scene_module.MAX_YAML_BYTES + "\n")
    proc = subprocess.run([sys.executable, "-m", "simdplan", "plan", str(path)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "more than the 4 MB" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_json_under_its_limit_but_over_the_yaml_limit_loads(tmp_path):
    """JSON parses in C, so it may be larger: a 5 MB inline hull loads."""
    rng = np.random.default_rng(0)
    data = {**VALID, "obstacles": [{"type": "convex", "points": rng.uniform(-1, 1, (90_000, 3)).tolist(),
                                    "position": [3.0, 3.0, 3.0]}]}
    path = tmp_path / "hull.json"
    path.write_text(json.dumps(data))
    assert scene_module.MAX_YAML_BYTES < os.path.getsize(path) < scene_module.MAX_JSON_BYTES
    assert len(sc.load(path).env) == 1


# ----------------------------------------------------------------------------- the two YAML parsers


def test_libyaml_is_used_where_pyyaml_has_it():
    if not getattr(yaml, "__with_libyaml__", False):
        pytest.skip("this PyYAML is built without libyaml")
    assert scene_module.YamlLoader is scene_module.LibYamlLoader
    assert issubclass(scene_module.LibYamlLoader, yaml.CSafeLoader)


def test_without_libyaml_the_pure_python_parser_reads_scenes(tmp_path):
    """With PyYAML's C extension hidden, the scene loader falls back to yaml.SafeLoader."""
    path = tmp_path / "s.yaml"
    path.write_text(YAML_HEAD + "planner: {seed: 1e3}\n")
    code = textwrap.dedent(f"""
        import sys
        sys.modules["yaml._yaml"] = None  # as if PyYAML were built without libyaml
        import yaml
        import simdplan.scenes as sc
        from simdplan.scenes import scene
        assert not yaml.__with_libyaml__ and scene.LibYamlLoader is None
        assert scene.YamlLoader is scene.PyYamlLoader and issubclass(scene.YamlLoader, yaml.SafeLoader)
        print(sc.load({str(path)!r}).settings.seed)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "1000", proc.stderr


MALFORMED_YAML = [
    "robot: panda\nstart: [0, 0\n",
    "robot: panda\n  start: 1\n",
    "robot: panda\nrobot: ur5\n",
    "robot: *nothing\n",
    "robot: !thing 1\n",
    "{[1]: 2}\n",
    "? {a: 1}\n: 2\n",
    "start: 2001-02-30\n",
    "start: !!int x\n",
    "start: !!float x\n",
    "start: !!timestamp x\n",
    "start: !!binary zz\n",
    "start: " + "1" * 5000 + "\n",
    "--- a\n--- b\n",
    'name: "\\q"\n',
    "name: 'x\n",
    "\t- a\n",
    "name: a\x00b\n",
    "<<: 1\n",
    "name: [1, 2]\nb: !!set {[1]: 2}\n",
]


@pytest.mark.parametrize("text", MALFORMED_YAML)
def test_both_parsers_give_the_same_message(tmp_path, text):
    """Every malformed file gives one SceneError message whichever YAML parser is in use."""
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    messages = []
    for loader in filter(None, (scene_module.LibYamlLoader, scene_module.PyYamlLoader)):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(scene_module, "YamlLoader", loader)
            with pytest.raises(SceneError) as info:
                sc.load(path)
        messages.append(str(info.value))
    assert all(m.startswith(f"{path}: malformed YAML at line ") for m in messages), messages
    assert len(set(messages)) == 1, messages


@pytest.mark.parametrize("text, words", [
    ("start: 2001-02-30\n", "line 1, column 8: cannot read the value '2001-02-30' as timestamp (day is out of range"),
    ("start: !!int x\n", "line 1, column 8: cannot read the value 'x' as int"),
    ("start: !!timestamp x\n", "cannot read the value 'x' as timestamp"),
    ("start: " + "1" * 5000 + "\n", "cannot read the value of 5000 characters as int"),
    ("{[1]: 2}\n", "line 1, column 2: a key must be a plain value, not a list or mapping"),
    ("? {a: 1}\n: 2\n", "line 1, column 3: a key must be a plain value"),
    ("name: a\x00b\n", "line 1, column 8: character U+0000 is not allowed in YAML text"),
])
def test_values_yaml_cannot_build_are_scene_errors(tmp_path, text, words, yaml_loader):
    """These escaped as ValueError, AttributeError or TypeError from inside PyYAML, without the file."""
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    scene_error(path, words)


def test_scene_files_read_the_same_with_either_parser(yaml_loader):
    for name in sc.examples():
        scene = sc.load(sc.example(name))
        assert scene.name == name and len(scene.env) > 0


# ----------------------------------------------------------------------------- bytes


def test_a_file_that_is_not_utf8_is_a_scene_error(tmp_path):
    """UnicodeDecodeError (a ValueError without the file's name) before."""
    for ext in ("yaml", "json"):
        path = tmp_path / f"latin1.{ext}"
        path.write_bytes(b"robot: panda\nname: caf\xe9\n" if ext == "yaml" else b'{"name": "caf\xe9"}')
        scene_error(path, "not UTF-8 text: byte 0xe9 at line", "save the file as UTF-8")


def test_a_byte_order_mark_is_not_content(tmp_path):
    for ext, text in (("yaml", yaml.safe_dump(VALID)), ("json", json.dumps(VALID))):
        path = tmp_path / f"bom.{ext}"
        path.write_bytes(b"\xef\xbb\xbf" + text.encode())
        assert sc.load(path).robot.name == "panda"
