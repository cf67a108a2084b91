"""plan_many(..., backend="ray"): the tasks in chunks on a Ray cluster, each chunk planned on C++
threads on one node (plan_threads.py).

Robots and environments pickle as their descriptions and obstacles (Robot.__reduce__,
Environment.__getstate__). Tasks are grouped by environment into chunks; what only one chunk uses
travels inside it, what several share goes to Ray's object store once, and each worker process
keeps what it has unpickled from there, so a shared robot is compiled once per process, not once
per chunk. A chunk's results come back together when it is done: Ray re-runs the chunk of a worker
or node that dies (``max_retries``), and the driver keeps exactly one result per task whatever was
retried. Task i plans with seed task_seed(seed, i), as with threads, so both backends give the
same results.

Ray is an optional extra (``pip install "simdplan[ray]"``). Every node needs simdplan installed in
the same version as the driver.
"""

from __future__ import annotations

import functools
import math
import pickle
import socket
import types
from collections import OrderedDict

import numpy as np

from simdplan.planner.plan import check_types
from simdplan.planner.plan_threads import (Finished, Prepared, error_result, one_of, plan_on_threads, pose_goal,
                                           task_parts)
from simdplan.planner.result import PlanResult
from simdplan.validation import as_int

RAY_MISSING = 'backend="ray" needs Ray, an optional extra: pip install "simdplan[ray]" (or pip install ray)'
# a chunk whose worker died is planned again this many times before its tasks report the failure
MAX_RETRIES = 4
# the calls' bundles of robots and environments a worker process keeps, least recently used out
KEEP_BUNDLES = 4


def ray_module():
    """The ray module, or ImportError saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ImportError(RAY_MISSING) from None
    return ray


def plan_on_ray(tasks, numbers, results: list, *, workers, planner, progress, on_result, address, chunk_size,
                settings: dict) -> None:
    """plan_many(backend="ray"): plans ``tasks`` on the cluster into ``results`` (a task that is not
    one is refused here, as with threads); task i plans with seed task_seed(seed, numbers[i]). A
    KeyboardInterrupt cancels the chunks still running and propagates, ``results`` keeping what
    finished."""
    chunk_size = None if chunk_size is None else as_int(chunk_size, "chunk_size", 1, 10**9)
    threads = None if workers is None else as_int(workers, "workers", 1, 4096)
    finished = Finished(results, on_result, progress)

    parts, checked = [], set()
    for i, task in enumerate(tasks):
        try:
            robot, env, start, goals, base = task_parts(task)
            if (id(robot), id(env)) not in checked:
                check_types(robot, env)
                checked.add((id(robot), id(env)))
            parts.append((robot, env, start, goals, base, pose_goal(task)))
        except (TypeError, ValueError) as exc:
            parts.append(exc)
            finished.put(i, error_result(exc, task))
    try:
        _plan_parts(parts, numbers, address=address, workers=threads, chunk_size=chunk_size, planner=planner,
                    on_task=finished.put, settings=settings)
    finally:
        finished.bar.close()


def _plan_parts(parts: list, numbers, *, address, workers, chunk_size, planner, on_task, settings: dict
                ) -> None:
    """Plans the tasks whose ``parts`` are (robot, env, start, goals, base settings, pose_goal's
    (poses, link, mask) or None) (or an exception for a task already refused) on Ray; calls
    on_task(i, PlanResult) on this thread once per task as its chunk finishes. numbers: each task's
    number for its seed. An exception (Ctrl-C among them) cancels the chunks still running and
    propagates."""
    ray = ray_module()
    _join(ray, address)
    cpus = _node_cpus(ray)
    threads = workers or min(cpus)
    if threads > max(cpus):
        # Ray would wait for such a node forever
        raise ValueError(f"workers={threads} threads per Ray task, but the largest node of the cluster has "
                         f"{max(cpus)} CPUs")
    slots = max(1, int(ray.cluster_resources().get("CPU", threads)) // threads)
    keys: dict = {}  # id(robot or environment) -> its key
    objects: dict = {}  # key -> the object
    task_keys: dict = {}  # task -> (robot key, environment key)
    for i, p in enumerate(parts):
        if not isinstance(p, Exception):
            pair = []
            for obj in p[:2]:
                k = keys.get(id(obj))
                if k is None:
                    k = keys[id(obj)] = len(keys)
                    objects[k] = obj
                pair.append(k)
            task_keys[i] = tuple(pair)
    # tasks of one environment go to one chunk where they can, so a worker unpickles and compiles
    # only its chunks' environments (results are kept by task, so the order changes no answer)
    chunks = _chunks(sorted(task_keys, key=task_keys.__getitem__), chunk_size, slots)
    users: dict = {}
    for chunk in chunks:
        for key in {k for i in chunk for k in task_keys[i]}:
            users[key] = users.get(key, 0) + 1
    # PERF: everything a chunk needs travels as bytes we pickle (Ray's serializer took ~0.2 ms per
    # MotionBenchMaker environment, pickle ~0.07, and ~10 us per small array): robots and
    # environments of one chunk inside that chunk, those several chunks share in one object-store
    # put (a put costs ~1 ms: one per object took 0.7 s for 700 environments)
    dump = functools.partial(pickle.dumps, protocol=pickle.HIGHEST_PROTOCOL)
    packed = {k: dump(objects[k]) for k in users if users[k] > 1}
    shared = [ray.put(packed)] if packed else []  # in a list: Ray passes it unresolved, fetched once
    plan_chunk = ray.remote(_plan_chunk).options(num_cpus=threads, max_retries=MAX_RETRIES)
    bases: dict = {}  # scenes' equal settings as one object, pickled once per chunk
    pending = {}
    for chunk in chunks:
        own = {k for i in chunk for k in task_keys[i] if users[k] == 1}
        specs = [(numbers[i], *task_keys[i], one_of(bases, parts[i][4]), parts[i][5]) for i in chunk]
        payload = dump((specs, _arrays_packed([parts[i][2] for i in chunk] + [parts[i][3] for i in chunk]),
                        {k: objects[k] for k in own}))
        pending[plan_chunk.remote(payload, shared, planner, settings, threads)] = chunk
    try:
        while pending:
            ready, _ = ray.wait(list(pending), num_returns=1, timeout=0.05)
            for ref in ready:
                chunk = pending.pop(ref)
                try:
                    results = _unpacked(pickle.loads(ray.get(ref)), [parts[i][0] for i in chunk])
                except Exception as exc:  # the chunk failed MAX_RETRIES + 1 times: say so per task
                    results = [PlanResult(False, _no_path(parts[i][0]), {}, planner or "", [],
                                          f"Ray could not run this task's chunk: {exc}", error=type(exc).__name__)
                               for i in chunk]
                for i, result in zip(chunk, results):
                    on_task(i, result)
    except BaseException:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise


_joined: tuple | None = None  # (address, _running(ray)) of the Ray instance plan_many last started or joined


def _join(ray, address: str | None) -> None:
    """Starts or joins Ray at ``address`` unless this process runs it already. A running instance
    serves address None or "auto" (the running cluster), the address plan_many joined it with, or
    its GCS "host:port"; another address is refused, since Ray keeps one connection per process
    and ray.init would ignore it."""
    global _joined
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False, ignore_reinit_error=True)
        _joined = (address, _running(ray))
        return
    running = _running(ray)
    if address in (None, "auto") or _joined == (address, running) or _same_endpoint(address, running[0]):
        return
    raise ValueError(f"address={address!r}, but this process already runs Ray (GCS at {running[0] or 'unknown'}) "
                     "and Ray joins one cluster per process: pass address=None to plan there, or call "
                     "ray.shutdown() first to plan on another")


def _running(ray) -> tuple:
    """(GCS address, driver job id) of the Ray instance this process runs; None where Ray Client hides one."""
    context = ray.get_runtime_context()
    out = []
    for read in (lambda: context.gcs_address, context.get_job_id):
        try:
            out.append(read())
        except Exception:  # noqa: BLE001 - Ray Client lacks some; they are only compared
            out.append(None)
    return tuple(out)


def _same_endpoint(address: str, gcs: str | None) -> bool:
    """Whether ``address`` ("host:port") names the GCS at ``gcs``, hosts compared by their IP."""
    if gcs is None or "://" in address or ":" not in address:
        return False
    (host, _, port), (gcs_host, _, gcs_port) = address.rpartition(":"), gcs.rpartition(":")
    if port != gcs_port:
        return False
    try:
        return host == gcs_host or socket.gethostbyname(host) == socket.gethostbyname(gcs_host)
    except OSError:
        return False


def _chunks(todo: list, chunk_size: int | None, slots: int) -> list[list]:
    """``todo`` cut into chunks of ``chunk_size``, or by default: first one small chunk per slot (64
    tasks), so every slot starts while this process still packs the big ones, then shrinking sizes,
    each half the remaining tasks' share per slot (at most 2000, at least 16), so the slots stay
    busy to the end without a chunk per task."""
    if chunk_size:
        return [todo[k:k + chunk_size] for k in range(0, len(todo), chunk_size)]
    out, k = [], 0
    while k < len(todo):
        share = math.ceil((len(todo) - k) / (2 * slots))
        size = min(64, share) if len(out) < slots else max(16, min(2000, share))
        out.append(todo[k:k + size])
        k += size
    return out


def _arrays_packed(values: list) -> tuple:
    """Many small arrays as one: (float64 data, shapes), with values that are not float64 arrays
    kept as they are ({position: value}, for the worker to check and word its error).
    PERF: pickling an array costs ~2.5 us, a chunk of 2000 tasks held 4000 of them."""
    odd = {k: v for k, v in enumerate(values) if type(v) is not np.ndarray or v.dtype != np.float64}
    arrays = [v for k, v in enumerate(values) if k not in odd]
    data = np.concatenate([a.ravel() for a in arrays]) if arrays else np.zeros(0)
    return data, [a.shape for a in arrays], odd


def _arrays_unpacked(packed: tuple) -> list:
    data, shapes, odd = packed
    out, at, it = [], 0, iter(shapes)
    for k in range(len(shapes) + len(odd)):
        if k in odd:
            out.append(odd[k])
            continue
        shape = next(it)
        n = math.prod(shape)
        out.append(data[at:at + n].reshape(shape))
        at += n
    return out


def _packed(results: list) -> tuple:
    """A chunk's PlanResults in the form that crosses the network: one tuple of plain values per
    result, its stats keys given once per distinct key set, its paths as one array, no joint names
    (the driver has the robots). PERF: 1250 PlanResults pickled in ~20 ms, this form in a few; Ray
    waits for it between chunks."""
    keys: dict = {}
    rows = [(r.success, keys.setdefault(tuple(r.stats), len(keys)), tuple(r.stats.values()), r.planner, r.message,
             r.error) for r in results]
    return list(keys), rows, _arrays_packed([r.path for r in results])


def _unpacked(packed: tuple, robots: list) -> list:
    keys, rows, paths = packed
    return [PlanResult(ok, path, dict(zip(keys[k], values)), planner, robot.joint_names, message, error)
            for (ok, k, values, planner, message, error), path, robot in zip(rows, _arrays_unpacked(paths), robots)]


def _node_cpus(ray) -> list[int]:
    """The CPUs of each live node that has any (at least [1])."""
    cpus = [int(n["Resources"].get("CPU", 0)) for n in ray.nodes() if n.get("Alive")]
    return [c for c in cpus if c > 0] or [1]


def _no_path(robot):
    return np.zeros((0, getattr(robot, "dof", 0)))


_kept: OrderedDict = OrderedDict()  # this worker process's bundles and the objects unpickled from them


def _objects(shared: list, own: dict, wanted) -> dict:
    """key -> robot or environment for the keys ``wanted``: from ``own`` (this chunk's) or from the
    bundle behind ``shared`` (fetched and unpickled once per worker process)."""
    import ray

    out = {k: own[k] for k in wanted if k in own}
    if not shared:
        return out
    name = shared[0].hex()
    if name not in _kept:
        _kept[name] = (ray.get(shared[0]), {})
        while len(_kept) > KEEP_BUNDLES:
            _kept.popitem(last=False)
    _kept.move_to_end(name)
    raw, done = _kept[name]
    for key in wanted:
        if key not in out:
            if key not in done:
                done[key] = pickle.loads(raw[key])
            out[key] = done[key]
    return out


def _plan_chunk(payload: bytes, shared: list, planner, settings: dict, threads: int) -> bytes:
    """Runs on a Ray worker: one chunk (pickled specs and the robots and environments only it uses)
    on ``threads`` threads, with the tasks' own numbers; returns its results packed and pickled."""

    specs, arrays, own = pickle.loads(payload)
    objects = _objects(shared, own, {k for _, r, e, _, _ in specs for k in (r, e)})
    arrays = _arrays_unpacked(arrays)
    ends = zip(arrays[:len(specs)], arrays[len(specs):])
    tasks = []
    for (_, r, e, base, pose), (q0, goals) in zip(specs, ends):
        if base is None and pose is None:
            tasks.append((objects[r], objects[e], q0, goals))
        else:  # a Scene's fields, as much of it as plan_threads reads
            poses, link, mask = pose or (None, None, None)
            tasks.append(types.SimpleNamespace(robot=objects[r], env=objects[e], start=q0, goals=goals, settings=base,
                                               goal_poses=poses, goal_link=link, goal_mask=mask))
    results: list = [None] * len(tasks)
    plan_on_threads(tasks, [n for n, *_ in specs], results, Prepared(planner, settings), threads, False, None)
    return pickle.dumps(_packed(results), protocol=pickle.HIGHEST_PROTOCOL)
