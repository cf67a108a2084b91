"""Compiling a generated kernel with the system C++ compiler.

Why the system compiler: it is there wherever simdplan itself was built from source, and it was the
fastest of the choices measured (benchmarks/kernel_specialization/README.md: g++ builds the ur5 and
panda kernels in about 2 s and the dual arm's in under 10 s on 2 cores; the ziglang wheel's clang was
3-8x slower on big robots; llvmlite has no C++ front end). ``$SIMDPLAN_CXX`` (else ``$CXX``, else
``c++``, ``g++``, ``clang++`` on PATH) names it.

The flags are those of the core's own kernel builds (cpp/CMakeLists.txt), so the generated code and
the generic kernels it is compared with compute the same bits.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from simdplan.specialize import codegen

ISA_FLAGS = {
    "scalar": ["-DSIMDPLAN_ISA_SCALAR=1"],
    "avx2": ["-mavx2", "-mfma", "-DSIMDPLAN_ISA_AVX2=1"],
    "avx512": ["-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw", "-mfma", "-DSIMDPLAN_ISA_AVX512=1"],
}
COMMON_FLAGS = ["-std=gnu++17", "-O2", "-fno-math-errno", "-ffp-contract=off", "-fPIC", "-fvisibility=hidden",
                "-fvisibility-inlines-hidden", "-w"]
COMPILE_TIMEOUT = 600.0  # seconds per part; a robot of hundreds of links builds in well under a minute


class CompileError(RuntimeError):
    """The compiler failed or is missing; the robot keeps the generic kernels."""


def find_compiler() -> str | None:
    for var in ("SIMDPLAN_CXX", "CXX"):
        value = os.environ.get(var)
        if value:
            return shutil.which(value) or (value if os.path.isfile(value) else None)
    for name in ("c++", "g++", "clang++"):
        path = shutil.which(name)
        if path:
            return path
    return None


@functools.lru_cache(maxsize=8)
def compiler_id(path: str) -> str:
    """The compiler's own version line (part of the cache key: another compiler, another kernel)."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise CompileError(f"C++ compiler {path} does not run: {e}") from e
    if out.returncode != 0 or not out.stdout.strip():
        raise CompileError(f"C++ compiler {path} does not run: {out.stderr.strip()[:200]}")
    return out.stdout.strip().splitlines()[0]


def include_dir() -> Path:
    """The core's kernel headers: shipped in the wheel (simdplan/include), or the source tree's."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "include", here.parent.parent / "cpp" / "include"):
        if (candidate / "simdplan" / "collision" / "validity.hh").exists():
            return candidate
    raise CompileError("simdplan's kernel headers are not installed (simdplan/include is missing)")


@functools.lru_cache(maxsize=1)
def headers_digest() -> str:
    h = hashlib.sha256()
    root = include_dir()
    for path in sorted(root.rglob("*.hh")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def kernel_key(tables: dict, isa: str, compiler: str) -> str:
    """What a built kernel is for: the robot's tables, the ISA, the compiler, the headers, the
    generator and simdplan's version. Any change gives another key, so a stale file is never found."""
    from simdplan import __version__  # noqa: PLC0415

    h = hashlib.sha256()
    h.update(json.dumps(tables, sort_keys=True).encode())
    h.update(json.dumps([isa, compiler_id(compiler), headers_digest(), codegen.GENERATOR_VERSION, __version__,
                         COMMON_FLAGS, ISA_FLAGS[isa]]).encode())
    return h.hexdigest()[:32]


_running: set = set()  # compiler processes of builds in flight (terminated at exit)
_workdirs: set = set()  # their temporary folders (removed at exit)
_running_lock = threading.Lock()


def _kill(proc: subprocess.Popen) -> None:
    """Kills the compiler and what it started (cc1plus, as, ld: its own process group), so nothing
    outlives the build."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (OSError, AttributeError):
        try:
            proc.kill()
        except OSError:
            pass


_stopping = threading.Event()


def stopping() -> bool:
    """True once stop_all ran (the interpreter is exiting): builds cut short then are not failures."""
    return _stopping.is_set()


def stop_all() -> None:
    """Ends the compiles still running and removes their folders (at interpreter exit: their kernels
    would never be attached; the next load builds again). No build starts after it."""
    _stopping.set()
    with _running_lock:
        procs, dirs = list(_running), list(_workdirs)
    for proc in procs:
        _kill(proc)
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)


def _run(cmd: list[str], cwd: Path, nice: bool) -> subprocess.Popen:
    if _stopping.is_set():
        raise CompileError("the process is exiting")
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    with _running_lock:
        _running.add(proc)
    if nice and hasattr(os, "setpriority"):
        try:  # a background build must not slow the planning it is meant to speed up
            os.setpriority(os.PRIO_PROCESS, proc.pid, 10)
        except OSError:
            pass
    return proc


def _finish(proc: subprocess.Popen, what: str) -> None:
    try:
        out, _ = proc.communicate(timeout=COMPILE_TIMEOUT)
    except BaseException:  # timeout, Ctrl-C: the compiler must not outlive the build
        _kill(proc)
        proc.communicate()
        raise
    finally:
        with _running_lock:
            _running.discard(proc)
    if proc.returncode != 0:
        raise CompileError(f"{what} failed (exit {proc.returncode}): {out.strip()[-2000:]}")


def compile_kernel(source: str, isa: str, compiler: str, workdir: Path, nice: bool = False) -> tuple[Path, float]:
    """Builds the library from the generated source in workdir; returns its path and the seconds taken.
    The two parts compile at once (two processes), then link."""
    if isa not in ISA_FLAGS:
        raise CompileError(f"no kernel flags for ISA {isa!r}")
    t0 = time.perf_counter()
    src = workdir / "kernel.cc"
    src.write_text(source)
    base = [compiler, *COMMON_FLAGS, *ISA_FLAGS[isa], f"-DSIMDPLAN_NS=robot_{isa}", f"-I{include_dir()}"]
    try:
        procs = [(_run([*base, f"-DSIMDPLAN_SPEC_PART={part}", "-c", str(src), "-o", f"part{part}.o"], workdir, nice),
                  part) for part in (1, 2)]
    except OSError as e:
        raise CompileError(f"C++ compiler {compiler} cannot be started: {e}") from e
    try:
        for proc, part in procs:
            _finish(proc, f"compiling part {part} of the kernel")
    finally:
        for proc, _ in procs:
            if proc.poll() is None:
                _kill(proc)
    out = workdir / "kernel.so"
    _finish(_run([compiler, "-shared", "-o", str(out), "part1.o", "part2.o"], workdir, nice), "linking the kernel")
    return out, time.perf_counter() - t0


def new_workdir(cache_folder: Path) -> Path:
    """A private temporary folder inside the cache (same file system: the result is renamed in);
    drop_workdir removes it."""
    path = Path(tempfile.mkdtemp(prefix=".tmp-", dir=cache_folder))
    with _running_lock:
        _workdirs.add(path)
    return path


def drop_workdir(path: Path) -> None:
    shutil.rmtree(path, ignore_errors=True)
    with _running_lock:
        _workdirs.discard(path)
