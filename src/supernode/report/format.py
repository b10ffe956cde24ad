"""How each kind of value is shown: one function for the HTML and the Markdown."""

from __future__ import annotations

import math
from typing import Any

#: Kinds of values and how they read (SI inside; the unit shown after the number).
KINDS = ("s", "ms", "min", "h", "days", "share", "fraction", "w", "kw", "bytes", "bytes_per_s",
         "count", "ratio", "float", "number", "l_per_min", "c", "m", "m2", "kg", "kg_per_m2", "usd",
         "kwh", "mwh", "j", "text", "bool", "tokens_per_s", "params", "ns")


def format_value(value: Any, kind: str) -> str:
    """``value`` as shown in the report for its ``kind`` (``-`` for None)."""
    if value is None:
        return "-"
    if kind == "text":
        return str(value)
    if kind == "bool":
        return "yes" if value else "no"
    if isinstance(value, float) and not math.isfinite(value):
        return "inf" if value > 0 else "-inf"
    v = float(value)
    table = {
        "s": lambda: f"{v:,.3g} s" if abs(v) < 1000 else f"{v:,.0f} s",
        "ms": lambda: f"{v * 1e3:,.3f} ms",
        "min": lambda: f"{v / 60:,.3g} min",
        "h": lambda: f"{v / 3600:,.3g} h",
        "days": lambda: f"{v / 86_400:,.3g} days",
        "share": lambda: f"{100 * v:.1f}%",
        "fraction": lambda: f"{v:.4f}",
        "w": lambda: f"{v / 1e3:,.1f} kW",
        "kw": lambda: f"{v:,.1f} kW",
        "bytes": lambda: f"{v / 1e9:,.1f} GB",
        "bytes_per_s": lambda: f"{v / 1e9:,.1f} GB/s",
        "count": lambda: f"{v:,.0f}",
        "ratio": lambda: f"{v:,.2f}",
        "float": lambda: f"{v:,.3g}" if abs(v) < 1000 else f"{v:,.0f}",
        "number": lambda: f"{v:,.4g}" if abs(v) < 10_000 else f"{v:,.0f}",
        "l_per_min": lambda: f"{v:,.0f} L/min",
        "c": lambda: f"{v:.1f} °C",
        "m": lambda: f"{v:.2f} m",
        "m2": lambda: f"{v:,.1f} m²",
        "kg": lambda: f"{v:,.0f} kg",
        "kg_per_m2": lambda: f"{v:,.0f} kg/m²",
        "usd": lambda: f"${v:,.4g}" if abs(v) < 1000 else f"${v:,.0f}",
        "kwh": lambda: f"{v:,.3g} kWh",
        "mwh": lambda: f"{v:,.0f} MWh",
        "j": lambda: f"{v / 1e6:,.2f} MJ",
        "tokens_per_s": lambda: f"{v:,.0f}",
        "params": lambda: f"{v / 1e9:,.1f}B",
        "ns": lambda: f"{v * 1e9:,.0f} ns",
    }
    if kind not in table:
        raise ValueError(f"unknown value kind {kind!r}")
    return table[kind]()


#: A rule's unit -> the kind its measured value and threshold are shown as.
UNIT_KINDS = {"ratio": "ratio", "share": "share", "kW": "kw", "GB/s": "float", "hops": "count",
              "GPUs": "count", "remainder": "count", "tier": "text", "GB": "float",
              "feeds": "count", "PDUs": "count", "°C": "float", "CDUs": "count",
              "kg/m²": "count", "m": "ratio", "cores": "count", "s": "s",
              "ns": "count"}
