"""Number formats shared by the command's summaries and the benchmark reports, and values as JSON
files take them."""

from __future__ import annotations

import math


def fmt_time_ns(ns) -> str:
    """A duration given in nanoseconds, in us, ms or s."""
    if ns is None:
        return "-"
    ns = float(ns)
    if ns < 1e6:
        return f"{ns / 1e3:,.1f} us"
    if ns < 1e9:
        return f"{ns / 1e6:,.2f} ms"
    return f"{ns / 1e9:,.3f} s"


def fmt_num(v, digits: int = 0) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    return f"{v:,.{digits}f}"


def fmt_us(v) -> str:
    """Microseconds for tables: no decimals from 100 us on."""
    if v is None:
        return "-"
    return f"{v:,.0f}" if v >= 100 else f"{v:.1f}"


def seconds(s: float) -> str:
    return f"{s:g} s"


def json_value(v):
    """A value (a result's stats entry) as JSON takes it: NumPy arrays as lists, NumPy scalars as
    Python numbers, anything else as it is."""
    if hasattr(v, "tolist") and getattr(v, "ndim", 0) > 0:
        return v.tolist()
    return v.item() if hasattr(v, "item") else v
