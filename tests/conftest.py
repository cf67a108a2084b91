"""Shared fixtures: run ISA-sensitive tests under every SIMD level this machine has."""

from __future__ import annotations

import contextlib
import os
import signal
import sys

import tempfile

import pytest
from hypothesis import HealthCheck, settings

# Kernels specialized per robot (simdplan.specialize) are built only by the tests that ask for them
# (tests/test_specialize.py): hundreds of robots load here, and a background build for each would
# take the machine. They go to a private cache, never the user's. Subprocesses inherit both.
os.environ.setdefault("SIMDPLAN_JIT", "off")
os.environ.setdefault("SIMDPLAN_CACHE_DIR", tempfile.mkdtemp(prefix="simdplan-test-kernels-"))

import simdplan  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # so tests can `import reference`

# Property tests take the `isa` fixture (function scoped, parametrized): each test function runs
# once per ISA and all of its examples run under that ISA, which is what we want here.
settings.register_profile(
    "simdplan",
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    print_blob=True,
)
settings.load_profile("simdplan")

ISAS = simdplan.available_isas()

# The Ctrl-C tests need SIGINT handled as an interactive Python handles it. A shell without job
# control starts background commands with SIGINT ignored, and Python keeps an inherited SIG_IGN:
# then _thread.interrupt_main does nothing, child processes inherit the SIG_IGN, and a plan cannot
# be interrupted (the OMPL adapter rightly leaves a program's own SIGINT disposition alone), so
# those tests failed or ran to their 30 s limits only when the suite ran in the background.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@contextlib.contextmanager
def isa_set_to(name: str):
    """Runs the block under ISA `name`, then restores the one in use before."""
    before = simdplan.isa()
    simdplan.set_isa(name)
    try:
        yield name
    finally:
        simdplan.set_isa(before)


def on_every_isa(fn) -> dict:
    """{ISA name: fn()} for every ISA this machine has (``from conftest import on_every_isa``), for
    tests that compare the ISAs with each other; the ISA in use is restored."""
    out = {}
    for name in ISAS:
        with isa_set_to(name):
            out[name] = fn()
    return out


@pytest.fixture(params=ISAS)
def isa(request):
    """Sets the ISA under test (every one in simdplan.available_isas()) and restores the original."""
    with isa_set_to(request.param):
        yield request.param
