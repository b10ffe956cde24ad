"""The workload the coherence simulator runs: a small seeded program per unit.

Each unit runs ``ops_per_unit`` operations in order, one outstanding at a time: a read or
a write of one of ``lines`` shared lines (line 0 hot: ``HOT_SHARE`` of the accesses, so
several units contend on it, the case seed 003 §4.3 says to test), separated by a think
time. Every write writes a value no other write writes, so a read's value names the write
it saw (the data-value check needs that). Seeded: ``random.Random(seed)``, whose stream is
fixed across Python versions for ``random()`` and integer seeds.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

#: Share of the accesses that go to line 0.
HOT_SHARE = 0.7
#: Share of the operations that are reads.
READ_SHARE = 0.5


@dataclass(frozen=True)
class Op:
    """One operation of a unit's program; ``value`` is the written value (0 for a read)."""

    index: int      # position in the whole program (the shrinker drops by index)
    unit: int
    kind: str       # "r" or "w"
    line: int
    value: int
    think_s: float  # idle time before it is issued


def make_program(seed: int, units: int, ops_per_unit: int, lines: int,
                 think_s: float) -> list[Op]:
    """The seeded program: ``units * ops_per_unit`` operations, unit by unit."""
    rng = random.Random(seed)
    ops: list[Op] = []
    value = 0
    for unit in range(units):
        for _ in range(ops_per_unit):
            line = 0 if lines == 1 or rng.random() < HOT_SHARE else 1 + rng.randrange(lines - 1)
            if rng.random() < READ_SHARE:
                kind, written = "r", 0
            else:
                value += 1
                kind, written = "w", value
            ops.append(Op(len(ops), unit, kind, line, written, rng.expovariate(1.0 / think_s)))
    return ops
