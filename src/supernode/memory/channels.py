"""The simulated fabric of :mod:`.sim`: timing, per-pair channels with credits, and the
records a run leaves (its history of operations and trace of copies).

A channel carries the messages from one unit to another in order (one virtual channel,
FIFO) and holds ``credits`` of them in flight; a message beyond waits for the earliest
in-flight one to land, then travels (back-pressure). With the ``flow-control`` defect a
message that finds the channel full bypasses the queue and lands halfway before the
earliest in-flight message: per-pair order breaks exactly when back-pressure is on, the
bus defect of seed 003 §4.3.
"""

from __future__ import annotations

from dataclasses import dataclass, field

_EPS = 1e-15


@dataclass(frozen=True)
class Timing:
    """The simulated fabric (seconds)."""

    hop_s: float = 1e-6          # one-way latency between two units (message header)
    jitter_s: float = 0.3e-6     # mean of the exponential extra delay per message
    data_s: float = 3e-9         # serialisation of one line of data
    local_s: float = 20e-9       # a cache hit, or a message to the unit itself
    credits: int = 1             # messages in flight per (sender, receiver) channel


@dataclass(frozen=True)
class Record:
    """One completed (or, with ``end`` None, unfinished) operation of the history."""

    index: int
    unit: int
    kind: str
    line: int
    value: int       # written value, or the value the read returned
    start: float
    end: float | None


@dataclass
class Run:
    """What one simulation produced."""

    history: list[Record]
    trace: list[tuple]   # (what, time, unit, line, value[, state])
    fault: str | None
    seed: int
    units: int
    nacks: int = 0
    messages: int = 0
    stale_unit: int | None = None
    policy: str = "invalidate"
    #: When each request that reached a home was begun there (op index -> s): the order
    #: the blocking homes serialised the misses in (hits do not reach a home).
    ordered: dict[int, float] = field(default_factory=dict)


class Channels:
    """The per-(sender, receiver) channels of the fabric."""

    def __init__(self, credits: int, defective: bool) -> None:
        self.credits = credits
        self.defective = defective
        self.state: dict[tuple[int, int], list] = {}

    def delivery(self, now: float, src: int, dst: int, travel: float) -> float:
        """When a message sent ``now`` from ``src`` to ``dst`` that takes ``travel``
        seconds on an idle channel lands (FIFO, credits; the bypass when defective)."""
        ch = self.state.get((src, dst))
        if ch is None:
            ch = self.state[(src, dst)] = [[], 0.0]
        flying = [d for d in ch[0] if d > now]
        when = now + travel
        if len(flying) >= self.credits:
            first = min(flying)
            if self.defective:
                when = now + (first - now) * 0.5              # the bypass: ahead of the queue
            else:
                when = max(when, first + travel, ch[1] + _EPS)  # wait for a credit, in order
        else:
            when = max(when, ch[1] + _EPS)
        flying.append(when)
        ch[0] = flying
        ch[1] = max(ch[1], when)
        return when
