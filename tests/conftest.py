"""Shared fixtures: run ISA-sensitive tests under every SIMD level this machine has."""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

import simdplan

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


@pytest.fixture(params=ISAS)
def isa(request):
    """Sets the ISA under test (every one in simdplan.available_isas()) and restores the original."""
    before = simdplan.isa()
    simdplan.set_isa(request.param)
    try:
        yield request.param
    finally:
        simdplan.set_isa(before)
