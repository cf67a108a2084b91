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
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import simdplan
import simdplan.scenes as sc
from simdplan import cli
from simdplan.scenes import SceneError
from simdplan.scenes import files as scene_module  # the file reader (scene.py uses it)
from simdplan.scenes import reading

VALID = {
    "robot": "panda",
    "obstacles": [{"type": "box", "position": [0.6, 0.0, 0.1], "half_extents": [0.2, 0.4, 0.1]}],
    "start": [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785],
    "goal": [0.5, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7],
}
YAML_HEAD = ("robot: panda\nstart: [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785]\n"
             "goal: [0.5, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7]\n")
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


def test_a_deep_motionbenchmaker_file_is_a_scene_error(tmp_path):
    path = tmp_path / "problems.json"
    path.write_text('{"problems": {"table": ' + "[" * 1000 + "]" * 1000 + "}}")
    with pytest.raises(SceneError, match="needs at most 7 levels .* not a MotionBenchMaker file$"):
        sc.mbm.load(path)


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
        from simdplan.scenes import files as scene
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
    # the first problem in the file is reported, also when a nesting problem follows it
    "a: *x\nb: " + "[" * 40 + "]" * 40 + "\n",
    "a: &x 1\nb: &x 2\nc: " + "[" * 40 + "]" * 40 + "\n",
    "a: 1\n---\nb: " + "[" * 40 + "]" * 40 + "\n",
    "a: [1\nb: " + "[" * 40 + "]" * 40 + "\n",
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
        # a run of them too (the fuzz below found libyaml and PyYAML keeping different numbers as text)
        path.write_bytes(b"\xef\xbb\xbf" * 10 + text.encode())
        assert sc.load(path).robot.name == "panda"


# ----------------------------------------------------------------------------- fuzzing

EXAMPLE_SECONDS = 10  # one load takes milliseconds; this bounds a hang, not speed
# CI runs a few hundred examples; SIMDPLAN_FUZZ_SCALE=50 searches longer on a workstation.
FUZZ_SCALE = int(os.environ.get("SIMDPLAN_FUZZ_SCALE", "1"))


class Hang(BaseException):
    """Raised by the alarm in the middle of a load that ran too long (a BaseException so that no
    ``except Exception`` in the loader swallows it)."""


@contextlib.contextmanager
def time_bound(seconds: float, what: str):
    if not hasattr(signal, "setitimer"):  # Windows: no interval timer; the CI job's timeout is the bound
        yield
        return

    def alarm(signum, frame):
        raise Hang(f"{what} ran longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory):
    """A folder with the files a fuzzed scene may reference: good and garbage clouds and meshes."""
    folder = tmp_path_factory.mktemp("fuzz")
    rng = np.random.default_rng(1)
    np.save(folder / "cloud.npy", rng.uniform(-1, 1, (50, 3)) + [2.0, 2.0, 2.0])
    (folder / "box.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\nf 1 2 4\nf 1 3 4\nf 2 3 4\n")
    for name in ("garbage.npy", "garbage.obj", "garbage.ply", "garbage.stl", "garbage.pcd", "garbage.xyz"):
        (folder / name).write_bytes(rng.integers(0, 256, 300, dtype=np.uint8).tobytes())
    (folder / "empty.obj").write_bytes(b"")
    (folder / "empty.npy").write_bytes(b"")
    os.makedirs(folder / "folder.obj")
    return folder


def fuzz_base() -> dict:
    """A valid scene with every obstacle form and some planner settings, as plain data."""
    return {
        "name": "fuzz",
        "description": "every obstacle form",
        "robot": "panda",
        "obstacles": [
            {"type": "box", "name": "table", "position": [0.6, 0.0, 0.1], "half_extents": [0.2, 0.4, 0.1]},
            {"type": "sphere", "position": [0.0, 0.6, 0.5], "radius": 0.1},
            {"type": "capsule", "position": [0.0, -0.6, 0.5], "quat": [0, 0, 0, 1], "radius": 0.05, "length": 0.3},
            {"type": "cylinder", "position": [-0.5, 0.0, 0.3], "euler": [0, 0.1, 0], "radius": 0.05, "length": 0.6},
            {"type": "plane", "normal": [0, 0, 1], "offset": -0.04},
            {"type": "pointcloud", "file": "cloud.npy", "point_radius": 0.01},
            {"type": "mesh", "file": "box.obj", "position": [3.0, 0.0, 0.0], "scale": 0.5},
            {"type": "mesh", "vertices": [[3, 3, 0], [4, 3, 0], [3, 4, 0]], "faces": [[0, 1, 2]]},
            {"type": "convex", "points": [[-3, -3, 0], [-2, -3, 0], [-3, -2, 0], [-3, -3, 1]], "euler": [0, 0, 1]},
        ],
        "start": [0.0, -0.785, 0.0, -2.356, 0.0, 1.571, 0.785],
        "goals": [[0.5, -0.5, 0.0, -2.0, 0.0, 1.5, 0.7]],
        "planner": {"planner": "rrtc", "seed": 3, "time_limit": 1.0, "max_iterations": 1000},
    }


BAD_PATHS = ["", ".", "/", "nope.npy", "scene.yaml", "scene.json", "folder.obj", "cloud.npy\x00x", "a" * 5000,
             "../" * 40 + "etc/passwd", "cloud.npy", "box.obj", "garbage.npy", "garbage.obj", "garbage.ply",
             "garbage.stl", "garbage.pcd", "garbage.xyz", "empty.obj", "empty.npy", "~/cloud.npy", "box.OBJ"]
numbers = st.one_of(st.integers(-3, 3), st.sampled_from([0.0, -0.0, 1e-300, 1e308, -1e308, 10**400, -(10**30),
                                                         2**63, math.nan, math.inf, -math.inf]),
                    st.floats(allow_nan=True, allow_infinity=True))
scalars = st.one_of(st.none(), st.booleans(), numbers, st.text(max_size=12), st.sampled_from(BAD_PATHS),
                    st.sampled_from(["panda", "ur5", "box", "mesh", "convex", "pointcloud", "rrtc", "prm", "type"]))
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(st.one_of(st.text(max_size=8), st.sampled_from(
        ["type", "file", "position", "radius", "quat", "urdf", "seed", "planner", "start"])), inner, max_size=4)),
    max_leaves=20)


def _slots(data, path=()):
    """Every (path to a container, key in it) of ``data``, the root's keys included."""
    out = []
    items = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for k, v in items:
        out.append((path, k))
        out.extend(_slots(v, path + (k,)))
    return out


@st.composite
def mutated_scenes(draw):
    """fuzz_base with 1-4 mutations: a value replaced, dropped, wrapped, nested deeply, or an unknown
    key added; sometimes a numeric vector turned into a bad number."""
    data = fuzz_base()
    for _ in range(draw(st.integers(1, 4))):
        slots = _slots(data)
        if not slots:
            break
        path, key = draw(st.sampled_from(slots))
        parent = data
        for k in path:
            parent = parent[k]
        op = draw(st.sampled_from(["replace", "replace", "number", "drop", "wrap", "deep", "unknown", "path"]))
        if op == "replace":
            parent[key] = draw(values)
        elif op == "number":
            parent[key] = draw(numbers)
        elif op == "path":
            parent[key] = draw(st.sampled_from(BAD_PATHS))
        elif op == "drop":
            del parent[key]
        elif op == "wrap":
            parent[key] = [parent[key]] if draw(st.booleans()) else {"x": parent[key]}
        elif op == "deep":
            levels = draw(st.sampled_from([2, 5, 30, 31, 32, 33, 40, 500]))
            value = parent[key]
            for _ in range(levels):
                value = [value]
            parent[key] = value
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(["strat", "typ", "x", "points", "faces", "r_min", "euler"]))] = draw(values)
    return data


def _dump(data, fmt: str) -> bytes | None:
    """The scene as JSON or YAML text (None: the data cannot be written so, e.g. huge depth in YAML's dumper)."""
    try:
        if fmt == "json":
            return json.dumps(data).encode()
        return yaml.safe_dump(data, sort_keys=False, allow_unicode=True).encode()
    except (RecursionError, ValueError, yaml.YAMLError):
        return None


def load_or_documented_error(path, robot=None) -> None:
    """Load ``path``: a Scene, or SceneError naming the file, or FileNotFoundError; within the time bound."""
    try:
        with time_bound(EXAMPLE_SECONDS, f"loading {path}"):
            scene = sc.load(path, robot=robot)
        assert isinstance(scene, sc.Scene)
        event("loaded")
    except SceneError as exc:
        assert str(exc).startswith(f"{path}: "), str(exc)
        top = exc.key.split("[")[0].split(".")[0]
        event(f"SceneError at {top if top in reading.TOP_KEYS else 'the file' if not top else 'another key'}")
    except FileNotFoundError as exc:
        assert str(path) in str(exc) or exc.filename, str(exc)
        event("FileNotFoundError")


@settings(max_examples=150 * FUZZ_SCALE, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=mutated_scenes(), fmt=st.sampled_from(["yaml", "json"]), override=st.booleans())
def test_fuzz_mutated_scene_dicts(fuzz_dir, data, fmt, override):
    text = _dump(data, fmt)
    if text is None:
        return
    path = fuzz_dir / f"scene.{fmt}"
    path.write_bytes(text)
    load_or_documented_error(path, robot=simdplan.robots.load("panda") if override else None)


GARBAGE = [b"\x00", b"\xff\xfe", b"\xef\xbb\xbf", b"[", b"]", b"{", b"}", b"\"", b"'", b"&a ", b"*a", b"!!", b"!x ",
           b"? ", b": ", b"- ", b"\t", b"\n", b"#", b"---\n", b"...\n", b"%YAML 1.1\n", b"<<: ", b"1e999", b"nan",
           b".inf", b"-", b",", b"\\", b"\xc3", b"\x85", b"\r", b"@", b"`", b"|\n", b">\n", b"~", b"0x", b"0o7",
           b"2001-02-29", b"!!binary ", b"!!python/object:os.system ", b"9" * 400]


@st.composite
def mutated_texts(draw):
    """A valid scene text (YAML or JSON) with bytes inserted, deleted or replaced, or cut short."""
    fmt = draw(st.sampled_from(["yaml", "json"]))
    text = bytearray(_dump(fuzz_base(), fmt))
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["insert", "insert", "delete", "replace", "cut", "repeat"]))
        piece = draw(st.one_of(st.sampled_from(GARBAGE), st.binary(min_size=1, max_size=8)))
        if op == "insert":
            text[at:at] = piece
        elif op == "delete":
            del text[at:at + draw(st.integers(1, 20))]
        elif op == "replace":
            text[at:at + len(piece)] = piece
        elif op == "cut":
            del text[at:]
        else:
            text[at:at] = piece * draw(st.sampled_from([10, 100, 1000]))
    return fmt, bytes(text)


@settings(max_examples=250 * FUZZ_SCALE, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=mutated_texts())
def test_fuzz_mutated_scene_texts(fuzz_dir, case):
    fmt, text = case
    path = fuzz_dir / f"scene.{fmt}"
    path.write_bytes(text)
    load_or_documented_error(path)


@settings(max_examples=100 * FUZZ_SCALE, deadline=None, suppress_health_check=list(HealthCheck))
@given(text=st.one_of(st.binary(max_size=200), st.text(max_size=200),
                      st.lists(st.sampled_from(GARBAGE), max_size=30).map(b"".join)),
       fmt=st.sampled_from(["yaml", "json"]))
def test_fuzz_raw_bytes(fuzz_dir, text, fmt):
    path = fuzz_dir / f"raw.{fmt}"
    path.write_bytes(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    load_or_documented_error(path)


# ----------------------------------------------------------------------------- what the fuzzing found


@pytest.mark.parametrize("kind", [{"x": "sphere"}, ["box"], 3, None])
def test_an_obstacle_type_that_is_not_a_name_is_a_scene_error(tmp_path, kind):
    """A mapping or list as the type escaped as TypeError (unhashable) from the type lookup."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps({**VALID, "obstacles": [{"type": kind, "position": [0, 0, 0], "radius": 0.1}]}))
    err = scene_error(path, "obstacles[0].type: must be an obstacle type name (sphere, capsule")
    assert err.key == "obstacles[0].type"


@pytest.mark.parametrize("ext", ["yaml", "json"])
def test_an_integer_beyond_float_range_is_a_scene_error(tmp_path, ext):
    """10**400 where a number belongs escaped as OverflowError from float()."""
    path = tmp_path / f"s.{ext}"
    big = 10**400
    text = json.dumps({**VALID, "obstacles": [{"type": "sphere", "position": [0, 0, big], "radius": 0.1}]})
    path.write_text(text if ext == "json" else yaml.safe_dump(json.loads(text)))
    scene_error(path, "obstacles[0].position[2]: must be finite, got an integer of about 401 digits")


def test_robot_entry_is_checked_when_the_caller_gives_the_robot(tmp_path):
    """With load(robot=...), the file's robot entry was copied unchecked into robot_spec: aliases
    making a billion strings out of a few lines hung the copy. In a subprocess, with a timeout."""
    items = ["&b0 [a, a, a, a, a, a, a, a, a, a]"] + [f"&b{i} [" + ", ".join([f"*b{i - 1}"] * 10) + "]"
                                                    for i in range(1, 9)]
    path = tmp_path / "aliases.yaml"
    path.write_text(YAML_HEAD + "robot2: {urdf: x.urdf, joints: [" + ", ".join(items) + "]}\n")
    path.write_text(path.read_text().replace("robot: panda\n", "").replace("robot2:", "robot:"))
    code = textwrap.dedent(f"""
        import simdplan, simdplan.scenes as sc
        try:
            sc.load({str(path)!r}, robot=simdplan.robots.load("panda"))
        except sc.SceneError as exc:
            print(exc)
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.strip() == f"{path}: robot.joints[0]: must be a string, got a list of 10", proc.stderr
    robot = simdplan.robots.load("panda")
    entry = tmp_path / "entry.yaml"  # a well-formed entry naming files that need not exist is kept
    entry.write_text(YAML_HEAD.replace("robot: panda", "robot: {urdf: elsewhere.urdf, joints: [a, b]}"))
    assert sc.load(entry, robot=robot).robot_spec == {"urdf": "elsewhere.urdf", "joints": ["a", "b"]}
    unknown = tmp_path / "unknown.yaml"
    unknown.write_text(YAML_HEAD.replace("robot: panda", "robot: {urdf: x.urdf, mesh: 1}"))
    with pytest.raises(SceneError, match="robot.mesh: unknown key"):
        sc.load(unknown, robot=robot)


def _outcome(path, loader):
    """What read_data makes of ``path`` with ``loader``: ("data", data) or ("error", message)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(scene_module, "YamlLoader", loader)
        try:
            with time_bound(EXAMPLE_SECONDS, f"parsing {path}"):
                return "data", repr(scene_module.read_data(str(path)))
        except SceneError as exc:
            return "error", str(exc)


@pytest.mark.skipif(scene_module.LibYamlLoader is None, reason="this PyYAML is built without libyaml")
@settings(max_examples=200 * FUZZ_SCALE, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=mutated_texts())
def test_fuzz_both_yaml_parsers_agree(fuzz_dir, case):
    """Same data, or the same message, from libyaml and from PyYAML's own parser. (The two disagree
    on a few texts, as parsers of the same spec do: libyaml takes a tab inside a plain scalar,
    ``n\tame: x``, which PyYAML refuses; those are counted, not compared.)"""
    fmt, text = case
    if fmt != "yaml":
        text = text.replace(b'"', b"").replace(b",", b"\n- ")  # JSON text, roughened into other YAML
    path = fuzz_dir / "both.yaml"
    path.write_bytes(text)
    fast, pure = _outcome(path, scene_module.LibYamlLoader), _outcome(path, scene_module.PyYamlLoader)
    if fast[0] != pure[0]:
        event("one parser accepts the text, the other does not")
        return
    event(fast[0])
    assert fast == pure
