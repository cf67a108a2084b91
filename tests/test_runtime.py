"""simdplan.info / isa / set_isa / available_isas, and SIMDPLAN_ISA at import (in subprocesses)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import simdplan
from simdplan import robots as sp_robots

KNOWN = ("scalar", "avx2", "avx512")
# configurations per batch kernel call, and samples per chunk of the planners' Link while trees grow
LANES = {"scalar": 1, "avx2": 16, "avx512": 16}
MOTION_LANES = {"scalar": 1, "avx2": 8, "avx512": 16}


@pytest.fixture
def restore_isa():
    before = simdplan.isa()
    yield before
    simdplan.set_isa(before)


def run_python(code: str, tmp_path, isa_env: str | None):
    """Runs code in a fresh interpreter (cwd tmp_path, so no source folder shadows the install)."""
    env = dict(os.environ)
    env.pop("SIMDPLAN_ISA", None)
    if isa_env is not None:
        env["SIMDPLAN_ISA"] = isa_env
    return subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=60)


def test_info_reports_the_isa():
    info = simdplan.info()
    assert info["isa"] == simdplan.isa()
    assert info["isa"] in KNOWN
    assert info["version"] == simdplan.__version__
    assert info["available_isas"] == simdplan.available_isas()
    assert info["lanes"] == LANES[info["isa"]] and info["motion_lanes"] == MOTION_LANES[info["isa"]]
    assert set(info["available_isas"]) <= set(info["compiled_isas"]) <= set(KNOWN)
    assert info["available_isas"][0] == "scalar"  # the scalar build is always there
    # worst to best
    order = [KNOWN.index(i) for i in info["available_isas"]]
    assert order == sorted(order)


def test_set_isa_switches_and_info_follows(restore_isa):
    for name in simdplan.available_isas():
        simdplan.set_isa(name)
        assert simdplan.isa() == name
        info = simdplan.info()
        assert info["isa"] == name and info["lanes"] == LANES[name] and info["motion_lanes"] == MOTION_LANES[name]


def test_set_isa_refuses_unknown_names(restore_isa):
    before = simdplan.isa()
    for bad in ["sse9", "", "AVX2x", "neon"]:
        with pytest.raises(ValueError, match="ISA"):
            simdplan.set_isa(bad)
        assert simdplan.isa() == before  # unchanged after a refusal


def test_set_isa_refuses_isas_this_machine_cannot_run(restore_isa):
    for name in KNOWN:
        if name not in simdplan.available_isas():
            with pytest.raises(ValueError, match=name):
                simdplan.set_isa(name)


def test_results_agree_across_isas(restore_isa):
    robot = sp_robots.load("panda")
    env = simdplan.Environment()
    env.add_box([0.5, 0.0, 0.4], [0, 0, 0, 1], [0.1, 0.3, 0.02])
    env.add_cylinder([-0.4, -0.3, 0.5], [0, 0, 0, 1], 0.08, 0.8)
    Q = np.random.default_rng(0).uniform(robot.lower, robot.upper, size=(1000, 7))
    results = {}
    for name in simdplan.available_isas():
        simdplan.set_isa(name)
        results[name] = robot.is_valid_many(Q, env)
    ref = results["scalar"]
    assert 0 < ref.mean() < 1
    for name, got in results.items():
        # float32 rounding may flip a configuration that grazes a boundary; allow a handful
        assert np.sum(got != ref) <= 2, name


def test_default_isa_at_import_is_the_best(tmp_path):
    proc = run_python("import simdplan; print(simdplan.isa()); print(simdplan.available_isas()[-1]);"
                      "print(simdplan.info()['forced_by_env'])", tmp_path, None)
    assert proc.returncode == 0, proc.stderr
    chosen, best, forced = proc.stdout.split()
    assert chosen == best
    assert forced == "None"


@pytest.mark.parametrize("name", list(KNOWN))
def test_env_var_forces_the_isa(tmp_path, name):
    proc = run_python("import simdplan; print(simdplan.isa()); print(simdplan.info()['isa'])", tmp_path, name)
    if name in simdplan.available_isas():
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == [name, name]
    else:
        # a forced level this build or CPU cannot run is an error, never a silent fallback
        assert proc.returncode != 0
        assert "ImportError" in proc.stderr and "SIMDPLAN_ISA" in proc.stderr and name in proc.stderr


def test_env_var_forced_isa_is_used_for_checks(tmp_path):
    code = ("import numpy as np, simdplan; from simdplan import robots\n"
            "r = robots.load('ur5'); print(r.is_valid(np.zeros(6)), simdplan.isa(), simdplan.info()['forced_by_env'])")
    proc = run_python(code, tmp_path, "scalar")
    assert proc.returncode == 0, proc.stderr
    valid, isa, forced = proc.stdout.split()
    assert valid in ("True", "False") and isa == "scalar" and forced == "scalar"


@pytest.mark.parametrize("bad", ["sse9", "avx3", "fastest"])
def test_unknown_env_value_is_a_clear_import_error(tmp_path, bad):
    proc = run_python("import simdplan", tmp_path, bad)
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError"), proc.stderr
    assert "SIMDPLAN_ISA" in last and bad in last
    for name in KNOWN:  # says what is expected
        assert name in last
    assert "Segmentation" not in proc.stderr


def test_unknown_env_value_can_be_caught(tmp_path):
    code = ("try:\n    import simdplan\nexcept ImportError as e:\n    print('caught:', e)\nelse:\n    print('imported')")
    proc = run_python(code, tmp_path, "bogus")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("caught:") and "bogus" in proc.stdout


def test_subpackages_are_attributes_after_a_bare_import():
    """The README's examples use simdplan.scenes / .robots / .planner / .collision after `import simdplan`."""
    code = ("import simdplan; print(all(hasattr(simdplan, n) for n in ('scenes', 'robots', 'planner', 'collision', "
            "'plan', 'Environment', 'Robot')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "True", out.stderr
