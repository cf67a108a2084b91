"""Automatic spherization: cover a mesh (or a URDF's collision geometry) with spheres, conservatively.

Units and frames: metres; spheres are ``[x, y, z, r]`` in the frame of the mesh handed in (for
``spherize_urdf``: the link frame, after the collision element's ``<origin>`` and mesh ``scale``).

Guarantee (conservative). Every vertex of the input mesh and every point of a fixed-seed surface
sample of ``samples`` points lies inside the union of the returned spheres (distance to some
centre <= its radius). In fact the whole surface is: it is cut into small convex pieces, and each
piece's enclosing ball lies inside ONE sphere. The vertices, the sample and the pieces are checked
again on the final (rounded) spheres, which are grown if anything is outside, so ``coverage`` is
always 1.0. Radii carry a 1 micrometre pad, so float32 evaluation keeps the cover.

Algorithm.
1. Clean a copy (merge vertices split by normals or UVs, drop degenerate faces) and pick the volume
   the spheres should hug (the "proxy"): the mesh itself when it is a closed, consistently wound
   volume; otherwise its convex hull (an open or self-intersecting mesh has no reliable inside);
   for a flat or degenerate mesh, nothing ("surface": spheres are centred on the surface).
2. Targets: each triangle is cut by a grid in its own plane into convex pieces of diameter <= h
   (h = ``tolerance``, or larger when that would exceed MAX_PIECES pieces). A piece is held by a
   sphere when the piece's enclosing ball is.
3. Candidates, each with the largest radius whose protrusion beyond the proxy is <= ``tolerance``:
   interior points (a grid, and surface points moved inward along the proxy's normals) with radius
   = depth + tolerance (a ball of radius "depth" lies inside the proxy), and the mesh's vertices
   with radius max(tolerance, h) (for corners and edges, which interior balls cannot reach).
4. Greedy set cover (lazy evaluation) of the pieces with at most ``max_spheres`` spheres. Where it
   stalls, balls on the uncovered pieces themselves are added.
5. If the budget still runs out, the cover is redone with the tolerance relaxed (x RELAX_FACTOR,
   up to RELAX_STEPS covers, then one bisection step), each leftover piece going to the sphere that
   then protrudes least; the cover with the smallest certified protrusion wins. Pieces never stay
   uncovered.
6. Each piece is assigned to the holding sphere that needs the least radius for it, every sphere
   shrinks to its own pieces, and spheres left without any are dropped.

Report: ``protrusion_bound`` is certified: a ball of radius r whose centre lies at depth d inside
the proxy reaches at most r - d beyond it. ``max_protrusion`` is measured: the largest distance
outside the proxy over points spread on every sphere's surface (a lower bound of the truth; the
distance to a convex region is largest on a ball's boundary). ``volume_overhead`` (union volume /
proxy volume) is a Monte Carlo estimate with a fixed seed, with its standard error. With the
convex hull as proxy, protrusion and overhead are measured against the hull, not the open mesh.

``spherize_urdf`` applies this to every link, and ``cached_spherized_urdf`` keeps the results on
disk keyed by the URDF text, the mesh bytes and the parameters. Deterministic for a given input.
URDF rewriting and the cache are in spherize_urdf.py.
"""

from __future__ import annotations

import dataclasses
import itertools
import time

import numpy as np


DEFAULT_MAX_SPHERES = 32
DEFAULT_TOLERANCE = 0.01
DEFAULT_SAMPLES = 5000
# Bumped whenever the output of the algorithm changes, so cached URDFs are recomputed.
ALGORITHM_VERSION = 1
# NOTE: caps the cover's cost (candidates x pieces bits); a mesh that would need more pieces at size
# ``tolerance`` is cut more coarsely, and its spheres may protrude more.
MAX_PIECES = 8000
# Pad on every radius, and the grid that centres and radii are rounded to (metres).
RADIUS_PAD = 1e-6
_ROUND = 1e-6
_SEED = 0
_SPHERE_SURFACE_POINTS = 200
_MC_POINTS = 100_000
# When max_spheres cannot meet the tolerance: relax it by this factor, at most this many covers.
RELAX_FACTOR = 1.5
RELAX_STEPS = 6


@dataclasses.dataclass
class SphereSet:
    """Spheres covering a mesh, and how well they fit.

    spheres: (k, 4) float64 [x, y, z, r], metres, in the mesh frame.
    max_protrusion: measured (sampled sphere surfaces) farthest reach outside the proxy, metres.
    protrusion_bound: certified upper bound of the same, metres.
    volume_overhead: union volume / proxy volume (Monte Carlo estimate; None without a volume).
    coverage: fraction of target points (input vertices + surface sample) inside the union (1.0).
    proxy: "mesh", "convex_hull" or "surface": what "inside" meant (see the module docstring).
    """

    spheres: np.ndarray
    max_protrusion: float
    protrusion_bound: float
    volume_overhead: float | None
    volume_overhead_stderr: float | None
    coverage: float
    proxy: str
    tolerance: float  # requested, metres
    tolerance_used: float  # the one the returned cover was built for (larger when max_spheres was short)
    max_spheres: int
    budget_exceeded: bool  # even the relaxed covers ran out of spheres; some were grown past the tolerance
    attempts: int  # covers computed (tolerance relaxations)
    n_pieces: int  # surface pieces held (each whole inside one sphere)
    piece_size: float  # their largest diameter bound h, metres
    proxy_volume: float
    seconds: float

    @property
    def n_spheres(self) -> int:
        return int(len(self.spheres))

    def report(self) -> dict:
        """The figures as plain Python values (no sphere array)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "spheres"}
        out["n_spheres"] = self.n_spheres
        return out


# ----------------------------------------------------------------------------- geometry helpers
def _closest_on_triangles(p, a, b, c):
    """Per row: the point of triangle (a, b, c) nearest p. All (n, 3). Regions after Ericson,
    Real-Time Collision Detection, 5.1.5, vectorised."""
    ab, ac, ap = b - a, c - a, p - a
    d1, d2 = np.einsum("ij,ij->i", ab, ap), np.einsum("ij,ij->i", ac, ap)
    bp = p - b
    d3, d4 = np.einsum("ij,ij->i", ab, bp), np.einsum("ij,ij->i", ac, bp)
    cp = p - c
    d5, d6 = np.einsum("ij,ij->i", ab, cp), np.einsum("ij,ij->i", ac, cp)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    with np.errstate(divide="ignore", invalid="ignore"):
        t_ab = d1 / (d1 - d3)
        t_ac = d2 / (d2 - d6)
        t_bc = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        den = va + vb + vc
        v, w = vb / den, vc / den
    out = a + ab * np.nan_to_num(v)[:, None] + ac * np.nan_to_num(w)[:, None]
    # Later assignments take precedence, so the vertex regions (checked first in Ericson) go last.
    m = (va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0)
    out[m] = b[m] + (c[m] - b[m]) * t_bc[m, None]
    m = (vb <= 0) & (d2 >= 0) & (d6 <= 0)
    out[m] = a[m] + ac[m] * t_ac[m, None]
    m = (vc <= 0) & (d1 >= 0) & (d3 <= 0)
    out[m] = a[m] + ab[m] * t_ab[m, None]
    m = (d6 >= 0) & (d5 <= d6)
    out[m] = c[m]
    m = (d3 >= 0) & (d4 <= d3)
    out[m] = b[m]
    m = (d1 <= 0) & (d2 <= 0)
    out[m] = a[m]
    return out


class _Surface:
    """Exact unsigned distance from points to a triangle mesh (k-d trees prune the pairs)."""

    def __init__(self, vertices: np.ndarray, faces: np.ndarray) -> None:
        from scipy.spatial import cKDTree

        self.tri = vertices[faces]  # (m, 3, 3)
        self.centroid = self.tri.mean(axis=1)
        self.radius = np.linalg.norm(self.tri - self.centroid[:, None], axis=2).max(axis=1)
        self.reach = float(self.radius.max()) if len(faces) else 0.0
        self.vtree = cKDTree(vertices)
        self.ctree = cKDTree(self.centroid)

    def distance(self, points: np.ndarray, chunk: int = 2048) -> np.ndarray:
        points = np.asarray(points, dtype=float).reshape(-1, 3)
        out = np.empty(len(points))
        for s in range(0, len(points), chunk):
            out[s:s + chunk] = self._distance(points[s:s + chunk])
        return out

    def _distance(self, p: np.ndarray) -> np.ndarray:
        # The nearest vertex bounds the distance from above; only triangles whose bounding ball
        # comes that close can hold the nearest point.
        upper, _ = self.vtree.query(p)
        lists = self.ctree.query_ball_point(p, upper + self.reach + 1e-12, return_sorted=False)
        counts = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
        tri_idx = np.fromiter(itertools.chain.from_iterable(lists), dtype=np.int64, count=int(counts.sum()))
        pt_idx = np.repeat(np.arange(len(p)), counts)
        near = (np.linalg.norm(p[pt_idx] - self.centroid[tri_idx], axis=1) - self.radius[tri_idx]
                <= upper[pt_idx] + 1e-12)
        tri_idx, pt_idx = tri_idx[near], pt_idx[near]
        t = self.tri[tri_idx]
        q = _closest_on_triangles(p[pt_idx], t[:, 0], t[:, 1], t[:, 2])
        d = np.linalg.norm(q - p[pt_idx], axis=1)
        best = upper.copy()
        np.minimum.at(best, pt_idx, d)
        return best


def _sphere_directions(n: int) -> np.ndarray:
    """n unit vectors spread evenly (Fibonacci lattice)."""
    i = np.arange(n) + 0.5
    z = 1.0 - 2.0 * i / n
    phi = i * np.pi * (3.0 - np.sqrt(5.0))
    s = np.sqrt(1.0 - z * z)
    return np.column_stack([s * np.cos(phi), s * np.sin(phi), z])


def _covered(points: np.ndarray, spheres: np.ndarray, chunk: int = 8192) -> np.ndarray:
    """(n,) bool: each point within some sphere (distance <= radius)."""
    out = np.zeros(len(points), dtype=bool)
    for s in range(0, len(points), chunk):
        p = points[s:s + chunk]
        d = np.linalg.norm(p[:, None, :] - spheres[None, :, :3], axis=2)
        out[s:s + chunk] = (d <= spheres[None, :, 3]).any(axis=1)
    return out


def union_volume(spheres: np.ndarray, n: int = _MC_POINTS, seed: int = _SEED) -> tuple[float, float]:
    """Monte Carlo volume of a union of spheres, and its standard error (cubic metres)."""
    lo = (spheres[:, :3] - spheres[:, 3:]).min(axis=0)
    hi = (spheres[:, :3] + spheres[:, 3:]).max(axis=0)
    box = float(np.prod(hi - lo))
    pts = np.random.default_rng(seed).uniform(lo, hi, size=(n, 3))
    frac = float(_covered(pts, spheres).mean())
    return box * frac, box * float(np.sqrt(frac * (1.0 - frac) / n))


# ----------------------------------------------------------------------------- the proxy volume
class _Proxy:
    """What "inside" means for a mesh: kind "mesh", "convex_hull" or "surface" (no volume)."""

    def __init__(self, clean) -> None:
        self.kind, self.mesh = "surface", None
        if len(clean.faces) and clean.is_volume:
            self.kind, self.mesh = "mesh", clean
        elif len(clean.vertices) >= 4:
            try:
                hull = clean.convex_hull
                scale = float(np.ptp(clean.vertices, axis=0).max())
                # A flat point set gives qhull a sliver (or an error): treat it as no volume.
                if hull.is_volume and hull.volume > 1e-9 * scale ** 3:
                    self.kind, self.mesh = "convex_hull", hull
            except Exception:  # qhull refuses coplanar or too few points
                pass
        if self.mesh is not None:
            self.surface = _Surface(np.asarray(self.mesh.vertices, float), np.asarray(self.mesh.faces))
        elif len(clean.faces):
            self.surface = _Surface(np.asarray(clean.vertices, float), np.asarray(clean.faces))
        else:
            self.surface = None
            self.points = np.asarray(clean.vertices, float)

    @property
    def volume(self) -> float:
        return float(self.mesh.volume) if self.mesh is not None else 0.0

    def distance(self, p: np.ndarray) -> np.ndarray:
        if self.surface is None:
            from scipy.spatial import cKDTree

            return cKDTree(self.points).query(p)[0]
        return self.surface.distance(p)

    def inside(self, p: np.ndarray) -> np.ndarray:
        if self.mesh is None:
            return np.zeros(len(p), dtype=bool)
        return np.asarray(self.mesh.contains(p), dtype=bool)

    def signed_depth(self, p: np.ndarray) -> np.ndarray:
        """Distance to the proxy's boundary, positive inside."""
        d = self.distance(p)
        return np.where(self.inside(p), d, -d)


# ----------------------------------------------------------------------------- spherize_mesh
def _clean(mesh):
    import trimesh

    m = trimesh.Trimesh(vertices=np.asarray(mesh.vertices, dtype=float), faces=np.asarray(mesh.faces),
                        process=True, validate=False)
    m.merge_vertices(merge_tex=True, merge_norm=True)
    if len(m.faces):
        m.update_faces(m.nondegenerate_faces())
        m.remove_unreferenced_vertices()
    if len(m.faces):
        m.fix_normals()
    return m


def _clip(poly: list, axis: int, bound: float, keep_below: bool) -> list:
    """A convex polygon (list of (x, y)) cut by the line coordinate[axis] = bound."""
    out = []
    sign = 1.0 if keep_below else -1.0
    for i, p in enumerate(poly):
        q = poly[(i + 1) % len(poly)]
        dp, dq = sign * (p[axis] - bound), sign * (q[axis] - bound)
        if dp <= 0:
            out.append(p)
        if (dp < 0 < dq) or (dq < 0 < dp):
            t = dp / (dp - dq)
            out.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
    return out


def _tile(tri: np.ndarray, g: float) -> list:
    """A triangle (3, 3) cut by a g-spaced grid in its plane into convex pieces of diameter <=
    g * sqrt(2). Returns each piece's corners, (k, 3) arrays."""
    e = np.linalg.norm(tri - np.roll(tri, -1, axis=0), axis=1)
    k = int(e.argmax())
    a, b, c = tri[k], tri[(k + 1) % 3], tri[(k + 2) % 3]
    length = float(e[k])
    u = (b - a) / length
    w = (c - a) - np.dot(c - a, u) * u
    w /= np.linalg.norm(w)
    # In the (u, w) frame the longest edge lies on [0, length] x {0} and the third corner's foot
    # falls inside it, so the strips below span the triangle.
    poly = [(0.0, 0.0), (length, 0.0), (float(np.dot(c - a, u)), float(np.dot(c - a, w)))]
    pieces = []
    nu = max(1, int(np.ceil(length / g)))
    for i in range(nu):
        strip = _clip(_clip(poly, 0, length * i / nu, False), 0, length * (i + 1) / nu, True)
        if len(strip) < 3:
            continue
        ys = [p[1] for p in strip]
        lo, hi = min(ys), max(ys)
        nv = max(1, int(np.ceil((hi - lo) / g)))
        for j in range(nv):
            cell = _clip(_clip(strip, 1, lo + (hi - lo) * j / nv, False), 1, lo + (hi - lo) * (j + 1) / nv, True)
            if len(cell) >= 3:
                xy = np.asarray(cell)
                pieces.append(a + xy[:, :1] * u + xy[:, 1:] * w)
    return pieces


def _balls_of_tiles(v: np.ndarray, f: np.ndarray, h: float) -> np.ndarray:
    """Balls (m, 4) [x, y, z, rho] that enclose pieces tiling the surface, each piece of diameter <= h."""
    tris = v[f]
    longest = np.linalg.norm(tris - np.roll(tris, -1, axis=1), axis=2).max(axis=1)
    small = longest <= h
    out = []
    if small.any():
        cen = tris[small].mean(axis=1)
        out.append(np.column_stack([cen, np.linalg.norm(tris[small] - cen[:, None], axis=2).max(axis=1)]))
    pieces = [p for t in tris[~small] for p in _tile(t, h / np.sqrt(2.0))]
    if pieces:
        # Pieces have 3..7 corners; their centroid and farthest corner give the ball.
        cen = np.array([p.mean(axis=0) for p in pieces])
        rho = np.array([np.linalg.norm(p - m, axis=1).max() for p, m in zip(pieces, cen)])
        out.append(np.column_stack([cen, rho]))
    return np.concatenate(out)


def _targets(clean, tolerance: float):
    """The surface as balls (m, 4) [x, y, z, rho], each enclosing one piece of a tiling of the
    surface (pieces of diameter <= h), and h. Holding every ball holds the whole surface."""
    v = np.asarray(clean.vertices, dtype=float)
    f = np.asarray(clean.faces, dtype=np.int64)
    if len(f) == 0:
        return np.column_stack([v, np.zeros(len(v))]), 0.0
    # Grid cells of side h / sqrt(2) have area h^2 / 2; pieces cut at triangle edges add to that.
    h = max(tolerance, float(np.sqrt(2.0 * clean.area / MAX_PIECES)))
    for _ in range(20):
        balls = _balls_of_tiles(v, f, h)
        if len(balls) <= MAX_PIECES or len(balls) <= len(f):
            break
        h *= 1.15
    return balls, h


def _interior(proxy: _Proxy, tolerance: float) -> tuple[np.ndarray, np.ndarray]:
    """Candidate centres (n, 3) inside the proxy and their depth (distance to its surface, (n,))."""
    import trimesh

    if proxy.mesh is None:
        return np.zeros((0, 3)), np.zeros(0)
    pm = proxy.mesh
    lo, hi = pm.bounds
    pitch = (proxy.volume / 400.0) ** (1.0 / 3.0)
    axes = [np.arange(lo[k] + pitch / 2, hi[k], pitch) for k in range(3)]
    grid = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, 3)
    pts, fidx = trimesh.sample.sample_surface(pm, 300, seed=_SEED + 1)
    normals = np.asarray(pm.face_normals)[fidx]
    extent = float(np.ptp(np.asarray(pm.vertices), axis=0).min())
    # Depths both relative to the part (thin and thick regions) and to the tolerance (near-surface
    # balls that hug the surface).
    steps = sorted({*(s * extent for s in (0.05, 0.15, 0.3)),
                    *(s * tolerance for s in (0.5, 1.0, 2.0) if s * tolerance < 0.5 * extent)})
    cand = np.concatenate([grid] + [pts - normals * s for s in steps])
    cand = cand[proxy.inside(cand)]
    d = proxy.distance(cand)
    # NOTE: centres a hair inside the surface are where the ray-parity inside test is least
    # reliable; surface-centred balls serve those places.
    keep = d >= 0.05 * tolerance
    return cand[keep], d[keep]


def _cover_matrix(cands: np.ndarray, targets: np.ndarray, chunk: int = 256) -> np.ndarray:
    """Packed bits (n_cand, ceil(n_target / 8)): candidate sphere i holds target ball j."""
    rows = []
    mm = np.einsum("ij,ij->i", targets[:, :3], targets[:, :3])
    for s in range(0, len(cands), chunk):
        c = cands[s:s + chunk]
        # PERF: |c|^2 - 2 c.m + |m|^2 through BLAS; this only steers the greedy choice, the radii
        # are recomputed from exact differences afterwards.
        d2 = np.einsum("ij,ij->i", c[:, :3], c[:, :3])[:, None] - 2.0 * c[:, :3] @ targets[:, :3].T + mm[None]
        reach = c[:, 3:] - targets[None, :, 3]
        held = (reach >= 0) & (d2 <= reach * reach)
        rows.append(np.packbits(held, axis=1))
    return np.concatenate(rows) if rows else np.zeros((0, (len(targets) + 7) // 8), dtype=np.uint8)


def _greedy(bits: np.ndarray, uncovered: np.ndarray, budget: int) -> tuple[list[int], np.ndarray]:
    """Lazy greedy set cover of the set bits of ``uncovered`` (packed) by rows of ``bits``, at most
    ``budget`` rows. Returns the rows chosen and the packed bits still uncovered."""
    uncovered = uncovered.copy()
    gains = np.bitwise_count(bits & uncovered).sum(axis=1, dtype=np.int64)
    left = int(np.bitwise_count(uncovered).sum())
    chosen: list[int] = []
    while left and len(chosen) < budget and len(gains):
        i = int(np.argmax(gains))
        g = int(np.bitwise_count(bits[i] & uncovered).sum())
        if g != gains[i]:
            # Gains only fall as targets get covered, so a stale best is re-scored and re-ranked.
            gains[i] = g
            continue
        if g == 0:
            break
        chosen.append(i)
        uncovered &= ~bits[i]
        gains[i] = -1
        left -= g
    return chosen, uncovered


def _need(centres: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """(k, m): the radius a sphere at centre i needs to hold target ball j."""
    return np.linalg.norm(targets[None, :, :3] - centres[:, None, :], axis=2) + targets[None, :, 3]


@dataclasses.dataclass
class _Solution:
    spheres: np.ndarray  # (k, 4)
    bound: float  # certified protrusion beyond the proxy
    exceeded: bool
    tolerance: float
    targets: np.ndarray
    h: float


def _solve(clean, proxy: _Proxy, targets: np.ndarray, h: float, interior: np.ndarray, depth: np.ndarray,
           tolerance: float, max_spheres: int) -> _Solution:
    """One cover at one tolerance (steps 3-5 of the module docstring); h <= tolerance unless the
    piece budget forced coarser pieces."""
    surface_r = max(tolerance, h)
    verts = np.asarray(clean.vertices, dtype=float)
    # Surface centres at the mesh's own vertices serve corners and edges, which interior balls of
    # protrusion <= tolerance cannot reach.
    cands = np.concatenate([np.column_stack([interior, depth + tolerance]),
                            np.column_stack([verts, np.full(len(verts), surface_r)])])
    cdepth = np.concatenate([depth, np.zeros(len(verts))])
    try:  # the smallest ball around all vertices, when it fits (small parts: one sphere)
        import trimesh

        bc, br = trimesh.nsphere.minimum_nsphere(verts)
        bd = float(proxy.signed_depth(np.asarray(bc, float)[None])[0])
        if br - bd <= tolerance:
            cands = np.vstack([cands, [*bc, br]])
            cdepth = np.append(cdepth, bd)
    except Exception:  # degenerate point sets
        pass
    everything = np.packbits(np.ones(len(targets), dtype=bool))
    chosen, uncovered = _greedy(_cover_matrix(cands, targets), everything, max_spheres)
    picked, pdepth = cands[chosen], cdepth[chosen]
    left = np.unpackbits(uncovered, count=len(targets)).astype(bool)
    if left.any() and len(chosen) < max_spheres:
        # Stalled: nothing holds these pieces within the tolerance (sharp corners, thin parts);
        # a ball on the piece itself does, protruding at most its radius.
        extra = np.column_stack([targets[left, :3], np.maximum(surface_r, targets[left, 3])])
        more, uncovered = _greedy(_cover_matrix(extra, targets), uncovered, max_spheres - len(chosen))
        picked = np.concatenate([picked, extra[more]])
        pdepth = np.concatenate([pdepth, np.zeros(len(more))])
        left = np.unpackbits(uncovered, count=len(targets)).astype(bool)
    centres, radii = picked[:, :3], picked[:, 3].copy()
    need = _need(centres, targets)
    exceeded = bool(left.any())
    if exceeded:
        # Out of spheres: each leftover piece goes to the sphere that then protrudes least.
        cols = np.flatnonzero(left)
        pick = np.argmin(need[:, cols] - pdepth[:, None], axis=0)
        np.maximum.at(radii, pick, need[pick, cols])
    # Each piece goes to the holding sphere that needs the least radius for it; every sphere then
    # shrinks to its own pieces, and spheres left without any are dropped.
    owner = np.argmin(np.where(need <= radii[:, None], need, np.inf), axis=0)
    radii = np.zeros(len(centres))
    np.maximum.at(radii, owner, need[owner, np.arange(len(targets))])
    used = np.isin(np.arange(len(centres)), owner)
    spheres = np.column_stack([centres, radii])[used]
    bound = float(max(0.0, (spheres[:, 3] - pdepth[used]).max()))
    return _Solution(spheres, bound, exceeded, tolerance, targets, h)


def spherize_mesh(mesh, max_spheres: int = DEFAULT_MAX_SPHERES, tolerance: float = DEFAULT_TOLERANCE,
                  samples: int = DEFAULT_SAMPLES) -> SphereSet:
    """Spheres (k, 4) [x, y, z, r] covering ``mesh`` (a trimesh.Trimesh), in the mesh's frame, metres.

    Every vertex and a fixed-seed sample of ``samples`` surface points lie inside the union (the
    whole surface does; see the module docstring). Each sphere protrudes at most ``tolerance``
    beyond the mesh when ``max_spheres`` spheres suffice for that; when they do not, the tolerance
    is relaxed step by step and the cover with the smallest certified protrusion is returned
    (``tolerance_used``, ``protrusion_bound`` say what was reached). Deterministic for a given input.
    """
    t0 = time.perf_counter()
    if isinstance(max_spheres, bool) or not isinstance(max_spheres, (int, np.integer)) or max_spheres < 1:
        raise ValueError(f"max_spheres must be an integer >= 1, got {max_spheres!r}")
    tolerance = float(tolerance)
    if not np.isfinite(tolerance) or tolerance <= 0:
        raise ValueError(f"tolerance must be finite and > 0 (metres), got {tolerance!r}")
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 0:
        raise ValueError(f"samples must be an integer >= 0, got {samples!r}")
    vertices = np.asarray(getattr(mesh, "vertices", None) if mesh is not None else None, dtype=float)
    if vertices.ndim != 2 or vertices.shape[1] != 3 or len(vertices) == 0:
        raise ValueError("mesh has no vertices")
    if not np.all(np.isfinite(vertices)):
        raise ValueError("mesh has non-finite vertices")
    max_spheres = int(max_spheres)

    with np.errstate(invalid="ignore", divide="ignore"):  # trimesh's mass properties of flat meshes
        clean = _clean(mesh)
        proxy = _Proxy(clean)
    interior, depth = _interior(proxy, tolerance)
    # The pieces stay those of the requested tolerance when it is relaxed: finer than needed, so
    # the relaxed covers lose nothing to piece size.
    targets, h = _targets(clean, tolerance)

    def solve(tol: float) -> _Solution:
        return _solve(clean, proxy, targets, h, interior, depth, tol, max_spheres)

    tries = [solve(tolerance)]
    while tries[-1].exceeded and len(tries) < RELAX_STEPS:
        tries.append(solve(tries[-1].tolerance * RELAX_FACTOR))
    if len(tries) > 1 and not tries[-1].exceeded:
        # One bisection step (geometric) between the last tolerance that did not fit and the first that did.
        tries.append(solve(float(np.sqrt(tries[-1].tolerance * tries[-2].tolerance))))
    best = min(tries, key=lambda s: (s.bound, len(s.spheres)))

    sample = _surface_sample(clean, samples)
    spheres = _finish(best.spheres, best.targets, [vertices, sample])
    points = np.concatenate([vertices, sample])
    coverage = float(_covered(points, spheres).mean())
    bound, measured = _protrusion(spheres, proxy)
    overhead = stderr = None
    if proxy.volume > 0:
        vol, err = union_volume(spheres)
        overhead, stderr = vol / proxy.volume, err / proxy.volume
    return SphereSet(spheres, measured, bound, overhead, stderr, coverage, proxy.kind, tolerance, best.tolerance,
                     max_spheres, best.exceeded, len(tries), int(len(best.targets)), best.h, proxy.volume,
                     time.perf_counter() - t0)


def _surface_sample(clean, samples: int) -> np.ndarray:
    import trimesh

    if samples == 0 or len(clean.faces) == 0:
        return np.zeros((0, 3))
    return np.asarray(trimesh.sample.sample_surface(clean, samples, seed=_SEED)[0], dtype=float)


def _finish(spheres: np.ndarray, targets: np.ndarray, point_sets) -> np.ndarray:
    """Round centres to _ROUND, pad and round radii up, and grow spheres until every target ball
    and every point is held (a safety net: the cover already holds them before rounding)."""
    s = spheres.copy()
    s[:, :3] = np.round(s[:, :3] / _ROUND) * _ROUND
    # Rounding moves a centre by at most sqrt(3)/2 * _ROUND; the pad absorbs that and float32.
    s[:, 3] = np.ceil((s[:, 3] + np.sqrt(3) / 2 * _ROUND + RADIUS_PAD) / _ROUND) * _ROUND
    for balls in [targets] + [np.column_stack([p, np.zeros(len(p))]) for p in point_sets]:
        if len(balls) == 0:
            continue
        need = _need(s[:, :3], balls)
        held = (need <= s[:, 3:]).any(axis=0)
        if not held.all():
            cols = np.flatnonzero(~held)
            pick = np.argmin(need[:, cols] - s[:, 3:], axis=0)
            for i in np.unique(pick):
                s[i, 3] = np.ceil((need[i, cols[pick == i]].max() + RADIUS_PAD) / _ROUND) * _ROUND
    return s


def _protrusion(spheres: np.ndarray, proxy: _Proxy) -> tuple[float, float]:
    """(certified bound, sampled measurement) of how far the union reaches outside the proxy."""
    depth = proxy.signed_depth(spheres[:, :3])
    bound = float(max(0.0, (spheres[:, 3] - depth).max()))
    dirs = _sphere_directions(_SPHERE_SURFACE_POINTS)
    pts = (spheres[:, None, :3] + spheres[:, None, 3:] * dirs[None]).reshape(-1, 3)
    if proxy.mesh is not None:
        pts = pts[~proxy.inside(pts)]
    return bound, float(proxy.distance(pts).max()) if len(pts) else 0.0
