"""Input validators shared by the package: each turns a user's value into the array or number the
code needs, or raises an exception that names the argument and says what was expected (TypeError
for the wrong kind of value, ValueError for a wrong shape or range). Units are the caller's:
metres and radians throughout simdplan."""

from __future__ import annotations

import math
import numbers

import numpy as np


def reject_text(value, name: str) -> None:
    """TypeError if ``value`` is text (a string, or an array or list holding strings): NumPy would
    otherwise parse "0.1" as a number, hiding a value read from a file or a form that was never converted."""
    if isinstance(value, (int, float, np.ndarray)) and not (isinstance(value, np.ndarray) and value.dtype.kind in "SU"):
        return
    try:
        text = isinstance(value, (str, bytes)) or np.asarray(value).dtype.kind in "SU"
    except (TypeError, ValueError):  # ragged or odd input: the caller's own conversion words that
        return
    if text:
        raise TypeError(f"{name} must be numeric, not text: got {value!r}; convert it with float() first")


def as_finite(value, shape: tuple, name: str) -> np.ndarray:
    """``value`` as a float64 array of ``shape`` (-1 matches any length), or a clear ValueError
    (TypeError for text)."""
    reject_text(value, name)
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric with shape {_shape_str(shape)}, got {value!r}") from None
    if arr.ndim != len(shape) or any(s != -1 and s != a for s, a in zip(shape, arr.shape)):
        raise ValueError(f"{name} must have shape {_shape_str(shape)}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite, got {arr.tolist()}")
    return arr


def _shape_str(shape: tuple) -> str:
    return "(" + ", ".join("n" if s == -1 else str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def sphere_array(value, link: str) -> np.ndarray:
    """Collision spheres ``[x, y, z, r]`` (k, 4) of ``link`` (metres, in its frame) as float64; one
    sphere may be given flat (4,). Radii must be > 0."""
    arr = np.asarray(value if value is not None else np.zeros((0, 4)), dtype=np.float64)
    if arr.ndim == 1 and arr.size == 4:
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != 4:
        raise ValueError(f"link {link!r}: spheres must have shape (k, 4) [x, y, z, r], got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"link {link!r}: spheres must be finite")
    if (arr[:, 3] <= 0).any():
        raise ValueError(f"link {link!r}: sphere radii must be > 0, got {arr[:, 3].min()}")
    return arr


def check_padding(padding) -> float:
    """Sphere inflation in metres (finite, >= 0)."""
    p = float(padding)
    if not np.isfinite(p) or p < 0:
        raise ValueError(f"padding must be finite and >= 0 (metres), got {padding!r}")
    return p


def as_int(v, name: str, lo: int, hi: int) -> int:
    """An integer in [lo, hi] (any integer type, NumPy's too, or a float holding an integer), or a
    ValueError naming ``name``."""
    # numbers.Integral covers NumPy's integer types; a float holding an integer is accepted too
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) and not (isinstance(v, float) and v.is_integer()):
        raise ValueError(f"{name} must be an integer, got {v!r}")
    v = int(v)
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be in [{lo}, {hi}], got {v}")
    return v


def as_number(v, name: str, lo: float, allow_zero: bool = False, upper: float = math.inf) -> float:
    """A finite float above ``lo`` (or equal with ``allow_zero``) and at most ``upper``, or a ValueError
    naming ``name``."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {v!r}") from None
    if not math.isfinite(f) or f < lo or (f == lo and not allow_zero) or f > upper:
        bound = f">= {lo}" if allow_zero else f"> {lo}"
        raise ValueError(f"{name} must be finite and {bound}{'' if upper == math.inf else f' and <= {upper}'}, got {v!r}")
    return f
