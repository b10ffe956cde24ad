"""The regression gate of ``compare --fail-below``: which rows it judges, and why each
failing row fails.

Seed 003 §4.1 asks for a small communication benchmark in CI after every change of the
stack; the gate fails when a judged row's measured busbw is under ``threshold`` x the
model's prediction. Which rows it judges: sizes in ``[min_bytes, max_bytes]`` of the ops
in ``ops`` (all when empty) — small sizes sit in the latency region, where a few
microseconds of launch or proxy overhead move the ratio by tens of percent and say nothing
about the fabric, so a CI gate is usually run from 64 MiB up (``--min-bytes 64MiB``).
"""

from __future__ import annotations

from dataclasses import dataclass

from supernode.collectives.busbw import OPS
from supernode.errors import InputError
from supernode.measurements.compare import RowComparison, SetComparison
from supernode.measurements.findings_base import size_label

#: Predicted busbw under this share of the test's best: the row is latency-bound (the
#: ``large_rows`` line of :mod:`.findings`, said in the failure's reason).
LATENCY_SHARE = 0.5


@dataclass(frozen=True)
class Gate:
    """The gate: the share of the prediction a judged row must reach, and the rows judged
    (sizes in bytes, inclusive; ``max_bytes`` None: no upper limit; ``ops`` empty: all)."""

    threshold: float
    min_bytes: int = 0
    max_bytes: int | None = None
    ops: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not 0.0 < self.threshold <= 10.0:
            raise InputError("--fail-below", f"got {self.threshold}; a share of the prediction "
                                             "in (0, 10], e.g. 0.9")
        if self.max_bytes is not None and self.max_bytes < self.min_bytes:
            raise InputError("--max-bytes", f"{size_label(self.max_bytes)} is under "
                                            f"--min-bytes {size_label(self.min_bytes)}")
        for op in self.ops:
            if op not in OPS:
                raise InputError("--gate-op", f"unknown collective {op!r}; one of "
                                              f"{', '.join(OPS)}")

    def judges(self, op: str, row: RowComparison) -> bool:
        """True when the gate judges ``row`` of a test of ``op``."""
        return ((not self.ops or op in self.ops) and row.message_bytes >= self.min_bytes
                and (self.max_bytes is None or row.message_bytes <= self.max_bytes))

    def fails(self, op: str, row: RowComparison) -> bool:
        """True when ``row`` is judged and under ``threshold`` x the prediction."""
        return self.judges(op, row) and row.ratio < self.threshold

    def scope(self) -> str:
        """The rows judged, in words ("all rows", "64 MiB and up of all_reduce")."""
        if self.min_bytes and self.max_bytes is not None:
            sizes = f"{size_label(self.min_bytes)} to {size_label(self.max_bytes)}"
        elif self.min_bytes:
            sizes = f"{size_label(self.min_bytes)} and up"
        elif self.max_bytes is not None:
            sizes = f"up to {size_label(self.max_bytes)}"
        else:
            sizes = ""
        ops = " or ".join(self.ops)
        if not sizes and not ops:
            return "all rows"
        return " of ".join(part for part in (sizes or "all sizes", ops) if part)


def failure_reason(comparison: SetComparison, row: RowComparison, gate: Gate) -> str:
    """Why ``row`` fails ``gate``: the share of the prediction from the times, the line
    rate's share, and whether the size is latency-bound."""
    best = max(r.predicted_busbw_bytes_per_s for r in comparison.rows)
    line = row.binding_line_rate
    reason = (f"{comparison.op} {size_label(row.message_bytes)}: "
              f"{row.ratio:.0%} of the prediction, under {gate.threshold:.0%} "
              f"(measured {row.measured_time_s * 1e6:,.1f} us, model "
              f"{row.predicted_time_s * 1e6:,.1f} us; {line.share:.0%} of {line.tier}'s "
              "line rate)")
    share_of_best = row.predicted_busbw_bytes_per_s / best
    if share_of_best < LATENCY_SHARE:
        reason += (f"; latency-bound (the model's busbw is {share_of_best:.0%} of its best): "
                   "--min-bytes gates only the sizes that measure bandwidth")
    return reason


def gate_rows(comparison: SetComparison, gate: Gate) -> tuple[list[RowComparison],
                                                              list[RowComparison]]:
    """``(judged rows, failing rows)`` of one comparison."""
    judged = [r for r in comparison.rows if gate.judges(comparison.op, r)]
    return judged, [r for r in judged if r.ratio < gate.threshold]
