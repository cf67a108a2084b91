"""Kernels specialized per robot: generated from the loaded robot, compiled, cached, attached.

When a robot loads, its specialized kernel is attached at once if the cache holds it, else built in a
background thread while planning runs on the generic kernels, and attached (atomically, between calls
into the core) when ready. Before attaching, the core compares its answers with the generic kernel's
(RobotModel::attach_kernels); a kernel that differs, or fails to load, is dropped from the cache and
the robot stays on the generic kernels.

``SIMDPLAN_JIT``: ``auto`` (default: as above), ``off`` (never build or load one: generic kernels
everywhere). Without a C++ compiler, or when a build fails, the robot keeps the generic kernels and
one line on the ``simdplan`` logger says why (once per reason per process).

What is specialized so far: Clear (batches) and both discrete Link kernels (the planners' and the
wide one). Certified Link's clearance passes, single-configuration checks, FK queries and IK still run
the generic kernels (see issue 44's closing note).
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import tempfile
import threading
import time
import weakref
from dataclasses import dataclass, field

from simdplan.specialize import build, cache, codegen

log = logging.getLogger("simdplan")

__all__ = ["KernelStatus", "jit_mode", "on_load", "compile_robot"]


def jit_mode() -> str:
    value = os.environ.get("SIMDPLAN_JIT", "auto").strip().lower()
    if value in ("off", "0", "false", "no", "generic"):
        return "off"
    if value in ("", "auto", "on", "1", "true", "yes"):
        return "auto"
    raise ValueError(f"SIMDPLAN_JIT={value!r}: expected auto or off")


@dataclass
class KernelStatus:
    """What a robot's kernel build did: state is one of generic, building, specialized, failed."""

    state: str = "generic"
    reason: str = ""  # why generic or failed
    key: str = ""
    isa: str = ""
    file: str = ""
    compile_seconds: float | None = None  # this process's build; None when loaded from the cache
    load_seconds: float | None = None  # dlopen, checks and comparison with the generic kernel
    done: threading.Event = field(default_factory=threading.Event, repr=False)
    # True when the caller asked for the kernel and reads the reason itself (Robot.compile): no log line
    quiet: bool = field(default=False, repr=False)

    def as_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("done", "quiet")}

    def fail(self, reason: str, state: str = "failed") -> None:
        """Records why the robot stays on the generic kernels; says it once per process unless quiet."""
        self.state, self.reason = state, reason
        if not self.quiet:
            _say_once(reason)


_said: set = set()
_said_lock = threading.Lock()


def _say_once(reason: str) -> None:
    with _said_lock:
        if reason in _said:
            return
        _said.add(reason)
    log.warning("simdplan: generic kernels in use: %s", reason)


_inflight: dict = {}  # key -> Event of this process's build of that key
_inflight_lock = threading.Lock()


def _attach(model, path, key: str, digest: str, status: KernelStatus) -> bool:
    t0 = time.perf_counter()
    # NOTE: the core loads a private copy, deleted once mapped: a cache file changed in place later
    # (another process, a damaged disk) cannot reach code already running (a truncated mapped library
    # faults on first use), and what was checked is what runs.
    private = tempfile.mkdtemp(prefix="simdplan-kernel-")
    try:
        copy = os.path.join(private, "kernel.so")
        shutil.copyfile(path, copy)
        # a damaged file must not reach dlopen: a truncated library faults inside the loader
        if cache.sha256(copy) != digest:
            raise RuntimeError(f"specialized kernel {path} refused: its contents changed since it was built")
        model.attach_kernels(copy, key)
    except (RuntimeError, OSError) as e:
        cache.remove(key)  # damaged, foreign or stale: rebuilt on the next load
        status.fail(str(e))
        return False
    finally:
        shutil.rmtree(private, ignore_errors=True)
    status.load_seconds = time.perf_counter() - t0
    status.state, status.file, status.reason = "specialized", str(path), ""
    return True


def _build(robot_ref, tables: dict, key: str, isa: str, compiler: str, name: str, status: KernelStatus,
           background: bool) -> None:
    """Builds (or waits for this process's other build of) key, stores it and attaches it to the robot
    if it still exists (robot_ref: a weak reference, so a build never keeps a robot alive)."""
    with _inflight_lock:
        other = _inflight.get(key)
        mine = other is None
        if mine:
            _inflight[key] = threading.Event()
    try:
        if not mine:
            other.wait()
        found = cache.lookup(key)
        if found is None:
            folder = cache.cache_dir()
            work = build.new_workdir(folder)
            try:
                source = codegen.generate(tables, key, name)
                built, seconds = build.compile_kernel(source, isa, compiler, work, nice=background)
                found = cache.store(key, built, {"robot": name, "isa": isa, "compiler": build.compiler_id(compiler),
                                                 "compile_seconds": round(seconds, 3)})
                status.compile_seconds = seconds
            finally:
                build.drop_workdir(work)
        if found is None:  # this process's other build of key, waited for above, failed
            raise build.CompileError(f"the build of kernel {key} by another robot of this process failed")
        robot = robot_ref()
        if robot is not None:
            _attach(robot.core, found[0], key, found[1], status)
        else:
            status.state, status.reason = "generic", "the robot was gone when its kernel was ready"
    except (build.CompileError, cache.UnsafeCacheError, OSError, ValueError) as e:
        if build.stopping():  # cut short at interpreter exit (its folder removed, its compiler killed)
            status.state, status.reason = "generic", "the process exited before its kernel was built"
        else:
            status.fail(str(e))
    finally:
        if mine:
            with _inflight_lock:
                _inflight.pop(key).set()
        status.done.set()


def _prepare(robot, status: KernelStatus):
    """(tables, key, isa, compiler), or None with status saying why the robot stays generic."""
    from simdplan import _core  # noqa: PLC0415

    isa = _core.isa()
    compiler = build.find_compiler()
    if compiler is None:
        status.fail("no C++ compiler found (set SIMDPLAN_CXX or CXX, or install g++ or clang++)", "generic")
        return None
    try:
        tables = robot.core.view_tables()
        key = build.kernel_key(tables, isa, compiler)
    except build.CompileError as e:
        status.fail(str(e), "generic")
        return None
    status.key, status.isa = key, isa
    return tables, key, isa, compiler


def on_load(robot) -> KernelStatus:
    """Called by Robot when it loads: attach the cached kernel, or start building it (SIMDPLAN_JIT)."""
    status = KernelStatus()
    if jit_mode() == "off":
        status.reason = "SIMDPLAN_JIT=off"
        status.done.set()
        return status
    return compile_robot(robot, wait=False, status=status)


def compile_robot(robot, wait: bool = True, status: KernelStatus | None = None) -> KernelStatus:
    """Builds (or loads from the cache) and attaches the robot's kernel for the ISA in use. With
    wait=False the build runs in a background thread; status.done is set when it ends. With wait=True
    the caller reads why from the status: nothing is logged."""
    status = status or KernelStatus(quiet=wait)
    status.done.clear()
    prepared = _prepare(robot, status)
    if prepared is None:
        status.done.set()
        return status
    tables, key, isa, compiler = prepared
    try:
        found = cache.lookup(key)
    except cache.UnsafeCacheError as e:
        status.fail(str(e))
        status.done.set()
        return status
    if found is not None and _attach(robot.core, found[0], key, found[1], status):
        status.done.set()
        return status
    # none cached, or the cached file was refused (and removed): build it
    status.state = "building"
    args = (weakref.ref(robot), tables, key, isa, compiler, robot.name, status)
    if wait:
        _build(*args, background=False)
    else:
        threading.Thread(target=_build, args=args, kwargs={"background": True}, daemon=True,
                         name=f"simdplan-kernel-{robot.name}").start()
    return status


atexit.register(build.stop_all)
