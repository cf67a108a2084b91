"""Loads the C++ core and chooses its SIMD level (ISA) once, at import.

``SIMDPLAN_ISA=scalar|avx2|avx512`` forces a level; otherwise the best one the CPU runs is used.
A forced level the CPU or this build cannot run is an error, never a silent fallback.
"""

from __future__ import annotations

import os
import platform
import sys

from simdplan import _core

_ISA_ENV = "SIMDPLAN_ISA"


def _choose_at_import() -> None:
    forced = os.environ.get(_ISA_ENV, "").strip().lower()
    if forced:
        try:
            _core.set_isa(forced)
        except ValueError as exc:
            valid = ", ".join(_core.available_isas())
            raise ImportError(f"{_ISA_ENV}={forced!r} cannot be used ({exc}); valid values on this machine: "
                              f"{valid}; or leave {_ISA_ENV} unset for the best one") from None
    else:
        _core.set_isa(_core.available_isas()[-1])


def _started_as_command() -> bool:
    """True when this process is the ``simdplan`` command (the console script or ``python -m simdplan``),
    whose users expect a one-line message and its bad-input exit code rather than a traceback."""
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if os.path.splitext(script)[0] == "simdplan":
        return True
    argv = list(getattr(sys, "orig_argv", ()))
    return any(a == "-m" and b in ("simdplan", "simdplan.cli") for a, b in zip(argv, argv[1:]))


def set_isa(name: str) -> None:
    """Use the named SIMD level ("scalar", "avx2" or "avx512") for every later call.

    Meant for tests and side-by-side benchmarks; the import-time choice is normally right.
    Raises ValueError if this build or this CPU cannot run it.
    """
    _core.set_isa(str(name))


def isa() -> str:
    """The SIMD level in use."""
    return _core.isa()


def available_isas() -> list[str]:
    """SIMD levels this build has and this CPU runs, worst to best."""
    return list(_core.available_isas())


def cpu_model() -> str:
    """The CPU's model name (from /proc/cpuinfo where there is one)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def info() -> dict:
    """What the core runs on: ISA in use, configurations per kernel call (``lanes``; the planners'
    discrete Link while trees grow takes ``motion_lanes`` samples at a time), compiled and runnable
    ISAs, version."""
    from simdplan import __version__

    return {
        "version": __version__,
        "isa": _core.isa(),
        "lanes": _core.lanes(),
        "motion_lanes": _core.motion_lanes(),
        "available_isas": list(_core.available_isas()),
        "compiled_isas": list(_core.compiled_isas()),
        "forced_by_env": os.environ.get(_ISA_ENV) or None,
        "cpu": cpu_model(),
        **_kernel_info(),
    }


def _kernel_info() -> dict:
    """How robots get their specialized kernels (simdplan.specialize): SIMDPLAN_JIT, the compiler,
    the cache folder (or why it cannot be used). Robot.kernel says which kernel a robot runs."""
    from simdplan.specialize import build, cache, jit_mode

    try:
        jit = jit_mode()
    except ValueError as exc:
        jit = str(exc)
    try:
        folder = str(cache.cache_dir(create=False))
    except cache.UnsafeCacheError as exc:
        folder = f"refused: {exc}"
    return {"jit": jit, "kernel_compiler": build.find_compiler() or "none found", "kernel_cache": folder}


try:
    _choose_at_import()
except ImportError as exc:  # SIMDPLAN_ISA names a level this build or CPU cannot run
    if not _started_as_command():
        raise
    # the command's own main() cannot catch this: it is raised while its package is imported
    print(f"simdplan: {exc}", file=sys.stderr, flush=True)
    raise SystemExit(2) from None
