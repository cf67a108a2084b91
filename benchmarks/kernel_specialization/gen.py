"""Prototype: emit a robot-specialized Clear(q) kernel (AVX2, 8 configurations per vector) as C++.

Reads a loaded simdplan Robot's kinematic program (robot._program: bodies, origins, joint kinds,
groups, spheres, self-collision pairs and their certified sphere-pair lists) and writes straight-line
code with every robot constant folded in:

- FK of every body (constant factors 0 and +-1 dropped, constant-only arithmetic done here, exactly
  as the float32 hardware would), in the same operation order as the generic kernel
  (cpp/include/simdplan/kin/fk.hh), so the world sphere centres are bit-identical;
- sin/cos with the same polynomial and reduction as cpp/include/simdplan/vec/math.hh;
- group bound / sphere placement (fk_point order), placed lazily per group;
- environment: run-time list of spheres (centre, radius) pre-broadcast to 8 lanes, tested per group
  bound then per sphere, distal groups first; static groups (body 0) tested once per call;
- self-collision: every group pair, bound against bound, then the certified sphere-pair list
  (with the same sphere-vs-bound prefilter) or every sphere pair (outer sphere vs inner bound first).

Only padding 0 is supported (radii folded). Answers are meant to equal robot.is_valid_many's.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

import numpy as np

f32 = np.float32


def exact_f32(x: Fraction) -> float:
    """x rounded to the nearest float32 (ties to even), computed exactly."""
    d = np.float32(float(x))
    cands = [np.nextafter(d, f32(-np.inf)), d, np.nextafter(d, f32(np.inf))]
    best = None
    for c in cands:
        if not np.isfinite(c):
            continue
        err = abs(Fraction(float(c)) - x)
        key = (err, int(np.frombuffer(np.float32(c).tobytes(), np.uint32)[0]) & 1)
        if best is None or key < best[0]:
            best = (key, c)
    return float(best[1])


class Val:
    """A lane vector: a float32 constant (same in every lane) or a named run-time vector."""

    __slots__ = ("c", "name")

    def __init__(self, c=None, name=None):
        self.c = None if c is None else float(f32(c))
        self.name = name

    @property
    def const(self):
        return self.c is not None


class Emitter:
    def __init__(self):
        self.lines: list[str] = []
        self.n = 0
        self.indent = 1

    def emit(self, s: str):
        self.lines.append("  " * self.indent + s)

    def fresh(self, expr: str, prefix="t") -> Val:
        self.n += 1
        name = f"{prefix}{self.n}"
        self.emit(f"const V {name} = {expr};")
        return Val(name=name)

    def ref(self, v: Val) -> str:
        if v.const:
            return f"F({float_lit(v.c)})"
        return v.name

    # arithmetic with folding; results bit-identical to running the op on the hardware
    def neg(self, a: Val) -> Val:
        if a.const:
            return Val(-a.c)
        return self.fresh(f"NEG({a.name})")

    def mul(self, a: Val, b: Val) -> Val:
        if a.const and b.const:
            return Val(float(f32(a.c) * f32(b.c)))
        if b.const and not a.const:
            a, b = b, a
        if a.const:  # b variable
            if a.c == 0.0:
                return Val(0.0)
            if a.c == 1.0:
                return b
            if a.c == -1.0:
                return self.neg(b)
        return self.fresh(f"{self.ref(a)} * {self.ref(b)}")

    def add(self, a: Val, b: Val) -> Val:
        if a.const and b.const:
            return Val(float(f32(a.c) + f32(b.c)))
        if a.const and a.c == 0.0:
            return b
        if b.const and b.c == 0.0:
            return a
        return self.fresh(f"{self.ref(a)} + {self.ref(b)}")

    def fma(self, a: Val, b: Val, c: Val) -> Val:
        """round(a * b + c), as _mm256_fmadd_ps."""
        if a.const and b.const and c.const:
            return Val(exact_f32(Fraction(a.c) * Fraction(b.c) + Fraction(c.c)))
        for x, y in ((a, b), (b, a)):
            if x.const:
                if x.c == 0.0:
                    return c
                if x.c == 1.0:
                    return self.add(y, c)
                if x.c == -1.0:
                    return self.add(self.neg(y), c)
        if c.const and c.c == 0.0:
            return self.mul(a, b)
        if a.const and b.const:  # product exact in float32? then add
            p = Fraction(a.c) * Fraction(b.c)
            if Fraction(float(f32(float(p)))) == p:
                return self.add(Val(float(p)), c)
        return self.fresh(f"FMA({self.ref(a)}, {self.ref(b)}, {self.ref(c)})")


def float_lit(x: float) -> str:
    x = float(f32(x))
    if x == 0.0:
        return "-0.0f" if math.copysign(1.0, x) < 0 else "0.0f"
    return f"{x.hex()}f" if False else repr_f32(x)


def repr_f32(x: float) -> str:
    # shortest decimal that round-trips through float32, then a float literal
    s = np.format_float_positional(f32(x), unique=True, trim="-")
    if "e" not in s and "." not in s:
        s += ".0"
    return s + "f"


def sincos(e: Emitter, x: Val):
    """Same sequence as vsincos (vec/math.hh)."""
    if x.const:
        raise NotImplementedError("constant joint value")
    X = x.name
    e.n += 1
    k = e.n
    e.emit(f"V s{k}, c{k}; SINCOS({X}, s{k}, c{k});")
    return Val(name=f"s{k}"), Val(name=f"c{k}")


def fk_body(e: Emitter, prog, b: int, frames: list, qv: list[Val]):
    o = [Val(float(v)) for v in np.asarray(prog.body_origin, dtype=np.float32)[b]]
    p = int(prog.body_parent[b])
    kind = int(prog.body_kind[b])
    if p < 0:
        T = list(o)
    else:
        P = frames[p]
        T = [None] * 12
        for i in range(3):
            a, bb, c = P[4 * i], P[4 * i + 1], P[4 * i + 2]
            for j in range(4):
                acc = e.fma(c, o[8 + j], P[4 * i + 3] if j == 3 else Val(0.0))
                acc = e.fma(bb, o[4 + j], acc)
                T[4 * i + j] = e.fma(a, o[j], acc)
    if kind != 0:
        d = int(prog.body_dof[b])
        value = e.fma(qv[d], Val(float(f32(prog.body_scale[b]))), Val(float(f32(prog.body_offset[b]))))
        if kind == 1:
            s, c = sincos(e, value)
            for i in range(3):
                c0, c1 = T[4 * i], T[4 * i + 1]
                T[4 * i] = e.fma(c, c0, e.mul(s, c1))
                T[4 * i + 1] = e.fma(c, c1, e.neg(e.mul(s, c0)))
        else:
            for i in range(3):
                T[4 * i + 3] = e.fma(value, T[4 * i + 2], T[4 * i + 3])
    frames.append(T)


def fk_point(e: Emitter, T, l):
    X, Y, Z = (Val(float(f32(v))) for v in l[:3])
    x = e.fma(T[0], X, e.fma(T[1], Y, e.fma(T[2], Z, T[3])))
    y = e.fma(T[4], X, e.fma(T[5], Y, e.fma(T[6], Z, T[7])))
    z = e.fma(T[8], X, e.fma(T[9], Y, e.fma(T[10], Z, T[11])))
    return x, y, z


def materialize(e: Emitter, v: Val) -> str:
    return e.ref(v)


PRELUDE = r"""// generated by benchmarks/kernel_specialization/gen.py for robot %(name)s: do not edit
#include <immintrin.h>
#include <stdint.h>
#include <math.h>
typedef __m256 V;
#define F(x) _mm256_set1_ps(x)
#define FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define NEG(a) _mm256_xor_ps(a, _mm256_set1_ps(-0.0f))
#define LT(a, b) _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_LT_OQ))
#define SINCOS(x, s_out, c_out) do { \
  const V j_ = _mm256_round_ps((x) * F(0.636619772367581343f), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC); \
  V r_ = FMA(NEG(j_), F(1.5703125f), (x)); \
  r_ = FMA(NEG(j_), F(4.837512969970703125e-4f), r_); \
  r_ = FMA(NEG(j_), F(7.54978995489188216e-8f), r_); \
  const V r2_ = r_ * r_; \
  V sp_ = FMA(F(-1.9515295891e-4f), r2_, F(8.3321608736e-3f)); \
  sp_ = FMA(sp_, r2_, F(-1.6666654611e-1f)); \
  const V sin_r_ = FMA(sp_ * r2_, r_, r_); \
  V cp_ = FMA(F(2.443315711809948e-5f), r2_, F(-1.388731625493765e-3f)); \
  cp_ = FMA(cp_, r2_, F(4.166664568298827e-2f)); \
  const V cos_r_ = FMA(cp_ * r2_, r2_, FMA(F(-0.5f), r2_, F(1.0f))); \
  const V k_ = j_ - F(4.0f) * _mm256_floor_ps(j_ * F(0.25f)); \
  const V odd_ = _mm256_or_ps(_mm256_cmp_ps(k_, F(1.0f), _CMP_EQ_OQ), _mm256_cmp_ps(k_, F(3.0f), _CMP_EQ_OQ)); \
  const V s_ = _mm256_blendv_ps(sin_r_, cos_r_, odd_); \
  const V c_ = _mm256_blendv_ps(cos_r_, sin_r_, odd_); \
  const V sn_ = _mm256_cmp_ps(k_, F(2.0f), _CMP_GE_OQ); \
  const V cn_ = _mm256_or_ps(_mm256_cmp_ps(k_, F(1.0f), _CMP_EQ_OQ), _mm256_cmp_ps(k_, F(2.0f), _CMP_EQ_OQ)); \
  s_out = _mm256_blendv_ps(s_, NEG(s_), sn_); \
  c_out = _mm256_blendv_ps(c_, NEG(c_), cn_); \
} while (0)

// environment spheres pre-broadcast: 4 vectors (x, y, z, r) per obstacle
struct Obs { V x, y, z, r; };

static inline int hit2(V ax, V ay, V az, V ar, V bx, V by, V bz, V br) {
  const V dx = ax - bx, dy = ay - by, dz = az - bz;
  const V rr = ar + br;
  return LT(FMA(dx, dx, FMA(dy, dy, dz * dz)), rr * rr);
}
"""


class Tables:
    """The robot's kinematic program as the generators read it (arrays of numbers, no objects)."""

    def __init__(self, prog):
        self.dof = prog.dof
        self.nb = len(prog.body_parent)
        self.spheres = np.asarray(prog.spheres, dtype=np.float32)
        self.gbound = np.asarray(prog.group_bound, dtype=np.float32)
        self.gbody = [int(x) for x in prog.group_body]
        self.gbeg = [int(x) for x in prog.group_begin]
        self.gend = [int(x) for x in prog.group_end]
        self.ng = len(self.gbody)
        self.pairs = np.asarray(prog.pairs).reshape(-1, 2)
        self.pr = None if prog.pair_ranges is None else np.asarray(prog.pair_ranges).reshape(-1, 2)
        self.sp = None if prog.sphere_pairs is None else np.asarray(prog.sphere_pairs).reshape(-1, 2)
        self.lower = np.asarray(prog.lower, dtype=np.float64)
        self.upper = np.asarray(prog.upper, dtype=np.float64)
        self.wrap = np.asarray(prog.wrap)


def sphere_pair_lines(t: Tables, p: int, a: int, g: int, bnames: dict, arrays: str, leave: str, compact: bool,
                      base: int) -> list[str]:
    """The sphere tests of self-collision group pair p (groups a, g), both groups placed, lanes in
    ``cand``: the certified sphere-pair list where the pair has one (each listed sphere of a against
    g's bound first), else every sphere of the larger group against the smaller one's bound, then its
    spheres. ``arrays``: the prefix of the sphere-centre arrays ("" or "S->"); ``leave``: the
    statement that ends the call once every lane collides; ``base``: the indentation in spaces."""
    pad = " " * base
    ref = lambda k: f"{arrays}sx[{k}], {arrays}sy[{k}], {arrays}sz[{k}]"  # noqa: E731
    lines = []
    gx, gy, gz, gr = bnames[g]
    if t.pr is not None and t.pr[p, 0] >= 0:
        cur = -1
        first = True
        for k in range(t.pr[p, 0], t.pr[p, 1]):
            i, j = int(t.sp[k, 0]), int(t.sp[k, 1])
            ri, rj = repr_f32(t.spheres[i][3]), repr_f32(t.spheres[j][3])
            if i != cur:
                if not first:
                    lines.append(pad + "}")
                first = False
                cur = i
                lines.append(pad + f"{{ int near = hit2({ref(i)}, F({ri}), {gx}, {gy}, {gz}, {gr}) & cand;")
            lines.append(pad + f"  if (near) {{ const int h = hit2({ref(i)}, F({ri}), {ref(j)}, F({rj})) & near;"
                         f" if (h) {{ done |= h; if (done == ALL) {leave}; near &= ~h; cand &= ~h; }} }}")
        if not first:
            lines.append(pad + "}")
        return lines
    na, ngs = t.gend[a] - t.gbeg[a], t.gend[g] - t.gbeg[g]
    outer, inner = (a, g) if na >= ngs else (g, a)
    bix, biy, biz, bir = bnames[inner]
    for i in range(t.gbeg[outer], t.gend[outer]):
        ri = repr_f32(t.spheres[i][3])
        lines.append(pad + f"{{ const int near = hit2({ref(i)}, F({ri}), {bix}, {biy}, {biz}, {bir}) & cand;")
        lines.append(pad + "  if (near) {")
        if compact:
            lines.append(pad + f"    for (int j = {t.gbeg[inner]}; j < {t.gend[inner]}; ++j) {{ const int h = hit2({ref(i)}, "
                         f"F({ri}), {arrays}sx[j], {arrays}sy[j], {arrays}sz[j], F(kRadius[j])) & near;"
                         f" if (h) {{ done |= h; if (done == ALL) {leave}; cand &= ~h; }} }}")
        else:
            for j in range(t.gbeg[inner], t.gend[inner]):
                rj = repr_f32(t.spheres[j][3])
                lines.append(pad + f"    {{ const int h = hit2({ref(i)}, F({ri}), {ref(j)}, F({rj})) & near;"
                             f" if (h) {{ done |= h; if (done == ALL) {leave}; cand &= ~h; }} }}")
        lines.append(pad + "  }")
        lines.append(pad + "}")
    return lines


def generate(robot, name: str = "robot", compact: bool = False) -> str:
    """compact: unlisted self-collision pairs loop over the inner group's spheres at run time."""
    prog = robot._program
    t = Tables(prog)
    dof, nb, spheres, gbound, gbody, gbeg, gend, ng = t.dof, t.nb, t.spheres, t.gbound, t.gbody, t.gbeg, t.gend, t.ng
    pairs, lower, upper, wrap = t.pairs, t.lower, t.upper, t.wrap

    out = [PRELUDE % {"name": name}]
    out.append(f"enum {{ DOF = {dof}, N_SPHERES = {len(spheres)} }};")
    # ---------------- FK, symbolic ----------------
    e = Emitter()
    e.indent = 2
    qv = [Val(name=f"q{j}") for j in range(dof)]
    frames: list = []
    for b in range(nb):
        e.emit(f"// body {b}")
        fk_body(e, prog, b, frames, qv)
    fk_lines = e.lines
    e.lines = []

    static_groups = [g for g in range(ng) if gbody[g] == 0]

    # sphere centre values (lazy per group): emitted in a block guarded by placed_g
    def place_group(g, em: Emitter):
        T = frames[gbody[g]]
        res = []
        for k in range(gbeg[g], gend[g]):
            x, y, z = fk_point(em, T, spheres[k])
            res.append((x, y, z))
        return res

    # Declarations for sphere centres as variables (so lazily placed values are visible later)
    body = []
    body.append("    bool placed[%d] = {};" % ng)
    body.append("    V sx[%d], sy[%d], sz[%d];" % (len(spheres), len(spheres), len(spheres)))

    def ensure_placed(g, indent):
        if compact:
            return [("  " * indent) + f"if (!placed[{g}]) place_{g}();"]
        em = Emitter()
        em.indent = indent + 1
        em.n = e.n
        vals = place_group(g, em)
        e.n = em.n
        lines = [("  " * indent) + f"if (!placed[{g}]) {{"] + em.lines
        for k, (x, y, z) in zip(range(gbeg[g], gend[g]), vals):
            lines.append(("  " * (indent + 1)) + f"sx[{k}] = {em.ref(x)}; sy[{k}] = {em.ref(y)}; sz[{k}] = {em.ref(z)};")
        lines.append(("  " * (indent + 1)) + f"placed[{g}] = true;")
        lines.append(("  " * indent) + "}")
        return lines

    # group bounds (always computed, straight-line)
    bound_lines = []
    bnames = {}
    em = Emitter()
    em.indent = 2
    em.n = e.n
    for g in range(ng):
        x, y, z = fk_point(em, frames[gbody[g]], gbound[g])
        bnames[g] = (em.ref(x), em.ref(y), em.ref(z), f"F({repr_f32(gbound[g][3])})")
    e.n = em.n
    bound_lines = em.lines

    env_lines = []
    if compact:  # each group's placement once, out of line, called where first needed
        for g in range(ng):
            if gbody[g] == 0 and not any(g in (int(a), int(b)) for a, b in pairs):
                continue
            em = Emitter()
            em.indent = 3
            em.n = e.n
            vals = place_group(g, em)
            e.n = em.n
            env_lines.append(f"    auto place_{g} = [&]() __attribute__((noinline)) {{")
            env_lines += em.lines
            for k, (x, y, z) in zip(range(gbeg[g], gend[g]), vals):
                env_lines.append(f"      sx[{k}] = {em.ref(x)}; sy[{k}] = {em.ref(y)}; sz[{k}] = {em.ref(z)};")
            env_lines.append(f"      placed[{g}] = true;")
            env_lines.append("    };")
    # environment, distal groups first, static groups skipped (tested once per call)
    for g in range(ng - 1, -1, -1):
        if gbody[g] == 0:
            continue
        bx, by, bz, br = bnames[g]
        env_lines.append(f"    // group {g} vs environment")
        env_lines.append("    for (int32_t o = 0; o < n_obs; ++o) {")
        env_lines.append(f"      int cand = hit2({bx}, {by}, {bz}, {br}, obs[o].x, obs[o].y, obs[o].z, obs[o].r) & ~done;")
        env_lines.append("      if (!cand) continue;")
        env_lines += ensure_placed(g, 3)
        for k in range(gbeg[g], gend[g]):
            env_lines.append(f"      {{ const int h = hit2(sx[{k}], sy[{k}], sz[{k}], F({repr_f32(spheres[k][3])}), obs[o].x, obs[o].y, obs[o].z, obs[o].r) & cand;"
                             f" if (h) {{ done |= h; if (done == ALL) goto finish; cand &= ~h; if (!cand) continue; }} }}")
        env_lines.append("    }")

    # self-collision
    self_lines = []
    for p, (a, g) in enumerate(pairs):
        a, g = int(a), int(g)
        ax, ay, az, ar = bnames[a]
        gx, gy, gz, gr = bnames[g]
        self_lines.append(f"    // pair {p}: groups {a}, {g}")
        self_lines.append("    {")
        self_lines.append(f"      int cand = hit2({ax}, {ay}, {az}, {ar}, {gx}, {gy}, {gz}, {gr}) & ~done;")
        self_lines.append("      if (cand) {")
        self_lines += ensure_placed(a, 4)
        self_lines += ensure_placed(g, 4)
        self_lines += sphere_pair_lines(t, p, a, g, bnames, "", "goto finish", compact, 8)
        self_lines.append("      }")
        self_lines.append("    }")

    # static groups: constant world spheres; emit a table tested once per call
    stat = []
    for g in static_groups:
        for k in range(gbeg[g], gend[g]):
            x, y, z = fk_point(e, frames[0], spheres[k])
            assert x.const and y.const and z.const
            stat.append((x.c, y.c, z.c, float(spheres[k][3])))

    out.append("static const float kStatic[][4] = {")
    out += [f"  {{{repr_f32(s[0])}, {repr_f32(s[1])}, {repr_f32(s[2])}, {repr_f32(s[3])}}}," for s in stat] or ["  {0, 0, 0, 0},"]
    out.append("};")
    out.append(f"static const int kNStatic = {len(stat)};")
    out.append("static const float kRadius[] = {" + ", ".join(repr_f32(r) for r in spheres[:, 3]) + "};")
    out.append("static const double kLower[] = {" + ", ".join(repr(float(v)) for v in lower) + "};")
    out.append("static const double kUpper[] = {" + ", ".join(repr(float(v)) for v in upper) + "};")
    out.append("static const unsigned char kWrap[] = {" + ", ".join(str(int(v)) for v in wrap) + "};")
    out.append(r"""
// 8 configurations (rows of qf, DOF floats each); returns the lanes in collision (bits), given the
// lanes already decided in `done` (bits).
__attribute__((noinline)) static int check8(const float* qf, int64_t base, int64_t n, int done, const Obs* obs, int32_t n_obs) {
  const int ALL = 0xFF;
  float col[8];
""")
    body_q = []
    for j in range(dof):
        body_q.append(f"  for (int l = 0; l < 8; ++l) col[l] = qf[(base + l < n ? base + l : n - 1) * DOF + {j}];")
        body_q.append(f"  const V q{j} = _mm256_loadu_ps(col);")
    out += body_q
    out.append("  {")
    out += fk_lines
    out += bound_lines
    out += body
    out += env_lines
    out += self_lines
    out.append("  }")
    out.append("finish:")
    out.append("  return done;")
    out.append("}")
    out.append(r"""
// Converts rows like RobotModel::convert_row (continuous joints wrapped, limits checked in double).
static int convert_row(const double* q, int64_t r, float* o) {
  int in_limits = 1;
  for (int j = 0; j < DOF; ++j) {
    double v = q[r * DOF + j];
    if (!isfinite(v)) return -1;
    if (kWrap[j]) v = remainder(v, 2 * 3.14159265358979323846);
    else if (v < kLower[j] || v > kUpper[j]) in_limits = 0;
    o[j] = (float)v;
  }
  return in_limits;
}

// Is-valid for n rows of q (n x DOF doubles, row-major) against n_obs environment spheres
// (obs4: x, y, z, r per sphere): out[i] = 1 when row i is within limits and collision-free.
// Returns 0, or -1 on a non-finite value.
__attribute__((noinline)) static int is_valid_many_impl(const double* q, int64_t n, const float* obs4, int32_t n_obs, uint8_t* out) {
  Obs* obs = (Obs*)_mm_malloc(sizeof(Obs) * (n_obs > 0 ? n_obs : 1), 32);
  for (int32_t o = 0; o < n_obs; ++o) {
    obs[o].x = F(obs4[4 * o]); obs[o].y = F(obs4[4 * o + 1]); obs[o].z = F(obs4[4 * o + 2]); obs[o].r = F(obs4[4 * o + 3]);
  }
  // static spheres are the same in every lane: tested once per call
  int static_hit = 0;
  for (int32_t o = 0; o < n_obs && !static_hit; ++o)
    for (int k = 0; k < kNStatic && !static_hit; ++k) {
      const float dx = kStatic[k][0] - obs4[4 * o], dy = kStatic[k][1] - obs4[4 * o + 1], dz = kStatic[k][2] - obs4[4 * o + 2];
      const float rr = kStatic[k][3] + obs4[4 * o + 3];
      if (fmaf(dx, dx, fmaf(dy, dy, dz * dz)) < rr * rr) static_hit = 1;
    }
  enum { kBlock = 256 };
  float buf[kBlock * DOF];
  int rc = 0;
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int64_t m = (n - b0 < kBlock) ? n - b0 : kBlock;
    for (int64_t r = 0; r < m; ++r) {
      const int c = convert_row(q, b0 + r, buf + r * DOF);
      if (c < 0) { rc = -1; goto end; }
      out[b0 + r] = (uint8_t)(c && !static_hit);
    }
    for (int64_t s = 0; s < m; s += 8) {
      const int64_t count = (m - s < 8) ? m - s : 8;
      int skip = 0;
      for (int l = 0; l < 8; ++l)
        if (l >= count || !out[b0 + s + l]) skip |= 1 << l;
      if (skip == 0xFF) continue;
      const int hit = check8(buf + s * DOF, 0, count, skip, obs, n_obs) & ~skip;
      for (int l = 0; l < count; ++l)
        if (hit & (1 << l)) out[b0 + s + l] = 0;
    }
  }
end:
  _mm_free(obs);
  return rc;
}

// the exported entry point (a thin wrapper: valgrind names the local function reliably)
extern "C" int sp_is_valid_many(const double* q, int64_t n, const float* obs4, int32_t n_obs, uint8_t* out) {
  return is_valid_many_impl(q, n, obs4, n_obs, out);
}

// World sphere centres for n rows of float q (n x DOF): out n x N_SPHERES x 3 (for bit-exact checks).
extern "C" void sp_fk_spheres(const float* qf, int64_t n, float* out) {
  for (int64_t s = 0; s < n; s += 8) {
    const int64_t count = (n - s < 8) ? n - s : 8;
    sp_fk8(qf + s * DOF, count, out + s * N_SPHERES * 3);
  }
}
""")
    # FK-only function for verification: all spheres placed
    fk = [r"static void sp_fk8(const float* qf, int64_t n, float* out) {", "  const int64_t base = 0;", "  float col[8];"]
    fk += body_q
    em2 = Emitter()
    em2.indent = 1
    em2.n = e.n
    fk += fk_lines
    fk.append("  alignas(32) float bx[8], by[8], bz[8];")
    for g in range(ng):
        vals = place_group(g, em2)
        fk += em2.lines
        em2.lines = []
        for k, (x, y, z) in zip(range(gbeg[g], gend[g]), vals):
            fk.append(f"  _mm256_store_ps(bx, {em2.ref(x)}); _mm256_store_ps(by, {em2.ref(y)}); _mm256_store_ps(bz, {em2.ref(z)});")
            fk.append(f"  for (int l = 0; l < n; ++l) {{ out[(l * N_SPHERES + {k}) * 3] = bx[l]; out[(l * N_SPHERES + {k}) * 3 + 1] = by[l]; out[(l * N_SPHERES + {k}) * 3 + 2] = bz[l]; }}")
    fk.append("}")
    # place sp_fk8 before sp_fk_spheres
    text = "\n".join(out)
    marker = "// World sphere centres"
    text = text.replace(marker, "\n".join(fk) + "\n\n" + marker)
    return text


SPLIT_DRIVER_TAIL = r"""
// Converts rows like RobotModel::convert_row (continuous joints wrapped, limits checked in double).
static int convert_row(const double* q, int64_t r, float* o) {
  int in_limits = 1;
  for (int j = 0; j < DOF; ++j) {
    double v = q[r * DOF + j];
    if (!isfinite(v)) return -1;
    if (kWrap[j]) v = remainder(v, 2 * 3.14159265358979323846);
    else if (v < kLower[j] || v > kUpper[j]) in_limits = 0;
    o[j] = (float)v;
  }
  return in_limits;
}

__attribute__((noinline)) static int is_valid_many_impl(const double* q, int64_t n, const float* obs4, int32_t n_obs, uint8_t* out) {
  Obs* obs = (Obs*)_mm_malloc(sizeof(Obs) * (n_obs > 0 ? n_obs : 1), 32);
  for (int32_t o = 0; o < n_obs; ++o) {
    obs[o].x = F(obs4[4 * o]); obs[o].y = F(obs4[4 * o + 1]); obs[o].z = F(obs4[4 * o + 2]); obs[o].r = F(obs4[4 * o + 3]);
  }
  int static_hit = 0;
  for (int32_t o = 0; o < n_obs && !static_hit; ++o)
    for (int k = 0; k < kNStatic && !static_hit; ++k) {
      const float dx = kStatic[k][0] - obs4[4 * o], dy = kStatic[k][1] - obs4[4 * o + 1], dz = kStatic[k][2] - obs4[4 * o + 2];
      const float rr = kStatic[k][3] + obs4[4 * o + 3];
      if (fmaf(dx, dx, fmaf(dy, dy, dz * dz)) < rr * rr) static_hit = 1;
    }
  enum { kBlock = 256 };
  float buf[kBlock * DOF];
  int rc = 0;
  for (int64_t b0 = 0; b0 < n; b0 += kBlock) {
    const int64_t m = (n - b0 < kBlock) ? n - b0 : kBlock;
    for (int64_t r = 0; r < m; ++r) {
      const int c = convert_row(q, b0 + r, buf + r * DOF);
      if (c < 0) { rc = -1; goto end; }
      out[b0 + r] = (uint8_t)(c && !static_hit);
    }
    for (int64_t s = 0; s < m; s += 8) {
      const int64_t count = (m - s < 8) ? m - s : 8;
      int skip = 0;
      for (int l = 0; l < 8; ++l)
        if (l >= count || !out[b0 + s + l]) skip |= 1 << l;
      if (skip == 0xFF) continue;
      const int hit = check8(buf + s * DOF, 0, count, skip, obs, n_obs) & ~skip;
      for (int l = 0; l < count; ++l)
        if (hit & (1 << l)) out[b0 + s + l] = 0;
    }
  }
end:
  _mm_free(obs);
  return rc;
}

extern "C" int sp_is_valid_many(const double* q, int64_t n, const float* obs4, int32_t n_obs, uint8_t* out) {
  return is_valid_many_impl(q, n, obs4, n_obs, out);
}

// World sphere centres (every group placed by the same out-of-line functions as Clear uses).
static void sp_fk8(const float* qf, int64_t n, float* out) {
  float col[8];
  alignas(32) State S;
  for (int j = 0; j < DOF; ++j) {
    for (int l = 0; l < 8; ++l) col[l] = qf[(l < n ? l : n - 1) * DOF + j];
    S.q[j] = _mm256_loadu_ps(col);
  }
  for (int g = 0; g < N_GROUPS; ++g) S.placed[g] = 0;
  sp_fk(&S);
  sp_place_all(&S);
  alignas(32) float bx[8], by[8], bz[8];
  for (int k = 0; k < N_SPHERES; ++k) {
    _mm256_store_ps(bx, S.sx[k]); _mm256_store_ps(by, S.sy[k]); _mm256_store_ps(bz, S.sz[k]);
    for (int l = 0; l < n; ++l) { out[(l * N_SPHERES + k) * 3] = bx[l]; out[(l * N_SPHERES + k) * 3 + 1] = by[l]; out[(l * N_SPHERES + k) * 3 + 2] = bz[l]; }
  }
}

extern "C" void sp_fk_spheres(const float* qf, int64_t n, float* out) {
  for (int64_t s = 0; s < n; s += 8) {
    const int64_t count = (n - s < 8) ? n - s : 8;
    sp_fk8(qf + s * DOF, count, out + s * N_SPHERES * 3);
  }
}
"""


def generate_split(robot, name: str = "robot", n_files: int = 2, compact: bool = False) -> dict:
    """The same kernel as generate(), as several translation units (file name -> source):

    - ``kernel.hh``: prelude, constants, the shared per-batch State (joint vectors, the variable FK
      frame entries the placement needs, variable group-bound coordinates, placed sphere centres,
      placed flags) and the declarations;
    - ``fk.cc``: sp_fk (FK of every body + group bounds, straight-line, constants folded), one
      noinline sp_place_G per group, sp_env (environment, distal groups first);
    - ``self_K.cc`` (K < n_files): one noinline sp_pair_P per self-collision group pair (placement of
      its two groups if needed, then its sphere tests), pairs spread over the files by source size;
    - ``driver.cc``: check8 (sp_fk, sp_env, then each pair's bound-vs-bound test inline and a call to
      its function only when some lane's bounds overlap), the float64 conversion/limits, the entry points.

    Every test is the same operation on the same values as in generate(), so answers and world sphere
    centres are bit-identical; only the order of calls and where values live (memory) differ.
    """
    prog = robot._program
    t = Tables(prog)
    dof, nb, spheres, gbound, gbody, gbeg, gend, ng = t.dof, t.nb, t.spheres, t.gbound, t.gbody, t.gbeg, t.gend, t.ng
    pairs, lower, upper, wrap = t.pairs, t.lower, t.upper, t.wrap

    # ---- FK + bounds (one function) ----
    e = Emitter()
    e.indent = 1
    qv = [Val(name=f"q{j}") for j in range(dof)]
    frames: list = []
    for b in range(nb):
        e.emit(f"// body {b}")
        fk_body(e, prog, b, frames, qv)
    bvals = {}
    for g in range(ng):
        bvals[g] = fk_point(e, frames[gbody[g]], gbound[g])
    fk_lines = e.lines
    e.lines = []

    # slots in State for the variable values used outside sp_fk
    fr_slot: dict = {}
    for g in range(ng):
        for v in frames[gbody[g]]:
            if not v.const and v.name not in fr_slot:
                fr_slot[v.name] = len(fr_slot)
    bd_slot: dict = {}
    for g in range(ng):
        for v in bvals[g]:
            if not v.const and v.name not in bd_slot:
                bd_slot[v.name] = len(bd_slot)

    def bref(v: Val) -> str:
        return f"F({repr_f32(v.c)})" if v.const else f"S->bd[{bd_slot[v.name]}]"

    bnames = {g: tuple(bref(v) for v in bvals[g]) + (f"F({repr_f32(gbound[g][3])})",) for g in range(ng)}

    def ensure(g, indent):
        return [("  " * indent) + f"if (!S->placed[{g}]) sp_place_{g}(S);"]

    def sref(k):
        return f"S->sx[{k}], S->sy[{k}], S->sz[{k}]"

    # ---- header ----
    hh = [PRELUDE % {"name": name}]
    hh.append(f"enum {{ DOF = {dof}, N_SPHERES = {len(spheres)}, N_GROUPS = {ng}, N_FR = {max(1, len(fr_slot))}, N_BD = {max(1, len(bd_slot))} }};")
    hh.append("static const float kRadius[] = {" + ", ".join(repr_f32(r) for r in spheres[:, 3]) + "};")
    hh.append("struct State {\n  V q[DOF];\n  V fr[N_FR];\n  V bd[N_BD];\n  V sx[N_SPHERES], sy[N_SPHERES], sz[N_SPHERES];\n"
              "  unsigned char placed[N_GROUPS];\n};")
    hh.append("void sp_fk(State* S);")
    hh.append("void sp_place_all(State* S);")
    hh.append("int sp_env(State* S, int done, const Obs* obs, int32_t n_obs);")
    for g in range(ng):
        hh.append(f"void sp_place_{g}(State* S);")
    for p in range(len(pairs)):
        hh.append(f"int sp_pair_{p}(State* S, int cand, int done);")
    header = "\n".join(hh) + "\n"
    inc = '#include "kernel.hh"\n'

    # ---- fk.cc ----
    fk = [inc, "__attribute__((noinline)) void sp_fk(State* S) {"]
    fk += [f"  const V q{j} = S->q[{j}];" for j in range(dof)]
    fk += fk_lines
    fk += [f"  S->fr[{s}] = {n};" for n, s in fr_slot.items()]
    fk += [f"  S->bd[{s}] = {n};" for n, s in bd_slot.items()]
    fk.append("}")
    for g in range(ng):
        em = Emitter()
        em.indent = 1
        em.n = e.n
        T = frames[gbody[g]]
        seen = set()
        decl = []
        for v in T:
            if not v.const and v.name not in seen:
                seen.add(v.name)
                decl.append(f"  const V {v.name} = S->fr[{fr_slot[v.name]}];")
        vals = []
        for k in range(gbeg[g], gend[g]):
            vals.append(fk_point(em, T, spheres[k]))
        e.n = em.n
        fk.append(f"__attribute__((noinline)) void sp_place_{g}(State* S) {{")
        fk += decl
        fk += em.lines
        for k, (x, y, z) in zip(range(gbeg[g], gend[g]), vals):
            fk.append(f"  S->sx[{k}] = {em.ref(x)}; S->sy[{k}] = {em.ref(y)}; S->sz[{k}] = {em.ref(z)};")
        fk.append(f"  S->placed[{g}] = 1;")
        fk.append("}")
    fk.append("void sp_place_all(State* S) {")
    fk += [f"  sp_place_{g}(S);" for g in range(ng)]
    fk.append("}")
    fk.append("__attribute__((noinline)) int sp_env(State* S, int done, const Obs* obs, int32_t n_obs) {")
    fk.append("  const int ALL = 0xFF;")
    for g in range(ng - 1, -1, -1):
        if gbody[g] == 0:
            continue
        bx, by, bz, br = bnames[g]
        fk.append(f"  // group {g} vs environment")
        fk.append("  for (int32_t o = 0; o < n_obs; ++o) {")
        fk.append(f"    int cand = hit2({bx}, {by}, {bz}, {br}, obs[o].x, obs[o].y, obs[o].z, obs[o].r) & ~done;")
        fk.append("    if (!cand) continue;")
        fk += ensure(g, 2)
        for k in range(gbeg[g], gend[g]):
            fk.append(f"    {{ const int h = hit2({sref(k)}, F({repr_f32(spheres[k][3])}), obs[o].x, obs[o].y, obs[o].z, obs[o].r) & cand;"
                      f" if (h) {{ done |= h; if (done == ALL) return done; cand &= ~h; if (!cand) continue; }} }}")
        fk.append("  }")
    fk.append("  return done;")
    fk.append("}")

    # ---- one function per self-collision pair ----
    pair_src = []
    for p, (a, g) in enumerate(pairs):
        a, g = int(a), int(g)
        L = [f"// pair {p}: groups {a}, {g}", f"__attribute__((noinline)) int sp_pair_{p}(State* S, int cand, int done) {{",
             "  const int ALL = 0xFF;"]
        L += ensure(a, 1)
        L += ensure(g, 1)
        L += sphere_pair_lines(t, p, a, g, bnames, "S->", "return done", compact, 2)
        L.append("  return done;")
        L.append("}")
        pair_src.append("\n".join(L))
    # spread the pairs over the files, biggest first, each to the currently smallest file
    n_files = max(1, n_files)
    files = [[] for _ in range(n_files)]
    size = [0] * n_files
    for p in sorted(range(len(pairs)), key=lambda p: -len(pair_src[p])):
        k = size.index(min(size))
        files[k].append(p)
        size[k] += len(pair_src[p])

    # ---- driver ----
    stat = []
    ev = Emitter()
    for g in range(ng):
        if gbody[g] != 0:
            continue
        for k in range(gbeg[g], gend[g]):
            x, y, z = fk_point(ev, frames[0], spheres[k])
            assert x.const and y.const and z.const
            stat.append((x.c, y.c, z.c, float(spheres[k][3])))
    dr = [inc]
    dr.append("static const float kStatic[][4] = {")
    dr += [f"  {{{repr_f32(s[0])}, {repr_f32(s[1])}, {repr_f32(s[2])}, {repr_f32(s[3])}}}," for s in stat] or ["  {0, 0, 0, 0},"]
    dr.append("};")
    dr.append(f"static const int kNStatic = {len(stat)};")
    dr.append("static const double kLower[] = {" + ", ".join(repr(float(v)) for v in lower) + "};")
    dr.append("static const double kUpper[] = {" + ", ".join(repr(float(v)) for v in upper) + "};")
    dr.append("static const unsigned char kWrap[] = {" + ", ".join(str(int(v)) for v in wrap) + "};")
    dr.append("__attribute__((noinline)) static int check8(const float* qf, int64_t base, int64_t n, int done, const Obs* obs, int32_t n_obs) {")
    dr.append("  const int ALL = 0xFF;")
    dr.append("  float col[8];")
    dr.append("  alignas(32) State st;")
    dr.append("  State* const S = &st;")
    for j in range(dof):
        dr.append(f"  for (int l = 0; l < 8; ++l) col[l] = qf[(base + l < n ? base + l : n - 1) * DOF + {j}];")
        dr.append(f"  st.q[{j}] = _mm256_loadu_ps(col);")
    dr.append("  for (int g = 0; g < N_GROUPS; ++g) st.placed[g] = 0;")
    dr.append("  sp_fk(S);")
    dr.append("  done = sp_env(S, done, obs, n_obs);")
    dr.append("  if (done == ALL) return done;")
    for p, (a, g) in enumerate(pairs):
        a, g = int(a), int(g)
        ax, ay, az, ar = bnames[a]
        gx, gy, gz, gr = bnames[g]
        dr.append(f"  {{ const int cand = hit2({ax}, {ay}, {az}, {ar}, {gx}, {gy}, {gz}, {gr}) & ~done;"
                  f" if (cand) {{ done = sp_pair_{p}(S, cand, done); if (done == ALL) return done; }} }}")
    dr.append("  return done;")
    dr.append("}")
    dr.append(SPLIT_DRIVER_TAIL)

    out = {"kernel.hh": header, "fk.cc": "\n".join(fk) + "\n", "driver.cc": "\n".join(dr) + "\n"}
    for k in range(n_files):
        out[f"self_{k}.cc"] = inc + "\n".join(pair_src[p] for p in sorted(files[k])) + "\n"
    return out



def main(argv=None):
    import argparse

    ap = argparse.ArgumentParser()
    ap.add_argument("robot")
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--compact", action="store_true", help="loops for the inner spheres of unlisted pairs")
    ap.add_argument("--split", type=int, default=0, metavar="N",
                    help="write the split kernel (N self-collision files + fk.cc, driver.cc, kernel.hh) into directory OUT")
    a = ap.parse_args(argv)
    from common import load_robot

    if a.split:
        import os
        os.makedirs(a.out, exist_ok=True)
        for fn, text in generate_split(load_robot(a.robot), a.robot, a.split, a.compact).items():
            with open(os.path.join(a.out, fn), "w") as f:
                f.write(text)
            print(f"{os.path.join(a.out, fn)}: {len(text.splitlines())} lines, {len(text)} bytes")
        return
    src = generate(load_robot(a.robot), a.robot, a.compact)
    with open(a.out, "w") as f:
        f.write(src)
    print(f"{a.out}: {len(src.splitlines())} lines, {len(src)} bytes")


if __name__ == "__main__":
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    main()
