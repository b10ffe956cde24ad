"""Checks of a coherence run: the invariants of its trace and the history's registers.

Three checks (Sorin, Hill & Wood, 'A Primer on Memory Consistency and Cache Coherence',
2nd ed. 2020, §2.3: coherence is the single-writer/multiple-reader and the data-value
invariants):

* **SWMR**: at every instant a line has one writer (a copy in M) and no other copy, or
  only readers (copies in S).
* **data value**: a copy installed or read holds the value of the line's latest write
  performed so far (values are unique per write, so the value names the write).
* **register linearizability**, per line (the simple check for one register): a read
  returns the value of the latest write that completed before it began, or of a write
  concurrent with it; i.e. its write did not begin after the read ended, and no other
  write lies entirely between that write's end and the read's start. The initial value 0
  is a write that ended at minus infinity.
* **completion**: every operation finished (a lost message would leave one waiting).

Under the ``update`` policy (every copy stays valid, a write sends its value to each)
SWMR does not apply; the data-value check becomes: no copy installed or read holds a value
older than the line's latest *done* write (:func:`check_update_trace`).
"""

from __future__ import annotations

from dataclasses import dataclass

from supernode.memory.sim import Record, Run


@dataclass(frozen=True)
class Violation:
    """One broken invariant: which, on which line, when, and what was seen."""

    kind: str          # swmr, data-value, linearizability, incomplete
    line: int
    time_s: float
    detail: str

    def as_dict(self) -> dict[str, object]:
        """JSON form."""
        return dict(self.__dict__)


def check_trace(trace: list[tuple]) -> list[Violation]:
    """SWMR and data-value violations in a run's trace, in time order."""
    holders: dict[int, dict[int, str]] = {}
    latest: dict[int, int] = {}
    out: list[Violation] = []
    for what, when, unit, line, value in sorted(trace, key=lambda e: e[1]):
        held = holders.setdefault(line, {})
        if what == "drop":
            held.pop(unit, None)
            continue
        if what == "write":
            held[unit] = "M"
            latest[line] = value
        elif what == "install":
            held[unit] = "S"
        if what in ("install", "read") and value != latest.get(line, 0):
            out.append(Violation("data-value", line, when, f"unit {unit} {what} value "
                                 f"{value}, the latest write is {latest.get(line, 0)}"))
        writers = [u for u, s in held.items() if s == "M"]
        if writers and len(held) > 1:
            others = sorted(u for u in held if u != writers[0])
            out.append(Violation("swmr", line, when, f"unit {writers[0]} holds M while "
                                 f"unit(s) {others} hold copies"))
    return out


def check_update_trace(trace: list[tuple]) -> list[Violation]:
    """Data-value violations in a run's trace under the ``update`` policy, in time order.

    A write is ordered at the home (``serial``) and done at the writer once every other
    copy took the new value (``done``); in between, copies hold the old or the new value.
    So once a write is done no copy may hold an older value (write propagation: a write
    becomes visible to every processor, Culler & Singh, 'Parallel Computer Architecture',
    1999, §5.1.2): checked on every copy when a write is done, and on every copy installed
    or read after. (SWMR does not apply: every copy stays valid and no unit holds the
    line exclusively.)"""
    order: dict[int, dict[int, int]] = {}     # line -> value -> position in the home's order
    done: dict[int, int] = {}                 # line -> position of the latest done write
    copies: dict[int, dict[int, int]] = {}    # line -> unit -> value of its copy
    out: list[Violation] = []
    for what, when, unit, line, value in sorted(trace, key=lambda e: e[1]):
        seen = order.setdefault(line, {0: -1})
        held = copies.setdefault(line, {})
        if what == "drop":
            held.pop(unit, None)
        elif what == "serial":
            seen[value] = len(seen) - 1
        elif value not in seen:
            out.append(Violation("data-value", line, when, f"unit {unit} {what} value "
                                 f"{value}, which no write wrote"))
        elif what == "done":
            held[unit] = value
            done[line] = max(done.get(line, -1), seen[value])
            last = _value_at(seen, done[line])
            stale = sorted(u for u, v in held.items() if seen.get(v, -2) < done[line])
            if stale:
                out.append(Violation("data-value", line, when, f"unit {unit}'s write "
                                     f"{value} done while unit(s) {stale} hold "
                                     f"{[held[u] for u in stale]}, older than {last}"))
        else:
            if what == "install":
                held[unit] = value
            if seen[value] < done.get(line, -1):
                out.append(Violation("data-value", line, when, f"unit {unit} {what} value "
                                     f"{value}, older than the latest done write "
                                     f"{_value_at(seen, done[line])}"))
    return out


def _value_at(seen: dict[int, int], position: int) -> int:
    """The value ordered at ``position`` (-1: the initial 0)."""
    return next((v for v, i in seen.items() if i == position), 0)


def check_history(history: list[Record]) -> list[Violation]:
    """Register-linearizability and completion violations of a history."""
    out: list[Violation] = []
    writes: dict[int, list[Record]] = {}
    by_value: dict[tuple[int, int], Record] = {}
    for rec in history:
        if rec.end is None:
            out.append(Violation("incomplete", rec.line, rec.start, f"unit {rec.unit} op "
                                 f"#{rec.index} ({rec.kind}) never completed"))
        elif rec.kind == "w":
            writes.setdefault(rec.line, []).append(rec)
            by_value[(rec.line, rec.value)] = rec
    for rec in history:
        if rec.kind != "r" or rec.end is None:
            continue
        line_writes = writes.get(rec.line, [])
        if rec.value == 0:
            w_start, w_end = float("-inf"), float("-inf")
        elif (rec.line, rec.value) in by_value:
            w = by_value[(rec.line, rec.value)]
            w_start, w_end = w.start, w.end if w.end is not None else float("inf")
        else:
            out.append(Violation("linearizability", rec.line, rec.end, f"unit {rec.unit} "
                                 f"read #{rec.index} returned {rec.value}, which no write "
                                 "wrote"))
            continue
        if w_start > rec.end:
            out.append(Violation("linearizability", rec.line, rec.end, f"unit {rec.unit} "
                                 f"read #{rec.index} returned {rec.value}, written after the "
                                 "read ended"))
            continue
        newer = [w for w in line_writes if w.end is not None and w.start > w_end
                 and w.end < rec.start]
        if newer:
            out.append(Violation("linearizability", rec.line, rec.end, f"unit {rec.unit} "
                                 f"read #{rec.index} returned {rec.value}, overwritten by "
                                 f"unit {newer[0].unit}'s write #{newer[0].index} "
                                 f"({newer[0].value}) before the read began"))
    return out


def check(run: Run) -> list[Violation]:
    """Every violation of ``run``: trace invariants first (those of its write policy),
    then the history's."""
    trace = check_update_trace(run.trace) if run.policy == "update" else check_trace(run.trace)
    return trace + check_history(run.history)
