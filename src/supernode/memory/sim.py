"""A seeded discrete-event simulator of a directory coherence protocol on the fabric.

Seed 003 §4.3: to find a consistency problem, let several units read and write the same
memory at once and check the results. Each unit runs a program (:mod:`.program`) against
its cache; each line has a home (its directory, on the unit whose memory holds it:
``home = line mod units``) that serialises requests to the line (a blocking MSI, MESI or
MOESI directory, ``protocol``; Sorin, Hill & Wood, 'A Primer on Memory Consistency and
Cache Coherence', 2nd ed. 2020, ch. 7-8), every transfer from an owner going through the
home (``LineDirectory(forwarding="home")`` of :mod:`.coherence` counts the same messages):

* a read miss sends GetS; the home recalls the line from an owner (Recall; the owner
  returns the data, RecallData, and keeps a copy: in S, or under MOESI a dirty line in O,
  staying the owner), adds the reader to the sharers and sends the data; MESI and MOESI
  grant E (exclusive, clean) when no other unit holds the line;
* a write sends GetM; the home sends Inv to every other sharer and a recall to the
  owner, waits for every InvAck and the owner's data, then grants M with the data; a
  write to a line held in E upgrades to M silently (no message);
* hits (S, E, O, M) are served from the cache.

Under the write-update ``policy`` (``update``; Dragon and Firefly, Culler & Singh,
'Parallel Computer Architecture', 1999, §5.4; Sorin, Hill & Wood ch. 9) a write never
invalidates: it goes to the home with its data (GetU, also from a unit holding the line:
no write hits), the home orders it, writes its memory and sends the new value to every
other holder (Upd; each applies it and answers UpdAck); when all have, the writer's write
is done (UpdDone) and it keeps a valid copy. Every copy stays valid, reads keep hitting.
That is a write-through update (Firefly's for shared lines); Dragon's local write to a
line no one else holds is not modelled. The same faults apply to the Upd as to the Inv.

The fabric (:class:`Timing`): one-way latency per message plus seeded exponential
jitter; messages between one pair of units stay in order (one virtual channel, FIFO, the
order the protocol relies on) while different pairs reorder freely; each channel has
``credits`` messages in flight at most and a message beyond waits for a credit
(back-pressure). Midway every line changes home (a membership change): the old home
recalls every copy, hands the line to the new home, fences its epoch (requests stamped
with it are NACKed and retried with the new map, :mod:`.epoch`) and the new map is
broadcast.

Faults (``--inject``), each a defect seed 003 names:

* ``lost-invalidation``: the directory forgets one other copy holder per write (the
  first sharer, else the owner: its Inv, or the invalidation of its recall, is never
  sent, so its copy survives; under ``update`` its Upd is never sent);
* ``delayed-invalidation``: the switch acknowledges an Inv (an Upd) at once and delivers
  it late (``DELAY_HOPS`` hop latencies): the writer is granted M while copies still
  live; an owner returns its data at once and its invalidation lands late; a home's Inv
  to itself crosses no switch and is not delayed;
* ``stale-map``: the old home does not fence its epoch after the change and one unit
  misses the map broadcast: its accesses resolve to the old owner;
* ``flow-control``: a link whose credits are exhausted lets the new message bypass the
  queued ones (the bus flow-control defect of seed 003 §4.3): per-pair order breaks.

The run's history (operations with start and end times) and trace (every copy
installed, dropped, written, read) go to :mod:`.checker`.
"""

from __future__ import annotations

import heapq
import random
from collections import deque

from supernode.memory.channels import Channels, Record, Run, Timing
from supernode.memory.directory import DELAY_HOPS, Dir, HomeSide
from supernode.memory.program import Op

__all__ = ["DELAY_HOPS", "FAULTS", "POLICIES", "PROTOCOLS", "Record", "Run", "Timing",
           "simulate"]

FAULTS = ("lost-invalidation", "delayed-invalidation", "stale-map", "flow-control")
PROTOCOLS = ("msi", "mesi", "moesi")
POLICIES = ("invalidate", "update")


class _Sim(HomeSide):
    def __init__(self, program: list[Op], units: int, lines: int, timing: Timing,
                 seed: int, fault: str | None, migrate_at_s: float | None,
                 protocol: str = "msi", policy: str = "invalidate") -> None:
        self.rng = random.Random(seed * 7919 + 17)
        self.t = timing
        self.fault = fault
        self.protocol = protocol
        self.update = policy == "update"
        self.units = units
        self.lines = lines
        self.q: list = []
        self.seq = 0
        self.now = 0.0
        self.channels = Channels(timing.credits, fault == "flow-control")
        self.cache: list[dict[int, list]] = [{} for _ in range(units)]
        self.home = [line % units for line in range(lines)]
        self.view = [[line % units for line in range(lines)] for _ in range(units)]
        self.dirs = {(line % units, line): Dir() for line in range(lines)}
        self.progs: list[deque[Op]] = [deque() for _ in range(units)]
        for op in program:
            self.progs[op.unit].append(op)
        self.pending: list[tuple[Op, float] | None] = [None] * units
        self.history: list[Record] = []
        self.trace: list[tuple] = []
        self.nacks = 0
        self.messages = 0
        self.ordered: dict[int, float] = {}   # op index -> when its home began it
        self.stale = self.rng.randrange(units) if fault == "stale-map" else None
        for unit in range(units):
            self._next(unit)
        if migrate_at_s is not None and units > 1:
            self._at(migrate_at_s, ("migrate",))

    # -- events ------------------------------------------------------------------------
    def _at(self, when: float, event: tuple) -> None:
        self.seq += 1
        heapq.heappush(self.q, (when, self.seq, event))

    def send(self, src: int, dst: int, msg: tuple, data: bool = False,
             extra_s: float = 0.0) -> None:
        """Queue ``msg`` on channel (src, dst) with its latency, jitter and credits."""
        self.messages += 1
        t = self.t
        travel = (t.local_s if src == dst else t.hop_s) + self.rng.expovariate(1.0 / t.jitter_s)
        travel += (t.data_s if data else 0.0) + extra_s
        when = self.channels.delivery(self.now, src, dst, travel)
        self._at(when, ("msg", dst, src, msg))

    def run(self) -> None:
        while self.q:
            when, _, event = heapq.heappop(self.q)
            self.now = when
            if event[0] == "msg":
                self.deliver(event[1], event[2], event[3])
            elif event[0] == "issue":
                self.issue(event[1])
            else:
                self.migrate()

    # -- units -------------------------------------------------------------------------
    def _next(self, unit: int, after_s: float = 0.0) -> None:
        if self.progs[unit]:
            self._at(self.now + after_s + self.progs[unit][0].think_s, ("issue", unit))

    def _done(self, unit: int, value: int, after_s: float = 0.0) -> None:
        """Complete the pending operation ``after_s`` from now (a hit takes local_s; its
        access is performed now, so no event can slip in between)."""
        op, start = self.pending[unit]  # type: ignore[misc]
        self.history.append(Record(op.index, unit, op.kind, op.line, value, start,
                                   self.now + after_s))
        self.pending[unit] = None
        self._next(unit, after_s)

    def issue(self, unit: int) -> None:
        op = self.progs[unit].popleft()
        self.pending[unit] = (op, self.now)
        entry = self.cache[unit].get(op.line)
        state = entry[0] if entry else "I"
        if op.kind == "r" and state in ("S", "E", "O", "M"):
            self.trace.append(("read", self.now, unit, op.line, entry[1]))  # type: ignore[index]
            self._done(unit, entry[1], self.t.local_s)  # type: ignore[index]
        elif op.kind == "w" and state in ("M", "E") and not self.update:
            # an E copy upgrades to M silently
            entry[0], entry[1] = "M", op.value  # type: ignore[index]
            self.trace.append(("write", self.now, unit, op.line, op.value))
            self._done(unit, op.value, self.t.local_s)
        else:
            self.request(unit, op)

    def request(self, unit: int, op: Op) -> None:
        home = self.view[unit][op.line]
        if op.kind == "r":
            self.send(unit, home, ("GetS", op.line, unit))
        elif self.update:                       # the write goes to the home with its data
            self.send(unit, home, ("GetU", op.line, unit, op.value), data=True)
        else:
            self.send(unit, home, ("GetM", op.line, unit))

    def deliver(self, dst: int, src: int, msg: tuple) -> None:
        kind = msg[0]
        if kind in ("GetS", "GetM", "GetU"):
            self.at_home(dst, msg)
        elif kind == "Data":
            self.on_data(dst, msg[1], msg[2], msg[3])
        elif kind == "Inv":
            self.on_inv(dst, src, msg[1], msg[2])
        elif kind == "Upd":
            self.on_upd(dst, src, msg[1], msg[2], msg[3])
        elif kind == "UpdDone":
            self.on_upd_done(dst, msg[1])
        elif kind in ("InvAck", "UpdAck"):
            self.on_ack(dst, msg[1])
        elif kind == "Recall":
            self.on_recall(dst, src, msg[1], msg[2])
        elif kind == "RecallData":
            d = self.dirs[(dst, msg[1])]
            d.mem, d.kept_owned = msg[2], msg[3]
            self.on_ack(dst, msg[1])
        elif kind == "Nack":
            self.on_nack(dst, msg[1])
        elif kind == "Map":
            if dst != self.stale:
                self.view[dst][msg[1]] = msg[2]
        elif kind == "Retry":
            self.try_recall(dst, msg[1])
        elif kind == "Migrate":
            d = self.dirs.setdefault((dst, msg[1]), Dir(installed=False))
            d.mem, d.installed = msg[2], True
            self.serve_queue(dst, msg[1])

    def start(self, home: int, d, msg: tuple) -> None:
        pending = self.pending[msg[2]]
        if pending is not None:
            self.ordered[pending[0].index] = self.now
        super().start(home, d, msg)

    def on_data(self, unit: int, line: int, value: int, mode: str) -> None:
        pending = self.pending[unit]
        if pending is None or pending[0].line != line:
            return  # a stray grant (only a defect delivers one)
        op = pending[0]
        if mode == "M":
            self.cache[unit][line] = ["M", op.value]
            self.trace.append(("write", self.now, unit, line, op.value))
            self._done(unit, op.value)
        else:
            self.cache[unit][line] = [mode, value]
            self.trace.append(("install", self.now, unit, line, value))
            self.trace.append(("read", self.now, unit, line, value))
            self._done(unit, value)

    def on_upd(self, unit: int, home: int, line: int, value: int, ack: bool) -> None:
        entry = self.cache[unit].get(line)
        if entry is not None:                   # the copy takes the new value, stays valid
            entry[0], entry[1] = "S", value
            self.trace.append(("install", self.now, unit, line, value))
        if ack:
            self.send(unit, home, ("UpdAck", line))

    def on_upd_done(self, unit: int, line: int) -> None:
        pending = self.pending[unit]
        if pending is None or pending[0].line != line or pending[0].kind != "w":
            return  # a stray acknowledgement (only a defect delivers one)
        op = pending[0]
        self.cache[unit][line] = ["S", op.value]
        self.trace.append(("done", self.now, unit, line, op.value))
        self._done(unit, op.value)

    def on_inv(self, unit: int, home: int, line: int, ack: bool) -> None:
        if self.cache[unit].pop(line, None) is not None:
            self.trace.append(("drop", self.now, unit, line, 0))
        if ack:
            self.send(unit, home, ("InvAck", line))

    def on_recall(self, unit: int, home: int, line: int, invalidate: bool) -> None:
        entry = self.cache[unit].get(line)
        value = entry[1] if entry else -1
        kept = False
        if invalidate or entry is None:
            if self.cache[unit].pop(line, None) is not None:
                self.trace.append(("drop", self.now, unit, line, 0))
        else:
            # MOESI keeps a dirty line (M, O) in O; MSI/MESI and a clean E go to S
            kept = self.protocol == "moesi" and entry[0] in ("M", "O")
            entry[0] = "O" if kept else "S"
            self.trace.append(("install", self.now, unit, line, value))
        self.send(unit, home, ("RecallData", line, value, kept), data=True)

    def on_nack(self, unit: int, line: int) -> None:
        self.nacks += 1
        self.view[unit][line] = self.home[line]     # refetch the map (fenced: retry)
        pending = self.pending[unit]
        if pending is not None:
            self.request(unit, pending[0])



def simulate(program: list[Op], units: int, lines: int, seed: int,
             fault: str | None = None, timing: Timing | None = None,
             migrate_at_s: float | None = None, protocol: str = "msi",
             policy: str = "invalidate") -> Run:
    """Run ``program`` on ``units`` units sharing ``lines`` lines under ``protocol``
    (``msi``, ``mesi`` or ``moesi``) and write ``policy`` (``invalidate`` or ``update``);
    ``migrate_at_s`` (None: no change of membership) is when every line changes home."""
    if fault is not None and fault not in FAULTS:
        raise ValueError(f"unknown fault {fault!r}")
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}")
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}")
    sim = _Sim(program, units, lines, timing or Timing(), seed, fault, migrate_at_s,
               protocol, policy)
    sim.run()
    for unit, pending in enumerate(sim.pending):
        if pending is not None:
            op, start = pending
            sim.history.append(Record(op.index, unit, op.kind, op.line, -1, start, None))
    return Run(sim.history, sim.trace, fault, seed, units, sim.nacks, sim.messages,
               sim.stale, policy, sim.ordered)
