"""ISA dispatch: every kernel family (collision kernels, CAPT, nearest point, BVH, GJK, joint-space neighbours) follows the
ISA that set_isa names."""
from __future__ import annotations

from simdplan import _core

from conftest import on_every_isa


def test_set_isa_switches_every_kernel_family():
    # every family's table is picked by one helper from the ISA in use; a family left behind would
    # still give the same answers (slower or faster), so only its name shows it
    for isa, tables in on_every_isa(_core.active_tables).items():
        assert set(tables) == {"kernels", "capt", "nearest", "bvh", "gjk", "neighbors"}
        assert all(name == isa for name in tables.values()), tables
