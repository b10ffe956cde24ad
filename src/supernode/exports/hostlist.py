"""Slurm hostlist expressions: ``gpu[001-032,040]`` for a list of names, and back.

:func:`compress` groups names by their text part and the width of their trailing number
(so ``n009`` and ``n010`` join, ``n9`` and ``n010`` do not) and writes runs as ranges, in
the order the names come. :func:`expand` reads what Slurm prints (``scontrol show
topology``): comma-separated items, each a name or ``prefix[ranges]suffix``.
"""

from __future__ import annotations

import re

_TRAILING = re.compile(r"^(.*?)(\d+)$")


def compress(names: list[str] | tuple[str, ...]) -> str:
    """A hostlist expression holding exactly ``names`` (duplicates dropped)."""
    groups: dict[tuple[str, int], list[int]] = {}
    plain: list[str] = []
    order: list[tuple[str, int] | str] = []
    for name in dict.fromkeys(names):
        m = _TRAILING.match(name)
        if not m:
            plain.append(name)
            order.append(name)
            continue
        key = (m.group(1), len(m.group(2)))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append(int(m.group(2)))
    parts = []
    for item in order:
        if isinstance(item, str):
            parts.append(item)
            continue
        prefix, width = item
        numbers = sorted(set(groups[item]))
        if len(numbers) == 1:
            parts.append(f"{prefix}{numbers[0]:0{width}d}")
            continue
        parts.append(f"{prefix}[{','.join(_ranges(numbers, width))}]")
    return ",".join(parts)


def _ranges(numbers: list[int], width: int) -> list[str]:
    out, start, prev = [], numbers[0], numbers[0]
    for n in [*numbers[1:], None]:
        if n is not None and n == prev + 1:
            prev = n
            continue
        out.append(f"{start:0{width}d}" if start == prev else f"{start:0{width}d}-{prev:0{width}d}")
        if n is not None:
            start = prev = n
    return out


def expand(expression: str) -> list[str]:
    """The names in a hostlist expression (``a[1-3],b`` -> ``a1 a2 a3 b``)."""
    out: list[str] = []
    for item in _split(expression.strip()):
        m = re.match(r"^(.*?)\[([^\]]+)\](.*)$", item)
        if not m:
            if item:
                out.append(item)
            continue
        prefix, body, suffix = m.groups()
        for part in body.split(","):
            lo, _, hi = part.partition("-")
            width = len(lo)
            for n in range(int(lo), int(hi or lo) + 1):
                out.append(f"{prefix}{n:0{width}d}{suffix}")
    return out


def _split(expression: str) -> list[str]:
    """Split at commas outside brackets."""
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in expression:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(ch)
    items.append("".join(current))
    return items
