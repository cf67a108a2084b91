"""C++ source of a kernel specialized for one robot: its own pass for the core's check loops.

The generic kernels (cpp/include/simdplan/collision/validity.hh) read the robot's tables at run time;
``generate`` writes the same work with the robot's constants folded in:

- ``body_B``: the frame of body B (its ancestors' first, when not yet computed), straight-line. Each
  value is the generic kernel's operation on the same inputs in the same order (kin/fk.hh); only
  operations whose result is exact are done here instead (x * 0, x * 1, constant-only arithmetic,
  rounded to float32 exactly), so the frames are the generic kernel's bits (up to the sign of a zero).
  Frames stay on demand, as in the generic kernel: a pass that ends at its first test (the collision
  hint) computes only the bodies that test needs. The core's environment tests reach them through
  LaneScratch::frames_of;
- ``bound_G``, ``place_G``: a group's bound centre and its spheres' centres (kin/fk.hh fk_point);
- ``block_K`` / ``self_pairs``: the pair blocks in the generic order, each block's and pair's bounds,
  then the sphere tests of the certified sphere-pair lists (or of every sphere pair of small unlisted
  pairs), unrolled with the radii folded. Large unlisted pairs, and listed pairs when the padding
  exceeds the lists' validity, call the generic pair test after the bound test (the same tests, read
  from tables).

The environment part stays the core's (obstacle kinds, trees, clouds: KernelTable::support), so the
library compiles only the robot's part. The source is compiled once per ISA (``SIMDPLAN_ISA_*``,
``SIMDPLAN_NS``) against the headers shipped in the wheel (simdplan/include).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

GENERATOR_VERSION = 6  # bump whenever the emitted code changes: it is part of the cache key

# Unlisted pairs with more sphere tests than this run the generic loop after their bound test.
# PERF: unlisted pairs are links several joints apart; unrolled up to 64 tests they were 90-96% of the
# generated source (dual arm 1.8 MB) and the dual arm's build took 21 s (AVX-512, 2 cores); none
# unrolled, 4.4 s, but Clear of free ur5 configurations rose from 1,184 to 1,633 instructions each
# (generic kernel: 1,552; callgrind, AVX2), as the ur5's hand groups meet its arm's bounds often.
# Up to 16 (45 of the ur5's 50 unlisted pairs, 92 of the dual arm's 197): 1,288 instructions, builds
# of 2.0-8.9 s on AVX-512 (dual arm 21 s on AVX2, two vector widths; a busy 2-core machine).
MAX_UNROLLED_PAIR_TESTS = 16
# Certified lists longer than this run the generic loop too.
MAX_UNROLLED_LIST = 160

_f32 = np.float32


def _round_exact(x: Fraction) -> float:
    """x rounded to the nearest float32, ties to even (what one float32 operation returns)."""
    d = _f32(float(x))
    best, best_key = None, None
    for c in (np.nextafter(d, _f32(-np.inf)), d, np.nextafter(d, _f32(np.inf))):
        if not np.isfinite(c):
            continue
        key = (abs(Fraction(float(c)) - x), int(np.array(c, dtype=_f32).view(np.uint32)) & 1)
        if best_key is None or key < best_key:
            best, best_key = c, key
    return float(best)


def literal(x: float) -> str:
    """A C++ float literal of exactly this float32 value (hexadecimal, so no decimal rounding)."""
    x = float(_f32(x))
    if x == 0.0:
        return "-0.0f" if np.signbit(x) else "0.0f"
    return x.hex() + "f"


class Val:
    """One lane vector: a float32 constant (the same in every lane) or a named C++ value."""

    __slots__ = ("c", "name")

    def __init__(self, c: float | None = None, name: str | None = None):
        self.c = None if c is None else float(_f32(c))
        self.name = name

    @property
    def const(self) -> bool:
        return self.c is not None


class Emitter:
    """Straight-line code with folding: each op either is done here exactly or emitted."""

    def __init__(self, indent: int = 2):
        self.lines: list[str] = []
        self.n = 0
        self.indent = indent

    def emit(self, s: str) -> None:
        self.lines.append(" " * self.indent + s)

    def ref(self, v: Val) -> str:
        return f"V::fill({literal(v.c)})" if v.const else v.name

    def fresh(self, expr: str) -> Val:
        self.n += 1
        name = f"t{self.n}"
        self.emit(f"const V {name} = {expr};")
        return Val(name=name)

    def neg(self, a: Val) -> Val:
        return Val(-a.c) if a.const else self.fresh(f"-{a.name}")

    def mul(self, a: Val, b: Val) -> Val:
        if a.const and b.const:
            return Val(float(_f32(a.c) * _f32(b.c)))
        if b.const:
            a, b = b, a
        if a.const:
            if a.c == 0.0:
                return Val(0.0)
            if a.c == 1.0:
                return b
            if a.c == -1.0:
                return self.neg(b)
        return self.fresh(f"{self.ref(a)} * {self.ref(b)}")

    def add(self, a: Val, b: Val) -> Val:
        if a.const and b.const:
            return Val(float(_f32(a.c) + _f32(b.c)))
        if a.const and a.c == 0.0:
            return b
        if b.const and b.c == 0.0:
            return a
        return self.fresh(f"{self.ref(a)} + {self.ref(b)}")

    def fma(self, a: Val, b: Val, c: Val) -> Val:
        """round(a * b + c), as fmadd."""
        if a.const and b.const and c.const:
            return Val(_round_exact(Fraction(a.c) * Fraction(b.c) + Fraction(c.c)))
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
        return self.fresh(f"fmadd({self.ref(a)}, {self.ref(b)}, {self.ref(c)})")


def _fk_body(e: Emitter, t: dict, b: int, frames: list, q: list) -> None:
    """Frame of body b (12 Vals), the general product of kin/fk.hh with exact folds."""
    o = [Val(v) for v in t["body_origin"][12 * b:12 * b + 12]]
    p = t["body_parent"][b]
    kind = t["body_kind"][b]
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
        value = e.fma(q[t["body_dof"][b]], Val(t["body_scale"][b]), Val(t["body_offset"][b]))
        if kind == 1:
            if value.const:
                raise ValueError(f"body {b}: a revolute joint with a constant value")
            e.n += 1
            s, c = Val(name=f"s{e.n}"), Val(name=f"c{e.n}")
            e.emit(f"V {s.name}, {c.name};")
            e.emit(f"vsincos({value.name}, {s.name}, {c.name});")
            for i in range(3):
                c0, c1 = T[4 * i], T[4 * i + 1]
                T[4 * i] = e.fma(c, c0, e.mul(s, c1))
                T[4 * i + 1] = e.fma(c, c1, e.neg(e.mul(s, c0)))
        else:
            for i in range(3):
                T[4 * i + 3] = e.fma(value, T[4 * i + 2], T[4 * i + 3])
    frames.append(T)


def _fk_point(e: Emitter, T: list, x: float, y: float, z: float):
    X, Y, Z = Val(x), Val(y), Val(z)
    return (e.fma(T[0], X, e.fma(T[1], Y, e.fma(T[2], Z, T[3]))),
            e.fma(T[4], X, e.fma(T[5], Y, e.fma(T[6], Z, T[7]))),
            e.fma(T[8], X, e.fma(T[9], Y, e.fma(T[10], Z, T[11]))))


def _constant_entries(t: dict) -> list[list]:
    """Per body, its frame's 12 entries: the float32 value where it is the same in every
    configuration (the root's, fixed bodies' below it), else None."""
    e = Emitter()
    q = [Val(name=f"q{j}") for j in range(t["dof"])]
    frames: list = []
    for b in range(t["n_bodies"]):
        _fk_body(e, t, b, frames, q)
    return [[v.c if v.const else None for v in T] for T in frames]


def _entries(consts: list, name: str) -> list:
    """A frame's entries as Vals: constants folded, the others read from the scratch (name[k])."""
    return [Val(c) if c is not None else Val(name=f"{name}[{k}]") for k, c in enumerate(consts)]


def _body_fn(t: dict, b: int, consts: list) -> list[str]:
    """body_B: the frame of body b (its parent's first, if not ready), as kin/fk.hh fk_body computes it."""
    p = t["body_parent"][b]
    e = Emitter(indent=4)
    frames: list = [None] * b
    if p >= 0:
        e.emit(f"if (s.body_ready[{p}] == 0.0f) body_{p}(s);")
        e.emit(f"const V* P = s.frames + {12 * p};")
        frames[p] = _entries(consts[p], "P")
    _fk_body(e, t, b, frames, [Val(name=f"s.q[{j}]") for j in range(t["dof"])])
    for k, v in enumerate(frames[b]):
        e.emit(f"s.frames[{12 * b + k}] = {e.ref(v)};")
    e.emit(f"s.body_ready[{b}] = 1.0f;")
    if p >= 0 and all(c is not None for c in consts[p]):
        e.emit("(void)P;")
    return (["  template <class V>", f"  static SIMDPLAN_NOINLINE void body_{b}(const LaneScratch<V>& s) {{"] + e.lines
            + ["  }"])


def _bound_fn(t: dict, g: int, consts: list) -> list[str]:
    """bound_G: the world centre of group g's bound (its body's frame first, if not ready)."""
    b = t["group_body"][g]
    gb = t["group_bound"]
    e = Emitter(indent=4)
    e.emit(f"if (s.body_ready[{b}] == 0.0f) body_{b}(s);")
    e.emit(f"const V* T = s.frames + {12 * b};")
    x, y, z = _fk_point(e, _entries(consts[b], "T"), gb[4 * g], gb[4 * g + 1], gb[4 * g + 2])
    e.emit(f"s.bx[{g}] = {e.ref(x)}; s.by[{g}] = {e.ref(y)}; s.bz[{g}] = {e.ref(z)}; s.bound_ready[{g}] = 1.0f;")
    e.emit("(void)T;")
    return (["  template <class V>", f"  static SIMDPLAN_NOINLINE void bound_{g}(const LaneScratch<V>& s) {{"] + e.lines
            + ["  }"])


def _frames_of(t: dict) -> list[str]:
    out = ["  // LaneScratch::frames_of: the core's environment tests reach this robot's FK through it",
           "  template <class V>",
           "  static void frames_of(const void* scratch, int32_t body) {",
           "    const LaneScratch<V>& s = *static_cast<const LaneScratch<V>*>(scratch);",
           "    switch (body) {"]
    out += [f"      case {b}: body_{b}(s); break;" for b in range(t["n_bodies"])]
    out += ["      default: break;", "    }", "  }"]
    return out


def _place(t: dict, g: int) -> list[str]:
    """place_G: group g's sphere centres (kin/fk.hh fk_point with literal offsets), once per lanes."""
    sp = t["spheres"]
    out = ["  template <class V>", f"  static SIMDPLAN_NOINLINE void place_{g}(const LaneScratch<V>& s) {{",
           f"    const V* T = s.frames + {12 * t['group_body'][g]};"]
    for k in range(t["group_begin"][g], t["group_end"][g]):
        out.append(f"    fk_point(T, {literal(sp[4 * k])}, {literal(sp[4 * k + 1])}, {literal(sp[4 * k + 2])}, "
                   f"s.sx[{k}], s.sy[{k}], s.sz[{k}]);")
    out.append(f"    s.placed[{g}] = 1.0f;")
    out.append("  }")
    return out


def _radius(t: dict, i: int) -> str:
    return f"V::fill({literal(t['spheres'][4 * i + 3])} + padding)"


def _centre(i: int) -> str:
    return f"s.sx[{i}], s.sy[{i}], s.sz[{i}]"


def _bound(g: int) -> str:
    return f"s.bx[{g}], s.by[{g}], s.bz[{g}]"


def _hit_lines(on_hit_mask: str, pad: str, p: int) -> list[str]:
    """What pair_vs_self does with a hit h: mark the lanes; stop as mark_hits says."""
    return [pad + "if (h.any()) {",
            pad + f"  if (mark_hits(h, done, cand, stop_at_first)) {{ state.hint_kind = 2, state.hint_pair = {p}; "
            "return true; }",
            pad + (f"  {on_hit_mask} = {on_hit_mask} & ~h;" if on_hit_mask else "  (void)0;"),
            pad + "}"]


def _pair_tests(t: dict, p: int, a: int, g: int, pad: str) -> list[str] | None:
    """The sphere tests of pair p on lanes cand (both groups placed), as pair_vs_self runs them; None
    where the pair keeps the generic loop."""
    lb, le = t["pair_ranges"][2 * p], t["pair_ranges"][2 * p + 1]
    sp = t["sphere_pairs"]
    lines: list[str] = []
    if lb >= 0:
        if le - lb > MAX_UNROLLED_LIST:
            return None
        cur = -1
        for k in range(lb, le):
            i, j = sp[2 * k], sp[2 * k + 1]
            if i != cur:
                if cur >= 0:
                    lines.append(pad + "}")
                cur = i
                lines.append(pad + "{")
                lines.append(pad + f"  M near = sphere_sphere_hit2({_centre(i)}, {_radius(t, i)}, {_bound(g)}, brg) & cand;")
            lines.append(pad + "  if (near.any()) {")
            lines.append(pad + f"    const M h = sphere_sphere_hit2({_centre(i)}, {_radius(t, i)}, {_centre(j)}, "
                         f"{_radius(t, j)}) & near;")
            lines += _hit_lines("near", pad + "    ", p)
            lines.append(pad + "  }")
        if cur >= 0:
            lines.append(pad + "}")
        return lines
    gb, ge = t["group_begin"], t["group_end"]
    na, ng_ = ge[a] - gb[a], ge[g] - gb[g]
    if na * ng_ > MAX_UNROLLED_PAIR_TESTS:
        return None
    outer, inner = (a, g) if na >= ng_ else (g, a)
    bir = "brg" if na >= ng_ else "bra"
    for i in range(gb[outer], ge[outer]):
        lines.append(pad + "{")
        lines.append(pad + f"  const M near = sphere_sphere_hit2({_centre(i)}, {_radius(t, i)}, {_bound(inner)}, {bir}) "
                     "& cand;")
        lines.append(pad + "  if (near.any()) {")
        for j in range(gb[inner], ge[inner]):
            lines.append(pad + f"    {{ const M h = sphere_sphere_hit2({_centre(i)}, {_radius(t, i)}, {_centre(j)}, "
                         f"{_radius(t, j)}) & near & cand;")
            lines += _hit_lines("", pad + "      ", p)
            lines.append(pad + "    }")
        lines.append(pad + "  }")
        lines.append(pad + "}")
    return lines


def _block_side(t: dict, side: int, name: str) -> list[str]:
    """The sphere around one side of a pair block (validity.hh block_side), bounds already computed."""
    if side >= 0:
        r = literal(t["group_bound"][4 * side + 3])
        return [f"if (s.bound_ready[{side}] == 0.0f) bound_{side}(s);",
                f"const V {name}x = s.bx[{side}], {name}y = s.by[{side}], {name}z = s.bz[{side}];",
                f"const V {name}r = V::fill({r} + padding);"]
    b = -1 - side
    bb = t["body_bound"][4 * b:4 * b + 4]
    return [f"if (s.body_ready[{b}] == 0.0f) body_{b}(s);",
            f"V {name}x, {name}y, {name}z;",
            f"fk_point(s.frames + {12 * b}, {literal(bb[0])}, {literal(bb[1])}, {literal(bb[2])}, {name}x, {name}y, "
            f"{name}z);",
            f"const V {name}r = V::fill({literal(bb[3])} + padding);"]


def _block(t: dict, k: int) -> list[str]:
    """block_K: pair block k (validity.hh self_pairs' loop body), one small function per block: g++'s
    time grows faster than linearly with a function's size."""
    gr = t["group_bound"]
    pb, pe = t["pair_block_begin"][k], t["pair_block_begin"][k + 1]
    out = ["template <class V>",
           f"SIMDPLAN_NOINLINE bool Blocks::block_{k}(const RobotView& rb, const LaneScratch<V>& s, float padding,",
           "                                         typename V::Mask& done, bool stop_at_first, CheckState& state) {",
           "    using M = typename V::Mask;",
           f"    const bool lists = padding <= {literal(t['list_max_padding'])};",
           "    (void)lists, (void)rb;"]
    if pe - pb > 1:
        out += ["    " + x for x in _block_side(t, t["pair_block_side"][2 * k], "a")]
        out += ["    " + x for x in _block_side(t, t["pair_block_side"][2 * k + 1], "b")]
        out.append("    if (!(sphere_sphere_hit2(ax, ay, az, ar, bx, by, bz, br) & ~done).any()) return false;")
    for i in range(pb, pe):
        p = t["pair_order"][i]
        a, g = t["pairs"][2 * p], t["pairs"][2 * p + 1]
        out.append(f"    {{  // pair {p}: groups {a}, {g}")
        out.append(f"      const V brg = V::fill({literal(gr[4 * g + 3])} + padding);")
        out.append(f"      const V bra = V::fill({literal(gr[4 * a + 3])} + padding);")
        out.append(f"      if (s.bound_ready[{a}] == 0.0f) bound_{a}(s);")
        out.append(f"      if (s.bound_ready[{g}] == 0.0f) bound_{g}(s);")
        out.append(f"      M cand = sphere_sphere_hit2({_bound(a)}, bra, {_bound(g)}, brg) & ~done;")
        out.append("      if (cand.any()) {")
        tests = _pair_tests(t, p, a, g, " " * 8)
        listed = t["pair_ranges"][2 * p] >= 0
        generic = (f"        if (generic_pair(rb, s, {p}, padding, done, stop_at_first)) "
                   f"{{ state.hint_kind = 2, state.hint_pair = {p}; return true; }}")
        if tests is None:
            out.append(generic)
        else:
            if listed:
                out.append("        if (!lists) {")
                out.append("  " + generic)
                out.append("        } else {")
            out.append(f"        if (s.placed[{a}] == 0.0f) place_{a}(s);")
            out.append(f"        if (s.placed[{g}] == 0.0f) place_{g}(s);")
            out += tests
            if listed:
                out.append("        }")
        out.append("        (void)bra, (void)brg;")
        out.append("      }")
        out.append("    }")
    out += ["    (void)state, (void)stop_at_first;", "    return false;", "}"]
    return out


# PERF: relative g++ time of one pair block compiled for VecK where it is twice the native width
# (AVX2's 16 lanes as two registers) against VecN; measured on the dual arm's blocks (-O2, g++ 12).
WIDE_BLOCK_COST = 1.8


def _block_parts(weights: list[int], k_is_n: bool) -> list[int]:
    """The part (1 or 2) that compiles each block's VecK instantiation; part 2 also compiles every
    VecN one where VecN is another type. Greedy, heaviest block first, to the part that ends lighter."""
    load = {1: 0.0, 2: 0.0 if k_is_n else float(sum(weights))}
    cost = 1.0 if k_is_n else WIDE_BLOCK_COST
    owner = [0] * len(weights)
    for k in sorted(range(len(weights)), key=lambda k: -weights[k]):
        part = min((1, 2), key=lambda q: load[q] + cost * weights[k])
        owner[k] = part
        load[part] += cost * weights[k]
    return owner


def _instantiations(weights: list[int]) -> list[str]:
    """Which part instantiates which block: each block is compiled once per vector type (explicit
    instantiation in its part, extern template in the other), split so the two parts take about the
    same time."""
    def decl(k: int, vec: str) -> str:
        return (f"template bool Blocks::block_{k}<{vec}>(const RobotView&, const LaneScratch<{vec}>&, float, "
                f"{vec}::Mask&, bool, CheckState&);")

    out = []
    for label, k_is_n in (("VecK is VecN", True), ("VecK is twice VecN", False)):
        owner = _block_parts(weights, k_is_n)
        out.append("#if defined(SIMDPLAN_ISA_AVX2)" if not k_is_n else "#if !defined(SIMDPLAN_ISA_AVX2)")
        out.append(f"// {label}")
        for part in (1, 2):
            out.append(f"#if SIMDPLAN_SPEC_PART == {part}")
            for k in range(len(weights)):
                out.append(("" if owner[k] == part else "extern ") + decl(k, "VecK"))
            if part == 2 and not k_is_n:
                out += [decl(k, "VecN") for k in range(len(weights))]
            out.append("#endif")
        out.append("#endif")
    return out


def _blocks(t: dict) -> list[str]:
    """The self-collision pair blocks: struct Blocks (declarations, self_pairs), their definitions, and
    the split of their instantiations between the two parts."""
    ng, nk = t["n_groups"], t["n_pair_blocks"]
    out = ["};", "",
           "// Blocks is defined the same in both parts (the block bodies outside it are not inline), so each",
           "// block's code is compiled in one part only (explicit instantiations below).",
           "struct Blocks : RobotProgram {"]
    for k in range(nk):
        out += ["  template <class V>",
                f"  static bool block_{k}(const RobotView& rb, const LaneScratch<V>& s, float padding,",
                "                        typename V::Mask& done, bool stop_at_first, CheckState& state);"]
    out += ["  template <class V>",
            "  static SIMDPLAN_INLINE bool self_pairs(const RobotView& rb, const LaneScratch<V>& s, float padding,",
            "                                         typename V::Mask& done, bool stop_at_first, CheckState& state,",
            "                                         const float* far) {"]
    for k in range(nk):
        out.append(f"    if (!(far && far[{ng + k}] != 0.0f) && block_{k}(rb, s, padding, done, stop_at_first, state)) "
                   "return true;")
    out += ["    (void)rb, (void)s, (void)padding, (void)done, (void)stop_at_first, (void)state, (void)far;",
            "    return false;", "  }", "};", ""]
    weights = []
    for k in range(nk):
        body = _block(t, k)
        weights.append(len(body))
        out += body + [""]
    out += _instantiations(weights)
    return out


def _generic_pair() -> list[str]:
    # PERF: one out-of-line copy of the generic pair test; inlined at every unlisted pair (it is
    # always_inline) it made the ur5's build 4x slower for no fewer instructions
    return ["  template <class V>",
            "  static SIMDPLAN_NOINLINE bool generic_pair(const RobotView& rb, const LaneScratch<V>& s, int32_t p,",
            "                                            float padding, typename V::Mask& done, bool stop_at_first) {",
            "    return pair_vs_self(rb, s, p, padding, done, stop_at_first);",
            "  }"]


PRELUDE = """\
// Kernel generated by simdplan.specialize for robot {name!r} (key {key}). Do not edit: regenerated
// from the robot when its key changes. See python/simdplan/specialize/codegen.py.
#include <type_traits>

#include "simdplan/collision/kernels.hh"
#include "simdplan/collision/lane_loops.hh"
#include "simdplan/collision/lane_scratch.hh"
#include "simdplan/collision/self_pairs.hh"
#include "simdplan/vec/vec.hh"
#if defined(SIMDPLAN_ISA_AVX512)
#include "simdplan/vec/avx2.hh"
#elif defined(SIMDPLAN_ISA_AVX2)
#include "simdplan/vec/avx2x2.hh"
#endif

namespace simdplan::SIMDPLAN_NS {{

// The lane widths of the generic table this one replaces entries of (collision/kernels_isa.cc).
#if defined(SIMDPLAN_ISA_AVX512)
using VecK = Vec;
using VecN = Vec;
#elif defined(SIMDPLAN_ISA_AVX2)
using VecK = VecAvx2x2;
using VecN = Vec;
#else
using VecK = Vec;
using VecN = Vec;
#endif

// the core's environment tests and far test (KernelTable::support), set when the core loads this
extern const SpecializedSupport* g_support;

// Named, not in an anonymous namespace: both parts' objects share its code (hidden, as every symbol
// but the entry point).
struct RobotProgram {{
"""

EPILOGUE = """\
namespace {{

// One pass over the lanes (collision/validity.hh check_lanes): frames and bounds ahead, the core's
// environment tests, then this robot's self-collision pairs.
template <class V>
SIMDPLAN_INLINE typename V::Mask pass(const RobotView& rb, const EnvironmentView& env, const LaneScratch<V>& s,
                                      float* scratch, float padding, typename V::Mask done, bool stop_at_first,
                                      CheckState& state, const float* far) {{
  s.reset(rb);
  int32_t stop = 0;
  const auto environment = std::is_same_v<V, VecK> ? g_support->environment_k : g_support->environment_n;
  done = V::Mask::from_bits(environment(&rb, &env, scratch, &RobotProgram::frames_of<V>, padding, done.bits(),
                                        stop_at_first, &state, far, &stop));
  if (stop) return done;
  Blocks::self_pairs(rb, s, padding, done, stop_at_first, state, far);
  return done;
}}

template <class V>
bool motion(const RobotView* rb, const EnvironmentView* env, const float* a, const float* b, int64_t n, int64_t first,
            int64_t last, float padding, float* scratch, CheckState* state_in) {{
  CheckState local;
  CheckState& state = state_in ? *state_in : local;
  const LaneScratch<V> s(*rb, scratch, &RobotProgram::frames_of<V>);
  constexpr bool k = std::is_same_v<V, VecK>;
  const bool skip_far = (k ? g_support->skips_far_k : g_support->skips_far_n)(rb, env, first, last);
  return link_chunks(
      *rb, a, b, n, first, last, s, state, skip_far,
      [&](typename V::Mask initial, const float* far) {{
        return pass(*rb, *env, s, scratch, padding, initial, true, state, far);
      }},
      [&](typename V::Mask live, int64_t P) {{
        return (k ? g_support->edge_far_k : g_support->edge_far_n)(rb, env, scratch, &RobotProgram::frames_of<V>, a, b,
                                                                   n, P, padding, live.bits());
      }});
}}

}}  // namespace

// Entries shared between the two parts of the build (hidden: the library exports one symbol).
bool motion_n(const RobotView* rb, const EnvironmentView* env, const float* a, const float* b, int64_t n,
              int64_t first, int64_t last, float padding, float* scratch, CheckState* state);

#if SIMDPLAN_SPEC_PART == 1
const SpecializedSupport* g_support = nullptr;

namespace {{

bool check(const RobotView* rb, const EnvironmentView* env, const float* q, int64_t n, float padding,
           bool stop_at_first, uint8_t* free_inout, float* scratch, CheckState* state_in) {{
  CheckState local;
  CheckState& state = state_in ? *state_in : local;
  const LaneScratch<VecK> s(*rb, scratch, &RobotProgram::frames_of<VecK>);
  return check_rows(*rb, q, n, stop_at_first, free_inout, s, [&](typename VecK::Mask initial) {{
    return pass(*rb, *env, s, scratch, padding, initial, stop_at_first, state, nullptr);
  }});
}}

const SpecializedKernels kKernels = {{kSpecializedAbi, kThisIsaName, "{key}", &check, &motion_n, &motion<VecK>}};

}}  // namespace
}}  // namespace simdplan::SIMDPLAN_NS

extern "C" __attribute__((visibility("default"))) const simdplan::SpecializedKernels* simdplan_specialized_kernels(
    const simdplan::SpecializedSupport* support) {{
  simdplan::SIMDPLAN_NS::g_support = support;
  return &simdplan::SIMDPLAN_NS::kKernels;
}}
#else
bool motion_n(const RobotView* rb, const EnvironmentView* env, const float* a, const float* b, int64_t n,
              int64_t first, int64_t last, float padding, float* scratch, CheckState* state) {{
  return motion<VecN>(rb, env, a, b, n, first, last, padding, scratch, state);
}}
}}  // namespace simdplan::SIMDPLAN_NS
#endif
"""


def generate(tables: dict, key: str, name: str = "robot") -> str:
    """The C++ source of the specialized kernel of a robot, from RobotModel.view_tables(). It is
    compiled twice, with SIMDPLAN_SPEC_PART=1 (Clear and the wide Link, the exported table) and 2
    (the planners' Link), in parallel, and linked into one library."""
    t = tables
    out = [PRELUDE.format(name=name, key=key)]
    consts = _constant_entries(t)
    for b in range(t["n_bodies"]):
        out += _body_fn(t, b, consts)
    for g in range(t["n_groups"]):
        out += _bound_fn(t, g, consts)
        out += _place(t, g)
    out += _frames_of(t)
    out += _generic_pair()
    out += _blocks(t)
    out.append(EPILOGUE.format(key=key))
    return "\n".join(out) + "\n"
