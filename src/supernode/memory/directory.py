"""The home side of :mod:`.sim`: one directory per (home, line) and its transitions.

A home serialises the requests to its lines (a blocking directory: one transaction per
line at a time, the others queued), applies GetS and GetM as :mod:`.sim` describes (the
E grant of MESI/MOESI, the O owner MOESI keeps after a recall), and
runs the membership change: recall every copy, hand the line to its new home, fence the
old epoch (NACK whatever still arrives), broadcast the new map. Under the ``update``
policy a write is ordered at the home, which sends the new value to every other copy
(:meth:`HomeSide.start_update`). The faults that live at
the home (``lost-invalidation``, ``delayed-invalidation``, ``stale-map``) are applied
here.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from supernode.memory.channels import Timing

#: Hop latencies a delayed invalidation arrives late by.
DELAY_HOPS = 20.0


@dataclass
class Dir:
    """One line's directory at one home."""

    mem: int = 0
    sharers: set[int] = field(default_factory=set)
    owner: int | None = None
    busy: list | None = None          # [kind, requester, waiting]
    queue: deque = field(default_factory=deque)
    installed: bool = True
    #: MOESI: the recalled owner kept the dirty line in O (it stays the owner).
    kept_owned: bool = False
    fenced: bool = False
    migrating: bool = False
    new_home: int = -1


class HomeSide:
    """The directory transitions, mixed into the simulator (which provides the fabric)."""

    dirs: dict[tuple[int, int], Dir]
    fault: str | None
    protocol: str
    t: Timing
    units: int
    lines: int
    home: list[int]
    now: float
    trace: list[tuple]

    def send(self, src: int, dst: int, msg: tuple, data: bool = False,
             extra_s: float = 0.0) -> None:
        """Put a message on the fabric (the simulator's)."""
        raise NotImplementedError

    def _at(self, when: float, event: tuple) -> None:
        raise NotImplementedError

    # -- homes -------------------------------------------------------------------------
    def at_home(self, home: int, msg: tuple) -> None:
        d = self.dirs.get((home, msg[1]))
        if d is None or d.fenced:
            self.send(home, msg[2], ("Nack", msg[1]))
        elif d.busy is not None or d.migrating or not d.installed:
            d.queue.append(msg)
        else:
            self.start(home, d, msg)

    def start(self, home: int, d: Dir, msg: tuple) -> None:
        kind, line, req = msg[:3]
        if kind == "GetU":
            self.start_update(home, d, line, req, msg[3])
            return
        if kind == "GetS":
            if d.owner is not None and d.owner != req:
                d.busy = ["S", req, 1]
                self.send(home, d.owner, ("Recall", line, False))
            elif self.protocol != "msi" and d.owner is None and not d.sharers - {req}:
                self.grant(home, d, line, req, "E")      # no other copy: exclusive clean
            else:
                self.grant(home, d, line, req, "S")
            return
        others = [s for s in sorted(d.sharers) if s != req]
        owner = d.owner if d.owner is not None and d.owner != req else None
        # lost-invalidation forgets one other copy holder: the first sharer, else the owner
        forgotten = (others + [owner])[0] if self.fault == "lost-invalidation" else None
        # delayed-invalidation: the switch acks an Inv at once and delivers it late (an
        # Inv from the home to itself crosses no switch)
        def late(s: int) -> bool:
            return self.fault == "delayed-invalidation" and s != home
        waiting = 0
        for s in others:
            if s == forgotten:
                continue                       # its Inv is never sent
            if late(s):
                self.send(home, s, ("Inv", line, False), extra_s=DELAY_HOPS * self.t.hop_s)
                continue                       # acknowledged at once by the switch
            self.send(home, s, ("Inv", line, True))
            waiting += 1
        if owner is not None:
            # the owner returns the data; a lost or delayed invalidation leaves its copy
            self.send(home, owner, ("Recall", line, owner != forgotten and not late(owner)))
            if late(owner):
                self.send(home, owner, ("Inv", line, False), extra_s=DELAY_HOPS * self.t.hop_s)
            waiting += 1
        if waiting == 0:
            self.grant(home, d, line, req, "M")
        else:
            d.busy = ["M", req, waiting]

    def grant(self, home: int, d: Dir, line: int, req: int | None, mode: str) -> None:
        """Send ``req`` the line in ``mode``: M (a write), E (a read, no other copy:
        MESI/MOESI) or S; an S grant after a recall keeps a MOESI owner that kept O."""
        if req is None:                         # the migration's recall finished
            self.finish_migration(home, d, line)
            return
        if mode in ("M", "E"):
            d.sharers, d.owner = set(), req
        else:
            if d.owner is not None and not d.kept_owned:
                d.sharers.add(d.owner)
                d.owner = None
            d.sharers.add(req)
        d.busy, d.kept_owned = None, False
        self.send(home, req, ("Data", line, d.mem, mode), data=True)
        self.serve_queue(home, line)

    def on_ack(self, home: int, line: int) -> None:
        d = self.dirs[(home, line)]
        if d.busy is None:
            return
        d.busy[2] -= 1
        if d.busy[2] <= 0:
            kind, req, _ = d.busy
            d.busy = None
            if kind == "U":
                self.finish_update(home, d, line, req)
            else:
                self.grant(home, d, line, req, "S" if kind == "S" else "M")

    # -- write-update ------------------------------------------------------------------
    def start_update(self, home: int, d: Dir, line: int, req: int, value: int) -> None:
        """A write under ``update`` (GetU, with the data): the home orders it, writes its
        memory and sends the value (Upd) to every other holder, each of which applies it
        and acknowledges; all acknowledged, the writer's write is done (UpdDone) and every
        holder keeps a valid copy. ``lost-invalidation`` drops the Upd to one holder (its
        copy keeps the old value), ``delayed-invalidation`` acknowledges Upds at the switch
        and delivers them late."""
        others = sorted((d.sharers | ({d.owner} if d.owner is not None else set())) - {req})
        d.mem = value
        self.trace.append(("serial", self.now, home, line, value))
        d.sharers, d.owner = set(others) | {req}, None
        waiting = 0
        for i, s in enumerate(others):
            if self.fault == "lost-invalidation" and i == 0:
                continue                       # the directory forgets one holder
            if self.fault == "delayed-invalidation" and s != home:
                self.send(home, s, ("Upd", line, value, False), data=True,
                          extra_s=DELAY_HOPS * self.t.hop_s)
                continue                       # acknowledged at once by the switch
            self.send(home, s, ("Upd", line, value, True), data=True)
            waiting += 1
        if waiting:
            d.busy = ["U", req, waiting]
        else:
            self.finish_update(home, d, line, req)

    def finish_update(self, home: int, d: Dir, line: int, req: int) -> None:
        """Every other copy holds the new value: the writer's write is done."""
        self.send(home, req, ("UpdDone", line, d.mem))
        self.serve_queue(home, line)

    def serve_queue(self, home: int, line: int) -> None:
        d = self.dirs[(home, line)]
        while d.queue and d.busy is None and not d.migrating and d.installed:
            msg = d.queue.popleft()
            if d.fenced:
                self.send(home, msg[2], ("Nack", line))
            else:
                self.start(home, d, msg)
        if d.fenced:
            while d.queue:
                self.send(home, d.queue.popleft()[2], ("Nack", line))

    # -- membership change -------------------------------------------------------------
    def migrate(self) -> None:
        for line in range(self.lines):
            old = self.home[line]
            d = self.dirs[(old, line)]
            d.migrating, d.new_home = True, (old + 1) % self.units
            self.dirs.setdefault((d.new_home, line), Dir(installed=False))
            self.dirs[(d.new_home, line)].installed = False
            self.try_recall(old, line)

    def try_recall(self, home: int, line: int) -> None:
        d = self.dirs[(home, line)]
        if d.busy is not None:
            self._at(self.now + self.t.hop_s, ("msg", home, home, ("Retry", line)))
            return
        waiting = 0
        for s in sorted(d.sharers):
            self.send(home, s, ("Inv", line, True))
            waiting += 1
        if d.owner is not None:
            self.send(home, d.owner, ("Recall", line, True))
            waiting += 1
        d.sharers, d.owner = set(), None
        if waiting:
            d.busy = ["X", None, waiting]
        else:
            self.finish_migration(home, d, line)

    def finish_migration(self, home: int, d: Dir, line: int) -> None:
        d.busy, d.migrating = None, False
        d.sharers, d.owner = set(), None
        self.home[line] = d.new_home
        self.send(home, d.new_home, ("Migrate", line, d.mem), data=True)
        if self.fault != "stale-map":
            d.fenced = True                    # old translations are refused from now on
        for unit in range(self.units):
            self.send(home, unit, ("Map", line, d.new_home))
        self.serve_queue(home, line)
