"""PromQL's lexical pieces: function and operator names, precedence, and literals.

Durations render in the largest unit that divides them; strings are double-quoted with
``\\``, ``\"`` and ``\n`` escaped; numbers use the shortest round-trip form.
"""

from __future__ import annotations

import math
import re

#: Range functions (over one selector's window).
RANGE_FUNCTIONS = ("rate", "increase", "delta", "changes", "resets", "avg_over_time",
                   "min_over_time", "max_over_time", "sum_over_time", "count_over_time",
                   "stddev_over_time", "last_over_time")
#: Instant functions with their number of scalar parameters.
INSTANT_FUNCTIONS = {"abs": 0, "clamp_min": 1, "clamp_max": 1, "sqrt": 0}
AGGREGATIONS = ("sum", "avg", "min", "max", "count", "group")
ARITHMETIC = ("+", "-", "*", "/", "%", "^")
COMPARISONS = ("==", "!=", ">", "<", ">=", "<=")
SET_OPERATORS = ("and", "or", "unless")
_PRECEDENCE = {"or": 1, "and": 2, "unless": 2, "==": 3, "!=": 3, ">": 3, "<": 3, ">=": 3,
               "<=": 3, "+": 4, "-": 4, "*": 5, "/": 5, "%": 5, "^": 6}
ATOM = 10
METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def duration(seconds: int) -> str:
    """``seconds`` as a PromQL duration in the largest unit that divides it (``90`` -> ``90s``)."""
    if seconds <= 0 or seconds != int(seconds):
        raise ValueError(f"durations are whole positive seconds, got {seconds}")
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def quote(value: str) -> str:
    """A PromQL double-quoted string literal of ``value``."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def number(value: float) -> str:
    """A PromQL number literal (shortest round-trip form)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)
