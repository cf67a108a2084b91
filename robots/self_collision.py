"""Certifies which sphere pairs of a self-collision group pair can ever touch within the joint limits.

Links a few joints apart (the panda's wrist link5 against its hand) have overlapping bounding
spheres in almost every configuration, so the kernels used to test most of their sphere pairs for
every configuration. Most of those pairs can never touch. This module proves it, once per robot,
and the kernels then test only the pairs that might.

Method (branch and bound over the joints between the two links, for chains of at most
``MAX_JOINTS`` revolute joints): the joint box is cut into cells; at each cell centre the exact
centre distance d of every sphere pair is computed in float64. Inside a cell of half widths h,
a sphere centre moves at most sum_m L_m * h_m, where L_m bounds its distance from joint m's axis
over every configuration (the distance from the sphere to the next joint origin plus the lengths
of the links in between: the triangle inequality, independent of the joint values). So
d - slack_i - slack_j is a lower bound of the pair's distance over the whole cell. A pair is kept
("possible") as soon as some cell centre brings it within r_i + r_j + margin; cells where a pair
is neither kept nor excluded by its lower bound are split in two along every joint. Pairs still
undecided when the cell budget runs out, or whose slack has shrunk below ``TOLERANCE``, are kept, so the answer is conservative: a pair that is
dropped can never come within ``margin`` of touching, for any joint values inside the limits
(mimic joints are treated as free, which only adds configurations).

Chains with prismatic joints or more than ``MAX_JOINTS`` joints are not certified; the kernels
test every sphere of such pairs, as before.
"""

from __future__ import annotations

import hashlib

import numpy as np

from simdplan.robots.program import KIND_PRISMATIC, KIND_REVOLUTE, Program

# Pairs stay certified while 2 * padding (both spheres inflate) fits in this margin, minus a
# float32 allowance: the kernels round sphere centres to float, about 1e-6 m on a 2 m robot.
MARGIN = 0.01
FLOAT_ALLOWANCE = 1e-4
MAX_PADDING = (MARGIN - FLOAT_ALLOWANCE) / 2
MAX_JOINTS = 2
MAX_CELLS = 200_000  # work budget per group pair, in cells of all its sphere pairs / 4
TOLERANCE = 0.002  # m: cells are not split once a pair's slack is this small
INITIAL_STEP = 1.0  # rad: first grid spacing per joint (cells are refined where needed)


def _chain(prog: Program, body: int, ancestor: int) -> list[int] | None:
    """Bodies from just below ``ancestor`` down to ``body`` (root-to-leaf order), or None if not below it."""
    out = []
    while body != ancestor:
        if body < 0:
            return None
        out.append(body)
        body = int(prog.body_parent[body])
    return out[::-1]


def _common_ancestor(prog: Program, a: int, b: int) -> int:
    seen = set()
    while a >= 0:
        seen.add(a)
        a = int(prog.body_parent[a])
    while b not in seen:
        b = int(prog.body_parent[b])
    return b


def _value_range(prog: Program, body: int) -> tuple[float, float]:
    d = int(prog.body_dof[body])
    lo, hi = float(prog.lower[d]), float(prog.upper[d])
    if prog.wrap[d]:
        lo, hi = -np.pi, np.pi
    s, o = float(prog.body_scale[body]), float(prog.body_offset[body])
    a, b = s * lo + o, s * hi + o
    return min(a, b), max(a, b)


def _origin(prog: Program, body: int) -> np.ndarray:
    m = np.eye(4)
    m[:3, :4] = np.asarray(prog.body_origin[body], dtype=np.float64).reshape(3, 4)
    return m


def _place(prog: Program, chain: list[int], values: np.ndarray, local: np.ndarray) -> np.ndarray:
    """Positions (M, 3) in the chain's top frame of body-frame points ``local`` (M, 3) of the
    chain's last body, at joint values (M, k): one point per row."""
    M = values.shape[0]
    R = np.broadcast_to(np.eye(3), (M, 3, 3))
    t = np.zeros((M, 3))
    for k, body in enumerate(chain):
        o = _origin(prog, body)
        t = t + R @ o[:3, 3]
        R = R @ o[:3, :3]
        c, s = np.cos(values[:, k]), np.sin(values[:, k])
        rz = np.zeros((M, 3, 3))
        rz[:, 0, 0], rz[:, 0, 1], rz[:, 1, 0], rz[:, 1, 1], rz[:, 2, 2] = c, -s, s, c, 1.0
        R = R @ rz
    return np.einsum("mij,mj->mi", R, local) + t


def _reach(prog: Program, chain: list[int], local: np.ndarray) -> np.ndarray:
    """(k, n): L[m, i] >= distance of point i (last body's frame) from joint m's axis, for every
    joint value. Joint m's axis is the z axis of body chain[m]; the next body's origin sits at a
    fixed distance from it (its origin's xy), and everything further is bounded by link lengths."""
    k = len(chain)
    out = np.zeros((k, len(local)))
    if k == 0:
        return out
    out[k - 1] = np.hypot(local[:, 0], local[:, 1])
    beyond = np.linalg.norm(local, axis=1)  # from body chain[m+1]'s origin to the point, bounded
    for m in range(k - 2, -1, -1):
        t = np.asarray(prog.body_origin[chain[m + 1]], dtype=np.float64).reshape(3, 4)[:, 3]
        out[m] = np.hypot(t[0], t[1]) + beyond
        beyond = beyond + np.linalg.norm(t)
    return out


def certified_sphere_pairs(prog: Program, ga: int, gb: int) -> np.ndarray | None:
    """Sphere pairs (p, 2) int64 (global sphere indices) of groups ga, gb that may come within
    ``MARGIN`` of touching inside the joint limits; None if the chain between them is not certified."""
    ba, bb = int(prog.group_body[ga]), int(prog.group_body[gb])
    top = _common_ancestor(prog, ba, bb)
    chain_a, chain_b = _chain(prog, ba, top), _chain(prog, bb, top)
    chain = chain_a + chain_b
    if len(chain) > MAX_JOINTS or any(int(prog.body_kind[c]) != KIND_REVOLUTE for c in chain):
        return None
    ia = np.arange(prog.group_begin[ga], prog.group_end[ga])
    ib = np.arange(prog.group_begin[gb], prog.group_end[gb])
    sa, sb = np.asarray(prog.spheres[ia], dtype=np.float64), np.asarray(prog.spheres[ib], dtype=np.float64)
    na, nb = len(sa), len(sb)
    ka, k = len(chain_a), len(chain)
    la, lb = _reach(prog, chain_a, sa[:, :3]), _reach(prog, chain_b, sb[:, :3])

    lo = np.array([_value_range(prog, c)[0] for c in chain])
    hi = np.array([_value_range(prog, c)[1] for c in chain])
    steps = np.maximum(1, np.ceil((hi - lo) / INITIAL_STEP)).astype(int)
    half = (hi - lo) / (2 * steps)
    axes = [lo[m] + half[m] * (2 * np.arange(steps[m]) + 1) for m in range(k)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, k) if k else np.zeros((1, 0))

    # Work items: (cell centre, sphere pair). Only pairs still undecided in a cell are refined there.
    pair_i, pair_j = np.repeat(np.arange(na), nb), np.tile(np.arange(nb), na)
    cells = np.repeat(grid, na * nb, axis=0)
    ii, jj = np.tile(pair_i, len(grid)), np.tile(pair_j, len(grid))
    possible = np.zeros((na, nb), dtype=bool)
    budget = MAX_CELLS * max(1, na * nb) // 4
    while len(cells):
        budget -= len(cells)
        pa = _place(prog, chain_a, cells[:, :ka], sa[ii, :3]) if ka else sa[ii, :3]
        pb = _place(prog, chain_b, cells[:, ka:], sb[jj, :3]) if k > ka else sb[jj, :3]
        d = np.sqrt(((pa - pb) ** 2).sum(axis=1))
        reach = MARGIN + sa[ii, 3] + sb[jj, 3]
        possible[ii[d <= reach], jj[d <= reach]] = True
        slack = half[:ka] @ la[:, ii] + half[ka:] @ lb[:, jj] if k else np.zeros(len(ii))
        undecided = (d - slack <= reach) & ~possible[ii, jj]
        # a pair whose bound is within TOLERANCE of deciding is kept rather than refined further:
        # its distance never exceeds reach + TOLERANCE there, so dropping it would buy little
        close = undecided & (slack <= TOLERANCE)
        possible[ii[close], jj[close]] = True
        undecided &= ~possible[ii, jj]
        if not undecided.any():
            break
        if k == 0 or budget < undecided.sum() * 2**k:
            possible[ii[undecided], jj[undecided]] = True  # out of budget: keep them (conservative)
            break
        half = half / 2
        offsets = np.stack(np.meshgrid(*[[-1.0, 1.0]] * k, indexing="ij"), axis=-1).reshape(-1, k) * half
        cells = (cells[undecided][:, None, :] + offsets[None, :, :]).reshape(-1, k)
        ii, jj = np.repeat(ii[undecided], 2**k), np.repeat(jj[undecided], 2**k)
    i, j = np.nonzero(possible)
    return np.stack([ia[i], ib[j]], axis=1).astype(np.int64)


def sphere_pair_lists(prog: Program) -> tuple[np.ndarray, np.ndarray]:
    """For every group pair of ``prog.pairs``: ``ranges`` (n_pairs, 2) int64 [begin, end) into
    ``sphere_pairs`` (m, 2) int64, or [-1, -1] where the pair is not certified (test every sphere)."""
    ranges = np.full((len(prog.pairs), 2), -1, dtype=np.int64)
    chunks = []
    n = 0
    for p, (ga, gb) in enumerate(prog.pairs):
        sp = certified_sphere_pairs(prog, int(ga), int(gb))
        if sp is None:
            continue
        ranges[p] = (n, n + len(sp))
        chunks.append(sp)
        n += len(sp)
    sphere_pairs = np.concatenate(chunks) if chunks else np.zeros((0, 2), dtype=np.int64)
    return ranges, sphere_pairs


def _key(prog: Program) -> str:
    h = hashlib.sha256()
    for a in (prog.body_parent, prog.body_kind, prog.body_dof, prog.body_scale, prog.body_offset, prog.body_origin,
              prog.group_body, prog.group_begin, prog.group_end, prog.spheres, prog.pairs, prog.lower, prog.upper,
              prog.wrap):
        a = np.ascontiguousarray(a)
        h.update(str((a.dtype.str, a.shape)).encode())
        h.update(a.tobytes())
    h.update(repr((MARGIN, MAX_JOINTS, MAX_CELLS, TOLERANCE, INITIAL_STEP)).encode())
    return h.hexdigest()


_CACHE: dict[str, tuple[np.ndarray, np.ndarray]] = {}
_CACHE_SIZE = 32


def certify_self_collision(prog: Program) -> None:
    """Fills ``prog.pair_ranges``, ``prog.sphere_pairs`` and ``prog.list_max_padding``.

    Results are cached per process by the program's content, so loading the same robot again
    (tests, several scenes) costs a hash, not a certification (about 0.1 s for the panda).
    """
    key = _key(prog)
    if key not in _CACHE:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        ranges, pairs = sphere_pair_lists(prog)
        ranges.flags.writeable = pairs.flags.writeable = False
        _CACHE[key] = (ranges, pairs)
    prog.pair_ranges, prog.sphere_pairs = _CACHE[key]
    prog.list_max_padding = MAX_PADDING
