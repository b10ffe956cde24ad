"""Number formats shared by rule details (so texts read the same everywhere)."""

from __future__ import annotations


def pct(x: float) -> str:
    """0.234 -> '23.4%'."""
    return f"{100 * x:.1f}%"


def num(x: float, digits: int = 2) -> str:
    """A number with thousands separators and ``digits`` decimals (integers plain)."""
    if float(x).is_integer() and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:,.{digits}f}"


def kw(watts: float) -> str:
    """Watts as kW text: 116024 -> '116.0 kW'."""
    return f"{watts / 1e3:,.1f} kW"
